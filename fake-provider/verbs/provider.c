/* SPDX-License-Identifier: MIT */
/*
 * The fake provider's registration and contexts: the constructor loads the
 * script and registers as an extended (verbs_register_driver) or a legacy
 * (ibv_register_driver) provider; device and port queries; and, at the
 * bottom, the two ops tables over the same implementation.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fp_verbs.h"

static const struct verbs_context_ops fp_ops;
static const struct ibv_legacy_context_ops fp_legacy_ctx_ops;
static struct fp_script fp_script_store;

/* ---- devices ------------------------------------------------------------- */
static int fp_read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[IBV_SYSFS_PATH_MAX + 32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The script device behind a uverbs sysfs dir, as a device object. */
static struct fp_device *fp_device_new(const char *uverbs_sys_path)
{
	char ibdev[IBV_SYSFS_NAME_MAX];
	const char *base = strrchr(uverbs_sys_path, '/');
	struct fp_device *dev;
	struct ibv_device *d;
	size_t rootlen;
	int i;

	if (!fp__script || fp_read_line(uverbs_sys_path, "ibdev", ibdev, sizeof(ibdev)))
		return NULL;
	for (i = 0; i < fp__script->ndevs; i++)
		if (!strcmp(fp__script->dev[i].name, ibdev))
			break;
	if (i == fp__script->ndevs)
		return NULL;			/* not one of ours */
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->devidx = i;
	d = &dev->vdev.device;
	d->node_type = fp__script->dev[i].node_type;
	d->transport_type = IBV_TRANSPORT_IB;
	snprintf(d->name, sizeof(d->name), "%s", ibdev);
	snprintf(d->dev_name, sizeof(d->dev_name), "%s", base ? base + 1 : uverbs_sys_path);
	snprintf(d->dev_path, sizeof(d->dev_path), "%s", uverbs_sys_path);
	/* <root>/class/infiniband_verbs/uverbsN -> <root>/class/infiniband/<ibdev> */
	rootlen = base ? (size_t)(base - uverbs_sys_path) : 0;
	snprintf(d->ibdev_path, sizeof(d->ibdev_path), "%.*s/../infiniband/%s",
		 (int)rootlen, uverbs_sys_path, ibdev);
	fp__counters_at(i, d->ibdev_path);
	return dev;
}

/* ---- contexts -------------------------------------------------------------- */
/*
 * A daemon event for one of this context's target QP handles (LIFE-08). It
 * runs on the connection's reader thread, possibly while an op holds the
 * plugin lock waiting for a reply, so it takes no lock: the handle (ev->user
 * is its ibv_qp) lives until the reply that destroys it, which comes after.
 */
static void fp_fk_event(void *arg, const struct fk_event *ev)
{
	struct fp_context *ctx = arg;
	struct ibv_qp *qp = (struct ibv_qp *)(uintptr_t)ev->user;
	struct verbs_async_event_desc d = {
		.element = ev->user,
		.event_type = (uint32_t)ev->type,
	};

	if (ev->type == IBV_EVENT_QP_FATAL || ev->type == IBV_EVENT_QP_REQ_ERR ||
	    ev->type == IBV_EVENT_QP_ACCESS_ERR) {
		__atomic_store_n(&to_fp_qp(qp)->real->e.state, IBV_QPS_ERR, __ATOMIC_RELAXED);
		fe_mem_qp_errored(&to_fp_qp(qp)->real->e);
	}
	if (write(ctx->async_wfd, &d, sizeof(d)) != (ssize_t)sizeof(d))
		return;		/* a full pipe loses the event, as fp__event_raise does */
}

/* The device's ports and limits as the daemon checks them (HELLO). */
void fp__ctx_limits(const struct fp_dev_spec *spec, struct fk_qp_limits *lim)
{
	int i;

	memset(lim, 0, sizeof(*lim));
	lim->nports = (uint32_t)spec->nports;
	lim->max_rd_atom = spec->attr.max_qp_init_rd_atom > 0
			   ? (uint32_t)spec->attr.max_qp_init_rd_atom : 0;
	lim->max_dest_rd_atom = spec->attr.max_qp_rd_atom > 0
				? (uint32_t)spec->attr.max_qp_rd_atom : 0;
	for (i = 0; i < spec->nports && i < FP_MAX_PORTS; i++)
		lim->pkey_tbl_len[i] = spec->port[i].attr.pkey_tbl_len;
}

static int fp_ctx_connect(struct fp_context *ctx)
{
	const struct fp_dev_spec *spec = ctx->spec;
	struct fk_qp_limits *lim = &ctx->lim;
	struct fk_connect_opts opts = {
		.limits = lim,
		.event_fn = fp_fk_event,
		.event_arg = ctx,
		.script = fp__script->path,	/* "" for the built-in default */
		/* the kernel rules the script's quirks switch off in the daemon */
		.quirks = fk_quirk_bits(fp__script, FK_MSG_HELLO),
		/* the kernel of the release the core plays (ibvct-release.def) */
		.hello_flags = fp_prof_kernel_flags(),
	};
	/* once per context: modify_qp checks against the same figures */
	fp__ctx_limits(spec, lim);
	/* FK_LIFETIME_* and FP_LIFE_* have the same values. */
	return fk_connect(spec->name, (int)fp__script->lifetime, &opts, &ctx->fk);
}

/*
 * The context's file (kernel/README.md "The context's file"): a new one of
 * its own, whose fd is cmd_fd, or, for ibv_import_device, the file of
 * import_fd, which then becomes cmd_fd (the context owns it, as rdma-core's
 * does the fd it imported, and closes it at close). Under ctx_fd_none
 * cmd_fd stays -1 and the connection alone holds the objects.
 */
static int fp_ctx_file(struct fp_context *ctx, int import_fd, int *cmd_fd)
{
	int err;

	ctx->file_id = fk_conn_id(ctx->fk);
	*cmd_fd = -1;
	if (import_fd >= 0) {
		err = fk_ctx_import(ctx->fk, import_fd, &ctx->file_id);
		/* a driver without import_context: libibverbs answers for it
		 * once the fd is found to be its device's (device.c:404) */
		if (!err && !fp_prof_can_import())
			err = EOPNOTSUPP;
		if (!err) {
			ctx->imported = true;
			*cmd_fd = import_fd;
		}
		return err;
	}
	if (fp__quirk(FP_Q_CTX_FD_NONE))
		return 0;				/* the quirk: no file */
	return fk_ctx_fd(ctx->fk, cmd_fd);
}

static int fp_ctx_setup(struct fp_context *ctx, struct fp_device *dev, int import_fd)
{
	struct ibv_context *c = &ctx->vctx.context;
	int p[2], err, cmd_fd = -1;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	/* The core reads async_fd (blocking, pollable); we must never block. */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK)) {
		close(p[0]);
		close(p[1]);
		return errno;
	}
	ctx->dev = dev;
	ctx->spec = &fp__script->dev[dev->devidx];
	ctx->async_wfd = p[1];
	/* The fake kernel connection is this context's uverbs fd. */
	err = fp_ctx_connect(ctx);
	if (!err) {
		err = fp_ctx_file(ctx, import_fd, &cmd_fd);
		if (err) {
			fk_disconnect(ctx->fk);
			ctx->fk = NULL;
		}
	}
	if (err) {
		close(p[0]);
		close(p[1]);
		return err;
	}
	ctx->hca = fe_dev_attach(dev->devidx);
	err = fe_join(ctx->hca, ctx->fk);
	if (err) {
		fe_xport_stop(fe_leave(ctx->hca, ctx->fk));
		fe_dev_detach(ctx->hca);
		ctx->hca = NULL;
		fk_disconnect(ctx->fk);
		ctx->fk = NULL;
		if (cmd_fd >= 0 && !ctx->imported)
			close(cmd_fd);
		close(p[0]);
		close(p[1]);
		return err;
	}
	/* its ports' addresses, for the other hosts of the fabric */
	if (fp__fabric_on())
		fp__fabric_publish(ctx->spec);
	fp_list_init(&ctx->pds);
	fp_list_init(&ctx->mrs);
	fp_list_init(&ctx->cqs);
	fp_list_init(&ctx->srqs);
	fp_list_init(&ctx->qps);
	fp_list_init(&ctx->ahs);
	fp_list_init(&ctx->xrcds);
	fp_list_init(&ctx->tds);
	fp_list_init(&ctx->pdoms);
	fp_list_init(&ctx->mws);
	c->device = &dev->vdev.device;
	c->cmd_fd = cmd_fd;
	c->async_fd = p[0];
	c->num_comp_vectors = FP_NUM_COMP_VECTORS;
	return 0;
}

/* What closing a uverbs fd does: release everything, QPs first (XRCD-17). */
static void fp_ctx_teardown(struct fp_context *ctx)
{
	struct fe_xport *xp;

	if (!ctx->hca)
		return;			/* already done (free_context and uninit both ran) */
	fe_lock();
	xp = fe_leave(ctx->hca, ctx->fk);
	/* The file goes with its last fd (the daemon sees this one closed
	 * before the connection, so a file nobody else holds is released
	 * at once, as before there was one). */
	if (ctx->vctx.context.cmd_fd >= 0) {
		close(ctx->vctx.context.cmd_fd);
		(void)fk_ctx_held(ctx->fk, &ctx->file_held);
	}
	ctx->vctx.context.cmd_fd = -1;
	/* The daemon releases the context's device-wide objects when the
	 * connection closes (XRCD-17, LIFE-04/05); no more events after it.
	 * mlx5 keeps it open while a QP left here holds a mapped doorbell. */
	if (fp_prof_close_keeps_context(ctx))
		fk_keep(ctx->fk);
	else
		fk_disconnect(ctx->fk);
	ctx->fk = NULL;
	fp__qp_cleanup_ctx(ctx);

	fp__srq_cleanup_ctx(ctx);
	fp__ah_cleanup_ctx(ctx);
	fp__xrcd_cleanup_ctx(ctx);
	fp__cq_cleanup_ctx(ctx);
	fp__mw_cleanup_ctx(ctx);
	fp__pd_mr_cleanup_ctx(ctx);
	fe_dev_detach(ctx->hca);
	ctx->hca = NULL;
	fp_trace(fp__script, "close_device(%s)", ctx->spec->name);
	/* the ring goes: so do the wires that answered into it (fabric.c) */
	if (xp)
		fp__fabric_drop(ctx->dev->devidx);
	fe_unlock();
	fe_xport_stop(xp);		/* its thread takes the lock: not under it */

	close(ctx->async_wfd);
	close(ctx->vctx.context.async_fd);
	ctx->async_wfd = -1;
	ctx->vctx.context.async_fd = -1;
}

/*
 * A context opened (OPEN_DEVICE), or made on the file of import_fd
 * (IMPORT_DEVICE, ibv_import_device: fp_ctx_file; the daemon tells whether
 * it is this device's file, ENODEV: another device's, EINVAL: none of the
 * fake kernel's, so the core may ask each device in turn), with the op's
 * faults and trace, and the ops of its mode: extended, or legacy (a plain
 * ibv_context the core wraps, COMPAT-*). The one way every mode opens one.
 */
static int fp_ctx_open(struct fp_context *ctx, struct fp_device *dev, int import_fd, bool legacy)
{
	enum fp_op op = import_fd < 0 ? FP_OP_OPEN_DEVICE : FP_OP_IMPORT_DEVICE;
	const char *name = dev->vdev.device.name;
	int err;

	err = fp__op_begin(op);
	if (!err)
		err = fp_ctx_setup(ctx, dev, import_fd);
	if (!err && legacy)
		*ibv_legacy_context_ops(&ctx->vctx.context) = fp_legacy_ctx_ops;
	else if (!err)
		verbs_set_ops(&ctx->vctx, &fp_ops);
	if (import_fd < 0)
		fp__op_end(err ? NULL : ctx, op, FP_SUBJ_NONE, NULL, err, "dev=%s mode=%s", name,
			   legacy ? "legacy" : "extended");
	else
		fp__op_end(err ? NULL : ctx, op, FP_SUBJ_NONE, NULL, err, "dev=%s fd=%d file=%u", name,
			   import_fd, err ? 0 : ctx->file_id);
	return err;
}

/* The core opens no uverbs file for it (ref-impl/src/device.c passes -1): the
 * context's file is the fake kernel's (fp_ctx_file). */
static int fp_init_context(struct verbs_device *vdev, struct ibv_context *c, int cmd_fd)
{
	return fp_ctx_open(to_fp_ctx(c), fp_container_of(vdev, struct fp_device, vdev), -1, false);
}

static int fp_import_context(struct verbs_device *vdev, struct ibv_context *c, int cmd_fd)
{
	return fp_ctx_open(to_fp_ctx(c), fp_container_of(vdev, struct fp_device, vdev), cmd_fd,
			   false);
}

static void fp_uninit_context(struct verbs_device *vdev, struct ibv_context *c)
{
	fp_ctx_teardown(to_fp_ctx(c));
}

static void fp_free_context(struct ibv_context *c)
{
	fp_ctx_teardown(to_fp_ctx(c));
}

static void fp_uninit_device(struct verbs_device *vdev)
{
	free(fp_container_of(vdev, struct fp_device, vdev));
}

static struct verbs_device *fp_verbs_init(const char *uverbs_sys_path, int abi_version)
{
	struct fp_device *dev = fp_device_new(uverbs_sys_path);

	if (!dev)
		return NULL;
	dev->vdev.sz = sizeof(struct verbs_device);
	dev->vdev.size_of_context = sizeof(struct fp_context) - sizeof(struct verbs_context);
	dev->vdev.init_context = fp_init_context;
	dev->vdev.uninit_context = fp_uninit_context;
	dev->vdev.import_context = fp_import_context;
	dev->vdev.uninit_device = fp_uninit_device;
	return &dev->vdev;
}

/* ---- legacy mode --------------------------------------------------------------- */
static struct ibv_context *fp_legacy_alloc_context(struct ibv_device *ibdev, int cmd_fd)
{
	struct fp_device *dev = fp_container_of(ibdev, struct fp_device, vdev.device);
	struct fp_context *ctx;
	int err;

	/* A plain ibv_context (inside fp_context): the core wraps it (COMPAT-*). */
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	err = fp_ctx_open(ctx, dev, -1, true);
	if (err) {
		free(ctx);
		errno = err;
		return NULL;
	}
	return &ctx->vctx.context;
}

static void fp_legacy_free_context(struct ibv_context *c)
{
	struct fp_context *ctx = to_fp_ctx(c);

	fp_ctx_teardown(ctx);
	free(ctx);
}

static struct ibv_device *fp_legacy_init(const char *uverbs_sys_path, int abi_version)
{
	struct fp_device *dev = fp_device_new(uverbs_sys_path);
	struct ibv_legacy_device_ops *ops;

	if (!dev)
		return NULL;
	ops = ibv_legacy_device_ops(&dev->vdev.device);
	ops->alloc_context = fp_legacy_alloc_context;
	ops->free_context = fp_legacy_free_context;
	return &dev->vdev.device;
}

static struct ibv_mr *fp_legacy_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				       int access)
{
	return fp_reg_mr(pd, addr, length, (uint64_t)(uintptr_t)addr, access);
}

/* The scripted port PORT_NUM of CTX, or NULL for a number it lacks. */
static const struct fp_port_spec *fp_port_at(const struct fp_context *ctx, uint8_t port_num)
{
	return port_num >= 1 && port_num <= ctx->spec->nports ? &ctx->spec->port[port_num - 1] : NULL;
}

static int fp_query_port(struct ibv_context *c, uint8_t port_num, struct ibv_port_attr *attr);

/*
 * A provider of the 1.1 ABI predates XRC (libibverbs 1.1.8, c7e3e6105):
 * it has no QP type 9 or 10, and refuses them as a type it does not
 * support. The library passes every type on (rdma-core v44.0
 * libibverbs/verbs.c:658 ibv_create_qp), so this is the driver's answer;
 * the rest is the same provider.
 */
static struct ibv_qp *fp_legacy_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	if (attr->qp_type == IBV_QPT_XRC_SEND || attr->qp_type == IBV_QPT_XRC_RECV) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fp_create_qp(pd, attr);
}

/* The 1.1 port attributes end at link_layer: write no further. */
static int fp_legacy_query_port(struct ibv_context *c, uint8_t port_num,
				struct ibv_port_attr *attr)
{
	struct ibv_port_attr full;
	int err = fp_query_port(c, port_num, &full);

	if (!err)
		memcpy(attr, &full, offsetof(struct ibv_port_attr, link_layer) +
				    sizeof(full.link_layer));
	return err;
}

/* ---- device queries -------------------------------------------------------------- */
static int fp_query_device(struct ibv_context *c, struct ibv_device_attr *attr)
{
	struct fp_context *ctx = to_fp_ctx(c);
	int err;

	err = fp__op_begin(FP_OP_QUERY_DEVICE);
	if (!err) {
		*attr = ctx->spec->attr;
		attr->device_cap_flags = fp_prof_cap_flags(attr->device_cap_flags);
		attr->phys_port_cnt = (uint8_t)ctx->spec->nports;
		if (!attr->node_guid)
			attr->node_guid = htobe64(ctx->spec->node_guid);
		if (fp__quirk(FP_Q_XRC_CAP_HIDDEN))
			attr->device_cap_flags &= ~(unsigned int)IBV_DEVICE_XRC;
	}
	fp__op_end(ctx, FP_OP_QUERY_DEVICE, FP_SUBJ_NONE, NULL, err, "dev=%s", ctx->spec->name);
	return err;
}

/*
 * The kernel's answer to the extended query (linux v6.1
 * drivers/infiniband/core/uverbs_cmd.c ib_uverbs_ex_query_device: the
 * base attributes, device_cap_flags_ex the full capability word, the rest
 * the driver's), handed to the command layer, which copies what the
 * caller's attr_size holds (DEVX-01..03).
 */
static int fp_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex resp;
	int err;

	if (fp__ext_off(FP_X_QUERY_DEVICE_EX))
		return EOPNOTSUPP;		/* the library's fallback answers */
	memset(&resp, 0, sizeof(resp));
	err = fp_query_device(c, &resp.orig_attr);
	if (err)
		return err;
	resp.device_cap_flags_ex = fp_prof_cap_flags_ex(resp.orig_attr.device_cap_flags);
	/* the completion clock, as the driver reports it (CQX-06) */
	resp.hca_core_clock = fp_prof_clock(to_fp_ctx(c)->spec, &resp.completion_timestamp_mask);
	if (fp__quirk(FP_Q_SKIP_CMD_QUERY_DEVICE)) {
		/* the quirk's driver writes its whole struct, whatever the caller's size */
		memcpy(attr, &resp, sizeof(resp));
		return 0;
	}
	return verbs_cmd_query_device_ex(c, input, attr, attr_size, &resp);
}

/*
 * The device clock now (rdma-core v44.0 providers/mlx5/verbs.c:92
 * mlx5_query_rt_values; mlx4's, providers/mlx4/verbs.c:146, is the same): a
 * comp_mask bit past IBV_VALUES_MASK_RAW_CLOCK is EINVAL with nothing
 * written (:98); asked for, the clock's whole count goes in
 * raw_clock.tv_nsec with tv_sec 0, or, without a clock, EOPNOTSUPP
 * (mlx5_read_clock, :75); comp_mask then says what was written. A driver
 * without the op (rxe; `withdraw query_rt_values`) answers as libibverbs'
 * stub: EOPNOTSUPP, nothing touched.
 */
static int fp_query_rt_values(struct ibv_context *c, struct ibv_values_ex *values)
{
	struct fp_context *ctx = to_fp_ctx(c);
	uint32_t done = 0;
	uint64_t khz;
	int err;

	if (fp__ext_off(FP_X_QUERY_RT_VALUES))
		return EOPNOTSUPP;
	err = fp__op_begin(FP_OP_QUERY_RT_VALUES);
	if (err)
		goto out;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK) {
		err = EINVAL;
		goto out;
	}
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		khz = fp_prof_clock(ctx->spec, NULL);
		if (!khz) {
			err = EOPNOTSUPP;
		} else {
			values->raw_clock.tv_sec = 0;
			values->raw_clock.tv_nsec = (long)fe_clock_ticks(khz);
			done |= IBV_VALUES_MASK_RAW_CLOCK;
		}
	}
	values->comp_mask = done;
out:
	fp__op_end(ctx, FP_OP_QUERY_RT_VALUES, FP_SUBJ_NONE, NULL, err, "dev=%s",
		   ctx->spec->name);
	return err;
}

static int fp_query_port(struct ibv_context *c, uint8_t port_num, struct ibv_port_attr *attr)
{
	struct fp_context *ctx = to_fp_ctx(c);
	const struct fp_port_spec *p = fp_port_at(ctx, port_num);
	int err;

	err = fp__op_begin(FP_OP_QUERY_PORT);
	if (!err && !p)
		err = EINVAL;
	if (!err)
		*attr = p->attr;
	/* the kernel's answer past port_cap_flags2: Linux 6.12 copies the
	 * port's speed there, 6.1 has no such field (ibvct-release.def
	 * PORT_ACTIVE_SPEED_EX) */
	if (!err)
		attr->active_speed_ex = ibvct_release_is_56(IBVCT_REL_PORT_ACTIVE_SPEED_EX)
					? attr->active_speed : 0;
	fp__op_end(ctx, FP_OP_QUERY_PORT, FP_SUBJ_NONE, NULL, err, "port=%u", port_num);
	return err;
}

static int fp_query_gid(struct ibv_context *c, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct fp_context *ctx = to_fp_ctx(c);
	const struct fp_port_spec *p = fp_port_at(ctx, port_num);
	int err;

	err = fp__op_begin(FP_OP_QUERY_GID);
	if (!err && (!p || index < 0 || index >= p->attr.gid_tbl_len))
		err = EINVAL;
	if (!err)
		/* Entries past the scripted ones read as zero, as unset ones do. */
		memset(gid, 0, sizeof(*gid));
	if (!err && index < FP_MAX_GIDS)
		*gid = p->gid[index];
	fp__op_end(ctx, FP_OP_QUERY_GID, FP_SUBJ_NONE, NULL, err, "port=%u index=%d",
		   port_num, index);
	return err;
}

static int fp_query_pkey(struct ibv_context *c, uint8_t port_num, int index, __be16 *pkey)
{
	struct fp_context *ctx = to_fp_ctx(c);
	const struct fp_port_spec *p = fp_port_at(ctx, port_num);
	int err;

	err = fp__op_begin(FP_OP_QUERY_PKEY);
	if (!err && (!p || index < 0 || index >= p->attr.pkey_tbl_len))
		err = EINVAL;
	if (!err)
		*pkey = index < p->npkeys && index < FP_MAX_PKEYS ? htobe16(p->pkey[index]) : 0;
	fp__op_end(ctx, FP_OP_QUERY_PKEY, FP_SUBJ_NONE, NULL, err, "port=%u index=%d",
		   port_num, index);
	return err;
}

/* ---- registration -------------------------------------------------------------- */
__attribute__((constructor))
static void fp_provider_register(void)
{
	const char *path = getenv("IBVCT_SCRIPT");
	char err[512];

	if (path && *path) {
		if (fp_script_load(path, &fp_script_store, err, sizeof(err))) {
			/* A bad script registers nothing: no device is listed. */
			fprintf(stderr, "%s\n", err);
			return;
		}
	} else {
		fp_script_default(&fp_script_store);
	}
	/* the release is the core's, decided before any device: a script that
	 * names another cannot be played here (ibvct-release.def) */
	if (fp_script_store.rdma_core && fp_script_store.rdma_core != verbs_ibvct_release()) {
		fprintf(stderr, "ibvct-fake: the script says rdma-core %d, the core plays %d: "
			"run it through ibvct-run, or set IBVCT_RDMA_CORE=%d\n",
			fp_script_store.rdma_core, verbs_ibvct_release(), fp_script_store.rdma_core);
		return;
	}
	fp__script = &fp_script_store;
	fp__install_upcalls();
	fk_fork_init();		/* first: its fork handlers run after the engine's */
	fe_fork_init();
	if (fp__script->mode == FP_MODE_LEGACY)
		ibv_register_driver("ibvct-fake", fp_legacy_init);
	else
		verbs_register_driver("ibvct-fake", fp_verbs_init);
}

/* ---- ops tables: the same implementation, two ABIs. Keep sorted. ------------------ */
static const struct verbs_context_ops fp_ops = {
	.alloc_mw = fp_alloc_mw,
	.alloc_parent_domain = fp_alloc_parent_domain,
	.alloc_pd = fp_alloc_pd,
	.alloc_td = fp_alloc_td,
	.attach_mcast = fp_attach_mcast,
	.bind_mw = fp_bind_mw,
	.close_xrcd = fp_close_xrcd,
	.cq_event = fp_cq_event,
	.create_ah = fp_create_ah,
	.create_cq = fp_create_cq,
	.create_cq_ex = fp_create_cq_ex,
	.create_qp = fp_create_qp,
	.create_qp_ex = fp_create_qp_ex,
	.create_srq = fp_create_srq,
	.create_srq_ex = fp_create_srq_ex,
	.dealloc_mw = fp_dealloc_mw,
	.dealloc_pd = fp_dealloc_pd,
	.dealloc_td = fp_dealloc_td,
	.dereg_mr = fp_dereg_mr,
	.destroy_ah = fp_destroy_ah,
	.destroy_cq = fp_destroy_cq,
	.destroy_qp = fp_destroy_qp,
	.destroy_srq = fp_destroy_srq,
	.detach_mcast = fp_detach_mcast,
	.free_context = fp_free_context,
	.get_srq_num = fp_get_srq_num,
	.import_mr = fp_import_mr,
	.import_pd = fp_import_pd,
	.modify_qp = fp_modify_qp,
	.modify_srq = fp_modify_srq,
	.open_qp = fp_open_qp,
	.open_xrcd = fp_open_xrcd,
	.poll_cq = fp_poll_cq,
	.post_recv = fp_post_recv,
	.post_send = fp_post_send,
	.post_srq_recv = fp_post_srq_recv,
	.query_device = fp_query_device,
	.query_device_ex = fp_query_device_ex,
	.query_gid = fp_query_gid,
	.query_pkey = fp_query_pkey,
	.query_port = fp_query_port,
	.query_qp = fp_query_qp,
	.query_qp_data_in_order = fp_query_qp_data_in_order,
	.query_rt_values = fp_query_rt_values,
	.query_srq = fp_query_srq,
	.reg_mr = fp_reg_mr,
	.req_notify_cq = fp_req_notify_cq,
	.rereg_mr = fp_rereg_mr,
	.resize_cq = fp_resize_cq,
	.unimport_mr = fp_unimport_mr,
	.unimport_pd = fp_unimport_pd,
};

/* No XRC here: the 1.1 table has no slot for it (COMPAT-15). */
static const struct ibv_legacy_context_ops fp_legacy_ctx_ops = {
	.alloc_pd = fp_alloc_pd,
	.attach_mcast = fp_attach_mcast,
	.cq_event = fp_cq_event,
	.create_ah = fp_create_ah,
	.create_cq = fp_create_cq,
	.create_qp = fp_legacy_create_qp,
	.create_srq = fp_create_srq,
	.dealloc_pd = fp_dealloc_pd,
	.dereg_mr = fp_dereg_mr,
	.destroy_ah = fp_destroy_ah,
	.destroy_cq = fp_destroy_cq,
	.destroy_qp = fp_destroy_qp,
	.destroy_srq = fp_destroy_srq,
	.detach_mcast = fp_detach_mcast,
	.modify_qp = fp_modify_qp,
	.modify_srq = fp_modify_srq,
	.poll_cq = fp_poll_cq,
	.post_recv = fp_post_recv,
	.post_send = fp_post_send,
	.post_srq_recv = fp_post_srq_recv,
	.query_device = fp_query_device,
	.query_port = fp_legacy_query_port,
	.query_qp = fp_query_qp,
	.query_srq = fp_query_srq,
	.reg_mr = fp_legacy_reg_mr,
	.req_notify_cq = fp_req_notify_cq,
	.resize_cq = fp_resize_cq,
};
