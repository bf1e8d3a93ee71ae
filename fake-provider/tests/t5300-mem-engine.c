/* SPDX-License-Identifier: MIT */
/*
 * t5300: registered memory other processes reach (fake-provider/engine/
 * mem.c, fe_mem.h), on the engine itself, linked in: a region's pages
 * backed by a memfd with their contents and protection, counted (two
 * regions on a page, dereg in either order), private again at the last
 * dereg with the memfd range punched, a region unmapped before its dereg,
 * each case that stays as it is (and so takes the old path), the published
 * tables following reg/dereg/bind/invalidate/modify/error/destroy, the
 * requester's check (fe_mem_view_remote) agreeing with the responder's
 * (fe_mr_remote) on a sweep of requests, and a peer in another process
 * that maps the memfd seeing writes both ways.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fp_script.h"
#include "fp_engine.h"
#include "fe_mem.h"
#include "fp_test.h"
#include "tr.h"

#define BASE	8192u		/* where the tables start in the memfd (an inbox before) */
#define PD	((const void *)0x1000)
#define PD2	((const void *)0x2000)
#define ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		 IBV_ACCESS_REMOTE_ATOMIC)

static struct fp_script script;
static size_t pg;
static int memfd;
static struct fe_dev *dev;

/* This process's device 0 with its memfd, as the transport makes it. */
static int setup(void **state)
{
	(void)state;
	fp_script_default(&script);
	fp__script = &script;
	pg = (size_t)sysconf(_SC_PAGESIZE);
	memfd = memfd_create("ibvct-inbox", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, BASE))
		return -1;
	dev = fe_dev_attach(0);
	fe_mem_attach(dev, memfd, BASE);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fe_mem_detach(dev);
	close(memfd);
	return 0;
}

static char *anon(size_t pages, int prot)
{
	char *p = mmap(NULL, pages * pg, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static void fill(char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(i * 7 + seed);
}

static bool filled(const char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (char)(i * 7 + seed))
			return false;
	return true;
}

static void mr_init(struct fe_mr *mr, const void *pd, void *addr, size_t len, int access)
{
	memset(mr, 0, sizeof(*mr));
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->iova = (uint64_t)(uintptr_t)addr;
	mr->access = access;
	fe_mr_add(dev, mr);
}

/* The memfd's bytes of a backed region (what a peer sees). */
static void memfd_read(const struct fe_mr *mr, void *dst, size_t len)
{
	struct fe_mem_view v;

	fe_mem_peer_map(&v, memfd, BASE);
	assert_non_null(v.data);
	memcpy(dst, v.data + mr->moff, len);
	fe_mem_peer_unmap(&v);
}

/* ---- backing ------------------------------------------------------------ */
TR_TEST_FX(reg_keeps_contents_and_protection, setup, teardown)
{
	char *p = anon(5, PROT_READ | PROT_WRITE | PROT_EXEC), *q;
	char perm[5], before[5];
	unsigned long long off;
	struct fe_mr mr;

	(void)state;
	fill(p, 5 * pg, 3);
	assert_true(fpt_map_of(p + pg, before, &off, NULL, 0));
	mr_init(&mr, PD, p + pg + 100, 2 * pg, ALL);
	assert_non_null(mr.bk);
	/* its pages: from p + pg to past its end in p + 3 pg */
	assert_true(fpt_shared_at(p + pg) && fpt_shared_at(p + 4 * pg - 1));
	assert_false(fpt_shared_at(p) || fpt_shared_at(p + 4 * pg));	/* only its pages */
	assert_true(fpt_map_of(p + pg, perm, &off, NULL, 0));
	assert_memory_equal(perm, before, 3);			/* rwx kept */
	assert_true(filled(p, 5 * pg, 3));
	/* the memfd holds the same bytes, and a store shows in both */
	q = malloc(2 * pg);
	memfd_read(&mr, q, 2 * pg);
	assert_memory_equal(q, p + pg + 100, 2 * pg);
	p[pg + 200] = 'x';
	memfd_read(&mr, q, 2 * pg);
	assert_int_equal(q[100], 'x');
	free(q);
	fe_mr_del(dev, &mr);
	assert_false(fpt_shared_at(p + pg));
	p[pg + 200] = (char)((pg + 200) * 7 + 3);
	assert_true(filled(p, 5 * pg, 3));
	munmap(p, 5 * pg);
}

static void two_regions_on_a_page(bool first_goes_first)
{
	char *p = anon(2, PROT_READ | PROT_WRITE);
	struct fe_mr a, b;
	uint64_t hole = 0;
	char c;

	fill(p, 2 * pg, 9);
	mr_init(&a, PD, p + 10, 100, ALL);
	mr_init(&b, PD, p + 500, 100, ALL);
	assert_non_null(a.bk);
	assert_ptr_equal(a.bk, b.bk);
	assert_int_equal(b.moff - a.moff, 490);
	fe_mr_del(dev, first_goes_first ? &a : &b);
	assert_true(fpt_shared_at(p));				/* one still counts it */
	p[0] = 'y';
	memfd_read(first_goes_first ? &b : &a, &c, 1);		/* still the same bytes */
	assert_int_equal(*(first_goes_first ? p + 500 : p + 10), c);
	{
		struct fe_mr *left = first_goes_first ? &b : &a;
		struct fe_mem_view v;

		hole = left->moff;
		fe_mr_del(dev, left);
		assert_false(fpt_shared_at(p));			/* private again */
		assert_int_equal(p[0], 'y');
		p[0] = (char)9;
		assert_true(filled(p, 2 * pg, 9));
		/* its memfd range was punched: zeros there now */
		fe_mem_peer_map(&v, memfd, BASE);
		assert_non_null(v.data);
		assert_int_equal(v.data[hole], 0);
		assert_int_equal(v.data[hole - 10 + 100], 0);
		fe_mem_peer_unmap(&v);
	}
	munmap(p, 2 * pg);
}

TR_TEST_FX(two_regions_dereg_first_first, setup, teardown)
{
	(void)state;
	two_regions_on_a_page(true);
}

TR_TEST_FX(two_regions_dereg_last_first, setup, teardown)
{
	(void)state;
	two_regions_on_a_page(false);
}

TR_TEST_FX(overlap_inside_shares_partial_stays, setup, teardown)
{
	char *p = anon(4, PROT_READ | PROT_WRITE);
	struct fe_mr a, in, part;

	(void)state;
	mr_init(&a, PD, p, 2 * pg, ALL);
	mr_init(&in, PD, p + pg + 8, 64, ALL);
	mr_init(&part, PD, p + pg, 2 * pg, ALL);	/* half in a's pages, half not */
	assert_ptr_equal(in.bk, a.bk);
	assert_null(part.bk);
	assert_false(fpt_shared_at(p + 2 * pg));
	fe_mr_del(dev, &a);
	assert_true(fpt_shared_at(p + pg));			/* in still counts its page */
	assert_false(fpt_shared_at(p));
	fe_mr_del(dev, &in);
	fe_mr_del(dev, &part);
	assert_false(fpt_shared_at(p + pg));
	munmap(p, 4 * pg);
}

/* The application unmaps a registered buffer (free of an mmapped chunk):
 * its dereg leaves alone what is mapped there by then. */
TR_TEST_FX(region_unmapped_before_dereg, setup, teardown)
{
	char *p = anon(2, PROT_READ | PROT_WRITE), *n;
	struct fe_mr mr;

	(void)state;
	mr_init(&mr, PD, p, 2 * pg, ALL);
	assert_non_null(mr.bk);
	assert_int_equal(munmap(p, 2 * pg), 0);
	n = mmap(p, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	if (n == MAP_FAILED)
		n = NULL;
	if (n)
		fill(n, pg, 5);
	fe_mr_del(dev, &mr);
	if (n) {
		char perm[5];
		unsigned long long off;

		assert_true(fpt_map_of(n, perm, &off, NULL, 0));
		assert_int_equal(perm[3], 'p');
		assert_true(filled(n, pg, 5));
		munmap(n, pg);
	}
	assert_false(fpt_map_of(p + pg, (char[5]){0}, &(unsigned long long){0}, NULL, 0));
}

/* ---- what stays as it is ------------------------------------------------- */
static void stays(void *addr, size_t len, const char *what)
{
	struct fe_mr mr;

	mr_init(&mr, PD, addr, len, ALL);
	if (mr.bk)
		fail_msg("%s was remapped", what);
	fe_mr_del(dev, &mr);
}

TR_TEST_FX(unsafe_ranges_stay_as_they_are, setup, teardown)
{
	char stackbuf[256];
	char *ro = anon(1, PROT_READ), *holed = anon(3, PROT_READ | PROT_WRITE), *fsh, *fpriv;
	char path[] = "t5300-file";
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	void *vdso = (void *)getauxval(AT_SYSINFO_EHDR);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)pg), 0);
	fsh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	fpriv = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(fsh != MAP_FAILED && fpriv != MAP_FAILED);
	munmap(holed + pg, pg);
	memset(stackbuf, 1, sizeof(stackbuf));
	stays(ro, pg, "read-only memory");
	stays(fsh, pg, "a MAP_SHARED file");
	stays(fpriv, pg, "a read-only private file mapping");
	stays(holed, 3 * pg, "a range with a hole");
	if (fpt_on_my_stack(stackbuf))
		stays(stackbuf, sizeof(stackbuf), "the calling thread's stack");
	else
		tr_note("a local array is not on the thread's stack here (a sanitizer's fake stack)");
	if (vdso)
		stays(vdso, 64, "[vdso]");
	assert_int_equal(stackbuf[10], 1);
	munmap(ro, pg);
	munmap(holed, pg);
	munmap(holed + 2 * pg, pg);
	munmap(fsh, pg);
	munmap(fpriv, pg);
	close(fd);
}

/* ---- the tables and the check ---------------------------------------------- */
static void qp_init(struct fe_qp *qp, uint32_t qpn, const void *pd, int access)
{
	memset(qp, 0, sizeof(*qp));
	fe_qp_init(qp, IBV_QPT_RC);
	qp->pd = pd;
	fe_qp_add(dev, qp, qpn);
	qp->state = IBV_QPS_RTS;
	qp->attr.qp_access_flags = (unsigned)access;
	fe_mem_qp_publish(qp);
}

static int view_check(struct fe_mem_view *v, uint32_t qpn, const void *addr, uint32_t rkey,
		      uint64_t len, int need, char **where)
{
	return fe_mem_view_remote(v, qpn, (uint64_t)(uintptr_t)addr, rkey, len, need, where);
}

TR_TEST_FX(tables_follow_every_change, setup, teardown)
{
	char *p = anon(2, PROT_READ | PROT_WRITE), *w;
	struct fe_mem_view v;
	struct fe_mr mr, ro;
	struct fe_qp qp, other;
	struct fe_mw w1, w2;

	(void)state;
	fe_mem_peer_map(&v, memfd, BASE);
	assert_non_null(v.tabs);
	qp_init(&qp, 1000, PD, ALL);
	qp_init(&other, 1001, PD, ALL);
	mr_init(&mr, PD, p, 2 * pg, ALL);
	mr_init(&ro, PD, p + 64, 64, IBV_ACCESS_REMOTE_READ);
	/* granted: where is the same byte */
	assert_int_equal(view_check(&v, 1000, p + 8, mr.rkey, 16, IBV_ACCESS_REMOTE_WRITE, &w), 0);
	w[0] = 'W';
	assert_int_equal(p[8], 'W');
	p[9] = 'P';
	assert_int_equal(w[1], 'P');
	assert_ptr_equal(fe_mr_remote(dev, PD, &qp, ALL, (uint64_t)(uintptr_t)p + 8, mr.rkey, 16,
				      IBV_ACCESS_REMOTE_WRITE), p + 8);
	/* each refusal of the responder is a fallback here */
	assert_int_equal(view_check(&v, 1000, p + 64, ro.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w),
			 FE_MEM_FALLBACK);
	assert_null(w);
	assert_int_equal(view_check(&v, 1000, p + 64, ro.rkey, 8, IBV_ACCESS_REMOTE_READ, &w), 0);
	assert_int_equal(view_check(&v, 1000, p + 2 * pg - 4, mr.rkey, 8,
				    IBV_ACCESS_REMOTE_READ, &w), FE_MEM_FALLBACK);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey ^ 0x100, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	assert_int_equal(view_check(&v, 1002, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 0, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	/* modify: access of the QP, its state; RNR block; error; async error */
	qp.attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	fe_mem_qp_publish(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w),
			 FE_MEM_FALLBACK);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w), 0);
	qp.state = IBV_QPS_INIT;
	fe_mem_qp_publish(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	qp.state = IBV_QPS_RTR;
	qp.rx_blocked = true;
	fe_mem_qp_publish(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	qp.rx_blocked = false;
	fe_mem_qp_publish(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w), 0);
	fe_mem_qp_errored(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	fe_qp_reset(&qp);
	qp.state = IBV_QPS_RESET;
	fe_mem_qp_publish(&qp);
	qp.state = IBV_QPS_RTS;
	qp.attr.qp_access_flags = ALL;
	fe_mem_qp_publish(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w), 0);
	fe_qp_set_error(&qp);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	qp.state = IBV_QPS_RTS;
	fe_mem_qp_publish(&qp);
	/* windows: bind (type 1, its range), type 2 through its QP, invalidate */
	memset(&w1, 0, sizeof(w1));
	w1.type = IBV_MW_TYPE_1;
	w1.pd = PD;
	fe_mw_add(dev, &w1);
	assert_int_equal(view_check(&v, 1000, p, w1.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	fe_mw_bind_range(&w1, &mr, w1.rkey, (uint64_t)(uintptr_t)p + 128, 64,
			 IBV_ACCESS_REMOTE_READ, NULL);
	assert_int_equal(view_check(&v, 1000, p + 128, w1.rkey, 64, IBV_ACCESS_REMOTE_READ, &w), 0);
	assert_ptr_equal(w[0] == p[128] ? p + 128 : NULL, p + 128);
	assert_int_equal(view_check(&v, 1000, p + 120, w1.rkey, 64, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	assert_int_equal(view_check(&v, 1000, p + 128, w1.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w),
			 FE_MEM_FALLBACK);
	script.quirk[FP_Q_MW_RANGE_UNCHECKED] = true;	/* the same rule, the same quirk */
	assert_int_equal(view_check(&v, 1000, p + 120, w1.rkey, 64, IBV_ACCESS_REMOTE_READ, &w), 0);
	script.quirk[FP_Q_MW_RANGE_UNCHECKED] = false;
	fe_mw_unbind(&w1);
	assert_int_equal(view_check(&v, 1000, p + 128, w1.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	memset(&w2, 0, sizeof(w2));
	w2.type = IBV_MW_TYPE_2;
	w2.pd = PD;
	fe_mw_add(dev, &w2);
	fe_mw_bind_range(&w2, &mr, (w2.rkey & ~0xffu) | ((w2.rkey + 1) & 0xff),
			 (uint64_t)(uintptr_t)p, pg, IBV_ACCESS_REMOTE_WRITE, &qp);
	assert_int_equal(view_check(&v, 1000, p, w2.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w), 0);
	assert_int_equal(view_check(&v, 1001, p, w2.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w),
			 FE_MEM_FALLBACK);
	script.quirk[FP_Q_MW_QP_UNCHECKED] = true;
	assert_int_equal(view_check(&v, 1001, p, w2.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w), 0);
	script.quirk[FP_Q_MW_QP_UNCHECKED] = false;
	assert_true(fe_key_invalidate(dev, w2.rkey));
	assert_int_equal(view_check(&v, 1000, p, w2.rkey, 8, IBV_ACCESS_REMOTE_WRITE, &w),
			 FE_MEM_FALLBACK);
	fe_mw_del(dev, &w1);
	fe_mw_del(dev, &w2);
	/* destroy; dereg */
	fe_qp_del(&other);
	assert_int_equal(view_check(&v, 1001, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	fe_mr_del(dev, &mr);
	assert_int_equal(view_check(&v, 1000, p, mr.rkey, 8, IBV_ACCESS_REMOTE_READ, &w),
			 FE_MEM_FALLBACK);
	fe_mr_del(dev, &ro);
	fe_qp_del(&qp);
	fe_mem_peer_unmap(&v);
	munmap(p, 2 * pg);
}

/* The requester's check and the responder's are one rule: on a sweep of
 * requests (keys, ranges, access, QPs, PDs) fe_mem_view_remote places
 * exactly where fe_mr_remote would grant, at the same bytes. */
TR_TEST_FX(requester_and_responder_agree, setup, teardown)
{
	char *p = anon(3, PROT_READ | PROT_WRITE), *w, *r;
	static const int needs[] = { IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ,
				     IBV_ACCESS_REMOTE_ATOMIC };
	struct fe_mem_view v;
	struct fe_mr mr[3];
	struct fe_mw mw[2];
	struct fe_qp qp[2];
	uint32_t keys[6];
	unsigned i, agree = 0, granted = 0, seed = 12345;

	(void)state;
	fe_mem_peer_map(&v, memfd, BASE);
	qp_init(&qp[0], 2000, PD, ALL);
	qp_init(&qp[1], 2001, PD2, IBV_ACCESS_REMOTE_READ);
	mr_init(&mr[0], PD, p, 3 * pg, ALL);
	mr_init(&mr[1], PD2, p + pg, pg, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE);
	mr_init(&mr[2], PD, p + 100, 1000, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 2; i++) {
		memset(&mw[i], 0, sizeof(mw[i]));
		mw[i].type = i ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1;
		mw[i].pd = PD;
		fe_mw_add(dev, &mw[i]);
	}
	fe_mw_bind_range(&mw[0], &mr[0], mw[0].rkey, (uint64_t)(uintptr_t)p + 4000, 300,
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, NULL);
	fe_mw_bind_range(&mw[1], &mr[0], mw[1].rkey, (uint64_t)(uintptr_t)p + 64, 4096,
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ, &qp[0]);
	keys[0] = mr[0].rkey;
	keys[1] = mr[1].rkey;
	keys[2] = mr[2].rkey;
	keys[3] = mw[0].rkey;
	keys[4] = mw[1].rkey;
	keys[5] = mr[0].lkey;
	for (i = 0; i < 20000; i++) {
		struct fe_qp *q;
		uint64_t addr, len;
		uint32_t key;
		int need, rc;

		seed = seed * 1103515245u + 12345u;
		q = &qp[(seed >> 8) & 1];
		key = keys[(seed >> 10) % 6];
		need = needs[(seed >> 14) % 3];
		addr = (uint64_t)(uintptr_t)p + ((seed >> 16) % (3 * pg + 64)) - 32;
		len = 1 + (seed >> 3) % 700;
		r = fe_mr_remote(dev, q->pd, q, (int)q->attr.qp_access_flags, addr, key, len, need);
		rc = fe_mem_view_remote(&v, q->qpn, addr, key, len, need, &w);
		if (rc == 0) {
			/* the same byte, seen through the two mappings */
			assert_non_null(r);
			w[0] = (char)i;
			assert_int_equal(*r, (char)i);
			granted++;
		}
		if ((rc == 0) == (r != NULL))
			agree++;
		else
			fail_msg("request %u: responder %s, requester %d (qpn %u key %#x addr +%lld len %llu need %#x)",
				 i, r ? "grants" : "refuses", rc, q->qpn, key,
				 (long long)(addr - (uint64_t)(uintptr_t)p), (unsigned long long)len,
				 need);
	}
	tr_note("%u requests, %u granted, all agreeing", agree, granted);
	assert_true(granted > 100 && granted < 19000);
	for (i = 0; i < 2; i++)
		fe_mw_del(dev, &mw[i]);
	for (i = 0; i < 3; i++)
		fe_mr_del(dev, &mr[i]);
	fe_qp_del(&qp[0]);
	fe_qp_del(&qp[1]);
	fe_mem_peer_unmap(&v);
	munmap(p, 3 * pg);
}

/* Another process maps the memfd (as a requester does its peer's) and
 * places into the region: each side sees the other's writes. */
TR_TEST_FX(peer_process_sees_writes_both_ways, setup, teardown)
{
	char *p = anon(1, PROT_READ | PROT_WRITE);
	volatile char *vp = p;
	struct fe_mr mr;
	struct fe_qp qp;
	int go[2], back[2];
	pid_t pid;
	char c;
	int st;

	(void)state;
	qp_init(&qp, 3000, PD, ALL);
	mr_init(&mr, PD, p, pg, ALL);
	assert_non_null(mr.bk);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct fe_mem_view v;
		volatile char *w;
		char *wp;

		fe_mem_peer_map(&v, memfd, BASE);
		TR_ASSERT(v.tabs != NULL);
		TR_ASSERT(fe_mem_view_remote(&v, 3000, (uint64_t)(uintptr_t)p + 40, mr.rkey, 8,
					     IBV_ACCESS_REMOTE_WRITE, &wp) == 0);
		w = wp;
		w[0] = 'C';				/* the peer writes */
		TR_ASSERT(write(back[1], "1", 1) == 1);
		TR_ASSERT(read(go[0], &c, 1) == 1);	/* the owner wrote */
		TR_EXPECT(w[1] == 'O');
		_exit(0);
	}
	assert_int_equal(read(back[0], &c, 1), 1);
	assert_int_equal(vp[40], 'C');
	vp[41] = 'O';
	assert_int_equal(write(go[1], "1", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fe_mr_del(dev, &mr);
	fe_qp_del(&qp);
	munmap(p, pg);
}

/* IBVCT_MR_SHARE=0: no region is remapped (read once, at the first). */
TR_TEST_FX(mr_share_0_keeps_every_region, setup, teardown)
{
	char *p = anon(1, PROT_READ | PROT_WRITE);

	(void)state;
	setenv("IBVCT_MR_SHARE", "0", 1);
	stays(p, pg, "memory under IBVCT_MR_SHARE=0");
	munmap(p, pg);
}

/* A region imported by another process (fe_mem.h, foreign regions): the
 * importer maps the exporter's memfd range and registers it with the
 * region's keys; through its lkey and its rkey it reaches the exporter's
 * bytes, both ways. */
TR_TEST_FX(foreign_region_is_the_same_bytes, setup, teardown)
{
	char *p = anon(2, PROT_READ | PROT_WRITE), *stackless;
	volatile char *vp;
	struct fe_mr mr;
	uint64_t off;
	int fd, go[2], back[2], st;
	pid_t pid;
	char c;

	(void)state;
	mr_init(&mr, PD, p + 32, pg, ALL);
	assert_int_equal(fe_mem_mr_export(&mr, &fd, &off), 0);
	stackless = NULL;
	{
		/* a region that stayed as it is cannot be exported */
		char *ro = anon(1, PROT_READ);
		struct fe_mr r;

		mr_init(&r, PD, ro, pg, IBV_ACCESS_REMOTE_READ);
		assert_int_equal(fe_mem_mr_export(&r, &fd, &off), ENOENT);
		fe_mr_del(dev, &r);
		munmap(ro, pg);
		assert_int_equal(fe_mem_mr_export(&mr, &fd, &off), 0);
	}
	assert_int_equal(fe_mem_foreign_map(fd, off, UINT64_MAX / 2, &stackless), EINVAL);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ibv_sge sge;
		struct fe_mr imp;
		struct fe_qp qp;
		char *a, *l, *r;

		/* what the child handler of fork does: the parent's are not ours */
		fe_mem_fork_child();
		fe_mr_del(dev, &mr);		/* the importer has no such region */
		/* the memfd as the importer receives it: another fd of the file */
		TR_ASSERT(fe_mem_foreign_map(memfd, off, pg, &a) == 0);
		memset(&imp, 0, sizeof(imp));
		imp.pd = PD2;
		imp.addr = a;
		imp.length = pg;
		imp.iova = mr.iova;
		imp.access = ALL;
		TR_ASSERT(fe_mr_add_keys(dev, &imp, mr.lkey, mr.rkey) == 0);
		{
			struct fe_mr twice = imp;

			TR_EXPECT(fe_mr_add_keys(dev, &twice, mr.lkey, mr.rkey) == EEXIST);
		}
		sge.addr = mr.iova + 8;
		sge.length = 8;
		sge.lkey = mr.lkey;
		l = fe_mr_local(dev, PD2, &sge, true);
		TR_ASSERT(l == a + 8);
		memset(&qp, 0, sizeof(qp));
		fe_qp_init(&qp, IBV_QPT_RC);
		qp.pd = PD2;
		r = fe_mr_remote(dev, PD2, &qp, ALL, mr.iova + 16, mr.rkey, 8,
				 IBV_ACCESS_REMOTE_WRITE);
		TR_ASSERT(r == a + 16);
		l[0] = 'L';
		r[0] = 'R';
		TR_ASSERT(write(back[1], "1", 1) == 1);
		TR_ASSERT(read(go[0], &c, 1) == 1);
		TR_EXPECT(a[24] == 'E');
		fe_mr_del(dev, &imp);
		fe_mem_foreign_unmap(a, pg);
		_exit(0);
	}
	assert_int_equal(read(back[0], &c, 1), 1);
	vp = p + 32;
	assert_int_equal(vp[8], 'L');
	assert_int_equal(vp[16], 'R');
	vp[24] = 'E';
	assert_int_equal(write(go[1], "1", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(fpt_shared_at(p));		/* the child's dereg left ours */
	fe_mr_del(dev, &mr);
	munmap(p, 2 * pg);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
