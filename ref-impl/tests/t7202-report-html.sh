#!/bin/sh
# SPDX-License-Identifier: MIT
# t7202: index.html is well-formed (xmllint parses it as XML), holds exactly
# one matrix row per requirement of fixtures/requirements.txt with the
# right result class, escapes what it shows, links every TAP log with a
# relative link to a file that exists, loads nothing from outside (no
# scripts, no remote or absolute URLs), and links coverage/ when present.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/ci/report-testdata.sh"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }
check() { t=$1; shift; if "$@"; then ok "$t"; else not_ok "$t"; fi; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t7202.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..13"
rt_run_mixed "$tmp/run"
perl "$src/ci/report-html" "$tmp/run" 2>"$tmp/err"
h=$tmp/run/index.html
check "index.html written" test -s "$h"
if xmllint --noout "$h" 2>"$tmp/xml"; then ok "index.html is well-formed XML"
else not_ok "index.html is well-formed XML"; sed 's/^/# /' "$tmp/xml" | head -20; fi

nreq=$(grep -c '^[A-Z]' "$src/fixtures/requirements.txt")
# Rows counted through the parsed document, not by grepping lines.
rows=$(xmllint --xpath 'count(//tr[starts-with(@class,"req ")])' "$h" 2>/dev/null)
check "one matrix row per requirement ($nreq)" test "$rows" = "$nreq"
ids=$(xmllint --xpath '//tr[starts-with(@class,"req ")]/td[1]/text()' "$h" 2>/dev/null | tr -s ' \n' '\n\n' | sed '/^$/d')
check "rows in catalogue order with every ID" test "$ids" = "$(grep '^[A-Z]' "$src/fixtures/requirements.txt" | cut -f1)"
cls() { xmllint --xpath "string(//tr[@id='req-$1']/@class)" "$h" 2>/dev/null; }
check "result classes: pass fail skip deviation fixed notrun" test \
	"$(cls XRCD-01),$(cls XRCD-02),$(cls XRCD-03),$(cls XRCD-04),$(cls XRCD-05),$(cls QPX-13)" = \
	"req st-pass,req st-fail,req st-skip,req st-deviation,req st-fixed,req st-notrun"
check "the skip reason is shown in its row" test "$(xmllint --xpath "string(//tr[@id='req-XRCD-03']/td[6])" "$h")" = "no xrc"
# The "enforced in" cell shows the catalogue's layer and source.
cat_row=$(grep "^XRCD-02	" "$src/fixtures/requirements.txt")
where=$(xmllint --xpath "string(//tr[@id='req-XRCD-02']/td[3])" "$h" 2>/dev/null)
check "the enforced-in cell holds the layer and the source of the catalogue" \
	test "$where" = "$(echo "$cat_row" | cut -f3)$(echo "$cat_row" | cut -f4)"
check "the matrix header names the enforced-in column" test \
	"$(xmllint --xpath "string(//table[@class='matrix']/tr[1]/th[3])" "$h" 2>/dev/null)" = "enforced in"
check "fingerprint values are escaped and shown" grep -qF '<td>&lt;1.0 &amp; &quot;beta&quot;&gt;</td>' "$h"

links=$(xmllint --xpath '//a/@href' "$h" 2>/dev/null | sed 's/ href="\([^"]*\)"/\1\n/g' | sed '/^$/d' | sort -u)
bad=
for l in $links; do [ -e "$tmp/run/$l" ] || bad="$bad $l"; done
check "every link is relative and resolves inside the report" test -z "$bad"
[ -z "$bad" ] || echo "# broken links:$bad"
check "each TAP log is linked" sh -c 'for p in t9001-mixed t9002-skipall t9003-crash; do echo "$1" | grep -qx "tap/$p.tap" || exit 1; done' - "$links"
check "self-contained: no script, no stylesheet link, no URL" sh -c \
	'! grep -Eiq "<script|<link|<img|<iframe|url\(|(src|href)=\"(https?:|//|/)" "$1"' - "$h"

mkdir -p "$tmp/run/coverage"
echo '<html/>' >"$tmp/run/coverage/index.html"
printf 'Summary coverage rate:\n  lines......: 91.0%% (10 of 11 lines)\n' >"$tmp/run/coverage/summary.txt"
perl "$src/ci/report-html" "$tmp/run"
check "coverage/ is linked with its line rate when present" sh -c \
	'grep -q "href=\"coverage/index.html\"" "$1" && grep -q "lines......: 91.0%" "$1"' - "$h"
exit $fail
