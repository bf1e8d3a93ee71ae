/* SPDX-License-Identifier: MIT */
/*
 * t5201: the fake kernel daemon's front door. Start on demand (8 concurrent
 * first connects start exactly one daemon), exit after the last close, the
 * versioned protocol (a version mismatch is refused with a clear error;
 * malformed, truncated, oversized and out-of-order messages get an error
 * reply or a closed connection and the daemon keeps serving the others),
 * SO_PEERCRED refusal of another uid, fd passing and inode keying of XRC
 * domains (a client cannot name an inode), and handles scoped to their
 * connection. Real processes and sockets; nothing is mocked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "fk_test.h"

/* Anything left over from a test: empty dump, then the daemon exits. */
/* How many of the daemon's fds refer to the file at path (valgrind and
 * sanitizers open fds of their own, so a plain count would not do). */
static int holds(pid_t pid, const char *path)
{
	char dir[64], fdp[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(fdp, sizeof(fdp), "%s/%s", dir, e->d_name);
		len = readlink(fdp, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strncmp(target, path, strlen(path)) &&
		     (!target[strlen(path)] || !strcmp(target + strlen(path), " (deleted)"));
	}
	closedir(d);
	return n;
}

/* Processes whose command line runs a daemon for our run dir. */
static int count_daemons(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc");
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[4096];
		ssize_t len, i;
		bool fkd = false, ours = false;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
			fkd |= strstr(buf + i, "ibvct-fkd") != NULL;
			ours |= !strcmp(buf + i, fkt_rundir);
		}
		n += fkd && ours;
	}
	closedir(d);
	return n;
}

/* ---- start and exit ----------------------------------------------------- */
TR_TEST(first_connect_starts_daemon_and_last_close_stops_it)
{
	char sock[PATH_MAX + 16];
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	pid_t pid = fk_daemon_pid(c);
	struct stat st;

	assert_true(pid > 0);
	assert_int_equal(fkt_pidfile(), pid);
	snprintf(sock, sizeof(sock), "%s/%s", fkt_rundir, FK_SOCK_NAME);
	assert_int_equal(lstat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 077, 0);		/* only we may connect */
	assert_int_equal(stat(fkt_rundir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	fk_disconnect(c);
	assert_int_equal(fkt_daemon_gone(pid), 0);
	assert_int_equal(lstat(sock, &st), -1);		/* gone with it */
	assert_int_equal(fkt_pidfile(), 0);
}

static void concurrent_child(int in, int out, void *arg)
{
	int *gate = arg;
	struct fk_client *c;
	char go;

	/* all children block here until the parent closes the gate: then all go */
	close(gate[1]);
	if (read(gate[0], &go, 1) != 0)
		_exit(2);
	TR_ASSERT(fk_connect("fake0", FK_LIFETIME_CURRENT, NULL, &c) == 0);
	fkt_put32(out, (uint32_t)fk_daemon_pid(c));
	fkt_get32(in);				/* hold the connection until told */
	fk_disconnect(c);
}

TR_TEST(eight_concurrent_first_connects_start_one_daemon)
{
	struct fkt_proc p[8];
	uint32_t pid[8];
	int i, gate[2];

	assert_int_equal(pipe(gate), 0);
	for (i = 0; i < 8; i++)
		p[i] = fkt_spawn(concurrent_child, gate);
	close(gate[1]);
	for (i = 0; i < 8; i++)
		assert_int_equal(fkt_get(p[i].from, &pid[i], sizeof(pid[i])), 0);
	close(gate[0]);
	for (i = 1; i < 8; i++)
		assert_int_equal(pid[i], pid[0]);
	assert_int_equal(fkt_pidfile(), (pid_t)pid[0]);
	assert_int_equal(count_daemons(), 1);
	for (i = 0; i < 8; i++) {
		fkt_put32(p[i].to, 1);
		fkt_reap(&p[i]);
	}
	assert_int_equal(fkt_daemon_gone((pid_t)pid[0]), 0);
	assert_int_equal(count_daemons(), 0);
}

/* ---- protocol ------------------------------------------------------------- */
TR_TEST(version_mismatch_is_refused_with_eprotonosupport)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_req_hello r;
	struct fk_rep rep;
	struct fk_hdr h;
	int fd = fkt_raw_connect();

	assert_true(fd >= 0);
	memset(&r, 0, sizeof(r));
	strcpy(r.devname, "fake0");
	r.nports = 1;
	r.pkey_tbl_len[0] = 1;
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION + 1, FK_MSG_HELLO,
				      sizeof(r), 7, &r, sizeof(r), NULL, 0), 0);
	assert_int_equal(fkt_raw_recv(fd, &h, &rep, sizeof(rep)), (int)sizeof(rep));
	assert_int_equal(h.version, FK_PROTO_VERSION);	/* says which it speaks */
	assert_int_equal(h.seq, 7);
	assert_int_equal(rep.status, EPROTONOSUPPORT);
	assert_int_equal(fkt_raw_recv(fd, &h, &rep, sizeof(rep)), -2);	/* and hangs up */
	close(fd);
	assert_int_equal(fkt_objects(mon), 0);		/* still serving */
	fkt_end_clean(mon);
}

TR_TEST(malformed_messages_get_error_replies_and_others_are_served)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *good = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	static unsigned char big[FK_REQ_MAX + 512];
	struct fk_req_num num = { 0 };
	struct fk_req_handle hreq = { 0 };
	uint32_t h1, id1, qpn;
	int fd = fkt_raw_connect();

	assert_true(fd >= 0);
	assert_int_equal(fk_xrcd_open(good, -1, O_CREAT, 0, &h1, &id1), 0);

	/* before HELLO nothing else is served */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_QPN_ALLOC, 2, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), EPROTO);
	assert_int_equal(fkt_raw_hello(fd, "fake0", FK_LIFETIME_CURRENT), 0);
	assert_int_equal(fkt_raw_hello(fd, "fake0", FK_LIFETIME_CURRENT), EISCONN);

	/* a runt shorter than the header */
	assert_int_equal(send(fd, "abc", 3, 0), 3);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	/* length field larger than the packet (truncated) and smaller (trailing) */
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_QPN_ALLOC, 100, 3,
				      &num, sizeof(num), NULL, 0), 0);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_QPN_ALLOC, 4, 4,
				      &num, sizeof(num), NULL, 0), 0);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	/* the right length field for a payload of the wrong size for the type */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_XRCD_CLOSE, 5, big, 3), 0);
	assert_int_equal(fkt_raw_status(fd), EBADMSG);
	/* unknown types, a reply type and the event type as requests */
	assert_int_equal(fkt_raw_req(fd, 999, 6, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), ENOSYS);
	assert_int_equal(fkt_raw_req(fd, 0, 6, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), ENOSYS);
	assert_int_equal(fkt_raw_req(fd, FK_MSG_QPN_ALLOC | FK_MSG_REPLY, 6, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), ENOSYS);
	assert_int_equal(fkt_raw_req(fd, FK_MSG_EVENT, 6, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), ENOSYS);
	/* oversized: larger than any request */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_QPN_ALLOC, 7, big, sizeof(big)), 0);
	assert_int_equal(fkt_raw_status(fd), EMSGSIZE);
	/* reserved fields and unknown flags must be zero */
	num.reserved = 1;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_QPN_ALLOC, 8, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	hreq.handle = 1;
	hreq.flags = 0x80;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_XRCD_CLOSE, 9, &hreq, sizeof(hreq)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	/* a number this connection does not hold */
	num.reserved = 0;
	assert_int_equal(fk_qpn_alloc(good, &qpn), 0);
	num.num = qpn;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_QPN_FREE, 10, &num, sizeof(num)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	assert_int_equal(fk_qpn_free(good, qpn), 0);

	/* the good connection was served throughout */
	assert_int_equal(fk_xrcd_close(good, h1, 0), 0);
	/* a wrong magic: not our protocol, the connection is closed */
	assert_int_equal(fkt_raw_send(fd, 0xdeadbeef, FK_PROTO_VERSION, FK_MSG_QPN_ALLOC,
				      sizeof(num), 11, &num, sizeof(num), NULL, 0), 0);
	assert_int_equal(fkt_raw_status(fd), -2);
	close(fd);
	assert_int_equal(fk_qpn_alloc(good, &qpn), 0);
	fk_disconnect(good);
	fkt_end_clean(mon);
}

TR_TEST(a_handle_of_another_connection_is_never_accepted)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t xa, ida, qh, qpn, srqn, x;
	struct ibv_qp_attr attr;

	assert_int_equal(fk_xrcd_open(a, -1, O_CREAT, 0, &xa, &ida), 0);
	assert_int_equal(fk_tgt_qp_create(a, xa, 0, &qpn, &qh), 0);
	assert_int_equal(fkt_xsrq_create(a, xa, &srqn), 0);
	/* b holds nothing: each of a's handles and numbers is unknown there
	 * (b's SRQ attempt makes a PD and a CQ, 0 and 1: a's XRCD number 0
	 * then names b's PD, of another type, EINVAL all the same) */
	assert_int_equal(fk_xrcd_close(b, xa, 0), EINVAL);
	assert_int_equal(fk_tgt_qp_destroy(b, qh), EINVAL);
	assert_int_equal(fk_tgt_qp_query(b, qh, &attr), EINVAL);
	assert_int_equal(fk_event_raise(b, qh, IBV_EVENT_COMM_EST), EINVAL);
	assert_int_equal(fk_srq_destroy(b, srqn), EINVAL);
	assert_int_equal(fkt_xsrq_create(b, xa, &x), EINVAL);
	assert_int_equal(fk_tgt_qp_create(b, xa, 0, &x, &x), EINVAL);
	assert_int_equal(fk_tgt_qp_open(b, xa, qpn, IBV_QPT_XRC_RECV, 0, 0, &x), EINVAL);
	/* and a's are intact */
	assert_int_equal(fk_tgt_qp_query(a, qh, &attr), 0);
	assert_int_equal(attr.qp_state, IBV_QPS_RESET);
	assert_int_equal(fk_xrcd_close(a, xa, 0), EBUSY);
	fk_disconnect(b);
	fk_disconnect(a);
	fkt_end_clean(mon);
}

/*
 * One table per connection, lowest free handle from 0 for every type, as
 * the kernel's ufile->idr: two connections number alike, so one's handle
 * names the other's own object of that number (and type), never its own.
 */
TR_TEST(handles_count_from_zero_per_connection_and_alias)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	struct fk_client *b = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	const struct fk_refs none = { FK_O_NONE, FK_O_NONE, FK_O_NONE, FK_O_NONE, FK_O_NONE };
	struct fk_refs r = none;
	uint32_t pd, cq, mr, qp, xa, xb, id, srq, srqn, h, qpn, th;

	assert_int_equal(fk_obj_create(a, FK_O_PD, 0, NULL, &pd), 0);
	assert_int_equal(pd, 0);
	assert_int_equal(fk_obj_create(a, FK_O_CQ, 0, NULL, &cq), 0);
	assert_int_equal(cq, 1);
	r.pd = pd;
	assert_int_equal(fk_obj_create(a, FK_O_MR, 0, &r, &mr), 0);
	assert_int_equal(mr, 2);
	assert_int_equal(fk_xrcd_open(a, -1, O_CREAT, 0, &xa, &id), 0);
	assert_int_equal(xa, 3);
	/* the lowest free number comes back */
	assert_int_equal(fk_obj_destroy(a, FK_O_MR, mr), 0);
	assert_int_equal(fk_obj_destroy(a, FK_O_MR, mr), EINVAL);	/* stale */
	assert_int_equal(fk_obj_create(a, FK_O_MR, 0, &r, &mr), 0);
	assert_int_equal(mr, 2);
	/* b's first object is 0 as well */
	assert_int_equal(fk_xrcd_open(b, -1, O_CREAT, 0, &xb, &id), 0);
	assert_int_equal(xb, 0);
	/* type checks: a's PD number as an XRCD, its XRCD number as a CQ */
	assert_int_equal(fk_srq_create_xrc(a, pd, cq, pd, &srq, &srqn), EINVAL);
	assert_int_equal(fk_srq_create_xrc(a, pd, xa, xa, &srq, &srqn), EINVAL);
	assert_int_equal(fk_srq_create_xrc(a, cq, cq, xa, &srq, &srqn), EINVAL);
	/* a number that names nothing: ENOENT, as the ioctl method answers (SRQX-08) */
	assert_int_equal(fk_srq_create_xrc(a, pd, cq, 77, &srq, &srqn), ENOENT);
	assert_int_equal(fk_srq_create_xrc(a, pd, 77, xa, &srq, &srqn), ENOENT);
	assert_int_equal(fk_srq_create_xrc(a, pd, cq, xa, &srq, &srqn), 0);
	/* an XRC SRQ holds its PD and CQ (SRQX-09); an XRC SRQ is no QP's srq */
	assert_int_equal(fk_obj_destroy(a, FK_O_PD, pd), EBUSY);
	assert_int_equal(fk_obj_destroy(a, FK_O_CQ, cq), EBUSY);
	r.scq = r.rcq = cq;
	r.srq = srq;
	assert_int_equal(fk_obj_create(a, FK_O_QP, IBV_QPT_RC, &r, &qp), EINVAL);
	r.srq = FK_O_NONE;
	assert_int_equal(fk_obj_create(a, FK_O_QP, IBV_QPT_XRC_RECV, &r, &qp), EINVAL);
	assert_int_equal(fk_obj_create(a, FK_O_QP, IBV_QPT_RC, &r, &qp), 0);
	assert_int_equal(fk_srq_destroy(a, srq), 0);
	assert_int_equal(fk_obj_destroy(a, FK_O_CQ, cq), EBUSY);	/* the QP's */
	assert_int_equal(fk_obj_destroy(a, FK_O_QP, qp), 0);
	assert_int_equal(fk_obj_destroy(a, FK_O_CQ, cq), 0);
	/* aliasing: a TGT QP made in b through a's XRCD number 3 is EINVAL
	 * (b has no object 3); through number 0 it is made in b's own XRCD */
	assert_int_equal(fk_tgt_qp_create(b, xa, 0, &qpn, &th), EINVAL);
	assert_int_equal(fk_tgt_qp_create(b, 0, 0, &qpn, &th), 0);
	assert_int_equal(fk_tgt_qp_open(a, xa, qpn, IBV_QPT_XRC_RECV, 0, 0, &h), EINVAL);
	assert_int_equal(fk_xrcd_close(b, xb, 0), EBUSY);		/* b's own holds it */
	assert_int_equal(fk_xrcd_close(a, xa, 0), 0);			/* a's does not */
	assert_int_equal(fk_tgt_qp_destroy(b, th), 0);
	assert_int_equal(fk_xrcd_close(b, xb, 0), 0);
	/* everything a still holds goes with its connection */
	fk_disconnect(a);
	fk_disconnect(b);
	(void)none;
	fkt_end_clean(mon);
}

TR_TEST(lifetime_models_must_agree_per_device)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *a = fkt_conn("fake0", FK_LIFETIME_CURRENT), *b = NULL;

	assert_int_equal(fk_connect("fake0", FK_LIFETIME_SEED, NULL, &b), EINVAL);
	assert_int_equal(fk_connect("fake1", FK_LIFETIME_SEED, NULL, &b), 0);	/* another device */
	fk_disconnect(b);
	assert_int_equal(fk_connect("bad/name", FK_LIFETIME_SEED, NULL, &b), EINVAL);
	fk_disconnect(a);
	/* the device is gone with its last connection: a new model is fine */
	assert_int_equal(fk_connect("fake0", FK_LIFETIME_SEED, NULL, &b), 0);
	fk_disconnect(b);
	fkt_end_clean(mon);
}

/* ---- credentials ------------------------------------------------------------- */
static void other_uid_child(int in, int out, void *arg)
{
	struct fk_client *c;
	int fd, st;

	TR_ASSERT(setgid(65534) == 0 && setuid(65534) == 0);
	fd = fkt_raw_connect();
	TR_ASSERT(fd >= 0);
	/* the refusal comes unasked and says why, then the daemon hangs up */
	st = fkt_raw_status(fd);
	TR_ASSERT(st == EACCES);
	TR_ASSERT(fkt_raw_status(fd) == -2);
	close(fd);
	/* the library refuses a run dir that is not ours before trying */
	TR_ASSERT(fk_connect("fake0", FK_LIFETIME_CURRENT, NULL, &c) == EACCES);
}

TR_TEST(another_uid_is_refused_by_so_peercred)
{
	struct fk_client *mon = fkt_monitor();
	char sock[PATH_MAX + 16];
	struct fkt_proc p;

	if (geteuid() != 0) {
		/* not root: the uid switch is impossible; the check still ran in CI */
		tr_note("not root: SO_PEERCRED refusal checked only as root");
		fkt_end_clean(mon);
		return;
	}
	/* open the path to the socket so that only SO_PEERCRED stands in the way */
	snprintf(sock, sizeof(sock), "%s/%s", fkt_rundir, FK_SOCK_NAME);
	assert_int_equal(chmod(fkt_scratch, 0711), 0);
	assert_int_equal(chmod(fkt_rundir, 0711), 0);
	assert_int_equal(chmod(sock, 0666), 0);
	p = fkt_spawn(other_uid_child, NULL);
	fkt_reap(&p);
	assert_int_equal(chmod(sock, 0600), 0);
	assert_int_equal(chmod(fkt_rundir, 0700), 0);
	assert_int_equal(chmod(fkt_scratch, 0700), 0);
	assert_int_equal(fkt_objects(mon), 0);
	fkt_end_clean(mon);
}

/* ---- fd passing and inode keying (XRCD-08/10/15) ------------------------------ */
TR_TEST(xrcd_is_keyed_by_the_inode_of_the_passed_fd)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	char path[PATH_MAX + 16], link2[PATH_MAX + 16];
	uint32_t h1, h2, h3, h4, id1, id2, id3, id4;
	int fd1 = fkt_file("k1"), fd2, fd3, other = fkt_file("k2");
	pid_t pid = fk_daemon_pid(c);

	snprintf(path, sizeof(path), "%s/k1", fkt_scratch);
	snprintf(link2, sizeof(link2), "%s/k1-link", fkt_scratch);
	assert_int_equal(link(path, link2), 0);
	fd2 = open(link2, O_RDONLY | O_CLOEXEC);	/* another file description, same inode */
	assert_true(fd2 >= 0);
	assert_int_equal(fk_xrcd_open(c, fd1, O_CREAT, 0, &h1, &id1), 0);
	assert_int_equal(fk_xrcd_open(c, fd2, 0, 0, &h2, &id2), 0);
	assert_int_equal(id2, id1);
	assert_true(h2 != h1);
	/* the daemon holds one fd per domain (the inode pin), not one per open */
	assert_int_equal(holds(pid, path), 1);
	assert_int_equal(fk_xrcd_open(c, other, 0, 0, &h3, &id3), EAGAIN);
	/* a closed fd cannot be passed at all (XRCD-10) */
	close(other);
	assert_int_equal(fk_xrcd_open(c, other, O_CREAT, 0, &h3, &id3), EBADF);
	/* the XRCD outlives the client's fds (XRCD-11) */
	close(fd1);
	close(fd2);
	fd3 = open(path, O_RDONLY | O_CLOEXEC);
	assert_int_equal(fk_xrcd_open(c, fd3, O_EXCL, 0, &h3, &id3), EINVAL);	/* XRCD-07 */
	assert_int_equal(fk_xrcd_open(c, fd3, O_EXCL, FK_Q_XRCD_EXCL_EEXIST, &h3, &id3), EEXIST);
	/* a new file at the same path after unlink is another inode (XRCD-15) */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(link2), 0);
	fd1 = fkt_file("k1");
	assert_int_equal(fk_xrcd_open(c, fd1, 0, 0, &h4, &id4), EAGAIN);
	assert_int_equal(fk_xrcd_open(c, fd1, O_CREAT, 0, &h4, &id4), 0);
	assert_true(id4 != id1);
	assert_int_equal(fk_xrcd_close(c, h1, 0), 0);
	assert_int_equal(fk_xrcd_close(c, h2, 0), 0);
	assert_int_equal(fk_xrcd_close(c, h2, 0), EINVAL);	/* already closed */
	/* the last close dropped the pin; reopening the old inode makes a new domain */
	assert_int_equal(fk_xrcd_open(c, fd3, O_CREAT, 0, &h1, &id3), 0);
	assert_true(id3 != id1);
	assert_int_equal(fk_xrcd_close(c, h1, 0), 0);
	assert_int_equal(fk_xrcd_close(c, h4, 0), 0);
	assert_int_equal(holds(pid, path), 0);
	close(fd1);
	close(fd3);
	fk_disconnect(c);
	fkt_end_clean(mon);
}

TR_TEST(a_client_cannot_name_an_inode_or_smuggle_fds)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_req_xrcd_open r = { .has_fd = 1, .oflags = O_CREAT };
	struct fk_rep_pair rp;
	struct fk_req_num num = { 0 };
	struct fk_hdr h;
	int fd = fkt_raw_connect(), f1 = fkt_file("s1"), f2 = fkt_file("s2"), fds[2];
	pid_t pid = fk_daemon_pid(mon);
	char s1[PATH_MAX], s2[PATH_MAX];

	snprintf(s1, sizeof(s1), "%s/s1", fkt_scratch);
	snprintf(s2, sizeof(s2), "%s/s2", fkt_scratch);
	assert_true(fd >= 0);
	assert_int_equal(fkt_raw_hello(fd, "fake0", FK_LIFETIME_CURRENT), 0);
	/* "has an fd" without one: there is no inode number to trust instead */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_XRCD_OPEN, 2, &r, sizeof(r)), 0);
	assert_int_equal(fkt_raw_status(fd), EBADF);
	/* an fd with a message that takes none, and two fds with one that takes one */
	fds[0] = f1;
	fds[1] = f2;
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_QPN_ALLOC,
				      sizeof(num), 3, &num, sizeof(num), fds, 1), 0);
	assert_int_equal(fkt_raw_status(fd), EBADF);
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_XRCD_OPEN,
				      sizeof(r), 4, &r, sizeof(r), fds, 2), 0);
	assert_int_equal(fkt_raw_status(fd), EBADF);
	/* an fd while has_fd says none: refused, and the fd is not kept */
	r.has_fd = 0;
	r.oflags = 0;
	r.flags = 0x40;
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_XRCD_OPEN,
				      sizeof(r), 5, &r, sizeof(r), fds, 1), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	/* nothing smuggled stayed open */
	assert_int_equal(holds(pid, s1), 0);
	assert_int_equal(holds(pid, s2), 0);
	/* the proper way works: a domain keyed by the daemon's fstat */
	r.has_fd = 1;
	r.oflags = O_CREAT;
	r.flags = 0;
	assert_int_equal(fkt_raw_send(fd, FK_MAGIC, FK_PROTO_VERSION, FK_MSG_XRCD_OPEN,
				      sizeof(r), 6, &r, sizeof(r), fds, 1), 0);
	assert_int_equal(fkt_raw_recv(fd, &h, &rp, sizeof(rp)), (int)sizeof(rp));
	assert_int_equal(rp.r.status, 0);
	assert_int_equal(h.seq, 6);
	assert_int_equal(holds(pid, s1), 1);
	close(fd);
	close(f1);
	close(f2);
	usleep(100000);
	assert_int_equal(fkt_objects(mon), 0);	/* released with the connection */
	assert_int_equal(holds(pid, s1), 0);
	fkt_end_clean(mon);
}

TR_TEST(dump_names_every_object_and_checks_the_counts)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_client *c = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	uint32_t h, id, qh, qpn, srqn, n;
	int fd = fkt_file("d1");
	char *d;

	assert_int_equal(fk_xrcd_open(c, fd, O_CREAT, 0, &h, &id), 0);
	assert_int_equal(fk_tgt_qp_create(c, h, 0, &qpn, &qh), 0);
	assert_int_equal(fkt_xsrq_create(c, h, &srqn), 0);
	assert_int_equal(fk_qpn_alloc(c, &n), 0);
	assert_true(n != qpn);				/* one number space for QPs */
	d = fkt_dump();
	assert_non_null(strstr(d, "lifetime=current"));
	assert_int_equal(fkt_field(d, "usecnt"), 3);	/* handle + SRQ + TGT QP */
	assert_int_equal(fkt_field(d, "problems"), 0);
	/* 2 handles, xrcd, qp, srqn, qpn, and the SRQ's PD and CQ */
	assert_int_equal(fkt_field(d, "objects"), 8);
	free(d);
	close(fd);
	fk_disconnect(c);
	fkt_end_clean(mon);
}

/* ---- the tables --------------------------------------------------------- */
/*
 * fk_msgs.def and fp_quirks.def are the protocol's one statement of its
 * types and quirk bits: every type 1..COUNT-1 has a row with a name of its
 * own, request and reply sizes, and no two quirks share a bit of one word;
 * the daemon takes a HELLO quirk bit or request flag the table gives its
 * type, and refuses any other.
 */
TR_TEST(every_message_and_quirk_bit_is_a_table_row)
{
	struct fk_client *mon = fkt_monitor();
	struct fk_req_hello hello;
	struct fk_client *good;
	uint32_t t, u, h, id, hq = fk_quirk_flags(FK_MSG_HELLO);
	char why[256] = "";
	int fd;

	(void)state;
	assert_null(fk_msg_info(0));
	assert_null(fk_msg_info(FK_MSG__COUNT));
	assert_string_equal(fk_msg_name(FK_MSG__COUNT), "unknown");
	assert_string_equal(fk_msg_name(FK_MSG_EVENT), "event");
	for (t = 1; t < FK_MSG__COUNT; t++) {
		const struct fk_msg_info *m = fk_msg_info(t);

		assert_non_null(m);
		assert_true(m->name && m->name[0]);
		assert_true(m->req_size > 0 && m->req_size <= FK_REQ_MAX);
		assert_true(m->rep_size >= sizeof(struct fk_rep));
		assert_int_equal(fk_proto_req_size(t), m->req_size);
		for (u = 1; u < t; u++)
			assert_string_not_equal(fk_msg_name(u), m->name);
	}
	assert_int_equal(fk_quirk_table_check(why, sizeof(why)), 0);
	/* the words the plugin sends (fp_quirks.def's HELLO and request rows) */
	assert_int_equal(hq & FK_Q_HANDLE_FALLBACK, FK_Q_HANDLE_FALLBACK);
	assert_int_equal(fk_quirk_flags(FK_MSG_XRCD_OPEN),
			 FK_Q_XRCD_EXCL_EEXIST | FK_Q_XRCD_INODE_ANY_DEVICE);
	assert_int_equal(fk_quirk_flags(FK_MSG_QPN_ALLOC), 0);
	assert_int_equal(FK_Q_CQ_TS_BACKWARDS, 0);	/* the plugin's alone */

	/* HELLO: every bit of the table is taken, one past it refused */
	fd = fkt_raw_connect();
	assert_true(fd >= 0);
	memset(&hello, 0, sizeof(hello));
	snprintf(hello.devname, sizeof(hello.devname), "fake0");
	hello.nports = 1;
	hello.pkey_tbl_len[0] = 1;
	hello.quirks = hq | (hq + 1);		/* the lowest bit above the table's */
	assert_int_equal(fkt_raw_req(fd, FK_MSG_HELLO, 1, &hello, sizeof(hello)), 0);
	assert_int_equal(fkt_raw_status(fd), EINVAL);
	hello.quirks = hq;
	assert_int_equal(fkt_raw_req(fd, FK_MSG_HELLO, 2, &hello, sizeof(hello)), 0);
	assert_int_equal(fkt_raw_status(fd), 0);
	close(fd);
	/* a request's flags: the bit above its table's is refused, its own taken */
	good = fkt_conn("fake0", FK_LIFETIME_CURRENT);
	assert_int_equal(fk_xrcd_open(good, -1, O_CREAT, 0, &h, &id), 0);
	assert_int_equal(fk_xrcd_close(good, h, fk_quirk_flags(FK_MSG_XRCD_CLOSE) << 1), EINVAL);
	assert_int_equal(fk_xrcd_close(good, h, fk_quirk_flags(FK_MSG_XRCD_CLOSE)), 0);
	fk_disconnect(good);
	fkt_end_clean(mon);
}

int main(int argc, char **argv)
{
	fkt_setup("t5201");
	return fkt_run(argc, argv);
}
