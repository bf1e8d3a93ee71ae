/* SPDX-License-Identifier: MIT */
/*
 * The call trace: one line per call, "<pid> <text>\n", appended to the
 * script's trace file. Opened lazily with O_APPEND and written with one
 * write() per line, so several processes (and threads) can share a file
 * without interleaving inside a line.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "fp_script.h"

static pthread_mutex_t fp_trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int fp_trace_fd = -1;
static bool fp_trace_failed;
static char fp_trace_opened[4096];	/* the path fp_trace_fd is open on */

static int fp_trace_open(const char *path)
{
	if (fp_trace_fd >= 0 && !strcmp(fp_trace_opened, path))
		return fp_trace_fd;
	if (fp_trace_fd > 2)
		close(fp_trace_fd);
	fp_trace_fd = -1;
	if (!strcmp(path, "-")) {
		fp_trace_fd = 2;
	} else {
		fp_trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fp_trace_fd < 0) {
			/* say it once; the provider keeps working untraced */
			if (!fp_trace_failed)
				dprintf(2, "ibvct: trace %s: %s\n", path, strerror(errno));
			fp_trace_failed = true;
			return -1;
		}
	}
	snprintf(fp_trace_opened, sizeof(fp_trace_opened), "%s", path);
	return fp_trace_fd;
}

void fp_trace(struct fp_script *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n, m, fd, saved = errno;

	if (!s || !s->trace_path[0])
		return;
	n = snprintf(line, sizeof(line), "%d ", (int)getpid());
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;	/* truncated: still one whole line */
	line[n++] = '\n';
	pthread_mutex_lock(&fp_trace_lock);
	fd = fp_trace_open(s->trace_path);
	if (fd >= 0 && write(fd, line, n) < 0) {
		/* nothing useful to do: tracing must never change the verb's result */
	}
	pthread_mutex_unlock(&fp_trace_lock);
	errno = saved;
}
