/* SPDX-License-Identifier: MIT */
/*
 * The fake HCA's hardware counters (fp_script.h FP_HW_COUNTERS) where a
 * driver's are: one file each under its ports' hw_counters/ in the host's
 * sysfs, which the sysfs writer makes with 0 for the profiles that have
 * them (fp_profile_hw_counters). The engine's count upcall adds one. A
 * counter is the device's, not a process's (Linux rxe keeps them in the
 * device: linux v6.1 drivers/infiniband/sw/rxe/rxe_hw_counters.c
 * rxe_ib_get_hw_stats reads rxe->stats_counters), so every process of the
 * host adds to the same file, under that file's lock. A file that is not
 * there (a profile without counters) counts nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "fp_verbs.h"

/* Each device's sysfs dir, from the device object (provider.c). */
static char fp_cnt_dev[FP_MAX_DEVS][IBV_SYSFS_PATH_MAX];

void fp__counters_at(int devidx, const char *ibdev_path)
{
	if (devidx >= 0 && devidx < FP_MAX_DEVS)
		snprintf(fp_cnt_dev[devidx], sizeof(fp_cnt_dev[devidx]), "%s", ibdev_path);
}

/* The engine's upcall (fp_engine.h count). */
void fp__count(int devidx, uint8_t port, enum fe_counter c)
{
	char path[IBV_SYSFS_PATH_MAX + 96], buf[32];
	const char *name = fp_hw_counter_name((int)c);
	unsigned long long v = 0;
	ssize_t n;
	int fd, len;

	if (devidx < 0 || devidx >= FP_MAX_DEVS || !fp_cnt_dev[devidx][0] || !name)
		return;
	snprintf(path, sizeof(path), "%s/ports/%u/hw_counters/%s", fp_cnt_dev[devidx], port, name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = 0;
		v = strtoull(buf, NULL, 10);
	}
	/* the new text is never shorter than the old one: written over it */
	len = snprintf(buf, sizeof(buf), "%llu\n", v + 1);
	if (pwrite(fd, buf, (size_t)len, 0) != len)
		fprintf(stderr, "ibvct fake provider: %s: not counted: %s\n", path,
			strerror(errno));
	close(fd);		/* and with it the lock */
}
