/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: creation rules per type (spec 3a), the modify-QP state
 * machine (3b, through fp_qp_mask_strip/fp_qp_modify_check), query, destroy,
 * and XRC target QPs: the real QP in its domain and its handles, created or
 * opened (OPENQP-*, LIFE-01..05).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fp_verbs.h"


static int fp_qp_check_caps(struct fp_context *ctx, const struct ibv_qp_cap *cap,
			    bool send, bool recv)
{
	const struct ibv_device_attr *da = &ctx->spec->attr;
	/* the quirk's driver takes one more than query_device says */
	uint32_t slack = fp__quirk(FP_Q_LIMITS_PLUS_ONE) ? 1 : 0;
	uint32_t max_wr = da->max_qp_wr > 0 ? (uint32_t)da->max_qp_wr + slack : UINT32_MAX;
	uint32_t max_sge = da->max_sge > 0 ? (uint32_t)da->max_sge + slack : UINT32_MAX;

	if (send && (cap->max_send_wr > max_wr || cap->max_send_sge > max_sge ||
		     cap->max_inline_data > FP_MAX_INLINE))
		return EINVAL;
	if (recv && (cap->max_recv_wr > max_wr || cap->max_recv_sge > max_sge))
		return EINVAL;
	return 0;
}

/* The spec 3a table: what each type requires, ignores and rejects. The
 * comp_mask rules (QPX-01/03/04/05) are the command layer's (fp_create_qp_ex,
 * fp_create_qp); the handles of the objects named are the fake kernel's. */
static int fp_qp_check_init(struct fp_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	int err = fp__qpx_check(ctx, a);	/* the new post-send API's sets */

	if (err)
		return err;
	switch (a->qp_type) {
	case IBV_QPT_XRC_SEND:
		/* 3a, path I: the command carries the SRQ's handle whenever
		 * srq is set (rdma-core v44.0 libibverbs/cmd_qp.c
		 * ibv_icmd_create_qp) and the kernel's ioctl create refuses
		 * one for an XRC_INI QP before any driver sees it (linux v6.1
		 * drivers/infiniband/core/uverbs_std_types_qp.c
		 * UVERBS_METHOD_QP_CREATE; seen on Debian 12's rxe0: EINVAL,
		 * not rxe's EOPNOTSUPP for the type) */
		if (a->srq)
			return EINVAL;
		if (!fp__xrc_capable(ctx))
			return EOPNOTSUPP;
		/* QPX-01/3a: PD and send CQ required; XRCD bit, srq, recv_cq ignored. */
		if (!a->pd || !a->send_cq)
			return EINVAL;
		return fp_qp_check_caps(ctx, &a->cap, true, false);
	case IBV_QPT_XRC_RECV:
		if (!fp__xrc_capable(ctx))
			return EOPNOTSUPP;
		if (!a->xrcd)
			return EINVAL;
		return 0;
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_DRIVER:
		return EOPNOTSUPP;			/* known types this device lacks */
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	default:	/* an unknown type gets here only past a skipped command layer */
		if (!a->pd || !a->send_cq || !a->recv_cq)
			return EINVAL;
		return fp_qp_check_caps(ctx, &a->cap, true, !a->srq);
	}
}

static void fp_qp_handle_init(struct fp_qp *h, struct fp_context *ctx, struct fp_rqp *real,
			      struct fp_xrcd *xrcd)
{
	h->ctx = ctx;
	h->real = real;
	h->xrcd = xrcd;
	h->bfreg = -1;
	real->usecnt++;
	fp_list_add_tail(&real->handles, &h->real_link);
	fp_list_add_tail(&ctx->qps, &h->link);
	h->vqp.qp.context = &ctx->vctx.context;
	h->vqp.qp.qp_num = real->e.qpn;
	if (xrcd) {
		xrcd->refcnt++;				/* XRCD-13 */
		h->vqp.xrcd = &xrcd->vx;
		h->vqp.comp_mask |= VERBS_QP_XRCD;
	}
}

static void fp_tgt_attr_copy(struct fp_rqp *r, const struct ibv_qp_attr *a)
{
	r->e.state = a->qp_state;
	r->e.attr.qkey = a->qkey;
	r->e.attr.pkey_index = a->pkey_index;
	r->e.attr.port_num = a->port_num;
	r->e.attr.qp_access_flags = a->qp_access_flags;
	r->e.attr.path_mtu = a->path_mtu;
}

/* This process's proxy of the daemon's target QP qpn: found, or made (and
 * then filled from the daemon through handle fk_handle). */
static struct fp_rqp *fp_tgt_proxy(struct fp_context *ctx, uint32_t qpn, struct fe_dom *dom,
				   uint32_t fk_handle, bool fresh)
{
	struct fp_rqp *r = fp_rqp_of(fe_qp_find(ctx->hca, qpn));
	struct ibv_qp_attr qa;

	if (r)
		return r->e.type == IBV_QPT_XRC_RECV ? r : NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	fp_list_init(&r->handles);
	fe_qp_init(&r->e, IBV_QPT_XRC_RECV);
	if (fe_rq_init(&r->e.rq, 0, 0)) {
		free(r);
		return NULL;
	}
	if (!fresh) {
		memset(&qa, 0, sizeof(qa));
		if (!fk_tgt_qp_query(ctx->fk, fk_handle, &qa))
			fp_tgt_attr_copy(r, &qa);
	}
	r->e.dom = dom;
	r->e.spec = ctx->spec;
	fe_dom_get(dom);
	fe_qp_add(ctx->hca, &r->e, qpn);
	return r;
}

/* XRC_RECV: the real QP is made in the daemon through the XRCD handle the
 * application's xrcd carries (resolved there, in this context); the
 * handle's user value is its ibv_qp, which the daemon names in events
 * (LIFE-08). */
static struct fp_qp *fp_tgt_new(struct fp_context *ctx, uint32_t xrcd_handle, int *errp)
{
	struct fp_qp *h = calloc(1, sizeof(*h));
	struct fp_xrcd *xrcd;
	struct fp_rqp *r;
	uint32_t qpn;
	int err;

	if (!h) {
		err = ENOMEM;
		goto err_out;
	}
	err = fk_tgt_qp_create(ctx->fk, xrcd_handle, (uint64_t)(uintptr_t)&h->vqp.qp,
			       &qpn, &h->fk_handle);
	if (err)
		goto err_free_h;
	h->vqp.qp.handle = h->fk_handle;
	xrcd = fp__xrcd_by_handle(ctx, xrcd_handle);
	r = fp_tgt_proxy(ctx, qpn, xrcd->dom, h->fk_handle, true);
	if (!r) {
		err = ENOMEM;
		goto err_destroy;
	}
	fp_qp_handle_init(h, ctx, r, xrcd);
	return h;

err_destroy:
	fk_tgt_qp_destroy(ctx->fk, h->fk_handle);
err_free_h:
	free(h);
err_out:
	*errp = err;
	return NULL;
}

/* asked: the caps as the application gave them, before the command layer
 * zeroed an XRC_SEND request's receive caps (a driver may size from them). */
static struct fp_qp *fp_qp_new(struct fp_context *ctx, struct ibv_qp_init_attr_ex *a,
			       const struct ibv_qp_cap *asked, int *errp)
{
	struct fk_refs refs = fk_refs_pd(FK_O_NONE);
	struct fp_rqp *r;
	struct fp_qp *h;
	uint32_t qpn;
	bool has_rq;
	int err;

	err = fp_qp_check_init(ctx, a);
	if (err)
		goto err_out;
	if (a->qp_type == IBV_QPT_XRC_RECV) {
		h = fp_tgt_new(ctx, fp__xrcd_handle_of(a->xrcd), &err);
		if (!h)
			goto err_out;
		goto fill;
	}
	r = calloc(1, sizeof(*r));
	h = calloc(1, sizeof(*h));
	if (!r || !h) {
		err = ENOMEM;
		goto err_free_r;
	}
	fp_list_init(&r->handles);
	fe_qp_init(&r->e, a->qp_type);
	r->e.sq_sig_all = a->sq_sig_all;
	has_rq = (r->e.type == IBV_QPT_RC || r->e.type == IBV_QPT_UC || r->e.type == IBV_QPT_UD) &&
		 !a->srq;
	err = fp_prof_qp_mem(&a->cap, has_rq);	/* the driver's queues, or ENOMEM */
	if (err)
		goto err_free_r;
	r->e.cap.max_send_wr = a->cap.max_send_wr;
	r->e.cap.max_send_sge = a->cap.max_send_sge;
	r->e.cap.max_inline_data = a->cap.max_inline_data;
	if (has_rq) {
		r->e.cap.max_recv_wr = a->cap.max_recv_wr;
		r->e.cap.max_recv_sge = a->cap.max_recv_sge;
	}
	fp_prof_qp_caps(&r->e.cap, has_rq);
	/* on a parent domain, the queue buffer comes from its allocator */
	err = fp__pdbuf_get(&r->pdbuf, a->pd,
			    (size_t)(r->e.cap.max_send_wr + r->e.cap.max_recv_wr) * 64,
			    FP_RES_TYPE_QP);
	if (err)
		goto err_free_r;
	err = fe_rq_init(&r->e.rq, (int)r->e.cap.max_recv_wr, (int)r->e.cap.max_recv_sge);
	if (err)
		goto err_put_buf;
	/* The handle members only, as ibv_cmd_create_qp_ex2 sends them; the
	 * fake kernel resolves and checks them in this context, and holds
	 * what it found (PD, CQs, SRQ usecnt). XRC_SEND has no receive side. */
	refs.pd = a->pd->handle;
	refs.scq = a->send_cq->handle;
	if (r->e.type != IBV_QPT_XRC_SEND) {
		refs.rcq = a->recv_cq->handle;
		refs.srq = a->srq ? a->srq->handle : FK_O_NONE;
	}
	err = fk_qpn_alloc(ctx->fk, &qpn);
	if (err)
		goto err_free_rq;
	err = fk_obj_create(ctx->fk, FK_O_QP, (uint32_t)a->qp_type, &refs, &h->vqp.qp.handle);
	if (err) {
		fk_qpn_free(ctx->fk, qpn);
		goto err_free_rq;
	}
	r->ctx = ctx;
	r->pd = fp__pd_by_handle(ctx, refs.pd);
	r->scq = fp__cq_by_handle(ctx, refs.scq);
	r->pd->usecnt++;
	r->scq->usecnt++;
	if (r->e.type != IBV_QPT_XRC_SEND) {
		r->rcq = fp__cq_by_handle(ctx, refs.rcq);
		r->rcq->usecnt++;
		if (a->srq) {
			r->srq = fp__srq_by_handle(ctx, refs.srq);
			r->srq->usecnt++;
		}
	}
	r->e.spec = ctx->spec;
	r->e.fk = ctx->fk;
	r->e.retry_reruns_binds = fp_prof_retry_reruns_binds();
	r->e.ext_ops = fp_prof_ext_ops();
	r->e.req_err_flushes = fp_prof_req_err_flushes();
	r->e.rxe_rules = fp_prof_rxe_rules();
	r->e.too_long_is_op_err = fp_prof_send_too_long_is_op_err();
	r->e.pd = fp__pd_ident(r->pd);
	r->e.scq = &r->scq->e;
	r->e.rcq = r->rcq ? &r->rcq->e : NULL;
	r->e.srq = r->srq ? &r->srq->e : NULL;
	fe_qp_add(ctx->hca, &r->e, qpn);
	fp_qp_handle_init(h, ctx, r, NULL);
fill:
	r = h->real;
	h->bfreg = fp_prof_qp_uar_get(ctx);	/* mlx5: a created QP's doorbell */
	/* QPX-02: the pointers are kept as passed, ignored ones included. */
	h->init_pd = (a->comp_mask & IBV_QP_INIT_ATTR_PD) ? a->pd : NULL;
	h->init_send_cq = a->send_cq;
	h->init_recv_cq = a->recv_cq;
	h->init_srq = a->srq;
	h->vqp.qp.qp_context = a->qp_context;
	h->vqp.qp.pd = h->init_pd;
	h->vqp.qp.send_cq = a->send_cq;
	h->vqp.qp.recv_cq = a->recv_cq;
	h->vqp.qp.srq = a->srq;
	h->vqp.qp.qp_type = a->qp_type;
	h->vqp.qp.state = IBV_QPS_RESET;		/* QPX-03 */
	a->cap = r->e.cap;	/* XRC_RECV caps are zeroed, the mlx5 way (3a "Portable: 0") */
	if (a->srq && (a->qp_type == IBV_QPT_RC || a->qp_type == IBV_QPT_UC || a->qp_type == IBV_QPT_UD))
		fp_prof_srq_qp_recv_caps(&a->cap, asked);
	if (a->qp_type == IBV_QPT_XRC_SEND)	/* QPX-02: no receive queue, 0 unless a driver says more */
		fp_prof_xrc_send_recv_caps(&a->cap, asked, a->srq != NULL);
	return h;

err_free_rq:
	fe_rq_free(&r->e.rq);
err_put_buf:
	fp__pdbuf_put(&r->pdbuf);
err_free_r:
	free(h);
	free(r);
err_out:
	*errp = err;
	return NULL;
}

struct ibv_qp *fp_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct ibv_qp_cap asked = attr->cap;
	struct fp_qpx *x = NULL;
	struct fp_qp *h = NULL;
	int err, cmd_errno = 0;

	/* a 1.1.8 caller's struct ends after xrcd (80 bytes) */
	if (fp__quirk(FP_Q_CREATE_READS_PAST_LEGACY_ATTR))
		(void)*(const volatile uint32_t *)&attr->create_flags;
	err = fp__op_begin(FP_OP_CREATE_QP_EX);
	if (!err)
		err = fp_prof_qp_ex_mask(attr);	/* the driver's own checks come first */
	/* the new post-send API's state, before anything is made */
	if (!err && (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    !(x = calloc(1, sizeof(*x))))
		err = ENOMEM;
	/* QPX-01/03/04/05: the command layer's, as in ibv_cmd_create_qp_ex() or,
	 * where the driver sends it, ibv_cmd_create_qp_ex2() */
	if (!err && !fp__quirk(FP_Q_SKIP_CMD_QP) &&
	    (err = fp_prof_qp_cmd_ex2(attr) ? verbs_cmd_create_qp_ex2(context, attr) :
		   verbs_cmd_create_qp_ex(context, attr)))
		cmd_errno = errno;	/* the command layer's errno stands, as in mlx5 */
	if (!err)
		err = fp_prof_qp_create_flags(attr);	/* the device's driver */
	if (!err)
		h = fp_qp_new(ctx, attr, &asked, &err);
	if (h && x) {
		fp__qpx_init(h, attr, x);
		x = NULL;
	}
	free(x);
	fp__op_end(ctx, FP_OP_CREATE_QP_EX, FP_SUBJ_QP, h, err,
		   "type=%d mask=%#x qpn=%u", attr->qp_type, attr->comp_mask,
		   h ? h->real->e.qpn : 0);
	if (err)
		return fp__create_failed(err, cmd_errno);
	return &h->vqp.qp;
}

struct ibv_qp *fp_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct fp_context *ctx = to_fp_pd(pd)->ctx;
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp_cap asked;
	struct fp_qp *h = NULL;
	int err;

	/* attr is the 64-byte 1.1 struct: read only its members. */
	memset(&ex, 0, sizeof(ex));
	if (fp__quirk(FP_Q_CREATE_READS_PAST_LEGACY_ATTR))
		(void)*(void *const volatile *)&((struct ibv_qp_init_attr_ex *)attr)->pd;
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	asked = attr->cap;
	err = fp__op_begin(FP_OP_CREATE_QP);
	/* mlx5_create_qp and mlx4_create_qp go through the same driver code
	 * as their create_qp_ex (mask PD) */
	if (!err)
		err = fp_prof_qp_ex_mask(&ex);
	/* QPX-01/05: the command layer's, as in ibv_cmd_create_qp() */
	if (!err && !fp__quirk(FP_Q_SKIP_CMD_QP))
		err = verbs_cmd_create_qp(pd, attr);
	ex.cap = attr->cap;	/* as the command left it */
	if (!err)
		h = fp_qp_new(ctx, &ex, &asked, &err);
	if (h)
		attr->cap = ex.cap;
	fp__op_end(ctx, FP_OP_CREATE_QP, FP_SUBJ_QP, h, err, "type=%d qpn=%u",
		   ex.qp_type, h ? h->real->e.qpn : 0);
	if (err)
		return fp__create_failed(err, 0);
	return &h->vqp.qp;
}

struct ibv_qp *fp_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_xrcd *xrcd;
	struct fp_qp *h = NULL;
	struct fp_rqp *r;
	uint32_t xh;
	int err;

	err = fp__op_begin(FP_OP_OPEN_QP);
	if (err)
		goto out;
	if (!fp__xrc_capable(ctx)) {
		err = EOPNOTSUPP;
		goto out;
	}
	/* OPENQP-02/03: the command layer's, as in ibv_cmd_open_qp() */
	if (!fp__quirk(FP_Q_SKIP_CMD_OPEN_QP)) {
		err = verbs_cmd_open_qp(context, attr);
		if (err)
			goto out;
	}
	if (!attr->xrcd) {
		err = EINVAL;
		goto out;
	}
	/* OPENQP-04 (the type) and OPENQP-05/06 are the fake kernel's. */
	/* The xrcd's handle member is all that is read (ibv_cmd_open_qp); the
	 * fake kernel resolves it in this context (OPENQP-06). */
	xh = fp__xrcd_handle_of(attr->xrcd);
	h = calloc(1, sizeof(*h));
	if (!h) {
		err = ENOMEM;
		goto out;
	}
	/* OPENQP-05: a live TGT QP of the same domain, whoever made it, in
	 * any process; the seed model's leftovers too (LIFE-05). */
	err = fk_tgt_qp_open(ctx->fk, xh, attr->qp_num, attr->qp_type,
			     fk_quirk_bits(fp__script, FK_MSG_TGT_QP_OPEN),
			     (uint64_t)(uintptr_t)&h->vqp.qp, &h->fk_handle);
	if (err)
		goto err_free_h;
	h->vqp.qp.handle = h->fk_handle;
	xrcd = fp__xrcd_by_handle(ctx, xh);
	r = fp_tgt_proxy(ctx, attr->qp_num, xrcd->dom, h->fk_handle, false);
	if (!r) {
		err = ENOMEM;
		goto err_close_h;
	}
	fp_qp_handle_init(h, ctx, r, xrcd);
	h->opened = true;
	/* OPENQP-07: the fields, as ibv_cmd_open_qp fills them */
	verbs_cmd_open_qp_resp(context, &h->vqp, sizeof(h->vqp), attr, h->fk_handle);
	goto out;

err_close_h:
	fk_tgt_qp_destroy(ctx->fk, h->fk_handle);
err_free_h:
	free(h);
	h = NULL;
out:

	fp__op_end(ctx, FP_OP_OPEN_QP, FP_SUBJ_QP, h, err, "mask=%#x qpn=%u type=%d",
		   attr->comp_mask, (attr->comp_mask & IBV_QP_OPEN_ATTR_NUM) ? attr->qp_num : 0,
		   (attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE) ? (int)attr->qp_type : -1);
	if (err) {
		errno = err;
		return NULL;
	}
	return &h->vqp.qp;
}

/* ---- state changes (the engine's: qp_engine.c) ------------------------- */
/* The modify rules shared with the fake kernel (qp_modify.h), on ibv_qp_attr. */
FK_QP_MODIFY_OPS(fp_qpm, struct ibv_qp_attr)

/* A target QP is modified in the daemon (QPX-06..08 there, OPENQP-08); the
 * proxy keeps what the local responder needs. */
static int fp_tgt_modify(struct fp_qp *h, const struct ibv_qp_attr *attr, int mask)
{
	unsigned q = fk_quirk_bits(fp__script, FK_MSG_TGT_QP_MODIFY);
	struct fp_rqp *r = h->real;
	enum ibv_qp_state st;
	int err;

	err = fk_tgt_qp_modify(h->ctx->fk, h->fk_handle, attr, mask, q, &st);
	if (err)
		return err;
	if (st == IBV_QPS_RESET)
		memset(&r->e.attr, 0, sizeof(r->e.attr));
	fe_qp_apply(&r->e, attr, fp_qp_mask_strip(r->e.type, mask));
	r->e.state = st;
	return 0;
}

int fp_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fp_rqp *r = h->real;
	enum ibv_qp_state next;
	uint32_t m, nx;
	int err, mask = attr_mask;

	err = fp__op_begin(FP_OP_MODIFY_QP);
	if (err)
		goto out;
	if (r->e.type == IBV_QPT_XRC_RECV) {
		/* the target's modify is the fake kernel's; a driver's own
		 * refusal of the new state is its (mlx5_ib, after the table) */
		err = (mask & IBV_QP_STATE) ? fp_prof_modify_state(attr->qp_state) : 0;
		if (!err)
			err = fp_tgt_modify(h, attr, mask);
		goto out;
	}
	/* QPX-06..08 as the kernel checks them, in the shared module */
	m = (uint32_t)mask;
	err = fk_qp_modify_prepare(r->e.type, r->e.state, attr->qp_state, attr->cur_qp_state,
				   (fp__quirk(FP_Q_MODIFY_NO_MASK_STRIP) ? FK_QPM_NO_STRIP : 0) |
				   (fp__quirk(FP_Q_MODIFY_SKIP_TABLE) ? FK_QPM_SKIP_TABLE : 0),
				   &m, &nx);
	if (err)
		goto out;
	mask = (int)m;
	next = (enum ibv_qp_state)nx;
	if (mask & IBV_QP_STATE) {
		err = fp_prof_modify_state(next);	/* the driver's own table */
		if (err)
			goto out;
	}
	if (!fp__quirk(FP_Q_MODIFY_NO_ATTR_CHECK)) {
		struct fk_qp_limits lim = h->ctx->lim;
		unsigned i;

		if (!fp_prof_pkey_index_checked())	/* a driver that never looks */
			for (i = 0; i < sizeof(lim.pkey_tbl_len) / sizeof(lim.pkey_tbl_len[0]); i++)
				lim.pkey_tbl_len[i] = UINT16_MAX;
		err = fp_qpm_check_attrs(&lim, r->e.attr.port_num, attr, m);
		if (err)
			goto out;
		/* the kernel core resolves a connected QP's AV on a RoCE port
		 * from its GRH, which it needs: EINVAL without (linux v6.1
		 * drivers/infiniband/core/verbs.c _ib_modify_qp,
		 * ib_resolve_eth_dmac; seen on Debian 12's rxe0) */
		if ((m & IBV_QP_AV) && r->e.type != IBV_QPT_UD && !attr->ah_attr.is_global &&
		    fk_qp_port_ok(&h->ctx->lim, attr->ah_attr.port_num) &&
		    h->ctx->spec->port[attr->ah_attr.port_num - 1].attr.link_layer ==
			    IBV_LINK_LAYER_ETHERNET) {
			err = EINVAL;
			goto out;
		}
		/* the core handles alternate paths on IB alone and refuses
		 * one where either port is RoCE: EINVAL (linux v6.1
		 * drivers/infiniband/core/verbs.c _ib_modify_qp, "ban them in
		 * roce mode"; seen on Debian 12's rxe0) */
		i = (m & IBV_QP_PORT) ? attr->port_num : r->e.attr.port_num;
		if ((m & IBV_QP_ALT_PATH) &&
		    ((fk_qp_port_ok(&h->ctx->lim, i) &&
		      h->ctx->spec->port[i - 1].attr.link_layer == IBV_LINK_LAYER_ETHERNET) ||
		     (fk_qp_port_ok(&h->ctx->lim, attr->alt_ah_attr.port_num) &&
		      h->ctx->spec->port[attr->alt_ah_attr.port_num - 1].attr.link_layer ==
			      IBV_LINK_LAYER_ETHERNET))) {
			err = EINVAL;
			goto out;
		}
		if (fk_qp_port_ok(&h->ctx->lim, i) &&
		    (err = fp_prof_modify_attrs(&h->ctx->spec->port[i - 1].attr, attr, (int)m)))
			goto out;
	}
	if (next == IBV_QPS_RESET)
		fe_qp_reset(&r->e);
	fe_qp_apply(&r->e, attr, mask);
	if (next == IBV_QPS_ERR)
		fe_qp_set_error(&r->e);
	else if (next == IBV_QPS_SQD)
		fe_qp_sqd(&r->e);	/* drained now, or once its waiting WQEs are done */
	else
		r->e.state = next;
	fe_mem_qp_publish(&r->e);	/* what a requester placing into it checks */
out:
	fp__op_end(h->ctx, FP_OP_MODIFY_QP, FP_SUBJ_QP, h, err,
		   "qpn=%u type=%d mask=%#x state=%d", r->e.qpn, r->e.type, attr_mask,
		   (attr_mask & IBV_QP_STATE) ? (int)attr->qp_state : -1);
	return err;
}

/* The driver's answer, which libibverbs hands on or reads by its release
 * (profile.c fp_prof_data_in_order). No fault or trace: rdma-core's
 * drivers answer without the kernel. */
int fp_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	return fp_prof_data_in_order(to_fp_qp(qp)->real->e.state, flags);
}

int fp_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		struct ibv_qp_init_attr *init_attr)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fp_rqp *r = h->real;
	const struct ibv_qp_attr *s = &r->e.attr;
	int err;

	err = fp__op_begin(FP_OP_QUERY_QP);
	if (err)
		goto out;
	if (r->e.type == IBV_QPT_XRC_RECV) {
		/* The real QP's attributes, from the daemon (OPENQP-08). */
		err = fk_tgt_qp_query(h->ctx->fk, h->fk_handle, attr);
		if (err)
			goto out;
		attr->cap = r->e.cap;
		fp_tgt_attr_copy(r, attr);
		goto init;
	}
	/* Member by member, never rate_limit: the caller's struct may be the
	 * 136-byte one; init_attr is the 64-byte ibv_qp_init_attr. */
	if (fp__quirk(FP_Q_QUERY_QP_WRITES_RATE_LIMIT))
		attr->rate_limit = 0;
	attr->qp_state = r->e.state;			/* OPENQP-08 */
	attr->cur_qp_state = r->e.state;
	attr->path_mtu = s->path_mtu;
	attr->path_mig_state = s->path_mig_state;
	attr->qkey = s->qkey;
	attr->rq_psn = s->rq_psn;
	attr->sq_psn = s->sq_psn;
	attr->dest_qp_num = s->dest_qp_num;
	attr->qp_access_flags = s->qp_access_flags;
	attr->cap = r->e.cap;
	attr->ah_attr = s->ah_attr;
	attr->alt_ah_attr = s->alt_ah_attr;
	attr->pkey_index = s->pkey_index;
	attr->alt_pkey_index = s->alt_pkey_index;
	attr->en_sqd_async_notify = s->en_sqd_async_notify;
	attr->sq_draining = 0;
	attr->max_rd_atomic = s->max_rd_atomic;
	attr->max_dest_rd_atomic = s->max_dest_rd_atomic;
	attr->min_rnr_timer = s->min_rnr_timer;
	attr->port_num = s->port_num;
	attr->timeout = s->timeout;
	attr->retry_cnt = s->retry_cnt;
	attr->rnr_retry = s->rnr_retry;
	attr->alt_port_num = s->alt_port_num;
	attr->alt_timeout = s->alt_timeout;
init:
	if (init_attr) {

		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = h->init_send_cq;
		init_attr->recv_cq = h->init_recv_cq;
		init_attr->srq = h->init_srq;
		init_attr->cap = r->e.cap;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = r->e.sq_sig_all;
	}
out:
	fp__op_end(h->ctx, FP_OP_QUERY_QP, FP_SUBJ_QP, h, err, "qpn=%u mask=%#x state=%d",
		   r->e.qpn, attr_mask, (int)r->e.state);
	return err;
}

/* ---- destruction --------------------------------------------------------- */
/* Free a real QP (or a target QP proxy): queues, references. */
static void fp_rqp_free(struct fp_rqp *r)
{
	fe_qp_release(&r->e);
	fp__pdbuf_put(&r->pdbuf);
	if (r->scq)
		r->scq->usecnt--;
	if (r->rcq)
		r->rcq->usecnt--;
	if (r->srq)
		r->srq->usecnt--;
	if (r->pd)
		r->pd->usecnt--;
	if (r->e.dom)
		fe_dom_put(r->e.dom);
	free(r);
}

/* Drop one handle here. The daemon has already done its part: an explicit
 * destroy (LIFE-02/03), or, at close, the connection's end (LIFE-04/05). */
static void fp_qp_drop_handle(struct fp_qp *h)
{
	struct fp_rqp *r = h->real;

	fp_list_del(&h->real_link);
	fp_list_del(&h->link);
	if (h->xrcd)
		fp__xrcd_put_ref(h->xrcd);
	fp__qpx_free(h);
	free(h);
	if (--r->usecnt)
		return;
	fp_rqp_free(r);
}

int fp_destroy_qp(struct ibv_qp *qp)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fp_context *ctx = h->ctx;
	uint32_t qpn = h->real->e.qpn;
	int err;

	err = fp__op_begin(FP_OP_DESTROY_QP);
	if (err)
		goto out;
	if (h->real->mcast && h->real->usecnt == 1) {
		err = EBUSY;				/* multicast groups still attached */
		goto out;
	}
	if (h->real->e.type == IBV_QPT_XRC_RECV) {
		err = fk_tgt_qp_destroy(ctx->fk, h->fk_handle);
	} else {
		err = fk_obj_destroy(ctx->fk, FK_O_QP, qp->handle);
		if (!err)
			err = fk_qpn_free(ctx->fk, qpn);
	}
	if (err)
		goto out;
	/* LIFE-09: the command layer waits, as ibv_cmd_destroy_qp does once
	 * the kernel destroyed the QP; not under the plugin's lock, which the
	 * thread that acknowledges the events may need */
	if (!fp__quirk(FP_Q_SKIP_CMD_DESTROY_QP)) {
		fe_unlock();
		verbs_cmd_destroy_qp(qp);
		fe_lock();
	}
	if (h->opened)
		fp_prof_destroy_opened_qp();	/* mlx5 dies here */
	fp_prof_qp_uar_put(ctx, h->bfreg);
	fp_qp_drop_handle(h);
out:
	fp__op_end(ctx, FP_OP_DESTROY_QP, FP_SUBJ_NONE, NULL, err, "qpn=%u", qpn);
	return err;
}

void fp__qp_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->qps)
		fp_qp_drop_handle(fp_container_of(p, struct fp_qp, link));
}

/* ---- multicast (UD only; membership is only counted) --------------------- */
int fp_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct fp_qp *h = to_fp_qp(qp);
	int err;

	err = fp__op_begin(FP_OP_ATTACH_MCAST);
	if (!err && h->real->e.type != IBV_QPT_UD)
		err = EINVAL;
	if (!err)
		h->real->mcast++;
	fp__op_end(h->ctx, FP_OP_ATTACH_MCAST, FP_SUBJ_QP, h, err, "qpn=%u lid=%u",
		   h->real->e.qpn, lid);
	return err;
}

int fp_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct fp_qp *h = to_fp_qp(qp);
	int err;

	err = fp__op_begin(FP_OP_DETACH_MCAST);
	if (!err && (h->real->e.type != IBV_QPT_UD || !h->real->mcast))
		err = EINVAL;
	if (!err)
		h->real->mcast--;
	fp__op_end(h->ctx, FP_OP_DETACH_MCAST, FP_SUBJ_QP, h, err, "qpn=%u lid=%u",
		   h->real->e.qpn, lid);
	return err;
}
