// SPDX-License-Identifier: MIT
/*
 * qdq_models DIR: write small quantized (QDQ) ONNX models into DIR, the
 * seeds scripts/fuzz.sh compiles into int8 blobs and cache entries for
 * the blob and cache targets (and gives the onnx target as they are).
 *
 * Each model is what an ONNX static quantizer writes, at 8 to 16
 * channels on 8x8 images: u8 activations per tensor, i8 weights per
 * output channel, i32 biases, a QuantizeLinear / DequantizeLinear pair
 * around every operator.  The low-precision pass turns them into
 * NprQConv (rows and blocked weights, depthwise), NprQMaxPool,
 * NprQConcat, NprQAdd, NprQLut, NprQuantize and NprDequantize, with the
 * tensors between the convolutions NHWC (Documentation/design.rst).
 * The values come from a fixed generator: the same files every run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "../onnx_util.h"

#define MAX_NODES	128
#define MAX_INITS	256
#define MAX_ATTRS	128
#define MAX_STRS	1024

#define T_F32	ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define T_U8	ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define T_I8	ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define T_I32	ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define T_I64	ONNX__TENSOR_PROTO__DATA_TYPE__INT64

/* a graph under construction; everything it points at is its own */
struct net {
	Onnx__NodeProto node[MAX_NODES], *nodes[MAX_NODES];
	Onnx__TensorProto init[MAX_INITS], *inits[MAX_INITS];
	Onnx__AttributeProto attr[MAX_ATTRS], *attrs[MAX_ATTRS];
	int64_t dims[MAX_INITS][4], ints[MAX_ATTRS][4];
	char *strs[MAX_STRS];
	int nn, ni, na, ns, seq;
	uint32_t rnd;
};

/* a u8 tensor of the graph: name, scale, zero point, C x H x W */
struct qt {
	const char *name;
	float s;
	int z;
	int c, h, w;
};

static void *must(void *p)
{
	if (!p) {
		perror("qdq_models");
		exit(1);
	}
	return p;
}

/* a string the net keeps */
static char *str(struct net *m, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (m->ns >= MAX_STRS)
		must(NULL);
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return m->strs[m->ns++] = must(s);
}

/* a fresh value name */
static char *fresh(struct net *m, const char *what)
{
	return str(m, "%s_%d", what, m->seq++);
}

static uint32_t rnd(struct net *m)
{
	m->rnd = m->rnd * 1664525u + 1013904223u;
	return m->rnd >> 8;
}

/* a node @op of inputs @in (NULL-terminated) and one output @out */
static Onnx__NodeProto *node(struct net *m, const char *op, const char *out,
			     ...)
{
	Onnx__NodeProto *n = &m->node[m->nn];
	char **in = must(calloc(4, sizeof(*in)));
	const char *s;
	va_list ap;

	if (m->nn >= MAX_NODES || m->ns + 2 > MAX_STRS)
		must(NULL);
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = fresh(m, op);
	va_start(ap, out);
	while ((s = va_arg(ap, const char *)) && n->n_input < 4)
		in[n->n_input++] = (char *)s;
	va_end(ap);
	n->input = in;
	m->strs[m->ns++] = (char *)in;
	n->output = must(calloc(1, sizeof(char *)));
	m->strs[m->ns++] = (char *)n->output;
	n->output[0] = (char *)out;
	n->n_output = 1;
	return m->nodes[m->nn++] = n;
}

/* an INTS attribute of @cnt values (an INT one when @cnt is 0) */
static void attr(struct net *m, Onnx__NodeProto *n, const char *key, int cnt,
		 int64_t a, int64_t b, int64_t c, int64_t d)
{
	Onnx__AttributeProto *p = &m->attr[m->na];

	if (m->na >= MAX_ATTRS)
		must(NULL);
	onnx__attribute_proto__init(p);
	p->name = (char *)key;
	p->has_type = 1;
	m->ints[m->na][0] = a;
	m->ints[m->na][1] = b;
	m->ints[m->na][2] = c;
	m->ints[m->na][3] = d;
	if (cnt) {
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		p->n_ints = cnt;
		p->ints = m->ints[m->na];
	} else {
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		p->has_i = 1;
		p->i = a;
	}
	if (!n->n_attribute)
		n->attribute = &m->attrs[m->na];
	m->attrs[m->na++] = p;
	n->n_attribute++;
}

/* an initializer of @rank dims (d0, d1, ...), @bytes of @data (taken) */
static const char *init(struct net *m, const char *what, int type, void *data,
			size_t bytes, int rank, int64_t d0, int64_t d1,
			int64_t d2, int64_t d3)
{
	Onnx__TensorProto *t = &m->init[m->ni];

	if (m->ni >= MAX_INITS || m->ns >= MAX_STRS)
		must(NULL);
	onnx__tensor_proto__init(t);
	t->name = fresh(m, what);
	t->has_data_type = 1;
	t->data_type = type;
	m->dims[m->ni][0] = d0;
	m->dims[m->ni][1] = d1;
	m->dims[m->ni][2] = d2;
	m->dims[m->ni][3] = d3;
	t->n_dims = rank;
	t->dims = m->dims[m->ni];
	t->has_raw_data = 1;
	t->raw_data.data = data;
	t->raw_data.len = bytes;
	m->strs[m->ns++] = data;
	m->inits[m->ni++] = t;
	return t->name;
}

static const char *f32(struct net *m, float v)
{
	float *p = must(malloc(sizeof(*p)));

	*p = v;
	return init(m, "s", T_F32, p, sizeof(*p), 0, 0, 0, 0, 0);
}

static const char *u8(struct net *m, int v)
{
	uint8_t *p = must(malloc(1));

	*p = (uint8_t)v;
	return init(m, "z", T_U8, p, 1, 0, 0, 0, 0, 0);
}

/* x f32 quantized: a u8 tensor of scale @s, zero point @z */
static struct qt quant(struct net *m, const char *x, float s, int z, int c,
		       int h, int w)
{
	struct qt q = { fresh(m, "q"), s, z, c, h, w };

	node(m, "QuantizeLinear", q.name, x, f32(m, s), u8(m, z), NULL);
	return q;
}

/* the f32 value of @q, a DequantizeLinear of its own (one per reader) */
static const char *deq(struct net *m, const struct qt *q)
{
	const char *y = fresh(m, "dq");

	node(m, "DequantizeLinear", y, q->name, f32(m, q->s), u8(m, q->z),
	     NULL);
	return y;
}

/*
 * Random i8 weights of @k output channels, [@k, @cg, @kh, @kw] (a
 * MatMul's [@cg, @k] when @kh is 0), with their per-channel scales in
 * @ws, dequantized along @axis.
 */
static const char *weights(struct net *m, int k, int cg, int kh, int kw,
			   float *ws, int axis)
{
	int win = cg * (kh ? kh * kw : 1);
	size_t n = (size_t)k * win, i;
	int8_t *w = must(malloc(n));
	float *sc = must(malloc(k * sizeof(*sc)));
	int8_t *zp = must(calloc(k, 1));
	const char *wv, *sv, *zv, *y = fresh(m, "w");
	Onnx__NodeProto *nd;
	int j;

	for (i = 0; i < n; i++)
		w[i] = (int8_t)((int)(rnd(m) % 255) - 127);
	for (j = 0; j < k; j++)
		ws[j] = sc[j] = (0.5f + (rnd(m) % 64) / 64.0f) /
				(127.0f * win / 4);
	if (kh)
		wv = init(m, "wq", T_I8, w, n, 4, k, cg, kh, kw);
	else	/* a MatMul's [cg, k] */
		wv = init(m, "wq", T_I8, w, n, 2, cg, k, 0, 0);
	sv = init(m, "ws", T_F32, sc, k * sizeof(*sc), 1, k, 0, 0, 0);
	zv = init(m, "wz", T_I8, zp, k, 1, k, 0, 0, 0);
	nd = node(m, "DequantizeLinear", y, wv, sv, zv, NULL);
	attr(m, nd, "axis", 0, axis, 0, 0, 0);
	return y;
}

/* @k i32 biases of scale @sx * @ws[i] */
static const char *bias(struct net *m, int k, float sx, const float *ws)
{
	int32_t *b = must(malloc(k * sizeof(*b)));
	float *sc = must(malloc(k * sizeof(*sc)));
	const char *bv, *sv, *y = fresh(m, "b");
	Onnx__NodeProto *nd;
	int j;

	for (j = 0; j < k; j++) {
		b[j] = (int32_t)(rnd(m) % 2001) - 1000;
		sc[j] = sx * ws[j];
	}
	bv = init(m, "bq", T_I32, b, k * sizeof(*b), 1, k, 0, 0, 0);
	sv = init(m, "bs", T_F32, sc, k * sizeof(*sc), 1, k, 0, 0, 0);
	nd = node(m, "DequantizeLinear", y, bv, sv, NULL);
	attr(m, nd, "axis", 0, 0, 0, 0, 0);
	return y;
}

/*
 * A convolution of @x to @k channels, @kk x @kk window, @stride, @pad,
 * @groups, a Relu (@act 1) or Clip to [0, 6] (@act 2) or nothing, then
 * quantized.
 */
static struct qt conv(struct net *m, const struct qt *x, int k, int kk,
		      int stride, int pad, int groups, int act)
{
	float ws[64];
	const char *xf = deq(m, x), *w, *b, *y = fresh(m, "conv");
	Onnx__NodeProto *n;
	int h = (x->h + 2 * pad - kk) / stride + 1;
	int wd = (x->w + 2 * pad - kk) / stride + 1;

	w = weights(m, k, x->c / groups, kk, kk, ws, 0);
	b = bias(m, k, x->s, ws);
	n = node(m, "Conv", y, xf, w, b, NULL);
	attr(m, n, "kernel_shape", 2, kk, kk, 0, 0);
	attr(m, n, "strides", 2, stride, stride, 0, 0);
	attr(m, n, "pads", 4, pad, pad, pad, pad);
	if (groups > 1)
		attr(m, n, "group", 0, groups, 0, 0, 0);
	if (act == 1) {
		const char *r = fresh(m, "relu");

		node(m, "Relu", r, y, NULL);
		y = r;
	} else if (act == 2) {
		const char *r = fresh(m, "clip");

		node(m, "Clip", r, y, f32(m, 0.0f), f32(m, 6.0f), NULL);
		y = r;
	}
	return quant(m, y, act ? 0.03f : 0.05f, act ? 0 : 128, k, h, wd);
}

static struct qt maxpool(struct net *m, const struct qt *x, int kk, int stride,
			 int pad)
{
	const char *y = fresh(m, "pool");
	Onnx__NodeProto *n = node(m, "MaxPool", y, deq(m, x), NULL);
	struct qt q;

	attr(m, n, "kernel_shape", 2, kk, kk, 0, 0);
	attr(m, n, "strides", 2, stride, stride, 0, 0);
	if (pad)
		attr(m, n, "pads", 4, pad, pad, pad, pad);
	q = quant(m, y, x->s, x->z, x->c, (x->h + 2 * pad - kk) / stride + 1,
		  (x->w + 2 * pad - kk) / stride + 1);
	return q;
}

/* @a, @b (and @c unless NULL) along the channels */
static struct qt concat(struct net *m, const struct qt *a, const struct qt *b,
			const struct qt *c)
{
	const char *y = fresh(m, "cat");
	Onnx__NodeProto *n;

	n = node(m, "Concat", y, deq(m, a), deq(m, b), c ? deq(m, c) : NULL,
		 NULL);
	attr(m, n, "axis", 0, 1, 0, 0, 0);
	return quant(m, y, a->s, a->z, a->c + b->c + (c ? c->c : 0), a->h,
		     a->w);
}

static struct qt add(struct net *m, const struct qt *a, const struct qt *b,
		     bool relu)
{
	const char *y = fresh(m, "add");

	node(m, "Add", y, deq(m, a), deq(m, b), NULL);
	if (relu) {
		const char *r = fresh(m, "relu");

		node(m, "Relu", r, y, NULL);
		y = r;
	}
	return quant(m, y, 0.06f, relu ? 0 : 128, a->c, a->h, a->w);
}

/* flattened, a quantized MatMul to @n outputs */
static struct qt head(struct net *m, const struct qt *x, int n)
{
	int64_t *shape = must(malloc(2 * sizeof(*shape)));
	const char *r = fresh(m, "flat"), *y = fresh(m, "fc"), *w;
	int k = x->c * x->h * x->w;
	float ws[64];
	struct qt f;

	shape[0] = 1;
	shape[1] = k;
	node(m, "Reshape", r, deq(m, x),
	     init(m, "shape", T_I64, shape, 2 * sizeof(*shape), 1, 2, 0, 0, 0),
	     NULL);
	f = quant(m, r, x->s, x->z, k, 1, 1);
	w = weights(m, n, k, 0, 0, ws, 1);
	node(m, "MatMul", y, deq(m, &f), w, NULL);
	return quant(m, y, 0.1f, 128, n, 1, 1);
}

/* write the net, input x f32 [1, @c, @h, @w], output the f32 of @out */
static int save(struct net *m, const char *path, int c, int h, int w,
		const struct qt *out)
{
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	const int64_t xd[4] = { 1, c, h, w };
	size_t len;
	void *buf;
	FILE *f;
	int i, err = 0;

	node(m, "DequantizeLinear", "y", out->name, f32(m, out->s),
	     u8(m, out->z), NULL);
	g.name = "qdq";
	g.n_node = m->nn;
	g.node = m->nodes;
	g.n_initializer = m->ni;
	g.initializer = m->inits;
	buf = must(pack_xy(&g, 13, xd, 4, &len));
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		err = 1;
	}
	free(buf);
	for (i = 0; i < m->ns; i++)
		free(m->strs[i]);
	memset(m, 0, sizeof(*m));
	return err;
}

/*
 * x, f32 [1, @c, 8, 8], quantized, and a @kk x @kk convolution of
 * @stride to @k channels (padded to keep the size at stride 1), @act as
 * conv() takes it; the generator seeded with @seed.
 */
static struct qt stem(struct net *m, uint32_t seed, int c, int k, int kk,
		      int stride, int act)
{
	struct qt x;

	m->rnd = seed;
	x = quant(m, "x", 4.0f / 255, 64, c, 8, 8);
	return conv(m, &x, k, kk, stride, kk / 2, 1, act);
}

/*
 * 8 channels in; a 3x3 convolution to 16 with a Relu, a 2x2 MaxPool, a
 * 1x1 and a 3x3 branch joined by a Concat, a 1x1 back to 16 added to
 * the pool's output.
 */
static int net_main(struct net *m, const char *path)
{
	struct qt a = stem(m, 1, 8, 16, 3, 1, 1), p, b1, b2, c, d;

	p = maxpool(m, &a, 2, 2, 0);
	b1 = conv(m, &p, 16, 1, 1, 0, 1, 1);
	b2 = conv(m, &p, 16, 3, 1, 1, 1, 2);
	c = concat(m, &b1, &b2, NULL);
	d = conv(m, &c, 16, 1, 1, 0, 1, 0);
	d = add(m, &d, &p, true);
	return save(m, path, 8, 8, 8, &d);
}

/*
 * 12 channels (blocks of 16 padded), a padded 3x3 MaxPool of stride 2,
 * a Concat of three, an Add without Relu, a stride-2 convolution last.
 */
static int net_odd(struct net *m, const char *path)
{
	struct qt a = stem(m, 2, 12, 12, 1, 1, 2), p, b[3], c;

	p = maxpool(m, &a, 3, 2, 1);
	b[0] = conv(m, &p, 4, 1, 1, 0, 1, 1);
	b[1] = conv(m, &p, 4, 3, 1, 1, 1, 1);
	b[2] = conv(m, &p, 4, 1, 1, 0, 1, 1);
	c = concat(m, &b[0], &b[1], &b[2]);
	c = add(m, &c, &p, false);
	c = conv(m, &c, 8, 3, 2, 1, 1, 1);
	return save(m, path, 12, 8, 8, &c);
}

/*
 * A stem of 3 channels (copied to 4) of stride 2, a grouped and a
 * depthwise convolution, a MaxPool of stride 1, a MatMul head.
 */
static int net_small(struct net *m, const char *path)
{
	struct qt a = stem(m, 3, 3, 16, 3, 2, 1), p;

	a = conv(m, &a, 16, 3, 1, 1, 2, 1);
	p = maxpool(m, &a, 2, 1, 0);
	p = conv(m, &p, 16, 3, 1, 1, 16, 1);
	p = head(m, &p, 10);
	return save(m, path, 3, 8, 8, &p);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*make)(struct net *m, const char *path);
	} nets[] = {
		{ "qdq-net", net_main },
		{ "qdq-odd", net_odd },
		{ "qdq-small", net_small },
	};
	struct net *m;
	char path[4096];
	unsigned int i;
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	m = must(calloc(1, sizeof(*m)));
	for (i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.onnx", argv[1],
			 nets[i].name);
		err |= nets[i].make(m, path);
	}
	free(m);
	return err;
}
