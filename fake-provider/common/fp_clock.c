/* SPDX-License-Identifier: MIT */
/*
 * The clock and the time multiplier (fp_clock.h).
 */
#include <stdlib.h>
#include <time.h>

#include "fp_clock.h"

long long fp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long fp_timeout_mult(void)
{
	const char *m = getenv("IBVCT_TIMEOUT_MULT");
	long v = m ? strtol(m, NULL, 10) : 1;

	return v > 0 && v < 1000 ? v : 1;
}
