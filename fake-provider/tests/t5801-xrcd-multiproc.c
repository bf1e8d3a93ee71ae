/* SPDX-License-Identifier: MIT */
/*
 * t5801: XRC domains across real processes at the fake kernel's client API,
 * under both lifetime models (XRCD-03..17): one inode, one domain through
 * distinct handles in different processes; O_CREAT, O_EXCL, fd -1, EAGAIN,
 * EINVAL, EBADF; EBUSY while this handle's SRQs or QPs exist, never because
 * of another handle's; destruction with the last use (handles + XRC SRQs +
 * real target QPs) and a new domain afterwards; process exit and SIGKILL
 * release a process's handles after its QPs and SRQs.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "fk_test.h"

static struct fkt_res xopen(struct fkt_proc *p, const char *file, uint32_t oflags)
{
	return fkt_do(p, FKT_XRCD_OPEN, oflags, 0, 0, 0, file);
}

/* The XRCD line's usecnt in a fresh dump (only one domain exists). */
static long usecnt(void)
{
	char *d = fkt_dump();
	long n = fkt_field(d, "usecnt");

	free(d);
	return n;
}

/* XRCD-05/06/07/08 across processes. */
FKT_BOTH(same_inode_same_domain_distinct_handles_xrcd08)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	struct fkt_proc c = fkt_agent("fake1", life);
	struct fkt_res ha, hb, hb2, hc, q;

	assert_int_equal(xopen(&b, "f", 0).err, EAGAIN);		/* XRCD-06 */
	ha = xopen(&a, "f", O_CREAT | O_EXCL);				/* XRCD-05 */
	assert_int_equal(ha.err, 0);
	assert_int_equal(xopen(&b, "f", O_EXCL).err, EINVAL);		/* XRCD-07 */
	assert_int_equal(xopen(&b, "f", O_CREAT | O_EXCL).err, EINVAL);
	hb = xopen(&b, "f", 0);
	hb2 = xopen(&b, "f", O_CREAT);
	assert_int_equal(hb.err, 0);
	assert_int_equal(hb2.err, 0);
	assert_int_equal(hb.b, ha.b);					/* XRCD-08 */
	assert_int_equal(hb2.b, ha.b);
	assert_true(hb.a != hb2.a);
	assert_int_equal(usecnt(), 3);
	/* sharing is observable: a's QP opens through b's handle */
	q = fkt_ok(&a, FKT_TGT_CREATE, ha.a, 1, NULL);
	assert_int_equal(fkt_do(&b, FKT_TGT_OPEN, hb.a, q.b, IBV_QPT_XRC_RECV, 0, NULL).err, 0);
	/* XRCD-09: another device, the same file, another domain */
	hc = xopen(&c, "f", 0);
	assert_int_equal(hc.err, EAGAIN);
	hc = xopen(&c, "f", O_CREAT);
	assert_int_equal(hc.err, 0);
	assert_int_equal(fkt_do(&c, FKT_TGT_OPEN, hc.a, q.b, IBV_QPT_XRC_RECV, 0, NULL).err,
			 EINVAL);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_reap(&c);
	fkt_end_clean(mon);
}

/* XRCD-03/04/16: fd -1 makes a private domain whatever the flags. */
FKT_BOTH(fd_minus_one_is_a_private_domain_xrcd03_04)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life);
	struct fkt_res p1 = xopen(&a, "", O_CREAT), p2 = xopen(&a, "", 0);
	struct fkt_res p3 = xopen(&a, "", O_EXCL);

	assert_int_equal(p1.err, 0);
	assert_int_equal(p2.err, 0);
	assert_int_equal(p3.err, 0);
	assert_true(p1.b != p2.b && p2.b != p3.b && p1.b != p3.b);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, p1.a, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, p2.a, 0), 0);
	fkt_exit(&a);					/* p3 goes with the process */
	fkt_end_clean(mon);
}

/* XRCD-13: EBUSY for this handle's SRQs and QPs only. */
FKT_BOTH(close_is_ebusy_only_for_this_handles_objects_xrcd13)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = xopen(&a, "f", O_CREAT).a, xa2 = xopen(&a, "f", 0).a;
	uint32_t xb = xopen(&b, "f", 0).a;
	struct fkt_res s = fkt_ok(&a, FKT_SRQ_CREATE, xa, 0, NULL);
	struct fkt_res q = fkt_ok(&b, FKT_TGT_CREATE, xb, 1, NULL);

	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa, 0), EBUSY);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb, 0), EBUSY);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa2, 0), 0);	/* a sibling: free */
	assert_int_equal(FKT_ERR(&a, FKT_SRQ_DESTROY, s.a, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_SRQ_DESTROY, s.a, 0), EINVAL);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa, 0), EINVAL);	/* stale */
	/* the close_not_busy quirk closes anyway; the QP keeps the domain */
	assert_int_equal(fkt_do(&b, FKT_XRCD_CLOSE, xb, FK_Q_XRCD_CLOSE_NOT_BUSY, 0, 0,
				NULL).err, 0);
	assert_int_equal(usecnt(), 1);					/* the QP's */
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, q.a, 0), 0);
	assert_int_equal(fkt_objects(mon), 0);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* XRCD-14/15 and LIFE-12: usecnt = handles + XRC SRQs + real TGT QPs; the
 * domain goes with its last use; then a new one. */
FKT_BOTH(destroyed_with_last_use_then_new_domain_xrcd14_15)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	struct fkt_res ha = xopen(&a, "f", O_CREAT), hb = xopen(&b, "f", 0), hn;
	struct fkt_res s = fkt_ok(&a, FKT_SRQ_CREATE, ha.a, 0, NULL);
	struct fkt_res q = fkt_ok(&b, FKT_TGT_CREATE, hb.a, 1, NULL);

	assert_int_equal(usecnt(), 4);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, q.a, 0), 0);
	assert_int_equal(usecnt(), 3);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, hb.a, 0), 0);
	assert_int_equal(usecnt(), 2);
	assert_int_equal(FKT_ERR(&a, FKT_SRQ_DESTROY, s.a, 0), 0);
	hn = xopen(&b, "f", 0);					/* still there */
	assert_int_equal(hn.err, 0);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, hn.a, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, ha.a, 0), 0);
	assert_int_equal(xopen(&b, "f", 0).err, EAGAIN);		/* gone */
	hn = xopen(&b, "f", O_CREAT);
	assert_int_equal(hn.err, 0);
	assert_true(hn.b != ha.b);
	assert_int_equal(fkt_do(&b, FKT_TGT_OPEN, hn.a, q.b, IBV_QPT_XRC_RECV, 0, NULL).err,
			 EINVAL);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* XRCD-17: exit and SIGKILL release handles after QPs and SRQs. */
FKT_BOTH(exit_and_sigkill_release_the_processes_uses_xrcd17)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	struct fkt_proc c = fkt_agent("fake0", life);
	uint32_t xa = xopen(&a, "f", O_CREAT).a, xb = xopen(&b, "f", 0).a;
	long long end;
	int left;

	xopen(&c, "f", 0);
	fkt_ok(&a, FKT_SRQ_CREATE, xa, 0, NULL);
	fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	fkt_ok(&b, FKT_SRQ_CREATE, xb, 0, NULL);
	fkt_ok(&b, FKT_SRQ_CREATE, xb, 0, NULL);
	assert_int_equal(usecnt(), 7);
	fkt_exit(&a);
	fkt_kill(&b);
	/* only c's handle is left, and in the seed model a's leftover TGT QP,
	 * which keeps its use (LIFE-05); the domain survives (XRCD-17) */
	left = life == FK_LIFETIME_SEED ? 2 : 1;
	end = fkt_ms() + 5000 * fkt_mult();
	while (usecnt() != left && fkt_ms() < end)
		usleep(10000);
	assert_int_equal(usecnt(), left);
	assert_int_equal(xopen(&c, "f", 0).err, 0);
	fkt_kill(&c);
	fkt_end_clean(mon);
}

int main(int argc, char **argv)
{
	fkt_setup("t5801");
	return fkt_run(argc, argv);
}
