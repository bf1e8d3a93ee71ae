/* SPDX-License-Identifier: MIT */
/*
 * SCM_RIGHTS marshalling of the fake kernel's socket (fp_fdpass.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fp_fdpass.h"

/* Control space for the most fds a send attaches (FP_FDPASS_SEND_MAX >=
 * FP_FDPASS_MAX), aligned as a cmsghdr must be. */
union fp_fd_ctl {
	struct cmsghdr align;
	char space[CMSG_SPACE(sizeof(int) * FP_FDPASS_SEND_MAX)];
};

ssize_t fp_fds_send(int sock, const void *buf, size_t len, const int *fds, unsigned nfds,
		    int flags)
{
	union fp_fd_ctl ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (nfds > FP_FDPASS_SEND_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.space;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
}

ssize_t fp_fd_send(int sock, const void *buf, size_t len, int fd, int flags)
{
	return fp_fds_send(sock, buf, len, &fd, fd >= 0, flags);
}

ssize_t fp_fd_recv(int sock, void *buf, size_t cap, int *fds, unsigned max, unsigned *nfds,
		   int flags, int *msg_flags)
{
	union fp_fd_ctl ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space };
	struct cmsghdr *cm;
	ssize_t n;
	size_t k, cnt;

	if (max > FP_FDPASS_MAX)
		max = FP_FDPASS_MAX;
	/* room for max fds only: the kernel closes the rest, not us */
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * max);
	*nfds = 0;
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (msg_flags)
		*msg_flags = n < 0 ? 0 : mh.msg_flags;
	if (n < 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < cnt && *nfds < max; k++)
			memcpy(&fds[(*nfds)++], CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
	}
	return n;
}
