/* SPDX-License-Identifier: MIT */
/*
 * Entry points for the queue objects and XRC: XRC domains, SRQs (basic
 * and XRC) and QPs (create, create_ex, open, modify, query, destroy).
 * Like rdma-core's verbs.c these entry points check nothing of spec
 * sections 1-4 themselves: the comp_mask rules live in the command layer
 * (cmd.c) the provider calls, handle and state rules in the kernel, the
 * rest in the driver. The core keeps qp->state (QPX-09) and the other
 * fields that restate the caller's request; an opened QP's fields and the
 * wait for acknowledged events at a QP's destroy (OPENQP-07, LIFE-09) are
 * the command layer's, as in rdma-core. NULL arguments fail with EINVAL
 * rather than crash (rdma-core dereferences them).
 */
#include <stdlib.h>
#include <string.h>

#include "ri.h"

static struct verbs_qp *ri_vqp(struct ibv_qp *qp)
{
	return ri_container_of(qp, struct verbs_qp, qp);
}

static struct verbs_srq *ri_vsrq(struct ibv_srq *srq)
{
	return ri_container_of(srq, struct verbs_srq, srq);
}

static struct verbs_xrcd *ri_vxrcd(struct ibv_xrcd *xrcd)
{
	return ri_container_of(xrcd, struct verbs_xrcd, xrcd);
}

/* ------------------------------------------------------------------ */
/* XRCD                                                                 */

struct ibv_xrcd *ri__open_xrcd(struct ibv_context *ctx,
			       struct ibv_xrcd_init_attr *attr)
{
	struct ibv_xrcd *xrcd;

	if (!ctx || !attr) {
		errno = EINVAL;
		return NULL;
	}
	xrcd = ri__ops(ctx)->open_xrcd(ctx, attr);
	if (xrcd) {
		xrcd->context = ctx;
		memset(&ri_vxrcd(xrcd)->core, 0, sizeof(ri_vxrcd(xrcd)->core));
	}
	return xrcd;
}

int ri__close_xrcd(struct ibv_xrcd *xrcd)
{
	if (!xrcd)
		return EINVAL;
	return ri__ops(xrcd->context)->close_xrcd(xrcd);
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                  */

static void ri_srq_fill(struct ibv_context *ctx, struct ibv_srq *srq,
			void *srq_context, struct ibv_pd *pd,
			enum ibv_srq_type type, struct ibv_xrcd *xrcd,
			struct ibv_cq *cq)
{
	struct verbs_srq *vsrq = ri_vsrq(srq);

	srq->context = ctx;
	srq->srq_context = srq_context;
	srq->pd = pd;
	srq->events_completed = 0;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	vsrq->comp_mask |= VERBS_SRQ_TYPE;
	vsrq->srq_type = type;
	if (type == IBV_SRQT_XRC) {
		vsrq->comp_mask |= VERBS_SRQ_XRCD | VERBS_SRQ_CQ;
		vsrq->xrcd = ri_vxrcd(xrcd);
		vsrq->cq = cq;
	}
	memset(&vsrq->core, 0, sizeof(vsrq->core));
}

__typeof__(ibv_create_srq) ri_v11_create_srq;
RI_EXPORT struct ibv_srq *ri_v11_create_srq(struct ibv_pd *pd,
					 struct ibv_srq_init_attr *attr)
{
	struct ibv_srq *srq;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	srq = ri__ops(pd->context)->create_srq(pd, attr);
	if (srq)
		ri_srq_fill(pd->context, srq, attr->srq_context, pd,
			    IBV_SRQT_BASIC, NULL, NULL);
	return srq;
}

struct ibv_srq *ri__create_srq_ex(struct ibv_context *ctx,
				  struct ibv_srq_init_attr_ex *attr)
{
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct verbs_ex_private *priv;
	struct ibv_srq *srq;
	uint32_t mask;

	if (!ctx || !attr)
		goto err_inval;
	mask = attr->comp_mask;
	/* the type counts only with its bit (SRQX-04, set_vsrq in cmd_srq.c) */
	if (mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	priv = ri__priv(ctx);
	srq = priv->ops.create_srq_ex(ctx, attr);
	if (!srq && errno == EOPNOTSUPP && type == IBV_SRQT_BASIC &&
	    (mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd && !priv->legacy &&
	    !(mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)))
		/* a provider with only the 1.1 op: the inline routing (SRQX-06,
		 * COMPAT-11) */
		srq = priv->ops.create_srq(attr->pd,
					   (struct ibv_srq_init_attr *)attr);
	if (srq)
		ri_srq_fill(ctx, srq, attr->srq_context, attr->pd, type,
			    attr->xrcd, attr->cq);
	return srq;

err_inval:
	errno = EINVAL;
	return NULL;
}

int ri__get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	if (!srq || !num)
		return EINVAL;
	return ri__ops(srq->context)->get_srq_num(srq, num);
}

__typeof__(ibv_modify_srq) ri_v11_modify_srq;
RI_EXPORT int ri_v11_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			     int mask)
{
	if (!srq || !attr)
		return EINVAL;
	return ri__ops(srq->context)->modify_srq(srq, attr, mask);
}

__typeof__(ibv_query_srq) ri_v11_query_srq;
RI_EXPORT int ri_v11_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	if (!srq || !attr)
		return EINVAL;
	return ri__ops(srq->context)->query_srq(srq, attr);
}

__typeof__(ibv_destroy_srq) ri_v11_destroy_srq;
RI_EXPORT int ri_v11_destroy_srq(struct ibv_srq *srq)
{
	if (!srq)
		return EINVAL;
	/* the wait is the command layer's (verbs_cmd_destroy_srq) */
	return ri__ops(srq->context)->destroy_srq(srq);
}

/* ------------------------------------------------------------------ */
/* QP                                                                   */

static void ri_qp_fill(struct ibv_context *ctx, struct ibv_qp *qp,
		       const struct ibv_qp_init_attr *a, struct ibv_pd *pd,
		       struct ibv_xrcd *xrcd)
{
	struct verbs_qp *vqp = ri_vqp(qp);

	/* verbatim, as rdma-core's set_qp() does (QPX-02) */
	qp->context = ctx;
	qp->qp_context = a->qp_context;
	qp->pd = pd;
	qp->send_cq = a->send_cq;
	qp->recv_cq = a->recv_cq;
	qp->srq = a->srq;
	qp->qp_type = a->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->events_completed = 0;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	if (xrcd) {
		vqp->comp_mask |= VERBS_QP_XRCD;
		vqp->xrcd = ri_vxrcd(xrcd);
	}
	memset(&vqp->core, 0, sizeof(vqp->core));
}

__typeof__(ibv_create_qp) ri_v11_create_qp;
RI_EXPORT struct ibv_qp *ri_v11_create_qp(struct ibv_pd *pd,
				       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp *qp;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	qp = ri__ops(pd->context)->create_qp(pd, attr);
	if (qp)
		ri_qp_fill(pd->context, qp, attr, pd, NULL);
	return qp;
}

struct ibv_qp *ri__create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr *base = (struct ibv_qp_init_attr *)attr;
	struct verbs_ex_private *priv;
	struct ibv_pd *pd = NULL;
	struct ibv_xrcd *xrcd = NULL;
	struct ibv_qp *qp;
	uint32_t mask;

	if (!ctx || !attr) {
		errno = EINVAL;
		return NULL;
	}
	mask = attr->comp_mask;
	if (mask & IBV_QP_INIT_ATTR_PD)
		pd = attr->pd;
	if (mask & IBV_QP_INIT_ATTR_XRCD)
		xrcd = attr->xrcd;
	priv = ri__priv(ctx);
	qp = priv->ops.create_qp_ex(ctx, attr);
	if (!qp && errno == EOPNOTSUPP && mask == IBV_QP_INIT_ATTR_PD &&
	    !priv->legacy && pd)
		/* a provider with only the 1.1 op (QPX-01, COMPAT-11) */
		qp = priv->ops.create_qp(pd, base);
	if (qp)	/* pd verbatim, whatever the PD bit (set_qp, cmd_qp.c:53; QPX-02) */
		ri_qp_fill(ctx, qp, base, attr->pd,
			   attr->qp_type == IBV_QPT_XRC_RECV ? xrcd : NULL);
	return qp;
}

/* The opened QP's fields are the command layer's (verbs_cmd_open_qp_resp,
 * as rdma-core's ibv_cmd_open_qp fills them; its ibv_open_qp is the
 * header's inline alone). */
struct ibv_qp *ri__open_qp(struct ibv_context *ctx,
			   struct ibv_qp_open_attr *attr)
{
	if (!ctx || !attr) {
		errno = EINVAL;
		return NULL;
	}
	return ri__ops(ctx)->open_qp(ctx, attr);
}

__typeof__(ibv_query_qp) ri_v11_query_qp;
RI_EXPORT int ri_v11_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	int ret;

	if (!qp || !attr || !init_attr)
		return EINVAL;
	ret = ri__ops(qp->context)->query_qp(qp, attr, attr_mask, init_attr);
	if (ret)
		return ret;
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->qp_type = qp->qp_type;
	if (attr_mask & IBV_QP_STATE) /* @rule QPX-09 */
		qp->state = attr->qp_state;
	return 0;
}

__typeof__(ibv_modify_qp) ri_v11_modify_qp;
RI_EXPORT int ri_v11_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			    int attr_mask)
{
	int ret;

	if (!qp || !attr)
		return EINVAL;
	ret = ri__ops(qp->context)->modify_qp(qp, attr, attr_mask);
	if (!ret && (attr_mask & IBV_QP_STATE)) /* @rule QPX-09 */
		qp->state = attr->qp_state;
	return ret;
}

__typeof__(ibv_destroy_qp) ri_v11_destroy_qp;
RI_EXPORT int ri_v11_destroy_qp(struct ibv_qp *qp)
{
	if (!qp)
		return EINVAL;
	/* LIFE-09's wait is the command layer's (verbs_cmd_destroy_qp), once
	 * the kernel destroyed the QP, as in rdma-core's ibv_cmd_destroy_qp */
	return ri__ops(qp->context)->destroy_qp(qp);
}

/* rdma-core v44.0 libibverbs/verbs.c:668: the provider marks a QP made
 * with send_ops_flags (VERBS_QP_EX); any other QP has no ibv_qp_ex. A
 * legacy provider's QPs are the compat layer's wrappers: never marked. */
RI_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct verbs_qp *vqp;

	if (!qp) {	/* rdma-core would fault; a clear error here */
		errno = EINVAL;
		return NULL;
	}
	vqp = ri_container_of(qp, struct verbs_qp, qp);
	if (vqp->comp_mask & VERBS_QP_EX) /* @rule WRX-01 */
		return &vqp->qp_ex;
	return NULL;
}

/* rdma-core v44.0 libibverbs/verbs.c:695 (flags to the driver as they
 * are), v56.1 :695-714 (flags select the answer): ibvct-release.def
 * DATA_IN_ORDER_FLAGS. Answered on x86 only, as rdma-core: other platforms
 * are known to reorder and are answered 0. */
RI_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					 enum ibv_wr_opcode op, uint32_t flags)
{
#if !defined(__i386__) && !defined(__x86_64__)
	return 0;
#else
	int caps;

	if (!ibvct_release_is_56(IBVCT_REL_DATA_IN_ORDER_FLAGS))
		return ri__ops(qp->context)->query_qp_data_in_order(qp, op, flags);
	if (flags & ~(uint32_t)IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS)
		return 0;
	caps = ri__ops(qp->context)->query_qp_data_in_order(qp, op, flags);
	if (caps & IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG)
		caps |= IBV_QUERY_QP_DATA_IN_ORDER_ALIGNED_128_BYTES;
	return flags ? caps : !!(caps & IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG);
#endif
}

RI_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return qp && ece ? EOPNOTSUPP : EINVAL;
}

RI_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return qp && ece ? EOPNOTSUPP : EINVAL;
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_create_qp, ibv_create_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_create_srq, ibv_create_srq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_destroy_qp, ibv_destroy_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_destroy_srq, ibv_destroy_srq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_modify_qp, ibv_modify_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_modify_srq, ibv_modify_srq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_qp, ibv_query_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_srq, ibv_query_srq@@IBVERBS_1.1);
