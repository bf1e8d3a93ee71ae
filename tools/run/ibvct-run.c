/* SPDX-License-Identifier: MIT */
/*
 * ibvct-run: run a program on the reference target (ref-impl's
 * libibverbs.so.1 + the fake provider) under a fake-provider script,
 * without touching the program: it only sets up the environment (a fake
 * sysfs tree and the fake kernel's run dir, LD_LIBRARY_PATH, RDMAV_DRIVERS,
 * SYSFS_PATH, IBVCT_SCRIPT, IBVCT_RUNDIR) and runs it.
 *
 * By default the program runs on the user's shared fake host ("default", or
 * the one --host names): every ibvct-run of the same user and host sees the
 * same devices and reaches the others' QPs, as programs on one machine share
 * its HCA; a server and its client started from two shells talk to each
 * other. --private gives the program a world of its own (a scratch dir,
 * removed afterwards unless --keep or the program failed).
 *
 * Exit status: the program's, 128+N when killed by signal N, 2 for a usage
 * or script error, 126/127 when the program cannot be run.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fp_script.h"

static volatile sig_atomic_t fp_child;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibvct-run [--script FILE] [--host NAME | --private [--keep]] [--print-env]\n"
		"                 -- PROGRAM [ARG]...\n"
		"  --script FILE  fake-provider script (default: the built-in one)\n"
		"  --host NAME    the shared fake host to run on (default: 'default'); a host\n"
		"                 in use with another script is refused\n"
		"  --private      a fake host of its own, in a scratch dir\n"
		"  --keep         with --private: keep the scratch dir and say where it is\n"
		"  --print-env    print 'export VAR=...' lines instead of running\n"
		"  IBVCT_HOSTS_DIR where shared hosts live (default: $XDG_RUNTIME_DIR/ibvct,\n"
		"                 else /tmp/ibvct-<uid>)\n"
		"  IBVCT_LIBDIR   dir holding libibverbs.so.1 (default: <exe dir>/../lib,\n"
		"                 else the dir this ibvct-run was built for)\n"
		"  IBVCT_PROVIDER fake provider .so (default: <libdir>/ibvct/libibvct-fake.so)\n");
}

static bool has_lib(const char *dir)
{
	char lib[PATH_MAX + 32];

	snprintf(lib, sizeof(lib), "%s/libibverbs.so.1", dir);
	return access(lib, R_OK) == 0;
}

/*
 * The library dir: $IBVCT_LIBDIR if set; else <dir of this executable>/../lib
 * (the build tree's layout) if it holds libibverbs.so.1; else the dir
 * compiled in by the Makefile (-DIBVCT_LIBDIR).
 */
static int find_libdir(char *buf, size_t len)
{
	const char *env = getenv("IBVCT_LIBDIR");
	char exe[PATH_MAX], *slash, *real;
	ssize_t n;

	if (env && env[0]) {
		real = realpath(env, NULL);
		snprintf(buf, len, "%s", real ? real : env);
		free(real);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(buf, len, "%s/../lib", exe) < (int)len && has_lib(buf)) {
				real = realpath(buf, NULL);
				if (real) {
					snprintf(buf, len, "%s", real);
					free(real);
					return 0;
				}
			}
		}
	}
#ifdef IBVCT_LIBDIR
	snprintf(buf, len, "%s", IBVCT_LIBDIR);
	return 0;
#else
	return -1;
#endif
}

/* Single-quote for sh: ' becomes '\''. */
static void print_export(const char *name)
{
	const char *v = getenv(name), *p;

	if (!v) {
		printf("unset %s\n", name);
		return;
	}
	printf("export %s='", name);
	for (p = v; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	}
	puts("'");
}

static void forward(int sig)
{
	if (fp_child > 0)
		kill(fp_child, sig);
}

static int run(char **argv)
{
	struct sigaction sa = { .sa_handler = forward }, ign = { .sa_handler = SIG_IGN };
	struct sigaction old_int, old_quit;
	int status, err;
	pid_t pid;

	/* the terminal's ^C reaches the child directly; we wait and clean up */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ibvct-run: fork: %s\n", strerror(errno));
		return 126;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execvp(argv[0], argv);
		err = errno;
		fprintf(stderr, "ibvct-run: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	fp_child = pid;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "ibvct-run: waitpid: %s\n", strerror(errno));
			return 126;
		}
	}
	fp_child = 0;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "script", required_argument, NULL, 's' },
		{ "keep", no_argument, NULL, 'k' },
		{ "print-env", no_argument, NULL, 'p' },
		{ "private", no_argument, NULL, 'P' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *script = NULL, *provider, *old, *host = NULL;
	char libdir[PATH_MAX], prov[PATH_MAX + 32];
	char scratch[PATH_MAX], err[1024], *ldpath;
	bool keep = false, print_env = false, private = false;
	int c, status, users_fd = -1;

	/* '+': options end at the first non-option, the program's own follow */
	while ((c = getopt_long(argc, argv, "+s:kph", opts, NULL)) != -1) {
		switch (c) {
		case 's': script = optarg; break;
		case 'k': keep = true; break;
		case 'p': print_env = true; break;
		case 'P': private = true; break;
		case 'H': host = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (private && host) {
		fprintf(stderr, "ibvct-run: --private and --host exclude each other\n");
		return 2;
	}
	if (keep && !private) {
		fprintf(stderr, "ibvct-run: --keep goes with --private (a shared host is kept)\n");
		return 2;
	}
	if (optind >= argc && !print_env) {
		fprintf(stderr, "ibvct-run: no program given\n");
		usage(stderr);
		return 2;
	}
	if (find_libdir(libdir, sizeof(libdir))) {
		fprintf(stderr, "ibvct-run: cannot find the library dir (set IBVCT_LIBDIR)\n");
		return 2;
	}
	if (!has_lib(libdir)) {
		fprintf(stderr, "ibvct-run: no libibverbs.so.1 in %s (set IBVCT_LIBDIR)\n", libdir);
		return 2;
	}
	provider = getenv("IBVCT_PROVIDER");
	if (!provider || !provider[0]) {
		snprintf(prov, sizeof(prov), "%s/ibvct/libibvct-fake.so", libdir);
		provider = prov;
	}
	if (private ? fp_env_setup(script, provider, NULL, scratch, sizeof(scratch), err,
				   sizeof(err))
		    : fp_env_setup_shared(host ? host : "default", script, provider, &users_fd,
					  scratch, sizeof(scratch), err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	old = getenv("LD_LIBRARY_PATH");
	if (asprintf(&ldpath, "%s%s%s", libdir, old && old[0] ? ":" : "",
		     old && old[0] ? old : "") < 0 ||
	    setenv("LD_LIBRARY_PATH", ldpath, 1)) {
		fprintf(stderr, "ibvct-run: out of memory\n");
		if (private)
			fp_rmtree(scratch);
		return 2;
	}
	free(ldpath);

	if (print_env) {
		/* the variables point into the scratch dir: it must outlive us */
		if (private)
			printf("# ibvct-run: scratch dir %s (remove it when done)\n", scratch);
		else
			printf("# ibvct-run: shared fake host %s\n", scratch);
		print_export("LD_LIBRARY_PATH");
		print_export("RDMAV_DRIVERS");
		print_export("SYSFS_PATH");
		print_export("IBVCT_SCRIPT");
		print_export("IBVCT_RUNDIR");
		if (getenv("IBVCT_RDMA_CORE"))	/* the script's release, or the caller's */
			print_export("IBVCT_RDMA_CORE");
		return 0;
	}
	fflush(NULL);
	status = run(argv + optind);
	if (!private) {
		close(users_fd);	/* the host stays, for the next program */
	} else if (keep || status) {
		fprintf(stderr, "ibvct-run: kept scratch dir %s\n", scratch);
	} else if (fp_rmtree(scratch)) {
		fprintf(stderr, "ibvct-run: cannot remove %s\n", scratch);
	}
	return status;
}
