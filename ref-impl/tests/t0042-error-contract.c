/* SPDX-License-Identifier: MIT */
/*
 * t0042: the error contract. ref-impl's entry points refuse NULL arguments
 * with EINVAL before the provider is called; the comp_mask rules are the
 * command layer's (cmd.c), which the provider calls first thing, as real
 * providers call ibv_cmd_*; handle and state rules are the kernel's. Each
 * refusal has its errno, nothing changes on failure, and pointer verbs set
 * errno. "Before the provider is called" is proved with the fake
 * provider's fault injection: the script fails the provider's FIRST call
 * of the op with EIO, so after the NULL refusals, the first call with
 * arguments must come back EIO; the rule checks follow it. Each test sets
 * up its own environment (fp_env_setup) in its own process (the runner's),
 * so no test sees another's leftovers or fault counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "tr.h"

static const char script_text[] =
	"mode extended\n"
	"lifetime current\n"
	"device fake0\n"
	"\tcap xrc\n"
	"\tport 1 state active\n"
	"fault modify_qp nth 1 errno EIO\n"
	"fault create_qp_ex nth 1 errno EIO\n"
	"fault create_srq_ex nth 1 errno EIO\n"
	"fault open_xrcd nth 1 errno EIO\n"
	"fault open_qp nth 1 errno EIO\n";

/* The objects every child starts with. */
struct fx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

/* errno after a pointer verb that must fail. */
#define PTR_ERRNO(expr) ({ void *p_; errno = 0; p_ = (void *)(expr);	\
			   p_ ? -1 : errno; })

static int rm_one(const char *p, const struct stat *st, int f, struct FTW *w)
{
	return remove(p);
}

/* In the test's own process, which has called no verb before: the fake host
 * under the script, the objects, the check (every TR_EXPECT runs), the teardown. */
static void run(void (*fn)(struct fx *))
{
	char tmpl[] = "/tmp/t0042.XXXXXX", script[64], scratch[4096], err[512];
	struct ibv_device **list;
	struct fx f = { 0 };
	FILE *s;
	int n = 0;

	assert_non_null(mkdtemp(tmpl));
	snprintf(script, sizeof(script), "%s/s.fps", tmpl);
	s = fopen(script, "w");
	assert_non_null(s);
	fputs(script_text, s);
	fclose(s);
	if (fp_env_setup(script, getenv("IBVCT_PROVIDER"), tmpl, scratch,
			 sizeof(scratch), err, sizeof(err)))
		fail_msg("fp_env_setup: %s", err);
	list = ibv_get_device_list(&n);
	TR_EXPECT(list && n == 1);
	f.ctx = list && n ? ibv_open_device(list[0]) : NULL;
	TR_EXPECT(f.ctx != NULL);
	if (f.ctx) {
		f.pd = ibv_alloc_pd(f.ctx);
		f.cq = ibv_create_cq(f.ctx, 16, NULL, NULL, 0);
		TR_EXPECT(f.pd && f.cq);
		if (f.pd && f.cq)
			fn(&f);
		TR_EXPECT(!f.cq || ibv_destroy_cq(f.cq) == 0);
		TR_EXPECT(!f.pd || ibv_dealloc_pd(f.pd) == 0);
		TR_EXPECT(ibv_close_device(f.ctx) == 0);
	}
	if (list)
		ibv_free_device_list(list);
	nftw(tmpl, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	assert_int_equal(tr_checks_failed(), 0);
}

static struct ibv_qp *rc_qp(struct fx *f)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = f->cq, .recv_cq = f->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(f->pd, &ia);
}

/* ------------------------------------------------------------------ */
/* QPX-08: modify_qp                                                    */

static void ck_modify_qp(struct fx *f)
{
	struct ibv_qp *qp = rc_qp(f);
	struct ibv_qp_attr a, copy;
	struct ibv_qp_init_attr ia;

	TR_EXPECT(qp != NULL);
	if (!qp)
		return;
	memset(&a, 0, sizeof(a));
	a.port_num = 1;
	TR_EXPECT(ibv_modify_qp(qp, NULL, IBV_QP_STATE) == EINVAL);
	TR_EXPECT(ibv_modify_qp(NULL, &a, IBV_QP_STATE) == EINVAL);
	/* none of that reached the provider: its first call fails EIO */
	a.qp_state = IBV_QPS_INIT;
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EIO);
	TR_EXPECT(qp->state == IBV_QPS_RESET);		/* QPX-09 */
	/* QPX-08, the kernel's checks */
	a.qp_state = (enum ibv_qp_state)99;
	copy = a;
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL);
	TR_EXPECT(qp->state == IBV_QPS_RESET);
	TR_EXPECT(!memcmp(&a, &copy, sizeof(a)));
	a.qp_state = IBV_QPS_INIT;
	a.cur_qp_state = (enum ibv_qp_state)42;
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE) == EINVAL);
	a.cur_qp_state = IBV_QPS_RESET;
	/* a bit outside the standard ones: EOPNOTSUPP, as uverbs says */
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE | (1 << 22)) == EOPNOTSUPP);
	TR_EXPECT(qp->state == IBV_QPS_RESET);
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	TR_EXPECT(qp->state == IBV_QPS_INIT);
	TR_EXPECT(ibv_query_qp(qp, &a, IBV_QP_STATE, NULL) == EINVAL);
	TR_EXPECT(ibv_query_qp(qp, NULL, IBV_QP_STATE, &ia) == EINVAL);
	TR_EXPECT(ibv_destroy_qp(qp) == 0);
	TR_EXPECT(ibv_destroy_qp(NULL) == EINVAL);
}

TR_TEST(modify_qp_bad_state_einval_bad_mask_eopnotsupp_state_untouched)
{
	run(ck_modify_qp);
}

/* ------------------------------------------------------------------ */
/* QPX-04/05, section 3a: create_qp_ex                                  */

static void ck_create_qp_ex(struct fx *f)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd;
	struct ibv_qp_init_attr_ex a, copy;
	struct ibv_qp *qp;

	/* open_xrcd's first provider call fails EIO by script */
	TR_EXPECT(PTR_ERRNO(ibv_open_xrcd(f->ctx, &xa)) == EIO);
	xrcd = ibv_open_xrcd(f->ctx, &xa);
	TR_EXPECT(xrcd != NULL);
	if (!xrcd)
		return;
	/* the header's inline reads the mask: NULL only through the slot */
	TR_EXPECT(PTR_ERRNO(verbs_get_ctx(f->ctx)->create_qp_ex(f->ctx, NULL)) == EINVAL);
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	/* that did not reach the provider: the first call that does fails EIO */
	TR_EXPECT(PTR_ERRNO(ibv_create_qp_ex(f->ctx, &a)) == EIO);
	a.qp_type = (enum ibv_qp_type)5;		/* no such type */
	a.send_cq = a.recv_cq = f->cq;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	a.pd = f->pd;
	a.xrcd = xrcd;
	copy = a;
	TR_EXPECT(PTR_ERRNO(ibv_create_qp_ex(f->ctx, &a)) == EINVAL);	/* QPX-05 */
	TR_EXPECT(!memcmp(&a, &copy, sizeof(a)));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD | (1u << 20);	/* unknown bit */
	TR_EXPECT(PTR_ERRNO(ibv_create_qp_ex(f->ctx, &a)) == EINVAL);	/* QPX-04 */
	a.comp_mask = IBV_QP_INIT_ATTR_PD;			/* no XRCD bit */
	TR_EXPECT(PTR_ERRNO(verbs_get_ctx(f->ctx)->create_qp_ex(f->ctx, &a)) == EINVAL);
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = NULL;
	TR_EXPECT(PTR_ERRNO(ibv_create_qp_ex(f->ctx, &a)) == EINVAL);
	a.xrcd = xrcd;
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;			/* no PD bit */
	TR_EXPECT(PTR_ERRNO(ibv_create_qp_ex(f->ctx, &a)) == EINVAL);
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	a.send_cq = NULL;
	TR_EXPECT(PTR_ERRNO(ibv_create_qp_ex(f->ctx, &a)) == EINVAL);
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qp = ibv_create_qp_ex(f->ctx, &a);
	TR_EXPECT(qp && qp->state == IBV_QPS_RESET);
	TR_EXPECT(!qp || ibv_destroy_qp(qp) == 0);
	TR_EXPECT(ibv_close_xrcd(xrcd) == 0);
}

TR_TEST(create_qp_ex_unknown_type_or_mask_null_einval)
{
	run(ck_create_qp_ex);
}

/* ------------------------------------------------------------------ */
/* XRCD-01/02, OPENQP-02/03/04/06                                       */

static void ck_xrcd_open_qp(struct fx *f)
{
	struct ibv_xrcd_init_attr xa = { .fd = -1, .oflags = O_CREAT };
	struct ibv_qp_open_attr oa = { 0 };
	struct ibv_xrcd *xrcd;

	TR_EXPECT(PTR_ERRNO(ibv_open_xrcd(f->ctx, NULL)) == EINVAL);
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	TR_EXPECT(PTR_ERRNO(ibv_open_xrcd(f->ctx, &xa)) == EIO);	/* first call */
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD;			/* no OFLAGS */
	TR_EXPECT(PTR_ERRNO(ibv_open_xrcd(f->ctx, &xa)) == EINVAL);
	xa.comp_mask = IBV_XRCD_INIT_ATTR_OFLAGS;		/* no FD */
	TR_EXPECT(PTR_ERRNO(ibv_open_xrcd(f->ctx, &xa)) == EINVAL);
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS |
		       IBV_XRCD_INIT_ATTR_RESERVED;
	TR_EXPECT(PTR_ERRNO(ibv_open_xrcd(f->ctx, &xa)) == EOPNOTSUPP);
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xrcd = ibv_open_xrcd(f->ctx, &xa);
	TR_EXPECT(xrcd && xrcd->context == f->ctx);
	if (!xrcd)
		return;

	TR_EXPECT(PTR_ERRNO(verbs_get_ctx(f->ctx)->open_qp(f->ctx, NULL)) == EINVAL);
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.qp_num = 12345;
	/* the first call that reaches the provider fails EIO by script */
	TR_EXPECT(PTR_ERRNO(ibv_open_qp(f->ctx, &oa)) == EIO);
	oa.comp_mask |= IBV_QP_OPEN_ATTR_RESERVED;
	TR_EXPECT(PTR_ERRNO(ibv_open_qp(f->ctx, &oa)) == EOPNOTSUPP);	/* OPENQP-03 */
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD;
	TR_EXPECT(PTR_ERRNO(ibv_open_qp(f->ctx, &oa)) == EINVAL);	/* OPENQP-02 */
	oa.comp_mask |= IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_type = IBV_QPT_XRC_SEND;
	TR_EXPECT(PTR_ERRNO(ibv_open_qp(f->ctx, &oa)) == EINVAL);	/* OPENQP-04 */
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.xrcd = NULL;
	TR_EXPECT(PTR_ERRNO(ibv_open_qp(f->ctx, &oa)) == EINVAL);	/* OPENQP-06 */
	oa.xrcd = xrcd;
	TR_EXPECT(PTR_ERRNO(ibv_open_qp(f->ctx, &oa)) == EINVAL);	/* OPENQP-05: no such QP */
	/* the inline dereferences xrcd: NULL only through the slot */
	TR_EXPECT(verbs_get_ctx(f->ctx)->close_xrcd(NULL) == EINVAL);
	TR_EXPECT(ibv_close_xrcd(xrcd) == 0);
}

TR_TEST(open_xrcd_and_open_qp_masks_einval_reserved_eopnotsupp)
{
	run(ck_xrcd_open_qp);
}

/* ------------------------------------------------------------------ */
/* SRQX-02/03/05/07                                                     */

static void ck_srq_ex(struct fx *f)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex a, copy;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;

	(void)PTR_ERRNO(ibv_open_xrcd(f->ctx, &xa));	/* eats the EIO fault */
	xrcd = ibv_open_xrcd(f->ctx, &xa);
	TR_EXPECT(xrcd != NULL);
	if (!xrcd)
		return;
	memset(&a, 0, sizeof(a));
	a.attr.max_wr = 8;
	a.attr.max_sge = 1;
	a.pd = f->pd;
	a.xrcd = xrcd;
	a.cq = f->cq;
	a.srq_type = IBV_SRQT_XRC;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		      IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |
		      IBV_SRQ_INIT_ATTR_RESERVED;
	TR_EXPECT(PTR_ERRNO(verbs_get_ctx(f->ctx)->create_srq_ex(f->ctx, NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_srq_ex(f->ctx, &a)) == EIO);	/* first call */
	copy = a;
	TR_EXPECT(PTR_ERRNO(ibv_create_srq_ex(f->ctx, &a)) == EOPNOTSUPP); /* SRQX-05 */
	TR_EXPECT(!memcmp(&a, &copy, sizeof(a)));
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ;			/* no PD bit */
	TR_EXPECT(PTR_ERRNO(ibv_create_srq_ex(f->ctx, &a)) == EINVAL);	/* SRQX-02 */
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		      IBV_SRQ_INIT_ATTR_XRCD;			/* no CQ bit */
	TR_EXPECT(PTR_ERRNO(ibv_create_srq_ex(f->ctx, &a)) == EINVAL);	/* SRQX-03 */
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		      IBV_SRQ_INIT_ATTR_CQ;			/* no XRCD bit */
	TR_EXPECT(PTR_ERRNO(ibv_create_srq_ex(f->ctx, &a)) == EINVAL);	/* SRQX-03 */
	a.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD;
	a.srq_type = (enum ibv_srq_type)7;
	TR_EXPECT(PTR_ERRNO(ibv_create_srq_ex(f->ctx, &a)) == EINVAL);	/* SRQX-07 */
	a.srq_type = IBV_SRQT_XRC;
	srq = ibv_create_srq_ex(f->ctx, &a);
	TR_EXPECT(srq && srq->pd == f->pd);
	TR_EXPECT(!srq || ibv_modify_srq(srq, &a.attr, 1 << 7) == EINVAL);
	TR_EXPECT(!srq || ibv_destroy_srq(srq) == 0);
	TR_EXPECT(ibv_close_xrcd(xrcd) == 0);
}

TR_TEST(create_srq_ex_masks_and_type_refused_at_boundary)
{
	run(ck_srq_ex);
}

/* ------------------------------------------------------------------ */
/* Pointer verbs return NULL and set errno; int verbs return errno.     */

static void ck_pointer_verbs(struct fx *f)
{
	static char buf[256];
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_comp_channel *ch;
	struct ibv_wq_init_attr wa = { 0 };
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_td *td;
	union ibv_gid gid;

	TR_EXPECT(PTR_ERRNO(ibv_alloc_pd(NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_open_device(NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_get_device_name(NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_cq(f->ctx, 0, NULL, NULL, 0)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_cq(f->ctx, 4, NULL, NULL, -1)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_cq(NULL, 4, NULL, NULL, 0)) == EINVAL);
	/* remote write without local write: the kernel's rule */
	TR_EXPECT(PTR_ERRNO(ibv_reg_mr(f->pd, buf, sizeof(buf),
				      IBV_ACCESS_REMOTE_WRITE)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_reg_mr(NULL, buf, sizeof(buf), 0)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_ah(NULL, &aa)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_ah(f->pd, NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_comp_channel(NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_qp(f->pd, NULL)) == EINVAL);
	TR_EXPECT(PTR_ERRNO(ibv_create_srq(NULL, NULL)) == EINVAL);
	/* slots ref-impl does not implement answer EOPNOTSUPP, never NULL */
	TR_EXPECT(PTR_ERRNO(ibv_create_wq(f->ctx, &wa)) == EOPNOTSUPP);
	TR_EXPECT(PTR_ERRNO(ibv_alloc_null_mr(f->pd)) == EOPNOTSUPP);
	/* the fake driver has thread domains (PD-01) */
	td = ibv_alloc_td(f->ctx, &ta);
	TR_EXPECT(td != NULL);
	TR_EXPECT(!td || ibv_dealloc_td(td) == 0);
	TR_EXPECT(verbs_get_ctx(f->ctx)->create_cq_ex != NULL);
	TR_EXPECT(verbs_get_ctx(f->ctx)->alloc_dm != NULL);
	TR_EXPECT(PTR_ERRNO(ibv_reg_dmabuf_mr(f->pd, 0, 4096, 0, -1, 0)) == EOPNOTSUPP);
	/* no file behind -1: EINVAL, as rdma-core v44.0 libibverbs/device.c:380 */
	TR_EXPECT(PTR_ERRNO(ibv_import_device(-1)) == EINVAL);
	/* int verbs return the errno */
	TR_EXPECT(ibv_query_device(f->ctx, NULL) == EINVAL);
	TR_EXPECT(ibv_query_gid(f->ctx, 1, -1, &gid) == -1 && errno == EINVAL);	/* rdma-core's -1 */
	TR_EXPECT(ibv_dealloc_pd(NULL) == EINVAL);
	TR_EXPECT(ibv_dereg_mr(NULL) == EINVAL);
	TR_EXPECT(ibv_resize_cq(f->cq, 0) == EINVAL);
	ch = ibv_create_comp_channel(f->ctx);
	TR_EXPECT(ch != NULL);
	TR_EXPECT(!ch || ibv_destroy_comp_channel(ch) == 0);
	TR_EXPECT(ibv_destroy_comp_channel(NULL) == EINVAL);
}

TR_TEST(pointer_verbs_set_errno_int_verbs_return_it)
{
	run(ck_pointer_verbs);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
