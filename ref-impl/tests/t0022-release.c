/* SPDX-License-Identifier: MIT */
/*
 * t0022: the release the core plays (ibvct-release.def, release.c) and the
 * core's rows of it. The release is a script's `rdma-core 44|56` (exported
 * as IBVCT_RDMA_CORE), else the environment's, else the build's; a
 * provider whose script names another than the core plays lists no device.
 * Rows: ibv_fork_init after a registration (EINVAL / 0: FORK_INIT_UNNEEDED),
 * ibv_query_qp_data_in_order's flags through mlx5's answer
 * (DATA_IN_ORDER_FLAGS), active_speed_ex and the caller's size
 * (PORT_ACTIVE_SPEED_EX), and rdma-core 56's additions to
 * IBVERBS_PRIVATE_34 (ibv_wr_opcode_str's names, ibv_cmd_create_cq_ex2,
 * PRIVATE_ABI_34). Each check runs in a peer with a fake host of its own.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/driver.h>

#include "rt_env.h"

static int core_release(void)
{
	return verbs_ibvct_release();
}

/* ---- which release ------------------------------------------------------------ */
static void ck_plays_44(struct rt *t)
{
	TR_EXPECT(core_release() == 44);
	TR_EXPECT(!strcmp(getenv("IBVCT_RDMA_CORE") ? getenv("IBVCT_RDMA_CORE") : "", "44"));
	TR_EXPECT(!ibvct_release_is_56(IBVCT_REL_FORK_INIT_UNNEEDED));
}

static void ck_plays_56(struct rt *t)
{
	TR_EXPECT(core_release() == 56);
	TR_EXPECT(ibvct_release_is_56(IBVCT_REL_FORK_INIT_UNNEEDED));
}

/* a word the core does not know: the build's default, the same as unset */
static void ck_bogus_is_the_default(struct rt *t)
{
	int v;

	setenv("IBVCT_RDMA_CORE", "45", 1);
	v = core_release();
	TR_EXPECT_MSG(v == 44 || v == 56, "IBVCT_RDMA_CORE=45: the core plays %d", v);
}

TR_TEST(the_script_or_the_environment_names_the_release)
{
	rt_run(RT_EXTENDED, "rdma-core 44\n", ck_plays_44);
	rt_run(RT_EXTENDED, "rdma-core 56\n", ck_plays_56);
	rt_run(RT_LEGACY, "rdma-core 56\n", ck_plays_56);
	rt_run(RT_EXTENDED, NULL, ck_bogus_is_the_default);
}

/* the script says 56 (exported), the process says 44 before the core
 * decides: the provider is not played by this core, no device */
static void ck_mismatch_lists_nothing(struct rt *t)
{
	struct ibv_device **l;
	int n = -1;

	setenv("IBVCT_RDMA_CORE", "44", 1);
	TR_EXPECT(core_release() == 44);
	l = ibv_get_device_list(&n);
	TR_EXPECT_MSG(n == 0, "%d devices under a script of another release", n);
	if (l)
		ibv_free_device_list(l);
}

TR_TEST(a_script_of_another_release_lists_no_device)
{
	rt_run(RT_EXTENDED, "rdma-core 56\n", ck_mismatch_lists_nothing);
}

/* ---- FORK_INIT_UNNEEDED ---------------------------------------------------- */
static void ck_fork_init_after_reg(struct rt *t)
{
	struct ibv_context *ctx = rt_open(t);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	int want = core_release() >= 56 ? 0 : EINVAL, got;

	TR_ASSERT(mr);
	got = ibv_fork_init();
	TR_EXPECT_MSG(got == want, "rdma-core %d: ibv_fork_init after a registration: %d, want %d",
		      core_release(), got, want);
	TR_EXPECT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(fork_init_after_a_registration_is_the_release_s)
{
	rt_run(RT_EXTENDED, "rdma-core 44\n", ck_fork_init_after_reg);
	rt_run(RT_EXTENDED, "rdma-core 56\n", ck_fork_init_after_reg);
}

/* ---- DATA_IN_ORDER_FLAGS --------------------------------------------------- */
/* An RC QP of its own, in INIT, then connected to itself (RTS). */
static void ck_data_in_order(struct rt *t)
{
	struct ibv_context *ctx = rt_open(t);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = tf_rc_qp(pd, cq, IBV_QPT_RC);
	const char *prof = getenv("T0022_PROFILE");
	bool mlx5 = prof && !strcmp(prof, "mlx5");
	bool v56 = core_release() >= 56;
	int f0, f1, f2, before;

	TR_ASSERT(qp);
	before = ibv_query_qp_data_in_order(qp, IBV_WR_SEND, 0);
	TR_EXPECT(rt_connect_qp(qp, qp->qp_num, rt_port_lid(ctx)) == 0);
	f0 = ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0);
	f1 = ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE,
					IBV_QUERY_QP_DATA_IN_ORDER_RETURN_CAPS);
	f2 = ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 1u << 1);
	TR_EXPECT_MSG(before == 0, "a QP not in RTS: %d", before);
	if (!mlx5) {		/* no driver op: libibverbs' 0 whatever is asked */
		TR_EXPECT(f0 == 0 && f1 == 0 && f2 == 0);
	} else if (!v56) {	/* 44: flags to mlx5, which answers 0 to any */
		TR_EXPECT_MSG(f0 == 1 && f1 == 0 && f2 == 0, "rdma-core 44: %d %d %d", f0, f1, f2);
	} else {		/* 56: flags select; WHOLE_MSG implies ALIGNED_128 */
		TR_EXPECT_MSG(f0 == 1 && f1 == (IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG |
						IBV_QUERY_QP_DATA_IN_ORDER_ALIGNED_128_BYTES) &&
			      f2 == 0, "rdma-core 56: %d %d %d", f0, f1, f2);
	}
	TR_EXPECT(ibv_destroy_qp(qp) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(data_in_order_flags_are_read_as_the_release_reads_them)
{
	setenv("T0022_PROFILE", "mlx5", 1);
	rt_run(RT_EXTENDED, "profile mlx5\nrdma-core 44\n", ck_data_in_order);
	rt_run(RT_EXTENDED, "profile mlx5\nrdma-core 56\n", ck_data_in_order);
	setenv("T0022_PROFILE", "rxe", 1);
	rt_run(RT_EXTENDED, "profile rxe\nrdma-core 56\n", ck_data_in_order);
	unsetenv("T0022_PROFILE");
}

/* ---- PORT_ACTIVE_SPEED_EX -------------------------------------------------- */
static void ck_active_speed_ex(struct rt *t)
{
	struct ibv_context *ctx = rt_open(t);
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
	unsigned char raw[sizeof(struct ibv_port_attr) + 16];
	struct ibv_port_attr pa;

	TR_EXPECT(ibv_query_port(ctx, 1, &pa) == 0);
	if (core_release() >= 56)
		TR_EXPECT_MSG(pa.active_speed_ex == pa.active_speed && pa.active_speed,
			      "active_speed_ex %u, active_speed %u", pa.active_speed_ex,
			      pa.active_speed);
	else
		TR_EXPECT_MSG(pa.active_speed_ex == 0, "rdma-core 44: active_speed_ex %u",
			      pa.active_speed_ex);
	/* a caller built against 44's header passes 52 bytes: nothing past them */
	memset(raw, 0xee, sizeof(raw));
	TR_ASSERT(vctx);
	TR_EXPECT(vctx->query_port(ctx, 1, (struct ibv_port_attr *)raw,
				   offsetof(struct ibv_port_attr, active_speed_ex)) == 0);
	for (size_t i = offsetof(struct ibv_port_attr, active_speed_ex); i < sizeof(raw); i++)
		TR_EXPECT_MSG(raw[i] == 0xee, "byte %zu past a 52-byte caller's struct written", i);
	TR_EXPECT(((struct ibv_port_attr *)raw)->state == pa.state);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(active_speed_ex_is_56_s_and_no_byte_past_the_caller_s)
{
	rt_run(RT_EXTENDED, "rdma-core 44\n", ck_active_speed_ex);
	rt_run(RT_EXTENDED, "rdma-core 56\n", ck_active_speed_ex);
}

/* ---- PRIVATE_ABI_34 ------------------------------------------------------- */
TR_TEST(private_34_has_rdma_core_56_s_additions)
{
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*cq2)(void);
	const char *(*str)(enum ibv_wr_opcode);

	assert_non_null(lib);
	cq2 = (int (*)(void))dlvsym(lib, "ibv_cmd_create_cq_ex2", "IBVERBS_PRIVATE_34");
	str = (const char *(*)(enum ibv_wr_opcode))dlvsym(lib, "ibv_wr_opcode_str",
							 "IBVERBS_PRIVATE_34");
	assert_non_null(cq2);
	assert_non_null(str);
	assert_ptr_equal(str, ibv_wr_opcode_str);
	assert_int_equal(cq2(), EOPNOTSUPP);	/* rdma-core's command layer: not ibvct's */
	dlclose(lib);
}

TR_TEST(wr_opcode_str_names_as_rdma_core_56)
{
	static const struct { int op; const char *name; } names[] = {
		{ IBV_WR_RDMA_WRITE, "rdma-write" }, { IBV_WR_RDMA_WRITE_WITH_IMM, "rdma-write-with-imm" },
		{ IBV_WR_SEND, "send" }, { IBV_WR_SEND_WITH_IMM, "send-with-imm" },
		{ IBV_WR_RDMA_READ, "rdma-read" }, { IBV_WR_ATOMIC_CMP_AND_SWP, "atomic-cmp-and-swp" },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, "atomic-fetch-and-add" },
		{ IBV_WR_LOCAL_INV, "local-inv" }, { IBV_WR_BIND_MW, "bind-mw" },
		{ IBV_WR_SEND_WITH_INV, "send-with-inv" }, { IBV_WR_TSO, "tso" },
		{ IBV_WR_DRIVER1, "driver1" }, { IBV_WR_FLUSH, "flush" },
		{ IBV_WR_ATOMIC_WRITE, "atomic-write" }, { 16, "unknown" }, { -1, "unknown" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_string_equal(ibv_wr_opcode_str((enum ibv_wr_opcode)names[i].op), names[i].name);
	/* inside the range, without a name: rdma-core 56 reads its table as is */
	assert_null(ibv_wr_opcode_str((enum ibv_wr_opcode)12));
	assert_null(ibv_wr_opcode_str((enum ibv_wr_opcode)13));
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
