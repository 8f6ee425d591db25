// SPDX-License-Identifier: MIT
/*
 * npr-generate on the shared tiny_gpt ($NPR_SHARED/models/llm): greedy
 * decoding gives the golden tokens, synchronously and through the ring,
 * from --prompt-ids and from --prompt-file; --dump-logits writes every
 * step's logits within 1e-4 of that step's largest golden magnitude, laid
 * out as the goldens; sampling with a seed repeats itself; bad options
 * exit with 2, a missing model with 1.
 *
 * Without the shared models the decoding tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "lm_util.h"

#define TOLERANCE_REL	1e-4
#define VOCAB		512	/* tiny_gpt's, checked against the goldens */

static bool tiny(char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/models/llm/tiny_gpt.onnx",
			 npr_test_shared());

	return n > 0 && (size_t)n < len && access(buf, R_OK) == 0;
}

/* "242,262,..." of the goldens' prompt */
static void prompt_ids(const struct lm_gold *g, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	for (i = 0; i < g->nprompt && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%lld", i ? "," : "",
			      (long long)g->tokens[i]);
}

/* The "tokens":[...] of --json output into @t; their number. */
static int json_tokens(const char *out, int64_t *t, int max)
{
	const char *p = out ? strstr(out, "\"tokens\":[") : NULL;
	int n = 0;
	char *end;

	if (!p)
		return -1;
	p += strlen("\"tokens\":[");
	while (n < max && *p != ']') {
		t[n++] = strtoll(p, &end, 10);
		if (end == p)
			return -1;
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

static void greedy(struct npr_test *_metadata, bool ring, bool file)
{
	char path[4096], ids[512], dump[] = "/tmp/npr-gen-test.XXXXXX";
	char pf[] = "/tmp/npr-gen-prompt.XXXXXX", steps[16];
	char *out = NULL, *err = NULL;
	struct lm_gold g;
	int64_t t[256];
	float *lg;
	size_t len = 0;
	int fd, n, s, ret;

	if (!tiny(path, sizeof(path)))
		SKIP(return, "tiny_gpt not found under $NPR_SHARED/models/llm");
	ASSERT_EQ(lm_gold_load(&g, path, VOCAB), 0);
	prompt_ids(&g, ids, sizeof(ids));
	fd = mkstemp(dump);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = mkstemp(pf);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, g.tokens, g.nprompt * 8), g.nprompt * 8);
	close(fd);
	snprintf(steps, sizeof(steps), "%d", g.nsteps);
	{
		char *argv[] = { (char *)npr_test_tool("npr-generate"), "-d",
				 "cpu", "-m", path, file ? "--prompt-file" :
				 "--prompt-ids", file ? pf : ids, "--steps",
				 steps, "-t", "1", "--json", "--dump-logits",
				 dump, ring ? "--ring" : NULL, NULL };

		ret = npr_test_run(&out, &err, NULL, NULL, argv);
	}
	if (ret)
		TH_LOG("npr-generate: %s", err);
	ASSERT_EQ(ret, 0);
	n = json_tokens(out, t, 256);
	ASSERT_EQ(n, g.nsteps);
	for (s = 0; s < n; s++)
		EXPECT_EQ(t[s], g.tokens[g.nprompt + s]);
	EXPECT_NE(strstr(out, "\"tokens_per_s\":"), NULL);
	EXPECT_NE(strstr(out, "\"peak_rss_kb\":"), NULL);
	lg = npr_test_slurp(dump, &len);
	ASSERT_NONNULL(lg);
	ASSERT_EQ(len, (size_t)g.nsteps * VOCAB * sizeof(float));
	for (s = 0; s < g.nsteps; s++)
		EXPECT_LE(lm_rel_err(lg + (size_t)s * VOCAB,
				     g.steps + (size_t)s * VOCAB, VOCAB),
			  TOLERANCE_REL);
	free(lg);
	unlink(dump);
	unlink(pf);
	free(out);
	free(err);
	lm_gold_free(&g);
}

TEST_TIMEOUT_F(greedy_tokens_and_logits, 300)
{
	greedy(_metadata, false, false);
}

TEST_TIMEOUT_F(greedy_through_the_ring_from_a_file, 300)
{
	greedy(_metadata, true, true);
}

/* The same seed, the same tokens; all within the vocabulary. */
TEST_TIMEOUT_F(sampling_repeats_with_its_seed, 300)
{
	char path[4096];
	char *out[3] = { NULL }, *err = NULL;
	int64_t t[3][16];
	int i, k, n[3], same = 1;

	if (!tiny(path, sizeof(path)))
		SKIP(return, "tiny_gpt not found under $NPR_SHARED/models/llm");
	for (i = 0; i < 3; i++) {
		char *argv[] = { (char *)npr_test_tool("npr-generate"), "-m",
				 path, "--prompt-ids", "1,2,3", "--steps",
				 "16", "--json", "--temperature", "1.5",
				 "--top-k", "50", "--seed", i == 2 ? "8" : "7",
				 NULL };

		ASSERT_EQ(npr_test_run(&out[i], &err, NULL, NULL, argv), 0);
		free(err);
		n[i] = json_tokens(out[i], t[i], 16);
		ASSERT_EQ(n[i], 16);
		for (k = 0; k < 16; k++) {
			EXPECT_GE(t[i][k], 0);
			EXPECT_LT(t[i][k], VOCAB);
		}
	}
	EXPECT_EQ(memcmp(t[0], t[1], sizeof(t[0])), 0);
	for (k = 0; k < 16; k++)
		same &= t[0][k] == t[2][k];
	EXPECT_FALSE(same);	/* 16 tokens of 50 alike: not by chance */
	for (i = 0; i < 3; i++)
		free(out[i]);
}

TEST(bad_options)
{
	static const struct {
		int status;
		const char *msg;
		const char *argv[10];
	} cases[] = {
		{ 2, "one of them", { "-m", "x.onnx" } },
		{ 2, "one of them", { "-m", "x.onnx", "--prompt-ids", "1",
				      "--prompt-file", "p.i64" } },
		{ 2, "-m MODEL", { "--prompt-ids", "1" } },
		{ 2, "--prompt-ids", { "-m", "x.onnx", "--prompt-ids",
				       "1,x" } },
		{ 2, "--prompt-ids", { "-m", "x.onnx", "--prompt-ids",
				       "1,-2" } },
		{ 2, "--steps", { "-m", "x.onnx", "--prompt-ids", "1",
				  "--steps", "0" } },
		{ 2, "--temperature", { "-m", "x.onnx", "--prompt-ids", "1",
					"--temperature", "0" } },
		{ 2, "go with --temperature", { "-m", "x.onnx",
						"--prompt-ids", "1",
						"--top-k", "4" } },
		{ 2, "go with --temperature", { "-m", "x.onnx",
						"--prompt-ids", "1",
						"--seed", "4" } },
		{ 2, "--seed", { "-m", "x.onnx", "--prompt-ids", "1",
				 "--temperature", "1", "--seed", "-1" } },
		{ 2, NULL, { "-m", "x.onnx", "--prompt-ids", "1", "--bogus" } },
		{ 2, "unexpected", { "-m", "x.onnx", "--prompt-ids", "1",
				     "extra" } },
		{ 1, "nonexistent", { "-m", "/nonexistent/x.onnx",
				      "--prompt-ids", "1" } },
		{ 1, "nonexistent", { "-m", "x.onnx", "--prompt-file",
				      "/nonexistent/p.i64" } },
	};
	size_t i;
	int j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[12] = { (char *)npr_test_tool("npr-generate") };
		char *out, *err;

		for (j = 0; cases[i].argv[j]; j++)
			argv[j + 1] = (char *)cases[i].argv[j];
		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv),
			  cases[i].status);
		if (cases[i].msg && (!err || !strstr(err, cases[i].msg)))
			TH_LOG("case %zu: '%s' not in: %s", i, cases[i].msg,
			       err ? err : "(nothing)");
		if (cases[i].msg)
			EXPECT_NE(err ? strstr(err, cases[i].msg) : NULL, NULL);
		free(out);
		free(err);
	}
}

TEST_HARNESS_MAIN
