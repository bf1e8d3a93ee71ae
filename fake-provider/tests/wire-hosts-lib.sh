# SPDX-License-Identifier: MIT
# The shell two reference hosts on a veth pair share (t5903, t5904): each
# host its own ibvct-run with a device whose `transport roce IFACE` is
# one end of the pair, in a network namespace of its own (unshare -n).
# Sourced twice: by the test, after test-lib.sh, for wh_require (root,
# ip, a namespace and a veth pair in it, tcpdump and tshark, or skip_all);
# and by the script that runs inside the namespace, after it set out (the
# results), mult (the load's stretch), lim (a program's limit) and run
# (ibvct-run with the test's environment), for the link (wh_link), the
# captures (wh_capture_start, wh_capture_stop) and one exchange of a
# server on A and a client on B (wh_pair).

# wh_require NAME: the test's preconditions, NAME the veth pair's prefix
wh_require() {
	[ "$(id -u)" = 0 ] || skip_all "not root: a network namespace and a veth pair need it"
	command -v ip >/dev/null 2>&1 || skip_all "no ip (iproute2)"
	unshare -n true 2>/dev/null || skip_all "unshare -n refused: no network namespace here"
	unshare -n ip link add "${1}a" type veth peer name "${1}b" 2>/dev/null ||
		skip_all "no veth pair in a network namespace (no veth module in this kernel)"
	for p in tcpdump tshark; do
		command -v $p >/dev/null 2>&1 || skip_all "$p not installed (ci/install-deps wire)"
	done
}

# wh_link NAME NET: in the namespace, lo up and the pair NAMEa, NAMEb up
# with 10.79.NET.1 and .2 (no duplicate address detection: the IPv6
# link-local GIDs are there at once)
wh_link() {
	echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
	ip link set lo up
	ip link add "${1}a" type veth peer name "${1}b" || return 1
	ip link set "${1}a" up && ip link set "${1}b" up &&
	ip addr add "10.79.$2.1/24" dev "${1}a" && ip addr add "10.79.$2.2/24" dev "${1}b"
}

# wh_capture_start FILE: tcpdump of the RoCE v2 packets on every interface
# into FILE (its messages in FILE.tcpdump), once it listens; its pid in wh_tp
wh_capture_start() {
	tcpdump -i any -U -w "$1" udp port 4791 >/dev/null 2>"$1.tcpdump" &
	wh_tp=$!
	wh_i=0
	while ! grep -q "listening" "$1.tcpdump" 2>/dev/null && [ $wh_i -lt $((100 * mult)) ]; do
		sleep 0.1; wh_i=$((wh_i + 1))
	done
}

# wh_capture_stop FILE: the capture of wh_capture_start ended once FILE
# stopped growing (tcpdump may lag behind a burst on a loaded machine;
# what is still in its ring is lost at the signal)
wh_capture_stop() {
	wh_last=-1 wh_i=0
	while [ $wh_i -lt $((60 * mult)) ]; do
		wh_sz=$(wc -c <"$1" 2>/dev/null || echo 0)
		[ "$wh_sz" = "$wh_last" ] && break
		wh_last=$wh_sz
		sleep 1
		wh_i=$((wh_i + 1))
	done
	kill "$wh_tp"
	wait "$wh_tp"
}

# wh_pair NAME SCRIPT_A SCRIPT_B PROG ARG...: PROG ARG... -d refA as the
# server on host A, then PROG ARG... -d refB 127.0.0.1 as the client on
# host B, started again while the server does not listen yet (its start
# stretches with the load); their output in $out/NAME.server and .client,
# their exit statuses in NAME.server.rc and NAME.client.rc
wh_pair() {
	wh_n=$1 wh_sa=$2 wh_sb=$3 wh_prog=$4
	shift 4
	run --private --script "$wh_sa" -- timeout "$lim" "$wh_prog" -d refA "$@" >"$out/$wh_n.server" 2>&1 &
	wh_sp=$!
	sleep 0.3
	wh_c=1 wh_try=0
	while [ $wh_try -lt $((20 * mult)) ]; do
		run --private --script "$wh_sb" -- timeout "$lim" "$wh_prog" -d refB "$@" 127.0.0.1 \
			>"$out/$wh_n.client" 2>&1
		wh_c=$?
		grep -q "Couldn't connect\|no TCP connection" "$out/$wh_n.client" || break
		sleep 0.5
		wh_try=$((wh_try + 1))
	done
	wait "$wh_sp"
	echo $? >"$out/$wh_n.server.rc"
	echo $wh_c >"$out/$wh_n.client.rc"
}
