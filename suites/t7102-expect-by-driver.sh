#!/bin/sh
# SPDX-License-Identifier: MIT
# t7102: the suites pick fixtures/expect/<driver>.txt by the kernel driver
# bound to the device in sysfs (class/infiniband/DEV/device/driver), never
# by the device name, which udev renames (mlx5_0 -> rocep1s0f0, ibp1s0).
# The fake sysfs tree names the script profile's driver: a renamed mlx5
# device must load mlx5.txt (its known SRQX-05 deviation runs as TODO), in
# the ref build and in the system build run on ref-impl; a strict device
# named like an mlx5 must not; IBVCT_DRIVER overrides the lookup; a soft
# device without a driver link but with a parent netdev (rxe) loads rxe.txt,
# one with the node description of ibvct's soft XRC device loads ixrc.txt.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
TMPDIR=$tmp
export TMPDIR
ref=$build/suites/ref/t2100-xrc-create.t
sys=$build/suites/system/t2100-xrc-create.t
test=srq_reserved_mask_bit_fails_eopnotsupp

fps() {	# fps PROFILE DEVICE > file
	printf 'profile %s\ndevice %s\n\tcap xrc\n\tport 1 state active\n' "$1" "$2"
}

# expect NAME OUT RC KEY DRIVER-WORDS RESULT-PATTERN: the run into OUT
# exited RC = 0, loaded fixtures/expect/KEY.txt for DRIVER-WORDS, and OUT
# matches RESULT-PATTERN
expect() {
	out=$2 rc=$3 key=$4 words=$5 result=$6
	test_expect_success "$1" '
		echo "exit $rc"
		head -n 30 "$out"
		[ "$rc" = 0 ] && grep -q "^# expectations: fixtures/expect/$key\.txt ($words)\$" "$out" &&
			grep -q "$result" "$out"
	'
}
fps mlx5 rocep1s0f0 >"$tmp/mlx5-renamed.fps"
IBVCT_SCRIPT=$tmp/mlx5-renamed.fps "$ref" "$test" >"$tmp/o1" 2>&1
expect "ref: renamed mlx5 device rocep1s0f0 loads mlx5.txt; SRQX-05 is its known deviation" \
	"$tmp/o1" $? mlx5 "driver mlx5_core" "^not ok 1 - $test \[SRQX-05\] # TODO SRQX-05: mlx5"

env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$build/bin/ibvct-run" --private \
	--script "$tmp/mlx5-renamed.fps" -- "$sys" "$test" >"$tmp/o2" 2>&1
expect "system build on ref-impl: rocep1s0f0 loads mlx5.txt through sysfs" \
	"$tmp/o2" $? mlx5 "driver mlx5_core" "^not ok 1 - $test \[SRQX-05\] # TODO SRQX-05: mlx5"

fps mlx5 ibp1s0 >"$tmp/mlx5-ib.fps"
IBVCT_SCRIPT=$tmp/mlx5-ib.fps "$ref" "$test" >"$tmp/o3" 2>&1
expect "ref: renamed mlx5 device ibp1s0 loads mlx5.txt" \
	"$tmp/o3" $? mlx5 "driver mlx5_core" "^not ok 1 - $test .* # TODO"

# a name that looks like mlx5 on a device of another driver: its driver's file
fps strict mlx5_0 >"$tmp/strict-mlx5name.fps"
IBVCT_SCRIPT=$tmp/strict-mlx5name.fps "$ref" "$test" >"$tmp/o4" 2>&1
expect "ref: a strict device named mlx5_0 loads fake.txt, not mlx5.txt" \
	"$tmp/o4" $? fake "driver ibvct_fake" "^ok 1 - $test \[SRQX-05\]\$"

fps rxe rxe_eth0 >"$tmp/rxe.fps"
IBVCT_SCRIPT=$tmp/rxe.fps "$ref" "$test" >"$tmp/o5" 2>&1
expect "ref: an rxe device rxe_eth0 loads rxe.txt" \
	"$tmp/o5" $? rxe "no driver in sysfs, a parent netdev: rxe" "^ok 1 - $test \[SRQX-05\]\$"

IBVCT_DRIVER=mlx5 IBVCT_SCRIPT=$tmp/strict-mlx5name.fps "$ref" "$test" >"$tmp/o6" 2>&1
expect "IBVCT_DRIVER=mlx5 overrides the sysfs driver (a strict device: the TODO passes, reported fixed)" \
	"$tmp/o6" $? mlx5 "IBVCT_DRIVER" "^# $test: fixed: passes now"

# a soft device has no bound driver in sysfs, as rxe (the profile writes it
# so): its "parent" netdev attribute makes it rxe, whatever its name
envf=$tmp/env
"$build/bin/ibvct-run" --private --script "$tmp/rxe.fps" --print-env -- true >"$envf" 2>"$tmp/env.err"
scratch=$(sed -n 's/^# ibvct-run: scratch dir \([^ ]*\) .*/\1/p' "$tmp/env.err")
(
	. "$envf" &&
	[ ! -e "$SYSFS_PATH/class/infiniband/rxe_eth0/device" ] &&
	[ "$(cat "$SYSFS_PATH/class/infiniband/rxe_eth0/parent")" = eth0 ] &&
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$sys" "$test"
) >"$tmp/o7" 2>&1
expect "system build: rxe_eth0, no driver link but a parent netdev, loads rxe.txt" \
	"$tmp/o7" $? rxe "no driver in sysfs, a parent netdev: rxe" "^ok 1 - $test \[SRQX-05\]\$"
case $scratch in /*ibvct.*) rm -rf "$scratch" ;; esac

# ibvct's soft XRC device (ixrc) has neither a driver link nor
# a parent netdev: its node description makes it ixrc, whatever its name
fps strict ib7 >"$tmp/ixrc.fps"
"$build/bin/ibvct-run" --private --script "$tmp/ixrc.fps" --print-env -- true >"$envf" 2>"$tmp/env.err"
scratch=$(sed -n 's/^# ibvct-run: scratch dir \([^ ]*\) .*/\1/p' "$tmp/env.err")
(
	. "$envf" &&
	rm "$SYSFS_PATH/class/infiniband/ib7/device" &&
	echo "ibvct soft XRC device" >"$SYSFS_PATH/class/infiniband/ib7/node_desc" &&
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$sys" "$test"
) >"$tmp/o8" 2>&1
expect "system build: ib7, no driver link, the node description of ixrc, loads ixrc.txt" \
	"$tmp/o8" $? ixrc "no driver in sysfs, node_desc: ixrc" "^ok 1 - $test \[SRQX-05\]\$"
case $scratch in /*ibvct.*) rm -rf "$scratch" ;; esac
test_done
