/* SPDX-License-Identifier: MIT */
/*
 * t0044: the entry points of verbs.c and the compat layer's (compat.c)
 * versions of them give the same answers whether the provider registers
 * as a legacy one (the core wraps it, reading GIDs and P_Keys from sysfs
 * as 1.1 did) or an extended one: every check runs under both modes with
 * the same expectations. GID entries and tables, P_Key indexes, address
 * handles from a work completion, the port and device queries' size
 * rules, MR registration rules, MW refusals, and a UD chain longer than
 * the compat layer's stack copy. Sources: rdma-core v44.0
 * libibverbs/verbs.c (ibv_init_ah_from_wc, ibv_get_pkey_index,
 * ibv_reg_mr_iova2), libibverbs/cmd_device.c (_ibv_query_gid_ex,
 * _ibv_query_gid_table).
 */
#include <fcntl.h>
#include <dlfcn.h>

#include "rt_env.h"

static const char script[] =
	"\tgid 1 1 fe80::1bad:0:0:77\n"
	"\tpkey 1 1 0x8001\n";

/* ------------------------------------------------------------------ */
/* GIDs and P_Keys                                                      */

static void ck_gids(struct rt *t)
{
	struct ibv_context *ctx = rt_open(t);
	struct ibv_gid_entry e[4], one;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	__be16 pkey;

	if (!ctx)
		return;
	TR_EXPECT(ibv_query_port(ctx, 1, &pa) == 0 && pa.gid_tbl_len == 16 &&
		 pa.pkey_tbl_len == 4);
	/* two GIDs were set; an unset entry of the table reads as zero */
	TR_EXPECT(ibv_query_gid(ctx, 1, 1, &gid) == 0 &&
		 gid.raw[15] == 0x77 && gid.raw[0] == 0xfe);
	TR_EXPECT(ibv_query_gid(ctx, 1, 5, &gid) == 0 && !gid.global.subnet_prefix &&
		 !gid.global.interface_id);
	TR_EXPECT(ibv_query_gid(ctx, 1, 16, &gid) == -1 && errno == EINVAL);
	TR_EXPECT(ibv_query_gid(ctx, 1, -1, &gid) == -1 && errno == EINVAL);
	TR_EXPECT(ibv_query_gid(NULL, 1, 0, &gid) == -1 && errno == EINVAL);
	TR_EXPECT(ibv_query_pkey(ctx, 1, 1, &pkey) == 0 && pkey == htobe16(0x8001));
	TR_EXPECT(ibv_query_pkey(ctx, 1, 2, &pkey) == 0 && pkey == 0);
	TR_EXPECT(ibv_query_pkey(ctx, 1, 4, &pkey) == -1 && errno == ENOENT);
	TR_EXPECT(ibv_query_pkey(ctx, 1, 0, NULL) == -1 && errno == EINVAL);

	/* entries: the GID, its index, port and type (IB on an IB port) */
	memset(&one, 0xa5, sizeof(one));
	TR_EXPECT(ibv_query_gid_ex(ctx, 1, 1, &one, 0) == 0);
	TR_EXPECT(one.gid.raw[15] == 0x77 && one.gid_index == 1 && one.port_num == 1 &&
		 one.gid_type == IBV_GID_TYPE_IB && one.ndev_ifindex == 0);
	TR_EXPECT(ibv_query_gid_ex(ctx, 1, 5, &one, 0) == ENODATA);
	TR_EXPECT(ibv_query_gid_ex(ctx, 1, 99, &one, 0) == EINVAL);
	TR_EXPECT(ibv_query_gid_ex(ctx, 1, 0, &one, 1) == EINVAL);
	TR_EXPECT(ibv_query_gid_ex(ctx, 300, 0, &one, 0) == EINVAL);
	TR_EXPECT(ibv_query_gid_ex(ctx, 9, 0, &one, 0) != 0);
	/* the table lists the set entries only */
	memset(e, 0, sizeof(e));
	TR_EXPECT(ibv_query_gid_table(ctx, e, 4, 0) == 2);
	TR_EXPECT(e[0].gid_index == 0 && e[1].gid_index == 1 &&
		 e[1].gid.raw[15] == 0x77 && e[0].port_num == 1);
	TR_EXPECT(ibv_query_gid_table(ctx, e, 1, 0) == -EINVAL);
	TR_EXPECT(ibv_query_gid_table(ctx, e, 4, 1) == -EINVAL);
	TR_EXPECT(ibv_query_gid_table(ctx, NULL, 4, 0) == -EINVAL);
	TR_EXPECT(_ibv_query_gid_table(ctx, e, 4, 0, sizeof(e[0]) - 1) == -EINVAL);

	/* P_Key index: the first entry holding the key */
	TR_EXPECT(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)) == 0);
	TR_EXPECT(ibv_get_pkey_index(ctx, 1, htobe16(0x8001)) == 1);
	errno = 0;
	TR_EXPECT(ibv_get_pkey_index(ctx, 1, htobe16(0x1234)) == -1 && errno == ENOENT);
	errno = 0;
	TR_EXPECT(ibv_get_pkey_index(ctx, 9, htobe16(0xffff)) == -1 && errno != 0);
	errno = 0;
	TR_EXPECT(ibv_get_pkey_index(NULL, 1, htobe16(0xffff)) == -1 && errno == EINVAL);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(gids_and_pkeys_agree_in_both_modes)
{
	rt_run_both(script, ck_gids);
}

/* ------------------------------------------------------------------ */
/* Port and device queries: the caller's size                           */

static void ck_queries(struct rt *t)
{
	struct ibv_context *ctx = rt_open(t);
	struct verbs_context *vctx;
	int (*query_port_1_1)(struct ibv_context *, uint8_t, struct ibv_port_attr *);
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct ibv_port_attr full;
	unsigned char big[sizeof(struct ibv_port_attr) + 16];
	struct ibv_port_attr pa;

	if (!ctx)
		return;
	vctx = verbs_get_ctx(ctx);
	TR_EXPECT(ibv_query_port(ctx, 1, &full) == 0);
	/* the slot of the header's inline: bytes past the struct are zeroed */
	memset(big, 0xa5, sizeof(big));
	TR_EXPECT(vctx->query_port(ctx, 1, (struct ibv_port_attr *)big, sizeof(big)) == 0);
	TR_EXPECT(!memcmp(big, &full, sizeof(full)) && big[sizeof(full)] == 0 &&
		 big[sizeof(big) - 1] == 0);
	TR_EXPECT(vctx->query_port(ctx, 1, &pa, 0) == EINVAL);
	TR_EXPECT(vctx->query_port(ctx, 9, &pa, sizeof(pa)) != 0);
	/* the exported 1.1 symbol writes the 1.1 struct, up to flags */
	query_port_1_1 = (int (*)(struct ibv_context *, uint8_t, struct ibv_port_attr *))
		dlvsym(RTLD_DEFAULT, "ibv_query_port", "IBVERBS_1.1");
	TR_EXPECT(query_port_1_1 != NULL);
	if (query_port_1_1) {
		memset(&pa, 0xa5, sizeof(pa));
		TR_EXPECT(query_port_1_1(ctx, 1, &pa) == 0);
		TR_EXPECT(pa.state == full.state && pa.lid == full.lid &&
			 pa.link_layer == full.link_layer &&
			 pa.active_speed == full.active_speed);
		TR_EXPECT(*(unsigned char *)&pa.flags == 0xa5);
		TR_EXPECT(query_port_1_1(ctx, 1, NULL) == EINVAL);
		TR_EXPECT(query_port_1_1(NULL, 1, &pa) == EINVAL);
	}
	TR_EXPECT(ibv_query_device(ctx, &da) == 0 && da.phys_port_cnt == 1);
	TR_EXPECT(ibv_query_device(ctx, NULL) == EINVAL);
	TR_EXPECT(ibv_query_device_ex(ctx, NULL, &dx) == 0 &&
		 dx.orig_attr.max_qp == da.max_qp);
	TR_EXPECT(ibv_query_device_ex(ctx, &in, &dx) == EINVAL);
	TR_EXPECT(vctx->query_device_ex(ctx, NULL, &dx, sizeof(dx.orig_attr) - 1) == EINVAL);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(port_and_device_queries_honour_the_callers_size)
{
	rt_run_both(NULL, ck_queries);
}

/* ------------------------------------------------------------------ */
/* Address handles from a work completion                               */

static void ck_ah_from_wc(struct rt *t)
{
	struct ibv_context *ctx = rt_open(t);
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	struct ibv_ah_attr aa;
	struct ibv_wc wc = { .slid = 0x21, .sl = 3, .dlid_path_bits = 1 };
	struct ibv_grh grh;
	union ibv_gid local;

	if (!ctx)
		return;
	pd = ibv_alloc_pd(ctx);
	TR_EXPECT(pd != NULL);
	TR_EXPECT(ibv_query_gid(ctx, 1, 1, &local) == 0);
	if (!pd)
		goto out;
	/* no GRH: the LID route back */
	memset(&aa, 0xa5, sizeof(aa));
	TR_EXPECT(ibv_init_ah_from_wc(ctx, 1, &wc, NULL, &aa) == 0);
	TR_EXPECT(aa.dlid == 0x21 && aa.sl == 3 && aa.src_path_bits == 1 &&
		 aa.port_num == 1 && !aa.is_global);
	/* GRH: the sender's GID back, our GID's index as the source */
	memset(&grh, 0, sizeof(grh));
	grh.dgid = local;
	grh.sgid.raw[0] = 0xfe;
	grh.sgid.raw[15] = 0x42;
	grh.version_tclass_flow = htobe32((6u << 28) | (0x12u << 20) | 0xabcde);
	wc.wc_flags = IBV_WC_GRH;
	TR_EXPECT(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &aa) == 0);
	TR_EXPECT(aa.is_global && aa.grh.sgid_index == 1 && aa.grh.dgid.raw[15] == 0x42 &&
		 aa.grh.flow_label == 0xabcde && aa.grh.traffic_class == 0x12 &&
		 aa.grh.hop_limit == 0xff);
	ah = ibv_create_ah_from_wc(pd, &wc, &grh, 1);
	TR_EXPECT(ah && ah->pd == pd && ah->context == ctx);
	if (ah)
		TR_EXPECT(ibv_destroy_ah(ah) == 0);
	/* a GRH to a GID that is not ours names no source index */
	grh.dgid.raw[15] ^= 0xff;
	TR_EXPECT(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &aa) == ENOENT);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_ah_from_wc(pd, &wc, &grh, 1)) == ENOENT);
	TR_EXPECT(ibv_init_ah_from_wc(ctx, 1, &wc, NULL, &aa) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_ah_from_wc(NULL, &wc, &grh, 1)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_ah(NULL, &aa)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_create_ah(pd, NULL)) == EINVAL);
	TR_EXPECT(ibv_destroy_ah(NULL) == EINVAL);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
out:
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(address_handles_from_a_completion)
{
	rt_run_both(script, ck_ah_from_wc);
}

/* ------------------------------------------------------------------ */
/* MR and MW                                                            */

static void ck_mr_mw(struct rt *t)
{
	static char buf[4096];
	struct ibv_context *ctx = rt_open(t);
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_mw mw = {};
	struct ibv_mw_bind bind = {};

	if (!ctx)
		return;
	pd = ibv_alloc_pd(ctx);
	TR_EXPECT(pd != NULL);
	if (!pd)
		goto out;
	/* an I/O address other than the buffer's: only the extended op can */
	mr = ibv_reg_mr_iova(pd, buf, sizeof(buf), 0x10000, IBV_ACCESS_LOCAL_WRITE);
	if (t->legacy) {
		TR_EXPECT(!mr && errno == EOPNOTSUPP);
	} else {
		TR_EXPECT(mr && mr->addr == buf && mr->length == sizeof(buf));
		if (mr)
			TR_EXPECT(ibv_dereg_mr(mr) == 0);
	}
	mr = ibv_reg_mr_iova2(pd, buf, sizeof(buf), (uintptr_t)buf,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	TR_EXPECT(mr && mr->pd == pd && mr->context == ctx && mr->lkey);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	/* optional bits may be dropped; unknown ones may not */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_RELAXED_ORDERING);
	TR_EXPECT(mr != NULL);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr(pd, buf, sizeof(buf), 1 << 30)) == EINVAL);
	/* remote write or atomic needs local write */
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr(pd, buf, sizeof(buf),
					    IBV_ACCESS_REMOTE_WRITE)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr(pd, buf, sizeof(buf),
					    IBV_ACCESS_REMOTE_ATOMIC)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr(pd, NULL, sizeof(buf),
					    IBV_ACCESS_LOCAL_WRITE)) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_reg_mr(NULL, buf, 1, 0)) == EINVAL);
	TR_EXPECT(ibv_dereg_mr(NULL) == EINVAL);
	TR_EXPECT(ibv_dealloc_pd(NULL) == EINVAL);
	TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_pd(NULL)) == EINVAL);
	/* windows in the extended provider (MW-01), none through the 1.1
	 * table; bad types and NULLs first either way */
	if (t->legacy) {
		TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_mw(pd, IBV_MW_TYPE_1)) == EOPNOTSUPP);
		TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_mw(pd, IBV_MW_TYPE_2)) == EOPNOTSUPP);
	} else {
		struct ibv_mw *m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		struct ibv_mw *m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

		TR_EXPECT(m1 && m1->type == IBV_MW_TYPE_1 && m1->pd == pd);
		TR_EXPECT(m2 && m2->type == IBV_MW_TYPE_2 && m2->context == ctx);
		TR_EXPECT(!m1 || ibv_dealloc_mw(m1) == 0);
		TR_EXPECT(!m2 || ibv_dealloc_mw(m2) == 0);
	}
	TR_EXPECT(RT_PTR_ERRNO(ibv_alloc_mw(pd, (enum ibv_mw_type)3)) == EINVAL);
	TR_EXPECT(ctx->ops.alloc_mw(NULL, IBV_MW_TYPE_1) == NULL && errno == EINVAL);
	TR_EXPECT(ctx->ops.dealloc_mw(NULL) == EINVAL);
	mw.context = ctx;
	mw.pd = pd;
	mw.type = IBV_MW_TYPE_2;
	TR_EXPECT(ctx->ops.bind_mw(NULL, &mw, &bind) == EINVAL);
	TR_EXPECT(ibv_dealloc_pd(pd) == 0);
out:
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(mr_and_mw_rules_agree_in_both_modes)
{
	rt_run_both(NULL, ck_mr_mw);
}

/* ------------------------------------------------------------------ */
/* UD: a chain longer than the compat layer copies on the stack         */

#define LONG_CHAIN 70

static void ck_long_ud_chain(struct rt *t)
{
	static char buf[64] = "ud";
	static struct ibv_send_wr wr[LONG_CHAIN];
	struct ibv_context *ctx = rt_open(t);
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL, *dst = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_UD,
					.cap = { .max_send_wr = 128, .max_recv_wr = 1,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_send_wr *bad = NULL;
	struct ibv_sge sge, nosge[2];
	struct ibv_wc wc;
	int i;

	if (!ctx)
		return;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	qia.send_cq = qia.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &qia) : NULL;
	dst = pd && cq ? ibv_create_qp(pd, &qia) : NULL;
	aa.dlid = rt_port_lid(ctx);
	ah = pd ? ibv_create_ah(pd, &aa) : NULL;
	TR_EXPECT(pd && cq && mr && qp && dst && ah);
	if (!pd || !cq || !mr || !qp || !dst || !ah)
		goto out;
	TR_EXPECT(rt_connect_qp(qp, 0, aa.dlid) == 0);
	TR_EXPECT(rt_connect_qp(dst, 0, aa.dlid) == 0);
	sge = (struct ibv_sge){ (uintptr_t)buf, 2, mr->lkey };
	memset(nosge, 0, sizeof(nosge));
	for (i = 0; i < LONG_CHAIN; i++) {
		wr[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &sge,
					      .num_sge = 1, .opcode = IBV_WR_SEND };
		wr[i].next = i + 1 < LONG_CHAIN ? &wr[i + 1] : NULL;
		wr[i].wr.ud.ah = ah;
		wr[i].wr.ud.remote_qpn = dst->qp_num;
		wr[i].wr.ud.remote_qkey = 0x11111111;
	}
	/* the last is refused (two SGEs on a one-SGE queue): bad_wr names it */
	wr[LONG_CHAIN - 2].send_flags = IBV_SEND_SIGNALED;
	wr[LONG_CHAIN - 1].sg_list = nosge;
	wr[LONG_CHAIN - 1].num_sge = 2;
	TR_EXPECT(ibv_post_send(qp, wr, &bad) != 0 && bad == &wr[LONG_CHAIN - 1]);
	/* the ones before it went out: the signaled one completes */
	TR_EXPECT(rt_poll_one(cq, &wc) == 1 && wc.wr_id == LONG_CHAIN - 2 &&
		 wc.status == IBV_WC_SUCCESS);
out:
	if (ah)
		TR_EXPECT(ibv_destroy_ah(ah) == 0);
	if (dst)
		TR_EXPECT(ibv_destroy_qp(dst) == 0);
	if (qp)
		TR_EXPECT(ibv_destroy_qp(qp) == 0);
	if (mr)
		TR_EXPECT(ibv_dereg_mr(mr) == 0);
	if (cq)
		TR_EXPECT(ibv_destroy_cq(cq) == 0);
	if (pd)
		TR_EXPECT(ibv_dealloc_pd(pd) == 0);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

TR_TEST(long_ud_chain_maps_bad_wr_in_both_modes)
{
	rt_run_both(NULL, ck_long_ud_chain);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
