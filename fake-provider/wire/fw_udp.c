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
#include <time.h>
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

/*
 * The receive buffer: what a peer may have in flight. rxe takes a packet
 * in the kernel and queues it for its QP with no socket limit (linux v6.1
 * rxe_net.c rxe_udp_encap_recv, the tunnel hook that runs before a socket
 * queue, then rxe_recv.c rxe_rcv and rxe_resp.c rxe_resp_queue_pkt:
 * skb_queue_tail), so a peer's window (perftest keeps 128 messages of 4
 * packets on their way) meets no loss there. A UDP socket's default buffer
 * (net.core.rmem_default, 212992 bytes, each datagram charged its
 * buffer's whole size) drops the rest of such a burst, and every loss costs a
 * sequence NAK and a go back N. FW_UDP_RCVBUF past net.core.rmem_max
 * needs CAP_NET_ADMIN (SO_RCVBUFFORCE); without it the kernel's cap holds.
 */
static void set_rcvbuf(int fd)
{
	int want = FW_UDP_RCVBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)))
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
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
	set_rcvbuf(u->fd);
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

/* P built as it goes from U to DGID port DPORT, into BUF (CAP bytes), its
 * destination into SA: the datagram's length with its IP header (the
 * socket's part starts after the IP and UDP headers), or -(enum fw_err) */
static long build(struct fw_udp *u, struct fw_pkt *p, const uint8_t dgid[16], uint16_t dport,
		  uint8_t *buf, size_t cap, struct sockaddr_storage *sa, socklen_t *salen)
{
	long n;

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
	n = fw_build(p, buf, cap);
	if (n < 0)
		return n;
	if (u->icrc_flip) {
		buf[n - 1] ^= (uint8_t)(u->icrc_flip >> 24);
		buf[n - 2] ^= (uint8_t)(u->icrc_flip >> 16);
		buf[n - 3] ^= (uint8_t)(u->icrc_flip >> 8);
		buf[n - 4] ^= (uint8_t)u->icrc_flip;
		u->icrc_flip = 0;
	}
	/* the truncation fault: the datagram cut after u->cut bytes of UDP payload */
	if (u->cut) {
		size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN;

		if (u->cut < (size_t)n - hl)
			n = (long)(hl + u->cut);
		u->cut = 0;
	}
	memset(sa, 0, sizeof(*sa));
	if (u->version == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)sa;

		s->sin_family = AF_INET;
		s->sin_port = htons(dport);
		memcpy(&s->sin_addr, dgid + 12, 4);
		*salen = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(dport);
		s->sin6_scope_id = u->ifindex;
		memcpy(&s->sin6_addr, dgid, 16);
		*salen = sizeof(*s);
	}
	return n;
}

int fw_udp_send(struct fw_udp *u, struct fw_pkt *p, const uint8_t dgid[16], uint16_t dport)
{
	uint8_t buf[65536];
	size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN;
	struct sockaddr_storage sa;
	socklen_t salen;
	long n = build(u, p, dgid, dport, buf, sizeof(buf), &sa, &salen);
	ssize_t s;

	if (n < 0)
		return EINVAL;
	s = sendto(u->fd, buf + hl, (size_t)n - hl, 0, (struct sockaddr *)&sa, salen);
	if (s < 0)
		return errno;
	return (size_t)s == (size_t)n - hl ? 0 : EMSGSIZE;
}

int fw_udp_push(struct fw_udp *u, struct fw_udp_txq *q, struct fw_pkt *p, const uint8_t dgid[16],
		uint16_t dport)
{
	size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN;
	long n;
	int err = 0;

	if (q->n == FW_UDP_BATCH)
		err = fw_udp_flush(u, q);
	n = build(u, p, dgid, dport, q->buf[q->n], sizeof(q->buf[q->n]), &q->to[q->n], &q->tolen[q->n]);
	if (n == -FW_E_SPACE) {
		/* longer than a slot: alone, after what waits */
		int e = fw_udp_flush(u, q);

		return err ? err : e ? e : fw_udp_send(u, p, dgid, dport);
	}
	if (n < 0)
		return err ? err : EINVAL;
	q->len[q->n++] = (size_t)n - hl;
	return err;
}

int fw_udp_flush(struct fw_udp *u, struct fw_udp_txq *q)
{
	size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN;
	struct mmsghdr mh[FW_UDP_BATCH];
	struct iovec iov[FW_UDP_BATCH];
	unsigned i, at = 0;
	int err = 0;

	for (i = 0; i < q->n; i++) {
		iov[i].iov_base = q->buf[i] + hl;
		iov[i].iov_len = q->len[i];
		memset(&mh[i], 0, sizeof(mh[i]));
		mh[i].msg_hdr.msg_name = &q->to[i];
		mh[i].msg_hdr.msg_namelen = q->tolen[i];
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	/* a datagram that fails is lost, as one sendto's would be; the rest go */
	while (at < q->n) {
		int s = sendmmsg(u->fd, mh + at, q->n - at, 0);

		if (s < 0) {
			if (errno == EINTR)
				continue;
			if (!err)
				err = errno;
			at++;
			continue;
		}
		for (i = at; i < at + (unsigned)s; i++)
			if (mh[i].msg_len != q->len[i] && !err)
				err = EMSGSIZE;
		at += (unsigned)s;
	}
	q->n = 0;
	return err;
}

static void put16(uint8_t *b, unsigned v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* The datagram of N bytes at BUF + the header room, received with M (its
 * source address, its IP_PKTINFO or IPV6_PKTINFO), its IP and UDP headers
 * put back in front, parsed into P */
static int take(struct fw_udp *u, struct fw_pkt *p, uint8_t *buf, size_t n, const struct msghdr *m,
		const char **why)
{
	size_t ipl = u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN, hl = ipl + FW_UDP_LEN, len;
	uint8_t dst[16];
	struct cmsghdr *c;
	uint32_t sum = 0;

	memcpy(dst, u->addr, 16);
	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO)
			memcpy(dst, &((struct in_pktinfo *)CMSG_DATA(c))->ipi_addr, 4);
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO)
			memcpy(dst, &((struct in6_pktinfo *)CMSG_DATA(c))->ipi6_addr, 16);
	}
	len = hl + n;
	memset(buf, 0, hl);
	if (u->version == 4) {
		const struct sockaddr_in *s = m->msg_name;

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
		const struct sockaddr_in6 *s = m->msg_name;

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
	return fw_parse_on(buf, len, u->port, p, why) ? EBADMSG : 0;
}

int fw_udp_recv(struct fw_udp *u, struct fw_pkt *p, uint8_t *buf, size_t cap, int timeout_ms,
		const char **why)
{
	size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN;
	struct pollfd pf = { .fd = u->fd, .events = POLLIN };
	struct sockaddr_storage from;
	char ctl[256];
	struct iovec iov;
	struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n;
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
	return take(u, p, buf, (size_t)n, &m, why);
}

int fw_udp_fill(struct fw_udp *u, struct fw_udp_batch *b)
{
	size_t hl = (u->version == 4 ? FW_IP4_LEN : FW_IP6_LEN) + FW_UDP_LEN;
	int n;

	b->n = b->at = 0;
	for (unsigned i = 0; i < FW_UDP_BATCH; i++) {
		b->iov[i].iov_base = b->buf[i] + hl;
		b->iov[i].iov_len = sizeof(b->buf[i]) - hl;
		memset(&b->mh[i], 0, sizeof(b->mh[i]));
		b->mh[i].msg_hdr.msg_name = &b->from[i];
		b->mh[i].msg_hdr.msg_namelen = sizeof(b->from[i]);
		b->mh[i].msg_hdr.msg_iov = &b->iov[i];
		b->mh[i].msg_hdr.msg_iovlen = 1;
		b->mh[i].msg_hdr.msg_control = b->ctl[i];
		b->mh[i].msg_hdr.msg_controllen = sizeof(b->ctl[i]);
	}
	n = recvmmsg(u->fd, b->mh, FW_UDP_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : errno;
	b->n = (unsigned)n;
	return 0;
}

long long fw_udp_stamp(const struct fw_udp_batch *b)
{
	const struct msghdr *m;
	struct cmsghdr *c;

	if (b->at >= b->n)
		return 0;
	m = &b->mh[b->at].msg_hdr;
	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return ts.tv_sec * 1000000000LL + ts.tv_nsec;
		}
	return 0;
}

int fw_udp_next(struct fw_udp *u, struct fw_udp_batch *b, struct fw_pkt *p, const char **why)
{
	unsigned i = b->at;

	if (i >= b->n)
		return ETIMEDOUT;
	b->at++;
	/* MSG_TRUNC set on the message: longer than a slot, not whole */
	if (b->mh[i].msg_hdr.msg_flags & MSG_TRUNC)
		return EMSGSIZE;
	return take(u, p, b->buf[i], b->mh[i].msg_len, &b->mh[i].msg_hdr, why);
}
