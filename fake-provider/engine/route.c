/* SPDX-License-Identifier: MIT */
/*
 * Where a packet goes: the one routing decision of the engine. A packet for
 * a QP of this process is executed here at once. Anything else, and every
 * XRC packet (its target QP is the daemon's, its SRQ may be in any
 * process), goes where the daemon says: for XRC after its gate check of the
 * target QP, with the target QP's attributes the responder needs; into the
 * inbox of that process (transport.c), or executed here when the SRQ is
 * ours after all. A reliable request into another process's inbox is on
 * its way when this returns (FP_ACK_PENDING): its response completes it
 * later (requester.c, fe_sq_response).
 */
#include <errno.h>

#include "fp_engine.h"

void fe_deliver(struct fe_qp *src, const struct fp_packet *pkt, struct fp_response *resp,
		struct fe_sent *sent)
{
	bool reliable = pkt->src_type == IBV_QPT_RC || pkt->src_type == IBV_QPT_XRC_SEND;
	bool xrc = pkt->src_type == IBV_QPT_XRC_SEND;
	struct fe_dev *dev = src->dev;
	struct fe_xport *xp = fe_dev_xport(dev);
	const struct fp_packet *out = pkt;
	struct fp_packet p2;
	struct fk_route rt;
	struct fe_peer *p, *was = sent->peer;
	struct fe_qp *dq;
	uint32_t done = sent->seg_done;
	uint64_t id = sent->id;
	int err;

	resp->data = NULL;
	resp->len = 0;
	resp->atomic_orig = 0;
	sent->peer = NULL;
	sent->id = 0;
	sent->cached = false;
	sent->seg_done = 0;
	if (!xrc && (dq = fe_qp_find(dev, pkt->dst_qpn))) {
		fe_rx_qp(dev, dq, pkt, resp);
		return;
	}
	resp->status = reliable ? FP_ACK_NO_PATH : FP_ACK_DROPPED;
	if (!fe_xport_mine(xp))
		return;
	p = fe_xport_route(xp, src->fk, pkt->dst_qpn, xrc, pkt->xrc_srqn,
			   fp__quirk(FP_Q_XRC_IGNORE_REMOTE_SRQN) ? FK_Q_XRC_IGNORE_REMOTE_SRQN : 0,
			   &rt, &sent->cached);
	if (!p) {
		if (xrc && rt.gate == FK_GATE_BAD_SRQ)	/* @rule WR-03 */
			resp->status = FP_NAK_INV_REQ;
		return;
	}
	if (xrc) {
		/* with what the daemon's gate said of the target QP */
		p2 = *pkt;
		p2.xrc_srqn = rt.srqn;
		p2.xrc_access = rt.qp_access;
		p2.xrc_rnr_timer = (uint8_t)rt.rnr_timer;
		p2.xrc_dom = rt.xrcd_id;
		out = &p2;
	}
	if (fe_peer_self(p)) {
		/* ours after all (an XRC SRQ of this process) */
		fe_rx(dev, out, resp);
		return;
	}
	/* the rest of a long message goes where its first part went, else
	 * all of it again to where the route leads now */
	if (p != was)
		done = 0;
	err = fe_xport_send(xp, p, out, fe_up->fk_conn_id(src->fk), reliable, &id, &done);
	sent->id = id;
	if (err == EAGAIN) {
		resp->status = FP_ACK_BUSY;
		sent->seg_done = done;
		sent->peer = p;
		return;
	}
	if (err) {
		fe_xport_forget(xp, pkt->dst_qpn);
		return;
	}
	sent->peer = p;
	resp->status = reliable ? FP_ACK_PENDING : FP_ACK_OK;
}
