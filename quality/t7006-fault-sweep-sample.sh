#!/bin/sh
# SPDX-License-Identifier: MIT
# t7006: a sample of `make fault-sweep` through the same script
# (quality/fault-sweep), on this build's flavour: a few tests of the XRC
# creation suite under every fault its trace run shows, and the sweep's
# detector, each verdict reached by a program that really does that thing
# (clean fail, crash of the suite or of a test, hang, a daemon left behind,
# a sanitizer report, broken TAP): none of those may pass as "pass" or as
# a clean fail, and the sweep must exit non-zero for them.
set -u
: "${IBVCT_SRC:?run through make check}" "${IBVCT_BUILD:?}" "${IBVCT_PROVIDER:?}"
. "$IBVCT_SRC/testkit/sh/test-lib.sh"
fs="sh $IBVCT_SRC/quality/fault-sweep"
show() { head -n 40 "$1"; }
unset IBVCT_TAP_DIR IBVCT_KEEP IBVCT_RUNDIR IBVCT_SCRIPT
tmp=$tl_tmp

# sweep NAME ARGS...: runs the sweep into $tmp/NAME.{out,tsv}, status in rc
sweep() {
	name=$1
	shift
	$fs -j 2 -d "$tmp/work-$name" -r "$tmp/$name.tsv" "$@" >"$tmp/$name.out" 2>&1
	rc=$?
}
# verdicts NAME: the distinct verdicts of NAME's table, sorted, on one line
verdicts() { awk -F '\t' 'NR > 1 { print $5 }' "$tmp/$1.tsv" 2>/dev/null | sort -u | tr '\n' ' '; }

# 1-3: the real suite, two XRC tests, one configuration, 1st and 2nd calls.
suite=$IBVCT_BUILD/suites/ref/t2100-xrc-create.t
sweep real -s "$suite" -c extended-current -n "1 2" \
	-a xrcd_inode_creates_then_shares
tr=$tmp/work-real/traces/t2100-xrc-create.extended-current
# open_xrcd_failed: the table has the 1st open_xrcd fault as a clean fail
open_xrcd_failed() {
	awk -F '\t' '$3 == "open_xrcd" && $4 == 1 && $5 == "fail" { f = 1 } END { exit !f }' "$tmp/real.tsv"
}
test_expect_success "a fault that breaks a suite is a clean fail, the rest pass, the sweep succeeds" '
	echo "exit $rc, verdicts: $(verdicts real)"
	show "$tmp/real.out"
	[ "$rc" = 0 ] && [ "$(verdicts real)" = "fail pass " ] &&
		open_xrcd_failed
'
# The ops run are exactly those the trace shows, each N at most the most
# calls one process made: recomputed here from the trace itself.
awk '/^[0-9]+ [a-z_0-9]+\(.*\) = -?[0-9]+$/ { op = $2; sub(/\(.*/, "", op); c[$1 " " op]++ }
     END { for (k in c) { split(k, a, " "); if (c[k] > m[a[2]]) m[a[2]] = c[k] }
	   for (o in m) { print o, 1; if (m[o] >= 2) print o, 2 } }' "$tr" 2>/dev/null | sort >"$tmp/want"
awk -F '\t' 'NR > 1 && $3 != "-" { print $3, $4 }' "$tmp/real.tsv" 2>/dev/null | sort >"$tmp/got"
test_expect_success "the runs are the trace's ops x N reached ($(wc -l <"$tmp/got") runs)" '
	diff "$tmp/want" "$tmp/got"
	[ -s "$tmp/want" ] && grep -q "^open_xrcd 1\$" "$tmp/want" && cmp -s "$tmp/want" "$tmp/got"
'
runs=$(sed -n 's/^fault-sweep summary: \([0-9]*\) runs.*/\1/p' "$tmp/real.out")
test_expect_success "one line per run, and the number of runs printed ($runs)" '
	show "$tmp/real.out"
	[ -n "$runs" ] && [ "$runs" = "$(($(wc -l <"$tmp/real.tsv") - 1))" ] &&
		[ "$(grep -c "^t2100-xrc-create extended-current " "$tmp/real.out")" = "$runs" ]
'

# 4-11: stand-in suites, each doing one bad thing for real.
# expect NAME VERDICT WHAT: both runs of NAME (trace run and one fault run)
# got VERDICT and the sweep failed.
expect() {
	name=$1 want=$2
	test_expect_success "$3 is reported as $2" '
		echo "exit $rc, verdicts: $(verdicts "$name")"
		show "$tmp/$name.out"
		[ "$rc" = 1 ] && [ "$(verdicts "$name")" = "$want " ] &&
			[ "$(awk "NR > 1" "$tmp/$name.tsv" | wc -l)" = 2 ] && grep -q "FAIL" "$tmp/$name.out"
	'
}
stub() {	# stub NAME BODY: an executable sh program
	printf '#!/bin/sh\n%s\n' "$2" >"$tmp/$1.t"
	chmod +x "$tmp/$1.t"
}
one() {		# one NAME [ARGS]: the stand-in under one config, one fault
	name=$1
	shift
	sweep "$name" -s "$tmp/$name.t" -c legacy-current -o create_cq -n 1 "$@"
}

# a suite that fails only under a fault, as a real one does
stub cleanfail 'grep -q "^fault " "$IBVCT_SCRIPT" || { echo 1..1; echo "ok 1 - a"; exit 0; }
echo 1..2; echo "ok 1 - a"; echo "not ok 2 - b"; echo "# b: assertion failed"; exit 1'
one cleanfail
test_expect_success "not ok with diagnostics and exit 1 is a clean fail (the sweep succeeds)" '
	echo "exit $rc, verdicts: $(verdicts cleanfail)"
	show "$tmp/cleanfail.out"
	[ "$rc" = 0 ] && [ "$(verdicts cleanfail)" = "fail pass " ]
'
stub crash 'echo 1..1; kill -SEGV $$; sleep 5'
one crash
expect crash crash "a suite killed by SIGSEGV"

stub childcrash 'echo 1..1; echo "not ok 1 - t"; echo "# t: killed by signal 11 (Segmentation fault)"; exit 1'
one childcrash
expect childcrash crash "a test process killed by a signal"

stub hang 'echo 1..1; sleep 30; echo "ok 1"'
one hang -t 2
expect hang hang "a suite that never ends"

# A fake-kernel daemon that stays when idle (-k), left behind in the run's
# run dir: the sweep must see it still up, and end it.
stub daemon "d=\$IBVCT_RUNDIR; \"$IBVCT_BUILD/bin/ibvct-fkd\" -k -r \"\$d\" -l \"\$d/fkd.log\" </dev/null >/dev/null 2>&1 &
i=0; while [ ! -s \"\$d/fkd.pid\" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
cat \"\$d/fkd.pid\" >>\"$tmp/daemon.pids\"
echo 1..1; echo 'ok 1 - t'"
one daemon -w 1
expect daemon leak "a fake-kernel daemon still up after its last client"
left=
for p in $(cat "$tmp/daemon.pids" 2>/dev/null); do
	s=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$p/stat" 2>/dev/null)
	[ -n "$s" ] && [ "$s" != Z ] && { left="$left $p"; kill "$p"; }
done
test_expect_success "the sweep ends the daemons a run left" '
	echo "daemons: $(cat "$tmp/daemon.pids" 2>/dev/null | tr "\n" " "); still up:$left"
	[ "$(wc -l <"$tmp/daemon.pids" 2>/dev/null)" = 2 ] && [ -z "$left" ]
'
# A real use-after-free under ASan when this build has it; otherwise a
# report on stderr as a sanitizer prints it (the detector reads text).
if [ "${IBVCT_SANITIZE:-0}" = 1 ] && command -v cc >/dev/null 2>&1; then
	printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(8); free(p); puts("1..1"); fflush(stdout); return p[0]; }\n' >"$tmp/uaf.c"
	cc -fsanitize=address -g -o "$tmp/sanitizer.t" "$tmp/uaf.c"
else
	stub sanitizer 'echo 1..1; echo "not ok 1 - t"; echo "# t: exit status 1"
echo "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010" >&2; exit 1'
fi
one sanitizer
expect sanitizer sanitizer "a sanitizer report"

stub nodiag 'echo 1..2; echo "not ok 1 - a"; echo "ok 2 - b"; exit 1'
one nodiag
expect nodiag badtap "a not ok without diagnostics"

stub short 'echo 1..3; echo "ok 1 - a"; exit 0'
one short
expect short badtap "a suite that stops early"
test_done
