/* SPDX-License-Identifier: MIT */
/*
 * ibvct-wire-rdma: the one-sided RC operations between two hosts, checked
 * byte by byte, for what Debian's ibverbs-utils has no program for (its
 * pingpongs only send). Built against the system's verbs.h and libibverbs
 * only, so the same binary runs on a real device and, under ibvct-run, on
 * the reference target (t6150: real rxe against the reference's RoCE v2
 * transport, each way).
 *
 *   ibvct-wire-rdma [-d DEV] [-i PORT] [-g GIDIDX] [-p TCPPORT] [-s SIZE]
 *                   [-m MTU] [-t TIMEOUT] [-r RETRY_CNT] [-R RNR_RETRY]
 *                   [-l SECONDS] [-n] [SERVER]
 *
 * Without SERVER it is the passive side (the target of the operations): it
 * registers a buffer with remote write, read and atomic access, fills the
 * part to be read with a pattern, listens on TCPPORT and swaps one line
 * "QPN:PSN:GID:ADDR:RKEY" each way with the active side, as the pingpongs
 * swap theirs (rdma-core v44.0 libibverbs/examples/pingpong.c does the same
 * over TCP, with LID and no address). With SERVER it is the active side:
 * it connects, then posts, one at a time, an RDMA WRITE of SIZE bytes, an
 * RDMA WRITE_WITH_IMM of SIZE bytes (which takes the passive side's one
 * receive), an RDMA READ of SIZE bytes of the pattern, a CMP_SWAP that
 * matches, one that does not, and a FETCH_ADD, and checks each
 * completion, each byte read and each original value. Then it says
 * "done"; the passive side checks its receive's immediate and length and
 * its memory (both written areas, the atomic word), and answers "ok" or
 * what it found. SIZE above the path MTU makes multi-packet WRITEs and
 * READ responses.
 *
 * Each step prints a line; exit 0 when every check held (on either side),
 * 1 when one did not, 2 for usage. Waits for a completion or the peer are
 * bounded (60 s times IBVCT_TIMEOUT_MULT; -l SECONDS, times the same, for
 * a completion), so a side whose peer never answers ends.
 *
 * Under faults on the wire (t6151): the first operation that fails ends
 * the active side's sequence (its QP is in the error state, the rest
 * would only flush) with one line "outcome: wr N status S (NAME)", what
 * t6151 compares; the QP attributes the faults act on are options: -t the
 * local ACK timeout (4.096 us * 2^TIMEOUT, default 17), -r retry_cnt and
 * -R rnr_retry (7 each by default); -n: the passive side posts no
 * receive, so the WRITE_WITH_IMM meets RNR NAKs.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "wire_tcp.h"

#define WR_IMM		0x1badcafeu	/* the immediate of the WRITE_WITH_IMM */
#define ATOM_INIT	UINT64_C(0x1111222233334444)	/* the atomic word before */
#define ATOM_SWAP	UINT64_C(0x5555666677778888)
#define ATOM_OTHER	UINT64_C(0x9999aaaabbbbcccc)	/* a swap that must not happen */
#define ATOM_ADD	UINT64_C(0x0000000100000003)

/* The passive side's buffer: [0, S) the WRITE's, [S, 2S) the WRITE_IMM's,
 * [2S, 3S) the pattern the READ takes, then the 8-byte atomic word. The
 * active side's: [0, S) what it writes, [S, 2S) what it writes with the
 * immediate, [2S, 3S) what it reads, then the atomics' results. */
struct wr_ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	size_t size, len;
	uint8_t port;
	int gid_idx;
	enum ibv_mtu mtu;
	union ibv_gid gid;
	uint32_t psn;
	long long limit_ms;		/* a wait for the peer */
	long long wc_limit_ms;		/* a wait for a completion */
	uint8_t timeout, retry_cnt, rnr_retry;
};

struct wr_peer {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

static int wr_failed;

static void wr_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wr_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("ibvct-wire-rdma: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	wr_failed = 1;
}

/* The byte i of pattern seed: every byte position distinct within 256 and
 * the patterns of the areas different from each other. */
static unsigned char wr_pat(unsigned seed, size_t i)
{
	return (unsigned char)(seed * 71 + i * 7 + (i >> 8));
}

static void wr_fill(unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = wr_pat(seed, i);
}

/* 0 when p holds pattern seed; else 1 and the first differing byte named */
static int wr_check(const unsigned char *p, size_t len, unsigned seed, const char *what)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != wr_pat(seed, i)) {
			wr_bad("%s: byte %zu is 0x%02x, want 0x%02x", what, i, p[i], wr_pat(seed, i));
			return 1;
		}
	}
	return 0;
}

static int wr_parse_peer(const char *line, struct wr_peer *p)
{
	char hex[33];

	if (sscanf(line, "%x:%x:%32[0-9a-f]:%" SCNx64 ":%x", &p->qpn, &p->psn, hex, &p->addr,
		   &p->rkey) != 5 || strlen(hex) != 32)
		return -1;
	wire_gid_unhex(hex, p->gid.raw);
	return 0;
}

/* ---- verbs ------------------------------------------------------------------------ */
static int wr_open(struct wr_ctx *c, const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL), *d = NULL;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = c->port,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

	for (int i = 0; list && list[i]; i++)
		if (!dev || !strcmp(ibv_get_device_name(list[i]), dev)) {
			d = list[i];
			break;
		}
	if (!d) {
		fprintf(stderr, "ibvct-wire-rdma: no device %s\n", dev ? dev : "at all");
		ibv_free_device_list(list);
		return -1;
	}
	c->ctx = ibv_open_device(d);
	ibv_free_device_list(list);
	if (!c->ctx) {
		perror("ibvct-wire-rdma: ibv_open_device");
		return -1;
	}
	if (ibv_query_gid(c->ctx, c->port, c->gid_idx, &c->gid)) {
		fprintf(stderr, "ibvct-wire-rdma: no GID %d on port %u\n", c->gid_idx, c->port);
		return -1;
	}
	c->len = 3 * c->size + 64;
	if (posix_memalign((void **)&c->buf, 4096, c->len))
		return -1;
	memset(c->buf, 0, c->len);
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = c->pd ? ibv_create_cq(c->ctx, 16, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, c->len, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	ia.send_cq = ia.recv_cq = c->cq;
	c->qp = c->mr ? ibv_create_qp(c->pd, &ia) : NULL;
	if (!c->qp) {
		perror("ibvct-wire-rdma: PD, CQ, MR or QP");
		return -1;
	}
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS)) {
		perror("ibvct-wire-rdma: modify QP to INIT");
		return -1;
	}
	c->psn = (uint32_t)(0x1000 + (getpid() & 0xffff)) & 0xffffff;
	return 0;
}

static void wr_close(struct wr_ctx *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->ctx)
		ibv_close_device(c->ctx);
	free(c->buf);
}

/* RTR then RTS, addressed by the peer's GID (RoCE: no LID) */
static int wr_connect_qp(struct wr_ctx *c, const struct wr_peer *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = c->mtu, .dest_qp_num = p->qpn,
		.rq_psn = p->psn, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = c->port,
			     .grh = { .dgid = p->gid, .sgid_index = (uint8_t)c->gid_idx,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
		perror("ibvct-wire-rdma: modify QP to RTR");
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.sq_psn = c->psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
		perror("ibvct-wire-rdma: modify QP to RTS");
		return -1;
	}
	return 0;
}

/* One completion within the limit: 0 when it is wr_id's and a success */
static int wr_wait(struct wr_ctx *c, uint64_t wr_id, const char *what, struct ibv_wc *wc)
{
	long long end = wire_now_ms() + c->wc_limit_ms;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, wc)) == 0 && wire_now_ms() < end)
		usleep(200);
	if (n != 1) {
		wr_bad("%s: %s", what, n < 0 ? "ibv_poll_cq failed" : "no completion in the limit");
		printf("outcome: wr %" PRIu64 " %s\n", wr_id, n < 0 ? "poll failed" : "no completion");
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != wr_id) {
		wr_bad("%s: completion of wr %" PRIu64 ": %s (vendor error 0x%x)", what, wc->wr_id,
		       ibv_wc_status_str(wc->status), wc->vendor_err);
		printf("outcome: wr %" PRIu64 " status %d (%s)\n", wc->wr_id, (int)wc->status,
		       ibv_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}

/* One WR of the active side: local [off, off + len), remote raddr */
static int wr_post(struct wr_ctx *c, const struct wr_peer *p, uint64_t id, enum ibv_wr_opcode op,
		   size_t off, uint32_t len, uint64_t raddr, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf + off, .length = len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = p->rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = p->rkey;
		wr.imm_data = htobe32(WR_IMM);
	}
	errno = ibv_post_send(c->qp, &wr, &bad);
	if (errno) {
		wr_bad("post wr %" PRIu64 ": %s", id, strerror(errno));
		return -1;
	}
	return 0;
}

static uint64_t wr_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The atomic on the word at the peer; its original value must be want.
 * -1 when it did not complete as a success */
static int wr_atomic(struct wr_ctx *c, const struct wr_peer *p, uint64_t id,
		      enum ibv_wr_opcode op, uint64_t cmp_add, uint64_t swap, uint64_t want,
		      const char *what)
{
	size_t off = 3 * c->size + 8 * (id - 4);
	struct ibv_wc wc;

	if (wr_post(c, p, id, op, off, 8, p->addr + 3 * c->size, cmp_add, swap) ||
	    wr_wait(c, id, what, &wc))
		return -1;
	if (wr_u64(c->buf + off) != want) {
		wr_bad("%s: original value 0x%016" PRIx64 ", want 0x%016" PRIx64, what,
		       wr_u64(c->buf + off), want);
		return 0;
	}
	printf("%s: original value 0x%016" PRIx64 " as expected\n", what, want);
	return 0;
}

static void wr_active(struct wr_ctx *c, const struct wr_peer *p)
{
	size_t s = c->size;
	uint32_t len = (uint32_t)s;
	struct ibv_wc wc;

	wr_fill(c->buf, s, 1);
	wr_fill(c->buf + s, s, 2);
	if (wr_post(c, p, 1, IBV_WR_RDMA_WRITE, 0, len, p->addr, 0, 0) ||
	    wr_wait(c, 1, "RDMA WRITE", &wc))
		return;
	printf("RDMA WRITE: %zu bytes, completed\n", s);
	if (wr_post(c, p, 2, IBV_WR_RDMA_WRITE_WITH_IMM, s, len, p->addr + s, 0, 0) ||
	    wr_wait(c, 2, "RDMA WRITE_WITH_IMM", &wc))
		return;
	printf("RDMA WRITE_WITH_IMM: %zu bytes, immediate 0x%08x, completed\n", s, WR_IMM);
	if (wr_post(c, p, 3, IBV_WR_RDMA_READ, 2 * s, len, p->addr + 2 * s, 0, 0) ||
	    wr_wait(c, 3, "RDMA READ", &wc))
		return;
	if (!wr_check(c->buf + 2 * s, s, 3, "RDMA READ"))
		printf("RDMA READ: %zu bytes, each as the peer wrote them\n", s);
	if (wr_atomic(c, p, 4, IBV_WR_ATOMIC_CMP_AND_SWP, ATOM_INIT, ATOM_SWAP, ATOM_INIT,
		      "CMP_SWAP (equal)") ||
	    wr_atomic(c, p, 5, IBV_WR_ATOMIC_CMP_AND_SWP, ATOM_INIT, ATOM_OTHER, ATOM_SWAP,
		      "CMP_SWAP (not equal)"))
		return;
	wr_atomic(c, p, 6, IBV_WR_ATOMIC_FETCH_AND_ADD, ATOM_ADD, 0, ATOM_SWAP, "FETCH_ADD");
}

/* The passive side's checks once the active side is done */
static void wr_passive_check(struct wr_ctx *c, char *verdict, size_t vl)
{
	size_t s = c->size;
	struct ibv_wc wc;
	uint64_t w = wr_u64(c->buf + 3 * s);
	int before = wr_failed;

	if (!wr_wait(c, 7, "the receive of the WRITE_WITH_IMM", &wc)) {
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    be32toh(wc.imm_data) != WR_IMM || wc.byte_len != s)
			wr_bad("the receive of the WRITE_WITH_IMM: opcode %d, flags 0x%x, immediate "
			       "0x%08x, %u bytes; want RECV_RDMA_WITH_IMM, 0x%08x, %zu", wc.opcode,
			       wc.wc_flags, be32toh(wc.imm_data), wc.byte_len, WR_IMM, s);
		else
			printf("receive: RECV_RDMA_WITH_IMM, immediate 0x%08x, %u bytes\n", WR_IMM,
			       wc.byte_len);
	}
	if (!wr_check(c->buf, s, 1, "memory the RDMA WRITE wrote"))
		printf("memory: the RDMA WRITE's %zu bytes as sent\n", s);
	if (!wr_check(c->buf + s, s, 2, "memory the RDMA WRITE_WITH_IMM wrote"))
		printf("memory: the RDMA WRITE_WITH_IMM's %zu bytes as sent\n", s);
	if (w != ATOM_SWAP + ATOM_ADD)
		wr_bad("the atomic word is 0x%016" PRIx64 ", want 0x%016" PRIx64 " (swapped, then added)",
		       w, ATOM_SWAP + ATOM_ADD);
	else
		printf("memory: the atomic word 0x%016" PRIx64 " (swapped once, then added)\n", w);
	snprintf(verdict, vl, "%s", wr_failed == before ? "ok" : "bad: the passive side's checks failed");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "18515", *server = NULL;
	struct wr_ctx c = { .size = 4096, .port = 1, .gid_idx = 0, .mtu = IBV_MTU_1024,
			  .timeout = 17, .retry_cnt = 7, .rnr_retry = 7 };
	char line[WIRE_LINE_LEN], hex[33];
	struct wr_peer p;
	long mult = getenv("IBVCT_TIMEOUT_MULT") ? atol(getenv("IBVCT_TIMEOUT_MULT")) : 1;
	int opt, fd = -1, mtu, no_recv = 0;
	long wc_secs = 60;

	while ((opt = getopt(argc, argv, "d:i:g:p:s:m:t:r:R:l:n")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'i': c.port = (uint8_t)atoi(optarg); break;
		case 'g': c.gid_idx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 's': c.size = (size_t)strtoul(optarg, NULL, 0); break;
		case 'm':
			mtu = atoi(optarg);
			c.mtu = mtu == 256 ? IBV_MTU_256 : mtu == 512 ? IBV_MTU_512 :
				mtu == 1024 ? IBV_MTU_1024 : mtu == 2048 ? IBV_MTU_2048 :
				mtu == 4096 ? IBV_MTU_4096 : 0;
			if (!c.mtu)
				goto usage;
			break;
		case 't': c.timeout = (uint8_t)atoi(optarg); break;
		case 'r': c.retry_cnt = (uint8_t)atoi(optarg); break;
		case 'R': c.rnr_retry = (uint8_t)atoi(optarg); break;
		case 'l': wc_secs = atol(optarg); break;
		case 'n': no_recv = 1; break;
		default: goto usage;
		}
	}
	if (optind < argc - 1 || c.size < 8 || c.size % 8 || c.size > (1u << 20) || c.port < 1 ||
	    c.timeout > 31 || c.retry_cnt > 7 || c.rnr_retry > 7 || wc_secs < 1)
		goto usage;
	if (optind == argc - 1)
		server = argv[optind];
	c.limit_ms = 60000LL * (mult > 0 ? mult : 1);
	c.wc_limit_ms = 1000LL * wc_secs * (mult > 0 ? mult : 1);

	if (wr_open(&c, dev))
		goto out;
	if (!server) {
		/* the areas the active side reads and changes */
		wr_fill(c.buf + 2 * c.size, c.size, 3);
		memcpy(c.buf + 3 * c.size, &(uint64_t){ ATOM_INIT }, 8);
		/* the WRITE_WITH_IMM's receive: no SGE, its data goes to memory */
		struct ibv_recv_wr rwr = { .wr_id = 7 }, *bad;

		errno = no_recv ? 0 : ibv_post_recv(c.qp, &rwr, &bad);
		if (errno) {
			perror("ibvct-wire-rdma: ibv_post_recv");
			goto out;
		}
		fd = wire_tcp_accept(port, c.limit_ms);
	} else {
		fd = wire_tcp_connect(server, port);
	}
	if (fd < 0) {
		fprintf(stderr, "ibvct-wire-rdma: no TCP connection on port %s\n", port);
		goto out;
	}
	wire_gid_hex(c.gid.raw, hex);
	snprintf(line, sizeof(line), "%06x:%06x:%s:%016" PRIx64 ":%08x", c.qp->qp_num, c.psn, hex,
		 (uint64_t)(uintptr_t)c.buf, c.mr->rkey);
	printf("local:  QPN 0x%06x PSN 0x%06x GID %s\n", c.qp->qp_num, c.psn, hex);
	if (wire_line_send(fd, line) || wire_line_recv(fd, line, c.limit_ms) || wr_parse_peer(line, &p)) {
		fprintf(stderr, "ibvct-wire-rdma: the address exchange failed\n");
		goto out;
	}
	wire_gid_hex(p.gid.raw, hex);
	printf("remote: QPN 0x%06x PSN 0x%06x GID %s\n", p.qpn, p.psn, hex);
	if (wr_connect_qp(&c, &p))
		goto out;
	/* both QPs ready before the first request */
	if (wire_line_send(fd, "ready") || wire_line_recv(fd, line, c.limit_ms) || strcmp(line, "ready")) {
		fprintf(stderr, "ibvct-wire-rdma: the peer never got ready\n");
		goto out;
	}
	if (server) {
		wr_active(&c, &p);
		if (wire_line_send(fd, wr_failed ? "failed" : "done") ||
		    wire_line_recv(fd, line, c.limit_ms))
			wr_bad("no verdict from the passive side");
		else if (strcmp(line, "ok"))
			wr_bad("the passive side: %s", line);
		else
			printf("the passive side: its memory and receive as expected\n");
	} else {
		char verdict[WIRE_LINE_LEN];

		if (wire_line_recv(fd, line, c.limit_ms)) {
			wr_bad("the active side never said it was done");
		} else if (strcmp(line, "done")) {
			wr_bad("the active side: %s", line);
		} else {
			wr_passive_check(&c, verdict, sizeof(verdict));
			if (wire_line_send(fd, verdict))
				wr_bad("cannot tell the active side the verdict");
		}
	}
	if (!wr_failed)
		printf("RDMA WRITE, WRITE_WITH_IMM, READ, CMP_SWAP and FETCH_ADD of %zu bytes: all as "
		       "expected\n", c.size);
	goto done;
out:
	wr_failed = 1;
done:
	if (fd >= 0)
		close(fd);
	wr_close(&c);
	return wr_failed;
usage:
	fprintf(stderr, "usage: ibvct-wire-rdma [-d DEV] [-i PORT] [-g GIDIDX] [-p TCPPORT] [-s SIZE] "
		"[-m MTU]\n\t[-t TIMEOUT] [-r RETRY_CNT] [-R RNR_RETRY] [-l SECONDS] [-n] [SERVER]\n");
	return 2;
}
