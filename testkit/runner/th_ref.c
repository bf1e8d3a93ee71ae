/* SPDX-License-Identifier: MIT */
/*
 * th_ on TARGET=ref: before any test the fake provider is set up from
 * IBVCT_SCRIPT (or its built-in default) with fp_env_setup(); a test may
 * re-create its own process's fake device with another mode, another XRC
 * capability or extra script lines (scripted events). Only the ref build
 * links this file and fp_script.a; the system build links th_ref_stub.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp_script.h"
#include "th.h"

static struct fp_script th_script;
static char th_scratch[PATH_MAX];

/*
 * Two fake hosts (th_host.c): IBVCT_TWOHOST_SIDE a or b names this
 * process's host, whose device has an Ethernet port with that host's
 * addresses, as rxe0 has on the guests of tools/vm/ibvct-vm pair (host B
 * the server, 10.9.0.1; host A the client, 10.9.0.2): the link-local IPv6
 * GID of its MAC at index 0 and the IPv4-mapped GID at index 1, RoCE v2
 * both (rxe makes only those: linux v6.1 drivers/infiniband/core/
 * roce_gid_mgmt.c adds one a type, and rxe has UDP encapsulation alone).
 */
static const char *th_port_lines(void)
{
	const char *side = getenv("IBVCT_TWOHOST_SIDE");

	if (side && !strcmp(side, "b"))
		return "\tport 1 state active link_layer ethernet mtu 1024\n"
		       "\tgid 1 0 fe80::5054:ff:fe49:4201\n\tgid 1 1 ::ffff:10.9.0.1\n";
	if (side && !strcmp(side, "a"))
		return "\tport 1 state active link_layer ethernet mtu 1024\n"
		       "\tgid 1 0 fe80::5054:ff:fe49:4202\n\tgid 1 1 ::ffff:10.9.0.2\n";
	return "\tport 1 state active\n";
}

int th__ref_setup(char *err, size_t errlen)
{
	const char *path = getenv("IBVCT_SCRIPT");
	const char *prov = getenv("IBVCT_PROVIDER");

	if (path && !path[0])
		path = NULL;
#ifdef TH_PROVIDER
	if (!prov || !prov[0])
		setenv("IBVCT_PROVIDER", prov = TH_PROVIDER, 1);	/* the build's plugin */
#endif
	if (!prov || !prov[0]) {
		snprintf(err, errlen, "IBVCT_PROVIDER is not set (the fake provider plugin)");
		return -1;
	}
	if (path ? fp_script_load(path, &th_script, err, errlen) : (fp_script_default(&th_script), 0))
		return -1;
	if (fp_env_setup(path, prov, NULL, th_scratch, sizeof(th_scratch), err, errlen))
		return -1;
	/* one of two fake hosts: the script again, with this host's port */
	if (getenv("IBVCT_TWOHOST_SIDE"))
		return th__ref_reenv(th_scratch, NULL, -1, NULL, 1, err, errlen);
	return 0;
}

void th__ref_cleanup(void)
{
	if (th_scratch[0])
		fp_rmtree(th_scratch);
	th_scratch[0] = 0;
}

const char *th__ref_mode(void)
{
	return th_script.mode == FP_MODE_LEGACY ? "legacy" : "extended";
}

const char *th__ref_lifetime(void)
{
	return th_script.lifetime == FP_LIFE_SEED ? "seed" : "current";
}

const char *th__ref_profile(void)
{
	return fp_profile_name(th_script.profile);
}

/* The suite's script, re-said with changes: quirks are kept (the quirk
 * matrix relies on it; the probe too must see a device that hides its XRC
 * capability), faults unless !keep_breaks (the device probe: a test's
 * fault must not hide the device from it); the first device is
 * re-declared. */
int th__ref_reenv(const char *dir, const char *mode, int xrc, const char *extra,
		  int keep_breaks, char *err, size_t errlen)
{
	const struct fp_dev_spec *d = &th_script.dev[0];
	char path[PATH_MAX + 16], scratch[PATH_MAX];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/reenv.fps", dir);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "mode %s\nlifetime %s\n", mode ? mode : th__ref_mode(), th__ref_lifetime());
	fprintf(f, "profile %s\n", fp_profile_name(th_script.profile));
	for (i = 0; i < FP_Q__COUNT; i++)
		if (th_script.quirk[i])
			fprintf(f, "quirk %s\n", fp_quirk_name((enum fp_quirk)i));
	for (i = 0; i < th_script.nfaults && keep_breaks; i++)
		fprintf(f, "fault %s %s %lu errno %d\n", fp_op_name(th_script.fault[i].op),
			th_script.fault[i].from ? "from" : "nth", th_script.fault[i].nth,
			th_script.fault[i].err ? th_script.fault[i].err
					       : fp_op_default_errno(th_script.fault[i].op));
	/* the call trace goes on: a fault sweep counts every process's calls */
	if (th_script.trace_path[0] == '/')
		fprintf(f, "trace %s\n", th_script.trace_path);
	if (extra)
		fprintf(f, "%s\n", extra);
	fprintf(f, "device %s\n\t%s xrc\n%s", d->name,
		xrc < 0 ? ((d->attr.device_cap_flags & IBV_DEVICE_XRC) ? "cap" : "nocap")
			: xrc ? "cap" : "nocap", th_port_lines());
	/* its completion clock (a driver profile's mask is its own) */
	if (d->clock_khz && (th_script.profile == FP_PROF_MLX5 || th_script.profile == FP_PROF_MLX4))
		fprintf(f, "\tclock %llu\n", (unsigned long long)d->clock_khz);
	else if (d->clock_khz)
		fprintf(f, "\tclock %llu mask %#llx\n", (unsigned long long)d->clock_khz,
			(unsigned long long)d->clock_mask);
	fclose(f);
	return fp_env_setup(path, getenv("IBVCT_PROVIDER"), dir, scratch, sizeof(scratch),
			    err, errlen);
}
