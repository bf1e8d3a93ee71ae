/* SPDX-License-Identifier: MIT */
/*
 * t5004: the script parser keeps its promises (fp_script.h) on every input
 * of its fuzz corpus, fixtures/fuzz/script/, and on every input that once
 * broke one, fixtures/fuzz/script/crashes-fixed/ (named after the bug):
 * each goes through the AFL++ harness fake-provider/fuzz/fz-script.c,
 * built normally, which checks the verdict, the message, the untouched
 * struct on refusal and every bound on success, string and file alike.
 */
#include "fz_replay.h"

TR_TEST(every_corpus_input_keeps_the_promises)
{
	int n = fzr_replay_dir("fixtures/fuzz/script");

	tr_note("%d corpus inputs", n);
	assert_true(n >= 20);		/* a lost corpus is a failure, not a pass */
}

TR_TEST(every_former_crash_keeps_the_promises)
{
	int n = fzr_replay_dir("fixtures/fuzz/script/crashes-fixed");

	/* none so far: the parser has kept every promise under AFL++ */
	tr_note("%d former crash inputs", n < 0 ? 0 : n);
	assert_true(n != 0);		/* a dir that exists holds its inputs */
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
