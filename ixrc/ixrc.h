/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * ibvct's soft XRC device: shared declarations of the module.
 *
 * One ib_device ("ixrc%d") whose queues live in kernel memory: userspace
 * reaches them through the generic uverbs write commands (post_send,
 * post_recv, post_srq_recv, poll_cq, req_notify_cq), never mmap. A send is
 * delivered synchronously, inside the device, to the destination QP named
 * by its QP number (RC, XRC) or by the WR (UD); one device lock serialises
 * the data path (a CQ's ring has a lock of its own, for its pollers). An
 * RC or XRC send that finds no receive is RNR NAKed and retried after the
 * responder's min_rnr_timer, rnr_retry times (7: for ever), as an HCA's
 * requester does (ixrc_data.c).
 *
 * remote_srqn: the uverbs post_send command has no field for it (spec
 * WR-05), but it hands send_flags to the driver verbatim, so the provider
 * carries it in send_flags bits IXRC_SEND_SRQN_SHIFT.. with IXRC_SEND_XRC
 * set; IB_SEND_* use bits 0..4 and the kernel's reserved ones start at 26.
 */
#ifndef IBVCT_IXRC_H
#define IBVCT_IXRC_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include "ixrc-abi.h"

#define IXRC_MAX_SGE		8
#define IXRC_MAX_WR		4096
#define IXRC_MAX_CQE		65536
#define IXRC_MAX_MSG		(1u << 20)
#define IXRC_MAX_QP		4096
#define IXRC_MAX_SRQ		4096

struct ixrc_dev {
	struct ib_device ibdev;
	spinlock_t lock;		/* the data path, the tables below */
	struct xarray qps;		/* qp_num -> ixrc_qp (created QPs only) */
	struct xarray srqs;		/* srq_num -> ixrc_srq */
	struct xarray mrs;		/* lkey -> ixrc_mr */
	struct list_head cqs;
	struct list_head pending;	/* ixrc_pkt waiting for a receive (RNR) */
	u32 next_qpn, next_srqn, next_key;
	u32 kick_gen;
	/* the RNR retry timer: runs at rnr_at when rnr_armed (ixrc_rnr_work) */
	struct delayed_work rnr_work;
	unsigned long rnr_at;
	bool rnr_armed, dying;
};

struct ixrc_ucontext {
	struct ib_ucontext ibuc;
};

struct ixrc_pd {
	struct ib_pd ibpd;
};

struct ixrc_xrcd {
	struct ib_xrcd ibxrcd;
};

struct ixrc_ah {
	struct ib_ah ibah;
};

struct ixrc_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	u64 iova, length;
	unsigned int page_off;		/* of the first byte in pages[0] */
	int access;
};

struct ixrc_cq {
	struct ib_cq ibcq;
	struct list_head node;
	struct ib_wc *ring;
	u32 size, head, count;
	spinlock_t lock;		/* the ring, notify, poll_qps (ixrc_data.c) */
	u8 notify;			/* IB_CQ_NEXT_COMP, IB_CQ_SOLICITED or 0 */
	bool ignore_overrun;		/* IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN: no CQ_ERR event */
	/*
	 * What a polled completion's wc->qp points at: uverbs reads
	 * wc->qp->qp_num after poll_cq returns, without any lock of ours
	 * (linux v6.1 drivers/infiniband/core/uverbs_cmd.c, copy_wc_to_user),
	 * while another thread may destroy that QP, and the core frees its
	 * ib_qp once destroy_qp returns. So a completion leaves poll_cq
	 * naming one of these, which live as long as the CQ (and the CQ
	 * outlives every poll of it: uverbs holds it for the call), never
	 * the QP itself. Used in turn: a slot is written again only
	 * IXRC_POLL_QPS polls of this CQ later.
	 */
	struct ib_qp *poll_qps;
	u32 poll_next;
};

#define IXRC_POLL_QPS		16

struct ixrc_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[IXRC_MAX_SGE];
};

struct ixrc_rq {
	struct ixrc_rwqe *q;
	u32 size, head, count, max_sge;
};

struct ixrc_srq {
	struct ib_srq ibsrq;
	struct ixrc_rq rq;
	u32 srqn;
	u32 limit;
	bool in_table;
};

struct ixrc_qp {
	struct ib_qp ibqp;
	struct ixrc_rq rq;		/* none with an SRQ, for XRC_INI and XRC_TGT */
	enum ib_qp_state state;
	enum ib_qp_type type;
	u32 dest_qpn, qkey, max_send_wr, max_send_sge, max_inline;
	enum ib_mtu path_mtu;
	u8 port;
	bool sq_sig_all;
	struct ib_xrcd *xrcd;		/* XRC_TGT */
	struct ixrc_srq *srq;
	u8 rnr_retry;		/* requester: RNR retries, 7 = for ever */
	u8 min_rnr_timer;	/* responder: the RNR NAK's timer (IB_RNR_TIMER_*) */
	u32 sq_pending;		/* its packets on dev->pending */
	u32 blocked_gen;	/* ixrc_kick: a packet of it waits */
};

/* A sent message with its data, on its way to a receive. */
struct ixrc_pkt {
	struct list_head node;
	struct ixrc_qp *src;
	u32 dst_qpn, srqn;
	bool xrc, signaled, solicited, has_imm;
	bool rnr_wait;		/* RNR NAKed: retried at rnr_due (ixrc_rnr_work) */
	u8 rnr_left;		/* retries left */
	u8 rnr_timer;		/* the NAK's timer, from the responder */
	unsigned long rnr_due;
	enum ib_wr_opcode opcode;
	__be32 imm;
	u64 wr_id;
	u32 len;
	u8 data[];
};

static inline struct ixrc_dev *to_idev(struct ib_device *d)
{
	return container_of(d, struct ixrc_dev, ibdev);
}
#define IXRC_TO(type, field, p) container_of(p, struct type, field)
#define to_iqp(p)  IXRC_TO(ixrc_qp, ibqp, p)
#define to_icq(p)  IXRC_TO(ixrc_cq, ibcq, p)
#define to_isrq(p) IXRC_TO(ixrc_srq, ibsrq, p)
#define to_imr(p)  IXRC_TO(ixrc_mr, ibmr, p)

/* ixrc_fault.c: injected faults and quirks (module parameters). */
enum ixrc_kind {
	IXRC_K_PD, IXRC_K_MR, IXRC_K_CQ, IXRC_K_SRQ, IXRC_K_QP, IXRC_K_XRCD,
	IXRC_K_AH, IXRC_K_NR
};
int ixrc_fault(enum ixrc_kind kind);
bool ixrc_no_xrc(void);

/* ixrc_data.c: the data path, under dev->lock. */
int ixrc_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int ixrc_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
int ixrc_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int ixrc_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
int ixrc_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void ixrc_flush_qp(struct ixrc_dev *dev, struct ixrc_qp *qp);
void ixrc_kick(struct ixrc_dev *dev);
void ixrc_drop_sends(struct ixrc_dev *dev, struct ixrc_qp *qp);
void ixrc_forget_qp(struct ixrc_dev *dev, struct ixrc_qp *qp);
void ixrc_forget_cq(struct ixrc_dev *dev, struct ixrc_cq *cq);
void ixrc_rnr_work(struct work_struct *work);

#endif
