#!/bin/sh
# SPDX-License-Identifier: MIT
# t7011: the README is the map: every relative link of README.md, the
# manuals doc/*.md and testkit/README.md reaches a file of the checkout (a
# Markdown link or image, `[text](path)`, resolved from the file's folder),
# and every manual the README names exists. The check can fail: a scratch
# tree with a broken link and a missing manual is refused, naming both.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"

# links ROOT: one line per broken link, FILE: TARGET; the files are those
# of the map and the manuals.
links() {
	for f in "$1/README.md" "$1"/doc/*.md "$1/testkit/README.md"; do
		[ -f "$f" ] || continue
		rel=${f#"$1"/}
		dir=$(dirname "$f")
		# every ](target) on a line, one a line; outside code spans and
		# blocks a Markdown link has no spaces in its target
		awk -F "]\\(" '{ for (i = 2; i <= NF; i++) if (match($i, /^[^) ]*\)/)) print substr($i, 1, RLENGTH - 1) }' "$f" |
		while read -r t; do
			case $t in
			http://*|https://*|mailto:*|'#'*|'') continue ;;
			esac
			t=${t%%#*}
			[ -e "$dir/$t" ] || echo "$rel: $t"
		done
	done
}

# manuals ROOT: the manuals README.md names as doc/NAME.md or DIR/README.md
# in its text, one line per missing one
manuals() {
	grep -o '[a-z]*/[a-z-]*\.md\|[a-z]*/README\.md' "$1/README.md" | sort -u |
		while read -r m; do [ -f "$1/$m" ] || echo "README.md names $m"; done
}

links "$src" >"$tl_tmp/links"
manuals "$src" >"$tl_tmp/manuals"
test_expect_success "every relative link of the README and the manuals reaches a file" '
	cat "$tl_tmp/links"; ! [ -s "$tl_tmp/links" ]
'
test_expect_success "every manual the README names exists" '
	cat "$tl_tmp/manuals"; ! [ -s "$tl_tmp/manuals" ]
'

t=$tl_tmp/tree
mkdir -p "$t/doc" "$t/testkit"
printf '# x\nSee [the targets](doc/targets.md) and doc/gone.md.\n![shot](doc/shot.png)\n' >"$t/README.md"
printf 'Back to [the map](../README.md#x), [a test](../testkit/README.md), [out](https://example.org/).\n' >"$t/doc/targets.md"
printf '[lost](../nowhere.md)\n' >"$t/testkit/README.md"
links "$t" >"$tl_tmp/t.links"
manuals "$t" >"$tl_tmp/t.manuals"
test_expect_success "a broken link is named with its file, a good one is not" '
	cat "$tl_tmp/t.links"
	grep -qx "README.md: doc/shot.png" "$tl_tmp/t.links" &&
		grep -qx "testkit/README.md: ../nowhere.md" "$tl_tmp/t.links" &&
		[ "$(wc -l <"$tl_tmp/t.links")" -eq 2 ]
'
test_expect_success "a manual the README names that is not there is named" '
	cat "$tl_tmp/t.manuals"
	[ "$(cat "$tl_tmp/t.manuals")" = "README.md names doc/gone.md" ]
'
test_done
