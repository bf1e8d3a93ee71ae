#!/bin/sh
# SPDX-License-Identifier: MIT
# t7205: tools/report/certify packs a run into a bundle (manifest, fingerprint,
# statement template, catalogue, versioned must-pass list, waivers) that
# tools/report/verify-bundle accepts; and verify-bundle rejects a tampered bundle (a
# TAP file changed, a file added, a file removed, the manifest edited) and
# a run where a mandatory requirement failed, was not run or was skipped
# without a reason, while it accepts "not supported" skips, known
# deviations and waivers that carry a reason.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
tmp=$tl_tmp
# certify/verify ARGS...: the tool's output in $tmp/out, its status in rc
certify() { perl "$src/tools/report/certify" "$@" >"$tmp/out" 2>&1; rc=$?; }
verify() { perl "$src/tools/report/verify-bundle" "$@" >"$tmp/out" 2>&1; rc=$?; }
# show: the last tool's status and output, for a failed check
show() { echo "exit $rc"; head -n 20 "$tmp/out"; }
# expect_reject NAME PATTERN BUNDLE: verify-bundle exits 1 and says PATTERN.
expect_reject() {
	verify "$3"
	pattern=$2
	test_expect_success "$1" 'show; [ $rc = 1 ] && grep -q -- "$pattern" "$tmp/out"'
}
# repack NAME: unpack good.tar.gz into $tmp/x/, return to edit; pack NAME
repack_begin() { rm -rf "$tmp/x" && mkdir "$tmp/x" && tar -xzf "$tmp/out1/run1.tar.gz" -C "$tmp/x"; }
repack_end() { tar -czf "$tmp/$1.tar.gz" -C "$tmp/x" run1; }
# mk DIR: rt_run_mustpass with a stub junit.xml (t7203 covers JUnit; this
# keeps certify from loading the formatter for every variant).
mk() { rt_run_mustpass "$1" && echo '<testsuites/>' >"$1/junit.xml"; }

rt_run_mustpass "$tmp/run1"
mkdir -p "$tmp/out1"
certify --out "$tmp/out1" "$tmp/run1"
test_expect_success "a run where every mandatory ID passed certifies" 'show; [ $rc = 0 ] && grep -q "^bundle OK" "$tmp/out"'
b=$tmp/out1/run1.tar.gz
list=$(tar -tzf "$b" 2>/dev/null | sort | tr '\n' ' ')
test_expect_success "the bundle holds the run, manifest, statement, lists and page" '
	want_ok=1
	for f in MANIFEST.sha256 STATEMENT.md fingerprint.txt mustpass.txt requirements.txt waivers.txt \
		index.html junit.xml results.tsv tap/t9100-all.tap; do
		case " $list " in *" run1/$f "*) ;; *) want_ok=0; echo "missing run1/$f" ;; esac
	done
	[ $want_ok = 1 ]
'
test_expect_success "the bundle's own SHA-256 is written beside it" '
	cd "$tmp/out1" && sha256sum -c --quiet run1.tar.gz.sha256
'
tar -xzf "$b" -C "$tmp" run1/MANIFEST.sha256 run1/STATEMENT.md 2>/dev/null
mv "$tmp/run1/MANIFEST.sha256" "$tmp/run1/STATEMENT.md" "$tmp/" 2>/dev/null
test_expect_success "the statement template is filled from the fingerprint" '
	grep -q "Firmware: 16.35.1012" "$tmp/STATEMENT.md" && grep -q "^- Company: ____" "$tmp/STATEMENT.md" &&
		grep -q "mustpass.txt version [0-9]" "$tmp/STATEMENT.md"
'

repack_begin; sed -i 's/^ok 5 /not ok 5 /' "$tmp/x/run1/tap/t9100-all.tap"; repack_end tap
expect_reject "a changed TAP file is rejected by the manifest" 'tap/t9100-all.tap: SHA-256 mismatch' "$tmp/tap.tar.gz"
repack_begin; echo extra >"$tmp/x/run1/extra.txt"; repack_end add
expect_reject "an added file is rejected" 'extra.txt: not in the manifest' "$tmp/add.tar.gz"
repack_begin; rm "$tmp/x/run1/waivers.txt"; repack_end rm
expect_reject "a removed file is rejected" 'waivers.txt: missing' "$tmp/rm.tar.gz"
repack_begin; sed -i '/results.tsv/d' "$tmp/x/run1/MANIFEST.sha256"; repack_end noline
expect_reject "a manifest with a line removed is rejected" 'results.tsv: not in the manifest' "$tmp/noline.tar.gz"

RT_FAIL=XRCD-07 mk "$tmp/run2"
certify --out "$tmp/out2" "$tmp/run2"
test_expect_success "a failed mandatory ID makes certify fail" '
	show; [ $rc = 1 ] && grep -q "mandatory XRCD-07: FAIL" "$tmp/out"
'
RT_DROP=LIFE-03 mk "$tmp/run3"
certify --out "$tmp/out3" "$tmp/run3"
expect_reject "a mandatory ID no test ran is rejected" 'mandatory LIFE-03: no test ran it' "$tmp/out3/run3.tar.gz"
RT_SKIP_NR=QPX-05 mk "$tmp/run4"
certify --out "$tmp/out4" "$tmp/run4"
expect_reject "a skip without a reason is rejected" 'mandatory QPX-05: not supported (skip) without a reason' "$tmp/out4/run4.tar.gz"

RT_SKIP="XRCD-01 XRCD-02" RT_DEV=SRQX-03 mk "$tmp/run5"
certify --out "$tmp/out5" "$tmp/run5"
test_expect_success "skips and known deviations with reasons are accepted" '
	show; [ $rc = 0 ] && grep -q "2 not supported, 1 waived, 0 rejected" "$tmp/out"
'
RT_FAIL=QPX-06 mk "$tmp/run6"
printf 'QPX-06 firmware 16.35 rejects the optional alt path bit; fixed in 16.36\n' >"$tmp/waive"
certify --waivers "$tmp/waive" --out "$tmp/out6" "$tmp/run6"
test_expect_success "a failure waived with a reason is accepted" '
	show; [ $rc = 0 ] && grep -q "1 waived, 0 rejected" "$tmp/out"
'
# ... but only the ones it names: the mustpass list of this tree decides.
printf 'XRCD-01\n' >"$tmp/mp"; printf 'version: 9\n' >>"$tmp/mp"
verify --mustpass "$tmp/mp" "$tmp/out2/run2.tar.gz"
test_expect_success "--mustpass chooses the list; its version is reported" '
	show; [ $rc = 0 ] && grep -q "checked against version 9" "$tmp/out"
'
# a run that did not finish: certify refuses it; a bundle of one is rejected
mk "$tmp/run7"
printf 'state=interrupted\nstarted=2026-01-01T00:00:00Z\n' >"$tmp/run7/run.txt"
certify --out "$tmp/out7" "$tmp/run7"
test_expect_success "certify refuses an interrupted run, and packs nothing" '
	show; [ $rc = 2 ] && grep -q "^ibvct certify: $tmp/run7: not a finished run: the run was interrupted" "$tmp/out" &&
	[ ! -e "$tmp/out7" ]
'
repack_begin
printf 'state=running\npid=4242\n' >"$tmp/x/run1/run.txt"
(cd "$tmp/x/run1" && sha256sum run.txt >>MANIFEST.sha256)
tar -czf "$tmp/running.tar.gz" -C "$tmp/x" run1
expect_reject "a bundle of a run still running when packed is rejected" "not a finished run: the run has not finished (state running, pid 4242)" "$tmp/running.tar.gz"
test_done
