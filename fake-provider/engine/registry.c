/* SPDX-License-Identifier: MIT */
/*
 * The process-local registry of a fake device: the QPs, SRQs and memory
 * keys of this process, local views of XRC domains and target QPs, the
 * plugin lock, and the upcalls the verbs layer installed. The device-wide
 * truth (numbers, domains by inode, target QPs and their handles) lives in
 * the fake kernel daemon; this only mirrors what this process holds.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fp_engine.h"
#include "fe_mem.h"

#define FE_HASH		64		/* buckets of each lookup table (a power of 2) */

struct fe_dev {
	bool ready;
	int devidx;
	unsigned users;
	struct fp_link qps, srqs, mrs, mws, doms;	/* all, in creation order */
	/* the data path's lookups, by number and by key */
	struct fp_link qp_hash[FE_HASH], srq_hash[FE_HASH], lkey_hash[FE_HASH], rkey_hash[FE_HASH];
	uint32_t key_state;
	struct fe_xport *xp;		/* this process's receive ring, while joined */
	struct fe_roce *roce;		/* its RoCE room (roce.c), once opened */
};

/* One bucket per value of a number's or key's low bits (QPNs count up, keys
 * look random). */
static unsigned fe_bucket(uint32_t v)
{
	return (v ^ (v >> 8)) & (FE_HASH - 1);
}

struct fe_dom {
	struct fe_dev *dev;
	struct fp_link link;
	uint32_t id;			/* the daemon's domain id */
	unsigned usecnt;		/* local handles, XRC SRQs, target QP proxies */
};

static struct fe_dev fe_devs[FP_MAX_DEVS];
static int fe_devs_span;		/* 1 + the highest index attached */

/* ---- upcalls ------------------------------------------------------------- */
static void fe_no_cq(struct fe_cq *cq) { (void)cq; }
static void fe_no_srq(struct fe_srq *srq) { (void)srq; }
static void fe_no_qp(struct fe_qp *qp, enum ibv_event_type type) { (void)qp; (void)type; }
static void fe_no_count(int devidx, uint8_t port, enum fe_counter c)
{
	(void)devidx; (void)port; (void)c;
}
/* No verbs layer, no daemon: no route leads anywhere. */
static uint32_t fe_no_fk_id(const struct fk_client *fk) { (void)fk; return 0; }
static uint64_t fe_no_fk_epoch(const struct fk_client *fk) { (void)fk; return 0; }
static int fe_no_fk_ring(struct fk_client *fk, int memfd) { (void)fk; (void)memfd; return ENOTCONN; }
static int fe_no_fk_route(struct fk_client *fk, int kind, uint32_t num, uint32_t srqn,
			  uint32_t flags, struct fk_route *out)
{
	(void)fk; (void)kind; (void)num; (void)srqn; (void)flags; (void)out;
	return ENOENT;
}

static const struct fe_upcalls fe_no_upcalls = {
	.cq_notify = fe_no_cq,
	.cq_overrun = fe_no_cq,
	.srq_limit = fe_no_srq,
	.qp_event = fe_no_qp,
	.count = fe_no_count,
	.fk_conn_id = fe_no_fk_id,
	.fk_epoch = fe_no_fk_epoch,
	.fk_ring_set = fe_no_fk_ring,
	.fk_route = fe_no_fk_route,
};
const struct fe_upcalls *fe_up = &fe_no_upcalls;

void fe_set_upcalls(const struct fe_upcalls *up)
{
	fe_up = up ? up : &fe_no_upcalls;
}

/* ---- the lock ------------------------------------------------------------- */
/*
 * Recursive (a scripted event or fault path may re-enter a helper), and
 * taken by every verb: a futex word (0 free, 1 held, 2 held and waited
 * for), its owner (0: none; glibc's pthread_t is its thread's address, the
 * same in a child of fork) and the depth. An uncontended lock and unlock
 * cost one atomic operation each, against pthread's recursive mutex about
 * eighty instructions a verb.
 */
static uint32_t fe_lock_word;
static pthread_t fe_lock_owner;
static unsigned fe_lock_depth;

static bool fe_lock_mine(void)
{
	return pthread_equal(__atomic_load_n(&fe_lock_owner, __ATOMIC_RELAXED), pthread_self());
}

void fe_lock(void)
{
	uint32_t z = 0;

	if (fe_lock_mine()) {
		fe_lock_depth++;
		return;
	}
	if (!__atomic_compare_exchange_n(&fe_lock_word, &z, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		/* held: say it is waited for, and sleep until it is free */
		while (__atomic_exchange_n(&fe_lock_word, 2, __ATOMIC_ACQUIRE) != 0)
			syscall(SYS_futex, &fe_lock_word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	}
	__atomic_store_n(&fe_lock_owner, pthread_self(), __ATOMIC_RELAXED);
	fe_lock_depth = 1;
}

void fe_unlock(void)
{
	if (--fe_lock_depth)
		return;
	__atomic_store_n(&fe_lock_owner, (pthread_t)0, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&fe_lock_word, 0, __ATOMIC_RELEASE) == 2)
		syscall(SYS_futex, &fe_lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int fe_trylock(void)
{
	uint32_t z = 0;

	if (fe_lock_mine()) {
		fe_lock_depth++;
		return 0;
	}
	if (!__atomic_compare_exchange_n(&fe_lock_word, &z, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return EBUSY;
	__atomic_store_n(&fe_lock_owner, pthread_self(), __ATOMIC_RELAXED);
	fe_lock_depth = 1;
	return 0;
}

/*
 * fork(): the child must not inherit a lock that another thread holds, nor
 * memory that thread was changing (a progress thread inside the allocator
 * leaves its lock taken in the child for good). So fork waits until no
 * thread of the plugin is inside it: the plugin lock first (an op waiting
 * for a daemon reply still gets it: the reader thread takes neither lock),
 * then the daemon client's locks (verbs/fk_client.c, whose handlers the
 * verbs layer registers before these). The child has none of the
 * parent's threads: the forking thread, its only one, lets the lock go as
 * the parent does (a verb that forked keeps what it held), and what it
 * inherited of the parent's contexts fails cleanly instead of waiting for
 * them.
 */
static void fe_fork_prepare(void)
{
	fe_lock();
}

static void fe_fork_release(void)
{
	fe_unlock();
}

/* The child: its registered pages its own before it runs application code
 * (mem.c), then the lock as the parent lets it go. */
static void fe_fork_child(void)
{
	fe_mem_fork_child();
	fe_unlock();
}

void fe_fork_init(void)
{
	/* Prepare handlers run in the reverse order of registration: the
	 * client library's, registered first by the verbs layer (fk_fork_init),
	 * then run after ours. */
	pthread_atfork(fe_fork_prepare, fe_fork_release, fe_fork_child);
}

/* ---- devices --------------------------------------------------------------- */
struct fe_dev *fe_dev_attach(int devidx)
{
	struct fe_dev *dev = &fe_devs[devidx];
	int i;

	if (!dev->ready) {
		dev->ready = true;
		dev->devidx = devidx;
		fp_list_init(&dev->qps);
		fp_list_init(&dev->srqs);
		fp_list_init(&dev->mrs);
		fp_list_init(&dev->mws);
		fp_list_init(&dev->doms);
		for (i = 0; i < FE_HASH; i++) {
			fp_list_init(&dev->qp_hash[i]);
			fp_list_init(&dev->srq_hash[i]);
			fp_list_init(&dev->lkey_hash[i]);
			fp_list_init(&dev->rkey_hash[i]);
		}
		dev->key_state = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 12) ^ 0x9e3779b9u;
		if (!dev->key_state)
			dev->key_state = 1;
		if (devidx >= fe_devs_span)
			fe_devs_span = devidx + 1;
	}
	dev->users++;
	return dev;
}

void fe_dev_detach(struct fe_dev *dev)
{
	/* Device-wide state outlives contexts, as it does in a kernel. */
	dev->users--;
}

int fe_dev_index(const struct fe_dev *dev)
{
	return dev->devidx;
}

struct fe_xport *fe_dev_xport(const struct fe_dev *dev)
{
	return dev->xp;
}

struct fe_xport **fe_dev_xport_slot(struct fe_dev *dev)
{
	return &dev->xp;
}

struct fe_xport *fe_dev_xport_at(int devidx)
{
	return fe_devs[devidx].xp;
}

struct fe_roce **fe_dev_roce_slot(struct fe_dev *dev)
{
	return &dev->roce;
}

struct fe_roce *fe_dev_roce_at(int devidx)
{
	return fe_devs[devidx].roce;
}

int fe_dev_span(void)
{
	return fe_devs_span;
}

/* ---- numbers (the daemon hands them out) ---------------------------------- */
void fe_qp_add(struct fe_dev *dev, struct fe_qp *qp, uint32_t qpn)
{
	qp->qpn = qpn;
	qp->dev = dev;
	fp_list_add_tail(&dev->qps, &qp->link);
	fp_list_add_tail(&dev->qp_hash[fe_bucket(qpn)], &qp->hlink);
	fe_mem_qp_publish(qp);
}

void fe_qp_del(struct fe_qp *qp)
{
	fe_mem_qp_unpublish(qp);
	fp_list_del(&qp->link);
	fp_list_del(&qp->hlink);
}

struct fe_qp *fe_qp_find(struct fe_dev *dev, uint32_t qpn)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->qp_hash[fe_bucket(qpn)]) {
		struct fe_qp *qp = fp_container_of(p, struct fe_qp, hlink);

		if (qp->qpn == qpn)
			return qp;
	}
	return NULL;
}

void fe_srq_add(struct fe_dev *dev, struct fe_srq *srq, uint32_t srqn)
{
	srq->srqn = srqn;
	fp_list_add_tail(&dev->srqs, &srq->link);
	fp_list_add_tail(&dev->srq_hash[fe_bucket(srqn)], &srq->hlink);
}

void fe_srq_del(struct fe_srq *srq)
{
	fp_list_del(&srq->link);
	fp_list_del(&srq->hlink);
}

struct fe_srq *fe_srq_find(struct fe_dev *dev, uint32_t srqn)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->srq_hash[fe_bucket(srqn)]) {
		struct fe_srq *s = fp_container_of(p, struct fe_srq, hlink);

		if (s->srqn == srqn)	/* @rule SRQX-11 */
			return s;
	}
	return NULL;
}

struct fe_srq *fe_dom_first_srq(struct fe_dev *dev, struct fe_dom *dom)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->srqs) {
		struct fe_srq *s = fp_container_of(p, struct fe_srq, link);

		if (s->type == IBV_SRQT_XRC && s->dom == dom)
			return s;
	}
	return NULL;
}

/* ---- memory keys -------------------------------------------------------- */
static bool fe_key_used(struct fe_dev *dev, uint32_t key)
{
	return fe_mr_by_lkey(dev, key) || fe_mr_by_rkey(dev, key);
}

static uint32_t fe_new_key(struct fe_dev *dev)
{
	unsigned tries = 0;
	uint32_t x;

	do {
		/* xorshift32: keys look random, so guessed keys fail. */
		x = dev->key_state;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		dev->key_state = x;
	} while (x == 0 || fe_key_used(dev, x) ||
		 /* one whose slot of the published key table is free, while
		  * one comes soon (a full table: any) */
		 (++tries < 64 && !fe_mem_key_slot_free(dev, x)));
	return x;
}

void fe_mr_add(struct fe_dev *dev, struct fe_mr *mr)
{
	mr->lkey = fe_new_key(dev);
	fp_list_add_tail(&dev->mrs, &mr->link);
	fp_list_add_tail(&dev->lkey_hash[fe_bucket(mr->lkey)], &mr->lhash);
	do
		mr->rkey = fe_new_key(dev);
	while (mr->rkey == mr->lkey);
	fp_list_add_tail(&dev->rkey_hash[fe_bucket(mr->rkey)], &mr->rhash);
	fe_mem_mr_add(dev, mr);
}

int fe_mr_add_keys(struct fe_dev *dev, struct fe_mr *mr, uint32_t lkey, uint32_t rkey)
{
	/* keys are this process's registry's: one already used here (or by a
	 * window) cannot name a second object */
	if (!lkey || !rkey || lkey == rkey || fe_key_used(dev, lkey) || fe_key_used(dev, rkey) ||
	    fe_mw_by_rkey(dev, lkey) || fe_mw_by_rkey(dev, rkey))
		return EEXIST;
	mr->lkey = lkey;
	mr->rkey = rkey;
	fp_list_add_tail(&dev->mrs, &mr->link);
	fp_list_add_tail(&dev->lkey_hash[fe_bucket(mr->lkey)], &mr->lhash);
	fp_list_add_tail(&dev->rkey_hash[fe_bucket(mr->rkey)], &mr->rhash);
	fe_mem_mr_add(dev, mr);
	return 0;
}

void fe_mr_del(struct fe_dev *dev, struct fe_mr *mr)
{
	struct fp_link *p, *t;

	/* windows bound to it grant nothing more */
	fp_list_for_each_safe(p, t, &dev->mws) {
		struct fe_mw *w = fp_container_of(p, struct fe_mw, link);

		if (w->mr == mr)
			fe_mw_unbind(w);
	}
	fe_mem_mr_del(mr);
	fp_list_del(&mr->link);
	fe_mem_foreign_unwatch(mr);
	fp_list_del(&mr->lhash);
	fp_list_del(&mr->rhash);
}

/* ---- memory windows: keys of the same table ------------------------------ */
void fe_mw_add(struct fe_dev *dev, struct fe_mw *mw)
{
	mw->rkey = fe_new_key(dev);
	mw->bound = false;
	mw->mr = NULL;
	mw->dev = dev;
	mw->qpn = FE_MEM_NO_QPN;
	mw->pub.md = NULL;
	fp_list_add_tail(&dev->mws, &mw->link);
}

void fe_mw_del(struct fe_dev *dev, struct fe_mw *mw)
{
	(void)dev;
	fe_mem_mw_unpublish(mw);
	fp_list_del(&mw->link);
}

struct fe_mw *fe_mw_by_rkey(struct fe_dev *dev, uint32_t rkey)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->mws) {
		struct fe_mw *w = fp_container_of(p, struct fe_mw, link);

		if (w->rkey == rkey)
			return w;
	}
	return NULL;
}

void fe_mw_bind_range(struct fe_mw *mw, struct fe_mr *mr, uint32_t rkey, uint64_t addr,
		      uint64_t length, int access, const struct fe_qp *qp)
{
	mw->rkey = rkey;
	mw->mr = mr;
	mw->addr = addr;
	mw->length = length;
	mw->access = access;
	mw->qpn = qp ? qp->qpn : FE_MEM_NO_QPN;
	mw->qp = qp;
	mw->bound = true;
	fe_mem_mw_publish(mw->dev, mw);
}

void fe_mw_unbind(struct fe_mw *mw)
{
	mw->bound = false;
	mw->mr = NULL;
	mw->qp = NULL;
	mw->qpn = FE_MEM_NO_QPN;
	fe_mem_mw_unpublish(mw);
}

bool fe_key_invalidate(struct fe_dev *dev, uint32_t rkey)
{
	struct fe_mw *w = fe_mw_by_rkey(dev, rkey);

	if (!w || !w->bound || w->type != IBV_MW_TYPE_2) /* @rule MW-05 */
		return false;
	if (!fp__quirk(FP_Q_SEND_INV_IGNORED))
		fe_mw_unbind(w);
	return true;
}

struct fe_mr *fe_mr_by_lkey(struct fe_dev *dev, uint32_t lkey)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->lkey_hash[fe_bucket(lkey)]) {
		struct fe_mr *m = fp_container_of(p, struct fe_mr, lhash);

		if (m->lkey == lkey)
			return m;
	}
	return NULL;
}

struct fe_mr *fe_mr_by_rkey(struct fe_dev *dev, uint32_t rkey)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->rkey_hash[fe_bucket(rkey)]) {
		struct fe_mr *m = fp_container_of(p, struct fe_mr, rhash);

		if (m->rkey == rkey)
			return m;
	}
	return NULL;
}

/* ---- XRC domains: local views of the daemon's, by id --------------------- */
int fe_dom_get_id(struct fe_dev *dev, uint32_t id, struct fe_dom **out)
{
	struct fe_dom *dom = fe_dom_find(dev, id);

	if (dom) {
		dom->usecnt++;
		*out = dom;
		return 0;
	}
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return ENOMEM;
	dom->dev = dev;
	dom->id = id;
	dom->usecnt = 1;
	fp_list_add_tail(&dev->doms, &dom->link);
	*out = dom;
	return 0;
}

struct fe_dom *fe_dom_find(struct fe_dev *dev, uint32_t id)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &dev->doms) {
		struct fe_dom *dom = fp_container_of(p, struct fe_dom, link);

		if (dom->id == id)
			return dom;
	}
	return NULL;
}

uint32_t fe_dom_id(const struct fe_dom *dom)
{
	return dom->id;
}

void fe_dom_get(struct fe_dom *dom)
{
	dom->usecnt++;
}

void fe_dom_put(struct fe_dom *dom)
{
	/* The daemon decides when the domain dies (XRCD-14, LIFE-05); the
	 * last local use only forgets this view of it. */
	if (--dom->usecnt)
		return;
	fp_list_del(&dom->link);
	free(dom);
}


/* ---- memory checks -------------------------------------------------------- */
static bool fe_range_in(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
{
	return addr >= base && len <= size && addr - base <= size - len;
}

char *fe_mr_local(struct fe_dev *dev, const void *pd, const struct ibv_sge *sge, bool write)
{
	struct fe_mr *mr = fe_mr_by_lkey(dev, sge->lkey);

	if (!mr || mr->pd != pd || fe_mem_mr_gone(mr) ||
	    (write && !(mr->access & IBV_ACCESS_LOCAL_WRITE)) ||
	    !fe_range_in(sge->addr, sge->length, mr->iova, mr->length))
		return NULL;
	return mr->addr + (sge->addr - mr->iova);
}

/* The rule lives once (mem.c fe_key_check): requesters that place into a
 * peer's memory check the record the peer published with it. */
char *fe_mr_remote(struct fe_dev *dev, const void *pd, const struct fe_qp *qp, int qp_access,
		   uint64_t addr, uint32_t rkey, uint64_t len, int need)
{
	struct fe_mr *mr = fe_mr_by_rkey(dev, rkey);
	struct fe_key_rec rec;
	struct fe_mw *w = NULL;
	uint64_t off;

	if (mr) {
		fe_mr_key_rec(mr, &rec);
	} else {
		w = fe_mw_by_rkey(dev, rkey);
		if (!w || !w->bound)
			return NULL;
		fe_mw_key_rec(w, &rec);
		mr = w->mr;
	}
	if (mr && fe_mem_mr_gone(mr))
		return NULL;		/* destroyed through another context of the file */
	if (!fe_key_check(&rec, (uint64_t)(uintptr_t)pd, qp ? qp->qpn : FE_MEM_NO_QPN, qp_access,
			  addr, len, need, &off))
		return NULL;
	return mr->addr + off;
}

/* A region's record changed in place (rereg: its access, its PD, or its
 * pages, translation true): published again, with the windows bound to it. */
void fe_mr_changed(struct fe_dev *dev, struct fe_mr *mr, bool translation)
{
	struct fp_link *p, *t;

	if (translation) {
		/* mr->addr and length are the new ones; the old pages were let go
		 * by fe_mr_unback before they changed */
		fe_mem_mr_add(dev, mr);
	} else {
		fe_mem_mr_publish(dev, mr);
	}
	fp_list_for_each_safe(p, t, &dev->mws) {
		struct fe_mw *w = fp_container_of(p, struct fe_mw, link);

		if (w->bound && w->mr == mr)
			fe_mem_mw_publish(dev, w);
	}
}

void fe_mr_unback(struct fe_mr *mr)
{
	fe_mem_mr_del(mr);
}
