#!/bin/sh
# SPDX-License-Identifier: MIT
# t0001: ref-impl/include/infiniband/verbs.h is layout- and value-identical
# to Debian's rdma-core 44 header (/usr/include/infiniband/verbs.h) on this
# machine (ABI-01..07, COMPAT-01).
#
# ci/abi-dwarf reads our header's facts from the DWARF of a probe that
# includes it (sizeof, alignof, offsetof and sizeof of every member by dotted
# path, verbs_context members relative to `context`, enum values, macro
# values); the same facts, by name, are then asked of the system header
# (ci/abi-dwarf -e: one probe, built against it); the two are compared line
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
dwarf=$src/ci/abi-dwarf

if [ ! -r "$sys_hdr" ]; then
	echo "1..0 # SKIP libibverbs-dev not installed"
	exit 0
fi
if ! command -v readelf >/dev/null 2>&1; then
	echo "1..0 # SKIP readelf (binutils, ci/install-deps build) not installed"
	exit 0
fi

n=0
failures=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

# Scratch dir: removed on success, kept (and named) on failure.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t0001.XXXXXX") || exit 1
finish() {
	if [ "$failures" -eq 0 ]; then rm -rf "$tmp"
	else echo "# scratch files kept in $tmp"; fi
}
trap finish EXIT

if ! sh "$dwarf" -l "$our_inc" >"$tmp/groups" 2>"$tmp/gen.err" ||
   ! sh "$dwarf" "$our_inc" >"$tmp/ours" 2>>"$tmp/gen.err"; then
	echo "1..1"
	not_ok "ci/abi-dwarf reads the layout of $our_hdr"
	diag <"$tmp/gen.err"
	exit 1
fi
ngroups=$(wc -l <"$tmp/groups")

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

echo "1..$((ngroups + 6))"

# ---- ours against the system's, group by group ----------------------------
built=1
if ! ask "$tmp/ours" /usr/include "$tmp/system"; then
	built=0
	echo "# the facts of our header cannot be asked of $sys_hdr"
	echo "# (a name we declare that rdma-core 44 lacks?):"
	head -n 30 "$tmp/system.err" | diag
fi
if [ "$built" = 1 ]; then
	compare "$tmp/ours" "$tmp/system" >"$tmp/diffs"
else
	: >"$tmp/diffs"
fi

while read -r g; do
	facts=$(grep -c "^$g " "$tmp/ours" 2>/dev/null)
	if [ "$built" != 1 ]; then
		not_ok "$g: layout and values match rdma-core 44 (the probe did not build)"
	elif [ -z "$(group_diffs "$tmp/diffs" "$g")" ]; then
		ok "$g: layout and values match rdma-core 44 ($facts facts)"
	else
		not_ok "$g: layout and values match rdma-core 44"
		group_diffs "$tmp/diffs" "$g" | diag
	fi
done <"$tmp/groups"

# ---- the system header's own facts, asked of ours --------------------------
# Catches what rdma-core 44 declares and we lack or lay out differently.
t="the facts of $sys_hdr (and verbs_api.h) asked of ours agree"
if ! sh "$dwarf" /usr/include >"$tmp/rsystem" 2>"$tmp/rgen.err"; then
	not_ok "$t"
	diag <"$tmp/rgen.err"
elif ! ask "$tmp/rsystem" "$our_inc" "$tmp/rours"; then
	not_ok "$t"
	head -n 30 "$tmp/rours.err" | diag
else
	compare "$tmp/rours" "$tmp/rsystem" >"$tmp/rdiffs"
	if [ -s "$tmp/rdiffs" ]; then
		not_ok "$t"
		head -n 40 "$tmp/rdiffs" | diag
	else
		ok "$t ($(wc -l <"$tmp/rsystem") facts)"
	fi
fi

# ---- the comparison can fail ----------------------------------------------
# check_mutant NAME GROUP KEY DESCRIPTION: our facts asked of mutant NAME
# differ from the system in GROUP, at KEY among others, and nowhere else.
check_mutant() {
	name=$1 grp=$2 key=$3
	t="self-check: $4 is reported as $grp $key"
	if cmp -s "$our_hdr" "$tmp/$name/infiniband/verbs.h"; then
		not_ok "$t"
		echo "# the edit did not apply: the mutant equals our header" | diag
		return
	fi
	if [ "$built" != 1 ] || ! ask "$tmp/ours" "$tmp/$name" "$tmp/$name.out"; then
		not_ok "$t"
		[ -r "$tmp/$name.out.err" ] && head -n 20 "$tmp/$name.out.err" | diag
		return
	fi
	compare "$tmp/$name.out" "$tmp/system" >"$tmp/$name.diffs"
	# differences our own header already has are not the mutant's doing
	grep -vxF -f "$tmp/diffs" "$tmp/$name.diffs" >"$tmp/$name.new"
	if group_diffs "$tmp/$name.new" "$grp" | grep -q "^$grp $key: " &&
	   [ -z "$(awk -v g="$grp" '$1 != g' "$tmp/$name.new")" ]; then
		ok "$t"
	else
		not_ok "$t"
		echo "# differences the edit brought:"
		head -n 20 "$tmp/$name.new" | diag
	fi
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
t="self-check: a member prepended to verbs_context moves no ctxrel"
mutant prepended '
	{ print }
	/^struct verbs_context \{/ { print "\tvoid *ibvct_prepended;" }'
if [ "$built" = 1 ] && ask "$tmp/ours" "$tmp/prepended" "$tmp/prepended.out"; then
	compare "$tmp/prepended.out" "$tmp/system" >"$tmp/prepended.diffs"
	if grep -q '^struct:verbs_context sizeof: ours=656 system=648$' "$tmp/prepended.diffs" &&
	   ! grep -q 'ctxrel:' "$tmp/prepended.diffs"; then
		ok "$t"
	else
		not_ok "$t"
		head -n 20 "$tmp/prepended.diffs" | diag
	fi
else
	not_ok "$t"
	[ -r "$tmp/prepended.out.err" ] && head -n 20 "$tmp/prepended.out.err" | diag
fi

[ "$failures" -eq 0 ]
