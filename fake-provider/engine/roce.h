/* SPDX-License-Identifier: MIT */
/*
 * Inside the engine: the second transport, RoCE v2 on a real interface
 * (roce.c), for a device whose script says `transport roce IFACE`. It sits
 * where the inboxes of transport.c sit, below the requester, responder and
 * completer, and offers them the same: a request sent (the requester's
 * XMIT state), and arrivals handed up through the work's recv (the receive
 * dispatcher), a request to the responder, an answer to the completer. The
 * wire's own rules are its: packets of at most the path MTU, PSNs per
 * packet, the responder's expected PSN, duplicates and sequence NAKs, ACKs
 * and NAKs with their AETH codes, READ responses in segments, the replay of
 * a duplicate atomic, and the local ACK timer, whose expiry it reports as a
 * lost request (the completer counts retry_cnt, IBV_WC_RETRY_EXC_ERR).
 */
#ifndef FE_ROCE_H
#define FE_ROCE_H

#include "fp_engine.h"
#include "transport.h"

/* The receive dispatcher, installed once by hca.c (the room calls nothing
 * above it by name). */
void fe_roce_work(const struct fe_xport_work *work);
/* Whether QP qp's packets travel on the wire: its device is a RoCE device
 * and its type one the wire carries (RC, UC, UD). */
bool fe_roce_on(const struct fe_qp *qp);
/*
 * The requester's XMIT on the wire: pkt (its data in pkt->pieces) to the
 * QP's destination (dgid: RC and UC the QP's path, UD the WR's address),
 * in packets of the path MTU. The first try of a message takes its PSNs
 * (kept in sent); a retry sends the same PSNs again. Reliable: sent->id
 * names the request whose answer comes through the dispatcher. 0 or an
 * errno (no socket: the request is lost).
 */
int fe_roce_send(struct fe_qp *r, struct fe_sent *sent, const struct fp_packet *pkt,
		 const uint8_t dgid[16], bool reliable);
/* A modify set the QP's send or receive PSN (IBV_QP_SQ_PSN, IBV_QP_RQ_PSN). */
void fe_roce_psn(struct fe_qp *qp, bool rq, uint32_t psn);
/* The QP is reset or destroyed: its wire state goes. */
void fe_roce_qp_free(struct fe_qp *qp);
/* A verb serves what the wire brought and the ACK timers that ran out
 * (under the plugin lock), as the inboxes are served inline. */
void fe_roce_progress(void);

#endif /* FE_ROCE_H */
