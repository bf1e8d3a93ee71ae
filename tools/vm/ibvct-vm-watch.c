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
 *               never): a paused or wedged guest. guest-init writes a
 *               heartbeat while its command runs, so a live guest is
 *               never silent that long
 *   124 limit   LIMIT seconds have passed (default 0: none)
 *   128+N       this program got signal N (SIGINT, SIGTERM, SIGHUP): the
 *               guest is killed with it, nothing is left running
 * Both times are seconds of an unshared machine: the machine's load
 * stretches them, up to IBVCT_STRETCH_MAX (4) times (suites/lib/tr_clock.h),
 * so a guest that is merely slow on a loaded host is never cut short.
 * Otherwise the exit status is QEMU's (128 + its signal), REASON empty.
 * 2: usage; 125: QEMU could not be started.
 */
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
	struct tr_clock total, quiet;
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
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
	tr_clock_start(&quiet, silence * 1000LL);
	for (;;) {
		long long left_total = limit ? tr_clock_tick(&total) : VW_TICK_MS;
		long long left_quiet = silence ? tr_clock_tick(&quiet) : VW_TICK_MS;
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
			tr_clock_start(&quiet, silence * 1000LL);
		} else if (silence && left_quiet <= 0) {
			vw_end_guest(child);
			snprintf(what, sizeof(what), "no console output for %lld s%s%s", tr_clock_wall_s(&quiet),
				 con_size > 0 ? "" : " (none at all)",
				 tr_clock_stretch(&quiet) > 1.05 ? ", stretched by the machine's load" : "");
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
