/* SPDX-License-Identifier: MIT */
/*
 * The provider interface of the ibvct reference verbs core.
 *
 * Two ways for a provider to register, matching the two generations of
 * libibverbs providers:
 *
 *  - legacy (libibverbs <= 1.1.7): ibv_register_driver(). The provider's
 *    init function returns an ibv_device whose alloc_context() allocates a
 *    plain struct ibv_context and fills ctx->ops (struct
 *    ibv_legacy_context_ops below: the 1.1 names of the slots that
 *    <infiniband/verbs.h> spells _compat_*). The core never hands such a
 *    context to the application: the compat layer wraps it (COMPAT-*).
 *
 *  - extended (the 1.1.8 design, 6be16586e): verbs_register_driver(). The
 *    init function returns a struct verbs_device; the core allocates
 *    sizeof(struct verbs_context) + size_of_context, sets abi_compat and sz,
 *    and calls init_context(), which installs the provider's ops with
 *    verbs_set_ops(). The provider's own context struct therefore begins
 *    with a struct verbs_context.
 *
 * Whichever way, the core keeps one complete private ops table per context
 * (struct verbs_context_ops): it is first filled with "not supported" stubs,
 * then overlaid with what the provider gives, so every slot is callable.
 *
 * Division of work on objects returned by create/alloc ops: the provider
 * allocates the object (embedding the public struct, or a verbs_* struct
 * below, first) and fills what only it knows (handle, qp_num, lkey/rkey,
 * cqe, ...). The core fills every field that restates the caller's request
 * or the core's bookkeeping (context, pd, *_context, send_cq, recv_cq, srq,
 * channel, qp_type, state, events_completed, mutex, cond) after the op
 * returns. Providers must not rely on those fields being set during the op.
 * Where rdma-core fills them in its ibv_cmd_* helper instead, the provider
 * calls ours: an opened QP (verbs_cmd_open_qp_resp).
 *
 * Errors: ops that return a pointer return NULL with errno set; ops that
 * return int return 0 or a positive errno. The core checks only what
 * rdma-core's verbs.c checks (next to nothing); the checks of rdma-core's
 * ibv_cmd_* helpers are the provider's to call (command layer, below).
 */
#ifndef IBVCT_INFINIBAND_DRIVER_H
#define IBVCT_INFINIBAND_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Core-side per-object bookkeeping embedded in every verbs_* object.   */
/* Providers never touch it; the core zeroes it after create/alloc.     */

struct verbs_obj_core {
	uint32_t events_reported;	/* async events handed to the app (LIFE-09) */
	uint32_t comp_events_reported;	/* CQ only: completion events handed out */
	void *core_priv;		/* reserved for the core */
};

/* ------------------------------------------------------------------ */
/* Extended objects (as in 1.1.8 driver.h: extension fields after the   */
/* public struct, availability tested by offset against sz).            */

enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE	= 1 << 0,
	VERBS_XRCD_RESERVED	= 1 << 1,
};

struct verbs_xrcd {
	struct ibv_xrcd		xrcd;
	uint32_t		comp_mask;
	uint32_t		handle;
	struct verbs_obj_core	core;
};

enum verbs_srq_mask {
	VERBS_SRQ_TYPE		= 1 << 0,
	VERBS_SRQ_XRCD		= 1 << 1,
	VERBS_SRQ_CQ		= 1 << 2,
	VERBS_SRQ_NUM		= 1 << 3,
	VERBS_SRQ_RESERVED	= 1 << 4,
};

struct verbs_srq {
	struct ibv_srq		srq;
	uint32_t		comp_mask;
	enum ibv_srq_type	srq_type;
	struct verbs_xrcd      *xrcd;
	struct ibv_cq	       *cq;
	uint32_t		srq_num;
	struct verbs_obj_core	core;
};

enum verbs_qp_mask {
	VERBS_QP_XRCD		= 1 << 0,
	VERBS_QP_EX		= 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp		qp;
		struct ibv_qp_ex	qp_ex;
	};
	uint32_t		comp_mask;
	struct verbs_xrcd      *xrcd;
	struct verbs_obj_core	core;
};

/* An extended CQ (ibv_create_cq_ex) is the same object: ibv_cq_ex begins
 * with ibv_cq's members (ibv_cq_ex_to_cq is a cast). */
struct verbs_cq {
	union {
		struct ibv_cq		cq;
		struct ibv_cq_ex	cq_ex;
	};
	struct verbs_obj_core	core;
};

/* True when member fld of type lies inside an object of sz bytes. */
#define vext_field_avail(type, fld, sz) (offsetof(type, fld) < (sz))

/* ------------------------------------------------------------------ */
/* The ops table the core dispatches to. Keep sorted.                   */

struct verbs_context_ops {
	int (*ack_async_event)(struct ibv_async_event *event);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	/* The core sets the parent domain's context after it returns. */
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	/* The core sets the TD's context after it returns. */
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *attr);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	/* Called by ibv_get_cq_event after a CQ event was read. */
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	/* The core fills what ibv_create_cq's fields restate (context,
	 * channel, cq_context, ...) after it returns, as for create_cq. */
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct ibv_mr *mr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	/* Called by ibv_close_device; frees the provider's part of the context. */
	void (*free_context)(struct ibv_context *context);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	/* ibv_import_mr, ibv_import_pd (rdma-core v44.0 libibverbs/verbs.c:353-371:
	 * the op alone). The object of that handle in the context's file, as
	 * the provider's kernel answers it; the core sets the PD's context,
	 * the MR's context and pd after it returns. */
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device)(struct ibv_context *context,
			    struct ibv_device_attr *attr);
	/* attr_size: bytes of *attr the caller owns (the struct grows). */
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_gid)(struct ibv_context *context, uint8_t port_num,
			 int index, union ibv_gid *gid);
	int (*query_pkey)(struct ibv_context *context, uint8_t port_num,
			  int index, __be16 *pkey);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	/* The driver's answer to ibv_query_qp_data_in_order, which the core
	 * hands on or reads as the release it plays does (ibvct-release.def
	 * DATA_IN_ORDER_FLAGS); without it the answer is 0. */
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	/* The slot of the header's inline ibv_query_rt_values_ex, as it is. */
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	/* After ibv_rereg_mr's own checks: 0 or an errno; the provider sets
	 * the keys, the core the pd, addr and length it was asked for. */
	int (*rereg_mr)(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	/* ibv_unimport_mr, ibv_unimport_pd: free the user-space object only. */
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* Install ops: every non-NULL member of ops replaces the core's slot. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* ------------------------------------------------------------------ */
/* Extended registration (1.1.8 design).                                */

struct verbs_device {
	struct ibv_device device;	/* must be first */
	size_t sz;			/* sizeof(struct verbs_device) of the provider */
	size_t size_of_context;		/* bytes after struct verbs_context */
	/* Fill the context (cmd_fd, async_fd, num_comp_vectors, private
	 * part) and call verbs_set_ops(). Returns 0 or a positive errno. */
	int (*init_context)(struct verbs_device *device,
			    struct ibv_context *ctx, int cmd_fd);
	void (*uninit_context)(struct verbs_device *device,
			       struct ibv_context *ctx);
	/* Called when the core drops the device (process exit or list
	 * rebuild); frees the verbs_device. May be NULL. */
	void (*uninit_device)(struct verbs_device *device);
	/*
	 * ibv_import_device: fill ctx as init_context does, for the file
	 * cmd_fd (the provider's own: ibvct's devices have no character
	 * device, so the core cannot tell whose file it is and asks each
	 * device in turn). 0, ENODEV when cmd_fd is another device's file,
	 * EINVAL when it is no device's, else a positive errno. Read only
	 * when sz covers it (vext_field_avail); NULL: the driver cannot
	 * import (rdma-core v44.0 libibverbs/device.c:404, EOPNOTSUPP). The
	 * slot of rdma-core's verbs_device_ops.import_context.
	 */
	int (*import_context)(struct verbs_device *device,
			      struct ibv_context *ctx, int cmd_fd);
};

typedef struct verbs_device *(*verbs_driver_init_func)(const char *uverbs_sys_path,
							int abi_version);
void verbs_register_driver(const char *name, verbs_driver_init_func init_func);

/* ------------------------------------------------------------------ */
/* Legacy registration (libibverbs 1.1.x).                              */

/* The 1.1 names of struct ibv_device._ops (verbs.h: _dummy1/_dummy2). */
struct ibv_legacy_device_ops {
	struct ibv_context *(*alloc_context)(struct ibv_device *device,
					     int cmd_fd);
	void (*free_context)(struct ibv_context *context);
};

/*
 * The 1.1 names and prototypes of struct ibv_context_ops: same layout as the
 * struct in verbs.h (checked by a static assertion in the core).
 */
struct ibv_legacy_context_ops {
	int (*query_device)(struct ibv_context *context,
			    struct ibv_device_attr *device_attr);
	/* Writes the 1.1 ibv_port_attr prefix (up to link_layer). */
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 int access);
	int (*rereg_mr)(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*dealloc_mw)(struct ibv_mw *mw);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	void (*cq_event)(struct ibv_cq *cq);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*async_event)(struct ibv_async_event *event);
};

static inline struct ibv_legacy_device_ops *
ibv_legacy_device_ops(struct ibv_device *dev)
{
	return (struct ibv_legacy_device_ops *)(void *)&dev->_ops;
}

static inline struct ibv_legacy_context_ops *
ibv_legacy_context_ops(struct ibv_context *ctx)
{
	return (struct ibv_legacy_context_ops *)(void *)&ctx->ops;
}

typedef struct ibv_device *(*ibv_driver_init_func)(const char *uverbs_sys_path,
						    int abi_version);
void ibv_register_driver(const char *name, ibv_driver_init_func init_func);

/* ------------------------------------------------------------------ */
/* Event records, the uverbs way.                                       */

/*
 * A provider reports an asynchronous event by writing one of these to the
 * write end of the pipe whose read end it put in ctx->async_fd; the core's
 * ibv_get_async_event() reads it. element is the provider's object pointer
 * (cq, qp, srq, wq) or the port number, as the kernel's user_handle is.
 */
struct verbs_async_event_desc {
	uint64_t element;
	uint32_t event_type;	/* enum ibv_event_type */
	uint32_t reserved;
};

/*
 * Report a completion event on cq (the provider's CQ object) to the
 * completion channel it was created with. Called by the provider when a
 * completion arrives on an armed CQ; safe from any thread. Returns 0 or errno.
 */
int verbs_comp_channel_notify(struct ibv_comp_channel *channel,
			      struct ibv_cq *cq);

/* ------------------------------------------------------------------ */
/* Command layer (IBVCT_PRIVATE_2).                                     */

/*
 * The checks rdma-core's libibverbs makes in its ibv_cmd_* helpers, for a
 * provider to call from its op before it talks to the kernel, as real
 * providers call ibv_cmd_open_xrcd() and the others. The core's entry
 * points do not make these checks: a provider that skips the call skips
 * the rules. Each returns 0 or a positive errno (setting errno where
 * rdma-core v44 does). verbs_cmd_create_qp_ex() and verbs_cmd_create_qp()
 * also zero the receive caps of an XRC_SEND request, as the command does.
 */
int verbs_cmd_open_xrcd(struct ibv_context *ctx,
			const struct ibv_xrcd_init_attr *attr);
int verbs_cmd_create_srq_ex(struct ibv_context *ctx,
			    const struct ibv_srq_init_attr_ex *attr);
int verbs_cmd_create_qp_ex(struct ibv_context *ctx,
			   struct ibv_qp_init_attr_ex *attr);
/* ibv_cmd_create_qp_ex2: a wider comp_mask (CREATE_FLAGS, MAX_TSO_HEADER,
 * IND_TABLE, RX_HASH), the command rxe always sends and mlx5 and mlx4 send
 * when such a bit is set (IBVCT_PRIVATE_5). */
int verbs_cmd_create_qp_ex2(struct ibv_context *ctx,
			    struct ibv_qp_init_attr_ex *attr);
int verbs_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int verbs_cmd_open_qp(struct ibv_context *ctx,
		      const struct ibv_qp_open_attr *attr);

/*
 * What rdma-core's ibv_cmd_open_qp and ibv_cmd_destroy_qp do once the
 * kernel answered (IBVCT_PRIVATE_3): the opened QP's fields from the
 * request, state UNKNOWN, the XRCD if vqp_size has room for it
 * (OPENQP-07); the destroy's wait until the application has acknowledged
 * the async events it was handed for the QP (LIFE-09), to be called after
 * the kernel destroyed it and before the provider frees it.
 */
void verbs_cmd_open_qp_resp(struct ibv_context *ctx, struct verbs_qp *vqp,
			    size_t vqp_size, const struct ibv_qp_open_attr *attr,
			    uint32_t handle);
void verbs_cmd_destroy_qp(struct ibv_qp *qp);
/* The same for an SRQ and a CQ (its completion events too). */
void verbs_cmd_destroy_srq(struct ibv_srq *srq);
void verbs_cmd_destroy_cq(struct ibv_cq *cq);

/*
 * What ibv_cmd_query_device_any does with the kernel's answer
 * (IBVCT_PRIVATE_4): resp is the full answer (the driver's extended
 * fields included); the input and size checks, the caller's attr_size bytes
 * zeroed, each field copied only where the caller's struct holds all of it,
 * phys_port_cnt_ex from the device's sysfs ports (DEVX-01..03). 0 or an
 * errno.
 */
int verbs_cmd_query_device_ex(struct ibv_context *ctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size,
			      const struct ibv_device_attr_ex *resp);

/* ------------------------------------------------------------------ */
/* The release the core plays (IBVCT_PRIVATE_6).                        */

/* The rows of ibvct-release.def: what differs between Debian 12 (rdma-core
 * 44, Linux 6.1) and Debian 13 (rdma-core 56.1, Linux 6.12). */
enum ibvct_release_row {
#define IBVCT_RELEASE_ROW(name, layer, on_44, on_56, source) IBVCT_REL_##name,
#include <infiniband/ibvct-release.def>
#undef IBVCT_RELEASE_ROW
	IBVCT_REL_NROWS
};

/* 44 or 56: the rdma-core release (and with it the Debian release and its
 * kernel) the core plays, one for the whole process. */
int verbs_ibvct_release(void);

/* Whether the row plays Debian 13's side. The row only names the
 * difference the caller implements, so that each use is found by name. */
static inline int ibvct_release_is_56(enum ibvct_release_row row)
{
	(void)row;
	return verbs_ibvct_release() >= 56;
}

#ifdef __cplusplus
}
#endif

#endif /* IBVCT_INFINIBAND_DRIVER_H */
