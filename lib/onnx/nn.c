// SPDX-License-Identifier: MIT
/*
 * ONNX neural-network ops: Conv (bias as an Add, groups as
 * GroupConvolution), pooling, normalisation (BatchNormalization with
 * constant statistics folded at load time into one Multiply and one Add;
 * LayerNormalization and InstanceNormalization as reductions), MatMul and
 * Gemm, Softmax and LogSoftmax, the Reduce* family.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate.h"

#define MAXR	NPR_MAX_RANK

/* ---- convolution and pooling ------------------------------------------ */

struct window {
	int nsp;
	int64_t k[3], st[3], dil[3], pb[3], pe[3];
	char pad[16];
};

/* kernel_shape, strides, dilations, pads, auto_pad; @nsp may be -1. */
static int window_attrs(struct onnx_ctx *c, struct window *w, int nsp)
{
	static const char *const pads[][2] = {
		{ "NOTSET", "explicit" }, { "VALID", "valid" },
		{ "SAME_UPPER", "same_upper" }, { "SAME_LOWER", "same_lower" },
	};
	int64_t p[6];
	int nk, ns, nd, np, i, err;
	char ap[32];

	err = npr_onnx_attr_ints(c, "kernel_shape", w->k, 3, &nk);
	if (!err)
		err = npr_onnx_attr_ints(c, "strides", w->st, 3, &ns);
	if (!err)
		err = npr_onnx_attr_ints(c, "dilations", w->dil, 3, &nd);
	if (!err)
		err = npr_onnx_attr_ints(c, "pads", p, 6, &np);
	if (!err)
		err = npr_onnx_attr_str(c, "auto_pad", "NOTSET", ap,
					sizeof(ap));
	if (err)
		return err;
	if (nsp < 0)
		nsp = nk >= 0 ? nk : ns >= 0 ? ns : nd >= 0 ? nd :
		      np >= 0 ? np / 2 : -1;
	if (nsp < 1 || nsp > 3)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "%s spatial dims (only 1 to 3 are supported)",
				    nsp < 0 ? "cannot tell the number of" :
				    "too many");
	if ((nk >= 0 && nk != nsp) || (ns >= 0 && ns != nsp) ||
	    (nd >= 0 && nd != nsp) || (np >= 0 && np != 2 * nsp))
		return npr_onnx_err(c, -EINVAL,
				    "kernel_shape, strides, dilations and pads disagree on %d spatial dims",
				    nsp);
	for (i = 0; i < nsp; i++) {
		if (ns < 0)
			w->st[i] = 1;
		if (nd < 0)
			w->dil[i] = 1;
		w->pb[i] = np < 0 ? 0 : p[i];
		w->pe[i] = np < 0 ? 0 : p[nsp + i];
	}
	w->nsp = nsp;
	for (i = 0; i < (int)(sizeof(pads) / sizeof(pads[0])); i++)
		if (!strcmp(ap, pads[i][0])) {
			snprintf(w->pad, sizeof(w->pad), "%s", pads[i][1]);
			return 0;
		}
	return npr_onnx_err(c, -EOPNOTSUPP, "auto_pad \"%s\" is not supported",
			    ap);
}

static int window_set(struct onnx_ctx *c, int node, const struct window *w,
		      bool dil)
{
	int err;

	err = npr_onnx_set_ints(c, node, "strides", w->st, w->nsp);
	if (!err && dil)
		err = npr_onnx_set_ints(c, node, "dilations", w->dil, w->nsp);
	if (!err)
		err = npr_onnx_set_ints(c, node, "pads_begin", w->pb, w->nsp);
	if (!err)
		err = npr_onnx_set_ints(c, node, "pads_end", w->pe, w->nsp);
	if (!err)
		err = npr_onnx_set_attr(c, node, "auto_pad", "%s", w->pad);
	return err;
}

/* W [O, I/G, k..] as [G, O/G, I/G, k..] for GroupConvolution. */
static int group_weights(struct onnx_ctx *c, int w, int64_t groups)
{
	struct npr_shape ws0 = *onnx_vshape(c, w), *ws = &ws0;
	int64_t t[MAXR] = { groups, -1 }, z = 0, one = 1, end = 0;
	int s, tail, in[2], i, node, out;

	/* constant weights: their shape is final */
	if (c->g->vals[w].data && ws->rank >= 3 && ws->rank < MAXR) {
		if (ws->d[0] % groups)
			return npr_onnx_err(c, -EINVAL,
					    "%lld output channels do not split into %lld groups",
					    (long long)ws->d[0], (long long)groups);
		for (i = 1; i < ws->rank; i++)
			t[i + 1] = ws->d[i];
		t[1] = ws->d[0] / groups;
		return npr_onnx_reshape_to(c, w, t, ws->rank + 1, false,
					   "weights");
	}
	/* target = [G, -1] ++ shape(W)[1:], computed at compile time */
	s = npr_onnx_shape_of(c, w, "wshape");
	if (s < 0)
		return s;
	tail = npr_onnx_strided(c, s, &one, &end, NULL, &z, &one, 1, "wtail");
	if (tail < 0)
		return tail;
	in[0] = npr_onnx_const_i64(c, t, 2, "wlead");
	in[1] = tail;
	if (in[0] < 0)
		return in[0];
	node = npr_onnx_node(c, "Concat", 1, "wtarget", 2, in, 1, &in[1]);
	if (node < 0 || (node = npr_onnx_set_attr(c, node, "axis", "0")) < 0)
		return node;
	in[0] = w;
	node = npr_onnx_node(c, "Reshape", 1, "weights", 2, in, 1, &out);
	if (node < 0 ||
	    (node = npr_onnx_set_attr(c, node, "special_zero", "false")) < 0)
		return node;
	return out;
}

static int tr_conv(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), w = onnx_in(c, 1), b = onnx_in(c, 2);
	int in[2], node, v, nsp = -1, i;
	struct npr_shape s = { .rank = -1 };
	struct window win;
	int64_t groups, t[MAXR];
	int err;

	if (onnx_rank(c, w) >= 3)
		nsp = onnx_rank(c, w) - 2;
	err = npr_onnx_attr_int(c, "group", 1, &groups);
	if (!err)
		err = window_attrs(c, &win, nsp);
	if (err)
		return err;
	if (groups < 1)
		return npr_onnx_err(c, -EINVAL, "group %lld",
				    (long long)groups);
	if (groups > 1) {
		w = group_weights(c, w, groups);
		if (w < 0)
			return w;
	}
	in[0] = x;
	in[1] = w;
	node = npr_onnx_node(c, groups > 1 ? "GroupConvolution" : "Convolution",
			     1, NULL, 2, in, 1, &v);
	if (node < 0)
		return node;
	err = window_set(c, node, &win, true);
	if (err)
		return err;
	s.rank = win.nsp + 2;
	for (i = 0; i < s.rank; i++)
		s.d[i] = -1;
	if (onnx_rank(c, x) == s.rank)
		s.d[0] = onnx_vshape(c, x)->d[0];
	if (onnx_rank(c, onnx_in(c, 1)) == s.rank)
		s.d[1] = onnx_vshape(c, onnx_in(c, 1))->d[0];
	c->g->vals[v].shape = s;
	if (b >= 0) {
		/* bias [C] as [1, C, 1, ..] */
		t[0] = 1;
		t[1] = -1;
		for (i = 0; i < win.nsp; i++)
			t[2 + i] = 1;
		b = npr_onnx_reshape_to(c, b, t, win.nsp + 2, false, "bias");
		if (b < 0)
			return b;
		v = npr_onnx_binary(c, "Add", v, b, "bias");
		if (v < 0)
			return v;
	}
	out[0] = v;
	return 0;
}

/*
 * ConvTranspose: ConvolutionBackpropData, or GroupConvolutionBackpropData
 * with W [I, O/G, k..] as [G, I/G, O/G, k..]; output_shape (its spatial
 * part) becomes the op's output_shape input, from which it deduces pads.
 */
static int tr_conv_transpose(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), w = onnx_in(c, 1), b = onnx_in(c, 2);
	int in[3], nin = 2, node, v, nsp = -1, i, nop, nos;
	int64_t groups, t[MAXR], op[3], os[MAXR];
	struct window win;
	int err;

	if (onnx_rank(c, w) >= 3)
		nsp = onnx_rank(c, w) - 2;
	err = npr_onnx_attr_int(c, "group", 1, &groups);
	if (!err)
		err = window_attrs(c, &win, nsp);
	if (!err)
		err = npr_onnx_attr_ints(c, "output_padding", op, 3, &nop);
	if (!err)
		err = npr_onnx_attr_ints(c, "output_shape", os, MAXR, &nos);
	if (err)
		return err;
	if (groups < 1)
		return npr_onnx_err(c, -EINVAL, "group %lld",
				    (long long)groups);
	if ((nop >= 0 && nop != win.nsp) || (nos >= 0 && nos < win.nsp))
		return npr_onnx_err(c, -EINVAL,
				    "output_padding or output_shape do not match %d spatial dims",
				    win.nsp);
	if (groups > 1) {
		w = group_weights(c, w, groups);
		if (w < 0)
			return w;
	}
	in[0] = x;
	in[1] = w;
	if (nos >= 0) {
		in[2] = npr_onnx_const_i64(c, os + nos - win.nsp, win.nsp,
					   "output_shape");
		if (in[2] < 0)
			return in[2];
		nin = 3;
	}
	node = npr_onnx_node(c, groups > 1 ? "GroupConvolutionBackpropData" :
			     "ConvolutionBackpropData", 1, b >= 0 ? "deconv" : NULL,
			     nin, in, 1, &v);
	if (node < 0)
		return node;
	err = window_set(c, node, &win, true);
	if (!err && nop >= 0)
		err = npr_onnx_set_ints(c, node, "output_padding", op, win.nsp);
	if (err)
		return err;
	c->g->vals[v].shape.rank = win.nsp + 2;
	for (i = 0; i < win.nsp + 2; i++)
		c->g->vals[v].shape.d[i] = -1;
	if (b >= 0) {
		t[0] = 1;
		t[1] = -1;
		for (i = 0; i < win.nsp; i++)
			t[2 + i] = 1;
		b = npr_onnx_reshape_to(c, b, t, win.nsp + 2, false, "bias");
		if (b < 0)
			return b;
		v = npr_onnx_binary(c, "Add", v, b, NULL);
		if (v < 0)
			return v;
	}
	out[0] = v;
	return 0;
}

/*
 * MaxPool indices with storage_order 1: *idx (row-major over N, C, H, W)
 * becomes plane + w * H + h, the plane offset (n * C + c) * H * W kept.
 */
static int column_major(struct onnx_ctx *c, int *idx)
{
	int64_t H = onnx_vshape(c, c->vin[0])->d[2];
	int64_t W = onnx_vshape(c, c->vin[0])->d[3], hw = H * W;
	struct npr_shape sc = { .rank = 0 };
	int khw, kw, kh, rem, plane, w, h, v;

	khw = npr_onnx_const(c, NPR_ELEM_I64, &sc, &hw, "plane_size");
	kw = khw < 0 ? khw : npr_onnx_const(c, NPR_ELEM_I64, &sc, &W, "width");
	kh = kw < 0 ? kw : npr_onnx_const(c, NPR_ELEM_I64, &sc, &H, "height");
	rem = kh < 0 ? kh : npr_onnx_binary(c, "FloorMod", *idx, khw,
					    "in_plane");
	plane = rem < 0 ? rem :
		npr_onnx_binary(c, "Subtract", *idx, rem, "plane");
	w = plane < 0 ? plane : npr_onnx_binary(c, "FloorMod", rem, kw, "w");
	h = w < 0 ? w : npr_onnx_binary(c, "Subtract", rem, w, "row");
	h = h < 0 ? h : npr_onnx_binary(c, "Divide", h, kw, "h");
	v = h < 0 ? h : npr_onnx_binary(c, "Multiply", w, kh, "w_by_h");
	v = v < 0 ? v : npr_onnx_binary(c, "Add", v, h, "column");
	v = v < 0 ? v : npr_onnx_binary(c, "Add", plane, v, "indices");
	if (v < 0)
		return v;
	*idx = v;
	return 0;
}

static int tr_pool(struct onnx_ctx *c, int *out)
{
	bool avg = c->op->arg, dil = false;
	bool idx = c->np->n_output > 1 && c->np->output[1] &&
		   *c->np->output[1];
	int64_t ceil_mode, incl = 0, order = 0;
	struct window win;
	int node, i, err;

	err = window_attrs(c, &win, -1);
	if (!err)
		err = npr_onnx_attr_int(c, "ceil_mode", 0, &ceil_mode);
	if (!err && avg)
		err = npr_onnx_attr_int(c, "count_include_pad", 0, &incl);
	if (!err && idx)
		err = npr_onnx_attr_int(c, "storage_order", 0, &order);
	if (err)
		return err;
	if (order && (win.nsp != 2 || onnx_rank(c, c->vin[0]) != 4 ||
		      onnx_vshape(c, c->vin[0])->d[2] < 1 ||
		      onnx_vshape(c, c->vin[0])->d[3] < 1))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "column-major indices (storage_order 1) need a 2-D pool of known height and width");
	if (!npr_onnx_attr_find(c, "kernel_shape"))
		return npr_onnx_err(c, -EINVAL,
				    "attribute kernel_shape is missing");
	for (i = 0; i < win.nsp; i++)
		dil |= win.dil[i] != 1;
	if (avg && dil)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "AveragePool with dilations is not supported");
	/* MaxPool-8 gives indices flattened over N, C and space, as ONNX */
	node = npr_onnx_node(c, avg ? "AvgPool" : "MaxPool", dil || idx ? 8 : 1,
			     NULL, 1, c->vin, idx ? 2 : 1, out);
	if (node < 0)
		return node;
	if (idx) {
		c->g->vals[out[1]].type = NPR_ELEM_I64;
		err = npr_onnx_set_attr(c, node, "index_element_type", "i64");
		if (!err)
			err = npr_onnx_set_attr(c, node, "axis", "0");
		if (err)
			return err;
	}
	err = window_set(c, node, &win, dil);
	if (!err)
		err = npr_onnx_set_ints(c, node, "kernel", win.k, win.nsp);
	if (!err)
		err = npr_onnx_set_attr(c, node, "rounding_type", "%s",
					ceil_mode ? "ceil" : "floor");
	if (!err && avg)
		err = npr_onnx_set_attr(c, node, "exclude-pad", "%s",
					onnx_tf(!incl));
	if (err)
		return err;
	c->g->vals[out[0]].shape.rank = onnx_rank(c, c->vin[0]);
	for (i = 0; i < onnx_rank(c, c->vin[0]); i++)
		c->g->vals[out[0]].shape.d[i] =
			i < 2 ? onnx_vshape(c, c->vin[0])->d[i] : -1;
	if (order)
		return column_major(c, &out[1]);
	return 0;
}

static int tr_global_pool(struct onnx_ctx *c, int *out)
{
	int r = npr_onnx_known_rank(c, c->vin[0], c->op->type), i;
	int64_t ax[MAXR];

	if (r < 0)
		return r;
	if (r < 3)
		return npr_onnx_err(c, -EINVAL,
				    "input rank %d, at least 3 expected", r);
	onnx_iota(ax, r - 2, 2);
	out[0] = npr_onnx_reduce(c, c->op->ov, c->vin[0], ax, r - 2, true,
				 NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].shape = *onnx_vshape(c, c->vin[0]);
	for (i = 2; i < r; i++)
		c->g->vals[out[0]].shape.d[i] = 1;
	return 0;
}

/* ---- normalisation ---------------------------------------------------- */

/* y = x * a + b with a, b [C] constants folded from the statistics. */
static int bn_fold(struct onnx_ctx *c, int x, int r, double eps, int64_t ch,
		   int *out)
{
	struct npr_shape s = { .rank = r - 1, .d = { ch } };
	unsigned int t = c->g->vals[x].type;
	double *p, *a, *b;
	char *ta, *tb;
	int i, k, va, vb, v, err = 0;

	if (t != NPR_ELEM_F64 && t != NPR_ELEM_F16)
		t = NPR_ELEM_F32;
	for (i = 1; i < s.rank; i++)
		s.d[i] = 1;
	p = malloc(sizeof(double) * ch * 6);
	if (!p)
		return -ENOMEM;
	ta = (char *)(p + 4 * ch);
	tb = (char *)(p + 5 * ch);
	for (k = 0; k < 4 && !err; k++) {
		err = npr_onnx_const_doubles(c, onnx_in(c, k + 1), p + k * ch,
					     ch);
		if (err >= 0 && err != ch)
			err = npr_onnx_err(c, -EINVAL,
					   "input %d has %d values, the others %lld",
					   k + 1, err, (long long)ch);
		else if (err >= 0)
			err = 0;
	}
	if (err) {
		free(p);
		return err;
	}
	/* scale, B, mean, var -> a = scale / sqrt(var + eps), b = B - mean a */
	a = p;
	b = p + ch;
	for (i = 0; i < ch; i++) {
		a[i] = p[i] / sqrt(p[3 * ch + i] + eps);
		b[i] = p[ch + i] - p[2 * ch + i] * a[i];
	}
	npr_convert(ta, t, a, NPR_ELEM_F64, ch);
	npr_convert(tb, t, b, NPR_ELEM_F64, ch);
	va = npr_onnx_const(c, t, &s, ta, "scale");
	vb = va < 0 ? va : npr_onnx_const(c, t, &s, tb, "shift");
	free(p);
	if (va < 0 || vb < 0)
		return va < 0 ? va : vb;
	v = npr_onnx_binary(c, "Multiply", x, va, "scale");
	if (v >= 0)
		v = npr_onnx_binary(c, "Add", v, vb, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

/*
 * training_mode=1 (opset 14 on): normalise with the batch's own mean and
 * (population) variance per channel, and give the running statistics
 * mean * momentum + batch_mean * (1 - momentum), likewise for var.
 */
static int bn_train(struct onnx_ctx *c, int x, int r, double eps, int *out)
{
	int64_t axes[NPR_MAX_RANK];
	int n = 0, i, mb, vb, d, v, e, a, k;
	double mom;
	int err;

	err = npr_onnx_attr_float(c, "momentum", 0.9, &mom);
	if (err)
		return err;
	for (i = 0; i < r; i++)
		if (i != 1)
			axes[n++] = i;
	mb = npr_onnx_reduce(c, "ReduceMean", x, axes, n, false, "batch_mean");
	a = mb < 0 ? mb : npr_onnx_per_channel(c, mb, r, "batch_mean");
	d = a < 0 ? a : npr_onnx_binary(c, "Subtract", x, a, "centre");
	v = d < 0 ? d : npr_onnx_binary(c, "Multiply", d, d, "square");
	vb = v < 0 ? v :
	     npr_onnx_reduce(c, "ReduceMean", v, axes, n, false, "batch_var");
	e = vb < 0 ? vb : npr_onnx_scalar(c, x, eps, "eps");
	v = e < 0 ? e : npr_onnx_binary(c, "Add", vb, e, "var");
	v = v < 0 ? v : npr_onnx_unary(c, "Sqrt", v, "std");
	v = v < 0 ? v : npr_onnx_binary(c, "Divide", onnx_in(c, 1), v,
					"factor");
	a = v < 0 ? v : npr_onnx_per_channel(c, v, r, "factor");
	v = a < 0 ? a : npr_onnx_binary(c, "Multiply", d, a, "scale");
	a = v < 0 ? v : npr_onnx_per_channel(c, onnx_in(c, 2), r, "shift");
	out[0] = a < 0 ? a : npr_onnx_binary(c, "Add", v, a, NULL);
	if (out[0] < 0)
		return out[0];
	onnx_val(c, out[0])->shape = *onnx_vshape(c, x);
	/* running statistics: input * momentum + batch * (1 - momentum) */
	for (k = 0; k < 2 && (size_t)(k + 1) < c->np->n_output; k++) {
		int cur = k ? vb : mb, m, w;

		m = npr_onnx_scalar(c, x, mom,
				    k ? "var_momentum" : "mean_momentum");
		w = m < 0 ? m : npr_onnx_scalar(c, x, 1 - mom,
						k ? "var_rest" : "mean_rest");
		m = w < 0 ? w : npr_onnx_binary(c, "Multiply",
						onnx_in(c, 3 + k), m,
						k ? "var_kept" : "mean_kept");
		w = m < 0 ? m : npr_onnx_binary(c, "Multiply", cur, w,
						k ? "var_new" : "mean_new");
		out[1 + k] = w < 0 ? w :
			     npr_onnx_binary(c, "Add", m, w,
					     k ? "running_var" : "running_mean");
		if (out[1 + k] < 0)
			return out[1 + k];
	}
	return 0;
}

static int tr_batchnorm(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), r, k, v, a = -1, m, e;
	int64_t spatial = 1, train = 0, ch = -1;
	double eps;
	int err;

	err = npr_onnx_attr_float(c, "epsilon", 1e-5, &eps);
	if (!err)
		err = npr_onnx_attr_int(c, "spatial", 1, &spatial);
	if (!err)
		err = npr_onnx_attr_int(c, "training_mode", 0, &train);
	if (err)
		return err;
	if (!spatial)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "spatial=0 is not supported");
	r = npr_onnx_known_rank(c, x, "BatchNormalization");
	if (r < 0)
		return r;
	if (r < 2)
		return npr_onnx_err(c, -EINVAL,
				    "input rank %d, at least 2 expected", r);
	if (train)
		return bn_train(c, x, r, eps, out);
	for (k = 1; k <= 4; k++) {
		struct npr_value *p = onnx_val(c, onnx_in(c, k));

		if (!p->data || p->shape.rank != 1)
			break;
		if (k == 1)
			ch = p->shape.d[0];
	}
	if (k > 4 && ch > 0 && ch <= (1 << 24))
		return bn_fold(c, x, r, eps, ch, out);
	/* y = (x - mean) * scale / sqrt(var + eps) + B */
	e = npr_onnx_scalar(c, onnx_in(c, 4), eps, "eps");
	if (e < 0)
		return e;
	v = npr_onnx_binary(c, "Add", onnx_in(c, 4), e, "var");
	if (v >= 0)
		v = npr_onnx_unary(c, "Sqrt", v, "std");
	if (v >= 0)
		v = npr_onnx_binary(c, "Divide", onnx_in(c, 1), v, "factor");
	if (v >= 0)
		a = npr_onnx_per_channel(c, v, r, "factor");
	if (v < 0 || a < 0)
		return v < 0 ? v : a;
	m = npr_onnx_per_channel(c, onnx_in(c, 3), r, "mean");
	if (m < 0)
		return m;
	v = npr_onnx_binary(c, "Subtract", x, m, "centre");
	if (v >= 0)
		v = npr_onnx_binary(c, "Multiply", v, a, "scale");
	if (v < 0)
		return v;
	m = npr_onnx_per_channel(c, onnx_in(c, 2), r, "shift");
	if (m < 0)
		return m;
	out[0] = npr_onnx_binary(c, "Add", v, m, NULL);
	return out[0] < 0 ? out[0] : 0;
}

/*
 * (x - mean) / sqrt(var + eps) over @axes, the core of LayerNormalization
 * and InstanceNormalization.
 */
static int normalise(struct onnx_ctx *c, int x, const int64_t *axes, int n,
		     double eps, int *mean, int *stdv)
{
	int m, d, v, e;

	m = npr_onnx_reduce(c, "ReduceMean", x, axes, n, true, "mean");
	if (m < 0)
		return m;
	d = npr_onnx_binary(c, "Subtract", x, m, "centre");
	if (d < 0)
		return d;
	v = npr_onnx_binary(c, "Multiply", d, d, "square");
	if (v >= 0)
		v = npr_onnx_reduce(c, "ReduceMean", v, axes, n, true, "var");
	e = npr_onnx_scalar(c, x, eps, "eps");
	if (v < 0 || e < 0)
		return v < 0 ? v : e;
	v = npr_onnx_binary(c, "Add", v, e, "var");
	if (v >= 0)
		v = npr_onnx_unary(c, "Sqrt", v, "std");
	*mean = m;
	*stdv = v;
	if (v >= 0)
		v = npr_onnx_binary(c, "Divide", d, v, "norm");
	return v;
}

static int tr_layer_norm(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), r = onnx_rank(c, x), v, n, m, sd, one;
	int64_t axis, ax[MAXR];
	double eps;
	int err;

	err = npr_onnx_attr_int(c, "axis", -1, &axis);
	if (!err)
		err = npr_onnx_attr_float(c, "epsilon", 1e-5, &eps);
	if (err)
		return err;
	if (axis < 0 && axis >= -MAXR) {
		n = (int)-axis;
		onnx_iota(ax, n, axis);	/* [axis, .., -1] needs no rank */
	} else {
		err = npr_onnx_norm_axis(c, axis, r, &axis);
		if (err)
			return err;
		n = r - (int)axis;
		onnx_iota(ax, n, axis);
	}
	v = normalise(c, x, ax, n, eps, &m, &sd);
	if (v >= 0)
		v = npr_onnx_binary(c, "Multiply", v, onnx_in(c, 1),
				    onnx_in(c, 2) >= 0 ? "scale" : NULL);
	if (v >= 0 && onnx_in(c, 2) >= 0)
		v = npr_onnx_binary(c, "Add", v, onnx_in(c, 2), NULL);
	if (v < 0)
		return v;
	out[0] = v;
	/* the optional outputs: mean and 1 / standard deviation */
	out[1] = m;
	one = npr_onnx_scalar(c, sd, 1, "one");
	out[2] = one < 0 ? one : npr_onnx_binary(c, "Divide", one, sd,
						 "invstd");
	return out[2] < 0 ? out[2] : 0;
}

static int tr_instance_norm(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0);
	int r = npr_onnx_known_rank(c, x, "InstanceNormalization");
	int64_t ax[MAXR];
	int v, s, b;
	double eps;
	int err;

	if (r < 0)
		return r;
	if (r < 3)
		return npr_onnx_err(c, -EINVAL,
				    "input rank %d, at least 3 expected", r);
	err = npr_onnx_attr_float(c, "epsilon", 1e-5, &eps);
	if (err)
		return err;
	onnx_iota(ax, r - 2, 2);
	v = normalise(c, x, ax, r - 2, eps, &s, &b);
	s = npr_onnx_per_channel(c, onnx_in(c, 1), r, "scale");
	b = npr_onnx_per_channel(c, onnx_in(c, 2), r, "bias");
	if (v < 0 || s < 0 || b < 0)
		return v < 0 ? v : s < 0 ? s : b;
	v = npr_onnx_binary(c, "Multiply", v, s, "scale");
	if (v >= 0)
		v = npr_onnx_binary(c, "Add", v, b, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

/* ---- matrix products -------------------------------------------------- */

static void matmul_shape(struct onnx_ctx *c, int a, int b, bool ta, bool tb,
			 int v)
{
	struct npr_shape *sa = onnx_vshape(c, a), *sb = onnx_vshape(c, b);
	struct npr_shape *o = onnx_vshape(c, v);
	int r, i;

	if (sa->rank < 2 || sb->rank < 2)
		return;
	r = sa->rank > sb->rank ? sa->rank : sb->rank;
	o->rank = r;
	for (i = 0; i < r; i++)
		o->d[i] = -1;
	o->d[r - 2] = sa->d[sa->rank - (ta ? 1 : 2)];
	o->d[r - 1] = sb->d[sb->rank - (tb ? 2 : 1)];
}

static int tr_matmul(struct onnx_ctx *c, int *out)
{
	int node = npr_onnx_node(c, "MatMul", 1, NULL, 2, c->vin, 1, out), err;

	if (node < 0)
		return node;
	matmul_shape(c, c->vin[0], c->vin[1], false, false, out[0]);
	err = npr_onnx_set_attr(c, node, "transpose_a", "false");
	if (!err)
		err = npr_onnx_set_attr(c, node, "transpose_b", "false");
	return err;
}

static int tr_gemm(struct onnx_ctx *c, int *out)
{
	int64_t ta, tb;
	double alpha, beta;
	int v, node, k, cc = onnx_in(c, 2);
	int err;

	err = npr_onnx_attr_int(c, "transA", 0, &ta);
	if (!err)
		err = npr_onnx_attr_int(c, "transB", 0, &tb);
	if (!err)
		err = npr_onnx_attr_float(c, "alpha", 1.0, &alpha);
	if (!err)
		err = npr_onnx_attr_float(c, "beta", 1.0, &beta);
	if (err)
		return err;
	node = npr_onnx_node(c, "MatMul", 1, NULL, 2, c->vin, 1, &v);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "transpose_a", "%s", onnx_tf(ta));
	if (!err)
		err = npr_onnx_set_attr(c, node, "transpose_b", "%s",
					onnx_tf(tb));
	if (err)
		return err;
	matmul_shape(c, c->vin[0], c->vin[1], ta, tb, v);
	if (alpha != 1.0) {
		k = npr_onnx_scalar(c, v, alpha, "alpha");
		if (k < 0)
			return k;
		v = npr_onnx_binary(c, "Multiply", v, k, "alpha");
		if (v < 0)
			return v;
	}
	if (cc >= 0 && beta != 0.0) {
		if (beta != 1.0) {
			k = npr_onnx_scalar(c, cc, beta, "beta");
			if (k < 0)
				return k;
			cc = npr_onnx_binary(c, "Multiply", cc, k, "beta");
			if (cc < 0)
				return cc;
		}
		k = npr_onnx_binary(c, "Add", v, cc, "bias");
		if (k < 0)
			return k;
		c->g->vals[k].shape = c->g->vals[v].shape;
		v = k;
	}
	out[0] = v;
	return 0;
}

static int tr_softmax(struct onnx_ctx *c, int *out)
{
	bool logsm = c->op->arg;
	int x = c->vin[0], r = onnx_rank(c, x), v, node, in[2];
	int64_t axis;
	bool flat;
	int err;

	err = npr_onnx_attr_int(c, "axis", c->opset < 13 ? 1 : -1, &axis);
	if (err)
		return err;
	if (axis < -MAXR || axis >= MAXR)
		return npr_onnx_err(c, -EINVAL, "axis %lld", (long long)axis);
	/* before opset 13 the input is seen as 2-D, split at axis */
	flat = c->opset < 13 && !(r >= 0 && (axis == r - 1 || axis == -1));
	v = flat ? npr_onnx_flatten2d(c, x, axis, "flat") : x;
	if (v < 0)
		return v;
	node = npr_onnx_node(c, "SoftMax", 8, logsm || flat ? "softmax" : NULL,
			     1, &v, 1, &v);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "axis", "%lld",
				flat ? 1LL : (long long)axis);
	if (err)
		return err;
	if (logsm)
		v = npr_onnx_unary(c, "Log", v, flat ? "log" : NULL);
	if (v >= 0 && flat) {
		in[0] = v;
		in[1] = npr_onnx_shape_of(c, x, "shape");
		if (in[1] < 0)
			return in[1];
		node = npr_onnx_node(c, "Reshape", 1, NULL, 2, in, 1, &v);
		if (node < 0)
			return node;
		err = npr_onnx_set_attr(c, node, "special_zero", "false");
		if (err)
			return err;
	}
	if (v >= 0)
		c->g->vals[v].shape = *onnx_vshape(c, x);
	out[0] = v;
	return v < 0 ? v : 0;
}

/*
 * Axes computed from the inputs, where an empty list means every axis
 * (noop_with_empty_axes 0) but would mean none to the opset op:
 * axes ++ iota(r)[0 : r * (len(axes) == 0)], decided at inference time
 * (the length folds once the input shapes are known).
 */
static int axes_or_all(struct onnx_ctx *c, int axes, int r)
{
	int64_t all[MAXR], zero = 0, one = 1, rank = r;
	int in[4], len, v, node;

	onnx_iota(all, r, 0);
	len = npr_onnx_shape_of(c, axes, "axes_len");
	if (len < 0)
		return len;
	in[0] = npr_onnx_const_i64(c, &zero, 1, "zero");
	if (in[0] < 0)
		return in[0];
	v = npr_onnx_binary(c, "Equal", len, in[0], "no_axes");
	if (v >= 0)
		v = npr_onnx_convert(c, v, NPR_ELEM_I64, "no_axes_i64");
	if (v < 0)
		return v;
	in[0] = npr_onnx_const_i64(c, &rank, 1, "rank");
	if (in[0] < 0)
		return in[0];
	v = npr_onnx_binary(c, "Multiply", v, in[0], "all_len");
	if (v < 0)
		return v;
	in[0] = npr_onnx_const_i64(c, all, r, "all_axes");
	in[1] = npr_onnx_const_i64(c, &zero, 1, "all_start");
	in[2] = v;
	in[3] = npr_onnx_const_i64(c, &one, 1, "all_step");
	if (in[0] < 0 || in[1] < 0 || in[3] < 0)
		return -ENOMEM;
	node = npr_onnx_node(c, "Slice", 8, "all", 4, in, 1, &v);
	if (node < 0)
		return node;
	in[0] = axes;
	in[1] = v;
	node = npr_onnx_node(c, "Concat", 1, "axes", 2, in, 1, &v);
	if (node < 0 || (node = npr_onnx_set_attr(c, node, "axis", "0")) < 0)
		return node;
	return v;
}

/* ReduceX; axes an attribute before opset 18 (13 for ReduceSum). */
static int tr_reduce(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = onnx_rank(c, x), in[2] = { x, -1 };
	int64_t keep, noop = 0, ax[MAXR];
	int kind = c->op->arg, n = -1, node, v, err;

	/* axes became an input at opset 13 (ReduceSum) or 18 (the others) */
	bool input_axes = c->opset >= (strcmp(c->op->type, "ReduceSum") ?
				       18 : 13);

	err = npr_onnx_attr_int(c, "keepdims", 1, &keep);
	if (!err && input_axes)
		err = npr_onnx_attr_int(c, "noop_with_empty_axes", 0, &noop);
	if (!err && !input_axes)
		err = npr_onnx_attr_ints(c, "axes", ax, MAXR, &n);
	if (err)
		return err;
	if (!input_axes && onnx_in(c, 1) >= 0)
		return npr_onnx_err(c, -EINVAL,
				    "axes are an attribute before opset %d",
				    strcmp(c->op->type, "ReduceSum") ? 18 : 13);
	if (input_axes && onnx_in(c, 1) >= 0) {
		in[1] = onnx_in(c, 1);
		n = npr_onnx_const_ints(c, in[1], ax, MAXR);
		if (n == -ENODATA && !noop && r >= 0)
			in[1] = axes_or_all(c, in[1], r);
		if (in[1] < 0)
			return in[1];
		if (n == -ENODATA)
			n = 1;		/* given at run time */
		else if (n < 0)
			return n;
		else if (!n)
			in[1] = -1;	/* empty: all axes, or none */
	}
	if (n <= 0 && noop) {
		out[0] = x;
		return 0;
	}
	/* f64 is reduced in f32 (ONNX's tolerance allows it) */
	if (c->g->vals[x].type == NPR_ELEM_F64) {
		x = npr_onnx_convert(c, x, NPR_ELEM_F32, "f32");
		if (x < 0)
			return x;
	}
	/* kind 1: SumSquare, 2: LogSum, 3: LogSumExp */
	if (kind == 1)
		x = npr_onnx_binary(c, "Multiply", x, x, "square");
	else if (kind == 3)
		x = npr_onnx_unary(c, "Exp", x, "exp");
	if (x < 0)
		return x;
	if (n <= 0) {
		/* all axes */
		if (r < 0 && keep)
			return npr_onnx_known_rank(c, c->vin[0],
						   "reducing all axes");
		if (r < 0) {
			int64_t flat = -1, z = 0;

			x = npr_onnx_reshape_to(c, x, &flat, 1, false, "flat");
			if (x < 0)
				return x;
			r = 1;
			ax[0] = z;
			n = 1;
		} else {
			onnx_iota(ax, r, 0);
			n = r;
		}
	}
	if (in[1] < 0) {
		in[1] = npr_onnx_const_i64(c, ax, n, "axes");
		if (in[1] < 0)
			return in[1];
	}
	in[0] = x;
	node = npr_onnx_node(c, kind ? "ReduceSum" : c->op->ov, 1,
			     kind >= 2 ? "sum" : NULL, 2, in, 1, &v);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "keep_dims", "%s", onnx_tf(keep));
	if (err)
		return err;
	if (kind >= 2)
		v = npr_onnx_unary(c, "Log", v, NULL);
	if (v >= 0 && c->g->vals[c->vin[0]].type == NPR_ELEM_F64)
		v = npr_onnx_convert(c, v, NPR_ELEM_F64, "f64");
	out[0] = v;
	return v < 0 ? v : 0;
}

/* ---- the table -------------------------------------------------------- */

const struct onnx_op npr_onnx_ops_nn[] = {
	{ "AveragePool", tr_pool, 1, 1, 1, NULL, 1 },
	{ "BatchNormalization", tr_batchnorm, 5, 5, 5, NULL, 0 },
	{ "Conv", tr_conv, 2, 3, 1, NULL, 0 },
	{ "ConvTranspose", tr_conv_transpose, 2, 3, 1, NULL, 0 },
	{ "Gemm", tr_gemm, 2, 3, 1, NULL, 0 },
	{ "GlobalAveragePool", tr_global_pool, 1, 1, 1, "ReduceMean", 0 },
	{ "GlobalMaxPool", tr_global_pool, 1, 1, 1, "ReduceMax", 0 },
	{ "InstanceNormalization", tr_instance_norm, 3, 3, 1, NULL, 0 },
	{ "LayerNormalization", tr_layer_norm, 2, 3, 3, NULL, 0 },
	{ "LogSoftmax", tr_softmax, 1, 1, 1, NULL, 1 },
	{ "MatMul", tr_matmul, 2, 2, 1, NULL, 0 },
	{ "MaxPool", tr_pool, 1, 1, 2, NULL, 0 },
	{ "ReduceL1", tr_reduce, 1, 2, 1, "ReduceL1", 0 },
	{ "ReduceL2", tr_reduce, 1, 2, 1, "ReduceL2", 0 },
	{ "ReduceLogSum", tr_reduce, 1, 2, 1, NULL, 2 },
	{ "ReduceLogSumExp", tr_reduce, 1, 2, 1, NULL, 3 },
	{ "ReduceMax", tr_reduce, 1, 2, 1, "ReduceMax", 0 },
	{ "ReduceMean", tr_reduce, 1, 2, 1, "ReduceMean", 0 },
	{ "ReduceMin", tr_reduce, 1, 2, 1, "ReduceMin", 0 },
	{ "ReduceProd", tr_reduce, 1, 2, 1, "ReduceProd", 0 },
	{ "ReduceSum", tr_reduce, 1, 2, 1, "ReduceSum", 0 },
	{ "ReduceSumSquare", tr_reduce, 1, 2, 1, NULL, 1 },
	{ "Softmax", tr_softmax, 1, 1, 1, NULL, 0 },
	{ NULL },
};
