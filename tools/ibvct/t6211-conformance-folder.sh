#!/bin/sh
# SPDX-License-Identifier: MIT
# t6211: a report folder describes one run, and its output reads whole.
# `ibvct conformance --out DIR` into a folder that holds an earlier report
# is refused (exit 2, nothing of it changed); --replace empties it first,
# and the new report (fingerprint, summary, TAP) is the new run's alone;
# --replace never empties a folder that holds no report. The requirements
# that deviate are grouped by their reason, each reason whole (never cut)
# and once, in the output, the summary and on the page; and the suites'
# own known deviations (testkit/runner/th.c reads fixtures/expect/) reach the
# TAP whole, however long. A stand-in build tree keeps it fast (t6210's).
set -u
: "${IBVCT_SRC:?run through make check}" "${IBVCT_BUILD:?}" "${IBVCT_LIBDIR:?}" "${IBVCT_PROVIDER:?}"
. "$IBVCT_SRC/testkit/sh/test-lib.sh"
tmp=$tl_tmp
ibvct="sh $IBVCT_SRC/tools/ibvct/ibvct"
real_build=$IBVCT_BUILD

b=$tmp/build
mkdir -p "$b/bin" "$b/t" "$b/suites/ref" "$b/suites/system"
for f in "$IBVCT_BUILD"/bin/*; do ln -s "$f" "$b/bin/"; done
ln -s "$IBVCT_BUILD/lib" "$b/lib"
# two long reasons (over 300 characters), each shared by two requirements
r1="first reason: mlx5 kills the process that destroys a QP ibv_open_qp gave: mlx5_destroy_qp frees the doorbell record the opened QP never had, mlx5_free_db(ctx, NULL, ...) (rdma-core v44.0 providers/mlx5/verbs.c:2791), whose lookup returns the map's sentinel (providers/mlx5/dbrec.c:162, the assert compiled out) and writes through it: SIGSEGV; still so on rdma-core master (README.md, Findings)"
r2="second reason: rxe's RNR retry runs the done bind again with its old key, which fails (linux v6.1 drivers/infiniband/sw/rxe/rxe_req.c:52 req_retry, :703; rxe_mw.c:180); the requester in error never resends the SEND, and nothing completes: the test sees no completion at all within its limit, on any machine"
cat >"$b/suites/ref/t9299-tiny.t" <<EOF
#!/bin/sh
echo 1..5
echo "ok 1 - tiny_pass [XRCD-07]"
echo "not ok 2 - tiny_a [XRCD-10] # TODO $r1"
echo "not ok 3 - tiny_b [XRCD-11] # TODO $r1"
echo "not ok 4 - tiny_c [XRCD-13] # TODO $r2"
echo "not ok 5 - tiny_d [XRCD-15] # TODO $r2"
EOF
cp "$b/suites/ref/t9299-tiny.t" "$b/suites/system/t9299-tiny.t"
for t in t6010-ibv-devices t6011-ibv-devinfo t6030-rc-pingpong; do
	printf '#!/bin/sh\necho 1..1\necho "ok 1 - %s_stand_in"\n' "$t" >"$b/t/$t.t"
done
chmod +x "$b/suites/ref/t9299-tiny.t" "$b/suites/system/t9299-tiny.t" "$b/t/"*.t
export IBVCT_BUILD=$b
unset IBVCT_DEVICE IBVCT_SANITIZE IBVCT_VALGRIND
dir=$tmp/run

# ---- one run, one folder ---------------------------------------------------------
run_cmd $ibvct conformance --out "$dir"
cp "$tl_out" "$tmp/first.out"
test_expect_success "a first run into a new folder: PASS" 'rc_is 0 && [ -s "$dir/summary.txt" ]'
date1=$(sed -n 's/^date=//p' "$dir/fingerprint.txt")
echo "a file of the earlier run" >"$dir/mine.txt"
ls -R "$dir" >"$tmp/before"
run_cmd $ibvct conformance --out "$dir"
test_expect_success "a second run into the same folder is refused, and changes nothing in it" '
	rc_is 2 && err_has "holds an earlier report.*--replace" &&
	ls -R "$dir" | diff "$tmp/before" - && [ -f "$dir/mine.txt" ] &&
	grep -qx "date=$date1" "$dir/fingerprint.txt"
'
sleep 1	# a new date in the fingerprint
run_cmd $ibvct conformance --out "$dir" --replace
test_expect_success "--replace: the folder holds the new run alone" '
	rc_is 0 && [ ! -e "$dir/mine.txt" ] &&
	date2=$(sed -n "s/^date=//p" "$dir/fingerprint.txt") && echo "dates: $date1, $date2" &&
	[ -n "$date2" ] && [ "$date2" != "$date1" ] &&
	grep -q "^command=ibvct conformance --out $dir --replace\$" "$dir/run.txt"
'
mkdir -p "$tmp/notareport"
echo keep >"$tmp/notareport/precious.txt"
run_cmd $ibvct conformance --out "$tmp/notareport" --replace
test_expect_success "--replace does not empty a folder that holds no report" '
	rc_is 2 && err_has "holds no report" && [ -f "$tmp/notareport/precious.txt" ]
'

# ---- the deviations by reason, whole ------------------------------------------------
out=$tmp/first.out
test_expect_success "the output groups the known deviations by reason: each once, whole, with its IDs" '
	sed -n "/^known deviation:/,/^[a-z]/p" "$out"
	grep -q "^known deviation: 4 requirements, 2 reasons:\$" "$out" &&
	[ "$(grep -cxF "  - $r1" "$out")" = 1 ] && [ "$(grep -cxF "  - $r2" "$out")" = 1 ] &&
	grep -A1 -xF "  - $r1" "$out" | grep -qx "    XRCD-10 XRCD-11" &&
	grep -A1 -xF "  - $r2" "$out" | grep -qx "    XRCD-13 XRCD-15"
'
test_expect_success "the summary has the same, and each requirement with its tests, the reason not again" '
	[ "$(grep -cF "$r1" "$dir/summary.txt")" = 1 ] &&
	grep -q "^  XRCD-10  *t9299-tiny\.ref-extended-current: tiny_a, " "$dir/summary.txt"
'
test_expect_success "the page holds each reason whole" '
	grep -qF "$(printf "%s" "$r1" | sed "s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/\"/\&quot;/g")" "$dir/index.html" &&
	grep -qF "$(printf "%s" "$r2" | sed "s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/\"/\&quot;/g")" "$dir/index.html"
'
test_expect_success "the output ends with the page and the verdict line" '
	tail -n 2 "$out" | head -n 1 | grep -q "^page:    $dir/index.html\$" &&
	tail -n 1 "$out" | grep -q "^PASS: 12 programs, 0 failed; mandatory [0-9]*: 4 known deviation, 1 pass, [0-9]* not run — $dir\$"
'

# ---- the suites' own reasons reach the TAP whole -------------------------------------
# t2100 on the mlx5 profile: its known deviations are fixtures/expect/mlx5.txt's
printf 'mode extended\nlifetime current\nprofile mlx5\ndevice fake0\n\tcap xrc\n\tport 1 state active\n' >"$tmp/mlx5.fps"
IBVCT_SCRIPT=$tmp/mlx5.fps "$real_build/suites/ref/t2100-xrc-create.t" >"$tmp/t2100.tap" 2>"$tmp/t2100.err"
grep "# TODO " "$tmp/t2100.tap" >"$tmp/todo" || :
test_expect_success "every TODO of the suite carries its expectation line whole (some are past 300 characters)" '
	n=0 long=0
	while IFS= read -r l; do
		name=$(echo "$l" | sed "s/^not ok [0-9]* - \([a-z0-9_]*\) .*/\1/")
		why=${l#* \# TODO }
		want=$(grep "^$name\(@[a-z]*\)\{0,1\} TODO " "$IBVCT_SRC/fixtures/expect/mlx5.txt" | head -n 1 | sed "s/^[^ ]* TODO //")
		[ "$why" = "$want" ] || { echo "$name: TAP: $why"; echo "$name: file: $want"; exit 1; }
		n=$((n + 1))
		[ ${#why} -gt 300 ] && long=$((long + 1))
	done <"$tmp/todo"
	echo "$n TODOs, $long past 300 characters"
	[ "$n" -ge 5 ] && [ "$long" -ge 1 ]
'
test_done
