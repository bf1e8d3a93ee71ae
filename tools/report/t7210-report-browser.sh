#!/bin/sh
# SPDX-License-Identifier: MIT
# t7210: the report page answers "did it pass, and what failed" on its first
# screen, as Debian's chromium (headless, 1280x800) lays it out. A probe page
# in the scratch dir loads reports of tools/report/report-testdata.sh in same-origin
# iframes of 1280x800 and writes what getBoundingClientRect and
# getComputedStyle measure into its DOM, which --dump-dom prints:
#   - the verdict, the first entry of "Failures and known deviations" (or
#     "no failures") and the first matrix row end within the first 800px;
#   - a FAIL cell of the matrix says FAIL and is reddish, unlike a pass cell;
#   - the fingerprint is in a closed <details> below the matrix (it adds no
#     height beyond its summary, no row of it is visible);
#   - the verdict says FAIL for the two-configuration run, PASS for a clean
#     one; the page does not scroll sideways.
# The same checks must reject pages broken on purpose (the fingerprint moved
# to the top, or left open; the detailed table before the matrix; a FAIL
# cell coloured as a pass), measured in the same browser run.
# chromium runs with its profile, HOME, caches and TMPDIR in the scratch
# dir, under ibvct-reap (timeout(1) without a build): no process of it may
# outlive it.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
IBVCT_SRC=$src
. "$src/testkit/sh/test-lib.sh"
. "$src/tools/report/report-testdata.sh"
tmp=$tl_tmp
# As every optional tool of the tests: `make check` installs it first
# (ci/install-deps browser) or stops; a skip only when run by hand.
command -v chromium >/dev/null 2>&1 || skip_all "chromium not installed (chromium, ci/install-deps browser)"
mult=${IBVCT_TIMEOUT_MULT:-1}

# ---- the reports ------------------------------------------------------------
rt_run_configs "$tmp/cfg"
perl "$src/tools/report/report-html" "$tmp/cfg" 2>"$tmp/err.cfg"
rt_run_mustpass "$tmp/pass"
perl "$src/tools/report/report-html" "$tmp/pass" 2>"$tmp/err.pass"
[ -s "$tmp/cfg/index.html" ] && [ -s "$tmp/pass/index.html" ] ||
	test_bail "tools/report/report-html wrote no page: $(cat "$tmp/err.cfg" "$tmp/err.pass")"
: >"$tmp/unmade"
# broken NAME PERL-SUBSTITUTION: cfg's page with one thing broken, in NAME/
broken() {
	mkdir -p "$tmp/$1"
	perl -0pe "$2" "$tmp/cfg/index.html" >"$tmp/$1/index.html"
	# the page changed so that this no longer applies: its checks fail
	cmp -s "$tmp/cfg/index.html" "$tmp/$1/index.html" && echo "$1" >>"$tmp/unmade"
	return 0
}
fp_block='(<details class="fingerprint".*?</details>\n)'
broken fptop "s{$fp_block}{}s and \$d = \$1 and s{<body>\n}{<body>\n\$d}"
broken fpopen 's{<details class="fingerprint"}{<details open="open" class="fingerprint"}'
broken reqsfirst 's{(<h2 id="matrix">)(.*?)(<h2 id="requirements">.*?</table>\n)}{$3$1$2}s'
broken samecolour 's{\.st-fail \{ background: #fbb; \}}{.st-fail { background: #dfd; }}'
frames="cfg pass fptop fpopen reqsfirst samecolour"

# ---- the probe --------------------------------------------------------------
# One line per finding, FRAME.KEY=VALUE; "done=1" last.
cat >"$tmp/probe.html" <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>t7210 probe</title>
<style>body { margin: 0; } iframe { display: block; width: 1280px; height: 800px; border: 0; }</style>
</head><body>
<pre id="out">not measured</pre>
<script>
var frames = "$frames".split(" "), lines = [], left = frames.length;
function measure(name, f) {
	var d = f.contentDocument, w = f.contentWindow;
	function put(k, v) { lines.push(name + "." + k + "=" + v); }
	function q(s) { return d.querySelector(s); }
	function box(k, el) {
		var r = el ? el.getBoundingClientRect() : null;
		put(k + "_top", r ? Math.round(r.top) : "none");
		put(k + "_bottom", r ? Math.round(r.bottom) : "none");
		put(k + "_height", r ? Math.round(r.height) : "none");
	}
	function cell(k, el) {
		put(k + "_bg", el ? w.getComputedStyle(el).backgroundColor : "none");
		put(k + "_text", el ? el.textContent : "none");
	}
	put("viewport", w.innerWidth + "x" + w.innerHeight);
	put("scroll_width", d.documentElement.scrollWidth);
	put("client_width", d.documentElement.clientWidth);
	var v = q("#verdict");
	box("verdict", v);
	put("verdict_word", v && v.querySelector("strong") ? v.querySelector("strong").textContent : "none");
	box("failures_first", q("ul.failures li") || q("p.nofail"));
	box("matrix", q("table.configs"));
	box("matrix_row1", q("table.configs tr.cfgreq"));
	cell("fail_cell", q("table.configs td.c.st-fail"));
	cell("pass_cell", q("table.configs td.c.st-pass"));
	var fp = q("table.fingerprint"), det = fp ? fp.closest("details") : null, h = 0, i;
	put("fp_in_details", det ? "yes" : "no");
	put("fp_open", det ? det.open : "none");
	// a closed details lays out its content hidden (content-visibility):
	// what it adds to the page is the height of the details beyond its
	// summary, and whether a row can be seen is checkVisibility()
	for (i = 0; fp && i < fp.rows.length; i++) if (fp.rows[i].checkVisibility()) h++;
	put("fp_rows", fp ? fp.rows.length : 0);
	put("fp_rows_visible", h);
	put("fp_rows_height", det ? Math.round(det.getBoundingClientRect().height - det.querySelector("summary").getBoundingClientRect().height) : "none");
	box("fp", det || fp);
	box("fp_summary", det ? det.querySelector("summary") : null);
}
frames.forEach(function (n) {
	var f = document.createElement("iframe");
	f.onload = function () {
		try { measure(n, f); } catch (e) { lines.push(n + ".error=" + e); }
		if (--left === 0) document.getElementById("out").textContent = lines.join("\n") + "\ndone=1";
	};
	f.src = n + "/index.html";
	document.body.appendChild(f);
});
</script>
</body></html>
EOF

# ---- chromium ---------------------------------------------------------------
# its TMPDIR short: chromium puts a socket there, whose path may not be
# longer than 107 bytes (sockaddr_un), and the scratch dir may be deep
mkdir -p "$tmp/home" "$tmp/c"
real_home=${HOME:-/nonexistent}
touch "$tmp/stamp"
limit=$((120 * mult))
reap=${IBVCT_BUILD:+$IBVCT_BUILD/bin/ibvct-reap}
if [ -n "$reap" ] && [ -x "$reap" ]; then
	set -- "$reap" -t "$limit" -g "$((10 * mult))" -n chromium --
else
	set -- timeout -k 10 "$limit"
fi
env HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_CACHE_HOME="$tmp/home/.cache" \
	TMPDIR="$tmp/c" \
	"$@" chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
	--user-data-dir="$tmp/profile" --no-first-run --window-size=1280,800 \
	--virtual-time-budget=5000 --dump-dom "file://$tmp/probe.html" \
	</dev/null >"$tmp/dom" 2>"$tmp/chromium.err"
crc=$?
# chromium's processes carry the profile path; the pattern is read from a
# file, so that grep's own command line does not hold it
printf '%s\n' "--user-data-dir=$tmp/profile" >"$tmp/pat"
left_over=$(grep -laF -f "$tmp/pat" /proc/[0-9]*/cmdline 2>/dev/null | sed 's|/proc/\([0-9]*\)/cmdline|\1|' | tr '\n' ' ')
sed -n '/<pre id="out">/,/<\/pre>/p' "$tmp/dom" | sed 's/^<pre id="out">//; s/<\/pre>.*//' >"$tmp/findings"

test_expect_success "chromium rendered the probe and exited 0" '
	echo "exit $crc"; tail -n 20 "$tmp/chromium.err"
	[ "$crc" = 0 ] && grep -qx "done=1" "$tmp/findings"
'
test_expect_success "no chromium process outlives it" '
	echo "still running: $left_over"
	[ -z "$left_over" ]
'
test_expect_success "chromium kept its profile and caches in the scratch dir, none in \$HOME" '
	ls "$tmp/profile" | head -n 5
	[ -n "$(ls -A "$tmp/profile")" ] || exit 1
	new=$(find "$real_home/.config/chromium" "$real_home/.cache/chromium" "$real_home/.pki" \
		-newer "$tmp/stamp" 2>/dev/null | head -n 5)
	echo "new under $real_home: $new"
	[ -z "$new" ]
'
test_expect_success "the probe measured every page in a 1280x800 frame" '
	grep "\.error=" "$tmp/findings"
	for f in $frames; do
		[ "$(sed -n "s/^$f\.viewport=//p" "$tmp/findings")" = 1280x800 ] || { echo "$f: not measured at 1280x800"; exit 1; }
	done
	! grep -q "\.error=" "$tmp/findings"
'
grep "^cfg\." "$tmp/findings" | test_note

# ---- the checks, each a function of one frame's findings ---------------------
val() { sed -n "s/^$1\.$2=//p" "$tmp/findings" | head -n 1; }
is_int() { [ -n "$1" ] && [ "$1" -eq "$1" ] 2>/dev/null; }
# first_screen F: the verdict, the first failure entry (or "no failures")
# and the first matrix row end within the first 800px
first_screen() {
	for k in verdict_bottom failures_first_bottom matrix_row1_bottom; do
		v=$(val "$1" "$k")
		echo "$k=$v"
		is_int "$v" && [ "$v" -gt 0 ] && [ "$v" -le 800 ] || return 1
	done
}
# fail_red F: a FAIL cell says FAIL, is reddish and unlike a pass cell
rgb() { echo "$1" | sed -n 's/^rgba\{0,1\}(\([0-9]*\), \([0-9]*\), \([0-9]*\).*/\1 \2 \3/p'; }
fail_red() {
	fb=$(val "$1" fail_cell_bg) pb=$(val "$1" pass_cell_bg) ft=$(val "$1" fail_cell_text)
	echo "FAIL cell: $fb \"$ft\"; pass cell: $pb"
	[ "$ft" = FAIL ] && [ "$fb" != "$pb" ] || return 1
	set -- $(rgb "$fb")
	[ $# = 3 ] && [ "$1" -ge 200 ] && [ $(($1 - $2)) -ge 40 ] && [ $(($1 - $3)) -ge 40 ]
}
# folded F: the fingerprint's table is in a closed details, its rows take
# no room, its summary does, and it sits below the matrix
folded() {
	inside=$(val "$1" fp_in_details) open=$(val "$1" fp_open) rows=$(val "$1" fp_rows)
	rh=$(val "$1" fp_rows_height) rv=$(val "$1" fp_rows_visible) sh=$(val "$1" fp_summary_height)
	ft=$(val "$1" fp_top) mb=$(val "$1" matrix_bottom)
	echo "in details: $inside, open: $open, $rows rows, $rv visible, adding $rh px, summary height $sh, top $ft (matrix ends at $mb)"
	[ "$inside" = yes ] && [ "$open" = false ] && is_int "$rows" && [ "$rows" -gt 1 ] &&
	[ "$rh" = 0 ] && [ "$rv" = 0 ] && is_int "$sh" && [ "$sh" -gt 0 ] && is_int "$ft" && is_int "$mb" && [ "$ft" -ge "$mb" ]
}
verdict_is() { w=$(val "$1" verdict_word); echo "verdict: $w"; [ "$w" = "$2" ]; }
no_sideways() {
	sw=$(val "$1" scroll_width) cw=$(val "$1" client_width)
	echo "scroll width $sw, client width $cw"
	is_int "$sw" && is_int "$cw" && [ "$sw" -le "$cw" ]
}
# rejects CHECK FRAME: CHECK fails on FRAME; what it measured is noted
rejects() {
	if grep -qx "$2" "$tmp/unmade"; then
		echo "the broken page $2 could not be made: the substitution no longer matches the page"
		return 1
	fi
	"$@" >"$tmp/.rejects" 2>&1
	r=$?
	test_note <"$tmp/.rejects"
	[ "$r" != 0 ]
}

test_expect_success "two configurations: verdict, failures and the matrix's first row on the first screen" 'first_screen cfg'
test_expect_success "two configurations: the verdict says FAIL" 'verdict_is cfg FAIL'
test_expect_success "a FAIL cell says FAIL and is reddish, unlike a pass cell" 'fail_red cfg'
test_expect_success "the fingerprint is folded in a closed details below the matrix" 'folded cfg'
test_expect_success "the page does not scroll sideways at 1280px" 'no_sideways cfg'
test_expect_success "a clean run: PASS, \"no failures\" and the matrix on the first screen" '
	verdict_is pass PASS && first_screen pass && folded pass
'
test_expect_success "the checks reject a page with the fingerprint on top" 'rejects folded fptop'
test_expect_success "the checks reject a page with the fingerprint open" 'rejects folded fpopen'
test_expect_success "the checks reject a page whose matrix starts below the first screen" 'rejects first_screen reqsfirst'
test_expect_success "the checks reject a FAIL cell coloured as a pass" 'rejects fail_red samecolour'
test_expect_success "the broken pages are otherwise whole (each breaks one thing)" '
	[ ! -s "$tmp/unmade" ] || { echo "not made: $(cat "$tmp/unmade")"; exit 1; }
	first_screen fptop && fail_red fptop && first_screen fpopen &&
	folded reqsfirst && fail_red reqsfirst && folded samecolour && first_screen samecolour
'
test_done
