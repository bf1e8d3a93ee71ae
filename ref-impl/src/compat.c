/* SPDX-License-Identifier: MIT */
/*
 * The compat layer for legacy providers (ibv_register_driver, pre-1.1.8
 * ABI): the provider allocates a plain ibv_context and fills its 1.1 ops;
 * the application only ever sees core-allocated wrappers (a verbs_context
 * and wrapper objects pointing at the provider's objects). Each compat op
 * unwraps, calls the provider's legacy op and wraps the result. The
 * provider's objects get their *_context pointing back at the wrapper (the
 * 1.0-layer trick, COMPAT-13) so events can be translated back.
 * XRC and other extension ops stay "not supported" (COMPAT-09, RC >= v28).
 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri.h"

struct ri_cpd { struct ibv_pd pd; struct ibv_pd *real; };
struct ri_cmr { struct ibv_mr mr; struct ibv_mr *real; };
struct ri_cmw { struct ibv_mw mw; struct ibv_mw *real; };
struct ri_cah { struct ibv_ah ah; struct ibv_ah *real; };
struct ri_ccq { struct verbs_cq vcq; struct ibv_cq *real; };
struct ri_csrq { struct verbs_srq vsrq; struct ibv_srq *real; };
struct ri_cqp { struct verbs_qp vqp; struct ibv_qp *real; };

#define RI_WR_1_1_SIZE offsetof(struct ibv_send_wr, qp_type)

static struct ibv_pd *rpd(struct ibv_pd *pd)
{
	return ri_container_of(pd, struct ri_cpd, pd)->real;
}

static struct ibv_cq *rcq(struct ibv_cq *cq)
{
	return cq ? ri_container_of(cq, struct ri_ccq, vcq.cq)->real : NULL;
}

static struct ibv_srq *rsrq(struct ibv_srq *srq)
{
	return srq ? ri_container_of(srq, struct ri_csrq, vsrq.srq)->real : NULL;
}

static struct ri_cqp *cqp(struct ibv_qp *qp)
{
	return ri_container_of(qp, struct ri_cqp, vqp.qp);
}

static struct ibv_context *rctx(struct ibv_context *ctx)
{
	return ri__priv(ctx)->real_ctx;
}

static struct ibv_legacy_context_ops *lops(struct ibv_context *real_ctx)
{
	return ibv_legacy_context_ops(real_ctx);
}

/* Provider must set errno on failure; make sure a caller never sees 0. */
static void ri_errno_nonzero(void)
{
	if (!errno)
		errno = ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Device and port                                                      */

static int c_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	return lops(rctx(ctx))->query_device(rctx(ctx), a);
}

static int c_query_port(struct ibv_context *ctx, uint8_t port,
			struct ibv_port_attr *a)
{
	return lops(rctx(ctx))->query_port(rctx(ctx), port, a);
}

/* 1.1 read GIDs and P_Keys from sysfs: the legacy ops have no slot. */
static int c_query_gid(struct ibv_context *ctx, uint8_t port, int index,
		       union ibv_gid *gid)
{
	char name[64], buf[64];
	unsigned int w[8];
	int i;

	snprintf(name, sizeof(name), "ports/%u/gids/%d", port, index);
	if (ibv_read_sysfs_file(ctx->device->ibdev_path, name, buf,
				sizeof(buf)) <= 0)
		return EINVAL;
	if (sscanf(buf, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2],
		   &w[3], &w[4], &w[5], &w[6], &w[7]) != 8)
		return EINVAL;
	for (i = 0; i < 8; i++) {
		gid->raw[2 * i] = (uint8_t)(w[i] >> 8);
		gid->raw[2 * i + 1] = (uint8_t)w[i];
	}
	return 0;
}

static int c_query_pkey(struct ibv_context *ctx, uint8_t port, int index,
			__be16 *pkey)
{
	char name[64], buf[32];
	unsigned int v;

	snprintf(name, sizeof(name), "ports/%u/pkeys/%d", port, index);
	if (ibv_read_sysfs_file(ctx->device->ibdev_path, name, buf,
				sizeof(buf)) <= 0 ||
	    sscanf(buf, "%x", &v) != 1)
		return EINVAL;
	*pkey = htobe16((uint16_t)v);
	return 0;
}

/* ------------------------------------------------------------------ */
/* PD, MR, MW, AH                                                       */

static struct ibv_pd *c_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_context *real_ctx = rctx(ctx);
	struct ri_cpd *w;

	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	errno = 0;
	w->real = lops(real_ctx)->alloc_pd(real_ctx);
	if (!w->real)
		goto err_free_w;
	w->real->context = real_ctx;
	w->pd.handle = w->real->handle;
	return &w->pd;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

static int c_dealloc_pd(struct ibv_pd *pd)
{
	struct ibv_pd *real = rpd(pd);
	int ret;

	ret = lops(real->context)->dealloc_pd(real);
	if (!ret)
		free(ri_container_of(pd, struct ri_cpd, pd));
	return ret;
}

static struct ibv_mr *c_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t hca_va, int access)
{
	struct ibv_pd *real_pd = rpd(pd);
	struct ri_cmr *w;

	/* the 1.1 op cannot place the region at another I/O address */
	if (hca_va != (uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	errno = 0;
	w->real = lops(real_pd->context)->reg_mr(real_pd, addr, length, access);
	if (!w->real)
		goto err_free_w;
	w->real->context = real_pd->context;
	w->real->pd = real_pd;
	w->real->addr = addr;
	w->real->length = length;
	w->mr.handle = w->real->handle;
	w->mr.lkey = w->real->lkey;
	w->mr.rkey = w->real->rkey;
	return &w->mr;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

static int c_dereg_mr(struct ibv_mr *mr)
{
	struct ri_cmr *w = ri_container_of(mr, struct ri_cmr, mr);
	int ret;

	ret = lops(w->real->context)->dereg_mr(w->real);
	if (!ret)
		free(w);
	return ret;
}

static struct ibv_mw *c_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_pd *real_pd = rpd(pd);
	struct ri_cmw *w;

	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	errno = 0;
	w->real = lops(real_pd->context)->alloc_mw(real_pd, type);
	if (!w->real)
		goto err_free_w;
	w->real->context = real_pd->context;
	w->real->pd = real_pd;
	w->mw.rkey = w->real->rkey;
	w->mw.handle = w->real->handle;
	return &w->mw;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

static int c_dealloc_mw(struct ibv_mw *mw)
{
	struct ri_cmw *w = ri_container_of(mw, struct ri_cmw, mw);
	int ret;

	ret = lops(w->real->context)->dealloc_mw(w->real);
	if (!ret)
		free(w);
	return ret;
}

static int c_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		     struct ibv_mw_bind *bind)
{
	struct ri_cmw *w = ri_container_of(mw, struct ri_cmw, mw);
	struct ibv_mw_bind b = *bind;
	int ret;

	if (b.bind_info.mr)
		b.bind_info.mr = ri_container_of(b.bind_info.mr, struct ri_cmr,
						 mr)->real;
	ret = lops(w->real->context)->bind_mw(cqp(qp)->real, w->real, &b);
	if (!ret)
		mw->rkey = w->real->rkey;
	return ret;
}

static struct ibv_ah *c_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibv_pd *real_pd = rpd(pd);
	struct ri_cah *w;

	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	errno = 0;
	w->real = lops(real_pd->context)->create_ah(real_pd, attr);
	if (!w->real)
		goto err_free_w;
	w->real->context = real_pd->context;
	w->real->pd = real_pd;
	w->ah.handle = w->real->handle;
	return &w->ah;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

static int c_destroy_ah(struct ibv_ah *ah)
{
	struct ri_cah *w = ri_container_of(ah, struct ri_cah, ah);
	int ret;

	ret = lops(w->real->context)->destroy_ah(w->real);
	if (!ret)
		free(w);
	return ret;
}

/* ------------------------------------------------------------------ */
/* CQ                                                                   */

static struct ibv_cq *c_create_cq(struct ibv_context *ctx, int cqe,
				  struct ibv_comp_channel *channel, int vec)
{
	struct ibv_context *real_ctx = rctx(ctx);
	struct ri_ccq *w;
	struct ibv_cq *real;

	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	/* the channel is the core's: the provider hands it back to
	 * verbs_comp_channel_notify() with its own CQ */
	errno = 0;
	real = lops(real_ctx)->create_cq(real_ctx, cqe, channel, vec);
	if (!real)
		goto err_free_w;
	real->context = real_ctx;
	real->channel = channel;
	real->cq_context = &w->vcq.cq;		/* back-pointer (COMPAT-13) */
	real->comp_events_completed = 0;
	real->async_events_completed = 0;
	pthread_mutex_init(&real->mutex, NULL);
	pthread_cond_init(&real->cond, NULL);
	w->real = real;
	w->vcq.cq.cqe = real->cqe;
	w->vcq.cq.handle = real->handle;
	return &w->vcq.cq;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

static int c_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct ibv_cq *real = ri_container_of(cq, struct ri_ccq, vcq.cq)->real;

	return real->context->ops.poll_cq(real, n, wc);
}

static int c_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct ibv_cq *real = ri_container_of(cq, struct ri_ccq, vcq.cq)->real;

	return real->context->ops.req_notify_cq(real, solicited_only);
}

static void c_cq_event(struct ibv_cq *cq)
{
	struct ibv_cq *real = rcq(cq);

	lops(real->context)->cq_event(real);
}

static int c_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct ibv_cq *real = rcq(cq);
	int ret;

	ret = lops(real->context)->resize_cq(real, cqe);
	if (!ret)
		cq->cqe = real->cqe;
	return ret;
}

static int c_destroy_cq(struct ibv_cq *cq)
{
	struct ri_ccq *w = ri_container_of(cq, struct ri_ccq, vcq.cq);
	struct ibv_context *real_ctx = w->real->context;
	int ret;

	ret = lops(real_ctx)->destroy_cq(w->real);
	if (ret)
		return ret;
	verbs_cmd_destroy_cq(&w->vcq.cq);	/* its events count on the wrapper */
	free(w);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                  */

static struct ibv_srq *c_create_srq(struct ibv_pd *pd,
				    struct ibv_srq_init_attr *attr)
{
	struct ibv_pd *real_pd = rpd(pd);
	struct ibv_srq_init_attr a = {
		.srq_context = NULL, .attr = attr->attr,
	};
	struct ri_csrq *w;
	struct ibv_srq *real;

	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	a.srq_context = &w->vsrq.srq;
	errno = 0;
	real = lops(real_pd->context)->create_srq(real_pd, &a);
	if (!real)
		goto err_free_w;
	attr->attr = a.attr;			/* actual sizes back to the caller */
	real->context = real_pd->context;
	real->pd = real_pd;
	real->srq_context = &w->vsrq.srq;	/* back-pointer (COMPAT-13) */
	real->events_completed = 0;
	pthread_mutex_init(&real->mutex, NULL);
	pthread_cond_init(&real->cond, NULL);
	w->real = real;
	w->vsrq.srq.handle = real->handle;
	return &w->vsrq.srq;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

/*
 * A 1.1 provider has no create_srq_ex op: rdma-core's inline
 * ibv_create_srq_ex() routes only a basic request with comp_mask within
 * {PD, TYPE} and PD set to ibv_create_srq() (SRQX-06, COMPAT-11); anything
 * else finds no op and fails with EOPNOTSUPP, before any comp_mask check.
 */
static struct ibv_srq *c_create_srq_ex(struct ibv_context *ctx,
				       struct ibv_srq_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;

	if ((mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)) ||
	    !(mask & IBV_SRQ_INIT_ATTR_PD) ||
	    ((mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* ibv_srq_init_attr is a prefix of the _ex struct (ABI-03) */
	return c_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
}

static int c_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	struct ibv_srq *real = rsrq(srq);

	return lops(real->context)->modify_srq(real, a, mask);
}

static int c_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	struct ibv_srq *real = rsrq(srq);

	return lops(real->context)->query_srq(real, a);
}

static int c_destroy_srq(struct ibv_srq *srq)
{
	struct ri_csrq *w = ri_container_of(srq, struct ri_csrq, vsrq.srq);
	struct ibv_context *real_ctx = w->real->context;
	int ret;

	ret = lops(real_ctx)->destroy_srq(w->real);
	if (ret)
		return ret;
	verbs_cmd_destroy_srq(&w->vsrq.srq);	/* its events count on the wrapper */
	free(w);
	return 0;
}

static int c_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct ibv_srq *real = ri_container_of(srq, struct ri_csrq, vsrq.srq)->real;

	return real->context->ops.post_srq_recv(real, wr, bad);
}

/* ------------------------------------------------------------------ */
/* QP                                                                   */

static struct ibv_qp *c_create_qp(struct ibv_pd *pd,
				  struct ibv_qp_init_attr *attr)
{
	struct ibv_pd *real_pd = rpd(pd);
	struct ibv_qp_init_attr a = *attr;
	struct ri_cqp *w;
	struct ibv_qp *real;

	/* Any type goes to the provider, as libibverbs' ibv_create_qp passes
	 * every type on (rdma-core v44.0 libibverbs/verbs.c:658, and the 1.1.8
	 * routing of 6be16586e): an XRC_SEND with mask PD reaches a 1.1
	 * provider through the inline's legacy route (QPX-01), and what a
	 * driver built before XRC does with it is its own answer. */
	w = calloc(1, sizeof(*w));
	if (!w)
		goto err;
	a.qp_context = &w->vqp.qp;
	a.send_cq = rcq(attr->send_cq);
	a.recv_cq = rcq(attr->recv_cq);
	a.srq = rsrq(attr->srq);
	errno = 0;
	real = lops(real_pd->context)->create_qp(real_pd, &a);
	if (!real)
		goto err_free_w;
	attr->cap = a.cap;
	real->context = real_pd->context;
	real->qp_context = &w->vqp.qp;		/* back-pointer (COMPAT-13) */
	real->pd = real_pd;
	real->send_cq = a.send_cq;
	real->recv_cq = a.recv_cq;
	real->srq = a.srq;
	real->qp_type = attr->qp_type;
	real->state = IBV_QPS_RESET;
	real->events_completed = 0;
	pthread_mutex_init(&real->mutex, NULL);
	pthread_cond_init(&real->cond, NULL);
	w->real = real;
	w->vqp.qp.qp_num = real->qp_num;
	w->vqp.qp.handle = real->handle;
	return &w->vqp.qp;

err_free_w:
	ri_errno_nonzero();
	free(w);
err:
	return NULL;
}

/* Only mask == PD maps onto the 1.1 op (QPX-01, COMPAT-11). */
static struct ibv_qp *c_create_qp_ex(struct ibv_context *ctx,
				     struct ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask != IBV_QP_INIT_ATTR_PD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* ibv_qp_init_attr is a prefix of the _ex struct (ABI-03) */
	return c_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
}

static int c_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		      struct ibv_qp_init_attr *init)
{
	struct ibv_qp *real = cqp(qp)->real;
	int ret;

	ret = lops(real->context)->query_qp(real, a, mask, init);
	if (ret)
		return ret;
	/* the 1.1 core kept the provider object's state (QPX-09) */
	if (mask & IBV_QP_STATE)
		real->state = a->qp_state;
	/* the caller must see its own objects, never the provider's */
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->srq = qp->srq;
	return 0;
}

static int c_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp *real = cqp(qp)->real;
	int ret;

	ret = lops(real->context)->modify_qp(real, a, mask);
	if (!ret && (mask & IBV_QP_STATE))
		real->state = a->qp_state;
	return ret;
}

static int c_destroy_qp(struct ibv_qp *qp)
{
	struct ri_cqp *w = cqp(qp);
	struct ibv_context *real_ctx = w->real->context;
	int ret;

	ret = lops(real_ctx)->destroy_qp(w->real);
	if (ret)
		return ret;
	/* LIFE-09 for the wrapper: the application's events count on it (a
	 * 1.1 provider's own destroy waits on its object, which the
	 * application never holds here) */
	verbs_cmd_destroy_qp(&w->vqp.qp);
	free(w);
	return 0;
}

static int c_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad)
{
	struct ibv_qp *real = cqp(qp)->real;

	return real->context->ops.post_recv(real, wr, bad);
}

/* The provider's copy of a UD chain: the same WRs, naming its AHs. */
static struct ibv_send_wr *c_ud_copy(struct ibv_send_wr *copy,
				     const struct ibv_send_wr *wr)
{
	const struct ibv_send_wr *w;
	size_t i;

	for (w = wr, i = 0; w; w = w->next, i++) {
		/* a pre-XRC caller may own only the 72-byte prefix (WR-02) */
		size_t sz = w->opcode == IBV_WR_TSO ? sizeof(*w) : RI_WR_1_1_SIZE;

		memset(&copy[i], 0, sizeof(copy[i]));
		memcpy(&copy[i], w, sz);
		copy[i].next = w->next ? &copy[i + 1] : NULL;
		if (w->wr.ud.ah)
			copy[i].wr.ud.ah = ri_container_of(w->wr.ud.ah,
							   struct ri_cah, ah)->real;
	}
	return copy;
}

/* UD only: post the copy, and map bad_wr back onto the caller's chain. */
static int c_post_send_ud(struct ibv_qp *real, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad)
{
	struct ibv_send_wr *copy, *rbad = NULL, *w;
	size_t n = 0, pos;
	int ret = ENOMEM;

	for (w = wr; w; w = w->next)
		n++;
	copy = RI_WR_COPY_ALLOC(n, sizeof(*copy));
	if (copy)
		ret = real->context->ops.post_send(real,
						   n ? c_ud_copy(copy, wr) : NULL,
						   &rbad);
	pos = ri__wr_copy_end(copy, sizeof(*copy), n, rbad);
	if (ret)
		for (*bad = wr; pos; pos--)
			*bad = (*bad)->next;
	return ret;
}

static int c_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad)
{
	struct ibv_qp *real = cqp(qp)->real;

	if (real->qp_type == IBV_QPT_UD)
		return c_post_send_ud(real, wr, bad);
	return real->context->ops.post_send(real, wr, bad);
}

static int c_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			  uint16_t lid)
{
	struct ibv_qp *real = cqp(qp)->real;

	return lops(real->context)->attach_mcast(real, gid, lid);
}

static int c_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			  uint16_t lid)
{
	struct ibv_qp *real = cqp(qp)->real;

	return lops(real->context)->detach_mcast(real, gid, lid);
}

/* ibv_close_device: the provider's context goes; the core frees the wrapper. */
static void c_free_context(struct ibv_context *ctx)
{
	struct ibv_context *real = rctx(ctx);
	struct ibv_legacy_device_ops *dops = ibv_legacy_device_ops(real->device);

	pthread_mutex_destroy(&real->mutex);
	if (dops->free_context)
		dops->free_context(real);
}

/*
 * The compat ops for one provider's 1.1 ops l (keep sorted). An op that
 * calls a 1.1 op is left out where the provider left that op NULL (old
 * providers did), so that the stub under the overlay answers as rdma-core
 * answers for any op a provider does not give (v44.0 libibverbs/dummy_ops.c,
 * installed by verbs_set_ops): NULL with errno EOPNOTSUPP, EOPNOTSUPP, or
 * nothing (cq_event). create_qp_ex and create_srq_ex reach the provider
 * through its create_qp and create_srq. The data path (poll, notify, post)
 * is the provider's to give, as the 1.1 core required; XRC and the other
 * extension ops are never given (COMPAT-09): their stubs answer.
 */
#define RI_IF_HAS(lop, fn) (l->lop ? (fn) : NULL)

static void ri_compat_ops(const struct ibv_legacy_context_ops *l,
			  struct verbs_context_ops *ops)
{
	*ops = (struct verbs_context_ops){
		.alloc_mw = RI_IF_HAS(alloc_mw, c_alloc_mw),
		.alloc_pd = RI_IF_HAS(alloc_pd, c_alloc_pd),
		.attach_mcast = RI_IF_HAS(attach_mcast, c_attach_mcast),
		.bind_mw = RI_IF_HAS(bind_mw, c_bind_mw),
		.cq_event = RI_IF_HAS(cq_event, c_cq_event),
		.create_ah = RI_IF_HAS(create_ah, c_create_ah),
		.create_cq = RI_IF_HAS(create_cq, c_create_cq),
		.create_qp = RI_IF_HAS(create_qp, c_create_qp),
		.create_qp_ex = RI_IF_HAS(create_qp, c_create_qp_ex),
		.create_srq = RI_IF_HAS(create_srq, c_create_srq),
		.create_srq_ex = RI_IF_HAS(create_srq, c_create_srq_ex),
		.dealloc_mw = RI_IF_HAS(dealloc_mw, c_dealloc_mw),
		.dealloc_pd = RI_IF_HAS(dealloc_pd, c_dealloc_pd),
		.dereg_mr = RI_IF_HAS(dereg_mr, c_dereg_mr),
		.destroy_ah = RI_IF_HAS(destroy_ah, c_destroy_ah),
		.destroy_cq = RI_IF_HAS(destroy_cq, c_destroy_cq),
		.destroy_qp = RI_IF_HAS(destroy_qp, c_destroy_qp),
		.destroy_srq = RI_IF_HAS(destroy_srq, c_destroy_srq),
		.detach_mcast = RI_IF_HAS(detach_mcast, c_detach_mcast),
		.free_context = c_free_context,
		.modify_qp = RI_IF_HAS(modify_qp, c_modify_qp),
		.modify_srq = RI_IF_HAS(modify_srq, c_modify_srq),
		.poll_cq = c_poll_cq,
		.post_recv = c_post_recv,
		.post_send = c_post_send,
		.post_srq_recv = c_post_srq_recv,
		.query_device = RI_IF_HAS(query_device, c_query_device),
		.query_gid = c_query_gid,
		.query_pkey = c_query_pkey,
		.query_port = RI_IF_HAS(query_port, c_query_port),
		.query_qp = RI_IF_HAS(query_qp, c_query_qp),
		.query_srq = RI_IF_HAS(query_srq, c_query_srq),
		.reg_mr = RI_IF_HAS(reg_mr, c_reg_mr),
		.req_notify_cq = c_req_notify_cq,
		.resize_cq = RI_IF_HAS(resize_cq, c_resize_cq),
	};
}

/* ------------------------------------------------------------------ */
/* The legacy provider's context                                        */

/*
 * Put a legacy provider's context inside vctx, the core's (device.c
 * allocated it): the provider allocates a plain ibv_context, which the
 * application never sees; the compat ops reach it through real_ctx.
 * Returns 0 or a positive errno.
 */
int ri__compat_init_context(struct verbs_context *vctx)
{
	struct ibv_device *dev = vctx->priv->rdev->dev;
	struct ibv_legacy_device_ops *dops = ibv_legacy_device_ops(dev);
	struct verbs_context_ops ops;
	struct ibv_context *real;

	if (!dops->alloc_context)
		return EOPNOTSUPP;
	errno = 0;
	real = dops->alloc_context(dev, -1);
	if (!real) {
		ri_errno_nonzero();
		return errno;
	}
	/* what the 1.1 core filled in after alloc_context */
	real->device = dev;
	pthread_mutex_init(&real->mutex, NULL);

	vctx->priv->legacy = true;
	vctx->priv->real_ctx = real;
	ri_compat_ops(ibv_legacy_context_ops(real), &ops);
	verbs_set_ops(vctx, &ops);
	vctx->context.cmd_fd = real->cmd_fd;
	vctx->context.async_fd = real->async_fd;
	vctx->context.num_comp_vectors = real->num_comp_vectors;
	return 0;
}
