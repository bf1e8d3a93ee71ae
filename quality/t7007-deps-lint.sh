#!/bin/sh
# SPDX-License-Identifier: MIT
# t7007: every external program the project runs comes from a package its
# goal installs (quality/lint-deps against ci/install-deps' table and the
# Makefile's DEPS_<goal>), and the lint can fail: a scratch tree with its own
# Makefile, table and test must be refused for an unlisted command, a
# program of a group its goal does not install, an unlisted program run
# through a function, an unknown Perl module, an unlisted command in the
# body of a test_expect_success (quoted in pieces), an unlisted command in a
# recipe, a table row whose package lacks the command, and a file of the
# build tree that a goal's test uses but the goal does not build.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
lint=$src/quality/lint-deps
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp

test_expect_success "every command, module and goal of the tree is covered by ci/install-deps" '
	perl "$lint" -v "$src" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; exit 1; }
	test_note <"$tmp/lint.out"
'

t=$tmp/tree
mkdir -p "$t/ci" "$t/ref-impl/tests"
cp "$src/ci/install-deps" "$t/ci/install-deps"
# make_tree DEPS RECIPE: a Makefile whose check installs DEPS and runs the
# test, then RECIPE.
make_tree() {
	printf 'DEPS_check := %s\n.PHONY: check deps\ncheck: | deps\n\tsh ref-impl/tests/t9001-a.sh\n\t%s\ndeps:\n\tsh ci/install-deps $(DEPS_check)\n' \
		"$1" "$2" >"$t/Makefile"
}
# the_test LINE...: the scratch tree's one test, running LINEs.
the_test() { printf '#!/bin/sh\nwrap() { shift; "$@"; }\n' >"$t/ref-impl/tests/t9001-a.sh"
	printf '%s\n' "$@" >>"$t/ref-impl/tests/t9001-a.sh"; }
# refuses WHAT LINE: the lint fails on the scratch tree and prints LINE.
refuses() {
	want=$2
	test_expect_success "refuses $1" '
		perl "$lint" "$t" >"$tmp/out" 2>&1
		rc=$?
		echo "want: $want"
		cat "$tmp/out"
		[ $rc -eq 1 ] && grep -qxF -- "$want" "$tmp/out"
	'
}

make_tree build true
the_test 'echo hi | sort | wrap x tr a b' 'CC=${CC:-cc}; "$CC" --version'
test_expect_success "a clean scratch tree passes (essential tools, cc from build)" 'perl "$lint" "$t"'

the_test 'frobnicate --all | sort'
refuses "a command in no table and no essential package" \
	"ref-impl/tests/t9001-a.sh: runs 'frobnicate', which is not in ci/install-deps' table (NAME PACKAGE GROUP) and not in an Essential: yes package"

the_test 'xmllint --noout x.html'
refuses "a program of a group the goal does not install" \
	"make check runs xmllint (libxml2-utils, group test; via ref-impl/tests/t9001-a.sh) but installs only: build"

sed -i '/^xmllint /d' "$t/ci/install-deps"
the_test 'wrap "well-formed" xmllint --noout x.html'
refuses "an unlisted program given to a function" \
	"ref-impl/tests/t9001-a.sh: names the installed program 'xmllint', which is not in ci/install-deps' table and not in an Essential: yes package"
cp "$src/ci/install-deps" "$t/ci/install-deps"

mod=Ibvct::NoSuch  # built here, so that this file does not use it itself
the_test "perl -M${mod}Module -e 1"
refuses "an unknown Perl module" \
	"ref-impl/tests/t9001-a.sh: uses the Perl module Ibvct::NoSuchModule, which is neither in perl-base nor in ci/install-deps' table"

# a check's body is code, also when quoted in pieces
the_test 'test_expect_success() { :; }'
cat >>"$t/ref-impl/tests/t9001-a.sh" <<'EOF'
test_expect_success "a check" 'echo '\''a b'\''
	frobnicate3 --all'
EOF
refuses "a command inside a test_expect_success body" \
	"ref-impl/tests/t9001-a.sh: runs 'frobnicate3', which is not in ci/install-deps' table (NAME PACKAGE GROUP) and not in an Essential: yes package"

the_test 'true'
make_tree "build test" 'frobnicate2 --report'
refuses "an unlisted command in a Makefile recipe" \
	"make check: its recipes run 'frobnicate2', which is not in ci/install-deps' table"

# check 3: a file of the build tree a goal's script uses, the goal builds
tool=ibvct-t7007-tool
the_test "\"\$build/bin/$tool\" --x"
refuses "a build file a goal's test uses and the goal does not build" \
	"make check: ref-impl/tests/t9001-a.sh uses build/bin/$tool, which the goal does not build"
make_tree build "cc -o build/bin/$tool tool.c"
test_expect_success "the same tree passes once the goal builds that file" 'perl "$lint" "$t"'

the_test 'true'
make_tree build true
sed -i 's/^xmllint .*/xmllint coreutils test/' "$t/ci/install-deps"
refuses "a table row whose package does not install the command" \
	"table: xmllint: package coreutils does not install a command of that name"

test_done
