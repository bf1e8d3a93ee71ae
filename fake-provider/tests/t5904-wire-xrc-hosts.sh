#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 600
# t5904: XRC on a real wire (fake-provider/engine/roce.c): two reference
# hosts, each its own ibvct-run with its own fake kernel and a device with
# `transport roce IFACE`, on the two ends of a veth pair in a network
# namespace of their own, as in t5903. Host A is the target side of
# ibvct-wire-xrc (an XRC domain, two XRC SRQs on one CQ, a target QP),
# host B its initiator (an XRC_SEND QP) that sends a 4096-byte SEND (four
# packets at a path MTU of 1024), a SEND_WITH_IMM, an RDMA WRITE and an
# RDMA READ, each naming the second SRQ (remote_srqn; the SEND_WITH_IMM
# through the new post-send API's ibv_wr_set_xrc_srqn). Checked:
#   - both sides: every completion, the data, the receives taken from the
#     named SRQ and none from the other, qp_num the target QP's;
#   - tshark reads the capture: no malformed packet, no expert error; every
#     request an XRC opcode (IBA vol 1 9.2, the opcode table: 0xa0 | op)
#     to the target QP, with an XRCETH (IBA vol 1 chapter 9, the 4 bytes
#     after the BTH: Debian 12's tshark 4.0 dissects no XRC header past
#     the BTH, so the SRQ number is read there from udp.payload) naming
#     the SRQ the target side named;
#     the XRC ACKs and READ responses come back;
#   - faults of the wire (loss, duplicate, reordering) on both hosts: XRC
#     recovers as RC does (its PSNs, the target's PSN sequence NAKs, the
#     retries), every packet still XRC with the named SRQ's XRCETH;
#   - a SEND naming an XRC SRQ of another domain (ibvct-wire-xrc -o) is
#     refused by the target with an XRC NAK, invalid request (AETH 0x61),
#     the responder's WR-03 check as over shared memory, and completes
#     with IBV_WC_REM_INV_REQ_ERR; nothing arrives;
#   - each check can fail: under the wire fault `srqn 1` on the initiator
#     (each XRCETH names the SRQ number below its WR's, here the other
#     SRQ's) the target side finds its receives on the other SRQ and the
#     capture's check fails on the XRCETH; under quirk
#     xrc_ignore_remote_srqn on the target side (its HCA takes the domain's
#     first SRQ, WR-03) the target side's check fails; under quirk
#     xrc_srqn_any_domain (its HCA takes an SRQ of any domain) the SEND to
#     another domain's SRQ lands and both sides fail.
# Needs root (a network namespace and a veth pair; the shell it shares
# with t5903 is wire-hosts-lib.sh).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
build=${IBVCT_BUILD:-$src/build}
run=$build/bin/ibvct-run
prog=$build/bin/ibvct-wire-xrc
[ -x "$prog" ] || skip_all "no $prog (make builds it)"
. "$src/fake-provider/tests/wire-hosts-lib.sh"
wh_require t5904
mult=${IBVCT_TIMEOUT_MULT:-1}
out=$tl_tmp/out
mkdir -p "$out"

# host_script NAME IFACE [FAULTS] [QUIRK]: a reference host with XRC, its
# packets on that end of the pair
host_script() {
	printf 'mode extended\nlifetime current\n%sdevice ref%s\n\tcap xrc\n\tport 1 state active\n' \
		"${4:+quirk $4
}" "$1"
	printf '\ttransport roce %s %s\n' "$2" "${3:-}"
}
host_script A t5904a >"$tl_tmp/A.fps"
host_script B t5904b >"$tl_tmp/B.fps"
host_script B t5904b "srqn 1" >"$tl_tmp/B.srqn.fps"
host_script A t5904a "" xrc_ignore_remote_srqn >"$tl_tmp/A.quirk.fps"
host_script A t5904a "" xrc_srqn_any_domain >"$tl_tmp/A.domainq.fps"
# the target side's faults milder: under loss 5 and reorder 3 no four
# packets in a row pass (every 15, one of any four is lost or held back),
# so its 4-packet READ response would never arrive whole, RC's or XRC's
host_script A t5904a "loss 7 dup 3" >"$tl_tmp/A.faults.fps"
host_script B t5904b "loss 5 dup 4 reorder 3" >"$tl_tmp/B.faults.fps"

# Everything runs inside the namespace, its results in $out.
cat >"$tl_tmp/inner.sh" <<'EOF'
set -u
tmp=$1 out=$2 run=$3 prog=$4 mult=$5 preload=$6
. "$7"
# a sanitized build: the sanitizer's runtime first in every program; a
# program that fails (by design here) keeps its scratch dir in ours
run() { env ${preload:+LD_PRELOAD=$preload} TMPDIR="$tmp" "$run" "$@"; }
lim=$((60 * mult))
cd "$tmp" || exit 1
wh_link t5904 4 || exit 1

# xrc NAME SCRIPT_A SCRIPT_B [OPTION]: one exchange, the target on A, the
# initiator on B, its packets captured in $out/NAME.pcap
xrc() {
	wh_capture_start "$out/$1.pcap"
	# shellcheck disable=SC2086 # the option, or none
	wh_pair "$1" "$2" "$3" "$prog" ${4:-}
	wh_capture_stop "$out/$1.pcap"
}
xrc xrc A.fps B.fps
xrc srqn A.fps B.srqn.fps
xrc quirk A.quirk.fps B.fps
xrc faults A.faults.fps B.faults.fps
xrc domain A.fps B.fps -o
xrc domainq A.domainq.fps B.fps -o
EOF
run_cmd unshare -n sh "$tl_tmp/inner.sh" "$tl_tmp" "$out" "$run" "$prog" "$mult" "${IBVCT_PRELOAD:-}" \
	"$src/fake-provider/tests/wire-hosts-lib.sh"

show() {
	for e in server client; do
		echo "# $1 $e:"
		sed 's/^/#   /' "$out/$1.$e" 2>/dev/null | head -n 12
	done
}
# ok NAME: both sides ended 0 with their report
ok() {
	show "$1"
	[ "$(cat "$out/$1.server.rc" 2>/dev/null)" = 0 ] &&
	[ "$(cat "$out/$1.client.rc" 2>/dev/null)" = 0 ] &&
	grep -q "all as expected" "$out/$1.server" && grep -q "all as expected" "$out/$1.client"
}
# The SRQ numbers and target QP the target side printed for NAME
named() { sed -n 's/^srqn: named 0x\([0-9a-f]*\) .*/\1/p' "$out/$1.server"; }
other() { sed -n 's/^srqn: .* other 0x\([0-9a-f]*\) .*/\1/p' "$out/$1.server"; }
tgt() { sed -n 's/^srqn: .* tgt \(0x[0-9a-f]*\)$/\1/p' "$out/$1.server"; }

# capture NAME: tshark's fields of NAME's capture in $tl_tmp/NAME.fields
capture() {
	run_cmd tshark -n -r "$out/$1.pcap" -d udp.port==4791,infiniband \
		--disable-protocol smc --disable-protocol smb_direct --disable-protocol rpcordma \
		--disable-protocol nvme-rdma --disable-protocol lnet --disable-protocol iser \
		-T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e _ws.malformed \
		-e _ws.expert.severity -e udp.payload
	cp "$tl_out" "$tl_tmp/$1.fields"
}
# xrceth_ok NAME: every packet of NAME's capture is XRC (IBA vol 1 9.2,
# the opcode table: transport bits 101); every request (not 0xad-0xb2, the READ
# responses and acknowledges) goes to the target QP with an XRCETH, the 4
# bytes after the 12 of the BTH (IBA vol 1 chapter 9), whose last 3 are the
# named SRQ's number; each packet it does not like printed
xrceth_ok() {
	awk -F"\t" -v named="$(named "$1")" -v tgt="$(tgt "$1")" '
		{ n++ }
		$1 < 160 || $1 > 191 { print "# not an XRC opcode: " $1; bad++; next }
		$1 >= 173 && $1 <= 178 { next }
		{
			req++
			p = $5; gsub(":", "", p); s = substr(p, 27, 6)
			if ($2 != tgt || s != named) {
				print "# request opcode " $1 " to QP " $2 ": XRCETH SRQN 0x" s \
					", want 0x" named " to " tgt
				bad++
			}
		}
		END { exit !(n > 0 && req > 0 && named != "" && !bad) }' "$tl_tmp/$1.fields"
}


# aeth_nak NAME SYNDROME: NAME's capture holds an XRC ACKNOWLEDGE (0xb1)
# whose AETH, the byte after the BTH, is that syndrome (hex; IBA vol 1
# 9.7.5.2, table 44: 0x60 a PSN sequence error NAK, 0x61 invalid request)
aeth_nak() {
	awk -F"\t" -v syn="$2" '$1 == 177 { p = $5; gsub(":", "", p); if (substr(p, 25, 2) == syn) f = 1 }
		END { exit !f }' "$tl_tmp/$1.fields"
}

test_expect_success 'XRC between two reference hosts on the wire: SEND of 4 packets, SEND_WITH_IMM, RDMA WRITE and READ, each to the named SRQ, checked on both sides' 'ok xrc'
test_expect_success 'the target side took its receives from the named SRQ (none from the other) with qp_num the target QP' '
	grep -q "receive 1: 4096 bytes from the named SRQ 0x$(named xrc) (wr_id 200)" "$out/xrc.server" &&
	grep -q "receive 2: 100 bytes from the named SRQ 0x$(named xrc) (wr_id 201) with its immediate" "$out/xrc.server" &&
	[ "$(named xrc)" != "$(other xrc)" ]
'
capture xrc
test_expect_success 'tshark dissects every packet of the XRC capture: none malformed, no expert error' '
	[ "$(wc -l <"$tl_tmp/xrc.fields")" -ge 20 ] &&
	! awk -F"\t" "\$3 != \"\" || \$4 >= 8388608 { print; f = 1 } END { exit !f }" "$tl_tmp/xrc.fields"
'
test_expect_success 'each request is an XRC opcode to the target QP with an XRCETH naming the SRQ the target side named' 'xrceth_ok xrc'
test_expect_success 'the capture holds the XRC opcodes sent (SEND first, middle, last, only with IMM; WRITE first, middle, last; READ request and its responses; ACK)' '
	cut -f1 "$tl_tmp/xrc.fields" | sort -n | uniq -c | sed "s/^/# /"
	for op in 160 161 162 165 166 167 168 172 173 174 175 177; do
		cut -f1 "$tl_tmp/xrc.fields" | grep -qx "$op" || { echo "# opcode $op missing"; exit 1; }
	done
'

test_expect_success 'wire fault srqn 1 on the initiator: the target side finds its receives on the other SRQ and fails' '
	show srqn
	[ "$(cat "$out/srqn.server.rc" 2>/dev/null)" = 1 ] &&
	grep -q "receive 1: wr_id 100 (SRQ other)" "$out/srqn.server"
'
capture srqn
test_expect_success 'wire fault srqn 1: the capture check fails on the XRCETH, which names the other SRQ' '
	! xrceth_ok srqn >"$tl_tmp/srqn.why" &&
	cat "$tl_tmp/srqn.why" | head -n 4 &&
	grep -q "XRCETH SRQN 0x$(other srqn), want 0x$(named srqn)" "$tl_tmp/srqn.why"
'
test_expect_success 'quirk xrc_ignore_remote_srqn on the target side: its HCA takes the other SRQ and its check fails' '
	show quirk
	[ "$(cat "$out/quirk.server.rc" 2>/dev/null)" = 1 ] &&
	grep -q "receive 1: wr_id 100 (SRQ other)" "$out/quirk.server"
'
test_expect_success 'faults on both hosts (loss, dup, reorder): XRC recovers as RC does, every check holds' 'ok faults'
capture faults
test_expect_success 'faults: the target QP NAKed a PSN gap with an XRC NAK (AETH syndrome 0x60), and every request kept its XRCETH' '
	aeth_nak faults 60 && xrceth_ok faults
'
test_expect_success 'a SEND naming an XRC SRQ of another domain: IBV_WC_REM_INV_REQ_ERR at the initiator, nothing received' '
	ok domain && grep -q "SEND to SRQ 0x$(named domain) of another domain: remote invalid request error" "$out/domain.client"
'
capture domain
test_expect_success 'the target QP refused it on the wire with an XRC NAK, invalid request (AETH 0x61), and the request named that SRQ' '
	aeth_nak domain 61 && xrceth_ok domain
'
test_expect_success 'quirk xrc_srqn_any_domain on the target side: the SEND lands in the other domain'"'"'s SRQ, and both sides fail' '
	show domainq
	[ "$(cat "$out/domainq.server.rc" 2>/dev/null)" = 1 ] &&
	[ "$(cat "$out/domainq.client.rc" 2>/dev/null)" = 1 ] &&
	grep -q "a completion more" "$out/domainq.server" &&
	grep -q "of another domain: success, want" "$out/domainq.client"
'
test_done
