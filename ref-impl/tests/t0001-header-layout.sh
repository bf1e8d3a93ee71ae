#!/bin/sh
# SPDX-License-Identifier: MIT
# t0001: ref-impl/include/infiniband/verbs.h has the layout and values of
# Debian 13's rdma-core 56 header (fixtures/abi/rdma-core-56.table, read
# from its package), which is Debian 12's rdma-core 44 header with members
# appended and values added; and the header installed on this machine
# (/usr/include/infiniband/verbs.h, of either release) agrees with it fact
# by fact, but for what a later release appended (ABI-01..07, COMPAT-01).
#
# tools/abi/abi-dwarf reads a header's facts from the DWARF of a probe that
# includes it (sizeof, alignof, offsetof and sizeof of every member by
# dotted path, verbs_context members relative to `context`, enum values,
# macro values). (1) The ABI gate compares our header's table with rdma-core
# 56's: no finding but the five type names the project's waivers accept.
# (2) The installed header's facts are asked of ours (one probe built
# against it), one TAP test per struct/union/enum group: a fact may differ
# only where the installed header is rdma-core 44's and ours 56's
# (fixtures/abi/rdma-core-44.table and -56.table: the size of a struct
# that grew at its end). (3) The comparison can fail: our facts asked of
# copies of our header with one deliberate change each (a member moved, a
# member resized, an enum value changed, a verbs_context member inserted in
# the middle) must be reported in exactly the group concerned, and a member
# prepended to verbs_context (its allowed way to grow) must move no ctxrel.
# shellcheck disable=SC2016 # the awk programs are single-quoted on purpose
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
sys_hdr=/usr/include/infiniband/verbs.h
our_inc=$src/ref-impl/include
our_hdr=$our_inc/infiniband/verbs.h
dwarf=$src/tools/abi/abi-dwarf
table=$src/tools/abi/abi-table
. "$src/testkit/sh/test-lib.sh"

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
# (A is ours or a mutant, B the other side), by position: the same names
# asked of both, in the same order. A line present on one side only is a
# difference too.
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
	cp -R "$our_inc/." "$tmp/$1/"
	awk "$2" "$our_hdr" >"$tmp/$1/infiniband/verbs.h"
}

# ---- (1) ours against rdma-core 56 -----------------------------------------
sh "$src/tools/abi/abi-gate" --baseline rdma-core-56 --include "$our_inc" \
	--waivers "$src/fixtures/abi/waivers.txt" >"$tmp/gate56" 2>&1
rc56=$?
test_expect_success "the layout and values of rdma-core 56 (Debian 13's header): no finding but the waived type names (status $rc56)" '
	cat "$tmp/gate56"
	[ "$rc56" = 0 ] &&
		grep -q " 0 break, 0 grown node, 0 changed meaning, 0 source change, 0 extension, 5 waived => no change" \
			"$tmp/gate56"
'

# ---- (2) the installed header's facts, asked of ours -------------------------
# allowed FACT OURS SYSTEM: 0 when this difference is a struct grown at its
# end between the committed releases: the installed header has 44's size and
# ours 56's (a program built against 44's passes or allocates the smaller).
allowed() {
	case $1 in
	struct:*\ sizeof) ;;
	*) return 1 ;;
	esac
	a_s=${1#struct:}
	a_s=${a_s% sizeof}
	[ "$(sh "$table" get rdma-core-44 struct "$a_s" size 2>/dev/null)" = "$3" ] &&
		[ "$(sh "$table" get rdma-core-56 struct "$a_s" size 2>/dev/null)" = "$2" ]
}
rwhy=
if ! sh "$dwarf" -l /usr/include >"$tmp/rgroups" 2>"$tmp/rgen.err" ||
   ! sh "$dwarf" /usr/include >"$tmp/rsystem" 2>>"$tmp/rgen.err"; then
	rwhy=$tmp/rgen.err
elif ! ask "$tmp/rsystem" "$our_inc" "$tmp/rours"; then
	rwhy=$tmp/rours.err
else
	compare "$tmp/rours" "$tmp/rsystem" >"$tmp/rdiffs"
fi
if [ -n "$rwhy" ]; then
	test_expect_success "the facts of $sys_hdr (and verbs_api.h) can be asked of ours" '
		head -n 30 "$rwhy"; false
	'
else
	: >"$tmp/grown"
	while read -r g k rest; do
		o=${rest#ours=}; o=${o%% *}; s=${rest##*system=}
		if allowed "$g ${k%:}" "$o" "$s"; then
			echo "$g ${k%:} $o $s" >>"$tmp/grown"
		else
			echo "$g $k $rest"
		fi
	done <"$tmp/rdiffs" >"$tmp/rbad"
	while read -r g; do
		facts=$(grep -c "^$g " "$tmp/rsystem")
		test_expect_success "$g: as the installed header has it, or grown at its end since ($facts facts)" '
			group_diffs "$tmp/rbad" "$g"
			[ -z "$(group_diffs "$tmp/rbad" "$g")" ]
		'
	done <"$tmp/rgroups"
	while read -r g k o s; do
		test_note "$g $k: $s in the installed header, $o here (a later release appended to it)"
	done <"$tmp/grown"
fi

# ---- (3) the comparison can fail ----------------------------------------------
# check_mutant NAME GROUP KEY DESCRIPTION: our facts asked of mutant NAME
# differ from our header's in GROUP, at KEY among others, and nowhere else.
check_mutant() {
	name=$1 grp=$2 key=$3
	test_expect_success "self-check: $4 is reported as $grp $key" '
		if cmp -s "$our_hdr" "$tmp/$name/infiniband/verbs.h"; then
			echo "the edit did not apply: the mutant equals our header"
			exit 1
		fi
		ask "$tmp/ours" "$tmp/$name" "$tmp/$name.out" || { head -n 20 "$tmp/$name.out.err"; exit 1; }
		compare "$tmp/$name.out" "$tmp/ours" >"$tmp/$name.diffs"
		echo "differences the edit brought:"
		head -n 20 "$tmp/$name.diffs"
		group_diffs "$tmp/$name.diffs" "$grp" | grep -q "^$grp $key: " &&
			[ -z "$(other_groups "$tmp/$name.diffs" "$grp")" ]
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
	ask "$tmp/ours" "$tmp/prepended" "$tmp/prepended.out" ||
		{ head -n 20 "$tmp/prepended.out.err"; exit 1; }
	compare "$tmp/prepended.out" "$tmp/ours" >"$tmp/prepended.diffs"
	head -n 20 "$tmp/prepended.diffs"
	grep -q "^struct:verbs_context sizeof: ours=656 system=648\$" "$tmp/prepended.diffs" &&
		! grep -q "ctxrel:" "$tmp/prepended.diffs"
'

# and the allowance of (2) is the growth alone: a size that no release has
test_expect_success "self-check: a struct size that is not rdma-core 44's and 56's is no allowed growth" '
	allowed "struct:ibv_port_attr sizeof" 56 52 && ! allowed "struct:ibv_port_attr sizeof" 60 52 &&
		! allowed "struct:ibv_port_attr sizeof" 56 48 && ! allowed "struct:ibv_port_attr alignof" 4 4
'

test_done
