#!/bin/sh
# SPDX-License-Identifier: MIT
# t7303: ci/install-deps decides right, against stub dpkg-query/id/apt-get
# in a private PATH (nothing is installed): quiet when all is present,
# names what is missing, installs only that with one `apt-get update`, and
# when it cannot install prints the exact apt-get command and fails. The table
# (--table) has three fields a row and only known groups, and each group's
# packages (--packages) are those of its rows; a report names the group and
# the commands of each missing package; a missing chromium (group browser,
# which make check installs) is named, so make check stops rather than
# t7210 skipping.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
deps=$src/ci/install-deps
. "$src/testkit/sh/test-lib.sh"
tmp=$tl_tmp
bin=$tmp/bin
mkdir -p "$bin"
# dpkg-query: every package is "ii" except those in $STUB_MISSING.
cat >"$bin/dpkg-query" <<'STUB'
#!/bin/sh
for a in "$@"; do
	case $a in -*) continue ;; esac
	case " $STUB_MISSING " in *" $a "*) echo "dpkg-query: no packages found matching $a" >&2 ;;
	*) echo "ii  $a" ;; esac
done
STUB
printf '#!/bin/sh\necho "${STUB_UID:-0}"\n' >"$bin/id"
printf '#!/bin/sh\necho "apt-get $*" >>"$STUB_LOG"\n' >"$bin/apt-get"
chmod +x "$bin"/*
ln -s "$(command -v sed)" "$bin/sed"
ln -s "$(command -v awk)" "$bin/awk"
export STUB_LOG="$tmp/apt.log" STUB_MISSING="" STUB_UID=0
run() { PATH=$bin "$deps" "$@" >"$tmp/out" 2>&1; echo $? >"$tmp/rc"; }
rc() { cat "$tmp/rc"; }

run --check
test_expect_success "all present: --check exits 0 and prints nothing" '
	cat "$tmp/out"
	[ "$(rc)" = 0 ] && [ ! -s "$tmp/out" ]
'
run
test_expect_success "all present: install is a no-op (no apt-get call, no output)" '
	cat "$tmp/out"
	[ "$(rc)" = 0 ] && [ ! -s "$tmp/out" ] && [ ! -e "$STUB_LOG" ]
'

STUB_MISSING="libcmocka-dev lcov"
run --check build
test_expect_success "--check names the missing package of the group and exits 1" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && grep -q "missing Debian packages: libcmocka-dev$" "$tmp/out"
'
run --check -q build
test_expect_success "--check -q is silent" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && [ ! -s "$tmp/out" ]
'
run --check valgrind
test_expect_success "groups are honoured: valgrind group complete" '
	cat "$tmp/out"
	[ "$(rc)" = 0 ]
'

STUB_UID=1000
run build coverage
test_expect_success "not root: prints the exact command, exits 1, installs nothing" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && grep -qx "ci/install-deps: run as root:  apt-get update && apt-get install -y --no-install-recommends libcmocka-dev lcov" "$tmp/out" && [ ! -e "$STUB_LOG" ]
'

STUB_UID=0
run
test_expect_success "root: one apt-get update, then install of exactly the missing packages" '
	cat "$tmp/out"
	[ "$(rc)" = 0 ] && [ "$(cat "$STUB_LOG")" = "apt-get update -q
apt-get install -y -q --no-install-recommends libcmocka-dev lcov" ]
'

rm -f "$bin/apt-get" "$STUB_LOG"
run build
test_expect_success "no apt-get: prints the command and exits 1" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && grep -q "apt-get install -y --no-install-recommends libcmocka-dev" "$tmp/out"
'

run --check nosuchgroup
test_expect_success "an unknown group is a usage error (exit 2)" '
	cat "$tmp/out"
	[ "$(rc)" = 2 ]
'

STUB_MISSING="abigail-tools"
STUB_UID=1000
run abi
test_expect_success "not root: each missing package is named with its group and commands" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && grep -qx "ci/install-deps:   abi: abigail-tools (provides abidiff abidw)" "$tmp/out"
'

# the browser group (t7210's chromium): make check names it, so a missing
# chromium stops make check before the tests instead of skipping t7210
STUB_MISSING="chromium"
run build test browser abi valgrind
test_expect_success "not root, chromium missing: the browser group names it and fails" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && grep -qx "ci/install-deps:   browser: chromium (provides chromium)" "$tmp/out"
'
make_deps=$(sed -n 's/^DEPS_check *:= *//p' "$src/Makefile")
test_expect_success "make check installs the browser group" '
	echo "DEPS_check: $make_deps"
	case " $make_deps " in *" browser "*) ;; *) false ;; esac
'

# the kmod group (the guest kernel's headers for ixrc.ko): make check names
# it, so a machine without them is told what to install, never skipped
STUB_MISSING="linux-headers-amd64" STUB_UID=1000
kg=kmod
run build test "$kg"
test_expect_success "not root, the headers missing: the kmod group names linux-headers-amd64 and the command" '
	cat "$tmp/out"
	[ "$(rc)" = 1 ] && grep -qx "ci/install-deps:   kmod: linux-headers-amd64" "$tmp/out" &&
	grep -q "apt-get install -y --no-install-recommends linux-headers-amd64$" "$tmp/out"
'
STUB_UID=0
test_expect_success "make check installs the kmod group (t5110, t6104, t6105 build and boot ixrc.ko)" '
	case " $make_deps " in *" $kg "*) ;; *) false ;; esac
'

sh "$deps" --table >"$tmp/table" 2>&1
test_expect_success "--table: NAME PACKAGE GROUP rows, groups known, abidiff in abi" '
	cat "$tmp/table"
	[ -s "$tmp/table" ] && awk "NF != 3 || \$3 !~ /^(build|test|browser|valgrind|coverage|abi|deb|rxe|vm|wire|slurm|fuzz|chroot|kmod|required)\$/ { bad = 1 } END { exit bad }" "$tmp/table" &&
	grep -Eq "^abidiff +abigail-tools +abi$" "$tmp/table"
'

sh "$deps" --packages abi >"$tmp/out" 2>&1
test_expect_success "--packages abi: the abi group's packages" '
	cat "$tmp/out"
	[ "$(cat "$tmp/out")" = abigail-tools ]
'
sh "$deps" --packages >"$tmp/out" 2>&1
test_expect_success "--packages: every package of the default groups (all but fuzz, chroot and kmod), each once" '
	cat "$tmp/out"
	[ "$(tr " " "\n" <"$tmp/out" | sort)" = "$(awk "\$3 != \"required\" && \$3 != \"fuzz\" && \$3 != \"chroot\" && \$3 != \"kmod\" { print \$2 }" "$tmp/table" | sort -u)" ]
'
test_done
