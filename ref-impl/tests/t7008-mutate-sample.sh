#!/bin/sh
# SPDX-License-Identifier: MIT
# t7008: ci/mutate (`make mutate`) on a sample. Every `/* @rule ID */`
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
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }
check() { t=$1; shift; if "$@"; then ok "$t"; else not_ok "$t"; fi; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7008.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
TMPDIR=$tmp
export TMPDIR
# The tool builds and runs suites itself; what make check set up for this
# test must not leak into those runs.
unset IBVCT_BUILD IBVCT_PROVIDER IBVCT_LIBDIR IBVCT_SCRIPT MAKEFLAGS MAKELEVEL MFLAGS
tab=$(printf '\t')

echo "1..13"

# ---- the markers of the tree ---------------------------------------------------
perl "$src/ci/mutate" --tree "$src" --list >"$tmp/list" 2>&1
rc=$?
check "every @rule marker of the tree is on a mutable condition" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/list"
unknown=
for id in $(grep -E '^[A-Z]+-[0-9]+' "$tmp/list" | cut -d' ' -f1 | tr ',' '\n' | sort -u); do
	grep -q "^$id$tab" "$src/fixtures/requirements.txt" || unknown="$unknown $id"
done
check "every marker names catalogue IDs ($(grep -cE "^[A-Z]+-[0-9]+" "$tmp/list") mutants listed)" test -z "$unknown"
[ -z "$unknown" ] || echo "# not in the catalogue:$unknown"

mkdir -p "$tmp/bad/fake-provider/verbs" "$tmp/bad/suites"
: >"$tmp/bad/Makefile"
printf 'int f(int x)\n{\n\tx = 2;\t/* @rule SRQX-11 */\n\treturn x;\n}\n' >"$tmp/bad/fake-provider/verbs/a.c"
perl "$src/ci/mutate" --tree "$tmp/bad" --list >"$tmp/bad.out" 2>&1
rc=$?
check "a marker on a line without a condition is refused with its place" \
	sh -c '[ "$1" = 2 ] && grep -q "fake-provider/verbs/a.c:3: the marker is not on an if" "$2"' - "$rc" "$tmp/bad.out"

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
	perl "$src/ci/mutate" --tree "$tmp/tree" --out "$tmp/out" --only SRQX-11 --jobs 1 \
	--waivers "$tmp/waivers" >"$tmp/log" 2>"$tmp/err"
rc=$?
check "the run exits 1: the score is under the default minimum of 100%" test "$rc" = 1
[ "$rc" = 1 ] || { echo "# exit $rc"; sed 's/^/# /' "$tmp/log" "$tmp/err" | tail -n 40; }

row() {	# row SITE-LINE OPERATOR RESULT: that line in the printed table
	grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$1 +$2 +.+ $3\$" "$tmp/log"
}
check "the table has its header: ID site operator change result" \
	grep -Eq '^ID +site +operator +change +result$' "$tmp/log"
check "the real site's mutants are killed (drop, cmp1)" \
	sh -c 'grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$1 +drop +condition -> 0 +killed\$" "$2" &&
	       grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$1 +cmp1 +== -> != +killed\$" "$2"' - "$real" "$tmp/log"
check "the unobserved site's mutants survive (drop, cmp1: > -> >=)" \
	sh -c 'grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$1 +drop +condition -> 0 +survived\$" "$2" &&
	       grep -Eq "^SRQX-11 +fake-provider/engine/registry\.c:$1 +cmp1 +> -> >= +survived\$" "$2"' - "$syn" "$tmp/log"
check "the waived mutant is shown as waived (errno: EBUSY -> EINVAL)" row "$syn" errno waived
check "the score counts killed over mutants not waived: 2 of 4" \
	grep -q '^mutate: 5 mutants at 2 sites: 2 killed (2 by a test, 0 did not compile), 2 survived, 1 waived, 0 errors; score 50% (minimum 100%)' "$tmp/log"
check "a waiver that matches no mutant is reported" \
	grep -q '^waiver matches no mutant (stale?): SRQX-11 fake-provider/engine/registry.c:1 drop$' "$tmp/log"
bad=$(grep -v '^#' "$tmp/out/result.tsv" | awk -F'\t' 'NF != 6 || $5 !~ /^(killed|did-not-compile|survived|waived|error)$/')
check "result.tsv: a header and 5 rows of 6 fields with a known result" \
	sh -c '[ "$(grep -vc "^#" "$1")" = 5 ] && [ -z "$2" ] && head -n 1 "$1" | grep -q "^# "' - "$tmp/out/result.tsv" "$bad"
d=$(grep "registry.c:$syn${tab}drop${tab}" "$tmp/out/result.tsv" | sed -n 's/.*; \(survivors\/[0-9]*\.diff\)$/\1/p')
check "each survivor has its diff: the dropped condition" \
	sh -c '[ -n "$1" ] && grep -q "^+	if (0 && (x > 1))	/\* @rule SRQX-11 \*/" "$2/$1"' - "$d" "$tmp/out"
check "the source tree is untouched" \
	sh -c '[ "$(cksum <"$1/fake-provider/engine/registry.c")" = "$2" ] && ! grep -q fp__mutate_probe "$1/fake-provider/engine/registry.c"' \
	- "$src" "$sum_before"
exit $fail
