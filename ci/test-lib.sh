# SPDX-License-Identifier: MIT
# Shared by the shell tests that run programs against the reference target
# (sourced, POSIX sh). TAP stays the test's own: these helpers only print
# "ok"/"not ok" lines and "# " diagnostics, the test prints its one plan.
#
# Needs IBVCT_BUILD, IBVCT_LIBDIR, IBVCT_PROVIDER (set by the Makefile);
# honours IBVCT_PRELOAD (the ASan runtime in SANITIZE=1 builds).

tl_n=0
tl_fail=0
ok() { tl_n=$((tl_n + 1)); echo "ok $tl_n - $1"; }
not_ok() { tl_n=$((tl_n + 1)); tl_fail=$((tl_fail + 1)); echo "not ok $tl_n - $1"; }
diag() { sed 's/^/# /'; }
# check NAME COMMAND...: ok when COMMAND succeeds; else not ok and the last
# run's output (from run_in) as diagnostics.
check() {
	tl_name=$1
	shift
	if "$@"; then ok "$tl_name"; else not_ok "$tl_name"; tl_show; fi
}
tl_show() {
	{ echo "command: $tl_cmd (exit $tl_rc)"; echo "stdout:"; cat "$tl_out"
	  echo "stderr:"; cat "$tl_err"; } | head -n 60 | diag
}

tl_setup() {
	: "${IBVCT_BUILD:?run through make check}" "${IBVCT_LIBDIR:?}" "${IBVCT_PROVIDER:?}"
	TL_RUN=$IBVCT_BUILD/bin/ibvct-run
	tl_tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibvct-t.XXXXXX") || exit 1
	trap 'rm -rf "$tl_tmp"' EXIT
	# ibvct-run's shared fake hosts: this test's own, never the user's
	IBVCT_HOSTS_DIR=$tl_tmp/hosts
	export IBVCT_HOSTS_DIR
	tl_out=$tl_tmp/out tl_err=$tl_tmp/err tl_rc=0 tl_cmd=
	: >"$tl_out"
	: >"$tl_err"
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
		*/libibverbs.so.1*|*/libibverbs/*) echo "# system verbs code initialised: $r"; return 1 ;;
		esac
	done
	[ $tl_seen_lib = 1 ] && [ $tl_seen_plug = 1 ]
}

# skip_all_unless_utils PROGRAM: the whole test is a skip without Debian's
# ibverbs-utils (ci/install-deps installs them, so CI never skips).
skip_all_unless_utils() {
	if [ ! -x "/usr/bin/$1" ]; then
		echo "1..0 # SKIP ibverbs-utils not installed (/usr/bin/$1 missing)"
		exit 0
	fi
}

tl_exit() { [ "$tl_fail" = 0 ]; exit $?; }
