#!/bin/sh
# SPDX-License-Identifier: MIT
# t6207: the environment fingerprint. tools/report/report-fingerprint on the reference
# target writes fingerprint.txt with ibvct's version and commit, the kernel,
# the libibverbs really loaded (ours: dladdr of ibv_get_device_list), its
# soname, the fake provider plugin and its script's mode and lifetime, the
# device and its ibv_query_device attributes and ports; a script naming
# another device and mode is followed; and run without ibvct-run the same
# binary loads the system's libibverbs (no rpath to ours).
set -u
: "${IBVCT_SRC:?run through make check}" "${IBVCT_BUILD:?}" "${IBVCT_LIBDIR:?}" "${IBVCT_PROVIDER:?}"
. "$IBVCT_SRC/testkit/sh/test-lib.sh"
tmp=$tl_tmp
fp=$tmp/a/fingerprint.txt
val() { sed -n "s/^$1=//p" "$2" | head -n 1; }
# is NAME KEY WANT FILE: the check that KEY's value in FILE is WANT
is() {
	key=$2 want=$3 file=$4
	test_expect_success "$1" '
		got=$(val "$key" "$file")
		echo "$key: want \"$want\", got \"$got\""
		[ "$got" = "$want" ]
	'
}

unset IBVCT_SCRIPT
sh "$IBVCT_SRC/tools/report/report-fingerprint" "$tmp/a" ref fake0
is "the library is ours, found by dladdr" library.realpath "$(readlink -f "$IBVCT_LIBDIR/libibverbs.so.1")" "$fp"
is "its soname" library.soname libibverbs.so.1 "$fp"
is "the provider is the fake plugin" provider.0 "$IBVCT_PROVIDER" "$fp"
is "the device" device fake0 "$fp"
is "the XRC capability is decoded" attr.xrc yes "$fp"
test_expect_success "every ibv_query_device attribute is listed" '
	cat "$fp"
	grep -q "^attr.max_qp=[1-9]" "$fp" && grep -q "^attr.phys_port_cnt=1\$" "$fp" && grep -q "^attr.fw_ver=." "$fp" &&
		[ "$(grep -c "^attr\." "$fp")" -ge 40 ]
'
is "port state" port.1.state active "$fp"
is "kernel" kernel "$(uname -r)" "$fp"
test_expect_success "ibvct version and commit" '
	grep "^ibvct\." "$fp"
	grep -q "^ibvct.version=." "$fp" && grep -q "^ibvct.commit=." "$fp"
'
is "the default script's mode" fake.mode extended "$fp"

cat >"$tmp/legacy.fps" <<'FPS'
mode legacy
lifetime seed
device other3
	port 1 state down
FPS
IBVCT_SCRIPT=$tmp/legacy.fps sh "$IBVCT_SRC/tools/report/report-fingerprint" "$tmp/b" ref other3
f2=$tmp/b/fingerprint.txt
test_expect_success "IBVCT_SCRIPT's device, mode, lifetime and port state are reported" '
	cat "$f2"
	[ "$(val device "$f2")" = other3 ] && [ "$(val fake.mode "$f2")" = legacy ] &&
		[ "$(val fake.lifetime "$f2")" = seed ] && [ "$(val port.1.state "$f2")" = down ]
'

# Not through ibvct-run: the system's rdma-core (it may have no device here).
env -u LD_LIBRARY_PATH ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} \
	"$IBVCT_BUILD/bin/ibvct-fingerprint" >"$tmp/sys" 2>&1
lib=$(val library.realpath "$tmp/sys")
test_expect_success "run directly it loads the system's libibverbs ($lib)" '
	cat "$tmp/sys"
	[ -n "$lib" ] && [ "$lib" != "$(readlink -f "$IBVCT_LIBDIR/libibverbs.so.1")" ]
'
test_done
