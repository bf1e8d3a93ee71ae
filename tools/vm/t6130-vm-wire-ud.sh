#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t6130: the RoCE v2 codec and its UDP transport (fake-provider/wire) on
# the wire with real rxe. Two rxe-vm guests (tools/vm/ibvct-vm pair, guests
# of their own): the server's runs Debian's ibv_ud_pingpong on rxe0 with
# its IPv6 link-local RoCE v2 GID; the client's takes rdma_rxe out (its
# socket holds UDP port 4791), runs ibvct-wire-ud, the pingpong's client on
# our codec and a UDP socket on eth0's link-local address, and puts rxe0
# back. rxe accepts our UD sends (it drops a packet whose ICRC, Q_Key or
# P_Key is wrong, and the pingpong would never end) and our parser accepts
# each of its replies with the ICRC good. IPv6: over IPv4 a UDP socket
# does not see the identification field the ICRC covers (fw_udp.h).
# IBVCT_PP_ITERS (default 3) messages of 62 bytes
# (a pad of 2) each way.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
build=${IBVCT_BUILD:-$src/build}
skip_all_unless_utils ibv_ud_pingpong
[ -x "$build/bin/ibvct-wire-ud" ] || skip_all "no $build/bin/ibvct-wire-ud (make all builds it)"
cache=${IBVCT_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/ibvct/vm}

n=${IBVCT_PP_ITERS:-3}
out=$tl_tmp/out
mkdir -p "$out"
# the GID index of rxe0's RoCE v2 link-local IPv6 GID, once it is there
gid6='g6=; i=0
while [ -z "$g6" ] && [ "$i" -lt 100 ]; do
	for x in 0 1 2 3 4 5 6 7; do
		case $(cat /sys/class/infiniband/rxe0/ports/1/gids/$x 2>/dev/null) in
		fe80:*) [ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$x 2>/dev/null)" = "RoCE v2" ] && g6=$x ;;
		esac
	done
	[ -n "$g6" ] || { sleep 0.1; i=$((i + 1)); }
done'
{
	echo 'lim=$((120 * ${IBVCT_TIMEOUT_MULT:-1})) out=$1 n=$2'
	echo "$gid6"
	echo 'timeout "$lim" ibv_ud_pingpong -g "$g6" -n "$n" -s 62 -p 18515 >"$out/server" 2>&1'
	echo 'echo $? >"$out/server.rc"'
} >"$tl_tmp/server.sh"
{
	echo 'PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH'
	echo 'lim=$((120 * ${IBVCT_TIMEOUT_MULT:-1})) out=$1 n=$2 wud=$3 cache=$4'
	echo 'ko=$(ls "$cache"/kernels/linux-image-"$(uname -r)"_*/modules/rdma_rxe.ko 2>/dev/null | head -n 1)'
	echo '[ -n "$ko" ] || { echo "no rdma_rxe.ko of $(uname -r) in $cache" >"$out/client"; exit 1; }'
	echo 'rdma link delete rxe0 && rmmod rdma_rxe || { echo "cannot take rdma_rxe out" >"$out/client"; exit 1; }'
	echo 'timeout "$lim" "$wud" -i eth0 -6 -p 18515 -n "$n" -s 62 "$IBVCT_VM_PEER" >"$out/client" 2>&1'
	echo 'rc=$?'
	echo 'echo "$rc" >"$out/client.rc"'
	echo 'insmod "$ko" && rdma link add rxe0 type rxe netdev eth0 || exit 1'
	echo 'exit "$rc"'
} >"$tl_tmp/client.sh"

run_cmd sh "$vm" pair --no-pool --out "$out" --result "$tl_tmp/result" --timeout 600 \
	--ready-port 18515 \
	--server "sh $tl_tmp/server.sh $out $n" \
	--client "sh $tl_tmp/client.sh $out $n $build/bin/ibvct-wire-ud $cache"
test_expect_success 'both guests gave a result, both commands exited 0' '
	cat "$tl_tmp/result" 2>/dev/null
	rc_is 0 && grep -qx "result=ok" "$tl_tmp/result"
'
test_expect_success "rxe's ibv_ud_pingpong -n $n takes our UD sends and completes" '
	cat "$out/server" 2>/dev/null
	[ "$(cat "$out/server.rc" 2>/dev/null)" = 0 ] &&
	grep -Eq "^[0-9]+ bytes in [0-9.]+ seconds" "$out/server"
'
test_expect_success "ibvct-wire-ud: each of rxe's $n replies (62 bytes, pad 2) parses, ICRC good" '
	cat "$out/client" 2>/dev/null
	[ "$(cat "$out/client.rc" 2>/dev/null)" = 0 ] &&
	[ "$(grep -c "62 bytes, pad 2, ICRC good" "$out/client")" = "$n" ] &&
	grep -q "^$n UD sends each way over IPv6" "$out/client"
'
test_done
