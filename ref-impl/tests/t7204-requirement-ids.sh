#!/bin/sh
# SPDX-License-Identifier: MIT
# t7204: the requirement catalogue (fixtures/requirements.txt) and the
# must-pass list (fixtures/mustpass.txt) are well-formed; every requirement
# ID that suites/, the tests or fixtures/expect/ name exists in the
# catalogue (a report row for it must exist); the catalogue matches the
# spec's IDs when the spec is beside the clone (../shared/spec, or
# IBVCT_SPEC); the ID check refuses a scratch tree with an unknown ID; and
# every ID names where the real stack enforces it (layer: libibverbs,
# libibverbs-cmd, kernel, driver or abi; "kernel+libibverbs-cmd" for an ID
# whose rules sit in two layers) with a source reference.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7204.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
req=$src/fixtures/requirements.txt
mp=$src/fixtures/mustpass.txt
# the spec's families, then the project's own (suites/README.md, "The
# project's requirement IDs"), which the spec does not hold
specfam='(XRCD|SRQX|QPX|OPENQP|LIFE|WR|COMPAT|ABI)-[0-9]{2}'
fam='(XRCD|SRQX|QPX|OPENQP|LIFE|WR|COMPAT|ABI|DEVX|WRX|CQX|MR|MW|PD)-[0-9]{2}'

# unknown_ids ROOT: IDs named under ROOT's suites/, tests and expectations
# that the catalogue lacks, as "ID file" lines.
unknown_ids() {
	(cd "$1" && find suites ref-impl/tests fake-provider/tests fixtures/expect \
		-type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.def' \
		-o -name '*.txt' -o -name '*.expect' -o -name '*.fps' \) 2>/dev/null |
		LC_ALL=C sort | tr '\n' '\0' | xargs -0 -r grep -oHE "\\b$fam\\b" |
		sed 's/^\(.*\):\([^:]*\)$/\2 \1/' | LC_ALL=C sort -u) | while read -r id f; do
			grep -q "^$id	" "$req" || echo "$id $f"
		done
}

# bad_placement FILE: catalogue lines without a layer of the allowed set
# and a non-empty source (ID, title, layer, source: four tab-separated
# fields, nothing else).
layers='(libibverbs|libibverbs-cmd|kernel|driver|abi)(\+(libibverbs|libibverbs-cmd|kernel|driver))*'
names='libibverbs, libibverbs-cmd, kernel, driver or abi; two joined by + for an ID whose rules sit in both'
bad_placement() {
	grep -v '^#' "$1" | grep -vE "^$fam	[^	]+	($layers)	[^	]*[^	 ][^	]*\$"
}

echo "1..10"
bad=$(grep -v '^#' "$req" | grep -vE "^$fam	[^	]+(	[^	]+){2}\$")
dup=$(grep -v '^#' "$req" | cut -f1 | sort | uniq -d)
if [ -z "$bad$dup" ]; then ok "requirements.txt: one 'ID<tab>title<tab>layer<tab>source' per line, no ID twice"
else not_ok "requirements.txt: one 'ID<tab>title<tab>layer<tab>source' per line, no ID twice"; echo "$bad$dup" | sed 's/^/# /'; fi

out=$(bad_placement "$req")
if [ -z "$out" ]; then ok "every ID has a layer ($names) and a source"
else not_ok "every ID has a layer ($names) and a source"; echo "$out" | sed 's/^/# /'; fi
# The placement check refuses a wrong layer and an empty source.
printf 'XRCD-01\tt\tuserspace\tx.c:1\nXRCD-02\tt\tkernel\t \nXRCD-03\tt\tkernel\tx.c:2\n' >"$tmp/req.bad"
out=$(bad_placement "$tmp/req.bad" | cut -f1 | tr '\n' ' ')
if [ "$out" = "XRCD-01 XRCD-02 " ]; then ok "the placement check refuses an unknown layer and a blank source"
else not_ok "the placement check refuses an unknown layer and a blank source"; echo "# got: $out"; fi

ids=$(sed -n 's/^\([A-Z][A-Z]*-[0-9][0-9]*\)$/\1/p' "$mp")
missing=
for id in $ids; do grep -q "^$id	" "$req" || missing="$missing $id"; done
if grep -Eq '^version: [0-9]+$' "$mp" && [ -n "$ids" ] && [ -z "$missing" ] &&
   [ -z "$(echo "$ids" | sort | uniq -d)" ] &&
   [ -z "$(grep -v '^#' "$mp" | grep -vE "^(version|changes): |^$fam\$")" ]; then
	ok "mustpass.txt: a version line, then catalogue IDs only, each once"
else not_ok "mustpass.txt: a version line, then catalogue IDs only, each once"; echo "# missing:$missing"; fi

out=$(unknown_ids "$src")
if [ -z "$out" ]; then ok "every ID the suites, tests and expectations name is in the catalogue"
else not_ok "every ID the suites, tests and expectations name is in the catalogue"; echo "$out" | sed 's/^/# /'; fi

mkdir -p "$tmp/suites" "$tmp/ref-impl/tests"
printf 'ok 1 - x [XRCD-%s]\n' 99 >"$tmp/suites/t2999-bogus.c"
out=$(unknown_ids "$tmp")
if [ "$out" = "XRCD-""99 suites/t2999-bogus.c" ]; then ok "the ID check reports an unknown ID with its file"
else not_ok "the ID check reports an unknown ID with its file"; echo "# got: $out"; fi

spec=${IBVCT_SPEC:-$src/../shared/spec/verbs-semantics.md}
if [ -r "$spec" ]; then
	grep -oE "^\*\*$specfam" "$spec" | tr -d '*' >"$tmp/spec.ids"
	grep -v '^#' "$req" | cut -f1 | grep -E "^$specfam\$" >"$tmp/cat.ids"
	if diff "$tmp/spec.ids" "$tmp/cat.ids" >"$tmp/diff"; then ok "the catalogue has exactly the spec's IDs, in its order"
	else not_ok "the catalogue has exactly the spec's IDs, in its order"; sed 's/^/# /' "$tmp/diff"; fi
else
	ok "the catalogue has exactly the spec's IDs, in its order # SKIP no spec at $spec"
fi
# The project's own IDs: each in suites/README.md's table of them.
own=$(grep -v '^#' "$req" | cut -f1 | grep -vE "^$specfam\$")
sed -n "/^## The project's requirement IDs/,/^## [^T]/p" "$src/suites/README.md" >"$tmp/own.md"
undoc=
for id in $own; do
	grep -q "^| \*\*$id\*\* |" "$tmp/own.md" || undoc="$undoc $id"
done
if [ -z "$undoc" ]; then ok "every ID beyond the spec is described in suites/README.md"
else not_ok "every ID beyond the spec is described in suites/README.md"; echo "# not described:$undoc"; fi
# A mandatory ID no suite checks could never pass certification.
unchecked=
for id in $ids; do grep -rqw --include="*.c" -e "$id" "$src/suites" || unchecked="$unchecked $id"; done
if [ -z "$unchecked" ]; then ok "every mandatory ID is checked by a suite"
else not_ok "every mandatory ID is checked by a suite"; echo "# not checked:$unchecked"; fi
nreq=$(grep -c '^[A-Z]' "$req")
if [ "$nreq" -ge 100 ]; then ok "the catalogue is complete enough to report on ($nreq IDs)"
else not_ok "the catalogue is complete enough to report on ($nreq IDs)"; fi
exit $fail
