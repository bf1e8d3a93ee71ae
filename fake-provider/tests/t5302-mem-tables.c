/* SPDX-License-Identifier: MIT */
/*
 * t5302: what the fake provider publishes for peers follows the verbs
 * (fake-provider/engine/mem.c, engine/README.md "Registered memory"). The
 * test reads its own process's tables as a peer does (the device's memfd,
 * mapped through fe_mem_peer_map, checked with fe_mem_view_remote, the
 * engine's own code linked in) while it calls the verbs: reg, rereg,
 * dereg, create, modify (access, states, error), destroy, bind and
 * dealloc of a window, and a QP's error from an async event.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fe_mem.h"
#include "fp_test.h"
#include "tf.h"

/* The inbox before the tables (transport.c FP_INBOX_HDR + FP_INBOX_DATA):
 * a different layout fails fe_mem_peer_map, and this test with it. */
#define BASE	(4096u + (4u << 20))
#define WR	IBV_ACCESS_REMOTE_WRITE
#define RD	IBV_ACCESS_REMOTE_READ

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
	struct fe_mem_view v;
};

static struct fp_script script;

/* Whether a peer may place need on [off, off + len) of the buffer through
 * rkey at the QP, from the tables; where, the same byte as the buffer's. */
static bool grants(struct env *e, uint32_t rkey, size_t off, size_t len, int need)
{
	char *w;

	if (fe_mem_view_remote(&e->v, e->qp->qp_num, (uint64_t)(uintptr_t)e->buf + off, rkey, len,
			       need, &w))
		return false;
	e->buf[off] ^= 0x5a;
	assert_int_equal(w[0], e->buf[off]);
	e->buf[off] ^= 0x5a;
	return true;
}

static void env_open(struct env *e)
{
	struct ibv_qp_init_attr qa;

	/* the engine's quirk checks read this process's script: none */
	fp_script_default(&script);
	fp__script = &script;
	e->len = 3 * (size_t)sysconf(_SC_PAGESIZE);
	e->ctx = fpt_open();
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	assert_true(e->pd && e->cq);
	e->buf = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(e->buf != MAP_FAILED);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = e->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	e->qp = ibv_create_qp(e->pd, &qa);
	assert_non_null(e->qp);
	e->mr = ibv_reg_mr(e->pd, e->buf, e->len, IBV_ACCESS_LOCAL_WRITE | WR | RD |
			   IBV_ACCESS_MW_BIND);
	assert_non_null(e->mr);
	fe_mem_peer_map(&e->v, fpt_memfd(), BASE);
	assert_non_null(e->v.tabs);
}

static void env_close(struct env *e)
{
	fe_mem_peer_unmap(&e->v);
	if (e->qp)
		assert_int_equal(ibv_destroy_qp(e->qp), 0);
	if (e->mr)
		assert_int_equal(ibv_dereg_mr(e->mr), 0);
	assert_int_equal(ibv_destroy_cq(e->cq), 0);
	assert_int_equal(ibv_dealloc_pd(e->pd), 0);
	fpt_close(e->ctx);
	munmap(e->buf, e->len);
}

/* create, modify through the states and the access, error, destroy */
TR_TEST(qp_table_follows_create_modify_destroy)
{
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct ibv_qp_attr a;
	struct env e;
	uint32_t qpn;

	(void)state;
	env_open(&e);
	assert_false(grants(&e, e.mr->rkey, 0, 8, WR));		/* RESET */
	assert_int_equal(tf_qp_to_init(e.qp, 1), 0);
	assert_false(grants(&e, e.mr->rkey, 0, 8, WR));		/* INIT */
	assert_int_equal(tf_qp_to_rtr(e.qp, 1, e.qp->qp_num), 0);
	assert_true(grants(&e, e.mr->rkey, 0, 8, WR));		/* RTR receives */
	assert_int_equal(tf_qp_to_rts(e.qp), 0);
	assert_true(grants(&e, e.mr->rkey, 100, 8, RD));
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = RD;
	assert_int_equal(ibv_modify_qp(e.qp, &a, IBV_QP_ACCESS_FLAGS), 0);
	assert_false(grants(&e, e.mr->rkey, 0, 8, WR));		/* the QP's access */
	assert_true(grants(&e, e.mr->rkey, 0, 8, RD));
	a.qp_state = IBV_QPS_ERR;
	assert_int_equal(ibv_modify_qp(e.qp, &a, IBV_QP_STATE), 0);
	assert_false(grants(&e, e.mr->rkey, 0, 8, RD));
	a.qp_state = IBV_QPS_RESET;
	assert_int_equal(ibv_modify_qp(e.qp, &a, IBV_QP_STATE), 0);
	o.access = WR;
	assert_int_equal(tf_qp_connect_o(e.qp, 1, e.qp->qp_num, &o), 0);
	assert_true(grants(&e, e.mr->rkey, 0, 8, WR));
	assert_false(grants(&e, e.mr->rkey, 0, 8, RD));
	qpn = e.qp->qp_num;
	assert_int_equal(ibv_destroy_qp(e.qp), 0);
	e.qp = NULL;
	{
		char *w;

		assert_int_equal(fe_mem_view_remote(&e.v, qpn, (uint64_t)(uintptr_t)e.buf, e.mr->rkey,
						    8, WR, &w), FE_MEM_FALLBACK);
	}
	env_close(&e);
}

/* reg, rereg (access, translation), dereg */
TR_TEST(key_table_follows_reg_rereg_dereg)
{
	struct ibv_mr *small;
	struct env e;
	uint32_t rkey;

	(void)state;
	env_open(&e);
	assert_int_equal(tf_qp_connect(e.qp, 1, e.qp->qp_num), 0);
	assert_true(grants(&e, e.mr->rkey, 0, e.len, WR));
	assert_false(grants(&e, e.mr->rkey, 1, e.len, WR));	/* past its end */
	small = ibv_reg_mr(e.pd, e.buf + 10, 20, IBV_ACCESS_LOCAL_WRITE | WR);
	assert_non_null(small);
	assert_true(grants(&e, small->rkey, 10, 20, WR));
	assert_false(grants(&e, small->rkey, 10, 20, RD));
	assert_false(grants(&e, small->rkey, 9, 20, WR));
	assert_int_equal(ibv_rereg_mr(small, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE | RD), 0);
	assert_false(grants(&e, small->rkey, 10, 20, WR));
	assert_true(grants(&e, small->rkey, 10, 20, RD));
	assert_int_equal(ibv_rereg_mr(small, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, e.buf + 4096,
				      100, 0), 0);
	assert_false(grants(&e, small->rkey, 10, 20, RD));
	assert_true(grants(&e, small->rkey, 4096, 100, RD));
	rkey = small->rkey;
	assert_int_equal(ibv_dereg_mr(small), 0);
	assert_false(grants(&e, rkey, 4096, 8, RD));
	assert_true(grants(&e, e.mr->rkey, 4096, 8, RD));	/* the big one still */
	rkey = e.mr->rkey;
	assert_int_equal(ibv_dereg_mr(e.mr), 0);
	e.mr = NULL;
	assert_false(grants(&e, rkey, 0, 8, RD));
	env_close(&e);
}

/* a type 1 window: bound, rebound, unbound, deallocated */
TR_TEST(key_table_follows_windows)
{
	struct ibv_mw_bind bind;
	struct ibv_wc wc;
	struct ibv_mw *mw;
	struct env e;
	uint32_t rkey;

	(void)state;
	env_open(&e);
	assert_int_equal(tf_qp_connect(e.qp, 1, e.qp->qp_num), 0);
	mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_1);
	if (!mw)
		tr_skip("no memory windows here (%s)", strerror(errno));
	assert_false(grants(&e, mw->rkey, 0, 8, RD));
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = e.mr;
	bind.bind_info.addr = (uint64_t)(uintptr_t)e.buf + 64;
	bind.bind_info.length = 128;
	bind.bind_info.mw_access_flags = RD;
	assert_int_equal(ibv_bind_mw(e.qp, mw, &bind), 0);
	assert_int_equal(tf_poll(e.cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_true(grants(&e, mw->rkey, 64, 128, RD));
	assert_false(grants(&e, mw->rkey, 64, 129, RD));	/* its range */
	assert_false(grants(&e, mw->rkey, 64, 8, WR));		/* its access */
	bind.bind_info.length = 0;				/* unbind */
	rkey = mw->rkey;
	assert_int_equal(ibv_bind_mw(e.qp, mw, &bind), 0);
	assert_int_equal(tf_poll(e.cq, &wc), 1);
	assert_false(grants(&e, rkey, 64, 8, RD));
	assert_false(grants(&e, mw->rkey, 64, 8, RD));
	bind.bind_info.length = 128;
	assert_int_equal(ibv_bind_mw(e.qp, mw, &bind), 0);
	assert_int_equal(tf_poll(e.cq, &wc), 1);
	assert_true(grants(&e, mw->rkey, 64, 8, RD));
	rkey = mw->rkey;
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_false(grants(&e, rkey, 64, 8, RD));
	env_close(&e);
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
