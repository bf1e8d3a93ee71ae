#!/bin/sh
# SPDX-License-Identifier: MIT
# t5102: every quirk in fp_quirks.def makes a test fail, so that test is
# known to be able to fail (STYLE: "every check can fail"). The table
# quirk-tests.txt names, per quirk, the program and the tests it
# breaks; each row's tests run by name under the quirk, and each must
# report "not ok" (a TODO does not count): a listed test that passes is a
# quirk no test notices any more. A row "past=Q" is a rule that a skip_cmd_*
# quirk Q must first let through (QPX-05): its tests must pass under Q
# alone, so the failure is the quirk's own. Every quirk has exactly one
# row, and every row names a quirk. The rows run JOBS at a time
# (IBVCT_QUIRK_JOBS, default 4); each test has the runner's own limit.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/testkit/sh/test-lib.sh"
def=$src/fake-provider/script/fp_quirks.def
table=$src/fake-provider/tests/quirk-tests.txt
jobs=${IBVCT_QUIRK_JOBS:-4}
tmp=$tl_tmp

# Under the sanitizers a leak check per test (the runner's) is not what this
# asks, and it could stand in for the rule a quirk breaks; the plain runs of
# the same programs check for leaks (and it halves the time under ASan).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

sed -n 's/^FP_QUIRK([A-Z0-9_]*,[[:space:]]*"\([a-z0-9_]*\)".*/\1/p' "$def" | sort >"$tmp/quirks"
[ -s "$tmp/quirks" ] || test_bail "no quirks found in $def"
sed 's/#.*//; /^[[:space:]]*$/d' "$table" >"$tmp/rows"
[ -s "$tmp/rows" ] || test_bail "no rows in $table"

# script QUIRKS CONFIG: a script with each quirk of QUIRKS, under CONFIG
# (comma-separated key=value: lifetime=, profile=; past= is not a line)
script() {
	echo "$2" | tr ',' '\n' | sed -n 's/^\(lifetime\|profile\)=\(.*\)$/\1 \2/p'
	printf 'device fake0\n\tcap xrc\n'
	for q in $1; do echo "quirk $q"; done
}

# run OUT QUIRKS CONFIG PROGRAM TESTS...: PROGRAM's TESTS under a script of
# QUIRKS, TAP in OUT. A unit program (build/t) takes the script as its
# first argument, a suite (build/suites/ref) as IBVCT_SCRIPT.
run() {
	out=$1 qs=$2 cfg=$3 prog=$4
	shift 4
	script "$qs" "$cfg" >"$out.fps"
	if [ -x "$build/t/$prog.t" ]; then
		TMPDIR=$tmp "$build/t/$prog.t" "$out.fps" "$@"
	else
		TMPDIR=$tmp IBVCT_SCRIPT=$out.fps "$build/suites/ref/$prog.t" "$@"
	fi >"$out" 2>"$out.err"
}

# ---- the runs ------------------------------------------------------------------
n=0
while read -r q prog cfg tests; do
	n=$((n + 1))
	past=$(echo "$cfg" | tr ',' '\n' | sed -n 's/^past=//p')
	# shellcheck disable=SC2086 # tests is a word list
	test_parallel "$jobs" run "$tmp/o$n" "$past $q" "$cfg" "$prog" $tests
	# shellcheck disable=SC2086
	[ -z "$past" ] || test_parallel "$jobs" run "$tmp/o$n.alone" "$past" "$cfg" "$prog" $tests
done <"$tmp/rows"
test_parallel_wait

# ---- the checks ----------------------------------------------------------------
n=0
while read -r q prog cfg tests; do
	n=$((n + 1))
	past=$(echo "$cfg" | tr ',' '\n' | sed -n 's/^past=//p')
	test_expect_success "quirk $q fails $prog: $tests${past:+ (past $past)}" '
		grep -qx "$q" "$tmp/quirks" || { echo "$q: no such quirk in $def"; exit 1; }
		missed=
		for t in $tests; do
			grep -q "^not ok [0-9]* - $t\( \[[^]]*\]\)\?\$" "$tmp/o$n" || missed="$missed $t"
		done
		[ -z "$missed" ] || { echo "passes (or did not run) under quirk $q:$missed"
			head -n 40 "$tmp/o$n" "$tmp/o$n.err"; exit 1; }
		[ -z "$past" ] && exit 0
		for t in $tests; do
			grep -q "^ok [0-9]* - $t\( \[[^]]*\]\)\?\$" "$tmp/o$n.alone" || missed="$missed $t"
		done
		[ -z "$missed" ] || { echo "fails under $past alone:$missed"; head -n 40 "$tmp/o$n.alone"; exit 1; }
	'
done <"$tmp/rows"

awk '{ print $1 }' "$tmp/rows" | sort >"$tmp/listed"
test_expect_success "every quirk has one row in $(basename "$table") ($(wc -l <"$tmp/quirks") quirks)" '
	miss=$(comm -23 "$tmp/quirks" "$tmp/listed" | tr "\n" " ")
	twice=$(uniq -d "$tmp/listed" | tr "\n" " ")
	echo "quirks without a row: $miss"
	echo "quirks with more than one: $twice"
	echo "(a new quirk: run build/t/t5100-datapath.t, t5101-objects.t, t5104-new-api.t with a script"
	echo " holding the quirk, or a suite with IBVCT_SCRIPT, and list the tests it fails)"
	[ -z "$miss" ] && [ -z "$twice" ]
'
test_done
