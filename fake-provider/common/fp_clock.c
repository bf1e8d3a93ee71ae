/* SPDX-License-Identifier: MIT */
/*
 * The clock and the time multiplier (fp_clock.h).
 */
#include <stdlib.h>
#include <time.h>

#include "fp_clock.h"

static long long fp_ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

long long fp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return fp_ts_ns(&ts);
}

long long fp_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return fp_ts_ns(&ts);
}

long long fp_coarse_slack_ns(void)
{
	static long long slack;		/* the same for every thread: a race is harmless */
	long long s = __atomic_load_n(&slack, __ATOMIC_RELAXED);
	struct timespec res;

	if (!s) {
		/* two ticks: the last one may be late on a busy machine */
		if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || fp_ts_ns(&res) <= 0)
			res.tv_sec = 0, res.tv_nsec = 10000000;
		s = 2 * fp_ts_ns(&res);
		__atomic_store_n(&slack, s, __ATOMIC_RELAXED);
	}
	return s;
}

long fp_timeout_mult(void)
{
	const char *m = getenv("IBVCT_TIMEOUT_MULT");
	long v = m ? strtol(m, NULL, 10) : 1;

	return v > 0 && v < 1000 ? v : 1;
}
