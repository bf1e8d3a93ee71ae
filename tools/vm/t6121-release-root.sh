#!/bin/sh
# SPDX-License-Identifier: MIT
# t6121: the Debian 13 root (tools/vm/release-root) and what it answers.
# Made once and kept (debootstrap from the host's own mirror, as read from
# its apt sources at run time: no host is named in the tree); its apt lists
# are Debian 13's, so every package ci/install-deps names, for every group,
# is looked up there: `make conformance` and `make check` on Debian 13
# install from the same table (make release-check runs both there). Its
# facts: Debian 13, rdma-core 56, the kernel ABI of its headers, and the
# apt sources it was given (the host's mirrors, the release's suites).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
rr=$src/tools/vm/release-root
[ "$(sh "$rr" host)" != 13 ] || skip_all "this is Debian 13: no other root to make"

run_cmd sh "$rr" -q root --release 13
root=$(cat "$tl_out")
test_expect_success 'release-root makes (or keeps) a Debian 13 root' '
	rc_is 0 && [ -d "$root/usr" ] && grep -q "^13\." "$root/etc/debian_version"
'
run_cmd sh "$rr" info --release 13
test_expect_success 'its facts: release 13, rdma-core 56, the kernel ABI of its headers' '
	rc_is 0 && out_has "^release=13$" && out_has "^codename=trixie$" &&
		out_has "^rdma-core=56\." && out_has "^kernel\.abi=6\.12\..*-amd64$"
'
test_expect_success 'the root holds what its guests run (libibverbs, providers, utils, rdma, prove, cmocka)' '
	for p in libibverbs1 ibverbs-providers ibverbs-utils iproute2 perl libcmocka0; do
		dpkg-query --admindir="$root/var/lib/dpkg" -W -f="\${db:Status-Abbrev}" "$p" | grep -q "^ii" ||
			{ echo "not installed in the root: $p"; exit 1; }
	done
'

# every package of every group, in Debian 13's lists
pkgs=$(sh "$src/ci/install-deps" --packages build test browser valgrind coverage abi deb rxe vm fuzz chroot kmod)
# (one apt-cache policy for them all: a package it knows has a candidate)
# shellcheck disable=SC2086 # the package list
chroot "$root" apt-cache policy $pkgs 2>/dev/null |
	awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) } /^  Candidate: / && $2 != "(none)" { print p }' |
	sort -u >"$tl_tmp/found"
for p in $pkgs; do
	grep -qx "$p" "$tl_tmp/found" || echo "$p"
done >"$tl_tmp/missing"
test_expect_success 'every package ci/install-deps names exists under its name in Debian 13' '
	cat "$tl_tmp/missing"
	[ -n "$pkgs" ] && [ ! -s "$tl_tmp/missing" ]
'
# and the check can fail: a name Debian 13 does not have
test_expect_success 'a name Debian 13 does not have is found missing' '
	! chroot "$root" apt-cache policy ibvct-no-such-package 2>/dev/null | grep -q "Candidate: [^(]"
'

run_cmd sh "$rr" mirror
want=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
	sed -n 's/^deb  *\(\[[^]]*\]  *\)\{0,1\}\([a-z]*:[^ ]*\/debian\)\/\{0,1\} .*/\2/p; s/^URIs: *\([a-z]*:[^ ]*\/debian\)\/\{0,1\}$/\1/p' | head -n 1)
test_expect_success 'the mirror is the Debian archive of the host apt sources' '
	rc_is 0 && [ -n "$want" ] && [ "$(cat "$tl_out")" = "$want" ]
'
run_cmd sh "$rr" sources --release 13
test_expect_success 'the root apt sources: that mirror, trixie and trixie-updates' '
	rc_is 0 && out_has "^URIs: $want$" && out_has "^Suites: trixie trixie-updates$"
'
run_cmd sh "$src/tools/vm/rdma-core-root" --release 13 --src "$tl_tmp"
test_expect_success 'rdma-core-root takes only an rdma-core tree (CMakeLists.txt, debian/control)' '
	rc_is 2 && grep -q "an rdma-core source tree" "$tl_err"
'
run_cmd sh "$src/tools/ibvct/ibvct" conformance --target ref --rdma-core "$tl_tmp"
test_expect_success '--rdma-core and --release are the guest targets' '
	! rc_is 0 && grep -q "guest targets" "$tl_err"
'
test_expect_success 'no host is named in the release scripts (read at run time)' '
	! grep -nE "[a-z]+://[a-z0-9.-]+\.[a-z]{2,}" "$src/tools/vm/release-root" "$src/tools/vm/release-check" \
		"$src/tools/vm/rdma-core-root" "$src/tools/vm/release-matrix"
'
test_done
