#!/bin/sh
# SPDX-License-Identifier: MIT
# t0204: tools/abi/abi-dwarf, the reader behind the ABI tables, on a small header
# written to exercise what DWARF and the C spelling of types make hard: a
# tagged struct defined inside another (a member, not a group), an
# anonymous union (its members by their own names), function pointers
# (variadic, (void), unprototyped, an array of them), a 2-D array, a
# zero-length array, a const pointer, explicit alignment (the compiler's
# _Alignof), verbs_context's distances from `context`, enum values beyond
# 32 bits and at both ends of long long (exact: no awk doubles), and which
# macros count (#undef, __cplusplus, function-like, empty, include guard,
# IBVCT_*). The facts must be exactly the expected ones; asked of the same
# header by name (-e) they must come back equal; a bit-field, which the
# table format cannot hold, and a missing header are refused with a reason.
# (ABI-01 ABI-07 COMPAT-01)
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
dwarf=$src/tools/abi/abi-dwarf

. "$src/testkit/sh/test-lib.sh"
command -v readelf >/dev/null 2>&1 ||
	skip_all "readelf not installed (binutils, ci/install-deps build)"
tmp=$tl_tmp

mkdir -p "$tmp/inc/infiniband" "$tmp/bits/infiniband"
cat >"$tmp/inc/infiniband/verbs.h" <<'HDR'
#ifndef SYN_VERBS_H
#define SYN_VERBS_H
#include <stdint.h>
#define BIG (1ULL << 63)
#define NEG (-5)
#define UBIG 0xfffffffffffffffeULL
#define PTR ((void *)-1)
#define FN(x) (x)
#define EMPTY
#ifdef __cplusplus
#define CPP_ONLY 1
#endif
#define GONE 3
#undef GONE
#define IBVCT_PRIVATE 7
enum big { B_TOP = 0xffffffffffffffffULL, B_LOW = 1 };
enum huge { H_MAX = 0x7fffffffffffffffLL, H_MIN = -0x7fffffffffffffffLL - 1 };
enum { ANON_FIRST = -2, ANON_SECOND = 0x80000000 };
struct outer {
	char c;
	struct inner {
		int a;
	} in;
	union {
		long l;
		double d;
	};
	int (*fp)(struct outer *, const char *, ...);
	void (*noarg)(void);
	int (*old)();
	uint8_t arr[2][3];
	unsigned long ul;
	struct outer *next;
	char *const cp;
	void *(*fpa[2])(int);
	int last[0];
};
struct aligned {
	char c;
} __attribute__((aligned(16)));
struct verbs_context {
	void *(*op)(void);
	uint64_t sz;
	int context;
};
#endif
HDR

cat >"$tmp/want" <<'FACTS'
enum:big sizeof 8
enum:big B_TOP -1
enum:big B_LOW 1
enum:huge sizeof 8
enum:huge H_MAX 9223372036854775807
enum:huge H_MIN -9223372036854775808
enum:@ANON_FIRST ANON_FIRST -2
enum:@ANON_FIRST ANON_SECOND 2147483648
struct:outer sizeof 88
struct:outer alignof 8
struct:outer offsetof:c 0
struct:outer sizeof:c 1
struct:outer type:c char
struct:outer offsetof:in 4
struct:outer sizeof:in 4
struct:outer type:in struct inner
struct:outer offsetof:in.a 4
struct:outer sizeof:in.a 4
struct:outer type:in.a int
struct:outer offsetof:l 8
struct:outer sizeof:l 8
struct:outer type:l long
struct:outer offsetof:d 8
struct:outer sizeof:d 8
struct:outer type:d double
struct:outer offsetof:fp 16
struct:outer sizeof:fp 8
struct:outer type:fp int (*)(struct outer *, const char *, ...)
struct:outer offsetof:noarg 24
struct:outer sizeof:noarg 8
struct:outer type:noarg void (*)(void)
struct:outer offsetof:old 32
struct:outer sizeof:old 8
struct:outer type:old int (*)()
struct:outer offsetof:arr 40
struct:outer sizeof:arr 6
struct:outer type:arr uint8_t[2][3]
struct:outer offsetof:ul 48
struct:outer sizeof:ul 8
struct:outer type:ul unsigned long
struct:outer offsetof:next 56
struct:outer sizeof:next 8
struct:outer type:next struct outer *
struct:outer offsetof:cp 64
struct:outer sizeof:cp 8
struct:outer type:cp char * const
struct:outer offsetof:fpa 72
struct:outer sizeof:fpa 16
struct:outer type:fpa void * (*[2])(int)
struct:outer offsetof:last 88
struct:outer sizeof:last 0
struct:outer type:last int[0]
struct:aligned sizeof 16
struct:aligned alignof 16
struct:aligned offsetof:c 0
struct:aligned sizeof:c 1
struct:aligned type:c char
struct:verbs_context sizeof 24
struct:verbs_context alignof 8
struct:verbs_context offsetof:op 0
struct:verbs_context sizeof:op 8
struct:verbs_context type:op void * (*)(void)
struct:verbs_context offsetof:sz 8
struct:verbs_context sizeof:sz 8
struct:verbs_context type:sz uint64_t
struct:verbs_context offsetof:context 16
struct:verbs_context sizeof:context 4
struct:verbs_context type:context int
struct:verbs_context ctxrel:op -16
struct:verbs_context ctxrel:sz -8
struct:verbs_context ctxrel:context 0
macros BIG -9223372036854775808
macros NEG -5
macros UBIG -2
macros PTR -1
FACTS

# 1: every fact, exactly
sh "$dwarf" -t "$tmp/inc" >"$tmp/got" 2>"$tmp/got.err"
rc=$?
test_expect_success "the facts and types of the test header are exactly the expected ones ($(wc -l <"$tmp/want") lines)" '
	diff "$tmp/want" "$tmp/got"; cat "$tmp/got.err"
	[ "$rc" -eq 0 ] && cmp -s "$tmp/want" "$tmp/got"
'

# 2: the groups, in header order; struct inner is not one
sh "$dwarf" -l "$tmp/inc" >"$tmp/groups" 2>&1
rc=$?
test_expect_success "-l: the groups in header order, the struct defined inside another not among them" '
	cat "$tmp/groups"
	[ "$rc" -eq 0 ] && [ "$(tr "\n" " " <"$tmp/groups")" = "enum:big enum:huge enum:@ANON_FIRST struct:outer struct:aligned struct:verbs_context macros " ]
'

# 3: the same names asked of the same header come back equal
grep -v ' type:' "$tmp/want" >"$tmp/facts"
sh "$dwarf" -e "$tmp/facts" "$tmp/inc" >"$tmp/asked" 2>"$tmp/asked.err"
rc=$?
test_expect_success "-e: every fact asked of the header by name (sizeof, _Alignof, offsetof, values) agrees" '
	diff "$tmp/facts" "$tmp/asked"; cat "$tmp/asked.err"
	[ "$rc" -eq 0 ] && cmp -s "$tmp/facts" "$tmp/asked"
'

# 4: a bit-field is refused, not misread
printf 'struct bits {\n\tunsigned int low:3;\n\tunsigned int high:5;\n};\n' >"$tmp/bits/infiniband/verbs.h"
sh "$dwarf" "$tmp/bits" >"$tmp/bits.out" 2>"$tmp/bits.err"
rc=$?
test_expect_success "a bit-field member is refused with its name (exit 1)" '
	echo "exit $rc"; cat "$tmp/bits.out" "$tmp/bits.err"
	[ "$rc" -eq 1 ] && [ ! -s "$tmp/bits.out" ] &&
		grep -q "^abi-dwarf: struct:bits: bit-field low (not in the table format)$" "$tmp/bits.err"
'

# 5: no header, bad arguments
sh "$dwarf" "$tmp/none" >/dev/null 2>"$tmp/none.err"
r1=$?
sh "$dwarf" -x "$tmp/inc" >/dev/null 2>"$tmp/usage.err"
r2=$?
test_expect_success "a missing include dir exits 1 with a reason, a bad option 2" '
	echo "got $r1 $r2"; cat "$tmp/none.err" "$tmp/usage.err"
	[ "$r1" -eq 1 ] && grep -q "^abi-dwarf: no directory $tmp/none\$" "$tmp/none.err" && [ "$r2" -eq 2 ]
'

test_done
