/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous events: records (struct verbs_async_event_desc) read from
 * ctx->async_fd and turned into ibv_async_event naming the application's
 * objects; per-object counts of events handed out and acknowledged, and
 * the wait a destroy does until they match (LIFE-09). Also, for a legacy
 * provider, the way back from the provider's objects its events name (async
 * and completion events) to the wrappers the application holds: events are
 * the one path the compat layer does not wrap (the provider writes them
 * itself), so the core translates them here.
 */
#include <unistd.h>

#include "ri.h"

/* Which element an event names (rdma-core v44.0 libibverbs/device.c:452-496,
 * ibv_get_async_event). */
enum ri_elem ri__event_elem(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return RI_ELEM_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return RI_ELEM_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return RI_ELEM_SRQ;
	case IBV_EVENT_WQ_FATAL:
		return RI_ELEM_WQ;
	case IBV_EVENT_DEVICE_FATAL:
		return RI_ELEM_DEVICE;
	default:
		return RI_ELEM_PORT;
	}
}

static uint32_t *ri_reported(void *obj, enum ri_elem e)
{
	switch (e) {
	case RI_ELEM_CQ:
		return &ri_container_of(obj, struct verbs_cq, cq)->core.events_reported;
	case RI_ELEM_QP:
		return &ri_container_of(obj, struct verbs_qp, qp)->core.events_reported;
	case RI_ELEM_SRQ:
		return &ri_container_of(obj, struct verbs_srq, srq)->core.events_reported;
	default:
		return NULL;
	}
}

static pthread_mutex_t *ri_obj_mutex(void *obj, enum ri_elem e)
{
	switch (e) {
	case RI_ELEM_CQ:
		return &((struct ibv_cq *)obj)->mutex;
	case RI_ELEM_QP:
		return &((struct ibv_qp *)obj)->mutex;
	case RI_ELEM_SRQ:
		return &((struct ibv_srq *)obj)->mutex;
	default:
		return NULL;
	}
}

/*
 * A legacy provider names its own objects; the compat layer left in each a
 * back-pointer to the application's wrapper (COMPAT-13).
 */
static void *ri_legacy_app_obj(void *real, enum ri_elem e)
{
	switch (e) {
	case RI_ELEM_CQ:
		return ((struct ibv_cq *)real)->cq_context;
	case RI_ELEM_QP:
		return ((struct ibv_qp *)real)->qp_context;
	case RI_ELEM_SRQ:
		return ((struct ibv_srq *)real)->srq_context;
	default:
		return NULL;
	}
}

struct ibv_cq *ri__event_cq(struct ibv_context *ctx, struct ibv_cq *cq)
{
	if (!ri__priv(ctx)->legacy)
		return cq;
	return ri_legacy_app_obj(cq, RI_ELEM_CQ);
}

/* The 1.1 provider's hook run once an async event was read; it sees the
 * provider's own objects. */
static void ri_legacy_async_hook(struct ibv_context *ctx,
				 struct ibv_async_event *ev)
{
	struct ibv_legacy_context_ops *lops =
		ibv_legacy_context_ops(ri__priv(ctx)->real_ctx);

	if (lops->async_event)
		lops->async_event(ev);
}

/* Returns 0 or a positive errno, which is also stored in errno. */
__typeof__(ibv_get_async_event) ri_v11_get_async_event;
RI_EXPORT int ri_v11_get_async_event(struct ibv_context *context,
				  struct ibv_async_event *event)
{
	struct verbs_async_event_desc d;
	enum ri_elem e;
	void *obj = NULL;
	ssize_t n;
	int ret;

	if (!context || !event) {
		ret = EINVAL;
		goto err;
	}
	do
		n = read(context->async_fd, &d, sizeof(d));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(d)) {
		ret = n < 0 ? errno : EIO;	/* EAGAIN on an O_NONBLOCK fd */
		goto err;
	}
	event->event_type = (enum ibv_event_type)d.event_type;
	e = ri__event_elem(event->event_type);
	switch (e) {
	case RI_ELEM_PORT:
		event->element.port_num = (int)d.element;
		break;
	case RI_ELEM_DEVICE:
		event->element.port_num = 0;
		break;
	default:
		obj = (void *)(uintptr_t)d.element;
		event->element.qp = obj;	/* any member of the union */
		break;
	}
	if (ri__priv(context)->legacy) {
		ri_legacy_async_hook(context, event);
		if (obj && e != RI_ELEM_WQ) {
			obj = ri_legacy_app_obj(obj, e);
			event->element.qp = obj;
		}
	}
	if (obj && ri_reported(obj, e)) {
		pthread_mutex_lock(ri_obj_mutex(obj, e));
		(*ri_reported(obj, e))++;
		pthread_mutex_unlock(ri_obj_mutex(obj, e));
	}
	return 0;

err:
	errno = ret;
	return ret;
}

/* The context an event's object belongs to; NULL for port/device events. */
static struct ibv_context *ri_event_ctx(struct ibv_async_event *event,
					enum ri_elem e)
{
	switch (e) {
	case RI_ELEM_CQ:
		return event->element.cq->context;
	case RI_ELEM_QP:
		return event->element.qp->context;
	case RI_ELEM_SRQ:
		return event->element.srq->context;
	default:
		return NULL;
	}
}

__typeof__(ibv_ack_async_event) ri_v11_ack_async_event;
RI_EXPORT void ri_v11_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_context *ctx;
	pthread_mutex_t *mutex;
	uint32_t *completed;
	pthread_cond_t *cond;
	enum ri_elem e;

	if (!event)
		return;
	e = ri__event_elem(event->event_type);
	ctx = ri_event_ctx(event, e);
	/* tell the provider first: once counted, a destroy may free the object */
	if (ctx)
		(void)ri__ops(ctx)->ack_async_event(event);
	switch (e) {
	case RI_ELEM_CQ:
		mutex = &event->element.cq->mutex;
		cond = &event->element.cq->cond;
		completed = &event->element.cq->async_events_completed;
		break;
	case RI_ELEM_QP:
		mutex = &event->element.qp->mutex;
		cond = &event->element.qp->cond;
		completed = &event->element.qp->events_completed;
		break;
	case RI_ELEM_SRQ:
		mutex = &event->element.srq->mutex;
		cond = &event->element.srq->cond;
		completed = &event->element.srq->events_completed;
		break;
	default:
		return;
	}
	pthread_mutex_lock(mutex);
	(*completed)++;
	pthread_cond_broadcast(cond);
	/* nothing of the object may be touched after this unlock */
	pthread_mutex_unlock(mutex);
}

void ri__wait_events_qp(struct ibv_qp *qp)
{
	struct verbs_qp *vqp = ri_container_of(qp, struct verbs_qp, qp);

	pthread_mutex_lock(&qp->mutex);
	while (qp->events_completed != vqp->core.events_reported)
		pthread_cond_wait(&qp->cond, &qp->mutex);
	pthread_mutex_unlock(&qp->mutex);
}

void ri__wait_events_srq(struct ibv_srq *srq)
{
	struct verbs_srq *vsrq = ri_container_of(srq, struct verbs_srq, srq);

	pthread_mutex_lock(&srq->mutex);
	while (srq->events_completed != vsrq->core.events_reported)
		pthread_cond_wait(&srq->cond, &srq->mutex);
	pthread_mutex_unlock(&srq->mutex);
}

void ri__wait_events_cq(struct ibv_cq *cq)
{
	struct verbs_cq *vcq = ri_container_of(cq, struct verbs_cq, cq);

	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != vcq->core.comp_events_reported ||
	       cq->async_events_completed != vcq->core.events_reported)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_ack_async_event, ibv_ack_async_event@@IBVERBS_1.1);
RI_SYMVER(ri_v11_get_async_event, ibv_get_async_event@@IBVERBS_1.1);
