// SPDX-License-Identifier: MIT
/*
 * ixrc-xrc-route: remote_srqn routing on ibvct's soft XRC device, through
 * Debian's libibverbs and the guest's kernel (make xrc-vm runs it in the
 * guest). One process, one XRC_SEND QP per case connected to one XRC_RECV
 * QP of XRCD A; TAP on stdout:
 *   - the SRQ named by remote_srqn gets the message, on its own CQ, with the
 *     target QP's number in the completion (SRQX-13, WR-03);
 *   - a remote_srqn naming no SRQ, or an XRC SRQ of another XRCD, completes
 *     on the sender with IBV_WC_REM_INV_REQ_ERR, nothing arrives, and the
 *     sender's later WRs flush (IBV_WC_WR_FLUSH_ERR).
 *   ixrc-xrc-route [DEVICE]     default ixrc0
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int n, fails;

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

/* one completion within ~2 s, or status -1 */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, r;

	for (i = 0; i < 2000; i++) {
		r = ibv_poll_cq(cq, 1, wc);
		if (r < 0)
			return -1;
		if (r == 1)
			return 0;
		usleep(1000);
	}
	return -1;
}

static void to_rts(struct ibv_qp *qp, uint32_t dest, int send)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = 0,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.min_rnr_timer = 12;
	a.max_dest_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  (send ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER)))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
			  (send ? IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			   IBV_QP_MAX_QP_RD_ATOMIC : 0)))
		die("modify to RTS");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "ixrc0";
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq_a, *rcq_b;
	struct ibv_xrcd *xa, *xb;
	struct ibv_srq *srq_a, *srq_b;
	struct ibv_qp *tgt;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint32_t srqn_a, srqn_b;
	char *buf;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..8\n");
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no such device");
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 8192);
	mr = pd && buf ? ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE) : NULL;
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq_a = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq_b = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!mr || !scq || !rcq_a || !rcq_b)
		die("pd, mr or cqs");

	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	xa = ibv_open_xrcd(ctx, &xattr);
	xb = ibv_open_xrcd(ctx, &xattr);
	if (!xa || !xb)
		die("ibv_open_xrcd");

	struct ibv_srq_init_attr_ex sattr = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xa, .cq = rcq_a,
	};
	srq_a = ibv_create_srq_ex(ctx, &sattr);
	sattr.xrcd = xb;
	sattr.cq = rcq_b;
	srq_b = ibv_create_srq_ex(ctx, &sattr);
	if (!srq_a || !srq_b || ibv_get_srq_num(srq_a, &srqn_a) ||
	    ibv_get_srq_num(srq_b, &srqn_b))
		die("XRC SRQs");

	struct ibv_qp_init_attr_ex tattr = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xa,
	};
	tgt = ibv_create_qp_ex(ctx, &tattr);
	if (!tgt)
		die("XRC_RECV QP");
	to_rts(tgt, 0, 0);

	/* each SRQ gets receives */
	for (i = 0; i < 4; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + 4096 + i * 256,
			.length = 256, .lkey = mr->lkey,
		};
		struct ibv_recv_wr rwr = { .wr_id = 100 + i, .sg_list = &sge,
					   .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(i & 1 ? srq_b : srq_a, &rwr, &bad))
			die("ibv_post_srq_recv");
	}

	/* case 1: the right SRQ; case 2: no such SRQ; case 3: XRCD B's SRQ */
	uint32_t srqns[3] = { srqn_a, srqn_a + srqn_b + 1000, srqn_b };
	for (i = 0; i < 3; i++) {
		struct ibv_qp_init_attr_ex iattr = {
			.qp_type = IBV_QPT_XRC_SEND,
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
			.send_cq = scq, .recv_cq = scq,
			.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		};
		struct ibv_qp *ini = ibv_create_qp_ex(ctx, &iattr);
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
				       .lkey = mr->lkey };
		struct ibv_send_wr swr = {
			.wr_id = 1 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, swr2, *bad;
		char what[160];

		if (!ini)
			die("XRC_SEND QP");
		to_rts(ini, tgt->qp_num, 1);
		swr.qp_type.xrc.remote_srqn = srqns[i];
		swr2 = swr;
		swr2.wr_id = 10 + i;
		swr.next = &swr2;
		snprintf(buf, 64, "message %d", i);
		if (ibv_post_send(ini, &swr, &bad))
			die("ibv_post_send");
		if (i == 0) {
			int got = poll1(scq, &wc) == 0 && wc.status == IBV_WC_SUCCESS &&
				  poll1(scq, &wc) == 0 && wc.status == IBV_WC_SUCCESS;
			check(got, "XRC sends to the SRQ remote_srqn names complete on the sender");
			got = poll1(rcq_a, &wc) == 0 && wc.status == IBV_WC_SUCCESS &&
			      wc.wr_id == 100 && wc.byte_len == 64 &&
			      wc.qp_num == tgt->qp_num &&
			      !strcmp(buf + 4096, "message 0");
			check(got, "it arrives on that SRQ's CQ, naming the target QP, data intact [SRQX-13]");
			got = poll1(rcq_a, &wc) == 0 && wc.wr_id == 102;
			check(got, "the second lands in the same SRQ's next receive");
		} else {
			int got = poll1(scq, &wc) == 0 &&
				  wc.status == IBV_WC_REM_INV_REQ_ERR && wc.wr_id == 1u + i;
			snprintf(what, sizeof(what), "remote_srqn of %s: IBV_WC_REM_INV_REQ_ERR on the sender (got %s)",
				 i == 1 ? "no SRQ" : "another XRCD's SRQ",
				 ibv_wc_status_str(wc.status));
			check(got, what);
			got = poll1(scq, &wc) == 0 &&
			      wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 10u + i;
			check(got, "the sender's next WR flushes (its QP is in ERR)");
			got = ibv_poll_cq(rcq_a, 1, &wc) == 0 &&
			      ibv_poll_cq(rcq_b, 1, &wc) == 0;
			if (i == 2)
				check(got, "nothing arrives on either SRQ's CQ");
		}
		ibv_destroy_qp(ini);
	}
	ibv_destroy_qp(tgt);
	ibv_destroy_srq(srq_a);
	ibv_destroy_srq(srq_b);
	ibv_close_xrcd(xa);
	ibv_close_xrcd(xb);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq_a);
	ibv_destroy_cq(rcq_b);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return fails != 0;
}
