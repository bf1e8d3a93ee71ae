# SPDX-License-Identifier: MIT
# Sourced by the agreement tests (t6110, t6111) after testkit/sh/test-lib.sh, with
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
		sh "$src/testkit/sh/test-exec" "$build/bin/ibvct-run" --private --script "$3" -- "$1" \
		>/dev/null 2>&1
	for ar_e in tap stderr rc; do
		[ -f "$2/tmp/ibvct-run.$ar_e" ] &&
			mv "$2/tmp/ibvct-run.$ar_e" "$2/tap/$ar_n.system-on-ref-$4.$ar_e"
	done
	return 0
}

# The guest's Debian release: IBVCT_VM_RELEASE (tools/vm/ibvct-vm --release;
# make release-matrix sets it), else the host's. agree_rel is it; for
# another release than the host's, agree_ko is the module built for its
# kernel (build/kmod-N/ixrc.ko, make kmod RELEASE=N), and agree_script
# SCRIPT OUT writes SCRIPT with the release's rdma-core version line
# (`rdma-core N`, the major version of its libibverbs1: the reference then
# plays that version's behaviour) into OUT and prints OUT.
agree_host=$(sh "$src/tools/vm/release-root" host)
agree_rel=${IBVCT_VM_RELEASE:-$agree_host}
agree_ko=$build/kmod/ixrc.ko
[ "$agree_rel" = "$agree_host" ] || agree_ko=$build/kmod-$agree_rel/ixrc.ko
agree_script() {
	if [ "$agree_rel" = "$agree_host" ]; then
		echo "$1"
		return 0
	fi
	as_ver=$(sh "$src/tools/vm/release-root" info --release "$agree_rel" | sed -n 's/^rdma-core=\([0-9]*\).*/\1/p')
	{ cat "$1"; echo "rdma-core $as_ver"; } >"$2"
	# a reference whose script language has no version line plays the
	# version it was built for: said, and the comparison shows the rest
	if "$build/bin/ibvct-run" --private --script "$2" -- true 2>"$2.err" >/dev/null ||
		! grep -q "unknown directive .rdma-core." "$2.err"; then
		echo "$2"
	else
		echo "the reference knows no rdma-core version line: it plays its own" >"$2.note"
		echo "$1"
	fi
}
