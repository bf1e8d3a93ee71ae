/* SPDX-License-Identifier: MIT */
/*
 * The machine's own limit, the baselines of the fake HCA's figures: a
 * single-producer single-consumer ring of 64-byte slots in a MAP_SHARED
 * mapping between this process and a forked child, both sides spinning
 * (ping-pong through two rings: round trip p50/p99; one ring: one-way
 * stream rate), two words each side stores into the other's and spins on
 * its own (write-then-spin: one-way latency, half its round trip), and
 * memcpy of 64 KiB blocks (bandwidth). No libibverbs here:
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

/* The write-then-spin pattern's words: each side stores into the other's
 * and spins on its own, each on a cache line of its own. */
struct word {
	_Alignas(64) uint64_t v;
};

struct rings {
	struct ring down;			/* parent -> child */
	struct ring up;				/* child -> parent */
	struct word to_child, to_parent;
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

/* The child: echo every ping, then consume the stream; STOP ends each.
 * Then answer each sequence number stored into its word with the same
 * number in the parent's, until STOP. */
static void raw_child(struct rings *rg)
{
	uint64_t tag, want = 1;
	unsigned spins = 0;

	while ((tag = ring_get(&rg->down)) != STOP)
		ring_put(&rg->up, tag);
	while (ring_get(&rg->down) != STOP)
		;
	while ((tag = __atomic_load_n(&rg->to_child.v, __ATOMIC_ACQUIRE)) != STOP) {
		if (tag != want) {
			bench_relax(&spins);
			continue;
		}
		__atomic_store_n(&rg->to_parent.v, want++, __ATOMIC_RELEASE);
	}
	_exit(0);
}

/* Write-then-spin: store i + 1 into the child's word, spin on our own until
 * the child stored the same; a round trip of two one-way legs. */
static void raw_spin(void *arg, long i)
{
	struct rings *rg = arg;
	uint64_t want = (uint64_t)i + 1;
	unsigned spins = 0;

	__atomic_store_n(&rg->to_child.v, want, __ATOMIC_RELEASE);
	while (__atomic_load_n(&rg->to_parent.v, __ATOMIC_ACQUIRE) != want)
		bench_relax(&spins);
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
	bench_lat_scaled(raw_spin, rg, 0, bench_lat_budget(), BF_RAW_OWL_P50, BF_RAW_OWL_P99, 0.5);
	__atomic_store_n(&rg->to_child.v, STOP, __ATOMIC_RELEASE);
	bench_peer_wait();
	raw_memcpy();
	munmap(rg, sizeof(*rg));
}
