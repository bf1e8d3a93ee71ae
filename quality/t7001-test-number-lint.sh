#!/bin/sh
# SPDX-License-Identifier: MIT
# t7001: no test number is used twice across ref-impl/tests,
# fake-provider/tests and suites/ (quality/lint-test-numbers), and the lint can
# fail: it must refuse a scratch tree with a reused number and a bad name.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/ci/test-lib.sh"
lint=$src/quality/lint-test-numbers
tmp=$tl_tmp/tree

test_expect_success "test numbers in the tree are unique and names well-formed" '"$lint" "$src"'

mkdir -p "$tmp/ref-impl/tests" "$tmp/fake-provider/tests" "$tmp/suites/xrc"
: >"$tmp/ref-impl/tests/t2001-xrcd-open.c"
: >"$tmp/fake-provider/tests/t5001-parse.c"
: >"$tmp/suites/xrc/t2002-srq.c"
test_expect_success "a clean scratch tree passes" '"$lint" "$tmp"'

: >"$tmp/suites/xrc/t5001-other.c"
test_expect_success "a number reused across directories is reported with both paths" '
	! "$lint" "$tmp" >"$tl_tmp/out" 2>&1 &&
		grep "t5001:.*fake-provider/tests/t5001-parse.c.*suites/xrc/t5001-other.c" "$tl_tmp/out" ||
		{ cat "$tl_tmp/out"; false; }
'
rm -f "$tmp/suites/xrc/t5001-other.c"

: >"$tmp/ref-impl/tests/t2003-Bad_Name.c"
test_expect_success "a malformed test name is reported" '
	! "$lint" "$tmp" >"$tl_tmp/out" 2>&1 &&
		grep "bad test name: ref-impl/tests/t2003-Bad_Name.c" "$tl_tmp/out" ||
		{ cat "$tl_tmp/out"; false; }
'
test_done
