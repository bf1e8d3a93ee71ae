/* SPDX-License-Identifier: MIT */
/*
 * wire_tcp: the TCP side channel the wire tools (ibvct-wire-ud,
 * ibvct-wire-rdma, ibvct-wire-xrc) meet their peer on, as the pingpongs
 * do: a connection to HOST:PORT, trying each address the name resolves
 * to, or the one connection a listener takes; fixed-length lines with a
 * limit on the wait; GIDs as hex. A header of
 * inline functions: ibvct-wire-ud builds against the codec, the others
 * against the system's verbs only, and none links another's objects.
 */
#ifndef WIRE_TCP_H
#define WIRE_TCP_H

#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* the fixed length of each line the tools exchange */
#define WIRE_LINE_LEN	128

static inline long long wire_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A connected socket, or -1 */
static inline int wire_tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *r;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	for (r = res; r; r = r->ai_next) {
		fd = socket(r->ai_family, r->ai_socktype | SOCK_CLOEXEC, r->ai_protocol);
		if (fd >= 0 && !connect(fd, r->ai_addr, r->ai_addrlen))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* The server's side: a listener on PORT, any address family; the one
 * connection that comes within limit_ms, or -1 */
static inline int wire_tcp_accept(const char *port, long long limit_ms)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *res, *r;
	int lfd = -1, fd = -1, one = 1;
	struct pollfd pfd;

	if (getaddrinfo(NULL, port, &hints, &res))
		return -1;
	for (r = res; r; r = r->ai_next) {
		lfd = socket(r->ai_family, r->ai_socktype | SOCK_CLOEXEC, r->ai_protocol);
		if (lfd < 0)
			continue;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(lfd, r->ai_addr, r->ai_addrlen) && !listen(lfd, 1))
			break;
		close(lfd);
		lfd = -1;
	}
	freeaddrinfo(res);
	if (lfd < 0)
		return -1;
	pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (poll(&pfd, 1, (int)limit_ms) == 1)
		fd = accept(lfd, NULL, NULL);
	close(lfd);
	return fd;
}

/* A line of WIRE_LINE_LEN bytes each way: 0, or -1 when the peer closed
 * or was silent for limit_ms */
static inline int wire_line_send(int fd, const char *line)
{
	char b[WIRE_LINE_LEN] = { 0 };

	snprintf(b, sizeof(b), "%s", line);
	return send(fd, b, sizeof(b), MSG_NOSIGNAL) == (ssize_t)sizeof(b) ? 0 : -1;
}

static inline int wire_line_recv(int fd, char *line, long long limit_ms)
{
	size_t got = 0;
	long long end = wire_now_ms() + limit_ms;

	while (got < WIRE_LINE_LEN) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = end - wire_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left) != 1)
			return -1;
		n = recv(fd, line + got, WIRE_LINE_LEN - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	line[WIRE_LINE_LEN - 1] = 0;
	return 0;
}

/* A GID's 16 bytes as 32 hex digits (hex: 33 bytes), and back */
static inline void wire_gid_hex(const uint8_t *raw, char *hex)
{
	for (int k = 0; k < 16; k++)
		sprintf(hex + 2 * k, "%02x", raw[k]);
}

static inline void wire_gid_unhex(const char *hex, uint8_t *raw)
{
	for (int k = 0; k < 16; k++) {
		unsigned b;

		sscanf(hex + 2 * k, "%2x", &b);
		raw[k] = (uint8_t)b;
	}
}

#endif /* WIRE_TCP_H */
