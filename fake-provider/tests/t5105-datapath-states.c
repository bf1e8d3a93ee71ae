/* SPDX-License-Identifier: MIT */
/*
 * t5105: the data path's state machines as the trace names them (script
 * `trace FILE states`): the path one message takes through the requester,
 * the responder and the completer (fake-provider/engine/requester.c,
 * responder.c, completer.c), one line per run, for a SEND between two QPs
 * of one process, the RNR NAK of a SEND with no receive posted, the NAK of
 * an RDMA WRITE with a bad rkey, a SEND to a QP of another process (through
 * the transport: ROUTE, XMIT, SENT, and the response later), and no state
 * line at all without `states`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "tf.h"
#include "tr.h"

#define TRACE	"states.log"

/* The fake host's scratch dir (a short path: the fake kernel's socket is in it). */
static char scratch[4096];

struct box {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char buf[256];
	uint16_t lid;
};

/* This test's own fake host, its script tracing calls [and states]. */
static void host(bool states)
{
	char err[512], path[64];
	FILE *f;

	snprintf(path, sizeof(path), "t5105.fps");
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "trace %s%s\ndevice fake0\n\tport 1 state active\n", TRACE,
		states ? " states" : "");
	assert_int_equal(fclose(f), 0);
	if (fp_env_setup(path, getenv("IBVCT_PROVIDER"), NULL, scratch, sizeof(scratch), err,
			 sizeof(err)))
		tr_fail("%s", err);
}

static void box_open(struct box *b)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	assert_non_null(l);
	assert_non_null(l[0]);
	b->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	assert_non_null(b->ctx);
	assert_int_equal(ibv_query_port(b->ctx, 1, &pa), 0);
	b->lid = pa.lid;
	b->pd = ibv_alloc_pd(b->ctx);
	assert_non_null(b->pd);
	b->mr = ibv_reg_mr(b->pd, b->buf, sizeof(b->buf), IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(b->mr);
}

/* An RC QP with a CQ of its own. */
static struct ibv_qp *rc_qp(struct box *b)
{
	struct ibv_cq *cq = ibv_create_cq(b->ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;

	assert_non_null(cq);
	qp = ibv_create_qp(b->pd, &ia);
	assert_non_null(qp);
	return qp;
}

/* INIT, RTR to dest, RTS (rnr_retry 0: an RNR NAK fails the WQE at once). */
/* RC to RTS toward DEST at LID: remote writes only, RNR timer 1, no RNR retry. */
static const struct tf_qp_opts rc_opts = {
	.access = IBV_ACCESS_REMOTE_WRITE, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
	.timeout = 14, .retry_cnt = 7, .rnr_retry = 0, .max_rd_atomic = 1 };

static void rc_connect(struct ibv_qp *qp, uint32_t dest, uint16_t lid)
{
	struct ibv_ah_attr ah = { .dlid = lid, .port_num = 1 };

	assert_int_equal(tf_qp_connect_av_o(qp, &ah, dest, &rc_opts), 0);
}

static void post_recv(struct box *b, struct ibv_qp *qp)
{
	struct ibv_sge sge = { (uintptr_t)b->buf + 128, 128, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

static void post(struct box *b, struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)b->buf, 16, b->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b->buf + 128, .rkey = rkey },
	}, *bad;

	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
}

/* The status of the next completion of qp. */
static enum ibv_wc_status poll_one(struct ibv_qp *qp)
{
	struct ibv_wc wc;
	long long end = tr_now_ms() + 10000 * tr_timeout_mult();

	for (;;) {
		int n = ibv_poll_cq(qp->send_cq, 1, &wc);

		assert_true(n >= 0);
		if (n)
			return wc.status;
		if (tr_now_ms() > end)
			tr_fail("no completion on QP %u", qp->qp_num);
		usleep(1000);		/* a short trace */
	}
}

/* The whole trace (the caller frees it). */
static char *trace_text(void)
{
	FILE *f = fopen(TRACE, "r");
	char *text;
	long size;
	size_t n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	text = malloc((size_t)size + 1);
	assert_non_null(text);
	n = fread(text, 1, (size_t)size, f);
	text[n] = 0;
	fclose(f);
	return text;
}

/* A line of the trace is "<pid> " and then exactly the formatted text. */
static void want_line(const char *text, const char *fmt, ...)
{
	const char *p = text;
	char want[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	while (*p) {
		const char *e = strchr(p, '\n'), *s = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (s && s < p + n && (size_t)(p + n - s - 1) == strlen(want) &&
		    !strncmp(s + 1, want, strlen(want)))
			return;
		p += e ? n + 1 : n;
	}
	tr_fail("no trace line '%s' in %s", want, TRACE);
}

static int host_remove(void **state);

TR_TEST_FX(send_between_two_qps_of_one_process, NULL, host_remove)
{
	struct box b;
	struct ibv_qp *x, *y;
	char *t;

	host(true);
	box_open(&b);
	x = rc_qp(&b);
	y = rc_qp(&b);
	rc_connect(x, y->qp_num, b.lid);
	rc_connect(y, x->qp_num, b.lid);
	post_recv(&b, y);
	post(&b, x, IBV_WR_SEND, 0);
	assert_int_equal(poll_one(x), IBV_WC_SUCCESS);
	assert_int_equal(poll_one(y), IBV_WC_SUCCESS);
	t = trace_text();
	want_line(t, "req qpn %u wqe 1 psn 0 SEND to %u: "
		  "READ_WQE GET_DEST EXECUTE_HERE ANSWERED",
		  x->qp_num, y->qp_num);
	want_line(t, "resp qpn %u psn 0 from %u SEND: "
		  "GET_QP CHK_SEQ CHK_OP GET_RWQE CHK_LKEY CHK_LENGTH PLACE COMPLETE "
		  "ACKNOWLEDGE -> ACK_OK",
		  y->qp_num, x->qp_num);
	want_line(t, "comp qpn %u wqe 1 ACK_OK: "
		  "CHECK_ACK WQE_DONE",
		  x->qp_num);
	want_line(t, "comp qpn %u wqe 1: "
		  "COMPLETE GET_WQE DRAINED",
		  x->qp_num);
	free(t);
}

TR_TEST_FX(rnr_nak_and_bad_rkey_take_their_error_states, NULL, host_remove)
{
	struct box b;
	struct ibv_qp *x, *y, *u, *v;
	char *t;

	host(true);
	box_open(&b);
	x = rc_qp(&b);
	y = rc_qp(&b);
	u = rc_qp(&b);
	v = rc_qp(&b);
	rc_connect(x, y->qp_num, b.lid);
	rc_connect(y, x->qp_num, b.lid);
	rc_connect(u, v->qp_num, b.lid);
	rc_connect(v, u->qp_num, b.lid);
	post(&b, x, IBV_WR_SEND, 0);		/* no receive posted, rnr_retry 0 */
	assert_int_equal(poll_one(x), IBV_WC_RNR_RETRY_EXC_ERR);
	post(&b, u, IBV_WR_RDMA_WRITE, b.mr->rkey + 1);
	assert_int_equal(poll_one(u), IBV_WC_REM_ACCESS_ERR);
	t = trace_text();
	want_line(t, "resp qpn %u psn 0 from %u SEND: "
		  "GET_QP CHK_SEQ CHK_OP GET_RWQE ERR_RNR ACKNOWLEDGE -> NAK_RNR",
		  y->qp_num, x->qp_num);
	want_line(t, "comp qpn %u wqe 1 NAK_RNR: "
		  "CHECK_ACK RNR_RETRY WQE_DONE",
		  x->qp_num);
	want_line(t, "comp qpn %u wqe 1: "
		  "COMPLETE ERROR",
		  x->qp_num);
	want_line(t, "resp qpn %u psn 0 from %u WRITE: "
		  "GET_QP CHK_SEQ CHK_OP CHK_RKEY ERR_RKEY ACKNOWLEDGE -> NAK_REM_ACCESS",
		  v->qp_num, u->qp_num);
	want_line(t, "comp qpn %u wqe 1 NAK_REM_ACCESS: "
		  "CHECK_ACK WQE_DONE",
		  u->qp_num);
	free(t);
}

/* The peer: a QP that receives one SEND from the test's process. */
static void peer_receives(struct tr_peer *self, void *arg)
{
	struct box b;
	struct ibv_qp *y;

	box_open(&b);
	y = rc_qp(&b);
	tr_send(self, y->qp_num);
	tr_send(self, b.lid);
	rc_connect(y, tr_recv(self), b.lid);
	post_recv(&b, y);
	tr_send(self, 1);			/* ready */
	assert_int_equal(poll_one(y), IBV_WC_SUCCESS);
	assert_int_equal(tr_recv(self), 2);	/* the sender is done */
}

TR_TEST_FX(send_to_another_process_goes_through_the_transport, NULL, host_remove)
{
	struct tr_peer p;
	struct box b;
	struct ibv_qp *x;
	uint32_t yqpn, lid;
	char *t;

	host(true);
	tr_peer_start(&p, peer_receives, NULL);
	box_open(&b);
	x = rc_qp(&b);
	yqpn = tr_recv(&p);
	lid = tr_recv(&p);
	tr_send(&p, x->qp_num);
	rc_connect(x, yqpn, (uint16_t)lid);
	assert_int_equal(tr_recv(&p), 1);
	post(&b, x, IBV_WR_SEND, 0);
	assert_int_equal(poll_one(x), IBV_WC_SUCCESS);
	tr_send(&p, 2);
	assert_int_equal(tr_peer_wait(&p), 0);
	t = trace_text();
	want_line(t, "req qpn %u wqe 1 psn 0 SEND to %u: "
		  "READ_WQE GET_DEST ROUTE XMIT SENT",
		  x->qp_num, yqpn);
	want_line(t, "resp qpn %u psn 0 from %u SEND: "
		  "GET_QP CHK_SEQ CHK_OP GET_RWQE CHK_LKEY CHK_LENGTH PLACE COMPLETE "
		  "ACKNOWLEDGE -> ACK_OK",
		  yqpn, x->qp_num);
	want_line(t, "comp qpn %u wqe 1 ACK_OK: "
		  "CHECK_ACK WQE_DONE",
		  x->qp_num);
	free(t);
}

/* The peer of the one-sided rows: two QPs (the second for a bad key) on a
 * region of anonymous memory that grants every remote access. */
static void peer_one_sided_target(struct tr_peer *self, void *arg)
{
	static const struct tf_qp_opts all = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 0, .max_rd_atomic = 1 };
	struct ibv_ah_attr ah = { .port_num = 1 };
	struct ibv_qp *y, *z;
	struct ibv_mr *mr;
	struct box b;
	char *mem;

	box_open(&b);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TR_ASSERT(mem != MAP_FAILED);
	mr = ibv_reg_mr(b.pd, mem, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	TR_ASSERT(mr);
	y = rc_qp(&b);
	z = rc_qp(&b);
	tr_send(self, y->qp_num);
	tr_send(self, z->qp_num);
	tr_send(self, b.lid);
	tr_send(self, mr->rkey);
	tr_send(self, (uint32_t)(uintptr_t)mem);
	tr_send(self, (uint32_t)((uint64_t)(uintptr_t)mem >> 32));
	ah.dlid = b.lid;
	TR_ASSERT(tf_qp_connect_av_o(y, &ah, tr_recv(self), &all) == 0);
	TR_ASSERT(tf_qp_connect_av_o(z, &ah, tr_recv(self), &all) == 0);
	tr_send(self, 1);			/* ready */
	TR_ASSERT(tr_recv(self) == 2);		/* the requester is done */
}

static void post_one_sided(struct box *b, struct ibv_qp *qp, enum ibv_wr_opcode op,
			   uint64_t raddr, uint32_t rkey)
{
	bool atomic = op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	struct ibv_sge sge = { (uintptr_t)b->buf, atomic ? 8 : 16, b->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (atomic) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
}

TR_TEST_FX(one_sided_to_another_process_is_placed_by_the_requester, NULL, host_remove)
{
	static const struct tf_qp_opts all = {
		.access = IBV_ACCESS_REMOTE_WRITE, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 0, .max_rd_atomic = 1 };
	struct ibv_ah_attr ah = { .port_num = 1 };
	struct tr_peer p;
	struct box b;
	struct ibv_qp *x, *u;
	uint32_t yqpn, zqpn, rkey;
	uint64_t addr;
	char *t, no[128];

	host(true);
	tr_peer_start(&p, peer_one_sided_target, NULL);
	box_open(&b);
	x = rc_qp(&b);
	u = rc_qp(&b);
	yqpn = tr_recv(&p);
	zqpn = tr_recv(&p);
	ah.dlid = (uint16_t)tr_recv(&p);
	rkey = tr_recv(&p);
	addr = tr_recv(&p);
	addr |= (uint64_t)tr_recv(&p) << 32;
	tr_send(&p, x->qp_num);
	tr_send(&p, u->qp_num);
	assert_int_equal(tf_qp_connect_av_o(x, &ah, yqpn, &all), 0);
	assert_int_equal(tf_qp_connect_av_o(u, &ah, zqpn, &all), 0);
	assert_int_equal(tr_recv(&p), 1);
	post_one_sided(&b, x, IBV_WR_RDMA_WRITE, addr, rkey);
	assert_int_equal(poll_one(x), IBV_WC_SUCCESS);
	post_one_sided(&b, x, IBV_WR_RDMA_READ, addr, rkey);
	assert_int_equal(poll_one(x), IBV_WC_SUCCESS);
	post_one_sided(&b, x, IBV_WR_ATOMIC_FETCH_AND_ADD, addr + 64, rkey);
	assert_int_equal(poll_one(x), IBV_WC_SUCCESS);
	post_one_sided(&b, u, IBV_WR_RDMA_WRITE, addr, rkey + 1);
	assert_int_equal(poll_one(u), IBV_WC_REM_ACCESS_ERR);
	tr_send(&p, 2);
	assert_int_equal(tr_peer_wait(&p), 0);
	t = trace_text();
	want_line(t, "req qpn %u wqe 1 psn 0 WRITE to %u: "
		  "READ_WQE GET_DEST ROUTE PLACE ANSWERED", x->qp_num, yqpn);
	want_line(t, "comp qpn %u wqe 1 ACK_OK: CHECK_ACK WQE_DONE", x->qp_num);
	want_line(t, "req qpn %u wqe 2 psn 1 READ to %u: "
		  "READ_WQE GET_DEST ROUTE PLACE ANSWERED", x->qp_num, yqpn);
	want_line(t, "comp qpn %u wqe 2 ACK_OK: CHECK_ACK READ WQE_DONE", x->qp_num);
	want_line(t, "req qpn %u wqe 3 psn 2 FETCH_ADD to %u: "
		  "READ_WQE GET_DEST ROUTE PLACE ANSWERED", x->qp_num, yqpn);
	want_line(t, "comp qpn %u wqe 3 ACK_OK: CHECK_ACK ATOMIC WQE_DONE", x->qp_num);
	/* the target's responder never ran for them */
	snprintf(no, sizeof(no), " resp qpn %u ", yqpn);
	if (strstr(t, no))
		tr_fail("the target's responder ran for a placed operation (%s)", no);
	/* a bad key: the target's responder answers, as ever */
	want_line(t, "req qpn %u wqe 1 psn 0 WRITE to %u: "
		  "READ_WQE GET_DEST ROUTE PLACE XMIT SENT", u->qp_num, zqpn);
	want_line(t, "resp qpn %u psn 0 from %u WRITE: "
		  "GET_QP CHK_SEQ CHK_OP CHK_RKEY ERR_RKEY ACKNOWLEDGE -> NAK_REM_ACCESS",
		  zqpn, u->qp_num);
	want_line(t, "comp qpn %u wqe 1 NAK_REM_ACCESS: CHECK_ACK WQE_DONE", u->qp_num);
	free(t);
}

TR_TEST_FX(without_states_the_trace_has_calls_only, NULL, host_remove)
{
	struct box b;
	struct ibv_qp *x, *y;
	char *t;

	host(false);
	box_open(&b);
	x = rc_qp(&b);
	y = rc_qp(&b);
	rc_connect(x, y->qp_num, b.lid);
	rc_connect(y, x->qp_num, b.lid);
	post_recv(&b, y);
	post(&b, x, IBV_WR_SEND, 0);
	assert_int_equal(poll_one(x), IBV_WC_SUCCESS);
	t = trace_text();
	assert_non_null(strstr(t, " post_send(qpn="));
	assert_null(strstr(t, " req qpn "));
	assert_null(strstr(t, " resp qpn "));
	assert_null(strstr(t, " comp qpn "));
	free(t);
}

static int host_remove(void **state)
{
	if (scratch[0])
		fp_rmtree(scratch);
	return 0;
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
