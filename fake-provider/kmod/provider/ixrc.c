// SPDX-License-Identifier: MIT
/*
 * libibvct-ixrc.so: the rdma-core provider of ibvct's soft XRC device
 * (fake-provider/kmod), for Debian's own libibverbs 44: loaded by absolute
 * path from RDMAV_DRIVERS, it registers with verbs_register_driver_34 and
 * matches the devices named ixrc* (the module's driver id is
 * RDMA_DRIVER_UNKNOWN, which libibverbs never matches by id).
 *
 * Every op is libibverbs' generic command (ibv_cmd_*): the device's queues
 * are in the kernel, posted to and polled through uverbs' write commands.
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

struct ixrc_qp {
	struct verbs_qp vqp;
};

struct ixrc_srq {
	struct verbs_srq vsrq;
};

#define to_vsrq(s) ((struct verbs_srq *)(s))

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

	/* no new post-send API (ibv_wr_*): the queues are the kernel's */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
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
	errno = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
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

	if (!ret)
		free(qp);
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
