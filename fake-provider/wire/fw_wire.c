/* SPDX-License-Identifier: MIT */
/*
 * fw_wire: the RoCE v2 codec (fw_wire.h): the opcode table, the headers in
 * network byte order, the pad and the ICRC. Every read is bounded by the
 * length the caller gave: the parser checks a region's length before it
 * touches the region.
 */
#include <pthread.h>
#include <string.h>

#include "fw_wire.h"

#define P	FW_H_PAYLOAD
#define FM	FW_H_FIRST_MID

/* The headers after BTH per low five bits of an opcode, for RC (IBA vol 1
 * 9.2, tables 36 and 38; the same sets as rxe_opcode.c's rxe_opcode[]).
 * 0: reserved. UC takes 0x00-0x0b of it, UD 0x04 and 0x05 with DETH, XRC
 * all of it with XRCETH on the requests. */
static const unsigned rc_hdrs[32] = {
	[0x00] = P | FM,				/* SEND_FIRST */
	[0x01] = P | FM,				/* SEND_MIDDLE */
	[0x02] = P,					/* SEND_LAST */
	[0x03] = FW_H_IMMDT | P,			/* SEND_LAST_WITH_IMMEDIATE */
	[0x04] = P,					/* SEND_ONLY */
	[0x05] = FW_H_IMMDT | P,			/* SEND_ONLY_WITH_IMMEDIATE */
	[0x06] = FW_H_RETH | P | FM,			/* RDMA_WRITE_FIRST */
	[0x07] = P | FM,				/* RDMA_WRITE_MIDDLE */
	[0x08] = P,					/* RDMA_WRITE_LAST */
	[0x09] = FW_H_IMMDT | P,			/* RDMA_WRITE_LAST_WITH_IMMEDIATE */
	[0x0a] = FW_H_RETH | P,				/* RDMA_WRITE_ONLY */
	[0x0b] = FW_H_RETH | FW_H_IMMDT | P,		/* RDMA_WRITE_ONLY_WITH_IMMEDIATE */
	[0x0c] = FW_H_RETH,				/* RDMA_READ_REQUEST */
	[0x0d] = FW_H_AETH | P | FM,			/* RDMA_READ_RESPONSE_FIRST */
	[0x0e] = P | FM,				/* RDMA_READ_RESPONSE_MIDDLE */
	[0x0f] = FW_H_AETH | P,				/* RDMA_READ_RESPONSE_LAST */
	[0x10] = FW_H_AETH | P,				/* RDMA_READ_RESPONSE_ONLY */
	[0x11] = FW_H_AETH,				/* ACKNOWLEDGE */
	[0x12] = FW_H_AETH | FW_H_ATOMACK,		/* ATOMIC_ACKNOWLEDGE */
	[0x13] = FW_H_ATOMETH,				/* COMPARE_SWAP */
	[0x14] = FW_H_ATOMETH,				/* FETCH_ADD */
	[0x16] = FW_H_IETH | P,				/* SEND_LAST_WITH_INVALIDATE */
	[0x17] = FW_H_IETH | P,				/* SEND_ONLY_WITH_INVALIDATE */
};

static const char *const op_names[32] = {
	[0x00] = "SEND_FIRST", [0x01] = "SEND_MIDDLE", [0x02] = "SEND_LAST",
	[0x03] = "SEND_LAST_WITH_IMMEDIATE", [0x04] = "SEND_ONLY",
	[0x05] = "SEND_ONLY_WITH_IMMEDIATE", [0x06] = "RDMA_WRITE_FIRST",
	[0x07] = "RDMA_WRITE_MIDDLE", [0x08] = "RDMA_WRITE_LAST",
	[0x09] = "RDMA_WRITE_LAST_WITH_IMMEDIATE", [0x0a] = "RDMA_WRITE_ONLY",
	[0x0b] = "RDMA_WRITE_ONLY_WITH_IMMEDIATE", [0x0c] = "RDMA_READ_REQUEST",
	[0x0d] = "RDMA_READ_RESPONSE_FIRST", [0x0e] = "RDMA_READ_RESPONSE_MIDDLE",
	[0x0f] = "RDMA_READ_RESPONSE_LAST", [0x10] = "RDMA_READ_RESPONSE_ONLY",
	[0x11] = "ACKNOWLEDGE", [0x12] = "ATOMIC_ACKNOWLEDGE",
	[0x13] = "COMPARE_SWAP", [0x14] = "FETCH_ADD",
	[0x16] = "SEND_LAST_WITH_INVALIDATE", [0x17] = "SEND_ONLY_WITH_INVALIDATE",
};

int fw_opcode_hdrs(uint8_t opcode)
{
	unsigned low = opcode & 0x1f, h = rc_hdrs[low];

	if (!h)
		return -1;
	switch (opcode & 0xe0) {
	case FW_TR_RC:
		return (int)h;
	case FW_TR_UC:
		return low <= 0x0b ? (int)h : -1;
	case FW_TR_UD:
		return low == 0x04 || low == 0x05 ? (int)(h | FW_H_DETH) : -1;
	case FW_TR_XRC:
		/* the responder's packets (read responses, ACKs) carry none */
		return low >= 0x0d && low <= 0x12 ? (int)h : (int)(h | FW_H_XRCETH);
	}
	return -1;
}

const char *fw_opcode_name(uint8_t opcode)
{
	return fw_opcode_hdrs(opcode) < 0 ? NULL : op_names[opcode & 0x1f];
}

const char *fw_transport_name(uint8_t opcode)
{
	static const char *const tr[8] = { "RC", "UC", NULL, "UD", NULL, "XRC" };

	return fw_opcode_hdrs(opcode) < 0 ? NULL : tr[opcode >> 5];
}

const char *fw_strerror(int err)
{
	static const char *const s[FW_E_COUNT_] = {
		[FW_OK] = "ok",
		[FW_E_SHORT] = "packet shorter than its headers",
		[FW_E_IPVER] = "not an IPv4 or IPv6 packet",
		[FW_E_IPHDR] = "IP header: options, a fragment, not UDP or a bad length",
		[FW_E_IPCSUM] = "bad IPv4 header checksum",
		[FW_E_UDP] = "UDP: not to port 4791 or a bad length",
		[FW_E_UDPCSUM] = "bad UDP checksum",
		[FW_E_TVER] = "BTH transport header version is not 0",
		[FW_E_OPCODE] = "unknown BTH opcode",
		[FW_E_PAD] = "bad pad count",
		[FW_E_LEN] = "payload on an opcode without one",
		[FW_E_ICRC] = "bad ICRC",
		[FW_E_SPACE] = "buffer too small",
		[FW_E_ARG] = "fields that cannot be encoded",
	};

	return err >= 0 && err < FW_E_COUNT_ ? s[err] : "unknown error";
}

size_t fw_ext_len(unsigned hdrs)
{
	return (hdrs & FW_H_XRCETH ? FW_XRCETH_LEN : 0) + (hdrs & FW_H_DETH ? FW_DETH_LEN : 0) +
	       (hdrs & FW_H_RETH ? FW_RETH_LEN : 0) + (hdrs & FW_H_ATOMETH ? FW_ATOMETH_LEN : 0) +
	       (hdrs & FW_H_AETH ? FW_AETH_LEN : 0) + (hdrs & FW_H_ATOMACK ? FW_ATOMACK_LEN : 0) +
	       (hdrs & FW_H_IMMDT ? FW_IMMDT_LEN : 0) + (hdrs & FW_H_IETH ? FW_IETH_LEN : 0);
}

/* ---- byte order ------------------------------------------------------------ */
static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }
static uint32_t get24(const uint8_t *b) { return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2]; }
static uint32_t get32(const uint8_t *b) { return (uint32_t)get16(b) << 16 | get16(b + 2); }
static uint64_t get64(const uint8_t *b) { return (uint64_t)get32(b) << 32 | get32(b + 4); }
static void put16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)(v >> 8); b[1] = (uint8_t)v; }
static void put24(uint8_t *b, uint32_t v) { b[0] = (uint8_t)(v >> 16); put16(b + 1, (uint16_t)v); }
static void put32(uint8_t *b, uint32_t v) { put16(b, (uint16_t)(v >> 16)); put16(b + 2, (uint16_t)v); }
static void put64(uint8_t *b, uint64_t v) { put32(b, (uint32_t)(v >> 32)); put32(b + 4, (uint32_t)v); }

/* ---- checksums ------------------------------------------------------------- */
/*
 * CRC-32 (reflected, 0xedb88320) by slicing: table k gives the effect of a
 * byte followed by k zero bytes, so eight bytes fold into the state with
 * eight independent lookups instead of a chain of eight (the method of
 * Kounavis and Berry, "A Systematic Approach to Building High Performance
 * Software-Based CRC Generators", 2005; Linux lib/crc32.c uses it for the
 * crc32_le that rxe_icrc.c calls). Same results as the byte loop
 * (fw__crc32_bytes), which t5900 checks over every length and alignment.
 * The bytes are read one by one and assembled little-endian, so the result
 * does not depend on the host's byte order or on alignment.
 */
static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_tab[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++)
			crc_tab[t][i] = crc_tab[t - 1][i] >> 8 ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

uint32_t fw__crc32_bytes(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	pthread_once(&crc_once, crc_init);
	while (len--)
		crc = crc_tab[0][(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t fw__crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	pthread_once(&crc_once, crc_init);
	for (; len >= 8; b += 8, len -= 8) {
		uint32_t lo = crc ^ le32(b), hi = le32(b + 4);

		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][lo >> 8 & 0xff] ^
		      crc_tab[5][lo >> 16 & 0xff] ^ crc_tab[4][lo >> 24] ^
		      crc_tab[3][hi & 0xff] ^ crc_tab[2][hi >> 8 & 0xff] ^
		      crc_tab[1][hi >> 16 & 0xff] ^ crc_tab[0][hi >> 24];
	}
	while (len--)
		crc = crc_tab[0][(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The Internet checksum's folded one's-complement sum of LEN bytes */
static uint32_t sum16(uint32_t s, const uint8_t *b, size_t len)
{
	for (; len > 1; b += 2, len -= 2)
		s += get16(b);
	if (len)
		s += (uint32_t)b[0] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The UDP checksum of the datagram UDP (ULEN bytes, its checksum field
 * taken as 0) with the pseudo header of IP (RFC 768, RFC 8200 8.1) */
static uint16_t udp_csum(const uint8_t *ip, int v6, const uint8_t *udp, size_t ulen)
{
	uint32_t s = v6 ? sum16(0, ip + 8, 32) : sum16(0, ip + 12, 8);
	uint16_t c;

	s += 17 + (uint32_t)ulen;
	s = sum16(s, udp, 6);
	s = sum16(s, udp + 8, ulen - 8);
	c = fold(s);
	return c ? c : 0xffff;
}

/* ---- ICRC ------------------------------------------------------------------ */
uint32_t fw__icrc_with(const uint8_t *pkt, size_t len, uint32_t seed, unsigned masks)
{
	/* the IP, UDP and BTH headers, with the fields a router may change set
	 * to ones (IBA vol 1 annex A17.3.3; rxe_icrc.c rxe_icrc_hdr) */
	uint8_t h[FW_IP6_LEN + FW_UDP_LEN + FW_BTH_LEN];
	size_t ipl = (pkt[0] >> 4) == 6 ? FW_IP6_LEN : FW_IP4_LEN, hl = ipl + FW_UDP_LEN + FW_BTH_LEN;
	uint32_t crc;

	if (len < hl + FW_ICRC_LEN)
		return 0;
	memcpy(h, pkt, hl);
	if (ipl == FW_IP4_LEN) {
		if (masks & FW_M_TCLASS)
			h[1] = 0xff;
		if (masks & FW_M_TTL)
			h[8] = 0xff;
		if (masks & FW_M_IPCSUM)
			h[10] = h[11] = 0xff;
	} else {
		if (masks & FW_M_TCLASS) {
			h[0] |= 0x0f;
			h[1] = h[2] = h[3] = 0xff;
		}
		if (masks & FW_M_TTL)
			h[7] = 0xff;
	}
	if (masks & FW_M_UDPCSUM)
		h[ipl + 6] = h[ipl + 7] = 0xff;
	if (masks & FW_M_RESV8A)
		h[ipl + FW_UDP_LEN + 4] = 0xff;
	crc = fw__crc32(seed, h, hl);
	crc = fw__crc32(crc, pkt + hl, len - hl - FW_ICRC_LEN);
	return ~crc;
}

uint32_t fw_icrc(const uint8_t *pkt, size_t len)
{
	return fw__icrc_with(pkt, len, FW_ICRC_SEED, FW_M_ALL);
}

/* ---- parse ----------------------------------------------------------------- */
static int refuse(int err, const char **why)
{
	if (why)
		*why = fw_strerror(err);
	return err;
}

int fw_parse(const void *buf, size_t len, struct fw_pkt *p, const char **why)
{
	return fw_parse_on(buf, len, FW_UDP_PORT, p, why);
}

int fw_parse_on(const void *buf, size_t len, uint16_t port, struct fw_pkt *p, const char **why)
{
	const uint8_t *b = buf, *u, *t;
	size_t ipl, ulen, rest, ext;
	int h;

	memset(p, 0, sizeof(*p));
	if (len < 1)
		return refuse(FW_E_SHORT, why);
	p->ip.version = b[0] >> 4;
	if (p->ip.version == 4) {
		size_t tot;

		ipl = FW_IP4_LEN;
		if (len < ipl)
			return refuse(FW_E_SHORT, why);
		tot = get16(b + 2);
		p->ip.frag = get16(b + 6);
		if ((b[0] & 0x0f) != 5 || b[9] != 17 || (p->ip.frag & 0x3fff) || tot < ipl)
			return refuse(FW_E_IPHDR, why);
		if (tot > len)
			return refuse(FW_E_SHORT, why);
		if (fold(sum16(0, b, ipl)) != 0)
			return refuse(FW_E_IPCSUM, why);
		len = tot;	/* an Ethernet frame's padding is not the packet's */
		p->ip.tclass = b[1];
		p->ip.id = get16(b + 4);
		p->ip.ttl = b[8];
		memcpy(p->ip.src, b + 12, 4);
		memcpy(p->ip.dst, b + 16, 4);
	} else if (p->ip.version == 6) {
		size_t pl;

		ipl = FW_IP6_LEN;
		if (len < ipl)
			return refuse(FW_E_SHORT, why);
		pl = get16(b + 4);
		if (b[6] != 17)
			return refuse(FW_E_IPHDR, why);
		if (ipl + pl > len)
			return refuse(FW_E_SHORT, why);
		len = ipl + pl;
		p->ip.tclass = (uint8_t)(get16(b) >> 4);
		p->ip.flow = get24(b + 1) & 0xfffff;
		p->ip.ttl = b[7];
		memcpy(p->ip.src, b + 8, 16);
		memcpy(p->ip.dst, b + 24, 16);
	} else {
		return refuse(FW_E_IPVER, why);
	}
	if (len < ipl + FW_UDP_LEN)
		return refuse(FW_E_SHORT, why);
	u = b + ipl;
	p->sport = get16(u);
	p->dport = get16(u + 2);
	ulen = get16(u + 4);
	p->udp_csum = get16(u + 6);
	if (p->dport != port || ulen != len - ipl)
		return refuse(FW_E_UDP, why);
	if (p->udp_csum && udp_csum(b, p->ip.version == 6, u, ulen) != p->udp_csum)
		return refuse(FW_E_UDPCSUM, why);
	if (ulen < FW_UDP_LEN + FW_BTH_LEN + FW_ICRC_LEN)
		return refuse(FW_E_SHORT, why);
	t = u + FW_UDP_LEN;
	p->bth.opcode = t[0];
	p->bth.se = t[1] >> 7;
	p->bth.mig = (t[1] >> 6) & 1;
	p->bth.pad = (t[1] >> 4) & 3;
	p->bth.tver = t[1] & 0x0f;
	p->bth.pkey = get16(t + 2);
	p->bth.resv8a = t[4];
	p->bth.dqpn = get24(t + 5);
	p->bth.ackreq = t[8] >> 7;
	p->bth.resv7 = t[8] & 0x7f;
	p->bth.psn = get24(t + 9);
	if (p->bth.tver != 0)
		return refuse(FW_E_TVER, why);
	h = fw_opcode_hdrs(p->bth.opcode);
	if (h < 0)
		return refuse(FW_E_OPCODE, why);
	p->hdrs = (unsigned)h;
	ext = fw_ext_len(p->hdrs);
	rest = ulen - FW_UDP_LEN - FW_BTH_LEN - FW_ICRC_LEN;
	if (rest < ext)
		return refuse(FW_E_SHORT, why);
	t += FW_BTH_LEN;
	if (p->hdrs & FW_H_XRCETH) {
		p->xrceth.resv = t[0];
		p->xrceth.srqn = get24(t + 1);
		t += FW_XRCETH_LEN;
	}
	if (p->hdrs & FW_H_DETH) {
		p->deth.qkey = get32(t);
		p->deth.resv = t[4];
		p->deth.sqpn = get24(t + 5);
		t += FW_DETH_LEN;
	}
	if (p->hdrs & FW_H_RETH) {
		p->reth.va = get64(t);
		p->reth.rkey = get32(t + 8);
		p->reth.len = get32(t + 12);
		t += FW_RETH_LEN;
	}
	if (p->hdrs & FW_H_ATOMETH) {
		p->atometh.va = get64(t);
		p->atometh.rkey = get32(t + 8);
		p->atometh.swap_add = get64(t + 12);
		p->atometh.compare = get64(t + 20);
		t += FW_ATOMETH_LEN;
	}
	if (p->hdrs & FW_H_AETH) {
		p->aeth.syndrome = t[0];
		p->aeth.msn = get24(t + 1);
		t += FW_AETH_LEN;
	}
	if (p->hdrs & FW_H_ATOMACK) {
		p->atomack = get64(t);
		t += FW_ATOMACK_LEN;
	}
	if (p->hdrs & FW_H_IMMDT) {
		p->imm = get32(t);
		t += FW_IMMDT_LEN;
	}
	if (p->hdrs & FW_H_IETH) {
		p->ieth_rkey = get32(t);
		t += FW_IETH_LEN;
	}
	rest -= ext;	/* payload and pad */
	if (!(p->hdrs & FW_H_PAYLOAD) && rest)
		return refuse(FW_E_LEN, why);
	/* the pad fills the payload to a multiple of 4 (IBA 9.2.2); a first
	 * or middle packet is a full path MTU and has none */
	if (rest % 4 || p->bth.pad > rest || (p->bth.pad && (p->hdrs & FW_H_FIRST_MID)))
		return refuse(FW_E_PAD, why);
	p->payload = t;
	p->payload_len = rest - p->bth.pad;
	t += rest;
	p->icrc = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
	if (fw_icrc(b, len) != p->icrc)
		return refuse(FW_E_ICRC, why);
	if (why)
		*why = fw_strerror(FW_OK);
	return FW_OK;
}

/* ---- build ----------------------------------------------------------------- */
long fw_build(const struct fw_pkt *p, void *buf, size_t cap)
{
	uint8_t *b = buf, *u, *t;
	int h = fw_opcode_hdrs(p->bth.opcode);
	size_t ipl, ulen, len, padded;
	unsigned hdrs;
	uint32_t icrc;

	if (h < 0 || (p->ip.version != 4 && p->ip.version != 6) || p->bth.pad > 3 ||
	    p->bth.tver > 15 || p->bth.dqpn > 0xffffff || p->bth.psn > 0xffffff || p->bth.resv7 > 0x7f)
		return -FW_E_ARG;
	hdrs = (unsigned)h;
	padded = p->payload_len + p->bth.pad;
	if ((!(hdrs & FW_H_PAYLOAD) && padded) || padded % 4 ||
	    (p->bth.pad && (hdrs & FW_H_FIRST_MID)))
		return -FW_E_ARG;
	ipl = p->ip.version == 6 ? FW_IP6_LEN : FW_IP4_LEN;
	ulen = FW_UDP_LEN + FW_BTH_LEN + fw_ext_len(hdrs) + padded + FW_ICRC_LEN;
	len = ipl + ulen;
	if (len > 0xffff || (p->ip.version == 6 && ulen > 0xffff))
		return -FW_E_ARG;
	if (len > cap)
		return -FW_E_SPACE;
	memset(b, 0, len);
	if (p->ip.version == 4) {
		b[0] = 0x45;
		b[1] = p->ip.tclass;
		put16(b + 2, (uint16_t)len);
		put16(b + 4, p->ip.id);
		put16(b + 6, p->ip.frag);
		b[8] = p->ip.ttl;
		b[9] = 17;
		memcpy(b + 12, p->ip.src, 4);
		memcpy(b + 16, p->ip.dst, 4);
		put16(b + 10, fold(sum16(0, b, FW_IP4_LEN)));
	} else {
		put32(b, 6u << 28 | (uint32_t)p->ip.tclass << 20 | (p->ip.flow & 0xfffff));
		put16(b + 4, (uint16_t)ulen);
		b[6] = 17;
		b[7] = p->ip.ttl;
		memcpy(b + 8, p->ip.src, 16);
		memcpy(b + 24, p->ip.dst, 16);
	}
	u = b + ipl;
	put16(u, p->sport);
	put16(u + 2, p->dport);
	put16(u + 4, (uint16_t)ulen);
	t = u + FW_UDP_LEN;
	t[0] = p->bth.opcode;
	t[1] = (uint8_t)((p->bth.se ? 0x80 : 0) | (p->bth.mig ? 0x40 : 0) | p->bth.pad << 4 | p->bth.tver);
	put16(t + 2, p->bth.pkey);
	t[4] = p->bth.resv8a;
	put24(t + 5, p->bth.dqpn);
	t[8] = (uint8_t)((p->bth.ackreq ? 0x80 : 0) | p->bth.resv7);
	put24(t + 9, p->bth.psn);
	t += FW_BTH_LEN;
	if (hdrs & FW_H_XRCETH) {
		t[0] = p->xrceth.resv;
		put24(t + 1, p->xrceth.srqn);
		t += FW_XRCETH_LEN;
	}
	if (hdrs & FW_H_DETH) {
		put32(t, p->deth.qkey);
		t[4] = p->deth.resv;
		put24(t + 5, p->deth.sqpn);
		t += FW_DETH_LEN;
	}
	if (hdrs & FW_H_RETH) {
		put64(t, p->reth.va);
		put32(t + 8, p->reth.rkey);
		put32(t + 12, p->reth.len);
		t += FW_RETH_LEN;
	}
	if (hdrs & FW_H_ATOMETH) {
		put64(t, p->atometh.va);
		put32(t + 8, p->atometh.rkey);
		put64(t + 12, p->atometh.swap_add);
		put64(t + 20, p->atometh.compare);
		t += FW_ATOMETH_LEN;
	}
	if (hdrs & FW_H_AETH) {
		t[0] = p->aeth.syndrome;
		put24(t + 1, p->aeth.msn);
		t += FW_AETH_LEN;
	}
	if (hdrs & FW_H_ATOMACK) {
		put64(t, p->atomack);
		t += FW_ATOMACK_LEN;
	}
	if (hdrs & FW_H_IMMDT) {
		put32(t, p->imm);
		t += FW_IMMDT_LEN;
	}
	if (hdrs & FW_H_IETH) {
		put32(t, p->ieth_rkey);
		t += FW_IETH_LEN;
	}
	if (p->payload_len)
		memcpy(t, p->payload, p->payload_len);
	/* the UDP checksum as given (rxe sends 0): the ICRC covers it as ones */
	icrc = fw_icrc(b, len);
	t = b + len - FW_ICRC_LEN;
	t[0] = (uint8_t)icrc;
	t[1] = (uint8_t)(icrc >> 8);
	t[2] = (uint8_t)(icrc >> 16);
	t[3] = (uint8_t)(icrc >> 24);
	put16(u + 6, p->udp_csum);
	return (long)len;
}

void fw_fill_udp_csum(uint8_t *pkt, size_t len)
{
	size_t ipl = (pkt[0] >> 4) == 6 ? FW_IP6_LEN : FW_IP4_LEN;
	uint8_t *u = pkt + ipl;

	if (len < ipl + FW_UDP_LEN)
		return;
	u[6] = u[7] = 0;
	put16(u + 6, udp_csum(pkt, ipl == FW_IP6_LEN, u, len - ipl));
}
