/* SPDX-License-Identifier: MIT */
/*
 * A time limit that the machine's load stretches, for the two that end a
 * hung test: the runner's per-test limit (tr.c) and testkit/sh/test-exec's
 * per-program one (tools/ibvct/ibvct-reap.c). Header-only: the reaper links nothing
 * of the suites.
 *
 * The limit is a budget of seconds of an unshared machine. Each stretch of
 * wall time between two ticks is charged at 1/S of its length, S the load
 * at the tick: the processes runnable on the machine beyond the one
 * reading (/proc/stat procs_running - 1), per CPU, at least 1 and at most
 * IBVCT_STRETCH_MAX (default 4; 1: the plain wall clock). On an idle
 * machine, or one busy only with the test's own work that its CPUs hold,
 * the limit is the wall clock's; beside a guest that loads both cores it
 * grows with the share the test is left; a hang is still ended, after at
 * most IBVCT_STRETCH_MAX times the limit. IBVCT_PROC_STAT names another
 * file to read procs_running from (the tests of this clock).
 */
#ifndef TR_CLOCK_H
#define TR_CLOCK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TR_STRETCH_MAX	4.0

struct tr_clock {
	long long limit_ms;	/* the budget */
	double used_ms;		/* budget spent, each stretch at its load */
	long long start_ms;	/* wall clock at the start */
	long long last_ms;	/* wall clock at the last tick */
	double max;		/* the largest stretch */
	long ncpu;
};

static inline long long tr_clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The load now: runnable processes beyond the reader, per CPU, in [1, max]. */
static inline double tr_clock_load(const struct tr_clock *c)
{
	const char *path = getenv("IBVCT_PROC_STAT");
	char line[256];
	long running = -1;
	double s;
	FILE *f;

	if (c->max <= 1.0)
		return 1.0;
	f = fopen(path && path[0] ? path : "/proc/stat", "re");
	if (!f)
		return 1.0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "procs_running ", 14)) {
			running = strtol(line + 14, NULL, 10);
			break;
		}
	fclose(f);
	s = running > 1 ? (double)(running - 1) / (double)c->ncpu : 1.0;
	return s < 1.0 ? 1.0 : s > c->max ? c->max : s;
}

static inline void tr_clock_start(struct tr_clock *c, long long limit_ms)
{
	const char *m = getenv("IBVCT_STRETCH_MAX");
	double max = m && m[0] ? strtod(m, NULL) : TR_STRETCH_MAX;

	c->limit_ms = limit_ms;
	c->used_ms = 0;
	c->start_ms = c->last_ms = tr_clock_now_ms();
	c->max = max >= 1.0 ? max : 1.0;
	c->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (c->ncpu < 1)
		c->ncpu = 1;
}

/*
 * Charges the wall time since the last tick; returns how many wall ms are
 * left at the present load (0: the budget is spent), which is also how
 * long the caller may sleep before the next tick.
 */
static inline long long tr_clock_tick(struct tr_clock *c)
{
	long long now = tr_clock_now_ms();
	double s = tr_clock_load(c);

	c->used_ms += (double)(now - c->last_ms) / s;
	c->last_ms = now;
	/* and never past max times the limit, whatever the ticks */
	if (c->used_ms >= (double)c->limit_ms || now - c->start_ms >= (long long)(c->limit_ms * c->max))
		return 0;
	return (long long)(((double)c->limit_ms - c->used_ms) * s) + 1;
}

/* The stretch so far: wall time over budget spent (1: none). */
static inline double tr_clock_stretch(const struct tr_clock *c)
{
	return c->used_ms >= 1.0 ? (double)(c->last_ms - c->start_ms) / c->used_ms : 1.0;
}

/* Wall seconds since the start. */
static inline long long tr_clock_wall_s(const struct tr_clock *c)
{
	return (tr_clock_now_ms() - c->start_ms + 500) / 1000;
}

#endif /* TR_CLOCK_H */
