/* SPDX-License-Identifier: MIT */
/*
 * t5900: the RoCE v2 codec (fake-provider/wire) against real rxe's packets.
 * Every packet of every capture in fixtures/wire/ (Debian's kernel and
 * rdma_rxe, recorded by tools/vm/wire-capture) parses with its ICRC good,
 * and building the decoded fields gives back the same bytes, ICRC included.
 * Each check can fail: the ICRC with a wrong seed or one mask left out
 * disagrees with rxe's on every packet; a field off by one builds other
 * bytes; one flipped bit in each region of each packet is refused for its
 * reason, while the fields the ICRC masks may change and still pass; and
 * random damage is refused or builds back (the parser reads only its length).
 * The CRC-32 the ICRC runs, eight bytes a step, equals the byte loop.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_pcap.h"
#include "fw_wire.h"
#include "tr.h"

#define MAXF 32

struct cap {
	char name[600];
	uint8_t *buf;
	size_t len;
};

static struct cap caps[MAXF];
static int ncaps;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cap *)a)->name, ((const struct cap *)b)->name);
}

/* Reads one capture into caps[] */
static void load_file(const char *path, const char *name)
{
	FILE *f = fopen(path, "rb");
	long sz;

	assert_non_null(f);
	assert_true(ncaps < MAXF);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	assert_true(sz > 0);
	rewind(f);
	caps[ncaps].buf = malloc((size_t)sz);
	assert_non_null(caps[ncaps].buf);
	assert_int_equal(fread(caps[ncaps].buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	caps[ncaps].len = (size_t)sz;
	snprintf(caps[ncaps].name, sizeof(caps[ncaps].name), "%s", name);
	ncaps++;
}

/* Every fixtures/wire/KERNEL/ *.pcap, read whole, sorted by name */
static void load(void)
{
	const char *src = getenv("IBVCT_SRC");
	char top[4096], dir[4400], path[4800], name[600];
	struct dirent *k, *e;
	DIR *t, *d;

	if (ncaps)
		return;
	snprintf(top, sizeof(top), "%s/fixtures/wire", src && *src ? src : ".");
	t = opendir(top);
	assert_non_null(t);
	while ((k = readdir(t))) {
		if (k->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", top, k->d_name);
		d = opendir(dir);
		if (!d)
			continue;	/* README.md */
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);

			if (n < 6 || strcmp(e->d_name + n - 5, ".pcap"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			snprintf(name, sizeof(name), "%s/%s", k->d_name, e->d_name);
			load_file(path, name);
		}
		closedir(d);
	}
	closedir(t);
	qsort(caps, (size_t)ncaps, sizeof(caps[0]), by_name);
	assert_true(ncaps > 0);
}

/* Calls FN on each packet of each capture; the packet's count */
static unsigned each_packet(void (*fn)(const char *cap, unsigned i, const uint8_t *pkt, size_t len))
{
	unsigned total = 0;

	load();
	for (int c = 0; c < ncaps; c++) {
		struct fw_pcap pc;
		const char *why = NULL;
		const uint8_t *ip;
		size_t len;
		int r;

		if (fw_pcap_open(&pc, caps[c].buf, caps[c].len, &why))
			fail_msg("%s: %s", caps[c].name, why);
		while ((r = fw_pcap_next(&pc, &ip, &len, &why)) == 1) {
			fn(caps[c].name, pc.index, ip, len);
			total++;
		}
		if (r < 0)
			fail_msg("%s: record %u: %s", caps[c].name, pc.index + 1, why);
	}
	return total;
}

/* The IP datagram's own length (an Ethernet frame may pad it) */
static size_t ip_len(const uint8_t *pkt)
{
	return pkt[0] >> 4 == 4 ? (size_t)(pkt[2] << 8 | pkt[3]) : 40 + (size_t)(pkt[4] << 8 | pkt[5]);
}

static void parse_ok(const char *cap, unsigned i, const uint8_t *pkt, size_t len, struct fw_pkt *p)
{
	const char *why;
	int r = fw_parse(pkt, len, p, &why);

	if (r)
		fail_msg("%s packet %u: refused: %s", cap, i, why);
}

/* ---- every packet parses and builds back ---------------------------------- */

static unsigned seen[256];

static void decode_and_rebuild(const char *cap, unsigned i, const uint8_t *pkt, size_t len)
{
	static uint8_t out[70000];
	struct fw_pkt p;
	long n;

	parse_ok(cap, i, pkt, len, &p);
	seen[p.bth.opcode]++;
	n = fw_build(&p, out, sizeof(out));
	if (n < 0)
		fail_msg("%s packet %u: build: %s", cap, i, fw_strerror((int)-n));
	if ((size_t)n != ip_len(pkt) || memcmp(out, pkt, (size_t)n)) {
		size_t k = 0;

		while (k < (size_t)n && k < len && out[k] == pkt[k])
			k++;
		fail_msg("%s packet %u (%s %s): built %ld bytes, captured %zu; first difference at byte %zu",
			 cap, i, fw_transport_name(p.bth.opcode), fw_opcode_name(p.bth.opcode), n,
			 ip_len(pkt), k);
	}
}

TR_TEST(every_captured_packet_parses_and_builds_back_byte_exact)
{
	/* what the captures must hold, so that a lost fixture fails here */
	static const uint8_t want[] = {
		0x00, 0x01, 0x02, 0x04, 0x11,		/* RC sends, ACK */
		0x06, 0x08, 0x0a,			/* RC writes */
		0x0c, 0x0d, 0x0f, 0x10,			/* RC read request, responses */
		0x12, 0x13, 0x14,			/* RC atomics, atomic ACK */
		0x20, 0x22,				/* UC sends */
		0x64,					/* UD SEND_ONLY */
	};
	unsigned n, kinds = 0;
	char line[1024];
	size_t o = 0;

	(void)state;
	memset(seen, 0, sizeof(seen));
	n = each_packet(decode_and_rebuild);
	for (size_t k = 0; k < sizeof(want); k++)
		if (!seen[want[k]])
			fail_msg("no %s %s packet in fixtures/wire/", fw_transport_name(want[k]),
				 fw_opcode_name(want[k]));
	for (int op = 0; op < 256; op++)
		if (seen[op]) {
			kinds++;
			o += (size_t)snprintf(line + o, sizeof(line) - o, " %02x:%u", op, seen[op]);
		}
	tr_note("%u packets of %d captures, %u opcodes (opcode:count):%s", n, ncaps, kinds, line);
}

/* ---- the ICRC: each of its parts matters ----------------------------------- */

static void icrc_parts(const char *cap, unsigned i, const uint8_t *pkt, size_t len)
{
	static const struct { unsigned mask; const char *name; } m[] = {
		{ FW_M_TCLASS, "traffic class" }, { FW_M_TTL, "TTL / hop limit" },
		{ FW_M_IPCSUM, "IPv4 checksum" }, { FW_M_UDPCSUM, "UDP checksum" },
		{ FW_M_RESV8A, "BTH resv8a" },
	};
	struct fw_pkt p;
	size_t l = ip_len(pkt);

	parse_ok(cap, i, pkt, len, &p);
	assert_int_equal(fw__icrc_with(pkt, l, FW_ICRC_SEED, FW_M_ALL), p.icrc);
	/* the CRC's own start, 0xffffffff, leaves out the masked LRH */
	if (fw__icrc_with(pkt, l, 0xffffffffu, FW_M_ALL) == p.icrc)
		fail_msg("%s packet %u: the ICRC without the LRH's 8 bytes agrees", cap, i);
	if (fw__icrc_with(pkt, l, FW_ICRC_SEED ^ 1, FW_M_ALL) == p.icrc)
		fail_msg("%s packet %u: the ICRC with a seed off by one bit agrees", cap, i);
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		if (m[k].mask == FW_M_IPCSUM && p.ip.version == 6)
			continue;
		if (fw__icrc_with(pkt, l, FW_ICRC_SEED, FW_M_ALL & ~m[k].mask) == p.icrc)
			fail_msg("%s packet %u: the ICRC agrees without the %s mask", cap, i, m[k].name);
	}
}

/* The seed and each mask of IBA annex A17 as rxe applies them */
TR_TEST(icrc_with_a_wrong_seed_or_a_mask_left_out_disagrees_with_rxe)
{
	(void)state;
	tr_note("%u packets checked", each_packet(icrc_parts));
}

/* ---- a field off by one builds other bytes --------------------------------- */

static void off_by_one(const char *cap, unsigned i, const uint8_t *pkt, size_t len)
{
	static uint8_t out[70000];
	struct fw_pkt p, q;
	/* every field the codec writes (uint32 or narrower ones by size) */
	struct { void *f; size_t sz; const char *name; unsigned need; } fl[] = {
		{ &p.ip.tclass, 1, "tclass", 0 }, { &p.ip.ttl, 1, "ttl", 0 },
		{ &p.ip.src[3], 1, "src", 0 }, { &p.ip.dst[3], 1, "dst", 0 },
		{ &p.sport, 2, "sport", 0 }, { &p.dport, 2, "dport", 0 },
		{ &p.udp_csum, 2, "udp_csum", 0 }, { &p.bth.opcode, 1, "opcode", 0 },
		{ &p.bth.pkey, 2, "pkey", 0 }, { &p.bth.resv8a, 1, "resv8a", 0 },
		{ &p.bth.dqpn, 4, "dqpn", 0 }, { &p.bth.psn, 4, "psn", 0 },
		{ &p.bth.se, 1, "se", 0 }, { &p.bth.mig, 1, "mig", 0 }, { &p.bth.ackreq, 1, "ackreq", 0 },
		{ &p.reth.va, 8, "reth.va", FW_H_RETH }, { &p.reth.rkey, 4, "reth.rkey", FW_H_RETH },
		{ &p.reth.len, 4, "reth.len", FW_H_RETH }, { &p.aeth.syndrome, 1, "aeth.syndrome", FW_H_AETH },
		{ &p.aeth.msn, 4, "aeth.msn", FW_H_AETH }, { &p.atometh.va, 8, "atom.va", FW_H_ATOMETH },
		{ &p.atometh.rkey, 4, "atom.rkey", FW_H_ATOMETH },
		{ &p.atometh.swap_add, 8, "atom.swap_add", FW_H_ATOMETH },
		{ &p.atometh.compare, 8, "atom.compare", FW_H_ATOMETH },
		{ &p.atomack, 8, "atomack", FW_H_ATOMACK }, { &p.imm, 4, "imm", FW_H_IMMDT },
		{ &p.ieth_rkey, 4, "ieth", FW_H_IETH }, { &p.deth.qkey, 4, "deth.qkey", FW_H_DETH },
		{ &p.deth.sqpn, 4, "deth.sqpn", FW_H_DETH }, { &p.xrceth.srqn, 4, "xrc.srqn", FW_H_XRCETH },
	};
	size_t l = ip_len(pkt);

	parse_ok(cap, i, pkt, len, &p);
	q = p;
	for (size_t k = 0; k < sizeof(fl) / sizeof(fl[0]); k++) {
		long n;

		if (fl[k].need && !(p.hdrs & fl[k].need))
			continue;
		p = q;
		/* +1, or -1 where +1 would leave the field's width */
		switch (fl[k].sz) {
		case 1: { uint8_t *v = fl[k].f; *v = *v ? (uint8_t)(*v - 1) : 1; break; }
		case 2: { uint16_t *v = fl[k].f; *v = *v ? (uint16_t)(*v - 1) : 1; break; }
		case 4: { uint32_t *v = fl[k].f; *v = *v ? *v - 1 : 1; break; }
		case 8: { uint64_t *v = fl[k].f; *v = *v ? *v - 1 : 1; break; }
		}
		n = fw_build(&p, out, sizeof(out));
		if (n < 0)
			continue;	/* not encodable (an opcode with other headers): refused */
		if ((size_t)n == l && !memcmp(out, pkt, l))
			fail_msg("%s packet %u: %s off by one builds the captured bytes", cap, i, fl[k].name);
	}
}

TR_TEST(a_field_off_by_one_builds_other_bytes)
{
	(void)state;
	each_packet(off_by_one);
}

/* ---- corrupted copies are refused for their reason ------------------------- */

/* Fixes the IPv4 header checksum of PKT after an edit */
static void ip4_fix(uint8_t *pkt)
{
	uint32_t s = 0;

	pkt[10] = pkt[11] = 0;
	for (int k = 0; k < 20; k += 2)
		s += (uint32_t)(pkt[k] << 8 | pkt[k + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	pkt[10] = (uint8_t)(~s >> 8);
	pkt[11] = (uint8_t)~s;
}

static unsigned n_mut;

/* Flips BIT of byte OFF of a copy of PKT (fixing the IPv4 checksum when FIX)
 * and checks the parser's answer is WANT */
static void mutate(const char *cap, unsigned i, const uint8_t *pkt, size_t len, size_t off, int bit,
		   int fix, int want, const char *what)
{
	static uint8_t c[70000];
	struct fw_pkt p;
	const char *why;
	int r;

	assert_true(off < len && len <= sizeof(c));
	memcpy(c, pkt, len);
	c[off] ^= (uint8_t)(1u << bit);
	if (fix && (c[0] >> 4) == 4)
		ip4_fix(c);
	r = fw_parse(c, len, &p, &why);
	n_mut++;
	if (r != want)
		fail_msg("%s packet %u: %s (byte %zu bit %d): got \"%s\", want \"%s\"", cap, i, what, off,
			 bit, fw_strerror(r), fw_strerror(want));
}

static void corrupt(const char *cap, unsigned i, const uint8_t *pkt, size_t len)
{
	static uint8_t c[70000];
	uint8_t *g;
	struct fw_pkt p;
	size_t l = ip_len(pkt), ipl, u, t, e, pay;
	int v6;
	const char *why;

	parse_ok(cap, i, pkt, len, &p);
	v6 = p.ip.version == 6;
	ipl = v6 ? 40 : 20;
	u = ipl;
	t = u + 8;
	e = t + 12;
	pay = e + fw_ext_len(p.hdrs);
	/* IP: the version; an address (covered by the ICRC); IPv4's checksum */
	mutate(cap, i, pkt, l, 0, 7, 0, FW_E_IPVER, "IP version");
	mutate(cap, i, pkt, l, v6 ? 8 : 12, 0, 1, FW_E_ICRC, "IP source address");
	if (!v6)
		mutate(cap, i, pkt, l, 12, 0, 0, FW_E_IPCSUM, "IPv4 address, checksum left");
	/* the masked fields: a router may change them, the ICRC holds */
	mutate(cap, i, pkt, l, v6 ? 1 : 1, v6 ? 4 : 2, 1, FW_OK, "traffic class (masked)");
	mutate(cap, i, pkt, l, v6 ? 7 : 8, 0, 1, FW_OK, "TTL / hop limit (masked)");
	mutate(cap, i, pkt, l, t + 4, 7, 0, FW_OK, "BTH FECN (masked)");
	/* UDP: the source port (covered), the port, the length */
	mutate(cap, i, pkt, l, u + 1, 0, 0, FW_E_ICRC, "UDP source port");
	mutate(cap, i, pkt, l, u + 3, 0, 0, FW_E_UDP, "UDP destination port");
	mutate(cap, i, pkt, l, u + 5, 2, 0, FW_E_UDP, "UDP length");
	/* BTH: the PSN, the version, the opcode's transport */
	mutate(cap, i, pkt, l, t + 11, 0, 0, FW_E_ICRC, "BTH PSN");
	mutate(cap, i, pkt, l, t + 5, 0, 0, FW_E_ICRC, "BTH destination QP");
	mutate(cap, i, pkt, l, t + 1, 0, 0, FW_E_TVER, "BTH TVer");
	/* each extension header */
	for (size_t k = e; k < pay; k += 4)
		mutate(cap, i, pkt, l, k, 0, 0, FW_E_ICRC, "an extension header");
	if (p.payload_len)
		mutate(cap, i, pkt, l, pay + p.payload_len / 2, 3, 0, FW_E_ICRC, "the payload");
	mutate(cap, i, pkt, l, l - 1, 5, 0, FW_E_ICRC, "the ICRC");
	/* a pad count the length cannot hold: on a first or middle packet, or
	 * more than the bytes after the headers */
	if ((p.hdrs & FW_H_FIRST_MID) || p.payload_len + p.bth.pad == 0)
		mutate(cap, i, pkt, l, t + 1, 4, 0, FW_E_PAD, "BTH pad count");
	/* an unknown opcode: 0x15, reserved in RC, UC and XRC */
	memcpy(c, pkt, l);
	c[t] = (uint8_t)((c[t] & 0xe0) | 0x15);
	if (fw_parse(c, l, &p, &why) != FW_E_OPCODE)
		fail_msg("%s packet %u: opcode 0x%02x: %s", cap, i, c[t], why);
	/* cut: every length short of the whole is refused, the headers' own
	 * first; none reads past the end (ASan, valgrind) */
	g = tr_guard_alloc(l);
	for (size_t k = 0; k < l; k++) {
		memcpy(g + l - k, pkt, k);
		if (fw_parse(g + l - k, k, &p, &why) == FW_OK)
			fail_msg("%s packet %u: cut to %zu bytes: accepted", cap, i, k);
	}
	tr_guard_free(g, l);
	n_mut += (unsigned)l + 1;
}

TR_TEST(a_corrupted_packet_is_refused_for_its_reason)
{
	unsigned n;

	(void)state;
	n_mut = 0;
	n = each_packet(corrupt);
	tr_note("%u corrupted copies of %u packets", n_mut, n);
}

/* ---- random damage: a fixed-seed fuzz over the captures -------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

static unsigned n_acc, n_ref;

/* Bytes of a packet changed at random, its IPv4 checksum and ICRC made
 * right again (so the damage reaches the checks past them), parsed at the
 * end of a guard page: a refusal, or an accepted packet whose payload lies
 * inside it and which builds back to the same bytes but its pad's */
static void damage(const char *cap, unsigned i, const uint8_t *pkt, size_t len)
{
	static uint8_t out[70000];
	size_t l = ip_len(pkt);
	uint8_t *g = tr_guard_alloc(l);

	(void)len;
	for (int round = 0; round < 64; round++) {
		struct fw_pkt p;
		const char *why;
		uint32_t icrc;
		int nflip = 1 + (int)(rnd() % 4);

		memcpy(g, pkt, l);
		for (int k = 0; k < nflip; k++)
			g[rnd() % (l < 64 ? l : 64)] ^= (uint8_t)(1u << (rnd() % 8));
		if (rnd() % 4 && (g[0] >> 4) == 4)
			ip4_fix(g);
		if (rnd() % 4) {
			icrc = fw_icrc(g, l);
			memcpy(g + l - 4, (uint8_t[]){ (uint8_t)icrc, (uint8_t)(icrc >> 8),
						       (uint8_t)(icrc >> 16), (uint8_t)(icrc >> 24) }, 4);
		}
		if (fw_parse(g, l, &p, &why) != FW_OK) {
			n_ref++;
			continue;
		}
		n_acc++;
		if (p.payload < g || p.payload + p.payload_len + p.bth.pad + FW_ICRC_LEN > g + l)
			fail_msg("%s packet %u: accepted with its payload outside the packet", cap, i);
		memset((uint8_t *)p.payload + p.payload_len, 0, p.bth.pad);
		icrc = fw_icrc(g, ip_len(g));
		memcpy(g + ip_len(g) - 4, (uint8_t[]){ (uint8_t)icrc, (uint8_t)(icrc >> 8),
					       (uint8_t)(icrc >> 16), (uint8_t)(icrc >> 24) }, 4);
		if (fw_build(&p, out, sizeof(out)) != (long)ip_len(g) || memcmp(out, g, ip_len(g)))
			fail_msg("%s packet %u: accepted damage does not build back", cap, i);
	}
	tr_guard_free(g, l);
}

/* No input reads past its end or is half accepted */
TR_TEST(random_damage_is_refused_or_builds_back)
{
	(void)state;
	n_acc = n_ref = 0;
	each_packet(damage);
	tr_note("%u damaged copies refused, %u accepted and built back", n_ref, n_acc);
	assert_true(n_ref > 0 && n_acc > 0);
}

/*
 * The CRC-32 of the ICRC, eight bytes a step, is the byte loop's CRC: on
 * the check value of the CRC-32 catalogue ("123456789" -> 0xcbf43926), and
 * for every length to 80 at every alignment of 8, from several states, so
 * that each of the eight lookups and the tail are covered.
 */
TR_TEST(icrc_crc_by_eight_bytes_equals_the_byte_loop)
{
	uint8_t buf[96];
	static const uint32_t seeds[] = { 0, 0xffffffffu, FW_ICRC_SEED, 0x12345678u };
	unsigned bad = 0;

	(void)state;
	assert_int_equal(~fw__crc32(0xffffffffu, "123456789", 9), 0xcbf43926u);
	assert_int_equal(~fw__crc32_bytes(0xffffffffu, "123456789", 9), 0xcbf43926u);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (unsigned s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		for (size_t off = 0; off < 8; off++)
			for (size_t len = 0; len + off <= 88; len++)
				if (fw__crc32(seeds[s], buf + off, len) !=
				    fw__crc32_bytes(seeds[s], buf + off, len))
					bad++;
	assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
