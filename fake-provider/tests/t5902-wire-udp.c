/* SPDX-License-Identifier: MIT */
/*
 * t5902: the start of the RoCE v2 transport (fake-provider/wire/fw_udp.h)
 * on the loopback interface: two UDP sockets, each on an address of lo,
 * send codec packets to each other; the receiver puts the IP and UDP
 * headers back and its parse finds the ICRC good, so the sender predicted
 * every covered field the kernel wrote (IPv4 identification 0 and DF, the
 * addresses, lengths and ports). A datagram whose ICRC was computed for
 * another source port is refused as a bad ICRC. Real rxe on the other end:
 * tools/vm/t6130 in the guests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "fw_udp.h"
#include "tr.h"

/* Two sockets on lo's VERSION address, on ports of their own */
static void pair(struct fw_udp *a, struct fw_udp *b, int version)
{
	for (uint16_t port = 47910; port < 48010; port += 2) {
		int e = fw_udp_open(a, "lo", version, port);

		if (e == EADDRNOTAVAIL)
			tr_skip("lo has no IPv%d address", version);
		if (e)
			continue;
		if (!fw_udp_open(b, "lo", version, (uint16_t)(port + 1)))
			return;
		fw_udp_close(a);
	}
	fail_msg("no free pair of UDP ports on lo");
}

static void ud_send(struct fw_pkt *p, uint32_t dqpn, uint32_t psn, const uint8_t *pay, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = FW_TR_UD | 0x04;	/* SEND_ONLY */
	p->bth.pkey = 0xffff;
	p->bth.dqpn = dqpn;
	p->bth.psn = psn;
	p->deth.qkey = 0x11111111;
	p->deth.sqpn = 0x42;
	p->payload = pay;
	p->payload_len = n;
	p->bth.pad = (uint8_t)((4 - n % 4) % 4);
}

static void exchange(int version)
{
	static const uint8_t pay[] = "a UD send over a real socket";
	static uint8_t buf[4096];
	struct fw_udp a, b;
	struct fw_pkt p, q;
	const char *why = NULL;

	pair(&a, &b, version);
	ud_send(&p, 0x123, 7, pay, sizeof(pay));
	assert_int_equal(fw_udp_send(&a, &p, b.gid, b.port), 0);
	assert_int_equal(fw_udp_recv(&b, &q, buf, sizeof(buf), 10000 * (int)tr_timeout_mult(), &why), 0);
	assert_int_equal(q.ip.version, version);
	assert_int_equal(q.bth.opcode, p.bth.opcode);
	assert_int_equal(q.bth.dqpn, 0x123);
	assert_int_equal(q.bth.psn, 7);
	assert_int_equal(q.deth.qkey, 0x11111111);
	assert_int_equal(q.deth.sqpn, 0x42);
	assert_int_equal(q.payload_len, sizeof(pay));
	assert_memory_equal(q.payload, pay, sizeof(pay));
	assert_int_equal(q.sport, a.port);
	/* and back */
	ud_send(&p, 0x42, 8, pay, 5);
	assert_int_equal(fw_udp_send(&b, &p, a.gid, a.port), 0);
	assert_int_equal(fw_udp_recv(&a, &q, buf, sizeof(buf), 10000 * (int)tr_timeout_mult(), &why), 0);
	assert_int_equal(q.payload_len, 5);
	assert_int_equal(q.bth.pad, 3);
	fw_udp_close(&a);
	fw_udp_close(&b);
}

TR_TEST(a_ud_send_crosses_ipv4_loopback_with_its_icrc_good)
{
	(void)state;
	exchange(4);
}

TR_TEST(a_ud_send_crosses_ipv6_loopback_with_its_icrc_good)
{
	(void)state;
	exchange(6);
}

/* The ICRC covers the UDP source port: one computed for another is refused */
TR_TEST(a_datagram_with_an_icrc_for_another_source_port_is_refused)
{
	static const uint8_t pay[8] = "12345678";
	static uint8_t buf[4096], out[4096];
	struct fw_udp a, b;
	struct fw_pkt p, q;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
	const char *why = NULL;
	long n;

	(void)state;
	pair(&a, &b, 4);
	ud_send(&p, 0x123, 1, pay, sizeof(pay));
	p.ip.version = 4;
	p.ip.frag = 0x4000;
	memcpy(p.ip.src, a.addr, 4);
	memcpy(p.ip.dst, b.addr, 4);
	p.sport = (uint16_t)(a.port + 100);	/* not the port it leaves from */
	p.dport = b.port;
	n = fw_build(&p, out, sizeof(out));
	assert_true(n > 28);
	sa.sin_port = htons(b.port);
	memcpy(&sa.sin_addr, b.addr, 4);
	assert_int_equal(sendto(a.fd, out + 28, (size_t)n - 28, 0, (struct sockaddr *)&sa, sizeof(sa)),
			 n - 28);
	assert_int_equal(fw_udp_recv(&b, &q, buf, sizeof(buf), 10000 * (int)tr_timeout_mult(), &why),
			 EBADMSG);
	assert_string_equal(why, fw_strerror(FW_E_ICRC));
	/* the same bytes from the right port pass */
	p.sport = a.port;
	n = fw_build(&p, out, sizeof(out));
	assert_int_equal(sendto(a.fd, out + 28, (size_t)n - 28, 0, (struct sockaddr *)&sa, sizeof(sa)),
			 n - 28);
	assert_int_equal(fw_udp_recv(&b, &q, buf, sizeof(buf), 10000 * (int)tr_timeout_mult(), &why), 0);
	fw_udp_close(&a);
	fw_udp_close(&b);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
