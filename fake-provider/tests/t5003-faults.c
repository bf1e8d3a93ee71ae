/* SPDX-License-Identifier: MIT */
/*
 * t5003: fault injection and event triggers (fake-provider/script/fault.c):
 * nth / from semantics, per-op counting, default errnos (one row per op),
 * name tables against fp_ops.def / fp_quirks.def, fp_events_due, and the
 * counters under concurrent callers. Also the call trace (trace.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "fp_script.h"
#include "tr.h"

static struct fp_script g_s;

static void load(const char *text)
{
	char err[512];

	if (fp_script_parse("t.fps", text, &g_s, err, sizeof(err)))
		fail_msg("%s", err);
}

TR_TEST(nth_fails_only_that_call)
{
	load("device d\nfault create_qp nth 3\n");
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), ENOMEM);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), 0);
}

TR_TEST(from_fails_that_call_and_every_later_one)
{
	int i;

	load("device d\nfault modify_qp from 2 errno EBUSY\n");
	assert_int_equal(fp_fault_check(&g_s, FP_OP_MODIFY_QP), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(fp_fault_check(&g_s, FP_OP_MODIFY_QP), EBUSY);
	load("device d\nfault post_send from 1\n");
	assert_int_equal(fp_fault_check(&g_s, FP_OP_POST_SEND), EIO);
}

TR_TEST(counters_are_per_op)
{
	load("device d\nfault create_qp nth 2\nfault create_cq nth 1 errno EAGAIN\n");
	/* calls of other ops do not advance create_qp's count */
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_ALLOC_PD), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_CQ), EAGAIN);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_CQ), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_CREATE_QP), ENOMEM);
	assert_int_equal(g_s.fault[0].calls, 2);
	assert_int_equal(g_s.fault[1].calls, 2);
}

TR_TEST(two_rules_on_one_op_count_the_same_calls)
{
	load("device d\nfault reg_mr nth 2 errno EPERM\nfault reg_mr from 4 errno EFAULT\n");
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), EPERM);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), 0);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), EFAULT);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), EFAULT);
	/* the first matching rule wins */
	load("device d\nfault reg_mr from 1 errno EPERM\nfault reg_mr nth 2 errno EFAULT\n");
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), EPERM);
	assert_int_equal(fp_fault_check(&g_s, FP_OP_REG_MR), EPERM);
}

TR_TEST(no_script_or_no_rule_never_fails)
{
	int op;

	assert_int_equal(fp_fault_check(NULL, FP_OP_CREATE_QP), 0);
	fp_script_default(&g_s);
	for (op = 0; op < FP_OP__COUNT; op++)
		assert_int_equal(fp_fault_check(&g_s, op), 0);
}

TR_TEST(default_errno_per_op)
{
	static const struct { enum fp_op op; int err; } want[] = {
		{ FP_OP_ALLOC_MW, ENOMEM }, { FP_OP_ALLOC_PD, ENOMEM },
		{ FP_OP_CREATE_AH, ENOMEM }, { FP_OP_CREATE_CQ, ENOMEM },
		{ FP_OP_CREATE_QP, ENOMEM }, { FP_OP_CREATE_QP_EX, ENOMEM },
		{ FP_OP_CREATE_SRQ, ENOMEM }, { FP_OP_CREATE_SRQ_EX, ENOMEM },
		{ FP_OP_OPEN_DEVICE, ENOMEM }, { FP_OP_OPEN_QP, ENOMEM },
		{ FP_OP_OPEN_XRCD, ENOMEM }, { FP_OP_REG_MR, ENOMEM },
		{ FP_OP_MODIFY_QP, EINVAL }, { FP_OP_MODIFY_SRQ, EINVAL },
		{ FP_OP_QUERY_DEVICE, EINVAL }, { FP_OP_QUERY_GID, EINVAL },
		{ FP_OP_QUERY_PKEY, EINVAL }, { FP_OP_QUERY_PORT, EINVAL },
		{ FP_OP_QUERY_QP, EINVAL }, { FP_OP_QUERY_SRQ, EINVAL },
		{ FP_OP_DESTROY_QP, EIO }, { FP_OP_DEALLOC_PD, EIO },
		{ FP_OP_CLOSE_XRCD, EIO }, { FP_OP_POST_SEND, EIO },
		{ FP_OP_POLL_CQ, EIO }, { FP_OP_DEREG_MR, EIO },
	};
	char text[128];
	size_t i;
	int op;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(fp_op_default_errno(want[i].op), want[i].err);
		snprintf(text, sizeof(text), "device d\nfault %s nth 1\n", fp_op_name(want[i].op));
		load(text);
		assert_int_equal(fp_fault_check(&g_s, want[i].op), want[i].err);
	}
	/* every op has its own row: a new op without one shows up here */
	for (op = 0; op < FP_OP__COUNT; op++) {
		int e = fp_op_default_errno(op);

		assert_true(e == ENOMEM || e == EINVAL || e == EIO);
	}
}

TR_TEST(name_tables_match_the_def_files)
{
	static const char *const ops[] = {
#define FP_OP(id, name) name,
#include "fp_ops.def"
#undef FP_OP
	};
	static const char *const quirks[] = {
#define FP_QUIRK(id, name, where, bit, what) name,
#include "fp_quirks.def"
#undef FP_QUIRK
	};
	int i;

	assert_int_equal(sizeof(ops) / sizeof(ops[0]), FP_OP__COUNT);
	for (i = 0; i < FP_OP__COUNT; i++) {
		assert_string_equal(fp_op_name(i), ops[i]);
		assert_int_equal(fp_op_from_name(ops[i]), i);
		if (i)	/* the .def promises sorted names */
			assert_true(strcmp(ops[i - 1], ops[i]) < 0);
	}
	for (i = 0; i < FP_Q__COUNT; i++) {
		assert_string_equal(fp_quirk_name(i), quirks[i]);
		assert_int_equal(fp_quirk_from_name(quirks[i]), i);
	}
	assert_int_equal(fp_op_from_name("CREATE_QP"), -1);
	assert_int_equal(fp_op_from_name(""), -1);
	assert_int_equal(fp_quirk_from_name("nope"), -1);
	assert_null(fp_op_name(FP_OP__COUNT));
	assert_null(fp_quirk_name(FP_Q__COUNT));
}

TR_TEST(events_fire_once_on_the_nth_call)
{
	struct fp_event_rule *out[4];
	int i;

	load("device d\n\tport 1\n\tport 2\n"
	     "event qp_fatal after modify_qp 2\n"
	     "event port_err after modify_qp 2 port 2\n"
	     "event cq_err after poll_cq 1\n");
	assert_int_equal(fp_events_due(&g_s, FP_OP_MODIFY_QP, out, 4), 0);
	assert_int_equal(fp_events_due(&g_s, FP_OP_MODIFY_QP, out, 4), 2);
	assert_int_equal(out[0]->type, IBV_EVENT_QP_FATAL);
	assert_int_equal(out[1]->type, IBV_EVENT_PORT_ERR);
	assert_int_equal(out[1]->port, 2);
	assert_true(out[0]->fired);
	for (i = 0; i < 5; i++)
		assert_int_equal(fp_events_due(&g_s, FP_OP_MODIFY_QP, out, 4), 0);
	assert_int_equal(fp_events_due(&g_s, FP_OP_POLL_CQ, out, 4), 1);
	assert_int_equal(out[0]->type, IBV_EVENT_CQ_ERR);
	assert_int_equal(fp_events_due(&g_s, FP_OP_POLL_CQ, out, 4), 0);
	assert_int_equal(fp_events_due(NULL, FP_OP_POLL_CQ, out, 4), 0);
}

TR_TEST(events_due_respects_max)
{
	struct fp_event_rule *out[1];

	load("device d\nevent comm_est after modify_qp 1\nevent sq_drained after modify_qp 1\n");
	assert_int_equal(fp_events_due(&g_s, FP_OP_MODIFY_QP, out, 1), 1);
	assert_int_equal(out[0]->type, IBV_EVENT_COMM_EST);
}

static void *hammer(void *arg)
{
	long *fails = arg;
	int i;

	for (i = 0; i < 10000; i++)
		if (fp_fault_check(&g_s, FP_OP_POST_SEND))
			(*fails)++;
	return NULL;
}

TR_TEST(counting_is_exact_under_threads)
{
	pthread_t th[8];
	long fails[8] = { 0 }, total = 0;
	int i;

	load("device d\nfault post_send from 40001\n");
	for (i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, &fails[i]), 0);
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		total += fails[i];
	}
	assert_int_equal(g_s.fault[0].calls, 80000);
	assert_int_equal(total, 40000);
}

TR_TEST(trace_lines_carry_the_pid_and_append)
{
	char path[] = "/tmp/t5003-XXXXXX", line[256], want[64];
	FILE *f;
	pid_t pid;
	int fd, status, n = 0, child_lines = 0;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	memset(&g_s, 0, sizeof(g_s));
	fp_trace(&g_s, "not traced %d", 1);	/* no trace path: nothing */
	snprintf(g_s.trace_path, sizeof(g_s.trace_path), "%s", path);
	fp_trace(&g_s, "create_qp ret=%d", 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fp_trace(&g_s, "child line");
		_exit(0);
	}
	waitpid(pid, &status, 0);
	fp_trace(&g_s, "destroy_qp ret=%d", 0);
	f = fopen(path, "r");
	assert_non_null(f);
	snprintf(want, sizeof(want), "%d ", (int)getpid());
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, "child line")) {
			child_lines++;
			assert_int_equal(atoi(line), pid);
		} else {
			assert_memory_equal(line, want, strlen(want));
		}
		assert_non_null(strchr(line, '\n'));
	}
	fclose(f);
	unlink(path);
	assert_int_equal(n, 3);
	assert_int_equal(child_lines, 1);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
