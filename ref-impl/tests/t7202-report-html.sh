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
. "$src/ci/test-lib.sh"
. "$src/ci/report-testdata.sh"
tmp=$tl_tmp

rt_run_mixed "$tmp/run"
perl "$src/ci/report-html" "$tmp/run" 2>"$tmp/err"
h=$tmp/run/index.html
test_expect_success "index.html written" 'cat "$tmp/err"; test -s "$h"'
test_expect_success "index.html is well-formed XML" 'xmllint --noout "$h" 2>&1 | head -n 20; xmllint --noout "$h"'

nreq=$(grep -c '^[A-Z]' "$src/fixtures/requirements.txt")
# Rows counted through the parsed document, not by grepping lines.
rows=$(xmllint --xpath 'count(//tr[starts-with(@class,"req ")])' "$h" 2>/dev/null)
test_expect_success "one matrix row per requirement ($nreq)" 'echo "rows: $rows"; test "$rows" = "$nreq"'
ids=$(xmllint --xpath '//tr[starts-with(@class,"req ")]/td[1]/text()' "$h" 2>/dev/null | tr -s ' \n' '\n\n' | sed '/^$/d')
test_expect_success "rows in catalogue order with every ID" '
	grep "^[A-Z]" "$src/fixtures/requirements.txt" | cut -f1 >"$tmp/want.ids"
	printf "%s\n" "$ids" | diff "$tmp/want.ids" -
'
cls() { xmllint --xpath "string(//tr[@id='req-$1']/@class)" "$h" 2>/dev/null; }
classes="$(cls XRCD-01),$(cls XRCD-02),$(cls XRCD-03),$(cls XRCD-04),$(cls XRCD-05),$(cls QPX-13)"
test_expect_success "result classes: pass fail skip deviation fixed notrun" '
	echo "classes: $classes"
	test "$classes" = "req st-pass,req st-fail,req st-skip,req st-deviation,req st-fixed,req st-notrun"
'
skip_cell=$(xmllint --xpath "string(//tr[@id='req-XRCD-03']/td[6])" "$h")
test_expect_success "the skip reason is shown in its row" 'echo "cell: $skip_cell"; test "$skip_cell" = "no xrc"'
# The "enforced in" cell shows the catalogue's layer and source.
cat_row=$(grep "^XRCD-02	" "$src/fixtures/requirements.txt")
where=$(xmllint --xpath "string(//tr[@id='req-XRCD-02']/td[3])" "$h" 2>/dev/null)
test_expect_success "the enforced-in cell holds the layer and the source of the catalogue" '
	echo "cell: $where"
	test "$where" = "$(echo "$cat_row" | cut -f3)$(echo "$cat_row" | cut -f4)"
'
th=$(xmllint --xpath "string(//table[@class='matrix']/tr[1]/th[3])" "$h" 2>/dev/null)
test_expect_success "the matrix header names the enforced-in column" 'echo "header: $th"; test "$th" = "enforced in"'
test_expect_success "fingerprint values are escaped and shown" '
	grep -qF "<td>&lt;1.0 &amp; &quot;beta&quot;&gt;</td>" "$h"
'

links=$(xmllint --xpath '//a/@href' "$h" 2>/dev/null | sed 's/ href="\([^"]*\)"/\1\n/g' | sed '/^$/d' | sort -u)
bad=
for l in $links; do [ -e "$tmp/run/$l" ] || bad="$bad $l"; done
test_expect_success "every link is relative and resolves inside the report" '
	echo "broken links:$bad"
	test -z "$bad"
'
test_expect_success "each TAP log is linked" '
	for p in t9001-mixed t9002-skipall t9003-crash; do
		echo "$links" | grep -qx "tap/$p.tap" || { echo "not linked: tap/$p.tap"; exit 1; }
	done
'
test_expect_success "self-contained: no script, no stylesheet link, no URL" '
	! grep -Ei "<script|<link|<img|<iframe|url\(|(src|href)=\"(https?:|//|/)" "$h"
'

mkdir -p "$tmp/run/coverage"
echo '<html/>' >"$tmp/run/coverage/index.html"
printf 'Summary coverage rate:\n  lines......: 91.0%% (10 of 11 lines)\n' >"$tmp/run/coverage/summary.txt"
perl "$src/ci/report-html" "$tmp/run"
test_expect_success "coverage/ is linked with its line rate when present" '
	grep -q "href=\"coverage/index.html\"" "$h" && grep -q "lines......: 91.0%" "$h"
'
test_done
