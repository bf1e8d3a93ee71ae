/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queue verbs, basic and XRC (SRQX-*); the queue itself is
 * the engine's (fe_srq). Every SRQ gets a device-unique number from the
 * fake kernel daemon; an XRC SRQ is also made there, in its XRC domain
 * (which it holds: XRCD-14, LIFE-12), so that any process can address it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"

/* ---- SRQ objects ---------------------------------------------------------- */
static int fp_srq_check(struct fp_context *ctx, struct ibv_srq_init_attr_ex *attr,
			enum ibv_srq_type *type)
{
	const struct ibv_device_attr *da = &ctx->spec->attr;
	uint32_t mask = attr->comp_mask, slack;
	int err;

	if (fp_prof_srq_basic_path(attr)) {
		/* the driver's create_srq: it reads pd and the sizes only */
		*type = IBV_SRQT_BASIC;
		if (!attr->pd)
			return EINVAL;
		goto sizes;
	}
	err = fp_prof_srq_type(attr);
	if (err)
		return err;
	/* The comp_mask rules (SRQX-02/03/05) are the command layer's
	 * (fp_create_srq_ex); a driver uses the objects it is handed, and the
	 * fake kernel resolves their handles (SRQX-08). */
	if (!attr->pd)
		return EINVAL;
	/* SRQX-04: the type counts only with the TYPE bit. */
	*type = (mask & IBV_SRQ_INIT_ATTR_TYPE) ? attr->srq_type : IBV_SRQT_BASIC;
	switch (*type) {
	case IBV_SRQT_BASIC:
		break;
	case IBV_SRQT_XRC:
		if (!fp__xrc_capable(ctx))
			return EOPNOTSUPP;
		if (!attr->xrcd || !attr->cq)
			return EINVAL;
		break;
	case IBV_SRQT_TM:
		return EOPNOTSUPP;			/* no tag matching here */
	default:
		/* SRQX-07: an unknown type goes to the kernel, as
		 * ibv_icmd_create_srq hands it on (a profile's driver may
		 * refuse it first: fp_prof_srq_type) */
		break;
	}
sizes:
	err = fp_prof_srq_limits(attr);
	if (err)
		return err;
	/* the device's limits (SRQX-10: at most what query_device says; the
	 * quirk's driver takes one more) */
	slack = fp__quirk(FP_Q_LIMITS_PLUS_ONE) ? 1 : 0;
	if ((da->max_srq_wr > 0 && attr->attr.max_wr > (uint32_t)da->max_srq_wr + slack) ||
	    (da->max_srq_sge > 0 && attr->attr.max_sge > (uint32_t)da->max_srq_sge + slack) ||
	    (attr->attr.srq_limit > attr->attr.max_wr && fp_prof_srq_limit_checked()))
		return EINVAL;
	return fp_prof_srq_mem(attr->attr.max_wr, attr->attr.max_sge);	/* or ENOMEM */
}

static struct fp_srq *fp_srq_new(struct fp_context *ctx, struct ibv_srq_init_attr_ex *attr,
				 int *errp)
{
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct fp_srq *srq;
	uint32_t srqn;
	uint32_t wr, sge;
	int err;

	err = fp_srq_check(ctx, attr, &type);
	if (err)
		goto err_out;
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		err = ENOMEM;
		goto err_out;
	}
	/* SRQX-10: report at least what was asked for, in the sizes the
	 * profile's driver rounds to. */
	wr = attr->attr.max_wr;
	sge = attr->attr.max_sge;
	fp_prof_srq_caps(&wr, &sge);
	err = fe_rq_init(&srq->e.rq, wr ? (int)wr : 1, sge ? (int)sge : 1);
	if (err)
		goto err_free_srq;
	/* Only the handle members of pd, cq and xrcd are read, as
	 * ibv_cmd_create_srq_ex does; the fake kernel resolves them in this
	 * context (SRQX-08) and they name our own objects once it agrees. */
	if (type == IBV_SRQT_XRC) {
		err = fk_srq_create_xrc(ctx->fk, attr->pd->handle, attr->cq->handle,
					fp__xrcd_handle_of(attr->xrcd),
					&srq->vsrq.srq.handle, &srqn);
	} else {
		err = fk_srqn_alloc(ctx->fk, &srqn);
		if (!err) {
			err = fk_obj_create_on_pd(ctx->fk, FK_O_SRQ, (uint32_t)type,
						  attr->pd->handle, &srq->vsrq.srq.handle);
			if (err)
				fk_srqn_free(ctx->fk, srqn);
		}
	}
	if (err)
		goto err_free_rq;
	if (type != IBV_SRQT_XRC)
		type = IBV_SRQT_BASIC;	/* what the kernel made of it */
	srq->ctx = ctx;
	srq->e.type = type;
	srq->pd = fp__pd_by_handle(ctx, attr->pd->handle);
	srq->pd->usecnt++;
	srq->e.pd = fp__pd_ident(srq->pd);
	if (type == IBV_SRQT_XRC) {
		srq->cq = fp__cq_by_handle(ctx, attr->cq->handle);
		srq->xrcd = fp__xrcd_by_handle(ctx, fp__xrcd_handle_of(attr->xrcd));
		srq->e.dom = srq->xrcd->dom;
		srq->e.cq = &srq->cq->e;
		srq->cq->usecnt++;
		srq->xrcd->refcnt++;		/* XRCD-13 */
		fe_dom_get(srq->e.dom);	/* XRCD-14, LIFE-12 */
	}
	fe_srq_add(ctx->hca, &srq->e, srqn);
	srq->vsrq.srq_type = type;
	srq->vsrq.srq_num = srq->e.srqn;
	srq->vsrq.comp_mask = VERBS_SRQ_TYPE | VERBS_SRQ_NUM;
	if (type == IBV_SRQT_XRC) {
		srq->vsrq.xrcd = &srq->xrcd->vx;
		srq->vsrq.cq = &srq->cq->vcq.cq;
		srq->vsrq.comp_mask |= VERBS_SRQ_XRCD | VERBS_SRQ_CQ;
	}
	if (fp_prof_srq_reports_queue())
		attr->attr.max_wr = (uint32_t)srq->e.rq.max_wr;
	attr->attr.max_sge = (uint32_t)srq->e.rq.max_sge;
	fp_list_add_tail(&ctx->srqs, &srq->link);
	return srq;

err_free_rq:
	fe_rq_free(&srq->e.rq);
err_free_srq:
	free(srq);
err_out:
	*errp = err;
	return NULL;
}

struct ibv_srq *fp_create_srq_ex(struct ibv_context *context,
				 struct ibv_srq_init_attr_ex *attr)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_srq *srq = NULL;
	int err, cmd_errno = 0;

	/* a 1.1.8 caller's struct ends after cq (56 bytes) */
	if (fp__quirk(FP_Q_CREATE_READS_PAST_LEGACY_ATTR))
		(void)*(const volatile uint32_t *)&attr->tm_cap.max_num_tags;
	err = fp__op_begin(FP_OP_CREATE_SRQ_EX);
	/* SRQX-02/03/05: the command layer's, as in ibv_cmd_create_srq_ex(); a
	 * profile's driver may take another path first (mlx5/mlx4 basic SRQs
	 * go to create_srq, mlx4 drops unknown types before it) */
	if (!err && !fp__quirk(FP_Q_SKIP_CMD_SRQ) &&
	    !fp_prof_srq_basic_path(attr) && !fp_prof_srq_type(attr) &&
	    (err = verbs_cmd_create_srq_ex(context, attr)))
		cmd_errno = errno;	/* the command layer's errno stands, as in mlx5 */
	if (!err)
		srq = fp_srq_new(ctx, attr, &err);
	fp__op_end(ctx, FP_OP_CREATE_SRQ_EX, FP_SUBJ_SRQ, srq, err,
		   "mask=%#x type=%d max_wr=%u max_sge=%u srqn=%u", attr->comp_mask,
		   (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? (int)attr->srq_type : 0,
		   attr->attr.max_wr, attr->attr.max_sge, srq ? srq->e.srqn : 0);
	if (err)
		return fp__create_failed(err, cmd_errno);
	return &srq->vsrq.srq;
}

struct ibv_srq *fp_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct fp_context *ctx = to_fp_pd(pd)->ctx;
	struct ibv_srq_init_attr_ex ex;
	struct fp_srq *srq = NULL;
	int err;

	/* attr is the 24-byte 1.1 struct: read only its own fields. */
	memset(&ex, 0, sizeof(ex));
	if (fp__quirk(FP_Q_CREATE_READS_PAST_LEGACY_ATTR))
		(void)*(const volatile int *)&((struct ibv_srq_init_attr_ex *)attr)->srq_type;
	ex.srq_context = attr->srq_context;
	ex.attr.max_wr = attr->attr.max_wr;
	ex.attr.max_sge = attr->attr.max_sge;
	ex.attr.srq_limit = attr->attr.srq_limit;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	ex.pd = pd;
	err = fp__op_begin(FP_OP_CREATE_SRQ);
	if (!err)
		srq = fp_srq_new(ctx, &ex, &err);
	if (srq) {
		attr->attr.max_wr = ex.attr.max_wr;
		attr->attr.max_sge = ex.attr.max_sge;
	}
	fp__op_end(ctx, FP_OP_CREATE_SRQ, FP_SUBJ_SRQ, srq, err,
		   "max_wr=%u max_sge=%u srqn=%u", ex.attr.max_wr, ex.attr.max_sge,
		   srq ? srq->e.srqn : 0);
	if (err)
		return fp__create_failed(err, 0);
	return &srq->vsrq.srq;
}

static void fp_srq_free(struct fp_srq *srq)
{
	fe_srq_del(&srq->e);
	srq->pd->usecnt--;
	if (srq->e.type == IBV_SRQT_XRC) {
		srq->cq->usecnt--;
		fp__xrcd_put_ref(srq->xrcd);
		fe_dom_put(srq->e.dom);
	}
	fp_list_del(&srq->link);
	fe_rq_free(&srq->e.rq);
	free(srq);
}

int fp_destroy_srq(struct ibv_srq *ibsrq)
{
	struct fp_srq *srq = to_fp_srq(ibsrq);
	struct fp_context *ctx = srq->ctx;
	uint32_t srqn = srq->e.srqn;
	int err;

	err = fp__op_begin(FP_OP_DESTROY_SRQ);
	if (err)
		goto out;
	/* EBUSY while QPs created with srq= hold it (SRQX-15: TGT QPs never
	 * do): the fake kernel's */
	if (srq->e.type == IBV_SRQT_XRC) {
		err = fk_srq_destroy(ctx->fk, ibsrq->handle);
	} else {
		err = fk_obj_destroy(ctx->fk, FK_O_SRQ, ibsrq->handle);
		if (!err)
			err = fk_srqn_free(ctx->fk, srqn);
	}
	if (err)
		goto out;
	/* as ibv_cmd_destroy_srq: the acknowledged events, outside our lock */
	fe_unlock();
	verbs_cmd_destroy_srq(ibsrq);
	fe_lock();
	fp_srq_free(srq);

out:
	fp__op_end(ctx, FP_OP_DESTROY_SRQ, FP_SUBJ_NONE, NULL, err, "srqn=%u", srqn);
	return err;
}

int fp_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct fp_srq *srq = to_fp_srq(ibsrq);
	int err;

	err = fp__op_begin(FP_OP_MODIFY_SRQ);
	if (err)
		goto out;
	if (attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) {
		err = EINVAL;
		goto out;
	}
	if (attr_mask & IBV_SRQ_MAX_WR) {
		if (!(srq->ctx->spec->attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) ||
		    attr->max_wr < 1 || attr->max_wr < (uint32_t)srq->e.rq.count) {
			err = EINVAL;
			goto out;
		}
		err = fe_rq_resize(&srq->e.rq, (int)attr->max_wr);
		if (err)
			goto out;
	}
	if (attr_mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit > (uint32_t)srq->e.rq.max_wr) {
			err = EINVAL;
			goto out;
		}
		/* SRQX-14: arms; 0 disarms (the quirk's driver arms nothing) */
		if (!fp__quirk(FP_Q_SRQ_LIMIT_NOT_ARMED))
			srq->e.limit = attr->srq_limit;
	}
out:
	fp__op_end(srq->ctx, FP_OP_MODIFY_SRQ, FP_SUBJ_SRQ, srq, err,
		   "srqn=%u mask=%#x max_wr=%u limit=%u", srq->e.srqn, attr_mask,
		   (attr_mask & IBV_SRQ_MAX_WR) ? attr->max_wr : 0,
		   (attr_mask & IBV_SRQ_LIMIT) ? attr->srq_limit : 0);
	return err;
}

int fp_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct fp_srq *srq = to_fp_srq(ibsrq);
	int err;

	err = fp__op_begin(FP_OP_QUERY_SRQ);
	if (!err) {
		attr->max_wr = (uint32_t)srq->e.rq.max_wr;
		attr->max_sge = (uint32_t)srq->e.rq.max_sge;
		attr->srq_limit = srq->e.limit;
	}
	fp__op_end(srq->ctx, FP_OP_QUERY_SRQ, FP_SUBJ_SRQ, srq, err, "srqn=%u", srq->e.srqn);
	return err;
}

int fp_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct fp_srq *srq = to_fp_srq(ibsrq);
	int err;

	err = fp__op_begin(FP_OP_GET_SRQ_NUM);
	if (!err && srq->e.type != IBV_SRQT_XRC && fp__quirk(FP_Q_SRQ_NUM_BASIC_EINVAL))
		err = EINVAL;		/* the quirk: no driver's answer (SRQX-12) */
	else if (!err)
		err = fp_prof_srq_num(srq->e.type);
	if (!err)	/* SRQX-11; a basic SRQ answers too (SRQX-12, the mlx5 way) */
		*srq_num = srq->e.srqn + (fp__quirk(FP_Q_SRQ_NUM_OFF_BY_ONE) ? 1 : 0);
	fp__op_end(srq->ctx, FP_OP_GET_SRQ_NUM, FP_SUBJ_SRQ, srq, err, "srqn=%u", srq->e.srqn);
	return err;
}

int fp_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct fp_srq *srq = to_fp_srq(ibsrq);
	int err, n = 0;

	err = fp__op_begin(FP_OP_POST_SRQ_RECV);
	if (err) {
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next, n++) {
		err = fe_rq_post(&srq->e.rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
out:
	fp__op_end(srq->ctx, FP_OP_POST_SRQ_RECV, FP_SUBJ_SRQ, srq, err,
		   "srqn=%u posted=%d", srq->e.srqn, n);
	return err;
}

void fp__srq_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->srqs)
		fp_srq_free(fp_container_of(p, struct fp_srq, link));
}
