/* SPDX-License-Identifier: MIT */
/*
 * th_: the conformance-suite library, on the test runner (tr.h: the TAP
 * stream, one process per test with a timeout that kills its process
 * group, scratch dirs, skips and notes, peers, guard pages). It adds target
 * and device selection, skips with their real reason (a device without
 * XRC), the device each test gets, the expected results of
 * fixtures/expect/<provider>.txt; the verbs objects every C test builds
 * are the fixtures' (tf.h), here under their th_ names.
 *
 * The same source builds for TARGET=ref (our verbs.h; th_ref.c sets up
 * the fake provider with fp_env_setup) and TARGET=system (the system's
 * verbs.h through pkg-config; th_ref.c is not linked, see th_ref_stub.c).
 * Inside a test use cmocka's assert_* macros (tr.h says how they end a test).
 */
#ifndef TH_H
#define TH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "tf.h"
#include "tr.h"

/* Test flags. */
#define TH_XRC		0x01	/* needs a device with working XRC */
#define TH_NOXRC	0x02	/* needs a device without IBV_DEVICE_XRC */
#define TH_NO_CTX	0x04	/* the test opens the device itself (forks first) */
#define TH_REF_ONLY	0x08	/* needs the reference target's scripts */

struct th_ctx {
	struct ibv_context *ctx;	/* open device (NULL with TH_NO_CTX) */
	const char *dev_name;
	uint8_t port;			/* an active port */
	const char *dir;		/* scratch dir of this test (cwd) */
};

/*
 * A suite test, declared once where it is written: the function, its
 * requirement IDs (a string literal, at least one ID: `[IDS]` of its TAP
 * line, what reports and the break matrix key on) and its flags:
 *
 *	TH_TEST(xrcd_reserved_mask_bit_fails_eopnotsupp, "XRCD-02", TH_XRC)
 *	{
 *		... the open device is t->ctx ...
 *	}
 *
 * It registers with the runner as TR_TEST does (tr.h says how and in which
 * order), a runner test whose state is the th_test below.
 */
struct th_test {
	void (*fn)(struct th_ctx *t);
	unsigned flags;
};
void th__run(void **state);

#define TH_TEST(fn, ids, flags)								\
	static void fn(struct th_ctx *t);						\
	_Static_assert(sizeof("" ids) > 1,						\
		       "a suite test names its requirement IDs: " #fn);		\
	static struct th_test th__test_##fn = { fn, flags };				\
	TR__REGISTER(tr__reg_##fn, NULL, #fn, ids, th__run, NULL, NULL, &th__test_##fn);	\
	static void fn(struct th_ctx *t)

/* Run the suite's registered tests: -l lists, NAME... runs those. Returns
 * the exit status. */
int th_main(int argc, char **argv);

/* ---- inside a test ----------------------------------------------------- */
/* The runner's, under the names the suites use: skip the running test with
 * a reason, a note printed as a `# ` line after its result (pass or fail),
 * fail it with a message, a file in its scratch dir. */
#define th_skip		tr_skip
#define th_note		tr_note
#define th_fail		tr_fail
#define th_file		tr_file
/* An extension the device does not offer (EOPNOTSUPP): a skip with the
 * reason, except on the reference target's strict extended provider, which
 * offers every one (there it fails). */
void th_ext_missing(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* true on TARGET=ref under the strict profile: rules are checked strictly
 * (errno the spec names even where upstream leaves it unset; one lifetime
 * model, exactly). Under a driver profile (mlx5, mlx4, rxe) the reference
 * target plays that driver and is judged as a real one is. */
int th_strict(void);
/* The lifetime model under test: "current", "seed", or NULL (unknown: a
 * real device, where the test reports which one it observed). */
const char *th_lifetime(void);
/* "legacy"/"extended" on the reference target, NULL elsewhere. */
const char *th_mode(void);
/* The expectations key of the device's driver: "fake" (the reference
 * target's strict profile), "mlx5", "mlx4", "rxe", ... (th.c th_driver_key). */
const char *th_driver(void);
/* Rules that are facts of some drivers only (COMPAT-20..25): unless the
 * driver is one of the blank-separated drivers, the running test is not
 * applicable and ends as `ok # SKIP not applicable: ...` with the driver
 * seen and what the rule is about. Never a pass, never a failure. */
void th_need_driver(const char *drivers, const char *about);
/* A step of the running test that the device's driver is known to crash on
 * (a kernel panic: th.c th_crash_steps, by driver key, with the reason): 1
 * when it must not run here, and the test goes on without it but cannot
 * pass; it ends as a failure naming the step and the reason, which the
 * driver's expectations file lists as a known deviation (a TAP TODO). 0:
 * run it. The same on every target, so the reference target under that
 * driver's profile gives the real driver's verdict. */
int th_crash_guard(const char *step);

/* Open the selected device (a new context each call); asserts success. */
struct ibv_context *th_open(void);
/* ibv_import_device on a copy of fd (the copy's number in *used, or -1):
 * the imported context owns that copy and closes it at ibv_close_device
 * (rdma-core v44.0 libibverbs/device.c:435), fd stays the caller's. A
 * driver without import ops (EOPNOTSUPP) is a missing capability: the test
 * skips with the reason (th_ext_missing). Other failures: NULL and errno. */
struct ibv_context *th_import(int fd, int *used);
/* An importer's own traffic on an imported PD and MR (IMPORT-06, -08): a
 * CQ and a connected RC pair on pd, a receive buffer of its own; a SEND of
 * len bytes from addr through mr's lkey (what arrived: got), then an RDMA
 * WRITE of put to addr through mr's rkey. 0, or -1 with the failed step in
 * why. Never ends the test: any process of a test may call it. */
int th_import_traffic(struct ibv_pd *pd, struct ibv_mr *mr, void *addr, size_t len,
		      uint8_t port, void *got, const void *put, char *why, size_t whylen);
/* TARGET=ref only: re-create this test process's fake device from the
 * suite's script with a different mode ("legacy"/"extended"/NULL keep),
 * XRC capability (-1 keep, 0 off, 1 on) and extra script lines, before the
 * test's first ibv_* call (TH_NO_CTX tests). Skips on other targets. */
void th_reenv(const char *mode, int xrc, const char *extra);

/* Check an errno: exact on ref; elsewhere a mismatch is noted, not failed
 * (spec: "errno not set upstream"). */
void th_errno_strict(int got, int want, const char *what);

/* ---- processes and guard pages: the runner's ---------------------------- */
#define th_peer		tr_peer
#define th_peer_start	tr_peer_start
#define th_send		tr_send
#define th_recv		tr_recv
#define th_peer_wait	tr_peer_wait
#define th_guard_alloc	tr_guard_alloc
#define th_guard_free	tr_guard_free

/* ---- small verbs helpers: the fixtures of every C test (tf.h) ---------- */
/* th_loopback_av asserts that the port answers; the rest are tf_'s. */
void th_loopback_av(struct ibv_context *ctx, uint8_t port, struct ibv_ah_attr *ah);
#define th_xrcd		tf_xrcd
#define th_qp_to_init	tf_qp_to_init
#define th_qp_to_rtr	tf_qp_to_rtr
#define th_qp_to_rts	tf_qp_to_rts
#define th_pair_connect	tf_pair_connect
#define th_poll		tf_poll
#define th_xsrq		tf_xsrq
#define th_tgt_qp	tf_tgt_qp
#define th_open_tgt	tf_open_tgt
#define th_ini_qp	tf_ini_qp
#define th_rc_qp	tf_rc_qp
#define th_ini_qp_ex	tf_ini_qp_ex
#define th_rc_qp_ex	tf_rc_qp_ex
#define th_post_send_ex	tf_post_send_ex

/* ---- two hosts (th_host.c) ---------------------------------------------------
 * A two-host suite runs each test as two halves, one on each host, over TCP
 * (th_host.c says how the hosts meet; without IBVCT_ROLE the reference
 * target plays both, two fake hosts on one machine). */
int th_main_twohost(int argc, char **argv);
/* 'a' on the initiator's host (the client, host A), 'b' on the target's
 * (the server, host B). */
char th_host_side(void);
/* 1 when a test addresses the peer by its IPv6 link-local GID, 0 by its
 * IPv4-mapped one (IBVCT_PEER_GID, th_host.c). */
int th_peer_gid6(void);
/* Send len bytes of mine and receive as many of the other half's into
 * theirs (both halves call it at one point of the test). A half that is
 * gone ends this one: the test then takes the other half's verdict. */
void th_xchg(const void *mine, void *theirs, size_t len);
/* Both halves at the same point (its name, which must be the same). */
void th_sync(const char *point);
/* Until the other half has ended (its connection closed). */
void th_peer_end(void);
/* Ends this half when the other one has ended already (a wait for what
 * that half would have done need not run out). */
void th_peer_check(void);

/* For th_ref.c / th_ref_stub.c */
int th__ref_setup(char *err, size_t errlen);
int th__ref_reenv(const char *dir, const char *mode, int xrc, const char *extra,
		  int keep_breaks, char *err, size_t errlen);
void th__ref_cleanup(void);
const char *th__ref_mode(void);
const char *th__ref_lifetime(void);
const char *th__ref_profile(void);

#endif /* TH_H */
