/* SPDX-License-Identifier: MIT */
/*
 * Completion channels and CQs. A channel is a pipe: the read end is the
 * pollable channel->fd the application sees; providers report a
 * completion event with verbs_comp_channel_notify(), which writes the
 * provider's CQ pointer to the write end. ibv_get_cq_event() reads it and
 * names the application's CQ (for a legacy provider, through the
 * back-pointer the compat layer left in the provider's CQ).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ri.h"

struct ri_channel {
	struct ibv_comp_channel ch;
	int wfd;
	pthread_mutex_t lock;		/* guards ch.refcnt */
};

static struct ri_channel *ri_chan(struct ibv_comp_channel *ch)
{
	return ri_container_of(ch, struct ri_channel, ch);
}

static struct verbs_cq *ri_vcq(struct ibv_cq *cq)
{
	return ri_container_of(cq, struct verbs_cq, cq);
}

RI_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct ri_channel *c;
	int fds[2];

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto err_nomem;
	if (pipe2(fds, O_CLOEXEC))
		goto err_free_c;
	/* a provider thread must never block on a full pipe */
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK))
		goto err_close;
	c->ch.context = context;
	c->ch.fd = fds[0];
	c->ch.refcnt = 0;
	c->wfd = fds[1];
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;

err_close:
	close(fds[0]);
	close(fds[1]);
err_free_c:
	free(c);
	return NULL;
err_nomem:
	errno = ENOMEM;
	return NULL;
}

RI_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ri_channel *c;
	int ret = 0;

	if (!channel)
		return EINVAL;
	c = ri_chan(channel);
	pthread_mutex_lock(&c->lock);
	if (channel->refcnt)
		ret = EBUSY;		/* CQs still report to it */
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	close(channel->fd);
	close(c->wfd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

RI_EXPORT int verbs_comp_channel_notify(struct ibv_comp_channel *channel,
					struct ibv_cq *cq)
{
	uint64_t v = (uintptr_t)cq;

	if (!channel || !cq)
		return EINVAL;
	/* 8 bytes < PIPE_BUF: atomic even with several writers */
	if (write(ri_chan(channel)->wfd, &v, sizeof(v)) != sizeof(v))
		return errno ? errno : EIO;
	return 0;
}

/* Returns 0 or a positive errno, which is also stored in errno. */
__typeof__(ibv_get_cq_event) ri_v11_get_cq_event;
RI_EXPORT int ri_v11_get_cq_event(struct ibv_comp_channel *channel,
			       struct ibv_cq **cq, void **cq_context)
{
	struct ibv_context *ctx;
	struct ibv_cq *c;
	uint64_t v;
	ssize_t n;
	int ret;

	if (!channel || !cq || !cq_context) {
		ret = EINVAL;
		goto err;
	}
	do
		n = read(channel->fd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(v)) {
		ret = n < 0 ? errno : EIO;	/* EAGAIN on an O_NONBLOCK fd */
		goto err;
	}
	c = (struct ibv_cq *)(uintptr_t)v;
	ctx = channel->context;
	c = ri__event_cq(ctx, c);
	ri__ops(ctx)->cq_event(c);
	pthread_mutex_lock(&c->mutex);
	ri_vcq(c)->core.comp_events_reported++;
	pthread_mutex_unlock(&c->mutex);
	*cq = c;
	*cq_context = c->cq_context;
	return 0;

err:
	errno = ret;
	return ret;
}

__typeof__(ibv_ack_cq_events) ri_v11_ack_cq_events;
RI_EXPORT void ri_v11_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!cq)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* What verbs_init_cq fills (rdma-core v44.0 libibverbs/device.c:160). */
static void ri_cq_init(struct ibv_cq *cq, struct ibv_context *context,
		       struct ibv_comp_channel *channel, void *cq_context)
{
	cq->context = context;
	cq->channel = channel;
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	memset(&ri_vcq(cq)->core, 0, sizeof(ri_vcq(cq)->core));
	if (channel) {
		pthread_mutex_lock(&ri_chan(channel)->lock);
		channel->refcnt++;
		pthread_mutex_unlock(&ri_chan(channel)->lock);
	}
}

__typeof__(ibv_create_cq) ri_v11_create_cq;
RI_EXPORT struct ibv_cq *ri_v11_create_cq(struct ibv_context *context, int cqe,
				       void *cq_context,
				       struct ibv_comp_channel *channel,
				       int comp_vector)
{
	struct ibv_cq *cq;

	if (!context || cqe < 1 || comp_vector < 0 ||
	    (context->num_comp_vectors > 0 &&
	     comp_vector >= context->num_comp_vectors) ||
	    (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	cq = ri__ops(context)->create_cq(context, cqe, channel, comp_vector);
	if (cq)
		ri_cq_init(cq, context, channel, cq_context);
	return cq;
}

/* The slot of the header's inline ibv_create_cq_ex (rdma-core v44.0
 * libibverbs/device.c:181 __lib_ibv_create_cq_ex): the library's own
 * wc_flags check, the driver's op, then the core's fields. A provider
 * without the op answers EOPNOTSUPP (dummy_ops.c create_cq_ex). */
struct ibv_cq_ex *ri__create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cq;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	if (attr && (attr->wc_flags & ~(uint64_t)IBV_CREATE_CQ_SUP_WC_FLAGS)) { /* @rule CQX-01 */
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = ri__ops(context)->create_cq_ex(context, attr);
	if (cq && attr)
		ri_cq_init(ibv_cq_ex_to_cq(cq), context, attr->channel, attr->cq_context);
	return cq;
}

__typeof__(ibv_resize_cq) ri_v11_resize_cq;
RI_EXPORT int ri_v11_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (!cq || cqe < 1)
		return EINVAL;
	return ri__ops(cq->context)->resize_cq(cq, cqe);
}

__typeof__(ibv_destroy_cq) ri_v11_destroy_cq;
RI_EXPORT int ri_v11_destroy_cq(struct ibv_cq *cq)
{
	struct ibv_comp_channel *channel;
	int ret;

	if (!cq)
		return EINVAL;
	channel = cq->channel;
	/* the wait for acknowledged events is the command layer's
	 * (verbs_cmd_destroy_cq), once the kernel destroyed the CQ */
	ret = ri__ops(cq->context)->destroy_cq(cq);
	if (!ret && channel) {
		pthread_mutex_lock(&ri_chan(channel)->lock);
		channel->refcnt--;
		pthread_mutex_unlock(&ri_chan(channel)->lock);
	}
	return ret;
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_ack_cq_events, ibv_ack_cq_events@@IBVERBS_1.1);
RI_SYMVER(ri_v11_create_cq, ibv_create_cq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_destroy_cq, ibv_destroy_cq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_get_cq_event, ibv_get_cq_event@@IBVERBS_1.1);
RI_SYMVER(ri_v11_resize_cq, ibv_resize_cq@@IBVERBS_1.1);
