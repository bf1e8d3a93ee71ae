// SPDX-License-Identifier: MIT
/*
 * ixrc-rnr: the RC requester's RNR retry on ibvct's soft XRC device, through
 * Debian's libibverbs and the guest's kernel (t6104 runs it in the guest).
 * A send that finds no receive is RNR NAKed and sent again after the
 * responder's min_rnr_timer, rnr_retry times; then it completes with
 * IBV_WC_RNR_RETRY_EXC_ERR, the requester's QP is in the error state and
 * its later WRs flush; rnr_retry 7 retries for ever (IBA vol. 1 9.7.5.2.8;
 * ibv_modify_qp(3): "7 means infinite"). One process, QPs of the device
 * connected to each other; TAP on stdout:
 *   ixrc-rnr [DEVICE]     default ixrc0
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int n, fails;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char *buf;
static long poll_ms;

static void check(int cond, const char *what)
{
	n++;
	if (!cond)
		fails++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
}

static void die(const char *what)
{
	printf("Bail out! %s\n", what);
	exit(1);
}

/* one completion within ms milliseconds: 1, else 0 (-1 on an error) */
static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long i;
	int r;

	for (i = 0; i < ms; i++) {
		r = ibv_poll_cq(cq, 1, wc);
		if (r)
			return r;
		usleep(1000);
	}
	return 0;
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		   const char *what)
{
	if (ibv_modify_qp(qp, a, mask))
		die(what);
}

/* qp to INIT, RTR (to dest, responder timer rnr_timer), RTS (rnr_retry) */
static void connect_qp(struct ibv_qp *qp, uint32_t dest, int rnr_timer,
		       int rnr_retry, int xrc_tgt)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS, "modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.min_rnr_timer = rnr_timer;
	a.max_dest_rd_atomic = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	       IBV_QP_MIN_RNR_TIMER, "modify to RTR");
	if (xrc_tgt)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
	       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
	       "modify to RTS");
}

struct pair {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *s, *r;
};

/* a requester with rnr_retry and a responder with min_rnr_timer, RC */
static void rc_pair(struct pair *p, int rnr_timer, int rnr_retry)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	p->scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	p->rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!p->scq || !p->rcq)
		die("ibv_create_cq");
	ia.send_cq = ia.recv_cq = p->scq;
	p->s = ibv_create_qp(pd, &ia);
	ia.send_cq = ia.recv_cq = p->rcq;
	p->r = ibv_create_qp(pd, &ia);
	if (!p->s || !p->r)
		die("ibv_create_qp");
	connect_qp(p->s, p->r->qp_num, rnr_timer, rnr_retry, 0);
	connect_qp(p->r, p->s->qp_num, rnr_timer, 7, 0);
}

static void pair_free(struct pair *p)
{
	ibv_destroy_qp(p->s);
	ibv_destroy_qp(p->r);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->rcq);
}

static int post_send(struct ibv_qp *qp, uint64_t wr_id, uint32_t srqn)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 4096, .length = 64,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* rnr_retry r (< 7): the send ends in RNR_RETRY_EXC_ERR, the next flushes */
static void exhausted(int retry)
{
	struct ibv_wc wc;
	struct pair p;
	char what[160];
	int got;

	rc_pair(&p, 1, retry);	/* min_rnr_timer 1: 0.01 ms */
	if (post_send(p.s, 1, 0) || post_send(p.s, 2, 0))
		die("ibv_post_send");
	got = poll_for(p.scq, &wc, poll_ms);
	snprintf(what, sizeof(what), "rnr_retry %d, no receive: the send completes with "
		 "IBV_WC_RNR_RETRY_EXC_ERR (got %s, wr_id %llu)", retry,
		 got == 1 ? ibv_wc_status_str(wc.status) : "nothing",
		 got == 1 ? (unsigned long long)wc.wr_id : 0ULL);
	check(got == 1 && wc.wr_id == 1 && wc.status == IBV_WC_RNR_RETRY_EXC_ERR, what);
	got = poll_for(p.scq, &wc, poll_ms);
	snprintf(what, sizeof(what), "rnr_retry %d: the WR behind it flushes, the QP is in "
		 "the error state (got %s, state %d)", retry,
		 got == 1 ? ibv_wc_status_str(wc.status) : "nothing", qp_state(p.s));
	check(got == 1 && wc.wr_id == 2 && wc.status == IBV_WC_WR_FLUSH_ERR &&
	      qp_state(p.s) == IBV_QPS_ERR, what);
	/* the responder got nothing: a receive posted now stays posted */
	if (post_recv(p.r, 3))
		die("ibv_post_recv");
	check(poll_for(p.rcq, &wc, 50) == 0,
	      "nothing reached the responder: its receive posted afterwards stays posted");
	pair_free(&p);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "ixrc0";
	const char *mult = getenv("IBVCT_TIMEOUT_MULT");
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_wc wc;
	struct pair p;
	int i, got;

	setvbuf(stdout, NULL, _IOLBF, 0);
	poll_ms = 10000 * (mult && atoi(mult) > 0 ? atoi(mult) : 1);
	printf("1..11\n");
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no such device");
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 8192);
	mr = pd && buf ? ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		die("pd or mr");

	exhausted(0);
	exhausted(3);

	/* rnr_retry 7: for ever; the receive posted late gets the message */
	rc_pair(&p, 1, 7);
	strcpy(buf, "late receive");
	if (post_send(p.s, 4, 0))
		die("ibv_post_send");
	check(poll_for(p.scq, &wc, 100) == 0 && qp_state(p.s) == IBV_QPS_RTS,
	      "rnr_retry 7, no receive: no completion, the QP stays in RTS");
	if (post_recv(p.r, 5))
		die("ibv_post_recv");
	got = poll_for(p.rcq, &wc, poll_ms);
	check(got == 1 && wc.wr_id == 5 && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == 64 && !strcmp(buf + 4096, "late receive"),
	      "rnr_retry 7: the receive posted late gets the message");
	got = poll_for(p.scq, &wc, poll_ms);
	check(got == 1 && wc.wr_id == 4 && wc.status == IBV_WC_SUCCESS,
	      "rnr_retry 7: then the send completes with success");
	pair_free(&p);

	/* XRC: an XRC SRQ without a receive NAKs the XRC_SEND QP's message */
	{
		struct ibv_xrcd_init_attr xa = {
			.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
			.fd = -1, .oflags = O_CREAT,
		};
		struct ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &xa);
		struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = 8, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = rcq,
		};
		struct ibv_qp_init_attr_ex ta = {
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xrcd,
		};
		struct ibv_qp_init_attr_ex ia = {
			.qp_type = IBV_QPT_XRC_SEND, .send_cq = scq, .recv_cq = scq,
			.cap = { .max_send_wr = 8, .max_send_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		};
		struct ibv_srq *srq;
		struct ibv_qp *tgt, *ini;
		uint32_t srqn;

		if (!xrcd || !scq || !rcq)
			die("ibv_open_xrcd or its CQs");
		sa.xrcd = xrcd;
		srq = ibv_create_srq_ex(ctx, &sa);
		tgt = ibv_create_qp_ex(ctx, &ta);
		ini = ibv_create_qp_ex(ctx, &ia);
		if (!srq || !tgt || !ini || ibv_get_srq_num(srq, &srqn))
			die("XRC SRQ, XRC_RECV or XRC_SEND QP");
		connect_qp(tgt, ini->qp_num, 1, 7, 1);
		connect_qp(ini, tgt->qp_num, 1, 1, 0);
		if (post_send(ini, 6, srqn) || post_send(ini, 7, srqn))
			die("ibv_post_send XRC");
		got = poll_for(scq, &wc, poll_ms);
		check(got == 1 && wc.wr_id == 6 && wc.status == IBV_WC_RNR_RETRY_EXC_ERR,
		      "XRC, rnr_retry 1, the named XRC SRQ has no receive: IBV_WC_RNR_RETRY_EXC_ERR");
		got = poll_for(scq, &wc, poll_ms);
		check(got == 1 && wc.wr_id == 7 && wc.status == IBV_WC_WR_FLUSH_ERR &&
		      qp_state(ini) == IBV_QPS_ERR,
		      "XRC: the WR behind it flushes, the XRC_SEND QP is in the error state");
		ibv_destroy_qp(ini);
		ibv_destroy_qp(tgt);
		ibv_destroy_srq(srq);
		ibv_destroy_cq(scq);
		ibv_destroy_cq(rcq);
		ibv_close_xrcd(xrcd);
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return fails != 0;
}
