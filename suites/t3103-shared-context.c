/* SPDX-License-Identifier: MIT */
/*
 * t3103: a context shared by several processes (IMPORT-). The owner passes
 * its context's fd over a UNIX socketpair (SCM_RIGHTS) to a forked child or
 * to a program it execs; there ibv_import_device, ibv_import_pd and
 * ibv_import_mr give the owner's objects, which the importer uses in QPs of
 * its own (the MR's lkey reads the owner's memory, its rkey takes a WRITE
 * into it). A destroy on one side is seen on the other; the objects live
 * while any process holds the file, whoever closes first, and when the
 * owner is killed. A driver without import ops (rxe, mlx4): the tests skip
 * with that reason. One process: t4102.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th.h"

#define LEN 4096
#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define HELPER_ARG "--import-helper"

/* What the owner tells the importer with its fd. */
struct share {
	uint32_t pd_handle, mr_handle, lkey, rkey;
	uint64_t addr, length;
	uint32_t port, step;
};

enum { STEP_USE = 1, STEP_DEREG, STEP_CLOSE, STEP_HOLD };

/* The owner's structures whose objects another process destroyed or that
 * a closed context left behind: kept reachable for a leak checker. */
static void *volatile left_open[8];
static unsigned int nleft;

static void keep(void *p)
{
	if (nleft < sizeof(left_open) / sizeof(left_open[0]))
		left_open[nleft++] = p;
}

static int send_fd(int sock, int fd, const struct share *s)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)s, .iov_len = sizeof(*s) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == (ssize_t)sizeof(*s) ? 0 : -1;
}

/* The fd received (or -1), the share in *s. */
static int recv_fd(int sock, struct share *s)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = s, .iov_len = sizeof(*s) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*s))
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void say(int sock, uint32_t v)
{
	TR_ASSERT(write(sock, &v, sizeof(v)) == (ssize_t)sizeof(v));
}

static uint32_t hear(int sock)
{
	uint32_t v = 0;

	TR_ASSERT(read(sock, &v, sizeof(v)) == (ssize_t)sizeof(v));
	return v;
}

/*
 * The importer, in a forked child or an exec'd program: receives the fd and
 * the handles, imports, checks the objects against the owner's, then does
 * what the owner's step asks. Its checks are TR_ checks (the exec'd
 * program's verdict is its exit status).
 */
static void importer(int sock)
{
	unsigned char got[LEN], put[LEN], want[LEN];
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct share s;
	char why[256];
	int fd;

	fd = recv_fd(sock, &s);
	TR_ASSERT_MSG(fd >= 0, "no fd over the socket (SCM_RIGHTS)");
	c = ibv_import_device(fd);
	TR_ASSERT_MSG(c != NULL, "ibv_import_device of the passed fd: %s", strerror(errno));
	TR_EXPECT(c->cmd_fd == fd);
	pd = ibv_import_pd(c, s.pd_handle);
	TR_ASSERT_MSG(pd != NULL, "ibv_import_pd(%u): %s", s.pd_handle, strerror(errno));
	TR_EXPECT(pd->handle == s.pd_handle);
	mr = ibv_import_mr(pd, s.mr_handle);
	TR_ASSERT_MSG(mr != NULL, "ibv_import_mr(%u): %s", s.mr_handle, strerror(errno));
	TR_EXPECT(mr->handle == s.mr_handle);
	TR_EXPECT_MSG(mr->lkey == s.lkey && mr->rkey == s.rkey,
		      "imported keys %#x/%#x, the owner's %#x/%#x", mr->lkey, mr->rkey, s.lkey,
		      s.rkey);
	TR_EXPECT(mr->length == s.length);
	say(sock, 1);				/* imported */
	switch (hear(sock)) {
	case STEP_USE:	/* the owner wrote 0x77 after the fork: the SEND reads it */
		memset(put, 0x3c, LEN);
		memset(want, 0x77, LEN);
		memset(got, 0, LEN);
		TR_EXPECT_MSG(!th_import_traffic(pd, mr, (void *)(uintptr_t)s.addr, LEN,
						 (uint8_t)s.port, got, put, why, sizeof(why)),
			      "the importer's traffic: %s", why);
		TR_EXPECT_MSG(!memcmp(got, want, LEN),
			      "the SEND from the imported lkey carried %#x, the owner's memory 0x77",
			      got[0]);
		ibv_unimport_mr(mr);
		break;
	case STEP_DEREG:
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
		break;
	case STEP_CLOSE:
		ibv_unimport_mr(mr);
		break;
	}
	ibv_unimport_pd(pd);
	TR_EXPECT(ibv_close_device(c) == 0);
	say(sock, 2);				/* done, the fd closed */
}

/* A driver without import ops skips the test in the test's own process,
 * before any other process starts. */
static void need_import(struct ibv_context *ctx)
{
	struct ibv_context *c = th_import(ctx->cmd_fd, NULL);

	if (!c)
		th_fail("ibv_import_device of the context's own fd: %s", strerror(errno));
	assert_int_equal(ibv_close_device(c), 0);
}

struct owner {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct share s;
};

static void owner_objects(struct th_ctx *t, struct owner *o)
{
	assert_int_equal(posix_memalign((void **)&o->buf, 4096, LEN), 0);
	memset(o->buf, 0x11, LEN);
	o->pd = ibv_alloc_pd(t->ctx);
	assert_non_null(o->pd);
	o->mr = ibv_reg_mr(o->pd, o->buf, LEN, ACC);
	assert_non_null(o->mr);
	o->s = (struct share){ .pd_handle = o->pd->handle, .mr_handle = o->mr->handle,
			       .lkey = o->mr->lkey, .rkey = o->mr->rkey,
			       .addr = (uintptr_t)o->buf, .length = LEN, .port = t->port };
}

static void owner_free(struct owner *o)
{
	assert_int_equal(ibv_dereg_mr(o->mr), 0);
	assert_int_equal(ibv_dealloc_pd(o->pd), 0);
	free(o->buf);
}

/* Start the importer: a forked child, or this program exec'd. */
static pid_t start_importer(int sv[2], int exec_it)
{
	char num[16];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		if (exec_it) {
			/* the fd crosses exec only by the socket: the socket itself
			 * is the one fd left open on purpose */
			int s = dup(sv[1]);

			TR_ASSERT(s >= 0);
			snprintf(num, sizeof(num), "%d", s);
			execl("/proc/self/exe", "t3103-import-helper", HELPER_ARG, num, (char *)NULL);
			TR_ASSERT_MSG(0, "exec of the import helper: %s", strerror(errno));
		}
		importer(sv[1]);
		_exit(tr_checks_failed() ? 1 : 0);
	}
	close(sv[1]);
	return pid;
}

static void importer_done(pid_t pid, int sock)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		th_fail("the importer ended with status %#x (its checks in the log)", st);
	close(sock);
}

/* IMPORT-03, -04, -06, -07, -08: in a forked child or an exec'd program */
static void share_and_use(struct th_ctx *t, int exec_it)
{
	struct owner o;
	int sv[2];
	pid_t pid;

	need_import(t->ctx);
	owner_objects(t, &o);
	pid = start_importer(sv, exec_it);
	assert_int_equal(send_fd(sv[0], t->ctx->cmd_fd, &o.s), 0);
	assert_int_equal(hear(sv[0]), 1);
	memset(o.buf, 0x77, LEN);	/* after the fork: only the owner's memory has it */
	say(sv[0], STEP_USE);
	assert_int_equal(hear(sv[0]), 2);
	importer_done(pid, sv[0]);
	/* the importer's RDMA WRITE landed in the owner's memory */
	if (o.buf[0] != 0x3c || o.buf[LEN - 1] != 0x3c)
		th_fail("the WRITE to the imported rkey did not reach the owner: %#x", o.buf[0]);
	/* the objects are the owner's still */
	owner_free(&o);
}

TH_TEST(forked_child_imports_the_passed_fd_and_uses_pd_and_mr,
	"IMPORT-03 IMPORT-04 IMPORT-06 IMPORT-07 IMPORT-08", 0)
{
	share_and_use(t, 0);
}

TH_TEST(execd_program_imports_the_passed_fd_and_uses_pd_and_mr, "IMPORT-03 IMPORT-04 IMPORT-08", 0)
{
	share_and_use(t, 1);
}

/* IMPORT-10: the child deregisters the imported MR: gone for the owner */
TH_TEST(dereg_in_the_importer_is_seen_by_the_owner, "IMPORT-10", 0)
{
	struct ibv_mr *x;
	struct owner o;
	int sv[2];
	pid_t pid;

	need_import(t->ctx);
	owner_objects(t, &o);
	pid = start_importer(sv, 0);
	assert_int_equal(send_fd(sv[0], t->ctx->cmd_fd, &o.s), 0);
	assert_int_equal(hear(sv[0]), 1);
	say(sv[0], STEP_DEREG);
	assert_int_equal(hear(sv[0]), 2);
	importer_done(pid, sv[0]);
	errno = 0;
	x = ibv_import_mr(o.pd, o.s.mr_handle);
	if (x)
		th_fail("the MR the importer deregistered still imports in the owner");
	th_errno_strict(errno, ENOENT, "import_mr of an MR deregistered by another process");
	keep(o.mr);
	assert_int_equal(ibv_dealloc_pd(o.pd), 0);	/* no MR holds it now */
	free(o.buf);
}

/* IMPORT-13, IMPORT-12: the importer closes first; the owner goes on */
TH_TEST(importer_closes_first_the_owner_goes_on, "IMPORT-13 IMPORT-12", 0)
{
	struct ibv_context *c;
	struct ibv_mr *x;
	struct ibv_pd *p;
	struct owner o;
	int sv[2];
	pid_t pid;

	need_import(t->ctx);
	owner_objects(t, &o);
	pid = start_importer(sv, 0);
	assert_int_equal(send_fd(sv[0], t->ctx->cmd_fd, &o.s), 0);
	assert_int_equal(hear(sv[0]), 1);
	say(sv[0], STEP_CLOSE);
	assert_int_equal(hear(sv[0]), 2);
	importer_done(pid, sv[0]);		/* its copy of the fd closed, it exited */
	c = th_import(t->ctx->cmd_fd, NULL);
	assert_non_null(c);
	p = ibv_import_pd(c, o.s.pd_handle);
	if (!p)
		th_fail("the PD went with the importer's close: %s", strerror(errno));
	x = ibv_import_mr(p, o.s.mr_handle);
	if (!x)
		th_fail("the MR went with the importer's close: %s", strerror(errno));
	assert_int_equal(x->lkey, o.s.lkey);
	ibv_unimport_mr(x);
	ibv_unimport_pd(p);
	assert_int_equal(ibv_close_device(c), 0);
	owner_free(&o);
}

/* IMPORT-13: the owner closes its context first; the importer's copy of
 * the file keeps the objects, which it imports and uses after */
TH_TEST(owner_closes_first_the_importer_keeps_the_objects, "IMPORT-13", 0)
{
	struct owner o;
	int sv[2];
	pid_t pid;

	need_import(t->ctx);
	owner_objects(t, &o);
	pid = start_importer(sv, 0);
	assert_int_equal(send_fd(sv[0], t->ctx->cmd_fd, &o.s), 0);
	assert_int_equal(hear(sv[0]), 1);
	keep(o.mr);
	keep(o.pd);
	assert_int_equal(ibv_close_device(t->ctx), 0);	/* the PD and MR left open */
	t->ctx = NULL;
	memset(o.buf, 0x77, LEN);
	say(sv[0], STEP_USE);
	assert_int_equal(hear(sv[0]), 2);
	importer_done(pid, sv[0]);
	if (o.buf[0] != 0x3c)
		th_fail("the importer's WRITE did not reach the owner's memory: %#x", o.buf[0]);
	/* the last fd is closed: the objects went with it; the memory is ours */
	free(o.buf);
}

/* IMPORT-13: the owner is killed (SIGKILL) while another process holds a
 * copy of its file: the objects stay, imported and used by the holder */
static void peer_owner(struct th_peer *self, void *arg)
{
	struct th_ctx *t = arg;
	struct ibv_context *c = th_open();
	struct owner o;
	struct th_ctx own = *t;

	own.ctx = c;
	owner_objects(&own, &o);
	TR_ASSERT(send_fd(self->to, c->cmd_fd, &o.s) == 0);
	pause();		/* killed here */
}

TH_TEST(killed_owner_leaves_the_objects_to_the_holder, "IMPORT-13", 0)
{
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *own;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct th_peer p;
	struct share s;
	void *buf = NULL;
	int fd, sv[2];

	need_import(t->ctx);
	/* the peer's fd comes over a socketpair, not its pipes */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	p.pid = tr_fork();
	assert_true(p.pid >= 0);
	if (p.pid == 0) {
		struct th_peer self = { .pid = 0, .to = sv[1], .from = sv[1] };

		close(sv[0]);
		peer_owner(&self, t);
		_exit(0);
	}
	close(sv[1]);
	fd = recv_fd(sv[0], &s);
	assert_true(fd >= 0);
	assert_int_equal(kill(p.pid, SIGKILL), 0);
	assert_int_equal(waitpid(p.pid, NULL, 0), p.pid);
	close(sv[0]);
	c = ibv_import_device(fd);
	if (!c)
		th_fail("ibv_import_device of a killed owner's file: %s", strerror(errno));
	pd = ibv_import_pd(c, s.pd_handle);
	if (!pd)
		th_fail("the killed owner's PD is gone while its file is held: %s", strerror(errno));
	mr = ibv_import_mr(pd, s.mr_handle);
	if (!mr)
		th_fail("the killed owner's MR is gone while its file is held: %s", strerror(errno));
	assert_int_equal(mr->lkey, s.lkey);
	assert_int_equal(mr->rkey, s.rkey);
	/* usable: an MR and a QP of the holder's on the owner's PD */
	assert_int_equal(posix_memalign(&buf, 4096, LEN), 0);
	own = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(own);
	cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	assert_non_null(cq);
	qp = th_rc_qp(pd, cq, IBV_QPT_RC);
	assert_non_null(qp);
	assert_int_equal(th_qp_to_init(qp, t->port), 0);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dereg_mr(own), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);		/* the holder ends them */
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_device(c), 0);	/* the last fd */
	free(buf);
}

int main(int argc, char **argv)
{
	/* the exec'd importer: its verdict is its exit status */
	if (argc == 3 && !strcmp(argv[1], HELPER_ARG)) {
		importer(atoi(argv[2]));
		return tr_checks_failed() ? 1 : 0;
	}
	return th_main(argc, argv);
}
