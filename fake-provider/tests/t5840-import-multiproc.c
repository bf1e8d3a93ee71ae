/* SPDX-License-Identifier: MIT */
/*
 * t5840: a context shared by real processes through the verbs. The owner
 * passes its cmd_fd over a UNIX socket (SCM_RIGHTS) to a forked process and
 * to an exec'd program; each imports the context (ibv_import_device), the
 * owner's PD and MR by their handles, and uses them in its own QPs: the
 * imported MR as the lkey of a WRITE's source and as the rkey of its
 * target, so the bytes move in the owner's memory (a foreign region,
 * fake-provider/engine/fe_mem.h). Destroying on one side is seen by the
 * other (ENOENT on import, EINVAL on a verb, the kernel's answers). The
 * file's objects live until its last fd closes: importer first, owner
 * first, both killed (the fake kernel's count, through a monitor). A
 * driver without import ops (profile rxe) answers EOPNOTSUPP.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fk_test.h"
#include "fp_test.h"
#include "fp_script.h"
#include "tf.h"

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define BUF 8192
#define MARK "written by the importer"

/* The owner's commands (over its pipe). */
enum { O_CHECK = 1, O_DEREG, O_DEALLOC, O_CLOSE };
/* The importer's. */
enum { I_TRAFFIC = 1, I_IMPORT_MR, I_DEALLOC, I_CLOSE };

/* ---- the owner ------------------------------------------------------------ */
static void owner(int in, int out, void *arg)
{
	int sock = *(int *)arg, n;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = list && n > 0 ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	char *buf = aligned_alloc(4096, BUF);
	struct ibv_mr *mr;
	struct fpt_share s;

	TR_ASSERT(pd && buf);
	memset(buf, 'o', BUF);
	mr = ibv_reg_mr(pd, buf, BUF, ACC);
	TR_ASSERT(mr);
	TR_ASSERT(fpt_share_send(sock, ctx, pd, mr, &s));
	close(sock);
	for (;;) {
		switch (fkt_get32(in)) {
		case O_CHECK:
			fkt_put32(out, !memcmp(buf + 1024, MARK, sizeof(MARK)));
			break;
		case O_DEREG:
			fkt_put32(out, (uint32_t)ibv_dereg_mr(mr));
			break;
		case O_DEALLOC:
			fkt_put32(out, (uint32_t)ibv_dealloc_pd(pd));
			break;
		case O_CLOSE:
			TR_EXPECT(ibv_close_device(ctx) == 0);
			ibv_free_device_list(list);
			free(buf);
			fkt_put32(out, 0);
			return;
		}
	}
}

/* ---- the importer, forked or exec'd ------------------------------------------ */
struct imp {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct fpt_share s;
};

/* Receive the fd, import the context, the PD and the MR: 0 or where it failed. */
static int imp_open(struct imp *m, int sock)
{
	return fpt_import(sock, &m->s, &m->ctx, &m->pd, &m->mr);
}

/* In the importer's own QPs on the imported PD: a WRITE of its bytes into
 * the owner's region (the imported rkey), and a WRITE out of the owner's
 * region (the imported lkey, at the owner's addresses) into its own. */
static int imp_traffic(struct imp *m)
{
	char *mine = aligned_alloc(4096, 4096);
	struct ibv_cq *cq = ibv_create_cq(m->ctx, 16, NULL, NULL, 0);
	struct ibv_qp *a = cq ? tf_rc_qp(m->pd, cq, IBV_QPT_RC) : NULL;
	struct ibv_qp *b = cq ? tf_rc_qp(m->pd, cq, IBV_QPT_RC) : NULL;
	struct ibv_mr *own = mine ? ibv_reg_mr(m->pd, mine, 4096, ACC) : NULL;
	int rc = 10;

	if (!own || !a || !b || tf_pair_connect(a, b, 1, 1))
		goto out;
	memset(mine, 0, 4096);
	memcpy(mine, MARK, sizeof(MARK));
	rc = 11;
	if (fpt_post_write(a, cq, (uintptr_t)mine, own->lkey, sizeof(MARK), m->s.iova + 1024,
			   m->mr->rkey) != IBV_WC_SUCCESS)
		goto out;
	rc = 12;
	if (fpt_post_write(a, cq, m->s.iova, m->mr->lkey, 16, (uintptr_t)mine + 2048,
			   own->rkey) != IBV_WC_SUCCESS)
		goto out;
	rc = memcmp(mine + 2048, "oooooooooooooooo", 16) ? 13 : 0;
out:
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (own)
		ibv_dereg_mr(own);
	if (cq)
		ibv_destroy_cq(cq);
	free(mine);
	return rc;
}

static void importer(int in, int out, void *arg)
{
	struct imp m = { 0 };
	struct ibv_mr *again;

	fkt_put32(out, (uint32_t)imp_open(&m, *(int *)arg));
	close(*(int *)arg);
	for (;;) {
		switch (fkt_get32(in)) {
		case I_TRAFFIC:
			fkt_put32(out, (uint32_t)imp_traffic(&m));
			break;
		case I_IMPORT_MR:
			again = ibv_import_mr(m.pd, m.s.mr);
			fkt_put32(out, again ? 0 : (uint32_t)errno);
			if (again)
				ibv_unimport_mr(again);
			break;
		case I_DEALLOC:
			ibv_unimport_mr(m.mr);
			fkt_put32(out, (uint32_t)ibv_dealloc_pd(m.pd));
			break;
		case I_CLOSE:
			TR_EXPECT(ibv_close_device(m.ctx) == 0);
			fkt_put32(out, 0);
			return;
		}
	}
}

/* The exec'd program: import over the socket of fd argv[2], write into the
 * owner's region; its exit status says how far it got. */
static int exec_importer(const char *sockfd)
{
	struct imp m = { 0 };
	int rc = imp_open(&m, atoi(sockfd));

	if (!rc)
		rc = imp_traffic(&m);
	if (!rc && ibv_close_device(m.ctx))
		rc = 20;
	return rc;
}

/* The exec'd program under a driver without import ops: EOPNOTSUPP for
 * the import verbs, its own context going on. */
static int exec_noimport(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	int fd;

	if (!pd || ctx->cmd_fd < 0)
		return 1;
	fd = dup(ctx->cmd_fd);
	errno = 0;
	if (ibv_import_device(fd) || errno != EOPNOTSUPP)
		return 2;
	close(fd);
	if (ibv_import_pd(ctx, pd->handle) || errno != EOPNOTSUPP)
		return 3;
	if (ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		return 4;
	ibv_free_device_list(list);
	return 0;
}

static pid_t spawn_exec(const char *mode, int keep_fd, const char *script)
{
	char self[4096], arg[16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	assert_true(n > 0);
	self[n] = '\0';
	snprintf(arg, sizeof(arg), "%d", keep_fd);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (keep_fd >= 0)
			fcntl(keep_fd, F_SETFD, 0);
		if (script)
			setenv("IBVCT_SCRIPT", script, 1);
		execl(self, self, mode, arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int exit_code(pid_t pid)
{
	int st = fkt_wait(pid, 30000 * fkt_mult());

	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the tests ----------------------------------------------------------------- */
struct pair {
	struct fkt_proc o, i;
};

static struct pair pair_up(void)
{
	struct pair p;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	p.o = fkt_spawn(owner, &sv[0]);
	p.i = fkt_spawn(importer, &sv[1]);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(fkt_get32(p.i.from), 0);	/* imported, keys as the owner's */
	return p;
}

static uint32_t ask(struct fkt_proc *p, uint32_t cmd)
{
	fkt_put32(p->to, cmd);
	return fkt_get32(p->from);
}

TR_TEST(forked_importer_uses_the_owners_pd_and_mr)
{
	struct fk_client *mon = fkt_monitor();
	struct pair p = pair_up();

	(void)state;
	assert_int_equal(ask(&p.i, I_TRAFFIC), 0);
	assert_int_equal(ask(&p.o, O_CHECK), 1);	/* the bytes are in the owner's buffer */
	assert_int_equal(ask(&p.i, I_CLOSE), 0);
	assert_int_equal(ask(&p.o, O_CLOSE), 0);
	fkt_reap(&p.i);
	fkt_reap(&p.o);
	fkt_end_clean(mon);
}

TR_TEST(execd_importer_uses_the_owners_mr)
{
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc o;
	int sv[2];
	pid_t pid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = spawn_exec("--importer", sv[1], NULL);
	close(sv[1]);
	o = fkt_spawn(owner, &sv[0]);
	close(sv[0]);
	assert_int_equal(exit_code(pid), 0);
	assert_int_equal(ask(&o, O_CHECK), 1);
	assert_int_equal(ask(&o, O_CLOSE), 0);
	fkt_reap(&o);
	fkt_end_clean(mon);
}

TR_TEST(destroy_on_either_side_is_seen_by_the_other)
{
	struct fk_client *mon = fkt_monitor();
	struct pair p = pair_up();

	(void)state;
	assert_int_equal(ask(&p.i, I_IMPORT_MR), 0);
	assert_int_equal(ask(&p.o, O_DEREG), 0);		/* the owner deregisters */
	assert_int_equal(ask(&p.i, I_IMPORT_MR), ENOENT);	/* gone for the importer */
	assert_int_equal(ask(&p.i, I_DEALLOC), 0);		/* the importer destroys the PD */
	assert_int_equal(ask(&p.o, O_DEALLOC), EINVAL);	/* gone for the owner */
	assert_int_equal(ask(&p.i, I_CLOSE), 0);
	assert_int_equal(ask(&p.o, O_CLOSE), 0);
	fkt_reap(&p.i);
	fkt_reap(&p.o);
	fkt_end_clean(mon);
}

/* The importer goes first, then the owner; the owner first, then the
 * importer: the file's objects stay until the last. */
TR_TEST(close_orders)
{
	struct fk_client *mon = fkt_monitor();
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		struct pair p = pair_up();
		struct fkt_proc *first = round ? &p.o : &p.i, *last = round ? &p.i : &p.o;

		assert_int_equal(fkt_objects_now(), 2);		/* the PD and the MR */
		assert_int_equal(ask(first, round ? O_CLOSE : I_CLOSE), 0);
		fkt_reap(first);
		assert_int_equal(fkt_objects_now(), 2);
		if (round)					/* the owner's gone: still usable */
			assert_int_equal(ask(last, I_IMPORT_MR), 0);
		assert_int_equal(ask(last, round ? I_CLOSE : O_CLOSE), 0);
		fkt_reap(last);
		assert_int_equal(fkt_objects_reach(0), 0);
	}
	fkt_end_clean(mon);
}

TR_TEST(both_killed)
{
	struct fk_client *mon = fkt_monitor();
	struct pair p = pair_up();

	(void)state;
	assert_int_equal(fkt_objects_now(), 2);
	fkt_kill(&p.o);
	assert_int_equal(fkt_objects_now(), 2);			/* the importer holds it */
	assert_int_equal(ask(&p.i, I_IMPORT_MR), 0);
	fkt_kill(&p.i);
	assert_int_equal(fkt_objects_reach(0), 0);
	fkt_end_clean(mon);
}

/* Profile rxe: rdma-core 44's rxe has no import ops (fake-provider/verbs/
 * profile.c fp_prof_can_import). */
TR_TEST(a_driver_without_import_answers_eopnotsupp)
{
	char path[4096 + 16];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/rxe.fps", fkt_rundir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("profile rxe\ndevice fake0\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(exit_code(spawn_exec("--noimport", -1, path)), 0);
}

int main(int argc, char **argv)
{
	char scratch[PATH_MAX], err[512];

	if (argc == 3 && !strcmp(argv[1], "--importer"))
		return exec_importer(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--noimport"))
		return exec_noimport();
	fkt_setup("t5840");
	if (fp_env_setup(NULL, getenv("IBVCT_PROVIDER"), fkt_scratch, scratch,
			 sizeof(scratch), err, sizeof(err)))
		fkt_die("fp_env_setup: %s", err);
	return fkt_run(argc, argv);
}
