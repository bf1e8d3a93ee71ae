#!/bin/sh
# SPDX-License-Identifier: MIT
# t7305: testkit/sh/test-exec, prove's --exec for every test, does what make check,
# make valgrind and make conformance rely on: passes output and exit status
# through, kills a test (and what it forked) at the time limit, keeps TAP,
# stderr and status under IBVCT_TAP_DIR, and with IBVCT_VALGRIND=1 runs
# compiled tests (only those) under valgrind so that a leak fails them.
# Through ibvct-reap (the build's), a process the test started dies with it
# whatever process group or session it moved to, and one the test leaves
# running after it exited fails the test. With IBVCT_LITTER_CHECK=1 (make
# check) a test that leaves a file in its TMPDIR (or, where it gets mounts
# of its own, in /tmp or /dev/shm) or a process carrying its tag fails,
# named, and what it left goes; a clean one passes and leaves nothing.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
te="sh $src/testkit/sh/test-exec"
# Keep the outer run's settings out of the cases below.
unset IBVCT_VALGRIND IBVCT_TAP_DIR IBVCT_TEST_TIMEOUT IBVCT_TIMEOUT_MULT IBVCT_REAP_GRACE LD_PRELOAD
tmp=$tl_tmp

# gone PID: not in /proc, or a zombie nobody reaped yet
gone() {
	st=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ]
}

printf '#!/bin/sh\necho "1..1"\necho "ok 1"\nexit 3\n' >"$tmp/t-exit3.t"
chmod +x "$tmp/t-exit3.t"
out=$($te "$tmp/t-exit3.t"); rc=$?
test_expect_success "stdout and exit status pass through" '
	echo "exit $rc, stdout:"; printf "%s\n" "$out"
	[ "$rc" = 3 ] && [ "$out" = "1..1
ok 1" ]
'

# A hung test that forked a helper: both must be gone after the limit.
printf '#!/bin/sh\nsleep 60 &\necho $! >"%s/child.pid"\nsleep 60\n' "$tmp" >"$tmp/t-hang.t"
chmod +x "$tmp/t-hang.t"
start=$(date +%s)
IBVCT_TEST_TIMEOUT=1 $te "$tmp/t-hang.t" 2>"$tmp/hang.err"; rc=$?
took=$(( $(date +%s) - start ))
test_expect_success "a hung test is killed at the limit and reported" '
	echo "exit $rc after ${took}s"; cat "$tmp/hang.err"
	[ "$rc" = 124 ] && [ "$took" -lt 15 ] && grep -Eq "killed after [0-9]+s \(limit 1s|limit of 1s ran out" "$tmp/hang.err"
'
sleep 1
# Gone or a zombie (killed, not yet reaped by whoever inherited it).
cpid=$(cat "$tmp/child.pid")
test_expect_success "what the hung test forked is killed too" '
	gone "$cpid" || { echo "state: $(sed -n "s/.*) \(.\).*/\1/p" "/proc/$cpid/stat")"; false; }
'
gone "$cpid" || kill "$cpid"

# A hung test whose helper left for a session of its own (as a daemon does).
printf '#!/bin/sh\nsetsid sleep 60 &\necho $! >"%s/sid.pid"\nsleep 60\n' "$tmp" >"$tmp/t-hang-sid.t"
chmod +x "$tmp/t-hang-sid.t"
IBVCT_TEST_TIMEOUT=1 $te "$tmp/t-hang-sid.t" 2>"$tmp/hang-sid.err"; rc=$?
sleep 1
spid=$(cat "$tmp/sid.pid")
test_expect_success "what a hung test started in another session is killed at the limit too" '
	echo "exit $rc"; cat "$tmp/hang-sid.err"
	[ "$rc" = 124 ] && gone "$spid"
'
gone "$spid" || kill "$spid" 2>/dev/null

# A script that declares a longer limit gets it; a shorter one never lowers
# the default (the plain wall clock here: no load stretches either)
printf '#!/bin/sh\n# test-limit: 60\nsleep 3\necho "1..1"\necho "ok 1"\n' >"$tmp/t-declared.t"
printf '#!/bin/sh\n# test-limit: 1\nsleep 3\necho "1..1"\necho "ok 1"\n' >"$tmp/t-lower.t"
chmod +x "$tmp/t-declared.t" "$tmp/t-lower.t"
IBVCT_STRETCH_MAX=1 IBVCT_TEST_TIMEOUT=1 $te "$tmp/t-declared.t" >/dev/null 2>"$tmp/declared.err"; rc=$?
IBVCT_STRETCH_MAX=1 IBVCT_TEST_TIMEOUT=60 $te "$tmp/t-lower.t" >/dev/null 2>"$tmp/lower.err"; rc2=$?
test_expect_success "a script's '# test-limit: N' raises its limit, never lowers it" '
	echo "exit $rc, $rc2"; cat "$tmp/declared.err" "$tmp/lower.err"
	[ "$rc" = 0 ] && [ "$rc2" = 0 ]
'

# A test that passes but leaves a process behind fails, and the process goes.
printf '#!/bin/sh\nsetsid sleep 60 &\necho $! >"%s/left.pid"\necho "1..1"\necho "ok 1"\n' "$tmp" >"$tmp/t-left.t"
chmod +x "$tmp/t-left.t"
IBVCT_REAP_GRACE=1 $te "$tmp/t-left.t" >/dev/null 2>"$tmp/left.err"; rc=$?
lpid=$(cat "$tmp/left.pid")
test_expect_success "a test that leaves a process running fails, and the process is killed" '
	echo "exit $rc"; cat "$tmp/left.err"
	[ "$rc" = 1 ] && gone "$lpid" && grep -q "left 1 process running" "$tmp/left.err"
'
gone "$lpid" || kill "$lpid" 2>/dev/null

# One that ends on its own within the grace period is fine.
printf '#!/bin/sh\n(sleep 0.3; exit 0) &\necho "1..1"\necho "ok 1"\n' >"$tmp/t-brief.t"
chmod +x "$tmp/t-brief.t"
IBVCT_REAP_GRACE=5 $te "$tmp/t-brief.t" >/dev/null 2>"$tmp/brief.err"; rc=$?
test_expect_success "a helper that ends within the grace period is not a failure" '
	echo "exit $rc"; cat "$tmp/brief.err"
	[ "$rc" = 0 ]
'

# The machine's load stretches the limit (testkit/runner/tr_clock.h), up to
# IBVCT_STRETCH_MAX times; the load read from a stand-in /proc/stat: one
# with 1000 runnable processes (a stretch of the most), one idle.
reap=${IBVCT_BUILD:+$IBVCT_BUILD/bin/ibvct-reap}
printf 'cpu  1 2 3 4\nprocs_running 1000\nprocs_blocked 0\n' >"$tmp/stat.busy"
printf 'cpu  1 2 3 4\nprocs_running 1\nprocs_blocked 0\n' >"$tmp/stat.idle"
printf '#!/bin/sh\nsleep 2\necho "1..1"\necho "ok 1"\n' >"$tmp/t-slow.t"
chmod +x "$tmp/t-slow.t"
if [ -n "$reap" ] && [ -x "$reap" ]; then
	IBVCT_PROC_STAT=$tmp/stat.busy IBVCT_STRETCH_MAX=10 IBVCT_TEST_TIMEOUT=1 \
		$te "$tmp/t-slow.t" >"$tmp/slow.out" 2>"$tmp/slow.err"; rc=$?
	test_expect_success "a loaded machine stretches the limit: 2 s of work in a 1 s limit pass" '
		echo "exit $rc"; cat "$tmp/slow.out" "$tmp/slow.err"
		[ "$rc" = 0 ] && grep -qx "ok 1" "$tmp/slow.out"
	'
	IBVCT_PROC_STAT=$tmp/stat.idle IBVCT_STRETCH_MAX=4 IBVCT_TEST_TIMEOUT=1 \
		$te "$tmp/t-slow.t" >/dev/null 2>"$tmp/idle.err"; rc=$?
	test_expect_success "an idle machine does not: the same test is killed at 1 s" '
		echo "exit $rc"; cat "$tmp/idle.err"
		[ "$rc" = 124 ] && grep -q "killed after [0-9]*s (limit 1s)$" "$tmp/idle.err"
	'
	start=$(date +%s)
	IBVCT_PROC_STAT=$tmp/stat.busy IBVCT_STRETCH_MAX=2 IBVCT_TEST_TIMEOUT=1 \
		$te "$tmp/t-hang.t" 2>"$tmp/hang-busy.err"; rc=$?
	took=$(( $(date +%s) - start ))
	test_expect_success "a hang on a loaded machine is still killed, by IBVCT_STRETCH_MAX times the limit" '
		echo "exit $rc after ${took}s"; cat "$tmp/hang-busy.err"
		[ "$rc" = 124 ] && [ "$took" -lt 10 ] &&
			grep -q "killed after [0-9]*s (limit 1s, stretched by the machine.s load)" "$tmp/hang-busy.err"
	'
	gone "$(cat "$tmp/child.pid")" || kill "$(cat "$tmp/child.pid")" 2>/dev/null
else
	test_skip "a loaded machine stretches the limit" "no ibvct-reap in IBVCT_BUILD (run through make check)"
fi

printf '#!/bin/sh\necho "1..1"\necho "not ok 1"\necho oops >&2\nexit 1\n' >"$tmp/t-keep.t"
chmod +x "$tmp/t-keep.t"
IBVCT_TAP_DIR=$tmp/tap $te "$tmp/t-keep.t" >/dev/null 2>&1; rc=$?
test_expect_success "IBVCT_TAP_DIR keeps TAP, stderr and exit status" '
	echo "exit $rc"; ls -l "$tmp/tap"
	[ "$rc" = 1 ] && [ "$(cat "$tmp/tap/t-keep.rc")" = 1 ] && grep -qx "not ok 1" "$tmp/tap/t-keep.tap" &&
		grep -qx oops "$tmp/tap/t-keep.stderr"
'

# ---- IBVCT_LITTER_CHECK=1: a test leaves nothing behind ------------------------
mkdir -p "$tmp/lc"
lc() {	# lc NAME PROGRAM...: the check on; stderr in $tmp/NAME.err, status in lc_rc
	lc_n=$1
	shift
	IBVCT_LITTER_CHECK=1 TMPDIR=$tmp/lc IBVCT_REAP_GRACE=1 $te "$@" >"$tmp/$lc_n.out" 2>"$tmp/$lc_n.err"
	lc_rc=$?
}
printf '#!/bin/sh\necho 1..1\nmktemp "${TMPDIR:-/tmp}/mine.XXXXXX" >/dev/null\nrm -f "$TMPDIR"/mine.*\necho ok 1\n' >"$tmp/t-tidy.t"
chmod +x "$tmp/t-tidy.t"
lc tidy "$tmp/t-tidy.t"
test_expect_success "a test that removes what it made passes, and nothing of it is left" '
	echo "exit $lc_rc"; cat "$tmp/tidy.err"; ls -A "$tmp/lc"
	[ "$lc_rc" = 0 ] && [ -z "$(ls -A "$tmp/lc")" ]
'
printf '#!/bin/sh\necho 1..1\n: >"${TMPDIR:-/tmp}/t5101-xrcd-left"\necho ok 1\n' >"$tmp/t-litter.t"
chmod +x "$tmp/t-litter.t"
lc litter "$tmp/t-litter.t"
test_expect_success "a test that leaves a file in its TMPDIR fails, the file named and kept for a look" '
	echo "exit $lc_rc"; cat "$tmp/litter.err"
	[ "$lc_rc" = 1 ] && grep -q "^testkit/sh/test-exec: t-litter left in /tmp: t5101-xrcd-left\$" "$tmp/litter.err" &&
	kept=$(sed -n "s/.*what it left in its \/tmp is kept in \(.*\)\$/\1/p" "$tmp/litter.err") &&
	[ -f "$kept/t5101-xrcd-left" ] && [ "$(ls "$tmp/lc")" = "$(basename "$(dirname "$kept")")" ]
'
printf '#!/bin/sh\necho 1..1\necho ok 1\n' >"$tmp/t-litter.t"
lc litter2 "$tmp/t-litter.t"
test_expect_success "its next run, clean, passes and takes the kept files away" '
	echo "exit $lc_rc"; ls -A "$tmp/lc"; [ "$lc_rc" = 0 ] && [ -z "$(ls -A "$tmp/lc")" ]
'
# a process out of ibvct-reap's reach (no IBVCT_BUILD: timeout(1) alone),
# in a session of its own: found by the tag in its environment
printf '#!/bin/sh\necho 1..1\nsetsid sleep 60 >/dev/null 2>&1 &\necho $! >"%s/tag.pid"\necho ok 1\n' "$tmp" >"$tmp/t-tagged.t"
chmod +x "$tmp/t-tagged.t"
(unset IBVCT_BUILD; lc tagged "$tmp/t-tagged.t"; echo "$lc_rc" >"$tmp/tagged.rc")
tpid=$(cat "$tmp/tag.pid")
test_expect_success "a process it leaves anywhere fails it, named, and is ended" '
	echo "exit $(cat "$tmp/tagged.rc")"; cat "$tmp/tagged.err"
	[ "$(cat "$tmp/tagged.rc")" = 1 ] && grep -q "^testkit/sh/test-exec: t-tagged left processes running: $tpid ([a-z]*)\$" "$tmp/tagged.err" &&
	gone "$tpid"
'
gone "$tpid" || kill "$tpid" 2>/dev/null
rm -rf "$tmp"/lc/*
# with mounts of its own (root, unshare(1); the test and the trees outside
# /tmp): what it leaves in /tmp and /dev/shm is found there, and the
# machine's /tmp and /dev/shm never see it
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
	shm=t7305-shm-$$
	(cd / && lc mounts /bin/sh -c "echo 1..1; : >/dev/shm/$shm; : >/tmp/$shm; echo ok 1"; echo "$lc_rc" >"$tmp/mounts.rc")
	test_expect_success "its own /tmp and /dev/shm: what it left there is named, and never reaches the machine's" '
		echo "exit $(cat "$tmp/mounts.rc")"; cat "$tmp/mounts.err"
		[ "$(cat "$tmp/mounts.rc")" = 1 ] && grep -q "^testkit/sh/test-exec: sh left in /tmp: $shm\$" "$tmp/mounts.err" &&
		grep -q "^testkit/sh/test-exec: sh left in /dev/shm: $shm\$" "$tmp/mounts.err" &&
		[ ! -e "/dev/shm/$shm" ] && [ ! -e "/tmp/$shm" ]
	'
else
	test_skip "its own /tmp and /dev/shm: what it left there is named" "no mount namespace here (not root, or unshare refused)"
fi
rm -rf "$tmp"/lc/*

if ! command -v valgrind >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
	test_skip "IBVCT_VALGRIND=1 leaves shell tests alone" "valgrind or cc not installed (ci/install-deps valgrind)"
	test_skip "IBVCT_VALGRIND=1: a clean C test passes" "valgrind or cc not installed"
	test_skip "IBVCT_VALGRIND=1: a definite leak makes a C test exit 99" "valgrind or cc not installed"
	test_done
fi
printf '#!/bin/sh\necho "1..1"\necho "ok 1 # preload=${LD_PRELOAD:-}"\n' >"$tmp/t-script.t"
chmod +x "$tmp/t-script.t"
out=$(IBVCT_VALGRIND=1 $te "$tmp/t-script.t" 2>&1); rc=$?
test_expect_success "IBVCT_VALGRIND=1 leaves shell tests alone" '
	echo "exit $rc, output:"; printf "%s\n" "$out"
	[ "$rc" = 0 ] && ! printf "%s\n" "$out" | grep -q vgpreload
'

printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void){char *p = malloc(64);\np[0] = 1; p = NULL;\nputs("1..1"); puts("ok 1"); return 0;}\n' >"$tmp/leak.c"
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void){char *p = malloc(64);\np[0] = 1; free(p);\nputs("1..1"); puts("ok 1"); return 0;}\n' >"$tmp/clean.c"
cc -O0 -o "$tmp/t-leak.t" "$tmp/leak.c" && cc -O0 -o "$tmp/t-clean.t" "$tmp/clean.c" ||
	test_bail "cc cannot build the two stand-in C tests"
IBVCT_VALGRIND=1 $te "$tmp/t-clean.t" >/dev/null 2>"$tmp/clean.err"; rc=$?
test_expect_success "IBVCT_VALGRIND=1: a clean C test passes" '
	echo "exit $rc"; cat "$tmp/clean.err"
	[ "$rc" = 0 ]
'
IBVCT_VALGRIND=1 $te "$tmp/t-leak.t" >/dev/null 2>"$tmp/leak.err"; rc=$?
test_expect_success "IBVCT_VALGRIND=1: a definite leak makes a C test exit 99" '
	echo "exit $rc"; cat "$tmp/leak.err"
	[ "$rc" = 99 ] && grep -q "definitely lost" "$tmp/leak.err"
'
test_done
