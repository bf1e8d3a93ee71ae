/* SPDX-License-Identifier: MIT */
/*
 * The HCA's queues: receive WQE storage (a QP's receive queue or an SRQ's)
 * and completion queue rings with their arming (any / solicited only).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_engine.h"

/* Slot i after head of a ring of n (i < n): no division on the data path. */
static int fe_ring_at(int head, int i, int n)
{
	int k = head + i;

	return k >= n ? k - n : k;
}

/* ---- receive WQE storage ------------------------------------------------- */
int fe_rq_init(struct fp_rq *rq, int max_wr, int max_sge)
{
	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->head = rq->count = 0;
	rq->stride = sizeof(struct fp_rwqe) + (size_t)(max_sge > 0 ? max_sge : 1) *
		     sizeof(struct ibv_sge);
	rq->buf = calloc((size_t)(max_wr > 0 ? max_wr : 1), rq->stride);
	return rq->buf ? 0 : ENOMEM;
}

void fe_rq_free(struct fp_rq *rq)
{
	free(rq->buf);
	rq->buf = NULL;
	rq->count = 0;
}

static struct fp_rwqe *fe_rq_at(struct fp_rq *rq, int i)
{
	return (struct fp_rwqe *)(void *)(rq->buf + (size_t)(fe_ring_at(rq->head, i, rq->max_wr)) *
					  rq->stride);
}

int fe_rq_post(struct fp_rq *rq, const struct ibv_recv_wr *wr)
{
	struct fp_rwqe *w;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > rq->max_sge)
		return EINVAL;
	if (rq->count >= rq->max_wr)
		return ENOMEM;
	w = fe_rq_at(rq, rq->count);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
	rq->count++;
	return 0;
}

bool fe_rq_pop(struct fp_rq *rq, struct fp_rwqe **out)
{
	if (!rq->count)
		return false;
	*out = fe_rq_at(rq, 0);
	rq->head = fe_ring_at(rq->head, 1, rq->max_wr);
	rq->count--;
	return true;
}

int fe_rq_resize(struct fp_rq *rq, int max_wr)
{
	struct fp_rq n;
	int i;

	if (fe_rq_init(&n, max_wr, rq->max_sge))
		return ENOMEM;
	for (i = 0; i < rq->count; i++)
		memcpy(n.buf + (size_t)i * n.stride, fe_rq_at(rq, i), rq->stride);
	n.count = rq->count;
	fe_rq_free(rq);
	*rq = n;
	return 0;
}

/* After a receive WQE was taken: the armed limit fires once (SRQX-14). */
void fe_srq_consumed(struct fe_srq *srq)
{
	if (srq->limit && (uint32_t)srq->rq.count < srq->limit) {
		srq->limit = 0;
		fe_up->srq_limit(srq);
	}
}

/* ---- completion queues ---------------------------------------------------- */
int fe_cq_init(struct fe_cq *cq, int size)
{
	memset(cq, 0, sizeof(*cq));
	cq->ring = calloc((size_t)size, sizeof(*cq->ring));
	if (!cq->ring)
		return ENOMEM;
	cq->size = size;
	return 0;
}

void fe_cq_free(struct fe_cq *cq)
{
	free(cq->ring);
	cq->ring = NULL;
	cq->count = 0;
}

int fe_cq_resize(struct fe_cq *cq, int size)
{
	struct fp_cqe *ring;
	int i;

	if (size < cq->count)
		return EINVAL;
	ring = calloc((size_t)size, sizeof(*ring));
	if (!ring)
		return ENOMEM;
	for (i = 0; i < cq->count; i++)
		ring[i] = cq->ring[fe_ring_at(cq->head, i, cq->size)];
	free(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->size = size;
	cq->overflowed = false;
	return 0;
}

uint64_t fe_clock_ticks(uint64_t khz)
{
	/* ns * kHz / 10^6, in 128 bits: a count of 64 bits that wraps, as a
	 * hardware counter does (a timestamp keeps the bits of its mask) */
	return (uint64_t)((unsigned __int128)(uint64_t)fp_now_ns() * khz / 1000000u);
}

/* The stamp of a CQE made now (CQX-06): the clock is monotonic, so the
 * stamps of a CQ never go back in the order its CQEs are made, unless the
 * cq_ts_backwards quirk makes each one a tick before the one before it. */
static uint64_t fe_cq_stamp(struct fe_cq *cq)
{
	uint64_t t = fe_clock_ticks(cq->clock_khz);

	if (cq->ts_last && fp__quirk(FP_Q_CQ_TS_BACKWARDS))
		t = cq->ts_last - 1;
	cq->ts_last = t;
	return t;
}

void fe_cq_push(struct fe_cq *cq, const struct ibv_wc *wc, struct fe_qp *sq_qp,
		uint64_t sq_seq, bool solicited)
{
	struct fp_cqe *e;

	if (cq->count == cq->size) {
		/* Overrun: the CQE is lost and the owner hears about it once. */
		if (!cq->overflowed) {
			cq->overflowed = true;
			fe_up->cq_overrun(cq);
		}
		return;
	}
	e = &cq->ring[fe_ring_at(cq->head, cq->count, cq->size)];
	e->wc = *wc;
	e->sq_qp = sq_qp;
	e->sq_seq = sq_seq;
	e->solicited = solicited;
	e->ts = 0;
	if (cq->clock_khz)	/* @rule CQX-06 */
		e->ts = fe_cq_stamp(cq);
	cq->count++;

	/* Solicited-only arming also fires on error completions. */
	if (cq->arm == FP_CQ_ARM_ANY ||
	    (cq->arm == FP_CQ_ARM_SOLICITED && (solicited || wc->status != IBV_WC_SUCCESS))) {
		cq->arm = FP_CQ_DISARMED;
		fe_up->cq_notify(cq);
	}
}

const struct fp_cqe *fe_cq_peek(const struct fe_cq *cq)
{
	return cq->count ? &cq->ring[cq->head] : NULL;
}

void fe_cq_pop(struct fe_cq *cq)
{
	struct fp_cqe *e = &cq->ring[cq->head];

	/* A polled send CQE frees its WQE and the unsignaled ones before it. */
	if (e->sq_qp && e->sq_qp->sq_retired < e->sq_seq)
		e->sq_qp->sq_retired = e->sq_seq;
	cq->head = fe_ring_at(cq->head, 1, cq->size);
	cq->count--;
}

void fe_cq_arm(struct fe_cq *cq, bool solicited_only)
{
	if (!solicited_only)
		cq->arm = FP_CQ_ARM_ANY;
	else if (cq->arm != FP_CQ_ARM_ANY)
		cq->arm = FP_CQ_ARM_SOLICITED;
}

/* Drop the CQEs of a QP that is reset or destroyed, as drivers clean CQs. */
void fe_cq_purge_qp(struct fe_cq *cq, struct fe_qp *qp)
{
	int i, kept = 0;

	for (i = 0; i < cq->count; i++) {
		struct fp_cqe *e = &cq->ring[fe_ring_at(cq->head, i, cq->size)];

		if (e->sq_qp == qp || e->wc.qp_num == qp->qpn)
			continue;
		cq->ring[fe_ring_at(cq->head, kept, cq->size)] = *e;
		kept++;
	}
	cq->count = kept;
}
