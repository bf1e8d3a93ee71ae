/* SPDX-License-Identifier: MIT */
/*
 * t0021: the verbs that need no provider, as rdma-core 44 answers them: the
 * *_str names (rdma-core v44.0 libibverbs/enum_strs.c), the rate
 * conversions (libibverbs/verbs.c ibv_rate_to_mult .. mbps_to_ibv_rate),
 * the kernel-struct copies (libibverbs/marshall.c), fork support, the
 * sysfs helpers and device naming, and the verbs ibvct does not offer
 * (import of device memory, dmabuf, ECE, the new post-send API), which answer EOPNOTSUPP
 * for a valid call and EINVAL for a NULL object.
 */
#include <fcntl.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "rt_env.h"

int ibv_read_ibdev_sysfs_file(char *buf, size_t size, const char *ibdev_path,
			      const char *fnfmt, ...);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);
/* rdma-core's driver.h and <infiniband/marshall.h> declare these */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_get_sysfs_path(char *buf, size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

/* ------------------------------------------------------------------ */
/* enum_strs.c                                                          */

TR_TEST(str_functions_name_every_value)
{
	assert_string_equal(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	assert_string_equal(ibv_node_type_str(IBV_NODE_SWITCH), "InfiniBand switch");
	assert_string_equal(ibv_node_type_str(IBV_NODE_ROUTER), "InfiniBand router");
	assert_string_equal(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC");
	assert_string_equal(ibv_node_type_str(IBV_NODE_USNIC), "usNIC");
	assert_string_equal(ibv_node_type_str(IBV_NODE_USNIC_UDP), "usNIC UDP");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNSPECIFIED), "unspecified");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNSPECIFIED + 1), "unknown");

	assert_string_equal(ibv_port_state_str(IBV_PORT_NOP), "no state change (NOP)");
	assert_string_equal(ibv_port_state_str(IBV_PORT_DOWN), "down");
	assert_string_equal(ibv_port_state_str(IBV_PORT_INIT), "init");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ARMED), "armed");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE_DEFER), "active defer");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE_DEFER + 1), "unknown");
	assert_string_equal(ibv_port_state_str((enum ibv_port_state)-1), "unknown");

	assert_string_equal(ibv_event_type_str(IBV_EVENT_CQ_ERR), "CQ error");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_QP_FATAL),
			    "local work queue catastrophic error");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_COMM_EST), "communication established");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_DEVICE_FATAL), "local catastrophic error");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_PKEY_CHANGE), "P_Key change");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_SRQ_LIMIT_REACHED), "SRQ limit reached");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_CLIENT_REREGISTER),
			    "client reregistration");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_GID_CHANGE), "GID table change");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_WQ_FATAL), "WQ fatal");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_WQ_FATAL + 1), "unknown");
	assert_string_equal(ibv_event_type_str((enum ibv_event_type)-1), "unknown");

	assert_string_equal(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	assert_string_equal(ibv_wc_status_str(IBV_WC_LOC_LEN_ERR), "local length error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_MW_BIND_ERR),
			    "memory management operation error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR),
			    "RNR retry counter exceeded");
	assert_string_equal(ibv_wc_status_str(IBV_WC_REM_INV_RD_REQ_ERR),
			    "remote invalid RD request");
	assert_string_equal(ibv_wc_status_str(IBV_WC_GENERAL_ERR), "general error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE),
			    "TM software rendezvous");
	assert_string_equal(ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE + 1), "unknown");
	assert_string_equal(ibv_wc_status_str((enum ibv_wc_status)-1), "unknown");
}

/* ------------------------------------------------------------------ */
/* verbs.c: rates                                                       */

static const struct { enum ibv_rate rate; int mult, mbps; } rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },		{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },		{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },	{ IBV_RATE_14_GBPS, -1, 14062 },
	{ IBV_RATE_56_GBPS, -1, 56250 },	{ IBV_RATE_112_GBPS, -1, 112500 },
	{ IBV_RATE_168_GBPS, -1, 168750 },	{ IBV_RATE_25_GBPS, -1, 25781 },
	{ IBV_RATE_100_GBPS, -1, 103125 },	{ IBV_RATE_200_GBPS, -1, 206250 },
	{ IBV_RATE_300_GBPS, -1, 309375 },	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

TR_TEST(rate_conversions_are_rdma_core_44s)
{
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		assert_int_equal(ibv_rate_to_mult(rates[i].rate), rates[i].mult);
		assert_int_equal(ibv_rate_to_mbps(rates[i].rate), rates[i].mbps);
		assert_int_equal(mbps_to_ibv_rate(rates[i].mbps), rates[i].rate);
		if (rates[i].mult > 0)
			assert_int_equal(mult_to_ibv_rate(rates[i].mult), rates[i].rate);
	}
	/* no rate: -1 one way, IBV_RATE_MAX the other */
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_MAX), -1);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_MAX), -1);
	assert_int_equal(ibv_rate_to_mult((enum ibv_rate)99), -1);
	assert_int_equal(mult_to_ibv_rate(5), IBV_RATE_MAX);
	assert_int_equal(mult_to_ibv_rate(-1), IBV_RATE_MAX);
	assert_int_equal(mult_to_ibv_rate(0), IBV_RATE_MAX);
	assert_int_equal(mbps_to_ibv_rate(14000), IBV_RATE_MAX);
	assert_int_equal(mbps_to_ibv_rate(-1), IBV_RATE_MAX);
}

/* ------------------------------------------------------------------ */
/* marshall.c: every field is carried over                              */

TR_TEST(kernel_struct_copies_carry_every_field)
{
	struct ib_uverbs_qp_attr k;
	struct ibv_qp_attr q;
	struct ib_user_path_rec kp, back;
	struct ibv_sa_path_rec p;
	unsigned char *b = (unsigned char *)&k;
	size_t i;

	for (i = 0; i < sizeof(k); i++)
		b[i] = (unsigned char)(i * 7 + 3);
	memset(&q, 0, sizeof(q));
	ibv_copy_qp_attr_from_kern(&q, &k);
	assert_int_equal(q.cur_qp_state, k.cur_qp_state);
	assert_int_equal(q.path_mtu, k.path_mtu);
	assert_int_equal(q.path_mig_state, k.path_mig_state);
	assert_int_equal(q.qkey, k.qkey);
	assert_int_equal(q.rq_psn, k.rq_psn);
	assert_int_equal(q.sq_psn, k.sq_psn);
	assert_int_equal(q.dest_qp_num, k.dest_qp_num);
	assert_int_equal(q.qp_access_flags, k.qp_access_flags);
	assert_int_equal(q.cap.max_send_wr, k.max_send_wr);
	assert_int_equal(q.cap.max_recv_wr, k.max_recv_wr);
	assert_int_equal(q.cap.max_send_sge, k.max_send_sge);
	assert_int_equal(q.cap.max_recv_sge, k.max_recv_sge);
	assert_int_equal(q.cap.max_inline_data, k.max_inline_data);
	assert_memory_equal(q.ah_attr.grh.dgid.raw, k.ah_attr.grh.dgid, 16);
	assert_int_equal(q.ah_attr.grh.flow_label, k.ah_attr.grh.flow_label);
	assert_int_equal(q.ah_attr.grh.sgid_index, k.ah_attr.grh.sgid_index);
	assert_int_equal(q.ah_attr.grh.hop_limit, k.ah_attr.grh.hop_limit);
	assert_int_equal(q.ah_attr.grh.traffic_class, k.ah_attr.grh.traffic_class);
	assert_int_equal(q.ah_attr.dlid, k.ah_attr.dlid);
	assert_int_equal(q.ah_attr.sl, k.ah_attr.sl);
	assert_int_equal(q.ah_attr.src_path_bits, k.ah_attr.src_path_bits);
	assert_int_equal(q.ah_attr.static_rate, k.ah_attr.static_rate);
	assert_int_equal(q.ah_attr.is_global, k.ah_attr.is_global);
	assert_int_equal(q.ah_attr.port_num, k.ah_attr.port_num);
	assert_int_equal(q.alt_ah_attr.dlid, k.alt_ah_attr.dlid);
	assert_int_equal(q.alt_ah_attr.port_num, k.alt_ah_attr.port_num);
	assert_int_equal(q.pkey_index, k.pkey_index);
	assert_int_equal(q.alt_pkey_index, k.alt_pkey_index);
	assert_int_equal(q.en_sqd_async_notify, k.en_sqd_async_notify);
	assert_int_equal(q.sq_draining, k.sq_draining);
	assert_int_equal(q.max_rd_atomic, k.max_rd_atomic);
	assert_int_equal(q.max_dest_rd_atomic, k.max_dest_rd_atomic);
	assert_int_equal(q.min_rnr_timer, k.min_rnr_timer);
	assert_int_equal(q.port_num, k.port_num);
	assert_int_equal(q.timeout, k.timeout);
	assert_int_equal(q.retry_cnt, k.retry_cnt);
	assert_int_equal(q.rnr_retry, k.rnr_retry);
	assert_int_equal(q.alt_port_num, k.alt_port_num);
	assert_int_equal(q.alt_timeout, k.alt_timeout);

	/* a path record survives the way there and back */
	memset(&kp, 0, sizeof(kp));
	for (i = 0; i < 16; i++) {
		kp.dgid[i] = (uint8_t)(0x10 + i);
		kp.sgid[i] = (uint8_t)(0x40 + i);
	}
	kp.dlid = htobe16(0x1234);
	kp.slid = htobe16(0x5678);
	kp.raw_traffic = 1;
	kp.flow_label = htobe32(0xabcde);
	kp.reversible = 1;
	kp.mtu = IBV_MTU_2048;
	kp.pkey = htobe16(0x8001);
	kp.hop_limit = 64;
	kp.traffic_class = 3;
	kp.numb_path = 2;
	kp.sl = 5;
	kp.mtu_selector = 2;
	kp.rate_selector = 1;
	kp.rate = IBV_RATE_100_GBPS;
	kp.packet_life_time = 18;
	kp.preference = 7;
	kp.packet_life_time_selector = 2;
	memset(&p, 0, sizeof(p));
	ibv_copy_path_rec_from_kern(&p, &kp);
	assert_memory_equal(p.dgid.raw, kp.dgid, 16);
	assert_memory_equal(p.sgid.raw, kp.sgid, 16);
	assert_int_equal(p.dlid, kp.dlid);
	assert_int_equal(p.raw_traffic, 1);
	assert_int_equal(p.reversible, 1);
	assert_int_equal(p.mtu, IBV_MTU_2048);
	assert_int_equal(p.rate, IBV_RATE_100_GBPS);
	assert_int_equal(p.packet_life_time_selector, 2);
	memset(&back, 0xee, sizeof(back));
	ibv_copy_path_rec_to_kern(&back, &p);
	assert_memory_equal(&back, &kp, sizeof(kp));	/* no padding in it */
}

/* ------------------------------------------------------------------ */
/* Fork support, sysfs helpers, device naming (init.c)                  */

static void ck_device_helpers(struct rt *t)
{
	struct ibv_device **list;
	struct ibv_device fake;
	struct ibv_context *ctx;
	char path[256], buf[64], tiny[4];
	const char *root = getenv("SYSFS_PATH");
	int n = 0, type = -1;

	TR_EXPECT(ibv_fork_init() == 0);
	TR_EXPECT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	TR_EXPECT(ibv_dontfork_range(buf, sizeof(buf)) == 0);
	TR_EXPECT(ibv_dofork_range(buf, sizeof(buf)) == 0);

	TR_EXPECT(ibv_get_sysfs_path(path, sizeof(path)) == 0);
	TR_EXPECT(root && !strcmp(path, root));
	TR_EXPECT(ibv_get_sysfs_path(tiny, sizeof(tiny)) == -1);
	list = ibv_get_device_list(&n);
	TR_EXPECT(list && n == 1);
	if (!list || n != 1)
		return;
	TR_EXPECT(ibv_get_device_index(list[0]) == 0);
	TR_EXPECT(ibv_get_device_index(NULL) == -1);
	memset(&fake, 0, sizeof(fake));
	TR_EXPECT(ibv_get_device_index(&fake) == -1);
	TR_EXPECT(RT_PTR_ERRNO(ibv_open_device(&fake)) == ENODEV);
	TR_EXPECT(RT_PTR_ERRNO(ibv_open_device(NULL)) == EINVAL);
	TR_EXPECT(ibv_close_device(NULL) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_get_device_name(NULL)) == EINVAL);
	TR_EXPECT(ibv_get_device_guid(NULL) == 0);
	TR_EXPECT(ibv_get_device_guid(list[0]) == htobe64(0x1bad000000000001ULL));
	/* sysfs reads: one trailing newline stripped, bad paths -1 */
	TR_EXPECT(ibv_read_sysfs_file(list[0]->dev_path, "ibdev", buf, sizeof(buf)) == 5 &&
		 !strcmp(buf, "fake0"));
	TR_EXPECT(ibv_read_sysfs_file(list[0]->dev_path, "ibdev", tiny, sizeof(tiny)) == 4 &&
		 !memcmp(tiny, "fake", 4));
	TR_EXPECT(ibv_read_sysfs_file(list[0]->dev_path, "ibdev", buf, 0) == -1);
	TR_EXPECT(ibv_read_sysfs_file(list[0]->dev_path, "no-such-file", buf, sizeof(buf)) == -1);
	TR_EXPECT(ibv_read_ibdev_sysfs_file(buf, sizeof(buf), list[0]->ibdev_path,
					      "ports/%d/state", 1) > 0 &&
		 strstr(buf, "ACTIVE"));
	TR_EXPECT(ibv_read_ibdev_sysfs_file(buf, sizeof(buf), list[0]->ibdev_path,
					      "ports/%d/state", 9) == -1);
	ctx = ibv_open_device(list[0]);
	TR_EXPECT(ctx != NULL);
	if (ctx) {
		/* an IB port: every GID is of type IB/RoCE v1 */
		TR_EXPECT(ibv_query_gid_type(ctx, 1, 0, &type) == 0 && type == 0);
		TR_EXPECT(ibv_query_gid_type(NULL, 1, 0, &type) == EINVAL);
		TR_EXPECT(ibv_query_gid_type(ctx, 1, 0, NULL) == EINVAL);
		TR_EXPECT(ibv_close_device(ctx) == 0);
	}
	ibv_free_device_list(list);
}

TR_TEST(device_and_sysfs_helpers)
{
	rt_run(RT_EXTENDED, NULL, ck_device_helpers);
}

/* ------------------------------------------------------------------ */
/* Verbs ibvct does not offer: EOPNOTSUPP, or EINVAL without an object  */

static void ck_unoffered(struct rt *t)
{
	static char buf[64];
	struct ibv_context *ctx = rt_open(t);
	struct ibv_context *ictx;
	struct ibv_pd *ipd;
	struct ibv_mr *imr;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 1, .max_recv_wr = 1,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_ece ece = {};
	struct ibv_ah_attr aa = {};
	uint8_t mac[6];
	uint16_t vid;

	if (!ctx)
		return;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	qia.send_cq = qia.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &qia) : NULL;
	TR_EXPECT(pd && cq && mr && qp);
	if (!pd || !cq || !mr || !qp)
		goto out;
	/* the context's file is shared: a second context on a copy of its fd
	 * (which the imported context owns), the same PD and MR by handle */
	ictx = ibv_import_device(dup(ctx->cmd_fd));
	TR_EXPECT(ictx && ictx != ctx && ictx->device == ctx->device);
	ipd = ictx ? ibv_import_pd(ictx, pd->handle) : NULL;
	TR_EXPECT(ipd && ipd != pd && ipd->handle == pd->handle && ipd->context == ictx);
	imr = ipd ? ibv_import_mr(ipd, mr->handle) : NULL;
	TR_EXPECT(imr && imr->handle == mr->handle && imr->lkey == mr->lkey &&
		  imr->rkey == mr->rkey && imr->length == mr->length && !imr->addr &&
		  imr->pd == ipd && imr->context == ictx);
	TR_EXPECT(RT_PTR_ERRNO(ibv_import_dm(ctx, 0)) == EOPNOTSUPP);
	/* unimport gives back the importer's objects only: the owner's work */
	if (imr)
		ibv_unimport_mr(imr);
	if (ipd)
		ibv_unimport_pd(ipd);
	if (ictx)
		TR_EXPECT(ibv_close_device(ictx) == 0);
	ibv_unimport_dm(NULL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, 0)) == EOPNOTSUPP);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_dmabuf_mr(NULL, 0, 4096, 0, -1, 0)) == EINVAL);
	/* the fake driver has rereg_mr (MR-02); bad input is refused first (MR-01) */
	errno = 0;
	TR_EXPECT(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				 IBV_ACCESS_LOCAL_WRITE) == 0);
	errno = 0;
	TR_EXPECT(ibv_rereg_mr(mr, 1 << 20, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT &&
		 errno == EINVAL);
	TR_EXPECT(ibv_rereg_mr(NULL, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0) ==
		 IBV_REREG_MR_ERR_INPUT);
	TR_EXPECT(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0) ==
		 IBV_REREG_MR_ERR_INPUT);
	TR_EXPECT(mr->pd == pd && mr->addr == buf);
	/* a QP made without send_ops_flags has no ibv_qp_ex (WRX-01) */
	TR_EXPECT(ibv_qp_to_qp_ex(qp) == NULL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_qp_to_qp_ex(NULL)) == EINVAL);
	TR_EXPECT(ibv_query_ece(qp, &ece) == EOPNOTSUPP);
	TR_EXPECT(ibv_set_ece(qp, &ece) == EOPNOTSUPP);
	TR_EXPECT(ibv_query_ece(NULL, &ece) == EINVAL);
	TR_EXPECT(ibv_set_ece(qp, NULL) == EINVAL);
	/* rdma-core's answer without a provider op: no ordering promise */
	TR_EXPECT(ibv_query_qp_data_in_order(qp, IBV_WR_SEND, 0) == 0);
	TR_EXPECT(ibv_resolve_eth_l2_from_gid(ctx, &aa, mac, &vid) == EOPNOTSUPP);
out:
	if (qp)
		TR_EXPECT(ibv_destroy_qp(qp) == 0);
	if (cq)
		TR_EXPECT(ibv_destroy_cq(cq) == 0);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	if (pd)
		TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(unoffered_verbs_answer_eopnotsupp)
{
	rt_run(RT_EXTENDED, NULL, ck_unoffered);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
