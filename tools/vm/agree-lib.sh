# SPDX-License-Identifier: MIT
# Sourced by the agreement tests (t6110, t6111) after ci/test-lib.sh, with
# src and build set: the reference side of a comparison with a real kernel.
#
# agree_ref PROGRAM DIR SCRIPT TAG: one system-built suite PROGRAM on
# ref-impl under the fake-provider SCRIPT, its TAP, stderr and rc where
# tools/ibvct/suites-run would put them (DIR/tap/NAME.system-on-ref-TAG.*),
# for tools/vm/tap-agree to hold against the guest's run.
# Its scratch (the private fake host, the suite's per-test dirs, which a
# failed test keeps) goes in DIR/tmp, with the test's.
agree_ref() {
	ar_n=$(basename "$1" .t)
	mkdir -p "$2/tap" "$2/tmp"
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} IBVCT_TAP_DIR=$2/tmp TMPDIR=$2/tmp \
		sh "$src/ci/test-exec" "$build/bin/ibvct-run" --private --script "$3" -- "$1" \
		>/dev/null 2>&1
	for ar_e in tap stderr rc; do
		[ -f "$2/tmp/ibvct-run.$ar_e" ] &&
			mv "$2/tmp/ibvct-run.$ar_e" "$2/tap/$ar_n.system-on-ref-$4.$ar_e"
	done
	return 0
}
