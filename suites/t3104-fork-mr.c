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
static void fork_init_is_not_needed_on_a_copy_on_fork_kernel(struct th_ctx *t)
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
static void child_copy_of_a_registered_buffer_is_private_both_ways(struct th_ctx *t)
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

static void parent_region_keeps_working_for_remote_write_and_read_after_fork(struct th_ctx *t)
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

static const struct th_test tests[] = {
	TH_TEST(fork_init_is_not_needed_on_a_copy_on_fork_kernel, "FORK-01", TH_NO_CTX),
	TH_TEST(child_copy_of_a_registered_buffer_is_private_both_ways, "FORK-02", 0),
	TH_TEST(parent_region_keeps_working_for_remote_write_and_read_after_fork, "FORK-03",
		TH_NO_CTX),
};

int main(int argc, char **argv)
{
	return th_main(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
