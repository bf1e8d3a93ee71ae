#!/bin/sh
# SPDX-License-Identifier: MIT
# t5204: the fake kernel daemon started by hand (ibvct-fkd): its options,
# the errors it refuses to start with (each a clear message and status 1 or
# 2, nothing left listening), one daemon per run dir, and SIGTERM removing
# its socket and pid file.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "${IBVCT_SRC:-$(dirname "$(dirname "$here")")}/testkit/sh/test-lib.sh"
setup_ibvct_run
FKD=$IBVCT_BUILD/bin/ibvct-fkd
mult=${IBVCT_TIMEOUT_MULT:-1}

# fkd ARGS...: runs the daemon in the foreground; output in $tl_out/$tl_err,
# status in $tl_rc
fkd() { run_cmd "$FKD" "$@"; }

fkd -h
test_expect_success "-h prints the usage on stdout and exits 0" '
	rc_is 0 && out_has "^usage: ibvct-fkd" && [ ! -s "$tl_err" ]
'

fkd --no-such-option
test_expect_success "an unknown option: the usage on stderr, status 2" '
	rc_is 2 && err_has "^usage: ibvct-fkd"
'

fkd -r "$tl_tmp/rd" extra-word
test_expect_success "an extra argument: status 2, nothing started" '
	rc_is 2 && [ ! -e "$tl_tmp/rd" ]
'

fkd -l "$tl_tmp/no/such/dir/log" -r "$tl_tmp/rd"
test_expect_success "a log file that cannot be opened: status 1, named with the reason" '
	rc_is 1 && err_has "no/such/dir/log: No such file or directory"
'

printf 'device fake0\nbogus directive\n' >"$tl_tmp/bad.fps"
fkd -s "$tl_tmp/bad.fps" -r "$tl_tmp/rd"
test_expect_success "a bad host script: status 1 with file:line, nothing listening" '
	rc_is 1 && err_has "bad.fps:2:" && [ ! -S "$tl_tmp/rd/fkd.sock" ]
'

long=$tl_tmp/$(printf '%0120d' 0)
fkd -r "$long"
test_expect_success "a run dir too long for a socket address: status 1" '
	rc_is 1 && err_has "run dir"
'

# wait_pid_file DIR: until DIR/fkd.pid is written (a condition, not a delay)
wait_pid_file() {
	i=0
	while [ ! -s "$1/fkd.pid" ] && [ $i -lt $((200 * mult)) ]; do sleep 0.05; i=$((i + 1)); done
}

# One daemon by hand, kept when idle, with the built-in script.
rd=$tl_tmp/rd
mkdir -m 0700 "$rd"
"$FKD" -k -v -s '' -r "$rd" -l "$tl_tmp/fkd.log" </dev/null >/dev/null 2>&1 &
pid=$!
wait_pid_file "$rd"
tl_cmd="ibvct-fkd -k -v -s '' -r RD -l LOG"
cp "$tl_tmp/fkd.log" "$tl_err" 2>/dev/null || :
test_expect_success "by hand with -k and the built-in script: it listens and writes its pid" '
	[ -S "$rd/fkd.sock" ] && [ "$(cat "$rd/fkd.pid")" = "$pid" ]
'

fkd -r "$rd"
test_expect_success "a second daemon on the same run dir refuses: status 1" '
	rc_is 1 && err_has "a daemon already serves"
'

kill -TERM "$pid" 2>/dev/null
rc=0
wait "$pid" || rc=$?
tl_cmd="kill -TERM (daemon $pid), wait: $rc"
cp "$tl_tmp/fkd.log" "$tl_err" 2>/dev/null || :
test_expect_success "SIGTERM: it exits and removes its socket and pid file" '
	[ ! -e "$rd/fkd.sock" ] && [ ! -e "$rd/fkd.pid" ] && grep -q "signal: exiting" "$tl_tmp/fkd.log"
'

# A stale socket (its daemon died) does not stop the next one.
"$FKD" -s '' -r "$rd" </dev/null >/dev/null 2>"$tl_tmp/fkd2.log" &
pid=$!
wait_pid_file "$rd"
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rm -f "$rd/fkd.pid"
"$FKD" -k -s '' -r "$rd" </dev/null >/dev/null 2>"$tl_tmp/fkd3.log" &
pid=$!
wait_pid_file "$rd"
tl_cmd="a daemon after a SIGKILLed one"
cp "$tl_tmp/fkd3.log" "$tl_err" 2>/dev/null || :
test_expect_success "a stale socket of a killed daemon is replaced" '
	[ -S "$rd/fkd.sock" ] && [ "$(cat "$rd/fkd.pid" 2>/dev/null)" = "$pid" ]
'
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
test_done
