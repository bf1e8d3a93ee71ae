/* SPDX-License-Identifier: MIT */
/*
 * t5810: 32 processes for a bounded time (IBVCT_STRESS_SECS, default 8,
 * at most 20) open the same XRCD, create and open each other's target QPs,
 * create SRQs, modify and raise events, and exit, disconnect or get
 * SIGKILLed at random points; half use device fake0 in the current model,
 * half fake1 in the seed model. Every call must answer 0 or a rule's errno.
 * Afterwards the dump shows no object left and the daemon exits cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fk_test.h"

#define NPROC	32
#define NBOARD	64

static volatile uint32_t *board;	/* shared: QP numbers to open */
static long long deadline;

static bool expected(int err)
{
	/* what the rules allow here: a dead QP, a busy handle, an absent domain */
	return !err || err == EINVAL || err == EBUSY || err == EAGAIN;
}

/* A call whose error must be one the rules allow here; else the worker ends. */
#define STRESS_CHECK(call) do { \
	int e_ = (call); \
	TR_ASSERT_MSG(expected(e_), "%s: %s", #call, strerror(e_)); \
} while (0)

static void worker(int in, int out, void *arg)
{
	int idx = (int)(intptr_t)arg, fd = fkt_file("shared");
	int life = idx % 2 ? FK_LIFETIME_SEED : FK_LIFETIME_CURRENT;
	const char *dev = idx % 2 ? "fake1" : "fake0";
	unsigned seed = (unsigned)getpid() ^ (unsigned)fkt_ms();

	while (fkt_ms() < deadline) {
		struct fk_client *c;
		uint32_t x = 0, id, qh[8], srq[8], n;
		int nq = 0, ns = 0, steps = 1 + rand_r(&seed) % 40, i;

		if (fk_connect(dev, life, NULL, &c)) {
			printf("# pid %ld: fk_connect failed\n", (long)getpid());
			_exit(1);
		}
		STRESS_CHECK(fk_xrcd_open(c, fd, O_CREAT, 0, &x, &id));
		for (i = 0; i < steps; i++) {
			switch (rand_r(&seed) % 8) {
			case 0:
				if (nq < 8 && !fk_tgt_qp_create(c, x, 0, &n, &qh[nq])) {
					board[rand_r(&seed) % NBOARD] = n;
					nq++;
				}
				break;
			case 1:
				if (nq < 8) {
					int err = fk_tgt_qp_open(c, x, board[rand_r(&seed) % NBOARD],
								 IBV_QPT_XRC_RECV, 0, 0, &qh[nq]);

					STRESS_CHECK(err);
					nq += !err;
				}
				break;
			case 2:
				if (nq) {
					STRESS_CHECK(fk_tgt_qp_destroy(c, qh[--nq]));
				}
				break;
			case 3:
				if (ns < 8 && !fkt_xsrq_create(c, x, &srq[ns]))
					ns++;
				break;
			case 4:
				if (ns)
					STRESS_CHECK(fkt_xsrq_destroy(c, srq[--ns]));
				break;
			case 5:
				if (nq) {
					STRESS_CHECK(fkt_to_rts(c, qh[rand_r(&seed) % nq]));
				}
				break;
			case 6:
				if (nq)
					STRESS_CHECK(fk_event_raise(c, qh[rand_r(&seed) % nq],
								    IBV_EVENT_COMM_EST));
				break;
			default:
				STRESS_CHECK(fk_xrcd_close(c, x, 0));	/* mostly EBUSY */
				if (!nq && !ns)
					STRESS_CHECK(fk_xrcd_open(c, fd, O_CREAT, 0, &x, &id));
				break;
			}
		}
		switch (rand_r(&seed) % 3) {
		case 0:
			_exit(0);			/* holding everything */
		case 1:
			fkt_xsrq_forget(c);
			fk_disconnect(c);		/* the same, without exiting */
			break;
		default:
			while (nq)
				STRESS_CHECK(fk_tgt_qp_destroy(c, qh[--nq]));
			while (ns)
				STRESS_CHECK(fkt_xsrq_destroy(c, srq[--ns]));
			STRESS_CHECK(fk_xrcd_close(c, x, 0));
			fkt_xsrq_forget(c);
			fk_disconnect(c);
			break;
		}
	}
}

TR_TEST(many_processes_come_and_go_and_nothing_leaks)
{
	const char *env = getenv("IBVCT_STRESS_SECS");
	long secs = env ? atol(env) : 8;
	struct fk_client *mon = fkt_monitor();
	pid_t dpid = fk_daemon_pid(mon);
	struct fkt_proc p[NPROC];
	unsigned seed = (unsigned)getpid(), spawned = 0, killed = 0, failed = 0;
	int i;

	if (secs < 1 || secs > 20)
		secs = 8;
	board = mmap(NULL, sizeof(uint32_t) * NBOARD, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(board != MAP_FAILED);
	deadline = fkt_ms() + secs * 1000;
	for (i = 0; i < NPROC; i++) {
		p[i] = fkt_spawn(worker, (void *)(intptr_t)i);
		spawned++;
	}
	while (fkt_ms() < deadline) {
		int st;

		usleep(1000 * (1 + rand_r(&seed) % 20));
		i = rand_r(&seed) % NPROC;
		if (rand_r(&seed) % 2) {
			fkt_kill(&p[i]);		/* at any moment */
			killed++;
		} else if ((st = fkt_wait(p[i].pid, 0)) != -1 || kill(p[i].pid, 0)) {
			/* it ended by itself: it must have been well */
			if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
				failed++;
			fkt_fd_track(p[i].to, false);
			fkt_fd_track(p[i].from, false);
			close(p[i].to);
			close(p[i].from);
		} else {
			continue;
		}
		if (fkt_ms() < deadline) {
			p[i] = fkt_spawn(worker, (void *)(intptr_t)i);
			spawned++;
		} else {
			p[i].pid = 0;
		}
	}
	for (i = 0; i < NPROC; i++) {
		int st;

		if (!p[i].pid)
			continue;
		st = fkt_wait(p[i].pid, 30000);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("# worker %ld: wait status %#x\n", (long)p[i].pid, st);
			failed++;
		}
		fkt_fd_track(p[i].to, false);
		fkt_fd_track(p[i].from, false);
		close(p[i].to);
		close(p[i].from);
	}
	tr_note("%u workers, %u SIGKILLed, %u failed", spawned, killed, failed);
	assert_int_equal(failed, 0);
	assert_int_equal(fkt_objects(mon), 0);
	fk_disconnect(mon);
	assert_int_equal(fkt_daemon_gone(dpid), 0);
	munmap((void *)board, sizeof(uint32_t) * NBOARD);
}

int main(int argc, char **argv)
{
	fkt_setup("t5810");
	return fkt_run(argc, argv);
}
