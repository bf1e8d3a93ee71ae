# SPDX-License-Identifier: MIT
# The host's side of a wire test between two rxe-vm guests of one
# `ibvct-vm pair` (t6130, t6150, t6151; the guests' side is
# wire-pair-lib.sh):
# sourced by the test once testkit/sh/test-lib.sh is, with vm (the path
# of tools/vm/ibvct-vm), out (the out dir the guests share) and tl_tmp
# set. Owns the pair's one boot and its first verdict: both guests gave a
# result and both side scripts exited 0; a pair with no result (no
# accelerator, no image) is named in IBVCT_VM_NORESULT with its reason.

# wp_pair WHAT TIMEOUT READY_PORT SERVER_CMD CLIENT_CMD: the pair (WHAT
# names the test in IBVCT_VM_NORESULT), its result in $tl_tmp/result, the
# guests' logs $out/rxe.log and $out/ref.log shown by its check
wp_pair() {
	run_cmd sh "$vm" pair --no-pool --out "$out" --result "$tl_tmp/result" --timeout "$2" \
		--ready-port "$3" --server "$4" --client "$5"
	if rc_is 125 && [ -n "${IBVCT_VM_NORESULT:-}" ]; then
		echo "$1: $(sed -n 's/^reason=//p' "$tl_tmp/result")" >>"$IBVCT_VM_NORESULT"
	fi
	test_expect_success 'both guests gave a result, both side scripts exited 0' '
		cat "$tl_tmp/result" "$out/rxe.log" "$out/ref.log" 2>/dev/null
		rc_is 0 && grep -qx "result=ok" "$tl_tmp/result"
	'
	test_note "the pair: $(grep -E "^(accelerator|seconds)=" "$tl_tmp/result" 2>/dev/null | tr "\n" " ")"
}
