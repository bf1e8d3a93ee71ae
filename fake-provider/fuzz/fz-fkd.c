/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness of the fake kernel daemon's protocol (kernel/server.c,
 * state.c, dump.c): the real message handling, in process, over real
 * socketpairs. The input is a list of actions on up to four client
 * connections; after every action the daemon's own recount of its tables
 * (fk__state_check, the dump's "problems=N") must find nothing, every
 * message must have earned exactly one well-formed reply (or the close of
 * its connection), and at the end, with every connection closed, no
 * connection, device, object or fd may be left. A broken promise is an
 * abort(), a crash to AFL. The corpus test t5203 replays
 * fixtures/fuzz/fkd/ through fz_one().
 *
 * Input: actions, each an op byte, then its arguments (missing bytes read
 * as 0). conn = op & 3; kind = (op >> 2) % 8:
 *   0  framed:   TYPE SEQ PAYLOAD   a valid header (magic, version, exact
 *                length fk_proto_req_size(TYPE % (FK_MSG__COUNT + 1))), payload
 *                from the input
 *   1  framed with an fd: SEL, then as 0; SEL % 4: scratch file A, B, a
 *                directory, or the context file the last CTX_FD reply gave
 *                (A before any)
 *   2  framed, patched: P1 P2, then as 0; for each P, payload word P >> 5
 *                becomes a number from a reply of connection P & 3: the
 *                (P >> 3 & 3)-th last two-number reply, its a, or b if P & 4
 *                (handles, QPNs, SRQNs and connection ids cannot be guessed)
 *   3  raw:      LEN_LO LEN_HI BYTES   (LEN % 320: runts, lies, truncation)
 *   4  raw with fds: N, then as 3; N % 6 copies of file A's fd
 *   5  disconnect: H; the client end is closed; H & 1: the daemon sees the
 *                hang-up now (as its poll loop would), else later (the
 *                sweep before another connection's request, or the end)
 *   6  round:    every connection whose peer is gone is released, as a
 *                poll round does
 *   7  bad header: V, then as 0; version V, or (V == 3) a wrong magic
 * A connection that is not open is opened by its first action.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "fkd.h"
#include "fp_fdpass.h"
#define FZ_HAVE_SEEDS
#include "fz_main.h"

#define FZ_CONNS	4
#define FZ_RAW_MAX	320
#define FZ_FD_SCAN	256

static bool fz_verbose;		/* FZ_VERBOSE: the daemon's log and every reply */

/* The daemon's log sink (main.c, the daemon's, is not linked): quiet
 * unless FZ_VERBOSE; a "BUG:" line is the daemon finding itself
 * inconsistent, a broken promise. */
void fk__vlog(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (fz_verbose)
		fprintf(stderr, "fkd: %s\n", line);
	if (!strncmp(line, "BUG", 3)) {
		fprintf(stderr, "fz-fkd: broken promise: the daemon logged: %s\n", line);
		abort();
	}
}

struct fz_slot {
	int fd;			/* client end, -1: not open */
	uint32_t id;		/* the daemon's connection id */
	uint32_t a[4], b[4];	/* the last successful two-number replies, [0] newest */
	bool pending;		/* a request sent, its reply not yet seen */
	uint32_t want_type, want_seq;	/* what that reply must say */
	int32_t status;		/* of the last reply */
};

static struct fz_slot fz_slot[FZ_CONNS];
static int fz_file[3] = { -1, -1, -1 };	/* A, B, a directory */
static int fz_ctx_fd = -1;		/* the last context file a CTX_FD reply gave */
static bool fz_fd_base[FZ_FD_SCAN];	/* open before the first input */
static bool fz_ready;
static const unsigned char *fz_in;
static size_t fz_len, fz_pos;
static char fz_check_buf[65536];
static int fz_fd_max;			/* highest fd seen during this input */

static void fz_saw_fd(int fd)
{
	if (fd > fz_fd_max)
		fz_fd_max = fd;
}

__attribute__((noreturn, format(printf, 1, 2)))
static void fz_broken(const char *fmt, ...)
{
	va_list ap;
	size_t n;

	fprintf(stderr, "fz-fkd: broken promise at input byte %zu: ", fz_pos);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	n = fk__dump(fz_check_buf, sizeof(fz_check_buf));
	fprintf(stderr, "fz-fkd: daemon state:\n%.*s", (int)n, fz_check_buf);
	abort();
}

static unsigned fz_byte(void)
{
	return fz_pos < fz_len ? fz_in[fz_pos++] : 0;
}

static void fz_bytes(void *out, size_t n)
{
	size_t k = fz_len - fz_pos < n ? fz_len - fz_pos : n;

	memset(out, 0, n);
	memcpy(out, fz_in + fz_pos, k);
	fz_pos += k;
}

static void fz_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	int i;

	if (!tmp || !tmp[0])
		tmp = "/tmp";
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/ibvct-fz-fkd-XXXXXX", tmp);
		fz_file[i] = mkostemp(path, O_CLOEXEC);
		if (fz_file[i] < 0) {
			perror("fz-fkd: mkstemp");
			exit(2);
		}
		unlink(path);		/* the open fd keeps the inode */
	}
	fz_verbose = getenv("FZ_VERBOSE") != NULL;
	fz_file[2] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fz_file[2] < 0) {
		perror("fz-fkd: open /");
		exit(2);
	}
	fk__epoch_init();		/* the daemon's own, for its whole life */
	for (i = 0; i < FZ_FD_SCAN; i++)
		fz_fd_base[i] = fcntl(i, F_GETFD) >= 0;
	for (i = 0; i < FZ_CONNS; i++)
		fz_slot[i].fd = -1;
	fz_ready = true;
}

#ifdef FZ_LIB
void fz_end(void)
{
	/* its scratch files were unlinked when made */
}
#endif

static struct fk_conn *fz_conn_by_id(uint32_t id)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		if (c->id == id)
			return c;
	}
	return NULL;
}

static struct fz_slot *fz_open(unsigned i)
{
	struct fz_slot *s = &fz_slot[i];
	struct fk_conn *c;
	int sv[2];

	if (s->fd >= 0)
		return s;
	/* non-blocking on both ends, as accept4() gives the daemon its end */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		fz_broken("socketpair: %s", strerror(errno));
	fz_saw_fd(sv[0]);
	fz_saw_fd(sv[1]);
	c = fk__conn_new(sv[1], getpid());
	if (!c)
		fz_broken("fk__conn_new: out of memory");
	s->fd = sv[0];
	s->id = c->id;
	s->pending = false;
	memset(s->a, 0, sizeof(s->a));
	memset(s->b, 0, sizeof(s->b));
	return s;
}

/* The replies that may bring an fd. */
static bool fz_fd_reply(uint32_t type)
{
	return type == FK_MSG_ROUTE || type == FK_MSG_HELLO || type == FK_MSG_CTX_FD ||
	       type == FK_MSG_OBJ_IMPORT;
}

/* Everything the daemon sent to one client: every message well-formed,
 * and a reply only to a request that waits for one, of its type and seq.
 * *eof when the daemon closed the connection. */
static void fz_drain(struct fz_slot *s, bool *eof)
{
	static unsigned char buf[sizeof(struct fk_hdr) + FK_REPLY_MAX + 16];

	*eof = false;
	for (;;) {
		int fds[FP_FDPASS_MAX], mflags;
		struct fk_hdr h;
		struct fk_rep r;
		unsigned nfds, k;
		ssize_t n = fp_fd_recv(s->fd, buf, sizeof(buf), fds, FP_FDPASS_MAX, &nfds,
				       MSG_DONTWAIT, &mflags);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0 && errno == ECONNRESET) {
			*eof = true;
			break;
		}
		if (n < 0)
			fz_broken("recvmsg: %s", strerror(errno));
		if (n == 0) {
			*eof = true;
			break;
		}
		for (k = 0; k < nfds; k++)
			fz_saw_fd(fds[k]);
		if ((size_t)n < sizeof(h) || (mflags & (MSG_TRUNC | MSG_CTRUNC)))
			fz_broken("conn %u: a %zd-byte message from the daemon", s->id, n);
		memcpy(&h, buf, sizeof(h));
		if (h.magic != FK_MAGIC || h.version != FK_PROTO_VERSION ||
		    h.length != (size_t)n - sizeof(h))
			fz_broken("conn %u: bad header from the daemon", s->id);
		if (h.type == FK_MSG_EVENT) {
			if (h.seq || h.length != sizeof(struct fk_event_msg) || nfds)
				fz_broken("conn %u: bad event", s->id);
			continue;
		}
		if (!(h.type & FK_MSG_REPLY) || h.length < sizeof(r))
			fz_broken("conn %u: type %#x is neither reply nor event", s->id, h.type);
		memcpy(&h, buf, (size_t)n < sizeof(h) ? (size_t)n : sizeof(h));
		/* a context file is kept (the next one replaces it) to be imported
		 * by a later request; any other fd goes now */
		for (k = 0; k < nfds; k++) {
			if (k == 0 && (size_t)n >= sizeof(h) && h.type == (FK_MSG_CTX_FD | FK_MSG_REPLY)) {
				if (fz_ctx_fd >= 0)
					close(fz_ctx_fd);
				fz_ctx_fd = fds[k];
			} else {
				close(fds[k]);
			}
		}
		memcpy(&r, buf + sizeof(h), sizeof(r));
		if (r.status < 0 || r.status > 4095 || r.reserved)
			fz_broken("conn %u: reply status %d", s->id, r.status);
		if (fz_verbose)
			fprintf(stderr, "fz-fkd: conn %u: reply %s seq %u status %d%s\n", s->id,
				fk_msg_name(h.type & ~FK_MSG_REPLY), h.seq, r.status,
				nfds ? " +fd" : "");
		if (r.status && h.length != sizeof(r))
			fz_broken("conn %u: error reply with a body", s->id);
		/* fds come only with a route (the peer's inbox), a HELLO (the
		 * route epoch), a context's file and an imported MR's ring, never
		 * with an error */
		if (nfds > 1 || (nfds && (!fz_fd_reply(h.type & ~FK_MSG_REPLY) || r.status)))
			fz_broken("conn %u: an fd with reply type %#x status %d", s->id, h.type,
				  r.status);
		if (!s->pending)
			fz_broken("conn %u: a reply (type %#x seq %u) nobody waits for", s->id,
				  h.type, h.seq);
		if ((h.type & ~FK_MSG_REPLY) != s->want_type || h.seq != s->want_seq)
			fz_broken("conn %u: reply type %#x seq %u to a request type %#x seq %u",
				  s->id, h.type, h.seq, s->want_type, s->want_seq);
		s->pending = false;
		s->status = r.status;
		if (!r.status && h.length == sizeof(struct fk_rep_pair)) {
			struct fk_rep_pair pr;

			memcpy(&pr, buf + sizeof(h), sizeof(pr));
			memmove(s->a + 1, s->a, sizeof(s->a) - sizeof(s->a[0]));
			memmove(s->b + 1, s->b, sizeof(s->b) - sizeof(s->b[0]));
			s->a[0] = pr.a;
			s->b[0] = pr.b;
		}
	}
}

/* A client end the daemon closed: the slot is free again. */
static void fz_gone(struct fz_slot *s)
{
	close(s->fd);
	s->fd = -1;
	s->pending = false;
}

/* The end of a poll round: free what died, flush what is queued, then
 * every client reads what it got (events included). */
static void fz_round_end(void)
{
	struct pollfd pfd[FZ_CONNS];
	struct fz_slot *who[FZ_CONNS];
	struct fp_link *p, *t;
	unsigned i, n = 0;
	bool eof;

	fk__reap();
	fp_list_for_each_safe(p, t, &fk_conns)
		fk__conn_flush(fp_container_of(p, struct fk_conn, link));
	/* one poll, then only the clients with something to read */
	for (i = 0; i < FZ_CONNS; i++) {
		if (fz_slot[i].fd < 0)
			continue;
		pfd[n].fd = fz_slot[i].fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		who[n++] = &fz_slot[i];
	}
	if (!n || poll(pfd, n, 0) <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		fz_drain(who[i], &eof);
		if (eof)
			fz_gone(who[i]);
	}
}

/* Connections whose peer hung up are released, as the poll loop does. */
static void fz_hangups(void)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);
		struct pollfd pfd = { .fd = c->fd, .events = 0 };

		if (!c->dead && poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR)))
			fk__conn_hangup(c);
	}
}

static void fz_check_state(void)
{
	size_t used = 0;
	unsigned problems = fk__state_check(fz_check_buf, sizeof(fz_check_buf) - 1, &used);

	if (problems) {
		fz_check_buf[used] = 0;
		fz_broken("state check: %u problems:\n%s", problems, fz_check_buf);
	}
}

/* Every connection of the daemon is one of ours, open and live: then a
 * request cannot release anything else first (the daemon's hang-up sweep
 * finds nothing), and what it changes, it changes itself. */
static bool fz_all_live(void)
{
	struct fp_link *p, *t;
	unsigned n = 0, open = 0, i;

	fp_list_for_each_safe(p, t, &fk_conns) {
		if (fp_container_of(p, struct fk_conn, link)->dead)
			return false;
		n++;
	}
	for (i = 0; i < FZ_CONNS; i++)
		open += fz_slot[i].fd >= 0;
	return n == open;
}

/* A hash of everything the daemon's tables say (no text, no syscall: it
 * runs around every request): connections and their handles, devices,
 * domains, target QPs with their attributes, numbers. */
static uint64_t fz_h;

static void fz_mix(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		fz_h = (fz_h ^ b[i]) * 0x100000001b3ull;
}

#define FZ_MIX(v) do { __typeof__(v) fz_v_ = (v); fz_mix(&fz_v_, sizeof(fz_v_)); } while (0)

static uint64_t fz_fingerprint(void)
{
	struct fp_link *p, *t, *q, *u, *a, *b;

	fz_h = 0xcbf29ce484222325ull;
	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		FZ_MIX(c->id);
		FZ_MIX(c->hello);
		FZ_MIX(c->monitor);
		FZ_MIX(c->dead);
		FZ_MIX(c->dev);
		FZ_MIX(c->ring_fd >= 0);
		FZ_MIX(c->quirks);
		for (uint32_t i = 0; i < c->tab_len; i++) {
			struct fk_uobj *o = c->tab[i];

			FZ_MIX(o);
			if (!o)
				continue;
			FZ_MIX(o->type);
			FZ_MIX(o->sub);
			FZ_MIX(o->usecnt);
			fz_mix(o->ref, sizeof(o->ref));
			FZ_MIX(o->closed);
		}
		fp_list_for_each_safe(q, u, &c->xrcds) {
			struct fk_hxrcd *x = fp_container_of(q, struct fk_hxrcd, link);

			FZ_MIX(x->handle);
			FZ_MIX(x->xrcd);
			FZ_MIX(x->closed);
		}
		fp_list_for_each_safe(q, u, &c->qps) {
			struct fk_hqp *x = fp_container_of(q, struct fk_hqp, link);

			FZ_MIX(x->handle);
			FZ_MIX(x->rqp);
			FZ_MIX(x->hx);
			FZ_MIX(x->user);
			FZ_MIX(x->opened);
		}
		fp_list_for_each_safe(q, u, &c->srqs)
			FZ_MIX(fp_container_of(q, struct fk_num, conn_link)->num);
		fp_list_for_each_safe(q, u, &c->qpns)
			FZ_MIX(fp_container_of(q, struct fk_num, conn_link)->num);
	}
	fp_list_for_each_safe(p, t, &fk_devs) {
		struct fk_dev *d = fp_container_of(p, struct fk_dev, link);

		fz_mix(d->name, sizeof(d->name));
		FZ_MIX(d->lifetime);
		FZ_MIX(d->nconns);
		fp_list_for_each_safe(q, u, &d->xrcds) {
			struct fk_xrcd *x = fp_container_of(q, struct fk_xrcd, link);

			FZ_MIX(x->id);
			FZ_MIX(x->usecnt);
			FZ_MIX(x->inode_fd >= 0);
			fp_list_for_each_safe(a, b, &x->tgt_qps) {
				struct fk_rqp *r = fp_container_of(a, struct fk_rqp, link);

				FZ_MIX(r->qpn);
				FZ_MIX(r->usecnt);
				FZ_MIX(r->orphan);
				fz_mix(&r->attr, sizeof(r->attr));
			}
		}
		fp_list_for_each_safe(q, u, &d->srqns)
			FZ_MIX(fp_container_of(q, struct fk_num, dev_link)->num);
		fp_list_for_each_safe(q, u, &d->qpns)
			FZ_MIX(fp_container_of(q, struct fk_num, dev_link)->num);
	}
	return fz_h;
}

/* Send one message on a slot and have the daemon read it; then the reply. */
static void fz_send(struct fz_slot *s, const void *msg, size_t n, const int *fds, int nfds)
{
	struct fk_conn *c;
	struct fk_hdr h;
	bool dead, quiet, other_version = false;
	uint64_t before = 0;

	/* the reply it must earn: a runt's names type 0, seq 0 */
	s->want_type = 0;
	s->want_seq = 0;
	if (n >= sizeof(h)) {
		memcpy(&h, msg, sizeof(h));
		s->want_type = h.type & ~FK_MSG_REPLY;
		s->want_seq = h.seq;
		other_version = h.magic == FK_MAGIC && h.version != FK_PROTO_VERSION;
	}
	s->pending = true;
	s->status = 0;
	c = fz_conn_by_id(s->id);
	if (!c)
		fz_broken("conn %u: the daemon lost a live connection", s->id);
	quiet = fz_all_live();
	if (quiet)
		before = fz_fingerprint();
	if (fp_fds_send(s->fd, msg, n, fds, (unsigned)nfds, 0) != (ssize_t)n)
		fz_broken("sendmsg of %zu bytes: %s", n, strerror(errno));
	fk__conn_read(c);
	dead = c->dead;
	fz_check_state();
	/* the round's end flushes, reaps and drains: the reply arrives there */
	fz_round_end();
	if (!dead && (s->fd < 0 || s->pending))
		fz_broken("conn %u: no reply to a message", s->id);
	if (dead && s->fd >= 0)
		fz_broken("conn %u: dropped by the daemon but not closed", s->id);
	/* closed: for another version after its reply; for a bad magic or an
	 * empty packet (EOF to a reader) without one */
	if (dead && other_version && s->pending)
		fz_broken("conn %u: another version closed without its reply", s->id);
	/* a refused request changes nothing, nor do the ones that only look */
	if (quiet && !dead && (s->status || s->want_type == FK_MSG_DUMP ||
			       s->want_type == FK_MSG_TGT_QP_QUERY || s->want_type == FK_MSG_ROUTE) &&
	    fz_fingerprint() != before)
		fz_broken("conn %u: request type %u (status %d) changed the state", s->id,
			  s->want_type, s->status);
}

static void fz_framed(struct fz_slot *s, unsigned kind)
{
	unsigned char msg[sizeof(struct fk_hdr) + FK_REQ_MAX];
	unsigned sel = 0, patch[2] = { 0, 0 }, ver = FK_PROTO_VERSION, i;
	struct fk_hdr h;
	uint32_t type, len;
	int fd = -1;

	if (kind == 1)
		sel = fz_byte() % 4;
	if (kind == 2) {
		patch[0] = fz_byte();
		patch[1] = fz_byte();
	}
	if (kind == 7)
		ver = fz_byte();
	type = fz_byte() % (FK_MSG__COUNT + 1);
	len = fk_proto_req_size(type);
	fk_proto_hdr_init(&h, type, len, fz_byte());
	if (kind == 7) {
		if (ver == FK_PROTO_VERSION)
			h.magic = ~FK_MAGIC;
		h.version = (uint16_t)ver;
	}
	memcpy(msg, &h, sizeof(h));
	fz_bytes(msg + sizeof(h), len);
	for (i = 0; kind == 2 && i < 2; i++) {
		const struct fz_slot *src = &fz_slot[patch[i] & 3];
		unsigned depth = (patch[i] >> 3) & 3, w = patch[i] >> 5;
		uint32_t v = (patch[i] & 4) ? src->b[depth] : src->a[depth];

		if ((w + 1) * 4 <= len)
			memcpy(msg + sizeof(h) + w * 4, &v, 4);
	}
	if (kind == 1)
		fd = sel < 3 ? fz_file[sel] : fz_ctx_fd >= 0 ? fz_ctx_fd : fz_file[0];
	fz_send(s, msg, sizeof(h) + len, &fd, kind == 1 ? 1 : 0);
}

static void fz_raw(struct fz_slot *s, unsigned kind)
{
	unsigned char msg[FZ_RAW_MAX];
	int fds[8];
	unsigned nfds = 0, i;
	size_t len;

	if (kind == 4)
		nfds = fz_byte() % 6;
	len = fz_byte();
	len = (len | fz_byte() << 8) % FZ_RAW_MAX;
	fz_bytes(msg, len);
	for (i = 0; i < nfds; i++)
		fds[i] = fz_file[0];
	if (!len && nfds) {
		/* an fd needs a byte to travel with */
		msg[0] = 0;
		len = 1;
	}
	fz_send(s, msg, len, fds, (int)nfds);
}

static void fz_check_fds(void)
{
	int i;

	/* up to the highest fd this input made the harness see: the daemon's
	 * own fds (domains, rings) come from the same lowest-free allocation */
	for (i = 0; i <= fz_fd_max + 4 && i < FZ_FD_SCAN; i++)
		if ((fcntl(i, F_GETFD) >= 0) != fz_fd_base[i])
			fz_broken("fd %d %s after the input", i, fz_fd_base[i] ? "closed" : "left open");
}

void fz_one(const unsigned char *data, size_t len)
{
	unsigned i;

	if (!fz_ready)
		fz_setup();
	fz_in = data;
	fz_len = len;
	fz_pos = 0;
	fz_fd_max = 0;
	while (fz_pos < fz_len) {
		unsigned op = fz_byte(), kind = (op >> 2) % 8;
		struct fz_slot *s = &fz_slot[op & 3];

		switch (kind) {
		case 5:
			if (s->fd < 0) {
				fz_byte();
				break;
			}
			fz_gone(s);
			if (fz_byte() & 1) {
				fz_hangups();
				fz_round_end();
			}
			break;
		case 6:
			fz_hangups();
			fz_round_end();
			break;
		case 3:
		case 4:
			fz_raw(fz_open(op & 3), kind);
			break;
		default:
			fz_framed(fz_open(op & 3), kind);
			break;
		}
		fz_check_state();
	}
	/* the end: every client goes; then nothing may be left */
	for (i = 0; i < FZ_CONNS; i++)
		if (fz_slot[i].fd >= 0)
			fz_gone(&fz_slot[i]);
	if (fz_ctx_fd >= 0)
		close(fz_ctx_fd);
	fz_ctx_fd = -1;
	/* a file outlives its connection until its importers are gone: a
	 * round for those, one for the file that hangs up then */
	for (i = 0; i < 3 && !fp_list_empty(&fk_conns); i++) {
		fz_hangups();
		fz_round_end();
	}
	fz_check_state();
	if (!fp_list_empty(&fk_conns))
		fz_broken("a connection is left after every client closed");
	if (!fp_list_empty(&fk_devs))
		fz_broken("a device is left after every client closed");
	fz_check_fds();
}

/* ---- seeds: valid exchanges, written in the input format above ---------- */
struct fz_seed {
	unsigned char b[4096];
	size_t n;
};

static void sd_put(struct fz_seed *sd, const void *p, size_t n)
{
	if (sd->n + n > sizeof(sd->b))
		abort();		/* a seed longer than the generator expects */
	memcpy(sd->b + sd->n, p, n);
	sd->n += n;
}

static void sd_byte(struct fz_seed *sd, unsigned v)
{
	unsigned char c = (unsigned char)v;

	sd_put(sd, &c, 1);
}

/* kind 0/1/2/7 with their extra bytes (sel, patches, version) in x[] */
static void sd_msg(struct fz_seed *sd, unsigned conn, unsigned kind, const unsigned *x,
		   unsigned nx, uint32_t type, const void *payload)
{
	static unsigned seq;
	unsigned i;

	sd_byte(sd, conn | kind << 2);
	for (i = 0; i < nx; i++)
		sd_byte(sd, x[i]);
	sd_byte(sd, type);
	sd_byte(sd, ++seq);
	sd_put(sd, payload, fk_proto_req_size(type));
}

#define SD_PATCH(conn, b, depth, word) ((conn) | ((b) ? 4 : 0) | (depth) << 3 | (word) << 5)

static void sd_plain(struct fz_seed *sd, unsigned conn, uint32_t type, const void *p)
{
	sd_msg(sd, conn, 0, NULL, 0, type, p);
}

static void sd_fd(struct fz_seed *sd, unsigned conn, unsigned sel, uint32_t type, const void *p)
{
	unsigned x[1] = { sel };

	sd_msg(sd, conn, 1, x, 1, type, p);
}

static void sd_patched(struct fz_seed *sd, unsigned conn, unsigned p1, unsigned p2,
		       uint32_t type, const void *p)
{
	unsigned x[2] = { p1, p2 };

	sd_msg(sd, conn, 2, x, 2, type, p);
}

static void sd_raw(struct fz_seed *sd, unsigned conn, unsigned nfds, const void *p, size_t n)
{
	sd_byte(sd, conn | (nfds ? 4u : 3u) << 2);
	if (nfds)
		sd_byte(sd, nfds);
	sd_byte(sd, n & 0xff);
	sd_byte(sd, n >> 8);
	sd_put(sd, p, n);
}

static void sd_hello_q(struct fz_seed *sd, unsigned conn, const char *dev, uint32_t life,
		       uint32_t quirks)
{
	struct fk_req_hello h = {
		.lifetime = life, .nports = 1, .pkey_tbl_len = { 4 }, .quirks = quirks,
	};

	snprintf(h.devname, sizeof(h.devname), "%s", dev);
	sd_plain(sd, conn, FK_MSG_HELLO, &h);
}

static void sd_hello(struct fz_seed *sd, unsigned conn, const char *dev, uint32_t life)
{
	sd_hello_q(sd, conn, dev, life, 0);
}

static void sd_modify(struct fz_seed *sd, unsigned conn, uint32_t handle, uint32_t state,
		      uint32_t mask)
{
	struct fk_req_modify m = { .qp_handle = handle, .attr_mask = mask | IBV_QP_STATE };

	m.attr.qp_state = state;
	m.attr.port_num = 1;
	m.attr.ah_attr.port_num = 1;
	m.attr.path_mtu = IBV_MTU_1024;
	m.attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	m.attr.en_sqd_async_notify = 1;
	sd_plain(sd, conn, FK_MSG_TGT_QP_MODIFY, &m);
}

static int sd_write(const char *dir, const char *name, const struct fz_seed *sd)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(sd->b, 1, sd->n, f) != sd->n || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

int fz_write_seeds(const char *dir)
{
	static const uint32_t to_init = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	static const uint32_t to_rtr = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	static const uint32_t to_rts = IBV_QP_TIMEOUT | IBV_QP_SQ_PSN;
	struct fk_req_num zero = { 0 };
	struct fk_req_xrcd_open xo = { .has_fd = 1, .oflags = O_CREAT };
	/* handles count from 0 per connection: its XRCD is 0, its TGT QP 1 */
	struct fk_req_handle hd = { .handle = 0 };
	struct fk_req_tgt_create tc = { .xrcd_handle = 0, .user = 0x1234 };
	struct fk_req_tgt_open to = { .xrcd_handle = 0, .qp_type = IBV_QPT_XRC_RECV, .user = 7 };
	struct fk_req_route rt = { .kind = FK_ROUTE_QPN };
	struct fk_req_event ev = { .qp_handle = 1, .event_type = IBV_EVENT_QP_FATAL };
	struct fk_req_obj ob = {
		.type = FK_OBJ_PD,
		.ref = { FK_NO_HANDLE, FK_NO_HANDLE, FK_NO_HANDLE, FK_NO_HANDLE, FK_NO_HANDLE },
	};
	struct fk_req_obj_destroy od = { .handle = 0, .type = FK_OBJ_PD };
	struct fk_req_hello mon = { .flags = FK_HELLO_MONITOR };
	struct fz_seed sd;
	struct fk_hdr h;
	unsigned char junk[300];
	int rc = 0;

	/* numbers: allocate, free what the reply named, dump */
	memset(&sd, 0, sizeof(sd));
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
	sd_plain(&sd, 0, FK_MSG_QPN_ALLOC, &zero);
	sd_patched(&sd, 0, SD_PATCH(0, 0, 0, 0), SD_PATCH(0, 0, 0, 0), FK_MSG_QPN_FREE, &zero);
	sd_plain(&sd, 0, FK_MSG_SRQN_ALLOC, &zero);
	sd_plain(&sd, 0, FK_MSG_SRQN_ALLOC, &zero);
	sd_patched(&sd, 0, SD_PATCH(0, 0, 1, 0), SD_PATCH(0, 0, 1, 0), FK_MSG_SRQN_FREE, &zero);
	sd_plain(&sd, 0, FK_MSG_DUMP, &zero);
	rc |= sd_write(dir, "numbers", &sd);

	/* XRC: domain, target QP up to RTS, SRQ and ring on a second
	 * connection in the same domain, routes, query, events, teardown */
	memset(&sd, 0, sizeof(sd));
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
	sd_fd(&sd, 0, 0, FK_MSG_XRCD_OPEN, &xo);
	sd_plain(&sd, 0, FK_MSG_TGT_QP_CREATE, &tc);			/* handle 1 */
	sd_modify(&sd, 0, 1, IBV_QPS_INIT, to_init);
	sd_modify(&sd, 0, 1, IBV_QPS_RTR, to_rtr);
	sd_modify(&sd, 0, 1, IBV_QPS_RTS, to_rts);
	sd_hello(&sd, 1, "fake0", FK_LIFE_CURRENT);
	sd_fd(&sd, 1, 1, FK_MSG_RING_SET, &zero);
	rt.kind = FK_ROUTE_CONN;					/* to conn 1's id */
	sd_patched(&sd, 0, SD_PATCH(1, 0, 0, 1), SD_PATCH(1, 0, 0, 1), FK_MSG_ROUTE, &rt);
	rt.kind = FK_ROUTE_QPN;
	sd_fd(&sd, 1, 0, FK_MSG_XRCD_OPEN, &xo);			/* handle 0 */
	sd_plain(&sd, 1, FK_MSG_OBJ_CREATE, &ob);			/* PD 1 */
	ob.type = FK_OBJ_CQ;
	sd_plain(&sd, 1, FK_MSG_OBJ_CREATE, &ob);			/* CQ 2 */
	ob.type = FK_OBJ_SRQ;
	ob.sub = IBV_SRQT_XRC;
	ob.ref[FK_REF_PD] = 1;
	ob.ref[FK_REF_SCQ] = 2;
	ob.ref[FK_REF_XRCD] = 0;
	sd_plain(&sd, 1, FK_MSG_SRQ_CREATE_XRC, &ob);			/* SRQ 3, srqn */
	sd_patched(&sd, 0, SD_PATCH(0, 1, 3, 1), SD_PATCH(1, 1, 0, 2), FK_MSG_ROUTE, &rt);
	rt.flags = FK_Q_XRC_IGNORE_REMOTE_SRQN;
	sd_patched(&sd, 0, SD_PATCH(0, 1, 3, 1), SD_PATCH(0, 1, 3, 1), FK_MSG_ROUTE, &rt);
	rt.flags = 0;
	od.handle = 2;
	od.type = FK_OBJ_CQ;
	sd_plain(&sd, 1, FK_MSG_OBJ_DESTROY, &od);			/* EBUSY: the SRQ's */
	hd.handle = 1;
	sd_plain(&sd, 0, FK_MSG_TGT_QP_QUERY, &hd);
	sd_modify(&sd, 0, 1, IBV_QPS_SQD, IBV_QP_EN_SQD_ASYNC_NOTIFY);
	sd_plain(&sd, 0, FK_MSG_EVENT_RAISE, &ev);
	sd_plain(&sd, 0, FK_MSG_DUMP, &zero);
	sd_plain(&sd, 0, FK_MSG_TGT_QP_DESTROY, &hd);
	hd.handle = 0;
	sd_plain(&sd, 0, FK_MSG_XRCD_CLOSE, &hd);
	sd_patched(&sd, 1, SD_PATCH(1, 0, 0, 0), SD_PATCH(1, 0, 0, 0), FK_MSG_SRQ_DESTROY, &zero);
	sd_plain(&sd, 1, FK_MSG_OBJ_DESTROY, &od);			/* now it goes */
	sd_plain(&sd, 1, FK_MSG_XRCD_CLOSE, &hd);
	rc |= sd_write(dir, "xrc-current", &sd);

	/* seed model: a second connection opens the QP, the creator goes,
	 * the leftover is picked up again by a new connection */
	memset(&sd, 0, sizeof(sd));
	sd_hello(&sd, 0, "fake1", FK_LIFE_SEED);
	sd_fd(&sd, 0, 0, FK_MSG_XRCD_OPEN, &xo);
	sd_plain(&sd, 0, FK_MSG_TGT_QP_CREATE, &tc);
	sd_hello(&sd, 1, "fake1", FK_LIFE_SEED);
	sd_fd(&sd, 1, 0, FK_MSG_XRCD_OPEN, &xo);
	sd_patched(&sd, 1, SD_PATCH(0, 1, 0, 1), SD_PATCH(0, 1, 0, 1), FK_MSG_TGT_QP_OPEN, &to);
	sd_byte(&sd, 0 | 5 << 2);					/* conn 0 goes */
	sd_byte(&sd, 1);
	sd_plain(&sd, 1, FK_MSG_DUMP, &zero);
	sd_byte(&sd, 1 | 5 << 2);					/* conn 1 goes: a leftover */
	sd_byte(&sd, 0);
	sd_hello(&sd, 2, "fake1", FK_LIFE_SEED);
	sd_fd(&sd, 2, 0, FK_MSG_XRCD_OPEN, &xo);
	sd_byte(&sd, 6 << 2);						/* a poll round */
	sd_plain(&sd, 2, FK_MSG_DUMP, &zero);
	rc |= sd_write(dir, "xrc-seed", &sd);

	/* quirks: close while busy, open in any domain, EEXIST */
	memset(&sd, 0, sizeof(sd));
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
	sd_fd(&sd, 0, 0, FK_MSG_XRCD_OPEN, &xo);			/* handle 0, file A */
	sd_plain(&sd, 0, FK_MSG_TGT_QP_CREATE, &tc);			/* handle 1 */
	sd_fd(&sd, 0, 1, FK_MSG_XRCD_OPEN, &xo);			/* handle 2, file B */
	to.xrcd_handle = 2;
	to.flags = FK_Q_OPEN_QP_ANY_DOMAIN;
	sd_patched(&sd, 0, SD_PATCH(0, 1, 1, 1), SD_PATCH(0, 1, 1, 1), FK_MSG_TGT_QP_OPEN, &to);
	hd.handle = 2;
	hd.flags = FK_Q_XRCD_CLOSE_NOT_BUSY;
	sd_plain(&sd, 0, FK_MSG_XRCD_CLOSE, &hd);
	hd.handle = 0;
	sd_plain(&sd, 0, FK_MSG_XRCD_CLOSE, &hd);
	xo.oflags = O_CREAT | O_EXCL;
	xo.flags = FK_Q_XRCD_EXCL_EEXIST;
	sd_fd(&sd, 0, 0, FK_MSG_XRCD_OPEN, &xo);
	xo.has_fd = 0;
	xo.flags = 0;
	sd_plain(&sd, 0, FK_MSG_XRCD_OPEN, &xo);			/* a domain without a file */
	sd_plain(&sd, 0, FK_MSG_DUMP, &zero);
	rc |= sd_write(dir, "quirks", &sd);

	/* monitor, and what a monitor may not do */
	memset(&sd, 0, sizeof(sd));
	sd_plain(&sd, 0, FK_MSG_HELLO, &mon);
	sd_plain(&sd, 0, FK_MSG_DUMP, &zero);
	sd_plain(&sd, 0, FK_MSG_QPN_ALLOC, &zero);
	sd_hello(&sd, 1, "fake0", FK_LIFE_CURRENT);
	sd_hello(&sd, 2, "fake0", FK_LIFE_SEED);			/* EINVAL: mixed models */
	rc |= sd_write(dir, "monitor", &sd);

	/* the object table: PD 0, CQ 1, MR 2, basic SRQ 3, RC QP 4 on them;
	 * EBUSY destroys, type confusion, the connection goes holding all */
	memset(&sd, 0, sizeof(sd));
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
	ob.type = FK_OBJ_PD;
	ob.sub = 0;
	ob.ref[FK_REF_PD] = ob.ref[FK_REF_SCQ] = ob.ref[FK_REF_XRCD] = FK_NO_HANDLE;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	ob.type = FK_OBJ_CQ;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	ob.type = FK_OBJ_MR;
	ob.ref[FK_REF_PD] = 0;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	ob.type = FK_OBJ_SRQ;
	ob.sub = IBV_SRQT_BASIC;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	ob.type = FK_OBJ_QP;
	ob.sub = IBV_QPT_RC;
	ob.ref[FK_REF_SCQ] = ob.ref[FK_REF_RCQ] = 1;
	ob.ref[FK_REF_SRQ] = 3;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	ob.ref[FK_REF_SRQ] = 2;						/* an MR: EINVAL */
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	od.handle = 0;
	od.type = FK_OBJ_PD;
	sd_plain(&sd, 0, FK_MSG_OBJ_DESTROY, &od);			/* EBUSY */
	od.handle = 2;
	od.type = FK_OBJ_MR;
	sd_plain(&sd, 0, FK_MSG_OBJ_DESTROY, &od);
	sd_plain(&sd, 0, FK_MSG_DUMP, &zero);
	rc |= sd_write(dir, "objects", &sd);

	/* MR_REREG: PD 0 and 1, MR 2 on PD 0 moved to PD 1 (PD 0 goes, PD 1
	 * is held), a new access; refusals: no flag, an unknown one, a PD
	 * handle naming the MR, an MR handle naming nothing */
	memset(&sd, 0, sizeof(sd));
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
	ob.type = FK_OBJ_PD;
	ob.sub = 0;
	ob.ref[FK_REF_PD] = ob.ref[FK_REF_SCQ] = ob.ref[FK_REF_RCQ] = FK_NO_HANDLE;
	ob.ref[FK_REF_SRQ] = ob.ref[FK_REF_XRCD] = FK_NO_HANDLE;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	ob.type = FK_OBJ_MR;
	ob.sub = IBV_ACCESS_LOCAL_WRITE;
	ob.ref[FK_REF_PD] = 0;
	sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &ob);
	{
		struct fk_req_mr_rereg rr = { .mr_handle = 2, .flags = FK_REREG_PD, .pd_handle = 1 };

		sd_plain(&sd, 0, FK_MSG_MR_REREG, &rr);
		od.handle = 0;
		od.type = FK_OBJ_PD;
		sd_plain(&sd, 0, FK_MSG_OBJ_DESTROY, &od);		/* gone: not held */
		od.handle = 1;
		sd_plain(&sd, 0, FK_MSG_OBJ_DESTROY, &od);		/* EBUSY: the MR's */
		rr.flags = FK_REREG_ACCESS | FK_REREG_TRANS;
		rr.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		rr.start = rr.hca_va = 0x10000040;
		sd_plain(&sd, 0, FK_MSG_MR_REREG, &rr);
		rr.flags = 0;
		sd_plain(&sd, 0, FK_MSG_MR_REREG, &rr);			/* EINVAL */
		rr.flags = 0x10;
		sd_plain(&sd, 0, FK_MSG_MR_REREG, &rr);			/* EOPNOTSUPP */
		rr.flags = FK_REREG_PD;
		rr.pd_handle = 2;
		sd_plain(&sd, 0, FK_MSG_MR_REREG, &rr);			/* EINVAL: an MR */
		rr.mr_handle = 7;
		sd_plain(&sd, 0, FK_MSG_MR_REREG, &rr);			/* ENOENT */
	}
	sd_plain(&sd, 0, FK_MSG_DUMP, &zero);
	rc |= sd_write(dir, "mr-rereg", &sd);

	/* HELLO quirks: unknown handles fall back, leftovers drop the domain */
	memset(&sd, 0, sizeof(sd));
	sd_hello_q(&sd, 0, "fake1", FK_LIFE_SEED, fk_quirk_flags(FK_MSG_HELLO));
	sd_fd(&sd, 0, 0, FK_MSG_XRCD_OPEN, &xo);
	tc.xrcd_handle = 9;
	sd_plain(&sd, 0, FK_MSG_TGT_QP_CREATE, &tc);			/* falls back to 0 */
	tc.xrcd_handle = 0;
	sd_byte(&sd, 0 | 5 << 2);					/* goes: a leftover */
	sd_byte(&sd, 1);
	sd_hello(&sd, 1, "fake1", FK_LIFE_SEED);
	sd_plain(&sd, 1, FK_MSG_DUMP, &zero);
	rc |= sd_write(dir, "hello-quirks", &sd);

	/* garbage: runt, bad magic, other version, oversize, stray fds, an fd
	 * that was promised and not sent, unknown type, HELLO twice, early */
	memset(&sd, 0, sizeof(sd));
	sd_plain(&sd, 1, FK_MSG_QPN_ALLOC, &zero);			/* before HELLO */
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
	sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);			/* EISCONN */
	sd_raw(&sd, 0, 0, "FKD1\3", 5);
	fk_proto_hdr_init(&h, FK_MSG_DUMP, 8, 9);
	memset(junk, 0, sizeof(junk));
	memcpy(junk, &h, sizeof(h));
	sd_raw(&sd, 0, 0, junk, sizeof(h) + 4);				/* length lies */
	sd_raw(&sd, 0, 0, junk, sizeof(junk));				/* truncated */
	sd_raw(&sd, 0, 5, junk, sizeof(h) + 8);				/* five fds */
	sd_raw(&sd, 0, 1, junk, sizeof(h) + 8);				/* one stray fd */
	xo.has_fd = 1;
	xo.oflags = O_CREAT;
	sd_plain(&sd, 0, FK_MSG_XRCD_OPEN, &xo);			/* EBADF */
	sd_plain(&sd, 0, FK_MSG_RING_SET, &zero);			/* EBADF */
	sd_plain(&sd, 0, FK_MSG__COUNT, &zero);				/* ENOSYS */
	{
		unsigned v[1] = { 2 };

		sd_msg(&sd, 2, 7, v, 1, FK_MSG_HELLO, &mon);		/* version 2 */
		v[0] = FK_PROTO_VERSION;
		sd_msg(&sd, 3, 7, v, 1, FK_MSG_HELLO, &mon);		/* bad magic */
	}
	sd_raw(&sd, 1, 0, junk, 0);					/* empty packet */
	rc |= sd_write(dir, "garbage", &sd);

	/* a context's file: made, imported by a second connection with its
	 * fd (sel 3), objects by handle, an MR's keys, the owner going first,
	 * what the importer makes, a destroyed handle, the quirks */
	{
		struct fk_req_obj pd = {
			.type = FK_OBJ_PD,
			.ref = { FK_NO_HANDLE, FK_NO_HANDLE, FK_NO_HANDLE, FK_NO_HANDLE,
				 FK_NO_HANDLE },
		};
		struct fk_req_obj mr = pd;
		struct fk_req_mr_keys mk = {
			.mr_handle = 1, .lkey = 0x100, .rkey = 0x200, .length = 4096,
			.flags = FK_MR_MAPPED,
		};
		struct fk_req_obj_import oi = { .handle = 0, .type = FK_OBJ_PD };
		struct fk_req_obj_destroy dmr = { .handle = 1, .type = FK_OBJ_MR };

		mr.type = FK_OBJ_MR;
		mr.sub = IBV_ACCESS_LOCAL_WRITE;
		mr.ref[FK_REF_PD] = 0;
		memset(&sd, 0, sizeof(sd));
		sd_hello(&sd, 0, "fake0", FK_LIFE_CURRENT);
		sd_fd(&sd, 0, 0, FK_MSG_RING_SET, &zero);
		sd_plain(&sd, 0, FK_MSG_CTX_FD, &zero);
		sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &pd);		/* PD 0 */
		sd_plain(&sd, 0, FK_MSG_OBJ_CREATE, &mr);		/* MR 1 */
		sd_plain(&sd, 0, FK_MSG_MR_KEYS, &mk);
		sd_hello(&sd, 1, "fake0", FK_LIFE_CURRENT);
		hd.handle = 0;
		sd_fd(&sd, 1, 3, FK_MSG_CTX_IMPORT, &hd);
		sd_plain(&sd, 1, FK_MSG_OBJ_IMPORT, &oi);
		oi.handle = 1;
		oi.type = FK_OBJ_MR;
		sd_plain(&sd, 1, FK_MSG_OBJ_IMPORT, &oi);
		sd_byte(&sd, 0 | 5u << 2);				/* the owner goes */
		sd_byte(&sd, 1);
		sd_plain(&sd, 1, FK_MSG_OBJ_IMPORT, &oi);		/* no ring now */
		sd_plain(&sd, 1, FK_MSG_OBJ_CREATE, &pd);		/* PD 2 */
		sd_plain(&sd, 1, FK_MSG_OBJ_DESTROY, &dmr);
		sd_plain(&sd, 1, FK_MSG_OBJ_IMPORT, &oi);		/* ENOENT */
		oi.flags = FK_Q_IMPORT_STALE_HANDLE;
		sd_plain(&sd, 1, FK_MSG_OBJ_IMPORT, &oi);
		oi.flags = FK_Q_IMPORT_ANY_CONTEXT;
		oi.handle = 7;
		sd_plain(&sd, 1, FK_MSG_OBJ_IMPORT, &oi);
		sd_hello(&sd, 2, "fake0", FK_LIFE_CURRENT);
		sd_fd(&sd, 2, 3, FK_MSG_CTX_IMPORT, &hd);		/* the file still */
		sd_fd(&sd, 2, 0, FK_MSG_CTX_IMPORT, &hd);		/* EISCONN */
		rc |= sd_write(dir, "ctx-file", &sd);
	}
	return rc;
}
