/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel tests' fixture and helpers (fk_test.h): the scratch and
 * run dirs, the daemon's log, dumps and object counts, forked helpers and
 * agents, raw protocol access.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fp_fdpass.h"
#include "fp_script.h"		/* fp_rmtree */
#include "../fk_test.h"

struct fkt_xsrq {
	struct fk_client *c;
	uint32_t srq, pd, cq;
};
static struct fkt_xsrq fkt_xsrqs[256];

int fkt_xsrq_create(struct fk_client *c, uint32_t xrcd, uint32_t *handle)
{
	struct fkt_xsrq *e = NULL;
	uint32_t srqn;
	size_t i;
	int err;

	for (i = 0; i < sizeof(fkt_xsrqs) / sizeof(fkt_xsrqs[0]) && !e; i++)
		if (!fkt_xsrqs[i].c)
			e = &fkt_xsrqs[i];
	if (!e)
		return ENOSPC;
	err = fk_obj_create(c, FK_O_PD, 0, NULL, &e->pd);
	if (err)
		return err;
	err = fk_obj_create(c, FK_O_CQ, 0, NULL, &e->cq);
	if (err)
		goto err_pd;
	err = fk_srq_create_xrc(c, e->pd, e->cq, xrcd, &e->srq, &srqn);
	if (err)
		goto err_cq;
	e->c = c;
	*handle = e->srq;
	return 0;

err_cq:
	fk_obj_destroy(c, FK_O_CQ, e->cq);
err_pd:
	fk_obj_destroy(c, FK_O_PD, e->pd);
	return err;
}

/* Destroy the SRQ, then its PD and CQ; a handle of none of ours as is. */
int fkt_xsrq_destroy(struct fk_client *c, uint32_t handle)
{
	int err = fk_srq_destroy(c, handle);
	size_t i;

	for (i = 0; i < sizeof(fkt_xsrqs) / sizeof(fkt_xsrqs[0]); i++) {
		struct fkt_xsrq *e = &fkt_xsrqs[i];

		if (e->c != c || e->srq != handle || err)
			continue;
		fk_obj_destroy(c, FK_O_CQ, e->cq);
		fk_obj_destroy(c, FK_O_PD, e->pd);
		e->c = NULL;
	}
	return err;
}

/* A connection's end takes its SRQs' PDs and CQs with it. */
void fkt_xsrq_forget(struct fk_client *c)
{
	size_t i;

	for (i = 0; i < sizeof(fkt_xsrqs) / sizeof(fkt_xsrqs[0]); i++)
		if (fkt_xsrqs[i].c == c)
			fkt_xsrqs[i].c = NULL;
}

char fkt_scratch[PATH_MAX / 2];
char fkt_rundir[PATH_MAX];
static int fkt_keep;
static int fkt_scratch_done;	/* kept or removed by fkt_finish */

void fkt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (tr_num())
		tr_vfail(fmt, ap);	/* in a test: it fails */
	fputs("Bail out! ", stdout);
	vprintf(fmt, ap);
	fputs("\n", stdout);
	va_end(ap);
	fflush(stdout);
	exit(1);
}

void fkt_setup(const char *name)
{
	const char *tmp = getenv("TMPDIR"), *build = getenv("IBVCT_BUILD");
	char path[PATH_MAX];

	fkt_keep = getenv("IBVCT_KEEP") && !strcmp(getenv("IBVCT_KEEP"), "1");
	/* a short path: the run dirs inside hold the daemons\x27 sockets */
	snprintf(fkt_scratch, sizeof(fkt_scratch), "%s/%s.XXXXXX", tmp && tmp[0] ? tmp : "/tmp",
		 name);
	if (!mkdtemp(fkt_scratch))
		fkt_die("mkdtemp: %s", strerror(errno));
	if (!getenv("IBVCT_FKD")) {
		if (build)
			snprintf(path, sizeof(path), "%s/bin/ibvct-fkd", build);
		else
			snprintf(path, sizeof(path), "build/bin/ibvct-fkd");
		setenv("IBVCT_FKD", path, 1);
	}
	if (getenv("IBVCT_VALGRIND") && !strcmp(getenv("IBVCT_VALGRIND"), "1") &&
	    !getenv("IBVCT_FKD_WRAPPER"))
		setenv("IBVCT_FKD_WRAPPER", "valgrind -q --error-exitcode=99 --leak-check=full "
		       "--errors-for-leak-kinds=definite,indirect "
		       "--show-leak-kinds=definite,indirect --track-fds=no", 1);
	signal(SIGPIPE, SIG_IGN);
}

/* In the test\x27s process: its run dir (a daemon of its own), and the
 * on-demand daemon (double-forked) becomes its child: it sees its exit. */
static void fkt_enter(const struct tr_test *t)
{
	snprintf(fkt_rundir, sizeof(fkt_rundir), "%s/run%u", fkt_scratch, tr_num());
	if (mkdir(fkt_rundir, 0700))
		fkt_die("mkdir %s: %s", fkt_rundir, strerror(errno));
	setenv("IBVCT_RUNDIR", fkt_rundir, 1);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fkt_die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
}

/* The daemon\x27s log goes under a failed test; a passed one fails on findings there. */
static void fkt_leave(const struct tr_test *t, int failed)
{
	if (failed) {
		fkt_show_log();
	} else if (!fkt_log_clean()) {
		fkt_show_log();
		tr_fail("findings in the daemon\x27s log %s/" FK_LOG_NAME, fkt_rundir);
	}
}

/* Findings that came after a test ended (a daemon that left later): the
 * program fails with them. */
static int fkt_finish(int failed)
{
	char path[PATH_MAX + 16];
	struct dirent *e;
	DIR *d = opendir(fkt_scratch);
	int dirty = 0;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "run", 3))
			continue;
		snprintf(fkt_rundir, sizeof(fkt_rundir), "%s/%s", fkt_scratch, e->d_name);
		snprintf(path, sizeof(path), "%s/" FK_LOG_NAME, fkt_rundir);
		if (!fkt_log_clean()) {
			printf("# findings in %s:\n", path);
			fkt_show_log();
			dirty = 1;
		}
	}
	if (d)
		closedir(d);
	fkt_rundir[0] = 0;
	fkt_scratch_done = 1;
	if (failed || dirty || fkt_keep) {
		printf("# scratch dir kept: %s\n", fkt_scratch);
		return dirty;
	}
	fp_rmtree(fkt_scratch);
	return 0;
}

int fkt_run(int argc, char **argv, const struct tr_test *tests, size_t n)
{
	struct tr_suite s = {
		.tests = tests, .n = n, .enter = fkt_enter, .leave = fkt_leave,
		.finish = fkt_finish,
		.env_help = "IBVCT_BUILD, IBVCT_FKD (the daemon), IBVCT_VALGRIND",
	};
	int rc = tr_run(&s, argc, argv);

	/* -l, -h, a name of no test: nothing ran */
	if (!fkt_scratch_done)
		fp_rmtree(fkt_scratch);
	return rc;
}

/* The run dir's log, as diagnostics. */
void fkt_show_log(void)
{
	char path[PATH_MAX + 16], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", fkt_rundir, FK_LOG_NAME);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n++ < 200)
		printf("# fkd.log: %s", line);
	fclose(f);
}

/* No valgrind/sanitizer finding and no BUG line in the daemon's log. */
bool fkt_log_clean(void)
{
	static const char *const bad[] = {
		"ERROR SUMMARY", "Sanitizer", "runtime error", "BUG", "definitely lost",
		"Invalid read", "Invalid write",
	};
	char path[PATH_MAX + 16], line[1024];
	bool clean = true;
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fkt_rundir, FK_LOG_NAME);
	f = fopen(path, "r");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(line, bad[i]))
				clean = false;
	fclose(f);
	return clean;
}

pid_t fkt_pidfile(void)
{
	char path[PATH_MAX + 16], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fkt_rundir, FK_PID_NAME);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)atol(buf);
}

long long fkt_ms(void)
{
	return tr_now_ms();
}

long fkt_mult(void)
{
	return tr_timeout_mult();
}

/* Wait for pid (our child: a helper, or the daemon through the subreaper)
 * to exit; returns its wait status, or -1 after timeout_ms. */
int fkt_wait(pid_t pid, long timeout_ms)
{
	long long end = fkt_ms() + timeout_ms * fkt_mult();
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (fkt_ms() > end)
			return -1;
		usleep(2000);
	}
}

/* The daemon's exit: 0 when it exited by itself with status 0 in time. */
int fkt_daemon_gone(pid_t pid)
{
	int st = fkt_wait(pid, 20000);

	if (st == -1) {
		printf("# daemon %ld did not exit\n", (long)pid);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("# daemon %ld: wait status %#x\n", (long)pid, st);
		return -1;
	}
	return 0;
}

/* A connection to a device with the defaults; fails the test on error. */
struct fk_client *fkt_conn(const char *dev, int life)
{
	struct fk_client *c = NULL;
	int err = fk_connect(dev, life, NULL, &c);

	if (err)
		printf("# fk_connect(%s): %s\n", dev, strerror(err));
	assert_int_equal(err, 0);
	return c;
}

/* The daemon's dump, through a monitor connection (malloc'ed). */
char *fkt_dump(void)
{
	struct fk_connect_opts o = { .flags = FK_CONNECT_MONITOR };
	struct fk_client *m;
	char *buf = malloc(FK_REPLY_MAX + 1);

	assert_non_null(buf);
	assert_int_equal(fk_connect(NULL, 0, &o, &m), 0);
	assert_int_equal(fk_dump(m, buf, FK_REPLY_MAX + 1), 0);
	fk_disconnect(m);
	return buf;
}

/* A number field "key=N" of the dump's text (first occurrence), or -1. */
long fkt_field(const char *dump, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(dump, pat);
	return p ? strtol(p + strlen(pat), NULL, 0) : -1;
}

/* A monitor connection: keeps the daemon up while a test looks at it. */
struct fk_client *fkt_monitor(void)
{
	struct fk_connect_opts o = { .flags = FK_CONNECT_MONITOR };
	struct fk_client *m = NULL;

	assert_int_equal(fk_connect(NULL, 0, &o, &m), 0);
	return m;
}

/* Objects left in the daemon (through monitor m, or a new one if NULL);
 * prints the dump when not 0 or when its self-check found problems. */
long fkt_objects_once(struct fk_client *m, bool show)
{
	char *d = m ? malloc(FK_REPLY_MAX + 1) : fkt_dump(), *line, *save = NULL;
	long n, problems;

	assert_non_null(d);
	if (m)
		assert_int_equal(fk_dump(m, d, FK_REPLY_MAX + 1), 0);
	n = fkt_field(d, "objects");
	problems = fkt_field(d, "problems");
	if (show && (n || problems))
		for (line = strtok_r(d, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("# dump: %s\n", line);
	free(d);
	return problems ? 1000000 + problems : n;
}

/* The same once the daemon has caught up: a disconnect is asynchronous
 * (the daemon sees the EOF when it sees it), so wait up to a few seconds
 * for the count to reach 0 before reporting what is left. */
long fkt_objects(struct fk_client *m)
{
	long long end = fkt_ms() + 5000 * fkt_mult();

	while (fkt_objects_once(m, false) && fkt_ms() < end)
		usleep(10000);
	return fkt_objects_once(m, true);
}

long fkt_objects_now(void)
{
	char *d = fkt_dump();
	long n = fkt_field(d, "objects");

	assert_int_equal(fkt_field(d, "problems"), 0);
	free(d);
	return n;
}

long fkt_objects_reach(long want)
{
	long long end = fkt_ms() + 5000 * fkt_mult();
	long n;

	while ((n = fkt_objects_now()) != want && fkt_ms() < end)
		usleep(10000);
	return n;
}

/* End of a test: nothing left in the daemon, and it exits once the monitor
 * (its last connection) goes. */
void fkt_end_clean(struct fk_client *mon)
{
	pid_t pid = fk_daemon_pid(mon);

	assert_int_equal(fkt_objects(mon), 0);
	fk_disconnect(mon);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

/* ---- forked helpers ------------------------------------------------------- */

/* Parent-side pipe ends of live helpers: a new helper closes them all, so
 * that a helper sees EOF when the parent closes its pipe, not when the
 * last sibling holding a copy exits. */
static int fkt_parent_fds[256];
static int fkt_nparent_fds;

void fkt_fd_track(int fd, bool add)
{
	int i;

	if (add) {
		if (fkt_nparent_fds < 256)
			fkt_parent_fds[fkt_nparent_fds++] = fd;
		return;
	}
	for (i = 0; i < fkt_nparent_fds; i++)
		if (fkt_parent_fds[i] == fd)
			fkt_parent_fds[i] = fkt_parent_fds[--fkt_nparent_fds];
}

/* Run fn in a child with a pipe each way; the child exits 0 after fn
 * returns, or with whatever fn exits with. */
struct fkt_proc fkt_spawn(fkt_fn fn, void *arg)
{
	struct fkt_proc p;
	int a[2], b[2];

	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
		fkt_die("pipe: %s", strerror(errno));
	p.pid = tr_fork();
	if (p.pid < 0)
		fkt_die("fork: %s", strerror(errno));
	if (p.pid == 0) {
		int i;

		for (i = 0; i < fkt_nparent_fds; i++)
			close(fkt_parent_fds[i]);
		fkt_nparent_fds = 0;
		close(a[1]);
		close(b[0]);
		fn(a[0], b[1], arg);
		_exit(tr_checks_failed() ? 1 : 0);
	}
	close(a[0]);
	close(b[1]);
	p.to = a[1];
	p.from = b[0];
	fkt_fd_track(p.to, true);
	fkt_fd_track(p.from, true);
	return p;
}

/* Fixed-size messages over the pipes; 0 or -1 (EOF, timeout). */
int fkt_put(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

int fkt_get(int fd, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (poll(&pfd, 1, (int)(20000 * fkt_mult())) != 1)
			return -1;
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

uint32_t fkt_get32(int fd)
{
	uint32_t v = 0;

	if (fkt_get(fd, &v, sizeof(v)))
		_exit(3);		/* the other side is gone: nothing to do */
	return v;
}

void fkt_put32(int fd, uint32_t v)
{
	if (fkt_put(fd, &v, sizeof(v)))
		_exit(3);
}

/* The child's exit status must be 0. */
void fkt_reap(struct fkt_proc *p)
{
	int st;

	fkt_fd_track(p->to, false);
	fkt_fd_track(p->from, false);
	close(p->to);
	close(p->from);
	st = fkt_wait(p->pid, 30000);
	if (st == -1) {
		kill(p->pid, SIGKILL);
		fkt_wait(p->pid, 5000);
	}
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		printf("# helper %ld: wait status %#x\n", (long)p->pid, st);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Stop the child and come back once it is stopped, all its threads: kill()
 * returns before the stop is done, and a thread of the child may still run
 * a moment; waitpid(WUNTRACED) reports the group stop complete. */
void fkt_stop(struct fkt_proc *p)
{
	pid_t got;
	int st = 0;

	assert_int_equal(kill(p->pid, SIGSTOP), 0);
	do
		got = waitpid(p->pid, &st, WUNTRACED);
	while (got == -1 && errno == EINTR);
	assert_int_equal(got, p->pid);
	assert_true(WIFSTOPPED(st));
}

/* The child was killed (or is killed now): reap it. */
void fkt_kill(struct fkt_proc *p)
{
	fkt_fd_track(p->to, false);
	fkt_fd_track(p->from, false);
	kill(p->pid, SIGKILL);
	close(p->to);
	close(p->from);
	fkt_wait(p->pid, 10000);
}

/* A file whose inode keys an XRCD; path kept in the scratch dir. */
int fkt_file(const char *name)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fkt_scratch, name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		fkt_die("%s: %s", path, strerror(errno));
	return fd;
}

/* One RESET->INIT->RTR->RTS walk of a target QP through a handle. */
int fkt_to_rts(struct fk_client *c, uint32_t h)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	err = fk_tgt_qp_modify(c, h, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS, 0, NULL);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x1234;
	a.rq_psn = 77;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	a.ah_attr.dlid = 5;
	err = fk_tgt_qp_modify(c, h, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER, 0, NULL);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.sq_psn = 99;
	return fk_tgt_qp_modify(c, h, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN, 0, NULL);
}

void fkt_evlog_fn(void *arg, const struct fk_event *ev)
{
	struct fkt_evlog *l = arg;

	pthread_mutex_lock(&l->lock);
	if (l->n < 64)
		l->ev[l->n++] = *ev;
	pthread_mutex_unlock(&l->lock);
}

/* ---- raw protocol access (hostile clients) ---------------------------------- */
int fkt_raw_connect(void)
{
	struct sockaddr_un sa;
	int fd;

	if (fk_proto_addr(&sa, fkt_rundir))
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One packet: a header with the given fields, then len bytes of p, with
 * nfds fds attached. */
int fkt_raw_send(int fd, uint32_t magic, uint16_t version, uint16_t type,
				   uint32_t lenfield, uint32_t seq, const void *p, size_t len,
				   const int *fds, int nfds)
{
	static unsigned char buf[sizeof(struct fk_hdr) + 2 * FK_REPLY_MAX];
	struct fk_hdr h = { .magic = magic, .version = version, .type = type,
			    .length = lenfield, .seq = seq };

	if (len > sizeof(buf) - sizeof(h) || nfds < 0 || nfds > FP_FDPASS_SEND_MAX)
		return -1;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), p, len);
	return fp_fds_send(fd, buf, sizeof(h) + len, fds, (unsigned)nfds, 0) < 0 ? -1 : 0;
}

/* A well-formed request. */
int fkt_raw_req(int fd, uint16_t type, uint32_t seq, const void *p, size_t len)
{
	return fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, type, (uint32_t)len, seq, p, len,
			    NULL, 0);
}

/* The next message that is not an event: payload bytes into buf, header in
 * *h; -1 on timeout, -2 on EOF or error. */
int fkt_raw_recv(int fd, struct fk_hdr *h, void *buf, size_t cap)
{
	static unsigned char in[sizeof(struct fk_hdr) + FK_REPLY_MAX];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)(10000 * fkt_mult())) != 1)
			return -1;
		n = recv(fd, in, sizeof(in), 0);
		if (n < (ssize_t)sizeof(*h))
			return -2;
		memcpy(h, in, sizeof(*h));
		if (h->type == FK_MSG_EVENT)
			continue;
		n -= (ssize_t)sizeof(*h);
		if ((size_t)n > cap)
			n = (ssize_t)cap;
		memcpy(buf, in + sizeof(*h), (size_t)n);
		return (int)n;
	}
}

/* The status of the next reply (-1 timeout, -2 EOF). */
int fkt_raw_status(int fd)
{
	struct fk_rep_query r;
	struct fk_hdr h;
	int n = fkt_raw_recv(fd, &h, &r, sizeof(r));

	if (n < 0)
		return n;
	if (n < (int)sizeof(struct fk_rep))
		return -3;
	return r.r.status;
}

/* HELLO for a device; returns the reply's status. */
int fkt_raw_hello(int fd, const char *dev, int life)
{
	struct fk_req_hello r;

	memset(&r, 0, sizeof(r));
	snprintf(r.devname, sizeof(r.devname), "%s", dev);
	r.lifetime = (uint32_t)life;
	r.nports = 1;
	r.pkey_tbl_len[0] = 1;
	r.client_pid = (uint32_t)getpid();
	if (fkt_raw_req(fd, FK_MSG_HELLO, 1, &r, sizeof(r)))
		return -4;
	return fkt_raw_status(fd);
}

/* ---- agents: helper processes driven over their pipes ------------------------ */
static void fkt_agent_main(int in, int out, void *arg)
{
	struct fkt_evlog *log = calloc(1, sizeof(*log));
	struct fk_connect_opts o = { .event_fn = fkt_evlog_fn, .event_arg = log };
	struct fk_client *c = NULL;
	struct fkt_cmd cmd;

	pthread_mutex_init(&log->lock, NULL);
	while (!fkt_get(in, &cmd, sizeof(cmd))) {
		struct fkt_res r = { 0 };
		struct ibv_qp_attr qa;
		uint32_t h = cmd.a;

		switch (cmd.op) {
		case FKT_CONNECT:
			r.err = fk_connect(cmd.name, (int)cmd.a, &o, &c);
			if (!r.err)
				r.a = (uint32_t)fk_daemon_pid(c);
			break;
		case FKT_DISCONNECT:
			fkt_xsrq_forget(c);
			fk_disconnect(c);
			c = NULL;
			break;
		case FKT_XRCD_OPEN: {
			int fd = -1;

			if (cmd.name[0])
				fd = fkt_file(cmd.name);
			r.err = fk_xrcd_open(c, fd, (int)cmd.a, cmd.b, &r.a, &r.b);
			if (fd >= 0)
				close(fd);		/* the domain does not need it (XRCD-11) */
			break;
		}
		case FKT_XRCD_CLOSE:
			r.err = fk_xrcd_close(c, h, cmd.b);
			break;
		case FKT_SRQ_CREATE:
			r.err = fkt_xsrq_create(c, h, &r.a);
			break;
		case FKT_SRQ_DESTROY:
			r.err = fkt_xsrq_destroy(c, h);
			break;
		case FKT_TGT_CREATE:
			r.err = fk_tgt_qp_create(c, h, cmd.b, &r.b, &r.a);
			break;
		case FKT_TGT_OPEN:
			r.err = fk_tgt_qp_open(c, h, cmd.b, (enum ibv_qp_type)cmd.c, cmd.d,
					       0x5000 + cmd.b, &r.a);
			break;
		case FKT_TGT_DESTROY:
			r.err = fk_tgt_qp_destroy(c, h);
			break;
		case FKT_TO_RTS:
			r.err = fkt_to_rts(c, h);
			break;
		case FKT_STATE:
			memset(&qa, 0, sizeof(qa));
			r.err = fk_tgt_qp_query(c, h, &qa);
			r.a = qa.qp_state;
			r.b = qa.dest_qp_num;
			break;
		case FKT_RAISE:
			r.err = fk_event_raise(c, h, (enum ibv_event_type)cmd.b);
			break;
		case FKT_EVENTS:
			pthread_mutex_lock(&log->lock);
			r.a = (uint32_t)log->n;
			if (log->n) {
				r.b = log->ev[log->n - 1].qp_handle;
				r.c = log->ev[log->n - 1].type;
				r.d = log->ev[log->n - 1].user;
			}
			pthread_mutex_unlock(&log->lock);
			break;
		case FKT_QPN_ALLOC:
			r.err = fk_qpn_alloc(c, &r.a);
			break;
		case FKT_SQD:
			memset(&qa, 0, sizeof(qa));
			qa.qp_state = IBV_QPS_SQD;
			qa.en_sqd_async_notify = 1;
			r.err = fk_tgt_qp_modify(c, h, &qa, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY,
						 0, NULL);
			break;
		case FKT_EXIT:
			_exit(0);
		default:
			r.err = -1;
		}
		if (fkt_put(out, &r, sizeof(r)))
			break;
	}
	/* the parent closed the pipe: a normal end, connection closed by exit */
	if (c)
		fk_disconnect(c);
	pthread_mutex_destroy(&log->lock);
	free(log);
}

struct fkt_proc fkt_agent(const char *dev, int lifetime)
{
	struct fkt_proc p = fkt_spawn(fkt_agent_main, NULL);
	struct fkt_cmd cmd = { .op = FKT_CONNECT, .a = (uint32_t)lifetime };
	struct fkt_res r;

	snprintf(cmd.name, sizeof(cmd.name), "%s", dev);
	assert_int_equal(fkt_put(p.to, &cmd, sizeof(cmd)), 0);
	assert_int_equal(fkt_get(p.from, &r, sizeof(r)), 0);
	assert_int_equal(r.err, 0);
	return p;
}

/* One command; returns the result (the test fails if the agent is gone). */
struct fkt_res fkt_do(struct fkt_proc *p, uint32_t op, uint32_t a, uint32_t b,
					uint32_t c, uint32_t d, const char *name)
{
	struct fkt_cmd cmd = { .op = op, .a = a, .b = b, .c = c, .d = d };
	struct fkt_res r;

	snprintf(cmd.name, sizeof(cmd.name), "%s", name ? name : "");
	assert_int_equal(fkt_put(p->to, &cmd, sizeof(cmd)), 0);
	assert_int_equal(fkt_get(p->from, &r, sizeof(r)), 0);
	return r;
}

struct fkt_res fkt_ok(struct fkt_proc *p, uint32_t op, uint32_t a, uint32_t b,
					const char *name)
{
	struct fkt_res r = fkt_do(p, op, a, b, 0, 0, name);

	if (r.err)
		printf("# agent %ld op %u: %s\n", (long)p->pid, op, strerror(r.err));
	assert_int_equal(r.err, 0);
	return r;
}

/* Ends an agent with EXIT (no cleanup) and reaps it. */
void fkt_exit(struct fkt_proc *p)
{
	struct fkt_cmd cmd = { .op = FKT_EXIT };

	assert_int_equal(fkt_put(p->to, &cmd, sizeof(cmd)), 0);
	fkt_reap(p);
}


/* ---- both lifetime models ------------------------------------------------ */
int fkt_life_current = FK_LIFETIME_CURRENT;
int fkt_life_seed = FK_LIFETIME_SEED;

int fkt_life(void **state)
{
	return *(int *)*state;
}
