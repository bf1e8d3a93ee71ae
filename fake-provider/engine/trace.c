/* SPDX-License-Identifier: MIT */
/*
 * The data path's trace (`trace FILE states`, fp_engine.h): the names of
 * packet kinds and answers, and the path of states a run of the requester,
 * the responder or the completer writes. A leaf: it calls nothing of the
 * engine, so that every layer may name what it traces.
 */
#include <stdio.h>

#include "fp_engine.h"

#define FE_NAME(n)	#n,
static const char *const fe_pkt_op_names[] = { FP_PKT_OPS(FE_NAME) };
static const char *const fe_ack_names[] = { FP_ACKS(FE_NAME) };

const char *fe_pkt_op_name(enum fp_pkt_op op)
{
	return (unsigned)op < sizeof(fe_pkt_op_names) / sizeof(fe_pkt_op_names[0])
	       ? fe_pkt_op_names[op] : "?";
}

const char *fe_ack_name(enum fp_ack a)
{
	return (unsigned)a < sizeof(fe_ack_names) / sizeof(fe_ack_names[0]) ? fe_ack_names[a] : "?";
}

void fe_path_add(struct fe_path *t, const char *state)
{
	int k = snprintf(t->buf + t->n, sizeof(t->buf) - t->n, " %s", state);

	if (k > 0 && t->n + (size_t)k < sizeof(t->buf))
		t->n += (size_t)k;
}
