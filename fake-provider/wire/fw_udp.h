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
#include <sys/socket.h>

#include "fw_wire.h"

/* The receive buffer a socket asks for (fw_udp.c set_rcvbuf says why) */
#define FW_UDP_RCVBUF	(8 << 20)

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

/*
 * Datagrams taken many in one system call (recvmmsg), for a receiver that
 * serves a socket in bursts: fw_udp_fill takes what waits now (b->n of
 * them, 0 when none), fw_udp_next parses the next one into P (its payload
 * points into B, valid until the next fill) with fw_udp_recv's answers
 * (ETIMEDOUT: none left), and fw_udp_stamp says when the next one arrived
 * (CLOCK_REALTIME ns; 0 when the socket does not ask for SO_TIMESTAMPNS).
 */
#define FW_UDP_BATCH	16
#define FW_UDP_SLOT	10240	/* a packet of 4096 bytes and its headers, and more */
struct fw_udp_batch {
	unsigned n, at;		/* taken; the next to hand out */
	struct mmsghdr mh[FW_UDP_BATCH];
	struct iovec iov[FW_UDP_BATCH];
	struct sockaddr_storage from[FW_UDP_BATCH];
	char ctl[FW_UDP_BATCH][128];
	uint8_t buf[FW_UDP_BATCH][FW_UDP_SLOT];
};
int fw_udp_fill(struct fw_udp *u, struct fw_udp_batch *b);
int fw_udp_next(struct fw_udp *u, struct fw_udp_batch *b, struct fw_pkt *p, const char **why);
long long fw_udp_stamp(const struct fw_udp_batch *b);

/*
 * Datagrams sent many in one system call (sendmmsg), in the order pushed:
 * fw_udp_push builds P as fw_udp_send would (its fault included) into the
 * queue, sending what waits first when the queue is full, and one longer
 * than a slot alone; fw_udp_flush sends what waits. Each answers 0 or the
 * first errno a datagram met (that datagram is lost; the others go).
 */
struct fw_udp_txq {
	unsigned n;
	size_t len[FW_UDP_BATCH];
	struct sockaddr_storage to[FW_UDP_BATCH];
	socklen_t tolen[FW_UDP_BATCH];
	uint8_t buf[FW_UDP_BATCH][FW_UDP_SLOT];
};
int fw_udp_push(struct fw_udp *u, struct fw_udp_txq *q, struct fw_pkt *p, const uint8_t dgid[16],
		uint16_t dport);
int fw_udp_flush(struct fw_udp *u, struct fw_udp_txq *q);

#endif
