/* SPDX-License-Identifier: MIT */
/*
 * Helpers of llm_test.c and npr-lmbench.c: a decoder-only language model
 * with an explicit KV cache (input_ids, past_key_values.N.key/value in;
 * logits, present.N.key/value out), compiled with static shapes for one
 * (sequence, past) pair at a time, and its PyTorch goldens
 * (NAME.prefill_logits.f32, NAME.step_logits.f32, NAME.tokens.i64).
 *
 * Functions return 0 or -errno; npr_last_error() says why a library call
 * failed.
 */
#ifndef LM_UTIL_H
#define LM_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npuring.h"
#include "files.h"

#define LM_MAX_LAYERS	32
#define LM_MAX_PROPS	4

struct lm {
	int fd;
	__u32 model;
	int layers, kvh, hd, vocab;
	int ids_port, logits_port;
	int past_port[2 * LM_MAX_LAYERS];	/* key, value per layer */
	int present_port[2 * LM_MAX_LAYERS];
	int nin;
	struct npr_prop_arg props[LM_MAX_PROPS];
	int nprops;
};

/* One compiled (sequence, past) shape and a request of it. */
struct lm_exec {
	__u32 exec, req;
	int64_t seq, past;
};

static inline int lm_port_index(const char *name, const char *prefix,
				const char **rest)
{
	size_t n = strlen(prefix);
	char *end;
	long v;

	if (strncmp(name, prefix, n))
		return -1;
	v = strtol(name + n, &end, 10);
	if (end == name + n || v < 0 || v >= LM_MAX_LAYERS || *end != '.')
		return -1;
	*rest = end + 1;
	return (int)v;
}

/* Which layer slot a port name is, or -1: 2 * layer + (value ? 1 : 0). */
static inline int lm_kv_slot(const char *name, const char *prefix)
{
	const char *rest;
	int l = lm_port_index(name, prefix, &rest);

	if (l < 0)
		return -1;
	if (!strcmp(rest, "key"))
		return 2 * l;
	if (!strcmp(rest, "value"))
		return 2 * l + 1;
	return -1;
}

/**
 * lm_open() - load @path on the device @fd and find its ports
 * @m: Out.
 * @fd: an open device.
 * @path: the .onnx file.
 *
 * Return: 0, or -errno (-ENOENT: the ports are not those of a KV-cache
 * language model).
 */
static inline int lm_open(struct lm *m, int fd, const char *path)
{
	struct npr_model_load ld;
	struct npr_model_info mi;
	int i, ret, out;

	memset(m, 0, sizeof(*m));
	m->fd = fd;
	m->ids_port = m->logits_port = -1;
	for (i = 0; i < 2 * LM_MAX_LAYERS; i++)
		m->past_port[i] = m->present_port[i] = -1;
	npr_prep_model_load(&ld, path, NULL);
	ret = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ld);
	if (ret)
		return ret;
	m->model = ld.handle;
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = m->model;
	ret = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (ret)
		return ret;
	m->nin = mi.num_inputs;
	for (out = 0; out < 2; out++) {
		__u32 n = out ? mi.num_outputs : mi.num_inputs;

		for (i = 0; i < (int)n; i++) {
			struct npr_port_info pi;
			char name[128];
			int s;

			npr_prep_port_info(&pi, m->model, i, out, name,
					   sizeof(name));
			ret = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
			if (ret)
				return ret;
			if (!out && !strcmp(name, "input_ids")) {
				m->ids_port = i;
			} else if (out && !strcmp(name, "logits")) {
				m->logits_port = i;
				m->vocab = (int)pi.dims[pi.rank - 1];
			} else if (!out && (s = lm_kv_slot(name,
					"past_key_values.")) >= 0) {
				m->past_port[s] = i;
				if (s / 2 + 1 > m->layers)
					m->layers = s / 2 + 1;
				if (pi.rank != 4)
					return -ENOENT;
				m->kvh = (int)pi.dims[1];
				m->hd = (int)pi.dims[3];
			} else if (out && (s = lm_kv_slot(name,
					"present.")) >= 0) {
				m->present_port[s] = i;
			}
		}
	}
	if (m->ids_port < 0 || m->logits_port < 0 || !m->layers ||
	    m->vocab <= 0 || m->kvh <= 0 || m->hd <= 0)
		return -ENOENT;
	for (i = 0; i < 2 * m->layers; i++)
		if (m->past_port[i] < 0 || m->present_port[i] < 0)
			return -ENOENT;
	return 0;
}

/* A property for every compile of @m (INFERENCE_NUM_THREADS, ...). */
static inline int lm_prop(struct lm *m, __u32 param, __u64 value)
{
	if (m->nprops >= LM_MAX_PROPS)
		return -E2BIG;
	m->props[m->nprops].param = param;
	m->props[m->nprops].reserved = 0;
	m->props[m->nprops].value = value;
	m->nprops++;
	return 0;
}

static inline void lm_destroy(int fd, __u32 h)
{
	struct npr_handle_destroy d;

	npr_prep_destroy(&d, h);
	npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d);
}

/**
 * lm_compile() - compile @m for @seq new tokens over @past cached ones
 * @m: the model.
 * @x: Out. The exec and a request of it.
 * @seq: tokens fed at once (>= 1).
 * @past: cached positions (>= 0; 0: empty past tensors).
 *
 * Return: 0 or -errno.
 */
static inline int lm_compile(struct lm *m, struct lm_exec *x, int64_t seq,
			     int64_t past)
{
	struct npr_shape_arg sh[1 + 2 * LM_MAX_LAYERS];
	struct npr_compile c;
	struct npr_req_create rc;
	int i, n = 0, ret;

	memset(sh, 0, sizeof(sh));
	sh[n].index = m->ids_port;
	sh[n].rank = 2;
	sh[n].dims[0] = 1;
	sh[n].dims[1] = seq;
	n++;
	for (i = 0; i < 2 * m->layers; i++, n++) {
		sh[n].index = m->past_port[i];
		sh[n].rank = 4;
		sh[n].dims[0] = 1;
		sh[n].dims[1] = m->kvh;
		sh[n].dims[2] = past;
		sh[n].dims[3] = m->hd;
	}
	npr_prep_compile(&c, m->model);
	c.shapes = (uintptr_t)sh;
	c.num_shapes = n;
	c.props = (uintptr_t)m->props;
	c.num_props = m->nprops;
	ret = npr_ioctl(m->fd, NPR_IOCTL_COMPILE, &c);
	if (ret)
		return ret;
	npr_prep_req_create(&rc, c.exec);
	ret = npr_ioctl(m->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (ret) {
		lm_destroy(m->fd, c.exec);
		return ret;
	}
	x->exec = c.exec;
	x->req = rc.req;
	x->seq = seq;
	x->past = past;
	return 0;
}

static inline void lm_exec_free(struct lm *m, struct lm_exec *x)
{
	lm_destroy(m->fd, x->req);
	lm_destroy(m->fd, x->exec);
	memset(x, 0, sizeof(*x));
}

static inline int lm_set(struct lm *m, struct lm_exec *x, int port,
			 __u32 type, int rank, const int64_t *dims,
			 const void *data, size_t bytes)
{
	struct npr_tensor_arg ta;
	int i;

	npr_prep_tensor(&ta, x->req, port, 0, (void *)data, bytes);
	ta.elem_type = type;
	ta.rank = rank;
	for (i = 0; i < rank; i++)
		ta.dims[i] = dims[i];
	return npr_ioctl(m->fd, NPR_IOCTL_SET_TENSOR, &ta);
}

static inline int lm_get(struct lm *m, struct lm_exec *x, int port,
			 void *data, size_t bytes)
{
	struct npr_tensor_arg ta;
	int ret;

	npr_prep_tensor(&ta, x->req, port, 1, data, bytes);
	ret = npr_ioctl(m->fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (!ret && ta.bytes != bytes)
		return -EMSGSIZE;
	return ret;
}

/* Bytes of one layer's key (or value) cache at @len positions. */
static inline size_t lm_kv_bytes(const struct lm *m, int64_t len)
{
	return (size_t)m->kvh * len * m->hd * sizeof(float);
}

/**
 * lm_set_inputs() - the tokens and the cache of the next inference
 * @m: the model.
 * @x: a compiled shape.
 * @ids: x->seq tokens.
 * @kv: 2 * layers arrays of [kvh, x->past, hd] (may be NULL when past is 0).
 *
 * Return: 0 or -errno.
 */
static inline int lm_set_inputs(struct lm *m, struct lm_exec *x,
				const int64_t *ids, float *const *kv)
{
	int64_t d[4] = { 1, x->seq, 0, 0 };
	int i, ret;

	ret = lm_set(m, x, m->ids_port, NPR_ELEM_I64, 2, d, ids,
		     x->seq * sizeof(int64_t));
	d[1] = m->kvh;
	d[2] = x->past;
	d[3] = m->hd;
	for (i = 0; !ret && i < 2 * m->layers; i++)
		ret = lm_set(m, x, m->past_port[i], NPR_ELEM_F32, 4, d,
			     x->past ? kv[i] : NULL, lm_kv_bytes(m, x->past));
	return ret;
}

static inline int lm_infer(struct lm *m, struct lm_exec *x, uint64_t *ns)
{
	struct npr_infer inf;
	int ret;

	npr_prep_infer(&inf, x->req);
	ret = npr_ioctl(m->fd, NPR_IOCTL_INFER, &inf);
	if (!ret && ns)
		*ns = inf.finished_ns - inf.started_ns;
	return ret;
}

/**
 * lm_get_outputs() - the logits and the new cache of the last inference
 * @m: the model.
 * @x: the compiled shape that ran.
 * @logits: Out. [x->seq, vocab].
 * @kv: Out. 2 * layers arrays of [kvh, past + seq, hd] (or NULL: skipped).
 *
 * Return: 0 or -errno.
 */
static inline int lm_get_outputs(struct lm *m, struct lm_exec *x,
				 float *logits, float *const *kv)
{
	int i, ret;

	ret = lm_get(m, x, m->logits_port, logits,
		     (size_t)x->seq * m->vocab * sizeof(float));
	for (i = 0; !ret && kv && i < 2 * m->layers; i++)
		ret = lm_get(m, x, m->present_port[i], kv[i],
			     lm_kv_bytes(m, x->past + x->seq));
	return ret;
}

/**
 * lm_step() - compile for (@seq, @past), run once, free the exec
 * @m: the model.
 * @ids: @seq tokens.
 * @seq: new tokens.
 * @past: cached positions.
 * @kv_in: the cache ([kvh, past, hd] per slot).
 * @logits: Out. [seq, vocab].
 * @kv_out: Out. [kvh, past + seq, hd] per slot.
 *
 * Return: 0 or -errno.
 */
static inline int lm_step(struct lm *m, const int64_t *ids, int64_t seq,
			  int64_t past, float *const *kv_in, float *logits,
			  float *const *kv_out)
{
	struct lm_exec x;
	int ret;

	ret = lm_compile(m, &x, seq, past);
	if (ret)
		return ret;
	ret = lm_set_inputs(m, &x, ids, kv_in);
	if (!ret)
		ret = lm_infer(m, &x, NULL);
	if (!ret)
		ret = lm_get_outputs(m, &x, logits, kv_out);
	lm_exec_free(m, &x);
	return ret;
}

/* The goldens of a model NAME.onnx: NAME.{prefill_logits,step_logits}.f32 */
struct lm_gold {
	float *prefill;		/* [vocab] */
	float *steps;		/* [nsteps, vocab] */
	int64_t *tokens;	/* prompt, then nsteps generated */
	int nsteps, nprompt;
};

static inline void lm_gold_free(struct lm_gold *g)
{
	free(g->prefill);
	free(g->steps);
	free(g->tokens);
	memset(g, 0, sizeof(*g));
}

/**
 * lm_gold_load() - read the goldens next to @onnx_path
 * @g: Out.
 * @onnx_path: NAME.onnx.
 * @vocab: the model's vocabulary (the files' sizes are checked with it).
 *
 * Return: 0, -ENOENT (a file is missing) or -EINVAL (sizes disagree).
 */
static inline int lm_gold_load(struct lm_gold *g, const char *onnx_path,
			       int vocab)
{
	char p[4096];
	size_t n = strlen(onnx_path), len[3] = { 0, 0, 0 };

	memset(g, 0, sizeof(*g));
	if (n < 5 || n + 32 > sizeof(p))
		return -EINVAL;
	n -= 5;
	snprintf(p, sizeof(p), "%.*s.prefill_logits.f32", (int)n, onnx_path);
	g->prefill = npr_test_slurp(p, &len[0]);
	snprintf(p, sizeof(p), "%.*s.step_logits.f32", (int)n, onnx_path);
	g->steps = npr_test_slurp(p, &len[1]);
	snprintf(p, sizeof(p), "%.*s.tokens.i64", (int)n, onnx_path);
	g->tokens = npr_test_slurp(p, &len[2]);
	if (!g->prefill || !g->steps || !g->tokens) {
		lm_gold_free(g);
		return -ENOENT;
	}
	g->nsteps = (int)(len[1] / (vocab * sizeof(float)));
	g->nprompt = (int)(len[2] / sizeof(int64_t)) - g->nsteps;
	if (len[0] != vocab * sizeof(float) ||
	    len[1] != (size_t)g->nsteps * vocab * sizeof(float) ||
	    g->nprompt < 1) {
		lm_gold_free(g);
		return -EINVAL;
	}
	return 0;
}

static inline int lm_argmax(const float *v, int n)
{
	int i, m = 0;

	for (i = 1; i < n; i++)
		if (v[i] > v[m])
			m = i;
	return m;
}

/* max|a - b| / max|b| over @n values. */
static inline double lm_rel_err(const float *a, const float *b, int n)
{
	double e = 0, big = 0, d;
	int i;

	for (i = 0; i < n; i++) {
		d = a[i] - b[i];
		if (d < 0)
			d = -d;
		if (d > e || d != d)
			e = d;
		d = b[i] < 0 ? -b[i] : b[i];
		if (d > big)
			big = d;
	}
	return big > 0 ? e / big : e;
}

/* Cache arrays: 2 * layers of [kvh, len, hd]. */
static inline float **lm_kv_alloc(const struct lm *m, int64_t len)
{
	float **kv = calloc(2 * m->layers, sizeof(*kv));
	int i;

	if (!kv)
		return NULL;
	for (i = 0; i < 2 * m->layers; i++) {
		kv[i] = malloc(lm_kv_bytes(m, len) ? lm_kv_bytes(m, len) : 1);
		if (!kv[i]) {
			while (i--)
				free(kv[i]);
			free(kv);
			return NULL;
		}
	}
	return kv;
}

static inline void lm_kv_free(const struct lm *m, float **kv)
{
	int i;

	if (!kv)
		return;
	for (i = 0; i < 2 * m->layers; i++)
		free(kv[i]);
	free(kv);
}

/**
 * lm_count_types() - which op types one token's inference executed
 * @path: the .onnx file.
 * @past: the cached positions of the compiled shape.
 * @types: @n op type names.
 * @n: how many.
 * @counts: Out. Per type, the nodes of it that ran (the profile's
 *          NPR_PROF_EXECUTED records): what the cpu device's fusions made
 *          of the model.
 *
 * Return: 0 or -errno.
 */
static inline int lm_count_types(const char *path, int64_t past,
				 const char *const *types, int n, int *counts)
{
	struct npr_profile p = { .size = sizeof(p) };
	struct npr_profile_rec *recs = NULL;
	struct lm_exec x;
	struct lm m;
	int64_t ids[1] = { 1 };
	float **kv = NULL;
	int fd, ret, i;
	__u32 r;

	memset(counts, 0, sizeof(int) * n);
	fd = npr_open("cpu", 0);
	if (fd < 0)
		return fd;
	ret = lm_open(&m, fd, path);
	if (!ret)
		ret = lm_prop(&m, NPR_PARAM_ENABLE_PROFILING, 1);
	if (!ret)
		ret = lm_compile(&m, &x, 1, past);
	if (!ret) {
		kv = lm_kv_alloc(&m, past);
		ret = kv ? 0 : -ENOMEM;
	}
	for (i = 0; !ret && i < 2 * m.layers; i++)
		memset(kv[i], 0, lm_kv_bytes(&m, past));
	if (!ret)
		ret = lm_set_inputs(&m, &x, ids, kv);
	if (!ret)
		ret = lm_infer(&m, &x, NULL);
	if (!ret) {
		p.req = x.req;
		ret = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p);
		ret = ret == -EMSGSIZE ? 0 : ret ? ret : -EPROTO;
	}
	if (!ret) {
		recs = calloc(p.count, sizeof(*recs));
		p.recs = (uintptr_t)recs;
		ret = recs ? npr_ioctl(fd, NPR_IOCTL_PROFILE, &p) : -ENOMEM;
	}
	for (r = 0; !ret && r < p.count; r++)
		for (i = 0; i < n; i++)
			if (recs[r].status == NPR_PROF_EXECUTED &&
			    !strcmp(recs[r].type, types[i]))
				counts[i]++;
	free(recs);
	if (kv)
		lm_kv_free(&m, kv);
	npr_close(fd);
	return ret;
}

#endif /* LM_UTIL_H */
