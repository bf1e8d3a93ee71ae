// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Injected faults and quirks of the soft XRC device, as module parameters
 * (insmod ixrc.ko fail=qp:2:12 no_xrc=1; writable later under
 * /sys/module/ixrc/parameters/). One table of kinds and one decision:
 *
 *   fail=KIND:N[:ERRNO]  the Nth create of KIND (pd mr cq srq qp xrcd ah),
 *                        counted from the load or the last write of fail,
 *                        fails with ERRNO (default ENOMEM); N=0: every one
 *   no_xrc=1             no IB_DEVICE_XRC in the device caps (read at load:
 *                        the core caches the attributes), XRC objects
 *                        refused with EOPNOTSUPP
 */
#include <linux/module.h>
#include <linux/atomic.h>
#include <linux/string.h>

#include "ixrc.h"

static const char *const ixrc_kind_names[IXRC_K_NR] = {
	[IXRC_K_PD] = "pd", [IXRC_K_MR] = "mr", [IXRC_K_CQ] = "cq",
	[IXRC_K_SRQ] = "srq", [IXRC_K_QP] = "qp", [IXRC_K_XRCD] = "xrcd",
	[IXRC_K_AH] = "ah",
};

static bool no_xrc;
module_param(no_xrc, bool, 0644);
MODULE_PARM_DESC(no_xrc, "report no XRC capability and refuse XRC objects");

static int fail_kind = -1;
static unsigned int fail_nth;
static int fail_errno = ENOMEM;
static atomic_t fail_count[IXRC_K_NR];

static int ixrc_fail_set(const char *val, const struct kernel_param *kp)
{
	char buf[32], *p = buf, *name, *nth, *err;
	unsigned int n = 0;
	int e = ENOMEM, k;

	strscpy(buf, val, sizeof(buf));
	strim(buf);
	if (!*buf || !strcmp(buf, "none")) {
		fail_kind = -1;
		return 0;
	}
	name = strsep(&p, ":");
	nth = strsep(&p, ":");
	err = strsep(&p, ":");
	for (k = 0; k < IXRC_K_NR; k++)
		if (!strcmp(name, ixrc_kind_names[k]))
			break;
	if (k == IXRC_K_NR || !nth || kstrtouint(nth, 10, &n) ||
	    (err && (kstrtoint(err, 10, &e) || e <= 0 || e > 4095)))
		return -EINVAL;
	for (k = 0; k < IXRC_K_NR; k++)
		atomic_set(&fail_count[k], 0);
	fail_nth = n;
	fail_errno = e;
	fail_kind = k;
	for (k = 0; k < IXRC_K_NR; k++)
		if (!strcmp(name, ixrc_kind_names[k]))
			fail_kind = k;
	return 0;
}

static int ixrc_fail_get(char *buf, const struct kernel_param *kp)
{
	if (fail_kind < 0)
		return sysfs_emit(buf, "none\n");
	return sysfs_emit(buf, "%s:%u:%d\n", ixrc_kind_names[fail_kind],
			  fail_nth, fail_errno);
}

static const struct kernel_param_ops ixrc_fail_ops = {
	.set = ixrc_fail_set,
	.get = ixrc_fail_get,
};
module_param_cb(fail, &ixrc_fail_ops, NULL, 0644);
MODULE_PARM_DESC(fail, "KIND:N[:ERRNO]: fail the Nth create of KIND (0: all)");

bool ixrc_no_xrc(void)
{
	return READ_ONCE(no_xrc);
}

/* Does this create fail? 0 or a negative errno. */
int ixrc_fault(enum ixrc_kind kind)
{
	unsigned int n = atomic_inc_return(&fail_count[kind]);

	if (READ_ONCE(fail_kind) != kind)
		return 0;
	if (fail_nth && n != fail_nth)
		return 0;
	return -READ_ONCE(fail_errno);
}
