#!/bin/sh
# SPDX-License-Identifier: MIT
# t6060: the verbs request generator (tools/verbs-gen/ibvct-verbs-gen.c)
# and its compare tool (ibvct-verbs-cmp). The generator, built against the
# system's libibverbs, runs on the reference target under each driver
# profile (strict, mlx5, mlx4, rxe) with a fixed seed: every request gets an
# outcome, a run repeats exactly and a slice (--from) is the same lines.
# Then issue 25's rule: the default device is no stricter than every real
# driver, i.e. a request that the mlx5, mlx4 and rxe profiles all accept is
# accepted under strict, unless tools/verbs-gen/strict-exceptions.txt
# cites a libibverbs check for it. The rule can fail: a strict device with
# a planted refusal (every create_ah fails with EINVAL, a fault of the script)
# turns it red, naming the request and the four outcomes; an exception
# line for it turns it green again. The compare mode finds the lines two
# profiles answer differently and is silent for two equal runs, alone and
# as `ibvct run --compare` (tools/verbs-gen/ibvct-run-compare).
# And profile rxe against Debian 12's rxe0 as recorded in the rxe-vm guest
# (fixtures/verbs-gen/rxe0-debian12-seed1.txt, seed 1): no difference at
# all (no allow-list), which profile mlx5 against the same recording
# breaks. Both recordings are Debian 12's, so the reference plays rdma-core
# 44 for them (a script's `rdma-core 44` line) on a host of either release.
# The post set (--set post: every builder of the new post-send API) under
# the four profiles: each request gets an outcome, none crashes (issue 35:
# ibv_wr_atomic_write under profile rxe killed the process), and
# atomic write completes as each release's rxe completes it (6.1:
# LOC_QP_OP_ERR; 6.12 executes it); and profile rxe playing 44 answers
# the post set as Debian 12's rxe0 did (fixtures/verbs-gen/
# rxe0-debian12-post-seed1.txt, requests written for 44's header), which
# profile mlx5 does not.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
: "${IBVCT_BUILD:=$(dirname "$here")}" "${IBVCT_SRC:=$(dirname "$(dirname "$here")")}"
. "$IBVCT_SRC/testkit/sh/test-lib.sh"
RUN=$IBVCT_BUILD/bin/ibvct-run
GEN=$IBVCT_BUILD/bin/ibvct-verbs-gen
CMP=$IBVCT_SRC/tools/verbs-gen/ibvct-verbs-cmp
EXC=$IBVCT_SRC/tools/verbs-gen/strict-exceptions.txt
TMPDIR=$tl_tmp
export TMPDIR
SEED=25
COUNT=${IBVCT_VERBS_GEN_COUNT:-4000}
[ -x "$GEN" ] || test_bail "no $GEN (make tests)"

# script PROFILE [LINE]: one RoCE device with XRC (rxe drops it), played
# by PROFILE, and LINE (a fault, say)
script() {
	printf 'profile %s\ndevice dev0\n\tcap xrc\n\tport 1 state active link_layer ethernet\n%s\n' \
		"$1" "${2:-}" >"$tl_tmp/$1$3.fps"
}
# gen NAME SCRIPT ARGS...: the generator on the reference target
gen() {
	g_name=$1 g_script=$2
	shift 2
	env ${IBVCT_PRELOAD:+LD_PRELOAD=$IBVCT_PRELOAD} "$RUN" --private --script "$g_script" -- \
		"$GEN" "$@" >"$tl_tmp/$g_name.out" 2>"$tl_tmp/$g_name.err"
	echo $? >"$tl_tmp/$g_name.rc"
}

for p in strict mlx5 mlx4 rxe; do
	script $p "" ""
	gen $p "$tl_tmp/$p.fps" --seed $SEED --count "$COUNT"
	test_expect_success "profile $p: $COUNT requests of seed $SEED, each with an outcome, exit 0" '
		cat "$tl_tmp/$p.err"
		[ "$(cat "$tl_tmp/$p.rc")" = 0 ] &&
		[ "$(grep -vc "^#" "$tl_tmp/$p.out")" = "$COUNT" ] &&
		! grep -v "^#" "$tl_tmp/$p.out" | grep -v " -> \(ok\|null errno=\|err \|ret=\|skip (\)"
	'
	test_note "profile $p: $(grep -c " -> ok" "$tl_tmp/$p.out") of $COUNT accepted"
done

gen again "$tl_tmp/strict.fps" --seed $SEED --count "$COUNT"
gen slice "$tl_tmp/strict.fps" --seed $SEED --from 1000 --count 50
test_expect_success "a run repeats line for line; --from 1000 --count 50 is the same 50 lines" '
	cmp "$tl_tmp/strict.out" "$tl_tmp/again.out" &&
	grep -v "^#" "$tl_tmp/slice.out" >"$tl_tmp/slice.lines" &&
	grep "^0010[0-4][0-9] " "$tl_tmp/strict.out" | diff - "$tl_tmp/slice.lines"
'
test_expect_success "every kind of request is generated" '
	for v in create_cq create_cq_ex create_srq create_srq_ex create_qp create_qp_ex \
		modify_qp reg_mr rereg_mr alloc_mw bind_mw create_ah query_device query_port \
		query_gid query_pkey query_qp query_srq; do
		grep -q "^[0-9]* $v " "$tl_tmp/strict.out" || { echo "no $v"; exit 1; }
	done
'

run_cmd sh "$CMP" --strict-rule --exceptions "$EXC" "$tl_tmp/strict.out" "$tl_tmp/mlx5.out" \
	"$tl_tmp/mlx4.out" "$tl_tmp/rxe.out"
test_expect_success "strict is no stricter than mlx5, mlx4 and rxe together (issue 25)" '
	cat "$tl_out" "$tl_err"; rc_is 0 && out_has "^[1-9][0-9]* requests all three drivers accept: 0 refused"
'
test_note "$(tail -n 1 "$tl_out")"

# the rule can fail: a strict device that refuses every create_ah
script strict "fault create_ah from 1 errno EINVAL" -planted
gen planted "$tl_tmp/strict-planted.fps" --seed $SEED --count "$COUNT"
run_cmd sh "$CMP" --strict-rule --exceptions "$EXC" "$tl_tmp/planted.out" "$tl_tmp/mlx5.out" \
	"$tl_tmp/mlx4.out" "$tl_tmp/rxe.out"
test_expect_success "a planted strict-only refusal turns the rule red, naming the request and four outcomes" '
	cat "$tl_out"
	rc_is 1 && out_has "^[0-9]{6} create_ah port=1 " && out_has "^    strict: null errno=EINVAL" &&
	out_has "^    mlx5:   ok" && out_has "^    mlx4:   ok" && out_has "^    rxe:    ok"
'
{ cat "$EXC"; printf '^create_ah \tplanted: t6060 proves that a listed exception is honoured\n'; } \
	>"$tl_tmp/exc"
run_cmd sh "$CMP" --strict-rule --exceptions "$tl_tmp/exc" "$tl_tmp/planted.out" \
	"$tl_tmp/mlx5.out" "$tl_tmp/mlx4.out" "$tl_tmp/rxe.out"
test_expect_success "an exception line that matches the refused requests lets them pass" '
	cat "$tl_out"; rc_is 0 && out_has "0 refused under strict \([1-9][0-9]* by a listed"
'

run_cmd sh "$CMP" "$tl_tmp/strict.out" "$tl_tmp/again.out"
test_expect_success "compare: two equal runs, no difference, exit 0" '
	rc_is 0 && out_has "^compared $COUNT requests .*: 0 differ$"
'
run_cmd sh "$CMP" "$tl_tmp/rxe.out" "$tl_tmp/mlx5.out"
test_expect_success "compare: rxe against mlx5 differs (XRC, rereg_mr), each request with both outcomes, exit 1" '
	head -n 20 "$tl_out"
	rc_is 1 && out_has "^[0-9]{6} rereg_mr " && out_has "^    A: +skip \(open_xrcd: EOPNOTSUPP\)" &&
	out_has "^compared $COUNT requests .*: [1-9][0-9]* differ$"
'
run_cmd sh "$IBVCT_SRC/tools/ibvct/ibvct" run --compare --target "ref:$IBVCT_SRC/fixtures/scripts/rxe.fps" -- "$GEN" --seed $SEED --count 300
test_expect_success "ibvct run --compare: fixtures/scripts/rxe.fps against itself, exit 0" '
	cat "$tl_out" "$tl_err"; rc_is 0 && out_has "^A: ref .*, exit 0\$" && out_has ": 0 differ\$"
'
run_cmd sh "$IBVCT_SRC/tools/ibvct/ibvct" run --compare --target "ref:$tl_tmp/mlx5.fps" -- "$GEN" --seed $SEED --count 300
test_expect_success "ibvct run --compare: mlx5 against rxe, the differing requests, exit 1" '
	head -n 20 "$tl_out"; rc_is 1 && out_has "^    A: +ok" && out_has ": [1-9][0-9]* differ\$"
'
# profile rxe against Debian 12's rxe0, recorded (fixtures/verbs-gen/): every
# request gets the same answer; and
# the check can fail: profile mlx5 against the same recording
REC=$IBVCT_SRC/fixtures/verbs-gen/rxe0-debian12-seed1.txt
RCOUNT=$(grep -c "^[0-9]" "$REC")
{ echo "rdma-core 44"; cat "$IBVCT_SRC/fixtures/scripts/rxe.fps"; } >"$tl_tmp/rxe44.fps"
gen rxe0 "$tl_tmp/rxe44.fps" --seed 1 --count "$RCOUNT"
run_cmd sh "$CMP" "$REC" "$tl_tmp/rxe0.out"
test_expect_success "profile rxe answers $RCOUNT requests as Debian 12's rxe0 did, 0 differences" '
	cat "$tl_out"; rc_is 0 && out_has "^compared $RCOUNT requests .*: 0 differ"
'
script mlx5 "" -eth
{ echo "rdma-core 44"; sed "s/^device dev0/device rxe0/" "$tl_tmp/mlx5-eth.fps"; } >"$tl_tmp/mlx5-rxe0.fps"
gen mlx5rec "$tl_tmp/mlx5-rxe0.fps" --seed 1 --count "$RCOUNT"
run_cmd sh "$CMP" "$REC" "$tl_tmp/mlx5rec.out"
test_expect_success "the recording check can fail: profile mlx5 against rxe0's answers differs" '
	rc_is 1 && out_has "^compared $RCOUNT requests .*: [1-9][0-9]* differ"
'

# ---- the post set ----------------------------------------------------------
PCOUNT=${IBVCT_VERBS_GEN_POST_COUNT:-400}
for p in strict mlx5 mlx4 rxe; do
	gen post-$p "$tl_tmp/$p.fps" --set post --seed $SEED --count "$PCOUNT"
	test_expect_success "post set, profile $p: $PCOUNT requests, each with an outcome, none a crash, exit 0" '
		cat "$tl_tmp/post-$p.err"
		[ "$(cat "$tl_tmp/post-$p.rc")" = 0 ] &&
		[ "$(grep -vc "^#" "$tl_tmp/post-$p.out")" = "$PCOUNT" ] &&
		! grep -v "^#" "$tl_tmp/post-$p.out" |
			grep -v " -> \(complete=\|abort\|create null errno=\|skip (\)"
	'
done
cat "$tl_tmp"/post-*.out >"$tl_tmp/post-all"
test_expect_success "post set: every builder of struct ibv_qp_ex is used (ATOMIC_WRITE, FLUSH: rxe only)" '
	for b in send send_imm send_inv rdma_write rdma_write_imm rdma_read atomic_cmp_swp \
		atomic_fetch_add atomic_write "sge=" "sge_list=" "inline=" "inline_list=" \
		"local=bind_mw" "local=bind_mw,local_inv" "local=local_inv"; do
		grep -q -- "[| ]$b" "$tl_tmp/post-all" || { echo "no $b"; exit 1; }
	done
	grep -q "type=UD .*| send.* -> complete=0 wc=SUCCESS" "$tl_tmp/post-strict.out" || { echo "no UD send"; exit 1; }
	if grep -q "^# set post headers rdma-core \(4[5-9]\|[5-9][0-9]\)" "$tl_tmp/post-strict.out"; then
		grep -q "| flush type=" "$tl_tmp/post-rxe.out" || { echo "no flush"; exit 1; }
	else
		grep -q "post_ex flush -> skip (no ibv_wr_flush" "$tl_tmp/post-strict.out"
	fi
'
# atomic write on rxe, by release (ibvct-release.def ATOMIC_WRITE): the
# crash of issue 35 was here
for rel in 44 56; do
	{ echo "rdma-core $rel"; cat "$tl_tmp/rxe.fps"; } >"$tl_tmp/rxe-$rel.fps"
	gen aw-$rel "$tl_tmp/rxe-$rel.fps" --set post --seed $SEED --count "$PCOUNT" --only wr_atomic_write
done
test_expect_success "profile rxe, rdma-core 44: ibv_wr_atomic_write on RC posts and completes LOC_QP_OP_ERR (Linux 6.1)" '
	cat "$tl_tmp/aw-44.err"; [ "$(cat "$tl_tmp/aw-44.rc")" = 0 ] &&
	grep -q "bad=none | atomic_write -> complete=0 wc=LOC_QP_OP_ERR .* a=ERR" "$tl_tmp/aw-44.out" &&
	! grep "atomic_write.*wc=SUCCESS\| -> crash" "$tl_tmp/aw-44.out"
'
test_expect_success "profile rxe, rdma-core 56: it stores its 8 bytes and completes SUCCESS (Linux 6.12)" '
	cat "$tl_tmp/aw-56.err"; [ "$(cat "$tl_tmp/aw-56.rc")" = 0 ] &&
	grep -q "bad=none | atomic_write -> complete=0 wc=SUCCESS/" "$tl_tmp/aw-56.out" &&
	! grep "bad=none | atomic_write.*LOC_QP_OP_ERR\| -> crash" "$tl_tmp/aw-56.out"
'

PREC=$IBVCT_SRC/fixtures/verbs-gen/rxe0-debian12-post-seed1.txt
PRCOUNT=$(grep -c "^[0-9]" "$PREC")
gen rxe0post "$tl_tmp/rxe44.fps" --set post --seed 1 --count "$PRCOUNT" --headers 44
run_cmd sh "$CMP" "$PREC" "$tl_tmp/rxe0post.out"
test_expect_success "post set: profile rxe playing 44 answers $PRCOUNT requests as Debian 12's rxe0 did, 0 differences" '
	cat "$tl_out"; rc_is 0 && out_has "^compared $PRCOUNT requests .*: 0 differ"
'
# Debian 13's rxe0 (Linux 6.12, rdma-core 56.1): the same program, built
# here; profile rxe playing 56 differs only where the list says why
PREC13=$IBVCT_SRC/fixtures/verbs-gen/rxe0-debian13-post-seed1.txt
PKNOWN13=$IBVCT_SRC/fixtures/verbs-gen/rxe0-debian13-post-known.txt
PRCOUNT13=$(grep -c "^[0-9]" "$PREC13")
{ echo "rdma-core 56"; cat "$IBVCT_SRC/fixtures/scripts/rxe.fps"; } >"$tl_tmp/rxe56.fps"
gen rxe0post13 "$tl_tmp/rxe56.fps" --set post --seed 1 --count "$PRCOUNT13" --headers 44
run_cmd sh "$CMP" "$PREC13" "$tl_tmp/rxe0post13.out"
grep -E "^[0-9]{6} " "$tl_out" | cut -d" " -f1 | sort >"$tl_tmp/differ13"
grep -E "^[0-9]{6}	" "$PKNOWN13" | cut -f1 | sort >"$tl_tmp/known13"
test_expect_success "post set: profile rxe playing 56 answers $PRCOUNT13 requests as Debian 13's rxe0 did, but for the $(wc -l <"$tl_tmp/known13") the list explains" '
	out_has "^compared $PRCOUNT13 requests " && [ -s "$tl_tmp/known13" ] &&
	{ diff "$tl_tmp/known13" "$tl_tmp/differ13" || { cat "$tl_out"; false; }; }
'
gen mlx5post "$tl_tmp/mlx5-rxe0.fps" --set post --seed 1 --count "$PRCOUNT" --headers 44
run_cmd sh "$CMP" "$PREC" "$tl_tmp/mlx5post.out"
test_expect_success "post set: the recording check can fail: profile mlx5 differs from rxe0" '
	rc_is 1 && out_has "^compared $PRCOUNT requests .*: [1-9][0-9]* differ"
'
test_done
