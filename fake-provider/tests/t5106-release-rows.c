/* SPDX-License-Identifier: MIT */
/*
 * t5106: the fake layers' rows of ref-impl's ibvct-release.def, under both
 * releases a script names (`rdma-core 44|56`), each check in a peer with a
 * fake host of its own:
 *   ATOMIC_WRITE  rxe's ibv_wr_atomic_write on RC: on Debian 12's kernel
 *                 (6.1) the post is taken and completes with
 *                 IBV_WC_LOC_QP_OP_ERR, the QP in error, the target
 *                 untouched; on 13's (6.12) 8 bytes stored (an atomic store),
 *                 IBV_WC_ATOMIC_WRITE; a misaligned address, a QP without
 *                 remote write (invalid request) and a key without it
 *                 (remote access) refused; to a QP of another process (the
 *                 transport; the requester places no such operation itself)
 *   WR_FLUSH      rxe's IBV_QP_EX_WITH_FLUSH: EOPNOTSUPP with 44; with 56
 *                 ibv_wr_flush completes as IBV_WC_FLUSH where region and
 *                 QP have the access its type names, else the NAK's
 *                 status; the device caps of 6.12's rxe
 *   MR_ACCESS_CHECK  reg_mr with the flush bits (6.1: EINVAL; 6.12:
 *                 the device's capability, else EOPNOTSUPP) and with
 *                 on-demand paging (EINVAL, EOPNOTSUPP)
 *   REQ_ERROR_FLUSHES  a bind rxe's requester fails and a SEND whose lkey
 *                 fails: their own status on 6.1 (MW_BIND_ERR,
 *                 LOC_QP_OP_ERR), IBV_WC_WR_FLUSH_ERR on 6.12; mlx5 keeps
 *                 its statuses on either
 *   MW_BIND_PD    a type 2 bind to a region of another PD: bound on 6.1,
 *                 refused on 6.12
 *   PORT_ACTIVE_SPEED_EX, CQ_EX_POLL_OVERRUN are t0022's and the suites'.
 * And the crash the rows came from: ibv_wr_atomic_write on profile rxe no
 * longer calls a NULL builder.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "tf.h"
#include "tr.h"

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		 IBV_ACCESS_REMOTE_ATOMIC)
#define FLUSH_ACC (IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT)

/* In a peer: a fake host of profile prof playing release rel. */
static void host_up(const char *prof, int rel)
{
	char path[64], scratch[4096], err[512];
	FILE *f;

	snprintf(path, sizeof(path), "rel-%s-%d.fps", prof, rel);
	f = fopen(path, "w");
	TR_ASSERT(f);
	fprintf(f, "profile %s\nrdma-core %d\ndevice %s0\n\tcap xrc\n"
		"\tport 1 state active link_layer ethernet\n", prof, rel, prof);
	fclose(f);
	TR_ASSERT_MSG(!fp_env_setup(path, getenv("IBVCT_PROVIDER"), ".", scratch, sizeof(scratch),
				    err, sizeof(err)), "fp_env_setup: %s", err);
}

struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;		/* a: the requester, b: the target */
	struct ibv_qp_ex *x;
	uint64_t *buf;			/* 4 KiB: [0..] local, [256..] remote */
	struct ibv_mr *mr;
};

/* a with send operations ops, b plain, connected over port 1 (RoCE), b
 * with access bacc; the region with access macc. 0, or the errno of the
 * step that failed (a's create: its errno). */
static int pair_up(struct pair *p, uint64_t ops, int bacc, int macc)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct tf_qp_opts o = TF_QP_DEFAULT;
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->ctx = tf_open_dev(NULL, &n);
	TR_ASSERT(p->ctx);
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = ibv_create_cq(p->ctx, 32, NULL, NULL, 0);
	TR_ASSERT(p->pd && p->cq && !posix_memalign((void **)&p->buf, 4096, 4096));
	memset(p->buf, 0, 4096);
	a.pd = p->pd;
	a.send_cq = a.recv_cq = p->cq;
	p->b = ibv_create_qp_ex(p->ctx, &a);
	TR_ASSERT(p->b);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = ops;
	errno = 0;
	p->a = ibv_create_qp_ex(p->ctx, &a);
	if (!p->a)
		return errno ? errno : EIO;
	p->x = ibv_qp_to_qp_ex(p->a);
	TR_ASSERT(p->x);
	errno = 0;
	p->mr = ibv_reg_mr(p->pd, p->buf, 4096, macc);
	if (!p->mr)
		return errno ? errno : EIO;
	o.access = ACC_ALL;
	TR_ASSERT(tf_qp_connect_o(p->a, 1, p->b->qp_num, &o) == 0);
	o.access = (unsigned int)bacc;
	TR_ASSERT(tf_qp_connect_o(p->b, 1, p->a->qp_num, &o) == 0);
	return 0;
}

static void pair_down(struct pair *p)
{
	if (p->a)
		TR_EXPECT(ibv_destroy_qp(p->a) == 0);
	if (p->b)
		TR_EXPECT(ibv_destroy_qp(p->b) == 0);
	if (p->mr)
		TR_EXPECT(ibv_dereg_mr(p->mr) == 0);
	TR_EXPECT(ibv_destroy_cq(p->cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(p->pd) == 0);
	TR_EXPECT(ibv_close_device(p->ctx) == 0);
	free(p->buf);
}

static enum ibv_qp_state qp_state(struct ibv_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	return ibv_query_qp(q, &a, IBV_QP_STATE, &ia) ? (enum ibv_qp_state)-1 : a.qp_state;
}

/* One WR built by fn, completed; its completion. */
static int one(struct pair *p, struct ibv_wc *wc, void (*fn)(struct pair *, void *), void *arg)
{
	int ret;

	ibv_wr_start(p->x);
	p->x->wr_id = 7;
	p->x->wr_flags = IBV_SEND_SIGNALED;
	fn(p, arg);
	ret = ibv_wr_complete(p->x);
	if (ret)
		return ret;
	TR_EXPECT_MSG(tf_poll(p->cq, wc) == 1, "no completion of the WR");
	return 0;
}

struct aw { uint64_t off; uint32_t rkey; uint64_t v; };

static void build_aw(struct pair *p, void *arg)
{
	struct aw *w = arg;

	ibv_wr_atomic_write(p->x, w->rkey ? w->rkey : p->mr->rkey,
			    (uintptr_t)p->buf + w->off, &w->v);
}

/* ---- ATOMIC_WRITE -------------------------------------------------------------- */
static void aw_peer(struct tr_peer *self, void *arg)
{
	int rel = (int)(intptr_t)arg;
	struct aw w = { .off = 2048, .v = 0x0102030405060708ull };
	struct ibv_wc wc;
	struct pair p;

	host_up("rxe", rel);
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_ATOMIC_WRITE, ACC_ALL, ACC_ALL) == 0);
	TR_ASSERT(p.x->wr_atomic_write);	/* asked for: set (rxe.c set_qp_send_ops) */
	TR_EXPECT(one(&p, &wc, build_aw, &w) == 0);
	if (rel == 44) {
		TR_EXPECT_MSG(wc.status == IBV_WC_LOC_QP_OP_ERR, "6.1: status %d", wc.status);
		TR_EXPECT(p.buf[256] == 0);
		TR_EXPECT(qp_state(p.a) == IBV_QPS_ERR);
	} else {
		TR_EXPECT_MSG(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE,
			      "6.12: status %d opcode %d", wc.status, wc.opcode);
		TR_EXPECT_MSG(p.buf[256] == w.v, "the target holds %#llx",
			      (unsigned long long)p.buf[256]);
		TR_EXPECT(qp_state(p.a) == IBV_QPS_RTS);
		/* misaligned: an invalid request (rxe_mr_do_atomic_write) */
		w.off = 2052;
		TR_EXPECT(one(&p, &wc, build_aw, &w) == 0);
		TR_EXPECT_MSG(wc.status == IBV_WC_REM_INV_REQ_ERR, "misaligned: %d", wc.status);
	}
	pair_down(&p);
	if (rel == 44)
		return;
	/* a key without remote write: remote access; a QP without it: invalid request */
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_ATOMIC_WRITE, ACC_ALL,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) == 0);
	w.off = 2048;
	TR_EXPECT(one(&p, &wc, build_aw, &w) == 0);
	TR_EXPECT_MSG(wc.status == IBV_WC_REM_ACCESS_ERR, "key without remote write: %d", wc.status);
	pair_down(&p);
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_ACCESS_REMOTE_READ, ACC_ALL) == 0);
	TR_EXPECT(one(&p, &wc, build_aw, &w) == 0);
	TR_EXPECT_MSG(wc.status == IBV_WC_REM_INV_REQ_ERR, "QP without remote write: %d", wc.status);
	TR_EXPECT(p.buf[256] == 0);
	pair_down(&p);
}

TR_TEST(atomic_write_is_the_kernel_s_of_the_release)
{
	struct tr_peer p;

	tr_peer_start(&p, aw_peer, (void *)(intptr_t)44);
	assert_int_equal(tr_peer_wait(&p), 0);
	tr_peer_start(&p, aw_peer, (void *)(intptr_t)56);
	assert_int_equal(tr_peer_wait(&p), 0);
}

/* The target in another process: its QP and region, the value the
 * requester wrote read in its own memory. */
static void aw_target(struct tr_peer *self, void *arg)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct ibv_context *ctx;
	uint64_t *buf = NULL;
	struct ibv_mr *mr;
	struct ibv_qp *b;
	int n = 0;

	ctx = tf_open_dev(NULL, &n);
	TR_ASSERT(ctx && !posix_memalign((void **)&buf, 4096, 4096));
	memset(buf, 0, 4096);
	a.pd = ibv_alloc_pd(ctx);
	a.send_cq = a.recv_cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	TR_ASSERT(a.pd && a.send_cq);
	b = ibv_create_qp_ex(ctx, &a);
	mr = ibv_reg_mr(a.pd, buf, 4096, ACC_ALL);
	TR_ASSERT(b && mr);
	tr_send(self, b->qp_num);
	tr_send(self, mr->rkey);
	tr_send(self, (uint32_t)(uintptr_t)buf);
	tr_send(self, (uint32_t)((uint64_t)(uintptr_t)buf >> 32));
	TR_ASSERT(tf_qp_connect_o(b, 1, tr_recv(self), &o) == 0);
	tr_send(self, 1);			/* ready */
	TR_EXPECT(tr_recv(self) == 2);		/* written */
	TR_EXPECT_MSG(buf[1] == 0x0a0b0c0d0e0f1011ull, "the target holds %#llx",
		      (unsigned long long)buf[1]);
	TR_EXPECT(ibv_destroy_qp(b) == 0);
	TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(ibv_destroy_cq(a.send_cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(a.pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

static void xp_peer(struct tr_peer *self, void *arg)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD |
		IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct tf_qp_opts o = TF_QP_DEFAULT;
	uint64_t v = 0x0a0b0c0d0e0f1011ull, raddr;
	struct ibv_context *ctx;
	struct ibv_qp_ex *x;
	struct ibv_qp *q;
	struct tr_peer t;
	struct ibv_wc wc;
	uint32_t qpn, rkey;
	int n = 0;

	host_up("rxe", 56);
	tr_peer_start(&t, aw_target, NULL);	/* before any verb of this process */
	qpn = tr_recv(&t);
	rkey = tr_recv(&t);
	raddr = tr_recv(&t);
	raddr |= (uint64_t)tr_recv(&t) << 32;
	ctx = tf_open_dev(NULL, &n);
	TR_ASSERT(ctx);
	a.pd = ibv_alloc_pd(ctx);
	a.send_cq = a.recv_cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	q = ibv_create_qp_ex(ctx, &a);
	TR_ASSERT(q && (x = ibv_qp_to_qp_ex(q)));
	TR_ASSERT(tf_qp_connect_o(q, 1, qpn, &o) == 0);
	tr_send(&t, q->qp_num);
	TR_EXPECT(tr_recv(&t) == 1);
	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, rkey, raddr + 8, &v);
	TR_EXPECT(ibv_wr_complete(x) == 0);
	TR_EXPECT(tf_poll(a.send_cq, &wc) == 1);
	TR_EXPECT_MSG(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE,
		      "to another process: status %d opcode %d", wc.status, wc.opcode);
	tr_send(&t, 2);
	TR_EXPECT(tr_peer_wait(&t) == 0);
	TR_EXPECT(ibv_destroy_qp(q) == 0);
	TR_EXPECT(ibv_destroy_cq(a.send_cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(a.pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(atomic_write_reaches_another_process)
{
	struct tr_peer p;

	tr_peer_start(&p, xp_peer, NULL);
	assert_int_equal(tr_peer_wait(&p), 0);
}

/* ---- WR_FLUSH -------------------------------------------------------------------- */
struct fl { uint8_t type, level; uint32_t len; };

static void build_fl(struct pair *p, void *arg)
{
	struct fl *f = arg;

	ibv_wr_flush(p->x, p->mr->rkey, (uintptr_t)p->buf + 2048, f->len, f->type, f->level);
}

static void fl_peer(struct tr_peer *self, void *arg)
{
	int rel = (int)(intptr_t)arg;
	struct fl f = { .type = IBV_FLUSH_GLOBAL, .level = IBV_FLUSH_RANGE, .len = 64 };
	struct ibv_device_attr_ex da;
	struct ibv_wc wc;
	struct pair p;
	int err;

	host_up("rxe", rel);
	err = pair_up(&p, IBV_QP_EX_WITH_FLUSH, ACC_ALL | FLUSH_ACC, ACC_ALL | FLUSH_ACC);
	TR_EXPECT(ibv_query_device_ex(p.ctx, NULL, &da) == 0);
	if (rel == 44) {
		/* librxe 44 has no flush in its RC set */
		TR_EXPECT_MSG(err == EOPNOTSUPP, "44: create with FLUSH: %d", err);
		TR_EXPECT(!(da.device_cap_flags_ex & (1ULL << 38)));
		pair_down(&p);
		return;
	}
	TR_ASSERT_MSG(err == 0, "56: create with FLUSH: %d", err);
	TR_EXPECT((da.device_cap_flags_ex & (7ULL << 38)) == (7ULL << 38));
	TR_ASSERT(p.x->wr_flush);
	TR_EXPECT(one(&p, &wc, build_fl, &f) == 0);
	TR_EXPECT_MSG(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH && wc.byte_len == 64,
		      "flush: status %d opcode %d len %u", wc.status, wc.opcode, wc.byte_len);
	f.type = IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT;
	f.level = IBV_FLUSH_MR;
	TR_EXPECT(one(&p, &wc, build_fl, &f) == 0);
	TR_EXPECT_MSG(wc.status == IBV_WC_SUCCESS, "flush of the region: %d", wc.status);
	pair_down(&p);
	/* the region without the access its type names: remote access */
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_FLUSH, ACC_ALL | FLUSH_ACC,
			  ACC_ALL | IBV_ACCESS_FLUSH_GLOBAL) == 0);
	f.type = IBV_FLUSH_PERSISTENT;
	f.level = IBV_FLUSH_RANGE;
	TR_EXPECT(one(&p, &wc, build_fl, &f) == 0);
	TR_EXPECT_MSG(wc.status == IBV_WC_REM_ACCESS_ERR, "region without persistent: %d",
		      wc.status);
	pair_down(&p);
	/* the QP without it: invalid request */
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_FLUSH, ACC_ALL, ACC_ALL | FLUSH_ACC) == 0);
	f.type = IBV_FLUSH_GLOBAL;
	TR_EXPECT(one(&p, &wc, build_fl, &f) == 0);
	TR_EXPECT_MSG(wc.status == IBV_WC_REM_INV_REQ_ERR, "QP without flush: %d", wc.status);
	pair_down(&p);
}

TR_TEST(flush_is_rxe_s_since_45_and_6_2)
{
	struct tr_peer p;

	tr_peer_start(&p, fl_peer, (void *)(intptr_t)44);
	assert_int_equal(tr_peer_wait(&p), 0);
	tr_peer_start(&p, fl_peer, (void *)(intptr_t)56);
	assert_int_equal(tr_peer_wait(&p), 0);
}

/* ---- REQ_ERROR_FLUSHES --------------------------------------------------------- */
struct ref_case { const char *prof; int rel; enum ibv_wc_status bind, send; };

static void build_send_bad_lkey(struct pair *p, void *arg)
{
	ibv_wr_send(p->x);
	ibv_wr_set_sge(p->x, p->mr->lkey + 0x100, (uintptr_t)p->buf, 64);
}

/* A type 2 bind to a region without MW_BIND, past its end, then (a new pair) a SEND
 * whose local key is no key: each WQE's status, the QP in error after it. */
static void ref_peer(struct tr_peer *self, void *arg)
{
	const struct ref_case *c = arg;
	struct ibv_mw_bind_info bi;
	struct ibv_wc wc;
	struct ibv_mw *mw;
	struct pair p;
	int n;

	host_up(c->prof, c->rel);
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND, ACC_ALL, ACC_ALL) == 0);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	TR_ASSERT(mw);
	bi = (struct ibv_mw_bind_info){ .mr = p.mr, .addr = (uintptr_t)p.buf, .length = 8192,
					.mw_access_flags = IBV_ACCESS_REMOTE_READ };
	ibv_wr_start(p.x);
	p.x->wr_id = 9;
	p.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(p.x, mw, ibv_inc_rkey(mw->rkey), &bi);
	TR_ASSERT(ibv_wr_complete(p.x) == 0);
	n = tf_poll(p.cq, &wc);
	TR_EXPECT_MSG(n == 1 && wc.wr_id == 9 && wc.status == c->bind,
		      "%s, rdma-core %d: the failing bind completed %d (%s), want %s", c->prof,
		      c->rel, n == 1 ? (int)wc.status : -1, n == 1 ? ibv_wc_status_str(wc.status) : "none",
		      ibv_wc_status_str(c->bind));
	TR_EXPECT(qp_state(p.a) == IBV_QPS_ERR);
	TR_EXPECT(ibv_dealloc_mw(mw) == 0);
	pair_down(&p);

	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_SEND, ACC_ALL, ACC_ALL) == 0);
	TR_EXPECT(one(&p, &wc, build_send_bad_lkey, NULL) == 0);
	TR_EXPECT_MSG(wc.status == c->send, "%s, rdma-core %d: a SEND with no such lkey: %s, want %s",
		      c->prof, c->rel, ibv_wc_status_str(wc.status), ibv_wc_status_str(c->send));
	TR_EXPECT(qp_state(p.a) == IBV_QPS_ERR);
	pair_down(&p);
}

TR_TEST(requester_errors_are_flushed_by_6_12_s_rxe)
{
	static const struct ref_case cases[] = {
		{ "rxe", 44, IBV_WC_MW_BIND_ERR, IBV_WC_LOC_QP_OP_ERR },
		{ "rxe", 56, IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR },
		/* a driver row of rxe's kernel only: mlx5 keeps each status */
		{ "mlx5", 56, IBV_WC_MW_BIND_ERR, IBV_WC_LOC_PROT_ERR },
	};
	struct tr_peer p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tr_peer_start(&p, ref_peer, (void *)&cases[i]);
		assert_int_equal(tr_peer_wait(&p), 0);
	}
}

/* ---- MW_BIND_PD ---------------------------------------------------------------- */
/* A type 2 window of the QP's PD bound to a region of another PD: bound on
 * 6.1's rxe, refused (and flushed) on 6.12's. */
static void mwpd_peer(struct tr_peer *self, void *arg)
{
	int rel = (int)(intptr_t)arg;
	struct ibv_mw_bind_info bi;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	enum ibv_wc_status want = rel == 44 ? IBV_WC_SUCCESS : IBV_WC_WR_FLUSH_ERR;

	host_up("rxe", rel);
	TR_ASSERT(pair_up(&p, IBV_QP_EX_WITH_BIND_MW, ACC_ALL, ACC_ALL) == 0);
	pd2 = ibv_alloc_pd(p.ctx);
	TR_ASSERT(pd2);
	mr2 = ibv_reg_mr(pd2, p.buf + 256, 1024, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	TR_ASSERT(mr2);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	TR_ASSERT(mw);
	bi = (struct ibv_mw_bind_info){ .mr = mr2, .addr = (uintptr_t)(p.buf + 256), .length = 64,
					.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	ibv_wr_start(p.x);
	p.x->wr_id = 11;
	p.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(p.x, mw, ibv_inc_rkey(mw->rkey), &bi);
	TR_ASSERT(ibv_wr_complete(p.x) == 0);
	TR_ASSERT(tf_poll(p.cq, &wc) == 1);
	TR_EXPECT_MSG(wc.status == want, "rdma-core %d: a type 2 bind to a region of another PD: %s, "
		      "want %s", rel, ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
	TR_EXPECT(qp_state(p.a) == (rel == 44 ? IBV_QPS_RTS : IBV_QPS_ERR));
	TR_EXPECT(ibv_dealloc_mw(mw) == 0);
	TR_EXPECT(ibv_dereg_mr(mr2) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd2) == 0);
	pair_down(&p);
}

TR_TEST(a_bind_s_pds_are_compared_by_6_12_s_rxe)
{
	struct tr_peer p;

	tr_peer_start(&p, mwpd_peer, (void *)(intptr_t)44);
	assert_int_equal(tr_peer_wait(&p), 0);
	tr_peer_start(&p, mwpd_peer, (void *)(intptr_t)56);
	assert_int_equal(tr_peer_wait(&p), 0);
}

/* ---- MR_ACCESS_CHECK ------------------------------------------------------------- */
struct acc_case { const char *prof; int rel; int access; int want; };

static void acc_peer(struct tr_peer *self, void *arg)
{
	const struct acc_case *c = arg;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	static char buf[4096] __attribute__((aligned(4096)));
	int n = 0, got;

	host_up(c->prof, c->rel);
	ctx = tf_open_dev(NULL, &n);
	TR_ASSERT(ctx);
	pd = ibv_alloc_pd(ctx);
	TR_ASSERT(pd);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), c->access);
	got = mr ? 0 : errno;
	TR_EXPECT_MSG(got == c->want, "%s, rdma-core %d, access %#x: %d, want %d", c->prof, c->rel,
		      c->access, got, c->want);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(mr_access_is_checked_as_the_release_s_kernel_does)
{
	static const struct acc_case cases[] = {
		{ "rxe", 44, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_GLOBAL, EINVAL },
		{ "rxe", 56, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_GLOBAL, 0 },
		{ "rxe", 56, IBV_ACCESS_LOCAL_WRITE | FLUSH_ACC, 0 },
		{ "mlx5", 56, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_PERSISTENT, EOPNOTSUPP },
		{ "strict", 44, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EINVAL },
		{ "strict", 56, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP },
		{ "rxe", 56, IBV_ACCESS_LOCAL_WRITE | (1 << 10), EINVAL },
	};
	struct tr_peer p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tr_peer_start(&p, acc_peer, (void *)&cases[i]);
		assert_int_equal(tr_peer_wait(&p), 0);
	}
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
