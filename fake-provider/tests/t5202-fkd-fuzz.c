/* SPDX-License-Identifier: MIT */
/*
 * t5202: the fake kernel daemon under bounded random and mutated messages
 * from several connections at once (20000 by default, seeded: the seed is
 * printed, IBVCT_SEED repeats a run). Every message gets its one reply or
 * the connection is closed; the daemon never stops answering, a well-
 * behaved connection is served throughout, the dump's self-check finds no
 * inconsistency, a client that never reads is dropped at its queue bound,
 * and at the end nothing is left and the daemon exits cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "fk_test.h"

#define NCONN		4
#define NMSG		20000

static unsigned seed;

static uint32_t rnd(void)
{
	return (uint32_t)rand_r(&seed);
}

/* A plausible payload for type t: mostly valid shapes with small numbers,
 * so that handles of this connection are hit as often as wrong ones. */
static size_t make_payload(uint16_t t, unsigned char *p, size_t cap)
{
	size_t n = fk_proto_req_size(t), i;
	uint32_t w[40];

	if (!n || rnd() % 10 == 0)
		n = rnd() % (rnd() % 8 ? 200 : cap);	/* any size, rarely huge */
	if (n > cap)
		n = cap;
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		switch (rnd() % 6) {
		case 0: w[i] = rnd(); break;
		case 1: w[i] = 0; break;
		case 2: w[i] = 1 + rnd() % 8; break;		/* handles */
		case 3: w[i] = (uint32_t)IBV_QPT_XRC_RECV; break;
		case 4: w[i] = 0x100u + rnd() % 0x4000u; break;	/* numbers */
		default: w[i] = rnd() % 2 ? O_CREAT : 0; break;
		}
	}
	memset(p, 0, cap);
	memcpy(p, w, n < sizeof(w) ? n : sizeof(w));
	if (t == FK_MSG_HELLO && n >= FK_DEVNAME_MAX && rnd() % 3) {
		struct fk_req_hello h;

		memset(&h, 0, sizeof(h));
		snprintf(h.devname, sizeof(h.devname), rnd() % 2 ? "fake0" : "fz");
		h.lifetime = rnd() % 3;
		h.nports = 1 + rnd() % 5;
		h.pkey_tbl_len[0] = 1;
		memcpy(p, &h, sizeof(h));
	}
	for (i = 0; i < n && rnd() % 4 == 0; i++)	/* a few flipped bits */
		p[rnd() % n] ^= (unsigned char)(1u << (rnd() % 8));
	return n;
}

struct rconn {
	int fd;
	unsigned msgs, replies, closes;
};

static void rconn_open(struct rconn *c)
{
	c->fd = fkt_raw_connect();
	assert_true(c->fd >= 0);
}

/* Send one random message; read what it earns. */
static void fuzz_one(struct rconn *c, int file_fd)
{
	static unsigned char p[FK_REQ_MAX + 64];
	uint16_t t = (uint16_t)(rnd() % 4 ? 1 + rnd() % (FK_MSG__COUNT - 1) : rnd() % 0x10000);
	size_t n = make_payload(t, p, sizeof(p));
	uint32_t magic = rnd() % 200 ? FK_MAGIC : rnd();
	uint16_t version = (uint16_t)(rnd() % 200 ? FK_PROTO_VERSION : rnd() % 4);
	uint32_t len = rnd() % 20 ? (uint32_t)n : rnd() % 512;
	int fds[2] = { file_fd, file_fd }, nfds = rnd() % 8 ? 0 : 1 + (int)(rnd() % 2);
	struct fk_rep_query r;
	struct fk_hdr h;
	int got;

	if (t == FK_MSG_XRCD_OPEN && rnd() % 2)
		nfds = 1;
	c->msgs++;
	if (rnd() % 500 == 0) {				/* a runt */
		magic = 0;				/* no header: none of the checks below */
		if (send(c->fd, p, rnd() % sizeof(h), MSG_NOSIGNAL) < 0)
			goto reopen;
	} else if (fkt_raw_send(c->fd, magic, version, t, len, c->msgs, p, n, fds, nfds)) {
		goto reopen;
	}
	got = fkt_raw_recv(c->fd, &h, &r, sizeof(r));
	assert_true(got != -1);				/* the daemon always answers */
	if (got == -2)
		goto reopen;
	c->replies++;
	assert_int_equal(h.magic, FK_MAGIC);
	assert_true(h.type & FK_MSG_REPLY);
	if (magic == FK_MAGIC && version == FK_PROTO_VERSION && got >= (int)sizeof(r.r))
		assert_true(r.r.status >= 0 && r.r.status < 4096);
	/* a version mismatch ends with a closed connection */
	if (magic == FK_MAGIC && version != FK_PROTO_VERSION) {
		assert_int_equal(r.r.status, EPROTONOSUPPORT);
		goto reopen;
	}
	return;
reopen:
	c->closes++;
	close(c->fd);
	rconn_open(c);
}

TR_TEST(random_and_mutated_messages_never_hurt_the_daemon)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *good = fkt_conn("fake0", FK_LIFETIME_SEED);
	pid_t pid = fk_daemon_pid(mon);
	struct rconn rc[NCONN];
	int file_fd = fkt_file("fz"), i, k, total = NMSG;
	const char *env = getenv("IBVCT_FUZZ_MSGS");
	uint32_t x, id, qh, qpn;
	char *d;

	if (env && atoi(env) > 0)
		total = atoi(env);
	for (k = 0; k < NCONN; k++) {
		memset(&rc[k], 0, sizeof(rc[k]));
		rconn_open(&rc[k]);
	}
	assert_int_equal(fk_xrcd_open(good, file_fd, O_CREAT, 0, &x, &id), 0);
	assert_int_equal(fk_tgt_qp_create(good, x, 0, &qpn, &qh), 0);
	for (i = 0; i < total; i++) {
		fuzz_one(&rc[rnd() % NCONN], file_fd);
		if (i % 1000 == 999) {
			/* the well-behaved connection is served, the tables stay sound */
			assert_int_equal(fkt_to_rts(good, qh), 0);
			assert_int_equal(fk_tgt_qp_modify(good, qh, &(struct ibv_qp_attr){
				.qp_state = IBV_QPS_RESET }, IBV_QP_STATE, 0, NULL), 0);
			d = fkt_dump();
			if (fkt_field(d, "problems"))
				printf("# %s", d);
			assert_int_equal(fkt_field(d, "problems"), 0);
			free(d);
		}
	}
	for (k = 0; k < NCONN; k++) {
		tr_note("conn %d: %u messages, %u replies, %u reconnects", k, rc[k].msgs,
		       rc[k].replies, rc[k].closes);
		close(rc[k].fd);
	}
	assert_int_equal(fk_tgt_qp_destroy(good, qh), 0);
	assert_int_equal(fk_xrcd_close(good, x, 0), 0);
	fk_disconnect(good);
	close(file_fd);
	assert_int_equal(fkt_objects(mon), 0);
	fk_disconnect(mon);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

/* A client that sends and never reads is dropped at its queue bound; the
 * others are unaffected. */
TR_TEST(a_client_that_never_reads_is_dropped)
{
	struct fk_client *mon = fkt_monitor();
	pid_t pid = fk_daemon_pid(mon);
	struct fk_req_num dump = { 0 };
	int fd = fkt_raw_connect(), i, err = 0;

	assert_true(fd >= 0);
	assert_int_equal(fkt_raw_hello(fd, "fake0", FK_LIFETIME_CURRENT), 0);
	for (i = 0; i < 400000 && !err; i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		if (poll(&pfd, 1, (int)(10000 * fkt_mult())) != 1)
			break;
		if (pfd.revents & (POLLHUP | POLLERR))
			err = 1;
		else if (fkt_raw_req(fd, FK_MSG_DUMP, (uint32_t)i, &dump, sizeof(dump)))
			err = 1;
	}
	tr_note("dropped after %d requests", i);
	assert_true(err);
	close(fd);
	assert_int_equal(fkt_objects(mon), 0);
	fk_disconnect(mon);
	assert_int_equal(fkt_daemon_gone(pid), 0);
}

int main(int argc, char **argv)
{
	const char *s = getenv("IBVCT_SEED");

	fkt_setup("t5202");
	seed = s && s[0] ? (unsigned)strtoul(s, NULL, 0) : (unsigned)time(NULL) ^ (unsigned)getpid();
	printf("# seed %u (IBVCT_SEED=%u repeats this run)\n", seed, seed);
	return fkt_run(argc, argv);
}
