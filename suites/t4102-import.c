/* SPDX-License-Identifier: MIT */
/*
 * t4102: a context's fd and import in one process (IMPORT-). The context's
 * cmd_fd is the uverbs file: open, close-on-exec, dup'able, polled as the
 * command file; ibv_import_device on a copy makes a second context on the
 * same file, whose ibv_import_pd/ibv_import_mr are the owner's objects
 * (handle, keys, length), usable in the importer's own QPs; unimport frees
 * only the importer's structure, a destroy in one context is seen by the
 * other, closing an import closes the fd it was given; and the errors of a
 * bad fd, a bad handle, a handle of the wrong type or of another file. A
 * driver without import ops (rxe, mlx4) answers EOPNOTSUPP: there the
 * import tests skip with that reason (never pass, never fail). Several
 * processes: t3103.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "th.h"

#define LEN 4096
#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define NO_HANDLE 0x7ffffff0u	/* no file holds this many objects */

/* What a test leaves allocated on purpose (a user structure whose kernel
 * object another context destroyed), kept reachable for a leak checker. */
static void *volatile left_open[4];

static void *page_buf(unsigned char fill)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 4096, LEN), 0);
	memset(p, fill, LEN);
	return p;
}

/* IMPORT-01 */
TH_TEST(cmd_fd_is_an_open_file_that_dups, "IMPORT-01", 0)
{
	int fd = t->ctx->cmd_fd, d, fl;
	struct stat a, b;
	struct ibv_pd *pd;

	if (fd < 0)
		th_fail("cmd_fd is %d: a context's fd is the uverbs file it opened", fd);
	fl = fcntl(fd, F_GETFD);
	assert_true(fl >= 0);
	/* util/open_cdev.c:52 opens it O_RDWR | O_CLOEXEC */
	assert_true(fl & FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	d = dup(fd);
	assert_true(d >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(fstat(d, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	assert_int_equal(close(d), 0);
	/* closing a copy leaves the context working */
	pd = ibv_alloc_pd(t->ctx);
	assert_non_null(pd);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* IMPORT-02: uverbs_fops has no .poll: vfs_poll answers DEFAULT_POLLMASK */
TH_TEST(cmd_fd_polls_as_the_command_file, "IMPORT-02", 0)
{
	short want = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;
	struct pollfd p = { .fd = t->ctx->cmd_fd, .events = want | POLLPRI };
	struct ibv_pd *pd;
	int i;

	assert_true(p.fd >= 0);
	for (i = 0; i < 2; i++) {
		p.revents = 0;
		assert_int_equal(poll(&p, 1, 0), 1);
		if (p.revents != want)
			th_fail("poll: revents %#x, the command file answers %#x", p.revents, want);
		/* and the same after a command on it */
		pd = ibv_alloc_pd(t->ctx);
		assert_non_null(pd);
		assert_int_equal(ibv_dealloc_pd(pd), 0);
	}
}

/* IMPORT-04, -06, -07: the same file, the same objects */
TH_TEST(import_in_the_same_process_gives_the_same_objects, "IMPORT-04 IMPORT-06 IMPORT-07", 0)
{
	void *buf = page_buf(0x5a);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *pd2;
	struct ibv_mr *mr, *mr2;
	struct ibv_context *c2;
	struct ibv_port_attr pa;
	struct stat a, b;
	int used;

	assert_non_null(pd);
	mr = ibv_reg_mr(pd, buf, LEN, ACC);
	assert_non_null(mr);
	c2 = th_import(t->ctx->cmd_fd, &used);
	if (!c2)
		th_fail("ibv_import_device of the context's own fd: %s", strerror(errno));
	assert_ptr_not_equal(c2, t->ctx);
	assert_int_equal(c2->cmd_fd, used);
	assert_int_equal(fstat(t->ctx->cmd_fd, &a), 0);
	assert_int_equal(fstat(c2->cmd_fd, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	assert_string_equal(ibv_get_device_name(c2->device), ibv_get_device_name(t->ctx->device));
	assert_int_equal(ibv_query_port(c2, t->port, &pa), 0);

	pd2 = ibv_import_pd(c2, pd->handle);
	if (!pd2)
		th_fail("ibv_import_pd(%u): %s", pd->handle, strerror(errno));
	assert_ptr_not_equal(pd2, pd);
	assert_ptr_equal(pd2->context, c2);
	if (pd2->handle != pd->handle)
		th_fail("the imported PD's handle is %u, the PD's %u", pd2->handle, pd->handle);

	mr2 = ibv_import_mr(pd2, mr->handle);
	if (!mr2)
		th_fail("ibv_import_mr(%u): %s", mr->handle, strerror(errno));
	assert_ptr_equal(mr2->context, c2);
	assert_ptr_equal(mr2->pd, pd2);
	assert_int_equal(mr2->handle, mr->handle);
	if (mr2->lkey != mr->lkey || mr2->rkey != mr->rkey)
		th_fail("imported keys %#x/%#x, the MR's %#x/%#x", mr2->lkey, mr2->rkey,
			mr->lkey, mr->rkey);
	assert_int_equal(mr2->length, LEN);
	/* the kernel gives no address: rdma-core v44.0 libibverbs/cmd_mr.c:114 */
	assert_null(mr2->addr);

	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	assert_int_equal(ibv_close_device(c2), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
}

/* IMPORT-08: the imported MR in the importer's QPs, lkey and rkey */
TH_TEST(imported_mr_works_in_the_importers_qps, "IMPORT-08 IMPORT-06", 0)
{
	unsigned char *buf = page_buf(0x11), got[LEN], put[LEN], want[LEN];
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *pd2;
	struct ibv_mr *mr, *mr2;
	struct ibv_context *c2;
	char why[256];

	assert_non_null(pd);
	mr = ibv_reg_mr(pd, buf, LEN, ACC);
	assert_non_null(mr);
	c2 = th_import(t->ctx->cmd_fd, NULL);
	assert_non_null(c2);
	pd2 = ibv_import_pd(c2, pd->handle);
	assert_non_null(pd2);
	mr2 = ibv_import_mr(pd2, mr->handle);
	assert_non_null(mr2);
	memset(buf, 0x77, LEN);		/* what the owner has now */
	memset(put, 0x3c, LEN);
	memset(got, 0, LEN);
	memset(want, 0x77, LEN);
	if (th_import_traffic(pd2, mr2, buf, LEN, t->port, got, put, why, sizeof(why)))
		th_fail("the importer's traffic: %s", why);
	if (memcmp(got, want, LEN))
		th_fail("the SEND from the imported lkey carried %#x, the owner's memory is 0x77",
			got[0]);
	assert_memory_equal(buf, put, LEN);	/* the WRITE to the imported rkey landed */
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	assert_int_equal(ibv_close_device(c2), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
}

/* IMPORT-11: unimport frees the importer's structure, not the object */
TH_TEST(unimport_leaves_the_object, "IMPORT-11", 0)
{
	void *buf = page_buf(0x22);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *pd2;
	struct ibv_mr *mr, *mr2;
	struct ibv_context *c2;

	assert_non_null(pd);
	mr = ibv_reg_mr(pd, buf, LEN, ACC);
	assert_non_null(mr);
	c2 = th_import(t->ctx->cmd_fd, NULL);
	assert_non_null(c2);
	pd2 = ibv_import_pd(c2, pd->handle);
	assert_non_null(pd2);
	mr2 = ibv_import_mr(pd2, mr->handle);
	assert_non_null(mr2);
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	/* still there: imported again, with the same keys */
	pd2 = ibv_import_pd(c2, pd->handle);
	if (!pd2)
		th_fail("the PD is gone after ibv_unimport_pd: %s", strerror(errno));
	if (pd2->handle != pd->handle)
		th_fail("imported again: handle %u, the PD's %u", pd2->handle, pd->handle);
	mr2 = ibv_import_mr(pd2, mr->handle);
	if (!mr2)
		th_fail("the MR is gone after ibv_unimport_mr: %s", strerror(errno));
	assert_int_equal(mr2->lkey, mr->lkey);
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	assert_int_equal(ibv_close_device(c2), 0);
	/* and the owner's destroys find them */
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
}

/* IMPORT-10: a destroy in either context is the object's */
TH_TEST(destroy_in_one_context_is_seen_by_the_other, "IMPORT-10", 0)
{
	void *buf = page_buf(0x33), *buf2 = page_buf(0x44);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *pd2, *pdx;
	struct ibv_mr *mr, *mr2, *mrx;
	struct ibv_context *c2;
	uint32_t h;

	assert_non_null(pd);
	mr = ibv_reg_mr(pd, buf, LEN, ACC);
	assert_non_null(mr);
	c2 = th_import(t->ctx->cmd_fd, NULL);
	assert_non_null(c2);
	pd2 = ibv_import_pd(c2, pd->handle);
	assert_non_null(pd2);
	mr2 = ibv_import_mr(pd2, mr->handle);
	assert_non_null(mr2);

	/* the importer deregisters: the owner's handle names nothing now */
	h = mr->handle;
	assert_int_equal(ibv_dereg_mr(mr2), 0);
	errno = 0;
	mrx = ibv_import_mr(pd, h);
	if (mrx)
		th_fail("the MR deregistered in the importer is still imported by the owner");
	th_errno_strict(errno, ENOENT, "import_mr of a deregistered MR");
	left_open[0] = mr;	/* its structure: the object is gone */

	/* the owner deallocates: the importer's PD is a stale handle */
	h = pd->handle;
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	errno = 0;
	pdx = ibv_import_pd(c2, h);
	if (pdx)
		th_fail("the PD deallocated by the owner is still imported");
	th_errno_strict(errno, ENOENT, "import_pd of a deallocated PD");
	errno = 0;
	mrx = ibv_reg_mr(pd2, buf2, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (mrx)
		th_fail("reg_mr on a PD the owner deallocated succeeded");
	/* the errno is the write handler's: linux v6.1
	 * drivers/infiniband/core/uverbs_cmd.c:721-724 ib_uverbs_reg_mr passes
	 * the PD lookup's own error on, ENOENT for a handle that names nothing
	 * (seen on ixrc0); the fake kernel still answers EINVAL there
	 * (fake-provider/kernel/state.c fk__obj_create): the rule is that it
	 * fails */
	ibv_unimport_pd(pd2);
	assert_int_equal(ibv_close_device(c2), 0);
	free(buf);
	free(buf2);
}

/* IMPORT-12: the import owns the fd it was given */
TH_TEST(closing_an_import_closes_its_fd, "IMPORT-12", 0)
{
	struct ibv_context *c2;
	struct ibv_pd *pd;
	int used;

	c2 = th_import(t->ctx->cmd_fd, &used);
	assert_non_null(c2);
	assert_true(used >= 0);
	assert_int_equal(ibv_close_device(c2), 0);
	errno = 0;
	assert_int_equal(fcntl(used, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	/* the owner's fd and context go on */
	assert_true(fcntl(t->ctx->cmd_fd, F_GETFD) >= 0);
	pd = ibv_alloc_pd(t->ctx);
	assert_non_null(pd);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

/* IMPORT-05: libibverbs' own checks of the fd (device.c:380 EINVAL, :400 ENODEV) */
TH_TEST(import_device_refuses_what_is_no_verbs_file, "IMPORT-05", 0)
{
	int p[2], d, nul;
	struct ibv_context *c;

	(void)t;
	errno = 0;
	assert_null(ibv_import_device(-1));
	assert_int_equal(errno, EINVAL);
	d = dup(t->ctx->cmd_fd);
	assert_true(d >= 0);
	assert_int_equal(close(d), 0);
	errno = 0;
	assert_null(ibv_import_device(d));	/* closed */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pipe(p), 0);
	errno = 0;
	c = ibv_import_device(p[0]);
	if (c)
		th_fail("ibv_import_device of a pipe made a context");
	assert_int_equal(errno, EINVAL);
	assert_true(fcntl(p[0], F_GETFD) >= 0);	/* a refused fd stays the caller's */
	close(p[0]);
	close(p[1]);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_true(nul >= 0);
	errno = 0;
	c = ibv_import_device(nul);
	if (c)
		th_fail("ibv_import_device of /dev/null made a context");
	assert_int_equal(errno, ENODEV);	/* a character device of no verbs device */
	close(nul);
}

/* IMPORT-09: the kernel's lookup of a handle (rdma_core.c) */
TH_TEST(import_refuses_a_bad_handle, "IMPORT-09", 0)
{
	void *buf = page_buf(0x55);
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx), *pd2, *pd3;
	struct ibv_mr *mr[3], *x;
	struct ibv_context *c2, *c3;
	struct ibv_pd *px;
	int i;

	assert_non_null(pd);
	for (i = 0; i < 3; i++) {
		mr[i] = ibv_reg_mr(pd, buf, LEN, ACC);
		assert_non_null(mr[i]);
	}
	c2 = th_import(t->ctx->cmd_fd, NULL);
	assert_non_null(c2);
	pd2 = ibv_import_pd(c2, pd->handle);
	assert_non_null(pd2);

	errno = 0;
	px = ibv_import_pd(c2, NO_HANDLE);
	if (px)
		th_fail("ibv_import_pd of a handle that names nothing succeeded");
	th_errno_strict(errno, ENOENT, "import_pd of no object");
	errno = 0;
	x = ibv_import_mr(pd2, NO_HANDLE);
	if (x)
		th_fail("ibv_import_mr of a handle that names nothing succeeded");
	th_errno_strict(errno, ENOENT, "import_mr of no object");
	errno = 0;
	x = ibv_import_mr(pd2, pd->handle);	/* a PD's handle */
	if (x)
		th_fail("ibv_import_mr of a PD's handle succeeded");
	th_errno_strict(errno, EINVAL, "import_mr of a PD's handle");
	errno = 0;
	px = ibv_import_pd(c2, mr[2]->handle);	/* an MR's handle */
	if (px)
		th_fail("ibv_import_pd of an MR's handle succeeded");
	th_errno_strict(errno, EINVAL, "import_pd of an MR's handle");

	/* another file: a fresh context holds one PD and no MR */
	c3 = th_open();
	pd3 = ibv_alloc_pd(c3);
	assert_non_null(pd3);
	if (pd3->handle == mr[2]->handle)
		th_fail("the other file's PD has the MR's handle %u", pd3->handle);
	errno = 0;
	x = ibv_import_mr(pd3, mr[2]->handle);
	if (x)
		th_fail("ibv_import_mr of another file's MR handle %u succeeded", mr[2]->handle);
	th_errno_strict(errno, ENOENT, "import_mr of another file's handle");
	assert_int_equal(ibv_dealloc_pd(pd3), 0);
	assert_int_equal(ibv_close_device(c3), 0);

	ibv_unimport_pd(pd2);
	assert_int_equal(ibv_close_device(c2), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(ibv_dereg_mr(mr[i]), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	free(buf);
}

/* IMPORT-14: a fact of the drivers without import ops */
TH_TEST(driver_without_import_ops_answers_eopnotsupp, "IMPORT-14", 0)
{
	struct ibv_context *c;
	int d;

	th_need_driver("rxe mlx4", "IMPORT-14 is about a driver without import_context "
		       "(rdma-core v44.0: only providers/mlx5 has it)");
	d = dup(t->ctx->cmd_fd);
	assert_true(d >= 0);
	errno = 0;
	c = ibv_import_device(d);
	if (c)
		th_fail("ibv_import_device succeeded on a driver without import ops");
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(close(d), 0);	/* refused: still the caller's */
}

int main(int argc, char **argv)
{
	return th_main(argc, argv);
}
