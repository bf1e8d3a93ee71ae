/* SPDX-License-Identifier: MIT */
/*
 * ibvct-verbs-gen: a generator of verbs requests, valid and invalid, each
 * printed with its outcome on one canonical line, so that two runs (the
 * reference target under a driver profile, a real driver) can be compared
 * line by line (tools/verbs-gen/ibvct-verbs-cmp, t6060).
 *
 *   ibvct-verbs-gen --seed N --count M [--from I] [--device NAME] [--set control|post]
 *
 * Built against the system's <infiniband/verbs.h> and libibverbs, as the
 * system suites are: the same binary runs on a real device through
 * Debian's rdma-core and on the reference target through ibvct-run.
 *
 * Request I draws everything it asks from a PRNG seeded by (seed, I) only,
 * never from an earlier result; it makes its own prerequisites (PD, CQ,
 * SRQ, QP in the state it needs, MR, XRCD) and tears them down after, so
 * that a line depends on its seed, its index and the device alone. Values
 * tied to a device limit are printed by name (`max`, `max+1`), so that the
 * request text is the same on two devices; an outcome is `ok` with what the
 * caller sees that matters (written-back sizes, a completion's status),
 * `err NAME` (an int verb's return), `null errno=NAME` (a pointer verb's
 * NULL), or `skip (why)` when a prerequisite could not be made (a device
 * without XRC). A teardown that fails is appended (`teardown: ...`).
 *
 * Control-path verbs only, plus memory-window binds (the default set); --set
 * post is the data path of the new post-send API, every builder of it (its
 * own sequence, so that the control set's lines stay as they were). No
 * request may crash a real kernel (e.g. no SEND_WITH_INV of a window's
 * key, whose repetition on an invalidated type 2 key panics rxe: linux v6.1
 * drivers/infiniband/sw/rxe/rxe_mw.c).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* ---- the PRNG: splitmix64, one stream per request ---------------------- */
struct vg_rng {
	uint64_t s;
};

static uint64_t vg_next(struct vg_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned vg_pick(struct vg_rng *r, unsigned n)
{
	return (unsigned)(vg_next(r) % n);
}

static bool vg_pct(struct vg_rng *r, unsigned pct)
{
	return vg_pick(r, 100) < pct;
}

/* ---- the line ------------------------------------------------------------ */
struct vg_line {
	char buf[2048];
	size_t n;
};

static void __attribute__((format(printf, 2, 3))) vg_add(struct vg_line *l, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (l->n >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	k = vsnprintf(l->buf + l->n, sizeof(l->buf) - l->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		l->n = l->n + (size_t)k < sizeof(l->buf) ? l->n + (size_t)k : sizeof(l->buf) - 1;
}

static const char *vg_errname(int e)
{
	static char other[16];

	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENOSYS: return "ENOSYS";
	case ENODATA: return "ENODATA";
	case EOVERFLOW: return "EOVERFLOW";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case ENETUNREACH: return "ENETUNREACH";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case EPROTO: return "EPROTO";
	default:
		snprintf(other, sizeof(other), "E%d", e);
		return other;
	}
}

/* A pointer verb's outcome; ok and its details are the caller's to add. */
static bool vg_ptr_out(struct vg_line *l, const void *p, int err)
{
	if (p) {
		vg_add(l, " -> ok");
		return true;
	}
	vg_add(l, " -> null errno=%s", vg_errname(err));
	return false;
}

static bool vg_int_out(struct vg_line *l, int ret)
{
	if (!ret) {
		vg_add(l, " -> ok");
		return true;
	}
	vg_add(l, " -> err %s", ret > 0 ? vg_errname(ret) : "negative");
	return false;
}

/* ---- names --------------------------------------------------------------- */
static const char *vg_qpt_name(int t)
{
	static char other[16];

	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	case IBV_QPT_RAW_PACKET: return "RAW_PACKET";
	case IBV_QPT_XRC_SEND: return "XRC_SEND";
	case IBV_QPT_XRC_RECV: return "XRC_RECV";
	case IBV_QPT_DRIVER: return "DRIVER";
	default:
		snprintf(other, sizeof(other), "type%d", t);
		return other;
	}
}

static const char *vg_state_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
					 "UNKNOWN" };
	static char other[16];

	if (s >= 0 && s < (int)(sizeof(n) / sizeof(n[0])))
		return n[s];
	snprintf(other, sizeof(other), "state%d", s);
	return other;
}

/* ---- the device and the request's objects ------------------------------- */
struct vg_env {
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid0;
	bool eth;
	char *buf;			/* 64 KiB, page-aligned: what MRs register */
};

#define VG_BUF_LEN	65536

struct vg_objs {
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq, *cq2;
	struct ibv_srq *srq;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	int xrcd_err;
};

/* Teardown in dependency order; a failure is part of the line. */
static void vg_teardown(struct vg_line *l, struct vg_objs *o)
{
	int e;

	if (o->qp && (e = ibv_destroy_qp(o->qp)))
		vg_add(l, " teardown: destroy_qp %s", vg_errname(e));
	if (o->mw && (e = ibv_dealloc_mw(o->mw)))
		vg_add(l, " teardown: dealloc_mw %s", vg_errname(e));
	if (o->mr && (e = ibv_dereg_mr(o->mr)))
		vg_add(l, " teardown: dereg_mr %s", vg_errname(e));
	if (o->srq && (e = ibv_destroy_srq(o->srq)))
		vg_add(l, " teardown: destroy_srq %s", vg_errname(e));
	if (o->cq2 && (e = ibv_destroy_cq(o->cq2)))
		vg_add(l, " teardown: destroy_cq %s", vg_errname(e));
	if (o->cq && (e = ibv_destroy_cq(o->cq)))
		vg_add(l, " teardown: destroy_cq %s", vg_errname(e));
	if (o->xrcd && (e = ibv_close_xrcd(o->xrcd)))
		vg_add(l, " teardown: close_xrcd %s", vg_errname(e));
	if (o->pd2 && (e = ibv_dealloc_pd(o->pd2)))
		vg_add(l, " teardown: dealloc_pd %s", vg_errname(e));
	if (o->pd && (e = ibv_dealloc_pd(o->pd)))
		vg_add(l, " teardown: dealloc_pd %s", vg_errname(e));
}

/* The common prerequisites: a PD and a CQ of 64 entries. */
static bool vg_base(struct vg_env *env, struct vg_line *l, struct vg_objs *o)
{
	o->pd = ibv_alloc_pd(env->ctx);
	if (!o->pd) {
		vg_add(l, " -> skip (alloc_pd: %s)", vg_errname(errno));
		return false;
	}
	o->cq = ibv_create_cq(env->ctx, 64, NULL, NULL, 0);
	if (!o->cq) {
		vg_add(l, " -> skip (create_cq: %s)", vg_errname(errno));
		return false;
	}
	return true;
}

static struct ibv_xrcd *vg_xrcd(struct vg_env *env, struct vg_objs *o)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	if (!o->xrcd) {
		errno = 0;
		o->xrcd = ibv_open_xrcd(env->ctx, &xa);
		o->xrcd_err = errno;
	}
	return o->xrcd;
}

static struct ibv_srq *vg_basic_srq(struct vg_env *env, struct vg_objs *o)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };

	if (!o->srq)
		o->srq = ibv_create_srq(o->pd, &sa);
	return o->srq;
}

/* A value for a size with limit lim, and its name. */
static uint32_t vg_size(struct vg_rng *r, uint32_t lim, const char **name)
{
	switch (vg_pick(r, 7)) {
	case 0: *name = "0"; return 0;
	case 1: *name = "1"; return 1;
	case 2:
	case 3: *name = "16"; return 16;
	case 4: *name = "max"; return lim;
	case 5: *name = "max+1"; return lim + 1;
	default: *name = "4"; return 4;
	}
}

static uint32_t vg_inline(struct vg_rng *r)
{
	static const uint32_t v[] = { 0, 0, 0, 64, 256, 1024, 4096, 1u << 20 };

	return v[vg_pick(r, sizeof(v) / sizeof(v[0]))];
}

static enum ibv_qp_type vg_qp_type(struct vg_rng *r)
{
	static const int t[] = { IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC,
				 IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_UD, IBV_QPT_UD, IBV_QPT_XRC_SEND,
				 IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_XRC_RECV,
				 IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER, 0, 5, 11 };

	return (enum ibv_qp_type)t[vg_pick(r, sizeof(t) / sizeof(t[0]))];
}

/* ---- CQ ------------------------------------------------------------------ */
static int vg_cqe(struct vg_rng *r, struct vg_env *env, const char **name)
{
	switch (vg_pick(r, 7)) {
	case 0: *name = "0"; return 0;
	case 1: *name = "1"; return 1;
	case 2: *name = "-1"; return -1;
	case 3: *name = "max"; return env->da.max_cqe;
	case 4: *name = "max+1"; return env->da.max_cqe + 1;
	case 5: *name = "100"; return 100;
	default: *name = "16"; return 16;
	}
}

static void vg_create_cq(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	const char *cn;
	int cqe = vg_cqe(r, env, &cn);
	bool bad_vec = vg_pct(r, 15);
	int vec = bad_vec ? env->ctx->num_comp_vectors : 0;
	struct ibv_cq *cq;

	vg_add(l, "create_cq cqe=%s vector=%s", cn, bad_vec ? "max+1" : "0");
	errno = 0;
	cq = ibv_create_cq(env->ctx, cqe, NULL, NULL, vec);
	if (vg_ptr_out(l, cq, errno)) {
		vg_add(l, " cqe=%d", cq->cqe);
		if ((errno = ibv_destroy_cq(cq)))
			vg_add(l, " teardown: destroy_cq %s", vg_errname(errno));
	}
}

static void vg_create_cq_ex(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const uint64_t extra[] = { IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
					  IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
					  IBV_WC_EX_WITH_TM_INFO,
					  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, 1ULL << 20 };
	struct ibv_cq_init_attr_ex a;
	const char *cn;
	struct ibv_cq_ex *cq;
	unsigned i;

	memset(&a, 0, sizeof(a));
	a.cqe = (uint32_t)vg_cqe(r, env, &cn);
	a.wc_flags = vg_next(r) & IBV_WC_STANDARD_FLAGS;
	if (vg_pct(r, 40))
		a.wc_flags |= extra[vg_pick(r, sizeof(extra) / sizeof(extra[0]))];
	switch (vg_pick(r, 6)) {
	case 0:
	case 1:
		a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		a.flags = vg_pct(r, 50) ? IBV_CREATE_CQ_ATTR_SINGLE_THREADED : 0;
		break;
	case 2:
		a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		a.flags = 1u << 4;		/* unknown */
		break;
	case 3:
		a.comp_mask = 1u << 5;		/* unknown */
		break;
	default:
		break;
	}
	vg_add(l, "create_cq_ex cqe=%s wc_flags=%#" PRIx64 " mask=%#x flags=%#x", cn, a.wc_flags,
	       a.comp_mask, a.flags);
	errno = 0;
	cq = ibv_create_cq_ex(env->ctx, &a);
	if (vg_ptr_out(l, cq, errno)) {
		vg_add(l, " cqe=%d", ibv_cq_ex_to_cq(cq)->cqe);
		if ((i = (unsigned)ibv_destroy_cq(ibv_cq_ex_to_cq(cq))))
			vg_add(l, " teardown: destroy_cq %s", vg_errname((int)i));
	}
}

/* ---- SRQ ----------------------------------------------------------------- */
static void vg_srq_sizes(struct vg_rng *r, struct vg_env *env, struct ibv_srq_attr *sa,
			 struct vg_line *l)
{
	const char *wn, *sn, *ln;

	if (vg_pct(r, 50)) {	/* sizes every driver takes */
		sa->max_wr = 16;
		sa->max_sge = 1 + vg_pick(r, 4);
		sa->srq_limit = 0;
		vg_add(l, " wr=16 sge=%u limit=0", sa->max_sge);
		return;
	}
	sa->max_wr = vg_size(r, (uint32_t)env->da.max_srq_wr, &wn);
	sa->max_sge = vg_size(r, (uint32_t)env->da.max_srq_sge, &sn);
	switch (vg_pick(r, 4)) {
	case 0: sa->srq_limit = 1; ln = "1"; break;
	case 1: sa->srq_limit = sa->max_wr + 1; ln = "wr+1"; break;
	default: sa->srq_limit = 0; ln = "0"; break;
	}
	vg_add(l, " wr=%s sge=%s limit=%s", wn, sn, ln);
}

static void vg_create_srq(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	struct vg_objs o = { 0 };
	struct ibv_srq_init_attr sa;

	memset(&sa, 0, sizeof(sa));
	vg_add(l, "create_srq");
	vg_srq_sizes(r, env, &sa.attr, l);
	if (vg_base(env, l, &o)) {
		errno = 0;
		o.srq = ibv_create_srq(o.pd, &sa);
		if (vg_ptr_out(l, o.srq, errno))
			vg_add(l, " wr=%u sge=%u", sa.attr.max_wr, sa.attr.max_sge);
	}
	vg_teardown(l, &o);
}

static void vg_create_srq_ex(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const int types[] = { IBV_SRQT_BASIC, IBV_SRQT_BASIC, IBV_SRQT_XRC, IBV_SRQT_XRC,
				     IBV_SRQT_TM, 7 };
	struct vg_objs o = { 0 };
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = (uint32_t)(vg_next(r) & (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
					      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM));
	if (vg_pct(r, 85))
		a.comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	if (vg_pct(r, 5))
		a.comp_mask |= IBV_SRQ_INIT_ATTR_RESERVED;
	a.srq_type = (enum ibv_srq_type)types[vg_pick(r, sizeof(types) / sizeof(types[0]))];
	a.tm_cap.max_num_tags = vg_pct(r, 50) ? 16 : 0;
	a.tm_cap.max_ops = 16;
	vg_add(l, "create_srq_ex mask=%#x type=%d tags=%u", a.comp_mask, a.srq_type,
	       a.tm_cap.max_num_tags);
	vg_srq_sizes(r, env, &a.attr, l);
	if (!vg_base(env, l, &o))
		goto out;
	a.pd = o.pd;
	a.cq = o.cq;
	if ((a.comp_mask & IBV_SRQ_INIT_ATTR_XRCD) && !(a.xrcd = vg_xrcd(env, &o))) {
		vg_add(l, " -> skip (open_xrcd: %s)", vg_errname(o.xrcd_err));
		goto out;
	}
	errno = 0;
	o.srq = ibv_create_srq_ex(env->ctx, &a);
	if (vg_ptr_out(l, o.srq, errno))
		vg_add(l, " wr=%u sge=%u", a.attr.max_wr, a.attr.max_sge);
out:
	vg_teardown(l, &o);
}

/* ---- QP creation --------------------------------------------------------- */
static void vg_qp_caps(struct vg_rng *r, struct vg_env *env, struct ibv_qp_cap *c,
		       struct vg_line *l)
{
	const char *a, *b, *d, *e;

	if (vg_pct(r, 60)) {	/* sizes every driver takes */
		c->max_send_wr = c->max_recv_wr = 16;
		c->max_send_sge = c->max_recv_sge = 1 + vg_pick(r, 4);
		c->max_inline_data = vg_pct(r, 50) ? 0 : 64;
		vg_add(l, " sw=16 rw=16 ss=%u rs=%u inl=%u", c->max_send_sge, c->max_recv_sge,
		       c->max_inline_data);
		return;
	}
	c->max_send_wr = vg_size(r, (uint32_t)env->da.max_qp_wr, &a);
	c->max_recv_wr = vg_size(r, (uint32_t)env->da.max_qp_wr, &b);
	c->max_send_sge = vg_size(r, (uint32_t)env->da.max_sge, &d);
	c->max_recv_sge = vg_size(r, (uint32_t)env->da.max_sge, &e);
	c->max_inline_data = vg_inline(r);
	vg_add(l, " sw=%s rw=%s ss=%s rs=%s inl=%u", a, b, d, e, c->max_inline_data);
}

static void vg_caps_out(struct vg_line *l, const struct ibv_qp_cap *c)
{
	vg_add(l, " caps=%u,%u,%u,%u,%u", c->max_send_wr, c->max_recv_wr, c->max_send_sge,
	       c->max_recv_sge, c->max_inline_data);
}

static void vg_create_qp(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	struct vg_objs o = { 0 };
	struct ibv_qp_init_attr a;
	bool use_srq = vg_pct(r, 20), two_cqs = vg_pct(r, 30);

	memset(&a, 0, sizeof(a));
	a.qp_type = vg_qp_type(r);
	a.sq_sig_all = (int)vg_pick(r, 2);
	vg_add(l, "create_qp type=%s srq=%d", vg_qpt_name(a.qp_type), use_srq);
	vg_qp_caps(r, env, &a.cap, l);
	if (!vg_base(env, l, &o))
		goto out;
	if (two_cqs)
		o.cq2 = ibv_create_cq(env->ctx, 64, NULL, NULL, 0);
	a.send_cq = o.cq;
	a.recv_cq = o.cq2 ? o.cq2 : o.cq;
	if (use_srq && !(a.srq = vg_basic_srq(env, &o))) {
		vg_add(l, " -> skip (create_srq: %s)", vg_errname(errno));
		goto out;
	}
	errno = 0;
	o.qp = ibv_create_qp(o.pd, &a);
	if (vg_ptr_out(l, o.qp, errno))
		vg_caps_out(l, &a.cap);
out:
	vg_teardown(l, &o);
}

static uint64_t vg_send_ops(struct vg_rng *r)
{
	static const uint64_t sets[] = {
		IBV_QP_EX_WITH_SEND,
		IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ,
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW,
		IBV_QP_EX_WITH_SEND_WITH_INV,
		IBV_QP_EX_WITH_TSO,
		IBV_QP_EX_WITH_ATOMIC_WRITE,
		1ULL << 30,
		0,
	};

	return sets[vg_pick(r, sizeof(sets) / sizeof(sets[0]))];
}

static void vg_create_qp_ex(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const uint32_t cflags[] = { 0, 0, 0, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
					   IBV_QP_CREATE_SCATTER_FCS, IBV_QP_CREATE_CVLAN_STRIPPING,
					   IBV_QP_CREATE_SOURCE_QPN,
					   IBV_QP_CREATE_PCI_WRITE_END_PADDING, 1u << 20 };
	struct vg_objs o = { 0 };
	struct ibv_qp_init_attr_ex a;
	bool use_srq = vg_pct(r, 20);

	memset(&a, 0, sizeof(a));
	a.qp_type = vg_qp_type(r);
	a.sq_sig_all = (int)vg_pick(r, 2);
	a.comp_mask = vg_pct(r, 90) ? IBV_QP_INIT_ATTR_PD : 0;
	if (vg_pct(r, a.qp_type == IBV_QPT_XRC_RECV ? 70 : 15))
		a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	if (vg_pct(r, 35)) {
		a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		a.create_flags = cflags[vg_pick(r, sizeof(cflags) / sizeof(cflags[0]))];
		if (a.create_flags == IBV_QP_CREATE_SOURCE_QPN)
			a.source_qpn = 1;
	}
	if (vg_pct(r, 35)) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = vg_send_ops(r);
		if (vg_pct(r, 30))
			a.send_ops_flags |= vg_send_ops(r);
	}
	if (vg_pct(r, 5)) {
		a.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
		a.max_tso_header = 64;
	}
	if (vg_pct(r, 3))
		a.comp_mask |= IBV_QP_INIT_ATTR_RX_HASH;	/* no IND_TABLE: a pointer */
	if (vg_pct(r, 5))
		a.comp_mask |= vg_pct(r, 50) ? 1u << 7 : 1u << 12;	/* unknown */
	vg_add(l, "create_qp_ex type=%s mask=%#x cflags=%#x ops=%#" PRIx64 " srq=%d",
	       vg_qpt_name(a.qp_type), a.comp_mask, a.create_flags, a.send_ops_flags, use_srq);
	vg_qp_caps(r, env, &a.cap, l);
	if (!vg_base(env, l, &o))
		goto out;
	a.pd = o.pd;
	a.send_cq = o.cq;
	a.recv_cq = o.cq;
	if (use_srq && !(a.srq = vg_basic_srq(env, &o))) {
		vg_add(l, " -> skip (create_srq: %s)", vg_errname(errno));
		goto out;
	}
	if ((a.comp_mask & IBV_QP_INIT_ATTR_XRCD) && !(a.xrcd = vg_xrcd(env, &o))) {
		vg_add(l, " -> skip (open_xrcd: %s)", vg_errname(o.xrcd_err));
		goto out;
	}
	errno = 0;
	o.qp = ibv_create_qp_ex(env->ctx, &a);
	if (vg_ptr_out(l, o.qp, errno))
		vg_caps_out(l, &a.cap);
out:
	vg_teardown(l, &o);
}

/* ---- modify_qp ----------------------------------------------------------- */
/* The attributes a transition requires besides STATE (ib_modify_qp_is_ok's
 * table, linux v6.1 drivers/infiniband/core/verbs.c qp_state_table): what
 * a request starts from; the kernel, not this table, judges the result. */
static int vg_req_mask(enum ibv_qp_type t, int from, int to)
{
	bool rc_like = t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV;

	if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
		return IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
		if (t == IBV_QPT_UD)
			return 0;
		return IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       (rc_like ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0);
	}
	if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND)
			return IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
		if (t == IBV_QPT_XRC_RECV)
			return IBV_QP_TIMEOUT | IBV_QP_SQ_PSN;
		return IBV_QP_SQ_PSN;
	}
	return 0;
}

/* Valid values for every attribute, whatever the mask carries. */
static void vg_qp_attr(struct vg_env *env, struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qkey = 0x11111111;
	a->pkey_index = 0;
	a->port_num = 1;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			     (qp->qp_type == IBV_QPT_UC ? 0 : IBV_ACCESS_REMOTE_READ);
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = qp->qp_num;
	a->rq_psn = 0;
	a->sq_psn = 0;
	a->max_dest_rd_atomic = 1;
	a->max_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->ah_attr.port_num = 1;
	if (env->eth) {
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = env->gid0;
		a->ah_attr.grh.sgid_index = 0;
		a->ah_attr.grh.hop_limit = 1;
	} else {
		a->ah_attr.dlid = env->pa.lid;
	}
	a->alt_ah_attr = a->ah_attr;
	a->alt_port_num = 1;
	a->alt_pkey_index = 0;
	a->alt_timeout = 14;
	a->path_mig_state = IBV_MIG_MIGRATED;
}

/* Drive qp from RESET to state `to` the canonical way: 0, or the errno of
 * the step that failed (its state in *at). */
static int vg_drive(struct vg_env *env, struct ibv_qp *qp, int to, int *at)
{
	struct ibv_qp_attr a;
	int s, e;

	for (s = IBV_QPS_RESET; s < to; s++) {
		vg_qp_attr(env, qp, &a);
		a.qp_state = (enum ibv_qp_state)(s + 1);
		e = ibv_modify_qp(qp, &a, IBV_QP_STATE | vg_req_mask(qp->qp_type, s, s + 1));
		if (e) {
			*at = s + 1;
			return e;
		}
	}
	return 0;
}

/* A QP of type t for the request (XRC ones need the XRCD). */
static struct ibv_qp *vg_make_qp(struct vg_env *env, struct vg_objs *o, enum ibv_qp_type t,
				 struct vg_line *l)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = t;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = o->pd;
	a.send_cq = o->cq;
	a.recv_cq = o->cq;
	if (t != IBV_QPT_XRC_RECV) {
		a.cap.max_send_wr = 16;
		a.cap.max_send_sge = 1;
	}
	if (t != IBV_QPT_XRC_RECV && t != IBV_QPT_XRC_SEND) {
		a.cap.max_recv_wr = 16;
		a.cap.max_recv_sge = 1;
	}
	if (t == IBV_QPT_XRC_RECV) {
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		if (!(a.xrcd = vg_xrcd(env, o))) {
			vg_add(l, " -> skip (open_xrcd: %s)", vg_errname(o->xrcd_err));
			return NULL;
		}
	}
	errno = 0;
	o->qp = ibv_create_qp_ex(env->ctx, &a);
	if (!o->qp)
		vg_add(l, " -> skip (create_qp: %s)", vg_errname(errno));
	return o->qp;
}

/* Bad value k (0..15): the attribute it sets, the bit it needs in the mask
 * and its name; a may be NULL (the mask and the name only). */
static void vg_bad_value(unsigned k, struct vg_env *env, struct ibv_qp_attr *a, int *mask,
			 const char **name)
{
	struct ibv_qp_attr scratch;

	if (!a)
		a = &scratch;
	switch (k) {
	case 0: a->port_num = 0; *mask |= IBV_QP_PORT; *name = "port=0"; break;
	case 1: a->port_num = env->da.phys_port_cnt + 1; *mask |= IBV_QP_PORT; *name = "port=max+1"; break;
	case 2: a->pkey_index = env->pa.pkey_tbl_len; *mask |= IBV_QP_PKEY_INDEX; *name = "pkey_index=max+1"; break;
	case 3: a->path_mtu = (enum ibv_mtu)0; *mask |= IBV_QP_PATH_MTU; *name = "path_mtu=0"; break;
	case 4: a->path_mtu = (enum ibv_mtu)6; *mask |= IBV_QP_PATH_MTU; *name = "path_mtu=6"; break;
	case 5: a->path_mtu = IBV_MTU_4096; *mask |= IBV_QP_PATH_MTU; *name = "path_mtu=4096"; break;
	case 6: a->max_rd_atomic = (uint8_t)(env->da.max_qp_rd_atom + 1); *mask |= IBV_QP_MAX_QP_RD_ATOMIC; *name = "max_rd_atomic=max+1"; break;
	case 7: a->max_dest_rd_atomic = (uint8_t)(env->da.max_qp_init_rd_atom + 1); *mask |= IBV_QP_MAX_DEST_RD_ATOMIC; *name = "max_dest_rd_atomic=max+1"; break;
	case 8: a->retry_cnt = 8; *mask |= IBV_QP_RETRY_CNT; *name = "retry_cnt=8"; break;
	case 9: a->rnr_retry = 8; *mask |= IBV_QP_RNR_RETRY; *name = "rnr_retry=8"; break;
	case 10: a->min_rnr_timer = 32; *mask |= IBV_QP_MIN_RNR_TIMER; *name = "min_rnr_timer=32"; break;
	case 11: a->timeout = 32; *mask |= IBV_QP_TIMEOUT; *name = "timeout=32"; break;
	case 12: a->ah_attr.grh.sgid_index = (uint8_t)env->pa.gid_tbl_len; a->ah_attr.is_global = 1;
		 *mask |= IBV_QP_AV; *name = "sgid_index=max+1"; break;
	case 13: a->ah_attr.is_global = 0; a->ah_attr.dlid = env->eth ? 0 : env->pa.lid;
		 *mask |= IBV_QP_AV; *name = "no_grh"; break;
	case 14: a->ah_attr.port_num = (uint8_t)(env->da.phys_port_cnt + 1); *mask |= IBV_QP_AV;
		 *name = "ah_port=max+1"; break;
	default: a->qp_access_flags = 1u << 30; *mask |= IBV_QP_ACCESS_FLAGS; *name = "access=1<<30"; break;
	}
}

static void vg_modify_qp(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const int types[] = { IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UC,
				     IBV_QPT_UD, IBV_QPT_UD, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV };
	static const int unknown[] = { 1 << 21, 1 << 25, 1 << 26, 1 << 30 };
	enum ibv_qp_type t = (enum ibv_qp_type)types[vg_pick(r, sizeof(types) / sizeof(types[0]))];
	int from = (int)vg_pick(r, 4), to, mask, req, bit, at = 0, e;
	const char *mut = "none", *bad = NULL;
	unsigned badk = vg_pick(r, 16);
	struct vg_objs o = { 0 };
	struct ibv_qp_attr a;
	char extra[32] = "";

	if (vg_pct(r, 65) && from < IBV_QPS_RTS)
		to = from + 1;
	else if (vg_pct(r, 5))
		to = vg_pct(r, 50) ? 7 : 9;		/* not a state */
	else
		to = (int)vg_pick(r, 7);		/* RESET..ERR */
	if (to == IBV_QPS_SQE)
		to = IBV_QPS_SQD;			/* SQE is the HCA's alone */
	req = from <= 6 && to <= 6 ? vg_req_mask(t, from, to) : 0;
	mask = IBV_QP_STATE | req;
	switch (vg_pick(r, 20)) {
	case 0: case 1: case 2:
		if (req) {
			do
				bit = 1 << vg_pick(r, 21);
			while (!(req & bit));
			mask &= ~bit;
			snprintf(extra, sizeof(extra), "drop=%#x", bit);
			mut = extra;
		}
		break;
	case 3: case 4: case 5: case 6:
		do
			bit = 1 << vg_pick(r, 21);
		while (mask & bit);
		mask |= bit;
		snprintf(extra, sizeof(extra), "add=%#x", bit);
		mut = extra;
		break;
	case 7:
		bit = unknown[vg_pick(r, sizeof(unknown) / sizeof(unknown[0]))];
		mask |= bit;
		snprintf(extra, sizeof(extra), "add=%#x", bit);
		mut = extra;
		break;
	case 8:
		mask &= ~IBV_QP_STATE;
		mut = "nostate";
		break;
	case 9:
		mask |= IBV_QP_CUR_STATE;
		mut = "cur_state";
		break;
	case 10: case 11: case 12:
		mut = "bad";
		break;
	default:
		break;
	}
	if (!strcmp(mut, "bad"))
		vg_bad_value(badk, env, NULL, &mask, &bad);
	vg_add(l, "modify_qp type=%s %s->%s mask=%#x mut=%s%s%s", vg_qpt_name(t),
	       vg_state_name(from), vg_state_name(to), mask, mut, bad ? " " : "", bad ? bad : "");
	if (!vg_base(env, l, &o))
		goto out;
	if (!vg_make_qp(env, &o, t, l))
		goto out;
	if ((e = vg_drive(env, o.qp, from, &at))) {
		vg_add(l, " -> skip (to %s: %s)", vg_state_name(at), vg_errname(e));
		goto out;
	}
	vg_qp_attr(env, o.qp, &a);
	a.qp_state = (enum ibv_qp_state)to;
	a.cur_qp_state = (enum ibv_qp_state)from;
	if (bad)
		vg_bad_value(badk, env, &a, &mask, &bad);
	errno = 0;
	if (vg_int_out(l, ibv_modify_qp(o.qp, &a, mask)))
		vg_add(l, " state=%s", vg_state_name(o.qp->state));
out:
	vg_teardown(l, &o);
}

/* ---- memory regions ------------------------------------------------------ */
static int vg_access(struct vg_rng *r, const char **why)
{
	static const int bits[] = { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
				    IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
				    IBV_ACCESS_MW_BIND, IBV_ACCESS_ZERO_BASED,
				    IBV_ACCESS_ON_DEMAND, IBV_ACCESS_HUGETLB,
				    IBV_ACCESS_RELAXED_ORDERING, 1 << 14 };
	int acc = 0;
	unsigned i;

	*why = "";
	if (vg_pct(r, 60)) {		/* the usual ones, any mix */
		acc = (int)(vg_next(r) & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
					  IBV_ACCESS_MW_BIND));
		return acc;
	}
	for (i = 0; i < 2; i++)
		acc |= bits[vg_pick(r, sizeof(bits) / sizeof(bits[0]))];
	return acc;
}

static void vg_reg_mr(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const size_t lens[] = { 4096, 4096, 65536, 1, 0 };
	struct vg_objs o = { 0 };
	const char *why;
	int acc = vg_access(r, &why);
	size_t len = lens[vg_pick(r, sizeof(lens) / sizeof(lens[0]))];
	unsigned where = vg_pick(r, 10);
	char *addr = where == 0 ? env->buf + 1 : env->buf;

	vg_add(l, "reg_mr access=%#x len=%zu addr=%s", acc, len, where == 0 ? "buf+1" : "buf");
	if (!(o.pd = ibv_alloc_pd(env->ctx))) {
		vg_add(l, " -> skip (alloc_pd: %s)", vg_errname(errno));
		goto out;
	}
	errno = 0;
	o.mr = ibv_reg_mr(o.pd, addr, len, acc);
	if (vg_ptr_out(l, o.mr, errno))
		vg_add(l, " len=%zu", o.mr->length);
out:
	vg_teardown(l, &o);
}

static void vg_rereg_mr(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	struct vg_objs o = { 0 };
	const char *why;
	int flags, acc, ret, first = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	size_t len = vg_pct(r, 15) ? 0 : 4096;
	unsigned where = vg_pick(r, 8);
	void *addr = where == 0 ? NULL : env->buf + (where == 1 ? 8192 : 0);

	flags = (int)vg_pick(r, 8);
	if (vg_pct(r, 8))
		flags |= 1 << (3 + vg_pick(r, 3));	/* unknown */
	acc = vg_access(r, &why);
	vg_add(l, "rereg_mr flags=%#x access=%#x len=%zu addr=%s", flags, acc, len,
	       where == 0 ? "NULL" : where == 1 ? "buf+8192" : "buf");
	if (!(o.pd = ibv_alloc_pd(env->ctx)) || !(o.pd2 = ibv_alloc_pd(env->ctx))) {
		vg_add(l, " -> skip (alloc_pd: %s)", vg_errname(errno));
		goto out;
	}
	if (!(o.mr = ibv_reg_mr(o.pd, env->buf, 4096, first))) {
		vg_add(l, " -> skip (reg_mr: %s)", vg_errname(errno));
		goto out;
	}
	errno = 0;
	ret = ibv_rereg_mr(o.mr, flags, o.pd2, addr, len, acc);
	if (ret)
		vg_add(l, " -> ret=%d errno=%s", ret, vg_errname(errno));
	else
		vg_add(l, " -> ok len=%zu pd=%s", o.mr->length,
		       o.mr->pd == o.pd2 ? "new" : o.mr->pd == o.pd ? "old" : "other");
	/* IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW and _DO_FORK_OLD leave the MR */
out:
	vg_teardown(l, &o);
}

/* ---- memory windows ------------------------------------------------------ */
static void vg_alloc_mw(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const int types[] = { IBV_MW_TYPE_1, IBV_MW_TYPE_1, IBV_MW_TYPE_2, IBV_MW_TYPE_2,
				     0, 3 };
	int t = types[vg_pick(r, sizeof(types) / sizeof(types[0]))];
	struct vg_objs o = { 0 };

	vg_add(l, "alloc_mw type=%d", t);
	if (!(o.pd = ibv_alloc_pd(env->ctx))) {
		vg_add(l, " -> skip (alloc_pd: %s)", vg_errname(errno));
		goto out;
	}
	errno = 0;
	o.mw = ibv_alloc_mw(o.pd, (enum ibv_mw_type)t);
	if (vg_ptr_out(l, o.mw, errno))
		vg_add(l, " type=%d", o.mw->type);
out:
	vg_teardown(l, &o);
}

static const char *vg_wc_name(enum ibv_wc_status s)
{
	static char other[16];

	switch (s) {
	case IBV_WC_SUCCESS: return "SUCCESS";
	case IBV_WC_LOC_LEN_ERR: return "LOC_LEN_ERR";
	case IBV_WC_LOC_QP_OP_ERR: return "LOC_QP_OP_ERR";
	case IBV_WC_LOC_PROT_ERR: return "LOC_PROT_ERR";
	case IBV_WC_WR_FLUSH_ERR: return "WR_FLUSH_ERR";
	case IBV_WC_MW_BIND_ERR: return "MW_BIND_ERR";
	case IBV_WC_LOC_ACCESS_ERR: return "LOC_ACCESS_ERR";
	case IBV_WC_BAD_RESP_ERR: return "BAD_RESP_ERR";
	case IBV_WC_REM_INV_REQ_ERR: return "REM_INV_REQ_ERR";
	case IBV_WC_REM_ACCESS_ERR: return "REM_ACCESS_ERR";
	case IBV_WC_REM_OP_ERR: return "REM_OP_ERR";
	case IBV_WC_RETRY_EXC_ERR: return "RETRY_EXC_ERR";
	case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR_RETRY_EXC_ERR";
	case IBV_WC_FATAL_ERR: return "FATAL_ERR";
	case IBV_WC_GENERAL_ERR: return "GENERAL_ERR";
	default:
		snprintf(other, sizeof(other), "status%d", (int)s);
		return other;
	}
}

/* The completion of the one WR posted: its status, or none within 2 s. */
static void vg_wait_wc(struct vg_line *l, struct ibv_cq *cq)
{
	struct timespec ts = { 0, 1000000 };
	struct ibv_wc wc;
	int i, n;

	for (i = 0; i < 2000; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0) {
			vg_add(l, " wc=poll-error");
			return;
		}
		if (n == 1) {
			vg_add(l, " wc=%s", vg_wc_name(wc.status));
			if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
				vg_add(l, " opcode=%d", wc.opcode);
			return;
		}
		nanosleep(&ts, NULL);
	}
	vg_add(l, " wc=none");
}

static void vg_bind_mw(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const int mr_acc[] = {
		IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int t = vg_pct(r, 50) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;
	int macc = mr_acc[vg_pick(r, sizeof(mr_acc) / sizeof(mr_acc[0]))];
	int bacc = (int)(vg_next(r) & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_ATOMIC));
	bool via_post = t == IBV_MW_TYPE_2 ? !vg_pct(r, 10) : vg_pct(r, 10);
	enum ibv_qp_type qt = vg_pct(r, 80) ? IBV_QPT_RC : IBV_QPT_UC;
	int state = vg_pct(r, 90) ? IBV_QPS_RTS : IBV_QPS_INIT;
	unsigned range = vg_pick(r, 6), at = 0;
	uint64_t off, len;
	const char *rn;
	struct vg_objs o = { 0 };
	struct ibv_mw_bind_info bi;
	int e;

	if (vg_pct(r, 10))
		bacc |= IBV_ACCESS_ZERO_BASED;
	switch (range) {
	case 0: off = 0; len = 4096; rn = "whole"; break;
	case 1: off = 1024; len = 1024; rn = "inside"; break;
	case 2: off = 2048; len = 4096; rn = "past_end"; break;
	case 3: off = 0; len = 0; rn = "zero_len"; break;
	default: off = 0; len = 2048; rn = "head"; break;
	}
	vg_add(l, "bind_mw type=%d via=%s qp=%s/%s mr_access=%#x access=%#x range=%s", t,
	       via_post ? "post_send" : "bind_mw", vg_qpt_name(qt), vg_state_name(state), macc,
	       bacc, rn);
	if (!vg_base(env, l, &o))
		goto out;
	if (!vg_make_qp(env, &o, qt, l))
		goto out;
	if ((e = vg_drive(env, o.qp, state, (int *)&at))) {
		vg_add(l, " -> skip (to %s: %s)", vg_state_name((int)at), vg_errname(e));
		goto out;
	}
	if (!(o.mr = ibv_reg_mr(o.pd, env->buf, 4096, macc))) {
		vg_add(l, " -> skip (reg_mr: %s)", vg_errname(errno));
		goto out;
	}
	if (!(o.mw = ibv_alloc_mw(o.pd, (enum ibv_mw_type)t))) {
		vg_add(l, " -> skip (alloc_mw: %s)", vg_errname(errno));
		goto out;
	}
	memset(&bi, 0, sizeof(bi));
	/* the region always named: rxe's post_send reads bind_info.mr->lkey even
	 * for an unbind (mr NULL, length 0) and dies of it (rdma-core v44.0
	 * providers/rxe/rxe.c:1513 convert_send_wr) */
	bi.mr = o.mr;
	bi.addr = (uint64_t)(uintptr_t)env->buf + off;
	bi.length = len;
	bi.mw_access_flags = (unsigned)bacc;
	errno = 0;
	if (via_post) {
		struct ibv_send_wr wr, *bad = NULL;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = o.mw;
		wr.bind_mw.rkey = ibv_inc_rkey(o.mw->rkey);
		wr.bind_mw.bind_info = bi;
		e = ibv_post_send(o.qp, &wr, &bad);
	} else {
		struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };

		b.bind_info = bi;
		e = ibv_bind_mw(o.qp, o.mw, &b);
	}
	if (vg_int_out(l, e))
		vg_wait_wc(l, o.cq);
out:
	vg_teardown(l, &o);
}

/* ---- address handles ----------------------------------------------------- */
static void vg_create_ah(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	struct vg_objs o = { 0 };
	struct ibv_ah_attr a;
	struct ibv_ah *ah;
	unsigned p = vg_pick(r, 10), g = vg_pick(r, 4), s = vg_pick(r, 8), d = vg_pick(r, 4);
	const char *pn, *gn = "-", *sn = "0", *dn;

	memset(&a, 0, sizeof(a));
	pn = p == 0 ? "0" : p == 1 ? "max+1" : "1";
	a.port_num = (uint8_t)(p == 0 ? 0 : p == 1 ? env->da.phys_port_cnt + 1 : 1);
	a.is_global = (uint8_t)vg_pick(r, 2);
	switch (d) {
	case 0: a.dlid = 0; dn = "0"; break;
	case 1: a.dlid = 0xc001; dn = "mcast"; break;
	default: a.dlid = env->pa.lid; dn = "port"; break;
	}
	a.sl = (uint8_t)(vg_pct(r, 10) ? 16 : vg_pick(r, 16));
	a.static_rate = (uint8_t)(vg_pct(r, 10) ? 0x7f : 0);
	a.src_path_bits = (uint8_t)vg_pick(r, 2);
	if (a.is_global) {
		switch (g) {
		case 0: a.grh.dgid = env->gid0; gn = "own"; break;
		case 1:	/* fe80::2, link-local: the MAC comes from the GID itself */
			a.grh.dgid.raw[0] = 0xfe;
			a.grh.dgid.raw[1] = 0x80;
			a.grh.dgid.raw[15] = 2;
			gn = "ll";
			break;
		case 2:	/* ff02::1, multicast */
			a.grh.dgid.raw[0] = 0xff;
			a.grh.dgid.raw[1] = 0x02;
			a.grh.dgid.raw[15] = 1;
			gn = "mcast";
			break;
		default: a.grh.dgid = env->gid0; gn = "own"; break;
		}
		switch (s) {
		case 0: a.grh.sgid_index = (uint8_t)env->pa.gid_tbl_len; sn = "max+1"; break;
		case 1: a.grh.sgid_index = 255; sn = "255"; break;
		default: break;
		}
		a.grh.hop_limit = (uint8_t)(vg_pct(r, 20) ? 0 : 64);
		a.grh.traffic_class = (uint8_t)(vg_pct(r, 20) ? 0x20 : 0);
		a.grh.flow_label = vg_pct(r, 10) ? 0x100000 : 0;
	}
	vg_add(l, "create_ah port=%s grh=%d dgid=%s sgid_index=%s hop=%u tclass=%#x flow=%#x "
	       "dlid=%s sl=%u rate=%#x path_bits=%u", pn, a.is_global, gn, sn, a.grh.hop_limit,
	       a.grh.traffic_class, a.grh.flow_label, dn, a.sl, a.static_rate, a.src_path_bits);
	if (!(o.pd = ibv_alloc_pd(env->ctx))) {
		vg_add(l, " -> skip (alloc_pd: %s)", vg_errname(errno));
		goto out;
	}
	errno = 0;
	ah = ibv_create_ah(o.pd, &a);
	if (vg_ptr_out(l, ah, errno) && (errno = ibv_destroy_ah(ah)))
		vg_add(l, " teardown: destroy_ah %s", vg_errname(errno));
out:
	vg_teardown(l, &o);
}

/* ---- queries ------------------------------------------------------------- */
static void vg_query(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	unsigned k = vg_pick(r, 7), p = vg_pick(r, 6), i = vg_pick(r, 3);
	uint8_t port = (uint8_t)(p == 0 ? 0 : p == 1 ? env->da.phys_port_cnt + 1 : 1);
	const char *pn = p == 0 ? "0" : p == 1 ? "max+1" : "1";
	struct vg_objs o = { 0 };
	int e;

	errno = 0;
	switch (k) {
	case 0: {
		struct ibv_device_attr da;

		vg_add(l, "query_device");
		vg_int_out(l, ibv_query_device(env->ctx, &da));
		break;
	}
	case 1: {
		struct ibv_query_device_ex_input in = { .comp_mask = i == 0 ? 1 : 0 };
		struct ibv_device_attr_ex dx;

		vg_add(l, "query_device_ex in_mask=%#x", in.comp_mask);
		vg_int_out(l, ibv_query_device_ex(env->ctx, &in, &dx));
		break;
	}
	case 2: {
		struct ibv_port_attr pa;

		vg_add(l, "query_port port=%s", pn);
		if (vg_int_out(l, ibv_query_port(env->ctx, port, &pa)))
			vg_add(l, " link_layer=%u", pa.link_layer);
		break;
	}
	case 3: {
		union ibv_gid gid;
		int idx = i == 0 ? 0 : i == 1 ? env->pa.gid_tbl_len : 0x7fff;

		vg_add(l, "query_gid port=%s index=%s", pn, i == 0 ? "0" : i == 1 ? "max+1" : "0x7fff");
		e = ibv_query_gid(env->ctx, port, idx, &gid);
		vg_add(l, e ? " -> ret=%d errno=%s" : " -> ok", e, vg_errname(errno));
		break;
	}
	case 4: {
		__be16 pkey;
		int idx = i == 0 ? 0 : i == 1 ? env->pa.pkey_tbl_len : 0x7fff;

		vg_add(l, "query_pkey port=%s index=%s", pn, i == 0 ? "0" : i == 1 ? "max+1" : "0x7fff");
		e = ibv_query_pkey(env->ctx, port, idx, &pkey);
		vg_add(l, e ? " -> ret=%d errno=%s" : " -> ok", e, vg_errname(errno));
		break;
	}
	case 5: {
		static const int masks[] = { IBV_QP_STATE, IBV_QP_CAP, IBV_QP_STATE | IBV_QP_CAP |
					     IBV_QP_PORT | IBV_QP_PKEY_INDEX, 0 };
		enum ibv_qp_type t = i == 0 ? IBV_QPT_UD : IBV_QPT_RC;
		int m = masks[vg_pick(r, 4)];
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr qa;
		int at = 0;

		vg_add(l, "query_qp type=%s state=%s mask=%#x", vg_qpt_name(t), vg_state_name((int)p % 4), m);
		if (!vg_base(env, l, &o) || !vg_make_qp(env, &o, t, l))
			break;
		if ((e = vg_drive(env, o.qp, (int)p % 4, &at))) {
			vg_add(l, " -> skip (to %s: %s)", vg_state_name(at), vg_errname(e));
			break;
		}
		memset(&qa, 0, sizeof(qa));
		if (vg_int_out(l, ibv_query_qp(o.qp, &qa, m, &ia))) {
			if (m & IBV_QP_STATE)
				vg_add(l, " state=%s", vg_state_name(qa.qp_state));
			vg_add(l, " init_type=%s", vg_qpt_name(ia.qp_type));
		}
		break;
	}
	default: {
		struct ibv_srq_attr sa;

		vg_add(l, "query_srq");
		if (!vg_base(env, l, &o) || !vg_basic_srq(env, &o)) {
			if (o.pd && o.cq)
				vg_add(l, " -> skip (create_srq: %s)", vg_errname(errno));
			break;
		}
		if (vg_int_out(l, ibv_query_srq(o.srq, &sa)))
			vg_add(l, " wr=%u sge=%u limit=%u", sa.max_wr, sa.max_sge, sa.srq_limit);
		break;
	}
	}
	vg_teardown(l, &o);
}

/* ---- the new post-send API (--set post) ---------------------------------- */
/*
 * Every builder of struct ibv_qp_ex, each through ibv_wr_start and
 * ibv_wr_complete (or ibv_wr_abort), on a QP that asked for it in its
 * send_ops_flags (rxe sets only the builders asked for: rdma-core v44.0
 * providers/rxe/rxe.c:1311 set_qp_send_ops). A request makes two QPs of a
 * type, a (the requester, with its send operations) and b (the target),
 * connected to each other on the device's port 1, a local region and a
 * remote one in env->buf, builds one to three WRs with the setters their
 * kind takes (SGE, SGE list, inline data, inline list, UD address), and
 * prints what the application sees: wr_complete's answer, each completion
 * of both CQs (status; opcode and length when it succeeded), a digest of
 * both regions and both QPs' states. One mistake may be planted (a bad
 * rkey or lkey, a range past the region, a region or a QP without the
 * access, a misaligned atomic, too much inline data). No SEND_WITH_INV
 * names a window's key: that panics rxe on a key it cannot revoke (linux
 * v6.1 drivers/infiniband/sw/rxe/rxe_mw.c:236); it names a region's.
 * ibv_wr_flush exists in rdma-core >= 45 headers only (VG_RDMA_CORE, the
 * header's release from pkg-config): built against an older one, its
 * requests say so and skip, so the sequence stays the same.
 */
#ifndef VG_RDMA_CORE
#define VG_RDMA_CORE 0
#endif

#define VG_LOC_OFF	0		/* the local region in env->buf */
#define VG_REM_OFF	16384		/* the remote region */
#define VG_REG_LEN	4096

enum vg_bad { VG_BAD_NONE, VG_BAD_RKEY, VG_BAD_LKEY, VG_BAD_RANGE, VG_BAD_MR_ACCESS,
	      VG_BAD_QP_ACCESS, VG_BAD_ALIGN, VG_BAD_INLINE, VG_BAD__N };
static const char *const vg_bad_names[] = { "none", "rkey", "lkey", "range", "mr_access",
					    "qp_access", "align", "inline" };

struct vg_post {
	struct vg_env *env;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *cq2;	/* a's, b's */
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	struct ibv_mr *lmr, *rmr;
	struct ibv_mw *mw;
	struct ibv_ah *ah;
	enum ibv_qp_type type;
	enum vg_bad bad;
	unsigned nwr, nrecv;		/* WRs built; receives they consume */
};

static uint32_t vg_fnv(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

/* QP q from RESET to RTS (RC, UC: to dqpn; UD: its qkey), access acc. */
static int vg_connect(struct vg_env *env, struct ibv_qp *q, uint32_t dqpn, int acc)
{
	struct ibv_qp_attr a;
	int e, s;

	for (s = IBV_QPS_RESET; s < IBV_QPS_RTS; s++) {
		vg_qp_attr(env, q, &a);
		a.qp_state = (enum ibv_qp_state)(s + 1);
		a.dest_qp_num = dqpn;
		a.qp_access_flags = (unsigned)acc;
		e = ibv_modify_qp(q, &a, IBV_QP_STATE | vg_req_mask(q->qp_type, s, s + 1));
		if (e)
			return e;
	}
	return 0;
}

static void vg_post_teardown(struct vg_line *l, struct vg_post *p)
{
	int e;

	if (p->a && (e = ibv_destroy_qp(p->a)))
		vg_add(l, " teardown: destroy_qp %s", vg_errname(e));
	if (p->b && (e = ibv_destroy_qp(p->b)))
		vg_add(l, " teardown: destroy_qp %s", vg_errname(e));
	if (p->ah && (e = ibv_destroy_ah(p->ah)))
		vg_add(l, " teardown: destroy_ah %s", vg_errname(e));
	if (p->mw && (e = ibv_dealloc_mw(p->mw)))
		vg_add(l, " teardown: dealloc_mw %s", vg_errname(e));
	if (p->lmr && (e = ibv_dereg_mr(p->lmr)))
		vg_add(l, " teardown: dereg_mr %s", vg_errname(e));
	if (p->rmr && (e = ibv_dereg_mr(p->rmr)))
		vg_add(l, " teardown: dereg_mr %s", vg_errname(e));
	if (p->cq2 && (e = ibv_destroy_cq(p->cq2)))
		vg_add(l, " teardown: destroy_cq %s", vg_errname(e));
	if (p->cq && (e = ibv_destroy_cq(p->cq)))
		vg_add(l, " teardown: destroy_cq %s", vg_errname(e));
	if (p->pd && (e = ibv_dealloc_pd(p->pd)))
		vg_add(l, " teardown: dealloc_pd %s", vg_errname(e));
}

/*
 * The two QPs and the two regions. ops: a's send_ops_flags; racc: the
 * remote region's access; bacc: b's qp_access_flags. false (with a skip,
 * or a's create answer, in the line) when a part could not be made.
 */
static bool vg_post_setup(struct vg_post *p, struct vg_line *l, uint64_t ops, int racc,
			  int bacc, uint32_t inl)
{
	struct vg_env *env = p->env;
	struct ibv_qp_init_attr_ex a;
	struct ibv_ah_attr ah;
	int e;

	memset(env->buf + VG_LOC_OFF, 0, VG_REG_LEN);
	for (e = 0; e < VG_REG_LEN; e++)
		env->buf[VG_LOC_OFF + e] = (char)(e * 7 + 3);
	memset(env->buf + VG_REM_OFF, 0x5a, VG_REG_LEN);
	if (!(p->pd = ibv_alloc_pd(env->ctx)) ||
	    !(p->cq = ibv_create_cq(env->ctx, 64, NULL, NULL, 0)) ||
	    !(p->cq2 = ibv_create_cq(env->ctx, 64, NULL, NULL, 0))) {
		vg_add(l, " -> skip (pd, cq: %s)", vg_errname(errno));
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.qp_type = p->type;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = p->pd;
	a.send_cq = p->cq2;
	a.recv_cq = p->cq2;
	a.cap.max_send_wr = a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = a.cap.max_recv_sge = 2;
	if (!(p->b = ibv_create_qp_ex(env->ctx, &a))) {
		vg_add(l, " -> skip (create_qp b: %s)", vg_errname(errno));
		return false;
	}
	a.send_cq = p->cq;
	a.recv_cq = p->cq;
	a.cap.max_inline_data = inl;
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = ops;
	errno = 0;
	p->a = ibv_create_qp_ex(env->ctx, &a);
	if (!p->a) {
		vg_add(l, " -> create null errno=%s", vg_errname(errno));
		return false;
	}
	p->x = ibv_qp_to_qp_ex(p->a);
	if (!p->x) {
		vg_add(l, " -> create ok, no ibv_qp_ex");
		return false;
	}
	if ((e = vg_connect(env, p->a, p->b->qp_num, IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) ||
	    (e = vg_connect(env, p->b, p->a->qp_num, bacc))) {
		vg_add(l, " -> skip (connect: %s)", vg_errname(e));
		return false;
	}
	if (p->type == IBV_QPT_UD) {
		memset(&ah, 0, sizeof(ah));
		ah.port_num = 1;
		if (env->eth) {
			ah.is_global = 1;
			ah.grh.dgid = env->gid0;
			ah.grh.hop_limit = 1;
		} else {
			ah.dlid = env->pa.lid;
		}
		if (!(p->ah = ibv_create_ah(p->pd, &ah))) {
			vg_add(l, " -> skip (create_ah: %s)", vg_errname(errno));
			return false;
		}
	}
	p->lmr = ibv_reg_mr(p->pd, env->buf + VG_LOC_OFF, VG_REG_LEN, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	errno = 0;
	p->rmr = ibv_reg_mr(p->pd, env->buf + VG_REM_OFF, VG_REG_LEN, racc);
	if (!p->lmr || !p->rmr) {
		vg_add(l, " -> skip (reg_mr %#x: %s)", (unsigned)racc, vg_errname(errno));
		return false;
	}
	return true;
}

/* Receives for the target, n of them, in the remote region's second half
 * (past what the remote operations touch). */
static void vg_post_recvs(struct vg_post *p, unsigned n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->env->buf + VG_REM_OFF + VG_REG_LEN / 2),
		.length = VG_REG_LEN / 2 - 64,
		.lkey = p->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1 }, *bad;
	unsigned i;

	for (i = 0; i < n; i++) {
		wr.wr_id = 100 + i;
		if (ibv_post_recv(p->b, &wr, &bad))
			return;
	}
	p->nrecv = n;
}

/* The data of a WR (SEND, WRITE): an SGE, an SGE list, inline data or an
 * inline list, of len bytes of the local region. */
static void vg_post_data(struct vg_rng *r, struct vg_post *p, struct vg_line *l, uint32_t len,
			 bool may_inline)
{
	char *src = p->env->buf + VG_LOC_OFF;
	uint32_t lkey = p->bad == VG_BAD_LKEY ? p->lmr->lkey ^ 0x80000000u : p->lmr->lkey;
	unsigned how = vg_pick(r, may_inline ? 4 : 2);
	struct ibv_sge sg[2] = {
		{ .addr = (uintptr_t)src, .length = len / 2, .lkey = lkey },
		{ .addr = (uintptr_t)src + 1024, .length = len - len / 2, .lkey = lkey },
	};
	struct ibv_data_buf db[2] = {
		{ .addr = src, .length = len / 2 },
		{ .addr = src + 1024, .length = len - len / 2 },
	};

	switch (how) {
	case 0:
		vg_add(l, " sge=%u", len);
		ibv_wr_set_sge(p->x, lkey, (uintptr_t)src, len);
		break;
	case 1:
		vg_add(l, " sge_list=%u+%u", sg[0].length, sg[1].length);
		ibv_wr_set_sge_list(p->x, 2, sg);
		break;
	case 2:
		vg_add(l, " inline=%u", len);
		ibv_wr_set_inline_data(p->x, src, len);
		break;
	default:
		vg_add(l, " inline_list=%zu+%zu", db[0].length, db[1].length);
		ibv_wr_set_inline_data_list(p->x, 2, db);
		break;
	}
}

/* One WR of kind k on the remote region (k: a letter of vg_post_one's). */
static void vg_post_one(struct vg_rng *r, struct vg_post *p, struct vg_line *l, char k)
{
	uint64_t raddr = (uintptr_t)(p->env->buf + VG_REM_OFF);
	uint32_t rkey = p->bad == VG_BAD_RKEY ? p->rmr->rkey ^ 0x80000000u : p->rmr->rkey;
	uint32_t len = 1 + vg_pick(r, 3) * 40;		/* 1, 41 or 81 bytes */
	uint64_t v = 0x1122334455667700ull | p->nwr;

	if (p->bad == VG_BAD_RANGE)
		raddr += VG_REG_LEN - 8;		/* past the end for every length but 8 */
	if (p->bad == VG_BAD_ALIGN)
		raddr += 4;
	if (p->bad == VG_BAD_INLINE)
		len = 4096;				/* more inline data than the QP takes */
	p->x->wr_id = 1 + p->nwr;
	p->x->wr_flags = IBV_SEND_SIGNALED | (vg_pct(r, 20) ? IBV_SEND_SOLICITED : 0) |
			 (vg_pct(r, 10) ? IBV_SEND_FENCE : 0);
	p->nwr++;
	switch (k) {
	case 's':
		vg_add(l, " | send");
		ibv_wr_send(p->x);
		break;
	case 'i':
		vg_add(l, " | send_imm");
		ibv_wr_send_imm(p->x, htobe32(0x1234));
		break;
	case 'v':
		vg_add(l, " | send_inv");
		ibv_wr_send_inv(p->x, p->rmr->rkey);	/* a region's key, never a window's */
		break;
	case 'w':
		vg_add(l, " | rdma_write");
		ibv_wr_rdma_write(p->x, rkey, raddr);
		break;
	case 'I':
		vg_add(l, " | rdma_write_imm");
		ibv_wr_rdma_write_imm(p->x, rkey, raddr, htobe32(0x4321));
		break;
	case 'r':
		vg_add(l, " | rdma_read len=%u", len);
		ibv_wr_rdma_read(p->x, rkey, raddr);
		ibv_wr_set_sge(p->x, p->bad == VG_BAD_LKEY ? p->lmr->lkey ^ 0x80000000u : p->lmr->lkey,
			       (uintptr_t)(p->env->buf + VG_LOC_OFF + 2048), len);
		return;
	case 'c':
	case 'f':
		vg_add(l, " | %s", k == 'c' ? "atomic_cmp_swp" : "atomic_fetch_add");
		if (k == 'c')
			ibv_wr_atomic_cmp_swp(p->x, rkey, raddr, 0x5a5a5a5a5a5a5a5aull, v);
		else
			ibv_wr_atomic_fetch_add(p->x, rkey, raddr, 0x101);
		ibv_wr_set_sge(p->x, p->bad == VG_BAD_LKEY ? p->lmr->lkey ^ 0x80000000u : p->lmr->lkey,
			       (uintptr_t)(p->env->buf + VG_LOC_OFF + 2048), 8);
		return;
	case 'a':
		vg_add(l, " | atomic_write");
		ibv_wr_atomic_write(p->x, rkey, raddr, &v);
		return;
	case 'F':
#if VG_RDMA_CORE >= 45
	{
		static const uint8_t types[] = { IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT,
						 IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT };
		uint8_t t = types[vg_pick(r, 3)], lv = vg_pct(r, 30) ? IBV_FLUSH_MR : IBV_FLUSH_RANGE;

		vg_add(l, " | flush type=%u level=%u len=%u", t, lv, len);
		ibv_wr_flush(p->x, rkey, raddr, len, t, lv);
	}
#endif
		return;
	default:
		return;
	}
	if (p->type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(p->x, p->ah, p->b->qp_num, 0x11111111);
	vg_post_data(r, p, l, len, p->bad == VG_BAD_INLINE || vg_pct(r, 40));
}

/* The completion of each of n WRs on cq (2 s each at most), printed as
 * TAG=STATUS[/opcode/len]. */
static unsigned vg_post_wcs(struct vg_line *l, struct ibv_cq *cq, unsigned n, const char *tag,
			    int wait_ms)
{
	struct timespec ts = { 0, 1000000 };
	unsigned got = 0;
	struct ibv_wc wc;
	int i, k;

	for (i = 0; got < n && i < wait_ms; ) {
		k = ibv_poll_cq(cq, 1, &wc);
		if (k < 0) {
			vg_add(l, " %s=poll-error", tag);
			return got;
		}
		if (k == 0) {
			nanosleep(&ts, NULL);
			i++;
			continue;
		}
		got++;
		vg_add(l, " %s=%s", tag, vg_wc_name(wc.status));
		if (wc.status == IBV_WC_SUCCESS)
			vg_add(l, "/%d/%u%s", wc.opcode, wc.byte_len,
			       wc.wc_flags & IBV_WC_WITH_IMM ? "/imm" : "");
	}
	return got;
}

static const char *vg_qp_state_of(struct ibv_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(q, &a, IBV_QP_STATE, &ia))
		return "?";
	return vg_state_name(a.qp_state);
}

/*
 * A request of builder kinds ks (letters, one per WR), on a QP type among
 * types, asking ops in send_ops_flags; the remote region's access and b's
 * need (plus whatever a mistake takes away).
 */
static void vg_post_run(struct vg_rng *r, struct vg_env *env, struct vg_line *l, const char *ks,
			enum ibv_qp_type t, uint64_t ops, int need)
{
	struct vg_post p;
	int racc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_ATOMIC | need;
	int bacc = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
		   need;
	uint32_t inl = vg_pct(r, 50) ? 0 : 128;
	bool abort_it = vg_pct(r, 8);
	unsigned i, nsend = 0;
	int ret;

	memset(&p, 0, sizeof(p));
	p.env = env;
	p.type = t;
	p.bad = vg_pct(r, 70) ? VG_BAD_NONE : (enum vg_bad)(1 + vg_pick(r, VG_BAD__N - 1));
	if (p.bad == VG_BAD_MR_ACCESS)
		racc = IBV_ACCESS_LOCAL_WRITE;
	if (p.bad == VG_BAD_QP_ACCESS)
		bacc = 0;
	vg_add(l, "post_ex type=%s ops=%#" PRIx64 " inl=%u bad=%s%s", vg_qpt_name(t), ops, inl,
	       vg_bad_names[p.bad], abort_it ? " abort" : "");
	if (!vg_post_setup(&p, l, ops, racc, bacc, inl))
		goto out;
	for (i = 0; ks[i]; i++)
		if (strchr("siv", ks[i]) || ks[i] == 'I')
			nsend++;
	vg_post_recvs(&p, nsend);
	ibv_wr_start(p.x);
	for (i = 0; ks[i]; i++)
		vg_post_one(r, &p, l, ks[i]);
	if (abort_it) {
		ibv_wr_abort(p.x);
		vg_add(l, " -> abort");
		p.nwr = 0;
	} else {
		ret = ibv_wr_complete(p.x);
		vg_add(l, " -> complete=%s", vg_errname(ret));
		if (ret)
			p.nwr = 0;
	}
	vg_post_wcs(l, p.cq, p.nwr, "wc", 2000);
	/* the target's, once the requester's are in (after an ACK for RC, at
	 * once for UC and UD): a short wait */
	vg_post_wcs(l, p.cq2, p.nwr ? p.nrecv : 0, "rwc", 300);
	vg_add(l, " r=%08x l=%08x a=%s b=%s",
	       vg_fnv((const unsigned char *)env->buf + VG_REM_OFF, VG_REG_LEN / 2),
	       vg_fnv((const unsigned char *)env->buf + VG_LOC_OFF, VG_REG_LEN),
	       vg_qp_state_of(p.a), vg_qp_state_of(p.b));
out:
	vg_post_teardown(l, &p);
}

static enum ibv_qp_type vg_post_type(struct vg_rng *r, bool ud_too)
{
	unsigned k = vg_pick(r, 10);

	if (k < 7)
		return IBV_QPT_RC;
	return k < 9 || !ud_too ? IBV_QPT_UC : IBV_QPT_UD;
}

static void vg_wr_send(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	bool imm = vg_pct(r, 40);

	vg_post_run(r, env, l, imm ? "i" : "s", vg_post_type(r, true),
		    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, 0);
}

static void vg_wr_send_inv(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	vg_post_run(r, env, l, "v", vg_post_type(r, false), IBV_QP_EX_WITH_SEND_WITH_INV, 0);
}

static void vg_wr_rdma(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const char *const ks[] = { "w", "w", "I", "r", "r" };
	const char *k = ks[vg_pick(r, 5)];
	enum ibv_qp_type t = k[0] == 'r' ? IBV_QPT_RC : vg_post_type(r, false);

	vg_post_run(r, env, l, k, t, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		    IBV_QP_EX_WITH_RDMA_READ * (t == IBV_QPT_RC), 0);
}

static void vg_wr_atomic(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	vg_post_run(r, env, l, vg_pct(r, 50) ? "c" : "f", IBV_QPT_RC,
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, 0);
}

static void vg_wr_atomic_write(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	vg_post_run(r, env, l, "a", IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE, 0);
}

/* The release whose header the requests are written for (--headers): the
 * one built against, or an older one, whose programs know no ibv_wr_flush. */
static int vg_headers = VG_RDMA_CORE;

static void vg_wr_flush(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
#if VG_RDMA_CORE >= 45
	int need;

	if (vg_headers >= 45) {
		need = vg_pct(r, 20) ? 0 : IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT;
		vg_post_run(r, env, l, "F", IBV_QPT_RC, IBV_QP_EX_WITH_FLUSH, need);
		return;
	}
#endif
	(void)r;
	(void)env;
	vg_add(l, "post_ex flush -> skip (no ibv_wr_flush in rdma-core %d's header)", vg_headers);
}

/* Windows through the new API: a type 2 window bound with wr_bind_mw over
 * the local region, then invalidated with wr_local_inv (or the region's
 * key given to wr_local_inv, which rxe cannot revoke). */
static void vg_wr_local(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	struct vg_post p;
	struct ibv_mw_bind_info bi;
	bool inv_mr = vg_pct(r, 25), then_inv = vg_pct(r, 60);
	enum ibv_qp_type t = vg_pct(r, 80) ? IBV_QPT_RC : IBV_QPT_UC;
	uint32_t key;
	int ret;

	memset(&p, 0, sizeof(p));
	p.env = env;
	p.type = t;
	vg_add(l, "post_ex type=%s local=%s", vg_qpt_name(t),
	       inv_mr ? "local_inv(mr)" : then_inv ? "bind_mw,local_inv" : "bind_mw");
	if (!vg_post_setup(&p, l, IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 0, 0))
		goto out;
	ibv_wr_start(p.x);
	p.x->wr_flags = IBV_SEND_SIGNALED;
	if (inv_mr) {
		p.x->wr_id = 1;
		ibv_wr_local_inv(p.x, p.rmr->rkey);
		p.nwr = 1;
	} else {
		if (!(p.mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2))) {
			ibv_wr_abort(p.x);
			vg_add(l, " -> skip (alloc_mw: %s)", vg_errname(errno));
			goto out;
		}
		memset(&bi, 0, sizeof(bi));
		bi.mr = p.lmr;
		bi.addr = (uintptr_t)(env->buf + VG_LOC_OFF);
		bi.length = 1024;
		bi.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		key = ibv_inc_rkey(p.mw->rkey);
		p.x->wr_id = 1;
		ibv_wr_bind_mw(p.x, p.mw, key, &bi);
		p.nwr = 1;
		if (then_inv) {
			p.x->wr_id = 2;
			ibv_wr_local_inv(p.x, key);
			p.nwr = 2;
		}
	}
	ret = ibv_wr_complete(p.x);
	vg_add(l, " -> complete=%s", vg_errname(ret));
	if (ret)
		p.nwr = 0;
	vg_post_wcs(l, p.cq, p.nwr, "wc", 2000);
	vg_add(l, " a=%s", vg_qp_state_of(p.a));
out:
	vg_post_teardown(l, &p);
}

/* Two or three WRs of the RC builders in one batch. */
static void vg_wr_batch(struct vg_rng *r, struct vg_env *env, struct vg_line *l)
{
	static const char letters[] = "siwIrcfa";
	char ks[4] = "";
	unsigned n = 2 + vg_pick(r, 2), i;

	for (i = 0; i < n; i++)
		ks[i] = letters[vg_pick(r, sizeof(letters) - 1)];
	vg_post_run(r, env, l, ks, IBV_QPT_RC,
		    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		    IBV_QP_EX_WITH_ATOMIC_WRITE, 0);
}

/* ---- the run ------------------------------------------------------------- */
struct vg_kind {
	const char *name;
	unsigned weight;
	void (*fn)(struct vg_rng *, struct vg_env *, struct vg_line *);
};

static const struct vg_kind vg_kinds[] = {
	{ "create_cq", 6, vg_create_cq },
	{ "create_cq_ex", 6, vg_create_cq_ex },
	{ "create_srq", 5, vg_create_srq },
	{ "create_srq_ex", 7, vg_create_srq_ex },
	{ "create_qp", 10, vg_create_qp },
	{ "create_qp_ex", 14, vg_create_qp_ex },
	{ "modify_qp", 22, vg_modify_qp },
	{ "reg_mr", 7, vg_reg_mr },
	{ "rereg_mr", 5, vg_rereg_mr },
	{ "alloc_mw", 3, vg_alloc_mw },
	{ "bind_mw", 6, vg_bind_mw },
	{ "create_ah", 6, vg_create_ah },
	{ "query", 5, vg_query },
};

/* --set post: every builder of the new post-send API (a sequence of its
 * own: the control set's requests stay what they are). */
static const struct vg_kind vg_post_kinds[] = {
	{ "wr_send", 8, vg_wr_send },
	{ "wr_send_inv", 3, vg_wr_send_inv },
	{ "wr_rdma", 8, vg_wr_rdma },
	{ "wr_atomic", 5, vg_wr_atomic },
	{ "wr_atomic_write", 5, vg_wr_atomic_write },
	{ "wr_flush", 5, vg_wr_flush },
	{ "wr_local", 4, vg_wr_local },
	{ "wr_batch", 6, vg_wr_batch },
};

static const struct vg_kind *vg_set = vg_kinds;
static size_t vg_nset = sizeof(vg_kinds) / sizeof(vg_kinds[0]);

/*
 * What the worker shares with its supervisor: the request under way and its
 * line so far. A request that kills the worker (a provider's crash: a
 * verdict too) is printed by the supervisor as `crash SIGNAME`, and a new
 * worker goes on with the next index.
 */
struct vg_shared {
	uint64_t idx;
	int busy;
	struct vg_line line;
};

static struct vg_shared *vg_sh;

static void vg_one(uint64_t seed, uint64_t idx, struct vg_env *env, const char *only)
{
	struct vg_rng r = { seed * 0x100000001b3ULL ^ (idx + 1) * 0x9e3779b97f4a7c15ULL };
	unsigned total = 0, w;
	size_t k;
	struct vg_line *l = &vg_sh->line;

	for (k = 0; k < vg_nset; k++)
		total += vg_set[k].weight;
	vg_next(&r);
	w = vg_pick(&r, total);
	for (k = 0; w >= vg_set[k].weight; k++)
		w -= vg_set[k].weight;
	if (only && strcmp(only, vg_set[k].name))
		return;
	l->n = 0;
	l->buf[0] = 0;
	vg_sh->idx = idx;
	vg_sh->busy = 1;
	vg_add(l, "%06" PRIu64 " ", idx);
	vg_set[k].fn(&r, env, l);
	printf("%s\n", l->buf);
	fflush(stdout);
	vg_sh->busy = 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ibvct-verbs-gen --seed N --count M [--from I] [--device NAME] [--only KIND]\n"
		   "                       [--set control|post] [--headers N]\n"
		   "  one line a request: INDEX VERB ARGS -> OUTCOME; requests FROM..FROM+COUNT-1\n"
		   "  of the seed's sequence (each depends on the seed and its index alone)\n"
		   "  --only KIND  print only the requests of one kind (create_qp_ex, modify_qp, ...)\n"
		   "  --set post   the new post-send API's builders (wr_send, wr_rdma, ...: their own\n"
		   "               sequence); control (the default): the control-path verbs\n"
		   "  --headers N  requests as a program built against rdma-core N's header\n"
		   "               (N no newer than the one built against) makes them: 44 has\n"
		   "               no ibv_wr_flush\n"
		   "  a request that kills the program is printed with `crash SIGNAME`, and the\n"
		   "  run goes on with the next one\n");
}

/*
 * Before the first request of the post set: one RC QP taken to RTR and
 * dropped, its outcome unprinted. A guest's first address resolution of
 * its own GID can time out while its neighbour table is cold (ETIMEDOUT
 * from modify_qp on rxe0, the environment's, not the request's).
 */
static void vg_warm(struct vg_env *env)
{
	struct vg_objs o = { 0 };
	struct vg_line l = { .n = 0 };
	int at;

	if (vg_base(env, &l, &o) && vg_make_qp(env, &o, IBV_QPT_RC, &l))
		(void)vg_drive(env, o.qp, IBV_QPS_RTR, &at);
	vg_teardown(&l, &o);
}

/* The worker: open the device, run requests from..end. */
static int vg_work(uint64_t seed, uint64_t from, uint64_t end, const char *dev_name,
		   const char *only, bool header)
{
	struct ibv_device **list, *dev = NULL;
	struct vg_env env;
	uint64_t i;
	int n, k;

	memset(&env, 0, sizeof(env));
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "ibvct-verbs-gen: no RDMA device (%s)\n",
			list ? "the list is empty" : strerror(errno));
		return 1;
	}
	for (k = 0; k < n; k++)
		if (!dev_name || !strcmp(ibv_get_device_name(list[k]), dev_name)) {
			dev = list[k];
			break;
		}
	if (!dev) {
		fprintf(stderr, "ibvct-verbs-gen: no device %s\n", dev_name);
		return 1;
	}
	env.ctx = ibv_open_device(dev);
	if (!env.ctx || ibv_query_device(env.ctx, &env.da) || ibv_query_port(env.ctx, 1, &env.pa) ||
	    ibv_query_gid(env.ctx, 1, 0, &env.gid0)) {
		fprintf(stderr, "ibvct-verbs-gen: %s: cannot open and query: %s\n",
			ibv_get_device_name(dev), strerror(errno));
		return 1;
	}
	env.eth = env.pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (posix_memalign((void **)&env.buf, 4096, VG_BUF_LEN)) {
		fprintf(stderr, "ibvct-verbs-gen: out of memory\n");
		return 1;
	}
	memset(env.buf, 0, VG_BUF_LEN);
	/* what the lines leave out, as a comment the compare tool skips */
	if (header)
		printf("# device %s seed %" PRIu64 " from %" PRIu64 " count %" PRIu64
		       " link_layer %s max_qp_wr %d max_sge %d max_cqe %d max_srq_wr %d"
		       " max_srq_sge %d\n",
		       ibv_get_device_name(dev), seed, from, end - from, env.eth ? "ethernet" : "ib",
		       env.da.max_qp_wr, env.da.max_sge, env.da.max_cqe, env.da.max_srq_wr,
		       env.da.max_srq_sge);
	if (header && vg_set == vg_post_kinds)
		printf("# set post headers rdma-core %d\n", vg_headers);
	if (vg_set == vg_post_kinds)
		vg_warm(&env);
	fflush(stdout);
	for (i = from; i < end; i++)
		vg_one(seed, i, &env, only);
	ibv_close_device(env.ctx);
	ibv_free_device_list(list);
	free(env.buf);
	return 0;
}

static const char *vg_signame(int sig)
{
	static char other[16];

	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	default:
		snprintf(other, sizeof(other), "signal%d", sig);
		return other;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "from", required_argument, NULL, 'f' },
		{ "device", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "set", required_argument, NULL, 'S' },
		{ "headers", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t seed = 1, count = 100, from = 0, next;
	const char *dev_name = NULL, *only = NULL;
	int c, st;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "s:c:f:d:o:hS:H:", opts, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'c': count = strtoull(optarg, NULL, 0); break;
		case 'f': from = strtoull(optarg, NULL, 0); break;
		case 'd': dev_name = optarg; break;
		case 'o': only = optarg; break;
		case 'S':
			if (!strcmp(optarg, "post")) {
				vg_set = vg_post_kinds;
				vg_nset = sizeof(vg_post_kinds) / sizeof(vg_post_kinds[0]);
			} else if (strcmp(optarg, "control")) {
				usage(stderr);
				return 2;
			}
			break;
		case 'H':
			/* an older release's header only: what this program knows
			 * of a newer one it cannot have */
			vg_headers = atoi(optarg);
			if (vg_headers < 1 || (VG_RDMA_CORE && vg_headers > VG_RDMA_CORE)) {
				fprintf(stderr, "ibvct-verbs-gen: --headers %s: built against rdma-core %d's header\n",
					optarg, VG_RDMA_CORE);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	vg_sh = mmap(NULL, sizeof(*vg_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (vg_sh == MAP_FAILED) {
		perror("ibvct-verbs-gen: mmap");
		return 1;
	}
	fflush(stdout);
	for (next = from; next < from + count;) {
		vg_sh->busy = 0;
		pid = fork();
		if (pid < 0) {
			perror("ibvct-verbs-gen: fork");
			return 1;
		}
		if (pid == 0)
			_exit(vg_work(seed, next, from + count, dev_name, only, next == from));
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st))
			return WEXITSTATUS(st);
		if (!vg_sh->busy) {
			fprintf(stderr, "ibvct-verbs-gen: killed by %s between requests\n",
				vg_signame(WTERMSIG(st)));
			return 1;
		}
		printf("%s -> crash %s\n", vg_sh->line.buf, vg_signame(WTERMSIG(st)));
		fflush(stdout);
		next = vg_sh->idx + 1;
	}
	return 0;
}
