/* SPDX-License-Identifier: MIT */
/*
 * Linked into the test and suite programs of a COVERAGE=1 build only, with
 * -Wl,--wrap=_exit: a forked test child ends with _exit(), which skips the
 * exit-time dump of the coverage counters, so everything the child ran
 * (most of every suite and compat test) would be missing from the report.
 * Here _exit() becomes exit(), whose exit-time handlers make each
 * instrumented object (the program, libibverbs.so.1, the provider plugin)
 * write its own counters. One call of libgcov's __gcov_dump() would not
 * do: it reaches only the objects that share the program's libgcov state,
 * and the library's version script hides its copy. What _exit() leaves
 * unwritten stays unwritten: pending stdio output is dropped first, so a
 * child never prints its parent's unflushed lines again.
 */
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>

void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	__fpurge(stdout);
	__fpurge(stderr);
	exit(status);
}
