/* SPDX-License-Identifier: MIT */
/*
 * One message and the file descriptors that travel with it (SCM_RIGHTS)
 * on the fake kernel's AF_UNIX SOCK_SEQPACKET socket: the marshalling of
 * the control message, written once for both ends (the daemon's
 * kernel/server.c and its client library verbs/fk_client.c). Each end
 * keeps its own policy: blocking or not, EINTR, what an fd it did not ask
 * for means.
 */
#ifndef FP_FDPASS_H
#define FP_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* The most fds one receive takes; the kernel closes any more (MSG_CTRUNC). */
#define FP_FDPASS_MAX	4

/* The most fds one send attaches: more than a receive takes, so that the
 * tests and the fuzzer can offer the daemon a surplus. */
#define FP_FDPASS_SEND_MAX	8

/*
 * sendmsg() of len bytes at buf, with fd attached when fd >= 0 (the
 * receiver gets its own copy; the caller's stays open). flags are
 * sendmsg's; MSG_NOSIGNAL is always added: a peer gone is EPIPE, never
 * SIGPIPE. Returns what sendmsg returns: the bytes sent, or -1 and errno
 * (EBADF when fd is not open).
 */
ssize_t fp_fd_send(int sock, const void *buf, size_t len, int fd, int flags);

/*
 * The same with nfds fds (0..FP_FDPASS_SEND_MAX) from fds attached; more
 * is -1 and EINVAL, nothing sent.
 */
ssize_t fp_fds_send(int sock, const void *buf, size_t len, const int *fds, unsigned nfds,
		    int flags);

/*
 * recvmsg() of one message into buf (cap bytes; a longer one is cut,
 * MSG_TRUNC) and of the fds that came with it: at most max of them
 * (1..FP_FDPASS_MAX) into fds, their count in *nfds, each close-on-exec
 * and the caller's to close. flags are recvmsg's; *msg_flags (when
 * msg_flags is not NULL) the message's (MSG_TRUNC, MSG_CTRUNC). Returns
 * what recvmsg returns; on -1, *nfds is 0.
 */
ssize_t fp_fd_recv(int sock, void *buf, size_t cap, int *fds, unsigned max, unsigned *nfds,
		   int flags, int *msg_flags);

#endif /* FP_FDPASS_H */
