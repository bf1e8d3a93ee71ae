/* SPDX-License-Identifier: MIT */
/*
 * The test library's checks in forked processes (testkit/runner/tr.h
 * TR_EXPECT, TR_ASSERT): a check that fails in a child, a grandchild or a
 * peer fails the parent's test with the check's file:line, also when the
 * parent never looks at the child's exit status; TR_EXPECT carries on,
 * TR_ASSERT ends the process; checks that hold leave the test passing.
 *
 * The program runs itself: `--inner NAME` runs one of the inner tests
 * below (the group "inner", TR_TEST_IN), made to fail on purpose, under
 * the runner; each outer test runs one and reads the runner's TAP for the
 * verdict and the message.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tr.h"

/* ---- inner tests: each ends as its outer test says ------------------------ */
static pid_t child_waited(void (*fn)(void))
{
	pid_t pid = tr_fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	tr_note("child status %d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return pid;
}

static void expect_fails(void)
{
	int one = 1;

	TR_EXPECT(one == 2);
	/* carried on: a file says so */
	close(open("after", O_WRONLY | O_CREAT, 0600));
}

/* A child's TR_EXPECT fails; it exits 0 and the parent ignores its status. */
TR_TEST_IN("inner", in_child_expect)
{
	child_waited(expect_fails);
	tr_note("carried on %d", access("after", F_OK) == 0);
}

static void assert_fails(void)
{
	int zero = 0;

	TR_ASSERT(zero == 3);
	close(open("after", O_WRONLY | O_CREAT, 0600));
}

/* A TR_ASSERT two forks down: the grandchild ends at once with status 1. */
static void grandchild(void)
{
	child_waited(assert_fails);
}

TR_TEST_IN("inner", in_grandchild_assert)
{
	child_waited(grandchild);
	tr_note("carried on %d", access("after", F_OK) == 0);
}

static void msg_fails(void)
{
	TR_EXPECT_MSG(0, "the value was %d", 42);
}

TR_TEST_IN("inner", in_child_expect_msg)
{
	child_waited(msg_fails);
}

static void peer_fails(struct tr_peer *self, void *arg)
{
	TR_EXPECT(arg == NULL);
}

/* A peer with a failed TR_EXPECT exits 1. */
TR_TEST_IN("inner", in_peer)
{
	struct tr_peer p;

	tr_peer_start(&p, peer_fails, &p);
	tr_note("peer status %d", tr_peer_wait(&p));
}

/* In the test's own process. */
TR_TEST_IN("inner", in_test_process)
{
	TR_EXPECT(state == NULL);
	tr_note("failed here %u", tr_checks_failed());
}

static void holds(void)
{
	TR_EXPECT(1 + 1 == 2);
	TR_ASSERT(getpid() > 0);
}

TR_TEST_IN("inner", checks_hold)
{
	child_waited(holds);
	TR_EXPECT(tr_checks_failed() == 0);
}

/* A failed check outranks the skip the test ends with. */
TR_TEST_IN("inner", then_skip)
{
	child_waited(expect_fails);
	tr_skip("skipped after a failed check");
}

static const struct tr_suite inner_suite = {
	.name = "t0090-inner", .group = "inner",
};

/* ---- outer tests ---------------------------------------------------------- */
static char self_exe[4096];

/* Runs the inner test name; its TAP into out. */
static void run_inner(const char *name, char *out, size_t cap)
{
	char cmd[8500];
	size_t n = 0, r;
	FILE *p;

	/* its scratch dirs (kept: its tests fail) inside this test's */
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s' --inner %s", tr_dir(), self_exe, name);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n + 1 < cap && (r = fread(out + n, 1, cap - 1 - n, p)) > 0)
		n += r;
	out[n] = 0;
	pclose(p);
	print_message("%s", out);
}

static void has(const char *out, const char *want)
{
	if (!strstr(out, want))
		fail_msg("no \"%s\" in the inner run's output", want);
}

static void lacks(const char *out, const char *unwanted)
{
	if (strstr(out, unwanted))
		fail_msg("\"%s\" in the inner run's output", unwanted);
}

static char out[65536];

TR_TEST(child_expect_fails_the_parent)
{
	run_inner("in_child_expect", out, sizeof(out));
	has(out, "not ok 1 - in_child_expect\n");
	has(out, "t0090-child-checks.c:");
	has(out, ": check failed: one == 2 (errno ");
	has(out, "# in_child_expect: child status 0\n");	/* its status said nothing */
	has(out, "# in_child_expect: carried on 1\n");
	has(out, "# in_child_expect: 1 check failed in the test's processes\n");
}

TR_TEST(grandchild_assert_fails_the_parent)
{
	run_inner("in_grandchild_assert", out, sizeof(out));
	has(out, "not ok 1 - in_grandchild_assert\n");
	has(out, ": check failed: zero == 3 (errno ");
	has(out, "# in_grandchild_assert: child status 1\n");	/* the grandchild: ended */
	has(out, "# in_grandchild_assert: child status 0\n");	/* the child: not told */
	has(out, "# in_grandchild_assert: carried on 0\n");
}

TR_TEST(expect_msg_says_the_message)
{
	run_inner("in_child_expect_msg", out, sizeof(out));
	has(out, "not ok 1 - in_child_expect_msg\n");
	has(out, ": check failed: the value was 42 (errno ");
}

TR_TEST(peer_expect_fails_the_parent)
{
	run_inner("in_peer", out, sizeof(out));
	has(out, "not ok 1 - in_peer\n");
	has(out, ": check failed: arg == NULL (errno ");
	has(out, "# in_peer: peer status 1\n");
}

TR_TEST(expect_in_the_test_process)
{
	run_inner("in_test_process", out, sizeof(out));
	has(out, "not ok 1 - in_test_process\n");
	has(out, ": check failed: state == NULL (errno ");
	has(out, "# in_test_process: failed here 1\n");
}

TR_TEST(checks_that_hold_pass)
{
	run_inner("checks_hold", out, sizeof(out));
	has(out, "ok 1 - checks_hold\n");
	lacks(out, "not ok");
	lacks(out, "check failed");
}

TR_TEST(failed_check_outranks_skip)
{
	run_inner("then_skip", out, sizeof(out));
	has(out, "not ok 1 - then_skip\n");
	lacks(out, "# SKIP");
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--inner"))
		return tr_run(&inner_suite, argc - 1, argv + 1);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0) {
		printf("Bail out! /proc/self/exe: cannot read the program's path\n");
		return 1;
	}
	self_exe[n] = 0;
	return tr_main(argc, argv);
}
