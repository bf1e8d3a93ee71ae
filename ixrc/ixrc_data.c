// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The data path of the soft XRC device: posting, delivery between QPs of
 * the device, completions and their events. Everything runs in the poster's
 * process context, under dev->lock: a send copies its data from the
 * sender's registered pages (or, inline, from its user memory) into a
 * packet, finds the destination QP by number and a receive on its RQ, its
 * SRQ, or (XRC) the SRQ named by remote_srqn within the target QP's XRCD,
 * and copies the data into the receiver's pinned pages. With no receive
 * posted an RC or XRC packet is RNR NAKed and waits, keeping each sender's
 * order: it is delivered by the first post_recv or post_srq_recv to that
 * queue, and retried when the responder's RNR timer (its min_rnr_timer)
 * runs out, rnr_retry times; one more NAK then completes it with
 * IB_WC_RNR_RETRY_EXC_ERR and the sender's QP goes to the error state
 * (rnr_retry 7: it waits for ever). That is the requester of IBA vol. 1
 * 9.7.5.2.8 (RNR NAK), as rxe does it (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_comp.c, rxe_completer's COMPST_RNR_RETRY:
 * a count, 7 for ever, then IB_WC_RNR_RETRY_EXC_ERR); the timer values are
 * those the IB_RNR_TIMER_* names give (include/rdma/ib_verbs.h).
 */
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/uaccess.h>

#include "ixrc.h"

#define IXRC_GRH_LEN	40

/* ------------------------------------------------------------------ */
/* CQ                                                                   */

/*
 * A CQ's ring has a lock of its own (cq->lock), taken alone by poll_cq and
 * req_notify_cq, and inside dev->lock by the data path that fills it: a
 * process polling its CQ never waits for another's delivery, only for a
 * push into that same CQ. Called under dev->lock; the handlers run after
 * cq->lock is released.
 */
static void ixrc_cq_push(struct ixrc_cq *cq, const struct ib_wc *wc,
			 bool solicited)
{
	bool overflow = false, notify = false;

	spin_lock(&cq->lock);
	if (cq->count == cq->size) {
		overflow = true;
	} else {
		cq->ring[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED &&
		     (solicited || wc->status != IB_WC_SUCCESS))) {
			cq->notify = 0;
			notify = true;
		}
	}
	spin_unlock(&cq->lock);
	if (overflow && !cq->ignore_overrun && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int ixrc_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct ixrc_cq *cq = to_icq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < n && cq->count; i++) {
		wc[i] = cq->ring[cq->head];
		if (wc[i].qp) {
			/* not the QP: it may be gone before uverbs reads it
			 * (its destroy purges the ring under cq->lock, so it
			 * is still there now) */
			struct ib_qp *s = &cq->poll_qps[cq->poll_next++ %
							 IXRC_POLL_QPS];

			s->device = wc[i].qp->device;
			s->qp_num = wc[i].qp->qp_num;
			s->qp_type = wc[i].qp->qp_type;
			wc[i].qp = s;
		}
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

int ixrc_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct ixrc_cq *cq = to_icq(ibcq);
	unsigned long irq;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irq);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irq);
	return ret;
}

/* Drop the completions naming qp: a later poll_cq would read its ib_qp,
 * which the core frees once destroy_qp returns. Under dev->lock. */
static void ixrc_cq_purge(struct ixrc_cq *cq, struct ixrc_qp *qp)
{
	u32 i, kept = 0;

	spin_lock(&cq->lock);
	for (i = 0; i < cq->count; i++) {
		struct ib_wc *wc = &cq->ring[(cq->head + i) % cq->size];

		if (wc->qp != &qp->ibqp)
			cq->ring[(cq->head + kept++) % cq->size] = *wc;
	}
	cq->count = kept;
	spin_unlock(&cq->lock);
}

/* ------------------------------------------------------------------ */
/* Memory                                                               */

static struct ixrc_mr *ixrc_mr_find(struct ixrc_dev *dev, u32 key,
				    struct ib_pd *pd, int need)
{
	struct ixrc_mr *mr = xa_load(&dev->mrs, key);

	if (!mr || !mr->umem || (pd && mr->ibmr.pd != pd))
		return NULL;
	if ((mr->access & need) != need)
		return NULL;
	return mr;
}

static int ixrc_mr_copy(struct ixrc_mr *mr, u64 iova, void *buf, u32 len,
			bool to_mr)
{
	u64 off;

	if (iova < mr->iova || iova + len < iova ||
	    iova + len > mr->iova + mr->length)
		return -EFAULT;
	off = iova - mr->iova + mr->page_off;
	while (len) {
		unsigned long pg = off >> PAGE_SHIFT;
		u32 po = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - po);
		void *va;

		if (pg >= mr->npages)
			return -EFAULT;
		va = kmap_local_page(mr->pages[pg]);
		if (to_mr)
			memcpy(va + po, buf, n);
		else
			memcpy(buf, va + po, n);
		kunmap_local(va);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Gather (to_mr false) or scatter an SGE list through lkeys. */
static int ixrc_sge_copy(struct ixrc_dev *dev, struct ib_pd *pd,
			 const struct ib_sge *sge, int num, void *buf,
			 u32 len, bool to_mr)
{
	int i;

	for (i = 0; i < num && len; i++) {
		u32 n = min(len, sge[i].length);
		struct ixrc_mr *mr;

		if (!n)
			continue;
		mr = ixrc_mr_find(dev, sge[i].lkey, pd,
				  to_mr ? IB_ACCESS_LOCAL_WRITE : 0);
		if (!mr || ixrc_mr_copy(mr, sge[i].addr, buf, n, to_mr))
			return -EFAULT;
		buf += n;
		len -= n;
	}
	return len ? -EMSGSIZE : 0;
}

static u32 ixrc_sge_len(const struct ib_sge *sge, int num)
{
	u64 len = 0;
	int i;

	for (i = 0; i < num; i++)
		len += sge[i].length;
	return len > U32_MAX ? U32_MAX : len;
}

/* ------------------------------------------------------------------ */
/* Receive queues                                                       */

static int ixrc_rq_post(struct ixrc_rq *rq, const struct ib_recv_wr *wr)
{
	struct ixrc_rwqe *w;

	if (wr->num_sge > rq->max_sge)
		return -EINVAL;
	if (rq->count == rq->size)
		return -ENOMEM;
	w = &rq->q[(rq->head + rq->count) % rq->size];
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
	rq->count++;
	return 0;
}

static struct ixrc_rwqe *ixrc_rq_pop(struct ixrc_rq *rq)
{
	struct ixrc_rwqe *w;

	if (!rq->count)
		return NULL;
	w = &rq->q[rq->head];
	rq->head = (rq->head + 1) % rq->size;
	rq->count--;
	return w;
}

static void ixrc_srq_limit(struct ixrc_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (!srq->limit || srq->rq.count >= srq->limit)
		return;
	srq->limit = 0;		/* armed once per modify_srq */
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* ------------------------------------------------------------------ */
/* Completions of a send                                                */

static enum ib_wc_opcode ixrc_wc_op(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	default:
		return IB_WC_SEND;
	}
}

static void ixrc_qp_error(struct ixrc_dev *dev, struct ixrc_qp *qp)
{
	if (qp->state == IB_QPS_ERR)
		return;
	qp->state = IB_QPS_ERR;
	ixrc_flush_qp(dev, qp);
}

static void ixrc_send_done(struct ixrc_dev *dev, struct ixrc_qp *qp,
			   u64 wr_id, enum ib_wr_opcode op, bool signaled,
			   u32 len, enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = ixrc_wc_op(op),
		.byte_len = len,
		.qp = &qp->ibqp,
	};

	if (status == IB_WC_SUCCESS && !signaled)
		return;
	if (qp->ibqp.send_cq)
		ixrc_cq_push(to_icq(qp->ibqp.send_cq), &wc, false);
	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		ixrc_qp_error(dev, qp);
}

static void ixrc_pkt_done(struct ixrc_dev *dev, struct ixrc_pkt *pkt,
			  enum ib_wc_status status)
{
	ixrc_send_done(dev, pkt->src, pkt->wr_id, pkt->opcode, pkt->signaled,
		       pkt->len, status);
}

/* ------------------------------------------------------------------ */
/* Delivery                                                             */

/*
 * Deliver pkt: 0 when it is done with (completions made), -EAGAIN when it
 * must wait for its destination to reach RTR, -ENOBUFS when the responder
 * has no receive for it (an RNR NAK: ixrc_rnr_nak).
 * remote_addr/rkey of an RDMA write travel in pkt (ixrc_pkt_rdma).
 */
struct ixrc_pkt_rdma {
	u64 remote_addr;
	u32 rkey, qkey;
};

static inline struct ixrc_pkt_rdma *ixrc_rdma(struct ixrc_pkt *pkt)
{
	return (struct ixrc_pkt_rdma *)(pkt->data + ALIGN(pkt->len, 8));
}

static int ixrc_deliver(struct ixrc_dev *dev, struct ixrc_pkt *pkt)
{
	struct ixrc_qp *src = pkt->src, *dst;
	struct ixrc_srq *srq = NULL;
	struct ixrc_rq *rq;
	struct ib_cq *rcq;
	struct ib_pd *rpd;
	struct ixrc_rwqe *w = NULL;
	struct ib_wc wc = {};
	bool ud = src->type == IB_QPT_UD;
	/* UD and UC drop what finds no receive (or no ready QP); RC waits */
	bool unrel = ud || src->type == IB_QPT_UC;
	u32 off = ud ? IXRC_GRH_LEN : 0;
	int ret;

	dst = xa_load(&dev->qps, pkt->dst_qpn);
	if (!dst || dst->state == IB_QPS_ERR ||
	    (src->type == IB_QPT_XRC_INI && dst->type != IB_QPT_XRC_TGT) ||
	    (src->type != IB_QPT_XRC_INI && dst->type != src->type)) {
		ixrc_pkt_done(dev, pkt, unrel ? IB_WC_SUCCESS : IB_WC_RETRY_EXC_ERR);
		return 0;
	}
	if (dst->state == IB_QPS_RESET || dst->state == IB_QPS_INIT) {
		if (unrel) {
			ixrc_pkt_done(dev, pkt, IB_WC_SUCCESS);
			return 0;
		}
		return -EAGAIN;
	}
	if (ud && ixrc_rdma(pkt)->qkey != dst->qkey) {
		ixrc_pkt_done(dev, pkt, IB_WC_SUCCESS);	/* dropped */
		return 0;
	}
	if (pkt->xrc) {
		/* remote_srqn picks an XRC SRQ of the target QP's XRCD */
		srq = xa_load(&dev->srqs, pkt->srqn);
		if (!srq || srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    srq->ibsrq.ext.xrc.xrcd != dst->xrcd) {
			ixrc_pkt_done(dev, pkt, IB_WC_REM_INV_REQ_ERR);
			return 0;
		}
		rq = &srq->rq;
		rcq = srq->ibsrq.ext.cq;
		rpd = srq->ibsrq.pd;
	} else if (dst->srq) {
		srq = dst->srq;
		rq = &srq->rq;
		rcq = dst->ibqp.recv_cq;
		rpd = srq->ibsrq.pd;
	} else {
		rq = &dst->rq;
		rcq = dst->ibqp.recv_cq;
		rpd = dst->ibqp.pd;
	}

	if (pkt->opcode == IB_WR_RDMA_WRITE ||
	    pkt->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		struct ixrc_pkt_rdma *r = ixrc_rdma(pkt);
		struct ixrc_mr *mr;

		if (pkt->opcode == IB_WR_RDMA_WRITE_WITH_IMM && !rq->count &&
		    !unrel) {
			pkt->rnr_timer = dst->min_rnr_timer;
			return -ENOBUFS;	/* RNR NAK */
		}
		/* the rkey of the receiving side's PD: its SRQ's for XRC */
		mr = ixrc_mr_find(dev, r->rkey, rpd, IB_ACCESS_REMOTE_WRITE);
		if (pkt->len && (!mr || ixrc_mr_copy(mr, r->remote_addr,
						     pkt->data, pkt->len, true))) {
			ixrc_pkt_done(dev, pkt, IB_WC_REM_ACCESS_ERR);
			return 0;
		}
		if (pkt->opcode == IB_WR_RDMA_WRITE) {
			ixrc_pkt_done(dev, pkt, IB_WC_SUCCESS);
			return 0;
		}
	}

	if (!rq->count) {
		if (unrel) {
			ixrc_pkt_done(dev, pkt, IB_WC_SUCCESS);
			return 0;
		}
		pkt->rnr_timer = dst->min_rnr_timer;
		return -ENOBUFS;	/* RNR NAK: wait for a receive */
	}
	w = ixrc_rq_pop(rq);
	if (srq)
		ixrc_srq_limit(srq);

	wc.wr_id = w->wr_id;
	wc.qp = &dst->ibqp;
	wc.src_qp = src->ibqp.qp_num;
	wc.slid = 1;
	wc.port_num = 1;
	wc.byte_len = pkt->len + off;
	wc.opcode = pkt->opcode == IB_WR_RDMA_WRITE_WITH_IMM ?
		    IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
	if (pkt->has_imm) {
		wc.ex.imm_data = pkt->imm;
		wc.wc_flags |= IB_WC_WITH_IMM;
	}
	ret = 0;
	if (pkt->opcode != IB_WR_RDMA_WRITE_WITH_IMM) {
		struct ib_sge sge[IXRC_MAX_SGE];
		int i, n = w->num_sge;

		/* a UD receive begins with room for the GRH */
		memcpy(sge, w->sge, n * sizeof(*sge));
		for (i = 0; i < n && off; i++) {
			u32 skip = min(off, sge[i].length);

			sge[i].addr += skip;
			sge[i].length -= skip;
			off -= skip;
		}
		ret = off ? -EMSGSIZE :
			    ixrc_sge_copy(dev, rpd, sge, n, pkt->data,
					  pkt->len, true);
	}
	wc.status = ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
		    ret ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	if (rcq)
		ixrc_cq_push(to_icq(rcq), &wc, pkt->solicited);
	if (ret) {
		ixrc_qp_error(dev, dst);
		ixrc_pkt_done(dev, pkt, unrel ? IB_WC_SUCCESS :
			      ret == -EMSGSIZE ? IB_WC_REM_INV_REQ_ERR :
			      IB_WC_REM_OP_ERR);
		return 0;
	}
	ixrc_pkt_done(dev, pkt, IB_WC_SUCCESS);
	return 0;
}

/* RNR timer values in microseconds, by the IB_RNR_TIMER_* encoding */
static const u32 ixrc_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* The RNR retry timer runs at due at the latest. */
static void ixrc_rnr_arm(struct ixrc_dev *dev, unsigned long due)
{
	unsigned long now = jiffies;

	if (dev->dying || (dev->rnr_armed && time_before_eq(dev->rnr_at, due)))
		return;
	dev->rnr_armed = true;
	dev->rnr_at = due;
	mod_delayed_work(system_wq, &dev->rnr_work,
			 time_after(due, now) ? due - now : 0);
}

/*
 * pkt was RNR NAKed. false: it waits, for its retry at rnr_due or (rnr_retry
 * 7) for a receive; true: no retry was left, it completed with
 * IB_WC_RNR_RETRY_EXC_ERR (its QP is now in the error state), done with.
 */
static bool ixrc_rnr_nak(struct ixrc_dev *dev, struct ixrc_pkt *pkt)
{
	if (pkt->src->rnr_retry >= 7)
		return false;
	if (!pkt->rnr_wait) {
		pkt->rnr_wait = true;
		pkt->rnr_left = pkt->src->rnr_retry;
	}
	if (!pkt->rnr_left) {
		ixrc_pkt_done(dev, pkt, IB_WC_RNR_RETRY_EXC_ERR);
		return true;
	}
	pkt->rnr_left--;
	pkt->rnr_due = jiffies +
		usecs_to_jiffies(ixrc_rnr_usec[pkt->rnr_timer & 31]);
	ixrc_rnr_arm(dev, pkt->rnr_due);
	return false;
}

/*
 * Deliver what waits, in order; a sender whose packet must still wait
 * keeps its later packets waiting behind it. A packet NAKed before is not
 * NAKed again here: only its timer's retry (ixrc_rnr_work) counts.
 */
void ixrc_kick(struct ixrc_dev *dev)
{
	struct ixrc_pkt *pkt, *tmp;
	u32 gen = ++dev->kick_gen;
	int ret;

	list_for_each_entry_safe(pkt, tmp, &dev->pending, node) {
		if (pkt->src->blocked_gen == gen)
			continue;
		if (pkt->src->state == IB_QPS_ERR) {
			/* flushed in order, after the error completion */
			ixrc_send_done(dev, pkt->src, pkt->wr_id, pkt->opcode,
				       true, 0, IB_WC_WR_FLUSH_ERR);
		} else {
			ret = ixrc_deliver(dev, pkt);
			if (ret == -ENOBUFS &&
			    (pkt->rnr_wait || !ixrc_rnr_nak(dev, pkt)))
				ret = -EAGAIN;
			if (ret == -EAGAIN) {
				pkt->src->blocked_gen = gen;
				continue;
			}
		}
		list_del(&pkt->node);
		pkt->src->sq_pending--;
		kfree(pkt);
	}
}

/*
 * The RNR retry timer: each sender's first waiting packet whose retry is
 * due is sent again; NAKed again, it counts a retry, or completes with
 * IB_WC_RNR_RETRY_EXC_ERR when none is left (ixrc_kick then flushes the
 * sender's later packets). Runs in a worker, under dev->lock.
 */
void ixrc_rnr_work(struct work_struct *work)
{
	struct ixrc_dev *dev = container_of(to_delayed_work(work),
					    struct ixrc_dev, rnr_work);
	struct ixrc_pkt *pkt, *tmp;
	unsigned long flags, now = jiffies, next = 0;
	bool more = false, done_any = false;
	u32 gen;
	int ret;

	spin_lock_irqsave(&dev->lock, flags);
	dev->rnr_armed = false;
	gen = ++dev->kick_gen;
	list_for_each_entry_safe(pkt, tmp, &dev->pending, node) {
		if (pkt->src->blocked_gen == gen)
			continue;
		pkt->src->blocked_gen = gen;	/* its first packet only */
		if (!pkt->rnr_wait || pkt->src->state == IB_QPS_ERR)
			continue;
		if (time_before(now, pkt->rnr_due)) {
			if (!more || time_before(pkt->rnr_due, next))
				next = pkt->rnr_due;
			more = true;
			continue;
		}
		ret = ixrc_deliver(dev, pkt);
		if (ret == -ENOBUFS && !ixrc_rnr_nak(dev, pkt)) {
			if (!more || time_before(pkt->rnr_due, next))
				next = pkt->rnr_due;
			more = true;
			continue;
		}
		if (ret == -EAGAIN)
			continue;
		list_del(&pkt->node);
		pkt->src->sq_pending--;
		kfree(pkt);
		done_any = true;
	}
	/* what waited behind a packet done with, and an error's flushes */
	if (done_any)
		ixrc_kick(dev);
	if (more)
		ixrc_rnr_arm(dev, next);
	spin_unlock_irqrestore(&dev->lock, flags);
}

/* ------------------------------------------------------------------ */
/* Posting                                                              */

static bool ixrc_qp_waits(struct ixrc_dev *dev, struct ixrc_qp *qp)
{
	return qp->sq_pending != 0;
}

/*
 * The PD a READ or an atomic of qp is checked against at the responder:
 * the destination QP's, or for XRC the named XRC SRQ's. 0 or a status.
 */
static int ixrc_remote_pd(struct ixrc_dev *dev, struct ixrc_qp *qp, u32 srqn,
			  struct ib_pd **rpd)
{
	struct ixrc_qp *dst = xa_load(&dev->qps, qp->dest_qpn);
	struct ixrc_srq *srq;

	if (!dst || dst->state < IB_QPS_RTR || dst->state == IB_QPS_ERR)
		return IB_WC_RETRY_EXC_ERR;
	*rpd = dst->ibqp.pd;
	if (qp->type != IB_QPT_XRC_INI)
		return dst->type == qp->type ? 0 : IB_WC_RETRY_EXC_ERR;
	srq = xa_load(&dev->srqs, srqn);
	if (dst->type != IB_QPT_XRC_TGT || !srq ||
	    srq->ibsrq.srq_type != IB_SRQT_XRC ||
	    srq->ibsrq.ext.xrc.xrcd != dst->xrcd)
		return IB_WC_REM_INV_REQ_ERR;
	*rpd = srq->ibsrq.pd;
	return 0;
}

static int ixrc_rdma_read(struct ixrc_dev *dev, struct ixrc_qp *qp,
			  const struct ib_send_wr *wr, u32 srqn, void *buf,
			  u32 len)
{
	const struct ib_rdma_wr *r = rdma_wr(wr);
	struct ib_pd *rpd;
	struct ixrc_mr *mr;
	int st = ixrc_remote_pd(dev, qp, srqn, &rpd);

	if (st)
		return st;
	mr = ixrc_mr_find(dev, r->rkey, rpd, IB_ACCESS_REMOTE_READ);
	if (len && (!mr || ixrc_mr_copy(mr, r->remote_addr, buf, len, false)))
		return IB_WC_REM_ACCESS_ERR;
	if (ixrc_sge_copy(dev, qp->ibqp.pd, wr->sg_list, wr->num_sge, buf,
			  len, true))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/* An 8-byte atomic at the responder; the old value into the local SGEs. */
static int ixrc_atomic(struct ixrc_dev *dev, struct ixrc_qp *qp,
		       const struct ib_send_wr *wr, u32 srqn)
{
	const struct ib_atomic_wr *a = atomic_wr(wr);
	struct ib_pd *rpd;
	struct ixrc_mr *mr;
	u64 old, new;
	int st = ixrc_remote_pd(dev, qp, srqn, &rpd);

	if (st)
		return st;
	if (a->remote_addr & 7)
		return IB_WC_REM_INV_REQ_ERR;
	mr = ixrc_mr_find(dev, a->rkey, rpd, IB_ACCESS_REMOTE_ATOMIC);
	if (!mr || ixrc_mr_copy(mr, a->remote_addr, &old, 8, false))
		return IB_WC_REM_ACCESS_ERR;
	if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP)
		new = old == a->compare_add ? a->swap : old;
	else
		new = old + a->compare_add;
	ixrc_mr_copy(mr, a->remote_addr, &new, 8, true);
	if (ixrc_sge_copy(dev, qp->ibqp.pd, wr->sg_list, wr->num_sge, &old,
			  8, true))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

static int ixrc_post_one(struct ixrc_dev *dev, struct ixrc_qp *qp,
			 const struct ib_send_wr *wr)
{
	bool signaled = qp->sq_sig_all || (wr->send_flags & IB_SEND_SIGNALED);
	bool inl = wr->send_flags & IB_SEND_INLINE;
	struct ixrc_pkt *pkt;
	unsigned long flags;
	u32 len, srqn = 0;
	int ret = 0;

	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (qp->type == IB_QPT_UD)
			return -EINVAL;
		if (qp->type == IB_QPT_UC && wr->opcode != IB_WR_RDMA_WRITE &&
		    wr->opcode != IB_WR_RDMA_WRITE_WITH_IMM)
			return -EINVAL;	/* UC: no READ, no atomics */
		if (inl && wr->opcode != IB_WR_RDMA_WRITE &&
		    wr->opcode != IB_WR_RDMA_WRITE_WITH_IMM)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	if (qp->type == IB_QPT_XRC_INI) {
		if (!(wr->send_flags & IXRC_SEND_XRC))
			return -EINVAL;
		srqn = (wr->send_flags >> IXRC_SEND_SRQN_SHIFT) &
		       IXRC_SEND_SRQN_MAX;
	}
	len = ixrc_sge_len(wr->sg_list, wr->num_sge);
	if (inl && len > qp->max_inline)
		return -EINVAL;
	if (len > IXRC_MAX_MSG)
		len = IXRC_MAX_MSG + 1;	/* completes with LOC_LEN_ERR */
	pkt = kzalloc(sizeof(*pkt) + ALIGN(len, 8) +
		      sizeof(struct ixrc_pkt_rdma), GFP_KERNEL);
	if (!pkt)
		return -ENOMEM;
	pkt->src = qp;
	pkt->wr_id = wr->wr_id;
	pkt->opcode = wr->opcode;
	pkt->signaled = signaled;
	pkt->solicited = wr->send_flags & IB_SEND_SOLICITED;
	pkt->len = len;
	pkt->xrc = qp->type == IB_QPT_XRC_INI;
	pkt->srqn = srqn;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		pkt->has_imm = true;
		pkt->imm = wr->ex.imm_data;
	}
	if (qp->type == IB_QPT_UD) {
		pkt->dst_qpn = ud_wr(wr)->remote_qpn;
		ixrc_rdma(pkt)->qkey = ud_wr(wr)->remote_qkey;
	} else {
		pkt->dst_qpn = qp->dest_qpn;
		if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM) {
			ixrc_rdma(pkt)->remote_addr = rdma_wr(wr)->remote_addr;
			ixrc_rdma(pkt)->rkey = rdma_wr(wr)->rkey;
		}
	}
	if (inl) {
		/* inline data is the poster's user memory: read it here,
		 * in its context, before the lock */
		void *p = pkt->data;
		int i;

		for (i = 0; i < wr->num_sge; i++) {
			if (copy_from_user(p, u64_to_user_ptr(wr->sg_list[i].addr),
					   wr->sg_list[i].length)) {
				kfree(pkt);
				return -EFAULT;
			}
			p += wr->sg_list[i].length;
		}
	}

	spin_lock_irqsave(&dev->lock, flags);
	if (qp->state == IB_QPS_ERR) {
		ixrc_send_done(dev, qp, wr->wr_id, wr->opcode, true, 0,
			       IB_WC_WR_FLUSH_ERR);
		goto out_free;
	}
	if (qp->state != IB_QPS_RTS) {
		ret = -EINVAL;
		goto out_free;
	}
	if (qp->sq_pending >= qp->max_send_wr) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (len > IXRC_MAX_MSG) {
		ixrc_pkt_done(dev, pkt, IB_WC_LOC_LEN_ERR);
		goto out_free;
	}
	if (wr->opcode == IB_WR_RDMA_READ) {
		int st = ixrc_rdma_read(dev, qp, wr, srqn, pkt->data, len);

		ixrc_pkt_done(dev, pkt, st);
		goto out_free;
	}
	if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		pkt->len = 8;
		ixrc_pkt_done(dev, pkt, ixrc_atomic(dev, qp, wr, srqn));
		goto out_free;
	}
	if (!inl && ixrc_sge_copy(dev, qp->ibqp.pd, wr->sg_list, wr->num_sge,
				  pkt->data, len, false)) {
		ixrc_pkt_done(dev, pkt, IB_WC_LOC_PROT_ERR);
		goto out_free;
	}
	if (!ixrc_qp_waits(dev, qp)) {
		int r = ixrc_deliver(dev, pkt);

		if (!r || (r == -ENOBUFS && ixrc_rnr_nak(dev, pkt)))
			goto out_free;
	}
	list_add_tail(&pkt->node, &dev->pending);
	qp->sq_pending++;
	spin_unlock_irqrestore(&dev->lock, flags);
	return 0;

out_free:
	spin_unlock_irqrestore(&dev->lock, flags);
	kfree(pkt);
	return ret;
}

int ixrc_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct ixrc_dev *dev = to_idev(ibqp->device);
	struct ixrc_qp *qp = to_iqp(ibqp);
	int ret = 0;

	if (qp->type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;	/* no send queue (QPX-12) */
	}
	for (; wr; wr = wr->next) {
		ret = ixrc_post_one(dev, qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	return ret;
}

int ixrc_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct ixrc_dev *dev = to_idev(ibqp->device);
	struct ixrc_qp *qp = to_iqp(ibqp);
	unsigned long flags;
	int ret = 0;

	if (qp->srq || qp->type == IB_QPT_XRC_INI ||
	    qp->type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;	/* no receive queue (QPX-11) */
	}
	spin_lock_irqsave(&dev->lock, flags);
	for (; wr; wr = wr->next) {
		if (qp->state == IB_QPS_ERR) {
			struct ib_wc wc = {
				.wr_id = wr->wr_id,
				.status = IB_WC_WR_FLUSH_ERR,
				.opcode = IB_WC_RECV,
				.qp = ibqp,
			};

			if (ibqp->recv_cq)
				ixrc_cq_push(to_icq(ibqp->recv_cq), &wc, false);
			continue;
		}
		ret = ixrc_rq_post(&qp->rq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	ixrc_kick(dev);
	spin_unlock_irqrestore(&dev->lock, flags);
	return ret;
}

int ixrc_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct ixrc_dev *dev = to_idev(ibsrq->device);
	struct ixrc_srq *srq = to_isrq(ibsrq);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&dev->lock, flags);
	for (; wr; wr = wr->next) {
		ret = ixrc_rq_post(&srq->rq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	ixrc_kick(dev);
	spin_unlock_irqrestore(&dev->lock, flags);
	return ret;
}

/* ------------------------------------------------------------------ */
/* QP state changes and teardown (called under dev->lock)               */

/*
 * To ERR: flush the receive queue. Its sends still waiting are flushed by
 * the next ixrc_kick (this runs inside its walk of dev->pending).
 */
void ixrc_flush_qp(struct ixrc_dev *dev, struct ixrc_qp *qp)
{
	struct ixrc_rwqe *w;

	while (qp->rq.q && (w = ixrc_rq_pop(&qp->rq))) {
		struct ib_wc wc = {
			.wr_id = w->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
		};

		if (qp->ibqp.recv_cq)
			ixrc_cq_push(to_icq(qp->ibqp.recv_cq), &wc, false);
	}
}

/* To RESET: its waiting sends are gone, with no completion. */
void ixrc_drop_sends(struct ixrc_dev *dev, struct ixrc_qp *qp)
{
	struct ixrc_pkt *pkt, *tmp;

	list_for_each_entry_safe(pkt, tmp, &dev->pending, node) {
		if (pkt->src != qp)
			continue;
		list_del(&pkt->node);
		kfree(pkt);
	}
	qp->sq_pending = 0;
}

/* qp is being destroyed: nothing may name it any more. */
void ixrc_forget_qp(struct ixrc_dev *dev, struct ixrc_qp *qp)
{
	struct ixrc_pkt *pkt, *tmp;
	struct ixrc_cq *cq;

	list_for_each_entry_safe(pkt, tmp, &dev->pending, node) {
		if (pkt->src == qp) {
			list_del(&pkt->node);
			kfree(pkt);
		} else if (pkt->dst_qpn == qp->ibqp.qp_num) {
			list_del(&pkt->node);
			pkt->src->sq_pending--;
			ixrc_pkt_done(dev, pkt, IB_WC_RETRY_EXC_ERR);
			kfree(pkt);
		}
	}
	qp->sq_pending = 0;
	list_for_each_entry(cq, &dev->cqs, node)
		ixrc_cq_purge(cq, qp);
}

void ixrc_forget_cq(struct ixrc_dev *dev, struct ixrc_cq *cq)
{
	/* the core destroys a CQ only when no QP or SRQ uses it */
}
