/* SPDX-License-Identifier: MIT */
/*
 * t0043: verbs on a provider that lacks the op (COMPAT-08, COMPAT-09 for
 * RC >= v28). rdma-core installs a "not supported" op for every slot the
 * provider leaves empty (rdma-core v44.0 libibverbs/dummy_ops.c, installed
 * by verbs_set_ops), so a pointer verb fails NULL + EOPNOTSUPP, an int verb
 * returns EOPNOTSUPP and a void one does nothing; every verbs_context slot
 * the header's inlines test is filled (never NULL). The providers here are
 * the test's own, registered before the first ibv_get_device_list() on the
 * fake host's sysfs (the fake provider is not loaded): an extended one with
 * query_device only, one without init_context, and legacy (1.1) ones with
 * constructors and destructors only or without alloc_context, whose
 * missing ops the compat layer answers the same way. Also rdma-core's own
 * provider interface (IBVERBS_PRIVATE_34), which ibvct does not serve: each
 * entry point answers EOPNOTSUPP.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/driver.h>

#include "rt_env.h"

/* ------------------------------------------------------------------ */
/* The test's providers.                                                */

enum kind { K_EXT_BARE, K_EXT_NO_INIT, K_LEG_PARTIAL, K_LEG_NO_ALLOC,
	    K_LEG_ALLOC_FAILS };
static enum kind kind;

static int bare_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "t0043");
	a->max_qp = 7;
	a->phys_port_cnt = 1;
	return 0;
}

static const struct verbs_context_ops bare_ops = {
	.query_device = bare_query_device,
};

static int bare_init_context(struct verbs_device *vdev, struct ibv_context *c,
			     int cmd_fd)
{
	verbs_set_ops(verbs_get_ctx(c), &bare_ops);
	return 0;
}

static void bare_uninit_device(struct verbs_device *vdev)
{
	free(vdev);
}

static struct verbs_device *ext_init(const char *path, int abi)
{
	struct verbs_device *vdev = calloc(1, sizeof(*vdev));

	if (!vdev)
		return NULL;
	vdev->sz = sizeof(*vdev);
	vdev->init_context = kind == K_EXT_BARE ? bare_init_context : NULL;
	vdev->uninit_device = bare_uninit_device;
	return vdev;
}

/* Legacy: plain objects from calloc, destroyed by free; nothing else. */
static struct ibv_pd *leg_alloc_pd(struct ibv_context *c)
{
	return calloc(1, sizeof(struct ibv_pd));
}

static int leg_free(void *obj)
{
	free(obj);
	return 0;
}

static struct ibv_mr *leg_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				 int access)
{
	struct ibv_mr *mr = calloc(1, sizeof(*mr));

	if (mr)
		mr->lkey = mr->rkey = 0x4003;
	return mr;
}

static struct ibv_cq *leg_create_cq(struct ibv_context *c, int cqe,
				    struct ibv_comp_channel *ch, int vec)
{
	struct ibv_cq *cq = calloc(1, sizeof(*cq));

	if (cq)
		cq->cqe = cqe;
	return cq;
}

static struct ibv_srq *leg_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *a)
{
	return calloc(1, sizeof(struct ibv_srq));
}

static struct ibv_qp *leg_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct ibv_qp *qp = calloc(1, sizeof(*qp));

	if (qp)
		qp->qp_num = 0x4003;
	return qp;
}

/* Fails without setting errno, as some old providers did. */
static struct ibv_ah *leg_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	errno = 0;
	return NULL;
}

static struct ibv_context *leg_alloc_context(struct ibv_device *dev, int fd)
{
	struct ibv_context *c;
	struct ibv_legacy_context_ops *o;

	if (kind == K_LEG_ALLOC_FAILS) {
		errno = EMFILE;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cmd_fd = -1;
	c->async_fd = -1;
	c->num_comp_vectors = 1;
	o = ibv_legacy_context_ops(c);
	o->alloc_pd = leg_alloc_pd;
	o->dealloc_pd = (int (*)(struct ibv_pd *))leg_free;
	o->reg_mr = leg_reg_mr;
	o->dereg_mr = (int (*)(struct ibv_mr *))leg_free;
	o->create_cq = leg_create_cq;
	o->destroy_cq = (int (*)(struct ibv_cq *))leg_free;
	o->create_srq = leg_create_srq;
	o->destroy_srq = (int (*)(struct ibv_srq *))leg_free;
	o->create_qp = leg_create_qp;
	o->destroy_qp = (int (*)(struct ibv_qp *))leg_free;
	o->create_ah = leg_create_ah;
	return c;
}

static void leg_free_context(struct ibv_context *c)
{
	free(c);
}

/* 1.1 had no way to give a device back: it stays, reachable, until exit. */
static struct ibv_device *leg_device;

static struct ibv_device *leg_init(const char *path, int abi)
{
	struct ibv_legacy_device_ops *d;

	leg_device = calloc(1, sizeof(*leg_device));
	if (!leg_device)
		return NULL;
	d = ibv_legacy_device_ops(leg_device);
	d->alloc_context = kind == K_LEG_NO_ALLOC ? NULL : leg_alloc_context;
	d->free_context = leg_free_context;
	return leg_device;
}

/* Only the test's provider: none from the driver dir or RDMAV_DRIVERS. */
static struct ibv_context *open_own(struct rt *t, enum kind k, int *err)
{
	char dir[] = "/tmp/t0043-drivers.XXXXXX";
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	kind = k;
	TR_EXPECT(mkdtemp(dir) != NULL);
	setenv("IBVCT_DRIVER_DIR", dir, 1);
	unsetenv("RDMAV_DRIVERS");
	if (k == K_EXT_BARE || k == K_EXT_NO_INIT)
		verbs_register_driver("t0043", ext_init);
	else
		ibv_register_driver("t0043", leg_init);
	list = ibv_get_device_list(&n);
	TR_EXPECT(list && n == 1);
	TR_EXPECT(list && n == 1 && !strcmp(ibv_get_device_name(list[0]), "fake0"));
	errno = 0;
	if (list && n == 1)
		ctx = ibv_open_device(list[0]);
	*err = ctx ? 0 : errno;
	if (list)
		ibv_free_device_list(list);
	rmdir(dir);
	return ctx;
}

/* ------------------------------------------------------------------ */
/* An extended provider with query_device only.                         */

/* A core object the provider never made, for the verbs that take one. */
struct objs {
	struct verbs_qp vqp;
	struct verbs_srq vsrq;
	struct verbs_cq vcq;
	struct verbs_xrcd vxrcd;
	struct ibv_pd pd;
	struct ibv_mr mr;
	struct ibv_mw mw;
	struct ibv_ah ah;
	struct ibv_wq wq;
	struct ibv_flow flow;
	struct ibv_flow_action fa;
	struct ibv_rwq_ind_table rwq;
	struct ibv_td td;
	struct ibv_dm dm;
	struct ibv_counters counters;
};

static void objs_init(struct objs *o, struct ibv_context *ctx)
{
	memset(o, 0, sizeof(*o));
	o->vqp.qp.context = o->vsrq.srq.context = o->vcq.cq.context = ctx;
	o->vxrcd.xrcd.context = o->pd.context = o->mr.context = ctx;
	o->mw.context = o->ah.context = o->wq.context = o->flow.context = ctx;
	o->fa.context = o->rwq.context = o->td.context = o->dm.context = ctx;
	o->counters.context = ctx;
	o->pd.context = ctx;
	o->mr.pd = o->mw.pd = o->ah.pd = &o->pd;
	o->mw.type = IBV_MW_TYPE_1;
	o->vqp.qp.pd = &o->pd;
	pthread_mutex_init(&o->vqp.qp.mutex, NULL);
	pthread_cond_init(&o->vqp.qp.cond, NULL);
	pthread_mutex_init(&o->vsrq.srq.mutex, NULL);
	pthread_cond_init(&o->vsrq.srq.cond, NULL);
	pthread_mutex_init(&o->vcq.cq.mutex, NULL);
	pthread_cond_init(&o->vcq.cq.cond, NULL);
}

/* verbs_get_ctx_op finds the slot, and it answers "not supported". */
#define SLOT_INT(t, vctx, op, ...)					\
	do {								\
		TR_EXPECT(verbs_get_ctx_op(&(vctx)->context, op) != NULL); \
		TR_EXPECT((vctx)->op(__VA_ARGS__) == EOPNOTSUPP);	\
	} while (0)
#define SLOT_PTR(t, vctx, op, ...)					\
	do {								\
		TR_EXPECT(verbs_get_ctx_op(&(vctx)->context, op) != NULL); \
		TR_EXPECT(RT_PTR_ERRNO((vctx)->op(__VA_ARGS__)) == EOPNOTSUPP); \
	} while (0)

static void ck_ext_bare(struct rt *t)
{
	static char buf[64];
	struct ibv_context *ctx;
	struct verbs_context *vctx;
	struct objs o;
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	struct ibv_gid_entry ge[2];
	__be16 pkey;
	struct ibv_qp_attr qa = {};
	struct ibv_qp_init_attr qia = {};
	struct ibv_srq_attr sa = {};
	struct ibv_srq_init_attr sia = {};
	struct ibv_ah_attr aha = { .port_num = 1 };
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1,
					 .oflags = O_CREAT };
	struct ibv_srq_init_attr_ex sx = { .comp_mask = IBV_SRQ_INIT_ATTR_PD,
					   .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_qp_init_attr_ex qx = { .comp_mask = IBV_QP_INIT_ATTR_PD,
					  .qp_type = IBV_QPT_RC };
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM |
				       IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
				       .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_sge sge = { (uintptr_t)buf, 8, 0 };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1 }, *sbad = NULL;
	struct ibv_ops_wr owr = {}, *obad = NULL;
	struct ibv_mw_bind bind = {};
	struct ibv_wc wc;
	struct ibv_grh grh = {};
	uint32_t num;
	uint64_t cval;
	int err;

	ctx = open_own(t, K_EXT_BARE, &err);
	if (!ctx)
		return;
	vctx = verbs_get_ctx(ctx);
	TR_EXPECT(vctx != NULL);
	if (!vctx)
		goto out;
	objs_init(&o, ctx);
	o.vqp.qp.pd = NULL;

	/* the op it has, and query_device_ex built from it (rest zero) */
	TR_EXPECT(ibv_query_device(ctx, &da) == 0 && da.max_qp == 7);
	memset(&dx, 0xa5, sizeof(dx));
	TR_EXPECT(ibv_query_device_ex(ctx, NULL, &dx) == 0);
	TR_EXPECT(dx.orig_attr.max_qp == 7 && !strcmp(dx.orig_attr.fw_ver, "t0043") &&
		 dx.comp_mask == 0 && dx.max_dm_size == 0);

	/* device and port verbs */
	TR_EXPECT(ibv_query_port(ctx, 1, &pa) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_gid(ctx, 1, 0, &gid) == -1 && errno == EOPNOTSUPP);
	TR_EXPECT(ibv_query_pkey(ctx, 1, 0, &pkey) == -1 && errno == EOPNOTSUPP);
	TR_EXPECT(ibv_query_gid_ex(ctx, 1, 0, &ge[0], 0) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_gid_table(ctx, ge, 2, 0) == -EOPNOTSUPP);
	errno = 0;
	TR_EXPECT(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)) == -1 &&
		 errno == EOPNOTSUPP);
	wc = (struct ibv_wc){ .wc_flags = IBV_WC_GRH };
	TR_EXPECT(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &aha) == ENOENT);
	TR_EXPECT(ibv_get_async_event(ctx, NULL) == EINVAL);

	/* constructors */
	TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_pd(ctx)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr(&o.pd, buf, sizeof(buf), 0)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_cq(ctx, 1, NULL, NULL, 0)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_srq(&o.pd, &sia)) == EOPNOTSUPP);
	qia.qp_type = IBV_QPT_RC;
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_qp(&o.pd, &qia)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_ah(&o.pd, &aha)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_mw(&o.pd, IBV_MW_TYPE_1)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_open_xrcd(ctx, &xa)) == EOPNOTSUPP);
	/* the 1.1-op fallbacks find no 1.1 op either (QPX-01, SRQX-06) */
	sx.pd = &o.pd;
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_srq_ex(ctx, &sx)) == EOPNOTSUPP);
	qx.pd = &o.pd;
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_qp_ex(ctx, &qx)) == EOPNOTSUPP);
	oa.xrcd = &o.vxrcd.xrcd;
	TR_EXPECT(RT_PTR_ERRNO(ibv_open_qp(ctx, &oa)) == EOPNOTSUPP);

	/* verbs on objects: each reaches its missing op */
	TR_EXPECT(ibv_dealloc_pd(&o.pd) == EOPNOTSUPP);
	TR_EXPECT(ibv_dereg_mr(&o.mr) == EOPNOTSUPP);
	TR_EXPECT(ibv_destroy_ah(&o.ah) == EOPNOTSUPP);
	TR_EXPECT(ibv_dealloc_mw(&o.mw) == EOPNOTSUPP);
	bind.bind_info.mr = &o.mr;
	TR_EXPECT(ibv_bind_mw(&o.vqp.qp, &o.mw, &bind) == EOPNOTSUPP);
	TR_EXPECT(ibv_close_xrcd(&o.vxrcd.xrcd) == EOPNOTSUPP);
	TR_EXPECT(ibv_resize_cq(&o.vcq.cq, 4) == EOPNOTSUPP);
	TR_EXPECT(ibv_req_notify_cq(&o.vcq.cq, 0) == EOPNOTSUPP);
	TR_EXPECT(ibv_poll_cq(&o.vcq.cq, 1, &wc) < 0);
	TR_EXPECT(ibv_destroy_cq(&o.vcq.cq) == EOPNOTSUPP);
	TR_EXPECT(ibv_modify_srq(&o.vsrq.srq, &sa, IBV_SRQ_LIMIT) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_srq(&o.vsrq.srq, &sa) == EOPNOTSUPP);
	TR_EXPECT(ibv_get_srq_num(&o.vsrq.srq, &num) == EOPNOTSUPP);
	TR_EXPECT(ibv_post_srq_recv(&o.vsrq.srq, &rwr, &rbad) == EOPNOTSUPP &&
		 rbad == &rwr);
	TR_EXPECT(ibv_destroy_srq(&o.vsrq.srq) == EOPNOTSUPP);
	TR_EXPECT(ibv_modify_qp(&o.vqp.qp, &qa, IBV_QP_STATE) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_qp(&o.vqp.qp, &qa, IBV_QP_STATE, &qia) == EOPNOTSUPP);
	TR_EXPECT(ibv_post_send(&o.vqp.qp, &swr, &sbad) == EOPNOTSUPP && sbad == &swr);
	rbad = NULL;
	TR_EXPECT(ibv_post_recv(&o.vqp.qp, &rwr, &rbad) == EOPNOTSUPP && rbad == &rwr);
	TR_EXPECT(ibv_attach_mcast(&o.vqp.qp, &gid, 0xc001) == EOPNOTSUPP);
	TR_EXPECT(ibv_detach_mcast(&o.vqp.qp, &gid, 0xc001) == EOPNOTSUPP);
	TR_EXPECT(ibv_destroy_qp(&o.vqp.qp) == EOPNOTSUPP);
	/* the state the core keeps is left as it was */
	TR_EXPECT(o.vqp.qp.state == IBV_QPS_RESET);

	/* every later verbs_context slot is filled and says so (COMPAT-08) */
	SLOT_INT(t, vctx, advise_mr, &o.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1);
	SLOT_PTR(t, vctx, alloc_dm, ctx, NULL);
	SLOT_PTR(t, vctx, alloc_null_mr, &o.pd);
	SLOT_PTR(t, vctx, alloc_parent_domain, ctx, NULL);
	SLOT_PTR(t, vctx, alloc_td, ctx, NULL);
	SLOT_INT(t, vctx, attach_counters_point_flow, &o.counters, NULL, &o.flow);
	SLOT_PTR(t, vctx, create_counters, ctx, NULL);
	SLOT_PTR(t, vctx, create_cq_ex, ctx, NULL);
	SLOT_PTR(t, vctx, ibv_create_flow, &o.vqp.qp, NULL);
	SLOT_PTR(t, vctx, create_flow_action_esp, ctx, NULL);
	SLOT_PTR(t, vctx, create_rwq_ind_table, ctx, NULL);
	SLOT_PTR(t, vctx, create_wq, ctx, NULL);
	SLOT_INT(t, vctx, dealloc_td, &o.td);
	SLOT_INT(t, vctx, destroy_counters, &o.counters);
	SLOT_INT(t, vctx, ibv_destroy_flow, &o.flow);
	SLOT_INT(t, vctx, destroy_flow_action, &o.fa);
	SLOT_INT(t, vctx, destroy_rwq_ind_table, &o.rwq);
	SLOT_INT(t, vctx, destroy_wq, &o.wq);
	SLOT_INT(t, vctx, free_dm, &o.dm);
	SLOT_INT(t, vctx, modify_cq, &o.vcq.cq, NULL);
	SLOT_INT(t, vctx, modify_flow_action_esp, &o.fa, NULL);
	SLOT_INT(t, vctx, modify_qp_rate_limit, &o.vqp.qp, NULL);
	SLOT_INT(t, vctx, modify_wq, &o.wq, NULL);
	SLOT_INT(t, vctx, query_rt_values, ctx, NULL);
	SLOT_INT(t, vctx, read_counters, &o.counters, &cval, 1, 0);
	SLOT_PTR(t, vctx, reg_dm_mr, &o.pd, &o.dm, 0, 8, 0);
	TR_EXPECT(verbs_get_ctx_op(ctx, post_srq_ops) != NULL);
	TR_EXPECT(vctx->post_srq_ops(&o.vsrq.srq, &owr, &obad) == EOPNOTSUPP &&
		 obad == &owr);
	/* the placeholders are callable too (nothing to answer) */
	TR_EXPECT(vctx->ABI_placeholder1 && vctx->ABI_placeholder2);
	vctx->ABI_placeholder1();
	vctx->ABI_placeholder2();
	/* ... and so are the 1.1-era event slots of ibv_context_ops */
	TR_EXPECT(ctx->ops._compat_cq_event && ctx->ops._compat_async_event);
	((void (*)(void))ctx->ops._compat_cq_event)();

	/* verbs_set_ops without a context or table changes nothing */
	verbs_set_ops(NULL, &bare_ops);
	verbs_set_ops(vctx, NULL);
	TR_EXPECT(ibv_query_device(ctx, &da) == 0 && da.max_qp == 7);
out:
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(extended_provider_without_ops_answers_eopnotsupp)
{
	rt_run(RT_EXTENDED, NULL, ck_ext_bare);
}

static void ck_ext_no_init(struct rt *t)
{
	int err;

	TR_EXPECT(open_own(t, K_EXT_NO_INIT, &err) == NULL);
	TR_EXPECT(err == EOPNOTSUPP);
}

TR_TEST(extended_provider_without_init_context_opens_nothing)
{
	rt_run(RT_EXTENDED, NULL, ck_ext_no_init);
}

/* ------------------------------------------------------------------ */
/* Legacy providers: the compat layer's answers for missing ops.        */

static void ck_leg_partial(struct rt *t)
{
	static char buf[64];
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_RC };
	struct ibv_ah_attr aha = { .port_num = 1 };
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa = {};
	struct ibv_srq_attr sa = {};
	union ibv_gid gid;
	__be16 pkey = 0;
	int err;

	ctx = open_own(t, K_LEG_PARTIAL, &err);
	if (!ctx)
		return;
	TR_EXPECT(verbs_get_ctx(ctx) != NULL);
	TR_EXPECT(ibv_query_device(ctx, &da) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_port(ctx, 1, &pa) == EOPNOTSUPP);
	/* GIDs and P_Keys come from sysfs, as 1.1 read them: no op needed */
	TR_EXPECT(ibv_query_gid(ctx, 1, 0, &gid) == 0 && gid.raw[0] == 0xfe &&
		 gid.raw[1] == 0x80);
	TR_EXPECT(ibv_query_pkey(ctx, 1, 0, &pkey) == 0 && pkey == htobe16(0xffff));
	TR_EXPECT(ibv_query_gid(ctx, 1, 99, &gid) == -1 && errno == EINVAL);
	TR_EXPECT(ibv_query_pkey(ctx, 1, 99, &pkey) == -1 && errno == ENOENT);
	TR_EXPECT(ibv_query_gid(ctx, 7, 0, &gid) == -1 && errno == EINVAL);

	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	srq = pd ? ibv_create_srq(pd, &sia) : NULL;
	TR_EXPECT(pd && mr && cq && srq);
	if (!pd || !mr || !cq || !srq)
		goto out;
	TR_EXPECT(mr->lkey == 0x4003 && mr->pd == pd && cq->cqe == 4);
	/* the 1.1 op cannot place a region at another I/O address */
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr_iova(pd, buf, 8, 0x1000,
						 IBV_ACCESS_LOCAL_WRITE)) == EOPNOTSUPP);
	qia.send_cq = qia.recv_cq = cq;
	qp = ibv_create_qp(pd, &qia);
	TR_EXPECT(qp && qp->qp_num == 0x4003 && qp->state == IBV_QPS_RESET);
	if (!qp)
		goto out;
	/* a provider failure without errno still reports one */
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_ah(pd, &aha)) == ENOMEM);
	TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_mw(pd, IBV_MW_TYPE_1)) == EOPNOTSUPP);
	TR_EXPECT(ibv_resize_cq(cq, 8) == EOPNOTSUPP && cq->cqe == 4);
	TR_EXPECT(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_srq(srq, &sa) == EOPNOTSUPP);
	qa.qp_state = IBV_QPS_INIT;
	TR_EXPECT(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == EOPNOTSUPP);
	TR_EXPECT(qp->state == IBV_QPS_RESET);
	TR_EXPECT(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia) == EOPNOTSUPP);
	TR_EXPECT(ibv_attach_mcast(qp, &gid, 0xc001) == EOPNOTSUPP);
	TR_EXPECT(ibv_detach_mcast(qp, &gid, 0xc001) == EOPNOTSUPP);
out:
	if (qp)
		TR_EXPECT(ibv_destroy_qp(qp) == 0);
	if (srq)
		TR_EXPECT(ibv_destroy_srq(srq) == 0);
	if (cq)
		TR_EXPECT(ibv_destroy_cq(cq) == 0);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	if (pd)
		TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(legacy_provider_missing_ops_answer_eopnotsupp)
{
	rt_run(RT_LEGACY, NULL, ck_leg_partial);
}

static void ck_leg_no_alloc(struct rt *t)
{
	int err;

	TR_EXPECT(open_own(t, K_LEG_NO_ALLOC, &err) == NULL && err == EOPNOTSUPP);
}

static void ck_leg_alloc_fails(struct rt *t)
{
	int err;

	TR_EXPECT(open_own(t, K_LEG_ALLOC_FAILS, &err) == NULL && err == EMFILE);
}

TR_TEST(legacy_provider_without_context_opens_nothing)
{
	rt_run(RT_LEGACY, NULL, ck_leg_no_alloc);
	rt_run(RT_LEGACY, NULL, ck_leg_alloc_fails);
}

/* ------------------------------------------------------------------ */
/* rdma-core's provider interface, IBVERBS_PRIVATE_34: not served.      */

static const char *const p34_int[] = {
	"execute_ioctl", "ibv_cmd_advise_mr", "ibv_cmd_alloc_dm",
	"ibv_cmd_alloc_mw", "ibv_cmd_alloc_pd", "ibv_cmd_attach_mcast",
	"ibv_cmd_close_xrcd", "ibv_cmd_create_ah", "ibv_cmd_create_counters",
	"ibv_cmd_create_cq", "ibv_cmd_create_cq_ex", "ibv_cmd_create_flow",
	"ibv_cmd_create_flow_action_esp", "ibv_cmd_create_qp",
	"ibv_cmd_create_qp_ex", "ibv_cmd_create_qp_ex2",
	"ibv_cmd_create_rwq_ind_table", "ibv_cmd_create_srq",
	"ibv_cmd_create_srq_ex", "ibv_cmd_create_wq", "ibv_cmd_dealloc_mw",
	"ibv_cmd_dealloc_pd", "ibv_cmd_dereg_mr", "ibv_cmd_destroy_ah",
	"ibv_cmd_destroy_counters", "ibv_cmd_destroy_cq",
	"ibv_cmd_destroy_flow", "ibv_cmd_destroy_flow_action",
	"ibv_cmd_destroy_qp", "ibv_cmd_destroy_rwq_ind_table",
	"ibv_cmd_destroy_srq", "ibv_cmd_destroy_wq", "ibv_cmd_detach_mcast",
	"ibv_cmd_free_dm", "ibv_cmd_get_context", "ibv_cmd_modify_cq",
	"ibv_cmd_modify_flow_action_esp", "ibv_cmd_modify_qp",
	"ibv_cmd_modify_qp_ex", "ibv_cmd_modify_srq", "ibv_cmd_modify_wq",
	"ibv_cmd_open_qp", "ibv_cmd_open_xrcd", "ibv_cmd_post_recv",
	"ibv_cmd_post_send", "ibv_cmd_post_srq_recv", "ibv_cmd_query_context",
	"ibv_cmd_query_device_any", "ibv_cmd_query_mr", "ibv_cmd_query_port",
	"ibv_cmd_query_qp", "ibv_cmd_query_srq", "ibv_cmd_read_counters",
	"ibv_cmd_reg_dm_mr", "ibv_cmd_reg_dmabuf_mr", "ibv_cmd_reg_mr",
	"ibv_cmd_req_notify_cq", "ibv_cmd_rereg_mr", "ibv_cmd_resize_cq",
	"verbs_init_cq",
};

static void *p34(const char *name)
{
	return dlvsym(RTLD_DEFAULT, name, "IBVERBS_PRIVATE_34");
}

static void ck_p34(struct rt *t)
{
	char path[] = "/tmp/t0043-stderr.XXXXXX", text[512] = "";
	int (*poll_fn)(void);
	unsigned int (*final_fn)(unsigned int, void *);
	void *(*alloc_fn)(void), *(*open_fn)(void *, void *);
	void (*reg_fn)(const void *), (*uninit_fn)(void *);
	void (*log_fn)(void *, uint32_t, const char *, ...);
	void (*set_ops_fn)(void *, const void *);
	int fd, saved, n;
	size_t i;
	char *p;

	for (i = 0; i < sizeof(p34_int) / sizeof(p34_int[0]); i++) {
		int (*fn)(void) = (int (*)(void))p34(p34_int[i]);

		TR_EXPECT_MSG(fn && fn() == EOPNOTSUPP, "%s@IBVERBS_PRIVATE_34: %s", p34_int[i],
			      fn ? "not EOPNOTSUPP" : "missing");
	}
	/* poll_cq counts completions: failure is negative with errno */
	poll_fn = (int (*)(void))p34("ibv_cmd_poll_cq");
	errno = 0;
	TR_EXPECT(poll_fn && poll_fn() == -1 && errno == EOPNOTSUPP);
	final_fn = (unsigned int (*)(unsigned int, void *))p34("__ioctl_final_num_attrs");
	TR_EXPECT(final_fn && final_fn(5, NULL) == 5);
	alloc_fn = (void *(*)(void))p34("_verbs_init_and_alloc_context");
	TR_EXPECT(alloc_fn && RT_PTR_ERRNO(alloc_fn()) == EOPNOTSUPP);
	open_fn = (void *(*)(void *, void *))p34("verbs_open_device");
	TR_EXPECT(open_fn && RT_PTR_ERRNO(open_fn(NULL, NULL)) == EOPNOTSUPP);
	uninit_fn = (void (*)(void *))p34("verbs_uninit_context");
	log_fn = (void (*)(void *, uint32_t, const char *, ...))p34("__verbs_log");
	set_ops_fn = (void (*)(void *, const void *))p34("verbs_set_ops");
	TR_EXPECT(uninit_fn && log_fn && set_ops_fn && p34("verbs_allow_disassociate_destroy"));
	if (uninit_fn && log_fn && set_ops_fn) {
		uninit_fn(NULL);
		log_fn(NULL, 0, "%s", "nothing");
		set_ops_fn(NULL, NULL);
	}
	/* rdma-core's set_ops is not ibvct's (IBVCT_PRIVATE_1) */
	TR_EXPECT((void *)set_ops_fn != dlvsym(RTLD_DEFAULT, "verbs_set_ops",
						 "IBVCT_PRIVATE_1"));

	/* a provider built for rdma-core learns once why it is ignored */
	reg_fn = (void (*)(const void *))p34("verbs_register_driver_34");
	fd = mkstemp(path);
	TR_EXPECT(reg_fn && fd >= 0);
	if (!reg_fn || fd < 0)
		return;
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	reg_fn(NULL);
	reg_fn(NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = (int)pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	unlink(path);
	TR_EXPECT(n > 0);
	p = strstr(text, "rdma-core providers cannot be loaded");
	TR_EXPECT(p && !strstr(p + 1, "rdma-core providers cannot be loaded"));
}

TR_TEST(rdma_core_provider_interface_answers_eopnotsupp)
{
	rt_run(RT_EXTENDED, NULL, ck_p34);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
