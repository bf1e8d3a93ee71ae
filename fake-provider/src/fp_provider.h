/* SPDX-License-Identifier: MIT */
/*
 * Internals of the fake provider plugin (libibvct-fake.so): the provider
 * objects (each embeds the public/verbs_* struct first), the per-context
 * state, the cross-file helpers (fp__*) and the device-wide "fabric"
 * interface (fp_fabric_*, fabric.c): the process-local routing view of
 * the device, whose numbers, XRC domains and target QPs come from the fake
 * kernel daemon (fk_client.h, one connection per context).
 *
 * Locking: one plugin-wide mutex (fp_fabric_lock) is held by every op for
 * its whole run, data path included, and by the transport's progress
 * thread while it serves the receive ring (transport.c); everything below
 * assumes it is held. The daemon connection's reader thread never takes it.

 */
#ifndef FP_PROVIDER_H
#define FP_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/driver.h>
#include "fp_script.h"
#include "fk_client.h"

#define fp_container_of(p, type, m) ((type *)(void *)((char *)(p) - offsetof(type, m)))

/* ---- intrusive list ---------------------------------------------------- */
struct fp_link {
	struct fp_link *prev, *next;
};

static inline void fp_list_init(struct fp_link *h)
{
	h->prev = h->next = h;
}

static inline bool fp_list_empty(const struct fp_link *h)
{
	return h->next == h;
}

static inline void fp_list_add_tail(struct fp_link *h, struct fp_link *n)
{
	n->next = h;
	n->prev = h->prev;
	h->prev->next = n;
	h->prev = n;
}

static inline void fp_list_del(struct fp_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#define fp_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

/* ---- limits of the fake device (beyond what the script sets) ----------- */
#define FP_NUM_COMP_VECTORS	2
#define FP_MAX_INLINE		256
#define FP_UD_GRH_LEN		40

/* ---- objects ------------------------------------------------------------ */
struct fp_fabric;
struct fp_xdom;

struct fp_device {
	struct verbs_device vdev;	/* must be first: legacy mode uses vdev.device only */
	int devidx;			/* index into fp__script->dev[] */
};

struct fp_context {
	struct verbs_context vctx;	/* must be first; legacy mode uses vctx.context */
	struct fp_device *dev;
	const struct fp_dev_spec *spec;
	struct fp_fabric *fab;
	int async_wfd;			/* write end of the async event pipe */
	struct fk_client *fk;		/* the fake kernel connection (a uverbs fd) */
	struct fk_qp_limits lim;	/* the spec's ports and limits, as the daemon has them */
	/* Every live object, for cleanup at close (the kernel does that on
	 * uverbs fd close) and for events with no explicit subject. */
	struct fp_link pds, mrs, cqs, srqs, qps, ahs, xrcds;
};

struct fp_pd {
	struct ibv_pd pd;
	struct fp_context *ctx;
	struct fp_link link;
	unsigned usecnt;
};

struct fp_mr {
	struct ibv_mr mr;
	struct fp_context *ctx;
	struct fp_pd *pd;
	struct fp_link link;
	struct fp_link fab_link;
	char *addr;
	size_t length;
	uint64_t iova;
	int access;
	uint32_t lkey, rkey;
};

/* A CQE plus what poll needs to retire unsignaled send WQEs. */
struct fp_cqe {
	struct ibv_wc wc;
	struct fp_rqp *sq_qp;		/* NULL for receive CQEs */
	uint64_t sq_seq;
	bool solicited;
};

enum fp_cq_arm { FP_CQ_DISARMED = 0, FP_CQ_ARM_SOLICITED, FP_CQ_ARM_ANY };

struct fp_cq {
	struct verbs_cq vcq;
	struct fp_context *ctx;
	struct fp_link link;
	struct ibv_comp_channel *channel;
	int comp_vector;
	int size;			/* capacity (= cq.cqe) */
	int head, count;
	struct fp_cqe *ring;
	enum fp_cq_arm arm;
	unsigned usecnt;
	bool overflowed;
};

/* A receive WQE: sge[] has max_sge slots. */
struct fp_rwqe {
	uint64_t wr_id;
	int num_sge;
	struct ibv_sge sge[];
};

struct fp_rq {
	int max_wr, max_sge;
	int head, count;
	size_t stride;
	char *buf;
};

struct fp_xrcd {
	struct verbs_xrcd vx;
	struct fp_context *ctx;
	struct fp_link link;
	struct fp_xdom *dom;
	unsigned refcnt;		/* SRQs, TGT QPs created and QPs opened through it */
	uint32_t fk_handle;		/* the daemon's handle */
	bool closed;			/* closed under a quirk while still referenced */
};

struct fp_srq {
	struct verbs_srq vsrq;
	struct fp_context *ctx;
	struct fp_link link;
	struct fp_link fab_link;
	enum ibv_srq_type type;
	uint32_t srqn;
	struct fp_pd *pd;
	struct fp_cq *cq;		/* XRC only */
	struct fp_xrcd *xrcd;		/* XRC only */
	struct fp_xdom *dom;		/* XRC only */
	struct fp_rq rq;
	uint32_t limit;			/* armed limit, 0 = not armed */
	unsigned usecnt;		/* QPs attached with init_attr.srq */
};

/*
 * The real QP: state, attributes and queues. A QP of any type but XRC_RECV
 * has exactly one handle (its creator). For XRC_RECV this is the process's
 * proxy of the daemon's real QP: one per QPN, shared by this process's
 * handles (created or opened); the daemon keeps the truth (LIFE-01..05).
 */
struct fp_rqp {
	struct fp_fabric *fab;
	struct fp_link fab_link;
	struct fp_link handles;		/* struct fp_qp.real_link */
	enum ibv_qp_type type;
	uint32_t qpn;
	enum ibv_qp_state state;
	struct ibv_qp_attr attr;	/* last values set by modify (rate_limit unused) */
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct fp_context *ctx;		/* owner context; NULL for XRC_RECV */
	struct fp_pd *pd;
	struct fp_cq *scq, *rcq;
	struct fp_srq *srq;
	struct fp_xdom *dom;		/* XRC_RECV */
	unsigned usecnt;		/* handles */
	struct fp_rq rq;
	uint64_t sq_posted, sq_retired;	/* WQE sequence numbers */
	/* Sent WQEs that wait for a retransmission (datapath.c), in order,
	 * and the link in the list of QPs that have any. */
	struct fp_link sq_wait;
	struct fp_link retry_link;
	uint32_t sq_psn;
	unsigned mcast;			/* attached multicast groups (UD) */
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
	/* What the caller passed, for query_qp's init_attr. */
	struct ibv_pd *init_pd;
	struct ibv_cq *init_send_cq, *init_recv_cq;
	struct ibv_srq *init_srq;
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
static inline struct fp_srq *to_fp_srq(struct ibv_srq *s) { return fp_container_of(s, struct fp_srq, vsrq.srq); }
static inline struct fp_qp *to_fp_qp(struct ibv_qp *q) { return fp_container_of(q, struct fp_qp, vqp.qp); }
static inline struct fp_ah *to_fp_ah(struct ibv_ah *a) { return fp_container_of(a, struct fp_ah, ah); }
static inline struct fp_xrcd *to_fp_xrcd(struct ibv_xrcd *x) { return fp_container_of(x, struct fp_xrcd, vx.xrcd); }

/* ---- the script, and per-op bookkeeping (events.c) ---------------------- */
extern struct fp_script *fp__script;	/* the one current script of the plugin */

static inline bool fp__quirk(enum fp_quirk q)
{
	return fp__script->quirk[q];
}

/* The subject of an op, for scripted async events. */
enum fp_subj { FP_SUBJ_NONE, FP_SUBJ_QP, FP_SUBJ_CQ, FP_SUBJ_SRQ };

/* Lock, then the fault decision: 0 to proceed, else the errno to fail with. */
int fp__op_begin(enum fp_op op);
/* Trace "name args -> ret", raise scripted events due, unlock. */
void fp__op_end(struct fp_context *ctx, enum fp_op op, enum fp_subj kind,
		void *subj, int ret, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

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
/* The SRQ sizes the driver writes back for the granted ones. */
void fp_prof_srq_caps(uint32_t *max_wr, uint32_t *max_sge);
/* The driver's own create_qp_ex checks, before the common ones: 0, an
 * errno or FP_PROF_NO_ERRNO. */
int fp_prof_qp_ex_mask(const struct ibv_qp_init_attr_ex *a);
/* The driver's answer to get_srq_num for an SRQ of this type: 0 or an errno. */
int fp_prof_srq_num(enum ibv_srq_type type);
/* The QP sizes the driver writes back for the granted ones. */
void fp_prof_qp_caps(struct ibv_qp_cap *cap, bool has_rq);
/* The receive caps written back for an XRC_SEND QP, which has no receive
 * queue: 0, or what mlx5 sizes from the request (asked: the caps as the
 * application gave them, before the command layer zeroed them). */
void fp_prof_xrc_send_recv_caps(struct ibv_qp_cap *out, const struct ibv_qp_cap *asked,
				bool has_srq);
/* The driver's own refusal of a modify_qp to state next (after the
 * kernel's table accepted it): 0 or an errno. */
int fp_prof_modify_state(enum ibv_qp_state next);
/* Whether poll_cq writes byte_len for this completion (drivers that leave
 * it alone where the verbs do not define it). */
bool fp_prof_wc_byte_len(const struct ibv_wc *wc, bool send_side);

/* ---- cross-file object helpers ------------------------------------------ */
bool fp__xrc_capable(struct fp_context *ctx);
int fp__rq_init(struct fp_rq *rq, int max_wr, int max_sge);
void fp__rq_free(struct fp_rq *rq);
struct fp_rwqe *fp__rq_at(struct fp_rq *rq, int i);
int fp__rq_post(struct fp_rq *rq, const struct ibv_recv_wr *wr);
bool fp__rq_pop(struct fp_rq *rq, struct fp_rwqe **out);

void fp__cq_push(struct fp_cq *cq, const struct ibv_wc *wc, struct fp_rqp *sq_qp,
		 uint64_t sq_seq, bool solicited);
void fp__cq_purge_qp(struct fp_cq *cq, struct fp_rqp *real);

void fp__qp_set_error(struct fp_rqp *real);
/* A QP event on a target QP: through the daemon, to every handle (LIFE-08). */
void fp__tgt_qp_event(struct fp_qp *h, enum ibv_event_type type);
void fp__qp_flush_rq(struct fp_rqp *real);
void fp__srq_consumed(struct fp_srq *srq);

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

struct ibv_cq *fp_create_cq(struct ibv_context *context, int cqe,
			    struct ibv_comp_channel *channel, int comp_vector);
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

/* ---- packets: what travels between requester and responder -------------- */
enum fp_pkt_op {
	FP_PKT_SEND, FP_PKT_SEND_IMM, FP_PKT_WRITE, FP_PKT_WRITE_IMM,
	FP_PKT_READ, FP_PKT_CMP_SWAP, FP_PKT_FETCH_ADD,
};

struct fp_packet {
	enum fp_pkt_op op;
	enum ibv_qp_type src_type;
	uint32_t src_qpn, dst_qpn;
	uint32_t psn;
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t imm;			/* network order, as in the WR */
	bool solicited;
	uint32_t xrc_srqn;		/* XRC_SEND only */
	uint32_t xrc_access;		/* XRC_SEND: the target QP's qp_access_flags, from the daemon's gate */
	uint8_t xrc_rnr_timer;		/* XRC_SEND: the target QP's min_rnr_timer, likewise */
	uint32_t xrc_dom;		/* XRC_SEND: the target QP's domain id, likewise */
	uint32_t qkey;			/* UD */
	uint16_t slid;
	uint8_t sl, port;
	bool grh;			/* UD: a GRH travels with the packet */
	union ibv_gid sgid, dgid;
	uint64_t compare_add, swap;
	const void *payload;
	uint32_t len;			/* payload length; READ: bytes requested */
};

enum fp_ack {
	FP_ACK_OK,
	FP_ACK_DROPPED,			/* unreliable types: nothing comes back */
	FP_NAK_RNR,
	FP_NAK_REM_ACCESS,
	FP_NAK_INV_REQ,
	FP_NAK_REM_OP,
	FP_ACK_NO_PATH,			/* no QP able to receive behind dst_qpn: the packet is lost */
};

struct fp_response {
	enum fp_ack status;
	void *data;			/* READ response (malloc'ed, requester frees) */
	uint32_t len;
	uint64_t atomic_orig;
	uint8_t rnr_timer;		/* RNR NAK: the responder QP's min_rnr_timer */
};

/* The responder side of the data path (datapath.c). */
void fp__responder(struct fp_rqp *real, const struct fp_packet *pkt,
		   struct fp_response *resp);
/* The requester's retransmissions (datapath.c): set up and drop a QP's
 * waiting WQEs; serve those due (returns the next due time, ns, 0: none);
 * the next due time as a hint for the progress thread, without the lock. */
void fp__sq_init(struct fp_rqp *real);
void fp__sq_flush(struct fp_rqp *real, bool complete);
long long fp__sq_progress(void);
long long fp__sq_next_due(void);

/* ---- the fabric: device-wide state (fabric.c) --------------------------- */
void fp_fabric_lock(void);
void fp_fabric_unlock(void);
int fp_fabric_trylock(void);		/* 0 or EBUSY */
void fp_fabric_fork_init(void);		/* once, at load: fork waits for the plugin */
struct fp_fabric *fp_fabric_attach(int devidx);
void fp_fabric_detach(struct fp_fabric *fab);
int fp_fabric_devidx(const struct fp_fabric *fab);

void fp_fabric_qp_add(struct fp_fabric *fab, struct fp_rqp *real, uint32_t qpn);
void fp_fabric_qp_del(struct fp_fabric *fab, struct fp_rqp *real);
struct fp_rqp *fp_fabric_qp_find(struct fp_fabric *fab, uint32_t qpn);

void fp_fabric_srq_add(struct fp_fabric *fab, struct fp_srq *srq, uint32_t srqn);
void fp_fabric_srq_del(struct fp_fabric *fab, struct fp_srq *srq);
struct fp_srq *fp_fabric_srq_find(struct fp_fabric *fab, uint32_t srqn);
struct fp_srq *fp_fabric_xdom_first_srq(struct fp_fabric *fab, struct fp_xdom *dom);

void fp_fabric_mr_add(struct fp_fabric *fab, struct fp_mr *mr);	/* sets lkey, rkey */
void fp_fabric_mr_del(struct fp_fabric *fab, struct fp_mr *mr);
struct fp_mr *fp_fabric_mr_by_lkey(struct fp_fabric *fab, uint32_t lkey);
struct fp_mr *fp_fabric_mr_by_rkey(struct fp_fabric *fab, uint32_t rkey);

/* The local view of a daemon XRC domain (by its id); counts local uses. */
int fp_fabric_xdom_get_id(struct fp_fabric *fab, uint32_t id, struct fp_xdom **out);
/* This process's view of domain id, or NULL when it holds none (no use taken). */
struct fp_xdom *fp_fabric_xdom_find(struct fp_fabric *fab, uint32_t id);
void fp_fabric_xdom_get(struct fp_xdom *dom);
void fp_fabric_xdom_put(struct fp_xdom *dom);	/* forgets it with its last local use */
void fp__rqp_free(struct fp_rqp *real);

/* Hand a packet from a QP of ctx to the destination QP, in this process or
 * another (transport.c); fills *resp. */
void fp_fabric_deliver(struct fp_context *ctx, const struct fp_packet *pkt,
		       struct fp_response *resp);
/* The context's connection joins (leaves) the device's receive ring; the
 * last to leave gets the transport back, to stop once the lock is dropped. */
int fp_fabric_join(struct fp_fabric *fab, struct fk_client *fk);
struct fp_xport *fp_fabric_leave(struct fp_fabric *fab, struct fk_client *fk);
/* Serve what arrived for this process (data path verbs call it inline). */
void fp_fabric_drain_all(void);

/* ---- the transport between processes (transport.c) ----------------------- */
struct fp_xport;
int fp__xport_register(struct fp_xport **xpp, struct fp_fabric *fab, struct fk_client *fk);
struct fp_xport *fp__xport_unregister(struct fp_xport **xpp, struct fk_client *fk);
void fp__xport_stop(struct fp_xport *xp);
void fp__xport_drain(struct fp_xport *xp);
void fp__xport_touch(struct fp_xport *xp);

void fp__xport_deliver(struct fp_xport *xp, struct fp_context *ctx,
		       const struct fp_packet *pkt, struct fp_response *resp);


#endif /* FP_PROVIDER_H */
