// SPDX-License-Identifier: MIT
/*
 * npr-generate - decode a language model a token at a time: the model's
 * KV cache made state by name pattern (NPR_MAKE_STATEFUL_PATTERN,
 * past_key_values.* with present.*), the prompt fed at once (prefill),
 * then one token per inference, greedy or sampled; prints the tokens,
 * the prefill time, the per-token latency and tokens/s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "json.h"
#include "npuring.h"
#include "tool.h"

#define MAX_PROMPT	65536
#define MAX_STEPS	100000

static struct {
	const char *dev, *model, *prompt_ids, *prompt_file, *dump;
	int steps, threads, top_k;
	bool ring, json, sample;
	float temperature;
	uint64_t seed;
} opt = { .dev = "cpu", .steps = 32 };

static void usage(void)
{
	printf("usage: %s -d DEV -m MODEL (--prompt-ids 1,2,3 | --prompt-file F.i64)\n"
	       "       [--steps N] [-t THREADS] [--ring] [--json] [--dump-logits FILE]\n"
	       "       [--temperature T [--top-k K] [--seed S]]\n"
	       "  -d, --device DEV     cpu (default), npu or null\n"
	       "  -m, --model MODEL    an ONNX decoder with input_ids and a KV cache\n"
	       "                       (past_key_values.N.key/value, present.N.key/value)\n"
	       "      --prompt-ids L   the prompt: token ids separated by commas\n"
	       "      --prompt-file F  the prompt: raw little-endian int64 ids\n"
	       "      --steps N        tokens to generate (default 32)\n"
	       "  -t, --threads N      INFERENCE_NUM_THREADS\n"
	       "      --ring           one INFER ring job per step\n"
	       "      --json           one line of JSON\n"
	       "      --dump-logits F  every step's logits, [steps, vocab] f32\n"
	       "      --temperature T  sample from softmax(logits / T) (default: greedy)\n"
	       "      --top-k K        ... among the K largest logits only\n"
	       "      --seed S         the sampler's seed (default 0)\n"
	       "      --version        print the version\n",
	       npr_tool_name());
}

static void __attribute__((noreturn)) die_lib(int fd, const char *what,
					      int err)
{
	char msg[512];
	struct npr_get_error ge = { .size = sizeof(ge) };

	ge.buf = (uintptr_t)msg;
	ge.len = sizeof(msg);
	if (fd < 0 || npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge) < 0)
		snprintf(msg, sizeof(msg), "%s", strerror(-err));
	npr_tool_fail("%s: %s", what, msg);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* --prompt-ids 1,2,3 */
static int64_t *parse_ids(const char *s, int *n)
{
	int64_t *ids = malloc(sizeof(*ids) * MAX_PROMPT);
	const char *p = s;
	char *end;

	if (!ids)
		npr_tool_fail("out of memory");
	*n = 0;
	for (;;) {
		long long v;

		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno || v < 0 || (*end && *end != ','))
			npr_tool_usage("--prompt-ids: '%s' is not a list of token ids (0, 1, ...) separated by commas",
				       s);
		if (*n == MAX_PROMPT)
			npr_tool_usage("--prompt-ids: more than %d tokens",
				       MAX_PROMPT);
		ids[(*n)++] = v;
		if (!*end)
			return ids;
		p = end + 1;
	}
}

/* --prompt-file F.i64 */
static int64_t *read_ids(const char *path, int *n)
{
	FILE *f = fopen(path, "rb");
	int64_t *ids;
	long len;
	int i;

	if (!f)
		npr_tool_fail("%s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		npr_tool_fail("%s: cannot tell its size", path);
	if (!len || len % 8 || len / 8 > MAX_PROMPT)
		npr_tool_fail("%s: %ld bytes is not 1 to %d int64 token ids",
			      path, len, MAX_PROMPT);
	ids = malloc(len);
	if (!ids)
		npr_tool_fail("out of memory");
	if (fread(ids, 1, len, f) != (size_t)len)
		npr_tool_fail("%s: short read", path);
	fclose(f);
	*n = (int)(len / 8);
	for (i = 0; i < *n; i++)
		if (ids[i] < 0)
			npr_tool_fail("%s: token %d is %lld", path, i,
				      (long long)ids[i]);
	return ids;
}

/* splitmix64: the sampler's generator, the same on every machine */
static double uniform(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (z >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_desc(const void *a, const void *b, void *arg)
{
	const float *l = arg;
	float x = l[*(const int *)a], y = l[*(const int *)b];

	return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* The next token: the largest logit, or a sample of the top k. */
static int64_t choose(const float *l, int vocab, int *idx, double *p,
		      uint64_t *rng)
{
	int i, k = vocab, best = 0;
	double sum = 0, r;

	if (!opt.sample) {
		for (i = 1; i < vocab; i++)
			if (l[i] > l[best])
				best = i;
		return best;
	}
	for (i = 0; i < vocab; i++)
		idx[i] = i;
	qsort_r(idx, vocab, sizeof(*idx), cmp_desc, (void *)l);
	if (opt.top_k && opt.top_k < k)
		k = opt.top_k;
	for (i = 0; i < k; i++) {
		p[i] = exp((l[idx[i]] - l[idx[0]]) / opt.temperature);
		sum += p[i];
	}
	r = uniform(rng) * sum;
	for (i = 0; i < k - 1 && r >= p[i]; i++)
		r -= p[i];
	return idx[i];
}

struct gen {
	int fd;
	__u32 model, exec, req;
	int vocab;
	float *logits;		/* [n, vocab] of the last inference */
	size_t cap;
};

static void load(struct gen *g)
{
	struct npr_state_pair kv = {
		(uintptr_t)"past_key_values.*", (uintptr_t)"present.*",
	};
	struct npr_make_stateful ms = { .size = sizeof(ms) };
	struct npr_prop_arg prop = {
		.param = NPR_PARAM_INFERENCE_NUM_THREADS,
	};
	struct npr_model_load ld;
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_port_info pi;
	struct npr_compile c;
	struct npr_req_create rc;
	char name[256];
	int err;

	g->fd = npr_open(opt.dev, 0);
	if (g->fd < 0)
		die_lib(-1, opt.dev, g->fd);
	npr_prep_model_load(&ld, opt.model, NULL);
	err = npr_ioctl(g->fd, NPR_IOCTL_MODEL_LOAD, &ld);
	if (err)
		die_lib(g->fd, opt.model, err);
	g->model = ld.handle;
	ms.flags = NPR_MAKE_STATEFUL_PATTERN;
	ms.model = g->model;
	ms.count = 1;
	ms.pairs = (uintptr_t)&kv;
	err = npr_ioctl(g->fd, NPR_IOCTL_MAKE_STATEFUL, &ms);
	if (err)
		die_lib(g->fd, "the KV cache as state", err);
	mi.handle = g->model;
	err = npr_ioctl(g->fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		die_lib(g->fd, "MODEL_INFO", err);
	npr_prep_port_info(&pi, g->model, 0, 0, name, sizeof(name));
	err = npr_ioctl(g->fd, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		die_lib(g->fd, "PORT_INFO", err);
	if (mi.num_inputs != 1 || strcmp(name, "input_ids") ||
	    pi.elem_type != NPR_ELEM_I64)
		npr_tool_fail("%s: the inputs besides the KV cache are not input_ids (int64) alone",
			      opt.model);
	npr_prep_port_info(&pi, g->model, 0, 1, name, sizeof(name));
	err = npr_ioctl(g->fd, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		die_lib(g->fd, "PORT_INFO", err);
	if (pi.elem_type != NPR_ELEM_F32 || pi.rank != 3 ||
	    pi.dims[2] <= 0)
		npr_tool_fail("%s: output 0 (%s) is not f32 logits [batch, seq, vocab]",
			      opt.model, name);
	g->vocab = (int)pi.dims[2];
	npr_prep_compile(&c, g->model);
	if (opt.threads) {
		prop.value = opt.threads;
		c.props = (uintptr_t)&prop;
		c.num_props = 1;
	}
	err = npr_ioctl(g->fd, NPR_IOCTL_COMPILE, &c);
	if (err)
		die_lib(g->fd, "COMPILE", err);
	g->exec = c.exec;
	npr_prep_req_create(&rc, g->exec);
	err = npr_ioctl(g->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		die_lib(g->fd, "REQ_CREATE", err);
	g->req = rc.req;
	if (opt.ring) {
		struct npr_ring_setup rs = { .size = sizeof(rs) };

		err = npr_ioctl(g->fd, NPR_IOCTL_RING_SETUP, &rs);
		if (err)
			die_lib(g->fd, "RING_SETUP", err);
	}
}

/* Feed @n tokens; the logits of the last one are returned. */
static const float *feed(struct gen *g, const int64_t *ids, int n)
{
	struct npr_tensor_arg ta;
	size_t bytes = sizeof(float) * g->vocab * n;
	int err;

	npr_prep_tensor(&ta, g->req, 0, 0, (void *)ids, sizeof(*ids) * n);
	ta.elem_type = NPR_ELEM_I64;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = n;
	err = npr_ioctl(g->fd, NPR_IOCTL_SET_TENSOR, &ta);
	if (err)
		die_lib(g->fd, "SET_TENSOR", err);
	if (opt.ring) {
		struct npr_sqe sqe = { .opcode = NPR_OP_INFER };
		struct npr_submit su = { .size = sizeof(su) };
		struct npr_reap re = { .size = sizeof(re) };
		struct npr_cqe cqe;

		sqe.handle = g->req;
		su.sqes = (uintptr_t)&sqe;
		su.count = 1;
		err = npr_ioctl(g->fd, NPR_IOCTL_SUBMIT, &su);
		if (err)
			die_lib(g->fd, "SUBMIT", err);
		re.cqes = (uintptr_t)&cqe;
		re.max = re.min = 1;
		err = npr_ioctl(g->fd, NPR_IOCTL_REAP, &re);
		if (err)
			die_lib(g->fd, "REAP", err);
		if (cqe.res < 0)
			npr_tool_fail("INFER job: %s", strerror(-cqe.res));
	} else {
		struct npr_infer inf;

		npr_prep_infer(&inf, g->req);
		err = npr_ioctl(g->fd, NPR_IOCTL_INFER, &inf);
		if (err)
			die_lib(g->fd, "INFER", err);
	}
	if (bytes > g->cap) {
		free(g->logits);
		g->logits = malloc(bytes);
		if (!g->logits)
			npr_tool_fail("out of memory");
		g->cap = bytes;
	}
	npr_prep_tensor(&ta, g->req, 0, 1, g->logits, bytes);
	err = npr_ioctl(g->fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (err)
		die_lib(g->fd, "GET_TENSOR", err);
	if (ta.bytes != bytes)
		npr_tool_fail("logits of %llu bytes, %zu expected",
			      (unsigned long long)ta.bytes, bytes);
	return g->logits + (size_t)(n - 1) * g->vocab;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* percentile @p of @n sorted values, in ms */
static double pct_ms(const uint64_t *v, int n, int p)
{
	int i = (int)((int64_t)(n - 1) * p / 100);

	return n ? v[i] / 1e6 : 0;
}

static double r3(double v)
{
	return round(v * 1000) / 1000;
}

/* median of steps [a, b), in ms */
static double median_ms(const uint64_t *lat, int a, int b)
{
	uint64_t v[64];
	int n = 0, i;

	for (i = a; i < b && n < 64; i++)
		v[n++] = lat[i];
	qsort(v, n, sizeof(*v), cmp_u64);
	return pct_ms(v, n, 50);
}

static void generate(const int64_t *prompt, int nprompt)
{
	struct gen g = { 0 };
	uint64_t t, prefill, *lat, *sorted, total = 0, rng = opt.seed;
	int64_t *tokens, tok;
	const float *l;
	FILE *dump = NULL;
	double *p;
	int *idx, s, i, w;

	load(&g);
	tokens = malloc(sizeof(*tokens) * opt.steps);
	lat = malloc(sizeof(*lat) * opt.steps);
	sorted = malloc(sizeof(*sorted) * opt.steps);
	idx = malloc(sizeof(*idx) * g.vocab);
	p = malloc(sizeof(*p) * g.vocab);
	if (!tokens || !lat || !sorted || !idx || !p)
		npr_tool_fail("out of memory");
	if (opt.dump) {
		dump = fopen(opt.dump, "wb");
		if (!dump)
			npr_tool_fail("%s: %s", opt.dump, strerror(errno));
	}
	t = now_ns();
	l = feed(&g, prompt, nprompt);
	prefill = now_ns() - t;
	tok = choose(l, g.vocab, idx, p, &rng);
	/* step s feeds token s: its logits are row s of --dump-logits */
	for (s = 0; s < opt.steps; s++) {
		tokens[s] = tok;
		t = now_ns();
		l = feed(&g, &tokens[s], 1);
		lat[s] = now_ns() - t;
		total += lat[s];
		if (dump && fwrite(l, sizeof(float), g.vocab, dump) !=
		    (size_t)g.vocab)
			npr_tool_fail("%s: %s", opt.dump, strerror(errno));
		tok = choose(l, g.vocab, idx, p, &rng);
	}
	if (dump && fclose(dump))
		npr_tool_fail("%s: %s", opt.dump, strerror(errno));
	memcpy(sorted, lat, sizeof(*lat) * opt.steps);
	qsort(sorted, opt.steps, sizeof(*sorted), cmp_u64);
	w = opt.steps < 8 ? opt.steps : 8;
	if (opt.json) {
		struct npr_json *js = npr_tool_json_begin(0);

		npr_json_begin_object(js);
		npr_json_kv_string(js, "device", opt.dev);
		npr_json_kv_string(js, "model", opt.model);
		npr_json_kv_int(js, "threads", opt.threads);
		npr_json_kv_bool(js, "ring", opt.ring);
		npr_json_kv_int(js, "prompt_tokens", nprompt);
		npr_json_key(js, "tokens");
		npr_json_begin_array(js);
		for (s = 0; s < opt.steps; s++)
			npr_json_int(js, tokens[s]);
		npr_json_end_array(js);
		npr_json_kv_double(js, "prefill_ms", r3(prefill / 1e6));
		npr_json_kv_double(js, "token_ms_median",
				   r3(pct_ms(sorted, opt.steps, 50)));
		npr_json_kv_double(js, "token_ms_p90",
				   r3(pct_ms(sorted, opt.steps, 90)));
		npr_json_kv_double(js, "token_ms_first8",
				   r3(median_ms(lat, 0, w)));
		npr_json_kv_double(js, "token_ms_last8",
				   r3(median_ms(lat, opt.steps - w,
						opt.steps)));
		npr_json_kv_double(js, "tokens_per_s",
				   round(opt.steps / (total / 1e9) * 100) /
				   100);
		npr_json_kv_int(js, "peak_rss_kb", peak_rss_kb());
		npr_json_end_object(js);
		npr_tool_json_end(js);
	} else {
		printf("tokens:");
		for (i = 0; i < opt.steps; i++)
			printf(" %lld", (long long)tokens[i]);
		printf("\nprefill: %.3f ms for %d tokens\n", prefill / 1e6,
		       nprompt);
		printf("per token: median %.3f ms, p90 %.3f ms (steps 1-%d %.3f ms, last %d %.3f ms)\n",
		       pct_ms(sorted, opt.steps, 50),
		       pct_ms(sorted, opt.steps, 90), w, median_ms(lat, 0, w),
		       w, median_ms(lat, opt.steps - w, opt.steps));
		printf("%.2f tokens/s, peak RSS %ld kB\n",
		       opt.steps / (total / 1e9), peak_rss_kb());
	}
	free(tokens);
	free(lat);
	free(sorted);
	free(idx);
	free(p);
	free(g.logits);
	close(g.fd);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "model", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 't' },
		{ "prompt-ids", required_argument, NULL, 'P' },
		{ "prompt-file", required_argument, NULL, 'F' },
		{ "steps", required_argument, NULL, 'n' },
		{ "ring", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "dump-logits", required_argument, NULL, 'D' },
		{ "temperature", required_argument, NULL, 'T' },
		{ "top-k", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static const char shortopts[] = "d:m:t:h";
	bool seed_set = false;
	int64_t *prompt;
	int c, n;

	npr_tool_init("npr-generate");
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'm': opt.model = optarg; break;
		case 't': opt.threads = npr_tool_int("-t", optarg, 1, 1024); break;
		case 'P': opt.prompt_ids = optarg; break;
		case 'F': opt.prompt_file = optarg; break;
		case 'n':
			opt.steps = npr_tool_int("--steps", optarg, 1,
						 MAX_STEPS);
			break;
		case 'r': opt.ring = true; break;
		case 'j': opt.json = true; break;
		case 'D': opt.dump = optarg; break;
		case 'T':
			opt.temperature = npr_tool_float("--temperature",
							 optarg);
			if (!(opt.temperature > 0) || isinf(opt.temperature))
				npr_tool_usage("--temperature: '%s' is not a number above 0",
					       optarg);
			opt.sample = true;
			break;
		case 'k':
			opt.top_k = npr_tool_int("--top-k", optarg, 1,
						 1 << 30);
			break;
		case 's': {
			char *end;

			errno = 0;
			opt.seed = strtoull(optarg, &end, 0);
			if (end == optarg || *end || errno ||
			    optarg[0] == '-')
				npr_tool_usage("--seed: '%s' is not a number from 0 to 2^64-1",
					       optarg);
			seed_set = true;
			break;
		}
		case 'h': usage(); return 0;
		case 'V': npr_tool_version(); return 0;
		default: npr_tool_usage(NULL);
		}
	}
	if (optind < argc)
		npr_tool_usage("unexpected argument '%s'", argv[optind]);
	if (!opt.model)
		npr_tool_usage("-m MODEL is required");
	if (!opt.prompt_ids == !opt.prompt_file)
		npr_tool_usage("give the prompt with --prompt-ids or --prompt-file, one of them");
	if ((opt.top_k || seed_set) && !opt.sample)
		npr_tool_usage("--top-k and --seed go with --temperature (greedy otherwise)");
	prompt = opt.prompt_ids ? parse_ids(opt.prompt_ids, &n) :
		 read_ids(opt.prompt_file, &n);
	generate(prompt, n);
	free(prompt);
	return 0;
}
