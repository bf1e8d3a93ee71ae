/* SPDX-License-Identifier: MIT */
/*
 * Opening and closing a device: ibv_open_device and ibv_close_device. The
 * core allocates the verbs_context (context.c) whatever the provider; an
 * extended provider fills it with its init_context, a legacy one is put
 * inside it by the compat layer (compat.c); then the app-visible slots are
 * installed. This file sits above both: neither calls back up into it.
 */
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "fk_ufile.h"
#include "ri.h"

static int ri_init_extended(struct verbs_context *vctx)
{
	struct verbs_device *vdev = (struct verbs_device *)vctx->priv->rdev->dev;

	if (!vdev->init_context)
		return EOPNOTSUPP;
	return vdev->init_context(vdev, &vctx->context, -1);
}

__typeof__(ibv_open_device) ri_v11_open_device;
RI_EXPORT struct ibv_context *ri_v11_open_device(struct ibv_device *device)
{
	struct verbs_context *vctx;
	struct ri_device *rdev;
	bool legacy;
	int ret;

	if (!device) {
		errno = EINVAL;
		goto err;
	}
	rdev = ri__device_lookup(device);
	if (!rdev) {
		errno = ENODEV;
		goto err;
	}
	legacy = rdev->kind == RI_DRV_LEGACY;
	/* a legacy provider allocates its own context: no bytes for it here */
	vctx = ri__alloc_vctx(legacy ? 0 :
			      ((struct verbs_device *)rdev->dev)->size_of_context);
	if (!vctx)
		goto err;
	vctx->priv->rdev = rdev;
	vctx->context.device = rdev->dev;
	ret = legacy ? ri__compat_init_context(vctx) : ri_init_extended(vctx);
	if (ret) {
		errno = ret;
		goto err_free_vctx;
	}
	ri__install_lib_ops(vctx);
	return &vctx->context;

err_free_vctx:
	ri__free_vctx(vctx);
err:
	return NULL;
}

__typeof__(ibv_close_device) ri_v11_close_device;
RI_EXPORT int ri_v11_close_device(struct ibv_context *context)
{
	struct verbs_context *vctx;
	struct verbs_device *vdev;

	if (!context)
		return EINVAL;
	vctx = ri__vctx(context);
	/* the provider's part; for a legacy provider the compat layer's
	 * free_context releases the context the provider allocated */
	vctx->priv->ops.free_context(context);
	if (!vctx->priv->legacy) {
		vdev = (struct verbs_device *)vctx->priv->rdev->dev;
		if (vdev->uninit_context)
			vdev->uninit_context(vdev, context);
	}
	ri__free_vctx(vctx);
	return 0;
}

/*
 * The device a file belongs to. libibverbs reads a uverbs file's character
 * device number and finds the device with it in sysfs (rdma-core v44.0
 * libibverbs/device.c:386-400); ibvct's files are sockets of the fake
 * kernel, whose end answers getpeername() with an abstract name: its
 * interface's FK_UFILE_PREFIX, then the device's name (uapi/
 * fk_ufile.h, the one header of the fake kernel this library includes).
 * 0 and the name, or -1: not such a file.
 */
static int ri_file_device(int fd, char *name, size_t len)
{
	const size_t plen = sizeof(FK_UFILE_PREFIX) - 1;
	struct sockaddr_un sa;
	socklen_t sl = sizeof(sa);
	const char *p, *q, *end;

	memset(&sa, 0, sizeof(sa));
	if (getpeername(fd, (struct sockaddr *)&sa, &sl) || sa.sun_family != AF_UNIX ||
	    sl <= offsetof(struct sockaddr_un, sun_path) + 1 + plen || sa.sun_path[0] != '\0' ||
	    memcmp(sa.sun_path + 1, FK_UFILE_PREFIX, plen))
		return -1;
	p = sa.sun_path + 1 + plen;
	end = (const char *)&sa + sl;
	q = memchr(p, ':', (size_t)(end - p));
	if (!q || q == p || (size_t)(q - p) >= len)
		return -1;
	memcpy(name, p, (size_t)(q - p));
	name[q - p] = '\0';
	return 0;
}

/*
 * ibv_import_device (rdma-core v44.0 libibverbs/device.c:370): a second
 * context on the file cmd_fd names. An fd fstat() fails on, or that is not
 * a verbs file, is EINVAL (device.c:380: not a character device); a verbs
 * file of no device in the list is ENODEV (device.c:397). The device's
 * driver then makes the context; a driver with no import op (a legacy one,
 * or an extended one without it) answers EOPNOTSUPP (device.c:404). The
 * context then owns cmd_fd and closes it at ibv_close_device, as
 * rdma-core's uninit does.
 */
RI_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_device **list;
	struct ri_device *rdev = NULL;
	struct verbs_device *vdev = NULL;
	struct verbs_context *vctx;
	char name[IBV_SYSFS_NAME_MAX];
	struct stat st;
	int i, err;

	if (fstat(cmd_fd, &st)) {
		errno = EINVAL;
		return NULL;
	}
	if (S_ISCHR(st.st_mode)) {
		errno = ENODEV;
		return NULL;
	}
	if (ri_file_device(cmd_fd, name, sizeof(name))) {
		errno = EINVAL;
		return NULL;
	}
	list = ibv_get_device_list(NULL);
	if (!list) {
		errno = ENODEV;
		return NULL;
	}
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	err = ENODEV;
	if (list[i]) {
		rdev = ri__device_lookup(list[i]);
		vdev = (struct verbs_device *)list[i];
		err = EOPNOTSUPP;
	}
	if (!rdev || rdev->kind == RI_DRV_LEGACY ||
	    !vext_field_avail(struct verbs_device, import_context, vdev->sz) ||
	    !vdev->import_context)
		goto out;
	vctx = ri__alloc_vctx(vdev->size_of_context);
	if (!vctx) {
		err = ENOMEM;
		goto out;
	}
	vctx->priv->rdev = rdev;
	vctx->context.device = list[i];
	err = vdev->import_context(vdev, &vctx->context, cmd_fd);
	if (!err) {
		ri__install_lib_ops(vctx);
		ibv_free_device_list(list);
		return &vctx->context;
	}
	ri__free_vctx(vctx);
out:
	ibv_free_device_list(list);
	errno = err;
	return NULL;
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_close_device, ibv_close_device@@IBVERBS_1.1);
RI_SYMVER(ri_v11_open_device, ibv_open_device@@IBVERBS_1.1);
