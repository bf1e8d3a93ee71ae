/* SPDX-License-Identifier: MIT */
/*
 * Protection domains and memory regions of the fake device. Keys come from
 * the fabric (device-wide, random-looking, lkey != rkey); a region keeps the
 * caller's buffer and its I/O virtual address for bounds checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fe_mem.h"
#include "fp_verbs.h"

/*
 * Tell the fake kernel what the driver made of a registration (MR_KEYS):
 * its keys, access and range for QUERY_MR (import), and where its bytes
 * are in the ring memfd when other processes reach them (fe_mem.h), for
 * an importer in another process to map.
 */
static int fp_mr_tell(struct fp_context *ctx, struct fp_mr *mr)
{
	struct fk_mr_reg reg = {
		.lkey = mr->e.lkey, .rkey = mr->e.rkey, .access = mr->e.access,
		.length = mr->e.length, .iova = mr->e.iova,
	};
	int fd;

	reg.mapped = !fe_mem_mr_export(&mr->e, &fd, &reg.moff);
	return fk_mr_keys(ctx->fk, mr->mr.handle, &reg);
}

struct ibv_pd *fp_alloc_pd(struct ibv_context *context)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_pd *pd = NULL;
	int err;

	err = fp__op_begin(FP_OP_ALLOC_PD);
	if (err)
		goto out;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		err = ENOMEM;
		goto out;
	}
	/* the handle is the fake kernel's, as real providers copy it from the
	 * kernel's response */
	err = fk_obj_create(ctx->fk, FK_O_PD, 0, NULL, &pd->pd.handle);
	if (err) {
		free(pd);
		pd = NULL;
		goto out;
	}
	pd->ctx = ctx;
	pd->prot = pd;
	fp_list_add_tail(&ctx->pds, &pd->link);
out:
	fp__op_end(ctx, FP_OP_ALLOC_PD, FP_SUBJ_NONE, NULL, err, "pd=%u",
		   pd ? pd->pd.handle : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &pd->pd;
}

static void fp_pd_free(struct fp_pd *pd)
{
	fp_list_del(&pd->link);
	free(pd);
}

static void fp_pdom_free(struct fp_pd *d)
{
	d->prot->pdoms--;
	if (d->td)
		d->td->usecnt--;
	fp_list_del(&d->link);
	free(d);
}

int fp_dealloc_pd(struct ibv_pd *ibpd)
{
	struct fp_pd *pd = to_fp_pd(ibpd);
	struct fp_context *ctx = pd->ctx;
	uint32_t h = pd->pd.handle;
	int err;

	err = fp__op_begin(FP_OP_DEALLOC_PD);
	if (err)
		goto out;
	if (pd->parent) {
		/* mlx5_dealloc_parent_domain (rdma-core v44.0 providers/mlx5/
		 * verbs.c:562): EBUSY while objects were made on it; no kernel
		 * object of its own */
		if (pd->usecnt) { /* @rule PD-02 */
			err = EBUSY;
			goto out;
		}
		fp_pdom_free(pd);
		goto out;
	}
	if (pd->pdoms) { /* @rule PD-02 */
		err = EBUSY;			/* parent domains on it (mlx5: refcount) */
		goto out;
	}
	/* EBUSY while MRs, AHs, SRQs or QPs hold it: the fake kernel's (SRQX-09) */
	err = fk_obj_destroy(ctx->fk, FK_O_PD, h);
	if (err)
		goto out;
	/* objects of ours still on it were destroyed through another context
	 * of the file (the kernel let the PD go): they keep their pointer to it
	 * until they go, so it goes with the context; no handle finds it */
	if (pd->usecnt)
		pd->dead = true;
	else
		fp_pd_free(pd);
out:
	fp__op_end(ctx, FP_OP_DEALLOC_PD, FP_SUBJ_NONE, NULL, err, "pd=%u", h);
	return err;
}

struct ibv_mr *fp_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			 uint64_t hca_va, int access)
{
	struct fp_pd *pd = fp__pd_prot(ibpd);	/* a parent domain's keys are its PD's */
	struct fp_context *ctx = pd->ctx;
	struct fp_mr *mr = NULL;
	int err;

	err = fp__op_begin(FP_OP_REG_MR);
	if (err)
		goto out;
	/* The access flags are the fake kernel's to check (ib_check_mr_access:
	 * remote write and atomic need local write, no unknown bit), on the
	 * flags the registration carries; the buffer and size are ours. A
	 * region that covers no page is none: ib_umem_get counts the pages
	 * from addr rounded down to addr + length rounded up, and 0 is EINVAL,
	 * so a length of 0 fails at a page boundary and not inside a page
	 * (linux v6.1 drivers/infiniband/core/umem.c ib_umem_get,
	 * ib_umem_num_pages; both seen on Debian 12's rxe0) */
	if ((!addr && length) ||
	    (!length && !((uintptr_t)addr % (uintptr_t)getpagesize())) ||
	    (ctx->spec->attr.max_mr_size && length > ctx->spec->attr.max_mr_size) ||
	    hca_va + length < hca_va) {
		err = EINVAL;
		goto out;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		err = ENOMEM;
		goto out;
	}
	err = fk_obj_create_on_pd(ctx->fk, FK_O_MR, (uint32_t)access, ibpd->handle,
				  &mr->mr.handle);
	if (err) {
		free(mr);
		mr = NULL;
		goto out;
	}
	mr->ctx = ctx;
	mr->pd = pd;
	mr->e.pd = fp__pd_ident(pd);
	mr->e.addr = addr;
	mr->e.length = length;
	mr->e.iova = hca_va;
	mr->e.access = access;
	fe_mr_add(ctx->hca, &mr->e);
	err = fp_mr_tell(ctx, mr);
	if (err) {
		fe_mr_del(ctx->hca, &mr->e);
		fk_obj_destroy(ctx->fk, FK_O_MR, mr->mr.handle);
		free(mr);
		mr = NULL;
		goto out;
	}
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.lkey = mr->e.lkey;
	mr->mr.rkey = mr->e.rkey;
	pd->usecnt++;
	fp_list_add_tail(&ctx->mrs, &mr->link);
out:
	fp__op_end(ctx, FP_OP_REG_MR, FP_SUBJ_NONE, NULL, err,
		   "pd=%u addr=%p len=%zu iova=%#llx access=%#x lkey=%#x rkey=%#x",
		   ibpd->handle, addr, length, (unsigned long long)hca_va, access,
		   mr ? mr->e.lkey : 0, mr ? mr->e.rkey : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &mr->mr;
}

static void fp_mr_free(struct fp_mr *mr)
{
	if ((!mr->imported || mr->fmap) && !mr->keys_dropped)
		fe_mr_del(mr->ctx->hca, &mr->e);
	if (mr->fmap)
		fe_mem_foreign_unmap(mr->fmap, mr->e.length);
	mr->pd->usecnt--;
	fp_list_del(&mr->link);
	free(mr);
}

/*
 * A region of a context being closed: the kernel object lives on while the
 * context's file does (an importer in another process holds it, linux v6.1
 * uverbs_main.c ib_uverbs_release_file), with its pages pinned: they stay
 * shared with the importers' mappings (the owner's later stores reach
 * them, their WRITEs reach the owner) until this process ends (a forked
 * child still gets its own copy of them, mem.c). Only when the file lives
 * on (CTX_HELD at close); else the region goes as at dereg.
 */
static void fp_mr_close(struct fp_mr *mr)
{
	mr->e.keep_bytes = true;
	fp_mr_free(mr);
}

/*
 * The kernel destroyed an imported region through this context: the object
 * is the file's, so its keys die for the owner and every importer too
 * (fe_mem.h, fe_mem_mr_kill), as ibv_dereg_mr of an imported MR does on
 * the real stack (rdma-core v44.0 libibverbs/verbs.c ibv_dereg_mr and
 * providers/mlx5/verbs.c mlx5_dereg_mr send the destroy for any MR; only
 * mlx5_unimport_mr frees just the user-space object). Foreign region: the
 * owner's record; else the region is this process's own, in another
 * context of the file (the same keys and PD), if it is here at all.
 */
static void fp_mr_kill_imported(struct fp_context *ctx, struct fp_mr *mr)
{
	struct fe_mr *o;

	if (mr->fmap) {
		fe_mem_mr_kill(&mr->e);
		return;
	}
	o = fe_mr_by_lkey(ctx->hca, mr->e.lkey);
	if (o && o != &mr->e && o->rkey == mr->e.rkey && o->pd == mr->e.pd)
		fe_mem_mr_kill(o);
}

int fp_dereg_mr(struct ibv_mr *ibmr)
{
	struct fp_mr *mr = to_fp_mr(ibmr);
	struct fp_context *ctx = mr->ctx;
	uint32_t lkey = mr->e.lkey;
	int err;

	err = fp__op_begin(FP_OP_DEREG_MR);
	if (!err)
		err = fk_obj_destroy(ctx->fk, FK_O_MR, ibmr->handle);
	if (!err) {
		if (mr->imported)
			fp_mr_kill_imported(ctx, mr);
		fp_mr_free(mr);
	}
	fp__op_end(ctx, FP_OP_DEREG_MR, FP_SUBJ_NONE, NULL, err, "lkey=%#x", lkey);
	return err;
}

void fp__pd_mr_cleanup_ctx(struct fp_context *ctx)
{
	struct fp_link *p, *t;

	fp_list_for_each_safe(p, t, &ctx->mrs)
		if (ctx->file_held)
			fp_mr_close(fp_container_of(p, struct fp_mr, link));
		else
			fp_mr_free(fp_container_of(p, struct fp_mr, link));
	fp_list_for_each_safe(p, t, &ctx->pdoms)
		fp_pdom_free(fp_container_of(p, struct fp_pd, link));
	fp_list_for_each_safe(p, t, &ctx->tds) {
		fp_list_del(p);
		free(fp_container_of(p, struct fp_td, link));
	}
	fp_list_for_each_safe(p, t, &ctx->pds)
		fp_pd_free(fp_container_of(p, struct fp_pd, link));
}


/*
 * ibv_rereg_mr past the library's checks. The kernel's part (linux v6.1
 * drivers/infiniband/core/uverbs_cmd.c ib_uverbs_rereg_mr: the flags, the
 * MR and the new PD by their handles, the new access; MR-03) is the fake
 * kernel's MR_REREG, with the handles the command carries (as
 * ibv_cmd_rereg_mr sends the PD's handle member: a PD of another context
 * whose number names one of ours acts on ours, handles.c). The region
 * keeps its handle and its keys (the fake HCA's key table entry is
 * changed in place), and moves to the PD the kernel found; a refusal
 * changes nothing.
 */
int fp_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *ibpd, void *addr, size_t length,
		int access)
{
	struct fp_mr *mr = to_fp_mr(ibmr);
	struct fp_context *ctx = mr->ctx;
	struct fp_pd *npd;
	uint32_t pdh = 0;
	bool translation;
	int err;

	err = fp__op_begin(FP_OP_REREG_MR);
	if (!err && fp__ext_off(FP_X_REREG_MR))
		err = EOPNOTSUPP;		/* a driver without the op */
	if (!err && (flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	    (ctx->spec->attr.max_mr_size && length > ctx->spec->attr.max_mr_size))
		err = EINVAL;
	/* start and hca_va: the new address, as mlx5_rereg_mr passes both
	 * (rdma-core v44.0 providers/mlx5/verbs.c:730) */
	if (!err)
		err = fk_mr_rereg(ctx->fk, ibmr->handle, (unsigned)flags,
				  (flags & IBV_REREG_MR_CHANGE_PD) ? ibpd->handle : FK_O_NONE, access,
				  (uint64_t)(uintptr_t)addr, (uint64_t)(uintptr_t)addr, &pdh);
	if (err)
		goto out;
	translation = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
		      !fp__quirk(FP_Q_REREG_KEEPS_TRANSLATION);
	if (translation)
		fe_mr_unback(&mr->e);	/* its old pages, before they change */
	npd = fp__pd_by_handle(ctx, pdh);
	if (npd && npd != mr->pd) {
		mr->pd->usecnt--;
		npd->usecnt++;
		mr->pd = npd;
		mr->e.pd = fp__pd_ident(npd);
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		mr->e.access = access;
	if (translation) {
		mr->e.addr = addr;
		mr->e.length = length;
		mr->e.iova = (uint64_t)(uintptr_t)addr;	/* as mlx5_rereg_mr passes it */
	}
	fe_mr_changed(ctx->hca, &mr->e, translation);
	fp_mr_tell(ctx, mr);		/* the keys stay; access, range, bytes may not */
out:
	fp__op_end(ctx, FP_OP_REREG_MR, FP_SUBJ_NONE, NULL, err,
		   "lkey=%#x flags=%#x addr=%p len=%zu access=%#x", mr->e.lkey, flags, addr,
		   length, access);
	return err;
}

/* ---- import (ibv_import_pd, ibv_import_mr) ---------------------------------- */
/*
 * The PD or MR of a handle of this context's file, as mlx5 imports them
 * (rdma-core v44.0 providers/mlx5/verbs.c:766 mlx5_import_pd: the kernel
 * checks the handle, the PD takes it; :804 mlx5_import_mr through
 * libibverbs/cmd_mr.c:90 ibv_cmd_query_mr: lkey, rkey and length from the
 * kernel, addr NULL, cmd_mr.c:113). The object is the file's: destroying it
 * through either context destroys it for both; unimport frees only ours
 * (verbs.c:798 mlx5_unimport_pd, :823 mlx5_unimport_mr). A driver without
 * import ops (fp_prof_can_import) answers as libibverbs' stubs do.
 */
struct ibv_pd *fp_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fk_import im = { .fd = -1 };
	struct fp_pd *pd = NULL;
	int err;

	err = fp__op_begin(FP_OP_IMPORT_PD);
	if (!err && !fp_prof_can_import())
		err = EOPNOTSUPP;
	if (!err && !(pd = calloc(1, sizeof(*pd))))
		err = ENOMEM;
	if (!err && fp__quirk(FP_Q_IMPORT_PD_COPY))	/* the quirk: a PD of its own */
		err = fk_obj_create(ctx->fk, FK_O_PD, 0, NULL, &im.handle);
	else if (!err)
		err = fk_obj_import(ctx->fk, FK_O_PD, pd_handle,
				    fk_quirk_bits(fp__script, FK_MSG_OBJ_IMPORT), &im);
	if (!err) {
		pd->pd.handle = im.handle;
		pd->ctx = ctx;
		pd->prot = pd;
		pd->imported = true;
		fp_list_add_tail(&ctx->pds, &pd->link);
	}
	fp__op_end(ctx, FP_OP_IMPORT_PD, FP_SUBJ_NONE, NULL, err, "handle=%u pd=%u", pd_handle,
		   err ? 0 : im.handle);
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return &pd->pd;
}

void fp_unimport_pd(struct ibv_pd *ibpd)
{
	struct fp_pd *pd = to_fp_pd(ibpd);

	/* mlx5 asserts on a PD still in use or a parent domain: kept here */
	if (pd->parent || pd->usecnt || pd->pdoms)
		return;
	fp_pd_free(pd);
}

/*
 * A forked child holds its parent's MRs as they were at fork, in an engine
 * of its own with their keys, on connections that are dead here
 * (fk_inherited). The kernel object behind such a key is the parent's: the
 * region in the parent's memory, which is what an import of it in the child
 * maps (fe_mem.h foreign regions). So the import takes the keys over from
 * the inherited copies; a key of a live object of this process stays taken.
 */
static bool fp_mr_take_inherited_keys(struct fp_context *ctx, uint32_t lkey, uint32_t rkey)
{
	const uint32_t keys[2] = { lkey, rkey };
	struct fp_mr *old[2] = { NULL, NULL };
	int i;

	for (i = 0; i < 2; i++) {
		struct fe_mr *e = fe_mr_by_lkey(ctx->hca, keys[i]);

		if (!e)
			e = fe_mr_by_rkey(ctx->hca, keys[i]);
		if (!e)
			continue;
		old[i] = fp_container_of(e, struct fp_mr, e);
		if (!fk_inherited(old[i]->ctx->fk) || old[i]->keys_dropped)
			return false;
	}
	for (i = 0; i < 2; i++)
		if (old[i] && !old[i]->keys_dropped) {
			fe_mr_del(ctx->hca, &old[i]->e);
			old[i]->keys_dropped = true;
		}
	return true;
}

struct ibv_mr *fp_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct fp_pd *pd = fp__pd_prot(ibpd);
	struct fp_context *ctx = pd->ctx;
	struct fk_import im = { .fd = -1 };
	struct fp_mr *mr = NULL;
	int err;

	err = fp__op_begin(FP_OP_IMPORT_MR);
	if (!err && !fp_prof_can_import())
		err = EOPNOTSUPP;
	if (!err)
		err = fk_obj_import(ctx->fk, FK_O_MR, mr_handle,
				    fk_quirk_bits(fp__script, FK_MSG_OBJ_IMPORT), &im);
	if (!err && !(mr = calloc(1, sizeof(*mr))))
		err = ENOMEM;
	if (!err) {
		if (fp__quirk(FP_Q_IMPORT_MR_NO_KEYS))
			im.lkey = im.rkey = 0;		/* the quirk */
		mr->ctx = ctx;
		mr->pd = pd;
		mr->imported = true;
		/* the region as the fake HCA has it: its own PD (the file's), its
		 * iova, its access; its bytes where the registering process
		 * shares them (foreign region), else nowhere here: then its keys
		 * work only in that process (or this one, if it is the same) */
		mr->e.pd = fp__ident(ctx->file_id, im.pd);
		mr->e.iova = im.iova;
		mr->e.access = im.access;
		mr->e.length = im.length;
		if (im.fd >= 0 && !fe_mem_foreign_map(im.fd, im.moff, im.length, &mr->fmap)) {
			mr->e.addr = mr->fmap;
			err = fe_mr_add_keys(ctx->hca, &mr->e, im.lkey, im.rkey);
			if (err == EEXIST && fp_mr_take_inherited_keys(ctx, im.lkey, im.rkey))
				err = fe_mr_add_keys(ctx->hca, &mr->e, im.lkey, im.rkey);
			if (err) {
				err = 0;
				fe_mem_foreign_unmap(mr->fmap, im.length);	/* keys taken here */
				mr->fmap = NULL;
				mr->e.addr = NULL;
			} else if (fe_mem_foreign_watch(&mr->e, im.fd, im.moff)) {
				/* without the owner's record a destroy would go
				 * unseen here: its keys work nowhere here */
				fe_mr_del(ctx->hca, &mr->e);
				fe_mem_foreign_unmap(mr->fmap, im.length);
				mr->fmap = NULL;
				mr->e.addr = NULL;
			}
		}
		mr->e.lkey = im.lkey;
		mr->e.rkey = im.rkey;
		mr->mr.handle = im.handle;
		mr->mr.lkey = im.lkey;
		mr->mr.rkey = im.rkey;
		mr->mr.length = im.length;
		mr->mr.addr = NULL;
		pd->usecnt++;
		fp_list_add_tail(&ctx->mrs, &mr->link);
	}
	if (im.fd >= 0)
		close(im.fd);
	fp__op_end(ctx, FP_OP_IMPORT_MR, FP_SUBJ_NONE, NULL, err, "handle=%u lkey=%#x rkey=%#x",
		   mr_handle, mr ? mr->mr.lkey : 0, mr ? mr->mr.rkey : 0);
	if (err) {
		errno = err;
		return NULL;
	}
	return &mr->mr;
}

void fp_unimport_mr(struct ibv_mr *ibmr)
{
	fp_mr_free(to_fp_mr(ibmr));
}

/* ---- thread domains and parent domains (rdma-core v44.0 providers/mlx5/
 * verbs.c:438 mlx5_alloc_td, :465 mlx5_dealloc_td, :517
 * mlx5_alloc_parent_domain, :562): objects of the driver alone, no kernel
 * object. A parent domain carries its protection domain's handle
 * (driver.h ibv_initialize_parent_domain), so the fake kernel finds that
 * PD behind it. ------------------------------------------------------------ */
struct ibv_td *fp_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_td *td = NULL;
	int err;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	err = fp__op_begin(FP_OP_ALLOC_TD);
	if (!err && fp__ext_off(FP_X_PARENT_DOMAIN))
		err = EOPNOTSUPP;
	if (!err && attr->comp_mask && !fp__quirk(FP_Q_PARENT_DOMAIN_UNCHECKED)) /* @rule PD-01 */
		err = EINVAL;
	if (!err && !(td = calloc(1, sizeof(*td))))
		err = ENOMEM;
	if (!err) {
		td->ctx = ctx;
		fp_list_add_tail(&ctx->tds, &td->link);
	}
	fp__op_end(ctx, FP_OP_ALLOC_TD, FP_SUBJ_NONE, NULL, err, "td=%p", (void *)td);
	if (err) {
		errno = err;
		return NULL;
	}
	return &td->td;
}

int fp_dealloc_td(struct ibv_td *ibtd)
{
	struct fp_td *td = fp_container_of(ibtd, struct fp_td, td);
	struct fp_context *ctx = td->ctx;
	int err;

	err = fp__op_begin(FP_OP_DEALLOC_TD);
	if (!err && td->usecnt && !fp__quirk(FP_Q_PARENT_DOMAIN_UNCHECKED)) /* @rule PD-02 */
		err = EBUSY;			/* parent domains on it */
	if (!err) {
		fp_list_del(&td->link);
		free(td);
	}
	fp__op_end(ctx, FP_OP_DEALLOC_TD, FP_SUBJ_NONE, NULL, err, "td=%p", (void *)ibtd);
	return err;
}

struct ibv_pd *fp_alloc_parent_domain(struct ibv_context *context,
				      struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct fp_context *ctx = to_fp_ctx(context);
	struct fp_pd *d = NULL;
	int err;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	err = fp__op_begin(FP_OP_ALLOC_PARENT_DOMAIN);
	if (!err && fp__ext_off(FP_X_PARENT_DOMAIN))
		err = EOPNOTSUPP;
	/* ibv_check_alloc_parent_domain (rdma-core v44.0 libibverbs/driver.h:728),
	 * then the driver's own mask check */
	if (!err && (!attr->pd || (attr->comp_mask & ~known)) && /* @rule PD-01 */
	    !fp__quirk(FP_Q_PARENT_DOMAIN_UNCHECKED))
		err = EINVAL;
	if (!err && !attr->pd)
		err = EFAULT;			/* the quirk's driver would take NULL: not here */
	if (!err && (attr->pd->context != context || to_fp_pd(attr->pd)->parent ||
		     (attr->td && attr->td->context != context)))
		err = EINVAL;
	if (!err && !(d = calloc(1, sizeof(*d))))
		err = ENOMEM;
	if (err)
		goto out;
	d->ctx = ctx;
	d->parent = true;
	d->prot = to_fp_pd(attr->pd);
	d->prot->pdoms++;
	if (attr->td) {
		d->td = fp_container_of(attr->td, struct fp_td, td);
		d->td->usecnt++;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		d->alloc = attr->alloc;
		d->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		d->pd_context = attr->pd_context;
	d->pd.handle = d->prot->pd.handle;
	fp_list_add_tail(&ctx->pdoms, &d->link);
out:
	fp__op_end(ctx, FP_OP_ALLOC_PARENT_DOMAIN, FP_SUBJ_NONE, NULL, err, "pd=%u td=%p",
		   attr->pd ? attr->pd->handle : 0, (void *)attr->td);
	if (err) {
		errno = err;
		return NULL;
	}
	return &d->pd;
}

bool fp__pd_is_parent(struct ibv_pd *pd)
{
	return pd && to_fp_pd(pd)->parent;
}

/* A queue buffer of an object made on pd: from the parent domain's
 * allocator when it has one (which may answer IBV_ALLOCATOR_USE_DEFAULT),
 * and the object holds the parent domain while it lives. */
int fp__pdbuf_get(struct fp_pdbuf *b, struct ibv_pd *pd, size_t size, uint64_t type)
{
	struct fp_pd *d;
	void *p = IBV_ALLOCATOR_USE_DEFAULT;

	memset(b, 0, sizeof(*b));
	if (!pd || !to_fp_pd(pd)->parent)
		return 0;
	d = to_fp_pd(pd);
	if (size < 64)
		size = 64;
	if (d->alloc)
		p = d->alloc(pd, d->pd_context, size, 4096, type);
	if (!p)
		return ENOMEM;
	if (p == IBV_ALLOCATOR_USE_DEFAULT) {
		if (posix_memalign(&p, 4096, size))
			return ENOMEM;
	} else {
		b->custom = true;
	}
	memset(p, 0, size);
	b->pdom = d;
	b->ptr = p;
	b->type = type;
	d->usecnt++;
	return 0;
}

void fp__pdbuf_put(struct fp_pdbuf *b)
{
	if (!b->pdom)
		return;
	if (b->custom) {
		if (b->pdom->free)
			b->pdom->free(&b->pdom->pd, b->pdom->pd_context, b->ptr, b->type);
	} else {
		free(b->ptr);
	}
	b->pdom->usecnt--;
	b->pdom = NULL;
}
