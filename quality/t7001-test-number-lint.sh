#!/bin/sh
# SPDX-License-Identifier: MIT
# t7001: every test program's number is in a range of its folder
# (testkit/test-numbers.txt) and used once (quality/lint-test-numbers), and
# the lint can fail: it must refuse a scratch tree with a reused number, a
# bad name, a number outside its folder's ranges, a test in no folder of
# the table, and a malformed table.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
lint=$src/quality/lint-test-numbers
tmp=$tl_tmp/tree

test_expect_success "the tree's tests are in their folders' ranges, numbers unique, names well-formed" \
	'"$lint" "$src"'

mkdir -p "$tmp/testkit" "$tmp/ref-impl/tests" "$tmp/fake-provider/tests" "$tmp/suites/xrc" \
	"$tmp/build/t" "$tmp/reports/20260101-ref-fake0" "$tmp/tools/report"
cat >"$tmp/testkit/test-numbers.txt" <<'TABLE'
# folder        ranges
ref-impl/tests  2000-2001 2003-2099
fake-provider   5000-5999
suites          2002-2002 5002-5099  # two ranges
tools/report    7200-7299
TABLE
: >"$tmp/ref-impl/tests/t2001-xrcd-open.c"
: >"$tmp/fake-provider/tests/t5001-parse.c"
: >"$tmp/suites/xrc/t2002-srq.c"
: >"$tmp/tools/report/t7201-report.sh"
# build output and generated reports are not test programs
: >"$tmp/build/t/t9999-Built.t"
: >"$tmp/reports/20260101-ref-fake0/t9998-Tap.tap"
test_expect_success "a clean scratch tree passes" '"$lint" "$tmp"'

refused() {	# refused WHAT: the lint fails on the tree and prints WHAT
	! "$lint" "$tmp" >"$tl_tmp/out" 2>&1 && grep -q -- "$1" "$tl_tmp/out" ||
		{ cat "$tl_tmp/out"; false; }
}

: >"$tmp/suites/xrc/t5001-other.c"
test_expect_success "a number reused across directories is reported with both paths" \
	'refused "t5001:.*fake-provider/tests/t5001-parse.c.*suites/xrc/t5001-other.c"'
rm -f "$tmp/suites/xrc/t5001-other.c"

: >"$tmp/ref-impl/tests/t2003-Bad_Name.c"
test_expect_success "a malformed test name is reported" \
	'refused "bad test name: ref-impl/tests/t2003-Bad_Name.c"'
rm -f "$tmp/ref-impl/tests/t2003-Bad_Name.c"

: >"$tmp/ref-impl/tests/t2002-between-ranges.c"
test_expect_success "a number between its folder's ranges is reported with the ranges" \
	'refused "outside its folder.s ranges: ref-impl/tests/t2002-between-ranges.c (ref-impl/tests: 2000-2001 2003-2099)"'
rm -f "$tmp/ref-impl/tests/t2002-between-ranges.c"

: >"$tmp/suites/t5100-other-topic.sh"
test_expect_success "a number in another folder's range is reported" \
	'refused "outside its folder.s ranges: suites/t5100-other-topic.sh"'
rm -f "$tmp/suites/t5100-other-topic.sh"

mkdir -p "$tmp/tools/new"
: >"$tmp/tools/new/t6300-new-tool.sh"
test_expect_success "a test in no folder of the table is reported" \
	'refused "test outside every folder of testkit/test-numbers.txt: tools/new/t6300-new-tool.sh"'
rm -rf "$tmp/tools"

test_expect_success "the clean scratch tree passes again" '"$lint" "$tmp"'

printf 'suites 5000-49\n' >>"$tmp/testkit/test-numbers.txt"
test_expect_success "a malformed range in the table stops the lint (status 2)" '
	"$lint" "$tmp" >"$tl_tmp/out" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q "test-numbers.txt:6: bad range 5000-49" "$tl_tmp/out" ||
		{ echo "status $rc"; cat "$tl_tmp/out"; false; }
'
rm -f "$tmp/testkit/test-numbers.txt"
test_expect_success "a tree without the table stops the lint (status 2)" '
	"$lint" "$tmp" >"$tl_tmp/out" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q "no testkit/test-numbers.txt" "$tl_tmp/out" ||
		{ echo "status $rc"; cat "$tl_tmp/out"; false; }
'
test_done
