#!/bin/sh
# SPDX-License-Identifier: MIT
# t6030: Debian's unmodified ibverbs-utils pingpong programs run as two
# processes (server and client, TCP on 127.0.0.1 for the handshake) on the
# reference target, each started by its own ibvct-run as a user would from
# two shells: they meet on the shared fake host, and their traffic goes
# process to process through the fake provider. rc (polling and -e events),
# srq, ud, uc, and xsrq (XRC: XRC domain through a file, XRC SRQs, target
# QPs), and rc with completion timestamps (-t) on a device with a clock.
# The client must reach the server's QPs, not its own.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
skip_all_unless_utils ibv_rc_pingpong
setup_ibvct_run

mult=${IBVCT_TIMEOUT_MULT:-1}
limit=$((60 * mult))

# listening PORT: a TCP socket listens on it (hex in /proc/net/tcp*)
listening() {
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -Eq ":$hex [0-9A-F:]+ 0A "
}

# free_port: one that nothing uses now
free_port() {
	p=$((20000 + ($$ * 13 + tl_n * 101) % 30000))
	while cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		grep -q ":$(printf '%04X' "$p") "; do
		p=$((p + 1))
	done
	echo "$p"
}

# pp NAME WANT PROGRAM [ARGS]: server and client, each through its own
# ibvct-run (with pp_script set: that script, on the fake host pp_host);
# both must exit 0 and print a line matching WANT. (A known deviation would
# be a test_expect_failure with its reason.)
pp_script= pp_host=
pp() {
	name=$1 want=$2
	shift 2
	port=$(free_port)
	so=$tl_tmp/srv.out co=$tl_tmp/cli.out
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} timeout "$limit" "$TL_RUN" \
		${pp_script:+--script "$pp_script" --host "$pp_host"} -- "$@" -p "$port" >"$so" 2>&1 &
	spid=$!
	# readiness: the server's listening socket (a condition, not a delay)
	i=0
	while ! listening "$port" && kill -0 "$spid" 2>/dev/null && [ $i -lt $((400 * mult)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} timeout "$limit" "$TL_RUN" \
		${pp_script:+--script "$pp_script" --host "$pp_host"} -- "$@" -p "$port" 127.0.0.1 \
		>"$co" 2>&1
	crc=$?
	wait "$spid"
	src_=$?
	how="$* -p $port"
	test_expect_success "$name" '
		# the client'\''s remote QPN is one of the server'\''s local ones (not its own)
		sq=$(sed -n "s/.*local address: .*QPN \(0x[0-9a-f]*\).*/\1/p" "$so" | sort)
		cr=$(sed -n "s/.*remote address: .*QPN \(0x[0-9a-f]*\).*/\1/p" "$co" | sort)
		grep -h -E "bytes in|iters in" "$co" | test_note
		if ! { [ "$crc" = 0 ] && [ "$src_" = 0 ] && grep -Eq -- "$want" "$so" &&
		       grep -Eq -- "$want" "$co" && [ "$sq" = "$cr" ]; }; then
			{ echo "$how: server exit $src_, client exit $crc"
			  echo "server:"; cat "$so"; echo "client:"; cat "$co"; } | head -n 40
			false
		fi
	'
}

bytes='^[0-9]+ bytes in [0-9.]+ seconds = '
pp "rc_pingpong polling, two processes" "$bytes" ibv_rc_pingpong -n 500
pp "rc_pingpong -e (completion events), two processes" "$bytes" ibv_rc_pingpong -e -n 500
pp "rc_pingpong with 64-byte messages" "$bytes" ibv_rc_pingpong -s 64 -n 500
# past one transport record (1 MiB): the message goes in segments; -c checks each byte
pp "rc_pingpong with 3 MiB + 5 byte messages, every byte checked (-c)" "$bytes" \
	ibv_rc_pingpong -s 3145733 -n 20 -c
pp "uc_pingpong with 3 MiB + 5 byte messages, every byte checked (-c)" "$bytes" \
	ibv_uc_pingpong -s 3145733 -n 20 -c
pp "srq_pingpong, two processes" "$bytes" ibv_srq_pingpong -n 500
pp "ud_pingpong, two processes" "$bytes" ibv_ud_pingpong -n 500
pp "uc_pingpong, two processes" "$bytes" ibv_uc_pingpong -n 500
pp "xsrq_pingpong (XRC), two processes [XRCD-08 SRQX-13 WR-03]" '^success$' ibv_xsrq_pingpong
# ibv_xsrq_pingpong keys its XRC domain on /tmp/xrc_domain, a name it opens
# with O_CREAT, holds open for its whole life and never removes (rdma-core
# v44.0 libibverbs/examples/xsrq_pingpong.c:275, :707): it goes once no
# process holds it (a pair of another run's may be using it)
if [ -e /tmp/xrc_domain ] && ! ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q ' -> /tmp/xrc_domain$'; then
	rm -f /tmp/xrc_domain
fi
# completion timestamps (-t) need a device with a completion clock: the
# mlx5 driver's (fixtures/profiles/README.md); both sides report the clock
# cycles between their receive completions
printf 'profile mlx5\ndevice fake0\n\tcap xrc\n\tport 1 state active\n' >"$tl_tmp/mlx5.fps"
pp_script=$tl_tmp/mlx5.fps pp_host=mlx5
pp "rc_pingpong -t (completion timestamps), two processes, profile mlx5 [CQX-06]" \
	'^Average receive completion clock cycles = [0-9]' ibv_rc_pingpong -t -n 500
test_done
