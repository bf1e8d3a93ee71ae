#!/bin/sh
# SPDX-License-Identifier: MIT
# t7202: index.html is well-formed (xmllint parses it as XML), holds exactly
# one detailed row per requirement of fixtures/requirements.txt with the
# right result class, escapes what it shows, links every TAP log with a
# relative link to a file that exists (and every #fragment to an element of
# the page), loads nothing from outside (no scripts, no remote or absolute
# URLs), and links coverage/ when present. Its first part: the verdict
# (FAIL, or PASS when nothing failed), the list of failures and known
# deviations (or "no failures"), the requirement x configuration matrix
# (one row per requirement in catalogue order, one column per configuration
# of the run, tap/NAME.CONFIG.tap; a cell's class and text its result
# there), and the fingerprint folded in a closed <details>. t7210 checks how
# a browser lays it out.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
tmp=$tl_tmp

rt_run_mixed "$tmp/run"
perl "$src/tools/report/report-html" "$tmp/run" 2>"$tmp/err"
h=$tmp/run/index.html
x() { xmllint --xpath "$1" "$h" 2>/dev/null; }
test_expect_success "index.html written" 'cat "$tmp/err"; test -s "$h"'
test_expect_success "index.html is well-formed XML" 'xmllint --noout "$h" 2>&1 | head -n 20; xmllint --noout "$h"'

nreq=$(grep -c '^[A-Z]' "$src/fixtures/requirements.txt")
grep "^[A-Z]" "$src/fixtures/requirements.txt" | cut -f1 >"$tmp/want.ids"
# Rows counted through the parsed document, not by grepping lines.
rows=$(x 'count(//tr[starts-with(@class,"req ")])')
test_expect_success "one detailed row per requirement ($nreq)" 'echo "rows: $rows"; test "$rows" = "$nreq"'
ids=$(x '//tr[starts-with(@class,"req ")]/td[1]/text()' | tr -s ' \n' '\n\n' | sed '/^$/d')
test_expect_success "detailed rows in catalogue order with every ID" '
	printf "%s\n" "$ids" | diff "$tmp/want.ids" -
'
cls() { x "string(//tr[@id='req-$1']/@class)"; }
classes="$(cls XRCD-01),$(cls XRCD-02),$(cls XRCD-03),$(cls XRCD-04),$(cls XRCD-05),$(cls QPX-13)"
test_expect_success "result classes: pass fail skip deviation fixed notrun" '
	echo "classes: $classes"
	test "$classes" = "req st-pass,req st-fail,req st-skip,req st-deviation,req st-fixed,req st-notrun"
'
skip_cell=$(x "string(//tr[@id='req-XRCD-03']/td[6])")
test_expect_success "the skip reason is shown in its row" 'echo "cell: $skip_cell"; test "$skip_cell" = "no xrc"'
# The "enforced in" cell shows the catalogue's layer and source.
cat_row=$(grep "^XRCD-02	" "$src/fixtures/requirements.txt")
where=$(x "string(//tr[@id='req-XRCD-02']/td[3])")
test_expect_success "the enforced-in cell holds the layer and the source of the catalogue" '
	echo "cell: $where"
	test "$where" = "$(echo "$cat_row" | cut -f3)$(echo "$cat_row" | cut -f4)"
'
th=$(x "string(//table[@class='reqs']/tr[1]/th[3])")
test_expect_success "the detailed table names the enforced-in column" 'echo "header: $th"; test "$th" = "enforced in"'
test_expect_success "fingerprint values are escaped and shown" '
	grep -qF "<td>&lt;1.0 &amp; &quot;beta&quot;&gt;</td>" "$h"
'

# ---- the first part: verdict, failures, matrix, folded fingerprint ----------
word=$(x 'string(//p[@id="verdict"]/strong)')
vcls=$(x 'string(//p[@id="verdict"]/@class)')
test_expect_success "the verdict is FAIL (a failed test, a crashed program)" '
	echo "verdict: $word ($vcls)"; test "$word" = FAIL && test "$vcls" = "verdict v-fail"
'
vtext=$(x 'string(//p[@id="verdict"])')
test_expect_success "the verdict counts programs and results" '
	echo "verdict: $vtext"
	case $vtext in "FAIL 2 of 3 test programs failed; 1 configuration; requirements: 1 FAIL, 1 known deviation, 2 fixed, 2 pass, 1 not supported (skip), "*" not run") ;; *) false ;; esac
'
# document order: verdict, failures, matrix, fingerprint, detailed table
order=$(x '//*[@id="verdict" or @id="failures" or @id="matrix" or @id="fingerprint" or @id="requirements" or @id="programs"]/@id' | tr -s ' ' '\n' | sed -n 's/^id="\(.*\)"$/\1/p' | tr '\n' ' ')
test_expect_success "verdict, failures, matrix, fingerprint, requirements, programs: in this order" '
	echo "order: $order"; test "$order" = "verdict failures matrix fingerprint requirements programs "
'
fails=$(x '//ul[@class="failures"]/li' | sed 's/<[^>]*>//g')
test_expect_success "failures list: the failing and deviating requirements, the failed programs, with reasons" '
	printf "%s\n" "$fails"
	printf "%s\n" "$fails" >"$tmp/fails"
	test "$(grep -c . "$tmp/fails")" = 4 &&
	grep -qx "XRCD-02 FAIL t9001-mixed: xrcd_open_reserved_mask_refused (expected errno 95, got 0)" "$tmp/fails" &&
	grep -qx "XRCD-04 known deviation t9001-mixed: xrcd_private_no_o_creat (known deviation: returns EINVAL)" "$tmp/fails" &&
	grep -qx "program t9001-mixed FAIL: 1 failed test; exit 1 (TAP)" "$tmp/fails" &&
	grep -qx "program t9003-crash FAIL: exit 139; planned 3, ran 1 (TAP)" "$tmp/fails"
'
flinks=$(x '//ul[@class="failures"]/li/a/@href' | tr -s ' ' '\n' | sed -n 's/^href="\(.*\)"$/\1/p' | sort -u | tr '\n' ' ')
test_expect_success "failures list links the TAP logs and the rows" '
	echo "links: $flinks"
	test "$flinks" = "#prog-t9001-mixed #prog-t9003-crash #req-XRCD-02 #req-XRCD-04 tap/t9001-mixed.tap tap/t9003-crash.tap "
'
heads=$(x '//table[@class="configs"]/tr[1]/th' | sed 's/<wbr\/>//g; s/<[^>]*>/ /g' | tr -s ' \n' '  ')
test_expect_success "one run of plain tap/NAME.tap: one configuration column" '
	echo "header: $heads"; test "$heads" = " ID default "
'
mids=$(x '//tr[@class="cfgreq"]/td[1]/a/text()' | tr -s ' \n' '\n\n' | sed '/^$/d')
test_expect_success "matrix: one row per requirement, in catalogue order" '
	printf "%s\n" "$mids" | diff "$tmp/want.ids" -
'
fpd=$(x 'count(//details[@id="fingerprint" and not(@open)]/summary)'),$(x 'count(//details[@id="fingerprint"]//table/tr)')
test_expect_success "the fingerprint is folded: a closed details with a summary, holding its table" '
	echo "summary, rows: $fpd"; test "$fpd" = "1,5"
'

links=$(x '//a/@href' | sed 's/ href="\([^"]*\)"/\1\n/g' | sed '/^$/d' | sort -u)
bad=
for l in $links; do
	case $l in
	'#'*) [ "$(x "count(//*[@id='${l#\#}'])")" = 1 ] || bad="$bad $l" ;;
	*) [ -e "$tmp/run/$l" ] || bad="$bad $l" ;;
	esac
done
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

# ---- two configurations ---------------------------------------------------------
rt_run_configs "$tmp/cfg"
perl "$src/tools/report/report-html" "$tmp/cfg" 2>"$tmp/err"
h=$tmp/cfg/index.html
test_expect_success "two configurations: well-formed" 'cat "$tmp/err"; xmllint --noout "$h"'
heads=$(x '//table[@class="configs"]/tr[1]/th' | sed 's/<wbr\/>//g; s/<[^>]*>/ /g' | tr -s ' \n' '  ')
test_expect_success "one column per configuration (tap/NAME.CONFIG.tap), sorted" '
	echo "header: $heads"; test "$heads" = " ID ref-extended-current ref-legacy-seed "
'
cells() { x "//tr[@id='m-$1']/td[@class!='k']/@class" | sed -n 's/.*class="c \([^"]*\)"$/\1/p' | tr '\n' ' '; }
ctext() { x "//tr[@id='m-$1']/td[@class!='k']" | sed 's/<[^>]*>//g' | tr '\n' '|'; }
got="$(cells XRCD-01)/$(cells XRCD-02)/$(cells XRCD-03)/$(cells XRCD-04)/$(cells XRCD-05)"
test_expect_success "cells: each requirement's result in each configuration" '
	echo "cells: $got"
	test "$got" = "st-pass st-pass /st-pass st-fail /st-skip st-pass /st-pass st-deviation /st-pass st-notrun "
'
got="$(ctext XRCD-02)$(ctext XRCD-03)$(ctext XRCD-04)$(ctext XRCD-05)"
test_expect_success "cells say their result in words, not only in colour" '
	echo "text: $got"
	test "$got" = "pass|FAIL|not supported|pass|pass|known deviation|pass|not run|"
'
href=$(x "string(//tr[@id='m-XRCD-02']/td[3]/a/@href)")
tip=$(x "string(//tr[@id='m-XRCD-02']/td[3]/@title)")
test_expect_success "a cell links the TAP of its configuration's run, its title names the test" '
	echo "href: $href title: $tip"
	test "$href" = tap/t9301-suite.ref-legacy-seed.tap &&
	test "$tip" = "t9301-suite.ref-legacy-seed: xrcd_open_reserved_mask_refused (FAIL)"
'
whole=$(x "string(//tr[@id='req-XRCD-02']/@class)")
test_expect_success "the detailed row keeps the worst result over all configurations" '
	echo "class: $whole"; test "$whole" = "req st-fail"
'
fails=$(x '//ul[@class="failures"]/li' | sed 's/<[^>]*>//g')
test_expect_success "failures list: the requirement failing in one configuration names it" '
	printf "%s\n" "$fails"
	printf "%s\n" "$fails" | grep -qx "XRCD-02 FAIL t9301-suite: xrcd_open_reserved_mask_refused in ref-legacy-seed (expected errno 22, got 0)"
'
# the same run with a waiver of XRCD-02: its cells and its entry say so
echo "XRCD-02 firmware 1.2 refuses it later, vendor ticket 42" >"$tmp/cfg/waivers.txt"
perl "$src/tools/report/report-html" "$tmp/cfg"
got="$(cells XRCD-02)|$(ctext XRCD-02)"
entry=$(x '//ul[@class="failures"]/li[1]' | sed 's/<br\/>/|/g; s/<[^>]*>//g')
test_expect_success "a waiver turns the cell and the entry into waived, with its reason" '
	echo "cells: $got"; echo "entry: $entry"
	test "$got" = "st-pass st-waived |pass|waived|" &&
	test "$entry" = "XRCD-02 waived (FAIL) t9301-suite: xrcd_open_reserved_mask_refused in ref-legacy-seed (expected errno 22, got 0)|waiver: firmware 1.2 refuses it later, vendor ticket 42"
'
rm "$tmp/cfg/waivers.txt"
# plain programs next to configured ones (make conformance: the interop
# tests): their own column, last
printf '1..1\nok 1 - interop [XRCD-08]\n' >"$tmp/cfg/tap/t6030-interop.tap"
echo 0 >"$tmp/cfg/tap/t6030-interop.rc"
perl "$src/tools/report/report-html" "$tmp/cfg"
heads=$(x '//table[@class="configs"]/tr[1]/th' | sed 's/<wbr\/>//g; s/<[^>]*>/ /g' | tr -s ' \n' '  ')
test_expect_success "programs without a configuration get the last column, default" '
	echo "header: $heads $(cells XRCD-08)"
	test "$heads" = " ID ref-extended-current ref-legacy-seed default " &&
	test "$(cells XRCD-08)" = "st-notrun st-notrun st-pass "
'

# ---- a failure's reason: the check's own message, never the runner's banner -----
rt_run_asserts "$tmp/asserts"
perl "$src/tools/report/report-html" "$tmp/asserts" 2>"$tmp/err"
h=$tmp/asserts/index.html
fails=$(x '//ul[@class="failures"]/li' | sed 's/<[^>]*>//g')
printf "%s\n" "$fails" >"$tmp/afails"
why() { sed -n "s/^$1 FAIL t9401-asserts: [a-z_]* (\(.*\))\$/\1/p" "$tmp/afails"; }
test_expect_success "the reason of a cmocka assertion: its message and file:line, after the line the test printed" '
	cat "$tmp/err" "$tmp/afails"
	test "$(why WR-03)" = "opcode 2 to SRQ 3 (srqn 0x1686): 0 != 0x1 (suites/t1000-send-wr.c:202)"
'
test_expect_success "the reason of a th_fail: its message" '
	cat "$tmp/afails"
	test "$(why QPX-11)" = "RC: memory differs after the same traffic through the two APIs"
'
test_expect_success "a timeout says so, with the last line the test printed" '
	cat "$tmp/afails"
	test "$(why LIFE-02)" = "timeout: killed after 30 s (limit 30 s): waiting for the holder"
'
test_expect_success "a log that says nothing: the exit status and the last line of stderr" '
	cat "$tmp/afails"
	test "$(why QPX-12)" = "exit status 1; stderr: fake kernel: lost the connection to the test"
'
test_expect_success "no reason is a line of cmocka's banner" '
	cat "$tmp/afails"
	test "$(grep -c "FAIL t9401" "$tmp/afails")" = 4 && ! grep -E "\[ *(=+|RUN|FAILED|PASSED) *\]" "$tmp/afails"
'

# ---- nothing failed: PASS, no list ----------------------------------------------
rt_run_mustpass "$tmp/pass"
perl "$src/tools/report/report-html" "$tmp/pass"
h=$tmp/pass/index.html
got="$(x 'string(//p[@id="verdict"]/strong)'),$(x 'count(//ul[@class="failures"])'),$(x 'string(//p[@class="nofail"])')"
test_expect_success "a run without failures: PASS, and no failure list but its words" '
	echo "verdict, lists, text: $got"; test "$got" = "PASS,0,no failures, no known deviations"
'
RT_DEV="XRCD-01" rt_run_mustpass "$tmp/dev"
perl "$src/tools/report/report-html" "$tmp/dev"
h=$tmp/dev/index.html
got="$(x 'string(//p[@id="verdict"]/strong)'),$(x 'count(//ul[@class="failures"]/li)')"
test_expect_success "a known deviation alone: PASS, and listed" '
	echo "verdict, entries: $got"; test "$got" = "PASS,1"
'
mkdir "$tmp/empty"
perl "$src/tools/report/report-html" "$tmp/empty"
h=$tmp/empty/index.html
got=$(x 'string(//p[@id="verdict"])')
test_expect_success "a folder without TAP: NO RESULT, no TAP, the cause said" '
	echo "verdict: $got"
	case $got in "NO RESULT no TAP in this report; 0 configurations;"*) ;; *) false ;; esac &&
	grep -q "No result: 0 of [0-9]* mandatory requirements ran, 1 needed: no test program ran" "$h"
'
# every mandatory requirement skipped: nothing was tested
RT_SKIP="$(grep -E "^[A-Z]+-[0-9]+$" "$src/fixtures/mustpass.txt" | tr "\n" " ")" rt_run_mustpass "$tmp/skipped"
perl "$src/tools/report/report-html" "$tmp/skipped"
h=$tmp/skipped/index.html
got="$(x 'string(//p[@id="verdict"]/strong)')|$(x 'string(//p[@id="noresult"])')"
test_expect_success "every mandatory requirement skipped: NO RESULT, not PASS, with the skip's reason" '
	echo "verdict: $got"
	case $got in "NO RESULT|No result: 0 of "*" mandatory requirements ran, 1 needed; the tests were skipped: device has no XRC.") ;; *) false ;; esac
'

h=$tmp/run/index.html
mkdir -p "$tmp/run/coverage"
echo '<html/>' >"$tmp/run/coverage/index.html"
printf 'Summary coverage rate:\n  lines......: 91.0%% (10 of 11 lines)\n' >"$tmp/run/coverage/summary.txt"
perl "$src/tools/report/report-html" "$tmp/run"
test_expect_success "coverage/ is linked with its line rate when present" '
	grep -q "href=\"coverage/index.html\"" "$h" && grep -q "lines......: 91.0%" "$h"
'
test_done
