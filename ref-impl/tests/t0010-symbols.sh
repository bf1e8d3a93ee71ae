#!/bin/sh
# SPDX-License-Identifier: MIT
# t0010: ref-impl's libibverbs.so.1 exports every symbol@version of the
# installed libibverbs1's symbols file (Debian 12's rdma-core 44 or Debian
# 13's 56) and of Debian 13's, read from its package
# (fixtures/abi/rdma-core-56.symbols), with the same defaults for the dual
# 1.0/1.1 verbs and rdma-core's version-node inheritance, and nothing else
# but ibvct's documented additions. Check 6 proves the comparison can fail.
set -u
src=${IBVCT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/testkit/sh/test-lib.sh"
LIBDIR=${IBVCT_LIBDIR:-${IBVCT_BUILD:-build}/lib}
LIB=$LIBDIR/libibverbs.so.1
SYMFILE=${IBVCT_SYMBOLS_FILE:-/var/lib/dpkg/info/libibverbs1:amd64.symbols}
TMP=$tl_tmp

# ibvct's additions on top of rdma-core 44 (driver.h; the command layer
# for providers in IBVCT_PRIVATE_2 to _5).
cat > "$TMP/extra" <<'EOF'
verbs_register_driver@IBVERBS_1.1
IBVCT_PRIVATE_1@IBVCT_PRIVATE_1
verbs_comp_channel_notify@IBVCT_PRIVATE_1
verbs_set_ops@IBVCT_PRIVATE_1
IBVCT_PRIVATE_2@IBVCT_PRIVATE_2
verbs_cmd_create_qp@IBVCT_PRIVATE_2
verbs_cmd_create_qp_ex@IBVCT_PRIVATE_2
verbs_cmd_create_srq_ex@IBVCT_PRIVATE_2
verbs_cmd_open_qp@IBVCT_PRIVATE_2
verbs_cmd_open_xrcd@IBVCT_PRIVATE_2
IBVCT_PRIVATE_3@IBVCT_PRIVATE_3
verbs_cmd_destroy_cq@IBVCT_PRIVATE_3
verbs_cmd_destroy_qp@IBVCT_PRIVATE_3
verbs_cmd_destroy_srq@IBVCT_PRIVATE_3
verbs_cmd_open_qp_resp@IBVCT_PRIVATE_3
IBVCT_PRIVATE_4@IBVCT_PRIVATE_4
verbs_cmd_query_device_ex@IBVCT_PRIVATE_4
IBVCT_PRIVATE_5@IBVCT_PRIVATE_5
verbs_cmd_create_qp_ex2@IBVCT_PRIVATE_5
IBVCT_PRIVATE_6@IBVCT_PRIVATE_6
verbs_ibvct_release@IBVCT_PRIVATE_6
EOF

test_expect_success "library, symbols file and objdump present" '
	[ -r "$LIB" ] || echo "no library $LIB"
	[ -r "$SYMFILE" ] || echo "no symbols file $SYMFILE"
	command -v objdump >/dev/null || echo "no objdump"
	[ -r "$LIB" ] && [ -r "$SYMFILE" ] && command -v objdump >/dev/null
'

# Debian's lists: "name@VERSION", one a line: the installed one and Debian
# 13's (a release's node and symbols: ibvct-release.def PRIVATE_ABI_34).
{ awk '/^ / { print $1 }' "$SYMFILE" 2>/dev/null
  sed -n 's/^symbol \([^@]*\)@@*\(.*\)$/\1@\2/p' "$src/fixtures/abi/rdma-core-56.symbols" 2>/dev/null
} | sort -u > "$TMP/want"

# Ours: "name@VERSION" for every defined dynamic symbol, and "name@@VERSION"
# in a second list for the defaults (objdump shows non-defaults in parens).
: >"$TMP/have"
: >"$TMP/defaults"
objdump -T "$LIB" 2>/dev/null | awk '
	$0 ~ /\*UND\*/ { next }
	NF >= 7 && ($3 == "DF" || $3 == "DO" || $2 == "DF" || $2 == "DO") {
		ver = $(NF - 1); name = $NF
		hidden = (ver ~ /^\(/)
		gsub(/[()]/, "", ver)
		print name "@" ver > "'"$TMP/have"'"
		if (!hidden) print name "@@" ver > "'"$TMP/defaults"'"
	}'
sort -u -o "$TMP/have" "$TMP/have"
sort -u -o "$TMP/defaults" "$TMP/defaults"

# missing LIST WANT: lines of WANT not in LIST.
missing() { sort -u "$2" | comm -23 - "$1"; }

# Every check below also needs a list to compare: an empty one (no input
# above) is a failure, never a pass.
missing "$TMP/have" "$TMP/want" > "$TMP/missing"
test_expect_success "every Debian symbol@version is exported ($(wc -l < "$TMP/want") checked)" '
	[ -s "$TMP/want" ] || { echo "no input"; exit 1; }
	cat "$TMP/missing"
	[ ! -s "$TMP/missing" ]
'

sort -u "$TMP/want" "$TMP/extra" > "$TMP/allowed"
comm -23 "$TMP/have" "$TMP/allowed" > "$TMP/unexpected"
test_expect_success "nothing exported beyond Debian's list and ibvct's additions" '
	[ -s "$TMP/want" ] && [ -s "$TMP/have" ] || { echo "no input"; exit 1; }
	cat "$TMP/unexpected"
	[ ! -s "$TMP/unexpected" ]
'

# Each name exported at both 1.0 and 1.1 defaults to IBVERBS_1.1; ibvct's
# verbs_set_ops defaults to IBVCT_PRIVATE_1 (rdma-core's stays a non-default).
sed -n 's/@IBVERBS_1\.0$//p' "$TMP/want" | while read -r s; do
	if grep -qx "$s@IBVERBS_1.1" "$TMP/want"; then echo "$s@@IBVERBS_1.1"; fi
done > "$TMP/want_defaults"
echo "verbs_set_ops@@IBVCT_PRIVATE_1" >> "$TMP/want_defaults"
echo "ibv_register_driver@@IBVERBS_1.1" >> "$TMP/want_defaults"
echo "verbs_register_driver@@IBVERBS_1.1" >> "$TMP/want_defaults"
missing "$TMP/defaults" "$TMP/want_defaults" > "$TMP/baddef"
test_expect_success "dual 1.0/1.1 symbols default to IBVERBS_1.1 ($(wc -l < "$TMP/want_defaults") checked)" '
	[ -s "$TMP/want" ] || { echo "no input"; exit 1; }
	cat "$TMP/baddef"
	[ ! -s "$TMP/baddef" ]
'

# Version nodes and their parents, as rdma-core 44 declares them.
cat > "$TMP/want_nodes" <<'EOF'
IBVERBS_1.0
IBVERBS_1.1 IBVERBS_1.0
IBVERBS_1.5 IBVERBS_1.1
IBVERBS_1.6 IBVERBS_1.5
IBVERBS_1.7 IBVERBS_1.6
IBVERBS_1.8 IBVERBS_1.7
IBVERBS_1.9 IBVERBS_1.8
IBVERBS_1.10 IBVERBS_1.9
IBVERBS_1.11 IBVERBS_1.10
IBVERBS_1.12 IBVERBS_1.11
IBVERBS_1.13 IBVERBS_1.12
IBVERBS_1.14 IBVERBS_1.13
IBVERBS_PRIVATE_34
IBVCT_PRIVATE_1
IBVCT_PRIVATE_2 IBVCT_PRIVATE_1
IBVCT_PRIVATE_3 IBVCT_PRIVATE_2
IBVCT_PRIVATE_4 IBVCT_PRIVATE_3
IBVCT_PRIVATE_5 IBVCT_PRIVATE_4
IBVCT_PRIVATE_6 IBVCT_PRIVATE_5
EOF
objdump -p "$LIB" 2>/dev/null | awk '
	/^Version definitions:/ { on = 1; next }
	/^Version References:/ { on = 0 }
	on && /^[0-9]/ { if (cur != "") print line; cur = $4; line = cur; next }
	on && /^[ \t]+[A-Z]/ { line = line " " $1 }
	END { if (cur != "") print line }' | grep -v '^libibverbs' | sort > "$TMP/nodes"
sort "$TMP/want_nodes" > "$TMP/wn"
test_expect_success "version nodes and inheritance match rdma-core 44 and 56" '
	diff "$TMP/wn" "$TMP/nodes"
'

# The comparison must catch a removed symbol: drop one line of our list.
dropped=$(comm -12 "$TMP/have" "$TMP/want" | sed -n 1p)
grep -vx "$dropped" "$TMP/have" > "$TMP/have_minus"
missing "$TMP/have_minus" "$TMP/want" > "$TMP/missing2"
test_expect_success "a removed symbol ($dropped) is reported missing" '
	[ -n "$dropped" ] && grep -qx "$dropped" "$TMP/missing2"
'

# No ibvct internals leak (ri_ prefix) into the dynamic table.
test_expect_success "no ri_ internals exported" '
	[ -s "$TMP/have" ] || { echo "no input"; exit 1; }
	! grep "^ri_" "$TMP/have"
'
test_done
