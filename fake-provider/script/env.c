/* SPDX-License-Identifier: MIT */
/*
 * Process environment for the reference target: a private scratch dir, or
 * a shared fake host (below), holding the fake sysfs tree and the fake
 * kernel's run dir, and the variables that point ref-impl and the provider
 * at them. Used by ibvct-run and by tests before their first ibv_* call.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fp_script.h"

static int fp_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) ? errno : 0;
}

int fp_rmtree(const char *path)
{
	int ret;

	if (!path || !path[0] || !strcmp(path, "/"))
		return EINVAL;
	/* FTW_PHYS: never follow the tree's symlinks out of it */
	ret = nftw(path, fp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (ret < 0)
		return errno;
	return ret;
}

/*
 * Point this process at the fake host in dir (dir/sys, dir/run): SYSFS_PATH,
 * IBVCT_RUNDIR, IBVCT_SCRIPT (unset: the provider's built-in default, which
 * the tree matches), RDMAV_DRIVERS (when provider_path is given) and
 * IBVCT_RDMA_CORE when the script names the release the core must play
 * (ref-impl reads it at its first question; a script without the line
 * leaves the environment's as it is).
 */
static int fp_env_point(const char *dir, const char *abs_script, int rdma_core,
			const char *provider_path, char *err, size_t errlen)
{
	char sub[PATH_MAX + 8], *abs_provider = NULL;
	int ret = -1;

	snprintf(sub, sizeof(sub), "%s/sys", dir);
	if (setenv("SYSFS_PATH", sub, 1))
		goto out;
	snprintf(sub, sizeof(sub), "%s/run", dir);
	if (setenv("IBVCT_RUNDIR", sub, 1))
		goto out;
	if (abs_script ? setenv("IBVCT_SCRIPT", abs_script, 1) : unsetenv("IBVCT_SCRIPT"))
		goto out;
	if (rdma_core) {
		snprintf(sub, sizeof(sub), "%d", rdma_core);
		if (setenv("IBVCT_RDMA_CORE", sub, 1))
			goto out;
	}
	if (provider_path) {
		abs_provider = realpath(provider_path, NULL);
		if (setenv("RDMAV_DRIVERS", abs_provider ? abs_provider : provider_path, 1))
			goto out;
	}
	ret = 0;
out:
	if (ret)
		snprintf(err, errlen, "ibvct: setenv: %s", strerror(errno));
	free(abs_provider);
	return ret;
}

/*
 * The script both setups start from, refused before anything is made: a
 * fresh struct parsed from script_path (NULL: the built-in default), and
 * its absolute path (*abs_script, NULL for the default). NULL on error.
 */
static struct fp_script *fp_env_script(const char *script_path, char **abs_script,
				       char *err, size_t errlen)
{
	struct fp_script *s = calloc(1, sizeof(*s));

	*abs_script = NULL;
	if (!s) {
		snprintf(err, errlen, "ibvct: out of memory");
		return NULL;
	}
	if (!script_path) {
		fp_script_default(s);
		return s;
	}
	if (fp_script_load(script_path, s, err, errlen))
		goto err_free;
	*abs_script = realpath(script_path, NULL);
	if (!*abs_script) {
		snprintf(err, errlen, "%s: %s", script_path, strerror(errno));
		goto err_free;
	}
	return s;

err_free:
	free(s);
	return NULL;
}

int fp_env_setup(const char *script_path, const char *provider_path,
		 const char *dir_parent, char *scratch, size_t scratch_len,
		 char *err, size_t errlen)
{
	struct fp_script *s;
	char dir[PATH_MAX], sub[PATH_MAX + 8];
	char *abs_script = NULL;
	int ret = -1;

	if (!dir_parent || !dir_parent[0])
		dir_parent = getenv("TMPDIR");
	if (!dir_parent || !dir_parent[0])
		dir_parent = "/tmp";
	s = fp_env_script(script_path, &abs_script, err, errlen);
	if (!s)
		return -1;
	if (snprintf(dir, sizeof(dir), "%s/ibvct.XXXXXX", dir_parent) >= (int)sizeof(dir) ||
	    !mkdtemp(dir)) {
		snprintf(err, errlen, "ibvct: cannot make a scratch dir in %s: %s",
			 dir_parent, strerror(errno));
		goto out_free;
	}
	if (strlen(dir) >= scratch_len) {
		snprintf(err, errlen, "ibvct: scratch path %s too long", dir);
		goto err_rm;
	}
	snprintf(sub, sizeof(sub), "%s/sys", dir);
	if (fp_sysfs_write(s, sub, err, errlen))
		goto err_rm;
	snprintf(sub, sizeof(sub), "%s/run", dir);
	if (mkdir(sub, 0700)) {
		snprintf(err, errlen, "ibvct: mkdir %s: %s", sub, strerror(errno));
		goto err_rm;
	}
	if (fp_env_point(dir, abs_script, s->rdma_core, provider_path, err, errlen))
		goto err_rm;
	strcpy(scratch, dir);
	ret = 0;
	goto out_free;

err_rm:
	fp_rmtree(dir);
out_free:
	free(abs_script);
	free(s);
	return ret;
}

/* ---- shared fake hosts ------------------------------------------------------- */
/*
 * On a real machine every program of a user that opens a device reaches the
 * same HCA. A shared fake host is the same for the reference target: one
 * directory per host name under the user's hosts dir, holding the sysfs tree
 * written from the host's script, the fake kernel's run dir and the script
 * text itself, so that every program started for that host sees the same
 * devices, the same daemon and the same fabric. A host serves one script:
 * a program that asks for another one while the host is in use is refused,
 * never mixed in (an idle host is rebuilt for the new script).
 */
#define FP_HOST_SCRIPT	"script.fps"
#define FP_HOST_ORIGIN	"script.origin"
#define FP_HOST_USERS	"users"

/* The dir holding the hosts: $IBVCT_HOSTS_DIR, else $XDG_RUNTIME_DIR/ibvct,
 * else /tmp/ibvct-<uid>; made 0700 and refused if it is not ours alone. */
static int fp_hosts_dir(char *out, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("IBVCT_HOSTS_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (env && env[0])
		snprintf(out, len, "%s", env);
	else if (xdg && xdg[0])
		snprintf(out, len, "%s/ibvct", xdg);
	else
		snprintf(out, len, "/tmp/ibvct-%ld", (long)getuid());
	if (mkdir(out, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "ibvct: mkdir %s: %s", out, strerror(errno));
		return -1;
	}
	if (lstat(out, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077)) {
		snprintf(err, errlen, "ibvct: %s must be a directory of this user closed to "
			 "others (mode 0700)", out);
		return -1;
	}
	return 0;
}

static char *fp_read_all(const char *path, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1), *nb;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf)
		goto err;
	while ((r = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			if (cap >= (1u << 21))
				goto err;
			nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				goto err;
			buf = nb;
			cap *= 2;
		}
	}
	if (r < 0)
		goto err;
	close(fd);
	buf[len] = '\0';
	*lenp = len;
	return buf;
err:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int fp_write_all(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t w = fd < 0 ? -1 : write(fd, text, len);

	if (fd >= 0 && close(fd))
		w = -1;
	return w == (ssize_t)len ? 0 : -1;
}

/* In use: some ibvct-run holds its users lock, or its daemon stays up (a
 * daemon exits on its own soon after its last client: give it 3 s). */
static bool fp_host_in_use(const char *dir)
{
	char path[PATH_MAX], *pidtext;
	bool used = false;
	size_t len;
	long pid;
	int fd, i;

	snprintf(path, sizeof(path), "%s/" FP_HOST_USERS, dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		used = flock(fd, LOCK_EX | LOCK_NB) != 0;
		close(fd);
	}
	if (used)
		return true;
	snprintf(path, sizeof(path), "%s/run/fkd.pid", dir);
	pidtext = fp_read_all(path, &len);
	pid = pidtext ? strtol(pidtext, NULL, 10) : 0;
	free(pidtext);
	for (i = 0; pid > 0 && i < 150; i++) {
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			return false;
		usleep(20000);
	}
	return pid > 0;
}

int fp_env_setup_shared(const char *host, const char *script_path, const char *provider_path,
			int *users_fd, char *hostdir, size_t hostdir_len, char *err, size_t errlen)
{
	char base[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32], *text = NULL, *have = NULL;
	char *abs_script = NULL;
	const char *origin;
	struct fp_script *s;
	size_t len = 0, hlen = 0;
	int lock_fd = -1, ufd = -1, ret = -1;

	*users_fd = -1;
	for (const char *p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.') ||
		    (p == host && *p == '.')) {
			snprintf(err, errlen, "ibvct: host name '%s': use [A-Za-z0-9_.-], "
				 "not starting with '.'", host);
			return -1;
		}
	if (!host[0] || strlen(host) > 64) {
		snprintf(err, errlen, "ibvct: host name must have 1 to 64 characters");
		return -1;
	}
	/* the script first: a bad one is refused before anything is touched */
	s = fp_env_script(script_path, &abs_script, err, errlen);
	if (!s)
		return -1;
	if (abs_script) {
		text = fp_read_all(abs_script, &len);
		if (!text) {
			snprintf(err, errlen, "%s: %s", script_path, strerror(errno));
			goto out;
		}
		origin = abs_script;
	} else {
		text = strdup(fp_script_default_text);
		len = text ? strlen(text) : 0;
		origin = "the built-in default script";
	}
	if (!text || fp_hosts_dir(base, sizeof(base), err, errlen))
		goto out;
	if (snprintf(dir, sizeof(dir), "%s/host-%s", base, host) >= (int)sizeof(dir) ||
	    strlen(dir) >= hostdir_len) {
		snprintf(err, errlen, "ibvct: hosts dir path too long");
		goto out;
	}
	/* one setup at a time per host */
	snprintf(path, sizeof(path), "%s/host-%s.lock", base, host);
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX)) {
		snprintf(err, errlen, "ibvct: lock %s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/" FP_HOST_SCRIPT, dir);
	have = fp_read_all(path, &hlen);
	if (have && (hlen != len || memcmp(have, text, len))) {
		if (fp_host_in_use(dir)) {
			char from[PATH_MAX] = "?";
			char *o;
			size_t olen;

			snprintf(path, sizeof(path), "%s/" FP_HOST_ORIGIN, dir);
			o = fp_read_all(path, &olen);
			if (o)
				snprintf(from, sizeof(from), "%s", o);
			free(o);
			snprintf(err, errlen, "ibvct: fake host '%s' (%s) is in use with another "
				 "script (%s); run with --host NAME for a second host, or "
				 "--private", host, dir, from);
			goto out;
		}
		fp_rmtree(dir);		/* idle: rebuilt for this script */
		free(have);
		have = NULL;
	}
	if (!have) {
		fp_rmtree(dir);		/* a half-made one from a crash */
		if (mkdir(dir, 0700)) {
			snprintf(err, errlen, "ibvct: mkdir %s: %s", dir, strerror(errno));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/sys", dir);
		if (fp_sysfs_write(s, path, err, errlen))
			goto err_rm;
		snprintf(path, sizeof(path), "%s/run", dir);
		if (mkdir(path, 0700)) {
			snprintf(err, errlen, "ibvct: mkdir %s: %s", path, strerror(errno));
			goto err_rm;
		}
		snprintf(path, sizeof(path), "%s/" FP_HOST_ORIGIN, dir);
		if (fp_write_all(path, origin, strlen(origin)))
			goto err_write;
		/* written last: its presence means the host is complete */
		snprintf(path, sizeof(path), "%s/" FP_HOST_SCRIPT, dir);
		if (fp_write_all(path, text, len))
			goto err_write;
	}
	snprintf(path, sizeof(path), "%s/" FP_HOST_USERS, dir);
	ufd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (ufd < 0 || flock(ufd, LOCK_SH)) {
		snprintf(err, errlen, "ibvct: lock %s: %s", path, strerror(errno));
		goto out;
	}
	if (fp_env_point(dir, abs_script, s->rdma_core, provider_path, err, errlen))
		goto out;
	snprintf(hostdir, hostdir_len, "%s", dir);
	*users_fd = ufd;
	ufd = -1;
	ret = 0;
	goto out;

err_write:
	snprintf(err, errlen, "ibvct: write %s: %s", path, strerror(errno));
err_rm:
	fp_rmtree(dir);
out:
	if (ufd >= 0)
		close(ufd);
	if (lock_fd >= 0)
		close(lock_fd);		/* drops the setup lock */
	free(abs_script);
	free(have);
	free(text);
	free(s);
	return ret;
}
