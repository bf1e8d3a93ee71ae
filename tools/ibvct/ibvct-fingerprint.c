/* SPDX-License-Identifier: MIT */
/*
 * ibvct-fingerprint: prints what a conformance run ran on, as key=value
 * lines for the report's environment fingerprint: the libibverbs actually
 * loaded (path, real file, soname), the provider objects it loaded, the
 * device with every ibv_query_device attribute and its ports.
 *
 *   ibvct-fingerprint [DEVICE]      (default: $IBVCT_DEVICE, else the first
 *                                    with an active port, else the first)
 *
 * Built once against <infiniband/verbs.h> and linked to libibverbs.so.1
 * without an rpath: run directly it fingerprints the system's rdma-core, run
 * under ibvct-run the reference target (the same binary on both is the
 * point). Without a name it picks the device the suites pick (testkit/runner/th.c,
 * th_probe_child), so that `ibvct conformance --target system` names the
 * device tested. Exits 1 when the device cannot be opened; what it learnt
 * before that is still printed, with error=... lines saying why.
 */
#include <dlfcn.h>
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* Values that come from outside (fw_ver, paths) must stay on one line. */
static void put_str(const char *key, const char *val)
{
	printf("%s=", key);
	for (; val && *val; val++)
		putchar(*val == '\n' || *val == '\r' ? ' ' : *val);
	putchar('\n');
}

struct soname_query {
	const char *path;
	char soname[256];
};

/* DT_SONAME of the loaded object whose name is q->path. */
static int find_soname(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct soname_query *q = arg;
	const ElfW(Dyn) *dyn = NULL;
	const char *strtab = NULL;
	ElfW(Xword) soname_off = 0;
	int have_soname = 0;

	if (!info->dlpi_name || strcmp(info->dlpi_name, q->path) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)dyn->d_un.d_ptr; /* relocated by ld.so */
		else if (dyn->d_tag == DT_SONAME) {
			soname_off = dyn->d_un.d_val;
			have_soname = 1;
		}
	}
	if (strtab && have_soname)
		snprintf(q->soname, sizeof(q->soname), "%s", strtab + soname_off);
	return 1;
}

/* Loaded objects that look like verbs providers: rdma-core's
 * lib<name>-rdmav<N>.so in its driver dir, or ibvct's fake plugin. */
static int list_providers(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *n = arg;
	const char *name = info->dlpi_name, *base;
	char key[32];

	if (!name || !*name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!strstr(base, "-rdmav") && !strstr(name, "/libibverbs/") &&
	    strncmp(base, "libibvct-", 9) != 0)
		return 0;
	snprintf(key, sizeof(key), "provider.%d", (*n)++);
	put_str(key, name);
	return 0;
}

static void print_library(void)
{
	struct soname_query q = { 0 };
	char real[PATH_MAX];
	Dl_info dli;

	/* The library that defines the symbol this program calls. */
	if (!dladdr((void *)ibv_get_device_list, &dli) || !dli.dli_fname) {
		put_str("error", "dladdr(ibv_get_device_list) failed");
		return;
	}
	put_str("library.path", dli.dli_fname);
	if (realpath(dli.dli_fname, real))
		put_str("library.realpath", real);
	q.path = dli.dli_fname;
	dl_iterate_phdr(find_soname, &q);
	put_str("library.soname", q.soname[0] ? q.soname : "unknown");
}

static void print_guid(const char *key, __be64 guid)
{
	uint64_t g = be64toh(guid);

	printf("%s=%04x:%04x:%04x:%04x\n", key, (unsigned)(g >> 48) & 0xffff,
	       (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
	       (unsigned)g & 0xffff);
}

/* Capability bits by name: keep in enum order. */
static const struct {
	unsigned int bit;
	const char *name;
} cap_names[] = {
	{ IBV_DEVICE_RESIZE_MAX_WR, "resize_max_wr" },
	{ IBV_DEVICE_BAD_PKEY_CNTR, "bad_pkey_cntr" },
	{ IBV_DEVICE_BAD_QKEY_CNTR, "bad_qkey_cntr" },
	{ IBV_DEVICE_RAW_MULTI, "raw_multi" },
	{ IBV_DEVICE_AUTO_PATH_MIG, "auto_path_mig" },
	{ IBV_DEVICE_CHANGE_PHY_PORT, "change_phy_port" },
	{ IBV_DEVICE_UD_AV_PORT_ENFORCE, "ud_av_port_enforce" },
	{ IBV_DEVICE_CURR_QP_STATE_MOD, "curr_qp_state_mod" },
	{ IBV_DEVICE_SHUTDOWN_PORT, "shutdown_port" },
	{ IBV_DEVICE_INIT_TYPE, "init_type" },
	{ IBV_DEVICE_PORT_ACTIVE_EVENT, "port_active_event" },
	{ IBV_DEVICE_SYS_IMAGE_GUID, "sys_image_guid" },
	{ IBV_DEVICE_RC_RNR_NAK_GEN, "rc_rnr_nak_gen" },
	{ IBV_DEVICE_SRQ_RESIZE, "srq_resize" },
	{ IBV_DEVICE_N_NOTIFY_CQ, "n_notify_cq" },
	{ IBV_DEVICE_MEM_WINDOW, "mem_window" },
	{ IBV_DEVICE_UD_IP_CSUM, "ud_ip_csum" },
	{ IBV_DEVICE_XRC, "xrc" },
	{ IBV_DEVICE_MEM_MGT_EXTENSIONS, "mem_mgt_extensions" },
	{ IBV_DEVICE_MEM_WINDOW_TYPE_2A, "mem_window_type_2a" },
	{ IBV_DEVICE_MEM_WINDOW_TYPE_2B, "mem_window_type_2b" },
	{ IBV_DEVICE_RC_IP_CSUM, "rc_ip_csum" },
	{ IBV_DEVICE_RAW_IP_CSUM, "raw_ip_csum" },
	{ IBV_DEVICE_MANAGED_FLOW_STEERING, "managed_flow_steering" },
};

static void print_attr(const struct ibv_device_attr *a)
{
	put_str("attr.fw_ver", a->fw_ver);
	print_guid("attr.node_guid", a->node_guid);
	print_guid("attr.sys_image_guid", a->sys_image_guid);
	printf("attr.max_mr_size=%llu\n", (unsigned long long)a->max_mr_size);
	printf("attr.page_size_cap=0x%llx\n", (unsigned long long)a->page_size_cap);
	printf("attr.vendor_id=0x%x\n", a->vendor_id);
	printf("attr.vendor_part_id=%u\n", a->vendor_part_id);
	printf("attr.hw_ver=0x%x\n", a->hw_ver);
	printf("attr.device_cap_flags=0x%08x\n", a->device_cap_flags);
	printf("attr.device_cap_flags.names=");
	for (size_t i = 0, n = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (a->device_cap_flags & cap_names[i].bit)
			printf("%s%s", n++ ? " " : "", cap_names[i].name);
	printf("\n");
	printf("attr.xrc=%s\n", a->device_cap_flags & IBV_DEVICE_XRC ? "yes" : "no");
	printf("attr.atomic_cap=%d\n", (int)a->atomic_cap);
#define INT_ATTR(f) printf("attr." #f "=%d\n", (int)a->f)
	INT_ATTR(max_qp);
	INT_ATTR(max_qp_wr);
	INT_ATTR(max_sge);
	INT_ATTR(max_sge_rd);
	INT_ATTR(max_cq);
	INT_ATTR(max_cqe);
	INT_ATTR(max_mr);
	INT_ATTR(max_pd);
	INT_ATTR(max_qp_rd_atom);
	INT_ATTR(max_ee_rd_atom);
	INT_ATTR(max_res_rd_atom);
	INT_ATTR(max_qp_init_rd_atom);
	INT_ATTR(max_ee_init_rd_atom);
	INT_ATTR(max_ee);
	INT_ATTR(max_rdd);
	INT_ATTR(max_mw);
	INT_ATTR(max_raw_ipv6_qp);
	INT_ATTR(max_raw_ethy_qp);
	INT_ATTR(max_mcast_grp);
	INT_ATTR(max_mcast_qp_attach);
	INT_ATTR(max_total_mcast_qp_attach);
	INT_ATTR(max_ah);
	INT_ATTR(max_fmr);
	INT_ATTR(max_map_per_fmr);
	INT_ATTR(max_srq);
	INT_ATTR(max_srq_wr);
	INT_ATTR(max_srq_sge);
	INT_ATTR(max_pkeys);
	INT_ATTR(local_ca_ack_delay);
	INT_ATTR(phys_port_cnt);
#undef INT_ATTR
}

static const char *link_layer_name(uint8_t ll)
{
	switch (ll) {
	case IBV_LINK_LAYER_INFINIBAND: return "infiniband";
	case IBV_LINK_LAYER_ETHERNET: return "ethernet";
	default: return "unspecified";
	}
}

static void print_ports(struct ibv_context *ctx, int nports)
{
	for (int p = 1; p <= nports; p++) {
		struct ibv_port_attr pa;
		int rc;

		memset(&pa, 0, sizeof(pa));
		rc = ibv_query_port(ctx, p, &pa);
		if (rc) {
			printf("port.%d.error=ibv_query_port: %s\n", p, strerror(rc));
			continue;
		}
		printf("port.%d.state=%s\n", p, ibv_port_state_str(pa.state));
		printf("port.%d.link_layer=%s\n", p, link_layer_name(pa.link_layer));
		printf("port.%d.active_mtu=%d\n", p, 128 << pa.active_mtu);
		printf("port.%d.lid=%u\n", p, pa.lid);
		printf("port.%d.gid_tbl_len=%d\n", p, pa.gid_tbl_len);
	}
}

/* The kernel driver behind a device, from its sysfs node (best effort: the
 * reference target's fake sysfs has none). */
static void print_driver(struct ibv_device *dev)
{
	char link[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(link, sizeof(link), "%s/device/driver", dev->ibdev_path);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	put_str("device.kernel_driver", base ? base + 1 : target);
}

/* The device opens and one of its ports is active. */
static int has_active_port(struct ibv_device *d)
{
	struct ibv_context *c = ibv_open_device(d);
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int found = 0;

	if (!c)
		return 0;
	if (!ibv_query_device(c, &da))
		for (int p = 1; p <= da.phys_port_cnt && !found; p++)
			found = !ibv_query_port(c, (uint8_t)p, &pa) && pa.state == IBV_PORT_ACTIVE;
	ibv_close_device(c);
	return found;
}

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : getenv("IBVCT_DEVICE");
	struct ibv_device **list = NULL, *dev = NULL;
	struct ibv_device_attr attr;
	struct ibv_context *ctx = NULL;
	struct utsname u;
	int n = 0, nprov = 0, ret = 1;

	if (uname(&u) == 0) {
		put_str("kernel", u.release);
		put_str("machine", u.machine);
	}
	print_library();
	list = ibv_get_device_list(&n);
	if (!list) {
		printf("error=ibv_get_device_list: %s\n", strerror(errno));
		goto out;
	}
	printf("devices=");
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", ibv_get_device_name(list[i]));
	printf("\n");
	for (int i = 0; i < n && !dev; i++)
		if (want && *want ? !strcmp(want, ibv_get_device_name(list[i])) : has_active_port(list[i]))
			dev = list[i];
	if (!dev && (!want || !*want) && n)
		dev = list[0];
	if (!dev) {
		put_str("error", n ? "device not found" : "no RDMA device");
		goto err_free_list;
	}
	put_str("device", ibv_get_device_name(dev));
	printf("device.node_type=%s\n", ibv_node_type_str(dev->node_type));
	print_guid("device.guid", ibv_get_device_guid(dev));
	put_str("device.ibdev_path", dev->ibdev_path);
	print_driver(dev);
	ctx = ibv_open_device(dev);
	if (!ctx) {
		printf("error=ibv_open_device: %s\n", strerror(errno));
		goto err_free_list;
	}
	/* Providers are loaded by now (at the latest by the open). */
	dl_iterate_phdr(list_providers, &nprov);
	if (!nprov)
		put_str("provider.0", "none found among loaded objects");
	memset(&attr, 0, sizeof(attr));
	errno = ibv_query_device(ctx, &attr);
	if (errno) {
		printf("error=ibv_query_device: %s\n", strerror(errno));
		goto err_close;
	}
	print_attr(&attr);
	print_ports(ctx, attr.phys_port_cnt);
	ret = 0;
err_close:
	ibv_close_device(ctx);
err_free_list:
	ibv_free_device_list(list);
out:
	return ret;
}
