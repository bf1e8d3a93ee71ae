#!/bin/sh
# SPDX-License-Identifier: MIT
# t5102: every quirk in fp_quirks.def makes at least one test of t5100/t5101
# fail, so those tests are known to be able to fail (STYLE: "every check can
# fail"). A quirk no test notices is reported as not ok.
set -u
src=${IBVCT_SRC:?IBVCT_SRC not set}
build=${IBVCT_BUILD:?IBVCT_BUILD not set}
. "$src/ci/test-lib.sh"
def="$src/fake-provider/script/fp_quirks.def"
tmp=$tl_tmp

# Under the sanitizers a leak check per test (the runner's) is not what this
# asks, and it could stand in for the rule a quirk breaks; the plain runs of
# the same programs check for leaks (and it halves the time under ASan).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

quirks=$(sed -n 's/^FP_QUIRK([A-Z0-9_]*,[[:space:]]*"\([a-z0-9_]*\)".*/\1/p' "$def")
[ -n "$quirks" ] || test_bail "no quirks found in $def"

# suite_fails SCRIPT: how many conformance suite tests fail (TODO aside) under
# SCRIPT, stopping at the first suite that fails any
suite_fails() {
	sf=0
	for sf_s in "$build"/suites/ref/t*.t; do
		[ -x "$sf_s" ] && [ "$sf" -eq 0 ] || continue
		c=$(TMPDIR="$tmp" IBVCT_SCRIPT="$1" "$sf_s" 2>/dev/null |
			grep '^not ok' | grep -vc '# TODO')
		sf=$((sf + c))
	done
	echo "$sf"
}

for q in $quirks; do
	printf 'device fake0\n\tcap xrc\nquirk %s\n' "$q" > "$tmp/$q.fps"
	# the unit programs in turn, up to the first that notices the quirk (one
	# is enough, and each runs every test in a process of its own)
	fails=0
	for t in t5100-datapath t5101-objects t5104-new-api; do
		[ "$fails" -eq 0 ] || break
		out=$(TMPDIR="$tmp" "$build/t/$t.t" "$tmp/$q.fps" 2>/dev/null)
		c=$(printf '%s\n' "$out" | grep -c '^not ok')
		fails=$((fails + c))
		if printf '%s\n' "$out" | grep -q '^Bail out!'; then
			fails=-1000
		fi
	done
	# the conformance suites (suites/, issue 4) catch the quirks added for
	# them (only asked when t5100/t5101 noticed nothing: time); t7100
	# checks which test each one breaks
	[ "$fails" -eq 0 ] && fails=$(suite_fails "$tmp/$q.fps")
	# a quirk of the seed lifetime model only (leftover_drops_domain) has
	# nothing to break under the default one: the suites again, seed
	if [ "$fails" -eq 0 ]; then
		printf 'lifetime seed\ndevice fake0\n\tcap xrc\nquirk %s\n' "$q" > "$tmp/$q-seed.fps"
		fails=$(suite_fails "$tmp/$q-seed.fps")
	fi
	# a kernel rule that libibverbs' command layer checks first (QPX-05)
	# shows only past it: with a skip_cmd_* quirk it must fail more than
	# that quirk alone
	with=
	if [ "$fails" -eq 0 ]; then
		for s in $quirks; do
			case $s in skip_cmd_*) ;; *) continue ;; esac
			printf 'device fake0\n\tcap xrc\nquirk %s\n' "$s" > "$tmp/$s.only.fps"
			printf 'device fake0\n\tcap xrc\nquirk %s\nquirk %s\n' "$s" "$q" > "$tmp/$q+$s.fps"
			# what the skip_cmd_* quirk fails alone, once for all quirks
			[ -f "$tmp/$s.base" ] || suite_fails "$tmp/$s.only.fps" >"$tmp/$s.base"
			base=$(cat "$tmp/$s.base")
			both=$(suite_fails "$tmp/$q+$s.fps")
			if [ "$both" -gt "$base" ]; then
				fails=$((both - base)) with=" past $s"
				break
			fi
		done
	fi
	# a quirk of one driver profile (rxe_has_xrc) has nothing to break
	# under strict: the suites under each driver profile
	for p in rxe mlx5 mlx4; do
		[ "$fails" -eq 0 ] || break
		printf 'profile %s\ndevice fake0\n\tcap xrc\nquirk %s\n' "$p" "$q" > "$tmp/$q-$p.fps"
		fails=$(suite_fails "$tmp/$q-$p.fps")
	done
	if [ "$fails" -gt 0 ]; then
		name="quirk $q fails $fails test(s)$with"
	else
		name="quirk $q fails no test (or the script was refused)"
	fi
	test_expect_success "$name" '
		echo "no test noticed it (t5100, t5101; the suites: default, seed lifetime, past each skip_cmd_* quirk, each driver profile): $fails"
		[ "$fails" -gt 0 ]
	'
done
test_done
