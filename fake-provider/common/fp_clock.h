/* SPDX-License-Identifier: MIT */
/*
 * The one clock of the fake provider's trees and the one reader of
 * IBVCT_TIMEOUT_MULT, for the engine, its daemon client, the daemon and
 * the bench.
 */
#ifndef FP_CLOCK_H
#define FP_CLOCK_H

/* CLOCK_MONOTONIC in ns. */
long long fp_now_ns(void);

/*
 * The same clock as of its last tick (CLOCK_MONOTONIC_COARSE: a fifth of
 * the price here): never ahead of fp_now_ns(), behind it by less than
 * fp_coarse_slack_ns(). For the data path's "is anything due yet?" and
 * for times kept to tens of milliseconds.
 */
long long fp_now_coarse_ns(void);
long long fp_coarse_slack_ns(void);

/* IBVCT_TIMEOUT_MULT, 1..999 (unset or anything else: 1): it stretches
 * every time one process waits for another (slow machines, valgrind,
 * sanitizers). */
long fp_timeout_mult(void);

#endif /* FP_CLOCK_H */
