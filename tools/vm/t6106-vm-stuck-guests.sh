#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 600
# t6106: tools/vm/ibvct-vm picks an accelerator that works, by what QEMU does
# with it, and knows a guest that will give nothing in seconds, not at its
# time limit. A QEMU stand-in (--qemu) plays each failure seen on real
# machines: a nested KVM that stops the guest with "KVM internal error"
# and pauses it, one that aborts QEMU at once, one that runs nothing; a
# guest whose console goes silent; a kernel panic. Under TCG the stand-in
# runs the real QEMU, so each fallback ends in a real boot. Needs no
# special machine: /dev/null stands in for a /dev/kvm that opens.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
# its guests are its own, never a pool's (make check runs under one)
unset IBVCT_VM_POOL
vm=$src/tools/vm/ibvct-vm
command -v qemu-system-x86_64 >/dev/null 2>&1 || test_bail "no qemu-system-x86_64 (ci/install-deps vm)"

# the stand-in: IBVCT_STANDIN names its behaviour; each start is logged
standin=$tl_tmp/qemu-standin
cat >"$standin" <<'EOF'
#!/bin/sh
# QEMU as a broken machine runs it; the real one where the mode allows
accel=tcg console= mac=
for a in "$@"; do
	case $a in
	kvm|tcg) accel=$a ;;
	file:*) console=${a#file:} ;;
	*mac=*) mac=${a##*mac=} ;;
	--version) exec qemu-system-x86_64 --version ;;
	esac
done
echo "accel=$(echo "$accel" | tr a-z A-Z) $mac" >>"$IBVCT_STANDIN_LOG"
case $IBVCT_STANDIN:$accel in
kvm-pause:kvm)
	echo "KVM internal error. Suberror: 1" >&2
	echo "extra data[0]: 0x0000000000000000" >&2
	echo "emulation failure" >&2
	exec sleep 100000 ;;
kvm-abort:kvm)
	echo "qemu-system-x86_64: kvm_buf_set_msrs: Assertion failed." >&2
	kill -ABRT $$ ;;
kvm-silent:kvm|silent:*)
	exec sleep 100000 ;;
silent-client:*)
	case $mac in *:02) exec sleep 100000 ;; esac ;;
panic:*)
	echo "Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100" >>"$console"
	exec sleep 100000 ;;
panic-once:*)
	# the first boot dies before init runs, the next one boots
	if [ "$(wc -l <"$IBVCT_STANDIN_LOG")" = 1 ]; then
		echo "Kernel panic - not syncing: Attempted to kill the idle task!" >>"$console"
		exec sleep 100000
	fi ;;
esac
exec qemu-system-x86_64 "$@"
EOF
chmod +x "$standin"

# every run: a private accelerator cache, /dev/null for /dev/kvm, scratch
# dirs inside this test's
TMPDIR=$tl_tmp
IBVCT_VM_ACCEL_CACHE=$tl_tmp/accel
IBVCT_VM_KVM_DEV=/dev/null
IBVCT_STANDIN_LOG=$tl_tmp/starts
export TMPDIR IBVCT_VM_ACCEL_CACHE IBVCT_VM_KVM_DEV IBVCT_STANDIN_LOG
cd "$tl_tmp" || test_bail "cannot cd to $tl_tmp"
# vmrun MODE [ENV=VALUE]... -- ARGS: the runner with the stand-in in MODE;
# its result file is $tl_tmp/r, its starts $tl_tmp/starts
vmrun() {
	vr_mode=$1
	shift
	: >"$IBVCT_STANDIN_LOG"
	rm -f "$tl_tmp/r"
	run_cmd env IBVCT_STANDIN="$vr_mode" "$@"
}
res_has() { grep -Eq -- "$1" "$tl_tmp/r"; }
# starts ACCEL: how many QEMUs the last run started with that accelerator
starts() { grep -c "^accel=$1" "$IBVCT_STANDIN_LOG"; }

run_cmd sh "$vm" kernel
test_expect_success 'the kernel is there (fetched or cached)' 'rc_is 0 && out_has "^dir=/"'
kname=$(sed -n 's|^dir=.*/||p' "$tl_out")
# the name of the kept answer for the stand-in, this boot and this kernel
kf=$IBVCT_VM_ACCEL_CACHE/$(cat /proc/sys/kernel/random/boot_id)-$(
	{ command -v "$standin"; "$standin" --version | head -n 1; } | cksum | cut -d" " -f1)-$kname

# ---- the accelerator ---------------------------------------------------------
vmrun kvm-pause sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- uname -r
test_expect_success 'KVM that stops the guest with an internal error: its probe fails, the guest runs under TCG' '
	cat "$tl_tmp/r"; cat "$IBVCT_STANDIN_LOG"
	rc_is 0 && res_has "^accelerator=TCG$" &&
	res_has "^accelerator.why=KVM failed its probe boot: QEMU stopped the guest under KVM: KVM internal error" &&
	[ "$(starts KVM)" = 1 ] && [ "$(starts TCG)" = 1 ]
'
test_expect_success 'the answer is kept for this host boot, QEMU and kernel' '
	ls -l "$IBVCT_VM_ACCEL_CACHE"; cat "$IBVCT_VM_ACCEL_CACHE"/*
	f=$(ls "$IBVCT_VM_ACCEL_CACHE"/*) &&
	case ${f##*/} in "$(cat /proc/sys/kernel/random/boot_id)"-*) ;; *) false ;; esac &&
	grep -q "^TCG KVM failed its probe boot" "$f"
'
vmrun kvm-pause sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- true
test_expect_success 'the next guest takes the kept answer: no probe again' '
	cat "$IBVCT_STANDIN_LOG"
	rc_is 0 && res_has "^accelerator=TCG$" && [ "$(starts KVM)" = 0 ]
'

rm -rf "$IBVCT_VM_ACCEL_CACHE"
vmrun kvm-abort sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- true
test_expect_success 'KVM that aborts QEMU at once: TCG, with QEMU'"'"'s words as the reason' '
	cat "$tl_tmp/r"
	rc_is 0 && res_has "^accelerator=TCG$" &&
	res_has "^accelerator.why=KVM failed its probe boot: QEMU exited 134: .*Assertion"
'

rm -rf "$IBVCT_VM_ACCEL_CACHE"
vmrun kvm-silent env IBVCT_VM_PROBE_SILENCE=2 sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- true
test_expect_success 'KVM that runs nothing (a silent console): TCG after the probe'"'"'s silence' '
	cat "$tl_tmp/r"
	rc_is 0 && res_has "^accelerator=TCG$" &&
	res_has "^accelerator.why=KVM failed its probe boot: the guest is stuck: no console output for [0-9]+ s \(none at all\)"
'

vmrun kvm-pause env IBVCT_VM_ACCEL=KVM sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- true
test_expect_success 'IBVCT_VM_ACCEL=kvm: KVM as asked, no probe, no fallback: no result (125) with the reason' '
	cat "$tl_tmp/r"; cat "$tl_err"
	rc_is 125 && res_has "^result=no-result$" && res_has "^accelerator=KVM$" &&
	res_has "^reason=QEMU stopped the guest under KVM: KVM internal error" &&
	[ "$(starts TCG)" = 0 ]
'
# a kept answer of KVM (the probe passed), then a guest that KVM stops:
# the same guest again under TCG, and TCG kept from then on
mkdir -p "$IBVCT_VM_ACCEL_CACHE"
echo KVM >"$kf"
vmrun kvm-pause sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- uname -r
test_expect_success 'KVM kept from a probe, then a guest KVM stops: the same guest again under TCG' '
	cat "$tl_tmp/r"; cat "$tl_err"; cat "$IBVCT_STANDIN_LOG"
	rc_is 0 && out_has "^[0-9]" && res_has "^result=ok$" && res_has "^accelerator=TCG$" &&
	res_has "^accelerator.fallback=KVM failed: QEMU stopped the guest under KVM" &&
	[ "$(starts KVM)" = 1 ] && [ "$(starts TCG)" = 1 ] && grep -q "^TCG KVM failed" "$kf"
'
vmrun tcg env IBVCT_VM_ACCEL=tcg sh "$vm" run --qemu "$standin" --result "$tl_tmp/r" -- true
test_expect_success 'IBVCT_VM_ACCEL=tcg: TCG, and the result says it was asked for' '
	rc_is 0 && res_has "^accelerator=TCG$" && res_has "^accelerator.why=IBVCT_VM_ACCEL=tcg$"
'
vmrun tcg env IBVCT_VM_ACCEL=fast sh "$vm" run --qemu "$standin" -- true
test_expect_success 'IBVCT_VM_ACCEL of another value is a usage error (2), nothing booted' '
	rc_is 2 && err_has "IBVCT_VM_ACCEL: auto, [k]vm or tcg" && [ ! -s "$IBVCT_STANDIN_LOG" ]
'

# ---- a guest that is stuck is known at once ------------------------------------
# (a limit of 600 s: each of these ends long before it, by its reason)
vmrun silent env IBVCT_VM_ACCEL=tcg IBVCT_VM_SILENCE=3 sh "$vm" run --qemu "$standin" --timeout 600 \
	--result "$tl_tmp/r" -- true
test_expect_success 'a silent console: no result (125), the guest is stuck, not at its limit' '
	cat "$tl_tmp/r"; cat "$tl_err"
	rc_is 125 && res_has "^reason=the guest is stuck: no console output for [0-9]+ s" &&
	! res_has "time limit"
'
vmrun panic env IBVCT_VM_ACCEL=tcg sh "$vm" run --qemu "$standin" --timeout 600 --result "$tl_tmp/r" -- true
cp "$IBVCT_STANDIN_LOG" "$tl_tmp/panic.starts"
test_expect_success 'a kernel that panics at every boot, before the init of the guest: no result (125), with the panic line' '
	cat "$tl_tmp/r"
	rc_is 125 && res_has "^reason=the guest.s kernel panicked: Kernel panic - not syncing: Attempted to kill init"
'
vmrun panic-once env IBVCT_VM_ACCEL=tcg sh "$vm" run --qemu "$standin" --timeout 600 --result "$tl_tmp/r" -- true
test_expect_success 'a kernel that dies before ibvct'"'"'s init runs is booted again: a result, and the result says so' '
	cat "$tl_tmp/r"; cat "$tl_err"
	rc_is 0 && res_has "^result=ok$" && [ "$(starts TCG)" = 2 ] && res_has "^boot.retries=1$" &&
	res_has "^boot.why=the guest.s kernel panicked: Kernel panic - not syncing: Attempted to kill the idle task" &&
	err_has "booting it again"
'
test_expect_success 'one that panics at every boot: no result after three boots' '
	[ "$(grep -c . "$tl_tmp/panic.starts")" = 3 ]
'
vmrun tcg env IBVCT_VM_ACCEL=tcg IBVCT_VM_SILENCE=8 sh "$vm" run --qemu "$standin" --timeout 120 \
	--result "$tl_tmp/r" --console "$tl_tmp/hb.console" -- sleep 24
test_expect_success 'a command that runs three times the silence is no stuck guest: the heartbeat' '
	cat "$tl_tmp/r"; cat "$tl_err"; grep -c "alive" "$tl_tmp/hb.console"
	rc_is 0 && res_has "^result=ok$" && res_has "^status=0$" &&
	[ "$(grep -c "^ibvct-vm-guest: .* alive" "$tl_tmp/hb.console")" -ge 3 ]
'
vmrun silent-client env IBVCT_VM_ACCEL=tcg IBVCT_VM_SILENCE=3 sh "$vm" pair --qemu "$standin" \
	--timeout 600 --result "$tl_tmp/r" --server 'sleep 100000' --client 'true'
test_expect_success 'a pair whose client is stuck: no result for both, the server ended with it' '
	cat "$tl_tmp/r"; cat "$tl_err"
	rc_is 125 && res_has "^reason=.*client: the guest is stuck: no console output" &&
	res_has "^reason=server: ended with its peer, which gave no result"
'

# ---- a guest the host starves is not silent -------------------------------------
# The watch counts silence only while QEMU could run: a spinning stand-in at
# the idle scheduling class shares CPU 0 with a hog; while the hog runs the
# stand-in waits for the CPU and its silence does not count; after the hog
# ends (the test stops it) the stand-in spins silent and is ended. A watch
# that counted the wall clock ends it while the hog still runs.
watch=${IBVCT_BUILD:-$src/build}/bin/ibvct-vm-watch
if command -v taskset >/dev/null 2>&1 && command -v chrt >/dev/null 2>&1 && [ -x "$watch" ]; then
	: >"$tl_tmp/starve.order"
	taskset -c 0 sh -c 'while [ ! -e "$1" ]; do :; done' - "$tl_tmp/starve.stop" &
	hog=$!
	( "$watch" -c "$tl_tmp/starve.console" -l "$tl_tmp/starve.log" -r "$tl_tmp/starve.reason" -s 2 -t 600 \
		-- taskset -c 0 chrt --idle 0 sh -c 'while :; do :; done'
	  echo "watch $?" >>"$tl_tmp/starve.order" ) &
	watcher=$!
	# the hog holds CPU 0 for 6 s (three times the silence) of the test's time
	sleep 6
	echo "hog stopped" >>"$tl_tmp/starve.order"
	: >"$tl_tmp/starve.stop"
	wait "$hog"
	wait "$watcher"
	test_expect_success 'a guest waiting for a CPU is not silent for that time; once it runs, its silence ends it (122)' '
		cat "$tl_tmp/starve.order" "$tl_tmp/starve.reason"
		[ "$(cat "$tl_tmp/starve.order")" = "hog stopped
watch 122" ] && grep -Eq "^silent: no console output for [0-9]+ s \(none at all\), [0-9]+ s of it with QEMU waiting for a CPU$" "$tl_tmp/starve.reason"
	'
else
	test_expect_success 'a guest waiting for a CPU is not silent for that time (needs taskset, chrt and the watch)' '
		echo "missing: taskset or chrt (util-linux) or $watch"; false
	'
fi

# ---- an interrupted runner leaves nothing -------------------------------------
: >"$IBVCT_STANDIN_LOG"
mkdir -p "$tl_tmp/sig"
IBVCT_STANDIN=silent IBVCT_VM_ACCEL=tcg IBVCT_VM_SILENCE=600 TMPDIR=$tl_tmp/sig \
	sh "$vm" run --qemu "$standin" -- true >"$tl_tmp/sig.out" 2>&1 &
runner=$!
i=0
while [ "$(starts TCG)" = 0 ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
left_before=$(ls "$tl_tmp/sig")
kill -TERM "$runner"
wait "$runner"
sig_rc=$?
# what of it still runs: a process whose command line names the scratch dir
left=
for f in /proc/[0-9]*/cmdline; do
	case $(tr '\0' ' ' 2>/dev/null <"$f") in
	*"$tl_tmp/sig"*) left="$left ${f#/proc/}" ;;
	esac
done
test_expect_success 'SIGTERM to a runner with a guest up: it exits 143, its QEMU and scratch dir gone' '
	echo "scratch before: $left_before; status $sig_rc"; cat "$tl_tmp/sig.out"
	echo "still running: $left"; ls -la "$tl_tmp/sig"
	[ -n "$left_before" ] && [ "$sig_rc" = 143 ] && [ -z "$left" ] && [ -z "$(ls "$tl_tmp/sig")" ]
'
test_done
