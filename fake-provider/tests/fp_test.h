/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fake provider's verbs tests (t5100, t5101, t5104): the
 * program's fake host, set up once in the parent before the first test
 * (the script named by a first argument that holds a '/', else the
 * built-in one: t5102 runs every quirk's script through these), and the
 * device each test's process opens for itself (the parent never calls
 * ibv_*, so every test starts from a fresh provider).
 */
#ifndef FP_TEST_H
#define FP_TEST_H

#include <infiniband/verbs.h>

#include "tr.h"

/* Run the tests (tr_run; NAME... after the script argument selects);
 * `Bail out!` when the script is refused or makes no device to open. */
int fpt_main(int argc, char **argv, const struct tr_test *tests, size_t n);

/* The script's first device, opened; fails the test otherwise. */
struct ibv_context *fpt_open(void);
/* Closes it; fails the test when that fails. */
void fpt_close(struct ibv_context *ctx);

#endif /* FP_TEST_H */
