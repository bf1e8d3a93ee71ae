/* SPDX-License-Identifier: MIT */
/*
 * What every measuring process of ibvct-bench shares: the clock, the
 * budgets, recording a figure or the reason a session cannot measure, the
 * latency loop with its warm-up and percentiles, and the spinning waiter
 * that notices a vanished peer instead of spinning for it until the alarm.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

struct bench_results *bench_res;
enum bench_session bench_session_id = BS_NONE;
long bench_iters = 300000;
double bench_seconds = 4.0;
unsigned bench_rounds = 3;
unsigned bench_alarm;

static pid_t bench_parent, bench_child;

/* A figure's budget, shared by its rounds. */
static struct bench_budget bench_round_budget(long n)
{
	struct bench_budget b = { n / bench_rounds > 0 ? n / bench_rounds : 1,
				   (long long)(bench_seconds * 1e9 / bench_rounds) };

	return b;
}

struct bench_budget bench_lat_budget(void)
{
	return bench_round_budget(bench_iters);
}

struct bench_budget bench_rate_budget(void)
{
	return bench_round_budget(bench_iters * 10);
}

struct bench_budget bench_warm(struct bench_budget b)
{
	struct bench_budget w = { b.n / 10 > 0 ? b.n / 10 : 1, b.ns / 10 };

	return w;
}

/* The figures where less is better: times. */
static bool bench_lower_better(enum bench_fig f)
{
	switch (f) {
	case BF_RAW_RTT_P50: case BF_RAW_RTT_P99:
	case BF_RC_RTT_P50: case BF_RC_RTT_P99: case BF_XRC_RTT_P50: case BF_XRC_RTT_P99:
	case BF_WRITE_LAT_P50: case BF_WRITE_LAT_P99: case BF_READ_LAT_P50: case BF_READ_LAT_P99:
	case BF_ATOMIC_LAT_P50: case BF_ATOMIC_LAT_P99:
	case BF_RAW_OWL_P50: case BF_RAW_OWL_P99: case BF_SPIN_P50: case BF_SPIN_P99:
	case BF_RBLK_P50: case BF_RBLK_P99: case BF_ABLK_P50: case BF_ABLK_P99:
	case BF_MIX_LAT_P50: case BF_MIX_LAT_P99:
		return true;
	default:
		return false;
	}
}

void bench_put(enum bench_fig f, double value, long samples)
{
	struct bench_val *v = &bench_res->fig[f];

	/* an earlier round did as well or better: it stands */
	if (__atomic_load_n(&v->set, __ATOMIC_ACQUIRE) &&
	    (bench_lower_better(f) ? v->value <= value : v->value >= value))
		return;
	v->value = value;
	v->samples = samples;
	__atomic_store_n(&v->set, 1, __ATOMIC_RELEASE);
}

void bench_fail(const char *fmt, ...)
{
	char msg[sizeof(bench_res->err[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The first reason stands: when one side fails, the other sees its peer
	 * vanish, which is no news. */
	if (bench_session_id == BS_NONE ||
	    !__atomic_exchange_n(&bench_res->claimed[bench_session_id], 1, __ATOMIC_ACQ_REL)) {
		fprintf(stderr, "ibvct-bench: %s\n", msg);
		if (bench_session_id != BS_NONE)
			memcpy(bench_res->err[bench_session_id], msg, sizeof(msg));
	}
	_exit(1);
}

void bench_fail_errno(const char *what, int err)
{
	bench_fail("%s: %s", what, strerror(err));
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

void bench_put_percentiles(long long *s, long n, enum bench_fig p50, enum bench_fig p99)
{
	if (n < 1)
		bench_fail("no sample was taken");
	qsort(s, (size_t)n, sizeof(*s), cmp_ll);
	bench_put(p50, (double)s[n / 2] / 1000.0, n);
	bench_put(p99, (double)s[n * 99 / 100] / 1000.0, n);
}

long bench_lat(void (*op)(void *arg, long i), void *arg, long first, struct bench_budget b,
	       enum bench_fig p50, enum bench_fig p99)
{
	return bench_lat_scaled(op, arg, first, b, p50, p99, 1.0);
}

long bench_lat_scaled(void (*op)(void *arg, long i), void *arg, long first,
		      struct bench_budget b, enum bench_fig p50, enum bench_fig p99, double scale)
{
	struct bench_budget w = bench_warm(b);
	long long *s = calloc((size_t)b.n, sizeof(*s)), until, t0, t1;
	long i = first, k;

	if (!s)
		bench_fail_errno("calloc", errno);
	until = fp_now_ns() + w.ns;
	for (k = 0; k < w.n; k++) {
		op(arg, i++);
		if (fp_now_ns() > until)
			break;
	}
	t1 = fp_now_ns();
	until = t1 + b.ns;
	for (k = 0; k < b.n && t1 <= until; k++) {
		t0 = fp_now_ns();
		op(arg, i++);
		t1 = fp_now_ns();
		s[k] = (long long)((double)(t1 - t0) * scale);
	}
	bench_put_percentiles(s, k, p50, p99);
	free(s);
	return i;
}

void bench_forked(void)
{
	bench_parent = getppid();
	bench_child = 0;
	if (bench_alarm)
		alarm(bench_alarm);
}

bool bench_orphaned(void)
{
	return bench_parent && getppid() != bench_parent;
}

void bench_peer_started(int pid)
{
	bench_child = pid;
}

void bench_describe(int st, char *buf, unsigned long len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "ended with wait status %#x", st);
}

void bench_peer_wait(void)
{
	char why[96];
	int st;

	if (!bench_child)
		return;
	if (waitpid(bench_child, &st, 0) != bench_child)
		bench_fail_errno("waitpid", errno);
	bench_child = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		bench_describe(st, why, sizeof(why));
		bench_fail("the peer process %s", why);
	}
}

void bench_relax(unsigned *spins)
{
	char why[96];
	int st;

	if (++*spins % 1024) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		return;
	}
	sched_yield();
	if (bench_orphaned())
		_exit(1);		/* nobody is left to report to */
	if (bench_child && waitpid(bench_child, &st, WNOHANG) == bench_child) {
		bench_child = 0;
		bench_describe(st, why, sizeof(why));
		bench_fail("the peer process %s before the measurement ended", why);
	}
}

void bench_peer_lost(const char *what)
{
	long long give_up = fp_now_ns() + 2000000000LL;
	char why[96];
	int st;

	if (!bench_child)
		_exit(1);	/* our initiator went: it, or the one who waits for it, says why */
	while (fp_now_ns() < give_up) {
		if (waitpid(bench_child, &st, WNOHANG) == bench_child) {
			bench_child = 0;
			bench_describe(st, why, sizeof(why));
			bench_fail("the peer process %s (%s)", why, what);
		}
		usleep(10000);
	}
	bench_fail("the peer stopped talking (%s)", what);
}
