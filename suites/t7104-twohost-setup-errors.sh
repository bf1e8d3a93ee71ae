#!/bin/sh
# SPDX-License-Identifier: MIT
# t7104: a two-host run (testkit/runner/th_host.c) that is set up wrong says
# so and fails; one whose peer came and went before the first test has no
# result, and fails too. Neither may look like a pass: a `1..0 # SKIP` with
# exit 0 reads as "nothing to run here" to prove and to a lab's CI.
#   - IBVCT_ROLE neither server nor client, a client without IBVCT_PEER, an
#     IBVCT_PEER_GID other than ipv4 or ipv6: `Bail out!` naming the
#     variable, exit 1, before any device is opened;
#   - two hosts that address each other by different GID families (one
#     ipv4, one ipv6): both bail out when they meet, naming the mismatch;
#   - a peer that connects and closes before the runners' handshake: the run
#     has no result (`1..0 # SKIP` with the reason, exit 3).
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
prog=$build/suites/ref/t3200-twohost-traffic.t
[ -x "$prog" ] || skip_all "no $prog (make tests builds it)"
command -v perl >/dev/null 2>&1 || skip_all "no perl (ci/install-deps core installs it)"

# run NAME ENV...: the program with ENV, its output and exit status in NAME.out
run() {
	n=$1
	shift
	env "$@" "$prog" >"$tmp/$n.out" 2>&1
	echo "exit $?" >>"$tmp/$n.out"
}
run role IBVCT_ROLE=neither
run nopeer IBVCT_ROLE=client IBVCT_PEER=
run gid IBVCT_ROLE=server IBVCT_PEER_PORT=0 IBVCT_PEER_GID=ipv5
test_expect_success 'IBVCT_ROLE=neither: Bail out naming IBVCT_ROLE, exit 1' '
	cat "$tmp/role.out"
	grep -q "^Bail out! IBVCT_ROLE is server or client, not .neither." "$tmp/role.out" &&
	grep -qx "exit 1" "$tmp/role.out"
'
test_expect_success 'IBVCT_ROLE=client without IBVCT_PEER: Bail out naming IBVCT_PEER, exit 1' '
	cat "$tmp/nopeer.out"
	grep -q "^Bail out! IBVCT_ROLE=client needs IBVCT_PEER=" "$tmp/nopeer.out" &&
	grep -qx "exit 1" "$tmp/nopeer.out"
'
test_expect_success 'IBVCT_PEER_GID=ipv5: Bail out naming IBVCT_PEER_GID, exit 1' '
	cat "$tmp/gid.out"
	grep -q "^Bail out! IBVCT_PEER_GID is ipv4 or ipv6, not .ipv5." "$tmp/gid.out" &&
	grep -qx "exit 1" "$tmp/gid.out"
'

# two hosts of different GID families: host B (ipv6) on a port of its own,
# host A (ipv4) connects to it
(run famb IBVCT_ROLE=server IBVCT_PEER_PORT=0 IBVCT_PEER_PORT_FILE="$tmp/port" \
	IBVCT_PEER_GID=ipv6 IBVCT_RUN_ID=t7104) &
b=$!
i=0
while [ ! -s "$tmp/port" ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
run fama IBVCT_ROLE=client IBVCT_PEER="127.0.0.1:$(cat "$tmp/port" 2>/dev/null)" \
	IBVCT_PEER_GID=ipv4 IBVCT_RUN_ID=t7104
wait "$b"
test_expect_success 'hosts of two GID families: both bail out naming the mismatch, exit 1' '
	cat "$tmp/fama.out" "$tmp/famb.out"
	for s in a b; do
		grep -q "^Bail out! .*addresses its peer by the other GID" "$tmp/fam$s.out" &&
		grep -qx "exit 1" "$tmp/fam$s.out" || exit 1
	done
'

# a peer that comes and goes before the handshake: host B has no result
rm -f "$tmp/port"
(run gone IBVCT_ROLE=server IBVCT_PEER_PORT=0 IBVCT_PEER_PORT_FILE="$tmp/port" IBVCT_RUN_ID=t7104) &
b=$!
i=0
while [ ! -s "$tmp/port" ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
perl -MIO::Socket::INET -e '
	my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $ARGV[0], Proto => "tcp")
		or die "connect: $!\n";
	close($s);' "$(cat "$tmp/port" 2>/dev/null)"
wait "$b"
test_expect_success 'a peer gone before the handshake: 1..0 # SKIP with the reason, exit 3 (no result)' '
	cat "$tmp/gone.out"
	grep -q "^1\.\.0 # SKIP " "$tmp/gone.out" && grep -qx "exit 3" "$tmp/gone.out" &&
	! grep -q "^Bail out!" "$tmp/gone.out"
'
test_done
