/* SPDX-License-Identifier: MIT */
/*
 * The fake HCA's figures, through ref-impl's libibverbs and the fake
 * provider exactly as an application sees a device: this process (the
 * initiator) and a forked peer, each with its own device context, RC and
 * XRC QPs between them, 64-byte messages unless said; and two QPs of one
 * process for the loopback rate. Every figure runs after a warm-up and is
 * bounded by its iteration count and its time (bench.h).
 *
 * Besides the verbs the two processes share a pipe (phase commands and
 * their end) and one page (how many messages the receiver has seen, and
 * where the initiator stopped): the passive target of RDMA WRITE, READ and
 * atomics calls no verb after setup, it only sleeps and reads its own
 * memory, and checks there that the operations took effect.
 *
 * The one-sided session (issue 28) has targets that wait as one-sided
 * applications do, calling no verb meanwhile: blocked in read() on a socket
 * they share with the initiator, spinning on their own buffer (write-then-
 * spin: each side WRITEs a sequence number to the other), or asleep in
 * ibv_get_cq_event on their receive CQ's channel (the mixed stream, whose
 * SENDs wake them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "bench.h"

#define MSG	 64
#define BIG	 (64 * 1024)
#define DEPTH	 512			/* every queue; a sender keeps WINDOW in flight */
#define WINDOW	 (DEPTH / 2)
#define SIG	 64			/* one send in SIG is signaled */
#define TX_SLOTS (BIG / MSG)		/* > WINDOW: no slot is rewritten while in flight */
/* The one buffer (and MR) of an endpoint. */
#define OFF_TX	 0			/* what it sends from */
#define OFF_RX	 BIG			/* where every receive lands (BIG each) */
#define OFF_W	 (2 * BIG)		/* RDMA WRITE target: the tag of the last write */
#define OFF_R	 (OFF_W + 4096)		/* RDMA READ source: a known pattern */
#define OFF_A	 (OFF_W + 8192)		/* fetch-and-add counter */
#define OFF_L	 (OFF_W + 12288)	/* where READ and atomic results land */
#define OFF_S	 (OFF_W + 14336)	/* write-then-spin: the peer's last sequence number */
#define BUF_LEN	 (OFF_W + 16384)
#define UNSET	 UINT64_MAX
#define MIX	 256			/* mixed: one message in MIX is a SEND, the rest WRITEs */
#define MIX_CAP	 65536			/* mixed: SENDs timed at most (a burst stops there) */
#define GIVE_UP_NS 10000000000LL	/* a spin that waited 10 s (stretched): a failure */

/* The side channel beside the verbs (MAP_SHARED, made before the fork). */
struct sync {
	uint64_t received;		/* the receiver's count in this phase */
	uint64_t total;			/* the initiator's, once it stopped */
	uint64_t last_write;		/* mixed: the tag the last WRITE left at OFF_W */
};

/* Mixed: when each SEND was posted, and when the target, woken through its
 * channel, polled its receive (both processes read CLOCK_MONOTONIC). */
struct mix_times {
	long long posted[MIX_CAP];
	long long woke[MIX_CAP];
};

/* What an endpoint tells its peer. */
struct info {
	uint32_t qpn;			/* RC QP, or XRC_SEND QP */
	uint32_t tgt_qpn;		/* XRC_RECV QP */
	uint32_t srqn;			/* XRC SRQ */
	uint32_t rkey;
	uint64_t addr;
};

enum phase {
	PH_READY = 1, PH_ECHO, PH_SINK, PH_WRITE, PH_READ, PH_ATOMIC, PH_DONE, PH_END,
	/* the target blocks in read() on the socket until the initiator stopped */
	PH_WRITE_BLOCKED, PH_READ_BLOCKED, PH_ATOMIC_BLOCKED,
	PH_SPIN,		/* the target answers each WRITE with one, spinning between */
	PH_MIXED,		/* the target sleeps on its channel, woken by SENDs */
};

struct ep {
	struct ibv_device **list;
	struct ibv_context *ctx;
	bool own_ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;		/* RC, or XRC_SEND */
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;		/* XRC: receives land here */
	struct ibv_qp *tgt;		/* XRC_RECV */
	uint32_t srqn;
	char *buf;
	long posted, retired;		/* send WRs posted, and known complete */
	struct info peer;
	struct sync *sy;
	struct mix_times *mt;
	int in, out;			/* from and to the peer */
	int sock;			/* a socket to the peer: a blocked target reads it */
	bool with_channel;		/* the receive CQ gets a completion channel */
	enum phase ph;			/* the initiator: the phase under way */
	struct ibv_comp_channel *ch;
};

/* ---- the pipe ---------------------------------------------------------------- */
static void pipe_put(int fd, const void *p, size_t len)
{
	if (write(fd, p, len) != (ssize_t)len)
		bench_peer_lost("write to its pipe failed");
}

static void pipe_get(int fd, void *p, size_t len)
{
	ssize_t n = read(fd, p, len);

	if (n != (ssize_t)len)
		bench_peer_lost(n < 0 ? "read from its pipe failed" : "its pipe closed");
}

static void say(struct ep *e, uint32_t what)
{
	pipe_put(e->out, &what, sizeof(what));
}

static uint32_t hear(struct ep *e)
{
	uint32_t what;

	pipe_get(e->in, &what, sizeof(what));
	return what;
}

/* ---- setup ------------------------------------------------------------------- */
static void ep_open_dev(struct ep *e)
{
	int n = 0;

	e->list = ibv_get_device_list(&n);
	if (!e->list)
		bench_fail_errno("ibv_get_device_list", errno);
	if (n < 1)
		bench_fail("ibv_get_device_list: the script declares no device");
	e->ctx = ibv_open_device(e->list[0]);
	if (!e->ctx)
		bench_fail_errno("ibv_open_device", errno);
	e->own_ctx = true;
}

static void ep_objects(struct ep *e)
{
	int i;

	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		bench_fail_errno("ibv_alloc_pd", errno);
	if (e->with_channel) {
		e->ch = ibv_create_comp_channel(e->ctx);
		if (!e->ch)
			bench_fail_errno("ibv_create_comp_channel", errno);
	}
	e->scq = ibv_create_cq(e->ctx, 2 * DEPTH, NULL, NULL, 0);
	e->rcq = e->scq ? ibv_create_cq(e->ctx, 2 * DEPTH, NULL, e->ch, 0) : NULL;
	if (!e->rcq)
		bench_fail_errno("ibv_create_cq", errno);
	e->buf = aligned_alloc(4096, BUF_LEN);
	if (!e->buf)
		bench_fail_errno("aligned_alloc", errno);
	memset(e->buf, 0, BUF_LEN);
	for (i = 0; i < MSG; i++)
		e->buf[OFF_R + i] = (char)(i * 7 + 3);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr)
		bench_fail_errno("ibv_reg_mr", errno);
}

static void ep_rc_qp(struct ep *e)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = DEPTH;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp)
		bench_fail_errno("ibv_create_qp(RC)", errno);
}

/* An XRC domain of this process, its SRQ and target QP, and a send QP. */
static void ep_xrc_objects(struct ep *e)
{
	struct ibv_xrcd_init_attr xa;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex qa;
	int err;

	memset(&xa, 0, sizeof(xa));
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;			/* a domain of this process alone */
	xa.oflags = O_CREAT;
	e->xrcd = ibv_open_xrcd(e->ctx, &xa);
	if (!e->xrcd)
		bench_fail_errno("ibv_open_xrcd", errno);
	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = e->pd;
	sa.xrcd = e->xrcd;
	sa.cq = e->rcq;
	sa.attr.max_wr = DEPTH;
	sa.attr.max_sge = 1;
	e->srq = ibv_create_srq_ex(e->ctx, &sa);
	if (!e->srq)
		bench_fail_errno("ibv_create_srq_ex(XRC)", errno);
	err = ibv_get_srq_num(e->srq, &e->srqn);
	if (err)
		bench_fail_errno("ibv_get_srq_num", err);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = e->xrcd;
	e->tgt = ibv_create_qp_ex(e->ctx, &qa);
	if (!e->tgt)
		bench_fail_errno("ibv_create_qp_ex(XRC_RECV)", errno);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = e->pd;
	qa.send_cq = e->scq;
	qa.cap.max_send_wr = DEPTH;
	qa.cap.max_send_sge = 1;
	e->qp = ibv_create_qp_ex(e->ctx, &qa);
	if (!e->qp)
		bench_fail_errno("ibv_create_qp_ex(XRC_SEND)", errno);
}

static void qp_to_rtr(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (err)
		bench_fail_errno("ibv_modify_qp(INIT)", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;		/* 10 us: a receiver short of WQEs slows, never fails */
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		bench_fail_errno("ibv_modify_qp(RTR)", err);
}

static void qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;		/* without end */
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		bench_fail_errno("ibv_modify_qp(RTS)", err);
}

static void post_recvs(struct ep *e, int n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + OFF_RX, .length = BIG,
			       .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err;

	while (n-- > 0) {
		err = e->srq ? ibv_post_srq_recv(e->srq, &wr, &bad) : ibv_post_recv(e->qp, &wr, &bad);
		if (err)
			bench_fail_errno(e->srq ? "ibv_post_srq_recv" : "ibv_post_recv", err);
	}
}

static void info_mine(struct ep *e, struct info *i)
{
	memset(i, 0, sizeof(*i));
	i->qpn = e->qp->qp_num;
	i->tgt_qpn = e->tgt ? e->tgt->qp_num : 0;
	i->srqn = e->srqn;
	i->rkey = e->mr->rkey;
	i->addr = (uintptr_t)e->buf;
}

/* Both sides: objects, the exchange (the peer speaks first), connect, receives. */
static void ep_setup(struct ep *e, bool xrc, bool initiator)
{
	struct info mine;

	ep_open_dev(e);
	ep_objects(e);
	if (xrc)
		ep_xrc_objects(e);
	else
		ep_rc_qp(e);
	info_mine(e, &mine);
	if (initiator) {
		pipe_get(e->in, &e->peer, sizeof(e->peer));
		pipe_put(e->out, &mine, sizeof(mine));
	} else {
		pipe_put(e->out, &mine, sizeof(mine));
		pipe_get(e->in, &e->peer, sizeof(e->peer));
	}
	if (xrc)
		qp_to_rtr(e->tgt, e->peer.qpn);
	qp_to_rtr(e->qp, xrc ? e->peer.tgt_qpn : e->peer.qpn);
	qp_to_rts(e->qp);
	post_recvs(e, DEPTH);
}

static void ep_close(struct ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->tgt)
		ibv_destroy_qp(e->tgt);
	if (e->srq)
		ibv_destroy_srq(e->srq);
	if (e->xrcd)
		ibv_close_xrcd(e->xrcd);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->own_ctx)
		ibv_close_device(e->ctx);
	if (e->list)
		ibv_free_device_list(e->list);
	free(e->buf);
}

/* ---- the data path ------------------------------------------------------------- */
/* Retire what the send CQ reports: a signaled WR completes every earlier one. */
static int tx_poll(struct ep *e)
{
	struct ibv_wc wc[32];
	int i, n = ibv_poll_cq(e->scq, 32, wc);

	if (n < 0)
		bench_fail("ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			bench_fail("send completion: %s (%d)", ibv_wc_status_str(wc[i].status),
				   wc[i].status);
		e->retired = (long)wc[i].wr_id + 1;
	}
	return n;
}

static void tx_drain(struct ep *e)
{
	unsigned spins = 0;

	while (e->retired < e->posted)
		if (!tx_poll(e))
			bench_relax(&spins);
}

static void tx_post(struct ep *e, struct ibv_send_wr *wr, bool signaled)
{
	struct ibv_send_wr *bad;
	unsigned spins = 0;
	int err;

	while (e->posted - e->retired >= WINDOW)
		if (!tx_poll(e))
			bench_relax(&spins);
	wr->wr_id = (uint64_t)e->posted;
	wr->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	err = ibv_post_send(e->qp, wr, &bad);
	if (err)
		bench_fail_errno("ibv_post_send", err);
	e->posted++;
}

/* Take receive completions off the CQ and post as many receives again. */
static int rx_poll(struct ep *e)
{
	struct ibv_wc wc[32];
	int i, n = ibv_poll_cq(e->rcq, 32, wc);

	if (n < 0)
		bench_fail("ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV)
			bench_fail("receive completion: %s (%d), opcode %d",
				   ibv_wc_status_str(wc[i].status), wc[i].status, wc[i].opcode);
	post_recvs(e, n);
	return n;
}

/* One SEND (to the peer's SRQ on XRC) or RDMA WRITE of len bytes; tag
 * numbers it (a WRITE carries tag + 1 in its first 8 bytes). */
static void post_msg(struct ep *e, enum ibv_wr_opcode opc, uint32_t len, long tag, bool signaled)
{
	char *src = e->buf + OFF_TX + (len == MSG ? (size_t)(tag % TX_SLOTS) * MSG : 0);
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opc;
	if (opc == IBV_WR_RDMA_WRITE) {
		uint64_t t = (uint64_t)tag + 1;

		memcpy(src, &t, sizeof(t));
		wr.wr.rdma.remote_addr = e->peer.addr + OFF_W;
		wr.wr.rdma.rkey = e->peer.rkey;
	}
	if (e->tgt)
		wr.qp_type.xrc.remote_srqn = e->peer.srqn;
	tx_post(e, &wr, signaled);
}

/* How many messages the receiver has seen: the peer's count, or (loopback)
 * our own, polling the receiving endpoint. */
struct rx_side {
	struct ep *rx;			/* loopback: the receiving endpoint */
	struct sync *sy;		/* cross-process: the peer's count */
	long got;
};

static long rx_count(struct rx_side *r)
{
	if (r->rx)
		r->got += rx_poll(r->rx);
	else
		r->got = (long)__atomic_load_n(&r->sy->received, __ATOMIC_ACQUIRE);
	return r->got;
}

/*
 * Send up to n messages from *next on, fewer when until passes (looked at
 * every SIG messages, right after a signaled one, so that the last one
 * posted is always signaled); with r, never more than WINDOW ahead of the
 * receiver. Then wait until all completed (and arrived).
 */
static void burst(struct ep *e, enum ibv_wr_opcode opc, uint32_t len, struct rx_side *r,
		  long *next, long n, long long until)
{
	unsigned spins = 0;
	long k;

	for (k = 0; k < n; k++) {
		if (k && !(k % SIG) && fp_now_ns() > until)
			break;
		/* the receiver is looked at (in loopback: polled) only when the
		 * count last seen leaves no room in the window, as a streaming
		 * application polls its receive CQ in batches */
		while (r && *next - r->got >= WINDOW && *next - rx_count(r) >= WINDOW)
			if (!tx_poll(e))
				bench_relax(&spins);
		post_msg(e, opc, len, *next, k % SIG == SIG - 1 || k == n - 1);
		(*next)++;
	}
	tx_drain(e);
	while (r && rx_count(r) < *next)
		bench_relax(&spins);
}

/* A warm-up burst, then the timed one: messages per second, *count of them. */
static double stream(struct ep *e, enum ibv_wr_opcode opc, uint32_t len, struct rx_side *r,
		     long *next, struct bench_budget b, long *count)
{
	struct bench_budget w = bench_warm(b);
	long long t0;
	long base;

	burst(e, opc, len, r, next, w.n, fp_now_ns() + w.ns);
	base = *next;
	t0 = fp_now_ns();
	burst(e, opc, len, r, next, b.n, t0 + b.ns);
	*count = *next - base;
	return (double)*count * 1e9 / (double)(fp_now_ns() - t0);
}

/* ---- the peer -------------------------------------------------------------------- */
/* Receive until the initiator's total; with echo, answer each message. */
static void peer_receive(struct ep *e, bool echo)
{
	unsigned spins = 0;
	long got = 0, k, i;

	while ((uint64_t)got != __atomic_load_n(&e->sy->total, __ATOMIC_ACQUIRE)) {
		k = rx_poll(e);
		for (i = 0; echo && i < k; i++)
			post_msg(e, IBV_WR_SEND, MSG, e->posted, e->posted % SIG == SIG - 1);
		if (echo && !k)
			tx_poll(e);
		got += k;
		__atomic_store_n(&e->sy->received, (uint64_t)got, __ATOMIC_RELEASE);
		if (!k)
			bench_relax(&spins);
	}
}

static uint64_t load_u64(const char *p)
{
	uint64_t v;

	__atomic_load((const uint64_t *)(const void *)p, &v, __ATOMIC_ACQUIRE);
	return v;
}

/* After the initiator stopped: our own memory, where its total WRITEs, READs
 * or fetch-and-adds (ph) must have left their mark. */
static void peer_check(struct ep *e, enum phase ph, uint64_t total)
{
	struct timespec nap = { 0, 100000 };
	long long give_up;
	int i;

	switch (ph) {
	case PH_WRITE:
		/* the flag the last write changes: its tag */
		give_up = fp_now_ns() + 1000000000LL * fp_timeout_mult();
		while (load_u64(e->buf + OFF_W) != total && fp_now_ns() < give_up)
			nanosleep(&nap, NULL);
		if (load_u64(e->buf + OFF_W) != total)
			bench_fail("RDMA WRITE: the target's memory holds tag %llu, the last "
				   "completed write carried %llu",
				   (unsigned long long)load_u64(e->buf + OFF_W),
				   (unsigned long long)total);
		break;
	case PH_READ:
		for (i = 0; i < MSG; i++)
			if (e->buf[OFF_R + i] != (char)(i * 7 + 3))
				bench_fail("RDMA READ: the target's source buffer changed");
		break;
	default:
		if (load_u64(e->buf + OFF_A) != total)
			bench_fail("fetch-and-add: the target's counter is %llu after %llu adds",
				   (unsigned long long)load_u64(e->buf + OFF_A),
				   (unsigned long long)total);
		break;
	}
}

/* A passive target: no verb; sleep until the initiator stopped, then check. */
static void peer_passive(struct ep *e, enum phase ph)
{
	struct timespec nap = { 0, 100000 };
	uint64_t total;

	while ((total = __atomic_load_n(&e->sy->total, __ATOMIC_ACQUIRE)) == UNSET) {
		nanosleep(&nap, NULL);
		if (bench_orphaned())
			_exit(1);
	}
	peer_check(e, ph, total);
}

static bool phase_blocked(enum phase ph)
{
	return ph == PH_WRITE_BLOCKED || ph == PH_READ_BLOCKED || ph == PH_ATOMIC_BLOCKED;
}

/* A blocked target: no verb; blocked in read() on the socket, which the
 * initiator writes once it stopped, then check. */
static void peer_blocked(struct ep *e, enum phase ph)
{
	ssize_t n;
	char c;

	do
		n = read(e->sock, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		bench_peer_lost(n < 0 ? "read from its socket failed" : "its socket closed");
	peer_check(e, ph == PH_WRITE_BLOCKED ? PH_WRITE :
		      ph == PH_READ_BLOCKED ? PH_READ : PH_ATOMIC,
		   __atomic_load_n(&e->sy->total, __ATOMIC_ACQUIRE));
}

/* An RDMA WRITE of the 8-byte sequence number seq into the peer's OFF_S. */
static void post_seq(struct ep *e, uint64_t seq, bool signaled)
{
	char *src = e->buf + OFF_TX + (size_t)(e->posted % TX_SLOTS) * MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = sizeof(seq),
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr;

	memcpy(src, &seq, sizeof(seq));
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = e->peer.addr + OFF_S;
	wr.wr.rdma.rkey = e->peer.rkey;
	tx_post(e, &wr, signaled);
}

/* Write-then-spin, one side's step: reap send completions now and then
 * (selective signaling, one in SIG), WRITE seq to the peer, and spin on
 * our own OFF_S, calling no verb, until the peer's WRITE of seq landed. */
static void spin_step(struct ep *e, uint64_t seq)
{
	unsigned spins = 0;
	long long give_up = 0;

	if (e->posted % SIG == 0)
		tx_poll(e);
	post_seq(e, seq, e->posted % SIG == SIG - 1);
	while (load_u64(e->buf + OFF_S) != seq) {
		bench_relax(&spins);
		if (spins % 4096)
			continue;
		if (!give_up)
			give_up = fp_now_ns() + GIVE_UP_NS * fp_timeout_mult();
		else if (fp_now_ns() > give_up)
			bench_fail("write-then-spin: the peer's WRITE of %llu did not land in "
				   "%lld s", (unsigned long long)seq,
				   GIVE_UP_NS * fp_timeout_mult() / 1000000000LL);
	}
}

/* The end of write-then-spin on one side: the last WRITE (last) again,
 * signaled, so that every one posted completes. */
static void spin_drain(struct ep *e, uint64_t last)
{
	if (e->retired < e->posted) {
		post_seq(e, last, true);
		tx_drain(e);
	}
}

/* The spinning target: answer sequence number k (1, 2, ...) when it lands
 * with a WRITE of k, until the initiator stopped (it has then seen our
 * answer to its last one); no verb while it waits. */
static void peer_spin(struct ep *e)
{
	uint64_t want = 1, total;
	unsigned spins = 0;

	for (;;) {
		if (load_u64(e->buf + OFF_S) == want) {
			if (e->posted % SIG == 0)
				tx_poll(e);
			post_seq(e, want++, e->posted % SIG == SIG - 1);
			continue;
		}
		total = __atomic_load_n(&e->sy->total, __ATOMIC_ACQUIRE);
		if (total != UNSET)
			break;
		bench_relax(&spins);
	}
	spin_drain(e, want - 1);
	if (want - 1 != total)
		bench_fail("write-then-spin: the target answered %llu WRITEs, the initiator "
			   "made %llu", (unsigned long long)(want - 1), (unsigned long long)total);
}

/* The sleeping target of the mixed stream: armed on its receive CQ, asleep
 * in ibv_get_cq_event until a SEND completes there; it polls, stamps the
 * time of each receive, posts as many again, arms again, until the
 * initiator's last SEND. Then the WRITEs before it must have landed. */
static void peer_mixed(struct ep *e)
{
	struct ibv_wc wc[32];
	struct ibv_cq *ecq;
	void *ectx;
	uint64_t got = 0, total;
	long long now;
	int n, i, err;

	err = ibv_req_notify_cq(e->rcq, 0);
	if (err)
		bench_fail_errno("ibv_req_notify_cq", err);
	for (;;) {
		while ((n = ibv_poll_cq(e->rcq, 32, wc)) > 0) {
			now = fp_now_ns();
			for (i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV)
					bench_fail("mixed: receive completion: %s (%d), opcode %d",
						   ibv_wc_status_str(wc[i].status), wc[i].status,
						   wc[i].opcode);
				if (got < MIX_CAP)
					e->mt->woke[got] = now;
				got++;
			}
			post_recvs(e, n);
		}
		if (n < 0)
			bench_fail("ibv_poll_cq: %d", n);
		total = __atomic_load_n(&e->sy->total, __ATOMIC_ACQUIRE);
		if (total != UNSET && got >= total)
			break;
		if (ibv_get_cq_event(e->ch, &ecq, &ectx))
			bench_fail_errno("ibv_get_cq_event", errno);
		if (ecq != e->rcq)
			bench_fail("ibv_get_cq_event: an event of another CQ");
		ibv_ack_cq_events(ecq, 1);
		err = ibv_req_notify_cq(e->rcq, 0);
		if (err)
			bench_fail_errno("ibv_req_notify_cq", err);
	}
	if (got != total)
		bench_fail("mixed: the target received %llu SENDs, the initiator posted %llu",
			   (unsigned long long)got, (unsigned long long)total);
	if (load_u64(e->buf + OFF_W) != e->sy->last_write)
		bench_fail("mixed: after the last SEND the target's memory holds WRITE tag %llu, "
			   "the last WRITE before it carried %llu",
			   (unsigned long long)load_u64(e->buf + OFF_W),
			   (unsigned long long)e->sy->last_write);
}

static void peer_main(struct ep *e, bool xrc)
{
	uint32_t ph;

	ep_setup(e, xrc, false);
	say(e, PH_READY);
	while ((ph = hear(e)) != PH_END) {
		if (ph == PH_ECHO || ph == PH_SINK)
			peer_receive(e, ph == PH_ECHO);
		else if (phase_blocked((enum phase)ph))
			peer_blocked(e, (enum phase)ph);
		else if (ph == PH_SPIN)
			peer_spin(e);
		else if (ph == PH_MIXED)
			peer_mixed(e);
		else
			peer_passive(e, (enum phase)ph);
		say(e, PH_DONE);
	}
	ep_close(e);
	_exit(0);
}

/* ---- the initiator ---------------------------------------------------------------- */
static void phase_begin(struct ep *e, enum phase ph)
{
	__atomic_store_n(&e->sy->received, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&e->sy->total, UNSET, __ATOMIC_RELEASE);
	e->ph = ph;
	say(e, ph);
}

/* The initiator stopped after total: tell the peer (a blocked one through
 * its socket) and wait until it checked. */
static void phase_end(struct ep *e, long total)
{
	__atomic_store_n(&e->sy->total, (uint64_t)total, __ATOMIC_RELEASE);
	if (phase_blocked(e->ph) && write(e->sock, "x", 1) != 1)
		bench_peer_lost("write to its socket failed");
	if (hear(e) != PH_DONE)
		bench_fail("the peer lost step");
}

/* Ping: one message, wait for the echo. */
static void op_ping(void *arg, long i)
{
	struct ep *e = arg;
	unsigned spins = 0;

	post_msg(e, IBV_WR_SEND, MSG, e->posted, e->posted % SIG == SIG - 1);
	while (!rx_poll(e))
		bench_relax(&spins);
}

struct one_sided {
	struct ep *e;
	enum ibv_wr_opcode opc;
};

/* One WRITE, READ or fetch-and-add to the passive target, until it completed. */
static void op_one_sided(void *arg, long i)
{
	struct one_sided *o = arg;
	struct ep *e = o->e;
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + OFF_L, .length = MSG,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr;
	uint64_t orig;

	if (o->opc == IBV_WR_RDMA_WRITE) {
		post_msg(e, o->opc, MSG, i, true);
		tx_drain(e);
		return;
	}
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = o->opc;
	if (o->opc == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = e->peer.addr + OFF_R;
		wr.wr.rdma.rkey = e->peer.rkey;
	} else {
		sge.length = 8;
		wr.wr.atomic.remote_addr = e->peer.addr + OFF_A;
		wr.wr.atomic.rkey = e->peer.rkey;
		wr.wr.atomic.compare_add = 1;
	}
	tx_post(e, &wr, true);
	tx_drain(e);
	if (o->opc == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		memcpy(&orig, e->buf + OFF_L, sizeof(orig));
		if (orig != (uint64_t)i)
			bench_fail("fetch-and-add %ld returned %llu", i, (unsigned long long)orig);
	}
}

/* Latency of one kind of one-sided operation to a passive target, or (blocked)
 * to one blocked in read(). */
static void one_sided_phase(struct ep *e, enum ibv_wr_opcode opc, bool blocked,
			    enum bench_fig p50, enum bench_fig p99)
{
	struct one_sided o = { e, opc };
	enum phase ph = opc == IBV_WR_RDMA_WRITE ? (blocked ? PH_WRITE_BLOCKED : PH_WRITE) :
			opc == IBV_WR_RDMA_READ ? (blocked ? PH_READ_BLOCKED : PH_READ) :
			(blocked ? PH_ATOMIC_BLOCKED : PH_ATOMIC);
	long n;
	int i;

	memset(e->buf + OFF_L, 0, MSG);
	phase_begin(e, ph);
	n = bench_lat(op_one_sided, &o, 0, bench_lat_budget(), p50, p99);
	if (opc == IBV_WR_RDMA_READ)
		for (i = 0; i < MSG; i++)
			if (e->buf[OFF_L + i] != (char)(i * 7 + 3))
				bench_fail("RDMA READ returned other data than the target holds");
	phase_end(e, n);
}

/* Fork the peer; in it, never return. With waits, the peer can wait in the
 * ways of bench_one_session: a socket, a completion channel, and the
 * mixed stream's times. */
static void session_start(struct ep *e, bool xrc, bool waits)
{
	int down[2], up[2], sv[2] = { -1, -1 };
	pid_t pid;

	memset(e, 0, sizeof(*e));
	e->with_channel = waits;
	e->sy = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (e->sy == MAP_FAILED)
		bench_fail_errno("mmap", errno);
	if (waits) {
		e->mt = mmap(NULL, sizeof(*e->mt), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (e->mt == MAP_FAILED)
			bench_fail_errno("mmap", errno);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			bench_fail_errno("socketpair", errno);
	}
	if (pipe(down) || pipe(up))
		bench_fail_errno("pipe", errno);
	pid = fork();
	if (pid < 0)
		bench_fail_errno("fork", errno);
	if (pid == 0) {
		bench_forked();
		close(down[1]);
		close(up[0]);
		if (waits)
			close(sv[0]);
		e->in = down[0];
		e->out = up[1];
		e->sock = sv[1];
		peer_main(e, xrc);
	}
	bench_peer_started(pid);
	close(down[0]);
	close(up[1]);
	if (waits)
		close(sv[1]);
	e->in = up[0];
	e->out = down[1];
	e->sock = sv[0];
	ep_setup(e, xrc, true);
	if (hear(e) != PH_READY)
		bench_fail("the peer lost step");
}

static void session_end(struct ep *e)
{
	say(e, PH_END);
	bench_peer_wait();
	ep_close(e);
	close(e->in);
	close(e->out);
	if (e->sock >= 0)
		close(e->sock);
	if (e->mt)
		munmap(e->mt, sizeof(*e->mt));
	munmap(e->sy, 4096);
}

/* Round trip, then the one-way stream, of SEND between the two processes. */
static void send_phases(struct ep *e, enum bench_fig p50, enum bench_fig p99,
			enum bench_fig rate)
{
	struct rx_side r = { NULL, e->sy, 0 };
	long next = 0, count;
	double v;

	phase_begin(e, PH_ECHO);
	phase_end(e, bench_lat(op_ping, e, 0, bench_lat_budget(), p50, p99));
	phase_begin(e, PH_SINK);
	v = stream(e, IBV_WR_SEND, MSG, &r, &next, bench_rate_budget(), &count);
	bench_put(rate, v, count);
	phase_end(e, next);
}

void bench_rc_session(void)
{
	struct rx_side r;
	struct ep e;
	long next, count;
	double v;

	/* The passive phases first: the peer has called no verb since its setup. */
	session_start(&e, false, false);
	next = 0;
	phase_begin(&e, PH_WRITE);
	v = stream(&e, IBV_WR_RDMA_WRITE, MSG, NULL, &next, bench_rate_budget(), &count);
	bench_put(BF_WRITE_RATE, v, count);
	phase_end(&e, next);

	one_sided_phase(&e, IBV_WR_RDMA_WRITE, false, BF_WRITE_LAT_P50, BF_WRITE_LAT_P99);
	one_sided_phase(&e, IBV_WR_RDMA_READ, false, BF_READ_LAT_P50, BF_READ_LAT_P99);
	one_sided_phase(&e, IBV_WR_ATOMIC_FETCH_AND_ADD, false, BF_ATOMIC_LAT_P50, BF_ATOMIC_LAT_P99);
	send_phases(&e, BF_RC_RTT_P50, BF_RC_RTT_P99, BF_RC_RATE);

	/* 64 KiB SENDs: bandwidth in MB/s */
	next = 0;
	memset(&r, 0, sizeof(r));
	r.sy = e.sy;
	phase_begin(&e, PH_SINK);
	v = stream(&e, IBV_WR_SEND, BIG, &r, &next, bench_rate_budget(), &count);
	bench_put(BF_BW_64K, v * BIG / 1e6, count);
	phase_end(&e, next);
	session_end(&e);
}

/* Write-then-spin, the initiator's step: sequence number i + 1 there and back. */
static void op_spin(void *arg, long i)
{
	spin_step(arg, (uint64_t)i + 1);
}

/* Up to n messages of the mixed stream from *next on, fewer when until
 * passes (as burst()); message k is a SEND when k % MIX == MIX - 1 (its post
 * time stamped, *sends counts them), else a 64-byte WRITE. Then wait until
 * all completed. */
static void mixed_burst(struct ep *e, long *next, long *sends, long n, long long until)
{
	long k;

	for (k = 0; k < n; k++) {
		bool sig = k % SIG == SIG - 1 || k == n - 1;

		if (k && !(k % SIG) && (fp_now_ns() > until || *sends >= MIX_CAP - 1))
			break;
		if (*next % MIX == MIX - 1) {
			e->mt->posted[(*sends)++] = fp_now_ns();
			post_msg(e, IBV_WR_SEND, MSG, *next, sig);
		} else {
			post_msg(e, IBV_WR_RDMA_WRITE, MSG, *next, sig);
			e->sy->last_write = (uint64_t)*next + 1;
		}
		(*next)++;
	}
	tx_drain(e);
}

/* The mixed stream to a target asleep on its channel: the rate of the timed
 * burst, then one last SEND, then the latency from each timed SEND's post
 * to the target's poll of it after its wake-up. */
static void mixed_phase(struct ep *e)
{
	struct bench_budget b = bench_rate_budget(), w = bench_warm(b);
	long next = 0, sends = 0, base, first, k;
	long long t0, *lat;

	phase_begin(e, PH_MIXED);
	e->sy->last_write = 0;
	mixed_burst(e, &next, &sends, w.n, fp_now_ns() + w.ns);
	base = next;
	first = sends;
	t0 = fp_now_ns();
	mixed_burst(e, &next, &sends, b.n, t0 + b.ns);
	bench_put(BF_MIX_RATE, (double)(next - base) * 1e9 / (double)(fp_now_ns() - t0),
		  next - base);
	/* the last SEND wakes the target for good: it has all once it has this */
	__atomic_store_n(&e->sy->total, (uint64_t)sends + 1, __ATOMIC_RELEASE);
	e->mt->posted[sends++] = fp_now_ns();
	post_msg(e, IBV_WR_SEND, MSG, next++, true);
	tx_drain(e);
	if (hear(e) != PH_DONE)
		bench_fail("the peer lost step");
	lat = calloc((size_t)(sends - first), sizeof(*lat));
	if (!lat)
		bench_fail_errno("calloc", errno);
	for (k = first; k < sends; k++) {
		lat[k - first] = e->mt->woke[k] - e->mt->posted[k];
		if (lat[k - first] < 0)
			bench_fail("mixed: SEND %ld was received before it was posted", k);
	}
	bench_put_percentiles(lat, sends - first, BF_MIX_LAT_P50, BF_MIX_LAT_P99);
	free(lat);
}

void bench_one_session(void)
{
	struct ep e;
	long next = 0, count;
	double v;

	/* blocked in read() first: the peer has called no verb since its setup */
	session_start(&e, false, true);
	phase_begin(&e, PH_WRITE_BLOCKED);
	v = stream(&e, IBV_WR_RDMA_WRITE, MSG, NULL, &next, bench_rate_budget(), &count);
	bench_put(BF_WBLK_RATE, v, count);
	phase_end(&e, next);
	one_sided_phase(&e, IBV_WR_RDMA_READ, true, BF_RBLK_P50, BF_RBLK_P99);
	one_sided_phase(&e, IBV_WR_ATOMIC_FETCH_AND_ADD, true, BF_ABLK_P50, BF_ABLK_P99);

	phase_begin(&e, PH_SPIN);
	next = bench_lat_scaled(op_spin, &e, 0, bench_lat_budget(), BF_SPIN_P50, BF_SPIN_P99,
				0.5);
	spin_drain(&e, (uint64_t)next);
	phase_end(&e, next);

	mixed_phase(&e);
	session_end(&e);
}

void bench_xrc_session(void)
{
	struct ep e;

	session_start(&e, true, false);
	send_phases(&e, BF_XRC_RTT_P50, BF_XRC_RTT_P99, BF_XRC_RATE);
	session_end(&e);
}

/* ---- loopback ------------------------------------------------------------------------ */
void bench_loop_session(int in, int out)
{
	struct bench_budget b;
	struct ep a, z;
	struct rx_side r;
	long next = 0, count;
	double v;

	memset(&a, 0, sizeof(a));
	memset(&z, 0, sizeof(z));
	ep_open_dev(&a);
	z.ctx = a.ctx;			/* two QPs of one context */
	ep_objects(&a);
	ep_objects(&z);
	ep_rc_qp(&a);
	ep_rc_qp(&z);
	qp_to_rtr(a.qp, z.qp->qp_num);
	qp_to_rts(a.qp);
	qp_to_rtr(z.qp, a.qp->qp_num);
	qp_to_rts(z.qp);
	post_recvs(&z, DEPTH);
	memset(&r, 0, sizeof(r));
	r.rx = &z;
	while (read(in, &b, sizeof(b)) == (ssize_t)sizeof(b)) {
		r.got = next;		/* all that was sent has arrived */
		v = stream(&a, IBV_WR_SEND, MSG, &r, &next, b, &count);
		pipe_put(out, &v, sizeof(v));
		pipe_put(out, &count, sizeof(count));
	}
	ep_close(&z);
	ep_close(&a);
}
