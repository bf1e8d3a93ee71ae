/* SPDX-License-Identifier: MIT */
/*
 * fw_udp: RoCE v2 over a real UDP socket (fw_udp.h). The header fields the
 * ICRC covers and the kernel writes: IPv4 identification 0 and DF (an
 * unconnected socket with IP_PMTUDISC_DO: Linux's ip_select_ident_segs),
 * the addresses, the protocol, the lengths, the UDP ports. The rest (TOS,
 * TTL, checksums, IPv6 traffic class, flow label, hop limit) is masked.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fw_udp.h"

#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102	/* linux/udp.h */
#endif

void fw_udp_gid_of(int version, const uint8_t *addr, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (version == 4) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, addr, 4);
	} else {
		memcpy(gid, addr, 16);
	}
}

/* The address of IFNAME of VERSION (6: link-local), into U */
static int find_addr(struct fw_udp *u, const char *ifname, int version)
{
	struct ifaddrs *ifs, *i;
	int err = EADDRNOTAVAIL;

	if (getifaddrs(&ifs))
		return errno;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (version == 4 && i->ifa_addr->sa_family == AF_INET) {
			memcpy(u->addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			err = 0;
			break;
		}
		if (version == 6 && i->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

			/* the link-local one; else (lo) any */
			if (err == 0 && !IN6_IS_ADDR_LINKLOCAL(a))
				continue;
			memcpy(u->addr, a, 16);
			err = 0;
			if (IN6_IS_ADDR_LINKLOCAL(a))
				break;
		}
	}
	freeifaddrs(ifs);
	return err;
}

int fw_udp_open(struct fw_udp *u, const char *ifname, int version, uint16_t port)
{
	int one = 1, pmtu = IP_PMTUDISC_DO, err;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	u->version = version;
	u->port = port;
	u->ifindex = if_nametoindex(ifname);
	if (!u->ifindex)
		return errno;
	err = find_addr(u, ifname, version);
	if (err)
		return err;
	fw_udp_gid_of(version, u->addr, u->gid);
	u->fd = socket(version == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0)
		return errno;
	if (version == 4) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

		memcpy(&sa.sin_addr, u->addr, 4);
		if (setsockopt(u->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
		    setsockopt(u->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) ||
		    bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)))
			goto err;
	} else {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port),
					   .sin6_scope_id = u->ifindex };

		memcpy(&sa.sin6_addr, u->addr, 16);
		/* rxe sends IPv6 with a UDP checksum of 0 (rxe_net.c), which a
		 * UDP socket drops unless told (RFC 6936) */
		if (setsockopt(u->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) ||
		    setsockopt(u->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) ||
		    setsockopt(u->fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one)) ||
		    bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)))
			goto err;
	}
	return 0;
err:
	err = errno;
	close(u->fd);
	u->fd = -1;
	return err;
}

void fw_udp_close(struct fw_udp *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
}

int fw_udp_send(struct fw_udp *u, struct fw_pkt *p, const uint8_t dgid[16], uint16_t dport)
{
	uint8_t buf[65536];
	size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN, len;
	long n;
	ssize_t s;

	p->ip.version = u->version;
	memset(p->ip.src, 0, 16);
	memset(p->ip.dst, 0, 16);
	if (u->version == 4) {
		memcpy(p->ip.src, u->addr, 4);
		memcpy(p->ip.dst, dgid + 12, 4);
		p->ip.id = 0;
		p->ip.frag = 0x4000;	/* DF */
	} else {
		memcpy(p->ip.src, u->addr, 16);
		memcpy(p->ip.dst, dgid, 16);
	}
	p->ip.ttl = 64;
	p->sport = u->port;
	p->dport = dport;
	n = fw_build(p, buf, sizeof(buf));
	if (n < 0)
		return EINVAL;
	if (u->icrc_flip) {
		buf[n - 1] ^= (uint8_t)(u->icrc_flip >> 24);
		buf[n - 2] ^= (uint8_t)(u->icrc_flip >> 16);
		buf[n - 3] ^= (uint8_t)(u->icrc_flip >> 8);
		buf[n - 4] ^= (uint8_t)u->icrc_flip;
		u->icrc_flip = 0;
	}
	len = (size_t)n - hl;
	if (u->cut) {
		if (u->cut < len)
			len = u->cut;
		u->cut = 0;
	}
	if (u->version == 4) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(dport) };

		memcpy(&sa.sin_addr, dgid + 12, 4);
		s = sendto(u->fd, buf + hl, len, 0, (struct sockaddr *)&sa, sizeof(sa));
	} else {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(dport),
					   .sin6_scope_id = u->ifindex };

		memcpy(&sa.sin6_addr, dgid, 16);
		s = sendto(u->fd, buf + hl, len, 0, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (s < 0)
		return errno;
	return (size_t)s == len ? 0 : EMSGSIZE;
}

static void put16(uint8_t *b, unsigned v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

int fw_udp_recv(struct fw_udp *u, struct fw_pkt *p, uint8_t *buf, size_t cap, int timeout_ms,
		const char **why)
{
	size_t ipl = u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN, hl = ipl + FW_UDP_LEN, len;
	struct pollfd pf = { .fd = u->fd, .events = POLLIN };
	struct sockaddr_storage from;
	char ctl[256];
	struct iovec iov;
	struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	uint8_t dst[16];
	struct cmsghdr *c;
	ssize_t n;
	uint32_t sum = 0;
	int r;

	if (cap < hl + 1)
		return EINVAL;
	/* 0: what is there now, in the one system call */
	r = timeout_ms ? poll(&pf, 1, timeout_ms) : 1;
	if (r < 0)
		return errno;
	if (r == 0)
		return ETIMEDOUT;
	iov.iov_base = buf + hl;
	iov.iov_len = cap - hl;
	n = recvmsg(u->fd, &m, MSG_TRUNC | (timeout_ms ? 0 : MSG_DONTWAIT));
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
	if ((size_t)n > cap - hl)
		return EMSGSIZE;
	memcpy(dst, u->addr, 16);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO)
			memcpy(dst, &((struct in_pktinfo *)CMSG_DATA(c))->ipi_addr, 4);
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO)
			memcpy(dst, &((struct in6_pktinfo *)CMSG_DATA(c))->ipi6_addr, 16);
	}
	len = hl + (size_t)n;
	memset(buf, 0, hl);
	if (u->version == 4) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)&from;

		buf[0] = 0x45;
		put16(buf + 2, (unsigned)len);
		put16(buf + 6, 0x4000);
		buf[8] = 64;
		buf[9] = 17;
		memcpy(buf + 12, &s->sin_addr, 4);
		memcpy(buf + 16, dst, 4);
		for (int k = 0; k < 20; k += 2)
			sum += (uint32_t)(buf[k] << 8 | buf[k + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		put16(buf + 10, ~sum & 0xffff);
		put16(buf + ipl, ntohs(s->sin_port));
	} else {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&from;

		buf[0] = 0x60;
		put16(buf + 4, (unsigned)(len - ipl));
		buf[6] = 17;
		buf[7] = 64;
		memcpy(buf + 8, &s->sin6_addr, 16);
		memcpy(buf + 24, dst, 16);
		put16(buf + ipl, ntohs(s->sin6_port));
	}
	/* the UDP checksum stays 0: the kernel checked it, the ICRC masks it */
	put16(buf + ipl + 2, u->port);
	put16(buf + ipl + 4, (unsigned)(len - ipl));
	r = fw_parse_on(buf, len, u->port, p, why);
	return r ? EBADMSG : 0;
}
