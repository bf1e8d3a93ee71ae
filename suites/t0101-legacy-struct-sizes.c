/* SPDX-License-Identifier: MIT */
/*
 * t0101: caller-allocated structures of their historical sizes, each placed
 * to end exactly at a PROT_NONE page, passed to the verbs that take them:
 * a library or provider that reads or writes one byte past the size an old
 * application compiled in kills the test with SIGSEGV (ABI-03, ABI-06).
 *   ibv_qp_init_attr     64 bytes (ibv_create_qp, ibv_query_qp)
 *   ibv_srq_init_attr    24 bytes (ibv_create_srq)
 *   ibv_qp_attr         136 bytes (before rate_limit: modify and query)
 *   ibv_qp_init_attr_ex  80 bytes (1.1.8: up to xrcd, XRC_RECV)
 *   ibv_srq_init_attr_ex 56 bytes (1.1.8: up to cq, XRC SRQ)
 *   ibv_send_wr          72 and 80 bytes: see t1000.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "th.h"

#define QP_INIT_1_1	64
#define SRQ_INIT_1_1	24
#define QP_ATTR_OLD	136
#define QP_INIT_EX_118	80
#define SRQ_INIT_EX_118	56

TH_TEST(qp_init_attr_of_64_bytes_at_guard_page, "ABI-03", 0)
{
	struct ibv_qp_init_attr *a = th_guard_alloc(QP_INIT_1_1), *q = th_guard_alloc(QP_INIT_1_1);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_qp_attr qa;
	struct ibv_qp *qp;

	assert_non_null(pd);
	assert_non_null(cq);
	a->send_cq = cq;
	a->recv_cq = cq;
	a->qp_type = IBV_QPT_RC;
	a->cap.max_send_wr = 4;
	a->cap.max_recv_wr = 4;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->sq_sig_all = 1;
	qp = ibv_create_qp(pd, a);
	assert_non_null(qp);
	assert_true(a->cap.max_send_wr >= 4);
	assert_int_equal(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, q), 0);
	assert_int_equal(q->qp_type, IBV_QPT_RC);
	assert_int_equal(q->sq_sig_all, 1);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	th_guard_free(a, QP_INIT_1_1);
	th_guard_free(q, QP_INIT_1_1);
}

TH_TEST(srq_init_attr_of_24_bytes_at_guard_page, "ABI-03", 0)
{
	struct ibv_srq_init_attr *a = th_guard_alloc(SRQ_INIT_1_1);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_srq *s;

	assert_non_null(pd);
	a->srq_context = (void *)(uintptr_t)0x24;
	a->attr.max_wr = 4;
	a->attr.max_sge = 1;
	s = ibv_create_srq(pd, a);
	assert_non_null(s);
	assert_true(a->attr.max_wr >= 4);
	assert_ptr_equal(s->srq_context, (void *)(uintptr_t)0x24);
	assert_int_equal(ibv_destroy_srq(s), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	th_guard_free(a, SRQ_INIT_1_1);
}

TH_TEST(qp_attr_of_136_bytes_at_guard_page, "ABI-03", 0)
{
	struct ibv_qp_attr *a = th_guard_alloc(QP_ATTR_OLD);
	struct ibv_qp_init_attr ia;
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp;

	assert_int_equal(offsetof(struct ibv_qp_attr, rate_limit), QP_ATTR_OLD);
	assert_non_null(pd);
	assert_non_null(cq);
	qp = th_rc_qp(pd, cq, IBV_QPT_RC);
	assert_non_null(qp);
	a->qp_state = IBV_QPS_INIT;
	a->port_num = t->port;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	assert_int_equal(ibv_modify_qp(qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
	memset(a, 0, QP_ATTR_OLD);
	assert_int_equal(ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
				      IBV_QP_CAP | IBV_QP_AV | IBV_QP_ALT_PATH, &ia), 0);
	assert_int_equal(a->qp_state, IBV_QPS_INIT);
	assert_int_equal(a->port_num, t->port);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	th_guard_free(a, QP_ATTR_OLD);
}

TH_TEST(xrc_init_attrs_of_1_1_8_size_at_guard_page, "ABI-03", TH_XRC)
{
	struct ibv_qp_init_attr_ex *qa = th_guard_alloc(QP_INIT_EX_118);
	struct ibv_srq_init_attr_ex *sa = th_guard_alloc(SRQ_INIT_EX_118);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_xrcd *x = th_xrcd(t->ctx, -1, O_CREAT);
	struct ibv_srq *s;
	struct ibv_qp *q;

	assert_non_null(pd);
	assert_non_null(cq);
	assert_non_null(x);
	sa->comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			IBV_SRQ_INIT_ATTR_CQ;
	sa->srq_type = IBV_SRQT_XRC;
	sa->pd = pd;
	sa->xrcd = x;
	sa->cq = cq;
	sa->attr.max_wr = 4;
	sa->attr.max_sge = 1;
	s = ibv_create_srq_ex(t->ctx, sa);
	assert_non_null(s);
	qa->qp_type = IBV_QPT_XRC_RECV;
	qa->comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa->xrcd = x;
	q = ibv_create_qp_ex(t->ctx, qa);
	assert_non_null(q);
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_destroy_srq(s), 0);
	assert_int_equal(ibv_close_xrcd(x), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	th_guard_free(qa, QP_INIT_EX_118);
	th_guard_free(sa, SRQ_INIT_EX_118);
}

TH_TEST(guard_page_placement_faults_past_the_end, "ABI-03", TH_NO_CTX)
{
	/* the harness itself: the byte before the end is usable, the struct
	 * ends at the boundary (the next byte is the PROT_NONE page) */
	char *p = th_guard_alloc(QP_INIT_1_1);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	p[QP_INIT_1_1 - 1] = 1;
	assert_int_equal(((uintptr_t)p + QP_INIT_1_1) % pg, 0);
	th_guard_free(p, QP_INIT_1_1);
}

int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
