/* SPDX-License-Identifier: MIT */
/*
 * t5842: an MR is one object of the kernel's file, whichever process
 * destroys it. The owner registers a region and passes its cmd_fd over a
 * UNIX socket to forked importers, which import the context, the PD and the
 * MR (a foreign region, fake-provider/engine/fe_mem.h). Once ibv_dereg_mr
 * returned in one process, the region's keys refuse in every other, as the
 * HCA does (linux v6.1 drivers/infiniband/sw/rxe/rxe_mr.c lookup_mr,
 * rxe_resp.c check_rkey): a WQE with the lkey completes
 * IBV_WC_LOC_PROT_ERR, a WRITE with the rkey arriving at that process's QP
 * completes IBV_WC_REM_ACCESS_ERR at the requester. Both ways: the owner
 * deregisters, or an importer deregisters through its imported MR (the
 * destroy of rdma-core's ibv_dereg_mr, for any MR); a second importer sees
 * the first's destroy. Each case checks first that the keys worked. The
 * quirk import_stale_handle keeps a destroyed region working.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fk_test.h"
#include "fp_test.h"
#include "fp_script.h"

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define BUF 8192
#define NIMP 2

/* Commands of both sides (over their pipes). */
enum { C_LOCAL = 1, C_REMOTE, C_DEREG, C_CLOSE };

/* One process's side: its context and PD, the region (registered or
 * imported) at iova, and a region of its own. */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *own;
	char *mine;
	struct fpt_share s;
};

static int side_own(struct side *d)
{
	d->mine = aligned_alloc(4096, 4096);
	if (!d->mine)
		return -1;
	memset(d->mine, 'm', 4096);
	d->own = ibv_reg_mr(d->pd, d->mine, 4096, ACC);
	return d->own ? 0 : -1;
}

/* The commands, until C_CLOSE. C_LOCAL: the region's lkey as a WRITE's
 * source (at its iova) into our own; C_REMOTE: our bytes into the region
 * through its rkey. Each answers the completion status. */
static void serve(struct side *d, int in, int out, struct ibv_device **list)
{
	int rc;

	for (;;) {
		switch (fkt_get32(in)) {
		case C_LOCAL:
			rc = fpt_write_status(d->ctx, d->pd, d->s.iova, d->s.lkey, 16,
					      (uintptr_t)d->mine + 2048, d->own->rkey);
			fkt_put32(out, (uint32_t)rc);
			break;
		case C_REMOTE:
			rc = fpt_write_status(d->ctx, d->pd, (uintptr_t)d->mine, d->own->lkey, 16,
					      d->s.iova + 1024, d->s.rkey);
			fkt_put32(out, (uint32_t)rc);
			break;
		case C_DEREG:
			fkt_put32(out, (uint32_t)ibv_dereg_mr(d->mr));
			break;
		case C_CLOSE:
			TR_EXPECT(ibv_dereg_mr(d->own) == 0);
			TR_EXPECT(ibv_close_device(d->ctx) == 0);
			if (list)
				ibv_free_device_list(list);
			free(d->mine);
			fkt_put32(out, 0);
			return;
		default:
			return;
		}
	}
}

/* ---- the owner: registers, sends its cmd_fd to each importer's socket ------ */
struct owner_arg {
	int sock[NIMP];
	int n;
};

static void owner(int in, int out, void *arg)
{
	struct owner_arg *oa = arg;
	struct side d = { 0 };
	struct ibv_device **list;
	char *buf = aligned_alloc(4096, BUF);
	int n, i;

	list = ibv_get_device_list(&n);
	d.ctx = list && n > 0 ? ibv_open_device(list[0]) : NULL;
	d.pd = d.ctx ? ibv_alloc_pd(d.ctx) : NULL;
	TR_ASSERT(d.pd && buf && !side_own(&d));
	memset(buf, 'o', BUF);
	d.mr = ibv_reg_mr(d.pd, buf, BUF, ACC);
	TR_ASSERT(d.mr);
	for (i = 0; i < oa->n; i++) {
		TR_ASSERT(fpt_share_send(oa->sock[i], d.ctx, d.pd, d.mr, &d.s));
		close(oa->sock[i]);
	}
	fkt_put32(out, 0);
	serve(&d, in, out, list);
	free(buf);	/* after the close: a region destroyed elsewhere stays ours till then */
}

/* ---- an importer --------------------------------------------------------------- */
static int imp_open(struct side *d, int sock)
{
	int rc = fpt_import(sock, &d->s, &d->ctx, &d->pd, &d->mr);

	return rc ? rc : side_own(d) ? 5 : 0;
}

static void importer(int in, int out, void *arg)
{
	struct side d = { 0 };

	fkt_put32(out, (uint32_t)imp_open(&d, *(int *)arg));
	close(*(int *)arg);
	serve(&d, in, out, NULL);
}

/* ---- the tests ------------------------------------------------------------------- */
struct group {
	struct fkt_proc o, i[NIMP];
	int n;
};

static struct group group_up(int nimp)
{
	struct owner_arg oa = { .n = nimp };
	struct group g = { .n = nimp };
	int sv[NIMP][2], k;

	for (k = 0; k < nimp; k++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[k]), 0);
		oa.sock[k] = sv[k][0];
	}
	g.o = fkt_spawn(owner, &oa);
	for (k = 0; k < nimp; k++) {
		g.i[k] = fkt_spawn(importer, &sv[k][1]);
		close(sv[k][0]);
		close(sv[k][1]);
	}
	assert_int_equal(fkt_get32(g.o.from), 0);		/* registered, fd sent */
	for (k = 0; k < nimp; k++)
		assert_int_equal(fkt_get32(g.i[k].from), 0);	/* imported, keys as the owner's */
	return g;
}

static uint32_t ask(struct fkt_proc *p, uint32_t cmd)
{
	fkt_put32(p->to, cmd);
	return fkt_get32(p->from);
}

static void keys_work(struct fkt_proc *p)
{
	assert_int_equal(ask(p, C_LOCAL), IBV_WC_SUCCESS);
	assert_int_equal(ask(p, C_REMOTE), IBV_WC_SUCCESS);
}

static void keys_refuse(struct fkt_proc *p)
{
	assert_int_equal(ask(p, C_LOCAL), IBV_WC_LOC_PROT_ERR);
	assert_int_equal(ask(p, C_REMOTE), IBV_WC_REM_ACCESS_ERR);
}

static void group_down(struct group *g, struct fk_client *mon)
{
	int k;

	for (k = 0; k < g->n; k++) {
		assert_int_equal(ask(&g->i[k], C_CLOSE), 0);
		fkt_reap(&g->i[k]);
	}
	assert_int_equal(ask(&g->o, C_CLOSE), 0);
	fkt_reap(&g->o);
	fkt_end_clean(mon);
}

TR_TEST(owner_dereg_kills_the_importers_keys)
{
	struct fk_client *mon = fkt_monitor();
	struct group g = group_up(1);

	(void)state;
	keys_work(&g.i[0]);
	keys_work(&g.o);
	assert_int_equal(ask(&g.o, C_DEREG), 0);
	keys_refuse(&g.i[0]);
	group_down(&g, mon);
}

TR_TEST(importer_dereg_kills_the_owners_keys)
{
	struct fk_client *mon = fkt_monitor();
	struct group g = group_up(1);

	(void)state;
	keys_work(&g.o);
	keys_work(&g.i[0]);
	assert_int_equal(ask(&g.i[0], C_DEREG), 0);	/* through the imported MR */
	keys_refuse(&g.o);
	group_down(&g, mon);
}

TR_TEST(an_importers_dereg_is_seen_by_another_importer)
{
	struct fk_client *mon = fkt_monitor();
	struct group g = group_up(2);

	(void)state;
	keys_work(&g.i[1]);
	assert_int_equal(ask(&g.i[0], C_DEREG), 0);
	keys_refuse(&g.i[1]);
	keys_refuse(&g.o);
	group_down(&g, mon);
}

int main(int argc, char **argv)
{
	char scratch[PATH_MAX], err[512];
	const char *script = NULL;

	/* a first argument with a '/' is a script (one with a quirk that must
	 * make a test here fail, suites/break-matrix.txt) */
	if (argc > 1 && strchr(argv[1], '/')) {
		script = argv[1];
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	fkt_setup("t5842");
	if (fp_env_setup(script, getenv("IBVCT_PROVIDER"), fkt_scratch, scratch,
			 sizeof(scratch), err, sizeof(err)))
		fkt_die("fp_env_setup: %s", err);
	return fkt_run(argc, argv);
}
