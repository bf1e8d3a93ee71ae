# SPDX-License-Identifier: MIT
# tools/abi/abi-dwarf.awk: the layout facts of a verbs header, read from the DWARF
# the compiler wrote for a probe that includes it (`readelf --debug-dump=info
# --debug-dump=line PROBE.o`, input). Run by tools/abi/abi-dwarf, which explains the
# probe; this file owns reading readelf's dump and printing the facts.
#
# Variables (-v):
#   want   the headers whose types count, as absolute paths separated by
#          spaces, in output order (verbs.h, then verbs_api.h)
#   mode   "names": one "struct NAME" / "union NAME" a line, every struct or
#          union the facts will cover (tools/abi/abi-dwarf takes their _Alignof);
#          "groups": the groups, one a line, in output order;
#          "facts" (default): one "GROUP KEY VALUE" line per fact;
#          "values": "N VALUE" for each of the probe's ibvct_abi_fact_N
#          enumerators (tools/abi/abi-dwarf -e)
#   types  1: also "GROUP type:PATH TEXT" after each member's sizeof
#
# Groups and keys (tools/abi/abi-table turns them into table lines):
#   struct:NAME | union:NAME   sizeof, alignof, offsetof:PATH, sizeof:PATH and
#                              type:PATH per member, nested members by dotted
#                              path, anonymous members through their children
#   struct:verbs_context       also ctxrel:PATH, offset minus that of
#                              `context` (COMPAT-01)
#   enum:NAME | enum:@FIRST    sizeof (named enums) and every enumerator
#   macros                     the probe's ibvct_abi_macro__NAME enumerators
# alignof comes from the probe's ibvct_abi_align__NAME enumerators (the
# compiler's own _Alignof: DWARF records only explicit alignment).
#
# Only what DWARF cannot say is decided here: a member's type is spelled
# back as C from the type DIEs (typedef names kept, array bounds as numbers,
# gcc's base type names in their usual order: "unsigned long" for "long
# unsigned int"); a tagged struct defined inside another struct is a member
# (as C writes it), not a group of its own. Values are exact: DWARF's
# constants are converted as strings, never through awk's doubles, and read
# as the 64-bit two's complement numbers (long long) the table holds.

function die(why) {
	printf "abi-dwarf: %s\n", why > "/dev/stderr"
	failed = 1
	exit 1
}

# ---- numbers ----------------------------------------------------------------
# dec_add(a, b): sum of two non-negative decimal strings.
function dec_add(a, b,    r, c, i, j, s) {
	r = ""; c = 0
	i = length(a); j = length(b)
	while (i > 0 || j > 0 || c) {
		s = c + (i > 0 ? substr(a, i, 1) : 0) + (j > 0 ? substr(b, j, 1) : 0)
		c = (s >= 10); r = (s % 10) r
		i--; j--
	}
	return r
}

# dec_mul_small(a, m): a (decimal string) times a small integer m.
function dec_mul_small(a, m,    r, c, i, s) {
	r = ""; c = 0
	for (i = length(a); i > 0; i--) {
		s = substr(a, i, 1) * m + c
		c = int(s / 10); r = (s % 10) r
	}
	while (c > 0) { r = (c % 10) r; c = int(c / 10) }
	sub(/^0+/, "", r)
	return r == "" ? "0" : r
}

# hex_to_dec(h): "0x..." as a decimal string; 16 digits with the top bit set
# is a negative 64-bit value (DWARF's unsigned forms hold the bits).
function hex_to_dec(h,    d, i, x, neg, r) {
	h = tolower(substr(h, 3))
	sub(/^0+/, "", h)
	neg = (length(h) == 16 && index("89abcdef", substr(h, 1, 1)) > 0)
	r = "0"
	for (i = 1; i <= length(h); i++) {
		x = index("0123456789abcdef", substr(h, i, 1)) - 1
		if (neg)
			x = 15 - x
		r = dec_add(dec_mul_small(r, 16), x "")
	}
	if (neg)
		return "-" dec_add(r, "1")
	return r
}

# num(v): a readelf constant ("24", "0x80000000", "-1", "5\t(signed)").
function num(v) {
	sub(/[ \t].*$/, "", v)
	if (v ~ /^0x[0-9a-fA-F]+$/)
		return hex_to_dec(v)
	if (v ~ /^-?[0-9]+$/)
		return v
	die("not a constant: " v)
}

# ---- reading the dump ---------------------------------------------------------
# strval(v): an attribute's text without readelf's form note.
function strval(v) {
	sub(/^\((indirect |indexed )?(line )?string[^)]*\): /, "", v)
	return v
}

/^ The Directory Table/ { sect = "dirs"; next }
/^ The File Name Table/ { sect = "files"; next }
/^ (No Line Number|Line Number Statements)/ || /^Contents of the / { sect = "" }
sect != "" && /^  [0-9]+\t/ {
	n = split($0, f, "\t")
	e = f[1] + 0
	if (sect == "dirs")
		dir[e] = strval(f[n])
	else
		fname[e] = strval(f[n]) SUBSEP f[2] + 0
	next
}

/^ <[0-9]+><[0-9a-f]+>: Abbrev Number: / {
	s = $0
	sub(/^ </, "", s)
	lvl = s; sub(/>.*$/, "", lvl); lvl += 0
	d = s; sub(/^[0-9]+></, "", d); sub(/>.*$/, "", d); d = "0x" d
	if (!match($0, /\(DW_TAG_[a-z_0-9]+\)/)) {
		cur = ""	# "Abbrev Number: 0": end of a sibling list
		next
	}
	tag[d] = substr($0, RSTART + 8, RLENGTH - 9)
	up[d] = (lvl > 0) ? at[lvl - 1] : ""
	at[lvl] = d
	p = up[d]
	kid[p, ++nkid[p]] = d
	if (lvl == 1)
		top[++ntop] = d
	cur = d
	next
}

cur != "" && /^    <[0-9a-f]+> +DW_AT_[a-z_0-9]+ *: / {
	a = $0
	sub(/^    <[0-9a-f]+> +DW_AT_/, "", a)
	v = a
	sub(/ *: .*$/, "", a)
	sub(/^[a-z_0-9]+ *: /, "", v)
	if (v ~ /^<0x[0-9a-f]+>$/)
		v = substr(v, 2, length(v) - 2)
	attr[cur, a] = v
	next
}

# ---- types --------------------------------------------------------------------
function A(d, a) { return ((d, a) in attr) ? attr[d, a] : "" }
function nm(d) { return strval(A(d, "name")) }

# tsize(t): sizeof the type t.
function tsize(t,    g, n, k, c, s) {
	if (t == "")
		die("size of void")
	if (A(t, "byte_size") != "")
		return num(A(t, "byte_size"))
	g = tag[t]
	if (g == "typedef" || g ~ /^(const|volatile|restrict|atomic)_type$/)
		return tsize(A(t, "type"))
	if (g == "array_type") {
		s = tsize(A(t, "type"))
		for (k = 1; k <= nkid[t]; k++) {
			c = kid[t, k]
			if (tag[c] != "subrange_type")
				continue
			n = dim(c)
			s *= (n == "") ? 0 : n
		}
		return s
	}
	die("no size for DIE " t " (" g ")")
}

# dim(sub): the element count of one subrange, "" when unbounded.
function dim(c) {
	if (A(c, "count") != "")
		return num(A(c, "count"))
	if (A(c, "upper_bound") != "")
		return num(A(c, "upper_bound")) + 1
	return ""
}

# Tokens are kept \001-separated; spell() joins them as C is usually written.
function T(a, b) { return a == "" ? b : b == "" ? a : a "\001" b }

# base(name): gcc's base type name in the order C programs spell it.
function base(n) {
	if (n == "long int") return "long"
	if (n == "short int") return "short"
	if (n == "long long int") return "long long"
	if (n ~ /^(long long|long|short|char|__int128) unsigned( int)?$/) {
		sub(/ unsigned( int)?$/, "", n)
		return "unsigned " n
	}
	return n
}

# tdecl(t, decl): the tokens of type t around declarator tokens decl.
function tdecl(t, decl,    g, x, k, c, p, ps, n) {
	if (t == "")
		return T("void", decl)
	g = tag[t]
	if (g == "base_type") {
		n = split(base(nm(t)), x, " ")
		p = ""
		for (k = 1; k <= n; k++)
			p = T(p, x[k])
		return T(p, decl)
	}
	if (g == "typedef")
		return T(nm(t), decl)
	if (g == "structure_type" || g == "union_type" || g == "enumeration_type") {
		p = (g == "structure_type") ? "struct" : (g == "union_type") ? "union" : "enum"
		return T(T(p, nm(t)), decl)
	}
	if (g == "pointer_type") {
		x[1] = tag[A(t, "type")]
		if (x[1] == "array_type" || x[1] == "subroutine_type")
			return tdecl(A(t, "type"), T(T(T("(", "*"), decl), ")"))
		return tdecl(A(t, "type"), T("*", decl))
	}
	if (g ~ /^(const|volatile|restrict|atomic)_type$/) {
		p = (g == "atomic_type") ? "_Atomic" : substr(g, 1, length(g) - 5)
		if (tag[A(t, "type")] == "pointer_type")
			return tdecl(A(t, "type"), T(p, decl))
		return T(p, tdecl(A(t, "type"), decl))
	}
	if (g == "array_type") {
		for (k = 1; k <= nkid[t]; k++) {
			c = kid[t, k]
			if (tag[c] == "subrange_type")
				decl = T(T(T(decl, "["), dim(c)), "]")
		}
		return tdecl(A(t, "type"), decl)
	}
	if (g == "subroutine_type") {
		ps = ""
		for (k = 1; k <= nkid[t]; k++) {
			c = kid[t, k]
			if (tag[c] == "formal_parameter")
				p = tdecl(A(c, "type"), "")
			else if (tag[c] == "unspecified_parameters")
				p = (A(t, "prototyped") != "") ? "..." : ""
			else
				continue
			if (p != "")
				ps = (ps == "") ? p : T(T(ps, ","), p)
		}
		if (ps == "" && A(t, "prototyped") != "")
			ps = "void"
		return tdecl(A(t, "type"), T(T(T(decl, "("), ps), ")"))
	}
	die("cannot spell DIE " t " (" g ")")
}

# spell(tokens): one space between tokens, none after ( or [, none before
# ) ] [ , , none in ** or )( : "struct ibv_ah * (*)(struct ibv_pd *)".
function spell(s,    n, x, k, out, prev, t) {
	n = split(s, x, "\001")
	out = ""; prev = ""
	for (k = 1; k <= n; k++) {
		t = x[k]
		if (out != "" && prev != "(" && prev != "[" && t != ")" && t != "]" &&
		    t != "[" && t != "," && !(t == "*" && prev == "*") && !(t == "(" && prev == ")"))
			out = out " "
		out = out t
		prev = t
	}
	return out
}

# ---- which DIEs are the header's ------------------------------------------------
function rank(d,    f) {
	f = A(d, "decl_file")
	return (f != "" && (f + 0) in frank) ? frank[f + 0] : 0
}

# inplace(m, t): member m's struct/union type t was defined in the member's
# declaration (anonymous, or a tag whose definition starts between the
# enclosing struct's and the member's own line).
function inplace(m, s, t,    g) {
	g = tag[t]
	if (g != "structure_type" && g != "union_type")
		return 0
	if (nm(t) == "")
		return 1
	return A(t, "decl_file") == A(m, "decl_file") &&
	       A(t, "decl_line") + 0 >= A(s, "decl_line") + 0 &&
	       A(t, "decl_line") + 0 <= A(m, "decl_line") + 0
}

# Marks the tagged structs defined inside s (at any depth) as nested.
function mark_nested(s,    k, m, t) {
	for (k = 1; k <= nkid[s]; k++) {
		m = kid[s, k]
		if (tag[m] != "member")
			continue
		t = A(m, "type")
		if (inplace(m, s, t)) {
			if (nm(t) != "")
				nested[t] = 1
			mark_nested(t)
		}
	}
}

# ---- facts ----------------------------------------------------------------------
function emit(g, k, v) {
	nout++
	og[nout] = g; ok_[nout] = k; ov[nout] = v
}

# members(s, g, prefix, base): the members of s, offsets from base.
function members(s, g, prefix, base0,    k, m, t, n, off) {
	for (k = 1; k <= nkid[s]; k++) {
		m = kid[s, k]
		if (tag[m] != "member")
			continue
		if (A(m, "bit_size") != "" || A(m, "data_bit_offset") != "")
			die(g ": bit-field " prefix nm(m) " (not in the table format)")
		off = A(m, "data_member_location")
		if (off == "")
			off = 0	# union members
		if (off ~ /DW_OP_plus_uconst: /) {
			sub(/^.*DW_OP_plus_uconst: /, "", off)
			sub(/\).*$/, "", off)
		}
		off = base0 + num(off)
		t = A(m, "type")
		n = nm(m)
		if (n == "") {
			if (!inplace(m, s, t))
				die(g ": unnamed member that is not a struct or union")
			members(t, g, prefix, off)
			continue
		}
		emit(g, "offsetof:" prefix n, off)
		emit(g, "sizeof:" prefix n, tsize(t))
		if (types)
			emit(g, "type:" prefix n, spell(tdecl(t, "")))
		if (g == "struct:verbs_context") {
			nrel++
			relp[nrel] = prefix n; relo[nrel] = off
			if (prefix n == "context")
				ctxoff = off
		}
		if (inplace(m, s, t))
			members(t, g, prefix n ".", off)
	}
}

END {
	if (failed)
		exit 1
	nw = split(want, w, " ")
	for (e in fname) {
		split(fname[e], x, SUBSEP)
		p = x[1]
		if (p !~ /^\//)
			p = dir[x[2]] "/" p
		for (k = 1; k <= nw; k++)
			if (p == w[k])
				frank[e] = k
	}
	# the probe's own enumerators: alignof and macro values
	for (i = 1; i <= ntop; i++) {
		d = top[i]
		if (tag[d] != "enumeration_type")
			continue
		for (k = 1; k <= nkid[d]; k++) {
			c = kid[d, k]
			n = nm(c)
			if (n ~ /^ibvct_abi_align__/)
				align[substr(n, 18)] = num(A(c, "const_value"))
			else if (n ~ /^ibvct_abi_macro__/) {
				macro[++nmacro] = substr(n, 18)
				mval[nmacro] = num(A(c, "const_value"))
			} else if (mode == "values" && n ~ /^ibvct_abi_fact_[0-9]+$/)
				print substr(n, 16) " " num(A(c, "const_value"))
		}
	}
	if (mode == "values")
		exit 0
	# the header's definitions, in header order
	ng = 0
	for (i = 1; i <= ntop; i++) {
		d = top[i]
		g = tag[d]
		if ((g != "structure_type" && g != "union_type" && g != "enumeration_type") ||
		    A(d, "declaration") != "" || !rank(d))
			continue
		if (g != "enumeration_type" && nm(d) == "")
			continue	# anonymous: reached through its member
		if (g != "enumeration_type")
			mark_nested(d)
		ng++
		gd[ng] = d
		gkey[ng] = sprintf("%d %9d %6d %6d", rank(d), A(d, "decl_line"), A(d, "decl_column"), ng)
	}
	# insertion sort by file, line, column (a few hundred groups)
	for (i = 2; i <= ng; i++) {
		d = gd[i]; key = gkey[i]
		for (j = i - 1; j >= 1 && gkey[j] > key; j--) {
			gd[j + 1] = gd[j]; gkey[j + 1] = gkey[j]
		}
		gd[j + 1] = d; gkey[j + 1] = key
	}
	for (i = 1; i <= ng; i++) {
		d = gd[i]
		if (d in nested)
			continue
		g = tag[d]
		if (g == "enumeration_type") {
			n = nm(d)
			c = ""
			for (k = 1; k <= nkid[d]; k++)
				if (tag[kid[d, k]] == "enumerator") {
					c = kid[d, k]
					break
				}
			if (c == "")
				continue
			grp = (n != "") ? "enum:" n : "enum:@" nm(c)
			if (mode == "groups") { print grp; continue }
			if (mode == "names") continue
			if (n != "")
				emit(grp, "sizeof", num(A(d, "byte_size")))
			for (k = 1; k <= nkid[d]; k++) {
				c = kid[d, k]
				if (tag[c] == "enumerator")
					emit(grp, nm(c), num(A(c, "const_value")))
			}
			continue
		}
		kind = (g == "structure_type") ? "struct" : "union"
		grp = kind ":" nm(d)
		if (mode == "groups") { print grp; continue }
		if (mode == "names") { print kind " " nm(d); continue }
		if (!(nm(d) in align))
			die(grp ": the probe has no ibvct_abi_align__" nm(d))
		emit(grp, "sizeof", tsize(d))
		emit(grp, "alignof", align[nm(d)])
		nrel = 0; ctxoff = ""
		members(d, grp, "", 0)
		if (nrel) {
			if (ctxoff == "")
				die("verbs_context has no member context")
			for (k = 1; k <= nrel; k++)
				emit(grp, "ctxrel:" relp[k], relo[k] - ctxoff)
		}
	}
	if (mode == "groups") {
		if (nmacro)
			print "macros"
		exit 0
	}
	if (mode == "names")
		exit 0
	for (k = 1; k <= nmacro; k++)
		emit("macros", macro[k], mval[k])
	for (k = 1; k <= nout; k++)
		print og[k] " " ok_[k] " " ov[k]
}
