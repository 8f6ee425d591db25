// SPDX-License-Identifier: MIT
/*
 * Decoder-only language models with an explicit KV cache on cpu, each
 * step compiled with static shapes: the shared tiny_gpt and small_gpt
 * ($NPR_SHARED/models/llm) decode greedily from their prompt (prefill with
 * an empty past, then one token at a time over the previous step's
 * present) to the PyTorch goldens' tokens, with every step's logits within
 * 1e-4 of that step's largest golden magnitude; prefilling a prompt and
 * then feeding tokens one at a time gives the logits and the cache of one
 * long prefill.
 *
 * Without the shared models those tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "lm_util.h"

#define TOLERANCE_REL	1e-4

static bool llm_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/models/llm/%s.onnx", npr_test_shared(),
			 name);

	return n > 0 && (size_t)n < len && access(buf, R_OK) == 0;
}

/*
 * Greedy decoding of @name for @steps steps (at most the goldens'):
 * tokens equal to the goldens, logits within TOLERANCE_REL.
 */
static void greedy_at(struct npr_test *_metadata, const char *path,
		      const char *name, int steps)
{
	struct lm m;
	struct lm_gold g;
	float **kv, **kv2, **t, *logits;
	double err, worst = 0;
	int fd, s, tok, ret;
	int64_t past;

	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	ret = lm_open(&m, fd, path);
	if (ret)
		TH_LOG("%s: %s", path, npr_last_error());
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(lm_gold_load(&g, path, m.vocab), 0);
	if (steps > g.nsteps)
		steps = g.nsteps;
	past = g.nprompt + steps;
	kv = lm_kv_alloc(&m, past);
	kv2 = lm_kv_alloc(&m, past);
	logits = malloc(sizeof(float) * m.vocab * g.nprompt);
	ASSERT_NONNULL(kv);
	ASSERT_NONNULL(kv2);
	ASSERT_NONNULL(logits);

	ret = lm_step(&m, g.tokens, g.nprompt, 0, NULL, logits, kv);
	if (ret)
		TH_LOG("prefill: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	err = lm_rel_err(logits + (size_t)(g.nprompt - 1) * m.vocab,
			 g.prefill, m.vocab);
	TH_LOG("%s prefill: max logit error %.2e of the largest", name, err);
	EXPECT_LE(err, TOLERANCE_REL);
	tok = lm_argmax(logits + (size_t)(g.nprompt - 1) * m.vocab, m.vocab);
	for (s = 0; s < steps; s++) {
		int64_t id = tok;

		ASSERT_EQ(tok, g.tokens[g.nprompt + s]);
		ret = lm_step(&m, &id, 1, g.nprompt + s, kv, logits, kv2);
		if (ret)
			TH_LOG("step %d: %s", s, npr_last_error());
		ASSERT_EQ(ret, 0);
		err = lm_rel_err(logits, g.steps + (size_t)s * m.vocab,
				 m.vocab);
		if (err > worst)
			worst = err;
		EXPECT_LE(err, TOLERANCE_REL);
		tok = lm_argmax(logits, m.vocab);
		t = kv;
		kv = kv2;
		kv2 = t;
	}
	TH_LOG("%s: %d steps, max logit error %.2e of the largest", name,
	       steps, worst);
	if (steps < g.nsteps)
		EXPECT_EQ(tok, g.tokens[g.nprompt + steps]);
	lm_kv_free(&m, kv);
	lm_kv_free(&m, kv2);
	free(logits);
	lm_gold_free(&g);
	npr_close(fd);
}

static void greedy(struct npr_test *_metadata, const char *name, int steps)
{
	char path[4096];

	if (!llm_path(path, sizeof(path), name))
		SKIP(return, "%s not found under $NPR_SHARED/models/llm", name);
	greedy_at(_metadata, path, name, steps);
}

TEST_TIMEOUT_F(tiny_gpt_greedy, 300)
{
	greedy(_metadata, "tiny_gpt", 32);
}

TEST_TIMEOUT_F(small_gpt_greedy, 300)
{
	greedy(_metadata, "small_gpt", 4);
}

/*
 * What the cpu device's fusions made of the llama-style model's 4 layers:
 * attention (grouped heads read unexpanded), RMSNorm and SiLU, one node
 * each, none of the primitive ops left.
 */
static void fused_llama(struct npr_test *_metadata, const char *path)
{
	static const char *const types[] = {
		"FusedAttention", "FusedNorm", "Swish", "SoftMax",
		"ReduceMean", "Sigmoid", "Broadcast",
	};
	const int want[] = { 4, 9, 4, 0, 0, 0, 0 };
	int got[7], i;

	ASSERT_EQ(lm_count_types(path, 8, types, 7, got), 0);
	for (i = 0; i < 7; i++) {
		TH_LOG("tiny_llama: %d %s", got[i], types[i]);
		EXPECT_EQ(got[i], want[i]);
	}
}

/*
 * The llama-style family (rotary positions, RMSNorm, SiLU-gated MLP,
 * grouped-query attention), built here by the shared models' own tool when
 * Debian's PyTorch and onnx are installed: 16 steps.
 */
TEST_TIMEOUT_F(tiny_llama_greedy, 300)
{
	char dir[] = "/tmp/npr-llm-XXXXXX", tool[4096], path[4096];
	/* Debian's python3 first: one first on PATH may lack its modules */
	static const char *const pythons[] = { "/usr/bin/python3", "python3" };
	char *check[] = { NULL, "-c", "import torch, onnx", NULL };
	char *make[] = { NULL, tool, "--arch", "llama", "--steps", "16",
			 dir, NULL };
	char *rm[] = { "rm", "-rf", dir, NULL };
	char *out = NULL, *err = NULL;
	int ret = 1, n;
	size_t i;

	n = snprintf(tool, sizeof(tool), "%s/models/llm/tools/make_tiny_lm.py",
		     npr_test_shared());
	if (n < 0 || (size_t)n >= sizeof(tool) || access(tool, R_OK))
		SKIP(return, "no make_tiny_lm.py under $NPR_SHARED/models/llm");
	for (i = 0; ret && i < sizeof(pythons) / sizeof(pythons[0]); i++) {
		check[0] = make[0] = (char *)pythons[i];
		ret = npr_test_run(&out, &err, NULL, NULL, check);
		free(out);
		free(err);
	}
	if (ret)
		SKIP(return, "python3 lacks torch or onnx (Debian's python3-torch, python3-onnx)");
	ASSERT_NONNULL(mkdtemp(dir));
	ret = npr_test_run(&out, &err, NULL, NULL, make);
	if (ret)
		TH_LOG("make_tiny_lm.py: %s", err);
	free(out);
	free(err);
	if (!ret) {
		snprintf(path, sizeof(path), "%s/tiny_llama.onnx", dir);
		greedy_at(_metadata, path, "tiny_llama", 16);
		fused_llama(_metadata, path);
	}
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, rm), 0);
	free(out);
	free(err);
	ASSERT_EQ(ret, 0);
}

/*
 * tiny_gpt: the prompt's first @split tokens prefilled, the rest fed one
 * at a time, against the whole prompt at once: the same logits at every
 * position and the same final cache.
 */
TEST_TIMEOUT_F(prefill_then_steps_is_one_prefill, 120)
{
	const int split = 5;
	struct lm m;
	struct lm_gold g;
	float **kv, **kv2, **kvall, **t, *all, *one;
	char path[4096];
	double err;
	int fd, i, ret, n;

	if (!llm_path(path, sizeof(path), "tiny_gpt"))
		SKIP(return, "tiny_gpt not found under $NPR_SHARED/models/llm");
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(lm_open(&m, fd, path), 0);
	ASSERT_EQ(lm_gold_load(&g, path, m.vocab), 0);
	n = g.nprompt + 4;	/* the prompt and 4 generated tokens */
	kv = lm_kv_alloc(&m, n);
	kv2 = lm_kv_alloc(&m, n);
	kvall = lm_kv_alloc(&m, n);
	all = malloc(sizeof(float) * m.vocab * n);
	one = malloc(sizeof(float) * m.vocab * split);
	ASSERT_TRUE(kv && kv2 && kvall && all && one);

	ret = lm_step(&m, g.tokens, n, 0, NULL, all, kvall);
	if (ret)
		TH_LOG("prefill of %d: %s", n, npr_last_error());
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(lm_step(&m, g.tokens, split, 0, NULL, one, kv), 0);
	for (i = 0; i < split; i++) {
		err = lm_rel_err(one + (size_t)i * m.vocab,
				 all + (size_t)i * m.vocab, m.vocab);
		EXPECT_LE(err, TOLERANCE_REL);
	}
	for (i = split; i < n; i++) {
		ret = lm_step(&m, g.tokens + i, 1, i, kv, one, kv2);
		ASSERT_EQ(ret, 0);
		err = lm_rel_err(one, all + (size_t)i * m.vocab, m.vocab);
		TH_LOG("position %d: %.2e", i, err);
		EXPECT_LE(err, TOLERANCE_REL);
		t = kv;
		kv = kv2;
		kv2 = t;
	}
	for (i = 0; i < 2 * m.layers; i++) {
		err = lm_rel_err(kv[i], kvall[i],
				 (int)(lm_kv_bytes(&m, n) / sizeof(float)));
		EXPECT_LE(err, TOLERANCE_REL);
	}
	lm_kv_free(&m, kv);
	lm_kv_free(&m, kv2);
	lm_kv_free(&m, kvall);
	free(all);
	free(one);
	lm_gold_free(&g);
	npr_close(fd);
}

TEST_HARNESS_MAIN
