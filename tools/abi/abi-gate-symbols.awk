# SPDX-License-Identifier: MIT
# tools/abi/abi-gate-symbols.awk: the symbol findings of tools/abi/abi-gate, one symbol
# list against another ("version NODE" and "symbol NAME@VER" / "NAME@@VER"
# lines, fixtures/abi/rdma-core-44.symbols).
#
#   awk -f tools/abi/abi-gate-symbols.awk BASELINE.symbols NEW.symbols
#
# A version node or symbol gone is a BREAK, a symbol no longer the default
# version (@@ -> @) a SOURCE change, a new node, and a new symbol in a new
# node, an EXTEND. A new symbol in a node the baseline already has is
# GROWN: the node no longer says what it holds, so a binary built against
# the new library that uses the symbol passes the loader's version check on
# the baseline and fails to resolve it there ("undefined symbol: S, version
# NODE"). For a private node (IBVERBS_PRIVATE_*, libibverbs' interface to
# its providers, whose number rdma-core keeps across releases) that is the
# provider-ABI break class: a provider of the new release on the old
# library (rdma-core v44.0 -> v56.1: ibv_cmd_create_cq_ex2 and
# ibv_wr_opcode_str in IBVERBS_PRIVATE_34).
FNR == 1 { side++ }
/^#/ || NF < 2 { next }
$1 == "version" { V[side, $2] = 1; if (side == 1) vo[++nvo] = $2; else vn[++nvn] = $2; next }
$1 == "symbol" {
	s = $2; def = index(s, "@@") > 0; sub(/@@/, "@", s)
	S[side, s] = def
	if (side == 1) so[++nso] = s; else sn[++nsn] = s
}
function node(s) { sub(/^[^@]*@/, "", s); return s }
END {
	for (i = 1; i <= nvo; i++)
		if (!((2, vo[i]) in V)) print "BREAK version " vo[i] " removed"
	for (i = 1; i <= nso; i++) {
		s = so[i]
		if (!((2, s) in S)) print "BREAK symbol " s " removed"
		else if (S[1, s] && !S[2, s]) print "SOURCE symbol " s " no longer the default version"
	}
	for (i = 1; i <= nvn; i++)
		if (!((1, vn[i]) in V)) print "EXTEND version " vn[i] " added"
	for (i = 1; i <= nsn; i++) {
		s = sn[i]
		if ((1, s) in S)
			continue
		n = node(s)
		if (!((1, n) in V))
			print "EXTEND symbol " s " added"
		else if (n ~ /_PRIVATE_/)
			print "GROWN symbol " s " added to the baseline's node " n \
			      " (provider ABI: a provider that uses it loads on the baseline and cannot resolve it)"
		else
			print "GROWN symbol " s " added to the baseline's node " n \
			      " (a binary that uses it loads on the baseline and cannot resolve it)"
	}
}
