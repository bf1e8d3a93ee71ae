/* SPDX-License-Identifier: MIT */
/*
 * t0100: the struct layouts and values an application compiles in (ABI-,
 * WR-01, WR-06, OPENQP-01, XRCD-18, COMPAT-01): the header this binary was
 * built with against the installed rdma-core header (entry by entry, from
 * the same th_layout.def), and both against the values the spec records
 * for rdma-core 44 (LP64). Until the ABI gate's golden tables exist, the
 * installed header is the reference.
 *
 * IBVCT_ABI_PERTURB=ENTRY adds 1 to one entry of this binary's own table
 * before comparing: the quirk matrix uses it to prove each check can fail
 * (no provider can move a header's member).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th.h"
#include "th_layout.h"

static long app_value(size_t i)
{
	const char *p = getenv("IBVCT_ABI_PERTURB");

	return th_layout_app[i].value + (p && !strcmp(p, th_layout_app[i].what) ? 1 : 0);
}

static long app(const char *what)
{
	size_t i;

	for (i = 0; i < th_layout_app_n; i++)
		if (!strcmp(th_layout_app[i].what, what))
			return app_value(i);
	th_fail("no layout entry %s", what);
}

#define EXPECT(what, v)								\
	do {									\
		if (app(what) != (v))						\
			th_fail("%s = %ld, the spec says %ld", what, app(what), (long)(v)); \
	} while (0)

static void layouts_match_the_installed_rdma_core_header(struct th_ctx *t)
{
	size_t i, bad = 0;

	assert_int_equal(th_layout_app_n, th_layout_sys_n);
	for (i = 0; i < th_layout_app_n; i++) {
		assert_string_equal(th_layout_app[i].what, th_layout_sys[i].what);
		if (app_value(i) != th_layout_sys[i].value) {
			printf("%s: %ld here, %ld in the installed header\n", th_layout_app[i].what,
			       app_value(i), th_layout_sys[i].value);
			bad++;
		}
	}
	if (bad)
		th_fail("%zu of %zu layout facts differ from the installed header", bad,
			th_layout_app_n);
	th_note("%zu layout facts identical to the installed rdma-core header", th_layout_app_n);
}

static void xrc_enum_values(struct th_ctx *t)
{
	EXPECT("IBV_QPT_XRC_SEND", 9);
	EXPECT("IBV_QPT_XRC_RECV", 10);
	EXPECT("IBV_SRQT_BASIC", 0);
	EXPECT("IBV_SRQT_XRC", 1);
	EXPECT("IBV_SRQT_TM", 2);
	EXPECT("IBV_DEVICE_XRC", 1 << 20);
	EXPECT("IBV_QPS_UNKNOWN", 7);
	EXPECT("IBV_QPS_ERR", 6);
}

static void comp_mask_bit_values(struct th_ctx *t)
{
	EXPECT("IBV_XRCD_INIT_ATTR_FD", 1);
	EXPECT("IBV_XRCD_INIT_ATTR_OFLAGS", 2);
	EXPECT("IBV_XRCD_INIT_ATTR_RESERVED", 4);
	EXPECT("IBV_SRQ_INIT_ATTR_TYPE", 1);
	EXPECT("IBV_SRQ_INIT_ATTR_PD", 2);
	EXPECT("IBV_SRQ_INIT_ATTR_XRCD", 4);
	EXPECT("IBV_SRQ_INIT_ATTR_CQ", 8);
	EXPECT("IBV_SRQ_INIT_ATTR_TM", 16);
	EXPECT("IBV_SRQ_INIT_ATTR_RESERVED", 32);
	EXPECT("IBV_QP_INIT_ATTR_PD", 1);
	EXPECT("IBV_QP_INIT_ATTR_XRCD", 2);
	EXPECT("IBV_QP_INIT_ATTR_CREATE_FLAGS", 4);
	EXPECT("IBV_QP_INIT_ATTR_SEND_OPS_FLAGS", 64);
	EXPECT("IBV_QP_OPEN_ATTR_NUM", 1);
	EXPECT("IBV_QP_OPEN_ATTR_XRCD", 2);
	EXPECT("IBV_QP_OPEN_ATTR_CONTEXT", 4);
	EXPECT("IBV_QP_OPEN_ATTR_TYPE", 8);
	EXPECT("IBV_QP_OPEN_ATTR_RESERVED", 16);
}

static void ex_init_attrs_extend_the_legacy_ones(struct th_ctx *t)
{
	EXPECT("sizeof(struct ibv_srq_init_attr)", 24);
	EXPECT("offsetof(struct ibv_srq_init_attr_ex, comp_mask)", 20);
	EXPECT("offsetof(struct ibv_srq_init_attr_ex, srq_type)", 24);
	EXPECT("offsetof(struct ibv_srq_init_attr_ex, pd)", 32);
	EXPECT("offsetof(struct ibv_srq_init_attr_ex, xrcd)", 40);
	EXPECT("offsetof(struct ibv_srq_init_attr_ex, cq)", 48);
	EXPECT("sizeof(struct ibv_qp_init_attr)", 64);
	EXPECT("offsetof(struct ibv_qp_init_attr_ex, comp_mask)", 60);
	EXPECT("offsetof(struct ibv_qp_init_attr_ex, pd)", 64);
	EXPECT("offsetof(struct ibv_qp_init_attr_ex, xrcd)", 72);
	/* the legacy members sit where the legacy struct has them */
	EXPECT("offsetof(struct ibv_qp_init_attr_ex, qp_type)",
	       app("offsetof(struct ibv_qp_init_attr, qp_type)"));
	EXPECT("offsetof(struct ibv_qp_init_attr_ex, sq_sig_all)",
	       app("offsetof(struct ibv_qp_init_attr, sq_sig_all)"));
	EXPECT("offsetof(struct ibv_srq_init_attr_ex, attr)",
	       app("offsetof(struct ibv_srq_init_attr, attr)"));
	/* ibv_qp_attr before rate_limit was 136 bytes (guard-page tests) */
	EXPECT("offsetof(struct ibv_qp_attr, rate_limit)", 136);
}

static void xrcd_and_open_attr_layouts(struct th_ctx *t)
{
	EXPECT("sizeof(struct ibv_xrcd)", 8);
	EXPECT("offsetof(struct ibv_xrcd, context)", 0);
	EXPECT("sizeof(struct ibv_xrcd_init_attr)", 12);
	EXPECT("offsetof(struct ibv_xrcd_init_attr, fd)", 4);
	EXPECT("offsetof(struct ibv_xrcd_init_attr, oflags)", 8);
	EXPECT("sizeof(struct ibv_qp_open_attr)", 32);
	EXPECT("offsetof(struct ibv_qp_open_attr, comp_mask)", 0);
	EXPECT("offsetof(struct ibv_qp_open_attr, qp_num)", 4);
	EXPECT("offsetof(struct ibv_qp_open_attr, xrcd)", 8);
	EXPECT("offsetof(struct ibv_qp_open_attr, qp_context)", 16);
	EXPECT("offsetof(struct ibv_qp_open_attr, qp_type)", 24);
}

static void send_wr_layout_keeps_old_offsets(struct th_ctx *t)
{
	EXPECT("sizeof(struct ibv_send_wr)", 128);
	EXPECT("offsetof(struct ibv_send_wr, wr_id)", 0);
	EXPECT("offsetof(struct ibv_send_wr, next)", 8);
	EXPECT("offsetof(struct ibv_send_wr, sg_list)", 16);
	EXPECT("offsetof(struct ibv_send_wr, num_sge)", 24);
	EXPECT("offsetof(struct ibv_send_wr, opcode)", 28);
	EXPECT("offsetof(struct ibv_send_wr, send_flags)", 32);
	EXPECT("offsetof(struct ibv_send_wr, imm_data)", 36);
	EXPECT("offsetof(struct ibv_send_wr, wr)", 40);
	EXPECT("offsetof(struct ibv_send_wr, qp_type.xrc.remote_srqn)", 72);
	EXPECT("offsetof(struct ibv_send_wr, bind_mw.mw)", 80);
	EXPECT("offsetof(struct ibv_send_wr, bind_mw.rkey)", 88);
	EXPECT("offsetof(struct ibv_send_wr, bind_mw.bind_info)", 96);
	EXPECT("offsetof(struct ibv_send_wr, tso.hdr)", 80);
	EXPECT("offsetof(struct ibv_send_wr, tso.hdr_sz)", 88);
	EXPECT("offsetof(struct ibv_send_wr, tso.mss)", 90);
	/* the wr union ends where remote_srqn starts: 72 bytes before 1.1.8 */
	EXPECT("offsetof(struct ibv_send_wr, wr.atomic.rkey)", 64);
	EXPECT("sizeof(struct ibv_recv_wr)", 32);
}

static void verbs_context_grows_at_the_top(struct th_ctx *t)
{
	EXPECT("sizeof(struct verbs_context)", 648);
	EXPECT("offsetof(struct verbs_context, context)", 320);
	EXPECT("offsetof(struct verbs_context, sz)", 312);
	EXPECT("offsetof(struct verbs_context, close_xrcd)", 296);
	EXPECT("offsetof(struct verbs_context, open_xrcd)", 288);
	EXPECT("offsetof(struct verbs_context, create_srq_ex)", 280);
	EXPECT("offsetof(struct verbs_context, get_srq_num)", 272);
	EXPECT("offsetof(struct verbs_context, create_qp_ex)", 264);
	EXPECT("offsetof(struct verbs_context, open_qp)", 256);
	/* the context is last: its end is the verbs_context's end */
	EXPECT("sizeof(struct verbs_context)", app("offsetof(struct verbs_context, context)") +
	       app("sizeof(struct ibv_context)"));
}

static const struct th_test tests[] = {
	TH_TEST(layouts_match_the_installed_rdma_core_header,
		"ABI-01 ABI-02 ABI-03 ABI-06 ABI-07 WR-01", TH_NO_CTX),
	TH_TEST(xrc_enum_values, "ABI-01", TH_NO_CTX),
	TH_TEST(comp_mask_bit_values, "ABI-02", TH_NO_CTX),
	TH_TEST(ex_init_attrs_extend_the_legacy_ones, "ABI-03", TH_NO_CTX),
	TH_TEST(xrcd_and_open_attr_layouts, "ABI-04 OPENQP-01 XRCD-18", TH_NO_CTX),
	TH_TEST(send_wr_layout_keeps_old_offsets, "ABI-06 WR-01 WR-06", TH_NO_CTX),
	TH_TEST(verbs_context_grows_at_the_top, "ABI-07 COMPAT-01", TH_NO_CTX),
};

int main(int argc, char **argv)
{
	return th_main(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
