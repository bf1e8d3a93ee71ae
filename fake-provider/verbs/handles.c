/* SPDX-License-Identifier: MIT */
/*
 * This context's objects by the fake kernel's handle. A verb that uses
 * other objects (a QP's PD, CQs and SRQ; an XRC SRQ's PD, CQ and XRCD; an
 * opened QP's XRCD) reads only their public `handle` members, as libibverbs'
 * ibv_cmd_* helpers do, and the daemon resolves and type-checks those
 * numbers in this context's table (OPENQP-06, SRQX-08 and the kernel's
 * create handlers). Once it has said yes, the plugin finds its own object
 * of that number here: an application pointer of another context whose
 * handle aliases one of ours thus acts on ours, as on a real kernel, and is
 * never dereferenced beyond that member.
 */
#include "fp_verbs.h"

/* The object of that handle; under the handle_fallback quirk, when there
 * is none, the one of the lowest handle, as the daemon then resolves it. */
#define FP_FIND(list, type, member, usable)					\
	do {									\
		struct fp_link *p, *t;						\
		type *low = NULL;						\
										\
		fp_list_for_each_safe(p, t, &ctx->list) {			\
			type *o = fp_container_of(p, type, link);		\
										\
			if (!(usable))						\
				continue;					\
			if (o->member == handle)				\
				return o;					\
			if (!low || o->member < low->member)			\
				low = o;					\
		}								\
		return fp__quirk(FP_Q_HANDLE_FALLBACK) ? low : NULL;		\
	} while (0)

struct fp_pd *fp__pd_by_handle(struct fp_context *ctx, uint32_t handle)
{
	FP_FIND(pds, struct fp_pd, pd.handle, !o->dead);
}

struct fp_cq *fp__cq_by_handle(struct fp_context *ctx, uint32_t handle)
{
	FP_FIND(cqs, struct fp_cq, vcq.cq.handle, true);
}

struct fp_srq *fp__srq_by_handle(struct fp_context *ctx, uint32_t handle)
{
	FP_FIND(srqs, struct fp_srq, vsrq.srq.handle, true);
}

/* A handle closed under the xrcd_close_not_busy quirk is no longer ours to use. */
struct fp_xrcd *fp__xrcd_by_handle(struct fp_context *ctx, uint32_t handle)
{
	FP_FIND(xrcds, struct fp_xrcd, vx.handle, !o->closed);
}

/* The handle member of an application's object pointer; FK_O_NONE for NULL. */
uint32_t fp__xrcd_handle_of(struct ibv_xrcd *ibx)
{
	return ibx ? fp_container_of(ibx, struct verbs_xrcd, xrcd)->handle : FK_O_NONE;
}
