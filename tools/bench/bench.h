/* SPDX-License-Identifier: MIT */
/*
 * ibvct-bench's shared parts: the figures one run measures, the page where
 * every process of the run leaves them (MAP_SHARED, made before the first
 * fork), what each figure may spend, and the helpers the measuring files
 * share. ibvct-bench.c runs the sessions and reports; bench_raw.c measures
 * the machine itself (the baselines); bench_verbs.c the fake HCA through
 * libibverbs, as an application would.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "fp_clock.h"	/* fp_now_ns; fp_timeout_mult stretches the guards */

/* Every row of the report, in report order (ibvct-bench.c names them). */
enum bench_fig {
	BF_RAW_RTT_P50, BF_RAW_RTT_P99, BF_RAW_OWL_P50, BF_RAW_OWL_P99,
	BF_RAW_STREAM, BF_RAW_MEMCPY,
	BF_RC_RATE, BF_WRITE_RATE, BF_XRC_RATE,
	BF_RC_RTT_P50, BF_RC_RTT_P99, BF_XRC_RTT_P50, BF_XRC_RTT_P99,
	BF_WRITE_LAT_P50, BF_WRITE_LAT_P99, BF_READ_LAT_P50, BF_READ_LAT_P99,
	BF_ATOMIC_LAT_P50, BF_ATOMIC_LAT_P99,
	/* one-sided to a target that waits: spinning, blocked in read(), asleep on a channel */
	BF_SPIN_P50, BF_SPIN_P99, BF_WBLK_RATE, BF_RBLK_P50, BF_RBLK_P99, BF_ABLK_P50, BF_ABLK_P99,
	BF_MIX_RATE, BF_MIX_LAT_P50, BF_MIX_LAT_P99,
	BF_LOOP_RATE, BF_LEGACY_RATE, BF_BW_64K,
	BF_NPROC, BF_LOAD_BEFORE, BF_LOAD_AFTER, BF_CPU, BF_WALL,
	BF_COUNT
};

/* A session is one process (and its forked peer) measuring some figures;
 * when it cannot, the figures it left unmeasured are errors with its reason. */
enum bench_session {
	BS_NONE, BS_RAW, BS_RC, BS_ONE, BS_XRC, BS_LOOP_EXT, BS_LOOP_LEGACY, BS_COUNT
};

struct bench_val {
	int set;
	double value;
	long samples;		/* measured iterations (after the warm-up) */
};

struct bench_results {
	struct bench_val fig[BF_COUNT];
	char err[BS_COUNT][256];	/* the first reason a session gave */
	int claimed[BS_COUNT];		/* err is being written: a second reason is dropped */
};

/* What one figure may spend: at most n iterations, and at most ns. */
struct bench_budget {
	long n;
	long long ns;
};

extern struct bench_results *bench_res;
extern enum bench_session bench_session_id;
extern long bench_iters;	/* --iters */
extern double bench_seconds;	/* --seconds */
extern unsigned bench_rounds;	/* --rounds: the sessions take turns, each figure keeps its best */
extern unsigned bench_alarm;	/* seconds a forked process may live (0: no limit) */

/* Latency figures take bench_iters samples, rate figures 10x as many
 * messages, and bench_seconds, in all: a round takes its share. */
struct bench_budget bench_lat_budget(void);
struct bench_budget bench_rate_budget(void);
/* A tenth of it, at least one iteration: what runs before the clock starts. */
struct bench_budget bench_warm(struct bench_budget b);

/* A figure of this round: kept if no earlier round did better (a higher
 * rate, a lower time). */
void bench_put(enum bench_fig f, double value, long samples);
/* This session cannot measure: the reason goes to stderr and the page, exit 1. */
void bench_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The same, for a verb that failed with err (an errno). */
void bench_fail_errno(const char *what, int err) __attribute__((noreturn));

/*
 * Time op(arg, i) once per sample after a warm-up, within b; p50 and p99 in
 * microseconds go to the two figures. i counts every call, warm-up
 * included, from first; the next unused i is returned.
 */
long bench_lat(void (*op)(void *arg, long i), void *arg, long first, struct bench_budget b,
	       enum bench_fig p50, enum bench_fig p99);
/* The same, each sample multiplied by scale (a round trip of two one-way
 * legs: 0.5). */
long bench_lat_scaled(void (*op)(void *arg, long i), void *arg, long first,
		      struct bench_budget b, enum bench_fig p50, enum bench_fig p99, double scale);
/* p50 and p99 of n samples (ns), sorted in place, in microseconds. */
void bench_put_percentiles(long long *s, long n, enum bench_fig p50, enum bench_fig p99);

/* A spinning waiter's pause; now and then it yields, so that a spinning
 * pair still makes progress on a machine with fewer free cores than spinners. */
void bench_relax(unsigned *spins);
/* Right after fork, in the child: remember the parent, whose exit
 * bench_orphaned() then reports, so that a spinning child stops; and set
 * the alarm (bench_alarm) that ends a process which hangs. */
void bench_forked(void);
bool bench_orphaned(void);
/* In the parent: the peer it forked. bench_relax() then fails the session
 * when the peer ended early; bench_peer_wait() reaps it at the end and
 * fails the session unless it exited 0. */
void bench_peer_started(int pid);
void bench_peer_wait(void);
/* The pipe to the peer broke (what: how): the reason is the peer's end, if it
 * ended; in the peer, whose initiator went, a silent exit. */
void bench_peer_lost(const char *what) __attribute__((noreturn));
/* A wait status in words: "exited with status 1", "was killed by signal 14 ...". */
void bench_describe(int st, char *buf, unsigned long len);

/* bench_raw.c: the shared-memory ring (round trip, stream) and memcpy. */
void bench_raw_session(void);
/* bench_verbs.c: cross-process RC and XRC sessions (this process and a
 * forked peer, each with its own device context). */
void bench_rc_session(void);
/* One-sided operations to a target that waits without verbs: blocked in
 * read() on a socket, spinning on its own memory, asleep in ibv_get_cq_event. */
void bench_one_session(void);
void bench_xrc_session(void);
/* In-process loopback: set up, then one burst per command read from in,
 * its rate (double) written to out, until in closes. */
void bench_loop_session(int in, int out);

#endif /* BENCH_H */
