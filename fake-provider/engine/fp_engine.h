/* SPDX-License-Identifier: MIT */
/*
 * The fake HCA: the engine under the fake provider's verbs. It owns the
 * hardware's side of every object (receive queues and CQ rings, the QP
 * engine with its requester, responder and completer, memory keys), the
 * process-local registry of numbers and keys, and the transport between
 * processes.
 *
 * It never calls up into the verbs layer (fake-provider/verbs): what the
 * hardware tells software (a CQE on an armed CQ, a CQ overrun, an SRQ
 * limit, a QP event) goes through the upcalls the verbs layer installs
 * (fe_set_upcalls), and so do the questions the data path asks the fake
 * kernel (where a QPN lives: ROUTE of uapi/proto.h), which the verbs layer
 * answers through its daemon connection (verbs/fk_client.c), opaque here.
 * Engine objects are embedded in the verbs objects; the
 * engine only ever sees its own part.
 *
 * Locking: one plugin-wide lock (fe_lock), held by every verb for its whole
 * run and by the transport's progress thread while it serves the receive
 * ring; everything here assumes it is held. The daemon connection's reader
 * thread never takes it.
 */
#ifndef FP_ENGINE_H
#define FP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "fp_script.h"
#include "proto.h"
#include "qp_modify.h"
#include "fp_clock.h"
#include "fp_self.h"
#include "fp_list.h"

/* ---- limits of the fake HCA (beyond what the script sets) --------------- */
#define FP_MAX_INLINE		256
#define FP_UD_GRH_LEN		40

struct fk_client;	/* a daemon connection (verbs/fk_client.h), opaque here */
struct fe_dev;		/* one fake device as this process sees it (registry.c) */
struct fe_dom;		/* this process's view of a daemon XRC domain (registry.c) */
struct fe_qp;
struct fp_response;

/* Where an object is published in its device's shared tables (mem.c):
 * md NULL when it is not. */
struct fe_memdev;
struct fe_backing;
struct fe_mem_pub {
	struct fe_memdev *md;
	int slot;
};

/* A memory region: the PD is an identity only, never dereferenced: the verbs
 * layer's file and handle of it (fp__pd_ident), the same in every context
 * and process that imported that PD. */
struct fe_mr {
	struct fp_link link;		/* in the device's key table */
	struct fp_link lhash, rhash;	/* in the buckets of its lkey and rkey */
	const void *pd;
	char *addr;
	size_t length;
	uint64_t iova;
	int access;
	uint32_t lkey, rkey;
	/* published to peers, backed by a memfd (mem.c, fe_mem.h) */
	struct fe_mem_pub pub;
	struct fe_backing *bk;
	uint64_t moff;			/* bk: the memfd data offset of addr */
	/* when it goes, its pages stay backed and counted, as the kernel keeps
	 * pinned pages while the file lives on: a context closed while
	 * importers in other processes still use the region (verbs/pd_mr.c) */
	bool keep_bytes;
	/* destroyed through another context of the file (fe_mem_mr_kill); a
	 * foreign region: the owner's key table, where its record lives */
	bool killed;
	struct fe_mem_tabs *ftabs;
	uint64_t fmoff;			/* ftabs: the owner's data offset of addr */
};

/* A CQE plus what poll needs to retire unsignaled send WQEs. */
struct fp_cqe {
	struct ibv_wc wc;
	struct fe_qp *sq_qp;		/* NULL for receive CQEs */
	uint64_t sq_seq;
	bool solicited;
	uint64_t ts;			/* the device clock's count when it was made (0: none) */
};

enum fp_cq_arm { FP_CQ_DISARMED = 0, FP_CQ_ARM_SOLICITED, FP_CQ_ARM_ANY };

struct fe_cq {
	int size;			/* capacity */
	int head, count;
	struct fp_cqe *ring;
	enum fp_cq_arm arm;
	bool overflowed;
	/* the completion clock its CQEs are stamped with (kHz; 0: none), and
	 * the last stamp */
	uint64_t clock_khz, ts_last;
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

struct fe_srq {
	struct fp_link link;		/* in the device's SRQ table */
	struct fp_link hlink;		/* in its bucket of the table */
	enum ibv_srq_type type;
	uint32_t srqn;
	const void *pd;
	struct fe_cq *cq;		/* XRC only */
	struct fe_dom *dom;		/* XRC only */
	struct fp_rq rq;
	uint32_t limit;			/* armed limit, 0 = not armed */
};

/*
 * The QP engine's side of a QP: state, attributes and queues. For XRC_RECV
 * it is this process's proxy of the daemon's target QP, which keeps the
 * truth (LIFE-01..05).
 */
struct fe_qp {
	struct fe_dev *dev;
	struct fp_link link;		/* in the device's QP table */
	struct fp_link hlink;		/* in its bucket of the table */
	enum ibv_qp_type type;
	uint32_t qpn;
	enum ibv_qp_state state;
	struct ibv_qp_attr attr;	/* last values set by modify (rate_limit unused) */
	struct ibv_qp_cap cap;
	int sq_sig_all;
	const struct fp_dev_spec *spec;
	struct fk_client *fk;		/* the owner's daemon connection; NULL for XRC_RECV */
	const void *pd;
	struct fe_cq *scq, *rcq;
	struct fe_srq *srq;
	struct fe_dom *dom;		/* XRC_RECV */
	struct fp_rq rq;
	uint64_t sq_posted, sq_retired;	/* WQE sequence numbers */
	/* Sent WQEs that wait for a retransmission (requester.c), in order,
	 * and the link in the list of QPs that have any. */
	struct fp_link sq_wait;
	struct fp_link retry_link;
	struct fp_link sq_free;		/* spare WQEs */
	long long sq_due;		/* when its queue needs looking at next (ns, 0: not) */
	uint32_t sq_psn;
	/* RC responder: after an RNR NAK of psn rx_block_psn from QP rx_block_src,
	 * later requests of that stream are refused until it comes again */
	bool rx_blocked;
	uint32_t rx_block_psn, rx_block_src;
	/* a retry of the send queue runs its done binds again, which fail, and
	 * its requester stops there: sq_stalled (the driver profile's: rxe,
	 * verbs/profile.c fp_prof_retry_reruns_binds) */
	bool retry_reruns_binds, sq_stalled;
	/* the HCA executes ATOMIC_WRITE and FLUSH (rxe on Linux 6.12: the
	 * profile's, verbs/profile.c fp_prof_ext_ops); without it such a WQE
	 * completes with IBV_WC_LOC_QP_OP_ERR, as rxe on 6.1 knows no such
	 * opcode */
	bool ext_ops;
	/* a WQE the requester fails (REQ_ERR_LOCAL, a failed local WQE)
	 * completes with IBV_WC_WR_FLUSH_ERR: rxe on Linux 6.12, whose
	 * requester moves the QP to error and whose completer then flushes
	 * the queue, that WQE included (verbs/profile.c
	 * fp_prof_req_err_flushes) */
	bool req_err_flushes;
	/* Linux rxe's own data-path rules (the profile's, verbs/profile.c
	 * fp_prof_rxe_rules), each where it applies: a send completion of an
	 * IMM operation flagged IBV_WC_WITH_IMM (completer.c); outbound data
	 * whose key fails: LOC_QP_OP_ERR, a READ's or an atomic's local SGEs
	 * checked only when the answer comes (requester.c, completer.c); UC
	 * has no SEND_WITH_INV (requester.c); the responder's class C errors
	 * move its RC QP to ERR, a QP access it lacks is an invalid request,
	 * a key SEND_WITH_INV cannot revoke fails the receive only (responder.c) */
	bool rxe_rules;
	/* a SEND (RC, UC) longer than the receive is a malformed receive:
	 * the remote operational error NAK and LOC_QP_OP_ERR, not the
	 * invalid request NAK and LOC_LEN_ERR (the driver profile's: rxe,
	 * verbs/profile.c fp_prof_send_too_long_is_op_err; responder.c) */
	bool too_long_is_op_err;
	/* the inbox of the last request of this QP that may still sit there
	 * unexecuted while its requester waits no more for its answer (given
	 * up as lost, sent back to WAIT, or unreliable and done when pushed:
	 * fe_sq_unanswered), and that inbox's end once it was in: a one-sided
	 * operation is placed by the requester only once that inbox's owner
	 * executed it (requester.c, PLACE) */
	const struct fe_peer *sq_xmit_peer;
	uint64_t sq_xmit_mark;
	/* its PSNs, reassembly and replay on the wire (roce.c), NULL: none */
	struct fe_roce_qp *roce;
	/* published to peers as a one-sided target (mem.c) */
	struct fe_mem_pub pub;
};

/* ---- what the engine tells software (installed by the verbs layer) ----- */
/* The port's hardware counters (fp_script.h FP_HW_COUNTERS), counted where
 * Linux rxe counts them (linux v6.1 drivers/infiniband/sw/rxe/rxe_comp.c
 * check_ack and COMPST_RNR_RETRY, rxe_resp.c RESPST_ERR_RNR; the same in
 * v6.12): the verbs layer shows them where the driver's are. */
#define FE_CNT_ENUM(id, file)	FE_CNT_##id,
enum fe_counter { FP_HW_COUNTERS(FE_CNT_ENUM) FE_CNT__COUNT };
#undef FE_CNT_ENUM

struct fe_upcalls {
	void (*cq_notify)(struct fe_cq *cq);		/* an armed CQ got its CQE */
	void (*cq_overrun)(struct fe_cq *cq);		/* a CQE was lost */
	void (*srq_limit)(struct fe_srq *srq);		/* the armed limit fired */
	void (*qp_event)(struct fe_qp *qp, enum ibv_event_type type);
	/* one more of counter c on port of the device (fe_dev_index) */
	void (*count)(int devidx, uint8_t port, enum fe_counter c);
	/* The fake kernel, over the daemon connection a verb hands the engine
	 * (fe_join): its id, the route epoch, this process's receive ring
	 * (RING_SET) and where a packet goes (ROUTE); the last two return 0 or
	 * a positive errno (verbs/fk_client.h). */
	uint32_t (*fk_conn_id)(const struct fk_client *fk);
	uint64_t (*fk_epoch)(const struct fk_client *fk);
	int (*fk_ring_set)(struct fk_client *fk, int memfd);
	int (*fk_route)(struct fk_client *fk, int kind, uint32_t num, uint32_t srqn,
			uint32_t flags, struct fk_route *out);
	/* Another host (a second fake host on the fabric, IBVCT_FABRIC): the
	 * daemon connection to the host whose port has the address ah names,
	 * its ring set to this process's (fe_xport_memfd), in *out; NULL when
	 * the address is this host's own (or there is no fabric). ENOENT: no
	 * host on the fabric has it, and the packet is lost, as on a wire. */
	int (*fk_wire)(struct fe_qp *qp, const struct ibv_ah_attr *ah, struct fk_client **out);
};
void fe_set_upcalls(const struct fe_upcalls *up);
extern const struct fe_upcalls *fe_up;


/* ---- the lock and the devices (registry.c) ------------------------------ */
void fe_lock(void);
void fe_unlock(void);
int fe_trylock(void);			/* 0 or EBUSY */
void fe_fork_init(void);		/* once, at load, after fk_fork_init: fork waits for the plugin */
struct fe_dev *fe_dev_attach(int devidx);
void fe_dev_detach(struct fe_dev *dev);
int fe_dev_index(const struct fe_dev *dev);
/* The device's transport in this process, while joined (transport.h). */
struct fe_xport;
struct fe_xport *fe_dev_xport(const struct fe_dev *dev);
struct fe_xport **fe_dev_xport_slot(struct fe_dev *dev);
struct fe_xport *fe_dev_xport_at(int devidx);	/* NULL: none here */
/* the device's RoCE room (roce.c), NULL: none opened in this process */
struct fe_roce **fe_dev_roce_slot(struct fe_dev *dev);
struct fe_roce *fe_dev_roce_at(int devidx);
/* 1 + the highest index of a device this process attached (fe_dev_xport_at
 * is NULL past it). */
int fe_dev_span(void);
/* The memfd of this process's ring of a device's transport (-1: none, or
 * the parent's, inherited through fork): what a connection to another
 * host's daemon registers (RING_SET) so that the answers find it there
 * (transport.c; the fabric's fk_wire, verbs/fabric.c). */
int fe_xport_memfd(const struct fe_xport *xp);

void fe_qp_add(struct fe_dev *dev, struct fe_qp *qp, uint32_t qpn);
void fe_qp_del(struct fe_qp *qp);
struct fe_qp *fe_qp_find(struct fe_dev *dev, uint32_t qpn);

void fe_srq_add(struct fe_dev *dev, struct fe_srq *srq, uint32_t srqn);
void fe_srq_del(struct fe_srq *srq);
struct fe_srq *fe_srq_find(struct fe_dev *dev, uint32_t srqn);
struct fe_srq *fe_dom_first_srq(struct fe_dev *dev, struct fe_dom *dom);

void fe_mr_add(struct fe_dev *dev, struct fe_mr *mr);	/* sets lkey, rkey */
/* A region with keys it has elsewhere (an imported region, fe_mem.h): 0, or
 * EEXIST when this process names another object with one of them. */
int fe_mr_add_keys(struct fe_dev *dev, struct fe_mr *mr, uint32_t lkey, uint32_t rkey);
void fe_mr_del(struct fe_dev *dev, struct fe_mr *mr);
struct fe_mr *fe_mr_by_lkey(struct fe_dev *dev, uint32_t lkey);
struct fe_mr *fe_mr_by_rkey(struct fe_dev *dev, uint32_t rkey);
/* A local SGE: lkey of this PD, inside the region, with LOCAL_WRITE when
 * the HCA writes there; a remote access: rkey of the responder's PD, access
 * granted by both the region and the QP, inside the region (through a type 2
 * window: arriving at the QP that bound it; qp is the receiving QP, NULL
 * for an XRC target). The host pointer, or NULL. */
char *fe_mr_local(struct fe_dev *dev, const void *pd, const struct ibv_sge *sge, bool write);
char *fe_mr_remote(struct fe_dev *dev, const void *pd, const struct fe_qp *qp, int qp_access,
		   uint64_t addr, uint32_t rkey, uint64_t len, int need);
/* rereg: the region lets its pages go before its translation changes
 * (fe_mr_unback), and is published again after any change (fe_mr_changed). */
void fe_mr_unback(struct fe_mr *mr);
void fe_mr_changed(struct fe_dev *dev, struct fe_mr *mr, bool translation);

/*
 * Memory windows: the window's key in the same key table. A bound window
 * grants remote access as a region does, inside its range of its region,
 * with the access it was bound with (a type 2 window: only to requests
 * arriving at the QP that bound it).
 */
struct fp_swr;
struct fe_mw {
	struct fp_link link;		/* in the device's key table */
	struct fe_dev *dev;
	const void *pd;
	enum ibv_mw_type type;
	uint32_t rkey;			/* the current key (a new tag at each bind) */
	bool bound;
	struct fe_mr *mr;
	uint64_t addr, length;
	int access;
	const struct fe_qp *qp;		/* type 2: the QP it is bound to */
	/* grants the whole of its region, not its range (the driver profile's:
	 * rxe, verbs/profile.c fp_prof_mw_range_is_the_region) */
	bool range_is_region;
	uint32_t qpn;			/* type 2: the QPN of qp (FE_MEM_NO_QPN: none) */
	struct fe_mem_pub pub;		/* published to peers (mem.c) */
};
void fe_mw_add(struct fe_dev *dev, struct fe_mw *mw);	/* sets rkey */
void fe_mw_del(struct fe_dev *dev, struct fe_mw *mw);
struct fe_mw *fe_mw_by_rkey(struct fe_dev *dev, uint32_t rkey);
void fe_mw_bind_range(struct fe_mw *mw, struct fe_mr *mr, uint32_t rkey, uint64_t addr,
		      uint64_t length, int access, const struct fe_qp *qp);
void fe_mw_unbind(struct fe_mw *mw);
/*
 * A WQE the HCA runs without the wire (BIND_MW, LOCAL_INV; its effect was
 * had when the verbs layer posted it), with status st: it takes its place
 * in the send queue (requester.c) and completes in order, behind the WQEs
 * posted before it that are not answered yet (none for a quiet success).
 */
void fe_sq_local(struct fe_qp *qp, const struct fp_swr *s, enum ibv_wc_status st);
/* The status a WQE the HCA failed itself (status st) completes with: st,
 * or IBV_WC_WR_FLUSH_ERR where the QP's req_err_flushes says so */
enum ibv_wc_status fe_req_failed(const struct fe_qp *qp, enum ibv_wc_status st);
/*
 * For the responder: the remote invalidation of an arrived SEND_WITH_INV.
 * Only a bound type 2 window can be invalidated so (a type 1 window or a
 * region registered from user space cannot: linux v6.1
 * drivers/infiniband/sw/rxe/rxe_mw.c rxe_invalidate_mw, IBA o10-37.2.26;
 * rxe_mr.c rxe_invalidate_mr takes fast-register regions only). Whether it
 * was; if not, nothing changed.
 */
bool fe_key_invalidate(struct fe_dev *dev, uint32_t rkey);

/* The local view of a daemon XRC domain (by its id); counts local uses. */
int fe_dom_get_id(struct fe_dev *dev, uint32_t id, struct fe_dom **out);
/* This process's view of domain id, or NULL when it holds none (no use taken). */
struct fe_dom *fe_dom_find(struct fe_dev *dev, uint32_t id);
uint32_t fe_dom_id(const struct fe_dom *dom);	/* the daemon's id of it */
void fe_dom_get(struct fe_dom *dom);
void fe_dom_put(struct fe_dom *dom);	/* forgets it with its last local use */

/* A daemon connection joins (leaves) the device's receive ring; the last to
 * leave gets the transport back, to stop (fe_xport_stop) once unlocked. */
int fe_join(struct fe_dev *dev, struct fk_client *fk);
struct fe_xport *fe_leave(struct fe_dev *dev, struct fk_client *fk);
void fe_xport_stop(struct fe_xport *xp);
/* Serve what arrived for this process, and the retransmissions that are
 * due (every verb does it first, as an HCA would have on arrival). */
void fe_progress(void);

/*
 * The data path's trace: with `trace FILE states` in the script, each run of
 * the requester, the responder and the completer writes the states it went
 * through, one line (fp_trace: "<pid> req|resp|comp ...");
 * the names it prints and the path are trace.c's, a leaf.
 */
#define fe_trace_states()	__builtin_expect(fp__script->trace_states, 0)
#define fe_trace(...)	fp_trace(fp__script, __VA_ARGS__)
/* A state function: small, and inlined into its machine's loop, which then
 * jumps from state to state as straight-line code would. */
#define FE_STATE	static inline __attribute__((always_inline))
/* A run's path of state names, for its trace line. */
struct fe_path {
	char buf[512];
	size_t n;
};
void fe_path_add(struct fe_path *t, const char *state);

/* ---- queues (queues.c) -------------------------------------------------- */
int fe_rq_init(struct fp_rq *rq, int max_wr, int max_sge);
void fe_rq_free(struct fp_rq *rq);
int fe_rq_resize(struct fp_rq *rq, int max_wr);
int fe_rq_post(struct fp_rq *rq, const struct ibv_recv_wr *wr);
bool fe_rq_pop(struct fp_rq *rq, struct fp_rwqe **out);

int fe_cq_init(struct fe_cq *cq, int size);
void fe_cq_free(struct fe_cq *cq);
int fe_cq_resize(struct fe_cq *cq, int size);	/* EINVAL below the CQEs held */
void fe_cq_push(struct fe_cq *cq, const struct ibv_wc *wc, struct fe_qp *sq_qp,
		uint64_t sq_seq, bool solicited);
/* The oldest CQE, or NULL; fe_cq_pop retires it (and the send WQEs it covers). */
const struct fp_cqe *fe_cq_peek(const struct fe_cq *cq);
void fe_cq_pop(struct fe_cq *cq);
void fe_cq_arm(struct fe_cq *cq, bool solicited_only);
/* A free-running completion clock of khz kHz: its count now (from the
 * host's boot, CLOCK_MONOTONIC, so every process of the host reads the
 * same device clock), unmasked. */
uint64_t fe_clock_ticks(uint64_t khz);
void fe_cq_purge_qp(struct fe_cq *cq, struct fe_qp *qp);

/* After a receive WQE was taken: the armed limit fires once (SRQX-14). */
void fe_srq_consumed(struct fe_srq *srq);

/* ---- the QP engine (qp_engine.c) ---------------------------------------- */
void fe_qp_init(struct fe_qp *qp, enum ibv_qp_type type);
void fe_qp_set_error(struct fe_qp *qp);
void fe_qp_flush_rq(struct fe_qp *qp);
void fe_qp_reset(struct fe_qp *qp);
/* Apply modified attributes (a mask already stripped to what counts). */
void fe_qp_apply(struct fe_qp *qp, const struct ibv_qp_attr *a, int mask);
/* Let go of the queues and the CQEs a destroyed QP leaves behind. */
void fe_qp_release(struct fe_qp *qp);
/* Moved to SQD: drained now, or once its waiting WQEs are done. */
void fe_qp_sqd(struct fe_qp *qp);

/* ---- the requester (requester.c) and completer (completer.c) ------------- */
/* One send WR, its members read one by one by the driver (WR-02). */
struct fp_swr {
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t imm;
	uint64_t remote_addr;
	uint32_t rkey;
	/* atomics; ATOMIC_WRITE: compare_add holds its 8 bytes as memory does */
	uint64_t compare_add, swap;
	const struct ibv_ah_attr *ah;	/* UD */
	uint32_t remote_qpn, remote_qkey;
	uint32_t remote_srqn;
	/* FLUSH: the range's length, where it must be made durable (enum
	 * ibv_placement_type bits) and what it covers (ibv_selectivity_level) */
	uint64_t flush_len;
	uint8_t flush_type, flush_level;
	/* a WR the driver built that its kernel will not carry: the status the
	 * WQE completes with when its turn comes (0: none) */
	enum ibv_wc_status fail;
};

/* Whether the HCA carries this opcode on this QP type (QPX-10). */
bool fe_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op);
/* Post one WR: an errno for what fails at once (nothing posted). */
int fe_post_send(struct fe_qp *qp, const struct fp_swr *s);
/* The QP leaves RTS: to ERR (complete: flushed), or RESET/destroy (dropped). */
void fe_sq_flush(struct fe_qp *qp, bool complete);
bool fe_sq_idle(const struct fe_qp *qp);
/* Serve retransmissions that are due; the next due time (ns, 0: none). */
long long fe_sq_progress(void);
long long fe_sq_next_due(void);

/* ---- packets: what travels between requester and responder -------------- */
/*
 * A stretch of a message's data where it lies: the sender's registered
 * memory, read when the HCA sends (and again for a retransmission, as a
 * DMA engine reads it), its WQE's copy of inline data, or an inbox record.
 */
struct fp_piece {
	const char *p;
	uint64_t len;
};

/* Copy len bytes of the n pieces, from byte off of them on, to dst. */
static inline void fe_pieces_copy(char *dst, const struct fp_piece *pc, unsigned n,
				  uint64_t off, uint64_t len)
{
	for (; n && len; pc++, n--) {
		uint64_t k;

		if (off >= pc->len) {
			off -= pc->len;
			continue;
		}
		k = pc->len - off < len ? pc->len - off : len;
		memmove(dst, pc->p + off, k);	/* a loopback may send from where it receives */
		dst += k;
		len -= k;
		off = 0;
	}
}

/* The packet kinds, with their names for the trace. SEND_INV (SEND_WITH_INV):
 * imm holds the rkey to invalidate. */
#define FP_PKT_OPS(X) \
	X(SEND) X(SEND_IMM) X(WRITE) X(WRITE_IMM) X(READ) X(CMP_SWAP) X(FETCH_ADD) X(SEND_INV) \
	X(ATOMIC_WRITE) X(FLUSH)
#define FP_PKT_ENUM(n)	FP_PKT_##n,
enum fp_pkt_op { FP_PKT_OPS(FP_PKT_ENUM) };
const char *fe_pkt_op_name(enum fp_pkt_op op);

/*
 * A packet, in the order its parts travel: what every packet carries, then
 * what only XRC, atomics and UD packets carry (in an inbox a packet takes
 * as many parts as its kind reads: fp_pkt_wire_len, transport.c), then
 * where its data lies in this process.
 */
struct fp_packet {
	enum fp_pkt_op op;
	enum ibv_qp_type src_type;
	uint32_t src_qpn, dst_qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t imm;			/* network order, as in the WR */
	uint32_t len;			/* data length; READ, atomics: bytes asked for */
	uint64_t remote_addr;
	uint16_t slid;
	uint8_t sl, port;
	bool solicited;
	bool grh;			/* UD: a GRH travels with the packet */
	/* FLUSH: its placement type and selectivity level (its len: the range) */
	uint8_t flush_type, flush_level;
	/* XRC_SEND: the SRQ it names; the target QP's qp_access_flags,
	 * min_rnr_timer and domain id, from the daemon's gate */
	uint32_t xrc_srqn;
	uint32_t xrc_access;
	uint32_t xrc_dom;
	uint8_t xrc_rnr_timer;
	/* atomics */
	uint64_t compare_add, swap;
	/* UD */
	uint32_t qkey;
	union ibv_gid sgid, dgid;
	/* the data, in pieces (never in an inbox: it follows the record) */
	const struct fp_piece *pieces;
	unsigned npieces;
};

/* A READ or an atomic asks for data and carries none (its len: what it asks
 * for), a FLUSH carries none either (its len: the range it covers); the
 * others carry their data (an ATOMIC_WRITE its 8 bytes). */
static inline bool fe_pkt_asks(enum fp_pkt_op op)
{
	return op == FP_PKT_READ || op == FP_PKT_CMP_SWAP || op == FP_PKT_FETCH_ADD ||
	       op == FP_PKT_FLUSH;
}

/*
 * What a request is answered with, with the names for the trace:
 *   DROPPED   unreliable types: nothing comes back
 *   NO_PATH   no QP able to receive behind dst_qpn: the packet is lost
 *   NAK_SEQ   refused, not executed: a request ahead of it was NAKed
 *   PENDING   (requester only) on its way: the response comes later
 *   BUSY      (requester only) the peer's inbox is full: not sent
 */
#define FP_ACKS(X) \
	X(ACK_OK) X(ACK_DROPPED) X(NAK_RNR) X(NAK_REM_ACCESS) X(NAK_INV_REQ) X(NAK_REM_OP) \
	X(ACK_NO_PATH) X(NAK_SEQ) X(ACK_PENDING) X(ACK_BUSY)
#define FP_ACK_ENUM(n)	FP_##n,
enum fp_ack { FP_ACKS(FP_ACK_ENUM) };
const char *fe_ack_name(enum fp_ack a);

struct fp_response {
	enum fp_ack status;
	void *data;			/* READ response (malloc'ed, requester frees) */
	uint32_t len;
	uint64_t atomic_orig;
	uint8_t rnr_timer;		/* RNR NAK: the responder QP's min_rnr_timer */
	/* a cumulative ACK (transport.c): it completes every request of the QP
	 * sent to the inbox of peer from, up to the one it names */
	bool upto;
	const struct fe_peer *from;
	/* lost: the local ACK timer ran out already (the wire, roce.c), so
	 * the retry goes at once */
	bool timer_ran;
	/* lost, but part of its answer came since its last try (the wire: a
	 * READ's response packets in order): progress, which resets the
	 * retry budget (completer.c ERROR_RETRY) */
	bool progress;
};

/* ---- the responder (responder.c) ------------------------------------------ */
/* A request that arrived for QP qp of this process (NULL: none; for XRC the
 * SRQ it names behind the target QP the daemon's gate let it through, the
 * target QP being the daemon's) is executed; its answer in *resp. Entered
 * from the receive dispatcher only (recv.c). */
void fe_responder(struct fe_dev *dev, struct fe_qp *qp, const struct fp_packet *pkt,
		  struct fp_response *resp);

/* ---- the receive dispatcher (recv.c) --------------------------------------- */
/*
 * What arrives for this process: a request (pkt), which the responder
 * executes, answering in *resp; or the response *resp to request id of QP
 * qpn, which the completer takes (resp->data valid during the call). The
 * one way a packet reaches the responder or the completer: the transport
 * hands it what its inbox brings, the requester a request to a QP of this
 * process (EXECUTE_HERE, with the QP it found), as linux v6.1
 * drivers/infiniband/sw/rxe/rxe_recv.c rxe_rcv hands each packet to
 * rxe_resp_queue_pkt or rxe_comp_queue_pkt.
 */
struct fe_rcv {
	const struct fp_packet *pkt;	/* a request; NULL: a response */
	struct fe_qp *qp;		/* a request: its QP, if the sender found it */
	struct fp_response *resp;	/* a request's answer, or the response */
	uint32_t qpn;			/* a response: its request's QP and id */
	uint64_t id;
};
void fe_recv(struct fe_dev *dev, struct fe_rcv *rcv);
/* The same for a request, its QP found by the caller or not (NULL). */
void fe_recv_req(struct fe_dev *dev, struct fe_qp *qp, const struct fp_packet *pkt,
		 struct fp_response *resp);

#endif /* FP_ENGINE_H */
