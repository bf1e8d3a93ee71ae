/* SPDX-License-Identifier: MIT */
/*
 * This process's id, cached (fp_self.h).
 */
#include <pthread.h>
#include <unistd.h>

#include "fp_self.h"

static pid_t fp_pid_cache;
static pthread_once_t fp_pid_once = PTHREAD_ONCE_INIT;

static void fp_pid_refresh(void)
{
	__atomic_store_n(&fp_pid_cache, getpid(), __ATOMIC_RELAXED);
}

static void fp_pid_init(void)
{
	fp_pid_refresh();
	/* the child's handler runs before fork() returns there */
	pthread_atfork(NULL, NULL, fp_pid_refresh);
}

pid_t fp_self_pid(void)
{
	pthread_once(&fp_pid_once, fp_pid_init);
	return __atomic_load_n(&fp_pid_cache, __ATOMIC_RELAXED);
}
