/* SPDX-License-Identifier: MIT */
/*
 * Registered memory other processes reach (fe_mem.h; engine/README.md,
 * "Registered memory").
 *
 * Each device's inbox memfd (transport.c) is grown past the inbox by two
 * parts: the published tables (keys, one-sided targets) and a data region.
 * A registered region's pages are copied into the data region and the
 * memfd is mapped MAP_SHARED over the same addresses with the same
 * protection, so the application sees nothing change while a peer that
 * maps the memfd reaches the same bytes. Pages are counted (struct
 * fe_backing): two regions on one page share it, and the last deregistration
 * makes the pages private anonymous memory again, with their contents, and
 * punches the memfd range. Data offsets are never reused in the life of a
 * memfd, so a stale peer never writes into a newer region.
 *
 * The tables are written by the owner only (under the plugin lock) and read
 * by peers without a lock: each entry has a sequence count, odd while it is
 * being written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fe_mem.h"

#define FE_MEM_MAGIC	0x6d656d66u		/* "fmem" */
#define FE_MEM_NKEYS	4096u			/* key table slots (a power of 2) */
#define FE_MEM_NQPS	2048u			/* QP table slots (a power of 2) */
#define FE_MEM_DATA	(8ull << 30)		/* the data region: offsets of a memfd's life */
#define FE_MEM_TRIES	8			/* reads of an entry that changes under us */
#define FE_FRAMES	(64u << 10)		/* below a frame: the stack its callees take */

struct fe_mem_key_ent {
	uint32_t seq;
	uint32_t valid;
	struct fe_key_rec rec;
	uint32_t gone;			/* outside the sequence: the rkey of a region destroyed
				 * through an importer (fe_mem_mr_kill) */
};

struct fe_mem_qp_ent {
	uint32_t seq;
	uint32_t valid;
	uint32_t qpn;
	uint32_t type;			/* enum ibv_qp_type */
	uint32_t state;			/* enum ibv_qp_state */
	int32_t access;			/* qp_access_flags */
	uint32_t rx_blocked;		/* RC: a stream blocked behind an RNR NAK */
	uint32_t err;			/* set outside the sequence (fe_mem_qp_errored) */
	uint64_t pd;
};

struct fe_mem_tabs {
	uint32_t magic, nkeys, nqps, pad;
	uint64_t data_off, data_size;	/* the data region in the memfd */
	struct fe_mem_key_ent keys[FE_MEM_NKEYS];
	struct fe_mem_qp_ent qps[FE_MEM_NQPS];
};

/* A device's memfd as its owner uses it. */
struct fe_memdev {
	const struct fe_dev *dev;		/* the device it is of: its identity, never read */
	int fd;
	bool attached;			/* its transport is up; else it waits for its backings */
	bool dead;			/* inherited through fork(): the parent's */
	unsigned refs;			/* backings on it */
	ino_t ino;
	dev_t sdev;
	struct fe_mem_tabs *tabs;
	size_t tabs_len;
	uint64_t next;			/* the next data offset never used */
	const void *key_owner[FE_MEM_NKEYS];	/* which object holds each slot */
	/* a record left published by a region whose context closed while its
	 * file lives on (fe_pub_leave): kept when md goes */
	bool key_kept[FE_MEM_NKEYS];
	const void *qp_owner[FE_MEM_NQPS];
	bool key_is_mr[FE_MEM_NKEYS];
};

/* Pages of this process backed by a memfd, counted one by one. */
struct fe_backing {
	struct fe_backing *next;
	uintptr_t start;
	size_t len;
	struct fe_memdev *md;
	uint64_t moff;			/* the data offset of start */
	int prot;
	bool dead;			/* inherited through fork() */
	size_t live;			/* pages counted */
	uint32_t *ref;			/* per page */
};

static void fe_key_write(struct fe_memdev *md, unsigned slot, const struct fe_key_rec *rec);

/* The devices' memfds this process owns (a device is its pointer here:
 * this file is below the registry, which owns struct fe_dev). */
static struct fe_memdev *fe_md[FP_MAX_DEVS];
static struct fe_backing *fe_bk;
static size_t fe_pg;
static int fe_share = -1;		/* IBVCT_MR_SHARE: 0 keeps regions as they are */

static size_t fe_page(void)
{
	if (!fe_pg)
		fe_pg = (size_t)sysconf(_SC_PAGESIZE);
	return fe_pg;
}

static size_t fe_tabs_len(void)
{
	return (sizeof(struct fe_mem_tabs) + fe_page() - 1) & ~(fe_page() - 1);
}

static bool fe_sharing(void)
{
	if (fe_share < 0) {
		const char *e = getenv("IBVCT_MR_SHARE");

		fe_share = !(e && !strcmp(e, "0"));
	}
	return fe_share;
}

/* ---- the check (one rule for the responder and for requesters) ------------ */
static bool fe_in(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
{
	return addr >= base && len <= size && addr - base <= size - len;
}

bool fe_key_check(const struct fe_key_rec *k, uint64_t pd, uint32_t qpn, int qp_access,
		  uint64_t addr, uint64_t len, int need, uint64_t *off)
{
	switch (k->kind) {
	case FE_KEY_MR:
		if (k->pd != pd || !(k->access & need) || !(qp_access & need) ||
		    !fe_in(addr, len, k->iova, k->length))
			return false;
		break;
	case FE_KEY_MW1:
	case FE_KEY_MW2:
		/* a bound window: its range of its region, its access */
		if ((k->pd != pd && !fp__quirk(FP_Q_MW_PD_UNCHECKED)) || /* @rule MW-03 */
		    !(k->access & need) ||
		    !(qp_access & need) ||
		    (!fp__quirk(FP_Q_MW_RANGE_UNCHECKED) && !k->range_is_region &&
		     !fe_in(addr, len, k->win_addr, k->win_length)) ||
		    !fe_in(addr, len, k->iova, k->length))
			return false;
		/* a type 2 window: through the QP that bound it only (linux v6.1
		 * drivers/infiniband/sw/rxe/rxe_mw.c rxe_lookup_mw) */
		if (k->kind == FE_KEY_MW2 && (qpn == FE_MEM_NO_QPN || k->qpn != qpn) && /* @rule MW-06 */
		    !fp__quirk(FP_Q_MW_QP_UNCHECKED))
			return false;
		break;
	default:
		return false;		/* an unbound window grants nothing */
	}
	*off = addr - k->iova;
	return true;
}

void fe_mr_key_rec(const struct fe_mr *mr, struct fe_key_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->rkey = mr->rkey;
	r->kind = FE_KEY_MR;
	r->pd = (uint64_t)(uintptr_t)mr->pd;
	r->iova = mr->iova;
	r->length = mr->length;
	r->access = mr->access;
	r->qpn = FE_MEM_NO_QPN;
	r->mapped = mr->bk && !mr->bk->dead;
	r->moff = r->mapped ? mr->moff : 0;
}

void fe_mw_key_rec(const struct fe_mw *w, struct fe_key_rec *r)
{
	if (!w->bound || !w->mr) {
		memset(r, 0, sizeof(*r));
		r->rkey = w->rkey;
		return;
	}
	fe_mr_key_rec(w->mr, r);
	r->rkey = w->rkey;
	r->kind = w->type == IBV_MW_TYPE_2 ? FE_KEY_MW2 : FE_KEY_MW1;
	r->pd = (uint64_t)(uintptr_t)w->pd;
	r->win_addr = w->addr;
	r->win_length = w->length;
	r->access = w->access;
	r->qpn = w->type == IBV_MW_TYPE_2 ? w->qpn : FE_MEM_NO_QPN;
	r->range_is_region = w->range_is_region;
}

/* ---- the sequence count of an entry ---------------------------------------- */
static void fe_seq_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void fe_seq_end(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* Copy an entry a peer reads: whether the copy is whole. */
static bool fe_seq_read(const uint32_t *seq, void *dst, const void *src, size_t n)
{
	int i;

	for (i = 0; i < FE_MEM_TRIES; i++) {
		uint32_t s = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (s & 1)
			continue;
		memcpy(dst, src, n);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seq, __ATOMIC_RELAXED) == s)
			return true;
	}
	return false;
}

/* ---- the owner's memfd -------------------------------------------------------- */
void fe_mem_attach(const struct fe_dev *dev, int fd, uint64_t base)
{
	struct fe_memdev *md;
	struct stat st;
	int i, at = -1;
	void *m;

	for (i = FP_MAX_DEVS - 1; i >= 0; i--)
		if (!fe_md[i])
			at = i;
		else if (fe_md[i]->dev == dev)
			return;
	if (at < 0 || (base & (fe_page() - 1)))
		return;
	md = calloc(1, sizeof(*md));
	if (!md)
		return;
	md->tabs_len = fe_tabs_len();
	if (ftruncate(fd, (off_t)(base + md->tabs_len + FE_MEM_DATA)) || fstat(fd, &st))
		goto err;
	md->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (md->fd < 0)
		goto err;
	m = mmap(NULL, md->tabs_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)base);
	if (m == MAP_FAILED) {
		close(md->fd);
		goto err;
	}
	md->tabs = m;
	md->tabs->nkeys = FE_MEM_NKEYS;
	md->tabs->nqps = FE_MEM_NQPS;
	md->tabs->data_off = base + md->tabs_len;
	md->tabs->data_size = FE_MEM_DATA;
	__atomic_store_n(&md->tabs->magic, FE_MEM_MAGIC, __ATOMIC_RELEASE);
	md->ino = st.st_ino;
	md->sdev = st.st_dev;
	md->attached = true;
	md->dev = dev;
	fe_md[at] = md;
	return;
err:
	free(md);
}

static void fe_md_put(struct fe_memdev *md)
{
	if (md->attached || md->refs)
		return;
	if (md->tabs)
		munmap(md->tabs, md->tabs_len);
	if (md->fd >= 0)
		close(md->fd);
	free(md);
}

/* The objects published in md forget it (it goes, or it is the parent's). */
static void fe_md_unlink(struct fe_memdev *md)
{
	unsigned i;

	for (i = 0; i < FE_MEM_NKEYS; i++)
		if (md->key_owner[i]) {
			((struct fe_mem_pub *)md->key_owner[i])->md = NULL;
			md->key_owner[i] = NULL;
		}
	for (i = 0; i < FE_MEM_NQPS; i++)
		if (md->qp_owner[i]) {
			((struct fe_qp *)md->qp_owner[i])->pub.md = NULL;
			md->qp_owner[i] = NULL;
		}
}

void fe_mem_detach(const struct fe_dev *dev)
{
	struct fe_memdev *md;
	unsigned i;
	int k;

	for (k = 0; k < FP_MAX_DEVS && !(fe_md[k] && fe_md[k]->dev == dev); k++)
		;
	if (k == FP_MAX_DEVS)
		return;
	md = fe_md[k];
	fe_md[k] = NULL;
	md->attached = false;
	fe_md_unlink(md);
	/* nothing is published any more: peers that still map it find
	 * nothing valid (they take the old path, which finds nobody); each
	 * entry through its sequence count, as a peer may be reading it */
	for (i = 0; i < FE_MEM_NKEYS; i++)
		if (md->tabs->keys[i].valid && !md->key_kept[i])
			fe_key_write(md, i, NULL);
	for (i = 0; i < FE_MEM_NQPS; i++) {
		struct fe_mem_qp_ent *e = &md->tabs->qps[i];

		if (!e->valid)
			continue;
		fe_seq_begin(&e->seq);
		e->valid = 0;
		fe_seq_end(&e->seq);
	}
	fe_md_put(md);
}

/* ---- a peer's view ------------------------------------------------------------ */
void fe_mem_peer_map(struct fe_mem_view *v, int fd, uint64_t base)
{
	size_t tl = fe_tabs_len();
	struct fe_mem_tabs *t;
	struct stat st;
	void *m, *d;

	memset(v, 0, sizeof(*v));
	/* a file without tables (a process that never grew it) would fault */
	if (fstat(fd, &st) || (uint64_t)st.st_size < base + tl + FE_MEM_DATA)
		return;
	m = mmap(NULL, tl, PROT_READ, MAP_SHARED, fd, (off_t)base);
	if (m == MAP_FAILED)
		return;
	t = m;
	if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) != FE_MEM_MAGIC ||
	    t->nkeys != FE_MEM_NKEYS || t->nqps != FE_MEM_NQPS ||
	    t->data_off != base + tl || t->data_size != FE_MEM_DATA)
		goto err;
	d = mmap(NULL, FE_MEM_DATA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd,
		 (off_t)t->data_off);
	if (d == MAP_FAILED)
		goto err;
	v->tabs = t;
	v->data = d;
	v->data_size = FE_MEM_DATA;
	return;
err:
	munmap(m, tl);
}

void fe_mem_peer_unmap(struct fe_mem_view *v)
{
	if (v->data)
		munmap(v->data, v->data_size);
	if (v->tabs)
		munmap((void *)v->tabs, fe_tabs_len());
	memset(v, 0, sizeof(*v));
}

/* ---- the requester's check ------------------------------------------------------ */
int fe_mem_view_remote(const struct fe_mem_view *v, uint32_t dst_qpn, uint64_t addr,
		       uint32_t rkey, uint64_t len, int need, char **where)
{
	struct fe_mem_qp_ent q;
	struct fe_mem_key_ent k;
	const struct fe_mem_qp_ent *qe;
	const struct fe_mem_key_ent *ke;
	uint64_t off;

	*where = NULL;
	if (!v || !v->tabs || !len)
		return FE_MEM_FALLBACK;
	/* GET_QP: an RC QP able to receive; CHK_SEQ: no stream blocked */
	qe = &v->tabs->qps[dst_qpn & (FE_MEM_NQPS - 1)];
	if (!fe_seq_read(&qe->seq, &q, qe, sizeof(q)) || !q.valid || q.qpn != dst_qpn ||
	    q.type != IBV_QPT_RC || q.rx_blocked ||
	    (q.state != IBV_QPS_RTR && q.state != IBV_QPS_RTS && q.state != IBV_QPS_SQD) ||
	    __atomic_load_n(&qe->err, __ATOMIC_ACQUIRE))
		return FE_MEM_FALLBACK;
	/* CHK_RKEY */
	ke = &v->tabs->keys[(rkey >> 8) & (FE_MEM_NKEYS - 1)];
	if (!fe_seq_read(&ke->seq, &k, ke, sizeof(k)) || !k.valid || k.rec.rkey != rkey ||
	    __atomic_load_n(&ke->gone, __ATOMIC_ACQUIRE) == rkey ||
	    !k.rec.mapped ||
	    !fe_key_check(&k.rec, q.pd, dst_qpn, q.access, addr, len, need, &off) ||
	    k.rec.moff > v->data_size || off > v->data_size - k.rec.moff ||
	    len > v->data_size - k.rec.moff - off)
		return FE_MEM_FALLBACK;
	*where = v->data + k.rec.moff + off;
	return 0;
}

/* ---- publishing ------------------------------------------------------------------- */
static struct fe_memdev *fe_md_of(const struct fe_dev *dev)
{
	int i;

	for (i = 0; i < FP_MAX_DEVS; i++)
		if (fe_md[i] && fe_md[i]->dev == dev)
			return fe_md[i];
	return NULL;
}

static unsigned fe_key_slot(uint32_t key)
{
	return (key >> 8) & (FE_MEM_NKEYS - 1);
}

bool fe_mem_key_slot_free(const struct fe_dev *dev, uint32_t key)
{
	struct fe_memdev *md = fe_md_of(dev);

	return !md || !md->key_owner[fe_key_slot(key)];
}

static void fe_key_write(struct fe_memdev *md, unsigned slot, const struct fe_key_rec *rec)
{
	struct fe_mem_key_ent *e = &md->tabs->keys[slot];

	if (rec && __atomic_load_n(&e->gone, __ATOMIC_RELAXED) != rec->rkey)
		__atomic_store_n(&e->gone, 0, __ATOMIC_RELAXED);	/* a mark of a former key */
	fe_seq_begin(&e->seq);
	if (rec) {
		e->rec = *rec;
		e->valid = 1;
	} else {
		e->valid = 0;
		memset(&e->rec, 0, sizeof(e->rec));
	}
	fe_seq_end(&e->seq);
}

static void fe_pub_drop(struct fe_mem_pub *pub)
{
	struct fe_memdev *md = pub->md;

	if (!md)
		return;
	pub->md = NULL;
	if (md->dead || !md->attached || md->key_owner[pub->slot] != pub)
		return;
	md->key_owner[pub->slot] = NULL;
	fe_key_write(md, (unsigned)pub->slot, NULL);
}

/* Let go of pub but leave its record in the table: a region whose pages stay
 * pinned after its context closed (fe_mr.keep_bytes), whose importers in
 * other processes still read the record; a new key may take the slot later. */
static void fe_pub_leave(struct fe_mem_pub *pub)
{
	struct fe_memdev *md = pub->md;

	if (!md)
		return;
	pub->md = NULL;
	if (!md->dead && md->attached && md->key_owner[pub->slot] == pub) {
		md->key_owner[pub->slot] = NULL;
		md->key_kept[pub->slot] = true;
	}
}

/* Publish rec for the object whose record pub is (an MR wins a slot held by
 * a window of the same key, as fe_mr_remote looks at regions first). */
static void fe_pub_key(const struct fe_dev *dev, struct fe_mem_pub *pub,
		       const struct fe_key_rec *rec, bool is_mr)
{
	struct fe_memdev *md = fe_md_of(dev);
	unsigned slot = fe_key_slot(rec->rkey);

	if (pub->md && (pub->md != md || (unsigned)pub->slot != slot))
		fe_pub_drop(pub);
	if (!md || md->dead || !rec->kind || !rec->mapped) {
		fe_pub_drop(pub);
		return;
	}
	if (md->key_owner[slot] && md->key_owner[slot] != pub) {
		const struct fe_mem_pub *o = md->key_owner[slot];

		if (!is_mr || md->key_is_mr[slot] || md->tabs->keys[slot].rec.rkey != rec->rkey)
			return;		/* taken: not published, the old path */
		((struct fe_mem_pub *)o)->md = NULL;
	}
	md->key_owner[slot] = pub;
	md->key_kept[slot] = false;
	md->key_is_mr[slot] = is_mr;
	pub->md = md;
	pub->slot = (int)slot;
	fe_key_write(md, slot, rec);
}

void fe_mem_mr_publish(struct fe_dev *dev, struct fe_mr *mr)
{
	struct fe_key_rec rec;

	fe_mr_key_rec(mr, &rec);
	fe_pub_key(dev, &mr->pub, &rec, true);
}

void fe_mem_mw_publish(struct fe_dev *dev, struct fe_mw *w)
{
	struct fe_key_rec rec;

	fe_mw_key_rec(w, &rec);
	/* a window reaches peers through its region's memfd only */
	if (w->bound && w->mr && w->mr->bk && w->mr->bk->md != fe_md_of(dev))
		rec.mapped = false;
	fe_pub_key(dev, &w->pub, &rec, false);
}

void fe_mem_mw_unpublish(struct fe_mw *w)
{
	fe_pub_drop(&w->pub);
}

void fe_mem_qp_publish(struct fe_qp *qp)
{
	struct fe_memdev *md = qp->dev ? fe_md_of(qp->dev) : NULL;
	unsigned slot = qp->qpn & (FE_MEM_NQPS - 1);
	struct fe_mem_qp_ent *e;

	if (qp->pub.md && qp->pub.md != md)
		fe_mem_qp_unpublish(qp);
	/* only what a requester may place into: RC */
	if (!md || md->dead || qp->type != IBV_QPT_RC ||
	    (md->qp_owner[slot] && md->qp_owner[slot] != qp))
		return;
	md->qp_owner[slot] = qp;
	qp->pub.md = md;
	qp->pub.slot = (int)slot;
	e = &md->tabs->qps[slot];
	fe_seq_begin(&e->seq);
	e->valid = 1;
	e->qpn = qp->qpn;
	e->type = qp->type;
	e->state = qp->state;
	e->access = (int32_t)qp->attr.qp_access_flags;
	e->rx_blocked = qp->rx_blocked;
	e->pd = (uint64_t)(uintptr_t)qp->pd;
	/* an error seen from an async event ends with the QP's reset */
	if (qp->state == IBV_QPS_RESET)
		__atomic_store_n(&e->err, 0, __ATOMIC_RELAXED);
	fe_seq_end(&e->seq);
}

void fe_mem_qp_unpublish(struct fe_qp *qp)
{
	struct fe_memdev *md = qp->pub.md;
	struct fe_mem_qp_ent *e;

	if (!md)
		return;
	qp->pub.md = NULL;
	if (md->dead || !md->attached || md->qp_owner[qp->pub.slot] != qp)
		return;
	md->qp_owner[qp->pub.slot] = NULL;
	e = &md->tabs->qps[qp->pub.slot];
	fe_seq_begin(&e->seq);
	e->valid = 0;
	e->qpn = 0;
	__atomic_store_n(&e->err, 0, __ATOMIC_RELAXED);
	fe_seq_end(&e->seq);
}

void fe_mem_qp_errored(struct fe_qp *qp)
{
	struct fe_memdev *md = __atomic_load_n(&qp->pub.md, __ATOMIC_ACQUIRE);

	if (md && !md->dead && md->attached)
		__atomic_store_n(&md->tabs->qps[qp->pub.slot].err, 1, __ATOMIC_RELEASE);
}

/* ---- backing pages ------------------------------------------------------------------ */
/* Copy len bytes of this process from src to dst without touching them from
 * user space: the kernel reads them, so neither a sanitizer's poisoned
 * redzones nor a checker's undefined bytes on the same pages complain. */
static bool fe_copy(void *dst, const void *src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)src, len };

	while (l.iov_len) {
		ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return false;
		}
		l.iov_base = (char *)l.iov_base + n;
		l.iov_len -= (size_t)n;
		r.iov_base = (char *)r.iov_base + n;
		r.iov_len -= (size_t)n;
	}
	return true;
}

/* One line of /proc/self/maps. */
struct fe_map {
	uintptr_t lo, hi;
	char perm[5];
	uint64_t off;
	unsigned long ino;
	char name[256];
};

static bool fe_map_parse(const char *line, struct fe_map *m)
{
	unsigned long lo, hi, ino;
	unsigned long long off;
	unsigned maj, min;
	int n = 0;

	if (sscanf(line, "%lx-%lx %4s %llx %x:%x %lu %n", &lo, &hi, m->perm, &off, &maj, &min,
		   &ino, &n) < 7)
		return false;
	m->lo = lo;
	m->hi = hi;
	m->off = off;
	m->ino = ino;
	snprintf(m->name, sizeof(m->name), "%s", line + n);
	m->name[strcspn(m->name, "\n")] = 0;
	return true;
}

static int fe_map_prot(const struct fe_map *m)
{
	return (m->perm[0] == 'r' ? PROT_READ : 0) | (m->perm[1] == 'w' ? PROT_WRITE : 0) |
	       (m->perm[2] == 'x' ? PROT_EXEC : 0);
}

/*
 * Whether [a, b) may be remapped: private writable memory, whole, of one
 * protection, and none of what must stay as it is (engine/README.md). The
 * protection in *prot.
 */
static bool fe_range_ok(uintptr_t a, uintptr_t b, int *prot)
{
	/* the calling thread's stack: the mapping its frames are in */
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	char line[512];
	uintptr_t at_ = a;
	FILE *f;
	struct fe_map m;
	bool ok = true;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	*prot = -1;
	while (ok && at_ < b && fgets(line, sizeof(line), f)) {
		if (!fe_map_parse(line, &m) || m.hi <= at_)
			continue;
		if (m.lo > at_) {
			ok = false;		/* a hole: not whole */
			break;
		}
		if (m.perm[0] != 'r' || m.perm[1] != 'w' || m.perm[3] != 'p' ||
		    (*prot >= 0 && *prot != fe_map_prot(&m)) ||
		    (m.name[0] == '[' && strcmp(m.name, "[heap]")) ||	/* stack, vdso, vvar */
		    !strncmp(m.name, "/dev/", 5) || strstr(m.name, "huge") ||
		    strstr(m.name, "SYSV") ||
		    (sp >= m.lo && sp < m.hi))
			ok = false;
		*prot = fe_map_prot(&m);
		at_ = m.hi;
	}
	fclose(f);
	return ok && at_ >= b;
}

/*
 * Whether [a, b) is MADV_DONTFORK (VM_DONTCOPY, "dc" in the VmFlags of
 * /proc/self/smaps): 1 all of it, 0 none, -1 part or unreadable. A mremap
 * over the range gives it the new mapping's flags, so the swap has to set
 * it again: fork protection (ibv_fork_init) marks registered ranges so
 * before the driver's reg_mr (rdma-core v44.0 libibverbs/verbs.c:320) and
 * a child must not get them.
 */
static int fe_range_dontfork(uintptr_t a, uintptr_t b)
{
	char line[512];
	struct fe_map m;
	bool in = false;
	int all = -2;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (fe_map_parse(line, &m)) {
			if (m.lo >= b)
				break;
			in = m.hi > a;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			int dc = strstr(line, " dc") != NULL;

			all = all == -2 || all == dc ? dc : -1;
			in = false;
		}
	}
	fclose(f);
	return all < 0 ? -1 : all;
}

/* Replace [a, a + len) by the memfd's pages at data offset moff, with their
 * contents, in one step (mremap over). */
static bool fe_swap_in(struct fe_memdev *md, uintptr_t a, size_t len, uint64_t moff, int prot,
		       bool dontfork)
{
	/* populated at once: every page is written next, and one fault per page
	 * costs more than the kernel filling them in a loop */
	void *t = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, md->fd,
		       (off_t)(md->tabs->data_off + moff));

	if (t == MAP_FAILED)
		return false;
	if (!fe_copy(t, (void *)a, len) || (prot != (PROT_READ | PROT_WRITE) &&
					     mprotect(t, len, prot)) ||
	    mremap(t, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) == MAP_FAILED) {
		munmap(t, len);
		return false;
	}
	if (dontfork)
		madvise((void *)a, len, MADV_DONTFORK);
	return true;
}

/* Make [a, a + len) private anonymous memory again, with its contents (and
 * MADV_DONTFORK when it was: another region the library counts may hold
 * these pages still). */
static void fe_swap_out(uintptr_t a, size_t len, int prot, bool dontfork)
{
	void *t = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (t == MAP_FAILED)
		return;
	if (!fe_copy(t, (void *)a, len) || (prot != (PROT_READ | PROT_WRITE) &&
					     mprotect(t, len, prot)) ||
	    mremap(t, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) == MAP_FAILED)
		munmap(t, len);
	else if (dontfork)
		madvise((void *)a, len, MADV_DONTFORK);
}

/* The parts of [a, b) still mapped from md's memfd where bk put them, made
 * private again (a region unmapped by the application, or mapped anew
 * there, is left as it is). Not the one holding the calling thread's frames
 * (registered by another thread): it stays shared, and false says that its
 * memfd pages must stay too. */
static bool fe_restore(const struct fe_backing *bk, uintptr_t a, uintptr_t b)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	char line[512];
	struct fe_map m;
	FILE *f = fopen("/proc/self/maps", "re");
	bool all = true;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (!fe_map_parse(line, &m) || m.hi <= a)
			continue;
		if (m.lo >= b)
			break;
		lo = m.lo > a ? m.lo : a;
		hi = m.hi < b ? m.hi : b;
		if (m.perm[3] != 's' || m.ino != (unsigned long)bk->md->ino ||
		    m.off + (lo - m.lo) != bk->md->tabs->data_off + bk->moff + (lo - bk->start))
			continue;
		/* where this call's own frames are, or will be while it copies */
		if (lo < sp + 4096 && hi > sp - FE_FRAMES)
			all = false;
		else
			fe_swap_out(lo, hi - lo, fe_map_prot(&m), fe_range_dontfork(lo, hi) > 0);
	}
	fclose(f);
	return all;
}

static struct fe_backing *fe_bk_find(uintptr_t a, uintptr_t b, bool *overlap)
{
	struct fe_backing *bk;

	*overlap = false;
	for (bk = fe_bk; bk; bk = bk->next) {
		if (bk->dead || a >= bk->start + bk->len || b <= bk->start)
			continue;
		*overlap = true;
		if (a >= bk->start && b <= bk->start + bk->len)
			return bk;
	}
	return NULL;
}

static void fe_bk_free(struct fe_backing *bk)
{
	struct fe_backing **pp;

	for (pp = &fe_bk; *pp; pp = &(*pp)->next)
		if (*pp == bk) {
			*pp = bk->next;
			break;
		}
	bk->md->refs--;
	fe_md_put(bk->md);
	free(bk->ref);
	free(bk);
}

/* Count the pages of [a, b) in bk once more. */
static void fe_bk_get(struct fe_backing *bk, uintptr_t a, uintptr_t b)
{
	size_t i;

	for (i = (a - bk->start) / fe_page(); i < (b - bk->start) / fe_page(); i++)
		if (!bk->ref[i]++)
			bk->live++;
}

/* Back [a, b) by md's memfd: a new backing, or NULL (left as it is). */
static struct fe_backing *fe_bk_new(struct fe_memdev *md, uintptr_t a, uintptr_t b)
{
	struct fe_backing *bk;
	size_t len = b - a;
	int prot, dontfork;

	if (len > FE_MEM_DATA - md->next || !fe_range_ok(a, b, &prot) ||
	    (dontfork = fe_range_dontfork(a, b)) < 0)
		return NULL;
	bk = calloc(1, sizeof(*bk));
	if (!bk)
		return NULL;
	bk->ref = calloc(len / fe_page(), sizeof(*bk->ref));
	if (!bk->ref) {
		free(bk);
		return NULL;
	}
	bk->start = a;
	bk->len = len;
	bk->md = md;
	bk->moff = md->next;
	bk->prot = prot;
	/* the offsets are used even when the swap fails: never again */
	md->next += len;
	if (!fe_swap_in(md, a, len, bk->moff, prot, dontfork)) {
		fallocate(md->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  (off_t)(md->tabs->data_off + bk->moff), (off_t)len);
		free(bk->ref);
		free(bk);
		return NULL;
	}
	md->refs++;
	bk->next = fe_bk;
	fe_bk = bk;
	return bk;
}

/* The region's pages, [a, b) page-rounded. */
static void fe_mr_pages(const struct fe_mr *mr, uintptr_t *a, uintptr_t *b)
{
	*a = (uintptr_t)mr->addr & ~(fe_page() - 1);
	*b = ((uintptr_t)mr->addr + mr->length + fe_page() - 1) & ~(fe_page() - 1);
}

void fe_mem_mr_add(struct fe_dev *dev, struct fe_mr *mr)
{
	struct fe_memdev *md = fe_md_of(dev);
	struct fe_backing *bk = NULL;
	uintptr_t a, b;
	bool overlap;

	mr->bk = NULL;
	mr->moff = 0;
	if (md && !md->dead && mr->length && mr->addr && fe_sharing() &&
	    (uintptr_t)mr->addr + mr->length > (uintptr_t)mr->addr) {
		fe_mr_pages(mr, &a, &b);
		bk = fe_bk_find(a, b, &overlap);
		/* pages backed already: the same backing only (on another
		 * device's memfd, or partly, it stays as it is) */
		if (bk && bk->md != md)
			bk = NULL;
		else if (!bk && !overlap)
			bk = fe_bk_new(md, a, b);
		if (bk) {
			fe_bk_get(bk, a, b);
			mr->bk = bk;
			mr->moff = bk->moff + ((uintptr_t)mr->addr - bk->start);
		}
	}
	fe_mem_mr_publish(dev, mr);
}

void fe_mem_mr_del(struct fe_mr *mr)
{
	struct fe_backing *bk = mr->bk;
	uintptr_t a, b, run = 0;
	size_t i, end;
	bool in = false;

	if (mr->keep_bytes && bk) {
		/* its pages stay counted and its record published: shared, as
		 * pinned pages stay while the file lives */
		fe_pub_leave(&mr->pub);
		mr->bk = NULL;
		return;
	}
	fe_pub_drop(&mr->pub);
	mr->bk = NULL;
	if (!bk)
		return;
	fe_mr_pages(mr, &a, &b);
	end = (b - bk->start) / fe_page();
	for (i = (a - bk->start) / fe_page(); i <= end; i++) {
		bool last = i < end && bk->ref[i] && !--bk->ref[i];

		if (last) {
			bk->live--;
			if (!in)
				run = bk->start + i * fe_page();
			in = true;
			continue;
		}
		if (in && !bk->dead) {
			/* the pages nobody counts any more: private again, and
			 * their memfd range freed */
			uintptr_t hi = bk->start + i * fe_page();

			if (fe_restore(bk, run, hi))
				fallocate(bk->md->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					  (off_t)(bk->md->tabs->data_off + bk->moff +
						  (run - bk->start)),
					  (off_t)(hi - run));
		}
		in = false;
	}
	if (!bk->live)
		fe_bk_free(bk);
}

/* ---- fork ------------------------------------------------------------------------------- */
void fe_mem_fork_child(void)
{
	struct fe_backing *bk;
	int i;

	for (bk = fe_bk; bk; bk = bk->next) {
		size_t n = bk->len / fe_page(), j, k;

		if (!bk->dead && !fp__quirk(FP_Q_FORK_SHARES_MR)) {
			/* every run of counted pages: the child's own copy */
			for (j = 0; j < n; j = k) {
				for (; j < n && !bk->ref[j]; j++)
					;
				for (k = j; k < n && bk->ref[k]; k++)
					;
				if (k > j)
					fe_restore(bk, bk->start + j * fe_page(),
						   bk->start + k * fe_page());
			}
		}
		bk->dead = true;
		bk->md->dead = true;
	}
	/* the parent's tables and memfds are not the child's to write: its
	 * objects forget them, and backings inherited keep only their counts */
	for (i = 0; i < FP_MAX_DEVS; i++) {
		struct fe_memdev *md = fe_md[i];

		if (!md)
			continue;
		fe_md[i] = NULL;
		fe_md_unlink(md);
		md->dead = true;
		md->attached = false;
		munmap(md->tabs, md->tabs_len);
		md->tabs = NULL;
		close(md->fd);
		md->fd = -1;
		fe_md_put(md);
	}
}

/* ---- foreign regions (an MR imported from another process) ----------------------- */
int fe_mem_mr_export(const struct fe_mr *mr, int *fd, uint64_t *file_off)
{
	const struct fe_backing *bk = mr->bk;

	if (!bk || bk->dead || !bk->md->tabs || bk->md->fd < 0)
		return ENOENT;		/* its pages stayed as they are: no other process reaches them */
	*fd = bk->md->fd;
	*file_off = bk->md->tabs->data_off + mr->moff;
	return 0;
}

int fe_mem_foreign_map(int fd, uint64_t file_off, uint64_t len, char **addr)
{
	uint64_t in = file_off & (fe_page() - 1), span;
	struct stat st;
	void *m;

	*addr = NULL;
	if (!len || len > UINT64_MAX - in - fe_page())
		return EINVAL;
	span = (in + len + fe_page() - 1) & ~(uint64_t)(fe_page() - 1);
	/* past the file's end a mapping faults: refuse instead */
	if (fstat(fd, &st))
		return errno;
	if (!S_ISREG(st.st_mode) || file_off > (uint64_t)st.st_size ||
	    len > (uint64_t)st.st_size - file_off)
		return EINVAL;
	m = mmap(NULL, (size_t)span, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)(file_off - in));
	if (m == MAP_FAILED)
		return errno;
	*addr = (char *)m + in;
	return 0;
}

void fe_mem_foreign_unmap(char *addr, uint64_t len)
{
	uintptr_t in = (uintptr_t)addr & (fe_page() - 1);

	if (addr && len)
		munmap(addr - in, (in + len + fe_page() - 1) & ~(fe_page() - 1));
}

/* ---- a region destroyed through another context (fe_mem.h) ---------------------- */
int fe_mem_foreign_watch(struct fe_mr *mr, int fd, uint64_t file_off)
{
	size_t tl = fe_tabs_len();
	struct fe_mem_tabs *t;
	struct stat st;
	uint64_t base;
	void *m;

	/* the owner's tables sit just before its data region, which ends the
	 * file (fe_mem_attach) */
	if (fstat(fd, &st))
		return errno;
	if ((uint64_t)st.st_size < tl + FE_MEM_DATA)
		return EINVAL;
	base = (uint64_t)st.st_size - FE_MEM_DATA - tl;
	if (base & (fe_page() - 1))
		return EINVAL;
	m = mmap(NULL, tl, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)base);
	if (m == MAP_FAILED)
		return errno;
	t = m;
	if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) != FE_MEM_MAGIC ||
	    t->nkeys != FE_MEM_NKEYS || t->data_off != base + tl ||
	    t->data_size != FE_MEM_DATA || file_off < t->data_off) {
		munmap(m, tl);
		return EINVAL;
	}
	mr->ftabs = t;
	mr->fmoff = file_off - t->data_off;
	return 0;
}

void fe_mem_foreign_unwatch(struct fe_mr *mr)
{
	if (mr->ftabs)
		munmap(mr->ftabs, fe_tabs_len());
	mr->ftabs = NULL;
}

/* The owner's record of a foreign region's key, whole: false while the
 * owner is writing it (briefly, under its lock). */
static bool fe_foreign_rec(const struct fe_mr *mr, struct fe_mem_key_ent *k)
{
	const struct fe_mem_key_ent *e = &mr->ftabs->keys[fe_key_slot(mr->rkey)];
	int i;

	for (i = 0; i < 1000; i++) {
		if (fe_seq_read(&e->seq, k, e, sizeof(*k)))
			return true;
		sched_yield();
	}
	return false;
}

static bool fe_foreign_same(const struct fe_mr *mr, const struct fe_mem_key_ent *k)
{
	return k->valid && k->rec.rkey == mr->rkey && k->rec.mapped && k->rec.moff == mr->fmoff;
}

void fe_mem_mr_kill(struct fe_mr *mr)
{
	struct fe_mem_key_ent k;
	uint32_t *gone = NULL;

	mr->killed = true;
	if (mr->ftabs && fe_foreign_rec(mr, &k) && fe_foreign_same(mr, &k))
		gone = &mr->ftabs->keys[fe_key_slot(mr->rkey)].gone;
	else if (!mr->ftabs && mr->pub.md && !mr->pub.md->dead && mr->pub.md->tabs)
		gone = &mr->pub.md->tabs->keys[mr->pub.slot].gone;	/* peers' requesters */
	if (gone)
		__atomic_store_n(gone, mr->rkey, __ATOMIC_RELEASE);
}

/* Whether a foreign region went: deregistered by its owner, or destroyed by
 * an importer. Out of line, so that the owner's own regions, checked on
 * every message's path, read one word and copy no key record to the stack. */
static __attribute__((noinline)) bool fe_foreign_gone(const struct fe_mr *mr)
{
	struct fe_mem_key_ent k;

	return !fe_foreign_rec(mr, &k) || !fe_foreign_same(mr, &k) ||
	       __atomic_load_n(&mr->ftabs->keys[fe_key_slot(mr->rkey)].gone, __ATOMIC_ACQUIRE) ==
	       mr->rkey;
}

bool fe_mem_mr_gone(const struct fe_mr *mr)
{
	const struct fe_memdev *md = mr->pub.md;

	if (fp__quirk(FP_Q_IMPORT_STALE_HANDLE))
		return false;			/* the quirk: a destroyed region keeps working */
	if (mr->killed)
		return true;
	if (mr->ftabs)
		return fe_foreign_gone(mr);
	/* the owner's: destroyed by an importer in another process */
	return md && !md->dead && md->tabs &&
	       __atomic_load_n(&md->tabs->keys[mr->pub.slot].gone, __ATOMIC_ACQUIRE) == mr->rkey;
}
