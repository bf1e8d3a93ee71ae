/* SPDX-License-Identifier: MIT */
/*
 * The two-host runner's hooks (th_host.c), for th.c: the runners of the
 * two hosts meet, keep in step test by test and settle each test's verdict
 * from both halves. The tests themselves use th.h (th_xchg, th_sync,
 * th_host_side).
 */
#ifndef TH_HOST_H
#define TH_HOST_H

#include "tr.h"

int th_host_start(const char *prog, char *why, size_t len);
enum tr_verdict th_host_decide(const char *name, enum tr_verdict v, char *why, size_t len,
			       int data);
enum tr_verdict th_host_settle(const char *dir, enum tr_verdict v, char *why, size_t len);
int th_host_finish(void);
void th_host_enter(void);

#endif /* TH_HOST_H */
