#!/bin/sh
# SPDX-License-Identifier: MIT
# t7211: what a user reads names the commands a user types. The report
# tools are run as `ibvct compare`, `ibvct certify` and `ibvct verify`
# (installed, there is no tools/report/ to type): their usage and error
# messages, the page, the bundle's statement, the README and the man pages
# name those, never a checkout path to run; `ibvct compare-runs` and
# `ibvct verify-bundle`, the old names, say which command it is.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
tmp=$tl_tmp
t=$src/tools/report

# usage CMD TOOL: run with no argument, TOOL's usage names CMD
usage() {
	u_cmd=$1
	run_cmd perl "$t/$2"
	test_expect_success "$2 with no argument: usage: ibvct $1" '
		[ "$tl_rc" != 0 ] && head -n 1 "$tl_err" | grep -q "^usage: ibvct $u_cmd "
	'
}
usage compare compare-runs
usage verify verify-bundle
usage certify certify

run_cmd perl "$t/compare-runs" "$tmp/none-a" "$tmp/none-b"
test_expect_success "compare-runs on a missing folder: the message is ibvct compare's" '
	rc_is 2 && err_has "^ibvct compare: $tmp/none-a: "
'
run_cmd perl "$t/verify-bundle" "$tmp/none.tar.gz"
test_expect_success "verify-bundle on a missing bundle: the message is ibvct verify's" '
	rc_is 2 && err_has "^ibvct verify: $tmp/none.tar.gz: "
'
run_cmd perl "$t/certify" "$tmp/none"
test_expect_success "certify on a missing folder: the message is ibvct certify's" '
	[ "$tl_rc" != 0 ] && err_has "^ibvct certify: $tmp/none: not a directory"
'
for old in compare-runs verify-bundle; do
	run_cmd sh "$src/tools/ibvct/ibvct" "$old" a b
	o=$old
	test_expect_success "ibvct $old: refused, naming the command" '
		rc_is 2 && err_has "^ibvct: unknown command .$o.: .* by .ibvct (compare OLD NEW|verify BUNDLE)."
	'
done

# the page and the statement of a bundle
rt_run_mustpass "$tmp/run"
mkdir -p "$tmp/bundles"
perl "$t/certify" --out "$tmp/bundles" "$tmp/run" >"$tmp/certify.out" 2>&1
tar -xzf "$tmp/bundles/run.tar.gz" -C "$tmp/bundles"
test_expect_success "the page and the bundle's statement name ibvct verify, not a checkout path" '
	grep -q "<code>ibvct verify</code> decides certification" "$tmp/bundles/run/index.html" &&
	grep -q "\`ibvct verify\` rejects a bundle" "$tmp/bundles/run/STATEMENT.md" &&
	! grep -n "tools/report/\(compare-runs\|verify-bundle\|certify\)" "$tmp/bundles/run/index.html" \
		"$tmp/bundles/run/STATEMENT.md"
'

# the README, the manuals and the man pages: no tools/report/ command to
# type (a command line, a code span with arguments); naming the file that
# does a job, as a layout does, is fine
test_expect_success "the README and the manuals tell to run ibvct compare, verify and certify, not tools/report/" '
	! grep -nE "(^|\`|perl |sh )(tools/report|\\\$src/tools/report)/(compare-runs|verify-bundle|certify) +[A-Za-z<./\$-]" \
		"$src/README.md" "$src/reports/README.md" "$src"/doc/*.md "$src/testkit/README.md"
'
test_expect_success "the man pages name no checkout path of a report tool" '
	! grep -n "tools/report/\(compare-runs\|verify-bundle\|certify\)" "$src"/doc/man/*.1
'
test_done
