// SPDX-License-Identifier: MIT
/*
 * npr-lmbench: the per-token latency of a decoder-only language model with
 * an explicit KV cache (the layout of $NPR_SHARED/models/llm) on a device,
 * at static shapes: for each past length, an exec compiled for one new
 * token over that many cached positions runs INFER @runs times and the
 * median counts; the prefill is the prompt's length over an empty past.
 * Compiling is not part of any figure.  One JSON line:
 *
 *   npr-lmbench -m MODEL [-d DEV] [-t THREADS] [--from 8] [--to 72]
 *               [--every 8] [--runs 9] [--prompt 8]
 *
 * prefill_ms (median), token_ms_median (the median over the past lengths
 * of each one's median), token_ms_first / token_ms_last (the shortest and
 * the longest past), tokens_per_s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lm_util.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

/* Median ms of @runs INFERs of (@seq, @past) with random inputs. */
static int time_shape(struct lm *m, int64_t seq, int64_t past, int runs,
		      double *ms)
{
	struct lm_exec x;
	float **kv = lm_kv_alloc(m, past);
	int64_t *ids = calloc(seq, sizeof(*ids));
	double *t = calloc(runs, sizeof(*t));
	uint64_t ns;
	int i, j, ret = -ENOMEM;

	if (!kv || !ids || !t)
		goto out;
	for (i = 0; i < 2 * m->layers; i++)
		for (j = 0; j < (int)(lm_kv_bytes(m, past) / 4); j++)
			kv[i][j] = (float)(rand() % 1000) / 1000 - 0.5f;
	for (i = 0; i < seq; i++)
		ids[i] = rand() % m->vocab;
	ret = lm_compile(m, &x, seq, past);
	if (ret)
		goto out;
	ret = lm_set_inputs(m, &x, ids, kv);
	for (i = -1; !ret && i < runs; i++) {	/* run -1 warms up */
		ret = lm_infer(m, &x, &ns);
		if (i >= 0)
			t[i] = ns / 1e6;
	}
	lm_exec_free(m, &x);
	if (!ret)
		*ms = median(t, runs);
out:
	lm_kv_free(m, kv);
	free(ids);
	free(t);
	return ret;
}

static void usage(void)
{
	fprintf(stderr, "usage: npr-lmbench -m MODEL [-d DEV] [-t THREADS] "
		"[--from N] [--to N] [--every N] [--runs N] [--prompt N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = "cpu", *model = NULL;
	int threads = 0, from = 8, to = 72, every = 8, runs = 9, prompt = 8;
	double pre, *tok, first = 0, last = 0, med;
	struct lm m;
	int i, n = 0, fd, ret;
	int64_t p;

	for (i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "-m"))
			model = v;
		else if (!strcmp(a, "-d"))
			dev = v;
		else if (!strcmp(a, "-t"))
			threads = atoi(v);
		else if (!strcmp(a, "--from"))
			from = atoi(v);
		else if (!strcmp(a, "--to"))
			to = atoi(v);
		else if (!strcmp(a, "--every"))
			every = atoi(v);
		else if (!strcmp(a, "--runs"))
			runs = atoi(v);
		else if (!strcmp(a, "--prompt"))
			prompt = atoi(v);
		else
			usage();
	}
	if (!model || from < 0 || to < from || every < 1 || runs < 1 ||
	    prompt < 1)
		usage();
	fd = npr_open(dev, 0);
	if (fd < 0) {
		fprintf(stderr, "npr-lmbench: %s: %s\n", dev, npr_last_error());
		return 1;
	}
	ret = lm_open(&m, fd, model);
	if (!ret && threads)
		ret = lm_prop(&m, NPR_PARAM_INFERENCE_NUM_THREADS, threads);
	if (ret)
		goto fail;
	srand(1);
	ret = time_shape(&m, prompt, 0, runs, &pre);
	if (ret)
		goto fail;
	tok = calloc((to - from) / every + 1, sizeof(*tok));
	if (!tok)
		return 1;
	for (p = from; p <= to; p += every) {
		ret = time_shape(&m, 1, p, runs, &tok[n]);
		if (ret)
			goto fail;
		if (p == from)
			first = tok[n];
		last = tok[n];
		n++;
	}
	med = median(tok, n);
	printf("{\"runtime\":\"npuring\",\"model\":\"%s\",\"threads\":%d,"
	       "\"prefill_ms\":%.3f,\"token_ms_median\":%.3f,"
	       "\"token_ms_first\":%.3f,\"token_ms_last\":%.3f,"
	       "\"tokens_per_s\":%.1f}\n", model, threads, pre, med, first,
	       last, 1000 / med);
	free(tok);
	close(fd);
	return 0;
fail:
	fprintf(stderr, "npr-lmbench: %s: %s\n", model, npr_last_error());
	return 1;
}
