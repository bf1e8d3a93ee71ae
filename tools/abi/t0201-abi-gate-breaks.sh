#!/bin/sh
# SPDX-License-Identifier: MIT
# t0201: the ABI gate reports every injected break with the right line and
# status 12 (change + incompatible), and allowed growth as an extension with
# status 4 (change). Copies of ref-impl's include dir get one edit each (a
# member moved, a type widened, a verbs_context op inserted in the middle,
# an enum renumbered; a member appended, an op prepended to verbs_context),
# and a copy of ref-impl's library is relinked from its objects with one
# symbol left out of the version script. Symbol lists test addition and
# removal of a version node; abidiff's view of the C library's pthread
# types (its own, suppressed) against ours (reported). The baseline is rdma-core 56's, the release whose
# layout ref-impl's header has (the project's waivers for the library, whose
# verbs_register_driver@IBVERBS_1.1 is libibverbs 1.1.8's).
# (ABI-01 ABI-06 ABI-07 COMPAT-01 WR-01)
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${IBVCT_BUILD:-$src/build}
gate=$src/tools/abi/abi-gate
CC=${CC:-cc}

. "$src/testkit/sh/test-lib.sh"

# The gate's tools (make check installs them: ci/install-deps build abi).
for t in readelf:binutils:build objdump:binutils:build abidiff:abigail-tools:abi; do
	command -v "${t%%:*}" >/dev/null 2>&1 && continue
	g=${t##*:}; p=${t#*:}; p=${p%:*}
	skip_all "${t%%:*} not installed ($p, ci/install-deps $g)"
done
tmp=$tl_tmp

# mutant NAME AWKPROG: ref-impl's include dir with verbs.h edited by AWKPROG.
mutant() {
	mkdir -p "$tmp/$1"
	cp -R "$src/ref-impl/include/." "$tmp/$1/"
	awk "$2" "$src/ref-impl/include/infiniband/verbs.h" >"$tmp/$1/infiniband/verbs.h"
}

# expect NAME STATUS LINE DESCRIPTION [GATE ARGS...]: the gate on mutant NAME
# (or with GATE ARGS) exits with STATUS and prints LINE exactly.
expect() {
	name=$1 want=$2 line=$3 what=$4
	shift 4
	[ $# -eq 0 ] && set -- --include "$tmp/$name"
	sh "$gate" --baseline rdma-core-56 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	# requirement IDs ("[ABI-07]") go last on the TAP line
	ids=$(printf '%s' "$what" | sed -n 's/.* \(\[[^]]*\]\)$/ \1/p')
	[ -n "$ids" ] && what=${what% \[*}
	test_expect_success "$what: \"$line\", status $want$ids" '
		echo "status $rc"
		cat "$tmp/$name.out" "$tmp/$name.err"
		[ "$rc" -eq "$want" ] && grep -qxF "$line" "$tmp/$name.out"
	'
}
mutant moved '
	/^struct ibv_mr \{/ { in_mr = 1 }
	in_mr && /^\tuint32_t lkey;/ { held = $0; next }
	in_mr && /^\tuint32_t rkey;/ { print; print held; next }
	/^\};/ { in_mr = 0 }
	{ print }'
expect moved 12 "BREAK ibv_mr.lkey offset 36 -> 40" "member moved (ibv_mr.lkey after rkey) [ABI-07]"

mutant widened '
	/^struct ibv_send_wr \{/ { in_wr = 1 }
	in_wr && /^\t*uint32_t remote_srqn;/ { sub(/uint32_t/, "uint64_t") }
	/^\};/ { in_wr = 0 }
	{ print }'
expect widened 12 "BREAK ibv_send_wr.qp_type.xrc.remote_srqn size 4 -> 8" \
	"type widened (remote_srqn to 64 bits) [WR-01 ABI-06]"

mutant inserted '
	/^struct verbs_context \{/ { in_vc = 1 }
	{ print }
	in_vc && /^\tint \(\*close_xrcd\)/ { print "\tvoid *(*ibvct_inserted)(void);" }
	/^\};/ { in_vc = 0 }'
expect inserted 12 "BREAK verbs_context.close_xrcd from_context -24 -> -32" \
	"verbs_context op inserted after close_xrcd moves close_xrcd [COMPAT-01 ABI-07]"
test_expect_success "the inserted op itself and every op above it are reported [COMPAT-01]" '
	cat "$tmp/inserted.out"
	grep -q "^BREAK verbs_context.ibvct_inserted inserted at from_context -24 " "$tmp/inserted.out" &&
		grep -qx "BREAK verbs_context.open_xrcd from_context -32 -> -40" "$tmp/inserted.out"
'

# the new post-send API's and extended CQs' pointers are the inlines' ABI
mutant qpex '
	/^struct ibv_qp_ex \{/ { in_q = 1 }
	in_q && /\(\*wr_start\)/ { held = $0; next }
	in_q && /\(\*wr_complete\)/ { print; print held; next }
	/^\};/ { in_q = 0 }
	{ print }'
expect qpex 12 "BREAK ibv_qp_ex.wr_complete offset 328 -> 320" \
	"builder moved in ibv_qp_ex (wr_complete before wr_start) [WRX-08]"
mutant cqex '
	/^struct ibv_cq_ex \{/ { in_c = 1 }
	in_c && /\(\*start_poll\)/ { print "\tvoid *ibvct_inserted;" }
	/^\};/ { in_c = 0 }
	{ print }'
expect cqex 12 "BREAK ibv_cq_ex.start_poll offset 144 -> 152" \
	"member inserted before start_poll in ibv_cq_ex [CQX-05]"

mutant renumbered '
	/^\tIBV_QPT_XRC_RECV = 10,/ { sub(/10/, "11") }
	{ print }'
expect renumbered 12 "BREAK enum IBV_QPT_XRC_RECV 10 -> 11" "enum renumbered [ABI-01]"

# allowed growth: appended member, op prepended to verbs_context
mutant appended '
	/^struct ibv_sge \{/ { in_sge = 1 }
	in_sge && /^\};/ { print "\tuint32_t ibvct_appended;"; in_sge = 0 }
	{ print }'
expect appended 4 "EXTEND ibv_sge.ibvct_appended added at offset 16 (size 4)" \
	"member appended to ibv_sge is an extension"
test_expect_success "the larger ibv_sge is an extension too" '
	cat "$tmp/appended.out"
	grep -qx "EXTEND struct ibv_sge size 16 -> 24" "$tmp/appended.out"
'
mutant prepended '
	{ print }
	/^struct verbs_context \{/ { print "\tvoid *(*ibvct_prepended)(void);" }'
expect prepended 4 "EXTEND struct verbs_context size 648 -> 656" \
	"op prepended to verbs_context (its way to grow) is an extension, no break [COMPAT-01]"

# ---- symbols -----------------------------------------------------------------
# ref-impl's library relinked from its own objects without one symbol: the
# objects of the sources there are (the Makefile's REF_OBJS), so that a stale
# object of a removed source is no part of it.
objs=
for c in "$src"/ref-impl/src/*.c; do
	o=$build/obj/ref-impl/src/$(basename "$c" .c).o
	[ -f "$o" ] || { objs=; break; }
	objs="$objs $o"
done
grep -v '^[[:space:]]*ibv_wc_status_str;' "$src/ref-impl/libibverbs.map" >"$tmp/map"
if [ -n "$objs" ] &&
   # shellcheck disable=SC2086 # objs is a list of paths without spaces
   $CC -shared -Wl,-soname,libibverbs.so.1 -Wl,--version-script="$tmp/map" \
	-o "$tmp/libibverbs.so.1" $objs -ldl -pthread >"$tmp/ld.err" 2>&1; then
	expect symlib 12 "BREAK symbol ibv_wc_status_str@IBVERBS_1.1 removed" \
		"symbol removed from the library" --lib "$tmp/libibverbs.so.1" \
		--waivers "$src/fixtures/abi/waivers.txt"
else
	: >"$tmp/symlib.out"
	test_expect_success "symbol removed from the library: \"BREAK symbol ibv_wc_status_str@IBVERBS_1.1 removed\", exit 2" '
		echo "the relink of $build/obj/ref-impl/src/*.o failed:"
		cat "$tmp/ld.err"
		false
	'
fi
test_expect_success "abidiff's finding for the removed function is folded in" '
	cat "$tmp/symlib.out"
	grep -q "^BREAK abidiff: .*ibv_wc_status_str.* removed" "$tmp/symlib.out"
'
# abidiff and the C library's types (tools/abi/abidiff-libc.suppr): a
# library whose verb takes a struct embedding a __pthread_-named struct
# (as ibv_cq holds a pthread_cond_t), against its own abidw baseline, in two
# variants: that embedded struct's members rearranged in the same size
# (glibc 2.41's pthread_cond_t) is no abidiff finding; our struct's own
# members rearranged is a BREAK still.
if command -v abidw >/dev/null 2>&1; then
	printf 'IBVCT_T0201 { global: ibv_t0201_verb; local: *; };\n' >"$tmp/lc.map"
	for v in base libc own; do
		case $v in
		libc) p='unsigned b[2]; unsigned a;' o='int x; struct __pthread_t0201_s s;' ;;
		own) p='unsigned a; unsigned b[2];' o='struct __pthread_t0201_s s; int x;' ;;
		*) p='unsigned a; unsigned b[2];' o='int x; struct __pthread_t0201_s s;' ;;
		esac
		printf 'struct __pthread_t0201_s { %s };\nstruct ibv_t0201 { %s };\n%s\n%s\n' "$p" "$o" \
			'int ibv_t0201_verb(struct ibv_t0201 *q);' \
			'int ibv_t0201_verb(struct ibv_t0201 *q) { return q->x; }' >"$tmp/lc-$v.c"
		$CC -g -shared -fPIC -Wl,--version-script="$tmp/lc.map" -o "$tmp/liblc-$v.so" \
			"$tmp/lc-$v.c" 2>>"$tmp/lc.err"
	done
	abidw --out-file "$tmp/lc.abi" "$tmp/liblc-base.so" 2>>"$tmp/lc.err"
	for v in libc own; do
		sh "$gate" --baseline rdma-core-56 --lib "$tmp/liblc-$v.so" --abi "$tmp/lc.abi" \
			>"$tmp/lc-$v.out" 2>&1
	done
	test_expect_success "abidiff: a __pthread_ struct's members rearranged in its size is no finding (the C library's, abidiff-libc.suppr)" '
		cat "$tmp/lc.err" "$tmp/lc-libc.out" | grep -v "^BREAK symbol"
		grep -q "abidiff(lc.abi)" "$tmp/lc-libc.out" && ! grep -q " abidiff: " "$tmp/lc-libc.out"
	'
	test_expect_success "abidiff: the struct of ours that holds it rearranged is a BREAK still" '
		cat "$tmp/lc.err" "$tmp/lc-own.out" | grep -v "^BREAK symbol"
		grep -q "^BREAK abidiff: function int ibv_t0201_verb(ibv_t0201\*) changed: int x offset changed" "$tmp/lc-own.out"
	'
else
	test_skip "abidiff: a __pthread_ struct's members rearranged is no finding" "abidw not installed (abigail-tools)"
fi

# symbol lists: one symbol and one node added, one node removed
base=$src/fixtures/abi/rdma-core-56.symbols
{ grep -v '^#' "$base"; echo "version IBVCT_TEST_2"; echo "symbol ibvct_test_fn@@IBVCT_TEST_2"; } |
	LC_ALL=C sort >"$tmp/added.symbols"
expect added 4 "EXTEND symbol ibvct_test_fn@IBVCT_TEST_2 added" "symbol and version added" \
	--symbols "$tmp/added.symbols"
grep -v '^#' "$base" | grep -v '@*IBVERBS_1\.14$' >"$tmp/dropped.symbols"
expect dropped 12 "BREAK version IBVERBS_1.14 removed" "version node removed" \
	--symbols "$tmp/dropped.symbols"

test_done
