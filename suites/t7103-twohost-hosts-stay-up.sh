#!/bin/sh
# SPDX-License-Identifier: MIT
# t7103: the two fake hosts of t3200 (testkit/runner/th.c th2_pair) own their
# addresses on the fabric whatever the timing of the other fake hosts the
# harness makes. Each host's device probe (th_probe) runs on a fake host of
# its own (fp_env_setup's run dir and daemon) with that host's port and
# GIDs; were it on the fabric, it would claim host B's address first, and
# while its daemon is up host B's own claim is refused (the first keeps an
# address: fake-provider/verbs/fabric.c fp__fabric_publish), so host A's
# first RC send goes to the probe's daemon, which knows no such QP, and ends
# in RETRY_EXC_ERR. An idle daemon exits on its own, once it is scheduled:
# on a loaded machine the race was lost now and then (HOST-01 failed in
# parallel conformance runs). Here every daemon stays up when idle (-k,
# through IBVCT_FKD_WRAPPER, as a kernel does), which makes that timing
# certain: every test of t3200 must still pass.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
TMPDIR=$tmp
export TMPDIR
prog=$build/suites/ref/t3200-twohost-traffic.t
pids=$tmp/fkd.pids

# the daemons' wrapper: each one's pid (exec keeps it), then the daemon,
# staying when its last client goes
cat >"$tmp/stay.sh" <<EOF
#!/bin/sh
echo \$\$ >>"$pids"
d=\$1
shift
exec "\$d" -k "\$@"
EOF
chmod +x "$tmp/stay.sh"
: >"$pids"

for cfg in legacy-current extended-current; do
	printf 'mode %s\nlifetime %s\nprofile strict\ndevice fake0\n\tcap xrc\n\tport 1 state active\n' \
		"${cfg%-*}" "${cfg#*-}" >"$tmp/$cfg.fps"
	IBVCT_FKD_WRAPPER=$tmp/stay.sh IBVCT_SCRIPT=$tmp/$cfg.fps "$prog" >"$tmp/$cfg.out" 2>&1
	echo "exit $?" >>"$tmp/$cfg.out"
	out=$tmp/$cfg.out
	test_expect_success "$cfg: every daemon stays up, and every test of t3200 passes (HOST-01 first)" '
		cat "$out"
		grep -q "^ok 1 - rc_send_and_send_imm_cross_hosts " "$out" &&
		! grep -q "^not ok" "$out" && grep -q "^exit 0\$" "$out"
	'
done

# The wrapper ran for the daemons (else the check above proved nothing):
# two hosts and their two probes a run; they are ended here, by pid.
n=$(wc -l <"$pids")
test_expect_success 'the daemons were started through the wrapper (four a run)' '
	echo "$n daemons: $(tr "\n" " " <"$pids")"
	[ "$n" -ge 8 ]
'
for p in $(cat "$pids"); do
	case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
	*ibvct-fkd*) kill "$p" 2>/dev/null ;;
	esac
done
test_done
