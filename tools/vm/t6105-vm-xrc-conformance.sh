#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t6105: `ibvct conformance --target xrc-vm` (what `make conformance
# TARGET=xrc-vm` runs) writes the report of a real kernel with ibvct's soft
# XRC device: one guest (tools/vm/ibvct-vm --target xrc-vm) runs every
# system-built suite on ixrc0 through Debian's libibverbs, with
# fixtures/expect/ixrc.txt chosen by the device's node description, and
# Debian's ibverbs-utils there (t6102, t6104); the report (summary, page,
# JUnit, results, fingerprint naming the guest kernel, the module's build id
# and KVM or TCG) says PASS with no failure. A guest that gives no result
# (here: ended at a time limit too short to boot) is a NO RESULT report and
# exit status 3, never a pass. The module must be built (make kmod).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
. "$src/testkit/sh/test-lib.sh"
skip_all_unless_utils ibv_xsrq_pingpong
rep=$tl_tmp/report

start=$(date +%s)
run_cmd sh "$src/tools/ibvct/ibvct" conformance --target xrc-vm --out "$rep"
secs=$(($(date +%s) - start))
test_expect_success 'ibvct conformance --target xrc-vm: exit 0, every program passed' '
	tail -n 40 "$tl_out"
	rc_is 0
'
test_expect_success 'the report: summary, page, JUnit, results, fingerprint; no no-result.txt' '
	ls "$rep"
	[ -s "$rep/summary.txt" ] && [ -s "$rep/index.html" ] && [ -s "$rep/results.tsv" ] &&
	[ -s "$rep/fingerprint.txt" ] && xmllint --noout "$rep/junit.xml" &&
	[ ! -e "$rep/no-result.txt" ]
'
test_expect_success 'the fingerprint: xrc-vm on ixrc0, the guest kernel, the module build id, KVM or TCG and why' '
	fp=$rep/fingerprint.txt
	cat "$fp"
	grep -qx "target=xrc-vm" "$fp" && grep -qx "device=ixrc0" "$fp" &&
	grep -Eq "^guest\.kernel\.release=[0-9]+\.[0-9]+" "$fp" &&
	grep -Eq "^module\.ixrc\.build_id=[0-9a-f]{40}$" "$fp" &&
	grep -Eq "^module\.ixrc\.vermagic=[0-9]+\.[0-9]+" "$fp" &&
	grep -Eq "^accelerator=(KVM|TCG)$" "$fp" &&
	{ grep -q "^accelerator=KVM$" "$fp" || grep -Eq "^accelerator\.why=.+" "$fp"; }
'
test_expect_success 'every system-built suite ran on ixrc0, judged by fixtures/expect/ixrc.txt (node description)' '
	ok=1 n=0
	for s in "$build"/suites/system/t*.t; do
		t=$rep/tap/$(basename "$s" .t).system.tap
		# a two-host suite has no peer in one guest: its whole skip says so
		grep -q "^1\.\.0 # SKIP two hosts: no peer host " "$t" 2>/dev/null && continue
		n=$((n + 1))
		grep -q "^# expectations: fixtures/expect/ixrc\.txt (no driver in sysfs, node_desc: ixrc)$" "$t" ||
			{ echo "$t: no ixrc expectations line"; ok=0; }
	done
	[ "$ok" = 1 ] && [ "$n" -ge 8 ]
'
test_expect_success 'no failure: every suite, t6102 and t6104 ok in the summary' '
	cat "$rep/suites-summary.txt"
	! grep -q "^FAIL" "$rep/suites-summary.txt" &&
	grep -q "^ok  *t6102-vm-ibverbs-utils " "$rep/suites-summary.txt" &&
	grep -q "^ok  *t6104-vm-xrc-xsrq " "$rep/suites-summary.txt" &&
	[ "$(grep -c "\.system " "$rep/suites-summary.txt")" -ge 8 ]
'
test_expect_success 'the XRC suites ran, not skipped: t2100 and t3100 pass tests on ixrc0' '
	for t in t2100-xrc-create t3100-lifetime; do
		p=$(grep "^ok " "$rep/tap/$t.system.tap" | grep -vc "# SKIP")
		echo "$t: $p passed"
		[ "$p" -ge 5 ] || return 1
	done
'
test_expect_success 'the page says PASS, and so does the last line' '
	grep -q "<strong class=\"word\">PASS</strong>" "$rep/index.html" &&
	tail -n 1 "$tl_out" | grep -q "^PASS: .* — $rep\$"
'
test_expect_success 'the guest gives a verdict line per suite and per program on stderr as each ends (its progress)' '
	n=$(ls "$build"/suites/system/t*.t | wc -l)
	grep -E "^(ok|FAIL) +t[0-9]{4}-" "$tl_err"
	[ "$(grep -Ec "^(ok|FAIL) +t[0-9]{4}-[a-z0-9-]+\.system " "$tl_err")" = "$n" ] &&
	grep -q "^ok  *t6102-vm-ibverbs-utils " "$tl_err" && grep -q "^ok  *t6104-vm-xrc-xsrq " "$tl_err"
'

# a guest that gives no result: the time limit ends it before it boots
nr=$tl_tmp/noresult
run_cmd env IBVCT_VM_TIMEOUT=1 IBVCT_VM_BOOT=1 sh "$src/tools/ibvct/ibvct" conformance --target xrc-vm --out "$nr"
test_expect_success 'a guest with no result: exit 3, NO RESULT on the page and in the summary, its console log' '
	tail -n 20 "$tl_out" "$tl_err"
	rc_is 3 && [ -s "$nr/no-result.txt" ] && [ -e "$nr/console.txt" ] &&
	grep -q "<strong class=\"word\">NO RESULT</strong>" "$nr/index.html" &&
	grep -q "^verdict: NO RESULT: guest: " "$nr/summary.txt"
'
acc=$(sed -n 's/^accelerator=//p' "$rep/fingerprint.txt" 2>/dev/null)
test_note "xrc-vm conformance ($acc): $secs s, the boot included"
test_done
