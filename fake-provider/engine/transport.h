/* SPDX-License-Identifier: MIT */
/*
 * Inside the engine: the transport, the one room below the state machines
 * where packets travel between processes (transport.c: inboxes in shared
 * memory). What the engine above asks of it, and the one way it answers up:
 *
 *  - joining: fe_xport_register with the work the progress thread does
 *    besides serving the inbox (struct fe_xport_work, installed by hca.c),
 *    whose recv is where everything the inbox brings goes (the receive
 *    dispatcher, recv.c): the transport calls nothing above it;
 *  - the requester's ROUTE and XMIT states: a peer for a QPN (fe_xport_route),
 *    a packet into its inbox (fe_xport_send), where it went (struct fe_sent),
 *    and what PLACE asks of a peer (its inbox served up to a mark, its owner
 *    gone, the check on its published memory: fe_peer_remote);
 *  - the completer and the send queue: whether a peer can still answer, a
 *    route to forget.
 *
 * A second transport (another wire below the same state machines) offers
 * the same: a peer, a send, a peer's state, and arrivals through the work's
 * recv.
 */
#ifndef FE_TRANSPORT_H
#define FE_TRANSPORT_H

#include "fp_engine.h"

/* ---- joining -------------------------------------------------------------- */
/* What the progress thread does besides serving the inbox (hca.c). */
struct fe_xport_work {
	long long (*retry)(void);	/* retransmissions due; the next due time */
	long long (*next_due)(void);	/* ns, 0: none (read without the lock) */
	/* what the inbox brought: the receive dispatcher (fe_recv) */
	void (*recv)(struct fe_dev *dev, struct fe_rcv *rcv);
};
int fe_xport_register(struct fe_xport **xpp, struct fe_dev *dev, struct fk_client *fk,
		      const struct fe_xport_work *work);
struct fe_xport *fe_xport_unregister(struct fe_xport **xpp, struct fk_client *fk);
void fe_xport_drain(struct fe_xport *xp);
void fe_xport_touch(struct fe_xport *xp);
/* The drains that found something so far (0 with no inbox), and whether the
 * inbox holds records not drained yet: a requester whose peer is gone asks
 * both before it counts a request lost (requester.c fp_sq_serve). */
uint64_t fe_xport_drains(const struct fe_xport *xp);
bool fe_xport_pending(const struct fe_xport *xp);

/* ---- the requester's ROUTE, XMIT and PLACE states ------------------------- */
struct fe_peer;
/* Where a packet goes: asked for QP qpn (XRC: through the daemon's gate of
 * that target QP for SRQ srqn, with its quirks), answered with the peer,
 * kept while the daemon's route epoch holds for XRC. */
struct fe_route {
	uint32_t qpn, srqn;
	bool xrc;
	unsigned quirks;		/* FK_Q_* of the gate */
	/* the connection to another host's daemon (fk_wire), asked instead
	 * of fk; NULL: this host's. Routes are kept per host, QP numbers
	 * being each host's own. */
	struct fk_client *via;
	struct fe_peer *peer;		/* NULL: nowhere (not joined here, no such QP,
					 * the gate said no: rt.gate) */
	bool self;			/* this process's own inbox */
	bool cached;			/* through a route the transport remembered */
	struct fk_route rt;		/* the daemon's answer (XRC: the target QP's) */
};
struct fe_peer *fe_xport_route(struct fe_xport *xp, struct fk_client *fk, struct fe_route *to);
/* Where a request went (the requester's XMIT state, requester.c). */
struct fe_sent {		/* a request on its way (FP_ACK_PENDING) */
	struct fe_peer *peer;
	uint64_t id;
	bool cached;		/* through a route the transport remembered */
	uint32_t seg_done;	/* FP_ACK_BUSY part way through a long message: the
				 * bytes of it in the peer's inbox (to peer, as id) */
	uint64_t mark;		/* the peer's inbox end once it was in (fe_peer_served) */
	/* on the wire (roce.c): the request went as RoCE packets, its answer
	 * or its ACK timer comes from there; wpsn its first PSN, taken at
	 * its first try and kept for every retry */
	bool wire, wpsn_set;
	uint32_t wpsn;
};
/* A request of a QP of connection fk into the inbox of to->peer: 0 or an
 * errno. Without want, as soon as there is room; with want, at once or
 * EAGAIN (full), and to->id names the request whose response comes later
 * (through struct fe_xport_work.recv). A payload longer than one record goes
 * in segments: to->seg_done is how much of it went (EAGAIN part way: the
 * caller tries again with to->id and to->seg_done as left). */
int fe_xport_send(struct fe_xport *xp, struct fe_sent *to, const struct fp_packet *pkt,
		  const struct fk_client *fk, bool want);
/* Whether the process behind a peer can still answer (slow: reads /proc). */
bool fe_peer_alive(const struct fe_peer *p);
/* Whether the peer's owner executed what its inbox held up to a mark. */
bool fe_peer_served(const struct fe_peer *p, uint64_t mark);
/* Whether the process behind a peer stopped serving its inbox for good (cheap). */
bool fe_peer_gone(const struct fe_peer *p);
/*
 * The requester's check, for PLACE, on the peer that owns QP dst_qpn: 0 and
 * *where the target's bytes for [addr, addr + len) as mapped in this process,
 * or FE_MEM_FALLBACK (fe_mem.h: the old path, the target's responder
 * decides). need is one IBV_ACCESS_REMOTE_* bit; len > 0, CHK_OP and
 * CHK_ALIGN are the caller's.
 */
int fe_peer_remote(struct fe_peer *p, uint32_t dst_qpn, uint64_t addr, uint32_t rkey,
		   uint64_t len, int need, char **where);
/* A remembered route to a QPN that may have moved on: ask the daemon again. */
void fe_xport_forget(struct fe_xport *xp, uint32_t qpn);

#endif /* FE_TRANSPORT_H */
