/* SPDX-License-Identifier: MIT */
/*
 * Inside the engine: the send queue's waiting WQEs (sq.c), shared by the
 * requester (requester.c), which sends and retries them.
 *
 * A reliable request that reaches no QP able to receive (the peer is not in
 * RTR yet, or gone: the packet is lost) is sent again when the local ACK
 * timeout (4.096 us * 2^timeout) runs out, retry_cnt times; one answered by
 * an RNR NAK, after the responder's RNR timer, rnr_retry times (7: without
 * end). Timeout 0 means no timer: the WQE waits until the QP leaves RTS.
 * Meanwhile post_send has returned, and the WQE and every later one of its
 * QP wait, in order (IBA vol 1 9.7.6.1: ACK timer and retries; 9.7.5.2.8
 * and o10-2: RNR NAK, with the responder's timer; C9-141: 7 = infinite).
 * Those due are served at the start of every op of this process and by the
 * transport's progress thread when the application calls no verb.
 */
#ifndef FP_ENGINE_SQ_H
#define FP_ENGINE_SQ_H

#include "fp_engine.h"

struct fp_swqe {
	struct fp_link link;		/* in the QP's sq_wait */
	struct fp_swr s;
	uint64_t seq, len;
	enum ibv_wc_status local;	/* a local error found at post time */
	char *buf;			/* the gathered payload */
	struct fp_packet pkt;
	long long due;			/* CLOCK_MONOTONIC ns; 0: once the one ahead is done */
	int retry_left, rnr_left;	/* -1: without end */
};

long long fe_now_ns(void);
/* The send CQE of a WQE (none for a quiet success: retired with the next
 * signaled CQE that is polled). */
void fe_sq_complete(struct fe_qp *r, const struct fp_swr *s, uint64_t seq,
		    enum ibv_wc_status st, uint32_t byte_len);
void fe_swqe_free(struct fp_swqe *w);
/* The QPs of this process that have waiting WQEs (struct fe_qp.retry_link). */
struct fp_link *fe_sq_retry_qps(void);
/* Whether any QP waits (cheap: no fork check). */
bool fe_sq_waiting(void);
void fe_sq_wait_add(struct fe_qp *r, struct fp_swqe *w);
void fe_sq_due_update(void);

#endif /* FP_ENGINE_SQ_H */
