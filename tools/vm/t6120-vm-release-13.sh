#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t6120: another Debian release, from this one. ixrc.ko built for Debian
# 13's kernel in its root (tools/vm/release-root kbuild: 6.12's create_cq
# takes the attribute bundle), then one guest of Debian 13 (ibvct-vm
# --release 13 --target xrc-vm) that boots its 6.12 kernel with its root as
# / and runs, on its libibverbs 56: the host's checkout, build and /tmp at
# their paths; rxe0 (its rdma_rxe) and ixrc0 (that module, with the ixrc
# provider built here on Debian 12) listed; Debian 12's own ibv_devinfo
# (copied from the host) on both and its ibv_rc_pingpong on rxe0; the
# suites built here (on rdma-core 44's headers) on ixrc0 through the new
# post-send API and extended CQs
# (t1000's WRX- tests: the provider's mark where 56's ibv_qp_to_qp_ex reads
# it) and t0101; and the guest's fingerprint, whose report line names
# Debian 13, its kernel and rdma-core 56. One boot (a few seconds under
# TCG); the root and kernel are made once and kept (minutes, the first
# time: debootstrap from the host's mirror). The full agreement and the
# matrix are make release-matrix's.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
. "$src/testkit/sh/test-lib.sh"
# its guest is its own, never a pool's (make check runs under one): the
# module it builds for 6.12 is in its own /tmp, which a pool's guest, booted
# outside this test's mount namespace, would not find
unset IBVCT_VM_POOL
vm=$src/tools/vm/ibvct-vm
rr=$src/tools/vm/release-root
[ "$(sh "$rr" host)" != 13 ] || skip_all "this is Debian 13: its own guests are the host release's (t6100)"
prov=$build/lib/ixrc/libibvct-ixrc
[ -f "$prov-rdmav34.so" ] || test_bail "no $prov-rdmav34.so (make)"
[ -x "$build/suites/system/t1000-send-wr.t" ] || test_bail "no system-built suites (make suites)"
export IBVCT_SRC=$src IBVCT_BUILD=$build

# the module for 6.12, in the Debian 13 root
run_cmd sh "$rr" -q kbuild --release 13 --src "$src/ixrc" --out "$tl_tmp/kmod"
test_expect_success 'ixrc.ko builds against Debian 13 kernel headers (6.12) in its root' '
	rc_is 0 && [ -f "$tl_tmp/kmod/ixrc.ko" ] && grep -q "^6\.12\." "$tl_tmp/kmod/kernel.abi"
'
test_expect_success 'its vermagic is the 6.12 kernel the guest boots' '
	readelf -p .modinfo "$tl_tmp/kmod/ixrc.ko" | grep -q "vermagic=$(cat "$tl_tmp/kmod/kernel.abi") "
'
test_expect_success 'the range it was checked on is the one ixrc_main.c states (6.1 and 6.12)' '
	grep -q "checked on 6.1 (Debian 12" "$src/ixrc/ixrc_main.c" &&
		grep -q "and 6.12 (Debian 13" "$src/ixrc/ixrc_main.c"
'

# Debian 12's ibv_devinfo, carried into the guest through the shared /tmp
cp /usr/bin/ibv_devinfo "$tl_tmp/ibv_devinfo-12" && cp /usr/bin/ibv_rc_pingpong "$tl_tmp/ibv_rc_pingpong-12" ||
	test_bail "no /usr/bin/ibv_devinfo or ibv_rc_pingpong (ibverbs-utils)"
echo marker-$$ >"$tl_tmp/marker"
mkdir -p "$tl_tmp/out"
cat >"$tl_tmp/guest.sh" <<EOF
set -u
t=$tl_tmp
echo "release=\$(cat /etc/debian_version)"
echo "kernel=\$(uname -r)"
echo "rdma-core=\$(dpkg-query -W -f='\${Version}' libibverbs1)"
echo "env.release=\$IBVCT_VM_RELEASE"
echo "marker=\$(cat \$t/marker)"
[ -f "$src/Makefile" ] && echo "checkout=yes"
[ -x "$build/bin/ibvct-reap" ] && echo "build=yes"
echo guest-wrote >$tl_tmp/out/written
ibv_devices | sed -n 's/^ *\\([a-z0-9]*0\\) .*/device=\\1/p'
for d in rxe0 ixrc0; do
	\$t/ibv_devinfo-12 -d \$d >\$t/out/devinfo-\$d.txt 2>&1 && echo "devinfo12.\$d=\$(grep -c PORT_ACTIVE \$t/out/devinfo-\$d.txt)"
done
# Debian 12's ibv_rc_pingpong, server and client on rxe0 (port 18600: 48A8)
\$t/ibv_rc_pingpong-12 -d rxe0 -g \$IBVCT_VM_GID -n 20 -p 18600 >\$t/out/pp-server.txt 2>&1 &
i=0
while ! grep -q ":48A8 " /proc/net/tcp /proc/net/tcp6 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
\$t/ibv_rc_pingpong-12 -d rxe0 -g \$IBVCT_VM_GID -n 20 -p 18600 127.0.0.1 >\$t/out/pp-client.txt 2>&1
echo "pingpong12.client=\$?"
wait \$!
echo "pingpong12.server=\$?"
IBVCT_DEVICE=ixrc0 $build/suites/system/t1000-send-wr.t >\$t/out/t1000.tap 2>\$t/out/t1000.err
echo "t1000.rc=\$?"
IBVCT_DEVICE=ixrc0 $build/suites/system/t0101-legacy-struct-sizes.t >\$t/out/t0101.tap 2>\$t/out/t0101.err
echo "t0101.rc=\$?"
sh $src/tools/report/report-fingerprint \$t/out system ixrc0 >/dev/null 2>&1
echo done
EOF
IBVCT_XRC_KO=$tl_tmp/kmod/ixrc.ko
export IBVCT_XRC_KO
run_cmd sh "$vm" run -q --release 13 --target xrc-vm --timeout 300 --out "$tl_tmp/out" \
	--result "$tl_tmp/vm.result" --console "$tl_tmp/console.log" \
	-- sh "$tl_tmp/guest.sh"
test_expect_success 'the Debian 13 guest ran (a result, not the time limit)' '
	cat "$tl_tmp/vm.result"; tail -n 20 "$tl_tmp/console.log"
	rc_is 0 && grep -q "^result=ok$" "$tl_tmp/vm.result" && out_has "^done$"
'
test_expect_success 'its root, kernel and library are Debian 13 (libibverbs 56, Linux 6.12)' '
	out_has "^release=13\." && out_has "^kernel=6\.12\." && out_has "^rdma-core=56\." &&
		out_has "^env.release=13$" && grep -q "^release=13$" "$tl_tmp/vm.result" &&
		grep -q "^rdma-core=56\." "$tl_tmp/vm.result"
'
test_expect_success 'the host checkout, build, /tmp and out dir are there at their paths' '
	out_has "^marker=marker-$$$" && out_has "^checkout=yes$" && out_has "^build=yes$" &&
		[ "$(cat "$tl_tmp/out/written")" = guest-wrote ]
'
test_expect_success 'rxe0 and ixrc0 (ixrc.ko for 6.12, the provider built on Debian 12) are listed' '
	out_has "^device=rxe0$" && out_has "^device=ixrc0$"
'
test_expect_success 'Debian 12 ibv_devinfo runs on Debian 13 libibverbs: both ports active' '
	out_has "^devinfo12.rxe0=1$" && out_has "^devinfo12.ixrc0=1$"
'
test_expect_success 'Debian 12 ibv_rc_pingpong runs server and client on rxe0 there' '
	cat "$tl_tmp/out/pp-server.txt" "$tl_tmp/out/pp-client.txt"
	out_has "^pingpong12.client=0$" && out_has "^pingpong12.server=0$" &&
		grep -q "20 iters" "$tl_tmp/out/pp-client.txt"
'
test_expect_success 'the suites built on Debian 12 pass on ixrc0 there, the new post-send API too' '
	cat "$tl_tmp/out/t1000.err"
	out_has "^t1000.rc=0$" && out_has "^t0101.rc=0$" &&
		grep -q "^ok [0-9]* - qp_to_qp_ex_only_for_qps_made_with_send_ops_flags " "$tl_tmp/out/t1000.tap" &&
		grep -q "^ok [0-9]* - wr_set_xrc_srqn_lands_each_op_in_the_srq_it_names " "$tl_tmp/out/t1000.tap"
'
run_cmd perl "$src/tools/report/report-ranon" "$tl_tmp/out"
test_expect_success 'a report of that guest names Debian 13, its kernel and rdma-core 56 first' '
	out_has "^Debian 13 \(trixie\), kernel 6\.12\.[^ ]*, rdma-core 56\."
'
test_done
