#!/bin/sh
# SPDX-License-Identifier: MIT
# t7206: reports/tools/compare-runs OLD NEW. Identical runs: no change, exit 0. An
# injected regression (pass -> fail, pass -> known deviation, a program
# that now crashes, a program gone) exits 1 and names each; fixes, skip ->
# run and run -> skip are reported without failing; tests are matched by
# name when their numbers shift; a bundle works as well as a folder.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/reports/tools/report-testdata.sh"
. "$src/ci/test-lib.sh"
tmp=$tl_tmp
cmp_runs() { perl "$src/reports/tools/compare-runs" "$@" >"$tmp/out" 2>&1; rc=$?; }
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
test_done
