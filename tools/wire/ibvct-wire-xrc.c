/* SPDX-License-Identifier: MIT */
/*
 * ibvct-wire-xrc: XRC between two hosts, checked byte by byte and
 * completion by completion, for what Debian's ibverbs-utils has no program
 * for (its xsrq_pingpong runs both ends of its XRC in one host's processes).
 * Built against the system's verbs.h and libibverbs only, as
 * ibvct-wire-rdma is.
 *
 *   ibvct-wire-xrc [-d DEV] [-i PORT] [-g GIDIDX] [-p TCPPORT] [-m MTU] [-o] [SERVER]
 *
 * Without SERVER it is the target side: it opens an XRC domain, makes two
 * XRC SRQs of it on one CQ (the first, the other, with receives wr_id 100
 * and up; the second, the named one, wr_id 200 and up) and a target QP
 * (IBV_QPT_XRC_RECV), listens on TCPPORT and swaps one line
 * "QPN:PSN:GID:ADDR:RKEY:SRQN" each way with the initiator side (the named
 * SRQ's number; the initiator sends its own QPN, PSN and GID). With SERVER
 * it is the initiator: an IBV_QPT_XRC_SEND QP that posts, one at a time and
 * each naming the named SRQ (remote_srqn; ibv_wr_set_xrc_srqn for the
 * SEND_WITH_IMM, the new post-send API), a SEND of SEND_LEN bytes
 * (several packets at a path MTU below it), a SEND_WITH_IMM, an RDMA WRITE
 * of SEND_LEN bytes and an RDMA READ of SEND_LEN bytes of a pattern, and
 * checks each completion and each byte read. Then it says "done"; the
 * target side checks that the two receives came from the named SRQ (none
 * from the other), their lengths, opcodes, immediate, data and qp_num (the
 * target QP's: the QP the message arrived on, ibv_poll_cq(3)), and the
 * memory the WRITE wrote, and answers "ok" or what it found.
 *
 * With -o (on both sides) the target side also opens a second XRC domain
 * with an XRC SRQ and names that one: the initiator's one SEND must
 * complete with IBV_WC_REM_INV_REQ_ERR (the target's invalid request NAK:
 * an SRQ outside the target QP's domain, WR-03) and nothing may arrive.
 *
 * Each step prints a line; the target side prints "srqn: named 0x%06x
 * other 0x%06x tgt 0x%06x" for a capture's check. Exit 0 when every check
 * held (on either side), 1 when one did not, 2 for usage. Waits are
 * bounded (60 s times IBVCT_TIMEOUT_MULT).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "wire_tcp.h"

#define SEND_LEN	4096		/* four packets at a path MTU of 1024 */
#define IMM_LEN		100
#define XI_IMM		0x5eedc0deu
#define XI_RECVS	2		/* receives posted on each SRQ */
#define WR_OTHER	100		/* wr_id of the other SRQ's first receive */
#define WR_NAMED	200		/* of the named SRQ's */

/* The target side's buffer: [0, S) and [S, 2S) the named SRQ's receives,
 * [2S, 3S) and [3S, 4S) the other's, [4S, 5S) the WRITE's, [5S, 6S) the
 * pattern the READ takes. The initiator's: [0, S) its SEND, [S, 2S) its
 * SEND_WITH_IMM, [2S, 3S) its WRITE, [3S, 4S) where the READ lands. */
#define XI_AREAS	6

struct xi_ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_xrcd *xrcd[2];	/* [1]: another domain (-o) */
	/* [0] the other, [1] the named; [2] (-o) one of another domain,
	 * then the one named */
	struct ibv_srq *srq[3];
	uint32_t srqn[3], named;
	bool foreign;			/* -o: name an SRQ of another domain */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	size_t len;
	uint8_t port;
	int gid_idx;
	enum ibv_mtu mtu;
	union ibv_gid gid;
	uint32_t psn;
	long long limit_ms;
};

struct xi_peer {
	uint32_t qpn, psn, rkey, srqn;
	uint64_t addr;
	union ibv_gid gid;
};

static int xi_failed;

static void xi_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void xi_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("ibvct-wire-xrc: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	xi_failed = 1;
}

static unsigned char xi_pat(unsigned seed, size_t i)
{
	return (unsigned char)(seed * 53 + i * 11 + (i >> 8));
}

static void xi_fill(unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = xi_pat(seed, i);
}

static int xi_check(const unsigned char *p, size_t len, unsigned seed, const char *what)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != xi_pat(seed, i)) {
			xi_bad("%s: byte %zu is 0x%02x, want 0x%02x", what, i, p[i], xi_pat(seed, i));
			return 1;
		}
	}
	return 0;
}

static int xi_parse_peer(const char *line, struct xi_peer *p)
{
	char hex[33];

	if (sscanf(line, "%x:%x:%32[0-9a-f]:%" SCNx64 ":%x:%x", &p->qpn, &p->psn, hex, &p->addr,
		   &p->rkey, &p->srqn) != 6 || strlen(hex) != 32)
		return -1;
	wire_gid_unhex(hex, p->gid.raw);
	return 0;
}

/* ---- verbs ------------------------------------------------------------------------ */
static int xi_open(struct xi_ctx *c, const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL), *d = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!dev || !strcmp(ibv_get_device_name(list[i]), dev)) {
			d = list[i];
			break;
		}
	if (!d) {
		fprintf(stderr, "ibvct-wire-xrc: no device %s\n", dev ? dev : "at all");
		ibv_free_device_list(list);
		return -1;
	}
	c->ctx = ibv_open_device(d);
	ibv_free_device_list(list);
	if (!c->ctx) {
		perror("ibvct-wire-xrc: ibv_open_device");
		return -1;
	}
	if (ibv_query_gid(c->ctx, c->port, c->gid_idx, &c->gid)) {
		fprintf(stderr, "ibvct-wire-xrc: no GID %d on port %u\n", c->gid_idx, c->port);
		return -1;
	}
	c->len = XI_AREAS * SEND_LEN;
	if (posix_memalign((void **)&c->buf, 4096, c->len))
		return -1;
	memset(c->buf, 0, c->len);
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = c->pd ? ibv_create_cq(c->ctx, 16, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, c->len, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	if (!c->mr) {
		perror("ibvct-wire-xrc: PD, CQ or MR");
		return -1;
	}
	c->psn = (uint32_t)(0x2000 + (getpid() & 0xffff)) & 0xffffff;
	return 0;
}

/* The target side's domain, its two SRQs with their receives, its target QP */
static int xi_target(struct xi_ctx *c)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_RECV,
					  .comp_mask = IBV_QP_INIT_ATTR_XRCD };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = c->port,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	for (int k = 0; k < (c->foreign ? 2 : 1); k++) {
		c->xrcd[k] = ibv_open_xrcd(c->ctx, &xa);
		if (!c->xrcd[k]) {
			perror("ibvct-wire-xrc: ibv_open_xrcd");
			return -1;
		}
	}
	for (int k = 0; k < (c->foreign ? 3 : 2); k++) {
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = 8, .max_sge = 1 },
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_XRC, .pd = c->pd, .xrcd = c->xrcd[k == 2], .cq = c->cq,
		};

		c->srq[k] = ibv_create_srq_ex(c->ctx, &sa);
		if (!c->srq[k] || ibv_get_srq_num(c->srq[k], &c->srqn[k])) {
			perror("ibvct-wire-xrc: XRC SRQ");
			return -1;
		}
		for (int i = 0; i < XI_RECVS; i++) {
			/* the named SRQ's receives in areas 0 and 1, the other's in 2
			 * and 3 (-o: the other domain's in 0 and 1) */
			size_t area = (size_t)((k == 2 ? 1 : 1 - k) * XI_RECVS + i);
			struct ibv_sge sge = { .addr = (uintptr_t)c->buf + area * SEND_LEN,
					       .length = SEND_LEN, .lkey = c->mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)((k ? WR_NAMED : WR_OTHER) + i),
						  .sg_list = &sge, .num_sge = 1 }, *bad;

			errno = ibv_post_srq_recv(c->srq[k], &wr, &bad);
			if (errno) {
				perror("ibvct-wire-xrc: ibv_post_srq_recv");
				return -1;
			}
		}
	}
	c->named = c->srqn[c->foreign ? 2 : 1];
	qa.xrcd = c->xrcd[0];
	c->qp = ibv_create_qp_ex(c->ctx, &qa);
	if (!c->qp) {
		perror("ibvct-wire-xrc: the target QP");
		return -1;
	}
	if ((errno = ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))) {
		perror("ibvct-wire-xrc: modify the target QP to INIT");
		return -1;
	}
	xi_fill(c->buf + 5 * SEND_LEN, SEND_LEN, 4);	/* what the READ takes */
	return 0;
}

static int xi_initiator(struct xi_ctx *c)
{
	/* the new post-send API too: the SEND_WITH_IMM names its SRQ with
	 * ibv_wr_set_xrc_srqn (rdma-core v44.0 libibverbs/man/ibv_wr_post.3) */
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND, .pd = c->pd, .send_cq = c->cq, .sq_sig_all = 1,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = c->port };

	c->qp = ibv_create_qp_ex(c->ctx, &qa);
	if (!c->qp) {
		perror("ibvct-wire-xrc: the XRC_SEND QP");
		return -1;
	}
	if ((errno = ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS))) {
		perror("ibvct-wire-xrc: modify the XRC_SEND QP to INIT");
		return -1;
	}
	return 0;
}

static void xi_close(struct xi_ctx *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	for (int k = 0; k < 3; k++)
		if (c->srq[k])
			ibv_destroy_srq(c->srq[k]);
	for (int k = 0; k < 2; k++)
		if (c->xrcd[k])
			ibv_close_xrcd(c->xrcd[k]);
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

/* RTR (both), then RTS (the initiator), addressed by the peer's GID */
static int xi_connect_qp(struct xi_ctx *c, const struct xi_peer *p, bool target)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = c->mtu, .dest_qp_num = p->qpn,
		.rq_psn = p->psn, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = c->port,
			     .grh = { .dgid = p->gid, .sgid_index = (uint8_t)c->gid_idx,
				      .hop_limit = 64 } },
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	/* the responder's attributes are the target's (linux v6.1
	 * drivers/infiniband/core/verbs.c qp_state_table, XRC_TGT at RTR) */
	if (target)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if ((errno = ibv_modify_qp(c->qp, &a, mask))) {
		perror("ibvct-wire-xrc: modify QP to RTR");
		return -1;
	}
	if (target)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 17;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = c->psn;
	a.max_rd_atomic = 1;
	if ((errno = ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))) {
		perror("ibvct-wire-xrc: modify QP to RTS");
		return -1;
	}
	return 0;
}

/* One completion within the limit: 0 when it is a success (and wr_id's, when
 * wr_id is not 0) */
static int xi_wait(struct xi_ctx *c, uint64_t wr_id, const char *what, struct ibv_wc *wc)
{
	long long end = wire_now_ms() + c->limit_ms;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, wc)) == 0 && wire_now_ms() < end)
		usleep(200);
	if (n != 1) {
		xi_bad("%s: %s", what, n < 0 ? "ibv_poll_cq failed" : "no completion in the limit");
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS || (wr_id && wc->wr_id != wr_id)) {
		xi_bad("%s: completion of wr %" PRIu64 ": %s (vendor error 0x%x)", what, wc->wr_id,
		       ibv_wc_status_str(wc->status), wc->vendor_err);
		return -1;
	}
	return 0;
}

/* One WR of the initiator, local [off, off + len), to the named SRQ: its
 * remote_srqn; a SEND_WITH_IMM through the new API, ibv_wr_set_xrc_srqn */
static int xi_post(struct xi_ctx *c, const struct xi_peer *p, uint64_t id, enum ibv_wr_opcode op,
		   size_t off, uint32_t len, uint64_t raddr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf + off, .length = len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_SEND_WITH_IMM) {
		struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(c->qp);

		ibv_wr_start(qx);
		qx->wr_id = id;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_imm(qx, htobe32(XI_IMM));
		ibv_wr_set_xrc_srqn(qx, p->srqn);
		ibv_wr_set_sge(qx, c->mr->lkey, sge.addr, len);
		errno = ibv_wr_complete(qx);
		if (errno)
			xi_bad("post wr %" PRIu64 " (ibv_wr_complete): %s", id, strerror(errno));
		return errno ? -1 : 0;
	}

	wr.qp_type.xrc.remote_srqn = p->srqn;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = p->rkey;
	wr.imm_data = htobe32(XI_IMM);
	errno = ibv_post_send(c->qp, &wr, &bad);
	if (errno) {
		xi_bad("post wr %" PRIu64 ": %s", id, strerror(errno));
		return -1;
	}
	return 0;
}

static void xi_step(struct xi_ctx *c, const struct xi_peer *p, uint64_t id, enum ibv_wr_opcode op,
		    enum ibv_wc_opcode want, size_t off, uint32_t len, uint64_t raddr,
		    const char *what)
{
	struct ibv_wc wc;

	if (xi_post(c, p, id, op, off, len, raddr) || xi_wait(c, id, what, &wc))
		return;
	if (wc.opcode != want || wc.qp_num != c->qp->qp_num) {
		xi_bad("%s: opcode %d on QP 0x%06x, want %d on 0x%06x", what, wc.opcode, wc.qp_num,
		       want, c->qp->qp_num);
		return;
	}
	printf("%s: %u bytes to SRQ 0x%06x, completed\n", what, len, p->srqn);
}

/* -o: the SEND names an XRC SRQ outside the target QP's domain; the
 * target's HCA refuses it with an invalid request NAK (WR-03), which
 * completes it with IBV_WC_REM_INV_REQ_ERR */
static void xi_active_foreign(struct xi_ctx *c, const struct xi_peer *p)
{
	long long end = wire_now_ms() + c->limit_ms;
	struct ibv_wc wc;
	int n;

	xi_fill(c->buf, SEND_LEN, 1);
	if (xi_post(c, p, 1, IBV_WR_SEND, 0, SEND_LEN, 0))
		return;
	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0 && wire_now_ms() < end)
		usleep(200);
	if (n != 1 || wc.wr_id != 1 || wc.status != IBV_WC_REM_INV_REQ_ERR) {
		xi_bad("SEND to SRQ 0x%06x of another domain: %s, want %s", p->srqn,
		       n != 1 ? "no completion" : ibv_wc_status_str(wc.status),
		       ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
		return;
	}
	printf("SEND to SRQ 0x%06x of another domain: %s, as the target NAKs it\n", p->srqn,
	       ibv_wc_status_str(wc.status));
}

static void xi_active(struct xi_ctx *c, const struct xi_peer *p)
{
	if (c->foreign) {
		xi_active_foreign(c, p);
		return;
	}
	xi_fill(c->buf, SEND_LEN, 1);
	xi_fill(c->buf + SEND_LEN, IMM_LEN, 2);
	xi_fill(c->buf + 2 * SEND_LEN, SEND_LEN, 3);
	xi_step(c, p, 1, IBV_WR_SEND, IBV_WC_SEND, 0, SEND_LEN, 0, "SEND");
	xi_step(c, p, 2, IBV_WR_SEND_WITH_IMM, IBV_WC_SEND, SEND_LEN, IMM_LEN, 0, "SEND_WITH_IMM");
	xi_step(c, p, 3, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 2 * SEND_LEN, SEND_LEN,
		p->addr + 4 * SEND_LEN, "RDMA WRITE");
	xi_step(c, p, 4, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, 3 * SEND_LEN, SEND_LEN,
		p->addr + 5 * SEND_LEN, "RDMA READ");
	if (!xi_check(c->buf + 3 * SEND_LEN, SEND_LEN, 4, "RDMA READ"))
		printf("RDMA READ: each byte as the target wrote it\n");
}

/* The target side's checks once the initiator is done: the two receives
 * from the named SRQ, in order, none from the other */
static void xi_passive_check(struct xi_ctx *c, char *verdict, size_t vl)
{
	static const struct { uint32_t len; unsigned seed; bool imm; } want[2] = {
		{ SEND_LEN, 1, false }, { IMM_LEN, 2, true } };
	int before = xi_failed;
	struct ibv_wc wc;

	for (int i = 0; i < (c->foreign ? 0 : 2); i++) {
		char what[64];

		snprintf(what, sizeof(what), "receive %d", i + 1);
		if (xi_wait(c, 0, what, &wc))
			continue;
		if (wc.wr_id != (uint64_t)(WR_NAMED + i)) {
			xi_bad("%s: wr_id %" PRIu64 " (SRQ %s), want %d of the named SRQ 0x%06x", what,
			       wc.wr_id, wc.wr_id >= WR_NAMED ? "named" : "other", WR_NAMED + i,
			       c->named);
			continue;
		}
		if (wc.opcode != IBV_WC_RECV || wc.byte_len != want[i].len ||
		    !!(wc.wc_flags & IBV_WC_WITH_IMM) != want[i].imm ||
		    (want[i].imm && be32toh(wc.imm_data) != XI_IMM) || wc.qp_num != c->qp->qp_num) {
			xi_bad("%s: opcode %d, %u bytes, flags 0x%x, immediate 0x%08x, qp_num 0x%06x; "
			       "want RECV, %u bytes%s, qp_num 0x%06x (the target QP)", what, wc.opcode,
			       wc.byte_len, wc.wc_flags, be32toh(wc.imm_data), wc.qp_num, want[i].len,
			       want[i].imm ? ", the immediate" : "", c->qp->qp_num);
			continue;
		}
		if (!xi_check(c->buf + (size_t)i * SEND_LEN, want[i].len, want[i].seed, what))
			printf("%s: %u bytes from the named SRQ 0x%06x (wr_id %" PRIu64 ")%s, as sent\n",
			       what, wc.byte_len, c->named, wc.wr_id, want[i].imm ? " with its immediate" : "");
	}
	if (ibv_poll_cq(c->cq, 1, &wc) != 0)
		xi_bad("a completion more: wr_id %" PRIu64 ", %s", wc.wr_id, ibv_wc_status_str(wc.status));
	if (c->foreign)
		printf("no receive: the SRQ of another domain took nothing\n");
	else if (!xi_check(c->buf + 4 * SEND_LEN, SEND_LEN, 3, "memory the RDMA WRITE wrote"))
		printf("memory: the RDMA WRITE's %d bytes as sent\n", SEND_LEN);
	snprintf(verdict, vl, "%s", xi_failed == before ? "ok" : "bad: the target side's checks failed");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "18516", *server = NULL;
	struct xi_ctx c = { .port = 1, .gid_idx = 0, .mtu = IBV_MTU_1024 };
	char line[WIRE_LINE_LEN], hex[33];
	struct xi_peer p;
	long mult = getenv("IBVCT_TIMEOUT_MULT") ? atol(getenv("IBVCT_TIMEOUT_MULT")) : 1;
	int opt, fd = -1, mtu;

	while ((opt = getopt(argc, argv, "d:i:g:p:m:o")) != -1) {
		switch (opt) {
		case 'o': c.foreign = true; break;
		case 'd': dev = optarg; break;
		case 'i': c.port = (uint8_t)atoi(optarg); break;
		case 'g': c.gid_idx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'm':
			mtu = atoi(optarg);
			c.mtu = mtu == 256 ? IBV_MTU_256 : mtu == 512 ? IBV_MTU_512 :
				mtu == 1024 ? IBV_MTU_1024 : mtu == 2048 ? IBV_MTU_2048 :
				mtu == 4096 ? IBV_MTU_4096 : 0;
			if (!c.mtu)
				goto usage;
			break;
		default: goto usage;
		}
	}
	if (optind < argc - 1 || c.port < 1)
		goto usage;
	if (optind == argc - 1)
		server = argv[optind];
	c.limit_ms = 60000LL * (mult > 0 ? mult : 1);

	if (xi_open(&c, dev) || (server ? xi_initiator(&c) : xi_target(&c)))
		goto out;
	fd = server ? wire_tcp_connect(server, port) : wire_tcp_accept(port, c.limit_ms);
	if (fd < 0) {
		fprintf(stderr, "ibvct-wire-xrc: no TCP connection on port %s\n", port);
		goto out;
	}
	wire_gid_hex(c.gid.raw, hex);
	snprintf(line, sizeof(line), "%06x:%06x:%s:%016" PRIx64 ":%08x:%06x", c.qp->qp_num, c.psn,
		 hex, (uint64_t)(uintptr_t)c.buf, c.mr->rkey, server ? 0 : c.named);
	printf("local:  QPN 0x%06x PSN 0x%06x GID %s\n", c.qp->qp_num, c.psn, hex);
	if (!server)
		printf("srqn: named 0x%06x other 0x%06x tgt 0x%06x\n", c.named, c.srqn[0],
		       c.qp->qp_num);
	if (wire_line_send(fd, line) || wire_line_recv(fd, line, c.limit_ms) || xi_parse_peer(line, &p)) {
		fprintf(stderr, "ibvct-wire-xrc: the address exchange failed\n");
		goto out;
	}
	wire_gid_hex(p.gid.raw, hex);
	printf("remote: QPN 0x%06x PSN 0x%06x GID %s\n", p.qpn, p.psn, hex);
	if (xi_connect_qp(&c, &p, !server))
		goto out;
	if (wire_line_send(fd, "ready") || wire_line_recv(fd, line, c.limit_ms) || strcmp(line, "ready")) {
		fprintf(stderr, "ibvct-wire-xrc: the peer never got ready\n");
		goto out;
	}
	if (server) {
		xi_active(&c, &p);
		if (wire_line_send(fd, xi_failed ? "failed" : "done") ||
		    wire_line_recv(fd, line, c.limit_ms))
			xi_bad("no verdict from the target side");
		else if (strcmp(line, "ok"))
			xi_bad("the target side: %s", line);
		else
			printf("the target side: its receives and memory as expected\n");
	} else {
		char verdict[WIRE_LINE_LEN];

		if (wire_line_recv(fd, line, c.limit_ms)) {
			xi_bad("the initiator never said it was done");
		} else {
			if (strcmp(line, "done"))
				xi_bad("the initiator: %s", line);
			/* what arrived, checked whatever the initiator saw */
			xi_passive_check(&c, verdict, sizeof(verdict));
			if (wire_line_send(fd, verdict))
				xi_bad("cannot tell the initiator the verdict");
		}
	}
	if (!xi_failed && c.foreign)
		printf("XRC SEND to SRQ 0x%06x of another domain: refused, nothing received, all as "
		       "expected\n", server ? p.srqn : c.named);
	else if (!xi_failed)
		printf("XRC SEND, SEND_WITH_IMM, RDMA WRITE and READ to SRQ 0x%06x: all as expected\n",
		       server ? p.srqn : c.named);
	goto done;
out:
	xi_failed = 1;
done:
	if (fd >= 0)
		close(fd);
	xi_close(&c);
	return xi_failed;
usage:
	fprintf(stderr, "usage: ibvct-wire-xrc [-d DEV] [-i PORT] [-g GIDIDX] [-p TCPPORT] [-m MTU] [-o] "
		"[SERVER]\n");
	return 2;
}
