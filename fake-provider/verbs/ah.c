/* SPDX-License-Identifier: MIT */
/*
 * Address handles (UD): a checked copy of the caller's ibv_ah_attr that
 * post_send reads for the destination port, SL, LID and GRH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"

/*
 * The kernel core's checks of an address handle's GRH (linux v6.1
 * drivers/infiniband/core/verbs.c rdma_create_user_ah: rdma_check_ah_attr,
 * then rdma_fill_sgid_attr through cache.c rdma_get_gid_attr), every
 * driver behind them: on a RoCE (Ethernet) port the GRH is required,
 * EINVAL without it; a source GID index inside the table whose entry is
 * empty is ENODATA. Seen on Debian 12's rxe0 (ibvct-verbs-gen).
 */
static int fp_ah_grh_check(const struct fp_port_spec *p, const struct ibv_ah_attr *attr)
{
	static const union ibv_gid zero;

	if (p->attr.link_layer == IBV_LINK_LAYER_ETHERNET && !attr->is_global)
		return EINVAL;
	if (attr->is_global && (attr->grh.sgid_index >= FP_MAX_GIDS ||
				!memcmp(&p->gid[attr->grh.sgid_index], &zero, sizeof(zero))))
		return ENODATA;
	return 0;
}

struct ibv_ah *fp_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct fp_pd *pd = to_fp_pd(ibpd);
	struct fp_context *ctx = pd->ctx;
	struct fp_ah *ah = NULL;
	int err;

	err = fp__op_begin(FP_OP_CREATE_AH);
	if (err)
		goto out;
	if (attr->port_num < 1 || attr->port_num > ctx->spec->nports ||
	    (attr->is_global &&
	     attr->grh.sgid_index >= ctx->spec->port[attr->port_num - 1].attr.gid_tbl_len)) {
		err = EINVAL;
		goto out;
	}
	err = fp_ah_grh_check(&ctx->spec->port[attr->port_num - 1], attr);
	if (err)
		goto out;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		err = ENOMEM;
		goto out;
	}
	err = fk_obj_create_on_pd(ctx->fk, FK_O_AH, 0, ibpd->handle, &ah->ah.handle);
	if (err) {
		free(ah);
		ah = NULL;
		goto out;
	}
	ah->ctx = ctx;
	ah->pd = pd;
	ah->attr = *attr;
	pd->usecnt++;
	fp_list_add_tail(&ctx->ahs, &ah->link);
out:
	fp__op_end(ctx, FP_OP_CREATE_AH, FP_SUBJ_NONE, NULL, err,
		   "port=%u dlid=%u sl=%u global=%u ah=%u", attr->port_num,
		   attr->dlid, attr->sl, attr->is_global, ah ? ah->ah.handle : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &ah->ah;
}

static void fp_ah_free(struct fp_ah *ah)
{
	ah->pd->usecnt--;
	fp_list_del(&ah->link);
	free(ah);
}

int fp_destroy_ah(struct ibv_ah *ibah)
{
	struct fp_ah *ah = to_fp_ah(ibah);
	struct fp_context *ctx = ah->ctx;
	uint32_t h = ibah->handle;
	int err;

	err = fp__op_begin(FP_OP_DESTROY_AH);
	if (!err)
		err = fk_obj_destroy(ctx->fk, FK_O_AH, h);
	if (!err)
		fp_ah_free(ah);
	fp__op_end(ctx, FP_OP_DESTROY_AH, FP_SUBJ_NONE, NULL, err, "ah=%u", h);
	return err;
}

void fp__ah_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->ahs)
		fp_ah_free(fp_container_of(p, struct fp_ah, link));
}
