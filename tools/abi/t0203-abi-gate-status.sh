#!/bin/sh
# SPDX-License-Identifier: MIT
# t0203: the ABI gate's status bits and its waivers. The status is bit flags
# as abidiff's: 1 a check could not run, 2 usage error, 4 a finding, 8 a
# BREAK, 16 a GROWN node, 32 a changed MEANING; so a break found while
# another check could not run is 13, and
# each bit is set exactly when its cause is there. A waiver (BASELINE |
# FINDING | REASON) turns its finding into a WAIVED line that sets no bit; a
# waiver that matches nothing is STALE (reported, no bit), one of another
# baseline or of a check that did not run is neither; a malformed waiver
# file is an error that waives nothing. The project's waiver file
# (fixtures/abi/waivers.txt) is well formed and every line is used by make
# abi-check's run. (ABI-01 ABI-07)
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
libdir=${IBVCT_LIBDIR:-${IBVCT_BUILD:-$src/build}/lib}
gate=$src/tools/abi/abi-gate
our_waivers=$src/fixtures/abi/waivers.txt

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

# check WHAT WANT_STATUS NAME PATTERN...: ok when the last run exited with
# WANT_STATUS and every grep -E PATTERN has a line in $tmp/NAME.
check() {
	what=$1 want=$2 name=$3
	shift 3
	miss=""
	for p in "$@"; do
		grep -qE -- "$p" "$tmp/$name" || miss="$miss [$p]"
	done
	test_expect_success "$what: status $want" '
		echo "status $rc${miss:+, missing:$miss}"
		cat "$tmp/$name" "$tmp/$name.err"
		[ "$rc" -eq "$want" ] && [ -z "$miss" ]
	'
}

# ref-impl's include dir with ibv_mr.lkey and rkey swapped (two BREAKs)
mkdir -p "$tmp/mutant"
cp -R "$src/ref-impl/include/." "$tmp/mutant/"
awk '
	/^struct ibv_mr \{/ { in_mr = 1 }
	in_mr && /^\tuint32_t lkey;/ { held = $0; next }
	in_mr && /^\tuint32_t rkey;/ { print; print held; next }
	/^\};/ { in_mr = 0 }
	{ print }' "$src/ref-impl/include/infiniband/verbs.h" >"$tmp/mutant/infiniband/verbs.h"
lkey="BREAK ibv_mr.lkey offset 36 -> 40"
rkey="BREAK ibv_mr.rkey offset 40 -> 36"
base_syms=$src/fixtures/abi/rdma-core-56.symbols
grep -v '^#' "$base_syms" >"$tmp/same.symbols"
{ cat "$tmp/same.symbols"; echo "version IBVCT_TEST_1"; echo "symbol ibvct_test_fn@@IBVCT_TEST_1"; } |
	LC_ALL=C sort >"$tmp/added.symbols"
{ cat "$tmp/same.symbols"; echo "symbol ibvct_test_fn@@IBVERBS_1.14"; } | LC_ALL=C sort >"$tmp/grown.symbols"
{ cat "$tmp/same.symbols"; echo "symbol ibvct_cmd_test@@IBVERBS_PRIVATE_34"; } | LC_ALL=C sort >"$tmp/grownp.symbols"

# ---- usage errors: 2 alone, no check runs ------------------------------------
bad=""
for args in "" "--include $src/ref-impl/include" "--baseline rdma-core-56" \
	"--baseline rdma-core-56 --bogus" "--baseline rdma-core-56 --include" \
	"--baseline rdma-core-56 --include $tmp/mutant --table rdma-core-56" \
	"--baseline rdma-core-56 --table rdma-core-56 --waivers $tmp/no-such-file"; do
	# shellcheck disable=SC2086 # the argument lists split on purpose
	sh "$gate" $args >"$tmp/usage" 2>"$tmp/usage.err"
	r=$?
	if [ "$r" -ne 2 ] || [ -s "$tmp/usage" ] || ! grep -q '^abi-gate: ' "$tmp/usage.err"; then
		bad="$bad [$args]=$r"
	fi
done
test_expect_success "bad arguments, nothing to check, an unreadable waiver file: status 2, a reason on stderr, no report" '
	echo "got:$bad"
	[ -z "$bad" ]
'

# ---- the bits, one cause each --------------------------------------------------
gate same --baseline rdma-core-56 --table rdma-core-56 --symbols "$tmp/same.symbols"
check "no finding, every check run" 0 same 'headers\(.* symbols\(.*=> no change \(status 0\)$'

gate added --baseline rdma-core-56 --symbols "$tmp/added.symbols"
check "an extension only: the change bit" 4 added \
	'^EXTEND symbol ibvct_test_fn@IBVCT_TEST_1 added$' '^EXTEND version IBVCT_TEST_1 added$' \
	'=> compatible changes only \(status 4\)$'

gate grown --baseline rdma-core-56 --symbols "$tmp/grown.symbols"
check "a symbol added to a node the baseline has: change and grown node" 20 grown \
	'^GROWN symbol ibvct_test_fn@IBVERBS_1.14 added to the baseline.s node IBVERBS_1.14 \(a binary ' \
	'=> node grown in place \(status 20\)$'
gate grownp --baseline rdma-core-56 --symbols "$tmp/grownp.symbols"
check "the same in a private node: the provider-ABI class" 20 grownp \
	'^GROWN symbol ibvct_cmd_test@IBVERBS_PRIVATE_34 added to the baseline.s node IBVERBS_PRIVATE_34 \(provider ABI: '

# a function of both libraries whose flags gained values (rdma-core 44 -> 56)
grep -v '^#' "$src/fixtures/abi/rdma-core-44.symbols" >"$tmp/same44.symbols"
gate meaning --baseline rdma-core-44 --table rdma-core-56 --symbols "$tmp/same44.symbols"
check "a changed meaning: change and meaning, no break" 36 meaning \
	'^MEANING ibv_query_qp_data_in_order@IBVERBS_1.14: the same symbol, new values for its argument flags ' \
	' 0 break, 0 grown node, 1 changed meaning, .*=> a changed meaning \(status 36\)$'

gate moved --baseline rdma-core-56 --include "$tmp/mutant" --symbols "$tmp/same.symbols"
check "a break: change and incompatible" 12 moved "^$lkey\$" "^$rkey\$" '=> break \(status 12\)$'

gate brokenpart --baseline rdma-core-56 --include "$tmp/mutant" --lib "$tmp/no-such-lib.so"
check "a break found and the library unchecked: 13" 13 brokenpart "^$lkey\$" \
	'^ERROR symbols: cannot read library ' '=> break, part unchecked \(status 13\)$'

gate extpart --baseline rdma-core-56 --include "$tmp/no-such-dir" --symbols "$tmp/added.symbols"
check "an extension found and the headers unchecked: 5" 5 extpart \
	'^ERROR headers: cannot make a table of ' '=> compatible changes only, part unchecked \(status 5\)$'

gate samepart --baseline rdma-core-56 --table no-such-table --symbols "$tmp/same.symbols"
check "no change in what ran, the rest unchecked: 1" 1 samepart \
	'^ERROR headers: no table no-such-table' '=> no change, part unchecked \(status 1\)$'

# ---- waivers ---------------------------------------------------------------------
w="ibv_mr keys swapped on purpose by this test"
{
	echo "# a comment, then a blank line"
	echo
	echo "rdma-core-56 | $lkey | $w"
	echo "rdma-core-56 | $rkey | $w"
} >"$tmp/both.txt"
gate waived --baseline rdma-core-56 --include "$tmp/mutant" --waivers "$tmp/both.txt"
# ref-impl's own SOURCE findings stay: the change bit, not the incompatible one
check "both breaks waived: WAIVED with the reason, no incompatible bit" 4 waived \
	"^WAIVED $lkey -- $w\$" "^WAIVED $rkey -- $w\$" ' 0 break, .* 2 waived => compatible changes only \(status 4\)$'
test_expect_success "a waived BREAK is not printed as a BREAK" '
	cat "$tmp/waived"
	! grep -q "^BREAK " "$tmp/waived"
'

cat "$our_waivers" "$tmp/both.txt" >"$tmp/all.txt"
gate allwaived --baseline rdma-core-56 --include "$tmp/mutant" --waivers "$tmp/all.txt"
check "every finding waived: no bit at all" 0 allwaived \
	' 0 break, 0 grown node, 0 changed meaning, 0 source change, 0 extension, [0-9]+ waived => no change \(status 0\)$'

{
	echo "rdma-core-56 | $lkey | $w"
	echo "rdma-core-56 | BREAK ibv_mr.lkey offset 36 -> 44 | a finding the gate does not make"
	echo "rdma-core-56 | SOURCE $rkey | the same text under another class"
	echo "libibverbs-1.1.8 | $rkey | another baseline's waiver"
	echo "* | EXTEND abidiff: function int ibvct_nothing() added | abidiff did not run"
	echo "* | EXTEND symbol ibvct_nothing@IBVERBS_1.1 added | the symbol check did not run"
} >"$tmp/one.txt"
gate one --baseline rdma-core-56 --include "$tmp/mutant" --waivers "$tmp/one.txt"
check "one break waived, the other still a break" 12 one "^$rkey\$" "^WAIVED $lkey -- " \
	' 1 break, .* 1 waived => break \(status 12\)$'
# stale: only the two rdma-core-56 waivers that match nothing, by file:line
test_expect_success "a waiver matching nothing is STALE (file:line); another baseline's, or one of a check that did not run, is not" '
	grep -v "^EXTEND\|^SOURCE" "$tmp/one"
	[ "$(grep -c "^STALE " "$tmp/one")" -eq 2 ] &&
	grep -qxF "STALE waiver $tmp/one.txt:2 matches no finding: BREAK ibv_mr.lkey offset 36 -> 44" "$tmp/one" &&
	grep -qxF "STALE waiver $tmp/one.txt:3 matches no finding: SOURCE $rkey" "$tmp/one"
'

printf '%s\n' "* | $lkey | any baseline" >"$tmp/any.txt"
gate any --baseline rdma-core-56 --include "$tmp/mutant" --waivers "$tmp/any.txt"
check "a waiver of baseline * applies to every baseline" 12 any "^WAIVED $lkey -- any baseline\$" "^$rkey\$"

bad=""
for l in "rdma-core-56 | $lkey" "rdma-core-56 | $lkey |  " "rdma-core-56 | ibv_mr.lkey offset 36 -> 40 | no class" \
	"rdma core 44 | $lkey | two words"; do
	printf '%s\n' "$l" >"$tmp/bad.txt"
	gate bad --baseline rdma-core-56 --include "$tmp/mutant" --waivers "$tmp/bad.txt"
	if [ "$rc" -ne 13 ] || ! grep -qxF "$lkey" "$tmp/bad" ||
	   ! grep -q '^ERROR waivers: bad waiver file ' "$tmp/bad" || ! grep -q 'bad.txt:1: ' "$tmp/bad.err"; then
		bad="$bad [$l]=$rc"
	fi
done
test_expect_success "a malformed waiver (no reason, an empty one, no class, a bad baseline): error bit, file:line on stderr, nothing waived" '
	echo "got:$bad"
	[ -z "$bad" ]
'

# ---- the project's waivers ---------------------------------------------------------
# make abi-check's own runs (both Debian releases): every waiver used, no
# stale one, no bit of a break, a grown node or an error
gate ours44 --baseline rdma-core-44 --include "$src/ref-impl/include" --lib "$libdir/libibverbs.so.1" \
	--waivers "$our_waivers"
rc44=$rc
gate ours56 --baseline rdma-core-56 --include "$src/ref-impl/include" --lib "$libdir/libibverbs.so.1" \
	--waivers "$our_waivers"
cat "$tmp/ours44" "$tmp/ours56" >"$tmp/ours"
nwaivers=$(grep -vc '^[[:space:]]*\(#\|$\)' "$our_waivers")
test_expect_success "fixtures/abi/waivers.txt: well formed, each of its $nwaivers waivers used by make abi-check's runs, none stale" '
	grep -v "^EXTEND" "$tmp/ours" | cat - "$tmp/ours44.err" "$tmp/ours56.err"
	[ $((rc44 & 27)) -eq 0 ] && [ $((rc & 27)) -eq 0 ] && ! grep -q "^STALE \|^ERROR " "$tmp/ours" &&
	[ "$(grep -c "^WAIVED " "$tmp/ours")" -eq "$nwaivers" ]
'

test_done
