/* SPDX-License-Identifier: MIT */
/*
 * The requester and completer: post_send checks and gathers a WR (read by
 * the driver, WR-02) into a struct fp_packet, the router (route.c) takes it
 * to the destination's responder, whose ack, response or NAK completes the
 * WQE here, or has it wait for a retransmission.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fp_engine.h"
#include "sq.h"

#define FP_RESP_WAIT_MS		10000		/* no response by then (times IBVCT_TIMEOUT_MULT): lost */
#define FP_PEER_CHECK_NS	20000000LL	/* how often a request on its way looks at its peer */
#define FP_BUSY_NS		20000LL		/* a full inbox: try again this much later */

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
	default:
		return false;
	}
}

static enum ibv_wc_status fp_ack_status(enum fp_ack a)
{
	switch (a) {
	case FP_ACK_OK:
	case FP_ACK_DROPPED:
		return IBV_WC_SUCCESS;
	case FP_NAK_RNR:
		return IBV_WC_RNR_RETRY_EXC_ERR;	/* rnr_retry used up at once */
	case FP_NAK_REM_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case FP_NAK_INV_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case FP_NAK_REM_OP:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_RETRY_EXC_ERR;
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

/*
 * At send time, as an HCA reads memory when it sends (and again when it
 * sends again): the pieces of the WQE's data in registered memory, each
 * SGE checked against its key (for READ and atomics, where the answer will
 * land, with local write). *n: how many pieces.
 */
static enum ibv_wc_status fp_swqe_read(struct fe_qp *r, struct fp_swqe *w, unsigned *n)
{
	bool to_local = fp_op_asks(w->s.opcode);
	int i;

	*n = 0;
	if (w->s.send_flags & IBV_SEND_INLINE) {
		w->pc[0].p = w->buf;
		w->pc[0].len = w->len;
		*n = w->len ? 1 : 0;
		return IBV_WC_SUCCESS;
	}
	for (i = 0; i < w->s.num_sge; i++) {
		const struct ibv_sge *g = &w->s.sg_list[i];
		const char *p = fe_mr_local(r->dev, r->pd, g, to_local);

		if (!p)
			return IBV_WC_LOC_PROT_ERR;
		if (!to_local && g->length) {
			w->pc[*n].p = p;
			w->pc[*n].len = g->length;
			(*n)++;
		}
	}
	return IBV_WC_SUCCESS;
}

/* Scatter a READ response or an atomic's original value. */
static void fp_swr_scatter(struct fe_qp *r, const struct fp_swr *s, const char *data)
{
	uint64_t off = 0;
	int i;

	for (i = 0; i < s->num_sge; i++) {
		char *p = fe_mr_local(r->dev, r->pd, &s->sg_list[i], true);

		if (p && s->sg_list[i].length)
			memcpy(p, data + off, s->sg_list[i].length);
		off += s->sg_list[i].length;
	}
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

/* IBA vol 1 table 45: the RNR NAK timer field, in microseconds. */
static const uint32_t fp_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

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

/* Send the WQEs after w that went already back to WAIT: they follow it
 * again, in order, once it has gone (go-back-N). On a QP whose driver runs
 * the local WQEs again at a retry (rxe), a done bind fails there, and the
 * requester, in error, retries nothing: w waits for ever. */
static void fp_swqe_go_back(struct fe_qp *r, struct fp_swqe *w)
{
	struct fp_link *p;

	if (w->link.next == &w->link)
		return;			/* not queued yet: nothing after it */
	for (p = w->link.next; p != &r->sq_wait; p = p->next) {
		struct fp_swqe *n = fp_container_of(p, struct fp_swqe, link);

		if (n->state == FP_SWQE_SENT) {
			n->state = FP_SWQE_WAIT;
			n->sent.id = 0;		/* its response, if any, is stale */
			n->due = 0;
		}
		/* a bind already done runs again with its old key: it fails */
		if (r->retry_reruns_binds && n->state == FP_SWQE_DONE &&
		    n->s.opcode == IBV_WR_BIND_MW && n->result == IBV_WC_SUCCESS) {
			n->result = IBV_WC_MW_BIND_ERR;
			r->sq_stalled = true;
		}
	}
}

/* What an answer (or its absence) means for w: DONE with a result, or
 * WAIT for another try. */
static void fp_swqe_answer(struct fe_qp *r, struct fp_swqe *w, const struct fp_response *resp)
{
	long long wait_ns = -1, now;

	if (resp->status != FP_ACK_BUSY)
		w->busy_check = 0;
	switch (resp->status) {
	case FP_ACK_BUSY:		/* the peer's inbox is full: soon again */
		now = fp_now_ns();
		/* full for long, and its owner gone: the request is lost */
		if (!w->busy_check) {
			w->busy_check = now + FP_PEER_CHECK_NS;
		} else if (now >= w->busy_check) {
			w->busy_check = now + FP_PEER_CHECK_NS;
			if (w->sent.peer && !fe_peer_alive(w->sent.peer)) {
				fe_xport_forget(fe_dev_xport(r->dev), w->pkt.dst_qpn);
				w->sent.seg_done = 0;
				w->busy_check = 0;
				goto lost;
			}
		}
		w->state = FP_SWQE_WAIT;
		w->due = now + FP_BUSY_NS;
		return;
	case FP_NAK_SEQ:		/* behind a NAKed one: it follows that one again */
		w->state = FP_SWQE_WAIT;
		w->due = 0;
		fp_swqe_go_back(r, w);
		return;
	case FP_ACK_NO_PATH:
lost:
		if (w->sent.cached && !w->rerouted) {
			/* a remembered route to a QPN that moved on: ask once more */
			fe_xport_forget(fe_dev_xport(r->dev), w->pkt.dst_qpn);
			w->rerouted = true;
			wait_ns = 0;
			break;
		}
		if (w->retry_left || !r->attr.timeout) {
			/* timeout 0: no ACK timer, the request is never given up */
			wait_ns = r->attr.timeout ? 4096LL << r->attr.timeout : LLONG_MAX;
			if (w->retry_left > 0 && r->attr.timeout)
				w->retry_left--;
		}
		break;
	case FP_NAK_RNR:
		if (w->rnr_left) {
			wait_ns = 1000LL * fp_rnr_us[resp->rnr_timer & 31];
			if (w->rnr_left > 0)
				w->rnr_left--;
		}
		break;
	default:
		break;
	}
	if (wait_ns >= 0) {
		now = fp_now_ns();
		w->state = FP_SWQE_WAIT;
		w->due = wait_ns == LLONG_MAX ? LLONG_MAX : now + wait_ns;
		if (!w->due)
			w->due = 1;
		fp_swqe_go_back(r, w);
		return;
	}
	w->state = FP_SWQE_DONE;
	w->result = fp_ack_status(resp->status);
	if (w->result == IBV_WC_SUCCESS && resp->status == FP_ACK_OK) {
		if (w->pkt.op == FP_PKT_READ && resp->data)
			fp_swr_scatter(r, &w->s, resp->data);
		else if (w->pkt.op == FP_PKT_CMP_SWAP || w->pkt.op == FP_PKT_FETCH_ADD)
			fp_swr_scatter(r, &w->s, (const char *)&resp->atomic_orig);
	}
}

/* One try of w: answered at once (a QP of this process, an unreliable
 * type, a local error), or on its way (SENT). */
static void fp_swqe_try(struct fe_qp *r, struct fp_swqe *w)
{
	struct fp_response resp = { 0 };
	unsigned n;

	if (w->local == IBV_WC_SUCCESS)
		w->local = fp_swqe_read(r, w, &n);
	if (w->local != IBV_WC_SUCCESS) {
		w->state = FP_SWQE_DONE;
		w->result = w->local;
		return;
	}
	w->pkt.pieces = w->pc;
	w->pkt.npieces = n;
	fe_deliver(r, &w->pkt, &resp, &w->sent);
	w->pkt.pieces = NULL;		/* read again at the next try */
	if (resp.status == FP_ACK_PENDING) {
		w->state = FP_SWQE_SENT;
		w->sent_at = fp_now_coarse_ns();	/* for checks tens of ms apart */
		w->due = w->sent_at + FP_PEER_CHECK_NS;
		return;
	}
	fp_swqe_answer(r, w, &resp);
	free(resp.data);
}

/* Complete an answered WQE off its queue: false when it failed, which moved
 * the QP to ERR. */
static bool fp_swqe_retire(struct fe_qp *r, struct fp_swqe *w)
{
	enum ibv_wc_status st = w->result;

	fe_sq_complete(r, &w->s, w->seq, st, st == IBV_WC_SUCCESS ? (uint32_t)w->len : 0);
	fe_swqe_put(r, w);
	if (st != IBV_WC_SUCCESS) {
		fe_qp_set_error(r);		/* later WQEs are flushed */
		return false;
	}
	return true;
}

/* Complete the answered WQEs at the head of the queue, in order; an error
 * moves the QP to ERR, which flushes the rest. */
static void fp_sq_retire(struct fe_qp *r)
{
	while (!fp_list_empty(&r->sq_wait)) {
		struct fp_swqe *w = fp_container_of(r->sq_wait.next, struct fp_swqe, link);

		if (w->state != FP_SWQE_DONE)
			return;
		fp_list_del(&w->link);
		if (!fp_swqe_retire(r, w))
			return;
	}
	fe_sq_done(r);
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
	fp_sq_retire(r);
	for (p = r->sq_wait.next; p != &r->sq_wait; p = p->next) {
		struct fp_swqe *w = fp_container_of(p, struct fp_swqe, link);

		if (w->state == FP_SWQE_SENT && w->due <= now) {
			/* no response yet: the request is lost if its peer is gone */
			if (now - w->sent_at > fp_wait_ns() || !fe_peer_alive(w->sent.peer)) {
				struct fp_response lost = { .status = FP_ACK_NO_PATH };

				fe_xport_forget(fe_dev_xport(r->dev), w->pkt.dst_qpn);
				w->sent.cached = false;
				fp_swqe_answer(r, w, &lost);
			} else {
				w->due = now + FP_PEER_CHECK_NS;
			}
		}
		if (w->state == FP_SWQE_WAIT && !blocked && w->due <= now &&
		    (r->state == IBV_QPS_RTS || r->state == IBV_QPS_SQD))
			fp_swqe_try(r, w);
		if (w->state == FP_SWQE_WAIT)
			blocked = true;		/* the later ones follow it */
		if ((w->state == FP_SWQE_WAIT || w->state == FP_SWQE_SENT) && w->due &&
		    (!due || w->due < due))
			due = w->due;
	}
	r->sq_due = due;
	fp_sq_retire(r);
}

long long fe_sq_progress(void)
{
	static bool busy;
	struct fp_link *p, *t, *qps;
	long long now, due;

	if (!fe_sq_waiting())
		return 0;
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

void fe_sq_response(struct fe_dev *dev, uint32_t qpn, uint64_t id, const struct fp_response *resp)
{
	struct fe_qp *r = fe_qp_find(dev, qpn);
	struct fp_link *p;

	if (!r || !id)
		return;
	for (p = r->sq_wait.next; p != &r->sq_wait; p = p->next) {
		struct fp_swqe *w = fp_container_of(p, struct fp_swqe, link);

		if (w->state != FP_SWQE_SENT)
			continue;
		if (resp->upto) {
			/* a cumulative ACK: the requests sent there up to id (the
			 * queue's requests on their way are in the order sent) */
			if (w->sent.id > id)
				break;
			if (w->sent.peer == resp->from)
				fp_swqe_answer(r, w, resp);
			continue;
		}
		if (w->sent.id != id)
			continue;
		fp_swqe_answer(r, w, resp);
		/* what it made due is sent by the next serve, not from inside
		 * the inbox's drain that brought this */
		if (w->state == FP_SWQE_WAIT) {
			r->sq_due = fp_now_ns();
			fe_sq_due_update();
		}
		break;
	}
	fp_sq_retire(r);
}

/*
 * A local WQE. With nothing outstanding it completes now. Behind WQEs that
 * are not answered yet it waits, answered already, for its turn: the send
 * queue completes in post order (IBA vol 1 10.8: the completions of one
 * work queue are returned in the order the WRs were posted), which the
 * requester keeps (fp_sq_retire). With no memory for the WQE it completes
 * at once, out of turn, rather than be lost.
 */
void fe_sq_local(struct fe_qp *r, const struct fp_swr *s, enum ibv_wc_status st)
{
	uint64_t seq = ++r->sq_posted;
	struct fp_swr q = *s;
	struct fp_swqe *w = NULL;

	q.num_sge = 0;			/* a local WQE has no data */
	q.sg_list = NULL;
	if (!fp_list_empty(&r->sq_wait) && !fp__quirk(FP_Q_MW_COMPLETES_EARLY)) /* @rule MW-07 */
		w = fe_swqe_get(r, &q);
	if (!w) {
		fe_sq_complete(r, &q, seq, st, 0);
		if (st != IBV_WC_SUCCESS)
			fe_qp_set_error(r);	/* a failed WQE moves the QP to ERR */
		return;
	}
	w->seq = seq;
	w->state = FP_SWQE_DONE;
	w->result = st;
	fe_sq_wait_add(r, w);
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
	if (w->local == IBV_WC_SUCCESS) {
		fp_swr_packet(r, &w->s, &w->pkt);
		w->pkt.len = (uint32_t)w->len;
	}
	w->retry_left = r->attr.retry_cnt;
	w->rnr_left = r->attr.rnr_retry == 7 ? -1 : r->attr.rnr_retry;
	w->state = FP_SWQE_WAIT;
	/* Behind a waiting WQE it waits too (a send queue completes in order);
	 * behind ones on their way it goes at once. */
	if (!fp_sq_any_wait(r))
		fp_swqe_try(r, w);
	/* answered at once, behind nothing: it completes without queueing */
	if (w->state == FP_SWQE_DONE && fp_list_empty(&r->sq_wait)) {
		if (fp_swqe_retire(r, w))
			fe_sq_done(r);
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
	fp_sq_retire(r);
	return 0;
}
