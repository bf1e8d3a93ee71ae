/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel's wire protocol, shared by the daemon (ibvct-fkd) and its
 * client library (fake-provider/verbs/fk_client.c). One message per packet on
 * an AF_UNIX SOCK_SEQPACKET socket: a fixed header, then a bounded payload
 * whose size is fixed per type (except the dump text in a reply). Every
 * struct has only fixed-size members and explicit padding, which must be 0.
 * Any change to a layout or a meaning bumps FK_PROTO_VERSION.
 */
#ifndef FK_PROTO_H
#define FK_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "fk_ufile.h"

#define FK_MAGIC		0x31444b46u	/* "FKD1" in memory order */
#define FK_PROTO_VERSION	6u
#define FK_REQ_MAX		256u		/* largest request payload */
#define FK_REPLY_MAX		65536u		/* largest reply payload (dump) */
#define FK_DEVNAME_MAX		64u

/* The name of a context's file (FK_UFILE_NAME_FMT) is in fk_ufile.h, the
 * part of this interface the verbs library includes. */
#define FK_MAX_PORTS		4u

#define FK_SOCK_NAME		"fkd.sock"
#define FK_LOCK_NAME		"lock"
#define FK_PID_NAME		"fkd.pid"
#define FK_LOG_NAME		"fkd.log"

struct fk_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;			/* enum fk_msg_type, | FK_MSG_REPLY in replies */
	uint32_t length;		/* payload bytes after the header */
	uint32_t seq;			/* echoed in the reply; 0 in pushed events */
};

/* The message types: one row each in fk_msgs.def. */
enum fk_msg_type {
	FK_MSG__NONE = 0,
#define FK_MSG(NAME, name, req, rep, needs) FK_MSG_##NAME,
#include "fk_msgs.def"
#undef FK_MSG
	FK_MSG__COUNT
};
/* What a message needs of its connection (fk_msgs.def, kernel/server.c). */
#define FK_NEEDS_HELLO		0x1u	/* the connection's HELLO first (EPROTO) */
#define FK_NEEDS_DEVICE		0x2u	/* a device, not a monitor (EPERM) */
#define FK_NEEDS_EPOCH		0x4u	/* may change routes: the epoch moves */
#define FK_NEEDS_FD		0x8u	/* may bring one fd */
#define FK_MSG_REPLY		0x8000u
#define FK_MSG_EVENT		0x4001u		/* daemon -> client push, no reply */

/*
 * Object handles (version 4): every uverbs object a connection makes gets a
 * handle from ONE table per connection, the lowest free number from 0, as
 * the kernel allocates uobject ids per open device file (xa_alloc on
 * ufile->idr, linux drivers/infiniband/core/rdma_core.c
 * alloc_begin_idr_uobject). A request names the objects it uses by these
 * handles; the daemon resolves each in the asking connection's table and
 * type-checks it (EINVAL otherwise, as uobj_get_obj_read fails).
 */
enum fk_obj_type {
	FK_OBJ_PD = 1, FK_OBJ_MR, FK_OBJ_CQ, FK_OBJ_SRQ, FK_OBJ_QP, FK_OBJ_AH, FK_OBJ_XRCD,
	FK_OBJ__COUNT
};
#define FK_NO_HANDLE		0xffffffffu	/* a reference slot that names nothing */
/* The reference slots of OBJ_CREATE and SRQ_CREATE_XRC. */
enum { FK_REF_PD = 0, FK_REF_SCQ, FK_REF_RCQ, FK_REF_SRQ, FK_REF_XRCD, FK_NREF };
/* OBJ_CREATE sub-kinds: an SRQ's type, a QP's type (enum ibv_*_type). */

/* Lifetime models of XRC target QPs (spec section 5). */
enum fk_lifetime { FK_LIFE_CURRENT = 0, FK_LIFE_SEED = 1 };

/* Request flags. HELLO: */
#define FK_HELLO_MONITOR	0x1u	/* no device: only DUMP (tests, debugging) */
/* The kernel release the device's daemon plays (ref-impl's ibvct-release.def:
 * Linux 6.1 without this bit, 6.12 with it), and whether the device has
 * IB_DEVICE_FLUSH_GLOBAL and _PERSISTENT (rxe on 6.12): one answer for
 * every connection to a device, like its lifetime model. */
#define FK_HELLO_LINUX_6_12	0x2u
#define FK_HELLO_DEV_FLUSH	0x4u
#define FK_HELLO_DEVICE_FLAGS	(FK_HELLO_LINUX_6_12 | FK_HELLO_DEV_FLUSH)
/*
 * Quirks (script/fp_quirks.def, a row each): the kernel rules a request is
 * served without, the plugin's scripted misbehaviours. A row's WHERE names
 * the message whose word carries its bit FK_Q_<ID>: HELLO's quirks (for
 * every request of the connection) or the request's flags; a PLUGIN row's
 * FK_Q_ is 0 (the daemon never sees it).
 */
enum fk_quirk_where {
	FK_QW_PLUGIN = 0,
#define FK_MSG(NAME, name, req, rep, needs) FK_QW_##NAME = FK_MSG_##NAME,
#include "fk_msgs.def"
#undef FK_MSG
};
enum fk_quirk_bit {
#define FP_QUIRK(id, name, where, bit, what) \
	FK_Q_##id = FK_QW_##where == FK_QW_PLUGIN ? 0u : 1u << (bit),
#include "fp_quirks.def"
#undef FP_QUIRK
};
/* Every bit the table gives message type's word (HELLO: the connection's
 * quirks): what the daemon accepts there, EINVAL for any other bit. */
uint32_t fk_quirk_flags(uint32_t type);
/* The bits of that word for the quirks script s has on (the plugin's side). */
struct fp_script;
uint32_t fk_quirk_bits(const struct fp_script *s, uint32_t type);
/* 0, or -1 with why: two rows of one word share a bit. */
int fk_quirk_table_check(char *why, size_t len);

/* ---- requests ----------------------------------------------------------- */
struct fk_req_hello {
	char devname[FK_DEVNAME_MAX];	/* NUL-terminated, [A-Za-z0-9_.-] */
	uint32_t lifetime;		/* enum fk_lifetime */
	uint32_t flags;			/* FK_HELLO_* */
	uint32_t nports;		/* 1..FK_MAX_PORTS (0 for a monitor) */
	uint32_t max_rd_atom;		/* 0: unchecked */
	uint32_t max_dest_rd_atom;	/* 0: unchecked */
	uint32_t client_pid;		/* informational (dumps); the daemon uses SO_PEERCRED */
	uint16_t pkey_tbl_len[FK_MAX_PORTS];
	uint32_t quirks;			/* FK_Q_* of HELLO's quirks */
	uint32_t reserved;
};

struct fk_req_num {			/* QPN_FREE, SRQN_FREE, RING_SET, DUMP */
	uint32_t num;
	uint32_t reserved;
};

struct fk_req_handle {			/* XRCD_CLOSE, SRQ_DESTROY, TGT_QP_DESTROY, TGT_QP_QUERY */
	uint32_t handle;
	uint32_t flags;
};

struct fk_req_xrcd_open {		/* an fd travels with it (SCM_RIGHTS) iff has_fd */
	uint32_t has_fd;
	uint32_t oflags;		/* only O_CREAT and O_EXCL are read */
	uint32_t flags;
	uint32_t reserved;
};

struct fk_req_tgt_create {
	uint32_t xrcd_handle;
	uint32_t reserved;
	uint64_t user;			/* echoed in events for this handle (user_handle) */
};

struct fk_req_tgt_open {
	uint32_t xrcd_handle;
	uint32_t qpn;
	uint32_t qp_type;		/* must be IBV_QPT_XRC_RECV (OPENQP-04) */
	uint32_t flags;
	uint64_t user;
};

/* OBJ_CREATE: a PD, MR, CQ, AH, basic SRQ or non-target QP (sub: its type);
 * SRQ_CREATE_XRC: an XRC SRQ (pd, scq, xrcd). ref[]: handles or FK_NO_HANDLE.
 * Reply fk_rep_pair: a = handle (b = srqn for an XRC SRQ). */
struct fk_req_obj {
	uint32_t type;			/* enum fk_obj_type */
	uint32_t sub;
	uint32_t ref[FK_NREF];
	uint32_t flags;
};

/* OBJ_DESTROY: the handle and the type the caller believes it has. */
struct fk_req_obj_destroy {
	uint32_t handle;
	uint32_t type;
};

/*
 * MR_REREG (version 5): ibv_rereg_mr's command (ib_uverbs_rereg_mr). The MR
 * keeps its handle; flags say what changes (FK_REREG_*, the kernel's
 * IB_MR_REREG_* values, which are libibverbs' IBV_REREG_MR_CHANGE_*):
 * pd_handle is read with FK_REREG_PD, access with FK_REREG_ACCESS, start and
 * hca_va with FK_REREG_TRANS. Reply fk_rep_pair: a = the MR's handle, b = the
 * handle of the PD it is on now.
 */
#define FK_REREG_TRANS		0x1u
#define FK_REREG_PD		0x2u
#define FK_REREG_ACCESS		0x4u
#define FK_REREG_ALL		0x7u
struct fk_req_mr_rereg {
	uint32_t mr_handle;
	uint32_t flags;
	uint32_t pd_handle;
	uint32_t access;		/* enum ibv_access_flags */
	uint64_t start, hca_va;
};

/*
 * OBJ_IMPORT: what ibv_import_pd and ibv_import_mr ask of the context's file
 * (mlx5's MLX5_IB_METHOD_PD_QUERY, the core's UVERBS_METHOD_QUERY_MR): the
 * object of that handle and type in the file the connection acts on.
 * flags: the quirk bits of OBJ_IMPORT's rows.
 */
struct fk_req_obj_import {
	uint32_t handle;
	uint32_t type;			/* FK_OBJ_PD or FK_OBJ_MR */
	uint32_t flags;
	uint32_t reserved;
};

/* MR_KEYS: what the driver made of a registration (its keys, access, range)
 * and, when its bytes are in the memfd of the process's receive ring
 * (FK_MR_MAPPED, engine/fe_mem.h), where: kept with the MR's handle for
 * UVERBS_METHOD_QUERY_MR, and for an importer in another process to map. */
#define FK_MR_MAPPED		0x1u
struct fk_req_mr_keys {
	uint32_t mr_handle;
	uint32_t lkey, rkey, access;
	uint32_t flags;			/* FK_MR_MAPPED */
	uint32_t reserved;
	uint64_t length, iova, moff;
};

struct fk_ah_wire {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint16_t dlid;
	uint8_t sgid_index, hop_limit, traffic_class, sl, src_path_bits, static_rate;
	uint8_t is_global, port_num;
	uint8_t pad[2];
};

/* The attributes of a real QP that modify sets and query returns. */
struct fk_qp_attr {
	uint32_t qp_state, cur_qp_state, path_mtu, path_mig_state, qkey;
	uint32_t rq_psn, sq_psn, dest_qp_num, qp_access_flags;
	uint16_t pkey_index, alt_pkey_index;
	uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic;
	uint8_t min_rnr_timer, port_num, timeout, retry_cnt;
	uint8_t rnr_retry, alt_port_num, alt_timeout, pad;
	struct fk_ah_wire ah_attr, alt_ah_attr;
};

struct fk_req_modify {
	uint32_t qp_handle;
	uint32_t attr_mask;		/* enum ibv_qp_attr_mask */
	uint32_t flags;
	uint32_t reserved;
	struct fk_qp_attr attr;
};

struct fk_req_event {
	uint32_t qp_handle;
	uint32_t event_type;		/* a QP-affiliated enum ibv_event_type */
};

/* The data path's meeting point: each connection may register the receive
 * ring (a memfd) of the process behind it (RING_SET, payload fk_req_num of
 * zeros, the fd attached); ROUTE answers which ring a packet goes to, with a
 * dup of that ring's fd attached to a successful reply. Packets themselves
 * never pass through the daemon. */
enum { FK_ROUTE_QPN = 0, FK_ROUTE_CONN = 1 };
struct fk_req_route {
	uint32_t kind;			/* FK_ROUTE_* */
	uint32_t num;			/* destination QPN, or a connection id */
	uint32_t srqn;			/* the XRC SRQ, when num is a target QP */
	uint32_t flags;
};

/* ---- replies: every payload starts with fk_rep ---------------------------- */
struct fk_rep {
	int32_t status;			/* 0 or a positive errno */
	uint32_t reserved;
};

struct fk_rep_pair {			/* most replies: two numbers */
	struct fk_rep r;
	uint32_t a, b;
};
/* HELLO: a = connection id, b = daemon pid. QPN/SRQN_ALLOC: a = number.
 * XRCD_OPEN: a = handle, b = domain id. SRQ_CREATE_XRC: a = srqn, b = domain id.
 * TGT_QP_CREATE/OPEN: a = handle, b = qpn. TGT_QP_MODIFY: a = new state.
 * DUMP: fk_rep then the text (not NUL-terminated). Errors: a bare fk_rep. */

/* ROUTE: gate 0 = deliver to conn_id's ring (fd attached); otherwise no fd:
 * FK_GATE_NO_RECV, the target QP cannot receive (not RTR/RTS/SQD);
 * FK_GATE_BAD_SRQ, no SRQ of that number on the device. srqn is the SRQ to
 * deliver to (the named one, or the first of the domain under the quirk),
 * of any type and domain: xrcd_id names the QP's domain, which the
 * responder checks it against (WR-03).
 * qp_access: the target QP's qp_access_flags, which the responder enforces
 * (its process may hold no proxy of that QP); rnr_timer: its min_rnr_timer,
 * which an RNR NAK of that responder carries. */
enum { FK_GATE_OK = 0, FK_GATE_NO_RECV = 1, FK_GATE_BAD_SRQ = 2 };
struct fk_rep_route {
	struct fk_rep r;
	uint32_t conn_id, srqn, gate, xrcd_id;
	uint32_t qp_access, rnr_timer;
};
/* The ROUTE answer as the client hands it on (verbs/fk_client.h fk_route,
 * read by the engine's transport): fd is a new fd of the ring (gate
 * FK_GATE_OK), else -1. */
struct fk_route {
	uint32_t conn_id, srqn, gate, xrcd_id;
	uint32_t qp_access;		/* a target QP's qp_access_flags (gate OK) */
	uint32_t rnr_timer;		/* and its min_rnr_timer */
	int fd;
};

/* OBJ_IMPORT: the handle (as asked, or another under a quirk) and, for an
 * MR, what MR_KEYS told (QUERY_MR's LKEY, RKEY and LENGTH, and what the
 * fake HCA needs besides: the access, the iova, the handle of its PD), with
 * a dup of the ring memfd holding its bytes and their offset when
 * FK_MR_MAPPED (and the process that registered it still serves it). */
struct fk_rep_import {
	struct fk_rep r;
	uint32_t handle, lkey, rkey, access;
	uint32_t flags, pd;
	uint64_t length, iova, moff;
};

struct fk_rep_query {
	struct fk_rep r;
	struct fk_qp_attr attr;
};

/* ---- pushed event --------------------------------------------------------- */
struct fk_event_msg {
	uint32_t qp_handle;		/* the receiving connection's handle */
	uint32_t event_type;
	uint32_t qpn;
	uint32_t reserved;
	uint64_t user;			/* what that handle's creator/opener passed */
};

_Static_assert(sizeof(struct fk_hdr) == 16, "fk_hdr layout");
_Static_assert(sizeof(struct fk_req_hello) == 104, "fk_req_hello layout");
_Static_assert(sizeof(struct fk_ah_wire) == 32, "fk_ah_wire layout");
_Static_assert(sizeof(struct fk_qp_attr) == 116, "fk_qp_attr layout");
_Static_assert(sizeof(struct fk_req_modify) == 132, "fk_req_modify layout");
_Static_assert(sizeof(struct fk_event_msg) == 24, "fk_event_msg layout");
_Static_assert(sizeof(struct fk_rep_route) == 32, "fk_rep_route layout");
_Static_assert(sizeof(struct fk_req_obj) == 32, "fk_req_obj layout");
_Static_assert(sizeof(struct fk_req_mr_rereg) == 32, "fk_req_mr_rereg layout");
_Static_assert(sizeof(struct fk_req_obj_import) == 16, "fk_req_obj_import layout");
_Static_assert(sizeof(struct fk_req_mr_keys) == 48, "fk_req_mr_keys layout");
_Static_assert(sizeof(struct fk_rep_import) == 56, "fk_rep_import layout");

/* One row of fk_msgs.def, indexed by type (proto.c). */
struct fk_msg_info {
	const char *name;
	uint32_t req_size;		/* the request's exact payload size */
	uint32_t rep_size;		/* a success reply's (DUMP's: before the text) */
	uint32_t needs;			/* FK_NEEDS_* */
};
/* The row of a request type, NULL if the type is unknown. */
const struct fk_msg_info *fk_msg_info(uint32_t type);
/* The exact payload size of a request type, 0 if the type is unknown. */
static inline uint32_t fk_proto_req_size(uint32_t type)
{
	const struct fk_msg_info *m = fk_msg_info(type);

	return m ? m->req_size : 0;
}
/* A type's name for logs and dumps ("event" for a pushed event, "unknown"). */
const char *fk_msg_name(uint32_t type);

static inline void fk_proto_hdr_init(struct fk_hdr *h, uint32_t type, uint32_t len,
				     uint32_t seq)
{
	h->magic = FK_MAGIC;
	h->version = FK_PROTO_VERSION;
	h->type = (uint16_t)type;
	h->length = len;
	h->seq = seq;
}

/*
 * The run dir, the same for both sides: IBVCT_RUNDIR, else
 * $XDG_RUNTIME_DIR/ibvct, else /tmp/ibvct-<uid>. Made 0700 if missing; an
 * existing one must be a real directory of this user that nobody else can
 * enter (the socket's only access control besides SO_PEERCRED).
 * Returns 0 or a positive errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The socket address in a run dir; 0 or ENAMETOOLONG. */
static inline int fk_proto_addr(struct sockaddr_un *sa, const char *rundir)
{
	size_t n = strlen(rundir);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n + sizeof("/" FK_SOCK_NAME) > sizeof(sa->sun_path))
		return ENAMETOOLONG;
	memcpy(sa->sun_path, rundir, n);
	memcpy(sa->sun_path + n, "/" FK_SOCK_NAME, sizeof("/" FK_SOCK_NAME));
	return 0;
}

static inline int fk_proto_rundir(char *out, size_t len)
{
	const char *env = getenv("IBVCT_RUNDIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (env && env[0])
		n = snprintf(out, len, "%s", env);
	else if (xdg && xdg[0])
		n = snprintf(out, len, "%s/ibvct", xdg);
	else
		n = snprintf(out, len, "/tmp/ibvct-%lu", (unsigned long)geteuid());
	/* room for "/fkd.sock" within sun_path */
	if (n < 0 || (size_t)n + sizeof("/" FK_SOCK_NAME) > len || n + 10 > 107)
		return ENAMETOOLONG;
	if (mkdir(out, 0700) && errno != EEXIST)
		return errno;
	if (lstat(out, &st))
		return errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return EACCES;
	return 0;
}

#endif /* FK_PROTO_H */
