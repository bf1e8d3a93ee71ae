#!/bin/sh
# SPDX-License-Identifier: MIT
# t7309: testkit/sh/test-lib.sh, the harness of every shell test, does what the
# tests rely on. Stand-in tests that source it are run and their TAP read
# with TAP::Parser (what prove uses): ok and not ok lines numbered in
# order, the plan last and only there, the body's output as "# " lines
# under a failure only, a failure's exit status; a body that cannot touch
# the test (variables, cd, exit, stdin); test_expect_failure as TODO,
# test_skip as "ok # SKIP" with its reason, skip_all, a "#" in a name that
# is no directive; test_note; the scratch dir removed after a clean run,
# kept and named otherwise; a test that dies before test_done has no plan;
# test_parallel; run_cmd and what a failed check shows of it.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
# the stand-ins' own scratch dirs land here
st=$tmp/st
mkdir "$st"

# standin NAME BODY...: a test that sources the library, then runs BODY
standin() {
	name=$1
	shift
	{ printf '#!/bin/sh\nset -u\n. "%s/testkit/sh/test-lib.sh"\n' "$src"; printf '%s\n' "$@"; } >"$tmp/$name.t"
	chmod +x "$tmp/$name.t"
}
# run_standin NAME: runs it; stdout in $tmp/NAME.out, stderr .err, status .rc
run_standin() {
	TMPDIR=$st "$tmp/$1.t" </dev/null >"$tmp/$1.out" 2>"$tmp/$1.err"
	echo $? >"$tmp/$1.rc"
}
# tap NAME: the TAP as TAP::Parser reads it, one line a result:
# "plan N", "ok N", "not ok N", with " skip", " todo" and the description
tap() {
	perl -MTAP::Parser -e '
		local $/; open(my $fh, "<", $ARGV[0]) or die "$ARGV[0]: $!\n";
		my $p = TAP::Parser->new({ tap => scalar <$fh> });
		while (my $r = $p->next) {
			if ($r->is_plan) { print "plan ", $r->tests_planned, ($r->directive ? " " . lc($r->directive) : ""), "\n"; next }
			next unless $r->is_test;
			print $r->is_actual_ok ? "ok " : "not ok ", $r->number,
				$r->has_skip ? " skip" : "", $r->has_todo ? " todo" : "", " [", $r->description, "]\n";
		}
		print "errors: ", join("; ", $p->parse_errors), "\n" if $p->parse_errors;' "$tmp/$1.out"
}
# show NAME: all of a stand-in's run, for a failed check
show() { echo "exit $(cat "$tmp/$1.rc")"; echo "stdout:"; cat "$tmp/$1.out"; echo "stderr:"; cat "$tmp/$1.err"; }
rc_of() { cat "$tmp/$1.rc"; }
scratch_of() { ls -d "$st/$1".* 2>/dev/null; }

# ---- passing checks ---------------------------------------------------------
standin pass 'x=5' \
	'test_expect_success "one" "[ \"\$x\" = 5 ]"' \
	'test_expect_success "two" "echo hidden; true"' \
	'test_done'
run_standin pass
test_expect_success "passing checks: ok 1, ok 2, then the plan 1..2, exit 0" '
	show pass
	[ "$(rc_of pass)" = 0 ] &&
		[ "$(tap pass)" = "ok 1 [- one]
ok 2 [- two]
plan 2" ] && [ "$(tail -n 1 "$tmp/pass.out")" = "1..2" ]
'
test_expect_success "a passing body's output is not shown, the scratch dir is removed" '
	show pass; scratch_of pass
	! grep -q hidden "$tmp/pass.out" && [ -z "$(scratch_of pass)" ] && [ ! -s "$tmp/pass.err" ]
'

# ---- failing checks ---------------------------------------------------------
standin fail \
	'test_expect_success "loud" "echo want 6, got 5; false"' \
	'test_expect_success "silent" "[ 1 = 2 ]"' \
	'test_expect_success "after" true' \
	'test_done'
run_standin fail
test_expect_success "a failed check: not ok, the others go on, the plan, exit 1" '
	show fail
	[ "$(rc_of fail)" = 1 ] && [ "$(tap fail)" = "not ok 1 [- loud]
not ok 2 [- silent]
ok 3 [- after]
plan 3" ]
'
test_expect_success "the failed body's output follows its not ok as a # line" '
	show fail
	sed -n "/^not ok 1 /{n;p;}" "$tmp/fail.out" | grep -qx "# want 6, got 5"
'
test_expect_success "a failed body that printed nothing: its commands are shown" '
	show fail
	sed -n "/^not ok 2 /,/^ok 3 /p" "$tmp/fail.out" | grep -q "^# \[ 1 = 2 \]\$"
'
test_expect_success "after a failure the scratch dir is kept and named" '
	show fail
	d=$(scratch_of fail)
	[ -d "$d" ] && grep -q "scratch dir kept: $d\$" "$tmp/fail.out"
'

# ---- a body cannot touch the test -----------------------------------------------
standin isolated 'x=1' \
	'test_expect_success "sets x, cds, exits" "x=2; cd /; exit 0"' \
	'test_expect_success "x and the cwd are the test'\''s" "[ \"\$x\" = 1 ] && [ \"\$(pwd)\" = \"\$here\" ]"' \
	'test_expect_success "stdin is empty" "! read -r line"' \
	'test_expect_success "\$1 is empty in a body" "[ \$# = 0 ]"' \
	'test_done'
sed -i "3a here=\$(pwd)" "$tmp/isolated.t"
echo 'a line for a body to steal' | { TMPDIR=$st "$tmp/isolated.t" >"$tmp/isolated.out" 2>"$tmp/isolated.err"; echo $? >"$tmp/isolated.rc"; }
test_expect_success "a body runs apart: its variables, cd and exit stay inside, stdin is /dev/null" '
	show isolated
	[ "$(rc_of isolated)" = 0 ] && [ "$(tap isolated | grep -c "^ok ")" = 4 ]
'

# ---- TODO and SKIP ------------------------------------------------------------
standin todo \
	'test_expect_failure "still broken" false "waits for a fix"' \
	'test_expect_failure "mended" true' \
	'test_skip "not here" "no device here"' \
	'test_done'
run_standin todo
test_expect_success "test_expect_failure: a TODO, not a failure (exit 0); one that passes is reported" '
	show todo
	[ "$(rc_of todo)" = 0 ] && tap todo | grep -qx "not ok 1 todo \[- still broken\]" &&
		tap todo | grep -qx "ok 2 todo \[- mended\]" && grep -q "^not ok 1 - still broken # TODO waits for a fix\$" "$tmp/todo.out"
'
test_expect_success "test_skip: ok N - name # SKIP reason" '
	show todo
	tap todo | grep -qx "ok 3 skip \[- not here\]" && grep -qx "ok 3 - not here # SKIP no device here" "$tmp/todo.out"
'
standin noreason 'test_skip "not here" ""' 'test_done'
run_standin noreason
test_expect_success "a skip without a reason is refused (Bail out!)" '
	show noreason
	[ "$(rc_of noreason)" != 0 ] && grep -q "^Bail out! " "$tmp/noreason.out" && ! grep -q "^ok" "$tmp/noreason.out"
'

standin skipall 'skip_all "no device here"' 'test_expect_success "never" false' 'test_done'
run_standin skipall
test_expect_success "skip_all: only 1..0 # SKIP reason, exit 0, nothing left" '
	show skipall
	[ "$(rc_of skipall)" = 0 ] && [ "$(cat "$tmp/skipall.out")" = "1..0 # SKIP no device here" ] &&
		[ "$(tap skipall)" = "plan 0 skip" ] && [ -z "$(scratch_of skipall)" ]
'
standin lateskip 'test_expect_success "ran" true' 'skip_all "too late"' 'test_done'
run_standin lateskip
test_expect_success "skip_all after a check is refused (Bail out!)" '
	show lateskip
	[ "$(rc_of lateskip)" != 0 ] && grep -q "^Bail out! " "$tmp/lateskip.out" && ! grep -q "^1\.\.0" "$tmp/lateskip.out"
'

standin hash 'test_expect_success "a name with # SKIP and # TODO in it" true' 'test_done'
run_standin hash
test_expect_success "a # in a name is escaped: no directive" '
	show hash; tap hash
	[ "$(tap hash)" = "ok 1 [- a name with \\# SKIP and \\# TODO in it]
plan 1" ]
'

# ---- notes ------------------------------------------------------------------
standin note \
	'test_expect_success "measures" "test_note measured 3 ms; true"' \
	'test_expect_success "fails" "echo out; test_note seen 2; false"' \
	'test_done'
run_standin note
test_expect_success "test_note: under the result, pass or fail" '
	show note
	[ "$(sed -n 2p "$tmp/note.out")" = "# measured 3 ms" ] &&
		sed -n "/^not ok 2 /,\$p" "$tmp/note.out" | grep -qx "# seen 2"
'

# ---- dying early ----------------------------------------------------------------
standin dies 'test_expect_success "one" true' 'echo "$nosuchvariable"' 'test_done'
run_standin dies
standin killed 'test_expect_success "one" true' 'kill -TERM $$' 'sleep 5' 'test_done'
run_standin killed
test_expect_success "a test that dies before test_done has no plan, fails, names its scratch dir" '
	show dies; show killed
	[ "$(rc_of dies)" != 0 ] && ! grep -q "^1\.\." "$tmp/dies.out" &&
		grep -q "ended before test_done.*scratch dir kept: $(scratch_of dies)\$" "$tmp/dies.err" &&
		[ "$(rc_of killed)" = 143 ] && ! grep -q "^1\.\." "$tmp/killed.out" && [ -d "$(scratch_of killed)" ]
'
standin empty 'test_done'
run_standin empty
test_expect_success "a test that ran no check fails (Bail out!)" '
	show empty
	[ "$(rc_of empty)" != 0 ] && grep -q "^Bail out! " "$tmp/empty.out"
'

# ---- prove ------------------------------------------------------------------
test_expect_success "prove passes the plan-at-end stream and fails the failing one" '
	TMPDIR=$st prove -e sh "$tmp/pass.t" >"$tmp/prove.pass" 2>&1; prc=$?
	TMPDIR=$st prove -e sh "$tmp/fail.t" >"$tmp/prove.fail" 2>&1; frc=$?
	cat "$tmp/prove.pass" "$tmp/prove.fail"
	[ $prc = 0 ] && grep -q "^Result: PASS" "$tmp/prove.pass" &&
		[ $frc != 0 ] && grep -q "^Result: FAIL" "$tmp/prove.fail"
'

# ---- test_parallel ---------------------------------------------------------------
standin parallel \
	'job() { sleep 0.2; echo "$1" >"$tl_tmp/job$1"; }' \
	'jobs_seen() { cat "$tl_tmp"/job[1-5] | tr "\n" " "; }' \
	'for i in 1 2 3 4 5; do test_parallel 2 job $i; done' \
	'test_parallel_wait' \
	'test_expect_success "all five ran" "[ \"\$(jobs_seen)\" = \"1 2 3 4 5 \" ]"' \
	'test_done'
run_standin parallel
test_expect_success "test_parallel: every job has ended at test_parallel_wait" '
	show parallel
	[ "$(rc_of parallel)" = 0 ] && [ "$(tap parallel)" = "ok 1 [- all five ran]
plan 1" ]
'
# A pool, not batches: of two at a time, the third job starts when the
# second ends, while the first still runs (it waits for the third's file,
# up to 30 s: in batches it would start only after the first ended).
standin pool \
	'first() { i=0; while [ ! -e "$tl_tmp/third" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; [ -e "$tl_tmp/third" ] && echo yes >"$tl_tmp/first"; }' \
	'test_parallel 2 first' \
	'test_parallel 2 true' \
	'test_parallel 2 touch "$tl_tmp/third"' \
	'test_parallel_wait' \
	'test_parallel 3 touch "$tl_tmp/again"' \
	'test_parallel_wait' \
	'test_expect_success "the third ran beside the first" "[ -s \"\$tl_tmp/first\" ]"' \
	'test_expect_success "a pool again after test_parallel_wait" "[ -e \"\$tl_tmp/again\" ]"' \
	'test_done'
run_standin pool
test_expect_success "test_parallel: a job starts as soon as one of the MAX before it ends" '
	show pool
	[ "$(rc_of pool)" = 0 ] && [ "$(tap pool)" = "ok 1 [- the third ran beside the first]
ok 2 [- a pool again after test_parallel_wait]
plan 2" ]
'

# ---- run_cmd --------------------------------------------------------------------
standin runcmd \
	'run_cmd sh -c "echo to-out; echo to-err >&2; exit 3"' \
	'test_expect_success "status" "rc_is 3"' \
	'test_expect_success "outputs" "out_has ^to-out\$ && err_has ^to-err\$"' \
	'test_expect_success "shows the run" "rc_is 4"' \
	'test_done'
run_standin runcmd
test_expect_success "run_cmd: status and outputs; a failed check after it shows the run" '
	show runcmd
	tap runcmd | grep -qx "ok 1 \[- status\]" && tap runcmd | grep -qx "ok 2 \[- outputs\]" &&
		sed -n "/^not ok 3 /,\$p" "$tmp/runcmd.out" | grep -q "^# last run: sh -c .* (exit 3)\$" &&
		sed -n "/^not ok 3 /,\$p" "$tmp/runcmd.out" | grep -qx "# to-err"
'
test_done
