/* SPDX-License-Identifier: MIT */
/*
 * The test runner (tr.h): arguments, the TAP stream, one forked process per
 * test in its own process group with a timeout, scratch dirs and logs,
 * skips and notes from the test's processes over a pipe, peers, guard
 * pages. The parent runs no test code: every test starts from the state
 * the program had before its first test, whatever the tests before it did.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tr.h"
#include "tr_clock.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#define TR_SKIP_STATUS	77
#define TR_DIAG_MAX	60
#define TR_NOTES_MAX	16384

static int tr_res_fd = -1;		/* test process -> parent: S/N lines */
static char tr_base_dir[PATH_MAX];
static char tr_test_dir[PATH_MAX + 256];
static unsigned tr_test_num;
static const struct tr_suite *tr_cur_suite;
static const struct tr_test *tr_cur;
/* static: still reachable in forked children that _exit (valgrind) */
static unsigned char *tr_want;
static struct tr_ent *tr_ents;	/* the run's tests, in source order */
/* SIGCHLD wakes the parent's wait for a test at once (a self-pipe) */
static int tr_chld[2] = { -1, -1 };

/* ---- inside a test ---------------------------------------------------- */
static void tr_res_write(char kind, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	buf[0] = kind;
	buf[1] = ' ';
	n = vsnprintf(buf + 2, sizeof(buf) - 3, fmt, ap);
	if (n < 0)
		return;
	n = (int)strlen(buf);
	for (int i = 2; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	buf[n++] = '\n';
	/* one write of at most PIPE_BUF bytes: lines of peers never mix */
	if (tr_res_fd >= 0 && write(tr_res_fd, buf, (size_t)n) < 0)
		return;
}

static void tr_res_printf(char kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tr_res_printf(char kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tr_res_write(kind, fmt, ap);
	va_end(ap);
}

/* Checks in any process of the test: counted here, and an `F` line to the
 * parent, which fails the test on it (tr_run_one). */
static unsigned tr_nfailed;

void tr_check_fail(int fatal, const char *file, int line, int err, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tr_nfailed++;
	printf("# %s:%d: check failed: %s (errno %d)\n", file, line, what, err);
	fflush(stdout);
	tr_res_printf('F', "%s:%d: check failed: %s (errno %d)", file, line, what, err);
	if (fatal) {
		fflush(NULL);
		_exit(1);
	}
}

unsigned tr_checks_failed(void)
{
	return tr_nfailed;
}

pid_t tr_fork(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		tr_nfailed = 0;
	return pid;
}

void tr_vskip(const char *fmt, va_list ap)
{
	tr_res_write('S', fmt, ap);
	fflush(NULL);
	_exit(TR_SKIP_STATUS);
}

void tr_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tr_vskip(fmt, ap);
}

void tr_vnote(const char *fmt, va_list ap)
{
	tr_res_write('N', fmt, ap);
}

void tr_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tr_vnote(fmt, ap);
	va_end(ap);
}

void tr_vfail(const char *fmt, va_list ap)
{
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(NULL);
	_exit(1);
}

void tr_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tr_vfail(fmt, ap);
}

const char *tr_dir(void)
{
	return tr_test_dir;
}

const char *tr_base(void)
{
	return tr_base_dir;
}

unsigned tr_num(void)
{
	return tr_test_num;
}

long tr_timeout_mult(void)
{
	const char *m = getenv("IBVCT_TIMEOUT_MULT");
	long mult = m ? strtol(m, NULL, 10) : 1;

	return mult > 0 ? mult : 1;
}

long long tr_now_ms(void)
{
	return tr_clock_now_ms();
}

int tr_file(const char *name)
{
	int fd = open(name, O_RDWR | O_CREAT, 0600);

	assert_true(fd >= 0);
	return fd;
}

/* ---- scratch dirs ------------------------------------------------------- */
static int tr_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

/* Only the run's base and what is below it. */
static int tr_rm_tree(const char *dir)
{
	size_t l = strlen(tr_base_dir);

	if (!l || strncmp(dir, tr_base_dir, l) || (dir[l] && dir[l] != '/'))
		return -1;
	return nftw(dir, tr_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void tr_print_file(const char *path, int max)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (++n > max) {
			printf("# ... (more in %s)\n", path);
			break;
		}
		line[strcspn(line, "\n")] = 0;
		printf("#   %s\n", line);
	}
	fclose(f);
}

/* ---- the test's process ----------------------------------------------- */
static int tr_cm_setup(void **state)
{
	if (tr_cur_suite->enter)
		tr_cur_suite->enter(tr_cur);
	return tr_cur->setup ? tr_cur->setup(state) : 0;
}

static void tr_child(const struct tr_suite *s, const struct tr_test *t, int wfd)
{
	const struct CMUnitTest one[] = { {
		.name = t->name, .test_func = t->fn, .setup_func = tr_cm_setup,
		.teardown_func = t->teardown, .initial_state = t->state,
	} };
	int log, failed;

	setpgid(0, 0);
	signal(SIGCHLD, SIG_DFL);
	close(tr_chld[0]);
	close(tr_chld[1]);
	tr_res_fd = wfd;
	tr_cur_suite = s;
	tr_cur = t;
	log = open("log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (log >= 0) {
		dup2(log, 1);
		dup2(log, 2);
		close(log);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cmocka_set_message_output(CM_OUTPUT_STDOUT);
	failed = _cmocka_run_group_tests(t->name, one, 1, NULL, NULL) != 0;
	if (s->leave)
		s->leave(t, failed);
#ifdef __SANITIZE_ADDRESS__
	/* the test's process ends in _exit: LeakSanitizer's check at exit()
	 * never runs, so it runs here (0 when ASAN_OPTIONS turns leaks off) */
	if (!failed && __lsan_do_recoverable_leak_check()) {
		fputs("LeakSanitizer: the test leaked (above)\n", stderr);
		failed = 1;
	}
#endif
	fflush(NULL);
	_exit(failed);
}

/* ---- the parent ----------------------------------------------------------- */
static void tr_on_chld(int sig)
{
	int e = errno;

	if (write(tr_chld[1], "c", 1) < 0)
		errno = e;	/* full: a wake-up is pending anyway */
	errno = e;
}

static long long tr_timeout_ms(const struct tr_suite *s)
{
	return (s->timeout_s ? s->timeout_s : 30) * 1000LL * tr_timeout_mult();
}

/*
 * IBVCT_RESULT_CMD: a lab's engine hears of each test as it ends (ibvct
 * conformance --result-cmd): the command, run by sh, with two words added,
 * PROGRAM.TEST and PASS, FAIL or SKIP (a known deviation is SKIP: neither
 * passed nor a failure of the run); its status is not ours to judge.
 */
static char tr_prog[64];

static void tr_result_cmd(int ok, const struct tr_test *t, const char *directive)
{
	const char *cmd = getenv("IBVCT_RESULT_CMD");
	char name[256];
	pid_t pid;

	if (!cmd || !cmd[0])
		return;
	snprintf(name, sizeof(name), "%s.%s", tr_prog, t->name);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		char script[4096];

		/* the TAP stream is ours alone */
		if (fd >= 0)
			dup2(fd, 1);
		snprintf(script, sizeof(script), "%s \"$1\" \"$2\"", cmd);
		execlp("sh", "sh", "-c", script, "ibvct-result", name,
		       directive ? "SKIP" : ok ? "PASS" : "FAIL", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void tr_tap_line(int ok, size_t num, const struct tr_test *t, const char *directive,
			const char *reason)
{
	printf("%s %zu - %s", ok ? "ok" : "not ok", num, t->name);
	if (t->ids && t->ids[0])
		printf(" [%s]", t->ids);
	if (directive)
		printf(" # %s %s", directive, reason);
	putchar('\n');
	fflush(stdout);
	tr_result_cmd(ok, t, directive && strcmp(directive, "TODO") ? directive : ok ? NULL : directive);
}

/* Reads what the test's processes have written so far into notes;
 * *nfail counts the failed checks' lines (`F `), also those past the
 * notes' room. */
static void tr_read_notes(int fd, char *notes, size_t *nl, unsigned *nfail)
{
	static int at_start = 1;	/* of a line: lines are whole writes */
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (at_start && buf[i] == 'F')
				(*nfail)++;
			at_start = buf[i] == '\n';
		}
		if (*nl + (size_t)n < TR_NOTES_MAX - 1) {
			memcpy(notes + *nl, buf, (size_t)n);
			*nl += (size_t)n;
		}
	}
}

static int tr_run_one(const struct tr_suite *s, size_t num, const struct tr_test *t, int keep)
{
	static char notes[TR_NOTES_MAX];
	char dir[PATH_MAX + 256], why[1024] = "", path[PATH_MAX + 300];
	const char *todo = NULL;
	struct tr_clock clk;
	int pfd[2], st = 0, timed_out = 0, pass, skipped, ends = 0;
	unsigned nfail = 0;
	size_t nl = 0;
	pid_t pid;

	/* decided without a process */
	switch (s->decide ? s->decide(t, &todo, why, sizeof(why)) : TR_RUN) {
	case TR_RUN:
		break;
	case TR_SKIP:
		tr_tap_line(1, num, t, "SKIP", why);
		return 0;
	case TR_FAIL:
		tr_tap_line(0, num, t, todo ? "TODO" : NULL, todo);
		printf("# %s: %s\n", t->name, why);
		return todo ? 0 : 1;
	}
	snprintf(dir, sizeof(dir), "%s/%s", tr_base_dir, t->name);
	if (mkdir(dir, 0700) || pipe2(pfd, O_CLOEXEC)) {
		printf("Bail out! %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	fflush(NULL);
	tr_test_num = (unsigned)num;
	snprintf(tr_test_dir, sizeof(tr_test_dir), "%s", dir);
	pid = fork();
	if (pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		close(pfd[0]);
		if (chdir(dir))
			_exit(1);
		tr_child(s, t, pfd[1]);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	tr_clock_start(&clk, tr_timeout_ms(s));
	for (;;) {
		struct pollfd p[2] = { { .fd = tr_chld[0], .events = POLLIN },
				       { .fd = ends ? -1 : pfd[0], .events = POLLIN } };
		long long left = tr_clock_tick(&clk);
		char c[64];

		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (left <= 0) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		if (poll(p, 2, (int)(left > 1000 ? 1000 : left + 1)) <= 0)
			continue;
		if (p[0].revents && read(tr_chld[0], c, sizeof(c)) < 0)
			continue;
		if (p[1].revents & POLLIN)
			tr_read_notes(pfd[0], notes, &nl, &nfail);
		else if (p[1].revents)
			ends = 1;	/* every writer gone: only the exit is left */
	}
	/* peers the test left behind go with its group */
	kill(-pid, SIGKILL);
	fcntl(pfd[0], F_SETFL, 0);
	tr_read_notes(pfd[0], notes, &nl, &nfail);
	notes[nl] = 0;
	close(pfd[0]);
	tr_test_num = 0;

	/* a check that failed in any process of the test fails it */
	skipped = !nfail && !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == TR_SKIP_STATUS;
	pass = !nfail && !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (s->settle) {
		char sk[1024] = "";
		enum tr_verdict v = skipped ? TR_SKIP : pass ? TR_RUN : TR_FAIL, nv;

		if (skipped) {
			char *l = strstr(notes, "S ");

			while (l && l != notes && l[-1] != '\n')
				l = strstr(l + 1, "S ");
			snprintf(sk, sizeof(sk), "%s", l ? l + 2 : "skipped");
			sk[strcspn(sk, "\n")] = 0;
		}
		nv = s->settle(t, v, sk, sizeof(sk));
		if (nv != v || (skipped && nv == TR_SKIP) || (nv == TR_FAIL && sk[0])) {
			if (nv == TR_SKIP) {
				tr_tap_line(1, num, t, "SKIP", sk);
				pass = 0;
				skipped = 1;
				goto notes;
			}
			if (nv == TR_FAIL) {
				tr_tap_line(0, num, t, todo ? "TODO" : NULL, todo);
				printf("# %s: %s\n", t->name, sk);
				pass = skipped = 0;
				if (v == TR_FAIL)
					goto diag;
				goto notes;
			}
		}
	}
	if (skipped) {
		char *sk = strstr(notes, "S ");

		while (sk && sk != notes && sk[-1] != '\n')
			sk = strstr(sk + 1, "S ");
		snprintf(why, sizeof(why), "%s", sk ? sk + 2 : "skipped");
		why[strcspn(why, "\n")] = 0;
		tr_tap_line(1, num, t, "SKIP", why);
	} else if (pass) {
		tr_tap_line(1, num, t, todo ? "TODO" : NULL, todo);
		if (todo)
			printf("# %s: fixed: passes now%s%s\n", t->name, s->todo_fixed ? "; " : "",
			       s->todo_fixed ? s->todo_fixed : "");
	} else {
		tr_tap_line(0, num, t, todo ? "TODO" : NULL, todo);
diag:
		if (timed_out)
			printf("# %s: timeout: killed after %lld s (limit %lld s%s)\n", t->name,
			       tr_clock_wall_s(&clk), tr_timeout_ms(s) / 1000,
			       tr_clock_stretch(&clk) > 1.05 ? ", stretched by the machine's load" : "");
		else if (WIFSIGNALED(st))
			printf("# %s: killed by signal %d (%s)%s\n", t->name, WTERMSIG(st),
			       strsignal(WTERMSIG(st)),
			       WTERMSIG(st) == SIGSEGV ? ": an access past a struct's end hits its guard page" : "");
		else
			printf("# %s: exit status %d\n", t->name, WEXITSTATUS(st));
		for (char *l = notes; (l = strstr(l, "F ")); l += 2)
			if (l == notes || l[-1] == '\n')
				printf("# %s: %.*s\n", t->name, (int)strcspn(l + 2, "\n"), l + 2);
		if (nfail)
			printf("# %s: %u check%s failed in the test's processes\n", t->name, nfail,
			       nfail == 1 ? "" : "s");
		snprintf(path, sizeof(path), "%s/log", dir);
		tr_print_file(path, TR_DIAG_MAX);
		printf("# %s: scratch dir kept: %s\n", t->name, dir);
	}
notes:
	/* notes, whatever the result */
	for (char *l = strtok(notes, "\n"); l; l = strtok(NULL, "\n"))
		if (l[0] == 'N' && l[1] == ' ')
			printf("# %s: %s\n", t->name, l + 2);
	fflush(stdout);
	if ((pass || skipped) && !keep)
		tr_rm_tree(dir);
	return pass || skipped || todo ? 0 : 1;
}

/* ---- the registered tests ------------------------------------------------- */
/* As the constructors linked them (tr.h: TR_TEST), in no order of use. */
static struct tr__reg *tr_regs;

void tr__register(struct tr__reg *r)
{
	r->next = tr_regs;
	tr_regs = r;
}

/* A test of the run and its place: file, line, seq, then the row of a
 * TR_CASES table. */
struct tr_ent {
	struct tr_test t;
	unsigned seq;
	size_t row;
};

static int tr_ent_cmp(const void *a, const void *b)
{
	const struct tr_ent *x = a, *y = b;
	int c = strcmp(x->t.file, y->t.file);

	if (c)
		return c;
	if (x->t.line != y->t.line)
		return x->t.line < y->t.line ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int tr_in_group(const struct tr__reg *r, const char *group)
{
	return r->group == group || (r->group && group && !strcmp(r->group, group));
}

/* The tests of group in source order into *out (malloc'ed), their count;
 * 0 after a `Bail out!` line: none, one without a name, or two of one name
 * (the second would never run by its name, and a copy-pasted test would
 * shadow the one it came from). */
static size_t tr_collect(const char *group, struct tr_ent **out)
{
	const char *in = group ? " in group " : "", *g = group ? group : "";
	struct tr_ent *e;
	struct tr__reg *r;
	size_t n = 0, k = 0, i, j;

	*out = NULL;
	for (r = tr_regs; r; r = r->next)
		if (tr_in_group(r, group))
			n += r->row_size ? r->nrows : 1;
	if (!n) {
		printf("Bail out! no test is registered%s%s (a test is declared with TR_TEST or "
		       "TH_TEST: testkit/README.md)\n", in, g);
		return 0;
	}
	e = calloc(n, sizeof(*e));
	if (!e) {
		printf("Bail out! out of memory for %zu tests\n", n);
		return 0;
	}
	for (r = tr_regs; r; r = r->next) {
		if (!tr_in_group(r, group))
			continue;
		if (!r->row_size) {
			e[k].t = r->t;
			e[k++].seq = r->seq;
			continue;
		}
		for (i = 0; i < r->nrows; i++, k++) {
			char *row = (char *)r->t.state + i * r->row_size;

			e[k].t = r->t;
			e[k].t.state = row;
			memcpy(&e[k].t.name, row + r->name_off, sizeof(e[k].t.name));
			e[k].seq = r->seq;
			e[k].row = i;
		}
	}
	qsort(e, n, sizeof(*e), tr_ent_cmp);
	for (i = 0; i < n; i++) {
		if (!e[i].t.name || !e[i].t.name[0]) {
			printf("Bail out! a test without a name%s%s at %s:%d\n", in, g, e[i].t.file,
			       e[i].t.line);
			free(e);
			return 0;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(e[i].t.name, e[j].t.name)) {
				printf("Bail out! two tests named %s%s%s: %s:%d and %s:%d\n",
				       e[i].t.name, in, g, e[j].t.file, e[j].t.line, e[i].t.file,
				       e[i].t.line);
				free(e);
				return 0;
			}
	}
	*out = e;
	return n;
}

static int tr_usage(const struct tr_suite *s, const char *argv0)
{
	printf("usage: %s [-l | NAME...]\n  -l      list the tests%s\n"
	       "  NAME... run only these tests\n"
	       "env: IBVCT_TIMEOUT_MULT, IBVCT_KEEP=1 (keep scratch dirs)%s%s\n", argv0,
	       " (and their requirement IDs)", s->env_help ? ", " : "",
	       s->env_help ? s->env_help : "");
	return 0;
}

int tr_run(const struct tr_suite *s, int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR"), *slash = strrchr(argv[0], '/');
	struct sigaction sa = { .sa_handler = tr_on_chld, .sa_flags = SA_RESTART };
	char why[1024] = "", name[64];
	size_t i, n, sel = 0, num = 0;
	int fail = 0, a, keep, rc = 0;

	n = tr_collect(s->group, &tr_ents);
	if (!n)
		return 1;
	tr_want = calloc(n, 1);
	if (!tr_want) {
		free(tr_ents);
		tr_ents = NULL;
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (i = 0; i < n; i++)
			if (tr_ents[i].t.ids && tr_ents[i].t.ids[0])
				printf("%s [%s]\n", tr_ents[i].t.name, tr_ents[i].t.ids);
			else
				printf("%s\n", tr_ents[i].t.name);
		goto out;
	}
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		rc = tr_usage(s, argv[0]);
		goto out;
	}
	for (a = 1; a < argc; a++) {
		for (i = 0; i < n; i++)
			if (!strcmp(argv[a], tr_ents[i].t.name))
				break;
		if (i == n) {
			printf("Bail out! no test named %s (see -l)\n", argv[a]);
			rc = 2;
			goto out;
		}
		tr_want[i] = 1;
	}
	for (i = 0; i < n; i++) {
		if (argc <= 1)
			tr_want[i] = 1;
		sel += tr_want[i];
	}
	/* no name: the program's, build/t/t5002-qp-table.t -> t5002-qp-table */
	snprintf(name, sizeof(name), "%s", slash ? slash + 1 : argv[0]);
	name[strcspn(name, ".")] = 0;
	snprintf(tr_prog, sizeof(tr_prog), "%s", name);
	keep = getenv("IBVCT_KEEP") && !strcmp(getenv("IBVCT_KEEP"), "1");
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tr_base_dir, sizeof(tr_base_dir), "%s/ibvct-%s.XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp", s->name ? s->name : name);
	if (!mkdtemp(tr_base_dir)) {
		printf("Bail out! mkdtemp %s: %s\n", tr_base_dir, strerror(errno));
		rc = 1;
		goto out;
	}
	switch (s->start ? s->start(tr_base_dir, why, sizeof(why)) : TR_RUN) {
	case TR_RUN:
		break;
	case TR_SKIP:
		printf("1..0 # SKIP %s\n", why);
		tr_rm_tree(tr_base_dir);
		if (s->finish)
			rc = s->finish(0);
		goto out;
	case TR_FAIL:
		printf("Bail out! %s\n", why);
		tr_rm_tree(tr_base_dir);
		if (s->finish)
			s->finish(1);
		rc = 1;
		goto out;
	}
	if (pipe2(tr_chld, O_CLOEXEC | O_NONBLOCK) || sigaction(SIGCHLD, &sa, NULL)) {
		printf("Bail out! SIGCHLD pipe: %s\n", strerror(errno));
		rc = 1;
		goto out;
	}
	printf("1..%zu\n", sel);
	if (s->banner)
		s->banner();
	for (i = 0; i < n; i++)
		if (tr_want[i])
			fail |= tr_run_one(s, ++num, &tr_ents[i].t, keep);
	signal(SIGCHLD, SIG_DFL);
	close(tr_chld[0]);
	close(tr_chld[1]);
	if (keep)
		printf("# scratch dirs kept: %s\n", tr_base_dir);
	else if (!fail)
		tr_rm_tree(tr_base_dir);
	else
		rmdir(tr_base_dir);	/* only when no failed test's dir is kept inside */
	rc = fail;
	if (s->finish && s->finish(fail))
		rc = 1;
out:
	free(tr_want);
	free(tr_ents);
	tr_want = NULL;
	tr_ents = NULL;
	return rc;
}

int tr_main(int argc, char **argv)
{
	struct tr_suite s = { .name = NULL };

	return tr_run(&s, argc, argv);
}

size_t tr_registered(const char *group)
{
	struct tr_ent *e;
	size_t n = tr_collect(group, &e);

	free(e);
	return n;
}

/* ---- peers ------------------------------------------------------------------ */
void tr_peer_start(struct tr_peer *p, void (*fn)(struct tr_peer *self, void *arg), void *arg)
{
	int a[2], b[2];
	pid_t pid;

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tr_peer self = { .pid = 0, .to = b[1], .from = a[0] };

		tr_nfailed = 0;
		close(a[1]);
		close(b[0]);
		/* a crash ends the peer (128+sig to tr_peer_wait): cmocka's handlers,
		 * inherited from the test, would print TAP here and jump back into
		 * the test's code in this process */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		signal(SIGFPE, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		fn(&self, arg);
		fflush(NULL);
		_exit(tr_nfailed ? 1 : 0);
	}
	close(a[0]);
	close(b[1]);
	p->pid = pid;
	p->to = a[1];
	p->from = b[0];
}

void tr_send(struct tr_peer *p, uint32_t v)
{
	assert_int_equal(write(p->to, &v, sizeof(v)), sizeof(v));
}

uint32_t tr_recv(struct tr_peer *p)
{
	uint32_t v;
	ssize_t n = read(p->from, &v, sizeof(v));

	if (n != sizeof(v))
		tr_fail("tr_recv: the other side went away (%zd)", n);
	return v;
}

int tr_peer_wait(struct tr_peer *p)
{
	int st;

	close(p->to);
	close(p->from);
	if (waitpid(p->pid, &st, 0) != p->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- guard pages -------------------------------------------------------------- */
void *tr_guard_alloc(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size + pg - 1) / pg * pg;
	char *m = mmap(NULL, span + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + span, pg, PROT_NONE), 0);
	return m + span - size;
}

void tr_guard_free(void *p, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size + pg - 1) / pg * pg;

	munmap((char *)p + size - span, span + pg);
}
