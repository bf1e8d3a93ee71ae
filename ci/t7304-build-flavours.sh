#!/bin/sh
# SPDX-License-Identifier: MIT
# t7304: the Makefile keeps build flavours apart (plain in build/, SANITIZE=1
# in build-san/, COVERAGE=1 in build-cov/, each with its own flags) and runs
# the deps check before compiling. The deps check is no stamp file: it is
# in every plan, also when nothing is to be rebuilt, with the groups of the
# goals asked for. Reads `make -nB` plans only; builds nothing.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
plan() {	# plan VARS...: the commands `make all` would run, one per line
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u COVERAGE -u VALGRIND -u NODEPS -u INSTALL_BUILD make -nB -C "$src" --no-print-directory "$@" all 2>&1
}
has() { printf '%s\n' "$1" | grep -q -- "$2"; }
# head5 PLAN: its first lines, for a failed check
head5() { printf '%s\n' "$1" | head -n 5; }

p=$(plan NODEPS=1)
test_expect_success "plain build: objects in build/, no sanitizer flags" '
	head5 "$p"
	has "$p" " -o build/obj/" && ! has "$p" "build-san/" && ! has "$p" "-fsanitize"
'

p=$(plan NODEPS=1 SANITIZE=1)
test_expect_success "SANITIZE=1: objects in build-san/ with ASan+UBSan" '
	head5 "$p"
	has "$p" " -o build-san/obj/" && has "$p" "-fsanitize=address,undefined" && ! has "$p" " -o build/"
'

p=$(plan NODEPS=1 COVERAGE=1)
test_expect_success "COVERAGE=1: objects in build-cov/ with --coverage" '
	head5 "$p"
	has "$p" " -o build-cov/obj/" && has "$p" "--coverage" && ! has "$p" " -o build/"
'

p=$(plan)
first_cc=$(printf '%s\n' "$p" | grep -n -- ' -c .*\.c -o ' | head -n 1 | cut -d: -f1)
deps_at=$(printf '%s\n' "$p" | grep -n "sh ci/install-deps " | head -n 1 | cut -d: -f1)
test_expect_success "the deps check runs before the first compile" '
	echo "deps at ${deps_at:-none}, first cc at ${first_cc:-none}"
	[ -n "$deps_at" ] && [ -n "$first_cc" ] && [ "$deps_at" -lt "$first_cc" ]
'

p=$(plan NODEPS=1)
test_expect_success "NODEPS=1 skips the deps check" '! has "$p" "ci/install-deps"'

# goalplan GOAL VARS...: what `make GOAL` would run now (no -B: nothing forced).
goalplan() {
	g=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u COVERAGE -u VALGRIND -u NODEPS -u INSTALL_BUILD make -n -C "$src" --no-print-directory "$@" "$g" 2>&1
}
ph=$(goalplan help)
p=$(goalplan all)
test_expect_success "every make run checks the packages of its goal (all: build), built or not" '
	if has "$ph" "ci/install-deps"; then echo "make help checks packages"; exit 1; fi
	head5 "$p"
	has "$p" "^sh ci/install-deps build\$"
'
p=$(goalplan conformance)
test_expect_success "make conformance installs build, test, abi, valgrind and vm (the rxe-vm guest)" '
	printf "%s\n" "$p" | grep install-deps
	has "$p" "^sh ci/install-deps abi build test valgrind vm\$"
'
p=$(goalplan conformance TARGET=xrc-vm)
test_expect_success "make conformance TARGET=xrc-vm installs kmod too (the guest kernel's headers for ixrc.ko) and builds the module" '
	printf "%s\n" "$p" | grep -E "install-deps|M=.*kmod"
	has "$p" "^sh ci/install-deps abi build kmod test valgrind vm\$" &&
	has "$p" "-C /usr/src/linux-headers-[^ ]* M=.*/kmod .*modules"
'
p=$(goalplan check)
test_expect_success "make check installs kmod and builds the module (t5110, t6104, t6105)" '
	printf "%s\n" "$p" | grep -E "install-deps|M=.*kmod"
	has "$p" "^sh ci/install-deps .*kmod" &&
	has "$p" "-C /usr/src/linux-headers-[^ ]* M=.*/kmod .*modules"
'
test_done
