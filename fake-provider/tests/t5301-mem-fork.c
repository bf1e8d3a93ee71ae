/* SPDX-License-Identifier: MIT */
/*
 * t5301: fork() and registered memory through the verbs (fake-provider/
 * engine/mem.c, engine/README.md "Registered memory"). A registered
 * region's pages are MAP_SHARED pages of the device's memfd, so that peers
 * reach them; a child of fork() must still get a private copy, as on a
 * copy-on-fork kernel (Debian 12's 6.1, where rdma-core 44 says
 * IBV_FORK_UNNEEDED): the child's writes and the parent's do not meet, and
 * the parent's region stays shared with its peers. A buffer on the forking
 * thread's stack was never remapped and is copied by fork itself. The
 * quirk fork_shares_mr keeps the child on the parent's pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_test.h"

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct reg {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	volatile char *buf;
	size_t len;
};

static void reg_open(struct reg *r)
{
	r->len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	r->ctx = fpt_open();
	r->pd = ibv_alloc_pd(r->ctx);
	assert_non_null(r->pd);
	r->buf = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(r->buf != MAP_FAILED);
	memset((char *)r->buf, 'a', r->len);
	r->mr = ibv_reg_mr(r->pd, (char *)r->buf, r->len, ACC);
	assert_non_null(r->mr);
	/* the fake device's region: pages a peer reaches */
	assert_true(fpt_shared_at((char *)r->buf));
}

static void reg_close(struct reg *r)
{
	assert_int_equal(ibv_dereg_mr(r->mr), 0);
	assert_false(fpt_shared_at((char *)r->buf));
	assert_int_equal(ibv_dealloc_pd(r->pd), 0);
	fpt_close(r->ctx);
	munmap((char *)r->buf, r->len);
}

/* Parent and child each write the region after fork(): neither sees the
 * other's write, and each still sees the bytes of the fork. */
TR_TEST(fork_child_gets_a_private_copy)
{
	struct reg r;
	int go[2], back[2];
	pid_t pid;
	char c;
	int st;

	(void)state;
	reg_open(&r);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		TR_EXPECT(!fpt_shared_at((char *)r.buf));		/* its own pages */
		TR_EXPECT(r.buf[0] == 'a' && r.buf[r.len - 1] == 'a');
		r.buf[0] = 'c';
		TR_ASSERT(write(back[1], "1", 1) == 1);
		TR_ASSERT(read(go[0], &c, 1) == 1);
		TR_EXPECT_MSG(r.buf[1] == 'a', "the parent's write shows in the child");
		TR_EXPECT(r.buf[0] == 'c');
		_exit(0);
	}
	assert_int_equal(read(back[0], &c, 1), 1);
	if (r.buf[0] != 'a')
		fail_msg("the child's write shows in the parent (%c)", r.buf[0]);
	r.buf[1] = 'p';
	assert_int_equal(write(go[1], "1", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(fpt_shared_at((char *)r.buf));			/* the parent's is still */
	reg_close(&r);
}

/* After fork(), the parent's region is still the memfd's pages: a peer
 * that maps the memfd (as a requester does) sees its writes both ways. */
TR_TEST(parent_region_stays_shared_with_peers)
{
	char perm[5], name[256];
	unsigned long long off;
	struct reg r;
	int go[2], back[2], fd;
	pid_t pid;
	char c;
	int st;

	(void)state;
	reg_open(&r);
	pid = tr_fork();					/* a child that only exits */
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(fpt_map_of((char *)r.buf, perm, &off, name, sizeof(name)));
	fd = fpt_memfd();
	assert_true(fd >= 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		volatile char *v = mmap(NULL, r.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					(off_t)off);

		TR_ASSERT(v != MAP_FAILED);
		v[5] = 'q';
		TR_ASSERT(write(back[1], "1", 1) == 1);
		TR_ASSERT(read(go[0], &c, 1) == 1);
		TR_EXPECT(v[6] == 'o');
		_exit(0);
	}
	assert_int_equal(read(back[0], &c, 1), 1);
	assert_int_equal(r.buf[5], 'q');
	r.buf[6] = 'o';
	assert_int_equal(write(go[1], "1", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	reg_close(&r);
}

/* A region on the forking thread's stack is never remapped (the child's
 * copy of that stack is fork's own); the library says fork needs nothing
 * (a copy-on-fork kernel). No ibv_fork_init: that would MADV_DONTFORK the
 * stack page (t3104 tests it). */
TR_TEST(stack_region_stays_and_fork_needs_nothing)
{
	char stackbuf[512];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	ctx = fpt_open();
	pd = ibv_alloc_pd(ctx);
	assert_non_null(pd);
	memset(stackbuf, 's', sizeof(stackbuf));
	mr = ibv_reg_mr(pd, stackbuf, sizeof(stackbuf), ACC);
	assert_non_null(mr);
	if (fpt_on_my_stack(stackbuf))
		assert_false(fpt_shared_at(stackbuf));
	else
		tr_note("a local array is not on the thread's stack here (a sanitizer's fake stack)");
	pid = tr_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		stackbuf[0] = 'c';
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(stackbuf[0], 's');
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	fpt_close(ctx);
}

/* A region in the middle of malloc'ed chunks (heap pages it shares with
 * them): registration and dereg keep every chunk's bytes, and free works
 * after (the allocator's own words on those pages survive the remap). */
TR_TEST(heap_region_keeps_its_neighbours)
{
	enum { N = 5, SZ = 3000 };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *c[N];
	int i;

	(void)state;
	ctx = fpt_open();
	pd = ibv_alloc_pd(ctx);
	assert_non_null(pd);
	for (i = 0; i < N; i++) {
		c[i] = malloc(SZ);
		assert_non_null(c[i]);
		memset(c[i], 'A' + i, SZ);
	}
	mr = ibv_reg_mr(pd, c[2], SZ, ACC);
	assert_non_null(mr);
	assert_true(fpt_shared_at(c[2]));			/* remapped over the heap */
	for (i = 0; i < N; i++)
		assert_true(c[i][0] == 'A' + i && c[i][SZ - 1] == 'A' + i);
	c[1][5] = 'x';
	c[2][5] = 'y';
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(c[1][5], 'x');
	assert_int_equal(c[2][5], 'y');
	for (i = 0; i < N; i++)
		free(c[i]);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	fpt_close(ctx);
}

int main(int argc, char **argv)
{
	return fpt_main(argc, argv);
}
