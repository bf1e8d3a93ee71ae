# SPDX-License-Identifier: MIT
# tools/abi/abi-gate-waivers.awk: applies a waiver file (fixtures/abi/waivers.txt)
# to tools/abi/abi-gate's findings.
#
#   awk -v baseline=NAME -v ran="CHECKS" -f tools/abi/abi-gate-waivers.awk WAIVERS FINDINGS
#
# A waiver line is "BASELINE | FINDING | REASON": FINDING is a finding as
# the gate prints it, class first (BREAK, GROWN, MEANING, SOURCE, EXTEND),
# matched exactly;
# BASELINE is the baseline it was accepted against (or * for any); REASON
# says why it is accepted and may not be empty. Blank lines and # lines are
# comments. Output: every finding no waiver matches, unchanged; "WAIVED
# FINDING -- REASON" for each one that a waiver matches; "STALE waiver
# FILE:LINE matches no finding: FINDING" for each waiver of this baseline
# that matched nothing although its check ran (CHECKS: the checks that ran,
# of headers, symbols, abidiff; a finding's check is read from its text).
# A malformed waiver line: a message on stderr, exit 1.

function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
function bad(why) {
	printf "abi-gate: %s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
	failed = 1
	exit 1
}
function check_of(f) {
	sub(/^[A-Z]+ /, "", f)
	if (f ~ /^abidiff: /) return "abidiff"
	if (f ~ /^(symbol|version) /) return "symbols"
	if (f ~ /^[a-z_0-9]+@/) return "symbols"	# MEANING: headers and symbols
	return "headers"
}

FILENAME == ARGV[1] {
	if ($0 ~ /^[ \t]*(#|$)/)
		next
	l = $0
	p = index(l, " | ")
	if (!p)
		bad("not \"BASELINE | FINDING | REASON\"")
	b = trim(substr(l, 1, p - 1))
	l = substr(l, p + 3)
	p = index(l, " | ")
	if (!p)
		bad("no reason (\"BASELINE | FINDING | REASON\")")
	f = trim(substr(l, 1, p - 1))
	r = trim(substr(l, p + 3))
	if (b == "" || b ~ /[ \t]/)
		bad("the baseline is one name or *")
	if (f !~ /^(BREAK|GROWN|MEANING|SOURCE|EXTEND) ./)
		bad("a finding starts with BREAK, GROWN, MEANING, SOURCE or EXTEND")
	if (r == "")
		bad("the reason is empty")
	if (b != baseline && b != "*")
		next
	nw++
	wf[nw] = f; wr[nw] = r; wl[nw] = FNR
	if (!(f in wi))
		wi[f] = nw
	next
}

{
	if ($0 in wi) {
		k = wi[$0]
		used[k] = 1
		print "WAIVED " $0 " -- " wr[k]
	} else
		print
}

END {
	if (failed)
		exit 1
	n = split(ran, x, " ")
	for (k = 1; k <= n; k++)
		didrun[x[k]] = 1
	for (k = 1; k <= nw; k++) {
		# a second waiver of the same finding is used when the first is
		if (!(k in used) && (wi[wf[k]] in used))
			continue
		if (!(k in used) && (check_of(wf[k]) in didrun))
			print "STALE waiver " ARGV[1] ":" wl[k] " matches no finding: " wf[k]
	}
}
