# SPDX-License-Identifier: MIT
# tools/abi/abi-gate-symbols.awk: the symbol findings of tools/abi/abi-gate, one symbol
# list against another ("version NODE" and "symbol NAME@VER" / "NAME@@VER"
# lines, fixtures/abi/rdma-core-44.symbols).
#
#   awk -f tools/abi/abi-gate-symbols.awk BASELINE.symbols NEW.symbols
#
# A version node or symbol gone is a BREAK, a symbol no longer the default
# version (@@ -> @) a SOURCE change, a new node or symbol an EXTEND.
FNR == 1 { side++ }
/^#/ || NF < 2 { next }
$1 == "version" { V[side, $2] = 1; if (side == 1) vo[++nvo] = $2; else vn[++nvn] = $2; next }
$1 == "symbol" {
	s = $2; def = index(s, "@@") > 0; sub(/@@/, "@", s)
	S[side, s] = def
	if (side == 1) so[++nso] = s; else sn[++nsn] = s
}
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
	for (i = 1; i <= nsn; i++)
		if (!((1, sn[i]) in S)) print "EXTEND symbol " sn[i] " added"
}
