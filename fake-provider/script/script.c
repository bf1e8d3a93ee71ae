/* SPDX-License-Identifier: MIT */
/*
 * The fake provider's script parser: text -> struct fp_script. It owns the
 * grammar (documented once, below), the defaults a script leaves out and
 * every "file:line: why" message. A script is all or nothing: it is parsed
 * into a private copy that replaces the caller's struct only at the end.
 *
 * GRAMMAR
 *
 * One directive per line; words are separated by blanks; `#` starts a
 * comment that runs to the end of the line; blank lines are ignored. A line
 * holds at most 1023 characters. Numbers are decimal or 0x-prefixed hex.
 *
 * Top-level directives (each also ends a device block):
 *   mode legacy|extended            provider registration ABI (default extended)
 *   lifetime current|seed           XRC target QP lifetime model (default current)
 *   profile strict|mlx5|mlx4|rxe|ixrc
 *                                   the driver the provider plays (default strict:
 *                                   the spec). A profile reproduces what that
 *                                   driver does where the spec leaves room or
 *                                   the driver deviates (fixtures/profiles/);
 *                                   rxe also takes IBV_DEVICE_XRC from every
 *                                   device: rxe never has XRC
 *   device NAME                     starts a device block; NAME is 1-63 of
 *                                   [A-Za-z0-9_.-], not starting with '.'
 *   fault OP nth N [errno E]        fail the Nth call (1-based) of OP
 *   fault OP from N [errno E]       fail the Nth call of OP and every later one
 *                                   OP: a name from fp_ops.def (create_qp, ...);
 *                                   E: a name (ENOMEM, EINVAL, ...) or 1..4095;
 *                                   default: the op's row in fault.c (ENOMEM for
 *                                   create/alloc/reg/open, EINVAL for
 *                                   modify/query, EIO for the rest)
 *   quirk NAME                      a name from fp_quirks.def
 *   withdraw NAME                   the provider lacks an extension op, as
 *                                   a driver without it: qp_ex (the new
 *                                   post-send API: send_ops_flags refused,
 *                                   EOPNOTSUPP), cq_ex (create_cq_ex),
 *                                   rereg_mr, mw (memory windows),
 *                                   parent_domain (alloc_td and
 *                                   alloc_parent_domain), query_device_ex,
 *                                   query_rt_values
 *   event TYPE after OP N [port P]  raise async event TYPE right after the Nth
 *                                   call of OP. TYPE: cq_err, qp_fatal,
 *                                   qp_req_err, qp_access_err, comm_est,
 *                                   sq_drained, path_mig, path_mig_err,
 *                                   qp_last_wqe_reached, srq_err,
 *                                   srq_limit_reached, device_fatal,
 *                                   port_active, port_err, lid_change,
 *                                   pkey_change, sm_change, client_reregister,
 *                                   gid_change. QP/SRQ/CQ events go to the
 *                                   object OP acted on, so OP must be an op on
 *                                   such an object (modify_qp, poll_cq, ...).
 *                                   `port P` (default 1) only for port events.
 *   trace FILE [states]             call trace, appended; relative to the
 *                                   script's directory; `-` is stderr. With
 *                                   `states`, also the path each message takes
 *                                   through the requester, responder and
 *                                   completer (engine/, one line per run)
 *   rdma-core 44|56                 the release the reference plays (ref-impl's
 *                                   ibvct-release.def: Debian 12's rdma-core 44
 *                                   and Linux 6.1, or Debian 13's 56.1 and 6.12);
 *                                   default: the environment's IBVCT_RDMA_CORE,
 *                                   else the installed libibverbs-dev's. ibvct-run
 *                                   and the suites export it as IBVCT_RDMA_CORE;
 *                                   the provider refuses its devices when the
 *                                   core plays another
 *   mode, lifetime, profile, rdma-core and trace may appear once each.
 *
 * Device directives (only inside a device block):
 *   guid G                          node GUID: 0x + up to 16 hex digits, or
 *                                   xxxx:xxxx:xxxx:xxxx (default 1bad:0:0:<n>)
 *   node_type ca|switch|router|rnic (default ca)
 *   cap FLAG / nocap FLAG           set / clear an IBV_DEVICE_* capability, named
 *                                   in lower case without the prefix (cap xrc)
 *   attr FIELD VALUE                any field of struct ibv_device_attr except
 *                                   node_guid (use guid) and phys_port_cnt (the
 *                                   number of ports); fw_ver takes a word,
 *                                   sys_image_guid a GUID, atomic_cap
 *                                   none|hca|glob or a number
 *   port N [OPTION VALUE]...        declares port N (ports in order from 1, at
 *                                   most 4) or, when declared, changes it.
 *                                   OPTIONs: state down|init|armed|active,
 *                                   lid L, sm_lid L, lmc 0..7,
 *                                   mtu 256|512|1024|2048|4096 (active MTU),
 *                                   max_mtu (same values), link_layer ib|ethernet,
 *                                   width 1x|2x|4x|8x|12x,
 *                                   speed sdr|ddr|qdr|fdr10|fdr|edr|hdr|ndr
 *   gid PORT INDEX GID              GID in IPv6 text or 32 hex digits; PORT must
 *                                   be declared; INDEX 0..15
 *   pkey PORT INDEX VALUE           INDEX 0..3, VALUE 0..0xffff
 *   clock KHZ [mask M]              a free-running completion clock (the HCA's
 *                                   core clock) counting KHZ kHz (1..10000000,
 *                                   hca_core_clock) from the host's boot; a
 *                                   CQE is stamped with its count when made,
 *                                   and a timestamp keeps the bits of M
 *                                   (completion_timestamp_mask: 2^n - 1, n
 *                                   1..64; default all 64). Profile strict:
 *                                   no clock without this line; mlx5 and
 *                                   mlx4 always have one (KHZ default
 *                                   1000000) with their driver's mask, so
 *                                   `mask` is refused there; rxe has none
 *                                   (the line is refused)
 *   transport shm | roce IFACE      how the device's packets travel: shm (the
 *                                   default) through the inboxes of one host;
 *                                   roce as RoCE v2 UDP packets on port 4791 of
 *                                   the real interface IFACE (engine/roce.c).
 *                                   Port 1 is then Ethernet, GID 0 the
 *                                   interface's IPv6 link-local address, GID 1
 *                                   its IPv4 address as ::ffff:a.b.c.d (as far
 *                                   as it has them), and its MTU, unless set,
 *                                   the one rxe derives from the interface's
 *   guid, node_type, clock and transport may appear once per device; later lines of
 *   the other kinds override earlier ones.
 *
 * A script must declare at least one device. Defaults for what it leaves
 * out: a device without port lines gets port 1; a port is active IB, 4X EDR,
 * MTU 4096, LID (8 * device index + port number) (0 on Ethernet), SM LID 1,
 * gid[0] fe80::<node guid> and a GID table of 16 (undeclared entries are
 * zero, ngids = highest declared index + 1), pkey[0] 0xffff in a table of 4
 * (undeclared entries 0); a device has the limits in
 * fp_dev_defaults() and capabilities without xrc (say `cap xrc`).
 *
 * Errors: the first problem refuses the whole script with "file:line: why";
 * a problem with the file as a whole (unreadable, no device) names line 0 or
 * the last line.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fp_script.h"

#define FP_LINE_MAX	1024		/* including the newline */
#define FP_WORDS_MAX	32
#define FP_FILE_MAX	(1 << 20)
#define FP_CLOCK_KHZ_MAX	10000000	/* a completion clock of 10 GHz at most */

const char fp_script_default_text[] =
	"# ibvct fake provider: the built-in default script\n"
	"mode extended\n"
	"lifetime current\n"
	"device fake0\n"
	"\tcap xrc\n"
	"\tport 1 state active link_layer ib\n";

/* What the parser remembers besides the struct: where things were said. */
struct fp_port_aux {
	int line;
	bool lid_set;
	bool sm_lid_set;
	bool gid0_set;
	bool mtu_set;
};

struct fp_dev_aux {
	int line;
	int guid_line;
	int node_type_line;
	int clock_line;			/* its `clock` line, 0: none */
	bool clock_mask_set;
	bool sys_guid_set;
	int transport_line;		/* its `transport` line, 0: none */
	struct fp_port_aux port[FP_MAX_PORTS];
};

struct fp_pctx {
	const char *name;
	int line;
	char *err;
	size_t errlen;
	struct fp_script *s;		/* the private copy */
	int dev;			/* current device block, -1 outside */
	const char *dir;		/* base for relative trace paths, NULL = cwd */
	int mode_line, lifetime_line, profile_line, trace_line, release_line;
	int event_line[FP_MAX_EVENTS];
	struct fp_dev_aux daux[FP_MAX_DEVS];
};

__attribute__((format(printf, 2, 3)))
static int fp_perr(struct fp_pctx *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->errlen)
		return -1;
	n = snprintf(c->err, c->errlen, "%s:%d: ", c->name, c->line);
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- words --------------------------------------------------------------- */

/* 0x-hex or decimal, no sign, no octal surprises. */
static bool fp_parse_u64(const char *t, uint64_t *out)
{
	uint64_t v = 0;
	int base = 10, d;
	const char *p = t;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return false;
	for (; *p; p++) {
		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = tolower((unsigned char)*p) - 'a' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

static int fp_num(struct fp_pctx *c, const char *what, const char *t,
		  uint64_t min, uint64_t max, uint64_t *out)
{
	if (!fp_parse_u64(t, out))
		return fp_perr(c, "%s: bad number '%s'", what, t);
	if (*out < min || *out > max)
		return fp_perr(c, "%s: %s out of range (%llu..%llu)", what, t,
			       (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static int fp_guid(struct fp_pctx *c, const char *what, const char *t, uint64_t *out)
{
	char hex[17];
	size_t n = 0;
	const char *p;
	int group = 0;

	if (t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
		if (strlen(t) > 18 || !fp_parse_u64(t, out))
			return fp_perr(c, "%s: bad GUID '%s'", what, t);
		return 0;
	}
	/* xxxx:xxxx:xxxx:xxxx, as sysfs and ibv_devinfo print it */
	for (p = t; *p; p++) {
		if (*p == ':') {
			if (group != 4)
				break;
			group = 0;
			continue;
		}
		if (!isxdigit((unsigned char)*p) || n >= 16)
			break;
		hex[n++] = *p;
		group++;
	}
	if (*p || n != 16 || group != 4)
		return fp_perr(c, "%s: bad GUID '%s'", what, t);
	hex[n] = 0;
	*out = strtoull(hex, NULL, 16);
	return 0;
}

struct fp_name_val {
	const char *name;
	long val;
};

static int fp_lookup(const struct fp_name_val *tab, size_t n, const char *name, long *val)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(tab[i].name, name)) {
			*val = tab[i].val;
			return 0;
		}
	}
	return -1;
}

#define FP_LOOKUP(tab, name, val) fp_lookup(tab, sizeof(tab) / sizeof(tab[0]), name, val)

/* Keep sorted by name. */
static const struct fp_name_val fp_caps[] = {
	{ "auto_path_mig",		IBV_DEVICE_AUTO_PATH_MIG },
	{ "bad_pkey_cntr",		IBV_DEVICE_BAD_PKEY_CNTR },
	{ "bad_qkey_cntr",		IBV_DEVICE_BAD_QKEY_CNTR },
	{ "change_phy_port",		IBV_DEVICE_CHANGE_PHY_PORT },
	{ "curr_qp_state_mod",		IBV_DEVICE_CURR_QP_STATE_MOD },
	{ "init_type",			IBV_DEVICE_INIT_TYPE },
	{ "managed_flow_steering",	IBV_DEVICE_MANAGED_FLOW_STEERING },
	{ "mem_mgt_extensions",		IBV_DEVICE_MEM_MGT_EXTENSIONS },
	{ "mem_window",			IBV_DEVICE_MEM_WINDOW },
	{ "mem_window_type_2a",		IBV_DEVICE_MEM_WINDOW_TYPE_2A },
	{ "mem_window_type_2b",		IBV_DEVICE_MEM_WINDOW_TYPE_2B },
	{ "n_notify_cq",		IBV_DEVICE_N_NOTIFY_CQ },
	{ "port_active_event",		IBV_DEVICE_PORT_ACTIVE_EVENT },
	{ "raw_ip_csum",		IBV_DEVICE_RAW_IP_CSUM },
	{ "raw_multi",			IBV_DEVICE_RAW_MULTI },
	{ "rc_ip_csum",			IBV_DEVICE_RC_IP_CSUM },
	{ "rc_rnr_nak_gen",		IBV_DEVICE_RC_RNR_NAK_GEN },
	{ "resize_max_wr",		IBV_DEVICE_RESIZE_MAX_WR },
	{ "shutdown_port",		IBV_DEVICE_SHUTDOWN_PORT },
	{ "srq_resize",			IBV_DEVICE_SRQ_RESIZE },
	{ "sys_image_guid",		IBV_DEVICE_SYS_IMAGE_GUID },
	{ "ud_av_port_enforce",		IBV_DEVICE_UD_AV_PORT_ENFORCE },
	{ "ud_ip_csum",			IBV_DEVICE_UD_IP_CSUM },
	{ "xrc",			IBV_DEVICE_XRC },
};

/* Errnos a script may name; keep sorted by name. */
static const struct fp_name_val fp_errnos[] = {
	{ "E2BIG", E2BIG },		{ "EACCES", EACCES },
	{ "EAGAIN", EAGAIN },		{ "EBADF", EBADF },
	{ "EBUSY", EBUSY },		{ "ECONNREFUSED", ECONNREFUSED },
	{ "ECONNRESET", ECONNRESET },	{ "EEXIST", EEXIST },
	{ "EFAULT", EFAULT },		{ "EINTR", EINTR },
	{ "EINVAL", EINVAL },		{ "EIO", EIO },
	{ "EMFILE", EMFILE },		{ "ENFILE", ENFILE },
	{ "ENOBUFS", ENOBUFS },		{ "ENODEV", ENODEV },
	{ "ENOENT", ENOENT },		{ "ENOMEM", ENOMEM },
	{ "ENOSPC", ENOSPC },		{ "ENOSYS", ENOSYS },
	{ "ENOTCONN", ENOTCONN },	{ "ENOTSUP", ENOTSUP },
	{ "ENXIO", ENXIO },		{ "EOPNOTSUPP", EOPNOTSUPP },
	{ "EOVERFLOW", EOVERFLOW },	{ "EPERM", EPERM },
	{ "EPROTO", EPROTO },		{ "ERANGE", ERANGE },
	{ "ESTALE", ESTALE },		{ "ETIMEDOUT", ETIMEDOUT },
};

/* Which object an event is delivered to (fp_event_obj); decides which ops
 * may trigger it. */
static const struct {
	const char *name;
	enum ibv_event_type type;
	enum fp_ev_obj obj;
} fp_events[] = {	/* keep sorted by name */
	{ "client_reregister",	IBV_EVENT_CLIENT_REREGISTER,	FP_EV_PORT },
	{ "comm_est",		IBV_EVENT_COMM_EST,		FP_EV_QP },
	{ "cq_err",		IBV_EVENT_CQ_ERR,		FP_EV_CQ },
	{ "device_fatal",	IBV_EVENT_DEVICE_FATAL,		FP_EV_DEV },
	{ "gid_change",		IBV_EVENT_GID_CHANGE,		FP_EV_PORT },
	{ "lid_change",		IBV_EVENT_LID_CHANGE,		FP_EV_PORT },
	{ "path_mig",		IBV_EVENT_PATH_MIG,		FP_EV_QP },
	{ "path_mig_err",	IBV_EVENT_PATH_MIG_ERR,		FP_EV_QP },
	{ "pkey_change",	IBV_EVENT_PKEY_CHANGE,		FP_EV_PORT },
	{ "port_active",	IBV_EVENT_PORT_ACTIVE,		FP_EV_PORT },
	{ "port_err",		IBV_EVENT_PORT_ERR,		FP_EV_PORT },
	{ "qp_access_err",	IBV_EVENT_QP_ACCESS_ERR,	FP_EV_QP },
	{ "qp_fatal",		IBV_EVENT_QP_FATAL,		FP_EV_QP },
	{ "qp_last_wqe_reached", IBV_EVENT_QP_LAST_WQE_REACHED,	FP_EV_QP },
	{ "qp_req_err",		IBV_EVENT_QP_REQ_ERR,		FP_EV_QP },
	{ "sm_change",		IBV_EVENT_SM_CHANGE,		FP_EV_PORT },
	{ "sq_drained",		IBV_EVENT_SQ_DRAINED,		FP_EV_QP },
	{ "srq_err",		IBV_EVENT_SRQ_ERR,		FP_EV_SRQ },
	{ "srq_limit_reached",	IBV_EVENT_SRQ_LIMIT_REACHED,	FP_EV_SRQ },
};

enum fp_ev_obj fp_event_obj(enum ibv_event_type type)
{
	size_t i;

	for (i = 0; i < sizeof(fp_events) / sizeof(fp_events[0]); i++)
		if (fp_events[i].type == type)
			return fp_events[i].obj;
	return FP_EV_PORT;
}

bool fp_event_errs_qp(enum ibv_event_type type)
{
	return type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
	       type == IBV_EVENT_QP_ACCESS_ERR;
}

/* The object an op acts on (or creates); DEV = none in particular. */
static enum fp_ev_obj fp_op_obj(enum fp_op op)
{
	switch (op) {
	case FP_OP_CREATE_QP: case FP_OP_CREATE_QP_EX: case FP_OP_MODIFY_QP:
	case FP_OP_OPEN_QP: case FP_OP_POST_RECV: case FP_OP_POST_SEND:
	case FP_OP_QUERY_QP:
		return FP_EV_QP;
	case FP_OP_CREATE_SRQ: case FP_OP_CREATE_SRQ_EX: case FP_OP_GET_SRQ_NUM:
	case FP_OP_MODIFY_SRQ: case FP_OP_POST_SRQ_RECV: case FP_OP_QUERY_SRQ:
		return FP_EV_SRQ;
	case FP_OP_CREATE_CQ: case FP_OP_POLL_CQ: case FP_OP_REQ_NOTIFY_CQ:
	case FP_OP_RESIZE_CQ:
		return FP_EV_CQ;
	default:
		return FP_EV_DEV;
	}
}

static const char *const fp_obj_names[] = {
	[FP_EV_QP] = "QP", [FP_EV_SRQ] = "SRQ", [FP_EV_CQ] = "CQ",
};

/* ---- defaults ------------------------------------------------------------- */

static void fp_port_defaults(struct fp_port_spec *p)
{
	memset(p, 0, sizeof(*p));
	p->attr.state = IBV_PORT_ACTIVE;
	p->attr.max_mtu = IBV_MTU_4096;
	p->attr.active_mtu = IBV_MTU_4096;
	p->attr.gid_tbl_len = FP_MAX_GIDS;
	p->attr.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_SYS_IMAGE_GUID_SUP |
				 IBV_PORT_CLIENT_REG_SUP;
	p->attr.max_msg_sz = 1U << 30;
	p->attr.pkey_tbl_len = FP_MAX_PKEYS;
	p->attr.max_vl_num = 4;		/* encoded: VL0-7 */
	p->attr.subnet_timeout = 18;
	p->attr.active_width = 2;	/* 4X */
	p->attr.active_speed = 32;	/* EDR */
	p->attr.link_layer = IBV_LINK_LAYER_INFINIBAND;
	p->npkeys = 1;
	p->pkey[0] = 0xffff;
}

static void fp_dev_defaults(struct fp_dev_spec *d, int idx)
{
	struct ibv_device_attr *a = &d->attr;

	d->node_guid = 0x1bad000000000000ULL + idx + 1;
	d->node_type = IBV_NODE_CA;
	strcpy(a->fw_ver, "1.0.0");
	a->max_mr_size = 1ULL << 40;
	a->page_size_cap = 0xfffff000;		/* 4 KiB and up */
	a->vendor_id = 0x1bad;
	a->vendor_part_id = 0xfa4e;
	a->hw_ver = 1;
	a->max_qp = 16384;
	a->max_qp_wr = 16384;
	a->device_cap_flags = IBV_DEVICE_RESIZE_MAX_WR | IBV_DEVICE_BAD_PKEY_CNTR |
			      IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_CHANGE_PHY_PORT |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
			      IBV_DEVICE_N_NOTIFY_CQ | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = 32;
	a->max_sge_rd = 32;
	a->max_cq = 16384;
	a->max_cqe = 65535;
	a->max_mr = 65536;
	a->max_pd = 65536;
	a->max_qp_rd_atom = 16;
	a->max_res_rd_atom = 16 * 16384;
	a->max_qp_init_rd_atom = 16;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = 1024;			/* windows of types 1 and 2B */
	a->max_mcast_grp = 1024;
	a->max_mcast_qp_attach = 16;
	a->max_total_mcast_qp_attach = 16 * 1024;
	a->max_ah = 65536;
	a->max_srq = 16384;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 32;
	a->max_pkeys = FP_MAX_PKEYS;
	a->local_ca_ack_delay = 16;
}

/* ---- top-level directives ------------------------------------------------- */

static int fp_once(struct fp_pctx *c, int *line, const char *what)
{
	if (*line)
		return fp_perr(c, "duplicate '%s' (first on line %d)", what, *line);
	*line = c->line;
	return 0;
}

static int fp_nargs(struct fp_pctx *c, int argc, char **argv, int min, int max,
		    const char *usage)
{
	if (argc - 1 < min)
		return fp_perr(c, "%s: missing argument (usage: %s)", argv[0], usage);
	if (argc - 1 > max)
		return fp_perr(c, "%s: unexpected '%s'", argv[0], argv[max + 1]);
	return 0;
}

static int fp_d_mode(struct fp_pctx *c, int argc, char **argv)
{
	if (fp_nargs(c, argc, argv, 1, 1, "mode legacy|extended") ||
	    fp_once(c, &c->mode_line, "mode"))
		return -1;
	if (!strcmp(argv[1], "legacy"))
		c->s->mode = FP_MODE_LEGACY;
	else if (!strcmp(argv[1], "extended"))
		c->s->mode = FP_MODE_EXTENDED;
	else
		return fp_perr(c, "mode: expected legacy or extended, got '%s'", argv[1]);
	return 0;
}

static int fp_d_lifetime(struct fp_pctx *c, int argc, char **argv)
{
	if (fp_nargs(c, argc, argv, 1, 1, "lifetime current|seed") ||
	    fp_once(c, &c->lifetime_line, "lifetime"))
		return -1;
	if (!strcmp(argv[1], "current"))
		c->s->lifetime = FP_LIFE_CURRENT;
	else if (!strcmp(argv[1], "seed"))
		c->s->lifetime = FP_LIFE_SEED;
	else
		return fp_perr(c, "lifetime: expected current or seed, got '%s'", argv[1]);
	return 0;
}

static int fp_d_rdma_core(struct fp_pctx *c, int argc, char **argv)
{
	if (fp_nargs(c, argc, argv, 1, 1, "rdma-core 44|56") ||
	    fp_once(c, &c->release_line, "rdma-core"))
		return -1;
	if (!strcmp(argv[1], "44"))
		c->s->rdma_core = 44;
	else if (!strcmp(argv[1], "56"))
		c->s->rdma_core = 56;
	else
		return fp_perr(c, "rdma-core: expected 44 or 56 (the releases Debian ships), got '%s'",
			       argv[1]);
	return 0;
}

/* Keep in the order of enum fp_profile. */
static const struct {
	const char *name;
	const char *kdriver;	/* the kernel driver sysfs names (device/driver) */
	bool hw_counters;	/* its ports show FP_HW_COUNTERS under their names */
} fp_profiles[FP_PROF__COUNT] = {
	[FP_PROF_STRICT] = { "strict", "ibvct_fake", true },
	/* mlx5 and mlx4 count under names of their own (linux v6.1
	 * drivers/infiniband/hw/mlx5/counters.c), which are not played */
	[FP_PROF_MLX5] = { "mlx5", "mlx5_core", false },
	[FP_PROF_MLX4] = { "mlx4", "mlx4_core", false },
	[FP_PROF_RXE] = { "rxe", "rdma_rxe", true },
	/* ibvct's soft XRC device (ixrc): registered with no bus
	 * device, so no driver is bound in sysfs (ixrc_main.c ib_register_device
	 * with no dma_device, no dev.parent); it keeps no counters */
	[FP_PROF_IXRC] = { "ixrc", "", false },
};

const char *fp_profile_name(enum fp_profile p)
{
	return (unsigned)p < FP_PROF__COUNT ? fp_profiles[p].name : "?";
}

const char *fp_profile_kdriver(enum fp_profile p)
{
	return (unsigned)p < FP_PROF__COUNT ? fp_profiles[p].kdriver : "?";
}

bool fp_profile_hw_counters(enum fp_profile p)
{
	return (unsigned)p < FP_PROF__COUNT && fp_profiles[p].hw_counters;
}

static int fp_d_profile(struct fp_pctx *c, int argc, char **argv)
{
	int p;

	if (fp_nargs(c, argc, argv, 1, 1, "profile strict|mlx5|mlx4|rxe|ixrc") ||
	    fp_once(c, &c->profile_line, "profile"))
		return -1;
	for (p = 0; p < FP_PROF__COUNT; p++) {
		if (!strcmp(argv[1], fp_profiles[p].name)) {
			c->s->profile = (enum fp_profile)p;
			return 0;
		}
	}
	return fp_perr(c, "profile: expected strict, mlx5, mlx4, rxe or ixrc, got '%s'", argv[1]);
}

static int fp_d_device(struct fp_pctx *c, int argc, char **argv)
{
	struct fp_script *s = c->s;
	const char *n;
	int i;

	if (fp_nargs(c, argc, argv, 1, 1, "device NAME"))
		return -1;
	n = argv[1];
	if (strlen(n) >= FP_NAME_MAX || n[0] == '.')
		return fp_perr(c, "device: bad name '%s'", n);
	for (i = 0; n[i]; i++)
		if (!isalnum((unsigned char)n[i]) && !strchr("_.-", n[i]))
			return fp_perr(c, "device: bad name '%s'", n);
	for (i = 0; i < s->ndevs; i++)
		if (!strcmp(s->dev[i].name, n))
			return fp_perr(c, "duplicate device name '%s' (first on line %d)",
				       n, c->daux[i].line);
	if (s->ndevs == FP_MAX_DEVS)
		return fp_perr(c, "too many devices (max %d)", FP_MAX_DEVS);
	c->dev = s->ndevs++;
	fp_dev_defaults(&s->dev[c->dev], c->dev);
	strcpy(s->dev[c->dev].name, n);
	c->daux[c->dev].line = c->line;
	return 0;
}

static int fp_errno_arg(struct fp_pctx *c, const char *t, int *err)
{
	uint64_t v;
	long l;

	if (!FP_LOOKUP(fp_errnos, t, &l)) {
		*err = (int)l;
		return 0;
	}
	if (!isdigit((unsigned char)t[0]))
		return fp_perr(c, "fault: unknown errno '%s'", t);
	if (fp_num(c, "fault errno", t, 1, 4095, &v))
		return -1;
	*err = (int)v;
	return 0;
}

static int fp_d_fault(struct fp_pctx *c, int argc, char **argv)
{
	static const char usage[] = "fault OP nth|from N [errno E]";
	struct fp_script *s = c->s;
	struct fp_fault f = { 0 };
	uint64_t v;
	int op;

	if (fp_nargs(c, argc, argv, 3, 5, usage))
		return -1;
	op = fp_op_from_name(argv[1]);
	if (op < 0)
		return fp_perr(c, "fault: unknown op '%s'", argv[1]);
	f.op = op;
	if (!strcmp(argv[2], "from"))
		f.from = true;
	else if (strcmp(argv[2], "nth"))
		return fp_perr(c, "fault: expected nth or from, got '%s'", argv[2]);
	if (fp_num(c, "fault", argv[3], 1, ULONG_MAX, &v))
		return -1;
	f.nth = v;
	f.err = fp_op_default_errno(f.op);
	if (argc > 4) {
		if (strcmp(argv[4], "errno"))
			return fp_perr(c, "fault: unexpected '%s'", argv[4]);
		if (argc == 5)
			return fp_perr(c, "fault: errno needs a value (usage: %s)", usage);
		if (fp_errno_arg(c, argv[5], &f.err))
			return -1;
	}
	if (s->nfaults == FP_MAX_FAULTS)
		return fp_perr(c, "too many faults (max %d)", FP_MAX_FAULTS);
	s->fault[s->nfaults++] = f;
	return 0;
}

static int fp_d_quirk(struct fp_pctx *c, int argc, char **argv)
{
	int q;

	if (fp_nargs(c, argc, argv, 1, 1, "quirk NAME"))
		return -1;
	q = fp_quirk_from_name(argv[1]);
	if (q < 0)
		return fp_perr(c, "quirk: unknown quirk '%s'", argv[1]);
	c->s->quirk[q] = true;
	return 0;
}

static int fp_d_withdraw(struct fp_pctx *c, int argc, char **argv)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "cq_ex", FP_X_CQ_EX }, { "mw", FP_X_MW },
		{ "parent_domain", FP_X_PARENT_DOMAIN }, { "qp_ex", FP_X_QP_EX },
		{ "query_device_ex", FP_X_QUERY_DEVICE_EX },
		{ "query_rt_values", FP_X_QUERY_RT_VALUES }, { "rereg_mr", FP_X_REREG_MR },
	};
	size_t i;

	if (fp_nargs(c, argc, argv, 1, 1, "withdraw NAME"))
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(argv[1], names[i].name)) {
			c->s->withdrawn |= names[i].bit;
			return 0;
		}
	return fp_perr(c, "withdraw: unknown extension '%s' (cq_ex, mw, parent_domain, "
		       "qp_ex, query_device_ex, query_rt_values, rereg_mr)", argv[1]);
}

static int fp_d_event(struct fp_pctx *c, int argc, char **argv)
{
	static const char usage[] = "event TYPE after OP N [port P]";
	struct fp_script *s = c->s;
	struct fp_event_rule r = { 0 };
	enum fp_ev_obj obj = FP_EV_DEV;
	size_t i;
	uint64_t v;
	int op;

	if (fp_nargs(c, argc, argv, 4, 6, usage))
		return -1;
	for (i = 0; i < sizeof(fp_events) / sizeof(fp_events[0]); i++)
		if (!strcmp(fp_events[i].name, argv[1]))
			break;
	if (i == sizeof(fp_events) / sizeof(fp_events[0]))
		return fp_perr(c, "event: unknown event '%s'", argv[1]);
	r.type = fp_events[i].type;
	obj = fp_events[i].obj;
	if (strcmp(argv[2], "after"))
		return fp_perr(c, "event: expected 'after', got '%s'", argv[2]);
	op = fp_op_from_name(argv[3]);
	if (op < 0)
		return fp_perr(c, "event: unknown op '%s'", argv[3]);
	r.op = op;
	if ((obj == FP_EV_QP || obj == FP_EV_SRQ || obj == FP_EV_CQ) && fp_op_obj(op) != obj)
		return fp_perr(c, "event %s: op %s does not act on a %s", argv[1], argv[3],
			       fp_obj_names[obj]);
	if (fp_num(c, "event", argv[4], 1, ULONG_MAX, &v))
		return -1;
	r.nth = v;
	if (obj == FP_EV_PORT)
		r.port = 1;
	if (argc > 5) {
		if (strcmp(argv[5], "port"))
			return fp_perr(c, "event: unexpected '%s'", argv[5]);
		if (obj != FP_EV_PORT)
			return fp_perr(c, "event %s: not a port event, 'port' not allowed",
				       argv[1]);
		if (argc == 6)
			return fp_perr(c, "event: port needs a value (usage: %s)", usage);
		if (fp_num(c, "event port", argv[6], 1, FP_MAX_PORTS, &v))
			return -1;
		r.port = (int)v;
	}
	if (s->nevents == FP_MAX_EVENTS)
		return fp_perr(c, "too many events (max %d)", FP_MAX_EVENTS);
	c->event_line[s->nevents] = c->line;
	s->event[s->nevents++] = r;
	return 0;
}

static int fp_d_trace(struct fp_pctx *c, int argc, char **argv)
{
	struct fp_script *s = c->s;
	int n;

	if (fp_nargs(c, argc, argv, 1, 2, "trace FILE [states]") ||
	    fp_once(c, &c->trace_line, "trace"))
		return -1;
	if (!strcmp(argv[1], "-") || argv[1][0] == '/' || !c->dir)
		n = snprintf(s->trace_path, sizeof(s->trace_path), "%s", argv[1]);
	else
		n = snprintf(s->trace_path, sizeof(s->trace_path), "%s/%s", c->dir, argv[1]);
	if (n < 0 || (size_t)n >= sizeof(s->trace_path))
		return fp_perr(c, "trace: path too long");
	if (argc == 3 && strcmp(argv[2], "states"))
		return fp_perr(c, "trace: unexpected '%s' (usage: trace FILE [states])", argv[2]);
	s->trace_states = argc == 3;
	return 0;
}

/* ---- device directives ---------------------------------------------------- */

static struct fp_dev_spec *fp_cur_dev(struct fp_pctx *c)
{
	return &c->s->dev[c->dev];
}

static int fp_d_guid(struct fp_pctx *c, int argc, char **argv)
{
	if (fp_nargs(c, argc, argv, 1, 1, "guid G") ||
	    fp_once(c, &c->daux[c->dev].guid_line, "guid"))
		return -1;
	return fp_guid(c, "guid", argv[1], &fp_cur_dev(c)->node_guid);
}

static int fp_d_node_type(struct fp_pctx *c, int argc, char **argv)
{
	static const struct fp_name_val types[] = {
		{ "ca", IBV_NODE_CA }, { "rnic", IBV_NODE_RNIC },
		{ "router", IBV_NODE_ROUTER }, { "switch", IBV_NODE_SWITCH },
	};
	long v;

	if (fp_nargs(c, argc, argv, 1, 1, "node_type ca|switch|router|rnic") ||
	    fp_once(c, &c->daux[c->dev].node_type_line, "node_type"))
		return -1;
	if (FP_LOOKUP(types, argv[1], &v))
		return fp_perr(c, "node_type: expected ca, switch, router or rnic, got '%s'",
			       argv[1]);
	fp_cur_dev(c)->node_type = (enum ibv_node_type)v;
	return 0;
}

/* A free-running completion clock: its rate and the bits a timestamp keeps. */
static int fp_d_clock(struct fp_pctx *c, int argc, char **argv)
{
	static const char usage[] = "clock KHZ [mask M]";
	struct fp_dev_spec *d = fp_cur_dev(c);
	uint64_t khz, mask = UINT64_MAX;

	if (fp_nargs(c, argc, argv, 1, 3, usage) ||
	    fp_once(c, &c->daux[c->dev].clock_line, "clock") ||
	    fp_num(c, "clock", argv[1], 1, FP_CLOCK_KHZ_MAX, &khz))
		return -1;
	if (argc > 2) {
		if (strcmp(argv[2], "mask"))
			return fp_perr(c, "clock: unexpected '%s'", argv[2]);
		if (argc == 3)
			return fp_perr(c, "clock: mask needs a value (usage: %s)", usage);
		if (fp_num(c, "clock mask", argv[3], 1, UINT64_MAX, &mask))
			return -1;
		/* the low n bits of a counter: 2^n - 1 */
		if (mask & (mask + 1))
			return fp_perr(c, "clock mask: %s is not 2^n - 1", argv[3]);
		c->daux[c->dev].clock_mask_set = true;
	}
	d->clock_khz = khz;
	d->clock_mask = mask;
	return 0;
}

/*
 * transport roce IFACE [KIND N]...: the device's packets go as RoCE v2 on
 * a real interface (engine/roce.c) instead of through the inboxes of one
 * host, every Nth of them with fault KIND (loss, dup, reorder, icrc; trunc:
 * cut after its BTH and two bytes; srqn: an XRC request whose XRCETH names
 * the SRQ number below its WR's).
 * The interface must exist when the script is read; its addresses and MTU
 * become the port's GIDs and active MTU at the end of the script
 * (fp_roce_port).
 */
static int fp_d_transport(struct fp_pctx *c, int argc, char **argv)
{
	static const char usage[] =
		"transport shm | transport roce IFACE [loss|dup|reorder|icrc|trunc|srqn N]...";
	struct fp_dev_spec *d = fp_cur_dev(c);

	int i;

	if (fp_nargs(c, argc, argv, 1, 15, usage) ||
	    fp_once(c, &c->daux[c->dev].transport_line, "transport"))
		return -1;
	if (!strcmp(argv[1], "shm")) {
		if (argc != 2)
			return fp_perr(c, "transport shm takes nothing more (usage: %s)", usage);
		d->roce_if[0] = 0;
		return 0;
	}
	if (strcmp(argv[1], "roce"))
		return fp_perr(c, "transport: expected shm or roce, got '%s'", argv[1]);
	if (argc < 3)
		return fp_perr(c, "transport roce needs an interface (usage: %s)", usage);
	if (strlen(argv[2]) >= sizeof(d->roce_if))
		return fp_perr(c, "transport roce: interface name '%s' too long", argv[2]);
	if (!if_nametoindex(argv[2]))
		return fp_perr(c, "transport roce: no interface '%s' on this host", argv[2]);
	strcpy(d->roce_if, argv[2]);
	/* the wire's faults: of the packets sent, every Nth */
	for (i = 3; i < argc; i += 2) {
		unsigned *f = !strcmp(argv[i], "loss") ? &d->wire_fault.loss :
			      !strcmp(argv[i], "dup") ? &d->wire_fault.dup :
			      !strcmp(argv[i], "reorder") ? &d->wire_fault.reorder :
			      !strcmp(argv[i], "icrc") ? &d->wire_fault.icrc :
			      !strcmp(argv[i], "trunc") ? &d->wire_fault.trunc :
			      !strcmp(argv[i], "srqn") ? &d->wire_fault.srqn : NULL;
		uint64_t n;

		if (!f)
			return fp_perr(c, "transport roce: unknown fault '%s' (loss, dup, reorder, icrc, trunc or srqn)",
				       argv[i]);
		if (i + 1 >= argc)
			return fp_perr(c, "transport roce: %s needs N (every Nth packet)", argv[i]);
		if (fp_num(c, argv[i], argv[i + 1], 1, 1000000, &n))
			return -1;
		*f = (unsigned)n;
	}
	return 0;
}

/*
 * The port of a RoCE device: Ethernet, no LIDs, the GIDs of its interface's
 * addresses (index 0 the IPv6 link-local, index 1 the IPv4 address as
 * ::ffff:a.b.c.d, as far as it has them), and unless the script set one,
 * the active MTU rxe derives from the interface's: the largest IB MTU not
 * above the netdev MTU less the headers rxe reserves (linux v6.1 and v6.12
 * drivers/infiniband/sw/rxe/rxe_param.h eth_mtu_int_to_enum,
 * RXE_MAX_HDR_LENGTH 80; 1500 gives 1024).
 */
static int fp_roce_port(struct fp_pctx *c, const struct fp_dev_spec *d, struct fp_port_spec *p,
			const struct fp_port_aux *aux)
{
	struct ifaddrs *ifa, *a;
	bool v4 = false, v6 = false;
	char path[64];
	FILE *f;
	int mtu = 0;

	p->attr.link_layer = IBV_LINK_LAYER_ETHERNET;
	if (getifaddrs(&ifa))
		return fp_perr(c, "transport roce: cannot read the addresses of '%s'", d->roce_if);
	for (a = ifa; a; a = a->ifa_next) {
		if (!a->ifa_addr || strcmp(a->ifa_name, d->roce_if))
			continue;
		if (a->ifa_addr->sa_family == AF_INET6 && !v6 && !aux->gid0_set) {
			const struct sockaddr_in6 *s6 = (const void *)a->ifa_addr;

			if (!IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
				continue;
			memcpy(p->gid[0].raw, &s6->sin6_addr, 16);
			v6 = true;
		} else if (a->ifa_addr->sa_family == AF_INET && !v4) {
			const struct sockaddr_in *s4 = (const void *)a->ifa_addr;

			memset(p->gid[1].raw, 0, 16);
			p->gid[1].raw[10] = p->gid[1].raw[11] = 0xff;
			memcpy(p->gid[1].raw + 12, &s4->sin_addr, 4);
			v4 = true;
		}
	}
	freeifaddrs(ifa);
	if (!v6 && !v4)
		return fp_perr(c, "transport roce: '%s' has neither an IPv6 link-local nor an IPv4 address",
			       d->roce_if);
	if (!v6 && !aux->gid0_set)
		memset(p->gid[0].raw, 0, 16);
	if (p->ngids < (v4 ? 2 : 1))
		p->ngids = v4 ? 2 : 1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", d->roce_if);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &mtu) != 1)
			mtu = 0;
		fclose(f);
	}
	if (!aux->mtu_set && mtu > 0) {
		enum ibv_mtu m = IBV_MTU_256;

		mtu -= 80;
		while (m < p->attr.max_mtu && (128 << (m + 1)) <= mtu)
			m = (enum ibv_mtu)(m + 1);
		p->attr.active_mtu = m;
	}
	return 0;
}

static int fp_d_cap(struct fp_pctx *c, int argc, char **argv)
{
	struct ibv_device_attr *a = &fp_cur_dev(c)->attr;
	long v;

	if (fp_nargs(c, argc, argv, 1, 1, "cap|nocap FLAG"))
		return -1;
	if (FP_LOOKUP(fp_caps, argv[1], &v))
		return fp_perr(c, "%s: unknown capability '%s'", argv[0], argv[1]);
	if (!strcmp(argv[0], "cap"))
		a->device_cap_flags |= (unsigned int)v;
	else
		a->device_cap_flags &= ~(unsigned int)v;
	return 0;
}

enum fp_akind { FP_A_U8, FP_A_U16, FP_A_U32, FP_A_U64, FP_A_INT, FP_A_ATOMIC,
		FP_A_STR, FP_A_GUID };

#define FP_ATTR(f, k) { #f, offsetof(struct ibv_device_attr, f), k }
static const struct {
	const char *name;
	size_t off;
	enum fp_akind kind;
} fp_attrs[] = {	/* keep sorted by name */
	FP_ATTR(atomic_cap, FP_A_ATOMIC),
	FP_ATTR(device_cap_flags, FP_A_U32),
	FP_ATTR(fw_ver, FP_A_STR),
	FP_ATTR(hw_ver, FP_A_U32),
	FP_ATTR(local_ca_ack_delay, FP_A_U8),
	FP_ATTR(max_ah, FP_A_INT),
	FP_ATTR(max_cq, FP_A_INT),
	FP_ATTR(max_cqe, FP_A_INT),
	FP_ATTR(max_ee, FP_A_INT),
	FP_ATTR(max_ee_init_rd_atom, FP_A_INT),
	FP_ATTR(max_ee_rd_atom, FP_A_INT),
	FP_ATTR(max_fmr, FP_A_INT),
	FP_ATTR(max_map_per_fmr, FP_A_INT),
	FP_ATTR(max_mcast_grp, FP_A_INT),
	FP_ATTR(max_mcast_qp_attach, FP_A_INT),
	FP_ATTR(max_mr, FP_A_INT),
	FP_ATTR(max_mr_size, FP_A_U64),
	FP_ATTR(max_mw, FP_A_INT),
	FP_ATTR(max_pd, FP_A_INT),
	FP_ATTR(max_pkeys, FP_A_U16),
	FP_ATTR(max_qp, FP_A_INT),
	FP_ATTR(max_qp_init_rd_atom, FP_A_INT),
	FP_ATTR(max_qp_rd_atom, FP_A_INT),
	FP_ATTR(max_qp_wr, FP_A_INT),
	FP_ATTR(max_raw_ethy_qp, FP_A_INT),
	FP_ATTR(max_raw_ipv6_qp, FP_A_INT),
	FP_ATTR(max_rdd, FP_A_INT),
	FP_ATTR(max_res_rd_atom, FP_A_INT),
	FP_ATTR(max_sge, FP_A_INT),
	FP_ATTR(max_sge_rd, FP_A_INT),
	FP_ATTR(max_srq, FP_A_INT),
	FP_ATTR(max_srq_sge, FP_A_INT),
	FP_ATTR(max_srq_wr, FP_A_INT),
	FP_ATTR(max_total_mcast_qp_attach, FP_A_INT),
	FP_ATTR(page_size_cap, FP_A_U64),
	FP_ATTR(sys_image_guid, FP_A_GUID),
	FP_ATTR(vendor_id, FP_A_U32),
	FP_ATTR(vendor_part_id, FP_A_U32),
};
#undef FP_ATTR

static int fp_d_attr(struct fp_pctx *c, int argc, char **argv)
{
	static const struct fp_name_val atomics[] = {
		{ "glob", IBV_ATOMIC_GLOB }, { "hca", IBV_ATOMIC_HCA },
		{ "none", IBV_ATOMIC_NONE },
	};
	static const uint64_t kmax[] = {
		[FP_A_U8] = UINT8_MAX, [FP_A_U16] = UINT16_MAX, [FP_A_U32] = UINT32_MAX,
		[FP_A_U64] = UINT64_MAX, [FP_A_INT] = INT_MAX, [FP_A_ATOMIC] = IBV_ATOMIC_GLOB,
	};
	struct fp_dev_spec *d = fp_cur_dev(c);
	char *base = (char *)&d->attr;
	uint64_t v;
	size_t i;
	long l;

	if (fp_nargs(c, argc, argv, 2, 2, "attr FIELD VALUE"))
		return -1;
	if (!strcmp(argv[1], "node_guid"))
		return fp_perr(c, "attr: node_guid is set with 'guid'");
	if (!strcmp(argv[1], "phys_port_cnt"))
		return fp_perr(c, "attr: phys_port_cnt is the number of port lines");
	for (i = 0; i < sizeof(fp_attrs) / sizeof(fp_attrs[0]); i++)
		if (!strcmp(fp_attrs[i].name, argv[1]))
			break;
	if (i == sizeof(fp_attrs) / sizeof(fp_attrs[0]))
		return fp_perr(c, "attr: unknown field '%s'", argv[1]);

	switch (fp_attrs[i].kind) {
	case FP_A_STR:
		if (strlen(argv[2]) >= sizeof(d->attr.fw_ver))
			return fp_perr(c, "attr %s: longer than %zu characters", argv[1],
				       sizeof(d->attr.fw_ver) - 1);
		strcpy(base + fp_attrs[i].off, argv[2]);
		return 0;
	case FP_A_GUID:
		if (fp_guid(c, "attr sys_image_guid", argv[2], &v))
			return -1;
		d->attr.sys_image_guid = htobe64(v);
		c->daux[c->dev].sys_guid_set = true;
		return 0;
	case FP_A_ATOMIC:
		if (!FP_LOOKUP(atomics, argv[2], &l)) {
			d->attr.atomic_cap = (enum ibv_atomic_cap)l;
			return 0;
		}
		break;
	default:
		break;
	}
	if (fp_num(c, argv[1], argv[2], 0, kmax[fp_attrs[i].kind], &v))
		return -1;
	switch (fp_attrs[i].kind) {
	case FP_A_U8:	*(uint8_t *)(base + fp_attrs[i].off) = (uint8_t)v; break;
	case FP_A_U16:	*(uint16_t *)(base + fp_attrs[i].off) = (uint16_t)v; break;
	case FP_A_U32:	*(uint32_t *)(base + fp_attrs[i].off) = (uint32_t)v; break;
	case FP_A_U64:	*(uint64_t *)(base + fp_attrs[i].off) = v; break;
	case FP_A_INT:	*(int *)(base + fp_attrs[i].off) = (int)v; break;
	case FP_A_ATOMIC: d->attr.atomic_cap = (enum ibv_atomic_cap)v; break;
	default: break;
	}
	return 0;
}

static int fp_mtu(struct fp_pctx *c, const char *what, const char *t, enum ibv_mtu *m)
{
	static const struct fp_name_val mtus[] = {
		{ "1024", IBV_MTU_1024 }, { "2048", IBV_MTU_2048 }, { "256", IBV_MTU_256 },
		{ "4096", IBV_MTU_4096 }, { "512", IBV_MTU_512 },
	};
	long v;

	if (FP_LOOKUP(mtus, t, &v))
		return fp_perr(c, "port %s: expected 256, 512, 1024, 2048 or 4096, got '%s'",
			       what, t);
	*m = (enum ibv_mtu)v;
	return 0;
}

static int fp_port_option(struct fp_pctx *c, struct fp_port_spec *p,
			  struct fp_port_aux *aux, const char *opt, const char *val)
{
	static const struct fp_name_val states[] = {
		{ "active", IBV_PORT_ACTIVE }, { "armed", IBV_PORT_ARMED },
		{ "down", IBV_PORT_DOWN }, { "init", IBV_PORT_INIT },
	};
	static const struct fp_name_val layers[] = {
		{ "ethernet", IBV_LINK_LAYER_ETHERNET }, { "ib", IBV_LINK_LAYER_INFINIBAND },
	};
	/* ibv_port_attr encodings (IBTA PortInfo) */
	static const struct fp_name_val widths[] = {
		{ "12x", 8 }, { "1x", 1 }, { "2x", 16 }, { "4x", 2 }, { "8x", 4 },
	};
	static const struct fp_name_val speeds[] = {
		{ "ddr", 2 }, { "edr", 32 }, { "fdr", 16 }, { "fdr10", 8 }, { "hdr", 64 },
		{ "ndr", 128 }, { "qdr", 4 }, { "sdr", 1 },
	};
	uint64_t v;
	long l;

	if (!strcmp(opt, "state")) {
		if (FP_LOOKUP(states, val, &l))
			return fp_perr(c, "port state: expected down, init, armed or active, got '%s'", val);
		p->attr.state = (enum ibv_port_state)l;
	} else if (!strcmp(opt, "lid")) {
		if (fp_num(c, "port lid", val, 0, 0xffff, &v))
			return -1;
		p->attr.lid = (uint16_t)v;
		aux->lid_set = true;
	} else if (!strcmp(opt, "sm_lid")) {
		if (fp_num(c, "port sm_lid", val, 0, 0xffff, &v))
			return -1;
		p->attr.sm_lid = (uint16_t)v;
		aux->sm_lid_set = true;
	} else if (!strcmp(opt, "lmc")) {
		if (fp_num(c, "port lmc", val, 0, 7, &v))
			return -1;
		p->attr.lmc = (uint8_t)v;
	} else if (!strcmp(opt, "mtu")) {
		aux->mtu_set = true;
		return fp_mtu(c, "mtu", val, &p->attr.active_mtu);
	} else if (!strcmp(opt, "max_mtu")) {
		return fp_mtu(c, "max_mtu", val, &p->attr.max_mtu);
	} else if (!strcmp(opt, "link_layer")) {
		if (FP_LOOKUP(layers, val, &l))
			return fp_perr(c, "port link_layer: expected ib or ethernet, got '%s'", val);
		p->attr.link_layer = (uint8_t)l;
	} else if (!strcmp(opt, "width")) {
		if (FP_LOOKUP(widths, val, &l))
			return fp_perr(c, "port width: expected 1x, 2x, 4x, 8x or 12x, got '%s'", val);
		p->attr.active_width = (uint8_t)l;
	} else if (!strcmp(opt, "speed")) {
		if (FP_LOOKUP(speeds, val, &l))
			return fp_perr(c, "port speed: expected sdr, ddr, qdr, fdr10, fdr, edr, hdr or ndr, got '%s'", val);
		p->attr.active_speed = (uint8_t)l;
	} else {
		return fp_perr(c, "port: unknown option '%s'", opt);
	}
	return 0;
}

static int fp_d_port(struct fp_pctx *c, int argc, char **argv)
{
	struct fp_dev_spec *d = fp_cur_dev(c);
	struct fp_dev_aux *daux = &c->daux[c->dev];
	struct fp_port_spec *p;
	uint64_t n;
	int i;

	if (fp_nargs(c, argc, argv, 1, FP_WORDS_MAX, "port N [OPTION VALUE]..."))
		return -1;
	if (fp_num(c, "port", argv[1], 1, FP_MAX_PORTS, &n))
		return -1;
	if ((int)n > d->nports + 1)
		return fp_perr(c, "port %d declared before port %d", (int)n, d->nports + 1);
	if ((argc - 2) % 2)
		return fp_perr(c, "port: option '%s' needs a value", argv[argc - 1]);
	p = &d->port[n - 1];
	if ((int)n == d->nports + 1) {
		d->nports++;
		fp_port_defaults(p);
		daux->port[n - 1].line = c->line;
	}
	for (i = 2; i < argc; i += 2)
		if (fp_port_option(c, p, &daux->port[n - 1], argv[i], argv[i + 1]))
			return -1;
	return 0;
}

static int fp_port_arg(struct fp_pctx *c, const char *what, const char *t, int *port)
{
	uint64_t v;

	if (fp_num(c, what, t, 1, FP_MAX_PORTS, &v))
		return -1;
	if ((int)v > fp_cur_dev(c)->nports)
		return fp_perr(c, "%s: port %d not declared (device %s has %d)", what,
			       (int)v, fp_cur_dev(c)->name, fp_cur_dev(c)->nports);
	*port = (int)v;
	return 0;
}

static int fp_d_gid(struct fp_pctx *c, int argc, char **argv)
{
	struct fp_port_spec *p;
	union ibv_gid g;
	uint64_t idx;
	int port, i;

	if (fp_nargs(c, argc, argv, 3, 3, "gid PORT INDEX GID") ||
	    fp_port_arg(c, argv[0], argv[1], &port) ||
	    fp_num(c, "gid index", argv[2], 0, FP_MAX_GIDS - 1, &idx))
		return -1;
	if (strlen(argv[3]) == 32 && !strchr(argv[3], ':')) {
		for (i = 0; i < 16; i++) {
			char byte[3] = { argv[3][2 * i], argv[3][2 * i + 1], 0 };

			if (!isxdigit((unsigned char)byte[0]) || !isxdigit((unsigned char)byte[1]))
				return fp_perr(c, "gid: bad GID '%s'", argv[3]);
			g.raw[i] = (uint8_t)strtoul(byte, NULL, 16);
		}
	} else if (inet_pton(AF_INET6, argv[3], g.raw) != 1) {
		return fp_perr(c, "gid: bad GID '%s'", argv[3]);
	}
	p = &fp_cur_dev(c)->port[port - 1];
	p->gid[idx] = g;
	if ((int)idx >= p->ngids)
		p->ngids = (int)idx + 1;
	if (idx == 0)
		c->daux[c->dev].port[port - 1].gid0_set = true;
	return 0;
}

static int fp_d_pkey(struct fp_pctx *c, int argc, char **argv)
{
	struct fp_port_spec *p;
	uint64_t idx, v;
	int port;

	if (fp_nargs(c, argc, argv, 3, 3, "pkey PORT INDEX VALUE") ||
	    fp_port_arg(c, argv[0], argv[1], &port) ||
	    fp_num(c, "pkey index", argv[2], 0, FP_MAX_PKEYS - 1, &idx) ||
	    fp_num(c, "pkey", argv[3], 0, 0xffff, &v))
		return -1;
	p = &fp_cur_dev(c)->port[port - 1];
	p->pkey[idx] = (uint16_t)v;
	if ((int)idx >= p->npkeys)
		p->npkeys = (int)idx + 1;
	return 0;
}

/* ---- the line loop -------------------------------------------------------- */

typedef int fp_directive_fn(struct fp_pctx *c, int argc, char **argv);

static const struct {
	const char *name;
	fp_directive_fn *fn;
	bool in_device;		/* only inside a device block */
} fp_directives[] = {	/* keep sorted by name */
	{ "attr",	fp_d_attr,	true },
	{ "cap",	fp_d_cap,	true },
	{ "clock",	fp_d_clock,	true },
	{ "device",	fp_d_device,	false },
	{ "event",	fp_d_event,	false },
	{ "fault",	fp_d_fault,	false },
	{ "gid",	fp_d_gid,	true },
	{ "guid",	fp_d_guid,	true },
	{ "lifetime",	fp_d_lifetime,	false },
	{ "mode",	fp_d_mode,	false },
	{ "nocap",	fp_d_cap,	true },
	{ "node_type",	fp_d_node_type,	true },
	{ "pkey",	fp_d_pkey,	true },
	{ "port",	fp_d_port,	true },
	{ "profile",	fp_d_profile,	false },
	{ "quirk",	fp_d_quirk,	false },
	{ "rdma-core",	fp_d_rdma_core,	false },
	{ "trace",	fp_d_trace,	false },
	{ "transport",	fp_d_transport,	true },
	{ "withdraw",	fp_d_withdraw,	false },
};

static int fp_line(struct fp_pctx *c, char *buf)
{
	char *argv[FP_WORDS_MAX + 1];
	char *p, *save = NULL;
	size_t i;
	int argc = 0;

	p = strchr(buf, '#');
	if (p)
		*p = 0;
	for (p = strtok_r(buf, " \t\r\v\f", &save); p; p = strtok_r(NULL, " \t\r\v\f", &save)) {
		if (argc == FP_WORDS_MAX)
			return fp_perr(c, "too many words (max %d)", FP_WORDS_MAX);
		argv[argc++] = p;
	}
	if (!argc)
		return 0;
	argv[argc] = NULL;
	for (i = 0; i < sizeof(fp_directives) / sizeof(fp_directives[0]); i++)
		if (!strcmp(fp_directives[i].name, argv[0]))
			break;
	if (i == sizeof(fp_directives) / sizeof(fp_directives[0]))
		return fp_perr(c, "unknown directive '%s'", argv[0]);
	if (fp_directives[i].in_device) {
		if (c->dev < 0)
			return fp_perr(c, "'%s' outside a device block", argv[0]);
	} else {
		c->dev = -1;	/* any top-level directive ends the block */
	}
	return fp_directives[i].fn(c, argc, argv);
}

/* Defaults that depend on the whole device block, then cross-checks. */
static int fp_finish(struct fp_pctx *c)
{
	struct fp_script *s = c->s;
	int i, j, maxports = 0;

	if (!s->ndevs)
		return fp_perr(c, "no device declared");
	for (i = 0; i < s->ndevs; i++) {
		struct fp_dev_spec *d = &s->dev[i];
		struct fp_dev_aux *aux = &c->daux[i];

		if (!d->nports) {
			d->nports = 1;
			fp_port_defaults(&d->port[0]);
			aux->port[0].line = aux->line;
		}
		for (j = 0; j < d->nports; j++) {
			struct fp_port_spec *p = &d->port[j];
			bool ib;

			if (d->roce_if[0] && j == 0) {
				c->line = aux->transport_line;
				if (fp_roce_port(c, d, p, &aux->port[j]))
					return -1;
				if (p->ngids)
					aux->port[j].gid0_set = true;
			}
			ib = p->attr.link_layer == IBV_LINK_LAYER_INFINIBAND;

			if (!aux->port[j].lid_set)
				p->attr.lid = ib ? (uint16_t)(8 * i + j + 1) : 0;
			if (!aux->port[j].sm_lid_set)
				p->attr.sm_lid = ib ? 1 : 0;
			if (!aux->port[j].gid0_set) {
				uint64_t be = htobe64(d->node_guid);

				memset(p->gid[0].raw, 0, 16);
				p->gid[0].raw[0] = 0xfe;
				p->gid[0].raw[1] = 0x80;
				memcpy(p->gid[0].raw + 8, &be, 8);
				if (!p->ngids)
					p->ngids = 1;
			}
			/* IBTA PortPhysicalState: 3 Disabled, 5 LinkUp */
			p->attr.phys_state = p->attr.state == IBV_PORT_DOWN ? 3 : 5;
			/* rxe's port tables: 1024 GIDs (past the script's 16
			 * all empty) and one P_Key (linux v6.1
			 * drivers/infiniband/sw/rxe/rxe_param.h
			 * RXE_PORT_GID_TBL_LEN; rxe_query_port; Debian 12's
			 * rxe0 reports gid_tbl_len 1024, pkey_tbl_len 1) */
			if (s->profile == FP_PROF_RXE) {
				p->attr.gid_tbl_len = 1024;
				p->attr.pkey_tbl_len = 1;
				/* and the rest of rxe_query_port's answer:
				 * RXE_PORT_MAX_MSG_SZ, RXE_PORT_MAX_VL_NUM, CM
				 * support alone, no subnet timeout */
				p->attr.max_msg_sz = 0x800000;
				p->attr.max_vl_num = 1;
				p->attr.port_cap_flags = IBV_PORT_CM_SUP;
				p->attr.subnet_timeout = 0;
			}
			/* ibvct's soft XRC device: one GID, one P_Key, messages of
			 * IXRC_MAX_MSG, one VL, no capability flags, no subnet
			 * timeout (ixrc/ixrc_main.c ixrc_query_port,
			 * ixrc_get_port_immutable; ibv_devinfo -v of ixrc0 in the
			 * xrc-vm guest) */
			if (s->profile == FP_PROF_IXRC) {
				p->attr.gid_tbl_len = 1;
				p->attr.pkey_tbl_len = 1;
				p->attr.max_msg_sz = 0x100000;
				p->attr.max_vl_num = 1;
				p->attr.port_cap_flags = 0;
				p->attr.subnet_timeout = 0;
			}
			if (p->attr.active_mtu > p->attr.max_mtu) {
				c->line = aux->port[j].line;
				return fp_perr(c, "port %d: mtu %d above max_mtu %d", j + 1,
					       128 << p->attr.active_mtu, 128 << p->attr.max_mtu);
			}
		}
		/* the clock a driver profile has is its driver's (fp_prof_clock):
		 * rxe none, mlx5 and mlx4 the mask their kernel driver reports */
		if (aux->clock_line && s->profile == FP_PROF_RXE) {
			c->line = aux->clock_line;
			return fp_perr(c, "clock: profile rxe has no completion clock");
		}
		if (aux->clock_mask_set && (s->profile == FP_PROF_MLX5 || s->profile == FP_PROF_MLX4)) {
			c->line = aux->clock_line;
			return fp_perr(c, "clock: profile %s reports its driver's mask; no 'mask' here",
				       fp_profile_name(s->profile));
		}
		if (d->nports > maxports)
			maxports = d->nports;
		d->attr.node_guid = htobe64(d->node_guid);
		if (!aux->sys_guid_set)
			d->attr.sys_image_guid = d->attr.node_guid;
		d->attr.phys_port_cnt = (uint8_t)d->nports;
		for (j = 0; j < i; j++) {
			if (s->dev[j].node_guid == d->node_guid) {
				c->line = aux->guid_line ? aux->guid_line : aux->line;
				return fp_perr(c, "device %s: guid already used by device %s",
					       d->name, s->dev[j].name);
			}
		}
	}
	for (i = 0; i < s->nevents; i++) {
		if (s->event[i].port > maxports) {
			c->line = c->event_line[i];
			return fp_perr(c, "event: port %d but no device has %d ports",
				       s->event[i].port, s->event[i].port);
		}
	}
	return 0;
}

static int fp_parse_text(const char *name, const char *dir, const char *abspath,
			 const char *text, size_t len, struct fp_script *s,
			 char *err, size_t errlen)
{
	struct fp_pctx *c;
	struct fp_script *tmp;
	char buf[FP_LINE_MAX];
	size_t pos = 0, n;
	const char *nl;
	int ret = -1;

	c = calloc(1, sizeof(*c));
	tmp = calloc(1, sizeof(*tmp));
	if (!c || !tmp) {
		snprintf(err, errlen, "%s:0: out of memory", name);
		goto out_free;
	}
	c->name = name;
	c->err = err;
	c->errlen = errlen;
	c->s = tmp;
	c->dev = -1;
	c->dir = dir;
	snprintf(tmp->path, sizeof(tmp->path), "%s", abspath);

	while (pos < len) {
		c->line++;
		nl = memchr(text + pos, '\n', len - pos);
		n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		if (memchr(text + pos, 0, n)) {
			fp_perr(c, "NUL byte in line");
			goto out_free;
		}
		if (n >= FP_LINE_MAX) {
			fp_perr(c, "line too long (max %d characters)", FP_LINE_MAX - 1);
			goto out_free;
		}
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		if (fp_line(c, buf))
			goto out_free;
		pos += n + 1;
	}
	if (fp_finish(c))
		goto out_free;
	memcpy(s, tmp, sizeof(*s));
	ret = 0;
out_free:
	free(tmp);
	free(c);
	return ret;
}

int fp_script_parse(const char *name, const char *text, struct fp_script *s,
		    char *err, size_t errlen)
{
	char dir[4096];
	const char *slash = strrchr(name, '/');

	/* a name with a directory gives relative trace paths their base */
	if (slash && (size_t)(slash - name) < sizeof(dir)) {
		memcpy(dir, name, slash - name);
		dir[slash - name] = 0;
		if (!dir[0])
			strcpy(dir, "/");
	}
	return fp_parse_text(name, slash ? dir : NULL, "", text, strlen(text), s,
			     err, errlen);
}

int fp_script_load(const char *path, struct fp_script *s, char *err, size_t errlen)
{
	char *text = NULL, *abspath = NULL, *slash;
	char dir[4096];
	struct stat st;
	ssize_t r;
	size_t len = 0, cap;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s:0: not a regular file", path);
		goto out_close;
	}
	/* Sized by the file, plus one byte to see EOF: a megabyte per load made
	 * every small script fault a megabyte in. A file that grows meanwhile
	 * grows the buffer, up to the cap plus the byte that says "too large". */
	cap = st.st_size < FP_FILE_MAX ? (size_t)st.st_size + 1 : (size_t)FP_FILE_MAX + 1;
	text = malloc(cap);
	abspath = realpath(path, NULL);
	if (!text || !abspath) {
		snprintf(err, errlen, "%s:0: %s", path, strerror(errno));
		goto out_close;
	}
	for (;;) {
		if (len == cap) {
			size_t ncap = cap < FP_FILE_MAX / 2 ? cap * 2 : (size_t)FP_FILE_MAX + 1;
			char *nt = realloc(text, ncap);

			if (!nt) {
				snprintf(err, errlen, "%s:0: %s", path, strerror(errno));
				goto out_close;
			}
			text = nt;
			cap = ncap;
		}
		r = read(fd, text + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s:0: cannot read: %s", path, strerror(errno));
			goto out_close;
		}
		if (r == 0)
			break;
		len += r;
		if (len > FP_FILE_MAX) {
			snprintf(err, errlen, "%s:0: file too large (max %d bytes)", path,
				 FP_FILE_MAX);
			goto out_close;
		}
	}
	snprintf(dir, sizeof(dir), "%s", abspath);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	ret = fp_parse_text(path, dir, abspath, text, len, s, err, errlen);
out_close:
	free(abspath);
	free(text);
	close(fd);
	return ret;
}

void fp_script_default(struct fp_script *s)
{
	char err[256];

	/* The text is a constant that t5001 parses: failing here is a build bug. */
	if (fp_script_parse("<default>", fp_script_default_text, s, err, sizeof(err))) {
		fprintf(stderr, "ibvct: built-in script: %s\n", err);
		abort();
	}
}
