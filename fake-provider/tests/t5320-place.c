/* SPDX-License-Identifier: MIT */
/*
 * t5320: one-sided operations the requester places itself in the target's
 * memory (fake-provider/engine/README.md, "The PLACE path"), between two
 * real processes: a target stopped with SIGSTOP gets an RDMA WRITE, READ,
 * CMP_SWAP and FETCH_ADD done, with their completions and data, while it
 * is stopped; two requesters and the target's own CPU add to one word 100k
 * times each and the sum is exact; a WRITE behind a SEND the target has not
 * taken yet (its process stopped) is not in the target's memory before the
 * SEND's data (RC, and UC, whose WRITEs keep the old path for now); the errors of the old path stay (bad rkey, a
 * region without remote write, out of range, a QP not ready to receive);
 * nothing completes in a target that was killed. Every wait is bounded by
 * the load-stretched clock (tr_clock.h). The first argument may name a
 * script (t5102: quirk onesided_via_target makes the stopped target's test
 * fail).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_test.h"
#include "tf.h"
#include "tr.h"
#include "tr_clock.h"

#define BUF		8192		/* two pages of anonymous memory, registered */
#define WAIT_MS		3000		/* a completion placed by the requester comes at once */
#define NQP		4

/* Where things are in the target's buffer. */
#define T_WRITE		0		/* 64 bytes a WRITE lands in */
#define T_READ		64		/* 64 bytes a READ reads */
#define T_CMP		128		/* a word CMP_SWAP changes */
#define T_ADD		136		/* a word FETCH_ADD adds to */
#define T_FLAG		192		/* a word a WRITE sets */
#define T_RECV		1024		/* a receive buffer */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[NQP];
	struct ibv_mr *mr, *ro;		/* ro: without remote write */
	char *buf;
};

static const struct tf_qp_opts opts = {
	.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
	.timeout = 8, .retry_cnt = 1, .rnr_retry = 7, .max_rd_atomic = 4,
};

static void side_open(struct side *s, enum ibv_qp_type type, int nqp)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->ctx = fpt_open();
	s->pd = ibv_alloc_pd(s->ctx);
	TR_ASSERT(s->pd);
	s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0);
	TR_ASSERT(s->cq);
	s->buf = mmap(NULL, 2 * BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TR_ASSERT(s->buf != MAP_FAILED);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	TR_ASSERT(s->mr);
	s->ro = ibv_reg_mr(s->pd, s->buf + BUF, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	TR_ASSERT(s->ro);
	for (i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = s->cq, .recv_cq = s->cq, .qp_type = type,
			.cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		s->qp[i] = ibv_create_qp(s->pd, &ia);
		TR_ASSERT(s->qp[i]);
	}
}

static void side_connect(struct side *s, int i, uint32_t dest)
{
	struct tf_qp_opts o = opts;

	if (s->qp[i]->qp_type == IBV_QPT_UC)
		o.access = IBV_ACCESS_REMOTE_WRITE;
	TR_ASSERT(tf_qp_connect_o(s->qp[i], 1, dest, &o) == 0);
}

static void send64(struct tr_peer *p, uint64_t v)
{
	tr_send(p, (uint32_t)v);
	tr_send(p, (uint32_t)(v >> 32));
}

static uint64_t recv64(struct tr_peer *p)
{
	uint64_t lo = tr_recv(p);

	return lo | (uint64_t)tr_recv(p) << 32;
}

/* What the requester learns of the target. */
struct remote {
	uint32_t qpn[NQP];
	uint32_t rkey, ro_rkey;
	uint64_t addr, ro_addr;
};

/* The target's half of the handshake: its QPNs and keys out, the
 * requester's QPNs in, its first nqp QPs connected to them. */
static void target_handshake(struct tr_peer *self, struct side *s, int nqp, int nconnect)
{
	int i;

	for (i = 0; i < nqp; i++)
		tr_send(self, s->qp[i]->qp_num);
	tr_send(self, s->mr->rkey);
	tr_send(self, s->ro->rkey);
	send64(self, (uintptr_t)s->buf);
	send64(self, (uintptr_t)s->buf + BUF);
	for (i = 0; i < nqp; i++) {
		uint32_t dest = tr_recv(self);

		if (i < nconnect)
			side_connect(s, i, dest);
	}
}

static void requester_handshake(struct tr_peer *p, struct side *s, struct remote *rm, int nqp)
{
	int i;

	for (i = 0; i < nqp; i++)
		rm->qpn[i] = tr_recv(p);
	rm->rkey = tr_recv(p);
	rm->ro_rkey = tr_recv(p);
	rm->addr = recv64(p);
	rm->ro_addr = recv64(p);
	for (i = 0; i < nqp; i++)
		tr_send(p, s->qp[i]->qp_num);
	for (i = 0; i < nqp; i++)
		side_connect(s, i, rm->qpn[i]);
}

static void post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, void *local,
		 uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
		 uint64_t swap)
{
	struct ibv_sge sge = { (uintptr_t)local, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	TR_ASSERT(ibv_post_send(qp, &wr, &bad) == 0);
}

/* The next completion of cq within the stretched limit: 1, or 0 (none). */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, long long ms)
{
	struct tr_clock c;

	tr_clock_start(&c, ms * tr_timeout_mult());
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		TR_ASSERT(n >= 0);
		if (n)
			return 1;
		if (!tr_clock_tick(&c))
			return 0;
		usleep(200);
	}
}

static void stop(pid_t pid)
{
	int st;

	TR_ASSERT(kill(pid, SIGSTOP) == 0);
	TR_ASSERT(waitpid(pid, &st, WUNTRACED) == pid);
	TR_ASSERT(WIFSTOPPED(st));
}

static void cont(pid_t pid)
{
	TR_ASSERT(kill(pid, SIGCONT) == 0);
}

/* ---- a stopped target --------------------------------------------------------- */
static void target_stopped(struct tr_peer *self, void *arg)
{
	struct side s;
	uint64_t v;
	int i, bad = 0;

	side_open(&s, IBV_QPT_RC, 1);
	for (i = 0; i < 64; i++)
		s.buf[T_READ + i] = (char)('R' + i);
	v = 5;
	memcpy(s.buf + T_CMP, &v, 8);
	v = 100;
	memcpy(s.buf + T_ADD, &v, 8);
	target_handshake(self, &s, 1, 1);
	tr_send(self, 1);			/* ready */
	TR_ASSERT(tr_recv(self) == 2);		/* continued after the operations */
	for (i = 0; i < 64; i++)
		bad += s.buf[T_WRITE + i] != (char)('W' + i);
	TR_EXPECT_MSG(!bad, "%d bytes of the WRITE are not in the target's memory", bad);
	memcpy(&v, s.buf + T_CMP, 8);
	TR_EXPECT_MSG(v == 9, "CMP_SWAP left %llu, not 9", (unsigned long long)v);
	memcpy(&v, s.buf + T_ADD, 8);
	TR_EXPECT_MSG(v == 107, "FETCH_ADD left %llu, not 107", (unsigned long long)v);
	tr_send(self, 3);
	TR_ASSERT(tr_recv(self) == 4);		/* the requester is done */
}

TR_TEST(stopped_target_gets_write_read_cmp_swap_and_fetch_add)
{
	static const enum ibv_wc_opcode want[] = {
		IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD };
	struct tr_peer p;
	struct remote rm;
	struct side s;
	struct ibv_wc wc;
	uint64_t v;
	int i, got = 0, bad = 0;

	tr_peer_start(&p, target_stopped, NULL);
	side_open(&s, IBV_QPT_RC, 1);
	requester_handshake(&p, &s, &rm, 1);
	assert_int_equal(tr_recv(&p), 1);
	for (i = 0; i < 64; i++)
		s.buf[i] = (char)('W' + i);
	stop(p.pid);
	post(s.qp[0], IBV_WR_RDMA_WRITE, 0, s.buf, 64, s.mr->lkey, rm.addr + T_WRITE, rm.rkey,
	     0, 0);
	post(s.qp[0], IBV_WR_RDMA_READ, 1, s.buf + 256, 64, s.mr->lkey, rm.addr + T_READ,
	     rm.rkey, 0, 0);
	post(s.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 2, s.buf + 512, 8, s.mr->lkey, rm.addr + T_CMP,
	     rm.rkey, 5, 9);
	post(s.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 3, s.buf + 520, 8, s.mr->lkey,
	     rm.addr + T_ADD, rm.rkey, 7, 0);
	/* all four complete while the target is still stopped */
	for (got = 0; got < 4 && wait_wc(s.cq, &wc, WAIT_MS); got++) {
		TR_EXPECT_MSG(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)got &&
			      wc.opcode == want[got], "completion %d: wr_id %llu status %s opcode %d",
			      got, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			      (int)wc.opcode);
	}
	cont(p.pid);
	assert_int_equal(got, 4);
	for (i = 0; i < 64; i++)
		bad += s.buf[256 + i] != (char)('R' + i);
	assert_int_equal(bad, 0);
	memcpy(&v, s.buf + 512, 8);
	assert_int_equal(v, 5);
	memcpy(&v, s.buf + 520, 8);
	assert_int_equal(v, 100);
	tr_send(&p, 2);
	assert_int_equal(tr_recv(&p), 3);
	tr_send(&p, 4);
	assert_int_equal(tr_peer_wait(&p), 0);
}

/* ---- fetch-and-add from everywhere -------------------------------------------- */
#define ADDS	100000
#define ADD_T	1ull			/* the target's own CPU */
#define ADD_A	(1ull << 20)		/* the test's process */
#define ADD_B	(1ull << 40)		/* the second requester */

/* Add ADDS times to the target's word, each original larger than the one before. */
static void fetch_adds(struct side *s, struct remote *rm, uint64_t add)
{
	uint64_t prev = 0, *orig = (uint64_t *)(void *)(s->buf + 512);
	struct ibv_wc wc;
	int i, late = 0;

	for (i = 0; i < ADDS; i++) {
		post(s->qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, (uint64_t)i, orig, 8, s->mr->lkey,
		     rm->addr + T_ADD, rm->rkey, add, 0);
		TR_ASSERT_MSG(wait_wc(s->cq, &wc, WAIT_MS * 10), "fetch-and-add %d: no completion", i);
		TR_ASSERT_MSG(wc.status == IBV_WC_SUCCESS, "fetch-and-add %d: %s", i,
			      ibv_wc_status_str(wc.status));
		late += i && *orig <= prev;
		prev = *orig;
	}
	TR_EXPECT_MSG(!late, "%d originals not above the one before", late);
}

/* The second requester: the target's QP 1. */
static void requester_b(struct tr_peer *self, void *arg)
{
	struct remote rm;
	struct side s;

	side_open(&s, IBV_QPT_RC, 1);
	rm.qpn[0] = tr_recv(self);
	rm.rkey = tr_recv(self);
	rm.addr = recv64(self);
	tr_send(self, s.qp[0]->qp_num);
	side_connect(&s, 0, rm.qpn[0]);
	TR_ASSERT(tr_recv(self) == 1);		/* go */
	fetch_adds(&s, &rm, ADD_B);
	tr_send(self, 2);			/* done */
	TR_ASSERT(tr_recv(self) == 3);
}

static void target_adds(struct tr_peer *self, void *arg)
{
	uint64_t *word;
	struct side s;
	int i;

	side_open(&s, IBV_QPT_RC, 2);
	word = (uint64_t *)(void *)(s.buf + T_ADD);
	target_handshake(self, &s, 2, 2);
	tr_send(self, 1);			/* both connected */
	TR_ASSERT(tr_recv(self) == 1);		/* go */
	for (i = 0; i < ADDS; i++)
		__atomic_fetch_add(word, ADD_T, __ATOMIC_SEQ_CST);
	tr_send(self, 2);
	TR_ASSERT(tr_recv(self) == 3);		/* both requesters are done */
	send64(self, __atomic_load_n(word, __ATOMIC_SEQ_CST));
	TR_ASSERT(tr_recv(self) == 4);
}

TR_TEST(fetch_add_from_two_requesters_and_the_target_sums_exactly)
{
	struct tr_peer t, b;
	struct remote rm;
	struct side s;
	uint32_t bqpn;
	uint64_t sum;

	tr_peer_start(&t, target_adds, NULL);
	tr_peer_start(&b, requester_b, NULL);
	side_open(&s, IBV_QPT_RC, 1);
	rm.qpn[0] = tr_recv(&t);
	rm.qpn[1] = tr_recv(&t);
	rm.rkey = tr_recv(&t);
	(void)tr_recv(&t);
	rm.addr = recv64(&t);
	(void)recv64(&t);
	tr_send(&t, s.qp[0]->qp_num);
	tr_send(&b, rm.qpn[1]);
	tr_send(&b, rm.rkey);
	send64(&b, rm.addr);
	bqpn = tr_recv(&b);
	tr_send(&t, bqpn);
	side_connect(&s, 0, rm.qpn[0]);
	assert_int_equal(tr_recv(&t), 1);
	tr_send(&t, 1);
	tr_send(&b, 1);
	fetch_adds(&s, &rm, ADD_A);
	assert_int_equal(tr_recv(&b), 2);
	assert_int_equal(tr_recv(&t), 2);
	tr_send(&t, 3);
	sum = recv64(&t);
	tr_send(&t, 4);
	tr_send(&b, 3);
	assert_int_equal(tr_peer_wait(&b), 0);
	assert_int_equal(tr_peer_wait(&t), 0);
	if (sum != ADDS * (ADD_T + ADD_A + ADD_B))
		tr_fail("the word holds %#llx, not %#llx (the target's adds %llu, the test's %llu, "
			"the other requester's %llu)", (unsigned long long)sum,
			(unsigned long long)(ADDS * (ADD_T + ADD_A + ADD_B)),
			(unsigned long long)(sum & 0xfffff),
			(unsigned long long)((sum >> 20) & 0xfffff),
			(unsigned long long)(sum >> 40));
}

/* ---- a WRITE behind a SEND the target has not taken ---------------------------- */
static void target_send_then_write(struct tr_peer *self, void *arg)
{
	const enum ibv_qp_type *type = arg;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
	volatile uint64_t *flag;
	struct tr_clock c;
	struct ibv_wc wc;
	struct side s;
	int i, wrong = 0;

	side_open(&s, *type, 1);
	flag = (volatile uint64_t *)(void *)(s.buf + T_FLAG);
	sge.addr = (uintptr_t)s.buf + T_RECV;
	sge.length = 64;
	sge.lkey = s.mr->lkey;
	target_handshake(self, &s, 1, 1);
	TR_ASSERT(ibv_post_recv(s.qp[0], &wr, &bad) == 0);
	tr_send(self, 1);			/* ready */
	TR_ASSERT(tr_recv(self) == 2);		/* continued */
	/* no verb: the flag, then the SEND's data, which came before it */
	tr_clock_start(&c, WAIT_MS * tr_timeout_mult());
	while (!*flag && tr_clock_tick(&c))
		;
	TR_ASSERT_MSG(*flag == 1, "the WRITE never landed");
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (i = 0; i < 64; i++)
		wrong += s.buf[T_RECV + i] != (char)('S' + i);
	TR_EXPECT_MSG(!wrong, "the WRITE landed before the SEND's data (%d bytes missing)", wrong);
	TR_EXPECT(wait_wc(s.cq, &wc, WAIT_MS) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7);
	tr_send(self, 3);
	TR_ASSERT(tr_recv(self) == 4);
}

static void write_behind_waiting_send(enum ibv_qp_type type)
{
	struct iovec here, there;
	struct tr_peer p;
	struct remote rm;
	struct side s;
	struct ibv_wc wc;
	uint64_t one = 1, seen = 0;
	ssize_t n;
	int i;

	tr_peer_start(&p, target_send_then_write, &type);
	side_open(&s, type, 1);
	requester_handshake(&p, &s, &rm, 1);
	assert_int_equal(tr_recv(&p), 1);
	for (i = 0; i < 64; i++)
		s.buf[i] = (char)('S' + i);
	memcpy(s.buf + 128, &one, 8);
	stop(p.pid);
	post(s.qp[0], IBV_WR_SEND, 0, s.buf, 64, s.mr->lkey, 0, 0, 0, 0);
	post(s.qp[0], IBV_WR_RDMA_WRITE, 1, s.buf + 128, 8, s.mr->lkey, rm.addr + T_FLAG,
	     rm.rkey, 0, 0);
	/* the target is stopped: its memory does not hold the WRITE yet */
	here.iov_base = &seen;
	here.iov_len = 8;
	there.iov_base = (void *)(uintptr_t)(rm.addr + T_FLAG);
	there.iov_len = 8;
	n = process_vm_readv(p.pid, &here, 1, &there, 1, 0);
	cont(p.pid);
	if (n != 8)
		tr_fail("process_vm_readv of the target: %s", strerror(errno));
	assert_int_equal(seen, 0);
	tr_send(&p, 2);
	for (i = 0; i < 2; i++) {
		assert_true(wait_wc(s.cq, &wc, WAIT_MS));
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, (uint64_t)i);
	}
	assert_int_equal(tr_recv(&p), 3);
	tr_send(&p, 4);
	assert_int_equal(tr_peer_wait(&p), 0);
}

TR_TEST(rc_write_behind_a_send_not_taken_lands_after_it)
{
	write_behind_waiting_send(IBV_QPT_RC);
}

TR_TEST(uc_write_behind_a_send_not_taken_lands_after_it)
{
	write_behind_waiting_send(IBV_QPT_UC);
}

/* ---- errors --------------------------------------------------------------------- */
/* QPs 0-2 connected, QP 3 left in INIT: not ready to receive. */
static void target_errors(struct tr_peer *self, void *arg)
{
	struct side s;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	side_open(&s, IBV_QPT_RC, NQP);
	TR_ASSERT(ibv_modify_qp(s.qp[3], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS) == 0);
	target_handshake(self, &s, NQP, 3);
	tr_send(self, 1);
	TR_ASSERT(tr_recv(self) == 2);
}

TR_TEST(errors_of_the_target_stay_what_they_were)
{
	static const char *const what[NQP] = {
		"a bad rkey", "a region without remote write", "past the region's end",
		"a QP not ready to receive" };
	static const enum ibv_wc_status want[NQP] = {
		IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR,
		IBV_WC_RETRY_EXC_ERR };
	struct tr_peer p;
	struct remote rm;
	struct side s;
	struct ibv_wc wc;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	int i;

	tr_peer_start(&p, target_errors, NULL);
	side_open(&s, IBV_QPT_RC, NQP);
	requester_handshake(&p, &s, &rm, NQP);
	assert_int_equal(tr_recv(&p), 1);
	post(s.qp[0], IBV_WR_RDMA_WRITE, 0, s.buf, 8, s.mr->lkey, rm.addr, rm.rkey + 1, 0, 0);
	post(s.qp[1], IBV_WR_RDMA_WRITE, 1, s.buf, 8, s.mr->lkey, rm.ro_addr, rm.ro_rkey, 0, 0);
	post(s.qp[2], IBV_WR_RDMA_WRITE, 2, s.buf, 16, s.mr->lkey, rm.addr + BUF - 8, rm.rkey,
	     0, 0);
	post(s.qp[3], IBV_WR_RDMA_WRITE, 3, s.buf, 8, s.mr->lkey, rm.addr, rm.rkey, 0, 0);
	for (i = 0; i < NQP; i++) {
		enum ibv_wc_status st;

		/* the lost one waits for its ACK timer: 4.096 us << 8, twice */
		assert_true(wait_wc(s.cq, &wc, WAIT_MS * 3));
		assert_true(wc.wr_id < NQP);
		st = wc.status;
		if (st != want[wc.wr_id])
			tr_fail("%s: %s, not %s", what[wc.wr_id], ibv_wc_status_str(st),
				ibv_wc_status_str(want[wc.wr_id]));
		/* a failed WQE moves the requester's QP to ERR */
		assert_int_equal(ibv_query_qp(s.qp[wc.wr_id], &qa, IBV_QP_STATE, &qia), 0);
		assert_int_equal(qa.qp_state, IBV_QPS_ERR);
	}
	tr_send(&p, 2);
	assert_int_equal(tr_peer_wait(&p), 0);
}

/* ---- a killed target ------------------------------------------------------------- */
static void target_killed(struct tr_peer *self, void *arg)
{
	struct side s;

	side_open(&s, IBV_QPT_RC, 1);
	target_handshake(self, &s, 1, 1);
	tr_send(self, 1);
	for (;;)
		pause();			/* until killed */
}

TR_TEST(nothing_completes_in_a_killed_target)
{
	struct tr_peer p;
	struct remote rm;
	struct side s;
	struct ibv_wc wc;

	tr_peer_start(&p, target_killed, NULL);
	side_open(&s, IBV_QPT_RC, 1);
	requester_handshake(&p, &s, &rm, 1);
	assert_int_equal(tr_recv(&p), 1);
	/* one that lands: the route to the target is known from now on */
	post(s.qp[0], IBV_WR_RDMA_WRITE, 0, s.buf, 8, s.mr->lkey, rm.addr, rm.rkey, 0, 0);
	assert_true(wait_wc(s.cq, &wc, WAIT_MS));
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	TR_ASSERT(kill(p.pid, SIGKILL) == 0);
	assert_int_equal(tr_peer_wait(&p), 128 + SIGKILL);
	post(s.qp[0], IBV_WR_RDMA_WRITE, 1, s.buf, 8, s.mr->lkey, rm.addr, rm.rkey, 0, 0);
	assert_true(wait_wc(s.cq, &wc, WAIT_MS * 3));
	assert_int_equal(wc.wr_id, 1);
	if (wc.status != IBV_WC_RETRY_EXC_ERR)
		tr_fail("a WRITE to a killed target: %s, not %s", ibv_wc_status_str(wc.status),
			ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
