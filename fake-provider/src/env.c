/* SPDX-License-Identifier: MIT */
/*
 * Process environment for the reference target: a private scratch dir
 * holding the fake sysfs tree and the fake kernel's run dir, and the
 * variables that point ref-impl and the provider at them. Used by
 * ibvct-run and by tests before their first ibv_* call.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
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

int fp_env_setup(const char *script_path, const char *provider_path,
		 const char *dir_parent, char *scratch, size_t scratch_len,
		 char *err, size_t errlen)
{
	struct fp_script *s;
	char dir[PATH_MAX], sub[PATH_MAX + 8];
	char *abs_script = NULL, *abs_provider = NULL;
	int ret = -1;

	if (!dir_parent || !dir_parent[0])
		dir_parent = getenv("TMPDIR");
	if (!dir_parent || !dir_parent[0])
		dir_parent = "/tmp";
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "ibvct: out of memory");
		return -1;
	}
	/* refuse a bad script before anything is made */
	if (script_path) {
		if (fp_script_load(script_path, s, err, errlen))
			goto out_free;
		abs_script = realpath(script_path, NULL);
		if (!abs_script) {
			snprintf(err, errlen, "%s: %s", script_path, strerror(errno));
			goto out_free;
		}
	} else {
		fp_script_default(s);
	}
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
	if (setenv("SYSFS_PATH", sub, 1))
		goto err_setenv;
	snprintf(sub, sizeof(sub), "%s/run", dir);
	if (mkdir(sub, 0700)) {
		snprintf(err, errlen, "ibvct: mkdir %s: %s", sub, strerror(errno));
		goto err_rm;
	}
	if (setenv("IBVCT_RUNDIR", sub, 1))
		goto err_setenv;
	/* no script: the provider's built-in default, which the tree above matches */
	if (abs_script ? setenv("IBVCT_SCRIPT", abs_script, 1) : unsetenv("IBVCT_SCRIPT"))
		goto err_setenv;
	if (provider_path) {
		abs_provider = realpath(provider_path, NULL);
		if (setenv("RDMAV_DRIVERS", abs_provider ? abs_provider : provider_path, 1))
			goto err_setenv;
	}
	strcpy(scratch, dir);
	ret = 0;
	goto out_free;

err_setenv:
	snprintf(err, errlen, "ibvct: setenv: %s", strerror(errno));
err_rm:
	fp_rmtree(dir);
out_free:
	free(abs_provider);
	free(abs_script);
	free(s);
	return ret;
}
