#!/bin/sh
# SPDX-License-Identifier: MIT
# t5102: every quirk in fp_quirks.def makes a test fail, so that test is
# known to be able to fail (STYLE: "every check can fail"). The table is the
# break matrix, suites/break-matrix.txt (ID, suite, tests, break, where): a
# row serves quirk Q when its break is "quirk Q", or quirk lines joined by
# " + " that end in it. For each quirk this runs the rows of unit programs
# (ID "-", a program of build/t) that serve it, or when it has none its
# first suite row (t7100 runs them all), each row's tests by name under the
# row's script, and each test must report "not ok" (a TODO does not count): a
# listed test that passes is a quirk no test notices any more. In
# "quirk A + quirk Q" A is a skip_cmd_* quirk that lets the call past
# libibverbs' command layer first (QPX-05): the tests must pass under A
# alone, so the failure is Q's own. Every quirk has a row, and every quirk a
# row names is one. The rows run JOBS at a time (IBVCT_QUIRK_JOBS, default
# 4); each test has the runner's own limit.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/testkit/sh/test-lib.sh"
def=$src/fake-provider/script/fp_quirks.def
table=$src/suites/break-matrix.txt
jobs=${IBVCT_QUIRK_JOBS:-4}
tmp=$tl_tmp
tab=$(printf '\t')

# Under the sanitizers a leak check per test (the runner's) is not what this
# asks, and it could stand in for the rule a quirk breaks; the plain runs of
# the same programs check for leaks (and it halves the time under ASan).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

sed -n 's/^FP_QUIRK([A-Z0-9_]*,[[:space:]]*"\([a-z0-9_]*\)".*/\1/p' "$def" | sort >"$tmp/quirks"
[ -s "$tmp/quirks" ] || test_bail "no quirks found in $def"
sed '/^#/d; /^[[:space:]]*$/d' "$table" >"$tmp/all"
badrows=$(awk -F'\t' 'NF != 5 { print NR": "$0 }' "$tmp/all")
[ -z "$badrows" ] || test_bail "$table: rows without five tab-separated fields: $badrows"

# The rows that serve a quirk: QUIRK, SUITE, TESTS, PAST (the quirks before
# it, blank-separated, or "-"), WHERE, UNIT (1 on a "-" row), tab-separated,
# in the table's order.
awk -F'\t' -v OFS='\t' '{
	n = split($4, l, / \+ /)
	past = ""
	for (i = 1; i <= n; i++) {
		if (l[i] !~ /^quirk [a-z0-9_]+$/)
			next
		if (i < n)
			past = past (past == "" ? "" : " ") substr(l[i], 7)
	}
	print substr(l[n], 7), $2, $3, (past == "" ? "-" : past), $5, ($1 == "-")
}' "$tmp/all" >"$tmp/serving"
# The rows this runs: a quirk's unit rows, else its first suite row; and
# every quirk any row's break names (none: rows aside), for the last check.
awk -F'\t' '$6 == 1 { unit[$1] = 1; print; next } { first[++n] = $0; q[n] = $1 }
	END { for (i = 1; i <= n; i++) if (!unit[q[i]] && !seen[q[i]]++) print first[i] }' \
	"$tmp/serving" >"$tmp/rows"
[ -s "$tmp/rows" ] || test_bail "no quirk rows in $table"
awk -F'\t' '$4 !~ /^none/ { n = split($4, l, / \+ /)
	for (i = 1; i <= n; i++) if (l[i] ~ /^quirk /) print substr(l[i], 7) }' "$tmp/all" | sort -u >"$tmp/named"

# script QUIRKS WHERE: a script with each quirk of QUIRKS under WHERE ("MODE
# MODEL [PROFILE]"), as t7100 writes it
script() {
	# shellcheck disable=SC2086 # where is a word list
	set -- "$1" $2
	printf 'mode %s\nlifetime %s\nprofile %s\n' "$2" "$3" "${4:-strict}"
	for q in $1; do echo "quirk $q"; done
	printf 'device fake0\n\tcap xrc\n\tport 1 state active\n'
}

# run OUT QUIRKS WHERE UNIT PROGRAM TESTS...: PROGRAM's TESTS under a script
# of QUIRKS, TAP in OUT. A unit program (build/t) takes the script as its
# first argument, a suite (build/suites/ref) as IBVCT_SCRIPT.
run() {
	out=$1 qs=$2 where=$3 unit=$4 prog=$5
	shift 5
	script "$qs" "$where" >"$out.fps"
	if [ "$unit" = 1 ]; then
		TMPDIR=$tmp "$build/t/$prog.t" "$out.fps" "$@"
	else
		TMPDIR=$tmp IBVCT_SCRIPT=$out.fps "$build/suites/ref/$prog.t" "$@"
	fi >"$out" 2>"$out.err"
}

# ---- the runs ------------------------------------------------------------------
n=0
while IFS=$tab read -r q prog tests past where unit; do
	n=$((n + 1))
	[ "$past" = - ] && past=
	# shellcheck disable=SC2086 # tests is a word list
	test_parallel "$jobs" run "$tmp/o$n" "$past $q" "$where" "$unit" "$prog" $tests
	# shellcheck disable=SC2086
	[ -z "$past" ] || test_parallel "$jobs" run "$tmp/o$n.alone" "$past" "$where" "$unit" "$prog" $tests
done <"$tmp/rows"
test_parallel_wait

# ---- the checks: one per quirk -------------------------------------------------
# check N TESTS PAST: row N's tests fail under its quirks, and pass under
# PAST alone
check() {
	n=$1 tests=$2 past=$3 missed=
	for t in $tests; do
		grep -q "^not ok [0-9]* - $t\( \[[^]]*\]\)\?\$" "$tmp/o$n" || missed="$missed $t"
	done
	[ -z "$missed" ] || { echo "passes (or did not run) under quirk $q:$missed"
		head -n 40 "$tmp/o$n" "$tmp/o$n.err"; return 1; }
	[ -z "$past" ] && return 0
	for t in $tests; do
		grep -q "^ok [0-9]* - $t\( \[[^]]*\]\)\?\$" "$tmp/o$n.alone" || missed="$missed $t"
	done
	[ -z "$missed" ] || { echo "fails under $past alone:$missed"; head -n 40 "$tmp/o$n.alone"; return 1; }
}

for q in $(cut -f1 "$tmp/rows" | sort -u); do
	desc= checks=
	n=0
	while IFS=$tab read -r rq prog tests past where unit; do
		n=$((n + 1))
		[ "$rq" = "$q" ] || continue
		[ "$past" = - ] && past=
		desc="$desc${desc:+; }$prog: $tests${past:+ (past $past)}"
		checks="$checks check $n '$tests' '$past' &&"
	done <"$tmp/rows"
	test_expect_success "quirk $q fails $desc" "$checks true"
done

cut -f1 "$tmp/serving" | sort -u >"$tmp/listed"
test_expect_success "every quirk has a row in $(basename "$table") ($(wc -l <"$tmp/quirks") quirks)" '
	miss=$(comm -23 "$tmp/quirks" "$tmp/listed" | tr "\n" " ")
	unknown=$(comm -13 "$tmp/quirks" "$tmp/named" | tr "\n" " ")
	echo "quirks without a row: $miss"
	echo "quirks a row names that fp_quirks.def does not: $unknown"
	echo "(a new quirk: run build/t/t5100-datapath.t, t5101-objects.t, t5104-new-api.t with a script"
	echo " holding the quirk, or a suite with IBVCT_SCRIPT, and list the tests it fails)"
	[ -z "$miss" ] && [ -z "$unknown" ]
'
test_done
