/* SPDX-License-Identifier: MIT */
/*
 * t1000: struct ibv_send_wr and what the device does with it (WR-): the
 * offset of qp_type.xrc.remote_srqn as the device reads it, XRC delivery
 * into the SRQ that remote_srqn names (many SRQs in one XRCD, every opcode
 * XRC allows, QPX-10) and into none when it names an SRQ of another domain
 * or no SRQ, an opcode XRC does not allow, garbage in qp_type ignored on
 * RC/UC/UD, and WRs of the old 72- and 80-byte sizes placed to end at a
 * guard page, so a library or provider reading past them crashes the test.
 * Posting to the queues an XRC QP lacks (QPX-11, QPX-12) has no defined
 * result upstream: those run on the reference target's strict profile only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "th.h"

#define NSRQ	4
#define BUF	4096
#define WR_1_1	72	/* sizeof(struct ibv_send_wr) up to libibverbs 1.1.7 */
#define WR_1_1_8 80	/* 1.1.8 and 1.2.0: + qp_type.xrc.remote_srqn */

struct xrc_rig {
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq[NSRQ];
	struct ibv_xrcd *x;
	struct ibv_srq *srq[NSRQ];
	uint32_t srqn[NSRQ];
	struct ibv_qp *ini, *tgt;
	char *lbuf, *rbuf;
	struct ibv_mr *lmr, *rmr;
	int newapi;			/* the initiator posts through ibv_qp_ex */
};

/* The operations an XRC_SEND QP carries (QPX-10), as send_ops_flags. */
#define XRC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE | \
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static void rig_up_api(struct th_ctx *t, struct xrc_rig *r, int newapi);

static void rig_up(struct th_ctx *t, struct xrc_rig *r)
{
	rig_up_api(t, r, 0);
}

/* Post through the API the rig was made for. */
static int rig_post(struct xrc_rig *r, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return r->newapi ? th_post_send_ex(r->ini, wr) : ibv_post_send(r->ini, wr, &bad);
}

static void rig_up_api(struct th_ctx *t, struct xrc_rig *r, int newapi)
{
	int i;

	memset(r, 0, sizeof(*r));
	r->pd = ibv_alloc_pd(t->ctx);
	r->scq = ibv_create_cq(t->ctx, 64, NULL, NULL, 0);
	r->x = th_xrcd(t->ctx, -1, O_CREAT);
	assert_non_null(r->pd);
	assert_non_null(r->scq);
	assert_non_null(r->x);
	r->lbuf = calloc(1, BUF);
	r->rbuf = calloc(1, BUF);
	assert_non_null(r->lbuf);
	assert_non_null(r->rbuf);
	r->lmr = ibv_reg_mr(r->pd, r->lbuf, BUF, IBV_ACCESS_LOCAL_WRITE);
	r->rmr = ibv_reg_mr(r->pd, r->rbuf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(r->lmr);
	assert_non_null(r->rmr);
	for (i = 0; i < NSRQ; i++) {
		/* one CQ per SRQ: where a completion shows up says which SRQ took it */
		r->rcq[i] = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
		assert_non_null(r->rcq[i]);
		r->srq[i] = th_xsrq(t->ctx, r->pd, r->x, r->rcq[i], 8);
		assert_non_null(r->srq[i]);
		assert_int_equal(ibv_get_srq_num(r->srq[i], &r->srqn[i]), 0);
	}
	r->newapi = newapi;
	r->ini = newapi ? th_ini_qp_ex(t->ctx, r->pd, r->scq, XRC_OPS)
			: th_ini_qp(t->ctx, r->pd, r->scq);
	if (!r->ini && newapi && errno == EOPNOTSUPP)
		th_ext_missing("XRC_SEND QPs with send_ops_flags: EOPNOTSUPP (no new post-send API)");
	r->tgt = th_tgt_qp(t->ctx, r->x);
	assert_non_null(r->ini);
	assert_non_null(r->tgt);
	assert_int_equal(th_pair_connect(r->tgt, r->ini, t->port, 1), 0);
}

static void rig_down(struct xrc_rig *r)
{
	int i;

	assert_int_equal(ibv_destroy_qp(r->ini), 0);
	assert_int_equal(ibv_destroy_qp(r->tgt), 0);
	for (i = 0; i < NSRQ; i++) {
		assert_int_equal(ibv_destroy_srq(r->srq[i]), 0);
		assert_int_equal(ibv_destroy_cq(r->rcq[i]), 0);
	}
	assert_int_equal(ibv_dereg_mr(r->lmr), 0);
	assert_int_equal(ibv_dereg_mr(r->rmr), 0);
	assert_int_equal(ibv_close_xrcd(r->x), 0);
	assert_int_equal(ibv_destroy_cq(r->scq), 0);
	assert_int_equal(ibv_dealloc_pd(r->pd), 0);
	free(r->lbuf);
	free(r->rbuf);
}

static void srq_post(struct xrc_rig *r, int i, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)(r->rbuf + 2048 + i * 64), 64, r->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_srq_recv(r->srq[i], &wr, &bad), 0);
}

/* Fill a WR for op towards SRQ i; remote addresses in rbuf. */
static void wr_fill(struct xrc_rig *r, struct ibv_send_wr *wr, struct ibv_sge *sge,
		    enum ibv_wr_opcode op, int i)
{
	sge->addr = (uintptr_t)r->lbuf;
	sge->length = (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) ? 8 : 16;
	sge->lkey = r->lmr->lkey;
	wr->wr_id = 0x1000u + (unsigned)op * 16 + (unsigned)i;
	wr->next = NULL;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->imm_data = htonl(0xc0de0000u + (unsigned)i);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = (uintptr_t)(r->rbuf + 8 * i);
		wr->wr.atomic.rkey = r->rmr->rkey;
		wr->wr.atomic.compare_add = 1;
		wr->wr.atomic.swap = 0;
	} else {
		wr->wr.rdma.remote_addr = (uintptr_t)(r->rbuf + 256 + 32 * i);
		wr->wr.rdma.rkey = r->rmr->rkey;
	}
}

/* What the traffic did, to compare the two post APIs (WRX-07). */
struct obs {
	int n;
	struct { uint64_t wr_id; int status, opcode, flags; uint32_t len, imm; } wc[96];
	char lbuf[BUF], rbuf[BUF];
};

static void obs_wc(struct obs *o, const struct ibv_wc *wc, int recv)
{
	if (!o)
		return;
	assert_true(o->n < 96);
	o->wc[o->n].wr_id = wc->wr_id;
	o->wc[o->n].status = wc->status;
	o->wc[o->n].opcode = wc->opcode;
	o->wc[o->n].flags = wc->wc_flags & IBV_WC_WITH_IMM;
	/* byte_len and imm are defined on the receive side only */
	o->wc[o->n].len = recv ? wc->byte_len : 0;
	o->wc[o->n].imm = recv && (wc->wc_flags & IBV_WC_WITH_IMM) ? wc->imm_data : 0;
	o->n++;
}

static void obs_same(const struct obs *a, const struct obs *b, const char *what)
{
	int i;

	if (a->n != b->n)
		th_fail("%s: %d completions through ibv_post_send, %d through the new API",
			what, a->n, b->n);
	for (i = 0; i < a->n; i++)
		if (memcmp(&a->wc[i], &b->wc[i], sizeof(a->wc[i])))
			th_fail("%s: completion %d differs: wr_id %#llx status %d opcode %d len %u "
				"by ibv_post_send, wr_id %#llx status %d opcode %d len %u by the new API",
				what, i, (unsigned long long)a->wc[i].wr_id, a->wc[i].status,
				a->wc[i].opcode, a->wc[i].len, (unsigned long long)b->wc[i].wr_id,
				b->wc[i].status, b->wc[i].opcode, b->wc[i].len);
	if (memcmp(a->lbuf, b->lbuf, BUF) || memcmp(a->rbuf, b->rbuf, BUF))
		th_fail("%s: memory differs after the same traffic through the two APIs", what);
}

static void expect_send_ok_obs(struct xrc_rig *r, uint64_t wr_id, struct obs *o)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	assert_int_equal(th_poll(r->scq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	obs_wc(o, &wc, 0);
}

static void expect_send_ok(struct xrc_rig *r, uint64_t wr_id)
{
	expect_send_ok_obs(r, wr_id, NULL);
}

/* Exactly SRQ i's CQ holds one receive completion; the others none. */
static void expect_recv_on_obs(struct xrc_rig *r, int i, uint64_t wr_id, int imm, struct obs *o)
{
	struct ibv_wc wc;
	int j;

	for (j = 0; j < NSRQ; j++) {
		if (j == i)
			continue;
		if (ibv_poll_cq(r->rcq[j], 1, &wc) != 0)
			th_fail("a completion for SRQ %d (srqn %#x) landed on SRQ %d's CQ", i,
				r->srqn[i], j);
	}
	memset(&wc, 0, sizeof(wc));
	assert_int_equal(th_poll(r->rcq[i], &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.qp_num, r->tgt->qp_num);
	if (imm) {
		assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(ntohl(wc.imm_data), 0xc0de0000u + (unsigned)i);
	}
	obs_wc(o, &wc, 1);
}

static void expect_recv_on(struct xrc_rig *r, int i, uint64_t wr_id, int imm)
{
	expect_recv_on_obs(r, i, wr_id, imm, NULL);
}

/* Each opcode to each SRQ, backwards, through the API newapi says; the
 * SRQ it names must take it. o (or NULL) keeps what happened. */
static void deliver_ops_api(struct th_ctx *t, const enum ibv_wr_opcode *ops, size_t nops,
			    int newapi, struct obs *o)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct xrc_rig r;
	size_t k;
	int i;

	rig_up_api(t, &r, newapi);
	for (k = 0; k < nops; k++) {
		/* backwards, so "the first SRQ of the domain" is never right by luck */
		for (i = NSRQ - 1; i >= 0; i--) {
			int consumes = ops[k] == IBV_WR_SEND || ops[k] == IBV_WR_SEND_WITH_IMM ||
				       ops[k] == IBV_WR_RDMA_WRITE_WITH_IMM;

			memset(&wr, 0, sizeof(wr));
			wr_fill(&r, &wr, &sge, ops[k], i);
			wr.qp_type.xrc.remote_srqn = r.srqn[i];
			memset(r.lbuf, 'a' + i, 16);
			if (consumes)
				srq_post(&r, i, 0x900u + (unsigned)i);
			assert_int_equal(rig_post(&r, &wr), 0);
			printf("opcode %d to SRQ %d (srqn %#x)%s\n", ops[k], i, r.srqn[i],
			       newapi ? " through ibv_wr_*" : "");
			expect_send_ok_obs(&r, wr.wr_id, o);
			if (consumes)
				expect_recv_on_obs(&r, i, 0x900u + (unsigned)i,
						   ops[k] != IBV_WR_SEND, o);
			if (ops[k] == IBV_WR_RDMA_WRITE || ops[k] == IBV_WR_RDMA_WRITE_WITH_IMM)
				assert_int_equal(r.rbuf[256 + 32 * i], 'a' + i);
		}
	}
	if (o) {
		memcpy(o->lbuf, r.lbuf, BUF);
		memcpy(o->rbuf, r.rbuf, BUF);
	}
	th_note("%zu opcodes x %d SRQs in one XRCD delivered as %s named them", nops, NSRQ,
		newapi ? "ibv_wr_set_xrc_srqn" : "remote_srqn");
	rig_down(&r);
}

static void deliver_ops(struct th_ctx *t, const enum ibv_wr_opcode *ops, size_t nops)
{
	deliver_ops_api(t, ops, nops, 0, NULL);
}

TH_TEST(each_send_lands_in_the_srq_remote_srqn_names, "WR-03 QPX-10 SRQX-11 SRQX-13", TH_XRC)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM };

	deliver_ops(t, ops, sizeof(ops) / sizeof(ops[0]));
}

/* The other opcodes XRC allows (QPX-10); WRITE_WITH_IMM consumes a WQE of
 * the named SRQ, the rest reach memory in the SRQ's PD. */
TH_TEST(rdma_and_atomics_reach_the_srq_remote_srqn_names, "WR-03 QPX-10 SRQX-13", TH_XRC)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};

	deliver_ops(t, ops, sizeof(ops) / sizeof(ops[0]));
}

/* The device reads remote_srqn at byte 72 (WR-01): write it through the raw
 * offset of an 80-byte (1.1.8) WR that ends at a guard page. */
TH_TEST(remote_srqn_is_read_at_offset_72, "WR-01 WR-06 ABI-06", TH_XRC)
{
	struct ibv_send_wr *wr = th_guard_alloc(WR_1_1_8), *bad;
	struct ibv_sge sge;
	struct xrc_rig r;
	uint32_t n;

	assert_int_equal(offsetof(struct ibv_send_wr, qp_type.xrc.remote_srqn), 72);
	rig_up(t, &r);
	wr_fill(&r, wr, &sge, IBV_WR_SEND, 2);
	n = r.srqn[2];
	memcpy((char *)wr + 72, &n, sizeof(n));
	srq_post(&r, 2, 0x902);
	assert_int_equal(ibv_post_send(r.ini, wr, &bad), 0);
	expect_send_ok(&r, wr->wr_id);
	expect_recv_on(&r, 2, 0x902, 0);
	th_guard_free(wr, WR_1_1_8);
	rig_down(&r);
}

/* ---- non-XRC types ------------------------------------------------------------ */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_ah *ah;
	char *buf;
	struct ibv_mr *mr;
};

/* newapi: -1 the 1.1 create_qp; 0 create_qp_ex without the new API's
 * bit; else the send_ops_flags of the new API for QP a. */
static void pair_up_api(struct th_ctx *t, struct pair *p, enum ibv_qp_type type, int64_t ops);

static void pair_up(struct th_ctx *t, struct pair *p, enum ibv_qp_type type)
{
	pair_up_api(t, p, type, -1);
}

static void pair_up_api(struct th_ctx *t, struct pair *p, enum ibv_qp_type type, int64_t ops)
{
	struct ibv_ah_attr aa;

	memset(p, 0, sizeof(*p));
	p->pd = ibv_alloc_pd(t->ctx);
	p->cq = ibv_create_cq(t->ctx, 64, NULL, NULL, 0);
	assert_non_null(p->pd);
	assert_non_null(p->cq);
	p->buf = calloc(1, BUF);
	assert_non_null(p->buf);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ |
			   (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_ATOMIC : 0));
	assert_non_null(p->mr);
	if (ops < 0) {
		p->a = th_rc_qp(p->pd, p->cq, type);
	} else {
		p->a = th_rc_qp_ex(t->ctx, p->pd, p->cq, type, (uint64_t)ops);
		if (!p->a && ops && errno == EOPNOTSUPP)
			th_ext_missing("type %d QPs with send_ops_flags %#llx: EOPNOTSUPP (no new post-send API)",
				type, (unsigned long long)ops);
	}
	p->b = th_rc_qp(p->pd, p->cq, type);
	assert_non_null(p->a);
	assert_non_null(p->b);
	assert_int_equal(th_pair_connect(p->a, p->b, t->port, 0), 0);
	if (type == IBV_QPT_UD) {
		th_loopback_av(t->ctx, t->port, &aa);
		p->ah = ibv_create_ah(p->pd, &aa);
		assert_non_null(p->ah);
	}
}

static void pair_down(struct pair *p)
{
	if (p->ah)
		assert_int_equal(ibv_destroy_ah(p->ah), 0);
	assert_int_equal(ibv_destroy_qp(p->a), 0);
	assert_int_equal(ibv_destroy_qp(p->b), 0);
	assert_int_equal(ibv_dereg_mr(p->mr), 0);
	assert_int_equal(ibv_destroy_cq(p->cq), 0);
	assert_int_equal(ibv_dealloc_pd(p->pd), 0);
	free(p->buf);
}

/* Post SEND a -> b with wr (the caller's memory, of any size): b receives. */
static void send_through(struct pair *p, struct ibv_send_wr *wr, uint64_t id)
{
	struct ibv_sge rs = { (uintptr_t)(p->buf + 1024), 512, p->mr->lkey };
	struct ibv_sge ss = { (uintptr_t)p->buf, 32, p->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = id + 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i, seen = 0;

	assert_int_equal(ibv_post_recv(p->b, &rwr, &rbad), 0);
	wr->wr_id = id;
	wr->next = NULL;
	wr->sg_list = &ss;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (p->ah) {
		wr->wr.ud.ah = p->ah;
		wr->wr.ud.remote_qpn = p->b->qp_num;
		wr->wr.ud.remote_qkey = 0x11111111;
	}
	assert_int_equal(ibv_post_send(p->a, wr, &bad), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(th_poll(p->cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		seen |= wc.wr_id == id ? 1 : wc.wr_id == id + 1 ? 2 : 4;
	}
	assert_int_equal(seen, 3);
}

TH_TEST(qp_type_garbage_is_ignored_on_rc_uc_ud, "WR-02", 0)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct ibv_send_wr *wr72 = th_guard_alloc(WR_1_1), wr;
	struct pair p;
	size_t k;

	for (k = 0; k < 3; k++) {
		pair_up(t, &p, types[k]);
		/* a full WR with garbage where an XRC srqn and bind/tso would be */
		memset(&wr, 0xa5, sizeof(wr));
		wr.qp_type.xrc.remote_srqn = 0xdeadbeef;
		send_through(&p, &wr, 0x10 + k * 4);
		/* and an old 72-byte one: any look at byte 72 faults */
		memset(wr72, 0, WR_1_1);
		send_through(&p, wr72, 0x12 + k * 4);
		pair_down(&p);
	}
	th_guard_free(wr72, WR_1_1);
}

TH_TEST(wr_of_72_bytes_at_guard_page_posts_on_rc, "WR-02 WR-06 ABI-06", 0)
{
	struct ibv_send_wr *w1 = th_guard_alloc(WR_1_1), *w2 = th_guard_alloc(WR_1_1), *bad;
	struct ibv_sge s1, s2;
	struct ibv_wc wc;
	struct pair p;

	pair_up(t, &p, IBV_QPT_RC);
	send_through(&p, w1, 0x20);
	/* a list of two old WRs: SEND then RDMA WRITE, linked by next */
	memset(w1, 0, WR_1_1);
	memset(w2, 0, WR_1_1);
	s1 = (struct ibv_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	s2 = s1;
	w1->wr_id = 0x31;
	w1->next = w2;
	w1->sg_list = &s1;
	w1->num_sge = 1;
	w1->opcode = IBV_WR_RDMA_WRITE;
	w1->wr.rdma.remote_addr = (uintptr_t)(p.buf + 3000);
	w1->wr.rdma.rkey = p.mr->rkey;
	w2->wr_id = 0x32;
	w2->sg_list = &s2;
	w2->num_sge = 1;
	w2->opcode = IBV_WR_RDMA_WRITE;
	w2->send_flags = IBV_SEND_SIGNALED;
	w2->wr.rdma.remote_addr = (uintptr_t)(p.buf + 3100);
	w2->wr.rdma.rkey = p.mr->rkey;
	memcpy(p.buf, "old-wr72", 8);
	assert_int_equal(ibv_post_send(p.a, w1, &bad), 0);
	assert_int_equal(th_poll(p.cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 0x32);
	assert_memory_equal(p.buf + 3000, "old-wr72", 8);
	assert_memory_equal(p.buf + 3100, "old-wr72", 8);
	pair_down(&p);
	th_guard_free(w1, WR_1_1);
	th_guard_free(w2, WR_1_1);
}

/* ---- XRC at its edges ----------------------------------------------------------- */
/* A completion within 3 s (a retry budget of the rig's timeout 14 and
 * retry_cnt 7 is about 0.5 s); 1 or 0. */
static int poll_long(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i;

	for (i = 0; i < 3; i++)
		if (th_poll(cq, wc))
			return 1;
	return 0;
}

/* No completion on any of the rig's SRQ CQs. */
static void expect_no_recv(struct xrc_rig *r, const char *what)
{
	struct ibv_wc wc;
	int j;

	for (j = 0; j < NSRQ; j++)
		if (ibv_poll_cq(r->rcq[j], 1, &wc) != 0)
			th_fail("%s: a completion landed on SRQ %d's CQ (wr_id %#llx)", what, j,
				(unsigned long long)wc.wr_id);
}

/* A fresh XRC_SEND -> XRC_RECV pair in the rig's domain, both in RTS. */
static void pair_new(struct th_ctx *t, struct xrc_rig *r, struct ibv_qp **ini, struct ibv_qp **tgt)
{
	*ini = th_ini_qp(t->ctx, r->pd, r->scq);
	*tgt = th_tgt_qp(t->ctx, r->x);
	assert_non_null(*ini);
	assert_non_null(*tgt);
	assert_int_equal(th_pair_connect(*tgt, *ini, t->port, 1), 0);
}

/* A SEND through ini naming srqn must come back with an error completion
 * and land nowhere. The status is the target's NAK as the HCA reports it:
 * on the reference target IBV_WC_REM_INV_REQ_ERR (an XRC SRQ number that is
 * no XRC SRQ of the target QP's domain: an invalid request, IBA 9.7.5.2.8);
 * the spec (section 9) leaves what an initiator sees hardware-defined, so
 * elsewhere any error status is accepted and noted. */
static void send_is_refused(struct xrc_rig *r, struct ibv_qp *ini, uint32_t srqn,
			    struct ibv_cq *other_cq, const char *what)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr_fill(r, &wr, &sge, IBV_WR_SEND, 0);
	wr.qp_type.xrc.remote_srqn = srqn;
	assert_int_equal(ibv_post_send(ini, &wr, &bad), 0);
	if (!poll_long(r->scq, &wc))
		th_fail("%s: no completion for the send", what);
	assert_int_equal(wc.wr_id, wr.wr_id);
	if (wc.status == IBV_WC_SUCCESS)
		th_fail("%s (srqn %#x): the send completed successfully", what, srqn);
	if (th_strict())
		assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	th_note("%s (srqn %#x): %s", what, srqn, ibv_wc_status_str(wc.status));
	expect_no_recv(r, what);
	if (other_cq && ibv_poll_cq(other_cq, 1, &wc) != 0)
		th_fail("%s: the other domain's SRQ took it", what);
}

/* WR-03: remote_srqn must name an XRC SRQ of the target QP's domain. An SRQ
 * of another domain takes nothing, nor does a number that names no SRQ;
 * the SRQs keep their receive WQEs for the next good send. */
TH_TEST(remote_srqn_of_another_domain_or_none_lands_nowhere, "WR-03", TH_XRC)
{
	struct ibv_xrcd *y = th_xrcd(t->ctx, -1, O_CREAT);
	struct ibv_cq *ycq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_srq *ys;
	struct ibv_sge rsge, sge;
	struct ibv_recv_wr rwr = { .wr_id = 0x7777, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_qp *ini2, *tgt2, *ini3, *tgt3;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	struct xrc_rig r;
	uint32_t ysrqn, none;
	int i;

	assert_non_null(y);
	assert_non_null(ycq);
	rig_up(t, &r);
	ys = th_xsrq(t->ctx, r.pd, y, ycq, 4);
	assert_non_null(ys);
	assert_int_equal(ibv_get_srq_num(ys, &ysrqn), 0);
	rsge.addr = (uintptr_t)r.rbuf;
	rsge.length = 64;
	rsge.lkey = r.rmr->lkey;
	assert_int_equal(ibv_post_srq_recv(ys, &rwr, &rbad), 0);
	for (i = 0; i < NSRQ; i++)
		srq_post(&r, i, 0x900u + (unsigned)i);
	/* a number no SRQ of the device has: past all of them */
	none = ysrqn;
	for (i = 0; i < NSRQ; i++)
		if (r.srqn[i] > none)
			none = r.srqn[i];
	none = (none + 0x1000) & 0xffffff;
	send_is_refused(&r, r.ini, ysrqn, ycq, "an SRQ of another XRC domain");
	/* the initiator is in error now; a fresh pair for the next case */
	pair_new(t, &r, &ini2, &tgt2);
	send_is_refused(&r, ini2, none, ycq, "a number that names no SRQ");
	/* nothing was taken: the next good send gets SRQ 0's first WQE */
	pair_new(t, &r, &ini3, &tgt3);
	memset(&wr, 0, sizeof(wr));
	wr_fill(&r, &wr, &sge, IBV_WR_SEND, 0);
	wr.qp_type.xrc.remote_srqn = r.srqn[0];
	assert_int_equal(ibv_post_send(ini3, &wr, &bad), 0);
	expect_send_ok(&r, wr.wr_id);
	assert_int_equal(th_poll(r.rcq[0], &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 0x900);
	assert_int_equal(ibv_poll_cq(ycq, 1, &wc), 0);
	assert_int_equal(ibv_destroy_qp(ini3), 0);
	assert_int_equal(ibv_destroy_qp(tgt3), 0);
	assert_int_equal(ibv_destroy_qp(ini2), 0);
	assert_int_equal(ibv_destroy_qp(tgt2), 0);
	assert_int_equal(ibv_destroy_srq(ys), 0);
	rig_down(&r);
	assert_int_equal(ibv_destroy_cq(ycq), 0);
	assert_int_equal(ibv_close_xrcd(y), 0);
}

/* QPX-10: TSO is not among XRC_SEND's opcodes (ibv_post_send.3). The
 * reference refuses it at post time: EINVAL, *bad_wr the WR, nothing
 * queued. A driver may also take it and fail it in the hardware (mlx5
 * writes any opcode of its table: rdma-core v44.0 providers/mlx5/qp.c
 * _mlx5_post_send), so elsewhere an error completion is accepted too, and
 * noted; neither may deliver anything. */
TH_TEST(xrc_send_refuses_an_opcode_xrc_lacks, "QPX-10", TH_XRC)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct xrc_rig r;
	int ret;

	rig_up(t, &r);
	srq_post(&r, 1, 0x901);
	memset(&wr, 0, sizeof(wr));
	wr_fill(&r, &wr, &sge, IBV_WR_SEND, 1);
	wr.opcode = IBV_WR_TSO;
	wr.qp_type.xrc.remote_srqn = r.srqn[1];
	ret = ibv_post_send(r.ini, &wr, &bad);
	if (ret) {
		assert_ptr_equal(bad, &wr);
		if (th_strict())
			assert_int_equal(ret, EINVAL);
		th_note("TSO on XRC_SEND: post_send returned %d (%s)", ret, strerror(ret));
		/* nothing was queued: no completion, and the QP still sends */
		assert_int_equal(ibv_poll_cq(r.scq, 1, &wc), 0);
		expect_no_recv(&r, "TSO refused at post");
		wr_fill(&r, &wr, &sge, IBV_WR_SEND, 1);
		wr.qp_type.xrc.remote_srqn = r.srqn[1];
		assert_int_equal(ibv_post_send(r.ini, &wr, &bad), 0);
		expect_send_ok(&r, wr.wr_id);
		expect_recv_on(&r, 1, 0x901, 0);
	} else {
		if (th_strict())
			th_fail("TSO on XRC_SEND was taken by post_send");
		if (!poll_long(r.scq, &wc))
			th_fail("TSO on XRC_SEND: taken, but no completion");
		if (wc.status == IBV_WC_SUCCESS)
			th_fail("TSO on XRC_SEND completed successfully");
		th_note("TSO on XRC_SEND: taken, completed with %s", ibv_wc_status_str(wc.status));
		expect_no_recv(&r, "TSO on XRC_SEND");
	}
	rig_down(&r);
}

/* QPX-11, QPX-12: an XRC QP has no receive queue, a target (created or
 * opened) no send queue. Upstream gives no defined result (mlx4/mlx5 run
 * off a zero-sized queue or a NULL CQ: spec QPX-11), so this runs on the
 * reference target's strict profile only, which does what the spec
 * recommends: fail with EINVAL and *bad_wr the first WR, nothing taken. */
static void strict_only(const char *id)
{
	if (!th_strict())
		th_skip("%s has no defined result upstream: checked on the reference target's "
			"strict profile only, never posted to a real provider", id);
}

/* After a refused post nothing moved: no completion anywhere, and the rig
 * still delivers a send into SRQ 3. */
static void rig_untouched(struct xrc_rig *r, const char *what)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;

	assert_int_equal(ibv_poll_cq(r->scq, 1, &wc), 0);
	expect_no_recv(r, what);
	srq_post(r, 3, 0x903);
	memset(&wr, 0, sizeof(wr));
	wr_fill(r, &wr, &sge, IBV_WR_SEND, 3);
	wr.qp_type.xrc.remote_srqn = r->srqn[3];
	assert_int_equal(ibv_post_send(r->ini, &wr, &bad), 0);
	expect_send_ok(r, wr.wr_id);
	expect_recv_on(r, 3, 0x903, 0);
}

TH_TEST(post_recv_on_xrc_qps_fails_and_takes_nothing, "QPX-11", TH_XRC)
{
	struct ibv_sge sge;
	struct ibv_recv_wr w2, w1, *bad;
	struct xrc_rig r;
	struct ibv_qp *o, *qs[3];
	const char *names[3] = { "XRC_SEND", "XRC_RECV", "an opened XRC_RECV" };
	int i;

	strict_only("QPX-11");
	rig_up(t, &r);
	o = th_open_tgt(t->ctx, r.x, r.tgt->qp_num);
	assert_non_null(o);
	qs[0] = r.ini;
	qs[1] = r.tgt;
	qs[2] = o;
	sge = (struct ibv_sge){ (uintptr_t)r.rbuf, 64, r.rmr->lkey };
	for (i = 0; i < 3; i++) {
		/* the first without a scatter entry: it fits any queue's WQE, so
		 * only the missing queue can refuse it */
		w2 = (struct ibv_recv_wr){ .wr_id = 0x52, .sg_list = &sge, .num_sge = 1 };
		w1 = (struct ibv_recv_wr){ .wr_id = 0x51, .next = &w2 };
		bad = NULL;
		if (ibv_post_recv(qs[i], &w1, &bad) != EINVAL)
			th_fail("post_recv on %s: not EINVAL", names[i]);
		if (bad != &w1)
			th_fail("post_recv on %s: *bad_wr is not the first WR", names[i]);
	}
	rig_untouched(&r, "post_recv refused");
	assert_int_equal(ibv_destroy_qp(o), 0);
	rig_down(&r);
}

TH_TEST(post_send_on_xrc_recv_fails_and_takes_nothing, "QPX-12", TH_XRC)
{
	struct ibv_send_wr w1, w2, *bad;
	struct ibv_sge sge;
	struct xrc_rig r;
	struct ibv_qp *o, *qs[2];
	int i;

	strict_only("QPX-12");
	rig_up(t, &r);
	o = th_open_tgt(t->ctx, r.x, r.tgt->qp_num);
	assert_non_null(o);
	qs[0] = r.tgt;	/* in RTS: a state that could send, had it a queue */
	qs[1] = o;
	for (i = 0; i < 2; i++) {
		memset(&w1, 0, sizeof(w1));
		memset(&w2, 0, sizeof(w2));
		wr_fill(&r, &w1, &sge, IBV_WR_SEND, 0);
		wr_fill(&r, &w2, &sge, IBV_WR_SEND, 0);
		w1.next = &w2;
		w1.qp_type.xrc.remote_srqn = w2.qp_type.xrc.remote_srqn = r.srqn[0];
		bad = NULL;
		if (ibv_post_send(qs[i], &w1, &bad) != EINVAL)
			th_fail("post_send on %s XRC_RECV: not EINVAL", i ? "an opened" : "a created");
		if (bad != &w1)
			th_fail("post_send on %s XRC_RECV: *bad_wr is not the first WR",
				i ? "an opened" : "a created");
	}
	rig_untouched(&r, "post_send refused");
	assert_int_equal(ibv_destroy_qp(o), 0);
	rig_down(&r);
}


/* ---- the new post-send API (WR-04, WRX-) ------------------------------------- */
/* WR-04, WRX-05, WRX-07: every XRC opcode to each of many SRQs of one domain
 * through ibv_wr_set_xrc_srqn lands in the SRQ it names, and the traffic
 * ends exactly as the same WRs through ibv_post_send and remote_srqn. */
TH_TEST(wr_set_xrc_srqn_lands_each_op_in_the_srq_it_names, "WR-04 WRX-05 WRX-07", TH_XRC)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct obs *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	deliver_ops_api(t, ops, sizeof(ops) / sizeof(ops[0]), 0, a);
	deliver_ops_api(t, ops, sizeof(ops) / sizeof(ops[0]), 1, b);
	obs_same(a, b, "XRC, every opcode, 4 SRQs");
	th_note("%d completions, the same through both APIs", a->n);
	free(a);
	free(b);
}

#define RC_OPS (XRC_OPS)
#define UC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE | \
		IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
#define UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

/* One WR of the comparison: opcode, SGE count, inline. */
struct pwr { enum ibv_wr_opcode op; int nsge, inl; };

/* Post each WR a -> b through one API and keep what happened. */
static void pair_traffic(struct th_ctx *t, enum ibv_qp_type type, uint64_t ops,
			 const struct pwr *w, size_t nw, int newapi, struct obs *o)
{
	struct pair p;
	size_t k;
	int i;

	pair_up_api(t, &p, type, newapi ? (int64_t)ops : 0);
	if (newapi && !ibv_qp_to_qp_ex(p.a))
		th_fail("a QP made with send_ops_flags has no ibv_qp_ex");
	for (i = 0; i < 512; i++)
		p.buf[i] = (char)(i * 7 + 1);
	for (k = 0; k < nw; k++) {
		struct ibv_sge ss[2], rs = { (uintptr_t)(p.buf + 1024), 512, p.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 0x700 + k, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_send_wr wr, *bad;
		int consumes = w[k].op == IBV_WR_SEND || w[k].op == IBV_WR_SEND_WITH_IMM ||
			       w[k].op == IBV_WR_RDMA_WRITE_WITH_IMM;
		int atomic = w[k].op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			     w[k].op == IBV_WR_ATOMIC_FETCH_AND_ADD;
		struct ibv_wc wc[2], *snd = NULL, *rcv = NULL;
		int got = 0;

		memset(&wr, 0, sizeof(wr));
		for (i = 0; i < w[k].nsge; i++) {
			ss[i].addr = (uintptr_t)(p.buf + 64 * k + 16 * i);
			ss[i].length = atomic ? 8 : 16;
			ss[i].lkey = p.mr->lkey;
		}
		if (w[k].op == IBV_WR_RDMA_READ || atomic)
			ss[0].addr = (uintptr_t)(p.buf + 3072 + 16 * k);
		wr.wr_id = 0x100 + k;
		wr.sg_list = ss;
		wr.num_sge = w[k].nsge;
		wr.opcode = w[k].op;
		wr.send_flags = IBV_SEND_SIGNALED | (w[k].inl ? IBV_SEND_INLINE : 0);
		wr.imm_data = htonl(0xabc00000u + (unsigned)k);
		if (atomic) {
			wr.wr.atomic.remote_addr = (uintptr_t)(p.buf + 3584);
			wr.wr.atomic.rkey = p.mr->rkey;
			wr.wr.atomic.compare_add = w[k].op == IBV_WR_ATOMIC_CMP_AND_SWP ? 0 : 5;
			wr.wr.atomic.swap = 0x1122334455667788ull;
		} else if (type == IBV_QPT_UD) {
			wr.wr.ud.ah = p.ah;
			wr.wr.ud.remote_qpn = p.b->qp_num;
			wr.wr.ud.remote_qkey = 0x11111111;
		} else {
			wr.wr.rdma.remote_addr = (uintptr_t)(p.buf + (w[k].op == IBV_WR_RDMA_READ ?
								    64 * k : 2048 + 64 * k));
			wr.wr.rdma.rkey = p.mr->rkey;
		}
		if (consumes)
			assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), 0);
		if (newapi)
			assert_int_equal(th_post_send_ex(p.a, &wr), 0);
		else
			assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
		while (got < 1 + consumes) {
			assert_int_equal(th_poll(p.cq, &wc[got]), 1);
			got++;
		}
		for (i = 0; i < got; i++) {
			if (wc[i].wr_id == wr.wr_id)
				snd = &wc[i];
			else
				rcv = &wc[i];
		}
		assert_non_null(snd);
		if (snd->status != IBV_WC_SUCCESS)
			th_fail("opcode %d%s: status %d", w[k].op, newapi ? " (new API)" : "",
				snd->status);
		obs_wc(o, snd, 0);
		if (consumes) {
			assert_non_null(rcv);
			obs_wc(o, rcv, 1);
		}
	}
	memcpy(o->lbuf, p.buf, BUF);
	pair_down(&p);
}

/* WRX-06, WRX-07: the builders of RC, UC and UD (SGE lists, inline data,
 * immediates, RDMA, atomics, the UD address) end as ibv_post_send ends. */
TH_TEST(builders_on_rc_uc_ud_end_as_post_send_does, "WRX-06 WRX-07", 0)
{
	static const struct pwr rc[] = {
		{ IBV_WR_SEND, 2, 0 }, { IBV_WR_SEND, 1, 1 }, { IBV_WR_SEND_WITH_IMM, 1, 0 },
		{ IBV_WR_RDMA_WRITE, 2, 0 }, { IBV_WR_RDMA_WRITE, 2, 1 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 1, 0 }, { IBV_WR_RDMA_READ, 1, 0 },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0 }, { IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0 },
	};
	static const struct pwr uc[] = {
		{ IBV_WR_SEND, 2, 0 }, { IBV_WR_SEND_WITH_IMM, 1, 1 }, { IBV_WR_RDMA_WRITE, 1, 0 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0 },
	};
	static const struct pwr ud[] = {
		{ IBV_WR_SEND, 2, 0 }, { IBV_WR_SEND, 1, 1 }, { IBV_WR_SEND_WITH_IMM, 1, 0 },
	};
	static const struct { enum ibv_qp_type type; uint64_t ops; const struct pwr *w; size_t n;
			      const char *name; } cases[] = {
		{ IBV_QPT_RC, RC_OPS, rc, sizeof(rc) / sizeof(rc[0]), "RC" },
		{ IBV_QPT_UC, UC_OPS, uc, sizeof(uc) / sizeof(uc[0]), "UC" },
		{ IBV_QPT_UD, UD_OPS, ud, sizeof(ud) / sizeof(ud[0]), "UD" },
	};
	struct obs *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	size_t c;

	assert_non_null(a);
	assert_non_null(b);
	for (c = 0; c < 3; c++) {
		memset(a, 0, sizeof(*a));
		memset(b, 0, sizeof(*b));
		pair_traffic(t, cases[c].type, cases[c].ops, cases[c].w, cases[c].n, 0, a);
		pair_traffic(t, cases[c].type, cases[c].ops, cases[c].w, cases[c].n, 1, b);
		obs_same(a, b, cases[c].name);
		th_note("%s: %zu WRs, %d completions, the same through both APIs", cases[c].name,
			cases[c].n, a->n);
	}
	free(a);
	free(b);
}

/* WRX-01: only a QP made with send_ops_flags has an ibv_qp_ex, and it is
 * the QP itself (the application's inlines call through its pointers). */
TH_TEST(qp_to_qp_ex_only_for_qps_made_with_send_ops_flags, "WRX-01", 0)
{
	struct pair p;
	struct ibv_qp_ex *x;

	pair_up_api(t, &p, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	x = ibv_qp_to_qp_ex(p.a);
	if (!x)
		th_fail("ibv_qp_to_qp_ex of a QP made with send_ops_flags: NULL");
	assert_ptr_equal(&x->qp_base, p.a);
	assert_non_null(x->wr_start);
	assert_non_null(x->wr_complete);
	assert_non_null(x->wr_abort);
	assert_non_null(x->wr_send);
	assert_non_null(x->wr_set_sge);
	assert_non_null(x->wr_set_sge_list);
	assert_non_null(x->wr_set_inline_data);
	if (ibv_qp_to_qp_ex(p.b))
		th_fail("ibv_qp_to_qp_ex of a QP made by ibv_create_qp: not NULL");
	pair_down(&p);
}

static int cq_quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 20; i++) {
		if (ibv_poll_cq(cq, 1, &wc) != 0)
			return 0;
		usleep(2000);
	}
	return 1;
}

/* WRX-03, WRX-04: a builder that cannot take its WR (a longer SGE list
 * than max_send_sge; more WRs than the queue holds) fails the batch:
 * wr_complete answers the error and posts none of it; the QP goes on. */
TH_TEST(wr_complete_fails_the_whole_batch, "WRX-03 WRX-04", 0)
{
	struct pair p;
	struct ibv_qp_ex *x;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_sge sg[33];
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge rs;
	struct ibv_wc wc;
	uint32_t i, n;
	int ret;

	pair_up_api(t, &p, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	x = ibv_qp_to_qp_ex(p.a);
	assert_non_null(x);
	assert_int_equal(ibv_query_qp(p.a, &qa, IBV_QP_CAP, &qi), 0);
	rs = (struct ibv_sge){ (uintptr_t)(p.buf + 1024), 512, p.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 0x77, .sg_list = &rs, .num_sge = 1 };
	assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), 0);
	for (i = 0; i < 33; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)(p.buf + 8 * i), 8, p.mr->lkey };
	if (qa.cap.max_send_sge > 32)
		th_fail("max_send_sge %u: granted far above the 2 asked", qa.cap.max_send_sge);
	/* one good WR, one with max_send_sge + 1 SGEs, one good */
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 1;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
	x->wr_id = 2;
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, qa.cap.max_send_sge + 1, sg);
	x->wr_id = 3;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
	ret = ibv_wr_complete(x);
	if (!ret)
		th_fail("a WR of %u SGEs on a QP of %u: wr_complete answered 0",
			qa.cap.max_send_sge + 1, qa.cap.max_send_sge);
	th_errno_strict(ret, ENOMEM, "wr_complete after an SGE list too long");
	if (!cq_quiet(p.cq))
		th_fail("a failed batch posted WRs");
	/* more WRs than the send queue holds */
	n = qa.cap.max_send_wr + 1;
	ibv_wr_start(x);
	for (i = 0; i < n; i++) {
		x->wr_id = 0x1000 + i;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
	}
	ret = ibv_wr_complete(x);
	if (!ret)
		th_fail("%u WRs on a send queue of %u: wr_complete answered 0", n, qa.cap.max_send_wr);
	th_errno_strict(ret, ENOMEM, "wr_complete past the send queue");
	if (!cq_quiet(p.cq))
		th_fail("a batch larger than the send queue posted WRs");
	/* the QP goes on: one WR, one completion, the receive it was waiting for */
	ibv_wr_start(x);
	x->wr_id = 9;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
	assert_int_equal(ibv_wr_complete(x), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(th_poll(p.cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id != 9 && wc.wr_id != 0x77)
			th_fail("completion of wr_id %#llx, of a failed batch",
				(unsigned long long)wc.wr_id);
	}
	assert_true(cq_quiet(p.cq));
	pair_down(&p);
}

/* A batch of n RDMA WRITEs of 8 bytes a -> b, the last one signaled:
 * WR i writes the word tag + i at QBOX + 8 i of b's buffer (the same
 * region). wr_complete's answer. */
#define QBOX	2048
#define QMAX	256			/* words between QBOX and the buffer's end */

static int write_batch(struct pair *p, struct ibv_qp_ex *x, uint32_t n, uint64_t tag)
{
	uint64_t *src = (uint64_t *)(void *)p->buf;
	uint32_t i;

	ibv_wr_start(x);
	for (i = 0; i < n; i++) {
		src[i] = tag + i;
		x->wr_id = tag + i;
		x->wr_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
		ibv_wr_rdma_write(x, p->mr->rkey, (uintptr_t)(p->buf + QBOX + 8 * i));
		ibv_wr_set_sge(x, p->mr->lkey, (uintptr_t)&src[i], 8);
	}
	return ibv_wr_complete(x);
}

/* How many of the n words at QBOX hold tag + i. */
static uint32_t words_landed(const struct pair *p, uint32_t n, uint64_t tag)
{
	uint32_t i, k = 0;
	uint64_t w;

	for (i = 0; i < n; i++) {
		memcpy(&w, p->buf + QBOX + 8 * i, 8);
		k += w == tag + i;
	}
	return k;
}

/* WRX-04: the send queue holds max_send_wr WRs, the QP's own count
 * (ibv_query_qp): a batch that fills it exactly is taken and lands, one
 * WR more is the builders' error and posts nothing; the full batch goes
 * again after it. */
TH_TEST(send_queue_takes_exactly_max_send_wr, "WRX-04", 0)
{
	struct pair p;
	struct ibv_qp_ex *x;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	uint32_t max, got;
	int ret, round;

	pair_up_api(t, &p, IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE);
	x = ibv_qp_to_qp_ex(p.a);
	assert_non_null(x);
	assert_int_equal(ibv_query_qp(p.a, &qa, IBV_QP_CAP, &qi), 0);
	max = qa.cap.max_send_wr;
	if (!max || max >= QMAX)
		th_fail("max_send_wr %u: 16 were asked", max);
	for (round = 0; round < 2; round++) {
		memset(p.buf + QBOX, 0, 8 * QMAX);
		ret = write_batch(&p, x, max, 0x5100 + 0x1000 * (uint64_t)round);
		if (ret)
			th_fail("a batch of max_send_wr = %u WRs on an empty send queue: "
				"wr_complete %d (%s)", max, ret, strerror(ret));
		assert_int_equal(th_poll(p.cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 0x5100 + 0x1000 * (uint64_t)round + max - 1);
		got = words_landed(&p, max, 0x5100 + 0x1000 * (uint64_t)round);
		if (got != max)
			th_fail("%u of the batch's %u WRITEs landed", got, max);
		assert_true(cq_quiet(p.cq));
		if (round)
			break;
		/* one WR more than the queue holds */
		memset(p.buf + QBOX, 0, 8 * QMAX);
		ret = write_batch(&p, x, max + 1, 0x7100);
		if (!ret)
			th_fail("%u WRs on a send queue of %u: wr_complete answered 0",
				max + 1, max);
		th_errno_strict(ret, ENOMEM, "wr_complete of max_send_wr + 1 WRs");
		if (!cq_quiet(p.cq) || words_landed(&p, max + 1, 0x7100))
			th_fail("a batch one WR larger than the send queue posted WRs");
	}
	pair_down(&p);
}

/* WRX-03: wr_abort drops what was built; the next batch posts its own. */
TH_TEST(wr_abort_drops_the_batch, "WRX-03", 0)
{
	struct pair p;
	struct ibv_qp_ex *x;
	struct ibv_sge rs, ss;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc;
	int i;

	pair_up_api(t, &p, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	x = ibv_qp_to_qp_ex(p.a);
	assert_non_null(x);
	rs = (struct ibv_sge){ (uintptr_t)(p.buf + 1024), 512, p.mr->lkey };
	ss = (struct ibv_sge){ (uintptr_t)p.buf, 16, p.mr->lkey };
	for (i = 0; i < 2; i++) {
		rwr = (struct ibv_recv_wr){ .wr_id = 0x70 + i, .sg_list = &rs, .num_sge = 1 };
		assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), 0);
	}
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 7;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, ss.lkey, ss.addr, ss.length);
	ibv_wr_abort(x);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 8;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, ss.lkey, ss.addr, ss.length);
	assert_int_equal(ibv_wr_complete(x), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(th_poll(p.cq, &wc), 1);
		if (wc.wr_id == 7)
			th_fail("the aborted WR was posted");
		assert_true(wc.wr_id == 8 || wc.wr_id == 0x70);
	}
	if (!cq_quiet(p.cq))
		th_fail("more completions than the one WR posted");
	pair_down(&p);
}

int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
