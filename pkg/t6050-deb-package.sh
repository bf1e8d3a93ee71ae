#!/bin/sh
# SPDX-License-Identifier: MIT
# t6050: the Debian package. make check builds it first when this test is
# to run (make deb-package, into $IBVCT_BUILD/deb/). lintian reports no
# error and no warning; the control fields name ibvct at tools/ibvct/version's
# version; unpacked with dpkg-deb -x into a scratch root (nothing
# installed), the tree holds the reference library only in its private dir,
# both targets' suites, the ABI tables and a man page per command, and its
# ibvct works in place: --help of it and of every command, `ibvct run --
# ibv_devices` on the package's own library and plugin, `ibvct abi-check`
# with the checkout's findings, and `ibvct conformance` with the verdicts
# of the checkout's run (tools/ibvct/ibvct conformance, what make conformance runs).
# And the package is the Makefile's install map (make install-map), no more.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
: "${IBVCT_BUILD:?run through make check}"
deb=$(ls "$IBVCT_BUILD"/deb/ibvct_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || test_bail "no package in $IBVCT_BUILD/deb/ (make check makes it: make deb-package)"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
cmds='run conformance abi-check certify compare verify'

# The package's programs run with none of make check's pointers into the
# checkout (IBVCT_SRC, IBVCT_BUILD, ...), and unsanitized (the package is a
# plain build) and without valgrind (the suites get it as make check's own
# programs).
pkg_env() {
	env -u IBVCT_SRC -u IBVCT_BUILD -u IBVCT_LIBDIR -u IBVCT_PROVIDER -u IBVCT_PRELOAD \
		-u IBVCT_SANITIZE -u IBVCT_VALGRIND -u LD_PRELOAD -u LD_LIBRARY_PATH "$@"
}
IBVCT_HOSTS_DIR=$tl_tmp/hosts
export IBVCT_HOSTS_DIR

# ---- lintian and the control fields -------------------------------------------
# (lintian leaves mldbm-elf-* files in its TMPDIR: they go with the scratch dir)
mkdir -p "$tl_tmp/lintian"
run_cmd env TMPDIR="$tl_tmp/lintian" lintian --fail-on error,warning "$deb"
test_expect_success "lintian: no error and no warning" '
	rc_is 0 && ! grep -E "^[EW]: " "$tl_out"
'
version=$(sh "$src/tools/ibvct/version")
test_expect_success "control: package ibvct, version $version, Depends with ibverbs-utils" '
	[ "$(dpkg-deb -f "$deb" Package)" = ibvct ] &&
	[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] &&
	dpkg-deb -f "$deb" Depends | grep -q "ibverbs-utils"
'

# ---- the unpacked tree ---------------------------------------------------------
root=$tl_tmp/root
run_cmd dpkg-deb -x "$deb" "$root"
lib=$root/usr/lib/$ma/ibvct
ibvct=$root/usr/bin/ibvct
test_expect_success "dpkg-deb -x unpacks it" 'rc_is 0 && [ -x "$ibvct" ]'
test_expect_success "the reference library is in its private dir only (no system path shadowed)" '
	[ -f "$lib/lib/libibverbs.so.1" ] &&
	found=$(cd "$root" && find . -name "libibverbs.so*" | sort | tr "\n" " ") &&
	echo "found: $found" &&
	[ "$found" = "./usr/lib/$ma/ibvct/lib/libibverbs.so ./usr/lib/$ma/ibvct/lib/libibverbs.so.1 " ]
'
test_expect_success "plugin, daemon, launcher; suites of both targets as built here" '
	[ -f "$lib/lib/ibvct/libibvct-fake.so" ] && [ -x "$lib/bin/ibvct-fkd" ] &&
	[ -x "$lib/bin/ibvct-run" ] && [ -L "$root/usr/bin/ibvct-run" ] &&
	for t in ref system; do
		want=$(cd "$IBVCT_BUILD/suites/$t" && ls) && got=$(cd "$lib/suites/$t" && ls) &&
		[ -n "$want" ] && [ "$want" = "$got" ] || { echo "$t: want $want, got $got"; exit 1; }
	done
'
test_expect_success "ABI tables, expectations and report tools in share/ibvct" '
	for f in fixtures/abi/rdma-core-44.table fixtures/abi/rdma-core-44.symbols \
		fixtures/expect/mlx5.txt fixtures/requirements.txt fixtures/mustpass.txt \
		tools/report/report-lib.pm tools/report/certify tools/report/compare-runs \
		tools/report/verify-bundle tools/report/report-html tools/ibvct/conformance \
		tools/abi/abi-gate testkit/sh/test-exec; do
		[ -f "$root/usr/share/ibvct/$f" ] || { echo "missing: $f"; exit 1; }
	done
'
test_expect_success "a man page for ibvct and each command" '
	for m in ibvct $(printf "ibvct-%s " $cmds); do
		[ -f "$root/usr/share/man/man1/$m.1.gz" ] || { echo "missing: $m.1.gz"; exit 1; }
	done
'

# ---- the install map -----------------------------------------------------------
# The Makefile states the install layout once (INSTALL_MAP; make install-map
# prints it: MODE SOURCE INSTALLED a row). The package is that table: every
# row in place with its mode (man pages gzipped by pkg/deb-build), the
# checkout's files as they are, and nothing else but the doc dir
# pkg/deb-build adds. Checked before anything runs from the tree.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$src" NODEPS=1 \
	INSTALL_BUILD=1 PREFIX=/usr LIBDIR="/usr/lib/$ma" install-map >"$tl_tmp/map" 2>"$tl_tmp/map.err"
map_rc=$?
test_expect_success "every row of the install map is in the package, with its mode and content" '
	[ "$map_rc" = 0 ] && [ "$(grep -c . "$tl_tmp/map")" -gt 50 ] ||
		{ echo "make install-map: status $map_rc"; cat "$tl_tmp/map.err"; exit 1; }
	while read -r mode from to; do
		[ -n "$mode" ] || continue
		p=$root$to
		case $to in */man/man1/*.1) p=$p.gz ;; esac
		case $mode in
		x) [ -f "$p" ] && [ -x "$p" ] ;;
		r) [ -f "$p" ] && [ ! -x "$p" ] ;;
		s) [ -f "$p" ] && if [ "$(head -c 2 "$src/$from")" = "#!" ]; then [ -x "$p" ]; else [ ! -x "$p" ]; fi ;;
		o) [ -f "$p" ] ;;
		l) [ -L "$p" ] && [ "$(readlink -f "$p")" = "$(readlink -f "$root$from")" ] ;;
		*) false ;;
		esac || { echo "not as the map says: $mode $from $to"; exit 1; }
		case $mode:$from in
		[rs]:build*|*.1) ;;
		[rs]:*) cmp "$src/$from" "$p" || exit 1 ;;
		esac
	done <"$tl_tmp/map"
'
test_expect_success "the package holds nothing the install map does not name (but its doc dir)" '
	awk "NF == 3 { print \$3 }" "$tl_tmp/map" | LC_ALL=C sort >"$tl_tmp/map.paths" &&
	(cd "$root" && find . ! -type d) | sed "s|^\.||; s|\(/man/man1/.*\.1\)\.gz\$|\1|" |
		grep -v "^/usr/share/doc/ibvct/" | LC_ALL=C sort >"$tl_tmp/pkg.paths" &&
	extra=$(LC_ALL=C comm -13 "$tl_tmp/map.paths" "$tl_tmp/pkg.paths") &&
	{ [ -z "$extra" ] || { echo "not in the map: $extra"; exit 1; }; }
'

# ---- ibvct in place ------------------------------------------------------------
run_cmd pkg_env "$ibvct" --help
test_expect_success "ibvct --help: every command, the unpacked trees" '
	rc_is 0 && for c in $cmds; do out_has "^  $c " || { echo "no $c"; exit 1; }; done &&
	out_has "^source tree: $root/usr/share/ibvct\$" && out_has "^build tree: +$lib\$"
'
for c in $cmds; do
	run_cmd pkg_env "$ibvct" "$c" --help
	test_expect_success "ibvct $c --help" 'rc_is 0 && out_has "^usage: ibvct $c "'
done
run_cmd pkg_env "$ibvct" --version
test_expect_success "ibvct --version: $version" '[ "$(cat "$tl_out")" = "ibvct $version" ]'

# xrc-vm needs a module built for the guest's kernel: a checkout's target
# only, neither listed nor taken by the package's ibvct (before any folder)
run_cmd pkg_env "$ibvct" --help
cp "$tl_out" "$tl_tmp/help"
run_cmd pkg_env "$ibvct" conformance --help
test_expect_success "the package's ibvct lists the targets ref, system and rxe-vm, not xrc-vm" '
	cat "$tl_tmp/help" "$tl_out" | grep -n "xrc" && exit 1
	out_has "^usage: ibvct conformance \[--target ref\|system\|rxe-vm\] "
'
run_cmd pkg_env "$ibvct" conformance --target xrc-vm --out "$tl_tmp/xrc"
test_expect_success "ibvct conformance --target xrc-vm: refused, saying why, and no folder made" '
	rc_is 2 && err_has "only from a source checkout of ibvct" && [ ! -e "$tl_tmp/xrc" ]
'
run_cmd pkg_env "$ibvct" run --target xrc-vm -- true
test_expect_success "ibvct run --target xrc-vm: refused the same way" '
	rc_is 2 && err_has "only from a source checkout of ibvct"
'
run_cmd pkg_env "$ibvct" compare
test_expect_success "the report tools name themselves as the package's commands: ibvct compare" '
	rc_is 2 && err_has "^usage: ibvct compare "
'

run_cmd pkg_env "$ibvct" run -- ibv_devices
test_expect_success "ibvct run -- ibv_devices lists fake0" '
	rc_is 0 && out_has "^[[:space:]]+fake0[[:space:]]+[0-9a-f]{16}\$"
'
run_cmd pkg_env "$ibvct" run --script "$root/usr/share/ibvct/fixtures/scripts/two-devices.fps" \
	-- ibv_devices
test_expect_success "ibvct run with the packaged two-device script lists two devices" '
	rc_is 0 && [ "$(out_count "^[[:space:]]+fake[01][[:space:]]+[0-9a-f]{16}\$")" = 2 ]
'
run_cmd pkg_env "$ibvct" run --private -- env LD_DEBUG=libs ibv_devices
test_expect_success "ibvct run: the package's library and plugin are loaded, nothing of the checkout" '
	inits=$(sed -n "s/.*calling init: //p" "$tl_err")
	ours=$(readlink -f "$lib/lib/libibverbs.so.1") plug=$(readlink -f "$lib/lib/ibvct/libibvct-fake.so")
	seen=0
	for f in $inits; do
		r=$(readlink -f "$f")
		[ "$r" = "$ours" ] || [ "$r" = "$plug" ] && seen=$((seen + 1))
		case $r in
		"$ours"|"$plug") ;;
		*/libibverbs*|"$src"/*) echo "loaded: $r"; exit 1 ;;
		esac
	done
	[ $seen = 2 ]
'

# abi-check: the checkout's findings; the stripped library has no DWARF, so
# abidiff is a skip (with its reason) and the rest the same.
run_cmd sh "$src/tools/ibvct/ibvct" abi-check
cp "$tl_out" "$tl_tmp/abi.src"
run_cmd pkg_env "$ibvct" abi-check
test_expect_success "ibvct abi-check: passes, the checkout's findings, abidiff skipped for lack of DWARF" '
	rc_is 0 && grep -q "^SKIP abidiff: .* has no DWARF\$" "$tl_out" &&
	grep -q "=> compatible changes only (status 4)\$" "$tl_out" &&
	grep -Ev "^(SKIP abidiff|abi-gate: )" "$tl_tmp/abi.src" >"$tl_tmp/abi.src.f" &&
	grep -Ev "^(SKIP abidiff|abi-gate: )" "$tl_out" >"$tl_tmp/abi.pkg.f" &&
	[ -s "$tl_tmp/abi.src.f" ] && diff "$tl_tmp/abi.src.f" "$tl_tmp/abi.pkg.f"
'

# conformance: the package's run and the checkout's (the code path of make
# conformance), at once.
conf() {	# conf NAME COMMAND...: a run into $tl_tmp/NAME, its status in NAME.rc
	c_name=$1
	shift
	"$@" conformance --out "$tl_tmp/$c_name" \
		>"$tl_tmp/$c_name.out" 2>&1
	echo $? >"$tl_tmp/$c_name.rc"
}
test_parallel 2 conf pkg pkg_env "$ibvct"
test_parallel 2 conf src env -u IBVCT_VALGRIND sh "$src/tools/ibvct/ibvct"
test_parallel_wait
test_expect_success "ibvct conformance from the unpacked tree passes" '
	[ "$(cat "$tl_tmp/pkg.rc")" = 0 ] || { tail -n 40 "$tl_tmp/pkg.out"; exit 1; }
'
test_expect_success "its report names the package's library and provider" '
	grep -F "library:  $lib/lib/libibverbs.so.1" "$tl_tmp/pkg/summary.txt" &&
	grep -F "provider: $lib/lib/ibvct/libibvct-fake.so" "$tl_tmp/pkg/summary.txt"
'
test_expect_success "the checkout's run passes too" '
	[ "$(cat "$tl_tmp/src.rc")" = 0 ] || { tail -n 40 "$tl_tmp/src.out"; exit 1; }
'
test_expect_success "the same verdicts: programs, tests and requirements (results.tsv, summary)" '
	diff "$tl_tmp/src/results.tsv" "$tl_tmp/pkg/results.tsv" &&
	grep -E "^(ok|FAIL) |^verdict:|^programs:|^requirements:|^mandatory" "$tl_tmp/src/summary.txt" >"$tl_tmp/v.src" &&
	grep -E "^(ok|FAIL) |^verdict:|^programs:|^requirements:|^mandatory" "$tl_tmp/pkg/summary.txt" >"$tl_tmp/v.pkg" &&
	[ "$(grep -c "^ok " "$tl_tmp/v.pkg")" -gt 60 ] && diff "$tl_tmp/v.src" "$tl_tmp/v.pkg"
'
test_done
