#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 1500
# t6140: the two-host suites under a real scheduler, and the reference held
# against real rxe across two hosts, test by test.
#
# Two rxe-vm guests (tools/vm/ibvct-vm pair, each with rxe0 on Debian's
# kernel, on one virtual segment) are a Slurm cluster of two nodes
# (tools/vm/slurm-pair: Debian's slurmctld, slurmd and munge; ibvct-a the
# controller and a node, ibvct-b a node). On ibvct-a, `sbatch --wait` runs
# the lab recipe ci/templates/slurm-pair.sbatch unchanged: its `srun -N2`
# starts `ibvct conformance --target system --peer` on both nodes, the
# system-built two-host suite (t3200, against Debian's libibverbs) with a
# half of each test on each node, and host A's folder gets the pair's
# report. Then the same binary runs on the reference target as two fake
# hosts of this machine, profile rxe (fixtures/scripts/rxe.fps with the
# guests' GIDs), and tools/vm/tap-agree holds each host's verdicts and
# notes against the guests', test by test.
#
# And the checks can fail: a node that never registers is named with its
# reason (a third node of the configuration that no guest runs); under a
# quirk that breaks the GID addressing, the reference differs from rxe.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
sp=$src/tools/vm/slurm-pair
agree=$src/tools/vm/tap-agree
suite=$build/suites/system/t3200-twohost-traffic.t
[ -x "$suite" ] || test_bail "no $suite (make suites)"
for c in slurmctld slurmd sbatch srun sinfo scontrol munged mungekey; do
	command -v "$c" >/dev/null 2>&1 || test_bail "no $c (ci/install-deps slurm installs it)"
done
export IBVCT_SRC=$src IBVCT_BUILD=$build
. "$src/tools/vm/agree-lib.sh"
mult=${IBVCT_TIMEOUT_MULT:-1}

out=$tl_tmp/out
sl=$out/slurm
mkdir -p "$out"
sh "$sp" conf "$sl" >"$tl_tmp/conf.err" 2>&1 || test_bail "slurm-pair conf: $(cat "$tl_tmp/conf.err")"
# a node that no guest runs: the controller must name it as never registered
{
	echo "NodeName=ibvct-c NodeAddr=10.9.0.3 CPUs=1 State=UNKNOWN"
	echo "PartitionName=absent Nodes=ibvct-c MaxTime=INFINITE State=UP"
} >>"$sl/slurm.conf"
{
	echo 'sh "$1" wait-idle "$2" 5 ibvct-c >absent.out 2>&1; echo $? >absent.rc'
	echo 'exec sbatch --wait "$3"'
} >"$tl_tmp/job.sh"

run_cmd sh "$vm" pair --out "$out" --result "$tl_tmp/result" --timeout 900 \
	--ready-port 16817 -e "IBVCT=sh $src/tools/ibvct/ibvct" \
	--server "sh $sp controller $sl -- sh $tl_tmp/job.sh $sp $sl $src/ci/templates/slurm-pair.sbatch" \
	--client "sh $sp node $sl"
if rc_is 125 && [ -n "${IBVCT_VM_NORESULT:-}" ]; then
	echo "two guests under Slurm (t6140): $(sed -n 's/^reason=//p' "$tl_tmp/result")" >>"$IBVCT_VM_NORESULT"
fi
test_expect_success 'both guests gave a result, both commands exited 0' '
	cat "$tl_tmp/result" 2>/dev/null; cat "$sl/no-result.txt" 2>/dev/null
	rc_is 0 && grep -qx "result=ok" "$tl_tmp/result"
'
test_expect_success 'both nodes registered with slurmctld and the job ran (no node without a result)' '
	cat "$sl/no-result.txt" 2>/dev/null
	[ ! -e "$sl/no-result.txt" ] && [ "$(cat "$sl/cmd.rc" 2>/dev/null)" = 0 ]
'
test_expect_success 'a node of the cluster that never registers is named, with its reason' '
	cat "$sl/job/absent.out" 2>/dev/null
	[ "$(cat "$sl/job/absent.rc" 2>/dev/null)" = 1 ] &&
	grep -q "ibvct-c(.*) never became idle in 5 s" "$sl/job/absent.out"
'

# the job's folders: ibvct-pair-JOBID-client (the pair's report) and -server
job=$(ls -d "$sl"/job/ibvct-pair-*-client 2>/dev/null | head -n 1)
id=${job##*/ibvct-pair-}
id=${id%-client}
fp=$job/fingerprint.txt
test_expect_success 'srun -N2 ran ibvct conformance --peer on both Slurm nodes, one run id' '
	ls "$sl/job"; cat "$fp" 2>/dev/null | grep -E "^(peer\.)?(host|pair\.)"
	[ -n "$id" ] && [ -d "$sl/job/ibvct-pair-$id-server" ] &&
	grep -qx "host=ibvct-b" "$fp" && grep -qx "pair.role=client" "$fp" &&
	grep -qx "peer.host=ibvct-a" "$fp" && grep -qx "peer.pair.role=server" "$fp" &&
	grep -qx "pair.run_id=slurm-$id" "$fp" && grep -qx "peer.pair.run_id=slurm-$id" "$fp"
'
tap_a=$job/tap/t3200-twohost-traffic.hostA-client.tap
tap_b=$job/tap/t3200-twohost-traffic.hostB-server.tap
plan=$("$suite" -l 2>/dev/null | grep -c .)
test_expect_success "the pair's report holds a verdict of each host for each of the $plan tests, and says PASS" '
	grep -v "^#" "$tap_a" 2>/dev/null | head -n 20
	tail -n 3 "$sl/job/ibvct-pair-$id.out" 2>/dev/null
	[ "$plan" -gt 0 ] &&
	for t in "$tap_a" "$tap_b"; do
		grep -qx "1\.\.$plan" "$t" && [ "$(grep -Ec "^(not )?ok " "$t")" = "$plan" ] &&
		! grep -q "no result" "$t" || exit 1
	done &&
	grep -q "^PASS: " "$sl/job/ibvct-pair-$id.out"
'
test_expect_success "the report's first screen names the pair: this node and the other, each with its rxe0" '
	head -n 8 "$job/summary.txt" 2>/dev/null
	head -n 8 "$job/summary.txt" | grep -q "^pair:     slurm-$id: this host client (ibvct-b) with ibvct-a (ibvct-a, rxe0, .*)$"
'

# ref_pair SCRIPT DIR [TEST...]: the system-built suite (those tests of it)
# on the reference target as two fake hosts of this machine on one fabric
# (host B, the server, with the server guest's GIDs; host A with the
# client's), meeting over TCP on 127.0.0.1 on a port host B picks; their
# TAP in DIR/a and DIR/b
ref_pair() {
	rp_f=$1 rp_d=$2
	shift 2
	mkdir -p "$rp_d/fab" "$rp_d/a" "$rp_d/b" "$rp_d/ta/tap" "$rp_d/tb/tap"
	for rp_s in a b; do
		rp_n=2
		[ "$rp_s" = b ] && rp_n=1
		# rxe0 of guest 10.9.0.N: the link-local GID of its MAC, then the
		# IPv4-mapped one (tools/vm/ibvct-vm pair; testkit/runner/th_ref.c)
		sed "/^	port 1 /a\\
	gid 1 0 fe80::5054:ff:fe49:420$rp_n\\
	gid 1 1 ::ffff:10.9.0.$rp_n" "$rp_f" >"$rp_d/$rp_s.fps"
	done
	(cd "$rp_d/b" && env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} IBVCT_FABRIC=$rp_d/fab \
		IBVCT_ROLE=server IBVCT_PEER_PORT=0 IBVCT_PEER_PORT_FILE=$rp_d/port IBVCT_RUN_ID=t6140 \
		IBVCT_TAP_DIR=$rp_d/b TMPDIR=$rp_d/b \
		sh "$src/testkit/sh/test-exec" "$build/bin/ibvct-run" --private --script "$rp_d/b.fps" -- "$suite" "$@" \
		>/dev/null 2>&1) &
	rp_pid=$!
	rp_i=0
	while [ ! -s "$rp_d/port" ] && kill -0 "$rp_pid" 2>/dev/null && [ "$rp_i" -lt $((600 * mult)) ]; do
		sleep 0.1
		rp_i=$((rp_i + 1))
	done
	(cd "$rp_d/a" && env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} IBVCT_FABRIC=$rp_d/fab \
		IBVCT_ROLE=client IBVCT_PEER=127.0.0.1:"$(cat "$rp_d/port" 2>/dev/null)" IBVCT_RUN_ID=t6140 \
		IBVCT_TAP_DIR=$rp_d/a TMPDIR=$rp_d/a \
		sh "$src/testkit/sh/test-exec" "$build/bin/ibvct-run" --private --script "$rp_d/a.fps" -- "$suite" "$@" \
		>/dev/null 2>&1)
	wait "$rp_pid"
	cp "$rp_d/a/ibvct-run.tap" "$rp_d/ta/tap/t3200-twohost-traffic.ref-hostA.tap" 2>/dev/null
	cp "$rp_d/b/ibvct-run.tap" "$rp_d/tb/tap/t3200-twohost-traffic.ref-hostB.tap" 2>/dev/null
	return 0
}

script=$(agree_script "$src/fixtures/scripts/rxe.fps" "$tl_tmp/rxe.fps")
test_note "Debian $agree_rel$([ -f "$tl_tmp/rxe.fps.note" ] && echo ": $(cat "$tl_tmp/rxe.fps.note")")"
ref_pair "$script" "$tl_tmp/ref"
mkdir -p "$tl_tmp/rxe-a/tap" "$tl_tmp/rxe-b/tap"
cp "$tap_a" "$tl_tmp/rxe-a/tap/" 2>/dev/null
cp "$tap_b" "$tl_tmp/rxe-b/tap/t3200-twohost-traffic.hostB-server.tap" 2>/dev/null
for side in a b; do
	host=A
	[ "$side" = b ] && host=B
	run_cmd perl "$agree" --names ref,rxe "$tl_tmp/ref/t$side" "$tl_tmp/rxe-$side"
	test_expect_success "host $host: the reference as two fake hosts (profile rxe) gives real rxe's verdicts and notes across two guests, test by test" '
		grep -v "^#" "$tl_tmp/ref/$side/ibvct-run.tap" 2>/dev/null | head -n 20
		rc_is 0 && out_has "ref against rxe: $plan tests the same, 0 differences"
	'
done

# a quirk that breaks the GID addressing of the reference: it must differ
# from real rxe in the first test, which sends across the hosts by GID (the
# one test run: under the quirk each test waits for its retries to run out)
q=$tl_tmp/quirk.fps
{ cat "$script"; echo "quirk gid_ignored"; } >"$q"
ref_pair "$q" "$tl_tmp/quirked" rc_send_and_send_imm_cross_hosts
run_cmd perl "$agree" --names ref,rxe "$tl_tmp/quirked/ta" "$tl_tmp/rxe-a"
test_expect_success 'under a quirk breaking the GID addressing the reference differs from real rxe' '
	rc_is 1 && out_has "^DIFF t3200-twohost-traffic rc_send_and_send_imm_cross_hosts: "
'
test_done
