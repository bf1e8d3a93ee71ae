#!/bin/sh
# SPDX-License-Identifier: MIT
# t6212: an interrupted `ibvct conformance` cleans up after itself, quietly.
# A run of the reference target, as a terminal's job, gets a Ctrl-C (SIGINT
# to its whole process group) while its suites run; a run of the rxe-vm
# target gets SIGTERM (as a CI job's time limit sends it, to the command
# alone) while its guest runs. Then nothing of theirs is left: no process
# (found by a variable of this test in their environment: the test
# programs, fake-kernel daemons, QEMU and its watch, whatever process group
# or session they chose), nothing in the TMPDIR they had (scratch dirs, the
# guest runner's); the status is 128 + the signal; the only line after the
# signal is ibvct's one saying so; the folder's run.txt says interrupted,
# and `ibvct compare` and `ibvct certify` refuse the folder.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
# the runs own their guests, never a pool's (make check runs under one):
# what a signal must end is theirs
unset IBVCT_VM_POOL
: "${IBVCT_BUILD:?run through make check}"
skip_all_unless_utils ibv_devinfo
tmp=$tl_tmp
ibvct=$src/tools/ibvct/ibvct
mult=${IBVCT_TIMEOUT_MULT:-1}
unset IBVCT_DEVICE

# marked TAG: the pid and name of every process whose environment holds
# T6212_MARK=TAG
marked() {
	for e in $(grep -lzx "T6212_MARK=$1" /proc/[0-9]*/environ 2>/dev/null); do
		p=${e#/proc/}
		p=${p%/environ}
		echo "$p ($(cat "/proc/$p/comm" 2>/dev/null))"
	done
}
# waitfor WHAT SECONDS COMMAND...: COMMAND succeeds within SECONDS (times
# the multiplier), else a diagnostic and false
waitfor() {
	wf_what=$1 wf_n=$(($2 * mult * 10))
	shift 2
	while [ "$wf_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		wf_n=$((wf_n - 1))
	done
	echo "# waited in vain for $wf_what"
	return 1
}
# after_signal ERR: what the run wrote to stderr besides its progress
# lines (a program's verdict as it ended, the runners' "conformance: ...")
after_signal() {
	grep -Ev '^(ok|FAIL) +t[0-9]{4}-|^ibvct-vm: ' "$1"
}
# clean_up TAG: ends what a failed check found still running
clean_up() {
	for p in $(marked "$1" | cut -d' ' -f1); do kill -KILL "$p" 2>/dev/null; done
}

# ---- the reference target: Ctrl-C while its suites run ---------------------------------
# (a job of a terminal's: a session of its own, SIGINT not ignored as a
# shell's background job has it)
mkdir -p "$tmp/tmp.ref"
T6212_MARK=ref TMPDIR=$tmp/tmp.ref perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die "$ARGV[0]: $!\n"' \
	setsid sh "$ibvct" conformance --out "$tmp/ref" >"$tmp/ref.out" 2>"$tmp/ref.err" </dev/null &
ref=$!
suites_run() { grep -q '^ok  *t[0-9]*-.*\.ref-' "$tmp/ref.err"; }
waitfor "the suites to run" 120 suites_run
n_before=$(marked ref | wc -l)
kill -INT "-$ref"
wait "$ref"
rc=$?
left=$(marked ref)
clean_up ref
test_expect_success "ref: a Ctrl-C while the suites run ($n_before processes) ends the run with status 130" '
	echo "exit $rc"; tail -n 5 "$tmp/ref.err"
	[ "$n_before" -gt 5 ] && [ "$rc" = 130 ]
'
test_expect_success "ref: none of its processes is left" 'echo "left: $left"; [ -z "$left" ]'
test_expect_success "ref: nothing is left in its TMPDIR" '
	ls -A "$tmp/tmp.ref"; [ -z "$(ls -A "$tmp/tmp.ref")" ]
'
test_expect_success "ref: quietly: one line says so, nothing else" '
	after_signal "$tmp/ref.err" >"$tmp/ref.said"
	cat "$tmp/ref.said"
	[ "$(wc -l <"$tmp/ref.said")" = 1 ] &&
	grep -q "^ibvct: interrupted: .* $tmp/ref is marked an interrupted run\$" "$tmp/ref.said"
'
test_expect_success "ref: run.txt says interrupted" '
	cat "$tmp/ref/run.txt"; grep -qx "state=interrupted" "$tmp/ref/run.txt"
'
run_cmd sh "$ibvct" compare "$tmp/ref" "$tmp/ref"
test_expect_success "ibvct compare refuses the folder: not a finished run" '
	rc_is 2 && err_has "^ibvct compare: $tmp/ref: not a finished run: the run was interrupted"
'
run_cmd sh "$ibvct" certify --out "$tmp/bundles" "$tmp/ref"
test_expect_success "ibvct certify refuses it, and makes no bundle" '
	rc_is 2 && err_has "^ibvct certify: $tmp/ref: not a finished run" && [ ! -e "$tmp/bundles" ]
'

# ---- the rxe-vm target: SIGTERM while its guest runs -------------------------------------
mkdir -p "$tmp/tmp.vm"
T6212_MARK=vm TMPDIR=$tmp/tmp.vm sh "$ibvct" conformance --target rxe-vm --out "$tmp/vm" \
	>"$tmp/vm.out" 2>"$tmp/vm.err" </dev/null &
vm=$!
# the guest is up: a QEMU of the run's, and its kernel's first lines in a
# console log somewhere in the run's scratch (or a suite's TAP back already)
guest_up() {
	marked vm | grep -q qemu || return 1
	grep -rlq 'Linux version' "$tmp/tmp.vm" 2>/dev/null || [ -n "$(ls "$tmp/vm/tap" 2>/dev/null)" ]
}
waitfor "the guest to boot" 240 guest_up
qemu=$(marked vm | grep -c 'qemu')
kill -TERM "$vm"
wait "$vm"
rc=$?
left=$(marked vm)
clean_up vm
test_expect_success "rxe-vm: SIGTERM while its guest runs ($qemu QEMU) ends the run with status 143" '
	echo "exit $rc"; tail -n 5 "$tmp/vm.err"
	[ "$qemu" -ge 1 ] && [ "$rc" = 143 ]
'
test_expect_success "rxe-vm: none of its processes is left, QEMU and its watch included" '
	echo "left: $left"; [ -z "$left" ]
'
test_expect_success "rxe-vm: nothing is left in its TMPDIR (the guest runner's scratch dir included)" '
	find "$tmp/tmp.vm" -mindepth 1 -maxdepth 2; [ -z "$(ls -A "$tmp/tmp.vm")" ]
'
test_expect_success "rxe-vm: quietly: one line says so, nothing else" '
	after_signal "$tmp/vm.err" | grep -v "^conformance: " >"$tmp/vm.said"
	cat "$tmp/vm.said"
	[ "$(wc -l <"$tmp/vm.said")" = 1 ] && grep -q "^ibvct: interrupted: " "$tmp/vm.said"
'
test_expect_success "rxe-vm: run.txt says interrupted" 'grep -qx "state=interrupted" "$tmp/vm/run.txt"'
test_done
