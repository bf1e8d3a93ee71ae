#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t5903: the reference on a real wire (fake-provider/engine/roce.c): two
# reference hosts, each its own ibvct-run with its own fake kernel and a
# device with `transport roce IFACE`, on the two ends of a veth pair in a
# network namespace of their own, with no fabric and no shared memory
# between them: every byte they exchange is a RoCE v2 UDP packet. Checked:
#   - Debian's rc, uc, ud and srq pingpongs over the IPv6 link-local GIDs,
#     and rc over the IPv4-mapped ones;
#   - the two-host suite (t3200, system-built: sends of RC, UC and UD,
#     WRITE, READ, both atomics, SEND_WITH_INV, RNR NAKs counted per
#     rnr_retry, retry exceeded at a dead peer, remote errors) with host A
#     and host B on the two ends, every verdict the one the fabric gives
#     (profile rxe: its known deviations are TODO);
#   - tshark reads a capture of all of it: no malformed packet, no expert
#     error, and the opcodes the tests sent;
#   - faults of the wire (the device's own injector): with a loss, a
#     duplicate, a reordering, a bad ICRC or a truncated header every
#     few packets RC still completes every message, in order (and the
#     capture check fails on the truncated ones: it can go red); with
#     every packet lost a requester at retry_cnt 2 ends in
#     IBV_WC_RETRY_EXC_ERR (at 7 rxe retries for ever: tools/vm/t6151);
#     with every third packet of the responder lost, a READ's answer
#     comes a packet or two a try and a requester at retry_cnt 1 still
#     completes: each response packet in order starts the retry count
#     again (rxe_comp.c reset_retry_counters); each fault step has its
#     own capture, whose last packets a failed check prints.
# Needs root (a network namespace and a veth pair; the shell it shares
# with t5904 is wire-hosts-lib.sh); tools/vm/t6150 puts the reference
# against real rxe across two guests.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
build=${IBVCT_BUILD:-$src/build}
run=$build/bin/ibvct-run
suite=$build/suites/system/t3200-twohost-traffic.t
skip_all_unless_utils ibv_rc_pingpong
[ -x "$suite" ] || skip_all "no $suite (make suites builds it)"
. "$src/fake-provider/tests/wire-hosts-lib.sh"
wh_require t5903
mult=${IBVCT_TIMEOUT_MULT:-1}
out=$tl_tmp/out
mkdir -p "$out"

# the reference host of each end: rxe's device as profile rxe plays it,
# its packets on that end of the pair (FAULT: faults on the wire)
host_script() {
	sed -n '/^profile/,$p' "$src/fixtures/scripts/rxe.fps" | sed "s/^device rxe0/device ref$1/"
	printf '\ttransport roce %s %s\n' "$2" "${3:-}"
}
host_script A t5903a >"$tl_tmp/A.fps"
host_script B t5903b >"$tl_tmp/B.fps"

# Everything runs inside the namespace, its results in $out.
cat >"$tl_tmp/inner.sh" <<'EOF'
set -u
tmp=$1 out=$2 run=$3 suite=$4 mult=$5 preload=$6
. "$7"
# a sanitized build: the sanitizer's runtime first in every program; a
# program that fails (faults) keeps its scratch dir in ours
run() { env ${preload:+LD_PRELOAD=$preload} TMPDIR="$tmp" "$run" "$@"; }
lim=$((60 * mult))
cd "$tmp" || exit 1
wh_link t5903 3 || exit 1
wh_capture_start "$out/wire.pcap"

# pp NAME SCRIPT_A SCRIPT_B PROG ARGS...: a pingpong, server on A, client on B
pp() { wh_pair "$@"; }
pp rc A.fps B.fps ibv_rc_pingpong -g 0 -n 20 -s 4096 -c
pp uc A.fps B.fps ibv_uc_pingpong -g 0 -n 20 -s 4096 -c
pp ud A.fps B.fps ibv_ud_pingpong -g 0 -n 20 -s 1000 -c
pp srq A.fps B.fps ibv_srq_pingpong -g 0 -n 20 -s 3000 -c
pp rc4 A.fps B.fps ibv_rc_pingpong -g 1 -n 20 -s 4100 -c

# the two-host suite, host B (the target) on B's end
rm -f port
(IBVCT_ROLE=server IBVCT_PEER_PORT=0 IBVCT_PEER_PORT_FILE="$tmp/port" \
	run --private --script B.fps -- "$suite" >"$out/t3200.b.tap" 2>"$out/t3200.b.err") &
bp=$!
i=0
while [ ! -s port ] && kill -0 "$bp" 2>/dev/null && [ $i -lt $((600 * mult)) ]; do
	sleep 0.1; i=$((i + 1))
done
IBVCT_ROLE=client IBVCT_PEER=127.0.0.1:$(cat port 2>/dev/null) \
	run --private --script A.fps -- "$suite" >"$out/t3200.a.tap" 2>"$out/t3200.a.err"
wait "$bp"
wh_capture_stop "$out/wire.pcap"

# fault NAME SCRIPT_A SCRIPT_B PROG ARGS...: a pingpong under faults, its
# packets captured in $out/NAME.pcap (a failed check shows them)
fault() {
	wh_capture_start "$out/$1.pcap"
	wh_pair "$@"
	wh_capture_stop "$out/$1.pcap"
}

# faults, each on both hosts
for f in "loss 7" "dup 3" "reorder 4" "icrc 5" "trunc 6" "loss 5 dup 4 reorder 3" "loss 1"; do
	k=$(echo "$f" | tr ' ' _)
	sed "s/transport roce t5903a.*/transport roce t5903a $f/" A.fps >"A.$k.fps"
	sed "s/transport roce t5903b.*/transport roce t5903b $f/" B.fps >"B.$k.fps"
	if [ "$f" = "loss 1" ]; then
		# rxe retries for ever at retry_cnt 7, ibv_rc_pingpong's (linux v6.1
		# rxe_comp.c COMPST_ERROR_RETRY; t6151): retry_cnt 2, a 67 ms timer
		fault "fault.$k" "A.$k.fps" "B.$k.fps" "${run%/*}/ibvct-wire-rdma" -g 0 -t 14 -r 2 -s 4096 -m 1024
	else
		fault "fault.$k" "A.$k.fps" "B.$k.fps" ibv_rc_pingpong -g 0 -n 30 -s 4096 -c
	fi
done
# progress between losses: every 3rd packet of the responder (A) lost, a
# READ of four response packets gets one more in order each try; at
# retry_cnt 1 it completes only if each bit of progress starts the count
# again (rxe_comp.c reset_retry_counters; engine/completer.c)
sed "s/transport roce t5903a.*/transport roce t5903a loss 3/" A.fps >A.loss_3.fps
fault fault.progress A.loss_3.fps B.fps "${run%/*}/ibvct-wire-rdma" -g 0 -t 14 -r 1 -s 4096 -m 1024
EOF
run_cmd unshare -n sh "$tl_tmp/inner.sh" "$tl_tmp" "$out" "$run" "$suite" "$mult" "${IBVCT_PRELOAD:-}" \
	"$src/fake-provider/tests/wire-hosts-lib.sh"

# pp_ok NAME: both ends of that pingpong ended 0 with its report
pp_ok() {
	for e in server client; do
		echo "# $1 $e:"
		sed 's/^/#   /' "$out/$1.$e" 2>/dev/null | head -n 8
	done
	[ "$(cat "$out/$1.server.rc" 2>/dev/null)" = 0 ] &&
	[ "$(cat "$out/$1.client.rc" 2>/dev/null)" = 0 ] &&
	grep -q "iters in" "$out/$1.server" && grep -q "iters in" "$out/$1.client"
}
test_expect_success 'ibv_rc_pingpong between two reference hosts on the wire (IPv6 GIDs, 4 packets a message)' 'pp_ok rc'
test_expect_success 'ibv_uc_pingpong between two reference hosts on the wire' 'pp_ok uc'
test_expect_success 'ibv_ud_pingpong between two reference hosts on the wire' 'pp_ok ud'
test_expect_success 'ibv_srq_pingpong between two reference hosts on the wire' 'pp_ok srq'
test_expect_success 'ibv_rc_pingpong over the IPv4-mapped GIDs (5 packets a message, a pad)' 'pp_ok rc4'

plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$out/t3200.a.tap" 2>/dev/null)
test_expect_success "the two-host suite on the wire: host A and host B each pass every test or give its known deviation" '
	grep -v "^ok" "$out/t3200.a.tap" 2>/dev/null | head -n 30
	[ -n "$plan" ] && [ "$plan" -gt 10 ] &&
	for s in a b; do
		[ "$(grep -c "^ok " "$out/t3200.$s.tap")" -ge $((plan - 3)) ] &&
		! grep "^not ok" "$out/t3200.$s.tap" | grep -qv "# TODO" || exit 1
	done
'
test_expect_success 'the two-host suite ran its sends, one-sided operations and RNR checks (none skipped)' '
	for t in rc_send_and uc_send_and ud_send_through rc_write_and_read rc_atomics rc_message_of_several_mtus \
		rnr_retry_0 rnr_retry_6 rnr_retry_7 retry_exceeded_when_the_peer write_with_a_bad_rkey receive_with_a_bad_lkey; do
		grep "^ok" "$out/t3200.a.tap" | grep -v "# SKIP" | grep -q "$t" || { echo "# no ok for $t"; exit 1; }
	done
'

# fields PCAP OUT: tshark's fields of each packet of PCAP (opcode,
# malformed, expert severity, IPv4 and IPv6 source) into OUT
fields() {
	run_cmd tshark -n -r "$1" -d udp.port==4791,infiniband \
		--disable-protocol smc --disable-protocol smb_direct --disable-protocol rpcordma \
		--disable-protocol nvme-rdma --disable-protocol lnet --disable-protocol iser \
		-T fields -e infiniband.bth.opcode -e _ws.malformed -e _ws.expert.severity -e ip.src -e ipv6.src
	cp "$tl_out" "$2"
}
# dissected FIELDS: more than 100 packets, none malformed, no expert error
# (each one that is printed)
dissected() {
	[ "$(wc -l <"$1")" -gt 100 ] &&
	! awk -F"\t" "\$2 != \"\" || \$3 >= 8388608 { print; f = 1 } END { exit !f }" "$1"
}
fields=$tl_tmp/fields
fields "$out/wire.pcap" "$fields"
test_expect_success 'tshark dissects every packet of the capture: none malformed, no expert error' 'dissected "$fields"'
test_expect_success 'the capture holds each opcode the tests sent (RC SEND and WRITE segments and their IMM and INV forms, READ request and response, both atomics and their ACK, UC sends and writes, UD sends, ACKs)' '
	cut -f1 "$fields" | sort -n | uniq -c | sed "s/^/# /"
	for op in 0 1 2 4 5 6 7 8 10 11 12 16 17 18 19 20 23 32 33 34 36 37 42 43 100 101; do
		cut -f1 "$fields" | grep -qx "$op" || { echo "# opcode $op missing"; exit 1; }
	done
'

# why NAME: the last packets of fault step NAME's capture, one a line (a
# check that failed says why: which PSNs went, came again, were NAKed)
why() {
	echo "# the last packets of $out/$1.pcap:"
	tshark -n -r "$out/$1.pcap" -d udp.port==4791,infiniband \
		--disable-protocol smc --disable-protocol smb_direct --disable-protocol rpcordma \
		--disable-protocol nvme-rdma --disable-protocol lnet --disable-protocol iser \
		-T fields -e frame.time_relative -e ipv6.src -e infiniband.bth.opcode \
		-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.aeth.syndrome \
		2>&1 | grep -v "^Running as user" | tail -n 60 | sed "s/^/#   /"
}
for f in loss_7 dup_3 reorder_4 icrc_5 trunc_6 loss_5_dup_4_reorder_3; do
	# A side that reports its 30 iterations got all 30 messages of the
	# other (checked, -c) and had its own 30 acknowledged: RC recovered.
	# The other side may still lose the ACK of its last message once
	# the first has gone, and end in retry exceeded: what the spec gives,
	# the pingpong having no closing handshake.
	test_expect_success "fault $f on both hosts: RC recovers, all 30 messages each way arrive whole and in order" '
		for e in server client; do sed "s/^/#   $e: /" "$out/fault.$f.$e" 2>/dev/null | head -n 4; done
		{ grep -q "^30 iters in" "$out/fault.$f.server" "$out/fault.$f.client" &&
		  ! grep -h "Failed status" "$out/fault.$f.server" "$out/fault.$f.client" |
			grep -qv "retry counter exceeded (12)"; } || { why "fault.$f"; false; }
	'
done
fields "$out/fault.trunc_6.pcap" "$tl_tmp/trunc.fields"
test_expect_success 'fault trunc 6 (every 6th packet cut after its BTH and two bytes): the capture check finds them malformed' '
	! dissected "$tl_tmp/trunc.fields" >"$tl_tmp/trunc.why" &&
	head -n 4 "$tl_tmp/trunc.why" | sed "s/^/# /" &&
	[ -s "$tl_tmp/trunc.why" ]
'
test_expect_success 'fault loss 1 (every packet, every retry), retry_cnt 2: the requester ends in IBV_WC_RETRY_EXC_ERR' '
	sed "s/^/#   /" "$out/fault.loss_1.client" 2>/dev/null | head -n 6
	grep -q "^outcome: wr 1 status 12 " "$out/fault.loss_1.client" || { why fault.loss_1; false; }
'
test_expect_success 'fault loss 3 on the responder, retry_cnt 1: progress between the losses starts the count again, every operation completes' '
	for e in server client; do sed "s/^/#   $e: /" "$out/fault.progress.$e" 2>/dev/null | head -n 8; done
	[ "$(cat "$out/fault.progress.server.rc" 2>/dev/null)" = 0 ] &&
	[ "$(cat "$out/fault.progress.client.rc" 2>/dev/null)" = 0 ] &&
	grep -q "all as expected$" "$out/fault.progress.server" &&
	grep -q "all as expected$" "$out/fault.progress.client" || { why fault.progress; false; }
'
test_done
