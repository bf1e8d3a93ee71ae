/* SPDX-License-Identifier: MIT */
/*
 * ibvct-reap: runs one test program with a time limit and makes sure that
 * every process it started is gone when it is, whatever process group or
 * session those chose (a daemon that double-forked and called setsid, a
 * helper in a group of its own). It is a child subreaper (prctl), so
 * orphaned descendants are re-parented to it rather than to init, and it
 * finds the others by walking /proc from its own pid.
 *
 *   ibvct-reap [-t SECONDS] [-g GRACE] [-n NAME] [-d DIR] -- PROGRAM [ARGS...]
 *
 * -t  time limit for PROGRAM (default 300; 0: none), in seconds of an
 *     unshared machine: the machine's load stretches it, up to
 *     IBVCT_STRETCH_MAX (4) times (testkit/runner/tr_clock.h). When it runs
 *     out, every descendant is killed and the exit status is 124 (as
 *     timeout(1)).
 * -g  after PROGRAM exits, how long its descendants may take to end on
 *     their own (default 10). Those still running then are named on stderr
 *     and killed, and a PROGRAM that exited 0 is reported as failed (1): a
 *     test must not leave processes behind.
 * -n  the name used in messages (default: PROGRAM's basename).
 * -d  a scratch dir of PROGRAM's, removed (with all it holds) once every
 *     process is gone, however they ended: `ibvct conformance` runs with
 *     TMPDIR there, so that what a killed child had made goes too.
 * Otherwise the exit status is PROGRAM's, or 128 + the signal that ended it.
 * SIGTERM, SIGINT or SIGHUP to ibvct-reap end every descendant too, quietly:
 * each gets SIGTERM, so that its own cleanup runs (a guest runner ends its
 * guests, a shell its traps), and SIGKILL when it has not ended within
 * RP_TERM_GRACE seconds; then the exit status is 128 + that signal. A
 * terminal's Ctrl-C reaches them so, whatever process group they are in
 * (PROGRAM has one of its own).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tr_clock.h"

#define RP_MAX_PROCS	65536
#define RP_TERM_GRACE	10	/* s from SIGTERM to SIGKILL after a signal */

struct rp_proc {
	pid_t pid, ppid;
	char comm[32];
};

static const char *rp_name;
static const char *rp_dir;	/* -d */

static void rp_usage(void)
{
	fprintf(stderr, "usage: ibvct-reap [-t SECONDS] [-g GRACE] [-n NAME] [-d DIR] -- PROGRAM [ARGS...]\n");
	exit(2);
}

static long long rp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One process from /proc/PID/stat: "pid (comm) state ppid ...". */
static bool rp_read_proc(pid_t pid, struct rp_proc *out)
{
	char path[64], buf[512], *open_p, *close_p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');	/* comm may hold anything, ')' included */
	if (!open_p || !close_p || close_p < open_p || close_p[1] != ' ')
		return false;
	out->pid = pid;
	snprintf(out->comm, sizeof(out->comm), "%.*s", (int)(close_p - open_p - 1), open_p + 1);
	return sscanf(close_p + 2, "%*c %d", &out->ppid) == 1;
}

/* Every live descendant of this process, into out (at most max). */
static int rp_descendants(struct rp_proc *out, int max)
{
	static struct rp_proc all[RP_MAX_PROCS];
	int nall = 0, n = 0, i, j;
	pid_t self = getpid();
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while ((de = readdir(d)) && nall < RP_MAX_PROCS) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		if (rp_read_proc((pid_t)pid, &all[nall]))
			nall++;
	}
	closedir(d);
	/* breadth first from self: out[] grows as parents are found in it */
	for (i = 0; i < nall; i++)
		if (all[i].ppid == self && n < max)
			out[n++] = all[i];
	for (j = 0; j < n; j++)
		for (i = 0; i < nall; i++)
			if (all[i].ppid == out[j].pid && n < max)
				out[n++] = all[i];
	return n;
}

static void rp_reap_all(pid_t main_pid, int *main_status, bool *main_done)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (pid == main_pid) {
			*main_status = st;
			*main_done = true;
		}
}

/* SIGKILL every descendant until none is left (re-parented ones included). */
static void rp_kill_all(pid_t main_pid, int *main_status, bool *main_done)
{
	static struct rp_proc p[4096];
	int n, i, rounds;

	for (rounds = 0; rounds < 500; rounds++) {
		n = rp_descendants(p, (int)(sizeof(p) / sizeof(p[0])));
		if (!n)
			return;
		for (i = 0; i < n; i++)
			kill(p[i].pid, SIGKILL);
		usleep(10000);
		rp_reap_all(main_pid, main_status, main_done);
	}
	fprintf(stderr, "ibvct-reap: %s: could not end every process it started\n", rp_name);
}

/* SIGTERM to every descendant there is now (not to those their cleanup
 * starts: a trap's rm must not be ended half way), then up to
 * RP_TERM_GRACE s for all to end, then SIGKILL to any left. */
static void rp_end_all(pid_t main_pid, int *main_status, bool *main_done)
{
	static struct rp_proc p[4096];
	long long end = rp_now_ms() + RP_TERM_GRACE * 1000;
	int n, i;

	n = rp_descendants(p, (int)(sizeof(p) / sizeof(p[0])));
	for (i = 0; i < n; i++)
		kill(p[i].pid, SIGTERM);
	while (rp_now_ms() < end) {
		rp_reap_all(main_pid, main_status, main_done);
		if (!rp_descendants(p, 1))
			return;
		usleep(20000);
	}
	rp_kill_all(main_pid, main_status, main_done);
}

static int rp_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* -d: the scratch dir goes once nothing can write into it any more. */
static int rp_finish(int rc)
{
	if (rp_dir && nftw(rp_dir, rp_rm_one, 16, FTW_DEPTH | FTW_PHYS) && errno != ENOENT)
		fprintf(stderr, "ibvct-reap: %s: cannot remove %s: %s\n", rp_name, rp_dir, strerror(errno));
	return rc;
}

static int rp_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	long limit = 300, grace = 10;
	int main_status = 0, opt, sig;
	bool main_done = false;
	sigset_t set, old;
	struct tr_clock clk;
	long long end;
	pid_t child;

	while ((opt = getopt(argc, argv, "+t:g:n:d:")) != -1) {
		switch (opt) {
		case 't':
			limit = strtol(optarg, NULL, 10);
			break;
		case 'g':
			grace = strtol(optarg, NULL, 10);
			break;
		case 'n':
			rp_name = optarg;
			break;
		case 'd':
			rp_dir = optarg;
			break;
		default:
			rp_usage();
		}
	}
	if (optind >= argc || limit < 0 || grace < 0)
		rp_usage();
	if (!rp_name) {
		const char *slash = strrchr(argv[optind], '/');

		rp_name = slash ? slash + 1 : argv[optind];
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		perror("ibvct-reap: PR_SET_CHILD_SUBREAPER");
		return 125;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);

	child = fork();
	if (child < 0) {
		perror("ibvct-reap: fork");
		return 125;
	}
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		setpgid(0, 0);		/* its own group, as timeout(1) gives it */
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "ibvct-reap: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}

	tr_clock_start(&clk, limit * 1000LL);
	while (!main_done) {
		long long left = limit ? tr_clock_tick(&clk) : 1000;
		struct timespec ts;

		if (left > 1000)
			left = 1000;	/* a tick a second: the load changes */
		if (limit && left <= 0) {
			fprintf(stderr, "ibvct-reap: %s killed after %llds (limit %lds%s)\n", rp_name,
				tr_clock_wall_s(&clk), limit,
				tr_clock_stretch(&clk) > 1.05 ? ", stretched by the machine's load" : "");
			rp_kill_all(child, &main_status, &main_done);
			return rp_finish(124);
		}
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			rp_end_all(child, &main_status, &main_done);
			return rp_finish(128 + sig);
		}
		rp_reap_all(child, &main_status, &main_done);
	}

	/* The program is gone: its descendants get the grace period. */
	end = rp_now_ms() + grace * 1000;
	for (;;) {
		static struct rp_proc p[64];
		int n = rp_descendants(p, 64), i;

		if (!n)
			return rp_finish(rp_status(main_status));
		if (rp_now_ms() >= end) {
			fprintf(stderr, "ibvct-reap: %s left %d process%s running %lds after it exited:",
				rp_name, n, n == 1 ? "" : "es", grace);
			for (i = 0; i < n; i++)
				fprintf(stderr, " %ld (%s)", (long)p[i].pid, p[i].comm);
			fputc('\n', stderr);
			rp_kill_all(child, &main_status, &main_done);
			return rp_finish(rp_status(main_status) ? rp_status(main_status) : 1);
		}
		usleep(20000);
		rp_reap_all(child, &main_status, &main_done);
	}
}
