#!/bin/sh
# SPDX-License-Identifier: MIT
# t7002: no tracked source or script uses Python (ci/lint-no-python), and the
# lint can fail: it must refuse scratch trees with a .py file, a python
# interpreter line and a python invocation.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
lint=$src/ci/lint-no-python
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }
refuses() {	# refuses WHAT EXPECTED-LINE: lint must fail on $tmp
	out=$("$lint" "$tmp" 2>&1)
	if [ $? -ne 0 ] && printf '%s\n' "$out" | grep -q "$2"; then ok "refuses $1"
	else not_ok "refuses $1"; printf '%s\n' "$out" | diag; fi
}

echo "1..5"

out=$("$lint" "$src" 2>&1)
if [ $? -eq 0 ]; then ok "no python in the tree"
else not_ok "no python in the tree"; printf '%s\n' "$out" | diag; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7002.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ci"
printf '#!/bin/sh\necho fine\n' >"$tmp/ci/run"
printf '# Python is not used here.\n' >"$tmp/README.md"
if "$lint" "$tmp" >/dev/null 2>&1; then ok "a clean scratch tree passes (prose may name Python)"
else not_ok "a clean scratch tree passes (prose may name Python)"; fi

printf '#!/usr/bin/env python3\nprint(1)\n' >"$tmp/ci/gen"
refuses "an interpreter line" 'python interpreter line: ci/gen'
rm -f "$tmp/ci/gen"

printf 'all:\n\tpython3 tools/gen.py > x.h\n' >"$tmp/Makefile"
refuses "an invocation in a Makefile" 'python used: Makefile:2:'
rm -f "$tmp/Makefile"

: >"$tmp/ci/helper.py"
refuses "a .py file" 'python file: ci/helper.py'
