#!/bin/sh
# SPDX-License-Identifier: MIT
# t6100: tools/vm/ibvct-vm run, the rxe-vm target's guest runner, on the
# distribution's kernel under QEMU (TCG here, KVM where /dev/kvm opens).
# Two guests, side by side: one runs a script of the host that prints to
# stdout and stderr, writes into an --out dir, runs Debian's ibv_devinfo on
# the guest's real rxe0 and exits 7: the status, both streams and the files
# come back. The other runs a command that never ends: the guest is ended
# at its limit, the status is "no result" (125) with the console log kept,
# never a status of the command. And usage errors, which boot nothing.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
# its guests are its own, never a pool's (make check runs under one)
unset IBVCT_VM_POOL
vm=$src/tools/vm/ibvct-vm
skip_all_unless_utils ibv_devinfo

run_cmd sh "$vm" run
test_expect_success 'run without a program is a usage error (2)' '
	rc_is 2 && err_has "run: no program"
'
run_cmd sh "$vm" run --timeout soon -- true
test_expect_success 'a timeout that is not a number is a usage error (2)' '
	rc_is 2 && err_has "whole numbers"
'

# The kernel comes first (fetched once into the cache; a missing package or
# mirror is named here, and the test fails on it).
run_cmd sh "$vm" kernel
test_expect_success 'the kernel package is fetched and unpacked (or cached)' '
	rc_is 0 && out_has "^release=" && out_has "^dir=/"
'
kdir=$(sed -n 's/^dir=//p' "$tl_out")
# (as a pattern: Debian 13's kernel names hold a "+")
kdir_re=$(printf '%s' "$kdir" | sed 's/[].[*^$+?(){}|\\]/\\&/g')
test_expect_success 'the kernel dir has vmlinuz and the modules in load order, crc32_generic before rdma_rxe' '
	cat "$kdir/modules.load"
	[ -s "$kdir/vmlinuz" ] &&
	c=$(grep -n "^crc32_generic\.ko$" "$kdir/modules.load" | cut -d: -f1) &&
	r=$(grep -n "^rdma_rxe\.ko$" "$kdir/modules.load" | cut -d: -f1) &&
	[ -n "$c" ] && [ -n "$r" ] && [ "$c" -lt "$r" ]
'
run_cmd sh "$vm" kernel
test_expect_success 'a second call uses the cache' '
	rc_is 0 && ! err_has "unpacking|fetching" && out_has "^dir=$kdir_re$"
'
deb=$(sed -n 's/^deb=//p' "$tl_out")
ln -s "$deb" "$tl_tmp/named.deb"
run_cmd sh "$vm" kernel --kernel "$tl_tmp/named.deb"
test_expect_success 'a .deb named with --kernel is keyed by its content: the same kernel dir' '
	rc_is 0 && out_has "^dir=$kdir_re$"
'
mkdir -p "$tl_tmp/notkernel/DEBIAN"
printf 'Package: ibvct-t6100\nVersion: 1\nArchitecture: all\nMaintainer: t6100 <t@invalid>\nDescription: not a kernel\n' \
	>"$tl_tmp/notkernel/DEBIAN/control"
dpkg-deb -b "$tl_tmp/notkernel" "$tl_tmp/notkernel.deb" >/dev/null 2>&1
run_cmd sh "$vm" kernel --kernel "$tl_tmp/notkernel.deb"
test_expect_success 'a .deb that is no kernel image is refused with the reason' '
	! rc_is 0 && err_has "not a kernel image package"
'

# the two guests, at once
out=$tl_tmp/out
cat >"$tl_tmp/work.sh" <<'EOF'
#!/bin/sh
echo "to stdout"
echo "to stderr" >&2
echo "written in the guest" >"$1/file"
mkdir "$1/sub" && uname -r >"$1/sub/uname"
echo "gid $IBVCT_VM_GID accel $IBVCT_VM_ACCEL cwd $(pwd)"
ibv_devinfo -d rxe0
exit 7
EOF
cd "$tl_tmp" || test_bail "cannot cd to $tl_tmp"
# the runs' scratch dirs (kept when a guest gave no result) go with the test's
TMPDIR=$tl_tmp
export TMPDIR
mult=${IBVCT_TIMEOUT_MULT:-1}
test_parallel 2 sh -c 'sh "$1" run --out "$2" --result "$3/r1" -- sh "$3/work.sh" "$2" \
	>"$3/o1" 2>"$3/e1"; echo $? >"$3/rc1"' - "$vm" "$out" "$tl_tmp"
test_parallel 2 sh -c 'sh "$1" run --timeout 1 --boot $((12 * $3)) --result "$2/r2" -- sleep 100000 \
	>"$2/o2" 2>"$2/e2"; echo $? >"$2/rc2"' - "$vm" "$tl_tmp" "$mult"
test_parallel_wait

test_expect_success 'the command status comes back (7)' '
	cat "$tl_tmp/e1" "$tl_tmp/r1"
	[ "$(cat "$tl_tmp/rc1")" = 7 ]
'
test_expect_success 'its stdout and stderr come back on the same streams' '
	cat "$tl_tmp/o1" "$tl_tmp/e1"
	grep -qx "to stdout" "$tl_tmp/o1" && grep -qx "to stderr" "$tl_tmp/e1" &&
	! grep -q "to stderr" "$tl_tmp/o1" && ! grep -q "^ibvct-vm:" "$tl_tmp/o1"
'
test_expect_success 'it ran in the caller cwd, with the GID index and accelerator' '
	cat "$tl_tmp/o1"
	grep -Eqx "gid [0-9]+ accel (KVM|TCG) cwd $(pwd -P)" "$tl_tmp/o1"
'
test_expect_success 'ibv_devinfo in the guest: rxe0 on a real kernel, port active' '
	cat "$tl_tmp/o1"
	grep -Eq "hca_id:[[:space:]]+rxe0$" "$tl_tmp/o1" &&
	grep -q "PORT_ACTIVE" "$tl_tmp/o1" && grep -q "link_layer:[[:space:]]*Ethernet" "$tl_tmp/o1"
'
test_expect_success 'what it wrote under --out is on the host' '
	ls -lR "$out"
	[ "$(cat "$out/file")" = "written in the guest" ] && [ -s "$out/sub/uname" ]
'
test_expect_success 'the result file names the kernel, the accelerator and the status' '
	cat "$tl_tmp/r1"
	grep -qx "result=ok" "$tl_tmp/r1" && grep -qx "status=7" "$tl_tmp/r1" &&
	grep -Eqx "accelerator=(KVM|TCG)" "$tl_tmp/r1" &&
	grep -qx "kernel.release=$(cat "$out/sub/uname")" "$tl_tmp/r1"
'
acc=$(sed -n 's/^accelerator=//p' "$tl_tmp/r1")
secs=$(sed -n 's/^seconds=//p' "$tl_tmp/r1")
test_expect_success 'a guest that never ends: no result (125), never a status' '
	cat "$tl_tmp/e2" "$tl_tmp/r2"
	[ "$(cat "$tl_tmp/rc2")" = 125 ] &&
	grep -q "^ibvct-vm: no result: the guest was ended at its time limit" "$tl_tmp/e2" &&
	grep -qx "result=no-result" "$tl_tmp/r2" && ! grep -q "^status=" "$tl_tmp/r2"
'
console=$(sed -n 's/^console=//p' "$tl_tmp/r2")
# (on a machine busy enough the guest may not even reach the command in
# its allowance: still no result, and its console says how far it got)
test_expect_success 'its console log is kept; when the guest got as far, it shows the command' '
	echo "console: $console"; tail -n 5 "$console"
	[ -f "$console" ] &&
	{ ! grep -q "ibvct-vm-guest: .*running" "$console" ||
	  grep -q "ibvct-vm-guest: .*running sleep 100000" "$console"; }
'
test_note "accelerator $acc; a guest that ran ibv_devinfo took $secs s, boot included"
test_done
