/* SPDX-License-Identifier: MIT */
/*
 * The responder: a packet that arrived for this process executes against
 * its destination, described once (struct fe_dest): the receiving QP's
 * attributes and the queues the message lands in. For an XRC packet that
 * is the SRQ it names, behind the target QP whose gate the daemon checked
 * (the target QP itself is the daemon's and may have no proxy here). The
 * answer is an ack, a response or a NAK for the requester.
 */
#include <stdlib.h>
#include <string.h>

#include "fp_engine.h"

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
	if (pkt->op == FP_PKT_SEND_IMM || pkt->op == FP_PKT_WRITE_IMM) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = pkt->imm;
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

/* A receive-side local error: error CQE, the QP to ERR (not UD). */
static void fe_rx_local_error(struct fe_dest *d, const struct fp_packet *pkt, uint64_t wr_id,
			      enum ibv_wc_status st)
{
	fe_rx_complete(d, pkt, wr_id, st, IBV_WC_RECV, 0);
	if (d->qp && d->type != IBV_QPT_UD)
		fe_qp_set_error(d->qp);
}

/* The IB UD GRH (40 bytes) a receive buffer starts with when one came. */
static void fe_grh(const struct fp_packet *pkt, unsigned char grh[FP_UD_GRH_LEN])
{
	memset(grh, 0, FP_UD_GRH_LEN);
	grh[0] = 0x60;		/* IPVer 6 */
	grh[6] = 0x1b;		/* next header: IBA */
	grh[7] = 64;		/* hop limit */
	memcpy(grh + 8, &pkt->sgid, 16);
	memcpy(grh + 24, &pkt->dgid, 16);
}

/* SEND: scatter [GRH (UD)] + payload into the next receive WQE. */
static enum fp_ack fe_rx_send(struct fe_dest *d, const struct fp_packet *pkt)
{
	uint32_t hdr = d->type == IBV_QPT_UD ? FP_UD_GRH_LEN : 0;
	/* Receive WQEs are checked against the PD of the queue that holds them. */
	const void *wpd = d->srq ? d->srq->pd : d->pd;
	uint32_t total = hdr + pkt->len, room = 0, done = 0;
	unsigned char grh[FP_UD_GRH_LEN];
	char *at[FE_RX_SGE_KEPT];	/* where the first SGEs land, from the check */
	struct fp_rwqe *w;
	int i;

	if (!fe_rq_pop(d->rq, &w))
		return FP_NAK_RNR;
	for (i = 0; i < w->num_sge; i++) {
		char *p = fe_mr_local(d->dev, wpd, &w->sge[i], true);

		if (!p) {
			fe_rx_local_error(d, pkt, w->wr_id, IBV_WC_LOC_PROT_ERR);
			return FP_NAK_REM_OP;
		}
		if (i < FE_RX_SGE_KEPT)
			at[i] = p;
		room += w->sge[i].length;
	}
	if (room < total) {
		fe_rx_local_error(d, pkt, w->wr_id, IBV_WC_LOC_LEN_ERR);
		return FP_NAK_INV_REQ;
	}
	/* SEND_WITH_INV: the key must name a window it can revoke; if not, the
	 * receive completes in error, the QP goes to ERR and the requester
	 * has an invalid-request NAK (linux v6.1 drivers/infiniband/sw/rxe/
	 * rxe_resp.c RESPST_ERR_INVALIDATE_RKEY) */
	if (pkt->op == FP_PKT_SEND_INV && !fe_key_invalidate(d->dev, pkt->imm)) { /* @rule MW-05 */
		fe_rx_local_error(d, pkt, w->wr_id, IBV_WC_REM_INV_REQ_ERR);
		return FP_NAK_INV_REQ;
	}
	if (hdr && pkt->grh)
		fe_grh(pkt, grh);
	for (i = 0; i < w->num_sge && done < total; i++) {
		char *p = i < FE_RX_SGE_KEPT ? at[i] : fe_mr_local(d->dev, wpd, &w->sge[i], true);
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
	fe_rx_complete(d, pkt, w->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, total);
	return FP_ACK_OK;
}

static enum fp_ack fe_rx_write(struct fe_dest *d, const struct fp_packet *pkt)
{
	char *dst = NULL;
	struct fp_rwqe *w = NULL;

	if (pkt->len) {		/* a zero-length write checks no key */
		dst = fe_mr_remote(d->dev, d->pd, d->qp, d->access, pkt->remote_addr, pkt->rkey,
				   pkt->len, IBV_ACCESS_REMOTE_WRITE);
		if (!dst)
			return FP_NAK_REM_ACCESS;
	}
	/* WRITE_IMM consumes a receive WQE: none, an RNR NAK before any write */
	if (pkt->op == FP_PKT_WRITE_IMM && !fe_rq_pop(d->rq, &w))
		return FP_NAK_RNR;
	if (pkt->len)
		fe_pieces_copy(dst, pkt->pieces, pkt->npieces, 0, pkt->len);
	if (pkt->op == FP_PKT_WRITE_IMM) {
		fe_rx_complete(d, pkt, w->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
			       pkt->len);
	}
	return FP_ACK_OK;
}

static enum fp_ack fe_rx_read(struct fe_dest *d, const struct fp_packet *pkt,
			      struct fp_response *resp)
{
	char *src = NULL;

	if (pkt->len) {
		src = fe_mr_remote(d->dev, d->pd, d->qp, d->access, pkt->remote_addr, pkt->rkey,
				   pkt->len, IBV_ACCESS_REMOTE_READ);
		if (!src)
			return FP_NAK_REM_ACCESS;
		resp->data = malloc(pkt->len);
		if (!resp->data)
			return FP_NAK_REM_OP;
		memcpy(resp->data, src, pkt->len);
	}
	resp->len = pkt->len;
	return FP_ACK_OK;
}

static enum fp_ack fe_rx_atomic(struct fe_dest *d, const struct fp_packet *pkt,
				struct fp_response *resp)
{
	uint64_t orig, val;
	char *p;

	if (pkt->remote_addr % 8)
		return FP_NAK_INV_REQ;		/* atomics need 8-byte alignment */
	p = fe_mr_remote(d->dev, d->pd, d->qp, d->access, pkt->remote_addr, pkt->rkey, 8,
			 IBV_ACCESS_REMOTE_ATOMIC);
	if (!p)
		return FP_NAK_REM_ACCESS;
	memcpy(&orig, p, 8);
	val = pkt->op == FP_PKT_CMP_SWAP ? (orig == pkt->compare_add ? pkt->swap : orig)
					 : orig + pkt->compare_add;
	memcpy(p, &val, 8);
	resp->atomic_orig = orig;
	resp->len = 8;
	return FP_ACK_OK;
}

static void fe_execute(struct fe_dest *d, const struct fp_packet *pkt, struct fp_response *resp)
{
	bool reliable = pkt->src_type == IBV_QPT_RC || pkt->src_type == IBV_QPT_XRC_SEND;
	enum fp_ack st;

	switch (pkt->op) {
	case FP_PKT_SEND:
	case FP_PKT_SEND_IMM:
	case FP_PKT_SEND_INV:
		st = fe_rx_send(d, pkt);
		break;
	case FP_PKT_WRITE:
	case FP_PKT_WRITE_IMM:
		st = fe_rx_write(d, pkt);
		break;
	case FP_PKT_READ:
		st = fe_rx_read(d, pkt, resp);
		break;
	default:
		st = fe_rx_atomic(d, pkt, resp);
		break;
	}
	/* Unreliable transports never answer: errors are silent drops. An RNR
	 * NAK carries the responder's timer: the requester waits that long. */
	resp->status = reliable || st == FP_ACK_OK ? st : FP_ACK_DROPPED;
	resp->rnr_timer = d->rnr_timer;
}

/* An XRC packet: the daemon passed the target QP's gate and named the SRQ
 * (ours), with the target QP's access flags, RNR timer and domain id. */
static void fe_rx_xrc(struct fe_dev *dev, const struct fp_packet *pkt, struct fp_response *resp)
{
	struct fe_srq *srq = fe_srq_find(dev, pkt->xrc_srqn);
	struct fe_dest d;
	struct fe_dom *dom;

	if (!srq || srq->type != IBV_SRQT_XRC) {
		resp->status = FP_NAK_INV_REQ;
		return;
	}
	/* the target QP's domain as this process knows it (NULL: not at all,
	 * so no SRQ here is in it); the quirk's HCA takes the SRQ's own */
	dom = fp__quirk(FP_Q_XRC_SRQN_ANY_DOMAIN) ? srq->dom : fe_dom_find(dev, pkt->xrc_dom);
	/* WR-03: the SRQ the packet names, within the target QP's domain; the
	 * quirk's HCA takes the domain's first SRQ instead */
	if (fp__quirk(FP_Q_XRC_IGNORE_REMOTE_SRQN))
		srq = fe_dom_first_srq(dev, dom);
	if (!srq || srq->type != IBV_SRQT_XRC || srq->dom != dom) {	/* @rule WR-03 */
		resp->status = FP_NAK_INV_REQ;
		return;
	}
	memset(&d, 0, sizeof(d));
	d.dev = dev;
	d.type = IBV_QPT_XRC_RECV;
	d.qpn = pkt->dst_qpn;
	d.access = (int)pkt->xrc_access;
	d.rnr_timer = pkt->xrc_rnr_timer;
	/* An XRC target has no queues or CQs of its own: it receives through
	 * the SRQ and completes on that SRQ's CQ (SRQX-13). */
	d.pd = srq->pd;
	d.srq = srq;
	d.rq = &srq->rq;
	d.cq = srq->cq;
	if (d.cq)
		fe_execute(&d, pkt, resp);
}

static bool fe_types_match(enum ibv_qp_type src, enum ibv_qp_type dst)
{
	return src == IBV_QPT_XRC_SEND ? dst == IBV_QPT_XRC_RECV : src == dst;
}

void fe_rx(struct fe_dev *dev, const struct fp_packet *pkt, struct fp_response *resp)
{
	fe_rx_qp(dev, pkt->src_type == IBV_QPT_XRC_SEND ? NULL : fe_qp_find(dev, pkt->dst_qpn),
		 pkt, resp);
}

void fe_rx_qp(struct fe_dev *dev, struct fe_qp *qp, const struct fp_packet *pkt,
	      struct fp_response *resp)
{
	bool reliable = pkt->src_type == IBV_QPT_RC || pkt->src_type == IBV_QPT_XRC_SEND;
	struct fe_dest d;

	resp->data = NULL;
	resp->len = 0;
	resp->atomic_orig = 0;
	resp->status = reliable ? FP_ACK_NO_PATH : FP_ACK_DROPPED;
	if (pkt->src_type == IBV_QPT_XRC_SEND) {
		fe_rx_xrc(dev, pkt, resp);
		return;
	}
	/* Not able to receive, or the wrong transport: the packet is lost. */
	if (!qp || (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
		    qp->state != IBV_QPS_SQD) || !fe_types_match(pkt->src_type, qp->type))
		return;
	if (qp->type == IBV_QPT_UD && pkt->qkey != qp->attr.qkey) {
		resp->status = FP_ACK_DROPPED;
		return;
	}
	d.dev = dev;			/* every member */
	d.qp = qp;
	d.type = qp->type;
	d.qpn = qp->qpn;
	d.access = (int)qp->attr.qp_access_flags;
	d.rnr_timer = qp->attr.min_rnr_timer;
	d.pkey_index = qp->attr.pkey_index;
	d.pd = qp->pd;
	d.cq = qp->rcq;
	d.srq = qp->srq;
	d.rq = qp->srq ? &qp->srq->rq : &qp->rq;
	/* RC: after an RNR NAK the responder takes nothing more of that stream
	 * but the NAKed request (the requester starts again from it, IBA vol 1
	 * 9.7.5.2.8), so no later message overtakes it; a request from another
	 * QP, or one not ahead of it, ends that. */
	if (qp->type == IBV_QPT_RC && qp->rx_blocked) {
		uint32_t ahead = (pkt->psn - qp->rx_block_psn) & 0xffffff;

		if (pkt->src_qpn == qp->rx_block_src && ahead && ahead < 0x800000) {
			resp->status = FP_NAK_SEQ;
			return;
		}
		qp->rx_blocked = false;
	}
	fe_execute(&d, pkt, resp);
	if (qp->type == IBV_QPT_RC && resp->status == FP_NAK_RNR) {
		qp->rx_blocked = true;
		qp->rx_block_psn = pkt->psn;
		qp->rx_block_src = pkt->src_qpn;
	}
}
