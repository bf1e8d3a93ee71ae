/* SPDX-License-Identifier: MIT */
/*
 * t5100: the fake provider's data path through the normal verbs API:
 * every opcode on RC, SEND on UC/UD, XRC SEND into the SRQ named by
 * remote_srqn, completion fields, error completions (bad lkey/rkey, access,
 * RNR), flush on ERR, solicited notification on a completion channel, and a
 * scripted async event (under a script of its own, in the test's process,
 * which has opened no device before).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fp_test.h"
#include "tf.h"

#define BUF 4096

static struct ibv_context *ctx;		/* the test's, opened by fx_setup */

struct fx {
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	char *a, *b;			/* local and remote buffers */
	struct ibv_mr *ma, *mb;
};

/* ---- helpers ---------------------------------------------------------------- */
static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	ctx = fpt_open();
	assert_non_null(f);
	f->pd = ibv_alloc_pd(ctx);
	assert_non_null(f->pd);
	f->scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	f->rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	assert_non_null(f->scq);
	assert_non_null(f->rcq);
	f->a = calloc(1, BUF);
	f->b = calloc(1, BUF);
	f->ma = ibv_reg_mr(f->pd, f->a, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	f->mb = ibv_reg_mr(f->pd, f->b, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(f->ma);
	assert_non_null(f->mb);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ibv_dereg_mr(f->ma);
	ibv_dereg_mr(f->mb);
	ibv_destroy_cq(f->scq);
	ibv_destroy_cq(f->rcq);
	ibv_dealloc_pd(f->pd);
	free(f->a);
	free(f->b);
	free(f);
	fpt_close(ctx);
	return 0;
}

static struct ibv_qp *qp_new(struct fx *f, enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = f->scq;
	ia.recv_cq = f->rcq;
	ia.srq = srq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = srq ? 0 : 16;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = srq ? 0 : 2;
	ia.cap.max_inline_data = 64;
	qp = ibv_create_qp(f->pd, &ia);
	assert_non_null(qp);
	return qp;
}

static uint16_t port_lid(void)
{
	struct ibv_port_attr pa;

	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	return pa.lid;
}

/* RESET -> INIT -> RTR -> RTS with the spec 3b masks of the type (and the
 * XRC_SEND's RTR and the XRC_RECV's RTS carrying the attributes that type
 * ignores), the given ACK timeout, retry count and RNR retry count at RTS. */
static void qp_connect_rt(struct ibv_qp *qp, uint32_t dest, uint8_t timeout, uint8_t retry_cnt,
			  uint8_t rnr_retry)
{
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct ibv_ah_attr ah = { .dlid = port_lid(), .port_num = 1 };

	o.timeout = timeout;
	o.retry_cnt = retry_cnt;
	o.rnr_retry = rnr_retry;
	if (qp->qp_type == IBV_QPT_XRC_SEND)	/* stripped for XRC_SEND */
		o.rtr_mask = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		o.rts_mask = IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	assert_int_equal(tf_qp_connect_av_o(qp, &ah, dest, &o), 0);
}

static void qp_connect(struct ibv_qp *qp, uint32_t dest)
{
	qp_connect_rt(qp, dest, 14, 7, 7);
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

/* Post one signaled WR; remote_addr/rkey for RDMA and atomics. */
static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, void *addr,
		    uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, int flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.imm_data = htonl(0xabcd1234);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* One completion; a retransmission may take its timer's time (a hang guard
 * of 10 s, not a speed check). */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(cq, 1, wc);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (n == 0 && t.tv_sec - t0.tv_sec < 10);
	assert_int_equal(n, 1);
}

static void cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	assert_int_equal(ibv_poll_cq(cq, 1, &wc), 0);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

static void rc_pair(struct fx *f, enum ibv_qp_type t, struct ibv_qp **x, struct ibv_qp **y)
{
	*x = qp_new(f, t, NULL);
	*y = qp_new(f, t, NULL);
	qp_connect(*x, (*y)->qp_num);
	qp_connect(*y, (*x)->qp_num);
}

/* ---- RC opcodes -------------------------------------------------------------------- */
TR_TEST_FX(rc_send_delivers_payload_and_fields, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	int i;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	for (i = 0; i < 100; i++)
		f->a[i] = (char)(i * 7 + 1);
	post_recv(y, 77, f->b, 200, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 11, f->a, 100, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	assert_int_equal(wc.wr_id, 11);
	assert_int_equal(wc.qp_num, x->qp_num);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.byte_len, 100);
	assert_int_equal(wc.qp_num, y->qp_num);
	assert_int_equal(wc.src_qp, x->qp_num);
	assert_int_equal(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	assert_memory_equal(f->a, f->b, 100);
	assert_int_equal(ibv_destroy_qp(x), 0);
	assert_int_equal(ibv_destroy_qp(y), 0);
}

TR_TEST_FX(rc_send_with_imm_reports_imm, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	memcpy(f->a, "hello", 5);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND_WITH_IMM, 2, f->a, 5, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0xabcd1234);
	assert_int_equal(wc.byte_len, 5);
	assert_memory_equal(f->b, "hello", 5);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(rc_inline_send_needs_no_lkey, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	char msg[32] = "inline-data";
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	/* msg is not registered: inline data is copied at post time. */
	assert_int_equal(post_one(x, IBV_WR_SEND, 3, msg, 12, 0xdeadbeef, 0, 0, IBV_SEND_INLINE), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.byte_len, 12);
	assert_string_equal(f->b, "inline-data");
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(rc_rdma_write_lands_without_recv_completion, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	memset(f->a, 0x5a, 256);
	assert_int_equal(post_one(x, IBV_WR_RDMA_WRITE, 4, f->a, 256, f->ma->lkey,
				  (uintptr_t)f->b + 100, f->mb->rkey, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	assert_memory_equal(f->b + 100, f->a, 256);
	assert_int_equal(f->b[99], 0);
	assert_int_equal(f->b[356], 0);
	cq_empty(f->rcq);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(rc_rdma_write_with_imm_consumes_recv, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	memset(f->a, 0x33, 64);
	post_recv(y, 9, NULL, 0, 0);
	assert_int_equal(post_one(x, IBV_WR_RDMA_WRITE_WITH_IMM, 5, f->a, 64, f->ma->lkey,
				  (uintptr_t)f->b, f->mb->rkey, 0), 0);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.byte_len, 64);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0xabcd1234);
	assert_memory_equal(f->b, f->a, 64);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(rc_rdma_read_fetches_remote, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	int i;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	for (i = 0; i < 128; i++)
		f->b[1000 + i] = (char)(255 - i);
	assert_int_equal(post_one(x, IBV_WR_RDMA_READ, 6, f->a, 128, f->ma->lkey,
				  (uintptr_t)f->b + 1000, f->mb->rkey, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.byte_len, 128);
	assert_memory_equal(f->a, f->b + 1000, 128);
	cq_empty(f->rcq);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(rc_atomics_cmp_swap_and_fetch_add, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	uint64_t *target = (uint64_t *)(void *)(f->b + 64), *result = (uint64_t *)(void *)f->a;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)f->a, .length = 8, .lkey = f->ma->lkey };
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	*target = 100;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = f->mb->rkey;
	wr.wr.atomic.compare_add = 100;
	wr.wr.atomic.swap = 555;
	assert_int_equal(ibv_post_send(x, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_COMP_SWAP);
	assert_int_equal(*result, 100);
	assert_int_equal(*target, 555);

	/* A failed compare returns the value and swaps nothing. */
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 9;
	assert_int_equal(ibv_post_send(x, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(*result, 555);
	assert_int_equal(*target, 555);

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 45;
	assert_int_equal(ibv_post_send(x, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_FETCH_ADD);
	assert_int_equal(*result, 555);
	assert_int_equal(*target, 600);

	/* Misaligned target: the responder refuses it. */
	wr.wr.atomic.remote_addr = (uintptr_t)target + 4;
	assert_int_equal(ibv_post_send(x, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

/* ---- UC, UD, XRC -------------------------------------------------------------------- */
TR_TEST_FX(uc_send_delivers, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_UC, &x, &y);
	memcpy(f->a, "uc!", 4);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 1, f->a, 4, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 4);
	assert_int_equal(wc.src_qp, x->qp_num);
	assert_string_equal(f->b, "uc!");
	/* UC has no RNR: a send with no receive posted completes, and is lost. */
	assert_int_equal(post_one(x, IBV_WR_SEND, 2, f->a, 4, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	cq_empty(f->rcq);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(ud_send_puts_grh_first, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_sge sge = { .addr = (uintptr_t)f->a, .length = 10, .lkey = f->ma->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_ah_attr aa;
	union ibv_gid gid;
	struct ibv_qp *x, *y;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	x = qp_new(f, IBV_QPT_UD, NULL);
	y = qp_new(f, IBV_QPT_UD, NULL);
	qp_connect(x, 0);
	qp_connect(y, 0);
	assert_int_equal(ibv_query_gid(ctx, 1, 0, &gid), 0);
	memset(&aa, 0, sizeof(aa));
	aa.dlid = port_lid();
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.dgid = gid;
	aa.grh.sgid_index = 0;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(f->pd, &aa);
	assert_non_null(ah);
	memcpy(f->a, "ud-payload", 10);
	post_recv(y, 42, f->b, 40 + 64, f->mb->lkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(99);
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = y->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	assert_int_equal(ibv_post_send(x, &wr, &bad), 0);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 40 + 10);
	assert_true(wc.wc_flags & IBV_WC_GRH);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 99);
	assert_int_equal(wc.src_qp, x->qp_num);
	assert_int_equal(wc.qp_num, y->qp_num);
	assert_memory_equal(f->b + 40, "ud-payload", 10);
	assert_memory_equal(f->b + 8, &gid, 16);	/* the GRH's SGID */

	/* A wrong qkey is dropped silently; the sender still completes. */
	post_recv(y, 43, f->b, 40 + 64, f->mb->lkey);
	wr.wr.ud.remote_qkey = 0x2222;
	assert_int_equal(ibv_post_send(x, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	cq_empty(f->rcq);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
	assert_int_equal(ibv_destroy_ah(ah), 0);
}

static struct ibv_srq *xrc_srq(struct fx *f, struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *srq;

	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = f->pd;
	sa.xrcd = xrcd;
	sa.cq = cq;
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 1;
	srq = ibv_create_srq_ex(ctx, &sa);
	assert_non_null(srq);
	return srq;
}

TR_TEST_FX(xrc_send_lands_in_srq_named_by_remote_srqn, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_sge sge = { .addr = (uintptr_t)f->a, .length = 16, .lkey = f->ma->lkey };
	struct ibv_recv_wr rw = { .num_sge = 1 }, *rbad;
	struct ibv_sge rsge[3];
	struct ibv_qp_init_attr_ex qa;
	struct ibv_send_wr wr, *bad;
	struct ibv_cq *cq[3];
	struct ibv_srq *srq[3];
	uint32_t srqn[3];
	struct ibv_qp *send, *recv;
	struct ibv_xrcd *xrcd;
	struct ibv_wc wc;
	int i;

	xrcd = ibv_open_xrcd(ctx, &xa);
	assert_non_null(xrcd);
	for (i = 0; i < 3; i++) {
		cq[i] = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		assert_non_null(cq[i]);
		srq[i] = xrc_srq(f, xrcd, cq[i]);
		assert_int_equal(ibv_get_srq_num(srq[i], &srqn[i]), 0);
		rsge[i].addr = (uintptr_t)f->b + 256 * i;
		rsge[i].length = 256;
		rsge[i].lkey = f->mb->lkey;
		rw.wr_id = 100 + i;
		rw.sg_list = &rsge[i];
		assert_int_equal(ibv_post_srq_recv(srq[i], &rw, &rbad), 0);
	}
	assert_int_not_equal(srqn[0], srqn[1]);

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = xrcd;
	recv = ibv_create_qp_ex(ctx, &qa);
	assert_non_null(recv);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = f->pd;
	qa.send_cq = f->scq;
	qa.cap.max_send_wr = 8;
	qa.cap.max_send_sge = 1;
	send = ibv_create_qp_ex(ctx, &qa);
	assert_non_null(send);
	qp_connect(recv, send->qp_num);
	qp_connect(send, recv->qp_num);

	memcpy(f->a, "to-the-middle!!", 16);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 5;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.qp_type.xrc.remote_srqn = srqn[1];
	assert_int_equal(ibv_post_send(send, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	/* SRQX-13: on the CQ of the SRQ that was named, and only there. */
	poll_one(cq[1], &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 101);
	assert_int_equal(wc.byte_len, 16);
	assert_int_equal(wc.qp_num, recv->qp_num);
	assert_memory_equal(f->b + 256, "to-the-middle!!", 16);
	cq_empty(cq[0]);
	cq_empty(cq[2]);

	wr.qp_type.xrc.remote_srqn = srqn[2];
	assert_int_equal(ibv_post_send(send, &wr, &bad), 0);
	poll_one(cq[2], &wc);
	assert_int_equal(wc.wr_id, 102);
	cq_empty(cq[0]);
	poll_one(f->scq, &wc);

	/* An SRQ number that is no XRC SRQ of this domain: remote error. */
	wr.qp_type.xrc.remote_srqn = srqn[2] + 1000;
	assert_int_equal(ibv_post_send(send, &wr, &bad), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(qp_state(send), IBV_QPS_ERR);
	cq_empty(cq[0]);

	assert_int_equal(ibv_destroy_qp(send), 0);
	assert_int_equal(ibv_destroy_qp(recv), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ibv_destroy_srq(srq[i]), 0);
		assert_int_equal(ibv_destroy_cq(cq[i]), 0);
	}
	assert_int_equal(ibv_close_xrcd(xrcd), 0);
}

/* ---- errors ----------------------------------------------------------------------- */
TR_TEST_FX(bad_lkey_gives_loc_prot_err_and_err_state, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 1, f->a, 8, f->ma->lkey ^ 0x5a5a, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_LOC_PROT_ERR);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(qp_state(x), IBV_QPS_ERR);
	/* Outside the region is a protection error too. */
	cq_empty(f->rcq);
	/* Later WRs are flushed. */
	assert_int_equal(post_one(x, IBV_WR_SEND, 2, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 2);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(out_of_region_sge_gives_loc_prot_err, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 1, f->a + BUF - 4, 8, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_LOC_PROT_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(short_receive_buffer_gives_loc_len_err, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	post_recv(y, 1, f->b, 4, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 1, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(bad_rkey_gives_rem_access_err_no_responder_cqe, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	assert_int_equal(post_one(x, IBV_WR_RDMA_WRITE, 1, f->a, 8, f->ma->lkey,
				  (uintptr_t)f->b, f->mb->rkey + 1, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	cq_empty(f->rcq);
	assert_int_equal(qp_state(x), IBV_QPS_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);

	/* Out of bounds of the remote region. */
	rc_pair(f, IBV_QPT_RC, &x, &y);
	assert_int_equal(post_one(x, IBV_WR_RDMA_READ, 2, f->a, 64, f->ma->lkey,
				  (uintptr_t)f->b + BUF - 32, f->mb->rkey, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(access_not_granted_gives_rem_access_err, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	char *ro = calloc(1, 256);
	struct ibv_mr *mr = ibv_reg_mr(f->pd, ro, 256, IBV_ACCESS_REMOTE_READ);
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	assert_non_null(mr);
	rc_pair(f, IBV_QPT_RC, &x, &y);
	assert_int_equal(post_one(x, IBV_WR_RDMA_READ, 1, f->a, 8, f->ma->lkey,
				  (uintptr_t)ro, mr->rkey, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(post_one(x, IBV_WR_RDMA_WRITE, 2, f->a, 8, f->ma->lkey,
				  (uintptr_t)ro, mr->rkey, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	free(ro);
}

/* rnr_retry 0: the first RNR NAK ends the request. */
TR_TEST_FX(no_receive_wqe_with_rnr_retry_0_gives_rnr_retry_exc_err, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	x = qp_new(f, IBV_QPT_RC, NULL);
	y = qp_new(f, IBV_QPT_RC, NULL);
	qp_connect_rt(x, y->qp_num, 14, 7, 0);
	qp_connect(y, x->qp_num);
	assert_int_equal(post_one(x, IBV_WR_SEND, 1, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(qp_state(x), IBV_QPS_ERR);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

/* rnr_retry 7 retries without end: the send waits (post_send has returned)
 * and lands once the responder posts a receive; later WQEs wait behind it
 * and complete in order. */
TR_TEST_FX(rnr_nak_is_retried_until_a_receive_is_posted, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	int i;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	for (i = 0; i < 3; i++)
		assert_int_equal(post_one(x, IBV_WR_SEND, 40 + i, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	cq_empty(f->scq);
	cq_empty(f->rcq);
	for (i = 0; i < 3; i++)
		post_recv(y, 50 + i, f->b + 64 * i, 64, f->mb->lkey);
	for (i = 0; i < 3; i++) {
		poll_one(f->scq, &wc);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 40 + i);
		poll_one(f->rcq, &wc);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 50 + i);
	}
	assert_int_equal(qp_state(x), IBV_QPS_RTS);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

/* A request to a QP not yet in RTR is lost, and sent again when the ACK
 * timer runs out: it lands once the peer is ready (no error completion). */
TR_TEST_FX(lost_request_is_retried_until_the_peer_reaches_rtr, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	x = qp_new(f, IBV_QPT_RC, NULL);
	y = qp_new(f, IBV_QPT_RC, NULL);
	qp_connect_rt(x, y->qp_num, 8, 7, 7);		/* 1 ms ACK timer */
	assert_int_equal(post_one(x, IBV_WR_SEND, 60, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	cq_empty(f->scq);
	qp_connect(y, x->qp_num);
	post_recv(y, 62, f->b, 64, f->mb->lkey);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 60);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 62);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

/* Nobody behind the destination: retry_cnt retries, then RETRY_EXC_ERR,
 * the QP goes to ERR and what waited behind is flushed. */
TR_TEST_FX(lost_request_after_retry_cnt_gives_retry_exc_err, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;

	x = qp_new(f, IBV_QPT_RC, NULL);
	y = qp_new(f, IBV_QPT_RC, NULL);
	qp_connect_rt(x, y->qp_num, 1, 2, 7);		/* 8 us ACK timer, 2 retries */
	assert_int_equal(ibv_destroy_qp(y), 0);
	assert_int_equal(post_one(x, IBV_WR_SEND, 70, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	assert_int_equal(post_one(x, IBV_WR_SEND, 71, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.wr_id, 70);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.wr_id, 71);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(qp_state(x), IBV_QPS_ERR);
	ibv_destroy_qp(x);
}

TR_TEST_FX(err_state_flushes_both_queues, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	int i;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	for (i = 0; i < 3; i++)
		post_recv(y, 10 + i, f->b, 64, f->mb->lkey);
	assert_int_equal(ibv_modify_qp(y, &a, IBV_QP_STATE), 0);
	for (i = 0; i < 3; i++) {
		poll_one(f->rcq, &wc);
		assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(wc.wr_id, 10 + i);
		assert_int_equal(wc.qp_num, y->qp_num);
	}
	cq_empty(f->rcq);
	/* Posted while in ERR: flushed too, on both queues. */
	post_recv(y, 20, f->b, 64, f->mb->lkey);
	poll_one(f->rcq, &wc);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(post_one(y, IBV_WR_SEND, 21, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	poll_one(f->scq, &wc);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 21);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(post_in_reset_or_init_fails_einval_with_bad_wr, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_sge sge = { .addr = (uintptr_t)f->a, .length = 8, .lkey = f->ma->lkey };
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_qp_attr a;
	struct ibv_qp *x = qp_new(f, IBV_QPT_RC, NULL);

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	assert_int_equal(ibv_post_send(x, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(ibv_post_recv(x, &rw, &rbad), EINVAL);
	assert_ptr_equal(rbad, &rw);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	assert_int_equal(ibv_modify_qp(x, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
	bad = NULL;
	assert_int_equal(ibv_post_send(x, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	rbad = NULL;
	assert_int_equal(ibv_post_recv(x, &rw, &rbad), 0);	/* INIT may receive */
	ibv_destroy_qp(x);
}

TR_TEST_FX(send_queue_overflow_fails_enomem_at_the_wr, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_sge sge = { .addr = (uintptr_t)f->a, .length = 0, .lkey = f->ma->lkey };
	struct ibv_send_wr wr[17], *bad = NULL;
	struct ibv_qp *x, *y;
	struct ibv_wc wc[17];
	int i;

	rc_pair(f, IBV_QPT_RC, &x, &y);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 17; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)f->b;
		wr[i].wr.rdma.rkey = f->mb->rkey;
		wr[i].next = i < 16 ? &wr[i + 1] : NULL;
	}
	/* 16 send WQEs: the 17th does not fit until completions are polled. */
	assert_int_equal(ibv_post_send(x, &wr[0], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[16]);
	assert_int_equal(ibv_poll_cq(f->scq, 17, wc), 16);
	bad = NULL;
	assert_int_equal(ibv_post_send(x, &wr[16], &bad), 0);
	assert_int_equal(ibv_poll_cq(f->scq, 17, wc), 1);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
}

TR_TEST_FX(solicited_event_wakes_completion_channel, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct pollfd pfd;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	void *ev_ctx;

	assert_non_null(ch);
	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	assert_non_null(cq);
	x = qp_new(f, IBV_QPT_RC, NULL);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = f->scq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	y = ibv_create_qp(f->pd, &ia);
	assert_non_null(y);
	qp_connect(x, y->qp_num);
	qp_connect(y, x->qp_num);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	post_recv(y, 2, f->b, 64, f->mb->lkey);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;

	assert_int_equal(ibv_req_notify_cq(cq, 1), 0);
	assert_int_equal(post_one(x, IBV_WR_SEND, 1, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);		/* not solicited: no event */
	assert_int_equal(post_one(x, IBV_WR_SEND, 2, f->a, 8, f->ma->lkey, 0, 0,
				  IBV_SEND_SOLICITED), 0);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	assert_ptr_equal(ev_cq, cq);
	assert_ptr_equal(ev_ctx, (void *)0x1234);
	ibv_ack_cq_events(cq, 1);
	poll_one(cq, &wc);
	poll_one(cq, &wc);
	assert_int_equal(wc.wr_id, 2);
	/* Disarmed after firing: the next completion raises nothing. */
	post_recv(y, 3, f->b, 64, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 3, f->a, 8, f->ma->lkey, 0, 0,
				  IBV_SEND_SOLICITED), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* Armed for any completion. */
	poll_one(cq, &wc);
	assert_int_equal(ibv_req_notify_cq(cq, 0), 0);
	post_recv(y, 4, f->b, 64, f->mb->lkey);
	assert_int_equal(post_one(x, IBV_WR_SEND, 4, f->a, 8, f->ma->lkey, 0, 0, 0), 0);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(cq, 1);
	poll_one(cq, &wc);
	while (ibv_poll_cq(f->scq, 1, &wc) > 0)
		;
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
}

/* WR-02: a pre-XRC (72-byte) WR ending at a guard page is fine on RC. */
TR_TEST_FX(rc_send_reads_no_byte_past_72, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_sge sge = { .addr = (uintptr_t)f->a, .length = 8, .lkey = f->ma->lkey };
	struct ibv_send_wr *wr, *bad;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	char *map;
	int status;
	pid_t pid;

	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + pg, pg, PROT_NONE), 0);
	wr = (struct ibv_send_wr *)(void *)(map + pg - 72);
	memset(wr, 0, 72);		/* only the 72 bytes that exist */
	wr->wr_id = 72;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	rc_pair(f, IBV_QPT_RC, &x, &y);
	post_recv(y, 1, f->b, 64, f->mb->lkey);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {	/* a read past the end kills only the child */
		signal(SIGSEGV, SIG_DFL);	/* not cmocka's handler: no TAP from here */
		signal(SIGBUS, SIG_DFL);
		_exit(ibv_post_send(x, wr, &bad) == 0 && ibv_poll_cq(f->scq, 1, &wc) == 1 &&
		      wc.status == IBV_WC_SUCCESS && wc.wr_id == 72 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
	munmap(map, 2 * pg);
}

/* ---- under scripts of their own, in the test's process ---------------------------- */
static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void rm_tree(const char *dir)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* RESET -> INIT -> RTR -> RTS with the section 3b masks (tf.h) to LID lid. */
static void child_connect(struct ibv_qp *qp, uint32_t dest, uint16_t lid)
{
	struct ibv_ah_attr ah = { .dlid = lid, .port_num = 1 };

	TR_ASSERT(tf_qp_connect_av(qp, &ah, dest) == 0);
}

/* The child's one fake device, from the script text (len bytes) set up as
 * this process's environment (its run dir into scr, for rm_tree), opened;
 * *list is the caller's to free. */
static struct ibv_context *child_open(const char *script, size_t len, char *scr, size_t scrlen,
				      struct ibv_device ***list)
{
	char path[] = "/tmp/t5100-script-XXXXXX", err[512];
	struct ibv_context *c;
	int fd = mkstemp(path), n;

	TR_ASSERT(fd >= 0);
	TR_ASSERT(write(fd, script, len) == (ssize_t)len);
	close(fd);
	TR_ASSERT(!fp_env_setup(path, getenv("IBVCT_PROVIDER"), NULL, scr, scrlen, err,
				  sizeof(err)));
	*list = ibv_get_device_list(&n);
	unlink(path);
	TR_ASSERT(*list && n == 1);
	c = ibv_open_device((*list)[0]);
	TR_ASSERT(c);
	return c;
}

static int child_async(void)
{
	static const char script[] =
		"device fake0\n"
		"\tcap xrc\n"
		"\tport 1 state active link_layer ib\n"
		"event qp_fatal after post_send 3\n";
	char scr[4096];
	struct ibv_qp_init_attr ia;
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	struct ibv_device **list;
	struct ibv_context *c;
	struct ibv_qp *x, *y;
	struct ibv_qp_attr qa;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct pollfd pfd;
	int i;

	c = child_open(script, sizeof(script) - 1, scr, sizeof(scr), &list);
	TR_ASSERT(!ibv_query_port(c, 1, &pa));
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 32, NULL, NULL, 0);
	TR_ASSERT(pd && cq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 8;
	x = ibv_create_qp(pd, &ia);
	y = ibv_create_qp(pd, &ia);
	TR_ASSERT(x && y);
	child_connect(x, y->qp_num, pa.lid);
	child_connect(y, x->qp_num, pa.lid);
	pfd.fd = c->async_fd;
	pfd.events = POLLIN;
	for (i = 1; i <= 3; i++) {
		struct ibv_recv_wr rw = { .wr_id = i }, *rbad;
		struct ibv_send_wr sw, *sbad;

		TR_ASSERT(poll(&pfd, 1, 0) == 0);	/* nothing before the 3rd */
		memset(&sw, 0, sizeof(sw));
		sw.opcode = IBV_WR_SEND;
		sw.send_flags = IBV_SEND_SIGNALED;
		TR_ASSERT(!ibv_post_recv(y, &rw, &rbad));
		TR_ASSERT(!ibv_post_send(x, &sw, &sbad));
	}
	TR_ASSERT(poll(&pfd, 1, 1000) == 1);
	TR_ASSERT(!ibv_get_async_event(c, &ev));
	TR_ASSERT(ev.event_type == IBV_EVENT_QP_FATAL);
	TR_ASSERT(ev.element.qp == x);
	ibv_ack_async_event(&ev);
	TR_ASSERT(!ibv_query_qp(x, &qa, IBV_QP_STATE, &ia));
	TR_ASSERT(qa.qp_state == IBV_QPS_ERR);
	TR_ASSERT(poll(&pfd, 1, 0) == 0);
	TR_ASSERT(!ibv_destroy_qp(x) && !ibv_destroy_qp(y));
	TR_ASSERT(!ibv_destroy_cq(cq) && !ibv_dealloc_pd(pd));
	TR_ASSERT(!ibv_close_device(c));
	ibv_free_device_list(list);
	rm_tree(scr);
	return 0;
}

/* Legacy registration: the same data path behind the core's compat layer,
 * events naming the application's objects, and no XRC (COMPAT-15). */
static int child_legacy(void)
{
	static const char script[] =
		"mode legacy\n"
		"device fake0\n"
		"\tcap xrc\n"
		"event qp_fatal after post_send 2\n";
	char scr[4096];
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1,
	};
	char *buf = calloc(1, 256);
	struct ibv_sge sge;
	struct ibv_recv_wr rw = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr sw, *sbad;
	struct ibv_qp_init_attr ia;
	struct ibv_async_event ev;
	struct ibv_comp_channel *ch;
	struct ibv_port_attr pa;
	struct ibv_device **list;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_context *c;
	struct ibv_qp *x, *y;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	void *ev_ctx;

	TR_ASSERT(buf);
	c = child_open(script, sizeof(script) - 1, scr, sizeof(scr), &list);
	errno = 0;
	TR_ASSERT(!ibv_open_xrcd(c, &xa) && errno == EOPNOTSUPP);
	TR_ASSERT(!ibv_query_port(c, 1, &pa) && pa.state == IBV_PORT_ACTIVE);
	pd = ibv_alloc_pd(c);
	ch = ibv_create_comp_channel(c);
	TR_ASSERT(pd && ch);
	cq = ibv_create_cq(c, 16, (void *)0x99, ch, 0);
	mr = ibv_reg_mr(pd, buf, 256, IBV_ACCESS_LOCAL_WRITE);
	TR_ASSERT(cq && mr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	x = ibv_create_qp(pd, &ia);
	y = ibv_create_qp(pd, &ia);
	TR_ASSERT(x && y);
	child_connect(x, y->qp_num, pa.lid);
	child_connect(y, x->qp_num, pa.lid);
	TR_ASSERT(x->state == IBV_QPS_RTS);
	sge.addr = (uintptr_t)buf + 128;
	sge.length = 128;
	sge.lkey = mr->lkey;
	TR_ASSERT(!ibv_post_recv(y, &rw, &rbad));
	memcpy(buf, "legacy", 7);
	sge.addr = (uintptr_t)buf;
	sge.length = 7;
	memset(&sw, 0, sizeof(sw));
	sw.wr_id = 6;
	sw.sg_list = &sge;
	sw.num_sge = 1;
	sw.opcode = IBV_WR_SEND;
	sw.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	TR_ASSERT(!ibv_req_notify_cq(cq, 1));
	TR_ASSERT(!ibv_post_send(x, &sw, &sbad));
	TR_ASSERT(!ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	TR_ASSERT(ev_cq == cq && ev_ctx == (void *)0x99);
	ibv_ack_cq_events(cq, 1);
	TR_ASSERT(ibv_poll_cq(cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	TR_ASSERT(ibv_poll_cq(cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	TR_ASSERT(!strcmp(buf + 128, "legacy"));
	/* The 2nd post_send raises QP_FATAL, naming the application's QP. */
	TR_ASSERT(!ibv_post_send(x, &sw, &sbad));
	TR_ASSERT(!ibv_get_async_event(c, &ev));
	TR_ASSERT(ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == x);
	ibv_ack_async_event(&ev);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	TR_ASSERT(!ibv_destroy_qp(x) && !ibv_destroy_qp(y));
	TR_ASSERT(!ibv_dereg_mr(mr) && !ibv_destroy_cq(cq));
	TR_ASSERT(!ibv_destroy_comp_channel(ch) && !ibv_dealloc_pd(pd));
	TR_ASSERT(!ibv_close_device(c));
	ibv_free_device_list(list);
	free(buf);
	rm_tree(scr);
	return 0;
}

/* How many times the trace names state in its file (0: none, or no file). */
static int trace_count(const char *file, const char *state)
{
	char line[4096];
	FILE *f = fopen(file, "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;

		while ((p = strstr(p, state))) {
			n++;
			p += strlen(state);
		}
	}
	fclose(f);
	return n;
}

/*
 * A SEND to a QP that is gone, under profile PROF with retry_cnt retry
 * and an 8 us ACK timer: the completer's ERROR_RETRY states (its trace)
 * and the send CQE. With an end (want_end), the CQE is RETRY_EXC_ERR
 * after retry tries again; without one, 3 * 7 + 1 retries go by with no
 * CQE (more than retry_cnt 7 could give) and the QP is destroyed with the
 * WQE still on its way. No clock: the count of retries is the measure.
 */
static int child_retry_budget(const char *prof, uint8_t retry, bool want_end)
{
	char scr[4096], trace[64], script[512];
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct ibv_send_wr sw, *sbad;
	struct ibv_qp_init_attr ia;
	struct ibv_port_attr pa;
	struct ibv_device **list;
	struct ibv_context *c;
	struct ibv_qp *x, *y;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	int n, got = 0;

	snprintf(trace, sizeof(trace), "/tmp/t5100-trace-%d", (int)getpid());
	unlink(trace);
	n = snprintf(script, sizeof(script),
		     "profile %s\n"
		     "device fake0\n"
		     "\tport 1 state active link_layer ib\n"
		     "trace %s states\n", prof, trace);
	TR_ASSERT(n > 0 && (size_t)n < sizeof(script));
	c = child_open(script, (size_t)n, scr, sizeof(scr), &list);
	TR_ASSERT(!ibv_query_port(c, 1, &pa));
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 8, NULL, NULL, 0);
	TR_ASSERT(pd && cq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	x = ibv_create_qp(pd, &ia);
	y = ibv_create_qp(pd, &ia);
	TR_ASSERT(x && y);
	o.timeout = 1;
	o.retry_cnt = retry;
	{
		struct ibv_ah_attr ah = { .dlid = pa.lid, .port_num = 1 };

		TR_ASSERT(!tf_qp_connect_av_o(x, &ah, y->qp_num, &o));
	}
	TR_ASSERT(!ibv_destroy_qp(y));
	memset(&sw, 0, sizeof(sw));
	sw.wr_id = 80;
	sw.opcode = IBV_WR_SEND;
	sw.send_flags = IBV_SEND_SIGNALED;
	TR_ASSERT(!ibv_post_send(x, &sw, &sbad));
	/* the test's limit ends a run that neither completes nor retries */
	while (!got && trace_count(trace, "ERROR_RETRY") < 3 * 7 + 1)
		got = ibv_poll_cq(cq, 1, &wc);
	tr_note("profile %s retry_cnt %u: %d retries in the trace, %s", prof, retry,
		trace_count(trace, "ERROR_RETRY"), got ? ibv_wc_status_str(wc.status) : "no completion");
	if (want_end) {
		TR_ASSERT(got == 1 && wc.wr_id == 80 && wc.status == IBV_WC_RETRY_EXC_ERR);
		TR_ASSERT(trace_count(trace, "ERROR_RETRY") == retry);
	} else {
		TR_ASSERT(got == 0);
	}
	TR_ASSERT(!ibv_destroy_qp(x));
	TR_ASSERT(!ibv_destroy_cq(cq) && !ibv_dealloc_pd(pd));
	TR_ASSERT(!ibv_close_device(c));
	ibv_free_device_list(list);
	unlink(trace);
	rm_tree(scr);
	return 0;
}

TR_TEST(legacy_mode_runs_the_same_data_path)
{
	(void)state;
	assert_int_equal(child_legacy(), 0);
}

TR_TEST(scripted_qp_fatal_arrives_on_async_fd)
{
	(void)state;
	assert_int_equal(child_async(), 0);
}

/* rxe never gives up at retry_cnt 7 (linux v6.1 and v6.12 rxe_comp.c
 * rxe_completer, COMPST_ERROR_RETRY), on the in-host transport as on the
 * wire; below 7 it counts, and a device without its rules counts 7 too
 * (IBA vol 1 9.7.6.1; engine/requester.c). */
TR_TEST(rxe_profile_retries_without_end_at_retry_cnt_7)
{
	(void)state;
	assert_int_equal(child_retry_budget("rxe", 7, false), 0);
}

TR_TEST(rxe_profile_counts_retry_cnt_6_down)
{
	(void)state;
	assert_int_equal(child_retry_budget("rxe", 6, true), 0);
}

TR_TEST(mlx5_profile_counts_retry_cnt_7_down)
{
	(void)state;
	assert_int_equal(child_retry_budget("mlx5", 7, true), 0);
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
