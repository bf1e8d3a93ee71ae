#!/bin/sh
# SPDX-License-Identifier: MIT
# t6103: a run of the rxe-vm target whose guest gave no result (ended at its
# time limit, panicked, lost rxe0: tools/ibvct/ibvct writes DIR/no-result.txt and
# keeps the console log as DIR/console.txt) is never a pass, whatever TAP
# came back before: the page's verdict is NO RESULT with the reason and a
# link to the console log, summary.txt says it first, and a bundle of it is
# rejected. Synthetic runs (tools/report/report-testdata.sh), no guest.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
tmp=$tl_tmp

# every mandatory requirement passes in the TAP that came back
rt_run_mustpass "$tmp/run"
echo '<testsuites/>' >"$tmp/run/junit.xml"
echo "guest: the guest was ended at its time limit (3720 s)" >"$tmp/run/no-result.txt"
echo "[    4.1] ibvct-vm-guest: running sh tools/vm/guest-conformance" >"$tmp/run/console.txt"
perl "$src/tools/report/report-html" "$tmp/run" >"$tmp/html.out" 2>&1
test_expect_success 'the page says NO RESULT, not PASS, with the reason and the console log' '
	cat "$tmp/html.out"
	grep -q "<strong class=\"word\">NO RESULT</strong>" "$tmp/run/index.html" &&
	! grep -q "<strong class=\"word\">PASS</strong>" "$tmp/run/index.html" &&
	grep -q "No result: guest: the guest was ended at its time limit (3720 s)" "$tmp/run/index.html" &&
	grep -q "href=\"console.txt\"" "$tmp/run/index.html"
'
test_expect_success 'the page is still well-formed' '
	xmllint --noout "$tmp/run/index.html"
'
perl "$src/tools/report/report-summary" "$tmp/run" >"$tmp/summary" 2>&1
test_expect_success 'the summary says NO RESULT first, with the console log' '
	cat "$tmp/summary"
	head -n 1 "$tmp/summary" | grep -qx "verdict: NO RESULT: guest: the guest was ended at its time limit (3720 s)" &&
	sed -n 2p "$tmp/summary" | grep -qx "console log: console.txt"
'
perl "$src/tools/report/report-junit" "$tmp/run" "$tmp/junit.xml" >"$tmp/junit.out" 2>&1
test_expect_success 'junit.xml has an error testcase "(no result)", and stays valid' '
	cat "$tmp/junit.out"
	grep -q "<testcase name=\"(no result)\"><error type=\"NoResult\" message=\"guest: the guest was ended" "$tmp/junit.xml" &&
	xmllint --noout --schema "$src/tools/report/report-junit.xsd" "$tmp/junit.xml"
'
mkdir -p "$tmp/bundle"
perl "$src/tools/report/certify" --out "$tmp/bundle" "$tmp/run" >"$tmp/certify" 2>&1
rc=$?
test_expect_success 'a bundle of it is rejected: no result' '
	cat "$tmp/certify"
	[ "$rc" != 0 ] && grep -q "no result: guest: the guest was ended at its time limit" "$tmp/certify"
'
# the same run without no-result.txt passes: the marker alone decides
rm "$tmp/run/no-result.txt"
perl "$src/tools/report/report-html" "$tmp/run" >/dev/null 2>&1
test_expect_success 'without the marker the same TAP is a PASS' '
	grep -q "<strong class=\"word\">PASS</strong>" "$tmp/run/index.html"
'
test_done
