/* SPDX-License-Identifier: MIT */
/*
 * Provider loading and device discovery, the 1.1 way: providers come from
 * RDMAV_DRIVERS and the driver directory and register from their
 * constructors; devices come from $SYSFS_PATH/class/infiniband_verbs.
 * Owns the registered-driver list, the process-wide device records (kept
 * for the life of the process, released by a destructor) and the sysfs
 * helpers and device-naming verbs.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ri.h"

#ifndef IBVCT_DRIVER_DIR
#define IBVCT_DRIVER_DIR "/usr/lib/ibvct"
#endif

struct ri_driver {
	char name[IBV_SYSFS_NAME_MAX];
	enum ri_drv_kind kind;
	ibv_driver_init_func legacy_init;
	verbs_driver_init_func ext_init;
	struct ri_driver *next;
};

static pthread_mutex_t ri_drv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ri_driver *ri_drivers;		/* registration order */
static pthread_once_t ri_load_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t ri_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ri_device *ri_devices;
static bool ri_probed;
static int ri_probe_err;			/* errno of a failed probe */

static char ri_sysfs_root[IBV_SYSFS_PATH_MAX];

/* ------------------------------------------------------------------ */
/* sysfs helpers                                                        */

static pthread_once_t ri_root_once = PTHREAD_ONCE_INIT;

static void ri_root_init(void)
{
	const char *env = getenv("SYSFS_PATH");
	size_t len;

	if (!ri__fmt(ri_sysfs_root, sizeof(ri_sysfs_root), "%s",
		     env && *env ? env : "/sys"))
		ri__fmt(ri_sysfs_root, sizeof(ri_sysfs_root), "/sys");
	/* rdma-core strips trailing slashes the same way */
	len = strlen(ri_sysfs_root);
	while (len > 1 && ri_sysfs_root[len - 1] == '/')
		ri_sysfs_root[--len] = '\0';
}

/* Read once: every path of the process uses the same root. */
const char *ri__sysfs_root(void)
{
	pthread_once(&ri_root_once, ri_root_init);
	return ri_sysfs_root;
}

/* snprintf that reports truncation (paths must not be cut silently). */
bool ri__fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

/* Reads a small file; strips one trailing newline. Returns length or -1. */
int ri__read_file(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	if (!size)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if ((size_t)len < size)
		buf[len] = '\0';
	return (int)len;
}

RI_EXPORT int ibv_get_sysfs_path(char *buf, size_t size)
{
	return ri__fmt(buf, size, "%s", ri__sysfs_root()) ? 0 : -1;
}

RI_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file,
				  char *buf, size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];

	if (!ri__fmt(path, sizeof(path), "%s/%s", dir, file))
		return -1;
	return ri__read_file(path, buf, size);
}

RI_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
					const char *ibdev_path,
					const char *fnfmt, ...)
{
	char rel[IBV_SYSFS_PATH_MAX];
	char path[IBV_SYSFS_PATH_MAX * 2];
	va_list ap;

	va_start(ap, fnfmt);
	vsnprintf(rel, sizeof(rel), fnfmt, ap);
	va_end(ap);
	if (!ri__fmt(path, sizeof(path), "%s/%s", ibdev_path, rel))
		return -1;
	return ri__read_file(path, buf, size);
}

/* ------------------------------------------------------------------ */
/* Driver registration and loading                                      */

static void ri_add_driver(const char *name, enum ri_drv_kind kind,
			  ibv_driver_init_func legacy, verbs_driver_init_func ext)
{
	struct ri_driver *drv = calloc(1, sizeof(*drv)), **tail;

	if (!drv) {
		fprintf(stderr, "libibverbs: no memory to register driver %s\n",
			name);
		return;
	}
	ri__fmt(drv->name, sizeof(drv->name), "%s", name ? name : "");
	drv->kind = kind;
	drv->legacy_init = legacy;
	drv->ext_init = ext;
	pthread_mutex_lock(&ri_drv_lock);
	for (tail = &ri_drivers; *tail; tail = &(*tail)->next)
		;
	*tail = drv;
	pthread_mutex_unlock(&ri_drv_lock);
}

RI_EXPORT void ibv_register_driver(const char *name,
				   ibv_driver_init_func init_func)
{
	if (init_func)
		ri_add_driver(name, RI_DRV_LEGACY, init_func, NULL);
}

RI_EXPORT void verbs_register_driver(const char *name,
				     verbs_driver_init_func init_func)
{
	if (init_func)
		ri_add_driver(name, RI_DRV_EXTENDED, NULL, init_func);
}

static const char *ri_driver_dir(void)
{
	const char *env = getenv("IBVCT_DRIVER_DIR");

	return env && *env ? env : IBVCT_DRIVER_DIR;
}

static void ri_dlopen(const char *path)
{
	char why[256];

	/* what the release's loader would refuse (ibvct-release.def
	 * PRIVATE_ABI_34) */
	if (ri__release_provider_ok(path, why, sizeof(why))) {
		fprintf(stderr, "libibverbs: Warning: couldn't load driver '%s': %s\n", path, why);
		return;
	}
	/* Handles stay open for the process: providers' code must outlive
	 * every context and the exit-time device release. */
	if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
		fprintf(stderr, "libibverbs: Warning: couldn't load driver '%s': %s\n",
			path, dlerror());
}

static void ri_load_named(const char *name)
{
	char path[IBV_SYSFS_PATH_MAX * 2];

	if (strchr(name, '/')) {
		ri_dlopen(name);
		return;
	}
	ri__fmt(path, sizeof(path), "%s/lib%s.so", ri_driver_dir(), name);
	ri_dlopen(path);
}

static int ri_so_filter(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return len > 3 && !strcmp(d->d_name + len - 3, ".so");
}

static void ri_load_drivers(void)
{
	const char *env = getenv("RDMAV_DRIVERS");
	struct dirent **names;
	int n, i;

	if (env && *env) {
		char *list = strdup(env), *save = NULL, *tok;

		for (tok = list ? strtok_r(list, ":", &save) : NULL; tok;
		     tok = strtok_r(NULL, ":", &save))
			ri_load_named(tok);
		free(list);
	}

	/* sorted, so the load order (and so the probe order) is stable */
	n = scandir(ri_driver_dir(), &names, ri_so_filter, alphasort);
	for (i = 0; i < n; i++) {
		char path[IBV_SYSFS_PATH_MAX * 2];

		ri__fmt(path, sizeof(path), "%s/%s", ri_driver_dir(),
			 names[i]->d_name);
		ri_dlopen(path);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

/* ------------------------------------------------------------------ */
/* Discovery                                                            */

static enum ibv_transport_type ri_transport(enum ibv_node_type t)
{
	switch (t) {
	case IBV_NODE_CA:
	case IBV_NODE_SWITCH:
	case IBV_NODE_ROUTER:
		return IBV_TRANSPORT_IB;
	case IBV_NODE_RNIC:
		return IBV_TRANSPORT_IWARP;
	case IBV_NODE_USNIC:
		return IBV_TRANSPORT_USNIC;
	case IBV_NODE_USNIC_UDP:
		return IBV_TRANSPORT_USNIC_UDP;
	case IBV_NODE_UNSPECIFIED:
		return IBV_TRANSPORT_UNSPECIFIED;
	default:
		return IBV_TRANSPORT_UNKNOWN;
	}
}

/* Offer one uverbs device to each driver; first taker wins. */
static struct ri_device *ri_probe_one(const char *dev_name, int index)
{
	char dev_path[IBV_SYSFS_PATH_MAX], ibdev[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX], buf[64];
	struct ibv_device *dev = NULL;
	struct ri_device *rdev;
	struct ri_driver *drv;
	enum ri_drv_kind kind = RI_DRV_LEGACY;
	int abi = 0;

	if (!ri__fmt(dev_path, sizeof(dev_path), "%s/class/infiniband_verbs/%s",
		     ri__sysfs_root(), dev_name) ||
	    strlen(dev_name) >= IBV_SYSFS_NAME_MAX ||
	    ibv_read_sysfs_file(dev_path, "ibdev", ibdev, sizeof(ibdev)) <= 0)
		return NULL;
	if (ibv_read_sysfs_file(dev_path, "abi_version", buf, sizeof(buf)) > 0 ||
	    ibv_read_sysfs_file(dev_path, "../abi_version", buf, sizeof(buf)) > 0)
		abi = atoi(buf);
	ri__fmt(ibdev_path, sizeof(ibdev_path), "%s/class/infiniband/%s",
		 ri__sysfs_root(), ibdev);

	pthread_mutex_lock(&ri_drv_lock);
	for (drv = ri_drivers; drv && !dev; drv = drv->next) {
		kind = drv->kind;
		if (drv->kind == RI_DRV_LEGACY) {
			dev = drv->legacy_init(dev_path, abi);
		} else {
			struct verbs_device *vdev = drv->ext_init(dev_path, abi);

			dev = vdev ? &vdev->device : NULL;
		}
	}
	pthread_mutex_unlock(&ri_drv_lock);
	if (!dev)
		return NULL;

	rdev = calloc(1, sizeof(*rdev));
	if (!rdev) {
		/* cannot keep it: give an extended device back */
		if (kind == RI_DRV_EXTENDED) {
			struct verbs_device *vdev = (struct verbs_device *)dev;

			if (vdev->uninit_device)
				vdev->uninit_device(vdev);
		}
		return NULL;
	}
	rdev->dev = dev;
	rdev->kind = kind;
	rdev->uverbs_index = index;
	rdev->ibdev_index = index;
	if (kind == RI_DRV_EXTENDED) {
		/* the marker verbs_get_device() tests (COMPAT-06) */
		ibv_legacy_device_ops(dev)->alloc_context = NULL;
		ibv_legacy_device_ops(dev)->free_context = NULL;
	}
	ri__fmt(dev->name, sizeof(dev->name), "%s", ibdev);
	ri__fmt(dev->dev_name, sizeof(dev->dev_name), "%s", dev_name);
	ri__fmt(dev->dev_path, sizeof(dev->dev_path), "%s", dev_path);
	ri__fmt(dev->ibdev_path, sizeof(dev->ibdev_path), "%s", ibdev_path);
	if (ibv_read_sysfs_file(ibdev_path, "node_type", buf, sizeof(buf)) > 0)
		dev->node_type = (enum ibv_node_type)atoi(buf);
	dev->transport_type = ri_transport(dev->node_type);
	return rdev;
}

static int ri_uverbs_filter(const struct dirent *d)
{
	return !strncmp(d->d_name, "uverbs", 6) && d->d_name[6] >= '0' &&
	       d->d_name[6] <= '9';
}

static int ri_uverbs_cmp(const struct dirent **a, const struct dirent **b)
{
	return atoi((*a)->d_name + 6) - atoi((*b)->d_name + 6);
}

/* Called with ri_dev_lock held. */
static void ri_probe(void)
{
	char class_dir[IBV_SYSFS_PATH_MAX];
	struct ri_device **tail = &ri_devices;
	struct dirent **names;
	int n, i;

	ri__fmt(class_dir, sizeof(class_dir), "%s/class/infiniband_verbs",
		 ri__sysfs_root());
	n = scandir(class_dir, &names, ri_uverbs_filter, ri_uverbs_cmp);
	if (n < 0) {
		ri_probe_err = ENOSYS;	/* no uverbs at all, as rdma-core says */
		return;
	}
	for (i = 0; i < n; i++) {
		struct ri_device *rdev = ri_probe_one(names[i]->d_name,
						      atoi(names[i]->d_name + 6));

		if (rdev) {
			*tail = rdev;
			tail = &rdev->next;
		}
		free(names[i]);
	}
	free(names);
}

struct ri_device *ri__device_lookup(struct ibv_device *dev)
{
	struct ri_device *rdev;

	pthread_mutex_lock(&ri_dev_lock);
	for (rdev = ri_devices; rdev && rdev->dev != dev; rdev = rdev->next)
		;
	pthread_mutex_unlock(&ri_dev_lock);
	return rdev;
}

#undef ibv_get_device_list
__typeof__(ibv_get_device_list) ri_v11_get_device_list;
RI_EXPORT struct ibv_device **ri_v11_get_device_list(int *num_devices)
{
	struct ibv_device **list = NULL;
	struct ri_device *rdev;
	int n = 0;

	pthread_once(&ri_load_once, ri_load_drivers);
	pthread_mutex_lock(&ri_dev_lock);
	if (!ri_probed) {
		ri__fork_env();	/* fork.c: RDMAV_FORK_SAFE, IBV_FORK_SAFE */
		ri_probe();
		ri_probed = true;
	}
	if (ri_probe_err) {
		errno = ri_probe_err;
		goto out_unlock;
	}
	for (rdev = ri_devices; rdev; rdev = rdev->next)
		n++;
	list = calloc(n + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		goto out_unlock;
	}
	n = 0;
	for (rdev = ri_devices; rdev; rdev = rdev->next)
		list[n++] = rdev->dev;
out_unlock:
	pthread_mutex_unlock(&ri_dev_lock);
	if (num_devices)
		*num_devices = list ? n : 0;
	return list;
}

__typeof__(ibv_free_device_list) ri_v11_free_device_list;
RI_EXPORT void ri_v11_free_device_list(struct ibv_device **list)
{
	/* devices themselves live until exit: open contexts refer to them */
	free(list);
}

__typeof__(ibv_get_device_name) ri_v11_get_device_name;
RI_EXPORT const char *ri_v11_get_device_name(struct ibv_device *device)
{
	if (!device) {
		errno = EINVAL;
		return NULL;
	}
	return device->name;
}

__typeof__(ibv_get_device_guid) ri_v11_get_device_guid;
RI_EXPORT __be64 ri_v11_get_device_guid(struct ibv_device *device)
{
	char buf[64];
	unsigned int part[4];
	uint64_t guid = 0;
	int i;

	if (!device ||
	    ibv_read_sysfs_file(device->ibdev_path, "node_guid", buf,
				sizeof(buf)) <= 0 ||
	    sscanf(buf, "%x:%x:%x:%x", &part[0], &part[1], &part[2],
		   &part[3]) != 4)
		return 0;
	for (i = 0; i < 4; i++)
		guid = (guid << 16) | (part[i] & 0xffff);
	return htobe64(guid);
}

RI_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	struct ri_device *rdev = device ? ri__device_lookup(device) : NULL;

	return rdev ? rdev->ibdev_index : -1;
}

/* Exit-time release, so valgrind and LSan see nothing left. */
__attribute__((destructor)) static void ri_release_all(void)
{
	struct ri_device *rdev, *next;
	struct ri_driver *drv, *dnext;

	struct ri_device **keep = &ri_devices;

	pthread_mutex_lock(&ri_dev_lock);
	for (rdev = ri_devices; rdev; rdev = next) {
		next = rdev->next;
		if (rdev->kind == RI_DRV_LEGACY) {
			/* 1.1 had no way to release a device: it stays with its
			 * provider, reachable from here */
			*keep = rdev;
			keep = &rdev->next;
			continue;
		}
		if (((struct verbs_device *)rdev->dev)->uninit_device)
			((struct verbs_device *)rdev->dev)->uninit_device(
				(struct verbs_device *)rdev->dev);
		free(rdev);
	}
	*keep = NULL;
	pthread_mutex_unlock(&ri_dev_lock);
	pthread_mutex_lock(&ri_drv_lock);
	for (drv = ri_drivers; drv; drv = dnext) {
		dnext = drv->next;
		free(drv);
	}
	ri_drivers = NULL;
	pthread_mutex_unlock(&ri_drv_lock);
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_free_device_list, ibv_free_device_list@@IBVERBS_1.1);
RI_SYMVER(ri_v11_get_device_guid, ibv_get_device_guid@@IBVERBS_1.1);
RI_SYMVER(ri_v11_get_device_list, ibv_get_device_list@@IBVERBS_1.1);
RI_SYMVER(ri_v11_get_device_name, ibv_get_device_name@@IBVERBS_1.1);
