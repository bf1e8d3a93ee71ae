/* SPDX-License-Identifier: MIT */
/*
 * Completion queues: a ring of CQEs, arming (any / solicited only) and the
 * completion channel notification (verbs_comp_channel_notify, driver.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_provider.h"

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
	cq->ring = calloc((size_t)cqe, sizeof(*cq->ring));
	if (!cq->ring) {
		err = ENOMEM;
		goto err_free_cq;
	}
	err = fk_obj_create(ctx->fk, FK_O_CQ, 0, NULL, &cq->vcq.cq.handle);
	if (err)
		goto err_free_ring;
	cq->ctx = ctx;
	cq->channel = channel;
	cq->comp_vector = comp_vector;
	cq->size = cqe;
	cq->vcq.cq.cqe = cqe;
	fp_list_add_tail(&ctx->cqs, &cq->link);
	goto out;

err_free_ring:
	free(cq->ring);
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
	free(cq->ring);
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
	fp_fabric_unlock();
	verbs_cmd_destroy_cq(ibcq);
	fp_fabric_lock();
	fp_cq_free(cq);
out:
	fp__op_end(ctx, FP_OP_DESTROY_CQ, FP_SUBJ_NONE, NULL, err, "cq=%u", h);
	return err;
}

void fp__cq_push(struct fp_cq *cq, const struct ibv_wc *wc, struct fp_rqp *sq_qp,
		 uint64_t sq_seq, bool solicited)
{
	struct fp_cqe *e;

	if (cq->count == cq->size) {
		/* Overrun: the CQE is lost and the owner hears about it once. */
		if (!cq->overflowed) {
			cq->overflowed = true;
			fp__event_raise(cq->ctx, IBV_EVENT_CQ_ERR,
					(uint64_t)(uintptr_t)&cq->vcq.cq);
		}
		return;
	}
	e = &cq->ring[(cq->head + cq->count) % cq->size];
	e->wc = *wc;
	e->sq_qp = sq_qp;
	e->sq_seq = sq_seq;
	e->solicited = solicited;
	cq->count++;

	/* Solicited-only arming also fires on error completions. */
	if (cq->arm == FP_CQ_ARM_ANY ||
	    (cq->arm == FP_CQ_ARM_SOLICITED && (solicited || wc->status != IBV_WC_SUCCESS))) {
		cq->arm = FP_CQ_DISARMED;
		if (cq->channel)
			verbs_comp_channel_notify(cq->channel, &cq->vcq.cq);
	}
}

/* Drop the CQEs of a QP that is reset or destroyed, as drivers clean CQs. */
void fp__cq_purge_qp(struct fp_cq *cq, struct fp_rqp *real)
{
	int i, kept = 0;

	for (i = 0; i < cq->count; i++) {
		struct fp_cqe *e = &cq->ring[(cq->head + i) % cq->size];

		if (e->sq_qp == real || e->wc.qp_num == real->qpn)
			continue;
		cq->ring[(cq->head + kept) % cq->size] = *e;
		kept++;
	}
	cq->count = kept;
}

int fp_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct fp_cq *cq = to_fp_cq(ibcq);
	int err, n = 0;

	err = fp__op_begin(FP_OP_POLL_CQ);
	if (err)
		goto out;
	while (n < num_entries && cq->count) {
		struct fp_cqe *e = &cq->ring[cq->head];
		uint32_t byte_len = wc[n].byte_len;

		/* a driver may leave byte_len where the verbs do not define it */
		wc[n] = e->wc;
		if (!fp_prof_wc_byte_len(&e->wc, e->sq_qp != NULL))
			wc[n].byte_len = byte_len;
		n++;
		/* A polled send CQE frees its WQE and the unsignaled ones before it. */
		if (e->sq_qp && e->sq_qp->sq_retired < e->sq_seq)
			e->sq_qp->sq_retired = e->sq_seq;
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
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
	if (!solicited_only)
		cq->arm = FP_CQ_ARM_ANY;
	else if (cq->arm != FP_CQ_ARM_ANY)
		cq->arm = FP_CQ_ARM_SOLICITED;
out:
	fp__op_end(cq->ctx, FP_OP_REQ_NOTIFY_CQ, FP_SUBJ_CQ, cq, err,
		   "cq=%u solicited_only=%d", ibcq->handle, solicited_only);
	return err;
}

int fp_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct fp_cq *cq = to_fp_cq(ibcq);
	int max = cq->ctx->spec->attr.max_cqe;
	struct fp_cqe *ring;
	int err, i;

	err = fp__op_begin(FP_OP_RESIZE_CQ);
	if (err)
		goto out;
	if (cqe < 1 || (max > 0 && cqe > max) || cqe < cq->count) {
		err = EINVAL;
		goto out;
	}
	ring = calloc((size_t)cqe, sizeof(*ring));
	if (!ring) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->size];
	free(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->size = cqe;
	cq->vcq.cq.cqe = cqe;
	cq->overflowed = false;
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
