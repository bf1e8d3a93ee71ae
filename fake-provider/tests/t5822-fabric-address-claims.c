/* SPDX-License-Identifier: MIT */
/*
 * Who holds an address on the fabric of fake hosts (verbs/fabric.c): a
 * host whose device has an address another host that is up holds already
 * keeps out of it, as a duplicate IP address is refused, and says so on
 * stderr, once a process for each such address, naming the address, the
 * holder's run dir and its own; an address whose holder is gone is taken
 * over without a word. Each host is a forked peer with a fake host of its
 * own (fp_env_setup: its sysfs, its run dir, its daemon), both on one
 * fabric directory, their devices with the same two GIDs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fk_test.h"

/* the two addresses both hosts' ports have, as the warning writes them */
#define GID_V6		"fe80::5054:ff:fe00:9"
#define GID_V4		"::ffff:10.9.0.9"

/* The host's script, the fabric: in the test's dir; the hosts' own dirs
 * under the program's scratch dir (a short path: the daemons' sockets). */
static void fabric_setup(void)
{
	FILE *f = fopen("host.fps", "w");
	char path[PATH_MAX];

	assert_non_null(f);
	fprintf(f, "device fake0\n\tport 1 state active link_layer ethernet mtu 1024\n"
		"\tgid 1 0 " GID_V6 "\n\tgid 1 1 " GID_V4 "\n");
	assert_int_equal(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/fabric", tr_dir());
	assert_int_equal(setenv("IBVCT_FABRIC", path, 1), 0);
}

/* In a peer: this process's fake host, from host.fps, with its run dir
 * written to the file named (for the checks). */
static void host_setup(const char *rundir_file)
{
	char scratch[PATH_MAX], err[512], path[PATH_MAX];
	FILE *f;

	TR_ASSERT_MSG(!fp_env_setup("host.fps", getenv("IBVCT_PROVIDER"), fkt_scratch, scratch,
				    sizeof(scratch), err, sizeof(err)), "fp_env_setup: %s", err);
	snprintf(path, sizeof(path), "%s/%s", tr_dir(), rundir_file);
	f = fopen(path, "w");
	TR_ASSERT(f != NULL);
	fprintf(f, "%s", getenv("IBVCT_RUNDIR"));
	TR_ASSERT(fclose(f) == 0);
}

static struct ibv_context *host_open(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = 0;

	list = ibv_get_device_list(&n);
	TR_ASSERT(list && n == 1);
	ctx = ibv_open_device(list[0]);
	TR_ASSERT(ctx != NULL);
	ibv_free_device_list(list);
	return ctx;
}

/* Host A: up (a context open) until the test says 0. */
static void host_a(struct tr_peer *self, void *arg)
{
	struct ibv_context *ctx;

	(void)arg;
	host_setup("rundir.a");
	ctx = host_open();
	tr_send(self, 1);
	(void)tr_recv(self);
	TR_EXPECT(ibv_close_device(ctx) == 0);
}

/* Host B: its device opened twice at once and once more after, its stderr
 * in claim.err. */
static void host_b(struct tr_peer *self, void *arg)
{
	struct ibv_context *c1, *c2;
	int fd = open("claim.err", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	(void)arg;
	TR_ASSERT(fd >= 0 && dup2(fd, 2) == 2);
	close(fd);
	host_setup("rundir.b");
	c1 = host_open();
	c2 = host_open();
	TR_EXPECT(ibv_close_device(c2) == 0);
	TR_EXPECT(ibv_close_device(c1) == 0);
	c1 = host_open();
	TR_EXPECT(ibv_close_device(c1) == 0);
	tr_send(self, 1);
}

/* A file of the test's dir, whole (malloc'ed, "" when there is none). */
static char *slurp(const char *name)
{
	FILE *f = fopen(name, "r");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(buf);
	if (!f)
		return buf;
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* The daemon of the run dir in file is gone (it ends with its last
 * connection; this test's process is its reaper: fk_test.h). */
static void daemon_gone(const char *file)
{
	char *rundir = slurp(file), path[PATH_MAX + 16];
	FILE *f;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/" FK_PID_NAME, rundir);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	free(rundir);
	if (pid > 0)
		assert_int_equal(fkt_daemon_gone((pid_t)pid), 0);
}

/* The lines of text that say an address was refused. */
static int refusals(const char *text)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, "is held by the host of run dir")); p++)
		n++;
	return n;
}

TR_TEST(second_host_claiming_a_held_address_is_told_once_per_address)
{
	struct tr_peer a, b;
	char *err, *ra, *rb, want[2 * PATH_MAX + 256];
	const char *gids[] = { GID_V6, GID_V4 };

	(void)state;
	fabric_setup();
	tr_peer_start(&a, host_a, NULL);
	assert_int_equal(tr_recv(&a), 1);
	tr_peer_start(&b, host_b, NULL);
	assert_int_equal(tr_recv(&b), 1);
	assert_int_equal(tr_peer_wait(&b), 0);
	tr_send(&a, 0);
	assert_int_equal(tr_peer_wait(&a), 0);
	daemon_gone("rundir.a");
	daemon_gone("rundir.b");
	err = slurp("claim.err");
	ra = slurp("rundir.a");
	rb = slurp("rundir.b");
	printf("%s", err);
	/* each address once, though the device opened three times */
	if (refusals(err) != 2)
		tr_fail("host B said %d refusals, want 2 (one an address):\n%s", refusals(err), err);
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "address %s is held by the host of run dir %s (device "
			 "fake0), which is up: this host (run dir %s, device fake0) keeps out of it",
			 gids[i], ra, rb);
		if (!strstr(err, want))
			tr_fail("host B's stderr does not say '%s':\n%s", want, err);
	}
	free(err);
	free(ra);
	free(rb);
}

/* The fabric's entry of GID_V4 names host B's run dir. */
static void entry_names(const char *rundir)
{
	char path[PATH_MAX], *e;

	snprintf(path, sizeof(path), "%s/fabric/00000000000000000000ffff0a090009", tr_dir());
	e = slurp(path);
	if (strncmp(e, rundir, strlen(rundir)) || e[strlen(rundir)] != ' ')
		tr_fail("the fabric's entry of " GID_V4 " is '%s', want host B's run dir %s", e,
			rundir);
	free(e);
}

TR_TEST(address_of_a_host_that_is_gone_is_taken_without_a_word)
{
	struct tr_peer a, b;
	char *err, *rb;

	(void)state;
	fabric_setup();
	tr_peer_start(&a, host_a, NULL);
	assert_int_equal(tr_recv(&a), 1);
	tr_send(&a, 0);
	assert_int_equal(tr_peer_wait(&a), 0);
	daemon_gone("rundir.a");	/* host A is down: its entries stay */
	tr_peer_start(&b, host_b, NULL);
	assert_int_equal(tr_recv(&b), 1);
	assert_int_equal(tr_peer_wait(&b), 0);
	daemon_gone("rundir.b");
	err = slurp("claim.err");
	rb = slurp("rundir.b");
	if (refusals(err))
		tr_fail("host B said a refusal of a gone host's address:\n%s", err);
	entry_names(rb);
	free(err);
	free(rb);
}

int main(int argc, char **argv)
{
	fkt_setup("t5822");
	return fkt_run(argc, argv);
}
