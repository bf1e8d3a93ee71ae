/* SPDX-License-Identifier: MIT */
/*
 * Entry points for the queue objects and XRC: XRC domains, SRQs (basic
 * and XRC) and QPs (create, create_ex, open, modify, query, destroy).
 * Boundary checks follow spec sections 1-4 (XRCD-, SRQX-, QPX-, OPENQP-);
 * the core keeps qp->state (QPX-09) and the other fields that restate the
 * caller's request, and waits for acknowledged events before a destroy
 * (LIFE-09).
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
	const uint32_t need = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct ibv_xrcd *xrcd;

	if (!ctx || !attr) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;		/* XRCD-02 */
		return NULL;
	}
	if ((attr->comp_mask & need) != need) {
		errno = EINVAL;			/* XRCD-01 */
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
	priv = ri__priv(ctx);
	if (!priv->legacy) {
		/* As in rdma-core, the context's op is the provider's own: it
		 * checks comp_mask and the type itself (through the cmd helpers
		 * or not: mlx5 and mlx4 send basic SRQs down a path with no
		 * comp_mask check, SRQX-05). Only the ownership of the objects
		 * passed is checked here. */
		if (!attr->pd)
			goto err_inval;
		if (mask & IBV_SRQ_INIT_ATTR_TYPE)
			type = attr->srq_type;
		if (attr->pd->context != ctx ||
		    (type == IBV_SRQT_XRC &&
		     ((attr->xrcd && attr->xrcd->context != ctx) ||
		      (attr->cq && attr->cq->context != ctx))))
			goto err_inval;
		goto call;
	}
	if (mask >= IBV_SRQ_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;		/* SRQX-05 */
		return NULL;
	}
	if (!(mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd)
		goto err_inval;			/* SRQX-02 */
	/* the type counts only with its bit (SRQX-04) */
	if (mask & IBV_SRQ_INIT_ATTR_TYPE) {
		type = attr->srq_type;
		switch (type) {
		case IBV_SRQT_BASIC:
			break;
		case IBV_SRQT_XRC:
			if (!(mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
			    !(mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq)
				goto err_inval;	/* SRQX-03 */
			break;
		case IBV_SRQT_TM:
			if (!(mask & IBV_SRQ_INIT_ATTR_TM))
				goto err_inval;
			break;
		default:
			goto err_inval;		/* SRQX-07 */
		}
	}
	/* Objects of another context are not refused here: libibverbs sends
	 * their handles as they are and the kernel resolves them (SRQX-08). */

call:
	srq = priv->ops.create_srq_ex(ctx, attr);
	if (!srq && errno == EOPNOTSUPP && type == IBV_SRQT_BASIC &&
	    !(mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)) && !priv->legacy)
		/* a provider with only the 1.1 op (COMPAT-11) */
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
	if (!srq || !attr || (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
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
	ri__wait_events_srq(srq);
	return ri__ops(srq->context)->destroy_srq(srq);
}

/* ------------------------------------------------------------------ */
/* QP                                                                   */

static bool ri_qp_type_known(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		return true;
	default:
		return false;
	}
}

/* Checks shared by create_qp and create_qp_ex (QPX-05, section 3a). */
static int ri_qp_check(struct ibv_context *ctx, const struct ibv_qp_init_attr *a,
		       struct ibv_pd *pd, struct ibv_xrcd *xrcd)
{
	if (!ri_qp_type_known(a->qp_type))
		return EINVAL;
	/* Which context the objects belong to is the kernel's to judge, by
	 * their handles, as with libibverbs. */
	if (a->qp_type == IBV_QPT_XRC_RECV)
		return xrcd ? 0 : EINVAL;
	if (!pd || !a->send_cq)
		return EINVAL;
	if (a->qp_type == IBV_QPT_XRC_SEND)
		return 0;
	if (!a->recv_cq)
		return EINVAL;
	return 0;
}

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

	if (!pd || !attr || ri_qp_check(pd->context, attr, pd, NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_SEND) {
		/* no receive queue (section 3a) */
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	qp = ri__ops(pd->context)->create_qp(pd, attr);
	if (qp)
		ri_qp_fill(pd->context, qp, attr, pd, NULL);
	return qp;
}

/* comp_mask bits the core passes on; others known to hdr44 are refused. */
#define RI_QP_INIT_SUPPORTED (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD)
#define RI_QP_INIT_KNOWN ((IBV_QP_INIT_ATTR_SEND_OPS_FLAGS << 1) - 1)

struct ibv_qp *ri__create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr *base = (struct ibv_qp_init_attr *)attr;
	struct verbs_ex_private *priv;
	struct ibv_pd *pd = NULL;
	struct ibv_xrcd *xrcd = NULL;
	struct ibv_qp *qp;
	uint32_t mask;

	if (!ctx || !attr)
		goto err_inval;
	mask = attr->comp_mask;
	priv = ri__priv(ctx);
	if (mask & IBV_QP_INIT_ATTR_PD)
		pd = attr->pd;
	if (mask & IBV_QP_INIT_ATTR_XRCD)
		xrcd = attr->xrcd;
	if (!priv->legacy) {
		/* As in rdma-core, the context's op is the provider's own:
		 * comp_mask and qp_type are its to check, in its order (rxe
		 * refuses a mask bit before it looks at the type). Only the
		 * ownership of the objects of a known type is checked here. */
		if (ri_qp_type_known(attr->qp_type) && ri_qp_check(ctx, base, pd, xrcd))
			goto err_inval;
		goto call;
	}
	if (mask & ~(uint32_t)RI_QP_INIT_KNOWN)
		goto err_inval;			/* QPX-04: unknown bits */
	if (mask & ~(uint32_t)RI_QP_INIT_SUPPORTED) {
		errno = EOPNOTSUPP;		/* known, not implemented */
		return NULL;
	}
	if (ri_qp_check(ctx, base, pd, xrcd))
		goto err_inval;			/* QPX-05, section 3a */
call:
	if (attr->qp_type == IBV_QPT_XRC_SEND ||
	    attr->qp_type == IBV_QPT_XRC_RECV) {
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	qp = priv->ops.create_qp_ex(ctx, attr);
	if (!qp && errno == EOPNOTSUPP && mask == IBV_QP_INIT_ATTR_PD &&
	    !priv->legacy)
		/* a provider with only the 1.1 op (QPX-01, COMPAT-11) */
		qp = priv->ops.create_qp(pd, base);
	if (qp)
		ri_qp_fill(ctx, qp, base, pd,
			   attr->qp_type == IBV_QPT_XRC_RECV ? xrcd : NULL);
	return qp;

err_inval:
	errno = EINVAL;
	return NULL;
}

struct ibv_qp *ri__open_qp(struct ibv_context *ctx,
			   struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			      IBV_QP_OPEN_ATTR_TYPE;
	struct ibv_qp_init_attr a = {};
	struct ibv_qp *qp;

	if (!ctx || !attr)
		goto err_inval;
	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) {
		errno = EOPNOTSUPP;		/* OPENQP-03 */
		return NULL;
	}
	/* OPENQP-02; the XRCD handle is the kernel's to check (OPENQP-06) */
	if ((attr->comp_mask & need) != need || !attr->xrcd)
		goto err_inval;
	if (attr->qp_type != IBV_QPT_XRC_RECV)
		goto err_inval;			/* OPENQP-04 */
	qp = ri__ops(ctx)->open_qp(ctx, attr);
	if (!qp)
		return NULL;
	a.qp_context = attr->qp_context;	/* copied whatever the bit */
	a.qp_type = attr->qp_type;
	ri_qp_fill(ctx, qp, &a, NULL, attr->xrcd);
	qp->state = IBV_QPS_UNKNOWN;		/* OPENQP-07 */
	return qp;

err_inval:
	errno = EINVAL;
	return NULL;
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
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;	/* QPX-09 */
	return 0;
}

__typeof__(ibv_modify_qp) ri_v11_modify_qp;
RI_EXPORT int ri_v11_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			    int attr_mask)
{
	int ret;

	if (!qp || !attr)
		return EINVAL;
	if (attr_mask & ~RI_QP_STANDARD_BITS)
		return EOPNOTSUPP;		/* QPX-08 */
	if (((attr_mask & IBV_QP_STATE) && attr->qp_state > IBV_QPS_ERR) ||
	    ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state > IBV_QPS_ERR))
		return EINVAL;			/* QPX-08 */
	ret = ri__ops(qp->context)->modify_qp(qp, attr, attr_mask);
	if (!ret && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;	/* QPX-09 */
	return ret;
}

__typeof__(ibv_destroy_qp) ri_v11_destroy_qp;
RI_EXPORT int ri_v11_destroy_qp(struct ibv_qp *qp)
{
	if (!qp)
		return EINVAL;
	ri__wait_events_qp(qp);			/* LIFE-09 */
	return ri__ops(qp->context)->destroy_qp(qp);
}

RI_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	/* the new post-send API is not offered (no SEND_OPS_FLAGS) */
	errno = qp ? EOPNOTSUPP : EINVAL;
	return NULL;
}

RI_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					 enum ibv_wr_opcode op, uint32_t flags)
{
	return 0;
}

RI_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return qp && ece ? EOPNOTSUPP : EINVAL;
}

RI_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return qp && ece ? EOPNOTSUPP : EINVAL;
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in symver.c). */
RI_SYMVER(ri_v11_create_qp, ibv_create_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_create_srq, ibv_create_srq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_destroy_qp, ibv_destroy_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_destroy_srq, ibv_destroy_srq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_modify_qp, ibv_modify_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_modify_srq, ibv_modify_srq@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_qp, ibv_query_qp@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_srq, ibv_query_srq@@IBVERBS_1.1);
