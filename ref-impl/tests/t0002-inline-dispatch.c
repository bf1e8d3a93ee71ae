/* SPDX-License-Identifier: MIT */
/*
 * t0002: the dispatch rules of the inline verbs in <infiniband/verbs.h>,
 * with no device and no library call: a fake struct verbs_context is built
 * in memory (calloc, abi_compat = __VERBS_ABI_IS_EXTENDED, sz set) and its
 * ops are stubs that count their calls.
 *
 *   COMPAT-02  verbs_get_ctx(): NULL unless extended, else container_of.
 *   COMPAT-03/09  an extension op is called iff the context is extended,
 *              sz >= sizeof(verbs_context) - offsetof(op) and op != NULL;
 *              otherwise EOPNOTSUPP (errno for pointer verbs, the return
 *              value for int verbs).
 *   QPX-01     ibv_create_qp_ex(): comp_mask == PD exactly -> ibv_create_qp().
 *   SRQX-06    ibv_create_srq_ex(): mask within {PD, TYPE}, PD set, basic
 *              type -> ibv_create_srq(); anything else -> the op.
 *   plus the query_device_ex / query_port fallbacks, memory windows and the
 *   data path through ctx->ops.
 *
 * The legacy exports the inlines fall back to (ibv_create_qp, ibv_create_srq,
 * ibv_query_device, ibv_query_port) are defined below as counting stand-ins:
 * an executable's definition takes precedence over the library's, so the
 * test checks the header alone. It compiles unchanged against rdma-core 44's
 * header, which is how its expectations were checked.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tr.h"

/* ---- call recording ------------------------------------------------------ */

enum stub {
	S_OPEN_XRCD, S_CLOSE_XRCD, S_CREATE_SRQ_EX, S_GET_SRQ_NUM, S_CREATE_QP_EX,
	S_OPEN_QP, S_CREATE_CQ_EX, S_QUERY_DEVICE_EX, S_QUERY_PORT_EX, S_ALLOC_TD,
	S_POST_SRQ_OPS, S_LEGACY_CREATE_QP, S_LEGACY_CREATE_SRQ,
	S_LEGACY_QUERY_DEVICE, S_LEGACY_QUERY_PORT, S_ALLOC_MW, S_DEALLOC_MW,
	S_BIND_MW, S_POLL_CQ, S_REQ_NOTIFY_CQ, S_POST_SEND, S_POST_RECV,
	S_POST_SRQ_RECV, S_COUNT
};

static int calls[S_COUNT];
static uintptr_t last_arg;		/* address of the attr the last stub got */
static size_t last_len;			/* the size argument of *_ex queries */
static int query_device_ex_ret;		/* what the query_device_ex stub returns */

/* Distinct non-NULL results for the pointer verbs. */
static struct ibv_xrcd the_xrcd;
static struct ibv_srq the_srq, the_legacy_srq;
static struct ibv_qp the_qp, the_legacy_qp;
static struct ibv_cq_ex the_cq_ex;
static struct ibv_td the_td;
static struct ibv_mw the_mw;

static int total_calls(void)
{
	int i, n = 0;

	for (i = 0; i < S_COUNT; i++)
		n += calls[i];
	return n;
}

/* ---- extension op stubs --------------------------------------------------- */

static struct ibv_xrcd *stub_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *a)
{
	calls[S_OPEN_XRCD]++;
	last_arg = (uintptr_t)a;
	return &the_xrcd;
}

static int stub_close_xrcd(struct ibv_xrcd *x)
{
	calls[S_CLOSE_XRCD]++;
	last_arg = (uintptr_t)x;
	return 0;
}

static struct ibv_srq *stub_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	calls[S_CREATE_SRQ_EX]++;
	last_arg = (uintptr_t)a;
	return &the_srq;
}

static int stub_get_srq_num(struct ibv_srq *s, uint32_t *num)
{
	calls[S_GET_SRQ_NUM]++;
	*num = 0x123456;
	return 0;
}

static struct ibv_qp *stub_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	calls[S_CREATE_QP_EX]++;
	last_arg = (uintptr_t)a;
	return &the_qp;
}

static struct ibv_qp *stub_open_qp(struct ibv_context *c, struct ibv_qp_open_attr *a)
{
	calls[S_OPEN_QP]++;
	last_arg = (uintptr_t)a;
	return &the_qp;
}

static struct ibv_cq_ex *stub_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
{
	calls[S_CREATE_CQ_EX]++;
	last_arg = (uintptr_t)a;
	return &the_cq_ex;
}

static int stub_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
				struct ibv_device_attr_ex *attr, size_t len)
{
	calls[S_QUERY_DEVICE_EX]++;
	last_arg = (uintptr_t)attr;
	last_len = len;
	if (!query_device_ex_ret)
		attr->comp_mask = 0xc0ffee;
	return query_device_ex_ret;
}

static int stub_query_port_ex(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr,
			      size_t len)
{
	calls[S_QUERY_PORT_EX]++;
	last_arg = (uintptr_t)attr;
	last_len = len;
	return 0;
}

static struct ibv_td *stub_alloc_td(struct ibv_context *c, struct ibv_td_init_attr *a)
{
	calls[S_ALLOC_TD]++;
	last_arg = (uintptr_t)a;
	return &the_td;
}

static int stub_post_srq_ops(struct ibv_srq *s, struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
{
	calls[S_POST_SRQ_OPS]++;
	return 0;
}

/* ---- ibv_context_ops stubs (the 1.1 data path and memory windows) --------- */

static struct ibv_mw *stub_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	calls[S_ALLOC_MW]++;
	return &the_mw;
}

static int stub_dealloc_mw(struct ibv_mw *mw)
{
	calls[S_DEALLOC_MW]++;
	return 0;
}

static int stub_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	calls[S_BIND_MW]++;
	last_arg = (uintptr_t)b;
	return 0;
}

static int stub_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	calls[S_POLL_CQ]++;
	return n - 1;
}

static int stub_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	calls[S_REQ_NOTIFY_CQ]++;
	return solicited_only ? 7 : 0;
}

static int stub_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	calls[S_POST_SEND]++;
	last_arg = (uintptr_t)wr;
	return 0;
}

static int stub_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	calls[S_POST_RECV]++;
	last_arg = (uintptr_t)wr;
	return 0;
}

static int stub_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	calls[S_POST_SRQ_RECV]++;
	last_arg = (uintptr_t)wr;
	return 0;
}

/* ---- stand-ins for the legacy exports the inlines fall back to ----------- */

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	calls[S_LEGACY_CREATE_QP]++;
	last_arg = (uintptr_t)attr;
	return &the_legacy_qp;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	calls[S_LEGACY_CREATE_SRQ]++;
	last_arg = (uintptr_t)attr;
	return &the_legacy_srq;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	calls[S_LEGACY_QUERY_DEVICE]++;
	last_arg = (uintptr_t)attr;
	attr->max_qp = 42;
	return 0;
}

/* Parenthesised: the header makes ibv_query_port a function-like macro. */
int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		     struct _compat_ibv_port_attr *port_attr)
{
	/* The 1.1 export writes only the prefix up to link_layer. */
	struct ibv_port_attr *attr = (struct ibv_port_attr *)(void *)port_attr;

	calls[S_LEGACY_QUERY_PORT]++;
	last_arg = (uintptr_t)port_attr;
	attr->state = IBV_PORT_ACTIVE;
	attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
	return 0;
}

/* ---- the fake context ------------------------------------------------------ */

static int setup(void **state)
{
	struct verbs_context *v = calloc(1, sizeof(*v));

	if (!v)
		return -1;
	v->sz = sizeof(*v);
	v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	v->open_xrcd = stub_open_xrcd;
	v->close_xrcd = stub_close_xrcd;
	v->create_srq_ex = stub_create_srq_ex;
	v->get_srq_num = stub_get_srq_num;
	v->create_qp_ex = stub_create_qp_ex;
	v->open_qp = stub_open_qp;
	v->create_cq_ex = stub_create_cq_ex;
	v->query_device_ex = stub_query_device_ex;
	v->query_port = stub_query_port_ex;
	v->alloc_td = stub_alloc_td;
	v->post_srq_ops = stub_post_srq_ops;
	v->context.ops.alloc_mw = stub_alloc_mw;
	v->context.ops.dealloc_mw = stub_dealloc_mw;
	v->context.ops.bind_mw = stub_bind_mw;
	v->context.ops.poll_cq = stub_poll_cq;
	v->context.ops.req_notify_cq = stub_req_notify_cq;
	v->context.ops.post_send = stub_post_send;
	v->context.ops.post_recv = stub_post_recv;
	v->context.ops.post_srq_recv = stub_post_srq_recv;
	memset(calls, 0, sizeof(calls));
	last_arg = 0;
	last_len = 0;
	query_device_ex_ret = 0;
	*state = v;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* ---- the extension ops, one table row each -------------------------------- */

/*
 * call() runs the inline verb on ctx and returns 0 on success, else the
 * error: errno for pointer verbs, the return value for int verbs.
 */
struct ext_op {
	const char *name;
	size_t offset;		/* offsetof(struct verbs_context, op) */
	enum stub stub;
	int (*call)(struct ibv_context *ctx);
};

static int call_open_xrcd(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1 };

	return ibv_open_xrcd(ctx, &a) == &the_xrcd ? 0 : errno;
}

static int call_create_srq_ex(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr_ex a = {
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};

	return ibv_create_srq_ex(ctx, &a) == &the_srq ? 0 : errno;
}

static int call_get_srq_num(struct ibv_context *ctx)
{
	struct ibv_srq srq = { .context = ctx };
	uint32_t num = 0;
	int ret = ibv_get_srq_num(&srq, &num);

	return ret ? ret : (num == 0x123456 ? 0 : -1);
}

static int call_create_qp_ex(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};

	return ibv_create_qp_ex(ctx, &a) == &the_qp ? 0 : errno;
}

static int call_open_qp(struct ibv_context *ctx)
{
	struct ibv_qp_open_attr a = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	return ibv_open_qp(ctx, &a) == &the_qp ? 0 : errno;
}

static int call_create_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 4 };

	return ibv_create_cq_ex(ctx, &a) == &the_cq_ex ? 0 : errno;
}

static int call_alloc_td(struct ibv_context *ctx)
{
	struct ibv_td_init_attr a = { 0 };

	return ibv_alloc_td(ctx, &a) == &the_td ? 0 : errno;
}

static int call_post_srq_ops(struct ibv_context *ctx)
{
	struct ibv_srq srq = { .context = ctx };
	struct ibv_ops_wr op = { .wr_id = 1 }, *bad = NULL;
	int ret = ibv_post_srq_ops(&srq, &op, &bad);

	/* on EOPNOTSUPP the whole list is reported as not posted */
	if (ret && bad != &op)
		return -1;
	return ret;
}

#define EXT_OP(op, s, fn) { #op, offsetof(struct verbs_context, op), s, fn }

static const struct ext_op ext_ops[] = {
	EXT_OP(open_xrcd, S_OPEN_XRCD, call_open_xrcd),
	EXT_OP(create_srq_ex, S_CREATE_SRQ_EX, call_create_srq_ex),
	EXT_OP(get_srq_num, S_GET_SRQ_NUM, call_get_srq_num),
	EXT_OP(create_qp_ex, S_CREATE_QP_EX, call_create_qp_ex),
	EXT_OP(open_qp, S_OPEN_QP, call_open_qp),
	EXT_OP(create_cq_ex, S_CREATE_CQ_EX, call_create_cq_ex),
	EXT_OP(alloc_td, S_ALLOC_TD, call_alloc_td),
	EXT_OP(post_srq_ops, S_POST_SRQ_OPS, call_post_srq_ops),
};
#define N_EXT_OPS (sizeof(ext_ops) / sizeof(ext_ops[0]))

static void clear_op(struct verbs_context *v, size_t offset)
{
	/* all-zero bits is a NULL function pointer on every ABI we run on */
	memset((char *)v + offset, 0, sizeof(void (*)(void)));
}

/* COMPAT-03 (b)/(c) and COMPAT-09 for every row; a failure names the op. */
TR_TEST_FX(ext_ops_called_iff_sz_covers_them_and_set, setup, teardown)
{
	struct verbs_context *v = *state;
	size_t i;

	for (i = 0; i < N_EXT_OPS; i++) {
		const struct ext_op *o = &ext_ops[i];
		size_t needed = sizeof(struct verbs_context) - o->offset;
		int before, ret;

		v->sz = needed;
		before = calls[o->stub];
		errno = 0;
		ret = o->call(&v->context);
		if (ret != 0 || calls[o->stub] != before + 1)
			fail_msg("%s: sz = %zu (exactly enough): ret %d, op called %d times",
				 o->name, needed, ret, calls[o->stub] - before);

		v->sz = needed - 1;
		before = total_calls();
		ret = o->call(&v->context);
		if (ret != EOPNOTSUPP || total_calls() != before)
			fail_msg("%s: sz = %zu (one short): ret %d (want EOPNOTSUPP), %d calls",
				 o->name, needed - 1, ret, total_calls() - before);
	}
}

TR_TEST_FX(ext_ops_null_op_gives_eopnotsupp, setup, teardown)
{
	struct verbs_context *v = *state;
	size_t i;

	for (i = 0; i < N_EXT_OPS; i++) {
		const struct ext_op *o = &ext_ops[i];
		int before, ret;

		clear_op(v, o->offset);
		before = total_calls();
		errno = 0;
		ret = o->call(&v->context);
		if (ret != EOPNOTSUPP || total_calls() != before)
			fail_msg("%s: NULL op: ret %d (want EOPNOTSUPP), %d calls",
				 o->name, ret, total_calls() - before);
	}
}

/* COMPAT-03 (a): a plain 1.1 context has no extension ops at all. */
TR_TEST_FX(ext_ops_on_non_extended_context_give_eopnotsupp, setup, teardown)
{
	struct verbs_context *v = *state;
	size_t i;

	v->context.abi_compat = NULL;
	for (i = 0; i < N_EXT_OPS; i++) {
		const struct ext_op *o = &ext_ops[i];
		int before = total_calls();
		int ret;

		errno = 0;
		ret = o->call(&v->context);
		if (ret != EOPNOTSUPP || total_calls() != before)
			fail_msg("%s: non-extended context: ret %d (want EOPNOTSUPP), %d calls",
				 o->name, ret, total_calls() - before);
	}
}

/* ---- COMPAT-02 -------------------------------------------------------------- */

TR_TEST_FX(abi_is_extended_marker_is_all_ones, setup, teardown)
{
	assert_true(__VERBS_ABI_IS_EXTENDED == (void *)UINTPTR_MAX);
	assert_int_equal(sizeof(struct verbs_context), 648);
	assert_int_equal(offsetof(struct verbs_context, context), 320);
	assert_int_equal(offsetof(struct verbs_context, sz), 312);
}

TR_TEST_FX(verbs_get_ctx_is_container_of_only_when_extended, setup, teardown)
{
	struct verbs_context *v = *state;

	assert_ptr_equal(verbs_get_ctx(&v->context), v);
	v->context.abi_compat = NULL;
	assert_null(verbs_get_ctx(&v->context));
	v->context.abi_compat = (void *)1;
	assert_null(verbs_get_ctx(&v->context));
}

/* sz is the library's own sizeof: a smaller (older) library hides the
 * ops it did not have, however the header lays them out. */
TR_TEST_FX(verbs_get_ctx_op_boundary_is_sizeof_minus_offset, setup, teardown)
{
	struct verbs_context *v = *state;
	size_t top = sizeof(*v) - offsetof(struct verbs_context, query_port);

	v->sz = top;
	assert_non_null(verbs_get_ctx_op(&v->context, query_port));
	v->sz = top - 1;
	assert_null(verbs_get_ctx_op(&v->context, query_port));
	/* an op lower down is still reachable with that sz */
	assert_non_null(verbs_get_ctx_op(&v->context, open_xrcd));
	v->sz = sizeof(*v) - offsetof(struct verbs_context, close_xrcd) - 1;
	assert_null(verbs_get_ctx_op(&v->context, close_xrcd));
}

/* ---- QPX-01 ------------------------------------------------------------------ */

TR_TEST_FX(create_qp_ex_mask_pd_only_goes_to_legacy_create_qp, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_pd pd = { .context = &v->context };
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = &pd,
	};

	assert_ptr_equal(ibv_create_qp_ex(&v->context, &a), &the_legacy_qp);
	assert_int_equal(calls[S_LEGACY_CREATE_QP], 1);
	assert_int_equal(calls[S_CREATE_QP_EX], 0);
	/* the ex attr is handed over as the legacy attr: same address */
	assert_int_equal(last_arg, (uintptr_t)&a);

	/* even on a context without the op: mask == PD never needs it */
	v->context.abi_compat = NULL;
	assert_ptr_equal(ibv_create_qp_ex(&v->context, &a), &the_legacy_qp);
	assert_int_equal(calls[S_LEGACY_CREATE_QP], 2);
}

TR_TEST_FX(create_qp_ex_any_other_mask_needs_the_op, setup, teardown)
{
	struct verbs_context *v = *state;
	static const uint32_t masks[] = {
		0,
		IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD,
		IBV_QP_INIT_ATTR_XRCD,
		IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	};
	size_t i;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_RC, .comp_mask = masks[i] };

		if (ibv_create_qp_ex(&v->context, &a) != &the_qp)
			fail_msg("mask %#x: not created by the op", masks[i]);
	}
	assert_int_equal(calls[S_CREATE_QP_EX], (int)i);
	assert_int_equal(calls[S_LEGACY_CREATE_QP], 0);
}

/* ---- SRQX-06 ----------------------------------------------------------------- */

TR_TEST_FX(create_srq_ex_basic_requests_go_to_legacy_create_srq, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_pd pd = { .context = &v->context };
	struct ibv_srq_init_attr_ex only_pd = {
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,	/* ignored without the TYPE bit */
		.pd = &pd,
	};
	struct ibv_srq_init_attr_ex pd_basic = {
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_BASIC,
		.pd = &pd,
	};

	assert_ptr_equal(ibv_create_srq_ex(&v->context, &only_pd), &the_legacy_srq);
	assert_int_equal(last_arg, (uintptr_t)&only_pd);
	assert_ptr_equal(ibv_create_srq_ex(&v->context, &pd_basic), &the_legacy_srq);
	assert_int_equal(calls[S_LEGACY_CREATE_SRQ], 2);
	assert_int_equal(calls[S_CREATE_SRQ_EX], 0);
}

TR_TEST_FX(create_srq_ex_other_requests_need_the_op, setup, teardown)
{
	struct verbs_context *v = *state;
	static const struct {
		uint32_t mask;
		enum ibv_srq_type type;
	} cases[] = {
		{ IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE, IBV_SRQT_XRC },
		{ IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE, IBV_SRQT_TM },
		{ IBV_SRQ_INIT_ATTR_TYPE, IBV_SRQT_BASIC },		/* no PD */
		{ 0, IBV_SRQT_BASIC },					/* no PD */
		{ IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		  IBV_SRQT_BASIC },					/* SRQX-04 */
		{ IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_RESERVED, IBV_SRQT_BASIC },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_srq_init_attr_ex a = { .comp_mask = cases[i].mask,
						  .srq_type = cases[i].type };

		if (ibv_create_srq_ex(&v->context, &a) != &the_srq)
			fail_msg("case %zu (mask %#x type %d): not created by the op",
				 i, cases[i].mask, cases[i].type);
	}
	assert_int_equal(calls[S_CREATE_SRQ_EX], (int)i);
	assert_int_equal(calls[S_LEGACY_CREATE_SRQ], 0);
}

/* ---- XRCD close, SRQ number ------------------------------------------------- */

/* No guard in the inline (COMPAT-09): it reaches the op directly. */
TR_TEST_FX(close_xrcd_calls_the_op, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_xrcd x = { .context = &v->context };

	assert_int_equal(ibv_close_xrcd(&x), 0);
	assert_int_equal(calls[S_CLOSE_XRCD], 1);
	assert_int_equal(last_arg, (uintptr_t)&x);
}

/* SRQX-11: the error is the return value; errno is left alone. */
TR_TEST_FX(get_srq_num_without_op_returns_eopnotsupp_errno_untouched, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_srq srq = { .context = &v->context };
	uint32_t num = 77;

	v->get_srq_num = NULL;
	errno = 0;
	assert_int_equal(ibv_get_srq_num(&srq, &num), EOPNOTSUPP);
	assert_int_equal(errno, 0);
	assert_int_equal(num, 77);
}

/* ---- query_device_ex and query_port fallbacks ----------------------------- */

TR_TEST_FX(query_device_ex_nonzero_input_mask_is_einval, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex attr;

	assert_int_equal(ibv_query_device_ex(&v->context, &in, &attr), EINVAL);
	assert_int_equal(total_calls(), 0);
}

TR_TEST_FX(query_device_ex_uses_the_op_with_callers_sizeof, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_device_attr_ex attr;

	memset(&attr, 0, sizeof(attr));
	assert_int_equal(ibv_query_device_ex(&v->context, NULL, &attr), 0);
	assert_int_equal(calls[S_QUERY_DEVICE_EX], 1);
	assert_int_equal(last_len, sizeof(attr));
	assert_int_equal(attr.comp_mask, 0xc0ffee);
	assert_int_equal(calls[S_LEGACY_QUERY_DEVICE], 0);

	/* any other error of the op is returned as it is */
	query_device_ex_ret = EIO;
	assert_int_equal(ibv_query_device_ex(&v->context, NULL, &attr), EIO);
	assert_int_equal(calls[S_LEGACY_QUERY_DEVICE], 0);
}

/* Without the op, or when it answers EOPNOTSUPP/ENOSYS: zeroed attr and
 * the legacy query into orig_attr. */
TR_TEST_FX(query_device_ex_falls_back_to_legacy_query, setup, teardown)
{
	struct verbs_context *v = *state;
	static const int op_rets[] = { EOPNOTSUPP, ENOSYS };
	struct ibv_device_attr_ex attr;
	size_t i;

	for (i = 0; i < 2; i++) {
		query_device_ex_ret = op_rets[i];
		memset(&attr, 0xff, sizeof(attr));
		assert_int_equal(ibv_query_device_ex(&v->context, NULL, &attr), 0);
		assert_int_equal(last_arg, (uintptr_t)&attr.orig_attr);
		assert_int_equal(attr.orig_attr.max_qp, 42);
		assert_int_equal(attr.comp_mask, 0);
		assert_int_equal(attr.phys_port_cnt_ex, 0);
	}
	v->query_device_ex = NULL;
	memset(&attr, 0xff, sizeof(attr));
	assert_int_equal(ibv_query_device_ex(&v->context, NULL, &attr), 0);
	assert_int_equal(attr.max_dm_size, 0);
	assert_int_equal(calls[S_LEGACY_QUERY_DEVICE], 3);
	assert_int_equal(calls[S_QUERY_DEVICE_EX], 2);
}

TR_TEST_FX(query_port_uses_the_op_with_callers_sizeof, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_port_attr attr;

	assert_int_equal(ibv_query_port(&v->context, 1, &attr), 0);
	assert_int_equal(calls[S_QUERY_PORT_EX], 1);
	assert_int_equal(last_len, sizeof(attr));
	assert_int_equal(calls[S_LEGACY_QUERY_PORT], 0);
}

/* The old export fills only the 1.1 prefix: the rest must read as zero. */
TR_TEST_FX(query_port_without_op_zeroes_then_calls_export, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_port_attr attr;

	v->query_port = NULL;
	memset(&attr, 0xff, sizeof(attr));
	assert_int_equal(ibv_query_port(&v->context, 1, &attr), 0);
	assert_int_equal(calls[S_LEGACY_QUERY_PORT], 1);
	assert_int_equal(last_arg, (uintptr_t)&attr);
	assert_int_equal(attr.state, IBV_PORT_ACTIVE);
	assert_int_equal(attr.flags, 0);
	assert_int_equal(attr.port_cap_flags2, 0);
	assert_int_equal(attr.lid, 0);
}

/* ---- memory windows and the data path: ctx->ops, any context --------------- */

TR_TEST_FX(alloc_mw_needs_ops_alloc_mw, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_pd pd = { .context = &v->context };

	v->context.abi_compat = NULL;	/* not an extension: works on 1.1 contexts */
	assert_ptr_equal(ibv_alloc_mw(&pd, IBV_MW_TYPE_1), &the_mw);
	v->context.ops.alloc_mw = NULL;
	errno = 0;
	assert_null(ibv_alloc_mw(&pd, IBV_MW_TYPE_1));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(calls[S_ALLOC_MW], 1);
}

TR_TEST_FX(bind_mw_checks_type_range_and_pd_before_the_op, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_pd pd = { .context = &v->context }, other_pd = { .context = &v->context };
	struct ibv_mr mr = { .context = &v->context, .pd = &pd };
	struct ibv_mr foreign_mr = { .context = &v->context, .pd = &other_pd };
	struct ibv_mw mw1 = { .context = &v->context, .pd = &pd, .type = IBV_MW_TYPE_1 };
	struct ibv_mw mw2 = { .context = &v->context, .pd = &pd, .type = IBV_MW_TYPE_2 };
	struct ibv_qp qp = { .context = &v->context };
	struct ibv_mw_bind b = { .bind_info = { .mr = &mr, .addr = 0x1000, .length = 64 } };
	struct ibv_mw_bind unbind_with_range = { .bind_info = { .mr = NULL, .length = 1 } };
	struct ibv_mw_bind unbind = { .bind_info = { .mr = NULL } };
	struct ibv_mw_bind foreign = { .bind_info = { .mr = &foreign_mr } };

	assert_int_equal(ibv_bind_mw(&qp, &mw2, &b), EINVAL);
	assert_int_equal(ibv_bind_mw(&qp, &mw1, &unbind_with_range), EINVAL);
	assert_int_equal(ibv_bind_mw(&qp, &mw1, &foreign), EPERM);
	assert_int_equal(calls[S_BIND_MW], 0);
	assert_int_equal(ibv_bind_mw(&qp, &mw1, &b), 0);
	assert_int_equal(ibv_bind_mw(&qp, &mw1, &unbind), 0);
	assert_int_equal(calls[S_BIND_MW], 2);
	assert_int_equal(ibv_dealloc_mw(&mw1), 0);
	assert_int_equal(calls[S_DEALLOC_MW], 1);
}

TR_TEST_FX(data_path_goes_through_ctx_ops, setup, teardown)
{
	struct verbs_context *v = *state;
	struct ibv_cq cq = { .context = &v->context };
	struct ibv_qp qp = { .context = &v->context };
	struct ibv_srq srq = { .context = &v->context };
	struct ibv_wc wc[4];
	struct ibv_send_wr swr = { .wr_id = 1 }, *sbad;
	struct ibv_recv_wr rwr = { .wr_id = 2 }, *rbad;

	v->context.abi_compat = NULL;	/* 1.1 ops: no extension needed */
	assert_int_equal(ibv_poll_cq(&cq, 4, wc), 3);
	assert_int_equal(ibv_req_notify_cq(&cq, 1), 7);
	assert_int_equal(ibv_post_send(&qp, &swr, &sbad), 0);
	assert_int_equal(last_arg, (uintptr_t)&swr);
	assert_int_equal(ibv_post_recv(&qp, &rwr, &rbad), 0);
	assert_int_equal(ibv_post_srq_recv(&srq, &rwr, &rbad), 0);
	assert_int_equal(calls[S_POLL_CQ] + calls[S_REQ_NOTIFY_CQ] + calls[S_POST_SEND] +
			 calls[S_POST_RECV] + calls[S_POST_SRQ_RECV], 5);
}

TR_TEST_FX(is_qpt_supported_tests_bit_qp_type, setup, teardown)
{
	uint32_t caps = (1u << IBV_QPT_RC) | (1u << IBV_QPT_XRC_RECV);

	assert_int_equal(ibv_is_qpt_supported(caps, IBV_QPT_RC), 1);
	assert_int_equal(ibv_is_qpt_supported(caps, IBV_QPT_XRC_RECV), 1);
	assert_int_equal(ibv_is_qpt_supported(caps, IBV_QPT_XRC_SEND), 0);
	assert_int_equal(ibv_is_qpt_supported(caps, IBV_QPT_UD), 0);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
