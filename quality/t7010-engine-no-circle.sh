#!/bin/sh
# SPDX-License-Identifier: MIT
# t7010: the fake HCA's engine has no circle: no file of it calls, through
# the others, back into itself (quality/import-graph over the engine's
# objects of this build; fake-provider/engine/README.md gives each file its
# layer, and a lower layer never calls up). And the graph can fail: scratch
# objects that call round a loop of three files make a circle of the three,
# the same loop opened makes none.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
graph=$src/quality/import-graph
objs=$(ls "${IBVCT_BUILD:-$src/build}"/obj/fake-provider/engine/*.o 2>/dev/null)

test_expect_success "the engine's objects are built" '
	[ -n "$objs" ] || { echo "no objects in ${IBVCT_BUILD:-$src/build}/obj/fake-provider/engine"; false; }
'
run_cmd "$graph" --check $objs
test_expect_success "the engine's files call each other in no circle" '
	rc_is 0 && out_has "^circles: 0$"
'

# obj NAME CALLS: a scratch NAME.o whose function NAME calls CALLS
obj() {
	printf 'void %s(void);\nvoid %s(void) { %s(); }\n' "$2" "$1" "$2" >"$tl_tmp/$1.c" &&
		cc -c -o "$tl_tmp/$1.o" "$tl_tmp/$1.c"
}
obj one two && obj two three && obj three one || test_bail "cannot compile the scratch objects"
run_cmd "$graph" --check "$tl_tmp/one.o" "$tl_tmp/two.o" "$tl_tmp/three.o"
test_expect_success "a loop of three files is one circle of the three" '
	rc_is 1 && out_has "^circle: one\.c three\.c two\.c$" && out_has "^circles: 1$"
'
obj three none || test_bail "cannot compile the scratch objects"
run_cmd "$graph" --check "$tl_tmp/one.o" "$tl_tmp/two.o" "$tl_tmp/three.o"
test_expect_success "the loop opened is no circle" '
	rc_is 0 && out_has "^circles: 0$"
'
test_done
