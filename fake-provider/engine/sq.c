/* SPDX-License-Identifier: MIT */
/*
 * The send queue of the QP engine: the WQEs that wait, in order, for a
 * retransmission, the QPs of this process that have any and the earliest
 * due time, their storage, their CQEs, and their flush when the QP leaves
 * RTS. The completer (completer.c) decides when a WQE completes; the CQE is
 * made here, so that a flush needs nothing above the send queue.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fp_engine.h"
#include "sq.h"

/* The QPs of this process that have waiting WQEs, and the earliest due time. */
static struct fp_link fp_sq_retry_qps = FP_LIST_HEAD_INIT(fp_sq_retry_qps);
static long long fp_sq_due;
static pid_t fp_sq_pid;

struct fp_swqe *fe_swqe_get(struct fe_qp *r, const struct fp_swr *s)
{
	struct fp_swqe *w;
	struct ibv_sge *sgl = NULL;

	/* more SGEs than a WQE holds: their copy and their pieces, in one */
	if (s->num_sge > FP_SWQE_SGE) {
		sgl = malloc((size_t)s->num_sge * (sizeof(*sgl) + sizeof(struct fp_piece)));
		if (!sgl)
			return NULL;
	}
	if (!fp_list_empty(&r->sq_free)) {
		w = fp_container_of(r->sq_free.next, struct fp_swqe, link);
		fp_list_del(&w->link);
	} else {
		w = calloc(1, sizeof(*w));
		if (!w) {
			free(sgl);
			return NULL;
		}
	}
	/* everything but the packet, which the requester builds before the
	 * WQE is first sent, and the inline buffer a spare keeps */
	fp_list_init(&w->link);
	w->s = *s;
	/* the caller may reuse its SGE array once post_send returns */
	w->s.sg_list = sgl ? sgl : w->sge;
	w->pc = sgl ? (struct fp_piece *)(void *)(sgl + s->num_sge) : w->pc_in;
	if (s->num_sge > 0)
		memcpy(w->s.sg_list, s->sg_list, (size_t)s->num_sge * sizeof(*sgl));
	w->seq = w->len = 0;
	w->local = IBV_WC_SUCCESS;
	w->state = FP_SWQE_WAIT;
	w->due = w->sent_at = w->busy_check = 0;
	w->gone_mark = 0;
	memset(&w->sent, 0, sizeof(w->sent));
	w->rerouted = false;
	w->result = IBV_WC_SUCCESS;
	w->retry_left = w->rnr_left = 0;
	return w;
}

int fe_swqe_buf(struct fp_swqe *w, uint64_t len)
{
	char *b;

	if (len <= w->buf_cap)
		return 0;
	b = malloc(len);
	if (!b)
		return ENOMEM;
	free(w->buf);
	w->buf = b;
	w->buf_cap = len;
	return 0;
}

void fe_swqe_put(struct fe_qp *r, struct fp_swqe *w)
{
	/* a spare keeps a buffer of the size small messages need */
	if (w->buf_cap > FP_SWQE_KEEP) {
		free(w->buf);
		w->buf = NULL;
		w->buf_cap = 0;
	}
	if (w->s.sg_list != w->sge)
		free(w->s.sg_list);
	w->s.sg_list = NULL;
	fp_list_add_tail(&r->sq_free, &w->link);
}

/* ---- completions of send WQEs ---------------------------------------------------- */
static enum ibv_wc_opcode fp_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_FLUSH:
		return IBV_WC_FLUSH;
	default:
		return IBV_WC_SEND;
	}
}

void fe_sq_complete(struct fe_qp *r, const struct fp_swr *s, uint64_t seq,
		    enum ibv_wc_status st, uint32_t byte_len)
{
	bool signaled = r->sq_sig_all || (s->send_flags & IBV_SEND_SIGNALED);
	struct ibv_wc wc;

	if (st == IBV_WC_SUCCESS && !signaled) {
		/* Retired with the next signaled CQE that is polled. */
		return;
	}
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = s->wr_id;
	wc.status = st;
	wc.opcode = fp_wc_opcode(s->opcode);
	wc.byte_len = byte_len;
	wc.qp_num = r->qpn;
	/* rxe flags the send side of an IMM operation too (linux v6.1
	 * drivers/infiniband/sw/rxe/rxe_comp.c:411 make_send_cqe) */
	if (st == IBV_WC_SUCCESS && r->rxe_rules &&
	    (s->opcode == IBV_WR_SEND_WITH_IMM || s->opcode == IBV_WR_RDMA_WRITE_WITH_IMM))
		wc.wc_flags |= IBV_WC_WITH_IMM;
	fe_cq_push(r->scq, &wc, r, seq, false);
}

void fe_sq_release(struct fe_qp *r)
{
	while (!fp_list_empty(&r->sq_free)) {
		struct fp_swqe *w = fp_container_of(r->sq_free.next, struct fp_swqe, link);

		fp_list_del(&w->link);
		free(w->buf);
		free(w);
	}
}

void fe_sq_due_update(void)
{
	struct fp_link *p, *t;
	long long due = 0;

	fp_list_for_each_safe(p, t, &fp_sq_retry_qps) {
		struct fe_qp *r = fp_container_of(p, struct fe_qp, retry_link);

		if (r->sq_due && r->sq_due != LLONG_MAX && (!due || r->sq_due < due))
			due = r->sq_due;
	}
	__atomic_store_n(&fp_sq_due, due, __ATOMIC_RELEASE);
}

/* After fork the list names the parent's QPs, which this process must not
 * send from: start empty. */
static void fp_sq_own(void)
{
	pid_t pid = fp_self_pid();

	if (fp_sq_pid == pid)
		return;
	fp_list_init(&fp_sq_retry_qps);
	fp_sq_due = 0;
	fp_sq_pid = pid;
}

void fe_sq_wait_add(struct fe_qp *r, struct fp_swqe *w)
{
	fp_sq_own();
	if (fp_list_empty(&r->sq_wait))
		fp_list_add_tail(&fp_sq_retry_qps, &r->retry_link);
	fp_list_add_tail(&r->sq_wait, &w->link);
}

long long fe_sq_next_due(void)
{
	return __atomic_load_n(&fp_sq_due, __ATOMIC_ACQUIRE);
}

/* The QP leaves RTS: to ERR (complete: flushed, as WR_FLUSH_ERR), or to
 * RESET or destroyed (dropped, no completion). */
void fe_sq_flush(struct fe_qp *r, bool complete)
{
	while (!fp_list_empty(&r->sq_wait)) {
		struct fp_swqe *w = fp_container_of(r->sq_wait.next, struct fp_swqe, link);

		fp_list_del(&w->link);
		if (complete)
			fe_sq_complete(r, &w->s, w->seq, IBV_WC_WR_FLUSH_ERR, 0);
		fe_swqe_put(r, w);
	}
	if (!fp_list_empty(&r->retry_link))
		fp_list_del(&r->retry_link);
	r->sq_due = 0;
	fe_sq_due_update();
}


bool fe_sq_idle(const struct fe_qp *r)
{
	return fp_list_empty(&r->sq_wait);
}

struct fp_link *fe_sq_retry_qps(void)
{
	fp_sq_own();
	return &fp_sq_retry_qps;
}

bool fe_sq_waiting(void)
{
	return !fp_list_empty(&fp_sq_retry_qps);
}

void fe_sq_done(struct fe_qp *r)
{
	if (!fp_list_empty(&r->retry_link))
		fp_list_del(&r->retry_link);
	r->sq_due = 0;
	if (r->state == IBV_QPS_SQD && r->attr.en_sqd_async_notify)
		fe_up->qp_event(r, IBV_EVENT_SQ_DRAINED);
}

/* w went to an inbox and the requester stops waiting for its answer there
 * (given up as lost, sent back to WAIT, or unreliable and done when
 * pushed): it may still sit there unexecuted, so nothing of the QP is
 * placed until that inbox's owner has executed up to it (requester.c,
 * fe_req_may_place). An answered request needs no mark: its answer says it
 * was executed. */
void fe_sq_unanswered(struct fe_qp *r, const struct fp_swqe *w)
{
	if (!w->sent.peer)
		return;
	r->sq_xmit_peer = w->sent.peer;
	r->sq_xmit_mark = w->sent.mark;
}

/*
 * The retry budget: at post, and again whenever an answer shows progress.
 * retry_cnt 7 is a count, not "for ever": IBA vol 1 9.7.6.1 gives the
 * transport timer's count no infinite value (only the RNR retry count's 7
 * is, C9-141), and mlx4 and mlx5 hand it to the HCA as is (linux v6.1
 * drivers/infiniband/hw/mlx4/qp.c __mlx4_ib_modify_qp params1, mlx5/qp.c
 * __mlx5_ib_modify_qp qpc.retry_count). rxe never counts down at 7 (linux
 * v6.1 and v6.12 rxe_comp.c rxe_completer, COMPST_ERROR_RETRY: only a
 * count that is not 7 goes down), whatever lost the message: -1, without
 * end.
 */
void fe_swqe_budget(struct fe_qp *r, struct fp_swqe *w)
{
	w->retry_left = r->rxe_rules && r->attr.retry_cnt == 7 ? -1 : r->attr.retry_cnt;
	w->rnr_left = r->attr.rnr_retry == 7 ? -1 : r->attr.rnr_retry;
	if (w->rnr_left >= 0 && fp__quirk(FP_Q_RNR_RETRY_ONE_MORE))
		w->rnr_left++;
}
