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
/* The CQ a completion event names, as the application holds it. */
struct ibv_cq *ri__event_cq(struct ibv_context *ctx, struct ibv_cq *cq);
void ri__wait_events_qp(struct ibv_qp *qp);
void ri__wait_events_srq(struct ibv_srq *srq);
void ri__wait_events_cq(struct ibv_cq *cq);

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

#endif /* RI_H */
