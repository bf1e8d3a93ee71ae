#!/bin/sh
# SPDX-License-Identifier: MIT
# t7100: every check of the conformance suites can fail. Reads the table in
# suites/README.md (ID | suite | tests | break | where), runs each row's
# tests on the reference target with the break applied (a fake-provider
# quirk, a scripted fault, or an env setting) under the row's mode and
# lifetime model (and driver profile, when the row names one: a fact of one
# driver), and requires each listed test to report "not ok". Then
# runs every suite without a break under both modes and both models, and
# under each driver profile (mlx5, mlx4, rxe; extended, current), and
# requires no failure (TODO aside) and no TODO that passes, and checks that
# every ID a suite names has a row. Rows run a few at a time in the background.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
table=$src/suites/README.md
jobs=${IBVCT_MATRIX_JOBS:-4}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7100.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT INT TERM
# failed tests keep their scratch dirs: here, inside $tmp
TMPDIR=$tmp
export TMPDIR

# Rows as tab-separated fields.
awk -F'|' '/^\| [A-Z]+-[0-9]+ \|/ {
	for (i = 2; i <= 6; i++) { gsub(/^[ \t]+|[ \t]+$/, "", $i) }
	b = $5; gsub(/`/, "", b)
	printf "%s\t%s\t%s\t%s\t%s\n", $2, $3, $4, b, $6 }' "$table" >"$tmp/rows"
nrows=$(wc -l <"$tmp/rows")
suites=$(ls "$build"/suites/ref/t*.t 2>/dev/null)
nsuites=$(echo "$suites" | grep -c .)
if [ "$nrows" -eq 0 ] || [ "$nsuites" -eq 0 ]; then
	echo "Bail out! no rows in $table or no suites in $build/suites/ref"
	exit 1
fi
# 4 mode x model baselines, 3 driver profiles (extended, current: the only
# registration mlx5, mlx4 and rxe have), then the ID check
echo "1..$((nrows + 7 * nsuites + 1))"

script() {	# script MODE MODEL [LINE [PROFILE]] > file
	printf 'mode %s\nlifetime %s\nprofile %s\n' "$1" "$2" "${4:-strict}"
	[ -n "${3:-}" ] && printf '%s\n' "$3"
	printf 'device fake0\n\tcap xrc\n\tport 1 state active\n'
}

# row N: one row in the background; the verdict goes to $tmp/vN
row() {
	n=$1 id=$2 suite=$3 tests=$4 brk=$5 where=$6
	case $brk in
	none*)	echo "ok $n - $id $suite # SKIP ${brk#none: }" >"$tmp/v$n"; return ;;
	esac
	# "MODE MODEL [PROFILE]": a driver's fact is broken where it is played
	# shellcheck disable=SC2086 # where is a word list
	set -- $where
	mode=$1 model=$2 prof=${3:-strict}
	line= envv=
	case $brk in
	# several script lines joined by " + " (a rule two layers enforce)
	quirk\ *|fault\ *) line=$(printf '%s' "$brk" | awk '{ gsub(/ \+ /, "\n"); print }') ;;
	env\ *) envv=${brk#env } ;;
	*) echo "not ok $n - $id $suite: unknown break '$brk'" >"$tmp/v$n"; return ;;
	esac
	script "$mode" "$model" "$line" "$prof" >"$tmp/s$n.fps"
	# shellcheck disable=SC2086 # tests is a word list
	if [ -n "$envv" ]; then
		env "$envv" IBVCT_SCRIPT="$tmp/s$n.fps" "$build/suites/ref/$suite.t" $tests
	else
		IBVCT_SCRIPT="$tmp/s$n.fps" "$build/suites/ref/$suite.t" $tests
	fi >"$tmp/o$n" 2>&1
	missed=
	for t in $tests; do
		grep -q "^not ok [0-9]* - $t \[" "$tmp/o$n" || missed="$missed $t"
	done
	if [ -z "$missed" ]; then
		echo "ok $n - $id: $brk ($where) fails $suite: $tests" >"$tmp/v$n"
	else
		{ echo "not ok $n - $id: $brk ($where) does not fail$missed"
		  sed 's/^/#   /' "$tmp/o$n" | head -n 40; } >"$tmp/v$n"
	fi
}

n=0 running=0
while IFS="$(printf '\t')" read -r id suite tests brk where; do
	n=$((n + 1))
	row "$n" "$id" "$suite" "$tests" "$brk" "$where" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done <"$tmp/rows"

# Baselines: no break, each mode and model, the whole suite; then each
# driver profile, which must give no false result either (its known
# deviations run as TODO from fixtures/expect/<driver>.txt).
for conf in extended:current:strict extended:seed:strict legacy:current:strict \
	legacy:seed:strict extended:current:mlx5 extended:current:mlx4 extended:current:rxe; do
	mode=${conf%%:*} rest=${conf#*:}
	model=${rest%%:*} prof=${rest#*:}
	script "$mode" "$model" "" "$prof" >"$tmp/base-$mode-$model-$prof.fps"
	for s in $suites; do
		n=$((n + 1))
		(
			name=$(basename "$s" .t)
			IBVCT_SCRIPT="$tmp/base-$mode-$model-$prof.fps" "$s" >"$tmp/o$n" 2>&1
			rc=$?
			bad=$(grep '^not ok' "$tmp/o$n" | grep -vc '# TODO')
			# a known deviation that passes: the profile no longer plays its
			# driver (or the expectations file is stale)
			fixed=$(grep -c ': fixed: passes now' "$tmp/o$n")
			plans=$(grep -c '^1\.\.' "$tmp/o$n")
			if [ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "$fixed" = 0 ] && [ "$plans" = 1 ]; then
				echo "ok $n - $name passes ($mode, $model, profile $prof)" >"$tmp/v$n"
			else
				{ echo "not ok $n - $name fails without a break ($mode, $model, profile $prof): exit $rc, $bad failed, $fixed fixed, $plans plans"
				  sed 's/^/#   /' "$tmp/o$n" | head -n 60; } >"$tmp/v$n"
			fi
		) &
		running=$((running + 1))
		if [ "$running" -ge "$jobs" ]; then
			wait
			running=0
		fi
	done
done
wait

i=0
while [ "$i" -lt "$n" ]; do
	i=$((i + 1))
	cat "$tmp/v$i" 2>/dev/null || echo "not ok $i - no verdict"
done

# Every ID a suite names has a row.
n=$((n + 1))
for s in $suites; do "$s" -l; done | sed -n 's/.*\[\(.*\)\]$/\1/p' | tr ' ' '\n' | sort -u >"$tmp/ids"
cut -f1 "$tmp/rows" | sort -u >"$tmp/tab"
miss=$(comm -23 "$tmp/ids" "$tmp/tab" | tr '\n' ' ')
if [ -z "$miss" ]; then
	echo "ok $n - every ID the suites check has a row ($(wc -l <"$tmp/ids") IDs)"
else
	echo "not ok $n - IDs checked by a suite without a row in suites/README.md: $miss"
fi
