/* SPDX-License-Identifier: MIT */
/*
 * Opening and closing a device: ibv_open_device and ibv_close_device. The
 * core allocates the verbs_context (context.c) whatever the provider; an
 * extended provider fills it with its init_context, a legacy one is put
 * inside it by the compat layer (compat.c); then the app-visible slots are
 * installed. This file sits above both: neither calls back up into it.
 */
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

/* Defaults of the dual 1.0/1.1 verbs (the 1.0 variants are in compat10.c). */
RI_SYMVER(ri_v11_close_device, ibv_close_device@@IBVERBS_1.1);
RI_SYMVER(ri_v11_open_device, ibv_open_device@@IBVERBS_1.1);
