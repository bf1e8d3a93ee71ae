/* SPDX-License-Identifier: MIT */
/*
 * Inside the engine: the send queue's outstanding WQEs (sq.c), shared by
 * the requester (requester.c), which sends and retries them, and the
 * completer (completer.c), which answers and completes them.
 *
 * A WQE stays in its QP's queue, in post order, from its post until it
 * completes: waiting to be sent (WAIT), on its way to another process
 * (SENT: its response completes it), or answered (DONE) but behind one
 * that is not, since a send queue completes in order. A reliable request
 * that reaches no QP able to receive (the peer is not in RTR yet, or gone:
 * the packet is lost) is sent again when the local ACK timeout (4.096 us *
 * 2^timeout) runs out, retry_cnt times; one answered by an RNR NAK, after
 * the responder's timer, rnr_retry times (7: without end; retry_cnt 7
 * too on a device with rxe's rules: requester.c). Timeout 0 means no
 * timer: the WQE waits until the QP leaves RTS. The later WQEs already
 * sent go back to WAIT and follow it again, in order (IBA vol 1
 * 9.7.6.1: ACK timer and retries; 9.7.5.2.8 and o10-2: RNR NAK, with the
 * responder's timer; C9-141: 7 = infinite). What is due is served at the
 * start of every op of this process and by the transport's progress thread
 * when the application calls no verb.
 */
#ifndef FP_ENGINE_SQ_H
#define FP_ENGINE_SQ_H

#include "fp_engine.h"
#include "transport.h"

#define FP_SWQE_SGE	4		/* SGEs kept in the WQE itself; more are allocated */
#define FP_SWQE_KEEP	4096		/* the inline buffer a spare WQE keeps, at most */
#define FP_PEER_CHECK_NS	20000000LL	/* how often a request on its way looks at its peer */
#define FP_BUSY_NS		20000LL		/* a full inbox: try again this much later */

enum fp_swqe_state { FP_SWQE_WAIT, FP_SWQE_SENT, FP_SWQE_DONE };

struct fp_swqe {
	struct fp_link link;		/* in the QP's sq_wait, or its sq_free */
	struct fp_swr s;		/* s.sg_list: the copy below, not the caller's */
	struct ibv_sge sge[FP_SWQE_SGE];
	struct fp_piece pc_in[FP_SWQE_SGE];
	struct fp_piece *pc;		/* s.num_sge of them: pc_in, or after s.sg_list */
	uint64_t seq, len;
	enum ibv_wc_status local;	/* a local error found at post time */
	char *buf;			/* inline data, copied at post time (buf_cap bytes) */
	uint64_t buf_cap;
	struct fp_packet pkt;
	enum fp_swqe_state state;
	long long due;			/* WAIT: when to send (0: once the one ahead went);
					 * SENT: when to look at the peer again */
	long long sent_at;
	struct fe_sent sent;		/* SENT: where it went, its request id */
	bool rerouted;			/* sent again through a fresh route already */
	long long busy_check;		/* BUSY: when to look whether the peer is gone */
	uint64_t gone_mark;		/* SENT, its peer seen gone: lost once the inbox's drain
					 * count reaches this (requester.c); 0: not seen */
	enum ibv_wc_status result;	/* DONE */
	int retry_left, rnr_left;	/* -1: without end */
};

/* The completer (completer.c): an answer to w (or its absence: FP_ACK_NO_PATH),
 * then the answered WQEs at the head of the queue complete in order; with w,
 * that one first, answered and behind nothing (not queued). */
void fe_comp_answer(struct fe_qp *r, struct fp_swqe *w, const struct fp_response *resp);
void fe_comp_retire(struct fe_qp *r, struct fp_swqe *w);
/* A response that arrived for a request of r (id: the request's, as the
 * transport named it), from the receive dispatcher (recv.c). */
void fe_comp_response(struct fe_qp *r, uint64_t id, const struct fp_response *resp);
/* The send CQE of a WQE (none for a quiet success: retired with the next
 * signaled CQE that is polled); sq.c, under the completer and the flush. */
void fe_sq_complete(struct fe_qp *r, const struct fp_swr *s, uint64_t seq,
		    enum ibv_wc_status st, uint32_t byte_len);
/* A WQE for the QP (from its spares), its SGEs copied from s; NULL: no memory. */
struct fp_swqe *fe_swqe_get(struct fe_qp *r, const struct fp_swr *s);
void fe_swqe_put(struct fe_qp *r, struct fp_swqe *w);
/* Room for len bytes of inline data in w->buf: 0 or ENOMEM. */
int fe_swqe_buf(struct fp_swqe *w, uint64_t len);
/* w's retry_cnt and rnr_retry budgets, full (sq.c: the rules for 7): at
 * post, and when an answer shows progress (completer.c ERROR_RETRY). */
void fe_swqe_budget(struct fe_qp *r, struct fp_swqe *w);
/* The QPs of this process that have outstanding WQEs (struct fe_qp.retry_link). */
struct fp_link *fe_sq_retry_qps(void);
/* Whether any QP has (cheap: no fork check). */
bool fe_sq_waiting(void);
void fe_sq_wait_add(struct fe_qp *r, struct fp_swqe *w);
/* The QP's queue is empty: it leaves the list (and is drained, in SQD). */
void fe_sq_done(struct fe_qp *r);
void fe_sq_due_update(void);
/* Free the spare WQEs of a QP that goes. */
void fe_sq_release(struct fe_qp *r);
/* w may sit unexecuted in the inbox it went to, and nobody waits for its
 * answer: PLACE waits until that inbox's owner has executed up to it. */
void fe_sq_unanswered(struct fe_qp *r, const struct fp_swqe *w);

#endif /* FP_ENGINE_SQ_H */
