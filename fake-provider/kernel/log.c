/* SPDX-License-Identifier: MIT */
/*
 * The fake kernel daemon's log: fk_log for every line, fk_logv for the
 * lines of -v only. Where a line goes is its sink's, fk__vlog: the
 * daemon's (main.c) writes it to its log in one write(2); the protocol
 * fuzz harness (fuzz/fz-fkd.c), which links the daemon without main.c,
 * brings its own, which checks the line instead.
 */
#include <stdarg.h>

#include "fkd.h"

int fk_verbose;

void fk_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fk__vlog(fmt, ap);
	va_end(ap);
}

void fk_logv(const char *fmt, ...)
{
	va_list ap;

	if (!fk_verbose)
		return;
	va_start(ap, fmt);
	fk__vlog(fmt, ap);
	va_end(ap);
}
