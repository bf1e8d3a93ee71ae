#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t6110: the reference target under profile rxe gives, test by test, the
# verdicts and observed-outcome notes of real rxe. The system-built suites
# (build/suites/system, built against Debian's verbs.h) run twice,
# unmodified: on ref-impl with fixtures/scripts/rxe.fps (profile rxe, the
# limits Debian 12's rdma_rxe reports) and on rxe0 in the rxe-vm guest
# (Debian's kernel, libibverbs and librxe); tools/vm/tap-agree compares
# them. A difference names the test and both outcomes; each is a bug in the
# profile, ref-impl, the fake kernel or a suite until a source says
# otherwise (fixtures/profiles/README.md).
#
# And the comparison itself can fail: tap-agree must report a changed
# verdict, a changed note, a test one side lacks and a run cut short, and
# a run on the reference target under a quirk that breaks one rxe rule
# must differ from the guest's in that test.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
agree=$src/tools/vm/tap-agree
suites=$(ls "$build"/suites/system/t*.t 2>/dev/null)
[ -n "$suites" ] || test_bail "no suites in $build/suites/system (make suites)"
export IBVCT_SRC=$src IBVCT_BUILD=$build

. "$src/tools/vm/agree-lib.sh"
script=$(agree_script "$src/fixtures/scripts/rxe.fps" "$tl_tmp/rxe.fps")
test_note "Debian $agree_rel$([ -f "$tl_tmp/rxe.fps.note" ] && echo ": $(cat "$tl_tmp/rxe.fps.note")")"

# the guest in the background, the reference run beside it. Its command
# takes under a minute on an idle machine under TCG; its limit is 600 s (plus
# the boot), as t6111's, so that a guest merely slow on a loaded machine
# never reads as no result
real=$tl_tmp/real
mkdir -p "$real"
sh "$vm" run -q --timeout 600 --out "$real" --result "$tl_tmp/vm.result" --console "$tl_tmp/console.log" \
	-- sh "$src/tools/ibvct/suites-run" "$real" system rxe0 >"$tl_tmp/vm.out" 2>"$tl_tmp/vm.err" &
vm_pid=$!
for s in $suites; do
	agree_ref "$s" "$tl_tmp/ref" "$script" rxe
done
wait "$vm_pid"
vm_rc=$?

test_expect_success 'the guest ran the suites on rxe0 (a result, not the time limit)' '
	echo "ibvct-vm exit $vm_rc"; cat "$tl_tmp/vm.result" "$tl_tmp/vm.err"; tail -n 30 "$tl_tmp/console.log" 2>/dev/null
	grep -q "^result=ok$" "$tl_tmp/vm.result" && [ -n "$(ls "$real/tap"/*.tap 2>/dev/null)" ]
'
test_note "the guest: $(grep -E "^(accelerator|kernel.release|seconds)=" "$tl_tmp/vm.result" 2>/dev/null | tr '\n' ' ')"
run_cmd perl "$agree" --names profile-rxe,real-rxe "$tl_tmp/ref" "$real"
test_expect_success 'profile rxe and real rxe agree on every test of the system-built suites' '
	rc_is 0
'
test_note "$(tail -n 1 "$tl_out")"

# ---- the comparison can fail --------------------------------------------------
# doctor NAME SED-EXPRESSION: a copy of the reference run, one TAP changed
doctor() {
	rm -rf "$tl_tmp/d.$1"
	cp -r "$tl_tmp/ref" "$tl_tmp/d.$1"
	f=$(ls "$tl_tmp/d.$1/tap"/t4101-*.tap)
	sed -i "$2" "$f"
}
doctor verdict 's/^ok \([0-9]*\) - alloc_mw_of_each_type/not ok \1 - alloc_mw_of_each_type/'
doctor note 's/^\(# create_cq_ex_gives_a_read_function_for_each_field: cvlan:\).*/\1 reported/'
doctor missing '/^ok [0-9]* - completion_channel_reports_the_extended_cq/d'
doctor cut '/^1\.\./d'
for d in verdict note missing cut; do
	run_cmd perl "$agree" "$tl_tmp/ref" "$tl_tmp/d.$d"
	case $d in
	verdict) what='alloc_mw_of_each_type: a pass, b FAIL' ;;
	note) what='create_cq_ex_gives_a_read_function_for_each_field: note' ;;
	missing) what='completion_channel_reports_the_extended_cq: a pass, b not run' ;;
	cut) what='incomplete \(no plan\)' ;;
	esac
	test_expect_success "tap-agree reports a doctored run ($d)" '
		rc_is 1 && out_has "$what"
	'
done
run_cmd perl "$agree" "$tl_tmp/ref" "$tl_tmp/ref"
test_expect_success 'tap-agree finds a run the same as itself' 'rc_is 0'

# a quirk that breaks MW-02 on the reference target: the agreement with the
# guest's real rxe must fail on that test
q=$tl_tmp/quirk.fps
{ cat "$script"; echo "quirk mw_bind_unchecked"; } >"$q"
if "$build/bin/ibvct-run" --private --script "$q" -- true 2>"$tl_tmp/q.err"; then
	agree_ref "$(ls "$build"/suites/system/t4101-*.t)" "$tl_tmp/quirked" "$q" rxe
	mkdir -p "$tl_tmp/real4101/tap"
	cp "$real/tap"/t4101-*.tap "$tl_tmp/real4101/tap/" 2>/dev/null
	run_cmd perl "$agree" "$tl_tmp/quirked" "$tl_tmp/real4101"
	test_expect_success 'under a quirk breaking MW-02 the reference differs from real rxe there' '
		rc_is 1 && out_has "bind_mw_needs_mw_bind_access_and_the_range: a FAIL, b pass"
	'
else
	test_expect_success 'the quirk that breaks MW-02 exists' 'cat "$tl_tmp/q.err"; false'
fi
test_done
