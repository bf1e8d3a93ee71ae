/* SPDX-License-Identifier: MIT */
/*
 * The modify-QP rules shared by the fake kernel daemon and the fake
 * provider (qp_modify.h): the state table of spec section 3b (QPX-06),
 * which attribute bits a transition requires and allows per QP type, as
 * the kernel's ib_modify_qp_is_ok() and its qp_state_table decide it
 * (linux drivers/infiniband/core/verbs.c); uverbs' stripping for the XRC
 * types (modify_qp_mask() in drivers/infiniband/core/uverbs_cmd.c,
 * QPX-07); and the checks uverbs' modify_qp() makes before them (QPX-08).
 * The table is data: one row per (type, cur, next).
 */
#include <errno.h>

#include "qp_modify.h"

#define ST	IBV_QP_STATE
#define CUR	IBV_QP_CUR_STATE
#define SQDN	IBV_QP_EN_SQD_ASYNC_NOTIFY
#define ACC	IBV_QP_ACCESS_FLAGS
#define PKEY	IBV_QP_PKEY_INDEX
#define PORT	IBV_QP_PORT
#define QKEY	IBV_QP_QKEY
#define AV	IBV_QP_AV
#define MTU	IBV_QP_PATH_MTU
#define TMO	IBV_QP_TIMEOUT
#define RETRY	IBV_QP_RETRY_CNT
#define RNR	IBV_QP_RNR_RETRY
#define RQPSN	IBV_QP_RQ_PSN
#define RDAT	IBV_QP_MAX_QP_RD_ATOMIC
#define ALT	IBV_QP_ALT_PATH
#define MINRNR	IBV_QP_MIN_RNR_TIMER
#define SQPSN	IBV_QP_SQ_PSN
#define DRDAT	IBV_QP_MAX_DEST_RD_ATOMIC
#define MIG	IBV_QP_PATH_MIG_STATE
#define DQPN	IBV_QP_DEST_QPN

struct fp_qp_row {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	int req, opt;
};

/*
 * Sorted by (type, cur, next). Transitions to RESET and ERR are not rows:
 * they are valid for every type and take only STATE, to RESET from every
 * state, to ERR from every state but RESET, whose row in the kernel's
 * qp_state_table holds RESET and INIT alone (linux v6.1
 * drivers/infiniband/core/verbs.c; seen on Debian 12's rxe0: RESET -> ERR
 * is EINVAL).
 * XRC_SEND is the kernel's XRC_INI, XRC_RECV its XRC_TGT.
 */
static const struct fp_qp_row fp_qp_rows[] = {
	{ IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, PKEY | PORT | ACC, 0 },
	{ IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_INIT, 0, PKEY | PORT | ACC },
	{ IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR,
	  AV | MTU | DQPN | RQPSN | DRDAT | MINRNR, ALT | ACC | PKEY },
	{ IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS,
	  TMO | RETRY | RNR | SQPSN | RDAT, CUR | ALT | ACC | MINRNR | MIG },
	{ IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RTS, 0, CUR | ACC | ALT | MIG | MINRNR },
	{ IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_SQD, 0, SQDN },
	{ IBV_QPT_RC, IBV_QPS_SQD, IBV_QPS_RTS, 0, CUR | ALT | ACC | MINRNR | MIG },
	{ IBV_QPT_RC, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  PORT | AV | TMO | RETRY | RNR | RDAT | DRDAT | ALT | ACC | PKEY | MINRNR | MIG },

	{ IBV_QPT_UC, IBV_QPS_RESET, IBV_QPS_INIT, PKEY | PORT | ACC, 0 },
	{ IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_INIT, 0, PKEY | PORT | ACC },
	{ IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_RTR, AV | MTU | DQPN | RQPSN, ALT | ACC | PKEY },
	{ IBV_QPT_UC, IBV_QPS_RTR, IBV_QPS_RTS, SQPSN, CUR | ALT | ACC | MIG },
	{ IBV_QPT_UC, IBV_QPS_RTS, IBV_QPS_RTS, 0, CUR | ACC | ALT | MIG },
	{ IBV_QPT_UC, IBV_QPS_RTS, IBV_QPS_SQD, 0, SQDN },
	{ IBV_QPT_UC, IBV_QPS_SQD, IBV_QPS_RTS, 0, CUR | ALT | ACC | MIG },
	{ IBV_QPT_UC, IBV_QPS_SQD, IBV_QPS_SQD, 0, AV | ALT | ACC | PKEY | MIG },
	{ IBV_QPT_UC, IBV_QPS_SQE, IBV_QPS_RTS, 0, CUR | ACC },

	{ IBV_QPT_UD, IBV_QPS_RESET, IBV_QPS_INIT, PKEY | PORT | QKEY, 0 },
	{ IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_INIT, 0, PKEY | PORT | QKEY },
	{ IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR, 0, PKEY | QKEY },
	{ IBV_QPT_UD, IBV_QPS_RTR, IBV_QPS_RTS, SQPSN, CUR | QKEY },
	{ IBV_QPT_UD, IBV_QPS_RTS, IBV_QPS_RTS, 0, CUR | QKEY },
	{ IBV_QPT_UD, IBV_QPS_RTS, IBV_QPS_SQD, 0, SQDN },
	{ IBV_QPT_UD, IBV_QPS_SQD, IBV_QPS_RTS, 0, CUR | QKEY },
	{ IBV_QPT_UD, IBV_QPS_SQD, IBV_QPS_SQD, 0, PKEY | QKEY },
	{ IBV_QPT_UD, IBV_QPS_SQE, IBV_QPS_RTS, 0, CUR | QKEY },

	{ IBV_QPT_XRC_SEND, IBV_QPS_RESET, IBV_QPS_INIT, PKEY | PORT | ACC, 0 },
	{ IBV_QPT_XRC_SEND, IBV_QPS_INIT, IBV_QPS_INIT, 0, PKEY | PORT | ACC },
	{ IBV_QPT_XRC_SEND, IBV_QPS_INIT, IBV_QPS_RTR, AV | MTU | DQPN | RQPSN, ALT | ACC | PKEY },
	{ IBV_QPT_XRC_SEND, IBV_QPS_RTR, IBV_QPS_RTS,
	  TMO | RETRY | RNR | SQPSN | RDAT, CUR | ALT | ACC | MIG },
	{ IBV_QPT_XRC_SEND, IBV_QPS_RTS, IBV_QPS_RTS, 0, CUR | ACC | ALT | MIG },
	{ IBV_QPT_XRC_SEND, IBV_QPS_RTS, IBV_QPS_SQD, 0, SQDN },
	{ IBV_QPT_XRC_SEND, IBV_QPS_SQD, IBV_QPS_RTS, 0, CUR | ALT | ACC | MIG },
	{ IBV_QPT_XRC_SEND, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  PORT | AV | TMO | RETRY | RNR | RDAT | ALT | ACC | PKEY | MIG },

	{ IBV_QPT_XRC_RECV, IBV_QPS_RESET, IBV_QPS_INIT, PKEY | PORT | ACC, 0 },
	{ IBV_QPT_XRC_RECV, IBV_QPS_INIT, IBV_QPS_INIT, 0, PKEY | PORT | ACC },
	{ IBV_QPT_XRC_RECV, IBV_QPS_INIT, IBV_QPS_RTR,
	  AV | MTU | DQPN | RQPSN | DRDAT | MINRNR, ALT | ACC | PKEY },
	{ IBV_QPT_XRC_RECV, IBV_QPS_RTR, IBV_QPS_RTS, TMO | SQPSN,
	  CUR | ALT | ACC | MINRNR | MIG },
	{ IBV_QPT_XRC_RECV, IBV_QPS_RTS, IBV_QPS_RTS, 0, CUR | ACC | ALT | MIG | MINRNR },
	{ IBV_QPT_XRC_RECV, IBV_QPS_RTS, IBV_QPS_SQD, 0, SQDN },
	{ IBV_QPT_XRC_RECV, IBV_QPS_SQD, IBV_QPS_RTS, 0, CUR | ALT | ACC | MINRNR | MIG },
	{ IBV_QPT_XRC_RECV, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  PORT | AV | TMO | DRDAT | ALT | ACC | PKEY | MINRNR | MIG },
};

static bool fp_qp_type_known(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD ||
	       type == IBV_QPT_XRC_SEND || type == IBV_QPT_XRC_RECV;
}

int fp_qp_mask_strip(enum ibv_qp_type type, int mask)
{
	/* uverbs modify_qp_mask(): bits that mean nothing for the XRC half */
	if (type == IBV_QPT_XRC_SEND)		/* @rule QPX-07 */
		return mask & ~(DRDAT | MINRNR);
	if (type == IBV_QPT_XRC_RECV)		/* @rule QPX-07 */
		return mask & ~(RDAT | RETRY | RNR);
	return mask;
}

bool fp_qp_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
		      enum ibv_qp_state next, int *req, int *opt)
{
	size_t i;

	if (!fp_qp_type_known(type) || (unsigned)cur > IBV_QPS_ERR ||
	    (unsigned)next > IBV_QPS_ERR)
		return false;
	*req = 0;
	*opt = 0;
	if (next == IBV_QPS_RESET || (next == IBV_QPS_ERR && cur != IBV_QPS_RESET))
		return true;
	for (i = 0; i < sizeof(fp_qp_rows) / sizeof(fp_qp_rows[0]); i++) {
		const struct fp_qp_row *r = &fp_qp_rows[i];

		if (r->type == type && r->cur == cur && r->next == next) {
			*req = r->req;
			*opt = r->opt;
			return true;
		}
	}
	return false;
}

/* Without IBV_QP_STATE in the mask the QP stays where it is: next = cur. */
int fp_qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state cur,
		       enum ibv_qp_state next, int mask)
{
	unsigned int m = (unsigned int)mask;
	int req, opt;

	if (!(m & ST))
		next = cur;
	/* (c) CUR_STATE only names a state the QP can be moved out of on the fly */
	if ((m & CUR) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return EINVAL;
	if (!fp_qp_transition(type, cur, next, &req, &opt))		/* @rule QPX-06 */
		return EINVAL;
	if ((m & (unsigned int)req) != (unsigned int)req)		/* @rule QPX-06 */
		return EINVAL;
	if (m & ~(unsigned int)(req | opt | ST))			/* @rule QPX-06 */
		return EINVAL;
	return 0;
}

int fk_qp_modify_prepare(enum ibv_qp_type type, uint32_t state, uint32_t qp_state,
			 uint32_t cur_qp_state, unsigned breaks, uint32_t *mask, uint32_t *next)
{
	uint32_t m = *mask, cur;
	int err;

	if (m & ~FK_QP_STANDARD_BITS)					/* @rule QPX-08 */
		return EOPNOTSUPP;
	if (((m & ST) && qp_state > IBV_QPS_ERR) ||			/* @rule QPX-08 */
	    ((m & CUR) && cur_qp_state > IBV_QPS_ERR))
		return EINVAL;
	cur = (m & CUR) ? cur_qp_state : state;
	*next = (m & ST) ? qp_state : cur;
	if (cur != state)
		return EINVAL;
	if (!(breaks & FK_QPM_NO_STRIP))
		m = (uint32_t)fp_qp_mask_strip(type, (int)m);
	if (!(breaks & FK_QPM_SKIP_TABLE)) {
		err = fp_qp_modify_check(type, (enum ibv_qp_state)cur,
					 (enum ibv_qp_state)*next, (int)m);
		if (err)
			return err;
	}
	*mask = m;
	return 0;
}
