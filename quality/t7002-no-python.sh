#!/bin/sh
# SPDX-License-Identifier: MIT
# t7002: no tracked source or script uses Python (quality/lint-no-python), and the
# lint can fail: it must refuse scratch trees with a .py file, a python
# interpreter line and a python invocation.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
lint=$src/quality/lint-no-python
tmp=$tl_tmp/tree
# refuses WHAT EXPECTED-LINE: the lint must fail on $tmp, saying EXPECTED-LINE
refuses() {
	want=$2
	test_expect_success "refuses $1" '
		! "$lint" "$tmp" >"$tl_tmp/out" 2>&1 && grep "$want" "$tl_tmp/out" ||
			{ cat "$tl_tmp/out"; false; }
	'
}

test_expect_success "no python in the tree" '"$lint" "$src"'

mkdir -p "$tmp/ci"
printf '#!/bin/sh\necho fine\n' >"$tmp/ci/run"
printf '# Python is not used here.\n' >"$tmp/README.md"
test_expect_success "a clean scratch tree passes (prose may name Python)" '"$lint" "$tmp"'

printf '#!/usr/bin/env python3\nprint(1)\n' >"$tmp/ci/gen"
refuses "an interpreter line" 'python interpreter line: ci/gen'
rm -f "$tmp/ci/gen"

printf 'all:\n\tpython3 tools/gen.py > x.h\n' >"$tmp/Makefile"
refuses "an invocation in a Makefile" 'python used: Makefile:2:'
rm -f "$tmp/Makefile"

: >"$tmp/ci/helper.py"
refuses "a .py file" 'python file: ci/helper.py'
test_done
