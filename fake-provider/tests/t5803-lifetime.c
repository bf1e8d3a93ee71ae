/* SPDX-License-Identifier: MIT */
/*
 * t5803: lifetime of shared XRC target QPs across real processes, at the
 * fake kernel's client API, under both models (LIFE-01..12): the owner
 * destroys while another process holds the QP; the owner exits or is
 * SIGKILLed without destroying; the last holder disconnects; the XRCD is
 * destroyed while leftover QPs exist (seed); events reach every handle,
 * each in its own process (LIFE-08). Each test runs once per model.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "fk_test.h"

#define OPEN(p, h, qpn) fkt_do((p), FKT_TGT_OPEN, (h), (qpn), IBV_QPT_XRC_RECV, 0, NULL)

/* LIFE-01/02: the creator's handle is one among equals. */
FKT_BOTH(owner_destroy_keeps_qp_for_other_holder_life02)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	struct fkt_proc c = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	uint32_t xc = fkt_ok(&c, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res ob = OPEN(&b, xb, q.b), oc;

	assert_int_equal(ob.err, 0);
	fkt_ok(&a, FKT_TO_RTS, q.a, 0, NULL);
	assert_int_equal(FKT_ERR(&a, FKT_TGT_DESTROY, q.a, 0), 0);
	/* b's handle still reaches the same real QP, in the state a left */
	assert_int_equal(fkt_ok(&b, FKT_STATE, ob.a, 0, NULL).a, IBV_QPS_RTS);
	assert_int_equal(fkt_ok(&b, FKT_STATE, ob.a, 0, NULL).b, 0x1234);
	/* and a third process can still open it by number */
	oc = OPEN(&c, xc, q.b);
	assert_int_equal(oc.err, 0);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa, 0), 0);	/* a holds nothing now */
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_reap(&c);
	fkt_end_clean(mon);
}

/* LIFE-03: the last explicit destroy takes the real QP, in both models. */
FKT_BOTH(last_explicit_destroy_destroys_real_qp_life03)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res ob = OPEN(&b, xb, q.b);

	assert_int_equal(ob.err, 0);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, ob.a, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_TGT_DESTROY, q.a, 0), 0);
	assert_int_equal(OPEN(&b, xb, q.b).err, EINVAL);
	assert_int_equal(OPEN(&a, xa, q.b).err, EINVAL);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* LIFE-04 (current) / LIFE-05 (seed): the owner ends without destroying,
 * by exiting or by SIGKILL; another process holds the domain only. */
static void owner_gone(void **state, bool sigkill)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL), ob;

	fkt_ok(&a, FKT_TO_RTS, q.a, 0, NULL);
	if (sigkill)
		fkt_kill(&a);
	else
		fkt_exit(&a);
	/* the daemon sees the connection end asynchronously: wait for it */
	{
		long long end = fkt_ms() + 5000 * fkt_mult();
		char *d;

		for (;;) {
			d = fkt_dump();
			if (fkt_field(d, "conns") == 3 || fkt_ms() > end)
				break;
			free(d);
			usleep(10000);
		}
		assert_int_equal(fkt_field(d, "conns"), 3);	/* mon, b, this dump's */
		free(d);
	}
	ob = OPEN(&b, xb, q.b);
	if (life == FK_LIFETIME_CURRENT) {
		assert_int_equal(ob.err, EINVAL);		/* LIFE-04: destroyed */
	} else {
		assert_int_equal(ob.err, 0);			/* LIFE-05: reopened */
		assert_int_equal(fkt_ok(&b, FKT_STATE, ob.a, 0, NULL).a, IBV_QPS_RTS);
		/* a later last handle destroyed explicitly takes it */
		assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, ob.a, 0), 0);
		assert_int_equal(OPEN(&b, xb, q.b).err, EINVAL);
	}
	fkt_reap(&b);
	fkt_end_clean(mon);
}

FKT_BOTH(owner_exits_without_destroy_life04_life05)
{
	owner_gone(state, false);
}

FKT_BOTH(owner_sigkilled_without_destroy_life04_life05)
{
	owner_gone(state, true);
}

/* The owner dies while another process has the QP open: that one is
 * unaffected in both models (LIFE-02/04/05). */
FKT_BOTH(owner_sigkilled_while_other_holds_qp)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res ob = OPEN(&b, xb, q.b);

	assert_int_equal(ob.err, 0);
	fkt_ok(&a, FKT_SRQ_CREATE, xa, 0, NULL);
	fkt_kill(&a);
	assert_int_equal(fkt_ok(&b, FKT_TO_RTS, ob.a, 0, NULL).err, 0);
	assert_int_equal(fkt_ok(&b, FKT_STATE, ob.a, 0, NULL).a, IBV_QPS_RTS);
	/* b is the last handle: its explicit destroy takes the QP */
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, ob.a, 0), 0);
	assert_int_equal(OPEN(&b, xb, q.b).err, EINVAL);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* The last holder (an opener, not the creator) disconnects. */
FKT_BOTH(last_holder_disconnects)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	struct fkt_proc c = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	uint32_t xc = fkt_ok(&c, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res ob = OPEN(&b, xb, q.b);

	assert_int_equal(ob.err, 0);
	assert_int_equal(FKT_ERR(&a, FKT_TGT_DESTROY, q.a, 0), 0);
	fkt_ok(&b, FKT_DISCONNECT, 0, 0, NULL);
	fkt_reap(&b);
	usleep(50000);
	/* c keeps the domain alive; the QP is gone (current) or left over (seed) */
	assert_int_equal(OPEN(&c, xc, q.b).err, life == FK_LIFETIME_CURRENT ? EINVAL : 0);
	fkt_reap(&a);
	fkt_reap(&c);
	fkt_end_clean(mon);
}

/*
 * LIFE-05: a leftover TGT QP keeps the one XRCD use every real TGT QP holds,
 * so the domain and its inode binding outlive every handle: a later open
 * of the inode without O_CREAT finds the same domain and its leftovers; a
 * leftover goes with a later last explicit destroy, the rest with the
 * device (the last connection to it). Current: the QPs died with a.
 */
FKT_BOTH(leftover_qps_keep_their_xrcd)
{
	int life = fkt_life(state);
	bool seed = life == FK_LIFETIME_SEED;
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	struct fkt_res x = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f");
	struct fkt_res q1 = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res q2 = fkt_ok(&a, FKT_TGT_CREATE, xa, 2, NULL), y, h;
	char *d;

	fkt_exit(&a);
	usleep(50000);
	d = fkt_dump();
	/* seed: two leftovers, each holding its use, besides b's handle */
	assert_int_equal(fkt_field(d, "tgt_qps"), seed ? 2 : 0);
	assert_int_equal(fkt_field(d, "usecnt"), seed ? 3 : 1);
	free(d);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, x.a, 0), 0);
	if (!seed) {
		/* b's close was the XRCD's last use (XRCD-15) */
		assert_int_equal(fkt_objects_once(mon, true), 0);
		assert_int_equal(fkt_do(&b, FKT_XRCD_OPEN, 0, 0, 0, 0, "f").err, EAGAIN);
		goto out;
	}
	/* the binding survives the last handle: same inode, same domain */
	y = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f");
	assert_int_equal(y.b, x.b);
	h = OPEN(&b, y.a, q1.b);
	assert_int_equal(h.err, 0);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, h.a, 0), 0);	/* the last: gone */
	assert_int_equal(OPEN(&b, y.a, q1.b).err, EINVAL);
	h = OPEN(&b, y.a, q2.b);
	assert_int_equal(h.err, 0);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, y.a, 0), EBUSY);	/* LIFE-10 */
out:
	/* b is the device's last connection: what is left goes with it */
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* Seed: nobody else holds the domain: the owner's exit takes everything. */
FKT_BOTH(owner_exit_with_no_other_user_leaves_nothing)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_proc b;

	fkt_ok(&a, FKT_SRQ_CREATE, xa, 0, NULL);
	fkt_exit(&a);
	assert_int_equal(fkt_objects(mon), 0);
	b = fkt_agent("fake0", life);
	assert_int_equal(fkt_do(&b, FKT_XRCD_OPEN, 0, 0, 0, 0, "f").err, EAGAIN);
	(void)q;
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* LIFE-08: one event on the real QP, heard once by each handle, in each
 * process, naming that process's handle and user value. */
FKT_BOTH(events_reach_every_handle_in_its_own_process_life08)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc p[3] = {
		fkt_agent("fake0", life), fkt_agent("fake0", life), fkt_agent("fake0", life),
	};
	uint32_t x[3], h[3], qpn;
	struct fkt_res q, e;
	int i;

	for (i = 0; i < 3; i++)
		x[i] = fkt_ok(&p[i], FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	q = fkt_ok(&p[0], FKT_TGT_CREATE, x[0], 0x77, NULL);
	h[0] = q.a;
	qpn = q.b;
	for (i = 1; i < 3; i++) {
		e = OPEN(&p[i], x[i], qpn);
		assert_int_equal(e.err, 0);
		h[i] = e.a;
	}
	/* raised through an opener's handle: the creator hears it too */
	fkt_ok(&p[1], FKT_RAISE, h[1], IBV_EVENT_COMM_EST, NULL);
	for (i = 0; i < 3; i++) {
		long long end = fkt_ms() + 5000 * fkt_mult();

		do
			e = fkt_ok(&p[i], FKT_EVENTS, 0, 0, NULL);
		while (e.a < 1 && fkt_ms() < end);
		assert_int_equal(e.a, 1);			/* exactly once */
		assert_int_equal(e.b, h[i]);			/* its own handle */
		assert_int_equal(e.c, IBV_EVENT_COMM_EST);
		assert_int_equal(e.d, i ? 0x5000u + qpn : 0x77u);	/* its own user value */
	}
	/* SQ_DRAINED from a modify, and QP_FATAL, which leaves the QP in ERR */
	fkt_ok(&p[0], FKT_TO_RTS, h[0], 0, NULL);
	fkt_ok(&p[2], FKT_SQD, h[2], 0, NULL);
	fkt_ok(&p[0], FKT_RAISE, h[0], IBV_EVENT_QP_FATAL, NULL);
	for (i = 0; i < 3; i++) {
		long long end = fkt_ms() + 5000 * fkt_mult();

		do
			e = fkt_ok(&p[i], FKT_EVENTS, 0, 0, NULL);
		while (e.a < 3 && fkt_ms() < end);
		assert_int_equal(e.a, 3);
		assert_int_equal(e.c, IBV_EVENT_QP_FATAL);
		assert_int_equal(fkt_ok(&p[i], FKT_STATE, h[i], 0, NULL).a, IBV_QPS_ERR);
	}
	/* a destroyed handle hears nothing more (LIFE-07: no event for that) */
	assert_int_equal(FKT_ERR(&p[2], FKT_TGT_DESTROY, h[2], 0), 0);
	fkt_ok(&p[0], FKT_RAISE, h[0], IBV_EVENT_PATH_MIG, NULL);
	{
		long long end = fkt_ms() + 5000 * fkt_mult();

		while (fkt_ok(&p[1], FKT_EVENTS, 0, 0, NULL).a < 4 && fkt_ms() < end)
			usleep(1000);
		assert_int_equal(fkt_ok(&p[1], FKT_EVENTS, 0, 0, NULL).a, 4);
	}
	assert_int_equal(fkt_ok(&p[2], FKT_EVENTS, 0, 0, NULL).a, 3);
	/* not a QP event */
	assert_int_equal(FKT_ERR(&p[0], FKT_RAISE, h[0], IBV_EVENT_PORT_ACTIVE), EINVAL);
	for (i = 0; i < 3; i++)
		fkt_reap(&p[i]);
	fkt_end_clean(mon);
}

/* LIFE-10/12: a QP handle blocks its XRCD handle's close; an SRQ keeps the
 * domain alive whatever happens to the QPs. */
FKT_BOTH(xrcd_close_busy_while_qp_handle_exists_life10)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res s = fkt_ok(&b, FKT_SRQ_CREATE, xb, 0, NULL);

	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa, 0), EBUSY);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb, 0), EBUSY);
	assert_int_equal(FKT_ERR(&a, FKT_TGT_DESTROY, q.a, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_XRCD_CLOSE, xa, 0), 0);
	/* b's SRQ and handle keep the domain; the SRQ outlived the QP (LIFE-12) */
	assert_int_equal(FKT_ERR(&b, FKT_SRQ_DESTROY, s.a, 0), 0);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb, 0), 0);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

int main(int argc, char **argv)
{
	fkt_setup("t5803");
	return fkt_run(argc, argv);
}
