/* SPDX-License-Identifier: MIT */
/*
 * fw_wire: the RoCE v2 wire codec. Builds and parses one packet from its
 * IP header on: IPv4 or IPv6, UDP to port 4791, BTH, the extension headers
 * its opcode carries (RETH, AETH, AtomicETH, AtomicAckETH, ImmDt, IETH,
 * DETH, XRCETH), the payload, the pad and the ICRC, for every opcode of RC,
 * UC, UD and XRC. Pure functions on caller buffers: no sockets, no state,
 * never a read or write past the length it is given. Sources: README.md.
 */
#ifndef FW_WIRE_H
#define FW_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define FW_UDP_PORT	4791	/* IBA vol 1 annex A17, the RoCE v2 port */
#define FW_BTH_LEN	12
#define FW_RETH_LEN	16
#define FW_AETH_LEN	4
#define FW_ATOMETH_LEN	28
#define FW_ATOMACK_LEN	8
#define FW_IMMDT_LEN	4
#define FW_IETH_LEN	4
#define FW_DETH_LEN	8
#define FW_XRCETH_LEN	4
#define FW_ICRC_LEN	4
#define FW_IP4_LEN	20
#define FW_IP6_LEN	40
#define FW_UDP_LEN	8

/* Transport of an opcode: its top three bits (IBA 9.2, table 36) */
#define FW_TR_RC	0x00
#define FW_TR_UC	0x20
#define FW_TR_UD	0x60
#define FW_TR_XRC	0xa0

/* What follows BTH, in this order on the wire (RDETH, RD's, not modelled) */
enum fw_hdr {
	FW_H_XRCETH	= 1u << 0,
	FW_H_DETH	= 1u << 1,
	FW_H_RETH	= 1u << 2,
	FW_H_ATOMETH	= 1u << 3,
	FW_H_AETH	= 1u << 4,
	FW_H_ATOMACK	= 1u << 5,
	FW_H_IMMDT	= 1u << 6,
	FW_H_IETH	= 1u << 7,
	FW_H_PAYLOAD	= 1u << 8,	/* may carry payload (and so a pad) */
	FW_H_FIRST_MID	= 1u << 9,	/* a first or middle packet: pad 0 */
};

/* Why a packet was refused; fw_strerror names each */
enum fw_err {
	FW_OK = 0,
	FW_E_SHORT,		/* shorter than its headers say */
	FW_E_IPVER,		/* not IPv4 or IPv6 */
	FW_E_IPHDR,		/* IP options, a fragment, not UDP, bad length */
	FW_E_IPCSUM,		/* IPv4 header checksum */
	FW_E_UDP,		/* not port 4791, bad UDP length */
	FW_E_UDPCSUM,		/* a UDP checksum that is not 0 and wrong */
	FW_E_TVER,		/* BTH transport header version not 0 */
	FW_E_OPCODE,		/* an opcode outside RC, UC, UD, XRC's tables */
	FW_E_PAD,		/* pad count against the payload */
	FW_E_LEN,		/* payload on an opcode without one */
	FW_E_ICRC,		/* ICRC mismatch */
	FW_E_SPACE,		/* build: the buffer is too small */
	FW_E_ARG,		/* build: fields that cannot be encoded */
	FW_E_COUNT_
};

struct fw_ip {
	int version;		/* 4 or 6 */
	uint8_t src[16], dst[16];	/* IPv4: the first 4 bytes */
	uint8_t tclass;		/* IPv4 TOS, IPv6 traffic class */
	uint8_t ttl;		/* IPv4 TTL, IPv6 hop limit */
	uint16_t id;		/* IPv4 identification */
	uint16_t frag;		/* IPv4 flags and fragment offset (DF: 0x4000) */
	uint32_t flow;		/* IPv6 flow label (20 bits) */
};

struct fw_bth {
	uint8_t opcode;
	uint8_t se, mig, pad, tver;
	uint16_t pkey;
	uint8_t resv8a;		/* FECN, BECN and resv6a: masked in the ICRC */
	uint32_t dqpn;		/* 24 bits */
	uint8_t ackreq;
	uint8_t resv7;
	uint32_t psn;		/* 24 bits */
};

struct fw_pkt {
	struct fw_ip ip;
	uint16_t sport, dport;
	uint16_t udp_csum;	/* as on the wire; rxe sends 0 */
	struct fw_bth bth;
	unsigned hdrs;		/* enum fw_hdr: parse fills it, build takes the opcode's */
	struct { uint64_t va; uint32_t rkey, len; } reth;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap_add, compare; } atometh;
	uint64_t atomack;	/* AtomicAckETH: the original remote data */
	uint32_t imm;		/* ImmDt, as the 32 bits on the wire */
	uint32_t ieth_rkey;
	struct { uint32_t qkey; uint8_t resv; uint32_t sqpn; } deth;
	struct { uint8_t resv; uint32_t srqn; } xrceth;
	const uint8_t *payload;	/* parse: into the caller's buffer */
	size_t payload_len;	/* without the pad */
	uint32_t icrc;		/* parse: as read, the 4 bytes little-endian */
};

/* The headers after BTH of OPCODE (enum fw_hdr), -1 when it is none of RC,
 * UC, UD or XRC's */
int fw_opcode_hdrs(uint8_t opcode);
/* "SEND_ONLY" and "RC" for 0x04; NULL for an unknown opcode */
const char *fw_opcode_name(uint8_t opcode);
const char *fw_transport_name(uint8_t opcode);
const char *fw_strerror(int err);
/* Bytes of the headers after BTH for the set HDRS */
size_t fw_ext_len(unsigned hdrs);

/* Parses the IP datagram BUF of LEN bytes into P (payload points into BUF).
 * 0, or an enum fw_err with *WHY (when not NULL) a sentence of the reason. */
int fw_parse(const void *buf, size_t len, struct fw_pkt *p, const char **why);
/* The same for a packet to UDP port PORT (a transport's tests on loopback) */
int fw_parse_on(const void *buf, size_t len, uint16_t port, struct fw_pkt *p, const char **why);
/* Builds P's packet into BUF (CAP bytes): IP and UDP lengths, the IPv4
 * header checksum and the ICRC computed; the pad bytes zero; the headers
 * are those of P's opcode (P->hdrs is ignored). The packet's length, or
 * -(enum fw_err). */
long fw_build(const struct fw_pkt *p, void *buf, size_t cap);
/* The ICRC of the complete IP datagram PKT of LEN bytes (the ICRC's own 4
 * bytes at its end are not covered), as the value whose little-endian bytes
 * the packet carries */
uint32_t fw_icrc(const uint8_t *pkt, size_t len);
/* Sets the UDP checksum of the built packet PKT (LEN bytes): IPv6 wants one
 * (RFC 8200 8.1; rxe sends 0 all the same). The ICRC covers the field as
 * ones, so it stays right. */
void fw_fill_udp_csum(uint8_t *pkt, size_t len);

/* The ICRC's pieces, for the tests that prove each one matters: the CRC
 * state to start from and which masked fields to set to ones. */
#define FW_ICRC_SEED	0xdebb20e3u	/* CRC-32 state after 0xffffffff and 8 bytes of ones (the LRH) */
enum fw_mask {
	FW_M_TCLASS	= 1u << 0,	/* IPv4 TOS; IPv6 traffic class and flow label */
	FW_M_TTL	= 1u << 1,	/* IPv4 TTL, IPv6 hop limit */
	FW_M_IPCSUM	= 1u << 2,	/* IPv4 header checksum */
	FW_M_UDPCSUM	= 1u << 3,
	FW_M_RESV8A	= 1u << 4,	/* BTH's FECN, BECN, resv6a byte */
	FW_M_ALL	= 0x1f,
};
uint32_t fw__icrc_with(const uint8_t *pkt, size_t len, uint32_t seed, unsigned masks);
/* The reflected CRC-32 (polynomial 0xedb88320) update, no pre/post inversion:
 * eight bytes a step (slicing by 8), and the same a byte at a time (its
 * reference: t5900 holds one to the other; ibvct-bench-wire times both) */
uint32_t fw__crc32(uint32_t crc, const void *buf, size_t len);
uint32_t fw__crc32_bytes(uint32_t crc, const void *buf, size_t len);

#endif
