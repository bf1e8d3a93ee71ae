/* SPDX-License-Identifier: MIT */
/*
 * The daemon's connections: one poll loop over the listening socket and
 * every client (SOCK_SEQPACKET, so a packet is a message and an fd travels
 * with its message), SO_PEERCRED refusal of other users, decoding and
 * validation of every request before state.c sees it, replies and pushed
 * events through bounded per-connection queues, and the idle exit that
 * the client-side start lock makes race-free.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fkd.h"
#include "fp_clock.h"
#include "fp_fdpass.h"

#define FK_MAX_CONNS	1024
#define FK_OUTQ_MAX	(4u << 20)	/* a client that never reads is dropped */
#define FK_READ_BURST	16		/* messages per connection per round */
#define FK_MAX_FDS	4		/* more in one message are closed unread */
_Static_assert(FK_MAX_FDS <= FP_FDPASS_MAX, "fds one receive takes");
#define FK_FIRST_CONN_GRACE_MS	10000	/* a spawner that never connects */

struct fp_link fk_conns = FP_LIST_HEAD_INIT(fk_conns);
static uint32_t fk_next_conn_id = 1;
static unsigned fk_nconns;
static char fk_dump_buf[FK_REPLY_MAX];
struct fk_conn *fk__cur;

/* ---- sending ---------------------------------------------------------------- */
void fk__conn_flush(struct fk_conn *c)
{
	while (c->out_head && !c->dead) {
		struct fk_outmsg *m = c->out_head;
		ssize_t n;

		n = fp_fd_send(c->fd, m->buf, m->len, m->fd, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			c->dead = true;
			return;
		}
		c->out_head = m->next;
		if (!c->out_head)
			c->out_tail = NULL;
		c->out_bytes -= m->len;
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
}

static void fk_outmsg_free(struct fk_outmsg *m)
{
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

static void fk_send_msg(struct fk_conn *c, uint32_t type, uint32_t seq,
			const void *p1, size_t n1, const void *p2, size_t n2, int fd)
{
	size_t len = sizeof(struct fk_hdr) + n1 + n2;
	struct fk_outmsg *m;
	struct fk_hdr h;

	if (c->dead || c->gone)	/* a file whose connection went: nobody to tell */
		goto err_close;
	if (c->out_bytes + len > FK_OUTQ_MAX) {
		fk_log("conn %u: output queue full, dropping the connection", c->id);
		c->dead = true;
		goto err_close;
	}
	m = malloc(sizeof(*m) + len);
	if (!m) {
		c->dead = true;
		goto err_close;
	}
	m->fd = fd;
	fk_proto_hdr_init(&h, type, (uint32_t)(n1 + n2), seq);
	memcpy(m->buf, &h, sizeof(h));
	if (n1)
		memcpy(m->buf + sizeof(h), p1, n1);
	if (n2)
		memcpy(m->buf + sizeof(h) + n1, p2, n2);
	m->len = len;
	m->next = NULL;
	if (c->out_tail)
		c->out_tail->next = m;
	else
		c->out_head = m;
	c->out_tail = m;
	c->out_bytes += len;
	fk__conn_flush(c);
	return;

err_close:
	if (fd >= 0)
		close(fd);
}

void fk__send(struct fk_conn *c, uint32_t type, uint32_t seq,
	      const void *p1, size_t n1, const void *p2, size_t n2)
{
	fk_send_msg(c, type, seq, p1, n1, p2, n2, -1);
}

void fk__send_fd(struct fk_conn *c, uint32_t type, uint32_t seq,
		 const void *p, size_t n, int fd)
{
	fk_send_msg(c, type, seq, p, n, NULL, 0, fd);
}

static void fk_reply(struct fk_conn *c, uint32_t type, uint32_t seq, int status)
{
	struct fk_rep r = { .status = status };

	fk__send(c, type | FK_MSG_REPLY, seq, &r, sizeof(r), NULL, 0);
}

static void fk_reply_pair(struct fk_conn *c, uint32_t type, uint32_t seq, int status,
			  uint32_t a, uint32_t b)
{
	struct fk_rep_pair r = { .r.status = status, .a = a, .b = b };

	if (status)
		fk_reply(c, type, seq, status);
	else
		fk__send(c, type | FK_MSG_REPLY, seq, &r, sizeof(r), NULL, 0);
}

/*
 * The route epoch: one shared word, read by every client (the memfd comes
 * with the HELLO reply), bumped before any request that may change what a
 * route lookup answers is served, and when a connection goes. A client
 * keeps the XRC routes it learned (the target QP's gate) only while the
 * epoch it read before asking is still current; the daemon serves one
 * request at a time, so no lookup sees a change half made.
 */
static int fk_epoch_fd = -1;
static uint64_t *fk_epoch_word;

int fk__epoch_init(void)
{
	void *m;
	int fd;

	if (fk_epoch_fd >= 0)
		return 0;
	fd = memfd_create("ibvct-fkd-epoch", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, 4096)) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -1;
	}
	fk_epoch_word = m;
	__atomic_store_n(fk_epoch_word, 1, __ATOMIC_RELEASE);
	fk_epoch_fd = fd;
	return 0;
}

static void fk_epoch_bump(void)
{
	if (fk_epoch_word)
		__atomic_add_fetch(fk_epoch_word, 1, __ATOMIC_SEQ_CST);
}

/* ---- requests --------------------------------------------------------------- */
static bool fk_devname_ok(const char *name)
{
	size_t i;

	for (i = 0; i < FK_DEVNAME_MAX && name[i]; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
			return false;
	}
	return i > 0 && i < FK_DEVNAME_MAX;
}

static int fk_hello(struct fk_conn *c, const struct fk_req_hello *r)
{
	struct fk_qp_limits lim = { 0 };
	uint32_t i;

	if (r->flags & ~(FK_HELLO_MONITOR | FK_HELLO_DEVICE_FLAGS) || r->lifetime > FK_LIFE_SEED ||
	    (r->quirks & ~fk_quirk_flags(FK_MSG_HELLO)) || r->reserved)
		return EINVAL;
	if (r->flags & FK_HELLO_MONITOR) {
		for (i = 0; i < FK_DEVNAME_MAX; i++)
			if (r->devname[i])
				return EINVAL;
		if (r->nports || r->max_rd_atom || r->max_dest_rd_atom || r->quirks ||
		    (r->flags & FK_HELLO_DEVICE_FLAGS))
			return EINVAL;
		for (i = 0; i < FK_MAX_PORTS; i++)
			if (r->pkey_tbl_len[i])
				return EINVAL;
		c->monitor = true;
		goto done;
	}
	if (!fk_devname_ok(r->devname) || r->nports < 1 || r->nports > FK_MAX_PORTS)
		return EINVAL;
	for (i = 0; i < FK_MAX_PORTS; i++) {
		if ((i < r->nports) != (r->pkey_tbl_len[i] != 0))
			return EINVAL;
		lim.pkey_tbl_len[i] = r->pkey_tbl_len[i];
	}
	lim.nports = r->nports;
	lim.max_rd_atom = r->max_rd_atom;
	lim.max_dest_rd_atom = r->max_dest_rd_atom;
	i = fk__hello(c, r->devname, (enum fk_lifetime)r->lifetime,
		      r->flags & FK_HELLO_DEVICE_FLAGS, &lim);
	if (i)
		return (int)i;
	c->quirks = r->quirks;
done:
	c->claimed_pid = r->client_pid;
	c->hello = true;
	return 0;
}

/*
 * The handlers, one per row of fk_msgs.def (fk_on_<name>): each gets a
 * request the table's checks passed (size, HELLO, device) and sends its
 * reply. k->fd is the fd the request brought (a FK_NEEDS_FD type), else
 * -1; a handler that keeps it sets k->fd to -1, any other is closed after.
 */
struct fk_call {
	struct fk_conn *c;			/* the connection: the reply goes here */
	struct fk_conn *s;		/* the file it acts on: c, or the one it imported */
	uint32_t type, seq;
	const void *req;		/* aligned scratch memory */
	int fd;
};

static void fk_on_hello(struct fk_call *k)
{
	struct fk_conn *c = k->c;
	struct fk_rep_pair rp = { .a = c->id, .b = (uint32_t)getpid() };
	int err = c->hello ? EISCONN : fk_hello(c, k->req);

	if (err || c->monitor)
		fk_reply_pair(c, k->type, k->seq, err, rp.a, rp.b);
	else	/* with the route epoch, when there is one */
		fk__send_fd(c, k->type | FK_MSG_REPLY, k->seq, &rp, sizeof(rp),
			    fk__epoch_init() >= 0 ? fcntl(fk_epoch_fd, F_DUPFD_CLOEXEC, 0) : -1);
}

static void fk_on_dump(struct fk_call *k)
{
	const struct fk_req_num *r = k->req;
	struct fk_rep rep = { 0 };
	size_t n;

	if (r->num || r->reserved) {
		fk_reply(k->c, k->type, k->seq, EINVAL);
		return;
	}
	n = fk__dump(fk_dump_buf, sizeof(fk_dump_buf) - sizeof(rep));
	fk__send(k->c, k->type | FK_MSG_REPLY, k->seq, &rep, sizeof(rep), fk_dump_buf, n);
}

static void fk_num_alloc(struct fk_call *k, bool srq)
{
	const struct fk_req_num *r = k->req;
	uint32_t a = 0;
	int err = (r->num || r->reserved) ? EINVAL : fk__num_alloc(k->s, srq, &a);

	fk_reply_pair(k->c, k->type, k->seq, err, a, 0);
}

static void fk_num_free(struct fk_call *k, bool srq)
{
	const struct fk_req_num *r = k->req;

	fk_reply(k->c, k->type, k->seq, r->reserved ? EINVAL : fk__num_free(k->s, srq, r->num));
}

static void fk_on_qpn_alloc(struct fk_call *k) { fk_num_alloc(k, false); }
static void fk_on_srqn_alloc(struct fk_call *k) { fk_num_alloc(k, true); }
static void fk_on_qpn_free(struct fk_call *k) { fk_num_free(k, false); }
static void fk_on_srqn_free(struct fk_call *k) { fk_num_free(k, true); }

static void fk_on_xrcd_open(struct fk_call *k)
{
	const struct fk_req_xrcd_open *r = k->req;
	struct fk_conn *c = k->c, *s = k->s;
	uint32_t a = 0, b = 0;
	int err;

	if (r->has_fd > 1 || r->reserved || (r->flags & ~fk_quirk_flags(k->type)))
		err = EINVAL;
	else if (r->has_fd && k->fd < 0 && (c->quirks & FK_Q_XRCD_BAD_FD_PRIVATE))
		err = fk__xrcd_open(s, -1, r->oflags, r->flags, &a, &b);	/* the quirk: as fd -1 */
	else if (r->has_fd && k->fd < 0)	/* @rule XRCD-10 */
		err = EBADF;			/* the fd named no open file (fdget) */
	else if (!r->has_fd && k->fd >= 0)
		err = EINVAL;			/* an fd it said it did not send */
	else {
		err = fk__xrcd_open(s, k->fd, r->oflags, r->flags, &a, &b);
		k->fd = -1;			/* consumed */
	}
	/* closed before the reply: the client may look right after it */
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	fk_reply_pair(c, k->type, k->seq, err, a, b);
}

static void fk_on_xrcd_close(struct fk_call *k)
{
	const struct fk_req_handle *r = k->req;

	fk_reply(k->c, k->type, k->seq, (r->flags & ~fk_quirk_flags(k->type)) ? EINVAL :
		 fk__xrcd_close(k->s, r->handle, r->flags));
}

static void fk_on_srq_create_xrc(struct fk_call *k)
{
	uint32_t a = 0, b = 0;
	int err = fk__srq_create_xrc(k->s, k->req, &a, &b);

	fk_reply_pair(k->c, k->type, k->seq, err, a, b);
}

static void fk_on_srq_destroy(struct fk_call *k)
{
	const struct fk_req_handle *r = k->req;

	fk_reply(k->c, k->type, k->seq, r->flags ? EINVAL : fk__srq_destroy(k->s, r->handle));
}

static void fk_on_obj_create(struct fk_call *k)
{
	uint32_t a = 0;
	int err = fk__obj_create(k->s, k->req, &a);

	fk_reply_pair(k->c, k->type, k->seq, err, a, 0);
}

static void fk_on_obj_destroy(struct fk_call *k)
{
	const struct fk_req_obj_destroy *r = k->req;

	fk_reply(k->c, k->type, k->seq, fk__obj_destroy(k->s, r->handle, r->type));
}

static void fk_on_mr_rereg(struct fk_call *k)
{
	const struct fk_req_mr_rereg *r = k->req;
	uint32_t b = 0;
	int err = fk__mr_rereg(k->s, r, &b);

	fk_reply_pair(k->c, k->type, k->seq, err, r->mr_handle, b);
}

static void fk_on_tgt_qp_create(struct fk_call *k)
{
	const struct fk_req_tgt_create *r = k->req;
	uint32_t a = 0, b = 0;
	int err = r->reserved ? EINVAL : fk__tgt_create(k->s, r->xrcd_handle, r->user, &a, &b);

	fk_reply_pair(k->c, k->type, k->seq, err, a, b);
}

static void fk_on_tgt_qp_open(struct fk_call *k)
{
	const struct fk_req_tgt_open *r = k->req;
	uint32_t a = 0;
	int err = (r->flags & ~fk_quirk_flags(k->type)) ? EINVAL :
		  fk__tgt_open(k->s, r->xrcd_handle, r->qpn, r->qp_type, r->flags, r->user, &a);

	fk_reply_pair(k->c, k->type, k->seq, err, a, r->qpn);
}

static void fk_on_tgt_qp_destroy(struct fk_call *k)
{
	const struct fk_req_handle *r = k->req;

	fk_reply(k->c, k->type, k->seq, r->flags ? EINVAL : fk__tgt_destroy(k->s, r->handle));
}

static void fk_on_tgt_qp_modify(struct fk_call *k)
{
	const struct fk_req_modify *r = k->req;
	uint32_t a = 0;
	int err = (r->reserved || (r->flags & ~fk_quirk_flags(k->type))) ? EINVAL :
		  fk__tgt_modify(k->s, r->qp_handle, r->attr_mask, r->flags, &r->attr, &a);

	fk_reply_pair(k->c, k->type, k->seq, err, a, 0);
}

static void fk_on_tgt_qp_query(struct fk_call *k)
{
	const struct fk_req_handle *r = k->req;
	struct fk_rep_query q = { 0 };
	int err = r->flags ? EINVAL : fk__tgt_query(k->s, r->handle, &q.attr);

	if (err)
		fk_reply(k->c, k->type, k->seq, err);
	else
		fk__send(k->c, k->type | FK_MSG_REPLY, k->seq, &q, sizeof(q), NULL, 0);
}

static void fk_on_event_raise(struct fk_call *k)
{
	const struct fk_req_event *r = k->req;

	fk_reply(k->c, k->type, k->seq, fk__event_raise(k->s, r->qp_handle, r->event_type));
}

static void fk_on_ring_set(struct fk_call *k)
{
	const struct fk_req_num *r = k->req;
	struct fk_conn *c = k->c;

	if (r->num || r->reserved || k->fd < 0) {
		fk_reply(c, k->type, k->seq, k->fd < 0 ? EBADF : EINVAL);
		return;
	}
	if (c->ring_fd >= 0)
		close(c->ring_fd);
	c->ring_fd = k->fd;			/* kept: handed out by ROUTE */
	k->fd = -1;
	fk_reply(c, k->type, k->seq, 0);
}

static void fk_on_route(struct fk_call *k)
{
	struct fk_rep_route rep = { .r.status = 0 };
	struct fk_conn *owner = NULL;
	int rfd = -1, err;

	err = fk__route(k->c, k->req, &rep, &owner);
	if (!err && rep.gate == FK_GATE_OK) {
		rfd = fcntl(owner->ring_fd, F_DUPFD_CLOEXEC, 0);
		if (rfd < 0)
			err = errno;
	}
	if (err)
		fk_reply(k->c, k->type, k->seq, err);
	else
		fk__send_fd(k->c, k->type | FK_MSG_REPLY, k->seq, &rep, sizeof(rep), rfd);
}

/*
 * CTX_FD: the context's file. A socketpair: the daemon keeps one end, the
 * other goes to the client as its cmd_fd, which the process may dup, poll,
 * pass over a UNIX socket (SCM_RIGHTS) and hand to ibv_import_device. The
 * file's objects live until the last copy of that end is closed anywhere
 * (linux v6.1 drivers/infiniband/core/uverbs_main.c ib_uverbs_release_file:
 * the ufile goes with its last file reference, not with a process). One
 * byte is written once into the daemon's end and never read, so poll() on
 * cmd_fd answers IN|OUT as on the uverbs file, which has no poll op
 * (uverbs_main.c uverbs_fops: the VFS answers DEFAULT_POLLMASK).
 */
/* The name the file's daemon end answers getpeername() with (uapi/fk_ufile.h
 * FK_UFILE_NAME_FMT). */
static int fk_ufile_bind(int fd, const struct fk_conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, FK_UFILE_NAME_FMT,
			 c->dev->name, (unsigned)getpid(), c->id);

	if (n < 0 || (size_t)n >= sizeof(sa.sun_path) - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return bind(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n));
}

static void fk_on_ctx_fd(struct fk_call *k)
{
	const struct fk_req_num *r = k->req;
	struct fk_conn *c = k->c;
	struct fk_rep rep = { 0 };
	struct stat st;
	int sv[2], err = 0;

	if (r->num || r->reserved)
		err = EINVAL;
	else if (c->uf || c->ufd >= 0)
		err = EEXIST;			/* one file per context */
	else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		err = errno;
	else if (fk_ufile_bind(sv[0], c)) {
		err = errno ? errno : EIO;
		close(sv[0]);
		close(sv[1]);
	} else if (fcntl(sv[0], F_SETFL, O_NONBLOCK) || write(sv[0], "", 1) != 1 ||
		 fstat(sv[1], &st)) {
		err = errno ? errno : EIO;
		close(sv[0]);
		close(sv[1]);
	}
	if (err) {
		fk_reply(c, k->type, k->seq, err);
		return;
	}
	c->ufd = sv[0];
	c->udev = st.st_dev;
	c->uino = st.st_ino;
	fk__send_fd(c, k->type | FK_MSG_REPLY, k->seq, &rep, sizeof(rep), sv[1]);
}

static bool fk_conn_has_objects(const struct fk_conn *c)
{
	uint32_t i;

	for (i = 0; i < c->tab_len; i++)
		if (c->tab[i])
			return true;
	return false;
}

/*
 * CTX_IMPORT: this connection (after its HELLO, with no object yet) becomes
 * a second context of the file whose client end came with the request,
 * as ibv_import_device(cmd_fd) does (rdma-core v44.0 libibverbs/device.c:370;
 * mlx5_import_context, providers/mlx5/mlx5.c:2634, then reads the context
 * with UVERBS_METHOD_QUERY_CONTEXT on that fd). An fd that is not such a
 * file is EINVAL, as device.c:380 answers an fd that is not a uverbs
 * character device; a file of another device ENODEV (device.c:397).
 * Reply: a = the id of the connection that made the file.
 */
static void fk_on_ctx_import(struct fk_call *k)
{
	const struct fk_req_handle *r = k->req;
	struct fk_conn *c = k->c, *u = NULL;
	struct fp_link *p, *t;
	struct stat st;
	int err = 0;

	if (r->handle || r->flags)
		err = EINVAL;
	else if (k->fd < 0)
		err = EBADF;
	else if (c->uf || c->ufd >= 0 || fk_conn_has_objects(c))
		err = EISCONN;
	else if (fstat(k->fd, &st))
		err = EBADF;
	else {
		fp_list_for_each_safe(p, t, &fk_conns) {
			struct fk_conn *o = fp_container_of(p, struct fk_conn, link);

			if (o != c && !o->dead && !o->uf && (o->ufd >= 0 || o->gone) &&
			    S_ISSOCK(st.st_mode) && o->udev == st.st_dev && o->uino == st.st_ino) {
				u = o;
				break;
			}
		}
		if (!u)
			err = EINVAL;
		else if (u->dev != c->dev)
			err = ENODEV;
	}
	if (!err) {
		c->uf = u;
		u->nimporters++;
		c->ifd = k->fd;		/* held as the importer's fd holds the file */
		k->fd = -1;
	}
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	fk_reply_pair(c, k->type, k->seq, err, err ? 0 : u->id, 0);
}

static void fk_on_obj_import(struct fk_call *k)
{
	struct fk_rep_import rep = { .r.status = 0 };
	struct fk_conn *ring = NULL;
	int err = fk__obj_import(k->s, k->req, &rep, &ring), fd = -1;

	if (!err && ring) {
		fd = fcntl(ring->ring_fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			rep.flags &= ~FK_MR_MAPPED;	/* the bytes only: the import stands */
	}
	if (err)
		fk_reply(k->c, k->type, k->seq, err);
	else
		fk__send_fd(k->c, k->type | FK_MSG_REPLY, k->seq, &rep, sizeof(rep), fd);
}

static void fk_on_mr_keys(struct fk_call *k)
{
	fk_reply(k->c, k->type, k->seq, fk__mr_keys(k->s, k->req));
}

static bool fk_ufile_closed(int ufd);

/*
 * CTX_HELD: is the file of this context still open somewhere, now that the
 * process closed its cmd_fd (a dup of it, a copy passed to another process,
 * an importer's)? a = 1: yes. Closing a context asks it before it leaves:
 * the regions of a file that lives on keep their pages pinned (linux v6.1
 * uverbs_main.c ib_uverbs_release_file: the objects go with the file).
 */
static void fk_on_ctx_held(struct fk_call *k)
{
	const struct fk_req_num *r = k->req;
	const struct fk_conn *f = k->c->uf ? k->c->uf : k->c;

	if (r->num || r->reserved)
		fk_reply(k->c, k->type, k->seq, EINVAL);
	else
		fk_reply_pair(k->c, k->type, k->seq, 0,
			      f->ufd >= 0 && !fk_ufile_closed(f->ufd), 0);
}

/* The dispatch: fk_msgs.def's rows, each with its handler. */
static void (*const fk_handlers[FK_MSG__COUNT])(struct fk_call *k) = {
#define FK_MSG(NAME, name, req, rep, needs) [FK_MSG_##NAME] = fk_on_##name,
#include "fk_msgs.def"
#undef FK_MSG
};

/* A decoded, size-checked request of a known type: what the table says it
 * needs of the connection, then its handler. */
static void fk_dispatch(struct fk_conn *c, uint32_t type, uint32_t seq,
			const void *payload, int fd)
{
	const struct fk_msg_info *m = fk_msg_info(type);
	struct fk_call k = { .c = c, .s = c->uf ? c->uf : c, .type = type, .seq = seq, .req = payload, .fd = fd };

	if ((m->needs & FK_NEEDS_HELLO) && !c->hello)
		fk_reply(c, type, seq, EPROTO);		/* HELLO comes first */
	else if ((m->needs & FK_NEEDS_DEVICE) && c->monitor)
		fk_reply(c, type, seq, EPERM);
	else {
		if (m->needs & FK_NEEDS_EPOCH)
			fk_epoch_bump();
		fk__cur = c;
		fk_handlers[type](&k);
		fk__cur = NULL;
	}
	if (k.fd >= 0)
		close(k.fd);
}

static void fk_sweep_hangups(struct fk_conn *except);

/* One received packet: n bytes in buf (truncated: it was larger). */
static void fk_message(struct fk_conn *c, const void *buf, size_t n, bool truncated,
		       int *fds, int nfds, bool ctrunc)
{
	/* aligned copy of the payload, so the handlers may read it as structs; on
	 * the stack: the hang-up sweep may read another connection meanwhile */
	union {
		struct fk_req_modify m;
		struct fk_req_hello h;
		struct fk_req_obj o;
		struct fk_req_mr_rereg rr;	/* (and its 8-byte alignment) */
		char raw[FK_REQ_MAX];
	} pl;
	struct fk_hdr h;
	const struct fk_msg_info *info;
	uint32_t want;
	int fd = -1, err = 0, i;

	/* Only a well-formed message of a type that takes an fd (FK_NEEDS_FD)
	 * may keep one; every other fd is closed before any reply, so none
	 * outlives the message that brought it. */
	memcpy(&h, buf, n < sizeof(h) ? n : sizeof(h));
	info = n < sizeof(h) ? NULL : fk_msg_info(h.type);
	if (!info || !(info->needs & FK_NEEDS_FD) ||
	    nfds != 1 || ctrunc || truncated) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (nfds || ctrunc)
			err = EBADF;	/* fds it had no business sending */
		nfds = 0;
	}
	if (n < sizeof(h)) {
		fk_logv("conn %u: runt message (%zu bytes)", c->id, n);
		fk_reply(c, 0, 0, EBADMSG);
		goto out;
	}
	if (h.magic != FK_MAGIC) {
		fk_log("conn %u: bad magic %#x, closing", c->id, h.magic);
		c->dead = true;
		goto out;
	}
	if (h.version != FK_PROTO_VERSION) {
		fk_log("conn %u: protocol version %u, this daemon speaks %u: refused",
		       c->id, h.version, FK_PROTO_VERSION);
		fk_reply(c, h.type & ~FK_MSG_REPLY, h.seq, EPROTONOSUPPORT);
		c->dead = true;		/* the reply is already in the peer's queue */
		goto out;
	}
	want = fk_proto_req_size(h.type);
	if (err)
		goto bad;		/* EBADF above */
	if (truncated)
		err = EMSGSIZE;
	else if (h.length != n - sizeof(h))
		err = EBADMSG;		/* length field and packet disagree */
	else if (!want)
		err = ENOSYS;
	else if (h.length != want)
		err = EBADMSG;
	if (err) {
bad:
		fk_logv("conn %u: %s (type %u, %u bytes): %s", c->id, fk_msg_name(h.type),
			h.type, h.length, strerror(err));
		if (nfds)
			close(fds[0]);
		fk_reply(c, h.type & ~FK_MSG_REPLY, h.seq, err);
		return;
	}
	memset(&pl, 0, sizeof(pl));
	memcpy(&pl, (const char *)buf + sizeof(h), h.length);
	if (nfds == 1) {
		fd = fds[0];
		fds[0] = -1;
	}
	fk_logv("conn %u: %s seq %u", c->id, fk_msg_name(h.type), h.seq);
	fk_sweep_hangups(c);
	fk_dispatch(c, h.type, h.seq, &pl, fd);
	return;
out:
	if (nfds)
		close(fds[0]);
}

void fk__conn_read(struct fk_conn *c)
{
	unsigned char buf[sizeof(struct fk_hdr) + FK_REQ_MAX];	/* reentrant, see fk_message */
	int burst;

	for (burst = 0; burst < FK_READ_BURST && !c->dead; burst++) {
		int fds[FK_MAX_FDS], mflags;
		unsigned nfds, i;
		ssize_t n;

		n = fp_fd_recv(c->fd, buf, sizeof(buf), fds, FK_MAX_FDS, &nfds, MSG_DONTWAIT,
			       &mflags);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			/* an empty packet reads as EOF too: its fds go with it */
			for (i = 0; i < nfds; i++)
				close(fds[i]);
			c->dead = true;		/* EOF: the process closed or died */
			return;
		}
		fk_message(c, buf, (size_t)n, mflags & MSG_TRUNC, fds, (int)nfds,
			   mflags & MSG_CTRUNC);
	}
}

/* True when no copy of the client end of a file's socketpair is open. */
static bool fk_ufile_closed(int ufd)
{
	struct pollfd p = { .fd = ufd, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/*
 * The connection's socket is gone (hang-up, or dropped as dead). Its
 * file's state is released now (true: the struct may go) unless the file
 * outlives it: another copy of its fd is open or another connection
 * imported it. Then the connection stays as the file alone (gone, fd = the
 * daemon's end, polled for its hang-up), without the routes and events of
 * its process (fk__conn_detach). An importer leaves the file it used.
 */
static bool fk_conn_end(struct fk_conn *c)
{
	struct fp_link *p, *t;

	if (c->ended)
		return true;
	if (c->gone) {
		/* the last copy of the fd closed: the file goes, and with it any
		 * connection still importing it (its process closed its fd) */
		fp_list_for_each_safe(p, t, &fk_conns) {
			struct fk_conn *o = fp_container_of(p, struct fk_conn, link);

			if (o->uf == c) {
				fk__conn_detach(c, o);
				o->uf = NULL;
				o->dead = true;
			}
		}
		c->nimporters = 0;
	} else {
		if (c->uf) {
			fk__conn_detach(c->uf, c);
			c->uf->nimporters--;
			c->uf = NULL;
			close(c->ifd);
			c->ifd = -1;
		}
		if (c->ufd >= 0 && (c->nimporters || !fk_ufile_closed(c->ufd))) {
			fk__conn_detach(c, c);
			fk_epoch_bump();
			while (c->out_head) {
				struct fk_outmsg *m = c->out_head;

				c->out_head = m->next;
				fk_outmsg_free(m);
			}
			c->out_tail = NULL;
			c->out_bytes = 0;
			if (c->ring_fd >= 0)
				close(c->ring_fd);
			c->ring_fd = -1;
			close(c->fd);
			c->fd = c->ufd;
			c->ufd = -1;
			c->gone = true;
			c->dead = false;
			fk_logv("conn %u: closed, its file stays open", c->id);
			return false;
		}
	}
	c->dead = true;
	c->ended = true;
	fk__conn_release(c);
	return true;
}

/*
 * A connection that hung up (close, exit, kill): what it still sent is
 * served, then everything it held is released (XRCD-17, LIFE-04/05) at
 * once, unless its file is still open elsewhere; the struct itself goes
 * at the end of the round (fk__reap). A file whose connection went before
 * hangs up when its last fd closes.
 */
void fk__conn_hangup(struct fk_conn *c)
{
	int i;

	/* a hung-up socket ends in EOF; the bound only guards against a bug */
	for (i = 0; i < 1024 && !c->dead && !c->gone; i++)
		fk__conn_read(c);
	fk_conn_end(c);
}

/*
 * Before a request is served, every connection that has hung up by now is
 * released. A client that saw its peer die (waitpid: the peer's fds are
 * closed by then) and then asks must find the peer's objects gone, as with
 * a kernel; its request was read after that hang-up, so this poll sees it,
 * whatever the round's ppoll saw and in whatever order connections are read.
 */
static void fk_sweep_hangups(struct fk_conn *except)
{
	static struct pollfd pfd[FK_MAX_CONNS];
	static struct fk_conn *who[FK_MAX_CONNS];
	static bool busy;
	struct fp_link *p, *t;
	unsigned i, n = 0;

	if (busy)
		return;			/* serving a hung-up connection's last messages */
	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		if (c == except || c->dead || n == FK_MAX_CONNS)
			continue;
		pfd[n].fd = c->fd;
		pfd[n].events = 0;	/* POLLHUP and POLLERR are always reported */
		pfd[n].revents = 0;
		who[n++] = c;
	}
	if (!n || poll(pfd, n, 0) <= 0)
		return;
	busy = true;
	for (i = 0; i < n; i++)
		if (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL))
			fk__conn_hangup(who[i]);
	busy = false;
}

/* ---- connections --------------------------------------------------------------- */
static void fk_refuse(int fd, int err)
{
	struct {
		struct fk_hdr h;
		struct fk_rep r;
	} m = { .r.status = err };

	fk_proto_hdr_init(&m.h, FK_MSG_HELLO | FK_MSG_REPLY, sizeof(m.r), 0);
	if (send(fd, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fk_logv("refusal not sent: %s", strerror(errno));
	close(fd);
}

struct fk_conn *fk__conn_new(int fd, pid_t pid)
{
	struct fk_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->id = fk_next_conn_id++;
	c->pid = pid;
	c->ring_fd = -1;
	c->ufd = -1;
	c->ifd = -1;
	fp_list_init(&c->xrcds);
	fp_list_init(&c->qps);
	fp_list_init(&c->srqs);
	fp_list_init(&c->qpns);
	fp_list_add_tail(&fk_conns, &c->link);
	fk_nconns++;
	fk_logv("conn %u: pid %ld connected", c->id, (long)c->pid);
	return c;
}

static void fk_accept(int lfd, unsigned *accepted)
{
	for (;;) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		struct fk_conn *c;
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cl != sizeof(cred)) {
			fk_log("SO_PEERCRED: %s", strerror(errno));
			close(fd);
			continue;
		}
		if (cred.uid != geteuid()) {
			/* the run dir's mode keeps others out; this holds if it did not */
			fk_log("refused pid %ld: uid %lu is not %lu", (long)cred.pid,
			       (unsigned long)cred.uid, (unsigned long)geteuid());
			fk_refuse(fd, EACCES);
			continue;
		}
		if (fk_nconns >= FK_MAX_CONNS) {
			fk_log("refused pid %ld: %u connections", (long)cred.pid, fk_nconns);
			fk_refuse(fd, EMFILE);
			continue;
		}
		c = fk__conn_new(fd, cred.pid);
		if (!c) {
			fk_refuse(fd, ENOMEM);
			continue;
		}
		(*accepted)++;
	}
}

static void fk_conn_free(struct fk_conn *c)
{
	fk_logv("conn %u: pid %ld gone", c->id, (long)c->pid);
	fk_epoch_bump();		/* its objects go: routes through them too */
	fk__conn_release(c);
	if (c->ufd >= 0)
		close(c->ufd);
	if (c->ifd >= 0)
		close(c->ifd);
	while (c->out_head) {
		struct fk_outmsg *m = c->out_head;

		c->out_head = m->next;
		fk_outmsg_free(m);
	}
	if (c->ring_fd >= 0)
		close(c->ring_fd);
	close(c->fd);

	fp_list_del(&c->link);
	fk_nconns--;
	free(c);
}

void fk__reap(void)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		if (c->dead) {
			if (!fk_conn_end(c))
				continue;	/* its file stays open */
			fk_conn_free(c);
		}
	}
}

void fk__release_all(void)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		c->uf = NULL;		/* every file goes: no order among them */
		c->nimporters = 0;
	}
	fp_list_for_each_safe(p, t, &fk_conns)
		fk_conn_free(fp_container_of(p, struct fk_conn, link));
}

static long long fk_now_ms(void)
{
	return fp_now_ns() / 1000000;
}

/*
 * Idle exit, race-free against a starting client: clients connect while
 * holding the run dir's lock, so under the lock a connection is either in
 * the listen backlog (take it and stay) or will find no socket (and start
 * a new daemon). Returns true when the socket was removed: exit now.
 */
static bool fk_try_exit(int lfd, int lockfd, const char *sock_path, const char *pid_path,
			unsigned *accepted)
{
	if (flock(lockfd, LOCK_EX | LOCK_NB))
		return false;			/* a client is mid-connect: retry soon */
	fk_accept(lfd, accepted);
	if (fk_nconns) {
		flock(lockfd, LOCK_UN);
		return false;
	}
	unlink(sock_path);
	unlink(pid_path);
	flock(lockfd, LOCK_UN);
	return true;
}

volatile sig_atomic_t fk_stop;

int fk__serve(int lfd, int lockfd, bool exit_when_idle, const char *sock_path,
	      const char *pid_path, const sigset_t *run_mask)
{
	struct pollfd *pfd = NULL;
	unsigned accepted = 0, cap = 0;
	long long start = fk_now_ms();

	while (!fk_stop) {
		struct fp_link *p, *t;
		struct timespec ts, *tsp = NULL;
		unsigned n = 1;
		int rc;

		if (exit_when_idle && !fk_nconns) {
			bool grace = !accepted && fk_now_ms() - start < FK_FIRST_CONN_GRACE_MS;

			if (!grace && fk_try_exit(lfd, lockfd, sock_path, pid_path, &accepted)) {
				fk_log("idle: exiting");
				break;
			}
			ts.tv_sec = 0;
			ts.tv_nsec = 20 * 1000000;	/* re-check the lock / the grace */
			tsp = &ts;
		}
		if (cap < fk_nconns + 1) {
			struct pollfd *np = realloc(pfd, sizeof(*pfd) * (fk_nconns + 64));

			if (!np) {
				fk_log("out of memory");
				free(pfd);
				return 1;
			}
			pfd = np;
			cap = fk_nconns + 64;
		}
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		fp_list_for_each_safe(p, t, &fk_conns) {
			struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

			pfd[n].fd = c->fd;
			pfd[n].events = c->gone ? 0 : POLLIN | (c->out_head ? POLLOUT : 0);
			n++;
		}
		rc = ppoll(pfd, n, tsp, run_mask);
		if (rc < 0 && errno != EINTR) {
			fk_log("poll: %s", strerror(errno));
			free(pfd);
			return 1;
		}
		if (rc <= 0)
			continue;
		/* pfd[1..] follow the list order, and only this loop changes the
		 * list. Hang-ups first: a request of this round must not see what
		 * a connection gone before it still held (see fk_sweep_hangups). */
		n = 1;
		fp_list_for_each_safe(p, t, &fk_conns) {
			struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

			if (pfd[n++].revents & (POLLHUP | POLLERR))
				fk__conn_hangup(c);
		}
		n = 1;
		fp_list_for_each_safe(p, t, &fk_conns) {
			struct fk_conn *c = fp_container_of(p, struct fk_conn, link);
			short re = pfd[n++].revents;

			if (c->dead || c->gone)
				continue;
			if (re & POLLIN)
				fk__conn_read(c);
			if (re & POLLOUT)
				fk__conn_flush(c);
		}
		fk__reap();
		if (pfd[0].revents & POLLIN)
			fk_accept(lfd, &accepted);
	}
	free(pfd);
	return 0;
}
