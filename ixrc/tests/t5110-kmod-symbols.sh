#!/bin/sh
# SPDX-License-Identifier: MIT
# t5110: the soft XRC module (ixrc) says which kernels it builds
# against, and a kernel that lacks part of its interface is named by the
# missing symbol: ixrc/Kbuild's IXRC_NEEDS holds every ib_core
# symbol the built ixrc.ko imports, and a build against a kernel that does
# not export one of them stops before compiling, naming it. The module must
# be built (make kmod; the guest kernel's headers: ci/install-deps kmod).
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
. "$src/testkit/sh/test-lib.sh"
ko=${IBVCT_XRC_KO:-$build/kmod/ixrc.ko}
kbuild=$src/ixrc/Kbuild

test_expect_success "the module is built ($ko)" '
	[ -f "$ko" ] || echo "no $ko: make kmod (it needs the guest kernel'\''s headers: ci/install-deps kmod)"
	[ -f "$ko" ]
'
needs=$(sed -n '/^IXRC_NEEDS :=/,/[^\\]$/p' "$kbuild" | sed 's/^IXRC_NEEDS :=//; s/\\$//' | tr -s ' \t\n' '\n' | sed '/^$/d')
test_expect_success 'Kbuild lists every ib_core symbol ixrc.ko imports (IXRC_NEEDS)' '
	[ -n "$needs" ] || { echo "no IXRC_NEEDS in $kbuild"; false; } || return 1
	ok=1
	for s in $(nm -u "$ko" | awk "{ print \$2 }" | grep -E "^_?_?(ib|rdma|uverbs)_"); do
		printf "%s\n" "$needs" | grep -qx "$s" || { echo "imported, not in IXRC_NEEDS: $s"; ok=0; }
	done
	[ "$ok" = 1 ]
'
test_expect_success 'the module source names the kernels it builds against' '
	grep -q "LINUX_VERSION_CODE < KERNEL_VERSION(5, 15, 0)" "$src/ixrc/ixrc_main.c" &&
	grep -q "Linux 5.15 to 6.12)" "$kbuild"
'
# the kernel build tree of the module's kernel, from its vermagic
rel=$(readelf -p .modinfo "$ko" 2>/dev/null | sed -n 's/.*\]  *vermagic=\([^ ]*\).*/\1/p' | head -n 1)
# (as a pattern: Debian 13's release names hold a "+")
rel_re=$(printf '%s' "$rel" | sed 's/[].[*^$+?(){}|\\]/\\&/g')
kdir=/usr/src/linux-headers-$rel
if [ -f "$kdir/Module.symvers" ]; then
	mkdir -p "$tl_tmp/m"
	cp "$src"/ixrc/*.c "$src"/ixrc/*.h "$tl_tmp/m/"
	sed 's/^IXRC_NEEDS := /IXRC_NEEDS := ib_no_such_export /' "$kbuild" >"$tl_tmp/m/Kbuild"
	run_cmd make -C "$kdir" M="$tl_tmp/m" modules
	test_expect_success "against $rel without one of them: the build stops naming the symbol, nothing compiled" '
		! rc_is 0 && err_has "ixrc: the kernel $rel_re in .* does not export ib_no_such_export" &&
		! ls "$tl_tmp/m"/*.o 2>/dev/null
	'
else
	test_expect_success "the kernel build tree of $ko ($kdir)" '
		echo "no $kdir/Module.symvers: ci/install-deps kmod installs it"
		false
	'
fi
test_done
