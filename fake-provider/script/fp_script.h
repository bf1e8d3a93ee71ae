/* SPDX-License-Identifier: MIT */
/*
 * The fake provider's script: data model and the functions around it.
 * The grammar is documented once, at the top of script.c; fixtures/scripts/
 * holds examples. This header is shared by the provider plugin, ibvct-run
 * and the tests (all link fp_script.a).
 */
#ifndef FP_SCRIPT_H
#define FP_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>

#define FP_MAX_DEVS	8
#define FP_MAX_PORTS	4
#define FP_MAX_GIDS	16
#define FP_MAX_PKEYS	4
#define FP_MAX_FAULTS	64
#define FP_MAX_EVENTS	32
#define FP_NAME_MAX	64
#define FP_IFNAME_MAX	16	/* IFNAMSIZ */

enum fp_op {
#define FP_OP(id, name) FP_OP_##id,
#include "fp_ops.def"
#undef FP_OP
	FP_OP__COUNT
};

enum fp_quirk {
#define FP_QUIRK(id, name, where, bit, what) FP_Q_##id,
#include "fp_quirks.def"
#undef FP_QUIRK
	FP_Q__COUNT
};

enum fp_mode { FP_MODE_EXTENDED = 0, FP_MODE_LEGACY = 1 };
enum fp_lifetime { FP_LIFE_CURRENT = 0, FP_LIFE_SEED = 1 };
/* The driver the fake provider plays where the spec leaves room or a driver
 * deviates from it (fixtures/profiles/README.md): strict is the spec. */
enum fp_profile {
	FP_PROF_STRICT = 0, FP_PROF_MLX5, FP_PROF_MLX4, FP_PROF_RXE, FP_PROF_IXRC, FP_PROF__COUNT
};

/*
 * The hardware counters the fake HCA keeps, one file each under its ports'
 * hw_counters/ in sysfs (the profiles of fp_profile_hw_counters), named as
 * Linux rxe names them (linux v6.1 and v6.12 drivers/infiniband/sw/rxe/
 * rxe_hw_counters.c rxe_counter_descs): X(ID, "file"). The engine counts
 * them (enum fe_counter), the verbs layer adds to the files
 * (verbs/counters.c), the sysfs writer makes them with 0.
 */
#define FP_HW_COUNTERS(X)						\
	X(RCVD_RNR, "rcvd_rnr_err")		/* RNR NAKs the requester received */ \
	X(SEND_RNR, "send_rnr_err")		/* RNR NAKs the responder sent */ \
	X(RNR_RETRY_EXCEEDED, "retry_rnr_exceeded_err")	/* rnr_retry used up */
/* The file of counter i (the order of FP_HW_COUNTERS), NULL past the last. */
const char *fp_hw_counter_name(int i);

/* Extension ops a script can take away from the provider (`withdraw NAME`),
 * for the "not supported" paths of applications. */
enum fp_withdraw {
	FP_X_QP_EX = 1 << 0,		/* "qp_ex": the new post-send API */
	FP_X_CQ_EX = 1 << 1,		/* "cq_ex": create_cq_ex */
	FP_X_REREG_MR = 1 << 2,		/* "rereg_mr" */
	FP_X_MW = 1 << 3,		/* "mw": memory windows */
	FP_X_PARENT_DOMAIN = 1 << 4,	/* "parent_domain": alloc_td, alloc_parent_domain */
	FP_X_QUERY_DEVICE_EX = 1 << 5,	/* "query_device_ex" */
	FP_X_QUERY_RT_VALUES = 1 << 6,	/* "query_rt_values" */
};

struct fp_port_spec {
	struct ibv_port_attr attr;	/* state, max_mtu, active_mtu, lid, link_layer, gid_tbl_len, pkey_tbl_len, ... */
	int ngids;
	union ibv_gid gid[FP_MAX_GIDS];
	int npkeys;
	uint16_t pkey[FP_MAX_PKEYS];	/* host order; default 0xffff */
};

struct fp_dev_spec {
	char name[FP_NAME_MAX];		/* ibdev name, e.g. "fake0" */
	uint64_t node_guid;		/* host order */
	enum ibv_node_type node_type;	/* default IBV_NODE_CA */
	struct ibv_device_attr attr;	/* device_cap_flags incl. IBV_DEVICE_XRC, limits, phys_port_cnt = nports */
	int nports;
	struct fp_port_spec port[FP_MAX_PORTS];	/* port[i] is port number i + 1 */
	/* A free-running completion clock (`clock KHZ [mask M]`): its rate in kHz
	 * (0: the script gives the device none) and the mask of the bits a
	 * completion timestamp keeps (2^n - 1). What a driver profile reports
	 * is fp_prof_clock()'s. */
	uint64_t clock_khz, clock_mask;
	/* `transport roce IFACE`: RoCE v2 on that interface (engine/roce.c); empty:
	 * the shared-memory inboxes between processes of one host */
	char roce_if[FP_IFNAME_MAX];
	/* faults on the wire (`transport roce IFACE KIND N`...): of the packets the
	 * device sends, every Nth lost, sent twice, held back behind the next
	 * one, or sent with a wrong ICRC (0: none) */
	struct { unsigned loss, dup, reorder, icrc, trunc, srqn; } wire_fault;
};

/* A fault: fail call number nth of op (1-based), or every call from nth on. */
struct fp_fault {
	enum fp_op op;
	unsigned long nth;
	bool from;		/* false: only the nth call; true: nth and later */
	int err;		/* errno to fail with (default: the op's default) */
	unsigned long calls;	/* runtime counter, per process */
};

/*
 * The object an async event names (the element rdma-core v44.0
 * libibverbs/device.c:452-496 ibv_get_async_event reads it as; a device
 * event names none here): one table for the fake provider's trees, that of
 * the script's event names (script.c), read by the script's checks, by the
 * provider raising an event and by the daemon's EVENT_RAISE. An event it
 * does not name is a port's.
 */
enum fp_ev_obj { FP_EV_DEV, FP_EV_PORT, FP_EV_QP, FP_EV_SRQ, FP_EV_CQ };
enum fp_ev_obj fp_event_obj(enum ibv_event_type type);
/* The affiliated errors (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR) leave their
 * QP in ERR, as hardware does. */
bool fp_event_errs_qp(enum ibv_event_type type);

/* An async event raised when op is called for the nth time (after the op ran). */
struct fp_event_rule {
	enum ibv_event_type type;
	enum fp_op op;		/* trigger op */
	unsigned long nth;
	int port;		/* for port events: port number; else 0 */
	unsigned long calls;	/* runtime counter */
	bool fired;
};

struct fp_script {
	char path[4096];		/* where it was loaded from ("" for built-in default) */
	enum fp_mode mode;
	enum fp_lifetime lifetime;
	enum fp_profile profile;
	int rdma_core;			/* 44, 56: the release the core must play; 0: unsaid */
	int ndevs;
	struct fp_dev_spec dev[FP_MAX_DEVS];
	int nfaults;
	struct fp_fault fault[FP_MAX_FAULTS];
	int nevents;
	struct fp_event_rule event[FP_MAX_EVENTS];
	bool quirk[FP_Q__COUNT];
	unsigned withdrawn;		/* enum fp_withdraw bits */
	char trace_path[4096];		/* "" = no trace */
	bool trace_states;		/* and the data path's state machines (engine/) */
};

/*
 * Parse a whole script. On success returns 0 and fills *s. On any error
 * returns -1, leaves *s untouched (nothing half-applied) and writes
 * "file:line: why" into err.
 */
int fp_script_load(const char *path, struct fp_script *s, char *err, size_t errlen);
/* Same, from a string (name is used in messages in place of a file name). */
int fp_script_parse(const char *name, const char *text, struct fp_script *s,
		    char *err, size_t errlen);
/* The built-in default: extended mode, current lifetime, one XRC-capable
 * device "fake0" with one active IB port. */
void fp_script_default(struct fp_script *s);
/* The built-in default as script text (fp_script_default() parses it). */
extern const char fp_script_default_text[];

const char *fp_op_name(enum fp_op op);
int fp_op_from_name(const char *name);		/* -1 if unknown */
const char *fp_profile_name(enum fp_profile p);
/* The kernel driver a profile stands for, as sysfs names it under
 * device/driver (strict: "ibvct_fake"). */
const char *fp_profile_kdriver(enum fp_profile p);
/* Whether the profile's ports show the hardware counters (FP_HW_COUNTERS)
 * in sysfs: strict and rxe, under rxe's names. */
bool fp_profile_hw_counters(enum fp_profile p);
const char *fp_quirk_name(enum fp_quirk q);
int fp_quirk_from_name(const char *name);	/* -1 if unknown */
/* The errno a fault on op fails with when the script names none. */
int fp_op_default_errno(enum fp_op op);

/* The one current script of a program that plays the device (the plugin
 * sets it once, at load), and its quirks. */
extern struct fp_script *fp__script;

static inline bool fp__quirk(enum fp_quirk q)
{
	return fp__script->quirk[q];
}

static inline bool fp__withdrawn(enum fp_withdraw x)
{
	return fp__script->withdrawn & x;
}

/*
 * The one decision for fault injection: counts this call of op and returns
 * the errno the call must fail with, or 0 when it proceeds.
 */
int fp_fault_check(struct fp_script *s, enum fp_op op);

/*
 * Event triggers: counts this call of op and returns the rules that fire
 * now (up to max, written to out). Caller raises them.
 */
int fp_events_due(struct fp_script *s, enum fp_op op,
		  struct fp_event_rule **out, int max);

/* Call trace: opened lazily from s->trace_path; one line per call. */
void fp_trace(struct fp_script *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The fake sysfs tree for a script, as ref-impl's discovery reads it:
 *   <root>/class/infiniband_verbs/abi_version            "6"
 *   <root>/class/infiniband_verbs/uverbsN/ibdev          device name
 *   <root>/class/infiniband_verbs/uverbsN/abi_version    "1"
 *   <root>/class/infiniband_verbs/uverbsN/device         -> dir (node_type etc. under class/infiniband)
 *   <root>/class/infiniband/<name>/node_type             "1: CA"
 *   <root>/class/infiniband/<name>/node_guid             "xxxx:xxxx:xxxx:xxxx"
 *   <root>/class/infiniband/<name>/sys_image_guid, fw_ver, hw_rev, board_id, ports/N/...
 *   <root>/class/infiniband/<name>/device/driver -> the profile's kernel driver
 * Creates root if needed. Returns 0 or errno (message in err).
 */
int fp_sysfs_write(const struct fp_script *s, const char *root, char *err, size_t errlen);

/*
 * Prepare this process's environment to use the reference target with the
 * script at script_path (NULL: built-in default): makes a private scratch
 * dir under dir_parent (NULL: $TMPDIR or /tmp), writes the sysfs tree there
 * and sets SYSFS_PATH, IBVCT_SCRIPT, RDMAV_DRIVERS (provider_path) and
 * IBVCT_RUNDIR. Must run before the first ibv_get_device_list(). The
 * scratch dir path is written to scratch (for removal by the caller).
 * Returns 0 or -1 with a message in err.
 */
int fp_env_setup(const char *script_path, const char *provider_path,
		 const char *dir_parent, char *scratch, size_t scratch_len,
		 char *err, size_t errlen);
/*
 * The same for the shared fake host named host (see env.c): its sysfs tree,
 * run dir and script live in <hosts dir>/host-<host>, made on first use and
 * kept; every program set up for the same host shares its devices, daemon
 * and fabric. A host in use with another script is refused (-1, err says
 * why and what to do). On success *users_fd holds a shared lock that marks
 * the host in use while it is open, and hostdir receives its path.
 */
int fp_env_setup_shared(const char *host, const char *script_path, const char *provider_path,
			int *users_fd, char *hostdir, size_t hostdir_len, char *err, size_t errlen);
/* Remove a scratch dir made by fp_env_setup() and all below it; 0 or errno. */
int fp_rmtree(const char *path);

#endif /* FP_SCRIPT_H */
