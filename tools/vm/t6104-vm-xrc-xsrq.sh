#!/bin/sh
# SPDX-License-Identifier: MIT
# test-limit: 900
# t6104: XRC on the real stack. In an xrc-vm guest (tools/vm/ibvct-vm
# --target xrc-vm: Debian's kernel, its ib_core and ib_uverbs, ibvct's soft
# XRC device ixrc.ko, Debian's libibverbs loading our provider): Debian's
# unmodified ibv_devinfo shows ixrc0 with XRC and its port active, and
# Debian's unmodified ibv_xsrq_pingpong passes between a server process and
# a client process, then between a server and two clients (XRC SRQs shared
# by the server's target QPs), all on ixrc0; and the device's RC requester
# gives up after rnr_retry RNR retries (IBV_WC_RNR_RETRY_EXC_ERR) while
# rnr_retry 7 waits for the receive (ixrc/tests/ixrc-rnr.c).
#
# On the host (make check) it boots one guest for all of it, through
# `ibvct run --target xrc-vm` (which, without the module, says to make it);
# inside a guest that has ixrc0 (`make conformance TARGET=xrc-vm`,
# tools/vm/guest-conformance) it runs there directly. The module must be
# built (make kmod; the guest kernel's headers come from ci/install-deps
# kmod): without it this test fails saying so, it never skips.
# IBVCT_PP_ITERS (default 100) messages.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
. "$src/testkit/sh/test-lib.sh"

skip_all_unless_utils ibv_xsrq_pingpong
skip_all_unless_utils ibv_devinfo

dev=ixrc0
n=${IBVCT_PP_ITERS:-100}
ko=${IBVCT_XRC_KO:-$build/kmod/ixrc.ko}
prov=$build/lib/ixrc/libibvct-ixrc
rnr=$build/lib/ixrc/ixrc-rnr
out=$tl_tmp/out
mkdir -p "$out"

# The guest's part: each program's output and status into $out.
cat >"$tl_tmp/guest.sh" <<'EOF'
out=$1 n=$2 rnr=$3 dev=ixrc0
lim=$((120 * ${IBVCT_TIMEOUT_MULT:-1}))
listening() {
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -Eq ":$(printf '%04X' "$1") [0-9A-F:]+ 0A "
}
ibv_devinfo -d "$dev" -v >"$out/devinfo" 2>&1
echo $? >"$out/devinfo.rc"
# xsrq NAME PORT CLIENTS: a server for CLIENTS clients, then the clients
xsrq() {
	timeout "$lim" ibv_xsrq_pingpong -d "$dev" -n "$n" -p "$2" -c "$3" >"$out/$1.server" 2>&1 &
	spid=$!
	i=0
	while ! listening "$2" && kill -0 "$spid" 2>/dev/null && [ "$i" -lt $((lim * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	c=1
	while [ "$c" -le "$3" ]; do
		timeout "$lim" ibv_xsrq_pingpong -d "$dev" -n "$n" -p "$2" 127.0.0.1 >"$out/$1.client$c" 2>&1 &
		eval "cpid$c=\$!"
		c=$((c + 1))
	done
	c=1
	while [ "$c" -le "$3" ]; do
		eval "wait \$cpid$c"
		echo $? >"$out/$1.client$c.rc"
		c=$((c + 1))
	done
	wait "$spid"
	echo $? >"$out/$1.server.rc"
}
xsrq one 18530 1
xsrq two 18531 2
if [ -x "$rnr" ]; then
	timeout "$lim" "$rnr" "$dev" >"$out/rnr" 2>&1
	echo $? >"$out/rnr.rc"
fi
EOF

start=$(date +%s)
if [ "${IBVCT_VM:-0}" = 1 ] && [ -e "/sys/class/infiniband/$dev" ]; then
	where="this guest"
	run_cmd sh "$tl_tmp/guest.sh" "$out" "$n" "$rnr"
else
	where="an xrc-vm guest"
	test_expect_success "the module and its provider are built ($ko)" '
		[ -f "$ko" ] || echo "no $ko: make kmod (it needs the guest kernel'\''s headers: ci/install-deps kmod)"
		[ -f "$prov-rdmav34.so" ] || echo "no $prov-rdmav34.so: make"
		[ -f "$ko" ] && [ -f "$prov-rdmav34.so" ]
	'
	# without the module `ibvct run --target xrc-vm` says what to build
	run_cmd env IBVCT_XRC_KO="$tl_tmp/none/ixrc.ko" sh "$src/tools/ibvct/ibvct" run --target xrc-vm -- true
	test_expect_success 'ibvct run --target xrc-vm without the module: exit 2, it names make kmod' '
		rc_is 2 && err_has "no $tl_tmp/none/ixrc.ko \(in a checkout: make kmod"
	'
	if [ -f "$ko" ] && [ -f "$prov-rdmav34.so" ]; then
		# ibvct run: the module loaded and the provider found (tools/ibvct/ibvct
		# sets both from the build tree; tools/vm/ibvct-vm --target xrc-vm)
		IBVCT_XRC_KO=$ko RDMAV_DRIVERS=$prov
		export IBVCT_XRC_KO RDMAV_DRIVERS
		run_cmd sh "$src/tools/ibvct/ibvct" run --target xrc-vm -q \
			--out "$out" --result "$tl_tmp/result" --timeout 600 \
			-- sh "$tl_tmp/guest.sh" "$out" "$n" "$rnr"
		test_expect_success 'ibvct run --target xrc-vm: the guest gave a result (ixrc.ko loaded, the command ran)' '
			cat "$tl_tmp/result" 2>/dev/null
			grep -qx "result=ok" "$tl_tmp/result"
		'
	fi
fi

test_expect_success "ibv_devinfo -d $dev -v: the XRC capability, port 1 active" '
	cat "$out/devinfo" 2>/dev/null | head -n 60
	[ "$(cat "$out/devinfo.rc" 2>/dev/null)" = 0 ] &&
	grep -Eq "^hca_id:[[:space:]]+$dev$" "$out/devinfo" &&
	grep -Eq "^[[:space:]]+XRC$" "$out/devinfo" &&
	grep -q "PORT_ACTIVE" "$out/devinfo"
'
# pp NAME CLIENTS: the server and each client exited 0, saw its peer's XRC
# QP and SRQ numbers and said "success" (ibv_xsrq_pingpong's last line)
pp() {
	pp_name=$1 pp_n=$2
	test_expect_success "ibv_xsrq_pingpong -d $dev -n $n -c $2: one server process, $2 client process(es)" '
		ok=1
		c=0
		while [ "$c" -le "$pp_n" ]; do
			f=$out/$pp_name.client$c
			[ "$c" = 0 ] && f=$out/$pp_name.server
			echo "${f##*/}: exit $(cat "$f.rc" 2>/dev/null)"
			head -n 20 "$f" 2>/dev/null
			{ [ "$(cat "$f.rc" 2>/dev/null)" = 0 ] && grep -qx success "$f" &&
			  grep -Eq "remote: LID [0-9a-f]+, QPN RECV [0-9a-f]+ SEND [0-9a-f]+, PSN [0-9a-f]+, SRQN [0-9a-f]+" "$f"; } ||
				ok=0
			c=$((c + 1))
		done
		[ "$ok" = 1 ]
	'
}
pp one 1
pp two 2
if [ -x "$rnr" ]; then
	test_expect_success 'RC RNR retry: rnr_retry N ends in IBV_WC_RNR_RETRY_EXC_ERR, 7 waits for the receive' '
		cat "$out/rnr" 2>/dev/null
		[ "$(cat "$out/rnr.rc" 2>/dev/null)" = 0 ] && ! grep -q "^not ok" "$out/rnr" &&
		[ "$(grep -c "^ok " "$out/rnr")" -ge 4 ]
	'
else
	test_expect_success "ixrc-rnr is built ($rnr)" '
		echo "no $rnr: make"
		false
	'
fi
[ -s "$tl_tmp/result" ] && acc=$(sed -n 's/^accelerator=//p' "$tl_tmp/result") || acc=${IBVCT_VM_ACCEL:-}
test_note "in $where ($acc): $(($(date +%s) - start)) s"
test_done
