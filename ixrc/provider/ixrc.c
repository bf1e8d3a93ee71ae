// SPDX-License-Identifier: MIT
/*
 * libibvct-ixrc.so: the rdma-core provider of ibvct's soft XRC device
 * (ixrc), for Debian's own libibverbs 44: loaded by absolute
 * path from RDMAV_DRIVERS, it registers with verbs_register_driver_34 and
 * matches the devices named ixrc* (the module's driver id is
 * RDMA_DRIVER_UNKNOWN, which libibverbs never matches by id).
 *
 * Every op is libibverbs' generic command (ibv_cmd_*): the device's queues
 * are in the kernel, posted to and polled through uverbs' write commands;
 * the new post-send API builds its batch here and posts it with one command,
 * an extended CQ reads each completion with the poll command (below).
 * The one thing of our own: an XRC_SEND WR's remote_srqn rides in
 * send_flags (ixrc-abi.h), as uverbs' post_send has no field for it.
 * Import (ibv_import_device, _pd, _mr) as rdma-core 44's mlx5 has it,
 * on uverbs' generic methods: QUERY_CONTEXT, INFO_HANDLES, QUERY_MR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>

#include "verbs-private-34.h"
#include "../ixrc-abi.h"

struct ixrc_device {
	struct verbs_device vdev;
};

struct ixrc_context {
	struct verbs_context vctx;
};

/*
 * Room after verbs_qp for a newer libibverbs whose ibv_qp_ex is larger than
 * the 44 headers' (56: +8, wr_flush): the library writes comp_mask and
 * xrcd after its own ibv_qp_ex (ixrc_qpx_mark_off).
 */
#define IXRC_QP_ROOM	64

/* One WR of a batch of the new post-send API, with its SGEs. */
struct ixrc_bwr {
	struct ibv_send_wr wr;
	struct ibv_sge *sge;	/* sge1, or a list of its own */
	struct ibv_sge sge1;
	void *inl;		/* inline data, copied when set */
	bool addr_set;		/* UD: its address; XRC_SEND: its SRQ number */
};

struct ixrc_qp {
	union {
		struct verbs_qp vqp;
		char room[sizeof(struct verbs_qp) + IXRC_QP_ROOM];
	};
	/* the caps the kernel granted, for the builders' checks */
	uint32_t max_send_wr, max_send_sge, max_inline;
	struct ixrc_bwr *b;	/* the batch being built */
	size_t bn, bcap;
	int berr;		/* its first error */
};

struct ixrc_cq {
	struct verbs_cq vcq;
	struct ibv_wc cur;	/* the completion the read functions read */
};

struct ixrc_srq {
	struct verbs_srq vsrq;
};

#define to_vsrq(s) ((struct verbs_srq *)(s))

/* the new post-send API, below the QP's verbs */
static int ixrc_send_ops(enum ibv_qp_type type, uint64_t *sup);
static void ixrc_qp_ex_fill(struct ixrc_qp *qp, enum ibv_qp_type type);
static void ixrc_batch_free(struct ixrc_qp *qp);

/* ---- device, port ---- */

static int ixrc_query_device_ex(struct ibv_context *ctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);

	return ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
					&resp_size);
}

static int ixrc_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

/* ---- PD, XRCD, MR, AH ---- */

static struct ibv_pd *ixrc_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	errno = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp,
				 sizeof(resp));
	if (errno) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int ixrc_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_xrcd *ixrc_open_xrcd(struct ibv_context *ctx,
				       struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *x;

	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	errno = ibv_cmd_open_xrcd(ctx, x, sizeof(*x), attr, &cmd, sizeof(cmd),
				  &resp, sizeof(resp));
	if (errno) {
		free(x);
		return NULL;
	}
	return &x->xrcd;
}

static int ixrc_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct verbs_xrcd *x = (struct verbs_xrcd *)xrcd;
	int ret = ibv_cmd_close_xrcd(x);

	if (!ret)
		free(x);
	return ret;
}

static struct ibv_mr *ixrc_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	errno = ibv_cmd_reg_mr(pd, addr, len, hca_va, access, vmr, &cmd,
			       sizeof(cmd), &resp, sizeof(resp));
	if (errno) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int ixrc_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

static struct ibv_ah *ixrc_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp;
	struct ibv_ah *ah;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	errno = ibv_cmd_create_ah(pd, ah, attr, &resp, sizeof(resp));
	if (errno) {
		free(ah);
		return NULL;
	}
	return ah;
}

static int ixrc_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (!ret)
		free(ah);
	return ret;
}

/* ---- CQ ---- */

static struct ibv_cq *ixrc_create_cq(struct ibv_context *ctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct ib_uverbs_create_cq_resp resp;
	struct ibv_create_cq cmd;
	struct ibv_cq *cq;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	errno = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, cq, &cmd,
				  sizeof(cmd), &resp, sizeof(resp));
	if (errno) {
		free(cq);
		return NULL;
	}
	return cq;
}

static int ixrc_destroy_cq(struct ibv_cq *cq)
{
	int ret = ibv_cmd_destroy_cq(cq);

	if (!ret)
		free(cq);
	return ret;
}

/* ---- SRQ ---- */

static struct ibv_srq *ixrc_create_srq(struct ibv_pd *pd,
				       struct ibv_srq_init_attr *attr)
{
	struct ib_uverbs_create_srq_resp resp;
	struct ibv_create_srq cmd;
	struct ixrc_srq *srq;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	errno = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				   &resp, sizeof(resp));
	if (errno) {
		free(srq);
		return NULL;
	}
	return &srq->vsrq.srq;
}

static struct ibv_srq *ixrc_create_srq_ex(struct ibv_context *ctx,
					  struct ibv_srq_init_attr_ex *attr)
{
	struct ib_uverbs_create_srq_resp resp;
	struct ibv_create_xsrq cmd;
	struct ixrc_srq *srq;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	errno = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				      &resp, sizeof(resp));
	if (errno) {
		free(srq);
		return NULL;
	}
	return &srq->vsrq.srq;
}

static int ixrc_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			   int mask)
{
	struct ibv_modify_srq cmd;

	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

static int ixrc_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int ixrc_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	/* uverbs answers a basic SRQ's create with no number (SRQX-12):
	 * refused, as mlx4 does */
	if (to_vsrq(srq)->srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	/* create_srq_ex stored the kernel's create_srq_resp.srqn (SRQX-11) */
	*srq_num = to_vsrq(srq)->srq_num;
	return 0;
}

static int ixrc_destroy_srq(struct ibv_srq *srq)
{
	int ret = ibv_cmd_destroy_srq(srq);

	if (!ret)
		free(srq);
	return ret;
}

/* ---- QP ---- */

static struct ibv_qp *ixrc_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_create_qp cmd;
	struct ixrc_qp *qp;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	errno = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				  &resp, sizeof(resp));
	if (errno) {
		free(qp);
		return NULL;
	}
	return &qp->vqp.qp;
}

static struct ibv_qp *ixrc_create_qp_ex(struct ibv_context *ctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_create_qp cmd;
	struct ib_uverbs_ex_create_qp_resp resp_ex;
	struct ibv_create_qp_ex cmd_ex;
	struct ixrc_qp *qp;

	uint64_t sup;

	/* the new post-send API: the operations its type builds, before
	 * anything else (WRX-02; ixrc_send_ops) */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (ixrc_send_ops(attr->qp_type, &sup) || (attr->send_ops_flags & ~sup))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	/* As mlx5 and mlx4 do (rdma-core v44.0 providers/mlx5/verbs.c:2081,
	 * mlx4/verbs.c:992): a mask bit beyond PD and XRCD goes by the extended
	 * command, whose mask takes CREATE_FLAGS (libibverbs/cmd_qp.c:434
	 * ibv_cmd_create_qp_ex2; QPX-04). */
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD))
		errno = ibv_cmd_create_qp_ex2(ctx, &qp->vqp, attr, &cmd_ex, sizeof(cmd_ex),
					      &resp_ex, sizeof(resp_ex));
	else
		errno = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd, sizeof(cmd),
					     &resp, sizeof(resp));
	if (errno) {
		free(qp);
		return NULL;
	}
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_inline = attr->cap.max_inline_data;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		ixrc_qp_ex_fill(qp, attr->qp_type);
	return &qp->vqp.qp;
}

static struct ibv_qp *ixrc_open_qp(struct ibv_context *ctx,
				   struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct ixrc_qp *qp;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	errno = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->room), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (errno) {
		free(qp);
		return NULL;
	}
	return &qp->vqp.qp;
}

static int ixrc_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int mask, struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
}

static int ixrc_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int mask)
{
	struct ibv_modify_qp cmd;

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

static int ixrc_destroy_qp(struct ibv_qp *qp)
{
	int ret = ibv_cmd_destroy_qp(qp);

	if (!ret) {
		struct ixrc_qp *iqp = (struct ixrc_qp *)qp;

		ixrc_batch_free(iqp);
		free(iqp->b);
		free(iqp);
	}
	return ret;
}

/*
 * XRC_SEND: each WR goes to the kernel with remote_srqn in send_flags
 * (ixrc-abi.h); the caller's WRs are copied, never changed. Every other
 * type passes the caller's list as it is, and nothing reads qp_type.xrc
 * of its WRs (WR-02).
 */
static int ixrc_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	struct ibv_send_wr stack[16], *copy = stack, *w, *bad = NULL;
	size_t n = 0, i;
	int ret;

	if (qp->qp_type != IBV_QPT_XRC_SEND)
		return ibv_cmd_post_send(qp, wr, bad_wr);
	for (w = wr; w; w = w->next)
		n++;
	if (n > sizeof(stack) / sizeof(stack[0])) {
		copy = calloc(n, sizeof(*copy));
		if (!copy) {
			*bad_wr = wr;
			return ENOMEM;
		}
	}
	for (w = wr, i = 0; w; w = w->next, i++) {
		if (w->qp_type.xrc.remote_srqn > IXRC_SEND_SRQN_MAX ||
		    (w->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				       IBV_SEND_SOLICITED | IBV_SEND_INLINE |
				       IBV_SEND_IP_CSUM))) {
			*bad_wr = w;
			ret = EINVAL;
			goto out;
		}
		/* only what a 1.1.8 WR holds (it may end at remote_srqn, WR-01):
		 * ibv_cmd_post_send reads no byte past the 72 before it */
		memset(&copy[i], 0, sizeof(copy[i]));
		memcpy(&copy[i], w, offsetof(struct ibv_send_wr, qp_type) +
		       sizeof(w->qp_type.xrc.remote_srqn));
		copy[i].next = w->next ? &copy[i + 1] : NULL;
		copy[i].send_flags |= IXRC_SEND_XRC |
			(w->qp_type.xrc.remote_srqn << IXRC_SEND_SRQN_SHIFT);
	}
	ret = ibv_cmd_post_send(qp, copy, &bad);
	if (ret && bad) {
		for (w = wr, i = 0; w && &copy[i] != bad; w = w->next, i++)
			;
		*bad_wr = w ? w : wr;
	}
out:
	if (copy != stack)
		free(copy);
	return ret;
}

/* ---- the new post-send API (ibv_wr_*) and extended CQs ----
 *
 * The device's queues are the kernel's, posted to by the generic
 * post_send command, so a batch of ibv_wr_* calls is built here, as a list
 * of ibv_send_wr, and ibv_wr_complete posts it in one command (through
 * ixrc_post_send: XRC_SEND's remote_srqn as the legacy path carries it).
 * What a builder cannot take fails the whole batch before the command, as
 * mlx5 fails it (rdma-core v44.0 providers/mlx5/qp.c:1244
 * _common_wqe_init_op, :1707 set_sge_list, :1848 inline; WRX-03, WRX-04):
 * more WRs than the send queue holds, an SGE list past max_send_sge, inline
 * data past max_inline_data (the caps the kernel granted at create) are
 * ENOMEM, and nothing of the batch is posted. A batch that fits but meets a
 * send queue still holding earlier WRs is the kernel's to refuse: its
 * post_send stops at the WR that does not fit (ENOMEM), the ones before it
 * posted. Inline data is copied when it is set, as a WQE would hold it: the
 * caller may reuse its buffer before ibv_wr_complete.
 *
 * Which operations each type builds (WRX-02): the ones the kernel's
 * ixrc_post_one carries: RC and XRC_SEND sends (with immediate), RDMA
 * write (with immediate) and read, both atomics; UC sends and writes; UD
 * sends. No SEND_WITH_INV, LOCAL_INV, BIND_MW, TSO, ATOMIC_WRITE or FLUSH;
 * XRC_RECV and any other type have no send queue: EOPNOTSUPP.
 */
#define IXRC_OPS_UD	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define IXRC_OPS_UC	(IXRC_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
#define IXRC_OPS_RC	(IXRC_OPS_UC | IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static int ixrc_send_ops(enum ibv_qp_type type, uint64_t *sup)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		*sup = IXRC_OPS_RC;
		return 0;
	case IBV_QPT_UC:
		*sup = IXRC_OPS_UC;
		return 0;
	case IBV_QPT_UD:
		*sup = IXRC_OPS_UD;
		return 0;
	default:
		return EOPNOTSUPP;
	}
}

static inline struct ixrc_qp *to_ixrc_qpx(struct ibv_qp_ex *x)
{
	return (struct ixrc_qp *)x;	/* ibv_qp_ex is the first member */
}

static void ixrc_batch_free(struct ixrc_qp *qp)
{
	size_t i;

	for (i = 0; i < qp->bn; i++) {
		if (qp->b[i].sge != &qp->b[i].sge1)
			free(qp->b[i].sge);
		free(qp->b[i].inl);
	}
	qp->bn = 0;
	qp->berr = 0;
}

/* The next WR of the batch, NULL when the batch has failed already or
 * fails here (the send queue holds fewer). */
static struct ixrc_bwr *ixrc_wr_new(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct ixrc_qp *qp = to_ixrc_qpx(x);
	struct ixrc_bwr *w;

	if (qp->berr)
		return NULL;
	if (qp->bn >= qp->max_send_wr) {
		qp->berr = ENOMEM;	/* WRX-04: past the send queue */
		return NULL;
	}
	if (qp->bn == qp->bcap) {
		size_t cap = qp->bcap ? 2 * qp->bcap : 16;
		struct ixrc_bwr *nb = realloc(qp->b, cap * sizeof(*nb));

		if (!nb) {
			qp->berr = ENOMEM;
			return NULL;
		}
		qp->b = nb;
		qp->bcap = cap;
	}
	w = &qp->b[qp->bn++];
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = x->wr_id;
	/* inline comes from wr_set_inline_data only, as on mlx5 */
	w->wr.send_flags = x->wr_flags & ~(unsigned int)IBV_SEND_INLINE;
	w->wr.opcode = op;
	w->sge = &w->sge1;
	return w;
}

/* The WR the setters apply to: the last one built, if the batch lives. */
static struct ixrc_bwr *ixrc_wr_cur(struct ibv_qp_ex *x)
{
	struct ixrc_qp *qp = to_ixrc_qpx(x);

	return qp->berr || !qp->bn ? NULL : &qp->b[qp->bn - 1];
}

static void ixrc_wr_send(struct ibv_qp_ex *x)
{
	ixrc_wr_new(x, IBV_WR_SEND);
}

static void ixrc_wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct ixrc_bwr *w = ixrc_wr_new(x, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->wr.imm_data = imm;
}

static void ixrc_wr_rdma(struct ibv_qp_ex *x, enum ibv_wr_opcode op,
			 uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct ixrc_bwr *w = ixrc_wr_new(x, op);

	if (!w)
		return;
	w->wr.wr.rdma.rkey = rkey;
	w->wr.wr.rdma.remote_addr = raddr;
	w->wr.imm_data = imm;
}

static void ixrc_wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey,
			       uint64_t raddr)
{
	ixrc_wr_rdma(x, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void ixrc_wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey,
				   uint64_t raddr, __be32 imm)
{
	ixrc_wr_rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void ixrc_wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey,
			      uint64_t raddr)
{
	ixrc_wr_rdma(x, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void ixrc_wr_atomic(struct ibv_qp_ex *x, enum ibv_wr_opcode op,
			   uint32_t rkey, uint64_t raddr, uint64_t cmp_add,
			   uint64_t swap)
{
	struct ixrc_bwr *w = ixrc_wr_new(x, op);

	if (!w)
		return;
	w->wr.wr.atomic.rkey = rkey;
	w->wr.wr.atomic.remote_addr = raddr;
	w->wr.wr.atomic.compare_add = cmp_add;
	w->wr.wr.atomic.swap = swap;
}

static void ixrc_wr_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey,
				   uint64_t raddr, uint64_t compare,
				   uint64_t swap)
{
	ixrc_wr_atomic(x, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare, swap);
}

static void ixrc_wr_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey,
				     uint64_t raddr, uint64_t add)
{
	ixrc_wr_atomic(x, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

static void ixrc_wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ixrc_bwr *w = ixrc_wr_cur(x);

	if (!w)
		return;
	w->wr.wr.ud.ah = ah;
	w->wr.wr.ud.remote_qpn = remote_qpn;
	w->wr.wr.ud.remote_qkey = remote_qkey;
	w->addr_set = true;
}

static void ixrc_wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	struct ixrc_bwr *w = ixrc_wr_cur(x);

	if (!w)
		return;
	w->wr.qp_type.xrc.remote_srqn = srqn;	/* WRX-05 */
	w->addr_set = true;
}

static void ixrc_wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr,
			    uint32_t length)
{
	struct ixrc_bwr *w = ixrc_wr_cur(x);

	if (!w)
		return;
	/* no data segment for a zero length, as mlx5 builds none (rdma-core
	 * v44.0 providers/mlx5/qp.c:1635) */
	w->sge1 = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
	w->wr.num_sge = length ? 1 : 0;
}

static void ixrc_wr_set_sge_list(struct ibv_qp_ex *x, size_t n,
				 const struct ibv_sge *list)
{
	struct ixrc_qp *qp = to_ixrc_qpx(x);
	struct ixrc_bwr *w = ixrc_wr_cur(x);

	if (!w)
		return;
	if (n > qp->max_send_sge) {
		qp->berr = ENOMEM;	/* WRX-04: a longer list than the WQE holds */
		return;
	}
	if (n > 1) {
		w->sge = calloc(n, sizeof(*w->sge));
		if (!w->sge) {
			w->sge = &w->sge1;
			qp->berr = ENOMEM;
			return;
		}
	}
	if (n)
		memcpy(w->sge, list, n * sizeof(*list));
	w->wr.num_sge = (int)n;
}

static void ixrc_wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n,
					 const struct ibv_data_buf *bufs)
{
	struct ixrc_qp *qp = to_ixrc_qpx(x);
	struct ixrc_bwr *w = ixrc_wr_cur(x);
	size_t len = 0, i;
	char *p;

	if (!w)
		return;
	for (i = 0; i < n; i++)
		len += bufs[i].length;
	if (len > qp->max_inline) {
		qp->berr = ENOMEM;	/* WRX-04: past max_inline_data */
		return;
	}
	/* one buffer, copied now: the kernel reads it at the post */
	free(w->inl);
	w->inl = malloc(len ? len : 1);
	if (!w->inl) {
		qp->berr = ENOMEM;
		return;
	}
	for (i = 0, p = w->inl; i < n; p += bufs[i].length, i++)
		memcpy(p, bufs[i].addr, bufs[i].length);
	w->sge1 = (struct ibv_sge){ .addr = (uintptr_t)w->inl, .length = (uint32_t)len };
	w->wr.num_sge = 1;
	w->wr.send_flags |= IBV_SEND_INLINE;
}

static void ixrc_wr_set_inline_data(struct ibv_qp_ex *x, void *addr,
				    size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	ixrc_wr_set_inline_data_list(x, 1, &b);
}

static void ixrc_wr_start(struct ibv_qp_ex *x)
{
	ixrc_batch_free(to_ixrc_qpx(x));
}

static int ixrc_wr_complete(struct ibv_qp_ex *x)
{
	struct ixrc_qp *qp = to_ixrc_qpx(x);
	struct ibv_send_wr *bad = NULL;
	size_t i;
	int ret = qp->berr;

	/* a WR without its address (a UD one without an AH, an XRC_SEND one
	 * without its SRQ number; WR-04) fails the whole batch, as the
	 * reference's device does, before anything is posted */
	for (i = 0; !ret && i < qp->bn; i++)
		if (((qp->vqp.qp.qp_type == IBV_QPT_UD || qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND) &&
		     !qp->b[i].addr_set) ||
		    (qp->vqp.qp.qp_type == IBV_QPT_UD && !qp->b[i].wr.wr.ud.ah))
			ret = EINVAL;
	if (!ret && qp->bn) {
		for (i = 0; i < qp->bn; i++) {
			qp->b[i].wr.sg_list = qp->b[i].sge;
			qp->b[i].wr.next = i + 1 < qp->bn ? &qp->b[i + 1].wr : NULL;
		}
		ret = ixrc_post_send(&qp->vqp.qp, &qp->b[0].wr, &bad);
	}
	ixrc_batch_free(qp);
	return ret;
}

static void ixrc_wr_abort(struct ibv_qp_ex *x)
{
	ixrc_batch_free(to_ixrc_qpx(x));
}

/*
 * The mark ibv_qp_to_qp_ex reads (VERBS_QP_EX in verbs_qp's comp_mask,
 * rdma-core v44.0 libibverbs/verbs.c:668) sits after ibv_qp_ex, whose size
 * is the running library's: rdma-core 56 appended wr_flush (v56.1
 * libibverbs/verbs.h), so its verbs_qp puts comp_mask 8 bytes later than
 * the 44 headers this provider is built with, under the same private ABI
 * IBVERBS_PRIVATE_34. The library's offset is learnt once, from
 * ibv_qp_to_qp_ex itself: it answers non-NULL for a zeroed verbs_qp with
 * the mark at the offset it reads, and touches nothing else.
 */
static size_t ixrc_qpx_mark_off(void)
{
	static size_t off;
	size_t o;

	if (off)
		return off;
	for (o = sizeof(struct ibv_qp_ex) - 16; o <= sizeof(struct ibv_qp_ex) + IXRC_QP_ROOM - 16;
	     o += 8) {
		uint64_t probe[(sizeof(struct verbs_qp) + IXRC_QP_ROOM) / 8] = { 0 };
		uint32_t mark = VERBS_QP_EX;

		memcpy((char *)probe + o, &mark, sizeof(mark));
		if (ibv_qp_to_qp_ex((struct ibv_qp *)probe)) {
			off = o;
			return off;
		}
	}
	off = offsetof(struct verbs_qp, comp_mask);	/* the headers' own */
	return off;
}

static void ixrc_qp_ex_fill(struct ixrc_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;
	uint32_t mark;
	char *cm = (char *)&qp->vqp + ixrc_qpx_mark_off();

	memcpy(&mark, cm, sizeof(mark));
	mark |= VERBS_QP_EX;
	memcpy(cm, &mark, sizeof(mark));
	x->wr_start = ixrc_wr_start;
	x->wr_complete = ixrc_wr_complete;
	x->wr_abort = ixrc_wr_abort;
	x->wr_send = ixrc_wr_send;
	x->wr_send_imm = ixrc_wr_send_imm;
	x->wr_set_sge = ixrc_wr_set_sge;
	x->wr_set_sge_list = ixrc_wr_set_sge_list;
	x->wr_set_inline_data = ixrc_wr_set_inline_data;
	x->wr_set_inline_data_list = ixrc_wr_set_inline_data_list;
	if (type == IBV_QPT_UD) {
		x->wr_set_ud_addr = ixrc_wr_set_ud_addr;
		return;
	}
	x->wr_rdma_write = ixrc_wr_rdma_write;
	x->wr_rdma_write_imm = ixrc_wr_rdma_write_imm;
	if (type == IBV_QPT_UC)
		return;
	x->wr_rdma_read = ixrc_wr_rdma_read;
	x->wr_atomic_cmp_swp = ixrc_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = ixrc_wr_atomic_fetch_add;
	if (type == IBV_QPT_XRC_SEND)
		x->wr_set_xrc_srqn = ixrc_wr_set_xrc_srqn;
}

/* ---- extended CQs: each completion read by the generic poll command into
 * the CQ's current one, where the read functions find it (CQX-02). The
 * standard fields only: the device has no completion clock (CQX-06). ---- */

static inline struct ixrc_cq *to_ixrc_cqx(struct ibv_cq_ex *c)
{
	return (struct ixrc_cq *)c;	/* verbs_cq's union is the first member */
}

static int ixrc_cqx_next(struct ibv_cq_ex *c)
{
	struct ixrc_cq *cq = to_ixrc_cqx(c);
	int n = ibv_cmd_poll_cq(&cq->vcq.cq, 1, &cq->cur);

	if (n < 0)
		return errno ? errno : EIO;	/* the command failed: -1, errno set */
	if (n == 0)
		return ENOENT;		/* CQX-03 */
	c->status = cq->cur.status;
	c->wr_id = cq->cur.wr_id;
	return 0;
}

static int ixrc_cqx_start(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL;
	return ixrc_cqx_next(c);
}

static void ixrc_cqx_end(struct ibv_cq_ex *c)
{
}

static enum ibv_wc_opcode ixrc_cqx_opcode(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.opcode;
}

static uint32_t ixrc_cqx_vendor_err(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.vendor_err;
}

static uint32_t ixrc_cqx_byte_len(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.byte_len;
}

static __be32 ixrc_cqx_imm_data(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.imm_data;
}

static uint32_t ixrc_cqx_qp_num(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.qp_num;
}

static uint32_t ixrc_cqx_src_qp(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.src_qp;
}

static unsigned int ixrc_cqx_wc_flags(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.wc_flags;
}

static uint32_t ixrc_cqx_slid(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.slid;
}

static uint8_t ixrc_cqx_sl(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.sl;
}

static uint8_t ixrc_cqx_dlid_path_bits(struct ibv_cq_ex *c)
{
	return to_ixrc_cqx(c)->cur.dlid_path_bits;
}

/*
 * create_cq_ex checks as mlx5's create_cq does (rdma-core v44.0
 * providers/mlx5/verbs.c:964; the reference's default path, CQX-01): no
 * CQE is EINVAL, a comp_mask bit or creation flag it lacks EINVAL, a
 * wc_flags bit beyond the standard fields EOPNOTSUPP, a PD that is not a
 * parent domain (ixrc has none) EINVAL. IGNORE_OVERRUN goes to the kernel,
 * whose CQ then raises no error event when it overflows; SINGLE_THREADED
 * asks for nothing here (the poll is a command, locked by the kernel).
 */
static struct ibv_cq_ex *ixrc_create_cq_ex(struct ibv_context *ctx,
					   struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t masks = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	const uint32_t flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
			       IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	struct ib_uverbs_ex_create_cq_resp resp;
	struct ixrc_cq *cq;
	int ret;

	if (!attr->cqe || (attr->comp_mask & ~masks) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (attr->flags & ~flags)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) && attr->parent_domain) ||
	    attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq_ex(ctx, attr, &cq->vcq, NULL, 0, &resp,
				   sizeof(resp), 0);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->vcq.cq_ex.start_poll = ixrc_cqx_start;
	cq->vcq.cq_ex.next_poll = ixrc_cqx_next;
	cq->vcq.cq_ex.end_poll = ixrc_cqx_end;
	cq->vcq.cq_ex.read_opcode = ixrc_cqx_opcode;
	cq->vcq.cq_ex.read_vendor_err = ixrc_cqx_vendor_err;
	cq->vcq.cq_ex.read_wc_flags = ixrc_cqx_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq->vcq.cq_ex.read_byte_len = ixrc_cqx_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cq->vcq.cq_ex.read_imm_data = ixrc_cqx_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq->vcq.cq_ex.read_qp_num = ixrc_cqx_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cq->vcq.cq_ex.read_src_qp = ixrc_cqx_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cq->vcq.cq_ex.read_slid = ixrc_cqx_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cq->vcq.cq_ex.read_sl = ixrc_cqx_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cq->vcq.cq_ex.read_dlid_path_bits = ixrc_cqx_dlid_path_bits;
	return &cq->vcq.cq_ex;
}

/* ---- context ---- */

static void ixrc_free_context(struct ibv_context *ibctx);

/* keep sorted */
static const struct verbs_context_ops ixrc_ctx_ops;

/* ---- import (the ops rdma-core 44's mlx5 has: providers/mlx5/mlx5.c:2634,
 * verbs.c:766-826). A second context on the same uverbs file, and the
 * file's PDs and MRs by their handles; unimport frees only our structure.
 * ---- */

/* Is handle an object of type obj in this context's file? uverbs' generic
 * UVERBS_METHOD_INFO_HANDLES lists a type's handles (linux v6.1
 * uverbs_std_types_device.c): 0, or the errno. */
static int ixrc_handle_listed(struct ibv_context *ctx, uint16_t obj,
			      uint32_t handle)
{
	enum { MAXH = 1024 };
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[3];
	} req;
	uint32_t *list, total = 0, i;
	int ret = ENOENT;

	list = calloc(MAXH, sizeof(*list));
	if (!list)
		return ENOMEM;
	memset(&req, 0, sizeof(req));
	req.hdr.length = sizeof(req);
	req.hdr.object_id = UVERBS_OBJECT_DEVICE;
	req.hdr.method_id = UVERBS_METHOD_INFO_HANDLES;
	req.hdr.num_attrs = 3;
	req.attr[0].attr_id = UVERBS_ATTR_INFO_OBJECT_ID;
	req.attr[0].len = sizeof(uint64_t);
	req.attr[0].data = obj;
	req.attr[1].attr_id = UVERBS_ATTR_INFO_TOTAL_HANDLES;
	req.attr[1].len = sizeof(total);
	req.attr[1].data = (uintptr_t)&total;
	req.attr[2].attr_id = UVERBS_ATTR_INFO_HANDLES_LIST;
	req.attr[2].len = MAXH * sizeof(*list);
	req.attr[2].data = (uintptr_t)list;
	if (ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &req))
		ret = errno;
	else
		for (i = 0; i < total && i < MAXH; i++)
			if (list[i] == handle)
				ret = 0;
	free(list);
	return ret;
}

static struct verbs_context *ixrc_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	struct ixrc_context *ctx;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
		&((struct ixrc_context *)NULL)->vctx, 0 /* RDMA_DRIVER_UNKNOWN */);
	if (!ctx)
		return NULL;
	/* the kernel's answer for this file: its ucontext exists */
	errno = ibv_cmd_query_context(&ctx->vctx.context, NULL);
	if (errno) {
		int err = errno;

		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = err;
		return NULL;
	}
	verbs_set_ops(&ctx->vctx, &ixrc_ctx_ops);
	return &ctx->vctx;
}

static struct ibv_pd *ixrc_import_pd(struct ibv_context *ctx,
				     uint32_t pd_handle)
{
	struct verbs_mr probe;
	struct ibv_pd *pd, tmp;
	int ret;

	ret = ixrc_handle_listed(ctx, UVERBS_OBJECT_PD, pd_handle);
	if (ret == ENOENT) {
		/* not a PD: the kernel's typed lookup says whether the handle
		 * names another object (EINVAL) or none (ENOENT), as mlx5's
		 * PD query would (linux v6.1 rdma_core.c
		 * rdma_lookup_get_uobject) */
		memset(&tmp, 0, sizeof(tmp));
		tmp.context = ctx;
		memset(&probe, 0, sizeof(probe));
		ret = ibv_cmd_query_mr(&tmp, &probe, pd_handle);
		if (!ret)
			ret = EINVAL;
	}
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->context = ctx;
	pd->handle = pd_handle;
	return pd;
}

static void ixrc_unimport_pd(struct ibv_pd *pd)
{
	free(pd);
}

static struct ibv_mr *ixrc_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr)
		return NULL;
	ret = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static void ixrc_unimport_mr(struct ibv_mr *mr)
{
	free(mr);	/* ibv_mr is the first member of verbs_mr */
}

static const struct verbs_context_ops ixrc_ctx_ops = {
	.alloc_pd = ixrc_alloc_pd,
	.close_xrcd = ixrc_close_xrcd,
	.create_ah = ixrc_create_ah,
	.create_cq = ixrc_create_cq,
	.create_cq_ex = ixrc_create_cq_ex,
	.create_qp = ixrc_create_qp,
	.create_qp_ex = ixrc_create_qp_ex,
	.create_srq = ixrc_create_srq,
	.create_srq_ex = ixrc_create_srq_ex,
	.dealloc_pd = ixrc_dealloc_pd,
	.dereg_mr = ixrc_dereg_mr,
	.destroy_ah = ixrc_destroy_ah,
	.destroy_cq = ixrc_destroy_cq,
	.destroy_qp = ixrc_destroy_qp,
	.destroy_srq = ixrc_destroy_srq,
	.free_context = ixrc_free_context,
	.get_srq_num = ixrc_get_srq_num,
	.import_mr = ixrc_import_mr,
	.import_pd = ixrc_import_pd,
	.modify_qp = ixrc_modify_qp,
	.modify_srq = ixrc_modify_srq,
	.open_qp = ixrc_open_qp,
	.open_xrcd = ixrc_open_xrcd,
	.poll_cq = ibv_cmd_poll_cq,
	.post_recv = ibv_cmd_post_recv,
	.post_send = ixrc_post_send,
	.post_srq_recv = ibv_cmd_post_srq_recv,
	.query_device_ex = ixrc_query_device_ex,
	.query_port = ixrc_query_port,
	.query_qp = ixrc_query_qp,
	.query_srq = ixrc_query_srq,
	.reg_mr = ixrc_reg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.unimport_mr = ixrc_unimport_mr,
	.unimport_pd = ixrc_unimport_pd,
};

static struct verbs_context *ixrc_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd;
	struct ixrc_context *ctx;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
		&((struct ixrc_context *)NULL)->vctx, 0 /* RDMA_DRIVER_UNKNOWN */);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp,
				sizeof(resp)))
		goto err_uninit;
	verbs_set_ops(&ctx->vctx, &ixrc_ctx_ops);
	return &ctx->vctx;

err_uninit:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	return NULL;
}

static void ixrc_free_context(struct ibv_context *ibctx)
{
	/* ibv_context is the last member of verbs_context */
	struct ixrc_context *ctx = (struct ixrc_context *)((char *)ibctx -
		offsetof(struct ixrc_context, vctx.context));

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static struct verbs_device *ixrc_alloc_device(struct verbs_sysfs_dev *sysfs)
{
	struct ixrc_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->vdev : NULL;
}

static void ixrc_uninit_device(struct verbs_device *vdev)
{
	free(vdev);
}

static const struct verbs_match_ent ixrc_match[] = {
	VERBS_NAME_MATCH(IXRC_NAME_PREFIX, NULL),
	{},
};

static const struct verbs_device_ops ixrc_dev_ops = {
	.name = "ixrc",
	.match_min_abi_version = IXRC_UVERBS_ABI,
	.match_max_abi_version = IXRC_UVERBS_ABI,
	.match_table = ixrc_match,
	.alloc_device = ixrc_alloc_device,
	.uninit_device = ixrc_uninit_device,
	.alloc_context = ixrc_alloc_context,
	.import_context = ixrc_import_context,
};

static void __attribute__((constructor)) ixrc_register(void)
{
	verbs_register_driver_34(&ixrc_dev_ops);
}
