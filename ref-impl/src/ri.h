/* SPDX-License-Identifier: MIT */
/*
 * Cross-file internals of the ibvct reference verbs core (ri__ prefix).
 * Owns: the core-private per-context struct (reached through
 * verbs_context.priv), the registered-driver and device records, the
 * export/symbol-version helpers and the small inline accessors every verb
 * file uses. Nothing here is exported: the map's "local: *" hides it.
 */
#ifndef RI_H
#define RI_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/verbs.h>
#include <infiniband/driver.h>

/* Export with a symbol version set by .symver (dual 1.0/1.1 and PRIVATE). */
#define RI_SYMVER(impl, sym) __asm__(".symver " #impl "," #sym)
#define RI_EXPORT __attribute__((visibility("default")))

#define ri_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ------------------------------------------------------------------ */
/* Devices and drivers (init.c).                                        */

enum ri_drv_kind { RI_DRV_LEGACY, RI_DRV_EXTENDED };

/* One probed device: the core's record around the provider's ibv_device. */
struct ri_device {
	struct ibv_device *dev;		/* provider-allocated */
	enum ri_drv_kind kind;
	int uverbs_index;		/* N of uverbsN */
	int ibdev_index;		/* kernel index, -1 if unknown */
	struct ri_device *next;
};

struct ri_device *ri__device_lookup(struct ibv_device *dev);
const char *ri__sysfs_root(void);
int ri__read_file(const char *path, char *buf, size_t size);
bool ri__fmt(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ */
/* Per-context private part (context.c, compat.c).                      */

/*
 * struct verbs_ex_private is opaque in <infiniband/verbs.h>; the core
 * defines it. Every exported verb dispatches through ops: for an extended
 * provider it is the provider's table overlaid on "not supported" stubs,
 * for a legacy provider it is the compat layer's table.
 */
struct verbs_ex_private {
	struct verbs_context_ops ops;
	struct ri_device *rdev;
	bool legacy;
	struct ibv_context *real_ctx;	/* legacy: the provider's context */
};

static inline struct verbs_context *ri__vctx(struct ibv_context *ctx)
{
	return ri_container_of(ctx, struct verbs_context, context);
}

static inline struct verbs_ex_private *ri__priv(struct ibv_context *ctx)
{
	return ri__vctx(ctx)->priv;
}

static inline const struct verbs_context_ops *ri__ops(struct ibv_context *ctx)
{
	return &ri__priv(ctx)->ops;
}

/* context.c; device.c opens and closes the context. */
struct verbs_context *ri__alloc_vctx(size_t extra);
void ri__free_vctx(struct verbs_context *vctx);
void ri__install_lib_ops(struct verbs_context *vctx);

/* compat.c: legacy providers. */
int ri__compat_init_context(struct verbs_context *vctx);

/* events.c */
enum ri_elem { RI_ELEM_PORT, RI_ELEM_CQ, RI_ELEM_QP, RI_ELEM_SRQ, RI_ELEM_WQ,
	       RI_ELEM_DEVICE };
enum ri_elem ri__event_elem(enum ibv_event_type t);
/* The CQ a completion event names, as the application holds it. */
struct ibv_cq *ri__event_cq(struct ibv_context *ctx, struct ibv_cq *cq);
void ri__wait_events_qp(struct ibv_qp *qp);
void ri__wait_events_srq(struct ibv_srq *srq);
void ri__wait_events_cq(struct ibv_cq *cq);

/* verbs.c, qp.c, cq.c: core entry points the verbs_context slots reach
 * (context.c installs them). */
int ri__query_port_ex(struct ibv_context *ctx, uint8_t port,
		      struct ibv_port_attr *attr, size_t len);
int ri__query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *in,
			struct ibv_device_attr_ex *attr, size_t size);
struct ibv_mw *ri__alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int ri__dealloc_mw(struct ibv_mw *mw);
int ri__bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b);
struct ibv_xrcd *ri__open_xrcd(struct ibv_context *ctx,
			       struct ibv_xrcd_init_attr *attr);
int ri__close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_srq *ri__create_srq_ex(struct ibv_context *ctx,
				  struct ibv_srq_init_attr_ex *attr);
int ri__get_srq_num(struct ibv_srq *srq, uint32_t *num);
struct ibv_qp *ri__create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *ri__open_qp(struct ibv_context *ctx,
			   struct ibv_qp_open_attr *attr);
struct ibv_cq_ex *ri__create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr);
struct ibv_pd *ri__alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr);
struct ibv_td *ri__alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int ri__dealloc_td(struct ibv_td *td);

/* fork.c: fork protection (rdma-core v44.0 libibverbs/memory.c) */
int ri__fork_reg(void *addr, size_t length, unsigned int access, bool *marked);
void ri__fork_reg_done(struct ibv_mr *mr, void *addr, size_t length,
		       unsigned int access, bool marked);
void ri__fork_dereg(struct ibv_mr *mr, void *addr, size_t length);
void ri__fork_env(void);

/* release.c: a provider file the release the core plays can load (0), or
 * -1 and why (rdma-core 44 refuses one that needs 56's private symbols). */
int ri__release_provider_ok(const char *path, char *why, size_t wlen);

/* ------------------------------------------------------------------ */
/* A caller's WR chain posted as a copy in the provider's layout        */
/* (compat.c: UD with the provider's AHs; compat10.c: the 1.0 layout):   */
/* copy[i] stands for the caller's i-th WR.                             */

/* Longer chains are copied on the heap, shorter ones on the stack. */
#define RI_WR_STACK_MAX 64

/* Room for the copies of n WRs of size bytes, or NULL (ENOMEM). A macro,
 * as the stack it takes is its caller's (<alloca.h>, <stdlib.h>). */
#define RI_WR_COPY_ALLOC(n, size)					\
	((n) > RI_WR_STACK_MAX ? calloc((n), (size))			\
			       : alloca(((n) + 1) * (size)))

/*
 * Frees the copies (NULL: there were none) and returns the position in
 * the caller's chain of the WR the provider named in its bad_wr: the
 * index of rbad among the n copies, or 0, the caller's first WR, when it
 * names none of them (nothing was posted, or the provider named none).
 */
static inline size_t ri__wr_copy_end(void *copy, size_t size, size_t n,
				     const void *rbad)
{
	uintptr_t off = (uintptr_t)rbad - (uintptr_t)copy;
	size_t pos = 0;

	if (copy && rbad && off < n * size && off % size == 0)
		pos = off / size;
	if (n > RI_WR_STACK_MAX)
		free(copy);
	return pos;
}

/* Legacy ibv_port_attr prefix written by ibv_query_port@IBVERBS_1.1. */
#define RI_PORT_ATTR_1_1_SIZE offsetof(struct ibv_port_attr, flags)


/* Not in <infiniband/verbs.h>: rdma-core's driver.h declares them. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
int ibv_get_sysfs_path(char *buf, size_t size);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, const char *ibdev_path,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* Nor these: rdma-core's marshall.h declares them. */
struct ib_uverbs_ah_attr;
struct ib_uverbs_qp_attr;
struct ib_user_path_rec;
struct ibv_sa_path_rec;
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);

#endif /* RI_H */
