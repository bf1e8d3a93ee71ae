/* SPDX-License-Identifier: MIT */
/*
 * t5001: the fake-provider script parser (fake-provider/script/script.c).
 * Every directive is accepted with its effect checked in struct fp_script;
 * every refusal gives the exact "file:line: why" and leaves the caller's
 * struct byte-for-byte untouched (compared with a sentinel-filled copy).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>

#include "fp_script.h"
#include "tr.h"

static struct fp_script g_s;
static char g_err[1024];

static const char *src_dir(void)
{
	const char *s = getenv("IBVCT_SRC");

	return s && s[0] ? s : ".";
}

static void parse_ok(const char *text)
{
	g_err[0] = 0;
	memset(&g_s, 0, sizeof(g_s));
	if (fp_script_parse("t.fps", text, &g_s, g_err, sizeof(g_err)))
		fail_msg("refused: %s", g_err);
}

/* ---- refusals: one table, one checker ---------------------------------- */

struct bad {
	const char *name;
	const char *text;	/* NULL: built in main() into dyn */
	const char *msg;
};
static char *bad_dyn[128];	/* texts built in main(), by row */

#define D "device d\n"
static struct bad bads[] = {
	{ "refuses_unknown_directive", "mode extended\nbogus 1\n",
	  "t.fps:2: unknown directive 'bogus'" },
	{ "refuses_bad_number", D "\tattr max_qp lots\n", "t.fps:2: max_qp: bad number 'lots'" },
	{ "refuses_negative_number", D "\tattr max_qp -1\n", "t.fps:2: max_qp: bad number '-1'" },
	{ "refuses_half_hex_number", D "\tattr max_qp 0x\n", "t.fps:2: max_qp: bad number '0x'" },
	{ "refuses_int_attr_above_int_max", D "\tattr max_qp 2147483648\n",
	  "t.fps:2: max_qp: 2147483648 out of range (0..2147483647)" },
	{ "refuses_u8_attr_out_of_range", D "\tattr local_ca_ack_delay 256\n",
	  "t.fps:2: local_ca_ack_delay: 256 out of range (0..255)" },
	{ "refuses_u16_attr_out_of_range", D "\tattr max_pkeys 0x10000\n",
	  "t.fps:2: max_pkeys: 0x10000 out of range (0..65535)" },
	{ "refuses_u64_overflow", D "\tattr max_mr_size 18446744073709551616\n",
	  "t.fps:2: max_mr_size: bad number '18446744073709551616'" },
	{ "refuses_unknown_attr", D "\tattr max_fun 1\n", "t.fps:2: attr: unknown field 'max_fun'" },
	{ "refuses_attr_node_guid", D "\tattr node_guid 0x1\n",
	  "t.fps:2: attr: node_guid is set with 'guid'" },
	{ "refuses_attr_phys_port_cnt", D "\tattr phys_port_cnt 2\n",
	  "t.fps:2: attr: phys_port_cnt is the number of port lines" },
	{ "refuses_long_fw_ver", D "\tattr fw_ver "
	  "0123456789012345678901234567890123456789012345678901234567890123\n",
	  "t.fps:2: attr fw_ver: longer than 63 characters" },
	{ "refuses_bad_atomic_cap", D "\tattr atomic_cap wild\n",
	  "t.fps:2: atomic_cap: bad number 'wild'" },
	{ "refuses_atomic_cap_out_of_range", D "\tattr atomic_cap 3\n",
	  "t.fps:2: atomic_cap: 3 out of range (0..2)" },
	{ "refuses_bad_sys_image_guid", D "\tattr sys_image_guid x\n",
	  "t.fps:2: attr sys_image_guid: bad GUID 'x'" },
	{ "refuses_attr_without_value", D "\tattr max_qp\n",
	  "t.fps:2: attr: missing argument (usage: attr FIELD VALUE)" },
	{ "refuses_unknown_cap", D "\tcap warp_drive\n",
	  "t.fps:2: cap: unknown capability 'warp_drive'" },
	{ "refuses_unknown_nocap", D "\tnocap XRC\n", "t.fps:2: nocap: unknown capability 'XRC'" },
	{ "refuses_long_hex_guid", D "\tguid 0x12345678901234567\n",
	  "t.fps:2: guid: bad GUID '0x12345678901234567'" },
	{ "refuses_short_colon_guid", D "\tguid 1bad:0:0:1\n", "t.fps:2: guid: bad GUID '1bad:0:0:1'" },
	{ "refuses_duplicate_guid_line", D "\tguid 0x1\n\tguid 0x2\n",
	  "t.fps:3: duplicate 'guid' (first on line 2)" },
	{ "refuses_same_guid_on_two_devices", "device a\n\tguid 0x5\ndevice b\n\tguid 0x5\n",
	  "t.fps:4: device b: guid already used by device a" },
	{ "refuses_guid_equal_to_a_default_guid", "device a\n\tguid 0x1bad000000000002\ndevice b\n",
	  "t.fps:3: device b: guid already used by device a" },
	{ "refuses_bad_node_type", D "\tnode_type hub\n",
	  "t.fps:2: node_type: expected ca, switch, router or rnic, got 'hub'" },
	{ "refuses_duplicate_node_type", D "\tnode_type ca\n\tnode_type switch\n",
	  "t.fps:3: duplicate 'node_type' (first on line 2)" },
	{ "refuses_port_zero", D "\tport 0\n", "t.fps:2: port: 0 out of range (1..4)" },
	{ "refuses_port_above_max", D "\tport 5\n", "t.fps:2: port: 5 out of range (1..4)" },
	{ "refuses_port_out_of_order", D "\tport 2\n", "t.fps:2: port 2 declared before port 1" },
	{ "refuses_unknown_port_option", D "\tport 1 color red\n",
	  "t.fps:2: port: unknown option 'color'" },
	{ "refuses_port_option_without_value", D "\tport 1 state active lid\n",
	  "t.fps:2: port: option 'lid' needs a value" },
	{ "refuses_bad_port_state", D "\tport 1 state up\n",
	  "t.fps:2: port state: expected down, init, armed or active, got 'up'" },
	{ "refuses_port_lid_out_of_range", D "\tport 1 lid 65536\n",
	  "t.fps:2: port lid: 65536 out of range (0..65535)" },
	{ "refuses_port_sm_lid_out_of_range", D "\tport 1 sm_lid 70000\n",
	  "t.fps:2: port sm_lid: 70000 out of range (0..65535)" },
	{ "refuses_port_lmc_out_of_range", D "\tport 1 lmc 8\n",
	  "t.fps:2: port lmc: 8 out of range (0..7)" },
	{ "refuses_bad_mtu", D "\tport 1 mtu 9000\n",
	  "t.fps:2: port mtu: expected 256, 512, 1024, 2048 or 4096, got '9000'" },
	{ "refuses_bad_max_mtu", D "\tport 1 max_mtu 1500\n",
	  "t.fps:2: port max_mtu: expected 256, 512, 1024, 2048 or 4096, got '1500'" },
	{ "refuses_mtu_above_max_mtu", D "\tport 1 max_mtu 1024\n\tport 1 mtu 2048\nmode legacy\n",
	  "t.fps:2: port 1: mtu 2048 above max_mtu 1024" },
	{ "refuses_bad_link_layer", D "\tport 1 link_layer wifi\n",
	  "t.fps:2: port link_layer: expected ib or ethernet, got 'wifi'" },
	{ "refuses_bad_width", D "\tport 1 width 3x\n",
	  "t.fps:2: port width: expected 1x, 2x, 4x, 8x or 12x, got '3x'" },
	{ "refuses_bad_speed", D "\tport 1 speed fast\n",
	  "t.fps:2: port speed: expected sdr, ddr, qdr, fdr10, fdr, edr, hdr or ndr, got 'fast'" },
	{ "refuses_clock_without_rate", D "\tclock\n",
	  "t.fps:2: clock: missing argument (usage: clock KHZ [mask M])" },
	{ "refuses_clock_zero", D "\tclock 0\n", "t.fps:2: clock: 0 out of range (1..10000000)" },
	{ "refuses_clock_above_10_ghz", D "\tclock 10000001\n",
	  "t.fps:2: clock: 10000001 out of range (1..10000000)" },
	{ "refuses_clock_bad_rate", D "\tclock fast\n", "t.fps:2: clock: bad number 'fast'" },
	{ "refuses_clock_unknown_keyword", D "\tclock 1000 bits 48\n",
	  "t.fps:2: clock: unexpected 'bits'" },
	{ "refuses_clock_mask_without_value", D "\tclock 1000 mask\n",
	  "t.fps:2: clock: mask needs a value (usage: clock KHZ [mask M])" },
	{ "refuses_clock_word_past_mask", D "\tclock 1000 mask 0xff 8\n",
	  "t.fps:2: clock: unexpected '8'" },
	{ "refuses_clock_mask_zero", D "\tclock 1000 mask 0\n",
	  "t.fps:2: clock mask: 0 out of range (1..18446744073709551615)" },
	{ "refuses_clock_mask_not_the_low_bits", D "\tclock 1000 mask 0xff00\n",
	  "t.fps:2: clock mask: 0xff00 is not 2^n - 1" },
	{ "refuses_clock_mask_with_a_hole", D "\tclock 1000 mask 0xfeff\n",
	  "t.fps:2: clock mask: 0xfeff is not 2^n - 1" },
	{ "refuses_duplicate_clock", D "\tclock 1000\n\tclock 2000\n",
	  "t.fps:3: duplicate 'clock' (first on line 2)" },
	{ "refuses_clock_outside_a_device", "clock 1000\ndevice d\n",
	  "t.fps:1: 'clock' outside a device block" },
	{ "refuses_clock_under_profile_rxe", "profile rxe\n" D "\tclock 1000\n",
	  "t.fps:3: clock: profile rxe has no completion clock" },
	{ "refuses_clock_mask_under_profile_mlx5", D "\tclock 1000 mask 0xff\nprofile mlx5\n",
	  "t.fps:2: clock: profile mlx5 reports its driver's mask; no 'mask' here" },
	{ "refuses_clock_mask_under_profile_mlx4", "profile mlx4\n" D "\tport 1\n\tclock 1 mask 1\n",
	  "t.fps:4: clock: profile mlx4 reports its driver's mask; no 'mask' here" },
	{ "refuses_gid_on_undeclared_port", D "\tport 1\n\tgid 2 0 fe80::1\n",
	  "t.fps:3: gid: port 2 not declared (device d has 1)" },
	{ "refuses_gid_before_any_port", D "\tgid 1 0 fe80::1\n",
	  "t.fps:2: gid: port 1 not declared (device d has 0)" },
	{ "refuses_gid_port_zero", D "\tport 1\n\tgid 0 0 fe80::1\n",
	  "t.fps:3: gid: 0 out of range (1..4)" },
	{ "refuses_gid_index_out_of_range", D "\tport 1\n\tgid 1 16 fe80::1\n",
	  "t.fps:3: gid index: 16 out of range (0..15)" },
	{ "refuses_bad_ipv6_gid", D "\tport 1\n\tgid 1 0 fe80::zz\n",
	  "t.fps:3: gid: bad GID 'fe80::zz'" },
	{ "refuses_bad_hex_gid", D "\tport 1\n\tgid 1 0 fe80000000000000000000000000000g\n",
	  "t.fps:3: gid: bad GID 'fe80000000000000000000000000000g'" },
	{ "refuses_gid_without_value", D "\tport 1\n\tgid 1 0\n",
	  "t.fps:3: gid: missing argument (usage: gid PORT INDEX GID)" },
	{ "refuses_pkey_on_undeclared_port", D "\tport 1\n\tpkey 3 0 0xffff\n",
	  "t.fps:3: pkey: port 3 not declared (device d has 1)" },
	{ "refuses_pkey_index_out_of_range", D "\tport 1\n\tpkey 1 4 0xffff\n",
	  "t.fps:3: pkey index: 4 out of range (0..3)" },
	{ "refuses_pkey_value_out_of_range", D "\tport 1\n\tpkey 1 0 0x10000\n",
	  "t.fps:3: pkey: 0x10000 out of range (0..65535)" },
	{ "refuses_device_attr_before_device", "mode legacy\n\tguid 0x1\n",
	  "t.fps:2: 'guid' outside a device block" },
	{ "refuses_device_attr_after_top_level", D "quirk modify_skip_table\n\tcap xrc\n",
	  "t.fps:3: 'cap' outside a device block" },
	{ "refuses_trailing_garbage", D "mode legacy extra\n", "t.fps:2: mode: unexpected 'extra'" },
	{ "refuses_device_trailing_garbage", "device d e\n", "t.fps:1: device: unexpected 'e'" },
	{ "refuses_mode_without_value", D "mode\n",
	  "t.fps:2: mode: missing argument (usage: mode legacy|extended)" },
	{ "refuses_bad_mode", "mode fancy\n", "t.fps:1: mode: expected legacy or extended, got 'fancy'" },
	{ "refuses_bad_lifetime", "lifetime forever\n",
	  "t.fps:1: lifetime: expected current or seed, got 'forever'" },
	{ "refuses_duplicate_mode", "mode legacy\nmode extended\n" D,
	  "t.fps:2: duplicate 'mode' (first on line 1)" },
	{ "refuses_duplicate_lifetime", "lifetime seed\n" D "lifetime seed\n",
	  "t.fps:3: duplicate 'lifetime' (first on line 1)" },
	{ "refuses_bad_profile", D "profile mlx6\n",
	  "t.fps:2: profile: expected strict, mlx5, mlx4, rxe or ixrc, got 'mlx6'" },
	{ "refuses_profile_without_value", "profile\n" D,
	  "t.fps:1: profile: missing argument (usage: profile strict|mlx5|mlx4|rxe|ixrc)" },
	{ "refuses_profile_with_two_values", "profile mlx5 mlx4\n" D,
	  "t.fps:1: profile: unexpected 'mlx4'" },
	{ "refuses_duplicate_profile", "profile rxe\n" D "profile rxe\n",
	  "t.fps:3: duplicate 'profile' (first on line 1)" },
	{ "refuses_profile_name_in_capitals", D "profile MLX5\n",
	  "t.fps:2: profile: expected strict, mlx5, mlx4, rxe or ixrc, got 'MLX5'" },
	{ "refuses_duplicate_trace", "trace a\ntrace b\n", "t.fps:2: duplicate 'trace' (first on line 1)" },
	{ "refuses_trace_without_file", "trace\n", "t.fps:1: trace: missing argument (usage: trace FILE [states])" },
	{ "refuses_duplicate_device_name", "device d\ndevice e\ndevice d\n",
	  "t.fps:3: duplicate device name 'd' (first on line 1)" },
	{ "refuses_device_name_with_slash", "device ../x\n", "t.fps:1: device: bad name '../x'" },
	{ "refuses_device_name_with_dot_first", "device .x\n", "t.fps:1: device: bad name '.x'" },
	{ "refuses_device_name_too_long",
	  "device 0123456789012345678901234567890123456789012345678901234567890123\n",
	  "t.fps:1: device: bad name '0123456789012345678901234567890123456789012345678901234567890123'" },
	{ "refuses_too_many_devices", NULL, "t.fps:9: too many devices (max 8)" },
	{ "refuses_script_without_device", "# c\nmode legacy\n\n", "t.fps:3: no device declared" },
	{ "refuses_empty_script", "", "t.fps:0: no device declared" },
	{ "refuses_fault_unknown_op", D "fault frobnicate nth 1\n", "t.fps:2: fault: unknown op 'frobnicate'" },
	{ "refuses_fault_bad_kind", D "fault create_qp every 1\n",
	  "t.fps:2: fault: expected nth or from, got 'every'" },
	{ "refuses_fault_nth_zero", D "fault create_qp nth 0\n",
	  "t.fps:2: fault: 0 out of range (1..18446744073709551615)" },
	{ "refuses_fault_unknown_errno", D "fault create_qp nth 2 errno EWHATEVER\n",
	  "t.fps:2: fault: unknown errno 'EWHATEVER'" },
	{ "refuses_fault_errno_out_of_range", D "fault create_qp nth 2 errno 4096\n",
	  "t.fps:2: fault errno: 4096 out of range (1..4095)" },
	{ "refuses_fault_errno_zero", D "fault create_qp nth 2 errno 0\n",
	  "t.fps:2: fault errno: 0 out of range (1..4095)" },
	{ "refuses_fault_errno_without_value", D "fault create_qp nth 1 errno\n",
	  "t.fps:2: fault: errno needs a value (usage: fault OP nth|from N [errno E])" },
	{ "refuses_fault_unknown_keyword", D "fault create_qp nth 1 code 5\n",
	  "t.fps:2: fault: unexpected 'code'" },
	{ "refuses_fault_missing_count", D "fault create_qp nth\n",
	  "t.fps:2: fault: missing argument (usage: fault OP nth|from N [errno E])" },
	{ "refuses_too_many_faults", NULL, "t.fps:66: too many faults (max 64)" },
	{ "refuses_unknown_quirk", D "quirk no_such_quirk\n", "t.fps:2: quirk: unknown quirk 'no_such_quirk'" },
	{ "refuses_unknown_withdraw", D "withdraw warp_drive\n",
	  "t.fps:2: withdraw: unknown extension 'warp_drive' (cq_ex, mw, parent_domain, "
	  "qp_ex, query_device_ex, query_rt_values, rereg_mr)" },
	{ "refuses_unknown_event", D "event meteor after poll_cq 1\n",
	  "t.fps:2: event: unknown event 'meteor'" },
	{ "refuses_event_without_after", D "event qp_fatal before modify_qp 1\n",
	  "t.fps:2: event: expected 'after', got 'before'" },
	{ "refuses_event_unknown_op", D "event qp_fatal after x 1\n", "t.fps:2: event: unknown op 'x'" },
	{ "refuses_qp_event_after_cq_op", D "event qp_fatal after poll_cq 1\n",
	  "t.fps:2: event qp_fatal: op poll_cq does not act on a QP" },
	{ "refuses_srq_event_after_qp_op", D "event srq_limit_reached after post_send 1\n",
	  "t.fps:2: event srq_limit_reached: op post_send does not act on a SRQ" },
	{ "refuses_cq_event_after_pd_op", D "event cq_err after alloc_pd 1\n",
	  "t.fps:2: event cq_err: op alloc_pd does not act on a CQ" },
	{ "refuses_port_on_non_port_event", D "event cq_err after poll_cq 1 port 1\n",
	  "t.fps:2: event cq_err: not a port event, 'port' not allowed" },
	{ "refuses_event_port_beyond_devices", D "event port_err after query_port 1 port 2\n",
	  "t.fps:2: event: port 2 but no device has 2 ports" },
	{ "refuses_event_port_out_of_range", D "event port_err after query_port 1 port 5\n",
	  "t.fps:2: event port: 5 out of range (1..4)" },
	{ "refuses_event_count_zero", D "event comm_est after modify_qp 0\n",
	  "t.fps:2: event: 0 out of range (1..18446744073709551615)" },
	{ "refuses_event_port_without_value", D "event port_err after query_port 1 port\n",
	  "t.fps:2: event: port needs a value (usage: event TYPE after OP N [port P])" },
	{ "refuses_event_unknown_keyword", D "event port_err after query_port 1 lane 1\n",
	  "t.fps:2: event: unexpected 'lane'" },
	{ "refuses_too_many_events", NULL, "t.fps:34: too many events (max 32)" },
	{ "refuses_line_too_long", NULL, "t.fps:2: line too long (max 1023 characters)" },
	{ "refuses_too_many_words", D "\tport 1 lid 1 lid 1 lid 1 lid 1 lid 1 lid 1 lid 1 lid 1"
	  " lid 1 lid 1 lid 1 lid 1 lid 1 lid 1 lid 1 lid 1\n", "t.fps:2: too many words (max 32)" },
};
#undef D

static void check_refused(void **state)
{
	struct bad *b = *state;
	struct fp_script *s = malloc(sizeof(*s)), *sentinel = malloc(sizeof(*s));

	assert_non_null(s);
	assert_non_null(sentinel);
	memset(sentinel, 0xa5, sizeof(*sentinel));
	memcpy(s, sentinel, sizeof(*s));
	g_err[0] = 0;
	assert_int_equal(fp_script_parse("t.fps", b->text ? b->text : bad_dyn[b - bads], s, g_err,
					 sizeof(g_err)), -1);
	assert_string_equal(g_err, b->msg);
	assert_memory_equal(s, sentinel, sizeof(*s));
	free(sentinel);
	free(s);
}

/* one test per row of bads, named by its row */
TR_CASES(check_refused, bads);

static void build_dynamic(void)
{
	size_t i, n;
	char *p;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		if (bads[i].text)
			continue;
		p = bad_dyn[i] = calloc(1, 70000);
		assert_non_null(p);
		if (strstr(bads[i].name, "devices")) {
			for (n = 0; n < 9; n++)
				p += sprintf(p, "device d%zu\n", n);
		} else if (strstr(bads[i].name, "faults")) {
			p += sprintf(p, "device d\n");
			for (n = 0; n < 65; n++)
				p += sprintf(p, "fault poll_cq nth %zu\n", n + 1);
		} else if (strstr(bads[i].name, "events")) {
			p += sprintf(p, "device d\n");
			for (n = 0; n < 33; n++)
				p += sprintf(p, "event cq_err after poll_cq %zu\n", n + 1);
		} else if (strstr(bads[i].name, "line")) {
			p += sprintf(p, "device d\n#");
			memset(p, 'x', 1023);	/* 1024 characters with the '#' */
			strcpy(p + 1023, "\n");
		}
	}
}

/* ---- accepted scripts: effects ------------------------------------------ */

TR_TEST(default_is_extended_current_fake0_with_xrc)
{
	struct fp_port_spec *p;

	fp_script_default(&g_s);
	assert_string_equal(g_s.path, "");
	assert_int_equal(g_s.mode, FP_MODE_EXTENDED);
	assert_int_equal(g_s.lifetime, FP_LIFE_CURRENT);
	assert_int_equal(g_s.ndevs, 1);
	assert_string_equal(g_s.dev[0].name, "fake0");
	assert_true(g_s.dev[0].attr.device_cap_flags & IBV_DEVICE_XRC);
	assert_int_equal(g_s.dev[0].nports, 1);
	assert_int_equal(g_s.dev[0].attr.phys_port_cnt, 1);
	p = &g_s.dev[0].port[0];
	assert_int_equal(p->attr.state, IBV_PORT_ACTIVE);
	assert_int_equal(p->attr.link_layer, IBV_LINK_LAYER_INFINIBAND);
	assert_int_equal(g_s.nfaults, 0);
	assert_int_equal(g_s.nevents, 0);
	assert_string_equal(g_s.trace_path, "");
}

TR_TEST(default_fps_fixture_matches_builtin)
{
	struct fp_script *f = calloc(1, sizeof(*f));
	char path[4096];

	assert_non_null(f);
	fp_script_default(&g_s);
	snprintf(path, sizeof(path), "%s/fixtures/scripts/default.fps", src_dir());
	if (fp_script_load(path, f, g_err, sizeof(g_err)))
		fail_msg("%s", g_err);
	memset(f->path, 0, sizeof(f->path));
	memset(g_s.path, 0, sizeof(g_s.path));
	assert_memory_equal(f, &g_s, sizeof(g_s));
	free(f);
}

TR_TEST(every_good_fixture_loads)
{
	static const char *const good[] = {
		"default", "legacy", "extended", "seed", "two-devices", "rxe", "ixrc", "no-xrc",
	};
	char path[4096];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(path, sizeof(path), "%s/fixtures/scripts/%s.fps", src_dir(), good[i]);
		if (fp_script_load(path, &g_s, g_err, sizeof(g_err)))
			fail_msg("%s", g_err);
		assert_non_null(strstr(g_s.path, good[i]));
		assert_int_equal(g_s.path[0], '/');
	}
	assert_int_equal(g_s.dev[0].attr.device_cap_flags & IBV_DEVICE_XRC, 0); /* no-xrc */
}

TR_TEST(every_bad_fixture_is_refused_with_its_line)
{
	static const struct { const char *file, *why; } bad[] = {
		{ "bad-number", "3: max_qp: bad number 'lots'" },
		{ "duplicate-device", "3: duplicate device name 'fake0' (first on line 2)" },
		{ "event-wrong-op", "3: event qp_fatal: op poll_cq does not act on a QP" },
		{ "no-device", "4: no device declared" },
		{ "out-of-range", "3: port lid: 65536 out of range (0..65535)" },
		{ "outside-device", "3: 'guid' outside a device block" },
		{ "trailing-garbage", "3: mode: unexpected 'extra'" },
		{ "undeclared-port", "4: gid: port 2 not declared (device fake0 has 1)" },
		{ "unknown-directive", "3: unknown directive 'bogus'" },
		{ "unknown-errno", "3: fault: unknown errno 'EWHATEVER'" },
		{ "unknown-quirk", "3: quirk: unknown quirk 'no_such_quirk'" },
	};
	char path[4096], want[4200];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "%s/fixtures/scripts/bad/%s.fps", src_dir(), bad[i].file);
		memset(&g_s, 0x5a, sizeof(g_s));
		assert_int_equal(fp_script_load(path, &g_s, g_err, sizeof(g_err)), -1);
		snprintf(want, sizeof(want), "%s:%s", path, bad[i].why);
		assert_string_equal(g_err, want);
	}
}

TR_TEST(load_of_missing_file_names_line_0)
{
	memset(&g_s, 0x5a, sizeof(g_s));
	assert_int_equal(fp_script_load("/nonexistent/x.fps", &g_s, g_err, sizeof(g_err)), -1);
	assert_string_equal(g_err, "/nonexistent/x.fps:0: cannot open: No such file or directory");
	assert_int_equal(fp_script_load("/", &g_s, g_err, sizeof(g_err)), -1);
	assert_string_equal(g_err, "/:0: not a regular file");
}

TR_TEST(load_refuses_nul_byte_with_its_line)
{
	char path[] = "/tmp/t5001-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "device d\nmo\0de legacy\n", 22), 22);
	close(fd);
	assert_int_equal(fp_script_load(path, &g_s, g_err, sizeof(g_err)), -1);
	unlink(path);
	assert_non_null(strstr(g_err, ":2: NUL byte in line"));
	assert_memory_equal(g_err, path, strlen(path));
}

TR_TEST(mode_and_lifetime_are_set)
{
	parse_ok("mode legacy\nlifetime seed\ndevice d\n");
	assert_int_equal(g_s.mode, FP_MODE_LEGACY);
	assert_int_equal(g_s.lifetime, FP_LIFE_SEED);
	parse_ok("mode extended\nlifetime current\ndevice d\n");
	assert_int_equal(g_s.mode, FP_MODE_EXTENDED);
	assert_int_equal(g_s.lifetime, FP_LIFE_CURRENT);
}

TR_TEST(profile_is_set_and_caps_kept)
{
	static const struct {
		const char *name;
		enum fp_profile p;
		const char *kdriver;
	} rows[] = {
		{ "strict", FP_PROF_STRICT, "ibvct_fake" }, { "mlx5", FP_PROF_MLX5, "mlx5_core" },
		{ "mlx4", FP_PROF_MLX4, "mlx4_core" }, { "rxe", FP_PROF_RXE, "rdma_rxe" },
		{ "ixrc", FP_PROF_IXRC, "" },
	};
	char text[128];

	parse_ok("device d\n\tcap xrc\n");
	assert_int_equal(g_s.profile, FP_PROF_STRICT);		/* the default */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(text, sizeof(text), "profile %s\ndevice d\n\tcap xrc\ndevice e\n\tcap xrc\n",
			 rows[i].name);
		parse_ok(text);
		assert_int_equal(g_s.profile, rows[i].p);
		assert_string_equal(fp_profile_name(g_s.profile), rows[i].name);
		assert_string_equal(fp_profile_kdriver(g_s.profile), rows[i].kdriver);
		/* the script keeps what the device block says: that rxe never
		 * reports XRC is its driver's answer (verbs/profile.c, t4100) */
		for (int d = 0; d < 2; d++)
			assert_int_equal(!!(g_s.dev[d].attr.device_cap_flags & IBV_DEVICE_XRC), 1);
	}
	/* after the device block too: a top-level line ends the block */
	parse_ok("device d\n\tcap xrc\nprofile rxe\n");
	assert_int_equal(g_s.profile, FP_PROF_RXE);
}

TR_TEST(comments_blanks_and_crlf_are_ignored)
{
	char text[1200];

	parse_ok("# a comment\n\n   \t\ndevice d # trailing comment\r\n\tcap xrc\r\n");
	assert_int_equal(g_s.ndevs, 1);
	assert_string_equal(g_s.dev[0].name, "d");
	assert_true(g_s.dev[0].attr.device_cap_flags & IBV_DEVICE_XRC);
	/* the longest allowed line, and a last line without a newline */
	strcpy(text, "#");
	memset(text + 1, 'x', 1022);
	strcpy(text + 1023, "\ndevice e");
	parse_ok(text);
	assert_string_equal(g_s.dev[0].name, "e");
}

TR_TEST(device_defaults_are_filled_in)
{
	const struct fp_dev_spec *d;
	const struct fp_port_spec *p;
	uint64_t be;

	parse_ok("device a\ndevice b\n\tport 1\n\tport 2 link_layer ethernet\n");
	assert_int_equal(g_s.ndevs, 2);
	d = &g_s.dev[0];
	assert_int_equal(d->node_guid, 0x1bad000000000001ULL);
	assert_int_equal(d->attr.node_guid, htobe64(0x1bad000000000001ULL));
	assert_int_equal(d->attr.sys_image_guid, d->attr.node_guid);
	assert_int_equal(d->node_type, IBV_NODE_CA);
	assert_int_equal(d->attr.device_cap_flags & IBV_DEVICE_XRC, 0);
	assert_int_equal(d->attr.max_qp, 16384);
	assert_int_equal(d->attr.max_qp_wr, 16384);
	assert_int_equal(d->attr.max_sge, 32);
	assert_int_equal(d->attr.max_cq, 16384);
	assert_int_equal(d->attr.max_cqe, 65535);
	assert_int_equal(d->attr.max_mr, 65536);
	assert_int_equal(d->attr.max_pd, 65536);
	assert_int_equal(d->attr.max_srq, 16384);
	assert_int_equal(d->attr.max_srq_wr, 16384);
	assert_int_equal(d->attr.max_srq_sge, 32);
	assert_int_equal(d->attr.max_qp_rd_atom, 16);
	assert_int_equal(d->attr.max_qp_init_rd_atom, 16);
	assert_int_equal(d->attr.atomic_cap, IBV_ATOMIC_HCA);
	assert_int_equal(d->attr.vendor_id, 0x1bad);
	assert_string_equal(d->attr.fw_ver, "1.0.0");
	assert_int_equal(d->nports, 1);
	assert_int_equal(d->attr.phys_port_cnt, 1);
	p = &d->port[0];
	assert_int_equal(p->attr.state, IBV_PORT_ACTIVE);
	assert_int_equal(p->attr.phys_state, 5);
	assert_int_equal(p->attr.max_mtu, IBV_MTU_4096);
	assert_int_equal(p->attr.active_mtu, IBV_MTU_4096);
	assert_int_equal(p->attr.lid, 1);
	assert_int_equal(p->attr.sm_lid, 1);
	assert_int_equal(p->attr.gid_tbl_len, FP_MAX_GIDS);
	assert_int_equal(p->attr.pkey_tbl_len, FP_MAX_PKEYS);
	assert_int_equal(p->ngids, 1);
	assert_int_equal(p->gid[0].raw[0], 0xfe);
	assert_int_equal(p->gid[0].raw[1], 0x80);
	be = htobe64(d->node_guid);
	assert_memory_equal(p->gid[0].raw + 8, &be, 8);
	assert_int_equal(p->npkeys, 1);
	assert_int_equal(p->pkey[0], 0xffff);
	d = &g_s.dev[1];
	assert_int_equal(d->node_guid, 0x1bad000000000002ULL);
	assert_int_equal(d->nports, 2);
	assert_int_equal(d->attr.phys_port_cnt, 2);
	assert_int_equal(d->port[0].attr.lid, 9);	/* 8 * device index + port */
	assert_int_equal(d->port[1].attr.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(d->port[1].attr.lid, 0);
	assert_int_equal(d->port[1].attr.sm_lid, 0);
}

TR_TEST(device_directives_take_effect)
{
	const struct fp_dev_spec *d;
	const struct fp_port_spec *p;

	parse_ok("device mlx_0.x-1\n"
		 "\tguid 0002:c903:0000:abcd\n"
		 "\tnode_type switch\n"
		 "\tcap xrc\n\tcap mem_window\n\tnocap srq_resize\n"
		 "\tattr sys_image_guid 0x1234\n"
		 "\tattr atomic_cap glob\n"
		 "\tport 1 state down lid 0x20 sm_lid 3 lmc 2 mtu 1024 max_mtu 2048 width 12x speed hdr\n"
		 "\tport 2 state init link_layer ethernet\n"
		 "\tport 3 state armed\n"
		 "\tport 4\n"
		 "\tport 1 state active\n"	/* a declared port can be changed */
		 "\tgid 1 0 fe80::1\n"
		 "\tgid 2 3 00112233445566778899aabbccddeeff\n"
		 "\tpkey 1 2 0x8001\n");
	d = &g_s.dev[0];
	assert_string_equal(d->name, "mlx_0.x-1");
	assert_int_equal(d->node_guid, 0x0002c9030000abcdULL);
	assert_int_equal(d->node_type, IBV_NODE_SWITCH);
	assert_true(d->attr.device_cap_flags & IBV_DEVICE_XRC);
	assert_true(d->attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	assert_false(d->attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE);
	assert_int_equal(d->attr.sys_image_guid, htobe64(0x1234));
	assert_int_equal(d->attr.atomic_cap, IBV_ATOMIC_GLOB);
	assert_int_equal(d->nports, 4);
	assert_int_equal(d->attr.phys_port_cnt, 4);
	p = &d->port[0];
	assert_int_equal(p->attr.state, IBV_PORT_ACTIVE);
	assert_int_equal(p->attr.lid, 0x20);
	assert_int_equal(p->attr.sm_lid, 3);
	assert_int_equal(p->attr.lmc, 2);
	assert_int_equal(p->attr.active_mtu, IBV_MTU_1024);
	assert_int_equal(p->attr.max_mtu, IBV_MTU_2048);
	assert_int_equal(p->attr.active_width, 8);
	assert_int_equal(p->attr.active_speed, 64);
	assert_int_equal(p->gid[0].raw[15], 1);
	assert_int_equal(p->gid[0].raw[0], 0xfe);
	assert_int_equal(p->npkeys, 3);
	assert_int_equal(p->pkey[2], 0x8001);
	assert_int_equal(p->pkey[0], 0xffff);
	assert_int_equal(d->port[1].attr.state, IBV_PORT_INIT);
	assert_int_equal(d->port[1].attr.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(d->port[1].ngids, 4);
	assert_int_equal(d->port[1].gid[3].raw[0], 0x00);
	assert_int_equal(d->port[1].gid[3].raw[15], 0xff);
	assert_int_equal(d->port[2].attr.state, IBV_PORT_ARMED);
	parse_ok("device d\n\tport 1 state down\n");
	assert_int_equal(g_s.dev[0].port[0].attr.state, IBV_PORT_DOWN);
	assert_int_equal(g_s.dev[0].port[0].attr.phys_state, 3);
	parse_ok("device d\n\tnode_type router\ndevice e\n\tnode_type rnic\ndevice f\n\tnode_type ca\n");
	assert_int_equal(g_s.dev[0].node_type, IBV_NODE_ROUTER);
	assert_int_equal(g_s.dev[1].node_type, IBV_NODE_RNIC);
	assert_int_equal(g_s.dev[2].node_type, IBV_NODE_CA);
}


/* `clock KHZ [mask M]`: the device's completion clock; mask all 64 bits
 * unless said; a device without the line has none; each device its own. */
TR_TEST(clock_sets_the_rate_and_mask)
{
	(void)state;
	parse_ok("device d\n\tclock 156250 mask 0xffffffffffff\ndevice e\n\tclock 1\ndevice f\n");
	assert_int_equal(g_s.dev[0].clock_khz, 156250);
	assert_int_equal(g_s.dev[0].clock_mask, 0xffffffffffffULL);
	assert_int_equal(g_s.dev[1].clock_khz, 1);
	assert_int_equal(g_s.dev[1].clock_mask, UINT64_MAX);
	assert_int_equal(g_s.dev[2].clock_khz, 0);
	assert_int_equal(g_s.dev[2].clock_mask, 0);
	parse_ok("device d\n\tclock 10000000 mask 1\n");
	assert_int_equal(g_s.dev[0].clock_khz, 10000000);
	assert_int_equal(g_s.dev[0].clock_mask, 1);
	parse_ok("device d\n\tclock 0x3e8 mask 18446744073709551615\n");
	assert_int_equal(g_s.dev[0].clock_khz, 1000);
	assert_int_equal(g_s.dev[0].clock_mask, UINT64_MAX);
	/* the drivers with a clock of their own take the rate (their mask is
	 * the driver's, fp_prof_clock) */
	parse_ok("profile mlx5\ndevice d\n\tclock 156250\n");
	assert_int_equal(g_s.dev[0].clock_khz, 156250);
	parse_ok("device d\n\tclock 427000\nprofile mlx4\n");
	assert_int_equal(g_s.dev[0].clock_khz, 427000);
	parse_ok("profile rxe\ndevice d\n");
	assert_int_equal(g_s.dev[0].clock_khz, 0);
}
TR_TEST(every_device_attr_field_is_settable)
{
#define F(name, v) { #name, offsetof(struct ibv_device_attr, name), \
		     sizeof(((struct ibv_device_attr *)0)->name), v }
	static const struct { const char *name; size_t off, size; uint64_t v; } f[] = {
		F(max_mr_size, 0x123456789aULL), F(page_size_cap, 0x1000),
		F(vendor_id, 0x15b3), F(vendor_part_id, 4119), F(hw_ver, 7),
		F(max_qp, 100), F(max_qp_wr, 101), F(device_cap_flags, 0x100000),
		F(max_sge, 102), F(max_sge_rd, 103), F(max_cq, 104), F(max_cqe, 105),
		F(max_mr, 106), F(max_pd, 107), F(max_qp_rd_atom, 108),
		F(max_ee_rd_atom, 109), F(max_res_rd_atom, 110),
		F(max_qp_init_rd_atom, 111), F(max_ee_init_rd_atom, 112),
		F(atomic_cap, 0), F(max_ee, 113), F(max_rdd, 114), F(max_mw, 115),
		F(max_raw_ipv6_qp, 116), F(max_raw_ethy_qp, 117), F(max_mcast_grp, 118),
		F(max_mcast_qp_attach, 119), F(max_total_mcast_qp_attach, 120),
		F(max_ah, 121), F(max_fmr, 122), F(max_map_per_fmr, 123),
		F(max_srq, 124), F(max_srq_wr, 125), F(max_srq_sge, 126),
		F(max_pkeys, 127), F(local_ca_ack_delay, 128),
	};
#undef F
	char text[256];
	uint64_t got;
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(text, sizeof(text), "device d\n\tattr %s %llu\n", f[i].name,
			 (unsigned long long)f[i].v);
		parse_ok(text);
		got = 0;
		memcpy(&got, (char *)&g_s.dev[0].attr + f[i].off, f[i].size); /* little endian */
		if (got != f[i].v)
			fail_msg("attr %s: got %llu", f[i].name, (unsigned long long)got);
	}
	parse_ok("device d\n\tattr fw_ver 12.28.2006\n\tattr atomic_cap none\n");
	assert_string_equal(g_s.dev[0].attr.fw_ver, "12.28.2006");
	assert_int_equal(g_s.dev[0].attr.atomic_cap, IBV_ATOMIC_NONE);
	parse_ok("device d\n\tattr atomic_cap hca\n");
	assert_int_equal(g_s.dev[0].attr.atomic_cap, IBV_ATOMIC_HCA);
}

TR_TEST(every_cap_name_sets_its_flag)
{
	static const struct { const char *name; unsigned int flag; } caps[] = {
		{ "resize_max_wr", IBV_DEVICE_RESIZE_MAX_WR },
		{ "bad_pkey_cntr", IBV_DEVICE_BAD_PKEY_CNTR },
		{ "bad_qkey_cntr", IBV_DEVICE_BAD_QKEY_CNTR },
		{ "raw_multi", IBV_DEVICE_RAW_MULTI },
		{ "auto_path_mig", IBV_DEVICE_AUTO_PATH_MIG },
		{ "change_phy_port", IBV_DEVICE_CHANGE_PHY_PORT },
		{ "ud_av_port_enforce", IBV_DEVICE_UD_AV_PORT_ENFORCE },
		{ "curr_qp_state_mod", IBV_DEVICE_CURR_QP_STATE_MOD },
		{ "shutdown_port", IBV_DEVICE_SHUTDOWN_PORT },
		{ "init_type", IBV_DEVICE_INIT_TYPE },
		{ "port_active_event", IBV_DEVICE_PORT_ACTIVE_EVENT },
		{ "sys_image_guid", IBV_DEVICE_SYS_IMAGE_GUID },
		{ "rc_rnr_nak_gen", IBV_DEVICE_RC_RNR_NAK_GEN },
		{ "srq_resize", IBV_DEVICE_SRQ_RESIZE },
		{ "n_notify_cq", IBV_DEVICE_N_NOTIFY_CQ },
		{ "mem_window", IBV_DEVICE_MEM_WINDOW },
		{ "ud_ip_csum", IBV_DEVICE_UD_IP_CSUM },
		{ "xrc", IBV_DEVICE_XRC },
		{ "mem_mgt_extensions", IBV_DEVICE_MEM_MGT_EXTENSIONS },
		{ "mem_window_type_2a", IBV_DEVICE_MEM_WINDOW_TYPE_2A },
		{ "mem_window_type_2b", IBV_DEVICE_MEM_WINDOW_TYPE_2B },
		{ "rc_ip_csum", IBV_DEVICE_RC_IP_CSUM },
		{ "raw_ip_csum", IBV_DEVICE_RAW_IP_CSUM },
		{ "managed_flow_steering", IBV_DEVICE_MANAGED_FLOW_STEERING },
	};
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		snprintf(text, sizeof(text), "device d\n\tattr device_cap_flags 0\n\tcap %s\n",
			 caps[i].name);
		parse_ok(text);
		assert_int_equal(g_s.dev[0].attr.device_cap_flags, caps[i].flag);
		snprintf(text, sizeof(text), "device d\n\tattr device_cap_flags 0xffffffff\n"
			 "\tnocap %s\n", caps[i].name);
		parse_ok(text);
		assert_int_equal(g_s.dev[0].attr.device_cap_flags, ~caps[i].flag);
	}
}

TR_TEST(faults_are_recorded_with_default_or_named_errno)
{
	parse_ok("device d\n"
		 "fault create_qp nth 3\n"
		 "fault modify_qp from 2 errno EBUSY\n"
		 "fault destroy_qp nth 0x10 errno 71\n"
		 "fault reg_mr from 1 errno ETIMEDOUT\n");
	assert_int_equal(g_s.nfaults, 4);
	assert_int_equal(g_s.fault[0].op, FP_OP_CREATE_QP);
	assert_int_equal(g_s.fault[0].nth, 3);
	assert_false(g_s.fault[0].from);
	assert_int_equal(g_s.fault[0].err, ENOMEM);
	assert_int_equal(g_s.fault[0].calls, 0);
	assert_int_equal(g_s.fault[1].op, FP_OP_MODIFY_QP);
	assert_true(g_s.fault[1].from);
	assert_int_equal(g_s.fault[1].nth, 2);
	assert_int_equal(g_s.fault[1].err, EBUSY);
	assert_int_equal(g_s.fault[2].nth, 16);
	assert_int_equal(g_s.fault[2].err, 71);
	assert_int_equal(g_s.fault[3].err, ETIMEDOUT);
}

TR_TEST(every_errno_name_is_known)
{
	static const struct { const char *name; int v; } e[] = {
		{ "ENOMEM", ENOMEM }, { "EINVAL", EINVAL }, { "EAGAIN", EAGAIN },
		{ "EBUSY", EBUSY }, { "EOPNOTSUPP", EOPNOTSUPP }, { "ENOSYS", ENOSYS },
		{ "EPERM", EPERM }, { "EFAULT", EFAULT }, { "ENODEV", ENODEV },
		{ "EIO", EIO }, { "ETIMEDOUT", ETIMEDOUT }, { "EEXIST", EEXIST },
		{ "ENOENT", ENOENT }, { "EACCES", EACCES }, { "ENOSPC", ENOSPC },
		{ "ERANGE", ERANGE }, { "EPROTO", EPROTO }, { "ENOTCONN", ENOTCONN },
	};
	char text[128];
	size_t i;

	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		snprintf(text, sizeof(text), "device d\nfault poll_cq nth 1 errno %s\n", e[i].name);
		parse_ok(text);
		assert_int_equal(g_s.fault[0].err, e[i].v);
	}
}

TR_TEST(every_op_and_quirk_name_is_accepted)
{
	char text[256];
	int i;

	for (i = 0; i < FP_OP__COUNT; i++) {
		snprintf(text, sizeof(text), "device d\nfault %s nth 1\n", fp_op_name(i));
		parse_ok(text);
		assert_int_equal(g_s.fault[0].op, i);
		assert_int_equal(g_s.fault[0].err, fp_op_default_errno(i));
	}
	for (i = 0; i < FP_Q__COUNT; i++) {
		snprintf(text, sizeof(text), "device d\nquirk %s\n", fp_quirk_name(i));
		parse_ok(text);
		assert_true(g_s.quirk[i]);
		assert_int_equal(memchr(g_s.quirk, 1, FP_Q__COUNT) - (void *)g_s.quirk, i);
	}
}

TR_TEST(every_withdraw_name_is_accepted)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "cq_ex", FP_X_CQ_EX }, { "mw", FP_X_MW },
		{ "parent_domain", FP_X_PARENT_DOMAIN }, { "qp_ex", FP_X_QP_EX },
		{ "query_device_ex", FP_X_QUERY_DEVICE_EX },
		{ "query_rt_values", FP_X_QUERY_RT_VALUES }, { "rereg_mr", FP_X_REREG_MR },
	};
	char text[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(text, sizeof(text), "withdraw %s\ndevice d\n", names[i].name);
		parse_ok(text);
		assert_int_equal(g_s.withdrawn, names[i].bit);
	}
	parse_ok("withdraw qp_ex\nwithdraw cq_ex\ndevice d\n");
	assert_int_equal(g_s.withdrawn, FP_X_QP_EX | FP_X_CQ_EX);
}

TR_TEST(every_event_type_is_accepted)
{
	static const struct { const char *name; enum ibv_event_type t; const char *op; bool port; } ev[] = {
		{ "cq_err", IBV_EVENT_CQ_ERR, "poll_cq", false },
		{ "qp_fatal", IBV_EVENT_QP_FATAL, "modify_qp", false },
		{ "qp_req_err", IBV_EVENT_QP_REQ_ERR, "post_send", false },
		{ "qp_access_err", IBV_EVENT_QP_ACCESS_ERR, "post_recv", false },
		{ "comm_est", IBV_EVENT_COMM_EST, "create_qp", false },
		{ "sq_drained", IBV_EVENT_SQ_DRAINED, "create_qp_ex", false },
		{ "path_mig", IBV_EVENT_PATH_MIG, "query_qp", false },
		{ "path_mig_err", IBV_EVENT_PATH_MIG_ERR, "open_qp", false },
		{ "device_fatal", IBV_EVENT_DEVICE_FATAL, "alloc_pd", false },
		{ "port_active", IBV_EVENT_PORT_ACTIVE, "query_port", true },
		{ "port_err", IBV_EVENT_PORT_ERR, "poll_cq", true },
		{ "lid_change", IBV_EVENT_LID_CHANGE, "open_device", true },
		{ "pkey_change", IBV_EVENT_PKEY_CHANGE, "query_pkey", true },
		{ "sm_change", IBV_EVENT_SM_CHANGE, "reg_mr", true },
		{ "srq_err", IBV_EVENT_SRQ_ERR, "create_srq", false },
		{ "srq_limit_reached", IBV_EVENT_SRQ_LIMIT_REACHED, "post_srq_recv", false },
		{ "qp_last_wqe_reached", IBV_EVENT_QP_LAST_WQE_REACHED, "modify_qp", false },
		{ "client_reregister", IBV_EVENT_CLIENT_REREGISTER, "query_gid", true },
		{ "gid_change", IBV_EVENT_GID_CHANGE, "query_device", true },
	};
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		snprintf(text, sizeof(text), "device d\nevent %s after %s 7\n", ev[i].name, ev[i].op);
		parse_ok(text);
		assert_int_equal(g_s.nevents, 1);
		assert_int_equal(g_s.event[0].type, ev[i].t);
		assert_int_equal(g_s.event[0].op, fp_op_from_name(ev[i].op));
		assert_int_equal(g_s.event[0].nth, 7);
		assert_int_equal(g_s.event[0].port, ev[i].port ? 1 : 0);
		assert_false(g_s.event[0].fired);
	}
	parse_ok("device d\n\tport 1\n\tport 2\nevent port_err after query_port 2 port 2\n");
	assert_int_equal(g_s.event[0].port, 2);
}

TR_TEST(trace_is_relative_to_the_script_dir)
{
	char dir[] = "/tmp/t5001-XXXXXX", path[256], want[256];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.fps", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("trace calls.log\ndevice d\n", f);
	fclose(f);
	if (fp_script_load(path, &g_s, g_err, sizeof(g_err)))
		fail_msg("%s", g_err);
	unlink(path);
	rmdir(dir);
	snprintf(want, sizeof(want), "%s/calls.log", dir);
	assert_string_equal(g_s.trace_path, want);
	assert_string_equal(g_s.path, path);
	parse_ok("trace /var/tmp/x.log\ndevice d\n");
	assert_string_equal(g_s.trace_path, "/var/tmp/x.log");
	parse_ok("trace -\ndevice d\n");
	assert_string_equal(g_s.trace_path, "-");
	assert_int_equal(fp_script_parse("sub/dir/t.fps", "trace x\ndevice d\n", &g_s, g_err,
					 sizeof(g_err)), 0);
	assert_string_equal(g_s.trace_path, "sub/dir/x");
}

TR_TEST(limits_are_reachable)
{
	char *text = calloc(1, 8192), *p = text;
	int i;

	assert_non_null(text);
	for (i = 0; i < FP_MAX_DEVS; i++)
		p += sprintf(p, "device d%d\n", i);
	for (i = 0; i < FP_MAX_FAULTS; i++)
		p += sprintf(p, "fault poll_cq nth %d\n", i + 1);
	for (i = 0; i < FP_MAX_EVENTS; i++)
		p += sprintf(p, "event cq_err after poll_cq %d\n", i + 1);
	parse_ok(text);
	assert_int_equal(g_s.ndevs, FP_MAX_DEVS);
	assert_int_equal(g_s.nfaults, FP_MAX_FAULTS);
	assert_int_equal(g_s.nevents, FP_MAX_EVENTS);
	free(text);
}

int main(int argc, char **argv)
{
	size_t i;
	int ret;

	/* the rows' texts too long to write out, made once before the tests fork */
	build_dynamic();
	ret = tr_main(argc, argv);
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		free(bad_dyn[i]);
	return ret;
}
