/* SPDX-License-Identifier: MIT */
/*
 * t3200: traffic between two hosts (HOST-): each test has a half on host A
 * (the initiator) and a half on host B (the target), which meet over TCP
 * and tell each other their QP numbers, GIDs, keys and addresses, as the
 * pingpongs of ibverbs-utils do (testkit/runner/th_host.c). Every connection
 * is addressed by the peer's GID (RoCE v2: the IPv4-mapped GID of its
 * address, or the IPv6 link-local one where IBVCT_PEER_GID=ipv6 says so,
 * th_peer_gid6), the QP numbers being each host's own. On the
 * reference target the program plays both hosts, two fake hosts on one
 * fabric; on real machines, or two guests with rxe, `ibvct conformance
 * --peer` runs it on each.
 *
 * Sends of every transport (RC, UC, UD through an address handle made from
 * the GID; XRC to the SRQs of two processes of host B through one target
 * QP, which outlives its creator), each with an immediate too (and UC's
 * RDMA WRITE with one), RDMA WRITE and READ, both atomics, a
 * SEND_WITH_INV that invalidates a window of host B, a message of several
 * path MTUs; and the errors a requester sees from the other host: RNR NAKs
 * with every rnr_retry, 0..6 each counted to its N + 1 NAKs where the
 * device counts them, and 7 (for ever), retry exceeded when the peer's QP
 * is gone (the other host died), a bad rkey, a send longer than the
 * receive, a receive with a bad key. Every wait is bounded by the
 * load-stretched clock (tf_poll_for).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "th.h"
#include "tr_clock.h"

#define BUF_LEN		(8 * 1024)
#define LIMIT_MS	10000		/* a completion's budget, stretched (tf_poll_for) */
#define MTU		1024		/* the path MTU the tests set (IBV_MTU_1024) */
#define LONG_LEN	(3 * MTU + 100)	/* a message of four packets */
#define QKEY		0x11111111

#define ACC_REMOTE	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* What one half tells the other. */
struct end {
	uint32_t qpn, rkey, mw_rkey, srqn[2];
	uint32_t pad;
	uint64_t addr;
	union ibv_gid gid4, gid6;	/* the port's IPv4-mapped and IPv6 GIDs (0: none) */
};

struct half {
	struct th_ctx *t;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	int gid4, gid6;			/* their indexes here, -1: none */
	struct end me, peer;
};

static unsigned char pat(unsigned seed, size_t i)
{
	return (unsigned char)(seed + i * 13 + (i >> 8));
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

static size_t diff_at(const unsigned char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len && p[i] == pat(seed, i); i++)
		;
	return i;
}

/* The first GID of the port of each kind: ::ffff:a.b.c.d (RoCE v2 over
 * IPv4) and fe80::/64 (the link-local IPv6 one). rxe lists them from index
 * 0 (Debian 12's rxe0: fe80:: at 0, ::ffff: at 1). */
static void find_gids(struct half *h)
{
	static const unsigned char v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	union ibv_gid g;

	h->gid4 = h->gid6 = -1;
	for (int i = 0; i < 16; i++) {
		if (ibv_query_gid(h->t->ctx, h->t->port, i, &g))
			break;
		if (h->gid4 < 0 && !memcmp(g.raw, v4, sizeof(v4))) {
			h->gid4 = i;
			h->me.gid4 = g;
		} else if (h->gid6 < 0 && g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80) {
			h->gid6 = i;
			h->me.gid6 = g;
		}
	}
}

/* The half's PD, CQ, QP of type (NULL: none), registered buffer. */
static void half_open(struct th_ctx *t, struct half *h, enum ibv_qp_type type, int access)
{
	memset(h, 0, sizeof(*h));
	h->t = t;
	h->pd = ibv_alloc_pd(t->ctx);
	assert_non_null(h->pd);
	h->cq = ibv_create_cq(t->ctx, 64, NULL, NULL, 0);
	assert_non_null(h->cq);
	assert_int_equal(posix_memalign((void **)&h->buf, 4096, BUF_LEN), 0);
	memset(h->buf, 0, BUF_LEN);
	h->mr = ibv_reg_mr(h->pd, h->buf, BUF_LEN, access);
	assert_non_null(h->mr);
	if (type) {
		struct ibv_qp_init_attr a = {
			.send_cq = h->cq, .recv_cq = h->cq, .qp_type = type,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		h->qp = ibv_create_qp(h->pd, &a);
		assert_non_null(h->qp);
		h->me.qpn = h->qp->qp_num;
	}
	h->me.rkey = h->mr->rkey;
	h->me.addr = (uintptr_t)h->buf;
	find_gids(h);
	if (th_peer_gid6() && h->gid6 < 0)
		th_skip("no IPv6 link-local GID on %s port %u (IBVCT_PEER_GID=ipv6: fe80::/64)",
			t->dev_name, t->port);
	if (!th_peer_gid6() && h->gid4 < 0)
		th_skip("no IPv4-mapped GID on %s port %u (RoCE v2 over IPv4: an address on its "
			"netdev)", t->dev_name, t->port);
}

static void half_close(struct half *h)
{
	if (h->qp)
		assert_int_equal(ibv_destroy_qp(h->qp), 0);
	assert_int_equal(ibv_dereg_mr(h->mr), 0);
	assert_int_equal(ibv_destroy_cq(h->cq), 0);
	assert_int_equal(ibv_dealloc_pd(h->pd), 0);
	free(h->buf);
}

static void half_xchg(struct half *h)
{
	th_xchg(&h->me, &h->peer, sizeof(h->me));
}

/* The address of the peer: its GID of one family (v6: the IPv6 one), from
 * ours of that family. */
static void peer_ah_of(struct half *h, int v6, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = h->t->port;
	ah->grh.hop_limit = 64;
	ah->grh.sgid_index = (uint8_t)(v6 ? h->gid6 : h->gid4);
	ah->grh.dgid = v6 ? h->peer.gid6 : h->peer.gid4;
}

/* The address of the peer by the family the run chose (IBVCT_PEER_GID):
 * every connection, address handle and XRC path of the suite but the one
 * test of both families. */
static void peer_ah(struct half *h, struct ibv_ah_attr *ah)
{
	peer_ah_of(h, th_peer_gid6(), ah);
}

static void half_connect_o(struct half *h, const struct tf_qp_opts *o)
{
	struct ibv_ah_attr ah;

	peer_ah(h, &ah);
	assert_int_equal(tf_qp_connect_av_o(h->qp, &ah, h->peer.qpn, o), 0);
}

static void half_connect(struct half *h)
{
	half_connect_o(h, &tf_qp_default);
}

/* The first steps of most tests: the half with a QP of type (o: its
 * connection's options), both halves told, the QP connected to the peer's. */
static void half_up_o(struct th_ctx *t, struct half *h, enum ibv_qp_type type,
		      const struct tf_qp_opts *o)
{
	half_open(t, h, type, ACC_REMOTE);
	half_xchg(h);
	half_connect_o(h, o);
}

static void half_up(struct th_ctx *t, struct half *h, enum ibv_qp_type type)
{
	half_up_o(t, h, type, &tf_qp_default);
}

static void post_recv(struct half *h, uint64_t id, uint32_t off, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf + off, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(h->qp, &wr, &bad), 0);
}

/* A WR of h's buffer [off, off + len) (len 0: no SGE). */
static void post_send(struct half *h, uint64_t id, enum ibv_wr_opcode op, uint32_t off,
		      uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf + off, .length = len, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = len ? 1 : 0,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = rkey;
	else
		wr.imm_data = htobe32(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(h->qp, &wr, &bad), 0);
}

/* A completion within LIMIT_MS (stretched), or this half ends as soon as
 * the other half has. */
static void poll_one(struct half *h, struct ibv_wc *wc)
{
	for (int i = 0; i < LIMIT_MS / 250; i++) {
		if (tf_poll_for(h->cq, wc, 250) == 1)
			return;
		th_peer_check();
	}
	th_fail("no completion in %d s (stretched by the load)", LIMIT_MS / 1000);
}

static void expect_ok(struct half *h, uint64_t id, struct ibv_wc *wc)
{
	poll_one(h, wc);
	if (wc->status != IBV_WC_SUCCESS)
		th_fail("wr %llu: %s, want success", (unsigned long long)wc->wr_id,
			ibv_wc_status_str(wc->status));
	assert_int_equal(wc->wr_id, id);
}

static void expect_status(struct half *h, struct ibv_wc *wc, enum ibv_wc_status want,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A completion within LIMIT_MS whose status is want; if another comes, the
 * test fails naming the WR (fmt, as printf's) and both statuses. */
static void expect_status(struct half *h, struct ibv_wc *wc, enum ibv_wc_status want,
			  const char *fmt, ...)
{
	char what[128];
	va_list ap;

	poll_one(h, wc);
	if (wc->status == want)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	th_fail("%s: %s, want %s", what, ibv_wc_status_str(wc->status), ibv_wc_status_str(want));
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

/* A WR of this half (what, for the failure's message) that the other host
 * refused: its completion is want, and this RC requester's QP is then in
 * the error state. */
static void expect_refused(struct half *h, enum ibv_wc_status want, const char *what)
{
	struct ibv_wc wc;

	expect_status(h, &wc, want, "%s", what);
	assert_int_equal(qp_state(h->qp), IBV_QPS_ERR);
}

/* ---- sends of every transport ------------------------------------------------ */
/* HOST-01: an RC SEND and a SEND_WITH_IMM of host A land in receives of host B,
 * data and immediate whole; the QP is found by the GID (IBA vol 1 annex A17,
 * RoCE v2: the GRH's DGID is the IP address) and its number on that host. */
TH_TEST(rc_send_and_send_imm_cross_hosts, "HOST-01", 0)
{
	struct half h;
	struct ibv_wc wc;

	half_up(t, &h, IBV_QPT_RC);
	if (th_host_side() == 'b') {
		post_recv(&h, 1, 0, 512, h.mr->lkey);
		post_recv(&h, 2, 512, 512, h.mr->lkey);
		th_sync("receives posted");
		expect_ok(&h, 1, &wc);
		assert_int_equal(wc.opcode, IBV_WC_RECV);
		assert_int_equal(wc.byte_len, 200);
		assert_int_equal(diff_at(h.buf, 200, 1), 200);
		expect_ok(&h, 2, &wc);
		assert_int_equal(wc.byte_len, 300);
		assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(be32toh(wc.imm_data), 0x1badcafe);
		assert_int_equal(diff_at(h.buf + 512, 300, 2), 300);
	} else {
		th_sync("receives posted");
		fill(h.buf, 200, 1);
		fill(h.buf + 512, 300, 2);
		post_send(&h, 1, IBV_WR_SEND, 0, 200, 0, 0, 0);
		post_send(&h, 2, IBV_WR_SEND_WITH_IMM, 512, 300, 0, 0, 0x1badcafe);
		expect_ok(&h, 1, &wc);
		expect_ok(&h, 2, &wc);
	}
	th_sync("done");
	half_close(&h);
}

/* HOST-02: a UC SEND and a UC RDMA WRITE cross the hosts. */
TH_TEST(uc_send_and_write_cross_hosts, "HOST-02", 0)
{
	struct half h;
	struct ibv_wc wc;

	half_up(t, &h, IBV_QPT_UC);
	if (th_host_side() == 'b') {
		post_recv(&h, 1, 0, 512, h.mr->lkey);
		th_sync("receive posted");
		expect_ok(&h, 1, &wc);
		assert_int_equal(wc.byte_len, 100);
		/* the WRITE went before the SEND: both are there */
		assert_int_equal(diff_at(h.buf, 100, 3), 100);
		assert_int_equal(diff_at(h.buf + 4096, 777, 4), 777);
	} else {
		th_sync("receive posted");
		fill(h.buf + 4096, 777, 4);
		post_send(&h, 2, IBV_WR_RDMA_WRITE, 4096, 777, h.peer.addr + 4096, h.peer.rkey, 0);
		fill(h.buf, 100, 3);
		post_send(&h, 1, IBV_WR_SEND, 0, 100, 0, 0, 0);
		expect_ok(&h, 2, &wc);
		expect_ok(&h, 1, &wc);
	}
	th_sync("done");
	half_close(&h);
}

/* An immediate's receive on host B (wc, of the WR id, opcode op): flagged
 * IBV_WC_WITH_IMM and the value whole, in network order as the requester
 * put it in its WR (IBA vol 1 9.2.3, the ImmDt header; rdma-core v44.0
 * libibverbs/man/ibv_poll_cq.3: imm_data, IBV_WC_WITH_IMM). what names the
 * receive for the failure. */
static void expect_imm(struct half *h, uint64_t id, enum ibv_wc_opcode op, uint32_t imm,
		       const char *what, struct ibv_wc *wc)
{
	expect_ok(h, id, wc);
	if (wc->opcode != op)
		th_fail("%s: opcode %d, want %d", what, wc->opcode, op);
	if (!(wc->wc_flags & IBV_WC_WITH_IMM))
		th_fail("%s: no IBV_WC_WITH_IMM (wc_flags %#x)", what, wc->wc_flags);
	if (be32toh(wc->imm_data) != imm)
		th_fail("%s: immediate %#x, want %#x", what, be32toh(wc->imm_data), imm);
}

/* HOST-02: a UC SEND_WITH_IMM and RDMA_WRITE_WITH_IMM cross the hosts with
 * their immediates: each consumes a receive of host B, the WRITE's as
 * IBV_WC_RECV_RDMA_WITH_IMM with its data in place (IBA vol 1 9.4.3: a
 * WRITE with immediate consumes a receive WQE; rdma-core v44.0
 * libibverbs/man/ibv_post_send.3: both opcodes on UC; linux v6.1
 * drivers/infiniband/sw/rxe/rxe_resp.c:952 do_complete, :980
 * IB_WC_RECV_RDMA_WITH_IMM, :992 IB_WC_WITH_IMM and the packet's
 * immediate; v6.12 :1089, :1118, :1130). */
TH_TEST(uc_send_imm_and_write_imm_cross_hosts, "HOST-02", 0)
{
	struct half h;
	struct ibv_wc wc;

	half_up(t, &h, IBV_QPT_UC);
	if (th_host_side() == 'b') {
		post_recv(&h, 1, 0, 512, h.mr->lkey);
		post_recv(&h, 2, 512, 0, h.mr->lkey);
		th_sync("receives posted");
		expect_imm(&h, 1, IBV_WC_RECV, 0x5eed0c01, "B's receive of a UC SEND_WITH_IMM", &wc);
		assert_int_equal(wc.byte_len, 100);
		assert_int_equal(diff_at(h.buf, 100, 15), 100);
		expect_imm(&h, 2, IBV_WC_RECV_RDMA_WITH_IMM, 0x5eed0c02,
			   "B's receive of a UC RDMA_WRITE_WITH_IMM", &wc);
		assert_int_equal(diff_at(h.buf + 4096, 300, 16), 300);
	} else {
		th_sync("receives posted");
		fill(h.buf, 100, 15);
		fill(h.buf + 4096, 300, 16);
		post_send(&h, 1, IBV_WR_SEND_WITH_IMM, 0, 100, 0, 0, 0x5eed0c01);
		post_send(&h, 2, IBV_WR_RDMA_WRITE_WITH_IMM, 4096, 300, h.peer.addr + 4096,
			  h.peer.rkey, 0x5eed0c02);
		expect_ok(&h, 1, &wc);
		expect_ok(&h, 2, &wc);
	}
	th_sync("done");
	half_close(&h);
}

/* HOST-03: UD SENDs through address handles made from the peer's GIDs,
 * IPv4-mapped and IPv6; each receive starts with the 40-byte GRH, whose
 * source GID is the sender's (IBA vol 1 11.4.1.2: the GRH of a UD
 * receive; RoCE v2 over IPv4: an IPv4 header in its last 20 bytes, linux
 * v6.1 include/rdma/ib_verbs.h union rdma_network_hdr). */
TH_TEST(ud_send_through_ah_from_ipv4_and_ipv6_gids, "HOST-03", 0)
{
	struct half h;
	struct ibv_wc wc;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah[2] = { NULL, NULL };
	int v6;

	half_open(t, &h, IBV_QPT_UD, IBV_ACCESS_LOCAL_WRITE);
	if (h.gid6 < 0)
		th_skip("no IPv6 GID on %s port %u (fe80::/64)", t->dev_name, t->port);
	if (th_peer_gid6())
		th_skip("IBVCT_PEER_GID=ipv6: the peer is addressed by its IPv6 GID alone, and this "
			"test addresses it by its IPv4-mapped one too");
	half_xchg(&h);
	memset(&aa, 0, sizeof(aa));
	aa.port_num = t->port;
	assert_int_equal(tf_qp_connect_av(h.qp, &aa, 0), 0);
	if (th_host_side() == 'b') {
		post_recv(&h, 1, 0, 40 + 256, h.mr->lkey);
		post_recv(&h, 2, 1024, 40 + 256, h.mr->lkey);
		th_sync("receives posted");
		/* The two datagrams travel as two flows, one IPv4 and one IPv6,
		 * and nothing orders one flow against another: the kernel may
		 * queue them on two CPUs' backlogs, and UD promises no order
		 * between packets of different paths. So each receive is told by
		 * its payload (seed 5: the IPv4 one, 6: the IPv6 one), whichever
		 * completes first, and each family must land exactly once. */
		int seen[2] = { 0, 0 };

		for (int k = 0; k < 2; k++) {
			const unsigned char *at;

			poll_one(&h, &wc);
			if (wc.status != IBV_WC_SUCCESS)
				th_fail("receive %llu: %s, want success",
					(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
			assert_in_range(wc.wr_id, 1, 2);
			at = h.buf + (wc.wr_id == 2 ? 1024 : 0);
			assert_int_equal(wc.byte_len, 40 + 64);
			assert_true(wc.wc_flags & IBV_WC_GRH);
			assert_int_equal(wc.src_qp, h.peer.qpn);
			v6 = diff_at(at + 40, 64, 6) == 64;
			if (!v6 && diff_at(at + 40, 64, 5) != 64)
				th_fail("receive %llu: its payload is neither the IPv4 nor the IPv6 send's",
					(unsigned long long)wc.wr_id);
			if (seen[v6]++)
				th_fail("the %s send landed twice", v6 ? "IPv6" : "IPv4");
			/* the source: IPv6, the GRH's bytes 8..23; IPv4, the IPv4
			 * header in bytes 20..39, its source address at 32 */
			if (v6)
				assert_memory_equal(at + 8, h.peer.gid6.raw, 16);
			else
				assert_memory_equal(at + 32, h.peer.gid4.raw + 12, 4);
		}
	} else {
		th_sync("receives posted");
		for (v6 = 0; v6 < 2; v6++) {
			struct ibv_sge sge = { .addr = (uintptr_t)h.buf + 64 * v6, .length = 64,
					       .lkey = h.mr->lkey };
			struct ibv_send_wr wr = { .wr_id = (uint64_t)v6 + 1, .sg_list = &sge,
						  .num_sge = 1, .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;

			peer_ah_of(&h, v6, &aa);
			ah[v6] = ibv_create_ah(h.pd, &aa);
			assert_non_null(ah[v6]);
			fill(h.buf + 64 * v6, 64, 5 + (unsigned)v6);
			wr.wr.ud.ah = ah[v6];
			wr.wr.ud.remote_qpn = h.peer.qpn;
			wr.wr.ud.remote_qkey = QKEY;
			assert_int_equal(ibv_post_send(h.qp, &wr, &bad), 0);
			expect_ok(&h, (uint64_t)v6 + 1, &wc);
		}
	}
	th_sync("done");
	for (v6 = 0; v6 < 2; v6++)
		if (ah[v6])
			assert_int_equal(ibv_destroy_ah(ah[v6]), 0);
	half_close(&h);
}

/* HOST-03: a UD SEND_WITH_IMM through an address handle made from the
 * peer's GID of the run's family (IBVCT_PEER_GID) lands after the 40-byte
 * header with its immediate, the header's source that GID (IPv4: the
 * source address of the IPv4 header in its last 20 bytes)
 * (IBA vol 1 11.4.1.2; rdma-core v44.0 libibverbs/man/ibv_post_send.3:
 * SEND_WITH_IMM on UD; linux v6.1 drivers/infiniband/sw/rxe/rxe_resp.c:952
 * do_complete, :992; v6.12 :1089, :1130). */
TH_TEST(ud_send_imm_carries_the_immediate, "HOST-03", 0)
{
	struct half h;
	struct ibv_wc wc;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah = NULL;

	half_open(t, &h, IBV_QPT_UD, IBV_ACCESS_LOCAL_WRITE);
	half_xchg(&h);
	memset(&aa, 0, sizeof(aa));
	aa.port_num = t->port;
	assert_int_equal(tf_qp_connect_av(h.qp, &aa, 0), 0);
	if (th_host_side() == 'b') {
		post_recv(&h, 1, 0, 40 + 256, h.mr->lkey);
		th_sync("receive posted");
		expect_imm(&h, 1, IBV_WC_RECV, 0x5eed0d01, "B's receive of a UD SEND_WITH_IMM", &wc);
		assert_int_equal(wc.byte_len, 40 + 64);
		assert_true(wc.wc_flags & IBV_WC_GRH);
		assert_int_equal(wc.src_qp, h.peer.qpn);
		if (th_peer_gid6())
			assert_memory_equal(h.buf + 8, h.peer.gid6.raw, 16);
		else
			assert_memory_equal(h.buf + 32, h.peer.gid4.raw + 12, 4);
		assert_int_equal(diff_at(h.buf + 40, 64, 17), 64);
	} else {
		struct ibv_sge sge = { .addr = (uintptr_t)h.buf, .length = 64, .lkey = h.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND_WITH_IMM,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		th_sync("receive posted");
		peer_ah(&h, &aa);
		ah = ibv_create_ah(h.pd, &aa);
		assert_non_null(ah);
		fill(h.buf, 64, 17);
		wr.imm_data = htobe32(0x5eed0d01);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = h.peer.qpn;
		wr.wr.ud.remote_qkey = QKEY;
		assert_int_equal(ibv_post_send(h.qp, &wr, &bad), 0);
		expect_ok(&h, 1, &wc);
	}
	th_sync("done");
	if (ah)
		assert_int_equal(ibv_destroy_ah(ah), 0);
	half_close(&h);
}

/* ---- one-sided ------------------------------------------------------------------ */
/* HOST-04: RDMA WRITE, WRITE_WITH_IMM and READ of host A in host B's memory. */
TH_TEST(rc_write_and_read_cross_hosts, "HOST-04", 0)
{
	struct half h;
	struct ibv_wc wc;

	half_open(t, &h, IBV_QPT_RC, ACC_REMOTE);
	if (th_host_side() == 'b')
		fill(h.buf + 4096, 1000, 7);	/* what A reads */
	half_xchg(&h);
	half_connect(&h);
	if (th_host_side() == 'b') {
		post_recv(&h, 9, 0, 0, h.mr->lkey);
		th_sync("ready");
		expect_ok(&h, 9, &wc);		/* the WRITE_WITH_IMM's receive */
		assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(be32toh(wc.imm_data), 77);
		assert_int_equal(diff_at(h.buf, 500, 6), 500);
		assert_int_equal(diff_at(h.buf + 1024, 300, 8), 300);
	} else {
		th_sync("ready");
		fill(h.buf, 500, 6);
		fill(h.buf + 1024, 300, 8);
		post_send(&h, 1, IBV_WR_RDMA_WRITE, 0, 500, h.peer.addr, h.peer.rkey, 0);
		post_send(&h, 2, IBV_WR_RDMA_WRITE_WITH_IMM, 1024, 300, h.peer.addr + 1024,
			  h.peer.rkey, 77);
		post_send(&h, 3, IBV_WR_RDMA_READ, 4096, 1000, h.peer.addr + 4096, h.peer.rkey, 0);
		expect_ok(&h, 1, &wc);
		expect_ok(&h, 2, &wc);
		expect_ok(&h, 3, &wc);
		assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
		assert_int_equal(diff_at(h.buf + 4096, 1000, 7), 1000);
	}
	th_sync("done");
	half_close(&h);
}

/* HOST-05: compare-and-swap and fetch-and-add of host A on a word of host B
 * return the original value and change it. */
TH_TEST(rc_atomics_cross_hosts, "HOST-05", 0)
{
	struct half h;
	struct ibv_wc wc;
	uint64_t *w;

	half_open(t, &h, IBV_QPT_RC, ACC_REMOTE);
	w = (uint64_t *)(void *)(h.buf + 2048);
	if (th_host_side() == 'b')
		*w = 1000;
	half_xchg(&h);
	half_connect(&h);
	if (th_host_side() == 'b') {
		th_sync("ready");
		th_sync("done");
		assert_int_equal(*w, 1000 + 5 + 1);	/* swapped to 1005, then added 1 */
	} else {
		struct ibv_sge sge = { .addr = (uintptr_t)w, .length = 8, .lkey = h.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_device_attr da;

		assert_int_equal(ibv_query_device(t->ctx, &da), 0);
		th_sync("ready");
		if (da.atomic_cap == IBV_ATOMIC_NONE) {
			th_sync("done");
			th_skip("%s reports IBV_ATOMIC_NONE", t->dev_name);
		}
		wr.wr.atomic.remote_addr = h.peer.addr + 2048;
		wr.wr.atomic.rkey = h.peer.rkey;
		wr.wr.atomic.compare_add = 1000;
		wr.wr.atomic.swap = 1005;
		assert_int_equal(ibv_post_send(h.qp, &wr, &bad), 0);
		expect_ok(&h, 1, &wc);
		assert_int_equal(*w, 1000);
		wr.wr_id = 2;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = 1;
		assert_int_equal(ibv_post_send(h.qp, &wr, &bad), 0);
		expect_ok(&h, 2, &wc);
		assert_int_equal(*w, 1005);
		th_sync("done");
	}
	half_close(&h);
}

/* HOST-06: a SEND_WITH_INV of host A invalidates the type 2 window of host B
 * it names: B's receive says so (IBV_WC_WITH_INV, the key), and a WRITE
 * with that key then ends in IBV_WC_REM_ACCESS_ERR (IBA vol 1 10.6.7.2.2,
 * 9.4.1.1.4: the responder invalidates before it completes the receive). */
TH_TEST(rc_send_with_inv_invalidates_a_window_of_the_other_host, "HOST-06", 0)
{
	struct half h;
	struct ibv_wc wc;
	struct ibv_mw *mw = NULL;

	half_open(t, &h, IBV_QPT_RC, ACC_REMOTE | IBV_ACCESS_MW_BIND);
	if (th_host_side() == 'b') {
		mw = ibv_alloc_mw(h.pd, IBV_MW_TYPE_2);
		if (!mw && (errno == EOPNOTSUPP || errno == ENOSYS))
			th_ext_missing("ibv_alloc_mw type 2: %s", strerror(errno));
		assert_non_null(mw);
	}
	half_xchg(&h);
	half_connect(&h);
	if (th_host_side() == 'b') {
		struct ibv_send_wr wr = { .wr_id = 5, .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info.mr = h.mr;
		wr.bind_mw.bind_info.addr = (uintptr_t)h.buf;
		wr.bind_mw.bind_info.length = 4096;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		assert_int_equal(ibv_post_send(h.qp, &wr, &bad), 0);
		expect_ok(&h, 5, &wc);
		h.me.mw_rkey = wr.bind_mw.rkey;
		post_recv(&h, 1, 4096, 256, h.mr->lkey);
	}
	half_xchg(&h);
	if (th_host_side() == 'b') {
		expect_ok(&h, 1, &wc);
		assert_true(wc.wc_flags & IBV_WC_WITH_INV);
		assert_int_equal(wc.invalidated_rkey, h.me.mw_rkey);
		th_sync("invalidated");
		th_sync("done");
		assert_int_equal(ibv_dealloc_mw(mw), 0);
	} else {
		fill(h.buf, 64, 9);
		/* a WRITE through the window first: it works while bound */
		post_send(&h, 1, IBV_WR_RDMA_WRITE, 0, 64, h.peer.addr, h.peer.mw_rkey, 0);
		expect_ok(&h, 1, &wc);
		post_send(&h, 2, IBV_WR_SEND_WITH_INV, 0, 16, 0, h.peer.mw_rkey, 0);
		expect_ok(&h, 2, &wc);
		th_sync("invalidated");
		post_send(&h, 3, IBV_WR_RDMA_WRITE, 0, 64, h.peer.addr, h.peer.mw_rkey, 0);
		expect_status(&h, &wc, IBV_WC_REM_ACCESS_ERR,
			      "a WRITE through the invalidated window");
		th_sync("done");
	}
	half_close(&h);
}

/* HOST-07: an RC SEND and an RDMA WRITE of several path MTUs (four packets
 * of 1024 bytes, the last short) arrive whole and in order (IBA vol 1
 * 9.7.2: a message is segmented at the path MTU and reassembled). */
TH_TEST(rc_message_of_several_mtus_arrives_whole, "HOST-07", 0)
{
	struct half h;
	struct ibv_wc wc;

	half_up(t, &h, IBV_QPT_RC);
	if (th_host_side() == 'b') {
		post_recv(&h, 1, 0, LONG_LEN, h.mr->lkey);
		th_sync("ready");
		expect_ok(&h, 1, &wc);
		assert_int_equal(wc.byte_len, LONG_LEN);
		assert_int_equal(diff_at(h.buf, LONG_LEN, 10), LONG_LEN);
		th_sync("written");
		assert_int_equal(diff_at(h.buf + 4096, LONG_LEN, 11), LONG_LEN);
	} else {
		th_sync("ready");
		fill(h.buf, LONG_LEN, 10);
		post_send(&h, 1, IBV_WR_SEND, 0, LONG_LEN, 0, 0, 0);
		expect_ok(&h, 1, &wc);
		fill(h.buf + 4096, LONG_LEN, 11);
		post_send(&h, 2, IBV_WR_RDMA_WRITE, 4096, LONG_LEN, h.peer.addr + 4096,
			  h.peer.rkey, 0);
		expect_ok(&h, 2, &wc);
		th_sync("written");
	}
	half_close(&h);
}

/* ---- errors from the other host ------------------------------------------------ */
/*
 * A counter of this half's port, from its hw_counters in sysfs (Linux rxe
 * keeps them per device: linux v6.1 and v6.12 drivers/infiniband/sw/rxe/
 * rxe_hw_counters.c; the reference's strict and rxe profiles show them
 * too). -1 when the device has no such counter: mlx5 counts under names of
 * its own (linux v6.1 drivers/infiniband/hw/mlx5/counters.c
 * rnr_nak_retry_err), not taken here. On rxe and the reference it must be
 * there.
 *
 * The kernel shows what it last asked the driver, and asks again only once
 * that answer is older than the counters' lifespan (hw_counters/lifespan,
 * in ms; 10 for rxe: RDMA_HW_STATS_DEFAULT_LIFESPAN, linux v6.1
 * include/rdma/ib_verbs.h:609, drivers/infiniband/core/sysfs.c:815
 * update_hw_stats; v6.12 ib_verbs.h:614, sysfs.c:819): a read within it of
 * the last one gives the last one's values, which missed the NAKs of a
 * short test on Debian 13's rxe0. So each read first waits out the
 * lifespan twice, and a jiffy more: what it reads is then asked anew, and
 * holds everything that happened before the wait. The reference's counters
 * are files, always current: no lifespan, no wait.
 */
static long long port_counter(struct half *h, const char *name)
{
	char path[IBV_SYSFS_PATH_MAX + 96];
	unsigned long long v;
	const char *drv = th_driver();
	long ms;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/ports/%u/hw_counters/lifespan",
		 h->t->ctx->device->ibdev_path, h->t->port);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &ms) == 1 && ms > 0 && ms < 10000)
			usleep((useconds_t)(2 * ms + 10) * 1000);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/ports/%u/hw_counters/%s", h->t->ctx->device->ibdev_path,
		 h->t->port, name);
	f = fopen(path, "r");
	if (!f && (!strcmp(drv, "rxe") || !strcmp(drv, "fake")))
		th_fail("%s: %s (%s keeps this counter)", path, strerror(errno), drv);
	if (!f)
		return -1;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		th_fail("%s: not a number", path);
	return (long long)v;
}

/* The RNR NAKs of this half's port: those host A's requester received,
 * those host B's responder sent (linux v6.1 drivers/infiniband/sw/rxe/
 * rxe_comp.c:296 check_ack, rxe_resp.c:1383; v6.12 rxe_comp.c:307,
 * rxe_resp.c:1630). */
static long long rnr_naks(struct half *h)
{
	return port_counter(h, th_host_side() == 'a' ? "rcvd_rnr_err" : "send_rnr_err");
}

/* A SEND to a QP of host B that has no receive posted: the responder's RNR
 * NAK (IBA vol 1 9.7.5.2.8), retried rnr_retry times after its
 * min_rnr_timer, then IBV_WC_RNR_RETRY_EXC_ERR and the QP in error; 7 is
 * for ever (IBA vol 1 table 105 "RNR Retry Count"; rxe: linux v6.1
 * drivers/infiniband/sw/rxe/rxe_comp.c COMPST_RNR_RETRY, rnr_retry 7 never
 * decremented). With a finite rnr_retry N the SEND meets N + 1 RNR NAKs,
 * the first and one for each retry, as both hosts count them where their
 * device does (rnr_naks): rxe's completer takes a NAK's retry from
 * comp.rnr_retry while it is above 0 and fails the WQE at the NAK that
 * finds it 0 (linux v6.1 rxe_comp.c:731-751, v6.12 rxe_comp.c:802-822;
 * reset_retry_counters only at an ACK). The ACK timer (4.3 s) stays out of
 * the way: on rxe a retransmission it started would meet a NAK of its own.
 */
static void rnr_case(struct th_ctx *t, uint8_t rnr_retry)
{
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct half h;
	struct ibv_wc wc;
	char what[64];
	long long naks = -1, exceeded = -1;

	o.min_rnr_timer = 1;		/* 0.01 ms: the retries run at once */
	o.rnr_retry = rnr_retry;
	o.timeout = 20;
	half_up_o(t, &h, IBV_QPT_RC, &o);
	if (rnr_retry != 7) {
		naks = rnr_naks(&h);
		if (th_host_side() == 'a')
			exceeded = port_counter(&h, "retry_rnr_exceeded_err");
	}
	if (th_host_side() == 'b') {
		th_sync("no receive");
		if (rnr_retry == 7) {
			th_sync("sent");
			usleep(50000);	/* some NAKs first (not a condition of the test) */
			post_recv(&h, 1, 0, 256, h.mr->lkey);
			expect_ok(&h, 1, &wc);
			assert_int_equal(diff_at(h.buf, 100, 12), 100);
		}
		th_sync("done");
	} else {
		th_sync("no receive");
		fill(h.buf, 100, 12);
		post_send(&h, 1, IBV_WR_SEND, 0, 100, 0, 0, 0);
		if (rnr_retry == 7) {
			th_sync("sent");
			expect_ok(&h, 1, &wc);
		} else {
			snprintf(what, sizeof(what), "rnr_retry %u with no receive", rnr_retry);
			expect_refused(&h, IBV_WC_RNR_RETRY_EXC_ERR, what);
		}
		th_sync("done");
	}
	/* host A's completion came after the last NAK: both counts are whole */
	if (naks >= 0) {
		long long got = rnr_naks(&h) - naks;

		th_note("host %c: %lld RNR NAKs %s with rnr_retry %u", th_host_side() == 'a' ? 'A' : 'B',
			got, th_host_side() == 'a' ? "received" : "sent", rnr_retry);
		if (got != rnr_retry + 1)
			th_fail("rnr_retry %u: host %c %s %lld RNR NAKs, want %u (the first and %u "
				"retries)", rnr_retry, th_host_side() == 'a' ? 'A' : 'B',
				th_host_side() == 'a' ? "received" : "sent", got, rnr_retry + 1,
				rnr_retry);
	}
	if (exceeded >= 0)
		assert_int_equal(port_counter(&h, "retry_rnr_exceeded_err") - exceeded, 1);
	half_close(&h);
}

/* HOST-08 */
TH_TEST(rnr_retry_0_fails_at_the_first_rnr_nak, "HOST-08", 0)
{
	rnr_case(t, 0);
}

TH_TEST(rnr_retry_3_runs_out_without_a_receive, "HOST-08", 0)
{
	rnr_case(t, 3);
}

TH_TEST(rnr_retry_7_waits_until_the_receive_is_posted, "HOST-08", 0)
{
	rnr_case(t, 7);
}

/* HOST-08: every finite rnr_retry, each N + 1 RNR NAKs and no more */
TH_TEST(rnr_retry_1_runs_out_at_the_second_rnr_nak, "HOST-08", 0)
{
	rnr_case(t, 1);
}

TH_TEST(rnr_retry_2_runs_out_at_the_third_rnr_nak, "HOST-08", 0)
{
	rnr_case(t, 2);
}

TH_TEST(rnr_retry_4_runs_out_at_the_fifth_rnr_nak, "HOST-08", 0)
{
	rnr_case(t, 4);
}

TH_TEST(rnr_retry_5_runs_out_at_the_sixth_rnr_nak, "HOST-08", 0)
{
	rnr_case(t, 5);
}

TH_TEST(rnr_retry_6_runs_out_at_the_seventh_rnr_nak, "HOST-08", 0)
{
	rnr_case(t, 6);
}

/* HOST-09: host B's QP goes (its process ends, as when the host dies: the
 * kernel destroys what the process held, and packets for a QP number
 * nobody has are dropped, linux v6.1 drivers/infiniband/sw/rxe/rxe_recv.c
 * hdr_check): host A's SEND is retried retry_cnt times after its timeout,
 * then completes IBV_WC_RETRY_EXC_ERR and its QP is in error (IBA vol 1
 * 9.7.6.1.3; rxe_comp.c COMPST_ERROR_RETRY). */
TH_TEST(retry_exceeded_when_the_peer_host_is_gone, "HOST-09", 0)
{
	struct tf_qp_opts o = TF_QP_DEFAULT;
	struct half h;

	o.timeout = 12;			/* 16.8 ms */
	o.retry_cnt = 2;
	half_up_o(t, &h, IBV_QPT_RC, &o);
	th_sync("connected");
	if (th_host_side() == 'b') {
		/* the QP first, then the process: as a host that dies */
		assert_int_equal(ibv_destroy_qp(h.qp), 0);
		h.qp = NULL;
		_exit(0);
	}
	th_peer_end();
	fill(h.buf, 100, 13);
	post_send(&h, 1, IBV_WR_SEND, 0, 100, 0, 0, 0);
	expect_refused(&h, IBV_WC_RETRY_EXC_ERR, "a SEND to a host that is gone");
	half_close(&h);
}

/* HOST-10..12: host B refuses the one WR of host A. B posts a receive (or
 * none), then A the WR, whose completion must be the case's status, A's
 * QP then in error; B's receive must end in error too (in one of the
 * statuses the case lists, when it lists any), and with no receive, B's
 * memory stays as it was. */
struct refusal {
	const char *what, *recv_what;	/* A's WR, B's receive: for the failures */
	enum ibv_wr_opcode op;		/* A's WR: a SEND, or a WRITE to B's buffer */
	uint32_t len, rkey_flip;	/* its length, the bits of B's rkey it flips */
	uint32_t recv_len, lkey_flip;	/* B's receive (0: none), the bits of its lkey flipped */
	enum ibv_wc_status want;	/* A's completion */
	int n_recv_want;		/* B's receive: one of recv_want[], or any error (0) */
	enum ibv_wc_status recv_want[2];
};

enum { BAD_RKEY, SEND_TOO_LONG, BAD_LKEY };

static const struct refusal refusals[] = {
	[BAD_RKEY] = { .what = "a WRITE with a bad rkey", .op = IBV_WR_RDMA_WRITE, .len = 256,
		       .rkey_flip = 0x80000, .want = IBV_WC_REM_ACCESS_ERR },
	[SEND_TOO_LONG] = { .what = "a SEND longer than the receive",
			    .recv_what = "the receive of a SEND too long for it",
			    .op = IBV_WR_SEND, .len = 200, .recv_len = 64,
			    .want = IBV_WC_REM_INV_REQ_ERR, .n_recv_want = 2,
			    .recv_want = { IBV_WC_LOC_LEN_ERR, IBV_WC_REM_INV_REQ_ERR } },
	[BAD_LKEY] = { .what = "a SEND into a receive with a bad key",
		       .recv_what = "a receive with a bad key", .op = IBV_WR_SEND, .len = 100,
		       .recv_len = 256, .lkey_flip = 0x80000, .want = IBV_WC_REM_OP_ERR },
};

/* B's receive of case c ended (wc): in error, as c wants. */
static void check_recv_refused(const struct refusal *c, const struct ibv_wc *wc)
{
	assert_int_equal(wc->wr_id, 1);
	if (!c->n_recv_want) {
		if (wc->status == IBV_WC_SUCCESS)
			th_fail("%s: %s, want an error", c->recv_what,
				ibv_wc_status_str(wc->status));
		return;
	}
	for (int i = 0; i < c->n_recv_want; i++)
		if (wc->status == c->recv_want[i])
			return;
	th_fail("%s: %s, want %s%s%s", c->recv_what, ibv_wc_status_str(wc->status),
		ibv_wc_status_str(c->recv_want[0]), c->n_recv_want > 1 ? " or " : "",
		c->n_recv_want > 1 ? ibv_wc_status_str(c->recv_want[1]) : "");
}

static void refusal_case(struct th_ctx *t, const struct refusal *c)
{
	struct half h;
	struct ibv_wc wc;

	half_up(t, &h, IBV_QPT_RC);
	if (th_host_side() == 'b') {
		if (c->recv_len)
			post_recv(&h, 1, 0, c->recv_len, h.mr->lkey ^ c->lkey_flip);
		th_sync("ready");
		if (c->recv_len) {
			poll_one(&h, &wc);
			check_recv_refused(c, &wc);
		}
		th_sync("done");
		if (!c->recv_len)
			for (uint32_t i = 0; i < c->len; i++)
				assert_int_equal(h.buf[i], 0);
	} else {
		int write = c->op == IBV_WR_RDMA_WRITE;

		th_sync("ready");
		fill(h.buf, c->len, 14);
		post_send(&h, 1, c->op, 0, c->len, write ? h.peer.addr : 0,
			  write ? h.peer.rkey ^ c->rkey_flip : 0, 0);
		expect_refused(&h, c->want, c->what);
		th_sync("done");
	}
	half_close(&h);
}

/* HOST-10: a WRITE with a key host B never gave: IBV_WC_REM_ACCESS_ERR
 * (IBA vol 1 9.7.5.2.4 the NAK remote access error; rxe_resp.c
 * RESPST_ERR_RKEY_VIOLATION, class C), host A's QP in error, B's memory as
 * it was. */
TH_TEST(write_with_a_bad_rkey_is_rem_access_err, "HOST-10", 0)
{
	refusal_case(t, &refusals[BAD_RKEY]);
}

/* HOST-11: a SEND longer than host B's receive: the invalid request NAK,
 * IBV_WC_REM_INV_REQ_ERR at host A (IBA vol 1 9.7.5.2.2, table 58 class C;
 * rxe_resp.c:1422 RESPST_ERR_LENGTH), and B's receive ends in error, with
 * IBV_WC_LOC_LEN_ERR (the spec's, the reference's strict profile) or
 * IBV_WC_REM_INV_REQ_ERR (what that class C path of rxe completes it
 * with, rxe_resp.c:1422-1427). rxe takes such a SEND for a malformed
 * receive instead (class A: IBV_WC_REM_OP_ERR, IBV_WC_LOC_QP_OP_ERR;
 * rxe_resp.c:556): a known deviation (fixtures/expect/rxe.txt). */
TH_TEST(send_longer_than_the_receive_is_rem_inv_req_err, "HOST-11", 0)
{
	refusal_case(t, &refusals[SEND_TOO_LONG]);
}

/* HOST-12: a receive of host B whose key is bad: the remote operation error
 * NAK, IBV_WC_REM_OP_ERR at host A (IBA vol 1 9.7.5.2.5, class A;
 * rxe_resp.c RESPST_ERR_MALFORMED_WQE), B's receive in error. */
TH_TEST(receive_with_a_bad_lkey_is_rem_op_err, "HOST-12", 0)
{
	refusal_case(t, &refusals[BAD_LKEY]);
}

/* ---- XRC across hosts ------------------------------------------------------------ */
/* Host B's second process: the domain of the file, the target QP opened by
 * its number, an XRC SRQ of its own with receives; tells its SRQ number,
 * then its receives' data. */
struct xrc_b2 {
	struct th_ctx *t;
	char path[PATH_MAX];	/* in the test's dir, whose name is long */
	int no_destroy;		/* mlx5: its destroy of an opened QP kills it (th_crash_guard) */
};

static void xrc_second_process(struct tr_peer *self, void *arg)
{
	struct xrc_b2 *a = arg;
	struct ibv_context *ctx = th_open();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	int fd = open(a->path, O_RDONLY);
	struct ibv_xrcd *x = fd >= 0 ? th_xrcd(ctx, fd, 0) : NULL;
	unsigned char *buf = calloc(1, 4096);
	struct ibv_mr *mr = buf && pd ? ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_srq *srq;
	struct ibv_qp *tgt;
	struct ibv_wc wc;
	uint32_t qpn, srqn;
	int i;

	TR_ASSERT(pd && cq && x && mr);
	qpn = tr_recv(self);
	tgt = th_open_tgt(ctx, x, qpn);
	TR_ASSERT(tgt != NULL);
	srq = th_xsrq(ctx, pd, x, cq, 16);
	TR_ASSERT(srq != NULL);
	TR_ASSERT(ibv_get_srq_num(srq, &srqn) == 0);
	for (i = 0; i < 4; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + 256 * i, .length = 256,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		TR_ASSERT(ibv_post_srq_recv(srq, &wr, &bad) == 0);
	}
	tr_send(self, srqn);
	/* two SENDs come here while the target QP's creator lives, two after */
	for (i = 0; i < 4; i++) {
		TR_ASSERT(tf_poll_for(cq, &wc, LIMIT_MS) == 1);
		TR_EXPECT_MSG(wc.status == IBV_WC_SUCCESS, "B2's receive %d: %s", i,
			      ibv_wc_status_str(wc.status));
		TR_EXPECT(wc.byte_len == 32);
		TR_EXPECT(diff_at(buf + 256 * wc.wr_id, 32, 20 + (unsigned)i) == 32);
	}
	tr_send(self, 4);
	(void)tr_recv(self);
	TR_EXPECT(ibv_destroy_srq(srq) == 0);
	if (!a->no_destroy) {
		TR_EXPECT(ibv_destroy_qp(tgt) == 0);
		TR_EXPECT(ibv_close_xrcd(x) == 0);
	}
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	close(fd);
}

/* HOST-13: an XRC initiator of host A reaches the XRC SRQs of two processes
 * of host B through one target QP (the SRQ named by remote_srqn, in the
 * target QP's domain: spec WR-03), and keeps reaching the second process's
 * SRQ after the target QP's creator has gone, the second process's handle
 * holding it (spec LIFE-02..04; linux v6.1 drivers/infiniband/core/
 * verbs.c ib_open_qp, __ib_destroy_shared_qp). */
TH_TEST(xrc_one_target_qp_reaches_two_processes_and_outlives_its_creator, "HOST-13", TH_XRC)
{
	struct half h;
	struct ibv_wc wc;
	struct tr_peer b2;
	struct xrc_b2 arg = { .t = t };
	struct ibv_xrcd *x = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *tgt = NULL, *ini = NULL;
	int fd = -1, i;

	half_open(t, &h, 0, IBV_ACCESS_LOCAL_WRITE);
	if (th_host_side() == 'b') {
		arg.no_destroy = th_crash_guard("destroy_of_an_opened_qp");
		snprintf(arg.path, sizeof(arg.path), "%s/xrcd", tr_dir());
		fd = open(arg.path, O_RDWR | O_CREAT, 0600);
		assert_true(fd >= 0);
		x = th_xrcd(t->ctx, fd, O_CREAT);
		assert_non_null(x);
		tgt = th_tgt_qp(t->ctx, x);
		assert_non_null(tgt);
		srq = th_xsrq(t->ctx, h.pd, x, h.cq, 16);
		assert_non_null(srq);
		assert_int_equal(ibv_get_srq_num(srq, &h.me.srqn[0]), 0);
		for (i = 0; i < 2; i++) {
			struct ibv_sge sge = { .addr = (uintptr_t)h.buf + 256 * i, .length = 256,
					       .lkey = h.mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
						  .num_sge = 1 }, *bad;

			assert_int_equal(ibv_post_srq_recv(srq, &wr, &bad), 0);
		}
		th_peer_start(&b2, xrc_second_process, &arg);
		th_send(&b2, tgt->qp_num);
		h.me.srqn[1] = th_recv(&b2);
		h.me.qpn = tgt->qp_num;
	} else {
		ini = th_ini_qp(t->ctx, h.pd, h.cq);
		assert_non_null(ini);
		h.me.qpn = ini->qp_num;
	}
	half_xchg(&h);
	if (th_host_side() == 'b') {
		struct ibv_ah_attr ah;

		peer_ah(&h, &ah);
		/* the target QP: INIT, RTR to host A's initiator */
		assert_int_equal(tf_qp_to_init(tgt, t->port), 0);
		assert_int_equal(tf_qp_to_rtr_av(tgt, &ah, h.peer.qpn), 0);
		th_sync("target ready");
		for (i = 0; i < 2; i++) {
			expect_ok(&h, (uint64_t)i, &wc);
			assert_int_equal(diff_at(h.buf + 256 * i, 32, 30 + (unsigned)i), 32);
		}
		/* the creator's objects go: its SRQ, its handle of the target QP */
		assert_int_equal(ibv_destroy_srq(srq), 0);
		assert_int_equal(ibv_destroy_qp(tgt), 0);
		th_sync("creator gone");
		assert_int_equal(th_recv(&b2), 4);	/* B2 got its four */
		th_send(&b2, 0);
		assert_int_equal(th_peer_wait(&b2), 0);
		assert_int_equal(ibv_close_xrcd(x), 0);
		close(fd);
		th_sync("done");
	} else {
		struct ibv_ah_attr ah;
		int n = 0;

		peer_ah(&h, &ah);
		assert_int_equal(tf_qp_connect_av(ini, &ah, h.peer.qpn), 0);
		th_sync("target ready");
		/* to B1's SRQ, B2's, B1's, B2's; then, B1 gone, twice to B2's */
		for (i = 0; i < 6; i++) {
			int to = i < 4 ? i % 2 : 1;
			unsigned seed = to ? 20 + (unsigned)n++ : 30 + (unsigned)(i / 2);
			struct ibv_sge sge = { .addr = (uintptr_t)h.buf + 64 * i, .length = 32,
					       .lkey = h.mr->lkey };
			struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
						  .num_sge = 1, .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;

			if (i == 4)
				th_sync("creator gone");
			fill(h.buf + 64 * i, 32, seed);
			wr.qp_type.xrc.remote_srqn = h.peer.srqn[to];
			assert_int_equal(ibv_post_send(ini, &wr, &bad), 0);
			expect_ok(&h, (uint64_t)i, &wc);
		}
		th_sync("done");
		assert_int_equal(ibv_destroy_qp(ini), 0);
	}
	half_close(&h);
}

/* HOST-13: an XRC SEND_WITH_IMM of host A reaches the XRC SRQ of host B it
 * names with its immediate, on that SRQ's CQ (rdma-core v44.0
 * libibverbs/man/ibv_post_send.3: SEND_WITH_IMM on XRC_SEND; spec WR-03:
 * the SRQ remote_srqn names; SRQX-13: its CQ). rxe has no XRC. */
TH_TEST(xrc_send_imm_reaches_the_srq_with_its_immediate, "HOST-13", TH_XRC)
{
	struct half h;
	struct ibv_wc wc;
	struct ibv_xrcd *x = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *tgt = NULL, *ini = NULL;
	struct ibv_ah_attr ah;
	char path[PATH_MAX];
	int fd = -1;

	half_open(t, &h, 0, IBV_ACCESS_LOCAL_WRITE);
	if (th_host_side() == 'b') {
		struct ibv_sge sge = { .addr = (uintptr_t)h.buf, .length = 256, .lkey = h.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

		snprintf(path, sizeof(path), "%s/xrcd", tr_dir());
		fd = open(path, O_RDWR | O_CREAT, 0600);
		assert_true(fd >= 0);
		x = th_xrcd(t->ctx, fd, O_CREAT);
		assert_non_null(x);
		tgt = th_tgt_qp(t->ctx, x);
		assert_non_null(tgt);
		srq = th_xsrq(t->ctx, h.pd, x, h.cq, 16);
		assert_non_null(srq);
		assert_int_equal(ibv_get_srq_num(srq, &h.me.srqn[0]), 0);
		assert_int_equal(ibv_post_srq_recv(srq, &wr, &bad), 0);
		h.me.qpn = tgt->qp_num;
	} else {
		ini = th_ini_qp(t->ctx, h.pd, h.cq);
		assert_non_null(ini);
		h.me.qpn = ini->qp_num;
	}
	half_xchg(&h);
	peer_ah(&h, &ah);
	if (th_host_side() == 'b') {
		assert_int_equal(tf_qp_to_init(tgt, t->port), 0);
		assert_int_equal(tf_qp_to_rtr_av(tgt, &ah, h.peer.qpn), 0);
		th_sync("target ready");
		expect_imm(&h, 1, IBV_WC_RECV, 0x5eed0e01, "B's SRQ receive of an XRC SEND_WITH_IMM",
			   &wc);
		assert_int_equal(wc.byte_len, 48);
		assert_int_equal(diff_at(h.buf, 48, 18), 48);
		th_sync("done");
		assert_int_equal(ibv_destroy_srq(srq), 0);
		assert_int_equal(ibv_destroy_qp(tgt), 0);
		assert_int_equal(ibv_close_xrcd(x), 0);
		close(fd);
	} else {
		struct ibv_sge sge = { .addr = (uintptr_t)h.buf, .length = 48, .lkey = h.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND_WITH_IMM,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		assert_int_equal(tf_qp_connect_av(ini, &ah, h.peer.qpn), 0);
		th_sync("target ready");
		fill(h.buf, 48, 18);
		wr.imm_data = htobe32(0x5eed0e01);
		wr.qp_type.xrc.remote_srqn = h.peer.srqn[0];
		assert_int_equal(ibv_post_send(ini, &wr, &bad), 0);
		expect_ok(&h, 1, &wc);
		th_sync("done");
		assert_int_equal(ibv_destroy_qp(ini), 0);
	}
	half_close(&h);
}

int main(int argc, char **argv)
{
	return th_main_twohost(argc, argv);
}
