#!/bin/sh
# SPDX-License-Identifier: MIT
# t0202: the gate over libibverbs' own history, from the committed tables in
# fixtures/abi/ (no fetching): consecutive releases that only added things
# report extensions only (1.1.6 -> 1.1.7 -> 1.1.8, rdma-core 44 -> 56 -> current,
# in the headers: 44 -> 56 with the symbols is t0205),
# 1.1.8 adds qp_type.xrc.remote_srqn at 72 and ibv_send_wr grows
# 72 -> 80 -> 128, rdma-core's renamed ibv_context_ops slots (_compat_*)
# and has_comp_mask placeholder are source changes, not breaks, the XRC
# ops never move relative to `context`, and union ibv_gid is in every
# release (WR-01 WR-06 ABI-06 COMPAT-01 COMPAT-05 ABI-07).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
gate=$src/tools/abi/abi-gate
table=$src/tools/abi/abi-table
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp

# hist OLD NEW: the gate with OLD as baseline and NEW's table; $tmp/OLD-NEW, $rc.
hist() {
	out=$tmp/$1-$2
	sh "$gate" --baseline "$1" --table "$2" >"$out" 2>"$out.err"
	rc=$?
}

# Every table carries its provenance.
bad=""
for t in libibverbs-1.1.6 libibverbs-1.1.7 libibverbs-1.1.8 rdma-core-13 rdma-core-44 rdma-core-56 \
	rdma-core-64; do
	f=$src/fixtures/abi/$t.table
	if ! grep -q "^# name: $t\$" "$f" 2>/dev/null || ! grep -q '^# source: .*\(commit [0-9a-f]\{40\}\|libibverbs-dev\)' "$f" ||
	   ! grep -q '^# compiler: ' "$f"; then
		bad="$bad $t"
	fi
done
test_expect_success "the seven tables exist with name, source commit or package, and compiler lines" '
	echo "bad:$bad"
	[ -z "$bad" ]
'

for pair in "libibverbs-1.1.6 libibverbs-1.1.7" "rdma-core-44 rdma-core-56" "rdma-core-56 rdma-core-64" \
	"rdma-core-44 rdma-core-64"; do
	# shellcheck disable=SC2086 # two words on purpose
	set -- $pair
	hist "$1" "$2"
	test_expect_success "$1 -> $2: extensions only (status 4)" '
		echo "status $rc"
		cat "$out" "$out.err"
		[ "$rc" -eq 4 ] && ! grep -q "^BREAK" "$out"
	'
done

hist libibverbs-1.1.7 libibverbs-1.1.8
test_expect_success "libibverbs-1.1.7 -> 1.1.8 (XRC): extensions only (status 4) [ABI-06]" '
	echo "status $rc"
	cat "$out" "$out.err"
	[ "$rc" -eq 4 ] && ! grep -q "^BREAK\|^SOURCE" "$out"
'
test_expect_success "1.1.8 adds remote_srqn at 72, send_wr 72 -> 80, the XRC enums and verbs_context [WR-01 WR-06 ABI-01]" '
	bad=0
	for l in "EXTEND ibv_send_wr.qp_type.xrc.remote_srqn added at offset 72 (size 4)" \
		 "EXTEND struct ibv_send_wr size 72 -> 80" \
		 "EXTEND enum IBV_QPT_XRC_SEND added = 9" "EXTEND enum IBV_QPT_XRC_RECV added = 10" \
		 "EXTEND enum IBV_DEVICE_XRC added = 1048576" "EXTEND enum IBV_SRQT_XRC added = 1" \
		 "EXTEND struct verbs_context added (size 424)"; do
		grep -qxF "$l" "$out" || { echo "missing: $l"; bad=1; }
	done
	[ "$bad" = 0 ]
'

# 1.1.8 -> v13: send_wr grows to 128 (bind_mw/tso); 1.2.1's ibv_mw_bind
# rework is the one real layout break of that range.
hist libibverbs-1.1.8 rdma-core-13
test_expect_success "libibverbs-1.1.8 -> rdma-core 13: send_wr 80 -> 128, breaks only in ibv_mw_bind (1.2.1) [WR-06]" '
	grep -v "^EXTEND" "$out"
	grep -qxF "EXTEND struct ibv_send_wr size 80 -> 128" "$out" &&
		[ "$(grep "^BREAK" "$out" | grep -vc "^BREAK ibv_mw_bind\.")" -eq 0 ] &&
		grep -qxF "BREAK ibv_mw_bind.send_flags offset 32 -> 8" "$out"
'

# rdma-core 44 against 1.1.8: every ibv_context_ops slot is kept or renamed
# in place (source change), none moved or removed.
hist libibverbs-1.1.8 rdma-core-44
nren=$(grep -c '^SOURCE ibv_context_ops\.[a-z_]* renamed in place to ibv_context_ops\._compat_' "$out")
test_expect_success "rdma-core 44 vs 1.1.8: $nren ibv_context_ops slots renamed in place, reported as SOURCE, no break in ibv_context_ops [COMPAT-07]" '
	grep "ibv_context_ops" "$out"
	[ "$nren" -ge 20 ] && ! grep -q "^BREAK ibv_context_ops\." "$out" &&
		grep -qxF "SOURCE ibv_context_ops.query_device renamed in place to ibv_context_ops._compat_query_device (offset 0 size 8)" "$out"
'
test_expect_success "has_comp_mask -> _ABI_placeholder3 is a source change; no verbs_context break since 1.1.8 [COMPAT-05 ABI-07]" '
	grep "verbs_context" "$out" | grep -v "^EXTEND"
	grep -qxF "SOURCE verbs_context.has_comp_mask renamed in place to verbs_context._ABI_placeholder3 (from_context -16 size 8)" "$out" &&
		! grep -q "^BREAK verbs_context\." "$out"
'

# The XRC ops' distance from context is the same in every release that has
# them (the table reader, as the suites use it).
want="-64 -56 -48 -40 -32 -24 -8"
test_expect_success "open_qp..close_xrcd, sz at $want from context in 1.1.8, 13, 44, 56, 64 [COMPAT-01]" '
	bad=""
	for t in libibverbs-1.1.8 rdma-core-13 rdma-core-44 rdma-core-56 rdma-core-64; do
		got=""
		for m in open_qp create_qp_ex get_srq_num create_srq_ex open_xrcd close_xrcd sz; do
			got="$got $(sh "$table" get "$t" vctx "verbs_context.$m")"
		done
		[ "${got# }" = "$want" ] || bad="$bad $t:$got"
	done
	echo "got$bad"
	[ -z "$bad" ]
'

# WR-06 sizes and remote_srqn offsets straight from the tables.
got=""
for t in libibverbs-1.1.6 libibverbs-1.1.7 libibverbs-1.1.8 rdma-core-13 rdma-core-44 rdma-core-64; do
	got="$got $(sh "$table" get "$t" struct ibv_send_wr size)/$(
		sh "$table" get "$t" member ibv_send_wr.qp_type.xrc.remote_srqn offset 2>/dev/null || echo -)"
done
test_expect_success "ibv_send_wr size/remote_srqn offset by release:$got [WR-06 ABI-06]" '
	[ "$got" = " 72/- 72/- 80/72 128/72 128/72 128/72" ]
'

# union ibv_gid is in every release (the tables come from the compiler's
# DWARF: a header parser once lost it after 1.1.x's BEGIN_C_DECLS), so the
# history reports its members' retyping, not a union added in rdma-core.
got=""
for t in libibverbs-1.1.6 libibverbs-1.1.7 libibverbs-1.1.8 rdma-core-13 rdma-core-44 rdma-core-64; do
	got="$got $(sh "$table" get "$t" union ibv_gid size)/$(
		sh "$table" get "$t" member ibv_gid.global.interface_id offset)"
done
hist libibverbs-1.1.8 rdma-core-44
test_expect_success "union ibv_gid (16 bytes, interface_id at 8) in every release; 1.1.8 -> 44 retypes its members to __be64 (SOURCE)" '
	echo "got$got, status $rc"
	grep "ibv_gid" "$out"
	[ "$got" = " 16/8 16/8 16/8 16/8 16/8 16/8" ] && [ "$rc" -eq 12 ] &&
		! grep -q " ibv_gid added" "$out" &&
		grep -qxF "SOURCE ibv_gid.global.subnet_prefix type uint64_t -> __be64 (same offset and size)" "$out"
'

test_done
