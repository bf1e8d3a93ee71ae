/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness of the fake provider's script parser (src/script.c): the
 * input is a script text. It is parsed from a string and from a file, with
 * a roomy, a tiny and a zero-length error buffer, and every promise of
 * fp_script.h is checked: on error -1, the caller's struct byte-for-byte
 * untouched, a "file:line: why" message that fits its buffer and names a
 * line of the text; on success a struct within every documented bound;
 * string and file give the same verdict (and the same message) when the
 * text has no NUL byte. A broken promise is an abort(), a crash to AFL.
 * The corpus test t5004 replays fixtures/fuzz/script/ through fz_one().
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fp_script.h"
#include "fz_main.h"

#define FZ_ERRLEN	512
#define FZ_SENTINEL	0xa5

static char fz_path[4096];		/* the scratch file fp_script_load() reads */
static int fz_fd = -1;

static void fz_cleanup(void)
{
	if (fz_path[0])
		unlink(fz_path);
}

#ifdef FZ_LIB
void fz_end(void)
{
	fz_cleanup();
	fz_path[0] = 0;
	if (fz_fd >= 0)
		close(fz_fd);
	fz_fd = -1;
}
#endif

static void fz_setup(void)
{
	const char *tmp = getenv("FZ_SCRATCH");
	char templ[4096], *real;

	/* FZ_SCRATCH: a dir quality/fuzz-run removes afterwards (AFL ends its
	 * target with SIGKILL, so the atexit() removal never runs there); else
	 * tmpfs when there is one: the file is rewritten for every input, and
	 * ftruncate on a disk file system costs a hundred times more */
	if (tmp && tmp[0])
		;
	else if (!access("/dev/shm", W_OK | X_OK))
		tmp = "/dev/shm";
	else if (!(tmp = getenv("TMPDIR")) || !tmp[0])
		tmp = "/tmp";
	snprintf(templ, sizeof(templ), "%s/ibvct-fz-script-XXXXXX", tmp);
	fz_fd = mkstemp(templ);
	if (fz_fd < 0) {
		perror("fz-script: mkstemp");
		exit(2);
	}
	/* the real path: the parser's base dir for relative trace paths is the
	 * file's realpath, so the string parse gets the same name */
	real = realpath(templ, NULL);
	if (!real) {
		perror("fz-script: realpath");
		unlink(templ);
		exit(2);
	}
	snprintf(fz_path, sizeof(fz_path), "%s", real);
	free(real);
	atexit(fz_cleanup);
}

__attribute__((noreturn))
static void fz_broken(const char *what, const char *text, const char *err)
{
	fprintf(stderr, "fz-script: broken promise: %s\n", what);
	if (err)
		fprintf(stderr, "fz-script: message: %s\n", err);
	fprintf(stderr, "fz-script: text:\n%s\n", text);
	abort();
}

/* "name:line: why", line within the text (0 or up to one past its last). */
static void fz_check_msg(const char *name, const char *text, size_t len, const char *err)
{
	size_t nlen = strlen(name), lines = 1, i;
	const char *p;
	char *end;
	unsigned long line;

	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (strncmp(err, name, nlen) || err[nlen] != ':')
		fz_broken("message does not start with 'file:'", text, err);
	p = err + nlen + 1;
	if (*p < '0' || *p > '9')
		fz_broken("message has no line number", text, err);
	line = strtoul(p, &end, 10);
	if (line > lines)
		fz_broken("message names a line past the text", text, err);
	if (end[0] != ':' || end[1] != ' ' || !end[2])
		fz_broken("message has no ': why'", text, err);
}

static bool fz_name_ok(const char *n)
{
	size_t i, len = strnlen(n, FP_NAME_MAX);

	if (!len || len >= FP_NAME_MAX || n[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' && n[i] <= 'Z') ||
		      (n[i] >= '0' && n[i] <= '9') || strchr("_.-", n[i])))
			return false;
	return true;
}

/* Every bound the grammar and fp_script.h promise for a parsed script. */
static void fz_check_script(const struct fp_script *s, const char *text)
{
	int i, j;

	if (s->mode != FP_MODE_EXTENDED && s->mode != FP_MODE_LEGACY)
		fz_broken("mode out of range", text, NULL);
	if (s->lifetime != FP_LIFE_CURRENT && s->lifetime != FP_LIFE_SEED)
		fz_broken("lifetime out of range", text, NULL);
	if (!memchr(s->path, 0, sizeof(s->path)) ||
	    !memchr(s->trace_path, 0, sizeof(s->trace_path)))
		fz_broken("path not terminated", text, NULL);
	if (s->ndevs < 1 || s->ndevs > FP_MAX_DEVS)
		fz_broken("ndevs out of range", text, NULL);
	for (i = 0; i < s->ndevs; i++) {
		const struct fp_dev_spec *d = &s->dev[i];

		if (!fz_name_ok(d->name))
			fz_broken("bad device name", text, NULL);
		for (j = 0; j < i; j++)
			if (!strcmp(s->dev[j].name, d->name) ||
			    s->dev[j].node_guid == d->node_guid)
				fz_broken("device name or guid used twice", text, NULL);
		if (d->attr.node_guid != htobe64(d->node_guid))
			fz_broken("attr.node_guid is not the guid", text, NULL);
		if (d->node_type != IBV_NODE_CA && d->node_type != IBV_NODE_SWITCH &&
		    d->node_type != IBV_NODE_ROUTER && d->node_type != IBV_NODE_RNIC)
			fz_broken("node_type out of range", text, NULL);
		if (!memchr(d->attr.fw_ver, 0, sizeof(d->attr.fw_ver)))
			fz_broken("fw_ver not terminated", text, NULL);
		/* a clock: 1..10000000 kHz, a mask of 2^n - 1, never under rxe */
		if (d->clock_khz ? d->clock_khz > 10000000 || !d->clock_mask ||
				   (d->clock_mask & (d->clock_mask + 1)) ||
				   s->profile == FP_PROF_RXE
				 : d->clock_mask != 0)
			fz_broken("clock out of range", text, NULL);
		if (d->nports < 1 || d->nports > FP_MAX_PORTS ||
		    d->attr.phys_port_cnt != d->nports)
			fz_broken("nports out of range or not phys_port_cnt", text, NULL);
		for (j = 0; j < d->nports; j++) {
			const struct fp_port_spec *p = &d->port[j];

			if (p->ngids < 1 || p->ngids > FP_MAX_GIDS ||
			    p->npkeys < 1 || p->npkeys > FP_MAX_PKEYS)
				fz_broken("GID or P_Key count out of range", text, NULL);
			if (p->attr.max_mtu < IBV_MTU_256 || p->attr.max_mtu > IBV_MTU_4096 ||
			    p->attr.active_mtu < IBV_MTU_256 ||
			    p->attr.active_mtu > p->attr.max_mtu)
				fz_broken("port MTU out of range", text, NULL);
			if (p->attr.state < IBV_PORT_DOWN || p->attr.state > IBV_PORT_ACTIVE ||
			    p->attr.lmc > 7)
				fz_broken("port state or lmc out of range", text, NULL);
			if (p->attr.link_layer != IBV_LINK_LAYER_INFINIBAND &&
			    p->attr.link_layer != IBV_LINK_LAYER_ETHERNET)
				fz_broken("link layer out of range", text, NULL);
		}
	}
	if (s->nfaults < 0 || s->nfaults > FP_MAX_FAULTS)
		fz_broken("nfaults out of range", text, NULL);
	for (i = 0; i < s->nfaults; i++) {
		const struct fp_fault *f = &s->fault[i];

		if ((unsigned)f->op >= FP_OP__COUNT || f->nth < 1 || f->err < 1 ||
		    f->err > 4095 || f->calls)
			fz_broken("fault out of range", text, NULL);
	}
	if (s->nevents < 0 || s->nevents > FP_MAX_EVENTS)
		fz_broken("nevents out of range", text, NULL);
	for (i = 0; i < s->nevents; i++) {
		const struct fp_event_rule *e = &s->event[i];

		if ((unsigned)e->op >= FP_OP__COUNT || e->nth < 1 || e->port < 0 ||
		    e->port > FP_MAX_PORTS || e->calls || e->fired)
			fz_broken("event out of range", text, NULL);
	}
}

/* The same script without its path fields, which differ by design. */
static void fz_strip_paths(struct fp_script *s)
{
	memset(s->path, 0, sizeof(s->path));
}

static void fz_write_file(const unsigned char *data, size_t len)
{
	size_t off = 0;
	ssize_t n;

	if (ftruncate(fz_fd, 0))
		abort();
	while (off < len) {
		n = pwrite(fz_fd, data + off, len - off, (off_t)off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
}

void fz_one(const unsigned char *data, size_t len)
{
	static struct fp_script sent, s, s2;
	char err[FZ_ERRLEN], err2[FZ_ERRLEN], small[32];
	size_t smallen, i;
	char *text;
	bool has_nul;
	int rc, rc2;

	if (fz_fd < 0)
		fz_setup();
	/* an exact-size copy: a read past the end is an ASan report */
	text = malloc(len + 1);
	if (!text)
		abort();
	memcpy(text, data, len);
	text[len] = 0;
	has_nul = memchr(data, 0, len) != NULL;
	memset(&sent, FZ_SENTINEL, sizeof(sent));

	/* 1: from the string, roomy buffer */
	memcpy(&s, &sent, sizeof(s));
	memset(err, FZ_SENTINEL, sizeof(err));
	rc = fp_script_parse(fz_path, text, &s, err, sizeof(err));
	if (rc != 0 && rc != -1)
		fz_broken("return value neither 0 nor -1", text, NULL);
	if (rc) {
		if (!memchr(err, 0, sizeof(err)))
			fz_broken("message not terminated", text, NULL);
		if (memcmp(&s, &sent, sizeof(s)))
			fz_broken("refused script changed the caller's struct", text, err);
		fz_check_msg(fz_path, text, strlen(text), err);
	} else {
		fz_check_script(&s, text);
		if (s.path[0])
			fz_broken("a parsed string has a path", text, NULL);
	}

	/* 2: the same again: one verdict, one result */
	memset(&s2, 0, sizeof(s2));
	rc2 = fp_script_parse(fz_path, text, &s2, err2, sizeof(err2));
	if (rc2 != rc || (rc && strcmp(err, err2)) || (!rc && memcmp(&s, &s2, sizeof(s))))
		fz_broken("two parses of one text differ", text, err);

	/* 3: tiny and zero-length error buffers: nothing written past them */
	smallen = 1 + len % 24;
	memset(small, FZ_SENTINEL, sizeof(small));
	rc2 = fp_script_parse(fz_path, text, &s2, small, smallen);
	if (rc2 != rc)
		fz_broken("verdict depends on the error buffer's size", text, err);
	for (i = smallen; i < sizeof(small); i++)
		if ((unsigned char)small[i] != FZ_SENTINEL)
			fz_broken("message written past its buffer", text, err);
	if (rc && !memchr(small, 0, smallen))
		fz_broken("short message not terminated", text, err);
	if (rc && strncmp(small, err, smallen - 1))
		fz_broken("short message is not a prefix of the message", text, err);
	memset(small, FZ_SENTINEL, sizeof(small));
	rc2 = fp_script_parse(fz_path, text, &s2, small, 0);
	if (rc2 != rc)
		fz_broken("verdict depends on the error buffer's size", text, err);
	for (i = 0; i < sizeof(small); i++)
		if ((unsigned char)small[i] != FZ_SENTINEL)
			fz_broken("message written into a zero-length buffer", text, err);

	/* 4: from a file: the same verdict, unless a NUL byte cut the string */
	fz_write_file(data, len);
	memcpy(&s2, &sent, sizeof(s2));
	memset(err2, FZ_SENTINEL, sizeof(err2));
	rc2 = fp_script_load(fz_path, &s2, err2, sizeof(err2));
	if (rc2) {
		if (!memchr(err2, 0, sizeof(err2)))
			fz_broken("file: message not terminated", text, NULL);
		if (memcmp(&s2, &sent, sizeof(s2)))
			fz_broken("file: refused script changed the caller's struct", text, err2);
		/* the file's lines: count them over the bytes, NULs and all */
		{
			char *copy = malloc(len + 1);
			size_t j;

			if (!copy)
				abort();
			for (j = 0; j < len; j++)
				copy[j] = data[j] ? (char)data[j] : ' ';
			copy[len] = 0;
			fz_check_msg(fz_path, copy, len, err2);
			free(copy);
		}
	} else {
		fz_check_script(&s2, text);
		if (strcmp(s2.path, fz_path))
			fz_broken("file: path is not the file's real path", text, NULL);
	}
	if (has_nul) {
		if (!rc2)
			fz_broken("file with a NUL byte accepted", text, NULL);
	} else {
		if (rc2 != rc || (rc && strcmp(err, err2)))
			fz_broken("string and file verdicts differ", text, rc ? err : err2);
		if (!rc) {
			fz_strip_paths(&s);
			fz_strip_paths(&s2);
			if (memcmp(&s, &s2, sizeof(s)))
				fz_broken("string and file give different scripts", text, NULL);
		}
	}
	free(text);
}
