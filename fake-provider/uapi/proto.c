/* SPDX-License-Identifier: MIT */
/*
 * Names of the protocol's message types, for the daemon's log. The formats
 * themselves are in proto.h, shared with the client library.
 */
#include "fkd.h"

/* Indexed by enum fk_msg_type; keep in step with proto.h. */
static const char *const fk_msg_names[FK_MSG__COUNT] = {
	[FK_MSG_DUMP] = "dump",
	[FK_MSG_EVENT_RAISE] = "event_raise",
	[FK_MSG_HELLO] = "hello",
	[FK_MSG_MR_REREG] = "mr_rereg",
	[FK_MSG_QPN_ALLOC] = "qpn_alloc",
	[FK_MSG_QPN_FREE] = "qpn_free",
	[FK_MSG_RING_SET] = "ring_set",
	[FK_MSG_ROUTE] = "route",
	[FK_MSG_OBJ_CREATE] = "obj_create",
	[FK_MSG_OBJ_DESTROY] = "obj_destroy",

	[FK_MSG_SRQN_ALLOC] = "srqn_alloc",
	[FK_MSG_SRQN_FREE] = "srqn_free",
	[FK_MSG_SRQ_CREATE_XRC] = "srq_create_xrc",
	[FK_MSG_SRQ_DESTROY] = "srq_destroy",
	[FK_MSG_TGT_QP_CREATE] = "tgt_qp_create",
	[FK_MSG_TGT_QP_DESTROY] = "tgt_qp_destroy",
	[FK_MSG_TGT_QP_MODIFY] = "tgt_qp_modify",
	[FK_MSG_TGT_QP_OPEN] = "tgt_qp_open",
	[FK_MSG_TGT_QP_QUERY] = "tgt_qp_query",
	[FK_MSG_XRCD_CLOSE] = "xrcd_close",
	[FK_MSG_XRCD_OPEN] = "xrcd_open",
};

const char *fk_msg_name(uint32_t type)
{
	if (type == FK_MSG_EVENT)
		return "event";
	if (type < FK_MSG__COUNT && fk_msg_names[type])
		return fk_msg_names[type];
	return "unknown";
}
