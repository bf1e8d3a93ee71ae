/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel's client library: what the fake provider calls for the
 * device-wide objects the daemon (ibvct-fkd, fake-provider/kernel/) owns,
 * over the protocol of uapi/proto.h.
 * One connection per open device context, like a uverbs fd: when it closes,
 * or its process dies, the daemon releases what it held (XRCD-17, LIFE-04/05).
 *
 * Every call returns 0 or a positive errno, and is thread safe per
 * connection (one request in flight at a time; others wait their turn).
 *
 * Events: each connection has one reader thread that takes replies and
 * pushed events off the socket in order and runs the event callback for
 * each event, inline. So an event for a handle is always delivered before
 * the reply that destroys that handle, and never after it. The callback
 * must not call into the same connection and must not wait for a lock that
 * a caller of fk_* may hold across a call (the provider's own op lock):
 * writing the record to the context's async-event pipe is what it is for.
 */
#ifndef FK_CLIENT_H
#define FK_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

/* The protocol's names (lifetime models, object types, route answers,
 * quirk bits) and struct fk_qp_limits, what the daemon checks modify
 * against (the device spec's ports and limits), of the modify module both
 * sides share. */
#include "proto.h"
#include "qp_modify.h"

struct fk_client;

enum { FK_LIFETIME_CURRENT = FK_LIFE_CURRENT, FK_LIFETIME_SEED = FK_LIFE_SEED };

struct fk_event {
	uint32_t qp_handle;		/* this connection's handle */
	uint32_t qpn;
	enum ibv_event_type type;
	uint64_t user;			/* the value given at create/open of that handle */
};

typedef void (*fk_event_fn)(void *arg, const struct fk_event *ev);

#define FK_CONNECT_MONITOR	0x1u	/* no device: fk_dump only (tests, tools) */
/* Another fake host's daemon (opts->rundir), never started here: one that
 * does not answer is a host that is down (ECONNREFUSED, ENOENT). */
#define FK_CONNECT_REMOTE	0x2u

struct fk_connect_opts {
	const struct fk_qp_limits *limits;	/* NULL: one port, P_Key table of 1 */
	fk_event_fn event_fn;		/* NULL: events are dropped */
	void *event_arg;
	unsigned flags;			/* FK_CONNECT_* */
	/* The fake host's script, for a daemon this connect starts (ibvct-fkd
	 * -s: it then checks every client's device, limits and lifetime model
	 * against it); "" the built-in default; NULL none (no checks). */
	const char *script;
	/* Kernel rules this connection's requests are served without (the
	 * provider's script quirks): HELLO's FK_Q_* (fk_quirk_bits). */
	unsigned quirks;
	/* FK_HELLO_DEVICE_FLAGS: the kernel the device's daemon plays and the
	 * device's flush capability (proto.h) */
	unsigned hello_flags;
	/* FK_CONNECT_REMOTE: the run dir of that host (NULL: this host's) */
	const char *rundir;
};

/*
 * Connect to the daemon of the run dir ($IBVCT_RUNDIR, else
 * $XDG_RUNTIME_DIR/ibvct, else /tmp/ibvct-<uid>), starting it if none runs:
 * under flock(<rundir>/lock), so that concurrent first connects start
 * exactly one. The daemon binary: $IBVCT_FKD, else <dir of the loaded
 * object holding this code>/../../bin/ibvct-fkd, else IBVCT_BINDIR; it runs
 * under $IBVCT_FKD_WRAPPER (words split on blanks, e.g. "valgrind -q") if
 * set, and logs to <rundir>/fkd.log.
 * lifetime: FK_LIFETIME_*; every connection to one device must agree (EINVAL).
 * Errors: EINVAL, EACCES (run dir, or refused by the daemon), EPROTONOSUPPORT
 * (daemon speaks another protocol version), ECONNREFUSED (daemon did not
 * start: see fkd.log), ENOMEM, ...
 */
int fk_connect(const char *devname, int lifetime, const struct fk_connect_opts *opts,
	       struct fk_client **out);
/* Close the connection (the daemon releases everything it held) and free. */
void fk_disconnect(struct fk_client *c);
/*
 * Let the context go but not the connection, as a uverbs fd that a mapping
 * still holds outlives its close: the daemon keeps everything the
 * connection holds until the process ends. Events are dropped from now on
 * (returns once none is being handed to event_fn); the caller forgets c.
 */
void fk_keep(struct fk_client *c);
uint32_t fk_conn_id(const struct fk_client *c);
/* A connection a forked child inherited from its parent (dead here). */
bool fk_inherited(const struct fk_client *c);
pid_t fk_daemon_pid(const struct fk_client *c);

/* Numbers for QPs other than XRC targets, and for basic SRQs. */
int fk_qpn_alloc(struct fk_client *c, uint32_t *qpn);
int fk_qpn_free(struct fk_client *c, uint32_t qpn);
int fk_srqn_alloc(struct fk_client *c, uint32_t *srqn);
int fk_srqn_free(struct fk_client *c, uint32_t srqn);

/* Per-call quirks: the request's FK_Q_* (proto.h, fk_quirk_bits); 0 normally. */

/*
 * XRC domains (XRCD-03..17). fd: the caller's file (passed to the daemon,
 * which keys the domain by its own fstat of it), or -1 for a private one.
 * oflags: O_CREAT / O_EXCL. *xrcd_id names the domain (same inode, same id).
 */
int fk_xrcd_open(struct fk_client *c, int fd, int oflags, unsigned quirks,
		 uint32_t *handle, uint32_t *xrcd_id);
int fk_xrcd_close(struct fk_client *c, uint32_t handle, unsigned quirks);

/*
 * Object handles: every object a context makes is registered and gets a
 * handle from the connection's one table, the lowest free from 0, as the
 * kernel numbers uobjects per open device file. The handles of the objects
 * it uses are resolved in this connection's table and type-checked (EINVAL
 * for an unknown one or one of another type), and held until it goes;
 * destroying a PD, CQ or SRQ that is held is EBUSY. sub: the SRQ type
 * (IBV_SRQT_BASIC) or QP type (RC, UC, UD, XRC_SEND); 0 for the rest.
 * refs: FK_O_NONE in each slot not used (NULL: none at all).
 */
enum { FK_O_PD = FK_OBJ_PD, FK_O_MR = FK_OBJ_MR, FK_O_CQ = FK_OBJ_CQ, FK_O_SRQ = FK_OBJ_SRQ,
       FK_O_QP = FK_OBJ_QP, FK_O_AH = FK_OBJ_AH, FK_O_XRCD = FK_OBJ_XRCD };
#define FK_O_NONE	FK_NO_HANDLE
struct fk_refs {
	uint32_t pd, scq, rcq, srq, xrcd;
};
int fk_obj_create(struct fk_client *c, int type, uint32_t sub, const struct fk_refs *refs,
		  uint32_t *handle);
/* References to a PD alone (FK_O_NONE for none): what an MR, an AH or a basic
 * SRQ names. */
static inline struct fk_refs fk_refs_pd(uint32_t pd)
{
	return (struct fk_refs){ .pd = pd, .scq = FK_O_NONE, .rcq = FK_O_NONE,
				 .srq = FK_O_NONE, .xrcd = FK_O_NONE };
}

/* fk_obj_create of an object that names a PD alone. */
static inline int fk_obj_create_on_pd(struct fk_client *c, int type, uint32_t sub,
				      uint32_t pd, uint32_t *handle)
{
	struct fk_refs refs = fk_refs_pd(pd);

	return fk_obj_create(c, type, sub, &refs, handle);
}
int fk_obj_destroy(struct fk_client *c, int type, uint32_t handle);
/*
 * ibv_rereg_mr's command on MR handle mr: flags IBV_REREG_MR_CHANGE_* (the
 * kernel's IB_MR_REREG_* values); pd is read with the PD flag, access with
 * the ACCESS one, start and hca_va with TRANSLATION. The MR keeps its
 * handle, the use of a PD moves to the new one; *pd_now (may be NULL) is
 * the handle of the PD the MR is on afterwards, as the daemon resolved it.
 */
int fk_mr_rereg(struct fk_client *c, uint32_t mr, unsigned flags, uint32_t pd, int access,
		uint64_t start, uint64_t hca_va, uint32_t *pd_now);

/* XRC SRQs: a number in the domain; holds the domain, the XRCD handle, the
 * CQ and the PD (each resolved as above, XRCD first: SRQX-08/09). */
int fk_srq_create_xrc(struct fk_client *c, uint32_t pd, uint32_t cq, uint32_t xrcd_handle,
		      uint32_t *handle, uint32_t *srqn);
int fk_srq_destroy(struct fk_client *c, uint32_t handle);

/* XRC target QPs (QPX-03, OPENQP-*, LIFE-*). user: returned in events. */
int fk_tgt_qp_create(struct fk_client *c, uint32_t xrcd_handle, uint64_t user,
		     uint32_t *qpn, uint32_t *qp_handle);
int fk_tgt_qp_open(struct fk_client *c, uint32_t xrcd_handle, uint32_t qpn,
		   enum ibv_qp_type type, unsigned quirks, uint64_t user,
		   uint32_t *qp_handle);
int fk_tgt_qp_destroy(struct fk_client *c, uint32_t qp_handle);
/* attr is read member by member (never rate_limit: 136-byte callers are
 * fine); *state (may be NULL) receives the new state. */
int fk_tgt_qp_modify(struct fk_client *c, uint32_t qp_handle, const struct ibv_qp_attr *attr,
		     int attr_mask, unsigned quirks, enum ibv_qp_state *state);
/* Fills every member of attr but rate_limit and cap (the real QP's state). */
int fk_tgt_qp_query(struct fk_client *c, uint32_t qp_handle, struct ibv_qp_attr *attr);
/* Raise a QP event on the real QP: every handle hears it (LIFE-08); the
 * QP_FATAL, QP_REQ_ERR and QP_ACCESS_ERR events also move it to ERR. */
int fk_event_raise(struct fk_client *c, uint32_t qp_handle, enum ibv_event_type type);

/*
 * The data path's rendezvous (packets never pass through the daemon):
 * fk_ring_set registers the receive ring (a memfd) of this connection's
 * process; fk_route asks where a packet goes: kind FK_ROUTE_QPN with a
 * destination QPN (and, for an XRC target QP, the SRQ it names), or
 * FK_ROUTE_CONN with a connection id (where responses go). On success
 * with gate FK_GATE_OK, out->fd is a new fd of the ring (the caller closes
 * it) of connection out->conn_id, and for a target QP out->xrcd_id its
 * domain (the responder checks the SRQ against it: WR-03); otherwise
 * out->fd is -1 and gate says why (the target QP cannot receive; no SRQ of
 * that number). ENOENT: nobody there. quirks: the request's flags
 * (FK_Q_XRC_IGNORE_REMOTE_SRQN). struct fk_route: uapi/proto.h.
 */
/*
 * The context's file (a uverbs file's stand-in, kernel/README.md):
 * fk_ctx_fd makes it for this connection and gives the caller its fd (the
 * context's cmd_fd, O_CLOEXEC; the caller closes it); the connection's
 * objects then live until the connection is closed and every copy of that
 * fd in any process is too. fk_ctx_import makes a fresh connection (no
 * object yet) a second context of the file of fd: its requests act on that
 * file's objects (EINVAL: not such a file; ENODEV: another device's;
 * EBADF: fd is not open). fk_obj_import looks a PD or an MR up by handle in
 * the file (ENOENT: none, EINVAL: another type); for an MR whose bytes its
 * registering process shares (fe_mem.h), out->fd is that process's ring
 * memfd (the caller closes it) and out->moff where they are, else -1.
 * fk_mr_keys tells the file an MR's registration, which fk_obj_import
 * answers.
 */
struct fk_import {
	uint32_t handle, pd, lkey, rkey;
	int access;
	uint64_t length, iova, moff;
	int fd;
};
struct fk_mr_reg {
	uint32_t lkey, rkey;
	int access;
	bool mapped;			/* moff: where in the ring memfd */
	uint64_t length, iova, moff;
};
int fk_ctx_fd(struct fk_client *c, int *fd);
/* CTX_HELD: after this process closed its cmd_fd, is the file open elsewhere? */
int fk_ctx_held(struct fk_client *c, bool *held);
int fk_ctx_import(struct fk_client *c, int fd, uint32_t *owner_id);
int fk_obj_import(struct fk_client *c, int type, uint32_t handle, unsigned quirks,
		  struct fk_import *out);
int fk_mr_keys(struct fk_client *c, uint32_t mr, const struct fk_mr_reg *reg);

/*
 * fork(): fk_fork_init (once; fk_connect calls it too) registers handlers
 * that take the library's locks before fork, and give the child fresh ones
 * and turn every connection it inherited into a dead one: calls on it fail
 * with ECONNRESET, and fk_disconnect only closes the child's copy of the
 * socket (the parent's connection goes on). A caller with locks of its own
 * around fk_* calls registers its handlers after calling this.
 */
void fk_fork_init(void);

/*
 * The daemon's route epoch: it changes before the daemon serves anything
 * that may change a route's answer (and when a connection goes). A route
 * learned after reading epoch E stays good while fk_epoch still says E.
 * 0: none (an older daemon): keep nothing.
 */
uint64_t fk_epoch(const struct fk_client *c);
int fk_ring_set(struct fk_client *c, int memfd);
int fk_route(struct fk_client *c, int kind, uint32_t num, uint32_t srqn, unsigned quirks,
	     struct fk_route *out);

/* The daemon's state as text (see fake-provider/kernel/dump.c), NUL-

 * terminated; ENOSPC if it did not fit (buf then holds the start). */
int fk_dump(struct fk_client *c, char *buf, size_t len);

#endif /* FK_CLIENT_H */
