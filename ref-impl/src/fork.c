/* SPDX-License-Identifier: MIT */
/*
 * Fork protection, as rdma-core 44 has it (libibverbs/memory.c; 56 on a
 * copy-on-fork kernel turns it off: ibv_fork_init below): once
 * ibv_fork_init has run, every registered range is MADV_DONTFORK so that a
 * child has no mapping there (the kernel gives it nothing to copy-on-write
 * against pinned pages), counted per page so that overlapping regions
 * share it, and MADV_DOFORK again when the last region on a page goes.
 * v44 does this whatever the kernel says about copy-on-fork; only
 * ibv_is_fork_initialized looks at that.
 *
 * The counts are a sorted array of disjoint page ranges [start, end) with a
 * count that is not 0 (rdma-core keeps a tree of them; its counts may go
 * below 0 when a range is DOFORKed more often than DONTFORKed, and only the
 * steps 0 -> 1 and 1 -> 0 call madvise: so here). One mutex guards it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ri.h"

struct ri_frange {
	uintptr_t start, end;
	long cnt;
};

static pthread_mutex_t ri_fork_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ri_fork_on;			/* ibv_fork_init done */
static bool ri_fork_late;		/* a range was (un)marked before it */
static bool ri_fork_huge;		/* RDMAV_HUGEPAGES_SAFE */
static uintptr_t ri_fork_page;
static struct ri_frange *ri_fr;
static size_t ri_nfr;
/* the MRs whose range the library marked (dereg gives it back): sorted */
static struct ibv_mr **ri_fmr;
static size_t ri_nfmr, ri_capfmr;

/* rdma-core v44.0 util/util.c:50 check_env: set, and not "0" */
static bool ri_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "0");
}

/*
 * The page size of the mapping that holds p, from KernelPageSize in
 * /proc/self/smaps (huge pages under RDMAV_HUGEPAGES_SAFE, rdma-core v44.0
 * libibverbs/memory.c:90 get_page_size); the base page size when unknown.
 */
static uintptr_t ri_map_page(const void *p)
{
	uintptr_t a = (uintptr_t)p, size = ri_fork_page;
	unsigned long lo, hi, kb;
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return size;
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's line (its fields' names are never hex-dash) */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (in)
				break;
			in = a >= lo && a < hi;
			continue;
		}
		if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
			if (kb)
				size = (uintptr_t)kb * 1024;
			break;
		}
	}
	fclose(f);
	return size;
}

/*
 * rdma-core v44.0 libibverbs/memory.c:125 ibv_fork_init. Since v51 (v56.1
 * memory.c:137, ibvct-release.def FORK_INIT_UNNEEDED) a kernel that copies
 * pinned pages at fork makes it a no-op that succeeds, before or after a
 * registration: nothing is ever marked then.
 */
RI_EXPORT int ibv_fork_init(void)
{
	uintptr_t size;
	long ps;
	void *p;
	int ret = 0;

	pthread_mutex_lock(&ri_fork_lock);
	if (getenv("RDMAV_HUGEPAGES_SAFE"))
		ri_fork_huge = true;
	if (ri_fork_on)				/* once is enough */
		goto out;
	if (ibvct_release_is_56(IBVCT_REL_FORK_INIT_UNNEEDED) &&
	    ibv_is_fork_initialized() == IBV_FORK_UNNEEDED)
		goto out;
	if (ri_fork_late) {			/* @rule FORK-04 */
		ret = EINVAL;
		goto out;
	}
	ps = sysconf(_SC_PAGESIZE);
	if (ps <= 0) {
		ret = errno ? errno : EINVAL;
		goto out;
	}
	ri_fork_page = (uintptr_t)ps;
	if (posix_memalign(&p, (size_t)ps, (size_t)ps)) {
		ret = ENOMEM;
		goto out;
	}
	/* the kernel must know both advices (memory.c:152-160) */
	size = ri_fork_huge ? ri_map_page(p) : ri_fork_page;
	if (madvise((void *)((uintptr_t)p & ~(size - 1)), size, MADV_DONTFORK) ||
	    madvise((void *)((uintptr_t)p & ~(size - 1)), size, MADV_DOFORK))
		ret = ENOSYS;
	free(p);
	if (!ret)
		ri_fork_on = true;
out:
	pthread_mutex_unlock(&ri_fork_lock);
	return ret;
}

/* rdma-core v44.0 libibverbs/memory.c:178: UNNEEDED on a kernel that copies
 * pinned pages at fork whether or not ibv_fork_init ran. The fake kernel
 * does (the engine's child handler gives the child its copy), as does
 * every kernel since v5.13. */
RI_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;		/* @rule FORK-01 */
}

/* The pieces of [s, e) with their counts (gaps are 0), into seg; their
 * number. seg has room for 2 * ri_nfr + 1. */
static size_t ri_fr_pieces(uintptr_t s, uintptr_t e, struct ri_frange *seg)
{
	uintptr_t at = s;
	size_t i, n = 0;

	for (i = 0; i < ri_nfr && at < e; i++) {
		const struct ri_frange *r = &ri_fr[i];

		if (r->end <= at)
			continue;
		if (r->start >= e)
			break;
		if (r->start > at)
			seg[n++] = (struct ri_frange){ at, r->start, 0 };
		at = r->start > at ? r->start : at;
		seg[n++] = (struct ri_frange){ at, r->end < e ? r->end : e, r->cnt };
		at = seg[n - 1].end;
	}
	if (at < e)
		seg[n++] = (struct ri_frange){ at, e, 0 };
	return n;
}

/* Append r to out (n entries), merged with the last when they touch with
 * the same count; count 0 dropped. */
static void ri_fr_put(struct ri_frange *out, size_t *n, struct ri_frange r)
{
	if (!r.cnt || r.start >= r.end)
		return;
	if (*n && out[*n - 1].end == r.start && out[*n - 1].cnt == r.cnt)
		out[*n - 1].end = r.end;
	else
		out[(*n)++] = r;
}

/* DOFORK of a range that failed whole: page by page, failures ignored
 * (memory.c:599 do_madvise). */
static void ri_dofork(uintptr_t a, uintptr_t b, uintptr_t page)
{
	if (!madvise((void *)a, b - a, MADV_DOFORK))
		return;
	for (; b - a > page && a < b; a += page)
		madvise((void *)a, page, MADV_DOFORK);
}

/* rdma-core v44.0 libibverbs/memory.c:621 ibv_madvise_range: count [base,
 * base + size) rounded out to pages once more (inc 1) or once less (-1);
 * DONTFORK the pages whose count leaves 0, DOFORK those that come back to
 * 0. A DONTFORK that fails undoes the ones done and leaves the counts:
 * -1 with errno. Called with ri_fork_lock held, ri_fork_on. */
static int ri_fork_count(void *base, size_t size, int inc)
{
	uintptr_t page, s, e;
	struct ri_frange *seg, *out;
	size_t nseg, nout = 0, i, k;
	int err = 0;

	if (!base || !size)
		return 0;
	page = ri_fork_huge ? ri_map_page(base) : ri_fork_page;
	s = (uintptr_t)base & ~(page - 1);
	if ((uintptr_t)base + size < (uintptr_t)base ||
	    (uintptr_t)base + size + page - 1 < (uintptr_t)base + size) {
		errno = EINVAL;
		return -1;
	}
	e = ((uintptr_t)base + size + page - 1) & ~(page - 1);
	seg = malloc((2 * ri_nfr + 1) * sizeof(*seg));
	out = malloc((2 * ri_nfr + 3) * sizeof(*out));
	if (!seg || !out) {
		free(seg);
		free(out);
		errno = ENOMEM;
		return -1;
	}
	nseg = ri_fr_pieces(s, e, seg);
	for (i = 0; i < nseg; i++) {
		if (inc > 0 && seg[i].cnt == 0 &&
		    madvise((void *)seg[i].start, seg[i].end - seg[i].start, MADV_DONTFORK)) {
			err = errno;
			for (k = 0; k < i; k++)
				if (seg[k].cnt == 0)
					ri_dofork(seg[k].start, seg[k].end, page);
			break;
		}
		if (inc < 0 && seg[i].cnt == 1)
			ri_dofork(seg[i].start, seg[i].end, page);
	}
	if (err) {
		free(seg);
		free(out);
		errno = err;
		return -1;
	}
	/* the counts: what lies before s, the pieces, what lies after e */
	for (i = 0; i < ri_nfr && ri_fr[i].start < s; i++)
		ri_fr_put(out, &nout, (struct ri_frange){ ri_fr[i].start,
			  ri_fr[i].end < s ? ri_fr[i].end : s, ri_fr[i].cnt });
	for (k = 0; k < nseg; k++)
		ri_fr_put(out, &nout, (struct ri_frange){ seg[k].start, seg[k].end,
			  seg[k].cnt + inc });
	for (i = 0; i < ri_nfr; i++)
		if (ri_fr[i].end > e)
			ri_fr_put(out, &nout, (struct ri_frange){
				  ri_fr[i].start > e ? ri_fr[i].start : e, ri_fr[i].end,
				  ri_fr[i].cnt });
	free(seg);
	free(ri_fr);
	ri_fr = out;
	ri_nfr = nout;
	return 0;
}

/* rdma-core v44.0 libibverbs/memory.c:715-733: before ibv_fork_init
 * nothing is marked, but ibv_fork_init is too late from then on. */
static int ri_fork_range(void *base, size_t size, int inc, bool *marked)
{
	int ret = 0;

	pthread_mutex_lock(&ri_fork_lock);
	if (ri_fork_on) {
		ret = ri_fork_count(base, size, inc);
		*marked = !ret;
	}
	else
		ri_fork_late = true;
	pthread_mutex_unlock(&ri_fork_lock);
	return ret;
}

RI_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	bool m;

	return ri_fork_range(base, size, 1, &m);
}

RI_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	bool m;

	return ri_fork_range(base, size, -1, &m);
}

/* ---- the MRs marked --------------------------------------------------- */

static size_t ri_fmr_find(const struct ibv_mr *mr, bool *found)
{
	size_t lo = 0, hi = ri_nfmr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)ri_fmr[mid] < (uintptr_t)mr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < ri_nfmr && ri_fmr[lo] == mr;
	return lo;
}

/*
 * Before the driver's reg_mr (rdma-core v44.0 libibverbs/verbs.c:320
 * ibv_reg_mr_iova2): an ODP region is not marked. *marked says whether
 * this one was (so that ri__fork_reg_done records it).
 */
int ri__fork_reg(void *addr, size_t length, unsigned int access, bool *marked)
{
	*marked = false;
	if (access & IBV_ACCESS_ON_DEMAND)
		return 0;
	return ri_fork_range(addr, length, 1, marked);	/* @rule FORK-05 */
}

/* After it: a region made is remembered for its dereg, the range of one
 * that failed is given back (verbs.c:333-336). */
void ri__fork_reg_done(struct ibv_mr *mr, void *addr, size_t length,
		       unsigned int access, bool marked)
{
	bool found;
	size_t at;

	if (access & IBV_ACCESS_ON_DEMAND)
		return;
	if (!mr) {
		int e = errno;

		ibv_dofork_range(addr, length);
		errno = e;
		return;
	}
	if (!marked)
		return;
	pthread_mutex_lock(&ri_fork_lock);
	at = ri_fmr_find(mr, &found);
	if (!found) {
		if (ri_nfmr == ri_capfmr) {
			size_t cap = ri_capfmr ? 2 * ri_capfmr : 16;
			struct ibv_mr **n = realloc(ri_fmr, cap * sizeof(*n));

			if (!n) {
				/* its range stays marked until the process ends */
				pthread_mutex_unlock(&ri_fork_lock);
				return;
			}
			ri_fmr = n;
			ri_capfmr = cap;
		}
		memmove(ri_fmr + at + 1, ri_fmr + at, (ri_nfmr - at) * sizeof(*ri_fmr));
		ri_fmr[at] = mr;
		ri_nfmr++;
	}
	pthread_mutex_unlock(&ri_fork_lock);
}

/* Whether mr is one reg_mr marked (forgotten then when forget). */
static bool ri_fmr_take(struct ibv_mr *mr, bool forget)
{
	bool found;
	size_t at;

	pthread_mutex_lock(&ri_fork_lock);
	at = ri_fmr_find(mr, &found);
	if (found && forget) {
		memmove(ri_fmr + at, ri_fmr + at + 1, (ri_nfmr - at - 1) * sizeof(*ri_fmr));
		ri_nfmr--;
	}
	pthread_mutex_unlock(&ri_fork_lock);
	return found;
}

/*
 * After a done dereg (rdma-core v44.0 libibverbs/verbs.c:504-507): the
 * range of a region reg_mr marked is given back. Imported MRs, dmabuf and
 * ODP regions were never marked (the mr_type and access tests there).
 */
void ri__fork_dereg(struct ibv_mr *mr, void *addr, size_t length)
{
	if (ri_fmr_take(mr, true))		/* @rule FORK-06 */
		ibv_dofork_range(addr, length);
}

/* The environment at the first device list (rdma-core v44.0
 * libibverbs/init.c:668 ibverbs_init). */
void ri__fork_env(void)
{
	bool on = ri_env_on("RDMAV_FORK_SAFE") || ri_env_on("IBV_FORK_SAFE");

	if (on && ibv_fork_init())		/* @rule FORK-07 */
		fprintf(stderr, "libibverbs: Warning: fork()-safety requested but init failed\n");
}
