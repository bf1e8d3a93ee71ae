/* SPDX-License-Identifier: MIT */
/*
 * The release the reference plays (ibvct-release.def): one of the
 * rdma-core releases Debian ships, 44 (Debian 12) or 56 (Debian 13), for
 * the whole process. Decided once, at the first question: the environment's
 * IBVCT_RDMA_CORE (ibvct-run and the suites put a script's `rdma-core` line
 * there), else the release of the libibverbs-dev the library was built
 * against (RI_RDMA_CORE_DEFAULT, from the Makefile's pkg-config). The
 * layout is the same whichever it is (verbs.h): what a row changes is
 * behaviour, and each row's code asks ibvct_release_is_56().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri.h"

#ifndef RI_RDMA_CORE_DEFAULT
#define RI_RDMA_CORE_DEFAULT 56
#endif

static pthread_once_t ri_rel_once = PTHREAD_ONCE_INIT;
static int ri_rel;

/* "44" or "56", as the script's line spells it; 0 for anything else. */
static int ri_rel_parse(const char *v)
{
	if (!strcmp(v, "44"))
		return 44;
	if (!strcmp(v, "56"))
		return 56;
	return 0;
}

static void ri_rel_decide(void)
{
	const char *v = getenv("IBVCT_RDMA_CORE");

	ri_rel = RI_RDMA_CORE_DEFAULT;
	if (!v || !v[0])
		return;
	if (ri_rel_parse(v)) {
		ri_rel = ri_rel_parse(v);
		return;
	}
	/* a typo must not pass for the default unseen */
	fprintf(stderr, "libibverbs (ibvct): IBVCT_RDMA_CORE=%s: not a release the "
		"reference plays (44 or 56); playing %d\n", v, ri_rel);
}

RI_EXPORT int verbs_ibvct_release(void)
{
	pthread_once(&ri_rel_once, ri_rel_decide);
	return ri_rel;
}
