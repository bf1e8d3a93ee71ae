/* SPDX-License-Identifier: MIT */
/*
 * The runner's registration of tests (testkit/runner/tr.h TR_TEST): a
 * test declared once is in the program; the plan and `-l` follow the
 * order of the source (file, then line as a number, then the order within
 * a line, then a TR_CASES row's index), whatever order the registrations
 * were made in; `-l` lists each name with its requirement IDs; two tests of
 * one name, a test without a name, or no test at all end the program with
 * the runner's `Bail out!` naming them and a non-zero exit, before any
 * plan.
 *
 * The program runs itself: `--group NAME ARG...` runs the tests of one of
 * the groups below (TR_TEST_IN, TR_CASE_IN) as a program of its own; each
 * test of the program reads that run's output and exit status.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tr.h"

static void nothing(void **state)
{
}

/* ---- group "listed": declared in the source, not in name order ----------- */
TR_TEST_IN("listed", listed_first)
{
}

/* two on one line (as FKT_BOTH makes them): their order on it */
#define LISTED(name, ids) TR_CASE_IN("listed", name, ids, nothing, NULL)
LISTED("listed_second", "ABI-01"); LISTED("listed_third", "LIFE-02 LIFE-03");
#undef LISTED

TR_TEST_IN("listed", a_listed_fourth)
{
}

/* ---- group "scrambled": registered in an order of no source -------------- */
struct row {
	const char *name;
};

static struct row rows[] = { { "row_0" }, { "row_1" }, { "row_2" } };

/* Places (file:line, seq) as the macros would give them: lines compare as
 * numbers (5 < 30 < 100, which as text would go the other way), a.c before
 * b.c, seq within a line, a TR_CASES table's rows by index. */
static struct tr__reg scrambled[] = {
	{ .t = { "b_20", NULL, nothing, NULL, NULL, NULL, "b.c", 20 }, .seq = 1,
	  .group = "scrambled" },
	{ .t = { "a_30_seq2", NULL, nothing, NULL, NULL, NULL, "a.c", 30 }, .seq = 2,
	  .group = "scrambled" },
	{ .t = { NULL, NULL, nothing, NULL, NULL, rows, "a.c", 30 }, .seq = 1,
	  .group = "scrambled", .nrows = 3, .row_size = sizeof(rows[0]),
	  .name_off = offsetof(struct row, name) },
	{ .t = { "b_10", NULL, nothing, NULL, NULL, NULL, "b.c", 10 }, .seq = 9,
	  .group = "scrambled" },
	{ .t = { "a_100", NULL, nothing, NULL, NULL, NULL, "a.c", 100 }, .seq = 0,
	  .group = "scrambled" },
	{ .t = { "a_5", "ABI-02", nothing, NULL, NULL, NULL, "a.c", 5 }, .seq = 7,
	  .group = "scrambled" },
};

/* ---- group "noname": a row without a name ------------------------------- */
static struct row unnamed[] = { { "named" }, { NULL } };
static struct tr__reg noname = {
	.t = { NULL, NULL, nothing, NULL, NULL, unnamed, "c.c", 7 }, .group = "noname",
	.nrows = 2, .row_size = sizeof(unnamed[0]), .name_off = offsetof(struct row, name),
};

__attribute__((constructor)) static void register_by_hand(void)
{
	/* the last row first: no order of the array's survives but the places' */
	for (size_t i = sizeof(scrambled) / sizeof(scrambled[0]); i-- > 0;)
		tr__register(&scrambled[i]);
	tr__register(&noname);
}

/* ---- group "dup": one name twice (a copy-pasted test) ------------------- */
enum { DUP_FIRST = __LINE__ + 1 };
TR_TEST_IN("dup", twice)
{
}

enum { DUP_SECOND = __LINE__ + 1 };
TR_CASE_IN("dup", "twice", NULL, nothing, NULL);

/* ---- group "empty": nothing registers in it ------------------------------ */

/* ---- the tests: each runs a group ----------------------------------------- */
static char self_exe[4096];
static char out[16384];

/* The group's run with args ("-l" or ""), its output into out; its exit status. */
static int run_group(const char *group, const char *args)
{
	char cmd[8500];
	size_t n = 0, r;
	FILE *p;
	int st;

	/* its scratch dirs inside this test's */
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s' --group %s %s", tr_dir(), self_exe, group,
		 args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n + 1 < sizeof(out) && (r = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += r;
	out[n] = 0;
	st = pclose(p);
	print_message("%s: exit %d\n%s", cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void has(const char *want)
{
	if (!strstr(out, want))
		fail_msg("no \"%s\" in the group's output", want);
}

TR_TEST(list_is_in_source_order_with_ids)
{
	assert_int_equal(run_group("listed", "-l"), 0);
	assert_string_equal(out, "listed_first\n"
				 "listed_second [ABI-01]\n"
				 "listed_third [LIFE-02 LIFE-03]\n"
				 "a_listed_fourth\n");
}

TR_TEST(plan_is_in_source_order)
{
	assert_int_equal(run_group("listed", ""), 0);
	assert_string_equal(out, "1..4\n"
				 "ok 1 - listed_first\n"
				 "ok 2 - listed_second [ABI-01]\n"
				 "ok 3 - listed_third [LIFE-02 LIFE-03]\n"
				 "ok 4 - a_listed_fourth\n");
}

TR_TEST(order_is_the_places_not_the_registrations)
{
	assert_int_equal(run_group("scrambled", "-l"), 0);
	assert_string_equal(out, "a_5 [ABI-02]\n"
				 "row_0\n"
				 "row_1\n"
				 "row_2\n"
				 "a_30_seq2\n"
				 "a_100\n"
				 "b_10\n"
				 "b_20\n");
}

TR_TEST(one_name_twice_fails_the_program_with_both_places)
{
	char want[8400];

	snprintf(want, sizeof(want), "Bail out! two tests named twice in group dup: %s:%d and %s:%d\n",
		 __FILE__, DUP_FIRST, __FILE__, DUP_SECOND);
	assert_int_not_equal(run_group("dup", "-l"), 0);
	assert_string_equal(out, want);
	assert_int_not_equal(run_group("dup", ""), 0);
	assert_string_equal(out, want);		/* no plan, no test ran */
}

TR_TEST(no_test_at_all_fails_the_program)
{
	assert_int_not_equal(run_group("empty", ""), 0);
	has("Bail out! no test is registered in group empty (");
	assert_null(strstr(out, "1.."));
	assert_int_not_equal(run_group("empty", "-l"), 0);
	has("Bail out! no test is registered in group empty (");
}

TR_TEST(a_row_without_a_name_fails_the_program)
{
	assert_int_not_equal(run_group("noname", "-l"), 0);
	assert_string_equal(out, "Bail out! a test without a name in group noname at c.c:7\n");
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc > 2 && !strcmp(argv[1], "--group")) {
		struct tr_suite s = { .name = "t0091-group", .group = argv[2] };

		return tr_run(&s, argc - 2, argv + 2);
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0) {
		printf("Bail out! /proc/self/exe: cannot read the program's path\n");
		return 1;
	}
	self_exe[n] = 0;
	return tr_main(argc, argv);
}
