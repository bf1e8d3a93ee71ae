#!/bin/sh
# SPDX-License-Identifier: MIT
# t6001: ibvct-run (fake-provider/tools/ibvct-run.c): script errors exit 2
# with "file:line: why", --print-env, the environment a program sees, exit
# status passing, and with --private the scratch dir: removed on success,
# kept on failure or with --keep. Without it, programs share a fake host:
# the same sysfs tree and daemon for every ibvct-run of the host; a host in
# use with another script is refused, --host NAME makes a second one.

# make check sets these; run by hand from build/t/ they follow from $0
here=$(cd "$(dirname "$0")" && pwd -P)
: "${IBVCT_BUILD:=$(dirname "$here")}" "${IBVCT_SRC:=$(dirname "$(dirname "$here")")}"
: "${IBVCT_LIBDIR:=$IBVCT_BUILD/lib}"
export IBVCT_LIBDIR
RUN=$IBVCT_BUILD/bin/ibvct-run
SCRIPTS=$IBVCT_SRC/fixtures/scripts
# a private TMPDIR: every scratch dir lands here, so leaks are visible
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/t6001.XXXXXX") || exit 1
export TMPDIR
# shared fake hosts of this test only
IBVCT_HOSTS_DIR=$TMPDIR/hosts
export IBVCT_HOSTS_DIR
OUT=$TMPDIR/out
ERR=$TMPDIR/err
trap 'rm -rf "$TMPDIR"' EXIT

n=0
fails=0
echo "1..25"
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	fails=$((fails + 1))
	echo "not ok $n - $1"
	[ -s "$OUT" ] && sed 's/^/# out: /' "$OUT"
	[ -s "$ERR" ] && sed 's/^/# err: /' "$ERR"
	return 0
}
check() {	# check NAME COMMAND...: the command's status decides
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
scratch_dirs() {
	ls -d "$TMPDIR"/ibvct.* 2>/dev/null
}

# 1-2: a bad script is refused with file:line, the program never runs
"$RUN" --script "$SCRIPTS/bad/bad-number.fps" -- sh -c 'echo ran' >"$OUT" 2>"$ERR"
rc=$?
check "bad_script_exits_2" test "$rc" -eq 2
check "bad_script_message_is_file_line_why_and_program_not_run" \
	sh -c '[ "$(cat "$1")" = "$2:3: max_qp: bad number '"'lots'"'" ] && ! [ -s "$3" ] && [ -z "$(ls -d "$4"/ibvct.* 2>/dev/null)" ]' \
	- "$ERR" "$SCRIPTS/bad/bad-number.fps" "$OUT" "$TMPDIR"

# 3: a missing script file
"$RUN" --script "$TMPDIR/none.fps" -- true >"$OUT" 2>"$ERR"
rc=$?
check "missing_script_exits_2_with_line_0" \
	sh -c '[ "$1" -eq 2 ] && grep -q "^$2:0: cannot open: " "$3"' - "$rc" "$TMPDIR/none.fps" "$ERR"

# 4-6: --print-env
"$RUN" --private --print-env >"$OUT" 2>"$ERR"
rc=$?
check "print_env_exits_0" test "$rc" -eq 0
(
	IBVCT_SCRIPT=/should/be/unset
	eval "$(cat "$OUT")" || exit 1
	libdir=$(cd "$IBVCT_LIBDIR" && pwd -P)
	case $LD_LIBRARY_PATH in "$libdir"|"$libdir":*) ;; *) exit 1 ;; esac
	[ "$RDMAV_DRIVERS" = "${IBVCT_PROVIDER:-$libdir/ibvct/libibvct-fake.so}" ] || exit 1
	[ -z "${IBVCT_SCRIPT+set}" ] || exit 1
	[ "$(cat "$SYSFS_PATH/class/infiniband_verbs/uverbs0/ibdev")" = fake0 ] || exit 1
	[ "$(cat "$SYSFS_PATH/class/infiniband/fake0/ports/1/state")" = "4: ACTIVE" ] || exit 1
	[ -d "$IBVCT_RUNDIR" ] || exit 1
	[ "$(dirname "$SYSFS_PATH")" = "$(dirname "$IBVCT_RUNDIR")" ] || exit 1
) >>"$OUT" 2>&1
check "print_env_sets_libdir_provider_sysfs_rundir_no_script" test $? -eq 0
for d in $(scratch_dirs); do rm -rf "$d"; done

cd "$SCRIPTS" || exit 1
"$RUN" --private --script two-devices.fps --print-env >"$OUT" 2>"$ERR"
(
	eval "$(cat "$OUT")" || exit 1
	[ "$IBVCT_SCRIPT" = "$(pwd -P)/two-devices.fps" ] || exit 1
	[ "$(cat "$SYSFS_PATH/class/infiniband_verbs/uverbs1/ibdev")" = fake1 ] || exit 1
) >>"$OUT" 2>&1
check "print_env_script_path_is_absolute" test $? -eq 0
for d in $(scratch_dirs); do rm -rf "$d"; done
cd "$TMPDIR" || exit 1

# 7-9: the program sees the environment; scratch dir gone after success
IBVCT_SCRIPT=/should/be/unset "$RUN" --private --script "$SCRIPTS/two-devices.fps" -- \
	sh -c 'echo "$SYSFS_PATH"; cat "$SYSFS_PATH/class/infiniband/fake1/ports/1/link_layer"; echo "$IBVCT_SCRIPT"' \
	>"$OUT" 2>"$ERR"
rc=$?
check "program_exit_0_passes_through" test "$rc" -eq 0
check "program_sees_sysfs_and_script" \
	sh -c '[ "$(sed -n 2p "$1")" = Ethernet ] && [ "$(sed -n 3p "$1")" = "$2" ]' \
	- "$OUT" "$SCRIPTS/two-devices.fps"
check "scratch_dir_removed_after_success" \
	sh -c '! [ -e "$(sed -n 1p "$1")" ] && [ -z "$(ls -d "$2"/ibvct.* 2>/dev/null)" ]' - "$OUT" "$TMPDIR"

# 10-11: a failing program: its status, and the scratch dir kept and named
"$RUN" --private -- sh -c 'echo "$SYSFS_PATH"; exit 7' >"$OUT" 2>"$ERR"
rc=$?
check "program_exit_status_passes_through" test "$rc" -eq 7
check "scratch_dir_kept_and_named_on_failure" \
	sh -c 'd=$(dirname "$(cat "$1")"); [ -d "$d" ] && grep -q "kept scratch dir $d" "$2"' - "$OUT" "$ERR"
for d in $(scratch_dirs); do rm -rf "$d"; done

# 12: killed by a signal: 128 + signal
"$RUN" -- sh -c 'kill -TERM $$' >"$OUT" 2>"$ERR"
rc=$?
check "killed_program_gives_128_plus_signal" test "$rc" -eq 143
for d in $(scratch_dirs); do rm -rf "$d"; done

# 13: --keep keeps it even on success
"$RUN" --private --keep -- sh -c 'echo "$SYSFS_PATH"' >"$OUT" 2>"$ERR"
check "keep_keeps_scratch_dir" sh -c '[ -d "$(cat "$1")" ]' - "$OUT"
for d in $(scratch_dirs); do rm -rf "$d"; done

# 14-15: usage errors and a program that does not exist
"$RUN" >"$OUT" 2>"$ERR"
check "no_program_exits_2" test $? -eq 2
"$RUN" -- /nonexistent/program >"$OUT" 2>"$ERR"
rc=$?
check "missing_program_exits_127" sh -c '[ "$1" -eq 127 ] && grep -q "/nonexistent/program" "$2"' - "$rc" "$ERR"
for d in $(scratch_dirs); do rm -rf "$d"; done

# 16: nothing left behind by any of the successful runs above
check "no_scratch_dirs_leak" test -z "$(scratch_dirs)"

# 17-23: shared fake hosts
"$RUN" -- sh -c 'echo "$SYSFS_PATH"; echo "$IBVCT_RUNDIR"' >"$OUT" 2>"$ERR"
"$RUN" -- sh -c 'echo "$SYSFS_PATH"; echo "$IBVCT_RUNDIR"' >"$OUT.2" 2>>"$ERR"
check "two_runs_share_one_host_by_default" \
	sh -c 'cmp -s "$1" "$2" && [ "$(dirname "$(sed -n 1p "$1")")" = "$3/host-default" ] &&
	       [ -d "$(sed -n 1p "$1")" ]' - "$OUT" "$OUT.2" "$IBVCT_HOSTS_DIR"
check "shared_hosts_dir_is_private_to_the_user" \
	sh -c '[ "$(stat -c %a "$1")" = 700 ]' - "$IBVCT_HOSTS_DIR"
# another script on a host in use: refused, with what to do instead
"$RUN" -- sh -c 'exec sleep 30' >/dev/null 2>&1 &
holder=$!
i=0
while ! [ -e "$IBVCT_HOSTS_DIR/host-default/users" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
"$RUN" --script "$SCRIPTS/two-devices.fps" -- sh -c 'echo ran' >"$OUT" 2>"$ERR"
rc=$?
check "another_script_on_a_host_in_use_is_refused" \
	sh -c '[ "$1" -eq 2 ] && ! [ -s "$2" ] && grep -q "is in use with another script" "$3" &&
	       grep -q -- "--host NAME" "$3"' - "$rc" "$OUT" "$ERR"
"$RUN" --host second --script "$SCRIPTS/two-devices.fps" -- \
	sh -c 'cat "$SYSFS_PATH/class/infiniband_verbs/uverbs1/ibdev"' >"$OUT" 2>"$ERR"
check "host_name_gives_a_second_host" \
	sh -c '[ "$(cat "$1")" = fake1 ] && [ -d "$2/host-second" ]' - "$OUT" "$IBVCT_HOSTS_DIR"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
# idle again: the host is rebuilt for the new script
"$RUN" --script "$SCRIPTS/two-devices.fps" -- \
	sh -c 'cat "$SYSFS_PATH/class/infiniband_verbs/uverbs1/ibdev"' >"$OUT" 2>"$ERR"
check "an_idle_host_takes_another_script" sh -c '[ "$(cat "$1")" = fake1 ]' - "$OUT"
"$RUN" --host 'bad/name' -- true >"$OUT" 2>"$ERR"
check "bad_host_name_exits_2" sh -c '[ "$1" -eq 2 ] && grep -q "host name" "$2"' - $? "$ERR"
"$RUN" --private --host x -- true >"$OUT" 2>"$ERR"
check "private_and_host_exclude_each_other" test $? -eq 2

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
	(
		eval "$("$RUN" --host daemon --print-env)"
		IBVCT_SCRIPT=$TMPDIR/two-ports.fps \
			env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} /usr/bin/ibv_devinfo -d fake0
	) >"$OUT" 2>"$ERR"
	rc=$?
	check "daemon_refuses_a_client_with_other_limits" \
		sh -c '[ "$1" -ne 0 ] && ! grep -q "hca_id" "$2" && grep -q "Failed to open device" "$3"' \
		- "$rc" "$OUT" "$ERR"
	(
		eval "$("$RUN" --host daemon --print-env)"
		env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} /usr/bin/ibv_devinfo -d fake0
	) >"$OUT" 2>"$ERR"
	check "daemon_serves_a_client_with_the_host_script" \
		sh -c '[ "$1" -eq 0 ] && grep -q "hca_id:.*fake0" "$2"' - $? "$OUT"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
else
	ok "# SKIP ibverbs-utils not installed"
	ok "# SKIP ibverbs-utils not installed"
fi
[ "$fails" -eq 0 ]
