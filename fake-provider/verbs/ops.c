/* SPDX-License-Identifier: MIT */
/*
 * Per-op bookkeeping shared by every op of the plugin (lock, the fault
 * decision, the trace line, scripted events) and asynchronous events:
 * records written to the context's async pipe, the uverbs way (driver.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fp_verbs.h"

void fp__event_raise(struct fp_context *ctx, enum ibv_event_type type, uint64_t element)
{
	struct verbs_async_event_desc d = {
		.element = element,
		.event_type = (uint32_t)type,
	};

	if (!ctx || ctx->async_wfd < 0)
		return;
	/* The write end is non-blocking: a full pipe loses the event rather
	 * than deadlocking an op that holds the plugin lock. */
	if (write(ctx->async_wfd, &d, sizeof(d)) != (ssize_t)sizeof(d))
		fp_trace(fp__script, "async_event %d lost: %s", (int)type, strerror(errno));
	else
		fp_trace(fp__script, "async_event %s element=%#llx",
			 ibv_event_type_str(type), (unsigned long long)element);
}

/* LIFE-08: an event on a real QP reaches every handle, each on its own fd. */
void fp__qp_event(struct fp_rqp *real, enum ibv_event_type type)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &real->handles) {
		struct fp_qp *h = fp_container_of(p, struct fp_qp, real_link);

		fp__event_raise(h->ctx, type, fp__quirk(FP_Q_QP_EVENT_NO_ELEMENT) ? 0 :
					      (uint64_t)(uintptr_t)&h->vqp.qp);
	}
}

void fp__tgt_qp_event(struct fp_qp *h, enum ibv_event_type type)
{
	int err = fk_event_raise(h->ctx->fk, h->fk_handle, type);

	if (err)
		fp_trace(fp__script, "event %s on qpn %u: %d", ibv_event_type_str(type),
			 h->real->e.qpn, err);
	else if (fp_event_errs_qp(type))
		h->real->e.state = IBV_QPS_ERR;		/* the daemon did the same */
}

static void *fp_last(struct fp_link *head, size_t off)
{
	return fp_list_empty(head) ? NULL : (char *)head->prev - off;
}

static void fp_raise_rule(struct fp_context *ctx, const struct fp_event_rule *r,
			  enum fp_subj kind, void *subj)
{
	struct fp_qp *qp = kind == FP_SUBJ_QP ? subj : NULL;
	struct fp_cq *cq = kind == FP_SUBJ_CQ ? subj : NULL;
	struct fp_srq *srq = kind == FP_SUBJ_SRQ ? subj : NULL;

	/* An event needs an object of its kind: the op's subject, else the
	 * context's newest one. */
	switch (fp_event_obj(r->type)) {
	case FP_EV_QP:
		if (!qp && ctx)
			qp = fp_last(&ctx->qps, offsetof(struct fp_qp, link));
		if (!qp)
			break;
		if (qp->real->e.type == IBV_QPT_XRC_RECV && !fp__quirk(FP_Q_QP_EVENT_NO_ELEMENT)) {
			fp__tgt_qp_event(qp, r->type);
			return;
		}
		fp__qp_event(qp->real, r->type);
		if (fp_event_errs_qp(r->type))
			fe_qp_set_error(&qp->real->e);
		return;
	case FP_EV_CQ:
		if (!cq && ctx)
			cq = fp_last(&ctx->cqs, offsetof(struct fp_cq, link));
		if (!cq)
			break;
		fp__event_raise(cq->ctx, r->type, (uint64_t)(uintptr_t)&cq->vcq.cq);
		return;
	case FP_EV_SRQ:
		if (!srq && ctx)
			srq = fp_last(&ctx->srqs, offsetof(struct fp_srq, link));
		if (!srq)
			break;
		fp__event_raise(srq->ctx, r->type, (uint64_t)(uintptr_t)&srq->vsrq.srq);
		return;
	case FP_EV_DEV:
		fp__event_raise(ctx, r->type, 0);
		return;
	case FP_EV_PORT:
		fp__event_raise(ctx, r->type, (uint64_t)(r->port > 0 ? r->port : 1));
		return;
	}
	fp_trace(fp__script, "event %s: no object to raise it on",
		 ibv_event_type_str(r->type));
}

void fp__op_end_slow(struct fp_context *ctx, enum fp_op op, enum fp_subj kind,
		     void *subj, int ret, const char *fmt, ...)
{
	struct fp_event_rule *due[FP_MAX_EVENTS];
	char args[512];
	va_list ap;
	int n, i;

	/* the data path pays for the line only when a trace is asked for */
	if (fp__script->trace_path[0]) {
		va_start(ap, fmt);
		vsnprintf(args, sizeof(args), fmt, ap);
		va_end(ap);
		fp_trace(fp__script, "%s(%s) = %d", fp_op_name(op), args, ret);
	}

	n = fp_events_due(fp__script, op, due, FP_MAX_EVENTS);
	for (i = 0; i < n; i++)
		fp_raise_rule(ctx, due[i], kind, subj);
	fe_unlock();
}

/* ---- what the engine tells software --------------------------------------- */
static void fp_up_cq_notify(struct fe_cq *e)
{
	struct fp_cq *cq = fp_cq_of(e);

	if (cq->channel)
		verbs_comp_channel_notify(cq->channel, &cq->vcq.cq);
}

static void fp_up_cq_overrun(struct fe_cq *e)
{
	struct fp_cq *cq = fp_cq_of(e);

	fp__event_raise(cq->ctx, IBV_EVENT_CQ_ERR, (uint64_t)(uintptr_t)&cq->vcq.cq);
}

static void fp_up_srq_limit(struct fe_srq *e)
{
	struct fp_srq *srq = fp_srq_of(e);

	fp__event_raise(srq->ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
			(uint64_t)(uintptr_t)&srq->vsrq.srq);
}

static void fp_up_qp_event(struct fe_qp *e, enum ibv_event_type type)
{
	fp__qp_event(fp_rqp_of(e), type);
}

static const struct fe_upcalls fp_upcalls = {
	.cq_notify = fp_up_cq_notify,
	.cq_overrun = fp_up_cq_overrun,
	.srq_limit = fp_up_srq_limit,
	.qp_event = fp_up_qp_event,
	.count = fp__count,
	/* the fake kernel, for the engine's data path: the daemon client */
	.fk_conn_id = fk_conn_id,
	.fk_epoch = fk_epoch,
	.fk_ring_set = fk_ring_set,
	.fk_route = fk_route,
};

/* With a fabric (IBVCT_FABRIC), packets may go to other hosts: the same
 * upcalls and the wire; without one the engine never asks. */
static const struct fe_upcalls fp_upcalls_fabric = {
	.cq_notify = fp_up_cq_notify,
	.cq_overrun = fp_up_cq_overrun,
	.srq_limit = fp_up_srq_limit,
	.qp_event = fp_up_qp_event,
	.count = fp__count,
	.fk_conn_id = fk_conn_id,
	.fk_epoch = fk_epoch,
	.fk_ring_set = fk_ring_set,
	.fk_route = fk_route,
	.fk_wire = fp__fabric_wire,
};

void fp__install_upcalls(void)
{
	fe_set_upcalls(fp__fabric_on() ? &fp_upcalls_fabric : &fp_upcalls);
}
