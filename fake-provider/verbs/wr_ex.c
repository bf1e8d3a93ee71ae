/* SPDX-License-Identifier: MIT */
/*
 * The new post-send API (struct ibv_qp_ex, rdma-core v24 and later): the
 * builders an application calls between ibv_wr_start and ibv_wr_complete.
 * Each WR is read into a struct fp_swr here, as post.c reads an
 * ibv_send_wr, and wr_complete hands the batch to the engine's requester
 * (fe_post_send) in order: the same engine path as ibv_post_send, so the
 * results are the same by construction (WRX-07).
 *
 * Error rules, as mlx5 keeps them (rdma-core v44.0 providers/mlx5/qp.c):
 * a builder that cannot take its WR records the batch's first error
 * (1244 _common_wqe_init_op: a full send queue, ENOMEM; 1707 a longer SGE
 * list than the QP's max_send_sge, ENOMEM; 1848 more inline data than
 * max_inline_data, ENOMEM; rxe records ENOSPC there:
 * fp_prof_wrx_full_errno); wr_complete returns that error and posts
 * nothing of the batch (1200 mlx5_send_wr_complete rolls back), else 0;
 * wr_abort drops the batch (1221). A WR the device cannot carry (an opcode
 * of another type, a UD WR without its address, an XRC_SEND WR without
 * its SRQ number, WR-04) fails the whole batch at wr_complete with EINVAL,
 * where mlx5's hardware would fail it with an error completion.
 *
 * Builders are set per QP type, all the type carries whatever send_ops_flags
 * asked (mlx5 qp.c:3588 "Set all supported micro-functions regardless user
 * request"); those the type does not carry stay NULL, as on mlx5.
 *
 * Locking: the builders touch only the QP's batch (the API gives one thread
 * the QP between start and complete); wr_complete is the op that runs
 * under the plugin lock, as post_send does (a post_send fault fails it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"

static inline struct fp_qp *to_fp_qpx(struct ibv_qp_ex *q)
{
	return to_fp_qp(&q->qp_base);
}

static void fp_wrx_fail(struct fp_qpx *x, int err)
{
	if (!x->err)		/* the batch keeps its first error */
		x->err = err;
	x->cur = NULL;
}

static void fp_wrx_drop(struct fp_qpx *x)
{
	int i;

	for (i = 0; i < x->n; i++) {
		free(x->wr[i].sge);
		free(x->wr[i].inl);
	}
	x->n = 0;
	x->cur = NULL;
}

/* A new WR of the batch, from the QP's wr_id and wr_flags (mlx5 reads them
 * when the builder runs). */
static struct fp_wrx *fp_wrx_new(struct ibv_qp_ex *q, enum ibv_wr_opcode op)
{
	struct fp_qp *h = to_fp_qpx(q);
	struct fp_qpx *x = h->qpx;
	const struct fe_qp *r = &h->real->e;
	struct fp_wrx *w;

	x->cur = NULL;
	if (x->err)
		return NULL;
	/* full: the WQEs outstanding and this batch's fill the queue */
	if (r->sq_posted - r->sq_retired + (uint64_t)x->n + /* @rule WRX-04 */
	    fp__quirk(FP_Q_WRX_FULL_ONE_EARLY) >= r->cap.max_send_wr) {
		fp_wrx_fail(x, fp_prof_wrx_full_errno());
		return NULL;
	}
	if (x->n == x->cap) {
		int cap = x->cap ? 2 * x->cap : 8;
		struct fp_wrx *nw = realloc(x->wr, (size_t)cap * sizeof(*nw));

		if (!nw) {
			fp_wrx_fail(x, ENOMEM);
			return NULL;
		}
		x->wr = nw;
		x->cap = cap;
	}
	w = &x->wr[x->n++];
	memset(w, 0, sizeof(*w));
	w->s.wr_id = q->wr_id;
	w->s.send_flags = q->wr_flags & ~(unsigned int)IBV_SEND_INLINE;
	w->s.opcode = op;
	x->cur = w;
	return w;
}

/* ---- builders ------------------------------------------------------------ */
static void fp_wr_send(struct ibv_qp_ex *q)
{
	fp_wrx_new(q, IBV_WR_SEND);
}

static void fp_wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	struct fp_wrx *w = fp_wrx_new(q, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->s.imm = imm;
}

static void fp_wr_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	struct fp_wrx *w = fp_wrx_new(q, IBV_WR_SEND_WITH_INV);

	if (w)
		w->s.imm = rkey;	/* invalidate_rkey shares imm_data's place */
}

static void fp_wr_rdma(struct ibv_qp_ex *q, enum ibv_wr_opcode op, uint32_t rkey,
		       uint64_t addr, __be32 imm)
{
	struct fp_wrx *w = fp_wrx_new(q, op);

	if (!w)
		return;
	w->s.rkey = rkey;
	w->s.remote_addr = addr;
	w->s.imm = imm;
}

static void fp_wr_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	fp_wr_rdma(q, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void fp_wr_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, __be32 imm)
{
	fp_wr_rdma(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void fp_wr_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	fp_wr_rdma(q, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void fp_wr_atomic(struct ibv_qp_ex *q, enum ibv_wr_opcode op, uint32_t rkey,
			 uint64_t addr, uint64_t compare_add, uint64_t swap)
{
	struct fp_wrx *w = fp_wrx_new(q, op);

	if (!w)
		return;
	w->s.rkey = rkey;
	w->s.remote_addr = addr;
	w->s.compare_add = compare_add;
	w->s.swap = swap;
}

static void fp_wr_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
				 uint64_t compare, uint64_t swap)
{
	fp_wr_atomic(q, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void fp_wr_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
				   uint64_t add)
{
	fp_wr_atomic(q, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

/* ATOMIC_WRITE and FLUSH: rxe's builders (rdma-core v44.0
 * providers/rxe/rxe.c:925 wr_atomic_write: the 8 bytes copied into the WQE
 * now; v56.1 :917 wr_flush, since v45). Whether the HCA executes them is
 * the kernel's (the engine's ext_ops: ref-impl's ibvct-release.def
 * ATOMIC_WRITE, WR_FLUSH). */
static void fp_wr_atomic_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr,
			       const void *atomic_wr)
{
	struct fp_wrx *w = fp_wrx_new(q, IBV_WR_ATOMIC_WRITE);

	if (!w)
		return;
	w->s.rkey = rkey;
	w->s.remote_addr = addr;
	memcpy(&w->s.compare_add, atomic_wr, sizeof(w->s.compare_add));
	w->data_set = true;
}

static void fp_wr_flush(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, size_t len,
			uint8_t type, uint8_t level)
{
	struct fp_wrx *w = fp_wrx_new(q, IBV_WR_FLUSH);

	if (!w)
		return;
	w->s.rkey = rkey;
	w->s.remote_addr = addr;
	w->s.flush_len = len;
	w->s.flush_type = type;
	w->s.flush_level = level;
	w->data_set = true;
}

static void fp_wr_local_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	struct fp_wrx *w = fp_wrx_new(q, IBV_WR_LOCAL_INV);

	if (w)
		w->s.imm = rkey;
}

static void fp_wr_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey,
			  const struct ibv_mw_bind_info *b)
{
	struct fp_wrx *w = fp_wrx_new(q, IBV_WR_BIND_MW);

	if (!w)
		return;
	w->mw = mw;
	w->mw_rkey = rkey;
	w->bind = *b;
	w->data_set = true;
}

/* ---- setters ------------------------------------------------------------- */
/* rxe's WR length from its SGE-list builder (profile.c
 * fp_prof_sge_list_first_length): the data gathered in order for len
 * bytes, the SGEs past them never read; more than the SGEs hold and the
 * kernel's copy fails the WR (linux v6.1 rxe_req.c finish_packet). */
static void fp_wrx_rxe_sge_length(struct fp_wrx *w, uint64_t len)
{
	int i;

	for (i = 0; i < w->s.num_sge && len; i++) {
		if (w->sge[i].length > len)
			w->sge[i].length = (uint32_t)len;
		len -= w->sge[i].length;
	}
	if (len)
		w->s.fail = IBV_WC_LOC_QP_OP_ERR;
	else
		w->s.num_sge = i;
}

static void fp_wr_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *sg)
{
	struct fp_qp *h = to_fp_qpx(q);
	struct fp_qpx *x = h->qpx;
	struct fp_wrx *w = x->cur;

	if (!w)
		return;
	if (n > h->real->e.cap.max_send_sge) { /* @rule WRX-04 */
		fp_wrx_fail(x, fp_prof_wrx_full_errno());
		return;
	}
	free(w->sge);
	w->sge = NULL;
	if (n) {
		w->sge = malloc(n * sizeof(*sg));
		if (!w->sge) {
			fp_wrx_fail(x, ENOMEM);
			return;
		}
		memcpy(w->sge, sg, n * sizeof(*sg));
	}
	w->s.num_sge = (int)n;
	if (n && fp_prof_sge_list_first_length())
		fp_wrx_rxe_sge_length(w, n * (uint64_t)sg[0].length);
	w->data_set = true;
}

static void fp_wr_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	/* mlx5 builds no data segment for a zero length (qp.c:1635) */
	fp_wr_set_sge_list(q, length ? 1 : 0, &sge);
}

/* Inline data from n buffers; list: through ibv_wr_set_inline_data_list,
 * which rxe never sums up (profile.c fp_prof_inline_list_unsummed): each
 * buffer is checked alone, and the WR carries no data. */
static void fp_wr_inline(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *b, bool list)
{
	struct fp_qp *h = to_fp_qpx(q);
	struct fp_qpx *x = h->qpx;
	struct fp_wrx *w = x->cur;
	bool unsummed = list && fp_prof_inline_list_unsummed();
	size_t i, len = 0, off = 0, most = 0;

	if (!w)
		return;
	for (i = 0; i < n; i++) {
		len += b[i].length;
		if (b[i].length > most)
			most = b[i].length;
	}
	if ((unsummed ? most : len) > h->real->e.cap.max_inline_data) { /* @rule WRX-04 */
		fp_wrx_fail(x, fp_prof_wrx_full_errno());
		return;
	}
	free(w->inl);
	w->inl = malloc(len ? len : 1);
	if (!w->inl) {
		fp_wrx_fail(x, ENOMEM);
		return;
	}
	/* the data is copied now: the caller may reuse its buffers at once */
	for (i = 0; i < n; i++) {
		if (b[i].length)
			memcpy(w->inl + off, b[i].addr, b[i].length);
		off += b[i].length;
	}
	w->inl_len = unsummed ? 0 : len;
	w->s.send_flags |= IBV_SEND_INLINE;
	/* rxe: the data is in the WQE, IBV_SEND_INLINE is the application's
	 * (profile.c fp_prof_inline_needs_flag) */
	if (w->inl_len && fp_prof_inline_needs_flag() && !(q->wr_flags & IBV_SEND_INLINE))
		w->s.fail = IBV_WC_LOC_QP_OP_ERR;
	w->data_set = true;
}

static void fp_wr_set_inline_data_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *b)
{
	fp_wr_inline(q, n, b, true);
}

static void fp_wr_set_inline_data(struct ibv_qp_ex *q, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	fp_wr_inline(q, 1, &b, false);
}

static void fp_wr_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct fp_wrx *w = to_fp_qpx(q)->qpx->cur;

	if (!w)
		return;
	w->s.ah = ah ? &to_fp_ah(ah)->attr : NULL;
	w->s.remote_qpn = qpn;
	w->s.remote_qkey = qkey;
	w->addr_set = true;
}

static void fp_wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	struct fp_wrx *w = to_fp_qpx(q)->qpx->cur;

	if (!w)
		return;
	w->s.remote_srqn = srqn;		/* WR-04, WRX-05 */
	w->addr_set = true;
}

/* ---- start, complete, abort ----------------------------------------------- */
static void fp_wr_start(struct ibv_qp_ex *q)
{
	struct fp_qpx *x = to_fp_qpx(q)->qpx;

	fp_wrx_drop(x);
	x->err = 0;
	x->open = true;
}

static void fp_wr_abort(struct ibv_qp_ex *q)
{
	struct fp_qp *h = to_fp_qpx(q);
	struct fp_qpx *x = h->qpx;

	if (fp__quirk(FP_Q_WR_ABORT_POSTS) && x->open) { /* @rule WRX-03 */
		/* the quirk's driver rings the doorbell anyway */
		q->wr_complete(q);
		return;
	}
	fp_wrx_drop(x);				/* WRX-03 */
	x->err = 0;
	x->open = false;
}

/* What the device refuses of a whole batch before any of it is posted. */
static int fp_wrx_check(const struct fe_qp *r, const struct fp_qpx *x)
{
	int i;

	if (r->state == IBV_QPS_RESET || r->state == IBV_QPS_INIT || r->state == IBV_QPS_RTR)
		return EINVAL;			/* as post_send: cannot send */
	if (r->sq_posted - r->sq_retired + (uint64_t)x->n > r->cap.max_send_wr)
		return ENOMEM;
	for (i = 0; i < x->n; i++) {
		const struct fp_wrx *w = &x->wr[i];

		if (w->s.opcode == IBV_WR_BIND_MW || w->s.opcode == IBV_WR_LOCAL_INV)
			continue;		/* the local WRs check themselves (mw.c) */
		if (!fe_opcode_ok(r->type, w->s.opcode))
			return EINVAL;
		if ((r->type == IBV_QPT_UD || r->type == IBV_QPT_XRC_SEND) && !w->addr_set)
			return EINVAL;		/* @rule WR-04 */
		if (r->type == IBV_QPT_UD && !w->s.ah)
			return EINVAL;
	}
	return 0;
}

/* The SGEs of a posted WQE live in the QP's ring until it retires: the
 * engine may read them again (a READ's response, a retransmission). */
static int fp_wrx_ring(struct fp_qpx *x, const struct fe_qp *r)
{
	size_t per = r->cap.max_send_sge ? r->cap.max_send_sge : 1;

	if (x->ring || !r->cap.max_send_wr)
		return 0;
	x->ring_per = per;
	x->ring = calloc((size_t)r->cap.max_send_wr * per, sizeof(*x->ring));
	return x->ring ? 0 : ENOMEM;
}

static int fp_wr_complete(struct ibv_qp_ex *q)
{
	struct fp_qp *h = to_fp_qpx(q);
	struct fp_qpx *x = h->qpx;
	struct fe_qp *r = &h->real->e;
	int err, i, posted = 0;

	err = fp__op_begin(FP_OP_POST_SEND);
	if (!err && x->err && !fp__quirk(FP_Q_WR_COMPLETE_PARTIAL)) /* @rule WRX-03 */
		err = x->err;			/* nothing of the batch is posted */
	if (!err && !x->err)
		err = fp_wrx_check(r, x);
	if (!err)
		err = fp_wrx_ring(x, r);
	for (i = 0; !err && i < x->n; i++) {
		struct fp_wrx *w = &x->wr[i];
		struct ibv_sge *slot;
		struct ibv_sge inl;

		if (w->s.send_flags & IBV_SEND_INLINE) {
			/* gathered from our copy while the engine posts it */
			inl = (struct ibv_sge){ .addr = (uintptr_t)w->inl,
						.length = (uint32_t)w->inl_len };
			w->s.sg_list = &inl;
			w->s.num_sge = 1;
		} else if (w->s.num_sge) {
			slot = x->ring + ((r->sq_posted + 1) % r->cap.max_send_wr) * x->ring_per;
			memcpy(slot, w->sge, (size_t)w->s.num_sge * sizeof(*slot));
			w->s.sg_list = slot;
		}
		if (w->s.opcode == IBV_WR_BIND_MW)
			err = fp__post_local(r, &w->s, w->mw, w->mw_rkey, &w->bind);
		else if (w->s.opcode == IBV_WR_LOCAL_INV)
			err = fp__post_local(r, &w->s, NULL, 0, NULL);
		else
			err = fe_post_send(r, &w->s);
		if (!err)
			posted++;
	}
	if (fp__quirk(FP_Q_WR_COMPLETE_PARTIAL))
		err = 0;			/* the quirk: what was built went out, 0 */
	fp_wrx_drop(x);
	x->err = 0;
	x->open = false;
	fp__op_end(h->ctx, FP_OP_POST_SEND, FP_SUBJ_QP, h, err, "qpn=%u wr_complete posted=%d",
		   r->qpn, posted);
	return err;
}

/* ---- creation ------------------------------------------------------------ */
/* The send_ops_flags a QP of this type may ask on this device: the
 * driver's sets (fp_prof_send_ops) less what the fake HCA does not carry. */
int fp__qpx_check(struct fp_context *ctx, const struct ibv_qp_init_attr_ex *a)
{
	const uint64_t mw_ops = IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;
	const uint64_t atomics = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	uint64_t sup;
	int err;

	if (!(a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return 0;
	if (fp__ext_off(FP_X_QP_EX))
		return EOPNOTSUPP;		/* a driver without the API */
	if (fp__quirk(FP_Q_SEND_OPS_FLAGS_UNCHECKED))
		return 0;			/* the quirk's driver takes any set on any type */
	err = fp_prof_send_ops(a->qp_type, &sup);
	if (err) /* @rule WRX-02 */
		return err;
	if (a->send_ops_flags & ~sup)
		return EOPNOTSUPP;		/* @rule WRX-02 */
	/* windows on a device that has them */
	if (a->send_ops_flags & mw_ops && !fp__mw_capable(ctx))
		return EOPNOTSUPP;
	/* mlx5 qp.c:3565: atomics only on a device with them */
	if (a->send_ops_flags & atomics && ctx->spec->attr.atomic_cap == IBV_ATOMIC_NONE)
		return EOPNOTSUPP;
	return 0;
}

/* After the QP exists: its builders, and the mark ibv_qp_to_qp_ex reads;
 * x (zeroed) becomes the QP's. */
void fp__qpx_init(struct fp_qp *h, const struct ibv_qp_init_attr_ex *a, struct fp_qpx *x)
{
	struct ibv_qp_ex *q = &h->vqp.qp_ex;
	enum ibv_qp_type t = a->qp_type;

	h->qpx = x;
	h->qpx->ops = a->send_ops_flags;
	q->wr_start = fp_wr_start;
	q->wr_complete = fp_wr_complete;
	q->wr_abort = fp_wr_abort;
	q->wr_send = fp_wr_send;
	q->wr_send_imm = fp_wr_send_imm;
	q->wr_set_sge = fp_wr_set_sge;
	q->wr_set_sge_list = fp_wr_set_sge_list;
	q->wr_set_inline_data = fp_wr_set_inline_data;
	q->wr_set_inline_data_list = fp_wr_set_inline_data_list;
	if (t != IBV_QPT_UD) {
		q->wr_send_inv = fp_wr_send_inv;
		q->wr_rdma_write = fp_wr_rdma_write;
		q->wr_rdma_write_imm = fp_wr_rdma_write_imm;
		q->wr_local_inv = fp_wr_local_inv;
		q->wr_bind_mw = fp_wr_bind_mw;
	}
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND) {
		q->wr_rdma_read = fp_wr_rdma_read;
		q->wr_atomic_cmp_swp = fp_wr_atomic_cmp_swp;
		q->wr_atomic_fetch_add = fp_wr_atomic_fetch_add;
	}
	/* rxe's only: the other drivers' sets lack them (fp_prof_send_ops) */
	if (t == IBV_QPT_RC && (a->send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE))
		q->wr_atomic_write = fp_wr_atomic_write;
	if (t == IBV_QPT_RC && (a->send_ops_flags & IBV_QP_EX_WITH_FLUSH))
		q->wr_flush = fp_wr_flush;
	if (t == IBV_QPT_UD)
		q->wr_set_ud_addr = fp_wr_set_ud_addr;
	if (t == IBV_QPT_XRC_SEND)
		q->wr_set_xrc_srqn = fp_wr_set_xrc_srqn;
	q->comp_mask = 0;
	if (!fp__quirk(FP_Q_QP_EX_NOT_MARKED)) /* @rule WRX-01 */
		h->vqp.comp_mask |= VERBS_QP_EX;
}

void fp__qpx_free(struct fp_qp *h)
{
	if (!h->qpx)
		return;
	fp_wrx_drop(h->qpx);
	free(h->qpx->wr);
	free(h->qpx->ring);
	free(h->qpx);
	h->qpx = NULL;
}
