/* SPDX-License-Identifier: MIT */
/*
 * ibvct-vm-watch: runs one QEMU guest and ends it as soon as it is known
 * to give no result, instead of waiting out its time limit. tools/vm/ibvct-vm
 * starts every guest (and its accelerator probe) through it.
 *
 *   ibvct-vm-watch -c CONSOLE -l LOG -r REASON [-t LIMIT] [-s SILENCE]
 *                  -- QEMU [ARG]...
 *
 * QEMU runs in a process group of its own with stdout and stderr in LOG;
 * CONSOLE is the file its serial port writes (-serial file:CONSOLE). The
 * guest is killed, REASON gets one line "KIND: what was seen", and the exit
 * status says which, when:
 *   120 kvm     QEMU reports a KVM internal error in LOG (it then pauses the
 *               guest for good: an emulation failure of nested KVM)
 *   121 panic   the guest's kernel panicked ("Kernel panic" on CONSOLE)
 *   122 silent  CONSOLE has not grown for SILENCE seconds (default 30; 0:
 *               never) of the time QEMU could run: a paused or wedged
 *               guest. guest-init writes a heartbeat while its command
 *               runs, so a live guest is never silent that long; the
 *               time QEMU waited for a CPU (a loaded host) does not count
 *   124 limit   LIMIT seconds have passed (default 0: none)
 *   128+N       this program got signal N (SIGINT, SIGTERM, SIGHUP): the
 *               guest is killed with it, nothing is left running
 * LIMIT is seconds of an unshared machine: the machine's load stretches it
 * (and SILENCE where schedstat is missing), up to IBVCT_STRETCH_MAX (4) times (testkit/runner/tr_clock.h),
 * so a guest that is merely slow on a loaded host is never cut short.
 * Otherwise the exit status is QEMU's (128 + its signal), REASON empty.
 * 2: usage; 125: QEMU could not be started.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tr_clock.h"

#define VW_TICK_MS	200
#define VW_LINE_MAX	512

enum vw_end {
	VW_KVM = 120,
	VW_PANIC = 121,
	VW_SILENT = 122,
	VW_LIMIT = 124,
};

/* A file another process appends to, read line by line as it grows. */
struct vw_tail {
	const char *path;
	off_t off;		/* bytes consumed */
	char part[VW_LINE_MAX];	/* the last line, not ended yet */
	size_t part_len;
};

/*
 * The silence clock. A guest is silent for as long as its console has not
 * grown, counting only the time QEMU could run: each tick's wall time less
 * the longest time one of QEMU's threads waited for a CPU in it. A thread
 * that is runnable now (state R in /proc/PID/task/TID/stat) waited for the
 * part of the tick it did not run (schedstat's first field, its CPU time);
 * one that is not waited what schedstat's second field (its time on a run
 * queue, which the kernel adds only when the thread next runs) grew by. A
 * guest the host starves (a loaded machine) is not silent for that time; a
 * paused one (its threads asleep) or a wedged one (spinning on a CPU of
 * its own) is, at the wall clock's pace. Without schedstat (a kernel
 * without CONFIG_SCHED_INFO) the machine's load stretches it instead
 * (tr_clock.h).
 */
#define VW_THREADS	128

struct vw_quiet {
	long long limit_ms;
	long long start_ms, last_ms;
	double used_ms;		/* silence charged */
	double starved_ms;	/* wall time QEMU waited for a CPU */
	bool sched;		/* schedstat readable */
	int n;
	pid_t tid[VW_THREADS];
	unsigned long long run_ns[VW_THREADS], wait_ns[VW_THREADS];
	struct tr_clock load;	/* without schedstat */
};

/* Thread t of pid: its state letter (R, S, D, ...), '?' when gone. */
static char vw_state(pid_t pid, long t)
{
	char path[64], buf[512];
	const char *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, t);
	f = fopen(path, "re");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "TID (COMM) S ...": COMM may hold anything, the state follows its last ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Thread t of pid: runnable now, its CPU time and run-queue time (ns). */
static bool vw_thread(pid_t pid, long t, bool *runnable, unsigned long long *run, unsigned long long *wait)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%ld/schedstat", (int)pid, t);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fscanf(f, "%llu %llu", run, wait) == 2;
	fclose(f);
	if (!ok)
		return false;
	*runnable = vw_state(pid, t) == 'R';
	return true;
}

/*
 * The longest time one of pid's threads waited for a CPU in the dw_ms since
 * the last call, in ms; false if no thread could be read.
 */
static bool vw_waited(struct vw_quiet *q, pid_t pid, long long dw_ms, double *max_ms)
{
	pid_t tid[VW_THREADS];
	unsigned long long run[VW_THREADS], wait[VW_THREADS];
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	*max_ms = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir)) && n < VW_THREADS) {
		long t = strtol(d->d_name, NULL, 10);
		bool runnable;
		double w;

		if (t <= 0 || !vw_thread(pid, t, &runnable, &run[n], &wait[n]))
			continue;
		tid[n] = (pid_t)t;
		for (int i = 0; i < q->n; i++) {
			if (q->tid[i] != tid[n])
				continue;
			if (runnable)
				w = (double)dw_ms - (double)(run[n] - q->run_ns[i]) / 1e6;
			else
				w = (double)(wait[n] - q->wait_ns[i]) / 1e6;
			if (w > *max_ms)
				*max_ms = w;
		}
		n++;
	}
	closedir(dir);
	memcpy(q->tid, tid, n * sizeof(tid[0]));
	memcpy(q->run_ns, run, n * sizeof(run[0]));
	memcpy(q->wait_ns, wait, n * sizeof(wait[0]));
	q->n = n;
	if (*max_ms > (double)dw_ms)
		*max_ms = (double)dw_ms;
	return n > 0;
}

static void vw_quiet_start(struct vw_quiet *q, long long limit_ms, pid_t pid)
{
	double ignored;

	q->limit_ms = limit_ms;
	q->start_ms = q->last_ms = tr_clock_now_ms();
	q->used_ms = q->starved_ms = 0;
	q->sched = vw_waited(q, pid, 0, &ignored);
	tr_clock_start(&q->load, limit_ms);
}

/* Charges the time since the last tick; true once the silence is spent. */
static bool vw_quiet_tick(struct vw_quiet *q, pid_t pid)
{
	long long now = tr_clock_now_ms(), dw = now - q->last_ms;
	bool load_out = tr_clock_tick(&q->load) <= 0;
	double starved;

	q->last_ms = now;
	if (!q->sched || !vw_waited(q, pid, dw, &starved))
		return load_out;
	q->starved_ms += starved;
	q->used_ms += (double)dw - starved;
	return q->used_ms >= (double)q->limit_ms;
}

/*
 * What QEMU's threads were doing when the guest was found silent, appended
 * to LOG: one line a thread (its name, state, kernel wait channel, CPU and
 * run-queue seconds), so that a stuck guest's report says whether QEMU
 * spun, slept or waited on the host.
 */
static void vw_snapshot(const char *log, pid_t pid)
{
	char path[96], comm[64], wchan[64];
	struct dirent *d;
	FILE *out, *f;
	DIR *dir;

	out = fopen(log, "ae");
	if (!out)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir) {
		fclose(out);
		return;
	}
	fprintf(out, "ibvct-vm-watch: QEMU's threads when the guest was found silent:\n");
	while ((d = readdir(dir))) {
		long t = strtol(d->d_name, NULL, 10);
		unsigned long long run = 0, wait = 0;
		bool runnable;
		size_t n;

		if (t <= 0 || !vw_thread(pid, t, &runnable, &run, &wait))
			continue;
		comm[0] = wchan[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm", (int)pid, t);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/wchan", (int)pid, t);
		f = fopen(path, "re");
		if (f) {
			n = fread(wchan, 1, sizeof(wchan) - 1, f);
			wchan[n] = '\0';
			fclose(f);
		}
		fprintf(out, "  %ld %s: state %c, waits in %s, %.1f s on a CPU, %.1f s waiting for one\n", t, comm,
			vw_state(pid, t), wchan[0] && strcmp(wchan, "0") ? wchan : "-", run / 1e9, wait / 1e9);
	}
	closedir(dir);
	fclose(out);
}

/* What the guest's silence was, for REASON. */
static void vw_quiet_what(const struct vw_quiet *q, bool any, char *buf, size_t len)
{
	const char *none = any ? "" : " (none at all)";
	long long wall = (tr_clock_now_ms() - q->start_ms + 500) / 1000;

	if (!q->sched)
		snprintf(buf, len, "no console output for %lld s%s%s", wall, none,
			 tr_clock_stretch(&q->load) > 1.05 ? ", stretched by the machine's load" : "");
	else if (q->starved_ms >= 1000.0)
		snprintf(buf, len, "no console output for %lld s%s, %lld s of it with QEMU waiting for a CPU",
			 wall, none, (long long)(q->starved_ms / 1000.0 + 0.5));
	else
		snprintf(buf, len, "no console output for %lld s%s", wall, none);
}

static void vw_usage(void)
{
	fprintf(stderr, "usage: ibvct-vm-watch -c CONSOLE -l LOG -r REASON [-t LIMIT] [-s SILENCE] -- QEMU [ARG]...\n");
	exit(2);
}

/*
 * Reads what was appended to t since the last call and looks for needle in
 * each whole line (and the unfinished last one); the first line holding it
 * goes to hit. Returns the file's size (-1: none yet).
 */
static off_t vw_scan(struct vw_tail *t, const char *needle, char *hit, size_t hit_len)
{
	char buf[4096];
	struct stat st;
	ssize_t n;
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || lseek(fd, t->off, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c != '\n' && t->part_len < sizeof(t->part) - 1) {
				t->part[t->part_len++] = c == '\r' || c == '\0' ? ' ' : c;
				continue;
			}
			t->part[t->part_len] = '\0';
			if (!hit[0] && strstr(t->part, needle))
				snprintf(hit, hit_len, "%s", t->part);
			if (c == '\n')
				t->part_len = 0;
		}
		t->off += n;
	}
	close(fd);
	/* a line still being written counts as soon as it holds the needle */
	t->part[t->part_len] = '\0';
	if (!hit[0] && strstr(t->part, needle))
		snprintf(hit, hit_len, "%s", t->part);
	return st.st_size;
}

static void vw_kill(pid_t child, int sig)
{
	kill(-child, sig);
	kill(child, sig);
}

/* Ends the guest: its whole group, SIGKILL after a short grace. */
static void vw_end_guest(pid_t child)
{
	int st;

	vw_kill(child, SIGTERM);
	for (int i = 0; i < 50; i++) {
		if (waitpid(child, &st, WNOHANG) == child)
			goto gone;
		usleep(20000);
	}
	vw_kill(child, SIGKILL);
	waitpid(child, &st, 0);
gone:
	/* anything QEMU left in its group */
	kill(-child, SIGKILL);
}

static void vw_reason(const char *path, const char *kind, const char *what)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return;
	fprintf(f, "%s: %s\n", kind, what);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *console = NULL, *log = NULL, *reason = NULL;
	long limit = 0, silence = 30;
	struct vw_tail con = { 0 }, lg = { 0 };
	struct tr_clock total;
	struct vw_quiet quiet = { 0 };
	char hit[VW_LINE_MAX], what[VW_LINE_MAX + 64];
	off_t con_size = -1;
	sigset_t set, old;
	int opt, st, fd;
	pid_t child;

	while ((opt = getopt(argc, argv, "+c:l:r:t:s:")) != -1) {
		switch (opt) {
		case 'c':
			console = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'r':
			reason = optarg;
			break;
		case 't':
			limit = strtol(optarg, NULL, 10);
			break;
		case 's':
			silence = strtol(optarg, NULL, 10);
			break;
		default:
			vw_usage();
		}
	}
	if (optind >= argc || !console || !log || !reason || limit < 0 || silence < 0)
		vw_usage();
	con.path = console;
	lg.path = log;
	/* a REASON left from an earlier guest would describe this one */
	if (unlink(reason) && errno != ENOENT) {
		fprintf(stderr, "ibvct-vm-watch: %s: %s\n", reason, strerror(errno));
		return 125;
	}
	/* O_APPEND: QEMU's lines and the snapshot of its threads never overwrite each other */
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "ibvct-vm-watch: %s: %s\n", log, strerror(errno));
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
		perror("ibvct-vm-watch: fork");
		return 125;
	}
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		setpgid(0, 0);
		if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(125);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "ibvct-vm-watch: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);	/* either side may get there first */
	close(fd);

	tr_clock_start(&total, limit * 1000LL);
	vw_quiet_start(&quiet, silence * 1000LL, child);
	for (;;) {
		long long left_total = limit ? tr_clock_tick(&total) : VW_TICK_MS;
		bool quiet_out = silence && vw_quiet_tick(&quiet, child);
		struct timespec ts = { 0, VW_TICK_MS * 1000000L };
		off_t size;
		int sig;

		hit[0] = '\0';
		vw_scan(&lg, "KVM internal error", hit, sizeof(hit));
		if (hit[0]) {
			vw_end_guest(child);
			vw_reason(reason, "kvm", hit);
			return VW_KVM;
		}
		size = vw_scan(&con, "Kernel panic", hit, sizeof(hit));
		if (hit[0]) {
			vw_end_guest(child);
			vw_reason(reason, "panic", hit);
			return VW_PANIC;
		}
		if (size != con_size) {
			/* output: the silence starts again */
			con_size = size;
			vw_quiet_start(&quiet, silence * 1000LL, child);
		} else if (quiet_out) {
			vw_snapshot(log, child);
			vw_end_guest(child);
			vw_quiet_what(&quiet, con_size > 0, what, sizeof(what));
			vw_reason(reason, "silent", what);
			return VW_SILENT;
		}
		if (limit && left_total <= 0) {
			vw_end_guest(child);
			snprintf(what, sizeof(what), "ended at its time limit after %lld s (limit %ld s%s)",
				 tr_clock_wall_s(&total), limit,
				 tr_clock_stretch(&total) > 1.05 ? ", stretched by the machine's load" : "");
			vw_reason(reason, "limit", what);
			return VW_LIMIT;
		}
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			vw_end_guest(child);
			snprintf(what, sizeof(what), "ended by signal %d", sig);
			vw_reason(reason, "signal", what);
			return 128 + sig;
		}
		if (waitpid(child, &st, WNOHANG) == child) {
			/* a last look: what made it end may be in the files now */
			hit[0] = '\0';
			vw_scan(&lg, "KVM internal error", hit, sizeof(hit));
			if (hit[0]) {
				vw_reason(reason, "kvm", hit);
				return VW_KVM;
			}
			kill(-child, SIGKILL);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
	}
}
