/* SPDX-License-Identifier: MIT */
/*
 * fw_pcap: the classic pcap file format, as much as the wire room needs: a
 * reader of captures (Ethernet, Linux cooked or raw IP link types; each
 * record's IP datagram) over a caller's buffer, and a writer of raw IP
 * captures for tshark. Layout: the pcap file format of libpcap
 * (pcap-savefile(5), the IETF draft of pcap); no code of it.
 */
#ifndef FW_PCAP_H
#define FW_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FW_LINK_ETHERNET	1
#define FW_LINK_RAW		101	/* the record is the IP datagram */
#define FW_LINK_LINUX_SLL	113

struct fw_pcap {
	const uint8_t *buf;
	size_t len, off;
	int swap;		/* the file's byte order is not ours */
	uint32_t linktype;
	unsigned index;		/* records read so far */
};

/* Opens the capture BUF of LEN bytes: 0, or -1 with *WHY the reason */
int fw_pcap_open(struct fw_pcap *pc, const void *buf, size_t len, const char **why);
/* The next record's IP datagram (the link header skipped): 1 with *IP and
 * *LEN set, 0 at the end, -1 with *WHY for a cut or foreign record */
int fw_pcap_next(struct fw_pcap *pc, const uint8_t **ip, size_t *len, const char **why);
/* A raw IP capture: its header, then one record per packet. 0 or -1 (errno) */
int fw_pcap_write_header(FILE *f);
int fw_pcap_write(FILE *f, const void *pkt, size_t len, uint32_t sec);

#endif
