#!/bin/sh
# SPDX-License-Identifier: MIT
# t5204: the fake kernel daemon started by hand (ibvct-fkd): its options,
# the errors it refuses to start with (each a clear message and status 1 or
# 2, nothing left listening), one daemon per run dir, and SIGTERM removing
# its socket and pid file.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "${IBVCT_SRC:-$(dirname "$(dirname "$here")")}/ci/test-lib.sh"
tl_setup
FKD=$IBVCT_BUILD/bin/ibvct-fkd
mult=${IBVCT_TIMEOUT_MULT:-1}
echo "1..10"

# fkd OUT ERR ARGS...: runs the daemon in the foreground; status in $tl_rc
fkd() {
	tl_cmd="ibvct-fkd $*"
	tl_rc=0
	"$FKD" "$@" >"$tl_out" 2>"$tl_err" </dev/null || tl_rc=$?
}

fkd -h
check "-h prints the usage on stdout and exits 0" \
	sh -c '[ "$1" -eq 0 ] && grep -q "^usage: ibvct-fkd" "$2" && [ ! -s "$3" ]' _ "$tl_rc" "$tl_out" "$tl_err"

fkd --no-such-option
check "an unknown option: the usage on stderr, status 2" \
	sh -c '[ "$1" -eq 2 ] && grep -q "^usage: ibvct-fkd" "$2"' _ "$tl_rc" "$tl_err"

fkd -r "$tl_tmp/rd" extra-word
check "an extra argument: status 2, nothing started" \
	sh -c '[ "$1" -eq 2 ] && [ ! -e "$2/rd" ]' _ "$tl_rc" "$tl_tmp"

fkd -l "$tl_tmp/no/such/dir/log" -r "$tl_tmp/rd"
check "a log file that cannot be opened: status 1, named with the reason" \
	sh -c '[ "$1" -eq 1 ] && grep -q "no/such/dir/log: No such file or directory" "$2"' \
	_ "$tl_rc" "$tl_err"

printf 'device fake0\nbogus directive\n' >"$tl_tmp/bad.fps"
fkd -s "$tl_tmp/bad.fps" -r "$tl_tmp/rd"
check "a bad host script: status 1 with file:line, nothing listening" \
	sh -c '[ "$1" -eq 1 ] && grep -q "bad.fps:2:" "$2" && [ ! -S "$3/rd/fkd.sock" ]' \
	_ "$tl_rc" "$tl_err" "$tl_tmp"

long=$tl_tmp/$(printf '%0120d' 0)
fkd -r "$long"
check "a run dir too long for a socket address: status 1" \
	sh -c '[ "$1" -eq 1 ] && grep -q "run dir" "$2"' _ "$tl_rc" "$tl_err"

# One daemon by hand, kept when idle, with the built-in script.
rd=$tl_tmp/rd
mkdir -m 0700 "$rd"
"$FKD" -k -v -s '' -r "$rd" -l "$tl_tmp/fkd.log" </dev/null >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -s "$rd/fkd.pid" ] && [ $i -lt $((200 * mult)) ]; do sleep 0.05; i=$((i + 1)); done
tl_cmd="ibvct-fkd -k -v -s '' -r RD -l LOG"
cp "$tl_tmp/fkd.log" "$tl_err" 2>/dev/null || :
check "by hand with -k and the built-in script: it listens and writes its pid" \
	sh -c '[ -S "$1/fkd.sock" ] && [ "$(cat "$1/fkd.pid")" = "$2" ]' _ "$rd" "$pid"

fkd -r "$rd"
check "a second daemon on the same run dir refuses: status 1" \
	sh -c '[ "$1" -eq 1 ] && grep -q "a daemon already serves" "$2"' _ "$tl_rc" "$tl_err"

kill -TERM "$pid" 2>/dev/null
rc=0
wait "$pid" || rc=$?
tl_cmd="kill -TERM (daemon $pid), wait: $rc"
cp "$tl_tmp/fkd.log" "$tl_err" 2>/dev/null || :
check "SIGTERM: it exits and removes its socket and pid file" \
	sh -c '[ ! -e "$1/fkd.sock" ] && [ ! -e "$1/fkd.pid" ] && grep -q "signal: exiting" "$2"' \
	_ "$rd" "$tl_tmp/fkd.log"

# A stale socket (its daemon died) does not stop the next one.
"$FKD" -s '' -r "$rd" </dev/null >/dev/null 2>"$tl_tmp/fkd2.log" &
pid=$!
i=0
while [ ! -s "$rd/fkd.pid" ] && [ $i -lt $((200 * mult)) ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rm -f "$rd/fkd.pid"
"$FKD" -k -s '' -r "$rd" </dev/null >/dev/null 2>"$tl_tmp/fkd3.log" &
pid=$!
i=0
while [ ! -s "$rd/fkd.pid" ] && [ $i -lt $((200 * mult)) ]; do sleep 0.05; i=$((i + 1)); done
tl_cmd="a daemon after a SIGKILLed one"
cp "$tl_tmp/fkd3.log" "$tl_err" 2>/dev/null || :
check "a stale socket of a killed daemon is replaced" \
	sh -c '[ -S "$1/fkd.sock" ] && [ "$(cat "$1/fkd.pid" 2>/dev/null)" = "$2" ]' _ "$rd" "$pid"
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exit $((tl_fail > 0))
