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
. "$src/testkit/sh/test-lib.sh"
run=$build/bin/ibvct-run
tmp=$tl_tmp
TMPDIR=$tmp
export TMPDIR
suites=$(ls "$build"/suites/system/t*.t 2>/dev/null)
[ -n "$suites" ] || test_bail "no suites in $build/suites/system"
has_dev=0
ls /sys/class/infiniband_verbs/uverbs* >/dev/null 2>&1 && has_dev=1

# verdict FILE RC: one plan with tests (not a skip of all), no failure
# but TODOs, exit 0
verdict() {
	[ "$2" = 0 ] && [ "$(grep -c '^1\.\.[1-9]' "$1")" = 1 ] &&
		[ "$(grep '^not ok' "$1" | grep -vc '# TODO')" = 0 ]
}

for s in $suites; do
	name=$(basename "$s" .t)
	test_expect_success "$name: system build holds no fake-provider code, no rpath to ref-impl" '
		! nm "$s" 2>/dev/null | grep " [TtDdBb] fp_" && ! readelf -d "$s" | grep "R.*PATH.*$build"
	'
	for script in - "$src/fixtures/scripts/legacy.fps"; do
		if [ "$script" = - ]; then how="extended"; set -- ; else how="legacy"; set -- --script "$script"; fi
		env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$run" --private "$@" -- "$s" >"$tmp/$name.$how" 2>&1
		rc=$?
		# a two-host suite needs its peer host (IBVCT_ROLE, IBVCT_PEER): on one
		# host it skips as a whole and says so (the reference target runs it as a
		# pair in t6213; a system build, only beside a peer host)
		if grep -q "^1\.\.0 # SKIP two hosts: no peer host " "$tmp/$name.$how"; then
			test_expect_success "$name: built for rdma-core, two hosts: on one host ref-impl runs it to its skip, which names the peer it needs ($how provider)" '
				cat "$tmp/$name.$how"
				[ "$rc" = 0 ] && [ "$(grep -c . "$tmp/$name.$how")" = 1 ]
			'
			continue
		fi
		test_expect_success "$name: built for rdma-core, passes on ref-impl ($how provider)" '
			echo "exit $rc"
			head -n 40 "$tmp/$name.$how"
			verdict "$tmp/$name.$how" "$rc"
		'
	done
	if [ "$has_dev" = 1 ]; then
		test_skip "$name: plain run" "this machine has RDMA devices"
		continue
	fi
	"$s" >"$tmp/$name.plain" 2>&1
	rc=$?
	test_expect_success "$name: without a device it prints only the skip-all plan with its reason, exit 0" '
		echo "exit $rc"
		head -n 40 "$tmp/$name.plain"
		[ "$rc" = 0 ] && grep -q "^1\.\.0 # SKIP ." "$tmp/$name.plain" && [ "$(grep -c . "$tmp/$name.plain")" = 1 ]
	'
	test_note "$name: no RDMA device: $(cat "$tmp/$name.plain")"
done
test_done
