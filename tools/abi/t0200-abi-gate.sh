#!/bin/sh
# SPDX-License-Identifier: MIT
# t0200: the ABI gate (tools/abi/abi-gate) passes where it must: ref-impl's headers
# and library against the baselines of both Debian releases (rdma-core 44
# and 56, with the project's waivers), the installed system headers and
# library against their own release's baseline (no change at all), the
# table reader answers what the suites ask, and a check that could not run
# sets the error bit (1) and gives no verdict (ABI-01 ABI-06 ABI-07
# COMPAT-01). The status bits themselves and waivers: t0203.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
libdir=${IBVCT_LIBDIR:-${IBVCT_BUILD:-$src/build}/lib}
gate=$src/tools/abi/abi-gate
table=$src/tools/abi/abi-table
sys_lib=/usr/lib/x86_64-linux-gnu/libibverbs.so.1

. "$src/testkit/sh/test-lib.sh"

# The gate's tools (make check installs them: ci/install-deps build abi).
for t in readelf:binutils:build objdump:binutils:build abidiff:abigail-tools:abi; do
	command -v "${t%%:*}" >/dev/null 2>&1 && continue
	g=${t##*:}; p=${t#*:}; p=${p%:*}
	skip_all "${t%%:*} not installed ($p, ci/install-deps $g)"
done
tmp=$tl_tmp

# gate NAME ARGS...: runs the gate, output in $tmp/NAME, status in $rc.
gate() {
	name=$1
	shift
	sh "$gate" "$@" >"$tmp/$name" 2>"$tmp/$name.err"
	rc=$?
}
# show NAME: the gate's output, for a failed check
show() { echo "status $rc"; cat "$tmp/$1" "$tmp/$1.err"; }

for b in rdma-core-56 rdma-core-44; do
	gate ref --baseline $b --include "$src/ref-impl/include" --lib "$libdir/libibverbs.so.1" \
		--waivers "$src/fixtures/abi/waivers.txt"
	test_expect_success "ref-impl headers+library vs $b: no break, no grown node, no error, status $rc (headers, symbols, abidiff all run) [ABI-01 ABI-07 COMPAT-01]" '
		[ $((rc & 27)) -eq 0 ] && ! grep -q "^BREAK \|^GROWN " "$tmp/ref" &&
			grep -q "headers(.*symbols(.*abidiff(ref-impl.abi)" "$tmp/ref" || { show ref; false; }
	'
done

# ibvct's own version node is an extension, reported as such
test_expect_success "ref-impl's IBVCT_PRIVATE_1 node is reported as an extension" '
	grep -qx "EXTEND version IBVCT_PRIVATE_1 added" "$tmp/ref" || { show ref; false; }
'

# the installed rdma-core's own baseline (pkg-config 1.14.56.1: rdma-core-56)
sysbase=rdma-core-$(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
sysok=0
[ -r "$src/fixtures/abi/$sysbase.table" ] && [ -r "$src/fixtures/abi/$sysbase.symbols" ] && sysok=1
if [ "$sysok" = 0 ]; then
	test_skip "installed system headers and library vs their release's baseline" \
		"no baseline $sysbase in fixtures/abi for the installed libibverbs-dev"
elif [ -r /usr/include/infiniband/verbs.h ]; then
	gate sys --baseline $sysbase --include /usr/include
	test_expect_success "installed system headers vs $sysbase: no change (status 0)" '
		[ "$rc" -eq 0 ] && grep -q "=> no change (status 0)\$" "$tmp/sys" || { show sys; false; }
	'
else
	test_skip "installed system headers vs rdma-core 44" "libibverbs-dev not installed"
fi

if [ "$sysok" = 0 ]; then
	:
elif [ -r "$sys_lib" ]; then
	gate syslib --baseline $sysbase --lib "$sys_lib"
	test_expect_success "installed libibverbs.so.1 vs $sysbase symbols: no change, abidiff skipped with a reason" '
		[ "$rc" -eq 0 ] && grep -q "^SKIP abidiff" "$tmp/syslib" || { show syslib; false; }
	'
else
	test_skip "installed libibverbs.so.1 vs $sysbase" "$sys_lib not installed"
fi

# the tables answer what the suites ask (WR-01, COMPAT-01 values)
test_expect_success "tools/abi/abi-table get: remote_srqn@72, send_wr 128, open_xrcd -32 from context, XRC_SEND 9 [WR-01 COMPAT-01 ABI-01]" '
	got=$(sh "$table" get rdma-core-44 member ibv_send_wr.qp_type.xrc.remote_srqn offset)/$(
		sh "$table" get rdma-core-44 struct ibv_send_wr size)/$(
		sh "$table" get rdma-core-44 vctx verbs_context.open_xrcd)/$(
		sh "$table" get rdma-core-44 enum IBV_QPT_XRC_SEND)/$(
		sh "$table" get rdma-core-44 member ibv_send_wr.qp_type.xrc.remote_srqn type)
	echo "got $got"
	[ "$got" = "72/128/-32/9/uint32_t" ]
'
test_expect_success "tools/abi/abi-table get: an absent fact exits non-zero" '
	! sh "$table" get rdma-core-44 member ibv_send_wr.no_such_member offset
'

# a table made now from the system headers equals the committed one
if [ "$sysok" = 1 ] && [ -r /usr/include/infiniband/verbs.h ]; then
	test_expect_success "tools/abi/abi-table make /usr/include reproduces fixtures/abi/$sysbase.table" '
		sh "$table" make /usr/include >"$tmp/now.table" || exit 1
		grep -v "^#" "$tmp/now.table" >"$tmp/now.facts"
		grep -v "^#" "$src/fixtures/abi/$sysbase.table" >"$tmp/base.facts"
		diff "$tmp/base.facts" "$tmp/now.facts"
	'
else
	test_skip "tools/abi/abi-table make reproduces the installed release's table" \
		"libibverbs-dev not installed, or no baseline $sysbase"
fi

# could not check: the error bit alone, an ERROR line saying why, no verdict
gate nobase --baseline no-such-baseline --include "$src/ref-impl/include"
rc1=$rc
gate noinc --baseline rdma-core-44 --include "$tmp/empty-dir"
rc2=$rc
gate nolib --baseline rdma-core-44 --lib "$tmp/no-such-lib.so"
test_expect_success "missing baseline, header dir or library: status 1 (error), the reason, could not check" '
	echo "got $rc1 $rc2 $rc"
	cat "$tmp/nobase" "$tmp/noinc" "$tmp/nolib"
	[ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] && [ "$rc" -eq 1 ] &&
		grep -q "^ERROR headers: no baseline table " "$tmp/nobase" &&
		grep -q "^ERROR headers: cannot make a table of " "$tmp/noinc" &&
		grep -q "^ERROR symbols: cannot read library " "$tmp/nolib" &&
		[ "$(grep -c "nothing checked: 0 break, 0 grown node, 0 changed meaning, 0 source change, 0 extension => could not check (status 1)\$" \
			"$tmp/nobase" "$tmp/noinc" "$tmp/nolib" | grep -c ":1\$")" -eq 3 ]
'

test_done
