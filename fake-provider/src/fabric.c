/* SPDX-License-Identifier: MIT */
/*
 * The process-local view of a fake device: the QPs, SRQs and memory keys
 * of this process, local proxies of XRC domains and target QPs, and the
 * routing of packets to the QP behind a number. The device-wide truth
 * (numbers, domains by inode, target QPs and their handles) lives in the
 * fake kernel daemon; this view only mirrors what this process holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fp_provider.h"

struct fp_fabric {
	bool ready;
	int devidx;
	unsigned users;
	struct fp_link qps, srqs, mrs, doms;
	uint32_t key_state;
	struct fp_xport *xp;		/* this process's receive ring, while joined */
};

struct fp_xdom {
	struct fp_fabric *fab;
	struct fp_link link;
	uint32_t id;			/* the daemon's domain id */
	unsigned usecnt;		/* local handles, XRC SRQs, target QP proxies */
};

/* Recursive: a scripted event or fault path may re-enter a helper. */
static pthread_mutex_t fp_fabric_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct fp_fabric fp_fabrics[FP_MAX_DEVS];

void fp_fabric_lock(void)
{
	pthread_mutex_lock(&fp_fabric_mutex);
}

void fp_fabric_unlock(void)
{
	pthread_mutex_unlock(&fp_fabric_mutex);
}

int fp_fabric_trylock(void)
{
	return pthread_mutex_trylock(&fp_fabric_mutex);
}

/*
 * fork(): the child must not inherit a lock that another thread holds, nor
 * memory that thread was changing (a progress thread inside the allocator
 * leaves its lock taken in the child for good). So fork waits until no
 * thread of the plugin is inside it: the plugin lock first (an op waiting
 * for a daemon reply still gets it: the reader thread takes neither lock),
 * then the daemon client's locks (fk_client.c). The child has none of the
 * parent's threads: it starts with fresh locks, and what it inherited of
 * the parent's contexts fails cleanly instead of waiting for them.
 */
static void fp_fork_prepare(void)
{
	pthread_mutex_lock(&fp_fabric_mutex);
}

static void fp_fork_parent(void)
{
	pthread_mutex_unlock(&fp_fabric_mutex);
}

static void fp_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

	fp_fabric_mutex = fresh;	/* its owner was the parent's thread */
}

void fp_fabric_fork_init(void)
{
	/* Prepare handlers run in the reverse order of registration: the
	 * client library's, registered first, then run after ours. */
	fk_fork_init();
	pthread_atfork(fp_fork_prepare, fp_fork_parent, fp_fork_child);
}

struct fp_fabric *fp_fabric_attach(int devidx)
{
	struct fp_fabric *fab = &fp_fabrics[devidx];

	if (!fab->ready) {
		fab->ready = true;
		fab->devidx = devidx;
		fp_list_init(&fab->qps);
		fp_list_init(&fab->srqs);
		fp_list_init(&fab->mrs);
		fp_list_init(&fab->doms);
		fab->key_state = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 12) ^ 0x9e3779b9u;
		if (!fab->key_state)
			fab->key_state = 1;
	}
	fab->users++;
	return fab;
}

void fp_fabric_detach(struct fp_fabric *fab)
{
	/* Device-wide state outlives contexts, as it does in a kernel. */
	fab->users--;
}

int fp_fabric_devidx(const struct fp_fabric *fab)
{
	return fab->devidx;
}

/* ---- numbers (the daemon hands them out) ---------------------------------- */
void fp_fabric_qp_add(struct fp_fabric *fab, struct fp_rqp *real, uint32_t qpn)
{
	real->qpn = qpn;
	real->fab = fab;
	fp_list_add_tail(&fab->qps, &real->fab_link);
}

void fp_fabric_qp_del(struct fp_fabric *fab, struct fp_rqp *real)
{
	fp_list_del(&real->fab_link);
}

struct fp_rqp *fp_fabric_qp_find(struct fp_fabric *fab, uint32_t qpn)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->qps) {
		struct fp_rqp *r = fp_container_of(p, struct fp_rqp, fab_link);

		if (r->qpn == qpn)
			return r;
	}
	return NULL;
}

void fp_fabric_srq_add(struct fp_fabric *fab, struct fp_srq *srq, uint32_t srqn)
{
	srq->srqn = srqn;
	fp_list_add_tail(&fab->srqs, &srq->fab_link);
}


void fp_fabric_srq_del(struct fp_fabric *fab, struct fp_srq *srq)
{
	fp_list_del(&srq->fab_link);
}

struct fp_srq *fp_fabric_srq_find(struct fp_fabric *fab, uint32_t srqn)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->srqs) {
		struct fp_srq *s = fp_container_of(p, struct fp_srq, fab_link);

		if (s->srqn == srqn)	/* @rule SRQX-11 */
			return s;
	}
	return NULL;
}

struct fp_srq *fp_fabric_xdom_first_srq(struct fp_fabric *fab, struct fp_xdom *dom)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->srqs) {
		struct fp_srq *s = fp_container_of(p, struct fp_srq, fab_link);

		if (s->type == IBV_SRQT_XRC && s->dom == dom)
			return s;
	}
	return NULL;
}

/* ---- memory keys -------------------------------------------------------- */
static bool fp_key_used(struct fp_fabric *fab, uint32_t key)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->mrs) {
		struct fp_mr *m = fp_container_of(p, struct fp_mr, fab_link);

		if (m->lkey == key || m->rkey == key)
			return true;
	}
	return false;
}

static uint32_t fp_new_key(struct fp_fabric *fab)
{
	uint32_t x;

	do {
		/* xorshift32: keys look random, so guessed keys fail. */
		x = fab->key_state;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		fab->key_state = x;
	} while (x == 0 || fp_key_used(fab, x));
	return x;
}

void fp_fabric_mr_add(struct fp_fabric *fab, struct fp_mr *mr)
{
	mr->lkey = mr->rkey = 0;
	mr->lkey = fp_new_key(fab);
	fp_list_add_tail(&fab->mrs, &mr->fab_link);
	do
		mr->rkey = fp_new_key(fab);
	while (mr->rkey == mr->lkey);
}

void fp_fabric_mr_del(struct fp_fabric *fab, struct fp_mr *mr)
{
	fp_list_del(&mr->fab_link);
}

struct fp_mr *fp_fabric_mr_by_lkey(struct fp_fabric *fab, uint32_t lkey)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->mrs) {
		struct fp_mr *m = fp_container_of(p, struct fp_mr, fab_link);

		if (m->lkey == lkey)
			return m;
	}
	return NULL;
}

struct fp_mr *fp_fabric_mr_by_rkey(struct fp_fabric *fab, uint32_t rkey)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->mrs) {
		struct fp_mr *m = fp_container_of(p, struct fp_mr, fab_link);

		if (m->rkey == rkey)
			return m;
	}
	return NULL;
}

/* ---- XRC domains: local views of the daemon's, by id --------------------- */
int fp_fabric_xdom_get_id(struct fp_fabric *fab, uint32_t id, struct fp_xdom **out)
{
	struct fp_xdom *dom;
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->doms) {
		dom = fp_container_of(p, struct fp_xdom, link);
		if (dom->id == id) {
			dom->usecnt++;
			*out = dom;
			return 0;
		}
	}
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return ENOMEM;
	dom->fab = fab;
	dom->id = id;
	dom->usecnt = 1;
	fp_list_add_tail(&fab->doms, &dom->link);
	*out = dom;
	return 0;
}

struct fp_xdom *fp_fabric_xdom_find(struct fp_fabric *fab, uint32_t id)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fab->doms) {
		struct fp_xdom *dom = fp_container_of(p, struct fp_xdom, link);

		if (dom->id == id)
			return dom;
	}
	return NULL;
}

void fp_fabric_xdom_get(struct fp_xdom *dom)
{
	dom->usecnt++;
}

void fp_fabric_xdom_put(struct fp_xdom *dom)
{
	/* The daemon decides when the domain dies (XRCD-14, LIFE-05); the
	 * last local use only forgets this view of it. */
	if (--dom->usecnt)
		return;
	fp_list_del(&dom->link);
	free(dom);
}

/* ---- routing ------------------------------------------------------------ */
int fp_fabric_join(struct fp_fabric *fab, struct fk_client *fk)
{
	return fp__xport_register(&fab->xp, fab, fk);
}

struct fp_xport *fp_fabric_leave(struct fp_fabric *fab, struct fk_client *fk)
{
	return fp__xport_unregister(&fab->xp, fk);
}

void fp_fabric_drain_all(void)
{
	int i;

	for (i = 0; i < FP_MAX_DEVS; i++)
		if (fp_fabrics[i].xp) {
			fp__xport_touch(fp_fabrics[i].xp);
			fp__xport_drain(fp_fabrics[i].xp);
		}

}

void fp_fabric_deliver(struct fp_context *ctx, const struct fp_packet *pkt,
		       struct fp_response *resp)
{
	struct fp_fabric *fab = ctx->fab;
	struct fp_rqp *dst = NULL;

	resp->data = NULL;
	resp->len = 0;
	resp->atomic_orig = 0;
	/* An XRC target QP is the daemon's: its gate is checked there, and
	 * its SRQ may live anywhere. Other QPs of this process: right here. */
	if (pkt->src_type != IBV_QPT_XRC_SEND)
		dst = fp_fabric_qp_find(fab, pkt->dst_qpn);
	if (!dst) {
		fp__xport_deliver(fab->xp, ctx, pkt, resp);
		return;
	}
	fp__responder(dst, pkt, resp);
}

