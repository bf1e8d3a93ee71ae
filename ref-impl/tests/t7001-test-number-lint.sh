#!/bin/sh
# SPDX-License-Identifier: MIT
# t7001: no test number is used twice across ref-impl/tests,
# fake-provider/tests and suites/ (ci/lint-test-numbers), and the lint can
# fail: it must refuse a scratch tree with a reused number and a bad name.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
lint=$src/ci/lint-test-numbers
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

echo "1..4"

out=$("$lint" "$src" 2>&1)
if [ $? -eq 0 ]; then ok "test numbers in the tree are unique and names well-formed"
else not_ok "test numbers in the tree are unique and names well-formed"; printf '%s\n' "$out" | diag; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7001.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ref-impl/tests" "$tmp/fake-provider/tests" "$tmp/suites/xrc"
: >"$tmp/ref-impl/tests/t2001-xrcd-open.c"
: >"$tmp/fake-provider/tests/t5001-parse.c"
: >"$tmp/suites/xrc/t2002-srq.c"
if "$lint" "$tmp" >/dev/null 2>&1; then ok "a clean scratch tree passes"
else not_ok "a clean scratch tree passes"; fi

: >"$tmp/suites/xrc/t5001-other.c"
out=$("$lint" "$tmp" 2>&1)
if [ $? -ne 0 ] && printf '%s\n' "$out" | grep -q 't5001:.*fake-provider/tests/t5001-parse.c.*suites/xrc/t5001-other.c'; then
	ok "a number reused across directories is reported with both paths"
else not_ok "a number reused across directories is reported with both paths"; printf '%s\n' "$out" | diag; fi
rm -f "$tmp/suites/xrc/t5001-other.c"

: >"$tmp/ref-impl/tests/t2003-Bad_Name.c"
out=$("$lint" "$tmp" 2>&1)
if [ $? -ne 0 ] && printf '%s\n' "$out" | grep -q 'bad test name: ref-impl/tests/t2003-Bad_Name.c'; then
	ok "a malformed test name is reported"
else not_ok "a malformed test name is reported"; printf '%s\n' "$out" | diag; fi
