/* SPDX-License-Identifier: MIT */
/*
 * Verbs that need no provider: the *_str names, rate conversions, the
 * kernel-struct copy helpers of the 1.0/1.1 ABI, and the import verbs of
 * a PD, an MR and device memory (the op alone, as in libibverbs).
 */
#include <string.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "ri.h"

/* The name of v in a table of names indexed by value: "unknown" for a
 * value past its end, below it, or without a name. */
static const char *ri_name(const char *const *names, size_t count, long v)
{
	if (v < 0 || (size_t)v >= count || !names[v])
		return "unknown";
	return names[v];
}
#define RI_NAME(names, v) ri_name((names), sizeof(names) / sizeof((names)[0]), (v))

RI_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const names[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return RI_NAME(names, node_type);
}

RI_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return RI_NAME(names, port_state);
}

RI_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const names[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return RI_NAME(names, event);
}

RI_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return RI_NAME(names, status);
}

/*
 * Declared in verbs.h, exported in IBVERBS_PRIVATE_34 as rdma-core 56 has
 * it (v56.1 libibverbs/enum_strs.c, libibverbs.map.in). Inside the
 * opcode range a value without a name (12, 13) is NULL there, not
 * "unknown": the table is read as it is, and so it is here.
 */
RI_EXPORT const char *ibv_wr_opcode_str(enum ibv_wr_opcode opcode)
{
	static const char *const names[] = {
		[IBV_WR_RDMA_WRITE] = "rdma-write",
		[IBV_WR_RDMA_WRITE_WITH_IMM] = "rdma-write-with-imm",
		[IBV_WR_SEND] = "send",
		[IBV_WR_SEND_WITH_IMM] = "send-with-imm",
		[IBV_WR_RDMA_READ] = "rdma-read",
		[IBV_WR_ATOMIC_CMP_AND_SWP] = "atomic-cmp-and-swp",
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = "atomic-fetch-and-add",
		[IBV_WR_LOCAL_INV] = "local-inv",
		[IBV_WR_BIND_MW] = "bind-mw",
		[IBV_WR_SEND_WITH_INV] = "send-with-inv",
		[IBV_WR_TSO] = "tso",
		[IBV_WR_DRIVER1] = "driver1",
		[IBV_WR_FLUSH] = "flush",
		[IBV_WR_ATOMIC_WRITE] = "atomic-write",
	};

	if ((int)opcode < IBV_WR_RDMA_WRITE || opcode > IBV_WR_ATOMIC_WRITE)
		return "unknown";
	return names[opcode];
}

/* ------------------------------------------------------------------ */
/* Rates: one table, read both ways. Only the rates that are a whole
 * multiple of 2.5 Gb/s have a multiplier (mult 0 here): the FDR/EDR/HDR
 * lane rates answer -1 and no multiplier names them, as in rdma-core
 * v44.0 libibverbs/verbs.c ibv_rate_to_mult/mult_to_ibv_rate. */

struct ri_rate { enum ibv_rate rate; int mult; int mbps; };

static const struct ri_rate ri_rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, 0, 14062 },
	{ IBV_RATE_56_GBPS, 0, 56250 },
	{ IBV_RATE_112_GBPS, 0, 112500 },
	{ IBV_RATE_168_GBPS, 0, 168750 },
	{ IBV_RATE_25_GBPS, 0, 25781 },
	{ IBV_RATE_100_GBPS, 0, 103125 },
	{ IBV_RATE_200_GBPS, 0, 206250 },
	{ IBV_RATE_300_GBPS, 0, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};
#define RI_NRATES (sizeof(ri_rates) / sizeof(ri_rates[0]))

/* The row of an ibv_rate, or NULL. */
static const struct ri_rate *ri_rate_row(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RI_NRATES; i++)
		if (ri_rates[i].rate == rate)
			return &ri_rates[i];
	return NULL;
}

RI_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct ri_rate *r = ri_rate_row(rate);

	return r && r->mult ? r->mult : -1;
}

RI_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < RI_NRATES && mult > 0; i++)
		if (ri_rates[i].mult == mult)
			return ri_rates[i].rate;
	return IBV_RATE_MAX;
}

RI_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct ri_rate *r = ri_rate_row(rate);

	return r ? r->mbps : -1;
}

RI_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < RI_NRATES; i++)
		if (ri_rates[i].mbps == mbps)
			return ri_rates[i].rate;
	return IBV_RATE_MAX;
}

/* ------------------------------------------------------------------ */
/* Kernel-struct copies (marshalling helpers of the 1.x ABI).           */

RI_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					  struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

RI_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					  struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/*
 * The members the two path records name and type alike (a scalar each, of
 * the same width), copied as they are either way; the gids, raw_traffic,
 * reversible and mtu differ in type and are copied one by one.
 */
#define RI_PATH_REC_ALIKE(X)						\
	X(dlid) X(slid) X(flow_label) X(pkey) X(hop_limit)		\
	X(traffic_class) X(numb_path) X(sl) X(mtu_selector)		\
	X(rate_selector) X(rate) X(packet_life_time) X(preference)	\
	X(packet_life_time_selector)
#define RI_COPY_MEMBER(m) dst->m = src->m;

RI_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					   struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	dst->raw_traffic = (int)src->raw_traffic;
	dst->reversible = (int)src->reversible;
	dst->mtu = (uint8_t)src->mtu;
	RI_PATH_REC_ALIKE(RI_COPY_MEMBER)
}

RI_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					 struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	dst->raw_traffic = (uint32_t)src->raw_traffic;
	dst->reversible = (uint32_t)src->reversible;
	dst->mtu = src->mtu;
	RI_PATH_REC_ALIKE(RI_COPY_MEMBER)
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
