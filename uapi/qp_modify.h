/* SPDX-License-Identifier: MIT */
/*
 * The modify-QP rules of spec section 3b (QPX-06..08), written once for both
 * places that modify a QP: the fake kernel daemon for XRC target QPs
 * (kernel/state.c) and the fake provider for every other QP (src/qp.c).
 * They follow uverbs' modify_qp() (linux drivers/infiniband/core/
 * uverbs_cmd.c: the standard-bits and state checks, modify_qp_mask()'s
 * stripping for the XRC types) and ib_modify_qp_is_ok() with its
 * qp_state_table (linux drivers/infiniband/core/verbs.c), then the port,
 * P_Key and rd_atomic checks of the attributes. The table itself is data
 * in qp_modify.c; the attribute steps are a macro, instantiated for the
 * daemon's wire struct and for struct ibv_qp_attr (same member names).
 */
#ifndef FK_QP_MODIFY_H
#define FK_QP_MODIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/* uverbs' IB_QP_ATTR_STANDARD_BITS: IBV_QP_STATE .. IBV_QP_DEST_QPN. */
#define FK_QP_STANDARD_BITS	((uint32_t)((IBV_QP_DEST_QPN << 1) - 1))

/* Bits uverbs strips for the type before validation (QPX-07). */
int fp_qp_mask_strip(enum ibv_qp_type type, int mask);
/*
 * ib_modify_qp_is_ok(): 0 if mask is valid for cur -> next on type (after
 * the caller stripped it), EINVAL otherwise. Rules (a)-(c) of section 3b.
 * Types: RC, UC, UD, XRC_SEND, XRC_RECV. Without IBV_QP_STATE in mask the
 * QP stays put: next is taken as cur (RTS->RTS rules etc.), as the kernel does.
 */
int fp_qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state cur,
		       enum ibv_qp_state next, int mask);
/* Required and optional bits (besides IBV_QP_STATE) of a transition;
 * returns false if the transition is not allowed for the type. */
bool fp_qp_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
		      enum ibv_qp_state next, int *req, int *opt);

/* The scripted breaks of these rules (fp_quirks.def): skip a step. */
#define FK_QPM_NO_STRIP		0x1u	/* modify_no_mask_strip: QPX-07 */
#define FK_QPM_SKIP_TABLE	0x2u	/* modify_skip_table: QPX-06 */
#define FK_QPM_NO_ATTR_CHECK	0x4u	/* modify_no_attr_check: QPX-08 ports etc. */

/*
 * Everything before the attributes, in uverbs' order: bits outside the
 * standard ones (EOPNOTSUPP), a state or current state beyond ERR, a
 * current state that is not the QP's (EINVAL), the stripping for the XRC
 * types, the transition table. state: the QP's state now; qp_state and
 * cur_qp_state: the caller's attr members (read only under their bits).
 * On success *mask is the stripped mask and *next the state to go to.
 */
int fk_qp_modify_prepare(enum ibv_qp_type type, uint32_t state, uint32_t qp_state,
			 uint32_t cur_qp_state, unsigned breaks, uint32_t *mask, uint32_t *next);

/* The device limits the attributes are checked against (QPX-08). */
struct fk_qp_limits {
	uint32_t nports;
	uint32_t max_rd_atom, max_dest_rd_atom;		/* 0: unchecked */
	uint16_t pkey_tbl_len[4];
};

static inline bool fk_qp_port_ok(const struct fk_qp_limits *l, unsigned port)
{
	return port >= 1 && port <= l->nports && port <= 4;
}

/*
 * FK_QP_MODIFY_OPS(p, T) defines, for an attribute struct T with the member
 * names of struct ibv_qp_attr:
 *   int  p_check_attrs(limits, port, a, mask): ports, P_Key indices, the
 *        AV's port against the QP's (port: the QP's port now), rd_atomic
 *        limits; 0 or EINVAL (QPX-08);
 *   void p_apply(s, a, mask): copy the members the mask names, one by one
 *        (a may be a 136-byte ibv_qp_attr: rate_limit is never read).
 */
#define FK_QP_MODIFY_OPS(p, T)							\
static inline int p##_check_attrs(const struct fk_qp_limits *l, unsigned qp_port,	\
				  const T *a, uint32_t m)			\
{										\
	unsigned port = (m & IBV_QP_PORT) ? a->port_num : qp_port;		\
										\
	if ((m & IBV_QP_PORT) && !fk_qp_port_ok(l, a->port_num))	/* @rule QPX-08 */ \
		return EINVAL;							\
	if ((m & IBV_QP_AV) && (!fk_qp_port_ok(l, a->ah_attr.port_num) || a->ah_attr.port_num != port)) /* @rule QPX-08 */ \
		return EINVAL;							\
	if ((m & IBV_QP_PKEY_INDEX) && fk_qp_port_ok(l, port) &&		\
	    a->pkey_index >= l->pkey_tbl_len[port - 1])				\
		return EINVAL;							\
	if ((m & IBV_QP_ALT_PATH) &&						\
	    (!fk_qp_port_ok(l, a->alt_port_num) ||				\
	     !fk_qp_port_ok(l, a->alt_ah_attr.port_num) ||			\
	     a->alt_pkey_index >= l->pkey_tbl_len[a->alt_port_num - 1]))	\
		return EINVAL;							\
	if ((m & IBV_QP_MAX_QP_RD_ATOMIC) && l->max_rd_atom &&			\
	    a->max_rd_atomic > l->max_rd_atom)					\
		return EINVAL;							\
	if ((m & IBV_QP_MAX_DEST_RD_ATOMIC) && l->max_dest_rd_atom &&		\
	    a->max_dest_rd_atomic > l->max_dest_rd_atom)			\
		return EINVAL;							\
	return 0;								\
}										\
										\
static inline void p##_apply(T *s, const T *a, uint32_t m)			\
{										\
	if (m & IBV_QP_EN_SQD_ASYNC_NOTIFY)					\
		s->en_sqd_async_notify = a->en_sqd_async_notify;		\
	if (m & IBV_QP_ACCESS_FLAGS)						\
		s->qp_access_flags = a->qp_access_flags;			\
	if (m & IBV_QP_PKEY_INDEX)						\
		s->pkey_index = a->pkey_index;					\
	if (m & IBV_QP_PORT)							\
		s->port_num = a->port_num;					\
	if (m & IBV_QP_QKEY)							\
		s->qkey = a->qkey;						\
	if (m & IBV_QP_AV)							\
		s->ah_attr = a->ah_attr;					\
	if (m & IBV_QP_PATH_MTU)						\
		s->path_mtu = a->path_mtu;					\
	if (m & IBV_QP_TIMEOUT)							\
		s->timeout = a->timeout;					\
	if (m & IBV_QP_RETRY_CNT)						\
		s->retry_cnt = a->retry_cnt;					\
	if (m & IBV_QP_RNR_RETRY)						\
		s->rnr_retry = a->rnr_retry;					\
	if (m & IBV_QP_RQ_PSN)							\
		s->rq_psn = a->rq_psn;						\
	if (m & IBV_QP_MAX_QP_RD_ATOMIC)					\
		s->max_rd_atomic = a->max_rd_atomic;				\
	if (m & IBV_QP_ALT_PATH) {						\
		s->alt_ah_attr = a->alt_ah_attr;				\
		s->alt_pkey_index = a->alt_pkey_index;				\
		s->alt_port_num = a->alt_port_num;				\
		s->alt_timeout = a->alt_timeout;				\
	}									\
	if (m & IBV_QP_MIN_RNR_TIMER)						\
		s->min_rnr_timer = a->min_rnr_timer;				\
	if (m & IBV_QP_SQ_PSN)							\
		s->sq_psn = a->sq_psn;						\
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)					\
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;			\
	if (m & IBV_QP_PATH_MIG_STATE)						\
		s->path_mig_state = a->path_mig_state;				\
	if (m & IBV_QP_DEST_QPN)						\
		s->dest_qp_num = a->dest_qp_num;				\
}

#endif /* FK_QP_MODIFY_H */
