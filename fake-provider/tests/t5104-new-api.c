/* SPDX-License-Identifier: MIT */
/*
 * t5104: the fake provider's extension verbs, unit by unit: every ibv_wr_*
 * builder and setter the QP types carry (their WR fields as the receiver
 * and the completions show them), wr_start/complete/abort and their error
 * rules, each ibv_wc_read_* function of an extended CQ (the completion
 * timestamp on devices with a clock, and ibv_query_rt_values_ex), the
 * extended device query. The legacy provider mode and the clocks run
 * under scripts of their own (in the test's process, which has opened no
 * device before); a legacy provider has none of these ops and every one
 * answers as rdma-core does without it. An optional argument names a
 * script (t5102 runs each quirk's through here).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fp_test.h"
#include "tf.h"

#define BUF 4096

static struct ibv_context *ctx;		/* the test's, opened by dev_setup */
static uint64_t fx_wc_flags = IBV_WC_STANDARD_FLAGS;	/* the fixture CQ's */

struct fx {
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;		/* a's send CQ and b's receive CQ */
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	char *buf;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
};

/* The test's device, for every test but the legacy one. */
static int dev_setup(void **state)
{
	ctx = fpt_open();
	return 0;
}

static int dev_teardown(void **state)
{
	fpt_close(ctx);
	return 0;
}

static uint16_t port_lid(void)
{
	struct ibv_port_attr pa;

	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	return pa.lid;
}

/* RESET -> INIT -> RTR -> RTS with the section 3b masks (tf.h), to this port. */
static void qp_connect(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_ah_attr ah = { .dlid = port_lid(), .port_num = 1 };

	assert_int_equal(tf_qp_connect_av(qp, &ah, dest), 0);
}

static void fx_up(struct fx *f, enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_cq_init_attr_ex ca;
	struct ibv_qp_init_attr_ex ia;
	struct ibv_ah_attr aa;

	memset(f, 0, sizeof(*f));
	f->pd = ibv_alloc_pd(ctx);
	assert_non_null(f->pd);
	memset(&ca, 0, sizeof(ca));
	ca.cqe = 64;
	ca.wc_flags = fx_wc_flags;
	f->cqx = ibv_create_cq_ex(ctx, &ca);
	assert_non_null(f->cqx);
	f->cq = ibv_cq_ex_to_cq(f->cqx);
	f->buf = calloc(1, BUF);
	assert_non_null(f->buf);
	f->mr = ibv_reg_mr(f->pd, f->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(f->mr);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = type;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = f->pd;
	ia.send_cq = ia.recv_cq = f->cq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 32;
	ia.send_ops_flags = ops;
	f->a = ibv_create_qp_ex(ctx, &ia);
	assert_non_null(f->a);
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	f->b = ibv_create_qp_ex(ctx, &ia);
	assert_non_null(f->b);
	f->x = ibv_qp_to_qp_ex(f->a);
	assert_non_null(f->x);
	assert_null(ibv_qp_to_qp_ex(f->b));
	qp_connect(f->a, f->b->qp_num);
	qp_connect(f->b, f->a->qp_num);
	if (type == IBV_QPT_UD) {
		memset(&aa, 0, sizeof(aa));
		aa.dlid = port_lid();
		aa.port_num = 1;
		f->ah = ibv_create_ah(f->pd, &aa);
		assert_non_null(f->ah);
	}
}

static void fx_down(struct fx *f)
{
	if (f->ah)
		assert_int_equal(ibv_destroy_ah(f->ah), 0);
	assert_int_equal(ibv_destroy_qp(f->a), 0);
	assert_int_equal(ibv_destroy_qp(f->b), 0);
	assert_int_equal(ibv_dereg_mr(f->mr), 0);
	assert_int_equal(ibv_destroy_cq(f->cq), 0);
	assert_int_equal(ibv_dealloc_pd(f->pd), 0);
	free(f->buf);
}

static void recv_post(struct fx *f, uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)(f->buf + 1024), 512, f->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(f->b, &w, &bad), 0);
}

/* One completion through the extended CQ's functions. */
struct cqe {
	uint64_t wr_id;
	int status, opcode;
	uint32_t len, qpn, src, flags;
	__be32 imm;
	uint64_t ts;		/* with a timestamp, else 0 */
};

static int cqx_take(struct fx *f, struct cqe *out, int max)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int n = 0, ret;

	ret = ibv_start_poll(f->cqx, &pa);
	if (ret == ENOENT)
		return 0;
	assert_int_equal(ret, 0);
	do {
		assert_true(n < max);
		out[n].wr_id = f->cqx->wr_id;
		out[n].status = f->cqx->status;
		out[n].opcode = ibv_wc_read_opcode(f->cqx);
		out[n].len = ibv_wc_read_byte_len(f->cqx);
		out[n].qpn = ibv_wc_read_qp_num(f->cqx);
		out[n].src = ibv_wc_read_src_qp(f->cqx);
		out[n].flags = ibv_wc_read_wc_flags(f->cqx);
		out[n].imm = ibv_wc_read_imm_data(f->cqx);
		assert_int_equal(ibv_wc_read_vendor_err(f->cqx), 0);
		(void)ibv_wc_read_slid(f->cqx);
		(void)ibv_wc_read_sl(f->cqx);
		(void)ibv_wc_read_dlid_path_bits(f->cqx);
		out[n].ts = f->cqx->read_completion_ts ? ibv_wc_read_completion_ts(f->cqx) : 0;
		n++;
	} while ((ret = ibv_next_poll(f->cqx)) == 0);
	assert_int_equal(ret, ENOENT);
	ibv_end_poll(f->cqx);
	return n;
}

static const struct cqe *by_id(const struct cqe *c, int n, uint64_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (c[i].wr_id == id)
			return &c[i];
	fail_msg("no completion for wr_id %#llx", (unsigned long long)id);
	return NULL;
}

/* ---- builders --------------------------------------------------------------- */
TR_TEST_FX(rc_send_builders_and_sge_setters, dev_setup, dev_teardown)
{
	struct ibv_sge sg[2];
	struct cqe c[8];
	struct fx f;
	int n;

	(void)state;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	memcpy(f.buf, "0123456789abcdef", 16);
	sg[0] = (struct ibv_sge){ (uintptr_t)f.buf, 4, f.mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)(f.buf + 8), 4, f.mr->lkey };
	recv_post(&f, 0x81);
	recv_post(&f, 0x82);
	ibv_wr_start(f.x);
	f.x->wr_id = 1;
	f.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(f.x);
	ibv_wr_set_sge_list(f.x, 2, sg);
	f.x->wr_id = 2;
	ibv_wr_send_imm(f.x, htonl(0x1234));
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)(f.buf + 4), 3);
	assert_int_equal(ibv_wr_complete(f.x), 0);
	n = cqx_take(&f, c, 8);
	assert_int_equal(n, 4);
	assert_int_equal(by_id(c, n, 1)->opcode, IBV_WC_SEND);
	assert_int_equal(by_id(c, n, 1)->qpn, f.a->qp_num);
	assert_int_equal(by_id(c, n, 0x81)->len, 8);
	assert_int_equal(by_id(c, n, 0x81)->opcode, IBV_WC_RECV);
	assert_int_equal(by_id(c, n, 0x81)->qpn, f.b->qp_num);
	/* the second receive (3 bytes, "456") landed over the first ("012389ab") */
	assert_memory_equal(f.buf + 1024, "456389ab", 8);
	assert_int_equal(by_id(c, n, 0x82)->len, 3);
	assert_true(by_id(c, n, 0x82)->flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(by_id(c, n, 0x82)->imm), 0x1234);
	fx_down(&f);
}

TR_TEST_FX(rc_inline_setters_copy_at_once, dev_setup, dev_teardown)
{
	struct ibv_data_buf b[2];
	char tmp[8];
	struct cqe c[8];
	struct fx f;
	int n;

	(void)state;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	recv_post(&f, 0x81);
	memcpy(tmp, "inline", 7);
	ibv_wr_start(f.x);
	f.x->wr_id = 1;
	f.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(f.x);
	ibv_wr_set_inline_data(f.x, tmp, 7);
	memset(tmp, 'x', sizeof(tmp));	/* the data was taken when set */
	b[0] = (struct ibv_data_buf){ "wr", 2 };
	b[1] = (struct ibv_data_buf){ "ite", 3 };
	f.x->wr_id = 2;
	ibv_wr_rdma_write(f.x, f.mr->rkey, (uintptr_t)(f.buf + 2048));
	ibv_wr_set_inline_data_list(f.x, 2, b);
	assert_int_equal(ibv_wr_complete(f.x), 0);
	n = cqx_take(&f, c, 8);
	assert_int_equal(n, 3);
	assert_string_equal(f.buf + 1024, "inline");
	assert_memory_equal(f.buf + 2048, "write", 5);
	assert_int_equal(by_id(c, n, 2)->opcode, IBV_WC_RDMA_WRITE);
	fx_down(&f);
}

TR_TEST_FX(rc_rdma_and_atomic_builders, dev_setup, dev_teardown)
{
	uint64_t v = 10;
	struct cqe c[8];
	struct fx f;
	int n;

	(void)state;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
	      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
	memcpy(f.buf + 3000, &v, 8);
	memcpy(f.buf + 512, "remote", 6);
	recv_post(&f, 0x81);
	ibv_wr_start(f.x);
	f.x->wr_flags = IBV_SEND_SIGNALED;
	f.x->wr_id = 1;
	ibv_wr_rdma_write_imm(f.x, f.mr->rkey, (uintptr_t)(f.buf + 2048), htonl(7));
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)f.buf, 4);
	f.x->wr_id = 2;
	ibv_wr_rdma_read(f.x, f.mr->rkey, (uintptr_t)(f.buf + 512));
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)(f.buf + 600), 6);
	f.x->wr_id = 3;
	ibv_wr_atomic_fetch_add(f.x, f.mr->rkey, (uintptr_t)(f.buf + 3000), 5);
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)(f.buf + 3104), 8);
	f.x->wr_id = 4;
	ibv_wr_atomic_cmp_swp(f.x, f.mr->rkey, (uintptr_t)(f.buf + 3000), 15, 99);
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)(f.buf + 3200), 8);
	assert_int_equal(ibv_wr_complete(f.x), 0);
	n = cqx_take(&f, c, 8);
	assert_int_equal(n, 5);
	assert_int_equal(by_id(c, n, 0x81)->opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(ntohl(by_id(c, n, 0x81)->imm), 7);
	assert_int_equal(by_id(c, n, 2)->opcode, IBV_WC_RDMA_READ);
	assert_memory_equal(f.buf + 600, "remote", 6);
	assert_int_equal(by_id(c, n, 3)->opcode, IBV_WC_FETCH_ADD);
	assert_int_equal(by_id(c, n, 4)->opcode, IBV_WC_COMP_SWAP);
	memcpy(&v, f.buf + 3104, 8);
	assert_int_equal(v, 10);
	memcpy(&v, f.buf + 3200, 8);
	assert_int_equal(v, 15);
	memcpy(&v, f.buf + 3000, 8);
	assert_int_equal(v, 99);
	fx_down(&f);
}

TR_TEST_FX(ud_set_ud_addr_and_builders_per_type, dev_setup, dev_teardown)
{
	struct cqe c[8];
	struct fx f;
	int n;

	(void)state;
	fx_up(&f, IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	/* UD carries sends only: no RDMA or atomic builders, an address setter */
	assert_null(f.x->wr_rdma_write);
	assert_null(f.x->wr_rdma_read);
	assert_null(f.x->wr_atomic_cmp_swp);
	assert_null(f.x->wr_set_xrc_srqn);
	assert_non_null(f.x->wr_set_ud_addr);
	recv_post(&f, 0x81);
	memcpy(f.buf, "datagram", 8);
	ibv_wr_start(f.x);
	f.x->wr_id = 1;
	f.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(f.x, htonl(3));
	ibv_wr_set_ud_addr(f.x, f.ah, f.b->qp_num, 0x11111111);
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)f.buf, 8);
	assert_int_equal(ibv_wr_complete(f.x), 0);
	n = cqx_take(&f, c, 8);
	assert_int_equal(n, 2);
	assert_int_equal(by_id(c, n, 0x81)->src, f.a->qp_num);
	assert_int_equal(by_id(c, n, 0x81)->len, 8 + 40);
	assert_memory_equal(f.buf + 1024 + 40, "datagram", 8);
	/* a UD WR without its address is refused whole */
	ibv_wr_start(f.x);
	f.x->wr_id = 2;
	ibv_wr_send(f.x);
	ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)f.buf, 8);
	assert_int_equal(ibv_wr_complete(f.x), EINVAL);
	assert_int_equal(cqx_take(&f, c, 8), 0);
	fx_down(&f);
}

TR_TEST_FX(uc_builders, dev_setup, dev_teardown)
{
	struct fx f;

	(void)state;
	fx_up(&f, IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	assert_non_null(f.x->wr_rdma_write);
	assert_non_null(f.x->wr_rdma_write_imm);
	assert_null(f.x->wr_rdma_read);
	assert_null(f.x->wr_atomic_fetch_add);
	fx_down(&f);
}

TR_TEST_FX(complete_keeps_the_first_error_and_abort_drops, dev_setup, dev_teardown)
{
	struct ibv_sge sg[3];
	struct cqe c[16];
	struct fx f;
	int i;

	(void)state;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	for (i = 0; i < 3; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)(f.buf + 8 * i), 8, f.mr->lkey };
	recv_post(&f, 0x81);
	/* an SGE list past max_send_sge (2), then inline data past 32 bytes */
	ibv_wr_start(f.x);
	f.x->wr_id = 1;
	f.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(f.x);
	ibv_wr_set_sge(f.x, sg[0].lkey, sg[0].addr, 8);
	f.x->wr_id = 2;
	ibv_wr_send(f.x);
	ibv_wr_set_sge_list(f.x, 3, sg);
	f.x->wr_id = 3;
	ibv_wr_send(f.x);
	ibv_wr_set_inline_data(f.x, f.buf, 33);
	assert_int_equal(ibv_wr_complete(f.x), ENOMEM);
	assert_int_equal(cqx_take(&f, c, 16), 0);
	ibv_wr_start(f.x);
	f.x->wr_id = 4;
	ibv_wr_send(f.x);
	ibv_wr_set_inline_data(f.x, f.buf, 33);
	assert_int_equal(ibv_wr_complete(f.x), ENOMEM);
	/* nine WRs on a send queue of eight */
	ibv_wr_start(f.x);
	for (i = 0; i < 9; i++) {
		f.x->wr_id = 0x10 + i;
		ibv_wr_send(f.x);
		ibv_wr_set_sge(f.x, sg[0].lkey, sg[0].addr, 8);
	}
	assert_int_equal(ibv_wr_complete(f.x), ENOMEM);
	assert_int_equal(cqx_take(&f, c, 16), 0);
	/* an aborted batch leaves nothing */
	ibv_wr_start(f.x);
	f.x->wr_id = 5;
	ibv_wr_send(f.x);
	ibv_wr_set_sge(f.x, sg[0].lkey, sg[0].addr, 8);
	ibv_wr_abort(f.x);
	assert_int_equal(cqx_take(&f, c, 16), 0);
	/* and the QP goes on */
	ibv_wr_start(f.x);
	f.x->wr_id = 6;
	ibv_wr_send(f.x);
	ibv_wr_set_sge(f.x, sg[0].lkey, sg[0].addr, 8);
	assert_int_equal(ibv_wr_complete(f.x), 0);
	assert_int_equal(cqx_take(&f, c, 16), 2);
	assert_int_equal(by_id(c, 2, 6)->status, IBV_WC_SUCCESS);
	assert_int_equal(by_id(c, 2, 0x81)->len, 8);
	fx_down(&f);
}

TR_TEST_FX(send_ops_flags_per_type, dev_setup, dev_teardown)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1, .oflags = O_CREAT };
	struct ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &xa);
	struct ibv_qp *q;

	(void)state;
	assert_non_null(pd);
	assert_non_null(cq);
	assert_non_null(xrcd);
	memset(&ia, 0, sizeof(ia));
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = pd;
	ia.send_cq = ia.recv_cq = cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	/* UD: sends only */
	ia.qp_type = IBV_QPT_UD;
	ia.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	/* remote invalidation on the connected types, with its builder */
	ia.qp_type = IBV_QPT_UC;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_INV;
	q = ibv_create_qp_ex(ctx, &ia);
	assert_non_null(q);
	assert_non_null(ibv_qp_to_qp_ex(q)->wr_send_inv);
	assert_int_equal(ibv_destroy_qp(q), 0);
	ia.qp_type = IBV_QPT_UD;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	/* XRC_SEND: the RC set, and a setter for the SRQ number */
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	q = ibv_create_qp_ex(ctx, &ia);
	assert_non_null(q);
	assert_non_null(ibv_qp_to_qp_ex(q)->wr_set_xrc_srqn);
	assert_null(ibv_qp_to_qp_ex(q)->wr_set_ud_addr);
	assert_int_equal(ibv_destroy_qp(q), 0);
	/* XRC_RECV: none */
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.comp_mask = IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.xrcd = xrcd;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_close_xrcd(xrcd), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* ---- extended CQ and device query ------------------------------------------- */
TR_TEST_FX(cq_ex_read_functions_follow_the_fields_asked, dev_setup, dev_teardown)
{
	struct ibv_cq_init_attr_ex ca;
	struct ibv_cq_ex *cq;

	(void)state;
	memset(&ca, 0, sizeof(ca));
	ca.cqe = 4;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
	cq = ibv_create_cq_ex(ctx, &ca);
	assert_non_null(cq);
	assert_non_null(cq->read_opcode);
	assert_non_null(cq->read_wc_flags);
	assert_non_null(cq->read_vendor_err);
	assert_non_null(cq->read_byte_len);
	assert_non_null(cq->read_qp_num);
	assert_null(cq->read_imm_data);
	assert_null(cq->read_src_qp);
	assert_null(cq->read_slid);
	assert_null(cq->read_completion_ts);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	assert_null(ibv_create_cq_ex(ctx, &ca));
	assert_int_equal(errno, EOPNOTSUPP);
	ca.wc_flags = 0;
	ca.comp_mask = 1 << 2;
	errno = 0;
	assert_null(ibv_create_cq_ex(ctx, &ca));
	assert_int_equal(errno, EINVAL);
}

TR_TEST_FX(cq_ex_poll_takes_each_cqe_once, dev_setup, dev_teardown)
{
	struct cqe c[8];
	struct fx f;
	int i, n = 0;

	(void)state;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	for (i = 0; i < 3; i++)
		recv_post(&f, 0x80 + i);
	ibv_wr_start(f.x);
	for (i = 0; i < 3; i++) {
		f.x->wr_id = 1 + i;
		f.x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(f.x);
		ibv_wr_set_sge(f.x, f.mr->lkey, (uintptr_t)f.buf, 4 + i);
	}
	assert_int_equal(ibv_wr_complete(f.x), 0);
	n = cqx_take(&f, c, 8);
	assert_int_equal(n, 6);
	for (i = 0; i < 3; i++) {
		assert_int_equal(by_id(c, n, 1 + i)->status, IBV_WC_SUCCESS);
		assert_int_equal(by_id(c, n, 0x80 + i)->len, 4 + i);
	}
	assert_int_equal(cqx_take(&f, c, 8), 0);
	fx_down(&f);
}

TR_TEST_FX(query_device_ex_fills_the_extended_fields, dev_setup, dev_teardown)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;

	(void)state;
	assert_int_equal(ibv_query_device(ctx, &a), 0);
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ax), 0);
	assert_int_equal(ax.phys_port_cnt_ex, a.phys_port_cnt);
	assert_int_equal((uint32_t)ax.device_cap_flags_ex, a.device_cap_flags);
	assert_int_equal(ax.orig_attr.max_qp, a.max_qp);
}

/* ---- rereg_mr, thread and parent domains ------------------------------------- */
TR_TEST_FX(rereg_mr_moves_the_region_in_place, dev_setup, dev_teardown)
{
	char *other = calloc(1, BUF);
	struct ibv_sge s;
	struct ibv_send_wr w, *bad;
	struct cqe c[4];
	struct fx f;
	uint32_t lkey;

	(void)state;
	assert_non_null(other);
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	lkey = f.mr->lkey;
	assert_int_equal(ibv_rereg_mr(f.mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_CMD);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_rereg_mr(f.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other, BUF, 0), 0);
	assert_ptr_equal(f.mr->addr, other);
	assert_int_equal(f.mr->lkey, lkey);		/* the keys stay */
	/* a WRITE into the new translation by its key */
	memcpy(other, "moved", 6);
	s = (struct ibv_sge){ (uintptr_t)other, 6, f.mr->lkey };
	memset(&w, 0, sizeof(w));
	w.wr_id = 1;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = (uintptr_t)(other + 100);
	w.wr.rdma.rkey = f.mr->rkey;
	assert_int_equal(ibv_post_send(f.a, &w, &bad), 0);
	assert_int_equal(cqx_take(&f, c, 4), 1);
	assert_int_equal(c[0].status, IBV_WC_SUCCESS);
	assert_string_equal(other + 100, "moved");
	assert_int_equal(f.buf[100], 0);
	/* fx_down deregisters it; the old buffer is the fixture's */
	fx_down(&f);
	free(other);
}

TR_TEST_FX(td_and_parent_domain_attributes, dev_setup, dev_teardown)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *d;
	struct ibv_td *td;

	(void)state;
	assert_non_null(pd);
	errno = 0;
	assert_null(ibv_alloc_td(ctx, &ta));
	assert_int_equal(errno, EINVAL);
	ta.comp_mask = 0;
	td = ibv_alloc_td(ctx, &ta);
	assert_non_null(td);
	pa.pd = pd;
	pa.td = td;
	pa.comp_mask = 1 << 5;
	errno = 0;
	assert_null(ibv_alloc_parent_domain(ctx, &pa));
	assert_int_equal(errno, EINVAL);
	pa.comp_mask = 0;
	d = ibv_alloc_parent_domain(ctx, &pa);
	assert_non_null(d);
	assert_int_equal(d->handle, pd->handle);
	assert_int_equal(ibv_dealloc_td(td), EBUSY);
	assert_int_equal(ibv_dealloc_pd(pd), EBUSY);
	assert_int_equal(ibv_dealloc_pd(d), 0);
	assert_int_equal(ibv_dealloc_td(td), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* ---- memory windows --------------------------------------------------------- */
/* An 8-byte RDMA WRITE from qp (a or b) to the other: its status. */
static int write_from(struct fx *f, struct ibv_qp *qp, uint64_t addr, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)f->buf, 8, f->mr->lkey };
	struct ibv_send_wr w, *bad;
	struct cqe c[4];

	memset(&w, 0, sizeof(w));
	w.wr_id = 0x77;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = addr;
	w.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(qp, &w, &bad), 0);
	assert_int_equal(cqx_take(f, c, 4), 1);
	return c[0].status;
}

static int write_through(struct fx *f, uint64_t addr, uint32_t rkey)
{
	return write_from(f, f->a, addr, rkey);
}

/* One pair with a region over win and windows of both types on its PD. */
struct mwfx { struct fx f; struct ibv_mr *mr; struct ibv_mw *m1, *m2; };

static void mwfx_up(struct mwfx *m, char *win, int access)
{
	fx_up(&m->f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW |
	      IBV_QP_EX_WITH_LOCAL_INV);
	m->mr = ibv_reg_mr(m->f.pd, win, BUF, access);
	m->m1 = ibv_alloc_mw(m->f.pd, IBV_MW_TYPE_1);
	m->m2 = ibv_alloc_mw(m->f.pd, IBV_MW_TYPE_2);
	assert_non_null(m->mr);
	assert_non_null(m->m1);
	assert_non_null(m->m2);
}

static void mwfx_down(struct mwfx *m)
{
	assert_int_equal(ibv_dealloc_mw(m->m1), 0);
	assert_int_equal(ibv_dealloc_mw(m->m2), 0);
	assert_int_equal(ibv_dereg_mr(m->mr), 0);
	fx_down(&m->f);
}

static int bind1(struct mwfx *m, uint64_t addr, uint64_t len)
{
	struct ibv_mw_bind b;
	struct cqe c[4];

	memset(&b, 0, sizeof(b));
	b.wr_id = 1;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info = (struct ibv_mw_bind_info){ m->mr, addr, len, IBV_ACCESS_REMOTE_WRITE };
	assert_int_equal(ibv_bind_mw(m->f.a, m->m1, &b), 0);
	assert_int_equal(cqx_take(&m->f, c, 4), 1);
	if (c[0].status == IBV_WC_SUCCESS)
		assert_int_equal(c[0].opcode, IBV_WC_BIND_MW);
	return c[0].status;
}

TR_TEST_FX(windows_bind_grant_and_invalidate, dev_setup, dev_teardown)
{
	char *win = calloc(1, BUF);
	struct ibv_mw_bind_info bi;
	struct ibv_send_wr w, *bad;
	struct cqe c[4];
	struct mwfx m;
	uint32_t k2;

	(void)state;
	assert_non_null(win);
	/* a region without MW_BIND: the bind completes in error */
	mwfx_up(&m, win, IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(bind1(&m, (uintptr_t)win, 64), IBV_WC_MW_BIND_ERR);
	mwfx_down(&m);
	/* type 1 over 64 bytes: grants there, not past it */
	mwfx_up(&m, win, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_int_equal(bind1(&m, (uintptr_t)win, 64), IBV_WC_SUCCESS);
	assert_int_equal(write_through(&m.f, (uintptr_t)win, m.m1->rkey), IBV_WC_SUCCESS);
	/* type 2 by the new API, then invalidated */
	k2 = ibv_inc_rkey(m.m2->rkey);
	bi = (struct ibv_mw_bind_info){ m.mr, (uintptr_t)win, 64, IBV_ACCESS_REMOTE_WRITE };
	ibv_wr_start(m.f.x);
	m.f.x->wr_id = 2;
	m.f.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(m.f.x, m.m2, k2, &bi);
	assert_int_equal(ibv_wr_complete(m.f.x), 0);
	assert_int_equal(cqx_take(&m.f, c, 4), 1);
	assert_int_equal(c[0].status, IBV_WC_SUCCESS);
	/* a type 2 window grants to requests arriving at the QP that bound it
	 * (a), not at another (b), MW-06 */
	assert_int_equal(write_from(&m.f, m.f.b, (uintptr_t)win + 8, k2), IBV_WC_SUCCESS);
	memset(&w, 0, sizeof(w));
	w.wr_id = 3;
	w.opcode = IBV_WR_LOCAL_INV;
	w.send_flags = IBV_SEND_SIGNALED;
	w.invalidate_rkey = k2;
	assert_int_equal(ibv_post_send(m.f.a, &w, &bad), 0);
	assert_int_equal(cqx_take(&m.f, c, 4), 1);
	assert_int_equal(c[0].opcode, IBV_WC_LOCAL_INV);
	assert_int_equal(c[0].status, IBV_WC_SUCCESS);
	assert_int_equal(write_from(&m.f, m.f.b, (uintptr_t)win + 8, k2), IBV_WC_REM_ACCESS_ERR);
	mwfx_down(&m);
	mwfx_up(&m, win, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_int_equal(bind1(&m, (uintptr_t)win, 64), IBV_WC_SUCCESS);
	assert_int_equal(write_through(&m.f, (uintptr_t)win + 60, m.m1->rkey),
			 IBV_WC_REM_ACCESS_ERR);
	mwfx_down(&m);
	free(win);
}

/* ---- a device of the test's own ---------------------------------------------- */
/*
 * For the tests that need another device than the program's script gives
 * (a completion clock, the legacy provider mode): a script of the test's
 * own, head's top-level lines and dev's device lines, set up before its
 * first ibv_* call (the plugin reads its script once, when it is loaded:
 * these tests run without dev_setup). The program's quirks come along:
 * t5102 runs each quirk's script through here, and a quirk must reach
 * these tests too.
 */
static char own_scr[4096];
static struct ibv_device **own_list;

static struct ibv_context *own_open(const char *head, const char *dev)
{
	const char *prog = getenv("IBVCT_SCRIPT");
	struct fp_script *s = calloc(1, sizeof(*s));
	char path[4200], err[512];
	struct ibv_context *c;
	FILE *fp;
	int i, n = 0;

	assert_non_null(s);
	if (prog && prog[0] ? fp_script_load(prog, s, err, sizeof(err)) : (fp_script_default(s), 0))
		fail_msg("the program's script: %s", err);
	snprintf(path, sizeof(path), "%s/own.fps", tr_dir());
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(head, fp);
	for (i = 0; i < FP_Q__COUNT; i++)
		if (s->quirk[i])
			fprintf(fp, "quirk %s\n", fp_quirk_name((enum fp_quirk)i));
	fprintf(fp, "device fake0\n\tport 1 state active\n%s", dev);
	fclose(fp);
	free(s);
	if (fp_env_setup(path, getenv("IBVCT_PROVIDER"), NULL, own_scr, sizeof(own_scr), err,
			 sizeof(err)))
		fail_msg("fp_env_setup: %s", err);
	own_list = ibv_get_device_list(&n);
	assert_true(own_list && n > 0);
	c = ibv_open_device(own_list[0]);
	assert_non_null(c);
	return c;
}

static void own_close(struct ibv_context *c)
{
	assert_int_equal(ibv_close_device(c), 0);
	ibv_free_device_list(own_list);
	fp_rmtree(own_scr);
}

/* The raw clock through ibv_query_rt_values_ex, which must answer. */
static uint64_t raw_clock(struct ibv_context *c)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	assert_int_equal(ibv_query_rt_values_ex(c, &v), 0);
	assert_int_equal(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	assert_int_equal(v.raw_clock.tv_sec, 0);	/* the count is in tv_nsec, as mlx5 puts it */
	return (uint64_t)v.raw_clock.tv_nsec;
}

/* Three SENDs and their receives on the fixture's QPs (its extended CQ
 * with fx_wc_flags); the six completions in completion order. */
static int ts_traffic(struct fx *f, struct cqe *c)
{
	int i, n = 0, tries;

	for (i = 0; i < 3; i++)
		recv_post(f, 0x80 + i);
	ibv_wr_start(f->x);
	for (i = 0; i < 3; i++) {
		f->x->wr_id = 1 + i;
		f->x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(f->x);
		ibv_wr_set_sge(f->x, f->mr->lkey, (uintptr_t)f->buf, 8);
	}
	assert_int_equal(ibv_wr_complete(f->x), 0);
	for (tries = 0; n < 6 && tries < 1000; tries++)
		n += cqx_take(f, c + n, 8 - n);
	assert_int_equal(n, 6);
	return n;
}

/* ---- completion timestamps (CQX-06) --------------------------------------------- */
/* A clock of 1 GHz with all 64 bits: each CQE's stamp is the clock's count
 * when the engine made it, between the raw clock read before the post and
 * after the poll, never going back in completion order; the device reports
 * the clock; a plain poll_cq is not affected. */
TR_TEST(completion_ts_is_the_clock_when_the_cqe_is_made)
{
	struct ibv_device_attr_ex ax;
	uint64_t before, after;
	struct cqe c[8];
	struct fx f;
	int i, n;

	(void)state;
	ctx = own_open("mode extended\n", "\tclock 1000000\n");
	memset(&ax, 0, sizeof(ax));
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ax), 0);
	assert_int_equal(ax.hca_core_clock, 1000000);
	assert_true(ax.completion_timestamp_mask == UINT64_MAX);
	fx_wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	assert_non_null(f.cqx->read_completion_ts);
	assert_null(f.cqx->read_completion_wallclock_ns);
	before = raw_clock(ctx);
	n = ts_traffic(&f, c);
	after = raw_clock(ctx);
	assert_true(before <= after);
	for (i = 0; i < n; i++) {
		if (c[i].ts < before || c[i].ts > after)
			fail_msg("completion %d: stamp %#llx outside the clock's %#llx..%#llx", i,
				 (unsigned long long)c[i].ts, (unsigned long long)before,
				 (unsigned long long)after);
		if (i && c[i].ts < c[i - 1].ts)
			fail_msg("completion %d: stamp %#llx before completion %d's %#llx", i,
				 (unsigned long long)c[i].ts, i - 1, (unsigned long long)c[i - 1].ts);
	}
	/* the next completions come later on the same clock */
	n = ts_traffic(&f, c);
	for (i = 0; i < n; i++)
		assert_true(c[i].ts >= after);
	fx_down(&f);
	own_close(ctx);
}

/* A clock of 1 kHz whose timestamps keep 8 bits: the device reports the
 * mask, read_completion_ts gives only its bits, the raw clock its whole
 * count (past 0xff a quarter second after boot). */
TR_TEST(completion_ts_keeps_the_bits_of_the_mask)
{
	struct ibv_device_attr_ex ax;
	struct cqe c[8];
	struct fx f;
	int i, n;

	(void)state;
	ctx = own_open("mode extended\n", "\tclock 1 mask 0xff\n");
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ax), 0);
	assert_int_equal(ax.hca_core_clock, 1);
	assert_int_equal(ax.completion_timestamp_mask, 0xff);
	fx_wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	assert_true(raw_clock(ctx) > 0xff);
	n = ts_traffic(&f, c);
	for (i = 0; i < n; i++)
		assert_true(c[i].ts <= 0xff);
	fx_down(&f);
	own_close(ctx);
}

/* No clock (the program's device, strict): no timestamps, and the raw
 * clock is mlx5's answer without one: EOPNOTSUPP with comp_mask 0; an
 * unknown comp_mask bit is EINVAL with nothing written; nothing asked is
 * nothing done. */
TR_TEST_FX(rt_values_without_a_clock, dev_setup, dev_teardown)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_device_attr_ex ax;

	(void)state;
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ax), 0);
	assert_int_equal(ax.completion_timestamp_mask, 0);
	assert_int_equal(ax.hca_core_clock, 0);
	assert_int_equal(ibv_query_rt_values_ex(ctx, &v), EOPNOTSUPP);
	assert_int_equal(v.comp_mask, 0);
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | IBV_VALUES_MASK_RESERVED;
	v.raw_clock.tv_nsec = 77;
	assert_int_equal(ibv_query_rt_values_ex(ctx, &v), EINVAL);
	assert_int_equal(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK | IBV_VALUES_MASK_RESERVED);
	assert_int_equal(v.raw_clock.tv_nsec, 77);
	v.comp_mask = 0;
	assert_int_equal(ibv_query_rt_values_ex(ctx, &v), 0);
	assert_int_equal(v.comp_mask, 0);
	assert_int_equal(v.raw_clock.tv_nsec, 77);
}

/* A driver without query_rt_values (withdrawn, as rxe has none): the
 * library's EOPNOTSUPP with nothing written, while the device still
 * reports its clock and stamps completions. */
TR_TEST(withdrawn_rt_values_answer_as_libibverbs)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_device_attr_ex ax;
	struct cqe c[8];
	struct fx f;

	(void)state;
	ctx = own_open("withdraw query_rt_values\n", "\tclock 1000000\n");
	assert_int_equal(ibv_query_rt_values_ex(ctx, &v), EOPNOTSUPP);
	assert_int_equal(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ax), 0);
	assert_int_equal(ax.hca_core_clock, 1000000);
	fx_wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	fx_up(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	assert_int_equal(ts_traffic(&f, c), 6);
	assert_true(c[0].ts > 0 && c[5].ts >= c[0].ts);
	fx_down(&f);
	own_close(ctx);
}

/* ---- legacy provider mode ------------------------------------------------------ */
/* A provider of the 1.1 ABI has none of the extension ops: each answers as
 * rdma-core does without it, whatever the device (here one with a clock). */
TR_TEST(legacy_provider_has_none_of_them)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_device_attr_ex ax;
	struct ibv_cq_init_attr_ex ca;
	struct ibv_qp_init_attr_ex ia;
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *q;

	(void)state;
	c = own_open("mode legacy\n", "\tclock 1000000\n");
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	/* no create_cq_ex op: the library's EOPNOTSUPP, with timestamps too */
	memset(&ca, 0, sizeof(ca));
	ca.cqe = 4;
	errno = 0;
	assert_null(ibv_create_cq_ex(c, &ca));
	assert_int_equal(errno, EOPNOTSUPP);
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	assert_null(ibv_create_cq_ex(c, &ca));
	assert_int_equal(errno, EOPNOTSUPP);
	/* no query_rt_values: EOPNOTSUPP, nothing written */
	assert_int_equal(ibv_query_rt_values_ex(c, &v), EOPNOTSUPP);
	assert_int_equal(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	/* no new post-send API: send_ops_flags refused, no ibv_qp_ex */
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_RC;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = pd;
	ia.send_cq = ia.recv_cq = cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	errno = 0;
	assert_null(ibv_create_qp_ex(c, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	q = ibv_create_qp_ex(c, &ia);
	assert_non_null(q);
	assert_null(ibv_qp_to_qp_ex(q));
	/* no extended query: the base attributes, the rest zero (no clock) */
	memset(&ax, 0xa5, sizeof(ax));
	assert_int_equal(ibv_query_device_ex(c, NULL, &ax), 0);
	assert_int_equal(ax.phys_port_cnt_ex, 0);
	assert_int_equal(ax.device_cap_flags_ex, 0);
	assert_int_equal(ax.completion_timestamp_mask, 0);
	assert_int_equal(ax.hca_core_clock, 0);
	assert_int_equal(ax.orig_attr.phys_port_cnt, 1);
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	own_close(c);
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
