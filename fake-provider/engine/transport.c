/* SPDX-License-Identifier: MIT */
/*
 * How packets travel between processes. Each process has one receive ring
 * (an "inbox": a memfd, registered with the fake kernel daemon by every
 * context of the device) per device; a requester asks the daemon once where
 * a QPN lives (fk_route), maps that process's inbox, and from then on writes
 * its packets straight into it (where a packet goes is the requester's
 * decision, its ROUTE state), data read from the sender's memory as an
 * HCA reads it: one copy into the inbox, one out. The destination hands
 * what arrives, requests and responses, to the engine above through one
 * upcall (struct fe_xport_work.recv: the receive dispatcher, recv.c), which
 * takes them to the responder or the completer: inline whenever it is in a verb, else on
 * its progress thread, which sleeps on a futex in the inbox once the
 * application has called no verb for a while (struct fe_xport.app_gen).
 * A reliable request's answer comes into its requester's own inbox later
 * (plain ACKs coalesced: fp_ack_flush), so two processes sending to each
 * other never wait for each other. XRC packets go to the process of the
 * SRQ they name, after the daemon's gate check of the target QP; its
 * answer is kept while the daemon's route epoch (fk_epoch) holds, so
 * steady XRC traffic makes no daemon round trip, and any change the daemon
 * serves (a modify, a destroy, a connection gone) sends the next message
 * back to it; the responder there checks that SRQ against the target QP's
 * domain (WR-03).
 * A message longer than one record (FP_REC_MAX, 1 MiB) goes in segments,
 * one record each and in order, up to the port's max_msg_sz; the receiving
 * side gathers them (struct fp_reasm) and executes the message whole at its
 * last segment, as an HCA completes it at its last packet.
 *
 * Locking: everything here runs under the plugin lock, except the progress
 * thread's sleep and the producers' ring lock (a word in the inbox holding the
 * pid of its holder: a producer killed inside it does not wedge the ring,
 * fp_ib_lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fp_engine.h"
#include "transport.h"
#include "fe_mem.h"

#define FP_INBOX_MAGIC	0x786f6e69u		/* "inox" */
#define FP_INBOX_HDR	4096u
#define FP_INBOX_DATA	(4u << 20)
#define FP_REC_MAX	(1u << 20)		/* largest payload one record carries */
#define FP_WAIT_MS	10000			/* a full inbox still full by then: its owner is stuck */
#define FP_ACTIVE_NS	100000			/* a data path verb keeps us "active" this long */
#define FP_LINE		64			/* a cache line: what one side writes has one of its own */
#define FP_HOT_NS	50000			/* the progress thread polls this long after serving */

/*
 * The shared header of an inbox. Each side writes its own cache line:
 * producers the lock and tail, the consumer its head, the sleeping
 * progress thread sleepers (seq is bumped only to wake it). A producer
 * keeps the last head it read (struct fe_peer) and reads the consumer's
 * line again only when that says full.
 */
struct fp_inbox {
	uint32_t magic;
	int32_t owner_pid;
	/* producers */
	int32_t plock __attribute__((aligned(FP_LINE)));	/* fp_ib_lock */
	uint64_t tail;			/* committed producers' position */
	/* the consumer */
	uint64_t head __attribute__((aligned(FP_LINE)));	/* bytes, monotonic */
	/* the progress thread's sleep */
	uint32_t seq __attribute__((aligned(FP_LINE)));	/* futex word */
	uint32_t sleepers;		/* > 0: someone waits on seq */
	/* held by the owner's progress thread for as long as it serves the
	 * inbox: a robust mutex, so the kernel marks it when that thread ends,
	 * however (the process killed, or its transport stopped: fe_peer_gone) */
	pthread_mutex_t alive __attribute__((aligned(FP_LINE)));
};

enum { FP_REC_PAD = 1, FP_REC_REQ, FP_REC_RESP };

/*
 * A record of an inbox: this header, of hlen bytes (as much of u as the
 * record's kind takes), then its data.
 */
struct fp_rec {
	uint16_t kind, hlen;
	uint32_t len;			/* the whole record, 8-aligned */
	uint64_t id;
	uint32_t from;			/* REQ: connection id of the requester's inbox */
	uint32_t want;			/* REQ: a response is awaited */
	/* a message longer than FP_REC_MAX goes as segments, in order, one
	 * record each: its offset and whole length (seg_total 0: not cut) */
	uint32_t seg_off, seg_total;
	union {
		struct fp_packet pkt;	/* REQ: the parts its kind reads */
		struct fp_rec_resp {
			enum fp_ack status;
			uint32_t len;
			uint64_t atomic_orig;
			uint32_t rnr_timer;
			uint32_t qpn;	/* the requesting QP */
			uint32_t upto;	/* a cumulative ACK (fp_ack_flush) */
			uint64_t ib_dev, ib_ino;	/* from the inbox of (upto) */
		} resp;
	} u;
};

/* How much of a packet travels: the parts its kind reads (a responder
 * reads the XRC part of XRC packets only, the atomic one of atomics, the
 * UD one of UD packets; never where its data lay in the sender). */
static uint32_t fp_pkt_wire_len(const struct fp_packet *pkt)
{
	if (pkt->src_type == IBV_QPT_UD)
		return offsetof(struct fp_packet, pieces);
	if (pkt->src_type == IBV_QPT_XRC_SEND || pkt->op == FP_PKT_CMP_SWAP ||
	    pkt->op == FP_PKT_FETCH_ADD)
		return offsetof(struct fp_packet, qkey);
	return offsetof(struct fp_packet, xrc_srqn);
}

static uint16_t fp_rec_hlen(size_t part)
{
	return (uint16_t)((offsetof(struct fp_rec, u) + part + 7) & ~(size_t)7);
}

static const char *fp_rec_data(const struct fp_rec *h)
{
	return (const char *)h + h->hlen;
}

struct fe_peer {
	struct fe_peer *next;
	uint64_t head_seen;		/* its consumer's head when last read (at most the head) */
	dev_t st_dev;
	ino_t st_ino;
	struct fp_inbox *ib;
	bool self;
	struct fe_mem_view mem;		/* its published tables and registered memory */
};

/*
 * A message that arrives in segments (longer than one record): gathered
 * here until its last one, then executed (a request) or handed to its WQE
 * (a response) whole. A request is known by its requester's connection and
 * QP (a QP sends one message at a time: its next one waits until the whole
 * of this one is in, requester.c), a response by its request's id. A first
 * segment starts the message again (a retransmission); one out of turn
 * drops it (the requester's timer sends it again).
 */
struct fp_reasm {
	struct fp_reasm *next;
	bool resp;
	uint32_t from, qpn;		/* a request: the requester's connection and QP */
	uint64_t id;
	char *buf;
	uint32_t total, got;
};

struct fp_route_ent {
	struct fp_route_ent *next;
	uint32_t key;			/* a QPN, or a connection id */
	bool conn;
	const struct fk_client *via;	/* another host's daemon (its numbers), NULL: ours */
	struct fe_peer *peer;
	/* XRC: the target QP's gate for this SRQ number, good while the
	 * daemon's route epoch is the one read before asking */
	bool xrc;
	uint32_t srqn;
	unsigned quirks;
	uint64_t epoch;
	struct fk_route rt;
};

#define FP_XPORT_MAX_FK 64

struct fe_xport {
	struct fe_dev *dev;
	pid_t pid;			/* the process it belongs to (fork check) */
	uint64_t app_gen;		/* bumped by every verb (the progress thread reads it) */
	int memfd;
	struct fp_inbox *ib;
	struct stat st;
	pthread_t thread;
	const struct fe_xport_work *work;	/* besides the inbox (hca.c) */
	bool thread_up;
	int started;			/* the progress thread runs its loop */
	volatile int stop;
	struct fk_client *fk[FP_XPORT_MAX_FK];	/* registered connections */
	uint32_t fk_id[FP_XPORT_MAX_FK];
	int nfk;
	struct fe_peer *peers;
	struct fp_route_ent *routes;
	bool draining;
	uint64_t drains;		/* drains that found something, ended (fe_xport_drains) */
	uint64_t next_id;		/* of requests: their responses name them */
	struct fp_reasm *reasm;		/* messages arriving in segments */
	/* The responder's ACK not sent yet: it answers the run of requests of
	 * QP qpn of connection conn executed, up to request id (fp_ack_flush). */
	struct {
		bool on;
		uint32_t conn, qpn, n;
		uint64_t id;
		struct fe_peer *to;
	} ack;
};

static char *fp_ib_data(struct fp_inbox *ib)
{
	return (char *)ib + FP_INBOX_HDR;
}

static void fp_futex_wait(uint32_t *addr, uint32_t val, long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void fp_futex_wake(uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static bool fp_ib_empty(struct fp_inbox *ib)
{
	return __atomic_load_n(&ib->tail, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&ib->head, __ATOMIC_ACQUIRE);
}

/* Sleep until the inbox has something (or ms pass). */
static void fp_ib_sleep(struct fp_inbox *ib, long long ns)
{
	uint32_t seq;

	__atomic_add_fetch(&ib->sleepers, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&ib->seq, __ATOMIC_SEQ_CST);
	if (fp_ib_empty(ib))
		fp_futex_wait(&ib->seq, seq, ns);
	__atomic_sub_fetch(&ib->sleepers, 1, __ATOMIC_SEQ_CST);
}

/* ---- producing into a (peer's or our own) inbox ------------------------------ */
/* A process that can still serve its inbox: not gone, not a zombie whose
 * parent has yet to reap it. (Slow paths only: it reads /proc.) */
static bool fp_pid_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;			/* no /proc: trust kill() */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');		/* "pid (comm) S ...": comm may hold anything */
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/*
 * The producers' lock: 0 free, else the pid of the process that holds it
 * (one thread of a process pushes at a time: the plugin lock). A producer
 * killed inside never committed its record (the tail moves last): one that
 * finds the lock held long by a process that is gone takes it over. One
 * compare-and-swap and one store, where a robust process-shared mutex
 * cost a quarter of a sender's time.
 */
#define FP_PLOCK_SPINS	64		/* then a yield */
#define FP_PLOCK_CHECK	4096		/* then, and as often again, a look at the holder */

static void fp_ib_lock(struct fp_inbox *ib)
{
	int32_t me = (int32_t)fp_self_pid(), cur = 0;
	unsigned spins = 0;

	while (!__atomic_compare_exchange_n(&ib->plock, &cur, me, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (!(++spins % FP_PLOCK_SPINS))
			sched_yield();
		if (!(spins % FP_PLOCK_CHECK) && !fp_pid_alive(cur) &&
		    __atomic_compare_exchange_n(&ib->plock, &cur, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		cur = 0;
	}
}

static void fp_ib_unlock(struct fp_inbox *ib)
{
	__atomic_store_n(&ib->plock, 0, __ATOMIC_RELEASE);
}

/* Commit one record into pe's inbox: the header, then n1 bytes of the npc
 * pieces from byte off of them on; EAGAIN when full. */
static int fp_ib_push(struct fe_peer *pe, struct fp_rec *h, const struct fp_piece *pc,
		      unsigned npc, uint64_t off, uint32_t n1)
{
	struct fp_inbox *ib = pe->ib;
	uint32_t len = (uint32_t)((h->hlen + n1 + 7) & ~(size_t)7);
	uint64_t tail, pad = 0;
	char *data = fp_ib_data(ib);

	fp_ib_lock(ib);
	tail = ib->tail;
	if (tail % FP_INBOX_DATA + len > FP_INBOX_DATA)
		pad = FP_INBOX_DATA - tail % FP_INBOX_DATA;	/* records never wrap */
	if (tail - pe->head_seen + pad + len > FP_INBOX_DATA)
		pe->head_seen = __atomic_load_n(&ib->head, __ATOMIC_ACQUIRE);
	if (tail - pe->head_seen + pad + len > FP_INBOX_DATA) {
		fp_ib_unlock(ib);
		return EAGAIN;
	}
	if (pad) {
		struct fp_rec *p = (struct fp_rec *)(void *)(data + tail % FP_INBOX_DATA);

		p->kind = FP_REC_PAD;
		p->len = (uint32_t)pad;
		tail += pad;
	}
	h->len = len;
	memcpy(data + tail % FP_INBOX_DATA, h, h->hlen);
	if (n1)
		fe_pieces_copy(data + tail % FP_INBOX_DATA + h->hlen, pc, npc, off, n1);
	__atomic_store_n(&ib->tail, tail + len, __ATOMIC_RELEASE);
	fp_ib_unlock(ib);
	/* The tail before the sleepers, as a sleeper counts itself before it
	 * looks at the tail (fp_ib_sleep): one of the two sees the other. Only
	 * the owner's progress thread sleeps, and only while its application
	 * calls no verb: one in its verbs serves the inbox itself and costs
	 * its producers no wake-up. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ib->sleepers, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&ib->seq, 1, __ATOMIC_SEQ_CST);
		fp_futex_wake(&ib->seq);
	}
	return 0;
}

/* Push, waiting for room (serving our own inbox meanwhile if serve). */
static int fp_push_wait(struct fe_xport *xp, struct fe_peer *pe, struct fp_rec *h,
			const struct fp_piece *pc, unsigned npc, uint64_t off, uint32_t n1,
			bool serve)
{
	struct fp_inbox *ib = pe->ib;
	long long end = 0;
	int err;

	while ((err = fp_ib_push(pe, h, pc, npc, off, n1)) == EAGAIN) {
		/* the clock and the multiplier only once it was full */
		if (!end)
			end = fp_now_ns() + (long long)FP_WAIT_MS * 1000000LL * fp_timeout_mult();
		else if (fp_now_ns() > end || !fp_pid_alive(ib->owner_pid))
			return ETIMEDOUT;
		if (serve)
			fe_xport_drain(xp);
		sched_yield();
	}
	return err;
}

/* ---- peers and routes ------------------------------------------------------- */
/* The peer whose inbox is (st_dev, st_ino), if we mapped it. */
static struct fe_peer *fp_peer_find(struct fe_xport *xp, dev_t st_dev, ino_t st_ino)
{
	struct fe_peer *p;

	for (p = xp->peers; p; p = p->next)
		if (p->st_dev == st_dev && p->st_ino == st_ino)
			return p;
	return NULL;
}

static struct fe_peer *fp_peer_get(struct fe_xport *xp, int fd)
{
	struct fe_peer *p;
	struct stat st;
	void *m;

	if (fstat(fd, &st))
		return NULL;
	p = fp_peer_find(xp, st.st_dev, st.st_ino);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->st_dev = st.st_dev;
	p->st_ino = st.st_ino;
	p->self = st.st_dev == xp->st.st_dev && st.st_ino == xp->st.st_ino;
	if (p->self) {
		p->ib = xp->ib;
	} else {
		m = mmap(NULL, FP_INBOX_HDR + FP_INBOX_DATA, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (m == MAP_FAILED || ((struct fp_inbox *)m)->magic != FP_INBOX_MAGIC) {
			if (m != MAP_FAILED)
				munmap(m, FP_INBOX_HDR + FP_INBOX_DATA);
			free(p);
			return NULL;
		}
		p->ib = m;
		fe_mem_peer_map(&p->mem, fd, FP_INBOX_HDR + FP_INBOX_DATA);
	}
	p->next = xp->peers;
	xp->peers = p;
	return p;
}

static struct fp_route_ent *fp_route_find(struct fe_xport *xp, uint32_t key, bool conn,
					  const struct fk_client *via)
{
	struct fp_route_ent *e;

	for (e = xp->routes; e; e = e->next)
		if (e->key == key && e->conn == conn && !e->xrc && e->via == via)
			return e;
	return NULL;
}

/* The XRC gate learned for (qpn, srqn), if the epoch still holds; a stale
 * one is forgotten. */
static struct fp_route_ent *fp_route_find_xrc(struct fe_xport *xp, uint32_t qpn, uint32_t srqn,
					      unsigned quirks, uint64_t epoch,
					      const struct fk_client *via)
{
	struct fp_route_ent **pp, *e;

	for (pp = &xp->routes; (e = *pp); pp = &e->next) {
		if (!e->xrc || e->key != qpn || e->srqn != srqn || e->quirks != quirks ||
		    e->via != via)
			continue;
		if (epoch && e->epoch == epoch)
			return e;
		*pp = e->next;
		free(e);
		return NULL;
	}
	return NULL;
}

static void fp_route_drop(struct fe_xport *xp, uint32_t key, bool conn)
{
	struct fp_route_ent **pp, *e;

	for (pp = &xp->routes; (e = *pp); )
		if (e->key == key && e->conn == conn) {
			*pp = e->next;
			free(e);
		} else {
			pp = &e->next;
		}
}

static struct fk_client *fp_xport_fk(struct fe_xport *xp)
{
	return xp->nfk ? xp->fk[xp->nfk - 1] : NULL;
}

/*
 * The peer for a key through the daemon, remembered: an XRC answer (the
 * target QP's gate for an SRQ number) while the daemon's route epoch holds,
 * any other until the transport drops it; out receives the gate's verdict.
 * via: another host's daemon, asked instead of fk (its numbers are its own).
 */
static struct fe_peer *fp_route(struct fe_xport *xp, struct fk_client *fk, struct fk_client *via,
				int kind, uint32_t num, bool xrc, uint32_t srqn, unsigned quirks,
				struct fk_route *out, bool *cached)
{
	bool conn = kind == FK_ROUTE_CONN;
	uint64_t epoch;
	struct fp_route_ent *e;

	if (via)
		fk = via;
	epoch = xrc ? fe_up->fk_epoch(fk) : 0;	/* before asking: see fk_epoch */
	e = xrc ? fp_route_find_xrc(xp, num, srqn, quirks, epoch, via)
		: fp_route_find(xp, num, conn, via);
	struct fe_peer *p;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (e && xrc)
		*out = e->rt;
	if (cached)
		*cached = e != NULL;
	if (e)
		return e->peer;
	if (!fk || fe_up->fk_route(fk, kind, num, srqn, quirks, out) || out->gate != FK_GATE_OK)
		return NULL;
	p = fp_peer_get(xp, out->fd);
	close(out->fd);
	out->fd = -1;
	if (!p || (xrc && !epoch))
		return p;
	e = calloc(1, sizeof(*e));
	if (e) {
		e->key = num;
		e->conn = conn;
		e->via = via;
		e->peer = p;
		e->xrc = xrc;
		e->srqn = srqn;
		e->quirks = quirks;
		e->epoch = epoch;
		e->rt = *out;
		e->next = xp->routes;
		xp->routes = e;
	}
	return p;
}

/* ---- messages in segments ----------------------------------------------------- */
/* The data length of the segment at off of a message of total bytes: the
 * segments before it were full. */
static uint32_t fp_seg_len(uint32_t total, uint32_t off)
{
	return total - off < FP_REC_MAX ? total - off : FP_REC_MAX;
}

static void fp_reasm_free(struct fp_reasm *m)
{
	free(m->buf);
	free(m);
}

/* Segment h of a cut message (its data follows it): the whole message once
 * its last segment is in, unlinked (the caller frees it), else NULL. */
static struct fp_reasm *fp_reasm_add(struct fe_xport *xp, const struct fp_rec *h, bool resp,
				     uint32_t qpn)
{
	uint32_t n = h->seg_off < h->seg_total ? fp_seg_len(h->seg_total, h->seg_off) : 0;
	struct fp_reasm **pp, *m;

	for (pp = &xp->reasm; *pp; pp = &(*pp)->next) {
		m = *pp;
		if (m->resp == resp && (resp ? m->id == h->id : m->from == h->from && m->qpn == qpn))
			break;
	}
	m = *pp;
	if (!n || (uint64_t)h->hlen + n > h->len)
		return NULL;			/* not a segment this transport made */
	if (m && (!h->seg_off || m->id != h->id || m->got != h->seg_off ||
		  m->total != h->seg_total)) {
		/* started again, or out of turn: what came of it is dropped */
		*pp = m->next;
		fp_reasm_free(m);
		m = NULL;
	}
	if (!m) {
		if (h->seg_off)
			return NULL;
		m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		m->buf = malloc(h->seg_total);
		if (!m->buf) {
			free(m);
			return NULL;		/* lost: the requester sends it again */
		}
		m->resp = resp;
		m->from = h->from;
		m->qpn = qpn;
		m->id = h->id;
		m->total = h->seg_total;
		m->next = xp->reasm;
		xp->reasm = m;
		pp = &xp->reasm;
	}
	memcpy(m->buf + m->got, fp_rec_data(h), n);
	m->got += n;
	if (m->got < m->total)
		return NULL;
	*pp = m->next;
	return m;
}

/* ---- the responder side: what arrives in our inbox ---------------------------- */
/* A response into the requester's inbox; a READ's data longer than one
 * record goes in segments. */
static void fp_push_resp(struct fe_xport *xp, struct fe_peer *p, struct fp_rec *r,
			 const char *data)
{
	uint32_t len = r->u.resp.len, off, n;
	struct fp_piece pc = { data, len };

	if (len <= FP_REC_MAX) {
		fp_push_wait(xp, p, r, &pc, 1, 0, len, false);
		return;
	}
	r->seg_total = len;
	for (off = 0; off < len; off += n) {
		n = fp_seg_len(len, off);
		r->seg_off = off;
		if (fp_push_wait(xp, p, r, &pc, 1, off, n, false))
			return;			/* the requester is stuck or gone */
	}
}

/*
 * The responder's ACKs are coalesced, as an RC responder may acknowledge
 * a run of requests with one ACK of the last (an ACK acknowledges every
 * earlier request, IBA vol 1 9.7.5.1; hfi1 coalesces so: linux v4.5
 * 7c091e5c0685 "add ACK coalescing logic"): a request answered with a plain ACK
 * (no data, no NAK) joins the run of its requester's connection and QP,
 * which is sent, as one cumulative ACK naming this inbox, before any other
 * answer, when the run changes hands or grows long, and at the end of
 * every drain. The requester completes every request of that QP it sent
 * to this inbox up to the one named (fe_comp_response).
 */
#define FP_ACK_RUN	32

static void fp_ack_flush(struct fe_xport *xp)
{
	struct fp_rec r;

	if (!xp->ack.on)
		return;
	xp->ack.on = false;
	memset(&r, 0, offsetof(struct fp_rec, u) + sizeof(r.u.resp));
	r.kind = FP_REC_RESP;
	r.hlen = fp_rec_hlen(sizeof(r.u.resp));
	r.id = xp->ack.id;
	r.u.resp.status = FP_ACK_OK;
	r.u.resp.qpn = xp->ack.qpn;
	r.u.resp.upto = 1;
	r.u.resp.ib_dev = (uint64_t)xp->st.st_dev;
	r.u.resp.ib_ino = (uint64_t)xp->st.st_ino;
	fp_push_wait(xp, xp->ack.to, &r, NULL, 0, 0, 0, false);
}

/* A plain ACK of request h to peer p: into the run, or a run of its own. */
static void fp_ack_add(struct fe_xport *xp, struct fe_peer *p, const struct fp_rec *h)
{
	if (xp->ack.on && (xp->ack.conn != h->from || xp->ack.qpn != h->u.pkt.src_qpn ||
			   xp->ack.n >= FP_ACK_RUN))
		fp_ack_flush(xp);
	if (!xp->ack.on) {
		xp->ack.on = true;
		xp->ack.conn = h->from;
		xp->ack.qpn = h->u.pkt.src_qpn;
		xp->ack.to = p;
		xp->ack.n = 0;
	}
	xp->ack.id = h->id;
	xp->ack.n++;
}

static void fp_handle_req(struct fe_xport *xp, struct fp_rec *h)
{
	struct fp_packet pkt_in, *pkt = &pkt_in;
	struct fp_response resp = { 0 };
	struct fe_rcv rcv = { .pkt = pkt, .resp = &resp };
	struct fp_reasm *m = NULL;
	struct fk_route rt;
	struct fe_peer *p;
	struct fp_rec r;
	/* the data follows the record (a READ's or an atomic's len is what it
	 * asks for: nothing follows) */
	struct fp_piece pc = { fp_rec_data(h), h->u.pkt.len };

	/* the parts of the packet that came: the others, which its kind does not
	 * read (fp_pkt_wire_len), are left unset */
	memcpy(pkt, &h->u.pkt, h->hlen - offsetof(struct fp_rec, u));
	if (h->seg_total) {
		m = fp_reasm_add(xp, h, false, h->u.pkt.src_qpn);
		if (!m)
			return;			/* more to come (or dropped) */
		pc.p = m->buf;
	}
	pkt->pieces = &pc;
	pkt->npieces = 1;
	xp->work->recv(xp->dev, &rcv);	/* the responder, through the dispatcher */
	if (!h->want)
		goto out;
	/* the requester of the ACK run (a stream): no need to ask the way */
	if (xp->ack.on && xp->ack.conn == h->from)
		p = xp->ack.to;
	else
		p = fp_route(xp, fp_xport_fk(xp), NULL, FK_ROUTE_CONN, h->from, false, 0, 0, &rt,
			     NULL);
	if (!p)
		goto out;			/* the requester is gone */
	if (resp.status == FP_ACK_OK && !resp.data && !p->self && !fe_pkt_asks(pkt->op)) {
		fp_ack_add(xp, p, h);
		goto out;
	}
	fp_ack_flush(xp);		/* answers go in the order of their requests */
	memset(&r, 0, offsetof(struct fp_rec, u) + sizeof(r.u.resp));
	r.kind = FP_REC_RESP;
	r.hlen = fp_rec_hlen(sizeof(r.u.resp));
	r.id = h->id;
	r.u.resp.status = resp.status;
	r.u.resp.len = resp.data ? resp.len : 0;
	r.u.resp.atomic_orig = resp.atomic_orig;
	r.u.resp.rnr_timer = resp.rnr_timer;
	r.u.resp.qpn = h->u.pkt.src_qpn;
	if (p->self) {
		/* our own request, through our own inbox: no copy needed */
		struct fe_rcv back = { .resp = &resp, .qpn = h->u.pkt.src_qpn, .id = h->id };

		xp->work->recv(xp->dev, &back);
		goto out;
	}
	fp_push_resp(xp, p, &r, resp.data);
out:
	free(resp.data);
	if (m)
		fp_reasm_free(m);
}

static void fp_handle_resp(struct fe_xport *xp, const struct fp_rec *h)
{
	struct fp_response resp = {
		.status = h->u.resp.status,
		.atomic_orig = h->u.resp.atomic_orig,
		.rnr_timer = (uint8_t)h->u.resp.rnr_timer,
		.len = h->u.resp.len,
		.data = h->u.resp.len ? (void *)fp_rec_data(h) : NULL,	/* valid during the call */
		.upto = h->u.resp.upto != 0,
	};
	struct fe_rcv rcv = { .resp = &resp, .qpn = h->u.resp.qpn, .id = h->id };
	struct fp_reasm *m = NULL;

	if (resp.upto) {
		/* from an inbox we sent to: else it acknowledges nothing of ours */
		resp.from = fp_peer_find(xp, (dev_t)h->u.resp.ib_dev, (ino_t)h->u.resp.ib_ino);
		if (!resp.from)
			return;
	}
	if (h->seg_total) {
		m = fp_reasm_add(xp, h, true, h->u.resp.qpn);
		if (!m)
			return;
		resp.data = m->buf;
	}
	xp->work->recv(xp->dev, &rcv);	/* the completer, through the dispatcher */
	if (m)
		fp_reasm_free(m);
}

/* The application is in a verb, which serves the inbox inline: the
 * progress thread sees the count move and keeps out of the way. */
void fe_xport_touch(struct fe_xport *xp)
{
	if (xp)
		__atomic_store_n(&xp->app_gen, xp->app_gen + 1, __ATOMIC_RELAXED);
}

/* fe_xport_drain past its first tests (apart: every verb makes them, and
 * only them, on the data path). */
static __attribute__((noinline)) void fp_xport_drain(struct fe_xport *xp)
{
	struct fp_inbox *ib = xp->ib;
	uint64_t head;

	xp->draining = true;
	head = __atomic_load_n(&ib->head, __ATOMIC_ACQUIRE);
	while (head != __atomic_load_n(&ib->tail, __ATOMIC_ACQUIRE)) {
		struct fp_rec *h = (struct fp_rec *)(void *)(fp_ib_data(ib) + head % FP_INBOX_DATA);
		/* a header that is not what fp_ib_push writes is passed over */
		bool sane = h->hlen >= offsetof(struct fp_rec, u) && h->hlen <= h->len &&
			    h->hlen <= sizeof(*h);

		if (h->kind == FP_REC_REQ && sane)
			fp_handle_req(xp, h);
		else if (h->kind == FP_REC_RESP && sane)
			fp_handle_resp(xp, h);
		head += h->len;
		__atomic_store_n(&ib->head, head, __ATOMIC_RELEASE);
	}
	fp_ack_flush(xp);
	xp->draining = false;
	xp->drains++;
}

uint64_t fe_xport_drains(const struct fe_xport *xp)
{
	return xp ? xp->drains : 0;
}

bool fe_xport_pending(const struct fe_xport *xp)
{
	return xp && xp->pid == fp_self_pid() && !fp_ib_empty(xp->ib);
}

void fe_xport_drain(struct fe_xport *xp)
{
	/* an empty inbox first: what every verb finds on the data path (the
	 * mapping is there, if inherited through fork, to be looked at) */
	if (!xp || fp_ib_empty(xp->ib) || xp->draining || xp->pid != fp_self_pid())
		return;
	fp_xport_drain(xp);
}

/* ---- the requester side ------------------------------------------------------- */
/* The connection id the daemon gave fk (its requests' responses go to the
 * inbox registered by it): kept since fk joined. */
static uint32_t fp_xport_fk_id(const struct fe_xport *xp, const struct fk_client *fk)
{
	int i;

	for (i = xp->nfk - 1; i >= 0; i--)
		if (xp->fk[i] == fk)
			return xp->fk_id[i];
	return fe_up->fk_conn_id(fk);
}

/*
 * A request of a QP of connection fk into the inbox of to->peer; want: a
 * response is awaited, and names to->id. A payload longer than one record
 * goes in segments of FP_REC_MAX (a multiple of every path MTU, so the cut
 * falls where the wire's packets would end too), in order; to->seg_done
 * holds how much of it is in the inbox already. EAGAIN: the inbox is full
 * (now); a reliable request keeps to->id and to->seg_done and goes on from
 * there when tried again. to->mark: the inbox's end once it was in.
 */
int fe_xport_send(struct fe_xport *xp, struct fe_sent *to, const struct fp_packet *pkt,
		  const struct fk_client *fk, bool want)
{
	uint32_t len = fe_pkt_asks(pkt->op) ? 0 : pkt->len, wire = fp_pkt_wire_len(pkt), off, n;
	struct fe_peer *p = to->peer;
	struct fp_rec r;
	int err;

	memset(&r, 0, offsetof(struct fp_rec, u));
	r.kind = FP_REC_REQ;
	r.hlen = fp_rec_hlen(wire);
	r.id = to->seg_done ? to->id : ++xp->next_id;
	r.from = fp_xport_fk_id(xp, fk);
	memcpy(&r.u.pkt, pkt, wire);
	if (len > FP_REC_MAX)
		r.seg_total = len;
	off = to->seg_done;
	do {
		n = fp_seg_len(len, off);
		r.seg_off = r.seg_total ? off : 0;
		r.want = want && off + n == len;
		/* unreliable: fire and forget, as soon as there is room;
		 * reliable: the requester keeps the WQE and tries again later
		 * when full */
		err = want ? fp_ib_push(p, &r, pkt->pieces, pkt->npieces, off, n)
			   : fp_push_wait(xp, p, &r, pkt->pieces, pkt->npieces, off, n, true);
		if (err)
			break;
		off += n;
	} while (off < len);
	to->id = r.id;
	to->seg_done = err == EAGAIN && off ? off : 0;
	to->mark = __atomic_load_n(&p->ib->tail, __ATOMIC_ACQUIRE);
	return err;
}

/* ---- what the requester's ROUTE and PLACE states ask of the transport ----- */
struct fe_peer *fe_xport_route(struct fe_xport *xp, struct fk_client *fk, struct fe_route *to)
{
	to->peer = NULL;
	to->self = to->cached = false;
	if (!xp || xp->pid != fp_self_pid()) {
		/* none, or the parent's (inherited through fork) */
		memset(&to->rt, 0, sizeof(to->rt));
		to->rt.fd = -1;
		return NULL;
	}
	to->peer = fp_route(xp, fk, to->via, FK_ROUTE_QPN, to->qpn, to->xrc, to->srqn, to->quirks,
			    &to->rt, &to->cached);
	to->self = to->peer && to->peer->self;
	return to->peer;
}

int fe_xport_memfd(const struct fe_xport *xp)
{
	return xp && xp->pid == fp_self_pid() ? xp->memfd : -1;
}

/* The requester's check on the target's published tables, as this peer maps
 * them (fe_mem_view_remote); a peer nobody serves any more lets them go. */
int fe_peer_remote(struct fe_peer *p, uint32_t dst_qpn, uint64_t addr, uint32_t rkey,
		   uint64_t len, int need, char **where)
{
	*where = NULL;
	if (!p || p->self || !p->mem.tabs)
		return FE_MEM_FALLBACK;
	if (__atomic_load_n(&p->ib->owner_pid, __ATOMIC_ACQUIRE) <= 0) {
		fe_mem_peer_unmap(&p->mem);
		return FE_MEM_FALLBACK;
	}
	return fe_mem_view_remote(&p->mem, dst_qpn, addr, rkey, len, need, where);
}

/* Whether the process behind a peer can still answer (slow: reads /proc). */
bool fe_peer_alive(const struct fe_peer *p)
{
	pid_t pid = (pid_t)__atomic_load_n(&p->ib->owner_pid, __ATOMIC_SEQ_CST);

	return p->self || (pid > 0 && fp_pid_alive(pid));
}

/*
 * Whether the owner of p has executed everything in its inbox up to a mark
 * (its end once a request was in, fe_xport_send: bytes, monotonic): the
 * requester's PLACE keeps a QP's one-sided operation behind the requests
 * the QP put in that inbox before it (an unreliable request completes when
 * pushed).
 */
bool fe_peer_served(const struct fe_peer *p, uint64_t mark)
{
	return (int64_t)(__atomic_load_n(&p->ib->head, __ATOMIC_ACQUIRE) - mark) >= 0;
}

/*
 * Whether the process behind a peer stopped serving its inbox for good
 * (killed, exited, its last context closed): its progress thread ended,
 * and the kernel marked the robust mutex that thread held (FUTEX_OWNER_DIED,
 * linux v6.1 kernel/futex/core.c handle_futex_death). Exact and without a
 * system call while the owner lives (a failed trylock in user space): the
 * requester's PLACE asks before every operation it does in a peer's
 * memory, which a dead process must not see complete. A mutex found dead
 * is left unrecoverable (unlocked without pthread_mutex_consistent), so
 * every later look says so at once.
 */
bool fe_peer_gone(const struct fe_peer *p)
{
	int err;

	if (p->self)
		return false;
	err = pthread_mutex_trylock(&p->ib->alive);
	if (err == EBUSY)
		return false;
	if (!err || err == EOWNERDEAD)
		pthread_mutex_unlock(&p->ib->alive);
	return true;
}

void fe_xport_forget(struct fe_xport *xp, uint32_t qpn)
{
	fp_route_drop(xp, qpn, false);
}

/* ---- lifetime ------------------------------------------------------------------- */
static void *fp_progress(void *arg)
{
	struct fe_xport *xp = arg;
	struct timespec active = { 0, FP_ACTIVE_NS };
	uint64_t seen = __atomic_load_n(&xp->app_gen, __ATOMIC_RELAXED), gen;
	long long hot_until = 0;	/* just served: stay awake till then */
	sigset_t all;

	/* signals are the application's business, not this thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&xp->ib->alive);	/* never unlocked: see fe_peer_gone */
	__atomic_store_n(&xp->started, 1, __ATOMIC_RELEASE);
	fp_futex_wake((uint32_t *)&xp->started);
	while (!__atomic_load_n(&xp->stop, __ATOMIC_ACQUIRE)) {
		long long now, due;

		gen = __atomic_load_n(&xp->app_gen, __ATOMIC_RELAXED);
		if (gen != seen) {
			/* The application called a verb since we looked: its verbs
			 * serve the inbox. Look again once it may have gone idle
			 * (asleep on a completion channel, say); producers do not
			 * wake us meanwhile (no sleeper). */
			seen = gen;
			hot_until = 0;
			nanosleep(&active, NULL);
			continue;
		}
		now = fp_now_ns();
		due = xp->work->next_due();	/* a retransmission */
		if (fp_ib_empty(xp->ib) && !(due && due <= now)) {
			/* Right after serving a passive side's inbox (one-sided
			 * traffic to an application that calls no verb), the next
			 * request is likely microseconds away: poll for it rather
			 * than pay a futex wake-up on both sides. */
			if (now < hot_until) {
				sched_yield();
				continue;
			}
			long long ns = 200000000LL;

			if (due && due - now < ns)
				ns = due - now;
			fp_ib_sleep(xp->ib, ns);
			continue;
		}
		/* a lock held means a verb runs, which serves the inbox itself */
		if (fe_trylock()) {
			struct timespec ts = { 0, FP_ACTIVE_NS / 2 };

			nanosleep(&ts, NULL);
			continue;
		}
		fe_xport_drain(xp);
		xp->work->retry();
		fe_unlock();
		hot_until = fp_now_ns() + FP_HOT_NS;
	}

	return NULL;
}

/* The owner's liveness word (struct fp_inbox.alive). */
static int fp_alive_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int err;

	err = pthread_mutexattr_init(&a);
	if (err)
		return err;
	err = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (!err)
		err = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (!err)
		err = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return err;
}

static struct fe_xport *fp_xport_new(struct fe_dev *dev, const struct fe_xport_work *work)
{
	struct fe_xport *xp = calloc(1, sizeof(*xp));
	void *m;

	if (!xp)
		return NULL;
	xp->dev = dev;
	xp->work = work;
	xp->pid = fp_self_pid();
	xp->memfd = memfd_create("ibvct-inbox", MFD_CLOEXEC);
	if (xp->memfd < 0)
		goto err_free;
	if (ftruncate(xp->memfd, FP_INBOX_HDR + FP_INBOX_DATA) || fstat(xp->memfd, &xp->st))
		goto err_close;
	m = mmap(NULL, FP_INBOX_HDR + FP_INBOX_DATA, PROT_READ | PROT_WRITE, MAP_SHARED,
		 xp->memfd, 0);
	if (m == MAP_FAILED)
		goto err_close;
	xp->ib = m;
	xp->ib->owner_pid = xp->pid;
	xp->ib->magic = FP_INBOX_MAGIC;
	if (fp_alive_init(&xp->ib->alive))
		goto err_unmap;
	/* registered memory and the tables peers read, past the inbox */
	fe_mem_attach(dev, xp->memfd, FP_INBOX_HDR + FP_INBOX_DATA);
	if (pthread_create(&xp->thread, NULL, fp_progress, xp))
		goto err_unmap;
	xp->thread_up = true;
	/* as fk_connect does: no fork() may copy a thread half started */
	while (!__atomic_load_n(&xp->started, __ATOMIC_ACQUIRE))
		fp_futex_wait((uint32_t *)&xp->started, 0, 100000000LL);
	return xp;

err_unmap:
	fe_mem_detach(dev);
	munmap(m, FP_INBOX_HDR + FP_INBOX_DATA);
err_close:
	close(xp->memfd);
err_free:
	free(xp);
	return NULL;
}

/* Unmap and free; the thread (if it is ours and up) must be stopped. */
static void fp_xport_free(struct fe_xport *xp)
{
	while (xp->peers) {
		struct fe_peer *p = xp->peers;

		xp->peers = p->next;
		if (!p->self) {
			munmap(p->ib, FP_INBOX_HDR + FP_INBOX_DATA);
			fe_mem_peer_unmap(&p->mem);
		}
		free(p);
	}
	while (xp->routes) {
		struct fp_route_ent *e = xp->routes;

		xp->routes = e->next;
		free(e);
	}
	while (xp->reasm) {
		struct fp_reasm *m = xp->reasm;

		xp->reasm = m->next;
		fp_reasm_free(m);
	}
	if (xp->pid == fp_self_pid())
		fe_mem_detach(xp->dev);
	munmap(xp->ib, FP_INBOX_HDR + FP_INBOX_DATA);
	close(xp->memfd);
	free(xp);
}

int fe_xport_register(struct fe_xport **xpp, struct fe_dev *dev, struct fk_client *fk,
		      const struct fe_xport_work *work)
{
	struct fe_xport *xp = *xpp;
	int err;

	if (xp && xp->pid != fp_self_pid()) {
		/* inherited through fork(): the parent's, and its thread is not here */
		fp_xport_free(xp);
		xp = *xpp = NULL;
	}
	if (!xp) {
		xp = fp_xport_new(dev, work);
		if (!xp)
			return ENOMEM;
		*xpp = xp;
	}
	if (xp->nfk == FP_XPORT_MAX_FK)
		return EMFILE;
	err = fe_up->fk_ring_set(fk, xp->memfd);
	if (err)
		return err;
	xp->fk_id[xp->nfk] = fe_up->fk_conn_id(fk);
	xp->fk[xp->nfk++] = fk;
	return 0;
}

struct fe_xport *fe_xport_unregister(struct fe_xport **xpp, struct fk_client *fk)
{
	struct fe_xport *xp = *xpp;
	int i;

	if (!xp || xp->pid != fp_self_pid())
		return NULL;
	for (i = 0; i < xp->nfk; i++)
		if (xp->fk[i] == fk) {
			xp->fk[i] = xp->fk[xp->nfk - 1];
			xp->fk_id[i] = xp->fk_id[xp->nfk - 1];
			xp->nfk--;
			break;
		}
	/* a route through a connection that goes may name it: forget them all */
	while (xp->routes) {
		struct fp_route_ent *e = xp->routes;

		xp->routes = e->next;
		free(e);
	}
	if (xp->nfk)
		return NULL;
	*xpp = NULL;
	return xp;			/* the caller stops it once unlocked */
}

void fe_xport_stop(struct fe_xport *xp)
{
	if (!xp)
		return;
	/* peers waiting on us give up at once: nobody serves this inbox now */
	__atomic_store_n(&xp->ib->owner_pid, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&xp->stop, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&xp->ib->seq, 1, __ATOMIC_SEQ_CST);
	fp_futex_wake(&xp->ib->seq);
	if (xp->thread_up)
		pthread_join(xp->thread, NULL);
	fp_xport_free(xp);
}
