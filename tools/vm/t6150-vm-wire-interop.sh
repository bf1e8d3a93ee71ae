#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 1500
# t6150: the reference target's RoCE v2 transport (a device's `transport
# roce IFACE`, fake-provider/engine over fake-provider/wire) against real
# rxe on the wire, each way, in one pair boot.
#
# Two rxe-vm guests (tools/vm/ibvct-vm pair, guests of their own). The
# server's (10.9.0.1) keeps Debian's rdma_rxe (rxe0 on eth0); the client's
# (10.9.0.2) takes rdma_rxe out (its socket holds UDP port 4791) and runs
# the same programs under ibvct-run --private with fixtures/scripts/rxe.fps
# plus `transport roce eth0`, then puts rxe0 back. Each side runs one
# script over the same table of steps: Debian's ibv_rc_pingpong,
# ibv_uc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong (ibverbs-utils),
# and ibvct-wire-rdma (RDMA WRITE, WRITE_WITH_IMM, READ, CMP_SWAP,
# FETCH_ADD, each checked; Debian has no such program), each once with
# rxe as the server and once with the reference as the server; then the
# two-host suite (t3200, system-built), with the reference as host A and
# rxe as host B, then the other way round, each host judged by its own
# driver's expectations (real rxe's, and the reference's under rxe's
# profile: fixtures/expect/rxe.txt), the peer addressed by its IPv6 GID
# (IBVCT_PEER_GID=ipv6); the host played by the reference in one step
# and by rxe in the other must give the same verdicts and notes, and fail
# each known deviation for the same reason. The side that serves says in
# the out dir (9p, seen by both guests) when its program listens; the
# other then connects. Every GID is the IPv6
# link-local one (rxe0's RoCE v2 fe80 GID; the reference's index 0): over
# IPv4 a UDP socket cannot see the identification field the ICRC covers
# (fake-provider/wire/README.md). Sizes: 4096-byte messages at path MTU 1024
# (four packets), 1000-byte UD sends; IBVCT_PP_ITERS (5) exchanges.
#
# rxe's guest records UDP port 4791 on eth0 with tcpdump for the whole
# sequence and marks where each step starts (once both programs of the
# step before have ended, so no packet of one falls into another's time);
# tshark then checks each step's packets: none malformed, all IPv6, and
# the opcodes and who sent each exactly what the step must make (RC
# SEND_FIRST/MIDDLE/LAST and ACKs; UC without ACKs; UD SEND_ONLY; RDMA
# WRITE first/middle/last and last-with-immediate, READ request and
# response first/middle/last, both atomics and the atomic ACK); for the
# suite's steps, at least the opcodes of the WRs its tests post and of
# host B's answers, and none out of place. rxe sends
# IPv6 with a UDP checksum of 0 (fake-provider/wire/README.md, rxe_net.c),
# which tshark reports as an error: that one item is not counted.
#
# IBVCT_WIRE_PEER=rxe: the client's guest keeps rxe too (both sides real
# rxe): the scaffold's own run, which must pass as it is.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
build=${IBVCT_BUILD:-$src/build}
skip_all_unless_utils ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong
[ -x "$build/bin/ibvct-wire-rdma" ] || skip_all "no $build/bin/ibvct-wire-rdma (make all builds it)"
[ -x "$build/bin/ibvct-run" ] || skip_all "no $build/bin/ibvct-run (make all builds it)"
for c in tcpdump tshark; do
	command -v "$c" >/dev/null 2>&1 || skip_all "no $c (ci/install-deps wire installs it)"
done
cache=${IBVCT_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/ibvct/vm}
peer=${IBVCT_WIRE_PEER:-ref}
case $peer in rxe|ref) ;; *) test_bail "IBVCT_WIRE_PEER=$peer: rxe or ref" ;; esac

n=${IBVCT_PP_ITERS:-5}
out=$tl_tmp/out
mkdir -p "$out"
# the reference's device: rxe's profile, its packets on eth0
sed '/^device rxe0$/a\
	transport roce eth0' "$src/fixtures/scripts/rxe.fps" >"$tl_tmp/roce.fps"
grep -q '^	transport roce eth0$' "$tl_tmp/roce.fps" || test_bail "no device rxe0 in fixtures/scripts/rxe.fps"

# The steps: NAME PORT SERVER (the side that serves: rxe or ref) PROGRAM ARG...;
# each side adds -d, -g and -p, the client the server's address. PROGRAM
# t3200: the two-host suite, host B (IBVCT_ROLE=server) on the side that
# serves, listening on PORT for its control connection, host A the other. The first
# step's server is rxe's guest: the pair's client starts when it listens.
cat >"$tl_tmp/steps" <<EOF
rc-rxe-serves 18515 rxe ibv_rc_pingpong -n $n -s 4096 -m 1024 -c
rc-ref-serves 18516 ref ibv_rc_pingpong -n $n -s 4096 -m 1024 -c
uc-rxe-serves 18517 rxe ibv_uc_pingpong -n $n -s 4096 -m 1024 -c
uc-ref-serves 18518 ref ibv_uc_pingpong -n $n -s 4096 -m 1024 -c
ud-rxe-serves 18519 rxe ibv_ud_pingpong -n $n -s 1000 -c
ud-ref-serves 18520 ref ibv_ud_pingpong -n $n -s 1000 -c
srq-rxe-serves 18521 rxe ibv_srq_pingpong -n $n -s 4096 -m 1024 -q 2 -c
srq-ref-serves 18522 ref ibv_srq_pingpong -n $n -s 4096 -m 1024 -q 2 -c
rdma-rxe-serves 18523 rxe ibvct-wire-rdma -s 4096 -m 1024
rdma-ref-serves 18524 ref ibvct-wire-rdma -s 4096 -m 1024
t3200-rxe-serves 18610 rxe t3200
t3200-ref-serves 18611 ref t3200
EOF

# One script for both guests: side.sh ROLE OUT BUILD SCRIPT CACHE STEPS PEER LIB
cat >"$tl_tmp/side.sh" <<'EOF'
role=$1 out=$2 build=$3 fps=$4 cache=$5 steps=$6 peer=$7
. "$8"

# twohost NAME PORT SERVER: the two-host suite, this side host B when
# SERVER is it, else host A, the peer addressed by its IPv6 GID; its TAP in
# $out/NAME.SIDE, its stderr in $out/NAME.SIDE.err, its exit status in
# $out/NAME.SIDE.rc (SIDE: server for host B, client for host A)
twohost() {
	if [ "$3" = "$role" ]; then
		th_me=server th_env="IBVCT_ROLE=server IBVCT_PEER_PORT=$2"
	else
		th_me=client th_env="IBVCT_ROLE=client IBVCT_PEER=$IBVCT_VM_PEER:$2"
	fi
	log "$1: $th_me"
	# shellcheck disable=SC2086 # the words of the role and of pre
	env $th_env IBVCT_PEER_GID=ipv6 IBVCT_RUN_ID="t6150-$1" timeout $((lim * 6)) \
		$pre "$build/suites/system/t3200-twohost-traffic.t" >"$out/$1.$th_me" 2>"$out/$1.$th_me.err"
	echo $? >"$out/$1.$th_me.rc"
	log "$1: $th_me exit $(cat "$out/$1.$th_me.rc")"
}

ko=
if [ "$role" = ref ] && [ "$peer" = ref ]; then
	wp_rxe_out || exit 1
	gid=0
	# the programs on the reference target (a sanitized build: ASan first)
	pre="env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} $build/bin/ibvct-run --private --script $fps --"
else
	gid=$(gid6)
	[ -n "$gid" ] || { log "rxe0 has no RoCE v2 IPv6 link-local GID"; exit 1; }
	pre=
fi
lladdr >"$out/addr.$role" || { log "eth0 has no IPv6 link-local address"; exit 1; }
log "GID index $gid, address $(cat "$out/addr.$role"), peer $IBVCT_VM_PEER"
tp=
if [ "$role" = rxe ]; then
	tcpdump -Z root -i eth0 -s 0 -U -w "$out/wire.pcap" udp port 4791 2>"$out/tcpdump.err" &
	tp=$!
	i=0
	while ! grep -q "listening on" "$out/tcpdump.err" && [ "$i" -lt $((lim * 10)) ]; do sleep 0.1; i=$((i + 1)); done
fi

prev=
while read -r name port server prog args; do
	[ "$prog" = ibvct-wire-rdma ] && prog=$build/bin/ibvct-wire-rdma
	if [ -n "$tp" ]; then
		# the step's packets start after both programs of the one before ended
		[ -z "$prev" ] || waitfor "$out/$prev.client.rc" >/dev/null
		[ -z "$prev" ] || waitfor "$out/$prev.server.rc" >/dev/null
		echo "$name $(date +%s.%N)" >>"$out/marks"
	fi
	prev=$name
	if [ "$prog" = t3200 ]; then
		twohost "$name" "$port" "$server"
		continue
	fi
	# shellcheck disable=SC2086 # the step's arguments
	wp_step "$name" "$port" "$server" $prog $args
done <"$steps"

rc=0
if [ -n "$tp" ]; then
	[ -z "$prev" ] || waitfor "$out/$prev.client.rc" >/dev/null
	sleep 1
	kill -INT "$tp"
	wait "$tp"
fi
if [ -n "$ko" ]; then
	wp_rxe_back || rc=1
fi
log "done"
exit "$rc"
EOF

. "$src/tools/vm/wire-pair-host.sh"
wp_pair "rxe against the reference's RoCE v2 (t6150)" 1200 \
	"$(sed -n '1s/^[^ ]* \([0-9]*\) .*/\1/p' "$tl_tmp/steps")" \
	"sh $tl_tmp/side.sh rxe $out $build $tl_tmp/roce.fps $cache $tl_tmp/steps $peer $src/tools/vm/wire-pair-lib.sh" \
	"sh $tl_tmp/side.sh ref $out $build $tl_tmp/roce.fps $cache $tl_tmp/steps $peer $src/tools/vm/wire-pair-lib.sh"

# who serves, in words
them=$([ "$peer" = ref ] && echo "the reference" || echo "the other guest's rxe")
serves() { case $1 in *-rxe-serves) echo "rxe serves, $them connects" ;; *) echo "$them serves, rxe connects" ;; esac; }

# ---- the programs ------------------------------------------------------------
while read -r name port server prog args; do
	case $prog in
	t3200) continue ;;
	ibvct-wire-rdma)
		what="ibvct-wire-rdma: WRITE, WRITE_WITH_IMM, READ, CMP_SWAP, FETCH_ADD of 4096 bytes, each checked"
		ok='all as expected$' ;;
	ibv_ud_pingpong)
		what="$prog -n $n -s 1000 -c (UD SEND_ONLY)"
		ok='^[0-9]+ iters in [0-9.]+ seconds' ;;
	*)
		what="$prog -n $n -s 4096 -m 1024 -c (four packets a message)"
		ok='^[0-9]+ iters in [0-9.]+ seconds' ;;
	esac
	test_expect_success "$what over IPv6 GIDs: $(serves "$name")" '
		for s in server client; do
			echo "== $name.$s (exit $(cat "$out/$name.$s.rc" 2>/dev/null))"; cat "$out/$name.$s" 2>/dev/null
		done
		for s in server client; do
			[ "$(cat "$out/$name.$s.rc" 2>/dev/null)" = 0 ] && grep -Eq "$ok" "$out/$name.$s" &&
			! grep -qi "invalid\|error\|fail" "$out/$name.$s" || exit 1
		done
	'
done <"$tl_tmp/steps"

# ---- the two-host suite ------------------------------------------------------
# Each host's TAP (server: host B, client: host A) must hold a verdict of
# each test of the suite's plan, end 0, and have no `not ok` but its
# driver's known deviations (TODO, fixtures/expect/rxe.txt: the reference
# plays rxe's profile). The tests named here cross the wire for what both
# stacks must do alike, and must pass on both hosts, none skipped nor
# TODO: RC, UC and UD sends with their immediates, WRITE and READ, both
# atomics, a message of several MTUs, every rnr_retry, retry exceeded at a
# peer that died, the remote access and operation errors.
suite=$build/suites/system/t3200-twohost-traffic.t
plan=$("$suite" -l 2>/dev/null | grep -c .)
must="rc_send_and_send_imm_cross_hosts uc_send_and_write_cross_hosts uc_send_imm_and_write_imm_cross_hosts
ud_send_imm_carries_the_immediate rc_write_and_read_cross_hosts rc_atomics_cross_hosts
rc_message_of_several_mtus_arrives_whole rnr_retry_0_fails_at_the_first_rnr_nak
rnr_retry_1_runs_out_at_the_second_rnr_nak rnr_retry_2_runs_out_at_the_third_rnr_nak
rnr_retry_3_runs_out_without_a_receive rnr_retry_4_runs_out_at_the_fifth_rnr_nak
rnr_retry_5_runs_out_at_the_sixth_rnr_nak rnr_retry_6_runs_out_at_the_seventh_rnr_nak
rnr_retry_7_waits_until_the_receive_is_posted retry_exceeded_when_the_peer_host_is_gone
write_with_a_bad_rkey_is_rem_access_err receive_with_a_bad_lkey_is_rem_op_err"
# hosts NAME: who is host A and who host B, in words
hosts() { case $1 in *-rxe-serves) echo "$them as host A, rxe as host B" ;; *) echo "rxe as host A, $them as host B" ;; esac; }
while read -r name port server prog args; do
	[ "$prog" = t3200 ] || continue
	test_expect_success "the two-host suite over IPv6 GIDs, $(hosts "$name"): each host exits 0 with a verdict of each of its $plan tests, no not ok but its driver's TODO" '
		for s in server client; do
			echo "== $name.$s (exit $(cat "$out/$name.$s.rc" 2>/dev/null))"
			grep -v "^ok" "$out/$name.$s" 2>/dev/null | head -n 40
			tail -n 5 "$out/$name.$s.err" 2>/dev/null
		done
		[ "$plan" -gt 20 ] &&
		for s in server client; do
			[ "$(cat "$out/$name.$s.rc" 2>/dev/null)" = 0 ] && grep -qx "1\.\.$plan" "$out/$name.$s" &&
			[ "$(grep -Ec "^(not )?ok [0-9]+ - " "$out/$name.$s")" = "$plan" ] &&
			! grep "^not ok" "$out/$name.$s" | grep -qv "# TODO" || exit 1
		done
	'
	test_expect_success "the two-host suite, $(hosts "$name"): sends, WRITE, READ, atomics, RNR, retry exceeded and remote errors pass on both hosts, none skipped" '
		f=
		for s in server client; do
			for t in $must; do
				grep -E "^ok [0-9]+ - $t \[" "$out/$name.$s" 2>/dev/null | grep -qv "# SKIP\|# TODO" ||
					{ echo "$name.$s: no ok for $t: $(grep -E "ok [0-9]+ - $t \[" "$out/$name.$s" 2>/dev/null)"; f=1; }
			done
		done
		[ -z "${f:-}" ]
	'
	# what each host did not pass outright (its known deviations with the
	# runner's reason, its skips)
	for s in server client; do
		awk '/^(not )?ok .*# (TODO|SKIP)/ { p = 3; print; next } /^(not )?ok / { p = 0 }
			p > 0 && /^#/ && !/\[(==| +FAILED| +PASSED| +RUN| +LINE)|exit status|scratch dir|FAILED TEST|^# *#? *$/ { p--; print }' \
			"$out/$name.$s" 2>/dev/null | sed "s/^/$name.$s: /" | test_note
	done
done <"$tl_tmp/steps"

# The same host's role played by the reference in one step and by rxe in
# the other: its verdicts and notes (RNR NAKs counted, skip reasons) must
# be the same test by test (tools/vm/tap-agree), and each known deviation
# must fail for the same reason (its diagnostics, but those naming the
# other host's half), so that a TODO hides no difference of the reference.
# reasons TAP: "TEST: line" for each diagnostic of each `not ok # TODO`
reasons() {
	awk '/^not ok .*# TODO/ { t = $5; next } /^(not )?ok / { t = "" }
		t != "" && /^#   / && !/the other host.s half ended|\[(==| +FAILED| +PASSED| +RUN| +LINE)|FAILED TEST|^# *$/ { print t ": " $0 }' "$1" 2>/dev/null
}
for s in server client; do
	h=B
	[ "$s" = client ] && h=A
	mkdir -p "$tl_tmp/agree/rxe.$s/tap" "$tl_tmp/agree/ref.$s/tap"
	# host B is rxe where rxe serves, the other where it connects
	if [ "$s" = server ]; then r=t3200-rxe-serves o=t3200-ref-serves; else r=t3200-ref-serves o=t3200-rxe-serves; fi
	cp "$out/$r.$s" "$tl_tmp/agree/rxe.$s/tap/t3200-twohost-traffic.rxe.tap" 2>/dev/null
	cp "$out/$o.$s" "$tl_tmp/agree/ref.$s/tap/t3200-twohost-traffic.ref.tap" 2>/dev/null
	run_cmd perl "$src/tools/vm/tap-agree" --names ref,rxe "$tl_tmp/agree/ref.$s" "$tl_tmp/agree/rxe.$s"
	test_expect_success "host $h of the two-host suite: $them gives real rxe's verdicts and notes, test by test, and fails each known deviation for rxe's reason" '
		reasons "$out/$r.$s" >"$tl_tmp/agree/rxe.$s.why"
		reasons "$out/$o.$s" >"$tl_tmp/agree/ref.$s.why"
		diff "$tl_tmp/agree/rxe.$s.why" "$tl_tmp/agree/ref.$s.why"
		rc_is 0 && out_has "ref against rxe: $plan tests the same, 0 differences" &&
		{ ! grep -q "^not ok .*# TODO" "$out/$r.$s" || [ -s "$tl_tmp/agree/rxe.$s.why" ]; } &&
		cmp -s "$tl_tmp/agree/rxe.$s.why" "$tl_tmp/agree/ref.$s.why"
	'
done

# ---- the wire: tshark on rxe's capture, step by step -------------------------
# each packet: its step (the last mark at or before it), who sent it
# (server, client, or other), IP version, opcode, and whether it is
# malformed or has an error other than rxe's UDP checksum 0 over IPv6
tshark -n -r "$out/wire.pcap" -T fields -E separator=/t -E aggregator='|' -E occurrence=a \
	-e frame.number -e frame.time_epoch -e ipv6.src -e ip.src -e infiniband.bth.opcode \
	-e _ws.malformed -e _ws.expert.severity -e _ws.expert.message -e udp.checksum \
	>"$tl_tmp/fields" 2>"$tl_tmp/tshark.err"
awk -F'\t' -v marks="$out/marks" -v steps="$tl_tmp/steps" -v rxe="$(cat "$out/addr.rxe" 2>/dev/null)" \
	-v ref="$(cat "$out/addr.ref" 2>/dev/null)" '
	BEGIN {
		while ((getline l < steps) > 0) { split(l, f, " "); srv[f[1]] = f[3] }
		while ((getline l < marks) > 0) { split(l, f, " "); nm++; mname[nm] = f[1]; mtime[nm] = f[2] + 0 }
	}
	{
		st = "before-the-first-step"
		for (i = 1; i <= nm; i++) if ($2 + 0 >= mtime[i]) st = mname[i]
		src = $3 != "" ? $3 : $4
		who = "other"
		if (st in srv) {
			sside = srv[st] == "rxe" ? rxe : ref
			cside = srv[st] == "rxe" ? ref : rxe
			who = src == sside ? "server" : src == cside ? "client" : "other"
		}
		bad = $6 != "" ? "malformed" : ""
		ns = split($7, sev, "|"); split($8, msg, "|")
		for (k = 1; k <= ns; k++)
			if (sev[k] + 0 >= 8388608 && !(msg[k] == "Illegal checksum value (0)" && $3 != "" && $9 == "0x0000"))
				bad = bad (bad == "" ? "" : ",") msg[k]
		print st, who, ($3 != "" ? "ipv6" : "ipv4"), $5, (bad == "" ? "-" : "frame " $1 ": " bad)
	}' "$tl_tmp/fields" >"$tl_tmp/packets"

# expected NAME: the sorted "who:opcode" pairs of the step's packets
# (IBA vol 1 table 36: RC 0-2 SEND first/middle/last, 6-9 WRITE
# first/middle/last/last-with-immediate, 12 READ request, 13-15 READ
# response first/middle/last, 17 ACK, 18 atomic ACK, 19 CMP_SWAP,
# 20 FETCH_ADD; UC 32-34 SEND; UD 100 SEND_ONLY). The suite's steps: at
# least the opcodes of the WRs its tests post on host A (the client): RC
# SEND first/middle/last, only and only-with-immediate (0-2, 4, 5), WRITE
# first/middle/last, only and only-with-immediate (6-8, 10, 11), READ
# request (12), both atomics (19, 20), UC SEND and WRITE only and
# only-with-immediate (36, 37, 42, 43), UD SEND_ONLY with immediate (101);
# and host B's READ response only (16: 1000 bytes), ACKs and NAKs (17),
# atomic ACK (18). Host B posts no request and host A answers none: any
# other opcode from host B, or an answer from host A, is out of place
# (inplace).
expected() {
	case $1 in
	rc-*|srq-*) w='0 1 2 17' ;;
	uc-*) w='32 33 34' ;;
	ud-*) w='100' ;;
	rdma-*) w= ;;
	t3200-*) w= ;;
	esac
	{
		for o in $w; do echo "server:$o"; echo "client:$o"; done
		case $1 in
		rdma-*)
			for o in 6 7 8 9 12 19 20; do echo "client:$o"; done
			for o in 13 14 15 17 18; do echo "server:$o"; done ;;
		t3200-*)
			for o in 0 1 2 4 5 6 7 8 10 11 12 19 20 36 37 42 43 101; do echo "client:$o"; done
			for o in 16 17 18; do echo "server:$o"; done ;;
		esac
	} | LC_ALL=C sort | tr '\n' ' '
}
# inplace: the "who:opcode" pairs of stdin that are out of place in a step
# of the suite
inplace() {
	tr ' ' '\n' | grep -v '^$' | grep -Ev '^(server:1[678]|client:([0-9]|1[0-2]|19|[2-9][0-9]|1[0-9][0-9]))$'
}
test_expect_success 'tshark read the capture of the whole sequence' '
	cat "$tl_tmp/tshark.err" "$out/tcpdump.err" 2>/dev/null; cat "$out/marks" 2>/dev/null
	[ -s "$tl_tmp/fields" ] && [ "$(wc -l <"$out/marks")" = "$(wc -l <"$tl_tmp/steps")" ]
'
while read -r name port server prog args; do
	[ "$prog" = t3200 ] && continue
	test_expect_success "the wire of $name ($(serves "$name")): no malformed packet, all IPv6, opcodes $(expected "$name")" '
		awk -v s="$name" "\$1 == s" "$tl_tmp/packets" >"$tl_tmp/$name.pk"
		got=$(awk "{ print \$2 \":\" \$4 }" "$tl_tmp/$name.pk" | LC_ALL=C sort -u | tr "\n" " ")
		echo "packets: $(wc -l <"$tl_tmp/$name.pk"); seen: $got; want: $(expected "$name")"
		awk "\$5 != \"-\" || \$3 != \"ipv6\"" "$tl_tmp/$name.pk"
		[ -s "$tl_tmp/$name.pk" ] && [ "$got" = "$(expected "$name")" ] &&
		! awk "\$5 != \"-\" || \$3 != \"ipv6\" { f = 1 } END { exit !f }" "$tl_tmp/$name.pk"
	'
done <"$tl_tmp/steps"
while read -r name port server prog args; do
	[ "$prog" = t3200 ] || continue
	test_expect_success "the wire of $name ($(hosts "$name")): no malformed packet, all IPv6, at least the opcodes $(expected "$name")and none out of place" '
		awk -v s="$name" "\$1 == s" "$tl_tmp/packets" >"$tl_tmp/$name.pk"
		got=$(awk "{ print \$2 \":\" \$4 }" "$tl_tmp/$name.pk" | LC_ALL=C sort -u | tr "\n" " ")
		echo "packets: $(wc -l <"$tl_tmp/$name.pk"); seen: $got; at least: $(expected "$name")"
		awk "\$5 != \"-\" || \$3 != \"ipv6\"" "$tl_tmp/$name.pk" | head -n 20
		miss= odd=$(echo "$got" | inplace | tr "\n" " ")
		for p in $(expected "$name"); do
			case " $got" in *" $p "*) ;; *) miss="$miss $p" ;; esac
		done
		echo "missing:$miss; out of place: $odd"
		[ -s "$tl_tmp/$name.pk" ] && [ -z "$miss" ] && [ -z "$odd" ] &&
		! awk "\$5 != \"-\" || \$3 != \"ipv6\" { f = 1 } END { exit !f }" "$tl_tmp/$name.pk"
	'
done <"$tl_tmp/steps"
test_expect_success 'no packet outside the steps or from a third address' '
	awk "\$1 == \"before-the-first-step\" || \$2 == \"other\"" "$tl_tmp/packets" | head -n 20
	! awk "\$1 == \"before-the-first-step\" || \$2 == \"other\" { f = 1 } END { exit !f }" "$tl_tmp/packets"
'
test_done
