/* SPDX-License-Identifier: MIT */
/*
 * The requester: post_send checks a WR and gathers it (read by the driver,
 * WR-02) into a WQE with its packet; each try of the WQE (its first, and
 * each retransmission) runs the requester's state machine, which takes
 * the packet to the destination: here through the receive dispatcher
 * (recv.c, to the responder), or through the transport (transport.c), and
 * hands the answer to the completer (completer.c). The send queue is
 * served here: what is due is sent again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_engine.h"
#include "sq.h"
#include "roce.h"
#include "transport.h"

/*
 * No response by then (times IBVCT_TIMEOUT_MULT) from a peer that lives:
 * the request is lost. A peer's progress thread answers at once on an
 * idle machine; under make check (two cores, QEMU guests) one did not
 * answer within 10 s, and an rc_pingpong of 3 MiB messages ended in
 * IBV_WC_RETRY_EXC_ERR (t6030). A peer that is gone is known at once
 * (fe_peer_alive), whatever this is.
 */
#define FP_RESP_WAIT_MS		60000

/* ---- requester ---------------------------------------------------------------- */
static uint32_t fp_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 4096u;
}

/*
 * The opcodes this device carries per QP type (QPX-10 lists those an
 * XRC_SEND QP may carry on a device that has them). BIND_MW and LOCAL_INV
 * never reach the requester: the driver completes them on the window
 * (verbs/mw.c). SEND_WITH_INV goes on the connected types, as mlx5 and rxe
 * build it (rdma-core v44.0 providers/mlx5/qp.c:3444 the RC, UC and XRC
 * send_ops sets; providers/rxe/rxe.c:1264 RC and UC), not on UD. Anything
 * else is refused at post time with EINVAL and bad_wr, the answer a driver
 * gives an opcode it does not build (providers/mlx5/qp.c:833 _mlx5_post_send).
 */
bool fe_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (type == IBV_QPT_XRC_SEND)	/* @rule QPX-10 */
			return true;
		return type == IBV_QPT_RC;
	case IBV_WR_ATOMIC_WRITE:
	case IBV_WR_FLUSH:
		return type == IBV_QPT_RC;	/* built by the new post-send API only */
	default:
		return false;
	}
}

/* Immediate checks: failing ones return an errno and post nothing. */
static int fp_swr_check(const struct fe_qp *r, const struct fp_swr *s, uint64_t *len)
{
	bool is_inline = s->send_flags & IBV_SEND_INLINE;
	int i;

	if (!fe_opcode_ok(r->type, s->opcode))	/* @rule QPX-10 */
		return EINVAL;
	if (s->num_sge < 0 || (uint32_t)s->num_sge > r->cap.max_send_sge ||
	    (s->num_sge && !s->sg_list))
		return EINVAL;
	if (r->type == IBV_QPT_UD && !s->ah)
		return EINVAL;
	if (r->sq_posted - r->sq_retired >= r->cap.max_send_wr)
		return ENOMEM;
	*len = 0;
	for (i = 0; i < s->num_sge; i++)
		*len += s->sg_list[i].length;
	if (s->opcode == IBV_WR_ATOMIC_WRITE)
		*len = 8;		/* its value, carried in the WQE */
	else if (s->opcode == IBV_WR_FLUSH)
		*len = s->flush_len;	/* the range; no data */
	if (is_inline && (*len > r->cap.max_inline_data ||
			  (s->opcode != IBV_WR_SEND && s->opcode != IBV_WR_SEND_WITH_IMM &&
			   s->opcode != IBV_WR_SEND_WITH_INV &&
			   s->opcode != IBV_WR_RDMA_WRITE &&
			   s->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)))
		return EINVAL;
	return 0;
}

static bool fp_op_asks(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* At post time: what cannot wait until the WQE is sent, an atomic's length,
 * and inline data, which the application may reuse once post_send returns
 * (copied into the WQE; no key is checked for it). */
static enum ibv_wc_status fp_swr_take(const struct fp_swr *s, uint64_t len, char *buf)
{
	uint64_t off = 0;
	int i;

	if ((s->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	     s->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) && len != 8)
		return IBV_WC_LOC_LEN_ERR;
	if (!(s->send_flags & IBV_SEND_INLINE))
		return IBV_WC_SUCCESS;
	for (i = 0; i < s->num_sge; i++) {
		const struct ibv_sge *g = &s->sg_list[i];

		if (g->length)
			memcpy(buf + off, (const char *)(uintptr_t)g->addr, g->length);
		off += g->length;
	}
	return IBV_WC_SUCCESS;
}

static void fp_swr_packet(struct fe_qp *r, const struct fp_swr *s, struct fp_packet *pkt)
{
	const struct fp_dev_spec *spec = r->spec;

	memset(pkt, 0, sizeof(*pkt));
	switch (s->opcode) {
	case IBV_WR_SEND:		pkt->op = FP_PKT_SEND; break;
	case IBV_WR_SEND_WITH_IMM:	pkt->op = FP_PKT_SEND_IMM; break;
	case IBV_WR_SEND_WITH_INV:	pkt->op = FP_PKT_SEND_INV; break;
	case IBV_WR_RDMA_WRITE:		pkt->op = FP_PKT_WRITE; break;
	case IBV_WR_RDMA_WRITE_WITH_IMM: pkt->op = FP_PKT_WRITE_IMM; break;
	case IBV_WR_RDMA_READ:		pkt->op = FP_PKT_READ; break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:	pkt->op = FP_PKT_CMP_SWAP; break;
	case IBV_WR_ATOMIC_WRITE:	pkt->op = FP_PKT_ATOMIC_WRITE; break;
	case IBV_WR_FLUSH:		pkt->op = FP_PKT_FLUSH; break;
	default:			pkt->op = FP_PKT_FETCH_ADD; break;
	}
	pkt->src_type = r->type;
	pkt->src_qpn = r->qpn;
	pkt->psn = r->sq_psn++ & 0xffffff;
	pkt->remote_addr = s->remote_addr;
	pkt->rkey = s->rkey;
	pkt->imm = s->imm;
	pkt->solicited = s->send_flags & IBV_SEND_SOLICITED;
	pkt->compare_add = s->compare_add;
	pkt->swap = s->swap;
	pkt->flush_type = s->flush_type;
	pkt->flush_level = s->flush_level;
	pkt->port = r->attr.port_num;
	if (pkt->port >= 1 && pkt->port <= spec->nports)
		pkt->slid = spec->port[pkt->port - 1].attr.lid;
	if (r->type == IBV_QPT_UD) {
		const struct ibv_ah_attr *ah = s->ah;

		pkt->dst_qpn = s->remote_qpn;
		/* A qkey with the high bit set means "use the QP's own". */
		pkt->qkey = (s->remote_qkey & 0x80000000u) ? r->attr.qkey : s->remote_qkey;
		pkt->sl = ah->sl;
		pkt->port = ah->port_num;
		pkt->slid = spec->port[ah->port_num - 1].attr.lid;
		if (ah->is_global) {
			pkt->grh = true;
			if (ah->grh.sgid_index < FP_MAX_GIDS)
				pkt->sgid = spec->port[ah->port_num - 1].gid[ah->grh.sgid_index];
			pkt->dgid = ah->grh.dgid;
		}
	} else {
		pkt->dst_qpn = r->attr.dest_qp_num;
		pkt->sl = r->attr.ah_attr.sl;
		if (r->type == IBV_QPT_XRC_SEND)
			pkt->xrc_srqn = s->remote_srqn;
	}
}

/* Whether a WQE of the queue waits to be sent: then every later one that is
 * not answered waits too (they follow it), so look from the tail. */
static bool fp_sq_any_wait(const struct fe_qp *r)
{
	const struct fp_link *p;

	for (p = r->sq_wait.prev; p != &r->sq_wait; p = p->prev) {
		const struct fp_swqe *w = fp_container_of(p, const struct fp_swqe, link);

		if (w->state != FP_SWQE_DONE)
			return w->state == FP_SWQE_WAIT;
	}
	return false;
}

static long long fp_wait_ns(void)
{
	return FP_RESP_WAIT_MS * 1000000LL * fp_timeout_mult();
}

/* ---- one try of a WQE: the requester's state machine ---------------------------- */
/*
 * Each try of a WQE (its first, and each retransmission) runs these states;
 * each is a small function returning the next, and with `trace FILE states`
 * in the script the try writes the states it went through. The shape is the
 * kernel's rxe requester (linux v6.1 drivers/infiniband/sw/rxe/rxe_req.c,
 * rxe_requester), with the routing decision of this HCA's two transports:
 *
 *   a QP of this process      READ_WQE GET_DEST EXECUTE_HERE ANSWERED
 *   another process           READ_WQE GET_DEST ROUTE XMIT SENT (the response
 *                             comes later: the receive dispatcher, the completer)
 *   full inbox, no route      ... ROUTE [XMIT] ANSWERED (BUSY, NO_PATH)
 *   a local error             READ_WQE ERR_LOCAL
 *
 * An XRC packet always takes ROUTE (its target QP is the daemon's; its SRQ
 * may be anywhere), and comes back to EXECUTE_HERE when the SRQ is ours.
 * A one-sided operation (RC WRITE, READ, atomics; UC WRITE) to another
 * process is done by the requester itself in the target's memory, without
 * the target's CPU, when fe_req_may_place and fe_peer_remote let it:
 *
 *   placed                    ... ROUTE PLACE ANSWERED
 *   a check says no           ... ROUTE PLACE XMIT SENT (the old path: the
 *                             target's responder answers, errors as ever)
 */
#define FE_REQ_STATES(X)						\
	X(READ_WQE)		/* its data where it lies now, keys checked */ \
	X(GET_DEST)		/* a QP of this process, or the route */ \
	X(EXECUTE_HERE)		/* the responder runs it now */		\
	X(ROUTE)		/* the process the daemon names (XRC: after its gate) */ \
	X(PLACE)		/* a one-sided operation done here, in the target's memory */ \
	X(XMIT)			/* into that process's inbox */		\
	X(SENT)			/* on its way: its response completes it */ \
	X(ANSWERED)		/* the answer (or none) to the completer */ \
	X(ERR_LOCAL)		/* a local error: it completes with it */ \
	X(DONE)

#define FE_REQ_ENUM(n)	REQ_##n,
#define FE_REQ_NAME(n)	#n,
enum fe_req_state { FE_REQ_STATES(FE_REQ_ENUM) };
static const char *const fe_req_name[] = { FE_REQ_STATES(FE_REQ_NAME) };

/* One try. */
struct fe_req {
	struct fe_qp *r;
	struct fp_swqe *w;
	struct fe_dev *dev;
	bool reliable, xrc;
	const struct fp_packet *out;	/* what travels (XRC: with the gate's answer) */
	struct fp_packet xrc_pkt;
	struct fe_qp *dq;		/* EXECUTE_HERE: the destination QP GET_DEST found */
	struct fe_xport *xp;		/* ROUTE: this process's transport for the device */
	struct fe_peer *peer, *was;	/* ROUTE: where to; where the last try went */
	struct fk_client *via;		/* GET_DEST: another host's daemon (fk_wire), NULL: ours */
	uint32_t seg_done;		/* the bytes of a long message already there */
	uint64_t id;
	struct fp_response resp;
	bool placed;			/* PLACE did it: resp.data is the target's memory */
	bool wire;			/* its device's packets go as RoCE (roce.c) */
};

/*
 * At send time, as an HCA reads memory when it sends (and again when it
 * sends again): the pieces of the WQE's data in registered memory, each
 * SGE checked against its key (for READ and atomics, where the answer will
 * land, with local write). A local error found at post time stands.
 */
FE_STATE enum fe_req_state fe_req_read_wqe(struct fe_req *c)
{
	struct fp_swqe *w = c->w;
	bool to_local = fp_op_asks(w->s.opcode);
	unsigned n = 0;
	int i;

	if (w->local != IBV_WC_SUCCESS)
		return REQ_ERR_LOCAL;
	if (w->s.opcode == IBV_WR_ATOMIC_WRITE) {
		/* its 8 bytes, as the builder took them */
		w->pc[0].p = (const char *)&w->s.compare_add;
		w->pc[0].len = 8;
		n = 1;
	} else if (w->s.send_flags & IBV_SEND_INLINE) {
		w->pc[0].p = w->buf;
		w->pc[0].len = w->len;
		n = w->len ? 1 : 0;
	} else {
		for (i = 0; i < w->s.num_sge; i++) {
			const struct ibv_sge *g = &w->s.sg_list[i];
			const char *p;

			/* rxe: where an answer lands is checked when it comes
			 * (completer.c fp_swr_lands) */
			if (to_local && c->r->rxe_rules)
				continue;
			p = fe_mr_local(c->dev, c->r->pd, g, to_local);
			if (!p) {
				/* rxe: the data copy fails, an operation error (linux
				 * v6.1 rxe_req.c rxe_requester: finish_packet, -EINVAL) */
				w->local = c->r->rxe_rules && !to_local ? IBV_WC_LOC_QP_OP_ERR
								     : IBV_WC_LOC_PROT_ERR;
				return REQ_ERR_LOCAL;
			}
			if (!to_local && g->length) {
				w->pc[n].p = p;
				w->pc[n].len = g->length;
				n++;
			}
		}
	}
	w->pkt.pieces = w->pc;
	w->pkt.npieces = n;
	return REQ_GET_DEST;
}

/* The one routing decision: a QP of this process executes the packet at
 * once; anything else, and every XRC packet, goes where the daemon says. */
FE_STATE enum fe_req_state fe_req_get_dest(struct fe_req *c)
{
	struct fe_sent *sent = &c->w->sent;

	c->was = sent->peer;
	c->seg_done = sent->seg_done;
	c->id = sent->id;
	sent->peer = NULL;
	sent->id = 0;
	sent->cached = false;
	sent->seg_done = 0;
	c->resp.status = c->reliable ? FP_ACK_NO_PATH : FP_ACK_DROPPED;
	c->via = NULL;
	if (c->wire)
		return REQ_ROUTE;	/* on the wire, even to a QP of this process */
	if (fe_up->fk_wire && !fp__quirk(FP_Q_GID_IGNORED)) {
		/* the host the address names: QP numbers are each host's own */
		const struct ibv_ah_attr *ah = c->r->type == IBV_QPT_UD ? c->w->s.ah
								       : &c->r->attr.ah_attr;

		if (ah && ah->is_global && fe_up->fk_wire(c->r, ah, &c->via)) /* @rule HOST-01 */
			return REQ_ANSWERED;	/* no host has it: lost on the wire */
		if (c->via)
			return REQ_ROUTE;
	}
	if (!c->xrc && (c->dq = fe_qp_find(c->dev, c->out->dst_qpn)))
		return REQ_EXECUTE_HERE;
	return REQ_ROUTE;
}

FE_STATE enum fe_req_state fe_req_execute_here(struct fe_req *c)
{
	/* to the responder, through the receive dispatcher */
	fe_recv_req(c->dev, c->dq, c->out, &c->resp);
	return REQ_ANSWERED;
}

/*
 * Whether the requester may do this one-sided operation itself (PLACE),
 * in the target's memory, as an HCA does without the target's CPU: a
 * WRITE, READ or atomic of an RC QP (never XRC: its target routing stays
 * with the target; not UC yet: the targets peers publish are RC QPs, and
 * fe_peer_remote cannot match the requester's type against the target's
 * as the responder's GET_QP does), and only behind nothing the old
 * path has not finished, so that RC ordering holds both ways:
 *   - every earlier WQE of the queue is answered, with success: the answer
 *     of a reliable request says the target executed it, so a request
 *     after a SEND, a READ or an atomic is executed after it, its answer
 *     is taken after theirs, and after a failed one nothing is placed (the
 *     one rule that keeps order here: IBA vol 1 9.5, requests
 *     executed in order; quirk place_behind_unanswered drops it);
 *   - a request the QP stopped waiting for while it may still sit in an
 *     inbox (given up as lost, sent back to WAIT, or unreliable and done
 *     when pushed: fe_sq_unanswered) has been executed by that inbox's
 *     owner;
 * an old-path request after a placed one needs nothing: the placed one is
 * done before post_send returns. The quirk's HCA never places.
 */
static bool fe_req_may_place(struct fe_req *c)
{
	const struct fp_packet *pkt = c->out;
	struct fe_qp *r = c->r;
	const struct fp_link *p;

	switch (pkt->op) {
	case FP_PKT_WRITE:
	case FP_PKT_READ:
	case FP_PKT_CMP_SWAP:
	case FP_PKT_FETCH_ADD:
		if (r->type != IBV_QPT_RC)
			return false;
		break;
	default:
		return false;
	}
	if (fp__quirk(FP_Q_ONESIDED_VIA_TARGET))	/* the target's CPU does them all */
		return false;
	if (r->sq_xmit_peer) {
		if (!fe_peer_served(r->sq_xmit_peer, r->sq_xmit_mark))
			return false;
		r->sq_xmit_peer = NULL;
	}
	for (p = r->sq_wait.next; p != &r->sq_wait; p = p->next) {
		const struct fp_swqe *e = fp_container_of(p, const struct fp_swqe, link);

		if (e == c->w)
			break;
		if ((e->state != FP_SWQE_DONE || e->result != IBV_WC_SUCCESS) && /* @rule RDMA-05 */
		    !fp__quirk(FP_Q_PLACE_BEHIND_UNANSWERED))
			return false;
	}
	return true;
}

/*
 * The operation, done here in the target's registered memory mapped in
 * this process (fe_peer_remote: the responder's QP and key checks, on the
 * target's published tables): a WRITE copies its data in, a READ's answer
 * is the target's bytes (the completer scatters them into the local SGEs,
 * checked as for any READ response), an atomic is a CPU atomic on the
 * aligned word, so that other requesters and the target's own CPU agree
 * with it. Then the WQE is answered as the responder's ACK would have it.
 * A check that fails, a zero length (no key to check), a misaligned
 * atomic or a target process gone (fe_peer_gone: its memory is still
 * mapped here, but a dead process completes nothing) goes the old way
 * (XMIT), where the target's responder answers as it always did (NAK,
 * the QP to error, the event).
 */
FE_STATE enum fe_req_state fe_req_place(struct fe_req *c)
{
	const struct fp_packet *pkt = c->out;
	bool atomic = pkt->op == FP_PKT_CMP_SWAP || pkt->op == FP_PKT_FETCH_ADD;
	uint64_t len = atomic ? 8 : pkt->len;
	int need;
	char *at;

	if (!len || (atomic && pkt->remote_addr % 8) || fe_peer_gone(c->peer))
		return REQ_XMIT;
	need = pkt->op == FP_PKT_WRITE ? IBV_ACCESS_REMOTE_WRITE :
	       pkt->op == FP_PKT_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_ATOMIC;
	if (fe_peer_remote(c->peer, pkt->dst_qpn, pkt->remote_addr, pkt->rkey, len, need, &at) ||
	    (atomic && (uintptr_t)at % 8))
		return REQ_XMIT;
	switch (pkt->op) {
	case FP_PKT_WRITE:
		fe_pieces_copy(at, pkt->pieces, pkt->npieces, 0, len);
		__atomic_thread_fence(__ATOMIC_RELEASE);	/* before any later one lands */
		break;
	case FP_PKT_READ:
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		c->resp.data = at;
		c->resp.len = (uint32_t)len;
		break;
	case FP_PKT_CMP_SWAP: {
		uint64_t orig = pkt->compare_add;

		/* on a mismatch orig receives the value found */
		__atomic_compare_exchange_n((uint64_t *)(void *)at, &orig, pkt->swap, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		c->resp.atomic_orig = orig;
		c->resp.len = 8;
		break;
	}
	default:
		c->resp.atomic_orig = __atomic_fetch_add((uint64_t *)(void *)at, pkt->compare_add,
							 __ATOMIC_SEQ_CST);
		c->resp.len = 8;
		break;
	}
	c->placed = true;
	c->resp.status = FP_ACK_OK;
	return REQ_ANSWERED;
}

/*
 * Where the daemon says the destination is (a remembered route, else it
 * asks), for XRC after its gate check of the target QP, with the target
 * QP's attributes the responder needs: the inbox of that process, or here
 * when the SRQ is ours after all. No route: the packet is lost (an XRC
 * SRQ outside the target QP's domain: an invalid request, WR-03).
 */
FE_STATE enum fe_req_state fe_req_route(struct fe_req *c)
{
	const struct fp_packet *pkt = c->out;
	struct fe_route to = {
		.qpn = pkt->dst_qpn, .xrc = c->xrc, .srqn = pkt->xrc_srqn,
		.quirks = fp__quirk(FP_Q_XRC_IGNORE_REMOTE_SRQN) ? FK_Q_XRC_IGNORE_REMOTE_SRQN : 0,
		.via = c->via,
	};
	const struct fk_route *rt = &to.rt;

	if (c->wire)
		return REQ_XMIT;	/* the wire: the destination is the path's address */
	c->xp = fe_dev_xport(c->dev);
	c->peer = fe_xport_route(c->xp, c->r->fk, &to);
	c->w->sent.cached = to.cached;
	if (!c->peer) {
		if (c->xrc && rt->gate == FK_GATE_BAD_SRQ)	/* @rule WR-03 */
			c->resp.status = FP_NAK_INV_REQ;
		return REQ_ANSWERED;
	}
	if (c->xrc) {
		/* with what the daemon's gate said of the target QP */
		c->xrc_pkt = *pkt;
		c->xrc_pkt.xrc_srqn = rt->srqn;
		c->xrc_pkt.xrc_access = rt->qp_access;
		c->xrc_pkt.xrc_rnr_timer = (uint8_t)rt->rnr_timer;
		c->xrc_pkt.xrc_dom = rt->xrcd_id;
		c->out = &c->xrc_pkt;
	}
	if (to.self) {
		/* ours after all (an XRC SRQ of this process): the receive
		 * dispatcher finds where */
		c->dq = NULL;
		return REQ_EXECUTE_HERE;
	}
	return c->xrc || !fe_req_may_place(c) ? REQ_XMIT : REQ_PLACE;
}

/* As RoCE packets (roce.c), to the GID of the QP's path (UD: of the WR's
 * address); RoCE carries no packet without its GRH. */
static enum fe_req_state fe_req_xmit_wire(struct fe_req *c)
{
	const struct ibv_ah_attr *ah = c->r->type == IBV_QPT_UD ? c->w->s.ah : &c->r->attr.ah_attr;

	if (!ah || !ah->is_global ||
	    fe_roce_send(c->r, &c->w->sent, c->out, ah->grh.dgid.raw, c->reliable))
		return REQ_ANSWERED;		/* lost on the way */
	if (!c->reliable) {
		c->resp.status = FP_ACK_OK;
		return REQ_ANSWERED;
	}
	return REQ_SENT;
}

/* Into the peer's inbox; the transport says where it went (struct fe_sent:
 * its request id, how much of a long message, the inbox's end). The rest
 * of a long message goes where its first part went, else all of it again
 * to where the route leads now. */
FE_STATE enum fe_req_state fe_req_xmit(struct fe_req *c)
{
	struct fe_sent *sent = &c->w->sent;
	int err;

	if (c->wire)
		return fe_req_xmit_wire(c);
	sent->peer = c->peer;
	sent->id = c->id;
	sent->seg_done = c->peer == c->was ? c->seg_done : 0;
	/* from this host's connection, or the one to the other host's daemon
	 * (its numbers: the answer comes back through it) */
	err = fe_xport_send(c->xp, sent, c->out, c->via ? c->via : c->r->fk, c->reliable);
	if (err == EAGAIN) {
		c->resp.status = FP_ACK_BUSY;	/* the part in the inbox stays */
		return REQ_ANSWERED;
	}
	if (err) {
		sent->peer = NULL;
		fe_xport_forget(c->xp, c->out->dst_qpn);
		return REQ_ANSWERED;
	}
	if (!c->reliable) {
		/* done when pushed: PLACE waits until it is executed */
		fe_sq_unanswered(c->r, c->w);
		c->resp.status = FP_ACK_OK;
		return REQ_ANSWERED;
	}
	return REQ_SENT;
}

FE_STATE enum fe_req_state fe_req_sent(struct fe_req *c)
{
	struct fp_swqe *w = c->w;

	w->state = FP_SWQE_SENT;
	w->sent_at = fp_now_coarse_ns();	/* for checks tens of ms apart */
	w->gone_mark = 0;
	w->due = w->sent_at + FP_PEER_CHECK_NS;
	if (w->sent.wire)
		w->due = 0;		/* its answer or its ACK timer comes from the wire */
	return REQ_DONE;
}

FE_STATE enum fe_req_state fe_req_answered(struct fe_req *c)
{
	fe_comp_answer(c->r, c->w, &c->resp);
	if (!c->placed)
		free(c->resp.data);
	return REQ_DONE;
}

FE_STATE enum fe_req_state fe_req_err_local(struct fe_req *c)
{
	c->w->state = FP_SWQE_DONE;
	c->w->result = fe_req_failed(c->r, c->w->local);
	return REQ_DONE;
}

FE_STATE enum fe_req_state
fe_req_step(struct fe_req *c, enum fe_req_state s)
{
	switch (s) {
	case REQ_READ_WQE:	return fe_req_read_wqe(c);
	case REQ_GET_DEST:	return fe_req_get_dest(c);
	case REQ_EXECUTE_HERE:	return fe_req_execute_here(c);
	case REQ_ROUTE:		return fe_req_route(c);
	case REQ_PLACE:		return fe_req_place(c);
	case REQ_XMIT:		return fe_req_xmit(c);
	case REQ_SENT:		return fe_req_sent(c);
	case REQ_ANSWERED:	return fe_req_answered(c);
	case REQ_ERR_LOCAL:	return fe_req_err_local(c);
	case REQ_DONE:
		break;
	}
	return REQ_DONE;
}

/* The same try, writing its path (the trace's, cold). */
static __attribute__((noinline, cold)) void fe_requester_traced(struct fe_req *c,
								enum fe_req_state s)
{
	struct fe_path t;

	t.n = 0;
	while (s != REQ_DONE) {
		fe_path_add(&t, fe_req_name[s]);
		s = fe_req_step(c, s);
	}
	fe_trace("req qpn %u wqe %llu psn %u %s to %u:%s", c->r->qpn,
		 (unsigned long long)c->w->seq, c->w->pkt.psn, fe_pkt_op_name(c->w->pkt.op),
		 c->w->pkt.dst_qpn, t.buf);
}

/* One try of w: answered at once (a QP of this process, an unreliable
 * type, a local error), or on its way (SENT). */
static void fe_requester(struct fe_qp *r, struct fp_swqe *w)
{
	enum fe_req_state s = REQ_READ_WQE;
	struct fe_req c;

	c.r = r;
	c.w = w;
	c.dev = r->dev;
	c.reliable = w->pkt.src_type == IBV_QPT_RC || w->pkt.src_type == IBV_QPT_XRC_SEND;
	c.xrc = w->pkt.src_type == IBV_QPT_XRC_SEND;
	c.out = &w->pkt;
	c.placed = false;
	c.wire = fe_roce_on(r);
	memset(&c.resp, 0, sizeof(c.resp));
	if (fe_trace_states()) {
		struct fe_req traced = c;	/* c itself stays out of memory */

		fe_requester_traced(&traced, s);
	} else {
		while (s != REQ_DONE)
			s = fe_req_step(&c, s);
	}
	w->pkt.pieces = NULL;		/* read again at the next try */
}

/* ---- the send queue: post, serve, progress ---------------------------------------- */
/*
 * A peer that answered and then went (an application that polled its
 * receive and exited: ibv_rc_pingpong's client after its last iteration)
 * leaves its answer in this process's inbox until a drain takes it; were
 * w counted lost first, its retries would find no peer and it would end in
 * RETRY_EXC_ERR though it was executed (t6030, under load). On a real HCA
 * the answer leaves the responder whatever its process does next. So a
 * request whose peer is gone is lost at once only when the inbox is empty
 * (a gone peer pushes nothing more), else once a drain has run since: true
 * while it waits (w->due: now).
 */
static bool fp_answer_may_wait(struct fe_qp *r, struct fp_swqe *w, long long now)
{
	struct fe_xport *xp = fe_dev_xport(r->dev);

	if (w->gone_mark) {
		if (fe_xport_drains(xp) >= w->gone_mark)
			return false;
	} else {
		if (!fe_xport_pending(xp))
			return false;
		w->gone_mark = fe_xport_drains(xp) + 1;
	}
	w->due = now;
	return true;
}

/* Serve one QP's queue: send what is due, in order; look at the peers of
 * requests long on their way; complete what is answered. */
static void fp_sq_serve(struct fe_qp *r, long long now)
{
	long long due = 0;
	struct fp_link *p;
	bool blocked = false;

	if (r->sq_stalled) {
		r->sq_due = 0;		/* its requester sends nothing more */
		return;
	}
	fe_comp_retire(r, NULL);
	for (p = r->sq_wait.next; p != &r->sq_wait; p = p->next) {
		struct fp_swqe *w = fp_container_of(p, struct fp_swqe, link);

		if (w->state == FP_SWQE_SENT && !w->sent.wire && w->due <= now) {
			/* no response yet: the request is lost if its peer is gone */
			bool late = now - w->sent_at > fp_wait_ns();
			bool gone = !late && !fe_peer_alive(w->sent.peer);

			if (gone && fp_answer_may_wait(r, w, now)) {
				/* looked at again after the next drain (w->due) */
			} else if (late || gone) {
				struct fp_response lost = { .status = FP_ACK_NO_PATH };

				w->gone_mark = 0;
				fe_xport_forget(fe_dev_xport(r->dev), w->pkt.dst_qpn);
				w->sent.cached = false;
				fe_comp_answer(r, w, &lost);
			} else {
				w->due = now + FP_PEER_CHECK_NS;
			}
		}
		if (w->state == FP_SWQE_WAIT && !blocked && w->due <= now &&
		    (r->state == IBV_QPS_RTS || r->state == IBV_QPS_SQD))
			fe_requester(r, w);
		if (w->state == FP_SWQE_WAIT)
			blocked = true;		/* the later ones follow it */
		if ((w->state == FP_SWQE_WAIT || w->state == FP_SWQE_SENT) && w->due &&
		    (!due || w->due < due))
			due = w->due;
	}
	r->sq_due = due;
	fe_comp_retire(r, NULL);
}

/* fe_sq_progress past its first test (apart: every verb makes that test,
 * and only it, on the data path). */
static __attribute__((noinline)) long long fp_sq_progress(void)
{
	static bool busy;
	struct fp_link *p, *t, *qps;
	long long now, due;

	/* Every verb asks: the coarse clock answers "not yet" for a fifth of
	 * the price, and requests on their way are due only tens of ms on. */
	due = fe_sq_next_due();
	if (!due || due > fp_now_coarse_ns() + fp_coarse_slack_ns())
		return due;
	qps = fe_sq_retry_qps();
	if (busy || fp_list_empty(qps))
		return 0;
	busy = true;			/* a delivery may serve the inbox: no re-entry */
	now = fp_now_ns();
	fp_list_for_each_safe(p, t, qps) {
		struct fe_qp *r = fp_container_of(p, struct fe_qp, retry_link);

		if (r->sq_due && r->sq_due <= now)
			fp_sq_serve(r, now);
	}
	fe_sq_due_update();
	busy = false;
	return fe_sq_next_due();
}

long long fe_sq_progress(void)
{
	return fe_sq_waiting() ? fp_sq_progress() : 0;
}

int fe_post_send(struct fe_qp *r, const struct fp_swr *s)
{
	const struct fp_dev_spec *spec = r->spec;
	uint64_t len;
	struct fp_swqe *w;
	int err;

	err = fp_swr_check(r, s, &len);
	if (err)
		return err;
	if (r->state == IBV_QPS_ERR || r->state == IBV_QPS_SQE) {
		fe_sq_complete(r, s, ++r->sq_posted, IBV_WC_WR_FLUSH_ERR, 0);
		return 0;
	}
	w = fe_swqe_get(r, s);
	if (!w)
		return ENOMEM;
	w->len = len;
	if ((spec->port[0].attr.max_msg_sz && w->len > spec->port[0].attr.max_msg_sz) ||
	    (r->type == IBV_QPT_UD &&
	     w->len > fp_mtu_bytes(spec->port[w->s.ah->port_num - 1].attr.active_mtu)))
		w->local = IBV_WC_LOC_LEN_ERR;
	/* inline data is copied now (a READ or an atomic has none) */
	if (w->local == IBV_WC_SUCCESS && w->len && (s->send_flags & IBV_SEND_INLINE) &&
	    !fp_op_asks(s->opcode) && fe_swqe_buf(w, w->len)) {
		fe_swqe_put(r, w);
		return ENOMEM;
	}
	w->seq = ++r->sq_posted;
	if (w->local == IBV_WC_SUCCESS)
		w->local = fp_swr_take(&w->s, w->len, w->buf);
	/* rxe on Linux 6.1 knows neither opcode: its requester completes the
	 * WQE in error when its turn comes (ref-impl's ibvct-release.def
	 * ATOMIC_WRITE, WR_FLUSH: linux v6.1 rxe_req.c rxe_requester, next_opcode
	 * < 0, IB_WC_LOC_QP_OP_ERR); the QP goes to error with it */
	if (w->local == IBV_WC_SUCCESS && !r->ext_ops &&
	    (s->opcode == IBV_WR_ATOMIC_WRITE || s->opcode == IBV_WR_FLUSH))
		w->local = IBV_WC_LOC_QP_OP_ERR;
	/* rxe: UC has no SEND_WITH_INV (linux v6.1 rxe_req.c next_opcode_uc);
	 * and a WR its driver built that it does not carry (s->fail) */
	if (w->local == IBV_WC_SUCCESS && r->rxe_rules && r->type == IBV_QPT_UC &&
	    s->opcode == IBV_WR_SEND_WITH_INV)
		w->local = IBV_WC_LOC_QP_OP_ERR;
	if (w->local == IBV_WC_SUCCESS && s->fail)
		w->local = s->fail;
	if (w->local == IBV_WC_SUCCESS) {
		fp_swr_packet(r, &w->s, &w->pkt);
		w->pkt.len = (uint32_t)w->len;
	}
	fe_swqe_budget(r, w);
	w->state = FP_SWQE_WAIT;
	/* Behind a waiting WQE it waits too (a send queue completes in order);
	 * behind ones on their way it goes at once. */
	if (!fp_sq_any_wait(r))
		fe_requester(r, w);
	/* answered at once, behind nothing: it completes without queueing */
	if (w->state == FP_SWQE_DONE && fp_list_empty(&r->sq_wait)) {
		fe_comp_retire(r, w);
		return 0;
	}
	fe_sq_wait_add(r, w);
	if (w->state == FP_SWQE_WAIT || w->state == FP_SWQE_SENT) {
		long long due = w->due ? w->due : fp_now_ns();

		/* only an earlier due time changes the device-wide one */
		if (!r->sq_due || due < r->sq_due) {
			r->sq_due = due;
			fe_sq_due_update();
		}
	}
	fe_comp_retire(r, NULL);
	return 0;
}
