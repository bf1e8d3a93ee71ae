/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel's object tables and their rules: per device, QP and SRQ
 * numbers, XRC domains keyed by inode (XRCD-*), XRC SRQs, real XRC target
 * QPs with one handle per create/open (OPENQP-*), and what a connection's
 * end releases under each lifetime model (LIFE-*, spec section 5). Every
 * handle is looked up in the asking connection's own lists, so a handle
 * of another connection is never found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fkd.h"
#include "fp_script.h"

/* ibv_qp_attr_mask bits a modify may carry at all (QPX-08). */
#define FK_QP_STANDARD_BITS ((uint32_t)((IBV_QP_DEST_QPN << 1) - 1))

struct fk_link fk_devs = { &fk_devs, &fk_devs };
static uint32_t fk_next_xrcd_id = 1;

/* ---- devices and numbers -------------------------------------------------- */
static struct fk_dev *fk_dev_find(const char *name)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, &fk_devs) {
		struct fk_dev *d = fk_container_of(p, struct fk_dev, link);

		if (!strcmp(d->name, name))
			return d;
	}
	return NULL;
}

const struct fp_script *fk_world;

/*
 * With a script, the daemon knows the host's devices as a kernel knows its
 * HCAs: a client's claims (device, port count, P_Key table sizes, rd_atom
 * limits the daemon enforces on target QPs, lifetime model) must be what
 * the script says, or the client runs another script than this host: it is
 * refused (ENODEV for a device the host lacks, EINVAL for the rest).
 */
static int fk_world_check(const char *devname, enum fk_lifetime life,
			  const struct fk_dev_limits *lim)
{
	const struct fp_dev_spec *d = NULL;
	int i;

	if (!fk_world)
		return 0;
	for (i = 0; i < fk_world->ndevs; i++)
		if (!strcmp(fk_world->dev[i].name, devname))
			d = &fk_world->dev[i];
	if (!d)
		return ENODEV;
	if ((int)life != (int)fk_world->lifetime || lim->nports != (uint32_t)d->nports ||
	    lim->max_rd_atom != (d->attr.max_qp_init_rd_atom > 0
				 ? (uint32_t)d->attr.max_qp_init_rd_atom : 0) ||
	    lim->max_dest_rd_atom != (d->attr.max_qp_rd_atom > 0
				      ? (uint32_t)d->attr.max_qp_rd_atom : 0))
		return EINVAL;
	for (i = 0; i < d->nports && i < (int)FK_MAX_PORTS; i++)
		if ((int)lim->pkey_tbl_len[i] != (int)d->port[i].attr.pkey_tbl_len)
			return EINVAL;
	return 0;
}

int fk__hello(struct fk_conn *c, const char *devname, enum fk_lifetime life,
	      const struct fk_dev_limits *lim)
{
	struct fk_dev *d = fk_dev_find(devname);
	uint32_t h = 2166136261u;
	const char *s;
	int err = fk_world_check(devname, life, lim);

	if (err)
		return err;

	if (d) {
		/* one lifetime model per device: mixed models have no meaning */
		if (d->lifetime != life)
			return EINVAL;
		goto attach;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return ENOMEM;
	snprintf(d->name, sizeof(d->name), "%s", devname);
	d->lifetime = life;
	fk_list_init(&d->xrcds);
	fk_list_init(&d->qpns);
	fk_list_init(&d->srqns);
	/* Distinct ranges per device name make cross-device mixups visible. */
	for (s = devname; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	d->next_qpn = 0x100u * (1 + h % 64) + 0x11;
	d->next_srqn = 0x80u * (1 + h % 64) + 0x3;
	fk_list_add_tail(&fk_devs, &d->link);
attach:
	d->nconns++;
	c->dev = d;
	c->lim = *lim;
	return 0;
}

static bool fk_qpn_used(struct fk_dev *d, uint32_t n)
{
	struct fk_link *p, *t, *q, *u;

	fk_list_for_each_safe(p, t, &d->qpns)
		if (fk_container_of(p, struct fk_num, dev_link)->num == n)
			return true;
	fk_list_for_each_safe(p, t, &d->xrcds) {
		struct fk_xrcd *x = fk_container_of(p, struct fk_xrcd, link);

		fk_list_for_each_safe(q, u, &x->tgt_qps)
			if (fk_container_of(q, struct fk_rqp, link)->qpn == n)
				return true;
	}
	return false;
}

static struct fk_num *fk_srqn_find(struct fk_dev *d, uint32_t n)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, &d->srqns) {
		struct fk_num *s = fk_container_of(p, struct fk_num, dev_link);

		if (s->num == n)
			return s;
	}
	return NULL;
}

/* 24-bit numbers, 0 and 1 being the special QPs; monotonic so that a freed
 * number comes back as late as possible (LIFE-11 allows reuse). */
static int fk_new_number(struct fk_dev *d, bool srq, uint32_t *out)
{
	uint32_t *next = srq ? &d->next_srqn : &d->next_qpn;
	uint32_t tries;

	for (tries = 0; tries < 0x1000000u; tries++) {
		uint32_t n = *next;

		if (n < 2 || n > 0xffffff)
			n = 2;
		*next = n + 1;
		if (srq ? !fk_srqn_find(d, n) : !fk_qpn_used(d, n)) {
			*out = n;
			return 0;
		}
	}
	return ENOSPC;
}

static struct fk_num *fk_num_new(struct fk_conn *c, bool srq)
{
	struct fk_num *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (fk_new_number(c->dev, srq, &n->num)) {
		free(n);
		return NULL;
	}
	n->conn = c;
	fk_list_add_tail(srq ? &c->dev->srqns : &c->dev->qpns, &n->dev_link);
	fk_list_add_tail(srq ? &c->srqs : &c->qpns, &n->conn_link);
	return n;
}

static void fk_num_free(struct fk_num *n)
{
	fk_list_del(&n->dev_link);
	fk_list_del(&n->conn_link);
	free(n);
}

int fk__num_alloc(struct fk_conn *c, bool srq, uint32_t *num)
{
	struct fk_num *n = fk_num_new(c, srq);

	if (!n)
		return ENOMEM;
	*num = n->num;
	return 0;
}

static struct fk_num *fk_conn_num(struct fk_conn *c, bool srq, uint32_t num)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, srq ? &c->srqs : &c->qpns) {
		struct fk_num *n = fk_container_of(p, struct fk_num, conn_link);

		if (n->num == num)
			return n;
	}
	return NULL;
}

int fk__num_free(struct fk_conn *c, bool srq, uint32_t num)
{
	struct fk_num *n = fk_conn_num(c, srq, num);

	/* an XRC SRQ goes through SRQ_DESTROY, which drops its references */
	if (!n || n->xrcd)
		return EINVAL;
	fk_num_free(n);
	return 0;
}

/* ---- XRC domains ------------------------------------------------------------ */
static void fk_rqp_free(struct fk_rqp *r);

/* Drop one use; the domain goes with its last (XRCD-14/15), and with it the
 * seed model's leftover QPs, which hold no use. */
static void fk_xrcd_put(struct fk_xrcd *x)
{
	struct fk_link *p, *t;

	if (--x->usecnt)
		return;
	fk_list_for_each_safe(p, t, &x->tgt_qps)
		fk_rqp_free(fk_container_of(p, struct fk_rqp, link));
	if (x->inode_fd >= 0)
		close(x->inode_fd);
	fk_logv("xrcd %u destroyed", x->id);
	fk_list_del(&x->link);
	free(x);
}

static struct fk_hxrcd *fk_hxrcd_find(struct fk_conn *c, uint32_t handle)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, &c->xrcds) {
		struct fk_hxrcd *h = fk_container_of(p, struct fk_hxrcd, link);

		if (h->handle == handle && !h->closed)
			return h;
	}
	return NULL;
}

static uint32_t fk_new_handle(struct fk_conn *c)
{
	/* 0 is never a handle; wrap-around after 2^32 opens is not a concern */
	if (++c->next_handle == 0)
		c->next_handle = 1;
	return c->next_handle;
}

static void fk_hxrcd_free(struct fk_hxrcd *h)
{
	fk_list_del(&h->link);
	free(h);
}

static void fk_hxrcd_put_ref(struct fk_hxrcd *h)
{
	if (--h->refcnt == 0 && h->closed)
		fk_hxrcd_free(h);
}

/* fd: the daemon's own copy of the client's fd (SCM_RIGHTS), or -1; always
 * consumed. The inode is the daemon's fstat, never a number from the client. */
int fk__xrcd_open(struct fk_conn *c, int fd, uint32_t oflags, uint32_t flags,
		  uint32_t *handle, uint32_t *id)
{
	struct fk_xrcd *x = NULL;
	struct fk_hxrcd *h;
	struct fk_link *p, *t;
	struct stat st;
	int err;

	h = calloc(1, sizeof(*h));
	if (!h) {
		err = ENOMEM;
		goto err_close_fd;
	}
	if (fd < 0)
		goto create;			/* XRCD-03/04: oflags are not read */
	if (fstat(fd, &st)) {
		err = EBADF;			/* XRCD-10 */
		goto err_free_h;
	}
	fk_list_for_each_safe(p, t, &c->dev->xrcds) {
		struct fk_xrcd *d = fk_container_of(p, struct fk_xrcd, link);

		if (d->inode_fd >= 0 && d->st_dev == st.st_dev && d->st_ino == st.st_ino) {
			x = d;
			break;
		}
	}
	if (x) {
		if (oflags & O_EXCL) {		/* XRCD-07: EINVAL, not EEXIST */
			err = (flags & FK_F_XRCD_EXCL_EEXIST) ? EEXIST : EINVAL;
			goto err_free_h;
		}
		close(fd);			/* the domain already pins the inode */
		x->usecnt++;			/* XRCD-08: same domain, new handle */
		goto attach;
	}
	if (!(oflags & O_CREAT)) {
		err = EAGAIN;			/* XRCD-06 */
		goto err_free_h;
	}
create:
	x = calloc(1, sizeof(*x));
	if (!x) {
		err = ENOMEM;
		goto err_free_h;
	}
	x->dev = c->dev;
	x->id = fk_next_xrcd_id++;
	x->inode_fd = fd;
	if (fd >= 0) {
		x->st_dev = st.st_dev;
		x->st_ino = st.st_ino;
	}
	x->usecnt = 1;
	fk_list_init(&x->tgt_qps);
	fk_list_add_tail(&c->dev->xrcds, &x->link);
attach:
	h->conn = c;
	h->xrcd = x;
	h->handle = fk_new_handle(c);
	fk_list_add_tail(&c->xrcds, &h->link);
	*handle = h->handle;
	*id = x->id;
	return 0;

err_free_h:
	free(h);
err_close_fd:
	if (fd >= 0)
		close(fd);
	return err;
}

int fk__xrcd_close(struct fk_conn *c, uint32_t handle, uint32_t flags)
{
	struct fk_hxrcd *h = fk_hxrcd_find(c, handle);
	struct fk_xrcd *x;

	if (!h)
		return EINVAL;
	if (h->refcnt && !(flags & FK_F_XRCD_CLOSE_NOT_BUSY))
		return EBUSY;			/* XRCD-13, LIFE-10 */
	x = h->xrcd;
	if (h->refcnt)
		h->closed = true;		/* freed with its last reference */
	else
		fk_hxrcd_free(h);
	fk_xrcd_put(x);				/* XRCD-14/16 */
	return 0;
}

/* ---- XRC SRQs ---------------------------------------------------------------- */
int fk__srq_create_xrc(struct fk_conn *c, uint32_t xrcd_handle, uint32_t *srqn,
		       uint32_t *id)
{
	struct fk_hxrcd *h = fk_hxrcd_find(c, xrcd_handle);
	struct fk_num *n;

	if (!h)
		return EINVAL;			/* SRQX-08 */
	n = fk_num_new(c, true);
	if (!n)
		return ENOMEM;
	n->hx = h;
	n->xrcd = h->xrcd;
	h->refcnt++;
	h->xrcd->usecnt++;			/* XRCD-14, LIFE-12 */
	*srqn = n->num;
	*id = h->xrcd->id;
	return 0;
}

static void fk_srq_free(struct fk_num *n)
{
	struct fk_hxrcd *h = n->hx;
	struct fk_xrcd *x = n->xrcd;

	fk_num_free(n);
	if (h)
		fk_hxrcd_put_ref(h);
	if (x)
		fk_xrcd_put(x);
}

int fk__srq_destroy(struct fk_conn *c, uint32_t srqn)
{
	struct fk_num *n = fk_conn_num(c, true, srqn);

	if (!n || !n->xrcd)
		return EINVAL;
	fk_srq_free(n);				/* SRQX-15: TGT QPs hold no reference */
	return 0;
}

/* ---- target QPs ---------------------------------------------------------------- */
static struct fk_hqp *fk_hqp_find(struct fk_conn *c, uint32_t handle)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, &c->qps) {
		struct fk_hqp *q = fk_container_of(p, struct fk_hqp, link);

		if (q->handle == handle)
			return q;
	}
	return NULL;
}

static struct fk_hqp *fk_hqp_new(struct fk_conn *c, struct fk_rqp *r,
				 struct fk_hxrcd *hx, uint64_t user)
{
	struct fk_hqp *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->conn = c;
	q->rqp = r;
	q->hx = hx;
	q->user = user;
	q->handle = fk_new_handle(c);
	hx->refcnt++;				/* XRCD-13, OPENQP-07 */
	r->usecnt++;				/* LIFE-01 */
	fk_list_add_tail(&c->qps, &q->link);
	fk_list_add_tail(&r->handles, &q->real_link);
	return q;
}

/* The real QP goes: its number, and its domain use unless it is a leftover. */
static void fk_rqp_free(struct fk_rqp *r)
{
	struct fk_xrcd *x = r->xrcd;
	bool held = !r->orphan;

	fk_logv("tgt qp %#x destroyed", r->qpn);
	fk_list_del(&r->link);
	free(r);
	if (held)
		fk_xrcd_put(x);
}

int fk__tgt_create(struct fk_conn *c, uint32_t xrcd_handle, uint64_t user,
		   uint32_t *handle, uint32_t *qpn)
{
	struct fk_hxrcd *hx = fk_hxrcd_find(c, xrcd_handle);
	struct fk_rqp *r;
	struct fk_hqp *q;
	int err;

	if (!hx)
		return EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return ENOMEM;
	err = fk_new_number(c->dev, false, &r->qpn);
	if (err)
		goto err_free_r;
	r->xrcd = hx->xrcd;
	r->attr.qp_state = IBV_QPS_RESET;	/* QPX-03 */
	fk_list_init(&r->handles);
	fk_list_add_tail(&hx->xrcd->tgt_qps, &r->link);
	hx->xrcd->usecnt++;			/* a real TGT QP holds its domain */
	q = fk_hqp_new(c, r, hx, user);
	if (!q) {
		fk_rqp_free(r);
		return ENOMEM;
	}
	*handle = q->handle;
	*qpn = r->qpn;
	return 0;

err_free_r:
	free(r);
	return err;
}

int fk__tgt_open(struct fk_conn *c, uint32_t xrcd_handle, uint32_t qpn, uint32_t type,
		 uint32_t flags, uint64_t user, uint32_t *handle)
{
	struct fk_hxrcd *hx = fk_hxrcd_find(c, xrcd_handle);
	struct fk_rqp *r = NULL;
	struct fk_link *p, *t, *q, *u;
	struct fk_hqp *h;

	if (type != IBV_QPT_XRC_RECV || !hx)	/* OPENQP-04, OPENQP-06 */
		return EINVAL;
	/* OPENQP-05: a live TGT QP of the same domain, whoever made it. */
	fk_list_for_each_safe(p, t, &c->dev->xrcds) {
		struct fk_xrcd *x = fk_container_of(p, struct fk_xrcd, link);

		if (x != hx->xrcd && !(flags & FK_F_OPEN_ANY_DOMAIN))
			continue;
		fk_list_for_each_safe(q, u, &x->tgt_qps) {
			struct fk_rqp *cand = fk_container_of(q, struct fk_rqp, link);

			if (cand->qpn == qpn)
				r = cand;
		}
	}
	if (!r)
		return EINVAL;
	h = fk_hqp_new(c, r, hx, user);
	if (!h)
		return ENOMEM;
	h->opened = true;
	if (r->orphan) {	/* seed: a leftover is picked up again (LIFE-05) */
		r->orphan = false;
		r->xrcd->usecnt++;
	}
	*handle = h->handle;
	return 0;
}

/*
 * Drop one handle. explicit_destroy: ibv_destroy_qp, and in the current model
 * also a connection's end (LIFE-04). Otherwise the seed model's close-only
 * (LIFE-05): a last handle leaves the QP in its domain as a leftover that
 * holds no use, so it goes when the domain goes.
 */
static void fk_hqp_drop(struct fk_hqp *q, bool explicit_destroy)
{
	struct fk_rqp *r = q->rqp;
	struct fk_hxrcd *hx = q->hx;

	fk_list_del(&q->link);
	fk_list_del(&q->real_link);
	free(q);
	fk_hxrcd_put_ref(hx);
	if (--r->usecnt)
		return;				/* LIFE-02 */
	if (!explicit_destroy) {
		struct fk_xrcd *x = r->xrcd;

		r->orphan = true;
		fk_xrcd_put(x);			/* may take r with the domain */
		return;
	}
	fk_rqp_free(r);				/* LIFE-03 */
}

int fk__tgt_destroy(struct fk_conn *c, uint32_t handle)
{
	struct fk_hqp *q = fk_hqp_find(c, handle);

	if (!q)
		return EINVAL;
	fk_hqp_drop(q, true);
	return 0;
}

static bool fk_port_ok(const struct fk_dev_limits *l, unsigned port)
{
	return port >= 1 && port <= l->nports;
}

/* QPX-08: ports, P_Key indices, the AV's port against the QP's; the limits
 * are those the connection declared (its device spec). */
static int fk_check_ports(const struct fk_dev_limits *l, const struct fk_rqp *r,
			  const struct fk_qp_attr *a, uint32_t m)
{
	unsigned port = (m & IBV_QP_PORT) ? a->port_num : r->attr.port_num;

	if ((m & IBV_QP_PORT) && !fk_port_ok(l, a->port_num))
		return EINVAL;
	if ((m & IBV_QP_AV) &&
	    (!fk_port_ok(l, a->ah_attr.port_num) || a->ah_attr.port_num != port))
		return EINVAL;
	if ((m & IBV_QP_PKEY_INDEX) && fk_port_ok(l, port) &&
	    a->pkey_index >= l->pkey_tbl_len[port - 1])
		return EINVAL;
	if ((m & IBV_QP_ALT_PATH) &&
	    (!fk_port_ok(l, a->alt_port_num) || !fk_port_ok(l, a->alt_ah_attr.port_num) ||
	     a->alt_pkey_index >= l->pkey_tbl_len[a->alt_port_num - 1]))
		return EINVAL;
	if ((m & IBV_QP_MAX_QP_RD_ATOMIC) && l->max_rd_atom &&
	    a->max_rd_atomic > l->max_rd_atom)
		return EINVAL;
	if ((m & IBV_QP_MAX_DEST_RD_ATOMIC) && l->max_dest_rd_atom &&
	    a->max_dest_rd_atomic > l->max_dest_rd_atom)
		return EINVAL;
	return 0;
}

static void fk_apply(struct fk_qp_attr *s, const struct fk_qp_attr *a, uint32_t m)
{
	if (m & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		s->en_sqd_async_notify = a->en_sqd_async_notify;
	if (m & IBV_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (m & IBV_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (m & IBV_QP_PORT)
		s->port_num = a->port_num;
	if (m & IBV_QP_QKEY)
		s->qkey = a->qkey;
	if (m & IBV_QP_AV)
		s->ah_attr = a->ah_attr;
	if (m & IBV_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (m & IBV_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (m & IBV_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (m & IBV_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
	if (m & IBV_QP_RQ_PSN)
		s->rq_psn = a->rq_psn;
	if (m & IBV_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (m & IBV_QP_ALT_PATH) {
		s->alt_ah_attr = a->alt_ah_attr;
		s->alt_pkey_index = a->alt_pkey_index;
		s->alt_port_num = a->alt_port_num;
		s->alt_timeout = a->alt_timeout;
	}
	if (m & IBV_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (m & IBV_QP_SQ_PSN)
		s->sq_psn = a->sq_psn;
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (m & IBV_QP_PATH_MIG_STATE)
		s->path_mig_state = a->path_mig_state;
	if (m & IBV_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
}

/* LIFE-08: an event on a real QP reaches every handle, each on its own
 * connection, naming that handle and its user value. */
static void fk_rqp_event(struct fk_rqp *r, uint32_t type)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, &r->handles) {
		struct fk_hqp *q = fk_container_of(p, struct fk_hqp, real_link);
		struct fk_event_msg ev = {
			.qp_handle = q->handle, .event_type = type,
			.qpn = r->qpn, .user = q->user,
		};

		fk__send(q->conn, FK_MSG_EVENT, 0, &ev, sizeof(ev), NULL, 0);
	}
}

/* The state lives here, so that every handle sees one QP (OPENQP-08). */
int fk__tgt_modify(struct fk_conn *c, uint32_t handle, uint32_t mask, uint32_t flags,
		   const struct fk_qp_attr *a, uint32_t *state)
{
	struct fk_hqp *q = fk_hqp_find(c, handle);
	struct fk_rqp *r;
	uint32_t cur, next;
	int err;

	if (!q)
		return EINVAL;
	r = q->rqp;
	if (mask & ~FK_QP_STANDARD_BITS)
		return EOPNOTSUPP;			/* QPX-08 */
	if (((mask & IBV_QP_STATE) && a->qp_state > IBV_QPS_ERR) ||
	    ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state > IBV_QPS_ERR))
		return EINVAL;
	cur = (mask & IBV_QP_CUR_STATE) ? a->cur_qp_state : r->attr.qp_state;
	next = (mask & IBV_QP_STATE) ? a->qp_state : cur;
	if (cur != r->attr.qp_state)
		return EINVAL;
	if (!(flags & FK_F_MODIFY_NO_STRIP))
		mask = (uint32_t)fp_qp_mask_strip(IBV_QPT_XRC_RECV, (int)mask);	/* QPX-07 */
	if (!(flags & FK_F_MODIFY_SKIP_TABLE)) {
		err = fp_qp_modify_check(IBV_QPT_XRC_RECV, (enum ibv_qp_state)cur,
					 (enum ibv_qp_state)next, (int)mask);	/* QPX-06 */
		if (err)
			return err;
	}
	err = fk_check_ports(&c->lim, r, a, mask);
	if (err)
		return err;
	if (next == IBV_QPS_RESET)
		memset(&r->attr, 0, sizeof(r->attr));
	fk_apply(&r->attr, a, mask);
	r->attr.qp_state = next;
	r->attr.cur_qp_state = next;
	if (next == IBV_QPS_SQD && r->attr.en_sqd_async_notify)
		fk_rqp_event(r, IBV_EVENT_SQ_DRAINED);	/* a target has nothing in flight */
	*state = next;
	return 0;
}

int fk__tgt_query(struct fk_conn *c, uint32_t handle, struct fk_qp_attr *attr)
{
	struct fk_hqp *q = fk_hqp_find(c, handle);

	if (!q)
		return EINVAL;
	*attr = q->rqp->attr;			/* OPENQP-08: the real QP's state */
	attr->cur_qp_state = attr->qp_state;
	return 0;
}

int fk__event_raise(struct fk_conn *c, uint32_t handle, uint32_t type)
{
	struct fk_hqp *q = fk_hqp_find(c, handle);

	if (!q)
		return EINVAL;
	switch (type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		/* the affiliated errors leave the QP in ERR, as hardware does */
		q->rqp->attr.qp_state = IBV_QPS_ERR;
		break;
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		break;
	default:
		return EINVAL;			/* not an event of a QP */
	}
	fk_rqp_event(q->rqp, type);
	return 0;
}

/* ---- a connection's end ------------------------------------------------------ */
/* XRCD-17: QPs first, then SRQs and numbers, then the XRCD handles. */
void fk__conn_release(struct fk_conn *c)
{
	struct fk_dev *d = c->dev;
	struct fk_link *p, *t;

	if (!d)
		return;
	fk_list_for_each_safe(p, t, &c->qps)
		fk_hqp_drop(fk_container_of(p, struct fk_hqp, link),
			    d->lifetime == FK_LIFE_CURRENT);	/* LIFE-04 / LIFE-05 */
	fk_list_for_each_safe(p, t, &c->srqs)
		fk_srq_free(fk_container_of(p, struct fk_num, conn_link));
	fk_list_for_each_safe(p, t, &c->qpns)
		fk_num_free(fk_container_of(p, struct fk_num, conn_link));
	fk_list_for_each_safe(p, t, &c->xrcds) {
		struct fk_hxrcd *h = fk_container_of(p, struct fk_hxrcd, link);
		struct fk_xrcd *x = h->xrcd;
		bool closed = h->closed;

		fk_hxrcd_free(h);
		if (!closed)
			fk_xrcd_put(x);
	}
	c->dev = NULL;
	if (--d->nconns)
		return;
	/* With no connection left every use is gone, so is every object. */
	if (!fk_list_empty(&d->xrcds) || !fk_list_empty(&d->qpns) ||
	    !fk_list_empty(&d->srqns)) {
		fk_log("BUG: device %s keeps objects without connections", d->name);
		return;
	}
	fk_list_del(&d->link);
	free(d);
}

/* ---- self-check (dump.c prints what it finds) --------------------------------- */
#define FK_PROBLEM(...) do { \
	n++; \
	if (*used < len) \
		*used += (size_t)snprintf(buf + *used, len - *used, "problem: " __VA_ARGS__); \
	if (*used > len) \
		*used = len; \
} while (0)

unsigned fk__state_check(char *buf, size_t len, size_t *used)
{
	struct fk_link *p, *t, *q, *u;
	unsigned n = 0;

	fk_list_for_each_safe(p, t, &fk_devs) {
		struct fk_dev *d = fk_container_of(p, struct fk_dev, link);

		fk_list_for_each_safe(q, u, &d->xrcds) {
			struct fk_xrcd *x = fk_container_of(q, struct fk_xrcd, link);
			unsigned uses = 0;
			struct fk_link *a, *b, *e, *f;

			/* usecnt = handles + XRC SRQs + live TGT QPs, recounted */
			fk_list_for_each_safe(a, b, &fk_conns) {
				struct fk_conn *c = fk_container_of(a, struct fk_conn, link);

				fk_list_for_each_safe(e, f, &c->xrcds) {
					struct fk_hxrcd *h = fk_container_of(e, struct fk_hxrcd, link);

					uses += h->xrcd == x && !h->closed;
				}
				fk_list_for_each_safe(e, f, &c->srqs)
					uses += fk_container_of(e, struct fk_num, conn_link)->xrcd == x;
			}
			fk_list_for_each_safe(a, b, &x->tgt_qps) {
				struct fk_rqp *r = fk_container_of(a, struct fk_rqp, link);
				unsigned hs = 0;

				uses += !r->orphan;
				fk_list_for_each_safe(e, f, &r->handles)
					hs++;
				if (hs != r->usecnt)
					FK_PROBLEM("qp %#x usecnt %u but %u handles\n", r->qpn,
						   r->usecnt, hs);
				if (r->orphan != (r->usecnt == 0))
					FK_PROBLEM("qp %#x orphan=%d usecnt=%u\n", r->qpn,
						   r->orphan, r->usecnt);
			}
			if (uses != x->usecnt || !x->usecnt)
				FK_PROBLEM("xrcd %u usecnt %u but %u uses\n", x->id, x->usecnt, uses);
		}
	}
	fk_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fk_container_of(p, struct fk_conn, link);

		fk_list_for_each_safe(q, u, &c->xrcds) {
			struct fk_hxrcd *h = fk_container_of(q, struct fk_hxrcd, link);
			unsigned refs = 0;
			struct fk_link *a, *b;

			fk_list_for_each_safe(a, b, &c->qps)
				refs += fk_container_of(a, struct fk_hqp, link)->hx == h;
			fk_list_for_each_safe(a, b, &c->srqs)
				refs += fk_container_of(a, struct fk_num, conn_link)->hx == h;
			if (refs != h->refcnt)
				FK_PROBLEM("conn %u xrcd handle %u refcnt %u but %u refs\n",
					   c->id, h->handle, h->refcnt, refs);
			if (h->closed && !h->refcnt)
				FK_PROBLEM("conn %u closed xrcd handle %u kept\n", c->id, h->handle);
		}
	}
	return n;
}

/* ---- routes for the data path --------------------------------------------------- */
static struct fk_conn *fk_conn_by_id(uint32_t id)
{
	struct fk_link *p, *t;

	fk_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *o = fk_container_of(p, struct fk_conn, link);

		if (o->id == id)
			return o;
	}
	return NULL;
}

static struct fk_rqp *fk_tgt_find(struct fk_dev *d, uint32_t qpn)
{
	struct fk_link *p, *t, *q, *u;

	fk_list_for_each_safe(p, t, &d->xrcds) {
		struct fk_xrcd *x = fk_container_of(p, struct fk_xrcd, link);

		fk_list_for_each_safe(q, u, &x->tgt_qps) {
			struct fk_rqp *r = fk_container_of(q, struct fk_rqp, link);

			if (r->qpn == qpn)
				return r;
		}
	}
	return NULL;
}

/*
 * A QPN of a plain QP goes to the ring of the connection that holds the
 * number. A target QP has no process: the packet goes to the process of the
 * XRC SRQ it names, once the QP passes the gate (it can receive; the SRQ is
 * in its domain: WR-03, SRQX-13). ENOENT: nobody behind it (or no ring).
 */
int fk__route(struct fk_conn *c, const struct fk_req_route *req, struct fk_rep_route *rep,
	      struct fk_conn **owner)
{
	struct fk_dev *d = c->dev;
	struct fk_conn *o = NULL;
	struct fk_link *p, *t;
	struct fk_rqp *r;

	if (req->kind > FK_ROUTE_CONN || (req->flags & ~FK_F_ROUTE_ANY_SRQ) ||
	    (req->kind == FK_ROUTE_CONN && (req->srqn || req->flags)))
		return EINVAL;
	if (req->kind == FK_ROUTE_CONN) {
		o = fk_conn_by_id(req->num);
		if (!o || o->dev != d)
			o = NULL;
		goto found;
	}
	fk_list_for_each_safe(p, t, &d->qpns) {
		struct fk_num *n = fk_container_of(p, struct fk_num, dev_link);

		if (n->num == req->num) {
			o = n->conn;
			goto found;
		}
	}
	r = fk_tgt_find(d, req->num);
	if (!r)
		return ENOENT;
	if (r->attr.qp_state != IBV_QPS_RTR && r->attr.qp_state != IBV_QPS_RTS &&
	    r->attr.qp_state != IBV_QPS_SQD) {
		rep->gate = FK_GATE_NO_RECV;
		return 0;
	}
	rep->xrcd_id = r->xrcd->id;
	rep->qp_access = r->attr.qp_access_flags;	/* enforced by the SRQ's process */
	rep->rnr_timer = r->attr.min_rnr_timer;
	rep->gate = FK_GATE_BAD_SRQ;
	fk_list_for_each_safe(p, t, &d->srqns) {
		struct fk_num *n = fk_container_of(p, struct fk_num, dev_link);

		if ((req->flags & FK_F_ROUTE_ANY_SRQ) ? n->xrcd == r->xrcd : n->num == req->srqn) {
			if (n->xrcd != r->xrcd)
				return 0;		/* basic, or another domain's */
			rep->gate = FK_GATE_OK;
			rep->srqn = n->num;
			o = n->conn;
			goto found;
		}
	}
	return 0;
found:
	if (!o || o->ring_fd < 0)
		return ENOENT;
	rep->conn_id = o->id;
	*owner = o;
	return 0;
}
