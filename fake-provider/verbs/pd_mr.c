/* SPDX-License-Identifier: MIT */
/*
 * Protection domains and memory regions of the fake device. Keys come from
 * the fabric (device-wide, random-looking, lkey != rkey); a region keeps the
 * caller's buffer and its I/O virtual address for bounds checks.
 */
#include <errno.h>
#include <stdlib.h>

#include "fp_verbs.h"

struct ibv_pd *fp_alloc_pd(struct ibv_context *context)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_pd *pd = NULL;
	int err;

	err = fp__op_begin(FP_OP_ALLOC_PD);
	if (err)
		goto out;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		err = ENOMEM;
		goto out;
	}
	/* the handle is the fake kernel's, as real providers copy it from the
	 * kernel's response */
	err = fk_obj_create(ctx->fk, FK_O_PD, 0, NULL, &pd->pd.handle);
	if (err) {
		free(pd);
		pd = NULL;
		goto out;
	}
	pd->ctx = ctx;
	fp_list_add_tail(&ctx->pds, &pd->link);
out:
	fp__op_end(ctx, FP_OP_ALLOC_PD, FP_SUBJ_NONE, NULL, err, "pd=%u",
		   pd ? pd->pd.handle : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &pd->pd;
}

static void fp_pd_free(struct fp_pd *pd)
{
	fp_list_del(&pd->link);
	free(pd);
}

int fp_dealloc_pd(struct ibv_pd *ibpd)
{
	struct fp_pd *pd = to_fp_pd(ibpd);
	struct fp_context *ctx = pd->ctx;
	uint32_t h = pd->pd.handle;
	int err;

	err = fp__op_begin(FP_OP_DEALLOC_PD);
	if (err)
		goto out;
	/* EBUSY while MRs, AHs, SRQs or QPs hold it: the fake kernel's (SRQX-09) */
	err = fk_obj_destroy(ctx->fk, FK_O_PD, h);
	if (err)
		goto out;
	fp_pd_free(pd);
out:
	fp__op_end(ctx, FP_OP_DEALLOC_PD, FP_SUBJ_NONE, NULL, err, "pd=%u", h);
	return err;
}

struct ibv_mr *fp_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			 uint64_t hca_va, int access)
{
	struct fp_pd *pd = to_fp_pd(ibpd);
	struct fp_context *ctx = pd->ctx;
	struct fp_mr *mr = NULL;
	int err;

	err = fp__op_begin(FP_OP_REG_MR);
	if (err)
		goto out;
	/* The access flags are the fake kernel's to check (ib_check_mr_access:
	 * remote write and atomic need local write, no unknown bit), on the
	 * flags the registration carries; the buffer and size are ours. */
	if ((!addr && length) ||
	    (ctx->spec->attr.max_mr_size && length > ctx->spec->attr.max_mr_size) ||
	    hca_va + length < hca_va) {
		err = EINVAL;
		goto out;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		err = ENOMEM;
		goto out;
	}
	err = fk_obj_create_on_pd(ctx->fk, FK_O_MR, (uint32_t)access, ibpd->handle,
				  &mr->mr.handle);
	if (err) {
		free(mr);
		mr = NULL;
		goto out;
	}
	mr->ctx = ctx;
	mr->pd = pd;
	mr->e.pd = pd;
	mr->e.addr = addr;
	mr->e.length = length;
	mr->e.iova = hca_va;
	mr->e.access = access;
	fe_mr_add(ctx->hca, &mr->e);
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.lkey = mr->e.lkey;
	mr->mr.rkey = mr->e.rkey;
	pd->usecnt++;
	fp_list_add_tail(&ctx->mrs, &mr->link);
out:
	fp__op_end(ctx, FP_OP_REG_MR, FP_SUBJ_NONE, NULL, err,
		   "pd=%u addr=%p len=%zu iova=%#llx access=%#x lkey=%#x rkey=%#x",
		   ibpd->handle, addr, length, (unsigned long long)hca_va, access,
		   mr ? mr->e.lkey : 0, mr ? mr->e.rkey : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &mr->mr;
}

static void fp_mr_free(struct fp_mr *mr)
{
	fe_mr_del(mr->ctx->hca, &mr->e);
	mr->pd->usecnt--;
	fp_list_del(&mr->link);
	free(mr);
}

int fp_dereg_mr(struct ibv_mr *ibmr)
{
	struct fp_mr *mr = to_fp_mr(ibmr);
	struct fp_context *ctx = mr->ctx;
	uint32_t lkey = mr->e.lkey;
	int err;

	err = fp__op_begin(FP_OP_DEREG_MR);
	if (!err)
		err = fk_obj_destroy(ctx->fk, FK_O_MR, ibmr->handle);
	if (!err)
		fp_mr_free(mr);
	fp__op_end(ctx, FP_OP_DEREG_MR, FP_SUBJ_NONE, NULL, err, "lkey=%#x", lkey);
	return err;
}

void fp__pd_mr_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->mrs)
		fp_mr_free(fp_container_of(p, struct fp_mr, link));
	fp_list_for_each_safe(p, t, &ctx->pds)
		fp_pd_free(fp_container_of(p, struct fp_pd, link));
}
