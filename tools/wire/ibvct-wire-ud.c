/* SPDX-License-Identifier: MIT */
/*
 * ibvct-wire-ud: the client side of Debian's ibv_ud_pingpong, spoken on the
 * wire codec (fake-provider/wire) over a UDP socket instead of a verbs
 * device: it swaps addresses with the server over TCP as the pingpong does
 * (one line "LID:QPN:PSN:GID" each way, then "done"), then sends ITERS UD
 * SEND_ONLY packets to the server's QP and takes each of its replies,
 * which must parse with their ICRC good and be addressed to our QP. Real
 * rxe on the server proves the other direction: it drops a packet whose
 * ICRC or Q_Key is wrong, and the pingpong then never completes.
 *
 *   ibvct-wire-ud -i IFACE [-4|-6] [-p PORT] [-n ITERS] [-s SIZE] SERVER
 *
 * Exit 0 when every message went and came back, 1 otherwise.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fw_udp.h"
#include "wire_tcp.h"

#define OUR_QPN	0x000abc	/* any: the server takes it from our line */
#define OUR_PSN	0x00c0de
#define QKEY	0x11111111u	/* ud_pingpong's Q_Key */

static int full(ssize_t r, size_t n)
{
	return r >= 0 && (size_t)r == n;
}

int main(int argc, char **argv)
{
	const char *ifname = NULL, *port = "18515";
	int version = 6, iters = 3, size = 64, opt, fd, rc = 1;
	char msg[sizeof("0000:000000:000000:00000000000000000000000000000000")], gidhex[33];
	unsigned lid, rqpn, rpsn;
	uint8_t rgid[16], *pay, buf[9000];
	long mult = getenv("IBVCT_TIMEOUT_MULT") ? atol(getenv("IBVCT_TIMEOUT_MULT")) : 1;
	struct fw_udp u;
	struct fw_pkt p, q;
	const char *why;

	while ((opt = getopt(argc, argv, "i:46p:n:s:")) != -1) {
		switch (opt) {
		case 'i': ifname = optarg; break;
		case '4': version = 4; break;
		case '6': version = 6; break;
		case 'p': port = optarg; break;
		case 'n': iters = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!ifname || optind != argc - 1 || iters < 1 || size < 1 || size > 4096)
		goto usage;
	if (mult < 1)
		mult = 1;
	errno = fw_udp_open(&u, ifname, version, FW_UDP_PORT);
	if (errno) {
		perror("ibvct-wire-ud: UDP port 4791");
		return 1;
	}
	for (int k = 0; k < 16; k++)
		sprintf(gidhex + 2 * k, "%02x", u.gid[k]);
	printf("local address: QPN 0x%06x PSN 0x%06x GID %s\n", OUR_QPN, OUR_PSN, gidhex);
	fd = wire_tcp_connect(argv[optind], port);
	if (fd < 0) {
		fprintf(stderr, "ibvct-wire-ud: cannot connect to %s:%s\n", argv[optind], port);
		goto out;
	}
	/* the pingpong's exchange: our line, its line, "done" */
	snprintf(msg, sizeof(msg), "%04x:%06x:%06x:%s", 0, OUR_QPN, OUR_PSN, gidhex);
	if (!full(write(fd, msg, sizeof(msg)), sizeof(msg)) ||
	    !full(read(fd, msg, sizeof(msg)), sizeof(msg)) ||
	    !full(write(fd, "done", sizeof("done")), sizeof("done"))) {
		fprintf(stderr, "ibvct-wire-ud: the address exchange failed\n");
		goto out_fd;
	}
	msg[sizeof(msg) - 1] = 0;
	if (sscanf(msg, "%x:%x:%x:%32s", &lid, &rqpn, &rpsn, gidhex) != 4 || strlen(gidhex) != 32) {
		fprintf(stderr, "ibvct-wire-ud: the server's line: %s\n", msg);
		goto out_fd;
	}
	for (int k = 0; k < 16; k++) {
		unsigned b;

		sscanf(gidhex + 2 * k, "%2x", &b);
		rgid[k] = (uint8_t)b;
	}
	printf("remote address: QPN 0x%06x PSN 0x%06x GID %s\n", rqpn, rpsn, gidhex);
	pay = malloc((size_t)size);
	if (!pay)
		goto out_fd;
	for (int k = 0; k < size; k++)
		pay[k] = (uint8_t)k;
	for (int i = 0; i < iters; i++) {
		int e;

		memset(&p, 0, sizeof(p));
		p.bth.opcode = FW_TR_UD | 0x04;	/* SEND_ONLY */
		p.bth.pkey = 0xffff;
		p.bth.dqpn = rqpn;
		p.bth.psn = (OUR_PSN + (uint32_t)i) & 0xffffff;
		p.deth.qkey = QKEY;
		p.deth.sqpn = OUR_QPN;
		p.payload = pay;
		p.payload_len = (size_t)size;
		p.bth.pad = (uint8_t)((4 - size % 4) % 4);
		e = fw_udp_send(&u, &p, rgid, FW_UDP_PORT);
		if (e) {
			fprintf(stderr, "ibvct-wire-ud: send %d: %s\n", i, strerror(e));
			goto out_pay;
		}
		e = fw_udp_recv(&u, &q, buf, sizeof(buf), (int)(60000 * mult), &why);
		if (e) {
			fprintf(stderr, "ibvct-wire-ud: reply %d: %s\n", i,
				e == EBADMSG ? why : strerror(e));
			goto out_pay;
		}
		if (q.bth.opcode != (FW_TR_UD | 0x04) || q.bth.dqpn != OUR_QPN || q.deth.qkey != QKEY ||
		    q.deth.sqpn != rqpn || q.payload_len != (size_t)size) {
			fprintf(stderr, "ibvct-wire-ud: reply %d: opcode 0x%02x to QP 0x%06x, Q_Key 0x%08x, "
				"from QP 0x%06x, %zu bytes\n", i, q.bth.opcode, q.bth.dqpn, q.deth.qkey,
				q.deth.sqpn, q.payload_len);
			goto out_pay;
		}
		printf("message %d: sent PSN 0x%06x; reply PSN 0x%06x, %zu bytes, pad %u, ICRC good\n", i,
		       p.bth.psn, q.bth.psn, q.payload_len, q.bth.pad);
	}
	printf("%d UD sends each way over IPv%d\n", iters, version);
	rc = 0;
out_pay:
	free(pay);
out_fd:
	close(fd);
out:
	fw_udp_close(&u);
	return rc;
usage:
	fprintf(stderr, "usage: ibvct-wire-ud -i IFACE [-4|-6] [-p PORT] [-n ITERS] [-s SIZE] SERVER\n");
	return 2;
}
