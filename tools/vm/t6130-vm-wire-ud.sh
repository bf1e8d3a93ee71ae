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
# One script for both guests: side.sh ROLE OUT N CACHE LIB [WUD]; the
# server's guest (rxe) runs the pingpong on rxe0's IPv6 GID, the client's
# (ref) takes rdma_rxe out for ibvct-wire-ud and puts it back
# (tools/vm/wire-pair-lib.sh; each guest's log in OUT/ROLE.log)
cat >"$tl_tmp/side.sh" <<'EOF'
role=$1 out=$2 n=$3 cache=$4
. "$5"
plim=$((120 * m))
if [ "$role" = rxe ]; then
	g6=$(gid6)
	[ -n "$g6" ] || { log "rxe0 has no RoCE v2 IPv6 link-local GID"; exit 1; }
	log "GID index $g6"
	timeout "$plim" ibv_ud_pingpong -g "$g6" -n "$n" -s 62 -p 18515 >"$out/server" 2>&1
	echo $? >"$out/server.rc"
	exit 0
fi
ko=
wp_rxe_out || exit 1
timeout "$plim" "$6" -i eth0 -6 -p 18515 -n "$n" -s 62 "$IBVCT_VM_PEER" >"$out/client" 2>&1
rc=$?
echo "$rc" >"$out/client.rc"
wp_rxe_back || exit 1
exit "$rc"
EOF

. "$src/tools/vm/wire-pair-host.sh"
wp_pair "rxe's UD against the RoCE v2 codec (t6130)" 600 18515 \
	"sh $tl_tmp/side.sh rxe $out $n $cache $src/tools/vm/wire-pair-lib.sh" \
	"sh $tl_tmp/side.sh ref $out $n $cache $src/tools/vm/wire-pair-lib.sh $build/bin/ibvct-wire-ud"
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
