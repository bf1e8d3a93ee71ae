/* SPDX-License-Identifier: MIT */
/*
 * Entry points for the device, its ports, GIDs and P_Keys, and the simple
 * objects: PD, MR (and the import of a PD, an MR or device memory by its
 * handle), MW, AH, multicast. Each checks its arguments at the boundary
 * (EINVAL before the provider is called), dispatches through the context's
 * ops table and fills the core-owned fields of what comes back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri.h"

/* ------------------------------------------------------------------ */
/* Device and ports                                                     */

__typeof__(ibv_query_device) ri_v11_query_device;
RI_EXPORT int ri_v11_query_device(struct ibv_context *context,
			       struct ibv_device_attr *device_attr)
{
	if (!context || !device_attr)
		return EINVAL;
	return ri__ops(context)->query_device(context, device_attr);
}

/* The slot is the driver's op in rdma-core (dummy_ops.c verbs_set_ops:
 * SET_OP(vctx, query_device_ex)); its checks are the command layer's
 * (verbs_cmd_query_device_ex). A provider without it gets the inline's own
 * answer (rdma-core v44.0 libibverbs/verbs.h ibv_query_device_ex): the
 * basic attributes, the rest zero. */
int ri__query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t size)
{
	int ret;

	if (!ctx || !attr)
		return EINVAL;
	ret = ri__ops(ctx)->query_device_ex(ctx, input, attr, size);
	if (ret != EOPNOTSUPP && ret != ENOSYS)
		return ret;
	if ((input && input->comp_mask) || size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(attr, 0, size);
	return ri__ops(ctx)->query_device(ctx, &attr->orig_attr);
}

/* Queries into a full struct; the caller copies what it owns. */
static int ri_query_port_full(struct ibv_context *ctx, uint8_t port,
			      struct ibv_port_attr *full)
{
	memset(full, 0, sizeof(*full));
	return ri__ops(ctx)->query_port(ctx, port, full);
}

/* The slot the hdr44 inline prefers: port_attr_len bytes are the caller's. */
int ri__query_port_ex(struct ibv_context *ctx, uint8_t port,
		      struct ibv_port_attr *attr, size_t len)
{
	struct ibv_port_attr full;
	int ret;

	if (!ctx || !attr || !len)
		return EINVAL;
	ret = ri_query_port_full(ctx, port, &full);
	if (ret)
		return ret;
	if (len > sizeof(full)) {
		memset((char *)attr + sizeof(full), 0, len - sizeof(full));
		len = sizeof(full);
	}
	memcpy(attr, &full, len);
	return 0;
}

#undef ibv_query_port
/* The exported 1.1 verb: the caller's struct ends before ->flags. */
__typeof__(ibv_query_port) ri_v11_query_port;
RI_EXPORT int ri_v11_query_port(struct ibv_context *context, uint8_t port_num,
			     struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr full;
	int ret;

	if (!context || !port_attr)
		return EINVAL;
	ret = ri_query_port_full(context, port_num, &full);
	if (!ret)
		memcpy(port_attr, &full, RI_PORT_ATTR_1_1_SIZE);
	return ret;
}

__typeof__(ibv_query_gid) ri_v11_query_gid;
RI_EXPORT int ri_v11_query_gid(struct ibv_context *context, uint8_t port_num,
			    int index, union ibv_gid *gid)
{
	int ret;

	/* -1 with errno set, not the errno, as rdma-core returns it (v44.0
	 * libibverbs/verbs.c:231 ibv_query_gid: the kernel's EINVAL for an
	 * index or port the device has not) */
	if (!context || !gid || index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = ri__ops(context)->query_gid(context, port_num, index, gid);
	if (ret == ENODATA) {
		/* an empty table entry reads as the zero GID, as from sysfs */
		memset(gid, 0, sizeof(*gid));
		ret = 0;
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

/* 0 = "IB/RoCE v1", 1 = "RoCE v2" (rdma-core's ibv_gid_type_sysfs). */
RI_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				 unsigned int index, int *type)
{
	char buf[32];

	if (!context || !type)
		return EINVAL;
	*type = 0;
	if (ibv_read_ibdev_sysfs_file(buf, sizeof(buf),
				      context->device->ibdev_path,
				      "ports/%u/gid_attrs/types/%u", port_num,
				      index) > 0 &&
	    !strcmp(buf, "RoCE v2"))
		*type = 1;
	return 0;
}

static bool ri_gid_is_zero(const union ibv_gid *gid)
{
	return !gid->global.subnet_prefix && !gid->global.interface_id;
}

static int ri_fill_gid_entry(struct ibv_context *ctx, uint32_t port,
			     uint32_t index, struct ibv_gid_entry *entry)
{
	struct ibv_port_attr pa;
	int type, ret;

	ret = ri__ops(ctx)->query_gid(ctx, (uint8_t)port, (int)index,
				      &entry->gid);
	if (ret)
		return ret;
	if (ri_gid_is_zero(&entry->gid))
		return ENODATA;
	entry->gid_index = index;
	entry->port_num = port;
	entry->ndev_ifindex = 0;
	ret = ri_query_port_full(ctx, (uint8_t)port, &pa);
	if (ret)
		return ret;
	ibv_query_gid_type(ctx, (uint8_t)port, index, &type);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		entry->gid_type = IBV_GID_TYPE_IB;
	else
		entry->gid_type = type ? IBV_GID_TYPE_ROCE_V2 :
					 IBV_GID_TYPE_ROCE_V1;
	return 0;
}

RI_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				uint32_t gid_index, struct ibv_gid_entry *entry,
				uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = {};
	int ret;

	if (!context || !entry || flags || entry_size < sizeof(e) ||
	    port_num > UINT8_MAX || gid_index > INT32_MAX)
		return EINVAL;
	ret = ri_fill_gid_entry(context, port_num, gid_index, &e);
	if (!ret)
		*entry = e;
	return ret;
}

RI_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
				       struct ibv_gid_entry *entries,
				       size_t max_entries, uint32_t flags,
				       size_t entry_size)
{
	struct ibv_device_attr da;
	ssize_t n = 0;
	uint32_t port;
	int ret;

	if (!context || (!entries && max_entries) || flags ||
	    entry_size < sizeof(*entries))
		return -EINVAL;
	ret = ri__ops(context)->query_device(context, &da);
	if (ret)
		return -ret;
	for (port = 1; port <= da.phys_port_cnt; port++) {
		struct ibv_port_attr pa;
		int i;

		ret = ri_query_port_full(context, (uint8_t)port, &pa);
		if (ret)
			return -ret;
		for (i = 0; i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry e = {};

			ret = ri_fill_gid_entry(context, port, i, &e);
			if (ret == ENODATA)
				continue;
			if (ret)
				return -ret;
			if ((size_t)n >= max_entries)
				return -EINVAL;
			memcpy((char *)entries + n * entry_size, &e, sizeof(e));
			n++;
		}
	}
	return n;
}

__typeof__(ibv_query_pkey) ri_v11_query_pkey;
RI_EXPORT int ri_v11_query_pkey(struct ibv_context *context, uint8_t port_num,
			     int index, __be16 *pkey)
{
	int ret;

	/* -1 with errno set, as rdma-core returns it: it reads
	 * ports/N/pkeys/I from sysfs, so an index or port the device has not
	 * is a file that is not there, ENOENT (v44.0 libibverbs/verbs.c:254
	 * ibv_query_pkey) */
	if (!context || !pkey) {
		errno = EINVAL;
		return -1;
	}
	ret = index < 0 ? EINVAL : ri__ops(context)->query_pkey(context, port_num, index, pkey);
	if (ret) {
		errno = ret == EINVAL ? ENOENT : ret;
		return -1;
	}
	return 0;
}

RI_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
				 __be16 pkey)
{
	struct ibv_port_attr pa;
	int i, ret;

	if (!context) {
		errno = EINVAL;
		return -1;
	}
	ret = ri_query_port_full(context, port_num, &pa);
	if (ret) {
		errno = ret;
		return -1;
	}
	for (i = 0; i < pa.pkey_tbl_len; i++) {
		__be16 v;

		if (!ri__ops(context)->query_pkey(context, port_num, i, &v) &&
		    v == pkey)
			return i;
	}
	errno = ENOENT;
	return -1;
}

/* ------------------------------------------------------------------ */
/* PD                                                                   */

__typeof__(ibv_alloc_pd) ri_v11_alloc_pd;
RI_EXPORT struct ibv_pd *ri_v11_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	pd = ri__ops(context)->alloc_pd(context);
	if (pd)
		pd->context = context;
	return pd;
}

__typeof__(ibv_dealloc_pd) ri_v11_dealloc_pd;
RI_EXPORT int ri_v11_dealloc_pd(struct ibv_pd *pd)
{
	if (!pd)
		return EINVAL;
	return ri__ops(pd->context)->dealloc_pd(pd);
}

/* ------------------------------------------------------------------ */
/* MR                                                                   */

static struct ibv_mr *ri_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	struct ibv_mr *mr;
	bool marked = false;

	/* optional bits may be dropped silently, as rdma-core does for a
	 * device without optional access support; the access flags are the
	 * kernel's to check (ib_check_mr_access, in the fake kernel), the
	 * buffer the driver's (rdma-core v44.0 libibverbs/verbs.c:305
	 * ibv_reg_mr_iova2 checks neither) */
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	/* fork protection first, as rdma-core v44.0 libibverbs/verbs.c:320 */
	if (ri__fork_reg(addr, length, access, &marked))	/* @rule FORK-05 */
		return NULL;
	mr = ri__ops(pd->context)->reg_mr(pd, addr, length, iova, (int)access);
	if (mr) {
		mr->context = pd->context;
		mr->pd = pd;
		mr->addr = addr;
		mr->length = length;
	}
	ri__fork_reg_done(mr, addr, length, access, marked);
	return mr;
}

#undef ibv_reg_mr
__typeof__(ibv_reg_mr) ri_v11_reg_mr;
RI_EXPORT struct ibv_mr *ri_v11_reg_mr(struct ibv_pd *pd, void *addr,
				    size_t length, int access)
{
	return ri_reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
RI_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					 size_t length, uint64_t iova,
					 int access)
{
	return ri_reg_mr(pd, addr, length, iova, (unsigned int)access);
}

RI_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					  size_t length, uint64_t iova,
					  unsigned int access)
{
	return ri_reg_mr(pd, addr, length, iova, access);
}

RI_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					   size_t length, uint64_t iova, int fd,
					   int access)
{
	errno = pd ? EOPNOTSUPP : EINVAL;
	return NULL;
}

/*
 * rdma-core v44.0 libibverbs/verbs.c:416 ibv_rereg_mr: the library's own
 * input checks (IBV_REREG_MR_ERR_INPUT, errno EINVAL), then the driver's
 * op; a failed op is IBV_REREG_MR_ERR_CMD with the op's errno; a done one
 * restates the new PD and translation in the MR. What the kernel refuses
 * (no flag, an access it does not allow, a PD of another context) is the
 * op's answer. A new translation moves fork protection (verbs.c:449-493): the new range
 * is marked before the op (IBV_REREG_MR_ERR_DONT_FORK_NEW when that fails),
 * the old one given back after it (IBV_REREG_MR_ERR_DO_FORK_OLD), the new
 * one given back when the op fails (IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW).
 */
RI_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			   void *addr, size_t length, int access)
{
	void *old_addr;
	size_t old_len;
	bool move;
	int ret;

	if (!mr) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) || /* @rule MR-01 */
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if ((flags & IBV_REREG_MR_CHANGE_PD) && !pd) {
		/* rdma-core reads pd->handle here: a clear error instead */
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	move = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	if (move && ibv_dontfork_range(addr, length))	/* @rule FORK-08 */
		return IBV_REREG_MR_ERR_DONT_FORK_NEW;
	old_addr = mr->addr;
	old_len = mr->length;
	ret = ri__ops(mr->context)->rereg_mr(mr, flags, pd, addr, length, access);
	if (ret) {
		int cmd = IBV_REREG_MR_ERR_CMD;

		if (move && ibv_dofork_range(addr, length))
			cmd = IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW;
		errno = ret;
		return cmd;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
		if (ibv_dofork_range(old_addr, old_len))	/* @rule FORK-08 */
			return IBV_REREG_MR_ERR_DO_FORK_OLD;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Import of a PD or an MR of the context's file by its handle: the op
 * alone, as rdma-core v44.0 libibverbs/verbs.c:353-379 (ibv_import_device
 * is in device.c). The provider's kernel resolves the handle; the core
 * sets what restates the call (the context, the MR's pd), as for
 * alloc_pd and reg_mr (ibv_cmd_query_mr sets them there:
 * libibverbs/cmd_mr.c:110-113). A driver without the ops answers from
 * the stubs (dummy_ops.c:298-310 EOPNOTSUPP; :486-490 nothing). */

RI_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
				       uint32_t pd_handle)
{
	struct ibv_pd *pd = ri__priv(context)->ops.import_pd(context, pd_handle);

	if (pd)
		pd->context = context;
	return pd;
}

RI_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	ri__priv(pd->context)->ops.unimport_pd(pd);
}

RI_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct ibv_mr *mr = ri__priv(pd->context)->ops.import_mr(pd, mr_handle);

	if (mr) {
		mr->context = pd->context;
		mr->pd = pd;
	}
	return mr;
}

RI_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	ri__priv(mr->context)->ops.unimport_mr(mr);
}

RI_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
				       uint32_t dm_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

RI_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* ------------------------------------------------------------------ */
/* Thread domains and parent domains (the header's inlines call these   */
/* slots; rdma-core's are the driver's ops, which set the context).     */

struct ibv_td *ri__alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct ibv_td *td;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	td = ri__ops(context)->alloc_td(context, attr);
	if (td)
		td->context = context;
	return td;
}

int ri__dealloc_td(struct ibv_td *td)
{
	if (!td)
		return EINVAL;
	return ri__ops(td->context)->dealloc_td(td);
}

struct ibv_pd *ri__alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr)
{
	struct ibv_pd *pd;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	pd = ri__ops(context)->alloc_parent_domain(context, attr);
	if (pd)
		pd->context = context;
	return pd;
}

__typeof__(ibv_dereg_mr) ri_v11_dereg_mr;
RI_EXPORT int ri_v11_dereg_mr(struct ibv_mr *mr)
{
	void *addr;
	size_t length;
	int ret;

	if (!mr)
		return EINVAL;
	addr = mr->addr;
	length = mr->length;
	ret = ri__ops(mr->context)->dereg_mr(mr);
	if (!ret)				/* @rule FORK-06 */
		ri__fork_dereg(mr, addr, length);
	return ret;
}

/* ------------------------------------------------------------------ */
/* MW (reached through ctx->ops by the header's inlines)                */

struct ibv_mw *ri__alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw;

	if (!pd || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	mw = ri__ops(pd->context)->alloc_mw(pd, type);
	if (mw) {
		mw->context = pd->context;
		mw->pd = pd;
		mw->type = type;
	}
	return mw;
}

int ri__dealloc_mw(struct ibv_mw *mw)
{
	if (!mw)
		return EINVAL;
	return ri__ops(mw->context)->dealloc_mw(mw);
}

int ri__bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	if (!qp || !mw || !b || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	return ri__ops(qp->context)->bind_mw(qp, mw, b);
}

/* ------------------------------------------------------------------ */
/* AH                                                                   */

__typeof__(ibv_create_ah) ri_v11_create_ah;
RI_EXPORT struct ibv_ah *ri_v11_create_ah(struct ibv_pd *pd,
				       struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	ah = ri__ops(pd->context)->create_ah(pd, attr);
	if (ah) {
		ah->context = pd->context;
		ah->pd = pd;
	}
	return ah;
}

__typeof__(ibv_destroy_ah) ri_v11_destroy_ah;
RI_EXPORT int ri_v11_destroy_ah(struct ibv_ah *ah)
{
	if (!ah)
		return EINVAL;
	return ri__ops(ah->context)->destroy_ah(ah);
}

/* The sgid index is the local GID the remote sent to (grh->dgid). */
static int ri_find_gid_index(struct ibv_context *ctx, uint8_t port,
			     const union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int i;

	if (ri_query_port_full(ctx, port, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;

		if (!ri__ops(ctx)->query_gid(ctx, port, i, &g) &&
		    !memcmp(&g, gid, sizeof(g)))
			return i;
	}
	return -1;
}

RI_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				  struct ibv_wc *wc, struct ibv_grh *grh,
				  struct ibv_ah_attr *ah_attr)
{
	uint32_t flow;
	int idx;

	if (!context || !wc || !ah_attr || ((wc->wc_flags & IBV_WC_GRH) && !grh))
		return EINVAL;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	idx = ri_find_gid_index(context, port_num, &grh->dgid);
	if (idx < 0)
		return ENOENT;
	flow = be32toh(grh->version_tclass_flow);
	ah_attr->is_global = 1;
	ah_attr->grh.dgid = grh->sgid;
	ah_attr->grh.flow_label = flow & 0xfffff;
	ah_attr->grh.sgid_index = (uint8_t)idx;
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
	return 0;
}

RI_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
					       struct ibv_wc *wc,
					       struct ibv_grh *grh,
					       uint8_t port_num)
{
	struct ibv_ah_attr attr;
	int ret;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	ret = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	return ibv_create_ah(pd, &attr);
}

RI_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					  struct ibv_ah_attr *attr,
					  uint8_t eth_mac[6], uint16_t *vid)
{
	return EOPNOTSUPP;
}

/* ------------------------------------------------------------------ */
/* Multicast                                                            */

__typeof__(ibv_attach_mcast) ri_v11_attach_mcast;
RI_EXPORT int ri_v11_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			       uint16_t lid)
{
	if (!qp || !gid)
		return EINVAL;
	return ri__ops(qp->context)->attach_mcast(qp, gid, lid);
}

__typeof__(ibv_detach_mcast) ri_v11_detach_mcast;
RI_EXPORT int ri_v11_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			       uint16_t lid)
{
	if (!qp || !gid)
		return EINVAL;
	return ri__ops(qp->context)->detach_mcast(qp, gid, lid);
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_alloc_pd, ibv_alloc_pd@@IBVERBS_1.1);
RI_SYMVER(ri_v11_attach_mcast, ibv_attach_mcast@@IBVERBS_1.1);
RI_SYMVER(ri_v11_create_ah, ibv_create_ah@@IBVERBS_1.1);
RI_SYMVER(ri_v11_dealloc_pd, ibv_dealloc_pd@@IBVERBS_1.1);
RI_SYMVER(ri_v11_dereg_mr, ibv_dereg_mr@@IBVERBS_1.1);
RI_SYMVER(ri_v11_destroy_ah, ibv_destroy_ah@@IBVERBS_1.1);
RI_SYMVER(ri_v11_detach_mcast, ibv_detach_mcast@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_device, ibv_query_device@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_gid, ibv_query_gid@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_pkey, ibv_query_pkey@@IBVERBS_1.1);
RI_SYMVER(ri_v11_query_port, ibv_query_port@@IBVERBS_1.1);
RI_SYMVER(ri_v11_reg_mr, ibv_reg_mr@@IBVERBS_1.1);
