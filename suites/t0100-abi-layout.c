/* SPDX-License-Identifier: MIT */
/*
 * t0100: the struct layouts and values an application compiles in (ABI-,
 * WR-01, WR-06, OPENQP-01, XRCD-18, COMPAT-01, COMPAT-05): the header this
 * binary was built with against the installed rdma-core header (entry by
 * entry, from the same th_layout.def), and both against the values the
 * spec records for rdma-core 44 (LP64). The two may differ in one way only:
 * a struct that a later release grew at its end, the binary's header having
 * rdma-core 56's size and the installed one 44's (the golden tables of the
 * two Debian releases in fixtures/abi say which: ref-impl's header is 56's,
 * a Debian 12 machine's 44's); a program built against the smaller one
 * passes or is given that size. Where the spec's value is a release's,
 * each release's value is accepted, and the test says whose it saw. Also
 * the kernel's uverbs write commands for XRC and its send WR as Linux's
 * uapi header declares them (ABI-05, WR-05), and which XRC names the
 * library under test exports (COMPAT-07).
 *
 * IBVCT_ABI_PERTURB=ENTRY adds 1 to one entry of this binary's own table
 * (or to what it found for one symbol, ENTRY = the symbol's name) before
 * comparing: the quirk matrix uses it to prove each check can fail (no
 * provider can move a header's member or change the library's symbols).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
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

/*
 * The value of a struct's size in a release's golden table
 * (fixtures/abi/rdma-core-NN.table, "struct NAME size N ..."), or -1. what
 * is the layout entry's text, "sizeof(struct NAME)".
 */
static long release_size(const char *what, int release)
{
	const char *src = getenv("IBVCT_SRC");
	char path[4096], line[512], want[160];
	long v = -1, n;
	FILE *f;

	if (sscanf(what, "sizeof(struct %150[a-z_0-9])", want) != 1)
		return -1;
	snprintf(path, sizeof(path), "%s/fixtures/abi/rdma-core-%d.table",
		 src && src[0] ? src : TH_SRCDIR, release);
	f = fopen(path, "r");
	if (!f)
		th_fail("cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char name[160];

		if (sscanf(line, "struct %159s size %ld", name, &n) == 2 && !strcmp(name, want)) {
			v = n;
			break;
		}
	}
	fclose(f);
	return v;
}

/* app differs from sys at entry i because the app's header is rdma-core 56's
 * and the installed one 44's, for a struct that grew at its end. */
static bool grown_since(size_t i)
{
	return app_value(i) > th_layout_sys[i].value &&
	       th_layout_sys[i].value == release_size(th_layout_sys[i].what, 44) &&
	       app_value(i) == release_size(th_layout_app[i].what, 56);
}

/* A value rdma-core 44 and 56 both define: the one of the header this
 * binary was built with, noted with its release. */
#define EXPECT_REL(what, v44, v56)						\
	do {									\
		long got_ = app(what);						\
		if (got_ != (v44) && got_ != (v56))				\
			th_fail("%s = %ld: rdma-core 44 has %ld, 56 %ld", what, got_,	\
				(long)(v44), (long)(v56));				\
		th_note("%s = %ld, rdma-core %d's", what, got_, got_ == (v56) ? 56 : 44); \
	} while (0)

TH_TEST(layouts_match_the_installed_rdma_core_header, "ABI-01 ABI-02 ABI-03 ABI-06 ABI-07 WR-01",
	TH_NO_CTX)
{
	size_t i, bad = 0, grown = 0;

	assert_int_equal(th_layout_app_n, th_layout_sys_n);
	for (i = 0; i < th_layout_app_n; i++) {
		assert_string_equal(th_layout_app[i].what, th_layout_sys[i].what);
		if (app_value(i) != th_layout_sys[i].value && grown_since(i)) {
			th_note("%s: %ld here, %ld in the installed header: rdma-core 56's and 44's",
				th_layout_app[i].what, app_value(i), th_layout_sys[i].value);
			grown++;
			continue;
		}
		if (app_value(i) != th_layout_sys[i].value) {
			printf("%s: %ld here, %ld in the installed header\n", th_layout_app[i].what,
			       app_value(i), th_layout_sys[i].value);
			bad++;
		}
	}
	if (bad)
		th_fail("%zu of %zu layout facts differ from the installed header", bad,
			th_layout_app_n);
	if (grown)
		th_note("%zu layout facts identical to the installed rdma-core header, %zu grown "
			"at their end since", th_layout_app_n - grown, grown);
	else
		th_note("%zu layout facts identical to the installed rdma-core header",
			th_layout_app_n);
}

TH_TEST(xrc_enum_values, "ABI-01", TH_NO_CTX)
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

TH_TEST(comp_mask_bit_values, "ABI-02", TH_NO_CTX)
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

TH_TEST(ex_init_attrs_extend_the_legacy_ones, "ABI-03", TH_NO_CTX)
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

TH_TEST(xrcd_and_open_attr_layouts, "ABI-04 OPENQP-01 XRCD-18", TH_NO_CTX)
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

TH_TEST(send_wr_layout_keeps_old_offsets, "ABI-06 WR-01 WR-06", TH_NO_CTX)
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

TH_TEST(verbs_context_grows_at_the_top, "ABI-07 COMPAT-01", TH_NO_CTX)
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

/* COMPAT-05: each commit of the XRC series prepended its ops above the
 * previous ones, so their distances from the context are fixed since
 * libibverbs 1.1.8 (9a2a8962d open/close_xrcd, 40c1365b2 create_srq_ex and
 * get_srq_num, c7e3e6105 create_qp_ex, 5f5292bbc open_qp); the unused
 * has_comp_mask of 6be16586e lives on as _ABI_placeholder3 (76743d7a4). */
static long from_context(const char *member)
{
	char what[128];

	snprintf(what, sizeof(what), "offsetof(struct verbs_context, %s)", member);
	return app(what) - app("offsetof(struct verbs_context, context)");
}

TH_TEST(xrc_ops_sit_where_each_commit_prepended_them, "COMPAT-05", TH_NO_CTX)
{
	static const struct {
		const char *op;
		long dist;
		int commit;	/* 0: 9a2a8962d ... 3: 5f5292bbc */
	} ops[] = {
		{ "close_xrcd", -24, 0 }, { "open_xrcd", -32, 0 },
		{ "create_srq_ex", -40, 1 }, { "get_srq_num", -48, 1 },
		{ "create_qp_ex", -56, 2 }, { "open_qp", -64, 3 },
	};
	size_t i, j;

	if (from_context("sz") != -8 || from_context("_ABI_placeholder3") != -16)
		th_fail("sz at %ld and _ABI_placeholder3 at %ld from the context, the spec says -8, -16",
			from_context("sz"), from_context("_ABI_placeholder3"));
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (from_context(ops[i].op) != ops[i].dist)
			th_fail("verbs_context.%s at %ld from the context, the spec says %ld",
				ops[i].op, from_context(ops[i].op), ops[i].dist);
		/* a later commit's op is always further up */
		for (j = 0; j < i; j++)
			if (ops[j].commit < ops[i].commit &&
			    from_context(ops[j].op) <= from_context(ops[i].op))
				th_fail("%s (a later commit) is not above %s", ops[i].op, ops[j].op);
	}
}

/* ABI-05: the uverbs write commands XRC added (numbering unchanged since
 * 2013) and their payloads, from Linux's <rdma/ib_user_verbs.h> (rdma-core
 * v44.0 carries the same file as kernel-headers/rdma/ib_user_verbs.h). */
TH_TEST(uverbs_xrc_commands_and_payloads, "ABI-05", TH_NO_CTX)
{
	EXPECT("IB_USER_VERBS_CMD_OPEN_XRCD", 37);
	EXPECT("IB_USER_VERBS_CMD_CLOSE_XRCD", 38);
	EXPECT("IB_USER_VERBS_CMD_CREATE_XSRQ", 39);
	EXPECT("IB_USER_VERBS_CMD_OPEN_QP", 40);
	/* {u64 response; u32 fd; u32 oflags; u64 driver_data[]} -> {u32 xrcd_handle} */
	EXPECT("sizeof(struct ib_uverbs_open_xrcd)", 16);
	EXPECT("offsetof(struct ib_uverbs_open_xrcd, response)", 0);
	EXPECT("offsetof(struct ib_uverbs_open_xrcd, fd)", 8);
	EXPECT("offsetof(struct ib_uverbs_open_xrcd, oflags)", 12);
	EXPECT("offsetof(struct ib_uverbs_open_xrcd, driver_data)", 16);
	EXPECT("sizeof(struct ib_uverbs_open_xrcd_resp)", 4);
	EXPECT("offsetof(struct ib_uverbs_open_xrcd_resp, xrcd_handle)", 0);
	EXPECT("sizeof(struct ib_uverbs_close_xrcd)", 4);
	EXPECT("offsetof(struct ib_uverbs_close_xrcd, xrcd_handle)", 0);
	/* max_num_tags was "reserved", srqn in the response was "reserved" */
	EXPECT("sizeof(struct ib_uverbs_create_xsrq)", 48);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, response)", 0);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, user_handle)", 8);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, srq_type)", 16);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, pd_handle)", 20);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, max_wr)", 24);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, max_sge)", 28);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, srq_limit)", 32);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, max_num_tags)", 36);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, xrcd_handle)", 40);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, cq_handle)", 44);
	EXPECT("offsetof(struct ib_uverbs_create_xsrq, driver_data)", 48);
	EXPECT("sizeof(struct ib_uverbs_create_srq_resp)", 16);
	EXPECT("offsetof(struct ib_uverbs_create_srq_resp, srq_handle)", 0);
	EXPECT("offsetof(struct ib_uverbs_create_srq_resp, max_wr)", 4);
	EXPECT("offsetof(struct ib_uverbs_create_srq_resp, max_sge)", 8);
	EXPECT("offsetof(struct ib_uverbs_create_srq_resp, srqn)", 12);
	/* pd_handle carries the XRCD's handle; the answer is create_qp_resp */
	EXPECT("sizeof(struct ib_uverbs_open_qp)", 32);
	EXPECT("offsetof(struct ib_uverbs_open_qp, response)", 0);
	EXPECT("offsetof(struct ib_uverbs_open_qp, user_handle)", 8);
	EXPECT("offsetof(struct ib_uverbs_open_qp, pd_handle)", 16);
	EXPECT("offsetof(struct ib_uverbs_open_qp, qpn)", 20);
	EXPECT("offsetof(struct ib_uverbs_open_qp, qp_type)", 24);
	EXPECT("offsetof(struct ib_uverbs_open_qp, reserved)", 25);	/* qp_type is a u8 */
	EXPECT("offsetof(struct ib_uverbs_open_qp, driver_data)", 32);
	EXPECT("sizeof(struct ib_uverbs_create_qp_resp)", 32);
	EXPECT("offsetof(struct ib_uverbs_create_qp_resp, qp_handle)", 0);
	EXPECT("offsetof(struct ib_uverbs_create_qp_resp, qpn)", 4);
}

/* WR-05: the kernel's write() post path cannot carry remote_srqn: struct
 * ib_uverbs_send_wr ends with its wr union (the atomic member, 32 bytes,
 * the largest), with no member after it (linux uapi; rdma-core v17
 * dropped its own unused copy of the field, 9f43b6fa3). */
TH_TEST(kernel_send_wr_has_no_remote_srqn, "WR-05", TH_NO_CTX)
{
	EXPECT("offsetof(struct ib_uverbs_send_wr, ex)", 20);
	EXPECT("offsetof(struct ib_uverbs_send_wr, wr)", 24);
	EXPECT("offsetof(struct ib_uverbs_send_wr, wr.atomic.reserved)", 52);
	EXPECT("sizeof(struct ib_uverbs_send_wr)", 56);
	EXPECT("sizeof(struct ib_uverbs_send_wr)",
	       app("offsetof(struct ib_uverbs_send_wr, wr.atomic.reserved)") + 4);
}

/*
 * COMPAT-07: the XRC verbs are static inline in verbs.h, never symbols of
 * the library (an application cannot dlsym them); ibv_register_driver
 * stays in IBVERBS_1.1 (a no-op stub in rdma-core >= v13, compat-1_0.c);
 * the ibv_cmd_* helpers are exported to providers from a private node
 * only (IBVERBS_PRIVATE_<n>, whose number follows the release: not
 * checked). Looked up in the libibverbs.so.1 this process runs on.
 */
static long sym_found(void *lib, const char *name, const char *version)
{
	const char *p = getenv("IBVCT_ABI_PERTURB");
	void *s = version ? dlvsym(lib, name, version) : dlsym(lib, name);

	return (s ? 1 : 0) + (p && !strcmp(p, name) ? 1 : 0);
}

TH_TEST(xrc_verbs_are_inline_not_exported, "COMPAT-07", TH_NO_CTX)
{
	static const char *const inl[] = {
		"ibv_open_xrcd", "ibv_close_xrcd", "ibv_create_srq_ex",
		"ibv_get_srq_num", "ibv_create_qp_ex", "ibv_open_qp",
	};
	static const char *const cmd[] = {
		"ibv_cmd_open_xrcd", "ibv_cmd_close_xrcd", "ibv_cmd_create_srq_ex",
		"ibv_cmd_create_qp_ex", "ibv_cmd_open_qp",
	};
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	size_t i;

	if (!lib)
		th_fail("libibverbs.so.1 is not loaded in this process: %s", dlerror());
	for (i = 0; i < sizeof(inl) / sizeof(inl[0]); i++)
		if (sym_found(lib, inl[i], NULL) != 0)
			th_fail("%s is a symbol of the library; the spec says static inline only", inl[i]);
	if (sym_found(lib, "ibv_register_driver", "IBVERBS_1.1") != 1)
		th_fail("ibv_register_driver@IBVERBS_1.1 is not exported");
	/* a provider function, not an application's: no IBVERBS_1.x version */
	for (i = 0; i < sizeof(cmd) / sizeof(cmd[0]); i++) {
		if (sym_found(lib, cmd[i], NULL) != 1)
			th_fail("%s is not exported", cmd[i]);
		if (dlvsym(lib, cmd[i], "IBVERBS_1.0") || dlvsym(lib, cmd[i], "IBVERBS_1.1"))
			th_fail("%s is in a public IBVERBS_1.x node", cmd[i]);
	}
	th_note("no XRC verb among the library's symbols; ibv_register_driver@IBVERBS_1.1 and "
		"ibv_cmd_* (private node) exported");
	dlclose(lib);
}

/* WRX-08, CQX-05: the builders' and poll functions' places in ibv_qp_ex and
 * ibv_cq_ex, which the application's inlines call (rdma-core 44 offsets,
 * LP64, the same in 56, whose ibv_qp_ex ends with wr_flush); ibv_cq_ex
 * begins as ibv_cq does (ibv_cq_ex_to_cq is a cast). */
TH_TEST(qp_ex_and_cq_ex_pointers_sit_where_the_inlines_call, "WRX-08 CQX-05", 0)
{
	EXPECT_REL("sizeof(struct ibv_qp_ex)", 352, 360);	/* 56: wr_flush appended at 352 */
	EXPECT("offsetof(struct ibv_qp_ex, qp_base)", 0);
	EXPECT("offsetof(struct ibv_qp_ex, wr_id)", 168);
	EXPECT("offsetof(struct ibv_qp_ex, wr_flags)", 176);
	EXPECT("offsetof(struct ibv_qp_ex, wr_atomic_cmp_swp)", 184);
	EXPECT("offsetof(struct ibv_qp_ex, wr_send)", 240);
	EXPECT("offsetof(struct ibv_qp_ex, wr_set_xrc_srqn)", 280);
	EXPECT("offsetof(struct ibv_qp_ex, wr_set_sge)", 304);
	EXPECT("offsetof(struct ibv_qp_ex, wr_start)", 320);
	EXPECT("offsetof(struct ibv_qp_ex, wr_complete)", 328);
	EXPECT("offsetof(struct ibv_qp_ex, wr_abort)", 336);
	EXPECT("offsetof(struct ibv_qp_ex, wr_atomic_write)", 344);
	EXPECT("sizeof(struct ibv_cq_ex)", 288);
	EXPECT("offsetof(struct ibv_cq_ex, cq_context)", 16);
	EXPECT("offsetof(struct ibv_cq_ex, comp_events_completed)", 120);
	EXPECT("offsetof(struct ibv_cq_ex, status)", 132);
	EXPECT("offsetof(struct ibv_cq_ex, wr_id)", 136);
	EXPECT("offsetof(struct ibv_cq_ex, start_poll)", 144);
	EXPECT("offsetof(struct ibv_cq_ex, end_poll)", 160);
	EXPECT("offsetof(struct ibv_cq_ex, read_opcode)", 168);
	EXPECT("offsetof(struct ibv_cq_ex, read_byte_len)", 184);
	EXPECT("offsetof(struct ibv_cq_ex, read_completion_wallclock_ns)", 280);
	EXPECT("offsetof(struct verbs_context, create_cq_ex)", 200);
	assert_int_equal(offsetof(struct ibv_cq_ex, comp_events_completed),
			 offsetof(struct ibv_cq, comp_events_completed));
	assert_int_equal(offsetof(struct ibv_cq_ex, async_events_completed),
			 offsetof(struct ibv_cq, async_events_completed));
}

int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
