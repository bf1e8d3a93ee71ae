#!/bin/sh
# SPDX-License-Identifier: MIT
# t0001: ref-impl/include/infiniband/verbs.h is layout- and value-identical
# to Debian's rdma-core 44 header (/usr/include/infiniband/verbs.h) on this
# machine (ABI-01..07, COMPAT-01).
#
# tools/abi/abi-dwarf reads our header's facts from the DWARF of a probe that
# includes it (sizeof, alignof, offsetof and sizeof of every member by dotted
# path, verbs_context members relative to `context`, enum values, macro
# values); the same facts, by name, are then asked of the system header
# (tools/abi/abi-dwarf -e: one probe, built against it); the two are compared line
# by line, one TAP test per struct/union/enum group. Then the other
# direction: the system header's facts, asked of ours, must agree. Last, the
# comparison proves it can fail: our facts asked of copies of our header
# with one deliberate change each (a member moved, a member resized, an enum
# value changed, a verbs_context member inserted in the middle) must be reported in exactly the group concerned, and a member
# prepended to verbs_context (its allowed way to grow) must move no ctxrel.
# shellcheck disable=SC2016 # the awk programs are single-quoted on purpose
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
sys_hdr=/usr/include/infiniband/verbs.h
our_inc=$src/ref-impl/include
our_hdr=$our_inc/infiniband/verbs.h
dwarf=$src/tools/abi/abi-dwarf
. "$src/ci/test-lib.sh"

[ -r "$sys_hdr" ] || skip_all "libibverbs-dev not installed"
command -v readelf >/dev/null 2>&1 || skip_all "readelf (binutils, ci/install-deps build) not installed"
tmp=$tl_tmp

if ! sh "$dwarf" -l "$our_inc" >"$tmp/groups" 2>"$tmp/gen.err" ||
   ! sh "$dwarf" "$our_inc" >"$tmp/ours" 2>>"$tmp/gen.err"; then
	test_expect_success "tools/abi/abi-dwarf reads the layout of $our_hdr" 'cat "$tmp/gen.err"; false'
	test_done
fi
# ask FACTS INCDIR OUT: the facts named in FACTS, asked of INCDIR (one
# probe built against it) into OUT. Errors in OUT.err.
ask() {
	sh "$dwarf" -e "$1" "$2" >"$3" 2>"$3.err"
}

# compare A B: one line per differing fact, "GROUP KEY: ours=X system=Y"
# (A is ours or a mutant, B the system's), by position: the same names
# asked of both, in the same order. A line present on one
# side only is a difference too.
compare() {
	awk -v fa="$1" -v fb="$2" 'BEGIN {
		while ((getline l < fa) > 0) a[++na] = l
		while ((getline l < fb) > 0) b[++nb] = l
		n = na > nb ? na : nb
		for (i = 1; i <= n; i++) {
			if (a[i] == b[i])
				continue
			split(a[i], x, " ")
			split(b[i], y, " ")
			if (i <= na && i <= nb && x[1] == y[1] && x[2] == y[2])
				print x[1] " " x[2] ": ours=" x[3] " system=" y[3]
			else
				print (i <= na ? x[1] : y[1]) " line " i ": ours=\"" a[i] "\" system=\"" b[i] "\""
		}
	}'
}

# group_diffs DIFFS GROUP: the differences of one group.
group_diffs() {
	awk -v g="$2" '$1 == g' "$1"
}

# mutant NAME AWKPROG: our header, edited by AWKPROG, as $tmp/NAME/infiniband/verbs.h.
mutant() {
	mkdir -p "$tmp/$1/infiniband"
	awk "$2" "$our_hdr" >"$tmp/$1/infiniband/verbs.h"
}

# ---- ours against the system's, group by group ----------------------------
built=1
if ! ask "$tmp/ours" /usr/include "$tmp/system"; then
	built=0
	{ echo "the facts of our header cannot be asked of $sys_hdr"
	  echo "(a name we declare that rdma-core 44 lacks?):"
	  head -n 30 "$tmp/system.err"; } | diag
fi
if [ "$built" = 1 ]; then
	compare "$tmp/ours" "$tmp/system" >"$tmp/diffs"
else
	: >"$tmp/diffs"
fi

while read -r g; do
	facts=$(grep -c "^$g " "$tmp/ours" 2>/dev/null)
	test_expect_success "$g: layout and values match rdma-core 44 (${facts:-0} facts)" '
		[ "$built" = 1 ] || { echo "the probe did not build"; exit 1; }
		group_diffs "$tmp/diffs" "$g"
		[ -z "$(group_diffs "$tmp/diffs" "$g")" ]
	'
done <"$tmp/groups"

# ---- the system header's own facts, asked of ours --------------------------
# Catches what rdma-core 44 declares and we lack or lay out differently.
rwhy=
if ! sh "$dwarf" /usr/include >"$tmp/rsystem" 2>"$tmp/rgen.err"; then
	rwhy=$tmp/rgen.err
elif ! ask "$tmp/rsystem" "$our_inc" "$tmp/rours"; then
	rwhy=$tmp/rours.err
else
	compare "$tmp/rours" "$tmp/rsystem" >"$tmp/rdiffs"
fi
rfacts=$(cat "$tmp/rsystem" 2>/dev/null | wc -l)
test_expect_success "the facts of $sys_hdr (and verbs_api.h) asked of ours agree ($rfacts facts)" '
	if [ -n "$rwhy" ]; then head -n 30 "$rwhy"; exit 1; fi
	head -n 40 "$tmp/rdiffs"
	[ ! -s "$tmp/rdiffs" ]
'

# ---- the comparison can fail ----------------------------------------------
# check_mutant NAME GROUP KEY DESCRIPTION: our facts asked of mutant NAME
# differ from the system in GROUP, at KEY among others, and nowhere else.
check_mutant() {
	name=$1 grp=$2 key=$3
	test_expect_success "self-check: $4 is reported as $grp $key" '
		if cmp -s "$our_hdr" "$tmp/$name/infiniband/verbs.h"; then
			echo "the edit did not apply: the mutant equals our header"
			exit 1
		fi
		[ "$built" = 1 ] || { echo "our own facts could not be asked of the system header"; exit 1; }
		ask "$tmp/ours" "$tmp/$name" "$tmp/$name.out" || { head -n 20 "$tmp/$name.out.err"; exit 1; }
		compare "$tmp/$name.out" "$tmp/system" >"$tmp/$name.diffs"
		# differences our own header already has did not come from the edit
		grep -vxF -f "$tmp/diffs" "$tmp/$name.diffs" >"$tmp/$name.new"
		echo "differences the edit brought:"
		head -n 20 "$tmp/$name.new"
		group_diffs "$tmp/$name.new" "$grp" | grep -q "^$grp $key: " &&
			[ -z "$(other_groups "$tmp/$name.new" "$grp")" ]
	'
}
# other_groups DIFFS GROUP: the differences outside GROUP.
other_groups() {
	awk -v g="$2" '$1 != g' "$1"
}

mutant moved '
	/^struct ibv_mr \{/ { in_mr = 1 }
	in_mr && /^\tuint32_t lkey;/ { held = $0; next }
	in_mr && /^\tuint32_t rkey;/ { print; print held; next }
	/^\};/ { in_mr = 0 }
	{ print }'
check_mutant moved struct:ibv_mr offsetof:lkey "ibv_mr.lkey moved after rkey"

mutant resized '
	/^struct ibv_send_wr \{/ { in_wr = 1 }
	in_wr && /^\t*uint32_t remote_srqn;/ { sub(/uint32_t/, "uint64_t") }
	/^\};/ { in_wr = 0 }
	{ print }'
check_mutant resized struct:ibv_send_wr sizeof:qp_type.xrc.remote_srqn \
	"ibv_send_wr.qp_type.xrc.remote_srqn widened to 64 bits"

mutant renumbered '
	/^\tIBV_QPT_XRC_RECV = 10,/ { sub(/10/, "11") }
	{ print }'
check_mutant renumbered enum:ibv_qp_type IBV_QPT_XRC_RECV "IBV_QPT_XRC_RECV changed to 11"

mutant inserted '
	/^struct verbs_context \{/ { in_vc = 1 }
	{ print }
	in_vc && /^\tint \(\*close_xrcd\)/ { print "\tvoid *ibvct_inserted;" }
	/^\};/ { in_vc = 0 }'
check_mutant inserted struct:verbs_context ctxrel:open_xrcd \
	"a member inserted into verbs_context after close_xrcd"

# Growing at the top is the allowed change: sizeof and offsetof move, no
# member's distance from `context` does.
mutant prepended '
	{ print }
	/^struct verbs_context \{/ { print "\tvoid *ibvct_prepended;" }'
test_expect_success "self-check: a member prepended to verbs_context moves no ctxrel" '
	[ "$built" = 1 ] || { echo "our own facts could not be asked of the system header"; exit 1; }
	ask "$tmp/ours" "$tmp/prepended" "$tmp/prepended.out" ||
		{ head -n 20 "$tmp/prepended.out.err"; exit 1; }
	compare "$tmp/prepended.out" "$tmp/system" >"$tmp/prepended.diffs"
	head -n 20 "$tmp/prepended.diffs"
	grep -q "^struct:verbs_context sizeof: ours=656 system=648\$" "$tmp/prepended.diffs" &&
		! grep -q "ctxrel:" "$tmp/prepended.diffs"
'

test_done
