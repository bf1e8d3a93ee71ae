# SPDX-License-Identifier: MIT
# The guest's side of a wire test between two rxe-vm guests of one
# `ibvct-vm pair` (t6130, t6150, t6151; the host's side is
# wire-pair-host.sh): sourced by the script each guest runs,
# once it has set role (its name in the out dir: rxe for the server's
# guest, ref for the client's, which may take rdma_rxe out and run the
# reference instead), out (the out dir on 9p, seen by both guests) and
# cache (the VM cache, for rdma_rxe.ko). Owns the waits of a guest (each
# stretched with IBVCT_TIMEOUT_MULT), rxe0's IPv6 link-local GID, taking
# rxe out and putting it back, and wp_step: one program of a step, started
# when the peer's side is ready and ended a grace after the peer's ended.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
m=${IBVCT_TIMEOUT_MULT:-1}
# a program's limit; a program whose peer has ended gets a grace only
lim=$((30 * m)) grace=$((2 * m))
log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*" >>"$out/$role.log"; }
listening() {
	awk -v p=":$(printf '%04X' "$1")" '$2 ~ p "$" && $4 == "0A" { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# waitfor FILE...: until one exists (0), or lim runs out (1)
waitfor() {
	i=0
	while [ "$i" -lt $((lim * 10)) ]; do
		for f in "$@"; do [ -e "$f" ] && return 0; done
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# rxe0's RoCE v2 GID of the IPv6 link-local address
gid6() {
	g6= i=0
	while [ -z "$g6" ] && [ "$i" -lt $((lim * 10)) ]; do
		for x in 0 1 2 3 4 5 6 7; do
			case $(cat /sys/class/infiniband/rxe0/ports/1/gids/$x 2>/dev/null) in
			fe80:*) [ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$x 2>/dev/null)" = "RoCE v2" ] && g6=$x ;;
			esac
		done
		[ -n "$g6" ] || { sleep 0.1; i=$((i + 1)); }
	done
	echo "$g6"
}
# eth0's IPv6 link-local address once it is no longer tentative
lladdr() {
	i=0
	while [ "$i" -lt $((lim * 10)) ]; do
		a=$(ip -6 addr show dev eth0 scope link 2>/dev/null | grep -v tentative |
			sed -n 's/.*inet6 \(fe80:[^/]*\)\/.*/\1/p' | head -n 1)
		[ -n "$a" ] && { echo "$a"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# wp_rxe_out: rdma_rxe out of this guest (its socket holds UDP port 4791,
# which the reference's transport binds); ko then names it for wp_rxe_back
wp_rxe_out() {
	ko=$(ls "$cache"/kernels/linux-image-"$(uname -r)"_*/modules/rdma_rxe.ko 2>/dev/null | head -n 1)
	[ -n "$ko" ] || { log "no rdma_rxe.ko of $(uname -r) in $cache"; return 1; }
	rdma link delete rxe0 && rmmod rdma_rxe || { log "cannot take rdma_rxe out"; return 1; }
}
wp_rxe_back() {
	insmod "$ko" && rdma link add rxe0 type rxe netdev eth0 || { log "cannot put rxe0 back"; return 1; }
}

# wp_step NAME PORT SERVER PROG [ARG]...: this side's program of the step,
# as the server when SERVER is $role (it says in $out/NAME.listening when
# it listens), else as the client once the server listens; $pre before
# it, -d rxe0 -g $gid -p PORT after its arguments, the client's last
# argument the peer's address. Its output goes to $out/NAME.SIDE, its exit
# status to $out/NAME.SIDE.rc (125: the server never listened).
wp_step() {
	ws_name=$1 ws_port=$2 ws_server=$3
	shift 3
	if [ "$ws_server" = "$role" ]; then ws_me=server ws_other=client; else ws_me=client ws_other=server; fi
	log "$ws_name: $ws_me"
	if [ "$ws_me" = server ]; then
		# shellcheck disable=SC2086 # pre: a command and its words
		timeout "$lim" $pre "$@" -d rxe0 -g "$gid" -p "$ws_port" >"$out/$ws_name.server" 2>&1 &
	else
		if ! waitfor "$out/$ws_name.listening" "$out/$ws_name.server.rc" || [ ! -e "$out/$ws_name.listening" ]; then
			echo "the server never listened on $ws_port" >"$out/$ws_name.client"
			echo 125 >"$out/$ws_name.client.rc"
			return 0
		fi
		# shellcheck disable=SC2086
		timeout "$lim" $pre "$@" -d rxe0 -g "$gid" -p "$ws_port" "$IBVCT_VM_PEER" >"$out/$ws_name.client" 2>&1 &
	fi
	ws_pid=$!
	ws_left=-1
	while kill -0 "$ws_pid" 2>/dev/null; do
		if [ "$ws_me" = server ] && [ ! -e "$out/$ws_name.listening" ] && listening "$ws_port"; then
			: >"$out/$ws_name.listening"
		fi
		# the peer's program ended: ours gets a grace, then is ended
		if [ "$ws_left" -lt 0 ] && [ -e "$out/$ws_name.$ws_other.rc" ]; then
			ws_left=$((grace * 10))
		elif [ "$ws_left" -eq 0 ]; then
			log "$ws_name: the $ws_other ended $grace s ago; ending the $ws_me"
			kill "$ws_pid" 2>/dev/null
		elif [ "$ws_left" -gt 0 ]; then
			ws_left=$((ws_left - 1))
		fi
		sleep 0.1
	done
	wait "$ws_pid"
	echo $? >"$out/$ws_name.$ws_me.rc"
	log "$ws_name: $ws_me exit $(cat "$out/$ws_name.$ws_me.rc")"
}
