// SPDX-License-Identifier: MIT
/*
 * A language model's KV cache as state: tiny_gpt ($NPR_SHARED/models/llm)
 * made stateful by name pattern (NPR_MAKE_STATEFUL_PATTERN,
 * past_key_values.* with present.*), so input_ids is its only input, and
 * decoded a token at a time with the cache held by the request: the
 * golden tokens, every step's logits within 1e-4 of its largest golden
 * magnitude; a truncated cache (NPR_STATE_TRUNCATE) decodes again as the
 * goldens do from there; a reset starts over; two requests decoding
 * interleaved stay independent; a cache read with STATE_GET and given to
 * another request with STATE_SET continues there; the pattern's errors;
 * the decoding steps share one plan, which gives the logits of a plan
 * made for each step alone; attention reading the cache in its storage
 * gives the logits of attention over a copy of it; the steps every layer
 * repeats run once, with the same logits.
 *
 * Without the shared models those tests skip.
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

struct kv {
	int fd;
	__u32 model, exec;
	int vocab, nvars;
	struct lm_gold g;
};

static bool llm_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/models/llm/%s.onnx", npr_test_shared(),
			 name);

	return n > 0 && (size_t)n < len && access(buf, R_OK) == 0;
}

static int make_stateful(int fd, __u32 model, const char *in,
			 const char *out, __u32 count)
{
	struct npr_state_pair p[2] = {
		{ (uintptr_t)in, (uintptr_t)out },
		{ (uintptr_t)in, (uintptr_t)out },
	};
	struct npr_make_stateful ms;

	memset(&ms, 0, sizeof(ms));
	ms.size = sizeof(ms);
	ms.flags = NPR_MAKE_STATEFUL_PATTERN;
	ms.model = model;
	ms.count = count;
	ms.pairs = (uintptr_t)p;
	return npr_ioctl(fd, NPR_IOCTL_MAKE_STATEFUL, &ms);
}

/*
 * @name loaded, made stateful and compiled (with CPU_RUNTIME_CACHE_CAPACITY
 * @cap unless negative); 0 or -errno (skip: -ENOENT)
 */
static int kv_open_with(struct kv *k, const char *name, int cap, bool prof)
{
	struct npr_prop_arg prop[2] = {
		{ .param = NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY },
		{ .param = NPR_PARAM_ENABLE_PROFILING, .value = 1 },
	};
	struct npr_model_load ld;
	struct npr_compile c;
	struct npr_model_info mi;
	struct npr_port_info pi;
	struct npr_state_arg st;
	char path[4096], pname[64];
	int ret;

	memset(k, 0, sizeof(*k));
	if (!llm_path(path, sizeof(path), name))
		return -ENOENT;
	k->fd = npr_open("cpu", 0);
	if (k->fd < 0)
		return k->fd;
	npr_prep_model_load(&ld, path, NULL);
	ret = npr_ioctl(k->fd, NPR_IOCTL_MODEL_LOAD, &ld);
	if (ret)
		return ret;
	k->model = ld.handle;
	ret = make_stateful(k->fd, k->model, "past_key_values.*", "present.*",
			    1);
	if (ret)
		return ret;
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = k->model;
	ret = npr_ioctl(k->fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (ret)
		return ret;
	if (mi.num_inputs != 1 || mi.num_outputs != 1)
		return -EINVAL;	/* input_ids and logits only */
	npr_prep_port_info(&pi, k->model, 0, 1, pname, sizeof(pname));
	ret = npr_ioctl(k->fd, NPR_IOCTL_PORT_INFO, &pi);
	if (ret)
		return ret;
	k->vocab = (int)pi.dims[pi.rank - 1];
	npr_prep_compile(&c, k->model);
	if (cap >= 0 || prof) {
		prop[0].value = (__u64)cap;
		c.props = (uintptr_t)(cap >= 0 ? prop : prop + 1);
		c.num_props = (cap >= 0) + prof;
	}
	ret = npr_ioctl(k->fd, NPR_IOCTL_COMPILE, &c);
	if (ret)
		return ret;
	k->exec = c.exec;
	ret = lm_gold_load(&k->g, path, k->vocab);
	if (ret)
		return ret;
	/* count the variables through a request */
	{
		struct npr_req_create rc;

		npr_prep_req_create(&rc, k->exec);
		ret = npr_ioctl(k->fd, NPR_IOCTL_REQ_CREATE, &rc);
		if (ret)
			return ret;
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		st.req = rc.req;
		ret = npr_ioctl(k->fd, NPR_IOCTL_STATE_INFO, &st);
		k->nvars = (int)st.count;
		lm_destroy(k->fd, rc.req);
	}
	return ret == -EMSGSIZE ? 0 : ret;
}

/* An integer property of the exec, or -1. */
static int64_t kv_param(struct kv *k, __u32 id)
{
	struct npr_param pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.handle = k->exec;
	pa.param = id;
	if (npr_ioctl(k->fd, NPR_IOCTL_GET_PARAM, &pa))
		return -1;
	return (int64_t)pa.value;
}

static void kv_close(struct kv *k)
{
	lm_gold_free(&k->g);
	if (k->fd >= 0)
		npr_close(k->fd);
}

static __u32 kv_req(struct kv *k)
{
	struct npr_req_create rc;

	npr_prep_req_create(&rc, k->exec);
	if (npr_ioctl(k->fd, NPR_IOCTL_REQ_CREATE, &rc))
		return 0;
	return rc.req;
}

/* Feed @n tokens to @req; the last position's logits into @logits. */
static int kv_feed(struct kv *k, __u32 req, const int64_t *ids, int n,
		   float *logits)
{
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	float *all = malloc(sizeof(float) * k->vocab * n);
	int ret;

	if (!all)
		return -ENOMEM;
	npr_prep_tensor(&ta, req, 0, 0, (void *)ids, n * sizeof(int64_t));
	ta.elem_type = NPR_ELEM_I64;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = n;
	ret = npr_ioctl(k->fd, NPR_IOCTL_SET_TENSOR, &ta);
	npr_prep_infer(&inf, req);
	if (!ret)
		ret = npr_ioctl(k->fd, NPR_IOCTL_INFER, &inf);
	npr_prep_tensor(&ta, req, 0, 1, all, sizeof(float) * k->vocab * n);
	if (!ret)
		ret = npr_ioctl(k->fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (!ret)
		memcpy(logits, all + (size_t)(n - 1) * k->vocab,
		       sizeof(float) * k->vocab);
	free(all);
	return ret;
}

/* Every variable of @req cut to @len positions. */
static int kv_truncate(struct kv *k, __u32 req, int64_t len)
{
	struct npr_state_arg st;
	int i, ret = 0;

	for (i = 0; !ret && i < k->nvars; i++) {
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		st.req = req;
		st.index = i;
		ret = npr_ioctl(k->fd, NPR_IOCTL_STATE_GET, &st);
		if (ret != -EMSGSIZE)
			return ret ? ret : -EINVAL;
		st.flags = NPR_STATE_TRUNCATE;
		st.dims[2] = len;
		st.bytes = 0;
		ret = npr_ioctl(k->fd, NPR_IOCTL_STATE_SET, &st);
	}
	return ret;
}

/*
 * From the goldens' step @from (-1: the prompt first, then step 0) decode
 * @req to step @to, feeding the golden tokens: each step's logits checked.
 */
static void decode(struct npr_test *_metadata, struct kv *k, __u32 req,
		   int from, int to)
{
	float *lg = malloc(sizeof(float) * k->vocab);
	double err;
	int s;

	ASSERT_NONNULL(lg);
	if (from < 0) {
		from = 0;
		ASSERT_EQ(kv_feed(k, req, k->g.tokens, k->g.nprompt, lg), 0);
		err = lm_rel_err(lg, k->g.prefill, k->vocab);
		EXPECT_LE(err, TOLERANCE_REL);
		EXPECT_EQ(lm_argmax(lg, k->vocab), k->g.tokens[k->g.nprompt]);
	}
	for (s = from; s < to; s++) {
		int ret = kv_feed(k, req, k->g.tokens + k->g.nprompt + s, 1,
				  lg);

		if (ret)
			TH_LOG("step %d: %s", s, npr_last_error());
		ASSERT_EQ(ret, 0);
		err = lm_rel_err(lg, k->g.steps + (size_t)s * k->vocab,
				 k->vocab);
		if (err > TOLERANCE_REL)
			TH_LOG("step %d: logit error %.2e", s, err);
		EXPECT_LE(err, TOLERANCE_REL);
		if (s + 1 < k->g.nsteps)
			EXPECT_EQ(lm_argmax(lg, k->vocab),
				  k->g.tokens[k->g.nprompt + s + 1]);
	}
	free(lg);
}

#define KV_OPEN_WITH(k, name, cap, prof) do {				\
	int _r = kv_open_with(k, name, cap, prof);			\
	if (_r == -ENOENT && !(k)->exec)				\
		SKIP(return, "%s not found under $NPR_SHARED/models/llm", name); \
	if (_r)								\
		TH_LOG("%s: %s", name, npr_last_error());		\
	ASSERT_EQ(_r, 0);						\
} while (0)
#define KV_OPEN_CAP(k, name, cap) KV_OPEN_WITH(k, name, cap, false)
#define KV_OPEN(k, name) KV_OPEN_CAP(k, name, -1)

TEST_TIMEOUT_F(tiny_gpt_stateful_greedy, 300)
{
	struct kv k;
	struct npr_state_arg st;
	char name[64];
	__u32 req;

	KV_OPEN(&k, "tiny_gpt");
	ASSERT_EQ(k.nvars, 8);
	req = kv_req(&k);
	ASSERT_NE(req, 0);
	/* INFO: the growing dimension is dynamic, nothing held yet */
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.req = req;
	st.name = (uintptr_t)name;
	st.name_len = sizeof(name);
	ASSERT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_INFO, &st), 0);
	EXPECT_STREQ(name, "past_key_values.0.key");
	EXPECT_EQ(st.rank, 4);
	EXPECT_EQ(st.dims[0], 1);
	EXPECT_EQ(st.dims[2], -1);
	EXPECT_EQ(st.bytes, 0);
	decode(_metadata, &k, req, -1, k.g.nsteps);
	/* GET: the whole cache, prompt and steps */
	st.name = 0;
	st.name_len = 0;
	st.data = 0;
	st.bytes = 0;
	ASSERT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_GET, &st), -EMSGSIZE);
	EXPECT_EQ(st.dims[2], k.g.nprompt + k.g.nsteps);
	EXPECT_EQ(st.bytes, (__u64)st.dims[1] * st.dims[2] * st.dims[3] * 4);
	lm_destroy(k.fd, req);
	kv_close(&k);
}

TEST_TIMEOUT_F(small_gpt_stateful_greedy, 300)
{
	struct kv k;
	__u32 req;

	KV_OPEN(&k, "small_gpt");
	req = kv_req(&k);
	ASSERT_NE(req, 0);
	decode(_metadata, &k, req, -1, 16);
	lm_destroy(k.fd, req);
	kv_close(&k);
}

/*
 * The decoding steps after the first need no new plan: the one plan of a
 * step serves every length of the cache (NPR_RUNTIME_CACHE_MISSES stays).
 */
TEST_TIMEOUT_F(one_plan_for_every_length, 300)
{
	int64_t misses;
	struct kv k;
	__u32 req;

	KV_OPEN(&k, "tiny_gpt");
	req = kv_req(&k);
	ASSERT_NE(req, 0);
	decode(_metadata, &k, req, -1, 2);
	misses = kv_param(&k, NPR_PARAM_NPR_RUNTIME_CACHE_MISSES);
	ASSERT_GT(misses, 0);
	decode(_metadata, &k, req, 2, k.g.nsteps);
	EXPECT_EQ(kv_param(&k, NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), misses);
	lm_destroy(k.fd, req);
	kv_close(&k);
}

/*
 * That plan computes what a plan made for each step's shapes alone does
 * (a cache of no plans makes one per step): the same logits at every
 * step, up to float rounding.
 */
TEST_TIMEOUT_F(every_length_plan_equals_fresh_plans, 300)
{
	float *a, *b;
	struct kv k, f;
	__u32 ra, rb;
	int s, n;

	KV_OPEN(&k, "tiny_gpt");
	KV_OPEN_CAP(&f, "tiny_gpt", 0);
	ASSERT_EQ(kv_param(&f, NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY), 0);
	ra = kv_req(&k);
	rb = kv_req(&f);
	ASSERT_NE(ra, 0);
	ASSERT_NE(rb, 0);
	a = malloc(sizeof(float) * k.vocab);
	b = malloc(sizeof(float) * k.vocab);
	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	for (s = -1; s < k.g.nsteps; s++) {
		const int64_t *ids = k.g.tokens + (s < 0 ? 0 : k.g.nprompt + s);

		n = s < 0 ? k.g.nprompt : 1;
		ASSERT_EQ(kv_feed(&k, ra, ids, n, a), 0);
		ASSERT_EQ(kv_feed(&f, rb, ids, n, b), 0);
		if (lm_rel_err(a, b, k.vocab) > 1e-6)
			TH_LOG("step %d: %.2e", s, lm_rel_err(a, b, k.vocab));
		EXPECT_LE(lm_rel_err(a, b, k.vocab), 1e-6);
	}
	/* one plan per step there */
	EXPECT_EQ(kv_param(&f, NPR_PARAM_NPR_RUNTIME_CACHE_MISSES),
		  k.g.nsteps + 1);
	free(a);
	free(b);
	lm_destroy(k.fd, ra);
	lm_destroy(f.fd, rb);
	kv_close(&k);
	kv_close(&f);
}

/*
 * Nodes of @type (any: NULL) whose kernel was @kernel in @req's last
 * inference; a fused node shows as the pattern's last node.
 */
static int kv_kernels(struct kv *k, __u32 req, const char *type,
		      const char *kernel)
{
	struct npr_profile p = { .size = sizeof(p), .req = req };
	struct npr_profile_rec *recs;
	int ret = npr_ioctl(k->fd, NPR_IOCTL_PROFILE, &p), n = 0;
	__u32 i;

	if (ret != -EMSGSIZE)
		return ret ? ret : -EPROTO;
	recs = calloc(p.count, sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	p.recs = (uintptr_t)recs;
	ret = npr_ioctl(k->fd, NPR_IOCTL_PROFILE, &p);
	for (i = 0; !ret && i < p.count; i++)
		n += (!type || !strcmp(recs[i].type, type)) &&
		     !strcmp(recs[i].kernel, kernel);
	free(recs);
	return ret ? ret : n;
}

/*
 * Attention reading the cache where it lies in the variable's storage,
 * the new positions written into its room (ref/state.c), gives the
 * logits of attention over a copied present (NPR_CPU_KV_COPY) and of the
 * unfused graph (NPR_CPU_NO_FUSE=attention), the goldens' too, with
 * several positions at a time after the prompt and the storage growing
 * during an inference; the profile shows which path ran.
 */
TEST_TIMEOUT_F(cache_read_in_place_equals_copied, 300)
{
	static const int chunk[] = { 1, 3, 1, 5, 2, 1, 4 };
	float *a, *b, *u;
	struct kv k, f, nf;
	__u32 ra, rb, ru;
	int s, c, n;

	KV_OPEN_WITH(&k, "tiny_gpt", -1, true);
	setenv("NPR_CPU_KV_COPY", "1", 1);
	KV_OPEN_WITH(&f, "tiny_gpt", -1, true);
	unsetenv("NPR_CPU_KV_COPY");
	setenv("NPR_CPU_NO_FUSE", "attention", 1);
	KV_OPEN(&nf, "tiny_gpt");
	unsetenv("NPR_CPU_NO_FUSE");
	ra = kv_req(&k);
	rb = kv_req(&f);
	ru = kv_req(&nf);
	ASSERT_NE(ra, 0);
	ASSERT_NE(rb, 0);
	ASSERT_NE(ru, 0);
	a = malloc(sizeof(float) * k.vocab);
	b = malloc(sizeof(float) * k.vocab);
	u = malloc(sizeof(float) * k.vocab);
	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	ASSERT_NONNULL(u);
	for (s = -1, c = 0; s < k.g.nsteps; s = s < 0 ? 0 : s + n, c++) {
		const int64_t *ids = k.g.tokens + (s < 0 ? 0 : k.g.nprompt + s);
		const float *gold;

		n = s < 0 ? k.g.nprompt : chunk[c % 7];
		if (s >= 0 && s + n > k.g.nsteps)
			n = k.g.nsteps - s;
		gold = s < 0 ? k.g.prefill :
		       k.g.steps + (size_t)(s + n - 1) * k.vocab;
		ASSERT_EQ(kv_feed(&k, ra, ids, n, a), 0);
		ASSERT_EQ(kv_feed(&f, rb, ids, n, b), 0);
		ASSERT_EQ(kv_feed(&nf, ru, ids, n, u), 0);
		if (lm_rel_err(a, b, k.vocab) > 1e-6 ||
		    lm_rel_err(a, gold, k.vocab) > TOLERANCE_REL)
			TH_LOG("step %d (%d positions): %.2e, %.2e", s, n,
			       lm_rel_err(a, b, k.vocab),
			       lm_rel_err(a, gold, k.vocab));
		EXPECT_LE(lm_rel_err(a, b, k.vocab), 1e-6);
		EXPECT_LE(lm_rel_err(a, gold, k.vocab), TOLERANCE_REL);
		EXPECT_LE(lm_rel_err(u, gold, k.vocab), TOLERANCE_REL);
		/* every layer's attention (shown as its last MatMul) over
		 * the storage, both Concats into it; or none */
		EXPECT_EQ(kv_kernels(&k, ra, "MatMul", "kv_store"), 4);
		EXPECT_EQ(kv_kernels(&k, ra, "Concat", "kv_store"), 8);
		EXPECT_EQ(kv_kernels(&f, rb, NULL, "kv_store"), 0);
	}
	EXPECT_GT(c, 8);
	free(a);
	free(b);
	free(u);
	lm_destroy(k.fd, ra);
	lm_destroy(f.fd, rb);
	lm_destroy(nf.fd, ru);
	kv_close(&k);
	kv_close(&f);
	kv_close(&nf);
}

/*
 * The causal mask's chain, the same in every layer, runs once a step
 * (ref/poly.c, npr_cpu_poly_share()): fewer nodes execute than with
 * NPR_CPU_NO_SHARE, the logits are the same, also when one layer's cache
 * is shorter than the others' (then nothing is skipped).
 */
TEST_TIMEOUT_F(repeated_steps_run_once, 300)
{
	float *a, *b;
	struct kv k, f;
	__u32 ra, rb;
	int s, na, nb, i;

	KV_OPEN_WITH(&k, "tiny_gpt", -1, true);
	setenv("NPR_CPU_NO_SHARE", "1", 1);
	KV_OPEN_WITH(&f, "tiny_gpt", -1, true);
	unsetenv("NPR_CPU_NO_SHARE");
	ra = kv_req(&k);
	rb = kv_req(&f);
	ASSERT_NE(ra, 0);
	ASSERT_NE(rb, 0);
	a = malloc(sizeof(float) * k.vocab);
	b = malloc(sizeof(float) * k.vocab);
	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	for (s = -1; s < 6; s++) {
		const int64_t *ids = k.g.tokens + (s < 0 ? 0 : k.g.nprompt + s);
		int n = s < 0 ? k.g.nprompt : 1;

		ASSERT_EQ(kv_feed(&k, ra, ids, n, a), 0);
		ASSERT_EQ(kv_feed(&f, rb, ids, n, b), 0);
		EXPECT_LE(lm_rel_err(a, b, k.vocab), 1e-6);
		EXPECT_LE(lm_rel_err(a, s < 0 ? k.g.prefill :
				     k.g.steps + (size_t)s * k.vocab, k.vocab),
			  TOLERANCE_REL);
	}
	na = kv_kernels(&k, ra, NULL, "ref");
	nb = kv_kernels(&f, rb, NULL, "ref");
	TH_LOG("nodes run: %d shared, %d not", na, nb);
	/* three layers' mask chains at least (a dozen steps each) */
	EXPECT_LT(na + 36, nb);
	/* layer 0's cache two positions shorter: its own mask */
	for (i = 0; i < 2; i++) {
		struct npr_state_arg st;
		struct kv *x = i ? &f : &k;
		__u32 r = i ? rb : ra;
		int v;

		for (v = 0; v < 2; v++) {
			memset(&st, 0, sizeof(st));
			st.size = sizeof(st);
			st.req = r;
			st.index = v;
			ASSERT_EQ(npr_ioctl(x->fd, NPR_IOCTL_STATE_GET, &st),
				  -EMSGSIZE);
			st.flags = NPR_STATE_TRUNCATE;
			st.dims[2] -= 2;
			st.bytes = 0;
			ASSERT_EQ(npr_ioctl(x->fd, NPR_IOCTL_STATE_SET, &st),
				  0);
		}
	}
	for (s = 6; s < 9; s++) {
		ASSERT_EQ(kv_feed(&k, ra, k.g.tokens + k.g.nprompt + s, 1, a),
			  0);
		ASSERT_EQ(kv_feed(&f, rb, k.g.tokens + k.g.nprompt + s, 1, b),
			  0);
		EXPECT_LE(lm_rel_err(a, b, k.vocab), 1e-6);
	}
	EXPECT_EQ(kv_kernels(&k, ra, NULL, "ref"),
		  kv_kernels(&f, rb, NULL, "ref"));
	free(a);
	free(b);
	lm_destroy(k.fd, ra);
	lm_destroy(f.fd, rb);
	kv_close(&k);
	kv_close(&f);
}

/* Rolling back rejected tokens: cut to step 5's cache, decode on. */
TEST_TIMEOUT_F(truncate_then_decode_again, 300)
{
	struct npr_state_arg st;
	struct kv k;
	__u32 req;

	KV_OPEN(&k, "tiny_gpt");
	req = kv_req(&k);
	ASSERT_NE(req, 0);
	decode(_metadata, &k, req, -1, 12);
	ASSERT_EQ(kv_truncate(&k, req, k.g.nprompt + 5), 0);
	decode(_metadata, &k, req, 5, 12);
	/* back to the prompt alone, then to nothing */
	ASSERT_EQ(kv_truncate(&k, req, k.g.nprompt), 0);
	decode(_metadata, &k, req, 0, 4);
	ASSERT_EQ(kv_truncate(&k, req, 0), 0);
	decode(_metadata, &k, req, -1, 4);
	/* longer than held, or a static dimension changed: refused */
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.req = req;
	st.flags = NPR_STATE_TRUNCATE;
	st.elem_type = NPR_ELEM_F32;
	st.rank = 4;
	st.dims[0] = 1;
	st.dims[1] = 4;
	st.dims[2] = k.g.nprompt + 5;
	st.dims[3] = 32;
	EXPECT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_SET, &st), -EINVAL);
	st.dims[2] = 1;
	st.dims[3] = 31;
	EXPECT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_SET, &st), -EINVAL);
	st.dims[3] = 32;
	st.flags = 1U << 7;
	EXPECT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_SET, &st), -EOPNOTSUPP);
	lm_destroy(k.fd, req);
	kv_close(&k);
}

TEST_TIMEOUT_F(reset_starts_over, 300)
{
	struct npr_state_arg st;
	struct kv k;
	__u32 req;

	KV_OPEN(&k, "tiny_gpt");
	req = kv_req(&k);
	ASSERT_NE(req, 0);
	decode(_metadata, &k, req, -1, 6);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.req = req;
	st.flags = NPR_STATE_RESET_ALL;
	ASSERT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_RESET, &st), 0);
	decode(_metadata, &k, req, -1, 6);
	lm_destroy(k.fd, req);
	kv_close(&k);
}

/* Two requests of one exec, steps interleaved, three steps apart. */
TEST_TIMEOUT_F(two_requests_interleaved, 300)
{
	struct kv k;
	__u32 a, b;
	int s;

	KV_OPEN(&k, "tiny_gpt");
	a = kv_req(&k);
	b = kv_req(&k);
	ASSERT_NE(a, 0);
	ASSERT_NE(b, 0);
	decode(_metadata, &k, a, -1, 3);
	decode(_metadata, &k, b, -1, 0);
	for (s = 0; s < 12; s++) {
		decode(_metadata, &k, a, s + 3, s + 4);
		decode(_metadata, &k, b, s, s + 1);
	}
	lm_destroy(k.fd, a);
	lm_destroy(k.fd, b);
	kv_close(&k);
}

/* STATE_GET of every variable into another request: it decodes on. */
TEST_TIMEOUT_F(state_get_set_moves_the_cache, 300)
{
	struct npr_state_arg st;
	struct kv k;
	void *buf;
	__u32 a, b;
	int i;

	KV_OPEN(&k, "tiny_gpt");
	a = kv_req(&k);
	b = kv_req(&k);
	ASSERT_NE(a, 0);
	ASSERT_NE(b, 0);
	decode(_metadata, &k, a, -1, 7);
	decode(_metadata, &k, b, -1, 2);	/* overwritten below */
	for (i = 0; i < k.nvars; i++) {
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		st.req = a;
		st.index = i;
		ASSERT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_GET, &st), -EMSGSIZE);
		buf = malloc(st.bytes);
		ASSERT_NONNULL(buf);
		st.data = (uintptr_t)buf;
		ASSERT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_GET, &st), 0);
		st.req = b;
		ASSERT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_SET, &st), 0);
		/* a wrong size is refused */
		st.bytes -= 4;
		EXPECT_EQ(npr_ioctl(k.fd, NPR_IOCTL_STATE_SET, &st), -EINVAL);
		free(buf);
	}
	decode(_metadata, &k, b, 7, 14);
	lm_destroy(k.fd, a);
	lm_destroy(k.fd, b);
	kv_close(&k);
}

TEST(pattern_errors)
{
	char path[4096];
	struct npr_model_load ld;
	int fd;

	if (!llm_path(path, sizeof(path), "tiny_gpt"))
		SKIP(return, "tiny_gpt not found under $NPR_SHARED/models/llm");
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	npr_prep_model_load(&ld, path, NULL);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ld), 0);
	EXPECT_EQ(make_stateful(fd, ld.handle, "past_key_values.", "present.*",
				1), -EINVAL);
	EXPECT_EQ(make_stateful(fd, ld.handle, "past_*_values.*", "present.*",
				1), -EINVAL);
	EXPECT_EQ(make_stateful(fd, ld.handle, "past.*", "present.*", 1),
		  -ENOENT);
	EXPECT_EQ(make_stateful(fd, ld.handle, "past_key_values.*", "gone.*",
				1), -ENOENT);
	EXPECT_EQ(make_stateful(fd, ld.handle, "past_key_values.*",
				"present.*", 2), -EINVAL);
	/* nothing changed by the failures: it still works */
	EXPECT_EQ(make_stateful(fd, ld.handle, "past_key_values.*",
				"present.*", 1), 0);
	npr_close(fd);
}

TEST_HARNESS_MAIN
