/* SPDX-License-Identifier: MIT */
/*
 * Memory windows: alloc and dealloc (types 1 and 2), their binding (type 1
 * through ibv_bind_mw, type 2 through an IBV_WR_BIND_MW WR or the new
 * API's ibv_wr_bind_mw) and a type 2 window's local invalidation
 * (IBV_WR_LOCAL_INV, ibv_wr_local_inv). The window's key is in the fake
 * HCA's key table (engine/registry.c), which grants remote access through a
 * bound window as through a region.
 *
 * Binds and local invalidations are work requests the HCA executes without
 * the wire: here they run when posted and complete on the send CQ as
 * IBV_WC_BIND_MW / IBV_WC_LOCAL_INV in the send queue's order (fe_sq_local,
 * engine/requester.c). SEND_WITH_INV invalidates at the responder
 * (fe_key_invalidate, engine/registry.c).
 *
 * The fake kernel has no window object: a window holds its PD there as a
 * region of no access would, so that a PD with windows cannot go (EBUSY).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"

struct ibv_mw *fp_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct fp_pd *pd = fp__pd_prot(ibpd);
	struct fp_context *ctx = pd->ctx;
	struct fp_mw *mw = NULL;
	int err;

	err = fp__op_begin(FP_OP_ALLOC_MW);
	if (!err && !fp__mw_capable(ctx))
		err = EOPNOTSUPP;			/* a device without windows */
	if (!err && type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) /* @rule MW-01 */
		err = EINVAL;
	/* a type 2 window needs a device that binds them (2A or 2B) */
	if (!err && type == IBV_MW_TYPE_2 && /* @rule MW-01 */
	    !(fp_prof_cap_flags(ctx->spec->attr.device_cap_flags) &
	      (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)))
		err = EINVAL;
	if (!err && !(mw = calloc(1, sizeof(*mw))))
		err = ENOMEM;
	if (!err)
		err = fk_obj_create_on_pd(ctx->fk, FK_O_MR, 0, ibpd->handle, &mw->mw.handle);
	if (err) {
		free(mw);
		mw = NULL;
		goto out;
	}
	mw->ctx = ctx;
	mw->pd = pd;
	mw->e.pd = fp__pd_ident(pd);
	mw->e.type = type;
	fe_mw_add(ctx->hca, &mw->e);
	mw->mw.rkey = mw->e.rkey;
	pd->usecnt++;
	fp_list_add_tail(&ctx->mws, &mw->link);
out:
	fp__op_end(ctx, FP_OP_ALLOC_MW, FP_SUBJ_NONE, NULL, err, "type=%d rkey=%#x", type,
		   mw ? mw->e.rkey : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &mw->mw;
}

static void fp_mw_free(struct fp_mw *mw)
{
	fe_mw_del(mw->ctx->hca, &mw->e);
	mw->pd->usecnt--;
	fp_list_del(&mw->link);
	free(mw);
}

int fp_dealloc_mw(struct ibv_mw *ibmw)
{
	struct fp_mw *mw = to_fp_mw(ibmw);
	struct fp_context *ctx = mw->ctx;
	uint32_t rkey = mw->e.rkey;
	int err;

	err = fp__op_begin(FP_OP_DEALLOC_MW);
	if (!err)
		err = fk_obj_destroy(ctx->fk, FK_O_MR, ibmw->handle);
	if (!err)
		fp_mw_free(mw);
	fp__op_end(ctx, FP_OP_DEALLOC_MW, FP_SUBJ_NONE, NULL, err, "rkey=%#x", rkey);
	return err;
}

void fp__mw_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->mws)
		fp_mw_free(fp_container_of(p, struct fp_mw, link));
}

/*
 * A bind as rxe's kernel checks it (profile rxe; linux v6.1
 * drivers/infiniband/sw/rxe/rxe_mw.c rxe_bind_mw, rxe_check_bind_mw,
 * rxe_do_bind_mw): a type 1 window takes no zero-based access; a type 2
 * window must be in the QP's PD and given a region and a length
 * (o10-37.2.40: a length of 0 is an error, not an unbind); with no length
 * and no region (type 1) the window is unbound unchecked. The region: not
 * zero-based, registered with MW_BIND, local write for remote write or
 * atomic access; a zero-based window needs only its length within the
 * region's, another its range inside the region. The region's PD is never
 * compared with the QP's or the window's (rxe_mw.c:90-132), nor a type 1
 * window's PD with the QP's (:53-65): ibv_bind_mw, the application's
 * inline verb, refuses a type 1 window and a region of different PDs
 * itself (rdma-core v44.0 libibverbs/verbs.h:2663, EPERM), so only a type
 * 2 window is bound to a region of another PD (seen on Debian 12's rxe0:
 * t4101 bind_mw_refuses_a_region_of_another_pd, a known deviation).
 * rdma-core v44.0 providers/rxe/rxe.c wr_bind_mw and convert_send_wr pass
 * the WR's fields through unchecked; only ibv_bind_mw refuses a zero-based
 * window itself (rxe.c:180, fp_bind_mw). Seen on Debian 12's rxe0
 * (ibvct-verbs-gen seed 1): a type 2 bind of length 0 completes
 * MW_BIND_ERR, a zero-based one of the region's length or less SUCCESS.
 * Linux 6.12's rxe compares the PDs as C10-72 says (MW_BIND_PD below).
 */
/* The window access rxe 6.12 takes (rxe_verbs.h RXE_ACCESS_SUPPORTED_MW:
 * its region set and zero-based; IB_ACCESS_OPTIONAL is libibverbs' range) */
#define FP_RXE_MW_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | \
			  IBV_ACCESS_ON_DEMAND | IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT | \
			  IBV_ACCESS_OPTIONAL_RANGE)

static enum ibv_wc_status fp_mw_bind_check_rxe(const struct fe_qp *r, const struct fp_mw *mw,
					       const struct ibv_mw_bind_info *b)
{
	const struct fe_mr *mr;

	if (mw->e.type == IBV_MW_TYPE_1 && (b->mw_access_flags & IBV_ACCESS_ZERO_BASED))
		return IBV_WC_MW_BIND_ERR;
	if (mw->e.type == IBV_MW_TYPE_2 &&
	    (mw->e.pd != r->pd || !b->mr || !b->length))
		return IBV_WC_MW_BIND_ERR;
	/* Linux 6.12 (ibvct-release.def MW_BIND_PD): C10-72 for a type 1
	 * window too, and access bits it does not know fail the bind */
	if (fp_prof_mw_bind_pd_checked() &&
	    (mw->e.pd != r->pd || (b->mw_access_flags & ~FP_RXE_MW_ACCESS)))
		return IBV_WC_MW_BIND_ERR;
	if (!b->length)
		return IBV_WC_SUCCESS;
	if (!b->mr)
		return IBV_WC_MW_BIND_ERR;
	mr = &to_fp_mr(b->mr)->e;
	/* Linux 6.12: the region's PD is the QP's too (MW_BIND_PD) */
	if (mr->pd != r->pd && fp_prof_mw_bind_pd_checked())
		return IBV_WC_MW_BIND_ERR;
	if ((mr->access & IBV_ACCESS_ZERO_BASED) || !(mr->access & IBV_ACCESS_MW_BIND))
		return IBV_WC_MW_BIND_ERR;
	if ((b->mw_access_flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return IBV_WC_MW_BIND_ERR;
	if (b->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return b->length > mr->length ? IBV_WC_MW_BIND_ERR : IBV_WC_SUCCESS;
	if (b->addr < mr->iova || b->addr + b->length > mr->iova + mr->length ||
	    b->addr + b->length < b->addr)
		return IBV_WC_MW_BIND_ERR;
	return IBV_WC_SUCCESS;
}

/*
 * A bind as the HCA checks it (IBA vol 1 10.6.7.2.x; rdma-core v44.0
 * providers/mlx5/qp.c:1585 _build_umr_wqe, :3679 mlx5_bind_mw): the
 * window, the region and the QP in one PD, the region registered with
 * IBV_ACCESS_MW_BIND, the range inside it, no zero-based window; remote
 * write or atomic access needs the region's local write (the profile says
 * whether the HCA looks at IBV_ACCESS_MW_BIND). The status of the
 * completion; a bind with no region or no length unbinds.
 */
static enum ibv_wc_status fp_mw_bind_check(const struct fe_qp *r, const struct fp_mw *mw,
					   const struct ibv_mw_bind_info *b)
{
	const struct fe_mr *mr;

	if (fp__quirk(FP_Q_MW_BIND_UNCHECKED))
		return IBV_WC_SUCCESS;
	if (fp_prof_mw_bind_rxe())
		return fp_mw_bind_check_rxe(r, mw, b);
	if (!b->mr || !b->length)
		return IBV_WC_SUCCESS;
	mr = &to_fp_mr(b->mr)->e;
	if (mw->e.pd != r->pd || /* @rule MW-02 */
	    (mr->pd != r->pd && !fp__quirk(FP_Q_MW_BIND_MR_PD_UNCHECKED)))
		return IBV_WC_MW_BIND_ERR;
	if ((fp_prof_mw_bind_access() && !(mr->access & IBV_ACCESS_MW_BIND)) ||
	    (b->mw_access_flags & IBV_ACCESS_ZERO_BASED) ||
	    b->addr < mr->iova || b->addr + b->length > mr->iova + mr->length ||
	    b->addr + b->length < b->addr)
		return IBV_WC_MW_BIND_ERR;
	if ((b->mw_access_flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return IBV_WC_MW_BIND_ERR;
	return IBV_WC_SUCCESS;
}

/* Run a bind WR (type 1 or 2) on QP r: the CQE's status. */
static enum ibv_wc_status fp_mw_do_bind(struct fe_qp *r, struct fp_mw *mw, uint32_t rkey,
					const struct ibv_mw_bind_info *b)
{
	enum ibv_wc_status st = fp_mw_bind_check(r, mw, b);

	if (st != IBV_WC_SUCCESS)
		return st;
	/* a type 2 window takes the key the WR names: its index, a new tag */
	if (mw->e.type == IBV_MW_TYPE_2 && (rkey >> 8) != (mw->e.rkey >> 8))
		return IBV_WC_MW_BIND_ERR;
	if (!b->mr || !b->length) {
		fe_mw_unbind(&mw->e);
		return IBV_WC_SUCCESS;
	}
	/* before the bind, which publishes what the window grants */
	mw->e.range_is_region = fp_prof_mw_range_is_the_region();
	fe_mw_bind_range(&mw->e, &to_fp_mr(b->mr)->e, rkey, b->addr, b->length,
			 (int)b->mw_access_flags, mw->e.type == IBV_MW_TYPE_2 ? r : NULL);
	return IBV_WC_SUCCESS;
}

/* A LOCAL_INV WR: the type 2 window this QP bound with that key. */
static enum ibv_wc_status fp_mw_do_inv(struct fe_qp *r, uint32_t rkey)
{
	struct fe_mw *w = fe_mw_by_rkey(r->dev, rkey);

	if (!w || w->type != IBV_MW_TYPE_2 || !w->bound || w->qp != r) /* @rule MW-04 */
		return fp_prof_local_inv_err();
	if (!fp__quirk(FP_Q_MW_LOCAL_INV_IGNORED))
		fe_mw_unbind(w);
	return IBV_WC_SUCCESS;
}

/*
 * The WRs the HCA runs locally (BIND_MW, LOCAL_INV), from post_send or the
 * new API's batch: 0 when taken (its CQE, if any, on the send CQ), an
 * errno when refused at post (nothing taken), as fe_post_send answers.
 */
int fp__post_local(struct fe_qp *r, const struct fp_swr *s, struct ibv_mw *mw,
		   uint32_t rkey, const struct ibv_mw_bind_info *b)
{
	enum ibv_wc_status st;

	if (r->type != IBV_QPT_RC && r->type != IBV_QPT_UC && r->type != IBV_QPT_XRC_SEND)
		return EINVAL;			/* no windows on UD (mlx5 qp.c:3588) */
	if (!fp__mw_capable(fp_rqp_of(r)->ctx))
		return EINVAL;			/* an opcode this device does not build */
	if (r->sq_posted - r->sq_retired >= r->cap.max_send_wr)
		return ENOMEM;
	if (s->opcode == IBV_WR_BIND_MW) {
		if (!mw)
			return EINVAL;
		st = r->state == IBV_QPS_ERR || r->state == IBV_QPS_SQE ? IBV_WC_WR_FLUSH_ERR :
		     /* the key the application holds must be the window's (rxe) */
		     fp_prof_mw_bind_key_checked() && mw->rkey != to_fp_mw(mw)->e.rkey ?
		     IBV_WC_MW_BIND_ERR : fp_mw_do_bind(r, to_fp_mw(mw), rkey, b);
	} else {
		st = r->state == IBV_QPS_ERR || r->state == IBV_QPS_SQE ? IBV_WC_WR_FLUSH_ERR :
		     fp_mw_do_inv(r, s->imm);
	}
	fe_sq_local(r, s, st);
	return 0;
}

/* ibv_bind_mw (type 1): a BIND_MW WR on qp; the window's new key is the
 * next tag of its index (ibv_inc_rkey), set once the bind is posted, as
 * mlx5_bind_mw does (rdma-core v44.0 providers/mlx5/qp.c:3679). */
int fp_bind_mw(struct ibv_qp *qp, struct ibv_mw *ibmw, struct ibv_mw_bind *bind)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fe_qp *r = &h->real->e;
	struct fp_swr s;
	uint32_t rkey = ibv_inc_rkey(ibmw->rkey);
	int err;

	err = fp__op_begin(FP_OP_BIND_MW);
	if (!err && (bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED))
		err = EINVAL;
	if (!err && (r->state == IBV_QPS_RESET || r->state == IBV_QPS_INIT ||
		     r->state == IBV_QPS_RTR || h->opened || r->type == IBV_QPT_XRC_RECV))
		err = EINVAL;
	if (!err) {
		memset(&s, 0, sizeof(s));
		s.wr_id = bind->wr_id;
		s.opcode = IBV_WR_BIND_MW;
		s.send_flags = bind->send_flags;
		err = fp__post_local(r, &s, ibmw, rkey, &bind->bind_info);
	}
	if (!err)
		ibmw->rkey = rkey;
	fp__op_end(h->ctx, FP_OP_BIND_MW, FP_SUBJ_QP, h, err, "qpn=%u rkey=%#x", r->qpn, rkey);
	return err;
}
