// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * ibvct's soft XRC device: the module, the ib_device and its objects
 * (ucontext, PD, XRCD, AH, MR, CQ, SRQ, QP); the data path is ixrc_data.c.
 *
 * Builds against Linux 5.15 to 6.12, checked on 6.1 (Debian 12's
 * 6.1.0-*-amd64) and 6.12 (Debian 13's 6.12.*+deb13-amd64, built in that
 * release's root: make kmod RELEASE=13): the core allocates every object
 * but the MR (INIT_RDMA_OBJ_SIZE, ib_qp since 5.15), create_qp takes the
 * core's ib_qp, ib_umem keeps its pages in sgt_append (5.15), create_cq
 * the uverbs attribute bundle (6.10). An older kernel stops at the
 * #error below; one that lacks an exported symbol ixrc needs stops in Kbuild
 * (IXRC_NEEDS) naming it; a member or prototype that changed is named by
 * the compiler.
 *
 * The port is InfiniBand by protocol only (RDMA_CORE_CAP_PROT_IB, no MAD,
 * SMI, CM or SA capability), so ib_core's MAD and SA clients leave it alone
 * and userspace sees an IB link layer with LID 1.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include <linux/version.h>

#include "ixrc.h"

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 15, 0)
#error "ixrc needs Linux 5.15 or later (the core allocates ib_qp; ib_umem.sgt_append); built and run on 6.1"
#endif

static struct ixrc_dev *ixrc_the_dev;

/* ------------------------------------------------------------------ */
/* Device and port                                                      */

static int ixrc_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *a, struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen) &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->fw_ver = 1;
	a->sys_image_guid = ibdev->node_guid;
	a->max_mr_size = ~0ull;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = 0x1bad;
	a->vendor_part_id = 0x1e;
	a->max_qp = IXRC_MAX_QP;
	a->max_qp_wr = IXRC_MAX_WR;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SHUTDOWN_PORT |
			      IB_DEVICE_SYS_IMAGE_GUID;
	if (!ixrc_no_xrc())
		a->device_cap_flags |= IB_DEVICE_XRC;
	a->max_send_sge = IXRC_MAX_SGE;
	a->max_recv_sge = IXRC_MAX_SGE;
	a->max_sge_rd = IXRC_MAX_SGE;
	a->max_cq = 4096;
	a->max_cqe = IXRC_MAX_CQE - 1;
	a->max_mr = 65536;
	a->max_pd = 4096;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	a->max_res_rd_atom = 16 * IXRC_MAX_QP;
	a->atomic_cap = IB_ATOMIC_HCA;	/* atomic among the device's own QPs */
	a->max_ah = 4096;
	a->max_srq = IXRC_MAX_SRQ;
	a->max_srq_wr = IXRC_MAX_WR;
	a->max_srq_sge = IXRC_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	return 0;
}

static int ixrc_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *a)
{
	/* the core zeroed *a */
	a->state = IB_PORT_ACTIVE;
	a->max_mtu = IB_MTU_4096;
	a->active_mtu = IB_MTU_4096;
	a->phys_mtu = 4096;
	a->gid_tbl_len = 1;
	a->max_msg_sz = IXRC_MAX_MSG;
	a->pkey_tbl_len = 1;
	a->lid = 1;
	a->sm_lid = 1;
	a->max_vl_num = 1;
	a->active_width = IB_WIDTH_4X;
	a->active_speed = IB_SPEED_EDR;
	a->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	return 0;
}

static int ixrc_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *im)
{
	im->pkey_tbl_len = 1;
	im->gid_tbl_len = 1;
	im->core_cap_flags = RDMA_CORE_CAP_PROT_IB;
	im->max_mad_size = 0;	/* no MAD capability: must be 0 */
	return 0;
}

static enum rdma_link_layer ixrc_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int ixrc_query_gid(struct ib_device *ibdev, u32 port, int index,
			  union ib_gid *gid)
{
	if (index)
		return -EINVAL;
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ull);
	gid->global.interface_id = ibdev->node_guid;
	return 0;
}

static int ixrc_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Context, PD, XRCD, AH                                                */

static int ixrc_alloc_ucontext(struct ib_ucontext *uc, struct ib_udata *udata)
{
	return 0;
}

static void ixrc_dealloc_ucontext(struct ib_ucontext *uc)
{
}

/* UVERBS_METHOD_QUERY_CONTEXT (ibv_import_device: rdma-core v44.0
 * libibverbs/cmd_device.c:186) answers EOPNOTSUPP without this op (linux
 * v6.1 drivers/infiniband/core/uverbs_std_types_device.c); the context has
 * nothing of the driver's to report. */
static int ixrc_query_ucontext(struct ib_ucontext *uc,
			       struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static int ixrc_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return ixrc_fault(IXRC_K_PD);
}

static int ixrc_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int ixrc_alloc_xrcd(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	if (ixrc_no_xrc())
		return -EOPNOTSUPP;
	return ixrc_fault(IXRC_K_XRCD);
}

static int ixrc_dealloc_xrcd(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	return 0;
}

static int ixrc_create_ah(struct ib_ah *ah, struct rdma_ah_init_attr *attr,
			  struct ib_udata *udata)
{
	return ixrc_fault(IXRC_K_AH);
}

static int ixrc_destroy_ah(struct ib_ah *ah, u32 flags)
{
	return 0;
}

/* ------------------------------------------------------------------ */
/* MR                                                                   */

static int ixrc_mr_key(struct ixrc_dev *dev, struct ixrc_mr *mr)
{
	u32 key;
	int ret;

	ret = xa_alloc_cyclic_irq(&dev->mrs, &key, mr, XA_LIMIT(1, 0xffffff),
				  &dev->next_key, GFP_KERNEL);
	if (ret < 0)
		return ret;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

static struct ib_mr *ixrc_get_dma_mr(struct ib_pd *pd, int access)
{
	/* Mandatory for registration; no kernel user posts on this device. */
	struct ixrc_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->access = access;
	return &mr->ibmr;
}

static struct ib_mr *ixrc_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				      u64 iova, int access,
				      struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(pd->device);
	struct sg_page_iter it;
	struct ixrc_mr *mr;
	unsigned long i = 0;
	int ret;

	ret = ixrc_fault(IXRC_K_MR);
	if (ret)
		return ERR_PTR(ret);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_free_mr;
	}
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages ? mr->npages : 1, sizeof(*mr->pages),
			     GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_release;
	}
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	mr->npages = i;
	mr->iova = iova;
	mr->length = length;
	mr->page_off = ib_umem_offset(mr->umem);
	mr->access = access;
	ret = ixrc_mr_key(dev, mr);
	if (ret)
		goto err_free_pages;
	return &mr->ibmr;

err_free_pages:
	kvfree(mr->pages);
err_release:
	ib_umem_release(mr->umem);
err_free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

static int ixrc_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibmr->device);
	struct ixrc_mr *mr = to_imr(ibmr);
	unsigned long flags;

	if (mr->umem) {
		/* out of the table under the lock: the data path looks keys
		 * up and copies under it, so no copy uses the pages after */
		spin_lock_irqsave(&dev->lock, flags);
		xa_erase(&dev->mrs, ibmr->lkey);
		spin_unlock_irqrestore(&dev->lock, flags);
		kvfree(mr->pages);
		ib_umem_release(mr->umem);
	}
	kfree(mr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* CQ                                                                   */

/*
 * create_cq takes the uverbs attribute bundle in place of the udata since
 * Linux 6.10 (commit dd6d7f8574d7, "RDMA: Pass entire uverbs attr bundle to
 * create cq function"; 6.12 include/rdma/ib_verbs.h ib_device_ops); ixrc
 * reads neither.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
typedef struct uverbs_attr_bundle ixrc_cq_udata;
#else
typedef struct ib_udata ixrc_cq_udata;
#endif

static int ixrc_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			  ixrc_cq_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibcq->device);
	struct ixrc_cq *cq = to_icq(ibcq);
	unsigned long flags;
	int ret;

	/* ignoring an overrun is the one creation flag it takes (the provider's
	 * create_cq_ex passes IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN on as it) */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe >= IXRC_MAX_CQE)
		return -EINVAL;
	ret = ixrc_fault(IXRC_K_CQ);
	if (ret)
		return ret;
	cq->size = attr->cqe + 1;
	cq->ignore_overrun = attr->flags & IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN;
	cq->ring = kvcalloc(cq->size, sizeof(*cq->ring), GFP_KERNEL);
	cq->poll_qps = kcalloc(IXRC_POLL_QPS, sizeof(*cq->poll_qps), GFP_KERNEL);
	if (!cq->ring || !cq->poll_qps) {
		kvfree(cq->ring);
		kfree(cq->poll_qps);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	ibcq->cqe = cq->size - 1;
	spin_lock_irqsave(&dev->lock, flags);
	list_add_tail(&cq->node, &dev->cqs);
	spin_unlock_irqrestore(&dev->lock, flags);
	return 0;
}

static int ixrc_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibcq->device);
	struct ixrc_cq *cq = to_icq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	ixrc_forget_cq(dev, cq);
	list_del(&cq->node);
	spin_unlock_irqrestore(&dev->lock, flags);
	kvfree(cq->ring);
	kfree(cq->poll_qps);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Receive queues (a QP's or an SRQ's)                                  */

static int ixrc_rq_init(struct ixrc_rq *rq, u32 *max_wr, u32 *max_sge)
{
	if (*max_wr > IXRC_MAX_WR || *max_sge > IXRC_MAX_SGE)
		return -EINVAL;
	if (!*max_wr)
		*max_wr = 1;
	if (!*max_sge)
		*max_sge = 1;
	rq->size = *max_wr;
	rq->max_sge = *max_sge;
	rq->q = kvcalloc(rq->size, sizeof(*rq->q), GFP_KERNEL);
	return rq->q ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                  */

static int ixrc_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibsrq->device);
	struct ixrc_srq *srq = to_isrq(ibsrq);
	u32 srqn;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (init->srq_type == IB_SRQT_XRC && ixrc_no_xrc())
		return -EOPNOTSUPP;
	ret = ixrc_fault(IXRC_K_SRQ);
	if (ret)
		return ret;
	ret = ixrc_rq_init(&srq->rq, &init->attr.max_wr, &init->attr.max_sge);
	if (ret)
		return ret;
	srq->limit = init->attr.srq_limit;
	ret = xa_alloc_cyclic_irq(&dev->srqs, &srqn, srq,
				  XA_LIMIT(1, IXRC_SEND_SRQN_MAX),
				  &dev->next_srqn, GFP_KERNEL);
	if (ret < 0) {
		kvfree(srq->rq.q);
		return ret;
	}
	srq->srqn = srqn;
	srq->in_table = true;
	/* uverbs answers create_xsrq with this number (SRQX-11) */
	ibsrq->ext.xrc.srq_num = srqn;
	return 0;
}

static int ixrc_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibsrq->device);
	struct ixrc_srq *srq = to_isrq(ibsrq);
	unsigned long flags;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;	/* no IB_DEVICE_SRQ_RESIZE */
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.size)
			return -EINVAL;
		spin_lock_irqsave(&dev->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&dev->lock, flags);
	}
	return 0;
}

static int ixrc_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct ixrc_srq *srq = to_isrq(ibsrq);

	attr->max_wr = srq->rq.size;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

static int ixrc_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibsrq->device);
	struct ixrc_srq *srq = to_isrq(ibsrq);
	unsigned long flags;

	/* out of the table under the lock: a delivery holds it while it
	 * uses an SRQ it looked up */
	spin_lock_irqsave(&dev->lock, flags);
	xa_erase(&dev->srqs, srq->srqn);
	spin_unlock_irqrestore(&dev->lock, flags);
	kvfree(srq->rq.q);
	return 0;
}

/* ------------------------------------------------------------------ */
/* QP                                                                   */

static int ixrc_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibqp->device);
	struct ixrc_qp *qp = to_iqp(ibqp);
	u32 qpn;
	int ret;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		if (ixrc_no_xrc())
			return -EOPNOTSUPP;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	ret = ixrc_fault(IXRC_K_QP);
	if (ret)
		return ret;
	qp->type = init->qp_type;
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->path_mtu = IB_MTU_4096;
	qp->port = 1;
	if (qp->type == IB_QPT_XRC_TGT) {
		/* created by the core with no udata, bound to an XRCD, no
		 * queues; receives go to the SRQ a WR names */
		qp->xrcd = init->xrcd;
		memset(&init->cap, 0, sizeof(init->cap));
	} else {
		if (init->cap.max_send_wr > IXRC_MAX_WR ||
		    init->cap.max_send_sge > IXRC_MAX_SGE ||
		    init->cap.max_inline_data > 256)
			return -EINVAL;
		qp->max_send_wr = max_t(u32, init->cap.max_send_wr, 1);
		qp->max_send_sge = max_t(u32, init->cap.max_send_sge, 1);
		qp->max_inline = init->cap.max_inline_data;
		init->cap.max_send_wr = qp->max_send_wr;
		init->cap.max_send_sge = qp->max_send_sge;
		if (qp->type == IB_QPT_XRC_INI) {
			init->cap.max_recv_wr = 0;
			init->cap.max_recv_sge = 0;
		} else if (init->srq) {
			qp->srq = to_isrq(init->srq);
			init->cap.max_recv_wr = 0;
			init->cap.max_recv_sge = 0;
		} else {
			ret = ixrc_rq_init(&qp->rq, &init->cap.max_recv_wr,
					   &init->cap.max_recv_sge);
			if (ret)
				return ret;
		}
	}
	ret = xa_alloc_cyclic_irq(&dev->qps, &qpn, qp,
				  XA_LIMIT(2, 0xffffff), &dev->next_qpn,
				  GFP_KERNEL);
	if (ret < 0) {
		kvfree(qp->rq.q);
		return ret;
	}
	ibqp->qp_num = qpn;
	return 0;
}

static int ixrc_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibqp->device);
	struct ixrc_qp *qp = to_iqp(ibqp);
	enum ib_qp_state cur, next;
	unsigned long flags;
	int ret = 0;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	spin_lock_irqsave(&dev->lock, flags);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, qp->type, mask)) {
		ret = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_PORT) && attr->port_num != 1) {
		ret = -EINVAL;
		goto out;
	}
	if ((mask & IB_QP_PATH_MTU) && attr->path_mtu > IB_MTU_4096) {
		ret = -EINVAL;
		goto out;
	}
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = attr->path_mtu;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_STATE) {
		qp->state = next;
		if (next == IB_QPS_ERR)
			ixrc_flush_qp(dev, qp);
		if (next == IB_QPS_RESET) {
			qp->rq.head = 0;
			qp->rq.count = 0;
			ixrc_drop_sends(dev, qp);
		}
		/* a peer may wait for this QP to reach RTR, or its
		 * sends to be flushed */
		ixrc_kick(dev);
	}
out:
	spin_unlock_irqrestore(&dev->lock, flags);
	return ret;
}

static int ixrc_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_qp_init_attr *init)
{
	struct ixrc_qp *qp = to_iqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->qkey = qp->qkey;
	attr->dest_qp_num = qp->dest_qpn;
	attr->port_num = qp->port;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.size;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	init->qp_type = qp->type;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

static int ixrc_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct ixrc_dev *dev = to_idev(ibqp->device);
	struct ixrc_qp *qp = to_iqp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	xa_erase(&dev->qps, ibqp->qp_num);
	ixrc_forget_qp(dev, qp);
	spin_unlock_irqrestore(&dev->lock, flags);
	kvfree(qp->rq.q);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Registration                                                         */

/* keep sorted */
static const struct ib_device_ops ixrc_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = IXRC_UVERBS_ABI,

	.alloc_pd = ixrc_alloc_pd,
	.alloc_ucontext = ixrc_alloc_ucontext,
	.alloc_xrcd = ixrc_alloc_xrcd,
	.create_ah = ixrc_create_ah,
	.create_cq = ixrc_create_cq,
	.create_qp = ixrc_create_qp,
	.create_srq = ixrc_create_srq,
	.create_user_ah = ixrc_create_ah,
	.dealloc_pd = ixrc_dealloc_pd,
	.dealloc_ucontext = ixrc_dealloc_ucontext,
	.dealloc_xrcd = ixrc_dealloc_xrcd,
	.dereg_mr = ixrc_dereg_mr,
	.destroy_ah = ixrc_destroy_ah,
	.destroy_cq = ixrc_destroy_cq,
	.destroy_qp = ixrc_destroy_qp,
	.destroy_srq = ixrc_destroy_srq,
	.get_dma_mr = ixrc_get_dma_mr,
	.get_link_layer = ixrc_get_link_layer,
	.get_port_immutable = ixrc_get_port_immutable,
	.modify_qp = ixrc_modify_qp,
	.modify_srq = ixrc_modify_srq,
	.poll_cq = ixrc_poll_cq,
	.post_recv = ixrc_post_recv,
	.post_send = ixrc_post_send,
	.post_srq_recv = ixrc_post_srq_recv,
	.query_device = ixrc_query_device,
	.query_gid = ixrc_query_gid,
	.query_pkey = ixrc_query_pkey,
	.query_port = ixrc_query_port,
	.query_qp = ixrc_query_qp,
	.query_srq = ixrc_query_srq,
	.query_ucontext = ixrc_query_ucontext,
	.reg_user_mr = ixrc_reg_user_mr,
	.req_notify_cq = ixrc_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, ixrc_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, ixrc_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, ixrc_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, ixrc_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, ixrc_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, ixrc_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, ixrc_xrcd, ibxrcd),
};

static int __init ixrc_init(void)
{
	struct ixrc_dev *dev;
	int ret;

	dev = ib_alloc_device(ixrc_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	spin_lock_init(&dev->lock);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&dev->cqs);
	INIT_LIST_HEAD(&dev->pending);
	INIT_DELAYED_WORK(&dev->rnr_work, ixrc_rnr_work);
	dev->next_qpn = 2;
	dev->next_srqn = 1;
	dev->next_key = 1;

	dev->ibdev.node_type = RDMA_NODE_IB_CA;
	dev->ibdev.phys_port_cnt = 1;
	dev->ibdev.num_comp_vectors = 1;
	dev->ibdev.node_guid = cpu_to_be64(0x1bad00000000c0deull);
	strscpy(dev->ibdev.node_desc, "ibvct soft XRC device",
		sizeof(dev->ibdev.node_desc));
	/* the generic data-path write commands are opt-in (6.1 core/device.c
	 * _ib_alloc_device sets the rest of uverbs_cmd_mask; rxe opts into
	 * POST_SEND and REQ_NOTIFY_CQ): without these bits uverbs answers
	 * EOPNOTSUPP whatever ops are set */
	dev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV) |
		BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&dev->ibdev, &ixrc_dev_ops);

	/* no DMA device: the core's virtual DMA (CONFIG_INFINIBAND_VIRT_DMA) */
	ret = ib_register_device(&dev->ibdev, IXRC_NAME_PREFIX "%d", NULL);
	if (ret) {
		pr_err("ixrc: ib_register_device: %d\n", ret);
		ib_dealloc_device(&dev->ibdev);
		return ret;
	}
	ixrc_the_dev = dev;
	pr_info("ixrc: registered %s\n", dev_name(&dev->ibdev.dev));
	return 0;
}

static void __exit ixrc_exit(void)
{
	struct ixrc_dev *dev = ixrc_the_dev;
	unsigned long flags;

	/* every QP is gone with the device: nothing waits for an RNR retry */
	ib_unregister_device(&dev->ibdev);
	spin_lock_irqsave(&dev->lock, flags);
	dev->dying = true;
	spin_unlock_irqrestore(&dev->lock, flags);
	cancel_delayed_work_sync(&dev->rnr_work);
	ib_dealloc_device(&dev->ibdev);
}

module_init(ixrc_init);
module_exit(ixrc_exit);
MODULE_DESCRIPTION("ibvct soft RDMA device with XRC (test use only)");
MODULE_LICENSE("Dual MIT/GPL");
