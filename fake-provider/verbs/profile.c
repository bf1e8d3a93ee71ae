/* SPDX-License-Identifier: MIT */
/*
 * Driver profiles: what the fake provider decides as the driver it plays
 * (script `profile strict|mlx5|mlx4|rxe|ixrc`) where the spec leaves room or
 * where that driver deviates from it. Each function answers one question a
 * provider op asks before or after its common path; strict is the spec.
 * Every difference is cited, with its source, in fixtures/profiles/README.md;
 * the line that decides a rule carries its `@rule` marker.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "fp_verbs.h"

static enum fp_profile fp_prof(void)
{
	return fp__script->profile;
}

/* x rounded up to a power of two (x >= 1), as the drivers size queues. */
static uint32_t fp_pow2(uint32_t x)
{
	uint32_t p = 1;

	while (p < x && p < (1u << 31))
		p <<= 1;
	return p;
}

bool fp_prof_srq_basic_path(const struct ibv_srq_init_attr_ex *a)
{
	/* mlx5_create_srq_ex / mlx4_create_srq_ex: without the TYPE bit, or with
	 * type BASIC, the request goes to the driver's create_srq, which never
	 * sees comp_mask: no reserved-bit check, no PD-bit check. */
	if (fp_prof() != FP_PROF_MLX5 && fp_prof() != FP_PROF_MLX4)
		return false;
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) || a->srq_type == IBV_SRQT_BASIC)	/* @rule SRQX-05 @driver mlx5 mlx4 */
		return true;
	return false;
}

int fp_prof_srq_type(const struct ibv_srq_init_attr_ex *a)
{
	bool typed = a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE;

	/* SRQX-07 is the kernel's (the fake kernel's SRQ create); these drivers
	 * look at the type first. mlx4_create_srq_ex: a type other than BASIC
	 * and XRC falls through to "return NULL" without setting errno
	 * (rdma-core v44.0 providers/mlx4/verbs.c:743) */
	if (fp_prof() == FP_PROF_MLX4 && typed && a->srq_type != IBV_SRQT_BASIC && a->srq_type != IBV_SRQT_XRC)	/* @rule SRQX-07 @driver mlx4 */
		return FP_PROF_NO_ERRNO;
	/* mlx5_create_srq_ex: neither XRC nor TM is EINVAL, errno set, before
	 * the command (providers/mlx5/verbs.c:3534) */
	if (fp_prof() == FP_PROF_MLX5 && typed && a->srq_type != IBV_SRQT_BASIC && a->srq_type != IBV_SRQT_XRC && a->srq_type != IBV_SRQT_TM)	/* @rule SRQX-07 @driver mlx5 */
		return EINVAL;
	return 0;
}

void fp_prof_srq_caps(uint32_t *max_wr, uint32_t *max_sge)
{
	uint32_t size;

	switch (fp_prof()) {
	case FP_PROF_MLX5:
		/* mlx5_alloc_srq_buf: tail = align_queue_size(max_wr + 1) - 1;
		 * a WQE is a 16-byte next segment plus 16 bytes a scatter entry,
		 * at least 32 bytes, rounded up to a power of two: the entries
		 * that fit are reported. */
		*max_wr = fp_pow2(*max_wr + 1) - 1;	/* SRQX-10 */
		size = 16 + 16 * *max_sge;
		size = fp_pow2(size < 32 ? 32 : size);
		*max_sge = (size - 16) / 16;
		break;
	case FP_PROF_MLX4:
		/* mlx4_create_srq: max = roundup_pow_of_two(max_wr + 1); the
		 * kernel reports max - 1 */
		*max_wr = fp_pow2(*max_wr + 1) - 1;	/* SRQX-10 */
		break;
	case FP_PROF_RXE:
		/* rxe_srq_chk_init raises max_sge to RXE_MIN_SRQ_SGE (1);
		 * rxe_queue_init makes num_slots = roundup_pow_of_two(max_wr +
		 * 1), which ibv_query_srq reports less one (creation writes
		 * back the request: fp_prof_srq_reports_queue). linux v6.1
		 * drivers/infiniband/sw/rxe/rxe_srq.c rxe_srq_chk_init,
		 * rxe_srq_from_init; seen on Debian 12's rxe0: 16 is created
		 * as 16 and queried as 31, a max_sge of 0 gives 1 */
		*max_wr = fp_pow2(*max_wr + 1) - 1;	/* SRQX-10 */
		if (*max_sge < 1)
			*max_sge = 1;
		break;
	default:
		break;
	}
}

int fp_prof_srq_limits(const struct ibv_srq_init_attr_ex *a)
{
	/* rxe_srq_chk_init: "max_wr <= 0" is EINVAL (linux v6.1
	 * drivers/infiniband/sw/rxe/rxe_srq.c; seen on Debian 12's rxe0) */
	if (fp_prof() == FP_PROF_RXE && !a->attr.max_wr)
		return EINVAL;
	/* mlx4_create_srq: its own sanity check before the command */
	if (fp_prof() == FP_PROF_MLX4 &&
	    (a->attr.max_wr > 1u << 16 || a->attr.max_sge > 64))
		return EINVAL;
	return 0;
}

bool fp_prof_srq_limit_checked(void)
{
	/* rxe_srq_chk_init looks at srq_limit only for a modify
	 * (IB_SRQ_LIMIT), never at creation (linux v6.1
	 * drivers/infiniband/sw/rxe/rxe_srq.c; seen on Debian 12's rxe0: a
	 * limit of max_wr + 1 is created) */
	return fp_prof() != FP_PROF_RXE;
}

static bool fp_prof_qp_type_known(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_UC || t == IBV_QPT_UD || t == IBV_QPT_RAW_PACKET ||
	       t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV || t == IBV_QPT_DRIVER;
}

/* The driver's own checks of create_qp_ex, before the command layer. */
int fp_prof_qp_ex_mask(const struct ibv_qp_init_attr_ex *a)
{
	uint64_t sup;
	const uint32_t mlx_sup = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	const uint32_t rxe_sup = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	const uint32_t mlx5_sup = mlx_sup | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH |
				  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

	switch (fp_prof()) {
	case FP_PROF_RXE:
		/* check_qp_init_attr, before anything else in rxe_create_qp_ex:
		 * the XRCD bit is not among rxe's bits */
		if (a->comp_mask & ~rxe_sup)		/* @rule QPX-04 @driver rxe */
			return EOPNOTSUPP;
		/* and no create flag at all (RXE_QP_CREATE_FLAGS_SUP is 0:
		 * rdma-core v44.0 providers/rxe/rxe.c:1287) */
		if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)
			return EOPNOTSUPP;
		/* and then the send_ops_flags, before the command: a type
		 * other than RC, UC, UD EOPNOTSUPP, whatever else is wrong
		 * with the request (rxe.c:1289-1310, :1370 rxe_create_qp_ex;
		 * seen on Debian 12's rxe0: type 11 or XRC_RECV with
		 * SEND_OPS_FLAGS EOPNOTSUPP, not the command's EINVAL) */
		if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
		    (fp_prof_send_ops(a->qp_type, &sup) || (a->send_ops_flags & ~sup)))
			return EOPNOTSUPP;
		break;
	case FP_PROF_MLX5:
		/* create_qp: "return NULL" without errno for a bit it lacks */
		if (a->comp_mask & ~mlx5_sup)		/* @rule QPX-04 @driver mlx5 */
			return FP_PROF_NO_ERRNO;
		/* mlx5_calc_wq_size -> sq_overhead: a type it builds no send
		 * WQE for is EINVAL, errno set, before the command
		 * (providers/mlx5/verbs.c:1570); only with a send queue
		 * (mlx5_calc_sq_size returns early when max_send_wr is 0) */
		if (a->cap.max_send_wr && !fp_prof_qp_type_known(a->qp_type))	/* @rule QPX-05 @driver mlx5 */
			return EINVAL;
		break;
	case FP_PROF_IXRC:
		/* ixrc_create_qp_ex checks the new post-send API's operations
		 * before anything else (ixrc/provider/ixrc.c
		 * ixrc_send_ops: what the kernel's ixrc_post_one carries) */
		if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
		    (fp_prof_send_ops(a->qp_type, &sup) || (a->send_ops_flags & ~sup)))
			return EOPNOTSUPP;
		break;
	case FP_PROF_MLX4:
		/* create_qp_ex: after its size checks, ENOTSUP */
		if (a->cap.max_inline_data > 1024)
			return EINVAL;
		if (a->comp_mask & ~mlx_sup)		/* @rule QPX-04 @driver mlx4 */
			return ENOTSUP;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Which command a driver's create_qp_ex sends (QPX-04): ibv_cmd_create_qp_ex
 * takes PD, XRCD, SEND_OPS_FLAGS; ibv_cmd_create_qp_ex2 CREATE_FLAGS,
 * MAX_TSO_HEADER, IND_TABLE and RX_HASH too. rxe always sends _ex2
 * (rdma-core v44.0 providers/rxe/rxe.c:1381); mlx5 when one of its
 * MLX5_CREATE_QP_EX2_COMP_MASK bits is set (providers/mlx5/verbs.c:2107,
 * :2589, :2081), mlx4 one of MLX4_CREATE_QP_EX2_COMP_MASK (CREATE_FLAGS,
 * MAX_TSO_HEADER: providers/mlx4/verbs.c:878, :992, :863); strict as mlx5,
 * so that PD|CREATE_FLAGS with no flag is taken on every target. The quirk
 * sends everything through _ex.
 */
bool fp_prof_qp_cmd_ex2(const struct ibv_qp_init_attr_ex *a)
{
	const uint32_t mlx5_ex2 = IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
				  IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
	const uint32_t mlx4_ex2 = IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER;

	if (fp__quirk(FP_Q_QP_CMD_EX_ONLY))
		return false;
	switch (fp_prof()) {
	case FP_PROF_RXE:
		return true;
	case FP_PROF_MLX4:
		return a->comp_mask & mlx4_ex2;
	case FP_PROF_IXRC:
		/* ixrc_create_qp_ex: any bit beyond PD and XRCD (ixrc.c) */
		return a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD);
	default:
		return a->comp_mask & mlx5_ex2;
	}
}

/*
 * A create flag the command layer passes (QPX-04) and the kernel takes
 * (linux v6.1 drivers/infiniband/core/uverbs_cmd.c:1430): the device's
 * driver decides, and the fake device has none of those features
 * (loopback blocking, FCS scatter, VLAN stripping, a source QPN, end
 * padding): EOPNOTSUPP, as mlx5_ib answers a flag it did not take (linux
 * v6.1 drivers/infiniband/hw/mlx5/qp.c:2998 process_create_flags) and
 * mlx4_ib one outside its set (hw/mlx4/qp.c:1531). rxe refused it before
 * (fp_prof_qp_ex_mask).
 */
int fp_prof_qp_create_flags(const struct ibv_qp_init_attr_ex *a)
{
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)
		return EOPNOTSUPP;
	return 0;
}

void fp_prof_qp_caps(struct ibv_qp_cap *cap, bool has_rq)
{
	/* rxe_qp_init_req / rxe_qp_init_resp: max_send_wr and max_recv_wr
	 * are written back as asked; the queues rxe_queue_init makes are
	 * rounded up inside, unseen (linux v6.1
	 * drivers/infiniband/sw/rxe/rxe_qp.c; seen on Debian 12's rxe0: 16
	 * gives 16, not 31) */
	uint32_t wqe;

	if (fp_prof() != FP_PROF_RXE)
		return;
	/* rxe_qp_init_req: one send WQE holds max(16 * max_send_sge,
	 * max_inline_data) bytes (16: sizeof(struct ib_sge)); both caps are
	 * written back from it */
	wqe = cap->max_send_sge * 16 > cap->max_inline_data ? cap->max_send_sge * 16
							    : cap->max_inline_data;
	cap->max_send_sge = wqe / 16;
	cap->max_inline_data = wqe;
}

void fp_prof_xrc_send_recv_caps(struct ibv_qp_cap *out, const struct ibv_qp_cap *asked,
				bool has_srq)
{
	uint32_t wqe, n;

	out->max_recv_wr = out->max_recv_sge = 0;
	/* mlx5 create_qp sizes a receive queue from the request before the
	 * command zeroes the XRC_SEND request's receive caps, and writes its
	 * sizes back after it (rdma-core v44.0 providers/mlx5/verbs.c:2623-2625;
	 * mlx5_calc_rq_size, mlx5_calc_rcv_wqe: no queue with an SRQ or
	 * max_recv_wr 0; a WQE of 16 bytes a scatter entry, rounded up to a
	 * power of two; at least 64 bytes of queue); the kernel makes none
	 * (qp_has_rq). The xrc_send_reports_recv_caps quirk does the same. */
	if ((fp_prof() != FP_PROF_MLX5 && !fp__quirk(FP_Q_XRC_SEND_REPORTS_RECV_CAPS)) ||
	    has_srq || !asked->max_recv_wr)
		return;
	wqe = fp_pow2(16 * (asked->max_recv_sge ? asked->max_recv_sge : 1));
	n = fp_pow2(asked->max_recv_wr);
	if (n * wqe < 64)
		n = 64 / wqe;
	out->max_recv_wr = n;
	out->max_recv_sge = wqe / 16;
}

int fp_prof_modify_state(enum ibv_qp_state next)
{
	/* mlx5_ib's modify table has no transition into SQD (linux v6.1
	 * drivers/infiniband/hw/mlx5/qp.c __mlx5_ib_modify_qp, optab: RTS goes
	 * to RESET, ERR, RTS only): EINVAL, after ib_modify_qp_is_ok */
	if (fp_prof() == FP_PROF_MLX5 && next == IBV_QPS_SQD)	/* @rule QPX-06 @driver mlx5 */
		return EINVAL;
	return 0;
}

bool fp_prof_wc_byte_len(const struct ibv_wc *wc, bool send_side)
{
	/* mlx5 handle_good_req and mlx4's poll write byte_len of a send-side
	 * completion for RDMA READ and atomics only (rdma-core v44.0
	 * providers/mlx5/cq.c:167-190, providers/mlx4/cq.c:128-142): for a SEND
	 * or an RDMA WRITE the caller's field is left as it was (ibv_poll_cq.3
	 * defines byte_len there for those alone) */
	if ((fp_prof() == FP_PROF_MLX5 || fp_prof() == FP_PROF_MLX4) && send_side &&
	    wc->status == IBV_WC_SUCCESS &&
	    (wc->opcode == IBV_WC_SEND || wc->opcode == IBV_WC_RDMA_WRITE))
		return false;
	return true;
}

bool fp_prof_mw_bind_access(void)
{
	/* MW-02: mlx5 lets a window be bound to a region registered without
	 * IBV_ACCESS_MW_BIND. The provider's check sits under MW_DEBUG, which
	 * no build defines (rdma-core v44.0 providers/mlx5/qp.c:606
	 * set_bind_wr), and the HCA has nothing to check: the mkey context
	 * the kernel writes holds the remote and local access bits only
	 * (linux v6.1 drivers/infiniband/hw/mlx5/mr.c
	 * set_mkc_access_pd_addr_fields). Known deviation. */
	if (fp_prof() == FP_PROF_MLX5)	/* @rule MW-02 @driver mlx5 */
		return false;
	return true;
}

/*
 * mlx5 gives each QP it creates a BlueFlame register for its doorbell
 * (rdma-core v44.0 providers/mlx5/verbs.c:2569 create_qp, :362
 * mlx5_get_qp_uar): the head of the context's list of free dedicated
 * registers; when that is empty and fewer than qp_max_dedicated_uuars were
 * made (the low-latency count, 4 unless MLX5_NUM_LOW_LAT_UUARS says
 * otherwise: providers/mlx5/mlx5.c:691 get_num_low_lat_uuars, :2478), a
 * new UAR page is allocated and mapped on the device file (verbs.c:249-256
 * mlx5_alloc_dyn_uar) and its registers queued, two to a 4 KiB page, the
 * first one holding the mapping (:273 mlx5_insert_dyn_uuars); past that the
 * QP shares a register. A destroy queues the register again at the tail
 * (:330 mlx5_put_qp_uar); an opened QP takes none (:3372 mlx5_open_qp).
 * The register: 2 * page + index, or -1.
 */
int fp_prof_qp_uar_get(struct fp_context *ctx)
{
	struct fp_prof_bfregs *b = &ctx->bfregs;
	int r;

	if (fp_prof() != FP_PROF_MLX5)
		return -1;
	if (!b->n && b->made < FP_PROF_DED_BFREGS) {
		b->free[(b->head + b->n++) % FP_PROF_DED_BFREGS] = (int8_t)b->made++;
		b->free[(b->head + b->n++) % FP_PROF_DED_BFREGS] = (int8_t)b->made++;
	}
	if (!b->n)
		return -1;
	r = b->free[b->head];
	b->head = (b->head + 1) % FP_PROF_DED_BFREGS;
	b->n--;
	return r;
}

void fp_prof_qp_uar_put(struct fp_context *ctx, int bfreg)
{
	struct fp_prof_bfregs *b = &ctx->bfregs;

	if (bfreg < 0 || b->n >= FP_PROF_DED_BFREGS)
		return;
	b->free[(b->head + b->n++) % FP_PROF_DED_BFREGS] = (int8_t)bfreg;
}

/*
 * ibv_close_device on mlx5 unmaps the UAR pages of the registers on the
 * context's lists only (providers/mlx5/mlx5.c:2685 mlx5_free_context,
 * verbs.c:5921 clean_dyn_uars, :174 mlx5_free_uar): a page whose first
 * register a QP left in the context holds stays mapped on the device file.
 * The kernel releases a uverbs file at its last reference, here the
 * mapping's, at process exit; until then it keeps every object of the
 * context: a TGT QP left in it is not destroyed (LIFE-04) and its XRCD
 * handle not released (XRCD-17). The fake kernel's connection is kept
 * the same way (fk_keep).
 */
bool fp_prof_close_keeps_context(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	if (fp_prof() != FP_PROF_MLX5)
		return false;
	fp_list_for_each_safe(p, t, &ctx->qps) {
		const struct fp_qp *h = fp_container_of(p, struct fp_qp, link);

		if (h->bfreg >= 0 && h->bfreg % 2 == 0)
			return true;
	}
	return false;
}

/*
 * mlx5_destroy_qp of a QP that ibv_open_qp gave (providers/mlx5/verbs.c:2791):
 * after the kernel destroyed the handle it frees the doorbell record the
 * opened QP never had, mlx5_free_db(ctx, NULL, ...). Looking up page 0 in the
 * context's map finds no page and returns the map's sentinel
 * (providers/mlx5/dbrec.c:162; the assert at :164 is compiled out by the
 * release build's NDEBUG), which is then used as a page: the bit index is
 * computed from bytes of the mutex beside the map, and the write at :168
 * lands far outside the context. The process dies of SIGSEGV, as here;
 * still so on rdma-core's master (verbs.c mlx5_destroy_qp, dbrec.c
 * mlx5_free_db). README.md, "Findings".
 */
void fp_prof_destroy_opened_qp(void)
{
	if (fp_prof() != FP_PROF_MLX5)
		return;
	raise(SIGSEGV);
	abort();		/* a handler that returned: the real fault would repeat */
}

int fp_prof_srq_num(enum ibv_srq_type type)
{
	/* mlx4_get_srq_num: EOPNOTSUPP for an SRQ without an XRC domain, and
	 * ixrc_get_srq_num too (ixrc/provider/ixrc.c: the kernel
	 * answers a basic SRQ's create with no number, linux v6.1
	 * drivers/infiniband/core/uverbs_cmd.c:3453 __uverbs_create_xsrq); rxe
	 * has no get_srq_num op at all (the core's stub answers EOPNOTSUPP);
	 * mlx5_get_srq_num answers for every SRQ, as strict does */
	if (fp_prof() == FP_PROF_RXE || (fp_prof() == FP_PROF_MLX4 && type != IBV_SRQT_XRC))	/* @rule SRQX-12 */
		return EOPNOTSUPP;
	/* no rule site: only the agreement with ixrc0 (tools/vm/t6111) plays ixrc */
	if (fp_prof() == FP_PROF_IXRC && type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	return 0;
}

unsigned int fp_prof_cap_flags(unsigned int flags)
{
	/* rxe never sets IB_DEVICE_XRC (fixtures/profiles/README.md); the
	 * quirk's rxe keeps it, and with it working XRC verbs */
	if (fp_prof() == FP_PROF_RXE && !fp__quirk(FP_Q_RXE_HAS_XRC))	/* @rule COMPAT-20 @driver rxe */
		flags &= ~(unsigned int)IBV_DEVICE_XRC;
	return flags;
}

/*
 * The new post-send API (send_ops_flags at create): which QP types build
 * WRs through it and which operations each carries. mlx5 (and strict, which
 * follows it): rdma-core v44.0 providers/mlx5/qp.c:3444 the sets, :3552
 * mlx5_qp_fill_wr_pfns (XRC_SEND takes the RC set, :3623; XRC_RECV and any
 * other type fall to `default: EOPNOTSUPP`, :3672); rxe: providers/rxe/rxe.c:1263
 * the sets, :1280 check_qp_init_attr (no XRC), and since v45 IBV_QP_EX_WITH_FLUSH
 * in its RC set (v56.1 rxe.c:1276-1282; ibvct-release.def WR_FLUSH). mlx4
 * refuses the mask bit itself (fp_prof_qp_ex_mask). The kernel never sees
 * the flags.
 */
int fp_prof_send_ops(enum ibv_qp_type type, uint64_t *sup)
{
	/* ixrc: what its kernel's ixrc_post_one carries (RC and XRC_SEND
	 * sends, writes, read, atomics; UC sends and writes; UD sends), no
	 * invalidation, window or atomic write (ixrc/provider/ixrc.c
	 * ixrc_send_ops, ixrc_data.c ixrc_post_one) */
	const uint64_t ixrc_uc = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	const uint64_t ixrc_rc = ixrc_uc | IBV_QP_EX_WITH_RDMA_READ |
				 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	const uint64_t rc = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
			    IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
			    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_BIND_MW;
	const uint64_t uc = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
			    IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_BIND_MW;
	const uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	bool rxe = fp_prof() == FP_PROF_RXE, ixrc = fp_prof() == FP_PROF_IXRC;

	switch (type) {
	case IBV_QPT_RC:
		if (ixrc) {
			*sup = ixrc_rc;
			return 0;
		}
		/* rxe's RC set adds ATOMIC_WRITE (rxe.c:1269), and FLUSH in 56 */
		*sup = rxe ? rc | IBV_QP_EX_WITH_ATOMIC_WRITE : rc;
		if (rxe && ibvct_release_is_56(IBVCT_REL_WR_FLUSH))
			*sup |= IBV_QP_EX_WITH_FLUSH;
		return 0;
	case IBV_QPT_UC:
		if (ixrc) {
			*sup = ixrc_uc;
			return 0;
		}
		*sup = rxe ? uc & ~(uint64_t)IBV_QP_EX_WITH_LOCAL_INV : uc;
		return 0;
	case IBV_QPT_UD:
		*sup = ud;
		return 0;
	case IBV_QPT_XRC_SEND:
		if (rxe)
			return EOPNOTSUPP;		/* @rule WRX-02 @driver rxe */
		*sup = ixrc ? ixrc_rc : rc;
		return 0;
	default:
		return EOPNOTSUPP;			/* @rule WRX-02 */
	}
}

/*
 * The extension ops a driver does not have (its ops table leaves them to
 * libibverbs' EOPNOTSUPP): rxe has no rereg_mr, thread or parent domains
 * (rdma-core v44.0 providers/rxe/rxe.c:1803 rxe_ctx_ops) nor query_rt_values;
 * mlx4 no thread or parent domains (providers/mlx4/mlx4.c:86 mlx4_ctx_ops);
 * ixrc none of them but the new post-send API and extended CQs
 * (ixrc/provider/ixrc.c ixrc_ctx_ops).
 */
bool fp_prof_lacks(unsigned x)
{
	switch (fp_prof()) {
	case FP_PROF_RXE:
		return x & (FP_X_REREG_MR | FP_X_PARENT_DOMAIN | FP_X_QUERY_RT_VALUES);
	case FP_PROF_MLX4:
		return x & FP_X_PARENT_DOMAIN;
	case FP_PROF_IXRC:
		/* ixrc_ctx_ops: the generic commands, query_device_ex, the new
		 * post-send API and create_cq_ex (ixrc/provider/ixrc.c) */
		return x & (FP_X_REREG_MR | FP_X_MW | FP_X_PARENT_DOMAIN | FP_X_QUERY_RT_VALUES);
	default:
		return false;
	}
}

/*
 * The completion clock the driver reports (CQX-06): its rate in kHz (0:
 * none) and the mask of a completion timestamp. The kernel answers both in
 * the extended device query; which it answers is the driver's:
 * - mlx5: always a clock, the firmware's device_frequency_khz, mask
 *   0x7fffffffffffffff (linux v6.1 drivers/infiniband/hw/mlx5/main.c
 *   mlx5_ib_query_device); the CQE carries a 64-bit timestamp (rdma-core
 *   v44.0 providers/mlx5/cq.c:1581);
 * - mlx4: always a mask, 0xffffffffffff (linux v6.1
 *   drivers/infiniband/hw/mlx4/main.c mlx4_ib_query_device), the CQE's 48
 *   timestamp bits (rdma-core v44.0 providers/mlx4/cq.c:600);
 * - rxe: none (rdma-core v44.0 providers/rxe/rxe.c:67 rxe_query_device
 *   passes the kernel's answer on, and rxe's device attributes set neither
 *   field: linux v6.1 drivers/infiniband/sw/rxe/rxe.c rxe_init_device_param);
 * - strict: the script's `clock` line, or none.
 * The rate is a property of the device (its firmware), not of the driver:
 * the script's, else FP_PROF_CLOCK_KHZ for the drivers that always have one.
 */
#define FP_PROF_CLOCK_KHZ	1000000ULL	/* 1 GHz: a tick a nanosecond */

uint64_t fp_prof_clock(const struct fp_dev_spec *d, uint64_t *mask)
{
	uint64_t khz = d->clock_khz ? d->clock_khz : FP_PROF_CLOCK_KHZ, m;

	switch (fp_prof()) {
	case FP_PROF_MLX5:
		m = 0x7fffffffffffffffULL;
		break;
	case FP_PROF_MLX4:
		m = 0xffffffffffffULL;
		break;
	case FP_PROF_RXE:
	case FP_PROF_IXRC:	/* ixrc_query_device: no hca_core_clock (ixrc_main.c) */
		khz = m = 0;
		break;
	default:
		khz = d->clock_khz;
		m = d->clock_mask;
		break;
	}
	if (mask)
		*mask = khz ? m : 0;
	return khz;	/* @rule CQX-06 @driver mlx5 mlx4 */
}

/*
 * The wc_flags a driver's create_cq_ex takes beyond the standard fields:
 * the completion timestamp where there is a clock (mlx5
 * CREATE_CQ_SUPPORTED_WC_FLAGS, rdma-core v44.0 providers/mlx5/verbs.c:920;
 * mlx4, providers/mlx4/verbs.c:414; rxe has neither, providers/rxe/rxe.c:406).
 * No wallclock: mlx5 converts a timestamp to nanoseconds through the
 * kernel's clock info page and refuses the flag without one
 * (providers/mlx5/cq.c:1718: EOPNOTSUPP), which the fake device does not
 * have; mlx4 never takes it.
 */
uint64_t fp_prof_cq_wc_flags(const struct fp_dev_spec *d)
{
	uint64_t flags = IBV_WC_STANDARD_FLAGS;

	if (fp_prof_clock(d, NULL))	/* @rule CQX-06 */
		flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	return flags;
}

/*
 * The order of create_cq_ex's checks. rxe_create_cq_ex refuses a wc_flags
 * bit beyond RXE_SUP_WC_EX_FLAGS with EOPNOTSUPP before anything else
 * (rdma-core v44.0 providers/rxe/rxe.c:407 the set, :418-430), then
 * ibv_cmd_create_cq_ex returns EOPNOTSUPP for a comp_mask bit beyond
 * FLAGS|PD without setting errno, which rxe passes on as it found it
 * (libibverbs/cmd_cq.c:158-161; rxe.c:439, :496), and reads no
 * flag but IGNORE_OVERRUN (cmd_cq.c:167); the CQE count is the kernel's,
 * EINVAL for 0 (linux v6.1 drivers/infiniband/sw/rxe/rxe_cq.c
 * rxe_cq_chk_attr: cqe <= 0). Seen on Debian 12's rxe0 (ibvct-verbs-gen
 * seed 1): cqe 0 with a timestamp bit EOPNOTSUPP, an unknown comp_mask
 * errno 0, flags 0x10 taken. The others check cqe, comp_mask and flags
 * first, EINVAL (mlx5: providers/mlx5/verbs.c:964 create_cq).
 */
bool fp_prof_cq_ex_wc_first(void)
{
	/* CQX-01; no rule site: no suite verdict turns on the order */
	return fp_prof() == FP_PROF_RXE;
}

/* mlx4 cannot give SLID and SL with a timestamp (its CQE holds the
 * timestamp's bits there): ENOTSUP (rdma-core v44.0
 * providers/mlx4/verbs.c:504). */
int fp_prof_cq_wc_combo(uint64_t wc_flags)
{
	if (fp_prof() == FP_PROF_MLX4 && (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) &&
	    (wc_flags & (IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL)))
		return ENOTSUP;
	return 0;
}

/*
 * The CQ size written back into cq->cqe (at least what was asked,
 * ibv_create_cq.3). rxe: the kernel makes the queue with rxe_queue_init,
 * which rounds cqe + 1 slots up to a power of two and reports the slots
 * less one; the command's response carries it into cq->cqe, for a new CQ
 * and a resized one (linux v6.1 drivers/infiniband/sw/rxe/rxe_cq.c
 * rxe_cq_from_init, rxe_cq_resize_queue; rxe_queue.c rxe_queue_init;
 * rdma-core v44.0 providers/rxe/rxe.c:365 rxe_create_cq). Seen on Debian
 * 12's rxe0: cqe 100 gives 127 (ibvct-verbs-gen through ibvct run
 * --compare).
 */
int fp_prof_cq_size(int cqe)
{
	if (fp_prof() == FP_PROF_RXE)
		return (int)(fp_pow2((uint32_t)cqe + 1) - 1);
	return cqe;
}

/* The receive caps written back for an RC, UC or UD QP on an SRQ, which
 * has no receive queue of its own: 0 (strict, mlx5, mlx4), or under rxe
 * the request as it was: rxe_qp_init_resp makes no queue and leaves the
 * init attributes alone, which uverbs copies into the reply (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_qp.c rxe_qp_init_resp; seen on Debian 12's
 * rxe0: an SRQ QP asking 16 and 3 reports 16 and 3). */
void fp_prof_srq_qp_recv_caps(struct ibv_qp_cap *out, const struct ibv_qp_cap *asked)
{
	if (fp_prof() != FP_PROF_RXE)
		return;
	out->max_recv_wr = asked->max_recv_wr;
	out->max_recv_sge = asked->max_recv_sge;
}

/* rxe's creation writes back max_wr as asked, not its queue's (which
 * ibv_query_srq reports): rxe_srq_from_init sizes the queue from a copy
 * (linux v6.1 drivers/infiniband/sw/rxe/rxe_srq.c; seen on Debian 12's
 * rxe0, 16 created, 31 queried). */
bool fp_prof_srq_reports_queue(void)
{
	return fp_prof() != FP_PROF_RXE;
}

/* rxe never looks a QP's P_Key index up: rxe_qp_chk_attr checks the port
 * alone, and the core leaves the index to the driver (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_qp.c rxe_qp_chk_attr; seen on Debian 12's
 * rxe0: RESET -> INIT with pkey_index 1 of a table of one is taken). */
bool fp_prof_pkey_index_checked(void)
{
	return fp_prof() != FP_PROF_RXE;
}

/*
 * rxe makes each work queue as one vmalloc_user buffer of
 * roundup_pow_of_two(max_wr + 1) slots of a power-of-two element (linux
 * v6.1 drivers/infiniband/sw/rxe/rxe_queue.c rxe_queue_init): a send WQE
 * of struct rxe_send_wqe (its UD address vector inside, about 224 bytes)
 * and max(16 * max_send_sge, max_inline_data) bytes (rxe_qp.c
 * rxe_qp_init_req, include/uapi/rdma/rdma_user_rxe.h), a receive WQE of 32
 * bytes and 16 a scatter entry (rxe_qp_init_resp, rxe_srq.c
 * rxe_srq_from_init). Where the buffer cannot be had the create is ENOMEM:
 * in the rxe-vm guest (1 GiB) a send queue of max_qp_wr WQEs of one
 * scatter entry (512 MiB) is made and one of four (1 GiB) is not, so past
 * FP_PROF_RXE_QUEUE_MAX.
 */
#define FP_PROF_RXE_QUEUE_MAX	(512ULL << 20)

static bool fp_prof_rxe_queue_fits(uint32_t max_wr, uint32_t elem)
{
	return (uint64_t)fp_pow2(max_wr + 1) * fp_pow2(elem) <= FP_PROF_RXE_QUEUE_MAX;
}

int fp_prof_qp_mem(const struct ibv_qp_cap *cap, bool has_rq)
{
	uint32_t send = cap->max_send_sge * 16 > cap->max_inline_data ? cap->max_send_sge * 16
								  : cap->max_inline_data;

	if (fp_prof() != FP_PROF_RXE)
		return 0;
	if (!fp_prof_rxe_queue_fits(cap->max_send_wr, 224 + send) ||
	    (has_rq && !fp_prof_rxe_queue_fits(cap->max_recv_wr, 32 + 16 * cap->max_recv_sge)))
		return ENOMEM;
	return 0;
}

int fp_prof_srq_mem(uint32_t max_wr, uint32_t max_sge)
{
	if (fp_prof() == FP_PROF_RXE && !fp_prof_rxe_queue_fits(max_wr, 32 + 16 * max_sge))
		return ENOMEM;
	return 0;
}

/* rxe_qp_chk_attr: a path MTU above the port's max_mtu is EINVAL; it
 * compares the enums, so 0 passes and 6 does not (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_qp.c; seen on Debian 12's rxe0). */
int fp_prof_modify_attrs(const struct ibv_port_attr *port, const struct ibv_qp_attr *attr,
			 int mask)
{
	if (fp_prof() == FP_PROF_RXE && (mask & IBV_QP_PATH_MTU) &&
	    (unsigned)attr->path_mtu > (unsigned)port->max_mtu)
		return EINVAL;
	return 0;
}

/*
 * rxe's data path where it deviates from the spec (fixtures/expect/rxe.txt
 * names the tests; fixtures/profiles/README.md the table). Sources: linux
 * v6.1 drivers/infiniband/sw/rxe, rdma-core v44.0 providers/rxe/rxe.c.
 */

/* rxe_bind_mw: the bind WR carries the key the application holds in
 * mw->rkey (rxe.c:193 ibv_bind_mw, :854 wr_bind_mw, :1519 post_send), and
 * the kernel refuses it unless that is the window's current key
 * (rxe_mw.c:180): a completion in error (IBV_WC_MW_BIND_ERR). mlx5 and
 * strict take the new key alone. No rule site: the suites keep the key as
 * ibv_bind_mw.3 asks (MW-02, MW-04), so no verdict turns on it. */
bool fp_prof_mw_bind_key_checked(void)
{
	return fp_prof() == FP_PROF_RXE;
}

/* A bind WR is checked as rxe's kernel checks it (mw.c
 * fp_mw_bind_check_rxe: linux v6.1 drivers/infiniband/sw/rxe/rxe_mw.c
 * rxe_check_bind_mw): a type 2 bind of length 0 is MW_BIND_ERR, a
 * zero-based type 2 window is taken with its length within the region's.
 * No rule site: the suites bind no zero-based or empty type 2 window. */
bool fp_prof_mw_bind_rxe(void)
{
	return fp_prof() == FP_PROF_RXE;
}

/* rxe on Linux 6.12: a bind compares every window's PD and the region's
 * with the QP's (ibvct-release.def MW_BIND_PD; verbs/mw.c). */
bool fp_prof_mw_bind_pd_checked(void)
{
	return fp_prof() == FP_PROF_RXE && ibvct_release_is_56(IBVCT_REL_MW_BIND_PD);
}

/* check_rkey: a request through a window is checked against the range of
 * the window's region, not of the window (rxe_resp.c:485 mr = mw->mr,
 * :508 mr_check_range): the whole region is reachable by the window's key.
 * Known deviation (MW-03). */
bool fp_prof_mw_range_is_the_region(void)
{
	return fp_prof() == FP_PROF_RXE;	/* @rule MW-03 @driver rxe */
}

/* The receive completion's flag for an invalidation: rxe's do_complete
 * writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2) into the CQE it hands
 * user space (rxe_resp.c:997), and rxe_poll_cq copies it as it is
 * (rxe.c:569): the application reads IBV_WC_IP_CSUM_OK (1 << 2), never
 * IBV_WC_WITH_INV (1 << 3). Known deviation (MW-05). No rule site: on rxe
 * the test fails anyway, at the step it must not send there (testkit/runner/th.c
 * th_crash_guard), so no verdict turns on this alone. */
unsigned int fp_prof_wc_with_inv(void)
{
	if (fp_prof() == FP_PROF_RXE)
		return IBV_WC_IP_CSUM_OK;
	return IBV_WC_WITH_INV;
}

/* A retry of the send queue (an RNR NAK's timer, a retransmission) runs
 * again every WQE from the oldest unacknowledged one: req_retry rewinds
 * req.wqe_index (rxe_req.c:52), and rxe_requester runs a local WQE it meets
 * with no look at its state (:703 rxe_do_local_ops). A bind already done
 * runs a second time with the key it was posted with, no longer the
 * window's (rxe_mw.c:180), and fails: the requester is in error (:838),
 * and in error it sends nothing but flushes of WQEs not yet started (:644),
 * so the RNR-NAKed WQE ahead, waiting for its retry, never goes again and
 * nothing behind it completes. Known deviation (MW-07). */
bool fp_prof_retry_reruns_binds(void)
{
	return fp_prof() == FP_PROF_RXE;	/* @rule MW-07 @driver rxe */
}

/* A SEND (RC, UC) longer than the receive WQE: rxe's copy_data answers
 * -EINVAL (linux v6.1 drivers/infiniband/sw/rxe/rxe_mr.c:383, length >
 * resid), and send_data_in takes only -ENOSPC for a length error
 * (rxe_resp.c:556), so the receive is "malformed": class A, the remote
 * operational error NAK (rxe_resp.c:1439), the receive completed
 * IB_WC_LOC_QP_OP_ERR, the sender's WQE IB_WC_REM_OP_ERR (rxe_comp.c:324);
 * the spec's invalid request NAK (IBA vol 1 9.7.5.2.2) never comes. The
 * same in v6.12. Known deviation (HOST-11). */
bool fp_prof_send_too_long_is_op_err(void)
{
	return fp_prof() == FP_PROF_RXE;	/* @rule HOST-11 @driver rxe */
}

/* Extended CQ polling: cq_next_poll, finding no more, stores the consumer
 * index past the last CQE itself, and cq_end_poll, which ibv_create_cq_ex.3
 * says to call after that ENOENT too, advances it once more
 * (rxe.c:264-291): the consumer runs one past the producer. The next
 * start_poll then finds the queue "not empty" and reads the stale slot
 * past the last CQE (rxe.c:242), or, once the producer reaches it, skips
 * the CQE written there. Fixed after v44 (rdma-core b78b414e0, "rxe: fix
 * completion queue consumer index overrun", v55.0: Debian 13's 56 has
 * the fix, ibvct-release.def CQ_EX_POLL_OVERRUN). Known deviation (CQX-03). */
bool fp_prof_cq_poll_overrun(void)
{
	bool fixed = ibvct_release_is_56(IBVCT_REL_CQ_EX_POLL_OVERRUN);

	return fp_prof() == FP_PROF_RXE && !fixed;	/* @rule CQX-03 @driver rxe */
}

/* ibv_wr_set_inline_data_list: rxe's builder copies the buffers but never
 * adds their lengths up (rxe.c:1070-1099): each buffer is checked alone
 * against max_inline_data, and the WQE's length is 0, so the WR carries no
 * data. ibv_wr_set_inline_data (one buffer) is right. Fixed after v44
 * (rdma-core 1e8ed0aff). Known deviation (WRX-06, WRX-07). */
bool fp_prof_inline_list_unsummed(void)
{
	return fp_prof() == FP_PROF_RXE;	/* @rule WRX-06 WRX-07 @driver rxe */
}

/* The errno a builder records when it cannot take its WR (a full send
 * queue, a longer SGE list or more inline data than the QP takes): mlx5
 * ENOMEM (providers/mlx5/qp.c:1244, :1707, :1848), rxe ENOSPC
 * (rdma-core v44.0 providers/rxe/rxe_queue.h:198 check_qp_queue_full,
 * providers/rxe/rxe.c:1061, :1087, :1134; seen on rxe0 in the rxe-vm
 * guest). The spec allows either (WRX-04 names ENOMEM; the suite notes
 * another errno as upstream leaving it open). */
int fp_prof_wrx_full_errno(void)
{
	return fp_prof() == FP_PROF_RXE ? ENOSPC : ENOMEM;
}

/*
 * A misaligned atomic (RDMA-07): rxe's ibv_post_send refuses one whose
 * remote address is not 8-byte aligned before it queues anything (rdma-core
 * v44.0 providers/rxe/rxe.c:1450-1453 validate_send_wr: EINVAL, bad_wr;
 * seen on Debian 12's rxe0), but its new post-send API's builders take it
 * (rxe.c:788-832 wr_atomic_cmp_swp, wr_atomic_fetch_add) and the kernel's
 * responder NAKs it. mlx5 and mlx4 build it whatever its address
 * (providers/mlx5/qp.c:247 set_atomic_seg, providers/mlx4/qp.c:163), for
 * the HCA's responder to answer, as strict does.
 */
bool fp_prof_post_refuses_misaligned_atomic(const struct fp_swr *s)
{
	return fp_prof() == FP_PROF_RXE && s->remote_addr % 8 &&
	       (s->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		s->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD);
}

/*
 * Sharing a context (ibv_import_device, ibv_import_pd, ibv_import_mr and
 * the unimports). In rdma-core v44.0 one driver has the ops: mlx5
 * (providers/mlx5/mlx5.c:2722 .import_context = mlx5_import_context, and
 * :154-155, :172-173 import_mr, import_pd, unimport_mr, unimport_pd in
 * mlx5_ctx_common_ops). mlx4 (providers/mlx4/mlx4.c) and rxe
 * (providers/rxe/rxe.c) have none, so libibverbs answers EOPNOTSUPP:
 * ibv_import_device for a file of theirs (libibverbs/device.c:404), the
 * others from its stubs (libibverbs/dummy_ops.c:298-310). ixrc: ibvct's
 * own rdma-core provider of its XRC module (ixrc/provider)
 * has them; strict, the spec, has them.
 */
bool fp_prof_can_import(void)
{
	return fp_prof() != FP_PROF_MLX4 && fp_prof() != FP_PROF_RXE;
}

/* ---- the release the core plays (ref-impl's ibvct-release.def) ----------- */

/*
 * The kernel the device's daemon plays and the device's flush capability
 * (uapi/proto.h FK_HELLO_*): Linux 6.12 with Debian 13's rdma-core
 * (MR_ACCESS_CHECK), where rxe has IB_DEVICE_FLUSH_GLOBAL and _PERSISTENT
 * (linux v6.12 drivers/infiniband/sw/rxe/rxe_param.h:54-55; WR_FLUSH).
 */
unsigned fp_prof_kernel_flags(void)
{
	unsigned f = 0;

	if (ibvct_release_is_56(IBVCT_REL_MR_ACCESS_CHECK))
		f |= FK_HELLO_LINUX_6_12;
	if (fp_prof() == FP_PROF_RXE && ibvct_release_is_56(IBVCT_REL_WR_FLUSH))
		f |= FK_HELLO_DEV_FLUSH;
	return f;
}

/*
 * device_cap_flags_ex past the 32 bits of ibv_device_attr: rxe on Linux
 * 6.12 adds IB_UVERBS_DEVICE_FLUSH_GLOBAL, _PERSISTENT and ATOMIC_WRITE
 * (bits 38, 39, 40: linux v6.12 include/uapi/rdma/ib_user_verbs.h:1351-1354,
 * rxe_param.h:54-58); 6.1's rxe has none of them.
 */
uint64_t fp_prof_cap_flags_ex(uint64_t flags)
{
	if (fp_prof() == FP_PROF_RXE && ibvct_release_is_56(IBVCT_REL_WR_FLUSH))
		flags |= 1ULL << 38 | 1ULL << 39 | 1ULL << 40;
	return flags;
}

/* Whether a WQE rxe's requester fails completes flushed, its own status
 * lost (engine: fe_qp's req_err_flushes): the kernel's rxe of Linux 6.12
 * (ibvct-release.def REQ_ERROR_FLUSHES). */
bool fp_prof_req_err_flushes(void)
{
	return fp_prof() == FP_PROF_RXE && ibvct_release_is_56(IBVCT_REL_REQ_ERROR_FLUSHES);
}

/* Whether the HCA executes ATOMIC_WRITE and FLUSH WQEs (engine: fe_qp's
 * ext_ops): rxe on Linux 6.12 (ATOMIC_WRITE, WR_FLUSH); on 6.1 they
 * complete with IBV_WC_LOC_QP_OP_ERR. Only rxe's builders make them. */
bool fp_prof_ext_ops(void)
{
	return fp_prof() == FP_PROF_RXE && ibvct_release_is_56(IBVCT_REL_ATOMIC_WRITE);
}

/*
 * ibv_query_qp_data_in_order (DATA_IN_ORDER_FLAGS): mlx5 on a device with
 * qp_data_in_order_cap (the fake HCA places each message whole, in order)
 * answers for a QP in RTS: rdma-core v44.0 providers/mlx5/verbs.c:2820 1,
 * and 0 for any flag; v56.1 :2930 IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG
 * whatever the flags. The other drivers have no op: libibverbs' 0
 * (rxe.c, mlx4.c; dummy_ops.c:400).
 */
int fp_prof_data_in_order(enum ibv_qp_state state, uint32_t flags)
{
	if (fp_prof() != FP_PROF_MLX5 || state != IBV_QPS_RTS)
		return 0;
	if (!ibvct_release_is_56(IBVCT_REL_DATA_IN_ORDER_FLAGS))
		return flags ? 0 : 1;
	return IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG;
}

/* The engine's rxe rules (fp_engine.h fe_qp.rxe_rules): Linux rxe's data
 * path where it is its own, each rule cited where the engine applies it. */
bool fp_prof_rxe_rules(void)
{
	return fp_prof() == FP_PROF_RXE;
}

/* A LOCAL_INV the HCA cannot do: rxe completes it with LOC_QP_OP_ERR
 * (linux v6.1 drivers/infiniband/sw/rxe/rxe_req.c rxe_do_local_ops), mlx5
 * with its UMR's error, MW_BIND_ERR. */
enum ibv_wc_status fp_prof_local_inv_err(void)
{
	return fp_prof() == FP_PROF_RXE ? IBV_WC_LOC_QP_OP_ERR : IBV_WC_MW_BIND_ERR;
}

/* ibv_wr_set_sge_list on rxe: the WR's length is the first SGE's length
 * times their number (rdma-core v44.0 and v56.1 providers/rxe/rxe.c
 * wr_set_sge_list adds sg_list->length without moving on; fixed by
 * 406cd2ad0, after 56). The data is gathered from the SGEs in order for
 * that length. */
bool fp_prof_sge_list_first_length(void)
{
	return fp_prof() == FP_PROF_RXE;
}

/* ibv_wr_set_inline_data(_list) on rxe puts the data in the WQE but leaves
 * IBV_SEND_INLINE to the application's wr_flags (rxe.c wr_set_inline_data:
 * the builders copy wr_flags); without it the kernel reads the WQE as a
 * list of SGEs that are the data's bytes and fails it (linux v6.1 rxe_req.c
 * finish_packet, copy_data: LOC_QP_OP_ERR). */
bool fp_prof_inline_needs_flag(void)
{
	return fp_prof() == FP_PROF_RXE;
}
