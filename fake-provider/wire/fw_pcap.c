/* SPDX-License-Identifier: MIT */
/*
 * fw_pcap: reads pcap captures from memory and writes raw IP ones
 * (fw_pcap.h). The reader never reads past the buffer: each length is
 * checked against what is left before the bytes are touched.
 */
#include <string.h>

#include "fw_pcap.h"

#define MAGIC_US	0xa1b2c3d4u	/* microsecond timestamps */
#define MAGIC_NS	0xa1b23c4du	/* nanosecond timestamps */
#define FILE_HDR	24
#define REC_HDR		16

static uint32_t rd32(const struct fw_pcap *pc, const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return pc->swap ? __builtin_bswap32(v) : v;
}

int fw_pcap_open(struct fw_pcap *pc, const void *buf, size_t len, const char **why)
{
	uint32_t magic;

	memset(pc, 0, sizeof(*pc));
	pc->buf = buf;
	pc->len = len;
	if (len < FILE_HDR) {
		*why = "shorter than a pcap file header";
		return -1;
	}
	memcpy(&magic, buf, 4);
	if (magic != MAGIC_US && magic != MAGIC_NS) {
		magic = __builtin_bswap32(magic);
		if (magic != MAGIC_US && magic != MAGIC_NS) {
			*why = "not a pcap file (magic)";
			return -1;
		}
		pc->swap = 1;
	}
	pc->linktype = rd32(pc, pc->buf + 20) & 0xffff;
	if (pc->linktype != FW_LINK_ETHERNET && pc->linktype != FW_LINK_RAW &&
	    pc->linktype != FW_LINK_LINUX_SLL) {
		*why = "a link type other than Ethernet, Linux cooked or raw IP";
		return -1;
	}
	pc->off = FILE_HDR;
	return 0;
}

int fw_pcap_next(struct fw_pcap *pc, const uint8_t **ip, size_t *len, const char **why)
{
	const uint8_t *r;
	size_t incl, orig, skip = 0;
	unsigned type;

	if (pc->off == pc->len)
		return 0;
	if (pc->len - pc->off < REC_HDR) {
		*why = "a record header cut short";
		return -1;
	}
	r = pc->buf + pc->off;
	incl = rd32(pc, r + 8);
	orig = rd32(pc, r + 12);
	if (incl > pc->len - pc->off - REC_HDR) {
		*why = "a record cut short";
		return -1;
	}
	if (incl != orig) {
		*why = "a record not captured whole (snap length)";
		return -1;
	}
	r += REC_HDR;
	if (pc->linktype == FW_LINK_ETHERNET) {
		skip = 14;
		if (incl >= 18 && r[12] == 0x81 && r[13] == 0x00)
			skip = 18;	/* one 802.1Q tag */
		type = incl >= skip ? (unsigned)(r[skip - 2] << 8 | r[skip - 1]) : 0;
	} else if (pc->linktype == FW_LINK_LINUX_SLL) {
		skip = 16;
		type = incl >= skip ? (unsigned)(r[14] << 8 | r[15]) : 0;
	} else {
		type = incl ? (r[0] >> 4 == 6 ? 0x86dd : 0x0800) : 0;
	}
	if (incl < skip || (type != 0x0800 && type != 0x86dd)) {
		*why = "a record that is not an IP packet";
		return -1;
	}
	pc->off += REC_HDR + incl;
	pc->index++;
	*ip = r + skip;
	*len = incl - skip;
	return 1;
}

static int put(FILE *f, const void *b, size_t n)
{
	return fwrite(b, 1, n, f) == n ? 0 : -1;
}

int fw_pcap_write_header(FILE *f)
{
	/* ours: host order, as every reader accepts either */
	uint32_t h[6] = { MAGIC_US, 2u | 4u << 16, 0, 0, 65535, FW_LINK_RAW };

	if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
		h[1] = 2u << 16 | 4u;	/* version 2.4 as two 16-bit fields */
	return put(f, h, sizeof(h));
}

int fw_pcap_write(FILE *f, const void *pkt, size_t len, uint32_t sec)
{
	uint32_t h[4] = { sec, 0, (uint32_t)len, (uint32_t)len };

	return put(f, h, sizeof(h)) || put(f, pkt, len) ? -1 : 0;
}
