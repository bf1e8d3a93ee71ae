/* SPDX-License-Identifier: MIT */
/*
 * t3102: one-sided operations at a target that runs no code (RDMA-): an
 * RDMA WRITE, an RDMA READ and the atomics of an RC QP complete, and land,
 * while the target process is stopped (SIGSTOP: none of its threads runs)
 * or blocked in read(), as on an HCA, whose responder needs no CPU of the
 * target (on rxe, the kernel's: linux v6.1 drivers/infiniband/sw/rxe/
 * rxe_resp.c). Atomics return the original value and are atomic between
 * two initiators; a WRITE posted after a SEND is not placed before the
 * SEND's data; a bad key, a missing access and a range outside the region
 * end in the requester's IBV_WC_REM_ACCESS_ERR and leave the target's
 * memory alone, and an atomic at an address that is not 8-byte aligned is
 * refused (at post, or by the responder's invalid-request NAK).
 *
 * Each test is three or fewer real processes: the target (a peer that
 * opens the device itself, registers its buffer and connects one RC QP per
 * initiator), the test's own process as the requester, and for RDMA-04 a
 * second requester. Keys, addresses and QP numbers travel over the peers'
 * pipes; the target checks its own memory after the operations, when the
 * requester tells it what must be there (CHK_ messages). Every wait is
 * bounded by the load-stretched clock (tr_clock.h, tf_poll_for).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th.h"
#include "tr_clock.h"

#define BUF_LEN		8192		/* each side's registered buffer (2 pages) */
#define LIMIT_MS	10000		/* a completion's budget, stretched (tf_poll_for) */
#define NQP_MAX		2
#define NADD		1000		/* fetch-and-adds of each initiator (RDMA-04) */

#define ACC_ALL		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* Requester -> target, after the operations. */
enum { MSG_READY = 0x52454459, CHK_PATTERN = 1, CHK_U64, CHK_RECVS, CHK_END };

/* The byte at position i of a pattern seeded by seed. */
static unsigned char pat(unsigned seed, size_t i)
{
	return (unsigned char)(seed + i * 7 + (i >> 8));
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* The 8 bytes of the pattern at position i, as a word in this host's order. */
static uint64_t pat_u64(unsigned seed, size_t i)
{
	unsigned char b[8];
	uint64_t v;
	int k;

	for (k = 0; k < 8; k++)
		b[k] = pat(seed, i + (size_t)k);
	memcpy(&v, b, 8);
	return v;
}

/* The first position where p differs from the pattern, or len. */
static size_t pattern_diff(const unsigned char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			break;
	return i;
}

/* ---- one side: its device, PD, CQ, RC QPs and registered buffer ---------- */
struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[NQP_MAX];
	int nqp;
	struct ibv_mr *mr;
	unsigned char *buf;	/* BUF_LEN bytes of private anonymous memory */
};

/* TR_ checks: used in the peers and in the test's own process alike. */
static void end_open(struct end *e, unsigned mr_access, int nqp)
{
	int i;

	memset(e, 0, sizeof(*e));
	e->ctx = th_open();
	e->pd = ibv_alloc_pd(e->ctx);
	TR_ASSERT(e->pd);
	e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	TR_ASSERT(e->cq);
	e->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TR_ASSERT(e->buf != MAP_FAILED);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN, mr_access);
	TR_ASSERT_MSG(e->mr, "ibv_reg_mr: %s", strerror(errno));
	e->nqp = nqp;
	for (i = 0; i < nqp; i++) {
		e->qp[i] = th_rc_qp(e->pd, e->cq, IBV_QPT_RC);
		TR_ASSERT_MSG(e->qp[i], "create_qp: %s", strerror(errno));
	}
}

static void end_close(struct end *e)
{
	int i;

	for (i = 0; i < e->nqp; i++)
		TR_EXPECT(ibv_destroy_qp(e->qp[i]) == 0);
	TR_EXPECT(ibv_dereg_mr(e->mr) == 0);
	TR_EXPECT(munmap(e->buf, BUF_LEN) == 0);
	TR_EXPECT(ibv_destroy_cq(e->cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(e->pd) == 0);
	TR_EXPECT(ibv_close_device(e->ctx) == 0);
}

/* What a requester knows of the target. */
struct remote {
	uint32_t qpn[NQP_MAX];
	uint32_t rkey;
	uint64_t addr;
};

static void send_u64(struct th_peer *p, uint64_t v)
{
	th_send(p, (uint32_t)v);
	th_send(p, (uint32_t)(v >> 32));
}

static uint64_t recv_u64(struct th_peer *p)
{
	uint64_t lo = th_recv(p);

	return lo | (uint64_t)th_recv(p) << 32;
}

/* ---- the target ----------------------------------------------------------- */
struct tgt_arg {
	uint8_t port;
	unsigned mr_access;
	int nqp;
	unsigned seed;		/* its buffer's pattern before any operation */
	int nrecv;		/* receives posted at RECV_OFF (RDMA-05) */
	int spin_flag;		/* wait for the flag at FLAG_OFF by reading memory */
};

#define RECV_OFF	4096
#define RECV_LEN	256
#define FLAG_OFF	(BUF_LEN - 8)

/* Wait, by reading memory only (no verb), until the word at p is not 0;
 * false when the stretched budget ran out. */
static bool spin_for_flag(volatile uint64_t *p)
{
	struct tr_clock c;
	unsigned i = 0;

	tr_clock_start(&c, LIMIT_MS * tr_timeout_mult());
	while (!__atomic_load_n(p, __ATOMIC_ACQUIRE)) {
		if (++i % 1024 == 0 && !tr_clock_tick(&c))
			return false;
		sched_yield();
	}
	return true;
}

static void target_checks(struct th_peer *self, struct end *e, const struct tgt_arg *a)
{
	struct ibv_wc wc;
	uint32_t m, off, len, seed, base;
	uint64_t want, got;
	size_t d;
	int i;

	while ((m = th_recv(self)) != CHK_END) {
		switch (m) {
		case CHK_PATTERN:
			off = th_recv(self);
			len = th_recv(self);
			seed = th_recv(self);
			base = th_recv(self);
			TR_ASSERT(off <= BUF_LEN && len <= BUF_LEN - off && base <= BUF_LEN);
			for (d = 0; d < len; d++)
				if (e->buf[off + d] != pat(seed, base + d))
					break;
			TR_EXPECT_MSG(d == len, "target byte %zu of [%u, +%u) is %#x, want %#x",
				      off + d, off, len, d < len ? e->buf[off + d] : 0,
				      pat(seed, base + d));
			break;
		case CHK_U64:
			off = th_recv(self);
			want = recv_u64(self);
			TR_ASSERT(off % 8 == 0 && off < BUF_LEN);
			memcpy(&got, e->buf + off, 8);
			TR_EXPECT_MSG(got == want, "target word at %u is %#llx, want %#llx", off,
				      (unsigned long long)got, (unsigned long long)want);
			break;
		case CHK_RECVS:
			/* the receives completed, in order, each with its message */
			for (i = 0; i < a->nrecv; i++) {
				TR_ASSERT_MSG(tf_poll_for(e->cq, &wc, LIMIT_MS),
					      "receive %d never completed", i);
				TR_EXPECT(wc.status == IBV_WC_SUCCESS);
				TR_EXPECT(wc.opcode == IBV_WC_RECV);
				TR_EXPECT(wc.wr_id == (uint64_t)i);
				TR_EXPECT(wc.byte_len == RECV_LEN);
			}
			break;
		default:
			TR_ASSERT_MSG(0, "unknown check %#x", m);
		}
	}
}

static void target_peer(struct th_peer *self, void *arg)
{
	const struct tgt_arg *a = arg;
	struct ibv_recv_wr rr, *bad;
	struct ibv_sge sge;
	struct end e;
	uint32_t qpn;
	int i;

	end_open(&e, a->mr_access, a->nqp);
	fill(e.buf, BUF_LEN, a->seed);
	if (a->spin_flag)
		memset(e.buf + FLAG_OFF, 0, 8);
	for (i = 0; i < a->nqp; i++)
		th_send(self, e.qp[i]->qp_num);
	th_send(self, e.mr->rkey);
	send_u64(self, (uintptr_t)e.buf);
	for (i = 0; i < a->nqp; i++) {
		qpn = th_recv(self);
		TR_ASSERT_MSG(tf_qp_connect(e.qp[i], a->port, qpn) == 0, "connect QP %d", i);
	}
	for (i = 0; i < a->nrecv; i++) {
		sge.addr = (uintptr_t)e.buf + RECV_OFF + (uint64_t)i * RECV_LEN;
		sge.length = RECV_LEN;
		sge.lkey = e.mr->lkey;
		memset(&rr, 0, sizeof(rr));
		rr.wr_id = (uint64_t)i;
		rr.sg_list = &sge;
		rr.num_sge = 1;
		TR_ASSERT(ibv_post_recv(e.qp[0], &rr, &bad) == 0);
	}
	th_send(self, MSG_READY);
	if (a->spin_flag) {
		/* RDMA-05: the flag the WRITE sets, then the SENDs' data, read
		 * from memory without a verb call in between */
		bool seen = spin_for_flag((volatile uint64_t *)(e.buf + FLAG_OFF));

		TR_EXPECT_MSG(seen, "the WRITE's flag never came");
		for (i = 0; seen && i < a->nrecv; i++) {
			size_t d = pattern_diff(e.buf + RECV_OFF + (size_t)i * RECV_LEN, RECV_LEN,
						0x40 + (unsigned)i);

			TR_EXPECT_MSG(d == RECV_LEN, "the WRITE after SEND %d was placed before "
				      "its data (byte %zu differs)", i, d);
		}
		th_send(self, seen);
	}
	/* from here on blocked in read() until the requester says what to check */
	target_checks(self, &e, a);
	end_close(&e);
}

/* Start the target; fill r from what it says; connect the requester's QPs
 * (qps[i] to the target's QP i) and wait until the target is ready. */
static void target_start(struct th_peer *p, struct tgt_arg *a, struct remote *r)
{
	int i;

	th_peer_start(p, target_peer, a);
	for (i = 0; i < a->nqp; i++)
		r->qpn[i] = th_recv(p);
	r->rkey = th_recv(p);
	r->addr = recv_u64(p);
}

static void target_connect(struct th_peer *p, const struct tgt_arg *a, const struct remote *r,
			   struct ibv_qp *qp, uint8_t port, const uint32_t *other_qpn)
{
	int i;

	for (i = 0; i < a->nqp; i++)
		th_send(p, i == 0 ? qp->qp_num : other_qpn[i - 1]);
	assert_int_equal(tf_qp_connect(qp, port, r->qpn[0]), 0);
	assert_int_equal(th_recv(p), MSG_READY);
}

/* The target holds at [off, off + len) the pattern of seed from its position base. */
static void chk_pattern(struct th_peer *p, uint32_t off, uint32_t len, unsigned seed, uint32_t base)
{
	th_send(p, CHK_PATTERN);
	th_send(p, off);
	th_send(p, len);
	th_send(p, seed);
	th_send(p, base);
}

static void chk_u64(struct th_peer *p, uint32_t off, uint64_t v)
{
	th_send(p, CHK_U64);
	th_send(p, off);
	send_u64(p, v);
}

/* End the target: its checks are done, it tears down and exits 0. */
static void target_end(struct th_peer *p)
{
	th_send(p, CHK_END);
	assert_int_equal(th_peer_wait(p), 0);
}

/* Stop the target (every thread of it) and see it stopped. */
static void target_stop(struct th_peer *p)
{
	int st;

	assert_int_equal(kill(p->pid, SIGSTOP), 0);
	assert_int_equal(waitpid(p->pid, &st, WUNTRACED), p->pid);
	assert_true(WIFSTOPPED(st));
}

static void target_cont(struct th_peer *p)
{
	assert_int_equal(kill(p->pid, SIGCONT), 0);
}

/* ---- the requester's operations ------------------------------------------- */
#define NO_COMPLETION	(-1)

/* One signaled WR on qp with one SGE [laddr, len) of e's buffer; its
 * completion's status, or NO_COMPLETION when none came within the limit. */
static int op1(struct end *e, struct ibv_qp *qp, enum ibv_wr_opcode op, size_t loff, uint32_t len,
	       uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	static int none_came;
	struct ibv_wc wc;

	sge.addr = (uintptr_t)e->buf + loff;
	sge.length = len;
	sge.lkey = e->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x3102;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	/* after a completion that never came, the QP is stuck: the rest neither */
	if (none_came)
		return NO_COMPLETION;
	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	if (!tf_poll_for(e->cq, &wc, LIMIT_MS)) {
		none_came = 1;
		return NO_COMPLETION;
	}
	if (wc.wr_id != 0x3102)
		return -3;
	return wc.status;
}

static const char *st_name(int st)
{
	return st == NO_COMPLETION ? "no completion" : st == -2 ? "post failed" :
	       st == -3 ? "another WR's completion" : ibv_wc_status_str((enum ibv_wc_status)st);
}

#define assert_status(st, want) do { \
	int st_ = (st); \
	if (st_ != (int)(want)) \
		th_fail("%s:%d: %s, want %s", __FILE__, __LINE__, st_name(st_), \
			ibv_wc_status_str(want)); \
} while (0)

enum how { STOPPED, BLOCKED };

static const char *how_name(enum how how)
{
	return how == STOPPED ? "stopped (SIGSTOP)" : "blocked in read()";
}

/* ---- RDMA-01: WRITE ------------------------------------------------------- */
static void write_lands(struct th_ctx *t, enum how how)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 1, .seed = 0x11 };
	struct th_peer p;
	struct remote r;
	struct end e;
	int st1, st2;

	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	target_connect(&p, &a, &r, e.qp[0], t->port, NULL);
	fill(e.buf, BUF_LEN, 0x22);
	if (how == STOPPED)
		target_stop(&p);
	/* a whole page, and 1000 bytes at an odd offset across the page boundary */
	st1 = op1(&e, e.qp[0], IBV_WR_RDMA_WRITE, 0, 4096, r.addr, r.rkey, 0, 0);
	st2 = op1(&e, e.qp[0], IBV_WR_RDMA_WRITE, 4096, 1000, r.addr + 4000, r.rkey, 0, 0);
	if (how == STOPPED)
		target_cont(&p);
	th_note("target %s: WRITEs %s, %s", how_name(how), st_name(st1), st_name(st2));
	assert_status(st1, IBV_WC_SUCCESS);
	assert_status(st2, IBV_WC_SUCCESS);
	chk_pattern(&p, 0, 4000, 0x22, 0);
	chk_pattern(&p, 4000, 1000, 0x22, 4096);
	chk_pattern(&p, 5000, BUF_LEN - 5000, 0x11, 5000);
	target_end(&p);
	end_close(&e);
}

TH_TEST(write_completes_and_lands_at_a_stopped_target, "RDMA-01", TH_NO_CTX)
{
	write_lands(t, STOPPED);
}

TH_TEST(write_completes_and_lands_at_a_target_blocked_in_read, "RDMA-01", TH_NO_CTX)
{
	write_lands(t, BLOCKED);
}

/* ---- RDMA-02: READ -------------------------------------------------------- */
static void read_answers(struct th_ctx *t, enum how how)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 1, .seed = 0x33 };
	struct th_peer p;
	struct remote r;
	struct end e;
	int st1, st2, st3;
	size_t d1, d2;

	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	target_connect(&p, &a, &r, e.qp[0], t->port, NULL);
	memset(e.buf, 0, BUF_LEN);
	if (how == STOPPED)
		target_stop(&p);
	/* what the target wrote before it stopped */
	st1 = op1(&e, e.qp[0], IBV_WR_RDMA_READ, 0, BUF_LEN, r.addr, r.rkey, 0, 0);
	d1 = pattern_diff(e.buf, BUF_LEN, 0x33);
	/* what a WRITE just placed: a READ after it returns it */
	fill(e.buf, 512, 0x44);
	st2 = op1(&e, e.qp[0], IBV_WR_RDMA_WRITE, 0, 512, r.addr + 1024, r.rkey, 0, 0);
	memset(e.buf + 4096, 0, 512);
	st3 = op1(&e, e.qp[0], IBV_WR_RDMA_READ, 4096, 512, r.addr + 1024, r.rkey, 0, 0);
	d2 = pattern_diff(e.buf + 4096, 512, 0x44);
	if (how == STOPPED)
		target_cont(&p);
	th_note("target %s: READ %s, WRITE %s, READ %s", how_name(how), st_name(st1),
		st_name(st2), st_name(st3));
	assert_status(st1, IBV_WC_SUCCESS);
	if (d1 != BUF_LEN)
		th_fail("READ: byte %zu is not the target's", d1);
	assert_status(st2, IBV_WC_SUCCESS);
	assert_status(st3, IBV_WC_SUCCESS);
	if (d2 != 512)
		th_fail("READ after WRITE: byte %zu is not the WRITE's", d2);
	chk_pattern(&p, 1024, 512, 0x44, 0);
	chk_pattern(&p, 0, 1024, 0x33, 0);
	chk_pattern(&p, 1536, BUF_LEN - 1536, 0x33, 1536);
	target_end(&p);
	end_close(&e);
}

TH_TEST(read_returns_the_target_bytes_while_it_is_stopped, "RDMA-02", TH_NO_CTX)
{
	read_answers(t, STOPPED);
}

TH_TEST(read_returns_the_target_bytes_while_it_is_blocked_in_read, "RDMA-02", TH_NO_CTX)
{
	read_answers(t, BLOCKED);
}

/* ---- RDMA-03: atomics ----------------------------------------------------- */
#define WORD_OFF	2048

/*
 * A device that offers no atomics says so in atomic_cap, IBV_ATOMIC_NONE
 * (linux v6.1 drivers/infiniband/sw/siw/siw_verbs.c:134 siw_query_device;
 * hw/mlx5/main.c:655-675 get_atomic_caps, for a device whose firmware
 * cannot answer them in host order): a test that needs them is not
 * applicable there. Asked in the test's own process before any peer
 * starts, on a context of its own.
 */
static void need_atomics(const char *ids)
{
	struct ibv_context *ctx = th_open();
	struct ibv_device_attr da;

	assert_int_equal(ibv_query_device(ctx, &da), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
	if (da.atomic_cap == IBV_ATOMIC_NONE)
		th_skip("the device reports atomic_cap IBV_ATOMIC_NONE: it offers no atomics, "
			"which %s needs", ids);
}

static void atomics_run(struct th_ctx *t, enum how how)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 1, .seed = 0x55 };
	uint64_t orig[4], w0, raddr;
	struct th_peer p;
	struct remote r;
	struct end e;
	int st[4], i;

	need_atomics("RDMA-03");
	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	target_connect(&p, &a, &r, e.qp[0], t->port, NULL);
	raddr = r.addr + WORD_OFF;
	memset(e.buf, 0xee, BUF_LEN);
	w0 = pat_u64(0x55, WORD_OFF);
	if (how == STOPPED)
		target_stop(&p);
	/* a compare that matches swaps; one that does not leaves the word; an
	 * add adds; each returns the word as it was */
	st[0] = op1(&e, e.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, raddr, r.rkey, w0,
		    0x1122334455667788ull);
	st[1] = op1(&e, e.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 8, 8, raddr, r.rkey, w0,
		    0x9999999999999999ull);
	st[2] = op1(&e, e.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 16, 8, raddr, r.rkey,
		    0x0100000000000001ull, 0);
	st[3] = op1(&e, e.qp[0], IBV_WR_RDMA_READ, 24, 8, raddr, r.rkey, 0, 0);
	if (how == STOPPED)
		target_cont(&p);
	th_note("target %s: CMP_SWP %s, CMP_SWP %s, FETCH_ADD %s, READ %s", how_name(how),
		st_name(st[0]), st_name(st[1]), st_name(st[2]), st_name(st[3]));
	for (i = 0; i < 4; i++)
		assert_status(st[i], IBV_WC_SUCCESS);
	memcpy(orig, e.buf, sizeof(orig));
	assert_true(orig[0] == w0);			/* the original, swapped */
	assert_true(orig[1] == 0x1122334455667788ull);	/* the original, kept */
	assert_true(orig[2] == 0x1122334455667788ull);	/* the original, added to */
	assert_true(orig[3] == 0x1222334455667789ull);	/* what is there now */
	chk_u64(&p, WORD_OFF, 0x1222334455667789ull);
	chk_pattern(&p, 0, WORD_OFF, 0x55, 0);
	chk_pattern(&p, WORD_OFF + 8, 64, 0x55, WORD_OFF + 8);
	target_end(&p);
	end_close(&e);
}

TH_TEST(atomics_run_at_a_stopped_target_and_return_the_original, "RDMA-03", TH_NO_CTX)
{
	atomics_run(t, STOPPED);
}

TH_TEST(atomics_run_at_a_target_blocked_in_read, "RDMA-03", TH_NO_CTX)
{
	atomics_run(t, BLOCKED);
}

/* ---- RDMA-04: two initiators --------------------------------------------- */
struct ini_arg {
	uint8_t port;
};

/* The second initiator: gets the target's QP 1, rkey and address from the
 * test, connects, waits for GO, does NADD fetch-and-adds of 1 and sends
 * each original back. */
static void second_initiator(struct th_peer *self, void *arg)
{
	const struct ini_arg *ia = arg;
	uint64_t raddr, v;
	uint32_t qpn, rkey;
	struct end e;
	int i, st;

	end_open(&e, ACC_ALL, 1);
	th_send(self, e.qp[0]->qp_num);
	qpn = th_recv(self);
	rkey = th_recv(self);
	raddr = recv_u64(self);
	TR_ASSERT(tf_qp_connect(e.qp[0], ia->port, qpn) == 0);
	th_send(self, MSG_READY);
	TR_ASSERT(th_recv(self) == MSG_READY);	/* GO */
	for (i = 0; i < NADD; i++) {
		st = op1(&e, e.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, raddr, rkey, 1, 0);
		TR_ASSERT_MSG(st == IBV_WC_SUCCESS, "second initiator's add %d: %s", i, st_name(st));
		memcpy(&v, e.buf, 8);
		send_u64(self, v);
	}
	end_close(&e);
}

TH_TEST(fetch_add_from_two_initiators_is_atomic, "RDMA-04", TH_NO_CTX)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 2, .seed = 0x66 };
	struct ini_arg ia = { .port = t->port };
	unsigned char *seen;
	uint64_t raddr, v, base = 0, fin = 0;
	uint64_t bad = 0;
	int nbad = 0, bad_at = 0;
	int i, st = IBV_WC_SUCCESS, st_read;
	uint32_t qpn2;
	struct th_peer p, q;
	struct remote r;
	struct end e;

	need_atomics("RDMA-04");
	seen = calloc(2 * NADD, 1);
	assert_non_null(seen);
	target_start(&p, &a, &r);
	th_peer_start(&q, second_initiator, &ia);
	qpn2 = th_recv(&q);
	th_send(&q, r.qpn[1]);
	th_send(&q, r.rkey);
	send_u64(&q, r.addr + WORD_OFF);
	end_open(&e, ACC_ALL, 1);
	target_connect(&p, &a, &r, e.qp[0], t->port, &qpn2);
	assert_int_equal(th_recv(&q), MSG_READY);
	raddr = r.addr + WORD_OFF;
	base = pat_u64(0x66, WORD_OFF);
	target_stop(&p);
	th_send(&q, MSG_READY);	/* GO: both add at once */
	for (i = 0; i < NADD && st == IBV_WC_SUCCESS; i++) {
		st = op1(&e, e.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 8 * (i % 64), 8, raddr, r.rkey,
			 1, 0);
		if (st == IBV_WC_SUCCESS) {
			memcpy(&v, e.buf + 8 * (i % 64), 8);
			if (v - base < 2 * NADD)
				seen[v - base]++;
			else if (!nbad++)
				bad = v - base, bad_at = i;
		}
	}
	if (st == IBV_WC_SUCCESS)
		for (i = 0; i < NADD; i++) {
			v = recv_u64(&q);
			if (v - base < 2 * NADD)
				seen[v - base]++;
			else if (!nbad++)
				bad = v - base, bad_at = NADD + i;
		}
	st_read = op1(&e, e.qp[0], IBV_WR_RDMA_READ, 4096, 8, raddr, r.rkey, 0, 0);
	memcpy(&fin, e.buf + 4096, 8);
	target_cont(&p);
	assert_status(st, IBV_WC_SUCCESS);
	assert_status(st_read, IBV_WC_SUCCESS);
	assert_int_equal(th_peer_wait(&q), 0);
	if (nbad)
		th_fail("%d originals out of [base, base+%d): the first base%+lld, at the %s's add %d",
			nbad, 2 * NADD, (long long)bad, bad_at < NADD ? "test's" : "second initiator",
			bad_at % NADD);
	/* every original from base to base + 2 NADD - 1 exactly once */
	for (i = 0; i < 2 * NADD; i++)
		if (seen[i] != 1)
			th_fail("original value base+%d was returned %u times", i, seen[i]);
	if (fin != base + 2 * NADD)
		th_fail("the word is base+%lld after %d adds of 1", (long long)(fin - base), 2 * NADD);
	chk_u64(&p, WORD_OFF, base + 2 * NADD);
	target_end(&p);
	end_close(&e);
	free(seen);
}

/* ---- RDMA-05: RC order ---------------------------------------------------- */
#define NSEND	4

/* NSEND SENDs of RECV_LEN bytes (SEND i: the pattern of seed 0x40 + i),
 * then the RDMA WRITE of 1 at the target's FLAG_OFF, as one list (wr[0]). */
static void sends_then_flag(struct end *e, const struct remote *r, struct ibv_send_wr *wr,
			    struct ibv_sge *sge)
{
	uint64_t one = 1;
	int i;

	memset(wr, 0, (NSEND + 1) * sizeof(*wr));
	for (i = 0; i <= NSEND; i++) {
		sge[i].addr = (uintptr_t)e->buf + (uint64_t)i * RECV_LEN;
		sge[i].length = i < NSEND ? RECV_LEN : 8;
		sge[i].lkey = e->mr->lkey;
		if (i < NSEND)
			fill(e->buf + (size_t)i * RECV_LEN, RECV_LEN, 0x40 + (unsigned)i);
		else
			memcpy(e->buf + (size_t)i * RECV_LEN, &one, 8);
		wr[i].wr_id = (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = i < NSEND ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < NSEND ? &wr[i + 1] : NULL;
	}
	wr[NSEND].wr.rdma.remote_addr = r->addr + FLAG_OFF;
	wr[NSEND].wr.rdma.rkey = r->rkey;
}

TH_TEST(write_after_send_is_not_placed_before_the_send_data, "RDMA-05", TH_NO_CTX)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 1, .seed = 0x77,
			     .nrecv = NSEND, .spin_flag = 1 };
	struct ibv_send_wr wr[NSEND + 1], *bad;
	struct ibv_sge sge[NSEND + 1];
	struct ibv_wc wc;
	struct th_peer p;
	struct remote r;
	struct end e;
	int i;

	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	target_connect(&p, &a, &r, e.qp[0], t->port, NULL);
	/* NSEND SENDs, then the WRITE of the flag the target waits on, one post */
	sends_then_flag(&e, &r, wr, sge);
	assert_int_equal(ibv_post_send(e.qp[0], wr, &bad), 0);
	for (i = 0; i <= NSEND; i++) {
		if (!tf_poll_for(e.cq, &wc, LIMIT_MS))
			th_fail("WR %d never completed", i);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);	/* in post order */
	}
	/* the target saw the flag and checked the SENDs' data (its TR_EXPECTs) */
	assert_int_equal(th_recv(&p), 1);
	th_send(&p, CHK_RECVS);
	chk_u64(&p, FLAG_OFF, 1);
	target_end(&p);
	end_close(&e);
}

/* RDMA READ of len bytes at the target's [raddr, rkey] into e's buffer at
 * loff, through qp and its own cq: the completion's status (NO_COMPLETION
 * when none came). */
static int read_on(struct end *e, struct ibv_qp *qp, struct ibv_cq *cq, size_t loff, uint32_t len,
		   uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)e->buf + loff, len, e->mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x3105;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	if (!tf_poll_for(cq, &wc, LIMIT_MS))
		return NO_COMPLETION;
	return wc.wr_id == 0x3105 ? (int)wc.status : -3;
}

/*
 * The same order at a target that is stopped while the SENDs and the WRITE
 * are posted, looked at through a second connection that READs the flag
 * and, when the WRITE is there, the SENDs' data: where the requester
 * itself places a WRITE in the target's memory (the reference target;
 * engine/README.md, "The PLACE path"), nothing but its wait for the
 * earlier WQEs' answers keeps it from landing before SENDs that still sit
 * at the stopped target. A device whose responder runs without the
 * target's CPU (rxe: linux v6.1 drivers/infiniband/sw/rxe/rxe_resp.c
 * check_psn) has executed them in order by then; on either, a WRITE that
 * landed says the SENDs' data did.
 */
TH_TEST(write_after_send_is_not_placed_before_the_send_data_at_a_stopped_target, "RDMA-05",
	TH_NO_CTX)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 2, .seed = 0x78,
			     .nrecv = NSEND };
	struct ibv_send_wr wr[NSEND + 1], *bad;
	struct ibv_sge sge[NSEND + 1];
	struct ibv_qp *look;
	struct ibv_cq *lcq;
	struct ibv_wc wc;
	uint64_t flag;
	struct th_peer p;
	struct remote r;
	struct end e;
	size_t d;
	int i, st;

	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	lcq = ibv_create_cq(e.ctx, 4, NULL, NULL, 0);
	assert_non_null(lcq);
	look = th_rc_qp(e.pd, lcq, IBV_QPT_RC);
	assert_non_null(look);
	target_connect(&p, &a, &r, e.qp[0], t->port, &look->qp_num);
	assert_int_equal(tf_qp_connect(look, t->port, r.qpn[1]), 0);
	sends_then_flag(&e, &r, wr, sge);
	target_stop(&p);
	assert_int_equal(ibv_post_send(e.qp[0], wr, &bad), 0);
	/* while the target is stopped: the flag; if the WRITE is there, the
	 * SENDs' data must be too */
	st = read_on(&e, look, lcq, 2048, 8, r.addr + FLAG_OFF, r.rkey);
	assert_status(st, IBV_WC_SUCCESS);
	memcpy(&flag, e.buf + 2048, 8);
	if (st == IBV_WC_SUCCESS && flag == 1) {
		memset(e.buf + 4096, 0, NSEND * RECV_LEN);
		st = read_on(&e, look, lcq, 4096, NSEND * RECV_LEN, r.addr + RECV_OFF, r.rkey);
		assert_status(st, IBV_WC_SUCCESS);
		for (i = 0; st == IBV_WC_SUCCESS && i < NSEND; i++) {
			d = pattern_diff(e.buf + 4096 + (size_t)i * RECV_LEN, RECV_LEN,
					 0x40 + (unsigned)i);
			if (d != RECV_LEN)
				th_fail("the WRITE after SEND %d was placed before its data "
					"(byte %zu differs)", i, d);
		}
	}
	target_cont(&p);
	for (i = 0; i <= NSEND; i++) {
		if (!tf_poll_for(e.cq, &wc, LIMIT_MS))
			th_fail("WR %d never completed", i);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);	/* in post order */
	}
	th_send(&p, CHK_RECVS);
	chk_u64(&p, FLAG_OFF, 1);
	target_end(&p);
	assert_int_equal(ibv_destroy_qp(look), 0);
	assert_int_equal(ibv_destroy_cq(lcq), 0);
	end_close(&e);
}

/* ---- RDMA-06: errors ------------------------------------------------------ */
/* One bad operation against a target blocked in read(): the requester's
 * completion is IBV_WC_REM_ACCESS_ERR, and the target's buffer is as it was. */
static void access_error(struct th_ctx *t, unsigned mr_access, enum ibv_wr_opcode op,
			 uint64_t off, uint32_t len, uint32_t key_xor)
{
	struct tgt_arg a = { .port = t->port, .mr_access = mr_access, .nqp = 1, .seed = 0x88 };
	struct th_peer p;
	struct remote r;
	struct end e;
	int st;

	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	target_connect(&p, &a, &r, e.qp[0], t->port, NULL);
	fill(e.buf, BUF_LEN, 0x99);
	st = op1(&e, e.qp[0], op, 0, len, r.addr + off, r.rkey ^ key_xor, 5, 6);
	th_note("requester's completion: %s", st_name(st));
	assert_status(st, IBV_WC_REM_ACCESS_ERR);
	chk_pattern(&p, 0, BUF_LEN, 0x88, 0);
	target_end(&p);
	end_close(&e);
}

TH_TEST(write_with_a_bad_rkey_is_rem_access_err, "RDMA-06", TH_NO_CTX)
{
	access_error(t, ACC_ALL, IBV_WR_RDMA_WRITE, 0, 64, 0x5a);
}

TH_TEST(write_without_remote_write_access_is_rem_access_err, "RDMA-06", TH_NO_CTX)
{
	access_error(t, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		     IBV_WR_RDMA_WRITE, 0, 64, 0);
}

TH_TEST(read_past_the_region_is_rem_access_err, "RDMA-06", TH_NO_CTX)
{
	access_error(t, ACC_ALL, IBV_WR_RDMA_READ, BUF_LEN - 32, 64, 0);
}

TH_TEST(atomic_without_remote_atomic_access_is_rem_access_err, "RDMA-06", TH_NO_CTX)
{
	need_atomics("this check of RDMA-06");
	access_error(t, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		     IBV_WR_ATOMIC_FETCH_AND_ADD, WORD_OFF, 8, 0);
}

/* ---- RDMA-07: misaligned atomics ------------------------------------------ */
#define ATOMIC_OPS	(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/* Whether the device makes a QP with the new post-send API's atomics,
 * asked on a context of the test's own before any peer starts. */
static void need_atomics_ex(void)
{
	struct ibv_context *ctx = th_open();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp;
	int err;

	assert_non_null(pd);
	assert_non_null(cq);
	qp = th_rc_qp_ex(ctx, pd, cq, IBV_QPT_RC, ATOMIC_OPS);
	err = qp ? 0 : errno;
	if (qp)
		assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
	if (err == EOPNOTSUPP)
		th_ext_missing("RC QPs with the new post-send API's atomics: EOPNOTSUPP");
	if (err)
		th_fail("an RC QP with the new post-send API's atomics: %s", strerror(err));
}

/* One signaled atomic of e's QP 0 into its buffer's first 8 bytes, through
 * ibv_post_send or (ex) the new post-send API: the post's answer (0 or an
 * errno), and in *st the completion's status as op1 gives it. */
static int atomic1(struct end *e, enum ibv_wr_opcode op, int ex, uint64_t raddr, uint32_t rkey,
		   uint64_t cmp_add, uint64_t swap, int *st)
{
	struct ibv_sge sge = { (uintptr_t)e->buf, 8, e->mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	int ret;

	if (ex) {
		x = ibv_qp_to_qp_ex(e->qp[0]);
		assert_non_null(x);
		ibv_wr_start(x);
		x->wr_id = 0x3102;
		x->wr_flags = IBV_SEND_SIGNALED;
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP)
			ibv_wr_atomic_cmp_swp(x, rkey, raddr, cmp_add, swap);
		else
			ibv_wr_atomic_fetch_add(x, rkey, raddr, cmp_add);
		ibv_wr_set_sge(x, sge.lkey, sge.addr, sge.length);
		ret = ibv_wr_complete(x);
	} else {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x3102;
		wr.opcode = op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
		ret = ibv_post_send(e->qp[0], &wr, &bad);
	}
	*st = ret ? -2 : !tf_poll_for(e->cq, &wc, LIMIT_MS) ? NO_COMPLETION :
	      wc.wr_id != 0x3102 ? -3 : (int)wc.status;
	return ret;
}

/*
 * An atomic's remote address is 8-byte aligned (IBA vol 1 9.4.5); the
 * responder answers one that is not with an invalid-request NAK (linux
 * v6.1 drivers/infiniband/sw/rxe/rxe_resp.c:648-651 atomic_reply,
 * :1371-1376 class C), which the requester completes as
 * IBV_WC_REM_INV_REQ_ERR (rxe_comp.c:316-318). A driver may refuse it at
 * ibv_post_send already (EINVAL: rxe, rdma-core v44.0
 * providers/rxe/rxe.c:1450-1453 validate_send_wr; not the strict profile,
 * where the responder answers); rxe's new post-send API takes it (ex), and
 * its responder answers. Either way the word at a 4-byte aligned address
 * of a target blocked in read(), one a compare would match, stays as it
 * was.
 */
static void misaligned_atomic(struct th_ctx *t, enum ibv_wr_opcode op, int ex)
{
	struct tgt_arg a = { .port = t->port, .mr_access = ACC_ALL, .nqp = 1, .seed = 0x8a };
	uint64_t w = pat_u64(0x8a, WORD_OFF + 4);
	struct th_peer p;
	struct remote r;
	struct end e;
	int st, ret;

	target_start(&p, &a, &r);
	end_open(&e, ACC_ALL, 1);
	if (ex) {
		/* the requester's QP again, made for the new post-send API */
		assert_int_equal(ibv_destroy_qp(e.qp[0]), 0);
		e.qp[0] = th_rc_qp_ex(e.ctx, e.pd, e.cq, IBV_QPT_RC, ATOMIC_OPS);
		assert_non_null(e.qp[0]);
	}
	target_connect(&p, &a, &r, e.qp[0], t->port, NULL);
	memset(e.buf, 0xee, BUF_LEN);
	ret = atomic1(&e, op, ex, r.addr + WORD_OFF + 4, r.rkey,
		      op == IBV_WR_ATOMIC_CMP_AND_SWP ? w : 1, ~w, &st);
	if (ret)
		th_note("%s: refused at post: %s", ex ? "new API" : "ibv_post_send", strerror(ret));
	else
		th_note("%s: requester's completion: %s", ex ? "new API" : "ibv_post_send",
			st_name(st));
	if (ret && ret != EINVAL)
		th_fail("ibv_post_send: %s, not EINVAL", strerror(ret));
	if (!ret || ex || th_strict())
		assert_status(st, IBV_WC_REM_INV_REQ_ERR);
	chk_pattern(&p, 0, BUF_LEN, 0x8a, 0);
	target_end(&p);
	end_close(&e);
}

TH_TEST(cmp_swap_at_a_misaligned_address_is_refused, "RDMA-07", TH_NO_CTX)
{
	need_atomics("RDMA-07");
	misaligned_atomic(t, IBV_WR_ATOMIC_CMP_AND_SWP, 0);
}

TH_TEST(fetch_add_at_a_misaligned_address_is_refused, "RDMA-07", TH_NO_CTX)
{
	need_atomics("RDMA-07");
	misaligned_atomic(t, IBV_WR_ATOMIC_FETCH_AND_ADD, 0);
}

TH_TEST(misaligned_atomics_of_the_new_api_are_rem_inv_req_err, "RDMA-07", TH_NO_CTX)
{
	need_atomics("RDMA-07");
	need_atomics_ex();
	misaligned_atomic(t, IBV_WR_ATOMIC_CMP_AND_SWP, 1);
	misaligned_atomic(t, IBV_WR_ATOMIC_FETCH_AND_ADD, 1);
}

int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
