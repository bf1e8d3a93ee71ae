/* SPDX-License-Identifier: MIT */
/*
 * t5002: the modify-QP table (uapi/qp_modify.c) against spec
 * section 3b, restated here independently: QPX-06 required/optional bits
 * per transition and type, rules (a)-(c), RESET/ERR from anywhere, a mask
 * without STATE as a cur->cur change, and the QPX-07 uverbs mask strip.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "qp_modify.h"
#include "tr.h"

struct tr {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	int req, opt;
};

#define R(t, c, n, rq, op) { IBV_QPT_##t, IBV_QPS_##c, IBV_QPS_##n, rq, op }
#define PKEY IBV_QP_PKEY_INDEX
#define ACC IBV_QP_ACCESS_FLAGS
#define RC_RTS_OPT (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | ACC | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)
#define INI_RTS_OPT (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | ACC | IBV_QP_PATH_MIG_STATE)
#define RC_RTR_REQ (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define UC_RTR_REQ (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTR_OPT (IBV_QP_ALT_PATH | ACC | PKEY)
#define RC_RTS_REQ (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
		    IBV_QP_MAX_QP_RD_ATOMIC)
#define RC_SQD_OPT (IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | \
		    IBV_QP_ALT_PATH | ACC | PKEY | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)

static const struct tr table[] = {
	R(RC, RESET, INIT, PKEY | IBV_QP_PORT | ACC, 0),
	R(RC, INIT, INIT, 0, PKEY | IBV_QP_PORT | ACC),
	R(RC, INIT, RTR, RC_RTR_REQ, RTR_OPT),
	R(RC, RTR, RTS, RC_RTS_REQ, RC_RTS_OPT),
	R(RC, RTS, RTS, 0, RC_RTS_OPT),
	R(RC, RTS, SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
	R(RC, SQD, RTS, 0, RC_RTS_OPT),
	R(RC, SQD, SQD, 0, RC_SQD_OPT),

	R(UC, RESET, INIT, PKEY | IBV_QP_PORT | ACC, 0),
	R(UC, INIT, INIT, 0, PKEY | IBV_QP_PORT | ACC),
	R(UC, INIT, RTR, UC_RTR_REQ, RTR_OPT),
	R(UC, RTR, RTS, IBV_QP_SQ_PSN, INI_RTS_OPT),
	R(UC, RTS, RTS, 0, INI_RTS_OPT),
	R(UC, RTS, SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
	R(UC, SQD, RTS, 0, INI_RTS_OPT),
	R(UC, SQD, SQD, 0, IBV_QP_AV | IBV_QP_ALT_PATH | ACC | PKEY | IBV_QP_PATH_MIG_STATE),
	R(UC, SQE, RTS, 0, IBV_QP_CUR_STATE | ACC),

	R(UD, RESET, INIT, PKEY | IBV_QP_PORT | IBV_QP_QKEY, 0),
	R(UD, INIT, INIT, 0, PKEY | IBV_QP_PORT | IBV_QP_QKEY),
	R(UD, INIT, RTR, 0, PKEY | IBV_QP_QKEY),
	R(UD, RTR, RTS, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY),
	R(UD, RTS, RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY),
	R(UD, RTS, SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
	R(UD, SQD, RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY),
	R(UD, SQD, SQD, 0, PKEY | IBV_QP_QKEY),
	R(UD, SQE, RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY),

	R(XRC_SEND, RESET, INIT, PKEY | IBV_QP_PORT | ACC, 0),
	R(XRC_SEND, INIT, INIT, 0, PKEY | IBV_QP_PORT | ACC),
	R(XRC_SEND, INIT, RTR, UC_RTR_REQ, RTR_OPT),
	R(XRC_SEND, RTR, RTS, RC_RTS_REQ, INI_RTS_OPT),
	R(XRC_SEND, RTS, RTS, 0, INI_RTS_OPT),
	R(XRC_SEND, RTS, SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
	R(XRC_SEND, SQD, RTS, 0, INI_RTS_OPT),
	R(XRC_SEND, SQD, SQD, 0, RC_SQD_OPT & ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)),

	R(XRC_RECV, RESET, INIT, PKEY | IBV_QP_PORT | ACC, 0),
	R(XRC_RECV, INIT, INIT, 0, PKEY | IBV_QP_PORT | ACC),
	R(XRC_RECV, INIT, RTR, RC_RTR_REQ, RTR_OPT),
	R(XRC_RECV, RTR, RTS, IBV_QP_TIMEOUT | IBV_QP_SQ_PSN, RC_RTS_OPT),
	R(XRC_RECV, RTS, RTS, 0, RC_RTS_OPT),
	R(XRC_RECV, RTS, SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
	R(XRC_RECV, SQD, RTS, 0, RC_RTS_OPT),
	R(XRC_RECV, SQD, SQD, 0,
	  RC_SQD_OPT & ~(IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)),
};
#define NROWS (sizeof(table) / sizeof(table[0]))

static const enum ibv_qp_type types[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
};

/* every attribute bit uverbs knows (IB_QP_ATTR_STANDARD_BITS as libibverbs exposes them) */
static const int all_bits[] = {
	IBV_QP_STATE, IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_ACCESS_FLAGS,
	IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_QKEY, IBV_QP_AV, IBV_QP_PATH_MTU,
	IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN,
	IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_ALT_PATH, IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN,
	IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PATH_MIG_STATE, IBV_QP_CAP, IBV_QP_DEST_QPN,
	IBV_QP_RATE_LIMIT,
};
#define NBITS (sizeof(all_bits) / sizeof(all_bits[0]))

static const struct tr *find(enum ibv_qp_type t, enum ibv_qp_state c, enum ibv_qp_state n)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (table[i].type == t && table[i].cur == c && table[i].next == n)
			return &table[i];
	return NULL;
}

#define CHECK(want, t, c, n, m) do {						\
		int _r = fp_qp_modify_check(t, c, n, m);			\
		if (_r != (want))						\
			fail_msg("type %d %d->%d mask 0x%x: got %d, want %d",	\
				 t, c, n, (unsigned)(m), _r, want);		\
	} while (0)

static void rows_of(enum ibv_qp_type type)
{
	size_t i, b, k;
	int req, opt, n = 0;

	for (i = 0; i < NROWS; i++) {
		const struct tr *t = &table[i];
		int exact = IBV_QP_STATE | t->req;

		if (t->type != type)
			continue;
		n++;
		assert_true(fp_qp_transition(type, t->cur, t->next, &req, &opt));
		assert_int_equal(req, t->req);
		assert_int_equal(opt, t->opt);
		CHECK(0, type, t->cur, t->next, exact);			/* the exact mask */
		CHECK(0, type, t->cur, t->next, exact | t->opt);	/* all optional bits */
		for (b = 0; b < NBITS; b++) {
			int bit = all_bits[b];

			if (t->req & bit)		/* (a): each required bit is required */
				CHECK(EINVAL, type, t->cur, t->next, exact & ~bit);
			else if (t->opt & bit)		/* each optional bit alone */
				CHECK(0, type, t->cur, t->next, exact | bit);
			else if (bit != IBV_QP_STATE)	/* (b): anything else */
				CHECK(EINVAL, type, t->cur, t->next, exact | bit);
		}
		for (k = 0; k < 32; k++)	/* bits nobody defines */
			if (!(((1u << k) & (t->req | t->opt | IBV_QP_STATE))))
				CHECK(EINVAL, type, t->cur, t->next, exact | (int)(1u << k));
		/* a cur->cur row also serves a mask without STATE (no state change) */
		if (t->cur == t->next) {
			CHECK(0, type, t->cur, IBV_QPS_ERR, t->opt);
			CHECK(0, type, t->cur, t->cur, 0);
		}
	}
	assert_true(n > 0);
}

/* QPX-06 */
TR_TEST(rc_transitions_follow_qpx06) { rows_of(IBV_QPT_RC); }
TR_TEST(uc_transitions_follow_ib_table) { rows_of(IBV_QPT_UC); }
TR_TEST(ud_transitions_follow_ib_table) { rows_of(IBV_QPT_UD); }
TR_TEST(xrc_send_transitions_follow_qpx06) { rows_of(IBV_QPT_XRC_SEND); }
TR_TEST(xrc_recv_transitions_follow_qpx06) { rows_of(IBV_QPT_XRC_RECV); }

TR_TEST(to_reset_and_err_from_every_state_need_only_state)
{
	size_t t, b;
	int c, req, opt;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		/* but RESET -> ERR: the kernel's qp_state_table has no such row */
		assert_false(fp_qp_transition(types[t], IBV_QPS_RESET, IBV_QPS_ERR, &req, &opt));
		CHECK(EINVAL, types[t], IBV_QPS_RESET, IBV_QPS_ERR, IBV_QP_STATE);
		for (c = IBV_QPS_RESET; c <= IBV_QPS_ERR; c++) {
			assert_true(fp_qp_transition(types[t], c, IBV_QPS_RESET, &req, &opt));
			assert_int_equal(req | opt, 0);
			CHECK(0, types[t], c, IBV_QPS_RESET, IBV_QP_STATE);
			for (b = 1; b < NBITS; b++)
				CHECK(EINVAL, types[t], c, IBV_QPS_RESET, IBV_QP_STATE | all_bits[b]);
			if (c == IBV_QPS_RESET)
				continue;
			assert_true(fp_qp_transition(types[t], c, IBV_QPS_ERR, &req, &opt));
			assert_int_equal(req | opt, 0);
			CHECK(0, types[t], c, IBV_QPS_ERR, IBV_QP_STATE);
			for (b = 1; b < NBITS; b++)
				CHECK(EINVAL, types[t], c, IBV_QPS_ERR, IBV_QP_STATE | all_bits[b]);
		}
	}
}

TR_TEST(transitions_not_in_table_fail_einval)
{
	size_t t, b;
	int c, n, req, opt, every = 0;

	for (b = 0; b < NBITS; b++)
		every |= all_bits[b];
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (c = IBV_QPS_RESET; c <= IBV_QPS_ERR; c++) {
			for (n = IBV_QPS_INIT; n < IBV_QPS_ERR; n++) {
				if (find(types[t], c, n))
					continue;
				if (fp_qp_transition(types[t], c, n, &req, &opt))
					fail_msg("type %d %d->%d allowed", types[t], c, n);
				CHECK(EINVAL, types[t], c, n, IBV_QP_STATE);
				CHECK(EINVAL, types[t], c, n, every);
			}
		}
	}
	/* e.g. the ones people try: RESET->RTR, INIT->RTS, RC SQE->RTS, RTR->RTR */
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_RTR, IBV_QP_STATE | RC_RTR_REQ);
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_SQE, IBV_QPS_RTS, IBV_QP_STATE);
	CHECK(EINVAL, IBV_QPT_XRC_SEND, IBV_QPS_SQE, IBV_QPS_RTS, IBV_QP_STATE);
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTR, ACC);
}

TR_TEST(unknown_types_and_states_fail)
{
	int req, opt;

	assert_false(fp_qp_transition(IBV_QPT_RAW_PACKET, IBV_QPS_RESET, IBV_QPS_INIT, &req, &opt));
	assert_false(fp_qp_transition(IBV_QPT_DRIVER, IBV_QPS_RESET, IBV_QPS_ERR, &req, &opt));
	assert_false(fp_qp_transition(0, IBV_QPS_RESET, IBV_QPS_ERR, &req, &opt));
	assert_false(fp_qp_transition(IBV_QPT_RC, IBV_QPS_UNKNOWN, IBV_QPS_ERR, &req, &opt));
	assert_false(fp_qp_transition(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_UNKNOWN, &req, &opt));
	CHECK(EINVAL, IBV_QPT_RAW_PACKET, IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PORT);
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_UNKNOWN, IBV_QP_STATE);
	CHECK(EINVAL, IBV_QPT_RC, 42, IBV_QPS_ERR, IBV_QP_STATE);
}

/* (c) */
TR_TEST(cur_state_bit_only_from_rtr_rts_sqd_sqe)
{
	size_t t;
	int c;

	CHECK(0, IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_STATE | RC_RTS_REQ | IBV_QP_CUR_STATE);
	CHECK(0, IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RTS, IBV_QP_CUR_STATE);
	CHECK(0, IBV_QPT_RC, IBV_QPS_SQD, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_CUR_STATE);
	CHECK(0, IBV_QPT_UD, IBV_QPS_SQE, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_CUR_STATE);
	CHECK(0, IBV_QPT_UC, IBV_QPS_SQE, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_CUR_STATE);
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (c = IBV_QPS_RESET; c <= IBV_QPS_ERR; c++) {
			if (c == IBV_QPS_RTR || c == IBV_QPS_RTS || c == IBV_QPS_SQD || c == IBV_QPS_SQE)
				continue;
			/* even where CUR_STATE were optional, these states refuse it */
			CHECK(EINVAL, types[t], c, IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_CUR_STATE |
			      PKEY | IBV_QP_PORT | ACC | IBV_QP_QKEY);
			CHECK(EINVAL, types[t], c, c, IBV_QP_CUR_STATE);
		}
	}
}

TR_TEST(missing_state_bit_means_cur_to_cur)
{
	/* next is ignored without IBV_QP_STATE */
	CHECK(0, IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RESET, ACC | IBV_QP_MIN_RNR_TIMER);
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RESET, IBV_QP_PORT);
	CHECK(0, IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_QKEY);
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, RC_RTR_REQ);	/* INIT->INIT rules */
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS, RC_RTS_REQ);	/* no RTR->RTR */
	CHECK(0, IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, 0);			/* RESET->RESET */
	CHECK(0, IBV_QPT_RC, IBV_QPS_ERR, IBV_QPS_RTS, 0);			/* ERR->ERR */
	CHECK(EINVAL, IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, PKEY);
}

/* QPX-07 */
TR_TEST(strip_removes_only_the_xrc_meaningless_bits)
{
	int every = 0;
	size_t b;

	for (b = 0; b < NBITS; b++)
		every |= all_bits[b];
	assert_int_equal(fp_qp_mask_strip(IBV_QPT_XRC_SEND, every),
			 every & ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	assert_int_equal(fp_qp_mask_strip(IBV_QPT_XRC_RECV, every),
			 every & ~(IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY));
	assert_int_equal(fp_qp_mask_strip(IBV_QPT_RC, every), every);
	assert_int_equal(fp_qp_mask_strip(IBV_QPT_UC, every), every);
	assert_int_equal(fp_qp_mask_strip(IBV_QPT_UD, every), every);
	assert_int_equal(fp_qp_mask_strip(IBV_QPT_XRC_SEND, IBV_QP_STATE), IBV_QP_STATE);
}

TR_TEST(rc_style_masks_accepted_for_xrc_after_strip_qpx07)
{
	static const struct { enum ibv_qp_state c, n; int mask; } rc[] = {
		{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_STATE | PKEY | IBV_QP_PORT | ACC },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_STATE | RC_RTR_REQ },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_STATE | RC_RTS_REQ },
		{ IBV_QPS_RTS, IBV_QPS_RTS, RC_RTS_OPT },
		{ IBV_QPS_SQD, IBV_QPS_SQD, RC_SQD_OPT },
	};
	size_t i;

	for (i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		CHECK(0, IBV_QPT_RC, rc[i].c, rc[i].n, rc[i].mask);
		CHECK(0, IBV_QPT_XRC_SEND, rc[i].c, rc[i].n,
		      fp_qp_mask_strip(IBV_QPT_XRC_SEND, rc[i].mask));
		CHECK(0, IBV_QPT_XRC_RECV, rc[i].c, rc[i].n,
		      fp_qp_mask_strip(IBV_QPT_XRC_RECV, rc[i].mask));
	}
	/* without the strip (quirk modify_no_mask_strip) they are refused */
	CHECK(EINVAL, IBV_QPT_XRC_SEND, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_STATE | RC_RTR_REQ);
	CHECK(EINVAL, IBV_QPT_XRC_RECV, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_STATE | RC_RTS_REQ);
	/* the strip never invents a required bit */
	CHECK(EINVAL, IBV_QPT_XRC_RECV, IBV_QPS_RTR, IBV_QPS_RTS,
	      fp_qp_mask_strip(IBV_QPT_XRC_RECV, IBV_QP_STATE | RC_RTS_REQ) & ~IBV_QP_TIMEOUT);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
