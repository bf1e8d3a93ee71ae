/* SPDX-License-Identifier: MIT */
/*
 * ibvct-fkd, the fake kernel daemon: options, logging, the run dir, the
 * listening socket and pid file, signals. Started on demand by the client
 * library (which holds the run dir's lock and waits on --ready-fd), or by
 * hand in the foreground for debugging (then it takes the lock itself).
 *
 *   ibvct-fkd [-f] [-k] [-v] [-r RUNDIR] [-l LOGFILE] [--ready-fd N]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fkd.h"
#include "fp_script.h"

/* The daemon's sink of fk_log and fk_logv (log.c): stderr, the log. */
void fk__vlog(const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec ts;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(line, sizeof(line), "fkd[%ld] %lld.%03ld ", (long)getpid(),
		     (long long)ts.tv_sec, ts.tv_nsec / 1000000);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	/* one write per line: several daemons may share a log across restarts */
	n = (int)strlen(line);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/*
 * The state left when serving ends, into the log, one dump line per log
 * line: after an idle exit every connection is gone, so anything but
 * "objects=0" and "end problems=0" is a leak (the fault sweep reads it).
 */
static void fk_log_state(void)
{
	size_t len = FK_REPLY_MAX, n;
	char *buf = malloc(len + 1), *line, *save = NULL;

	if (!buf) {
		fk_log("state at exit: out of memory");
		return;
	}
	n = fk__dump(buf, len);
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fk_log("state at exit: %s", line);
	free(buf);
}

static void fk_on_signal(int sig)
{
	fk_stop = 1;
}

static void fk_usage(FILE *f)
{
	fprintf(f,
		"usage: ibvct-fkd [-f] [-k] [-v] [-r RUNDIR] [-l LOGFILE] [-s SCRIPT]\n"
		"  the ibvct fake kernel daemon (normally started on demand by the fake provider)\n"
		"  -f          run in the foreground (default when started by hand: also -f)\n"
		"  -k          keep running when the last connection closes\n"
		"  -v          log every message\n"
		"  -r RUNDIR   run dir (default: $IBVCT_RUNDIR, $XDG_RUNTIME_DIR/ibvct, /tmp/ibvct-UID)\n"
		"  -l LOGFILE  append the log there instead of stderr\n"
		"  -s SCRIPT   the fake host's script ('' for the built-in default): the\n"
		"              devices, limits and lifetime model clients must match\n"
		"  --ready-fd N  (client library) write one byte to fd N once listening\n");
}

/* Is a daemon answering on path? */
static bool fk_alive(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0)
		return false;
	up = !connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	return up;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	char rundir[108], sock_path[128], lock_path[128], pid_path[128], pidtxt[32];
	struct sockaddr_un sa;
	const char *logfile = NULL, *dir_opt = NULL, *script_opt = NULL;
	bool keep = false;
	int ready_fd = -1, lockfd = -1, lfd = -1, pidfd, opt, err, rc = 1;
	struct sigaction sig = { .sa_handler = fk_on_signal };
	sigset_t block, run_mask;

	/* fds 0-2 always open (on /dev/null if the caller closed them), so no
	 * socket, lock or received descriptor is ever 0, 1 or 2 */
	for (;;) {
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (nfd < 0)
			return 1;
		if (nfd > STDERR_FILENO) {
			close(nfd);
			break;
		}
		fcntl(nfd, F_SETFD, 0);
	}
	while ((opt = getopt_long(argc, argv, "fkvr:l:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			break;			/* never detaches itself: the client does */
		case 'k':
			keep = true;
			break;
		case 'v':
			fk_verbose = 1;
			break;
		case 'r':
			dir_opt = optarg;
			break;
		case 'l':
			logfile = optarg;
			break;
		case 's':
			script_opt = optarg;
			break;
		case 'R':
			ready_fd = atoi(optarg);
			if (ready_fd < 0)
				ready_fd = -1;
			break;
		case 'h':
			fk_usage(stdout);
			return 0;
		default:
			fk_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fk_usage(stderr);
		return 2;
	}
	if (logfile) {
		int lf = open(logfile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

		if (lf < 0 || dup2(lf, STDERR_FILENO) < 0) {
			fprintf(stderr, "ibvct-fkd: %s: %s\n", logfile, strerror(errno));
			return 1;
		}
		close(lf);
	}
	if (dir_opt && setenv("IBVCT_RUNDIR", dir_opt, 1))
		return 1;
	if (script_opt) {
		/* The host's own copy of the truth: what clients declare at
		 * HELLO is checked against it, never taken on trust. */
		static struct fp_script world;
		char why[512];

		if (!script_opt[0])
			fp_script_default(&world);
		else if (fp_script_load(script_opt, &world, why, sizeof(why))) {
			fk_log("%s", why);
			return 1;
		}
		fk_world = &world;
	}
	err = fk_proto_rundir(rundir, sizeof(rundir));
	if (!err)
		err = fk_proto_addr(&sa, rundir);
	if (err) {
		fk_log("run dir %s: %s", rundir, strerror(err));
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/" FK_SOCK_NAME, rundir);
	snprintf(lock_path, sizeof(lock_path), "%s/" FK_LOCK_NAME, rundir);
	snprintf(pid_path, sizeof(pid_path), "%s/" FK_PID_NAME, rundir);

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &run_mask);
	sigdelset(&run_mask, SIGTERM);
	sigdelset(&run_mask, SIGINT);
	sigdelset(&run_mask, SIGHUP);
	sigaction(SIGTERM, &sig, NULL);
	sigaction(SIGINT, &sig, NULL);
	sigaction(SIGHUP, &sig, NULL);
	signal(SIGPIPE, SIG_IGN);

	lockfd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lockfd < 0) {
		fk_log("%s: %s", lock_path, strerror(errno));
		goto out;
	}
	/* Started by a client: it holds the lock for us. By hand: take it. */
	if (ready_fd < 0 && flock(lockfd, LOCK_EX)) {
		fk_log("flock %s: %s", lock_path, strerror(errno));
		goto out;
	}
	if (fk_alive(&sa)) {
		fk_log("a daemon already serves %s", sock_path);
		goto out_unlock;
	}
	unlink(sock_path);			/* stale: its daemon died */
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	umask(077);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 128)) {
		fk_log("listen on %s: %s", sock_path, strerror(errno));
		goto out_unlock;
	}
	pidfd = open(pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	snprintf(pidtxt, sizeof(pidtxt), "%ld\n", (long)getpid());
	if (pidfd < 0 || write(pidfd, pidtxt, strlen(pidtxt)) != (ssize_t)strlen(pidtxt)) {
		fk_log("%s: %s", pid_path, strerror(errno));
		if (pidfd >= 0)
			close(pidfd);
		goto out_unlink;
	}
	close(pidfd);
	fk_log("listening on %s (protocol %u%s)", sock_path, FK_PROTO_VERSION,
	       keep ? ", staying when idle" : "");
	if (ready_fd >= 0) {
		if (write(ready_fd, "1", 1) != 1)
			fk_log("ready fd %d: %s", ready_fd, strerror(errno));
		close(ready_fd);
	} else {
		flock(lockfd, LOCK_UN);
	}

	if (fk__epoch_init())
		fk_log("route epoch: %s (clients keep no XRC route)", strerror(errno));
	rc = fk__serve(lfd, lockfd, !keep, sock_path, pid_path, &run_mask);
	fk_log_state();
	fk__release_all();
	if (fk_stop) {
		/* by signal: remove our socket unless a successor already replaced it */
		fk_log("signal: exiting");
		flock(lockfd, LOCK_EX);
		unlink(sock_path);
		unlink(pid_path);
		flock(lockfd, LOCK_UN);
	}
	close(lfd);
	close(lockfd);
	return rc;

out_unlink:
	unlink(sock_path);
out_unlock:
	if (lfd >= 0)
		close(lfd);
	if (ready_fd < 0)
		flock(lockfd, LOCK_UN);
out:
	if (lockfd >= 0)
		close(lockfd);
	if (ready_fd >= 0)
		close(ready_fd);
	return rc;
}
