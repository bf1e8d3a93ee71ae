/* SPDX-License-Identifier: MIT */
/*
 * XRC objects shared between real processes through the verbs API, with the
 * fake provider backed by the fake kernel daemon, under both lifetime
 * models (script `lifetime current` / `seed`): owner destroys while another
 * process holds the QP, owner exits or is SIGKILLed without destroying,
 * the last holder closes its device, the XRCD goes with leftover QPs, and
 * events on a target QP reach every handle in its own process. Each
 * process is a forked agent driven over pipes; at the end of every test
 * the daemon holds no object and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "fp_script.h"
#include "fk_test.h"
#include "tf.h"

enum {
	A_OPEN = 1, A_XRCD, A_CLOSE_XRCD, A_CREATE, A_OPEN_QP, A_DESTROY, A_TO_RTR,
	A_QUERY, A_EVENT, A_CLOSE_DEV, A_EXIT, A_SRQ, A_SRQ_WAIT, A_XSEND, A_XPOST, A_XPOLL,
};

struct cmd {
	uint32_t op, a, b;
};

struct res {
	uint32_t status, value, slot;
};

#define MAX_SLOTS 8

static char scripts[4][PATH_MAX];	/* [seed][with event] */
static char xfile[PATH_MAX];

/* The walks of this program: no access flags and no RDMA read resources,
 * RNR timer 1, timeout 14 and 7 retries of each kind; the RTR step sends
 * the responder's attributes whatever the type (XRC_SEND too). */
static const struct tf_qp_opts walk = {
	.min_rnr_timer = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	.rtr_mask = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
};

static int agent_to_rtr(struct ibv_qp *q, uint32_t dest)
{
	struct ibv_ah_attr ah = { .port_num = 1 };
	int err = tf_qp_to_init_o(q, 1, &walk);

	return err ? err : tf_qp_to_rtr_av_o(q, &ah, dest, &walk);
}

/* One process with one device context, doing what the parent asks. */
static void agent_main(int in, int out, void *arg)
{
	struct ibv_device **list = NULL;
	struct ibv_context *ctx = NULL;
	struct ibv_xrcd *x = NULL;
	struct ibv_qp *slot[MAX_SLOTS] = { 0 };
	int nslots = 0, fd = -1, n;
	struct ibv_comp_channel *ch = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *sq = NULL;
	struct ibv_mr *mr = NULL;
	static char buf[4096];
	uint64_t posted = 0;		/* A_XPOST's WRs, numbered from 100 */
	struct ibv_wc wc;
	struct cmd c;

	(void)arg;
	while (!fkt_get(in, &c, sizeof(c))) {
		struct res r = { 0, 0, 0 };

		switch (c.op) {
		case A_OPEN:
			/* before the first ibv_* call: the script names the model */
			setenv("IBVCT_SCRIPT", scripts[c.a], 1);
			list = ibv_get_device_list(&n);
			ctx = list && n > 0 ? ibv_open_device(list[0]) : NULL;
			r.status = ctx ? 0 : (errno ? (uint32_t)errno : EIO);
			break;
		case A_XRCD: {
			struct ibv_xrcd_init_attr xa = {
				.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
				.oflags = (int)c.a,
			};

			if (fd < 0)
				fd = open(xfile, O_RDWR | O_CREAT, 0600);
			xa.fd = fd;
			errno = 0;
			x = ibv_open_xrcd(ctx, &xa);
			r.status = x ? 0 : (uint32_t)errno;
			break;
		}
		case A_CLOSE_XRCD:
			r.status = (uint32_t)ibv_close_xrcd(x);
			if (!r.status)
				x = NULL;
			break;
		case A_CREATE:
		case A_OPEN_QP: {
			struct ibv_qp *q;

			errno = 0;
			if (c.op == A_CREATE) {
				struct ibv_qp_init_attr_ex qa;

				memset(&qa, 0, sizeof(qa));
				qa.qp_type = IBV_QPT_XRC_RECV;
				qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
				qa.xrcd = x;
				q = ibv_create_qp_ex(ctx, &qa);
			} else {
				struct ibv_qp_open_attr oa;

				memset(&oa, 0, sizeof(oa));
				oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
					       IBV_QP_OPEN_ATTR_TYPE;
				oa.qp_num = c.a;
				oa.xrcd = x;
				oa.qp_type = IBV_QPT_XRC_RECV;
				q = ibv_open_qp(ctx, &oa);
			}
			r.status = q ? 0 : (uint32_t)errno;
			if (q) {
				TR_ASSERT(nslots < MAX_SLOTS);
				r.value = q->qp_num;
				r.slot = (uint32_t)nslots;
				slot[nslots++] = q;
			}
			break;
		}
		case A_DESTROY:
			r.status = (uint32_t)ibv_destroy_qp(slot[c.a]);
			slot[c.a] = NULL;
			break;
		case A_TO_RTR:
			r.status = (uint32_t)agent_to_rtr(slot[c.a], 0x77);
			break;
		case A_SRQ: {
			/* an XRC SRQ of the shared domain, with receives posted */
			struct ibv_srq_init_attr_ex sa;
			struct ibv_sge sge;
			struct ibv_recv_wr wr, *bad;
			uint32_t num = 0;
			int i;

			ch = ibv_create_comp_channel(ctx);
			pd = ibv_alloc_pd(ctx);
			cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
			mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
			TR_ASSERT(ch && pd && cq && mr);
			memset(&sa, 0, sizeof(sa));
			sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
			sa.srq_type = IBV_SRQT_XRC;
			sa.pd = pd;
			sa.xrcd = x;
			sa.cq = cq;
			sa.attr.max_wr = 8;
			sa.attr.max_sge = 1;
			srq = ibv_create_srq_ex(ctx, &sa);
			r.status = srq ? 0 : (uint32_t)errno;
			for (i = 0; srq && i < 4; i++) {
				sge.addr = (uintptr_t)buf + 512u * (unsigned)i;
				sge.length = 512;
				sge.lkey = mr->lkey;
				memset(&wr, 0, sizeof(wr));
				wr.wr_id = 900u + (unsigned)i;
				wr.sg_list = &sge;
				wr.num_sge = 1;
				TR_ASSERT(!ibv_post_srq_recv(srq, &wr, &bad));
			}
			if (srq && !ibv_get_srq_num(srq, &num))
				r.value = num;
			break;
		}
		case A_SRQ_WAIT: {
			/* arm, say so, sleep on the channel's fd until the delivery */
			struct pollfd p = { .fd = ch->fd, .events = POLLIN };
			struct ibv_cq *ecq;
			void *ectx;

			r.status = (uint32_t)ibv_req_notify_cq(cq, 0);
			if (fkt_put(out, &r, sizeof(r)))
				_exit(3);
			r.status = ETIMEDOUT;
			if (poll(&p, 1, (int)(10000 * fkt_mult())) == 1 &&
			    !ibv_get_cq_event(ch, &ecq, &ectx) && ecq == cq &&
			    ibv_poll_cq(cq, 1, &wc) == 1) {
				ibv_ack_cq_events(ecq, 1);
				r.status = wc.status;
				r.value = wc.qp_num;
				r.slot = (uint32_t)wc.wr_id;
				TR_ASSERT(wc.opcode == IBV_WC_RECV && wc.byte_len == 32);
				TR_ASSERT(!memcmp(buf + (wc.wr_id - 900) * 512, "xrc A->B->C", 12));
			}
			break;
		}
		case A_XPOST:
		case A_XSEND: {
			/* an XRC_SEND QP to target QP c.a; a SEND to XRC SRQ c.b,
			 * waited for (A_XSEND) or not (A_XPOST) */
			struct ibv_qp_init_attr_ex qa;
			struct ibv_sge sge;
			struct ibv_send_wr wr, *bad;
			long long end;

			if (!sq) {
				pd = ibv_alloc_pd(ctx);
				cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
				mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)
					: NULL;
				TR_ASSERT(pd && cq && mr);
				memset(&qa, 0, sizeof(qa));
				qa.qp_type = IBV_QPT_XRC_SEND;
				qa.comp_mask = IBV_QP_INIT_ATTR_PD;
				qa.pd = pd;
				qa.send_cq = cq;
				qa.cap.max_send_wr = 8;
				qa.cap.max_send_sge = 1;
				sq = ibv_create_qp_ex(ctx, &qa);
				TR_ASSERT(sq);
				TR_ASSERT(!agent_to_rtr(sq, c.a));
				TR_ASSERT(!tf_qp_to_rts_o(sq, &walk));
			}
			memcpy(buf, "xrc A->B->C", 12);
			sge.addr = (uintptr_t)buf;
			sge.length = 32;
			sge.lkey = mr->lkey;
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = c.op == A_XPOST ? 100 + posted++ : 5;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_SEND;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.qp_type.xrc.remote_srqn = c.b;
			r.status = (uint32_t)ibv_post_send(sq, &wr, &bad);
			if (c.op == A_XPOST)
				break;
			end = fkt_ms() + 10000 * fkt_mult();
			while (!r.status && ibv_poll_cq(cq, 1, &wc) == 0 && fkt_ms() < end)
				;
			r.value = r.status ? 0 : wc.status;
			break;
		}
		case A_XPOLL: {
			/* A_XPOST'"'"'s completions: up to c.a of them in c.b ms; slot 1
			 * when each succeeded, in the order posted */
			long long end = fkt_ms() + (long long)c.b * fkt_mult();
			uint64_t next = 100;

			r.slot = 1;
			while (r.value < c.a && fkt_ms() < end) {
				if (ibv_poll_cq(cq, 1, &wc) != 1)
					continue;
				if (wc.status != IBV_WC_SUCCESS || wc.wr_id != next++)
					r.slot = 0;
				r.value++;
			}
			break;
		}
		case A_QUERY: {
			struct ibv_qp_attr a;
			struct ibv_qp_init_attr ia;

			r.status = (uint32_t)ibv_query_qp(slot[c.a], &a, IBV_QP_STATE, &ia);
			r.value = r.status ? 0 : (uint32_t)a.qp_state;
			break;
		}
		case A_EVENT: {
			/* the next async event: its type, and which slot it names */
			struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
			struct ibv_async_event ev;
			int i;

			r.status = ETIMEDOUT;
			if (poll(&p, 1, (int)(5000 * fkt_mult())) == 1 &&
			    !ibv_get_async_event(ctx, &ev)) {
				r.status = 0;
				r.value = (uint32_t)ev.event_type;
				r.slot = UINT32_MAX;
				for (i = 0; i < nslots; i++)
					if (slot[i] && slot[i] == ev.element.qp)
						r.slot = (uint32_t)i;
				ibv_ack_async_event(&ev);
			}
			break;
		}
		case A_CLOSE_DEV:
			/* everything is left behind for the close to release */
			r.status = (uint32_t)ibv_close_device(ctx);
			ctx = NULL;
			x = NULL;
			memset(slot, 0, sizeof(slot));
			break;
		case A_EXIT:
			_exit(0);	/* nothing destroyed, nothing closed */
		default:
			_exit(2);
		}
		if (fkt_put(out, &r, sizeof(r)))
			_exit(3);
	}
	/* EOF: the parent is done with us; a tidy end */
	if (ctx) {
		if (sq)
			ibv_destroy_qp(sq);
		if (srq)
			ibv_destroy_srq(srq);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (ch)
			ibv_destroy_comp_channel(ch);
		if (pd)
			ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
	}

	if (list)
		ibv_free_device_list(list);
	if (fd >= 0)
		close(fd);
}

static struct res do_cmd2(struct fkt_proc *p, uint32_t op, uint32_t a, uint32_t b)
{
	struct cmd c = { op, a, b };
	struct res r = { UINT32_MAX, 0, 0 };

	assert_int_equal(fkt_put(p->to, &c, sizeof(c)), 0);
	assert_int_equal(fkt_get(p->from, &r, sizeof(r)), 0);
	return r;
}

static struct res do_cmd(struct fkt_proc *p, uint32_t op, uint32_t a)
{
	return do_cmd2(p, op, a, 0);
}

static uint32_t ok_cmd(struct fkt_proc *p, uint32_t op, uint32_t a)
{
	struct res r = do_cmd(p, op, a);

	if (r.status)
		printf("# agent %ld: op %u(%u): %s\n", (long)p->pid, op, a,
		       strerror((int)r.status));
	assert_int_equal(r.status, 0);
	return r.value;
}

/* An agent with its device open and the shared XRCD open (O_CREAT). */
static struct fkt_proc agent(bool seed, bool with_event)
{
	struct fkt_proc p = fkt_spawn(agent_main, NULL);

	ok_cmd(&p, A_OPEN, (seed ? 1u : 0u) | (with_event ? 2u : 0u));
	ok_cmd(&p, A_XRCD, O_CREAT);
	return p;
}

/* Wait until the daemon has seen n connections go (counting the monitor):
 * a process's end reaches the daemon asynchronously, as a uverbs fd's
 * release runs after exit. */
static void wait_conns(struct fk_client *m, long n)
{
	long long end = fkt_ms() + 10000 * fkt_mult();
	char *d = malloc(FK_REPLY_MAX + 1);
	long now = -1;

	assert_non_null(d);
	while (fkt_ms() < end) {
		assert_int_equal(fk_dump(m, d, FK_REPLY_MAX + 1), 0);
		now = fkt_field(d, "conns");
		if (now == n)
			break;
		usleep(1000);
	}
	free(d);
	assert_int_equal(now, n);
}

/* The agent exits at once, leaving everything behind. */
static void agent_exit(struct fkt_proc *p)
{
	struct cmd c = { A_EXIT, 0, 0 };
	int st;

	assert_int_equal(fkt_put(p->to, &c, sizeof(c)), 0);
	fkt_fd_track(p->to, false);
	fkt_fd_track(p->from, false);
	close(p->to);
	close(p->from);
	st = fkt_wait(p->pid, 20000);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static bool is_seed(void **state)
{
	return fkt_life(state) == FK_LIFETIME_SEED;
}

/* Nothing left in the daemon, which exits once the monitor goes. */
static void all_released(struct fk_client *m)
{
	pid_t pid = fk_daemon_pid(m);

	assert_int_equal(fkt_objects(m), 0);
	fk_disconnect(m);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

/* LIFE-02/03: the creator destroys while another process holds the QP. */
FKT_BOTH_IDS(owner_destroy_keeps_qp_for_other_process, "LIFE-02 LIFE-03")
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc b = agent(seed, false), c = agent(seed, false), d = agent(seed, false);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0);
	struct res r;

	ok_cmd(&b, A_TO_RTR, 0);
	r = do_cmd(&c, A_OPEN_QP, qpn);
	assert_int_equal(r.status, 0);
	assert_int_equal(ok_cmd(&b, A_DESTROY, 0), 0);			/* LIFE-02 */
	assert_int_equal(ok_cmd(&c, A_QUERY, r.slot), IBV_QPS_RTR);	/* still works */
	r = do_cmd(&d, A_OPEN_QP, qpn);					/* still openable */
	assert_int_equal(r.status, 0);
	ok_cmd(&c, A_DESTROY, 0);
	ok_cmd(&d, A_DESTROY, r.slot);					/* the last handle */
	assert_int_equal(do_cmd(&b, A_OPEN_QP, qpn).status, EINVAL);	/* LIFE-03 */
	fkt_reap(&b);
	fkt_reap(&c);
	fkt_reap(&d);
	all_released(m);
}

/* LIFE-04 (current) / LIFE-05 (seed): the owner ends without destroying,
 * by exit or by SIGKILL; the other holder is unaffected either way. */
static void owner_gone(void **state, bool kill_it)
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc b = agent(seed, false), c = agent(seed, false), d = agent(seed, false);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0), qpn2;
	struct res r;

	ok_cmd(&b, A_TO_RTR, 0);
	qpn2 = ok_cmd(&b, A_CREATE, 0);				/* nobody else holds this one */
	r = do_cmd(&c, A_OPEN_QP, qpn);
	assert_int_equal(r.status, 0);
	if (kill_it)
		fkt_kill(&b);
	else
		agent_exit(&b);
	wait_conns(m, 3);
	assert_int_equal(ok_cmd(&c, A_QUERY, r.slot), IBV_QPS_RTR);
	/* the QP only the owner held: gone (current), left over (seed) */
	r = do_cmd(&d, A_OPEN_QP, qpn2);
	assert_int_equal(r.status, seed ? 0 : EINVAL);
	if (seed) {
		ok_cmd(&d, A_DESTROY, r.slot);		/* a later last explicit destroy */
		assert_int_equal(do_cmd(&d, A_OPEN_QP, qpn2).status, EINVAL);
	}
	fkt_reap(&c);
	fkt_reap(&d);
	all_released(m);
}

FKT_BOTH_IDS(owner_exits_without_destroy, "LIFE-04 LIFE-05 LIFE-06")
{
	owner_gone(state, false);
}

FKT_BOTH_IDS(owner_sigkilled_without_destroy, "LIFE-04 LIFE-05 XRCD-17")
{
	owner_gone(state, true);
}

/* The last holder (not the creator) closes its device with the handle open. */
FKT_BOTH_IDS(last_holder_closes_device, "LIFE-04 LIFE-05 XRCD-17")
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc b = agent(seed, false), c = agent(seed, false), d = agent(seed, false);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0);
	struct res r;

	assert_int_equal(do_cmd(&c, A_OPEN_QP, qpn).status, 0);
	ok_cmd(&b, A_DESTROY, 0);
	ok_cmd(&c, A_CLOSE_DEV, 0);
	r = do_cmd(&d, A_OPEN_QP, qpn);
	assert_int_equal(r.status, seed ? 0 : EINVAL);		/* LIFE-04 / LIFE-05 */
	if (seed)
		ok_cmd(&d, A_DESTROY, r.slot);
	fkt_reap(&b);
	fkt_reap(&c);
	fkt_reap(&d);
	all_released(m);
}

/* XRCD-14/15 with LIFE-05: the domain goes with its last use. In the seed
 * model a leftover QP holds one, so the inode binding outlives the last
 * handle and the leftover can be opened again; its last explicit destroy
 * then lets the domain go. Current: the QP died with b. */
FKT_BOTH_IDS(xrcd_destroyed_with_leftover_qps, "XRCD-14 XRCD-15 LIFE-05")
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc b = agent(seed, false), c = agent(seed, false);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0);
	struct res r;

	agent_exit(&b);
	wait_conns(m, 2);
	ok_cmd(&c, A_CLOSE_XRCD, 0);				/* the last handle */
	if (seed) {
		ok_cmd(&c, A_XRCD, 0);				/* the same domain */
		r = do_cmd(&c, A_OPEN_QP, qpn);
		assert_int_equal(r.status, 0);
		ok_cmd(&c, A_DESTROY, r.slot);			/* the last handle: gone */
		ok_cmd(&c, A_CLOSE_XRCD, 0);			/* the domain's last use */
	}
	assert_int_equal(do_cmd(&c, A_XRCD, 0).status, EAGAIN);	/* XRCD-15 */
	ok_cmd(&c, A_XRCD, O_CREAT);				/* a brand-new domain */
	assert_int_equal(do_cmd(&c, A_OPEN_QP, qpn).status, EINVAL);
	fkt_reap(&c);
	all_released(m);
}

/* LIFE-08: an event on the real QP reaches each handle, in each process,
 * naming that process's own ibv_qp. The raiser's script raises comm_est
 * after its first query_qp. */
FKT_BOTH_IDS(events_reach_every_handle_in_its_own_process, "LIFE-08")
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc b = agent(seed, false), c = agent(seed, false), e = agent(seed, true);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0);
	struct res r, rb1, rb2;

	assert_int_equal(do_cmd(&b, A_OPEN_QP, qpn).status, 0);	/* b: slots 0, 1 */
	assert_int_equal(do_cmd(&c, A_OPEN_QP, qpn).status, 0);	/* c: slot 0 */
	r = do_cmd(&e, A_OPEN_QP, qpn);
	assert_int_equal(r.status, 0);
	do_cmd(&e, A_QUERY, r.slot);					/* raises it */
	rb1 = do_cmd(&b, A_EVENT, 0);
	rb2 = do_cmd(&b, A_EVENT, 0);
	assert_int_equal(rb1.status, 0);
	assert_int_equal(rb2.status, 0);
	assert_int_equal(rb1.value, IBV_EVENT_COMM_EST);
	assert_int_equal(rb2.value, IBV_EVENT_COMM_EST);
	assert_true(rb1.slot <= 1 && rb2.slot <= 1 && rb1.slot != rb2.slot);
	r = do_cmd(&c, A_EVENT, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.value, IBV_EVENT_COMM_EST);
	assert_int_equal(r.slot, 0);
	r = do_cmd(&e, A_EVENT, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.slot, 0);
	fkt_reap(&b);
	fkt_reap(&c);
	fkt_reap(&e);
	all_released(m);
}

/* XRC delivery across three processes: A's XRC_SEND QP sends to the target
 * QP that B created, naming the XRC SRQ that C created; the completion is
 * on C's CQ and wakes C's completion channel while C only sleeps on it.
 * Then B destroys the target QP: A's next send finds no receiver. */
FKT_BOTH_IDS(xrc_send_a_to_tgt_b_to_srq_c, "XRCD-08 SRQX-13 WR-03 LIFE-03")
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc a = agent(seed, false), b = agent(seed, false), c = agent(seed, false);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0), srqn;
	struct cmd w = { A_SRQ_WAIT, 0, 0 };
	struct res r;

	ok_cmd(&b, A_TO_RTR, 0);
	srqn = ok_cmd(&c, A_SRQ, 0);
	assert_int_equal(fkt_put(c.to, &w, sizeof(w)), 0);
	assert_int_equal(fkt_get(c.from, &r, sizeof(r)), 0);		/* armed, asleep */
	assert_int_equal(r.status, 0);
	r = do_cmd2(&a, A_XSEND, qpn, srqn);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.value, IBV_WC_SUCCESS);
	assert_int_equal(fkt_get(c.from, &r, sizeof(r)), 0);		/* woken */
	assert_int_equal(r.status, IBV_WC_SUCCESS);
	assert_int_equal(r.value, qpn);				/* the target QP's number */
	/* a SRQ number that is not an XRC SRQ of the domain: REM_INV_REQ */
	r = do_cmd2(&a, A_XSEND, qpn, srqn + 1000);
	assert_int_equal(r.value, IBV_WC_REM_INV_REQ_ERR);
	fkt_reap(&a);
	a = agent(seed, false);
	/* a sender keeps the route it learned only while nothing changed it:
	 * once the target QP is gone, its next message is lost too */
	r = do_cmd2(&a, A_XSEND, qpn, srqn);
	assert_int_equal(r.value, IBV_WC_SUCCESS);
	ok_cmd(&b, A_DESTROY, 0);					/* LIFE-03 */
	r = do_cmd2(&a, A_XSEND, qpn, srqn);
	assert_int_equal(r.value, IBV_WC_RETRY_EXC_ERR);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_reap(&c);
	all_released(m);
}

/*
 * A cumulative ACK completes only what went where it came from: an
 * XRC_SEND QP'"'"'s first SEND waits in the inbox of a process that is
 * stopped, its second is executed by another, whose ACK of it must not
 * complete the first; once the first process runs again, both complete,
 * in the order posted.
 */
FKT_BOTH_IDS(xrc_ack_completes_only_what_went_to_its_sender, "WR-03")
{
	bool seed = is_seed(state);
	struct fk_client *m = fkt_monitor();
	struct fkt_proc a = agent(seed, false), b = agent(seed, false), c = agent(seed, false);
	uint32_t qpn = ok_cmd(&b, A_CREATE, 0), srq_b, srq_c;
	struct res r;

	ok_cmd(&b, A_TO_RTR, 0);
	srq_b = ok_cmd(&b, A_SRQ, 0);
	srq_c = ok_cmd(&c, A_SRQ, 0);
	fkt_stop(&b);
	assert_int_equal(do_cmd2(&a, A_XPOST, qpn, srq_b).status, 0);
	assert_int_equal(do_cmd2(&a, A_XPOST, qpn, srq_c).status, 0);
	r = do_cmd2(&a, A_XPOLL, 2, 300);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.value, 0);		/* behind the one b has not run */
	assert_int_equal(kill(b.pid, SIGCONT), 0);
	r = do_cmd2(&a, A_XPOLL, 2, 10000);
	assert_int_equal(r.value, 2);
	assert_int_equal(r.slot, 1);
	fkt_reap(&a);
	fkt_reap(&b);
	fkt_reap(&c);
	all_released(m);
}

static void write_script(char *path, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, PATH_MAX, "%s/%s", fkt_scratch, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		fkt_die("%s: %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
	static const char dev[] = "device fake0\n\tcap xrc\n";
	char text[256], scratch[PATH_MAX], err[512];
	int i;

	fkt_setup("t5820");
	for (i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "lifetime %s\n%s%s", (i & 1) ? "seed" : "current",
			 (i & 2) ? "event comm_est after query_qp 1\n" : "", dev);
		snprintf(err, sizeof(err), "model%d.script", i);
		write_script(scripts[i], err, text);
	}
	snprintf(xfile, sizeof(xfile), "%s/xrcd-file", fkt_scratch);
	/* The fake sysfs tree and provider; each test's run dir is its own (fkt_run). */
	if (fp_env_setup(scripts[0], getenv("IBVCT_PROVIDER"), fkt_scratch, scratch,
			 sizeof(scratch), err, sizeof(err)))
		fkt_die("fp_env_setup: %s", err);
	return fkt_run(argc, argv);
}
