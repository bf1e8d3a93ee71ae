/* SPDX-License-Identifier: MIT */
/*
 * ibvct-bench-icrc (`make bench-icrc`): the ICRC's CRC-32 of the wire codec
 * (fake-provider/wire fw__crc32, eight bytes a step) against the byte loop
 * it replaced (fw__crc32_bytes), in one run, on the same buffers: a 4 KiB
 * block, and a whole RoCE v2 packet of a 1024-byte payload (fw_build: the
 * headers, the payload and its ICRC), the path MTU rxe runs on an Ethernet
 * of 1500 bytes. It prints MB/s for each and the ratio. A measurement, not
 * a test: it asserts no speed; it exits 1 only when the two disagree.
 *
 *   ibvct-bench-icrc [-n ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fw_wire.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

/* MB/s of FN over LEN bytes of BUF, ROUNDS times; *OUT its last value */
static double rate(crc_fn fn, const uint8_t *buf, size_t len, long rounds, uint32_t *out)
{
	volatile uint32_t sink = 0;
	double t0, dt;

	for (long i = 0; i < rounds / 10 + 1; i++)	/* warm: tables in cache, the clock up */
		sink ^= fn(0xffffffffu ^ (uint32_t)i, buf, len);
	t0 = now_s();

	for (long i = 0; i < rounds; i++)
		sink ^= fn(0xffffffffu ^ (uint32_t)i, buf, len);
	dt = now_s() - t0;
	*out = fn(0xffffffffu, buf, len);
	(void)sink;
	return dt > 0 ? (double)len * (double)rounds / dt / 1e6 : 0;
}

int main(int argc, char **argv)
{
	static uint8_t block[4096], pkt[2048], payload[1024];
	struct fw_pkt p;
	long rounds = 20000, n;
	int opt, bad = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || (rounds = atol(optarg)) <= 0) {
			fprintf(stderr, "usage: ibvct-bench-icrc [-n ROUNDS]\n");
			return 2;
		}
	}
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (uint8_t)(i * 131 + 7);
	memcpy(payload, block, sizeof(payload));
	memset(&p, 0, sizeof(p));
	p.ip.version = 6;
	p.ip.ttl = 64;
	p.sport = 49152;
	p.dport = FW_UDP_PORT;
	p.bth.opcode = 0x04;	/* RC SEND_ONLY */
	p.bth.pkey = 0xffff;
	p.bth.dqpn = 0x11;
	p.payload = payload;
	p.payload_len = sizeof(payload);
	n = fw_build(&p, pkt, sizeof(pkt));
	if (n < 0) {
		fprintf(stderr, "ibvct-bench-icrc: fw_build: %s\n", fw_strerror((int)-n));
		return 1;
	}
	printf("%-28s %12s %12s %8s\n", "buffer", "bytes MB/s", "by-8 MB/s", "ratio");
	{
		const struct { const char *name; const uint8_t *buf; size_t len; } b[] = {
			{ "4096-byte block", block, sizeof(block) },
			{ "RoCE v2 packet, 1024 B", pkt, (size_t)n },
		};

		for (unsigned i = 0; i < 2; i++) {
			uint32_t c1, c8;
			double r1 = rate(fw__crc32_bytes, b[i].buf, b[i].len, rounds, &c1);
			double r8 = rate(fw__crc32, b[i].buf, b[i].len, rounds, &c8);

			if (c1 != c8) {
				fprintf(stderr, "ibvct-bench-icrc: %s: %08x != %08x\n", b[i].name, c1, c8);
				bad = 1;
			}
			printf("%-28s %12.0f %12.0f %8.2f\n", b[i].name, r1, r8, r1 > 0 ? r8 / r1 : 0);
		}
	}
	return bad;
}
