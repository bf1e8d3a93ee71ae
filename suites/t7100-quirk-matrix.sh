#!/bin/sh
# SPDX-License-Identifier: MIT
# t7100: every check of the conformance suites can fail. Reads the table
# suites/break-matrix.txt (ID, suite, tests, break, where), runs each suite
# row's tests (the rows of unit programs, ID "-", are t5102's) on the
# reference target with the break applied (a fake-provider
# quirk, a scripted fault, or an env setting) under the row's mode and
# lifetime model (and driver profile, when the row names one: a fact of one
# driver), and requires each listed test to report "not ok". Then
# runs every suite without a break under both modes and both models, and
# under each driver profile (mlx5, mlx4, rxe; extended, current), and strict
# and rxe under the release the build does not play by default (a
# script's `rdma-core 44|56`), and requires no failure (TODO aside) and no
# TODO that passes, and checks that every ID a suite names has a row. The
# runs go a few at a time in the background (test_parallel); the checks read
# their output afterwards, in order.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/testkit/sh/test-lib.sh"
table=$src/suites/break-matrix.txt
jobs=${IBVCT_MATRIX_JOBS:-4}
tmp=$tl_tmp
# failed tests keep their scratch dirs: here, inside $tmp
TMPDIR=$tmp
export TMPDIR
tab=$(printf '\t')

# Rows: tab-separated fields, five of them, comments and blank lines aside.
sed '/^#/d; /^[[:space:]]*$/d' "$table" >"$tmp/rows"
badrows=$(awk -F'\t' 'NF != 5 { print NR": "$0 }' "$tmp/rows")
[ -z "$badrows" ] || test_bail "$table: rows without five tab-separated fields: $badrows"
nrows=$(wc -l <"$tmp/rows")
suites=$(ls "$build"/suites/ref/t*.t 2>/dev/null)
nsuites=$(echo "$suites" | grep -c .)
[ "$nrows" -gt 0 ] && [ "$nsuites" -gt 0 ] ||
	test_bail "no rows in $table or no suites in $build/suites/ref"

script() {	# script MODE MODEL [LINE [PROFILE [RELEASE]]] > file
	printf 'mode %s\nlifetime %s\nprofile %s\n' "$1" "$2" "${4:-strict}"
	[ -n "${5:-}" ] && printf 'rdma-core %s\n' "$5"
	[ -n "${3:-}" ] && printf '%s\n' "$3"
	printf 'device fake0\n\tcap xrc\n\tport 1 state active\n'
}

# row_run N SUITE TESTS BREAK WHERE: row N's tests with its break, output
# in $tmp/oN (a row without a break, or with one this test does not know,
# runs nothing: its check says so)
row_run() {
	n=$1 suite=$2 tests=$3 brk=$4 where=$5
	# "MODE MODEL [PROFILE]": a driver's fact is broken where it is played
	# shellcheck disable=SC2086 # where is a word list
	set -- $where
	mode=$1 model=$2 prof=${3:-strict}
	line= envv=
	case $brk in
	# several script lines joined by " + " (a rule two layers enforce)
	quirk\ *|fault\ *) line=$(printf '%s' "$brk" | awk '{ gsub(/ \+ /, "\n"); print }') ;;
	env\ *) envv=${brk#env } ;;
	*) return ;;
	esac
	script "$mode" "$model" "$line" "$prof" >"$tmp/s$n.fps"
	# shellcheck disable=SC2086 # tests is a word list
	if [ -n "$envv" ]; then
		env "$envv" IBVCT_SCRIPT="$tmp/s$n.fps" "$build/suites/ref/$suite.t" $tests
	else
		IBVCT_SCRIPT="$tmp/s$n.fps" "$build/suites/ref/$suite.t" $tests
	fi >"$tmp/o$n" 2>&1
}

# base_run N SUITE SCRIPT: a whole suite without a break; output in $tmp/oN,
# its exit status in $tmp/rcN
base_run() {
	IBVCT_SCRIPT=$3 "$2" >"$tmp/o$1" 2>&1
	echo $? >"$tmp/rc$1"
}

# Baselines: no break, each mode and model, the whole suite; then each
# driver profile, which must give no false result either (its known
# deviations run as TODO from fixtures/expect/<driver>.txt).
# And the release the build does not play by default (ref-impl's
# ibvct-release.def: the installed libibverbs-dev's is the default), strict
# and rxe, whose rows differ most between the two.
sysrel=$(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
other=56
[ -n "$sysrel" ] && [ "$sysrel" -ge 56 ] 2>/dev/null && other=44
confs="extended:current:strict extended:seed:strict legacy:current:strict
	legacy:seed:strict extended:current:mlx5 extended:current:mlx4 extended:current:rxe"
confs="$confs extended:current:strict:$other extended:current:rxe:$other"

# ---- the runs ------------------------------------------------------------------
n=0
while IFS=$tab read -r id suite tests brk where; do
	n=$((n + 1))
	[ "$id" = - ] && continue
	case $brk in none*) continue ;; esac
	test_parallel "$jobs" row_run "$n" "$suite" "$tests" "$brk" "$where"
done <"$tmp/rows"
for conf in $confs; do
	mode=${conf%%:*} rest=${conf#*:}
	model=${rest%%:*} prof=${rest#*:}
	rel=
	case $prof in *:*) rel=${prof#*:} prof=${prof%%:*} ;; esac
	script "$mode" "$model" "" "$prof" "$rel" >"$tmp/base-$mode-$model-$prof$rel.fps"
	for s in $suites; do
		n=$((n + 1))
		test_parallel "$jobs" base_run "$n" "$s" "$tmp/base-$mode-$model-$prof$rel.fps"
	done
done
test_parallel_wait

# ---- the checks ----------------------------------------------------------------
n=0
while IFS=$tab read -r id suite tests brk where; do
	n=$((n + 1))
	# a unit program's row (t5102 runs it)
	[ "$id" = - ] && continue
	case $brk in
	none*)
		test_skip "$id $suite" "${brk#none: }"
		continue ;;
	quirk\ *|fault\ *|env\ *) ;;
	*)
		test_expect_success "$id $suite: a break of a known kind" 'echo "unknown break: $brk"; false'
		continue ;;
	esac
	test_expect_success "$id: $brk ($where) fails $suite: $tests" '
		missed=
		for t in $tests; do
			grep -q "^not ok [0-9]* - $t \[" "$tmp/o$n" || missed="$missed $t"
		done
		[ -z "$missed" ] || { echo "does not fail:$missed"; head -n 40 "$tmp/o$n"; false; }
	'
done <"$tmp/rows"

for conf in $confs; do
	mode=${conf%%:*} rest=${conf#*:}
	model=${rest%%:*} prof=${rest#*:}
	rel=
	case $prof in *:*) rel=${prof#*:} prof=${prof%%:*} ;; esac
	for s in $suites; do
		n=$((n + 1))
		test_expect_success "$(basename "$s" .t) passes ($mode, $model, profile $prof${rel:+, rdma-core $rel})" '
			rc=$(cat "$tmp/rc$n")
			bad=$(grep "^not ok" "$tmp/o$n" | grep -vc "# TODO")
			# a known deviation that passes: the profile no longer plays its
			# driver (or the expectations file is stale)
			fixed=$(grep -c ": fixed: passes now" "$tmp/o$n")
			plans=$(grep -c "^1\.\." "$tmp/o$n")
			echo "fails without a break: exit $rc, $bad failed, $fixed fixed, $plans plans"
			head -n 60 "$tmp/o$n"
			[ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "$fixed" = 0 ] && [ "$plans" = 1 ]
		'
	done
done

# Every ID a suite names has a row.
for s in $suites; do "$s" -l; done | sed -n 's/.*\[\(.*\)\]$/\1/p' | tr ' ' '\n' | sort -u >"$tmp/ids"
cut -f1 "$tmp/rows" | sort -u >"$tmp/tab"
test_expect_success "every ID the suites check has a row ($(wc -l <"$tmp/ids") IDs)" '
	miss=$(comm -23 "$tmp/ids" "$tmp/tab" | tr "\n" " ")
	echo "IDs checked by a suite without a row in suites/break-matrix.txt: $miss"
	[ -s "$tmp/ids" ] && [ -z "$miss" ]
'
test_done
