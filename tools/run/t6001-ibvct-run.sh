#!/bin/sh
# SPDX-License-Identifier: MIT
# t6001: ibvct-run (tools/run/ibvct-run.c): script errors exit 2
# with "file:line: why", --print-env, the environment a program sees, exit
# status passing, and with --private the scratch dir: removed on success,
# kept on failure or with --keep. Without it, programs share a fake host:
# the same sysfs tree and daemon for every ibvct-run of the host; a host in
# use with another script is refused, --host NAME makes a second one.
set -u
# make check sets these; run by hand from build/t/ they follow from $0
here=$(cd "$(dirname "$0")" && pwd -P)
: "${IBVCT_BUILD:=$(dirname "$here")}" "${IBVCT_SRC:=$(dirname "$(dirname "$here")")}"
: "${IBVCT_LIBDIR:=$IBVCT_BUILD/lib}"
export IBVCT_LIBDIR
. "$IBVCT_SRC/testkit/sh/test-lib.sh"
RUN=$IBVCT_BUILD/bin/ibvct-run
SCRIPTS=$IBVCT_SRC/fixtures/scripts
# a private TMPDIR: every scratch dir lands here, so leaks are visible
TMPDIR=$tl_tmp
export TMPDIR
# shared fake hosts of this test only
IBVCT_HOSTS_DIR=$TMPDIR/hosts
export IBVCT_HOSTS_DIR
# every run's output: $tl_out, $tl_err (shown under a failed check)
OUT=$tl_out
ERR=$tl_err
scratch_dirs() {
	ls -d "$TMPDIR"/ibvct.* 2>/dev/null
}

# 1-2: a bad script is refused with file:line, the program never runs
run_cmd "$RUN" --script "$SCRIPTS/bad/bad-number.fps" -- sh -c 'echo ran'
test_expect_success "bad_script_exits_2" 'rc_is 2'
test_expect_success "bad_script_message_is_file_line_why_and_program_not_run" '
	[ "$(cat "$ERR")" = "$SCRIPTS/bad/bad-number.fps:3: max_qp: bad number '\''lots'\''" ] &&
	! [ -s "$OUT" ] && [ -z "$(scratch_dirs)" ]
'

# 3: a missing script file
run_cmd "$RUN" --script "$TMPDIR/none.fps" -- true
test_expect_success "missing_script_exits_2_with_line_0" '
	rc_is 2 && grep -q "^$TMPDIR/none.fps:0: cannot open: " "$ERR"
'

# 4-6: --print-env
run_cmd "$RUN" --private --print-env
test_expect_success "print_env_exits_0" 'rc_is 0'
test_expect_success "print_env_sets_libdir_provider_sysfs_rundir_no_script" '
	IBVCT_SCRIPT=/should/be/unset
	eval "$(cat "$OUT")" || exit 1
	libdir=$(cd "$IBVCT_LIBDIR" && pwd -P)
	case $LD_LIBRARY_PATH in "$libdir"|"$libdir":*) ;; *) exit 1 ;; esac
	[ "$RDMAV_DRIVERS" = "${IBVCT_PROVIDER:-$libdir/ibvct/libibvct-fake.so}" ] || exit 1
	[ -z "${IBVCT_SCRIPT+set}" ] || exit 1
	[ "$(cat "$SYSFS_PATH/class/infiniband_verbs/uverbs0/ibdev")" = fake0 ] || exit 1
	[ "$(cat "$SYSFS_PATH/class/infiniband/fake0/ports/1/state")" = "4: ACTIVE" ] || exit 1
	[ -d "$IBVCT_RUNDIR" ] || exit 1
	[ "$(dirname "$SYSFS_PATH")" = "$(dirname "$IBVCT_RUNDIR")" ]
'
for d in $(scratch_dirs); do rm -rf "$d"; done

cd "$SCRIPTS" || exit 1
run_cmd "$RUN" --private --script two-devices.fps --print-env
test_expect_success "print_env_script_path_is_absolute" '
	eval "$(cat "$OUT")" || exit 1
	[ "$IBVCT_SCRIPT" = "$(pwd -P)/two-devices.fps" ] || exit 1
	[ "$(cat "$SYSFS_PATH/class/infiniband_verbs/uverbs1/ibdev")" = fake1 ]
'
for d in $(scratch_dirs); do rm -rf "$d"; done
cd "$TMPDIR" || exit 1

# 7-9: the program sees the environment; scratch dir gone after success
run_cmd env IBVCT_SCRIPT=/should/be/unset "$RUN" --private --script "$SCRIPTS/two-devices.fps" -- \
	sh -c 'echo "$SYSFS_PATH"; cat "$SYSFS_PATH/class/infiniband/fake1/ports/1/link_layer"; echo "$IBVCT_SCRIPT"'
test_expect_success "program_exit_0_passes_through" 'rc_is 0'
test_expect_success "program_sees_sysfs_and_script" '
	[ "$(sed -n 2p "$OUT")" = Ethernet ] && [ "$(sed -n 3p "$OUT")" = "$SCRIPTS/two-devices.fps" ]
'
test_expect_success "scratch_dir_removed_after_success" '
	! [ -e "$(sed -n 1p "$OUT")" ] && [ -z "$(scratch_dirs)" ]
'

# 10-11: a failing program: its status, and the scratch dir kept and named
run_cmd "$RUN" --private -- sh -c 'echo "$SYSFS_PATH"; exit 7'
test_expect_success "program_exit_status_passes_through" 'rc_is 7'
test_expect_success "scratch_dir_kept_and_named_on_failure" '
	d=$(dirname "$(cat "$OUT")"); [ -d "$d" ] && grep -q "kept scratch dir $d" "$ERR"
'
for d in $(scratch_dirs); do rm -rf "$d"; done

# 12: killed by a signal: 128 + signal
run_cmd "$RUN" -- sh -c 'kill -TERM $$'
test_expect_success "killed_program_gives_128_plus_signal" 'rc_is 143'
for d in $(scratch_dirs); do rm -rf "$d"; done

# 13: --keep keeps it even on success
run_cmd "$RUN" --private --keep -- sh -c 'echo "$SYSFS_PATH"'
test_expect_success "keep_keeps_scratch_dir" '[ -d "$(cat "$OUT")" ]'
for d in $(scratch_dirs); do rm -rf "$d"; done

# 14-15: usage errors and a program that does not exist
run_cmd "$RUN"
test_expect_success "no_program_exits_2" 'rc_is 2'
run_cmd "$RUN" -- /nonexistent/program
test_expect_success "missing_program_exits_127" 'rc_is 127 && grep -q "/nonexistent/program" "$ERR"'
for d in $(scratch_dirs); do rm -rf "$d"; done

# 16: nothing left behind by any of the successful runs above
test_expect_success "no_scratch_dirs_leak" 'scratch_dirs; [ -z "$(scratch_dirs)" ]'

# 17-23: shared fake hosts
run_cmd "$RUN" -- sh -c 'echo "$SYSFS_PATH"; echo "$IBVCT_RUNDIR"'
cp "$OUT" "$TMPDIR/first.out"
run_cmd "$RUN" -- sh -c 'echo "$SYSFS_PATH"; echo "$IBVCT_RUNDIR"'
test_expect_success "two_runs_share_one_host_by_default" '
	cmp "$TMPDIR/first.out" "$OUT" &&
	[ "$(dirname "$(sed -n 1p "$OUT")")" = "$IBVCT_HOSTS_DIR/host-default" ] &&
	[ -d "$(sed -n 1p "$OUT")" ]
'
test_expect_success "shared_hosts_dir_is_private_to_the_user" '[ "$(stat -c %a "$IBVCT_HOSTS_DIR")" = 700 ]'
# another script on a host in use: refused, with what to do instead
"$RUN" -- sh -c 'exec sleep 30' >/dev/null 2>&1 &
holder=$!
i=0
while ! [ -e "$IBVCT_HOSTS_DIR/host-default/users" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
run_cmd "$RUN" --script "$SCRIPTS/two-devices.fps" -- sh -c 'echo ran'
test_expect_success "another_script_on_a_host_in_use_is_refused" '
	rc_is 2 && ! [ -s "$OUT" ] && grep -q "is in use with another script" "$ERR" &&
	grep -q -- "--host NAME" "$ERR"
'
run_cmd "$RUN" --host second --script "$SCRIPTS/two-devices.fps" -- \
	sh -c 'cat "$SYSFS_PATH/class/infiniband_verbs/uverbs1/ibdev"'
test_expect_success "host_name_gives_a_second_host" '
	[ "$(cat "$OUT")" = fake1 ] && [ -d "$IBVCT_HOSTS_DIR/host-second" ]
'
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
# idle again: the host is rebuilt for the new script
run_cmd "$RUN" --script "$SCRIPTS/two-devices.fps" -- \
	sh -c 'cat "$SYSFS_PATH/class/infiniband_verbs/uverbs1/ibdev"'
test_expect_success "an_idle_host_takes_another_script" '[ "$(cat "$OUT")" = fake1 ]'
run_cmd "$RUN" --host 'bad/name' -- true
test_expect_success "bad_host_name_exits_2" 'rc_is 2 && grep -q "host name" "$ERR"'
run_cmd "$RUN" --private --host x -- true
test_expect_success "private_and_host_exclude_each_other" 'rc_is 2'

# 24-25: the host's daemon knows the host's script: a program set up by
# hand with another script (more ports) is refused, not mixed in
if [ -x /usr/bin/ibv_rc_pingpong ] && [ -x /usr/bin/ibv_devinfo ]; then
	"$RUN" --host daemon -- env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} \
		/usr/bin/ibv_rc_pingpong -p 0 >/dev/null 2>&1 &
	holder=$!
	i=0
	while ! [ -S "$IBVCT_HOSTS_DIR/host-daemon/run/fkd.sock" ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	printf 'device fake0\n\tcap xrc\n\tport 1 state active\n\tport 2 state active\n' \
		>"$TMPDIR/two-ports.fps"
	# by_hand [VAR=VALUE] PROGRAM...: PROGRAM in the environment of
	# `ibvct-run --host daemon --print-env`, plus VAR
	by_hand() (
		eval "$("$RUN" --host daemon --print-env)"
		exec env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$@"
	)
	run_cmd by_hand IBVCT_SCRIPT="$TMPDIR/two-ports.fps" /usr/bin/ibv_devinfo -d fake0
	test_expect_success "daemon_refuses_a_client_with_other_limits" '
		! rc_is 0 && ! grep -q "hca_id" "$OUT" && grep -q "Failed to open device" "$ERR"
	'
	run_cmd by_hand /usr/bin/ibv_devinfo -d fake0
	test_expect_success "daemon_serves_a_client_with_the_host_script" '
		rc_is 0 && grep -q "hca_id:.*fake0" "$OUT"
	'
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
else
	test_skip "daemon_refuses_a_client_with_other_limits" "ibverbs-utils not installed"
	test_skip "daemon_serves_a_client_with_the_host_script" "ibverbs-utils not installed"
fi
test_done
