/* SPDX-License-Identifier: MIT */
/*
 * t5802: ibv_open_qp's rules at the fake kernel's client API across real
 * processes, under both lifetime models (OPENQP-04..09): open by number from
 * any process holding the same XRCD; wrong type, wrong XRCD, dead or
 * non-target QP, stale XRCD handle -> EINVAL; each open a distinct handle
 * on one real QP (modify through one, query through another); an opened
 * handle blocks its XRCD handle's close.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "fk_test.h"

#define OPEN(p, h, qpn, type) fkt_do((p), FKT_TGT_OPEN, (h), (qpn), (type), 0, NULL)

/* OPENQP-05/07/08: another process opens by number and drives the QP. */
FKT_BOTH(open_by_number_from_another_process_shares_the_real_qp)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res o = OPEN(&b, xb, q.b, IBV_QPT_XRC_RECV);

	assert_int_equal(o.err, 0);
	assert_int_equal(fkt_ok(&b, FKT_STATE, o.a, 0, NULL).a, IBV_QPS_RESET);
	fkt_ok(&b, FKT_TO_RTS, o.a, 0, NULL);		/* modify through the opener */
	assert_int_equal(fkt_ok(&a, FKT_STATE, q.a, 0, NULL).a, IBV_QPS_RTS);
	assert_int_equal(fkt_ok(&a, FKT_STATE, q.a, 0, NULL).b, 0x1234);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* OPENQP-04/05/06: every way to name the wrong thing is EINVAL. */
FKT_BOTH(wrong_type_wrong_xrcd_dead_or_plain_qp_is_einval)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	uint32_t other = fkt_ok(&b, FKT_XRCD_OPEN, O_CREAT, 0, "g").a;
	uint32_t priv = fkt_ok(&b, FKT_XRCD_OPEN, O_CREAT, 0, "").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res dead = fkt_ok(&a, FKT_TGT_CREATE, xa, 2, NULL);
	uint32_t plain = fkt_ok(&a, FKT_QPN_ALLOC, 0, 0, NULL).a;
	struct fkt_res o;

	assert_int_equal(OPEN(&b, xb, q.b, IBV_QPT_XRC_SEND).err, EINVAL);	/* OPENQP-04 */
	assert_int_equal(OPEN(&b, xb, q.b, IBV_QPT_RC).err, EINVAL);
	assert_int_equal(OPEN(&b, other, q.b, IBV_QPT_XRC_RECV).err, EINVAL);	/* other domain */
	assert_int_equal(OPEN(&b, priv, q.b, IBV_QPT_XRC_RECV).err, EINVAL);
	/* under the open_qp_any_domain quirk the other domain finds it */
	o = fkt_do(&b, FKT_TGT_OPEN, other, q.b, IBV_QPT_XRC_RECV, FK_Q_OPEN_QP_ANY_DOMAIN, NULL);
	assert_int_equal(o.err, 0);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, o.a, 0), 0);
	assert_int_equal(OPEN(&b, xb, plain, IBV_QPT_XRC_RECV).err, EINVAL);	/* not a target */
	assert_int_equal(OPEN(&b, xb, 0xfffff0, IBV_QPT_XRC_RECV).err, EINVAL);	/* no such QP */
	assert_int_equal(FKT_ERR(&a, FKT_TGT_DESTROY, dead.a, 0), 0);
	assert_int_equal(OPEN(&b, xb, dead.b, IBV_QPT_XRC_RECV).err, EINVAL);	/* LIFE-03 */
	assert_int_equal(OPEN(&b, 4242, q.b, IBV_QPT_XRC_RECV).err, EINVAL);	/* OPENQP-06 */
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, priv, 0), 0);
	assert_int_equal(OPEN(&b, priv, q.b, IBV_QPT_XRC_RECV).err, EINVAL);	/* stale handle */
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* OPENQP-07/09: each open is its own handle; the creator may open too. */
FKT_BOTH(each_open_is_a_distinct_handle_and_blocks_close_xrcd)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fkt_proc a = fkt_agent("fake0", life), b = fkt_agent("fake0", life);
	uint32_t xa = fkt_ok(&a, FKT_XRCD_OPEN, O_CREAT, 0, "f").a;
	uint32_t xb = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	uint32_t xb2 = fkt_ok(&b, FKT_XRCD_OPEN, 0, 0, "f").a;
	struct fkt_res q = fkt_ok(&a, FKT_TGT_CREATE, xa, 1, NULL);
	struct fkt_res self = OPEN(&a, xa, q.b, IBV_QPT_XRC_RECV);
	struct fkt_res o1 = OPEN(&b, xb, q.b, IBV_QPT_XRC_RECV);
	struct fkt_res o2 = OPEN(&b, xb, q.b, IBV_QPT_XRC_RECV);
	char *d;

	assert_int_equal(self.err, 0);
	assert_int_equal(o1.err, 0);
	assert_int_equal(o2.err, 0);
	assert_true(self.a != q.a && o1.a != o2.a);
	d = fkt_dump();
	assert_non_null(strstr(d, "usecnt=4 orphan=0"));	/* four handles, one QP */
	free(d);
	/* the handle the opens went through is busy; its sibling is not */
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb, 0), EBUSY);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb2, 0), 0);
	assert_int_equal(FKT_ERR(&a, FKT_TGT_DESTROY, q.a, 0), 0);	/* OPENQP-09 */
	assert_int_equal(fkt_ok(&a, FKT_STATE, self.a, 0, NULL).a, IBV_QPS_RESET);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, o1.a, 0), 0);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb, 0), EBUSY);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, o2.a, 0), 0);
	assert_int_equal(FKT_ERR(&b, FKT_XRCD_CLOSE, xb, 0), 0);
	assert_int_equal(FKT_ERR(&b, FKT_TGT_DESTROY, o2.a, 0), EINVAL);	/* gone */
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_end_clean(mon);
}

/* QPX-06/07 on the shared QP: the table applies to the real QP's state. */
FKT_BOTH(modify_rules_apply_to_the_real_qp)
{
	int life = fkt_life(state);
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", life);
	struct ibv_qp_attr at;
	uint32_t x, id, qpn, h;
	enum ibv_qp_state st;

	assert_int_equal(fk_xrcd_open(c, -1, O_CREAT, 0, &x, &id), 0);
	assert_int_equal(fk_tgt_qp_create(c, x, 0, &qpn, &h), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE, 0, NULL), EINVAL);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	/* missing ACCESS_FLAGS */
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_PORT |
					  IBV_QP_PKEY_INDEX, 0, NULL), EINVAL);
	/* ... unless the table is skipped (quirk) */
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX,
					  FK_Q_MODIFY_SKIP_TABLE, &st), 0);
	assert_int_equal(st, IBV_QPS_INIT);
	at.qp_state = IBV_QPS_RESET;
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE, 0, &st), 0);
	/* bad port, bad P_Key index */
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 2;
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_PORT |
					  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS, 0, NULL), EINVAL);
	at.port_num = 1;
	at.pkey_index = 1;
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_PORT |
					  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS, 0, NULL), EINVAL);
	/* mask bits beyond the standard ones */
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_RATE_LIMIT, 0, NULL),
			 EOPNOTSUPP);
	assert_int_equal(fkt_to_rts(c, h), 0);
	/* QPX-07: RC-style RTR->RTS extras are stripped for a target */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.cur_qp_state = IBV_QPS_RTS;
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_CUR_STATE |
					  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, 0, &st), 0);
	assert_int_equal(fk_tgt_qp_modify(c, h, &at, IBV_QP_STATE | IBV_QP_RETRY_CNT,
					  FK_Q_MODIFY_NO_MASK_STRIP, &st), EINVAL);
	memset(&at, 0, sizeof(at));
	assert_int_equal(fk_tgt_qp_query(c, h, &at), 0);
	assert_int_equal(at.qp_state, IBV_QPS_RTS);
	assert_int_equal(at.sq_psn, 99);
	assert_int_equal(at.rq_psn, 77);
	assert_int_equal(at.ah_attr.dlid, 5);
	assert_int_equal(at.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
	fk_disconnect(c);
	fkt_end_clean(mon);
}

int main(int argc, char **argv)
{
	fkt_setup("t5802");
	return fkt_run(argc, argv);
}
