/* SPDX-License-Identifier: MIT */
/*
 * t5101: the fake provider's objects through the normal verbs API: XRC
 * domains (XRCD-*), SRQs (SRQX-*), QP creation and modify rules (QPX-*),
 * ibv_open_qp (OPENQP-*), target-QP lifetime in one process (LIFE-01..03),
 * EBUSY rules, scripted faults and profile mlx5's kept context and
 * opened-QP crash (under scripts of their own, in the test's process, which
 * has opened no device before: fault counters start from zero).
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fp_test.h"
#include "tf.h"

static struct ibv_context *ctx;		/* the test's, opened by fx_setup */

struct fx {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int fd[2];			/* files whose inodes key XRC domains */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int i;

	ctx = fpt_open();
	assert_non_null(f);
	f->pd = ibv_alloc_pd(ctx);
	f->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	assert_non_null(f->pd);
	assert_non_null(f->cq);
	for (i = 0; i < 2; i++) {
		char path[] = "/tmp/t5101-xrcd-XXXXXX";

		f->fd[i] = mkstemp(path);
		assert_true(f->fd[i] >= 0);
		/* the fd keeps the inode: nothing is left when a check fails
		 * before the teardown (t5102's quirk runs) */
		unlink(path);
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int i;

	assert_int_equal(ibv_destroy_cq(f->cq), 0);
	assert_int_equal(ibv_dealloc_pd(f->pd), 0);
	for (i = 0; i < 2; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
	free(f);
	fpt_close(ctx);
	return 0;
}

/* The XRC objects with the portable settings: the fixtures' (tf.h). */
static struct ibv_xrcd *xrcd_open(int fd, int oflags)
{
	return tf_xrcd(ctx, fd, oflags);
}

static struct ibv_srq *xsrq(struct fx *f, struct ibv_xrcd *xrcd)
{
	return tf_xsrq(ctx, f->pd, xrcd, f->cq, 4);
}

static struct ibv_qp *tgt_qp(struct ibv_xrcd *xrcd)
{
	return tf_tgt_qp(ctx, xrcd);
}

static struct ibv_qp *open_tgt(struct ibv_xrcd *xrcd, uint32_t qpn, enum ibv_qp_type t)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE |
			     IBV_QP_OPEN_ATTR_CONTEXT,
		.qp_num = qpn, .xrcd = xrcd, .qp_context = (void *)0x77, .qp_type = t,
	};

	return ibv_open_qp(ctx, &oa);
}

static struct ibv_qp *rc_qp(struct fx *f)
{
	struct ibv_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = f->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	return ibv_create_qp(f->pd, &ia);
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
}

/* ---- XRCD --------------------------------------------------------------------------- */
/* XRCD-12: the capability a device reports is what it does. */
TR_TEST_FX(xrc_capability_is_what_the_device_does, fx_setup, fx_teardown)
{
	struct ibv_device_attr da;
	struct ibv_xrcd *x;

	(void)state;
	assert_int_equal(ibv_query_device(ctx, &da), 0);
	errno = 0;
	x = xrcd_open(-1, O_CREAT);
	if (da.device_cap_flags & IBV_DEVICE_XRC) {
		assert_non_null(x);
		assert_int_equal(ibv_close_xrcd(x), 0);
	} else {
		assert_null(x);
		assert_int_equal(errno, EOPNOTSUPP);
	}
}

TR_TEST_FX(xrcd_fd_minus_one_makes_private_domains, fx_setup, fx_teardown)
{
	struct ibv_xrcd *a, *b;
	struct ibv_qp *q;

	(void)state;
	a = xrcd_open(-1, O_CREAT);		/* XRCD-03 */
	assert_non_null(a);
	b = xrcd_open(-1, O_EXCL);		/* XRCD-04: oflags unread */
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	q = tgt_qp(a);
	assert_non_null(q);
	errno = 0;
	assert_null(open_tgt(b, q->qp_num, IBV_QPT_XRC_RECV));	/* not the same domain */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_close_xrcd(a), 0);
	assert_int_equal(ibv_close_xrcd(b), 0);
}

TR_TEST_FX(xrcd_inode_open_rules, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd_init_attr ia;
	struct ibv_xrcd *a, *b;
	struct ibv_srq *srq;
	int dead;

	errno = 0;
	assert_null(xrcd_open(f->fd[0], 0));		/* XRCD-06 */
	assert_int_equal(errno, EAGAIN);
	a = xrcd_open(f->fd[0], O_CREAT);		/* XRCD-05 */
	assert_non_null(a);
	errno = 0;
	assert_null(xrcd_open(f->fd[0], O_CREAT | O_EXCL));	/* XRCD-07 */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(xrcd_open(f->fd[0], O_EXCL));
	assert_int_equal(errno, EINVAL);
	b = xrcd_open(f->fd[0], 0);			/* XRCD-08 */
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	errno = 0;
	assert_null(xrcd_open(f->fd[1], 0));		/* another inode */
	assert_int_equal(errno, EAGAIN);
	dead = dup(f->fd[1]);
	close(dead);
	errno = 0;
	assert_null(xrcd_open(dead, O_CREAT));		/* XRCD-10 */
	assert_int_equal(errno, EBADF);
	memset(&ia, 0, sizeof(ia));
	ia.comp_mask = IBV_XRCD_INIT_ATTR_FD;
	ia.fd = f->fd[1];
	ia.oflags = O_CREAT;
	errno = 0;
	assert_null(ibv_open_xrcd(ctx, &ia));		/* XRCD-01 */
	assert_int_equal(errno, EINVAL);
	ia.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS | IBV_XRCD_INIT_ATTR_RESERVED;
	errno = 0;
	assert_null(ibv_open_xrcd(ctx, &ia));		/* XRCD-02 */
	assert_int_equal(errno, EOPNOTSUPP);

	/* XRCD-11: closing the fd changes nothing. */
	close(f->fd[0]);
	f->fd[0] = -1;
	srq = xsrq(f, b);
	assert_non_null(srq);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_close_xrcd(a), 0);
	assert_int_equal(ibv_close_xrcd(b), 0);
}

TR_TEST_FX(xrcd_close_busy_only_for_its_own_objects, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *a, *b;
	struct ibv_srq *srq;
	struct ibv_qp *q, *o;

	a = xrcd_open(f->fd[0], O_CREAT);
	b = xrcd_open(f->fd[0], 0);
	assert_non_null(a);
	assert_non_null(b);
	srq = xsrq(f, a);
	assert_non_null(srq);
	assert_int_equal(ibv_close_xrcd(a), EBUSY);	/* XRCD-13: SRQ */
	assert_int_equal(ibv_destroy_srq(srq), 0);
	q = tgt_qp(a);
	assert_non_null(q);
	assert_int_equal(ibv_close_xrcd(a), EBUSY);	/* TGT QP created through a */
	o = open_tgt(b, q->qp_num, IBV_QPT_XRC_RECV);
	assert_non_null(o);
	assert_int_equal(ibv_close_xrcd(b), EBUSY);	/* QP opened through b */
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_close_xrcd(a), 0);		/* b's objects do not block a */
	assert_int_equal(ibv_destroy_qp(o), 0);
	assert_int_equal(ibv_close_xrcd(b), 0);
}

TR_TEST_FX(xrcd_and_tgt_qp_live_until_last_reference, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *a, *b;
	struct ibv_qp *q, *o, *o2;
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	uint32_t qpn;

	a = xrcd_open(f->fd[0], O_CREAT);
	b = xrcd_open(f->fd[0], 0);
	q = tgt_qp(a);
	assert_non_null(q);
	qpn = q->qp_num;
	o = open_tgt(b, qpn, IBV_QPT_XRC_RECV);
	assert_non_null(o);
	/* LIFE-02: the creator's destroy leaves the opened handle working. */
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_close_xrcd(a), 0);
	to_init(o);					/* OPENQP-08 */
	assert_int_equal(ibv_query_qp(o, &at, IBV_QP_STATE, &ia), 0);
	assert_int_equal(at.qp_state, IBV_QPS_INIT);
	o2 = open_tgt(b, qpn, IBV_QPT_XRC_RECV);
	assert_non_null(o2);
	assert_int_equal(ibv_destroy_qp(o2), 0);
	/* LIFE-03: the last handle takes the real QP with it. */
	assert_int_equal(ibv_destroy_qp(o), 0);
	errno = 0;
	assert_null(open_tgt(b, qpn, IBV_QPT_XRC_RECV));
	assert_int_equal(errno, EINVAL);
	/* XRCD-15: the last handle gone, the inode is free again. */
	assert_int_equal(ibv_close_xrcd(b), 0);
	errno = 0;
	assert_null(xrcd_open(f->fd[0], 0));
	assert_int_equal(errno, EAGAIN);
	a = xrcd_open(f->fd[0], O_CREAT | O_EXCL);
	assert_non_null(a);
	assert_int_equal(ibv_close_xrcd(a), 0);
}

TR_TEST_FX(xrcd_kept_alive_by_srq_of_closed_sibling, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *a, *b;
	struct ibv_srq *srq;

	/* XRCD-14: a domain's SRQ keeps it after its handles are closed. */
	a = xrcd_open(f->fd[0], O_CREAT);
	b = xrcd_open(f->fd[0], 0);
	srq = xsrq(f, b);
	assert_non_null(srq);
	assert_int_equal(ibv_close_xrcd(a), 0);
	a = xrcd_open(f->fd[0], 0);			/* still bound */
	assert_non_null(a);
	assert_int_equal(ibv_close_xrcd(a), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_close_xrcd(b), 0);
}

/* ---- SRQ ------------------------------------------------------------------------------ */
TR_TEST_FX(srq_creation_rules, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_xrcd *x = xrcd_open(-1, O_CREAT);
	struct ibv_srq *s, *s2;
	uint32_t n1 = 0, n2 = 0;

	assert_non_null(x);
	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = f->pd;
	sa.xrcd = x;
	sa.cq = f->cq;
	sa.attr.max_wr = 5;
	sa.attr.max_sge = 1;
	errno = 0;
	assert_null(ibv_create_srq_ex(ctx, &sa));	/* SRQX-02: no PD bit */
	assert_int_equal(errno, EINVAL);
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD;
	errno = 0;
	assert_null(ibv_create_srq_ex(ctx, &sa));	/* SRQX-03: no CQ bit */
	assert_int_equal(errno, EINVAL);
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_RESERVED;
	errno = 0;
	assert_null(ibv_create_srq_ex(ctx, &sa));	/* SRQX-05 */
	assert_int_equal(errno, EOPNOTSUPP);
	sa.comp_mask &= ~(uint32_t)IBV_SRQ_INIT_ATTR_RESERVED;
	sa.srq_type = (enum ibv_srq_type)7;
	errno = 0;
	assert_null(ibv_create_srq_ex(ctx, &sa));	/* SRQX-07 */
	assert_int_equal(errno, EINVAL);

	sa.srq_type = IBV_SRQT_XRC;
	s = ibv_create_srq_ex(ctx, &sa);		/* SRQX-01 */
	assert_non_null(s);
	assert_true(sa.attr.max_wr >= 5);		/* SRQX-10 */
	assert_true(sa.attr.max_sge >= 1);
	s2 = ibv_create_srq_ex(ctx, &sa);
	assert_non_null(s2);
	assert_int_equal(ibv_get_srq_num(s, &n1), 0);	/* SRQX-11 */
	assert_int_equal(ibv_get_srq_num(s2, &n2), 0);
	assert_int_not_equal(n1, n2);
	assert_int_equal(ibv_destroy_srq(s2), 0);

	/* SRQX-04: XRCD and CQ bits without TYPE make a basic SRQ, which does
	 * not hold the XRCD or the CQ. */
	assert_int_equal(ibv_destroy_srq(s), 0);
	sa.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	s = ibv_create_srq_ex(ctx, &sa);
	assert_non_null(s);
	assert_int_equal(ibv_close_xrcd(x), 0);
	assert_int_equal(ibv_destroy_srq(s), 0);
}

TR_TEST_FX(srq_holds_cq_pd_and_xrcd, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *x = xrcd_open(-1, O_CREAT);
	struct ibv_srq *s = xsrq(f, x);

	assert_non_null(s);
	assert_int_equal(ibv_destroy_cq(f->cq), EBUSY);	/* SRQX-09 */
	assert_int_equal(ibv_dealloc_pd(f->pd), EBUSY);
	assert_int_equal(ibv_close_xrcd(x), EBUSY);
	assert_int_equal(ibv_destroy_srq(s), 0);
	assert_int_equal(ibv_close_xrcd(x), 0);
}

TR_TEST_FX(srq_limit_arms_and_fires_once, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_srq_init_attr sia;
	struct ibv_srq_attr sa;
	struct ibv_qp_init_attr ia;
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	struct ibv_ah_attr ah = { 0 };
	const struct tf_qp_opts zero = { 0 };
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_srq *srq;
	struct ibv_qp *x, *y;
	struct ibv_wc wc;
	int i;

	memset(&sia, 0, sizeof(sia));
	sia.attr.max_wr = 8;
	sia.attr.max_sge = 1;
	srq = ibv_create_srq(f->pd, &sia);
	assert_non_null(srq);
	for (i = 0; i < 4; i++) {
		struct ibv_recv_wr rw = { .wr_id = i }, *bad;

		assert_int_equal(ibv_post_srq_recv(srq, &rw, &bad), 0);
	}
	sa.srq_limit = 9;
	assert_int_equal(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	sa.srq_limit = 3;
	assert_int_equal(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	assert_int_equal(ibv_query_srq(srq, &sa), 0);
	assert_int_equal(sa.srq_limit, 3);

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = f->cq;
	ia.srq = srq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	x = ibv_create_qp(f->pd, &ia);
	y = ibv_create_qp(f->pd, &ia);
	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(ibv_destroy_srq(srq), EBUSY);	/* QPs attached */
	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	ah.dlid = pa.lid;
	ah.port_num = 1;
	for (i = 0; i < 2; i++) {
		struct ibv_qp *q = i ? y : x, *peer = i ? x : y;

		/* no access flags, and zero resources, timers and retries */
		assert_int_equal(tf_qp_connect_av_o(q, &ah, peer->qp_num, &zero), 0);
	}
	for (i = 0; i < 2; i++) {
		struct ibv_send_wr sw, *bad;

		memset(&sw, 0, sizeof(sw));
		sw.opcode = IBV_WR_SEND;
		assert_int_equal(poll(&pfd, 1, 0), 0);	/* 4, then 3 left: not below 3 */
		assert_int_equal(ibv_post_send(x, &sw, &bad), 0);
	}
	/* 2 left < 3: SRQX-14 */
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(ibv_get_async_event(ctx, &ev), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	assert_ptr_equal(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
	assert_int_equal(ibv_query_srq(srq, &sa), 0);
	assert_int_equal(sa.srq_limit, 0);		/* disarmed */
	while (ibv_poll_cq(f->cq, 1, &wc) > 0)
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(ibv_destroy_qp(x), 0);
	assert_int_equal(ibv_destroy_qp(y), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
}

/* ---- QP creation and modify ------------------------------------------------------------ */
TR_TEST_FX(qp_creation_rules_per_type, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *x = xrcd_open(-1, O_CREAT);
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *s, *r, *r2;

	assert_non_null(x);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	qa.send_cq = f->cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_recv_sge = 1;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &qa));	/* 3a: XRC_SEND needs the PD */
	assert_int_equal(errno, EINVAL);
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = f->pd;
	qa.send_cq = NULL;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &qa));	/* ... and a send CQ */
	assert_int_equal(errno, EINVAL);
	qa.send_cq = f->cq;
	s = ibv_create_qp_ex(ctx, &qa);
	assert_non_null(s);
	assert_int_equal(qa.cap.max_recv_wr, 0);	/* forced to 0 */
	assert_int_equal(qa.cap.max_recv_sge, 0);
	assert_true(qa.cap.max_send_wr >= 4);
	assert_int_equal(s->qp_type, IBV_QPT_XRC_SEND);
	assert_int_equal(s->state, IBV_QPS_RESET);

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = f->pd;
	qa.xrcd = x;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &qa));	/* XRC_RECV needs the XRCD bit */
	assert_int_equal(errno, EINVAL);
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	r = ibv_create_qp_ex(ctx, &qa);
	r2 = ibv_create_qp_ex(ctx, &qa);
	assert_non_null(r);
	assert_non_null(r2);
	assert_int_equal(r->state, IBV_QPS_RESET);	/* QPX-03 */
	assert_int_not_equal(r->qp_num, r2->qp_num);
	assert_int_not_equal(r->qp_num, s->qp_num);

	qa.qp_type = (enum ibv_qp_type)77;
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &qa));	/* QPX-05 */
	assert_int_equal(errno, EINVAL);
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD | (1u << 12);
	errno = 0;
	assert_null(ibv_create_qp_ex(ctx, &qa));	/* QPX-04 */
	assert_true(errno == EINVAL || errno == EOPNOTSUPP);

	assert_int_equal(ibv_destroy_qp(s), 0);
	assert_int_equal(ibv_destroy_qp(r), 0);
	assert_int_equal(ibv_destroy_qp(r2), 0);
	assert_int_equal(ibv_close_xrcd(x), 0);
}

TR_TEST_FX(modify_rules_and_query_round_trip, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a, q;
	struct ibv_qp *s, *rc;
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = f->pd;
	qa.send_cq = f->cq;
	qa.cap.max_send_wr = 2;
	s = ibv_create_qp_ex(ctx, &qa);
	rc = rc_qp(f);
	assert_non_null(s);
	assert_non_null(rc);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;					/* QPX-08: no such port */
	assert_int_equal(ibv_modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), EINVAL);
	a.port_num = 1;
	assert_int_equal(ibv_modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), EINVAL);	/* QPX-06: no PKEY */
	assert_int_equal(ibv_modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS | IBV_QP_RATE_LIMIT), EOPNOTSUPP);
	a.qp_state = (enum ibv_qp_state)9;
	assert_int_equal(ibv_modify_qp(rc, &a, IBV_QP_STATE), EINVAL);
	to_init(rc);
	to_init(s);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = 0x1234;
	a.rq_psn = 77;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 2;				/* QPX-08: AV port != QP port */
	assert_int_equal(ibv_modify_qp(rc, &a, rtr), EINVAL);
	a.ah_attr.port_num = 1;
	assert_int_equal(ibv_modify_qp(rc, &a, rtr & ~IBV_QP_MIN_RNR_TIMER), EINVAL);
	/* QPX-07: the full RC mask is accepted for XRC_SEND (stripped). */
	assert_int_equal(ibv_modify_qp(s, &a, rtr), 0);
	assert_int_equal(ibv_modify_qp(rc, &a, rtr), 0);

	memset(&q, 0, sizeof(q));
	assert_int_equal(ibv_query_qp(rc, &q, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				      IBV_QP_RQ_PSN | IBV_QP_PORT | IBV_QP_CAP, &ia), 0);
	assert_int_equal(q.qp_state, IBV_QPS_RTR);
	assert_int_equal(q.path_mtu, IBV_MTU_2048);
	assert_int_equal(q.dest_qp_num, 0x1234);
	assert_int_equal(q.rq_psn, 77);
	assert_int_equal(q.port_num, 1);
	assert_int_equal(q.cap.max_send_wr, 4);
	assert_int_equal(ia.qp_type, IBV_QPT_RC);
	assert_ptr_equal(ia.send_cq, f->cq);
	assert_int_equal(rc->state, IBV_QPS_RTR);	/* QPX-09 */

	assert_int_equal(ibv_destroy_qp(s), 0);
	assert_int_equal(ibv_destroy_qp(rc), 0);
}

/* ---- ibv_open_qp ------------------------------------------------------------------------ */
TR_TEST_FX(open_qp_rules, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *a = xrcd_open(f->fd[0], O_CREAT), *b = xrcd_open(f->fd[0], 0);
	struct ibv_xrcd *other = xrcd_open(f->fd[1], O_CREAT);
	struct ibv_qp_open_attr oa;
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *q, *o1, *o2, *rc = rc_qp(f);

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(other);
	q = tgt_qp(a);
	assert_non_null(q);

	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD;	/* no TYPE */
	oa.qp_num = q->qp_num;
	oa.xrcd = b;
	oa.qp_type = IBV_QPT_XRC_RECV;
	errno = 0;
	assert_null(ibv_open_qp(ctx, &oa));		/* OPENQP-02 */
	assert_int_equal(errno, EINVAL);
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE |
		       IBV_QP_OPEN_ATTR_RESERVED;
	errno = 0;
	assert_null(ibv_open_qp(ctx, &oa));		/* OPENQP-03 */
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(open_tgt(b, q->qp_num, IBV_QPT_XRC_SEND));	/* OPENQP-04 */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(open_tgt(b, 0xfffff0, IBV_QPT_XRC_RECV));	/* OPENQP-05 */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(open_tgt(b, rc->qp_num, IBV_QPT_XRC_RECV));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(open_tgt(other, q->qp_num, IBV_QPT_XRC_RECV));
	assert_int_equal(errno, EINVAL);

	o1 = open_tgt(b, q->qp_num, IBV_QPT_XRC_RECV);
	o2 = open_tgt(a, q->qp_num, IBV_QPT_XRC_RECV);	/* OPENQP-09 */
	assert_non_null(o1);
	assert_non_null(o2);
	assert_ptr_not_equal(o1, o2);
	assert_ptr_not_equal(o1, q);
	/* OPENQP-07 */
	assert_int_equal(o1->qp_num, q->qp_num);
	assert_int_equal(o1->qp_type, IBV_QPT_XRC_RECV);
	assert_int_equal(o1->state, IBV_QPS_UNKNOWN);
	assert_null(o1->pd);
	assert_null(o1->send_cq);
	assert_null(o1->recv_cq);
	assert_null(o1->srq);
	assert_ptr_equal(o1->qp_context, (void *)0x77);

	/* OPENQP-08: modify through one handle, seen through all. */
	to_init(o1);
	assert_int_equal(ibv_query_qp(q, &at, IBV_QP_STATE, &ia), 0);
	assert_int_equal(at.qp_state, IBV_QPS_INIT);
	assert_int_equal(ibv_query_qp(o2, &at, IBV_QP_STATE, &ia), 0);
	assert_int_equal(at.qp_state, IBV_QPS_INIT);
	assert_int_equal(o2->state, IBV_QPS_INIT);

	assert_int_equal(ibv_destroy_qp(o2), 0);
	assert_int_equal(ibv_query_qp(o1, &at, IBV_QP_STATE, &ia), 0);
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_query_qp(o1, &at, IBV_QP_STATE, &ia), 0);
	assert_int_equal(ibv_destroy_qp(o1), 0);
	assert_int_equal(ibv_destroy_qp(rc), 0);
	assert_int_equal(ibv_close_xrcd(a), 0);
	assert_int_equal(ibv_close_xrcd(b), 0);
	assert_int_equal(ibv_close_xrcd(other), 0);
}

TR_TEST_FX(post_on_missing_xrc_queue_fails_with_bad_wr, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_xrcd *x = xrcd_open(-1, O_CREAT);
	struct ibv_qp_init_attr_ex qa;
	struct ibv_send_wr sw, *sbad = NULL;
	struct ibv_recv_wr rw, *rbad = NULL;
	struct ibv_qp *r, *s;

	memset(&sw, 0, sizeof(sw));
	memset(&rw, 0, sizeof(rw));
	r = tgt_qp(x);
	assert_non_null(r);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = f->pd;
	qa.send_cq = f->cq;
	qa.cap.max_send_wr = 2;
	s = ibv_create_qp_ex(ctx, &qa);
	assert_non_null(s);
	to_init(r);
	to_init(s);
	/* QPX-11/12 (conformant behaviour): fail, bad_wr = the first WR. */
	assert_int_not_equal(ibv_post_recv(s, &rw, &rbad), 0);
	assert_ptr_equal(rbad, &rw);
	rbad = NULL;
	assert_int_not_equal(ibv_post_recv(r, &rw, &rbad), 0);
	assert_ptr_equal(rbad, &rw);
	assert_int_not_equal(ibv_post_send(r, &sw, &sbad), 0);
	assert_ptr_equal(sbad, &sw);
	assert_int_equal(ibv_destroy_qp(r), 0);
	assert_int_equal(ibv_destroy_qp(s), 0);
	assert_int_equal(ibv_close_xrcd(x), 0);
}

TR_TEST_FX(busy_rules_for_cq_pd_srq, fx_setup, fx_teardown)
{
	struct fx *f = *state;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_qp_init_attr ia;
	char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(f->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(f->pd, &sia);
	struct ibv_qp *qp;

	assert_non_null(mr);
	assert_non_null(cq);
	assert_non_null(srq);
	assert_int_not_equal(mr->lkey, mr->rkey);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = f->cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 1;
	qp = ibv_create_qp(f->pd, &ia);
	assert_non_null(qp);
	assert_int_equal(ibv_destroy_cq(cq), EBUSY);
	assert_int_equal(ibv_destroy_srq(srq), EBUSY);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(f->pd), EBUSY);	/* the MR */
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

/* ---- under scripts of their own, in the test's process ---------------------------------- */
static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void rm_tree(const char *dir)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static struct ibv_context *child_open(const char *script, char *scr, size_t scrlen,
				      struct ibv_device ***list)
{
	char path[] = "/tmp/t5101-script-XXXXXX", err[512];
	struct ibv_context *c;
	int fd, n;

	fd = mkstemp(path);
	TR_ASSERT(fd >= 0);
	TR_ASSERT(write(fd, script, strlen(script)) == (ssize_t)strlen(script));
	close(fd);
	TR_ASSERT(!fp_env_setup(path, getenv("IBVCT_PROVIDER"), NULL, scr, scrlen,
				  err, sizeof(err)));
	*list = ibv_get_device_list(&n);
	unlink(path);		/* read when the provider loads, above */
	TR_ASSERT(*list && n == 1);
	c = ibv_open_device((*list)[0]);
	TR_ASSERT(c);
	return c;
}

static int child_faults(void)
{
	static const char script[] =
		"device fake0\n"
		"\tcap xrc\n"
		"fault create_srq nth 2 errno ENOSPC\n"
		"fault modify_qp nth 1 errno EPERM\n"
		"fault post_send nth 1 errno EAGAIN\n"
		"fault open_xrcd from 2 errno ENFILE\n";
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1,
	};
	struct ibv_send_wr sw, *sbad = NULL;
	struct ibv_qp_init_attr ia;
	struct ibv_device **list;
	struct ibv_srq *s1, *s2, *s3;
	struct ibv_qp_attr a;
	struct ibv_context *c;
	struct ibv_xrcd *x;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	uint32_t n1, n3;
	char scr[4096];

	c = child_open(script, scr, sizeof(scr), &list);
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	TR_ASSERT(pd && cq);
	s1 = ibv_create_srq(pd, &sia);
	TR_ASSERT(s1);
	errno = 0;
	s2 = ibv_create_srq(pd, &sia);
	TR_ASSERT(!s2 && errno == ENOSPC);
	s3 = ibv_create_srq(pd, &sia);
	TR_ASSERT(s3);
	/* Nothing else changed: the failed call took no SRQ number. */
	TR_ASSERT(!ibv_get_srq_num(s1, &n1) && !ibv_get_srq_num(s3, &n3));
	TR_ASSERT(n3 == n1 + 1);

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 2;
	qp = ibv_create_qp(pd, &ia);
	TR_ASSERT(qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	TR_ASSERT(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS) == EPERM);
	TR_ASSERT(!ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) && a.qp_state == IBV_QPS_RESET);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	TR_ASSERT(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS));
	memset(&sw, 0, sizeof(sw));
	TR_ASSERT(ibv_post_send(qp, &sw, &sbad) == EAGAIN && sbad == &sw);

	x = ibv_open_xrcd(c, &xa);
	TR_ASSERT(x);
	errno = 0;
	TR_ASSERT(!ibv_open_xrcd(c, &xa) && errno == ENFILE);
	errno = 0;
	TR_ASSERT(!ibv_open_xrcd(c, &xa) && errno == ENFILE);	/* "from": every later call */
	TR_ASSERT(!ibv_close_xrcd(x));

	TR_ASSERT(!ibv_destroy_qp(qp));
	TR_ASSERT(!ibv_destroy_srq(s1) && !ibv_destroy_srq(s3));
	TR_ASSERT(!ibv_destroy_cq(cq) && !ibv_dealloc_pd(pd));
	TR_ASSERT(!ibv_close_device(c));
	ibv_free_device_list(list);
	rm_tree(scr);
	return 0;
}

/* Objects left at close are released, as a uverbs fd close does (XRCD-17). */
static int child_close_releases(void)
{
	static const char script[] = "device fake0\n\tcap xrc\n";
	char file[] = "/tmp/t5101-file-XXXXXX", scr[4096];
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_open_attr oa;
	struct ibv_device **list;
	struct ibv_context *c, *c2;
	struct ibv_xrcd *x, *x2;
	struct ibv_qp *q;
	struct ibv_pd *pd;
	uint32_t qpn;

	c = child_open(script, scr, sizeof(scr), &list);
	xa.fd = mkstemp(file);
	TR_ASSERT(xa.fd >= 0);
	x = ibv_open_xrcd(c, &xa);
	TR_ASSERT(x);
	pd = ibv_alloc_pd(c);
	TR_ASSERT(pd);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	q = ibv_create_qp_ex(c, &qa);
	TR_ASSERT(q);
	qpn = q->qp_num;
	c2 = ibv_open_device(list[0]);
	TR_ASSERT(c2);
	TR_ASSERT(!ibv_close_device(c));	/* QP, XRCD and PD left behind */
	/* LIFE-04 (current): the TGT QP went with its only handle; the
	 * domain went with its last user. */
	xa.oflags = 0;
	errno = 0;
	TR_ASSERT(!ibv_open_xrcd(c2, &xa) && errno == EAGAIN);
	xa.oflags = O_CREAT;
	x2 = ibv_open_xrcd(c2, &xa);
	TR_ASSERT(x2);
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = qpn;
	oa.xrcd = x2;
	oa.qp_type = IBV_QPT_XRC_RECV;
	errno = 0;
	TR_ASSERT(!ibv_open_qp(c2, &oa) && errno == EINVAL);
	TR_ASSERT(!ibv_close_xrcd(x2));
	TR_ASSERT(!ibv_close_device(c2));
	ibv_free_device_list(list);
	close(xa.fd);
	unlink(file);
	rm_tree(scr);
	return 0;
}

/*
 * The two lifetime models for a TGT QP whose only handle is left open at
 * close while another context holds the domain: current destroys it
 * (LIFE-04), seed leaves it in the domain for a later ibv_open_qp (LIFE-05).
 */
static int child_lifetime(bool seed)
{
	char file[] = "/tmp/t5101-life-XXXXXX", scr[4096];
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_open_attr oa;
	struct ibv_device **list;
	struct ibv_context *c, *c2;
	struct ibv_xrcd *x, *x2;
	struct ibv_qp *q, *o;

	c = child_open(seed ? "lifetime seed\ndevice fake0\n\tcap xrc\n"
			    : "lifetime current\ndevice fake0\n\tcap xrc\n",
		       scr, sizeof(scr), &list);
	xa.fd = mkstemp(file);
	TR_ASSERT(xa.fd >= 0);
	x = ibv_open_xrcd(c, &xa);
	c2 = ibv_open_device(list[0]);
	TR_ASSERT(x && c2);
	x2 = ibv_open_xrcd(c2, &xa);
	TR_ASSERT(x2);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	q = ibv_create_qp_ex(c, &qa);
	TR_ASSERT(q);
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = q->qp_num;
	oa.xrcd = x2;
	oa.qp_type = IBV_QPT_XRC_RECV;
	TR_ASSERT(!ibv_close_device(c));
	errno = 0;
	o = ibv_open_qp(c2, &oa);
	if (seed) {
		TR_ASSERT(o);
		TR_ASSERT(!ibv_destroy_qp(o));	/* the last handle, explicitly */
		errno = 0;
		TR_ASSERT(!ibv_open_qp(c2, &oa) && errno == EINVAL);
	} else {
		TR_ASSERT(!o && errno == EINVAL);
	}
	TR_ASSERT(!ibv_close_xrcd(x2));
	TR_ASSERT(!ibv_close_device(c2));
	ibv_free_device_list(list);
	close(xa.fd);
	unlink(file);
	rm_tree(scr);
	return 0;
}

/*
 * Profile mlx5 (fixtures/profiles/README.md): a context closed while a QP it
 * made holds its doorbell page keeps the fake kernel's connection until the
 * process exits (the TGT QP and the domain stay reachable, current model
 * or not), and destroying a QP ibv_open_qp gave kills the process with
 * SIGSEGV after the handle is gone. A process of its own shows each.
 */
static int child_mlx5(void)
{
	char file[] = "/tmp/t5101-mlx5-XXXXXX", scr[4096];
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_open_attr oa;
	struct ibv_device **list;
	struct ibv_context *c, *c2;
	struct ibv_xrcd *x, *x2;
	struct ibv_qp *q, *o;
	pid_t pid;
	int st;

	c = child_open("profile mlx5\nlifetime current\ndevice fake0\n\tcap xrc\n",
		       scr, sizeof(scr), &list);
	xa.fd = mkstemp(file);
	TR_ASSERT(xa.fd >= 0);
	x = ibv_open_xrcd(c, &xa);
	c2 = ibv_open_device(list[0]);
	TR_ASSERT(x && c2);
	x2 = ibv_open_xrcd(c2, &xa);
	TR_ASSERT(x2);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	q = ibv_create_qp_ex(c, &qa);
	TR_ASSERT(q);
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = q->qp_num;
	oa.xrcd = x2;
	oa.qp_type = IBV_QPT_XRC_RECV;
	TR_ASSERT(!ibv_close_device(c));	/* q holds the mapped register: kept */
	o = ibv_open_qp(c2, &oa);
	TR_ASSERT(o);
	pid = fork();
	TR_ASSERT(pid >= 0);
	if (!pid) {
		/* a context of its own (the parent's are dead here) */
		struct ibv_context *c3 = ibv_open_device(list[0]);
		struct ibv_xrcd *x3 = c3 ? ibv_open_xrcd(c3, &xa) : NULL;
		struct ibv_qp *o3;

		oa.xrcd = x3;
		o3 = x3 ? ibv_open_qp(c3, &oa) : NULL;
		if (!o3)
			_exit(2);
		signal(SIGSEGV, SIG_DFL);	/* not the runner's handler */
		ibv_destroy_qp(o3);
		_exit(3);			/* not reached on mlx5 */
	}
	TR_ASSERT(waitpid(pid, &st, 0) == pid);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV)
		fprintf(stderr, "# child: status %#x\n", st);
	TR_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	/* the destroy had gone through: o is the only handle left here, and
	 * the closed context's q, kept */
	errno = 0;
	TR_ASSERT(ibv_close_xrcd(x2) == EBUSY);	/* o holds it */
	TR_ASSERT(!ibv_close_device(c2));		/* an opened QP holds no register */
	ibv_free_device_list(list);
	close(xa.fd);
	unlink(file);
	rm_tree(scr);
	return 0;
}

/* XRCD-12: a device without IBV_DEVICE_XRC refuses every XRC object. */
static int child_no_xrc(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa;
	struct ibv_device_attr da;
	struct ibv_device **list;
	struct ibv_context *c;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	char scr[4096];

	c = child_open("device fake0\n\tnocap xrc\n", scr, sizeof(scr), &list);
	TR_ASSERT(!ibv_query_device(c, &da) && !(da.device_cap_flags & IBV_DEVICE_XRC));
	errno = 0;
	TR_ASSERT(!ibv_open_xrcd(c, &xa) && errno == EOPNOTSUPP);
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	TR_ASSERT(pd && cq);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	qa.send_cq = cq;
	errno = 0;
	TR_ASSERT(!ibv_create_qp_ex(c, &qa) && errno == EOPNOTSUPP);
	TR_ASSERT(!ibv_destroy_cq(cq) && !ibv_dealloc_pd(pd));
	TR_ASSERT(!ibv_close_device(c));
	ibv_free_device_list(list);
	rm_tree(scr);
	return 0;
}

TR_TEST(scripted_faults_fail_exactly_those_calls)
{
	(void)state;
	assert_int_equal(child_faults(), 0);
}

TR_TEST(device_without_xrc_cap_refuses_xrc_objects)
{
	(void)state;
	assert_int_equal(child_no_xrc(), 0);
}

TR_TEST(close_device_releases_leftover_objects)
{
	(void)state;
	assert_int_equal(child_close_releases(), 0);
}

TR_TEST(tgt_qp_left_at_close_current_model_destroys)
{
	(void)state;
	assert_int_equal(child_lifetime(false), 0);
}

TR_TEST(tgt_qp_left_at_close_seed_model_keeps)
{
	(void)state;
	assert_int_equal(child_lifetime(true), 0);
}

TR_TEST(mlx5_close_keeps_context_and_opened_qp_destroy_dies)
{
	(void)state;
	assert_int_equal(child_mlx5(), 0);
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
