/* SPDX-License-Identifier: MIT */
/*
 * What /proc says of this process's memory, for the tests of registered
 * memory other processes reach (t5300, t5301, t5302; fp_test.h): the
 * mapping an address is in, whether it is the calling thread's stack,
 * whether the engine backs it by a device's memfd, and an fd on that memfd.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr.h"
#include "../fp_test.h"

bool fpt_map_of(const void *p, char perm[5], unsigned long long *off, char *name, size_t nl)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, ino;
		unsigned long long o;
		unsigned maj, min;
		char pm[5];
		int n = 0;

		if (sscanf(line, "%lx-%lx %4s %llx %x:%x %lu %n", &lo, &hi, pm, &o, &maj, &min,
			   &ino, &n) < 7 || (uintptr_t)p < lo || (uintptr_t)p >= hi)
			continue;
		memcpy(perm, pm, 5);
		*off = o + ((uintptr_t)p - lo);
		if (name) {
			snprintf(name, nl, "%s", line + n);
			name[strcspn(name, "\n")] = 0;
		}
		found = true;
	}
	fclose(f);
	return found;
}

bool fpt_on_my_stack(const void *p)
{
	pthread_attr_t at;
	void *sp;
	size_t ss;
	bool on = false;

	if (!pthread_getattr_np(pthread_self(), &at)) {
		on = !pthread_attr_getstack(&at, &sp, &ss) && (uintptr_t)p >= (uintptr_t)sp &&
		     (uintptr_t)p < (uintptr_t)sp + ss;
		pthread_attr_destroy(&at);
	}
	return on;
}

bool fpt_shared_at(const void *p)
{
	char perm[5], name[256];
	unsigned long long off;

	return fpt_map_of(p, perm, &off, name, sizeof(name)) && perm[3] == 's' &&
	       strstr(name, "ibvct-inbox");
}

int fpt_memfd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	assert_non_null(d);
	while (fd < 0 && (e = readdir(d))) {
		char path[300], link[256];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			if (strstr(link, "memfd:ibvct-inbox"))
				fd = atoi(e->d_name);
		}
	}
	closedir(d);
	return fd;
}
