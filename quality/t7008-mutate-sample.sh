#!/bin/sh
# SPDX-License-Identifier: MIT
# t7008: quality/mutate (`make mutate`) on a sample. Every `/* @rule ID */`
# marker of the tree sits on a condition the tool can mutate and names a
# catalogue ID; a marker on a line without a condition is refused. Then the
# tool runs on two sites of SRQX-11 in a scratch copy of the tree: the real
# one (fabric.c's SRQ-number lookup, which the suites observe: killed) and a
# synthetic one added to the copy in a function nothing calls (no test can
# observe it: survived, one of its mutants waived). The table, result.tsv,
# the survivor's diff, the score, the stale waiver and the exit status are
# checked, and the source tree is left as it was.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
TMPDIR=$tmp
export TMPDIR
# The tool builds and runs suites itself; what make check set up for this
# test must not leak into those runs.
unset IBVCT_BUILD IBVCT_PROVIDER IBVCT_LIBDIR IBVCT_SCRIPT MAKEFLAGS MAKELEVEL MFLAGS
tab=$(printf '\t')

# ---- the markers of the tree ---------------------------------------------------
perl "$src/quality/mutate" --tree "$src" --list >"$tmp/list" 2>&1
rc=$?
test_expect_success "every @rule marker of the tree is on a mutable condition" '
	cat "$tmp/list"
	[ "$rc" = 0 ]
'
unknown=
for id in $(grep -E '^[A-Z]+-[0-9]+' "$tmp/list" | cut -d' ' -f1 | tr ',' '\n' | sort -u); do
	grep -q "^$id$tab" "$src/fixtures/requirements.txt" || unknown="$unknown $id"
done
test_expect_success "every marker names catalogue IDs ($(grep -cE "^[A-Z]+-[0-9]+" "$tmp/list") mutants listed)" '
	echo "not in the catalogue:$unknown"
	[ -z "$unknown" ]
'

mkdir -p "$tmp/bad/fake-provider/verbs" "$tmp/bad/suites"
: >"$tmp/bad/Makefile"
printf 'int f(int x)\n{\n\tx = 2;\t/* @rule SRQX-11 */\n\treturn x;\n}\n' >"$tmp/bad/fake-provider/verbs/a.c"
perl "$src/quality/mutate" --tree "$tmp/bad" --list >"$tmp/bad.out" 2>&1
rc=$?
test_expect_success "a marker on a line without a condition is refused with its place" '
	echo "exit $rc"; cat "$tmp/bad.out"
	[ "$rc" = 2 ] && grep -q "fake-provider/verbs/a.c:3: the marker is not on an if" "$tmp/bad.out"
'
# ---- a sample run in a scratch copy ---------------------------------------------
mkdir "$tmp/tree"
for e in "$src"/* "$src"/.ci; do
	[ -e "$e" ] || continue
	case ${e##*/} in build*|reports) continue ;; esac
	cp -a "$e" "$tmp/tree/"
done
cat >>"$tmp/tree/fake-provider/engine/registry.c" <<'EOF'

/* t7008: a rule site in a function nothing calls; no test can observe it. */
int fp__mutate_probe(int x);
int fp__mutate_probe(int x)
{
	if (x > 1)	/* @rule SRQX-11 */
		return EBUSY;
	return 0;
}
EOF
real=$(grep -n '@rule SRQX-11 ' "$src/fake-provider/engine/registry.c" | head -n 1 | cut -d: -f1)
syn=$(grep -n '@rule SRQX-11 ' "$tmp/tree/fake-provider/engine/registry.c" | tail -n 1 | cut -d: -f1)
printf '# waivers for t7008\nSRQX-11 fake-provider/engine/registry.c:%s errno never called, so any errno is the same\nSRQX-11 fake-provider/engine/registry.c:1 drop matches nothing\n' \
	"$syn" >"$tmp/waivers"
sum_before=$(cksum <"$src/fake-provider/engine/registry.c")
env -u SANITIZE -u COVERAGE -u LD_PRELOAD -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS \
	perl "$src/quality/mutate" --tree "$tmp/tree" --out "$tmp/out" --only SRQX-11 --jobs 1 \
	--waivers "$tmp/waivers" >"$tmp/log" 2>"$tmp/err"
rc=$?
test_expect_success "the run exits 1: the score is under the default minimum of 100%" '
	echo "exit $rc"; tail -n 40 "$tmp/log" "$tmp/err"
	[ "$rc" = 1 ]
'

row() {	# row SITE-LINE OPERATOR RESULT: that line in the printed table
	grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$1 +$2 +.+ $3\$" "$tmp/log"
}
# the checks of the printed table show it when they fail
table() { grep -E '^(ID|SRQX-11) ' "$tmp/log"; }
test_expect_success "the table has its header: ID site operator change result" '
	table
	grep -Eq "^ID +site +operator +change +result\$" "$tmp/log"
'
test_expect_success "the real site's mutants are killed (drop, cmp1)" '
	table
	grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$real +drop +condition -> 0 +killed\$" "$tmp/log" &&
		grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$real +cmp1 +== -> != +killed\$" "$tmp/log"
'
test_expect_success "the unobserved site's mutants survive (drop, cmp1: > -> >=)" '
	table
	grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$syn +drop +condition -> 0 +survived\$" "$tmp/log" &&
		grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$syn +cmp1 +> -> >= +survived\$" "$tmp/log"
'
test_expect_success "the waived mutant is shown as waived (errno: EBUSY -> EINVAL)" '
	table
	row "$syn" errno waived
'
test_expect_success "the score counts killed over mutants not waived: 2 of 4" '
	grep "^mutate: " "$tmp/log"
	grep -q "^mutate: 5 mutants at 2 sites: 2 killed (2 by a test, 0 did not compile), 2 survived, 1 waived, 0 errors; score 50% (minimum 100%)" "$tmp/log"
'
test_expect_success "a waiver that matches no mutant is reported" '
	grep -q "^waiver matches no mutant (stale?): SRQX-11 fake-provider/engine/registry.c:1 drop\$" "$tmp/log"
'
bad=$(grep -v '^#' "$tmp/out/result.tsv" | awk -F'\t' 'NF != 6 || $5 !~ /^(killed|did-not-compile|survived|waived|error)$/')
test_expect_success "result.tsv: a header and 5 rows of 6 fields with a known result" '
	cat "$tmp/out/result.tsv"
	[ "$(grep -vc "^#" "$tmp/out/result.tsv")" = 5 ] && [ -z "$bad" ] &&
		head -n 1 "$tmp/out/result.tsv" | grep -q "^# "
'
d=$(grep "registry.c:$syn${tab}drop${tab}" "$tmp/out/result.tsv" | sed -n 's/.*; \(survivors\/[0-9]*\.diff\)$/\1/p')
test_expect_success "each survivor has its diff: the dropped condition" '
	echo "diff: ${d:-none}"
	[ -n "$d" ] && grep -q "^+	if (0 && (x > 1))	/\* @rule SRQX-11 \*/" "$tmp/out/$d"
'
test_expect_success "the source tree is untouched" '
	[ "$(cksum <"$src/fake-provider/engine/registry.c")" = "$sum_before" ] &&
		! grep -q fp__mutate_probe "$src/fake-provider/engine/registry.c"
'
test_done
