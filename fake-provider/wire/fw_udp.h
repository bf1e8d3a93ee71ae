/* SPDX-License-Identifier: MIT */
/*
 * fw_udp: the start of the RoCE v2 transport: a UDP socket on port 4791 of
 * one address of a real interface, its GID (the IPv4-mapped ::ffff:a.b.c.d
 * or the IPv6 address), and codec packets sent and received through it.
 * The kernel writes the IP and UDP headers; fw_udp predicts the ones that
 * the ICRC covers (fw_wire.h) so that a real receiver's check holds, and
 * puts them back in front of a received packet so that fw_parse checks it.
 */
#ifndef FW_UDP_H
#define FW_UDP_H

#include <stddef.h>
#include <stdint.h>

#include "fw_wire.h"

struct fw_udp {
	int fd;
	int version;		/* 4 or 6 */
	uint8_t addr[16];	/* the bound address (IPv4: its first 4 bytes) */
	uint8_t gid[16];
	unsigned ifindex;	/* the interface (an IPv6 link-local's scope) */
	uint16_t port;
	/* a fault for the next send only: these bits flipped in its ICRC (a
	 * receiver must drop it), 0: none */
	uint32_t icrc_flip;
	/* a fault for the next send only: the packet cut after its first cut
	 * bytes past the UDP header (a truncated header: the receiver and a
	 * dissector find it malformed), 0: whole */
	size_t cut;
};

/* Opens a socket on ADDR (an IPv4 or IPv6 address of interface IFNAME,
 * found with getifaddrs: VERSION 4, or 6 for its link-local one, else any)
 * and PORT
 * (FW_UDP_PORT but in tests). 0 or an errno. */
int fw_udp_open(struct fw_udp *u, const char *ifname, int version, uint16_t port);
void fw_udp_close(struct fw_udp *u);
/* The GID of an address: IPv4-mapped for IPv4 (VERSION 4, 4 bytes), the
 * address itself for IPv6 */
void fw_udp_gid_of(int version, const uint8_t *addr, uint8_t gid[16]);

/* Sends P (its IP addresses, ports and lengths set here: from U to the GID
 * DGID, port DPORT) as one UDP datagram. 0 or an errno. */
int fw_udp_send(struct fw_udp *u, struct fw_pkt *p, const uint8_t dgid[16], uint16_t dport);
/* Receives one datagram within TIMEOUT_MS into BUF (CAP bytes: the IP and
 * UDP headers put back, then the datagram) and parses it into P.
 * 0; ETIMEDOUT; EBADMSG with *WHY the parser's reason; or an errno.
 * IPv4: the identification field, which the ICRC covers, does not reach a
 * UDP socket; it is taken as 0 with DF, as a Linux UDP socket sends
 * (ip_select_ident_segs) and fw_udp_send does, not as rxe does. */
int fw_udp_recv(struct fw_udp *u, struct fw_pkt *p, uint8_t *buf, size_t cap, int timeout_ms,
		const char **why);

#endif
