/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel's client library (see fk_client.h): finds or starts the
 * daemon of the run dir, speaks the protocol of uapi/proto.h
 * over one SOCK_SEQPACKET connection per device context, and runs one
 * reader thread per connection that hands replies to the waiting caller
 * and runs the event callback for pushed events, in arrival order.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fk_client.h"
#include "fp_clock.h"
#include "fp_fdpass.h"
#include "proto.h"

#ifndef IBVCT_BINDIR
#define IBVCT_BINDIR "/usr/local/lib/ibvct/libexec"
#endif

#define FK_START_TIMEOUT_MS	30000	/* times IBVCT_TIMEOUT_MULT (valgrind is slow) */
#define FK_WRAPPER_MAX		32

struct fk_client {
	int fd;
	struct fk_client *next;		/* fk_clients */
	unsigned char *rx;		/* the reader's buffer */
	pthread_t reader;
	pthread_mutex_t call_lock;	/* one request in flight */
	pthread_mutex_t lock;		/* the fields below */
	pthread_cond_t cond;
	uint32_t seq;
	bool waiting, got, dead;
	bool started;			/* the reader runs its loop */
	uint32_t wait_seq;
	void *rbuf;
	size_t rcap, rlen;
	int rfd;			/* an fd that came with the awaited reply; -1 */
	fk_event_fn event_fn;
	void *event_arg;
	bool in_event;			/* the reader is in event_fn */
	uint32_t conn_id;
	pid_t daemon_pid;
	bool inherited;			/* the parent's, seen in a forked child */
	const uint64_t *epoch;		/* the daemon's route epoch (read-only map), or NULL */
};

/* Every live connection. Nothing but fk_connect/fk_disconnect uses it; it
 * keeps what a forked child inherits reachable, so that leak checkers do
 * not blame a child that exits without its parent's connections. */
static pthread_mutex_t fk_clients_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fk_client *fk_clients;

/* ---- fork -------------------------------------------------------------------------- */
static void fk_fork_prepare(void)
{
	pthread_mutex_lock(&fk_clients_lock);
}

static void fk_fork_parent(void)
{
	pthread_mutex_unlock(&fk_clients_lock);
}

/* No reader thread came along: nobody would answer a call on these. A
 * reader or caller of the parent may have held their locks: fresh ones. */
static void fk_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cfresh = PTHREAD_COND_INITIALIZER;

	fk_clients_lock = fresh;
	for (struct fk_client *c = fk_clients; c; c = c->next) {
		c->lock = fresh;
		c->call_lock = fresh;
		c->cond = cfresh;
		c->dead = true;
		c->waiting = false;
		c->inherited = true;
	}
}

static void fk_fork_register(void)
{
	pthread_atfork(fk_fork_prepare, fk_fork_parent, fk_fork_child);
}

void fk_fork_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fk_fork_register);
}

static long fk_timeout_ms(void)
{
	return FK_START_TIMEOUT_MS * fp_timeout_mult();
}

/* ---- finding and starting the daemon ----------------------------------------- */
static int fk_daemon_path(char *out, size_t len)
{
	const char *env = getenv("IBVCT_FKD");
	Dl_info info;

	if (env && env[0]) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) ? errno : 0;
	}
	/* the plugin lives in <build>/lib/ibvct/, the daemon in <build>/bin/ */
	if (dladdr((void *)fk_daemon_path, &info) && info.dli_fname && info.dli_fname[0] == '/') {
		const char *slash = strrchr(info.dli_fname, '/');
		int n = (int)(slash - info.dli_fname);

		if (snprintf(out, len, "%.*s/../../bin/ibvct-fkd", n, info.dli_fname) < (int)len &&
		    !access(out, X_OK))
			return 0;
	}
	snprintf(out, len, "%s/ibvct-fkd", IBVCT_BINDIR);
	return access(out, X_OK) ? errno : 0;
}

/* The program a wrapper word names, found on PATH. */
static int fk_which(const char *name, char *out, size_t len)
{
	const char *p = getenv("PATH");

	if (!p || !p[0])
		p = "/usr/bin:/bin";
	while (*p) {
		size_t n = strcspn(p, ":");

		if (n && snprintf(out, len, "%.*s/%s", (int)n, p, name) < (int)len &&
		    !access(out, X_OK))
			return 0;
		p += n + (p[n] == ':');
	}
	return ENOENT;
}

/*
 * Start a daemon for rundir; the caller holds the run dir's lock, which the
 * daemon relies on (--ready-fd). Double fork so that the daemon is nobody's
 * child here and outlives this process; only async-signal-safe calls
 * between fork and exec (the caller may have threads).
 */
static int fk_spawn(const char *rundir, const char *script)
{
	char path[PATH_MAX], logpath[PATH_MAX], prog[PATH_MAX], *wrap = NULL, *argv[FK_WRAPPER_MAX + 8];
	const char *env = getenv("IBVCT_FKD_WRAPPER");
	sigset_t all;
	int p[2], argc = 0, err, wfd, status;
	struct pollfd pfd;
	pid_t pid;
	char ch;

	err = fk_daemon_path(path, sizeof(path));
	if (err)
		return err;
	snprintf(logpath, sizeof(logpath), "%s/" FK_LOG_NAME, rundir);
	if (env && env[0]) {
		char *save = NULL, *w;

		wrap = strdup(env);
		if (!wrap)
			return ENOMEM;
		for (w = strtok_r(wrap, " \t", &save); w && argc < FK_WRAPPER_MAX;
		     w = strtok_r(NULL, " \t", &save))
			argv[argc++] = w;
	}
	/* execv() does not search PATH, and execvp() may allocate: look it up now */
	if (argc && !strchr(argv[0], '/')) {
		err = fk_which(argv[0], prog, sizeof(prog));
		if (err)
			goto out_free;
		argv[0] = prog;
	}
	argv[argc++] = path;
	argv[argc++] = (char *)"-r";
	argv[argc++] = (char *)rundir;
	argv[argc++] = (char *)"--ready-fd=3";
	/* a script file removed since the caller read it (tests do that) leaves
	 * this daemon without one: it then checks nothing, as before scripts */
	if (script && (!script[0] || !access(script, R_OK))) {
		argv[argc++] = (char *)"-s";
		argv[argc++] = (char *)script;
	}
	argv[argc] = NULL;
	if (pipe2(p, O_CLOEXEC)) {
		err = errno;
		goto out_free;
	}
	sigfillset(&all);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(p[0]);
		close(p[1]);
		goto out_free;
	}
	if (pid == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		int nul, logfd, sig;

		setsid();
		if (fork() != 0)
			_exit(0);
		wfd = fcntl(p[1], F_DUPFD, 10);
		nul = open("/dev/null", O_RDWR);
		logfd = open(logpath, O_WRONLY | O_APPEND | O_CREAT, 0600);
		if (wfd < 0 || nul < 0 || logfd < 0)
			_exit(127);
		dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		dup2(wfd, 3);			/* clears close-on-exec */
		close_range(4, ~0u, 0);		/* no fd of the application leaks in */
		for (sig = 1; sig < 32; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				sigaction(sig, &dfl, NULL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pfd.fd = p[0];
	pfd.events = POLLIN;
	err = ECONNREFUSED;			/* the daemon said why in its log */
	if (poll(&pfd, 1, (int)fk_timeout_ms()) == 1 && read(p[0], &ch, 1) == 1)
		err = 0;
	close(p[0]);
out_free:
	free(wrap);
	return err;
}

static int fk_sock_connect(const struct sockaddr_un *sa, int *out)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		int err = errno;

		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* Connected socket to the run dir's daemon, started if need be; another
 * host's (remote: its run dir), never started. */
static int fk_reach(int *out, const char *script, const char *remote)
{
	char rundir[108], lock_path[PATH_MAX];
	struct sockaddr_un sa;
	int err, lockfd;

	if (remote) {
		if (strlen(remote) + sizeof("/" FK_SOCK_NAME) > sizeof(rundir))
			return ENAMETOOLONG;
		err = fk_proto_addr(&sa, remote);
		return err ? err : fk_sock_connect(&sa, out);
	}
	err = fk_proto_rundir(rundir, sizeof(rundir));
	if (!err)
		err = fk_proto_addr(&sa, rundir);
	if (err)
		return err;
	snprintf(lock_path, sizeof(lock_path), "%s/" FK_LOCK_NAME, rundir);
	lockfd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lockfd < 0)
		return errno;
	while (flock(lockfd, LOCK_EX))
		if (errno != EINTR) {
			err = errno;
			goto out_close;
		}
	/* Under the lock: a daemon answers, or none will until we start one. */
	err = fk_sock_connect(&sa, out);
	if (err == ENOENT || err == ECONNREFUSED) {
		err = fk_spawn(rundir, script);
		if (!err)
			err = fk_sock_connect(&sa, out);
	}
	flock(lockfd, LOCK_UN);
out_close:
	close(lockfd);
	return err;
}

/* ---- messages ---------------------------------------------------------------------- */
static int fk_send(int fd, uint32_t type, uint32_t seq, const void *payload, uint32_t len,
		   int pass_fd)
{
	struct {
		struct fk_hdr h;
		unsigned char p[FK_REQ_MAX];
	} m;

	fk_proto_hdr_init(&m.h, type, len, seq);
	memcpy(m.p, payload, len);
	while (fp_fd_send(fd, &m, sizeof(m.h) + len, pass_fd, 0) < 0) {
		if (errno != EINTR)
			return errno;	/* EBADF: pass_fd is not open (XRCD-10) */
	}
	return 0;
}

static void *fk_reader(void *arg)
{
	struct fk_client *c = arg;
	size_t cap = sizeof(struct fk_hdr) + FK_REPLY_MAX;
	unsigned char *buf = c->rx;

	pthread_mutex_lock(&c->lock);
	c->started = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	for (;;) {
		struct fk_hdr h;
		int fd = -1;
		unsigned nfds;
		ssize_t n = fp_fd_recv(c->fd, buf, cap, &fd, 1, &nfds, 0, NULL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(h)) {
			if (fd >= 0)
				close(fd);
			break;			/* EOF, error, or garbage: the connection is over */
		}
		memcpy(&h, buf, sizeof(h));
		if (h.magic != FK_MAGIC || h.version != FK_PROTO_VERSION ||
		    h.length != (size_t)n - sizeof(h)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (h.type == FK_MSG_EVENT) {
			struct fk_event_msg em;
			struct fk_event ev;
			fk_event_fn fn;

			if (fd >= 0)
				close(fd);
			if (h.length != sizeof(em))
				break;
			memcpy(&em, buf + sizeof(h), sizeof(em));
			ev.qp_handle = em.qp_handle;
			ev.qpn = em.qpn;
			ev.type = (enum ibv_event_type)em.event_type;
			ev.user = em.user;
			pthread_mutex_lock(&c->lock);
			fn = c->event_fn;
			c->in_event = fn != NULL;
			pthread_mutex_unlock(&c->lock);
			if (!fn)
				continue;
			fn(c->event_arg, &ev);
			pthread_mutex_lock(&c->lock);
			c->in_event = false;
			pthread_cond_broadcast(&c->cond);
			pthread_mutex_unlock(&c->lock);
			continue;
		}
		pthread_mutex_lock(&c->lock);
		if (c->waiting && !c->got && h.seq == c->wait_seq) {
			c->rlen = h.length < c->rcap ? h.length : c->rcap;
			memcpy(c->rbuf, buf + sizeof(h), c->rlen);
			c->rfd = fd;
			fd = -1;
			c->got = true;
			pthread_cond_broadcast(&c->cond);
		}
		pthread_mutex_unlock(&c->lock);
		if (fd >= 0)
			close(fd);
	}
	pthread_mutex_lock(&c->lock);
	c->dead = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/*
 * One request and its reply. rep receives the reply payload (at most cap
 * bytes, *rlen the size); returns the transport error, else the reply's
 * status. The sizes are the message table's (uapi/fk_msgs.def): len must
 * be the type's request size (EINVAL: this library's bug), a success reply
 * exactly its reply struct (a DUMP's any size: the text follows).
 */
static int fk_call_fd(struct fk_client *c, uint32_t type, const void *req, uint32_t len,
		      int pass_fd, void *rep, size_t cap, size_t *rlen, int *rfd)
{
	const struct fk_msg_info *m = fk_msg_info(type);
	size_t want = !m || type == FK_MSG_DUMP ? 0 : m->rep_size;
	struct fk_rep r;
	int err, gotfd = -1;

	if (!m || len != m->req_size || cap < want)
		return EINVAL;
	pthread_mutex_lock(&c->call_lock);
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		pthread_mutex_unlock(&c->lock);
		err = ECONNRESET;
		goto out;
	}
	c->seq = c->seq + 1 ? c->seq + 1 : 1;
	c->wait_seq = c->seq;
	c->waiting = true;
	c->got = false;
	c->rbuf = rep;
	c->rcap = cap;
	c->rfd = -1;
	pthread_mutex_unlock(&c->lock);

	err = fk_send(c->fd, type, c->wait_seq, req, len, pass_fd);

	pthread_mutex_lock(&c->lock);
	while (!err && !c->got && !c->dead)
		pthread_cond_wait(&c->cond, &c->lock);
	if (!err && !c->got)
		err = ECONNRESET;		/* the daemon went away */
	c->waiting = false;
	c->rbuf = NULL;
	gotfd = c->rfd;
	c->rfd = -1;
	pthread_mutex_unlock(&c->lock);
	if (err)
		goto out;
	if (c->rlen < sizeof(r)) {
		err = EPROTO;
		goto out;
	}
	memcpy(&r, rep, sizeof(r));
	if (r.status < 0 || r.status > 4095)
		err = EPROTO;
	else if (r.status)
		err = r.status;
	else if (want && c->rlen != want)
		err = EPROTO;
	if (rlen)
		*rlen = c->rlen;
out:
	pthread_mutex_unlock(&c->call_lock);
	if (!err && rfd) {
		*rfd = gotfd;
		gotfd = -1;
	}
	if (gotfd >= 0)
		close(gotfd);
	return err;
}

static int fk_call(struct fk_client *c, uint32_t type, const void *req, uint32_t len,
		   int pass_fd, void *rep, size_t cap, size_t *rlen)
{
	return fk_call_fd(c, type, req, len, pass_fd, rep, cap, rlen, NULL);
}

static int fk_call_pair(struct fk_client *c, uint32_t type, const void *req, uint32_t len,
			int pass_fd, uint32_t *a, uint32_t *b)
{
	struct fk_rep_pair rp;
	int err = fk_call(c, type, req, len, pass_fd, &rp, sizeof(rp), NULL);

	if (!err && a)
		*a = rp.a;
	if (!err && b)
		*b = rp.b;
	return err;
}

/* ---- connection --------------------------------------------------------------------- */
static int fk_hello(int fd, const struct fk_req_hello *req, uint32_t *conn_id, pid_t *pid,
		    int *epoch_fd)
{
	struct {
		struct fk_hdr h;
		struct fk_rep_pair rp;
	} m;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned nfds;
	ssize_t n;
	int err, efd;

	/* a refused connection may be closed already: its refusal is still queued */
	err = fk_send(fd, FK_MSG_HELLO, 1, req, sizeof(*req), -1);
	if (err && err != EPIPE && err != ECONNRESET)
		return err;
	if (poll(&pfd, 1, (int)fk_timeout_ms()) != 1)
		return ETIMEDOUT;
	n = fp_fd_recv(fd, &m, sizeof(m), &efd, 1, &nfds, 0, NULL);
	if (nfds)
		*epoch_fd = efd;	/* the caller's to close, whatever the answer */
	if (n < (ssize_t)(sizeof(m.h) + sizeof(m.rp.r)))
		return n < 0 ? errno : ECONNRESET;
	if (m.h.magic != FK_MAGIC)
		return EPROTO;
	if (m.h.version != FK_PROTO_VERSION)
		return EPROTONOSUPPORT;
	if (m.h.type != (FK_MSG_HELLO | FK_MSG_REPLY))
		return EPROTO;
	if (m.rp.r.status)
		return m.rp.r.status > 0 && m.rp.r.status < 4096 ? m.rp.r.status : EPROTO;
	if ((size_t)n != sizeof(m))
		return EPROTO;
	*conn_id = m.rp.a;
	*pid = (pid_t)m.rp.b;
	return 0;
}

int fk_connect(const char *devname, int lifetime, const struct fk_connect_opts *opts,
	       struct fk_client **out)
{
	static const struct fk_qp_limits deflim = { .nports = 1, .pkey_tbl_len = { 1 } };
	const struct fk_qp_limits *lim = opts && opts->limits ? opts->limits : &deflim;
	bool monitor = opts && (opts->flags & FK_CONNECT_MONITOR);
	struct fk_req_hello hello;
	struct fk_client *c;
	int epoch_fd = -1;
	unsigned i;
	int err;

	memset(&hello, 0, sizeof(hello));
	if ((lifetime != FK_LIFETIME_CURRENT && lifetime != FK_LIFETIME_SEED) ||
	    (opts && (opts->flags & ~(FK_CONNECT_MONITOR | FK_CONNECT_REMOTE))) ||
	    (opts && (opts->flags & FK_CONNECT_REMOTE) && !opts->rundir) ||
	    (opts && (opts->hello_flags & ~FK_HELLO_DEVICE_FLAGS)))
		return EINVAL;
	if (!monitor) {
		if (!devname || !devname[0] || strlen(devname) >= FK_DEVNAME_MAX ||
		    lim->nports < 1 || lim->nports > FK_MAX_PORTS)
			return EINVAL;
		memcpy(hello.devname, devname, strlen(devname));
		hello.lifetime = (uint32_t)lifetime;
		hello.nports = lim->nports;
		hello.max_rd_atom = lim->max_rd_atom;
		hello.max_dest_rd_atom = lim->max_dest_rd_atom;
		for (i = 0; i < lim->nports; i++)
			hello.pkey_tbl_len[i] = lim->pkey_tbl_len[i];
		hello.flags = opts ? opts->hello_flags : 0;
	} else {
		hello.flags = FK_HELLO_MONITOR;
	}
	hello.client_pid = (uint32_t)getpid();
	hello.quirks = opts ? opts->quirks : 0;
	fk_fork_init();
	c = calloc(1, sizeof(*c));
	if (!c)
		return ENOMEM;
	c->fd = -1;
	c->rx = malloc(sizeof(struct fk_hdr) + FK_REPLY_MAX);
	if (!c->rx) {
		err = ENOMEM;
		goto err_free;
	}
	err = fk_reach(&c->fd, opts ? opts->script : NULL,
		       opts && (opts->flags & FK_CONNECT_REMOTE) ? opts->rundir : NULL);
	if (err)
		goto err_free;
	err = fk_hello(c->fd, &hello, &c->conn_id, &c->daemon_pid, &epoch_fd);
	if (epoch_fd >= 0) {
		void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, epoch_fd, 0);

		if (m != MAP_FAILED)
			c->epoch = m;
		close(epoch_fd);
	}
	if (err)
		goto err_close;
	c->seq = 1;
	c->event_fn = opts ? opts->event_fn : NULL;
	c->event_arg = opts ? opts->event_arg : NULL;
	pthread_mutex_init(&c->call_lock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	err = pthread_create(&c->reader, NULL, fk_reader, c);
	if (err)
		goto err_destroy;
	/* Return only once the new thread is set up: a fork() meanwhile would
	 * copy its half-done start (the sanitizer's allocator and thread
	 * registry locks taken), and the child would hang on them. */
	pthread_mutex_lock(&c->lock);
	while (!c->started)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&fk_clients_lock);
	c->next = fk_clients;
	fk_clients = c;
	pthread_mutex_unlock(&fk_clients_lock);
	*out = c;
	return 0;

err_destroy:
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->call_lock);
err_close:
	close(c->fd);
err_free:
	if (c->epoch)
		munmap((void *)c->epoch, 4096);
	free(c->rx);
	free(c);
	return err;
}

void fk_disconnect(struct fk_client *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&fk_clients_lock);
	for (struct fk_client **pp = &fk_clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&fk_clients_lock);
	if (c->inherited) {
		/* the parent's connection: close our copy, leave the socket be */
		close(c->fd);
		goto out_free;
	}
	/* Like the last close of a uverbs fd, this returns once the daemon has
	 * released what the connection held: it sees our EOF, releases, closes
	 * its end, and the reader then sees EOF too and ends. (The shutdown acts
	 * on the socket itself, so copies of the fd in forked children do not
	 * keep it open.) */
	shutdown(c->fd, SHUT_WR);
	pthread_join(c->reader, NULL);

	close(c->fd);
out_free:
	if (c->epoch)
		munmap((void *)c->epoch, 4096);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->call_lock);
	free(c->rx);
	free(c);
}

void fk_keep(struct fk_client *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->event_fn = NULL;
	while (c->in_event)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	/* the reader, the socket and this struct stay (on fk_clients) until
	 * the process ends, and with them the daemon's objects */
}

bool fk_inherited(const struct fk_client *c)
{
	return c->inherited;
}

uint32_t fk_conn_id(const struct fk_client *c)
{
	return c->conn_id;
}

pid_t fk_daemon_pid(const struct fk_client *c)
{
	return c->daemon_pid;
}

/* ---- objects --------------------------------------------------------------------------- */
int fk_qpn_alloc(struct fk_client *c, uint32_t *qpn)
{
	struct fk_req_num r = { 0 };

	return fk_call_pair(c, FK_MSG_QPN_ALLOC, &r, sizeof(r), -1, qpn, NULL);
}

int fk_qpn_free(struct fk_client *c, uint32_t qpn)
{
	struct fk_req_num r = { .num = qpn };

	return fk_call(c, FK_MSG_QPN_FREE, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

int fk_srqn_alloc(struct fk_client *c, uint32_t *srqn)
{
	struct fk_req_num r = { 0 };

	return fk_call_pair(c, FK_MSG_SRQN_ALLOC, &r, sizeof(r), -1, srqn, NULL);
}

int fk_srqn_free(struct fk_client *c, uint32_t srqn)
{
	struct fk_req_num r = { .num = srqn };

	return fk_call(c, FK_MSG_SRQN_FREE, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

int fk_xrcd_open(struct fk_client *c, int fd, int oflags, unsigned quirks,
		 uint32_t *handle, uint32_t *xrcd_id)
{
	struct fk_req_xrcd_open r = {
		.has_fd = fd != -1, .oflags = (uint32_t)oflags, .flags = quirks,
	};

	int pass = fd;

	/* XRCD-10: any fd but -1 is passed, as the uverbs command carries its
	 * number; one that names no open file cannot travel (sendmsg would
	 * refuse it), so the request says it has one and none arrives: the
	 * fake kernel's fdget() fails there (EBADF) */
	if (fd != -1 && fcntl(fd, F_GETFD) < 0)
		pass = -1;
	return fk_call_pair(c, FK_MSG_XRCD_OPEN, &r, sizeof(r), pass, handle, xrcd_id);
}

int fk_xrcd_close(struct fk_client *c, uint32_t handle, unsigned quirks)
{
	struct fk_req_handle r = { .handle = handle, .flags = quirks };

	return fk_call(c, FK_MSG_XRCD_CLOSE, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

static void fk_refs_wire(struct fk_req_obj *r, const struct fk_refs *refs)
{
	r->ref[FK_REF_PD] = refs ? refs->pd : FK_NO_HANDLE;
	r->ref[FK_REF_SCQ] = refs ? refs->scq : FK_NO_HANDLE;
	r->ref[FK_REF_RCQ] = refs ? refs->rcq : FK_NO_HANDLE;
	r->ref[FK_REF_SRQ] = refs ? refs->srq : FK_NO_HANDLE;
	r->ref[FK_REF_XRCD] = refs ? refs->xrcd : FK_NO_HANDLE;
}

int fk_obj_create(struct fk_client *c, int type, uint32_t sub, const struct fk_refs *refs,
		  uint32_t *handle)
{
	struct fk_req_obj r = { .type = (uint32_t)type, .sub = sub };

	fk_refs_wire(&r, refs);
	return fk_call_pair(c, FK_MSG_OBJ_CREATE, &r, sizeof(r), -1, handle, NULL);
}

int fk_obj_destroy(struct fk_client *c, int type, uint32_t handle)
{
	struct fk_req_obj_destroy r = { .handle = handle, .type = (uint32_t)type };

	return fk_call(c, FK_MSG_OBJ_DESTROY, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

int fk_mr_rereg(struct fk_client *c, uint32_t mr, unsigned flags, uint32_t pd, int access,
		uint64_t start, uint64_t hca_va, uint32_t *pd_now)
{
	struct fk_req_mr_rereg r = {
		.mr_handle = mr, .flags = flags, .pd_handle = pd, .access = (uint32_t)access,
		.start = start, .hca_va = hca_va,
	};

	return fk_call_pair(c, FK_MSG_MR_REREG, &r, sizeof(r), -1, NULL, pd_now);
}

int fk_srq_create_xrc(struct fk_client *c, uint32_t pd, uint32_t cq, uint32_t xrcd_handle,
		      uint32_t *handle, uint32_t *srqn)
{
	struct fk_req_obj r = { .type = FK_OBJ_SRQ, .sub = IBV_SRQT_XRC };
	struct fk_refs refs = {
		.pd = pd, .scq = cq, .rcq = FK_O_NONE, .srq = FK_O_NONE, .xrcd = xrcd_handle,
	};

	fk_refs_wire(&r, &refs);
	return fk_call_pair(c, FK_MSG_SRQ_CREATE_XRC, &r, sizeof(r), -1, handle, srqn);
}

int fk_srq_destroy(struct fk_client *c, uint32_t handle)
{
	struct fk_req_handle r = { .handle = handle };

	return fk_call(c, FK_MSG_SRQ_DESTROY, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

int fk_tgt_qp_create(struct fk_client *c, uint32_t xrcd_handle, uint64_t user,
		     uint32_t *qpn, uint32_t *qp_handle)
{
	struct fk_req_tgt_create r = { .xrcd_handle = xrcd_handle, .user = user };

	return fk_call_pair(c, FK_MSG_TGT_QP_CREATE, &r, sizeof(r), -1, qp_handle, qpn);
}

int fk_tgt_qp_open(struct fk_client *c, uint32_t xrcd_handle, uint32_t qpn,
		   enum ibv_qp_type type, unsigned quirks, uint64_t user,
		   uint32_t *qp_handle)
{
	struct fk_req_tgt_open r = {
		.xrcd_handle = xrcd_handle, .qpn = qpn, .qp_type = (uint32_t)type,
		.flags = quirks, .user = user,
	};

	return fk_call_pair(c, FK_MSG_TGT_QP_OPEN, &r, sizeof(r), -1, qp_handle, NULL);
}

int fk_tgt_qp_destroy(struct fk_client *c, uint32_t qp_handle)
{
	struct fk_req_handle r = { .handle = qp_handle };

	return fk_call(c, FK_MSG_TGT_QP_DESTROY, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

static void fk_ah_to_wire(struct fk_ah_wire *w, const struct ibv_ah_attr *a)
{
	memcpy(w->dgid, a->grh.dgid.raw, sizeof(w->dgid));
	w->flow_label = a->grh.flow_label;
	w->sgid_index = a->grh.sgid_index;
	w->hop_limit = a->grh.hop_limit;
	w->traffic_class = a->grh.traffic_class;
	w->dlid = a->dlid;
	w->sl = a->sl;
	w->src_path_bits = a->src_path_bits;
	w->static_rate = a->static_rate;
	w->is_global = a->is_global;
	w->port_num = a->port_num;
}

static void fk_ah_from_wire(struct ibv_ah_attr *a, const struct fk_ah_wire *w)
{
	memcpy(a->grh.dgid.raw, w->dgid, sizeof(w->dgid));
	a->grh.flow_label = w->flow_label;
	a->grh.sgid_index = w->sgid_index;
	a->grh.hop_limit = w->hop_limit;
	a->grh.traffic_class = w->traffic_class;
	a->dlid = w->dlid;
	a->sl = w->sl;
	a->src_path_bits = w->src_path_bits;
	a->static_rate = w->static_rate;
	a->is_global = w->is_global;
	a->port_num = w->port_num;
}

int fk_tgt_qp_modify(struct fk_client *c, uint32_t qp_handle, const struct ibv_qp_attr *a,
		     int attr_mask, unsigned quirks, enum ibv_qp_state *state)
{
	struct fk_req_modify r;
	uint32_t st = 0;
	int err;

	memset(&r, 0, sizeof(r));
	r.qp_handle = qp_handle;
	r.attr_mask = (uint32_t)attr_mask;
	r.flags = quirks;
	r.attr.qp_state = a->qp_state;
	r.attr.cur_qp_state = a->cur_qp_state;
	r.attr.path_mtu = a->path_mtu;
	r.attr.path_mig_state = a->path_mig_state;
	r.attr.qkey = a->qkey;
	r.attr.rq_psn = a->rq_psn;
	r.attr.sq_psn = a->sq_psn;
	r.attr.dest_qp_num = a->dest_qp_num;
	r.attr.qp_access_flags = (uint32_t)a->qp_access_flags;
	r.attr.pkey_index = a->pkey_index;
	r.attr.alt_pkey_index = a->alt_pkey_index;
	r.attr.en_sqd_async_notify = a->en_sqd_async_notify;
	r.attr.max_rd_atomic = a->max_rd_atomic;
	r.attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	r.attr.min_rnr_timer = a->min_rnr_timer;
	r.attr.port_num = a->port_num;
	r.attr.timeout = a->timeout;
	r.attr.retry_cnt = a->retry_cnt;
	r.attr.rnr_retry = a->rnr_retry;
	r.attr.alt_port_num = a->alt_port_num;
	r.attr.alt_timeout = a->alt_timeout;
	fk_ah_to_wire(&r.attr.ah_attr, &a->ah_attr);
	fk_ah_to_wire(&r.attr.alt_ah_attr, &a->alt_ah_attr);
	err = fk_call_pair(c, FK_MSG_TGT_QP_MODIFY, &r, sizeof(r), -1, &st, NULL);
	if (!err && state)
		*state = (enum ibv_qp_state)st;
	return err;
}

int fk_tgt_qp_query(struct fk_client *c, uint32_t qp_handle, struct ibv_qp_attr *a)
{
	struct fk_req_handle r = { .handle = qp_handle };
	struct fk_rep_query q;
	int err;

	err = fk_call(c, FK_MSG_TGT_QP_QUERY, &r, sizeof(r), -1, &q, sizeof(q), NULL);
	if (err)
		return err;
	a->qp_state = (enum ibv_qp_state)q.attr.qp_state;
	a->cur_qp_state = (enum ibv_qp_state)q.attr.cur_qp_state;
	a->path_mtu = (enum ibv_mtu)q.attr.path_mtu;
	a->path_mig_state = (enum ibv_mig_state)q.attr.path_mig_state;
	a->qkey = q.attr.qkey;
	a->rq_psn = q.attr.rq_psn;
	a->sq_psn = q.attr.sq_psn;
	a->dest_qp_num = q.attr.dest_qp_num;
	a->qp_access_flags = (unsigned)q.attr.qp_access_flags;
	a->pkey_index = q.attr.pkey_index;
	a->alt_pkey_index = q.attr.alt_pkey_index;
	a->en_sqd_async_notify = q.attr.en_sqd_async_notify;
	a->sq_draining = q.attr.sq_draining;
	a->max_rd_atomic = q.attr.max_rd_atomic;
	a->max_dest_rd_atomic = q.attr.max_dest_rd_atomic;
	a->min_rnr_timer = q.attr.min_rnr_timer;
	a->port_num = q.attr.port_num;
	a->timeout = q.attr.timeout;
	a->retry_cnt = q.attr.retry_cnt;
	a->rnr_retry = q.attr.rnr_retry;
	a->alt_port_num = q.attr.alt_port_num;
	a->alt_timeout = q.attr.alt_timeout;
	fk_ah_from_wire(&a->ah_attr, &q.attr.ah_attr);
	fk_ah_from_wire(&a->alt_ah_attr, &q.attr.alt_ah_attr);
	return 0;
}

int fk_event_raise(struct fk_client *c, uint32_t qp_handle, enum ibv_event_type type)
{
	struct fk_req_event r = { .qp_handle = qp_handle, .event_type = (uint32_t)type };

	return fk_call(c, FK_MSG_EVENT_RAISE, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

int fk_ring_set(struct fk_client *c, int memfd)
{
	struct fk_req_num r = { 0 };

	return fk_call(c, FK_MSG_RING_SET, &r, sizeof(r), memfd, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}

int fk_route(struct fk_client *c, int kind, uint32_t num, uint32_t srqn, unsigned quirks,
	     struct fk_route *out)
{
	struct fk_req_route r = {
		.kind = (uint32_t)kind, .num = num, .srqn = srqn, .flags = quirks,
	};
	struct fk_rep_route rep;
	int err, fd = -1;

	err = fk_call_fd(c, FK_MSG_ROUTE, &r, sizeof(r), -1, &rep, sizeof(rep), NULL, &fd);
	if (err)
		return err;
	if (rep.gate == FK_GATE_OK && fd < 0)
		return EPROTO;
	out->conn_id = rep.conn_id;
	out->srqn = rep.srqn;
	out->gate = rep.gate;
	out->xrcd_id = rep.xrcd_id;
	out->qp_access = rep.qp_access;
	out->rnr_timer = rep.rnr_timer;
	out->fd = fd;
	return 0;
}

int fk_dump(struct fk_client *c, char *buf, size_t len)
{

	struct fk_req_num r = { 0 };
	size_t cap = sizeof(struct fk_rep) + FK_REPLY_MAX, n = 0, text;
	char *rep;
	int err;

	if (!len)
		return EINVAL;
	rep = malloc(cap);
	if (!rep)
		return ENOMEM;
	err = fk_call(c, FK_MSG_DUMP, &r, sizeof(r), -1, rep, cap, &n);
	if (!err) {
		text = n - sizeof(struct fk_rep);
		if (text >= len) {
			text = len - 1;
			err = ENOSPC;
		}
		memcpy(buf, rep + sizeof(struct fk_rep), text);
		buf[text] = '\0';
	}
	free(rep);
	return err;
}

uint64_t fk_epoch(const struct fk_client *c)
{
	return c && c->epoch ? __atomic_load_n(c->epoch, __ATOMIC_ACQUIRE) : 0;
}

/* ---- the context's file ---------------------------------------------------------- */
int fk_ctx_held(struct fk_client *c, bool *held)
{
	struct fk_req_num r = { 0 };
	uint32_t a = 0;
	int err;

	err = fk_call_pair(c, FK_MSG_CTX_HELD, &r, sizeof(r), -1, &a, NULL);
	*held = !err && a;
	return err;
}

int fk_ctx_fd(struct fk_client *c, int *fd)
{
	struct fk_req_num r = { 0 };
	struct fk_rep rep;
	int got = -1, err;

	err = fk_call_fd(c, FK_MSG_CTX_FD, &r, sizeof(r), -1, &rep, sizeof(rep), NULL, &got);
	if (!err && got < 0)
		err = EPROTO;		/* a success brings the fd */
	if (!err)
		*fd = got;
	return err;
}

int fk_ctx_import(struct fk_client *c, int fd, uint32_t *owner_id)
{
	struct fk_req_handle r = { 0 };

	/* an fd that names no open file cannot travel: the request goes
	 * without one, and the daemon answers EBADF */
	if (fcntl(fd, F_GETFD) < 0)
		fd = -1;
	return fk_call_pair(c, FK_MSG_CTX_IMPORT, &r, sizeof(r), fd, owner_id, NULL);
}

int fk_obj_import(struct fk_client *c, int type, uint32_t handle, unsigned quirks,
		  struct fk_import *out)
{
	struct fk_req_obj_import r = { .handle = handle, .type = (uint32_t)type, .flags = quirks };
	struct fk_rep_import rep;
	int fd = -1, err;

	err = fk_call_fd(c, FK_MSG_OBJ_IMPORT, &r, sizeof(r), -1, &rep, sizeof(rep), NULL, &fd);
	if (err)
		return err;
	out->handle = rep.handle;
	out->pd = rep.pd;
	out->lkey = rep.lkey;
	out->rkey = rep.rkey;
	out->access = rep.access;
	out->length = rep.length;
	out->iova = rep.iova;
	out->moff = rep.moff;
	out->fd = -1;
	if ((rep.flags & FK_MR_MAPPED) && fd >= 0)
		out->fd = fd;
	else if (fd >= 0)
		close(fd);
	return 0;
}

int fk_mr_keys(struct fk_client *c, uint32_t mr, const struct fk_mr_reg *reg)
{
	struct fk_req_mr_keys r = {
		.mr_handle = mr, .lkey = reg->lkey, .rkey = reg->rkey,
		.access = (uint32_t)reg->access, .flags = reg->mapped ? FK_MR_MAPPED : 0,
		.length = reg->length, .iova = reg->iova, .moff = reg->moff,
	};

	return fk_call(c, FK_MSG_MR_KEYS, &r, sizeof(r), -1, &(struct fk_rep){ 0 },
		       sizeof(struct fk_rep), NULL);
}
