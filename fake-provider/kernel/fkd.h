/* SPDX-License-Identifier: MIT */
/*
 * Internals of the fake kernel daemon (ibvct-fkd): connections (server.c),
 * the device-wide object tables and their lifetime rules (state.c), the
 * text dump (dump.c), logging (log.c) and start-up (main.c).
 * Single-threaded: one poll loop owns everything, so nothing here locks.
 */
#ifndef FKD_H
#define FKD_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#include "fp_list.h"
#include "proto.h"
#include "qp_modify.h"

/* ---- objects (state.c) --------------------------------------------------- */
/* One RDMA device: its numbers and domains (kernel ib_uverbs_device). */
struct fk_dev {
	struct fp_link link;		/* fk_devs */
	char name[FK_DEVNAME_MAX];
	enum fk_lifetime lifetime;	/* agreed by every connection to it */
	uint32_t kflags;		/* FK_HELLO_DEVICE_FLAGS: its kernel, agreed too */
	unsigned nconns;
	uint32_t next_qpn, next_srqn;
	struct fp_link xrcds;		/* struct fk_xrcd.link */
	struct fp_link qpns;		/* struct fk_num.dev_link: non-TGT QPs */
	struct fp_link srqns;		/* struct fk_num.dev_link: every SRQ */
};

/* An XRC domain (kernel ib_xrcd). */
struct fk_xrcd {
	struct fp_link link;
	struct fk_dev *dev;
	uint32_t id;			/* daemon-wide, for dumps */
	int inode_fd;			/* pins the inode (igrab); -1: fd == -1 domain */
	dev_t st_dev;
	ino_t st_ino;
	unsigned usecnt;		/* handles + XRC SRQs + real TGT QPs (XRCD-14, LIFE-05) */
	struct fp_link tgt_qps;		/* struct fk_rqp.link */
};

/* A real XRC target QP, kept in its domain. */
struct fk_rqp {
	struct fp_link link;
	struct fk_xrcd *xrcd;
	uint32_t qpn;
	unsigned usecnt;		/* handles (LIFE-01) */
	bool orphan;			/* seed: a leftover, no handle (still holds its domain) */
	bool unheld;			/* leftover under leftover_drops_domain: holds no use */
	bool dead;			/* killed under tgt_destroy_kills_real_qp: handles only */
	struct fp_link handles;		/* struct fk_hqp.real_link */
	struct fk_qp_attr attr;		/* qp_state is the state */
};

struct fk_conn;

/* An MR's registration as the driver made it (MR_KEYS). */
struct fk_mr_info {
	uint32_t lkey, rkey, access, flags;
	uint64_t length, iova, moff;
};

/*
 * One entry of a connection's object table (a kernel ib_uobject): its
 * handle is its index. usecnt counts the live objects of the table that
 * hold it through ref[] (the kernel's pd/cq/srq usecnt, and for an XRCD
 * the handle's refcnt: SRQs, TGT QPs created and QPs opened through it).
 * obj: the XRCD handle, TGT QP handle or XRC SRQ behind it, else NULL.
 */
struct fk_uobj {
	uint32_t type;			/* enum fk_obj_type */
	uint32_t sub;			/* SRQ type, QP type */
	uint32_t handle;
	unsigned usecnt;
	struct fk_uobj *ref[FK_NREF];
	void *obj;
	bool closed;			/* destroyed under a quirk while held: no lookups */
	struct fk_mr_info mri;		/* MR: what MR_KEYS told (zero before) */
	struct fk_conn *mrc;		/* MR: the connection whose ring holds its bytes */
};

/* A connection's XRCD handle (kernel uxrcd). */
struct fk_hxrcd {
	struct fp_link link;		/* conn->xrcds */
	struct fk_conn *conn;
	uint32_t handle;
	struct fk_uobj *uo;		/* its table entry; uo->usecnt is the refcnt */
	struct fk_xrcd *xrcd;
	bool closed;			/* closed under a quirk while referenced */
};

/* A connection's handle on a real TGT QP. */
struct fk_hqp {
	struct fp_link link;		/* conn->qps */
	struct fp_link real_link;	/* rqp->handles */
	struct fk_conn *conn;
	uint32_t handle;
	struct fk_uobj *uo;
	struct fk_rqp *rqp;
	struct fk_hxrcd *hx;
	uint64_t user;
	bool opened;
	struct fk_conn *evc;		/* where its events go: the connection that made it */
};

/* A number a connection holds: a QPN (non-TGT QP) or an SRQN (any SRQ). */
struct fk_num {
	struct fp_link dev_link;
	struct fp_link conn_link;
	uint32_t num;
	struct fk_conn *conn;
	struct fk_uobj *uo;		/* XRC SRQ: its table entry */
	struct fk_hxrcd *hx;		/* XRC SRQ: the handle it was made through */
	struct fk_xrcd *xrcd;		/* XRC SRQ: its domain */
	struct fk_conn *via;		/* the connection that made it (its process serves it) */
};

/* The ports and limits modify is checked against: qp_modify.h's fk_qp_limits. */

/* ---- connections (server.c) ----------------------------------------------- */
struct fk_outmsg {
	struct fk_outmsg *next;
	int fd;				/* sent with the message (SCM_RIGHTS), then closed; -1 */
	size_t len;
	unsigned char buf[];
};

struct fk_conn {
	struct fp_link link;		/* fk_conns */
	int fd;
	uint32_t id;
	pid_t pid;			/* SO_PEERCRED */
	uint32_t claimed_pid;
	bool hello, monitor, dead;
	struct fk_dev *dev;
	struct fk_qp_limits lim;
	int ring_fd;			/* the data path's receive ring of the process; -1 */
	uint32_t quirks;		/* FK_HQ_* from HELLO */
	struct fk_uobj **tab;		/* the object table, by handle */
	uint32_t tab_len;
	struct fp_link xrcds, qps, srqs, qpns;
	struct fk_outmsg *out_head, *out_tail;
	size_t out_bytes;
	/*
	 * The context's file (a uverbs ufile): CTX_FD makes a socketpair, the
	 * daemon keeps ufd and hands the other end out as the context's cmd_fd
	 * (uino: its inode, how CTX_IMPORT recognises a copy of it). The state
	 * above (the object table and lists) is the file's: it lives until the
	 * connection is gone AND the last copy of the fd anywhere is closed
	 * (ufd reads POLLHUP). A connection whose socket closed first keeps
	 * the state with gone set and fd = ufd (polled for the hang-up only).
	 * uf: a connection that imported another's file acts on uf's state.
	 */
	int ufd;
	dev_t udev;
	ino_t uino;
	bool gone;
	bool ended;			/* released: the struct goes at the end of the round */
	struct fk_conn *uf;
	int ifd;			/* an importer's copy of uf's fd: it holds the file */
	unsigned nimporters;		/* connections with uf == this */
	struct fk_ghost {		/* the last objects destroyed (import_stale_handle) */
		uint32_t handle, type, pd;
		struct fk_mr_info mri;
	} ghost[8];
	unsigned nghost;
};

/* ---- cross-file ------------------------------------------------------------ */
extern struct fp_link fk_conns;		/* every connection */
extern struct fp_link fk_devs;		/* every device with a connection */
extern int fk_verbose;

/* log.c; each line goes to fk__vlog, the daemon's (main.c) or a harness's */
void fk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fk_logv(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* -v only */
void fk__vlog(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Queue a message on a connection (two payload parts); a connection whose
 * queue passes its bound is marked dead. */
void fk__send(struct fk_conn *c, uint32_t type, uint32_t seq,
	      const void *p1, size_t n1, const void *p2, size_t n2);
/* The same with an fd that the queue owns (closed once sent or dropped). */
void fk__send_fd(struct fk_conn *c, uint32_t type, uint32_t seq,
		 const void *p, size_t n, int fd);


/* state.c: each returns 0 or a positive errno. */
int fk__hello(struct fk_conn *c, const char *devname, enum fk_lifetime life, uint32_t kflags,
	      const struct fk_qp_limits *lim);
/* The fake host's script (ibvct-fkd -s), NULL when started without one: a
 * client's device, limits and lifetime model must then match it. */
struct fp_script;
extern const struct fp_script *fk_world;
void fk__conn_release(struct fk_conn *c);	/* disconnect: XRCD-17, LIFE-04/05 */
int fk__num_alloc(struct fk_conn *c, bool srq, uint32_t *num);
int fk__num_free(struct fk_conn *c, bool srq, uint32_t num);
int fk__xrcd_open(struct fk_conn *c, int fd, uint32_t oflags, uint32_t flags,
		  uint32_t *handle, uint32_t *id);
int fk__xrcd_close(struct fk_conn *c, uint32_t handle, uint32_t flags);
int fk__srq_create_xrc(struct fk_conn *c, const struct fk_req_obj *req, uint32_t *handle,
		       uint32_t *srqn);
int fk__srq_destroy(struct fk_conn *c, uint32_t handle);
int fk__obj_create(struct fk_conn *c, const struct fk_req_obj *req, uint32_t *handle);
int fk__obj_destroy(struct fk_conn *c, uint32_t handle, uint32_t type);
/* ibv_rereg_mr's command: the MR keeps its handle; *pd: the PD it is on now. */
int fk__mr_rereg(struct fk_conn *c, const struct fk_req_mr_rereg *r, uint32_t *pd);
int fk__tgt_create(struct fk_conn *c, uint32_t xrcd_handle, uint64_t user,
		   uint32_t *handle, uint32_t *qpn);
int fk__tgt_open(struct fk_conn *c, uint32_t xrcd_handle, uint32_t qpn, uint32_t type,
		 uint32_t flags, uint64_t user, uint32_t *handle);
int fk__tgt_destroy(struct fk_conn *c, uint32_t handle);
int fk__tgt_modify(struct fk_conn *c, uint32_t handle, uint32_t mask, uint32_t flags,
		   const struct fk_qp_attr *attr, uint32_t *state);
int fk__tgt_query(struct fk_conn *c, uint32_t handle, struct fk_qp_attr *attr);
int fk__event_raise(struct fk_conn *c, uint32_t handle, uint32_t type);
/* Import (OBJ_IMPORT), the keys of an MR (MR_KEYS), and a connection leaving
 * a file that outlives it (its routes and events go: fk__conn_detach). */
int fk__obj_import(struct fk_conn *c, const struct fk_req_obj_import *r,
		   struct fk_rep_import *rep, struct fk_conn **ring);
int fk__mr_keys(struct fk_conn *c, const struct fk_req_mr_keys *r);
void fk__conn_detach(struct fk_conn *s, struct fk_conn *c);
/* The connection whose request is being served (server.c), else NULL: the
 * objects it makes are served by its process. */
extern struct fk_conn *fk__cur;
/* Where a packet to num goes (struct fk_req_route); *owner: the connection
 * whose ring receives it, when rep->gate is FK_GATE_OK. */
int fk__route(struct fk_conn *c, const struct fk_req_route *req, struct fk_rep_route *rep,
	      struct fk_conn **owner);
/* Self-check of every table and count; returns the number of problems
 * (written to the dump). */
unsigned fk__state_check(char *buf, size_t len, size_t *used);

/* server.c */
extern volatile sig_atomic_t fk_stop;
/* One round of the poll loop in pieces, so that an in-process harness
 * (fake-provider/fuzz/) drives the same code over its own socketpairs:
 * a connection on an accepted socket; read what it sent (up to a burst);
 * send what is queued; its hang-up; the end-of-round free of dead ones. */
struct fk_conn *fk__conn_new(int fd, pid_t pid);
void fk__conn_read(struct fk_conn *c);
void fk__conn_flush(struct fk_conn *c);
void fk__conn_hangup(struct fk_conn *c);
void fk__reap(void);
int fk__serve(int lfd, int lockfd, bool exit_when_idle, const char *sock_path,
	      const char *pid_path, const sigset_t *run_mask);
void fk__release_all(void);
/* The route epoch's shared word (server.c), made once at start: 0 or -1. */
int fk__epoch_init(void);

/* dump.c: the whole state as text; returns bytes written (truncated to len). */
size_t fk__dump(char *buf, size_t len);

#endif /* FKD_H */
