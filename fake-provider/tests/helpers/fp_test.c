/* SPDX-License-Identifier: MIT */
/*
 * The fake provider's verbs tests' fixture (fp_test.h): the fake host in
 * the parent, a probe of its device in a child, the device in each test.
 * The parent also holds a monitor connection to the host's fake kernel
 * daemon, which keeps that daemon up from one test to the next (else each
 * test's device would start a daemon of its own, and that would be most of
 * a run's time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fk_client.h"
#include "fp_script.h"
#include "tf.h"
#include "../fp_test.h"

static const char *fpt_script;		/* NULL: the built-in one */
static char fpt_scratch[4096];
static struct fk_client *fpt_mon;

/* The device the tests will open, in a child: the parent stays without
 * verbs state. Its errno (0: there is one) comes back as the exit status. */
static int fpt_probe(void)
{
	struct ibv_context *c;
	int st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		c = tf_open_dev(NULL, NULL);
		if (!c)
			_exit(errno ? errno & 0xff : ENODEV);
		ibv_close_device(c);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

static enum tr_verdict fpt_start(const char *base, char *why, size_t len)
{
	const char *script;
	struct fk_connect_opts mon = { .flags = FK_CONNECT_MONITOR };
	char err[512];
	int e;

	if (fp_env_setup(fpt_script, getenv("IBVCT_PROVIDER"), NULL, fpt_scratch,
			 sizeof(fpt_scratch), err, sizeof(err))) {
		snprintf(why, len, "fp_env_setup: %s", err);
		return TR_FAIL;
	}
	/* the script as the provider names it to a daemon it starts */
	script = getenv("IBVCT_SCRIPT");
	mon.script = script ? script : "";
	e = fk_connect(NULL, FK_LIFETIME_CURRENT, &mon, &fpt_mon);
	if (e) {
		snprintf(why, len, "the fake kernel daemon: %s", strerror(e));
		return TR_FAIL;
	}
	e = fpt_probe();
	if (e) {
		snprintf(why, len, "no fake device (%s)", strerror(e));
		return TR_FAIL;
	}
	return TR_RUN;
}

static int fpt_finish(int failed)
{
	/* the daemon leaves once its last connection has (it makes no file on
	 * its way out: the tree can go meanwhile) */
	fk_disconnect(fpt_mon);
	fpt_mon = NULL;
	if (fpt_scratch[0])
		fp_rmtree(fpt_scratch);
	fpt_scratch[0] = 0;
	return 0;
}

int fpt_main(int argc, char **argv, const struct tr_test *tests, size_t n)
{
	struct tr_suite s = {
		.tests = tests, .n = n, .start = fpt_start, .finish = fpt_finish,
		.env_help = "IBVCT_PROVIDER (the fake provider plugin); a first argument "
			    "with a '/' names the script",
	};

	/* a test name has no '/': this is a script (e.g. one with a quirk
	 * that must make some test here fail) */
	if (argc > 1 && strchr(argv[1], '/')) {
		fpt_script = argv[1];
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	return tr_run(&s, argc, argv);
}

struct ibv_context *fpt_open(void)
{
	struct ibv_context *c = tf_open_dev(NULL, NULL);

	if (!c)
		tr_fail("the script's first device: %s", strerror(errno));
	return c;
}

void fpt_close(struct ibv_context *ctx)
{
	assert_int_equal(ibv_close_device(ctx), 0);
}
