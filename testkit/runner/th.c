/* SPDX-License-Identifier: MIT */
/*
 * The suites on the runner (tr.c): device selection and skips, targets,
 * expected results, the device each test gets, and the verbs helpers the
 * suites share. The parent never calls ibv_*: device probing runs in a
 * child too, so every test starts from a process with no verbs state (and
 * on the reference target, a fresh fake provider).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <fnmatch.h>
#include <ftw.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th.h"
#include "th_host.h"

#ifndef TH_SRCDIR
#define TH_SRCDIR "."
#endif

/* What the probe child found; shared with test children through fork. */
static struct {
	char dev[64];
	char provider[64];		/* expectations key: "fake", "mlx5", "rxe" */
	char provider_how[160];		/* where the key came from */
	uint8_t port;
	int xrc;			/* XRC usable */
	int xrc_cap;			/* IBV_DEVICE_XRC reported */
	char xrc_why[256];
} th_dev;

/* Fake-kernel run dirs live under a short path of their own: a Unix socket
 * path holds at most 107 bytes, scratch dirs nest deeper than that. It is
 * under TMPDIR when that is short enough, else under /tmp: `ibvct
 * conformance` sets TMPDIR to a scratch dir it removes however its
 * programs ended, so that the dirs of a program killed mid-run (a host
 * that vanished) go with it. */
static char th_fk_base[64];
#define TH_FK_NAME "ibvct-fk.XXXXXX"

static unsigned th_fk_seq;
/* IBVCT_KEEP=1: every scratch and fake-kernel run dir is kept (and named in
 * the TAP), so that a caller can read test logs and the daemons' logs. */
static int th_keep;
static void th_fk_rundir(void);

/* ---- small utilities ------------------------------------------------- */
void th_ext_missing(const char *fmt, ...)
{
	const char *mode = th_mode();
	va_list ap;

	va_start(ap, fmt);
	if (th_strict() && mode && !strcmp(mode, "extended")) {
		/* the reference target's extended provider offers every one */
		vfprintf(stderr, fmt, ap);
		fputs(": the reference target's extended provider must offer it\n", stderr);
		fflush(NULL);
		_exit(1);
	}
	tr_vskip(fmt, ap);
}
int th_strict(void)
{
#ifdef TH_TARGET_REF
	/* a driver profile plays that driver: exact where the driver is */
	const char *p = th__ref_profile();

	return !p || !strcmp(p, "strict");
#else
	const char *s = getenv("IBVCT_STRICT");

	return s && !strcmp(s, "1");
#endif
}

const char *th_mode(void)
{
	return th__ref_mode();
}

const char *th_driver(void)
{
	return th_dev.provider;
}

void th_need_driver(const char *drivers, const char *about)
{
	size_t l = strlen(th_dev.provider);
	const char *p = drivers;

	/* a whole word of drivers */
	while ((p = strstr(p, th_dev.provider)) != NULL) {
		if ((p == drivers || p[-1] == ' ') && (p[l] == 0 || p[l] == ' '))
			return;
		p += l ? l : 1;
	}
	th_skip("not applicable: the driver is %s (%s), and %s", th_dev.provider,
		th_dev.provider_how, about);
}

/*
 * Steps a driver is known to crash on, never run where the device's driver
 * is that one (th_crash_guard): what the step is, and why (with its
 * source).
 */
static const struct {
	const char *driver, *step, *why;
} th_crash_steps[] = {
	{ "rxe", "send_inv_of_an_invalidated_type_2_key",
	  "a SEND_WITH_INV naming a type 2 window that is no longer bound passes "
	  "rxe_check_invalidate_mw and dereferences the window's NULL QP and MR in "
	  "rxe_do_invalidate_mw, in the responder's tasklet: a kernel panic (linux v6.1 "
	  "drivers/infiniband/sw/rxe/rxe_mw.c:218-243, from rxe_resp.c execute)" },
	{ "mlx5", "destroy_of_an_opened_qp",
	  "mlx5_destroy_qp of a QP that ibv_open_qp gave frees the doorbell record it "
	  "never had, mlx5_free_db(ctx, NULL, ...), whose lookup returns the map's "
	  "sentinel and writes through it: SIGSEGV in the process (rdma-core v44.0 "
	  "providers/mlx5/verbs.c:2791, :3372 mlx5_open_qp; providers/mlx5/dbrec.c:162)" },
};

static char th_not_run[512];		/* the running test's guarded step */

int th_crash_guard(const char *step)
{
	size_t i;

	for (i = 0; i < sizeof(th_crash_steps) / sizeof(th_crash_steps[0]); i++) {
		if (strcmp(th_crash_steps[i].step, step) || strcmp(th_crash_steps[i].driver,
								     th_dev.provider))
			continue;
		snprintf(th_not_run, sizeof(th_not_run), "%s not run on %s: %s", step,
			 th_dev.provider, th_crash_steps[i].why);
		th_note("known deviation: %s", th_not_run);
		return 1;
	}
	return 0;
}

/* IBVCT_LIFETIME names the model under test (a real device whose kernel
 * is known, or on ref a deliberate mismatch that must fail); else the
 * reference target's script says it. */
const char *th_lifetime(void)
{
	const char *l = getenv("IBVCT_LIFETIME");

	if (l && (!strcmp(l, "current") || !strcmp(l, "seed")))
		return l;
	return th__ref_lifetime();
}

void th_errno_strict(int got, int want, const char *what)
{
	if (got == want)
		return;
	if (th_strict())
		th_fail("%s: errno %d (%s), want %d (%s)", what, got, strerror(got), want,
			strerror(want));
	th_note("%s: errno %d (%s), the spec's %d (%s) is a tightening of upstream", what, got,
		strerror(got), want, strerror(want));
}


static int th_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

/* Only our own mkdtemp() dir of fake-kernel run dirs. */
static int th_rm_fk_base(void)
{
	const char *b = strrchr(th_fk_base, '/');

	if (th_fk_base[0] != '/' || !b || strncmp(b + 1, TH_FK_NAME, sizeof(TH_FK_NAME) - 7))
		return -1;
	return nftw(th_fk_base, th_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- device selection (in a child) ------------------------------------ */
/* The expectations key of a kernel driver: the driver, not the device name
 * (udev renames mlx5_0 to rocep1s0f0 or ibp1s0). */
static const struct {
	const char *kdriver;
	const char *key;
} th_drivers[] = {
	{ "ibvct_fake", "fake" }, { "mlx4_core", "mlx4" }, { "mlx4_ib", "mlx4" },
	{ "mlx5_core", "mlx5" }, { "mlx5_ib", "mlx5" }, { "rdma_rxe", "rxe" },
	{ "rxe", "rxe" }, { "siw", "siw" },
};

/* The file at path holds want (and a newline) */
static int th_node_desc_is(const char *path, const char *want)
{
	char buf[128];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return !strcmp(buf, want);
}

/* The expectations key of device dev: IBVCT_DRIVER when set; else the
 * driver bound to the device in sysfs (SYSFS_PATH, as rdma-core honours it,
 * else /sys): class/infiniband/DEV/device/driver -> .../drivers/NAME; else
 * "rxe" for a device with a "parent" netdev attribute (rxe has no bus
 * device); else "ixrc" for the node description of ibvct's soft XRC device;
 * else the device name without its trailing number (siw0 -> siw).
 * how says which one it was. */
static void th_driver_key(const char *dev, char *out, size_t len, char *how, size_t howlen)
{
	const char *env = getenv("IBVCT_DRIVER"), *root = getenv("SYSFS_PATH"), *base;
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;
	size_t i, l;

	if (env && env[0]) {
		snprintf(out, len, "%s", env);
		snprintf(how, howlen, "IBVCT_DRIVER");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/driver",
		 root && root[0] ? root : "/sys", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
		for (i = 0; i < sizeof(th_drivers) / sizeof(th_drivers[0]); i++)
			if (!strcmp(base, th_drivers[i].kdriver))
				break;
		l = strlen(base);
		if (i < sizeof(th_drivers) / sizeof(th_drivers[0]))
			snprintf(out, len, "%s", th_drivers[i].key);
		else	/* an unknown driver: its own name, "_core" dropped */
			snprintf(out, len, "%.*s",
				 (int)(l > 5 && !strcmp(base + l - 5, "_core") ? l - 5 : l), base);
		snprintf(how, howlen, "driver %s", base);
		goto out;
	}
	/* rxe's device has no bus device, but its own "parent" attribute (the
	 * netdev it runs on: linux drivers/infiniband/sw/rxe/rxe_verbs.c) */
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/parent",
		 root && root[0] ? root : "/sys", dev);
	if (!access(path, R_OK)) {
		snprintf(out, len, "rxe");
		snprintf(how, howlen, "no driver in sysfs, a parent netdev: rxe");
		goto out;
	}
	/* ibvct's soft XRC device (ixrc, ixrc_main.c) has no bus
	 * device and no parent netdev either: its node description names it,
	 * whatever the device is called (rdma dev set NAME name) */
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/node_desc",
		 root && root[0] ? root : "/sys", dev);
	if (th_node_desc_is(path, "ibvct soft XRC device")) {
		snprintf(out, len, "ixrc");
		snprintf(how, howlen, "no driver in sysfs, node_desc: ixrc");
		goto out;
	}
	/* mlx5_0 -> mlx5, rxe0 -> rxe, fake0 -> fake */
	l = strlen(dev);
	while (l && isdigit((unsigned char)dev[l - 1]))
		l--;
	while (l && dev[l - 1] == '_')
		l--;
	snprintf(out, len, "%.*s", (int)l, dev);
	snprintf(how, howlen, "no driver in sysfs, by the device name");
out:
	/* a file name, and one word of the probe's answer */
	for (char *p = out; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			*p = '_';
	if (!out[0])
		snprintf(out, len, "unknown");
}

static int th_probe_child(int wfd, const char *base)
{
	const char *want = getenv("IBVCT_DEVICE");
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	char msg[1024] = "";
	int n = 0, i;

	if (th_mode() && th__ref_reenv(base, NULL, -1, NULL, 0, msg + 5, sizeof(msg) - 5)) {
		memcpy(msg, "SKIP ", 5);
		goto out;
	}
	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(msg, sizeof(msg), "SKIP ibv_get_device_list: %s", strerror(errno));
		goto out;
	}
	if (n == 0) {
		snprintf(msg, sizeof(msg), "SKIP no RDMA device (ibv_get_device_list found none)");
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_port_attr pa;
		uint8_t p;

		if (want && want[0] && strcmp(want, name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			snprintf(msg, sizeof(msg), "SKIP ibv_open_device(%s): %s", name,
				 strerror(errno));
			continue;
		}
		if (ibv_query_device(ctx, &da)) {
			snprintf(msg, sizeof(msg), "SKIP ibv_query_device(%s) failed", name);
			ibv_close_device(ctx);
			ctx = NULL;
			continue;
		}
		for (p = 1; p <= da.phys_port_cnt; p++)
			if (!ibv_query_port(ctx, p, &pa) && pa.state == IBV_PORT_ACTIVE)
				break;
		if (p > da.phys_port_cnt) {
			snprintf(msg, sizeof(msg), "SKIP no active port on %s", name);
			ibv_close_device(ctx);
			ctx = NULL;
			continue;
		}
		snprintf(th_dev.dev, sizeof(th_dev.dev), "%s", name);
		th_dev.port = p;
		break;
	}
	if (!ctx) {
		if (!msg[0])
			snprintf(msg, sizeof(msg), "SKIP IBVCT_DEVICE=%s: no such device", want);
		goto out_free;
	}
	th_dev.xrc_cap = !!(da.device_cap_flags & IBV_DEVICE_XRC);
	if (!th_dev.xrc_cap) {
		/* Not applicable only when XRC really is absent: a device that
		 * does not report the capability yet opens an XRC domain fails
		 * every XRC test (xrc = -1) instead of skipping it. The errno of
		 * the refusal is xrcd_device_without_xrc_fails_eopnotsupp's. */
		struct ibv_xrcd *x = th_xrcd(ctx, -1, O_CREAT);

		if (x) {
			th_dev.xrc = -1;
			ibv_close_xrcd(x);
			snprintf(th_dev.xrc_why, sizeof(th_dev.xrc_why),
				 "%s does not report IBV_DEVICE_XRC, yet ibv_open_xrcd succeeds",
				 th_dev.dev);
		} else {
			snprintf(th_dev.xrc_why, sizeof(th_dev.xrc_why),
				 "%s does not report IBV_DEVICE_XRC and ibv_open_xrcd fails (%s): "
				 "no XRC (rxe and siw never have it: COMPAT-20..24)",
				 th_dev.dev, strerror(errno));
		}
	} else {
		struct ibv_xrcd *x = th_xrcd(ctx, -1, O_CREAT);

		if (x) {
			th_dev.xrc = 1;
			ibv_close_xrcd(x);
		} else if (th_mode() && !strcmp(th_mode(), "extended")) {
			/* the reference's extended provider has every XRC op: any
			 * refusal here fails every XRC test, EOPNOTSUPP too */
			th_dev.xrc = -1;
			snprintf(th_dev.xrc_why, sizeof(th_dev.xrc_why),
				 "%s reports IBV_DEVICE_XRC, and the reference's extended provider "
				 "has the XRC ops, yet ibv_open_xrcd fails: %s", th_dev.dev,
				 strerror(errno));
		} else if (errno == EOPNOTSUPP || errno == ENOSYS) {
			/* the library's answer for a provider without the XRC
			 * ops (rdma-core v44.0 libibverbs/dummy_ops.c; ENOSYS
			 * before v28): XRC is absent, not broken */
			snprintf(th_dev.xrc_why, sizeof(th_dev.xrc_why),
				 "%s reports IBV_DEVICE_XRC but ibv_open_xrcd fails: %s "
				 "(a provider without XRC ops, COMPAT-09)", th_dev.dev, strerror(errno));
		} else {
			/* Any other refusal of a plain private domain is a broken
			 * XRC implementation: every XRC test fails with it rather
			 * than skipping (a skip would hide, say, a command layer
			 * that rejects a valid comp_mask). */
			th_dev.xrc = -1;
			snprintf(th_dev.xrc_why, sizeof(th_dev.xrc_why),
				 "%s reports IBV_DEVICE_XRC, yet ibv_open_xrcd(fd -1, O_CREAT) fails: %s",
				 th_dev.dev, strerror(errno));
		}
	}
	ibv_close_device(ctx);
	/* the key is read here, in the environment the verbs calls see */
	th_driver_key(th_dev.dev, th_dev.provider, sizeof(th_dev.provider), th_dev.provider_how,
		      sizeof(th_dev.provider_how));
	snprintf(msg, sizeof(msg), "OK %s %u %d %d %s %s|%s", th_dev.dev, th_dev.port, th_dev.xrc,
		 th_dev.xrc_cap, th_dev.provider, th_dev.provider_how, th_dev.xrc_why);
out_free:
	ibv_free_device_list(list);
out:
	if (write(wfd, msg, strlen(msg)) < 0)
		return 1;
	return 0;
}

/* Returns 0 with th_dev filled, or 1 with the skip reason in why. */
static int th_probe(char *why, size_t len, const char *base)
{
	char buf[1024];
	int pfd[2], st;
	ssize_t n, got = 0;
	pid_t pid;
	unsigned port;

	if (pipe(pfd))
		return snprintf(why, len, "pipe: %s", strerror(errno)), 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		/* Off the wire: the probe's device is a fake host of its own (a
		 * run dir and daemon of fp_env_setup's), with the addresses of
		 * this host's port (th_port_lines). On the fabric it would claim
		 * them first, and while its daemon is still up (an idle daemon
		 * exits only once it is scheduled again; a daemon may stay),
		 * the real host's claim is refused (verbs/fabric.c
		 * fp__fabric_publish: the first keeps an address), and the
		 * other host's requests go to the probe's daemon: lost, the
		 * first test's RC send ends in RETRY_EXC_ERR. */
		unsetenv("IBVCT_FABRIC");
		alarm((unsigned)(30 * tr_timeout_mult()));
		_exit(th_probe_child(pfd[1], base));
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(pfd[0]);
	buf[got] = 0;
	waitpid(pid, &st, 0);
	if (!strncmp(buf, "SKIP ", 5)) {
		snprintf(why, len, "%s", buf + 5);
		return 1;
	}
	if (strncmp(buf, "OK ", 3) || sscanf(buf + 3, "%63s %u %d %d %63s", th_dev.dev, &port,
					     &th_dev.xrc, &th_dev.xrc_cap, th_dev.provider) != 5) {
		snprintf(why, len, "device probe failed (%s)",
			 WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "no answer");
		return 1;
	}
	th_dev.port = (uint8_t)port;
	{
		/* after the five fields: how the key was found, "|", the XRC reason */
		const char *p = buf + 3, *bar;

		for (int f = 0; f < 5 && p; f++) {
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		bar = p ? strchr(p, '|') : NULL;
		snprintf(th_dev.provider_how, sizeof(th_dev.provider_how), "%.*s",
			 bar ? (int)(bar - p) : 0, p ? p : "");
		snprintf(th_dev.xrc_why, sizeof(th_dev.xrc_why), "%s", bar ? bar + 1 : "");
	}
	return 0;
}

struct ibv_context *th_open(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	assert_non_null(list);
	for (i = 0; i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), th_dev.dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		th_fail("cannot open %s: %s", th_dev.dev, strerror(errno));
	return ctx;
}

struct ibv_context *th_import(int fd, int *used)
{
	struct ibv_context *c;
	int d = fcntl(fd, F_DUPFD_CLOEXEC, 0), err;

	if (used)
		*used = d;
	if (d < 0)
		return NULL;
	c = ibv_import_device(d);
	if (c)
		return c;
	err = errno;
	close(d);	/* a failed import leaves the fd to its caller */
	if (used)
		*used = -1;
	if (err == EOPNOTSUPP)
		th_ext_missing("ibv_import_device: EOPNOTSUPP, the driver has no import ops "
			       "(rdma-core v44.0 libibverbs/device.c:404; only mlx5 has them there)");
	errno = err;
	return NULL;
}

void th_reenv(const char *mode, int xrc, const char *extra)
{
	char err[512], cwd[PATH_MAX];

	/* the current dir: peers of one test re-create in dirs of their own */
	if (th__ref_reenv(getcwd(cwd, sizeof(cwd)) ? cwd : tr_dir(), mode, xrc, extra, 1, err,
			  sizeof(err)))
		th_skip("%s", err);
	th_fk_rundir();		/* fp_env_setup's own is under the (deep) cwd */
}

/* ---- the release under test ---------------------------------------------- */
/*
 * Which rdma-core and Linux the target runs, for expectations keyed by a
 * version range (below): the reference core says the release it plays
 * (verbs_ibvct_release, ref-impl's ibvct-release.def: 44 with Linux 6.1,
 * 56 with 6.12), found by name so that the system build asks it too when
 * run on the reference library; a real libibverbs is named by its file
 * (libibverbs.so.1.14.NN.x, the soname's target) and the kernel by uname.
 * 0 where nothing tells.
 */
static struct {
	int rdma_core, linux_major, linux_minor;
	char how[96];
} th_rel;

static int th_lib_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	char *out = data, real[PATH_MAX];
	const char *b;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libibverbs.so"))
		return 0;
	if (!realpath(info->dlpi_name, real))
		snprintf(real, sizeof(real), "%s", info->dlpi_name);
	b = strrchr(real, '/');
	snprintf(out, PATH_MAX, "%s", b ? b + 1 : real);
	return 1;
}

static void th_release_learn(void)
{
	int (*rel)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "verbs_ibvct_release");
	char lib[PATH_MAX] = "";
	struct utsname u;
	unsigned a, b, c, d;

	if (rel) {
		th_rel.rdma_core = rel();
		th_rel.linux_major = 6;
		th_rel.linux_minor = th_rel.rdma_core >= 56 ? 12 : 1;
		snprintf(th_rel.how, sizeof(th_rel.how), "the reference core plays them");
		return;
	}
	dl_iterate_phdr(th_lib_cb, lib);
	if (sscanf(lib, "libibverbs.so.%u.%u.%u.%u", &a, &b, &c, &d) >= 3)
		th_rel.rdma_core = (int)c;
	if (!uname(&u) && sscanf(u.release, "%u.%u", &a, &b) == 2) {
		th_rel.linux_major = (int)a;
		th_rel.linux_minor = (int)b;
	}
	snprintf(th_rel.how, sizeof(th_rel.how), "%s, uname", lib[0] ? lib : "no libibverbs file");
}

/* One condition word of an expectation: rdma-core<N, rdma-core>=N,
 * linux<X.Y, linux>=X.Y. 1 holds, 0 does not, -1 not a condition. An
 * unknown version holds (a known deviation stays a TODO, and a fix is
 * reported as one). */
static int th_cond(const char *w)
{
	unsigned x, y = 0;
	char op[3] = "";
	int have, want, n = 0;

	if (sscanf(w, "rdma-core%2[<>=]%u%n", op, &x, &n) == 2 && !w[n]) {
		have = th_rel.rdma_core;
		want = (int)x;
	} else if ((sscanf(w, "linux%2[<>=]%u.%u%n", op, &x, &y, &n) == 3 && !w[n])) {
		have = th_rel.linux_major * 1000 + th_rel.linux_minor;
		want = (int)(x * 1000 + y);
		if (!th_rel.linux_major)
			have = 0;
	} else {
		return -1;
	}
	if (!have)
		return 1;
	if (!strcmp(op, "<"))
		return have < want;
	if (!strcmp(op, ">="))
		return have >= want;
	return -1;
}

/* ---- expected results --------------------------------------------------- */
struct th_expect {
	char name[128];
	char *reason;		/* the line's whole rest: the report shows it uncut */
};

static struct th_expect *th_exp;
static size_t th_nexp;

static void th_expect_load(void)
{
	const char *src = getenv("IBVCT_SRC");
	const char *path = getenv("IBVCT_EXPECT");
	char buf[PATH_MAX], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int lineno = 0;

	if (!path || !path[0]) {
		snprintf(buf, sizeof(buf), "%s/fixtures/expect/%s.txt", src && src[0] ? src : TH_SRCDIR,
			 th_dev.provider);
		path = buf;
	}
	f = fopen(path, "r");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char name[128], kw[64];
		struct th_expect *more;
		int off = 0, n, c = 1;

		lineno++;
		if (line[0] == '#' || sscanf(line, "%127s %n", name, &off) < 1 || !off)
			continue;
		/* NAME[@COND] [VERSION-CONDITION]... TODO reason */
		while (sscanf(line + off, "%63s %n", kw, &n) == 1 && strcmp(kw, "TODO")) {
			int r = th_cond(kw);

			if (r < 0) {
				printf("# expectations: %s:%d: '%s' is not rdma-core<N, rdma-core>=N, "
				       "linux<X.Y or linux>=X.Y: line ignored\n", path, lineno, kw);
				c = 0;
				break;
			}
			c = c && r;
			off += n;
		}
		if (!c || sscanf(line + off, "%63s %n", kw, &n) != 1 || strcmp(kw, "TODO"))
			continue;
		off += n;
		/* NAME@COND: only under that mode or lifetime model */
		if (strchr(name, '@')) {
			const char *cond = strchr(name, '@') + 1;

			if (!((th_mode() && !strcmp(cond, th_mode())) ||
			      (th_lifetime() && !strcmp(cond, th_lifetime()))))
				continue;
			*strchr(name, '@') = 0;
		}
		more = realloc(th_exp, (th_nexp + 1) * sizeof(*th_exp));
		if (!more)
			break;
		th_exp = more;
		line[strcspn(line, "\n")] = 0;
		th_exp[th_nexp].reason = strdup(line + off);
		if (!th_exp[th_nexp].reason)
			break;
		snprintf(th_exp[th_nexp].name, sizeof(th_exp->name), "%s", name);
		th_nexp++;
	}
	free(line);
	fclose(f);
}

static const char *th_issue_todo(const char *name);

static const char *th_expect_todo(const char *name)
{
	for (size_t i = 0; i < th_nexp; i++)
		if (!strcmp(th_exp[i].name, name))
			return th_exp[i].reason;
	return th_issue_todo(name);
}

/* ---- a lab's known issues (IBVCT_KNOWN_ISSUES) ------------------------------ */
/*
 * The waiver form of openQA and SUSE's QA: a listed failure is a known
 * deviation with its reason, where the conditions of its line hold. One
 * line an issue:
 *   TEST [KEY=GLOB]... : REASON
 * KEY: kernel (uname -r), rdma-core (the version of the libibverbs
 * loaded: 44.0 from libibverbs.so.1.14.44.0; on the reference library the
 * release it plays, as that release's library names it: 44.0 or 56.1;
 * "-" when nothing tells), provider (the expectations key: rxe, mlx5, fake, ...),
 * transport (RC, UC, UD or XRC: the test's name starts with it, else
 * "-"); GLOB as the shell's (fnmatch). TEST may be a glob too. A line
 * without conditions holds everywhere.
 */
struct th_issue {
	char test[128];
	char *cond;			/* "KEY=GLOB ..." */
	char *reason;
};

static struct th_issue *th_issues;
static size_t th_nissues;
static char th_fact_kernel[128], th_fact_rdma[64];

static void th_facts(void)
{
	int (*played)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "verbs_ibvct_release");
	struct utsname u;
	Dl_info di;
	char real[PATH_MAX];
	const char *base, *v;

	snprintf(th_fact_kernel, sizeof(th_fact_kernel), "%s", uname(&u) ? "-" : u.release);
	snprintf(th_fact_rdma, sizeof(th_fact_rdma), "-");
	/* the reference core (libibverbs.so.1, no version in its name): the
	 * release it plays (ibvct-release.def), spelled as that release's
	 * library file spells it, Debian 12's libibverbs1 44.0-2 and Debian
	 * 13's 56.1-1, so that one line keys both */
	if (played) {
		snprintf(th_fact_rdma, sizeof(th_fact_rdma), "%s", played() >= 56 ? "56.1" : "44.0");
		return;
	}
	if (dladdr((void *)ibv_get_device_list, &di) && di.dli_fname &&
	    realpath(di.dli_fname, real)) {
		base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
		/* libibverbs.so.1.ABI.MAJOR.MINOR: rdma-core MAJOR.MINOR */
		if (!strncmp(base, "libibverbs.so.1.", 16) && (v = strchr(base + 16, '.')))
			snprintf(th_fact_rdma, sizeof(th_fact_rdma), "%s", v + 1);
	}
}

static const char *th_transport(const char *name)
{
	if (!strncmp(name, "rc_", 3))
		return "RC";
	if (!strncmp(name, "uc_", 3))
		return "UC";
	if (!strncmp(name, "ud_", 3))
		return "UD";
	if (!strncmp(name, "xrc_", 4))
		return "XRC";
	return "-";
}

static void th_issues_load(void)
{
	const char *path = getenv("IBVCT_KNOWN_ISSUES");
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (!path || !path[0])
		return;
	f = fopen(path, "r");
	if (!f) {
		printf("# known issues: %s: %s\n", path, strerror(errno));
		return;
	}
	th_facts();
	while (getline(&line, &cap, f) > 0) {
		char *colon, *p = line;
		struct th_issue *more;
		int n = 0;

		line[strcspn(line, "\n")] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		colon = strstr(p, " : ");
		if (*p == '#' || !*p || !colon)
			continue;
		more = realloc(th_issues, (th_nissues + 1) * sizeof(*th_issues));
		if (!more)
			break;
		th_issues = more;
		if (sscanf(p, "%127s%n", th_issues[th_nissues].test, &n) != 1)
			continue;
		*colon = 0;
		th_issues[th_nissues].cond = strdup(p + n);
		th_issues[th_nissues].reason = strdup(colon + 3);
		th_nissues++;
	}
	free(line);
	fclose(f);
	printf("# known issues: %s (kernel %s, rdma-core %s, provider %s)\n", path, th_fact_kernel,
	       th_fact_rdma, th_dev.provider);
}

/* Whether every KEY=GLOB of cond holds for the test. */
static int th_issue_holds(const char *cond, const char *name)
{
	char c[1024], *tok, *save = NULL;

	snprintf(c, sizeof(c), "%s", cond);
	for (tok = strtok_r(c, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		const char *fact;

		if (!eq)
			return 0;
		*eq = 0;
		if (!strcmp(tok, "kernel"))
			fact = th_fact_kernel;
		else if (!strcmp(tok, "rdma-core"))
			fact = th_fact_rdma;
		else if (!strcmp(tok, "provider"))
			fact = th_dev.provider;
		else if (!strcmp(tok, "transport"))
			fact = th_transport(name);
		else
			return 0;	/* a key this release does not know: not ours */
		if (fnmatch(eq + 1, fact, 0))
			return 0;
	}
	return 1;
}

static const char *th_issue_todo(const char *name)
{
	static char reason[1024];

	for (size_t i = 0; i < th_nissues; i++)
		if (!fnmatch(th_issues[i].test, name, 0) && th_issue_holds(th_issues[i].cond, name)) {
			snprintf(reason, sizeof(reason), "known issue: %s", th_issues[i].reason);
			return reason;
		}
	return NULL;
}

/* ---- the suite on the runner ------------------------------------------------ */
static struct th_ctx th_c;		/* the running test's, in its process */
static char th_fixed[128];		/* under a TODO that passes */

/* A fresh fake-kernel run dir for this process (when one is in use). */
static void th_fk_rundir(void)
{
	char fk[sizeof(th_fk_base) + 32];

	if (!th_fk_base[0])
		return;
	snprintf(fk, sizeof(fk), "%s/%u-%d", th_fk_base, ++th_fk_seq, (int)getpid());
	if (!mkdir(fk, 0700))
		setenv("IBVCT_RUNDIR", fk, 1);
}

static enum tr_verdict th_start(const char *base, char *why, size_t len)
{
	th_keep = getenv("IBVCT_KEEP") && !strcmp(getenv("IBVCT_KEEP"), "1");
	if (th__ref_setup(why, len))
		return TR_FAIL;
	if (th_probe(why, len, base))
		return TR_SKIP;
	th_release_learn();
	th_expect_load();
	th_issues_load();
	snprintf(th_fixed, sizeof(th_fixed), "remove it from fixtures/expect/%s.txt",
		 th_dev.provider);
	if (getenv("IBVCT_RUNDIR")) {
		const char *tmp = getenv("TMPDIR");

		if (!tmp || tmp[0] != '/' ||
		    strlen(tmp) + sizeof("/" TH_FK_NAME) > sizeof(th_fk_base))
			tmp = "/tmp";
		snprintf(th_fk_base, sizeof(th_fk_base), "%s/" TH_FK_NAME, tmp);
		if (!mkdtemp(th_fk_base))
			th_fk_base[0] = 0;
	}
	return TR_RUN;
}

static void th_banner(void)
{
	printf("# target %s, device %s port %u%s%s%s%s, XRC %s\n",
#ifdef TH_TARGET_REF
	       "ref",
#else
	       "system",
#endif
	       th_dev.dev, th_dev.port, th_mode() ? ", mode " : "", th_mode() ? th_mode() : "",
	       th_lifetime() ? ", lifetime " : "", th_lifetime() ? th_lifetime() : "",
	       th_dev.xrc > 0 ? "yes" : th_dev.xrc_why);
	printf("# expectations: fixtures/expect/%s.txt (%s)\n", th_dev.provider,
	       th_dev.provider_how);
	printf("# release: rdma-core %d, linux %d.%d (%s)\n", th_rel.rdma_core, th_rel.linux_major,
	       th_rel.linux_minor, th_rel.how);
}

static enum tr_verdict th_decide(const struct tr_test *rt, const char **todo, char *why,
				 size_t len)
{
	const struct th_test *t = rt->state;

	*todo = th_expect_todo(rt->name);
	if ((t->flags & TH_XRC) && th_dev.xrc < 0) {
		snprintf(why, len, "%s", th_dev.xrc_why);
		return TR_FAIL;
	}
	if ((t->flags & TH_XRC) && !th_dev.xrc)
		snprintf(why, len, "%s", th_dev.xrc_why);
	else if ((t->flags & TH_NOXRC) && th_dev.xrc_cap && !th_mode())
		snprintf(why, len, "%s has IBV_DEVICE_XRC", th_dev.dev);
	else if ((t->flags & TH_REF_ONLY) && !th_mode())
		snprintf(why, len, "needs the reference target's scripted fake device");
	else
		return TR_RUN;
	return TR_SKIP;
}

static void th_enter(const struct tr_test *rt)
{
	const struct th_test *t = rt->state;

	th_c.dev_name = th_dev.dev;
	th_c.port = th_dev.port;
	th_c.dir = tr_dir();
	/* a private fake-kernel run dir per test, when one is in use */
	th_fk_rundir();
	if ((t->flags & TH_NOXRC) && th_dev.xrc_cap)
		th_reenv(NULL, 0, NULL);	/* ref only; skips elsewhere */
	if (!(t->flags & (TH_NO_CTX | TH_NOXRC)))
		th_c.ctx = th_open();
}

/* Every suite test's runner function (TH_TEST): its state is the th_test. */
void th__run(void **state)
{
	const struct th_test *t = *state;

	t->fn(&th_c);
}

static void th_leave(const struct tr_test *rt, int failed)
{
	if (!failed && th_not_run[0])
		th_fail("known deviation: %s", th_not_run);
	if (!failed && th_c.ctx && ibv_close_device(th_c.ctx))
		th_fail("ibv_close_device failed");
}

static int th_finish(int failed)
{
	int a;

	if (th_keep && th_fk_base[0])
		printf("# fake-kernel run dirs kept: %s\n", th_fk_base);
	/* fake-kernel daemons leave on their own once their clients are gone */
	for (a = 0; th_fk_base[0] && !th_keep && a < 40 && th_rm_fk_base(); a++)
		usleep(50000);
	th__ref_cleanup();
	while (th_nexp)
		free(th_exp[--th_nexp].reason);
	while (th_nissues) {
		free(th_issues[--th_nissues].cond);
		free(th_issues[th_nissues].reason);
	}
	free(th_issues);
	free(th_exp);
	return 0;
}

int th_main(int argc, char **argv)
{
	struct tr_suite s = {
		.name = "suite", .env_help = "IBVCT_DEVICE, IBVCT_SCRIPT (TARGET=ref), "
		"IBVCT_EXPECT, IBVCT_DRIVER, IBVCT_LIFETIME (system target)",
		.start = th_start, .banner = th_banner, .decide = th_decide, .enter = th_enter,
		.leave = th_leave, .finish = th_finish, .todo_fixed = th_fixed,
	};

	return tr_run(&s, argc, argv);
}

/* ---- verbs helpers: tf.c, but for this one --------------------------------- */
void th_loopback_av(struct ibv_context *ctx, uint8_t port, struct ibv_ah_attr *ah)
{
	assert_int_equal(tf_loopback_av(ctx, port, ah), 0);
}

/* ---- the traffic of an importer (IMPORT-06, IMPORT-08) ----------------- */
/* A context that imported a PD and an MR uses them in QPs of its own. It
 * never ends the test, so that a peer, a forked child or an exec'd program
 * can run it and check its answer with TR_ checks. */
/* n completions, each within 10 s (times IBVCT_TIMEOUT_MULT): a guard
 * against a lost completion, far past any loaded machine's delay; the
 * runner's load-stretched limit of the test stays the one for a hang */
static int wait_ok(struct ibv_cq *cq, int n, char *why, size_t whylen, const char *step)
{
	struct ibv_wc wc;
	long long end;
	int got;

	while (n-- > 0) {
		end = tr_now_ms() + 10000 * tr_timeout_mult();
		while ((got = ibv_poll_cq(cq, 1, &wc)) == 0 && tr_now_ms() < end)
			;
		if (got != 1) {
			snprintf(why, whylen, "%s: no completion", step);
			return -1;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			snprintf(why, whylen, "%s: completion status %s", step,
				 ibv_wc_status_str(wc.status));
			return -1;
		}
	}
	return 0;
}

int th_import_traffic(struct ibv_pd *pd, struct ibv_mr *mr, void *addr, size_t len,
		      uint8_t port, void *got, const void *put, char *why, size_t whylen)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 8, NULL, NULL, 0);
	struct ibv_qp *a = NULL, *b = NULL;
	struct ibv_mr *own_mr = NULL;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rr, *rbad;
	struct ibv_sge sge, rsge;
	char *own = calloc(1, len);
	int ret = -1;

	snprintf(why, whylen, "ok");
	if (!cq || !own) {
		snprintf(why, whylen, "create_cq: %s", strerror(errno));
		goto out;
	}
	a = tf_rc_qp(pd, cq, IBV_QPT_RC);
	b = tf_rc_qp(pd, cq, IBV_QPT_RC);
	if (!a || !b) {
		snprintf(why, whylen, "create_qp on the imported PD: %s", strerror(errno));
		goto out;
	}
	if (tf_pair_connect(a, b, port, 1)) {
		snprintf(why, whylen, "connect the importer's RC pair: %s", strerror(errno));
		goto out;
	}
	own_mr = ibv_reg_mr(pd, own, len, IBV_ACCESS_LOCAL_WRITE);
	if (!own_mr) {
		snprintf(why, whylen, "reg_mr on the imported PD: %s", strerror(errno));
		goto out;
	}
	/* the imported MR as the lkey of a SEND */
	rsge = (struct ibv_sge){ .addr = (uintptr_t)own, .length = (uint32_t)len,
				 .lkey = own_mr->lkey };
	rr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	sge = (struct ibv_sge){ .addr = (uintptr_t)addr, .length = (uint32_t)len,
				.lkey = mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	errno = ibv_post_recv(b, &rr, &rbad);
	if (errno) {
		snprintf(why, whylen, "post_recv: %s", strerror(errno));
		goto out;
	}
	errno = ibv_post_send(a, &wr, &bad);
	if (errno) {
		snprintf(why, whylen, "post_send of a SEND from the imported lkey: %s",
			 strerror(errno));
		goto out;
	}
	if (wait_ok(cq, 2, why, whylen, "SEND from the imported lkey"))
		goto out;
	memcpy(got, own, len);
	/* the imported MR's rkey at the importer's QP */
	memcpy(own, put, len);
	sge = (struct ibv_sge){ .addr = (uintptr_t)own, .length = (uint32_t)len,
				.lkey = own_mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)addr;
	wr.wr.rdma.rkey = mr->rkey;
	errno = ibv_post_send(a, &wr, &bad);
	if (errno) {
		snprintf(why, whylen, "post_send of an RDMA WRITE to the imported rkey: %s",
			 strerror(errno));
		goto out;
	}
	if (wait_ok(cq, 1, why, whylen, "RDMA WRITE to the imported rkey"))
		goto out;
	ret = 0;
out:
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (own_mr)
		ibv_dereg_mr(own_mr);
	if (cq)
		ibv_destroy_cq(cq);
	free(own);
	return ret;
}

/* ---- two hosts: the suite's hooks around th_host.c's --------------------------- */
static char th_prog[64];

static enum tr_verdict th2_start(const char *base, char *why, size_t len)
{
	char mine[1024] = "";
	enum tr_verdict v;

	switch (th_host_start(th_prog, why, len)) {
	case 0:
		break;
	case -2:
		return TR_SKIP;	/* no peer: nothing ran, no result (status 3) */
	default:
		return TR_FAIL;	/* set up wrong: the run fails, saying why */
	}
	v = th_start(base, mine, sizeof(mine));
	/* a host for the run (not one per test): the fabric's entries and
	 * the other host's wires name its run dir */
	if (v == TR_RUN && th_fk_base[0]) {
		char fk[sizeof(th_fk_base) + 8];

		snprintf(fk, sizeof(fk), "%s/host", th_fk_base);
		if (!mkdir(fk, 0700))
			setenv("IBVCT_RUNDIR", fk, 1);
	}
	v = th_host_decide("(start)", v, mine, sizeof(mine), 0);
	if (v != TR_RUN)
		snprintf(why, len, "%s", mine);
	return v;
}

static enum tr_verdict th2_decide(const struct tr_test *rt, const char **todo, char *why,
				  size_t len)
{
	enum tr_verdict v = th_decide(rt, todo, why, len);

	return th_host_decide(rt->name, v, why, len, 1);
}

static void th2_enter(const struct tr_test *rt)
{
	th_host_enter();
	th_c.dev_name = th_dev.dev;
	th_c.port = th_dev.port;
	th_c.dir = tr_dir();
	th_c.ctx = th_open();
	(void)rt;
}

static enum tr_verdict th2_settle(const struct tr_test *rt, enum tr_verdict v, char *why,
				  size_t len)
{
	(void)rt;
	return th_host_settle(tr_dir(), v, why, len);
}

static int th2_finish(int failed)
{
	int rc = th_host_finish(), f = th_finish(failed);

	/* a failure is a verdict; else no result (3: th_host.c) is not a pass */
	return f ? f : rc;
}

static int th2_run(int argc, char **argv)
{
	struct tr_suite s = {
		.name = "suite", .env_help = "IBVCT_ROLE, IBVCT_PEER, IBVCT_PEER_PORT, "
		"IBVCT_RUN_ID (two hosts), IBVCT_DEVICE, IBVCT_SCRIPT (TARGET=ref), "
		"IBVCT_EXPECT, IBVCT_DRIVER",
		.start = th2_start, .banner = th_banner, .decide = th2_decide, .enter = th2_enter,
		.leave = th_leave, .settle = th2_settle, .finish = th2_finish,
		.todo_fixed = th_fixed,
	};

	return tr_run(&s, argc, argv);
}

#ifdef TH_TARGET_REF
/* Without a role on the reference target: this program is host A, and a
 * second process of it host B, each on a fake host of its own, the two on
 * one fabric, meeting on 127.0.0.1. Host B's TAP is kept in the scratch
 * dir and shown when it failed (each of host A's verdicts holds both
 * halves anyway). */
static int th2_pair(int argc, char **argv)
{
	char base[64] = "/tmp/ibvct-2h.XXXXXX", path[128], buf[64];
	const char *tmp = getenv("TMPDIR");
	int rc, st = 0, fd, i;
	pid_t pid;

	/* the run's TMPDIR, as every scratch dir of the runner, where its
	 * paths fit; /tmp otherwise */
	if (tmp && tmp[0] == '/' && strlen(tmp) + sizeof("/ibvct-2h.XXXXXX") <= sizeof(base))
		snprintf(base, sizeof(base), "%s/ibvct-2h.XXXXXX", tmp);
	if (!mkdtemp(base)) {
		printf("Bail out! mkdtemp %s: %s\n", base, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/fabric", base);
	mkdir(path, 0700);
	setenv("IBVCT_FABRIC", path, 1);
	snprintf(path, sizeof(path), "%s/port", base);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		snprintf(path, sizeof(path), "%s/b.tap", base);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		snprintf(path, sizeof(path), "%s/port", base);
		setenv("IBVCT_ROLE", "server", 1);
		setenv("IBVCT_PEER_PORT", "0", 1);
		setenv("IBVCT_PEER_PORT_FILE", path, 1);
		setenv("IBVCT_TWOHOST_SIDE", "b", 1);
		unsetenv("IBVCT_PEER");
		/* one host of the machine reports to a lab's engine: A */
		unsetenv("IBVCT_RESULT_CMD");
		_exit(th2_run(argc, argv));
	}
	/* host B's port, once it listens (or it ended: then nothing listens) */
	buf[0] = 0;
	for (i = 0; i < 600 * tr_timeout_mult(); i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		if (buf[0] || waitpid(pid, &st, WNOHANG) == pid)
			break;
		usleep(100000);
	}
	snprintf(path, sizeof(path), "127.0.0.1:%ld", strtol(buf, NULL, 10));
	setenv("IBVCT_ROLE", "client", 1);
	setenv("IBVCT_PEER", path, 1);
	setenv("IBVCT_TWOHOST_SIDE", "a", 1);
	rc = th2_run(argc, argv);
	if (waitpid(pid, &st, 0) != pid)
		st = 1;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		FILE *f;
		char line[512];

		snprintf(path, sizeof(path), "%s/b.tap", base);
		printf("# host B (the target side) ended %s %d; its TAP:\n",
		       WIFEXITED(st) ? "with status" : "by signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			printf("#   %s", line);
		if (f)
			fclose(f);
		rc = rc ? rc : 1;
	}
	for (i = 0; i < 40 && nftw(base, th_rm_one, 16, FTW_DEPTH | FTW_PHYS); i++)
		usleep(50000);
	return rc;
}
#endif

int th_main_twohost(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');

	snprintf(th_prog, sizeof(th_prog), "%s", slash ? slash + 1 : argv[0]);
	th_prog[strcspn(th_prog, ".")] = 0;
	if (argc > 1 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-h") ||
			 !strcmp(argv[1], "--help")))
		return th2_run(argc, argv);
	if (getenv("IBVCT_ROLE") && getenv("IBVCT_ROLE")[0])
		return th2_run(argc, argv);
#ifdef TH_TARGET_REF
	return th2_pair(argc, argv);
#else
	/* a program with no test, or a name twice, fails even where it would skip */
	if (!tr_registered(NULL))
		return 1;
	printf("1..0 # SKIP two hosts: no peer host (IBVCT_ROLE=server|client and "
	       "IBVCT_PEER=HOST; ibvct conformance --peer HOST)\n");
	return 0;
#endif
}
