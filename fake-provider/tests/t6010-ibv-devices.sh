#!/bin/sh
# SPDX-License-Identifier: MIT
# t6010: Debian's unmodified /usr/bin/ibv_devices runs on the reference target
# through ibvct-run (COMPAT binary compatibility): it lists exactly the
# scripted devices with their node GUIDs, resolves libibverbs.so.1 to our
# library and loads our plugin, and with a bad script lists no device while
# the reason appears on stderr as file:line.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
skip_all_unless_utils ibv_devices
setup_ibvct_run

two=$tl_tmp/two-devices.script
cat >"$two" <<'SCRIPT'
# t6010: two devices with known GUIDs
device fake0
	guid 0x0002c90300a1b2c3
	cap xrc
	port 1 state active
device fake1
	guid 0002:c903:00d4:e5f6
	port 1 state active
	port 2 state down
SCRIPT
bad=$tl_tmp/bad.script
printf 'device fake0\n\tcap xrc\n\tport 1 state sideways\n' >"$bad"
# a device line of ibv_devices: name, blanks, 16 hex digits
devline='^[[:space:]]+[A-Za-z0-9_.-]+[[:space:]]+[0-9a-f]{16}$'

run_in - /usr/bin/ibv_devices
test_expect_success "default script: ibv_devices exits 0" 'rc_is 0'
test_expect_success "default script: exactly one device, fake0, with a 16-digit GUID" '
	out_has "^[[:space:]]+fake0[[:space:]]+[0-9a-f]{16}\$" && [ "$(out_count "$devline")" = 1 ]
'

run_in "$two" /usr/bin/ibv_devices
test_expect_success "two-device script: ibv_devices exits 0" 'rc_is 0'
test_expect_success "two-device script: fake0 with GUID 0002c90300a1b2c3" '
	out_has "^[[:space:]]+fake0[[:space:]]+0002c90300a1b2c3\$"
'
test_expect_success "two-device script: fake1 with GUID 0002c90300d4e5f6" '
	out_has "^[[:space:]]+fake1[[:space:]]+0002c90300d4e5f6\$"
'
test_expect_success "two-device script: no other device listed" '[ "$(out_count "$devline")" = 2 ]'

run_plain - ldd /usr/bin/ibv_devices
test_expect_success "ldd: libibverbs.so.1 resolves to the build's library" 'ldd_uses_ours'

run_in - env LD_DEBUG=libs /usr/bin/ibv_devices
test_expect_success "LD_DEBUG=libs: our library and our plugin initialised, no system verbs code" \
	'ld_debug_uses_ours'

run_in "$bad" /usr/bin/ibv_devices
test_expect_success "bad script: no device listed" '[ "$(out_count "$devline")" = 0 ]'
test_expect_success "bad script: the reason on stderr as file:line" 'err_has "bad\\.script:3: "'

test_done
