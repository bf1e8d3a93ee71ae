#!/bin/sh
# SPDX-License-Identifier: MIT
# ibvct in a Beaker multihost recipe set: the runtest.sh of a task that both
# recipes (roles SERVERS and CLIENTS, one host each) run. The lab's barrier
# is rhts-sync-set and rhts-sync-block (each named point), each test is
# reported to Beaker as it ends (rstrnt-report-result NAME RESULT), and the
# lab's known issues turn listed failures into known deviations. The
# client's report folder is the pair's; it is attached to the result.
set -u
IBVCT=${IBVCT:-ibvct}
KNOWN=${IBVCT_KNOWN_ISSUES_FILE:-/etc/ibvct/known-issues.txt}
me=$(hostname)
case " ${SERVERS:-} " in
*" $me "*) role=server peer=$CLIENTS ;;
*) role=client peer=$SERVERS ;;
esac
# the barrier: this host has reached NAME, then wait until the peer has
sync_cmd="sh -c 'rhts-sync-set -s \"\$0\" && rhts-sync-block -s \"\$0\" $peer'"
out=/tmp/ibvct-pair-$role
rc=0
$IBVCT conformance --target system --peer "$peer" --role "$role" --run-id "beaker-${JOBID:-0}" \
	--sync-cmd "$sync_cmd" --result-cmd rstrnt-report-result \
	$( [ -r "$KNOWN" ] && echo "--known-issues $KNOWN" ) --out "$out" || rc=$?
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
rstrnt-report-log -l "$out.tar.gz"
if [ "$rc" = 0 ]; then rstrnt-report-result ibvct-pair PASS; else rstrnt-report-result ibvct-pair FAIL "$rc"; fi
