/* SPDX-License-Identifier: MIT */
/*
 * Two hosts: a suite whose every test has a half on each of two machines
 * (th_main_twohost). One program runs on each host, the same binary with
 * the same tests in the same order; host B ("server", the target side)
 * listens, host A ("client", the initiator side) connects, as the
 * pingpongs of ibverbs-utils do (rdma-core v44.0 libibverbs/examples/
 * pingpong.c: TCP for the out-of-band exchange of QPN, PSN, GID and keys).
 *
 *   IBVCT_ROLE=server|client   this host's side
 *   IBVCT_PEER=HOST[:PORT]     the other host (a client connects to it; a
 *                              server takes only that one when it is given)
 *   IBVCT_PEER_PORT            the port when IBVCT_PEER has none (18600)
 *   IBVCT_RUN_ID               the pair's run: both must give the same one
 *   IBVCT_PEER_GID=ipv4|ipv6   which of the peer's GIDs a test addresses it
 *                              by (th_peer_gid6): the IPv4-mapped one (the
 *                              default) or the IPv6 link-local one; both
 *                              hosts must give the same (they say it when
 *                              they meet). ipv6 where one host is the
 *                              reference's RoCE v2 transport and the other
 *                              real rxe: over IPv4 the ICRC covers the IP
 *                              identification, which rxe numbers and a UDP
 *                              socket never sees (fake-provider/wire)
 *
 * Without a role: on the reference target the program is both hosts, two
 * fake hosts on one machine (a second process of the program plays host B
 * on a fake host of its own, the two on one fabric, IBVCT_FABRIC:
 * fake-provider/verbs/fabric.c), over TCP on 127.0.0.1; on a real device it
 * is skipped as a whole (no peer).
 *
 * The runners of the two hosts hold one control connection. Before each
 * test they meet (a barrier: the same test, or the run stops), say whether
 * each runs it (a skip on either side skips both), and the client opens
 * the test's own connection (th_xchg, th_sync); after it each says its
 * verdict, and each host's verdict of a test is both halves': a half that
 * failed fails the test on both hosts, naming the host. Each side's test
 * process has its own time limit (the runner's); a half that ends or is
 * killed closes its connection, and the other half then ends too. A host
 * that vanishes (the control connection ends, or says nothing for the
 * longest a test may take) leaves every test it owed without a result:
 * `ok # SKIP no result: ...`, and the program fails (its status 3).
 * A peer that never came is the same (`1..0 # SKIP` with the reason, status
 * 3); a run set up wrong (IBVCT_ROLE, IBVCT_PEER, IBVCT_PEER_GID, a port
 * taken, or a peer of another program, run or GID family) bails out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th.h"
#include "th_host.h"
#include "tr_clock.h"

#define TH_PORT_DEFAULT	18600
#define TH_LINE_MAX	1024
#define TH_LOST_FILE	"peer-lost"

static char th_side;			/* 'a' client (initiator), 'b' server (target), 0 none */
static int th_ctl = -1;			/* runner <-> runner */
static int th_lsn = -1;			/* host B: the listening socket */
static int th_data = -1;		/* the running test's connection */
static char th_peer_host[256];
static unsigned th_peer_port;
static char th_lost[512];		/* the peer vanished: why */
static char th_run_id[128];
static int th_gid6 = -1;		/* IBVCT_PEER_GID: 1 ipv6, 0 ipv4, -1 not read yet */

char th_host_side(void)
{
	return th_side;
}

/* ---- lines over a socket, each wait bounded by the stretched clock ------- */
static long long th_ctl_limit_ms(void)
{
	/* the longest the peer's half of a test may take: its runner's limit
	 * (30 s, stretched by at most IBVCT_STRETCH_MAX), and a margin */
	const char *s = getenv("IBVCT_STRETCH_MAX");
	long st = s ? strtol(s, NULL, 10) : 4;

	return (30LL * (st > 0 ? st : 4) + 60) * 1000LL * tr_timeout_mult();
}

static int th_write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* len bytes within limit_ms of the stretched clock: 0, or -1 (EOF, error,
 * or the time ran out: why says which). */
static int th_read_all(int fd, void *p, size_t len, long long limit_ms, char *why, size_t wl)
{
	struct tr_clock clk;
	char *c = p;

	tr_clock_start(&clk, limit_ms);
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = tr_clock_tick(&clk);
		ssize_t n;

		if (left <= 0) {
			snprintf(why, wl, "nothing from the peer host in %lld s", limit_ms / 1000);
			return -1;
		}
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left + 1)) <= 0)
			continue;
		n = recv(fd, c, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, wl, "the peer host closed the connection%s%s",
				 n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			return -1;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static int th_line_send(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int th_line_send(int fd, const char *fmt, ...)
{
	char buf[TH_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	for (int i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	buf[n++] = '\n';
	return th_write_all(fd, buf, (size_t)n);
}

/* One line (without its newline) within limit_ms. */
static int th_line_recv(int fd, char *buf, size_t len, long long limit_ms, char *why, size_t wl)
{
	size_t n = 0;

	for (;;) {
		char c;

		if (th_read_all(fd, &c, 1, limit_ms, why, wl))
			return -1;
		if (c == '\n')
			break;
		if (n + 1 < len)
			buf[n++] = c;
	}
	buf[n] = 0;
	return 0;
}

/* ---- connections ------------------------------------------------------------ */
static int th_listen(unsigned port, unsigned *bound, char *why, size_t wl)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		snprintf(why, wl, "cannot listen on TCP port %u: %s", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*bound = ntohs(sa.sin_port);
	return fd;
}

static int th_accept(int lsn, long long limit_ms, char *why, size_t wl)
{
	struct tr_clock clk;

	tr_clock_start(&clk, limit_ms);
	for (;;) {
		struct pollfd pfd = { .fd = lsn, .events = POLLIN };
		long long left = tr_clock_tick(&clk);
		int fd, one = 1;

		if (left <= 0) {
			snprintf(why, wl, "no peer host connected in %lld s", limit_ms / 1000);
			return -1;
		}
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left + 1)) <= 0)
			continue;
		fd = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return fd;
	}
}

/* Host B's port, tried until it answers or limit_ms pass. */
static int th_connect(long long limit_ms, char *why, size_t wl)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
	struct tr_clock clk;
	char port[16];
	int err = 0;

	snprintf(port, sizeof(port), "%u", th_peer_port);
	tr_clock_start(&clk, limit_ms);
	for (;;) {
		int rc = getaddrinfo(th_peer_host, port, &hints, &ai);

		if (rc) {
			snprintf(why, wl, "%s: %s", th_peer_host, gai_strerror(rc));
			return -1;
		}
		for (a = ai; a; a = a->ai_next) {
			int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0), one = 1;

			if (fd < 0)
				continue;
			if (!connect(fd, a->ai_addr, a->ai_addrlen)) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				freeaddrinfo(ai);
				return fd;
			}
			err = errno;
			close(fd);
		}
		freeaddrinfo(ai);
		if (tr_clock_tick(&clk) <= 0) {
			snprintf(why, wl, "the peer host %s:%u did not answer in %lld s: %s",
				 th_peer_host, th_peer_port, limit_ms / 1000, strerror(err));
			return -1;
		}
		usleep(200000);
	}
}

/* ---- the test's half ---------------------------------------------------------- */
/* The peer's half is gone: the test has no result on this host (the runner
 * makes it the peer's verdict, th_host_settle). */
static void th_peer_gone(const char *why) __attribute__((noreturn));
static void th_peer_gone(const char *why)
{
	int fd = open(TH_LOST_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (write(fd, why, strlen(why)) < 0)
			fd = fd;
		close(fd);
	}
	fprintf(stderr, "the other host's half ended: %s\n", why);
	fflush(NULL);
	_exit(1);
}

void th_xchg(const void *mine, void *theirs, size_t len)
{
	char why[256];

	if (th_data < 0)
		th_fail("th_xchg: not a two-host test");
	if (th_write_all(th_data, mine, len))
		th_peer_gone("cannot send to the peer host");
	if (th_read_all(th_data, theirs, len, th_ctl_limit_ms(), why, sizeof(why)))
		th_peer_gone(why);
}

void th_sync(const char *point)
{
	char mine[64] = { 0 }, theirs[64];

	snprintf(mine, sizeof(mine), "%s", point);
	th_xchg(mine, theirs, sizeof(theirs));
	theirs[sizeof(theirs) - 1] = 0;
	if (strcmp(mine, theirs))
		th_fail("th_sync: this host is at '%s', the peer host at '%s'", mine, theirs);
}

/* ---- the runner's side ------------------------------------------------------------ */
static void th_lose(const char *why)
{
	if (!th_lost[0])
		snprintf(th_lost, sizeof(th_lost), "%s", why);
	if (th_ctl >= 0)
		close(th_ctl);
	th_ctl = -1;
	printf("# two hosts: the peer host is gone: %s\n", why);
}

static void th_parse_peer(void)
{
	const char *p = getenv("IBVCT_PEER"), *port = getenv("IBVCT_PEER_PORT");
	const char *colon;

	th_peer_port = port && port[0] ? (unsigned)strtoul(port, NULL, 10) : TH_PORT_DEFAULT;
	th_peer_host[0] = 0;
	if (!p || !p[0])
		return;
	colon = strrchr(p, ':');
	/* HOST:PORT (an IPv6 address in brackets: [ADDR]:PORT) */
	if (colon && !strchr(colon, ']') && (strchr(p, ':') == colon || p[0] == '[')) {
		snprintf(th_peer_host, sizeof(th_peer_host), "%.*s", (int)(colon - p), p);
		th_peer_port = (unsigned)strtoul(colon + 1, NULL, 10);
	} else {
		snprintf(th_peer_host, sizeof(th_peer_host), "%s", p);
	}
	if (th_peer_host[0] == '[') {
		memmove(th_peer_host, th_peer_host + 1, strlen(th_peer_host));
		th_peer_host[strcspn(th_peer_host, "]")] = 0;
	}
}

/* IBVCT_PEER_GID, read here only: 1 ipv6, 0 ipv4 (unset or empty), -1 neither. */
static int th_gid_env(void)
{
	const char *g = getenv("IBVCT_PEER_GID");

	if (!g || !g[0] || !strcmp(g, "ipv4"))
		return 0;
	return strcmp(g, "ipv6") ? -1 : 1;
}

int th_peer_gid6(void)
{
	if (th_gid6 < 0)
		th_gid6 = th_gid_env() > 0;
	return th_gid6;
}

/* No peer came, or it went before the run began: the run has no result
 * (th_host_finish: status 3), not a pass. */
static int th_no_peer(const char *why)
{
	snprintf(th_lost, sizeof(th_lost), "%s", why);
	return -2;
}

/* The runners meet: host B listens for host A. 0; -1 with why when the run
 * is set up wrong (the environment, or a peer of another program, run or GID
 * family: the run fails); -2 when no peer came or it went (no result). */
int th_host_start(const char *prog, char *why, size_t len)
{
	const char *role = getenv("IBVCT_ROLE"), *id = getenv("IBVCT_RUN_ID");
	char line[TH_LINE_MAX], want[TH_LINE_MAX];
	unsigned bound;

	th_parse_peer();
	th_gid6 = th_gid_env();
	if (th_gid6 < 0) {
		snprintf(why, len, "IBVCT_PEER_GID is ipv4 or ipv6, not '%s'",
			 getenv("IBVCT_PEER_GID"));
		return -1;
	}
	snprintf(th_run_id, sizeof(th_run_id), "%s", id && id[0] ? id : "-");
	if (!role || !strcmp(role, "server")) {
		th_side = 'b';
		th_lsn = th_listen(th_peer_port, &bound, why, len);
		if (th_lsn < 0)
			return -1;
		/* the port taken, for a caller that asked for any (port 0) */
		if (getenv("IBVCT_PEER_PORT_FILE")) {
			FILE *f = fopen(getenv("IBVCT_PEER_PORT_FILE"), "w");

			if (f) {
				fprintf(f, "%u\n", bound);
				fclose(f);
			}
		}
		th_peer_port = bound;
		th_ctl = th_accept(th_lsn, th_ctl_limit_ms(), why, len);
	} else if (!strcmp(role, "client")) {
		th_side = 'a';
		if (!th_peer_host[0]) {
			snprintf(why, len, "IBVCT_ROLE=client needs IBVCT_PEER=HOST[:PORT]");
			return -1;
		}
		th_ctl = th_connect(th_ctl_limit_ms(), why, len);
	} else {
		snprintf(why, len, "IBVCT_ROLE is server or client, not '%s'", role);
		return -1;
	}
	if (th_ctl < 0)
		return th_no_peer(why);
	snprintf(want, sizeof(want), "ibvct-twohost 1 %s %s gid=%s", prog, th_run_id,
		 th_gid6 ? "ipv6" : "ipv4");
	if (th_line_send(th_ctl, "%s", want) ||
	    th_line_recv(th_ctl, line, sizeof(line), th_ctl_limit_ms(), why, len))
		return th_no_peer(why);
	if (strcmp(line, want)) {
		snprintf(why, len, "the peer host runs another program or run, or addresses its peer "
			 "by the other GID: it says '%s', this host '%s'", line, want);
		return -1;
	}
	return 0;
}

/* Before a test: the barrier, each side's decision, the test's connection.
 * v: this host's own decision (why: its reason); the pair's is returned. */
enum tr_verdict th_host_decide(const char *name, enum tr_verdict v, char *why, size_t len,
			       int data)
{
	char line[TH_LINE_MAX], err[256];

	if (th_data >= 0)
		close(th_data);
	th_data = -1;
	if (th_ctl < 0) {
		snprintf(why, len, "no result: the peer host is gone (%s)", th_lost);
		return TR_SKIP;
	}
	if (th_line_send(th_ctl, "test %s", name) ||
	    th_line_recv(th_ctl, line, sizeof(line), th_ctl_limit_ms(), err, sizeof(err)))
		goto lost;
	if (strncmp(line, "test ", 5) || strcmp(line + 5, name)) {
		snprintf(err, sizeof(err), "out of step: this host runs %s, the peer host %s", name,
			 line);
		goto lost;
	}
	if (th_line_send(th_ctl, "decide %d %s", (int)v, v == TR_RUN ? "" : why) ||
	    th_line_recv(th_ctl, line, sizeof(line), th_ctl_limit_ms(), err, sizeof(err)))
		goto lost;
	if (v == TR_RUN && strncmp(line, "decide 0", 8)) {
		int pv = atoi(line + 7);

		snprintf(why, len, "on the peer host: %s", strlen(line) > 9 ? line + 9 : "");
		return pv == TR_SKIP ? TR_SKIP : TR_FAIL;
	}
	if (v != TR_RUN || !data)
		return v;
	/* the test's own connection: host A connects to host B's port */
	if (th_side == 'a')
		th_data = th_connect(th_ctl_limit_ms(), err, sizeof(err));
	else
		th_data = th_accept(th_lsn, th_ctl_limit_ms(), err, sizeof(err));
	if (th_data < 0)
		goto lost;
	return TR_RUN;
lost:
	th_lose(err);
	snprintf(why, len, "no result: the peer host is gone (%s)", th_lost);
	return TR_SKIP;
}

/* The last line the test's log says, but cmocka's banner: why it failed. */
static void th_last_line(const char *dir, char *out, size_t len)
{
	char path[4096], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		/* cmocka's assertion is the reason; else the last word said */
		if (!strncmp(line, "[  ERROR   ] --- ", 17)) {
			snprintf(out, len, "%s", line + 17);
			break;
		}
		if (line[0] && line[0] != '[' && !strstr(line, "FAILED TEST"))
			snprintf(out, len, "%s", line);
	}
	if (f)
		fclose(f);
}

/* After a test: each side's verdict; a test passes on a host when both
 * halves passed. */
enum tr_verdict th_host_settle(const char *dir, enum tr_verdict v, char *why, size_t len)
{
	char line[TH_LINE_MAX], err[256], path[4096], lost[256] = "", mine[512] = "";
	enum tr_verdict pv;
	FILE *f;

	if (th_data >= 0)
		close(th_data);
	th_data = -1;
	snprintf(path, sizeof(path), "%s/" TH_LOST_FILE, dir);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(lost, sizeof(lost), f))
			lost[0] = 0;
		fclose(f);
	}
	if (th_ctl < 0)
		return v;
	if (v == TR_FAIL && !f)
		th_last_line(dir, mine, sizeof(mine));
	if (th_line_send(th_ctl, "verdict %d %s", f && v == TR_FAIL ? 3 : (int)v,
			 f ? lost : v == TR_SKIP ? why : mine) ||
	    th_line_recv(th_ctl, line, sizeof(line), th_ctl_limit_ms(), err, sizeof(err))) {
		th_lose(err);
		snprintf(why, len, "no result: the peer host is gone (%s)", th_lost);
		return TR_SKIP;
	}
	pv = (enum tr_verdict)atoi(line + 8);
	if (strncmp(line, "verdict ", 8)) {
		th_lose("out of step: no verdict");
		snprintf(why, len, "no result: the peer host is out of step (%s)", line);
		return TR_SKIP;
	}
	if ((int)pv == 3 && f) {
		/* each half saw the other end: neither says why */
		snprintf(why, len, "both halves ended early, each for the other (%s)", lost);
		return TR_FAIL;
	}
	if ((int)pv == 3 || pv == TR_RUN)
		return f ? TR_FAIL : v;	/* the peer's half passed, or ended for ours */
	if (f || v == TR_RUN || (v == TR_SKIP && pv == TR_FAIL)) {
		snprintf(why, len, "%s on the peer host (%s)%s%s",
			 pv == TR_SKIP ? "skipped" : "failed", th_peer_host[0] ? th_peer_host : "host B",
			 strlen(line) > 10 ? ": " : "", strlen(line) > 10 ? line + 10 : "");
		return pv;
	}
	return v;
}

int th_host_finish(void)
{
	if (th_ctl >= 0) {
		th_line_send(th_ctl, "bye");
		close(th_ctl);
	}
	th_ctl = -1;
	if (th_lsn >= 0)
		close(th_lsn);
	th_lsn = -1;
	if (th_lost[0]) {
		printf("# two hosts: no result for the tests owed after the peer host went (%s)\n",
		       th_lost);
		return 3;
	}
	return 0;
}

/* The test's process: its connection is the one the runner opened. */
void th_host_enter(void)
{
	if (th_lsn >= 0)
		close(th_lsn);
	if (th_ctl >= 0)
		close(th_ctl);
	th_lsn = th_ctl = -1;
}

void th_peer_end(void)
{
	char why[256], c;

	if (th_data < 0)
		th_fail("th_peer_end: not a two-host test");
	/* nothing more comes: its EOF, or the time a half may take */
	while (!th_read_all(th_data, &c, 1, th_ctl_limit_ms(), why, sizeof(why)))
		;
}

void th_peer_check(void)
{
	struct pollfd pfd = { .fd = th_data, .events = POLLIN | POLLRDHUP };
	char c;

	if (th_data < 0 || poll(&pfd, 1, 0) != 1)
		return;
	if ((pfd.revents & (POLLHUP | POLLERR | POLLRDHUP)) ||
	    recv(th_data, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		th_peer_gone("the peer host's half ended while this one waited");
}
