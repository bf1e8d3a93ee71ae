/* SPDX-License-Identifier: MIT */
/*
 * t5203: the fake kernel daemon keeps its promises on every input of its
 * fuzz corpus, fixtures/fuzz/fkd/, and on every input that once broke one,
 * fixtures/fuzz/fkd/crashes-fixed/ (named after the bug): each goes through
 * the AFL++ harness fake-provider/fuzz/fz-fkd.c, built normally and linked
 * with the daemon's own objects, which drives the real message handling
 * over socketpairs and checks the replies, the state recount after every
 * action, and that closing every connection leaves no object and no fd.
 */
#define FZ_HAVE_SEEDS		/* fz_write_seeds(): the harness's own seeds */
#include "fz_replay.h"

TR_TEST(every_corpus_input_keeps_the_promises)
{
	int n = fzr_replay_dir("fixtures/fuzz/fkd");

	tr_note("%d corpus inputs", n);
	assert_true(n >= 20);		/* a lost corpus is a failure, not a pass */
}

TR_TEST(every_former_crash_keeps_the_promises)
{
	int n = fzr_replay_dir("fixtures/fuzz/fkd/crashes-fixed");

	tr_note("%d former crash inputs", n < 0 ? 0 : n);
	assert_true(n != 0);		/* a dir that exists holds its inputs */
}

TR_TEST(the_generated_seeds_keep_the_promises)
{
	char dir[] = "/tmp/ibvct-t5203-XXXXXX", path[512];
	struct dirent **names;
	int n, i;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(fz_write_seeds(dir), 0);
	n = scandir(dir, &names, fzr_filter, alphasort);
	assert_true(n >= 5);
	for (i = 0; i < n; i++) {
		FILE *f;
		unsigned char buf[4096];
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		snprintf(fzr_current, sizeof(fzr_current), "%s", path);
		f = fopen(path, "rb");
		assert_non_null(f);
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		signal(SIGABRT, fzr_on_abort);
		fz_one(buf, len);
		signal(SIGABRT, SIG_DFL);
		unlink(path);
		free(names[i]);
	}
	free(names);
	assert_int_equal(rmdir(dir), 0);
}

int main(int argc, char **argv)
{
	return tr_main(argc, argv);
}
