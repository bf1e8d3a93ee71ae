#!/bin/sh
# SPDX-License-Identifier: MIT
# t6011: Debian's unmodified /usr/bin/ibv_devinfo runs on the reference
# target through ibvct-run (binary compatibility): plain, -v and -d, with the
# default and a two-device script; the scripted names, node GUIDs, port
# states and device limits appear in its output; libibverbs.so.1 resolves to
# our library; a bad script gives no device and file:line on stderr.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
skip_all_unless_utils ibv_devinfo
setup_ibvct_run

two=$tl_tmp/two-devices.script
cat >"$two" <<'SCRIPT'
# t6011: two devices; fake1 has scripted limits and a second, down port
mode extended
device fake0
	guid 0x0002c90300a1b2c3
	cap xrc
	port 1 state active
device fake1
	guid 0002:c903:00d4:e5f6
	cap xrc
	attr max_qp 4242
	attr max_qp_wr 777
	attr max_srq 99
	attr fw_ver 9.8.7
	port 1 state active lid 0x21
	port 2 state down
SCRIPT
bad=$tl_tmp/bad.script
printf '# broken on line 4\nmode extended\ndevice fake0\n\tattr max_qp lots\n' >"$bad"

# field VALUE-REGEX: a "name:<tabs>value" line of ibv_devinfo's output
field() { out_has "^[[:space:]]+$1:[[:space:]]+$2\$"; }
# section DEV: keep only device DEV's block of $tl_out
section() {
	awk -v d="$1" '/^hca_id:/ { on = ($2 == d) } on' "$tl_out" >"$tl_tmp/sec" &&
		mv "$tl_tmp/sec" "$tl_out"
}

# ---- default script -------------------------------------------------------
run_in - /usr/bin/ibv_devinfo
test_expect_success "default: ibv_devinfo exits 0" 'rc_is 0'
test_expect_success "default: one device, hca_id fake0" '
	out_has "^hca_id:[[:space:]]+fake0\$" && [ "$(out_count "^hca_id:")" = 1 ]
'
test_expect_success "default: node_guid printed as xxxx:xxxx:xxxx:xxxx" \
	'field node_guid "[0-9a-f]{4}(:[0-9a-f]{4}){3}"'
test_expect_success "default: one port" 'field phys_port_cnt 1'
test_expect_success "default: port 1 is PORT_ACTIVE (4)" 'field state "PORT_ACTIVE \\(4\\)"'
test_expect_success "default: port 1 link layer InfiniBand" 'field link_layer InfiniBand'

run_in - /usr/bin/ibv_devinfo -v
test_expect_success "default -v: exits 0" 'rc_is 0'
test_expect_success "default -v: device limits printed (max_qp > 0)" 'field max_qp "[1-9][0-9]*"'
test_expect_success "default -v: GID[0] is the link-local fe80::/64 address" '
	out_has "GID\\[[[:space:]]*0\\]:[[:space:]]+fe80:0000:0000:0000:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}"
'

run_in - /usr/bin/ibv_devinfo -d fake0
test_expect_success "-d fake0: exits 0 and shows fake0" 'rc_is 0 && out_has "^hca_id:[[:space:]]+fake0\$"'

# ---- two devices ----------------------------------------------------------
run_in "$two" /usr/bin/ibv_devinfo
test_expect_success "two devices: both listed" '
	rc_is 0 && out_has "^hca_id:[[:space:]]+fake0\$" && out_has "^hca_id:[[:space:]]+fake1\$" &&
	[ "$(out_count "^hca_id:")" = 2 ]
'

run_in "$two" /usr/bin/ibv_devinfo -d fake0
test_expect_success "two devices, -d fake0: only fake0" '
	rc_is 0 && [ "$(out_count "^hca_id:")" = 1 ] && out_has "^hca_id:[[:space:]]+fake0\$"
'
test_expect_success "two devices, -d fake0: scripted node GUID" 'field node_guid 0002:c903:00a1:b2c3'

run_in "$two" /usr/bin/ibv_devinfo -v -d fake1
test_expect_success "two devices, -v -d fake1: exits 0, only fake1" '
	rc_is 0 && [ "$(out_count "^hca_id:")" = 1 ] && out_has "^hca_id:[[:space:]]+fake1\$"
'
test_expect_success "fake1: scripted node GUID" 'field node_guid 0002:c903:00d4:e5f6'
test_expect_success "fake1: scripted fw_ver" 'field fw_ver 9.8.7'
test_expect_success "fake1: scripted max_qp 4242" 'field max_qp 4242'
test_expect_success "fake1: scripted max_qp_wr 777 and max_srq 99" 'field max_qp_wr 777 && field max_srq 99'
test_expect_success "fake1: two ports, port 1 PORT_ACTIVE with LID 0x0021, port 2 PORT_DOWN (1)" '
	field phys_port_cnt 2 && [ "$(out_count "state:[[:space:]]+PORT_ACTIVE \\(4\\)")" = 1 ] &&
	[ "$(out_count "state:[[:space:]]+PORT_DOWN \\(1\\)")" = 1 ] && field port_lid 33
'

run_in "$two" /usr/bin/ibv_devinfo -v
section fake0
test_expect_success "fake0's limits are its own (max_qp is not fake1's 4242)" '
	field max_qp "[1-9][0-9]*" && ! field max_qp 4242
'

# ---- which library --------------------------------------------------------
run_plain - ldd /usr/bin/ibv_devinfo
test_expect_success "ldd: libibverbs.so.1 resolves to the build's library" 'ldd_uses_ours'

run_in - env LD_DEBUG=libs /usr/bin/ibv_devinfo
test_expect_success "LD_DEBUG=libs: our library and plugin initialised, no system verbs code" \
	'ld_debug_uses_ours'

# ---- a bad script ---------------------------------------------------------
run_in "$bad" /usr/bin/ibv_devinfo
test_expect_success "bad script: no device shown" '! out_has "^hca_id:"'
test_expect_success "bad script: the reason on stderr as file:line" 'err_has "bad\\.script:4: "'

test_done
