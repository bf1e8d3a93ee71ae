/* SPDX-License-Identifier: MIT */
/*
 * t4101: the extension verbs of rdma-core 44 beyond XRC, as a program
 * written against that release uses them: the extended device query and
 * the port query (DEVX-), extended CQs and their poll and read functions,
 * completion timestamps and the device clock (CQX-), ibv_rereg_mr (MR-),
 * memory windows of types 1 and 2 (MW-), thread and parent domains with
 * the application's allocators (PD-). Where a provider does not offer an
 * extension, the library's answer for a missing op is accepted and named
 * in a note (a legacy provider on the reference target has none of them).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "th.h"

/* The size an older release's struct had when fld was its last member:
 * its end, rounded up to the struct's alignment as sizeof is. */
#define DEVX_END(fld) ((offsetof(struct ibv_device_attr_ex, fld) + \
			sizeof(((struct ibv_device_attr_ex *)0)->fld) + 7) & ~(size_t)7)

static int devx_extended_is_zero(const struct ibv_device_attr_ex *a)
{
	static const struct ibv_device_attr_ex zero;

	return !memcmp((const char *)a + sizeof(a->orig_attr),
		       (const char *)&zero + sizeof(zero.orig_attr),
		       sizeof(*a) - sizeof(a->orig_attr));
}

/* DEVX-01: the base attributes restated, the port count in
 * phys_port_cnt_ex, and the capability word's low half the basic one. */
TH_TEST(query_device_ex_counts_the_ports_and_restates_the_base, "DEVX-01", 0)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_port_attr pa;
	uint32_t p;

	memset(&ax, 0xa5, sizeof(ax));
	assert_int_equal(ibv_query_device(t->ctx, &a), 0);
	assert_int_equal(ibv_query_device_ex(t->ctx, NULL, &ax), 0);
	assert_int_equal(ax.orig_attr.phys_port_cnt, a.phys_port_cnt);
	assert_int_equal(ax.orig_attr.device_cap_flags, a.device_cap_flags);
	assert_int_equal(ax.orig_attr.max_qp_wr, a.max_qp_wr);
	assert_int_equal(ax.orig_attr.max_cqe, a.max_cqe);
	assert_true(!memcmp(&ax.orig_attr.node_guid, &a.node_guid, sizeof(a.node_guid)));
	if (!ax.phys_port_cnt_ex) {
		/* the library's answer without the provider's op: base only */
		if (!devx_extended_is_zero(&ax))
			th_fail("phys_port_cnt_ex is 0 while other extended fields are set "
				"(device_cap_flags_ex %#llx)",
				(unsigned long long)ax.device_cap_flags_ex);
		th_note("no extended device query: the base attributes, the rest zero");
		return;
	}
	assert_int_equal(ax.phys_port_cnt_ex, a.phys_port_cnt);
	if ((uint32_t)ax.device_cap_flags_ex != (uint32_t)a.device_cap_flags)
		th_fail("device_cap_flags_ex %#llx: its low 32 bits are not device_cap_flags %#x",
			(unsigned long long)ax.device_cap_flags_ex, a.device_cap_flags);
	for (p = 1; p <= ax.phys_port_cnt_ex; p++)
		assert_int_equal(ibv_query_port(t->ctx, (uint8_t)p, &pa), 0);
	th_note("%u port(s), device_cap_flags_ex %#llx", ax.phys_port_cnt_ex,
		(unsigned long long)ax.device_cap_flags_ex);
}

/* DEVX-02: the command layer refuses an input comp_mask and a struct
 * smaller than the base attributes; the op's slot is called directly, as an
 * application built against another release's header calls it. */
TH_TEST(query_device_ex_refuses_input_mask_and_short_struct, "DEVX-02", 0)
{
	struct verbs_context *v = verbs_get_ctx_op(t->ctx, query_device_ex);
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex ax;
	int ret;

	if (!v)
		th_skip("the library has no query_device_ex slot");
	ret = v->query_device_ex(t->ctx, NULL, &ax, sizeof(ax.orig_attr) - 1);
	if (ret != EINVAL)
		th_fail("attr_size one below the base attributes: %d, not EINVAL", ret);
	ret = v->query_device_ex(t->ctx, &in, &ax, sizeof(ax));
	if (ret != EINVAL)
		th_fail("input comp_mask 1: %d, not EINVAL", ret);
}

/* DEVX-03: a caller's struct of an older release's size (attr_size) gets
 * not one byte past it: each struct ends at a guard page. */
TH_TEST(query_device_ex_writes_nothing_past_attr_size, "DEVX-03", 0)
{
	static const size_t sizes[] = {
		sizeof(struct ibv_device_attr),			/* base only */
		DEVX_END(hca_core_clock),			/* rdma-core v13 */
		DEVX_END(raw_packet_caps),
		DEVX_END(xrc_odp_caps),				/* before phys_port_cnt_ex */
		sizeof(struct ibv_device_attr_ex),
	};
	struct verbs_context *v = verbs_get_ctx_op(t->ctx, query_device_ex);
	size_t i;

	if (!v)
		th_skip("the library has no query_device_ex slot");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ibv_device_attr_ex *ax = th_guard_alloc(sizes[i]);
		int ret = v->query_device_ex(t->ctx, NULL, ax, sizes[i]);

		if (ret && ret != EOPNOTSUPP)
			th_fail("attr_size %zu: %d", sizes[i], ret);
		if (!ret && sizes[i] == sizeof(*ax) && ax->phys_port_cnt_ex == 0 &&
		    !devx_extended_is_zero(ax))
			th_fail("full size: no phys_port_cnt_ex with extended fields set");
		th_guard_free(ax, sizes[i]);
	}
}

/* DEVX-04: every port the device counts answers, the next one does not
 * (EINVAL), the same through the exported verb and the header's slot. */
TH_TEST(query_port_answers_each_counted_port, "DEVX-04", 0)
{
	struct ibv_port_attr a, b;
	struct ibv_device_attr da;
	uint32_t p;
	int ret;

	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	for (p = 1; p <= da.phys_port_cnt; p++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		assert_int_equal(ibv_query_port(t->ctx, (uint8_t)p, &a), 0);
		/* the exported 1.1 verb writes the 1.1 prefix (up to link_layer) */
		assert_int_equal((ibv_query_port)(t->ctx, (uint8_t)p, (void *)&b), 0);
		assert_int_equal(a.state, b.state);
		assert_int_equal(a.lid, b.lid);
		assert_int_equal(a.active_mtu, b.active_mtu);
		assert_int_equal(a.gid_tbl_len, b.gid_tbl_len);
		assert_int_equal(a.pkey_tbl_len, b.pkey_tbl_len);
		assert_int_equal(a.link_layer, b.link_layer);
		assert_true(a.gid_tbl_len > 0);
		assert_true(a.pkey_tbl_len > 0);
		assert_true(a.max_msg_sz > 0);
		assert_true(a.active_mtu >= IBV_MTU_256 && a.active_mtu <= a.max_mtu);
	}
	ret = ibv_query_port(t->ctx, (uint8_t)(da.phys_port_cnt + 1), &a);
	if (!ret)
		th_fail("query_port answers port %u of %u", da.phys_port_cnt + 1, da.phys_port_cnt);
	th_errno_strict(ret, EINVAL, "query_port past the last port");
	th_note("%u port(s)", da.phys_port_cnt);
}


/* ---- extended CQs (CQX-) ------------------------------------------------------ */
static struct ibv_cq_ex *cqx_new(struct th_ctx *t, uint64_t wc_flags,
				 struct ibv_comp_channel *ch, void *cq_context)
{
	struct ibv_cq_init_attr_ex a;
	struct ibv_cq_ex *cq;

	memset(&a, 0, sizeof(a));
	a.cqe = 32;
	a.cq_context = cq_context;
	a.channel = ch;
	a.wc_flags = wc_flags;
	cq = ibv_create_cq_ex(t->ctx, &a);
	if (!cq && errno == EOPNOTSUPP)
		th_ext_missing("ibv_create_cq_ex: EOPNOTSUPP (no extended CQs)");
	assert_non_null(cq);
	return cq;
}

/* CQX-01: the standard fields are there with their read functions; a bit
 * no release defines is the library's EOPNOTSUPP; a field the device does
 * not report is refused (EOPNOTSUPP) or comes with its read function. */
TH_TEST(create_cq_ex_gives_a_read_function_for_each_field, "CQX-01", 0)
{
	struct ibv_cq_init_attr_ex a;
	struct ibv_cq_ex *cq = cqx_new(t, IBV_WC_STANDARD_FLAGS, NULL, &a);
	static const struct { uint64_t bit; size_t off; const char *name; } opt[] = {
		{ IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, offsetof(struct ibv_cq_ex, read_completion_ts),
		  "completion timestamp" },
		{ IBV_WC_EX_WITH_CVLAN, offsetof(struct ibv_cq_ex, read_cvlan), "cvlan" },
		{ IBV_WC_EX_WITH_FLOW_TAG, offsetof(struct ibv_cq_ex, read_flow_tag), "flow tag" },
		{ IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		  offsetof(struct ibv_cq_ex, read_completion_wallclock_ns), "wallclock" },
	};
	size_t i;

	assert_ptr_equal(ibv_cq_ex_to_cq(cq)->context, t->ctx);
	assert_ptr_equal(ibv_cq_ex_to_cq(cq)->cq_context, &a);
	assert_true(ibv_cq_ex_to_cq(cq)->cqe >= 32);
	assert_non_null(cq->start_poll);
	assert_non_null(cq->next_poll);
	assert_non_null(cq->end_poll);
	assert_non_null(cq->read_opcode);
	assert_non_null(cq->read_vendor_err);
	assert_non_null(cq->read_wc_flags);
	assert_non_null(cq->read_byte_len);
	assert_non_null(cq->read_imm_data);
	assert_non_null(cq->read_qp_num);
	assert_non_null(cq->read_src_qp);
	assert_non_null(cq->read_slid);
	assert_non_null(cq->read_sl);
	assert_non_null(cq->read_dlid_path_bits);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);

	memset(&a, 0, sizeof(a));
	a.cqe = 8;
	a.wc_flags = 1ULL << 40;		/* no release defines it */
	errno = 0;
	if (ibv_create_cq_ex(t->ctx, &a))
		th_fail("wc_flags bit 40: created");
	assert_int_equal(errno, EOPNOTSUPP);
	for (i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		a.wc_flags = IBV_WC_STANDARD_FLAGS | opt[i].bit;
		errno = 0;
		cq = ibv_create_cq_ex(t->ctx, &a);
		if (!cq) {
			if (errno != EOPNOTSUPP)
				th_errno_strict(errno, EOPNOTSUPP, opt[i].name);
			th_note("%s: not reported by the device (errno %d)", opt[i].name, errno);
			continue;
		}
		if (!*(void *const *)((const char *)cq + opt[i].off))
			th_fail("%s: created without its read function", opt[i].name);
		th_note("%s: reported", opt[i].name);
		assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	}
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.cqe = 0;
	errno = 0;
	if (ibv_create_cq_ex(t->ctx, &a))
		th_fail("cqe 0: created");
	th_errno_strict(errno, EINVAL, "create_cq_ex with cqe 0");
}

struct rec { uint64_t wr_id; int status, opcode; uint32_t len, imm, qpn, src, flags, slid, sl; };

struct cq_pair {
	struct ibv_pd *pd;
	struct ibv_qp *a, *b;
	char *buf;
	struct ibv_mr *mr;
};

/* a and b connected to each other on the test's port: a in RTS, b in RTR
 * (it receives; a test that posts on b moves it on). */
static void qp_connect(struct th_ctx *t, struct ibv_qp *a, struct ibv_qp *b)
{
	assert_int_equal(th_pair_connect(a, b, t->port, 0), 0);
}

static void cq_pair_up(struct th_ctx *t, struct cq_pair *p, struct ibv_cq *cq)
{
	p->pd = ibv_alloc_pd(t->ctx);
	assert_non_null(p->pd);
	p->buf = calloc(1, 4096);
	assert_non_null(p->buf);
	p->mr = ibv_reg_mr(p->pd, p->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(p->mr);
	p->a = th_rc_qp(p->pd, cq, IBV_QPT_RC);
	p->b = th_rc_qp(p->pd, cq, IBV_QPT_RC);
	assert_non_null(p->a);
	assert_non_null(p->b);
	qp_connect(t, p->a, p->b);
}

static void cq_pair_down(struct cq_pair *p)
{
	assert_int_equal(ibv_destroy_qp(p->a), 0);
	assert_int_equal(ibv_destroy_qp(p->b), 0);
	assert_int_equal(ibv_dereg_mr(p->mr), 0);
	assert_int_equal(ibv_dealloc_pd(p->pd), 0);
	free(p->buf);
}

/* Three WRs a -> b: SEND, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM, each with its
 * receive: six completions on the one CQ. */
static void cq_pair_traffic(struct cq_pair *p)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM,
	};
	struct ibv_sge rs = { (uintptr_t)(p->buf + 1024), 512, p->mr->lkey };
	struct ibv_sge ss = { (uintptr_t)p->buf, 0, p->mr->lkey };
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr wr, *bad;
	int i;

	for (i = 0; i < 3; i++) {
		rwr = (struct ibv_recv_wr){ .wr_id = 0x200 + i, .sg_list = &rs, .num_sge = 1 };
		assert_int_equal(ibv_post_recv(p->b, &rwr, &rbad), 0);
		memset(&wr, 0, sizeof(wr));
		ss.length = 16 + 8 * i;
		wr.wr_id = 0x100 + i;
		wr.sg_list = &ss;
		wr.num_sge = 1;
		wr.opcode = ops[i];
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0xfeed0000u + i);
		wr.wr.rdma.remote_addr = (uintptr_t)(p->buf + 2048);
		wr.wr.rdma.rkey = p->mr->rkey;
		assert_int_equal(ibv_post_send(p->a, &wr, &bad), 0);
	}
}

static void rec_from_wc(struct rec *r, const struct ibv_wc *wc)
{
	int recv = wc->opcode & IBV_WC_RECV;

	memset(r, 0, sizeof(*r));
	r->wr_id = wc->wr_id;
	r->status = wc->status;
	r->opcode = wc->opcode;
	r->len = recv ? wc->byte_len : 0;	/* defined for receives */
	r->imm = (wc->wc_flags & IBV_WC_WITH_IMM) ? wc->imm_data : 0;
	r->qpn = wc->qp_num;
	r->src = recv ? wc->src_qp : 0;
	r->flags = wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_GRH);
	r->slid = recv ? wc->slid : 0;
	r->sl = recv ? wc->sl : 0;
}

static void rec_from_cqx(struct rec *r, struct ibv_cq_ex *cq)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = cq->wr_id;
	wc.status = cq->status;
	wc.opcode = ibv_wc_read_opcode(cq);
	wc.byte_len = ibv_wc_read_byte_len(cq);
	wc.wc_flags = ibv_wc_read_wc_flags(cq);
	wc.imm_data = ibv_wc_read_imm_data(cq);
	wc.qp_num = ibv_wc_read_qp_num(cq);
	wc.src_qp = ibv_wc_read_src_qp(cq);
	wc.slid = (uint16_t)ibv_wc_read_slid(cq);
	wc.sl = ibv_wc_read_sl(cq);
	wc.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	(void)ibv_wc_read_vendor_err(cq);
	rec_from_wc(r, &wc);
}

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;

	return a->wr_id < b->wr_id ? -1 : a->wr_id > b->wr_id;
}

/*
 * The completions of an extended CQ as they come, through start_poll,
 * next_poll and end_poll, each handed to each() with its index: until want
 * of them were read, or 3 s (times IBVCT_TIMEOUT_MULT) passed; more than
 * max fails. next_poll past the last is ENOENT (CQX-03). How many were read.
 */
static int cqx_read(struct ibv_cq_ex *cqx, int want, int max,
		    void (*each)(struct ibv_cq_ex *cqx, int i, void *arg), void *arg)
{
	struct ibv_poll_cq_attr pa = { 0 };
	long tries, limit = 3000 * tr_timeout_mult();
	int n = 0, ret;

	for (tries = 0; n < want && tries < limit; tries++) {
		ret = ibv_start_poll(cqx, &pa);
		if (ret == ENOENT) {
			usleep(1000);
			continue;
		}
		assert_int_equal(ret, 0);
		do {
			if (n >= max)
				th_fail("more than %d completions", max);
			each(cqx, n++, arg);
		} while ((ret = ibv_next_poll(cqx)) == 0);
		if (ret != ENOENT)
			th_fail("next_poll past the last completion: %d, not ENOENT", ret);
		ibv_end_poll(cqx);
	}
	return n;
}

/* cqx_read'"'"'s each() of CQX-02: the record, and its QP number by role (the
 * send completions are a'"'"'s, the receives b'"'"'s). */
struct recs {
	struct rec *r;
	const struct cq_pair *p;
};

static void rec_each(struct ibv_cq_ex *cqx, int i, void *arg)
{
	struct recs *rs = arg;
	struct rec *r = &rs->r[i];

	rec_from_cqx(r, cqx);
	if (r->qpn != ((r->opcode & IBV_WC_RECV) ? rs->p->b : rs->p->a)->qp_num)
		th_fail("read_qp_num %#x for wr_id %#llx", r->qpn, (unsigned long long)r->wr_id);
}

/* CQX-02: the poll and read functions of an extended CQ read every
 * completion as ibv_poll_cq reads it, field by field. */
TH_TEST(extended_poll_reads_what_poll_cq_reads, "CQX-02", 0)
{
	struct ibv_cq_ex *cqx = cqx_new(t, IBV_WC_STANDARD_FLAGS, NULL, NULL);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 32, NULL, NULL, 0);
	struct rec a[8], b[8];
	struct cq_pair p;
	struct ibv_wc wc;
	int n = 0, m, i;

	assert_non_null(cq);
	cq_pair_up(t, &p, cq);
	cq_pair_traffic(&p);
	while (n < 6) {
		assert_int_equal(th_poll(cq, &wc), 1);
		if (wc.qp_num != ((wc.opcode & IBV_WC_RECV) ? p.b : p.a)->qp_num)
			th_fail("qp_num %#x for wr_id %#llx", wc.qp_num, (unsigned long long)wc.wr_id);
		rec_from_wc(&a[n++], &wc);
	}
	cq_pair_down(&p);
	cq_pair_up(t, &p, ibv_cq_ex_to_cq(cqx));
	cq_pair_traffic(&p);
	m = cqx_read(cqx, 6, 8, rec_each, &(struct recs){ b, &p });
	cq_pair_down(&p);
	if (m != 6)
		th_fail("%d completions through the extended CQ, 6 through ibv_poll_cq", m);
	qsort(a, 6, sizeof(a[0]), rec_cmp);
	qsort(b, 6, sizeof(b[0]), rec_cmp);
	for (i = 0; i < 6; i++) {
		/* the two runs used other QPs: their numbers were checked by role */
		a[i].qpn = b[i].qpn = 0;
		a[i].src = b[i].src = 0;
		if (memcmp(&a[i], &b[i], sizeof(a[i])))
			th_fail("completion wr_id %#llx: opcode %d len %u imm %#x flags %#x by "
				"ibv_poll_cq, wr_id %#llx opcode %d len %u imm %#x flags %#x by the "
				"read functions", (unsigned long long)a[i].wr_id, a[i].opcode,
				a[i].len, a[i].imm, a[i].flags, (unsigned long long)b[i].wr_id,
				b[i].opcode, b[i].len, b[i].imm, b[i].flags);
	}
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

/* cqx_read'"'"'s each() that only counts. */
static void count_each(struct ibv_cq_ex *cqx, int i, void *arg)
{
	(void)cqx;
	(void)i;
	(void)arg;
}

/* CQX-03: start_poll on an empty CQ is ENOENT (no end_poll owed); the
 * last next_poll is ENOENT; no completion is lost or read twice. */
TH_TEST(start_poll_on_an_empty_cq_is_enoent, "CQX-03", 0)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cqx = cqx_new(t, IBV_WC_STANDARD_FLAGS, NULL, NULL);
	struct cq_pair p;
	int ret;

	ret = ibv_start_poll(cqx, &pa);
	if (ret != ENOENT)
		th_fail("start_poll on an empty CQ: %d, not ENOENT", ret);
	cq_pair_up(t, &p, ibv_cq_ex_to_cq(cqx));
	cq_pair_traffic(&p);
	assert_int_equal(cqx_read(cqx, 6, 6, count_each, NULL), 6);
	ret = ibv_start_poll(cqx, &pa);
	if (ret != ENOENT)
		th_fail("start_poll once all were read: %d, not ENOENT", ret);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
}

/* CQX-04: a completion channel reports the extended CQ as its ibv_cq,
 * with the cq_context it was created with. */
TH_TEST(completion_channel_reports_the_extended_cq, "CQX-04", 0)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t->ctx);
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cqx;
	struct ibv_cq *ev_cq;
	struct cq_pair p;
	void *ev_ctx;
	int marker;

	assert_non_null(ch);
	cqx = cqx_new(t, IBV_WC_STANDARD_FLAGS, ch, &marker);
	assert_ptr_equal(ibv_cq_ex_to_cq(cqx)->channel, ch);
	assert_int_equal(ibv_req_notify_cq(ibv_cq_ex_to_cq(cqx), 0), 0);
	cq_pair_up(t, &p, ibv_cq_ex_to_cq(cqx));
	cq_pair_traffic(&p);
	assert_int_equal(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	assert_ptr_equal(ev_cq, ibv_cq_ex_to_cq(cqx));
	assert_ptr_equal(ev_ctx, &marker);
	ibv_ack_cq_events(ev_cq, 1);
	assert_int_equal(ibv_start_poll(cqx, &pa), 0);
	ibv_end_poll(cqx);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
}

/* ---- completion timestamps (CQX-06) ------------------------------------------------ */
/* The timestamp mask mlx5 and mlx4 report whatever the device: their
 * kernel drivers set it unconditionally (linux v6.1
 * drivers/infiniband/hw/mlx5/main.c mlx5_ib_query_device,
 * drivers/infiniband/hw/mlx4/main.c mlx4_ib_query_device); 0 for others. */
static uint64_t driver_ts_mask(void)
{
	const char *d = th_driver();

	if (!strcmp(d, "mlx5"))
		return 0x7fffffffffffffffULL;
	if (!strcmp(d, "mlx4"))
		return 0xffffffffffffULL;
	return 0;
}

/* b is not before a on a counter that keeps the bits of mask and wraps:
 * less than half its range ahead. */
static int ts_not_before(uint64_t a, uint64_t b, uint64_t mask)
{
	return ((b - a) & mask) <= (mask >> 1);
}

/* The device clock through ibv_query_rt_values_ex: 1 with its count, 0
 * when the provider has no op (libibverbs' EOPNOTSUPP, or mlx5's without
 * the clock page mapped). */
static int raw_clock(struct th_ctx *t, uint64_t *now)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int ret = ibv_query_rt_values_ex(t->ctx, &v);

	if (ret == EOPNOTSUPP)
		return 0;
	if (ret || !(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		th_fail("ibv_query_rt_values_ex(IBV_VALUES_MASK_RAW_CLOCK): %d, comp_mask %#x", ret,
			v.comp_mask);
	*now = (uint64_t)v.raw_clock.tv_sec * 1000000000u + (uint64_t)v.raw_clock.tv_nsec;
	return 1;
}

/* cqx_read'"'"'s each() of CQX-06: a successful completion'"'"'s timestamp. */
static void ts_each(struct ibv_cq_ex *cqx, int i, void *arg)
{
	uint64_t *ts = arg;

	if (cqx->status != IBV_WC_SUCCESS)
		th_fail("wr_id %#llx: status %d", (unsigned long long)cqx->wr_id, cqx->status);
	ts[i] = ibv_wc_read_completion_ts(cqx);
}

/* CQX-06: a device with a completion clock reports its rate and the mask
 * of a timestamp; an extended CQ asked for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
 * stamps each completion with that clock when it is made: in the mask's
 * bits, never going back in completion order, between the raw clock read
 * before the work was posted and after it was polled. */
TH_TEST(completion_timestamps_follow_the_device_clock, "CQX-06", 0)
{
	struct ibv_values_ex bad = {
		.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | IBV_VALUES_MASK_RESERVED,
	};
	struct ibv_cq_init_attr_ex a;
	struct ibv_device_attr_ex ax;
	uint64_t want = driver_ts_mask(), mask, ts[8], raw0 = 0, raw1 = 0;
	struct ibv_cq_ex *cqx;
	struct cq_pair p;
	int n, i, ret, raw;

	memset(&ax, 0, sizeof(ax));
	assert_int_equal(ibv_query_device_ex(t->ctx, NULL, &ax), 0);
	mask = ax.completion_timestamp_mask;
	if (want && mask != want)
		th_fail("the %s driver reports completion_timestamp_mask %#llx, not %#llx",
			th_driver(), (unsigned long long)mask, (unsigned long long)want);
	if (!mask)
		th_skip("the device has no completion clock: ibv_query_device_ex reports "
			"completion_timestamp_mask 0 (hca_core_clock %llu)",
			(unsigned long long)ax.hca_core_clock);
	if (mask & (mask + 1))
		th_fail("completion_timestamp_mask %#llx is not 2^n - 1", (unsigned long long)mask);
	th_note("hca_core_clock %llu kHz, completion_timestamp_mask %#llx",
		(unsigned long long)ax.hca_core_clock, (unsigned long long)mask);
	/* extended CQs at all (else a skip with the reason), then with timestamps */
	cqx = cqx_new(t, IBV_WC_STANDARD_FLAGS, NULL, NULL);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	memset(&a, 0, sizeof(a));
	a.cqe = 32;
	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	cqx = ibv_create_cq_ex(t->ctx, &a);
	if (!cqx)
		th_fail("the device reports a clock, but create_cq_ex with "
			"IBV_WC_EX_WITH_COMPLETION_TIMESTAMP fails: %s", strerror(errno));
	if (!cqx->read_completion_ts)
		th_fail("created without read_completion_ts");
	/* a comp_mask bit the op does not know: EINVAL, nothing written */
	ret = ibv_query_rt_values_ex(t->ctx, &bad);
	if (ret != EOPNOTSUPP && (ret != EINVAL ||
				  bad.comp_mask != (IBV_VALUES_MASK_RAW_CLOCK | IBV_VALUES_MASK_RESERVED)))
		th_fail("ibv_query_rt_values_ex with IBV_VALUES_MASK_RESERVED: %d, comp_mask %#x, "
			"not EINVAL with it untouched", ret, bad.comp_mask);
	raw = raw_clock(t, &raw0);
	cq_pair_up(t, &p, ibv_cq_ex_to_cq(cqx));
	cq_pair_traffic(&p);
	n = cqx_read(cqx, 6, 8, ts_each, ts);
	if (raw && !raw_clock(t, &raw1))
		th_fail("ibv_query_rt_values_ex answered once, then EOPNOTSUPP");
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		if (ts[i] & ~mask)
			th_fail("completion %d: timestamp %#llx has bits outside the mask %#llx", i,
				(unsigned long long)ts[i], (unsigned long long)mask);
		if (i && !ts_not_before(ts[i - 1], ts[i], mask))
			th_fail("completion %d: timestamp %#llx before the one of completion %d, "
				"%#llx", i, (unsigned long long)ts[i], i - 1,
				(unsigned long long)ts[i - 1]);
		if (raw && (!ts_not_before(raw0 & mask, ts[i], mask) ||
			    !ts_not_before(ts[i], raw1 & mask, mask)))
			th_fail("completion %d: timestamp %#llx not between the raw clock before "
				"the post (%#llx) and after the poll (%#llx)", i,
				(unsigned long long)ts[i], (unsigned long long)(raw0 & mask),
				(unsigned long long)(raw1 & mask));
	}
	if (raw)
		th_note("6 completions within %llu ticks of the raw clock",
			(unsigned long long)((raw1 - raw0) & mask));
	else
		th_note("no ibv_query_rt_values_ex (EOPNOTSUPP): timestamps checked for order only");
}

/* ---- ibv_rereg_mr (MR-) --------------------------------------------------------- */
/* MR-01: the library's own checks: an unknown flag, a translation without
 * address or length, an access without IBV_REREG_MR_CHANGE_ACCESS are
 * IBV_REREG_MR_ERR_INPUT with EINVAL before the driver, the MR untouched. */
TH_TEST(rereg_mr_refuses_bad_input_and_keeps_the_mr, "MR-01", 0)
{
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	char *buf = calloc(1, 4096);
	struct ibv_mr *mr, saved;

	assert_non_null(pd);
	assert_non_null(buf);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	saved = *mr;
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, 1 << 20, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 4096, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	assert_ptr_equal(mr->addr, saved.addr);
	assert_int_equal(mr->length, saved.length);
	assert_int_equal(mr->lkey, saved.lkey);
	assert_int_equal(mr->rkey, saved.rkey);
	assert_ptr_equal(mr->pd, pd);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
}

static int rereg(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t len, int acc)
{
	int ret = ibv_rereg_mr(mr, flags, pd, addr, len, acc);

	if (ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP)
		th_ext_missing("ibv_rereg_mr: EOPNOTSUPP (the driver has no rereg_mr)");
	return ret;
}

/* RDMA WRITE of 8 bytes from qp (on the pair's PD) to [addr, rkey]: the status. */
static int qp_write(struct cq_pair *p, struct ibv_qp *qp, struct ibv_cq *cq, uint64_t addr,
		    uint32_t rkey)
{
	struct ibv_sge ss = { (uintptr_t)p->buf, 8, p->mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	memcpy(p->buf, "rereg-ok", 8);
	wr.wr_id = 0x51;
	wr.sg_list = &ss;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
	assert_int_equal(th_poll(cq, &wc), 1);
	return wc.status;
}

/* RDMA WRITE of 8 bytes from a to the peer's [addr, rkey]: the status. */
static int cq_pair_write(struct cq_pair *p, struct ibv_cq *cq, uint64_t addr, uint32_t rkey)
{
	return qp_write(p, p->a, cq, addr, rkey);
}

/* MR-02: a done rereg takes effect at once: the new translation is where
 * the region's key writes, a new access is what it grants, and moved to
 * another PD the region is out of reach of the old PD's QPs and holds the
 * new PD instead of the old one. */
TH_TEST(rereg_mr_moves_translation_access_and_pd, "MR-02", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *a = calloc(1, 4096), *b = calloc(1, 4096);
	struct ibv_pd *pd2, *pd3;
	struct ibv_mr *mr, *mr3;
	struct cq_pair p;
	int st, ret;

	assert_non_null(cq);
	assert_non_null(a);
	assert_non_null(b);
	cq_pair_up(t, &p, cq);
	pd2 = ibv_alloc_pd(t->ctx);
	assert_non_null(pd2);
	mr = ibv_reg_mr(p.pd, a, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	/* no remote write yet: refused */
	st = cq_pair_write(&p, cq, (uintptr_t)a, mr->rkey);
	if (st == IBV_WC_SUCCESS)
		th_fail("RDMA WRITE into a region without remote write succeeded");
	assert_int_equal(ibv_destroy_qp(p.a), 0);
	assert_int_equal(ibv_destroy_qp(p.b), 0);
	p.a = th_rc_qp(p.pd, cq, IBV_QPT_RC);
	p.b = th_rc_qp(p.pd, cq, IBV_QPT_RC);
	assert_non_null(p.a);
	assert_non_null(p.b);
	qp_connect(t, p.a, p.b);
	assert_int_equal(rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
			       NULL, b, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	assert_ptr_equal(mr->addr, b);
	assert_int_equal(mr->length, 4096);
	st = cq_pair_write(&p, cq, (uintptr_t)b, mr->rkey);
	if (st != IBV_WC_SUCCESS)
		th_fail("RDMA WRITE into the new translation: status %d", st);
	if (memcmp(b, "rereg-ok", 8) || !memcmp(a, "rereg-ok", 8))
		th_fail("the write did not land in the new buffer only");
	/* to another PD: the old PD's QPs no longer reach it */
	assert_int_equal(rereg(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	assert_ptr_equal(mr->pd, pd2);
	memset(b, 0, 8);
	st = cq_pair_write(&p, cq, (uintptr_t)b, mr->rkey);
	if (st == IBV_WC_SUCCESS)
		th_fail("a QP of the old PD still writes into the region moved to another PD");
	th_note("after the move to another PD: status %d", st);
	/* the region's use of a PD moves with it: the PD it left can go at
	 * once, the one it is on not while it lives (EBUSY) */
	pd3 = ibv_alloc_pd(t->ctx);
	assert_non_null(pd3);
	mr3 = ibv_reg_mr(pd3, a, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr3);
	assert_int_equal(rereg(mr3, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	ret = ibv_dealloc_pd(pd3);
	if (ret)
		th_fail("the PD a region left: ibv_dealloc_pd %d, not 0", ret);
	ret = ibv_dealloc_pd(pd2);
	if (ret != EBUSY)
		th_fail("the PD two regions moved to: ibv_dealloc_pd %d, not EBUSY", ret);
	assert_int_equal(ibv_dereg_mr(mr3), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(a);
	free(b);
}

/* MR-03: the kernel's refusals reach the caller as IBV_REREG_MR_ERR_CMD
 * (no flag at all; remote write without local write) and change nothing;
 * the region takes a valid rereg after them. */
TH_TEST(rereg_mr_kernel_refusals_change_nothing, "MR-03", 0)
{
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	char *buf = calloc(1, 4096);
	struct ibv_mr *mr;
	int ret;

	assert_non_null(pd);
	assert_non_null(buf);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	ret = rereg(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		th_fail("a valid rereg (the same access): %d, errno %d", ret, errno);
	errno = 0;
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	if (ret != IBV_REREG_MR_ERR_CMD)
		th_fail("rereg without a flag: %d, not IBV_REREG_MR_ERR_CMD", ret);
	th_errno_strict(errno, EINVAL, "rereg without a flag");
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE);
	if (ret != IBV_REREG_MR_ERR_CMD)
		th_fail("remote write without local write: %d, not IBV_REREG_MR_ERR_CMD", ret);
	th_errno_strict(errno, EINVAL, "rereg to remote write without local write");
	assert_ptr_equal(mr->addr, buf);
	assert_ptr_equal(mr->pd, pd);
	assert_int_equal(rereg(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
}

/* ---- thread and parent domains (PD-) ---------------------------------------------- */
/* PD-01: alloc_td takes no comp_mask bit; alloc_parent_domain needs a PD
 * and takes only the ALLOCATORS and PD_CONTEXT bits: EINVAL otherwise. */
TH_TEST(td_and_parent_domain_check_their_attributes, "PD-01", 0)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa;
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *d;
	struct ibv_td *td;

	assert_non_null(pd);
	ta.comp_mask = 0;
	td = ibv_alloc_td(t->ctx, &ta);
	if (!td && errno == EOPNOTSUPP)
		th_ext_missing("ibv_alloc_td: EOPNOTSUPP (no thread domains)");
	assert_non_null(td);
	ta.comp_mask = 1;
	errno = 0;
	if (ibv_alloc_td(t->ctx, &ta))
		th_fail("alloc_td with comp_mask 1 succeeded");
	assert_int_equal(errno, EINVAL);
	memset(&pa, 0, sizeof(pa));
	pa.td = td;
	errno = 0;
	if (ibv_alloc_parent_domain(t->ctx, &pa))
		th_fail("a parent domain without a PD was made");
	assert_int_equal(errno, EINVAL);
	pa.pd = pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT << 1;
	errno = 0;
	if (ibv_alloc_parent_domain(t->ctx, &pa))
		th_fail("a parent domain with an unknown comp_mask bit was made");
	assert_int_equal(errno, EINVAL);
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	d = ibv_alloc_parent_domain(t->ctx, &pa);
	assert_non_null(d);
	assert_ptr_equal(d->context, t->ctx);
	assert_int_equal(ibv_dealloc_pd(d), 0);
	assert_int_equal(ibv_dealloc_td(td), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* PD-02: a TD or a PD that a parent domain uses, and a parent domain that
 * objects were made on, cannot go (EBUSY); in reverse order all go. */
TH_TEST(parent_domain_holds_its_td_and_pd, "PD-02", 0)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr pa;
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *d;
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_td *td;
	struct ibv_qp *q;
	int ret;

	assert_non_null(pd);
	assert_non_null(cq);
	td = ibv_alloc_td(t->ctx, &ta);
	if (!td && errno == EOPNOTSUPP)
		th_ext_missing("ibv_alloc_td: EOPNOTSUPP (no thread domains)");
	assert_non_null(td);
	memset(&pa, 0, sizeof(pa));
	pa.pd = pd;
	pa.td = td;
	d = ibv_alloc_parent_domain(t->ctx, &pa);
	assert_non_null(d);
	q = th_rc_qp(d, cq, IBV_QPT_RC);
	assert_non_null(q);
	ret = ibv_dealloc_td(td);
	if (ret != EBUSY)
		th_fail("dealloc_td under a parent domain: %d, not EBUSY", ret);
	ret = ibv_dealloc_pd(pd);
	if (ret != EBUSY)
		th_fail("dealloc_pd of a parent domain's PD: %d, not EBUSY", ret);
	ret = ibv_dealloc_pd(d);
	if (ret != EBUSY)
		th_fail("dealloc of a parent domain a QP was made on: %d, not EBUSY", ret);
	assert_int_equal(ibv_destroy_qp(q), 0);
	assert_int_equal(ibv_dealloc_pd(d), 0);
	assert_int_equal(ibv_dealloc_td(td), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

struct pd_alloc_log {
	int allocs, frees, mode;	/* mode 1: answer IBV_ALLOCATOR_USE_DEFAULT */
	void *ptr[8];
	struct ibv_pd *pd;
	int bad;
};

static void *pd_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		      uint64_t resource_type)
{
	struct pd_alloc_log *l = pd_context;
	void *p;

	if (pd != l->pd)
		l->bad++;
	if (l->mode)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (l->allocs >= 8 || posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) :
					     alignment, size))
		return NULL;
	l->ptr[l->allocs++] = p;
	return p;
}

static void pd_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type)
{
	struct pd_alloc_log *l = pd_context;
	int i;

	if (pd != l->pd)
		l->bad++;
	for (i = 0; i < l->allocs; i++)
		if (l->ptr[i] == ptr) {
			l->ptr[i] = NULL;
			l->frees++;
			free(ptr);
			return;
		}
	l->bad++;
}

/* PD-03: objects made on a parent domain with allocators take their queue
 * buffers from them (or the driver's, for IBV_ALLOCATOR_USE_DEFAULT), give
 * back each one at destroy, and work: a SEND between two of its QPs. */
TH_TEST(parent_domain_allocators_give_the_queue_buffers, "PD-03", 0)
{
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *d;
	struct ibv_parent_domain_init_attr pa;
	struct ibv_cq_init_attr_ex ca;
	struct pd_alloc_log log;
	struct ibv_cq_ex *cqx;
	struct cq_pair p;
	struct ibv_wc wc;
	int mode, i;

	assert_non_null(pd);
	for (mode = 0; mode < 2; mode++) {
		memset(&log, 0, sizeof(log));
		log.mode = mode;
		memset(&pa, 0, sizeof(pa));
		pa.pd = pd;
		pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
		pa.alloc = pd_alloc;
		pa.free = pd_free;
		pa.pd_context = &log;
		d = ibv_alloc_parent_domain(t->ctx, &pa);
		if (!d && errno == EOPNOTSUPP)
			th_ext_missing("ibv_alloc_parent_domain: EOPNOTSUPP (no parent domains)");
		assert_non_null(d);
		log.pd = d;
		memset(&ca, 0, sizeof(ca));
		ca.cqe = 16;
		ca.wc_flags = IBV_WC_STANDARD_FLAGS;
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
		ca.parent_domain = d;
		cqx = ibv_create_cq_ex(t->ctx, &ca);
		if (!cqx && errno == EOPNOTSUPP)
			th_ext_missing("ibv_create_cq_ex on a parent domain: EOPNOTSUPP");
		assert_non_null(cqx);
		/* QPs on the parent domain; the pair's MR on the same */
		memset(&p, 0, sizeof(p));
		p.pd = pd;
		p.buf = calloc(1, 4096);
		assert_non_null(p.buf);
		p.mr = ibv_reg_mr(d, p.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		assert_non_null(p.mr);
		p.a = th_rc_qp(d, ibv_cq_ex_to_cq(cqx), IBV_QPT_RC);
		p.b = th_rc_qp(d, ibv_cq_ex_to_cq(cqx), IBV_QPT_RC);
		assert_non_null(p.a);
		assert_non_null(p.b);
		if (!mode && log.allocs < 1)
			th_fail("no buffer came from the parent domain's allocator");
		th_note("%s: %d buffers from the allocator", mode ? "USE_DEFAULT" : "custom",
			log.allocs);
		qp_connect(t, p.a, p.b);
		cq_pair_traffic(&p);
		for (i = 0; i < 6; i++)
			assert_int_equal(th_poll(ibv_cq_ex_to_cq(cqx), &wc), 1);
		assert_int_equal(ibv_destroy_qp(p.a), 0);
		assert_int_equal(ibv_destroy_qp(p.b), 0);
		assert_int_equal(ibv_dereg_mr(p.mr), 0);
		assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
		free(p.buf);
		if (log.frees != log.allocs || log.bad)
			th_fail("%d buffers allocated, %d given back, %d wrong calls", log.allocs,
				log.frees, log.bad);
		assert_int_equal(ibv_dealloc_pd(d), 0);
	}
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}


/* ---- memory windows (MW-) ------------------------------------------------------- */
static void cq_pair_reconnect(struct th_ctx *t, struct cq_pair *p, struct ibv_cq *cq)
{
	assert_int_equal(ibv_destroy_qp(p->a), 0);
	assert_int_equal(ibv_destroy_qp(p->b), 0);
	p->a = th_rc_qp(p->pd, cq, IBV_QPT_RC);
	p->b = th_rc_qp(p->pd, cq, IBV_QPT_RC);
	assert_non_null(p->a);
	assert_non_null(p->b);
	qp_connect(t, p->a, p->b);
}

static struct ibv_mw *mw_new(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	if (!mw && errno == EOPNOTSUPP)
		th_ext_missing("ibv_alloc_mw: EOPNOTSUPP (no memory windows)");
	return mw;
}

/* A bind of mw on qp (type 1: ibv_bind_mw; the completion's status). The
 * library sets mw->rkey to the new key when the bind is posted; on a failed
 * post or an error completion the caller puts the old key back
 * (ibv_bind_mw.3, NOTES): rxe checks the window's current key at each bind
 * (linux v6.1 drivers/infiniband/sw/rxe/rxe_mw.c:180 rxe_bind_mw, the key
 * rdma-core v44.0 providers/rxe/rxe.c:193 sends from mw->rkey), so a stale
 * one fails every later bind. */
static int mw_bind1(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw, struct ibv_mr *mr,
		    uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b;
	struct ibv_wc wc;
	uint32_t old;
	int ret;

	memset(&b, 0, sizeof(b));
	b.wr_id = 0x3b;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = addr;
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = access;
	old = mw->rkey;
	ret = ibv_bind_mw(qp, mw, &b);
	if (ret) {
		mw->rkey = old;
		return -ret;
	}
	assert_int_equal(th_poll(cq, &wc), 1);
	assert_int_equal(wc.wr_id, 0x3b);
	if (wc.status == IBV_WC_SUCCESS)
		assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	else
		mw->rkey = old;
	return wc.status;
}

/* MW-01: windows of type 1 and, on a device that binds them, type 2; any
 * other type is EINVAL; each goes with ibv_dealloc_mw. */
TH_TEST(alloc_mw_of_each_type, "MW-01", 0)
{
	struct ibv_device_attr da;
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_mw *m1, *m2;

	assert_non_null(pd);
	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	m1 = mw_new(pd, IBV_MW_TYPE_1);
	assert_non_null(m1);
	assert_int_equal(m1->type, IBV_MW_TYPE_1);
	assert_ptr_equal(m1->pd, pd);
	assert_ptr_equal(m1->context, t->ctx);
	if (!(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW))
		th_note("ibv_alloc_mw works, yet IBV_DEVICE_MEM_WINDOW is not reported");
	m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (da.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) {
		assert_non_null(m2);
		assert_int_equal(m2->type, IBV_MW_TYPE_2);
		assert_true(m2->rkey != m1->rkey);
		assert_int_equal(ibv_dealloc_mw(m2), 0);
	} else if (m2) {
		th_note("a type 2 window without IBV_DEVICE_MEM_WINDOW_TYPE_2A/2B");
		assert_int_equal(ibv_dealloc_mw(m2), 0);
	}
	errno = 0;
	if (ibv_alloc_mw(pd, (enum ibv_mw_type)3))
		th_fail("a window of type 3 was made");
	th_errno_strict(errno, EINVAL, "alloc_mw of type 3");
	assert_int_equal(ibv_dealloc_pd(pd), EBUSY);	/* the window holds it */
	assert_int_equal(ibv_dealloc_mw(m1), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* MW-02: the HCA binds only a region registered with IBV_ACCESS_MW_BIND,
 * inside it; otherwise the bind completes in error. */
TH_TEST(bind_mw_needs_mw_bind_access_and_the_range, "MW-02", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_mr *plain, *bindable;
	struct ibv_mw *mw;
	struct cq_pair p;
	int st;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	mw = mw_new(p.pd, IBV_MW_TYPE_1);
	assert_non_null(mw);
	plain = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(plain);
	st = mw_bind1(p.a, cq, mw, plain, (uintptr_t)win, 64, IBV_ACCESS_REMOTE_WRITE);
	if (st == IBV_WC_SUCCESS)
		th_fail("a window was bound to a region without IBV_ACCESS_MW_BIND");
	th_note("bind to a region without MW_BIND: %s", st < 0 ? strerror(-st) :
		ibv_wc_status_str((enum ibv_wc_status)st));
	cq_pair_reconnect(t, &p, cq);
	bindable = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_MW_BIND);
	assert_non_null(bindable);
	st = mw_bind1(p.a, cq, mw, bindable, (uintptr_t)win + 4000, 200, IBV_ACCESS_REMOTE_WRITE);
	if (st == IBV_WC_SUCCESS)
		th_fail("a window was bound past the end of its region");
	cq_pair_reconnect(t, &p, cq);
	st = mw_bind1(p.a, cq, mw, bindable, (uintptr_t)win, 64, IBV_ACCESS_REMOTE_WRITE);
	if (st != IBV_WC_SUCCESS)
		th_fail("a valid bind: %d", st);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(bindable), 0);
	assert_int_equal(ibv_dereg_mr(plain), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* MW-02: the window, the QP that binds it and the region it is bound to
 * are of one PD (IBA vol 1 10.6.7.2; ibv_bind_mw.3: the MW and the MR
 * must belong to the QP's PD): a bind to a region of another PD completes
 * in error, for a window of either type. */
TH_TEST(bind_mw_refuses_a_region_of_another_pd, "MW-02", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_send_wr wr, *bad;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2;
	struct ibv_mw *mw, *mw2;
	struct ibv_wc wc;
	struct cq_pair p;
	int st;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	pd2 = ibv_alloc_pd(t->ctx);
	assert_non_null(pd2);
	mr2 = ibv_reg_mr(pd2, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr2);
	mw = mw_new(p.pd, IBV_MW_TYPE_1);
	assert_non_null(mw);
	st = mw_bind1(p.a, cq, mw, mr2, (uintptr_t)win, 64, IBV_ACCESS_REMOTE_WRITE);
	th_note("type 1 bind to a region of another PD: %s", st < 0 ? strerror(-st) :
		ibv_wc_status_str((enum ibv_wc_status)st));
	if (st == IBV_WC_SUCCESS)
		th_fail("a type 1 window was bound to a region of another PD");
	/* a type 2 window, bound by a WR of its QP (b, in its PD) */
	cq_pair_reconnect(t, &p, cq);
	assert_int_equal(th_qp_to_rts(p.b), 0);
	mw2 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	if (mw2) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x2f;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = mw2;
		wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
		wr.bind_mw.bind_info.mr = mr2;
		wr.bind_mw.bind_info.addr = (uintptr_t)win;
		wr.bind_mw.bind_info.length = 64;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		assert_int_equal(ibv_post_send(p.b, &wr, &bad), 0);
		assert_int_equal(th_poll(cq, &wc), 1);
		assert_int_equal(wc.wr_id, 0x2f);
		th_note("type 2 bind to a region of another PD: %s", ibv_wc_status_str(wc.status));
		if (wc.status == IBV_WC_SUCCESS)
			th_fail("a type 2 window was bound to a region of another PD");
		assert_int_equal(ibv_dealloc_mw(mw2), 0);
	}
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr2), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* MW-03: a bound window grants only to requests that arrive at a QP of
 * its own PD (IBA vol 1 10.6.7.2; linux v6.1
 * drivers/infiniband/sw/rxe/rxe_mw.c:295 rxe_lookup_mw, the responder
 * QP's PD): a WRITE by its key arriving at a QP of another PD is the
 * requester's IBV_WC_REM_ACCESS_ERR and leaves the window's bytes alone. */
TH_TEST(window_grants_nothing_to_a_qp_of_another_pd, "MW-03", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct cq_pair p, q;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	int st;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	cq_pair_up(t, &q, cq);		/* another PD, its own QPs */
	mw = mw_new(p.pd, IBV_MW_TYPE_1);
	assert_non_null(mw);
	mr = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr);
	assert_int_equal(mw_bind1(p.a, cq, mw, mr, (uintptr_t)win, 256, IBV_ACCESS_REMOTE_WRITE),
			 IBV_WC_SUCCESS);
	st = cq_pair_write(&p, cq, (uintptr_t)win, mw->rkey);
	if (st != IBV_WC_SUCCESS || memcmp(win, "rereg-ok", 8))
		th_fail("RDMA WRITE through the window at a QP of its PD: status %d", st);
	memset(win, 0, 8);
	st = cq_pair_write(&q, cq, (uintptr_t)win, mw->rkey);
	th_note("WRITE through the window at a QP of another PD: %s",
		ibv_wc_status_str((enum ibv_wc_status)st));
	if (st == IBV_WC_SUCCESS || !memcmp(win, "rereg-ok", 8))
		th_fail("a window granted a WRITE arriving at a QP of another PD (status %d)", st);
	else if (st != IBV_WC_REM_ACCESS_ERR)
		th_fail("want IBV_WC_REM_ACCESS_ERR");
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	cq_pair_down(&q);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* MW-03: a bound type 1 window grants what it was bound with, inside its
 * range, by its new key; the old key and the range's outside do not. */
TH_TEST(bound_window_grants_its_range_by_its_key, "MW-03", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct cq_pair p;
	uint32_t old;
	int st;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	mw = mw_new(p.pd, IBV_MW_TYPE_1);
	assert_non_null(mw);
	mr = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr);
	old = mw->rkey;
	assert_int_equal(mw_bind1(p.a, cq, mw, mr, (uintptr_t)win + 1024, 64,
				  IBV_ACCESS_REMOTE_WRITE), IBV_WC_SUCCESS);
	assert_int_equal(mw->rkey, ibv_inc_rkey(old));
	st = cq_pair_write(&p, cq, (uintptr_t)win + 1024, mw->rkey);
	if (st != IBV_WC_SUCCESS)
		th_fail("RDMA WRITE inside the window: status %d", st);
	assert_memory_equal(win + 1024, "rereg-ok", 8);
	/* past the window's end, inside the region */
	st = cq_pair_write(&p, cq, (uintptr_t)win + 1024 + 60, mw->rkey);
	if (st == IBV_WC_SUCCESS)
		th_fail("RDMA WRITE across the end of the window succeeded");
	cq_pair_reconnect(t, &p, cq);
	st = cq_pair_write(&p, cq, (uintptr_t)win + 1024, old);
	if (st == IBV_WC_SUCCESS)
		th_fail("the window's key before the bind still grants");
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* MW-04: a type 2 window is bound by a WR (IBV_WR_BIND_MW, and the new
 * API's ibv_wr_bind_mw) with the key it names, and IBV_WR_LOCAL_INV of that
 * key takes its grant away. The window is bound on b, the QP
 * that a's writes arrive at: a type 2 window grants through that QP only
 * (MW-06). */
TH_TEST(type_2_window_binds_by_wr_and_local_inv_revokes, "MW-04", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_ex *x;
	struct ibv_qp *qx;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_mw_bind_info bi;
	struct ibv_wc wc;
	struct cq_pair p;
	uint32_t key;
	int st;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	mw = mw_new(p.pd, IBV_MW_TYPE_2);
	if (!mw)
		th_skip("no type 2 windows (errno %d)", errno);
	assert_int_equal(th_qp_to_rts(p.b), 0);
	mr = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr);
	key = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x2b;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)win;
	wr.bind_mw.bind_info.length = 256;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	assert_int_equal(ibv_post_send(p.b, &wr, &bad), 0);
	assert_int_equal(th_poll(cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	/* the window's key is the one it was bound with: the application keeps
	 * it in mw->rkey (a type 2 bind WR does not; rxe checks it at the next
	 * bind: linux v6.1 drivers/infiniband/sw/rxe/rxe_mw.c:180, from
	 * rdma-core v44.0 providers/rxe/rxe.c:854 and :1519) */
	mw->rkey = key;
	st = cq_pair_write(&p, cq, (uintptr_t)win, key);
	if (st != IBV_WC_SUCCESS)
		th_fail("RDMA WRITE through the type 2 window: status %d", st);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x2c;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = key;
	assert_int_equal(ibv_post_send(p.b, &wr, &bad), 0);
	assert_int_equal(th_poll(cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_LOCAL_INV);
	st = cq_pair_write(&p, cq, (uintptr_t)win, key);
	if (st == IBV_WC_SUCCESS)
		th_fail("the window still grants after IBV_WR_LOCAL_INV");
	/* again through the new post-send API, on a QP made for it */
	qx = th_rc_qp_ex(t->ctx, p.pd, cq, IBV_QPT_RC,
			 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV);
	if (!qx) {
		th_note("send_ops_flags with BIND_MW: errno %d", errno);
	} else {
		assert_int_equal(th_qp_to_init(qx, t->port), 0);
		assert_int_equal(th_qp_to_rtr(qx, t->port, p.b->qp_num), 0);
		assert_int_equal(th_qp_to_rts(qx), 0);
		x = ibv_qp_to_qp_ex(qx);
		assert_non_null(x);
		key = ibv_inc_rkey(key);
		bi = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)win, .length = 256,
						.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		ibv_wr_start(x);
		x->wr_id = 0x2d;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(x, mw, key, &bi);
		assert_int_equal(ibv_wr_complete(x), 0);
		assert_int_equal(th_poll(cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
		mw->rkey = key;
		ibv_wr_start(x);
		x->wr_id = 0x2e;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(x, key);
		assert_int_equal(ibv_wr_complete(x), 0);
		assert_int_equal(th_poll(cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.opcode, IBV_WC_LOCAL_INV);
		assert_int_equal(ibv_destroy_qp(qx), 0);
	}
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* Bind type 2 window mw on p->b (which must be in RTS) to [win, 256) of mr
 * with remote write, by key (the window's index, a new tag): key, kept in
 * mw->rkey. */
static uint32_t mw2_bind_on_b(struct cq_pair *p, struct ibv_cq *cq, struct ibv_mw *mw,
			      struct ibv_mr *mr, char *win, uint32_t key)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x2b;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)win;
	wr.bind_mw.bind_info.length = 256;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	assert_int_equal(ibv_post_send(p->b, &wr, &bad), 0);
	assert_int_equal(th_poll(cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_BIND_MW);
	mw->rkey = key;		/* the window's key now (MW-04) */
	return key;
}

/* SEND_WITH_INV of 8 bytes a -> b naming key, with a receive on b, through
 * ibv_post_send or (ex) the new post-send API: the sender's and the
 * receiver's completions (status -1: none came). */
static void send_inv(struct cq_pair *p, struct ibv_cq *cq, uint32_t key, int ex,
		     struct ibv_wc *snd, struct ibv_wc *rcv)
{
	struct ibv_sge rs = { (uintptr_t)(p->buf + 1024), 64, p->mr->lkey };
	struct ibv_sge ss = { (uintptr_t)p->buf, 8, p->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 0x3a, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int i, ret;

	assert_int_equal(ibv_post_recv(p->b, &rwr, &rbad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x3b;
	wr.sg_list = &ss;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = key;
	ret = ex ? th_post_send_ex(p->a, &wr) : ibv_post_send(p->a, &wr, &bad);
	if (ret == EINVAL || ret == EOPNOTSUPP)
		th_ext_missing("ibv_post_send(IBV_WR_SEND_WITH_INV): %s (not built)", strerror(ret));
	assert_int_equal(ret, 0);
	memset(snd, 0, sizeof(*snd));
	memset(rcv, 0, sizeof(*rcv));
	snd->status = rcv->status = (enum ibv_wc_status)-1;
	for (i = 0; i < 2 && th_poll(cq, &wc) == 1; i++)
		*(wc.qp_num == p->a->qp_num ? snd : rcv) = wc;
}

/* MW-05: SEND_WITH_INV revokes the bound type 2 window it names, at the
 * responder: the receive completes with IBV_WC_WITH_INV and the key in
 * invalidated_rkey, and the key grants nothing more. A key that names no
 * bound type 2 window cannot be invalidated: the message fails. */
TH_TEST(send_with_inv_revokes_a_type_2_window, "MW-05", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_wc snd, rcv;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct cq_pair p;
	uint32_t key;
	int st, ex;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	assert_int_equal(th_qp_to_rts(p.b), 0);
	mw = mw_new(p.pd, IBV_MW_TYPE_2);
	if (!mw)
		th_skip("no type 2 windows (errno %d)", errno);
	mr = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr);
	key = mw2_bind_on_b(&p, cq, mw, mr, win, ibv_inc_rkey(mw->rkey));
	st = cq_pair_write(&p, cq, (uintptr_t)win, key);
	if (st != IBV_WC_SUCCESS)
		th_fail("RDMA WRITE through the bound type 2 window: status %d", st);
	send_inv(&p, cq, key, 0, &snd, &rcv);
	if (snd.status != IBV_WC_SUCCESS || snd.opcode != IBV_WC_SEND)
		th_fail("SEND_WITH_INV of the window's key: sender status %d opcode %d",
			(int)snd.status, (int)snd.opcode);
	if (rcv.status != IBV_WC_SUCCESS || rcv.opcode != IBV_WC_RECV)
		th_fail("SEND_WITH_INV of the window's key: receive status %d opcode %d",
			(int)rcv.status, (int)rcv.opcode);
	if (!(rcv.wc_flags & IBV_WC_WITH_INV) || rcv.invalidated_rkey != key)
		th_fail("the receive has wc_flags %#x, invalidated_rkey %#x (want IBV_WC_WITH_INV, %#x)",
			rcv.wc_flags, rcv.invalidated_rkey, key);
	st = cq_pair_write(&p, cq, (uintptr_t)win, key);
	if (st == IBV_WC_SUCCESS)
		th_fail("the window still grants after SEND_WITH_INV of its key");
	/* the same key again: no bound window is left to invalidate (a kernel
	 * panic on rxe: never sent there, th_crash_guard) */
	cq_pair_reconnect(t, &p, cq);
	if (!th_crash_guard("send_inv_of_an_invalidated_type_2_key")) {
		send_inv(&p, cq, key, 0, &snd, &rcv);
		th_note("SEND_WITH_INV of an invalidated key: sender status %d, receive status %d",
			(int)snd.status, (int)rcv.status);
		if (rcv.status == IBV_WC_SUCCESS)
			th_fail("a SEND_WITH_INV naming no bound window was received as done");
		/* the IBA's invalid-request class (linux v6.1
		 * drivers/infiniband/sw/rxe/rxe_resp.c RESPST_ERR_INVALIDATE_RKEY) */
		if (th_strict() && (snd.status != IBV_WC_REM_INV_REQ_ERR ||
				    rcv.status != IBV_WC_REM_INV_REQ_ERR))
			th_fail("want IBV_WC_REM_INV_REQ_ERR on both sides");
	}
	/* again through the new post-send API (ibv_wr_send_inv), a made for it */
	assert_int_equal(ibv_destroy_qp(p.a), 0);
	assert_int_equal(ibv_destroy_qp(p.b), 0);
	p.a = th_rc_qp_ex(t->ctx, p.pd, cq, IBV_QPT_RC,
			  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE);
	ex = p.a != NULL;
	if (!ex) {
		/* a driver without the API (mlx4): the check above stands */
		th_note("ibv_wr_send_inv not checked: send_ops_flags with SEND_WITH_INV: errno %d",
			errno);
		p.a = th_rc_qp(p.pd, cq, IBV_QPT_RC);
	}
	assert_non_null(p.a);
	p.b = th_rc_qp(p.pd, cq, IBV_QPT_RC);
	assert_non_null(p.b);
	qp_connect(t, p.a, p.b);
	assert_int_equal(th_qp_to_rts(p.b), 0);
	key = mw2_bind_on_b(&p, cq, mw, mr, win, ibv_inc_rkey(key));
	if (ex) {
		send_inv(&p, cq, key, 1, &snd, &rcv);
		if (snd.status != IBV_WC_SUCCESS || rcv.status != IBV_WC_SUCCESS ||
		    !(rcv.wc_flags & IBV_WC_WITH_INV) || rcv.invalidated_rkey != key)
			th_fail("ibv_wr_send_inv: sender status %d, receive status %d flags %#x rkey %#x (want %#x)",
				(int)snd.status, (int)rcv.status, rcv.wc_flags, rcv.invalidated_rkey, key);
		if (cq_pair_write(&p, cq, (uintptr_t)win, key) == IBV_WC_SUCCESS)
			th_fail("the window still grants after ibv_wr_send_inv of its key");
	}
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* MW-06: a type 2 window grants to requests that arrive at the QP that
 * bound it, not to another QP of the same PD. */
TH_TEST(type_2_window_grants_only_through_its_qp, "MW-06", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_qp *c, *d;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct cq_pair p;
	uint32_t key;
	int st;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	assert_int_equal(th_qp_to_rts(p.b), 0);
	mw = mw_new(p.pd, IBV_MW_TYPE_2);
	if (!mw)
		th_skip("no type 2 windows (errno %d)", errno);
	mr = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr);
	key = mw2_bind_on_b(&p, cq, mw, mr, win, ibv_inc_rkey(mw->rkey));
	/* c -> d: another connection, the same PD */
	c = th_rc_qp(p.pd, cq, IBV_QPT_RC);
	d = th_rc_qp(p.pd, cq, IBV_QPT_RC);
	assert_non_null(c);
	assert_non_null(d);
	qp_connect(t, c, d);
	st = qp_write(&p, p.a, cq, (uintptr_t)win, key);
	if (st != IBV_WC_SUCCESS)
		th_fail("RDMA WRITE arriving at the window's QP: status %d", st);
	memset(win, 0, 8);
	st = qp_write(&p, c, cq, (uintptr_t)win, key);
	if (st == IBV_WC_SUCCESS || !memcmp(win, "rereg-ok", 8))
		th_fail("a type 2 window granted a WRITE arriving at another QP (status %d)", st);
	th_note("WRITE through the window at another QP: status %d", st);
	assert_int_equal(ibv_destroy_qp(c), 0);
	assert_int_equal(ibv_destroy_qp(d), 0);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}

/* MW-07: a bind is a WR of the send queue: posted behind a SEND that waits
 * (RNR: no receive yet), it completes after that SEND, not when posted. */
TH_TEST(bind_completes_in_send_queue_order, "MW-07", 0)
{
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	char *win = calloc(1, 4096);
	struct ibv_sge rs, ss;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr wr, *bad;
	struct ibv_mw_bind b;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_wc wc, order[2];
	struct cq_pair p;
	struct timespec t0, now;
	int n = 0, got = 0;

	assert_non_null(cq);
	assert_non_null(win);
	cq_pair_up(t, &p, cq);
	mw = mw_new(p.pd, IBV_MW_TYPE_1);
	assert_non_null(mw);
	mr = ibv_reg_mr(p.pd, win, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	assert_non_null(mr);
	/* a SEND b has no receive for: it waits, RNR-NAKed, without end */
	ss = (struct ibv_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x71;
	wr.sg_list = &ss;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	assert_int_equal(ibv_post_send(p.a, &wr, &bad), 0);
	memset(&b, 0, sizeof(b));
	b.wr_id = 0x72;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)win;
	b.bind_info.length = 64;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	assert_int_equal(ibv_bind_mw(p.a, mw, &b), 0);
	/* for 50 ms neither may complete: the SEND ahead waits */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		got = ibv_poll_cq(cq, 1, &wc);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!got && (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < 50000000L);
	if (got == 1)
		th_fail("a completion came while the SEND ahead waits: wr_id %#llx opcode %d status %d",
			(unsigned long long)wc.wr_id, (int)wc.opcode, (int)wc.status);
	rs = (struct ibv_sge){ (uintptr_t)(p.buf + 1024), 64, p.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 0x73, .sg_list = &rs, .num_sge = 1 };
	assert_int_equal(ibv_post_recv(p.b, &rwr, &rbad), 0);
	while (n < 2 && th_poll(cq, &wc) == 1) {
		if (wc.qp_num == p.a->qp_num)
			order[n++] = wc;
	}
	assert_int_equal(n, 2);
	if (order[0].wr_id != 0x71 || order[1].wr_id != 0x72)
		th_fail("send queue completions in the order %#llx, %#llx (want the SEND 0x71, then the bind 0x72)",
			(unsigned long long)order[0].wr_id, (unsigned long long)order[1].wr_id);
	assert_int_equal(order[0].status, IBV_WC_SUCCESS);
	assert_int_equal(order[1].status, IBV_WC_SUCCESS);
	assert_int_equal(order[1].opcode, IBV_WC_BIND_MW);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	cq_pair_down(&p);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	free(win);
}


int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
