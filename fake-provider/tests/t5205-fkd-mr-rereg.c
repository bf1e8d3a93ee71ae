/* SPDX-License-Identifier: MIT */
/*
 * t5205: the fake kernel daemon's MR_REREG, ibv_rereg_mr's command as
 * ib_uverbs_rereg_mr (linux v6.1 drivers/infiniband/core/uverbs_cmd.c)
 * serves it: the MR keeps its handle (its uobject), a new PD takes the
 * region's use from the old one, which can then go (and not before:
 * EBUSY); the kernel's refusals in its order (no flag, an unknown flag,
 * the page offsets of a new translation, the MR's handle, the access, the
 * PD's handle), each with the state unchanged; malformed requests answered
 * while the daemon serves the others. Real daemon, real sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fk_test.h"

#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

/* A PD's destroy answer, the PD made again when it went: whether it was held. */
static int pd_busy(struct fk_client *c, uint32_t pd)
{
	uint32_t h;
	int err = fk_obj_destroy(c, FK_O_PD, pd);

	if (err)
		return err;
	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &h), 0);
	assert_int_equal(h, pd);	/* the lowest free number: the same */
	return 0;
}

TR_TEST(rereg_keeps_the_handle_and_moves_the_pd_use)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t pd1, pd2, mr, now = 99, h;

	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd1), 0);
	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd2), 0);
	assert_int_equal(fk_obj_create_on_pd(c, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, pd1, &mr), 0);
	assert_int_equal(mr, 2);
	assert_int_equal(fkt_objects_now(), 3);
	/* the region holds its PD: not before the move */
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd1), EBUSY);
	assert_int_equal(pd_busy(c, pd2), 0);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, pd2, 0, 0, 0, &now), 0);
	assert_int_equal(now, pd2);
	/* the use moved: the new PD is held, the old one goes */
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd2), EBUSY);
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd1), 0);
	/* the same handle, still an MR: no new one was taken (the next object
	 * gets the old PD's number, then the first past the MR's), and it goes
	 * as an MR, once */
	assert_int_equal(fkt_objects_now(), 2);
	assert_int_equal(fk_obj_create(c, FK_O_CQ, 0, NULL, &h), 0);
	assert_int_equal(h, pd1);
	assert_int_equal(fk_obj_create(c, FK_O_CQ, 0, NULL, &h), 0);
	assert_int_equal(h, 3);
	/* back again, with a new access too: the PD of the reply is the one */
	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd1), 0);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
				     pd1, RW, 0, 0, &now), 0);
	assert_int_equal(now, pd1);
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd1), EBUSY);
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd2), 0);
	/* a rereg to the PD it is on changes nothing */
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, pd1, 0, 0, 0, &now), 0);
	assert_int_equal(now, pd1);
	assert_int_equal(fk_obj_destroy(c, FK_O_MR, mr), 0);
	assert_int_equal(fk_obj_destroy(c, FK_O_MR, mr), EINVAL);
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd1), 0);
	fk_disconnect(c);
	fkt_end_clean(mon);
}

/* Without the PD flag the region stays on its PD; the translation and
 * the access are the command's to check, in the kernel's order. */
TR_TEST(rereg_without_the_pd_flag_keeps_the_pd)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t pd, other, mr, now = 99;

	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &other), 0);
	assert_int_equal(fk_obj_create_on_pd(c, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, pd, &mr), 0);
	/* a new translation: start and hca_va at the same offset in their pages */
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_TRANSLATION, other, 0,
				     0x10000123, 0x7000123, &now), 0);
	assert_int_equal(now, pd);			/* pd_handle not read */
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_TRANSLATION, pd, 0,
				     0x10000123, 0x10000124, &now), EINVAL);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_ACCESS, FK_O_NONE, RW, 0, 0,
				     &now), 0);
	assert_int_equal(now, pd);
	/* the kernel's refusals, first to last */
	assert_int_equal(fk_mr_rereg(c, mr, 0, other, RW, 0, 0, &now), EINVAL);	/* MR-03 */
	assert_int_equal(fk_mr_rereg(c, mr, 0x8, other, 0, 0, 0, &now), EOPNOTSUPP);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_ACCESS, FK_O_NONE,
				     IBV_ACCESS_REMOTE_WRITE, 0, 0, &now), EINVAL);	/* MR-03 */
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_ACCESS, FK_O_NONE,
				     IBV_ACCESS_REMOTE_ATOMIC, 0, 0, &now), EINVAL);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_ACCESS | IBV_REREG_MR_CHANGE_PD,
				     other, 1 << 30, 0, 0, &now), EINVAL);
	/* none of them moved it */
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, other), 0);
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd), EBUSY);
	fk_disconnect(c);
	fkt_end_clean(mon);
}

/* A PD handle that names no PD of this connection (none at all, another
 * type, another connection's number) is EINVAL, an MR handle that names
 * nothing ENOENT and one of another type EINVAL: nothing changes. */
TR_TEST(a_bad_handle_is_refused_and_changes_nothing)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *o = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t pd, cq, mr, opd[4], now = 99;
	long before;
	int i;

	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fk_obj_create(c, FK_O_CQ, 0, NULL, &cq), 0);
	assert_int_equal(fk_obj_create_on_pd(c, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, pd, &mr), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(fk_obj_create(o, FK_O_PD, 0, NULL, &opd[i]), 0);
	before = fkt_objects_now();
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, cq, 0, 0, 0, &now), EINVAL);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, mr, 0, 0, 0, &now), EINVAL);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, 77, 0, 0, 0, &now), EINVAL);
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, FK_O_NONE, 0, 0, 0, &now),
			 EINVAL);
	/* the other connection's PD 3: no object 3 here */
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_PD, opd[3], 0, 0, 0, &now), EINVAL);
	/* the MR's handle: nothing there (uobj_get_write: ENOENT), or not an MR */
	assert_int_equal(fk_mr_rereg(c, 9, IBV_REREG_MR_CHANGE_PD, pd, 0, 0, 0, &now), ENOENT);
	assert_int_equal(fk_mr_rereg(c, FK_O_NONE, IBV_REREG_MR_CHANGE_PD, pd, 0, 0, 0, &now),
			 ENOENT);
	assert_int_equal(fk_mr_rereg(c, cq, IBV_REREG_MR_CHANGE_PD, pd, 0, 0, 0, &now), EINVAL);
	assert_int_equal(fk_mr_rereg(c, pd, IBV_REREG_MR_CHANGE_ACCESS, FK_O_NONE, 0, 0, 0, &now),
			 EINVAL);
	/* nor from the other connection, where number 2 is a PD */
	assert_int_equal(fk_mr_rereg(o, mr, IBV_REREG_MR_CHANGE_PD, opd[0], 0, 0, 0, &now), EINVAL);
	assert_int_equal(now, 99);			/* no reply value on a refusal */
	assert_int_equal(fkt_objects_now(), before);
	assert_int_equal(fk_obj_destroy(c, FK_O_PD, pd), EBUSY);	/* still its PD */
	assert_int_equal(fk_mr_rereg(c, mr, IBV_REREG_MR_CHANGE_ACCESS, FK_O_NONE, RW, 0, 0, &now),
			 0);
	assert_int_equal(now, pd);
	fk_disconnect(o);
	fk_disconnect(c);			/* the daemon releases the rest */
	fkt_end_clean(mon);
}

/* Malformed MR_REREGs get their error reply (before HELLO, short, long,
 * with an fd, garbage in every field) and the daemon serves on: the other
 * connection's region and PDs are as they were. */
TR_TEST(a_malformed_mr_rereg_is_survived)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *good = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	static unsigned char big[FK_REQ_MAX + 64];
	struct fk_req_mr_rereg r;
	struct fk_rep_pair rp;
	struct fk_hdr h;
	uint32_t pd, mr, now;
	int fd = fkt_raw_connect(), file = fkt_file("rr"), i;
	unsigned seed = 5205;

	assert_true(fd >= 0);
	assert_int_equal(fk_obj_create(good, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fk_obj_create_on_pd(good, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, pd, &mr), 0);
	memset(&r, 0, sizeof(r));
	r.flags = IBV_REREG_MR_CHANGE_PD;
	/* before HELLO */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_REREG, 1, &r, sizeof(r)), 0);
	assert_int_equal(fkt_raw_status(fd), EPROTO);
	assert_int_equal(fkt_raw_hello(fd, "fake0", FK_LIFETIME_CURRENT), 0);
	/* a payload of the wrong size: short, long, larger than any request */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_REREG, 2, &r, sizeof(r) - 8), 0);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_REREG, 3, big, sizeof(r) + 4), 0);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_REREG, 4, big, sizeof(big)), 0);
	assert_int_equal(fkt_raw_status(fd), EMSGSIZE);
	/* a length field that lies */
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_MR_REREG, 64, 5, &r,
				      sizeof(r), NULL, 0), 0);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	/* an fd it has no business carrying */
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_MR_REREG, sizeof(r), 6,
				      &r, sizeof(r), &file, 1), 0);
	assert_int_equal(fkt_raw_status(fd), EBADF);
	/* the good connection's numbers from this one: nothing of its own */
	r.mr_handle = mr;
	r.pd_handle = pd;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_REREG, 7, &r, sizeof(r)), 0);
	assert_int_equal(fkt_raw_status(fd), ENOENT);
	/* garbage in every field: a refusal, whatever it is, and an intact state */
	for (i = 0; i < 200; i++) {
		unsigned char *p = (unsigned char *)&r;
		size_t k;
		int st;

		for (k = 0; k < sizeof(r); k++)
			p[k] = (unsigned char)rand_r(&seed);
		if (i & 1)
			r.mr_handle &= 7;
		if (i & 2)
			r.pd_handle &= 7;
		assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_REREG, 100 + i, &r, sizeof(r)), 0);
		assert_int_equal(fkt_raw_recv(fd, &h, &rp, sizeof(rp)) > 0, 1);
		st = rp.r.status;
		assert_int_equal(h.seq, 100 + i);
		assert_true(st == EINVAL || st == EOPNOTSUPP || st == ENOENT);
	}
	assert_int_equal(fkt_objects_now(), 2);		/* the good one's PD and MR */
	/* the good connection was served throughout, its region as it was */
	assert_int_equal(fk_obj_destroy(good, FK_O_PD, pd), EBUSY);
	assert_int_equal(fk_mr_rereg(good, mr, IBV_REREG_MR_CHANGE_ACCESS, FK_O_NONE, RW, 0, 0,
				     &now), 0);
	assert_int_equal(now, pd);
	close(fd);
	close(file);
	fk_disconnect(good);
	fkt_end_clean(mon);
}

int main(int argc, char **argv)
{
	fkt_setup("t5205");
	return fkt_run(argc, argv);
}
