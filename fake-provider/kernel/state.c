/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel's object tables and their rules: per device, QP and SRQ
 * numbers, XRC domains keyed by inode (XRCD-*), XRC SRQs, real XRC target
 * QPs with one handle per create/open (OPENQP-*), and what a connection's
 * end releases under each lifetime model (LIFE-*, spec section 5), and the
 * per-connection object table: every uverbs object a connection makes (PD,
 * MR, CQ, SRQ, QP, AH, XRCD) has a handle there, the lowest free from 0,
 * and a request's handles are resolved and type-checked in the asking
 * connection's table only, as uverbs does per open device file. A handle
 * of another connection is therefore either unknown here (EINVAL) or the
 * number of one of this connection's own objects, which is then used.
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
#include "qp_modify.h"


struct fp_link fk_devs = FP_LIST_HEAD_INIT(fk_devs);
static uint32_t fk_next_xrcd_id = 1;

/* ---- devices and numbers -------------------------------------------------- */
static struct fk_dev *fk_dev_find(const char *name)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fk_devs) {
		struct fk_dev *d = fp_container_of(p, struct fk_dev, link);

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
static int fk_world_check(const char *devname, enum fk_lifetime life, uint32_t kflags,
			  const struct fk_qp_limits *lim)
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
	/* a script that names its release names its kernel (ref-impl's
	 * ibvct-release.def): a client of another is not of this host */
	if (fk_world->rdma_core && !(kflags & FK_HELLO_LINUX_6_12) != (fk_world->rdma_core < 56))
		return EINVAL;
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

int fk__hello(struct fk_conn *c, const char *devname, enum fk_lifetime life, uint32_t kflags,
	      const struct fk_qp_limits *lim)
{
	struct fk_dev *d = fk_dev_find(devname);
	uint32_t h = 2166136261u;
	const char *s;
	int err = fk_world_check(devname, life, kflags, lim);

	if (err)
		return err;

	if (d) {
		/* one lifetime model per device: mixed models have no meaning */
		if (d->lifetime != life || d->kflags != kflags)
			return EINVAL;
		goto attach;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return ENOMEM;
	snprintf(d->name, sizeof(d->name), "%s", devname);
	d->lifetime = life;
	d->kflags = kflags;
	fp_list_init(&d->xrcds);
	fp_list_init(&d->qpns);
	fp_list_init(&d->srqns);
	/* Distinct ranges per device name make cross-device mixups visible. */
	for (s = devname; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	d->next_qpn = 0x100u * (1 + h % 64) + 0x11;
	d->next_srqn = 0x80u * (1 + h % 64) + 0x3;
	fp_list_add_tail(&fk_devs, &d->link);
attach:
	d->nconns++;
	c->dev = d;
	c->lim = *lim;
	return 0;
}

static bool fk_qpn_used(struct fk_dev *d, uint32_t n)
{
	struct fp_link *p, *t, *q, *u;

	fp_list_for_each_safe(p, t, &d->qpns)
		if (fp_container_of(p, struct fk_num, dev_link)->num == n)
			return true;
	fp_list_for_each_safe(p, t, &d->xrcds) {
		struct fk_xrcd *x = fp_container_of(p, struct fk_xrcd, link);

		fp_list_for_each_safe(q, u, &x->tgt_qps)
			if (fp_container_of(q, struct fk_rqp, link)->qpn == n)
				return true;
	}
	return false;
}

static struct fk_num *fk_srqn_find(struct fk_dev *d, uint32_t n)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &d->srqns) {
		struct fk_num *s = fp_container_of(p, struct fk_num, dev_link);

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
	n->via = fk__cur ? fk__cur : c;
	fp_list_add_tail(srq ? &c->dev->srqns : &c->dev->qpns, &n->dev_link);
	fp_list_add_tail(srq ? &c->srqs : &c->qpns, &n->conn_link);
	return n;
}

static void fk_num_free(struct fk_num *n)
{
	fp_list_del(&n->dev_link);
	fp_list_del(&n->conn_link);
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
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, srq ? &c->srqs : &c->qpns) {
		struct fk_num *n = fp_container_of(p, struct fk_num, conn_link);

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

/* ---- the object table -------------------------------------------------------- */
#define FK_TAB_MAX	(1u << 20)	/* handles per connection */

/*
 * A new entry at the lowest free handle, counting from 0: the kernel's
 * xa_alloc() on ufile->idr in alloc_begin_idr_uobject() (linux
 * drivers/infiniband/core/rdma_core.c), so two contexts number their
 * objects alike and one context's handle names another's object.
 */
static int fk_uobj_alloc(struct fk_conn *c, uint32_t type, uint32_t sub,
			 struct fk_uobj **out)
{
	struct fk_uobj *u;
	uint32_t i;

	for (i = 0; i < c->tab_len && c->tab[i]; i++)
		;
	if (i == c->tab_len) {
		uint32_t n = c->tab_len ? c->tab_len * 2 : 16;
		struct fk_uobj **t;

		if (c->tab_len >= FK_TAB_MAX)
			return ENOMEM;
		t = realloc(c->tab, n * sizeof(*t));
		if (!t)
			return ENOMEM;
		memset(t + c->tab_len, 0, (n - c->tab_len) * sizeof(*t));
		c->tab = t;
		c->tab_len = n;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return ENOMEM;
	u->type = type;
	u->sub = sub;
	u->handle = i;
	c->tab[i] = u;
	*out = u;
	return 0;
}

/*
 * The live object of this type behind a handle of this connection, or
 * NULL: uobj_get_obj_read() fails for an unused id or an object of
 * another type (linux drivers/infiniband/core/rdma_core.c
 * rdma_lookup_get_uobject: "uobj->uapi_object != obj" -> -EINVAL), and
 * the callers answer EINVAL. Under the handle_fallback quirk an unknown
 * handle names the connection's first object of the type instead.
 */
static struct fk_uobj *fk_uobj_get(struct fk_conn *c, uint32_t handle, uint32_t type)
{
	struct fk_uobj *u = handle < c->tab_len ? c->tab[handle] : NULL;
	uint32_t i;

	if (u && u->type == type && !u->closed)
		return u;
	if (!(c->quirks & FK_Q_HANDLE_FALLBACK))
		return NULL;
	for (i = 0; i < c->tab_len; i++)
		if (c->tab[i] && c->tab[i]->type == type && !c->tab[i]->closed)
			return c->tab[i];
	return NULL;
}

/*
 * The same lookup as the ioctl methods' attribute parsing makes it (linux
 * v6.1 drivers/infiniband/core/rdma_core.c): a number that names nothing in
 * this file is -ENOENT (lookup_get_idr_uobject, xa_load finds no object), one
 * that names an object of another type -EINVAL (rdma_lookup_get_uobject,
 * "uobj->uapi_object != obj"); the write handlers turn both into EINVAL
 * (fk_uobj_get's callers). The handle_fallback quirk as in fk_uobj_get.
 */
static int fk_uobj_lookup(struct fk_conn *c, uint32_t handle, uint32_t type,
			  struct fk_uobj **out)
{
	struct fk_uobj *u = handle < c->tab_len ? c->tab[handle] : NULL;

	*out = fk_uobj_get(c, handle, type);
	if (*out)
		return 0;
	return !u || u->closed ? ENOENT : EINVAL;
}

static void fk_uobj_hold(struct fk_uobj *u, int slot, struct fk_uobj *target)
{
	if (!target)
		return;
	u->ref[slot] = target;
	target->usecnt++;
}

static void fk_hxrcd_free(struct fk_hxrcd *h);

static void fk_uobj_free(struct fk_conn *c, struct fk_uobj *u);

/* One holder fewer; an object destroyed under a quirk while held goes with
 * its last holder. */
static void fk_uobj_unref(struct fk_conn *c, struct fk_uobj *u)
{
	if (--u->usecnt || !u->closed)
		return;
	if (u->type == FK_OBJ_XRCD)
		fk_hxrcd_free(u->obj);
	fk_uobj_free(c, u);
}

static void fk_uobj_free(struct fk_conn *c, struct fk_uobj *u)
{
	int i;

	c->tab[u->handle] = NULL;
	for (i = 0; i < FK_NREF; i++)
		if (u->ref[i])
			fk_uobj_unref(c, u->ref[i]);
	free(u);
}

/* ---- XRC domains ------------------------------------------------------------ */
static void fk_rqp_free(struct fk_rqp *r);

/* Drop one use; the domain goes with its last (XRCD-14/15). Every real TGT
 * QP holds a use, leftovers of the seed model too (LIFE-05), so none is
 * left here unless the leftover_drops_domain quirk let one go without. */
static void fk_xrcd_put(struct fk_xrcd *x)
{
	struct fp_link *p, *t;

	if (--x->usecnt)		/* @rule XRCD-14 */
		return;
	fp_list_for_each_safe(p, t, &x->tgt_qps)
		fk_rqp_free(fp_container_of(p, struct fk_rqp, link));
	if (x->inode_fd >= 0)
		close(x->inode_fd);
	fk_logv("xrcd %u destroyed", x->id);
	fp_list_del(&x->link);
	free(x);
}

static struct fk_hxrcd *fk_hxrcd_find(struct fk_conn *c, uint32_t handle)
{
	struct fk_uobj *u = fk_uobj_get(c, handle, FK_OBJ_XRCD);

	return u ? u->obj : NULL;
}

static void fk_hxrcd_free(struct fk_hxrcd *h)
{
	fp_list_del(&h->link);
	free(h);
}

/* fd: the daemon's own copy of the client's fd (SCM_RIGHTS), or -1; always
 * consumed. The inode is the daemon's fstat, never a number from the client. */
int fk__xrcd_open(struct fk_conn *c, int fd, uint32_t oflags, uint32_t flags,
		  uint32_t *handle, uint32_t *id)
{
	struct fk_xrcd *x = NULL;
	struct fk_hxrcd *h;
	struct fp_link *p, *t;
	struct stat st;
	int err;

	h = calloc(1, sizeof(*h));
	if (!h) {
		err = ENOMEM;
		goto err_close_fd;
	}
	err = fk_uobj_alloc(c, FK_OBJ_XRCD, 0, &h->uo);
	if (err)
		goto err_free_h;
	h->uo->obj = h;
	if (fd < 0)
		goto create;			/* XRCD-03/04: oflags are not read */
	if (fstat(fd, &st)) {		/* XRCD-10: resolved in server.c; this one cannot fail */
		err = EBADF;
		goto err_free_uo;
	}
	/* XRCD-08: find_xrcd(); under the xrcd_no_share quirk nothing is found */
	fp_list_for_each_safe(p, t, &c->dev->xrcds) {
		struct fk_xrcd *d = fp_container_of(p, struct fk_xrcd, link);

		if (c->quirks & FK_Q_XRCD_NO_SHARE)
			break;
		if (d->inode_fd >= 0 && d->st_dev == st.st_dev && d->st_ino == st.st_ino) { /* @rule XRCD-08 */
			x = d;
			break;
		}
	}
	/* The quirk: every device's table is searched, where the kernel has
	 * one per device (XRCD-09: ib_uverbs_device.xrcd_tree). */
	if (!x && (flags & FK_Q_XRCD_INODE_ANY_DEVICE)) {
		struct fp_link *q, *u, *v, *w;

		fp_list_for_each_safe(q, u, &fk_devs) {
			struct fk_dev *od = fp_container_of(q, struct fk_dev, link);

			fp_list_for_each_safe(v, w, &od->xrcds) {
				struct fk_xrcd *d = fp_container_of(v, struct fk_xrcd, link);

				if (!x && d->inode_fd >= 0 && d->st_dev == st.st_dev &&
				    d->st_ino == st.st_ino)
					x = d;
			}
		}
	}
	if (x) {
		if (oflags & O_EXCL) {		/* @rule XRCD-07 */
			err = (flags & FK_Q_XRCD_EXCL_EEXIST) ? EEXIST : EINVAL;
			goto err_free_uo;
		}
		close(fd);			/* the domain already pins the inode */
		x->usecnt++;			/* XRCD-08: same domain, new handle */
		goto attach;
	}
	if (!(oflags & O_CREAT) && !(c->quirks & FK_Q_XRCD_OPEN_CREATES)) {	/* @rule XRCD-06 */
		err = EAGAIN;
		goto err_free_uo;
	}
create:
	x = calloc(1, sizeof(*x));
	if (!x) {
		err = ENOMEM;
		goto err_free_uo;
	}
	x->dev = c->dev;
	x->id = fk_next_xrcd_id++;
	x->inode_fd = fd;
	if (fd >= 0) {
		x->st_dev = st.st_dev;
		x->st_ino = st.st_ino;
	}
	x->usecnt = 1;
	fp_list_init(&x->tgt_qps);
	fp_list_add_tail(&c->dev->xrcds, &x->link);
attach:
	h->conn = c;
	h->xrcd = x;
	h->handle = h->uo->handle;
	fp_list_add_tail(&c->xrcds, &h->link);
	*handle = h->handle;
	*id = x->id;
	return 0;

err_free_uo:
	fk_uobj_free(c, h->uo);
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
	/* uverbs_free_xrcd: ib_destroy_usecnt(&uxrcd->refcnt) */
	if (h->uo->usecnt && !(flags & FK_Q_XRCD_CLOSE_NOT_BUSY))	/* @rule XRCD-13 */
		return EBUSY;
	x = h->xrcd;
	/* the xrcd_close_unbinds quirk: a kernel that drops the inode binding
	 * with any handle, not with the last use (XRCD-14); the domain itself
	 * stays for the handles and objects that hold it */
	if ((c->quirks & FK_Q_XRCD_CLOSE_UNBINDS) && x->inode_fd >= 0 && x->usecnt > 1) {
		close(x->inode_fd);
		x->inode_fd = -1;
	}
	if (h->uo->usecnt) {
		h->closed = true;		/* freed with its last reference */
		h->uo->closed = true;
	} else {
		fk_uobj_free(c, h->uo);
		fk_hxrcd_free(h);
	}
	fk_xrcd_put(x);				/* XRCD-14/16 */
	return 0;
}

/* ---- XRC SRQs ---------------------------------------------------------------- */
/* Only the slots a request type uses may name something. */
static bool fk_refs_only(const struct fk_req_obj *r, unsigned used)
{
	int i;

	for (i = 0; i < FK_NREF; i++)
		if (!(used & (1u << i)) && r->ref[i] != FK_NO_HANDLE)
			return false;
	return true;
}

/*
 * An XRC SRQ as the ioctl method makes it, the path rdma-core v44.0 takes
 * on a kernel that has it (libibverbs/cmd_srq.c:114 execute_ioctl_fallback;
 * mlx5 and mlx4 reach it through ibv_cmd_create_srq_ex, providers/mlx5/
 * verbs.c:3624, providers/mlx4/srq.c:269; the write command CREATE_XSRQ,
 * cmd_srq.c:171, only on a kernel without the method): the XRCD, the CQ,
 * then the PD handle, in the order libibverbs puts them, each resolved in
 * this connection's table, ENOENT or EINVAL (fk_uobj_lookup, SRQX-08;
 * linux v6.1 uverbs_std_types_srq.c UVERBS_METHOD_SRQ_CREATE); it then
 * holds all three (SRQX-09) and a use of the domain (XRCD-14, LIFE-12).
 */
int fk__srq_create_xrc(struct fk_conn *c, const struct fk_req_obj *r, uint32_t *handle,
		       uint32_t *srqn)
{
	struct fk_uobj *xu, *cq, *pd, *u;
	struct fk_hxrcd *h;
	struct fk_num *n;
	int err;

	if (r->type != FK_OBJ_SRQ || r->sub != IBV_SRQT_XRC || r->flags ||
	    !fk_refs_only(r, 1u << FK_REF_PD | 1u << FK_REF_SCQ | 1u << FK_REF_XRCD))
		return EINVAL;
	err = fk_uobj_lookup(c, r->ref[FK_REF_XRCD], FK_OBJ_XRCD, &xu);
	if (err)				/* @rule SRQX-08 */
		return err;
	err = fk_uobj_lookup(c, r->ref[FK_REF_SCQ], FK_OBJ_CQ, &cq);
	if (err)				/* @rule SRQX-08 */
		return err;
	err = fk_uobj_lookup(c, r->ref[FK_REF_PD], FK_OBJ_PD, &pd);
	if (err)				/* @rule SRQX-08 */
		return err;
	h = xu->obj;
	err = fk_uobj_alloc(c, FK_OBJ_SRQ, IBV_SRQT_XRC, &u);
	if (err)
		return err;
	n = fk_num_new(c, true);
	if (!n) {
		fk_uobj_free(c, u);
		return ENOMEM;
	}
	fk_uobj_hold(u, FK_REF_PD, pd);		/* SRQX-09 */
	fk_uobj_hold(u, FK_REF_SCQ, cq);
	fk_uobj_hold(u, FK_REF_XRCD, xu);	/* XRCD-13 */
	u->obj = n;
	n->uo = u;
	n->hx = h;
	n->xrcd = h->xrcd;
	h->xrcd->usecnt++;			/* XRCD-14, LIFE-12 */
	*handle = u->handle;
	*srqn = n->num;
	return 0;
}

static void fk_srq_free(struct fk_num *n)
{
	struct fk_conn *c = n->conn;
	struct fk_uobj *u = n->uo;
	struct fk_xrcd *x = n->xrcd;

	fk_num_free(n);
	if (u)
		fk_uobj_free(c, u);
	if (x)
		fk_xrcd_put(x);
}

int fk__srq_destroy(struct fk_conn *c, uint32_t handle)
{
	struct fk_uobj *u = fk_uobj_get(c, handle, FK_OBJ_SRQ);

	if (!u || !u->obj)
		return EINVAL;
	if (u->usecnt)				/* @rule SRQX-15 */
		return EBUSY;			/* ib_destroy_srq_user: srq->usecnt */
	/* the xrc_srq_held_by_tgt_qp quirk: a kernel whose TGT QPs hold the
	 * XRC SRQs of their domain */
	if ((c->quirks & FK_Q_XRC_SRQ_HELD_BY_TGT_QP) && ((struct fk_num *)u->obj)->xrcd &&
	    !fp_list_empty(&((struct fk_num *)u->obj)->xrcd->tgt_qps))
		return EBUSY;
	fk_srq_free(u->obj);			/* SRQX-15: TGT QPs hold no reference */
	return 0;
}

/* ---- objects without daemon state: PD, MR, CQ, AH, basic SRQ, plain QP ---------- */
static bool fk_plain_qp_type(uint32_t t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_UC || t == IBV_QPT_UD || t == IBV_QPT_XRC_SEND;
}

/*
 * The access flags of a memory region, as the kernel checks them before
 * the driver sees them: ib_check_mr_access() (linux v6.1
 * include/rdma/ib_verbs.h:4289, called from ib_uverbs_reg_mr in
 * uverbs_cmd.c): remote write or remote atomic needs local write; no bit
 * outside IB_ACCESS_SUPPORTED (up to HUGETLB, and the optional range);
 * on-demand paging needs a device that has it, and the fake device reports
 * none (no odp_caps). Linux 6.12 (ib_verbs.h:4345, ref-impl's
 * ibvct-release.def MR_ACCESS_CHECK) takes the two flush bits into
 * IB_ACCESS_SUPPORTED, where the device has the matching capability
 * (EOPNOTSUPP otherwise), and answers on-demand paging without it with
 * EOPNOTSUPP. libibverbs passes the flags on as they are (rdma-core v44.0
 * libibverbs/verbs.c:305 ibv_reg_mr_iova2), so these are the only checks.
 */
static int fk_mr_access_check(const struct fk_dev *d, uint32_t access)
{
	const uint32_t flush = IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT;
	uint32_t kf = d ? d->kflags : 0;
	bool k612 = kf & FK_HELLO_LINUX_6_12;
	uint32_t supported = (((uint32_t)IBV_ACCESS_HUGETLB << 1) - 1) |
			     (uint32_t)IBV_ACCESS_OPTIONAL_RANGE;

	if (k612)
		supported |= flush;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (access & ~supported)
		return EINVAL;
	if (access & IBV_ACCESS_ON_DEMAND)
		return k612 ? EOPNOTSUPP : EINVAL;
	if ((access & flush) && !(kf & FK_HELLO_DEV_FLUSH))
		return EOPNOTSUPP;
	return 0;
}

/*
 * Registration of an object the plugin made, with the handles it uses,
 * resolved and type-checked as the kernel's create handlers do; each one
 * named is then held (usecnt) until the new object is destroyed. A QP
 * follows create_qp() in uverbs_cmd.c: the SRQ (not an XRC one), the
 * receive CQ when it differs from the send CQ, the send CQ, the PD; an
 * XRC_SEND QP (XRC_INI) has no receive side, so rcq and srq are not read.
 */
int fk__obj_create(struct fk_conn *c, const struct fk_req_obj *r, uint32_t *handle)
{
	struct fk_uobj *ref[FK_NREF] = { NULL }, *u;
	uint32_t sub = r->sub;
	unsigned used;
	int i, err;

	if (r->flags)
		return EINVAL;
	switch (r->type) {
	case FK_OBJ_PD:
	case FK_OBJ_CQ:
		if (r->sub || !fk_refs_only(r, 0))
			return EINVAL;
		break;
	case FK_OBJ_SRQ:
		/* the SRQ create handler's type switch (linux
		 * uverbs_std_types_srq.c UVERBS_METHOD_SRQ_CREATE, default:
		 * -EINVAL): libibverbs hands an unknown type on (rdma-core
		 * v44.0 libibverbs/cmd_srq.c:96, default: break); XRC SRQs come
		 * by SRQ_CREATE_XRC, and TM SRQs are not made here */
		if (sub == IBV_SRQT_XRC || sub == IBV_SRQT_TM)
			return EINVAL;
		if (sub != IBV_SRQT_BASIC && !(c->quirks & FK_Q_SRQ_UNKNOWN_TYPE_BASIC)) /* @rule SRQX-07 */
			return EINVAL;
		sub = IBV_SRQT_BASIC;		/* srq_unknown_type_basic: made basic */
		/* fall through */
	case FK_OBJ_AH:
		if (r->type == FK_OBJ_AH && sub)
			return EINVAL;
		/* fall through */
	case FK_OBJ_MR:
		/* an MR's sub is its access flags: ib_check_mr_access() */
		if (r->type == FK_OBJ_MR) {
			err = fk_mr_access_check(c->dev, sub);
			if (err)
				return err;
			sub = 0;
		}
		if (!fk_refs_only(r, 1u << FK_REF_PD))
			return EINVAL;
		ref[FK_REF_PD] = fk_uobj_get(c, r->ref[FK_REF_PD], FK_OBJ_PD);
		if (!ref[FK_REF_PD])
			return EINVAL;
		break;
	case FK_OBJ_QP:
		used = 1u << FK_REF_PD | 1u << FK_REF_SCQ | 1u << FK_REF_RCQ | 1u << FK_REF_SRQ;
		/* create_qp's type switch (linux uverbs_std_types_qp.c
		 * UVERBS_METHOD_QP_CREATE, default: -EINVAL): QPX-05's second
		 * check, behind libibverbs' command layer (rdma-core v44.0
		 * libibverbs/cmd_qp.c:153) */
		if ((!fk_plain_qp_type(sub) && !(c->quirks & FK_Q_QP_ANY_TYPE)) ||
		    !fk_refs_only(r, used))
			return EINVAL;
		if (!fk_plain_qp_type(sub))
			sub = IBV_QPT_RC;	/* the qp_any_type quirk: made as RC */
		if (sub != IBV_QPT_XRC_SEND) {
			if (r->ref[FK_REF_SRQ] != FK_NO_HANDLE) {
				ref[FK_REF_SRQ] = fk_uobj_get(c, r->ref[FK_REF_SRQ], FK_OBJ_SRQ);
				if (!ref[FK_REF_SRQ] || ref[FK_REF_SRQ]->sub == IBV_SRQT_XRC)
					return EINVAL;
			}
			if (r->ref[FK_REF_RCQ] != r->ref[FK_REF_SCQ]) {
				ref[FK_REF_RCQ] = fk_uobj_get(c, r->ref[FK_REF_RCQ], FK_OBJ_CQ);
				if (!ref[FK_REF_RCQ])
					return EINVAL;
			}
		}
		ref[FK_REF_SCQ] = fk_uobj_get(c, r->ref[FK_REF_SCQ], FK_OBJ_CQ);
		ref[FK_REF_PD] = fk_uobj_get(c, r->ref[FK_REF_PD], FK_OBJ_PD);
		if (!ref[FK_REF_SCQ] || !ref[FK_REF_PD])
			return EINVAL;
		if (sub != IBV_QPT_XRC_SEND && !ref[FK_REF_RCQ])
			ref[FK_REF_RCQ] = ref[FK_REF_SCQ];
		break;
	default:
		return EINVAL;			/* XRCDs, XRC SRQs, TGT QPs have their own */
	}
	err = fk_uobj_alloc(c, r->type, sub, &u);
	if (err)
		return err;
	for (i = 0; i < FK_NREF; i++)
		fk_uobj_hold(u, i, ref[i]);
	*handle = u->handle;
	return 0;
}

/*
 * Destroy of an object without daemon state. The kernel refuses while
 * others hold it: a PD (ib_dealloc_pd_user), a CQ (ib_destroy_cq_user) or
 * an SRQ (ib_destroy_srq_user) with a non-zero usecnt is EBUSY (SRQX-09).
 */
static void fk_ghost_add(struct fk_conn *c, const struct fk_uobj *u);

int fk__obj_destroy(struct fk_conn *c, uint32_t handle, uint32_t type)
{
	struct fk_uobj *u = handle < c->tab_len ? c->tab[handle] : NULL;

	if (!u || u->closed || u->type != type || u->obj)
		return EINVAL;
	if (u->usecnt)				/* @rule SRQX-09 */
		return EBUSY;
	if (type == FK_OBJ_PD || type == FK_OBJ_MR)
		fk_ghost_add(c, u);
	fk_uobj_free(c, u);
	return 0;
}

/* ---- the context's file shared by several connections --------------------- */
/*
 * The connection c, whose socket closed, leaves the state it made or used:
 * the QPs and SRQs its process served are no longer reachable (a route to
 * them finds nobody: ENOENT) and the events of the handles it made go
 * nowhere; the objects themselves stay in the file s until it is released,
 * as a uverbs file's objects do while another fd of it is open.
 */
void fk__conn_detach(struct fk_conn *s, struct fk_conn *c)
{
	struct fp_link *p, *t;
	uint32_t i;

	fp_list_for_each_safe(p, t, &s->qpns) {
		struct fk_num *n = fp_container_of(p, struct fk_num, conn_link);

		if (n->via == c)
			n->via = NULL;
	}
	fp_list_for_each_safe(p, t, &s->srqs) {
		struct fk_num *n = fp_container_of(p, struct fk_num, conn_link);

		if (n->via == c)
			n->via = NULL;
	}
	fp_list_for_each_safe(p, t, &s->qps) {
		struct fk_hqp *q = fp_container_of(p, struct fk_hqp, link);

		if (q->evc == c)
			q->evc = NULL;
	}
	for (i = 0; i < s->tab_len; i++)
		if (s->tab[i] && s->tab[i]->mrc == c)
			s->tab[i]->mrc = NULL;
}

/* What import_stale_handle finds again: the last PDs and MRs destroyed. */
static void fk_ghost_add(struct fk_conn *c, const struct fk_uobj *u)
{
	struct fk_ghost *g = &c->ghost[c->nghost++ % (sizeof(c->ghost) / sizeof(c->ghost[0]))];

	g->handle = u->handle;
	g->type = u->type;
	g->pd = u->ref[FK_REF_PD] ? u->ref[FK_REF_PD]->handle : FK_NO_HANDLE;
	g->mri = u->mri;
}

static const struct fk_ghost *fk_ghost_find(const struct fk_conn *c, uint32_t handle,
					    uint32_t type)
{
	size_t i, n = sizeof(c->ghost) / sizeof(c->ghost[0]);

	for (i = 0; i < n && i < c->nghost; i++)
		if (c->ghost[i].handle == handle && c->ghost[i].type == type)
			return &c->ghost[i];
	return NULL;
}

static void fk_import_fill(struct fk_rep_import *rep, uint32_t handle, uint32_t pd,
			   const struct fk_mr_info *m)
{
	rep->handle = handle;
	rep->pd = pd;
	rep->lkey = m->lkey;
	rep->rkey = m->rkey;
	rep->access = m->access;
	rep->flags = m->flags;
	rep->length = m->length;
	rep->iova = m->iova;
	rep->moff = m->moff;
}

/*
 * ibv_import_pd / ibv_import_mr: the object of that handle and type in the
 * file (mlx5_import_pd's MLX5_IB_METHOD_PD_QUERY, rdma-core v44.0
 * providers/mlx5/verbs.c:766; ibv_cmd_query_mr's UVERBS_METHOD_QUERY_MR,
 * libibverbs/cmd_mr.c:90, which answers the MR's lkey, rkey and length).
 * The handle is an ioctl attribute, so the lookup is the ioctl path's
 * (fk_uobj_lookup): ENOENT for a number that names nothing in this file
 * (a handle of another file, or one destroyed through any context of it),
 * EINVAL for an object of another type. Nothing is held: the importer's
 * object is the same uobject, which either context may destroy. *ring:
 * the connection whose ring memfd holds a mapped MR's bytes, else NULL.
 */
int fk__obj_import(struct fk_conn *c, const struct fk_req_obj_import *r,
		   struct fk_rep_import *rep, struct fk_conn **ring)
{
	const struct fk_ghost *g;
	struct fk_uobj *u = NULL;
	struct fp_link *p, *t;
	int err;

	*ring = NULL;
	if (r->reserved || (r->flags & ~fk_quirk_flags(FK_MSG_OBJ_IMPORT)) ||
	    (r->type != FK_OBJ_PD && r->type != FK_OBJ_MR))
		return EINVAL;
	err = fk_uobj_lookup(c, r->handle, r->type, &u);
	if (err == ENOENT && (r->flags & FK_Q_IMPORT_STALE_HANDLE) &&
	    (g = fk_ghost_find(c, r->handle, r->type))) {
		fk_import_fill(rep, g->handle, g->pd, &g->mri);	/* the quirk: a dead one */
		rep->flags &= ~FK_MR_MAPPED;
		return 0;
	}
	if (err == ENOENT && (r->flags & FK_Q_IMPORT_ANY_CONTEXT)) {
		fp_list_for_each_safe(p, t, &fk_conns) {	/* the quirk: any file's */
			struct fk_conn *o = fp_container_of(p, struct fk_conn, link);

			if (o != c && !o->uf && o->dev == c->dev &&
			    !fk_uobj_lookup(o, r->handle, r->type, &u)) {
				err = 0;
				break;
			}
		}
	}
	if (err)
		return err;
	fk_import_fill(rep, u->handle, u->ref[FK_REF_PD] ? u->ref[FK_REF_PD]->handle : FK_NO_HANDLE,
		       &u->mri);
	if ((u->mri.flags & FK_MR_MAPPED) && u->mrc && u->mrc->ring_fd >= 0)
		*ring = u->mrc;
	else
		rep->flags &= ~FK_MR_MAPPED;
	return 0;
}

/* MR_KEYS: the driver's registration, for QUERY_MR and importers. */
int fk__mr_keys(struct fk_conn *c, const struct fk_req_mr_keys *r)
{
	struct fk_uobj *u;
	int err;

	if (r->reserved || (r->flags & ~FK_MR_MAPPED))
		return EINVAL;
	err = fk_uobj_lookup(c, r->mr_handle, FK_OBJ_MR, &u);
	if (err)
		return err;
	u->mri = (struct fk_mr_info){
		.lkey = r->lkey, .rkey = r->rkey, .access = r->access, .flags = r->flags,
		.length = r->length, .iova = r->iova, .moff = r->moff,
	};
	u->mrc = fk__cur ? fk__cur : c;
	return 0;
}

/*
 * ibv_rereg_mr's command, in the order of ib_uverbs_rereg_mr (linux v6.1
 * drivers/infiniband/core/uverbs_cmd.c): no flag is EINVAL, a flag it
 * does not know EOPNOTSUPP, a new translation whose start and hca_va lie
 * at different offsets in their pages EINVAL; then the MR by its handle
 * (uobj_get_write: ENOENT for a number that names nothing, EINVAL for an
 * object of another type), the new access (ib_check_mr_access), the new PD
 * by its handle (uobj_get_obj_read, EINVAL). The driver re-registers in
 * place, so the MR keeps its uobject and handle, and the use of a PD moves
 * from the old one to the new (atomic_dec/atomic_inc of pd->usecnt): the
 * old one can go once nothing else holds it. A refusal changes nothing.
 */
int fk__mr_rereg(struct fk_conn *c, const struct fk_req_mr_rereg *r, uint32_t *pd_handle)
{
	struct fk_uobj *mr = r->mr_handle < c->tab_len ? c->tab[r->mr_handle] : NULL;
	struct fk_uobj *pd, *old;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int err;

	if (!r->flags)				/* @rule MR-03 */
		return EINVAL;
	if (r->flags & ~FK_REREG_ALL)
		return EOPNOTSUPP;
	if ((r->flags & FK_REREG_TRANS) && ((r->start ^ r->hca_va) & (page - 1)))
		return EINVAL;
	if (!mr || mr->closed)
		return ENOENT;
	if (mr->type != FK_OBJ_MR)
		return EINVAL;
	if (r->flags & FK_REREG_ACCESS) {
		err = fk_mr_access_check(c->dev, r->access);
		if (err)			/* @rule MR-03 */
			return err;
	}
	old = mr->ref[FK_REF_PD];
	pd = old;
	if (r->flags & FK_REREG_PD) {
		pd = fk_uobj_get(c, r->pd_handle, FK_OBJ_PD);
		if (!pd)
			return EINVAL;
	}
	if (pd != old) {			/* @rule MR-02 */
		mr->ref[FK_REF_PD] = NULL;
		fk_uobj_unref(c, old);
		fk_uobj_hold(mr, FK_REF_PD, pd);
	}
	*pd_handle = mr->ref[FK_REF_PD]->handle;
	return 0;
}

/* ---- target QPs ---------------------------------------------------------------- */
static struct fk_hqp *fk_hqp_find(struct fk_conn *c, uint32_t handle)
{
	struct fk_uobj *u = fk_uobj_get(c, handle, FK_OBJ_QP);

	return u && u->sub == IBV_QPT_XRC_RECV ? u->obj : NULL;
}

static struct fk_hqp *fk_hqp_new(struct fk_conn *c, struct fk_rqp *r,
				 struct fk_hxrcd *hx, uint64_t user)
{
	struct fk_hqp *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	if (fk_uobj_alloc(c, FK_OBJ_QP, IBV_QPT_XRC_RECV, &q->uo)) {
		free(q);
		return NULL;
	}
	q->uo->obj = q;
	q->conn = c;
	q->rqp = r;
	q->evc = fk__cur ? fk__cur : c;
	q->hx = hx;
	q->user = user;
	q->handle = q->uo->handle;
	fk_uobj_hold(q->uo, FK_REF_XRCD, hx->uo);	/* XRCD-13, OPENQP-07 */
	r->usecnt++;				/* LIFE-01 */
	fp_list_add_tail(&c->qps, &q->link);
	fp_list_add_tail(&r->handles, &q->real_link);
	return q;
}

/* The real QP goes: its number, and its domain use (unless it is a leftover
 * that held none under the leftover_drops_domain quirk). */
static void fk_rqp_free(struct fk_rqp *r)
{
	struct fk_xrcd *x = r->xrcd;
	bool held = !r->unheld;

	fk_logv("tgt qp %#x destroyed", r->qpn);
	fp_list_del(&r->link);
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
	fp_list_init(&r->handles);
	fp_list_add_tail(&hx->xrcd->tgt_qps, &r->link);
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
	struct fp_link *p, *t, *q, *u;
	struct fk_hqp *h;

	if (!hx)				/* @rule OPENQP-06 */
		return EINVAL;
	if (type != IBV_QPT_XRC_RECV && !(c->quirks & FK_Q_OPEN_QP_ANY_TYPE))	/* @rule OPENQP-04 */
		return EINVAL;
	/* OPENQP-05: a live TGT QP of the same domain, whoever made it. */
	fp_list_for_each_safe(p, t, &c->dev->xrcds) {
		struct fk_xrcd *x = fp_container_of(p, struct fk_xrcd, link);

		if (x != hx->xrcd && !(flags & FK_Q_OPEN_QP_ANY_DOMAIN))	/* @rule OPENQP-05 */
			continue;
		fp_list_for_each_safe(q, u, &x->tgt_qps) {
			struct fk_rqp *cand = fp_container_of(q, struct fk_rqp, link);

			if (cand->qpn == qpn && !cand->dead)
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
		if (r->unheld) {
			r->unheld = false;
			r->xrcd->usecnt++;
		}
	}
	*handle = h->handle;
	return 0;
}

/*
 * Drop one handle. explicit_destroy: ibv_destroy_qp, and in the current model
 * also a connection's end (LIFE-04). Otherwise the seed model's close-only
 * (LIFE-05): a last handle leaves the QP in its domain as a leftover, and
 * the leftover keeps the one domain use every real TGT QP holds (legacy
 * ib_create_qp's atomic_inc(&xrcd->usecnt), dropped only by
 * __ib_destroy_shared_qp), so the domain and its inode binding stay while
 * it exists. The leftover_drops_domain quirk is the older model that let
 * that use go.
 */
static void fk_hqp_drop(struct fk_hqp *q, bool explicit_destroy)
{
	struct fk_conn *c = q->conn;
	struct fk_rqp *r = q->rqp;

	fp_list_del(&q->link);
	fp_list_del(&q->real_link);
	fk_uobj_free(c, q->uo);
	free(q);
	if (--r->usecnt)			/* @rule LIFE-02 */
		return;
	if (r->dead) {
		fk_rqp_free(r);			/* killed under a quirk: no leftover */
		return;
	}
	if (!explicit_destroy) {		/* @rule LIFE-05 */
		r->orphan = true;
		if (c->quirks & FK_Q_LEFTOVER_DROPS_DOMAIN) {
			r->unheld = true;
			fk_xrcd_put(r->xrcd);	/* may take r with the domain */
		}
		return;
	}
	fk_rqp_free(r);				/* LIFE-03 */
}

int fk__tgt_destroy(struct fk_conn *c, uint32_t handle)
{
	struct fk_hqp *q = fk_hqp_find(c, handle);

	if (!q)
		return EINVAL;
	/* tgt_destroy_kills_real_qp: a kernel that destroys the real QP with
	 * any handle (LIFE-02); its other handles stay, on a dead QP.
	 * tgt_last_destroy_keeps_qp: one whose last destroy only closes, as
	 * the seed model's exit does (LIFE-03) */
	if ((c->quirks & FK_Q_TGT_DESTROY_KILLS_REAL_QP) && q->rqp->usecnt > 1)
		q->rqp->dead = true;
	fk_hqp_drop(q, !(c->quirks & FK_Q_TGT_LAST_DESTROY_KEEPS_QP));
	return 0;
}

/* The modify rules shared with the plugin (qp_modify.h), on the wire struct. */
FK_QP_MODIFY_OPS(fk_tgt, struct fk_qp_attr)

/* LIFE-08: an event on a real QP reaches every handle, each on its own
 * connection, naming that handle and its user value. */
static void fk_rqp_event(struct fk_rqp *r, uint32_t type)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &r->handles) {
		struct fk_hqp *q = fp_container_of(p, struct fk_hqp, real_link);
		struct fk_event_msg ev = {
			.qp_handle = q->handle, .event_type = type,
			.qpn = r->qpn, .user = q->user,
		};

		if (q->evc)	/* NULL: the connection that made it is gone */
			fk__send(q->evc, FK_MSG_EVENT, 0, &ev, sizeof(ev), NULL, 0);
	}
}

/* The state lives here, so that every handle sees one QP (OPENQP-08). */
int fk__tgt_modify(struct fk_conn *c, uint32_t handle, uint32_t mask, uint32_t flags,
		   const struct fk_qp_attr *a, uint32_t *state)
{
	struct fk_hqp *q = fk_hqp_find(c, handle);
	struct fk_rqp *r;
	uint32_t next;
	int err;

	if (!q || q->rqp->dead)
		return EINVAL;
	r = q->rqp;
	err = fk_qp_modify_prepare(IBV_QPT_XRC_RECV, r->attr.qp_state, a->qp_state,
				   a->cur_qp_state,
				   ((flags & FK_Q_MODIFY_NO_MASK_STRIP) ? FK_QPM_NO_STRIP : 0) |
				   ((flags & FK_Q_MODIFY_SKIP_TABLE) ? FK_QPM_SKIP_TABLE : 0),
				   &mask, &next);
	if (err)
		return err;
	if (!(c->quirks & FK_Q_MODIFY_NO_ATTR_CHECK)) {
		err = fk_tgt_check_attrs(&c->lim, r->attr.port_num, a, mask);
		if (err)
			return err;
	}
	if (next == IBV_QPS_RESET)
		memset(&r->attr, 0, sizeof(r->attr));
	fk_tgt_apply(&r->attr, a, mask);
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

	if (!q || q->rqp->dead)
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
	if (fp_event_obj((enum ibv_event_type)type) != FP_EV_QP)
		return EINVAL;			/* not an event of a QP */
	if (fp_event_errs_qp((enum ibv_event_type)type))
		q->rqp->attr.qp_state = IBV_QPS_ERR;
	fk_rqp_event(q->rqp, type);
	return 0;
}

/* ---- a connection's end ------------------------------------------------------ */
/* The table entries of one type that hold no daemon state. */
static void fk_release_plain(struct fk_conn *c, uint32_t type)
{
	uint32_t i;

	for (i = 0; i < c->tab_len; i++)
		if (c->tab[i] && c->tab[i]->type == type && !c->tab[i]->obj)
			fk_uobj_free(c, c->tab[i]);
}

/*
 * The device is gone with its last connection: what is left are leftover
 * TGT QPs of the seed model and the domains they hold (LIFE-05: "until the
 * device is removed").
 */
static void fk_dev_remove(struct fk_dev *d)
{
	struct fp_link *p, *t, *q, *u;

	fp_list_for_each_safe(p, t, &d->xrcds) {
		struct fk_xrcd *x = fp_container_of(p, struct fk_xrcd, link);

		/* a use of our own while the list is walked: the last QP's
		 * free must not take the domain (and the list) from under us */
		x->usecnt++;
		fp_list_for_each_safe(q, u, &x->tgt_qps) {
			struct fk_rqp *r = fp_container_of(q, struct fk_rqp, link);

			if (!r->orphan)
				fk_log("BUG: qp %#x has handles without connections", r->qpn);
			fk_rqp_free(r);		/* its use goes */
		}
		fk_xrcd_put(x);			/* and the domain with its last */
	}
	if (!fp_list_empty(&d->xrcds) || !fp_list_empty(&d->qpns) ||
	    !fp_list_empty(&d->srqns)) {
		fk_log("BUG: device %s keeps objects without connections", d->name);
		return;
	}
	fp_list_del(&d->link);
	free(d);
}

/*
 * XRCD-17 and the kernel's teardown of a file (uverbs_destroy_ufile_hw,
 * which destroys until nothing is held, so users before what they use):
 * QPs, then SRQs and numbers, AHs and MRs, CQs, PDs, then the XRCD handles.
 */
void fk__conn_release(struct fk_conn *c)
{
	struct fk_dev *d = c->dev;
	struct fp_link *p, *t;
	uint32_t i;

	if (!d)
		goto out;
	fp_list_for_each_safe(p, t, &c->qps)
		fk_hqp_drop(fp_container_of(p, struct fk_hqp, link),
			    d->lifetime == FK_LIFE_CURRENT);	/* LIFE-04 / LIFE-05 */
	fk_release_plain(c, FK_OBJ_QP);
	fp_list_for_each_safe(p, t, &c->srqs)
		fk_srq_free(fp_container_of(p, struct fk_num, conn_link));
	fk_release_plain(c, FK_OBJ_SRQ);
	fp_list_for_each_safe(p, t, &c->qpns)
		fk_num_free(fp_container_of(p, struct fk_num, conn_link));
	fk_release_plain(c, FK_OBJ_AH);
	fk_release_plain(c, FK_OBJ_MR);
	fk_release_plain(c, FK_OBJ_CQ);
	fk_release_plain(c, FK_OBJ_PD);
	fp_list_for_each_safe(p, t, &c->xrcds) {
		struct fk_hxrcd *h = fp_container_of(p, struct fk_hxrcd, link);
		struct fk_xrcd *x = h->xrcd;
		bool closed = h->closed;

		fk_uobj_free(c, h->uo);
		fk_hxrcd_free(h);
		if (!closed)
			fk_xrcd_put(x);
	}
	c->dev = NULL;
	if (--d->nconns == 0)
		fk_dev_remove(d);
out:
	for (i = 0; i < c->tab_len; i++)
		if (c->tab[i]) {
			fk_log("BUG: conn %u handle %u (type %u) left at release", c->id, i,
			       c->tab[i]->type);
			free(c->tab[i]);
		}
	free(c->tab);
	c->tab = NULL;
	c->tab_len = 0;
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
	struct fp_link *p, *t, *q, *u;
	unsigned n = 0;

	fp_list_for_each_safe(p, t, &fk_devs) {
		struct fk_dev *d = fp_container_of(p, struct fk_dev, link);

		fp_list_for_each_safe(q, u, &d->xrcds) {
			struct fk_xrcd *x = fp_container_of(q, struct fk_xrcd, link);
			unsigned uses = 0;
			struct fp_link *a, *b, *e, *f;

			/* usecnt = handles + XRC SRQs + live TGT QPs, recounted */
			fp_list_for_each_safe(a, b, &fk_conns) {
				struct fk_conn *c = fp_container_of(a, struct fk_conn, link);

				fp_list_for_each_safe(e, f, &c->xrcds) {
					struct fk_hxrcd *h = fp_container_of(e, struct fk_hxrcd, link);

					uses += h->xrcd == x && !h->closed;
				}
				fp_list_for_each_safe(e, f, &c->srqs)
					uses += fp_container_of(e, struct fk_num, conn_link)->xrcd == x;
			}
			fp_list_for_each_safe(a, b, &x->tgt_qps) {
				struct fk_rqp *r = fp_container_of(a, struct fk_rqp, link);
				unsigned hs = 0;

				uses += !r->unheld;
				fp_list_for_each_safe(e, f, &r->handles)
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
	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		uint32_t i, j;
		int k;
		unsigned importers = 0;

		/* a file is named by the connections that import it, as it counts
		 * them; an importer has no file or object of its own */
		fp_list_for_each_safe(q, u, &fk_conns)
			importers += fp_container_of(q, struct fk_conn, link)->uf == c;
		if (importers != c->nimporters)
			FK_PROBLEM("conn %u importers %u but %u import it\n", c->id, c->nimporters,
				   importers);
		if (c->uf && (c->ufd >= 0 || c->gone || c->uf->uf))
			FK_PROBLEM("conn %u imports conn %u but has a file or imports one\n", c->id,
				   c->uf->id);

		fp_list_for_each_safe(q, u, &c->xrcds) {
			struct fk_hxrcd *h = fp_container_of(q, struct fk_hxrcd, link);
			unsigned refs = 0;
			struct fp_link *a, *b;

			fp_list_for_each_safe(a, b, &c->qps)
				refs += fp_container_of(a, struct fk_hqp, link)->hx == h;
			fp_list_for_each_safe(a, b, &c->srqs)
				refs += fp_container_of(a, struct fk_num, conn_link)->hx == h;
			if (refs != h->uo->usecnt || h->uo->obj != h ||
			    h->uo->handle != h->handle || c->tab[h->handle] != h->uo)
				FK_PROBLEM("conn %u xrcd handle %u refcnt %u but %u refs\n",
					   c->id, h->handle, h->uo->usecnt, refs);
			if (h->closed && !h->uo->usecnt)
				FK_PROBLEM("conn %u closed xrcd handle %u kept\n", c->id, h->handle);
		}
		/* every entry's usecnt is the number of entries that hold it */
		for (i = 0; i < c->tab_len; i++) {
			unsigned holders = 0;

			if (!c->tab[i])
				continue;
			if (c->tab[i]->handle != i)
				FK_PROBLEM("conn %u handle %u at %u\n", c->id, c->tab[i]->handle, i);
			for (j = 0; j < c->tab_len; j++)
				for (k = 0; c->tab[j] && k < FK_NREF; k++)
					holders += c->tab[j]->ref[k] == c->tab[i];
			if (holders != c->tab[i]->usecnt)
				FK_PROBLEM("conn %u handle %u usecnt %u but %u holders\n", c->id, i,
					   c->tab[i]->usecnt, holders);
			if (c->tab[i]->closed && !holders)
				FK_PROBLEM("conn %u destroyed handle %u kept\n", c->id, i);
		}
	}
	return n;
}

/* ---- routes for the data path --------------------------------------------------- */
static struct fk_conn *fk_conn_by_id(uint32_t id)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *o = fp_container_of(p, struct fk_conn, link);

		if (o->id == id)
			return o;
	}
	return NULL;
}

static struct fk_rqp *fk_tgt_find(struct fk_dev *d, uint32_t qpn)
{
	struct fp_link *p, *t, *q, *u;

	fp_list_for_each_safe(p, t, &d->xrcds) {
		struct fk_xrcd *x = fp_container_of(p, struct fk_xrcd, link);

		fp_list_for_each_safe(q, u, &x->tgt_qps) {
			struct fk_rqp *r = fp_container_of(q, struct fk_rqp, link);

			if (r->qpn == qpn)
				return r;
		}
	}
	return NULL;
}

/*
 * A QPN of a plain QP goes to the ring of the connection that holds the
 * number. A target QP has no process: the packet goes to the process of the
 * SRQ it names, once the QP passes the gate (it can receive; an SRQ of that
 * number exists on the device). Whether that SRQ may take it (an XRC SRQ of
 * the QP's domain: WR-03, SRQX-13) is the responder's to check, as the HCA
 * does: the reply names the QP's domain for it. ENOENT: nobody behind it
 * (or no ring).
 */
int fk__route(struct fk_conn *c, const struct fk_req_route *req, struct fk_rep_route *rep,
	      struct fk_conn **owner)
{
	struct fk_dev *d = c->dev;
	struct fk_conn *o = NULL;
	struct fp_link *p, *t;
	struct fk_rqp *r;

	if (req->kind > FK_ROUTE_CONN || (req->flags & ~FK_Q_XRC_IGNORE_REMOTE_SRQN) ||
	    (req->kind == FK_ROUTE_CONN && (req->srqn || req->flags)))
		return EINVAL;
	if (req->kind == FK_ROUTE_CONN) {
		o = fk_conn_by_id(req->num);
		if (!o || o->dev != d)
			o = NULL;
		goto found;
	}
	fp_list_for_each_safe(p, t, &d->qpns) {
		struct fk_num *n = fp_container_of(p, struct fk_num, dev_link);

		if (n->num == req->num) {
			o = n->via;
			goto found;
		}
	}
	r = fk_tgt_find(d, req->num);
	if (!r || r->dead)
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
	fp_list_for_each_safe(p, t, &d->srqns) {
		struct fk_num *n = fp_container_of(p, struct fk_num, dev_link);

		if ((req->flags & FK_Q_XRC_IGNORE_REMOTE_SRQN) ? n->xrcd == r->xrcd : n->num == req->srqn) {
			rep->gate = FK_GATE_OK;
			rep->srqn = n->num;
			o = n->via;
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
