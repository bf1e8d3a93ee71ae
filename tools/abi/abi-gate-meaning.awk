# SPDX-License-Identifier: MIT
# tools/abi/abi-gate-meaning.awk: functions whose arguments or answer took
# a new meaning under an unchanged symbol, from two ABI tables and two
# symbol lists (tools/abi/abi-gate, when it has both).
#
#   awk -f tools/abi/abi-gate-meaning.awk BASE.table NEW.table BASE.symbols NEW.symbols
#
# The sign is rdma-core's naming: an enum type F_S that the new header adds,
# where F is a function both libraries export under the same version (its
# prototype unchanged, or the symbol would have moved), names values that F
# takes (S: its argument of that name, as `flags` for
# enum ibv_query_qp_data_in_order_flags) or gives. A caller of the new
# release that passes them reaches, on the baseline, a library that gives
# them no meaning, and the same call answers differently on the two
# (rdma-core v46.0 ac676d8b1: ibv_query_qp_data_in_order's flags select
# what it returns). One MEANING line per function, with the enumerators
# of F's prefix the new header adds.
FILENAME == ARGV[1] && $1 == "enumtype" { T1[$2] = 1; next }
FILENAME == ARGV[2] && $1 == "enumtype" { nt[++nn] = $2; next }
FILENAME == ARGV[2] && $1 == "enum" { E2[$2] = $3; eo[++ne] = $2; next }
FILENAME == ARGV[1] && $1 == "enum" { E1[$2] = 1; next }
FILENAME == ARGV[3] && $1 == "symbol" {
	s = $2; sub(/@@/, "@", s); Y1[s] = 1
	f = s; sub(/@.*$/, "", f); fn[f] = 1
	next
}
FILENAME == ARGV[4] && $1 == "symbol" {
	s = $2; sub(/@@/, "@", s); Y2[s] = 1
	f = s; sub(/@.*$/, "", f); ver[f] = substr(s, index(s, "@") + 1); fn[f] = 1
	next
}
END {
	for (i = 1; i <= nn; i++) {
		t = nt[i]
		if (t in T1)
			continue
		# the longest function name either library exports that prefixes
		# the type's names it; it must be in both under one version
		best = ""
		for (f in fn)
			if (index(t, f "_") == 1 && length(f) > length(best))
				best = f
		if (best == "" || !(best in ver) || !((best "@" ver[best]) in Y1))
			continue
		what = substr(t, length(best) + 2)
		if (what == "flags" || what == "mask")
			arg[best] = arg[best] (arg[best] == "" ? "" : ", ") "its argument " what " (enum " t ")"
		else
			ans[best] = ans[best] (ans[best] == "" ? "" : ", ") "what it gives (enum " t ")"
		if (!(best in order)) order[best] = ++no
	}
	for (f in order)
		byno[order[f]] = f
	for (k = 1; k <= no; k++) {
		f = byno[k]
		pre = toupper(f) "_"
		vals = ""
		for (j = 1; j <= ne; j++)
			if (index(eo[j], pre) == 1 && !(eo[j] in E1))
				vals = vals (vals == "" ? "" : ", ") eo[j] "=" E2[eo[j]]
		d = arg[f] (arg[f] != "" && ans[f] != "" ? " and " : "") ans[f]
		print "MEANING " f "@" ver[f] ": the same symbol, new values for " d ": " vals \
		      ": the baseline gives the same call another meaning"
	}
}
