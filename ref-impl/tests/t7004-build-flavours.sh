#!/bin/sh
# SPDX-License-Identifier: MIT
# t7004: the Makefile keeps build flavours apart (plain in build/, SANITIZE=1
# in build-san/, COVERAGE=1 in build-cov/, each with its own flags) and runs
# the deps check before compiling. The deps check is no stamp file: it is
# in every plan, also when nothing is to be rebuilt, with the groups of the
# goals asked for. Reads `make -nB` plans only; builds nothing.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
plan() {	# plan VARS...: the commands `make all` would run, one per line
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u COVERAGE -u VALGRIND -u NODEPS -u INSTALL_BUILD make -nB -C "$src" --no-print-directory "$@" all 2>&1
}
has() { printf '%s\n' "$1" | grep -q -- "$2"; }

echo "1..7"

p=$(plan NODEPS=1)
if has "$p" ' -o build/obj/' && ! has "$p" 'build-san/' && ! has "$p" '-fsanitize'; then
	ok "plain build: objects in build/, no sanitizer flags"
else not_ok "plain build: objects in build/, no sanitizer flags"; printf '%s\n' "$p" | head -n 5 | sed 's/^/# /'; fi

p=$(plan NODEPS=1 SANITIZE=1)
if has "$p" ' -o build-san/obj/' && has "$p" '-fsanitize=address,undefined' && ! has "$p" ' -o build/'; then
	ok "SANITIZE=1: objects in build-san/ with ASan+UBSan"
else not_ok "SANITIZE=1: objects in build-san/ with ASan+UBSan"; printf '%s\n' "$p" | head -n 5 | sed 's/^/# /'; fi

p=$(plan NODEPS=1 COVERAGE=1)
if has "$p" ' -o build-cov/obj/' && has "$p" '--coverage' && ! has "$p" ' -o build/'; then
	ok "COVERAGE=1: objects in build-cov/ with --coverage"
else not_ok "COVERAGE=1: objects in build-cov/ with --coverage"; printf '%s\n' "$p" | head -n 5 | sed 's/^/# /'; fi

p=$(plan)
first_cc=$(printf '%s\n' "$p" | grep -n -- ' -c .*\.c -o ' | head -n 1 | cut -d: -f1)
deps_at=$(printf '%s\n' "$p" | grep -n "sh ci/install-deps " | head -n 1 | cut -d: -f1)
if [ -n "$deps_at" ] && [ -n "$first_cc" ] && [ "$deps_at" -lt "$first_cc" ]; then
	ok "the deps check runs before the first compile"
else not_ok "the deps check runs before the first compile (deps at ${deps_at:-none}, first cc at ${first_cc:-none})"; fi

p=$(plan NODEPS=1)
if ! has "$p" 'ci/install-deps'; then ok "NODEPS=1 skips the deps check"
else not_ok "NODEPS=1 skips the deps check"; fi

# goalplan GOAL VARS...: what `make GOAL` would run now (no -B: nothing forced).
goalplan() {
	g=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u COVERAGE -u VALGRIND -u NODEPS -u INSTALL_BUILD make -n -C "$src" --no-print-directory "$@" "$g" 2>&1
}
p=$(goalplan help)
if has "$p" 'ci/install-deps'; then not_ok "make help checks no packages"
else p=$(goalplan all)
	if has "$p" '^sh ci/install-deps build$'; then ok "every make run checks the packages of its goal (all: build), built or not"
	else not_ok "every make run checks the packages of its goal (all: build)"; printf '%s\n' "$p" | head -n 5 | sed 's/^/# /'; fi
fi
p=$(goalplan conformance)
if has "$p" '^sh ci/install-deps abi build test valgrind$'; then ok "make conformance installs build, test, abi and valgrind"
else not_ok "make conformance installs build, test, abi and valgrind"; printf '%s\n' "$p" | grep install-deps | sed 's/^/# /'; fi
