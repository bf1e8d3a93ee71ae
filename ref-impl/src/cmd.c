/* SPDX-License-Identifier: MIT */
/*
 * The provider-side command layer: the checks rdma-core's libibverbs makes
 * in its ibv_cmd_* helpers (cmd.c, cmd_srq.c, cmd_qp.c), which a real
 * provider calls from its own ops before it talks to the kernel. They are
 * exported to providers in the IBVCT_PRIVATE_2 node (driver.h), and the
 * fake provider calls them as mlx5 or mlx4 call ibv_cmd_*, so a driver that
 * skips them (a quirk, or a driver profile that takes another path, as
 * mlx5 does for basic SRQs) really breaks these rules. The core's entry
 * points do not repeat them. Each check returns 0 or a positive errno
 * and, where rdma-core v44 does, also sets errno. The last two helpers are
 * what those ibv_cmd_* do once the kernel answered: fill an opened QP
 * (OPENQP-07) and, at a destroy, wait for the acknowledged events
 * (LIFE-09).
 */
#include <dirent.h>
#include <string.h>

#include "ri.h"

RI_EXPORT int verbs_cmd_open_xrcd(struct ibv_context *ctx,
				  const struct ibv_xrcd_init_attr *attr)
{
	(void)ctx;
	/* rdma-core v44.0 libibverbs/cmd.c:75-80 (errno left alone there) */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) /* @rule XRCD-02 */
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) == 0 || (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) == 0) /* @rule XRCD-01 */
		return EINVAL;
	return 0;
}

/* rdma-core v44.0 libibverbs/cmd_srq.c:70-98 (ibv_icmd_create_srq): the
 * type counts only with its bit; an unknown type passes to the kernel. */
static int ri_cmd_srq_type(const struct ibv_srq_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;
	enum ibv_srq_type type = (mask & IBV_SRQ_INIT_ATTR_TYPE) ?
				 attr->srq_type : IBV_SRQT_BASIC;

	if (type == IBV_SRQT_XRC && (!(mask & IBV_SRQ_INIT_ATTR_XRCD) || !(mask & IBV_SRQ_INIT_ATTR_CQ))) /* @rule SRQX-03 */
		return EINVAL;
	if (type == IBV_SRQT_TM &&
	    (!(mask & IBV_SRQ_INIT_ATTR_CQ) || !(mask & IBV_SRQ_INIT_ATTR_TM) ||
	     !attr->tm_cap.max_num_tags))
		return EINVAL;
	return 0;
}

RI_EXPORT int verbs_cmd_create_srq_ex(struct ibv_context *ctx,
				      const struct ibv_srq_init_attr_ex *attr)
{
	int ret;

	(void)ctx;
	/* rdma-core v44.0 libibverbs/cmd_srq.c:232-241 */
	if (attr->comp_mask >= IBV_SRQ_INIT_ATTR_RESERVED) { /* @rule SRQX-05 */
		errno = EOPNOTSUPP;
		return EOPNOTSUPP;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD)) { /* @rule SRQX-02 */
		errno = EINVAL;
		return EINVAL;
	}
	ret = ri_cmd_srq_type(attr);
	if (ret)
		errno = ret;
	return ret;
}

/* The create-QP command for both entries (rdma-core v44.0
 * libibverbs/cmd_qp.c:92-156, ibv_icmd_create_qp): which object bit each
 * type needs, and the receive caps XRC_SEND never has. */
static bool ri_cmd_qp_type_known(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		return true;
	default:
		return false;
	}
}

static int ri_cmd_qp(enum ibv_qp_type type, uint32_t mask, struct ibv_qp_cap *cap)
{
	if (!ri_cmd_qp_type_known(type)) /* @rule QPX-05 */
		return EINVAL;
	if (type == IBV_QPT_XRC_RECV) {
		if (!(mask & IBV_QP_INIT_ATTR_XRCD)) /* @rule QPX-03 */
			return EINVAL;
		return 0;
	}
	if (!(mask & IBV_QP_INIT_ATTR_PD)) /* @rule QPX-01 */
		return EINVAL;
	if (type == IBV_QPT_XRC_SEND) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	return 0;
}

/* The create flags libibverbs passes to the kernel (rdma-core v44.0
 * libibverbs/cmd_qp.c:36-42, checked at :182-186 in ibv_icmd_create_qp for
 * both entries); any other is EINVAL before the kernel sees it. The kernel
 * takes all of these (linux v6.1 drivers/infiniband/core/uverbs_cmd.c:1430
 * create_qp); whether the device does is its driver's. */
static int ri_cmd_qp_flags(const struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t sup = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | IBV_QP_CREATE_SCATTER_FCS |
			     IBV_QP_CREATE_CVLAN_STRIPPING | IBV_QP_CREATE_SOURCE_QPN |
			     IBV_QP_CREATE_PCI_WRITE_END_PADDING;

	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && (attr->create_flags & ~sup))
		return EINVAL;
	return 0;
}

/* ibv_cmd_create_qp_ex (known: its mask) and ibv_cmd_create_qp_ex2 (a wider
 * one), then ibv_icmd_create_qp's checks. */
static int ri_cmd_create_qp_ex(struct ibv_qp_init_attr_ex *attr, uint32_t known)
{
	int ret;

	if (attr->comp_mask & ~known) { /* @rule QPX-04 */
		errno = EINVAL;
		return EINVAL;
	}
	ret = ri_cmd_qp_flags(attr);
	if (!ret)
		ret = ri_cmd_qp(attr->qp_type, attr->comp_mask, &attr->cap);
	if (ret)
		errno = ret;
	return ret;
}

RI_EXPORT int verbs_cmd_create_qp_ex(struct ibv_context *ctx,
				     struct ibv_qp_init_attr_ex *attr)
{
	(void)ctx;
	/* rdma-core v44.0 libibverbs/cmd_qp.c:411-417 */
	return ri_cmd_create_qp_ex(attr, IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
}

/* The command rxe always sends, and mlx5 and mlx4 whenever a bit beyond
 * theirs for ibv_cmd_create_qp_ex is set (QPX-04): CREATE_FLAGS,
 * MAX_TSO_HEADER, IND_TABLE and RX_HASH too (rdma-core v44.0
 * libibverbs/cmd_qp.c:434-444). */
RI_EXPORT int verbs_cmd_create_qp_ex2(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *attr)
{
	(void)ctx;
	return ri_cmd_create_qp_ex(attr, IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				   IBV_QP_INIT_ATTR_CREATE_FLAGS |
				   IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
				   IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH |
				   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
}

/* ibv_cmd_create_qp: the 1.1 struct, sent as mask == PD (cmd_qp.c:385-394). */
RI_EXPORT int verbs_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	int ret;

	(void)pd;
	ret = ri_cmd_qp(attr->qp_type, IBV_QP_INIT_ATTR_PD, &attr->cap);
	if (ret)
		errno = ret;
	return ret;
}

RI_EXPORT int verbs_cmd_open_qp(struct ibv_context *ctx,
				const struct ibv_qp_open_attr *attr)
{
	(void)ctx;
	/* rdma-core v44.0 libibverbs/cmd.c:352-358 (errno left alone there) */
	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) /* @rule OPENQP-03 */
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_OPEN_ATTR_XRCD) || !(attr->comp_mask & IBV_QP_OPEN_ATTR_NUM) || !(attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE)) /* @rule OPENQP-02 */
		return EINVAL;
	return 0;
}

/*
 * The rest of ibv_cmd_open_qp once the kernel opened the QP (rdma-core
 * v44.0 libibverbs/cmd.c:371-388): the handle the kernel gave, the fields
 * restated from the request, no PD, CQs or SRQ, the state UNKNOWN until a
 * query says it (OPENQP-07), and the XRCD where the provider's verbs_qp
 * has room for it (vext_field_avail).
 */
RI_EXPORT void verbs_cmd_open_qp_resp(struct ibv_context *ctx, struct verbs_qp *vqp,
				      size_t vqp_size, const struct ibv_qp_open_attr *attr,
				      uint32_t handle)
{
	struct ibv_qp *qp = &vqp->qp;

	qp->handle = handle;
	qp->context = ctx;
	qp->qp_context = attr->qp_context;	/* whatever the CONTEXT bit says */
	qp->pd = NULL;
	qp->send_cq = NULL;
	qp->recv_cq = NULL;
	qp->srq = NULL;
	qp->qp_num = attr->qp_num;
	qp->qp_type = attr->qp_type;
	qp->state = IBV_QPS_UNKNOWN;
	qp->events_completed = 0;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	memset(&vqp->core, 0, sizeof(vqp->core));
	vqp->comp_mask = 0;
	if (offsetof(struct verbs_qp, xrcd) < vqp_size) {
		vqp->comp_mask = VERBS_QP_XRCD;
		vqp->xrcd = ri_container_of(attr->xrcd, struct verbs_xrcd, xrcd);
	}
}

/*
 * The end of ibv_cmd_destroy_qp once the kernel destroyed the QP (rdma-core
 * v44.0 libibverbs/cmd_qp.c:480-483): wait until the application has
 * acknowledged every async event it was handed for this handle (LIFE-09).
 * The count of events handed out is the library's (ibv_get_async_event),
 * as the kernel's events_reported counts the events read from its file.
 */
RI_EXPORT void verbs_cmd_destroy_qp(struct ibv_qp *qp)
{
	ri__wait_events_qp(qp);
}

/* The same ends of ibv_cmd_destroy_srq (cmd_srq.c: the SRQ's async events)
 * and ibv_cmd_destroy_cq (cmd_cq.c: its completion and async events). */
RI_EXPORT void verbs_cmd_destroy_srq(struct ibv_srq *srq)
{
	ri__wait_events_srq(srq);
}

RI_EXPORT void verbs_cmd_destroy_cq(struct ibv_cq *cq)
{
	ri__wait_events_cq(cq);
}

/*
 * ibv_cmd_query_device_any (rdma-core v44.0 libibverbs/cmd_device.c:521-680)
 * once the kernel answered with resp: the input and size checks, the
 * caller's attr_size bytes zeroed, each extended field copied only when
 * the caller's struct reaches its end (CAN_COPY, the struct grows with
 * each release), and phys_port_cnt_ex from the device's sysfs ports, else
 * the base count.
 */
static uint32_t ri_sysfs_num_ports(struct ibv_context *ctx)
{
	char path[IBV_SYSFS_PATH_MAX + 8];
	uint32_t n = 0;
	DIR *d;
	struct dirent *e;

	if (!ri__fmt(path, sizeof(path), "%s/ports", ctx->device->ibdev_path))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			n++;
	closedir(d);
	return n;
}

#define RI_ENDS_IN(fld, size) \
	(offsetof(struct ibv_device_attr_ex, fld) + \
	 sizeof(((struct ibv_device_attr_ex *)0)->fld) <= (size))

RI_EXPORT int verbs_cmd_query_device_ex(struct ibv_context *ctx,
					const struct ibv_query_device_ex_input *input,
					struct ibv_device_attr_ex *attr, size_t attr_size,
					const struct ibv_device_attr_ex *resp)
{
	uint32_t nports;

	if (input && input->comp_mask) /* @rule DEVX-02 */
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr)) /* @rule DEVX-02 */
		return EINVAL;
	memset(attr, 0, attr_size);
	attr->orig_attr = resp->orig_attr;
	/* DEVX-03: nothing past attr_size */
	if (RI_ENDS_IN(odp_caps, attr_size))
		attr->odp_caps = resp->odp_caps;
	if (RI_ENDS_IN(completion_timestamp_mask, attr_size))
		attr->completion_timestamp_mask = resp->completion_timestamp_mask;
	if (RI_ENDS_IN(hca_core_clock, attr_size))
		attr->hca_core_clock = resp->hca_core_clock;
	if (RI_ENDS_IN(device_cap_flags_ex, attr_size))
		attr->device_cap_flags_ex = resp->device_cap_flags_ex;
	if (RI_ENDS_IN(rss_caps, attr_size))
		attr->rss_caps = resp->rss_caps;
	if (RI_ENDS_IN(max_wq_type_rq, attr_size))
		attr->max_wq_type_rq = resp->max_wq_type_rq;
	if (RI_ENDS_IN(raw_packet_caps, attr_size))
		attr->raw_packet_caps = resp->raw_packet_caps;
	if (RI_ENDS_IN(tm_caps, attr_size))
		attr->tm_caps = resp->tm_caps;
	if (RI_ENDS_IN(cq_mod_caps, attr_size))
		attr->cq_mod_caps = resp->cq_mod_caps;
	if (RI_ENDS_IN(max_dm_size, attr_size))
		attr->max_dm_size = resp->max_dm_size;
	if (RI_ENDS_IN(xrc_odp_caps, attr_size))
		attr->xrc_odp_caps = resp->xrc_odp_caps;
	if (RI_ENDS_IN(phys_port_cnt_ex, attr_size)) { /* @rule DEVX-01 */
		nports = ri_sysfs_num_ports(ctx);
		attr->phys_port_cnt_ex = nports ? nports : attr->orig_attr.phys_port_cnt;
	}
	return 0;
}
