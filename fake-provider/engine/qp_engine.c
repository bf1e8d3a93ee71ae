/* SPDX-License-Identifier: MIT */
/*
 * The QP engine's state changes: errors (flush the queues), reset (drop
 * them), the attributes a modify sets, drain notification, and what a
 * destroyed QP leaves behind in its CQs.
 */
#include <string.h>

#include "fp_engine.h"
#include "fe_mem.h"
#include "sq.h"
#include "roce.h"

/* The modify rules shared with the fake kernel (qp_modify.h), on ibv_qp_attr. */
FK_QP_MODIFY_OPS(fe_qpm, struct ibv_qp_attr)

void fe_qp_init(struct fe_qp *qp, enum ibv_qp_type type)
{
	qp->type = type;
	qp->state = IBV_QPS_RESET;
	fp_list_init(&qp->link);
	fp_list_init(&qp->sq_wait);
	fp_list_init(&qp->retry_link);
	fp_list_init(&qp->sq_free);
}

void fe_qp_flush_rq(struct fe_qp *qp)
{
	struct fp_rwqe *w;

	while (fe_rq_pop(&qp->rq, &w)) {
		struct ibv_wc wc;

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp->qpn;
		if (qp->rcq)
			fe_cq_push(qp->rcq, &wc, NULL, 0, false);
	}
}

void fe_qp_set_error(struct fe_qp *qp)
{
	if (qp->state == IBV_QPS_ERR)
		return;
	qp->state = IBV_QPS_ERR;
	fe_sq_flush(qp, true);
	fe_qp_flush_rq(qp);
	fe_mem_qp_publish(qp);
	if (qp->srq)	/* SRQ WQEs are not flushed; the consumer hears this instead */
		fe_up->qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
}

void fe_qp_reset(struct fe_qp *qp)
{
	fe_roce_qp_free(qp);
	fe_sq_flush(qp, false);
	qp->rx_blocked = false;
	qp->sq_xmit_peer = NULL;
	qp->rq.head = qp->rq.count = 0;
	qp->sq_posted = qp->sq_retired = 0;
	if (qp->scq)
		fe_cq_purge_qp(qp->scq, qp);
	if (qp->rcq && qp->rcq != qp->scq)
		fe_cq_purge_qp(qp->rcq, qp);
	memset(&qp->attr, 0, sizeof(qp->attr));
	fe_mem_qp_publish(qp);
}

void fe_qp_apply(struct fe_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	fe_qpm_apply(&qp->attr, a, (uint32_t)mask);
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = a->sq_psn;
	/* a RoCE device keeps its PSNs per packet (roce.c; nothing elsewhere) */
	if (mask & IBV_QP_SQ_PSN)
		fe_roce_psn(qp, false, a->sq_psn);
	if (mask & IBV_QP_RQ_PSN)
		fe_roce_psn(qp, true, a->rq_psn);
}

void fe_qp_sqd(struct fe_qp *qp)
{
	qp->state = IBV_QPS_SQD;
	fe_mem_qp_publish(qp);
	if (qp->attr.en_sqd_async_notify && fe_sq_idle(qp))
		fe_up->qp_event(qp, IBV_EVENT_SQ_DRAINED);
}

void fe_qp_release(struct fe_qp *qp)
{
	fe_roce_qp_free(qp);
	if (qp->scq)
		fe_cq_purge_qp(qp->scq, qp);
	if (qp->rcq && qp->rcq != qp->scq)
		fe_cq_purge_qp(qp->rcq, qp);
	fe_sq_flush(qp, false);
	fe_qp_del(qp);
	fe_sq_release(qp);
	fe_rq_free(&qp->rq);
}
