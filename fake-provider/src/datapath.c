/* SPDX-License-Identifier: MIT */
/*
 * The data path, packet based: the requester (post_send) checks and gathers
 * a WR into a struct fp_packet, the fabric hands it to the destination QP's
 * responder (fp__responder), which executes it and answers with an ack,
 * response or NAK; the requester then completes the WQE. Only the fabric
 * knows how packets travel, so moving it into a daemon changes nothing here.
 *
 * WR-02: a WR is read member by member, and qp_type.xrc.remote_srqn (the
 * first byte past the 72-byte pre-XRC ibv_send_wr) only for XRC_SEND QPs.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fp_provider.h"

/* ---- memory checks -------------------------------------------------------- */
static bool fp_range_in(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
{
	return addr >= base && len <= size && addr - base <= size - len;
}

/* A local SGE: lkey of this PD, inside the region, with LOCAL_WRITE when
 * the device writes there. Returns the host pointer or NULL. */
static char *fp_local_sge(struct fp_fabric *fab, struct fp_pd *pd, const struct ibv_sge *sge,
			  bool write)
{
	struct fp_mr *mr = fp_fabric_mr_by_lkey(fab, sge->lkey);

	if (!mr || mr->pd != pd || (write && !(mr->access & IBV_ACCESS_LOCAL_WRITE)) ||
	    !fp_range_in(sge->addr, sge->length, mr->iova, mr->length))
		return NULL;
	return mr->addr + (sge->addr - mr->iova);
}

/* A remote access: rkey of the responder's PD, access granted by both the
 * region and the QP, inside the region. */
static char *fp_remote(struct fp_fabric *fab, struct fp_pd *pd, int qp_access,
		       uint64_t addr, uint32_t rkey, uint64_t len, int need)
{
	struct fp_mr *mr = fp_fabric_mr_by_rkey(fab, rkey);

	if (!mr || mr->pd != pd || !(mr->access & need) || !(qp_access & need) ||
	    !fp_range_in(addr, len, mr->iova, mr->length))
		return NULL;
	return mr->addr + (addr - mr->iova);
}

static uint32_t fp_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 4096u;
}

/* ---- responder -------------------------------------------------------------- */
struct fp_rx {			/* where a message lands */
	struct fp_pd *pd;
	struct fp_cq *cq;
	struct fp_rq *rq;
	struct fp_srq *srq;
};

static void fp_rx_complete(struct fp_rqp *d, struct fp_rx *rx, const struct fp_packet *pkt,
			   uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
			   uint32_t byte_len)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = st;
	wc.opcode = op;
	wc.byte_len = byte_len;
	wc.qp_num = d->qpn;
	wc.src_qp = pkt->src_qpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	wc.pkey_index = d->attr.pkey_index;
	if (pkt->op == FP_PKT_SEND_IMM || pkt->op == FP_PKT_WRITE_IMM) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = pkt->imm;
	}
	if (d->type == IBV_QPT_UD && pkt->grh)
		wc.wc_flags |= IBV_WC_GRH;
	fp__cq_push(rx->cq, &wc, NULL, 0, pkt->solicited);
	if (rx->srq)
		fp__srq_consumed(rx->srq);
}

/* A receive-side local error: error CQE, the QP to ERR (not UD). */
static void fp_rx_local_error(struct fp_rqp *d, struct fp_rx *rx, const struct fp_packet *pkt,
			      uint64_t wr_id, enum ibv_wc_status st)
{
	fp_rx_complete(d, rx, pkt, wr_id, st, IBV_WC_RECV, 0);
	if (d->type != IBV_QPT_UD)
		fp__qp_set_error(d);
}

/* SEND: scatter [GRH (UD)] + payload into the next receive WQE. */
static enum fp_ack fp_rx_send(struct fp_rqp *d, struct fp_rx *rx, const struct fp_packet *pkt)
{
	uint32_t hdr = d->type == IBV_QPT_UD ? FP_UD_GRH_LEN : 0;
	/* Receive WQEs are checked against the PD of the queue that holds them. */
	struct fp_pd *wpd = rx->srq ? rx->srq->pd : rx->pd;
	uint32_t total = hdr + pkt->len, room = 0, done = 0;
	struct fp_rwqe *w;
	int i;

	if (!fp__rq_pop(rx->rq, &w))
		return FP_NAK_RNR;
	for (i = 0; i < w->num_sge; i++) {
		if (!fp_local_sge(d->fab, wpd, &w->sge[i], true)) {
			fp_rx_local_error(d, rx, pkt, w->wr_id, IBV_WC_LOC_PROT_ERR);
			return FP_NAK_REM_OP;
		}
		room += w->sge[i].length;
	}
	if (room < total) {
		fp_rx_local_error(d, rx, pkt, w->wr_id, IBV_WC_LOC_LEN_ERR);
		return FP_NAK_INV_REQ;
	}
	for (i = 0; i < w->num_sge && done < total; i++) {
		char *p = fp_local_sge(d->fab, wpd, &w->sge[i], true);
		uint32_t n = w->sge[i].length < total - done ? w->sge[i].length : total - done;
		uint32_t k;

		for (k = 0; k < n; ) {
			uint32_t off = done + k, chunk;

			if (off < hdr) {
				/* IB UD: the first 40 bytes hold the GRH, if one came. */
				chunk = hdr - off < n - k ? hdr - off : n - k;
				if (pkt->grh) {
					unsigned char grh[FP_UD_GRH_LEN];

					memset(grh, 0, sizeof(grh));
					grh[0] = 0x60;		/* IPVer 6 */
					grh[6] = 0x1b;		/* next header: IBA */
					grh[7] = 64;		/* hop limit */
					memcpy(grh + 8, &pkt->sgid, 16);
					memcpy(grh + 24, &pkt->dgid, 16);
					memcpy(p + k, grh + off, chunk);
				}
			} else {
				chunk = n - k;
				memcpy(p + k, (const char *)pkt->payload + (off - hdr), chunk);
			}
			k += chunk;
		}
		done += n;
	}
	fp_rx_complete(d, rx, pkt, w->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, total);
	return FP_ACK_OK;
}

static enum fp_ack fp_rx_write(struct fp_rqp *d, struct fp_rx *rx, const struct fp_packet *pkt)
{
	char *dst = NULL;
	struct fp_rwqe *w;

	if (pkt->len) {		/* a zero-length write checks no key */
		dst = fp_remote(d->fab, rx->pd, (int)d->attr.qp_access_flags, pkt->remote_addr,
				pkt->rkey, pkt->len, IBV_ACCESS_REMOTE_WRITE);
		if (!dst)
			return FP_NAK_REM_ACCESS;
	}
	if (pkt->op == FP_PKT_WRITE_IMM && !rx->rq->count)
		return FP_NAK_RNR;
	if (pkt->len)
		memcpy(dst, pkt->payload, pkt->len);
	if (pkt->op == FP_PKT_WRITE_IMM) {
		fp__rq_pop(rx->rq, &w);
		fp_rx_complete(d, rx, pkt, w->wr_id, IBV_WC_SUCCESS,
			       IBV_WC_RECV_RDMA_WITH_IMM, pkt->len);
	}
	return FP_ACK_OK;
}

static enum fp_ack fp_rx_read(struct fp_rqp *d, struct fp_rx *rx, const struct fp_packet *pkt,
			      struct fp_response *resp)
{
	char *src = NULL;

	if (pkt->len) {
		src = fp_remote(d->fab, rx->pd, (int)d->attr.qp_access_flags, pkt->remote_addr,
				pkt->rkey, pkt->len, IBV_ACCESS_REMOTE_READ);
		if (!src)
			return FP_NAK_REM_ACCESS;
		resp->data = malloc(pkt->len);
		if (!resp->data)
			return FP_NAK_REM_OP;
		memcpy(resp->data, src, pkt->len);
	}
	resp->len = pkt->len;
	return FP_ACK_OK;
}

static enum fp_ack fp_rx_atomic(struct fp_rqp *d, struct fp_rx *rx, const struct fp_packet *pkt,
				struct fp_response *resp)
{
	uint64_t orig, val;
	char *p;

	if (pkt->remote_addr % 8)
		return FP_NAK_INV_REQ;		/* atomics need 8-byte alignment */
	p = fp_remote(d->fab, rx->pd, (int)d->attr.qp_access_flags, pkt->remote_addr,
		      pkt->rkey, 8, IBV_ACCESS_REMOTE_ATOMIC);
	if (!p)
		return FP_NAK_REM_ACCESS;
	memcpy(&orig, p, 8);
	val = pkt->op == FP_PKT_CMP_SWAP ? (orig == pkt->compare_add ? pkt->swap : orig)
					 : orig + pkt->compare_add;
	memcpy(p, &val, 8);
	resp->atomic_orig = orig;
	resp->len = 8;
	return FP_ACK_OK;
}

static bool fp_types_match(enum ibv_qp_type src, enum ibv_qp_type dst)
{
	return src == IBV_QPT_XRC_SEND ? dst == IBV_QPT_XRC_RECV : src == dst;
}

void fp__responder(struct fp_rqp *d, const struct fp_packet *pkt, struct fp_response *resp)
{
	bool reliable = pkt->src_type == IBV_QPT_RC || pkt->src_type == IBV_QPT_XRC_SEND;
	struct fp_rx rx = { 0 };
	enum fp_ack st;

	/* Not able to receive, or the wrong transport: the packet is lost. */
	if ((d->state != IBV_QPS_RTR && d->state != IBV_QPS_RTS && d->state != IBV_QPS_SQD) ||
	    !fp_types_match(pkt->src_type, d->type)) {
		resp->status = reliable ? FP_ACK_NO_PATH : FP_ACK_DROPPED;
		return;
	}
	if (d->type == IBV_QPT_UD && pkt->qkey != d->attr.qkey) {
		resp->status = FP_ACK_DROPPED;
		return;
	}
	/* An XRC target has no queues or CQs of its own: it receives through
	 * the SRQ the packet names and completes on that SRQ's CQ. */
	if (d->type == IBV_QPT_XRC_RECV) {	/* @rule SRQX-13 */
		/* WR-03: the SRQ named by the packet, within this QP's domain. */
		rx.srq = fp__quirk(FP_Q_XRC_IGNORE_REMOTE_SRQN)
			 ? fp_fabric_xdom_first_srq(d->fab, d->dom)
			 : fp_fabric_srq_find(d->fab, pkt->xrc_srqn);
		if (!rx.srq || rx.srq->type != IBV_SRQT_XRC || rx.srq->dom != d->dom) {	/* @rule WR-03 */
			resp->status = FP_NAK_INV_REQ;
			return;
		}
		rx.pd = rx.srq->pd;
		rx.cq = rx.srq->cq;			/* SRQX-13 */
		rx.rq = &rx.srq->rq;
	} else {
		rx.pd = d->pd;
		rx.cq = d->rcq;
		rx.srq = d->srq;
		rx.rq = d->srq ? &d->srq->rq : &d->rq;
	}

	switch (pkt->op) {
	case FP_PKT_SEND:
	case FP_PKT_SEND_IMM:
		st = fp_rx_send(d, &rx, pkt);
		break;
	case FP_PKT_WRITE:
	case FP_PKT_WRITE_IMM:
		st = fp_rx_write(d, &rx, pkt);
		break;
	case FP_PKT_READ:
		st = fp_rx_read(d, &rx, pkt, resp);
		break;
	default:
		st = fp_rx_atomic(d, &rx, pkt, resp);
		break;
	}
	/* Unreliable transports never answer: errors are silent drops. An RNR
	 * NAK carries the responder's timer: the requester waits that long. */
	resp->status = reliable || st == FP_ACK_OK ? st : FP_ACK_DROPPED;
	resp->rnr_timer = d->attr.min_rnr_timer;
}

/* ---- requester ---------------------------------------------------------------- */
static enum ibv_wc_opcode fp_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

/*
 * The opcodes this device carries per QP type (QPX-10 lists those an
 * XRC_SEND QP may carry on a device that has them). BIND_MW, LOCAL_INV and
 * SEND_WITH_INV act on a memory window or an invalidatable rkey: the fake
 * device has neither (no alloc_mw op, no IBV_DEVICE_MEM_WINDOW*, max_mw 0,
 * no fast-registration MRs), so they are refused on every type at post
 * time with EINVAL and bad_wr, the answer a driver gives an opcode it does
 * not build (rdma-core v44.0 providers/mlx5/qp.c:833 _mlx5_post_send). No
 * suite posts them: on a device that has memory windows they belong to a
 * test that binds one first.
 */
static bool fp_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (type == IBV_QPT_XRC_SEND)	/* @rule QPX-10 */
			return true;
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

static enum ibv_wc_status fp_ack_status(enum fp_ack a)
{
	switch (a) {
	case FP_ACK_OK:
	case FP_ACK_DROPPED:
		return IBV_WC_SUCCESS;
	case FP_NAK_RNR:
		return IBV_WC_RNR_RETRY_EXC_ERR;	/* rnr_retry used up at once */
	case FP_NAK_REM_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case FP_NAK_INV_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case FP_NAK_REM_OP:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_RETRY_EXC_ERR;
	}
}

/* The fields of one WR, read one by one (WR-02). */
struct fp_swr {
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t imm;
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	struct ibv_ah *ah;
	uint32_t remote_qpn, remote_qkey;
	uint32_t remote_srqn;
};

static void fp_swr_read(const struct fp_rqp *r, const struct ibv_send_wr *wr, struct fp_swr *s)
{
	memset(s, 0, sizeof(*s));
	s->wr_id = wr->wr_id;
	s->sg_list = wr->sg_list;
	s->num_sge = wr->num_sge;
	s->opcode = wr->opcode;
	s->send_flags = wr->send_flags;
	s->imm = wr->imm_data;
	switch (s->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		s->remote_addr = wr->wr.atomic.remote_addr;
		s->rkey = wr->wr.atomic.rkey;
		s->compare_add = wr->wr.atomic.compare_add;
		s->swap = wr->wr.atomic.swap;
		break;
	default:
		if (r->type == IBV_QPT_UD) {
			s->ah = wr->wr.ud.ah;
			s->remote_qpn = wr->wr.ud.remote_qpn;
			s->remote_qkey = wr->wr.ud.remote_qkey;
		} else {
			s->remote_addr = wr->wr.rdma.remote_addr;
			s->rkey = wr->wr.rdma.rkey;
		}
		break;
	}
	if (r->type == IBV_QPT_XRC_SEND)	/* @rule WR-02 WR-03 */
		s->remote_srqn = wr->qp_type.xrc.remote_srqn;
	/* The quirk's driver sends an opcode XRC does not allow as a SEND. */
	if (r->type == IBV_QPT_XRC_SEND && fp__quirk(FP_Q_XRC_SEND_ANY_OPCODE) &&
	    !fp_opcode_ok(r->type, s->opcode))
		s->opcode = IBV_WR_SEND;
	if (r->type == IBV_QPT_XRC_SEND && fp__quirk(FP_Q_SEND_READS_PAST_80))
		(void)*(struct ibv_mw *const volatile *)&wr->bind_mw.mw;	/* byte 80: faults */
	else if (fp__quirk(FP_Q_SEND_READS_PAST_72))
		/* The quirk: touch byte 72 whatever the type (a guard page faults). */
		s->remote_srqn = *(const volatile uint32_t *)&wr->qp_type.xrc.remote_srqn;
}

static void fp_sq_complete(struct fp_rqp *r, const struct fp_swr *s, uint64_t seq,
			   enum ibv_wc_status st, uint32_t byte_len)
{
	bool signaled = r->sq_sig_all || (s->send_flags & IBV_SEND_SIGNALED);
	struct ibv_wc wc;

	if (st == IBV_WC_SUCCESS && !signaled) {
		/* Retired with the next signaled CQE that is polled. */
		return;
	}
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = s->wr_id;
	wc.status = st;
	wc.opcode = fp_wc_opcode(s->opcode);
	wc.byte_len = byte_len;
	wc.qp_num = r->qpn;
	fp__cq_push(r->scq, &wc, r, seq, false);
}

/* Immediate checks: failing ones return an errno and post nothing. */
static int fp_swr_check(const struct fp_rqp *r, const struct fp_swr *s, uint64_t *len)
{
	bool is_inline = s->send_flags & IBV_SEND_INLINE;
	int i;

	if (!fp_opcode_ok(r->type, s->opcode))	/* @rule QPX-10 */
		return EINVAL;
	if (s->num_sge < 0 || (uint32_t)s->num_sge > r->cap.max_send_sge ||
	    (s->num_sge && !s->sg_list))
		return EINVAL;
	if (r->type == IBV_QPT_UD && !s->ah)
		return EINVAL;
	if (r->sq_posted - r->sq_retired >= r->cap.max_send_wr)
		return ENOMEM;
	*len = 0;
	for (i = 0; i < s->num_sge; i++)
		*len += s->sg_list[i].length;
	if (is_inline && (*len > r->cap.max_inline_data ||
			  (s->opcode != IBV_WR_SEND && s->opcode != IBV_WR_SEND_WITH_IMM &&
			   s->opcode != IBV_WR_RDMA_WRITE &&
			   s->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)))
		return EINVAL;
	return 0;
}

/* Gather (or, for READ/atomics, check) the local buffers. */
static enum ibv_wc_status fp_swr_gather(struct fp_rqp *r, const struct fp_swr *s,
					uint64_t len, char *buf)
{
	bool to_local = s->opcode == IBV_WR_RDMA_READ ||
			s->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			s->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	uint64_t off = 0;
	int i;

	if ((s->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	     s->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) && len != 8)
		return IBV_WC_LOC_LEN_ERR;
	for (i = 0; i < s->num_sge; i++) {
		const struct ibv_sge *g = &s->sg_list[i];
		const char *p;

		if (s->send_flags & IBV_SEND_INLINE) {
			p = (const char *)(uintptr_t)g->addr;	/* no key for inline data */
		} else {
			p = fp_local_sge(r->fab, r->pd, g, to_local);
			if (!p)
				return IBV_WC_LOC_PROT_ERR;
		}
		if (!to_local && g->length)
			memcpy(buf + off, p, g->length);
		off += g->length;
	}
	return IBV_WC_SUCCESS;
}

/* Scatter a READ response or an atomic's original value. */
static void fp_swr_scatter(struct fp_rqp *r, const struct fp_swr *s, const char *data)
{
	uint64_t off = 0;
	int i;

	for (i = 0; i < s->num_sge; i++) {
		char *p = fp_local_sge(r->fab, r->pd, &s->sg_list[i], true);

		if (p && s->sg_list[i].length)
			memcpy(p, data + off, s->sg_list[i].length);
		off += s->sg_list[i].length;
	}
}

static void fp_swr_packet(struct fp_rqp *r, const struct fp_swr *s, struct fp_packet *pkt)
{
	const struct fp_dev_spec *spec = r->ctx->spec;

	memset(pkt, 0, sizeof(*pkt));
	switch (s->opcode) {
	case IBV_WR_SEND:		pkt->op = FP_PKT_SEND; break;
	case IBV_WR_SEND_WITH_IMM:	pkt->op = FP_PKT_SEND_IMM; break;
	case IBV_WR_RDMA_WRITE:		pkt->op = FP_PKT_WRITE; break;
	case IBV_WR_RDMA_WRITE_WITH_IMM: pkt->op = FP_PKT_WRITE_IMM; break;
	case IBV_WR_RDMA_READ:		pkt->op = FP_PKT_READ; break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:	pkt->op = FP_PKT_CMP_SWAP; break;
	default:			pkt->op = FP_PKT_FETCH_ADD; break;
	}
	pkt->src_type = r->type;
	pkt->src_qpn = r->qpn;
	pkt->psn = r->sq_psn++ & 0xffffff;
	pkt->remote_addr = s->remote_addr;
	pkt->rkey = s->rkey;
	pkt->imm = s->imm;
	pkt->solicited = s->send_flags & IBV_SEND_SOLICITED;
	pkt->compare_add = s->compare_add;
	pkt->swap = s->swap;
	pkt->port = r->attr.port_num;
	if (pkt->port >= 1 && pkt->port <= spec->nports)
		pkt->slid = spec->port[pkt->port - 1].attr.lid;
	if (r->type == IBV_QPT_UD) {
		const struct ibv_ah_attr *ah = &to_fp_ah(s->ah)->attr;

		pkt->dst_qpn = s->remote_qpn;
		/* A qkey with the high bit set means "use the QP's own". */
		pkt->qkey = (s->remote_qkey & 0x80000000u) ? r->attr.qkey : s->remote_qkey;
		pkt->sl = ah->sl;
		pkt->port = ah->port_num;
		pkt->slid = spec->port[ah->port_num - 1].attr.lid;
		if (ah->is_global) {
			pkt->grh = true;
			if (ah->grh.sgid_index < FP_MAX_GIDS)
				pkt->sgid = spec->port[ah->port_num - 1].gid[ah->grh.sgid_index];
			pkt->dgid = ah->grh.dgid;
		}
	} else {
		pkt->dst_qpn = r->attr.dest_qp_num;
		pkt->sl = r->attr.ah_attr.sl;
		if (r->type == IBV_QPT_XRC_SEND)
			pkt->xrc_srqn = s->remote_srqn;
	}
}

/* ---- retransmission ------------------------------------------------------------ */
/*
 * A reliable request that reaches no QP able to receive (the peer is not in
 * RTR yet, or gone: the packet is lost) is sent again when the local ACK
 * timeout (4.096 us * 2^timeout) runs out, retry_cnt times; one answered by
 * an RNR NAK, after the responder's RNR timer, rnr_retry times (7: without
 * end). Timeout 0 means no timer: the WQE waits until the QP leaves RTS.
 * Meanwhile post_send has returned, and the WQE and every later one of its
 * QP wait here, in order (IBA vol 1 9.7.6.1: ACK timer and retries; 9.7.5.2.8
 * and o10-2: RNR NAK, with the responder's timer; C9-141: 7 = infinite).
 * Those due are served at the start of every op of this process and by the
 * transport's progress thread when the application calls no verb.
 */
struct fp_swqe {
	struct fp_link link;		/* in the QP's sq_wait */
	struct fp_swr s;
	uint64_t seq, len;
	enum ibv_wc_status local;	/* a local error found at post time */
	char *buf;			/* the gathered payload */
	struct fp_packet pkt;
	long long due;			/* CLOCK_MONOTONIC ns; 0: once the one ahead is done */
	int retry_left, rnr_left;	/* -1: without end */
};

/* The QPs of this process that have waiting WQEs, and the earliest due time. */
static struct fp_link fp_sq_retry_qps = { &fp_sq_retry_qps, &fp_sq_retry_qps };
static long long fp_sq_due;
static pid_t fp_sq_pid;

/* IBA vol 1 table 45: the RNR NAK timer field, in microseconds. */
static const uint32_t fp_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

static long long fp_dp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void fp__sq_init(struct fp_rqp *r)
{
	fp_list_init(&r->sq_wait);
	fp_list_init(&r->retry_link);
}

static void fp_swqe_free(struct fp_swqe *w)
{
	free(w->buf);
	free(w);
}

/* Complete the WQE with st (unless a quiet success) and retire its buffers. */
static void fp_swqe_complete(struct fp_rqp *r, struct fp_swqe *w, enum ibv_wc_status st,
			     const struct fp_response *resp)
{
	if (st == IBV_WC_SUCCESS && resp && resp->status == FP_ACK_OK) {
		if (w->pkt.op == FP_PKT_READ && resp->data)
			fp_swr_scatter(r, &w->s, resp->data);
		else if (w->pkt.op == FP_PKT_CMP_SWAP || w->pkt.op == FP_PKT_FETCH_ADD)
			fp_swr_scatter(r, &w->s, (const char *)&resp->atomic_orig);
	}
	fp_sq_complete(r, &w->s, w->seq, st, st == IBV_WC_SUCCESS ? (uint32_t)w->len : 0);
}

/*
 * One try of the WQE: true when it is done (completed; an error moved the
 * QP to ERR), false when it must wait (w->due set).
 */
static bool fp_swqe_try(struct fp_rqp *r, struct fp_swqe *w)
{
	struct fp_response resp = { 0 };
	enum ibv_wc_status st = w->local;
	long long wait_ns = -1;

	if (st == IBV_WC_SUCCESS) {
		w->pkt.payload = w->buf;
		fp_fabric_deliver(r->ctx, &w->pkt, &resp);
		st = fp_ack_status(resp.status);
		if (resp.status == FP_ACK_NO_PATH && (w->retry_left || !r->attr.timeout)) {
			/* timeout 0: no ACK timer, the request is never given up */
			wait_ns = r->attr.timeout ? 4096LL << r->attr.timeout : 0;
			if (w->retry_left > 0 && r->attr.timeout)
				w->retry_left--;
		} else if (resp.status == FP_NAK_RNR && w->rnr_left) {
			wait_ns = 1000LL * fp_rnr_us[resp.rnr_timer & 31];
			if (w->rnr_left > 0)
				w->rnr_left--;
		}
	}
	if (wait_ns >= 0) {
		free(resp.data);
		w->due = wait_ns ? fp_dp_now() + wait_ns : LLONG_MAX;
		return false;
	}
	fp_swqe_complete(r, w, st, &resp);
	free(resp.data);
	if (st != IBV_WC_SUCCESS)
		fp__qp_set_error(r);		/* later WQEs are flushed */
	return true;
}

static void fp_sq_due_update(void)
{
	struct fp_link *p, *t;
	long long due = 0;

	fp_list_for_each_safe(p, t, &fp_sq_retry_qps) {
		struct fp_rqp *r = fp_container_of(p, struct fp_rqp, retry_link);
		struct fp_swqe *w = fp_container_of(r->sq_wait.next, struct fp_swqe, link);

		if (w->due && w->due != LLONG_MAX && (!due || w->due < due))
			due = w->due;
	}
	__atomic_store_n(&fp_sq_due, due, __ATOMIC_RELEASE);
}

/* After fork the list names the parent's QPs, which this process must not
 * send from: start empty. */
static void fp_sq_own(void)
{
	pid_t pid = getpid();

	if (fp_sq_pid == pid)
		return;
	fp_list_init(&fp_sq_retry_qps);
	fp_sq_due = 0;
	fp_sq_pid = pid;
}

static void fp_sq_wait_add(struct fp_rqp *r, struct fp_swqe *w)
{
	fp_sq_own();
	if (fp_list_empty(&r->sq_wait))
		fp_list_add_tail(&fp_sq_retry_qps, &r->retry_link);
	fp_list_add_tail(&r->sq_wait, &w->link);
}

/* Serve one QP's waiting WQEs that are due, in order. */
static void fp_sq_serve(struct fp_rqp *r, long long now)
{
	while (!fp_list_empty(&r->sq_wait)) {
		struct fp_swqe *w = fp_container_of(r->sq_wait.next, struct fp_swqe, link);

		if (w->due > now)
			return;
		if (r->state != IBV_QPS_RTS && r->state != IBV_QPS_SQD) {
			/* ERR flushes the queue itself; a reset or destroy drops it */
			return;
		}
		fp_list_del(&w->link);
		if (!fp_swqe_try(r, w)) {
			/* back to the head: it keeps its place */
			w->link.next = r->sq_wait.next;
			w->link.prev = &r->sq_wait;
			r->sq_wait.next->prev = &w->link;
			r->sq_wait.next = &w->link;
			return;
		}
		fp_swqe_free(w);
	}
	fp_list_del(&r->retry_link);
	if (r->state == IBV_QPS_SQD && r->attr.en_sqd_async_notify)
		fp__qp_event(r, IBV_EVENT_SQ_DRAINED);
}

long long fp__sq_progress(void)
{
	static bool busy;
	struct fp_link *p, *t;
	long long now;

	if (fp_list_empty(&fp_sq_retry_qps))
		return 0;
	fp_sq_own();
	if (busy || fp_list_empty(&fp_sq_retry_qps))
		return 0;
	busy = true;			/* a delivery serves the inbox: no re-entry */
	now = fp_dp_now();
	fp_list_for_each_safe(p, t, &fp_sq_retry_qps)
		fp_sq_serve(fp_container_of(p, struct fp_rqp, retry_link), now);
	fp_sq_due_update();
	busy = false;
	return __atomic_load_n(&fp_sq_due, __ATOMIC_ACQUIRE);
}

long long fp__sq_next_due(void)
{
	return __atomic_load_n(&fp_sq_due, __ATOMIC_ACQUIRE);
}

/* The QP leaves RTS: to ERR (complete: flushed, as WR_FLUSH_ERR), or to
 * RESET or destroyed (dropped, no completion). */
void fp__sq_flush(struct fp_rqp *r, bool complete)
{
	while (!fp_list_empty(&r->sq_wait)) {
		struct fp_swqe *w = fp_container_of(r->sq_wait.next, struct fp_swqe, link);

		fp_list_del(&w->link);
		if (complete)
			fp_sq_complete(r, &w->s, w->seq, IBV_WC_WR_FLUSH_ERR, 0);
		fp_swqe_free(w);
	}
	if (!fp_list_empty(&r->retry_link))
		fp_list_del(&r->retry_link);
	fp_sq_due_update();
}

static int fp_send_one(struct fp_rqp *r, const struct ibv_send_wr *wr)
{
	const struct fp_dev_spec *spec = r->ctx->spec;
	struct fp_swqe w0, *w = &w0;
	int err;

	memset(w, 0, sizeof(*w));
	fp_swr_read(r, wr, &w->s);
	err = fp_swr_check(r, &w->s, &w->len);
	if (err)
		return err;
	w->seq = ++r->sq_posted;
	if (r->state == IBV_QPS_ERR || r->state == IBV_QPS_SQE) {
		fp_sq_complete(r, &w->s, w->seq, IBV_WC_WR_FLUSH_ERR, 0);
		return 0;
	}
	if ((spec->port[0].attr.max_msg_sz && w->len > spec->port[0].attr.max_msg_sz) ||
	    (r->type == IBV_QPT_UD &&
	     w->len > fp_mtu_bytes(spec->port[to_fp_ah(w->s.ah)->attr.port_num - 1].attr.active_mtu)))
		w->local = IBV_WC_LOC_LEN_ERR;
	if (w->local == IBV_WC_SUCCESS && w->len) {
		w->buf = malloc(w->len);
		if (!w->buf) {
			r->sq_posted--;
			return ENOMEM;
		}
	}
	if (w->local == IBV_WC_SUCCESS)
		w->local = fp_swr_gather(r, &w->s, w->len, w->buf);
	if (w->local == IBV_WC_SUCCESS) {
		fp_swr_packet(r, &w->s, &w->pkt);
		w->pkt.len = (uint32_t)w->len;
	}
	w->retry_left = r->attr.retry_cnt;
	w->rnr_left = r->attr.rnr_retry == 7 ? -1 : r->attr.rnr_retry;
	/* Behind waiting WQEs it waits too: a send queue completes in order. */
	if (fp_list_empty(&r->sq_wait) && fp_swqe_try(r, w)) {
		free(w->buf);
		return 0;
	}
	w = malloc(sizeof(*w));
	if (!w) {
		/* nowhere to keep it: it fails now, as a lost request would later */
		fp_swqe_complete(r, &w0, IBV_WC_RETRY_EXC_ERR, NULL);
		free(w0.buf);
		fp__qp_set_error(r);
		return 0;
	}
	*w = w0;
	fp_sq_wait_add(r, w);
	fp_sq_due_update();
	return 0;
}

int fp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fp_rqp *r = h->real;
	int err, n = 0;

	err = fp__op_begin(FP_OP_POST_SEND);
	if (err)
		goto err_bad;
	/* QPX-12: a target QP (created or opened) has no send queue. */
	if (r->type == IBV_QPT_XRC_RECV || h->opened) {	/* @rule QPX-12 */
		if (fp__quirk(FP_Q_XRC_POST_MISSING_QUEUE))
			goto out;		/* the quirk: taken, and gone nowhere */
		err = EINVAL;
		goto err_bad;
	}
	/* RESET, INIT and RTR cannot send. */
	if (r->state == IBV_QPS_RESET || r->state == IBV_QPS_INIT || r->state == IBV_QPS_RTR) {
		err = EINVAL;
		goto err_bad;
	}
	for (; wr; wr = wr->next, n++) {
		err = fp_send_one(r, wr);
		if (err)
			goto err_bad;
	}
	goto out;

err_bad:
	*bad_wr = wr;
out:
	fp__op_end(h->ctx, FP_OP_POST_SEND, FP_SUBJ_QP, h, err, "qpn=%u posted=%d",
		   r->qpn, n);
	return err;
}

int fp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct fp_qp *h = to_fp_qp(qp);
	struct fp_rqp *r = h->real;
	int err, n = 0;

	err = fp__op_begin(FP_OP_POST_RECV);
	if (err)
		goto err_bad;
	/* QPX-11: XRC QPs (created or opened) have no receive queue. */
	if (r->type == IBV_QPT_XRC_SEND || r->type == IBV_QPT_XRC_RECV || h->opened) {	/* @rule QPX-11 */
		if (fp__quirk(FP_Q_XRC_POST_MISSING_QUEUE))
			goto out;		/* the quirk: taken, and gone nowhere */
		err = EINVAL;
		goto err_bad;
	}
	/* SRQ QPs receive through the SRQ's queue; RESET cannot receive. */
	if (r->srq || r->state == IBV_QPS_RESET) {
		err = EINVAL;
		goto err_bad;
	}
	for (; wr; wr = wr->next, n++) {
		err = fp__rq_post(&r->rq, wr);
		if (err)
			goto err_bad;
	}
	if (r->state == IBV_QPS_ERR)
		fp__qp_flush_rq(r);		/* posted on an ERR QP: flushed at once */
	goto out;

err_bad:
	*bad_wr = wr;
	if (!err)
		err = EINVAL;
out:
	fp__op_end(h->ctx, FP_OP_POST_RECV, FP_SUBJ_QP, h, err, "qpn=%u posted=%d",
		   r->qpn, n);
	return err;
}
