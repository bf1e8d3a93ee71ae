/* SPDX-License-Identifier: MIT */
/*
 * t4100: the extension mechanism and the compat layer for providers
 * without extensions (COMPAT-): the context the application holds is a
 * verbs_context whatever the provider; the inline dispatch honours sz;
 * basic ibv_create_qp_ex/ibv_create_srq_ex work on a 1.1-only provider;
 * XRC verbs fail with EOPNOTSUPP where the provider lacks them; events
 * name the application's objects; the data path works through the
 * wrappers. On the reference target the suite runs under each provider
 * mode, and one test runs both modes side by side and requires identical
 * results on their common ground. The facts of one driver (rxe has no XRC,
 * COMPAT-20..22; mlx5 and mlx4 report XRC exactly when they have it,
 * COMPAT-25) are checked where the device's driver is that one, and are
 * not applicable (a skip saying so) on any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "th.h"

TH_TEST(context_is_an_extended_verbs_context, "COMPAT-01 COMPAT-02 COMPAT-08", 0)
{
	struct verbs_context *v = verbs_get_ctx(t->ctx);

	assert_ptr_equal(t->ctx->abi_compat, __VERBS_ABI_IS_EXTENDED);
	assert_non_null(v);
	assert_ptr_equal(&v->context, t->ctx);		/* the context is last */
	/* every op this header knows is within sz and set (COMPAT-08) */
	if (v->sz < sizeof(*v))
		th_note("library verbs_context is %zu bytes, this header's %zu (older library)",
			v->sz, sizeof(*v));
	if (th_strict())
		assert_int_equal(v->sz, sizeof(*v));
	assert_true(v->sz >= sizeof(*v) - offsetof(struct verbs_context, open_qp));
	assert_non_null(v->open_xrcd);
	assert_non_null(v->close_xrcd);
	assert_non_null(v->create_srq_ex);
	assert_non_null(v->get_srq_num);
	assert_non_null(v->create_qp_ex);
	assert_non_null(v->open_qp);
}

/* COMPAT-03: the header's inline reaches create_qp_ex only when sz covers
 * it; with sz one short the op is not called (EOPNOTSUPP). */
TH_TEST(short_sz_hides_an_extension_op, "COMPAT-03", 0)
{
	struct verbs_context *v = verbs_get_ctx(t->ctx);
	size_t need = sizeof(*v) - offsetof(struct verbs_context, create_qp_ex), saved;
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *q;

	assert_non_null(v);
	assert_non_null(pd);
	assert_non_null(cq);
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;	/* not the legacy route */
	a.pd = pd;
	a.send_cq = cq;
	a.recv_cq = cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 2;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	saved = v->sz;
	v->sz = need - 1;
	errno = 0;
	q = ibv_create_qp_ex(t->ctx, &a);
	v->sz = saved;
	assert_null(q);
	if (!th_strict() && errno == ENOSYS)
		th_note("short sz: ENOSYS (a header before rdma-core v28)");
	else
		assert_int_equal(errno, EOPNOTSUPP);
	v->sz = need;
	q = ibv_create_qp_ex(t->ctx, &a);
	v->sz = saved;
	if (!q && errno == EOPNOTSUPP) {
		/* a 1.1 provider has no create_qp_ex: the op answers the same; a
		 * driver may refuse the XRCD bit itself (rxe: rdma-core v44.0
		 * providers/rxe/rxe.c:1282 check_qp_init_attr) */
		th_note("create_qp_ex reached: EOPNOTSUPP (no create_qp_ex op, or a driver "
			"without the XRCD bit)");
	} else {
		assert_non_null(q);
		assert_int_equal(ibv_destroy_qp(q), 0);
	}
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

TH_TEST(xrc_verbs_fail_eopnotsupp_without_provider_ops, "COMPAT-09 XRCD-12 OPENQP-10", 0)
{
	struct ibv_xrcd fake = { .context = t->ctx };
	struct ibv_qp_open_attr oa;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *s;
	struct ibv_xrcd *x;
	uint32_t n;
	int ret;

	errno = 0;
	x = th_xrcd(t->ctx, -1, O_CREAT);
	if (x) {
		assert_int_equal(ibv_close_xrcd(x), 0);
		th_skip("this provider has the XRC ops (COMPAT-09 is about one without)");
	}
#define OLD_OR(e) (!th_strict() && errno == ENOSYS ? ENOSYS : (e))
	assert_int_equal(errno, OLD_OR(EOPNOTSUPP));
	pd = ibv_alloc_pd(t->ctx);
	cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	qa.pd = pd;
	qa.send_cq = cq;
	qa.cap.max_send_wr = 2;
	qa.cap.max_send_sge = 1;
	errno = 0;
	assert_null(ibv_create_qp_ex(t->ctx, &qa));
	assert_int_equal(errno, OLD_OR(EOPNOTSUPP));
	if (th_mode()) {
		/* only where the library is ours: a bare ibv_xrcd naming the context */
		memset(&oa, 0, sizeof(oa));
		oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
		oa.qp_num = 0x100;
		oa.xrcd = &fake;
		oa.qp_type = IBV_QPT_XRC_RECV;
		errno = 0;
		assert_null(ibv_open_qp(t->ctx, &oa));
		assert_int_equal(errno, EOPNOTSUPP);
	}
	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	sa.pd = pd;
	sa.attr.max_wr = 2;
	sa.attr.max_sge = 1;
	s = ibv_create_srq_ex(t->ctx, &sa);
	assert_non_null(s);
	ret = ibv_get_srq_num(s, &n);
	if (ret == 0)
		th_note("get_srq_num on a basic SRQ answers 0 (SRQX-12: implementation-defined)");
	else if (th_mode() && !strcmp(th_mode(), "legacy"))
		assert_int_equal(ret, EOPNOTSUPP);
	assert_int_equal(ibv_destroy_srq(s), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

TH_TEST(basic_ex_verbs_work_on_any_provider, "COMPAT-11 QPX-01 SRQX-06", 0)
{
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex qa;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *s1, *s2;
	struct ibv_qp *q;

	assert_non_null(pd);
	assert_non_null(cq);
	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	sa.pd = pd;
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	s1 = ibv_create_srq_ex(t->ctx, &sa);		/* SRQX-06: legacy route */
	assert_non_null(s1);
	sa.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	sa.srq_type = IBV_SRQT_BASIC;
	s2 = ibv_create_srq_ex(t->ctx, &sa);
	assert_non_null(s2);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;		/* QPX-01: legacy route */
	qa.pd = pd;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.srq = s1;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	q = ibv_create_qp_ex(t->ctx, &qa);
	assert_non_null(q);
	assert_ptr_equal(q->srq, s1);
	assert_int_equal(q->state, IBV_QPS_RESET);
	assert_int_equal(ibv_destroy_srq(s1), EBUSY);	/* the QP holds it */
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_destroy_srq(s2), 0);
	assert_int_equal(ibv_destroy_srq(s1), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* RC loopback through whatever wrappers the library put in between. */
struct rc {
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	char *buf;
	struct ibv_mr *mr;
};

static void rc_up(struct th_ctx *t, struct rc *r, int channel)
{
	memset(r, 0, sizeof(*r));
	r->pd = ibv_alloc_pd(t->ctx);
	assert_non_null(r->pd);
	if (channel) {
		r->ch = ibv_create_comp_channel(t->ctx);
		assert_non_null(r->ch);
	}
	r->cq = ibv_create_cq(t->ctx, 32, (void *)(uintptr_t)0xc0, r->ch, 0);
	assert_non_null(r->cq);
	r->buf = calloc(1, 4096);
	assert_non_null(r->buf);
	r->mr = ibv_reg_mr(r->pd, r->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	assert_non_null(r->mr);
	r->a = th_rc_qp(r->pd, r->cq, IBV_QPT_RC);
	r->b = th_rc_qp(r->pd, r->cq, IBV_QPT_RC);
	assert_non_null(r->a);
	assert_non_null(r->b);
	assert_int_equal(th_pair_connect(r->a, r->b, t->port, 1), 0);
	assert_int_equal(r->a->state, IBV_QPS_RTS);
}

static void rc_down(struct rc *r)
{
	assert_int_equal(ibv_destroy_qp(r->a), 0);
	assert_int_equal(ibv_destroy_qp(r->b), 0);
	assert_int_equal(ibv_dereg_mr(r->mr), 0);
	assert_int_equal(ibv_destroy_cq(r->cq), 0);
	if (r->ch)
		assert_int_equal(ibv_destroy_comp_channel(r->ch), 0);
	assert_int_equal(ibv_dealloc_pd(r->pd), 0);
	free(r->buf);
}

/* One SEND a -> b and one RDMA READ; results into v[] for comparisons:
 * opcode * 1000 + byte_len, but for the SEND's own completion, whose
 * byte_len the verbs define only for RDMA READ and atomics on the send
 * side (ibv_poll_cq.3): mlx5 and mlx4 leave the field as it was (rdma-core
 * v44.0 providers/mlx5/cq.c:176 handle_good_req, providers/mlx4/cq.c:128). */
static void rc_traffic(struct rc *r, int *v)
{
	struct ibv_sge rs = { (uintptr_t)(r->buf + 1024), 64, r->mr->lkey };
	struct ibv_sge ss = { (uintptr_t)r->buf, 16, r->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr s1, s2, *bad;
	struct ibv_wc wc;
	int i;

	memcpy(r->buf, "compat-send-0123", 16);
	memcpy(r->buf + 2048, "compat-read-4567", 16);
	assert_int_equal(ibv_post_recv(r->b, &rwr, &rbad), 0);
	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	s1.wr_id = 1;
	s1.sg_list = &ss;
	s1.num_sge = 1;
	s1.opcode = IBV_WR_SEND;
	s1.send_flags = IBV_SEND_SIGNALED;
	s1.next = &s2;
	s2 = s1;
	s2.wr_id = 2;
	s2.next = NULL;
	s2.opcode = IBV_WR_RDMA_READ;
	s2.wr.rdma.remote_addr = (uintptr_t)(r->buf + 2048);
	s2.wr.rdma.rkey = r->mr->rkey;
	assert_int_equal(ibv_post_send(r->a, &s1, &bad), 0);
	for (i = 0; i < 3; i++) {
		memset(&wc, 0, sizeof(wc));
		assert_int_equal(th_poll(r->cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		v[wc.wr_id] = wc.opcode * 1000 + (wc.wr_id == 1 ? 0 : (int)wc.byte_len);
		if (wc.wr_id == 7)
			assert_int_equal(wc.qp_num, r->b->qp_num);
		else
			assert_int_equal(wc.qp_num, r->a->qp_num);
	}
	assert_memory_equal(r->buf + 1024, "compat-send-0123", 16);
	assert_memory_equal(r->buf, "compat-read-4567", 16);
}

TH_TEST(data_path_works_through_the_wrappers, "COMPAT-14", 0)
{
	int v[8] = { 0 };
	struct rc r;

	rc_up(t, &r, 0);
	rc_traffic(&r, v);
	assert_int_equal(v[1], IBV_WC_SEND * 1000);
	assert_int_equal(v[2], IBV_WC_RDMA_READ * 1000 + 16);
	assert_int_equal(v[7], IBV_WC_RECV * 1000 + 16);
	rc_down(&r);
}

TH_TEST(cq_event_names_the_applications_cq, "COMPAT-13", 0)
{
	struct pollfd p;
	struct ibv_cq *ecq;
	void *ectx;
	int v[8];
	struct rc r;

	rc_up(t, &r, 1);
	assert_int_equal(ibv_req_notify_cq(r.cq, 0), 0);
	rc_traffic(&r, v);
	p.fd = r.ch->fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_int_equal(ibv_get_cq_event(r.ch, &ecq, &ectx), 0);
	assert_ptr_equal(ecq, r.cq);
	assert_ptr_equal(ectx, (void *)(uintptr_t)0xc0);
	ibv_ack_cq_events(r.cq, 1);
	rc_down(&r);
}

TH_TEST(async_event_names_the_applications_qp, "COMPAT-13", TH_NO_CTX | TH_REF_ONLY)
{
	struct ibv_async_event ev;
	struct pollfd p;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *q;

	th_reenv(NULL, -1, "event comm_est after modify_qp 1");
	t->ctx = th_open();
	pd = ibv_alloc_pd(t->ctx);
	cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	q = th_rc_qp(pd, cq, IBV_QPT_RC);
	assert_non_null(q);
	q->qp_context = (void *)(uintptr_t)0xa5;
	assert_int_equal(th_qp_to_init(q, t->port), 0);
	p.fd = t->ctx->async_fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_int_equal(ibv_get_async_event(t->ctx, &ev), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_COMM_EST);
	assert_ptr_equal(ev.element.qp, q);
	assert_ptr_equal(ev.element.qp->qp_context, (void *)(uintptr_t)0xa5);
	ibv_ack_async_event(&ev);
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* ---- both modes side by side (reference target) ----------------------------- */
static void common_ground_peer(struct th_peer *self, void *arg)
{
	struct th_ctx c = { .port = 1 };
	int v[8] = { 0 }, i;
	struct rc r;

	th_reenv(arg, -1, NULL);
	c.ctx = th_open();
	rc_up(&c, &r, 0);
	rc_traffic(&r, v);
	rc_down(&r);
	assert_int_equal(ibv_close_device(c.ctx), 0);
	for (i = 0; i < 8; i++)
		th_send(self, (uint32_t)v[i]);
}

TH_TEST(legacy_and_extended_give_identical_results, "COMPAT-11 COMPAT-14", TH_NO_CTX | TH_REF_ONLY)
{
	struct th_peer leg, ext;
	uint32_t a, b;
	int i, diff = 0;

	if (mkdir("legacy", 0700) || mkdir("extended", 0700))
		th_fail("mkdir: %s", strerror(errno));
	assert_int_equal(chdir("legacy"), 0);
	th_peer_start(&leg, common_ground_peer, "legacy");
	assert_int_equal(chdir("../extended"), 0);
	th_peer_start(&ext, common_ground_peer, "extended");
	assert_int_equal(chdir(".."), 0);
	for (i = 0; i < 8; i++) {
		a = th_recv(&leg);
		b = th_recv(&ext);
		if (a != b) {
			printf("result %d: legacy %u, extended %u\n", i, a, b);
			diff++;
		}
	}
	assert_int_equal(th_peer_wait(&leg), 0);
	assert_int_equal(th_peer_wait(&ext), 0);
	assert_int_equal(diff, 0);
}

/* ---- facts of one driver (COMPAT-20..25) -------------------------------------- */
#define OLD_ENOSYS(what)						\
	(!th_strict() && errno == ENOSYS ? (th_note("%s: ENOSYS (rdma-core before v28)", what), 1) : 0)

/* COMPAT-20: rxe has never set IB_DEVICE_XRC (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_param.h RXE_DEVICE_CAP_FLAGS). */
TH_TEST(rxe_reports_no_xrc_capability, "COMPAT-20", 0)
{
	struct ibv_device_attr da;

	th_need_driver("rxe", "COMPAT-20 is a fact of rxe");
	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	if (da.device_cap_flags & IBV_DEVICE_XRC)
		th_fail("rxe reports IBV_DEVICE_XRC");
}

/* COMPAT-21: rxe's provider has no open_xrcd (rdma-core v44.0
 * providers/rxe/rxe.c rxe_ctx_ops) and its kernel driver no alloc_xrcd:
 * NULL, EOPNOTSUPP (libibverbs' stub, dummy_ops.c; ENOSYS before v28),
 * for a private domain and for one on a file alike. */
TH_TEST(rxe_open_xrcd_fails_eopnotsupp, "COMPAT-21", 0)
{
	struct ibv_xrcd *x;
	int fd, i;

	th_need_driver("rxe", "COMPAT-21 is a fact of rxe");
	fd = th_file("xrcd-file");
	for (i = 0; i < 2; i++) {
		errno = 0;
		x = th_xrcd(t->ctx, i ? fd : -1, O_CREAT);
		if (x) {
			assert_int_equal(ibv_close_xrcd(x), 0);
			th_fail("ibv_open_xrcd succeeded on rxe (fd %d)", i ? fd : -1);
		}
		if (!OLD_ENOSYS("open_xrcd"))
			assert_int_equal(errno, EOPNOTSUPP);
	}
	close(fd);
}

/* COMPAT-22: rxe_qp_chk_init allows SMI, GSI, RC, UC and UD only: an
 * XRC_SEND QP (which needs no XRCD, so it reaches the kernel through
 * rxe_create_qp) is NULL, EOPNOTSUPP (linux v6.1 sw/rxe/rxe_qp.c
 * rxe_qp_chk_init, "RDMA/rxe: Add check for supported QP types"). Kernels
 * before that check refused it as a QP without a receive CQ, EINVAL:
 * accepted, and noted, on a real device; the reference target plays v6.1. */
TH_TEST(rxe_refuses_xrc_send_qps, "COMPAT-22", 0)
{
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp_init_attr a;
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *q;
	int i;

	th_need_driver("rxe", "COMPAT-22 is a fact of rxe");
	pd = ibv_alloc_pd(t->ctx);
	cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	for (i = 0; i < 2; i++) {
		errno = 0;
		if (i == 0) {		/* the 1.1 verb */
			memset(&a, 0, sizeof(a));
			a.qp_type = IBV_QPT_XRC_SEND;
			a.send_cq = cq;
			a.cap.max_send_wr = 2;
			a.cap.max_send_sge = 1;
			q = ibv_create_qp(pd, &a);
		} else {		/* the _ex verb's route for mask PD (QPX-01) */
			memset(&ax, 0, sizeof(ax));
			ax.qp_type = IBV_QPT_XRC_SEND;
			ax.comp_mask = IBV_QP_INIT_ATTR_PD;
			ax.pd = pd;
			ax.send_cq = cq;
			ax.cap.max_send_wr = 2;
			ax.cap.max_send_sge = 1;
			q = ibv_create_qp_ex(t->ctx, &ax);
		}
		if (q) {
			assert_int_equal(ibv_destroy_qp(q), 0);
			th_fail("an XRC_SEND QP was created on rxe");
		}
		if (errno == EINVAL && !th_mode())
			th_note("XRC_SEND: EINVAL (a kernel before rxe_qp_chk_init's type check)");
		else
			assert_int_equal(errno, EOPNOTSUPP);
	}
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* COMPAT-25: mlx5 sets IB_DEVICE_XRC and installs its XRCD ops only with
 * the firmware's xrc capability (linux v6.1 drivers/infiniband/hw/mlx5/
 * main.c mlx5_ib_query_device, mlx5_ib_stage_caps_init), and its provider
 * implements every XRC verb (rdma-core v44.0 providers/mlx5/mlx5.c); mlx4
 * the same by MLX4_DEV_CAP_FLAG_XRC. So the flag and the verbs agree:
 * with it a domain, an XRC SRQ and its number, both XRC QP types and an
 * open_qp work; without it open_xrcd fails with EOPNOTSUPP. */
TH_TEST(mlx_xrc_capability_matches_the_xrc_verbs, "COMPAT-25", 0)
{
	struct ibv_device_attr da;
	struct ibv_xrcd *x;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *s;
	struct ibv_qp *ini, *tgt, *o;
	uint32_t n;

	th_need_driver("mlx5 mlx4", "COMPAT-25 is a fact of mlx5 and mlx4");
	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	errno = 0;
	x = th_xrcd(t->ctx, -1, O_CREAT);
	if (!(da.device_cap_flags & IBV_DEVICE_XRC)) {
		if (x) {
			assert_int_equal(ibv_close_xrcd(x), 0);
			th_fail("no IBV_DEVICE_XRC, yet ibv_open_xrcd succeeds");
		}
		if (!OLD_ENOSYS("open_xrcd without XRC"))
			assert_int_equal(errno, EOPNOTSUPP);
		th_note("no IBV_DEVICE_XRC (firmware without xrc), and no XRC domain");
		return;
	}
	if (!x)
		th_fail("IBV_DEVICE_XRC, yet ibv_open_xrcd fails: %s", strerror(errno));
	pd = ibv_alloc_pd(t->ctx);
	cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	s = th_xsrq(t->ctx, pd, x, cq, 4);
	assert_non_null(s);
	assert_int_equal(ibv_get_srq_num(s, &n), 0);
	ini = th_ini_qp(t->ctx, pd, cq);
	tgt = th_tgt_qp(t->ctx, x);
	assert_non_null(ini);
	assert_non_null(tgt);
	o = th_open_tgt(t->ctx, x, tgt->qp_num);
	assert_non_null(o);
	th_note("IBV_DEVICE_XRC, and every XRC verb works");
	assert_int_equal(ibv_destroy_qp(o), 0);
	assert_int_equal(ibv_destroy_qp(tgt), 0);
	assert_int_equal(ibv_destroy_qp(ini), 0);
	assert_int_equal(ibv_destroy_srq(s), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_xrcd(x), 0);
}

int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
