#!/bin/sh
# SPDX-License-Identifier: MIT
# t7206: tools/report/compare-runs OLD NEW. Identical runs: no change, exit 0. An
# injected regression (pass -> fail, pass -> known deviation, a program
# that now crashes, a program gone) exits 1 and names each; fixes, skip ->
# run and run -> skip are reported without failing; tests are matched by
# name when their numbers shift; a bundle works as well as a folder. Each
# side's target, device, rdma-core and kernel come first, with a warning
# when the targets differ; a run that did not finish (run.txt) is refused.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/tools/report/report-testdata.sh"
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
cmp_runs() { perl "$src/tools/report/compare-runs" "$@" >"$tmp/out" 2>&1; rc=$?; }
show() { echo "exit $rc"; cat "$tmp/out"; }
# run DIR: a small clean run; the caller then edits its TAP.
run() {
	mkdir -p "$1/tap"
	cat >"$1/tap/t2100-xrc.tap" <<'TAP'
1..5
ok 1 - xrcd_excl_einval [XRCD-07]
ok 2 - xrcd_shared_handle [XRCD-08]
ok 3 - srq_num [SRQX-11] # SKIP device has no XRC
not ok 4 - open_qp_stale [OPENQP-06] # TODO known deviation: EBADF
ok 5 - qp_state_kept [QPX-09]
TAP
	printf '1..1\nok 1 - wr_offset [WR-01]\n' >"$1/tap/t1100-wr.tap"
	printf '1..1\nok 1 - layout [ABI-01]\n' >"$1/tap/t0100-abi.tap"
	for p in t2100-xrc t1100-wr t0100-abi; do echo 0 >"$1/tap/$p.rc"; done
}

run "$tmp/old"
cmp_runs "$tmp/old" "$tmp/old"
test_expect_success "a run compared with itself: nothing changed, exit 0" '
	show
	[ $rc = 0 ] && grep -q "^0 regressions, 0 fixed, 0 skip -> run, 0 run -> skip, 0 other changes\$" "$tmp/out"
'

run "$tmp/new"
sed -i 's/^ok 1 - xrcd_excl_einval/not ok 1 - xrcd_excl_einval/' "$tmp/new/tap/t2100-xrc.tap"
echo 1 >"$tmp/new/tap/t2100-xrc.rc"
cmp_runs "$tmp/old" "$tmp/new"
test_expect_success "an injected pass -> fail is a regression (exit 1), by test and by ID" '
	show
	[ $rc = 1 ] && grep -q "^REGRESSIONS (1):\$" "$tmp/out" &&
		grep -qF "t2100-xrc: xrcd_excl_einval [XRCD-07]: pass -> fail" "$tmp/out" &&
		grep -q "^  XRCD-07 *pass -> FAIL\$" "$tmp/out"
'

run "$tmp/dev"
sed -i 's/^ok 5 - qp_state_kept \[QPX-09\]$/not ok 5 - qp_state_kept [QPX-09] # TODO known deviation: new firmware/' "$tmp/dev/tap/t2100-xrc.tap"
cmp_runs "$tmp/old" "$tmp/dev"
test_expect_success "pass -> known deviation is a regression" '
	show
	[ $rc = 1 ] && grep -qF "qp_state_kept [QPX-09]: pass -> deviation" "$tmp/out"
'

run "$tmp/crash"
printf '1..1\n' >"$tmp/crash/tap/t1100-wr.tap"; echo 139 >"$tmp/crash/tap/t1100-wr.rc"
rm "$tmp/crash/tap/t0100-abi.tap" "$tmp/crash/tap/t0100-abi.rc"
cmp_runs "$tmp/old" "$tmp/crash"
test_expect_success "a crashed or missing program is a regression, with its lost tests" '
	show
	[ $rc = 1 ] && grep -q "program t1100-wr: ended cleanly in OLD, not in NEW (exit 139" "$tmp/out" &&
		grep -qF "t1100-wr: wr_offset [WR-01]: pass -> absent (program broken)" "$tmp/out" &&
		grep -q "program t0100-abi: missing from NEW" "$tmp/out"
'

run "$tmp/better"
sed -i 's/^ok 3 - srq_num \[SRQX-11\] # SKIP device has no XRC$/ok 3 - srq_num [SRQX-11]/; s/^not ok 4 - open_qp_stale \[OPENQP-06\] # TODO/ok 4 - open_qp_stale [OPENQP-06] # TODO/; s/^ok 5 - qp_state_kept \[QPX-09\]$/ok 5 - qp_state_kept [QPX-09] # SKIP port down/' "$tmp/better/tap/t2100-xrc.tap"
cmp_runs "$tmp/old" "$tmp/better"
test_expect_success "skip -> run is reported, exit 0" '
	show
	[ $rc = 0 ] && grep -qF "srq_num [SRQX-11]: skip (device has no XRC) -> pass" "$tmp/out" &&
		grep -q "^skip -> run (1):\$" "$tmp/out"
'
test_expect_success "a known deviation that now passes is reported fixed" '
	show
	grep -q "^fixed (1):\$" "$tmp/out" &&
		grep -qF "open_qp_stale [OPENQP-06]: deviation (known deviation: EBADF) -> fixed" "$tmp/out"
'
test_expect_success "run -> skip is reported with the new reason" '
	show
	grep -q "^run -> skip (1):\$" "$tmp/out" && grep -qF "qp_state_kept [QPX-09]: pass -> skip (port down)" "$tmp/out"
'

run "$tmp/renum"
{ echo '1..6'; echo 'ok 1 - new_test_first [XRCD-01]'
  sed -n '2,$p' "$tmp/old/tap/t2100-xrc.tap" | sed 's/^ok \([0-9]\)/ok X\1/; s/^not ok \([0-9]\)/not ok X\1/' |
	sed 's/X1/2/; s/X2/3/; s/X3/4/; s/X4/5/; s/X5/6/'; } >"$tmp/renum/tap/t2100-xrc.tap"
cmp_runs "$tmp/old" "$tmp/renum"
test_expect_success "tests are matched by name when numbers shift; a new test is another change" '
	show
	[ $rc = 0 ] && grep -q "^0 regressions, 0 fixed, 0 skip -> run, 0 run -> skip, 1 other changes\$" "$tmp/out"
'

mkdir -p "$tmp/pack/run-new" && cp -R "$tmp/new/tap" "$tmp/pack/run-new/" &&
	tar -czf "$tmp/new.tar.gz" -C "$tmp/pack" run-new
cmp_runs "$tmp/old" "$tmp/new.tar.gz"
test_expect_success "a bundle (.tar.gz) can be compared like a folder" '
	show
	[ $rc = 1 ] && grep -qF "xrcd_excl_einval [XRCD-07]: pass -> fail" "$tmp/out"
'

# what each ran on; runs of two targets
run "$tmp/fp-ref"
printf 'target=ref\ndevice=fake0\nrdma-core.package=44.0-2\nkernel=6.1.0-10-amd64\nibvct.version=0.9.0\n' \
	>"$tmp/fp-ref/fingerprint.txt"
run "$tmp/fp-vm"
printf 'target=rxe-vm\ndevice=rxe0\nrdma-core.package=44.0-2\nkernel=6.1.0-10-amd64\nguest.kernel.release=6.1.0-13-amd64\nibvct.version=0.9.0\n' \
	>"$tmp/fp-vm/fingerprint.txt"
cmp_runs --quiet "$tmp/fp-ref" "$tmp/fp-vm"
test_expect_success "each side: target, device, rdma-core, kernel (a guest's), ibvct; a warning when the targets differ" '
	show
	grep -qx "         (target ref, device fake0, rdma-core 44.0-2, kernel 6.1.0-10-amd64, ibvct 0.9.0)" "$tmp/out" &&
	grep -qx "         (target rxe-vm, device rxe0, rdma-core 44.0-2, kernel 6.1.0-13-amd64, ibvct 0.9.0)" "$tmp/out" &&
	grep -q "^WARNING: the runs are of different targets (ref, rxe-vm): most differences below are the targets" "$tmp/out"
'
cmp_runs "$tmp/fp-ref" "$tmp/fp-ref"
test_expect_success "no warning for two runs of one target" 'show; [ $rc = 0 ] && ! grep -q WARNING "$tmp/out"'

# runs that did not finish
for st in interrupted running; do
	run "$tmp/$st"
	printf 'state=%s\npid=4242\n' "$st" >"$tmp/$st/run.txt"
	cmp_runs "$tmp/old" "$tmp/$st"
	test_expect_success "a run whose run.txt says $st is refused: it holds part of a run" '
		show; [ $rc = 2 ] && grep -q "^ibvct compare: $tmp/$st: not a finished run: " "$tmp/out"
	'
done
run "$tmp/complete"
printf 'state=complete\nverdict=PASS\n' >"$tmp/complete/run.txt"
cmp_runs "$tmp/old" "$tmp/complete"
test_expect_success "a complete one is compared" 'show; [ $rc = 0 ]'
test_done
