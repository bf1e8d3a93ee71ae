/* SPDX-License-Identifier: MIT */
/*
 * t0041: the compat layer (COMPAT-*). Every check runs twice, in peers of
 * the test (tr_peer_start) on a fake host of its own (rt_env.h): once with the fake
 * provider registered as a legacy (1.1) provider, which ref-impl wraps, and
 * once as an extended one. Each peer reports a few result numbers over its
 * pipe; the test asserts them and compares the two modes: the same results,
 * except that XRC verbs fail with EOPNOTSUPP under legacy.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "rt_env.h"

#define NRES 8
#define LEGACY 1
#define EXTENDED 0

struct res {
	int failed;		/* the checks that failed in the child */
	int v[NRES];
};

typedef void (*check_fn)(struct ibv_context *ctx, int legacy, struct res *r);

static const char *const mode_name[] = { "extended", "legacy" };

/* The child: environment, device, the check, teardown. */
static void child(int legacy, const char *extra, check_fn fn, int wfd)
{
	char tmpl[] = "/tmp/t0041.XXXXXX";
	struct ibv_context *ctx;
	struct res r = { 0 };
	int n = 0;

	rt_host_up(legacy, extra, tmpl);
	ctx = tf_open_dev(NULL, &n);
	TR_EXPECT(n == 1);
	TR_EXPECT(ctx != NULL);
	if (ctx) {
		/* whatever the provider, the app sees an extended context */
		TR_EXPECT(verbs_get_ctx(ctx) != NULL);
		fn(ctx, legacy, &r);
		TR_EXPECT(ibv_close_device(ctx) == 0);
	}
	rt_host_down(tmpl);
	r.failed = (int)tr_checks_failed();
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(4);
	_exit(0);
}

struct mode_arg {
	int legacy;
	const char *extra;
	check_fn fn;
};

static void mode_peer(struct tr_peer *self, void *arg)
{
	const struct mode_arg *m = arg;

	child(m->legacy, m->extra, m->fn, self->to);
}

/* Runs fn in a peer under one mode; asserts the peer ran cleanly. */
static void run_mode(int legacy, const char *extra, check_fn fn, struct res *out)
{
	struct mode_arg m = { .legacy = legacy, .extra = extra, .fn = fn };
	struct tr_peer p;
	int status;

	tr_peer_start(&p, mode_peer, &m);
	memset(out, 0, sizeof(*out));
	out->failed = -1;
	if (read(p.from, out, sizeof(*out)) != sizeof(*out))
		out->failed = -1;
	status = tr_peer_wait(&p);
	if (status)
		print_message("# %s child: status %d\n", mode_name[legacy], status);
	assert_int_equal(status, 0);
	if (out->failed)
		print_message("# %s child reported failed checks\n", mode_name[legacy]);
	assert_int_equal(out->failed, 0);
}

static void run_both(const char *extra, check_fn fn, struct res *leg,
		     struct res *ext)
{
	run_mode(LEGACY, extra, fn, leg);
	run_mode(EXTENDED, extra, fn, ext);
}

static void assert_same(const struct res *a, const struct res *b)
{
	int i;

	for (i = 0; i < NRES; i++)
		assert_int_equal(a->v[i], b->v[i]);
}

/* ------------------------------------------------------------------ */
/* Shared child helpers                                                 */

static struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			     enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n = 0;

	for (i = 0; i < 100000 && n == 0; i++)
		n = ibv_poll_cq(cq, 1, wc);
	return n;
}

/* Waits up to 2 s for fd to be readable. */
static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 2000) == 1;
}

/* ------------------------------------------------------------------ */
/* COMPAT-11, QPX-01, SRQX-06: basic create_qp_ex / create_srq_ex work.  */

static void ck_basic_ex(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct verbs_context *vctx = verbs_get_ctx(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_BASIC, .pd = pd,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_context = &qa, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};
	struct ibv_srq *srq, *srq2;
	struct ibv_qp *qp, *qp2;

	TR_EXPECT(pd && cq);
	if (!pd || !cq)
		return;
	srq = ibv_create_srq_ex(ctx, &sa);	/* inline: legacy routing */
	TR_EXPECT(srq && srq->context == ctx && srq->pd == pd);
	r->v[0] = srq != NULL;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_PD;	/* the core's slot directly */
	srq2 = vctx->create_srq_ex(ctx, &sa);
	TR_EXPECT(srq2 && srq2->context == ctx);
	r->v[1] = srq2 != NULL;
	qa.srq = srq;
	qp = ibv_create_qp_ex(ctx, &qa);	/* inline: mask == PD */
	TR_EXPECT(qp && qp->state == IBV_QPS_RESET && qp->pd == pd &&
		 qp->srq == srq && qp->qp_context == &qa && qp->context == ctx &&
		 qp->send_cq == cq && qp->qp_type == IBV_QPT_RC);
	r->v[2] = qp != NULL;
	qp2 = vctx->create_qp_ex(ctx, &qa);	/* the core's slot directly */
	TR_EXPECT(qp2 && qp2->state == IBV_QPS_RESET && qp2->srq == srq);
	r->v[3] = qp2 != NULL;
	TR_EXPECT(!qp || qp->qp_num != (qp2 ? qp2->qp_num : 0));
	TR_EXPECT(!qp2 || ibv_destroy_qp(qp2) == 0);
	TR_EXPECT(!qp || ibv_destroy_qp(qp) == 0);
	TR_EXPECT(!srq2 || ibv_destroy_srq(srq2) == 0);
	TR_EXPECT(!srq || ibv_destroy_srq(srq) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
}

TR_TEST(basic_create_qp_ex_and_srq_ex_work_in_both_modes)
{
	struct res leg, ext;

	run_both(NULL, ck_basic_ex, &leg, &ext);
	assert_int_equal(leg.v[0] + leg.v[1] + leg.v[2] + leg.v[3], 4);
	assert_same(&leg, &ext);
}

/* ------------------------------------------------------------------ */
/* COMPAT-09 (RC >= v28): XRC verbs fail EOPNOTSUPP on a legacy provider. */

static int err_of_ptr(const void *p)
{
	return p ? 0 : errno;
}

static void ck_xrc(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_xrcd dummy = { .context = ctx }, *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *sq, *rq, *oq;
	uint32_t srqn = 0;

	TR_EXPECT(pd && cq);
	if (!pd || !cq)
		return;
	errno = 0;
	xrcd = ibv_open_xrcd(ctx, &xa);
	r->v[0] = err_of_ptr(xrcd);
	{
		/* under legacy nothing XRC may even look at the domain */
		struct ibv_xrcd *x = xrcd ? xrcd : &dummy;
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = 8, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq,
		};
		struct ibv_qp_init_attr_ex send = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_XRC_SEND,
			.cap = { .max_send_wr = 8, .max_send_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		};
		struct ibv_qp_init_attr_ex recv = {
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x,
		};
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE,
			.xrcd = x, .qp_type = IBV_QPT_XRC_RECV, .qp_num = 1,
		};

		errno = 0;
		srq = ibv_create_srq_ex(ctx, &sa);
		r->v[1] = err_of_ptr(srq);
		r->v[2] = srq ? ibv_get_srq_num(srq, &srqn) : EOPNOTSUPP;
		errno = 0;
		sq = ibv_create_qp_ex(ctx, &send);
		r->v[3] = err_of_ptr(sq);
		errno = 0;
		rq = ibv_create_qp_ex(ctx, &recv);
		r->v[4] = err_of_ptr(rq);
		if (rq)
			oa.qp_num = rq->qp_num;
		errno = 0;
		oq = ibv_open_qp(ctx, &oa);
		r->v[5] = err_of_ptr(oq);
		TR_EXPECT(!oq || (oq->state == IBV_QPS_UNKNOWN &&
				 oq->qp_num == oa.qp_num && !oq->pd));
		TR_EXPECT(!sq || sq->state == IBV_QPS_RESET);
		TR_EXPECT(!srq || srqn != 0);
		TR_EXPECT(!oq || ibv_destroy_qp(oq) == 0);
		TR_EXPECT(!rq || ibv_destroy_qp(rq) == 0);
		TR_EXPECT(!sq || ibv_destroy_qp(sq) == 0);
		TR_EXPECT(!srq || ibv_destroy_srq(srq) == 0);
		r->v[6] = ibv_close_xrcd(x);
	}
	if (legacy) {
		/* the provider never saw a basic SRQ's number either */
		struct ibv_srq_init_attr ba = { .attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_srq *b = ibv_create_srq(pd, &ba);

		TR_EXPECT(b != NULL);
		r->v[7] = b ? ibv_get_srq_num(b, &srqn) : -1;
		TR_EXPECT(!b || ibv_destroy_srq(b) == 0);
	}
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
}

TR_TEST(xrc_verbs_eopnotsupp_under_legacy_work_under_extended)
{
	struct res leg, ext;
	int i;

	run_both(NULL, ck_xrc, &leg, &ext);
	for (i = 0; i < 8; i++) {
		tr_note("v[%d]: legacy %d extended %d", i, leg.v[i], ext.v[i]);
		assert_int_equal(leg.v[i], EOPNOTSUPP);
		assert_int_equal(ext.v[i], 0);
		if (i == 6)
			break;
	}
	assert_int_equal(leg.v[7], EOPNOTSUPP);
}

/* ------------------------------------------------------------------ */
/* COMPAT-13: async events name the application's objects; LIFE-09.    */

static const char async_events[] =
	"event port_err after alloc_pd 1 port 1\n"
	"event qp_fatal after modify_qp 1\n"
	"event srq_limit_reached after modify_srq 1\n"
	"event cq_err after resize_cq 1\n";

static int late_acked;

static void *ack_late(void *arg)
{
	usleep(200000);
	__atomic_store_n(&late_acked, 1, __ATOMIC_SEQ_CST);
	ibv_ack_async_event(arg);
	return NULL;
}

static void ck_async(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct ibv_async_event qp_ev;
	pthread_t t;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	struct ibv_qp *qp = pd && cq ? new_qp(pd, cq, IBV_QPT_RC) : NULL;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = 0 };
	struct ibv_srq_attr lim = { .srq_limit = 4 };
	struct ibv_async_event ev;
	int i;

	TR_EXPECT(pd && cq && srq && qp);
	if (!pd || !cq || !srq || !qp)
		return;
	TR_EXPECT(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	TR_EXPECT(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT) == 0);
	TR_EXPECT(ibv_resize_cq(cq, 32) == 0);
	for (i = 0; i < 4; i++) {
		TR_EXPECT(readable(ctx->async_fd));
		if (tr_checks_failed() || ibv_get_async_event(ctx, &ev))
			break;
		switch (ev.event_type) {
		case IBV_EVENT_PORT_ERR:
			r->v[0] = ev.element.port_num == 1;
			break;
		case IBV_EVENT_QP_FATAL:
			r->v[1] = ev.element.qp == qp;
			qp_ev = ev;	/* acked late: see below */
			continue;
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			r->v[2] = ev.element.srq == srq;
			break;
		case IBV_EVENT_CQ_ERR:
			r->v[3] = ev.element.cq == cq;
			break;
		default:
			TR_EXPECT(!"unexpected event type");
		}
		ibv_ack_async_event(&ev);
	}
	/* LIFE-09: the destroy waits for the QP event's ack (a thread's) */
	late_acked = 0;
	if (r->v[1] && pthread_create(&t, NULL, ack_late, &qp_ev) == 0) {
		TR_EXPECT(ibv_destroy_qp(qp) == 0);
		r->v[4] = __atomic_load_n(&late_acked, __ATOMIC_SEQ_CST);
		pthread_join(t, NULL);
	} else {
		TR_EXPECT(ibv_destroy_qp(qp) == 0);
	}
	TR_EXPECT(ibv_destroy_srq(srq) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
}

TR_TEST(async_events_name_the_applications_objects)
{
	struct res leg, ext;

	run_both(async_events, ck_async, &leg, &ext);
	assert_int_equal(leg.v[0] + leg.v[1] + leg.v[2] + leg.v[3], 4);
	assert_int_equal(leg.v[4], 1);		/* destroy returned after the ack */
	assert_same(&leg, &ext);
}

/* ------------------------------------------------------------------ */
/* COMPAT-13: CQ events name the application's CQ and cq_context.       */

static void ck_cq_event(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ch ? ibv_create_cq(ctx, 16, &r->v[7], ch, 0) : NULL;
	struct ibv_qp *x = NULL, *y = NULL;
	char buf[64] = "cq-event";
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
					    IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8 };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_cq *evcq = NULL;
	struct ibv_wc wc;
	void *evctx = NULL;
	int fl;

	TR_EXPECT(ch && pd && cq && mr);
	if (!ch || !pd || !cq || !mr)
		return;
	sge.lkey = mr->lkey;
	x = new_qp(pd, cq, IBV_QPT_RC);
	y = new_qp(pd, cq, IBV_QPT_RC);
	TR_EXPECT(x && y);
	if (!x || !y)
		return;
	TR_EXPECT(rt_connect_qp(x, y->qp_num, rt_port_lid(ctx)) == 0);
	TR_EXPECT(rt_connect_qp(y, x->qp_num, rt_port_lid(ctx)) == 0);
	TR_EXPECT(ibv_req_notify_cq(cq, 0) == 0);
	TR_EXPECT(ibv_post_recv(y, &rwr, &rbad) == 0);
	TR_EXPECT(ibv_post_send(x, &swr, &sbad) == 0);
	TR_EXPECT(readable(ch->fd));
	if (!tr_checks_failed() && ibv_get_cq_event(ch, &evcq, &evctx) == 0) {
		r->v[0] = evcq == cq;
		r->v[1] = evctx == &r->v[7];
		ibv_ack_cq_events(cq, 1);
	}
	TR_EXPECT(poll_one(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	TR_EXPECT(poll_one(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	/* the channel's fd follows its O_NONBLOCK flag */
	fl = fcntl(ch->fd, F_GETFL);
	TR_EXPECT(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0);
	errno = 0;
	r->v[2] = ibv_get_cq_event(ch, &evcq, &evctx) ? errno : 0;
	/* a channel with a CQ on it cannot go */
	r->v[3] = ibv_destroy_comp_channel(ch);
	TR_EXPECT(ibv_destroy_qp(x) == 0);
	TR_EXPECT(ibv_destroy_qp(y) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_destroy_comp_channel(ch) == 0);
	TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
}

TR_TEST(cq_events_name_the_applications_cq)
{
	struct res leg, ext;

	run_both(NULL, ck_cq_event, &leg, &ext);
	assert_int_equal(leg.v[0], 1);
	assert_int_equal(leg.v[1], 1);
	assert_int_equal(leg.v[2], EAGAIN);
	assert_int_equal(leg.v[3], EBUSY);
	assert_same(&leg, &ext);
}

/* ------------------------------------------------------------------ */
/* QPX-09: qp->state is the core's, kept right through the wrapper.     */

static void ck_qp_state(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = pd && cq ? new_qp(pd, cq, IBV_QPT_RC) : NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_init_attr ia;

	TR_EXPECT(qp != NULL);
	if (!qp)
		return;
	r->v[0] = qp->state;					/* RESET */
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	r->v[1] = qp->state;					/* INIT */
	/* INIT -> RTR without its required attributes: refused */
	a.qp_state = IBV_QPS_RTR;
	r->v[2] = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	r->v[3] = qp->state;					/* INIT */
	/* the app scribbles; a query with IBV_QP_STATE puts it right */
	qp->state = IBV_QPS_SQD;
	memset(&a, 0, sizeof(a));
	TR_EXPECT(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0);
	r->v[4] = qp->state;
	r->v[5] = ia.send_cq == cq && ia.recv_cq == cq && ia.qp_type == IBV_QPT_RC;
	/* a query without the bit leaves it alone */
	qp->state = IBV_QPS_SQD;
	TR_EXPECT(ibv_query_qp(qp, &a, IBV_QP_PORT, &ia) == 0);
	r->v[6] = qp->state;
	a.qp_state = IBV_QPS_ERR;
	TR_EXPECT(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0);
	r->v[7] = qp->state;
	TR_EXPECT(ibv_destroy_qp(qp) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
}

TR_TEST(qp_state_kept_right_in_both_modes)
{
	struct res leg, ext;

	run_both(NULL, ck_qp_state, &leg, &ext);
	assert_int_equal(leg.v[0], IBV_QPS_RESET);
	assert_int_equal(leg.v[1], IBV_QPS_INIT);
	assert_int_equal(leg.v[2], EINVAL);
	assert_int_equal(leg.v[3], IBV_QPS_INIT);
	assert_int_equal(leg.v[4], IBV_QPS_INIT);
	assert_int_equal(leg.v[5], 1);
	assert_int_equal(leg.v[6], IBV_QPS_SQD);
	assert_int_equal(leg.v[7], IBV_QPS_ERR);
	assert_same(&leg, &ext);
}

/* ------------------------------------------------------------------ */
/* ibv_query_port: the hdr44 inline and the exported 1.1 symbol.        */

#define OLD_PORT_ATTR offsetof(struct ibv_port_attr, flags)

static void ck_query_port(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct verbs_context *vctx = verbs_get_ctx(ctx);
	struct ibv_port_attr in, slot;
	unsigned char old[sizeof(struct ibv_port_attr)];
	size_t i;
	int untouched = 1;

	TR_EXPECT(ibv_query_port(ctx, 1, &in) == 0);	/* the inline */
	memset(old, 0xab, sizeof(old));
	/* the exported symbol: the parentheses skip the header's macro */
	TR_EXPECT((ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)old) == 0);
	for (i = OLD_PORT_ATTR; i < sizeof(old); i++)
		untouched &= old[i] == 0xab;
	r->v[0] = in.state;
	r->v[1] = in.lid;
	r->v[2] = untouched;
	r->v[3] = !memcmp(old, &in, OLD_PORT_ATTR);
	memset(&slot, 0, sizeof(slot));
	TR_EXPECT(vctx->query_port(ctx, 1, &slot, sizeof(slot)) == 0);
	r->v[4] = !memcmp(&slot, &in, sizeof(slot));
	r->v[5] = in.link_layer;
	r->v[6] = (ibv_query_port)(ctx, 1, NULL);
}

TR_TEST(query_port_inline_and_exported_agree)
{
	struct res leg, ext;

	run_both(NULL, ck_query_port, &leg, &ext);
	assert_int_equal(leg.v[0], IBV_PORT_ACTIVE);
	assert_int_not_equal(leg.v[1], 0);
	assert_int_equal(leg.v[2], 1);
	assert_int_equal(leg.v[3], 1);
	assert_int_equal(leg.v[4], 1);
	assert_int_equal(leg.v[6], EINVAL);
	assert_same(&leg, &ext);
}

/* ------------------------------------------------------------------ */
/* COMPAT-14 model: the data path works through the wrapper (RC, UD).   */

static void ck_datapath(struct ibv_context *ctx, int legacy, struct res *r)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	static char buf[4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
					    IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *x, *y, *u, *v;
	struct ibv_sge ssge = { .addr = (uintptr_t)buf, .length = 16 };
	struct ibv_sge rsge = { .addr = (uintptr_t)buf + 1024, .length = 1024 };
	struct ibv_recv_wr rwr = { .wr_id = 11, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr[2], *sbad = NULL;
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_ah *ah;
	struct ibv_wc wc;

	TR_EXPECT(pd && cq && mr);
	if (!pd || !cq || !mr)
		return;
	ssge.lkey = rsge.lkey = mr->lkey;
	memcpy(buf, "0123456789abcdef", 16);
	x = new_qp(pd, cq, IBV_QPT_RC);
	y = new_qp(pd, cq, IBV_QPT_RC);
	TR_EXPECT(x && y);
	if (!x || !y)
		return;
	TR_EXPECT(rt_connect_qp(x, y->qp_num, rt_port_lid(ctx)) == 0);
	TR_EXPECT(rt_connect_qp(y, x->qp_num, rt_port_lid(ctx)) == 0);
	TR_EXPECT(ibv_post_recv(y, &rwr, &rbad) == 0);
	memset(swr, 0, sizeof(swr));
	swr[0].wr_id = 22;
	swr[0].sg_list = &ssge;
	swr[0].num_sge = 1;
	swr[0].opcode = IBV_WR_SEND;
	swr[0].send_flags = IBV_SEND_SIGNALED;
	TR_EXPECT(ibv_post_send(x, &swr[0], &sbad) == 0);
	while (poll_one(cq, &wc) == 1) {
		if (wc.wr_id == 11)
			r->v[0] = wc.status == IBV_WC_SUCCESS && wc.byte_len == 16 &&
				  wc.qp_num == y->qp_num &&
				  !memcmp(buf + 1024, buf, 16);
		if (wc.wr_id == 22)
			r->v[1] = wc.status == IBV_WC_SUCCESS && wc.qp_num == x->qp_num;
		if (r->v[0] && r->v[1])
			break;
	}

	/* UD: the wrapper swaps in the provider's AH */
	u = new_qp(pd, cq, IBV_QPT_UD);
	v = new_qp(pd, cq, IBV_QPT_UD);
	TR_EXPECT(u && v);
	if (!u || !v)
		return;
	TR_EXPECT(rt_connect_qp(u, 0, 0) == 0);
	TR_EXPECT(rt_connect_qp(v, 0, 0) == 0);
	aa.dlid = rt_port_lid(ctx);
	ah = ibv_create_ah(pd, &aa);
	TR_EXPECT(ah && ah->pd == pd && ah->context == ctx);
	if (!ah)
		return;
	rsge.length = 40 + 16;
	rwr.wr_id = 33;
	TR_EXPECT(ibv_post_recv(v, &rwr, &rbad) == 0);
	swr[0].wr_id = 44;
	swr[0].wr.ud.ah = ah;
	swr[0].wr.ud.remote_qpn = v->qp_num;
	swr[0].wr.ud.remote_qkey = 0x11111111;
	TR_EXPECT(ibv_post_send(u, &swr[0], &sbad) == 0);
	while (poll_one(cq, &wc) == 1) {
		if (wc.wr_id == 33)
			r->v[2] = wc.status == IBV_WC_SUCCESS &&
				  wc.byte_len == 40 + 16 && wc.qp_num == v->qp_num;
		if (wc.wr_id == 44)
			r->v[3] = wc.status == IBV_WC_SUCCESS;
		if (r->v[2] && r->v[3])
			break;
	}
	/* a bad second WR: bad_wr names the caller's WR, not a copy */
	swr[0].next = &swr[1];
	swr[1] = swr[0];
	swr[1].next = NULL;
	swr[1].num_sge = 1000;
	sbad = NULL;
	r->v[4] = ibv_post_send(u, &swr[0], &sbad) != 0;
	r->v[5] = sbad == &swr[1];
	while (poll_one(cq, &wc) == 1)
		;
	TR_EXPECT(ibv_destroy_ah(ah) == 0);
	TR_EXPECT(ibv_destroy_qp(u) == 0);
	TR_EXPECT(ibv_destroy_qp(v) == 0);
	TR_EXPECT(ibv_destroy_qp(x) == 0);
	TR_EXPECT(ibv_destroy_qp(y) == 0);
	TR_EXPECT(ibv_destroy_cq(cq) == 0);
	TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
}

TR_TEST(data_path_works_through_the_wrapper)
{
	struct res leg, ext;
	int i;

	run_both(NULL, ck_datapath, &leg, &ext);
	for (i = 0; i < 6; i++) {
		if (leg.v[i] != 1)
			print_message("# legacy v[%d] = %d\n", i, leg.v[i]);
		assert_int_equal(leg.v[i], 1);
	}
	assert_same(&leg, &ext);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
