/* SPDX-License-Identifier: MIT */
/*
 * t5103: every provider op honours its scripted fault. With `fault OP nth
 * 1` for every op, the first call of each verb fails with the op's
 * default errno (fault.c: ENOMEM for what allocates, EINVAL for modify
 * and query, EIO for the rest), leaves nothing behind, and the second
 * call succeeds; under both provider modes (the legacy one through the
 * core's compat layer, without the XRC ops it does not have). Also a
 * scripted device-wide async event, and a CQ that overflows
 * (IBV_EVENT_CQ_ERR).
 */
#include <fcntl.h>

#include "rt_env.h"

static const char *const ops[] = {
	"alloc_pd", "attach_mcast", "close_xrcd", "create_ah", "create_cq",
	"create_qp", "create_qp_ex", "create_srq", "create_srq_ex",
	"dealloc_pd", "dereg_mr", "destroy_ah", "destroy_cq", "destroy_qp",
	"destroy_srq", "detach_mcast", "get_srq_num", "modify_qp",
	"modify_srq", "open_device", "open_qp", "open_xrcd", "poll_cq",
	"post_recv", "post_send", "post_srq_recv", "query_device",
	"query_gid", "query_pkey", "query_port", "query_qp", "query_srq",
	"reg_mr", "req_notify_cq", "resize_cq",
};

/* Fails first with e, then succeeds: for int verbs. */
#define TWICE(t, e, call)						\
	do {								\
		TR_EXPECT((call) == (e));				\
		TR_EXPECT((call) == 0);				\
	} while (0)
/* The same for pointer verbs; the second result is kept in var. */
#define TWICE_PTR(t, e, var, call)					\
	do {								\
		TR_EXPECT(RT_PTR_ERRNO(call) == (e));			\
		var = (call);						\
		TR_EXPECT(var != NULL);				\
	} while (0)

static void ck_faults(struct rt *t)
{
	static char buf[64];
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid, mgid = { .raw = { 0xff, 0x12 } };
	__be16 pkey;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp, *ud, *peer;
	struct ibv_ah *ah;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr sa = { .srq_limit = 1 };
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr swr, *sbad;
	struct ibv_wc wc;
	int n = 0;

	list = ibv_get_device_list(&n);
	TR_EXPECT(list && n == 1);
	if (!list || n != 1)
		return;
	TR_EXPECT(RT_PTR_ERRNO(ibv_open_device(list[0])) == ENOMEM);
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	TR_EXPECT(ctx != NULL);
	if (!ctx)
		return;
	TWICE(t, EINVAL, ibv_query_device(ctx, &da));
	TWICE(t, EINVAL, ibv_query_port(ctx, 1, &pa));
	if (!t->legacy) {
		/* the legacy core reads these from sysfs: no op to fail */
		/* -1 and errno, as rdma-core returns them (a P_Key read from
		 * sysfs that fails is ENOENT) */
		TR_EXPECT(ibv_query_gid(ctx, 1, 0, &gid) == -1 && errno == EINVAL);
		TR_EXPECT(ibv_query_gid(ctx, 1, 0, &gid) == 0);
		TR_EXPECT(ibv_query_pkey(ctx, 1, 0, &pkey) == -1 && errno == ENOENT);
		TR_EXPECT(ibv_query_pkey(ctx, 1, 0, &pkey) == 0);
	}
	TWICE_PTR(t, ENOMEM, pd, ibv_alloc_pd(ctx));
	TWICE_PTR(t, ENOMEM, mr, ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	TWICE_PTR(t, ENOMEM, cq, ibv_create_cq(ctx, 8, NULL, NULL, 0));
	TWICE(t, EIO, ibv_resize_cq(cq, 16));
	TWICE(t, EIO, ibv_req_notify_cq(cq, 0));
	TR_EXPECT(ibv_poll_cq(cq, 1, &wc) == -EIO);
	TR_EXPECT(ibv_poll_cq(cq, 1, &wc) == 0);
	TWICE_PTR(t, ENOMEM, srq, ibv_create_srq(pd, &sia));
	TWICE(t, EINVAL, ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT));
	TWICE(t, EINVAL, ibv_query_srq(srq, &sa));
	sge = (struct ibv_sge){ (uintptr_t)buf, 8, mr->lkey };
	rwr = (struct ibv_recv_wr){ .sg_list = &sge, .num_sge = 1 };
	TR_EXPECT(ibv_post_srq_recv(srq, &rwr, &rbad) == EIO && rbad == &rwr);
	TR_EXPECT(ibv_post_srq_recv(srq, &rwr, &rbad) == 0);

	qia.send_cq = qia.recv_cq = cq;
	TWICE_PTR(t, ENOMEM, qp, ibv_create_qp(pd, &qia));
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	TR_EXPECT(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
	TR_EXPECT(qp->state == IBV_QPS_RESET);	/* nothing changed */
	TR_EXPECT(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	TWICE(t, EINVAL, ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia));
	TR_EXPECT(ibv_post_recv(qp, &rwr, &rbad) == EIO && rbad == &rwr);
	TR_EXPECT(ibv_post_recv(qp, &rwr, &rbad) == 0);
	aa.dlid = rt_port_lid(ctx);
	TWICE_PTR(t, ENOMEM, ah, ibv_create_ah(pd, &aa));
	TWICE(t, EIO, ibv_destroy_ah(ah));
	qia.qp_type = IBV_QPT_UD;
	ud = ibv_create_qp(pd, &qia);
	TR_EXPECT(ud != NULL);
	if (ud) {
		TWICE(t, EIO, ibv_attach_mcast(ud, &mgid, 0xc001));
		TWICE(t, EIO, ibv_detach_mcast(ud, &mgid, 0xc001));
		TR_EXPECT(ibv_destroy_qp(ud) == EIO);
		TR_EXPECT(ibv_destroy_qp(ud) == 0);
	}
	/* a send from RTS, to a QP of the same port */
	qia.qp_type = IBV_QPT_RC;
	peer = ibv_create_qp(pd, &qia);
	TR_EXPECT(peer != NULL);
	if (peer) {
		qa.qp_state = IBV_QPS_RESET;
		TR_EXPECT(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == 0);
		TR_EXPECT(rt_connect_qp(qp, peer->qp_num, aa.dlid) == 0);
		TR_EXPECT(rt_connect_qp(peer, qp->qp_num, aa.dlid) == 0);
		swr = (struct ibv_send_wr){ .wr_id = 5, .sg_list = &sge, .num_sge = 1,
					    .opcode = IBV_WR_SEND,
					    .send_flags = IBV_SEND_SIGNALED };
		TR_EXPECT(ibv_post_recv(peer, &rwr, &rbad) == 0);
		TR_EXPECT(ibv_post_send(qp, &swr, &sbad) == EIO && sbad == &swr);
		TR_EXPECT(ibv_post_send(qp, &swr, &sbad) == 0);
		TR_EXPECT(rt_poll_one(cq, &wc) == 1);
		TR_EXPECT(rt_poll_one(cq, &wc) == 1);
		TR_EXPECT(ibv_destroy_qp(peer) == 0);
	}

	TWICE(t, EIO, ibv_destroy_srq(srq));
	if (!t->legacy) {
		struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						 IBV_XRCD_INIT_ATTR_OFLAGS,
						 .fd = -1, .oflags = O_CREAT };
		struct ibv_srq_init_attr_ex sx = {
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = cq,
			.attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_qp_init_attr_ex qx = {
			.comp_mask = IBV_QP_INIT_ATTR_XRCD, .qp_type = IBV_QPT_XRC_RECV };
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE, .qp_type = IBV_QPT_XRC_RECV };
		struct ibv_xrcd *xrcd;
		struct ibv_srq *xsrq;
		struct ibv_qp *tgt, *opened;
		uint32_t num;

		TWICE_PTR(t, ENOMEM, xrcd, ibv_open_xrcd(ctx, &xa));
		sx.xrcd = xrcd;
		TWICE_PTR(t, ENOMEM, xsrq, ibv_create_srq_ex(ctx, &sx));
		TWICE(t, EINVAL, ibv_get_srq_num(xsrq, &num));
		qx.xrcd = xrcd;
		TWICE_PTR(t, ENOMEM, tgt, ibv_create_qp_ex(ctx, &qx));
		oa.xrcd = xrcd;
		oa.qp_num = tgt->qp_num;
		TWICE_PTR(t, ENOMEM, opened, ibv_open_qp(ctx, &oa));
		TR_EXPECT(ibv_destroy_qp(opened) == 0);
		TR_EXPECT(ibv_destroy_qp(tgt) == 0);
		TR_EXPECT(ibv_destroy_srq(xsrq) == 0);
		TWICE(t, EIO, ibv_close_xrcd(xrcd));
	}
	TR_EXPECT(ibv_destroy_qp(qp) == 0);	/* its fault went to ud's */
	TWICE(t, EIO, ibv_destroy_cq(cq));
	TWICE(t, EIO, ibv_dereg_mr(mr));
	TWICE(t, EIO, ibv_dealloc_pd(pd));
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(every_op_fails_once_with_its_default_errno)
{
	char script[2048] = "";
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		strcat(script, "fault ");
		strcat(script, ops[i]);
		strcat(script, " nth 1\n");
	}
	rt_run_both(script, ck_faults);
}

/* ------------------------------------------------------------------ */
/* A device event, a CQ overflow                                        */

static const char events_script[] =
	"event device_fatal after alloc_pd 2\n";

static void ck_events(struct rt *t)
{
	static char buf[16];
	struct ibv_context *ctx = rt_open(t);
	struct ibv_pd *pd = NULL, *pd2 = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *x = NULL, *y = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_async_event ev;
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr swr, *sbad;
	struct ibv_wc wc[4];
	int fl, i, got = 0;

	if (!ctx)
		return;
	fl = fcntl(ctx->async_fd, F_GETFL);
	TR_EXPECT(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	/* raised after the second alloc_pd only; names no port */
	pd = ibv_alloc_pd(ctx);
	TR_EXPECT(ibv_get_async_event(ctx, &ev) == EAGAIN);
	pd2 = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	TR_EXPECT(pd && pd2 && cq);
	if (!pd || !pd2 || !cq)
		goto out;
	TR_EXPECT(rt_readable(ctx->async_fd));
	TR_EXPECT(ibv_get_async_event(ctx, &ev) == 0 &&
		 ev.event_type == IBV_EVENT_DEVICE_FATAL && ev.element.port_num == 0);
	if (!tr_checks_failed())
		ibv_ack_async_event(&ev);
	/* a one-entry CQ gets two completions: it overflows once */
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	qia.send_cq = qia.recv_cq = cq;
	x = cq && pd ? ibv_create_qp(pd, &qia) : NULL;
	y = cq && pd ? ibv_create_qp(pd, &qia) : NULL;
	TR_EXPECT(cq && mr && x && y);
	if (!cq || !mr || !x || !y)
		goto out;
	TR_EXPECT(rt_connect_qp(x, y->qp_num, rt_port_lid(ctx)) == 0);
	TR_EXPECT(rt_connect_qp(y, x->qp_num, rt_port_lid(ctx)) == 0);
	sge = (struct ibv_sge){ (uintptr_t)buf, 4, mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	swr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	TR_EXPECT(cq->cqe >= 1);
	for (i = 0; i < cq->cqe + 1 && !tr_checks_failed(); i++) {
		TR_EXPECT(ibv_post_recv(y, &rwr, &rbad) == 0);
		TR_EXPECT(ibv_post_send(x, &swr, &sbad) == 0);
	}
	TR_EXPECT(rt_readable(ctx->async_fd));
	TR_EXPECT(ibv_get_async_event(ctx, &ev) == 0 &&
		 ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq);
	if (!tr_checks_failed())
		ibv_ack_async_event(&ev);
	for (i = 0; i < 1000 && got < 2; i++)
		got += ibv_poll_cq(cq, 4, wc) > 0;
out:
	if (x)
		TR_EXPECT(ibv_destroy_qp(x) == 0);
	if (y)
		TR_EXPECT(ibv_destroy_qp(y) == 0);
	if (cq)
		TR_EXPECT(ibv_destroy_cq(cq) == 0);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	if (pd2)
		TR_EXPECT(ibv_dealloc_pd(pd2) == 0);
	if (pd)
		TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(device_event_and_cq_overflow)
{
	rt_run_both(events_script, ck_events);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
