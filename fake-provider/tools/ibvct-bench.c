/* SPDX-License-Identifier: MIT */
/*
 * ibvct-bench: how fast the fake provider carries traffic. Cross-process
 * RC SEND round trip (median, p99) and one-way message rate for 64-byte
 * messages, between this process and a forked child, and the same rate
 * between two QPs of one process (loopback). Not a test: `make bench`.
 *
 * usage: ibvct-bench [iterations]   (IBVCT_PROVIDER overrides the plugin)
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"

#define MSG	64
#define DEPTH	512		/* receive queue; the sender keeps half in flight */

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	char buf[MSG * 2];
};

/* What the receiver has consumed, for the sender's window (shared page). */
struct shared {
	volatile uint64_t received;
};

static void die(const char *what)
{
	fprintf(stderr, "ibvct-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void ep_open(struct ep *e, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qa;

	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->pd = ibv_alloc_pd(ctx);
	e->cq = ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0);
	if (!e->pd || !e->cq)
		die("pd/cq");
	e->mr = ibv_reg_mr(e->pd, e->buf, sizeof(e->buf), IBV_ACCESS_LOCAL_WRITE);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = e->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = DEPTH;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	e->qp = e->mr ? ibv_create_qp(e->pd, &qa) : NULL;
	if (!e->qp)
		die("qp");
}

static void ep_connect(struct ep *e, uint32_t dest)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static void ep_recv(struct ep *e, int n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + MSG, .length = MSG, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	while (n-- > 0)
		if (ibv_post_recv(e->qp, &wr, &bad))
			die("post_recv");
}

static void ep_send(struct ep *e, bool signaled)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = MSG, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
	}, *bad;
	int err = ibv_post_send(e->qp, &wr, &bad);

	if (err) {
		errno = err;
		die("post_send");
	}
}

/* Poll until want receive completions were seen; send CQEs are skipped.
 * (One entry at a time: nothing beyond want is taken off the CQ.) */
static void ep_wait_recv(struct ep *e, int want)
{
	struct ibv_wc wc[1];

	while (want > 0) {
		int i, n = ibv_poll_cq(e->cq, 1, wc);

		if (n < 0)
			die("poll_cq");
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "ibvct-bench: completion status %d\n", wc[i].status);
				exit(1);
			}
			if (wc[i].opcode == IBV_WC_RECV)
				want--;
		}
	}
}

static void ep_close(struct ep *e)
{
	ibv_destroy_qp(e->qp);
	ibv_dereg_mr(e->mr);
	ibv_destroy_cq(e->cq);
	ibv_dealloc_pd(e->pd);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Retire signaled sends; any error ends the run. */
static void tx_poll(struct ep *tx)
{
	struct ibv_wc wc[32];
	int i, n = ibv_poll_cq(tx->cq, 32, wc);

	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "ibvct-bench: send completion status %d\n", wc[i].status);
			exit(1);
		}
}

/* The sender's side of a one-way run: a window of DEPTH/2 messages. */
static double rate_run(struct ep *tx, struct ep *rx_local, struct shared *sh, long n)
{
	long long t0 = now_ns();
	struct ibv_wc wc[32];
	long sent;

	for (sent = 0; sent < n; sent++) {
		while (sent - (long)sh->received >= DEPTH / 2) {
			if (rx_local) {
				/* loopback: be the receiver too */
				int i, k = ibv_poll_cq(rx_local->cq, 32, wc);

				for (i = 0; i < k; i++)
					if (wc[i].opcode == IBV_WC_RECV) {
						sh->received++;
						ep_recv(rx_local, 1);
					}
			}
			tx_poll(tx);
		}
		ep_send(tx, (sent % 64) == 63);
		if ((sent % 64) == 63)
			tx_poll(tx);
	}
	while ((long)sh->received < n) {
		if (rx_local) {
			int i, k = ibv_poll_cq(rx_local->cq, 32, wc);

			for (i = 0; i < k; i++)
				if (wc[i].opcode == IBV_WC_RECV) {
					sh->received++;
					ep_recv(rx_local, 1);
				}
		}
		tx_poll(tx);
	}
	return (double)n * 1e9 / (double)(now_ns() - t0);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20000, i;
	char scratch[PATH_MAX], err[512], prov[PATH_MAX + 64], self[PATH_MAX];
	const char *p = getenv("IBVCT_PROVIDER");
	struct ibv_device **list;
	struct ibv_context *ctx;
	int up[2], down[2], n, st;
	struct shared *sh;
	struct ep a, b;
	long long *rtt;
	uint32_t qpn;
	double rate;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (iters < 100)
		iters = 100;
	if (!p) {
		ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[k > 0 ? k : 0] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(prov, sizeof(prov), "%s/../lib/ibvct/libibvct-fake.so", self);
		p = prov;
	}
	if (fp_env_setup(NULL, p, NULL, scratch, sizeof(scratch), err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	rtt = calloc((size_t)iters, sizeof(*rtt));
	if (sh == MAP_FAILED || !rtt || pipe(up) || pipe(down))
		die("setup");
	pid = fork();
	if (pid < 0)
		die("fork");
	alarm(120);		/* whatever happens, both sides end */
	list = ibv_get_device_list(&n);
	ctx = list && n > 0 ? ibv_open_device(list[0]) : NULL;
	if (!ctx)
		die("ibv_open_device");
	if (pid == 0) {
		/* the child: echo each ping, then receive the one-way stream */
		ep_open(&b, ctx);
		qpn = b.qp->qp_num;
		if (write(up[1], &qpn, 4) != 4 || read(down[0], &qpn, 4) != 4)
			die("pipe");
		ep_connect(&b, qpn);
		ep_recv(&b, DEPTH);
		if (write(up[1], &qpn, 4) != 4)
			die("pipe");
		for (i = 0; i < iters; i++) {
			ep_wait_recv(&b, 1);
			ep_recv(&b, 1);
			ep_send(&b, (i % 64) == 63);
		}
		for (i = 0; i < iters * 10; ) {
			struct ibv_wc wc[32];
			int k, got = ibv_poll_cq(b.cq, 32, wc);

			for (k = 0; k < got; k++)
				if (wc[k].opcode == IBV_WC_RECV) {
					ep_recv(&b, 1);
					sh->received = (uint64_t)++i;
				}
		}
		ep_close(&b);
		ibv_close_device(ctx);
		ibv_free_device_list(list);
		_exit(0);
	}
	ep_open(&a, ctx);
	if (read(up[0], &qpn, 4) != 4)
		die("pipe");
	ep_connect(&a, qpn);
	qpn = a.qp->qp_num;
	if (write(down[1], &qpn, 4) != 4 || read(up[0], &qpn, 4) != 4)
		die("pipe");
	ep_recv(&a, DEPTH);
	for (i = 0; i < iters; i++) {
		long long t0 = now_ns();

		ep_send(&a, (i % 64) == 63);
		ep_wait_recv(&a, 1);
		ep_recv(&a, 1);
		rtt[i] = now_ns() - t0;
	}
	qsort(rtt, (size_t)iters, sizeof(*rtt), cmp_ll);
	printf("cross-process RC SEND %d B round trip: median %.2f us, p99 %.2f us (%ld iterations)\n",
	       MSG, rtt[iters / 2] / 1000.0, rtt[iters * 99 / 100] / 1000.0, iters);
	rate = rate_run(&a, NULL, sh, iters * 10);
	printf("cross-process RC SEND %d B one-way rate: %.0f messages/s\n", MSG, rate);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "ibvct-bench: child failed (%#x)\n", st);
	ep_close(&a);

	/* loopback: two QPs of this process */
	ep_open(&a, ctx);
	ep_open(&b, ctx);
	ep_connect(&a, b.qp->qp_num);
	ep_connect(&b, a.qp->qp_num);
	ep_recv(&b, DEPTH);
	sh->received = 0;
	rate = rate_run(&a, &b, sh, iters * 10);
	printf("in-process loopback RC SEND %d B rate: %.0f messages/s\n", MSG, rate);
	ep_close(&a);
	ep_close(&b);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(rtt);
	fp_rmtree(scratch);
	return 0;
}
