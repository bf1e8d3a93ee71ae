/* SPDX-License-Identifier: MIT */
/*
 * The second transport: RoCE v2 on a real interface (a device with
 * `transport roce IFACE` in its script). One room per device and process:
 * a UDP socket on port 4791 of each of the interface's addresses (its IPv6
 * link-local and its IPv4 address, fake-provider/wire fw_udp), a thread
 * that serves them when no verb does, the messages on their way, and each
 * QP's wire state. Everything the packets carry is built and checked by
 * the codec (fw_wire: headers, pad, ICRC).
 *
 * What it owns are the wire's rules, below the state machines, which keep
 * theirs (a message is still one request to the responder and one answer
 * to the completer):
 *  - the requester side: a message in packets of the path MTU (UD: one),
 *    its PSNs (one per packet, a READ one per response packet it asks
 *    for), taken at its first try and sent again unchanged at every retry
 *    (a READ then asks only for the response packets that have not come,
 *    linux v6.1 rxe_req.c req_retry);
 *    AckReq on the last packet of an RC request; the local ACK timer
 *    (4.096 us << timeout) of the oldest message on its way;
 *  - the answers: an ACK completes every message it covers (IBA vol 1
 *    9.7.5.1: coalesced ACKs), a NAK implicitly acknowledges what came
 *    before its PSN; a PSN sequence NAK, like the timer, makes the message
 *    lost for the completer, which retries it at once and counts retry_cnt
 *    (linux v6.1 and v6.12 rxe_comp.c check_ack, AETH_NAK_PSN_SEQ_ERROR ->
 *    COMPST_ERROR_RETRY); an RNR NAK carries the responder's timer code;
 *    READ response packets gathered in PSN order (rxe_comp.c do_read);
 *  - the responder side: the expected PSN; a later PSN is a sequence
 *    error, NAKed once until the expected one comes (rxe_resp.c check_psn,
 *    sent_psn_nak); an earlier one is a duplicate: a SEND or WRITE is
 *    acknowledged again, a READ executed again, an atomic answered from the
 *    results kept of the last ones (rxe_resp.c duplicate_request); a
 *    message gathered from its packets (each first and middle packet a
 *    whole path MTU, rxe_resp.c check_length) and handed to the responder
 *    whole; its answer as an ACK, a READ response in segments, an atomic
 *    acknowledge, or a NAK with its AETH code (IBA vol 1 9.7.5.2, table 44;
 *    rxe_hdr.h enum aeth_syndrome); an RNR NAK leaves the expected PSN at
 *    the message's first packet; UC drops a message with a PSN gap and
 *    waits for a first packet (IBA vol 1 9.7.4.1.1, rxe_resp.c
 *    check_psn for UC); UD takes each packet alone, its source QP and
 *    Q_Key from DETH, its GRH from the IP header;
 *  - XRC (IBA vol 1 9.2 table 36, the XRCETH): an XRC_SEND QP's requests
 *    go with XRC's opcodes (0xa0 | op), each packet with an XRCETH that
 *    names the SRQ its WR's remote_srqn names, to the target QP of the
 *    path; the target QP keeps RC's PSNs, duplicates, ACKs and NAKs, and
 *    answers with XRC's ACK, READ response and atomic acknowledge
 *    opcodes. It hands the responder the SRQ number with the target QP's
 *    domain, access flags and RNR timer (what the daemon's gate adds over
 *    shared memory, requester.c ROUTE), and the responder's GET_XRC_SRQ
 *    keeps its check (an XRC SRQ of that domain, else an invalid request
 *    NAK: WR-03).
 *
 * Limits: one process at a time per RoCE device on a host (the socket
 * binds port 4791 of the interface's address), so an XRC target QP
 * receives in that process, through its view of the QP (the one that
 * made or opened it and modified it: verbs/qp.c fp_tgt_modify) and its
 * SRQs only; ATOMIC_WRITE and FLUSH do not travel on the wire yet; an
 * IPv4 packet of another sender is checked against an identification
 * of 0 (a UDP socket never sees the field the ICRC covers: fw_udp.h), so
 * interoperating peers use IPv6 GIDs; no rxe has XRC, so for XRC the
 * spec and tshark (its BTH) are the judge, not a real peer.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fp_clock.h"
#include "fp_self.h"
#include "fw_udp.h"
#include "roce.h"
#include "sq.h"

#define FR_BUF		(10240)		/* a packet of 4096 bytes and its headers, and more */
#define FR_ATOMS	16		/* atomic results kept for duplicates */
#define FR_WAIT_MS	200		/* the thread's longest sleep */
#define FR_ACTIVE_NS	100000		/* a verb keeps the thread away this long */

/* A reliable message on its way, until its answer or its timer. */
struct fr_out {
	struct fr_out *next;
	uint32_t qpn;
	uint64_t id;
	enum fp_pkt_op op;
	uint32_t psn, npkt;		/* its PSNs: [psn, psn + npkt) */
	uint32_t len, mtu;
	char *rbuf;			/* a READ's response, gathered */
	uint32_t rnext;			/* the next response PSN's index */
	uint32_t rtry;			/* rnext when this try went */
	long long due;			/* the ACK timer, 0: none (timeout 0) */
};

struct fr_atom {
	bool used;
	uint32_t psn;
	uint64_t orig;
};

/* A READ executed: its first PSN and its response packets */
struct fr_rd {
	bool used;
	uint32_t psn, npkt;
};

struct fe_roce_qp {
	uint32_t npsn;			/* requester: the next message's first PSN */
	uint32_t epsn;			/* responder: the PSN it expects */
	bool nak_sent;			/* a sequence NAK went for epsn */
	bool uc_resync;			/* UC: a gap dropped a message: wait for a first packet */
	uint32_t msn;
	/* the message being gathered */
	bool in_msg;
	struct fp_packet m;
	uint32_t m_first;
	char *buf;
	uint32_t got, cap;
	struct fr_atom at[FR_ATOMS];
	unsigned at_next;
	struct fr_rd rd[FR_ATOMS];	/* READs executed, for their retries */
	unsigned rd_next;
};

struct fe_roce {
	struct fe_dev *dev;
	const struct fp_dev_spec *spec;
	pid_t pid;
	struct fw_udp u[2];		/* [0] IPv6 link-local, [1] IPv4 */
	bool has[2];
	struct fr_out *out;		/* in the order sent */
	struct fr_out *parked;		/* READs lost with part of their answer */
	uint64_t next_id;
	pthread_t thread;
	unsigned long ntx;		/* packets sent, for the faults */
	bool held;			/* a packet held back (fault reorder) */
	struct fw_pkt held_pkt;
	uint8_t held_dgid[16];
	uint8_t held_data[4096];
	uint8_t chunk[FR_BUF];
	struct fw_udp_batch b[2];	/* datagrams taken, per socket */
	struct fw_udp_txq txq[2];	/* datagrams to send, per socket */
	long long seen[2];		/* when each socket was last found empty or filled */
};

static const struct fe_xport_work *fr_work;
static uint64_t fr_verbs;		/* bumped by every verb's progress (the threads read it) */
static struct fe_roce *fr_room(struct fe_qp *qp);

void fe_roce_work(const struct fe_xport_work *work)
{
	fr_work = work;
}

bool fe_roce_on(const struct fe_qp *qp)
{
	return qp->spec && qp->spec->roce_if[0] &&
	       (qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC || qp->type == IBV_QPT_UD ||
		qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV);
}

/* The transport bits of a QP type's opcodes (IBA vol 1 9.2, table 36):
 * an XRC INI sends and its TGT answers with XRC's */
static uint8_t fr_tr(enum ibv_qp_type t)
{
	return t == IBV_QPT_UC ? FW_TR_UC : t == IBV_QPT_UD ? FW_TR_UD :
	       t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV ? FW_TR_XRC : FW_TR_RC;
}

/* Reliable, RC's rules: RC, and XRC on both ends */
static bool fr_rc_like(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV;
}

/* a - b in PSN space (24 bits, IBA vol 1 9.7.2): negative when a is before b */
static int32_t fr_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static uint32_t fr_mtu(const struct fe_qp *qp)
{
	if (qp->type == IBV_QPT_UD || !qp->attr.path_mtu) {
		uint8_t port = qp->attr.port_num ? qp->attr.port_num : 1;

		return 128u << qp->spec->port[port - 1].attr.active_mtu;
	}
	return 128u << qp->attr.path_mtu;
}

static struct fe_roce_qp *fr_qp(struct fe_qp *qp)
{
	if (!qp->roce)
		qp->roce = calloc(1, sizeof(*qp->roce));
	return qp->roce;
}

void fe_roce_psn(struct fe_qp *qp, bool rq, uint32_t psn)
{
	struct fe_roce_qp *q;

	if (!fe_roce_on(qp) || !(q = fr_qp(qp)))
		return;
	(void)fr_room(qp);		/* its sockets listen from now on */
	if (rq) {
		q->epsn = psn & 0xffffff;
		q->nak_sent = q->in_msg = false;
		q->uc_resync = qp->type == IBV_QPT_UC;
		q->got = 0;
	} else {
		q->npsn = psn & 0xffffff;
	}
}

static void fr_out_free(struct fr_out *o)
{
	free(o->rbuf);
	free(o);
}

/* The READ of QP qpn at PSN psn lost with part of its answer, out of the
 * parked ones (NULL: none); all: every one of the QP freed instead. */
static struct fr_out *fr_parked_take(struct fe_roce *rm, uint32_t qpn, uint32_t psn, bool all)
{
	struct fr_out **pp = &rm->parked, *k;

	while ((k = *pp)) {
		if (k->qpn == qpn && (all || k->psn == psn)) {
			*pp = k->next;
			if (!all)
				return k;
			fr_out_free(k);
		} else {
			pp = &k->next;
		}
	}
	return NULL;
}

void fe_roce_qp_free(struct fe_qp *qp)
{
	struct fe_roce *rm = qp->dev ? *fe_dev_roce_slot(qp->dev) : NULL;

	if (rm) {
		struct fr_out **pp = &rm->out, *o;

		while ((o = *pp)) {
			if (o->qpn == qp->qpn) {
				*pp = o->next;
				fr_out_free(o);
			} else {
				pp = &o->next;
			}
		}
		fr_parked_take(rm, qp->qpn, 0, true);
	}
	if (qp->roce) {
		free(qp->roce->buf);
		free(qp->roce);
		qp->roce = NULL;
	}
}

/* ---- sending ------------------------------------------------------------- */
static int fr_tx_now(struct fe_roce *rm, const uint8_t dgid[16], struct fw_pkt *p)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	int k = memcmp(dgid, v4map, sizeof(v4map)) ? 0 : 1;

	if (!rm->has[k])
		return EAFNOSUPPORT;
	/* the packets go in the order made, across both sockets */
	if (rm->txq[1 - k].n)
		fw_udp_flush(&rm->u[1 - k], &rm->txq[1 - k]);
	return fw_udp_push(&rm->u[k], &rm->txq[k], p, dgid, FW_UDP_PORT);
}

/* What waits to be sent goes (sendmmsg): 0 or the first errno met */
static int fr_flush(struct fe_roce *rm)
{
	int err = 0, e;

	for (int k = 0; k < 2; k++)
		if (rm->txq[k].n && (e = fw_udp_flush(&rm->u[k], &rm->txq[k])) && !err)
			err = e;
	return err;
}

/* The packet held back (fault reorder) goes now. */
static void fr_release_held(struct fe_roce *rm)
{
	if (!rm->held)
		return;
	rm->held = false;
	rm->held_pkt.payload = rm->held_data;
	fr_tx_now(rm, rm->held_dgid, &rm->held_pkt);
}

/*
 * One packet out, through the script's faults on the wire (the device's
 * `transport roce IFACE KIND N`): every Nth packet sent is lost, sent
 * twice, held back until the next one went, sent with a wrong ICRC, or cut
 * after its BTH and two bytes (a truncated header, trunc), or (an XRC
 * request) with an XRCETH that names the SRQ number below the one its WR
 * named.
 * Counted in sending order, so a run sees the same faults every time; a
 * retransmission (again) is neither counted nor faulted unless N is 1 (every
 * packet), so that a fault never hits the same packet at each try and RC
 * recovers, as it does from a random loss.
 */
static int fr_tx(struct fe_roce *rm, const uint8_t dgid[16], struct fw_pkt *p, bool again)
{
	unsigned long n;
	unsigned srqn = rm->spec->wire_fault.srqn;
	int k, err;

	if (srqn && (p->bth.opcode & 0xe0) == FW_TR_XRC &&
	    (again ? srqn == 1 : (rm->ntx + 1) % srqn == 0))
		p->xrceth.srqn = (p->xrceth.srqn - 1) & 0xffffff;
	if (again) {
		if (rm->spec->wire_fault.loss == 1)
			return 0;
		return fr_tx_now(rm, dgid, p);
	}
	n = ++rm->ntx;
	if (rm->spec->wire_fault.loss && n % rm->spec->wire_fault.loss == 0)
		return 0;
	if (rm->spec->wire_fault.reorder && n % rm->spec->wire_fault.reorder == 0 && !rm->held &&
	    p->payload_len <= sizeof(rm->held_data)) {
		rm->held = true;
		rm->held_pkt = *p;
		memcpy(rm->held_dgid, dgid, 16);
		if (p->payload_len)
			memcpy(rm->held_data, p->payload, p->payload_len);
		return 0;
	}
	if (rm->spec->wire_fault.icrc && n % rm->spec->wire_fault.icrc == 0)
		for (k = 0; k < 2; k++)
			rm->u[k].icrc_flip = 0x00000100;
	/* a truncated header: the BTH and two bytes of what follows it */
	if (rm->spec->wire_fault.trunc && n % rm->spec->wire_fault.trunc == 0)
		for (k = 0; k < 2; k++)
			rm->u[k].cut = FW_BTH_LEN + 2;
	err = fr_tx_now(rm, dgid, p);
	rm->u[0].icrc_flip = rm->u[1].icrc_flip = 0;
	rm->u[0].cut = rm->u[1].cut = 0;
	if (!err && rm->spec->wire_fault.dup && n % rm->spec->wire_fault.dup == 0)
		fr_tx_now(rm, dgid, p);
	fr_release_held(rm);
	return err;
}

static void fr_bth(struct fw_pkt *p, uint8_t opcode, uint32_t dqpn, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = opcode;
	p->bth.pkey = 0xffff;
	p->bth.dqpn = dqpn & 0xffffff;
	p->bth.psn = psn & 0xffffff;
}

static void fr_payload(struct fw_pkt *p, const void *data, size_t n, bool last)
{
	p->payload = data;
	p->payload_len = n;
	p->bth.pad = last ? (uint8_t)((4 - n % 4) % 4) : 0;
}

/* The opcode of a request packet (IBA vol 1 table 36): position 0 first,
 * 1 middle, 2 last, 3 only; -1: not carried here. XRC has every opcode of
 * RC, with its own transport bits (0xa0 | op). */
static int fr_req_opcode(enum ibv_qp_type t, enum fp_pkt_op op, int pos)
{
	static const uint8_t send[4] = { 0x00, 0x01, 0x02, 0x04 }, send_imm[4] = { 0x00, 0x01, 0x03, 0x05 },
			     send_inv[4] = { 0x00, 0x01, 0x16, 0x17 }, write[4] = { 0x06, 0x07, 0x08, 0x0a },
			     write_imm[4] = { 0x06, 0x07, 0x09, 0x0b };
	uint8_t tr = fr_tr(t);
	bool rc = fr_rc_like(t);

	if (t == IBV_QPT_UD)
		return op == FP_PKT_SEND ? tr | 0x04 : op == FP_PKT_SEND_IMM ? tr | 0x05 : -1;
	switch (op) {
	case FP_PKT_SEND:	return tr | send[pos];
	case FP_PKT_SEND_IMM:	return tr | send_imm[pos];
	case FP_PKT_SEND_INV:	return rc ? tr | send_inv[pos] : -1;
	case FP_PKT_WRITE:	return tr | write[pos];
	case FP_PKT_WRITE_IMM:	return tr | write_imm[pos];
	case FP_PKT_READ:	return rc ? tr | 0x0c : -1;
	case FP_PKT_CMP_SWAP:	return rc ? tr | 0x13 : -1;
	case FP_PKT_FETCH_ADD:	return rc ? tr | 0x14 : -1;
	default:		return -1;
	}
}

static uint32_t fr_npkt(uint32_t len, uint32_t mtu)
{
	return len ? (len + mtu - 1) / mtu : 1;
}

static int fr_open(struct fe_roce *rm);

static struct fe_roce *fr_room(struct fe_qp *qp)
{
	struct fe_roce **slot = fe_dev_roce_slot(qp->dev), *rm = *slot;

	if (rm && rm->pid == fp_self_pid())
		return rm;
	if (rm)
		return NULL;		/* the parent's, inherited through fork */
	rm = calloc(1, sizeof(*rm));
	if (!rm)
		return NULL;
	rm->dev = qp->dev;
	rm->spec = qp->spec;
	rm->pid = fp_self_pid();
	*slot = rm;
	if (fr_open(rm))
		rm->has[0] = rm->has[1] = false;
	return rm;
}

static void fr_out_add(struct fe_roce *rm, struct fr_out *o)
{
	struct fr_out **pp = &rm->out;

	while (*pp)
		pp = &(*pp)->next;
	*pp = o;
}

/* Drops the entry of QP qpn for PSN psn (a retry of it replaces it). */
static void fr_out_drop_psn(struct fe_roce *rm, uint32_t qpn, uint32_t psn)
{
	struct fr_out **pp = &rm->out, *o;

	while ((o = *pp)) {
		if (o->qpn == qpn && o->psn == psn) {
			*pp = o->next;
			fr_out_free(o);
			return;
		}
		pp = &o->next;
	}
}

int fe_roce_send(struct fe_qp *r, struct fe_sent *sent, const struct fp_packet *pkt,
		 const uint8_t dgid[16], bool reliable)
{
	struct fe_roce *rm = fr_room(r);
	struct fe_roce_qp *q = fr_qp(r);
	uint32_t mtu = fr_mtu(r), len = pkt->len, npkt, i, off;
	bool asks = fe_pkt_asks(pkt->op);
	bool again;
	int err = 0;
	uint32_t skip = 0;		/* a READ's response packets already here */
	char *rbuf = NULL;

	if (!rm || !q)
		return ENOMEM;
	if (fr_req_opcode(r->type, pkt->op, 3) < 0)
		return EPROTONOSUPPORT;
	/* a READ takes a PSN for each response packet; an atomic and a UD
	 * message are one packet */
	npkt = r->type == IBV_QPT_UD || (asks && pkt->op != FP_PKT_READ) ? 1 : fr_npkt(len, mtu);
	again = sent->wpsn_set;
	if (!sent->wpsn_set) {
		sent->wpsn = q->npsn;
		sent->wpsn_set = true;
		q->npsn = (q->npsn + npkt) & 0xffffff;
	}
	sent->wire = true;
	/* a READ sent again asks only for what has not come: its address past
	 * the packets that came, its length what is left, its PSN the first
	 * missing one (linux v6.1 rxe_req.c req_retry: wqe->iova += npsn *
	 * mtu, the RETH length wqe->dma.resid; rxe_comp.c keeps what came) */
	if (again && pkt->op == FP_PKT_READ) {
		struct fr_out *k = fr_parked_take(rm, r->qpn, sent->wpsn, false);

		if (k) {
			skip = k->rnext;
			rbuf = k->rbuf;
			free(k);
		}
	}
	/* a READ or an atomic is one packet; a message one per MTU */
	for (i = 0, off = 0; i < (asks ? 1 : npkt); i++) {
		uint32_t n = asks ? 0 : len - off < mtu ? len - off : mtu;
		int pos = npkt == 1 || asks ? 3 : i == 0 ? 0 : i + 1 == npkt ? 2 : 1;
		int opc = fr_req_opcode(r->type, pkt->op, pos);
		struct fw_pkt p;

		fr_bth(&p, (uint8_t)opc, pkt->dst_qpn, (sent->wpsn + i + skip) & 0xffffff);
		p.bth.se = pkt->solicited && (pos == 2 || pos == 3);
		p.bth.ackreq = fr_rc_like(r->type) && (pos == 2 || pos == 3);
		if (pos == 0 || pos == 3) {
			p.reth.va = pkt->remote_addr + (uint64_t)skip * mtu;
			p.reth.rkey = pkt->rkey;
			p.reth.len = len - skip * mtu;
		}
		p.atometh.va = pkt->remote_addr;
		p.atometh.rkey = pkt->rkey;
		p.atometh.swap_add = pkt->op == FP_PKT_CMP_SWAP ? pkt->swap : pkt->compare_add;
		p.atometh.compare = pkt->compare_add;
		p.imm = __builtin_bswap32(pkt->imm);	/* the WR's network order, as on the wire */
		p.ieth_rkey = pkt->imm;			/* SEND_INV: the rkey, host order */
		p.deth.qkey = pkt->qkey;
		p.deth.sqpn = r->qpn;
		/* XRC: every request packet names the SRQ at the target (IBA
		 * vol 1, XRCETH), the WR's remote_srqn */
		p.xrceth.srqn = pkt->xrc_srqn & 0xffffff;
		if (n)
			fe_pieces_copy((char *)rm->chunk, pkt->pieces, pkt->npieces, off, n);
		fr_payload(&p, rm->chunk, n, pos == 2 || pos == 3);
		err = fr_tx(rm, dgid, &p, again);
		if (err)
			break;
		off += n;
	}
	{
		/* the message's packets in one system call (sendmmsg) */
		int e = fr_flush(rm);

		if (!err)
			err = e;
	}
	if (err || !reliable) {
		free(rbuf);
		return err;
	}
	{
		struct fr_out *o = calloc(1, sizeof(*o));
		uint8_t t = r->attr.timeout;

		if (!o) {
			free(rbuf);
			return ENOMEM;
		}
		fr_out_drop_psn(rm, r->qpn, sent->wpsn);
		o->qpn = r->qpn;
		o->id = ++rm->next_id;
		o->op = pkt->op;
		o->psn = sent->wpsn;
		o->npkt = npkt;
		o->len = len;
		o->mtu = mtu;
		o->rbuf = rbuf;
		o->rnext = skip;
		o->rtry = skip;
		/* IBA vol 1 9.7.6.1.3: 4.096 us * 2^timeout; 0 waits for ever */
		o->due = t ? fp_now_ns() + (4096LL << (t < 31 ? t : 31)) * fp_timeout_mult() : 0;
		fr_out_add(rm, o);
		sent->id = o->id;
	}
	return 0;
}

/* ---- the requester's side of the answers ------------------------------- */
/* Out of the list, without freeing it. */
static void fr_unlink(struct fe_roce *rm, struct fr_out *o)
{
	struct fr_out **pp = &rm->out;

	while (*pp && *pp != o)
		pp = &(*pp)->next;
	if (*pp)
		*pp = o->next;
}

/* The messages of o's QP sent after it: the completer sends them again
 * behind o (its go back N), so they wait for nothing here. */
static void fr_drop_after(struct fe_roce *rm, struct fr_out *o)
{
	struct fr_out *x = o->next, *nx;

	for (; x; x = nx) {
		nx = x->next;
		if (x->qpn == o->qpn) {
			fr_unlink(rm, x);
			fr_out_free(x);
		}
	}
}

/* o answered: to the completer, through the dispatcher (resp->data may
 * be o's READ buffer: valid during the call) */
static void fr_done(struct fe_roce *rm, struct fr_out *o, struct fp_response *resp)
{
	struct fe_rcv rcv = { .resp = resp, .qpn = o->qpn, .id = o->id };

	fr_unlink(rm, o);
	fr_work->recv(rm->dev, &rcv);
	fr_out_free(o);
}

/* The message o lost (timer, sequence NAK), with its QP's later ones: the
 * completer retries it at once and sends the later ones again behind it. */
static void fr_lost(struct fe_roce *rm, struct fr_out *o)
{
	struct fp_response resp = { .status = FP_ACK_NO_PATH, .timer_ran = true };
	struct fr_out *k;

	/* response packets in order since its last try: progress (completer.c) */
	resp.progress = o->op == FP_PKT_READ && o->rnext > o->rtry;
	fr_drop_after(rm, o);
	/* a READ keeps the packets of its answer that came, for its retry */
	if (o->op == FP_PKT_READ && o->rnext && (k = malloc(sizeof(*k)))) {
		*k = *o;
		o->rbuf = NULL;
		k->next = rm->parked;
		rm->parked = k;
	}
	fr_done(rm, o, &resp);
}

/* Everything of QP qpn up to PSN psn (before it, or through it) that asks
 * for no data is done: an ACK or NAK covers it. */
static void fr_acked_before(struct fe_roce *rm, uint32_t qpn, uint32_t psn, bool through)
{
	struct fr_out *o, *nx;

	for (o = rm->out; o; o = nx) {
		uint32_t last = (o->psn + o->npkt - 1) & 0xffffff;
		struct fp_response resp = { .status = FP_ACK_OK };
		int32_t d;

		nx = o->next;
		if (o->qpn != qpn)
			continue;
		d = fr_psn_cmp(last, psn);
		if (d > 0 || (d == 0 && !through))
			break;
		if (fe_pkt_asks(o->op))
			continue;	/* its data has yet to come: its timer decides */
		fr_done(rm, o, &resp);
	}
}

static struct fr_out *fr_find(struct fe_roce *rm, uint32_t qpn, uint32_t psn)
{
	struct fr_out *o;

	for (o = rm->out; o; o = o->next)
		if (o->qpn == qpn && fr_psn_cmp(psn, o->psn) >= 0 &&
		    fr_psn_cmp(psn, (o->psn + o->npkt) & 0xffffff) < 0)
			return o;
	return NULL;
}

static void fr_resp_in(struct fe_roce *rm, const struct fw_pkt *p)
{
	uint8_t code = p->bth.opcode & 0x1f;
	uint32_t qpn = p->bth.dqpn, psn = p->bth.psn;
	struct fr_out *o;

	if (code == 0x11 && (p->aeth.syndrome & 0x60) != 0x00) {
		/* a NAK: what came before its PSN is done */
		uint8_t syn = p->aeth.syndrome;

		fr_acked_before(rm, qpn, psn, false);
		o = fr_find(rm, qpn, psn);
		if (!o)
			return;
		if ((syn & 0x60) == 0x20) {
			struct fp_response resp = { .status = FP_NAK_RNR,
						    .rnr_timer = (uint8_t)(syn & 0x1f) };

			fr_drop_after(rm, o);
			fr_done(rm, o, &resp);
			return;
		}
		if ((syn & 0x1f) == 0) {	/* PSN sequence error */
			fr_lost(rm, o);
			return;
		}
		{
			/* the QP goes to error: the later ones are flushed */
			struct fp_response resp = { .status = (syn & 0x1f) == 1 ? FP_NAK_INV_REQ :
							      (syn & 0x1f) == 2 ? FP_NAK_REM_ACCESS :
							      FP_NAK_REM_OP };

			fr_drop_after(rm, o);
			fr_done(rm, o, &resp);
		}
		return;
	}
	if (code == 0x11) {			/* ACK */
		fr_acked_before(rm, qpn, psn, true);
		return;
	}
	/* READ response or atomic acknowledge: they answer their own request,
	 * and say that everything before it was done */
	o = fr_find(rm, qpn, psn);
	if (!o)
		return;				/* a duplicate, or stale */
	fr_acked_before(rm, qpn, o->psn, false);
	if (code == 0x12) {
		struct fp_response resp = { .status = FP_ACK_OK, .atomic_orig = p->atomack, .len = 8 };

		if (o->op == FP_PKT_CMP_SWAP || o->op == FP_PKT_FETCH_ADD)
			fr_done(rm, o, &resp);
		return;
	}
	if (o->op != FP_PKT_READ || code < 0x0d || code > 0x10)
		return;
	{
		uint32_t idx = (psn - o->psn) & 0xffffff, off = idx * o->mtu;
		bool first = code == 0x0d || code == 0x10, last = code == 0x0f || code == 0x10;
		uint32_t want = o->len - off < o->mtu ? o->len - off : o->mtu;

		/* in order, each packet its full share (the timer retries a gap) */
		if (idx != o->rnext || (first != (idx == 0)) || (last != (idx + 1 == o->npkt)) ||
		    p->payload_len != (o->len ? want : 0))
			return;
		if (o->len && !o->rbuf && !(o->rbuf = malloc(o->len)))
			return;
		if (p->payload_len)
			memcpy(o->rbuf + off, p->payload, p->payload_len);
		o->rnext++;
		if (!last)
			return;
		{
			struct fp_response resp = { .status = FP_ACK_OK, .data = o->rbuf, .len = o->len };

			if (!resp.data)
				resp.data = (void *)"";	/* zero bytes read */
			fr_done(rm, o, &resp);
		}
	}
}

/* The ACK timers that ran out: the oldest message of a QP is lost. */
static void fr_timers(struct fe_roce *rm, long long now, long long *next)
{
	struct fr_out *o;

again:
	for (o = rm->out; o; o = o->next) {
		if (o->due && o->due <= now) {
			fr_lost(rm, o);
			goto again;		/* the list changed */
		}
		if (o->due && (!*next || o->due < *next))
			*next = o->due;
	}
}

/* ---- the responder's side ------------------------------------------------ */
static void fr_ack(struct fe_roce *rm, struct fe_qp *qp, uint32_t psn, uint8_t syndrome)
{
	struct fw_pkt p;

	fr_bth(&p, fr_tr(qp->type) | 0x11, qp->attr.dest_qp_num, psn);
	p.aeth.syndrome = syndrome;
	p.aeth.msn = qp->roce->msn & 0xffffff;
	fr_tx(rm, qp->attr.ah_attr.grh.dgid.raw, &p, false);
}

/* A READ's answer: response packets from the request's PSN on; mid: a
 * retry from the middle of a READ, answered with MIDDLE and LAST only (linux
 * v6.1 rxe_resp.c duplicate_request: a PSN past the READ's first replays,
 * read_reply: FIRST or ONLY only for a new one) */
static void fr_read_resp(struct fe_roce *rm, struct fe_qp *qp, uint32_t psn, const char *data,
			 uint32_t len, bool mid)
{
	uint32_t mtu = fr_mtu(qp), npkt = fr_npkt(len, mtu), i, off = 0;

	for (i = 0; i < npkt; i++) {
		uint32_t n = len - off < mtu ? len - off : mtu;
		uint8_t code = i + 1 == npkt ? (npkt == 1 && !mid ? 0x10 : 0x0f) :
			       i == 0 && !mid ? 0x0d : 0x0e;
		struct fw_pkt p;

		fr_bth(&p, fr_tr(qp->type) | code, qp->attr.dest_qp_num, psn + i);
		p.aeth.syndrome = 0x1f;
		p.aeth.msn = qp->roce->msn & 0xffffff;
		fr_payload(&p, data + off, n, code == 0x0f || code == 0x10);
		fr_tx(rm, qp->attr.ah_attr.grh.dgid.raw, &p, false);
		off += n;
	}
}

static void fr_atomic_ack(struct fe_roce *rm, struct fe_qp *qp, uint32_t psn, uint64_t orig)
{
	struct fw_pkt p;

	fr_bth(&p, fr_tr(qp->type) | 0x12, qp->attr.dest_qp_num, psn);
	p.aeth.syndrome = 0x1f;
	p.aeth.msn = qp->roce->msn & 0xffffff;
	p.atomack = orig;
	fr_tx(rm, qp->attr.ah_attr.grh.dgid.raw, &p, false);
}

/* What an opcode of RC or UC is: its kind and position */
enum fr_kind { FR_K_NONE, FR_K_SEND, FR_K_WRITE, FR_K_READ, FR_K_ATOMIC, FR_K_RESP };
struct fr_code {
	enum fr_kind kind;
	int pos;			/* 0 first, 1 middle, 2 last, 3 only */
	enum fp_pkt_op op;
};

static struct fr_code fr_decode(uint8_t code)
{
	struct fr_code c = { FR_K_NONE, 3, FP_PKT_SEND };

	switch (code) {
	case 0x00: c.kind = FR_K_SEND; c.pos = 0; break;
	case 0x01: c.kind = FR_K_SEND; c.pos = 1; break;
	case 0x02: c.kind = FR_K_SEND; c.pos = 2; break;
	case 0x03: c.kind = FR_K_SEND; c.pos = 2; c.op = FP_PKT_SEND_IMM; break;
	case 0x04: c.kind = FR_K_SEND; break;
	case 0x05: c.kind = FR_K_SEND; c.op = FP_PKT_SEND_IMM; break;
	case 0x16: c.kind = FR_K_SEND; c.pos = 2; c.op = FP_PKT_SEND_INV; break;
	case 0x17: c.kind = FR_K_SEND; c.op = FP_PKT_SEND_INV; break;
	case 0x06: c.kind = FR_K_WRITE; c.pos = 0; c.op = FP_PKT_WRITE; break;
	case 0x07: c.kind = FR_K_WRITE; c.pos = 1; c.op = FP_PKT_WRITE; break;
	case 0x08: c.kind = FR_K_WRITE; c.pos = 2; c.op = FP_PKT_WRITE; break;
	case 0x09: c.kind = FR_K_WRITE; c.pos = 2; c.op = FP_PKT_WRITE_IMM; break;
	case 0x0a: c.kind = FR_K_WRITE; c.op = FP_PKT_WRITE; break;
	case 0x0b: c.kind = FR_K_WRITE; c.op = FP_PKT_WRITE_IMM; break;
	case 0x0c: c.kind = FR_K_READ; c.op = FP_PKT_READ; break;
	case 0x13: c.kind = FR_K_ATOMIC; c.op = FP_PKT_CMP_SWAP; break;
	case 0x14: c.kind = FR_K_ATOMIC; c.op = FP_PKT_FETCH_ADD; break;
	case 0x0d: case 0x0e: case 0x0f: case 0x10: case 0x11: case 0x12:
		c.kind = FR_K_RESP; break;
	default: break;
	}
	return c;
}

/*
 * The sender and destination of a request of the wire, for the responder:
 * the connection's peer, and at an XRC target QP the SRQ its XRCETH names,
 * with the target QP's domain, access flags and RNR timer, which the
 * daemon's gate adds over shared memory (requester.c ROUTE). Whether that
 * SRQ may take it stays the responder's check (GET_XRC_SRQ, WR-03). The
 * target QP is this process's view of it (fp_tgt_modify keeps it).
 */
static void fr_msg_dest(struct fe_qp *qp, const struct fw_pkt *p, struct fp_packet *m)
{
	m->src_type = qp->type == IBV_QPT_XRC_RECV ? IBV_QPT_XRC_SEND : qp->type;
	m->src_qpn = qp->attr.dest_qp_num;
	m->dst_qpn = qp->qpn;
	if (qp->type != IBV_QPT_XRC_RECV)
		return;
	m->xrc_srqn = p->xrceth.srqn;
	m->xrc_dom = qp->dom ? fe_dom_id(qp->dom) : 0;
	m->xrc_access = qp->attr.qp_access_flags;
	m->xrc_rnr_timer = qp->attr.min_rnr_timer;
}

/* A request PSN before the expected one (RC): answered again, never
 * executed twice but a READ, which has no effect to repeat. */
static void fr_duplicate(struct fe_roce *rm, struct fe_qp *qp, const struct fw_pkt *p,
			 struct fr_code c)
{
	struct fe_roce_qp *q = qp->roce;
	unsigned i;

	if (c.kind == FR_K_READ) {
		struct fp_packet m;
		struct fp_response resp = { 0 };
		struct fe_rcv rcv = { .pkt = &m, .qp = qp, .resp = &resp };
		bool mid = false;

		memset(&m, 0, sizeof(m));
		m.op = FP_PKT_READ;
		fr_msg_dest(qp, p, &m);
		m.psn = p->bth.psn;
		m.remote_addr = p->reth.va;
		m.rkey = p->reth.rkey;
		m.len = p->reth.len;
		fr_work->recv(rm->dev, &rcv);
		for (i = 0; i < FR_ATOMS; i++)
			if (q->rd[i].used && fr_psn_cmp(p->bth.psn, q->rd[i].psn) > 0 &&
			    fr_psn_cmp(p->bth.psn, (q->rd[i].psn + q->rd[i].npkt) & 0xffffff) < 0)
				mid = true;
		if (resp.status == FP_ACK_OK)
			fr_read_resp(rm, qp, p->bth.psn, resp.data ? resp.data : "", resp.len, mid);
		free(resp.data);
		return;
	}
	if (c.kind == FR_K_ATOMIC) {
		for (i = 0; i < FR_ATOMS; i++)
			if (q->at[i].used && q->at[i].psn == p->bth.psn) {
				fr_atomic_ack(rm, qp, p->bth.psn, q->at[i].orig);
				return;
			}
		return;				/* too old: dropped */
	}
	/* SEND, WRITE: the last PSN taken is acknowledged again */
	fr_ack(rm, qp, (q->epsn - 1) & 0xffffff, 0x1f);
}

/* What the responder said of a whole message, on the wire (RC). */
static void fr_respond(struct fe_roce *rm, struct fe_qp *qp, struct fr_code c, uint32_t first,
		       uint32_t last, const struct fp_response *resp)
{
	struct fe_roce_qp *q = qp->roce;

	switch (resp->status) {
	case FP_ACK_OK:
		q->msn++;
		if (c.kind == FR_K_READ) {
			fr_read_resp(rm, qp, first, resp->data ? resp->data : "", resp->len, false);
			q->rd[q->rd_next].used = true;
			q->rd[q->rd_next].psn = first;
			q->rd[q->rd_next].npkt = fr_npkt(resp->len, fr_mtu(qp));
			q->rd_next = (q->rd_next + 1) % FR_ATOMS;
		} else if (c.kind == FR_K_ATOMIC) {
			q->at[q->at_next].used = true;
			q->at[q->at_next].psn = first;
			q->at[q->at_next].orig = resp->atomic_orig;
			q->at_next = (q->at_next + 1) % FR_ATOMS;
			fr_atomic_ack(rm, qp, first, resp->atomic_orig);
		} else {
			fr_ack(rm, qp, last, 0x1f);
		}
		break;
	case FP_NAK_RNR:
		/* the message is not taken: it comes again from its first PSN */
		q->epsn = first;
		fr_ack(rm, qp, first, (uint8_t)(0x20 | (resp->rnr_timer & 0x1f)));
		break;
	case FP_NAK_SEQ:
		q->epsn = first;
		fr_ack(rm, qp, first, 0x60);
		break;
	case FP_NAK_INV_REQ:
		fr_ack(rm, qp, last, 0x61);
		break;
	case FP_NAK_REM_ACCESS:
		fr_ack(rm, qp, last, 0x62);
		break;
	case FP_NAK_REM_OP:
		fr_ack(rm, qp, last, 0x63);
		break;
	default:
		break;				/* dropped without an answer */
	}
}

static void fr_ud_in(struct fe_roce *rm, struct fe_qp *qp, const struct fw_pkt *p, int k)
{
	struct fp_packet m;
	struct fp_piece pc = { (const char *)p->payload, p->payload_len };
	struct fp_response resp = { 0 };
	struct fe_rcv rcv = { .pkt = &m, .qp = qp, .resp = &resp };
	uint8_t code = p->bth.opcode & 0x1f;

	if (code != 0x04 && code != 0x05)
		return;
	memset(&m, 0, sizeof(m));
	m.op = code == 0x05 ? FP_PKT_SEND_IMM : FP_PKT_SEND;
	m.src_type = IBV_QPT_UD;
	m.src_qpn = p->deth.sqpn;
	m.dst_qpn = qp->qpn;
	m.psn = p->bth.psn;
	m.qkey = p->deth.qkey;
	m.imm = __builtin_bswap32(p->imm);
	m.solicited = p->bth.se;
	m.len = (uint32_t)p->payload_len;
	m.grh = true;
	fw_udp_gid_of(p->ip.version, p->ip.src, m.sgid.raw);
	memcpy(m.dgid.raw, rm->u[k].gid, 16);
	m.port = qp->attr.port_num ? qp->attr.port_num : 1;
	m.pieces = &pc;
	m.npieces = 1;
	fr_work->recv(rm->dev, &rcv);
	free(resp.data);
}

static void fr_req_in(struct fe_roce *rm, const struct fw_pkt *p, int k)
{
	uint8_t tr = p->bth.opcode & 0xe0, code = p->bth.opcode & 0x1f;
	struct fe_qp *qp = fe_qp_find(rm->dev, p->bth.dqpn);
	struct fr_code c = fr_decode(code);
	struct fe_roce_qp *q;
	uint32_t mtu, psn = p->bth.psn;
	int32_t d;

	if (!qp || !fe_roce_on(qp) || !(q = fr_qp(qp)))
		return;				/* no such QP here: dropped, as rxe does */
	/* the QP's own transport; an XRC INI takes only answers, its TGT
	 * only requests */
	if (tr != fr_tr(qp->type) || (qp->type == IBV_QPT_XRC_SEND && c.kind != FR_K_RESP) ||
	    (qp->type == IBV_QPT_XRC_RECV && c.kind == FR_K_RESP))
		return;
	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	if (tr == FW_TR_UD) {
		fr_ud_in(rm, qp, p, k);
		return;
	}
	if (c.kind == FR_K_RESP) {
		fr_resp_in(rm, p);
		return;
	}
	if (c.kind == FR_K_NONE || (tr == FW_TR_UC && c.kind != FR_K_SEND && c.kind != FR_K_WRITE))
		return;
	d = fr_psn_cmp(psn, q->epsn);
	if (tr == FW_TR_UC) {
		/* a gap loses the message under way; a new one starts only
		 * with a first or only packet */
		if (d != 0) {
			q->in_msg = false;
			q->uc_resync = true;
		}
		if (q->uc_resync) {
			if (c.pos == 1 || c.pos == 2)
				return;
			q->uc_resync = false;
		}
		q->epsn = psn;
	} else if (d > 0) {
		if (!q->nak_sent) {
			q->nak_sent = true;
			fr_ack(rm, qp, q->epsn, 0x60);
		}
		return;
	} else if (d < 0) {
		fr_duplicate(rm, qp, p, c);
		return;
	}
	mtu = fr_mtu(qp);
	/* the packet continues the message under way, or starts one */
	if ((c.pos == 0 || c.pos == 3) ? q->in_msg :
	    (!q->in_msg || (c.kind == FR_K_SEND) != (q->m.op == FP_PKT_SEND || q->m.op == FP_PKT_SEND_IMM ||
						      q->m.op == FP_PKT_SEND_INV))) {
		q->in_msg = false;
		if (tr != FW_TR_UC)
			fr_ack(rm, qp, psn, 0x61);	/* out of sequence opcode */
		else
			q->uc_resync = true;
		return;
	}
	if (((c.pos == 0 || c.pos == 1) && p->payload_len != mtu) || p->payload_len > mtu) {
		q->in_msg = false;
		if (tr != FW_TR_UC)
			fr_ack(rm, qp, psn, 0x61);	/* a first or middle packet is a whole MTU */
		else
			q->uc_resync = true;
		return;
	}
	q->nak_sent = false;
	if (c.pos == 0 || c.pos == 3) {
		memset(&q->m, 0, sizeof(q->m));
		q->m.op = c.op;
		fr_msg_dest(qp, p, &q->m);
		q->m.psn = psn;
		q->m.remote_addr = p->reth.va;
		q->m.rkey = p->reth.rkey;
		q->m.port = qp->attr.port_num ? qp->attr.port_num : 1;
		q->m_first = psn;
		q->got = 0;
		q->in_msg = true;
		if (c.kind == FR_K_READ || c.kind == FR_K_ATOMIC) {
			q->m.len = c.kind == FR_K_READ ? p->reth.len : 8;
			if (c.kind == FR_K_ATOMIC) {
				q->m.remote_addr = p->atometh.va;
				q->m.rkey = p->atometh.rkey;
				q->m.compare_add = c.op == FP_PKT_CMP_SWAP ? p->atometh.compare
									  : p->atometh.swap_add;
				q->m.swap = p->atometh.swap_add;
			}
		}
	}
	if (c.kind == FR_K_SEND || c.kind == FR_K_WRITE) {
		if (q->got + p->payload_len > q->cap) {
			uint32_t cap = q->got + (uint32_t)p->payload_len;
			char *b;

			cap = cap < 4096 ? 4096 : cap * 2;
			b = realloc(q->buf, cap);
			if (!b) {
				q->in_msg = false;
				return;
			}
			q->buf = b;
			q->cap = cap;
		}
		if (p->payload_len)
			memcpy(q->buf + q->got, p->payload, p->payload_len);
		q->got += (uint32_t)p->payload_len;
	}
	if (c.pos == 0 || c.pos == 1) {
		q->epsn = (psn + 1) & 0xffffff;
		if (tr != FW_TR_UC && p->bth.ackreq)
			fr_ack(rm, qp, psn, 0x1f);
		return;
	}
	/* the whole message: to the responder */
	{
		struct fp_response resp = { 0 };
		struct fp_piece pc = { q->buf, q->got };
		struct fe_rcv rcv = { .pkt = &q->m, .qp = qp, .resp = &resp };
		uint32_t first = q->m_first, npkt = 1;

		q->in_msg = false;
		if (c.pos == 2 && c.op != FP_PKT_SEND)
			q->m.op = c.op;		/* the last packet says IMM or INV */
		if (c.kind == FR_K_SEND || c.kind == FR_K_WRITE) {
			q->m.len = q->got;
			q->m.pieces = &pc;
			q->m.npieces = 1;
		}
		if (code == 0x03 || code == 0x05 || code == 0x09 || code == 0x0b)
			q->m.imm = __builtin_bswap32(p->imm);
		if (code == 0x16 || code == 0x17)
			q->m.imm = p->ieth_rkey;
		q->m.solicited = p->bth.se;
		if (c.kind == FR_K_READ)
			npkt = fr_npkt(q->m.len, mtu);
		q->epsn = (psn + npkt) & 0xffffff;
		fr_work->recv(rm->dev, &rcv);
		if (tr != FW_TR_UC)
			fr_respond(rm, qp, c, first, psn, &resp);
		free(resp.data);
	}
}

/* ---- serving the sockets ----------------------------------------------- */
/* The realtime clock, the one of the kernel's receive stamps (SO_TIMESTAMPNS) */
static long long fr_rt_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Takes what waits on the sockets of MASK (bit k: socket k) whose batch
 * is spent. STAMP: the clock is read first, so that a socket found empty
 * is known to hold nothing that came before then (seen); else seen is 0,
 * unknown: a verb's look at idle sockets costs one poll() and no clock,
 * which a guest without a vDSO clock source (TCG) pays as a system call. */
static void fr_fill(struct fe_roce *rm, unsigned mask, bool stamp)
{
	struct pollfd pf[2];
	int n = 0, k, at[2];
	long long now = stamp ? fr_rt_ns() : 0;

	for (k = 0; k < 2; k++)
		if (rm->has[k] && (mask & 1u << k) && rm->b[k].at >= rm->b[k].n) {
			at[n] = k;
			pf[n].fd = rm->u[k].fd;
			pf[n].events = POLLIN;
			n++;
		}
	/* one system call when nothing came (every verb asks) */
	if (!n || poll(pf, (nfds_t)n, 0) < 0)
		return;
	for (int i = 0; i < n; i++) {
		k = at[i];
		rm->seen[k] = now;
		if (pf[i].revents)
			fw_udp_fill(&rm->u[k], &rm->b[k]);
		else
			rm->b[k].n = rm->b[k].at = 0;
	}
}

/*
 * What waits on the two sockets, in the order it arrived: a peer that
 * sends to one QP from its IPv4 and its IPv6 address (UD) has its
 * packets taken in the order one netdev got them, as rxe takes them.
 * Each socket's datagrams come in batches (recvmmsg: a burst in one
 * system call); the next packet is the earliest head by the kernel's
 * receive stamp, and a head is taken while the other socket's batch is
 * spent only if that socket was seen empty after the head arrived (else
 * it is looked at again: what came to it since may be earlier).
 */
static void fr_drain(struct fe_roce *rm)
{
	for (;;) {
		struct fw_pkt p;
		const char *why;
		long long t[2] = { 0, 0 };
		bool in[2];
		int e, k, o;

		for (k = 0; k < 2; k++)
			in[k] = rm->has[k] && rm->b[k].at < rm->b[k].n;
		if (!in[0] && !in[1]) {
			/* the answers to what was taken go before the next look */
			fr_flush(rm);
			fr_fill(rm, 3, false);
			for (k = 0; k < 2; k++)
				in[k] = rm->has[k] && rm->b[k].at < rm->b[k].n;
			if (!in[0] && !in[1])
				return;
		}
		for (k = 0; k < 2; k++)
			if (in[k])
				t[k] = fw_udp_stamp(&rm->b[k]);
		k = in[0] && in[1] ? (t[1] < t[0] ? 1 : 0) : in[1] ? 1 : 0;
		o = 1 - k;
		if (!in[o] && rm->has[o] && t[k] >= rm->seen[o]) {
			fr_fill(rm, 1u << o, true);
			if (rm->b[o].at < rm->b[o].n)
				continue;		/* the two heads compared again */
		}
		e = fw_udp_next(&rm->u[k], &rm->b[k], &p, &why);
		if (e)
			continue;	/* refused by the codec: dropped, as rxe drops it */
		fr_req_in(rm, &p, k);
	}
}

static long long fr_serve(struct fe_roce *rm)
{
	long long next = 0;

	fr_release_held(rm);		/* nothing came after it */
	fr_drain(rm);
	fr_timers(rm, fp_now_ns(), &next);
	fr_flush(rm);
	return next;
}

void fe_roce_progress(void)
{
	int i, n = fe_dev_span();

	__atomic_store_n(&fr_verbs, fr_verbs + 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		struct fe_roce *rm = fe_dev_roce_at(i);

		if (rm && rm->pid == fp_self_pid() && (rm->has[0] || rm->has[1]))
			fr_serve(rm);
	}
}

static void *fr_thread(void *arg)
{
	struct fe_roce *rm = arg;
	long long next = 0;
	uint64_t seen = __atomic_load_n(&fr_verbs, __ATOMIC_RELAXED), gen;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd pf[2];
		int n = 0, ms = FR_WAIT_MS, k;

		for (k = 0; k < 2; k++)
			if (rm->has[k]) {
				pf[n].fd = rm->u[k].fd;
				pf[n].events = POLLIN;
				n++;
			}
		if (next) {
			long long left = next - fp_now_ns();

			ms = left <= 0 ? 0 : left / 1000000 + 1 < ms ? (int)(left / 1000000 + 1) : ms;
		}
		if (poll(pf, (nfds_t)n, ms) < 0 && errno != EINTR)
			break;
		gen = __atomic_load_n(&fr_verbs, __ATOMIC_RELAXED);
		if (gen != seen) {
			/* the application called a verb since we looked: its
			 * verbs serve the sockets (no lock taken from it, no
			 * switch to us on one CPU); look again once it may
			 * have gone idle, as the inbox's thread does */
			struct timespec ts = { 0, FR_ACTIVE_NS };

			seen = gen;
			nanosleep(&ts, NULL);
			continue;
		}
		/* a verb holds the lock: it serves the sockets itself */
		while (fe_trylock()) {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
		next = fr_serve(rm);
		{
			/* retries the answers made due */
			long long d = fr_work->retry();

			if (d && (!next || d < next))
				next = d;
		}
		fe_unlock();
	}
	return NULL;
}

static int fr_open(struct fe_roce *rm)
{
	int e6, e4;

	e6 = fw_udp_open(&rm->u[0], rm->spec->roce_if, 6, FW_UDP_PORT);
	e4 = fw_udp_open(&rm->u[1], rm->spec->roce_if, 4, FW_UDP_PORT);
	rm->has[0] = !e6;
	rm->has[1] = !e4;
	for (int k = 0; k < 2; k++) {
		int one = 1;

		if (rm->has[k])
			setsockopt(rm->u[k].fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	}
	if (e6 && e4) {
		fprintf(stderr, "ibvct: device %s: no RoCE socket on %s port %d: %s\n", rm->spec->name,
			rm->spec->roce_if, FW_UDP_PORT, strerror(e6 != EADDRNOTAVAIL ? e6 : e4));
		return e6 != EADDRNOTAVAIL ? e6 : e4;
	}
	/* one family only: fine when the interface has no address of the other
	 * (EADDRNOTAVAIL); any other failure leaves that family's GIDs deaf,
	 * which a run must be told of rather than find as lost packets */
	if ((e6 && e6 != EADDRNOTAVAIL) || (e4 && e4 != EADDRNOTAVAIL))
		fprintf(stderr, "ibvct: device %s: no IPv%d RoCE socket on %s port %d: %s\n",
			rm->spec->name, e6 ? 6 : 4, rm->spec->roce_if, FW_UDP_PORT,
			strerror(e6 ? e6 : e4));
	if (pthread_create(&rm->thread, NULL, fr_thread, rm)) {
		if (rm->has[0])
			fw_udp_close(&rm->u[0]);
		if (rm->has[1])
			fw_udp_close(&rm->u[1]);
		rm->has[0] = rm->has[1] = false;
		return EAGAIN;
	}
	return 0;
}
