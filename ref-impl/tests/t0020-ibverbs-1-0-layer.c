/* SPDX-License-Identifier: MIT */
/*
 * t0020: the IBVERBS_1.0 ABI of the library under test (COMPAT-12..15,
 * WR-07), as a binary linked against libibverbs 1.0 reaches it: every
 * @IBVERBS_1.0 entry point through dlvsym(), on the fake device, with the
 * 1.0 layouts such a binary has compiled in (declared below). The 1.0
 * layer hands out wrappers with real_* pointers to 1.1 objects (COMPAT-12),
 * events name the wrappers (COMPAT-13), the 1.0 context fills only its
 * data-path ops, whose WR chains are translated and bad_wr mapped back by
 * position (COMPAT-14). Each check runs under both provider modes, so
 * under legacy the 1.0 layer sits on the compat layer.
 */
#include <dlfcn.h>
#include <fcntl.h>

#include "rt_env.h"

/* ------------------------------------------------------------------ */
/* The 1.0 ABI, as libibverbs 1.0's header laid it out.                 */

struct v10_context;

struct v10_device {
	void *obsolete_sysfs_dev;
	void *obsolete_sysfs_ibdev;
	struct ibv_device *real_device;
	void *ops[2];
};

struct v10_pd {
	struct v10_context *context;
	uint32_t handle;
	struct ibv_pd *real_pd;
};

struct v10_mr {
	struct v10_context *context;
	struct v10_pd *pd;
	uint32_t handle, lkey, rkey;
	struct ibv_mr *real_mr;
};

struct v10_srq {
	struct v10_context *context;
	void *srq_context;
	struct v10_pd *pd;
	uint32_t handle;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_srq *real_srq;
};

struct v10_cq {
	struct v10_context *context;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed, async_events_completed;
	struct ibv_cq *real_cq;
};

struct v10_qp {
	struct v10_context *context;
	void *qp_context;
	struct v10_pd *pd;
	struct v10_cq *send_cq, *recv_cq;
	struct v10_srq *srq;
	uint32_t handle, qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_qp *real_qp;
};

struct v10_ah {
	struct v10_context *context;
	struct v10_pd *pd;
	uint32_t handle;
	struct ibv_ah *real_ah;
};

struct v10_qp_init_attr {
	void *qp_context;
	struct v10_cq *send_cq, *recv_cq;
	struct v10_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};

struct v10_send_wr {
	struct v10_send_wr *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	int send_flags;
	__be32 imm_data;
	union {
		struct { uint64_t remote_addr; uint32_t rkey; } rdma;
		struct { uint64_t remote_addr, compare_add, swap; uint32_t rkey; } atomic;
		struct { struct v10_ah *ah; uint32_t remote_qpn, remote_qkey; } ud;
	} wr;
};

struct v10_recv_wr {
	struct v10_recv_wr *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
};

/* 27 slots; the five data-path ones are typed. */
struct v10_context_ops {
	void *query_device, *query_port, *alloc_pd, *dealloc_pd, *reg_mr,
	     *dereg_mr, *create_cq;
	int (*poll_cq)(struct v10_cq *cq, int n, struct ibv_wc *wc);
	int (*req_notify_cq)(struct v10_cq *cq, int solicited_only);
	void *cq_event, *resize_cq, *destroy_cq, *create_srq, *modify_srq,
	     *query_srq, *destroy_srq;
	int (*post_srq_recv)(struct v10_srq *srq, struct v10_recv_wr *wr,
			     struct v10_recv_wr **bad);
	void *create_qp, *query_qp, *modify_qp, *destroy_qp;
	int (*post_send)(struct v10_qp *qp, struct v10_send_wr *wr,
			 struct v10_send_wr **bad);
	int (*post_recv)(struct v10_qp *qp, struct v10_recv_wr *wr,
			 struct v10_recv_wr **bad);
	void *create_ah, *destroy_ah, *attach_mcast, *detach_mcast;
};

struct v10_context {
	struct v10_device *device;
	struct v10_context_ops ops;
	int cmd_fd, async_fd, num_comp_vectors;
	struct ibv_context *real_context;
};

/* Every @IBVERBS_1.0 entry point of rdma-core 44 (compat-1_0.c). */
#define V10_FUNCS(X)							\
	X(ack_async_event, void, (struct ibv_async_event *))		\
	X(ack_cq_events, void, (struct v10_cq *, unsigned int))	\
	X(alloc_pd, struct v10_pd *, (struct v10_context *))		\
	X(attach_mcast, int, (struct v10_qp *, union ibv_gid *, uint16_t)) \
	X(close_device, int, (struct v10_context *))			\
	X(create_ah, struct v10_ah *, (struct v10_pd *, struct ibv_ah_attr *)) \
	X(create_cq, struct v10_cq *, (struct v10_context *, int, void *, \
				       struct ibv_comp_channel *, int)) \
	X(create_qp, struct v10_qp *, (struct v10_pd *, struct v10_qp_init_attr *)) \
	X(create_srq, struct v10_srq *, (struct v10_pd *, struct ibv_srq_init_attr *)) \
	X(dealloc_pd, int, (struct v10_pd *))				\
	X(dereg_mr, int, (struct v10_mr *))				\
	X(destroy_ah, int, (struct v10_ah *))				\
	X(destroy_cq, int, (struct v10_cq *))				\
	X(destroy_qp, int, (struct v10_qp *))				\
	X(destroy_srq, int, (struct v10_srq *))			\
	X(detach_mcast, int, (struct v10_qp *, union ibv_gid *, uint16_t)) \
	X(free_device_list, void, (struct v10_device **))		\
	X(get_async_event, int, (struct v10_context *, struct ibv_async_event *)) \
	X(get_cq_event, int, (struct ibv_comp_channel *, struct v10_cq **, void **)) \
	X(get_device_guid, __be64, (struct v10_device *))		\
	X(get_device_list, struct v10_device **, (int *))		\
	X(get_device_name, const char *, (struct v10_device *))	\
	X(modify_qp, int, (struct v10_qp *, struct ibv_qp_attr *, int)) \
	X(modify_srq, int, (struct v10_srq *, struct ibv_srq_attr *, int)) \
	X(open_device, struct v10_context *, (struct v10_device *))	\
	X(query_device, int, (struct v10_context *, struct ibv_device_attr *)) \
	X(query_gid, int, (struct v10_context *, uint8_t, int, union ibv_gid *)) \
	X(query_pkey, int, (struct v10_context *, uint8_t, int, __be16 *)) \
	X(query_port, int, (struct v10_context *, uint8_t, struct ibv_port_attr *)) \
	X(query_qp, int, (struct v10_qp *, struct ibv_qp_attr *, int,	\
			  struct v10_qp_init_attr *))			\
	X(query_srq, int, (struct v10_srq *, struct ibv_srq_attr *))	\
	X(reg_mr, struct v10_mr *, (struct v10_pd *, void *, size_t, int)) \
	X(resize_cq, int, (struct v10_cq *, int))

#define V10_MEMBER(name, ret, args) ret (*name) args;
static struct { V10_FUNCS(V10_MEMBER) } v10;

#define V10_LOAD(name, ret, args)					\
	v10.name = (ret (*) args)dlvsym(RTLD_DEFAULT, "ibv_" #name, "IBVERBS_1.0"); \
	n += v10.name != NULL;						\
	if (v10.name && (void *)v10.name == dlsym(RTLD_DEFAULT, "ibv_" #name)) \
		same++;
#define V10_COUNT(name, ret, args) + 1

/* Loads every entry point; the number found, and how many are the 1.1 one. */
static int v10_load(int *same_out)
{
	int n = 0, same = 0;

	V10_FUNCS(V10_LOAD)
	*same_out = same;
	return n;
}

/* In a child: the 1.0 list, the device and its context. */
struct v10_env {
	struct v10_device **list;
	struct v10_context *ctx;
};

static int v10_open(struct rt *t, struct v10_env *e)
{
	int n = -1, same;

	TR_EXPECT(v10_load(&same) == 0 V10_FUNCS(V10_COUNT));
	memset(e, 0, sizeof(*e));
	e->list = v10.get_device_list(&n);
	TR_EXPECT(e->list && n == 1);
	if (!e->list || n != 1)
		return -1;
	e->ctx = v10.open_device(e->list[0]);
	TR_EXPECT(e->ctx != NULL);
	return e->ctx ? 0 : -1;
}

static void v10_close(struct rt *t, struct v10_env *e)
{
	if (e->ctx)
		TR_EXPECT(v10.close_device(e->ctx) == 0);
	if (e->list)
		v10.free_device_list(e->list);
}

static struct v10_qp *v10_qp(struct v10_pd *pd, struct v10_cq *cq,
			     struct v10_srq *srq, enum ibv_qp_type type,
			     void *qp_context)
{
	struct v10_qp_init_attr a = {
		.qp_context = qp_context, .send_cq = cq, .recv_cq = cq,
		.srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return v10.create_qp(pd, &a);
}

/* ------------------------------------------------------------------ */
/* The entry points exist, each its own symbol.                         */

TR_TEST(every_1_0_entry_point_is_its_own_symbol)
{
	int same, n = v10_load(&same);

	/* 33 dual verbs; none may be the 1.1 default under another name */
	assert_int_equal(n, 0 V10_FUNCS(V10_COUNT));
	assert_int_equal(n, 33);
	assert_int_equal(same, 0);
}

/* ------------------------------------------------------------------ */
/* COMPAT-12: the device list wraps the 1.1 devices.                    */

static void ck_devices(struct rt *t)
{
	struct ibv_device **real;
	struct v10_device **list;
	int n = -1, rn = -1;

	TR_EXPECT(v10_load(&n) == 33);
	real = ibv_get_device_list(&rn);
	list = v10.get_device_list(&n);
	TR_EXPECT(real && rn == 1 && list && n == 1);
	if (!real || !list || n != 1 || rn != 1)
		goto out;
	TR_EXPECT(list[1] == NULL);
	TR_EXPECT(list[0]->real_device == real[0]);
	TR_EXPECT(!strcmp(v10.get_device_name(list[0]), "fake0"));
	TR_EXPECT(v10.get_device_guid(list[0]) == ibv_get_device_guid(real[0]));
	TR_EXPECT(v10.get_device_guid(list[0]) != 0);
	/* the 1.0 verbs pass bad arguments on to the 1.1 ones */
	errno = 0;
	TR_EXPECT(v10.get_device_name(NULL) == NULL && errno == EINVAL);
	TR_EXPECT(v10.get_device_guid(NULL) == 0);
	TR_EXPECT(RT_PTR_ERRNO(v10.open_device(NULL)) == EINVAL);
	TR_EXPECT(v10.close_device(NULL) == EINVAL);
	v10.free_device_list(NULL);		/* nothing to free: no crash */
out:
	if (list)
		v10.free_device_list(list);
	if (real)
		ibv_free_device_list(real);
}

TR_TEST(device_list_wraps_the_1_1_devices)
{
	rt_run_both(NULL, ck_devices);
}

/* ------------------------------------------------------------------ */
/* COMPAT-14: the context fills only the data path; the queries agree.  */

static void ck_context(struct rt *t)
{
	struct v10_env e;
	struct v10_context_ops *o;
	struct ibv_device_attr da, rda;
	struct ibv_port_attr pa, rpa;
	union ibv_gid gid, rgid;
	__be16 pkey = 0, rpkey = 1;
	void **slot;
	size_t i, filled = 0;

	if (v10_open(t, &e))
		goto out;
	o = &e.ctx->ops;
	TR_EXPECT(e.ctx->device == e.list[0]);
	TR_EXPECT(verbs_get_ctx(e.ctx->real_context) != NULL);
	TR_EXPECT(e.ctx->async_fd == e.ctx->real_context->async_fd);
	TR_EXPECT(e.ctx->num_comp_vectors == e.ctx->real_context->num_comp_vectors);
	TR_EXPECT(o->poll_cq && o->req_notify_cq && o->post_send &&
		 o->post_recv && o->post_srq_recv);
	for (slot = (void **)o, i = 0; i < sizeof(*o) / sizeof(void *); i++)
		filled += slot[i] != NULL;
	TR_EXPECT(filled == 5);

	TR_EXPECT(v10.query_device(e.ctx, &da) == 0);
	TR_EXPECT(ibv_query_device(e.ctx->real_context, &rda) == 0);
	TR_EXPECT(!memcmp(&da, &rda, sizeof(da)));
	TR_EXPECT(v10.query_device(NULL, &da) == EINVAL);
	/* a 1.0 port attr ends with phys_state: the byte past it is kept */
	memset(&pa, 0xa5, sizeof(pa));
	TR_EXPECT(v10.query_port(e.ctx, 1, &pa) == 0);
	TR_EXPECT(ibv_query_port(e.ctx->real_context, 1, &rpa) == 0);
	TR_EXPECT(pa.state == IBV_PORT_ACTIVE && pa.lid == rpa.lid &&
		 pa.gid_tbl_len == rpa.gid_tbl_len &&
		 pa.phys_state == rpa.phys_state);
	TR_EXPECT(pa.link_layer == 0xa5);
	TR_EXPECT(v10.query_port(e.ctx, 1, NULL) == EINVAL);
	TR_EXPECT(v10.query_port(e.ctx, 9, &pa) != 0);
	TR_EXPECT(v10.query_gid(e.ctx, 1, 0, &gid) == 0);
	TR_EXPECT(ibv_query_gid(e.ctx->real_context, 1, 0, &rgid) == 0);
	TR_EXPECT(!memcmp(&gid, &rgid, sizeof(gid)) && gid.global.interface_id);
	TR_EXPECT(v10.query_pkey(e.ctx, 1, 0, &pkey) == 0);
	TR_EXPECT(ibv_query_pkey(e.ctx->real_context, 1, 0, &rpkey) == 0);
	TR_EXPECT(pkey == rpkey && pkey == htobe16(0xffff));
	TR_EXPECT(v10.query_gid(e.ctx, 1, -1, &gid) == -1 && errno == EINVAL);
	TR_EXPECT(v10.query_pkey(e.ctx, 1, -1, &pkey) == -1 && errno == ENOENT);
out:
	v10_close(t, &e);
}

TR_TEST(context_fills_only_the_data_path)
{
	rt_run_both(NULL, ck_context);
}

/* ------------------------------------------------------------------ */
/* COMPAT-12: objects are wrappers pointing at the 1.1 objects.         */

static void ck_objects(struct rt *t)
{
	static char buf[256];
	struct v10_env e;
	struct v10_pd *pd = NULL;
	struct v10_mr *mr = NULL;
	struct v10_cq *cq = NULL;
	struct v10_srq *srq = NULL;
	struct v10_qp *qp = NULL, *sqp = NULL, *ud = NULL;
	struct v10_ah *ah = NULL;
	struct ibv_srq_init_attr sa = { .srq_context = &sa,
					.attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr sattr = { .srq_limit = 2 };
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct v10_qp_init_attr qi;
	union ibv_gid mgid = { .raw = { 0xff, 0x12 } };
	int cq_ctx, qp_ctx;

	if (v10_open(t, &e))
		goto out;
	pd = v10.alloc_pd(e.ctx);
	TR_EXPECT(pd && pd->context == e.ctx && pd->real_pd &&
		 pd->real_pd->context == e.ctx->real_context &&
		 pd->handle == pd->real_pd->handle);
	if (!pd)
		goto out;
	mr = v10.reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	TR_EXPECT(mr && mr->pd == pd && mr->context == e.ctx &&
		 mr->lkey == mr->real_mr->lkey && mr->rkey == mr->real_mr->rkey &&
		 mr->real_mr->pd == pd->real_pd);
	/* the 1.1 refusal comes through, and no wrapper is left behind */
	TR_EXPECT(RT_PTR_ERRNO(v10.reg_mr(pd, buf, sizeof(buf), 1 << 30)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(v10.reg_mr(NULL, buf, 1, 0)) == EINVAL);

	cq = v10.create_cq(e.ctx, 16, &cq_ctx, NULL, 0);
	TR_EXPECT(cq && cq->context == e.ctx && cq->cq_context == &cq_ctx &&
		 cq->real_cq->cq_context == cq && cq->cqe >= 16 &&
		 cq->cqe == cq->real_cq->cqe);
	if (!cq)
		goto out;
	TR_EXPECT(RT_PTR_ERRNO(v10.create_cq(e.ctx, 0, NULL, NULL, 0)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(v10.create_cq(NULL, 1, NULL, NULL, 0)) == EINVAL);
	TR_EXPECT(v10.resize_cq(cq, 40) == 0);
	TR_EXPECT(cq->cqe >= 40 && cq->cqe == cq->real_cq->cqe);
	TR_EXPECT(v10.resize_cq(cq, 0) == EINVAL);
	TR_EXPECT(v10.resize_cq(NULL, 8) == EINVAL);

	srq = v10.create_srq(pd, &sa);
	TR_EXPECT(srq && srq->pd == pd && srq->srq_context == &sa &&
		 srq->real_srq->srq_context == srq && sa.attr.max_wr >= 8);
	if (!srq)
		goto out;
	TR_EXPECT(RT_PTR_ERRNO(v10.create_srq(NULL, &sa)) == EINVAL);
	TR_EXPECT(v10.modify_srq(srq, &sattr, IBV_SRQ_LIMIT) == 0);
	memset(&sattr, 0, sizeof(sattr));
	TR_EXPECT(v10.query_srq(srq, &sattr) == 0 && sattr.srq_limit == 2);
	TR_EXPECT(v10.query_srq(NULL, &sattr) == EINVAL);
	TR_EXPECT(v10.modify_srq(NULL, &sattr, IBV_SRQ_LIMIT) == EINVAL);

	qp = v10_qp(pd, cq, NULL, IBV_QPT_RC, &qp_ctx);
	TR_EXPECT(qp && qp->pd == pd && qp->context == e.ctx &&
		 qp->send_cq == cq && qp->recv_cq == cq && !qp->srq &&
		 qp->qp_num == qp->real_qp->qp_num && qp->qp_type == IBV_QPT_RC &&
		 qp->real_qp->qp_context == qp && qp->qp_context == &qp_ctx &&
		 qp->state == IBV_QPS_RESET);
	sqp = v10_qp(pd, cq, srq, IBV_QPT_RC, NULL);
	TR_EXPECT(sqp && sqp->srq == srq && sqp->real_qp->srq == srq->real_srq);
	if (!qp || !sqp)
		goto out;
	TR_EXPECT(RT_PTR_ERRNO(v10_qp(NULL, cq, NULL, IBV_QPT_RC, NULL)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(v10_qp(pd, NULL, NULL, IBV_QPT_RC, NULL)) == EINVAL);
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	TR_EXPECT(v10.modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	TR_EXPECT(qp->state == IBV_QPS_INIT);
	TR_EXPECT(v10.modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_QKEY) != 0);
	TR_EXPECT(qp->state == IBV_QPS_INIT);
	TR_EXPECT(v10.modify_qp(NULL, &qa, IBV_QP_STATE) == EINVAL);
	/* the caller's objects come back, never the 1.1 ones */
	memset(&qi, 0xa5, sizeof(qi));
	TR_EXPECT(v10.query_qp(qp, &qa, IBV_QP_STATE, &qi) == 0);
	TR_EXPECT(qa.qp_state == IBV_QPS_INIT && qi.qp_context == &qp_ctx &&
		 qi.send_cq == cq && qi.recv_cq == cq && qi.srq == NULL &&
		 qi.qp_type == IBV_QPT_RC && qi.cap.max_send_wr >= 8);
	TR_EXPECT(v10.query_qp(sqp, &qa, IBV_QP_STATE, &qi) == 0 && qi.srq == srq);
	TR_EXPECT(v10.query_qp(NULL, &qa, IBV_QP_STATE, &qi) == EINVAL);
	TR_EXPECT(v10.query_qp(qp, NULL, IBV_QP_STATE, &qi) == EINVAL);

	aa.dlid = rt_port_lid(e.ctx->real_context);
	ah = v10.create_ah(pd, &aa);
	TR_EXPECT(ah && ah->pd == pd && ah->context == e.ctx && ah->real_ah &&
		 ah->real_ah->pd == pd->real_pd);
	aa.port_num = 9;
	TR_EXPECT(RT_PTR_ERRNO(v10.create_ah(pd, &aa)) != -1);
	TR_EXPECT(RT_PTR_ERRNO(v10.create_ah(NULL, &aa)) == EINVAL);

	ud = v10_qp(pd, cq, NULL, IBV_QPT_UD, NULL);
	TR_EXPECT(ud != NULL);
	if (ud) {
		TR_EXPECT(v10.attach_mcast(ud, &mgid, 0xc001) == 0);
		TR_EXPECT(v10.detach_mcast(ud, &mgid, 0xc001) == 0);
		TR_EXPECT(v10.detach_mcast(ud, &mgid, 0xc001) != 0);
	}
	TR_EXPECT(v10.attach_mcast(qp, &mgid, 0xc001) != 0);	/* RC: refused */
	TR_EXPECT(v10.attach_mcast(NULL, &mgid, 0xc001) == EINVAL);
	TR_EXPECT(v10.detach_mcast(NULL, &mgid, 0xc001) == EINVAL);

	/* a refused destroy leaves the wrapper usable; NULL is EINVAL */
	TR_EXPECT(v10.dealloc_pd(pd) != 0 && pd->real_pd->context);
	TR_EXPECT(v10.destroy_cq(cq) != 0 && cq->real_cq->cq_context == cq);
	TR_EXPECT(v10.destroy_srq(srq) != 0 && srq->real_srq->srq_context == srq);
	TR_EXPECT(v10.dealloc_pd(NULL) == EINVAL && v10.dereg_mr(NULL) == EINVAL &&
		 v10.destroy_cq(NULL) == EINVAL && v10.destroy_qp(NULL) == EINVAL &&
		 v10.destroy_srq(NULL) == EINVAL && v10.destroy_ah(NULL) == EINVAL);
out:
	if (ud)
		TR_EXPECT(v10.destroy_qp(ud) == 0);
	if (ah)
		TR_EXPECT(v10.destroy_ah(ah) == 0);
	if (sqp)
		TR_EXPECT(v10.destroy_qp(sqp) == 0);
	if (qp)
		TR_EXPECT(v10.destroy_qp(qp) == 0);
	if (srq)
		TR_EXPECT(v10.destroy_srq(srq) == 0);
	if (cq)
		TR_EXPECT(v10.destroy_cq(cq) == 0);
	if (mr)
		TR_EXPECT(v10.dereg_mr(mr) == 0);
	if (pd)
		TR_EXPECT(v10.dealloc_pd(pd) == 0);
	v10_close(t, &e);
}

TR_TEST(objects_wrap_the_1_1_objects)
{
	rt_run_both(NULL, ck_objects);
}

/* ------------------------------------------------------------------ */
/* COMPAT-14, WR-07: the data path through the 1.0 ops.                 */

static int v10_poll_one(struct v10_context *ctx, struct v10_cq *cq,
			struct ibv_wc *wc)
{
	int i, n = 0;

	for (i = 0; i < 200000 && n == 0; i++)
		n = ctx->ops.poll_cq(cq, 1, wc);
	return n;
}

static void ck_datapath(struct rt *t)
{
	static char src[64] = "one-oh", dst[64], udbuf[64 + 40];
	struct v10_env e;
	struct v10_pd *pd = NULL;
	struct v10_mr *mr = NULL, *dmr = NULL, *umr = NULL;
	struct v10_cq *cq = NULL;
	struct v10_srq *srq = NULL;
	struct v10_qp *x = NULL, *y = NULL, *u1 = NULL, *u2 = NULL;
	struct v10_ah *ah = NULL;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_sge sge, dsge, usge, bad_sge[4];
	struct v10_recv_wr r[3], *rbad = NULL;
	struct v10_send_wr s[2], *sbad = NULL;
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_wc wc;
	uint16_t lid;
	struct v10_context_ops *o;

	if (v10_open(t, &e))
		goto out;
	o = &e.ctx->ops;
	lid = rt_port_lid(e.ctx->real_context);
	pd = v10.alloc_pd(e.ctx);
	cq = pd ? v10.create_cq(e.ctx, 32, NULL, NULL, 0) : NULL;
	srq = pd ? v10.create_srq(pd, &sa) : NULL;
	mr = pd ? v10.reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE) : NULL;
	dmr = pd ? v10.reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE) : NULL;
	umr = pd ? v10.reg_mr(pd, udbuf, sizeof(udbuf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	TR_EXPECT(pd && cq && srq && mr && dmr && umr);
	if (!pd || !cq || !srq || !mr || !dmr || !umr)
		goto out;
	x = v10_qp(pd, cq, NULL, IBV_QPT_RC, NULL);
	y = v10_qp(pd, cq, NULL, IBV_QPT_RC, NULL);
	TR_EXPECT(x && y);
	if (!x || !y)
		goto out;
	TR_EXPECT(rt_connect_qp(x->real_qp, y->qp_num, lid) == 0);
	TR_EXPECT(rt_connect_qp(y->real_qp, x->qp_num, lid) == 0);

	/* two receives in one 1.0 chain, then a SEND with immediate */
	sge = (struct ibv_sge){ (uintptr_t)src, 6, mr->lkey };
	dsge = (struct ibv_sge){ (uintptr_t)dst, sizeof(dst), dmr->lkey };
	memset(r, 0, sizeof(r));
	r[0] = (struct v10_recv_wr){ &r[1], 11, &dsge, 1 };
	r[1] = (struct v10_recv_wr){ NULL, 12, &dsge, 1 };
	TR_EXPECT(o->post_recv(y, r, &rbad) == 0);
	memset(s, 0, sizeof(s));
	s[0].wr_id = 21;
	s[0].sg_list = &sge;
	s[0].num_sge = 1;
	s[0].opcode = IBV_WR_SEND_WITH_IMM;
	s[0].send_flags = IBV_SEND_SIGNALED;
	s[0].imm_data = htobe32(0x1234);
	TR_EXPECT(o->post_send(x, s, &sbad) == 0);
	TR_EXPECT(v10_poll_one(e.ctx, cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	if (wc.wr_id == 21)
		TR_EXPECT(v10_poll_one(e.ctx, cq, &wc) == 1);
	TR_EXPECT(wc.wr_id == 11 && wc.opcode == IBV_WC_RECV && wc.byte_len == 6 &&
		 (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0x1234));
	TR_EXPECT(!memcmp(dst, "one-oh", 6));
	if (wc.wr_id == 11 && o->poll_cq(cq, 1, &wc) == 1)
		TR_EXPECT(wc.wr_id == 21);

	/* RDMA WRITE: remote_addr and rkey reach the 1.1 WR */
	memset(dst, 0, sizeof(dst));
	memset(s, 0, sizeof(s));
	s[0].wr_id = 22;
	s[0].sg_list = &sge;
	s[0].num_sge = 1;
	s[0].opcode = IBV_WR_RDMA_WRITE;
	s[0].send_flags = IBV_SEND_SIGNALED;
	s[0].wr.rdma.remote_addr = (uintptr_t)dst + 8;
	s[0].wr.rdma.rkey = dmr->rkey;
	TR_EXPECT(o->post_send(x, s, &sbad) == 0);
	TR_EXPECT(v10_poll_one(e.ctx, cq, &wc) == 1 && wc.wr_id == 22 &&
		 wc.status == IBV_WC_SUCCESS);
	TR_EXPECT(!memcmp(dst + 8, "one-oh", 6));

	/* bad_wr names the 1.0 WR the provider refused, by position */
	memset(s, 0, sizeof(s));
	s[0] = (struct v10_send_wr){ .next = &s[1], .wr_id = 23, .sg_list = &sge,
				     .num_sge = 1, .opcode = IBV_WR_SEND };
	s[1] = (struct v10_send_wr){ .wr_id = 24, .sg_list = bad_sge,
				     .num_sge = 4, .opcode = IBV_WR_SEND };
	memset(bad_sge, 0, sizeof(bad_sge));
	sbad = NULL;
	TR_EXPECT(o->post_send(x, s, &sbad) != 0);
	TR_EXPECT(sbad == &s[1]);
	/* the WR before it was posted: its receive completes on y */
	TR_EXPECT(v10_poll_one(e.ctx, cq, &wc) == 1 && wc.wr_id == 12);
	r[0] = (struct v10_recv_wr){ &r[1], 13, &dsge, 1 };
	r[1] = (struct v10_recv_wr){ &r[2], 14, bad_sge, 4 };
	r[2] = (struct v10_recv_wr){ NULL, 15, &dsge, 1 };
	rbad = NULL;
	TR_EXPECT(o->post_recv(x, r, &rbad) != 0 && rbad == &r[1]);
	rbad = NULL;
	TR_EXPECT(o->post_srq_recv(srq, r, &rbad) != 0 && rbad == &r[1]);
	r[1].next = NULL;
	r[0].next = NULL;
	TR_EXPECT(o->post_srq_recv(srq, r, &rbad) == 0);
	/* solicited-only and any notify request reach the provider */
	TR_EXPECT(o->req_notify_cq(cq, 0) == 0);
	TR_EXPECT(o->req_notify_cq(cq, 1) == 0);

	/* UD: the 1.0 AH is translated to the 1.1 one (COMPAT-14) */
	u1 = v10_qp(pd, cq, NULL, IBV_QPT_UD, NULL);
	u2 = v10_qp(pd, cq, NULL, IBV_QPT_UD, NULL);
	aa.dlid = lid;
	ah = v10.create_ah(pd, &aa);
	TR_EXPECT(u1 && u2 && ah);
	if (!u1 || !u2 || !ah)
		goto out;
	TR_EXPECT(rt_connect_qp(u1->real_qp, 0, lid) == 0);
	TR_EXPECT(rt_connect_qp(u2->real_qp, 0, lid) == 0);
	usge = (struct ibv_sge){ (uintptr_t)udbuf, sizeof(udbuf), umr->lkey };
	r[0] = (struct v10_recv_wr){ NULL, 31, &usge, 1 };
	TR_EXPECT(o->post_recv(u2, r, &rbad) == 0);
	memset(s, 0, sizeof(s));
	s[0].wr_id = 32;
	s[0].sg_list = &sge;
	s[0].num_sge = 1;
	s[0].opcode = IBV_WR_SEND;
	s[0].send_flags = IBV_SEND_SIGNALED;
	s[0].wr.ud.ah = ah;
	s[0].wr.ud.remote_qpn = u2->qp_num;
	s[0].wr.ud.remote_qkey = 0x11111111;
	TR_EXPECT(o->post_send(u1, s, &sbad) == 0);
	TR_EXPECT(v10_poll_one(e.ctx, cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	if (wc.wr_id == 32)
		TR_EXPECT(v10_poll_one(e.ctx, cq, &wc) == 1);
	TR_EXPECT(wc.wr_id == 31 && wc.src_qp == u1->qp_num && wc.byte_len == 40 + 6);
	TR_EXPECT(!memcmp(udbuf + 40, "one-oh", 6));
out:
	if (ah)
		TR_EXPECT(v10.destroy_ah(ah) == 0);
	if (u2)
		TR_EXPECT(v10.destroy_qp(u2) == 0);
	if (u1)
		TR_EXPECT(v10.destroy_qp(u1) == 0);
	if (y)
		TR_EXPECT(v10.destroy_qp(y) == 0);
	if (x)
		TR_EXPECT(v10.destroy_qp(x) == 0);
	if (srq)
		TR_EXPECT(v10.destroy_srq(srq) == 0);
	if (cq)
		TR_EXPECT(v10.destroy_cq(cq) == 0);
	if (umr)
		TR_EXPECT(v10.dereg_mr(umr) == 0);
	if (dmr)
		TR_EXPECT(v10.dereg_mr(dmr) == 0);
	if (mr)
		TR_EXPECT(v10.dereg_mr(mr) == 0);
	if (pd)
		TR_EXPECT(v10.dealloc_pd(pd) == 0);
	v10_close(t, &e);
}

TR_TEST(data_path_through_the_1_0_ops)
{
	rt_run_both(NULL, ck_datapath);
}

/* ------------------------------------------------------------------ */
/* COMPAT-13: async and completion events name the wrappers.            */

static const char events_script[] =
	"event port_err after alloc_pd 1 port 1\n"
	"event qp_fatal after modify_qp 1\n"
	"event srq_limit_reached after modify_srq 1\n"
	"event cq_err after resize_cq 1\n";

static void ck_events(struct rt *t)
{
	static char buf[16] = "event";
	struct v10_env e;
	struct ibv_comp_channel *ch = NULL;
	struct v10_pd *pd = NULL;
	struct v10_cq *cq = NULL, *ecq = NULL, *evcq = NULL;
	struct v10_srq *srq = NULL;
	struct v10_qp *qp = NULL, *x = NULL, *y = NULL;
	struct v10_mr *mr = NULL;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr lim = { .srq_limit = 4 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_async_event ev;
	struct ibv_sge sge;
	struct v10_recv_wr rwr, *rbad;
	struct v10_send_wr swr, *sbad;
	struct ibv_wc wc;
	void *evctx = NULL;
	int seen[4] = { 0 }, i, cq_ctx;
	uint16_t lid;

	if (v10_open(t, &e))
		goto out;
	lid = rt_port_lid(e.ctx->real_context);
	pd = v10.alloc_pd(e.ctx);
	cq = pd ? v10.create_cq(e.ctx, 16, NULL, NULL, 0) : NULL;
	srq = pd ? v10.create_srq(pd, &sa) : NULL;
	qp = cq ? v10_qp(pd, cq, NULL, IBV_QPT_RC, NULL) : NULL;
	TR_EXPECT(pd && cq && srq && qp);
	if (!pd || !cq || !srq || !qp)
		goto out;
	TR_EXPECT(v10.modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	TR_EXPECT(v10.modify_srq(srq, &lim, IBV_SRQ_LIMIT) == 0);
	TR_EXPECT(v10.resize_cq(cq, 32) == 0);
	for (i = 0; i < 4; i++) {
		TR_EXPECT(rt_readable(e.ctx->async_fd));
		if (tr_checks_failed() || v10.get_async_event(e.ctx, &ev))
			break;
		switch (ev.event_type) {
		case IBV_EVENT_PORT_ERR:
			seen[0] = ev.element.port_num == 1;
			break;
		case IBV_EVENT_QP_FATAL:
			seen[1] = (void *)ev.element.qp == qp;
			break;
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			seen[2] = (void *)ev.element.srq == srq;
			break;
		case IBV_EVENT_CQ_ERR:
			seen[3] = (void *)ev.element.cq == cq;
			break;
		default:
			TR_EXPECT(!"unexpected event type");
		}
		/* the ack gives the 1.1 layer its object: destroys do not wait */
		v10.ack_async_event(&ev);
		TR_EXPECT((void *)ev.element.qp != NULL);
	}
	TR_EXPECT(seen[0] && seen[1] && seen[2] && seen[3]);
	TR_EXPECT(v10.get_async_event(NULL, &ev) == EINVAL);
	v10.ack_async_event(NULL);		/* nothing to ack: no crash */

	/* a completion event names the 1.0 CQ and its cq_context */
	ch = ibv_create_comp_channel(e.ctx->real_context);
	ecq = ch ? v10.create_cq(e.ctx, 16, &cq_ctx, ch, 0) : NULL;
	mr = v10.reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	TR_EXPECT(ch && ecq && mr);
	if (!ch || !ecq || !mr)
		goto out;
	x = v10_qp(pd, ecq, NULL, IBV_QPT_RC, NULL);
	y = v10_qp(pd, ecq, NULL, IBV_QPT_RC, NULL);
	TR_EXPECT(x && y);
	if (!x || !y)
		goto out;
	TR_EXPECT(rt_connect_qp(x->real_qp, y->qp_num, lid) == 0);
	TR_EXPECT(rt_connect_qp(y->real_qp, x->qp_num, lid) == 0);
	TR_EXPECT(e.ctx->ops.req_notify_cq(ecq, 0) == 0);
	sge = (struct ibv_sge){ (uintptr_t)buf, 5, mr->lkey };
	rwr = (struct v10_recv_wr){ NULL, 1, &sge, 1 };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 2;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	TR_EXPECT(e.ctx->ops.post_recv(y, &rwr, &rbad) == 0);
	TR_EXPECT(e.ctx->ops.post_send(x, &swr, &sbad) == 0);
	TR_EXPECT(rt_readable(ch->fd));
	if (!tr_checks_failed() && v10.get_cq_event(ch, &evcq, &evctx) == 0) {
		TR_EXPECT(evcq == ecq);
		TR_EXPECT(evctx == &cq_ctx);
		v10.ack_cq_events(ecq, 1);
	} else {
		TR_EXPECT(!"no completion event");
	}
	TR_EXPECT(v10_poll_one(e.ctx, ecq, &wc) == 1);
	TR_EXPECT(v10_poll_one(e.ctx, ecq, &wc) == 1);
	TR_EXPECT(v10.get_cq_event(ch, NULL, &evctx) == EINVAL);
	v10.ack_cq_events(NULL, 1);		/* nothing to ack: no crash */
out:
	if (x)
		TR_EXPECT(v10.destroy_qp(x) == 0);
	if (y)
		TR_EXPECT(v10.destroy_qp(y) == 0);
	if (ecq)
		TR_EXPECT(v10.destroy_cq(ecq) == 0);
	if (ch)
		TR_EXPECT(ibv_destroy_comp_channel(ch) == 0);
	if (mr)
		TR_EXPECT(v10.dereg_mr(mr) == 0);
	if (qp)
		TR_EXPECT(v10.destroy_qp(qp) == 0);
	if (srq)
		TR_EXPECT(v10.destroy_srq(srq) == 0);
	if (cq)
		TR_EXPECT(v10.destroy_cq(cq) == 0);
	if (pd)
		TR_EXPECT(v10.dealloc_pd(pd) == 0);
	v10_close(t, &e);
}

TR_TEST(events_name_the_1_0_objects)
{
	rt_run_both(events_script, ck_events);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
