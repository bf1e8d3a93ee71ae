/* SPDX-License-Identifier: MIT */
/*
 * Completion queue verbs: the ring and its arming are the engine's (fe_cq);
 * its notification reaches the completion channel (ops.c upcalls).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"

struct ibv_cq *fp_create_cq(struct ibv_context *context, int cqe,
			    struct ibv_comp_channel *channel, int comp_vector)
{
	struct fp_context *ctx = to_fp_ctx(context);
	int max = ctx->spec->attr.max_cqe;
	struct fp_cq *cq = NULL;
	int err;

	err = fp__op_begin(FP_OP_CREATE_CQ);
	if (err)
		goto out;
	if (cqe < 1 || (max > 0 && cqe > max) || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		err = EINVAL;
		goto out;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		err = ENOMEM;
		goto out;
	}
	err = fe_cq_init(&cq->e, cqe);
	if (err)
		goto err_free_cq;
	err = fk_obj_create(ctx->fk, FK_O_CQ, 0, NULL, &cq->vcq.cq.handle);
	if (err)
		goto err_free_ring;
	cq->ctx = ctx;
	cq->channel = channel;
	cq->comp_vector = comp_vector;
	cq->vcq.cq.cqe = cqe;
	fp_list_add_tail(&ctx->cqs, &cq->link);
	goto out;

err_free_ring:
	fe_cq_free(&cq->e);
err_free_cq:
	free(cq);
	cq = NULL;
out:
	fp__op_end(ctx, FP_OP_CREATE_CQ, FP_SUBJ_CQ, cq, err,
		   "cqe=%d channel=%p vector=%d cq=%u", cqe, (void *)channel,
		   comp_vector, cq ? cq->vcq.cq.handle : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &cq->vcq.cq;
}

static void fp_cq_free(struct fp_cq *cq)
{
	fp_list_del(&cq->link);
	fe_cq_free(&cq->e);
	free(cq);
}

int fp_destroy_cq(struct ibv_cq *ibcq)
{
	struct fp_cq *cq = to_fp_cq(ibcq);
	struct fp_context *ctx = cq->ctx;
	uint32_t h = ibcq->handle;
	int err;

	err = fp__op_begin(FP_OP_DESTROY_CQ);
	if (err)
		goto out;
	/* EBUSY while QPs or XRC SRQs hold it: the fake kernel's (SRQX-09) */
	err = fk_obj_destroy(ctx->fk, FK_O_CQ, h);
	if (err)
		goto out;
	/* as ibv_cmd_destroy_cq: the acknowledged events, outside our lock */
	fe_unlock();
	verbs_cmd_destroy_cq(ibcq);
	fe_lock();
	fp_cq_free(cq);
out:
	fp__op_end(ctx, FP_OP_DESTROY_CQ, FP_SUBJ_NONE, NULL, err, "cq=%u", h);
	return err;
}

int fp_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct fp_cq *cq = to_fp_cq(ibcq);
	const struct fp_cqe *e;
	int err, n = 0;

	err = fp__op_begin(FP_OP_POLL_CQ);
	if (err)
		goto out;
	while (n < num_entries && (e = fe_cq_peek(&cq->e))) {
		uint32_t byte_len = wc[n].byte_len;

		/* a driver may leave byte_len where the verbs do not define it */
		wc[n] = e->wc;
		if (!fp_prof_wc_byte_len(&e->wc, e->sq_qp != NULL))
			wc[n].byte_len = byte_len;
		n++;
		fe_cq_pop(&cq->e);
	}
out:
	fp__op_end(cq->ctx, FP_OP_POLL_CQ, FP_SUBJ_CQ, cq, err ? -err : n,
		   "cq=%u num=%d", ibcq->handle, num_entries);
	return err ? -err : n;
}

int fp_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct fp_cq *cq = to_fp_cq(ibcq);
	int err;

	err = fp__op_begin(FP_OP_REQ_NOTIFY_CQ);
	if (err)
		goto out;
	fe_cq_arm(&cq->e, solicited_only);
out:
	fp__op_end(cq->ctx, FP_OP_REQ_NOTIFY_CQ, FP_SUBJ_CQ, cq, err,
		   "cq=%u solicited_only=%d", ibcq->handle, solicited_only);
	return err;
}

int fp_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct fp_cq *cq = to_fp_cq(ibcq);
	int max = cq->ctx->spec->attr.max_cqe;
	int err;

	err = fp__op_begin(FP_OP_RESIZE_CQ);
	if (err)
		goto out;
	if (cqe < 1 || (max > 0 && cqe > max)) {
		err = EINVAL;
		goto out;
	}
	err = fe_cq_resize(&cq->e, cqe);	/* EINVAL below the CQEs held */
	if (!err)
		cq->vcq.cq.cqe = cqe;
out:
	fp__op_end(cq->ctx, FP_OP_RESIZE_CQ, FP_SUBJ_CQ, cq, err, "cq=%u cqe=%d",
		   ibcq->handle, cqe);
	return err;
}

void fp_cq_event(struct ibv_cq *ibcq)
{
	/* The core counts delivered events (verbs_obj_core); nothing to do. */
}

void fp__cq_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->cqs)
		fp_cq_free(fp_container_of(p, struct fp_cq, link));
}
