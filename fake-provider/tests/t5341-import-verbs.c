/* SPDX-License-Identifier: MIT */
/*
 * t5341: a context's file through the verbs, in one process: cmd_fd is a
 * real fd (dup, poll IN|OUT, fcntl), ibv_import_device makes a second
 * context on it, ibv_import_pd and ibv_import_mr give the owner's objects
 * (the handle; an MR's lkey, rkey and length, addr NULL: rdma-core v44.0
 * libibverbs/cmd_mr.c:90-113), usable in the importer's QPs; destroyed
 * through one context, gone for the other (ENOENT on import, the kernel's
 * lookup); unimport gives back the importer's object alone; the errors of
 * what is not the file (libibverbs/device.c:380 EINVAL, :397 ENODEV; the
 * kernel's ENOENT for a handle of another file, EINVAL for another type);
 * ibv_import_dm EOPNOTSUPP (no device memory). t5102 runs the tests that
 * suites/break-matrix.txt names for this program under ctx_fd_none,
 * import_pd_copy, import_any_context, import_stale_handle and
 * import_mr_no_keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_test.h"
#include "tf.h"

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* errno of a pointer-returning verb that must fail, -1 if it succeeded. */
static int ptr_err(void *p)
{
	return p ? -1 : errno;
}

static struct ibv_context *import_copy(struct ibv_context *ctx)
{
	int fd = dup(ctx->cmd_fd);
	struct ibv_context *ictx;

	assert_true(fd >= 0);
	ictx = ibv_import_device(fd);
	if (!ictx)
		close(fd);
	assert_non_null(ictx);
	return ictx;
}

TR_TEST(cmd_fd_is_a_file_that_imports)
{
	struct ibv_context *ctx = fpt_open(), *ictx;
	struct pollfd p = { .events = POLLIN | POLLOUT };
	int d;

	(void)state;
	assert_true(ctx->cmd_fd >= 0);
	assert_true(fcntl(ctx->cmd_fd, F_GETFD) & FD_CLOEXEC);
	p.fd = ctx->cmd_fd;
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(p.revents, POLLIN | POLLOUT);	/* DEFAULT_POLLMASK's */
	d = dup(ctx->cmd_fd);
	assert_true(d >= 0);
	ictx = ibv_import_device(d);			/* owns d from here */
	assert_non_null(ictx);
	assert_ptr_equal(ictx->device, ctx->device);
	assert_int_equal(ictx->cmd_fd, d);
	assert_true(ictx->async_fd >= 0 && ictx->async_fd != ctx->async_fd);
	/* two contexts of one file in one process: closed in either order */
	fpt_close(ctx);
	assert_int_equal(ibv_close_device(ictx), 0);
	assert_int_equal(fcntl(d, F_GETFD), -1);	/* closed with its context */
}

TR_TEST(imported_objects_are_the_owners)
{
	struct ibv_context *ctx = fpt_open(), *ictx;
	char *buf = calloc(1, 8192);
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr, *imr;

	(void)state;
	pd = ibv_alloc_pd(ctx);
	assert_non_null(pd);
	assert_non_null(ibv_alloc_pd(ctx));		/* a second handle in the file */
	mr = ibv_reg_mr(pd, buf + 100, 5000, ACC);
	assert_non_null(mr);
	ictx = import_copy(ctx);
	ipd = ibv_import_pd(ictx, pd->handle);
	assert_non_null(ipd);
	assert_ptr_equal(ipd->context, ictx);
	assert_int_equal(ipd->handle, pd->handle);
	imr = ibv_import_mr(ipd, mr->handle);
	assert_non_null(imr);
	assert_ptr_equal(imr->context, ictx);
	assert_ptr_equal(imr->pd, ipd);
	assert_int_equal(imr->handle, mr->handle);
	assert_int_equal(imr->lkey, mr->lkey);
	assert_int_equal(imr->rkey, mr->rkey);
	assert_int_equal(imr->length, 5000);
	assert_null(imr->addr);				/* cmd_mr.c:113 */
	/* the importer's context sees it from the other side too */
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	assert_int_equal(ibv_close_device(ictx), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	fpt_close(ctx);
	free(buf);
}

/* The imported MR as the importer's lkey and as an rkey at its QP, on the
 * imported PD: the same region, the same protection domain. */
TR_TEST(imported_mr_works_in_the_importers_qps)
{
	struct ibv_context *ctx = fpt_open(), *ictx;
	char *buf = calloc(1, 4096);
	struct ibv_send_wr w, *bad;
	struct ibv_sge sge;
	struct ibv_qp *a, *b;
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr, *imr;
	struct ibv_cq *cq;
	struct ibv_wc wc;

	(void)state;
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, 4096, ACC) : NULL;
	assert_non_null(mr);
	memcpy(buf, "from the owner", 15);
	ictx = import_copy(ctx);
	ipd = ibv_import_pd(ictx, pd->handle);
	assert_non_null(ipd);
	imr = ibv_import_mr(ipd, mr->handle);
	assert_non_null(imr);
	cq = ibv_create_cq(ictx, 16, NULL, NULL, 0);
	assert_non_null(cq);
	a = tf_rc_qp(ipd, cq, IBV_QPT_RC);
	b = tf_rc_qp(ipd, cq, IBV_QPT_RC);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(tf_pair_connect(a, b, 1, 1), 0);
	/* WRITE the first 15 bytes to offset 1024: local key and remote key
	 * both the imported region's */
	sge = (struct ibv_sge){ (uintptr_t)buf, 15, imr->lkey };
	memset(&w, 0, sizeof(w));
	w.wr_id = 7;
	w.sg_list = &sge;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = (uintptr_t)buf + 1024;
	w.wr.rdma.rkey = imr->rkey;
	assert_int_equal(ibv_post_send(a, &w, &bad), 0);
	assert_int_equal(tf_poll(cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 7);
	assert_memory_equal(buf + 1024, "from the owner", 15);
	assert_int_equal(ibv_destroy_qp(a), 0);
	assert_int_equal(ibv_destroy_qp(b), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	assert_int_equal(ibv_close_device(ictx), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	fpt_close(ctx);
	free(buf);
}

/* Destroyed through one context, the object is gone for the other: its
 * handle names nothing (ENOENT, lookup_get_idr_uobject), and a verb of
 * the other context on it fails as the kernel's (EINVAL: the write
 * path's uobj_get). */
TR_TEST(destroy_in_one_is_seen_by_the_other)
{
	struct ibv_context *ctx = fpt_open(), *ictx;
	char buf[64];
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr, *imr;
	uint32_t mh;

	(void)state;
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), ACC) : NULL;
	assert_non_null(mr);
	mh = mr->handle;
	ictx = import_copy(ctx);
	ipd = ibv_import_pd(ictx, pd->handle);
	assert_non_null(ipd);
	imr = ibv_import_mr(ipd, mh);
	assert_non_null(imr);
	/* the importer deregisters the owner's region */
	assert_int_equal(ibv_dereg_mr(imr), 0);
	assert_int_equal(ptr_err(ibv_import_mr(ipd, mh)), ENOENT);
	assert_int_equal(ptr_err(ibv_import_mr(pd, mh)), ENOENT);
	/* the PD is free for either to destroy: the owner does */
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ptr_err(ibv_import_pd(ictx, ipd->handle)), ENOENT);
	assert_int_equal(ptr_err(ibv_reg_mr(ipd, buf, sizeof(buf), ACC)), EINVAL);
	assert_int_equal(ibv_dealloc_pd(ipd), EINVAL);
	assert_int_equal(ibv_close_device(ictx), 0);
	fpt_close(ctx);
	(void)mr;		/* deregistered through the importer */
}

/* Two contexts of the file in this process: a region destroyed through the
 * importing one refuses its keys in the owner's QPs (the kernel object is
 * one: rxe_mr.c lookup_mr, rxe_resp.c check_rkey); t5842 across processes. */
TR_TEST(region_destroyed_by_the_importer_refuses_its_keys)
{
	struct ibv_context *ctx = fpt_open(), *ictx;
	char *buf = calloc(1, 4096), *mine = calloc(1, 4096);
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr, *own, *imr;
	uint64_t b = (uintptr_t)buf, m = (uintptr_t)mine;	/* where the WRITEs go */

	(void)state;
	assert_true(buf && mine);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, 4096, ACC) : NULL;
	own = pd ? ibv_reg_mr(pd, mine, 4096, ACC) : NULL;
	assert_true(mr && own);
	ictx = import_copy(ctx);
	ipd = ibv_import_pd(ictx, pd->handle);
	assert_non_null(ipd);
	imr = ibv_import_mr(ipd, mr->handle);
	assert_non_null(imr);
	assert_int_equal(fpt_write_status(ctx, pd, b, mr->lkey, 16, m, own->rkey),
			 IBV_WC_SUCCESS);
	assert_int_equal(fpt_write_status(ctx, pd, m, own->lkey, 16, b, mr->rkey),
			 IBV_WC_SUCCESS);
	assert_int_equal(ibv_dereg_mr(imr), 0);
	assert_int_equal(fpt_write_status(ctx, pd, b, mr->lkey, 16, m, own->rkey),
			 IBV_WC_LOC_PROT_ERR);
	assert_int_equal(fpt_write_status(ctx, pd, m, own->lkey, 16, b, mr->rkey),
			 IBV_WC_REM_ACCESS_ERR);
	ibv_unimport_pd(ipd);
	assert_int_equal(ibv_close_device(ictx), 0);
	assert_int_equal(ibv_dereg_mr(own), 0);
	fpt_close(ctx);		/* mr: destroyed through the importer */
	free(buf);
	free(mine);
}

/* What is not the file, or not its object. */
TR_TEST(what_is_not_the_file_is_refused)
{
	struct ibv_context *ctx = fpt_open(), *other = fpt_open(), *ictx;
	struct ibv_pd *pd, *opd[3];
	struct ibv_cq *cq;
	int p[2], nul, i;

	(void)state;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	assert_non_null(pd);
	assert_non_null(cq);
	for (i = 0; i < 3; i++)
		assert_non_null(opd[i] = ibv_alloc_pd(other));
	/* fds: none (fstat fails), a pipe, a character device of nobody's */
	assert_int_equal(ptr_err(ibv_import_device(-1)), EINVAL);
	assert_int_equal(ptr_err(ibv_import_device(9999)), EINVAL);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(ptr_err(ibv_import_device(p[0])), EINVAL);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_true(nul >= 0);
	assert_int_equal(ptr_err(ibv_import_device(nul)), ENODEV);
	close(nul);
	close(p[0]);
	close(p[1]);
	ictx = import_copy(ctx);
	/* handles: none, another type, another file's (opd[2] is 2: ctx's CQ
	 * is 1, it has no 2) */
	assert_int_equal(ptr_err(ibv_import_pd(ictx, 77)), ENOENT);
	assert_int_equal(ptr_err(ibv_import_pd(ictx, cq->handle)), EINVAL);
	assert_int_equal(opd[2]->handle, 2);
	assert_int_equal(ptr_err(ibv_import_pd(ictx, opd[2]->handle)), ENOENT);
	assert_int_equal(ptr_err(ibv_import_mr(pd, pd->handle)), EINVAL);
	assert_int_equal(ptr_err(ibv_import_mr(pd, opd[2]->handle)), ENOENT);
	assert_int_equal(ptr_err(ibv_import_dm(ictx, 0)), EOPNOTSUPP);
	assert_int_equal(ibv_close_device(ictx), 0);
	fpt_close(other);
	fpt_close(ctx);
}

/* Unimport gives back the importer's object alone: the owner's goes on,
 * and the handle imports again. */
TR_TEST(unimport_frees_only_the_importers_object)
{
	struct ibv_context *ctx = fpt_open(), *ictx;
	char buf[64];
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr;

	(void)state;
	pd = ibv_alloc_pd(ctx);
	assert_non_null(pd);
	ictx = import_copy(ctx);
	ipd = ibv_import_pd(ictx, pd->handle);
	assert_non_null(ipd);
	ibv_unimport_pd(ipd);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), ACC);
	assert_non_null(mr);
	ipd = ibv_import_pd(ictx, pd->handle);
	assert_non_null(ipd);
	assert_int_equal(ipd->handle, pd->handle);
	ibv_unimport_pd(ipd);
	assert_int_equal(ibv_close_device(ictx), 0);
	/* the importer's close took nothing of the owner's */
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	fpt_close(ctx);
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
