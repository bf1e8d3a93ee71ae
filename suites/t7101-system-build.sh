#!/bin/sh
# SPDX-License-Identifier: MIT
# t7101: the system-target suite binaries (build/suites/system/, built
# against the system's verbs.h and libibverbs through pkg-config) never
# contain the fake provider's code, pass against ref-impl through ibvct-run
# (binary compatibility: built for rdma-core, run on ours) in both provider
# modes, and, run plainly on a machine without RDMA devices, report
# `1..0 # SKIP <reason>` and succeed.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
run=$build/bin/ibvct-run
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7101.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT INT TERM
TMPDIR=$tmp
export TMPDIR
suites=$(ls "$build"/suites/system/t*.t 2>/dev/null)
[ -n "$suites" ] || { echo "Bail out! no suites in $build/suites/system"; exit 1; }
n=$(echo "$suites" | grep -c .)
echo "1..$((n * 4))"
has_dev=0
ls /sys/class/infiniband_verbs/uverbs* >/dev/null 2>&1 && has_dev=1

i=0
ok() { i=$((i + 1)); echo "ok $i - $1"; }
nok() { i=$((i + 1)); echo "not ok $i - $1"; [ -f "${2:-}" ] && sed 's/^/#   /' "$2" | head -n 40; }

# verdict FILE RC: one plan with tests (not a skip of all), no failure
# but TODOs, exit 0
verdict() {
	[ "$2" = 0 ] && [ "$(grep -c '^1\.\.[1-9]' "$1")" = 1 ] &&
		[ "$(grep '^not ok' "$1" | grep -vc '# TODO')" = 0 ]
}

for s in $suites; do
	name=$(basename "$s" .t)
	if nm "$s" 2>/dev/null | grep -q ' [TtDdBb] fp_' ||
	   readelf -d "$s" | grep -q 'R.*PATH.*'"$build"; then
		nok "$name: the system build must not contain fake-provider code or point at ref-impl"
	else
		ok "$name: system build holds no fake-provider code, no rpath to ref-impl"
	fi
	for script in - "$src/fixtures/scripts/legacy.fps"; do
		if [ "$script" = - ]; then how="extended"; set -- ; else how="legacy"; set -- --script "$script"; fi
		env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$run" --private "$@" -- "$s" >"$tmp/out" 2>&1
		rc=$?
		if verdict "$tmp/out" "$rc"; then
			ok "$name: built for rdma-core, passes on ref-impl ($how provider)"
		else
			nok "$name: built for rdma-core, fails on ref-impl ($how provider; exit $rc)" "$tmp/out"
		fi
	done
	if [ "$has_dev" = 1 ]; then
		ok "$name: plain run # SKIP this machine has RDMA devices"
		continue
	fi
	"$s" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^1\.\.0 # SKIP .' "$tmp/out" && [ "$(grep -c . "$tmp/out")" = 1 ]; then
		ok "$name: no RDMA device: $(cat "$tmp/out")"
	else
		nok "$name: without a device it must print only '1..0 # SKIP reason' (exit $rc)" "$tmp/out"
	fi
done
