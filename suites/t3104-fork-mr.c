/* SPDX-License-Identifier: MIT */
/*
 * t3104: registered memory and fork() (FORK-). On a kernel that copies
 * pinned pages at fork (linux v6.1 mm/memory.c: copy_present_pte asks
 * page_needs_cow_for_dma and gives the child its own copy through
 * copy_present_page, the parent keeping the pinned page), rdma-core 44
 * answers that fork protection is not needed (libibverbs/memory.c:178
 * ibv_is_fork_initialized, from the kernel's netlink attribute
 * RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, ibdev_nl.c:243); a child's copy of a
 * registered buffer is its own both ways, and the parent's region goes on
 * working for remote WRITE and READ while the child lives and after.
 *
 * The child of fork() only reads and writes memory (no verb: a child may
 * not use its parent's context); the remote requester is a peer that
 * opens the device itself, started before the test's process touches a
 * verb. Every wait is bounded by the load-stretched clock.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th.h"

#define BUF_LEN		8192
#define LIMIT_MS	10000
#define ACC_ALL		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

enum { MSG_READY = 0x46524b31, MSG_GO, MSG_DONE };

/* Every byte of [p, p + len) is c: the first that is not, or len. */
static size_t all_diff(const unsigned char *p, size_t len, unsigned char c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			break;
	return i;
}

static unsigned char *buf_new(void)
{
	unsigned char *b = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	TR_ASSERT(b != MAP_FAILED);
	return b;
}

/* A forked child that holds its copy of buf: told by one pipe when to do
 * its next step, it answers on the other. */
struct kid {
	pid_t pid;
	int to, from;
};

/* The child's steps, each on a byte from the parent:
 *   'c' check that its copy is all `arg`, 'w' write `arg` all over it,
 *   'q' quit. It answers each with 'k'. */
static void kid_main(unsigned char *buf, int in, int out)
{
	unsigned char cmd[2], k = 'k';
	size_t d;

	while (read(in, cmd, 2) == 2 && cmd[0] != 'q') {
		if (cmd[0] == 'c') {
			d = all_diff(buf, BUF_LEN, cmd[1]);
			TR_EXPECT_MSG(d == BUF_LEN, "child: byte %zu of its copy is %#x, want %#x",
				      d, d < BUF_LEN ? buf[d] : 0, cmd[1]);
		} else if (cmd[0] == 'w') {
			memset(buf, cmd[1], BUF_LEN);
		}
		TR_ASSERT(write(out, &k, 1) == 1);
	}
	_exit(0);
}

static void kid_start(struct kid *k, unsigned char *buf)
{
	int a[2], b[2];

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	k->pid = tr_fork();
	assert_true(k->pid >= 0);
	if (k->pid == 0) {
		close(a[1]);
		close(b[0]);
		kid_main(buf, a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	k->to = a[1];
	k->from = b[0];
}

static void kid_do(struct kid *k, char cmd, unsigned char arg)
{
	unsigned char m[2] = { (unsigned char)cmd, arg }, ans = 0;

	assert_int_equal(write(k->to, m, 2), 2);
	assert_int_equal(read(k->from, &ans, 1), 1);
	assert_int_equal(ans, 'k');
}

static void kid_end(struct kid *k)
{
	unsigned char m[2] = { 'q', 0 };
	int st;

	assert_int_equal(write(k->to, m, 2), 2);
	assert_int_equal(waitpid(k->pid, &st, 0), k->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(k->to);
	close(k->from);
}

/* ---- FORK-01 ---------------------------------------------------------------- */
TH_TEST(fork_init_is_not_needed_on_a_copy_on_fork_kernel, "FORK-01", TH_NO_CTX)
{
	enum ibv_fork_status before, after;
	int ret;

	(void)t;
	/* before any verb of this process (a TH_NO_CTX test) */
	before = ibv_is_fork_initialized();
	ret = ibv_fork_init();
	after = ibv_is_fork_initialized();
	th_note("ibv_is_fork_initialized: %d before ibv_fork_init, which returned %d, %d after",
		before, ret, after);
	assert_int_equal(before, IBV_FORK_UNNEEDED);
	assert_int_equal(ret, 0);
	assert_int_equal(after, IBV_FORK_UNNEEDED);
}

/* ---- FORK-02 ---------------------------------------------------------------- */
TH_TEST(child_copy_of_a_registered_buffer_is_private_both_ways, "FORK-02", 0)
{
	unsigned char *buf = buf_new();
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_mr *mr;
	struct kid k;
	size_t d;

	assert_non_null(pd);
	memset(buf, 'P', BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);
	assert_non_null(mr);
	kid_start(&k, buf);
	kid_do(&k, 'c', 'P');		/* the child sees what was there at fork */
	kid_do(&k, 'w', 'C');		/* and writes its copy */
	d = all_diff(buf, BUF_LEN, 'P');
	if (d != BUF_LEN)
		th_fail("parent: byte %zu is %#x after the child wrote its copy", d, buf[d]);
	memset(buf, 'Q', BUF_LEN);	/* the parent writes its own */
	kid_do(&k, 'c', 'C');		/* the child's copy keeps the child's */
	kid_end(&k);
	assert_int_equal(all_diff(buf, BUF_LEN, 'Q'), BUF_LEN);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(munmap(buf, BUF_LEN), 0);
}

/* ---- FORK-03 ---------------------------------------------------------------- */
struct req_arg {
	uint8_t port;
};

static int req_op(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		  enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = BUF_LEN, .lkey = mr->lkey };
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	if (!tf_poll_for(cq, &wc, LIMIT_MS))
		return -1;
	return wc.status;
}

/* The remote requester: connects to the region's owner, then on each GO
 * WRITEs its buffer (the byte it is told) to the region and READs the
 * region back, answering with the first byte READ and whether all of it
 * was that byte. */
static void requester_peer(struct th_peer *self, void *arg)
{
	const struct req_arg *a = arg;
	struct ibv_context *ctx = th_open();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	unsigned char *buf = buf_new();
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint64_t raddr;
	uint32_t rkey, qpn, m;
	int st;

	TR_ASSERT(pd && cq);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);
	TR_ASSERT(mr);
	qp = th_rc_qp(pd, cq, IBV_QPT_RC);
	TR_ASSERT(qp);
	th_send(self, qp->qp_num);
	qpn = th_recv(self);
	rkey = th_recv(self);
	raddr = th_recv(self);
	raddr |= (uint64_t)th_recv(self) << 32;
	TR_ASSERT(tf_qp_connect(qp, a->port, qpn) == 0);
	th_send(self, MSG_READY);
	while ((m = th_recv(self)) != MSG_DONE) {
		memset(buf, (int)m, BUF_LEN);
		st = req_op(qp, cq, mr, IBV_WR_RDMA_WRITE, raddr, rkey);
		TR_EXPECT_MSG(st == IBV_WC_SUCCESS, "WRITE to the parent's region: %d", st);
		memset(buf, 0, BUF_LEN);
		st = req_op(qp, cq, mr, IBV_WR_RDMA_READ, raddr, rkey);
		TR_EXPECT_MSG(st == IBV_WC_SUCCESS, "READ of the parent's region: %d", st);
		th_send(self, buf[0]);
		th_send(self, all_diff(buf, BUF_LEN, buf[0]) == BUF_LEN);
	}
	TR_EXPECT(ibv_destroy_qp(qp) == 0);
	TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

/* The requester WRITEs c into the parent's region and READs it back. */
static void remote_write_read(struct th_peer *p, unsigned char *buf, unsigned char c)
{
	size_t d;

	th_send(p, c);
	if (th_recv(p) != c || th_recv(p) != 1)
		th_fail("the requester READ back something else than its WRITE of %#x", c);
	d = all_diff(buf, BUF_LEN, c);
	if (d != BUF_LEN)
		th_fail("parent: byte %zu of the region is %#x, the remote WRITE put %#x", d,
			buf[d], c);
}

TH_TEST(parent_region_keeps_working_for_remote_write_and_read_after_fork, "FORK-03", TH_NO_CTX)
{
	struct req_arg a = { .port = t->port };
	unsigned char *buf;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct th_peer p;
	struct kid k;

	th_peer_start(&p, requester_peer, &a);	/* before any verb of this process */
	t->ctx = th_open();
	pd = ibv_alloc_pd(t->ctx);
	cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	buf = buf_new();
	memset(buf, 'P', BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);
	assert_non_null(mr);
	qp = th_rc_qp(pd, cq, IBV_QPT_RC);
	assert_non_null(qp);
	assert_int_equal(tf_qp_connect(qp, t->port, th_recv(&p)), 0);
	th_send(&p, qp->qp_num);
	th_send(&p, mr->rkey);
	th_send(&p, (uint32_t)(uintptr_t)buf);
	th_send(&p, (uint32_t)((uint64_t)(uintptr_t)buf >> 32));
	assert_int_equal(th_recv(&p), MSG_READY);

	remote_write_read(&p, buf, 'A');	/* before any fork */
	kid_start(&k, buf);
	kid_do(&k, 'c', 'A');
	remote_write_read(&p, buf, 'B');	/* the child lives, holding its copy */
	kid_do(&k, 'c', 'A');			/* which the WRITE did not reach */
	kid_do(&k, 'w', 'C');			/* the child writes its copy */
	remote_write_read(&p, buf, 'D');	/* the READ sees the parent's, not 'C' */
	kid_do(&k, 'c', 'C');
	memset(buf, 'E', BUF_LEN);		/* the parent writes: the child sees none of it */
	kid_do(&k, 'c', 'C');
	kid_end(&k);
	remote_write_read(&p, buf, 'F');	/* and after the child is gone */
	th_send(&p, MSG_DONE);
	assert_int_equal(th_peer_wait(&p), 0);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(munmap(buf, BUF_LEN), 0);
}

/* ---- FORK-04..08: ibv_fork_init's protection, as the release has it ------------ */
/*
 * rdma-core v44.0 libibverbs/memory.c:125 ibv_fork_init does not look at
 * the kernel: once it has run, ibv_reg_mr MADV_DONTFORKs the region's pages
 * (verbs.c:320), so a child of fork() has no mapping there and dies of
 * SIGSEGV touching one, while the parent's region goes on working. Since
 * v51 (5a11b68ca, memory.c:137 in v56.1) it first asks the kernel: on one
 * that copies pinned pages at fork (IBV_FORK_UNNEEDED, FORK-01) it returns
 * 0 and turns nothing on, before or after a registration, so nothing is
 * ever marked and RDMAV_FORK_SAFE changes nothing. Which of the two this
 * library does is learned at run time (fork_init_protects, below), never
 * from a version string; each test then checks that behaviour whole.
 * Each test is a process of its own (fork_init is process-wide and once).
 */

/* A child touches p (reads one byte): how it ended, as a wait status. The
 * child puts SIGSEGV back to its default first (a sanitizer's handler would
 * turn the signal into an exit). */
static int touch_status(const unsigned char *p)
{
	int st = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGSEGV, &sa, NULL);
		_exit(*(const volatile unsigned char *)p == 0xee ? 3 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static int kid_touch(const unsigned char *p)
{
	int st = touch_status(p);

	assert_true(st != -1);
	return st;
}

static bool st_segv(int st)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static bool st_ok(int st)
{
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static const char *st_str(int st, char *b, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(b, len, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(b, len, "exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return b;
}

#define EXPECT_SEGV(p, what) do {						\
	char b_[64]; int s_ = kid_touch(p);					\
	if (!st_segv(s_))							\
		th_fail("a child touching %s: %s, want SIGSEGV (MADV_DONTFORK)",	\
			what, st_str(s_, b_, sizeof(b_)));			\
} while (0)
#define EXPECT_TOUCH_OK(p, what) do {						\
	char b_[64]; int s_ = kid_touch(p);					\
	if (!st_ok(s_))								\
		th_fail("a child touching %s: %s, want exit 0 (the page forked)",	\
			what, st_str(s_, b_, sizeof(b_)));			\
} while (0)
/* A registered page as ibv_fork_init left it: gone from a child where it
 * protects, the child's own copy where it is a no-op. */
#define EXPECT_REGISTERED(prot, p, what) do {					\
	if (prot)								\
		EXPECT_SEGV(p, what);						\
	else									\
		EXPECT_TOUCH_OK(p, what);					\
} while (0)

/*
 * The probe: does this library's ibv_fork_init turn fork protection on
 * here? Asked in a child of its own (the answer changes the process for
 * good), before the test's process does anything of the kind, by one of two
 * effects, so that a test never asks the effect it checks:
 *   AFTER_REG  a region registered first, then ibv_fork_init: EINVAL (too
 *              late: it protects) or 0 (a no-op);
 *   CHILD      ibv_fork_init, a region registered, a grandchild touching
 *              it: SIGSEGV (it protects) or exit 0.
 * Any other answer fails the test that asked, with the probe's words.
 */
enum probe { AFTER_REG, CHILD };

static bool fork_init_protects(struct th_ctx *t, enum probe how)
{
	int st = -1, code, fi = -1;
	pid_t pid = tr_fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		unsigned char *buf = buf_new();
		struct ibv_context *ctx;
		struct ibv_pd *pd;

		if (how == CHILD)
			fi = ibv_fork_init();
		ctx = th_open();
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		TR_ASSERT_MSG(pd && ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL),
			      "probe: no registered region (errno %d)", errno);
		if (how == AFTER_REG) {
			fi = ibv_fork_init();
			_exit(fi == EINVAL ? 10 : fi == 0 ? 11 : 20 + fi);
		}
		TR_ASSERT_MSG(fi == 0, "probe: ibv_fork_init before any registration: %d", fi);
		st = touch_status(buf);
		_exit(st_segv(st) ? 10 : st_ok(st) ? 11 : 3);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (code != 10 && code != 11)
		th_fail("the probe of ibv_fork_init (%s) gave no answer: exit %d",
			how == AFTER_REG ? "after a registration" : "a child's registered page",
			code);
	th_note("ibv_fork_init %s (learned from %s)",
		code == 10 ? "protects registered pages (rdma-core 44's)"
			   : "turns nothing on here (rdma-core >= 51 on a copy-on-fork kernel)",
		how == AFTER_REG ? "its answer after a registration" : "a child's registered page");
	return code == 10;
}

TH_TEST(fork_init_after_a_registration_is_einval, "FORK-04", TH_NO_CTX)
{
	bool prot = fork_init_protects(t, CHILD);
	unsigned char *buf = buf_new();
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	int ret, want = prot ? EINVAL : 0;

	t->ctx = th_open();
	pd = ibv_alloc_pd(t->ctx);
	assert_non_null(pd);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);
	assert_non_null(mr);
	ret = ibv_fork_init();
	th_note("ibv_fork_init after a registration: %d", ret);
	assert_int_equal(ret, want);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_fork_init(), want);	/* too late for good, or still nothing */
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	EXPECT_TOUCH_OK(buf, "a page registered without ibv_fork_init");
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(munmap(buf, BUF_LEN), 0);
}

TH_TEST(after_fork_init_a_child_has_no_registered_page_and_the_region_works,
	"FORK-01 FORK-04 FORK-05 FORK-06", TH_NO_CTX)
{
	struct req_arg a = { .port = t->port };
	bool prot = fork_init_protects(t, AFTER_REG);
	unsigned char *buf, *other;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct th_peer p;

	th_peer_start(&p, requester_peer, &a);	/* before any verb of this process */
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_fork_init(), 0);		/* once is enough, twice is 0 */
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	t->ctx = th_open();
	pd = ibv_alloc_pd(t->ctx);
	cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	buf = buf_new();
	other = buf_new();
	memset(buf, 'P', BUF_LEN);
	memset(other, 'O', BUF_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);
	assert_non_null(mr);
	assert_int_equal(ibv_fork_init(), 0);		/* after a registration too */
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	qp = th_rc_qp(pd, cq, IBV_QPT_RC);
	assert_non_null(qp);
	assert_int_equal(tf_qp_connect(qp, t->port, th_recv(&p)), 0);
	th_send(&p, qp->qp_num);
	th_send(&p, mr->rkey);
	th_send(&p, (uint32_t)(uintptr_t)buf);
	th_send(&p, (uint32_t)((uint64_t)(uintptr_t)buf >> 32));
	assert_int_equal(th_recv(&p), MSG_READY);

	remote_write_read(&p, buf, 'A');
	EXPECT_REGISTERED(prot, buf, "the first page of a registered region");
	EXPECT_REGISTERED(prot, buf + BUF_LEN - 1, "the last byte of a registered region");
	EXPECT_TOUCH_OK(other, "a page never registered");
	remote_write_read(&p, buf, 'B');	/* the parent's region works on */
	memset(buf, 'E', BUF_LEN);
	remote_write_read(&p, buf, 'F');
	th_send(&p, MSG_DONE);
	assert_int_equal(th_peer_wait(&p), 0);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	EXPECT_TOUCH_OK(buf, "a page after its region's dereg");	/* MADV_DOFORK */
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(munmap(buf, BUF_LEN), 0);
	assert_int_equal(munmap(other, BUF_LEN), 0);
}

TH_TEST(two_regions_on_one_page_keep_it_dontfork_until_both_go, "FORK-05 FORK-06", TH_NO_CTX)
{
	bool prot = fork_init_protects(t, AFTER_REG);
	unsigned char *buf = buf_new();
	struct ibv_mr *m1, *m2, *m3;
	struct ibv_pd *pd;

	assert_int_equal(ibv_fork_init(), 0);
	t->ctx = th_open();
	pd = ibv_alloc_pd(t->ctx);
	assert_non_null(pd);
	m1 = ibv_reg_mr(pd, buf, 64, ACC_ALL);
	m2 = ibv_reg_mr(pd, buf + 128, 64, ACC_ALL);	/* the same page */
	m3 = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);	/* that page and the next */
	assert_non_null(m1);
	assert_non_null(m2);
	assert_non_null(m3);
	EXPECT_REGISTERED(prot, buf, "a page of three regions");
	assert_int_equal(ibv_dereg_mr(m1), 0);
	EXPECT_REGISTERED(prot, buf, "a page of two regions, after one's dereg");
	assert_int_equal(ibv_dereg_mr(m2), 0);
	/* the third region (two pages) still holds the first page */
	EXPECT_REGISTERED(prot, buf, "a page still registered once");
	EXPECT_REGISTERED(prot, buf + BUF_LEN - 1, "the last byte of a registered region");
	assert_int_equal(ibv_dereg_mr(m3), 0);
	EXPECT_TOUCH_OK(buf, "a page after the dereg of all its regions");
	EXPECT_TOUCH_OK(buf + BUF_LEN - 1, "the last page after the dereg of its region");
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(munmap(buf, BUF_LEN), 0);
}

/*
 * rdma-core v44.0 libibverbs/verbs.c:449-493: a new translation DONTFORKs
 * the new range before the driver's rereg_mr and DOFORKs the old one after
 * it; when the driver fails, the new range is DOFORKed again and the old
 * stays (IBV_REREG_MR_ERR_CMD). A driver without a rereg_mr op fails it so:
 * rdma-core 44's rxe provider has none (providers/rxe/rxe.c:1803
 * rxe_ctx_ops; Linux 6.1's rxe has no rereg_user_mr either), and
 * libibverbs' stub answers EOPNOTSUPP (libibverbs/dummy_ops.c:465
 * rereg_mr). mlx5 and mlx4 have the op (providers/mlx5/mlx5.c:104,
 * providers/mlx4/mlx4.c:91): there a failed rereg is a failure. Where
 * ibv_fork_init turned nothing on, no range is ever marked.
 */
TH_TEST(rereg_translation_moves_the_dontfork, "FORK-08", TH_NO_CTX)
{
	bool prot = fork_init_protects(t, AFTER_REG);
	unsigned char *a = buf_new(), *b = buf_new();
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	int ret, err;

	assert_int_equal(ibv_fork_init(), 0);
	t->ctx = th_open();
	pd = ibv_alloc_pd(t->ctx);
	assert_non_null(pd);
	mr = ibv_reg_mr(pd, a, BUF_LEN, ACC_ALL);
	assert_non_null(mr);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, BUF_LEN, 0);
	err = ret ? errno : 0;
	th_note("ibv_rereg_mr to a new translation: %d (errno %d)", ret, err);
	if (ret == 0) {
		EXPECT_TOUCH_OK(a, "the old range of a region moved by rereg");
		EXPECT_REGISTERED(prot, b, "the new range of a region moved by rereg");
	} else {
		/* only the stub of a driver without the op refuses it */
		if (!strcmp(th_driver(), "mlx5") || !strcmp(th_driver(), "mlx4"))
			th_fail("ibv_rereg_mr failed (%d, %s) on driver %s, which has the op",
				ret, strerror(err), th_driver());
		if (err != EOPNOTSUPP)
			th_fail("ibv_rereg_mr failed (%d, %s), not as the stub of a driver "
				"without the op (EOPNOTSUPP)", ret, strerror(err));
		assert_int_equal(ret, IBV_REREG_MR_ERR_CMD);
		EXPECT_REGISTERED(prot, a, "the range of a region whose rereg failed");
		EXPECT_TOUCH_OK(b, "the range a failed rereg asked for");
	}
	assert_int_equal(ibv_dereg_mr(mr), 0);
	EXPECT_TOUCH_OK(a, "the first range after the dereg");
	EXPECT_TOUCH_OK(b, "the second range after the dereg");
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(munmap(a, BUF_LEN), 0);
	assert_int_equal(munmap(b, BUF_LEN), 0);
}

/*
 * rdma-core v44.0 libibverbs/init.c:668: RDMAV_FORK_SAFE or IBV_FORK_SAFE
 * set (and not "0", util/util.c:50 check_env) make the first device list
 * call ibv_fork_init (since v51 that call turns nothing on where it would
 * not anyway). Checked in a program exec'd with that environment (this
 * one, told by T3104_FORK_SAFE_DEV which device to open and by
 * T3104_FORK_PROTECTS what the probe learned): it exits 0 when ibv_fork_init
 * after the registration and a child touching the registered page answer
 * as the environment and the library's ibv_fork_init have it, 10 + n at
 * the first check n that fails.
 */
static int fork_safe_program(const char *dev)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	unsigned char *buf;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	const char *w = getenv("T3104_FORK_SAFE_WANT");
	const char *p = getenv("T3104_FORK_PROTECTS");
	bool want = !w || strcmp(w, "0");
	bool prot = !p || strcmp(p, "0");
	int n = 0, i, st;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		return 11;
	pd = ibv_alloc_pd(ctx);
	buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || buf == MAP_FAILED)
		return 12;
	mr = ibv_reg_mr(pd, buf, BUF_LEN, ACC_ALL);
	if (!mr)
		return 13;
	/* protected from the first device list on: 0; too late: EINVAL; a
	 * no-op library: 0 either way */
	if (ibv_fork_init() != (want || !prot ? 0 : EINVAL))
		return 14;
	if (ibv_is_fork_initialized() != IBV_FORK_UNNEEDED)
		return 15;
	st = kid_touch(buf);
	if (want && prot ? !st_segv(st) : !st_ok(st))
		return 16;
	if (ibv_dereg_mr(mr))
		return 17;
	if (!st_ok(kid_touch(buf)))
		return 18;
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

static void exec_with(struct th_ctx *t, const char *var, const char *val, const char *want,
		      bool prot)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;
	int st;

	assert_true(n > 0);
	self[n] = 0;
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsetenv("RDMAV_FORK_SAFE");
		unsetenv("IBV_FORK_SAFE");
		setenv(var, val, 1);
		setenv("T3104_FORK_SAFE_DEV", t->dev_name, 1);
		setenv("T3104_FORK_SAFE_WANT", want, 1);
		setenv("T3104_FORK_PROTECTS", prot ? "1" : "0", 1);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!st_ok(st)) {
		char b[64];

		th_fail("the program exec'd with %s=%s: %s, want exit 0 (exit 10 + n: its "
			"check n failed, fork_safe_program)", var, val, st_str(st, b, sizeof(b)));
	}
	th_note("%s=%s: exit %d", var, val, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

TH_TEST(fork_safe_in_the_environment_calls_fork_init, "FORK-07", 0)
{
	bool prot = fork_init_protects(t, AFTER_REG);

	exec_with(t, "RDMAV_FORK_SAFE", "1", "1", prot);
	exec_with(t, "IBV_FORK_SAFE", "yes", "1", prot);
	exec_with(t, "RDMAV_FORK_SAFE", "0", "0", prot);
}

int main(int argc, char **argv)
{
	const char *dev = getenv("T3104_FORK_SAFE_DEV");

	if (dev)		/* the program exec'd by FORK-07 */
		return fork_safe_program(dev);
	return th_main(argc, argv);
}
