/* SPDX-License-Identifier: MIT */
/*
 * t4101: the extension verbs of rdma-core 44 beyond XRC, as a program
 * written against that release uses them: the extended device query and
 * the port query (DEVX-). Where a provider does not offer an extension,
 * the library's answer for a missing op is accepted and named in a note
 * (a legacy provider on the reference target has none of them).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th.h"

#define DEVX_END(fld) (offsetof(struct ibv_device_attr_ex, fld) + \
		       sizeof(((struct ibv_device_attr_ex *)0)->fld))

static int devx_extended_is_zero(const struct ibv_device_attr_ex *a)
{
	static const struct ibv_device_attr_ex zero;

	return !memcmp((const char *)a + sizeof(a->orig_attr),
		       (const char *)&zero + sizeof(zero.orig_attr),
		       sizeof(*a) - sizeof(a->orig_attr));
}

/* DEVX-01: the base attributes restated, the port count in
 * phys_port_cnt_ex, and the capability word's low half the basic one. */
static void query_device_ex_counts_the_ports_and_restates_the_base(struct th_ctx *t)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_port_attr pa;
	uint32_t p;

	memset(&ax, 0xa5, sizeof(ax));
	assert_int_equal(ibv_query_device(t->ctx, &a), 0);
	assert_int_equal(ibv_query_device_ex(t->ctx, NULL, &ax), 0);
	assert_int_equal(ax.orig_attr.phys_port_cnt, a.phys_port_cnt);
	assert_int_equal(ax.orig_attr.device_cap_flags, a.device_cap_flags);
	assert_int_equal(ax.orig_attr.max_qp_wr, a.max_qp_wr);
	assert_int_equal(ax.orig_attr.max_cqe, a.max_cqe);
	assert_true(!memcmp(&ax.orig_attr.node_guid, &a.node_guid, sizeof(a.node_guid)));
	if (!ax.phys_port_cnt_ex) {
		/* the library's answer without the provider's op: base only */
		if (!devx_extended_is_zero(&ax))
			th_fail("phys_port_cnt_ex is 0 while other extended fields are set "
				"(device_cap_flags_ex %#llx)",
				(unsigned long long)ax.device_cap_flags_ex);
		th_note("no extended device query: the base attributes, the rest zero");
		return;
	}
	assert_int_equal(ax.phys_port_cnt_ex, a.phys_port_cnt);
	if ((uint32_t)ax.device_cap_flags_ex != (uint32_t)a.device_cap_flags)
		th_fail("device_cap_flags_ex %#llx: its low 32 bits are not device_cap_flags %#x",
			(unsigned long long)ax.device_cap_flags_ex, a.device_cap_flags);
	for (p = 1; p <= ax.phys_port_cnt_ex; p++)
		assert_int_equal(ibv_query_port(t->ctx, (uint8_t)p, &pa), 0);
	th_note("%u port(s), device_cap_flags_ex %#llx", ax.phys_port_cnt_ex,
		(unsigned long long)ax.device_cap_flags_ex);
}

/* DEVX-02: the command layer refuses an input comp_mask and a struct
 * smaller than the base attributes; the op's slot is called directly, as an
 * application built against another release's header calls it. */
static void query_device_ex_refuses_input_mask_and_short_struct(struct th_ctx *t)
{
	struct verbs_context *v = verbs_get_ctx_op(t->ctx, query_device_ex);
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex ax;
	int ret;

	if (!v)
		th_skip("the library has no query_device_ex slot");
	ret = v->query_device_ex(t->ctx, NULL, &ax, sizeof(ax.orig_attr) - 1);
	if (ret != EINVAL)
		th_fail("attr_size one below the base attributes: %d, not EINVAL", ret);
	ret = v->query_device_ex(t->ctx, &in, &ax, sizeof(ax));
	if (ret != EINVAL)
		th_fail("input comp_mask 1: %d, not EINVAL", ret);
}

/* DEVX-03: a caller's struct of an older release's size (attr_size) gets
 * not one byte past it: each struct ends at a guard page. */
static void query_device_ex_writes_nothing_past_attr_size(struct th_ctx *t)
{
	static const size_t sizes[] = {
		sizeof(struct ibv_device_attr),			/* base only */
		DEVX_END(hca_core_clock),			/* rdma-core v13 */
		DEVX_END(raw_packet_caps),
		DEVX_END(xrc_odp_caps),				/* before phys_port_cnt_ex */
		sizeof(struct ibv_device_attr_ex),
	};
	struct verbs_context *v = verbs_get_ctx_op(t->ctx, query_device_ex);
	size_t i;

	if (!v)
		th_skip("the library has no query_device_ex slot");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ibv_device_attr_ex *ax = th_guard_alloc(sizes[i]);
		int ret = v->query_device_ex(t->ctx, NULL, ax, sizes[i]);

		if (ret && ret != EOPNOTSUPP)
			th_fail("attr_size %zu: %d", sizes[i], ret);
		if (!ret && sizes[i] == sizeof(*ax) && ax->phys_port_cnt_ex == 0 &&
		    !devx_extended_is_zero(ax))
			th_fail("full size: no phys_port_cnt_ex with extended fields set");
		th_guard_free(ax, sizes[i]);
	}
}

/* DEVX-04: every port the device counts answers, the next one does not
 * (EINVAL), the same through the exported verb and the header's slot. */
static void query_port_answers_each_counted_port(struct th_ctx *t)
{
	struct ibv_port_attr a, b;
	struct ibv_device_attr da;
	uint32_t p;
	int ret;

	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	for (p = 1; p <= da.phys_port_cnt; p++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		assert_int_equal(ibv_query_port(t->ctx, (uint8_t)p, &a), 0);
		/* the exported 1.1 verb writes the 1.1 prefix (up to link_layer) */
		assert_int_equal((ibv_query_port)(t->ctx, (uint8_t)p, (void *)&b), 0);
		assert_int_equal(a.state, b.state);
		assert_int_equal(a.lid, b.lid);
		assert_int_equal(a.active_mtu, b.active_mtu);
		assert_int_equal(a.gid_tbl_len, b.gid_tbl_len);
		assert_int_equal(a.pkey_tbl_len, b.pkey_tbl_len);
		assert_int_equal(a.link_layer, b.link_layer);
		assert_true(a.gid_tbl_len > 0);
		assert_true(a.pkey_tbl_len > 0);
		assert_true(a.max_msg_sz > 0);
		assert_true(a.active_mtu >= IBV_MTU_256 && a.active_mtu <= a.max_mtu);
	}
	ret = ibv_query_port(t->ctx, (uint8_t)(da.phys_port_cnt + 1), &a);
	if (!ret)
		th_fail("query_port answers port %u of %u", da.phys_port_cnt + 1, da.phys_port_cnt);
	th_errno_strict(ret, EINVAL, "query_port past the last port");
	th_note("%u port(s)", da.phys_port_cnt);
}

static const struct th_test tests[] = {
	TH_TEST(query_device_ex_counts_the_ports_and_restates_the_base, "DEVX-01", 0),
	TH_TEST(query_device_ex_refuses_input_mask_and_short_struct, "DEVX-02", 0),
	TH_TEST(query_device_ex_writes_nothing_past_attr_size, "DEVX-03", 0),
	TH_TEST(query_port_answers_each_counted_port, "DEVX-04", 0),
};

int main(int argc, char **argv)
{
	return th_main(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
