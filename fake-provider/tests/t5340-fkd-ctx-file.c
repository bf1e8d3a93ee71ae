/* SPDX-License-Identifier: MIT */
/*
 * t5340: the fake kernel's context file (kernel/README.md "The context's
 * file"), the uverbs file's stand-in: CTX_FD gives a real fd that dups,
 * polls IN|OUT (the uverbs file has no poll op: DEFAULT_POLLMASK) and
 * passes over a UNIX socket; the file's objects live until its connection
 * is closed and the last copy of the fd is too, whatever the order (linux
 * v6.1 uverbs_main.c ib_uverbs_release_file); CTX_IMPORT makes another
 * connection a second context of the file, which sees the same objects by
 * handle (OBJ_IMPORT: a PD, an MR with the keys MR_KEYS told) and the
 * kernel's errors for what is not one (ENOENT: no such handle in this
 * file, one destroyed through the other context or of another file;
 * EINVAL: another type; EINVAL/ENODEV/EBADF for an fd that is no file,
 * another device's, none). Malformed requests are answered and survived.
 * Real daemon, real sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fk_test.h"
#include "fp_fdpass.h"

static int ctx_fd(struct fk_client *c)
{
	int fd = -1;

	assert_int_equal(fk_ctx_fd(c, &fd), 0);
	assert_true(fd >= 0);
	return fd;
}

TR_TEST(the_file_is_a_real_fd)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	int fd = ctx_fd(c), d, other = -1;
	struct pollfd p;

	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);	/* as open_cdev's O_CLOEXEC */
	p = (struct pollfd){ .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(p.revents & (POLLIN | POLLOUT | POLLPRI | POLLHUP | POLLERR),
			 POLLIN | POLLOUT);
	d = dup(fd);
	assert_true(d >= 0);
	p = (struct pollfd){ .fd = d, .events = POLLIN | POLLOUT };
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(p.revents, POLLIN | POLLOUT);
	/* one file per connection */
	assert_int_equal(fk_ctx_fd(c, &other), EEXIST);
	assert_int_equal(other, -1);
	/* a monitor has none */
	assert_int_equal(fk_ctx_fd(mon, &other), EPERM);
	close(d);
	close(fd);
	fk_disconnect(c);
	fkt_end_clean(mon);
}

/* The objects go when the connection and every copy of the fd are closed,
 * in either order; a file nobody else holds goes with its connection. */
TR_TEST(the_file_lives_until_its_last_fd)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t pd;
	int fd = ctx_fd(c), d = dup(fd);

	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd), 0);
	close(fd);
	fk_disconnect(c);			/* a dup still open: the file stays */
	assert_int_equal(fkt_objects_now(), 1);
	usleep(50000);
	assert_int_equal(fkt_objects_now(), 1);
	close(d);				/* the last copy */
	assert_int_equal(fkt_objects_reach(0), 0);

	/* the other order: the fd first, the connection then */
	c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	fd = ctx_fd(c);
	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd), 0);
	close(fd);
	assert_int_equal(fkt_objects_now(), 1);	/* the connection holds it still */
	fk_disconnect(c);
	assert_int_equal(fkt_objects_reach(0), 0);

	/* fd closed first, then the connection: gone at once, as before files */
	c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	fd = ctx_fd(c);
	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd), 0);
	close(fd);
	fk_disconnect(c);
	assert_int_equal(fkt_objects_now(), 0);
	fkt_end_clean(mon);
}

/* An fd passed over a UNIX socket (SCM_RIGHTS) is the same file: a copy in
 * flight or in another hand keeps it, and it imports. */
TR_TEST(a_passed_fd_is_the_same_file)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_import im;
	uint32_t pd, owner = 0;
	int fd = ctx_fd(a), sv[2], got = -1;
	unsigned n = 0;
	char byte = 'f';

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fk_obj_create(a, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fp_fd_send(sv[0], &byte, 1, fd, 0), 1);
	close(fd);
	fk_disconnect(a);			/* the copy in flight holds the file */
	assert_int_equal(fkt_objects_now(), 1);
	assert_int_equal(fp_fd_recv(sv[1], &byte, 1, &got, 1, &n, 0, NULL), 1);
	assert_int_equal(n, 1);
	assert_int_equal(fk_ctx_import(b, got, &owner), 0);
	assert_true(owner != 0 && owner != fk_conn_id(b));
	assert_int_equal(fk_obj_import(b, FK_O_PD, pd, 0, &im), 0);
	assert_int_equal(im.handle, pd);
	close(got);
	assert_int_equal(fkt_objects_now(), 1);	/* b acts on it */
	fk_disconnect(b);
	assert_int_equal(fkt_objects_reach(0), 0);
	close(sv[0]);
	close(sv[1]);
	fkt_end_clean(mon);
}

/* The second context sees the file's objects by handle, and what it makes
 * is the file's; destroyed through one, gone for both. */
TR_TEST(import_gives_the_same_objects)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_import im;
	uint32_t pd, cq, mr, bpd, owner = 0;
	int fd = ctx_fd(a);

	assert_int_equal(fk_obj_create(a, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fk_obj_create(a, FK_O_CQ, 0, NULL, &cq), 0);
	assert_int_equal(fk_obj_create_on_pd(a, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, pd, &mr), 0);
	struct fk_mr_reg reg = { .lkey = 0x1234, .rkey = 0x5678, .access = IBV_ACCESS_LOCAL_WRITE,
				 .mapped = true, .length = 4096, .iova = 0x10000, .moff = 8192 };
	struct stat st1, st2;
	int ring = memfd_create("t5340-ring", MFD_CLOEXEC);

	assert_true(ring >= 0);
	assert_int_equal(fk_ring_set(a, ring), 0);
	assert_int_equal(fk_mr_keys(a, mr, &reg), 0);
	assert_int_equal(fk_ctx_import(b, fd, &owner), 0);
	assert_int_equal(owner, fk_conn_id(a));
	memset(&im, 0xff, sizeof(im));
	assert_int_equal(fk_obj_import(b, FK_O_PD, pd, 0, &im), 0);
	assert_int_equal(im.handle, pd);
	assert_int_equal(fk_obj_import(b, FK_O_MR, mr, 0, &im), 0);
	assert_int_equal(im.handle, mr);
	assert_int_equal(im.lkey, 0x1234);
	assert_int_equal(im.rkey, 0x5678);
	assert_int_equal(im.length, 4096);
	assert_int_equal(im.iova, 0x10000);
	assert_int_equal(im.access, IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(im.pd, pd);
	/* its bytes: the ring memfd of the process that registered it */
	assert_int_equal(im.moff, 8192);
	assert_true(im.fd >= 0);
	assert_int_equal(fstat(im.fd, &st1), 0);
	assert_int_equal(fstat(ring, &st2), 0);
	assert_true(st1.st_ino == st2.st_ino && st1.st_dev == st2.st_dev);
	close(im.fd);
	/* the wrong type (rdma_lookup_get_uobject: EINVAL), no such handle
	 * (lookup_get_idr_uobject: ENOENT) */
	assert_int_equal(fk_obj_import(b, FK_O_PD, cq, 0, &im), EINVAL);
	assert_int_equal(fk_obj_import(b, FK_O_MR, pd, 0, &im), EINVAL);
	assert_int_equal(fk_obj_import(b, FK_O_PD, 77, 0, &im), ENOENT);
	assert_int_equal(fk_obj_import(b, FK_O_MR, FK_O_NONE, 0, &im), ENOENT);
	/* what b makes is the file's: the next handle, and a sees it */
	assert_int_equal(fk_obj_create(b, FK_O_PD, 0, NULL, &bpd), 0);
	assert_int_equal(bpd, 3);
	assert_int_equal(fk_obj_import(a, FK_O_PD, bpd, 0, &im), 0);
	/* the MR holds the PD for both; b destroys the MR, a sees it gone */
	assert_int_equal(fk_obj_destroy(b, FK_O_PD, pd), EBUSY);
	assert_int_equal(fk_obj_destroy(b, FK_O_MR, mr), 0);
	assert_int_equal(fk_obj_destroy(a, FK_O_MR, mr), EINVAL);
	assert_int_equal(fk_obj_import(a, FK_O_MR, mr, 0, &im), ENOENT);
	assert_int_equal(fk_obj_import(b, FK_O_MR, mr, 0, &im), ENOENT);
	/* ... unless the quirk finds the dead one */
	assert_int_equal(fk_obj_import(b, FK_O_MR, mr, FK_Q_IMPORT_STALE_HANDLE, &im), 0);
	assert_int_equal(im.lkey, 0x1234);
	assert_int_equal(im.fd, -1);		/* no bytes behind a dead one */
	assert_int_equal(fk_obj_destroy(a, FK_O_PD, pd), 0);
	/* a region a registers on b's PD; a goes: its bytes went with it */
	assert_int_equal(fk_obj_create_on_pd(a, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, bpd, &mr), 0);
	assert_int_equal(fk_mr_keys(a, mr, &reg), 0);
	assert_int_equal(fkt_objects_now(), 3);	/* the CQ, b's PD, the MR */
	close(fd);
	close(ring);
	fk_disconnect(a);			/* b holds the file */
	assert_int_equal(fkt_objects_now(), 3);
	assert_int_equal(fk_obj_import(b, FK_O_MR, mr, 0, &im), 0);
	assert_int_equal(im.lkey, 0x1234);
	assert_int_equal(im.fd, -1);
	assert_int_equal(fk_obj_destroy(b, FK_O_MR, mr), 0);
	fk_disconnect(b);
	assert_int_equal(fkt_objects_reach(0), 0);
	fkt_end_clean(mon);
}

/* What is not this file's: another file's handle (ENOENT, unless the
 * import_any_context quirk), an fd that is no file (EINVAL, as
 * libibverbs/device.c:380 answers a non-uverbs fd), another device's
 * (ENODEV), no open fd (EBADF), a connection that has objects or a file
 * already (EISCONN). */
TR_TEST(what_is_not_the_file_is_refused)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *o = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *x = fkt_conn("fake1", FK_LIFETIME_CURRENT);
	struct fk_import im;
	uint32_t pd, opd[3], owner = 0;
	int fd = ctx_fd(a), ofd = ctx_fd(o), p[2], i;

	assert_int_equal(fk_obj_create(a, FK_O_PD, 0, NULL, &pd), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(fk_obj_create(o, FK_O_PD, 0, NULL, &opd[i]), 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(fk_ctx_import(b, p[0], &owner), EINVAL);
	assert_int_equal(fk_ctx_import(b, 987, &owner), EBADF);
	assert_int_equal(fk_ctx_import(x, fd, &owner), ENODEV);
	assert_int_equal(fk_ctx_import(o, fd, &owner), EISCONN);	/* has its own */
	assert_int_equal(fk_ctx_import(b, fd, &owner), 0);
	assert_int_equal(fk_ctx_import(b, fd, &owner), EISCONN);
	/* o's PD 2 is no object of a's file */
	assert_int_equal(fk_obj_import(b, FK_O_PD, opd[2], 0, &im), ENOENT);
	assert_int_equal(fk_obj_import(b, FK_O_PD, opd[2], FK_Q_IMPORT_ANY_CONTEXT, &im), 0);
	assert_int_equal(im.handle, opd[2]);
	assert_int_equal(owner, fk_conn_id(a));
	close(p[0]);
	close(p[1]);
	close(fd);
	close(ofd);
	fk_disconnect(x);
	fk_disconnect(b);
	fk_disconnect(o);
	fk_disconnect(a);
	assert_int_equal(fkt_objects_reach(0), 0);
	fkt_end_clean(mon);
}

/* Either connection first, then the fd; and the file's owner killed with
 * an importer holding it. */
TR_TEST(close_orders)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a, *b;
	uint32_t pd, owner;
	int fd, round;

	for (round = 0; round < 2; round++) {
		a = fkt_conn("fake0", FK_LIFETIME_CURRENT);
		b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
		fd = ctx_fd(a);
		assert_int_equal(fk_obj_create(a, FK_O_PD, 0, NULL, &pd), 0);
		assert_int_equal(fk_ctx_import(b, fd, &owner), 0);
		assert_int_equal(fk_obj_create(b, FK_O_PD, 0, NULL, &pd), 0);
		fk_disconnect(round ? b : a);
		assert_int_equal(fkt_objects_now(), 2);
		fk_disconnect(round ? a : b);
		assert_int_equal(fkt_objects_now(), 2);	/* fd open */
		close(fd);
		assert_int_equal(fkt_objects_reach(0), 0);
	}
	fkt_end_clean(mon);
}

/* A process whose file another process holds is killed: its objects stay
 * until that fd goes, and the holder may import the file meanwhile. */
static void holder(int out)
{
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t pd;
	int fd = ctx_fd(c);

	assert_int_equal(fk_obj_create(c, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fp_fd_send(out, &pd, sizeof(pd), fd, 0), (ssize_t)sizeof(pd));
	for (;;)
		pause();			/* until killed */
}

TR_TEST(a_killed_owner_leaves_the_file_to_its_holder)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_import im;
	uint32_t pd = 99, owner;
	unsigned n = 0;
	int fd = -1, sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(sv[0]);
		holder(sv[1]);
	}
	close(sv[1]);
	assert_true(fp_fd_recv(sv[0], &pd, sizeof(pd), &fd, 1, &n, 0, NULL) ==
		    (ssize_t)sizeof(pd));
	assert_int_equal(n, 1);
	close(sv[0]);
	assert_int_equal(fkt_objects_now(), 1);
	kill(pid, SIGKILL);
	assert_true(fkt_wait(pid, 10000 * fkt_mult()) >= 0);
	assert_int_equal(fkt_objects_now(), 1);	/* we hold its fd */
	assert_int_equal(fk_ctx_import(b, fd, &owner), 0);
	assert_int_equal(fk_obj_import(b, FK_O_PD, pd, 0, &im), 0);
	close(fd);
	assert_int_equal(fkt_objects_now(), 1);	/* b's connection acts on it */
	fk_disconnect(b);
	assert_int_equal(fkt_objects_reach(0), 0);
	fkt_end_clean(mon);
}

/* Malformed requests
of the four types get their error reply and the
 * daemon serves on. */
TR_TEST(malformed_requests_are_survived)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *good = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	static const uint32_t types[] = {
		FK_MSG_CTX_FD, FK_MSG_CTX_IMPORT, FK_MSG_OBJ_IMPORT, FK_MSG_MR_KEYS,
	};
	struct fk_req_obj_import oi = { 0 };
	struct fk_req_mr_keys mk = { 0 };
	struct fk_req_handle rh = { 0 };
	struct fk_req_num rn = { 0 };
	unsigned char big[FK_REQ_MAX + 16] = { 0 }, junk[64] = { 0 };
	struct fk_import im;
	struct fk_hdr h;
	uint32_t pd, mr;
	unsigned seed = 5340, i, t;
	int fd = fkt_raw_connect(), gfd = ctx_fd(good);

	assert_true(fd >= 0);
	assert_int_equal(fk_obj_create(good, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(fk_obj_create_on_pd(good, FK_O_MR, IBV_ACCESS_LOCAL_WRITE, pd, &mr), 0);
	struct fk_mr_reg reg = { .lkey = 7, .rkey = 8, .length = 9 };

	assert_int_equal(fk_mr_keys(good, mr, &reg), 0);
	/* before HELLO */
	for (t = 0; t < 4; t++) {
		assert_int_equal(fkt_raw_req(fd, types[t], 1, junk, fk_proto_req_size(types[t])), 0);
		assert_int_equal(fkt_raw_status(fd), EPROTO);
	}
	assert_int_equal(fkt_raw_hello(fd, "fake0", FK_LIFETIME_CURRENT), 0);
	/* wrong sizes */
	for (t = 0; t < 4; t++) {
		assert_int_equal(fkt_raw_req(fd, types[t], 2, big, fk_proto_req_size(types[t]) - 4),
				 0);
		assert_int_equal(fkt_raw_status(fd), EBADMSG);
		assert_int_equal(fkt_raw_req(fd, types[t], 3, big, fk_proto_req_size(types[t]) + 8),
				 0);
		assert_int_equal(fkt_raw_status(fd), EBADMSG);
	}
	/* reserved fields, unknown flags, types import does not take */
	rn.num = 1;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_CTX_FD, 4, &rn, sizeof(rn)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	assert_int_equal(fkt_raw_req(fd, FK_MSG_CTX_IMPORT, 5, &rh, sizeof(rh)), 0);
	assert_int_equal(fkt_raw_status(fd), EBADF);		/* no fd came */
	oi.type = FK_OBJ_CQ;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_OBJ_IMPORT, 6, &oi, sizeof(oi)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	oi.type = FK_OBJ_PD;
	oi.flags = 1u << 7;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_OBJ_IMPORT, 7, &oi, sizeof(oi)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	oi.flags = 0;
	oi.reserved = 1;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_OBJ_IMPORT, 8, &oi, sizeof(oi)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	mk.reserved = 1;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_KEYS, 9, &mk, sizeof(mk)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	mk.reserved = 0;
	mk.flags = 2;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_KEYS, 11, &mk, sizeof(mk)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	mk.flags = 0;
	mk.mr_handle = mr;			/* none of this connection's */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_MR_KEYS, 10, &mk, sizeof(mk)), 0);
	assert_int_equal(fkt_raw_status(fd), ENOENT);
	/* garbage in every field */
	for (i = 0; i < 200; i++) {
		struct fk_rep_import rep;
		size_t k, len;

		t = i % 4;
		len = fk_proto_req_size(types[t]);
		for (k = 0; k < len; k++)
			junk[k] = (unsigned char)rand_r(&seed);
		assert_int_equal(fkt_raw_req(fd, types[t], 100 + i, junk, len), 0);
		assert_true(fkt_raw_recv(fd, &h, &rep, sizeof(rep)) > 0);
		assert_int_equal(h.seq, 100 + i);
	}
	/* the good connection was served throughout */
	assert_int_equal(fk_obj_import(good, FK_O_MR, mr, 0, &im), 0);
	assert_int_equal(im.lkey, 7);
	assert_int_equal(im.rkey, 8);
	assert_int_equal(fkt_objects_now(), 2);
	close(fd);
	close(gfd);
	fk_disconnect(good);
	fkt_end_clean(mon);
}

int main(int argc, char **argv)
{
	fkt_setup("t5340");
	return fkt_run(argc, argv);
}
