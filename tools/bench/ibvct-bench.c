/* SPDX-License-Identifier: MIT */
/*
 * ibvct-bench (`make bench`): in one run, the physical limit of this
 * machine (bench_raw.c), then the fake HCA through libibverbs
 * (bench_verbs.c), and a report of each fake-HCA figure with its ratio to
 * its raw baseline and its goal (issue 11), as a table on stdout and as
 * TSV for regression tracking. A measurement, not a test: a missed goal is
 * reported, never an exit status; the status is 1 only when a figure could
 * not be measured (each such row says why), 2 on a usage error.
 *
 * This process only runs sessions and reports: every measurement runs in
 * a forked session process (with its own forked peer), so that each
 * session gets the libibverbs environment it needs (extended or legacy
 * provider mode) from its first verb on, and a session that cannot
 * measure (a script without XRC, a verb that fails) takes only its own
 * figures with it.
 *
 * The cross-process sessions (raw, RC, XRC) and the two loopback modes run
 * in rounds, taking turns, each round with its share of every figure's
 * budget; each figure keeps its best round, so that a moment of the
 * machine'"'"'s other work (on a shared virtual machine, a neighbour'"'"'s) weighs
 * on the baselines and the fake HCA alike, and on neither for long.
 *
 * usage: ibvct-bench [--iters N] [--seconds S] [--rounds R] [--script FILE] [--out DIR]
 *   IBVCT_PROVIDER overrides the plugin (default: ../lib/ibvct/ beside this
 *   binary); IBVCT_TIMEOUT_MULT stretches the time limits of the processes.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "fp_script.h"

#define NONE NAN

/* One row of the report: a figure, its baseline and its goal. */
struct row {
	const char *key;
	const char *unit;
	int decimals;
	enum bench_session session;	/* who measures it (BS_NONE: this process) */
	int base;			/* the baseline figure, -1: none */
	double min, max;		/* goal on the value (NONE: no bound) */
	double rmin, rmax;		/* goal on value / baseline */
	const char *goal;
	const char *what;
};

static const struct row rows[BF_COUNT] = {
	[BF_RAW_RTT_P50] = { "raw_rtt_p50", "us", 3, BS_RAW, -1, NONE, NONE, NONE, NONE, "-",
			     "raw: shared-memory ring ping-pong round trip, p50" },
	[BF_RAW_RTT_P99] = { "raw_rtt_p99", "us", 3, BS_RAW, -1, NONE, NONE, NONE, NONE, "-",
			     "raw: shared-memory ring ping-pong round trip, p99" },
	[BF_RAW_OWL_P50] = { "raw_oneway_p50", "us", 3, BS_RAW, -1, NONE, NONE, NONE, NONE, "-",
			     "raw: write-then-spin on shared memory (each side stores the "
			     "other's word, spins on its own), one-way (round trip / 2), p50" },
	[BF_RAW_OWL_P99] = { "raw_oneway_p99", "us", 3, BS_RAW, -1, NONE, NONE, NONE, NONE, "-",
			     "raw: write-then-spin on shared memory, one-way, p99" },
	[BF_RAW_STREAM] = { "raw_stream_rate", "msg/s", 0, BS_RAW, -1, NONE, NONE, NONE, NONE,
			    "-", "raw: shared-memory ring one-way stream" },
	[BF_RAW_MEMCPY] = { "raw_memcpy_bw", "MB/s", 0, BS_RAW, -1, NONE, NONE, NONE, NONE, "-",
			    "raw: memcpy of 64 KiB blocks" },
	[BF_RC_RATE] = { "rc_send_rate", "msg/s", 0, BS_RC, BF_RAW_STREAM, 1e6, NONE, 0.1, NONE,
			 ">= 1000000 msg/s, >= 0.1 x raw_stream_rate",
			 "RC SEND one-way, two processes" },
	[BF_WRITE_RATE] = { "rdma_write_rate", "msg/s", 0, BS_RC, BF_RAW_STREAM, 1e6, NONE, 0.1,
			    NONE, ">= 1000000 msg/s, >= 0.1 x raw_stream_rate",
			    "RDMA WRITE one-way to a passive target" },
	[BF_XRC_RATE] = { "xrc_send_rate", "msg/s", 0, BS_XRC, BF_RC_RATE, NONE, NONE, 0.8, NONE,
			  ">= 0.8 x rc_send_rate",
			  "XRC SEND one-way: XRC_SEND -> XRC_RECV -> XRC SRQ" },
	[BF_RC_RTT_P50] = { "rc_rtt_p50", "us", 3, BS_RC, BF_RAW_RTT_P50, NONE, NONE, NONE, 3,
			    "<= 3 x raw_rtt_p50", "RC SEND round trip, p50" },
	[BF_RC_RTT_P99] = { "rc_rtt_p99", "us", 3, BS_RC, BF_RAW_RTT_P99, NONE, NONE, NONE, NONE,
			    "-", "RC SEND round trip, p99" },
	[BF_XRC_RTT_P50] = { "xrc_rtt_p50", "us", 3, BS_XRC, BF_RC_RTT_P50, NONE, NONE, NONE,
			     1.25, "<= 1.25 x rc_rtt_p50", "XRC SEND round trip, p50" },
	[BF_XRC_RTT_P99] = { "xrc_rtt_p99", "us", 3, BS_XRC, BF_RC_RTT_P99, NONE, NONE, NONE,
			     NONE, "-", "XRC SEND round trip, p99" },
	[BF_WRITE_LAT_P50] = { "rdma_write_lat_p50", "us", 3, BS_RC, BF_RAW_RTT_P50, NONE, 5,
			       NONE, NONE, "<= 5 us",
			       "RDMA WRITE post to completion, passive target, p50" },
	[BF_WRITE_LAT_P99] = { "rdma_write_lat_p99", "us", 3, BS_RC, BF_RAW_RTT_P99, NONE, NONE,
			       NONE, NONE, "-", "RDMA WRITE, passive target, p99" },
	[BF_READ_LAT_P50] = { "rdma_read_lat_p50", "us", 3, BS_RC, BF_RAW_RTT_P50, NONE, 5, NONE,
			      NONE, "<= 5 us", "RDMA READ, passive target, p50" },
	[BF_READ_LAT_P99] = { "rdma_read_lat_p99", "us", 3, BS_RC, BF_RAW_RTT_P99, NONE, NONE,
			      NONE, NONE, "-", "RDMA READ, passive target, p99" },
	[BF_ATOMIC_LAT_P50] = { "atomic_fadd_lat_p50", "us", 3, BS_RC, BF_RAW_RTT_P50, NONE, 5,
				NONE, NONE, "<= 5 us", "fetch-and-add, passive target, p50" },
	[BF_ATOMIC_LAT_P99] = { "atomic_fadd_lat_p99", "us", 3, BS_RC, BF_RAW_RTT_P99, NONE,
				NONE, NONE, NONE, "-", "fetch-and-add, passive target, p99" },
	[BF_SPIN_P50] = { "write_spin_oneway_p50", "us", 3, BS_ONE, BF_RAW_OWL_P50, NONE, NONE,
			  NONE, 2, "<= 2 x raw_oneway_p50",
			  "write-then-spin: each side WRITEs a sequence number to the other and "
			  "spins on its own buffer, no verb while it waits; one-way, p50" },
	[BF_SPIN_P99] = { "write_spin_oneway_p99", "us", 3, BS_ONE, BF_RAW_OWL_P99, NONE, NONE,
			  NONE, NONE, "-", "write-then-spin, one-way, p99" },
	[BF_WBLK_RATE] = { "write_blocked_rate", "msg/s", 0, BS_ONE, BF_RC_RATE, NONE, NONE, 1,
			   NONE, ">= 1 x rc_send_rate",
			   "RDMA WRITE one-way to a target blocked in read() on a socket" },
	[BF_RBLK_P50] = { "read_blocked_p50", "us", 3, BS_ONE, BF_RAW_RTT_P50, NONE, NONE, NONE,
			  3, "<= 3 x raw_rtt_p50", "RDMA READ, target blocked in read(), p50" },
	[BF_RBLK_P99] = { "read_blocked_p99", "us", 3, BS_ONE, BF_RAW_RTT_P99, NONE, NONE, NONE,
			  NONE, "-", "RDMA READ, target blocked in read(), p99" },
	[BF_ABLK_P50] = { "fadd_blocked_p50", "us", 3, BS_ONE, BF_RAW_RTT_P50, NONE, NONE, NONE,
			  3, "<= 3 x raw_rtt_p50", "fetch-and-add, target blocked in read(), p50" },
	[BF_ABLK_P99] = { "fadd_blocked_p99", "us", 3, BS_ONE, BF_RAW_RTT_P99, NONE, NONE, NONE,
			  NONE, "-", "fetch-and-add, target blocked in read(), p99" },
	[BF_MIX_RATE] = { "mixed_rate", "msg/s", 0, BS_ONE, BF_RC_RATE, NONE, NONE, NONE, NONE,
			  "-", "mixed: 255 64-byte WRITEs then a SEND, over and over, to a target "
			  "asleep in ibv_get_cq_event (each SEND wakes it)" },
	[BF_MIX_LAT_P50] = { "mixed_send_lat_p50", "us", 3, BS_ONE, BF_RAW_OWL_P50, NONE, NONE,
			     NONE, NONE, "-",
			     "mixed: a SEND's post to the target's poll of it, woken, p50" },
	[BF_MIX_LAT_P99] = { "mixed_send_lat_p99", "us", 3, BS_ONE, BF_RAW_OWL_P99, NONE, NONE,
			     NONE, NONE, "-", "mixed: the same, p99" },
	[BF_LOOP_RATE] = { "loopback_rate", "msg/s", 0, BS_LOOP_EXT, BF_RAW_STREAM, 10e6, NONE,
			   NONE, NONE, ">= 10000000 msg/s",
			   "RC SEND between two QPs of one process (best round)" },
	[BF_LEGACY_RATE] = { "legacy_loopback_rate", "msg/s", 0, BS_LOOP_LEGACY, BF_LOOP_RATE,
			     NONE, NONE, 1 / 1.05, NONE,
			     ">= 0.952 x loopback_rate (time <= 1.05 x)",
			     "the same, legacy provider mode: the compat layer (best round)" },
	[BF_BW_64K] = { "rc_send_64k_bw", "MB/s", 0, BS_RC, BF_RAW_MEMCPY, NONE, NONE, 0.5, NONE,
			">= 0.5 x raw_memcpy_bw", "RC SEND of 64 KiB messages, two processes" },
	[BF_NPROC] = { "nproc", "cpus", 0, BS_NONE, -1, NONE, NONE, NONE, NONE, "-",
		       "machine: online CPUs" },
	[BF_LOAD_BEFORE] = { "loadavg_before", "load", 2, BS_NONE, -1, NONE, NONE, NONE, NONE,
			     "-", "machine: 1-minute load average before the run" },
	[BF_LOAD_AFTER] = { "loadavg_after", "load", 2, BS_NONE, -1, NONE, NONE, NONE, NONE, "-",
			    "machine: 1-minute load average after the run" },
	[BF_CPU] = { "bench_cpu", "s", 3, BS_NONE, BF_WALL, NONE, NONE, NONE, NONE, "-",
		     "CPU time of the bench's processes (not the fake kernel daemon); "
		     "ratio: CPUs kept busy" },
	[BF_WALL] = { "bench_wall", "s", 3, BS_NONE, -1, NONE, NONE, NONE, NONE, "-",
		      "wall-clock time of the run" },
};

static const char *const session_name[BS_COUNT] = {
	[BS_RAW] = "raw shared-memory ring and memcpy",
	[BS_RC] = "fake HCA, RC between two processes",
	[BS_ONE] = "fake HCA, one-sided to a target that waits (blocked, spinning, asleep)",
	[BS_XRC] = "fake HCA, XRC between two processes",
	[BS_LOOP_EXT] = "fake HCA, loopback (extended provider mode)",
	[BS_LOOP_LEGACY] = "fake HCA, loopback (legacy provider mode)",
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ibvct-bench [--iters N] [--seconds S] [--rounds R] [--script FILE]\n"
		"                   [--out DIR]\n"
		"  --iters N      samples per latency figure, 10 N messages per rate figure\n"
		"                 (default %ld)\n"
		"  --seconds S    and at most S seconds per figure (default %g), each after a\n"
		"                 warm-up of a tenth of both\n"
		"  --rounds R     the sessions take R turns (default %u), each with a share of\n"
		"                 those budgets; each figure keeps its best round\n"		"  --script FILE  the fake provider's script (default: the built-in one); its\n"
		"                 mode line is replaced by extended, and by legacy for the\n"
		"                 compat-layer figure\n"
		"  --out DIR      also write the rows to DIR/<UTC time>.tsv and DIR/latest.tsv\n",
		bench_iters, bench_seconds, bench_rounds);
}

static void set_err(enum bench_session s, const char *msg)
{
	if (!bench_res->err[s][0])
		snprintf(bench_res->err[s], sizeof(bench_res->err[s]), "%s", msg);
}

/* The session's process ended: a status other than 0 without a reason
 * becomes the reason. */
static void session_reaped(enum bench_session s, int st)
{
	char why[160], msg[200];

	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	bench_describe(st, why, sizeof(why));
	snprintf(msg, sizeof(msg), "the session process %s%s", why,
		 WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? ": it ran out of time" : "");
	set_err(s, msg);
}

static void run_session(enum bench_session s, void (*fn)(void))
{
	pid_t pid;
	int st;

	printf("measuring: %s\n", session_name[s]);
	pid = fork();
	if (pid < 0) {
		set_err(s, strerror(errno));
		return;
	}
	if (pid == 0) {
		bench_session_id = s;
		bench_forked();
		fn();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		st = 0x100;
	session_reaped(s, st);
}

/* ---- loopback: the two provider modes take turns --------------------------------- */
struct looper {
	enum bench_session s;
	pid_t pid;
	int to, from;
	double best;
	long count;
};

/* A looper that never started (its reason is on the page). */
static void loop_none(struct looper *l, enum bench_session s)
{
	memset(l, 0, sizeof(*l));
	l->s = s;
	l->pid = -1;
	l->to = l->from = -1;
}

/* Start a looper; other (or NULL) is one started before, whose pipe ends the
 * new process must not hold: its end of file would never come. */
static void loop_start(struct looper *l, enum bench_session s, const struct looper *other)
{
	int down[2], up[2];

	loop_none(l, s);
	if (pipe(down) || pipe(up)) {
		set_err(s, strerror(errno));
		return;
	}
	l->pid = fork();
	if (l->pid == 0) {
		bench_session_id = s;
		bench_forked();
		if (other && other->to >= 0)
			close(other->to);
		if (other && other->from >= 0)
			close(other->from);
		close(down[1]);
		close(up[0]);
		bench_loop_session(down[0], up[1]);
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	if (l->pid < 0) {
		set_err(s, strerror(errno));
		close(down[1]);
		close(up[0]);
		return;
	}
	l->to = down[1];
	l->from = up[0];
}

static void loop_round(struct looper *l, struct bench_budget b)
{
	double v;
	long n;

	if (l->to < 0)
		return;
	if (write(l->to, &b, sizeof(b)) != (ssize_t)sizeof(b) ||
	    read(l->from, &v, sizeof(v)) != (ssize_t)sizeof(v) ||
	    read(l->from, &n, sizeof(n)) != (ssize_t)sizeof(n)) {
		close(l->to);
		l->to = -1;		/* it ended: its reason is on the page */
		return;
	}
	if (v > l->best) {
		l->best = v;
		l->count = n;
	}
}

static void loop_end(struct looper *l, enum bench_fig f)
{
	int st;

	if (l->to >= 0)
		close(l->to);
	if (l->from >= 0)
		close(l->from);
	if (l->pid > 0) {
		if (waitpid(l->pid, &st, 0) != l->pid)
			st = 0x100;
		session_reaped(l->s, st);
	}
	if (l->best > 0 && !bench_res->err[l->s][0])
		bench_put(f, l->best, l->count);
}

/* ---- scripts and environment -------------------------------------------------------- */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		text = calloc(1, (size_t)len + 1);
		if (text && fread(text, 1, (size_t)len, f) != (size_t)len) {
			free(text);
			text = NULL;
		}
	}
	fclose(f);
	return text;
}

/* The script with its mode lines made comments (line numbers stay) and
 * `mode MODE` at the end. */
static int write_mode_script(const char *path, const char *text, const char *mode)
{
	FILE *f = fopen(path, "w");
	const char *p = text, *w;
	int ret;

	if (!f)
		return -1;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);

		for (w = p; *w == ' ' || *w == '\t'; w++)
			;
		if (!strncmp(w, "mode", 4) && (w[4] == ' ' || w[4] == '\t' || w[4] == '\n' ||
					       w[4] == '#' || !w[4]))
			fputs("# (set below by ibvct-bench) ", f);
		fwrite(p, 1, len, f);
		if (!nl)
			fputc('\n', f);
		p += len;
	}
	fprintf(f, "mode %s\n", mode);
	ret = ferror(f) ? -1 : 0;
	return fclose(f) || ret ? -1 : 0;
}

/* The script's text: the caller's file (parsed first, so that a bad one is
 * refused with its own file:line), else the built-in default. NULL: err says why. */
static char *script_text(const char *script, char *err, size_t errlen)
{
	struct fp_script *s;
	char *text;

	if (!script) {
		text = strdup(fp_script_default_text);
		if (!text)
			snprintf(err, errlen, "out of memory");
		return text;
	}
	s = calloc(1, sizeof(*s));
	err[0] = '\0';
	if (!s || fp_script_load(script, s, err, errlen)) {
		if (!err[0])
			snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	free(s);
	text = read_file(script);
	if (!text)
		snprintf(err, errlen, "%s: %s", script, strerror(errno));
	return text;
}

/* Point this process (and so the sessions it forks next) at a fresh fake
 * host in dir for the script in provider mode MODE; false: err says why. */
static bool mode_env(const char *dir, const char *text, const char *mode,
		     const char *provider, char *err, size_t errlen)
{
	char path[PATH_MAX], scratch[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.fps", dir, mode);
	if (write_mode_script(path, text, mode)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	return fp_env_setup(path, provider, dir, scratch, sizeof(scratch), err, errlen) == 0;
}

/* A fake kernel daemon (pid file in a run dir of ours) still exiting. */
static bool daemon_running(const char *pidfile)
{
	char buf[512], *p;
	FILE *f = fopen(pidfile, "r");
	long pid = 0;

	if (!f)
		return false;		/* gone: it removes its pid file */
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH))
		return false;
	snprintf(buf, sizeof(buf), "/proc/%ld/stat", pid);
	f = fopen(buf, "r");
	if (!f)
		return false;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return !(p && p[1] == ' ' && p[2] == 'Z');
}

/*
 * The daemons of the fake hosts in dir exit once their last connection has
 * closed, removing their files: wait for that (a few seconds at most), so
 * that the bench leaves no process behind and removes its scratch whole.
 */
static void remove_scratch(const char *dir)
{
	long long give_up = fp_now_ns() + 5000000000LL * fp_timeout_mult();
	char pidfile[PATH_MAX + 300];
	struct dirent *d;
	bool waiting;
	DIR *dp;
	int tries;

	do {
		waiting = false;
		dp = opendir(dir);
		while (dp && (d = readdir(dp)))
			if (!strncmp(d->d_name, "ibvct.", 6)) {
				snprintf(pidfile, sizeof(pidfile), "%s/%s/run/fkd.pid", dir,
					 d->d_name);
				waiting |= daemon_running(pidfile);
			}
		if (dp)
			closedir(dp);
		if (waiting)
			usleep(20000);
	} while (waiting && fp_now_ns() < give_up);
	for (tries = 0; fp_rmtree(dir) && tries < 3; tries++)
		usleep(50000);	/* a file went while we walked: walk again */
	if (access(dir, F_OK) == 0)
		fprintf(stderr, "ibvct-bench: could not remove %s\n", dir);
}

/* ---- the machine ------------------------------------------------------------------------ */
static double loadavg(char *text, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l1 = NONE;

	snprintf(text, len, "unknown");
	if (!f)
		return l1;
	if (fgets(text, (int)len, f)) {
		text[strcspn(text, "\n")] = '\0';
		l1 = strtod(text, NULL);
	}
	fclose(f);
	return l1;
}

static double cpu_seconds(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			kids.ru_stime.tv_sec) +
	       (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			kids.ru_stime.tv_usec) / 1e6;
}

/* ---- the report ---------------------------------------------------------------------------- */
struct cell {
	char value[32], ratio[32];
	const char *verdict;
	char note[300];
};

static bool have(int f)
{
	return f >= 0 && bench_res->fig[f].set;
}

static void judge(int f, struct cell *c)
{
	const struct row *r = &rows[f];
	const struct bench_val *v = &bench_res->fig[f];
	bool goal = !isnan(r->min) || !isnan(r->max) || !isnan(r->rmin) || !isnan(r->rmax);
	bool ratio_goal = !isnan(r->rmin) || !isnan(r->rmax), ok = true;
	double q = NONE;

	memset(c, 0, sizeof(*c));
	snprintf(c->value, sizeof(c->value), "error");
	snprintf(c->ratio, sizeof(c->ratio), "-");
	c->verdict = "error";
	if (!v->set) {
		const char *why = r->session != BS_NONE ? bench_res->err[r->session] : "";

		snprintf(c->note, sizeof(c->note), "not measured: %s",
			 why[0] ? why : "its session gave no reason");
		return;
	}
	snprintf(c->value, sizeof(c->value), "%.*f", r->decimals, v->value);
	if (have(r->base) && bench_res->fig[r->base].value > 0) {
		q = v->value / bench_res->fig[r->base].value;
		snprintf(c->ratio, sizeof(c->ratio), "%.3f", q);
	}
	if (ratio_goal && isnan(q)) {
		snprintf(c->note, sizeof(c->note), "no ratio: its baseline %s was not measured",
			 rows[r->base].key);
		return;
	}
	if (!isnan(r->min) && !(v->value >= r->min))
		ok = false;
	if (!isnan(r->max) && !(v->value <= r->max))
		ok = false;
	if (!isnan(r->rmin) && !(q >= r->rmin))
		ok = false;
	if (!isnan(r->rmax) && !(q <= r->rmax))
		ok = false;
	c->verdict = !goal ? "-" : ok ? "met" : "missed";
}

static void print_table(FILE *f, const struct cell *c)
{
	int i;

	fprintf(f, "%-21s %12s %-5s %8s %-18s %-42s %-7s %9s  %s\n", "figure", "value", "unit",
		"ratio", "baseline", "goal", "verdict", "n", "what");
	for (i = 0; i < BF_COUNT; i++) {
		char n[24];

		snprintf(n, sizeof(n), "%ld", bench_res->fig[i].samples);
		fprintf(f, "%-21s %12s %-5s %8s %-18s %-42s %-7s %9s  %s\n", rows[i].key,
			c[i].value, rows[i].unit, c[i].ratio,
			rows[i].base >= 0 ? rows[rows[i].base].key : "-", rows[i].goal,
			c[i].verdict, bench_res->fig[i].set ? n : "-", rows[i].what);
	}
}

static void print_tsv(FILE *f, const struct cell *c)
{
	int i;

	fprintf(f, "figure\tvalue\tunit\tratio\tbaseline\tgoal\tverdict\tsamples\twhat\tnote\n");
	for (i = 0; i < BF_COUNT; i++)
		fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ld\t%s\t%s\n", rows[i].key, c[i].value,
			rows[i].unit, c[i].ratio, rows[i].base >= 0 ? rows[rows[i].base].key : "-",
			rows[i].goal, c[i].verdict, bench_res->fig[i].samples, rows[i].what,
			c[i].note[0] ? c[i].note : "-");
}

static int mkdir_p(const char *dir)
{
	char p[PATH_MAX];
	size_t i;

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return ENAMETOOLONG;
	for (i = 1; p[i]; i++)
		if (p[i] == '/') {
			p[i] = '\0';
			if (mkdir(p, 0777) && errno != EEXIST)
				return errno;
			p[i] = '/';
		}
	if (mkdir(p, 0777) && errno != EEXIST)
		return errno;
	return 0;
}

/* DIR/<UTC time>.tsv and DIR/latest.tsv; false (and why on stderr) if not. */
static bool write_tsv(const char *dir, const struct cell *c)
{
	char stamp[32], path[PATH_MAX + 64];
	const char *names[2] = { stamp, "latest" };
	time_t now = time(NULL);
	struct tm tm;
	int i, err = mkdir_p(dir);

	if (err) {
		fprintf(stderr, "ibvct-bench: mkdir %s: %s\n", dir, strerror(err));
		return false;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (i = 0; i < 2; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.tsv", dir, names[i]);
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "ibvct-bench: %s: %s\n", path, strerror(errno));
			return false;
		}
		print_tsv(f, c);
		if (fclose(f)) {
			fprintf(stderr, "ibvct-bench: %s: %s\n", path, strerror(errno));
			return false;
		}
		if (i == 0)
			printf("rows written to %s", path);
	}
	printf(" and %s\n", path);
	return true;
}

/* ---- main ---------------------------------------------------------------------------------- */
static bool arg_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;

	if (!s) {
		fprintf(stderr, "ibvct-bench: %s needs a value\n", opt);
		return false;
	}
	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= lo && *out <= hi)) {
		fprintf(stderr, "ibvct-bench: %s %s: give a number from %g to %g\n", opt, s, lo, hi);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *script = NULL, *out = NULL, *provider = getenv("IBVCT_PROVIDER");
	char prov[PATH_MAX + 64], self[PATH_MAX], dir[PATH_MAX];
	char err[2 * PATH_MAX], load0[128], load1[128], *text = NULL;
	static struct cell cells[BF_COUNT];
	struct looper ext, leg;
	struct bench_budget rb;
	double l0, l1, v;
	long long t0;
	int i, ret = 2, errors = 0, met = 0, missed = 0;
	unsigned r;
	bool ok;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && arg_num(argv[i], argv[i + 1], 1, 1e7, &v)) {
			bench_iters = (long)v;
			i++;
		} else if (!strcmp(argv[i], "--seconds") &&
			   arg_num(argv[i], argv[i + 1], 0.001, 3600, &v)) {
			bench_seconds = v;
			i++;
		} else if (!strcmp(argv[i], "--rounds") && arg_num(argv[i], argv[i + 1], 1, 100, &v)) {
			bench_rounds = (unsigned)v;
			i++;
		} else if (!strcmp(argv[i], "--script") && argv[i + 1]) {
			script = argv[++i];
		} else if (!strcmp(argv[i], "--out") && argv[i + 1]) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			if (strcmp(argv[i], "--iters") && strcmp(argv[i], "--seconds") &&
			    strcmp(argv[i], "--rounds"))
				fprintf(stderr, "ibvct-bench: %s: %s\n", argv[i],
					argv[i][0] == '-' && argv[i + 1] ? "unknown option"
									 : "unknown or without its value");
			usage(stderr);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);	/* a session that ended: its pipe says so */
	bench_alarm = (unsigned)((60 + 15 * bench_seconds) * (double)fp_timeout_mult());
	bench_res = mmap(NULL, sizeof(*bench_res), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (bench_res == MAP_FAILED) {
		perror("ibvct-bench: mmap");
		return 2;
	}
	if (!provider) {
		ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[k > 0 ? k : 0] = '\0';
		if (strrchr(self, '/'))
			*strrchr(self, '/') = '\0';
		snprintf(prov, sizeof(prov), "%s/../lib/ibvct/libibvct-fake.so", self);
		provider = prov;
	}
	snprintf(dir, sizeof(dir), "%s/ibvct-bench.XXXXXX",
		 getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "ibvct-bench: cannot make a scratch dir %s: %s\n", dir,
			strerror(errno));
		goto out_unmap;
	}

	t0 = fp_now_ns();
	l0 = loadavg(load0, sizeof(load0));
	printf("ibvct-bench: the machine's limit (raw), then the fake HCA through libibverbs;\n"
	       "64-byte messages unless said; each figure at most %ld samples (latency) or %ld\n"
	       "messages (rate) and %g s, after a warm-up of a tenth of both, in %u rounds\n"
	       "taking turns (each figure: its best round)\n",
	       bench_iters, bench_iters * 10, bench_seconds, bench_rounds);
	printf("machine: %ld CPUs online, loadavg %s\n", sysconf(_SC_NPROCESSORS_ONLN), load0);

	text = script_text(script, err, sizeof(err));
	ok = text && mode_env(dir, text, "extended", provider, err, sizeof(err));
	if (!ok)
		for (i = BS_RC; i <= BS_LOOP_EXT; i++)
			set_err((enum bench_session)i, err);
	for (r = 0; r < bench_rounds; r++) {
		printf("round %u of %u\n", r + 1, bench_rounds);
		run_session(BS_RAW, bench_raw_session);
		if (ok) {
			run_session(BS_RC, bench_rc_session);
			run_session(BS_ONE, bench_one_session);
			run_session(BS_XRC, bench_xrc_session);
		}
	}
	if (!ok) {
		loop_none(&ext, BS_LOOP_EXT);
	} else {
		printf("measuring: %s and legacy mode, %u rounds each, in turns\n",
		       session_name[BS_LOOP_EXT], bench_rounds);
		loop_start(&ext, BS_LOOP_EXT, NULL);
	}
	/* set up after the extended looper started: it keeps its environment */
	if (!text || !mode_env(dir, text, "legacy", provider, err, sizeof(err))) {
		set_err(BS_LOOP_LEGACY, err);
		loop_none(&leg, BS_LOOP_LEGACY);
	} else {
		loop_start(&leg, BS_LOOP_LEGACY, &ext);
	}
	rb = bench_rate_budget();	/* a round'"'"'s share */
	for (r = 0; r < bench_rounds; r++) {
		loop_round(&ext, rb);
		loop_round(&leg, rb);
	}
	loop_end(&ext, BF_LOOP_RATE);
	loop_end(&leg, BF_LEGACY_RATE);

	l1 = loadavg(load1, sizeof(load1));
	bench_put(BF_NPROC, (double)sysconf(_SC_NPROCESSORS_ONLN), 1);
	bench_put(BF_LOAD_BEFORE, l0, 1);
	bench_put(BF_LOAD_AFTER, l1, 1);
	bench_put(BF_WALL, (double)(fp_now_ns() - t0) / 1e9, 1);
	bench_put(BF_CPU, cpu_seconds(), 1);

	printf("\n");
	for (i = 0; i < BF_COUNT; i++) {
		judge(i, &cells[i]);
		if (!strcmp(cells[i].verdict, "error"))
			errors++;
		else if (!strcmp(cells[i].verdict, "met"))
			met++;
		else if (!strcmp(cells[i].verdict, "missed"))
			missed++;
	}
	print_table(stdout, cells);
	printf("\nmachine: loadavg before %s, after %s; the bench's processes used %.1f s of CPU "
	       "in %.1f s (%.2f CPUs; the fake kernel daemon not counted)\n", load0, load1,
	       bench_res->fig[BF_CPU].value, bench_res->fig[BF_WALL].value,
	       bench_res->fig[BF_CPU].value / bench_res->fig[BF_WALL].value);
	printf("goals: %d met, %d missed (a measurement: a missed goal is no failure)\n", met,
	       missed);
	ret = 0;
	if (out && !write_tsv(out, cells))
		ret = 1;
	for (i = 0; i < BF_COUNT; i++)
		if (!strcmp(cells[i].verdict, "error"))
			fprintf(stderr, "ibvct-bench: %s: %s\n", rows[i].key, cells[i].note);
	if (errors) {
		fprintf(stderr, "ibvct-bench: %d of %d figures could not be measured\n", errors,
			BF_COUNT);
		ret = 1;
	}
	remove_scratch(dir);
out_unmap:
	free(text);
	munmap(bench_res, sizeof(*bench_res));
	return ret;
}
