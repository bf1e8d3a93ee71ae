/* SPDX-License-Identifier: MIT */
/*
 * The entry shared by the fuzz harnesses (fake-provider/fuzz/): each
 * defines fz_one(), which runs one input and abort()s on a broken promise.
 * Built by afl-cc it is AFL++'s persistent loop over the shared-memory test
 * case; built normally (and with no arguments under AFL) it replays the
 * files named on the command line. With FZ_LIB defined there is no main():
 * the corpus tests (t5004, t5203) link fz_one() and replay the corpora.
 */
#ifndef FZ_MAIN_H
#define FZ_MAIN_H

#include <stddef.h>

void fz_one(const unsigned char *data, size_t len);
#ifdef FZ_LIB
/* Removes what fz_one() made to run its inputs (a scratch file): a test's
 * process ends in _exit(), and no atexit() removal runs there. */
void fz_end(void);
#endif
#ifdef FZ_HAVE_SEEDS
/* Writes the harness's seed inputs into dir: `HARNESS --seeds DIR`. */
int fz_write_seeds(const char *dir);
#endif

#ifndef FZ_LIB
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();
#endif

/* A whole file, at most max bytes (more is an error: inputs are small). */
static unsigned char *fz_read_file(const char *path, size_t max, size_t *len)
{
	unsigned char *buf = malloc(max + 1);
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf)
		goto err;
	while ((r = read(fd, buf + n, max + 1 - n)) > 0)
		n += (size_t)r;
	if (r < 0 || n > max)
		goto err;
	close(fd);
	*len = n;
	return buf;
err:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int i;

#ifdef __AFL_FUZZ_TESTCASE_LEN
	if (argc < 2) {
		unsigned char *buf;

		__AFL_INIT();
		buf = __AFL_FUZZ_TESTCASE_BUF;
		while (__AFL_LOOP(10000))
			fz_one(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
		return 0;
	}
#endif
#ifdef FZ_HAVE_SEEDS
	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return fz_write_seeds(argv[2]) ? 1 : 0;
#endif
	if (argc < 2) {
		fprintf(stderr, "usage: %s INPUT...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		size_t len;
		unsigned char *buf = fz_read_file(argv[i], 1 << 20, &len);

		if (!buf) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			return 1;
		}
		fz_one(buf, len);
		free(buf);
	}
	return 0;
}
#endif /* FZ_LIB */

#endif /* FZ_MAIN_H */
