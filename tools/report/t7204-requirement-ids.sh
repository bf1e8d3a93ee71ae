#!/bin/sh
# SPDX-License-Identifier: MIT
# t7204: the requirement catalogue (fixtures/requirements.txt) and the
# must-pass list (fixtures/mustpass.txt) are well-formed; every requirement
# ID that suites/, the tests, the quirk table (fp_quirks.def: the rule each
# quirk breaks) or fixtures/expect/ name exists in the
# catalogue (a report row for it must exist); the catalogue matches the
# spec's IDs when the spec is beside the clone (../shared/spec, or
# IBVCT_SPEC); the ID check refuses a scratch tree with an unknown ID; and
# every ID names where the real stack enforces it (layer: libibverbs,
# libibverbs-cmd, kernel, driver or abi; "kernel+libibverbs-cmd" for an ID
# whose rules sit in two layers) with a source reference.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
req=$src/fixtures/requirements.txt
mp=$src/fixtures/mustpass.txt
# the spec's families; then every family the catalogue holds (the spec's
# and the project's own, which the spec does not): the catalogue is the one
# list of IDs, an ID of a new family is a row there and nothing else
specfam='(XRCD|SRQX|QPX|OPENQP|LIFE|WR|COMPAT|ABI)-[0-9]{2}'
fams=$(grep -v '^#' "$req" | sed -n 's/^\([A-Z][A-Z]*\)-[0-9][0-9]*	.*/\1/p' | LC_ALL=C sort -u | paste -sd'|')
[ -n "$fams" ] || test_bail "no IDs in $req"
fam="($fams)-[0-9]{2}"

# unknown_ids ROOT: IDs named under ROOT's suites/, tests (those of the
# tools too) and expectations
# that the catalogue lacks, as "ID file" lines.
unknown_ids() {
	(cd "$1" && find suites ref-impl/tests fake-provider/tests fake-provider/script fixtures/expect \
		ci quality pkg tools/report tools/abi tools/ibvct \
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

bad=$(grep -v '^#' "$req" | grep -vE "^$fam	[^	]+(	[^	]+){2}\$")
dup=$(grep -v '^#' "$req" | cut -f1 | sort | uniq -d)
test_expect_success "requirements.txt: one 'ID<tab>title<tab>layer<tab>source' per line, no ID twice" '
	printf "%s\n" "$bad$dup"
	[ -z "$bad$dup" ]
'

test_expect_success "every ID has a layer ($names) and a source" '! bad_placement "$req"'
# The placement check refuses a wrong layer and an empty source.
printf 'XRCD-01\tt\tuserspace\tx.c:1\nXRCD-02\tt\tkernel\t \nXRCD-03\tt\tkernel\tx.c:2\n' >"$tmp/req.bad"
test_expect_success "the placement check refuses an unknown layer and a blank source" '
	out=$(bad_placement "$tmp/req.bad" | cut -f1 | tr "\n" " ")
	echo "got: $out"
	[ "$out" = "XRCD-01 XRCD-02 " ]
'

ids=$(sed -n 's/^\([A-Z][A-Z]*-[0-9][0-9]*\)$/\1/p' "$mp")
missing=
for id in $ids; do grep -q "^$id	" "$req" || missing="$missing $id"; done
test_expect_success "mustpass.txt: a version line, then catalogue IDs only, each once" '
	echo "missing:$missing"
	grep -Eq "^version: [0-9]+\$" "$mp" && [ -n "$ids" ] && [ -z "$missing" ] &&
		[ -z "$(echo "$ids" | sort | uniq -d)" ] &&
		[ -z "$(grep -v "^#" "$mp" | grep -vE "^(version|changes): |^$fam\$")" ]
'

test_expect_success "every ID the suites, tests and expectations name is in the catalogue" '
	out=$(unknown_ids "$src")
	printf "%s\n" "$out"
	[ -z "$out" ]
'

mkdir -p "$tmp/tree/suites" "$tmp/tree/ref-impl/tests"
printf 'ok 1 - x [XRCD-%s]\n' 99 >"$tmp/tree/suites/t2999-bogus.c"
test_expect_success "the ID check reports an unknown ID with its file" '
	out=$(unknown_ids "$tmp/tree")
	echo "got: $out"
	[ "$out" = "XRCD-""99 suites/t2999-bogus.c" ]
'

spec=${IBVCT_SPEC:-$src/../shared/spec/verbs-semantics.md}
if [ -r "$spec" ]; then
	grep -oE "^\*\*$specfam" "$spec" | tr -d '*' >"$tmp/spec.ids"
	grep -v '^#' "$req" | cut -f1 | grep -E "^$specfam\$" >"$tmp/cat.ids"
	test_expect_success "the catalogue has exactly the spec's IDs, in its order" '
		diff "$tmp/spec.ids" "$tmp/cat.ids"
	'
else
	test_skip "the catalogue has exactly the spec's IDs, in its order" "no spec at $spec"
fi
# The catalogue is the one list: suites/README.md links it and the break
# matrix (suites/break-matrix.txt) and holds no table of IDs of its own.
test_expect_success "suites/README.md holds no table of IDs (the catalogue and break-matrix.txt do)" '
	out=$(grep -nE "^\| (\*\*)?$fam(\*\*)? \|" "$src/suites/README.md")
	printf "%s\n" "$out"
	[ -z "$out" ] && grep -q "fixtures/requirements.txt" "$src/suites/README.md" &&
		grep -q "break-matrix.txt" "$src/suites/README.md"
'
# A mandatory ID no suite checks could never pass certification.
unchecked=
for id in $ids; do grep -rqw --include="*.c" -e "$id" "$src/suites" || unchecked="$unchecked $id"; done
test_expect_success "every mandatory ID is checked by a suite" '
	echo "not checked:$unchecked"
	[ -z "$unchecked" ]
'
nreq=$(grep -c '^[A-Z]' "$req")
test_expect_success "the catalogue is complete enough to report on ($nreq IDs)" '[ "$nreq" -ge 100 ]'
test_done
