#!/bin/sh
# SPDX-License-Identifier: MIT
# t0205: the two Debian releases' libibverbs, as their packages ship them
# (fixtures/abi/rdma-core-44.* and rdma-core-56.*, made by
# tools/abi/abi-release from Debian 12's and 13's libibverbs1 and
# libibverbs-dev): the gate finds from 44 to 56 exactly what was measured
# (fixtures/abi/rdma-core-44-to-56.findings: two structs grown at their
# end, new enum values, IBVERBS_PRIVATE_34 grown in place by
# ibv_cmd_create_cq_ex2 and ibv_wr_opcode_str, the changed meaning of
# ibv_query_qp_data_in_order's flags; the public nodes identical), and each
# class of it can fail: a grown node becomes an extension when its symbols
# move to a new node, a meaning goes with the enum types that carry it or
# with the function's version. abi-release's own parts run offline: the
# mirror from apt sources of either format (none: an error, and no host
# name of its own), and a table and a symbol list of a release unpacked
# where fetch puts it, made from this machine's installed package, equal
# to the committed ones of its release.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
gate=$src/tools/abi/abi-gate
rel=$src/tools/abi/abi-release
fx=$src/fixtures/abi
. "$src/testkit/sh/test-lib.sh"
for t in readelf objdump; do
	command -v "$t" >/dev/null 2>&1 || skip_all "$t not installed (binutils, ci/install-deps build)"
done
tmp=$tl_tmp

# pair NAME ARGS...: the gate 44 -> (ARGS); output in $tmp/NAME, status $rc
pair() {
	n=$1
	shift
	sh "$gate" --baseline rdma-core-44 "$@" >"$tmp/$n" 2>"$tmp/$n.err"
	rc=$?
}

bad=""
for f in rdma-core-44.symbols rdma-core-56.table rdma-core-56.symbols; do
	grep -q '^# source: .*libibverbs1 [0-9][0-9.]*-[0-9]' "$fx/$f" || bad="$bad $f"
done
grep -q '^# source: .*libibverbs-dev 56.1-1 (sha256 [0-9a-f]\{64\})' "$fx/rdma-core-56.table" ||
	bad="$bad rdma-core-56.table(sha256)"
test_expect_success "both releases' tables and symbol lists name the packages they come from" '
	echo "without provenance:$bad"
	[ -z "$bad" ]
'

pair real --table rdma-core-56 --symbols "$fx/rdma-core-56.symbols"
grep -v '^#' "$fx/rdma-core-44-to-56.findings" >"$tmp/want"
grep -v '^abi-gate:' "$tmp/real" >"$tmp/got"
test_expect_success "rdma-core 44 -> 56: exactly the measured findings, status 52 (change, grown node, changed meaning)" '
	echo "status $rc"
	diff "$tmp/want" "$tmp/got" && [ "$rc" -eq 52 ] &&
		grep -q " 0 break, 2 grown node, 1 changed meaning, 0 source change, 17 extension" "$tmp/real"
'
test_expect_success "the public nodes IBVERBS_1.0 .. 1.14 are the same in both: no finding names one" '
	! grep "IBVERBS_1\.[0-9]*[^0-9]" "$tmp/got" | grep -v "^MEANING ibv_query_qp_data_in_order@IBVERBS_1.14:"
'
test_expect_success "IBVERBS_PRIVATE_34: 71 symbols in 44, 73 in 56, the two named as GROWN" '
	n44=$(grep -c "^symbol .*@@IBVERBS_PRIVATE_34$" "$fx/rdma-core-44.symbols")
	n56=$(grep -c "^symbol .*@@IBVERBS_PRIVATE_34$" "$fx/rdma-core-56.symbols")
	echo "$n44 -> $n56"
	[ "$n44" = 71 ] && [ "$n56" = 73 ] &&
		[ "$(grep -c "^GROWN symbol [a-z_0-9]*@IBVERBS_PRIVATE_34 added to the baseline.s node IBVERBS_PRIVATE_34 (provider ABI" "$tmp/got")" = 2 ]
'

# the same symbols in a node of their own: extensions, no grown node
sed 's/^symbol \(ibv_cmd_create_cq_ex2\|ibv_wr_opcode_str\)@@IBVERBS_PRIVATE_34$/symbol \1@@IBVERBS_PRIVATE_35/' \
	"$fx/rdma-core-56.symbols" >"$tmp/newnode.symbols"
echo "version IBVERBS_PRIVATE_35" >>"$tmp/newnode.symbols"
pair newnode --table rdma-core-56 --symbols "$tmp/newnode.symbols"
test_expect_success "moved to a new node IBVERBS_PRIVATE_35: EXTEND version and symbols, no GROWN (status 36)" '
	echo "status $rc"; grep -v "^EXTEND enum" "$tmp/newnode"
	[ "$rc" -eq 36 ] && ! grep -q "^GROWN" "$tmp/newnode" &&
		grep -qx "EXTEND symbol ibv_wr_opcode_str@IBVERBS_PRIVATE_35 added" "$tmp/newnode" &&
		grep -qx "EXTEND version IBVERBS_PRIVATE_35 added" "$tmp/newnode"
'

# without the enum types that name the values: no changed meaning
grep -v '^enumtype ibv_query_qp_data_in_order_' "$fx/rdma-core-56.table" >"$tmp/notypes.table"
pair notypes --table "$tmp/notypes.table" --symbols "$fx/rdma-core-56.symbols"
test_expect_success "without enum ibv_query_qp_data_in_order_flags/_caps: no MEANING (status 20)" '
	echo "status $rc"; [ "$rc" -eq 20 ] && ! grep -q "^MEANING" "$tmp/notypes"
'
# the function under another version: a removed symbol, no changed meaning
sed 's/^symbol ibv_query_qp_data_in_order@@IBVERBS_1.14$/symbol ibv_query_qp_data_in_order@@IBVERBS_1.15/' \
	"$fx/rdma-core-56.symbols" >"$tmp/moved.symbols"
pair movedfn --table rdma-core-56 --symbols "$tmp/moved.symbols"
test_expect_success "ibv_query_qp_data_in_order moved to IBVERBS_1.15: a BREAK, no MEANING" '
	echo "status $rc"; grep -v "^EXTEND" "$tmp/movedfn"
	[ $((rc & 8)) -eq 8 ] && ! grep -q "^MEANING" "$tmp/movedfn" &&
		grep -qx "BREAK symbol ibv_query_qp_data_in_order@IBVERBS_1.14 removed" "$tmp/movedfn"
'
# headers alone: the meaning needs the symbols too
pair headers --table rdma-core-56
test_expect_success "headers alone: the 17 extensions, no MEANING (it needs both libraries' symbols)" '
	echo "status $rc"; [ "$rc" -eq 4 ] && ! grep -q "^MEANING\|^GROWN" "$tmp/headers"
'

# ---- abi-release, offline ---------------------------------------------------------
mkdir -p "$tmp/apt1/sources.list.d" "$tmp/apt2/sources.list.d" "$tmp/apt3/sources.list.d"
printf '# a comment\ndeb http://mirror.example/debian-security bookworm-security main\n' \
	>"$tmp/apt1/sources.list"
printf 'deb [arch=amd64] http://mirror.example/debian bookworm main\n' \
	>"$tmp/apt1/sources.list.d/a.list"
printf 'Types: deb\nURIs: https://mirror.example/other/\nSuites: trixie\nComponents: main\n' \
	>"$tmp/apt2/sources.list.d/d.sources"
printf 'deb file:/srv/local bookworm main\n' >"$tmp/apt3/sources.list"
m1=$(IBVCT_APT_ETC=$tmp/apt1 sh "$rel" mirror 2>&1)
m2=$(IBVCT_APT_ETC=$tmp/apt2 sh "$rel" mirror 2>&1)
m3=$(IBVCT_APT_ETC=$tmp/apt3 sh "$rel" mirror 2>&1)
r3=$?
test_expect_success "the mirror: a deb line past a security archive, a deb822 URIs line; none is an error" '
	echo "[$m1] [$m2] [$m3] $r3"
	[ "$m1" = "http://mirror.example/debian" ] && [ "$m2" = "https://mirror.example/other" ] &&
		[ "$r3" -ne 0 ] && echo "$m3" | grep -q "no Debian archive"
'
test_expect_success "abi-release writes no host name of its own" '
	! grep -n "https\{0,1\}://[a-z]" "$rel"
'

sysver=$(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
syslib=$(ls /usr/lib/*/libibverbs.so.1.14.* 2>/dev/null | sed -n 1p)
if [ -n "$sysver" ] && [ -r "$fx/rdma-core-$sysver.table" ] && [ -n "$syslib" ] &&
   [ -r /usr/include/infiniband/verbs.h ]; then
	# this machine's installed package, laid out as fetch unpacks one
	d=$tmp/fetched
	mkdir -p "$d/root/usr/include" "$d/root${syslib%/*}"
	cp -r /usr/include/infiniband "$d/root/usr/include/"
	cp "$syslib" "$d/root${syslib%/*}/"
	{ echo "package libibverbs1 $sysver test-copy"; echo "package libibverbs-dev $sysver test-copy"
	  echo "suite installed"; echo "mirror none"; echo "lib $syslib"; } >"$d/info"
	sh "$rel" table "rdma-core-$sysver" "$d" >"$tmp/made.table" 2>"$tmp/made.err"
	sh "$rel" symbols "rdma-core-$sysver" "$d" >"$tmp/made.symbols" 2>>"$tmp/made.err"
	test_expect_success "abi-release table and symbols of the installed rdma-core $sysver equal fixtures/abi/rdma-core-$sysver.*" '
		cat "$tmp/made.err"
		grep -q "^# name: rdma-core-$sysver\$" "$tmp/made.table" &&
		grep -q "^# source: Debian installed libibverbs1 $sysver (sha256 test-copy)" "$tmp/made.symbols" &&
		grep -v "^#" "$fx/rdma-core-$sysver.table" >"$tmp/t.want" &&
		grep -v "^#" "$tmp/made.table" | diff "$tmp/t.want" - &&
		grep -v "^#" "$fx/rdma-core-$sysver.symbols" >"$tmp/s.want" &&
		grep -v "^#" "$tmp/made.symbols" | diff "$tmp/s.want" -
	'
else
	test_skip "abi-release table and symbols of the installed rdma-core" \
		"no committed baseline for the installed libibverbs (pkg-config: ${sysver:-none})"
fi

test_done
