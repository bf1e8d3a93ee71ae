/* SPDX-License-Identifier: MIT */
/*
 * The test fixtures (tf.h): verbs objects every C test builds the same
 * way, on the public verbs API only, so that the same source serves the
 * suites of both targets and the unit tests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tf.h"
#include "tr_clock.h"

/* ---- devices ------------------------------------------------------------- */
struct ibv_context *tf_open_dev(const char *name, int *ndev)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (ndev)
		*ndev = list ? n : 0;
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			err = ctx ? 0 : errno;
			break;
		}
	ibv_free_device_list(list);
	errno = err;
	return ctx;
}

/* ---- XRC domains ----------------------------------------------------------- */
struct ibv_xrcd *tf_xrcd(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = fd;
	a.oflags = oflags;
	return ibv_open_xrcd(ctx, &a);
}

/* ---- addresses and the QP state walk -------------------------------------- */
int tf_loopback_av(struct ibv_context *ctx, uint8_t port, struct ibv_ah_attr *ah)
{
	struct ibv_port_attr pa;

	memset(ah, 0, sizeof(*ah));
	if (ibv_query_port(ctx, port, &pa))
		return errno ? errno : EINVAL;
	ah->dlid = pa.lid;
	ah->port_num = port;
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		/* RoCE: addressed by GID 0 of the port */
		ah->is_global = 1;
		ah->grh.hop_limit = 1;
		ah->grh.sgid_index = 0;
		if (ibv_query_gid(ctx, port, 0, &ah->grh.dgid))
			return errno ? errno : EINVAL;
	}
	return 0;
}

const struct tf_qp_opts tf_qp_default = TF_QP_DEFAULT;

int tf_qp_to_init_o(struct ibv_qp *qp, uint8_t port, const struct tf_qp_opts *o)
{
	struct ibv_qp_attr a;
	int m = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.qp_access_flags = o->access;
	a.qkey = 0x11111111;
	m |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, m | o->init_mask);
}

int tf_qp_to_init(struct ibv_qp *qp, uint8_t port)
{
	return tf_qp_to_init_o(qp, port, &tf_qp_default);
}

int tf_qp_to_rtr_av_o(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn,
		      const struct tf_qp_opts *o)
{
	enum ibv_qp_type t = qp->qp_type;
	struct ibv_qp_attr a;
	int m = IBV_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.max_dest_rd_atomic = o->max_dest_rd_atomic;
	a.min_rnr_timer = o->min_rnr_timer;
	a.ah_attr = *ah;
	if (t != IBV_QPT_UD)
		m |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV)
		m |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, m | o->rtr_mask);
}

int tf_qp_to_rtr_av(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn)
{
	return tf_qp_to_rtr_av_o(qp, ah, dest_qpn, &tf_qp_default);
}

int tf_qp_to_rtr(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn)
{
	struct ibv_ah_attr ah;
	int err = 0;

	if (qp->qp_type != IBV_QPT_UD)
		err = tf_loopback_av(qp->context, port, &ah);
	else
		memset(&ah, 0, sizeof(ah));
	return err ? err : tf_qp_to_rtr_av(qp, &ah, dest_qpn);
}

int tf_qp_to_rts_o(struct ibv_qp *qp, const struct tf_qp_opts *o)
{
	enum ibv_qp_type t = qp->qp_type;
	struct ibv_qp_attr a;
	int m = IBV_QP_STATE | IBV_QP_SQ_PSN;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = o->max_rd_atomic;
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND)
		m |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	if (t == IBV_QPT_XRC_RECV)
		m |= IBV_QP_TIMEOUT;
	return ibv_modify_qp(qp, &a, m | o->rts_mask);
}

int tf_qp_to_rts(struct ibv_qp *qp)
{
	return tf_qp_to_rts_o(qp, &tf_qp_default);
}

/* The step that failed, into the test's log (shown when the test fails). */
static int tf_step(int err, const char *step, const struct ibv_qp *qp)
{
	if (err)
		printf("# %s of QP %#x (type %d): %s\n", step, qp->qp_num, qp->qp_type,
		       strerror(err));
	return err;
}

int tf_qp_connect_av_o(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn,
		       const struct tf_qp_opts *o)
{
	int err = tf_step(tf_qp_to_init_o(qp, ah->port_num, o), "RESET->INIT", qp);

	if (!err)
		err = tf_step(tf_qp_to_rtr_av_o(qp, ah, dest_qpn, o), "INIT->RTR", qp);
	if (!err)
		err = tf_step(tf_qp_to_rts_o(qp, o), "RTR->RTS", qp);
	return err;
}

int tf_qp_connect_av(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn)
{
	return tf_qp_connect_av_o(qp, ah, dest_qpn, &tf_qp_default);
}

int tf_qp_connect_o(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn,
		    const struct tf_qp_opts *o)
{
	struct ibv_ah_attr ah;
	int err = 0;

	if (qp->qp_type != IBV_QPT_UD)
		err = tf_loopback_av(qp->context, port, &ah);
	else {
		memset(&ah, 0, sizeof(ah));
		ah.port_num = port;
	}
	return err ? err : tf_qp_connect_av_o(qp, &ah, dest_qpn, o);
}

int tf_qp_connect(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn)
{
	return tf_qp_connect_o(qp, port, dest_qpn, &tf_qp_default);
}

int tf_pair_connect(struct ibv_qp *a, struct ibv_qp *b, uint8_t port, int b_rts)
{
	int err = tf_step(tf_qp_to_init(a, port), "RESET->INIT", a);

	if (!err)
		err = tf_step(tf_qp_to_init(b, port), "RESET->INIT", b);
	if (!err)
		err = tf_step(tf_qp_to_rtr(a, port, b->qp_num), "INIT->RTR", a);
	if (!err)
		err = tf_step(tf_qp_to_rtr(b, port, a->qp_num), "INIT->RTR", b);
	if (!err)
		err = tf_step(tf_qp_to_rts(a), "RTR->RTS", a);
	if (!err && b_rts)
		err = tf_step(tf_qp_to_rts(b), "RTR->RTS", b);
	return err;
}

int tf_poll(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long long end = tr_now_ms() + 1000;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? 0 : 1;
	} while (tr_now_ms() < end);
	return 0;
}

int tf_poll_for(struct ibv_cq *cq, struct ibv_wc *wc, long long budget_ms)
{
	struct tr_clock c;
	int i, n;

	for (i = 0; i < 10000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? 0 : 1;
	}
	tr_clock_start(&c, budget_ms * tr_timeout_mult());
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? 0 : 1;
		if (!tr_clock_tick(&c))
			return ibv_poll_cq(cq, 1, wc) == 1;
		usleep(100);
	}
}

struct ibv_srq *tf_xsrq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			struct ibv_cq *cq, uint32_t max_wr)
{
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = pd;
	a.xrcd = xrcd;
	a.cq = cq;
	a.attr.max_wr = max_wr;
	a.attr.max_sge = 1;
	return ibv_create_srq_ex(ctx, &a);
}

struct ibv_qp *tf_tgt_qp(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	return ibv_create_qp_ex(ctx, &a);
}

struct ibv_qp *tf_open_tgt(struct ibv_context *ctx, struct ibv_xrcd *xrcd, uint32_t qpn)
{
	struct ibv_qp_open_attr a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE |
		      IBV_QP_OPEN_ATTR_CONTEXT;
	a.qp_num = qpn;
	a.xrcd = xrcd;
	a.qp_type = IBV_QPT_XRC_RECV;
	a.qp_context = (void *)(uintptr_t)0x5151;
	return ibv_open_qp(ctx, &a);
}

struct ibv_qp *tf_ini_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	a.send_cq = cq;
	a.cap.max_send_wr = 16;
	a.cap.max_send_sge = 1;
	return ibv_create_qp_ex(ctx, &a);
}

struct ibv_qp *tf_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = type;
	a.send_cq = cq;
	a.recv_cq = cq;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return ibv_create_qp(pd, &a);
}

struct ibv_qp *tf_ini_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
			    uint64_t ops)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = pd;
	a.send_cq = cq;
	a.cap.max_send_wr = 16;
	a.cap.max_send_sge = 1;
	a.send_ops_flags = ops;
	return ibv_create_qp_ex(ctx, &a);
}

struct ibv_qp *tf_rc_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
			   enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = type;
	/* ops 0: the same QP without the new API, for comparison */
	a.comp_mask = IBV_QP_INIT_ATTR_PD | (ops ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0);
	a.pd = pd;
	a.send_cq = cq;
	a.recv_cq = cq;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 64;
	a.send_ops_flags = ops;
	return ibv_create_qp_ex(ctx, &a);
}

int tf_post_send_ex(struct ibv_qp *qp, const struct ibv_send_wr *wr)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct ibv_data_buf buf[8];
	int i;

	assert_non_null(x);
	ibv_wr_start(x);
	for (; wr; wr = wr->next) {
		x->wr_id = wr->wr_id;
		x->wr_flags = wr->send_flags;
		switch (wr->opcode) {
		case IBV_WR_SEND:
			ibv_wr_send(x);
			break;
		case IBV_WR_SEND_WITH_IMM:
			ibv_wr_send_imm(x, wr->imm_data);
			break;
		case IBV_WR_SEND_WITH_INV:
			ibv_wr_send_inv(x, wr->invalidate_rkey);
			break;
		case IBV_WR_RDMA_WRITE:
			ibv_wr_rdma_write(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr,
					      wr->imm_data);
			break;
		case IBV_WR_RDMA_READ:
			ibv_wr_rdma_read(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			ibv_wr_atomic_cmp_swp(x, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
					      wr->wr.atomic.compare_add, wr->wr.atomic.swap);
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			ibv_wr_atomic_fetch_add(x, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
						wr->wr.atomic.compare_add);
			break;
		case IBV_WR_LOCAL_INV:
			ibv_wr_local_inv(x, wr->invalidate_rkey);
			break;
		default:
			tr_fail("tf_post_send_ex: no builder for opcode %d", wr->opcode);
		}
		if (qp->qp_type == IBV_QPT_XRC_SEND)
			ibv_wr_set_xrc_srqn(x, wr->qp_type.xrc.remote_srqn);
		if (qp->qp_type == IBV_QPT_UD)
			ibv_wr_set_ud_addr(x, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
					   wr->wr.ud.remote_qkey);
		if (wr->opcode == IBV_WR_LOCAL_INV)
			continue;
		if (wr->send_flags & IBV_SEND_INLINE) {
			assert_true(wr->num_sge <= 8);
			for (i = 0; i < wr->num_sge; i++) {
				buf[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
				buf[i].length = wr->sg_list[i].length;
			}
			if (wr->num_sge == 1)
				ibv_wr_set_inline_data(x, buf[0].addr, buf[0].length);
			else
				ibv_wr_set_inline_data_list(x, (size_t)wr->num_sge, buf);
		} else if (wr->num_sge == 1) {
			ibv_wr_set_sge(x, wr->sg_list[0].lkey, wr->sg_list[0].addr,
				       wr->sg_list[0].length);
		} else {
			ibv_wr_set_sge_list(x, (size_t)wr->num_sge, wr->sg_list);
		}
	}
	return ibv_wr_complete(x);
}
