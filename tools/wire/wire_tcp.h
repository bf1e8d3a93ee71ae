/* SPDX-License-Identifier: MIT */
/*
 * wire_tcp: the TCP side channel the wire tools (ibvct-wire-ud,
 * ibvct-wire-rdma) meet their peer on, as the pingpongs do: a connection
 * to HOST:PORT, trying each address the name resolves to. A header of
 * inline functions: one tool builds against the codec, the other against
 * the system's verbs only, and neither links the other's objects.
 */
#ifndef WIRE_TCP_H
#define WIRE_TCP_H

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

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

#endif /* WIRE_TCP_H */
