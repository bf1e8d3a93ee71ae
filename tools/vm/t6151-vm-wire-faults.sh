#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 1800
# t6151: faults on the wire between two guests: RC traffic recovers, or
# ends in the error IBA gives, and the reference's RoCE v2 transport
# (fake-provider/engine/roce.c) reacts as real rxe does, fault by fault.
#
# One pair boot (tools/vm/ibvct-vm pair, as t6150; the guest side's
# machinery is tools/vm/wire-pair-lib.sh). Guest "rxe" (10.9.0.1, the
# server's) keeps Debian's rdma_rxe throughout; guest "ref" (10.9.0.2)
# runs the table of steps twice: first with rxe (rxe<->rxe: the judge),
# then with rdma_rxe taken out and the programs on the reference target
# (ibvct-run --private, fixtures/scripts/rxe.fps with `transport roce
# eth0`, IPv6 link-local GIDs as in t6150). Each step is one run of
# ibvct-wire-rdma (RDMA WRITE, WRITE_WITH_IMM, READ of 4096 bytes at path
# MTU 1024: four packets each way; CMP_SWAP twice and FETCH_ADD; every
# byte and value checked by both sides), once with guest ref's program as
# the requester (the active side) and once with guest rxe's; the fault is
# netem (sch_netem, with sch_prio and cls_u32 taken from the guest
# kernel's own package) on the egress of one guest, on UDP port 4791 only
# (the TCP exchange of the programs stays whole): on the requester's
# egress it hits the requests, on the responder's the ACKs and READ and
# atomic responses. So each fault is met by the reference as the faulted
# sender and as the receiver, in both roles.
#
# The faults and the outcome each must give (IBA vol 1 9.7.5, 9.9; rxe
# linux v6.1 drivers/infiniband/sw/rxe/rxe_comp.c rxe_completer,
# rxe_resp.c check_psn/duplicate_request, rxe_req.c):
#   none       no netem                                 recovered
#   loss       loss 10%                                 recovered
#   dup        duplicate 100% (every packet twice)      recovered
#   reorder    delay 20ms reorder 100% gap 3 (every     recovered
#              third packet overtakes the two before)
#   corrupt    every 5th packet: a byte after the BTH inverted (tc
#              actions gact determ + pedit: the receiver's ICRC or UDP
#              checksum rejects it, a loss; pedit counts each one)
#                                                         recovered
#   progress   every 3rd packet of the responder dropped (gact determ),
#              retry_cnt 1: a READ's four responses come one or two a
#              try, and rxe starts its retry count again at each one in
#              order (rxe_comp.c reset_retry_counters, from check_ack)
#                                                         recovered
#   lossall    loss 100%, retry_cnt 2, timeout 14 (67 ms)
#                                           WRITE: IBV_WC_RETRY_EXC_ERR
#   lossall7   loss 100%, retry_cnt 7, timeout 14, a 2 s wait for the
#              completion: rxe retries for ever at retry_cnt 7 (rxe_comp.c
#              COMPST_ERROR_RETRY: the counter is not decremented at 7)
#                                                WRITE: no completion
#   rnr        no netem; the responder posts no receive (-n), rnr_retry 1
#                                    WRITE_IMM: IBV_WC_RNR_RETRY_EXC_ERR
# Determinism: dup and reorder are deterministic (netem's gap with reorder
# 100% sends every third packet at once), and so are corrupt and progress
# (a count of packets, not a chance; netem cannot say what it corrupted,
# the tc actions count what they hit). Random loss at 10%
# with retry_cnt 7 cannot end in an error: rxe and the reference (rxe's
# rule) retry without end at 7 (lossall7 checks it), and each try gets
# through with probability at least 0.9^4 > 0.65 (four faulted packets at
# most a message), so a lost packet only costs a timeout (0.54 s times
# the load's stretch); the wait for a completion (60 s, stretched alike)
# runs out only after 100 failed tries of one WQE: 0.35^100 < 1e-45.
# (A requester that gave up after 7 retries would fail a WQE in
# 0.35^8 < 3e-4: the table would be flaky, which is why retry_cnt 7's
# rule is the one that matters here.)
#
# What each check catches: "rxe<->rxe gives the expected outcome" holds
# the expectations (and the netem setup) against the real stack; the
# netem counters (tc -s) show each fault hit packets (corrupt and progress:
# the counts of the tc actions, pedit's and gact's); "the reference the
# same as rxe" goes red for any wire rule the reference gets wrong: a
# retry_cnt of 7 counted down (lossall7 ends in RETRY_EXC_ERR within
# 0.6 s: the reference before its rxe rule, engine/requester.c), a READ
# asked for whole again after part of its answer came (reorder.ref-
# requests.on-resp: every try of four responses has one overtaking,
# RETRY_EXC_ERR where rxe recovers: the reference before engine/roce.c
# took rxe_req.c req_retry's rule), a retry_cnt ignored or one
# retry too many or few (lossall: no completion, or a different WR), an
# RNR NAK not sent or rnr_retry not counted (rnr), a retry count kept
# per message through progress (progress: READ:RETRY_EXC_ERR after its
# second timeout, the reference before engine/completer.c reset it), a
# duplicate executed twice (dup: the atomic word or a CMP_SWAP's original
# value is wrong), a PSN out of order taken (reorder: the data is
# wrong), a corrupt packet taken (corrupt: a byte differs).
# IBVCT_WIRE_PEER=rxe runs both passes with rxe (the scaffold's own
# run: the two columns must agree).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
build=${IBVCT_BUILD:-$src/build}
[ -x "$build/bin/ibvct-wire-rdma" ] || skip_all "no $build/bin/ibvct-wire-rdma (make all builds it)"
[ -x "$build/bin/ibvct-run" ] || skip_all "no $build/bin/ibvct-run (make all builds it)"
command -v tc >/dev/null 2>&1 || skip_all "no tc (ci/install-deps vm installs iproute2)"
cache=${IBVCT_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/ibvct/vm}
peer=${IBVCT_WIRE_PEER:-ref}
case $peer in rxe|ref) ;; *) test_bail "IBVCT_WIRE_PEER=$peer: rxe or ref" ;; esac

out=$tl_tmp/out
mkdir -p "$out"
sed '/^device rxe0$/a\
	transport roce eth0' "$src/fixtures/scripts/rxe.fps" >"$tl_tmp/roce.fps"
grep -q '^	transport roce eth0$' "$tl_tmp/roce.fps" || test_bail "no device rxe0 in fixtures/scripts/rxe.fps"

# The qdisc modules of the guests' kernel (ibvct-vm kernel: the one the
# pair boots, fetched and unpacked first if need be), from its own package
# (the runner keeps only the modules every guest loads): NM/RELEASE/NAME.ko;
# a guest without them says so in its log and the first check fails
nm=$tl_tmp/ko
sh "$vm" kernel >"$tl_tmp/kernel" 2>&1
rel=$(sed -n 's/^release=//p' "$tl_tmp/kernel")
deb=$(sed -n 's/^deb=//p' "$tl_tmp/kernel")
if [ -n "$rel" ] && [ -r "$deb" ]; then
	mkdir -p "$nm/$rel" "$nm/x"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$nm/x" --wildcards \
		'*/net/sched/sch_netem.ko*' '*/net/sched/sch_prio.ko*' '*/net/sched/cls_u32.ko*' \
		'*/net/sched/act_gact.ko*' '*/net/sched/act_pedit.ko*' 2>/dev/null
	for f in $(find "$nm/x" -name '*.ko*'); do
		b=${f##*/}
		case $b in
		*.ko) cp "$f" "$nm/$rel/$b" ;;
		*.ko.xz) xz -dc "$f" >"$nm/$rel/${b%.xz}" ;;
		esac
	done
	rm -rf "$nm/x"
fi

# The steps, run in this order by both guests: PASS NAME PORT SERVER
# FAULTED NETEM ARG... (SERVER: the guest whose program is the passive
# side, the responder; the other's is the requester. FAULTED: the guest
# whose eth0 has NETEM, its words joined by commas, or -.) Each pass the
# same steps; pass ref runs guest ref's programs on the reference.
# EXPECT KIND: the outcome each fault must give.
expect() {
	case $1 in
	lossall) echo "WRITE:RETRY_EXC_ERR" ;;
	lossall7) echo "WRITE:no-completion" ;;
	rnr) echo "WRITE_IMM:RNR_RETRY_EXC_ERR" ;;
	*) echo recovered ;;
	esac
}
netem_of() {
	case $1 in
	loss) echo "loss,10%" ;;
	dup) echo "duplicate,100%" ;;
	reorder) echo "delay,20ms,reorder,100%,gap,3" ;;
	corrupt) echo "every,5,corrupt" ;;
	progress) echo "every,3,drop" ;;
	lossall|lossall7) echo "loss,100%" ;;
	*) echo - ;;
	esac
}
args_of() {
	a="-s 4096 -m 1024"
	case $1 in
	lossall) a="$a -t 14 -r 2" ;;
	progress) a="$a -t 14 -r 1" ;;
	lossall7) a="$a -t 14 -l 2" ;;
	rnr) a="$a -R 1 -n" ;;
	esac
	echo "$a"
}
port=18600
for pass in rxe ref; do
	for kind in none loss dup reorder corrupt progress lossall lossall7 rnr; do
		# requester: the guest that is not SERVER; faulted: the requester's
		# egress (the requests) or the responder's (the answers)
		for req in ref rxe; do
			resp=$([ "$req" = ref ] && echo rxe || echo ref)
			case $kind in
			none|rnr) on="-" ;;
			progress) on=resp ;;
			lossall7) on=req ;;
			*) on="req resp" ;;
			esac
			for o in $on; do
				f=-
				[ "$o" = req ] && f=$req
				[ "$o" = resp ] && f=$resp
				name=$kind.$req-requests${o#-}
				[ "$o" = - ] || name=$kind.$req-requests.on-$o
				port=$((port + 1))
				echo "$pass $name $port $resp $f $(netem_of "$kind") ibvct-wire-rdma $(args_of "$kind")"
			done
		done
	done
done >"$tl_tmp/steps"

# One script for both guests: side.sh ROLE OUT BUILD SCRIPT CACHE STEPS PEER KO LIB
cat >"$tl_tmp/side.sh" <<'EOF'
role=$1 out=$2 build=$3 fps=$4 cache=$5 steps=$6 peer=$7 nm=$8
. "$9"
for k in sch_prio sch_netem cls_u32 act_gact act_pedit; do
	insmod "$nm/$(uname -r)/$k.ko" || { log "no $k.ko of $(uname -r) (in $nm)"; exit 1; }
done
# netem_on WORD...: the fault on this guest's RoCE v2 packets (UDP port
# 4791, IPv6 and IPv4) only: a prio qdisc whose third band has netem
netem_on() {
	if [ "$1" = every ]; then
		# every N, drop|corrupt: every Nth RoCE v2 packet (IPv6) dropped,
		# or its byte 61 inverted (IPv6 40 + UDP 8 + BTH 12, and one: the
		# data of a middle or last packet, a RETH's address, an AETH's
		# MSN; the ICRC covers each, so the receiver's UDP checksum or
		# ICRC drops the packet); gact's deterministic choice (tc-gact(8)
		# random determ), pedit's and gact's counters (tc -s filter) say
		# how many it hit; band 3's netem adds nothing but its own count
		case $3 in
		drop) set -- action gact ok random determ drop "$2" ;;
		corrupt) set -- action gact ok random determ pipe "$2" action pedit munge offset 61 u8 invert ;;
		*) return 1 ;;
		esac
		tc qdisc add dev eth0 root handle 1: prio &&
		tc qdisc add dev eth0 parent 1:3 handle 30: netem limit 1000 &&
		tc filter add dev eth0 parent 1: protocol ipv6 prio 1 u32 \
			match ip6 protocol 17 0xff match ip6 dport 4791 0xffff flowid 1:3 "$@"
		return
	fi
	tc qdisc add dev eth0 root handle 1: prio &&
	tc qdisc add dev eth0 parent 1:3 handle 30: netem "$@" &&
	tc filter add dev eth0 parent 1: protocol ipv6 prio 1 u32 \
		match ip6 protocol 17 0xff match ip6 dport 4791 0xffff flowid 1:3 &&
	tc filter add dev eth0 parent 1: protocol ip prio 2 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3
}
gid=$(gid6)
[ -n "$gid" ] || { log "rxe0 has no RoCE v2 IPv6 link-local GID"; exit 1; }
lladdr >"$out/addr.$role" || { log "eth0 has no IPv6 link-local address"; exit 1; }
log "GID index $gid, address $(cat "$out/addr.$role"), peer $IBVCT_VM_PEER"
ko= pre= pass=rxe rc=0
while read -r ps name port server faulted netem prog args; do
	if [ "$ps" != "$pass" ]; then
		pass=$ps
		# the second pass: the reference in guest ref
		if [ "$role" = ref ] && [ "$peer" = ref ]; then
			wp_rxe_out || { rc=1; break; }
			gid=0
			pre="env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} $build/bin/ibvct-run --private --script $fps --"
		fi
	fi
	name=$ps.$name
	[ "$prog" = ibvct-wire-rdma ] && prog=$build/bin/ibvct-wire-rdma
	if [ "$faulted" = "$role" ]; then
		# shellcheck disable=SC2046 # the netem words
		netem_on $(echo "$netem" | tr , ' ') 2>>"$out/$role.log" || log "$name: netem $netem failed"
	fi
	# shellcheck disable=SC2086 # the step's arguments
	wp_step "$name" "$port" "$server" $prog $args
	if [ "$faulted" = "$role" ]; then
		tc -s qdisc show dev eth0 >"$out/$name.tc" 2>&1
		tc -s filter show dev eth0 >"$out/$name.filter" 2>&1
		tc qdisc del dev eth0 root 2>>"$out/$role.log"
	fi
done <"$steps"
if [ -n "$ko" ]; then
	wp_rxe_back || rc=1
fi
log "done"
exit "$rc"
EOF

. "$src/tools/vm/wire-pair-host.sh"
wp_pair "faults on the wire, rxe and the reference (t6151)" 1200 \
	"$(sed -n '1s/^[^ ]* [^ ]* \([0-9]*\) .*/\1/p' "$tl_tmp/steps")" \
	"sh $tl_tmp/side.sh rxe $out $build $tl_tmp/roce.fps $cache $tl_tmp/steps $peer $nm $src/tools/vm/wire-pair-lib.sh" \
	"sh $tl_tmp/side.sh ref $out $build $tl_tmp/roce.fps $cache $tl_tmp/steps $peer $nm $src/tools/vm/wire-pair-lib.sh"

# outcome PASS.NAME: recovered (both sides exit 0, every check held), or
# the requester's first failed operation and its status (IBV_WC_* by name)
outcome() {
	c=$out/$1.client s=$out/$1.server
	if [ "$(cat "$c.rc" 2>/dev/null)" = 0 ] && [ "$(cat "$s.rc" 2>/dev/null)" = 0 ] &&
		grep -q "all as expected$" "$c" && grep -q "all as expected$" "$s"; then
		echo recovered
		return
	fi
	sed -n 's/^outcome: wr \([0-9]*\) \(.*\)$/\1 \2/p' "$c" 2>/dev/null | head -n 1 | awk -v rc="$(cat "$c.rc" 2>/dev/null)" '
		BEGIN { split("WRITE WRITE_IMM READ CMP_SWAP CMP_SWAP FETCH_ADD", op, " ")
			st[9] = "REM_INV_REQ_ERR"; st[10] = "REM_ACCESS_ERR"; st[11] = "REM_OP_ERR"
			st[12] = "RETRY_EXC_ERR"; st[13] = "RNR_RETRY_EXC_ERR"; st[5] = "WR_FLUSH_ERR" }
		{ o = ($1 in op) ? op[$1] : "wr" $1
		  if ($2 == "status") s = ($3 in st) ? st[$3] : "status-" $3
		  else s = $2 "-" $3
		  print o ":" s; f = 1 }
		END { if (!f) print "failed(exit " (rc == "" ? "none" : rc) ")" }'
}
# netem's counters of a step on the faulted guest: sent/dropped packets
counters() {
	awk '/^qdisc netem/ { n = 1; next } n && /Sent/ { s = $4; d = $7; sub(/,/, "", d); print s "/" d; exit }' \
		"$out/$1.tc" 2>/dev/null
}

printf '%-32s %-28s %-28s %-28s %s\n' step expected "rxe<->rxe" "$([ "$peer" = ref ] && echo "ref<->rxe" || echo "rxe<->rxe again")" \
	"netem sent/dropped" >"$tl_tmp/table"
while read -r ps name port server faulted netem prog args; do
	[ "$ps" = rxe ] || continue
	kind=${name%%.*}
	printf '%-32s %-28s %-28s %-28s %s\n' "$name" "$(expect "$kind")" "$(outcome "rxe.$name")" \
		"$(outcome "ref.$name")" "$(counters "rxe.$name") $(counters "ref.$name")" >>"$tl_tmp/table"
done <"$tl_tmp/steps"
while read -r l; do test_note "$l"; done <"$tl_tmp/table"

# show NAME: both programs' output of a step of each pass
show() {
	for p in rxe ref; do
		for s in server client; do
			echo "== $p.$1.$s (exit $(cat "$out/$p.$1.$s.rc" 2>/dev/null))"
			cat "$out/$p.$1.$s" "$out/$p.$1.tc" 2>/dev/null
		done
	done
}
them=$([ "$peer" = ref ] && echo "the reference" || echo "rxe again")
while read -r ps name port server faulted netem prog args; do
	[ "$ps" = rxe ] || continue
	kind=${name%%.*} want=$(expect "${name%%.*}")
	where=$([ "$faulted" = - ] && echo "no netem" || echo "netem $(echo "$netem" | tr , ' ') on guest $faulted's egress")
	test_expect_success "$name ($where), rxe<->rxe: $want" '
		show "$name"
		[ "$(outcome "rxe.$name")" = "$want" ] &&
		{ [ "$faulted" = - ] || [ "$(counters "rxe.$name" | awk -F/ "{ print \$1 + \$2 }")" -gt 0 ]; }
	'
	test_expect_success "$name ($where), $them in guest ref: as rxe<->rxe ($want)" '
		echo "rxe<->rxe: $(outcome "rxe.$name"); now: $(outcome "ref.$name")"
		[ "$(outcome "ref.$name")" = "$(outcome "rxe.$name")" ] &&
		{ [ "$faulted" = - ] || [ "$(counters "ref.$name" | awk -F/ "{ print \$1 + \$2 }")" -gt 0 ]; }
	'
done <"$tl_tmp/steps"
# hits PASS.NAME: the packets a step's tc action hit on the faulted guest:
# pedit's (corrupted) for corrupt, gact's drops for progress
hits() {
	case $2 in
	corrupt) awk '/action order [0-9]+: *pedit/ { p = 1 } p && /Sent/ { print $4; exit }' "$out/$1.filter" 2>/dev/null ;;
	*) awk '/action order [0-9]+: *gact/ { g = 1 } g && /Sent/ { d = $7; sub(/,/, "", d); print d; exit }' \
		"$out/$1.filter" 2>/dev/null ;;
	esac
}
# netem cannot say what it corrupted: these steps' faults are tc actions
# on a fixed count of packets, and each must have hit in both passes
while read -r ps name port server faulted netem prog args; do
	[ "$ps" = rxe ] || continue
	kind=${name%%.*}
	case $kind in corrupt|progress) ;; *) continue ;; esac
	test_expect_success "$name ($(echo "$netem" | tr , " ") on the egress of guest $faulted): the fault hit packets in both passes" '
		cat "$out/rxe.$name.filter" "$out/ref.$name.filter" 2>/dev/null | sed "s/^/# /"
		echo "# hit: rxe<->rxe $(hits "rxe.$name" "$kind"), $them $(hits "ref.$name" "$kind")"
		[ "$(hits "rxe.$name" "$kind")" -gt 0 ] 2>/dev/null && [ "$(hits "ref.$name" "$kind")" -gt 0 ] 2>/dev/null
	'
done <"$tl_tmp/steps"
test_done
