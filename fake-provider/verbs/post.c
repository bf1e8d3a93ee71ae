/* SPDX-License-Identifier: MIT */
/*
 * The data path verbs: the driver's reading of a send WR and its posting
 * to the engine's requester, and receive posting.
 *
 * WR-02: a WR is read member by member, and qp_type.xrc.remote_srqn (the
 * first byte past the 72-byte pre-XRC ibv_send_wr) only for XRC_SEND QPs.
 */
#include <errno.h>
#include <string.h>

#include "fp_verbs.h"

static void fp_swr_read(const struct fe_qp *r, const struct ibv_send_wr *wr, struct fp_swr *s)
{
	memset(s, 0, sizeof(*s));
	s->wr_id = wr->wr_id;
	s->sg_list = wr->sg_list;
	s->num_sge = wr->num_sge;
	s->opcode = wr->opcode;
	s->send_flags = wr->send_flags;
	s->imm = wr->imm_data;
	switch (s->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		s->remote_addr = wr->wr.atomic.remote_addr;
		s->rkey = wr->wr.atomic.rkey;
		s->compare_add = wr->wr.atomic.compare_add;
		s->swap = wr->wr.atomic.swap;
		break;
	default:
		if (r->type == IBV_QPT_UD) {
			s->ah = wr->wr.ud.ah ? &to_fp_ah(wr->wr.ud.ah)->attr : NULL;
			s->remote_qpn = wr->wr.ud.remote_qpn;
			s->remote_qkey = wr->wr.ud.remote_qkey;
		} else {
			s->remote_addr = wr->wr.rdma.remote_addr;
			s->rkey = wr->wr.rdma.rkey;
		}
		break;
	}
	if (r->type == IBV_QPT_XRC_SEND)	/* @rule WR-02 WR-03 */
		s->remote_srqn = wr->qp_type.xrc.remote_srqn;
	/* The quirk's driver sends an opcode XRC does not allow as a SEND. */
	if (r->type == IBV_QPT_XRC_SEND && fp__quirk(FP_Q_XRC_SEND_ANY_OPCODE) &&
	    !fe_opcode_ok(r->type, s->opcode))
		s->opcode = IBV_WR_SEND;
	if (r->type == IBV_QPT_XRC_SEND && fp__quirk(FP_Q_SEND_READS_PAST_80))
		(void)*(struct ibv_mw *const volatile *)&wr->bind_mw.mw;	/* byte 80: faults */
	else if (fp__quirk(FP_Q_SEND_READS_PAST_72))
		/* The quirk: touch byte 72 whatever the type (a guard page faults). */
		s->remote_srqn = *(const volatile uint32_t *)&wr->qp_type.xrc.remote_srqn;
}

int fp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fe_qp *r = &h->real->e;
	struct fp_swr s;
	int err, n = 0;

	err = fp__op_begin(FP_OP_POST_SEND);
	if (err)
		goto err_bad;
	/* QPX-12: a target QP (created or opened) has no send queue. */
	if (r->type == IBV_QPT_XRC_RECV || h->opened) {	/* @rule QPX-12 */
		if (fp__quirk(FP_Q_XRC_POST_MISSING_QUEUE))
			goto out;		/* the quirk: taken, and gone nowhere */
		err = EINVAL;
		goto err_bad;
	}
	/* RESET, INIT and RTR cannot send. */
	if (r->state == IBV_QPS_RESET || r->state == IBV_QPS_INIT || r->state == IBV_QPS_RTR) {
		err = EINVAL;
		goto err_bad;
	}
	for (; wr; wr = wr->next, n++) {
		fp_swr_read(r, wr, &s);
		/* ibv_send_wr has no place for an ATOMIC_WRITE's value or a
		 * FLUSH's type and level: only the new post-send API builds
		 * them (wr_ex.c); an opcode past mlx5's table is EINVAL
		 * (rdma-core v44.0 providers/mlx5/qp.c:833, the table at :49) */
		if (s.opcode == IBV_WR_ATOMIC_WRITE || s.opcode == IBV_WR_FLUSH) {
			err = EINVAL;
			goto err_bad;
		}
		/* windows: WRs the HCA runs itself (mw.c) */
		if (s.opcode == IBV_WR_BIND_MW)
			err = fp__post_local(r, &s, wr->bind_mw.mw, wr->bind_mw.rkey,
					     &wr->bind_mw.bind_info);
		else if (s.opcode == IBV_WR_LOCAL_INV)
			err = fp__post_local(r, &s, NULL, 0, NULL);
		else if (fp_prof_post_refuses_misaligned_atomic(&s))
			err = EINVAL;		/* the driver's own check (rxe) */
		else
			err = fe_post_send(r, &s);
		if (err)
			goto err_bad;
	}
	goto out;

err_bad:
	*bad_wr = wr;
out:
	fp__op_end(h->ctx, FP_OP_POST_SEND, FP_SUBJ_QP, h, err, "qpn=%u posted=%d",
		   r->qpn, n);
	return err;
}

int fp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fe_qp *r = &h->real->e;
	int err, n = 0;

	err = fp__op_begin(FP_OP_POST_RECV);
	if (err)
		goto err_bad;
	/* QPX-11: XRC QPs (created or opened) have no receive queue. */
	if (r->type == IBV_QPT_XRC_SEND || r->type == IBV_QPT_XRC_RECV || h->opened) {	/* @rule QPX-11 */
		if (fp__quirk(FP_Q_XRC_POST_MISSING_QUEUE))
			goto out;		/* the quirk: taken, and gone nowhere */
		err = EINVAL;
		goto err_bad;
	}
	/* SRQ QPs receive through the SRQ's queue; RESET cannot receive. */
	if (r->srq || r->state == IBV_QPS_RESET) {
		err = EINVAL;
		goto err_bad;
	}
	for (; wr; wr = wr->next, n++) {
		err = fe_rq_post(&r->rq, wr);
		if (err)
			goto err_bad;
	}
	if (r->state == IBV_QPS_ERR)
		fe_qp_flush_rq(r);		/* posted on an ERR QP: flushed at once */
	goto out;

err_bad:
	*bad_wr = wr;
	if (!err)
		err = EINVAL;
out:
	fp__op_end(h->ctx, FP_OP_POST_RECV, FP_SUBJ_QP, h, err, "qpn=%u posted=%d",
		   r->qpn, n);
	return err;
}
