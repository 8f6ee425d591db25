// SPDX-License-Identifier: MIT
/*
 * A language model on the npu device (vnpu): tiny_gpt ($NPR_SHARED/models/
 * llm) made stateful by name pattern and compiled with its dynamic shapes
 * on npu, which builds a static prefill graph of MAX_PROMPT_LEN tokens and
 * a static one-token generate graph of MAX_PROMPT_LEN + MIN_RESPONSE_LEN
 * positions (npu/llm.c, lib/passes/kvwindow.c).  Checked: the prompt
 * (shorter than MAX_PROMPT_LEN) and every step decode to the PyTorch
 * goldens' tokens, logits within 1e-4 of each step's largest golden
 * magnitude; the KV cache goes from the prefill graph to the generate
 * graph as device copies (vnpu's trace: one "copy" line per head and
 * variable, between the two graphs' state buffers), not as execute
 * arguments; a prompt longer than MAX_PROMPT_LEN fails with -EINVAL and a
 * context past the maximum with -ENOSPC; a truncated cache decodes again
 * from there and a reset starts over.
 *
 * Without the shared models or an npu device those tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "npu_util.h"
#include "lm_util.h"

#define TOLERANCE_REL	1e-4

struct dec {
	int fd;
	__u32 model, exec, req;
	int vocab, nvars;
	struct lm_gold g;
};

/* tiny_gpt on npu with these windows; 0, -ENOENT (no model) or -errno */
static int dec_open(struct dec *d, int64_t prompt, int64_t response)
{
	struct npr_state_pair p = { (uintptr_t)"past_key_values.*",
				    (uintptr_t)"present.*" };
	struct npr_prop_arg pa[3] = {
		{ .param = NPR_PARAM_MAX_PROMPT_LEN, .value = prompt },
		{ .param = NPR_PARAM_MIN_RESPONSE_LEN, .value = response },
		{ .param = NPR_PARAM_INFERENCE_PRECISION_HINT,
		  .value = NPR_ELEM_F32 },
	};
	struct npr_make_stateful ms = { .size = sizeof(ms) };
	struct npr_model_load ld;
	struct npr_compile c;
	struct npr_req_create rc;
	struct npr_state_arg st = { .size = sizeof(st) };
	char path[4096];
	int ret, n;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	n = snprintf(path, sizeof(path), "%s/models/llm/tiny_gpt.onnx",
		     npr_test_shared());
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, R_OK))
		return -ENOENT;
	d->fd = npr_open("npu", 0);
	if (d->fd < 0)
		return d->fd;
	npr_prep_model_load(&ld, path, NULL);
	ret = npr_ioctl(d->fd, NPR_IOCTL_MODEL_LOAD, &ld);
	if (ret)
		return ret;
	d->model = ld.handle;
	ms.flags = NPR_MAKE_STATEFUL_PATTERN;
	ms.model = d->model;
	ms.count = 1;
	ms.pairs = (uintptr_t)&p;
	ret = npr_ioctl(d->fd, NPR_IOCTL_MAKE_STATEFUL, &ms);
	if (ret)
		return ret;
	npr_prep_compile(&c, d->model);
	c.props = (uintptr_t)pa;
	c.num_props = 3;
	ret = npr_ioctl(d->fd, NPR_IOCTL_COMPILE, &c);
	if (ret)
		return ret;
	d->exec = c.exec;
	npr_prep_req_create(&rc, d->exec);
	ret = npr_ioctl(d->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (ret)
		return ret;
	d->req = rc.req;
	st.req = d->req;
	ret = npr_ioctl(d->fd, NPR_IOCTL_STATE_INFO, &st);
	if (ret != -EMSGSIZE)
		return ret ? ret : -EPROTO;
	d->nvars = (int)st.count;
	d->vocab = 512;
	return lm_gold_load(&d->g, path, d->vocab);
}

static void dec_close(struct dec *d)
{
	lm_gold_free(&d->g);
	if (d->fd >= 0)
		npr_close(d->fd);
}

/* Feed @n tokens; the last position's logits into @logits (or NULL). */
static int feed(struct dec *d, const int64_t *ids, int n, float *logits)
{
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	float *all = malloc(sizeof(float) * d->vocab * n);
	int ret;

	if (!all)
		return -ENOMEM;
	npr_prep_tensor(&ta, d->req, 0, 0, (void *)ids, n * sizeof(int64_t));
	ta.elem_type = NPR_ELEM_I64;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = n;
	ret = npr_ioctl(d->fd, NPR_IOCTL_SET_TENSOR, &ta);
	npr_prep_infer(&inf, d->req);
	if (!ret)
		ret = npr_ioctl(d->fd, NPR_IOCTL_INFER, &inf);
	npr_prep_tensor(&ta, d->req, 0, 1, all, sizeof(float) * d->vocab * n);
	if (!ret)
		ret = npr_ioctl(d->fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (!ret && logits)
		memcpy(logits, all + (size_t)(n - 1) * d->vocab,
		       sizeof(float) * d->vocab);
	free(all);
	return ret;
}

/*
 * Decode from golden step @from (-1: the prompt first) to @to with the
 * golden tokens: each step's logits and next token checked.
 */
static void decode(struct npr_test *_metadata, struct dec *d, int from,
		   int to)
{
	float *lg = malloc(sizeof(float) * d->vocab);
	double err, worst = 0;
	int s, ret;

	ASSERT_NONNULL(lg);
	if (from < 0) {
		from = 0;
		ret = feed(d, d->g.tokens, d->g.nprompt, lg);
		if (ret)
			TH_LOG("prefill: %s", npr_last_error());
		ASSERT_EQ(ret, 0);
		worst = lm_rel_err(lg, d->g.prefill, d->vocab);
		EXPECT_LE(worst, TOLERANCE_REL);
		EXPECT_EQ(lm_argmax(lg, d->vocab), d->g.tokens[d->g.nprompt]);
	}
	for (s = from; s < to; s++) {
		ret = feed(d, d->g.tokens + d->g.nprompt + s, 1, lg);
		if (ret)
			TH_LOG("step %d: %s", s, npr_last_error());
		ASSERT_EQ(ret, 0);
		err = lm_rel_err(lg, d->g.steps + (size_t)s * d->vocab,
				 d->vocab);
		if (err > worst)
			worst = err;
		EXPECT_LE(err, TOLERANCE_REL);
		if (s + 1 < d->g.nsteps)
			EXPECT_EQ(lm_argmax(lg, d->vocab),
				  d->g.tokens[d->g.nprompt + s + 1]);
	}
	TH_LOG("steps %d..%d: max logit error %.2e of the largest", from, to,
	       worst);
	free(lg);
}

#define DEC_OPEN(d, prompt, response) do {				\
	int _r;								\
	REQUIRE_NPU();							\
	_r = dec_open(d, prompt, response);				\
	if (_r == -ENOENT && !(d)->exec)				\
		SKIP(return, "tiny_gpt not found under $NPR_SHARED/models/llm"); \
	if (_r)								\
		TH_LOG("tiny_gpt on npu: %s", npr_last_error());	\
	ASSERT_EQ(_r, 0);						\
} while (0)

static char *slurp_text(const char *path)
{
	size_t n = 0;

	return npr_test_slurp(path, &n);
}

static int count(const char *t, const char *what)
{
	int n = 0;

	for (t = strstr(t, what); t; t = strstr(t + 1, what))
		n++;
	return n;
}

/*
 * The goldens' 8-token prompt in a 16-token prefill graph, then all 32
 * steps in a 48-position generate graph; the prompt's KV cache copied on
 * the device: per variable (8) and head (4) one copy of 8 positions x 32
 * values x 4 bytes.
 */
TEST_TIMEOUT_F(npu_llm_tiny_gpt_greedy, 600)
{
	char trace[] = "/tmp/npu_llm_traceXXXXXX", want[64], *t;
	struct dec d;
	int tfd;

	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	DEC_OPEN(&d, 16, 32);
	EXPECT_EQ(d.nvars, 8);
	decode(_metadata, &d, -1, d.g.nsteps);
	dec_close(&d);
	unsetenv("VNPU_TRACE");
	t = slurp_text(trace);
	unlink(trace);
	ASSERT_NONNULL(t);
	snprintf(want, sizeof(want), "bytes=%d\n", 8 * 32 * 4);
	EXPECT_EQ(count(t, "copy dst="), 8 * 4);
	EXPECT_EQ(count(t, want), 8 * 4);
	free(t);
}

/*
 * Past the windows: a long prompt, a long context; both said clearly.
 * EXPORT is refused.
 */
TEST_TIMEOUT_F(npu_llm_limits, 600)
{
	int64_t ids[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct dec d;

	DEC_OPEN(&d, 8, 2);
	EXPECT_EQ(feed(&d, ids, 9, NULL), -EINVAL);
	EXPECT_NONNULL(strstr(npr_last_error(), "MAX_PROMPT_LEN"));
	/* the goldens' prompt fills the prefill graph exactly */
	ASSERT_EQ(d.g.nprompt, 8);
	decode(_metadata, &d, -1, 2);
	EXPECT_EQ(feed(&d, ids, 1, NULL), -ENOSPC);
	EXPECT_NONNULL(strstr(npr_last_error(), "MIN_RESPONSE_LEN"));
	/* two graphs: no single native binary to export */
	{
		struct npr_export ex = { .size = sizeof(ex), .exec = d.exec };

		EXPECT_EQ(npr_ioctl(d.fd, NPR_IOCTL_EXPORT, &ex), -EOPNOTSUPP);
	}
	dec_close(&d);
}

/* A truncated cache decodes again from there; a reset starts over. */
TEST_TIMEOUT_F(npu_llm_truncate_and_reset, 600)
{
	struct npr_state_arg st;
	struct dec d;
	int i, ret = 0;

	DEC_OPEN(&d, 16, 16);
	decode(_metadata, &d, -1, 6);
	for (i = 0; !ret && i < d.nvars; i++) {
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		st.req = d.req;
		st.index = i;
		ret = npr_ioctl(d.fd, NPR_IOCTL_STATE_GET, &st);
		EXPECT_EQ(ret, -EMSGSIZE);
		EXPECT_EQ(st.dims[2], d.g.nprompt + 6);
		st.flags = NPR_STATE_TRUNCATE;
		st.dims[2] = d.g.nprompt + 2;
		st.bytes = 0;
		ret = npr_ioctl(d.fd, NPR_IOCTL_STATE_SET, &st);
	}
	ASSERT_EQ(ret, 0);
	decode(_metadata, &d, 2, 8);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.req = d.req;
	st.flags = NPR_STATE_RESET_ALL;
	ASSERT_EQ(npr_ioctl(d.fd, NPR_IOCTL_STATE_RESET, &st), 0);
	decode(_metadata, &d, -1, 4);
	dec_close(&d);
}

TEST_HARNESS_MAIN
