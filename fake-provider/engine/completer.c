/* SPDX-License-Identifier: MIT */
/*
 * The completer: two runs of one state machine over a QP's send queue (its
 * WQEs and their states: sq.h). An answer to one WQE (the responder's, at
 * once or through the transport later, or the absence of one) makes it
 * answered with a result (WQE_DONE) or has it wait for another try (RETRY);
 * then the answered WQEs at the head of the queue complete in post order
 * (GET_WQE, COMPLETE), and a failed one moves the QP to ERR (ERROR), which
 * flushes the rest. Each state is a small function returning the next;
 * with `trace FILE states` in the script each run writes the states it went
 * through. The shape is the kernel's rxe completer (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_comp.c: enum comp_state, rxe_completer);
 * the retry rules are in sq.h.
 *
 *   an ACK          CHECK_ACK [READ | ATOMIC] WQE_DONE
 *   a NAK           CHECK_ACK WQE_DONE (its error)
 *   an RNR NAK      CHECK_ACK RNR_RETRY RETRY (or WQE_DONE once rnr_retry is used up)
 *   no answer       CHECK_ACK LOST [REROUTE | ERROR_RETRY] RETRY (or WQE_DONE)
 *   a full inbox    CHECK_ACK BUSY (or LOST once its owner is gone)
 *   refused behind a NAKed request   CHECK_ACK NAK_SEQ
 *   retiring        GET_WQE COMPLETE GET_WQE ... DRAINED (or ERROR)
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fp_engine.h"
#include "sq.h"
#include "transport.h"

#define FE_COMP_STATES(X)						\
	X(CHECK_ACK)		/* what the answer says */		\
	X(BUSY)			/* the peer's inbox was full: again soon */ \
	X(NAK_SEQ)		/* refused behind a NAKed request: follow it */ \
	X(LOST)			/* no answer will come */		\
	X(REROUTE)		/* a remembered route: ask the daemon again */ \
	X(ERROR_RETRY)		/* the ACK timer ran out: retry_cnt */	\
	X(RNR_RETRY)		/* an RNR NAK: rnr_retry, the responder's timer */ \
	X(RETRY)		/* wait for another try; later WQEs go back too */ \
	X(READ)			/* the READ response into the WQE's SGEs */ \
	X(ATOMIC)		/* the original value into the WQE's SGE */ \
	X(WQE_DONE)		/* answered: its result */		\
	X(GET_WQE)		/* the head of the queue, if answered */ \
	X(COMPLETE)		/* its CQE (none for a quiet success) */ \
	X(ERROR)		/* it failed: the QP to ERR */		\
	X(DRAINED)		/* the queue is empty */		\
	X(EXIT)

#define FE_COMP_ENUM(n)	COMP_##n,
#define FE_COMP_NAME(n)	#n,
enum fe_comp_state { FE_COMP_STATES(FE_COMP_ENUM) };
static const char *const fe_comp_name[] = { FE_COMP_STATES(FE_COMP_NAME) };

struct fe_comp {
	struct fe_qp *r;
	struct fp_swqe *w;
	const struct fp_response *resp;	/* CHECK_ACK .. WQE_DONE */
	long long wait_ns;		/* RETRY: how long (LLONG_MAX: for ever) */
	unsigned completed;		/* CQEs made (or quiet successes) */
	uint64_t seq;			/* the WQE answered, or the first completed */
};

/* IBA vol 1 table 45: the RNR NAK timer field, in microseconds. */
static const uint32_t fp_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

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

/* Where a READ's or an atomic's answer lands: every SGE a region with local
 * write of the QP's PD. rxe checks it only now, the remote side done
 * (linux v6.1 rxe_comp.c do_read, do_atomic: copy_data fails, LOC_PROT_ERR);
 * other HCAs before they send (requester.c READ_WQE). */
static bool fp_swr_lands(struct fe_qp *r, const struct fp_swr *s)
{
	int i;

	for (i = 0; i < s->num_sge; i++)
		if (s->sg_list[i].length && !fe_mr_local(r->dev, r->pd, &s->sg_list[i], true))
			return false;
	return true;
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
			fe_sq_unanswered(r, n);	/* its old copy may sit there */
			n->state = FP_SWQE_WAIT;
			n->sent.id = 0;		/* its response, if any, is stale */
			n->due = 0;
		}
		/* a bind already done runs again with its old key: it fails */
		if (r->retry_reruns_binds && n->state == FP_SWQE_DONE &&
		    n->s.opcode == IBV_WR_BIND_MW && n->result == IBV_WC_SUCCESS) {
			n->result = fe_req_failed(r, IBV_WC_MW_BIND_ERR);
			r->sq_stalled = true;
		}
	}
}

/* ---- an answer ---------------------------------------------------------------- */
FE_STATE enum fe_comp_state fe_comp_check_ack(struct fe_comp *c)
{
	struct fp_swqe *w = c->w;

	if (c->resp->status != FP_ACK_BUSY)
		w->busy_check = 0;
	switch (c->resp->status) {
	case FP_ACK_BUSY:
		return COMP_BUSY;
	case FP_NAK_SEQ:
		return COMP_NAK_SEQ;
	case FP_ACK_NO_PATH:
		return COMP_LOST;
	case FP_NAK_RNR:
		return COMP_RNR_RETRY;
	case FP_ACK_OK:
		if (w->pkt.op == FP_PKT_READ && c->resp->data)
			return COMP_READ;
		if (w->pkt.op == FP_PKT_CMP_SWAP || w->pkt.op == FP_PKT_FETCH_ADD)
			return COMP_ATOMIC;
		return COMP_WQE_DONE;
	default:
		return COMP_WQE_DONE;
	}
}

/* Full for long, and its owner gone: the request is lost. */
FE_STATE enum fe_comp_state fe_comp_busy(struct fe_comp *c)
{
	struct fp_swqe *w = c->w;
	long long now = fp_now_ns();

	if (!w->busy_check) {
		w->busy_check = now + FP_PEER_CHECK_NS;
	} else if (now >= w->busy_check) {
		w->busy_check = now + FP_PEER_CHECK_NS;
		if (w->sent.peer && !fe_peer_alive(w->sent.peer)) {
			fe_xport_forget(fe_dev_xport(c->r->dev), w->pkt.dst_qpn);
			w->sent.seg_done = 0;
			w->busy_check = 0;
			return COMP_LOST;
		}
	}
	w->state = FP_SWQE_WAIT;
	w->due = now + FP_BUSY_NS;
	return COMP_EXIT;
}

FE_STATE enum fe_comp_state fe_comp_nak_seq(struct fe_comp *c)
{
	c->w->state = FP_SWQE_WAIT;
	c->w->due = 0;
	fp_swqe_go_back(c->r, c->w);
	return COMP_EXIT;
}

FE_STATE enum fe_comp_state fe_comp_lost(struct fe_comp *c)
{
	fe_sq_unanswered(c->r, c->w);	/* it may still sit where it went */
	/* the retry counts start again at every answer that shows progress:
	 * rxe keeps them per QP and resets them on each ACK, READ response
	 * packet or atomic acknowledge that moves it on (linux v6.1 and v6.12
	 * rxe_comp.c reset_retry_counters, from check_psn and check_ack), so
	 * only retries without progress between them count; NVIDIA's HCAs
	 * fail a QP when no forward progress came within the retries
	 * (NVIDIA, Adaptive Retransmission: Algorithm & Profile Description).
	 * A WQE's completion is progress too, and each WQE starts with its
	 * own budget (requester.c); partial progress exists on the wire
	 * only (roce.c: a READ's response packets), whose loss says so. */
	if (c->resp->progress)
		fe_swqe_budget(c->r, c->w);
	if (c->w->sent.cached && !c->w->rerouted)
		return COMP_REROUTE;
	/* timeout 0: no ACK timer, the request is never given up */
	if (c->w->retry_left || !c->r->attr.timeout)
		return COMP_ERROR_RETRY;
	return COMP_WQE_DONE;
}

/* A remembered route to a QPN that moved on: ask once more, at once. */
FE_STATE enum fe_comp_state fe_comp_reroute(struct fe_comp *c)
{
	fe_xport_forget(fe_dev_xport(c->r->dev), c->w->pkt.dst_qpn);
	c->w->rerouted = true;
	c->wait_ns = 0;
	return COMP_RETRY;
}

FE_STATE enum fe_comp_state fe_comp_error_retry(struct fe_comp *c)
{
	uint8_t timeout = c->r->attr.timeout;

	c->wait_ns = c->resp->timer_ran ? 0 : timeout ? 4096LL << timeout : LLONG_MAX;
	if (c->w->retry_left > 0 && timeout)
		c->w->retry_left--;
	return COMP_RETRY;
}

/* An RNR NAK: counted, then retried while rnr_retry lasts (IBA vol 1
 * 9.7.5.2.8: N retries after the first NAK, N + 1 NAKs in all; 7 for ever). */
FE_STATE enum fe_comp_state fe_comp_rnr_retry(struct fe_comp *c)
{
	uint8_t port = c->r->attr.port_num ? c->r->attr.port_num : 1;

	fe_up->count(fe_dev_index(c->r->dev), port, FE_CNT_RCVD_RNR);
	if (!c->w->rnr_left) {	/* @rule HOST-08 */
		fe_up->count(fe_dev_index(c->r->dev), port, FE_CNT_RNR_RETRY_EXCEEDED);
		return COMP_WQE_DONE;
	}
	c->wait_ns = 1000LL * fp_rnr_us[c->resp->rnr_timer & 31];
	if (c->w->rnr_left > 0)
		c->w->rnr_left--;
	return COMP_RETRY;
}

FE_STATE enum fe_comp_state fe_comp_retry(struct fe_comp *c)
{
	struct fp_swqe *w = c->w;

	w->state = FP_SWQE_WAIT;
	w->due = c->wait_ns == LLONG_MAX ? LLONG_MAX : fp_now_ns() + c->wait_ns;
	if (!w->due)
		w->due = 1;
	fp_swqe_go_back(c->r, w);
	return COMP_EXIT;
}

/* Answered, but done here in error. */
FE_STATE enum fe_comp_state fe_comp_local_error(struct fe_comp *c, enum ibv_wc_status st)
{
	c->w->state = FP_SWQE_DONE;
	c->w->result = st;
	return COMP_EXIT;
}

/*
 * rxe's READ response lands one packet (path MTU) at a time, each piece of
 * an SGE checked as it is copied: the pieces before the first that fails
 * are in memory (linux v6.1 rxe_comp.c do_read, copy_data, rxe_mr.c
 * mr_check_range). false when one failed.
 */
static bool fp_swr_scatter_rxe(struct fe_qp *r, const struct fp_swr *s, const char *data,
			       uint32_t len)
{
	uint32_t mtu = 1u << (r->attr.path_mtu + 7), at, n;
	int i;

	for (at = 0; at < len; at += n) {
		uint64_t base = 0;

		n = len - at < mtu ? len - at : mtu;
		for (i = 0; i < s->num_sge; i++) {
			const struct ibv_sge *g = &s->sg_list[i];
			uint64_t lo = at > base ? at : base;
			uint64_t hi = at + n < base + g->length ? at + n : base + g->length;

			if (lo < hi) {
				struct ibv_sge piece = { .addr = g->addr + (lo - base),
							 .length = (uint32_t)(hi - lo), .lkey = g->lkey };
				char *p = fe_mr_local(r->dev, r->pd, &piece, true);

				if (!p)
					return false;
				memcpy(p, data + lo, hi - lo);
			}
			base += g->length;
		}
	}
	return true;
}

FE_STATE enum fe_comp_state fe_comp_read(struct fe_comp *c)
{
	if (c->r->rxe_rules) {
		if (!fp_swr_scatter_rxe(c->r, &c->w->s, c->resp->data, c->resp->len))
			return fe_comp_local_error(c, IBV_WC_LOC_PROT_ERR);
		return COMP_WQE_DONE;
	}
	fp_swr_scatter(c->r, &c->w->s, c->resp->data);
	return COMP_WQE_DONE;
}

FE_STATE enum fe_comp_state fe_comp_atomic(struct fe_comp *c)
{
	if (c->r->rxe_rules && !fp_swr_lands(c->r, &c->w->s))
		return fe_comp_local_error(c, IBV_WC_LOC_PROT_ERR);
	fp_swr_scatter(c->r, &c->w->s, (const char *)&c->resp->atomic_orig);
	return COMP_WQE_DONE;
}

FE_STATE enum fe_comp_state fe_comp_wqe_done(struct fe_comp *c)
{
	c->w->state = FP_SWQE_DONE;
	c->w->result = fp_ack_status(c->resp->status);
	return COMP_EXIT;
}

/* ---- retiring ------------------------------------------------------------------ */
FE_STATE enum fe_comp_state fe_comp_get_wqe(struct fe_comp *c)
{
	struct fe_qp *r = c->r;

	if (fp_list_empty(&r->sq_wait))
		return COMP_DRAINED;
	c->w = fp_container_of(r->sq_wait.next, struct fp_swqe, link);
	if (c->w->state != FP_SWQE_DONE)
		return COMP_EXIT;
	fp_list_del(&c->w->link);
	return COMP_COMPLETE;
}

/* The WQE leaves the queue with its CQE. */
FE_STATE enum fe_comp_state fe_comp_complete(struct fe_comp *c)
{
	struct fp_swqe *w = c->w;
	enum ibv_wc_status st = w->result;

	fe_sq_complete(c->r, &w->s, w->seq, st, st == IBV_WC_SUCCESS ? (uint32_t)w->len : 0);
	if (!c->completed++)
		c->seq = w->seq;
	fe_swqe_put(c->r, w);
	return st == IBV_WC_SUCCESS ? COMP_GET_WQE : COMP_ERROR;
}

FE_STATE enum fe_comp_state fe_comp_error(struct fe_comp *c)
{
	fe_qp_set_error(c->r);		/* later WQEs are flushed */
	return COMP_EXIT;
}

FE_STATE enum fe_comp_state fe_comp_drained(struct fe_comp *c)
{
	fe_sq_done(c->r);
	return COMP_EXIT;
}

/* ---- the machine ---------------------------------------------------------------- */
FE_STATE enum fe_comp_state
fe_comp_step(struct fe_comp *c, enum fe_comp_state s)
{
	switch (s) {
	case COMP_CHECK_ACK:	return fe_comp_check_ack(c);
	case COMP_BUSY:		return fe_comp_busy(c);
	case COMP_NAK_SEQ:	return fe_comp_nak_seq(c);
	case COMP_LOST:		return fe_comp_lost(c);
	case COMP_REROUTE:	return fe_comp_reroute(c);
	case COMP_ERROR_RETRY:	return fe_comp_error_retry(c);
	case COMP_RNR_RETRY:	return fe_comp_rnr_retry(c);
	case COMP_RETRY:	return fe_comp_retry(c);
	case COMP_READ:		return fe_comp_read(c);
	case COMP_ATOMIC:	return fe_comp_atomic(c);
	case COMP_WQE_DONE:	return fe_comp_wqe_done(c);
	case COMP_GET_WQE:	return fe_comp_get_wqe(c);
	case COMP_COMPLETE:	return fe_comp_complete(c);
	case COMP_ERROR:	return fe_comp_error(c);
	case COMP_DRAINED:	return fe_comp_drained(c);
	case COMP_EXIT:
		break;
	}
	return COMP_EXIT;
}

/* The same run, writing its path (the trace's, cold). */
static __attribute__((noinline, cold)) void fe_completer_traced(struct fe_comp *c,
								enum fe_comp_state s)
{
	struct fe_path t;

	t.n = 0;
	t.buf[0] = 0;
	while (s != COMP_EXIT) {
		fe_path_add(&t, fe_comp_name[s]);
		s = fe_comp_step(c, s);
	}
	/* a retire that completed nothing says nothing */
	if (c->resp || c->completed)
		fe_trace("comp qpn %u wqe %llu%s%s:%s", c->r->qpn, (unsigned long long)c->seq,
			 c->resp ? " " : "", c->resp ? fe_ack_name(c->resp->status) : "", t.buf);
}

/* Run the machine from s. */
FE_STATE void fe_completer(struct fe_comp *c, enum fe_comp_state s)
{
	if (fe_trace_states()) {
		fe_completer_traced(c, s);
		return;
	}
	while (s != COMP_EXIT)
		s = fe_comp_step(c, s);
}

void fe_comp_answer(struct fe_qp *r, struct fp_swqe *w, const struct fp_response *resp)
{
	struct fe_comp c = { .r = r, .w = w, .resp = resp, .seq = w->seq };

	fe_completer(&c, COMP_CHECK_ACK);
}

void fe_comp_retire(struct fe_qp *r, struct fp_swqe *w)
{
	struct fe_comp c = { .r = r, .w = w };

	fe_completer(&c, w ? COMP_COMPLETE : COMP_GET_WQE);
}

/* ---- what reaches the completer from outside ------------------------------------ */
/* A response that arrived (the receive dispatcher's, recv.c): the WQE on its
 * way that it answers, or every one a cumulative ACK covers. */
void fe_comp_response(struct fe_qp *r, uint64_t id, const struct fp_response *resp)
{
	struct fp_link *p;

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
				fe_comp_answer(r, w, resp);
			continue;
		}
		if (w->sent.id != id)
			continue;
		fe_comp_answer(r, w, resp);
		/* what it made due is sent by the next serve, not from inside
		 * the inbox's drain that brought this */
		if (w->state == FP_SWQE_WAIT) {
			r->sq_due = fp_now_ns();
			fe_sq_due_update();
		}
		break;
	}
	fe_comp_retire(r, NULL);
}

enum ibv_wc_status fe_req_failed(const struct fe_qp *r, enum ibv_wc_status st)
{
	return st != IBV_WC_SUCCESS && r->req_err_flushes ? IBV_WC_WR_FLUSH_ERR : st;
}

/*
 * A local WQE. With nothing outstanding it completes now. Behind WQEs that
 * are not answered yet it waits, answered already, for its turn: the send
 * queue completes in post order (IBA vol 1 10.8: the completions of one
 * work queue are returned in the order the WRs were posted), which the
 * completer keeps (GET_WQE). With no memory for the WQE it completes at
 * once, out of turn, rather than be lost.
 */
void fe_sq_local(struct fe_qp *r, const struct fp_swr *s, enum ibv_wc_status st)
{
	uint64_t seq = ++r->sq_posted;
	struct fp_swr q = *s;
	struct fp_swqe *w = NULL;

	st = fe_req_failed(r, st);

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
