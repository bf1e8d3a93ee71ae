/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz corpus tests (t5004, t5203): replays every file of a
 * corpus dir through the harness's fz_one() (fake-provider/fuzz/, linked
 * built normally with FZ_LIB), in name order. The harness abort()s on a
 * broken promise; the SIGABRT handler here first names the file, so the
 * TAP comments say which input it was. fixtures/fuzz/README.md describes
 * the corpora.
 */
#ifndef FZ_REPLAY_H
#define FZ_REPLAY_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tr.h"

#define FZ_LIB
#include "../fuzz/fz_main.h"

static char fzr_current[4096 + 512];	/* dir + "/" + name */

static void fzr_on_abort(int sig)
{
	static const char pre[] = "# broken promise while replaying ";
	size_t n = strnlen(fzr_current, sizeof(fzr_current));

	/* async-signal-safe: write(2) only, then die of the signal as before */
	if (write(STDOUT_FILENO, pre, sizeof(pre) - 1) < 0 ||
	    write(STDOUT_FILENO, fzr_current, n) < 0 || write(STDOUT_FILENO, "\n", 1) < 0)
		_exit(134);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const char *fzr_src(void)
{
	const char *s = getenv("IBVCT_SRC");

	return s && s[0] ? s : ".";
}

static int fzr_filter(const struct dirent *e)
{
	return e->d_name[0] != '.' && strcmp(e->d_name, "README.md");
}

/* Every regular file of SRC/rel through fz_one(); returns how many, or -1
 * when the dir does not exist (a missing corpus is the caller's failure). */
static int fzr_replay_dir(const char *rel)
{
	struct dirent **names;
	char dir[4096];
	int n, i, count = 0;

	snprintf(dir, sizeof(dir), "%s/%s", fzr_src(), rel);
	n = scandir(dir, &names, fzr_filter, alphasort);
	if (n < 0)
		return -1;
	signal(SIGABRT, fzr_on_abort);
	for (i = 0; i < n; i++) {
		unsigned char *buf = NULL;
		struct stat st;
		ssize_t r;
		size_t len = 0;
		int fd;

		snprintf(fzr_current, sizeof(fzr_current), "%s/%s", dir, names[i]->d_name);
		free(names[i]);
		fd = open(fzr_current, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fail_msg("%s: cannot open", fzr_current);
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;		/* crashes-fixed/ and the like */
		}
		buf = malloc((size_t)st.st_size + 1);
		assert_non_null(buf);
		while (len < (size_t)st.st_size &&
		       (r = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
			len += (size_t)r;
		close(fd);
		assert_int_equal(len, (size_t)st.st_size);
		fz_one(buf, len);
		free(buf);
		count++;
	}
	free(names);
	fz_end();
	signal(SIGABRT, SIG_DFL);
	fzr_current[0] = 0;
	return count;
}

#endif /* FZ_REPLAY_H */
