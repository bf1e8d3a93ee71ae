/* SPDX-License-Identifier: MIT */
/*
 * The fake device's device-wide state, what a kernel keeps per RDMA device:
 * QP and SRQ numbers, memory keys, XRC domains keyed by inode, and the
 * routing of packets to the QP behind a number. Process-local and behind
 * one mutex for now; the fake kernel daemon takes this over later with the
 * same semantics (only how packets travel changes).
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
	uint32_t next_qpn, next_srqn, key_state;
};

struct fp_xdom {
	struct fp_fabric *fab;
	struct fp_link link;
	bool bound;			/* false: fd == -1, private to one handle */
	dev_t st_dev;
	ino_t st_ino;
	unsigned usecnt;		/* handles, XRC SRQs, live real TGT QPs (XRCD-14) */
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
		/* Distinct number ranges per device make cross-device mixups visible. */
		fab->next_qpn = 0x100u * (unsigned)(devidx + 1) + 0x11;
		fab->next_srqn = 0x80u * (unsigned)(devidx + 1) + 0x3;
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

/* ---- numbers ------------------------------------------------------------ */
static uint32_t fp_next_num(uint32_t *next)
{
	uint32_t n = *next;

	/* 24-bit numbers; 0 and 1 are the special QPs. */
	if (n < 2 || n > 0xffffff)
		n = 2;
	*next = n + 1;
	return n;
}

uint32_t fp_fabric_qp_add(struct fp_fabric *fab, struct fp_rqp *real)
{
	uint32_t n;

	do
		n = fp_next_num(&fab->next_qpn);
	while (fp_fabric_qp_find(fab, n));
	real->qpn = n;
	real->fab = fab;
	fp_list_add_tail(&fab->qps, &real->fab_link);
	return n;
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

uint32_t fp_fabric_srq_add(struct fp_fabric *fab, struct fp_srq *srq)
{
	uint32_t n;

	do
		n = fp_next_num(&fab->next_srqn);
	while (fp_fabric_srq_find(fab, n));
	srq->srqn = n;
	fp_list_add_tail(&fab->srqs, &srq->fab_link);
	return n;
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

		if (s->srqn == srqn)
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

/* ---- XRC domains -------------------------------------------------------- */
int fp_fabric_xdom_open(struct fp_fabric *fab, int fd, int oflags, struct fp_xdom **out)
{
	struct fp_xdom *dom = NULL;
	struct fp_link *p, *t;
	struct stat st;

	if (fd == -1)
		goto create;		/* XRCD-03/04: oflags are not read */
	if (fstat(fd, &st))
		return EBADF;		/* XRCD-10 */
	fp_list_for_each_safe(p, t, &fab->doms) {
		struct fp_xdom *d = fp_container_of(p, struct fp_xdom, link);

		if (d->bound && d->st_dev == st.st_dev && d->st_ino == st.st_ino) {
			dom = d;
			break;
		}
	}
	if (dom) {
		if (oflags & O_EXCL)	/* XRCD-07: EINVAL, not EEXIST */
			return fp__quirk(FP_Q_XRCD_EXCL_EEXIST) ? EEXIST : EINVAL;
		dom->usecnt++;		/* XRCD-08: same domain, new handle */
		*out = dom;
		return 0;
	}
	if (!(oflags & O_CREAT))
		return EAGAIN;		/* XRCD-06 */
create:
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return ENOMEM;
	dom->fab = fab;
	dom->usecnt = 1;
	if (fd != -1) {
		dom->bound = true;
		dom->st_dev = st.st_dev;
		dom->st_ino = st.st_ino;
	}
	fp_list_add_tail(&fab->doms, &dom->link);
	*out = dom;
	return 0;
}

void fp_fabric_xdom_get(struct fp_xdom *dom)
{
	dom->usecnt++;
}

void fp_fabric_xdom_put(struct fp_xdom *dom)
{
	struct fp_link *p, *t;

	if (--dom->usecnt)
		return;
	/* XRCD-14/15: gone with its last use; seed leftovers go with it. */
	fp_list_for_each_safe(p, t, &dom->fab->qps) {
		struct fp_rqp *r = fp_container_of(p, struct fp_rqp, fab_link);

		if (r->dom == dom && r->orphan)
			fp__rqp_free(r);
	}
	fp_list_del(&dom->link);
	free(dom);
}

/* ---- routing ------------------------------------------------------------ */
void fp_fabric_deliver(struct fp_fabric *fab, const struct fp_packet *pkt,
		       struct fp_response *resp)
{
	struct fp_rqp *dst = fp_fabric_qp_find(fab, pkt->dst_qpn);
	bool reliable = pkt->src_type == IBV_QPT_RC || pkt->src_type == IBV_QPT_XRC_SEND;

	resp->data = NULL;
	resp->len = 0;
	resp->atomic_orig = 0;
	if (!dst) {
		resp->status = reliable ? FP_ACK_NO_PATH : FP_ACK_DROPPED;
		return;
	}
	fp__responder(dst, pkt, resp);
}
