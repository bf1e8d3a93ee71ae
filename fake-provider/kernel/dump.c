/* SPDX-License-Identifier: MIT */
/*
 * The daemon's whole state as text, for tests (leak checks) and debugging.
 * Line oriented, one object per line, "key=value" fields; the first line
 * carries the totals, the last line "end problems=N" the self-check result:
 *
 *   fkd pid=P proto=1 conns=C devices=D objects=N
 *   conn id=I pid=P dev=NAME xrcd_handles=X qp_handles=Q srqs=S qpns=N handles=H
 *        file=none|open|gone (its context file; gone: its connection closed)
 *        imports=I (the connection whose file it acts on, 0: its own) importers=N
 *   handle conn=I handle=N type=T sub=S held=U
 *   dev name=NAME lifetime=current|seed conns=C xrcds=X qpns=N srqns=S
 *   xrcd id=I dev=NAME inode=DEV:INO|none usecnt=U tgt_qps=T
 *   tgt_qp qpn=0xN xrcd=I state=S usecnt=U orphan=0|1 handles=conn/handle,...
 *   srq srqn=0xN dev=NAME conn=I xrcd=I|none
 *   qpn qpn=0xN dev=NAME conn=I
 *   problem: ...
 *   end problems=N
 *
 * objects counts every XRCD, target QP, SRQ number, QP number, XRCD and TGT
 * QP handle, and every other table entry (PD, MR, CQ, AH, basic SRQ, plain
 * QP): 0 means nothing is left. A "handle" line lists each table entry.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "fkd.h"

struct fk_out {
	char *buf;
	size_t len, used;
	bool truncated;
};

static void fk_put(struct fk_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fk_put(struct fk_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->used >= o->len) {
		o->truncated = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->used) {
		o->truncated = true;
		o->used = o->len;
		return;
	}
	o->used += (size_t)n;
}

static unsigned fk_count(const struct fp_link *h)
{
	const struct fp_link *p;
	unsigned n = 0;

	for (p = h->next; p != h; p = p->next)
		n++;
	return n;
}

static unsigned fk_objects(unsigned *nconns, unsigned *ndevs)
{
	struct fp_link *p, *t, *q, *u;
	unsigned n = 0;

	*nconns = fk_count(&fk_conns);
	*ndevs = fk_count(&fk_devs);
	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		uint32_t i;

		n += fk_count(&c->xrcds) + fk_count(&c->qps);
		for (i = 0; i < c->tab_len; i++)
			n += c->tab[i] && !c->tab[i]->obj;
	}
	fp_list_for_each_safe(p, t, &fk_devs) {
		struct fk_dev *d = fp_container_of(p, struct fk_dev, link);

		n += fk_count(&d->qpns) + fk_count(&d->srqns) + fk_count(&d->xrcds);
		fp_list_for_each_safe(q, u, &d->xrcds)
			n += fk_count(&fp_container_of(q, struct fk_xrcd, link)->tgt_qps);
	}
	return n;
}

static void fk_dump_dev(struct fk_out *o, struct fk_dev *d)
{
	struct fp_link *p, *t, *q, *u, *a, *b;

	fk_put(o, "dev name=%s lifetime=%s conns=%u xrcds=%u qpns=%u srqns=%u\n", d->name,
	       d->lifetime == FK_LIFE_SEED ? "seed" : "current", d->nconns,
	       fk_count(&d->xrcds), fk_count(&d->qpns), fk_count(&d->srqns));
	fp_list_for_each_safe(p, t, &d->xrcds) {
		struct fk_xrcd *x = fp_container_of(p, struct fk_xrcd, link);

		if (x->inode_fd >= 0)
			fk_put(o, "xrcd id=%u dev=%s inode=%llu:%llu usecnt=%u tgt_qps=%u\n",
			       x->id, d->name, (unsigned long long)x->st_dev,
			       (unsigned long long)x->st_ino, x->usecnt, fk_count(&x->tgt_qps));
		else
			fk_put(o, "xrcd id=%u dev=%s inode=none usecnt=%u tgt_qps=%u\n",
			       x->id, d->name, x->usecnt, fk_count(&x->tgt_qps));
		fp_list_for_each_safe(q, u, &x->tgt_qps) {
			struct fk_rqp *r = fp_container_of(q, struct fk_rqp, link);
			const char *sep = "";

			fk_put(o, "tgt_qp qpn=%#x xrcd=%u state=%u usecnt=%u orphan=%d handles=",
			       r->qpn, x->id, r->attr.qp_state, r->usecnt, r->orphan);
			fp_list_for_each_safe(a, b, &r->handles) {
				struct fk_hqp *h = fp_container_of(a, struct fk_hqp, real_link);

				fk_put(o, "%s%u/%u", sep, h->conn->id, h->handle);
				sep = ",";
			}
			fk_put(o, "\n");
		}
	}
	fp_list_for_each_safe(p, t, &d->srqns) {
		struct fk_num *n = fp_container_of(p, struct fk_num, dev_link);

		if (n->xrcd)
			fk_put(o, "srq srqn=%#x dev=%s conn=%u xrcd=%u\n", n->num, d->name,
			       n->conn->id, n->xrcd->id);
		else
			fk_put(o, "srq srqn=%#x dev=%s conn=%u xrcd=none\n", n->num, d->name,
			       n->conn->id);
	}
	fp_list_for_each_safe(p, t, &d->qpns) {
		struct fk_num *n = fp_container_of(p, struct fk_num, dev_link);

		fk_put(o, "qpn qpn=%#x dev=%s conn=%u\n", n->num, d->name, n->conn->id);
	}
}

size_t fk__dump(char *buf, size_t len)
{
	struct fk_out o = { .buf = buf, .len = len };
	struct fp_link *p, *t;
	unsigned nconns, ndevs, objs, problems;
	size_t used;

	/* room for the self-check and the last line, whatever came before */
	if (len < 512)
		return 0;
	o.len = len - 512;
	objs = fk_objects(&nconns, &ndevs);
	fk_put(&o, "fkd pid=%ld proto=%u conns=%u devices=%u objects=%u\n", (long)getpid(),
	       FK_PROTO_VERSION, nconns, ndevs, objs);
	fp_list_for_each_safe(p, t, &fk_conns) {
		struct fk_conn *c = fp_container_of(p, struct fk_conn, link);

		uint32_t i, nh = 0;

		for (i = 0; i < c->tab_len; i++)
			nh += !!c->tab[i];
		fk_put(&o, "conn id=%u pid=%ld dev=%s xrcd_handles=%u qp_handles=%u srqs=%u qpns=%u"
		       " handles=%u file=%s imports=%u importers=%u\n",
		       c->id, (long)c->pid, c->dev ? c->dev->name : (c->monitor ? "(monitor)" : "-"),
		       fk_count(&c->xrcds), fk_count(&c->qps), fk_count(&c->srqs),
		       fk_count(&c->qpns), nh,
		       c->gone ? "gone" : c->ufd >= 0 ? "open" : "none", c->uf ? c->uf->id : 0,
		       c->nimporters);
		for (i = 0; i < c->tab_len; i++)
			if (c->tab[i])
				fk_put(&o, "handle conn=%u handle=%u type=%u sub=%u held=%u\n",
				       c->id, i, c->tab[i]->type, c->tab[i]->sub,
				       c->tab[i]->usecnt);
	}
	fp_list_for_each_safe(p, t, &fk_devs)
		fk_dump_dev(&o, fp_container_of(p, struct fk_dev, link));
	o.len = len;
	if (o.truncated)
		fk_put(&o, "truncated\n");
	used = o.used;
	problems = fk__state_check(buf, len - 64, &used);
	o.used = used;
	fk_put(&o, "end problems=%u\n", problems);
	return o.used;
}
