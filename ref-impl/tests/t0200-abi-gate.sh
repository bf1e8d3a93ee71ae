#!/bin/sh
# SPDX-License-Identifier: MIT
# t0200: the ABI gate (ci/abi-gate) passes where it must: ref-impl's headers
# and library against the rdma-core 44 baseline, the installed system
# headers and library against the same baseline (no change at all), the
# table reader answers what the suites ask, and a check that could not run
# sets the error bit (1) and gives no verdict (ABI-01 ABI-06 ABI-07
# COMPAT-01). The status bits themselves and waivers: t0203.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
libdir=${IBVCT_LIBDIR:-${IBVCT_BUILD:-$src/build}/lib}
gate=$src/ci/abi-gate
table=$src/ci/abi-table
sys_lib=/usr/lib/x86_64-linux-gnu/libibverbs.so.1

# The gate's tools (make check installs them: ci/install-deps build abi).
for t in readelf:binutils:build objdump:binutils:build abidiff:abigail-tools:abi; do
	command -v "${t%%:*}" >/dev/null 2>&1 && continue
	g=${t##*:}; p=${t#*:}; p=${p%:*}
	echo "1..0 # SKIP ${t%%:*} not installed ($p, ci/install-deps $g)"
	exit 0
done

n=0
failures=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /' | head -n 40; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t0200.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..8"

# gate NAME ARGS...: runs the gate, output in $tmp/NAME, status in $rc.
gate() {
	name=$1
	shift
	sh "$gate" "$@" >"$tmp/$name" 2>"$tmp/$name.err"
	rc=$?
}

gate ref --baseline rdma-core-44 --include "$src/ref-impl/include" --lib "$libdir/libibverbs.so.1"
if { [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; } && ! grep -q '^BREAK ' "$tmp/ref" &&
   grep -q 'headers(.*symbols(.*abidiff(ref-impl.abi)' "$tmp/ref"; then
	ok "ref-impl headers+library vs rdma-core 44: no break, no error, status $rc (headers, symbols, abidiff all run) [ABI-01 ABI-07 COMPAT-01]"
else
	not_ok "ref-impl headers+library vs rdma-core 44: no break, no error (status $rc)"
	cat "$tmp/ref" "$tmp/ref.err" | diag
fi

# ibvct's own version node is an extension, reported as such
if grep -qx 'EXTEND version IBVCT_PRIVATE_1 added' "$tmp/ref"; then
	ok "ref-impl's IBVCT_PRIVATE_1 node is reported as an extension"
else
	not_ok "ref-impl's IBVCT_PRIVATE_1 node is reported as an extension"
	diag <"$tmp/ref"
fi

if [ -r /usr/include/infiniband/verbs.h ]; then
	gate sys --baseline rdma-core-44 --include /usr/include
	if [ "$rc" -eq 0 ] && grep -q '=> no change (status 0)$' "$tmp/sys"; then
		ok "installed system headers vs rdma-core 44: no change (status 0)"
	else
		not_ok "installed system headers vs rdma-core 44: no change (status $rc)"
		cat "$tmp/sys" "$tmp/sys.err" | diag
	fi
else
	ok "installed system headers vs rdma-core 44 # SKIP libibverbs-dev not installed"
fi

if [ -r "$sys_lib" ]; then
	gate syslib --baseline rdma-core-44 --lib "$sys_lib"
	if [ "$rc" -eq 0 ] && grep -q '^SKIP abidiff' "$tmp/syslib"; then
		ok "installed libibverbs.so.1 vs rdma-core 44 symbols: no change, abidiff skipped with a reason"
	else
		not_ok "installed libibverbs.so.1 vs rdma-core 44 symbols: no change (status $rc)"
		cat "$tmp/syslib" "$tmp/syslib.err" | diag
	fi
else
	ok "installed libibverbs.so.1 vs rdma-core 44 # SKIP $sys_lib not installed"
fi

# the tables answer what the suites ask (WR-01, COMPAT-01 values)
got=$(sh "$table" get rdma-core-44 member ibv_send_wr.qp_type.xrc.remote_srqn offset)/$(
	sh "$table" get rdma-core-44 struct ibv_send_wr size)/$(
	sh "$table" get rdma-core-44 vctx verbs_context.open_xrcd)/$(
	sh "$table" get rdma-core-44 enum IBV_QPT_XRC_SEND)/$(
	sh "$table" get rdma-core-44 member ibv_send_wr.qp_type.xrc.remote_srqn type)
if [ "$got" = "72/128/-32/9/uint32_t" ]; then
	ok "ci/abi-table get: remote_srqn@72, send_wr 128, open_xrcd -32 from context, XRC_SEND 9 [WR-01 COMPAT-01 ABI-01]"
else
	not_ok "ci/abi-table get: remote_srqn@72, send_wr 128, open_xrcd -32, XRC_SEND 9 (got $got)"
fi
if ! sh "$table" get rdma-core-44 member ibv_send_wr.no_such_member offset >/dev/null 2>&1; then
	ok "ci/abi-table get: an absent fact exits non-zero"
else
	not_ok "ci/abi-table get: an absent fact exits non-zero"
fi

# a table made now from the system headers equals the committed one
if [ -r /usr/include/infiniband/verbs.h ] &&
   sh "$table" make /usr/include >"$tmp/now.table" 2>"$tmp/now.err"; then
	grep -v '^#' "$tmp/now.table" >"$tmp/now.facts"
	grep -v '^#' "$src/fixtures/abi/rdma-core-44.table" >"$tmp/base.facts"
	if cmp -s "$tmp/base.facts" "$tmp/now.facts"; then
		ok "ci/abi-table make /usr/include reproduces fixtures/abi/rdma-core-44.table"
	else
		not_ok "ci/abi-table make /usr/include reproduces fixtures/abi/rdma-core-44.table"
		diff "$tmp/base.facts" "$tmp/now.facts" | diag
	fi
elif [ -r /usr/include/infiniband/verbs.h ]; then
	not_ok "ci/abi-table make /usr/include reproduces fixtures/abi/rdma-core-44.table"
	diag <"$tmp/now.err"
else
	ok "ci/abi-table make reproduces rdma-core-44.table # SKIP libibverbs-dev not installed"
fi

# could not check: the error bit alone, an ERROR line saying why, no verdict
gate nobase --baseline no-such-baseline --include "$src/ref-impl/include"
rc1=$rc
gate noinc --baseline rdma-core-44 --include "$tmp/empty-dir"
rc2=$rc
gate nolib --baseline rdma-core-44 --lib "$tmp/no-such-lib.so"
if [ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] && [ "$rc" -eq 1 ] &&
   grep -q '^ERROR headers: no baseline table ' "$tmp/nobase" &&
   grep -q '^ERROR headers: cannot make a table of ' "$tmp/noinc" &&
   grep -q '^ERROR symbols: cannot read library ' "$tmp/nolib" &&
   [ "$(grep -c 'nothing checked: 0 break, 0 source change, 0 extension => could not check (status 1)$' \
	"$tmp/nobase" "$tmp/noinc" "$tmp/nolib" | grep -c ':1$')" -eq 3 ]; then
	ok "missing baseline, header dir or library: status 1 (error), the reason, could not check"
else
	not_ok "missing baseline, header dir or library: status 1 (error), the reason, could not check (got $rc1 $rc2 $rc)"
	cat "$tmp/nobase" "$tmp/noinc" "$tmp/nolib" | diag
fi

[ "$failures" -eq 0 ]
