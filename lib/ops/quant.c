// SPDX-License-Identifier: MIT
/*
 * The low-precision ops of lib/ops/quant.h: attributes and shape
 * inference.  A blob can carry them, so every attribute and every input
 * is checked here as for any other op.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/quant.h"

static int pair(struct npr_node *n, const char *key, int64_t def,
		int64_t lo, int64_t *out)
{
	int cnt, err;

	if (!npr_attr(n, key)) {
		out[0] = out[1] = def;
		return 0;
	}
	err = npr_attr_ints(n, key, out, 2, &cnt, false);
	if (err)
		return err;
	if (cnt != 2 || out[0] < lo || out[1] < lo || out[0] > 1 << 16 ||
	    out[1] > 1 << 16)
		return npr_node_err(n, -EINVAL, "%s: two values from %lld to 65536 expected",
				    key, (long long)lo);
	return 0;
}

static int int_in(struct npr_node *n, const char *key, int def, int lo,
		  int hi, int *out)
{
	int64_t v;
	int err = npr_attr_int(n, key, def, &v);

	if (err)
		return err;
	if (v < lo || v > hi)
		return npr_node_err(n, -EINVAL, "%s %lld is not in [%d, %d]",
				    key, (long long)v, lo, hi);
	*out = (int)v;
	return 0;
}

static int scale_of(struct npr_node *n, const char *key, float *out)
{
	double v;
	int err = npr_attr_float(n, key, 1.0, &v);

	if (err)
		return err;
	if (!(v > 0) || !isfinite(v) || !isfinite((float)v) || (float)v <= 0)
		return npr_node_err(n, -EINVAL, "%s must be a positive finite scale",
				    key);
	*out = (float)v;
	return 0;
}

static int quant_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const outs[] = { "u8", "f32", NULL };
	static const char *const lays[] = { "nchw", "nhwc", NULL };
	static const char *const wlays[] = { "rows", "blocked", NULL };
	int xl = 0, yl = 0, wl = 0;
	struct npr_quant_params *p;
	double flo, fhi;
	int64_t groups = 1;
	int out = 0, err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = pair(n, "strides", 1, 1, p->stride);
	if (!err)
		err = pair(n, "dilations", 1, 1, p->dil);
	if (!err)
		err = pair(n, "pads_begin", 0, 0, p->pb);
	if (!err)
		err = pair(n, "pads_end", 0, 0, p->pe);
	if (!err)
		err = pair(n, "kernel", 1, 1, p->kernel);
	if (!err)
		err = npr_attr_int(n, "group", 1, &groups);
	if (!err && (groups < 1 || groups > INT32_MAX))
		err = npr_node_err(n, -EINVAL, "group %lld", (long long)groups);
	p->groups = groups;
	if (!err)
		err = npr_attr_enum(n, "out", outs, 0, &out);
	p->f32out = out == 1;
	if (!err)
		err = npr_attr_enum(n, "x_layout", lays, 0, &xl);
	if (!err)
		err = npr_attr_enum(n, "y_layout", lays, 0, &yl);
	if (!err)
		err = npr_attr_enum(n, "w_layout", wlays, 0, &wl);
	p->xnhwc = xl == 1;
	p->ynhwc = yl == 1;
	p->wblocked = wl == 1;
	if (!err)
		err = int_in(n, "x_zero", 0, 0, 255, &p->xz);
	if (!err)
		err = int_in(n, "y_zero", 0, 0, 255, &p->zy);
	if (!err)
		err = int_in(n, "lo", 0, 0, 255, &p->lo);
	if (!err)
		err = int_in(n, "hi", 255, 0, 255, &p->hi);
	if (!err)
		err = npr_attr_float(n, "flo", -INFINITY, &flo);
	if (!err)
		err = npr_attr_float(n, "fhi", INFINITY, &fhi);
	if (err)
		return err;
	p->flo = (float)flo;
	p->fhi = (float)fhi;
	if (p->lo > p->hi || !(p->flo <= p->fhi))
		return npr_node_err(n, -EINVAL, "the output bounds are empty");
	err = int_in(n, "a_zero", 0, 0, 255, &p->za);
	if (!err)
		err = int_in(n, "b_zero", 0, 0, 255, &p->zb);
	if (!err)
		err = scale_of(n, "a_scale", &p->sa);
	if (!err)
		err = scale_of(n, "b_scale", &p->sb);
	if (!err)
		err = scale_of(n, "y_scale", &p->sy);
	return err;
}

static int want(struct npr_graph *g, struct npr_node *n, int i,
		unsigned int type, int rank)
{
	const struct npr_value *v = npr_in(g, n, i);

	if (v->type != type || v->shape.rank != rank)
		return npr_node_err(n, -EINVAL, "input %d: %s of rank %d expected",
				    i, npr_elem_name(type), rank);
	return 0;
}

/* the output rows and columns of @n's window over @xs (rounded down) */
static int window_out(struct npr_node *n, const struct npr_shape *xs,
		      int64_t o[2])
{
	const struct npr_quant_params *p = n->params;
	int i;

	for (i = 0; i < 2; i++) {
		int64_t span = (p->kernel[i] - 1) * p->dil[i] + 1;
		int64_t in = xs->d[2 + i] + p->pb[i] + p->pe[i];

		if (in < span)
			return npr_node_err(n, -EINVAL, "the window does not fit the padded input");
		o[i] = (in - span) / p->stride[i] + 1;
	}
	return 0;
}

static int qconv_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_quant_params *p = n->params;
	const struct npr_shape *xs = &npr_in(g, n, 0)->shape;
	const struct npr_shape *ws = &npr_in(g, n, 1)->shape;
	struct npr_value *y = npr_out(g, n, 0);
	int64_t K, C, win, o[2];
	int i, err;

	err = want(g, n, 0, NPR_ELEM_U8, 4);
	if (!err)
		err = want(g, n, 1, NPR_ELEM_I8, 2);
	if (!err)
		err = want(g, n, 2, NPR_ELEM_I32, 1);
	if (!err)
		err = want(g, n, 3, NPR_ELEM_F32, 1);
	if (!err)
		err = want(g, n, 4, NPR_ELEM_F32, 1);
	if (!err && n->nin == 6 &&
	    (npr_in(g, n, 5)->type != NPR_ELEM_U8 ||
	     npr_shape_numel(&npr_in(g, n, 5)->shape) != 256 || p->f32out))
		err = npr_node_err(n, -EINVAL, "input 5: a table of 256 u8 for a u8 output expected");
	if (err)
		return err;
	K = npr_in(g, n, 2)->shape.d[0];
	C = xs->d[1];
	if (p->wblocked) {
		bool dw = p->groups > 1 && p->groups == C && p->groups == K;
		int64_t taps = p->kernel[0] * p->kernel[1];
		int64_t kr = C < 1 || C > INT32_MAX ? -1 : dw ?
			     NPR_QC4(taps) :
			     taps > INT32_MAX / NPR_QC4(C) ? -1 :
			     taps * NPR_QC4(C);

		if (kr < 0 || kr > INT32_MAX || (p->groups != 1 && !dw) ||
		    ws->d[0] != NPR_QK16(K) || ws->d[1] != kr || p->kr != kr)
			return npr_node_err(n, -EINVAL, "blocked weights: [%lld, %lld] for %lld channels of %lld, one group or one channel a group, expected",
					    (long long)NPR_QK16(K),
					    (long long)kr, (long long)K,
					    (long long)C);
		win = dw ? p->kernel[0] * p->kernel[1] : kr;
	} else if (p->xnhwc || p->ynhwc) {
		return npr_node_err(n, -EINVAL, "the nhwc layouts need blocked weights");
	} else if (ws->d[0] != K) {
		return npr_node_err(n, -EINVAL, "input 1: %lld rows expected",
				    (long long)K);
	} else if (C / p->groups >
		   INT32_MAX / (p->kernel[0] * p->kernel[1])) {
		return npr_node_err(n, -EINVAL, "a window of %lld x %lld over %lld channels a group: too long a row",
				    (long long)p->kernel[0],
				    (long long)p->kernel[1],
				    (long long)(C / p->groups));
	} else {
		win = C / p->groups * p->kernel[0] * p->kernel[1];
	}
	for (i = 2; i < 5; i++)
		if (npr_in(g, n, i)->shape.d[0] != K)
			return npr_node_err(n, -EINVAL, "input %d: %lld values expected",
					    i, (long long)K);
	if (K % p->groups || C % p->groups || K < 1)
		return npr_node_err(n, -EINVAL, "%lld input and %lld output channels in %lld groups",
				    (long long)C, (long long)K,
				    (long long)p->groups);
	if (p->kr % 4 || ws->d[1] != p->kr || win > p->kr ||
	    p->kr - win >= 4)
		return npr_node_err(n, -EINVAL, "weights of %lld columns for a window of %lld",
				    (long long)ws->d[1], (long long)win);
	err = window_out(n, xs, o);
	if (err)
		return err;
	y->type = p->f32out ? NPR_ELEM_F32 : NPR_ELEM_U8;
	y->shape.rank = 4;
	y->shape.d[0] = xs->d[0];
	y->shape.d[1] = K;
	y->shape.d[2] = o[0];
	y->shape.d[3] = o[1];
	return 0;
}

/* NprQConv's params.kr: the weights' row length, known once parsed */
static int qconv_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_quant_params *p;
	int64_t kr;
	int err = quant_parse(g, n);

	if (err)
		return err;
	p = n->params;
	err = npr_attr_int(n, "kr", 4, &kr);
	if (err)
		return err;
	if (kr < 4 || kr % 4 || kr > INT32_MAX)
		return npr_node_err(n, -EINVAL, "kr %lld", (long long)kr);
	p->kr = kr;
	return 0;
}

static int same_as_input(struct npr_graph *g, struct npr_node *n,
			 unsigned int in, unsigned int out)
{
	const struct npr_value *x = npr_in(g, n, 0);

	if (x->type != in)
		return npr_node_err(n, -EINVAL, "input 0: %s expected",
				    npr_elem_name(in));
	npr_out(g, n, 0)->type = out;
	npr_out(g, n, 0)->shape = x->shape;
	return 0;
}

/* nhwc: 4-D u8 only (what the kernels transpose) */
static int layouts_ok(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_quant_params *p = n->params;

	if ((p->xnhwc || p->ynhwc) && npr_in(g, n, 0)->shape.rank != 4)
		return npr_node_err(n, -EINVAL, "the nhwc layout needs a 4-D input");
	return 0;
}

/*
 * NprQuantize's and NprDequantize's optional input 1: f32 scales per
 * channel (axis 1 of input 0), in place of y_scale or a_scale; nchw only.
 */
static int chan_scales_ok(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_value *x = npr_in(g, n, 0), *s;
	const struct npr_quant_params *p = n->params;
	const float *f;
	int64_t c;

	if (n->nin < 2)
		return 0;
	s = npr_in(g, n, 1);
	f = s->data;
	if (!f || s->type != NPR_ELEM_F32 || s->shape.rank != 1 ||
	    x->shape.rank < 2 || s->shape.d[0] != x->shape.d[1] ||
	    s->shape.d[0] < 1)
		return npr_node_err(n, -EINVAL, "input 1: constant f32 scales, one per channel of input 0, expected");
	for (c = 0; c < s->shape.d[0]; c++)
		if (!(f[c] > 0) || !isfinite(f[c]))
			return npr_node_err(n, -EINVAL, "input 1: scale %lld is not positive and finite",
					    (long long)c);
	if (p->xnhwc || p->ynhwc)
		return npr_node_err(n, -EINVAL, "scales per channel: nchw only");
	return 0;
}

static int quantize_infer(struct npr_graph *g, struct npr_node *n)
{
	int err = layouts_ok(g, n);

	if (!err)
		err = chan_scales_ok(g, n);

	/* f32 tensors are NCHW: only the u8 side may be NHWC */
	if (!err && ((const struct npr_quant_params *)n->params)->xnhwc)
		err = npr_node_err(n, -EINVAL, "NprQuantize reads f32 nchw only");

	return err ? err : same_as_input(g, n, NPR_ELEM_F32, NPR_ELEM_U8);
}

static int dequantize_infer(struct npr_graph *g, struct npr_node *n)
{
	int err = layouts_ok(g, n);

	if (!err)
		err = chan_scales_ok(g, n);

	if (!err && ((const struct npr_quant_params *)n->params)->ynhwc)
		err = npr_node_err(n, -EINVAL, "NprDequantize writes f32 nchw only");

	return err ? err : same_as_input(g, n, NPR_ELEM_U8, NPR_ELEM_F32);
}

static int lut_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_value *t = npr_in(g, n, 1);
	int err;

	if (t->type != NPR_ELEM_U8 || npr_shape_numel(&t->shape) != 256)
		return npr_node_err(n, -EINVAL, "input 1: a table of 256 u8 expected");
	err = layouts_ok(g, n);
	return err ? err : same_as_input(g, n, NPR_ELEM_U8, NPR_ELEM_U8);
}

static int qscale_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_value *x = npr_in(g, n, 0), *m = npr_in(g, n, 1);
	int err;

	if (x->shape.rank < 2 || m->type != NPR_ELEM_F32 ||
	    npr_shape_numel(&m->shape) != x->shape.d[1])
		return npr_node_err(n, -EINVAL, "input 1: f32 multipliers, one per channel of input 0, expected");
	if (n->nin > 2 && (npr_in(g, n, 2)->type != NPR_ELEM_F32 ||
			   npr_shape_numel(&npr_in(g, n, 2)->shape) !=
			   x->shape.d[1]))
		return npr_node_err(n, -EINVAL, "input 2: f32 offsets, one per channel of input 0, expected");
	err = layouts_ok(g, n);
	return err ? err : same_as_input(g, n, NPR_ELEM_U8, NPR_ELEM_U8);
}

static int qadd_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_value *b = npr_in(g, n, 1);
	int err;

	if (b->type != NPR_ELEM_U8 ||
	    !npr_shape_eq(&b->shape, &npr_in(g, n, 0)->shape))
		return npr_node_err(n, -EINVAL, "input 1: u8 of input 0's shape expected");
	if (((const struct npr_quant_params *)n->params)->xnhwc !=
	    ((const struct npr_quant_params *)n->params)->ynhwc)
		return npr_node_err(n, -EINVAL, "NprQAdd reads and writes one layout");
	err = layouts_ok(g, n);
	return err ? err : same_as_input(g, n, NPR_ELEM_U8, NPR_ELEM_U8);
}

/* NprQMaxPool, NprQConcat: NHWC only (what the layout pass makes them for) */
static int nhwc_only(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_quant_params *p = n->params;
	int i;

	if (!p->xnhwc || !p->ynhwc)
		return npr_node_err(n, -EINVAL, "%s reads and writes nhwc only",
				    n->type);
	for (i = 0; i < n->nin; i++)
		if (npr_in(g, n, i)->type != NPR_ELEM_U8 ||
		    npr_in(g, n, i)->shape.rank != 4)
			return npr_node_err(n, -EINVAL, "input %d: u8 of rank 4 expected",
					    i);
	return 0;
}

static int qmaxpool_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_shape *xs = &npr_in(g, n, 0)->shape;
	struct npr_value *y = npr_out(g, n, 0);
	int64_t o[2];
	int err = nhwc_only(g, n);

	if (err)
		return err;
	err = window_out(n, xs, o);
	if (err)
		return err;
	y->type = NPR_ELEM_U8;
	y->shape = *xs;
	y->shape.d[2] = o[0];
	y->shape.d[3] = o[1];
	return 0;
}

static int qconcat_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_shape *a = &npr_in(g, n, 0)->shape;
	struct npr_value *y = npr_out(g, n, 0);
	int64_t c = 0;
	int i, d, err = nhwc_only(g, n);

	if (err)
		return err;
	for (i = 0; i < n->nin; i++) {
		const struct npr_shape *s = &npr_in(g, n, i)->shape;

		for (d = 0; d < 4; d++)
			if (d != 1 && s->d[d] != a->d[d])
				return npr_node_err(n, -EINVAL, "input %d: dim %d is %lld, input 0 has %lld",
						    i, d, (long long)s->d[d],
						    (long long)a->d[d]);
		if (s->d[1] < 0 || c > INT64_MAX - s->d[1])
			return npr_node_err(n, -EINVAL, "input %d: %lld channels",
					    i, (long long)s->d[1]);
		c += s->d[1];
	}
	y->type = NPR_ELEM_U8;
	y->shape = *a;
	y->shape.d[1] = c;
	return 0;
}

const struct npr_op_def npr_ops_quant[] = {
	{ .type = "NprQConv", .vmin = 1, .vmax = 1, .nin_min = 5,
	  .nin_max = 6, .parse = qconv_parse, .infer = qconv_infer },
	{ .type = "NprQuantize", .vmin = 1, .vmax = 1, .nin_min = 1,
	  .nin_max = 2, .parse = quant_parse, .infer = quantize_infer },
	{ .type = "NprDequantize", .vmin = 1, .vmax = 1, .nin_min = 1,
	  .nin_max = 2, .parse = quant_parse, .infer = dequantize_infer },
	{ .type = "NprQLut", .vmin = 1, .vmax = 1, .nin_min = 2,
	  .nin_max = 2, .parse = quant_parse, .infer = lut_infer },
	{ .type = "NprQMaxPool", .vmin = 1, .vmax = 1, .nin_min = 1,
	  .nin_max = 1, .parse = quant_parse, .infer = qmaxpool_infer },
	{ .type = "NprQConcat", .vmin = 1, .vmax = 1, .nin_min = 1,
	  .nin_max = 4096, .parse = quant_parse, .infer = qconcat_infer },
	{ .type = "NprQScale", .vmin = 1, .vmax = 1, .nin_min = 2,
	  .nin_max = 3, .parse = quant_parse, .infer = qscale_infer },
	{ .type = "NprQAdd", .vmin = 1, .vmax = 1, .nin_min = 2,
	  .nin_max = 2, .parse = quant_parse, .infer = qadd_infer },
	{ .type = NULL },
};
