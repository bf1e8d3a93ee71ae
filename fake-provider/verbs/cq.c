/* SPDX-License-Identifier: MIT */
/*
 * Completion queue verbs: the ring and its arming are the engine's (fe_cq);
 * its notification reaches the completion channel (ops.c upcalls).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"

static void fp_cqx_setup(struct fp_cq *cq, uint64_t wc_flags);

static struct fp_cq *fp_cq_new(struct fp_context *ctx, int cqe, struct ibv_comp_channel *channel,
				int comp_vector, int *errp)
{
	int max = ctx->spec->attr.max_cqe;
	struct fp_cq *cq;
	int err;

	if (cqe < 1 || (max > 0 && cqe > max) || comp_vector < 0 ||
	    comp_vector >= ctx->vctx.context.num_comp_vectors) {
		err = EINVAL;
		goto err_out;
	}
	cqe = fp_prof_cq_size(cqe);	/* the queue the driver makes */
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		err = ENOMEM;
		goto err_out;
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
	return cq;

err_free_ring:
	fe_cq_free(&cq->e);
err_free_cq:
	free(cq);
err_out:
	*errp = err;
	return NULL;
}

struct ibv_cq *fp_create_cq(struct ibv_context *context, int cqe,
			    struct ibv_comp_channel *channel, int comp_vector)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_cq *cq = NULL;
	int err;

	err = fp__op_begin(FP_OP_CREATE_CQ);
	if (!err)
		cq = fp_cq_new(ctx, cqe, channel, comp_vector, &err);
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
	fp__pdbuf_put(&cq->pdbuf);
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

/* The wc_flags as the driver hands them over: rxe flags an invalidation
 * with the kernel's bit (profile.c fp_prof_wc_with_inv). */
static void fp_cq_wc_flags(struct ibv_wc *wc)
{
	if (wc->wc_flags & IBV_WC_WITH_INV)
		wc->wc_flags = (wc->wc_flags & ~(unsigned int)IBV_WC_WITH_INV) | fp_prof_wc_with_inv();
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
		fp_cq_wc_flags(&wc[n]);
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
	cqe = fp_prof_cq_size(cqe);
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

/* ---- extended CQs (ibv_create_cq_ex) ---------------------------------------- */
/*
 * The driver's checks, as mlx5's create_cq (rdma-core v44.0
 * providers/mlx5/verbs.c:964): no CQE count is EINVAL, a comp_mask or flag
 * it lacks EINVAL, a wc_flags bit it does not report EOPNOTSUPP. This
 * device reports the standard fields (IBV_WC_STANDARD_FLAGS) and, when it
 * has a completion clock, the timestamp (fp_prof_cq_wc_flags; CQX-06): no
 * VLANs, flow tags or tag matching. The poll functions read the
 * engine's ring as fp_poll_cq does, one CQE at a time: start_poll and
 * next_poll take the next one under the plugin's lock into cq->cur, where
 * the read functions find it; end_poll has nothing left to release.
 */
struct ibv_cq_ex *fp_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t masks = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	const uint32_t flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_pdbuf buf = { 0 };
	struct fp_cq *cq = NULL;
	int err;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	err = fp__op_begin(FP_OP_CREATE_CQ);
	if (!err && fp__ext_off(FP_X_CQ_EX))
		err = EOPNOTSUPP;		/* a driver without the op */
	if (!err && fp_prof_cq_ex_wc_first()) {
		/* rxe: wc_flags, then the command layer's comp_mask (errno
		 * left as it was), no flag checked, then the kernel's cqe */
		if ((attr->wc_flags & ~fp_prof_cq_wc_flags(ctx->spec)) &&
		    !fp__quirk(FP_Q_CQ_EX_ANY_WC_FLAGS))
			err = EOPNOTSUPP;
		else if (attr->comp_mask & ~masks)
			err = FP_PROF_NO_ERRNO;
	}
	if (!err && (!attr->cqe || (attr->comp_mask & ~masks) || /* @rule CQX-01 */
		     ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (attr->flags & ~flags) &&
		      !fp_prof_cq_ex_wc_first())))
		err = EINVAL;
	if (!err && (attr->wc_flags & ~fp_prof_cq_wc_flags(ctx->spec)) && /* @rule CQX-01 */
	    !fp__quirk(FP_Q_CQ_EX_ANY_WC_FLAGS))
		err = EOPNOTSUPP;
	if (!err)
		err = fp_prof_cq_wc_combo(attr->wc_flags);
	if (!err && (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) && attr->parent_domain &&
	    !fp__pd_is_parent(attr->parent_domain))
		err = EINVAL;			/* mlx5: the PD must be a parent domain */
	if (!err && attr->cqe > INT32_MAX)
		err = EINVAL;
	/* on a parent domain, the CQ buffer comes from its allocator */
	if (!err && (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD))
		err = fp__pdbuf_get(&buf, attr->parent_domain, (size_t)attr->cqe * 64, FP_RES_TYPE_CQ);
	if (!err)
		cq = fp_cq_new(ctx, (int)attr->cqe, attr->channel, (int)attr->comp_vector, &err);
	if (cq) {
		fp_cqx_setup(cq, attr->wc_flags);
		cq->pdbuf = buf;
	} else {
		fp__pdbuf_put(&buf);
	}
	fp__op_end(ctx, FP_OP_CREATE_CQ, FP_SUBJ_CQ, cq, err,
		   "ex cqe=%u wc_flags=%#llx cq=%u", attr->cqe, (unsigned long long)attr->wc_flags,
		   cq ? cq->vcq.cq.handle : 0);
	if (err)
		return fp__create_failed(err, 0);
	return &cq->vcq.cq_ex;
}

static inline struct fp_cq *to_fp_cqx(struct ibv_cq_ex *c)
{
	return fp_container_of(c, struct fp_cq, vcq.cq_ex);
}

/* The next CQE into cur: 0, ENOENT when there is none, or a fault's errno. */
static int fp_cqx_next(struct fp_cq *cq)
{
	const struct fp_cqe *e;
	int err;

	err = fp__op_begin(FP_OP_POLL_CQ);
	if (!err) {
		e = fe_cq_peek(&cq->e);
		if (!e) { /* @rule CQX-03 */
			err = ENOENT;
		} else {
			uint32_t byte_len = cq->cur.byte_len;

			cq->cur = e->wc;
			cq->cur_ts = e->ts;
			if (!fp_prof_wc_byte_len(&e->wc, e->sq_qp != NULL))
				cq->cur.byte_len = byte_len;
			fp_cq_wc_flags(&cq->cur);
			fe_cq_pop(&cq->e);
			if (!fp__quirk(FP_Q_CQ_EX_STALE_WC) || !cq->cur_valid) {
				cq->vcq.cq_ex.status = cq->cur.status;
				cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
				cq->shown = cq->cur;
				cq->shown_ts = cq->cur_ts;
			}
			cq->cur_valid = true;
		}
	}
	fp__op_end(cq->ctx, FP_OP_POLL_CQ, FP_SUBJ_CQ, cq, err == ENOENT ? 0 : err,
		   "cq=%u ex", cq->vcq.cq.handle);
	return err;
}

/*
 * rxe's consumer index one past the producer (profile.c
 * fp_prof_cq_poll_overrun): start_poll reads the stale slot past the last
 * CQE while none came (shown as a zeroed CQE: 0, not ENOENT), and skips
 * the next CQE once it comes (it is lost; ENOENT, the indices meet again).
 * 1: nothing of that applies.
 */
static int fp_cqx_overrun(struct fp_cq *cq)
{
	if (!cq->ovr_ahead)
		return 1;
	if (fe_cq_peek(&cq->e)) {
		fe_cq_pop(&cq->e);
		cq->ovr_ahead = false;
		return ENOENT;
	}
	memset(&cq->shown, 0, sizeof(cq->shown));
	cq->shown_ts = 0;
	cq->vcq.cq_ex.status = IBV_WC_SUCCESS;
	cq->vcq.cq_ex.wr_id = 0;
	return 0;
}

static int fp_cqx_start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{
	struct fp_cq *cq = to_fp_cqx(c);
	int ret;

	if (attr->comp_mask)
		return EINVAL;			/* mlx5: no start_poll attributes */
	cq->ovr_ended = false;
	ret = fp_cqx_overrun(cq);
	return ret != 1 ? ret : fp_cqx_next(cq);
}

static int fp_cqx_next_poll(struct ibv_cq_ex *c)
{
	struct fp_cq *cq = to_fp_cqx(c);
	int ret = fp_cqx_next(cq);

	/* rxe: the batch's end stores the consumer index here already */
	if (ret == ENOENT && fp_prof_cq_poll_overrun())
		cq->ovr_ended = true;
	return ret;
}

static void fp_cqx_end_poll(struct ibv_cq_ex *c)
{
	struct fp_cq *cq = to_fp_cqx(c);

	/* each CQE was taken under the lock already: nothing held here; rxe
	 * advances the consumer index once more */
	if (cq->ovr_ended)
		cq->ovr_ahead = true;
	cq->ovr_ended = false;
}

#define FP_CQX_READ(name, type, expr)					\
	static type fp_cqx_read_##name(struct ibv_cq_ex *c)		\
	{								\
		const struct ibv_wc *wc = &to_fp_cqx(c)->shown;		\
		return (type)(expr);					\
	}

FP_CQX_READ(opcode, enum ibv_wc_opcode, wc->opcode)
FP_CQX_READ(vendor_err, uint32_t, wc->vendor_err)
FP_CQX_READ(byte_len, uint32_t, wc->byte_len)
FP_CQX_READ(imm_data, __be32, wc->imm_data)	/* the invalidated rkey with WITH_INV */
FP_CQX_READ(qp_num, uint32_t, wc->qp_num)
FP_CQX_READ(src_qp, uint32_t, wc->src_qp)
FP_CQX_READ(wc_flags, unsigned int, wc->wc_flags)
FP_CQX_READ(slid, uint32_t, wc->slid)
FP_CQX_READ(sl, uint8_t, wc->sl)
FP_CQX_READ(dlid_path_bits, uint8_t, wc->dlid_path_bits)

/* The device clock's count when the CQE was made, in the bits of its mask
 * (rdma-core v44.0 providers/mlx5/cq.c:1581 reads the CQE's 64 bits,
 * providers/mlx4/cq.c:600 its 48; CQX-06). */
static uint64_t fp_cqx_read_completion_ts(struct ibv_cq_ex *c)
{
	const struct fp_cq *cq = to_fp_cqx(c);

	return cq->shown_ts & cq->ts_mask;
}

/* The poll functions, and a read function for each field asked (the rest
 * stay NULL, as mlx5 sets them: rdma-core v44.0 providers/mlx5/cq.c:1671 mlx5_cq_fill_pfns). */
static void fp_cqx_setup(struct fp_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *c = &cq->vcq.cq_ex;

	cq->ex = true;
	c->start_poll = fp_cqx_start_poll;
	c->next_poll = fp_cqx_next_poll;
	c->end_poll = fp_cqx_end_poll;
	c->read_opcode = fp_cqx_read_opcode;
	c->read_vendor_err = fp_cqx_read_vendor_err;
	c->read_wc_flags = fp_cqx_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		c->read_byte_len = fp_cqx_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		c->read_imm_data = fp_cqx_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		c->read_qp_num = fp_cqx_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		c->read_src_qp = fp_cqx_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		c->read_slid = fp_cqx_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		c->read_sl = fp_cqx_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		c->read_dlid_path_bits = fp_cqx_read_dlid_path_bits;
	/* the engine stamps the CQEs of a CQ that asked, on a device with a
	 * clock (under cq_ex_any_wc_flags one without gets no read function) */
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) {
		cq->e.clock_khz = fp_prof_clock(cq->ctx->spec, &cq->ts_mask);
		if (cq->e.clock_khz)
			c->read_completion_ts = fp_cqx_read_completion_ts;
	}
}

void fp__cq_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->cqs)
		fp_cq_free(fp_container_of(p, struct fp_cq, link));
}
