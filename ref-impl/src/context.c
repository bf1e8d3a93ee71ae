/* SPDX-License-Identifier: MIT */
/*
 * Device contexts: their allocation (opened and closed by device.c), the
 * per-context ops table (stubs first, then the provider's overlay:
 * verbs_set_ops), and the app-visible verbs_context slots (XRC-era and
 * later ops) that the inline verbs of <infiniband/verbs.h> jump through.
 * Every slot points somewhere: a core entry point, or a stub that answers
 * EOPNOTSUPP.
 */
#include <stdlib.h>
#include <string.h>

#include "ri.h"

/* The legacy view of ctx->ops must match the header's struct exactly. */
_Static_assert(sizeof(struct ibv_legacy_context_ops) ==
	       sizeof(struct ibv_context_ops), "legacy ops layout");
_Static_assert(sizeof(struct ibv_legacy_device_ops) ==
	       sizeof(struct _ibv_device_ops), "legacy device ops layout");

/* ------------------------------------------------------------------ */
/* "Not supported" stubs (keep sorted).                                 */

/*
 * One family for every op of the private table and every app-visible
 * verbs_context slot the core does not serve. They answer as rdma-core
 * v44.0 libibverbs/dummy_ops.c does: a pointer op NULL with errno
 * EOPNOTSUPP, an int op EOPNOTSUPP, a void op nothing; two differ from
 * it: poll_cq returns -1 (dummy_ops.c:359 returns EOPNOTSUPP, which a
 * caller would count as completions) and the post stubs name the whole
 * list in *bad (dummy_ops.c:364-386 leave it).
 */
#define RI_STUB_PTR(name, type, ...)				\
	static type ri_stub_##name(__VA_ARGS__)			\
	{							\
		errno = EOPNOTSUPP;				\
		return NULL;					\
	}
#define RI_STUB_INT(name, ...)					\
	static int ri_stub_##name(__VA_ARGS__)			\
	{							\
		return EOPNOTSUPP;				\
	}
#define RI_STUB_VOID(name, ...)					\
	static void ri_stub_##name(__VA_ARGS__)			\
	{							\
	}
/* A post verb names the whole list as not posted. */
#define RI_STUB_POST(name, obj, wr)				\
	static int ri_stub_##name(obj, wr *w, wr **bad)		\
	{							\
		*bad = w;					\
		return EOPNOTSUPP;				\
	}

RI_STUB_INT(ack_async_event, struct ibv_async_event *e)
RI_STUB_INT(advise_mr, struct ibv_pd *pd, enum ibv_advise_mr_advice a,
	    uint32_t f, struct ibv_sge *s, uint32_t n)
RI_STUB_PTR(alloc_dm, struct ibv_dm *, struct ibv_context *c,
	    struct ibv_alloc_dm_attr *a)
RI_STUB_PTR(alloc_mw, struct ibv_mw *, struct ibv_pd *pd, enum ibv_mw_type t)
RI_STUB_PTR(alloc_null_mr, struct ibv_mr *, struct ibv_pd *pd)
RI_STUB_PTR(alloc_parent_domain, struct ibv_pd *, struct ibv_context *c,
	    struct ibv_parent_domain_init_attr *a)
RI_STUB_PTR(alloc_pd, struct ibv_pd *, struct ibv_context *c)
RI_STUB_PTR(alloc_td, struct ibv_td *, struct ibv_context *c,
	    struct ibv_td_init_attr *a)
RI_STUB_INT(attach_counters_point_flow, struct ibv_counters *c,
	    struct ibv_counter_attach_attr *a, struct ibv_flow *f)
RI_STUB_INT(attach_mcast, struct ibv_qp *qp, const union ibv_gid *g, uint16_t l)
RI_STUB_INT(bind_mw, struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
RI_STUB_INT(close_xrcd, struct ibv_xrcd *x)
RI_STUB_VOID(cq_event, struct ibv_cq *cq)
RI_STUB_PTR(create_ah, struct ibv_ah *, struct ibv_pd *pd, struct ibv_ah_attr *a)
RI_STUB_PTR(create_counters, struct ibv_counters *, struct ibv_context *c,
	    struct ibv_counters_init_attr *a)
RI_STUB_PTR(create_cq, struct ibv_cq *, struct ibv_context *c, int cqe,
	    struct ibv_comp_channel *ch, int v)
RI_STUB_PTR(create_cq_ex, struct ibv_cq_ex *, struct ibv_context *c,
	    struct ibv_cq_init_attr_ex *a)
RI_STUB_PTR(create_flow, struct ibv_flow *, struct ibv_qp *qp,
	    struct ibv_flow_attr *a)
RI_STUB_PTR(create_flow_action_esp, struct ibv_flow_action *,
	    struct ibv_context *c, struct ibv_flow_action_esp_attr *a)
RI_STUB_PTR(create_qp, struct ibv_qp *, struct ibv_pd *pd,
	    struct ibv_qp_init_attr *a)
RI_STUB_PTR(create_qp_ex, struct ibv_qp *, struct ibv_context *c,
	    struct ibv_qp_init_attr_ex *a)
RI_STUB_PTR(create_rwq_ind_table, struct ibv_rwq_ind_table *,
	    struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *a)
RI_STUB_PTR(create_srq, struct ibv_srq *, struct ibv_pd *pd,
	    struct ibv_srq_init_attr *a)
RI_STUB_PTR(create_srq_ex, struct ibv_srq *, struct ibv_context *c,
	    struct ibv_srq_init_attr_ex *a)
RI_STUB_PTR(create_wq, struct ibv_wq *, struct ibv_context *c,
	    struct ibv_wq_init_attr *a)
RI_STUB_INT(dealloc_mw, struct ibv_mw *mw)
RI_STUB_INT(dealloc_pd, struct ibv_pd *pd)
RI_STUB_INT(dealloc_td, struct ibv_td *td)
RI_STUB_INT(dereg_mr, struct ibv_mr *mr)
RI_STUB_INT(destroy_ah, struct ibv_ah *ah)
RI_STUB_INT(destroy_counters, struct ibv_counters *c)
RI_STUB_INT(destroy_cq, struct ibv_cq *cq)
RI_STUB_INT(destroy_flow, struct ibv_flow *f)
RI_STUB_INT(destroy_flow_action, struct ibv_flow_action *a)
RI_STUB_INT(destroy_qp, struct ibv_qp *qp)
RI_STUB_INT(destroy_rwq_ind_table, struct ibv_rwq_ind_table *t)
RI_STUB_INT(destroy_srq, struct ibv_srq *srq)
RI_STUB_INT(destroy_wq, struct ibv_wq *wq)
RI_STUB_INT(detach_mcast, struct ibv_qp *qp, const union ibv_gid *g, uint16_t l)
RI_STUB_VOID(free_context, struct ibv_context *c)
RI_STUB_INT(free_dm, struct ibv_dm *dm)
RI_STUB_INT(get_srq_num, struct ibv_srq *srq, uint32_t *n)
RI_STUB_PTR(import_mr, struct ibv_mr *, struct ibv_pd *pd, uint32_t h)
RI_STUB_PTR(import_pd, struct ibv_pd *, struct ibv_context *c, uint32_t h)
RI_STUB_INT(modify_cq, struct ibv_cq *cq, struct ibv_modify_cq_attr *a)
RI_STUB_INT(modify_flow_action_esp, struct ibv_flow_action *a,
	    struct ibv_flow_action_esp_attr *e)
RI_STUB_INT(modify_qp, struct ibv_qp *qp, struct ibv_qp_attr *a, int m)
RI_STUB_INT(modify_qp_rate_limit, struct ibv_qp *qp,
	    struct ibv_qp_rate_limit_attr *a)
RI_STUB_INT(modify_srq, struct ibv_srq *srq, struct ibv_srq_attr *a, int m)
RI_STUB_INT(modify_wq, struct ibv_wq *wq, struct ibv_wq_attr *a)
RI_STUB_PTR(open_qp, struct ibv_qp *, struct ibv_context *c,
	    struct ibv_qp_open_attr *a)
RI_STUB_PTR(open_xrcd, struct ibv_xrcd *, struct ibv_context *c,
	    struct ibv_xrcd_init_attr *a)
/* the ABI_placeholder slots and the never-called 1.1 event slots */
RI_STUB_VOID(placeholder, void)
static int ri_stub_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return -1;	/* poll_cq's error convention is a negative count */
}
RI_STUB_POST(post_recv, struct ibv_qp *qp, struct ibv_recv_wr)
RI_STUB_POST(post_send, struct ibv_qp *qp, struct ibv_send_wr)
RI_STUB_POST(post_srq_ops, struct ibv_srq *srq, struct ibv_ops_wr)
RI_STUB_POST(post_srq_recv, struct ibv_srq *srq, struct ibv_recv_wr)
RI_STUB_INT(query_device, struct ibv_context *c, struct ibv_device_attr *a)
RI_STUB_INT(query_device_ex, struct ibv_context *c,
	    const struct ibv_query_device_ex_input *in,
	    struct ibv_device_attr_ex *a, size_t s)
RI_STUB_INT(query_gid, struct ibv_context *c, uint8_t p, int i, union ibv_gid *g)
RI_STUB_INT(query_pkey, struct ibv_context *c, uint8_t p, int i, __be16 *k)
RI_STUB_INT(query_port, struct ibv_context *c, uint8_t p, struct ibv_port_attr *a)
RI_STUB_INT(query_qp, struct ibv_qp *qp, struct ibv_qp_attr *a, int m,
	    struct ibv_qp_init_attr *i)
/* rdma-core v44.0 libibverbs/dummy_ops.c:400: not in order, whatever was asked */
static int ri_stub_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
					  uint32_t flags)
{
	return 0;
}
RI_STUB_INT(query_rt_values, struct ibv_context *c, struct ibv_values_ex *v)
RI_STUB_INT(query_srq, struct ibv_srq *srq, struct ibv_srq_attr *a)
RI_STUB_INT(read_counters, struct ibv_counters *c, uint64_t *v, uint32_t n,
	    uint32_t f)
RI_STUB_PTR(reg_dm_mr, struct ibv_mr *, struct ibv_pd *pd, struct ibv_dm *dm,
	    uint64_t off, size_t len, unsigned int acc)
RI_STUB_PTR(reg_mr, struct ibv_mr *, struct ibv_pd *pd, void *addr, size_t len,
	    uint64_t va, int acc)
RI_STUB_INT(req_notify_cq, struct ibv_cq *cq, int s)
RI_STUB_INT(rereg_mr, struct ibv_mr *mr, int f, struct ibv_pd *pd, void *addr, size_t len,
	    int acc)
RI_STUB_INT(resize_cq, struct ibv_cq *cq, int cqe)
RI_STUB_VOID(unimport_mr, struct ibv_mr *mr)
RI_STUB_VOID(unimport_pd, struct ibv_pd *pd)

static const struct verbs_context_ops ri_stub_ops = {
	.ack_async_event = ri_stub_ack_async_event,
	.alloc_mw = ri_stub_alloc_mw,
	.alloc_parent_domain = ri_stub_alloc_parent_domain,
	.alloc_pd = ri_stub_alloc_pd,
	.alloc_td = ri_stub_alloc_td,
	.attach_mcast = ri_stub_attach_mcast,
	.bind_mw = ri_stub_bind_mw,
	.close_xrcd = ri_stub_close_xrcd,
	.cq_event = ri_stub_cq_event,
	.create_ah = ri_stub_create_ah,
	.create_cq = ri_stub_create_cq,
	.create_cq_ex = ri_stub_create_cq_ex,
	.create_qp = ri_stub_create_qp,
	.create_qp_ex = ri_stub_create_qp_ex,
	.create_srq = ri_stub_create_srq,
	.create_srq_ex = ri_stub_create_srq_ex,
	.dealloc_mw = ri_stub_dealloc_mw,
	.dealloc_pd = ri_stub_dealloc_pd,
	.dealloc_td = ri_stub_dealloc_td,
	.dereg_mr = ri_stub_dereg_mr,
	.destroy_ah = ri_stub_destroy_ah,
	.destroy_cq = ri_stub_destroy_cq,
	.destroy_qp = ri_stub_destroy_qp,
	.destroy_srq = ri_stub_destroy_srq,
	.detach_mcast = ri_stub_detach_mcast,
	.free_context = ri_stub_free_context,
	.get_srq_num = ri_stub_get_srq_num,
	.import_mr = ri_stub_import_mr,
	.import_pd = ri_stub_import_pd,
	.modify_qp = ri_stub_modify_qp,
	.modify_srq = ri_stub_modify_srq,
	.open_qp = ri_stub_open_qp,
	.open_xrcd = ri_stub_open_xrcd,
	.poll_cq = ri_stub_poll_cq,
	.post_recv = ri_stub_post_recv,
	.post_send = ri_stub_post_send,
	.post_srq_recv = ri_stub_post_srq_recv,
	.query_device = ri_stub_query_device,
	.query_device_ex = ri_stub_query_device_ex,
	.query_gid = ri_stub_query_gid,
	.query_pkey = ri_stub_query_pkey,
	.query_port = ri_stub_query_port,
	.query_qp = ri_stub_query_qp,
	.query_qp_data_in_order = ri_stub_query_qp_data_in_order,
	.query_rt_values = ri_stub_query_rt_values,
	.query_srq = ri_stub_query_srq,
	.reg_mr = ri_stub_reg_mr,
	.req_notify_cq = ri_stub_req_notify_cq,
	.rereg_mr = ri_stub_rereg_mr,
	.resize_cq = ri_stub_resize_cq,
	.unimport_mr = ri_stub_unimport_mr,
	.unimport_pd = ri_stub_unimport_pd,
};

/* Overlay: every non-NULL member of src replaces the slot in dst. */
static void ri_ops_overlay(struct verbs_context_ops *dst,
			   const struct verbs_context_ops *src)
{
	void (**d)(void) = (void (**)(void))(void *)dst;
	void (*const *s)(void) = (void (*const *)(void))(const void *)src;
	size_t i;

	/* the table is nothing but function pointers */
	_Static_assert(sizeof(*dst) % sizeof(void (*)(void)) == 0, "ops");
	for (i = 0; i < sizeof(*dst) / sizeof(void (*)(void)); i++)
		if (s[i])
			d[i] = s[i];
}

/* Data-path slots of the app-visible ibv_context: straight to the table. */
static void ri_set_datapath(struct verbs_context *vctx)
{
	const struct verbs_context_ops *ops = &vctx->priv->ops;

	vctx->context.ops.poll_cq = ops->poll_cq;
	vctx->context.ops.req_notify_cq = ops->req_notify_cq;
	vctx->context.ops.post_send = ops->post_send;
	vctx->context.ops.post_recv = ops->post_recv;
	vctx->context.ops.post_srq_recv = ops->post_srq_recv;
}

__typeof__(verbs_set_ops) ri_v11_verbs_set_ops;
RI_EXPORT void ri_v11_verbs_set_ops(struct verbs_context *vctx,
			     const struct verbs_context_ops *ops)
{
	if (!vctx || !vctx->priv || !ops)
		return;
	ri_ops_overlay(&vctx->priv->ops, ops);
	ri_set_datapath(vctx);
}

/* ------------------------------------------------------------------ */
/* App-visible verbs_context slots.                                     */

/* Exported functions old applications may reach through ctx->ops. */
#define RI_COMPAT_SLOT(fn) ((void *(*)(void))(void (*)(void))(fn))

/* Fill every app-visible slot; called once the ops table is final. */
void ri__install_lib_ops(struct verbs_context *vctx)
{
	struct ibv_context_ops *o = &vctx->context.ops;

	vctx->query_port = ri__query_port_ex;
	vctx->advise_mr = ri_stub_advise_mr;
	vctx->alloc_null_mr = ri_stub_alloc_null_mr;
	vctx->read_counters = ri_stub_read_counters;
	vctx->attach_counters_point_flow = ri_stub_attach_counters_point_flow;
	vctx->create_counters = ri_stub_create_counters;
	vctx->destroy_counters = ri_stub_destroy_counters;
	vctx->reg_dm_mr = ri_stub_reg_dm_mr;
	vctx->alloc_dm = ri_stub_alloc_dm;
	vctx->free_dm = ri_stub_free_dm;
	vctx->modify_flow_action_esp = ri_stub_modify_flow_action_esp;
	vctx->destroy_flow_action = ri_stub_destroy_flow_action;
	vctx->create_flow_action_esp = ri_stub_create_flow_action_esp;
	vctx->modify_qp_rate_limit = ri_stub_modify_qp_rate_limit;
	vctx->alloc_parent_domain = ri__alloc_parent_domain;
	vctx->dealloc_td = ri__dealloc_td;
	vctx->alloc_td = ri__alloc_td;
	vctx->modify_cq = ri_stub_modify_cq;
	vctx->post_srq_ops = ri_stub_post_srq_ops;
	vctx->destroy_rwq_ind_table = ri_stub_destroy_rwq_ind_table;
	vctx->create_rwq_ind_table = ri_stub_create_rwq_ind_table;
	vctx->destroy_wq = ri_stub_destroy_wq;
	vctx->modify_wq = ri_stub_modify_wq;
	vctx->create_wq = ri_stub_create_wq;
	/* the provider's op itself, as rdma-core's verbs_set_ops puts it there
	 * (SET_OP, rdma-core v44.0 libibverbs/dummy_ops.c:694): its stub
	 * (dummy_ops.c:418, EOPNOTSUPP, nothing written) when it has none */
	vctx->query_rt_values = vctx->priv->ops.query_rt_values;
	vctx->create_cq_ex = ri__create_cq_ex;
	vctx->query_device_ex = ri__query_device_ex;
	vctx->ibv_destroy_flow = ri_stub_destroy_flow;
	vctx->ABI_placeholder2 = ri_stub_placeholder;
	vctx->ibv_create_flow = ri_stub_create_flow;
	vctx->ABI_placeholder1 = ri_stub_placeholder;
	vctx->open_qp = ri__open_qp;
	vctx->create_qp_ex = ri__create_qp_ex;
	vctx->get_srq_num = ri__get_srq_num;
	vctx->create_srq_ex = ri__create_srq_ex;
	vctx->open_xrcd = ri__open_xrcd;
	vctx->close_xrcd = ri__close_xrcd;
	vctx->sz = sizeof(struct verbs_context);
	vctx->context.abi_compat = __VERBS_ABI_IS_EXTENDED;

	/* 1.1-era slots: the exported verbs, as rdma-core fills them */
	o->_compat_query_device = ibv_query_device;
	o->_compat_query_port = ibv_query_port;
	o->_compat_alloc_pd = RI_COMPAT_SLOT(ibv_alloc_pd);
	o->_compat_dealloc_pd = RI_COMPAT_SLOT(ibv_dealloc_pd);
	o->_compat_reg_mr = RI_COMPAT_SLOT(ibv_reg_mr);
	o->_compat_rereg_mr = RI_COMPAT_SLOT(ibv_rereg_mr);
	o->_compat_dereg_mr = RI_COMPAT_SLOT(ibv_dereg_mr);
	o->alloc_mw = ri__alloc_mw;
	o->bind_mw = ri__bind_mw;
	o->dealloc_mw = ri__dealloc_mw;
	o->_compat_create_cq = RI_COMPAT_SLOT(ibv_create_cq);
	o->_compat_cq_event = RI_COMPAT_SLOT(ri_stub_placeholder);
	o->_compat_resize_cq = RI_COMPAT_SLOT(ibv_resize_cq);
	o->_compat_destroy_cq = RI_COMPAT_SLOT(ibv_destroy_cq);
	o->_compat_create_srq = RI_COMPAT_SLOT(ibv_create_srq);
	o->_compat_modify_srq = RI_COMPAT_SLOT(ibv_modify_srq);
	o->_compat_query_srq = RI_COMPAT_SLOT(ibv_query_srq);
	o->_compat_destroy_srq = RI_COMPAT_SLOT(ibv_destroy_srq);
	o->_compat_create_qp = RI_COMPAT_SLOT(ibv_create_qp);
	o->_compat_query_qp = RI_COMPAT_SLOT(ibv_query_qp);
	o->_compat_modify_qp = RI_COMPAT_SLOT(ibv_modify_qp);
	o->_compat_destroy_qp = RI_COMPAT_SLOT(ibv_destroy_qp);
	o->_compat_create_ah = RI_COMPAT_SLOT(ibv_create_ah);
	o->_compat_destroy_ah = RI_COMPAT_SLOT(ibv_destroy_ah);
	o->_compat_attach_mcast = RI_COMPAT_SLOT(ibv_attach_mcast);
	o->_compat_detach_mcast = RI_COMPAT_SLOT(ibv_detach_mcast);
	o->_compat_async_event = RI_COMPAT_SLOT(ri_stub_placeholder);
	ri_set_datapath(vctx);
}

/* ------------------------------------------------------------------ */
/* The context itself (device.c opens and closes it).                   */

/* A zeroed verbs_context with extra provider bytes and its private part. */
struct verbs_context *ri__alloc_vctx(size_t extra)
{
	struct verbs_context *vctx = calloc(1, sizeof(*vctx) + extra);

	if (!vctx)
		goto err;
	vctx->priv = calloc(1, sizeof(*vctx->priv));
	if (!vctx->priv)
		goto err_free_vctx;
	vctx->priv->ops = ri_stub_ops;
	vctx->sz = sizeof(*vctx);
	vctx->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	vctx->context.cmd_fd = -1;
	vctx->context.async_fd = -1;
	pthread_mutex_init(&vctx->context.mutex, NULL);
	/* stubs until init: a provider calling back early finds no NULL */
	ri_set_datapath(vctx);
	return vctx;

err_free_vctx:
	free(vctx);
err:
	errno = ENOMEM;
	return NULL;
}

void ri__free_vctx(struct verbs_context *vctx)
{
	pthread_mutex_destroy(&vctx->context.mutex);
	free(vctx->priv);
	free(vctx);
}

/* ibvct's own; rdma-core's same-named stub is in symver.c. */
RI_SYMVER(ri_v11_verbs_set_ops, verbs_set_ops@@IBVCT_PRIVATE_1);
