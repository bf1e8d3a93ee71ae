#!/bin/sh
# SPDX-License-Identifier: MIT
# t7201: the report tools read the suites' TAP convention right. A synthetic
# run with one of each result goes through tools/report/report-html (results.tsv) and
# tools/report/report-summary: pass, fail, skip with its reason, known deviation (not
# ok # TODO), fixed (ok # TODO), several IDs on one test, the worst result
# winning for an ID named twice, program problems (exit status, plan), and
# an ID outside the catalogue; and tools/report/report-all (other runners' entry).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
has() { grep -qxF -- "$1" "$2" || { echo "missing line in $2: $1" | tr '\t' '|'; return 1; }; }
tmp=$tl_tmp
tab=$(printf '\t')

rt_run_mixed "$tmp/run"
test_expect_success "report-html runs on a mixed run" 'perl "$src/tools/report/report-html" "$tmp/run"'
r=$tmp/run/results.tsv
test_expect_success "pass" 'has "req${tab}XRCD-01${tab}pass${tab}mandatory${tab}" "$r"'
test_expect_success "fail, also when a passing test names the ID too" 'has "req${tab}XRCD-02${tab}fail${tab}mandatory${tab}" "$r"'
test_expect_success "skip keeps its reason" 'has "req${tab}XRCD-03${tab}skip${tab}mandatory${tab}no xrc" "$r"'
test_expect_success "not ok with a TODO is a known deviation" 'has "req${tab}XRCD-04${tab}deviation${tab}mandatory${tab}known deviation: returns EINVAL" "$r"'
test_expect_success "ok with a TODO is fixed, for each of its IDs" '
	has "req${tab}XRCD-05${tab}fixed${tab}mandatory${tab}was EBUSY" "$r" &&
		has "req${tab}LIFE-10${tab}fixed${tab}mandatory${tab}was EBUSY" "$r"
'
test_expect_success "an ID nobody names is not run" 'has "req${tab}QPX-13${tab}notrun${tab}optional${tab}" "$r"'
test_expect_success "one row per catalogue ID" '
	[ "$(grep -c "^req" "$r")" = "$(grep -c "^[A-Z]" "$src/fixtures/requirements.txt")" ]
'
test_expect_success "exit status and short plan make a program fail" 'has "program${tab}t9003-crash${tab}FAIL${tab}exit 139; planned 3, ran 1" "$r"'
test_expect_success "a skipped program is ok" 'has "program${tab}t9002-skipall${tab}ok${tab}" "$r"'

perl "$src/tools/report/report-summary" --detail "$tmp/run" >"$tmp/sum" 2>&1
test_expect_success "summary counts the catalogue" '
	cat "$tmp/sum"
	grep -q "^requirements: $(grep -c "^[A-Z]" "$src/fixtures/requirements.txt") in the catalogue: 1 FAIL, 1 known deviation, 2 fixed, 2 pass, 1 not supported (skip), " "$tmp/sum"
'
test_expect_success "summary names the failing ID and test" '
	cat "$tmp/sum"
	grep -q "^  XRCD-02 .*t9001-mixed: xrcd_open_reserved_mask_refused.* \[enforced in: libibverbs-cmd\]\$" "$tmp/sum"
'
test_expect_success "summary: the verdict first, then each result by reason, the reason once" '
	head -n 1 "$tmp/sum" | grep -q "^verdict: FAIL: 3 programs, 2 failed; mandatory " &&
	grep -A2 -x "FAIL: 1 requirement, 1 reason:" "$tmp/sum" | tail -n 2 | tr "\n" "|" |
		grep -qx "  - expected errno 95, got 0|    XRCD-02|" &&
	grep -A2 -x "fixed: 2 requirements, 1 reason:" "$tmp/sum" | tail -n 1 | grep -qx "    XRCD-05 LIFE-10" &&
	[ "$(grep -c "was EBUSY" "$tmp/sum")" = 1 ]
'
test_expect_success "summary lists IDs outside the catalogue" '
	cat "$tmp/sum"
	grep -q "^IDs not in fixtures/requirements.txt: ZZZ-99\$" "$tmp/sum"
'

rt_run_mixed "$tmp/run2"
echo "ok t9001-mixed.system 8 tests" >"$tmp/run2/suites-summary.txt"
sh "$src/tools/report/report-all" "$tmp/run2" system >"$tmp/all" 2>&1
rc=$?
test_expect_success "tools/report/report-all makes the whole report for another runner's TAP" '
	cat "$tmp/all"
	[ -s "$tmp/run2/junit.xml" ] && [ -s "$tmp/run2/index.html" ] &&
		grep -q "^ok t9001-mixed.system 8 tests\$" "$tmp/run2/summary.txt" &&
		grep -q "^requirements: " "$tmp/run2/summary.txt" &&
		[ "$(tail -n 1 "$tmp/all")" = "FAIL: 3 programs, 2 failed; mandatory 103: 1 FAIL, 1 known deviation, 2 fixed, 2 pass, 1 not supported (skip), 96 not run — $tmp/run2" ] &&
		[ "$rc" = 1 ]
'
# a folder used again: the summary and the fingerprint are the new run's
sed -i "s/^target=ref\$/target=old-run/" "$tmp/run2/fingerprint.txt"
echo "stale line of an earlier summary" >>"$tmp/run2/summary.txt"
sh "$src/tools/report/report-all" "$tmp/run2" system >"$tmp/all2" 2>&1
test_expect_success "report-all writes the summary and the fingerprint anew, never keeps an earlier run's" '
	! grep -q "stale line" "$tmp/run2/summary.txt" && grep -qx "target=system" "$tmp/run2/fingerprint.txt"
'
sed -i "s/^target=system\$/target=a-guest/" "$tmp/run2/fingerprint.txt"
sh "$src/tools/report/report-all" -k "$tmp/run2" system >"$tmp/all3" 2>&1
test_expect_success "report-all -k keeps the fingerprint there (the guest one)" '
	grep -qx "target=a-guest" "$tmp/run2/fingerprint.txt"
'
test_done
