/* SPDX-License-Identifier: MIT */
/*
 * XRC domain handles (XRCD-*). The domain itself, keyed by inode, is
 * device-wide state in the fake kernel daemon (which fstat()s the passed
 * fd and applies XRCD-03..17); each open returns a distinct handle that
 * counts the SRQs and QPs created or opened through it (XRCD-13).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "fp_verbs.h"

struct ibv_xrcd *fp_open_xrcd(struct ibv_context *context,
			      struct ibv_xrcd_init_attr *attr)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_xrcd *x = NULL;
	struct fe_dom *dom;
	uint32_t id;
	int err;

	err = fp__op_begin(FP_OP_OPEN_XRCD);
	if (err)
		goto out;
	if (!fp__xrc_capable(ctx)) {
		err = EOPNOTSUPP;			/* XRCD-12 */
		goto out;
	}
	/* XRCD-01/02 are the command layer's, as in ibv_cmd_open_xrcd() */
	if (!fp__quirk(FP_Q_SKIP_CMD_XRCD)) {
		err = verbs_cmd_open_xrcd(context, attr);
		if (err)
			goto out;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		err = ENOMEM;
		goto out;
	}
	/* XRCD-11: only O_CREAT and O_EXCL mean anything; XRCD-10: a closed fd
	 * fails to travel (EBADF). */
	err = fk_xrcd_open(ctx->fk, attr->fd, attr->oflags & (O_CREAT | O_EXCL),
			   fk_quirk_bits(fp__script, FK_MSG_XRCD_OPEN),
			   &x->fk_handle, &id);
	if (err)
		goto err_free_x;
	err = fe_dom_get_id(ctx->hca, id, &dom);
	if (err)
		goto err_close_x;
	x->ctx = ctx;
	x->dom = dom;
	x->vx.handle = x->fk_handle;		/* the kernel's handle, as providers copy it */
	x->vx.comp_mask = VERBS_XRCD_HANDLE;
	fp_list_add_tail(&ctx->xrcds, &x->link);
	goto out;

err_close_x:
	fk_xrcd_close(ctx->fk, x->fk_handle, 0);
err_free_x:
	free(x);
	x = NULL;
out:
	fp__op_end(ctx, FP_OP_OPEN_XRCD, FP_SUBJ_NONE, NULL, err,
		   "mask=%#x fd=%d oflags=%#x xrcd=%u", attr->comp_mask,
		   (attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ? attr->fd : -2,
		   (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ? attr->oflags : 0,
		   x ? x->vx.handle : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &x->vx.xrcd;
}

static void fp_xrcd_free(struct fp_xrcd *x)
{
	fp_list_del(&x->link);
	free(x);
}

/* Drop a reference an SRQ or QP held; a handle closed under the
 * xrcd_close_not_busy quirk is freed with its last reference. */
void fp__xrcd_put_ref(struct fp_xrcd *x)
{
	if (--x->refcnt == 0 && x->closed)
		fp_xrcd_free(x);
}

int fp_close_xrcd(struct ibv_xrcd *ibx)
{
	struct fp_xrcd *x = to_fp_xrcd(ibx);
	struct fp_context *ctx = x->ctx;
	uint32_t h = x->vx.handle;
	int err;

	err = fp__op_begin(FP_OP_CLOSE_XRCD);
	if (err)
		goto out;
	/* EBUSY while SRQs or QPs of this handle exist: the fake kernel's
	 * (XRCD-13, LIFE-10) */
	err = fk_xrcd_close(ctx->fk, x->fk_handle,
			    fk_quirk_bits(fp__script, FK_MSG_XRCD_CLOSE));
	if (err)
		goto out;
	fe_dom_put(x->dom);			/* XRCD-14/16 */
	if (x->refcnt)
		x->closed = true;
	else
		fp_xrcd_free(x);
out:
	fp__op_end(ctx, FP_OP_CLOSE_XRCD, FP_SUBJ_NONE, NULL, err, "xrcd=%u", h);
	return err;
}

/* XRCD-17: after the context's QPs and SRQs are gone; the daemon releases
 * its side when the connection closes. */

void fp__xrcd_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->xrcds) {
		struct fp_xrcd *x = fp_container_of(p, struct fp_xrcd, link);

		if (!x->closed)
			fe_dom_put(x->dom);
		fp_xrcd_free(x);
	}
}

