/* SPDX-License-Identifier: MIT */
/*
 * Shared by ref-impl's verb tests (t0020, t0021, t0041, t0043, t0044) and t5103:
 * each check runs in a peer of the test (tr_peer_start) with a fake host of
 * its own (fp_env_setup: the fake sysfs, run dir and the fake provider under
 * a script), so no check sees another's leftovers; the test asserts that
 * the peer exited 0, which it does only when none of its checks
 * (TR_EXPECT, tr.h) failed; a failed check also fails the test on its own.
 * Also the small helpers these tests share: open the device, bring a QP to
 * RTS, poll, wait.
 */
#ifndef RT_ENV_H
#define RT_ENV_H

#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "tf.h"
#include "tr.h"

#define RT_UNUSED __attribute__((unused))
#define RT_LEGACY 1
#define RT_EXTENDED 0

struct rt {
	int legacy;		/* the provider registers as a legacy one */
};

/* errno of a pointer verb that must fail (-1: it did not fail). */
#define RT_PTR_ERRNO(expr) ({ void *p_; errno = 0; p_ = (void *)(expr);	\
			      p_ ? -1 : errno; })

typedef void (*rt_fn)(struct rt *t);

static int rt_rm_one(const char *p, const struct stat *st, int f, struct FTW *w)
{
	return remove(p);
}

/* In a peer: a fake host of its own in the scratch dir made from tmpl
 * ("/tmp/NAME.XXXXXX"): the script (the provider mode, lifetime current,
 * device fake0 with XRC, port 1 active, then extra's lines) and the
 * environment that points the library at it. The peer ends with status 3
 * when the host cannot be made. rt_host_down removes the dir. */
static RT_UNUSED void rt_host_up(int legacy, const char *extra, char *tmpl)
{
	char script[4200], scratch[4096], err[512];
	FILE *f;

	if (!mkdtemp(tmpl))
		_exit(3);
	snprintf(script, sizeof(script), "%s/s.fps", tmpl);
	f = fopen(script, "w");
	if (!f)
		_exit(3);
	fprintf(f, "mode %s\nlifetime current\ndevice fake0\n\tcap xrc\n"
		"\tport 1 state active\n%s", legacy ? "legacy" : "extended",
		extra ? extra : "");
	fclose(f);
	if (fp_env_setup(script, getenv("IBVCT_PROVIDER"), tmpl, scratch,
			 sizeof(scratch), err, sizeof(err))) {
		printf("# fp_env_setup: %s\n", err);
		_exit(3);
	}
}

static RT_UNUSED void rt_host_down(const char *tmpl)
{
	nftw(tmpl, rt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The child: a fake host of its own, the check. */
static void rt_child(int legacy, const char *extra, rt_fn fn)
{
	char tmpl[] = "/tmp/ibvct-rt.XXXXXX";
	struct rt t = { .legacy = legacy };

	rt_host_up(legacy, extra, tmpl);
	fn(&t);
	rt_host_down(tmpl);
	_exit(tr_checks_failed() ? 1 : 0);
}

struct rt_arg {
	int legacy;
	const char *extra;
	rt_fn fn;
};

static void rt_peer(struct tr_peer *self, void *arg)
{
	const struct rt_arg *a = arg;

	rt_child(a->legacy, a->extra, a->fn);
}

/* Runs fn in a peer of the test under one provider mode; fails the test
 * unless the peer ends cleanly with every check passed. */
static RT_UNUSED void rt_run(int legacy, const char *extra, rt_fn fn)
{
	struct rt_arg a = { .legacy = legacy, .extra = extra, .fn = fn };
	struct tr_peer p;
	int status;

	tr_peer_start(&p, rt_peer, &a);
	status = tr_peer_wait(&p);
	if (status)
		print_message("# %s child: status %d\n", legacy ? "legacy" : "extended", status);
	assert_int_equal(status, 0);
}

/* Both provider modes, legacy first. */
static RT_UNUSED void rt_run_both(const char *extra, rt_fn fn)
{
	rt_run(RT_LEGACY, extra, fn);
	rt_run(RT_EXTENDED, extra, fn);
}

/* The one device of the script, opened through the 1.1 verbs. */
static RT_UNUSED struct ibv_context *rt_open(struct rt *t)
{
	int n = 0;
	struct ibv_context *ctx = tf_open_dev(NULL, &n);

	TR_EXPECT(n == 1);
	TR_EXPECT(ctx != NULL);
	return ctx;
}

static RT_UNUSED uint16_t rt_port_lid(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	return ibv_query_port(ctx, 1, &pa) ? 0 : pa.lid;
}

/* RESET -> INIT -> RTR -> RTS with the section 3b masks (tf.h) to LID lid
 * on port 1; 0 or the errno of the step that failed. */
static RT_UNUSED int rt_connect_qp(struct ibv_qp *qp, uint32_t dest, uint16_t lid)
{
	struct ibv_ah_attr ah = { .dlid = lid, .port_num = 1 };

	return tf_qp_connect_av(qp, &ah, dest);
}

/* One completion within a bounded number of polls; the count polled. */
static RT_UNUSED int rt_poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n = 0;

	for (i = 0; i < 200000 && n == 0; i++)
		n = ibv_poll_cq(cq, 1, wc);
	return n;
}

/* Waits up to 2 s for fd to be readable. */
static RT_UNUSED int rt_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 2000) == 1;
}

#endif /* RT_ENV_H */
