/* SPDX-License-Identifier: MIT */
/*
 * Fault injection and event triggers, SQLite test_syscall.c style: one row
 * per op (script name from fp_ops.def, default errno here) and one decision,
 * fp_fault_check(). Counters live in the script struct and are per process;
 * they are bumped with atomics so any thread may call in.
 */
#include <errno.h>
#include <string.h>

#include "fp_script.h"

struct fp_script *fp__script;

static const char *const fp_op_names[FP_OP__COUNT] = {
#define FP_OP(id, name) [FP_OP_##id] = name,
#include "fp_ops.def"
#undef FP_OP
};

/*
 * The errno a fault fails with when the script names none: ENOMEM for what
 * allocates (create/alloc/reg/open), EINVAL for modify/query, EIO for the
 * rest. One row per op, sorted like fp_ops.def; t5003 checks none is left 0.
 */
static const int fp_op_default_err[FP_OP__COUNT] = {
	[FP_OP_ALLOC_MW]	= ENOMEM,
	[FP_OP_ALLOC_PARENT_DOMAIN] = ENOMEM,
	[FP_OP_ALLOC_PD]	= ENOMEM,
	[FP_OP_ALLOC_TD]	= ENOMEM,
	[FP_OP_ATTACH_MCAST]	= EIO,
	[FP_OP_BIND_MW]		= EIO,
	[FP_OP_CLOSE_XRCD]	= EIO,
	[FP_OP_CREATE_AH]	= ENOMEM,
	[FP_OP_CREATE_CQ]	= ENOMEM,
	[FP_OP_CREATE_QP]	= ENOMEM,
	[FP_OP_CREATE_QP_EX]	= ENOMEM,
	[FP_OP_CREATE_SRQ]	= ENOMEM,
	[FP_OP_CREATE_SRQ_EX]	= ENOMEM,
	[FP_OP_DEALLOC_MW]	= EIO,
	[FP_OP_DEALLOC_PD]	= EIO,
	[FP_OP_DEALLOC_TD]	= EIO,
	[FP_OP_DEREG_MR]	= EIO,
	[FP_OP_DESTROY_AH]	= EIO,
	[FP_OP_DESTROY_CQ]	= EIO,
	[FP_OP_DESTROY_QP]	= EIO,
	[FP_OP_DESTROY_SRQ]	= EIO,
	[FP_OP_DETACH_MCAST]	= EIO,
	[FP_OP_GET_SRQ_NUM]	= EINVAL,	/* a query */
	[FP_OP_MODIFY_QP]	= EINVAL,
	[FP_OP_MODIFY_SRQ]	= EINVAL,
	[FP_OP_OPEN_DEVICE]	= ENOMEM,
	[FP_OP_OPEN_QP]		= ENOMEM,
	[FP_OP_OPEN_XRCD]	= ENOMEM,
	[FP_OP_POLL_CQ]		= EIO,
	[FP_OP_POST_RECV]	= EIO,
	[FP_OP_POST_SEND]	= EIO,
	[FP_OP_POST_SRQ_RECV]	= EIO,
	[FP_OP_QUERY_DEVICE]	= EINVAL,
	[FP_OP_QUERY_GID]	= EINVAL,
	[FP_OP_QUERY_PKEY]	= EINVAL,
	[FP_OP_QUERY_PORT]	= EINVAL,
	[FP_OP_QUERY_QP]	= EINVAL,
	[FP_OP_QUERY_RT_VALUES]	= EINVAL,
	[FP_OP_QUERY_SRQ]	= EINVAL,
	[FP_OP_REG_MR]		= ENOMEM,
	[FP_OP_REQ_NOTIFY_CQ]	= EIO,
	[FP_OP_REREG_MR]	= ENOMEM,
	[FP_OP_RESIZE_CQ]	= EIO,
};

static const char *const fp_quirk_names[FP_Q__COUNT] = {
#define FP_QUIRK(id, name, where, bit, what) [FP_Q_##id] = name,
#include "fp_quirks.def"
#undef FP_QUIRK
};

const char *fp_op_name(enum fp_op op)
{
	if ((unsigned)op >= FP_OP__COUNT)
		return NULL;
	return fp_op_names[op];
}

int fp_op_from_name(const char *name)
{
	int i;

	for (i = 0; i < FP_OP__COUNT; i++)
		if (fp_op_names[i] && !strcmp(fp_op_names[i], name))
			return i;
	return -1;
}

int fp_op_default_errno(enum fp_op op)
{
	if ((unsigned)op >= FP_OP__COUNT || !fp_op_default_err[op])
		return EIO;	/* an op added to fp_ops.def without a row */
	return fp_op_default_err[op];
}

const char *fp_quirk_name(enum fp_quirk q)
{
	if ((unsigned)q >= FP_Q__COUNT)
		return NULL;
	return fp_quirk_names[q];
}

int fp_quirk_from_name(const char *name)
{
	int i;

	for (i = 0; i < FP_Q__COUNT; i++)
		if (fp_quirk_names[i] && !strcmp(fp_quirk_names[i], name))
			return i;
	return -1;
}

int fp_fault_check(struct fp_script *s, enum fp_op op)
{
	unsigned long n;
	int i, err = 0;

	if (!s)
		return 0;
	/* every rule on op counts the call, so two rules never disagree on N */
	for (i = 0; i < s->nfaults; i++) {
		struct fp_fault *f = &s->fault[i];

		if (f->op != op)
			continue;
		n = __atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
		if (!err && (n == f->nth || (f->from && n > f->nth)))
			err = f->err ? f->err : fp_op_default_errno(op);
	}
	return err;
}

int fp_events_due(struct fp_script *s, enum fp_op op,
		  struct fp_event_rule **out, int max)
{
	unsigned long n;
	int i, k = 0;

	if (!s)
		return 0;
	for (i = 0; i < s->nevents; i++) {
		struct fp_event_rule *r = &s->event[i];

		if (r->op != op)
			continue;
		n = __atomic_add_fetch(&r->calls, 1, __ATOMIC_RELAXED);
		if (n != r->nth || k >= max)
			continue;
		/* fire once even if a counter were reset under us */
		if (!__atomic_exchange_n(&r->fired, true, __ATOMIC_ACQ_REL))
			out[k++] = r;
	}
	return k;
}
