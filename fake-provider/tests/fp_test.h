/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fake provider's verbs tests (t5100, t5101, t5104): the
 * program's fake host, set up once in the parent before the first test
 * (the script named by a first argument that holds a '/', else the
 * built-in one: t5102 runs every quirk's script through these), and the
 * device each test's process opens for itself (the parent never calls
 * ibv_*, so every test starts from a fresh provider). Then what other tests
 * of the fake provider share: what /proc says of this process's memory
 * (helpers/fp_maps.c).
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

#endif /* FP_TEST_H */
