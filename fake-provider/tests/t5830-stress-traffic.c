/* SPDX-License-Identifier: MIT */
/*
 * Verbs-level stress across processes: 32 worker slots, each running one
 * short life after another for IBVCT_STRESS_SECS (default 4, at most 15):
 * open the device and the shared XRCD, make an XRC SRQ and a target QP (or
 * open one another worker published), send over an XRC_SEND QP to what
 * others published, and end at a random point by exit, SIGKILL or a tidy
 * close. Completions may carry errors (peers vanish); nothing may hang.
 * Afterwards the daemon holds no object, its self-check finds no problem,
 * and it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fk_test.h"
#include "tf.h"

#define SLOTS	32
#define BOARD	64

struct board {
	uint32_t qpn[BOARD], srqn[BOARD];
	uint32_t lives, sends;
};

static struct board *board;
static char xfile[PATH_MAX];

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Ends the life at this point with probability 1/n: exit, kill or return. */
static void maybe_end(uint32_t *s, uint32_t n)
{
	if (rnd(s) % n)
		return;
	if (rnd(s) % 2)
		raise(SIGKILL);
	_exit(0);
}

/* The walks of the lives: zero access flags, resources, RNR timer and RNR
 * retries, timeout 14 and 7 retries; the RTR step sends the responder's
 * attributes whatever the type (XRC_SEND too). */
static const struct tf_qp_opts walk = {
	.timeout = 14, .retry_cnt = 7,
	.rtr_mask = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
};

static int to_rtr(struct ibv_qp *q, uint32_t dest)
{
	struct ibv_ah_attr ah = { .port_num = 1 };
	int err = tf_qp_to_init_o(q, 1, &walk);

	return err ? err : tf_qp_to_rtr_av_o(q, &ah, dest, &walk);
}

static void life(uint32_t seed)
{
	static char buf[4096];
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_open_attr oa;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_qp *tgt, *sq;
	struct ibv_srq *srq;
	struct ibv_xrcd *x;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint32_t s = seed | 1, srqn = 0, slot;
	int n, i;

	list = ibv_get_device_list(&n);
	TR_ASSERT(list && n > 0);
	ctx = ibv_open_device(list[0]);
	TR_ASSERT(ctx);
	maybe_end(&s, 8);
	xa.fd = open(xfile, O_RDWR | O_CREAT, 0600);
	x = ibv_open_xrcd(ctx, &xa);
	TR_ASSERT(x);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	TR_ASSERT(pd && cq && mr);
	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = pd;
	sa.xrcd = x;
	sa.cq = cq;
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	srq = ibv_create_srq_ex(ctx, &sa);
	TR_ASSERT(srq && !ibv_get_srq_num(srq, &srqn));
	for (i = 0; i < 16; i++) {
		struct ibv_sge g = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_recv_wr w = { .wr_id = (uint64_t)i, .sg_list = &g, .num_sge = 1 }, *bad;

		TR_ASSERT(!ibv_post_srq_recv(srq, &w, &bad));
	}
	maybe_end(&s, 8);
	slot = rnd(&s) % BOARD;
	tgt = NULL;
	if (rnd(&s) % 2 && __atomic_load_n(&board->qpn[slot], __ATOMIC_RELAXED)) {
		memset(&oa, 0, sizeof(oa));
		oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
		oa.qp_num = board->qpn[slot];
		oa.xrcd = x;
		oa.qp_type = IBV_QPT_XRC_RECV;
		tgt = ibv_open_qp(ctx, &oa);		/* may be gone: EINVAL */
		TR_ASSERT(tgt || errno == EINVAL);
	}
	if (!tgt) {
		memset(&qa, 0, sizeof(qa));
		qa.qp_type = IBV_QPT_XRC_RECV;
		qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		qa.xrcd = x;
		tgt = ibv_create_qp_ex(ctx, &qa);
		TR_ASSERT(tgt);
		TR_ASSERT(!to_rtr(tgt, 0x10));
	}
	__atomic_store_n(&board->srqn[slot], srqn, __ATOMIC_RELAXED);
	__atomic_store_n(&board->qpn[slot], tgt->qp_num, __ATOMIC_RELAXED);
	maybe_end(&s, 6);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	qa.send_cq = cq;
	qa.cap.max_send_wr = 16;
	qa.cap.max_send_sge = 1;
	slot = rnd(&s) % BOARD;
	sq = ibv_create_qp_ex(ctx, &qa);
	TR_ASSERT(sq && !to_rtr(sq, board->qpn[slot] ? board->qpn[slot] : tgt->qp_num));
	TR_ASSERT(!tf_qp_to_rts_o(sq, &walk));
	for (i = 0; i < 8; i++) {
		struct ibv_sge g = { (uintptr_t)buf + 1024, 32, mr->lkey };
		struct ibv_send_wr w, *bad;
		struct ibv_wc wc[4];

		memset(&w, 0, sizeof(w));
		w.sg_list = &g;
		w.num_sge = 1;
		w.opcode = IBV_WR_SEND;
		w.send_flags = IBV_SEND_SIGNALED;
		w.qp_type.xrc.remote_srqn = board->srqn[rnd(&s) % BOARD];
		TR_ASSERT(!ibv_post_send(sq, &w, &bad));
		__atomic_add_fetch(&board->sends, 1, __ATOMIC_RELAXED);
		while (ibv_poll_cq(cq, 4, wc) > 0)
			;				/* any status: peers come and go */
		maybe_end(&s, 24);
	}
	if (rnd(&s) % 2) {
		/* a tidy end, in the order the rules want */
		TR_ASSERT(!ibv_destroy_qp(sq));
		TR_ASSERT(!ibv_destroy_qp(tgt));
		TR_ASSERT(!ibv_destroy_srq(srq));
		TR_ASSERT(!ibv_close_xrcd(x));
		TR_ASSERT(!ibv_dereg_mr(mr));
		TR_ASSERT(!ibv_destroy_cq(cq));
		TR_ASSERT(!ibv_dealloc_pd(pd));
	}
	TR_ASSERT(!ibv_close_device(ctx));
	ibv_free_device_list(list);
	close(xa.fd);
}

static pid_t spawn_life(uint32_t seed)
{
	pid_t pid = fork();

	if (pid < 0)
		fkt_die("fork: %s", strerror(errno));
	if (pid == 0) {
		alarm((unsigned)(60 * fkt_mult()));	/* a hang shows as SIGALRM */
		life(seed);
		_exit(0);
	}
	return pid;
}

TR_TEST(workers_come_and_go_leaving_nothing)
{
	const char *e = getenv("IBVCT_STRESS_SECS");
	long secs = e ? atol(e) : 4, lives = 0, bad = 0;
	struct fk_client *m = fkt_monitor();
	uint32_t seed = (uint32_t)time(NULL) * 2654435761u | 1;
	pid_t pid, slot[SLOTS];
	long long end;
	int i, st;

	(void)state;
	if (secs < 1 || secs > 15)
		secs = secs < 1 ? 1 : 15;
	tr_note("seed %u, %ld s", seed, secs);
	end = fkt_ms() + secs * 1000;
	for (i = 0; i < SLOTS; i++)
		slot[i] = spawn_life(rnd(&seed));
	while (fkt_ms() < end) {
		pid = waitpid(-1, &st, 0);
		if (pid < 0)
			break;
		for (i = 0; i < SLOTS && slot[i] != pid; i++)
			;
		if (i == SLOTS)
			continue;		/* not a worker (a daemon restarted meanwhile) */
		lives++;
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) &&
		    !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)) {
			printf("# worker %ld: status %#x\n", (long)pid, st);
			bad++;
		}
		slot[i] = spawn_life(rnd(&seed));
	}
	for (i = 0; i < SLOTS; i++) {
		st = fkt_wait(slot[i], 90000);
		lives++;
		if (st == -1 || (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) &&
				 !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))) {
			printf("# worker %ld: status %#x\n", (long)slot[i], st);
			if (st == -1)
				kill(slot[i], SIGKILL);
			bad++;
		}
	}
	tr_note("%ld lives, %u sends", lives, board->sends);
	assert_int_equal(bad, 0);
	assert_true(board->sends > 0);
	pid = fk_daemon_pid(m);
	assert_int_equal(fkt_objects(m), 0);
	fk_disconnect(m);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

int main(int argc, char **argv)
{
	char scratch[PATH_MAX], err[512];

	fkt_setup("t5830");
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (board == MAP_FAILED)
		fkt_die("mmap: %s", strerror(errno));
	memset(board, 0, sizeof(*board));
	snprintf(xfile, sizeof(xfile), "%s/xrcd-file", fkt_scratch);
	if (fp_env_setup(NULL, getenv("IBVCT_PROVIDER"), fkt_scratch, scratch,
			 sizeof(scratch), err, sizeof(err)))
		fkt_die("fp_env_setup: %s", err);
	return fkt_run(argc, argv);
}
