/* SPDX-License-Identifier: MIT */
/*
 * The receive dispatcher: everything that arrives for this process goes
 * through here, and only from here to the responder (a request) or the
 * completer (a response), each with the QP it is for, as the kernel's rxe
 * driver finds a packet's QP and hands it to rxe_resp_queue_pkt or
 * rxe_comp_queue_pkt by its opcode (linux v6.1 drivers/infiniband/sw/rxe/
 * rxe_recv.c rxe_rcv, hdr_check). What arrives comes from a transport
 * (the records of this process's inbox, transport.c, which has no way up
 * but its work's recv: fe_recv) or from the requester, a request for a QP
 * of this process (its EXECUTE_HERE state: fe_recv_req, which the data
 * path of a loopback calls without a struct fe_rcv to fill).
 */
#include "fp_engine.h"
#include "sq.h"

void fe_recv_req(struct fe_dev *dev, struct fe_qp *qp, const struct fp_packet *pkt,
		 struct fp_response *resp)
{
	/* its destination QP (XRC: none here, the target QP is the daemon's;
	 * the responder finds the SRQ the packet names) */
	if (!qp && pkt->src_type != IBV_QPT_XRC_SEND)
		qp = fe_qp_find(dev, pkt->dst_qpn);
	fe_responder(dev, qp, pkt, resp);
}

void fe_recv(struct fe_dev *dev, struct fe_rcv *rcv)
{
	struct fe_qp *qp;

	if (rcv->pkt) {
		fe_recv_req(dev, rcv->qp, rcv->pkt, rcv->resp);
		return;
	}
	/* a response: the requester's QP, and the request it names */
	qp = fe_qp_find(dev, rcv->qpn);
	if (qp && rcv->id)
		fe_comp_response(qp, rcv->id, rcv->resp);
}
