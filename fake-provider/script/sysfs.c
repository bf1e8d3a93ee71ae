/* SPDX-License-Identifier: MIT */
/*
 * The fake sysfs tree for a script: what ref-impl's discovery walks and
 * what tools such as ibv_devinfo read through ibv_read_sysfs_file(). File
 * contents follow the kernel's formats ("4: ACTIVE", "xxxx:xxxx:xxxx:xxxx",
 * "100 Gb/sec (4X EDR)") so that programs parsing them are not surprised.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fp_script.h"

struct fp_sysfs {
	const char *root;
	char *err;
	size_t errlen;
};

static int fp_mkdirs(struct fp_sysfs *w, const char *path)
{
	char buf[4096];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(w->err, w->errlen, "%s: path too long", path);
		return ENAMETOOLONG;
	}
	for (p = buf + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST) {
			snprintf(w->err, w->errlen, "mkdir %s: %s", buf, strerror(errno));
			return errno;
		}
		if (!c)
			return 0;
		*p = c;
	}
}

/* Write root/<path> (parents made) with printf-style contents. */
__attribute__((format(printf, 3, 4)))
static int fp_put(struct fp_sysfs *w, const char *path, const char *fmt, ...)
{
	char full[4096], *slash;
	va_list ap;
	FILE *f;
	int ret;

	if (snprintf(full, sizeof(full), "%s/%s", w->root, path) >= (int)sizeof(full)) {
		snprintf(w->err, w->errlen, "%s/%s: path too long", w->root, path);
		return ENAMETOOLONG;
	}
	slash = strrchr(full, '/');
	*slash = 0;
	ret = fp_mkdirs(w, full);
	*slash = '/';
	if (ret)
		return ret;
	f = fopen(full, "w");
	if (!f) {
		ret = errno;
		snprintf(w->err, w->errlen, "%s: %s", full, strerror(ret));
		return ret;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f)) {
		ret = errno;
		snprintf(w->err, w->errlen, "%s: %s", full, strerror(ret));
		return ret;
	}
	return 0;
}

static int fp_sysfs_symlink(struct fp_sysfs *w, const char *target, const char *path)
{
	char full[4096];

	snprintf(full, sizeof(full), "%s/%s", w->root, path);
	unlink(full);	/* rewriting a tree: replace the old link */
	if (symlink(target, full)) {
		snprintf(w->err, w->errlen, "symlink %s: %s", full, strerror(errno));
		return errno;
	}
	return 0;
}

static const char *fp_node_type_str(enum ibv_node_type t)
{
	switch (t) {
	case IBV_NODE_CA:	return "CA";
	case IBV_NODE_SWITCH:	return "switch";
	case IBV_NODE_ROUTER:	return "router";
	case IBV_NODE_RNIC:	return "RNIC";
	default:		return "unknown";
	}
}

static const char *fp_port_state_str(enum ibv_port_state s)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static const char *fp_phys_state_str(uint8_t s)
{
	static const char *const names[] = {
		"Unknown", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
		"LinkUp", "LinkErrorRecovery", "Phy Test",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "Unknown";
}

/* "100 Gb/sec (4X EDR)" from the PortInfo width and speed encodings. */
static void fp_rate_str(const struct ibv_port_attr *a, char *buf, size_t len)
{
	static const struct { uint8_t code; int tenths; const char *name; } speeds[] = {
		{ 1, 25, "" }, { 2, 50, " DDR" }, { 4, 100, " QDR" }, { 8, 100, " FDR10" },
		{ 16, 140, " FDR" }, { 32, 250, " EDR" }, { 64, 500, " HDR" },
		{ 128, 1000, " NDR" },
	};
	int lanes, tenths = 25, total;
	const char *name = "";
	size_t i;

	switch (a->active_width) {
	case 1: lanes = 1; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: lanes = 4; break;
	}
	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++) {
		if (speeds[i].code == a->active_speed) {
			tenths = speeds[i].tenths;
			name = speeds[i].name;
		}
	}
	total = lanes * tenths;
	snprintf(buf, len, "%d%s Gb/sec (%dX%s)", total / 10, total % 10 ? ".5" : "",
		 lanes, name);
}

static void fp_guid_str(uint64_t g, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
}

#define FP_HW_COUNTER_FILE(id, file)	file,
static const char *const fp_hw_counters[] = { FP_HW_COUNTERS(FP_HW_COUNTER_FILE) };
#undef FP_HW_COUNTER_FILE

const char *fp_hw_counter_name(int i)
{
	return i >= 0 && i < (int)(sizeof(fp_hw_counters) / sizeof(fp_hw_counters[0]))
	       ? fp_hw_counters[i] : NULL;
}

static int fp_sysfs_port(struct fp_sysfs *w, const struct fp_dev_spec *d, int n, bool rxe,
			 bool counters)
{
	const struct fp_port_spec *p = &d->port[n - 1];
	const struct ibv_port_attr *a = &p->attr;
	char dir[256], rate[64];
	int i, ret;

	snprintf(dir, sizeof(dir), "class/infiniband/%s/ports/%d", d->name, n);
	fp_rate_str(a, rate, sizeof(rate));
#define PUT(file, ...) do {						\
		char _f[320];						\
		snprintf(_f, sizeof(_f), "%s/%s", dir, file);		\
		ret = fp_put(w, _f, __VA_ARGS__);			\
		if (ret)						\
			return ret;					\
	} while (0)
	PUT("state", "%d: %s\n", a->state, fp_port_state_str(a->state));
	PUT("phys_state", "%d: %s\n", a->phys_state, fp_phys_state_str(a->phys_state));
	PUT("lid", "0x%x\n", a->lid);
	PUT("sm_lid", "0x%x\n", a->sm_lid);
	PUT("lmc", "%d\n", a->lmc);
	PUT("sm_sl", "%d\n", a->sm_sl);
	PUT("cap_mask", "0x%08x\n", a->port_cap_flags);
	PUT("rate", "%s\n", rate);
	PUT("link_layer", "%s\n", a->link_layer == IBV_LINK_LAYER_ETHERNET ?
	    "Ethernet" : "InfiniBand");
	for (i = 0; i < a->gid_tbl_len && i < FP_MAX_GIDS; i++) {
		const uint8_t *g = p->gid[i].raw;
		char name[32];

		snprintf(name, sizeof(name), "gids/%d", i);
		PUT(name, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
		    g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10],
		    g[11], g[12], g[13], g[14], g[15]);
		/* rxe makes RoCE v2 GIDs alone (linux v6.1
		 * drivers/infiniband/sw/rxe/rxe.c rxe_set_port_attr /
		 * rxe_verbs.c: the core's RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
		 * Debian 12's rxe0 lists them "RoCE v2") */
		if (rxe && a->link_layer == IBV_LINK_LAYER_ETHERNET && i < p->ngids) {
			snprintf(name, sizeof(name), "gid_attrs/types/%d", i);
			PUT(name, "RoCE v2\n");
		}
	}
	for (i = 0; i < a->pkey_tbl_len && i < FP_MAX_PKEYS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "pkeys/%d", i);
		PUT(name, "0x%04x\n", i < p->npkeys ? p->pkey[i] : 0);
	}
	/* the counters start at 0 with the host (verbs/counters.c adds) */
	for (i = 0; counters && fp_hw_counter_name(i); i++) {
		char name[64];

		snprintf(name, sizeof(name), "hw_counters/%s", fp_hw_counter_name(i));
		PUT(name, "0\n");
	}
#undef PUT
	return 0;
}

/* A hardware device's class entries point at its "bus device", which the
 * kernel driver bound to it names (the expectations file follows the
 * driver, not the device name: udev renames devices). A soft device (rxe)
 * has neither: it sits under devices/virtual with a "parent" attribute
 * naming its netdev and no hca_type, hw_rev or board_id (linux v6.1
 * drivers/infiniband/sw/rxe/rxe_verbs.c parent_show, rxe_register_device
 * with no dev.parent; as rxe0 shows in the rxe-vm guest). */
static int fp_sysfs_dev(struct fp_sysfs *w, const struct fp_dev_spec *d, int idx,
			const char *kdriver, bool soft, bool counters)
{
	char path[256], target[256], guid[32], sysguid[32];
	int i, ret;

	fp_guid_str(d->node_guid, guid, sizeof(guid));
	fp_guid_str(be64toh(d->attr.sys_image_guid), sysguid, sizeof(sysguid));

#define PUT(fmtpath, ...) do {						\
		snprintf(path, sizeof(path), fmtpath, d->name);		\
		ret = fp_put(w, path, __VA_ARGS__);			\
		if (ret)						\
			return ret;					\
	} while (0)
	PUT("class/infiniband/%s/node_type", "%d: %s\n", d->node_type,
	    fp_node_type_str(d->node_type));
	PUT("class/infiniband/%s/node_guid", "%s\n", guid);
	PUT("class/infiniband/%s/sys_image_guid", "%s\n", sysguid);
	PUT("class/infiniband/%s/fw_ver", "%s\n", d->attr.fw_ver);
	/* ibvct's soft XRC device (profile ixrc: no kernel driver named) has the
	 * node description its module gives (ixrc/ixrc_main.c), by
	 * which the suites know it (testkit/runner/th.c th_driver_key) */
	if (!kdriver[0])
		PUT("class/infiniband/%s/node_desc", "%s\n", "ibvct soft XRC device");
	else
		PUT("class/infiniband/%s/node_desc", "ibvct fake %s\n", d->name);
	if (soft) {
		snprintf(path, sizeof(path), "class/infiniband/%s/parent", d->name);
		ret = fp_put(w, path, "eth%d\n", idx);
		goto uverbs;
	}
	/* ibvct's soft XRC device (profile ixrc, no kernel driver named) has no
	 * bus device either, and no parent: the core's attributes alone
	 * (ixrc/ixrc_main.c: ib_register_device with no DMA
	 * device, no driver attribute group) */
	if (!kdriver[0]) {
		ret = 0;
		goto uverbs;
	}
	PUT("devices/ibvct/%s/vendor", "0x%04x\n", d->attr.vendor_id);
	PUT("devices/ibvct/%s/device", "0x%04x\n", d->attr.vendor_part_id);
	PUT("class/infiniband/%s/hw_rev", "0x%x\n", d->attr.hw_ver);
	PUT("class/infiniband/%s/hca_type", "%s\n", "IBVCT-FAKE");
#undef PUT
	/* rxe has no board_id (a driver's attribute; Debian 12's rxe0) */
	if (strcmp(kdriver, "rdma_rxe")) {
		snprintf(path, sizeof(path), "class/infiniband/%s/board_id", d->name);
		ret = fp_put(w, path, "IBVCT_%04X%04X\n", d->attr.vendor_id & 0xffff,
			     d->attr.vendor_part_id & 0xffff);
		if (ret)
			return ret;
	}
	snprintf(target, sizeof(target), "../../../devices/ibvct/%s", d->name);
	snprintf(path, sizeof(path), "class/infiniband/%s/device", d->name);
	ret = fp_sysfs_symlink(w, target, path);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "bus/ibvct/drivers/%s/bind", kdriver);
	ret = fp_put(w, path, "%s", "");
	if (!ret) {
		snprintf(path, sizeof(path), "devices/ibvct/%s/driver", d->name);
		snprintf(target, sizeof(target), "../../../bus/ibvct/drivers/%s", kdriver);
		ret = fp_sysfs_symlink(w, target, path);
	}
uverbs:
	if (!ret) {
		snprintf(path, sizeof(path), "class/infiniband_verbs/uverbs%d/ibdev", idx);
		ret = fp_put(w, path, "%s\n", d->name);
	}
	if (!ret) {
		snprintf(path, sizeof(path), "class/infiniband_verbs/uverbs%d/abi_version", idx);
		ret = fp_put(w, path, "1\n");
	}
	if (!ret) {
		snprintf(path, sizeof(path), "class/infiniband_verbs/uverbs%d/dev", idx);
		ret = fp_put(w, path, "231:%d\n", 192 + idx);
	}
	if (!ret && !soft && kdriver[0]) {
		snprintf(target, sizeof(target), "../../../devices/ibvct/%s", d->name);
		snprintf(path, sizeof(path), "class/infiniband_verbs/uverbs%d/device", idx);
		ret = fp_sysfs_symlink(w, target, path);
	}
	for (i = 1; !ret && i <= d->nports; i++)
		ret = fp_sysfs_port(w, d, i, !strcmp(kdriver, "rdma_rxe"), counters);
	return ret;
}

int fp_sysfs_write(const struct fp_script *s, const char *root, char *err, size_t errlen)
{
	struct fp_sysfs w = { .root = root, .err = err, .errlen = errlen };
	int i, ret;

	ret = fp_mkdirs(&w, root);
	if (!ret)
		ret = fp_put(&w, "class/infiniband_verbs/abi_version", "6\n");
	for (i = 0; !ret && i < s->ndevs; i++)
		ret = fp_sysfs_dev(&w, &s->dev[i], i, fp_profile_kdriver(s->profile),
				   s->profile == FP_PROF_RXE, fp_profile_hw_counters(s->profile));
	return ret;
}
