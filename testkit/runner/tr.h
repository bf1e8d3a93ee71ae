/* SPDX-License-Identifier: MIT */
/*
 * tr_: the one runner of the C tests: the conformance suites (through th_,
 * which adds the device, targets and expectations) and the unit tests of
 * ref-impl and the fake provider. It owns the TAP stream (one plan, one
 * `ok`/`not ok` line per test, `# SKIP reason`, `# TODO reason`,
 * diagnostics as `# ` lines), runs each test in a forked process of its own
 * in a process group of its own with a timeout that kills the whole group,
 * gives each test a scratch dir (its cwd, with its stdout and stderr in
 * `log`; removed when it passes, kept and named when it fails, its log
 * printed), lists the tests (`-l`) and runs only those named. It knows
 * nothing of verbs.
 *
 * A test (TR_TEST, below) is a void fn(void **state) with cmocka's assert_*
 * macros inside: the test's process runs it as a one-test cmocka group with
 * the test's setup and teardown around it, so that a failed assert ends the
 * test function, the teardown still runs, and the message with its
 * file:line goes to the log (cmocka 1.1.5 prints nothing for an assert
 * outside a group).
 */
#ifndef TR_H
#define TR_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sys/types.h>
#include <cmocka.h>

/*
 * A test declares itself where it is written, once (kselftest's TEST() is
 * the model): the macro opens the function's definition and registers it,
 * with its requirement IDs and its fixture, so that no table names it a
 * second time:
 *
 *	TR_TEST(unknown_quirk_is_refused_with_its_line)
 *	{
 *		... cmocka's assert_*; `state` is the void ** ...
 *	}
 *
 * Each registration is a static struct and a constructor that links it into
 * the runner's list before main() runs, not a linker section walked from
 * __start_ to __stop_: ASan pads globals with red zones (a section of
 * structs is then no array), and a constructor is plain code that gcov and
 * valgrind see as any other. No standard fixes the order constructors run
 * in, so the runner sorts what they registered by where it is declared: the
 * file (__FILE__), the line, then the declarations' order within a line
 * (__COUNTER__, for the several a macro like FKT_BOTH makes on one line).
 * The TAP plan is in the source's order. Two tests of one name among those
 * a run sees, or none at all, are the runner's error (`Bail out!`, a
 * non-zero exit), so that a copy-pasted test cannot shadow another and a
 * program whose tests are all gone cannot pass.
 */
struct tr_test {
	const char *name;
	const char *ids;		/* requirement IDs, "XRCD-13 LIFE-10"; NULL: none */
	void (*fn)(void **state);
	/* In the test's process, NULL or: setup before fn (non-zero or a
	 * failed assert fails the test, fn does not run), teardown after fn,
	 * also when fn failed. *state is .state on entry to setup. */
	int (*setup)(void **state);
	int (*teardown)(void **state);
	void *state;
	const char *file;		/* where it is declared */
	int line;
};

/* One registration, as the macros below make it (a test, or TR_CASES's
 * rows): the runner's, not to be filled by hand. */
struct tr__reg {
	struct tr_test t;
	unsigned seq;			/* __COUNTER__: the order within a line */
	const char *group;		/* NULL: the program's tests; TR_TEST_IN's */
	size_t nrows, row_size, name_off;	/* TR_CASES: the rows of t.state */
	struct tr__reg *next;
};
void tr__register(struct tr__reg *r);

#define TR__CAT2(a, b)	a##b
#define TR__CAT(a, b)	TR__CAT2(a, b)
/* The registration var_, linked by its constructor. Ends in a declaration
 * that the caller's `;` (TR_CASE) or the function's header (TR_TEST) ends:
 * the tentative definition comes first so the constructor can name it. */
#define TR__REGISTER(var_, group_, name_, ids_, fn_, su_, td_, st_)			\
	static struct tr__reg var_;							\
	__attribute__((constructor)) static void TR__CAT(var_, _ctor)(void)		\
	{										\
		tr__register(&var_);							\
	}										\
	static struct tr__reg var_ = {							\
		.t = { name_, ids_, fn_, su_, td_, st_, __FILE__, __LINE__ },		\
		.seq = __COUNTER__, .group = group_,					\
	}
#define TR__DEFINE(group_, fn_, ids_, su_, td_)						\
	static void fn_(void **state);							\
	TR__REGISTER(tr__reg_##fn_, group_, #fn_, ids_, fn_, su_, td_, NULL);		\
	static void fn_(void **state)

/* A test, named by its function. */
#define TR_TEST(fn)			TR__DEFINE(NULL, fn, NULL, NULL, NULL)
/* With a fixture: int setup(void **state) before it, in its process;
 * teardown after it, also when it failed (both declared above the test). */
#define TR_TEST_FX(fn, setup, teardown)	TR__DEFINE(NULL, fn, NULL, setup, teardown)
/* A test of a group of its own, run by a tr_suite whose .group is group
 * (a program that runs a second set of tests of its own: t0090). */
#define TR_TEST_IN(group, fn)		TR__DEFINE(group, fn, NULL, NULL, NULL)

/* One more test of a function defined elsewhere, under a name of its own
 * (a string) with its own *state, at file scope, ended by `;`: one function
 * under several names (FKT_BOTH in fk_test.h). */
#define TR_CASE(name, fn, state)	TR_CASE_IDS(name, NULL, fn, state)
#define TR_CASE_IDS(name, ids, fn, state)						\
	TR__REGISTER(TR__CAT(tr__case_, __COUNTER__), NULL, name, ids, fn, NULL, NULL, state)
/* The same in a group of its own (TR_TEST_IN). */
#define TR_CASE_IN(group, name, ids, fn, state)					\
	TR__REGISTER(TR__CAT(tr__case_, __COUNTER__), group, name, ids, fn, NULL, NULL, state)

/* A table of cases, one test per row: an array rows whose element has a
 * member `const char *name`, each row a test of fn with *state the row
 * (its place: the TR_CASES line, then the row's index). At file scope,
 * after the array, ended by `;`. */
#define TR_CASES(fn, rows)	TR__CASES(TR__CAT(tr__cases_, __COUNTER__), fn, rows)
#define TR__CASES(var_, fn_, rows_)							\
	_Static_assert(__builtin_types_compatible_p(__typeof__((rows_)[0].name),	\
						    const char *),			\
		       "TR_CASES: a row has a member const char *name");		\
	static struct tr__reg var_;							\
	__attribute__((constructor)) static void TR__CAT(var_, _ctor)(void)		\
	{										\
		tr__register(&var_);							\
	}										\
	static struct tr__reg var_ = {							\
		.t = { NULL, NULL, fn_, NULL, NULL, (void *)(rows_), __FILE__, __LINE__ },	\
		.seq = __COUNTER__, .nrows = sizeof(rows_) / sizeof((rows_)[0]),	\
		.row_size = sizeof((rows_)[0]),						\
		.name_off = offsetof(__typeof__((rows_)[0]), name),			\
	}

/* What a start or decide hook answers. */
enum tr_verdict { TR_RUN, TR_SKIP, TR_FAIL };

/*
 * What a program adds around its registered tests; every hook is optional.
 */
struct tr_suite {
	/* scratch dirs in $TMPDIR/ibvct-NAME.XXXXXX; NULL: the program's name */
	const char *name;
	/* the registered tests of this group (TR_TEST_IN); NULL: the program's */
	const char *group;
	unsigned timeout_s;		/* per test, times IBVCT_TIMEOUT_MULT (0: 30), stretched by load (tr_clock.h) */
	const char *env_help;		/* -h: the environment variables it reads */
	/* parent, before the plan, base made: TR_SKIP prints `1..0 # SKIP why`,
	 * TR_FAIL `Bail out! why` */
	enum tr_verdict (*start)(const char *base, char *why, size_t len);
	/* parent, `# ` lines about the run, after the plan */
	void (*banner)(void);
	/* parent, each test, before its process: TR_RUN, or TR_SKIP/TR_FAIL
	 * with why, decided without a process; *todo may name a known failure */
	enum tr_verdict (*decide)(const struct tr_test *t, const char **todo, char *why,
				  size_t len);
	/* the test's process, in the scratch dir: enter before the test's
	 * setup (inside the cmocka group), leave after the group */
	void (*enter)(const struct tr_test *t);
	void (*leave)(const struct tr_test *t, int failed);
	/* parent, after the test's process, before its TAP line: its result
	 * (TR_RUN passed, TR_SKIP, TR_FAIL), which the hook may change, saying
	 * why in why (a two-host suite: the peer host's half, th_host.c) */
	enum tr_verdict (*settle)(const struct tr_test *t, enum tr_verdict v, char *why,
				  size_t len);
	/* parent, after the last test; failed: any test failed. Non-zero fails
	 * the program (a finding no test's line could carry) */
	int (*finish)(int failed);
	/* a `# ` line under a known failure that passes, after "fixed: passes now; " */
	const char *todo_fixed;
};

/* Run the registered tests of s->group in their source order: -l lists
 * them, NAME... runs those. The exit status. */
int tr_run(const struct tr_suite *s, int argc, char **argv);
/* The same without hooks, the scratch dirs named after argv[0]. */
int tr_main(int argc, char **argv);
/* The tests registered in group (NULL: the program's) for a program that
 * ends without tr_run (a skip of the whole program): 0 after the `Bail
 * out!` line tr_run would print (none, or a name twice). */
size_t tr_registered(const char *group);

/* ---- inside a test (its process, its peers) ------------------------------ */
/* End the test as `ok # SKIP reason`. */
void tr_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void tr_vskip(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0), noreturn));
/* A `# name: text` line under the test's result, pass or fail. */
void tr_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tr_vnote(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Fail the test with a message (into its log), ending this process. */
void tr_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void tr_vfail(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0), noreturn));
/* cmocka's skip() has no reason: here it is the runner's, with its place. */
#undef skip
#define skip() tr_skip("skip() at %s:%d", __FILE__, __LINE__)

/* The running test's scratch dir (also its cwd at the start), the run's
 * base dir above every test's (made before the start hook), the test's
 * number in the plan (0 in the parent). */
const char *tr_dir(void);
const char *tr_base(void);
unsigned tr_num(void);
/* IBVCT_TIMEOUT_MULT (at least 1): slow runs (valgrind) stretch waits. */
long tr_timeout_mult(void);
/* A monotonic clock in milliseconds. */
long long tr_now_ms(void);

/* A file in the scratch dir (cwd), opened O_RDWR|O_CREAT; asserts, returns the fd. */
int tr_file(const char *name);

/* ---- checks in any process of a test ----------------------------------- */
/*
 * TR_EXPECT and TR_ASSERT check in every process of a test: its own, its
 * peers, and any process forked from them, however deep (as kselftest's
 * EXPECT_ and ASSERT_ do in a child). A failed check prints
 * `# FILE:LINE: check failed: COND (errno N)` into the test's log and
 * sends that line to the runner, which fails the test with it, whatever the
 * exit statuses of the test's processes say: a parent that never looks at a
 * child's status still gets the child's failure in its verdict. TR_EXPECT
 * then carries on; TR_ASSERT ends the process (status 1, at once, without
 * exit handlers). The _MSG forms say a printf message instead of COND.
 * In the test's own process cmocka's assert_* stay the usual way (they end
 * the test function and still run its teardown).
 */
#define TR_EXPECT(cond) \
	do { if (!(cond)) tr_check_fail(0, __FILE__, __LINE__, errno, "%s", #cond); } while (0)
#define TR_ASSERT(cond) \
	do { if (!(cond)) tr_check_fail(1, __FILE__, __LINE__, errno, "%s", #cond); } while (0)
#define TR_EXPECT_MSG(cond, ...) \
	do { if (!(cond)) tr_check_fail(0, __FILE__, __LINE__, errno, __VA_ARGS__); } while (0)
#define TR_ASSERT_MSG(cond, ...) \
	do { if (!(cond)) tr_check_fail(1, __FILE__, __LINE__, errno, __VA_ARGS__); } while (0)
void tr_check_fail(int fatal, const char *file, int line, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The checks that failed in this process (a forked child starts at 0 when
 * made by tr_fork or tr_peer_start). */
unsigned tr_checks_failed(void);
/* fork() for a test's helper processes: stdio flushed first, and in the
 * child the failed-check count starts at 0. */
pid_t tr_fork(void);

/* ---- peers: other processes of one test -------------------------------- */
struct tr_peer {
	int pid;
	int to;			/* write end towards the other side */
	int from;		/* read end from the other side */
};
/* Fork a peer running fn(self, arg) then exiting 0, or 1 when a TR_EXPECT
 * in it failed; a failed assert or tr_fail in it exits non-zero, a crash
 * kills it (its signal, not cmocka's handler). The peer is in the test's
 * process group, killed with it. */
void tr_peer_start(struct tr_peer *p, void (*fn)(struct tr_peer *self, void *arg), void *arg);
void tr_send(struct tr_peer *p, uint32_t v);
/* The next value; the test fails when the other side has gone. */
uint32_t tr_recv(struct tr_peer *p);
/* Close the pipes and wait: the peer's exit status (0 ok), 128+sig if killed. */
int tr_peer_wait(struct tr_peer *p);

/* ---- guard pages ------------------------------------------------------- */
/* size bytes (zeroed) ending exactly at a PROT_NONE page: any access past
 * the end faults. tr_guard_free() releases it. */
void *tr_guard_alloc(size_t size);
void tr_guard_free(void *p, size_t size);

#endif /* TR_H */
