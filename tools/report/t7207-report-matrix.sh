#!/bin/sh
# SPDX-License-Identifier: MIT
# t7207: tools/report/report-matrix DIR, the release matrix, on synthetic
# cells (report folders made by report-html from TAP, as make
# release-matrix's are): the same verdicts on both releases differ nowhere;
# a difference that fixtures/release-diffs.txt explains is classed and
# sourced (FORK-01, a version fact) and passes; one it does not explain is
# UNEXPLAINED and fails (exit 1); a missing cell fails; matrix.tsv (the
# machine table), summary.txt and index.html begin with what each release
# ran on; compare-runs' view of each target's two cells is beside them.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp

# cell DIR RELEASE FORK01 QPX09: a report folder of one cell, FORK-01's and
# QPX-09's tests ok or not ok as given
cell() {
	mkdir -p "$1/tap"
	printf '1..3\n%s 1 - fork_init_marks [FORK-01]\n%s 2 - qp_state_kept [QPX-09]\nok 3 - layout [ABI-01]\n' \
		"$3" "$4" >"$1/tap/t3104-fork.tap"
	case "$3$4" in *not*) echo 1 ;; *) echo 0 ;; esac >"$1/tap/t3104-fork.rc"
	printf 'target=rxe-vm\ndevice=rxe0\nos=Debian GNU/Linux %s\nkernel=k%s\nrdma-core.package=r%s\n' \
		"$2" "$2" "$2" >"$1/fingerprint.txt"
	perl "$src/tools/report/report-html" "$1" >/dev/null 2>&1
	echo "ibvct conformance report: ran on $(perl "$src/tools/report/report-ranon" "$1")" >"$1/summary.txt"
}

# the same verdicts on both releases
cell "$tmp/same/12-rxe-vm" 12 ok ok
cell "$tmp/same/13-rxe-vm" 13 ok ok
run_cmd perl "$src/tools/report/report-matrix" "$tmp/same"
test_expect_success 'the same verdicts on both releases: nothing differs, exit 0' '
	cat "$tl_out"
	rc_is 0 && out_has "^rxe-vm: 0 requirements differ between Debian 12 and 13$" &&
		! grep -q "	differs	" "$tmp/same/matrix.tsv"
'
test_expect_success 'every report of it names what each release ran on first' '
	head -n 1 "$tmp/same/summary.txt" | grep -q "^ibvct release matrix: Debian 12, kernel k12, rdma-core r12 | Debian 13, kernel k13, rdma-core r13$" &&
		head -n 1 "$tmp/same/matrix.tsv" | grep -q "^# ibvct release matrix: Debian 12, .* | Debian 13, " &&
		grep -q "<title>ibvct release matrix: Debian 12, " "$tmp/same/index.html"
'

# FORK-01 differs: a version fact of fixtures/release-diffs.txt
cell "$tmp/expl/12-rxe-vm" 12 ok ok
cell "$tmp/expl/13-rxe-vm" 13 "not ok" ok
run_cmd perl "$src/tools/report/report-matrix" "$tmp/expl"
test_expect_success 'an explained difference: classed, sourced, exit 0' '
	cat "$tl_out"
	rc_is 0 && out_has "^rxe-vm: 1 requirement differ" &&
		grep -Eq "^req	FORK-01	rxe-vm	pass	fail	differs	version	.*5a11b68ca" "$tmp/expl/matrix.tsv" &&
		grep -Eq "^req	QPX-09	rxe-vm	pass	pass	same		" "$tmp/expl/matrix.tsv"
'
test_expect_success 'compare-runs reads the two cells: the regression it names' '
	grep -q "fork_init_marks" "$tmp/expl/compare-rxe-vm.txt" && grep -q "^1 regression" "$tmp/expl/compare-rxe-vm.txt"
'

# QPX-09 differs: nothing explains it
cell "$tmp/unex/12-rxe-vm" 12 ok ok
cell "$tmp/unex/13-rxe-vm" 13 ok "not ok"
run_cmd perl "$src/tools/report/report-matrix" "$tmp/unex"
test_expect_success 'an unexplained difference fails the matrix (exit 1) and is named' '
	cat "$tl_out"
	rc_is 1 && out_has "QPX-09 .*UNEXPLAINED" && out_has "^verdict: FAIL: 1 unexplained" &&
		grep -q "<td class=\"UNEXPLAINED\">" "$tmp/unex/index.html"
'

# a target with one cell only
cell "$tmp/miss/12-rxe-vm" 12 ok ok
cell "$tmp/miss/13-rxe-vm" 13 ok ok
cell "$tmp/miss/12-xrc-vm" 12 ok ok
run_cmd perl "$src/tools/report/report-matrix" "$tmp/miss"
test_expect_success 'a missing cell fails the matrix and is named' '
	rc_is 1 && out_has "missing cells: .*13-xrc-vm"
'
run_cmd perl "$src/tools/report/report-matrix" "$tmp/nothing-here"
test_expect_success 'a folder without two releases is a usage error (exit 2)' '
	rc_is 2
'
test_done
