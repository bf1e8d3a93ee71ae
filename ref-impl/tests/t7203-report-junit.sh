#!/bin/sh
# SPDX-License-Identifier: MIT
# t7203: ci/report-junit's junit.xml validates against ci/report-junit.xsd
# (xmllint --schema) and counts right: one testcase per TAP test line (plus
# one for a skipped program and one for a non-zero exit), <skipped> with the
# reason for SKIP and for a known deviation, a failure for "not ok", a plain
# pass for a fixed TODO. The schema itself must refuse a broken document.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/ci/report-testdata.sh"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }
check() { t=$1; shift; if "$@"; then ok "$t"; else not_ok "$t"; fi; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7203.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
xsd=$src/ci/report-junit.xsd
x() { xmllint --xpath "$1" "$j" 2>/dev/null; }

echo "1..10"
rt_run_mixed "$tmp/run"
perl "$src/ci/report-junit" "$tmp/run" 2>"$tmp/err"
j=$tmp/run/junit.xml
if xmllint --noout --schema "$xsd" "$j" >"$tmp/xml" 2>&1; then ok "junit.xml validates against the JUnit schema"
else not_ok "junit.xml validates against the JUnit schema"; sed 's/^/# /' "$tmp/xml" "$tmp/err" | head -20; fi
check "one testsuite per program" test "$(x 'count(//testsuite)')" = 3
# 8 + 1 TAP tests, the skipped program's one, two non-zero exits (1, 139).
check "testcases: one per TAP test, + skip-all + exit statuses" test "$(x 'count(//testcase)')" = 12
check "not ok is a failure" test "$(x 'count(//testcase[failure[@type="TestFailed"]])')" = 1
check "SKIP maps to skipped with its reason" test "$(x 'string(//testcase[starts-with(@name,"3 ")]/skipped/@message)')" = "no xrc"
check "a known deviation maps to skipped" test "$(x 'string(//testcase[starts-with(@name,"4 ")]/skipped/@type)')" = KnownDeviation
check "a fixed TODO is a passing testcase" test "$(x 'count(//testcase[starts-with(@name,"5 ")]/*)')" = 0
check "a skipped program shows its reason" test "$(x 'string(//testsuite[@name="t9002-skipall"]/testcase/skipped/@message)')" = "no device"
check "the saved exit status is a failure" test "$(x 'string(//testsuite[@name="t9003-crash"]/testcase[@name="(exit status)"]/failure/@message)')" = "test program exited with status 139"

sed 's/<testcase name="1 /<testcase nam="1 /' "$j" >"$tmp/bad.xml"
check "the schema refuses a testcase without a name" sh -c '! xmllint --noout --schema "$1" "$2" 2>/dev/null' - "$xsd" "$tmp/bad.xml"
exit $fail
