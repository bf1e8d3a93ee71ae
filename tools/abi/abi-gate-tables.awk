# SPDX-License-Identifier: MIT
# tools/abi/abi-gate-tables.awk: the header findings of tools/abi/abi-gate, one ABI table
# against another (format: fixtures/abi/README.md).
#
#   awk -f tools/abi/abi-gate-tables.awk BASELINE.table NEW.table
#
# Prints one "CLASS TEXT" line per finding (CLASS BREAK, SOURCE or EXTEND;
# the rules: tools/abi/abi-gate --help and fixtures/abi/README.md), in the order
# found; tools/abi/abi-gate sorts them by class. Tables are read whole first: the
# baseline's facts are side 1, the new tree's side 2.
FNR == 1 { side++ }
/^#/ || NF < 3 { next }
{
	t = $1; k = $2
	if (t == "struct" || t == "union") {
		SZ[side, k] = $4; AL[side, k] = $6; KD[side, k] = t
		if (side == 1) so[++nso] = k; else sn[++nsn] = k
	} else if (t == "member") {
		OF[side, k] = $4; MS[side, k] = $6
		ty = $0; sub(/^.* type /, "", ty); TY[side, k] = ty
		if (side == 1) mo[++nmo] = k; else mn[++nmn] = k
	} else if (t == "vctx") {
		VC[side, k] = $4
	} else if (t == "enumtype") {
		ET[side, k] = $4
		if (side == 1) eo[++neo] = k
	} else if (t == "enum" || t == "macro") {
		CV[side, k] = $3; CK[side, k] = t
		if (side == 1) co[++nco] = k; else cn[++ncn] = k
	}
}
function out(sev, s) { print sev " " s }
# Array bounds are left out of type comparisons: sizes are compared
# anyway, and uint8_t[6] vs uint8_t[ETHERNET_LL_SIZE] is no change.
function tnorm(t) { gsub(/\[[^]]*\]/, "[]", t); return t }
# 1 if every bit of a is set in b (non-negative values; no and() in mawk)
function superset(b, a,    x, y) {
	if (a < 0 || b < 0) return 0
	while (a > 0) {
		x = a % 2; y = b % 2
		if (x && !y) return 0
		a = (a - x) / 2; b = (b - y) / 2
	}
	return 1
}
function sname(p) { sub(/\..*$/, "", p); return p }
function parent(p) { if (!sub(/\.[^.]*$/, "", p)) return ""; return p }
function tclass(t) {
	if (t ~ /\(\*\)/) return "fnptr"
	if (t ~ /\*$/) return "ptr"
	if (t ~ /^(struct|union)( |$)/ && t !~ /\*/) return substr(t, 1, index(t " ", " ") - 1)
	return t
}
# The new name of old path p: its parents renamed as already decided.
function mapped(p,    q, best, r) {
	q = p; best = ""
	for (r in ren)
		if (index(p, r ".") == 1 && length(r) > length(best))
			best = r
	if (best != "")
		q = ren[best] substr(p, length(best) + 1)
	return q
}
END {
	for (i = 1; i <= nso; i++) {
		s = so[i]
		if (!((2, s) in SZ)) {
			out("SOURCE", KD[1, s] " " s " removed from the header (was size " SZ[1, s] ")")
			gone[s] = 1
			continue
		}
		if (SZ[2, s] + 0 < SZ[1, s] + 0)
			out("BREAK", KD[1, s] " " s " size " SZ[1, s] " -> " SZ[2, s])
		else if (SZ[2, s] + 0 > SZ[1, s] + 0)
			out("EXTEND", KD[1, s] " " s " size " SZ[1, s] " -> " SZ[2, s])
		if (AL[2, s] != AL[1, s])
			out("BREAK", KD[1, s] " " s " align " AL[1, s] " -> " AL[2, s])
	}
	for (i = 1; i <= nsn; i++)
		if (!((1, sn[i]) in SZ))
			out("EXTEND", KD[2, sn[i]] " " sn[i] " added (size " SZ[2, sn[i]] ")")
	# lowest distance from context among the old verbs_context members
	for (i = 1; i <= nmo; i++)
		if ((1, mo[i]) in VC && (!vmin_set || VC[1, mo[i]] + 0 < vmin)) {
			vmin = VC[1, mo[i]] + 0; vmin_set = 1
		}
	for (i = 1; i <= nmo; i++) {
		p = mo[i]; s = sname(p)
		if (s in gone)
			continue
		q = mapped(p)
		if (!((2, q) in OF)) {
			# renamed in place: a new sibling with the same offset,
			# size and kind of type that the old header did not have
			pq = mapped(parent(p)) "."
			found = ""
			for (j = 1; j <= nmn; j++) {
				c = mn[j]
				if (c in claimed || (1, c) in OF || index(c, pq) != 1 ||
				    index(substr(c, length(pq) + 1), ".") ||
				    (((1, p) in VC) ? VC[2, c] != VC[1, p] : OF[2, c] != OF[1, p]) ||
				    MS[2, c] != MS[1, p] ||
				    tclass(TY[2, c]) != tclass(TY[1, p]))
					continue
				found = c
				break
			}
			if (found == "") {
				out("BREAK", p " removed (was offset " OF[1, p] " size " MS[1, p] ")")
				continue
			}
			ren[p] = found
			q = found
			msg = p " renamed in place to " q " (" (((1, p) in VC) ? "from_context " VC[1, p] : "offset " OF[1, p]) " size " MS[1, p]
			if (tnorm(TY[1, p]) != tnorm(TY[2, q]))
				msg = msg ", type " TY[1, p] " -> " TY[2, q]
			out("SOURCE", msg ")")
			claimed[q] = 1
			continue
		}
		claimed[q] = 1
		broke = 0
		if ((1, p) in VC) {
			if (VC[2, q] != VC[1, p]) {
				out("BREAK", p " from_context " VC[1, p] " -> " VC[2, q])
				broke = 1
			}
		} else if (OF[2, q] != OF[1, p]) {
			out("BREAK", p " offset " OF[1, p] " -> " OF[2, q])
			broke = 1
		}
		if (MS[2, q] != MS[1, p]) {
			out("BREAK", p " size " MS[1, p] " -> " MS[2, q])
			broke = 1
		}
		if (!broke && tnorm(TY[2, q]) != tnorm(TY[1, p]))
			out("SOURCE", p " type " TY[1, p] " -> " TY[2, q] " (same offset and size)")
	}
	for (j = 1; j <= nmn; j++) {
		c = mn[j]; s = sname(c)
		if (c in claimed || !((1, s) in SZ))
			continue
		if ((2, c) in VC) {
			if (vmin_set && VC[2, c] + 0 < vmin)
				out("EXTEND", c " added at from_context " VC[2, c] " (size " MS[2, c] ")")
			else
				out("BREAK", c " inserted at from_context " VC[2, c] " (size " MS[2, c] ", above it: " vmin ")")
		} else if (OF[2, c] + 0 >= SZ[1, s] + 0)
			out("EXTEND", c " added at offset " OF[2, c] " (size " MS[2, c] ")")
		else
			out("EXTEND", c " added at offset " OF[2, c] " (size " MS[2, c] ", inside the old size " SZ[1, s] ": union alternative or padding)")
	}
	for (i = 1; i <= neo; i++) {
		s = eo[i]
		if ((2, s) in ET && ET[1, s] != ET[2, s])
			out("BREAK", "enumtype " s " size " ET[1, s] " -> " ET[2, s])
	}
	for (i = 1; i <= nco; i++) {
		k = co[i]
		if (!((2, k) in CV)) {
			out("SOURCE", CK[1, k] " " k " removed (was " CV[1, k] ")")
			continue
		}
		if (CV[2, k] == CV[1, k])
			continue
		if (k ~ /_RESERVED$/ && CV[2, k] + 0 > CV[1, k] + 0)
			out("EXTEND", CK[1, k] " " k " " CV[1, k] " -> " CV[2, k] " (end marker)")
		else if (k ~ /_SUPPORTED$|_SUP_/ && superset(CV[2, k] + 0, CV[1, k] + 0))
			out("EXTEND", CK[1, k] " " k " " CV[1, k] " -> " CV[2, k] " (supported-bits mask gained bits)")
		else
			out("BREAK", CK[1, k] " " k " " CV[1, k] " -> " CV[2, k])
	}
	for (i = 1; i <= ncn; i++)
		if (!((1, cn[i]) in CV))
			out("EXTEND", CK[2, cn[i]] " " cn[i] " added = " CV[2, cn[i]])
}
