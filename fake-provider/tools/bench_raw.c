/* SPDX-License-Identifier: MIT */
/*
 * The machine's own limit, the baselines of the fake HCA's figures: a
 * single-producer single-consumer ring of 64-byte slots in a MAP_SHARED
 * mapping between this process and a forked child, both sides spinning
 * (ping-pong through two rings: round trip p50/p99; one ring: one-way
 * stream rate), and memcpy of 64 KiB blocks (bandwidth). No libibverbs here:
 * this is what two processes of this machine can do at best, now.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

#define SLOT	64
#define SLOTS	1024
#define STOP	UINT64_MAX		/* the tag that ends the child's loop */
#define BLOCK	(64 * 1024)

/* Producer and consumer counters on cache lines of their own. */
struct ring {
	_Alignas(64) uint64_t head;		/* messages consumed */
	_Alignas(64) uint64_t tail;		/* messages produced */
	_Alignas(64) unsigned char slot[SLOTS][SLOT];
};

struct rings {
	struct ring down;			/* parent -> child */
	struct ring up;				/* child -> parent */
};

static unsigned char msg_tmpl[SLOT];

static void ring_put(struct ring *r, uint64_t tag)
{
	uint64_t t = r->tail;			/* the producer's alone */
	unsigned spins = 0;

	while (t - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= SLOTS)
		bench_relax(&spins);
	memcpy(r->slot[t % SLOTS], msg_tmpl, SLOT);
	memcpy(r->slot[t % SLOTS], &tag, sizeof(tag));
	__atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
}

static uint64_t ring_get(struct ring *r)
{
	uint64_t h = r->head, tag;		/* the consumer's alone */
	unsigned char m[SLOT];
	unsigned spins = 0;

	while (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) == h)
		bench_relax(&spins);
	memcpy(m, r->slot[h % SLOTS], SLOT);
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	memcpy(&tag, m, sizeof(tag));
	return tag;
}

/* Until the producer's count has been consumed. */
static void ring_drain(struct ring *r)
{
	unsigned spins = 0;

	while (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != r->tail)
		bench_relax(&spins);
}

/* The child: echo every ping, then consume the stream; STOP ends each. */
static void raw_child(struct rings *rg)
{
	uint64_t tag;

	while ((tag = ring_get(&rg->down)) != STOP)
		ring_put(&rg->up, tag);
	while (ring_get(&rg->down) != STOP)
		;
	_exit(0);
}

static void raw_ping(void *arg, long i)
{
	struct rings *rg = arg;
	uint64_t tag;

	ring_put(&rg->down, (uint64_t)i);
	tag = ring_get(&rg->up);
	if (tag != (uint64_t)i)
		bench_fail("raw ring: sent %ld, the echo says %llu", i, (unsigned long long)tag);
}

static void raw_stream(struct rings *rg)
{
	struct bench_budget b = bench_rate_budget(), w = bench_warm(b);
	long long t0, until;
	long i;

	for (i = 0; i < w.n; i++)
		ring_put(&rg->down, (uint64_t)i);
	ring_drain(&rg->down);
	t0 = fp_now_ns();
	until = t0 + b.ns;
	for (i = 0; i < b.n && ((i & 63) || fp_now_ns() <= until); i++)
		ring_put(&rg->down, (uint64_t)i);
	ring_drain(&rg->down);
	bench_put(BF_RAW_STREAM, (double)i * 1e9 / (double)(fp_now_ns() - t0), i);
}

static void raw_memcpy(void)
{
	struct bench_budget b = bench_rate_budget(), w = bench_warm(b);
	char *src = aligned_alloc(64, BLOCK), *dst = aligned_alloc(64, BLOCK);
	long long t0, until;
	long i;

	if (!src || !dst)
		bench_fail_errno("aligned_alloc", errno);
	memset(src, 0x5a, BLOCK);
	memset(dst, 0, BLOCK);
	for (i = 0; i < w.n; i++) {
		memcpy(dst, src, BLOCK);
		__asm__ volatile("" : : "r"(dst), "r"(src) : "memory");	/* keep every copy */
	}
	t0 = fp_now_ns();
	until = t0 + b.ns;
	for (i = 0; i < b.n && ((i & 15) || fp_now_ns() <= until); i++) {
		memcpy(dst, src, BLOCK);
		__asm__ volatile("" : : "r"(dst), "r"(src) : "memory");
	}
	bench_put(BF_RAW_MEMCPY, (double)i * BLOCK * 1e3 / (double)(fp_now_ns() - t0), i);
	free(src);
	free(dst);
}

void bench_raw_session(void)
{
	struct rings *rg = mmap(NULL, sizeof(*rg), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int i;

	if (rg == MAP_FAILED)
		bench_fail_errno("mmap", errno);
	for (i = 0; i < SLOT; i++)
		msg_tmpl[i] = (unsigned char)(i * 7 + 3);
	pid = fork();
	if (pid < 0)
		bench_fail_errno("fork", errno);
	if (pid == 0) {
		bench_forked();
		raw_child(rg);
	}
	bench_peer_started(pid);
	bench_lat(raw_ping, rg, 0, bench_lat_budget(), BF_RAW_RTT_P50, BF_RAW_RTT_P99);
	ring_put(&rg->down, STOP);
	raw_stream(rg);
	ring_put(&rg->down, STOP);
	bench_peer_wait();
	raw_memcpy();
	munmap(rg, sizeof(*rg));
}
