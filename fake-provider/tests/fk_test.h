/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fake kernel tests (t5801-t5830, t5201, t5202, t5205), which
 * talk to the daemon through its client library (fk_client.h, linked from
 * the test archive: it is part of the plugin, not of a test's link
 * otherwise). The fixture: the program's scratch dir (fkt_scratch: files
 * whose inodes key XRC domains, scripts), and for each test, in its own
 * process, a run dir of its own (fkt_rundir, so a daemon of its own) with
 * the test as the child subreaper (the on-demand daemon becomes its child:
 * it sees the daemon's exit status); a test whose daemon's log has findings
 * (valgrind, sanitizer, BUG lines) fails. Then state dumps, forked helper
 * processes with pipes, agents (helpers holding one connection each) and
 * raw protocol access.
 * helpers/fk_test.c has the code.
 *
 * Environment: IBVCT_BUILD (the daemon is $IBVCT_BUILD/bin/ibvct-fkd unless
 * IBVCT_FKD is set); IBVCT_VALGRIND=1 runs the daemon under valgrind too
 * (IBVCT_FKD_WRAPPER, unless already set); IBVCT_KEEP=1 keeps the scratch
 * dir even on success.
 */
#ifndef FK_TEST_H
#define FK_TEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fk_client.h"
#include "proto.h"
#include "tr.h"

/* The program's scratch dir and the running test's run dir. */
extern char fkt_scratch[];
extern char fkt_rundir[];

/* Scratch dir, daemon path, valgrind wrapper; first in main(). */
void fkt_setup(const char *name);
/* Run the tests, each with the fixture above; then the scratch dir goes
 * when every test passed and every daemon's log is clean (else it is kept
 * and named). The program's exit status. */
int fkt_run(int argc, char **argv, const struct tr_test *tests, size_t n);
/* Outside a test: `Bail out!` with the message; in one: fail it. */
void fkt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * An XRC SRQ needs a PD and a CQ of its connection besides the XRCD (SRQX-08,
 * checked by the daemon): these make both for each SRQ and destroy them with
 * it, so that the tests' object counts see only what they made.
 */
int fkt_xsrq_create(struct fk_client *c, uint32_t xrcd, uint32_t *handle);
/* Destroy the SRQ, then its PD and CQ; a handle of none of ours as is. */
int fkt_xsrq_destroy(struct fk_client *c, uint32_t handle);
/* A connection's end takes its SRQs' PDs and CQs with it. */
void fkt_xsrq_forget(struct fk_client *c);

/* The run dir's daemon log, as `# fkd.log:` lines; no valgrind/sanitizer
 * finding and no BUG line in it. */
void fkt_show_log(void);
bool fkt_log_clean(void);
/* The pid in the run dir's pid file, 0 without one. */
pid_t fkt_pidfile(void);
/* The runner's monotonic clock in ms and IBVCT_TIMEOUT_MULT (tr.h). */
long long fkt_ms(void);
long fkt_mult(void);
/* Wait for pid (our child: a helper, or the daemon through the subreaper)
 * to exit; returns its wait status, or -1 after timeout_ms. */
int fkt_wait(pid_t pid, long timeout_ms);
/* The daemon's exit: 0 when it exited by itself with status 0 in time. */
int fkt_daemon_gone(pid_t pid);

/* A connection to a device with the defaults; fails the test on error. */
struct fk_client *fkt_conn(const char *dev, int life);
/* The daemon's dump, through a monitor connection (malloc'ed). */
char *fkt_dump(void);
/* A number field "key=N" of the dump's text (first occurrence), or -1. */
long fkt_field(const char *dump, const char *key);
/* A monitor connection: keeps the daemon up while a test looks at it. */
struct fk_client *fkt_monitor(void);
/* Objects left in the daemon (through monitor m, or a new one if NULL);
 * prints the dump when not 0 or when its self-check found problems. */
long fkt_objects_once(struct fk_client *m, bool show);
/* The same once the daemon has caught up: a disconnect is asynchronous
 * (the daemon sees the EOF when it sees it), so wait up to a few seconds
 * for the count to reach 0 before reporting what is left. */
long fkt_objects(struct fk_client *m);
/* The daemon's count of objects now, and its self-check, which must find
 * nothing (else the test fails). */
long fkt_objects_now(void);
/* The count once the daemon has seen what was closed (closes are
 * asynchronous to it): up to a few seconds for it to reach want; the count
 * then. */
long fkt_objects_reach(long want);
/* End of a test: nothing left in the daemon, and it exits once the monitor
 * (its last connection) goes. */
void fkt_end_clean(struct fk_client *mon);

/* ---- forked helpers ------------------------------------------------------- */
struct fkt_proc {
	pid_t pid;
	int to;				/* parent -> child */
	int from;			/* child -> parent */
};

typedef void (*fkt_fn)(int in, int out, void *arg);

/* Run fn in a child with a pipe each way; the child exits 0 after fn
 * returns (1 when a TR_EXPECT in it failed), or with whatever fn exits
 * with (TR_ASSERT: 1). A new helper closes the parent's
 * ends of the live helpers' pipes, so that a helper sees EOF when the
 * parent closes its pipe, not when the last sibling holding a copy exits. */
struct fkt_proc fkt_spawn(fkt_fn fn, void *arg);
/* A parent-side pipe end of a helper made by other means: added, or removed. */
void fkt_fd_track(int fd, bool add);
/* Fixed-size messages over the pipes; 0 or -1 (EOF, timeout). */
int fkt_put(int fd, const void *buf, size_t len);
int fkt_get(int fd, void *buf, size_t len);
/* The same for one value; the other side gone ends this process (3). */
uint32_t fkt_get32(int fd);
void fkt_put32(int fd, uint32_t v);
/* The child's exit status must be 0. */
void fkt_reap(struct fkt_proc *p);
/* SIGSTOP to the child, back once every thread of it is stopped. */
void fkt_stop(struct fkt_proc *p);
/* The child was killed (or is killed now): reap it. */
void fkt_kill(struct fkt_proc *p);

/* A file whose inode keys an XRCD; path kept in the scratch dir. */
int fkt_file(const char *name);
/* One RESET->INIT->RTR->RTS walk of a target QP through a handle. */
int fkt_to_rts(struct fk_client *c, uint32_t h);

/* Events heard by a connection, for the callback. */
struct fkt_evlog {
	pthread_mutex_t lock;
	int n;
	struct fk_event ev[64];
};

void fkt_evlog_fn(void *arg, const struct fk_event *ev);

/* ---- raw protocol access (hostile clients) ---------------------------------- */
int fkt_raw_connect(void);
/* One packet: a header with the given fields, then len bytes of p, with
 * nfds fds attached. */
int fkt_raw_send(int fd, uint32_t magic, uint16_t version, uint16_t type, uint32_t lenfield,
		 uint32_t seq, const void *p, size_t len, const int *fds, int nfds);
/* A well-formed request. */
int fkt_raw_req(int fd, uint16_t type, uint32_t seq, const void *p, size_t len);
/* The next message that is not an event: payload bytes into buf, header in
 * *h; -1 on timeout, -2 on EOF or error. */
int fkt_raw_recv(int fd, struct fk_hdr *h, void *buf, size_t cap);
/* The status of the next reply (-1 timeout, -2 EOF). */
int fkt_raw_status(int fd);
/* HELLO for a device; returns the reply's status. */
int fkt_raw_hello(int fd, const char *dev, int life);

/* ---- agents: helper processes driven over their pipes ------------------------ */
/*
 * An agent is a forked process holding one connection; the parent sends it
 * commands and gets {err, a, b} back. EXIT ends it without any cleanup, as
 * a crashing program would; the parent may also SIGKILL it at any moment.
 */
enum fkt_op {
	FKT_CONNECT = 1,	/* a = lifetime; name = device */
	FKT_DISCONNECT,
	FKT_XRCD_OPEN,		/* a = oflags, b = quirks; name = file ("" = fd -1) -> handle, id */
	FKT_XRCD_CLOSE,		/* a = handle, b = quirks */
	FKT_SRQ_CREATE,		/* a = xrcd handle -> srqn */
	FKT_SRQ_DESTROY,	/* a = srqn */
	FKT_TGT_CREATE,		/* a = xrcd handle, b = user -> handle, qpn */
	FKT_TGT_OPEN,		/* a = xrcd handle, b = qpn, c = type, d = quirks -> handle */
	FKT_TGT_DESTROY,	/* a = handle */
	FKT_TO_RTS,		/* a = handle */
	FKT_STATE,		/* a = handle -> state, dest qpn */
	FKT_RAISE,		/* a = handle, b = event type */
	FKT_EVENTS,		/* -> count, last qp_handle; c = last type, d = last user */
	FKT_QPN_ALLOC,		/* -> qpn */
	FKT_SQD,		/* a = handle: RTS -> SQD with en_sqd_async_notify */
	FKT_EXIT,		/* _exit(0) now, holding whatever it holds */
};

struct fkt_cmd {
	uint32_t op, a, b, c, d;
	char name[64];
};

struct fkt_res {
	int32_t err;
	uint32_t a, b, c;
	uint64_t d;
};

/* An agent connected to dev under the lifetime model. */
struct fkt_proc fkt_agent(const char *dev, int lifetime);
/* One command; returns the result (the test fails if the agent is gone). */
struct fkt_res fkt_do(struct fkt_proc *p, uint32_t op, uint32_t a, uint32_t b, uint32_t c,
		      uint32_t d, const char *name);
/* Shorthands: the result's err, or its values after asserting success. */
#define FKT_ERR(p, op, a, b) (fkt_do((p), (op), (a), (b), 0, 0, NULL).err)
struct fkt_res fkt_ok(struct fkt_proc *p, uint32_t op, uint32_t a, uint32_t b, const char *name);
/* Ends an agent with EXIT (no cleanup) and reaps it. */
void fkt_exit(struct fkt_proc *p);

/* ---- both lifetime models ------------------------------------------------ */
extern int fkt_life_current, fkt_life_seed;
/* The model a test of FKT_BOTH runs under. */
int fkt_life(void **state);
/* One test per lifetime model for a function reading fkt_life(state). */
#define FKT_BOTH(fn) \
	TR_TEST_STATE(#fn "_current", fn, &fkt_life_current), \
	TR_TEST_STATE(#fn "_seed", fn, &fkt_life_seed)

#endif /* FK_TEST_H */
