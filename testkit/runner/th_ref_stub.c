/* SPDX-License-Identifier: MIT */
/*
 * th_ on TARGET=system: no fake provider to set up (the system build must
 * not depend on it). When these binaries run against ref-impl, ibvct-run
 * has already prepared the environment.
 */
#include <stdio.h>

#include "th.h"

int th__ref_setup(char *err, size_t errlen)
{
	return 0;
}

void th__ref_cleanup(void)
{
}

const char *th__ref_mode(void)
{
	return NULL;
}

const char *th__ref_lifetime(void)
{
	return NULL;
}

const char *th__ref_profile(void)
{
	return NULL;
}

int th__ref_reenv(const char *dir, const char *mode, int xrc, const char *extra,
		  int keep_breaks, char *err, size_t errlen)
{
	snprintf(err, errlen, "needs the reference target's scripted fake device");
	return -1;
}
