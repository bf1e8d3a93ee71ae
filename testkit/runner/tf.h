/* SPDX-License-Identifier: MIT */
/*
 * tf_: the fixtures of every C test, on the public verbs API only (no
 * ref-impl or fake-provider internals), so that one source serves the
 * suites of both targets (ref: our verbs.h; system: the distribution's,
 * also in the guests on rxe and ixrc) and the unit tests of ref-impl and
 * the fake provider: the device, the QP state walk with the spec's
 * section 3b masks, a connected pair at RTS, XRC domains and their QPs and
 * SRQs with the portable settings (spec 3a). The functions return what the
 * verbs return (0 or an errno; NULL with errno) and never end the test, so
 * that each caller checks them its own way: assert_* in the test's
 * process, TR_EXPECT/TR_ASSERT in any other (tr.h). The suites know them
 * under their th_ names (th.h).
 */
#ifndef TF_H
#define TF_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "tr.h"

/* ---- devices ------------------------------------------------------------- */
/* The device called name (NULL: the first listed), opened; NULL with errno
 * (ENODEV: none such). *ndev, unless NULL: how many devices are listed. */
struct ibv_context *tf_open_dev(const char *name, int *ndev);

/* ---- XRC domains, QPs and SRQs (NULL with errno) --------------------------- */
struct ibv_xrcd *tf_xrcd(struct ibv_context *ctx, int fd, int oflags);
/* An XRC SRQ with the portable settings (spec 3a). */
struct ibv_srq *tf_xsrq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			struct ibv_cq *cq, uint32_t max_wr);
/* An XRC target QP (XRC_RECV) of the domain. */
struct ibv_qp *tf_tgt_qp(struct ibv_context *ctx, struct ibv_xrcd *xrcd);
/* ibv_open_qp with all four mask bits, qp_context 0x5151. */
struct ibv_qp *tf_open_tgt(struct ibv_context *ctx, struct ibv_xrcd *xrcd, uint32_t qpn);
/* XRC_SEND with mask PD, send CQ cq, 16 send WRs. */
struct ibv_qp *tf_ini_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq);
/* RC/UC/UD through ibv_create_qp, both CQs cq, 16 WRs each way. */
struct ibv_qp *tf_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type);
/* The same QPs made for the new post-send API (ibv_create_qp_ex with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, ops); NULL and errno as the verb. The
 * RC/UC/UD one has 2 send SGEs and 64 bytes of inline data, and without
 * the mask bit when ops is 0. */
struct ibv_qp *tf_ini_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
			    uint64_t ops);
struct ibv_qp *tf_rc_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
			   enum ibv_qp_type type, uint64_t ops);

/* ---- addresses and the QP state walk (0 or an errno) ------------------------- */
/* An address vector to this device's own port (loopback; RoCE: by GID 0). */
int tf_loopback_av(struct ibv_context *ctx, uint8_t port, struct ibv_ah_attr *ah);
/* One step each with the spec 3b masks for the QP's type: RESET->INIT
 * (remote read, write and atomic access; Q_Key 0x11111111 on UD),
 * INIT->RTR (MTU 1024, the loopback address or ah, 1 responder resource,
 * RNR timer 12), RTR->RTS (timeout 14, 7 retries, 7 RNR retries, 1
 * initiator resource). */
int tf_qp_to_init(struct ibv_qp *qp, uint8_t port);
int tf_qp_to_rtr(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn);
int tf_qp_to_rtr_av(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn);
int tf_qp_to_rts(struct ibv_qp *qp);
/* RESET -> INIT -> RTR -> RTS in one go (the loopback address, or ah and
 * its port); the errno of the step that failed. */
int tf_qp_connect(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn);
int tf_qp_connect_av(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn);
/* The same steps with the settings a test chooses (the plain forms use
 * tf_qp_default, the values above): INIT's access flags, RTR's responder
 * resources and RNR timer, RTS's timeout, retries and initiator
 * resources, and mask bits each step adds to the spec 3b masks of the
 * QP's type (e.g. a test that sends an attribute a type ignores). A zeroed
 * struct sends zeros with the same masks. */
struct tf_qp_opts {
	unsigned int access;				/* INIT: qp_access_flags */
	uint8_t max_dest_rd_atomic, min_rnr_timer;	/* RTR */
	uint8_t timeout, retry_cnt, rnr_retry, max_rd_atomic;	/* RTS */
	int init_mask, rtr_mask, rts_mask;		/* added to each step's mask */
};
#define TF_QP_DEFAULT { \
	.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, \
	.max_dest_rd_atomic = 1, .min_rnr_timer = 12, \
	.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1 }
extern const struct tf_qp_opts tf_qp_default;
int tf_qp_to_init_o(struct ibv_qp *qp, uint8_t port, const struct tf_qp_opts *o);
int tf_qp_to_rtr_av_o(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn,
		      const struct tf_qp_opts *o);
int tf_qp_to_rts_o(struct ibv_qp *qp, const struct tf_qp_opts *o);
int tf_qp_connect_av_o(struct ibv_qp *qp, const struct ibv_ah_attr *ah, uint32_t dest_qpn,
		       const struct tf_qp_opts *o);
int tf_qp_connect_o(struct ibv_qp *qp, uint8_t port, uint32_t dest_qpn,
		    const struct tf_qp_opts *o);
/* A connected pair: a and b, each the other's destination over the loopback
 * address, step by step together (both INIT, both RTR, then a RTS, and b
 * RTS when b_rts; else b stays in RTR, a receiver). The step that failed
 * and its QP are printed into the test's log. */
int tf_pair_connect(struct ibv_qp *a, struct ibv_qp *b, uint8_t port, int b_rts);

/* ---- completions and posting ---------------------------------------------- */
/* Poll one completion within a second; returns 1 or 0 (none). */
int tf_poll(struct ibv_cq *cq, struct ibv_wc *wc);
/* The same within budget_ms of an unshared machine: the limit of tr_clock.h,
 * stretched by the load (at most IBVCT_STRETCH_MAX times) and multiplied by
 * IBVCT_TIMEOUT_MULT, for a wait that a loaded machine must never fail. It
 * spins first, then sleeps 100 us between polls. */
int tf_poll_for(struct ibv_cq *cq, struct ibv_wc *wc, long long budget_ms);
/* Post a chain of ibv_send_wr through the new post-send API instead: one
 * ibv_wr_start, the builder and setters each WR asks for (its SGEs, or its
 * inline data with IBV_SEND_INLINE; the UD address; the XRC SRQ number),
 * ibv_wr_complete's answer. The QP must have an ibv_qp_ex (asserted). */
int tf_post_send_ex(struct ibv_qp *qp, const struct ibv_send_wr *wr);

#endif /* TF_H */
