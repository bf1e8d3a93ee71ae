/* SPDX-License-Identifier: MIT */
/*
 * Registered memory that other processes reach (issue 28): what a requester
 * needs to place a one-sided operation in its target's memory itself, as an
 * HCA does, without the target's CPU.
 *
 *  - A region's pages are backed by the memfd of this process's inbox for
 *    its device (transport.c), mapped MAP_SHARED over the same addresses, so
 *    that a peer that maps that memfd reaches the bytes (engine/README.md,
 *    "Registered memory").
 *  - The owner publishes, in the same memfd, a table of its keys (regions
 *    and windows) and a table of its one-sided targets (QPs): written by the
 *    owner only, read by peers without a lock (a sequence count per entry).
 *  - A requester asks whether the target would grant an access, from those
 *    tables as a peer maps them (fe_mem_view_remote; the transport, which
 *    owns the peer, asks it for its peer: fe_peer_remote), through the same
 *    check the responder runs (fe_key_check, also behind fe_mr_remote):
 *    where the target's bytes are mapped in this process, or
 *    FE_MEM_FALLBACK, and then the request takes the old path (the
 *    target's responder decides, with its own errors). It never refuses:
 *    any doubt is FE_MEM_FALLBACK.
 *
 * Below the registry and the transport, which call it: a device is its
 * struct fe_dev pointer here, never read. Everything here runs under the
 * plugin lock (fe_lock).
 */
#ifndef FE_MEM_H
#define FE_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fp_engine.h"

/* fe_peer_remote: take the old path (the target's responder decides). */
#define FE_MEM_FALLBACK	1

/* Not a QPN: a key record with no QP (a type 2 window bound to none, an
 * access arriving at an XRC target, which has no local QP). */
#define FE_MEM_NO_QPN	0xffffffffu

enum fe_key_kind { FE_KEY_MR = 1, FE_KEY_MW1, FE_KEY_MW2 };

/*
 * What a remote key grants: the one record the responder's check
 * (fe_mr_remote) and the requester's (fe_peer_remote, from the target's
 * published table) both run fe_key_check on. For a window, iova and length
 * are its region's, win_addr and win_length its bound range.
 */
struct fe_key_rec {
	uint32_t rkey;
	uint32_t kind;			/* enum fe_key_kind; 0: no grant (an unbound window) */
	uint64_t pd;			/* the PD's identity: its file and handle (fp__pd_ident) */
	uint64_t iova, length;		/* the region */
	uint64_t win_addr, win_length;	/* a window's range */
	int32_t access;			/* the region's or the window's */
	uint32_t qpn;			/* type 2 window: the QP it is bound to */
	bool range_is_region;		/* a window that grants its whole region (rxe) */
	bool mapped;			/* published: the region's bytes are in the memfd */
	uint64_t moff;			/* mapped: the data region's offset of the byte at iova */
};

/* Whether rec grants need on [addr, addr + len) to a request arriving at
 * QP qpn (FE_MEM_NO_QPN: an XRC target) of PD pd with qp_access; on yes,
 * *off is the offset of addr from the region's iova. The quirks are this
 * process's (FP_Q_MW_PD_UNCHECKED, FP_Q_MW_RANGE_UNCHECKED,
 * FP_Q_MW_QP_UNCHECKED). */
bool fe_key_check(const struct fe_key_rec *rec, uint64_t pd, uint32_t qpn, int qp_access,
		  uint64_t addr, uint64_t len, int need, uint64_t *off);

/* ---- inside the engine ------------------------------------------------------ */
/*
 * The shared part of the inbox's memfd, after the inbox (whose size is
 * base): the tables, then the data region where registered pages live.
 * fe_mem_attach grows the owner's memfd and maps its tables (the transport
 * calls it when it makes the inbox); fe_mem_detach lets it go (regions still
 * backed by it stay so until their last deregistration).
 */
void fe_mem_attach(const struct fe_dev *dev, int fd, uint64_t base);
void fe_mem_detach(const struct fe_dev *dev);

/* What a peer maps of another process's memfd (the transport's peer holds
 * one). */
struct fe_mem_tabs;
struct fe_mem_view {
	const struct fe_mem_tabs *tabs;	/* NULL: nothing published reachable */
	char *data;
	uint64_t data_size;
};
void fe_mem_peer_map(struct fe_mem_view *v, int fd, uint64_t base);
void fe_mem_peer_unmap(struct fe_mem_view *v);
/*
 * The requester's check on a view of the peer that owns QP dst_qpn: 0 and
 * *where the target's bytes for [addr, addr + len) as mapped in this
 * process, or FE_MEM_FALLBACK. It mirrors the responder's GET_QP (an RC QP
 * in RTR, RTS or SQD), CHK_SEQ (no stream blocked after an RNR NAK: then the
 * target decides) and CHK_RKEY; the caller checked CHK_OP and CHK_ALIGN
 * (8-aligned atomics) and len > 0. need is one IBV_ACCESS_REMOTE_* bit.
 */
int fe_mem_view_remote(const struct fe_mem_view *v, uint32_t dst_qpn, uint64_t addr,
		       uint32_t rkey, uint64_t len, int need, char **where);

/* Registration: back the region's pages by the memfd (when safe) and
 * publish its key; the reverse. */
void fe_mem_mr_add(struct fe_dev *dev, struct fe_mr *mr);
void fe_mem_mr_del(struct fe_mr *mr);
/* Its key's record changed (rereg of access or PD, a window's bind). */
void fe_mem_mr_publish(struct fe_dev *dev, struct fe_mr *mr);
void fe_mem_mw_publish(struct fe_dev *dev, struct fe_mw *mw);
void fe_mem_mw_unpublish(struct fe_mw *mw);
/* A QP's state, access, PD or receive block changed; it is gone. */
void fe_mem_qp_publish(struct fe_qp *qp);
void fe_mem_qp_unpublish(struct fe_qp *qp);
/* From any thread, without the plugin lock: the QP is in error (an async
 * event the daemon raised). */
void fe_mem_qp_errored(struct fe_qp *qp);
/* Whether a new key would take a free slot of the device's key table. */
bool fe_mem_key_slot_free(const struct fe_dev *dev, uint32_t key);
/* The records fe_key_check takes, from live objects. */
void fe_mr_key_rec(const struct fe_mr *mr, struct fe_key_rec *rec);
void fe_mw_key_rec(const struct fe_mw *mw, struct fe_key_rec *rec);

/*
 * Foreign regions: a region of process A imported by process B (ibv_import_mr
 * through a shared context) is the same bytes in both. A exports where its
 * region lies in its memfd; B maps that range of the memfd (received over a
 * UNIX socket, or from the fake kernel) and registers an fe_mr on the mapping
 * with the region's own keys (fe_mr_add_keys): an lkey in B's WQEs, an
 * rkey at B's QPs (served by B's responder: a foreign region is not
 * published in B's tables, its bytes are not in B's memfd).
 *
 * fe_mem_mr_export: the memfd (this process's, not to be closed; dup it to
 * send it) and the file offset of mr->addr; ENOENT when the region's pages
 * stayed as they are (engine/README.md: no other process reaches them).
 * fe_mem_foreign_map: len bytes at file_off of an exporter's memfd, mapped
 * here: *addr, or an errno (EINVAL past the file's end). Unmap with
 * fe_mem_foreign_unmap after the fe_mr is gone (fe_mr_del).
 */
int fe_mem_mr_export(const struct fe_mr *mr, int *fd, uint64_t *file_off);
int fe_mem_foreign_map(int fd, uint64_t file_off, uint64_t len, char **addr);
void fe_mem_foreign_unmap(char *addr, uint64_t len);

/*
 * A region is one object of the kernel's file: destroyed through any
 * context (ibv_dereg_mr in the owner, or in an importer through its
 * imported MR), its keys refuse at every later use in every process, as
 * an HCA's do once the destroy returned (linux v6.1 drivers/infiniband/sw/
 * rxe/rxe_mr.c lookup_mr, rxe_resp.c check_rkey: a local use completes
 * with IBV_WC_LOC_PROT_ERR, a remote one with the requester's
 * IBV_WC_REM_ACCESS_ERR). Synchronous, without the fake kernel: each use
 * of a foreign region reads the owner's published record of its key (the
 * owner's memfd holds it: mapped by fe_mem_foreign_watch), which is gone
 * when the owner deregistered; an importer's destroy leaves a mark in the
 * owner's entry (the rkey, written outside the sequence), which the owner's
 * uses and other importers' read. Under the quirk import_stale_handle a
 * destroyed region keeps working here.
 *
 * fe_mem_foreign_watch: map the key table of the memfd an imported region's
 * bytes are in (file_off as fe_mem_mr_export gave it): 0 or an errno.
 * fe_mem_foreign_unwatch: let it go (fe_mr_del). fe_mem_mr_kill: this
 * process destroyed the region through a context that imported it (mr is
 * the foreign region, or the owner's own fe_mr when both contexts are in
 * this process). fe_mem_mr_gone: whether mr's keys must refuse.
 */
int fe_mem_foreign_watch(struct fe_mr *mr, int fd, uint64_t file_off);
void fe_mem_foreign_unwatch(struct fe_mr *mr);
void fe_mem_mr_kill(struct fe_mr *mr);
bool fe_mem_mr_gone(const struct fe_mr *mr);

/* In a child of fork(), before it runs application code: its registered
 * pages become private copies (unless the quirk fork_shares_mr), and it
 * forgets the parent's tables and backings. */
void fe_mem_fork_child(void);

#endif /* FE_MEM_H */
