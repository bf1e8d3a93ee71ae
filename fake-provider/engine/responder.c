/* SPDX-License-Identifier: MIT */
/*
 * The responder: one state machine that takes a packet arrived for this
 * process from its destination to the requester's answer. Each state is a
 * small function that does one check or one step and returns the next
 * state; fe_responder runs them in turn, and with `trace FILE states` in the
 * script writes the path each packet took. The shape is the kernel's rxe
 * responder (linux v6.1 drivers/infiniband/sw/rxe/rxe_resp.c: enum
 * resp_states, rxe_responder); the checks and their order are this HCA's.
 *
 * A message is executed against its destination, described once (struct
 * fe_dest): the receiving QP's attributes and the queues it lands in. For
 * an XRC packet that is the SRQ it names, behind the target QP whose gate
 * the daemon checked (the target QP itself is the daemon's and may have no
 * proxy here). What each opcode goes through:
 *
 *   SEND          GET_RWQE CHK_LKEY CHK_LENGTH [INVALIDATE] PLACE COMPLETE
 *   WRITE         CHK_RKEY PLACE
 *   WRITE_IMM     CHK_RKEY GET_RWQE PLACE COMPLETE
 *   READ          CHK_RKEY READ_REPLY
 *   atomics       CHK_ALIGN CHK_RKEY ATOMIC_REPLY
 *   ATOMIC_WRITE  CHK_RKEY CHK_ALIGN ATOMIC_WRITE
 *   FLUSH         CHK_RKEY FLUSH
 *
 * after GET_QP CHK_SEQ (or GET_XRC_SRQ) and CHK_OP, and before ACKNOWLEDGE.
 * ATOMIC_WRITE and FLUSH are Linux 6.12's rxe (rxe_resp.c): CHK_OP refuses
 * them on a QP without the access they need (check_qp_attr_access, an
 * invalid request), and the key is checked before the alignment.
 * A failed check goes to its ERR_ state, which says what the requester
 * hears (and, for a receive-side local error, completes the receive WQE in
 * error and moves the QP to ERR).
 */
#include <stdlib.h>
#include <string.h>

#include "fp_engine.h"
#include "fe_mem.h"

#define FE_RX_SGE_KEPT	4		/* receive SGEs whose address the check keeps */

/* Where a message is executed. */
struct fe_dest {
	struct fe_dev *dev;
	struct fe_qp *qp;		/* the receiving QP; NULL for an XRC target */
	enum ibv_qp_type type;
	uint32_t qpn;
	int access;			/* qp_access_flags */
	uint8_t rnr_timer;		/* min_rnr_timer */
	uint16_t pkey_index;
	const void *pd;			/* the PD remote keys must belong to */
	struct fe_cq *cq;
	struct fp_rq *rq;
	struct fe_srq *srq;
};

/* The states, each with its name for the trace. */
#define FE_RESP_STATES(X)						\
	X(GET_QP)		/* a QP able to receive this packet */	\
	X(GET_XRC_SRQ)		/* XRC: the SRQ it names, in the target QP's domain */ \
	X(CHK_SEQ)		/* RC: not a later request of a stream NAKed for RNR */ \
	X(CHK_OP)		/* the first check of its opcode */	\
	X(CHK_ALIGN)		/* atomics: 8-byte aligned */		\
	X(CHK_RKEY)		/* the remote key grants the access */	\
	X(GET_RWQE)		/* a receive WQE to consume */		\
	X(CHK_LKEY)		/* the receive WQE's SGEs */		\
	X(CHK_LENGTH)		/* the message fits them */		\
	X(INVALIDATE)		/* SEND_WITH_INV: revoke the key */	\
	X(PLACE)		/* the data where it goes */		\
	X(READ_REPLY)		/* READ: the data asked for */		\
	X(ATOMIC_REPLY)		/* atomics: execute, the original value */ \
	X(ATOMIC_WRITE)		/* ATOMIC_WRITE: the 8 bytes stored at once */ \
	X(FLUSH)		/* FLUSH: what was placed is made durable */ \
	X(COMPLETE)		/* the receive CQE */			\
	X(ACKNOWLEDGE)		/* the answer the requester gets */	\
	X(ERR_RNR)		/* no receive WQE: RNR NAK */		\
	X(ERR_RKEY)		/* remote access error NAK */		\
	X(ERR_LKEY)		/* local protection error, the QP to ERR */ \
	X(ERR_LENGTH)		/* local length error, the QP to ERR */	\
	X(ERR_INVALIDATE)	/* a key it cannot revoke, the QP to ERR */ \
	X(ERR_ALIGN)		/* misaligned atomic: invalid request NAK */ \
	X(ERR_OP)		/* an operation the QP does not allow: invalid request NAK */ \
	X(ERR_NOMEM)		/* no memory for a READ response */	\
	X(NAK_SEQ)		/* refused behind the NAKed request */	\
	X(NAK_XRC)		/* XRC: no such SRQ in the domain */	\
	X(DROP)			/* UD: the wrong Q_Key, dropped */	\
	X(LOST)			/* no destination: no answer at all */	\
	X(DONE)

#define FE_RESP_ENUM(n)	RESP_##n,
#define FE_RESP_NAME(n)	#n,
enum fe_resp_state { FE_RESP_STATES(FE_RESP_ENUM) };
static const char *const fe_resp_name[] = { FE_RESP_STATES(FE_RESP_NAME) };

/* One packet's run. */
struct fe_resp {
	struct fe_dest d;
	const struct fp_packet *pkt;
	struct fp_response *resp;
	bool reliable;			/* RC, XRC: every packet is answered */
	enum fp_ack st;			/* the answer, once known */
	struct fp_rwqe *w;		/* the receive WQE consumed */
	char *at[FE_RX_SGE_KEPT];	/* where its first SGEs land, from the check */
	char *mem;			/* the remote memory a key granted */
	uint32_t hdr, total;		/* SEND: GRH (UD) and GRH + payload */
	enum ibv_wc_opcode wc_op;	/* COMPLETE: the receive CQE's */
	uint32_t byte_len;
};

static bool fe_pkt_reliable(const struct fp_packet *pkt)
{
	return pkt->src_type == IBV_QPT_RC || pkt->src_type == IBV_QPT_XRC_SEND;
}

static void fe_rx_complete(struct fe_dest *d, const struct fp_packet *pkt, uint64_t wr_id,
			   enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t byte_len)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = st;
	wc.opcode = op;
	wc.byte_len = byte_len;
	wc.qp_num = d->qpn;
	wc.src_qp = pkt->src_qpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	wc.pkey_index = d->pkey_index;
	/* the immediate as it came, in network order (the quirks: lost, or
	 * turned to host order) */
	if ((pkt->op == FP_PKT_SEND_IMM || pkt->op == FP_PKT_WRITE_IMM) &&
	    !fp__quirk(FP_Q_IMM_DROPPED)) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = fp__quirk(FP_Q_IMM_BYTE_SWAPPED) ? __builtin_bswap32(pkt->imm)
							      : pkt->imm;
	}
	if (pkt->op == FP_PKT_SEND_INV && st == IBV_WC_SUCCESS) {
		wc.wc_flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = pkt->imm;
	}
	if (d->type == IBV_QPT_UD && pkt->grh)
		wc.wc_flags |= IBV_WC_GRH;
	fe_cq_push(d->cq, &wc, NULL, 0, pkt->solicited);
	if (d->srq)
		fe_srq_consumed(d->srq);
}

/* A receive-side local error: error CQE, the QP to ERR (not UD); the
 * requester hears st. */
FE_STATE enum fe_resp_state fe_resp_local_error(struct fe_resp *c, enum ibv_wc_status wst,
					      enum fp_ack st)
{
	fe_rx_complete(&c->d, c->pkt, c->w->wr_id, wst, IBV_WC_RECV, 0);
	if (c->d.qp && c->d.type != IBV_QPT_UD)
		fe_qp_set_error(c->d.qp);
	c->st = st;
	return RESP_ACKNOWLEDGE;
}

/*
 * The IB UD GRH (40 bytes) a receive buffer starts with when one came. A
 * RoCE v2 packet between IPv4-mapped GIDs carries an IPv4 header instead,
 * which the receive holds in the last 20 of the 40 bytes (linux v6.1
 * include/rdma/ib_verbs.h union rdma_network_hdr; rxe_resp.c:894-899
 * execute copies it there): source and destination address at 32 and 36.
 */
static void fe_grh(const struct fp_packet *pkt, unsigned char grh[FP_UD_GRH_LEN])
{
	static const unsigned char v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(grh, 0, FP_UD_GRH_LEN);
	if (!memcmp(pkt->sgid.raw, v4, sizeof(v4)) && !memcmp(pkt->dgid.raw, v4, sizeof(v4))) {
		grh[20] = 0x45;		/* IPv4, 5 words */
		grh[28] = 64;		/* TTL */
		grh[29] = 17;		/* UDP */
		memcpy(grh + 32, pkt->sgid.raw + 12, 4);
		memcpy(grh + 36, pkt->dgid.raw + 12, 4);
		return;
	}
	grh[0] = 0x60;		/* IPVer 6 */
	grh[6] = 0x1b;		/* next header: IBA */
	grh[7] = 64;		/* hop limit */
	memcpy(grh + 8, &pkt->sgid, 16);
	memcpy(grh + 24, &pkt->dgid, 16);
}

static bool fe_types_match(enum ibv_qp_type src, enum ibv_qp_type dst)
{
	return src == IBV_QPT_XRC_SEND ? dst == IBV_QPT_XRC_RECV : src == dst;
}

/* ---- the states ------------------------------------------------------------ */
/* Not able to receive, or the wrong transport: the packet is lost. */
FE_STATE enum fe_resp_state fe_resp_get_qp(struct fe_resp *c, struct fe_qp *qp)
{
	struct fe_dest *d = &c->d;

	if (!qp || (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
		    qp->state != IBV_QPS_SQD) || !fe_types_match(c->pkt->src_type, qp->type))
		return RESP_LOST;
	if (qp->type == IBV_QPT_UD && c->pkt->qkey != qp->attr.qkey)
		return RESP_DROP;
	d->qp = qp;
	d->type = qp->type;
	d->qpn = qp->qpn;
	d->access = (int)qp->attr.qp_access_flags;
	d->rnr_timer = qp->attr.min_rnr_timer;
	d->pkey_index = qp->attr.pkey_index;
	d->pd = qp->pd;
	d->cq = qp->rcq;
	d->srq = qp->srq;
	d->rq = qp->srq ? &qp->srq->rq : &qp->rq;
	return RESP_CHK_SEQ;
}

/* An XRC packet: the daemon passed the target QP's gate and named the SRQ
 * (ours), with the target QP's access flags, RNR timer and domain id. */
FE_STATE enum fe_resp_state fe_resp_get_xrc_srq(struct fe_resp *c)
{
	const struct fp_packet *pkt = c->pkt;
	struct fe_srq *srq = fe_srq_find(c->d.dev, pkt->xrc_srqn);
	struct fe_dest *d = &c->d;
	struct fe_dom *dom;

	if (!srq || srq->type != IBV_SRQT_XRC)
		return RESP_NAK_XRC;
	/* the target QP's domain as this process knows it (NULL: not at all,
	 * so no SRQ here is in it); the quirk's HCA takes the SRQ's own */
	dom = fp__quirk(FP_Q_XRC_SRQN_ANY_DOMAIN) ? srq->dom : fe_dom_find(d->dev, pkt->xrc_dom);
	/* WR-03: the SRQ the packet names, within the target QP's domain; the
	 * quirk's HCA takes the domain's first SRQ instead */
	if (fp__quirk(FP_Q_XRC_IGNORE_REMOTE_SRQN))
		srq = fe_dom_first_srq(d->dev, dom);
	if (!srq || srq->type != IBV_SRQT_XRC || srq->dom != dom)	/* @rule WR-03 */
		return RESP_NAK_XRC;
	d->qp = NULL;
	d->type = IBV_QPT_XRC_RECV;
	d->qpn = pkt->dst_qpn;
	d->access = (int)pkt->xrc_access;
	d->rnr_timer = pkt->xrc_rnr_timer;
	d->pkey_index = 0;
	/* An XRC target has no queues or CQs of its own: it receives through
	 * the SRQ and completes on that SRQ's CQ (SRQX-13). */
	d->pd = srq->pd;
	d->srq = srq;
	d->rq = &srq->rq;
	d->cq = srq->cq;
	return d->cq ? RESP_CHK_OP : RESP_LOST;
}

/* RC: after an RNR NAK the responder takes nothing more of that stream but
 * the NAKed request (the requester starts again from it, IBA vol 1
 * 9.7.5.2.8), so no later message overtakes it; a request from another QP,
 * or one not ahead of it, ends that. */
FE_STATE enum fe_resp_state fe_resp_chk_seq(struct fe_resp *c)
{
	struct fe_qp *qp = c->d.qp;

	if (qp->type == IBV_QPT_RC && qp->rx_blocked) {
		uint32_t ahead = (c->pkt->psn - qp->rx_block_psn) & 0xffffff;

		if (c->pkt->src_qpn == qp->rx_block_src && ahead && ahead < 0x800000)
			return RESP_NAK_SEQ;
		qp->rx_blocked = false;
		fe_mem_qp_publish(qp);
	}
	return RESP_CHK_OP;
}

/* rxe checks the RC QP's access before any key: a request it does not
 * allow is an invalid request (linux v6.1 drivers/infiniband/sw/rxe/rxe_resp.c
 * check_op_valid, RESPST_ERR_UNSUPPORTED_OPCODE); elsewhere the key's check
 * reads the QP's access too (CHK_RKEY, a remote access error). */
static bool fe_resp_qp_access(const struct fe_resp *c)
{
	int need;

	if (!c->d.qp || !c->d.qp->rxe_rules || c->d.type != IBV_QPT_RC)
		return true;
	switch (c->pkt->op) {
	case FP_PKT_READ: need = IBV_ACCESS_REMOTE_READ; break;
	case FP_PKT_CMP_SWAP:
	case FP_PKT_FETCH_ADD: need = IBV_ACCESS_REMOTE_ATOMIC; break;
	default: need = IBV_ACCESS_REMOTE_WRITE; break;
	}
	return c->d.access & need;
}

FE_STATE enum fe_resp_state fe_resp_nak(struct fe_resp *c, enum fp_ack st);

/* A class C error of rxe's responder moves its RC QP to ERR, the NAK sent
 * (linux v6.1 rxe_resp.c do_class_ac_error: goto_error). */
static enum fe_resp_state fe_resp_nak_c(struct fe_resp *c, enum fp_ack st)
{
	if (c->d.qp && c->d.qp->rxe_rules && c->d.type == IBV_QPT_RC)
		fe_qp_set_error(c->d.qp);
	return fe_resp_nak(c, st);
}

/*
 * A key that fails. rxe takes a WRITE_IMM's receive WQE before it checks
 * the key (check_resource comes before check_rkey: no receive is an RNR
 * NAK) and completes that receive with the NAK's status on RC, and on UC
 * when the receive is an SRQ's (linux v6.1 drivers/infiniband/sw/rxe/
 * rxe_resp.c RESPST_ERR_RKEY_VIOLATION: class C, class D).
 */
static enum fe_resp_state fe_resp_err_rkey(struct fe_resp *c)
{
	if (c->pkt->op == FP_PKT_WRITE_IMM && c->d.qp && c->d.qp->rxe_rules &&
	    (c->d.type == IBV_QPT_RC || c->d.srq)) {
		if (!fe_rq_pop(c->d.rq, &c->w))
			return RESP_ERR_RNR;
		fe_rx_complete(&c->d, c->pkt, c->w->wr_id, IBV_WC_REM_ACCESS_ERR, IBV_WC_RECV, 0);
	}
	return fe_resp_nak_c(c, FP_NAK_REM_ACCESS);
}

FE_STATE enum fe_resp_state fe_resp_chk_op(struct fe_resp *c)
{
	switch (c->pkt->op) {
	case FP_PKT_SEND:
	case FP_PKT_SEND_IMM:
	case FP_PKT_SEND_INV:
		return RESP_GET_RWQE;
	case FP_PKT_WRITE:
	case FP_PKT_WRITE_IMM:
	case FP_PKT_READ:
		return fe_resp_qp_access(c) ? RESP_CHK_RKEY : RESP_ERR_OP;
	case FP_PKT_ATOMIC_WRITE:
		/* linux v6.12 rxe_resp.c check_qp_attr_access */
		return c->d.access & IBV_ACCESS_REMOTE_WRITE ? RESP_CHK_RKEY : RESP_ERR_OP;
	case FP_PKT_FLUSH:
		if (((c->pkt->flush_type & IBV_FLUSH_GLOBAL) &&
		     !(c->d.access & IBV_ACCESS_FLUSH_GLOBAL)) ||
		    ((c->pkt->flush_type & IBV_FLUSH_PERSISTENT) &&
		     !(c->d.access & IBV_ACCESS_FLUSH_PERSISTENT)))
			return RESP_ERR_OP;
		return RESP_CHK_RKEY;
	default:
		return fe_resp_qp_access(c) ? RESP_CHK_ALIGN : RESP_ERR_OP;
	}
}

/* An atomic's address is 8-byte aligned, else an invalid request (IBA vol 1
 * 9.4.5; linux v6.1 drivers/infiniband/sw/rxe/rxe_resp.c:648-651): atomics
 * before their key; ATOMIC_WRITE after it (linux v6.12 rxe_mr.c
 * rxe_mr_do_atomic_write: RESPST_ERR_MISALIGNED_ATOMIC once the key is
 * good). */
FE_STATE enum fe_resp_state fe_resp_chk_align(struct fe_resp *c)
{
	if (c->pkt->remote_addr % (fp__quirk(FP_Q_ATOMIC_ALIGN_4) ? 4 : 8)) /* @rule RDMA-07 */
		return RESP_ERR_ALIGN;
	return c->pkt->op == FP_PKT_ATOMIC_WRITE ? RESP_ATOMIC_WRITE : RESP_CHK_RKEY;
}

/* A FLUSH's key: each access its type names (a type of neither bit needs a
 * key of the PD, any access), over its range, or anywhere in the region for
 * IBV_FLUSH_MR (rxe checks no range then; the address must be one of the
 * region's here). The QP's access was CHK_OP's. */
static enum fe_resp_state fe_resp_chk_flush_key(struct fe_resp *c)
{
	static const int bits[] = { IBV_ACCESS_FLUSH_GLOBAL, IBV_ACCESS_FLUSH_PERSISTENT };
	const struct fp_packet *pkt = c->pkt;
	uint64_t len = pkt->flush_level == IBV_FLUSH_MR ? 0 : pkt->len;
	bool asked = false;
	size_t i;

	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (!(pkt->flush_type & (1u << i)))
			continue;
		asked = true;
		c->mem = fe_mr_remote(c->d.dev, c->d.pd, c->d.qp, bits[i], pkt->remote_addr,
				      pkt->rkey, len, bits[i]);
		if (!c->mem)
			return RESP_ERR_RKEY;
	}
	if (!asked)
		c->mem = fe_mr_remote(c->d.dev, c->d.pd, c->d.qp, ~0, pkt->remote_addr, pkt->rkey,
				      len, ~0);
	return c->mem ? RESP_FLUSH : RESP_ERR_RKEY;
}

/* The remote access a key must grant, and what follows its check. A
 * zero-length WRITE or READ checks no key. */
FE_STATE enum fe_resp_state fe_resp_chk_rkey(struct fe_resp *c)
{
	const struct fp_packet *pkt = c->pkt;
	enum fe_resp_state next;
	uint32_t len = pkt->len;
	int need;

	switch (pkt->op) {
	case FP_PKT_WRITE:
		need = IBV_ACCESS_REMOTE_WRITE;
		next = RESP_PLACE;
		break;
	case FP_PKT_WRITE_IMM:	/* it consumes a receive WQE after its key */
		need = IBV_ACCESS_REMOTE_WRITE;
		next = RESP_GET_RWQE;
		break;
	case FP_PKT_READ:
		need = IBV_ACCESS_REMOTE_READ;
		next = RESP_READ_REPLY;
		break;
	case FP_PKT_ATOMIC_WRITE:	/* exactly 8 bytes, as its requester sends */
		need = IBV_ACCESS_REMOTE_WRITE;
		next = RESP_CHK_ALIGN;
		break;
	case FP_PKT_FLUSH:
		return fe_resp_chk_flush_key(c);
	default:
		need = IBV_ACCESS_REMOTE_ATOMIC;
		next = RESP_ATOMIC_REPLY;
		len = 8;
		break;
	}
	if (!len)
		return next;
	c->mem = fe_mr_remote(c->d.dev, c->d.pd, c->d.qp, c->d.access, pkt->remote_addr,
			      pkt->rkey, len, need);
	return c->mem ? next : RESP_ERR_RKEY;
}

FE_STATE enum fe_resp_state fe_resp_get_rwqe(struct fe_resp *c)
{
	if (!fe_rq_pop(c->d.rq, &c->w))
		return RESP_ERR_RNR;
	return c->pkt->op == FP_PKT_WRITE_IMM ? RESP_PLACE : RESP_CHK_LKEY;
}

/* Receive WQEs are checked against the PD of the queue that holds them. */
static const void *fe_resp_wqe_pd(const struct fe_resp *c)
{
	return c->d.srq ? c->d.srq->pd : c->d.pd;
}

FE_STATE enum fe_resp_state fe_resp_chk_lkey(struct fe_resp *c)
{
	const void *wpd = fe_resp_wqe_pd(c);
	int i;

	c->byte_len = 0;	/* here: the room the SGEs give */
	for (i = 0; i < c->w->num_sge; i++) {
		char *p = fe_mr_local(c->d.dev, wpd, &c->w->sge[i], true);

		if (!p)
			return RESP_ERR_LKEY;
		if (i < FE_RX_SGE_KEPT)
			c->at[i] = p;
		c->byte_len += c->w->sge[i].length;
	}
	return RESP_CHK_LENGTH;
}

FE_STATE enum fe_resp_state fe_resp_chk_length(struct fe_resp *c)
{
	c->hdr = c->d.type == IBV_QPT_UD ? FP_UD_GRH_LEN : 0;
	c->total = c->hdr + c->pkt->len;
	if (c->byte_len < c->total)
		return RESP_ERR_LENGTH;
	return c->pkt->op == FP_PKT_SEND_INV ? RESP_INVALIDATE : RESP_PLACE;
}

/* SEND_WITH_INV: the key must name a window it can revoke; if not, the
 * receive completes in error, the QP goes to ERR and the requester has an
 * invalid-request NAK (linux v6.1 drivers/infiniband/sw/rxe/rxe_resp.c
 * RESPST_ERR_INVALIDATE_RKEY) */
FE_STATE enum fe_resp_state fe_resp_invalidate(struct fe_resp *c)
{
	if (!fe_key_invalidate(c->d.dev, c->pkt->imm))	/* @rule MW-05 */
		return RESP_ERR_INVALIDATE;
	return RESP_PLACE;
}

/* SEND: [GRH (UD)] + payload into the receive WQE's SGEs. */
FE_STATE void fe_resp_scatter(struct fe_resp *c)
{
	const struct fp_packet *pkt = c->pkt;
	uint32_t hdr = c->hdr, total = c->total, done = 0;
	unsigned char grh[FP_UD_GRH_LEN];
	struct fp_rwqe *w = c->w;
	int i;

	if (hdr && pkt->grh)
		fe_grh(pkt, grh);
	for (i = 0; i < w->num_sge && done < total; i++) {
		char *p = i < FE_RX_SGE_KEPT ? c->at[i]
					     : fe_mr_local(c->d.dev, fe_resp_wqe_pd(c), &w->sge[i], true);
		uint32_t n = w->sge[i].length < total - done ? w->sge[i].length : total - done;
		uint32_t k;

		for (k = 0; k < n; ) {
			uint32_t off = done + k, chunk;

			if (off < hdr) {
				/* IB UD: the first 40 bytes hold the GRH, if one came. */
				chunk = hdr - off < n - k ? hdr - off : n - k;
				if (pkt->grh)
					memcpy(p + k, grh + off, chunk);
			} else {
				chunk = n - k;
				fe_pieces_copy(p + k, pkt->pieces, pkt->npieces, off - hdr, chunk);
			}
			k += chunk;
		}
		done += n;
	}
}

FE_STATE enum fe_resp_state fe_resp_place(struct fe_resp *c)
{
	const struct fp_packet *pkt = c->pkt;

	c->st = FP_ACK_OK;
	if (pkt->op == FP_PKT_WRITE || pkt->op == FP_PKT_WRITE_IMM) {
		if (pkt->len)
			fe_pieces_copy(c->mem, pkt->pieces, pkt->npieces, 0, pkt->len);
		if (pkt->op == FP_PKT_WRITE)
			return RESP_ACKNOWLEDGE;
		/* the quirk's receive does not say a WRITE consumed it */
		c->wc_op = fp__quirk(FP_Q_WRITE_IMM_AS_RECV) ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
		c->byte_len = pkt->len;
		return RESP_COMPLETE;
	}
	fe_resp_scatter(c);
	c->wc_op = IBV_WC_RECV;
	c->byte_len = c->total;
	return RESP_COMPLETE;
}

FE_STATE enum fe_resp_state fe_resp_read_reply(struct fe_resp *c)
{
	uint32_t len = c->pkt->len;

	if (len) {
		c->resp->data = malloc(len);
		if (!c->resp->data)
			return RESP_ERR_NOMEM;
		memcpy(c->resp->data, c->mem, len);
	}
	c->resp->len = len;
	c->st = FP_ACK_OK;
	return RESP_ACKNOWLEDGE;
}

/*
 * A CPU atomic on the word (aligned in this process too: the usual case),
 * as requesters that place an atomic themselves in this memory do
 * (requester.c, PLACE), so that theirs, this one and the application's own
 * atomics on the word agree.
 */
FE_STATE enum fe_resp_state fe_resp_atomic_reply(struct fe_resp *c)
{
	const struct fp_packet *pkt = c->pkt;
	uint64_t orig, val;

	if (!((uintptr_t)c->mem % 8)) {
		uint64_t *word = (uint64_t *)(void *)c->mem;

		orig = pkt->compare_add;
		if (pkt->op != FP_PKT_CMP_SWAP)
			orig = __atomic_fetch_add(word, pkt->compare_add, __ATOMIC_SEQ_CST);
		else
			__atomic_compare_exchange_n(word, &orig, pkt->swap, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		memcpy(&orig, c->mem, 8);
		val = pkt->op == FP_PKT_CMP_SWAP ? (orig == pkt->compare_add ? pkt->swap : orig)
						 : orig + pkt->compare_add;
		memcpy(c->mem, &val, 8);
	}
	c->resp->atomic_orig = orig;
	c->resp->len = 8;
	c->st = FP_ACK_OK;
	return RESP_ACKNOWLEDGE;
}

/* An 8-byte store seen whole by every other access to the word (linux
 * v6.12 rxe_mr.c rxe_mr_do_atomic_write: one 64-bit store). */
FE_STATE enum fe_resp_state fe_resp_atomic_write(struct fe_resp *c)
{
	uint64_t v = 0;

	fe_pieces_copy((char *)&v, c->pkt->pieces, c->pkt->npieces, 0, sizeof(v));
	if (!((uintptr_t)c->mem % 8))
		__atomic_store_n((uint64_t *)(void *)c->mem, v, __ATOMIC_SEQ_CST);
	else
		memcpy(c->mem, &v, sizeof(v));
	c->st = FP_ACK_OK;
	return RESP_ACKNOWLEDGE;
}

/* What was placed before it is where any reader sees it: memory here is
 * both the global and the persistent place (linux v6.12 rxe_resp.c
 * process_flush: a flush of the pages for PERSISTENT, a barrier for
 * GLOBAL). */
FE_STATE enum fe_resp_state fe_resp_flush(struct fe_resp *c)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	c->st = FP_ACK_OK;
	return RESP_ACKNOWLEDGE;
}

FE_STATE enum fe_resp_state fe_resp_complete(struct fe_resp *c)
{
	fe_rx_complete(&c->d, c->pkt, c->w->wr_id, IBV_WC_SUCCESS, c->wc_op, c->byte_len);
	return RESP_ACKNOWLEDGE;
}

/* Unreliable transports never answer: errors are silent drops. An RNR NAK
 * carries the responder's timer: the requester waits that long. */
FE_STATE enum fe_resp_state fe_resp_acknowledge(struct fe_resp *c)
{
	c->resp->status = c->reliable || c->st == FP_ACK_OK ? c->st : FP_ACK_DROPPED;
	c->resp->rnr_timer = c->d.rnr_timer;
	return RESP_DONE;
}

/* RC: the stream is blocked behind the NAKed request (fe_resp_chk_seq). */
FE_STATE enum fe_resp_state fe_resp_err_rnr(struct fe_resp *c)
{
	struct fe_qp *qp = c->d.qp;

	c->st = FP_NAK_RNR;
	/* counted where one is sent: RC and XRC (unreliable ones drop it) */
	if (c->reliable)
		fe_up->count(fe_dev_index(c->d.dev), qp && qp->attr.port_num ? qp->attr.port_num : 1,
			     FE_CNT_SEND_RNR);
	if (qp && qp->type == IBV_QPT_RC) {
		qp->rx_blocked = true;
		qp->rx_block_psn = c->pkt->psn;
		qp->rx_block_src = c->pkt->src_qpn;
		fe_mem_qp_publish(qp);	/* requesters stop placing: we decide */
	}
	return RESP_ACKNOWLEDGE;
}

/* Answers without an execution: status only. */
FE_STATE enum fe_resp_state fe_resp_answer(struct fe_resp *c, enum fp_ack st)
{
	c->resp->status = st;
	return RESP_DONE;
}

FE_STATE enum fe_resp_state fe_resp_nak(struct fe_resp *c, enum fp_ack st)
{
	c->st = st;
	return RESP_ACKNOWLEDGE;
}

/* ---- the machine ------------------------------------------------------------ */
FE_STATE enum fe_resp_state
fe_resp_step(struct fe_resp *c, enum fe_resp_state s, struct fe_qp *qp)
{
	switch (s) {
	case RESP_GET_QP:		return fe_resp_get_qp(c, qp);
	case RESP_GET_XRC_SRQ:		return fe_resp_get_xrc_srq(c);
	case RESP_CHK_SEQ:		return fe_resp_chk_seq(c);
	case RESP_CHK_OP:		return fe_resp_chk_op(c);
	case RESP_CHK_ALIGN:		return fe_resp_chk_align(c);
	case RESP_CHK_RKEY:		return fe_resp_chk_rkey(c);
	case RESP_GET_RWQE:		return fe_resp_get_rwqe(c);
	case RESP_CHK_LKEY:		return fe_resp_chk_lkey(c);
	case RESP_CHK_LENGTH:		return fe_resp_chk_length(c);
	case RESP_INVALIDATE:		return fe_resp_invalidate(c);
	case RESP_PLACE:		return fe_resp_place(c);
	case RESP_READ_REPLY:		return fe_resp_read_reply(c);
	case RESP_ATOMIC_REPLY:		return fe_resp_atomic_reply(c);
	case RESP_ATOMIC_WRITE:		return fe_resp_atomic_write(c);
	case RESP_FLUSH:		return fe_resp_flush(c);
	case RESP_COMPLETE:		return fe_resp_complete(c);
	case RESP_ACKNOWLEDGE:		return fe_resp_acknowledge(c);
	case RESP_ERR_RNR:		return fe_resp_err_rnr(c);
	case RESP_ERR_RKEY:		return fe_resp_err_rkey(c);
	case RESP_ERR_LKEY:
		return fe_resp_local_error(c, IBV_WC_LOC_PROT_ERR, FP_NAK_REM_OP);
	case RESP_ERR_LENGTH:
		/* rxe: the copy into the receive WQE fails, a malformed WQE
		 * (linux v6.1 and v6.12 rxe_resp.c send_data_in: copy_data
		 * -EINVAL; class A: LOC_QP_OP_ERR, the requester REM_OP_ERR;
		 * HOST-11's known deviation, the profile's rule) */
		if (c->d.qp && c->d.qp->too_long_is_op_err && c->d.type != IBV_QPT_UD)
			return fe_resp_local_error(c, IBV_WC_LOC_QP_OP_ERR, FP_NAK_REM_OP);
		return fe_resp_local_error(c, IBV_WC_LOC_LEN_ERR, FP_NAK_INV_REQ);
	case RESP_ERR_INVALIDATE:
		/* rxe: class J, the request itself ACKed (rxe_resp.c
		 * RESPST_ERR_INVALIDATE_RKEY) */
		return fe_resp_local_error(c, IBV_WC_REM_INV_REQ_ERR,
					   c->d.qp && c->d.qp->rxe_rules ? FP_ACK_OK : FP_NAK_INV_REQ);
	case RESP_ERR_ALIGN:		return fe_resp_nak_c(c, FP_NAK_INV_REQ);
	case RESP_ERR_OP:		return fe_resp_nak_c(c, FP_NAK_INV_REQ);
	case RESP_ERR_NOMEM:		return fe_resp_nak(c, FP_NAK_REM_OP);
	case RESP_NAK_SEQ:		return fe_resp_answer(c, FP_NAK_SEQ);
	case RESP_NAK_XRC:		return fe_resp_answer(c, FP_NAK_INV_REQ);
	case RESP_DROP:			return fe_resp_answer(c, FP_ACK_DROPPED);
	case RESP_LOST:			/* the answer set at the start stands */
	case RESP_DONE:
		break;
	}
	return RESP_DONE;
}

/* The same run, writing its path (the trace's, cold). */
static __attribute__((noinline, cold)) void fe_responder_traced(struct fe_resp *c,
								enum fe_resp_state s,
								struct fe_qp *qp)
{
	const struct fp_packet *pkt = c->pkt;
	struct fe_path t;

	t.n = 0;
	while (s != RESP_DONE) {
		fe_path_add(&t, fe_resp_name[s]);
		s = fe_resp_step(c, s, qp);
	}
	fe_trace("resp qpn %u psn %u from %u %s:%s -> %s", pkt->dst_qpn, pkt->psn,
		 pkt->src_qpn, fe_pkt_op_name(pkt->op), t.buf, fe_ack_name(c->resp->status));
}

/* Run the machine on one packet for qp (XRC: the SRQ it names). */
void fe_responder(struct fe_dev *dev, struct fe_qp *qp, const struct fp_packet *pkt,
		  struct fp_response *resp)
{
	enum fe_resp_state s;
	struct fe_resp c;

	c.d.dev = dev;
	c.pkt = pkt;
	c.resp = resp;
	c.reliable = fe_pkt_reliable(pkt);
	c.st = FP_ACK_OK;
	resp->data = NULL;
	resp->len = 0;
	resp->atomic_orig = 0;
	resp->status = c.reliable ? FP_ACK_NO_PATH : FP_ACK_DROPPED;
	s = pkt->src_type == IBV_QPT_XRC_SEND ? RESP_GET_XRC_SRQ : RESP_GET_QP;
	if (fe_trace_states()) {
		struct fe_resp traced = c;	/* c itself stays out of memory */

		fe_responder_traced(&traced, s, qp);
		return;
	}
	while (s != RESP_DONE)
		s = fe_resp_step(&c, s, qp);
}
