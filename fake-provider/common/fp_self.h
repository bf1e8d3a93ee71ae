/* SPDX-License-Identifier: MIT */
/*
 * This process's id, for the data path: getpid() is a system call in this
 * glibc (about 160 ns here), and the engine asks on every verb whether an
 * object is its own or inherited through fork().
 */
#ifndef FP_SELF_H
#define FP_SELF_H

#include <sys/types.h>

/* getpid(), read once and again in each child of fork(). */
pid_t fp_self_pid(void);

#endif /* FP_SELF_H */
