/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fake provider's verbs tests (t5100, t5101, t5104): the
 * program's fake host, set up once in the parent before the first test
 * (the script named by a first argument that holds a '/', else the
 * built-in one: t5102 runs every quirk's script through these), and the
 * device each test's process opens for itself (the parent never calls
 * ibv_*, so every test starts from a fresh provider). Then what other tests
 * of the fake provider share: what /proc says of this process's memory
 * (helpers/fp_maps.c) and a region shared with another process
 * (helpers/fp_import.c).
 */
#ifndef FP_TEST_H
#define FP_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "tr.h"

/* Run the tests (tr_run; NAME... after the script argument selects);
 * `Bail out!` when the script is refused or makes no device to open. */
int fpt_main(int argc, char **argv, const struct tr_test *tests, size_t n);

/* The script's first device, opened; fails the test otherwise. */
struct ibv_context *fpt_open(void);
/* Closes it; fails the test when that fails. */
void fpt_close(struct ibv_context *ctx);

/* ---- what /proc says of this process's memory (helpers/fp_maps.c) ------ */
/* For the tests of registered memory (t5300, t5301, t5302). The mapping that
 * holds p: its permissions, the file offset of p, its name (if name); whether
 * there is one. */
bool fpt_map_of(const void *p, char perm[5], unsigned long long *off, char *name, size_t nl);
/* Whether p lies on the calling thread's stack (under ASan's
 * detect_stack_use_after_return a local array lives on its fake stack,
 * heap memory, instead). */
bool fpt_on_my_stack(const void *p);
/* Whether p is mapped shared from a device's memfd (the engine backs
 * registered pages so: engine/README.md, "Registered memory"). */
bool fpt_shared_at(const void *p);
/* An fd of this process on the device's memfd, or -1. */
int fpt_memfd(void);

/* ---- a region shared with another process (helpers/fp_import.c) ---------- */
/* For the import tests (t5341, t5840, t5842). What an owner sends with its
 * context's file (cmd_fd): its PD's and region's handles, the region's keys,
 * iova and length. */
struct fpt_share {
	uint32_t pd, mr, lkey, rkey;
	uint64_t iova, length;
};
/* The owner's side: *s from pd and mr, sent with ctx's file over the UNIX
 * socket sock; whether it went. */
bool fpt_share_send(int sock, struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr,
		    struct fpt_share *s);
/* The importer's: the file and *s received over sock, then the context, the
 * PD and the region imported, the same handles, keys and length: 0, or the
 * step that failed (1 the file, 2 the context, 3 the PD, 4 the region). */
int fpt_import(int sock, struct fpt_share *s, struct ibv_context **ctx, struct ibv_pd **pd,
	       struct ibv_mr **mr);
/* A WRITE on qp, connected, its completion taken from cq: len bytes at from
 * of lkey to `to` of rkey. Its status, or -1 when it could not be posted or
 * no completion came. */
int fpt_post_write(struct ibv_qp *qp, struct ibv_cq *cq, uint64_t from, uint32_t lkey,
		   uint32_t len, uint64_t to, uint32_t rkey);
/* A WRITE between two new QPs of pd (a pair of this process): len bytes at
 * from of lkey to `to` of rkey, arriving at this process's QP. Its
 * completion status, or -1 (fpt_post_write). */
int fpt_write_status(struct ibv_context *ctx, struct ibv_pd *pd, uint64_t from, uint32_t lkey,
		     uint32_t len, uint64_t to, uint32_t rkey);

#endif /* FP_TEST_H */
