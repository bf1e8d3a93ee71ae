#!/bin/sh
# SPDX-License-Identifier: MIT
# t6102: Debian's unmodified ibverbs-utils on a real device, in one host:
# ibv_devices lists it, ibv_devinfo shows its port active, and the rc, ud,
# srq and uc pingpongs run server and client on it (TCP on 127.0.0.1 for
# the handshake; on an Ethernet port, -g the GID index of its RoCE v2 IPv4
# GID). The device is IBVCT_DEVICE; without one (make check on a host with
# no RDMA device) it is a skip with that reason. `make conformance
# TARGET=rxe-vm` runs it in the guest, on rxe0; TARGET=xrc-vm on ixrc0.
# IBVCT_PP_ITERS (100) messages each.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
skip_all_unless_utils ibv_rc_pingpong
dev=${IBVCT_DEVICE:-}
[ -n "$dev" ] || skip_all "no device named (IBVCT_DEVICE): the rxe-vm and xrc-vm targets run this in their guests"
[ -e "/sys/class/infiniband/$dev" ] || skip_all "no RDMA device $dev here (/sys/class/infiniband/$dev)"

n=${IBVCT_PP_ITERS:-100}
lim=$((120 * ${IBVCT_TIMEOUT_MULT:-1}))
port=/sys/class/infiniband/$dev/ports/1
# on an Ethernet port the GID: the guest's (rxe0's), else the first RoCE v2
# GID of an IPv4 address; none on InfiniBand (ixrc0 of the xrc-vm guest)
gid=
if [ "$(cat "$port/link_layer" 2>/dev/null)" = Ethernet ]; then
	gid=${IBVCT_VM_GID:-}
	[ -n "$gid" ] || for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		case $(cat "$port/gids/$i" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*)
			[ "$(cat "$port/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] && { gid=$i; break; } ;;
		esac
	done
fi

run_cmd ibv_devices
test_expect_success "ibv_devices lists $dev" '
	out_has "^[[:space:]]+$dev[[:space:]]"
'
run_cmd ibv_devinfo -d "$dev"
test_expect_success "ibv_devinfo -d $dev: port 1 active" '
	rc_is 0 && out_has "hca_id:[[:space:]]+$dev$" && out_has "PORT_ACTIVE"
'

# listening PORT: a TCP socket listens on it
listening() {
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -Eq ":$(printf '%04X' "$1") [0-9A-F:]+ 0A "
}
tcp=18515
for p in rc ud srq uc; do
	so=$tl_tmp/$p.server co=$tl_tmp/$p.client
	timeout "$lim" "ibv_${p}_pingpong" -d "$dev" ${gid:+-g "$gid"} -n "$n" -p "$tcp" >"$so" 2>&1 &
	spid=$!
	i=0
	while ! listening "$tcp" && kill -0 "$spid" 2>/dev/null && [ "$i" -lt $((lim * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	timeout "$lim" "ibv_${p}_pingpong" -d "$dev" ${gid:+-g "$gid"} -n "$n" -p "$tcp" 127.0.0.1 >"$co" 2>&1
	crc=$?
	wait "$spid"
	src_=$?
	test_expect_success "ibv_${p}_pingpong -d $dev${gid:+ -g $gid} -n $n, server and client on $dev" '
		{ echo "server exit $src_:"; cat "$so"; echo "client exit $crc:"; cat "$co"; } | head -n 40
		[ "$src_" = 0 ] && [ "$crc" = 0 ] &&
		grep -Eq "^[0-9]+ bytes in [0-9.]+ seconds" "$so" &&
		grep -Eq "^[0-9]+ bytes in [0-9.]+ seconds" "$co"
	'
	tcp=$((tcp + 1))
done
test_done
