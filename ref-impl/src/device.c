/* SPDX-License-Identifier: MIT */
/*
 * Opening and closing a device: ibv_open_device and ibv_close_device. The
 * core allocates the verbs_context (context.c) whatever the provider; an
 * extended provider fills it with its init_context, a legacy one is put
 * inside it by the compat layer (compat.c); then the app-visible slots are
 * installed. This file sits above both: neither calls back up into it.
 */
#include <sys/stat.h>

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
 * ibv_import_device (rdma-core v44.0 libibverbs/device.c:370): a second
 * context on the file cmd_fd names. An fd fstat() fails on, or that is not
 * a character device, is EINVAL (device.c:380); a character device that is
 * none of the devices' ENODEV (device.c:397: no ibvct device has one). The
 * library finds the device by the character device's number; ibvct's
 * files are the fake kernel's, which only a provider knows, so each
 * extended device with an import_context op is asked in list order until
 * one takes it (ENODEV, EINVAL: not its file). No device takes it: EINVAL.
 * A driver with no import op answers EOPNOTSUPP for its own file
 * (device.c:404); the context then owns cmd_fd and closes it at
 * ibv_close_device, as rdma-core's uninit does.
 */
RI_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_device **list;
	struct stat st;
	int i, err = EINVAL;

	if (fstat(cmd_fd, &st)) {
		errno = EINVAL;
		return NULL;
	}
	if (S_ISCHR(st.st_mode)) {
		errno = ENODEV;
		return NULL;
	}
	list = ibv_get_device_list(NULL);
	if (!list) {
		errno = ENODEV;
		return NULL;
	}
	for (i = 0; list[i]; i++) {
		struct ri_device *rdev = ri__device_lookup(list[i]);
		struct verbs_device *vdev = (struct verbs_device *)list[i];
		struct verbs_context *vctx;
		int ret;

		if (!rdev || rdev->kind == RI_DRV_LEGACY ||
		    !vext_field_avail(struct verbs_device, import_context, vdev->sz) ||
		    !vdev->import_context)
			continue;
		vctx = ri__alloc_vctx(vdev->size_of_context);
		if (!vctx) {
			err = ENOMEM;
			break;
		}
		vctx->priv->rdev = rdev;
		vctx->context.device = list[i];
		ret = vdev->import_context(vdev, &vctx->context, cmd_fd);
		if (!ret) {
			ri__install_lib_ops(vctx);
			ibv_free_device_list(list);
			return &vctx->context;
		}
		ri__free_vctx(vctx);
		if (ret != ENODEV && ret != EINVAL) {
			err = ret;
			break;
		}
	}
	ibv_free_device_list(list);
	errno = err;
	return NULL;
}

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_close_device, ibv_close_device@@IBVERBS_1.1);
RI_SYMVER(ri_v11_open_device, ibv_open_device@@IBVERBS_1.1);
