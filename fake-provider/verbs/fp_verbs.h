/* SPDX-License-Identifier: MIT */
/*
 * The fake provider's verbs layer (libibvct-fake.so): the objects ref-impl
 * hands to applications (each embeds its public/verbs_* struct first, and
 * its engine part), the per-context state, the ops the tables in
 * provider.c point to, and the driver profiles. It sits on the fake HCA
 * engine (../engine/fp_engine.h) and the fake kernel daemon's client: one
 * daemon connection per context, its uverbs fd.
 *
 * Locking: every op holds the engine's plugin lock (fe_lock) for its whole
 * run (fp__op_begin .. fp__op_end).
 */
#ifndef FP_VERBS_H
#define FP_VERBS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/driver.h>
#include "fp_engine.h"
#include "fe_mem.h"
#include "fk_client.h"

/* ---- limits of the fake device (beyond what the script sets) ----------- */
#define FP_NUM_COMP_VECTORS	2

/* ---- objects ------------------------------------------------------------ */
struct fp_device {
	struct verbs_device vdev;	/* must be first: legacy mode uses vdev.device only */
	int devidx;			/* index into fp__script->dev[] */
};

/*
 * mlx5's BlueFlame registers for QPs (fp_prof_qp_uar_get): the dedicated
 * ones a context has made, two to a mapped UAR page, and the free ones in
 * the order mlx5's list gives them out. Unused by the other profiles.
 */
#define FP_PROF_DED_BFREGS	4
struct fp_prof_bfregs {
	int8_t free[FP_PROF_DED_BFREGS];	/* a ring: free[(head + i) % N] */
	unsigned head, n, made;
};

struct fp_context {
	struct verbs_context vctx;	/* must be first; legacy mode uses vctx.context */
	struct fp_device *dev;
	const struct fp_dev_spec *spec;
	struct fe_dev *hca;		/* the engine's device */
	int async_wfd;			/* write end of the async event pipe */
	struct fk_client *fk;		/* the fake kernel connection (a uverbs fd) */
	struct fk_qp_limits lim;	/* the spec's ports and limits, as the daemon has them */
	/* Every live object, for cleanup at close (the kernel does that on
	 * uverbs fd close) and for events with no explicit subject. */
	struct fp_link pds, mrs, cqs, srqs, qps, ahs, xrcds, tds, pdoms, mws;
	struct fp_prof_bfregs bfregs;	/* mlx5 only */
	/* The fake kernel's file this context acts on (its cmd_fd, closed at
	 * close): the id of the connection that made it, which names it in the
	 * PD identities of the engine (fp__pd_ident); imported: made by
	 * ibv_import_device on another context's file. */
	uint32_t file_id;
	bool imported;
	/* at close: the file is still open elsewhere (CTX_HELD), so its regions
	 * keep their pages pinned (pd_mr.c fp_mr_close) */
	bool file_held;
};

struct fp_td {
	struct ibv_td td;
	struct fp_context *ctx;
	struct fp_link link;
	unsigned usecnt;		/* parent domains on it */
};

struct fp_pd {
	struct ibv_pd pd;
	struct fp_context *ctx;
	struct fp_link link;		/* ctx->pds, or ctx->pdoms for a parent domain */
	unsigned usecnt;
	/* A parent domain (alloc_parent_domain): its protection domain (the
	 * PD whose handle it carries, which holds the keys and the objects),
	 * its thread domain and the application's allocators. */
	bool parent;
	unsigned pdoms;			/* parent domains on this PD */
	struct fp_pd *prot;		/* itself for a plain PD */
	bool imported;			/* ibv_import_pd: unimport frees it alone */
	bool dead;			/* destroyed while our objects destroyed elsewhere name it */
	struct fp_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
};

/* The buffers a parent domain's allocators give (resource_type of this
 * device: its id in the high half, as drivers do), and what was used. */
#define FP_RES_TYPE_QP	((0xfa4eULL << 32) | 1)
#define FP_RES_TYPE_CQ	((0xfa4eULL << 32) | 2)
struct fp_pdbuf {
	struct fp_pd *pdom;		/* NULL: none */
	void *ptr;
	uint64_t type;
	bool custom;			/* from the application's alloc */
};
int fp__pdbuf_get(struct fp_pdbuf *b, struct ibv_pd *pd, size_t size, uint64_t type);
void fp__pdbuf_put(struct fp_pdbuf *b);

struct fp_mr {
	struct ibv_mr mr;
	struct fp_context *ctx;
	struct fp_pd *pd;
	struct fp_link link;
	struct fe_mr e;
	/* ibv_import_mr: e is in the engine only over fmap, the region's bytes
	 * mapped from the process that registered it (fe_mem.h foreign regions) */
	bool imported;
	char *fmap;
	/* its keys were taken over in a forked child by an import of the same
	 * region (fp_import_mr): no longer in the engine */
	bool keys_dropped;
};

struct fp_mw {
	struct ibv_mw mw;
	struct fp_context *ctx;
	struct fp_pd *pd;
	struct fp_link link;
	struct fe_mw e;
};

struct fp_cq {
	struct verbs_cq vcq;
	struct fp_context *ctx;
	struct fp_link link;
	struct ibv_comp_channel *channel;
	int comp_vector;
	unsigned usecnt;
	struct fe_cq e;
	/* extended CQ (create_cq_ex): the CQE the poll functions took, and
	 * the one the read functions show (the same but under a quirk) */
	bool ex, cur_valid;
	struct ibv_wc cur, shown;
	/* with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: the stamps of cur and
	 * shown, and the device's mask (CQX-06) */
	uint64_t cur_ts, shown_ts, ts_mask;
	/* rxe's extended polling (profile.c fp_prof_cq_poll_overrun): next_poll
	 * found no more in this batch; the consumer index runs one past the
	 * producer */
	bool ovr_ended, ovr_ahead;
	struct fp_pdbuf pdbuf;		/* made on a parent domain */
};

struct fp_xrcd {
	struct verbs_xrcd vx;
	struct fp_context *ctx;
	struct fp_link link;
	struct fe_dom *dom;
	unsigned refcnt;		/* SRQs, TGT QPs created and QPs opened through it */
	uint32_t fk_handle;		/* the daemon's handle */
	bool closed;			/* closed under a quirk while still referenced */
};

struct fp_srq {
	struct verbs_srq vsrq;
	struct fp_context *ctx;
	struct fp_link link;
	struct fp_pd *pd;
	struct fp_cq *cq;		/* XRC only */
	struct fp_xrcd *xrcd;		/* XRC only */
	unsigned usecnt;		/* QPs attached with init_attr.srq */
	struct fe_srq e;
};

/*
 * The real QP: the engine's QP and what the verbs count on it. A QP of any
 * type but XRC_RECV has exactly one handle (its creator). For XRC_RECV this
 * is the process's proxy of the daemon's real QP: one per QPN, shared by
 * this process's handles (created or opened).
 */
struct fp_rqp {
	struct fe_qp e;
	struct fp_link handles;		/* struct fp_qp.real_link */
	struct fp_context *ctx;		/* owner context; NULL for XRC_RECV */
	struct fp_pd *pd;
	struct fp_cq *scq, *rcq;
	struct fp_srq *srq;
	unsigned usecnt;		/* handles */
	unsigned mcast;			/* attached multicast groups (UD) */
	struct fp_pdbuf pdbuf;		/* made on a parent domain */
};

/* One WR of a batch the new post-send API builds (wr_ex.c). */
struct fp_wrx {
	struct fp_swr s;
	struct ibv_sge *sge;		/* the WR's own copy of its SGE list */
	char *inl;			/* inline data, copied when set */
	size_t inl_len;
	bool addr_set;			/* UD: set_ud_addr, XRC_SEND: set_xrc_srqn */
	bool data_set;
	struct ibv_mw *mw;		/* BIND_MW: the window, its new key, the bind */
	uint32_t mw_rkey;
	struct ibv_mw_bind_info bind;
};

/* A QP's new post-send API state (created with send_ops_flags). */
struct fp_qpx {
	uint64_t ops;			/* send_ops_flags asked */
	bool open;			/* between wr_start and complete/abort */
	int err;			/* the batch's first error */
	int n, cap;
	struct fp_wrx *wr, *cur;	/* the batch; the WR the setters fill */
	struct ibv_sge *ring;		/* max_send_wr slots of ring_per SGEs */
	size_t ring_per;
};

struct fp_qp {
	struct verbs_qp vqp;
	struct fp_context *ctx;
	struct fp_link link;		/* in ctx->qps */
	struct fp_link real_link;	/* in real->handles */
	struct fp_rqp *real;
	struct fp_xrcd *xrcd;		/* handle used for XRC_RECV create/open */
	bool opened;
	uint32_t fk_handle;		/* XRC_RECV: the daemon's handle */
	int bfreg;			/* mlx5: the BlueFlame register it took, or -1 */
	/* What the caller passed, for query_qp's init_attr. */
	struct ibv_pd *init_pd;
	struct ibv_cq *init_send_cq, *init_recv_cq;
	struct ibv_srq *init_srq;
	struct fp_qpx *qpx;		/* NULL unless created with send_ops_flags */
};

struct fp_ah {
	struct ibv_ah ah;
	struct fp_context *ctx;
	struct fp_pd *pd;
	struct fp_link link;
	struct ibv_ah_attr attr;
};

static inline struct fp_context *to_fp_ctx(struct ibv_context *c)
{
	return fp_container_of(c, struct fp_context, vctx.context);
}
static inline struct fp_pd *to_fp_pd(struct ibv_pd *p) { return fp_container_of(p, struct fp_pd, pd); }
static inline struct fp_mr *to_fp_mr(struct ibv_mr *m) { return fp_container_of(m, struct fp_mr, mr); }
static inline struct fp_cq *to_fp_cq(struct ibv_cq *c) { return fp_container_of(c, struct fp_cq, vcq.cq); }
static inline struct fp_mw *to_fp_mw(struct ibv_mw *m) { return fp_container_of(m, struct fp_mw, mw); }
/* Whether a PD is a parent domain, and the PD that protects (pd_mr.c). */
bool fp__pd_is_parent(struct ibv_pd *pd);
static inline struct fp_pd *fp__pd_prot(struct ibv_pd *p) { return to_fp_pd(p)->prot; }
static inline struct fp_srq *to_fp_srq(struct ibv_srq *s) { return fp_container_of(s, struct fp_srq, vsrq.srq); }
static inline struct fp_qp *to_fp_qp(struct ibv_qp *q) { return fp_container_of(q, struct fp_qp, vqp.qp); }
static inline struct fp_ah *to_fp_ah(struct ibv_ah *a) { return fp_container_of(a, struct fp_ah, ah); }
static inline struct fp_xrcd *to_fp_xrcd(struct ibv_xrcd *x) { return fp_container_of(x, struct fp_xrcd, vx.xrcd); }
/* The verbs objects around engine ones (every engine object is inside one). */
static inline struct fp_cq *fp_cq_of(struct fe_cq *e) { return e ? fp_container_of(e, struct fp_cq, e) : NULL; }
static inline struct fp_srq *fp_srq_of(struct fe_srq *e) { return e ? fp_container_of(e, struct fp_srq, e) : NULL; }
static inline struct fp_rqp *fp_rqp_of(struct fe_qp *e) { return e ? fp_container_of(e, struct fp_rqp, e) : NULL; }

/* ---- per-op bookkeeping (ops.c) ------------------------------------------ */
/* The subject of an op, for scripted async events. */
enum fp_subj { FP_SUBJ_NONE, FP_SUBJ_QP, FP_SUBJ_CQ, FP_SUBJ_SRQ };

/* Lock, serve what arrived, then the fault decision: 0 to proceed, else
 * the errno to fail with. (Inline: every verb of the data path pays it.) */
static inline int fp__op_begin(enum fp_op op)
{
	fe_lock();
	/* Serve what other processes sent before this op acts, as an HCA would
	 * have on arrival: the data path's fast path (no thread hop), and a
	 * destroy never strands packets that came in before it. */
	fe_progress();
	return fp__script->nfaults ? fp_fault_check(fp__script, op) : 0;
}
/* Trace "name args -> ret", raise scripted events due, unlock. */
void fp__op_end_slow(struct fp_context *ctx, enum fp_op op, enum fp_subj kind,
		     void *subj, int ret, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* An op ends with nothing to do but unlock when no trace is asked for and
 * the script has no event rules (their counts are of calls of ops with
 * rules: fp_events_due); the trace line's arguments are not even
 * evaluated then, so they must have no side effects. */
static inline bool fp__op_quiet(void)
{
	return !fp__script->trace_path[0] && !fp__script->nevents;
}
#define fp__op_end(ctx, op, kind, subj, ret, ...)					\
	do {										\
		if (fp__op_quiet())							\
			fe_unlock();							\
		else									\
			fp__op_end_slow(ctx, op, kind, subj, ret, __VA_ARGS__);		\
	} while (0)
/* The engine's upcalls, once at load. */
void fp__install_upcalls(void);
/* The fabric of fake hosts (fabric.c): on when IBVCT_FABRIC names its
 * directory; a context publishes its device's GIDs there; the engine's
 * fk_wire upcall; the wires of a device whose ring goes. */
bool fp__fabric_on(void);
void fp__fabric_publish(const struct fp_dev_spec *spec);
int fp__fabric_wire(struct fe_qp *qp, const struct ibv_ah_attr *ah, struct fk_client **out);
void fp__fabric_drop(int devidx);
void fp__ctx_limits(const struct fp_dev_spec *spec, struct fk_qp_limits *lim);
/* The hardware counters (counters.c): where device devidx's sysfs dir is;
 * the engine's count upcall. */
void fp__counters_at(int devidx, const char *ibdev_path);
void fp__count(int devidx, uint8_t port, enum fe_counter c);

/* Async events on the context's pipe (element: object pointer or port). */
void fp__event_raise(struct fp_context *ctx, enum ibv_event_type type, uint64_t element);
void fp__qp_event(struct fp_rqp *real, enum ibv_event_type type);

/* ---- driver profiles (profile.c; script `profile`) ------------------------ */
/* A profile decision "fails without setting errno", as some drivers do. */
#define FP_PROF_NO_ERRNO	(-1)
/* create_srq_ex goes down the driver's basic create_srq path (no comp_mask
 * checks there): mlx5, mlx4 without the TYPE bit or with type BASIC. */
bool fp_prof_srq_basic_path(const struct ibv_srq_init_attr_ex *a);
/* The driver's own srq_type check: 0, an errno or FP_PROF_NO_ERRNO. */
int fp_prof_srq_type(const struct ibv_srq_init_attr_ex *a);
/* The driver's own SRQ size check: 0 or an errno. */
int fp_prof_srq_limits(const struct ibv_srq_init_attr_ex *a);
/* Whether creation writes back the queue's max_wr (else the request's). */
bool fp_prof_srq_reports_queue(void);
/* The driver's refusal of queues it cannot allocate: 0 or ENOMEM. */
int fp_prof_qp_mem(const struct ibv_qp_cap *cap, bool has_rq);
int fp_prof_srq_mem(uint32_t max_wr, uint32_t max_sge);
/* The driver's own checks of modify_qp's attributes: 0 or an errno. */
int fp_prof_modify_attrs(const struct ibv_port_attr *port, const struct ibv_qp_attr *attr,
			 int mask);
/* Whether modify_qp checks a P_Key index against the table. */
bool fp_prof_pkey_index_checked(void);
/* Whether a srq_limit above max_wr at creation is refused. */
bool fp_prof_srq_limit_checked(void);
/* The SRQ sizes the driver writes back for the granted ones. */
void fp_prof_srq_caps(uint32_t *max_wr, uint32_t *max_sge);
/* The driver's own create_qp_ex checks, before the common ones: 0, an
 * errno or FP_PROF_NO_ERRNO. */
int fp_prof_qp_ex_mask(const struct ibv_qp_init_attr_ex *a);
/* create_qp_ex: whether the driver sends ibv_cmd_create_qp_ex2 (else _ex), and
 * the device's answer to a create flag (QPX-04) */
bool fp_prof_qp_cmd_ex2(const struct ibv_qp_init_attr_ex *a);
int fp_prof_qp_create_flags(const struct ibv_qp_init_attr_ex *a);
/* The driver's answer to get_srq_num for an SRQ of this type: 0 or an errno. */
int fp_prof_srq_num(enum ibv_srq_type type);
/* The QP sizes the driver writes back for the granted ones. */
void fp_prof_qp_caps(struct ibv_qp_cap *cap, bool has_rq);
/* The receive caps written back for a QP on an SRQ (no receive queue of
 * its own): 0, or the request as rxe leaves it. */
void fp_prof_srq_qp_recv_caps(struct ibv_qp_cap *out, const struct ibv_qp_cap *asked);
/* The receive caps written back for an XRC_SEND QP, which has no receive
 * queue: 0, or what mlx5 sizes from the request (asked: the caps as the
 * application gave them, before the command layer zeroed them). */
void fp_prof_xrc_send_recv_caps(struct ibv_qp_cap *out, const struct ibv_qp_cap *asked,
				bool has_srq);
/* The driver's own refusal of a modify_qp to state next (after the
 * kernel's table accepted it): 0 or an errno. */
int fp_prof_cq_size(int cqe);
int fp_prof_modify_state(enum ibv_qp_state next);
/* The device capability flags the driver reports for the script's. */
unsigned int fp_prof_cap_flags(unsigned int flags);
/* The send_ops_flags a QP type takes (0) or EOPNOTSUPP for the type. */
int fp_prof_send_ops(enum ibv_qp_type type, uint64_t *sup);
/* Whether the driver lacks an extension op (enum fp_withdraw bits). */
bool fp_prof_lacks(unsigned x);
/* The device's completion clock as the driver reports it: kHz (0: none),
 * and its timestamp mask in *mask (may be NULL). */
uint64_t fp_prof_clock(const struct fp_dev_spec *d, uint64_t *mask);
/* The wc_flags create_cq_ex takes (the standard ones, a clock's timestamp),
 * and the driver's refusal of a combination of them: 0 or an errno. */
uint64_t fp_prof_cq_wc_flags(const struct fp_dev_spec *d);
int fp_prof_cq_wc_combo(uint64_t wc_flags);
/* create_cq_ex checks wc_flags first, an unknown comp_mask without errno, no
 * flag (rxe); else cqe, comp_mask and flags first, EINVAL */
bool fp_prof_cq_ex_wc_first(void);
/* Whether the HCA refuses a bind to a region without IBV_ACCESS_MW_BIND. */
bool fp_prof_mw_bind_access(void);
/* mlx5's QP doorbells and what they hold at close; its destroy of an opened
 * QP (profile.c has the sources). */
int fp_prof_qp_uar_get(struct fp_context *ctx);
void fp_prof_qp_uar_put(struct fp_context *ctx, int bfreg);
bool fp_prof_close_keeps_context(struct fp_context *ctx);
/* The driver has the import ops (ibv_import_device, _pd, _mr). */
bool fp_prof_can_import(void);
void fp_prof_destroy_opened_qp(void);
/* An extension op the provider does not offer: the script withdrew it, or
 * the driver profile has none. */
static inline bool fp__ext_off(enum fp_withdraw x)
{
	return fp__withdrawn(x) || fp_prof_lacks(x);
}
/* Whether poll_cq writes byte_len for this completion (drivers that leave
 * it alone where the verbs do not define it). */
bool fp_prof_wc_byte_len(const struct ibv_wc *wc, bool send_side);
/* rxe's data path (profile.c): a bind checks the window's current key; a
 * window grants its whole region; the invalidation's wc flag; a retry runs
 * done binds again; extended polling overruns the CQ; an inline list
 * carries no data. */
bool fp_prof_mw_bind_key_checked(void);
bool fp_prof_mw_range_is_the_region(void);
/* A bind WR checked as rxe's kernel checks it (rxe_check_bind_mw). */
bool fp_prof_mw_bind_rxe(void);
unsigned int fp_prof_wc_with_inv(void);
bool fp_prof_retry_reruns_binds(void);
bool fp_prof_send_too_long_is_op_err(void);
bool fp_prof_cq_poll_overrun(void);
bool fp_prof_inline_list_unsummed(void);
int fp_prof_wrx_full_errno(void);
bool fp_prof_post_refuses_misaligned_atomic(const struct fp_swr *s);
/* The release the core plays (ref-impl's ibvct-release.def): the kernel
 * the daemon plays, the extended capabilities, the HCA's ATOMIC_WRITE and
 * FLUSH, mlx5's data-in-order answer. */
unsigned fp_prof_kernel_flags(void);
bool fp_prof_req_err_flushes(void);
bool fp_prof_mw_bind_pd_checked(void);
uint64_t fp_prof_cap_flags_ex(uint64_t flags);
bool fp_prof_ext_ops(void);
int fp_prof_data_in_order(enum ibv_qp_state state, uint32_t flags);
/* rxe's data-path rules (the engine's rxe_rules, LOCAL_INV's error, its
 * builders' SGE-list length and inline flag). */
bool fp_prof_rxe_rules(void);
enum ibv_wc_status fp_prof_local_inv_err(void);
bool fp_prof_sge_list_first_length(void);
bool fp_prof_inline_needs_flag(void);

/* ---- cross-file object helpers ------------------------------------------ */
/* A create verb's failure: NULL, errno set to err (unless a profile's
 * driver left it as it was: FP_PROF_NO_ERRNO), then to the command layer's
 * cmd_errno when that refused it (the command layer's errno stands, as
 * in mlx5). */
static inline void *fp__create_failed(int err, int cmd_errno)
{
	if (err > 0)
		errno = err;
	if (cmd_errno)
		errno = cmd_errno;
	return NULL;
}
static inline bool fp__xrc_capable(const struct fp_context *ctx)
{
	return fp_prof_cap_flags(ctx->spec->attr.device_cap_flags) & IBV_DEVICE_XRC;
}
/* Memory windows: the script's device says it has them. */
static inline bool fp__mw_capable(const struct fp_context *ctx)
{
	return ctx->spec->attr.max_mw > 0 &&
	       (fp_prof_cap_flags(ctx->spec->attr.device_cap_flags) & IBV_DEVICE_MEM_WINDOW) &&
	       !fp__ext_off(FP_X_MW);
}
/* The new post-send API (wr_ex.c): the create-time check of send_ops_flags
 * (0 or an errno), the builders once the QP exists, and their release. */
int fp__qpx_check(struct fp_context *ctx, const struct ibv_qp_init_attr_ex *a);
void fp__qpx_init(struct fp_qp *h, const struct ibv_qp_init_attr_ex *a, struct fp_qpx *x);
void fp__qpx_free(struct fp_qp *h);
/* The WRs the HCA runs without the wire (mw.c): BIND_MW (mw, rkey, b) and
 * LOCAL_INV (s->imm the key): 0, or an errno with nothing taken. */
int fp__post_local(struct fe_qp *r, const struct fp_swr *s, struct ibv_mw *mw, uint32_t rkey,
		   const struct ibv_mw_bind_info *b);
void fp__mw_cleanup_ctx(struct fp_context *ctx);
/* A QP event on a target QP: through the daemon, to every handle (LIFE-08). */
void fp__tgt_qp_event(struct fp_qp *h, enum ibv_event_type type);

/* Destroy what a context still holds (uverbs fd close). */
void fp__qp_cleanup_ctx(struct fp_context *ctx);
void fp__srq_cleanup_ctx(struct fp_context *ctx);
void fp__cq_cleanup_ctx(struct fp_context *ctx);
void fp__pd_mr_cleanup_ctx(struct fp_context *ctx);
void fp__ah_cleanup_ctx(struct fp_context *ctx);
void fp__xrcd_cleanup_ctx(struct fp_context *ctx);
void fp__xrcd_put_ref(struct fp_xrcd *x);
/* This context's object of a fake-kernel handle (handles.c), NULL if none. */
struct fp_pd *fp__pd_by_handle(struct fp_context *ctx, uint32_t handle);
struct fp_cq *fp__cq_by_handle(struct fp_context *ctx, uint32_t handle);
struct fp_srq *fp__srq_by_handle(struct fp_context *ctx, uint32_t handle);
struct fp_xrcd *fp__xrcd_by_handle(struct fp_context *ctx, uint32_t handle);
uint32_t fp__xrcd_handle_of(struct ibv_xrcd *ibx);

/* ---- ops (the tables in provider.c point here) -------------------------- */
struct ibv_pd *fp_alloc_pd(struct ibv_context *context);
int fp_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *fp_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			 uint64_t hca_va, int access);
int fp_dereg_mr(struct ibv_mr *mr);
struct ibv_pd *fp_import_pd(struct ibv_context *context, uint32_t pd_handle);
void fp_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *fp_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void fp_unimport_mr(struct ibv_mr *mr);
/*
 * The engine's identity of a PD (what its keys, QPs and SRQs are checked
 * against): its file and handle, so that the same PD imported into another
 * context of the file is the same PD. Never dereferenced.
 */
static inline const void *fp__ident(uint32_t file_id, uint32_t pd_handle)
{
	return (const void *)(uintptr_t)((uint64_t)file_id << 32 | pd_handle);
}

static inline const void *fp__pd_ident(const struct fp_pd *pd)
{
	return fp__ident(pd->ctx->file_id, pd->pd.handle);
}
struct ibv_mw *fp_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int fp_dealloc_mw(struct ibv_mw *mw);
int fp_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
int fp_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		int access);
struct ibv_td *fp_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int fp_dealloc_td(struct ibv_td *td);
struct ibv_pd *fp_alloc_parent_domain(struct ibv_context *context,
				      struct ibv_parent_domain_init_attr *attr);

struct ibv_cq *fp_create_cq(struct ibv_context *context, int cqe,
			    struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *fp_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
int fp_destroy_cq(struct ibv_cq *cq);
int fp_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int fp_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int fp_resize_cq(struct ibv_cq *cq, int cqe);
void fp_cq_event(struct ibv_cq *cq);

struct ibv_srq *fp_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
struct ibv_srq *fp_create_srq_ex(struct ibv_context *context,
				 struct ibv_srq_init_attr_ex *attr);
int fp_destroy_srq(struct ibv_srq *srq);
int fp_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
int fp_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int fp_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
int fp_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);

struct ibv_qp *fp_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *fp_create_qp_ex(struct ibv_context *context,
			       struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *fp_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);
int fp_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int fp_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		struct ibv_qp_init_attr *init_attr);
int fp_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
int fp_destroy_qp(struct ibv_qp *qp);
int fp_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int fp_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);

struct ibv_xrcd *fp_open_xrcd(struct ibv_context *context,
			      struct ibv_xrcd_init_attr *attr);
int fp_close_xrcd(struct ibv_xrcd *xrcd);

struct ibv_ah *fp_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int fp_destroy_ah(struct ibv_ah *ah);

int fp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int fp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

#endif /* FP_VERBS_H */
