#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t6101: two hosts. Two rxe-vm guests (tools/vm/ibvct-vm pair) on one
# virtual Ethernet segment (QEMU's socket netdev on 127.0.0.1), each with
# its own rxe0 on the distribution's kernel: Debian's unmodified
# ibv_rc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong and ibv_uc_pingpong,
# the servers in one guest, the clients in the other, over RoCE v2 (-g: the
# GID index of the guest's ::ffff:10.9.0.x GID). The client must reach the
# other guest's QPs (its remote GID is the server's address). Part of `make
# check` and of `make conformance TARGET=rxe-vm`. IBVCT_PP_ITERS (default
# 100) messages each.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
vm=$src/tools/vm/ibvct-vm
skip_all_unless_utils ibv_rc_pingpong

n=${IBVCT_PP_ITERS:-100}
mult=${IBVCT_TIMEOUT_MULT:-1}
progs='rc ud srq uc'
out=$tl_tmp/out
mkdir -p "$out"
# the servers at once, each on its port; the clients one after another.
# Each program under a time limit (the guest's IBVCT_TIMEOUT_MULT has the
# TCG factor), its output and status into the shared out dir.
{
	echo 'lim=$((120 * ${IBVCT_TIMEOUT_MULT:-1}))'
	echo 'out=$1 n=$2 port=18515'
	echo 'for p in rc ud srq uc; do'
	echo '	timeout "$lim" ibv_${p}_pingpong -g "$IBVCT_VM_GID" -n "$n" -p "$port" \'
	echo '		>"$out/$p.server" 2>&1 &'
	echo '	eval "pid_$p=\$!"'
	echo '	port=$((port + 1))'
	echo 'done'
	echo 'for p in rc ud srq uc; do'
	echo '	eval "wait \$pid_$p"; echo $? >"$out/$p.server.rc"'
	echo 'done'
} >"$tl_tmp/server.sh"
{
	echo 'lim=$((120 * ${IBVCT_TIMEOUT_MULT:-1}))'
	echo 'out=$1 n=$2 port=18515'
	echo 'for p in rc ud srq uc; do'
	echo '	timeout "$lim" ibv_${p}_pingpong -g "$IBVCT_VM_GID" -n "$n" -p "$port" "$IBVCT_VM_PEER" \'
	echo '		>"$out/$p.client" 2>&1'
	echo '	echo $? >"$out/$p.client.rc"'
	echo '	port=$((port + 1))'
	echo 'done'
} >"$tl_tmp/client.sh"

start=$(date +%s)
run_cmd sh "$vm" pair --out "$out" --result "$tl_tmp/result" --timeout 600 \
	--ready-port 18515,18516,18517,18518 \
	--server "sh $tl_tmp/server.sh $out $n" --client "sh $tl_tmp/client.sh $out $n"
secs=$(($(date +%s) - start))
# No result (a guest at its limit, a panic, a lost rxe0): the conformance
# run (IBVCT_VM_NORESULT, its no-result.txt) says so, with the consoles.
if rc_is 125 && [ -n "${IBVCT_VM_NORESULT:-}" ]; then
	echo "two guests (t6101): $(sed -n 's/^reason=//p' "$tl_tmp/result")" >>"$IBVCT_VM_NORESULT"
	for g in server client; do
		c=$(sed -n "s/^console\.$g=//p" "$tl_tmp/result")
		[ -f "$c" ] && cp "$c" "$(dirname "$IBVCT_VM_NORESULT")/console-$g.txt"
	done
fi
test_expect_success 'both guests gave a result, both commands exited 0' '
	cat "$tl_tmp/result" 2>/dev/null
	rc_is 0 && grep -qx "result=ok" "$tl_tmp/result"
'
for p in $progs; do
	test_expect_success "ibv_${p}_pingpong -g GID -n $n: server in guest 10.9.0.1, client in guest 10.9.0.2 over RoCE v2" '
		s=$out/$p.server c=$out/$p.client
		{ echo "server exit $(cat "$s.rc" 2>/dev/null):"; cat "$s" 2>/dev/null
		  echo "client exit $(cat "$c.rc" 2>/dev/null):"; cat "$c" 2>/dev/null; } | head -n 40
		[ "$(cat "$s.rc" 2>/dev/null)" = 0 ] && [ "$(cat "$c.rc" 2>/dev/null)" = 0 ] &&
		grep -Eq "^[0-9]+ bytes in [0-9.]+ seconds" "$s" &&
		grep -Eq "^[0-9]+ bytes in [0-9.]+ seconds" "$c" &&
		grep -q "local address: .*GID ::ffff:10.9.0.2" "$c" &&
		grep -q "remote address: .*GID ::ffff:10.9.0.1" "$c"
	'
done
acc=$(sed -n 's/^accelerator=//p' "$tl_tmp/result" 2>/dev/null)
test_note "two guests ($acc), four pingpongs of $n messages: $secs s, boots included"
test_done
