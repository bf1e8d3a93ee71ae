#!/bin/sh
# SPDX-License-Identifier: MIT
# t7203: tools/report/report-junit's junit.xml validates against tools/report/report-junit.xsd
# (xmllint --schema) and counts right: one testcase per TAP test line (plus
# one for a skipped program and one for a non-zero exit), <skipped> with the
# reason for SKIP and for a known deviation, a failure for "not ok", a plain
# pass for a fixed TODO. The schema itself must refuse a broken document.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
tmp=$tl_tmp
xsd=$src/tools/report/report-junit.xsd
x() { xmllint --xpath "$1" "$j" 2>/dev/null; }
# is XPATH WANT: the XPath expression's value is WANT
is() {
	got=$(x "$1")
	[ "$got" = "$2" ] || { echo "$1: want '$2', got '$got'"; return 1; }
}

rt_run_mixed "$tmp/run"
perl "$src/tools/report/report-junit" "$tmp/run" 2>"$tmp/err"
j=$tmp/run/junit.xml
test_expect_success "junit.xml validates against the JUnit schema" '
	cat "$tmp/err"
	xmllint --noout --schema "$xsd" "$j"
'
test_expect_success "one testsuite per program" 'is "count(//testsuite)" 3'
# 8 + 1 TAP tests, the skipped program's one, two non-zero exits (1, 139).
test_expect_success "testcases: one per TAP test, + skip-all + exit statuses" 'is "count(//testcase)" 12'
test_expect_success "not ok is a failure" 'is "count(//testcase[failure[@type=\"TestFailed\"]])" 1'
test_expect_success "SKIP maps to skipped with its reason" '
	is "string(//testcase[starts-with(@name,\"3 \")]/skipped/@message)" "no xrc"
'
test_expect_success "a known deviation maps to skipped" '
	is "string(//testcase[starts-with(@name,\"4 \")]/skipped/@type)" KnownDeviation
'
test_expect_success "a fixed TODO is a passing testcase" 'is "count(//testcase[starts-with(@name,\"5 \")]/*)" 0'
test_expect_success "a skipped program shows its reason" '
	is "string(//testsuite[@name=\"t9002-skipall\"]/testcase/skipped/@message)" "no device"
'
test_expect_success "the saved exit status is a failure" '
	is "string(//testsuite[@name=\"t9003-crash\"]/testcase[@name=\"(exit status)\"]/failure/@message)" \
		"test program exited with status 139"
'

sed 's/<testcase name="1 /<testcase nam="1 /' "$j" >"$tmp/bad.xml"
test_expect_success "the schema refuses a testcase without a name" '
	! xmllint --noout --schema "$xsd" "$tmp/bad.xml"
'
test_done
