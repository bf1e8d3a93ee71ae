# SPDX-License-Identifier: MIT
# tools/abi/abi-gate-abidiff.awk: abidiff's report (abidiff --no-show-locs OLD.abi
# LIB) as tools/abi/abi-gate findings, one per removed, added or changed function
# or variable.
#
#   awk -f tools/abi/abi-gate-abidiff.awk REPORT
#
# A removal is a BREAK, an addition an EXTEND. A change is a BREAK when its
# details move or resize something (abidiff's own "incompatible" bit covers
# only removals), else a SOURCE change (a type renamed; a struct seen
# declaration-only in one build, size 0). Lines read "CLASS abidiff: ENTITY
# KIND {SYMBOL}: DETAIL".
function flush() {
	if (ent == "") return
	if (kind == "changed")
		sev = (hard != "") ? "BREAK" : "SOURCE"
	if (hard != "")
		why = hard
	print sev " abidiff: " ent " " kind sym (why != "" ? ": " why : "")
	ent = ""
}
/^[0-9]+ Removed (function|variable)/ { flush(); mode = "removed"; next }
/^[0-9]+ Added (function|variable)/ { flush(); mode = "added"; next }
/^[0-9]+ (functions? with some|Changed variable)/ { flush(); mode = "changed"; next }
/^[0-9]+ / || /^(Functions|Variables|Function symbols|Variable symbols) changes summary/ { flush(); mode = ""; next }
/^  \[[ADC]\] / && mode != "" {
	flush()
	l = $0; sub(/^  \[[ADC]\] /, "", l)
	gsub(/[ \t]+/, " ", l); gsub(/\x27/, "", l)
	sub(/ has some indirect sub-type changes:$/, "", l)
	sym = ""
	if (match(l, / \{[^}]*\}$/)) { sym = " " substr(l, RSTART + 1); l = substr(l, 1, RSTART - 1) }
	ent = l; kind = mode; why = ""; hard = ""
	sev = (mode == "removed") ? "BREAK" : "EXTEND"
	next
}
ent != "" && /offset changed|size changed from|type name changed|deletion/ {
	l = $0; gsub(/^[ \t]+/, "", l); gsub(/[ \t]+/, " ", l); gsub(/\x27/, "", l)
	if (why == "") why = l
	if (hard == "" && (l ~ /offset changed/ ||
	    (l ~ /size changed from [1-9][0-9]* to [1-9]/)))
		hard = l
}
END { flush() }
