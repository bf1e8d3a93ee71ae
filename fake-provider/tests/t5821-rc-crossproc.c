/* SPDX-License-Identifier: MIT */
/*
 * RC traffic between two real processes through the fake provider: every
 * opcode (SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, RDMA READ, both
 * atomics), a remote access error reported to the requester, RNR, and the
 * completion channel waking the receiving process while it only sleeps on
 * the channel's fd (its progress thread served the packet). Each side is a
 * forked agent driven over pipes; the daemon sets the path up, the packets
 * go process to process. Messages past one transport record (1 MiB) go in
 * segments: WRITE and READ of 3 MiB + 5 bytes arrive whole and in place.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fk_test.h"
#include "tf.h"

enum {
	R_SETUP = 1, R_CONNECT, R_POST_RECV, R_SEND, R_RECV, R_ARM_WAIT, R_SET, R_GET,
	R_SEND_WRITE, R_POLL_SEND, R_FILL, R_SUM, R_POST_WRITE, R_TRAP_WRITE,
};

struct cmd {
	uint32_t op, a;			/* a: opcode, count, flags */
	uint64_t b, c, d;		/* remote addr, rkey, value / length */
};

struct res {
	uint32_t status, opcode;	/* errno / ibv_wc_status, ibv_wc_opcode */
	uint64_t v[3];
};

/* 8 MiB: room for messages of several transport records (1 MiB each) */
#define BUF (8u << 20)

struct side {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	char *buf;
};

static int side_setup(struct side *s, struct res *r)
{
	struct ibv_qp_init_attr qa;
	int n;

	s->list = ibv_get_device_list(&n);
	if (!s->list || n < 1 || !(s->ctx = ibv_open_device(s->list[0])))
		return errno ? errno : EIO;
	s->ch = ibv_create_comp_channel(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->scq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	s->rcq = s->ch ? ibv_create_cq(s->ctx, 64, NULL, s->ch, 0) : NULL;
	s->buf = aligned_alloc(64, BUF);
	if (!s->ch || !s->pd || !s->scq || !s->rcq || !s->buf)
		return ENOMEM;
	memset(s->buf, 0, BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 32;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	s->qp = s->mr ? ibv_create_qp(s->pd, &qa) : NULL;
	if (!s->qp)
		return errno ? errno : EIO;
	r->v[0] = s->qp->qp_num;
	r->v[1] = s->mr->rkey;
	r->v[2] = (uint64_t)(uintptr_t)s->buf;
	return 0;
}

/* RESET -> RTS towards dest: 4 RDMA reads in flight each way, RNR timer 1,
 * the given RNR retry count. */
static int side_connect(struct side *s, uint32_t dest, uint8_t rnr_retry)
{
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct ibv_ah_attr ah = { .port_num = 1 };

	o.max_dest_rd_atomic = 4;
	o.min_rnr_timer = 1;
	o.max_rd_atomic = 4;
	o.rnr_retry = rnr_retry;
	return tf_qp_connect_av_o(s->qp, &ah, dest, &o);
}

/* Poll until one completion (the other side's progress may take a moment). */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long long end = fkt_ms() + 10000 * fkt_mult();
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && fkt_ms() < end)
		;
	return n == 1 ? 0 : ETIMEDOUT;
}

static void agent_main(int in, int out, void *arg)
{
	struct side s;
	struct cmd c;

	(void)arg;
	memset(&s, 0, sizeof(s));
	while (!fkt_get(in, &c, sizeof(c))) {
		struct res r;
		struct ibv_wc wc;

		memset(&r, 0, sizeof(r));
		switch (c.op) {
		case R_SETUP:
			r.status = (uint32_t)side_setup(&s, &r);
			break;
		case R_CONNECT:
			r.status = (uint32_t)side_connect(&s, c.a, (uint8_t)c.b);
			break;
		case R_POST_RECV: {
			struct ibv_sge sge = {
				.addr = (uintptr_t)s.buf + 2048, .length = 1024, .lkey = s.mr->lkey,
			};
			struct ibv_recv_wr wr = { .wr_id = 500, .sg_list = &sge, .num_sge = 1 }, *bad;
			uint32_t i;

			for (i = 0; i < c.a && !r.status; i++)
				r.status = (uint32_t)ibv_post_recv(s.qp, &wr, &bad);
			break;
		}
		case R_TRAP_WRITE: {
			/* a WRITE of buf[0..3 pages) to b/c whose second page is not
			 * readable: the HCA faults reading it, inside the peer'"'"'s inbox,
			 * and this process dies there (no core, no test runner'"'"'s
			 * handler) */
			struct rlimit none = { 0, 0 };
			char *pg = (char *)(((uintptr_t)s.buf + 8191) & ~(uintptr_t)4095);

			setrlimit(RLIMIT_CORE, &none);
			signal(SIGSEGV, SIG_DFL);
			signal(SIGBUS, SIG_DFL);
			if (mprotect(pg, 4096, PROT_NONE)) {
				r.status = (uint32_t)errno;
				break;
			}
			c.d = (uint64_t)(pg - s.buf) + 8192;
		}
			/* fall through */
		case R_POST_WRITE:	/* a WRITE (a: which) of buf[0..d) to b/c, not polled */
			c.op = R_POST_WRITE;
			/* fall through */
		case R_SEND: {
			/* local data at buf[0..len) (READ/atomics land there) */
			struct ibv_sge sge = {
				.addr = (uintptr_t)s.buf, .lkey = s.mr->lkey,
				.length = c.a == IBV_WR_ATOMIC_CMP_AND_SWP ||
					  c.a == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : (uint32_t)c.d,
			};
			struct ibv_send_wr wr, *bad;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 77;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = (enum ibv_wr_opcode)c.a;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.imm_data = htobe32(0x1234);
			if (c.a == IBV_WR_ATOMIC_CMP_AND_SWP || c.a == IBV_WR_ATOMIC_FETCH_AND_ADD) {
				wr.wr.atomic.remote_addr = c.b;
				wr.wr.atomic.rkey = (uint32_t)c.c;
				wr.wr.atomic.compare_add = c.d;
				wr.wr.atomic.swap = 0xabcdef;
			} else {
				wr.wr.rdma.remote_addr = c.b;
				wr.wr.rdma.rkey = (uint32_t)c.c;
			}
			r.status = (uint32_t)ibv_post_send(s.qp, &wr, &bad);
			if (c.op == R_POST_WRITE)
				break;
			if (!r.status && !(r.status = (uint32_t)poll_one(s.scq, &wc))) {
				r.opcode = wc.opcode;
				r.v[0] = wc.status;
				r.v[1] = wc.wr_id;
				memcpy(&r.v[2], s.buf, 8);
			}
			break;
		}
		case R_RECV:
			r.status = (uint32_t)poll_one(s.rcq, &wc);
			if (!r.status) {
				r.opcode = wc.opcode;
				r.v[0] = wc.status;
				r.v[1] = wc.byte_len | ((uint64_t)wc.wc_flags << 32);
				r.v[2] = wc.imm_data;
			}
			break;
		case R_ARM_WAIT: {
			/* arm, say so, then block on the channel's fd: no verbs call
			 * runs here until the completion wakes us */
			struct pollfd p = { .fd = s.ch->fd, .events = POLLIN };
			struct ibv_cq *ecq;
			void *ectx;

			r.status = (uint32_t)ibv_req_notify_cq(s.rcq, 0);
			if (fkt_put(out, &r, sizeof(r)))
				_exit(3);
			r.status = ETIMEDOUT;
			if (poll(&p, 1, (int)(10000 * fkt_mult())) == 1 &&
			    !ibv_get_cq_event(s.ch, &ecq, &ectx) && ecq == s.rcq) {
				ibv_ack_cq_events(ecq, 1);
				r.status = (uint32_t)poll_one(s.rcq, &wc);
				r.opcode = wc.opcode;
				r.v[0] = wc.status;
				r.v[1] = wc.byte_len;
			}
			break;
		}
		case R_SEND_WRITE: {
			/* a SEND of buf[0..8), then a WRITE of buf[8..16) to c.b/c.c,
			 * posted together and not polled (R_POLL_SEND does) */
			struct ibv_sge sg[2] = {
				{ .addr = (uintptr_t)s.buf, .length = 8, .lkey = s.mr->lkey },
				{ .addr = (uintptr_t)s.buf + 8, .length = 8, .lkey = s.mr->lkey },
			};
			struct ibv_send_wr wr[2], *bad;

			memset(wr, 0, sizeof(wr));
			wr[0].wr_id = 1;
			wr[0].sg_list = &sg[0];
			wr[0].num_sge = 1;
			wr[0].opcode = IBV_WR_SEND;
			wr[0].send_flags = IBV_SEND_SIGNALED;
			wr[0].next = &wr[1];
			wr[1].wr_id = 2;
			wr[1].sg_list = &sg[1];
			wr[1].num_sge = 1;
			wr[1].opcode = IBV_WR_RDMA_WRITE;
			wr[1].send_flags = IBV_SEND_SIGNALED;
			wr[1].wr.rdma.remote_addr = c.b;
			wr[1].wr.rdma.rkey = (uint32_t)c.c;
			r.status = (uint32_t)ibv_post_send(s.qp, wr, &bad);
			break;
		}
		case R_POLL_SEND:
			r.status = (uint32_t)poll_one(s.scq, &wc);
			if (!r.status) {
				r.opcode = wc.opcode;
				r.v[0] = wc.status;
				r.v[1] = wc.wr_id;
			}
			break;
		case R_SET:
			memcpy(s.buf + c.a, &c.d, 8);
			break;
		case R_GET:
			memcpy(&r.v[0], s.buf + c.a, 8);
			break;
		case R_FILL:		/* buf[a..a+d) from the seed c */
			for (uint64_t i = 0; i < c.d; i++)
				s.buf[c.a + i] = (char)((c.c + i * 131 + (i >> 12)) & 0xff);
			break;
		case R_SUM: {		/* FNV-1a of buf[a..a+d) */
			uint64_t h = 14695981039346656037ull;

			for (uint64_t i = 0; i < c.d; i++)
				h = (h ^ (unsigned char)s.buf[c.a + i]) * 1099511628211ull;
			r.v[0] = h;
			break;
		}
		default:
			_exit(2);
		}
		if (fkt_put(out, &r, sizeof(r)))
			_exit(3);
	}
	if (s.qp)
		ibv_destroy_qp(s.qp);
	if (s.mr)
		ibv_dereg_mr(s.mr);
	if (s.scq)
		ibv_destroy_cq(s.scq);
	if (s.rcq)
		ibv_destroy_cq(s.rcq);
	if (s.ch)
		ibv_destroy_comp_channel(s.ch);
	if (s.pd)
		ibv_dealloc_pd(s.pd);
	if (s.ctx)
		ibv_close_device(s.ctx);
	if (s.list)
		ibv_free_device_list(s.list);
	free(s.buf);
}

static struct res cmd(struct fkt_proc *p, uint32_t op, uint32_t a, uint64_t b, uint64_t c,
		      uint64_t d)
{
	struct cmd m = { op, a, b, c, d };
	struct res r;

	memset(&r, 0xff, sizeof(r));
	assert_int_equal(fkt_put(p->to, &m, sizeof(m)), 0);
	assert_int_equal(fkt_get(p->from, &r, sizeof(r)), 0);
	if (r.status)
		printf("# agent %ld: op %u: %s\n", (long)p->pid, op, strerror((int)r.status));
	return r;
}

struct pair {
	struct fk_client *m;
	struct fkt_proc a, b;		/* a requests, b responds */
	uint64_t b_addr, b_rkey;
	uint32_t b_qpn;
};

static void pair_up_rnr(struct pair *pr, uint8_t rnr_retry)
{
	struct res ra, rb;

	pr->m = fkt_monitor();
	pr->a = fkt_spawn(agent_main, NULL);
	pr->b = fkt_spawn(agent_main, NULL);
	ra = cmd(&pr->a, R_SETUP, 0, 0, 0, 0);
	rb = cmd(&pr->b, R_SETUP, 0, 0, 0, 0);
	assert_int_equal(ra.status, 0);
	assert_int_equal(rb.status, 0);
	assert_int_equal(cmd(&pr->a, R_CONNECT, (uint32_t)rb.v[0], rnr_retry, 0, 0).status, 0);
	assert_int_equal(cmd(&pr->b, R_CONNECT, (uint32_t)ra.v[0], rnr_retry, 0, 0).status, 0);
	pr->b_qpn = (uint32_t)rb.v[0];
	pr->b_rkey = rb.v[1];
	pr->b_addr = rb.v[2];
}

static void pair_up(struct pair *pr)
{
	pair_up_rnr(pr, 0);
}

static void pair_down(struct pair *pr)
{
	pid_t pid = fk_daemon_pid(pr->m);

	fkt_reap(&pr->a);
	fkt_reap(&pr->b);
	assert_int_equal(fkt_objects(pr->m), 0);
	fk_disconnect(pr->m);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

/* SEND and SEND_WITH_IMM land in the other process's receive queue. */
TR_TEST(send_and_send_imm_cross_process)
{
	struct pair pr;
	struct res r;

	(void)state;
	pair_up(&pr);
	assert_int_equal(cmd(&pr.b, R_POST_RECV, 2, 0, 0, 0).status, 0);
	cmd(&pr.a, R_SET, 0, 0, 0, 0x1122334455667788ull);
	r = cmd(&pr.a, R_SEND, IBV_WR_SEND, 0, 0, 64);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_SEND);
	r = cmd(&pr.b, R_RECV, 0, 0, 0, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_RECV);
	assert_int_equal(r.v[1] & 0xffffffff, 64);
	assert_int_equal(cmd(&pr.b, R_GET, 2048, 0, 0, 0).v[0], 0x1122334455667788ull);
	r = cmd(&pr.a, R_SEND, IBV_WR_SEND_WITH_IMM, 0, 0, 16);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	r = cmd(&pr.b, R_RECV, 0, 0, 0, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_true((r.v[1] >> 32) & IBV_WC_WITH_IMM);
	assert_int_equal(be32toh((uint32_t)r.v[2]), 0x1234);
	pair_down(&pr);
}

/* WRITE, WRITE_WITH_IMM and READ act on the other process's memory. */
TR_TEST(rdma_write_and_read_cross_process)
{
	struct pair pr;
	struct res r;

	(void)state;
	pair_up(&pr);
	cmd(&pr.a, R_SET, 0, 0, 0, 0xfeedfacecafef00dull);
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_WRITE, pr.b_addr + 512, pr.b_rkey, 8);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(cmd(&pr.b, R_GET, 512, 0, 0, 0).v[0], 0xfeedfacecafef00dull);
	assert_int_equal(cmd(&pr.b, R_POST_RECV, 1, 0, 0, 0).status, 0);
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_WRITE_WITH_IMM, pr.b_addr + 1024, pr.b_rkey, 8);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	r = cmd(&pr.b, R_RECV, 0, 0, 0, 0);
	assert_int_equal(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(cmd(&pr.b, R_GET, 1024, 0, 0, 0).v[0], 0xfeedfacecafef00dull);
	cmd(&pr.b, R_SET, 256, 0, 0, 0x0102030405060708ull);
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_READ, pr.b_addr + 256, pr.b_rkey, 8);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(r.v[2], 0x0102030405060708ull);
	pair_down(&pr);
}

/* WRITE and READ of 3 MiB + 5 bytes, past one transport record: every
 * byte lands in place, in both directions. */
TR_TEST(long_write_and_read_cross_process)
{
	const uint64_t len = (3u << 20) + 5;
	struct pair pr;
	struct res r;
	uint64_t want;

	(void)state;
	pair_up(&pr);
	cmd(&pr.a, R_FILL, 0, 0, 7, len);
	want = cmd(&pr.a, R_SUM, 0, 0, 0, len).v[0];
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_WRITE, pr.b_addr + 4096, pr.b_rkey, len);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(cmd(&pr.b, R_SUM, 4096, 0, 0, len).v[0], want);
	cmd(&pr.b, R_FILL, 4096, 0, 99, len);
	want = cmd(&pr.b, R_SUM, 4096, 0, 0, len).v[0];
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_READ, pr.b_addr + 4096, pr.b_rkey, len);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(cmd(&pr.a, R_SUM, 0, 0, 0, len).v[0], want);
	pair_down(&pr);
}

/* A message part way into the inbox of a process that stopped serving it
 * (5 MiB: more than its 4 MiB ring holds) and is then killed: the
 * requester finds the peer gone and the WQE ends as retry exceeded, rather
 * than waiting for room forever. A WRITE_WITH_IMM: it goes through the
 * inbox (a plain WRITE the requester places itself, stopped target or not). */
TR_TEST(long_write_to_a_killed_peer_ends_in_error)
{
	struct pair pr;
	struct res r;
	pid_t pid;

	(void)state;
	pair_up(&pr);
	fkt_stop(&pr.b);
	r = cmd(&pr.a, R_POST_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, pr.b_addr + 4096, pr.b_rkey, 5u << 20);
	assert_int_equal(r.status, 0);
	fkt_kill(&pr.b);
	r = cmd(&pr.a, R_POLL_SEND, 0, 0, 0, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_RETRY_EXC_ERR);
	pid = fk_daemon_pid(pr.m);
	fkt_reap(&pr.a);
	assert_int_equal(fkt_objects(pr.m), 0);
	fk_disconnect(pr.m);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

/*
 * A requester that dies inside the responder's inbox, holding the lock its
 * producers share (its HCA faults reading the message it copies there),
 * wedges nothing: another process's request into that inbox still goes,
 * once the dead holder is found gone, and lands. Both are WRITE_WITH_IMM, which go
 * through the inbox (a plain WRITE the requester places itself).
 */
TR_TEST(requester_dead_inside_the_inbox_wedges_nothing)
{
	struct pair pr;
	struct fkt_proc c;
	struct cmd m = { R_TRAP_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 0 };
	struct res r;
	pid_t pid;
	int st;

	(void)state;
	pair_up(&pr);
	m.b = pr.b_addr + 4096;
	m.c = pr.b_rkey;
	assert_int_equal(fkt_put(pr.a.to, &m, sizeof(m)), 0);
	assert_int_not_equal(fkt_get(pr.a.from, &r, sizeof(r)), 0);	/* no answer: it died */
	st = fkt_wait(pr.a.pid, 10000 * fkt_mult());
	fkt_fd_track(pr.a.to, false);
	fkt_fd_track(pr.a.from, false);
	close(pr.a.to);
	close(pr.a.from);
	printf("# requester: wait status %#x\n", st);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	/* a third process writes into the same inbox */
	c = fkt_spawn(agent_main, NULL);
	r = cmd(&c, R_SETUP, 0, 0, 0, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(cmd(&c, R_CONNECT, pr.b_qpn, 0, 0, 0).status, 0);
	assert_int_equal(cmd(&pr.b, R_POST_RECV, 1, 0, 0, 0).status, 0);
	cmd(&c, R_SET, 0, 0, 0, 0x600d600d600d600dull);
	r = cmd(&c, R_SEND, IBV_WR_RDMA_WRITE_WITH_IMM, pr.b_addr + 512, pr.b_rkey, 8);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(cmd(&pr.b, R_GET, 512, 0, 0, 0).v[0], 0x600d600d600d600dull);
	pid = fk_daemon_pid(pr.m);
	fkt_reap(&c);
	fkt_reap(&pr.b);
	assert_int_equal(fkt_objects(pr.m), 0);
	fk_disconnect(pr.m);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

/* Atomics run in the target process and return the original value. */
TR_TEST(atomics_cross_process)
{
	struct pair pr;
	struct res r;

	(void)state;
	pair_up(&pr);
	cmd(&pr.b, R_SET, 64, 0, 0, 40);
	r = cmd(&pr.a, R_SEND, IBV_WR_ATOMIC_FETCH_AND_ADD, pr.b_addr + 64, pr.b_rkey, 2);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_FETCH_ADD);
	assert_int_equal(r.v[2], 40);
	assert_int_equal(cmd(&pr.b, R_GET, 64, 0, 0, 0).v[0], 42);
	r = cmd(&pr.a, R_SEND, IBV_WR_ATOMIC_CMP_AND_SWP, pr.b_addr + 64, pr.b_rkey, 42);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_COMP_SWAP);
	assert_int_equal(r.v[2], 42);
	assert_int_equal(cmd(&pr.b, R_GET, 64, 0, 0, 0).v[0], 0xabcdef);
	pair_down(&pr);
}

/* A bad rkey is the requester's error completion (IB: NAK remote access). */
TR_TEST(remote_access_error_reaches_requester)
{
	struct pair pr;
	struct res r;

	(void)state;
	pair_up(&pr);
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_WRITE, pr.b_addr, pr.b_rkey ^ 0x5a5a, 8);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_REM_ACCESS_ERR);
	/* out of the region with the right key: the same */
	r = cmd(&pr.a, R_SEND, IBV_WR_RDMA_READ, pr.b_addr + BUF - 4, pr.b_rkey, 8);
	assert_int_equal(r.v[0], IBV_WC_WR_FLUSH_ERR);	/* the QP went to ERR */
	pair_down(&pr);
}

/* No receive posted on the other side: RNR retries exhausted (rnr_retry 0). */
TR_TEST(send_without_receive_is_rnr_error)
{
	struct pair pr;
	struct res r;

	(void)state;
	pair_up(&pr);
	r = cmd(&pr.a, R_SEND, IBV_WR_SEND, 0, 0, 8);
	assert_int_equal(r.v[0], IBV_WC_RNR_RETRY_EXC_ERR);
	pair_down(&pr);
}

/* A SEND the receiver has no WQE for is RNR-NAKed and retried; the WRITE
 * posted after it must not land first: the responder takes nothing of the
 * stream but the NAKed SEND (IBA vol 1 9.7.5.2.8), and both complete in
 * order once a receive is posted. */
TR_TEST(write_behind_rnr_send_waits_for_it)
{
	struct pair pr;
	struct res r;

	(void)state;
	pair_up_rnr(&pr, 7);				/* RNR retries without end */
	cmd(&pr.b, R_SET, 128, 0, 0, 1);
	cmd(&pr.a, R_SET, 8, 0, 0, 0x5151515151515151ull);
	assert_int_equal(cmd(&pr.a, R_SEND_WRITE, 0, pr.b_addr + 128, pr.b_rkey, 0).status, 0);
	usleep(50000);					/* many RNR rounds */
	assert_int_equal(cmd(&pr.b, R_GET, 128, 0, 0, 0).v[0], 1);	/* not overtaken */
	assert_int_equal(cmd(&pr.b, R_POST_RECV, 1, 0, 0, 0).status, 0);
	r = cmd(&pr.a, R_POLL_SEND, 0, 0, 0, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.v[1], 1);
	r = cmd(&pr.a, R_POLL_SEND, 0, 0, 0, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.v[1], 2);
	assert_int_equal(cmd(&pr.b, R_GET, 128, 0, 0, 0).v[0], 0x5151515151515151ull);
	assert_int_equal(cmd(&pr.b, R_RECV, 0, 0, 0, 0).v[0], IBV_WC_SUCCESS);
	pair_down(&pr);
}

/* The receiver sleeps on its completion channel; the sender's SEND wakes it
 * there (the receiver's progress thread ran the responder). */
TR_TEST(completion_channel_wakes_receiving_process)
{
	struct pair pr;
	struct res r;
	struct cmd m = { R_ARM_WAIT, 0, 0, 0, 0 };

	(void)state;
	pair_up(&pr);
	assert_int_equal(cmd(&pr.b, R_POST_RECV, 1, 0, 0, 0).status, 0);
	assert_int_equal(fkt_put(pr.b.to, &m, sizeof(m)), 0);
	assert_int_equal(fkt_get(pr.b.from, &r, sizeof(r)), 0);	/* armed, now asleep */
	assert_int_equal(r.status, 0);
	r = cmd(&pr.a, R_SEND, IBV_WR_SEND, 0, 0, 32);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(fkt_get(pr.b.from, &r, sizeof(r)), 0);	/* woken */
	assert_int_equal(r.status, 0);
	assert_int_equal(r.v[0], IBV_WC_SUCCESS);
	assert_int_equal(r.opcode, IBV_WC_RECV);
	assert_int_equal(r.v[1], 32);
	pair_down(&pr);
}

int main(int argc, char **argv)
{
	char scratch[PATH_MAX], err[512];

	fkt_setup("t5821");
	if (fp_env_setup(NULL, getenv("IBVCT_PROVIDER"), fkt_scratch, scratch,
			 sizeof(scratch), err, sizeof(err)))
		fkt_die("fp_env_setup: %s", err);
	return fkt_run(argc, argv);
}
