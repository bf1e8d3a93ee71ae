# SPDX-License-Identifier: MIT
# The harness of every shell test (sourced, POSIX sh; git's t/test-lib.sh
# is the model). It owns the TAP stream: each check is a test_expect_* that
# prints one "ok N - name" or "not ok N - name" line, diagnostics go out as
# "# " lines, and test_done prints the one plan, 1..N, last (valid TAP: a
# test that dies half way has no plan, and prove fails it) and exits
# non-zero when a check failed. A test file holds checks, never its own
# ok/not_ok, plan count or fork-and-wait.
#
#	set -u
#	src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
#	. "$src/testkit/sh/test-lib.sh"
#	run_cmd "$src/ci/lint-foo" "$src"
#	test_expect_success 'the tree passes the lint' 'rc_is 0'
#	test_done
#
# A body is a string of commands run at once in a subshell (a variable it
# sets, a cd or an exit stays inside), stdin from /dev/null; it passes when
# its last command succeeds. Its output (stdout and stderr) is kept and
# printed as diagnostics under a failure only, so a body prints what a
# failure needs to be understood (the file it searched, the value it got).
# Work that later checks use (running the program under test, computing
# what to compare) goes outside the bodies, checks inside. In a body $1...
# are empty: use variables. test_bail and skip_all are for the test, never
# for a body.
#
# Sourcing this file makes the scratch dir $tl_tmp (removed at exit when
# every check passed, kept and named otherwise, as git's trash directory)
# and sets the traps of EXIT (that cleanup), HUP, INT and TERM (a signal
# ends the test through its EXIT trap). Its names: test_*, skip_all,
# setup_ibvct_run, run_*, diag, the checks of a run (rc_is, out_has,
# err_has, out_count, ...), and tl_*/TL_* variables. TL_DIAG_LINES (100)
# caps the diagnostics of one check.

tl_n=0		# checks so far
tl_fail=0	# failed checks (a known breakage is no failure)
tl_todo=0	# known breakages still broken
tl_done=	# "plan" after test_done, "skip" after skip_all
tl_in_body=
tl_cmd=		# the last program run (run_cmd, run_in, run_plain, or the test's own)
TL_DIAG_LINES=${TL_DIAG_LINES:-100}

tl_self=${0##*/}
tl_self=${tl_self%.t}
tl_self=${tl_self%.sh}
tl_tmp=$(mktemp -d "${TMPDIR:-/tmp}/$tl_self.XXXXXX") || {
	echo "Bail out! $tl_self: cannot make a scratch dir in ${TMPDIR:-/tmp}"
	exit 1
}
tl_body_out=$tl_tmp/.body.out
tl_note=$tl_tmp/.body.note
# the last program run (run_cmd, run_in, run_plain): output and status
tl_out=$tl_tmp/.run.out
tl_err=$tl_tmp/.run.err
tl_rc=0
: >"$tl_out"
: >"$tl_err"

tl_at_exit() {
	tl_exit_rc=$?
	if [ "$tl_done" = skip ] || { [ "$tl_done" = plan ] && [ "$tl_fail" = 0 ]; }; then
		rm -rf "$tl_tmp"
	elif [ -z "$tl_done" ] && [ -d "$tl_tmp" ]; then
		# died before test_done: no plan, prove fails it
		echo "$tl_self: ended before test_done (exit $tl_exit_rc); scratch dir kept: $tl_tmp" >&2
	fi
	exit "$tl_exit_rc"
}
trap tl_at_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# diag: stdin as TAP diagnostics ("# " lines), at most TL_DIAG_LINES.
diag() {
	awk -v max="$TL_DIAG_LINES" 'NR <= max { print "# " $0 }
		END { if (NR > max) print "# ... " NR - max " more lines" }'
}

# test_note TEXT... (or stdin without TEXT): a diagnostic. Inside a body it
# is printed under the check's result, pass or fail (what was measured,
# what was observed); outside one, at once.
test_note() {
	if [ -n "$tl_in_body" ]; then
		if [ $# -gt 0 ]; then printf '%s\n' "$*"; else cat; fi >>"$tl_note"
	else
		if [ $# -gt 0 ]; then printf '%s\n' "$*"; else cat; fi | diag
	fi
}

# tl_run_body BODY: runs BODY in a subshell, output into $tl_body_out;
# its status in tl_body_rc.
tl_run_body() {
	tl_body=$1
	: >"$tl_body_out"
	: >"$tl_note"
	(
		set --
		tl_in_body=1
		eval "$tl_body"
	) </dev/null >"$tl_body_out" 2>&1
	tl_body_rc=$?
}

# tl_result VERDICT NAME [DIRECTIVE]: the TAP line of check N. A "#" in
# NAME is escaped (TAP: "\#"), so that no name reads as a directive.
tl_result() {
	tl_n=$((tl_n + 1))
	case $2 in
	*'#'*) tl_name=$(printf '%s\n' "$2" | sed 's/#/\\#/g') ;;
	*) tl_name=$2 ;;
	esac
	echo "$1 $tl_n - $tl_name${3:+ # $3}"
}

# tl_why: the diagnostics of a failed check: the body's output (its source
# when it printed nothing) and the last program run, if any.
tl_why() {
	if [ -s "$tl_body_out" ]; then
		diag <"$tl_body_out"
	else
		{ echo "failed (exit $tl_body_rc), printing nothing:"
		  printf '%s\n' "$tl_body" | sed '/^[[:space:]]*$/d'; } | diag
	fi
	[ -n "$tl_cmd" ] && tl_show
	return 0
}

tl_notes() {
	[ -s "$tl_note" ] && diag <"$tl_note"
	return 0
}

# test_expect_success NAME BODY: a check.
test_expect_success() {
	[ $# = 2 ] || test_bail "test_expect_success NAME BODY: $# arguments (\"${1:-}\")"
	tl_run_body "$2"
	if [ "$tl_body_rc" = 0 ]; then
		tl_result ok "$1"
	else
		tl_fail=$((tl_fail + 1))
		tl_result "not ok" "$1"
		tl_why
	fi
	tl_notes
}

# test_expect_failure NAME BODY [REASON]: a known breakage, TAP TODO. Its
# failure is shown and not counted; a pass is reported (prove: "TODO
# passed"), the breakage is gone and this should become test_expect_success.
test_expect_failure() {
	[ $# = 2 ] || [ $# = 3 ] || test_bail "test_expect_failure NAME BODY [REASON]: $# arguments"
	tl_run_body "$2"
	if [ "$tl_body_rc" = 0 ]; then
		tl_result ok "$1" "TODO ${3:-known breakage} (passes now)"
	else
		tl_todo=$((tl_todo + 1))
		tl_result "not ok" "$1" "TODO ${3:-known breakage}"
		tl_why
	fi
	tl_notes
}

# test_skip NAME REASON: a check that cannot run here, "ok N - NAME # SKIP
# REASON" (never "not ok # SKIP"). The reason is the real one.
test_skip() {
	[ $# = 2 ] && [ -n "$2" ] || test_bail "test_skip NAME REASON: a reason is required"
	tl_result ok "$1" "SKIP $2"
}

# skip_all REASON: the whole test cannot run here: "1..0 # SKIP REASON",
# exit 0. Before any check.
skip_all() {
	[ "$tl_n" = 0 ] || test_bail "skip_all after $tl_n checks"
	echo "1..0 # SKIP $1"
	tl_done=skip
	exit 0
}

# test_bail REASON: the test cannot go on (its input is missing or broken):
# "Bail out!", exit 1.
test_bail() {
	echo "Bail out! $*"
	exit 1
}

# test_done: the plan, then exit 0 when no check failed, else 1.
test_done() {
	[ "$tl_n" -gt 0 ] || test_bail "$tl_self ran no check"
	[ "$tl_fail" = 0 ] || echo "# $tl_fail of $tl_n checks failed; scratch dir kept: $tl_tmp"
	[ "$tl_todo" = 0 ] || echo "# $tl_todo known breakage(s)"
	echo "1..$tl_n"
	tl_done=plan
	[ "$tl_fail" = 0 ]
	exit $?
}

# test_parallel MAX COMMAND...: runs COMMAND in the background, at most MAX
# at a time: each job starts as soon as one before it ends, not when a
# batch of MAX has (dash has no `wait -n`: MAX tokens in a FIFO, as make's
# jobserver; a job takes one to start and gives it back when it ends).
# test_parallel_wait waits for the rest (and so for every background job
# of the test); the next test_parallel starts a new pool. The jobs write
# files; the checks read them afterwards, in order. COMMAND runs without
# the pool's descriptor (9).
tl_pool=
test_parallel() {
	tl_max=$1
	shift
	if [ -z "$tl_pool" ]; then
		tl_pool=$tl_tmp/.pool
		mkfifo "$tl_pool" || test_bail "test_parallel: cannot make $tl_pool"
		exec 9<>"$tl_pool"
		tl_i=0
		while [ "$tl_i" -lt "$tl_max" ]; do
			echo >&9
			tl_i=$((tl_i + 1))
		done
	fi
	read -r tl_tok <&9
	{ "$@" 9>&-; echo >&9; } &
}
test_parallel_wait() {
	wait
	if [ -n "$tl_pool" ]; then
		exec 9>&-
		rm -f "$tl_pool"
		tl_pool=
	fi
}

# ---- programs against the reference target ---------------------------------
# setup_ibvct_run: this test runs programs through build/bin/ibvct-run
# (TL_RUN), on fake hosts of its own (under the scratch dir, never the
# user's). Needs IBVCT_BUILD, IBVCT_LIBDIR, IBVCT_PROVIDER (make check sets
# them); honours IBVCT_PRELOAD (the ASan runtime in SANITIZE=1 builds).
setup_ibvct_run() {
	: "${IBVCT_BUILD:?run through make check}" "${IBVCT_LIBDIR:?}" "${IBVCT_PROVIDER:?}"
	TL_RUN=$IBVCT_BUILD/bin/ibvct-run
	IBVCT_HOSTS_DIR=$tl_tmp/hosts
	export IBVCT_HOSTS_DIR
}

# tl_show: the last program run, its exit status and output, as diagnostics.
tl_show() {
	{ echo "last run: $tl_cmd (exit $tl_rc)"; echo "stdout:"; cat "$tl_out"
	  echo "stderr:"; cat "$tl_err"; } | head -n 60 | diag
}

# run_cmd COMMAND [ARGS...]: runs COMMAND, stdin from /dev/null; its output
# in $tl_out/$tl_err, its status in $tl_rc. A check that fails after it
# shows that run (tl_show).
run_cmd() {
	tl_cmd="$*"
	"$@" </dev/null >"$tl_out" 2>"$tl_err"
	tl_rc=$?
}

# run_in SCRIPT PROGRAM ARGS...: runs PROGRAM through ibvct-run (SCRIPT "-":
# the built-in default); output in $tl_out/$tl_err, status in $tl_rc. In
# sanitized builds a foreign program gets the ASan runtime preloaded: ASan
# must come first in the initial library list of any process that loads our
# sanitized libibverbs.so.1.
run_in() {
	tl_script=$1
	shift
	set -- ${tl_script:+--script "$tl_script"} -- "$@"
	[ "$tl_script" = - ] && shift 2
	tl_cmd="ibvct-run $*"
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$TL_RUN" "$@" >"$tl_out" 2>"$tl_err"
	tl_rc=$?
}

# The same without the preload, for programs that do not run our code
# (ldd only maps libraries; sh, ldd and coreutils would otherwise be leak-
# checked by LSan themselves).
run_plain() {
	tl_script=$1
	shift
	set -- ${tl_script:+--script "$tl_script"} -- "$@"
	[ "$tl_script" = - ] && shift 2
	tl_cmd="ibvct-run $*"
	"$TL_RUN" "$@" >"$tl_out" 2>"$tl_err"
	tl_rc=$?
}

rc_is() { [ "$tl_rc" = "$1" ]; }
out_has() { grep -Eq -- "$1" "$tl_out"; }
err_has() { grep -Eq -- "$1" "$tl_err"; }
out_count() { grep -Ec -- "$1" "$tl_out"; }
same_file() { [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]; }

# ldd_uses_ours: $tl_out holds `ldd PROGRAM`; libibverbs.so.1 must resolve
# to the build's library.
ldd_uses_ours() {
	tl_lib=$(sed -n 's/^[[:space:]]*libibverbs\.so\.1 => \([^ ]*\) .*/\1/p' "$tl_out")
	[ -n "$tl_lib" ] && same_file "$tl_lib" "$IBVCT_LIBDIR/libibverbs.so.1"
}

# ld_debug_uses_ours: $tl_err holds LD_DEBUG=libs output; the dynamic
# linker must have initialised our library and our plugin, and neither the
# system's libibverbs nor any of its providers.
ld_debug_uses_ours() {
	tl_inits=$(sed -n 's/.*calling init: //p' "$tl_err")
	tl_ours=$(readlink -f "$IBVCT_LIBDIR/libibverbs.so.1")
	tl_plug=$(readlink -f "$IBVCT_PROVIDER")
	tl_seen_lib=0 tl_seen_plug=0
	for f in $tl_inits; do
		r=$(readlink -f "$f")
		[ "$r" = "$tl_ours" ] && tl_seen_lib=1
		[ "$r" = "$tl_plug" ] && tl_seen_plug=1
		case $r in
		"$tl_ours") ;;
		*/libibverbs.so.1*|*/libibverbs/*) echo "system verbs code initialised: $r"; return 1 ;;
		esac
	done
	[ $tl_seen_lib = 1 ] && [ $tl_seen_plug = 1 ]
}

# skip_all_unless_utils PROGRAM: the whole test is a skip without Debian's
# ibverbs-utils (ci/install-deps installs them, so CI never skips).
skip_all_unless_utils() {
	[ -x "/usr/bin/$1" ] || skip_all "ibverbs-utils not installed (/usr/bin/$1 missing)"
}
