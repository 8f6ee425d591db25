// SPDX-License-Identifier: MIT
/*
 * ONNX op translators: each ONNX node becomes one or more nodes of the
 * OpenVINO opset, with the attribute strings their parse() expects.
 *
 * Where ONNX and OpenVINO differ the translation adds small helper nodes
 * (a bias Add after a Convolution, a Multiply for Gemm's alpha, a
 * ShapeOf-StridedSlice-ReduceProd chain that computes a Flatten target).
 * Everything that only depends on shapes or constants is folded when the
 * model is compiled with static input shapes, so helpers cost nothing at
 * inference.  BatchNormalization with constant statistics is folded here,
 * at load time, into one Multiply and one Add.
 *
 * The translators only use what is known at load time (constants, declared
 * shapes, ranks propagated from them) to choose a form; the ops' own shape
 * inference checks everything again at compile time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_ops.h"

#define MAXR		NPR_MAX_RANK
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- small helpers ---------------------------------------------------- */

static struct npr_shape *shape_of_val(struct onnx_ctx *c, int v)
{
	return &c->g->vals[v].shape;
}

static int need_input(struct onnx_ctx *c, int i)
{
	int v = onnx_in(c, i);

	if (v < 0)
		return onnx_err(c, -EINVAL, "input %d is required", i);
	return v;
}

static const char *tf(bool b)
{
	return b ? "true" : "false";
}

/* Normalise @axis against @rank (which may be unknown: -1). */
static int norm_axis(struct onnx_ctx *c, int64_t axis, int rank,
		     int64_t *out)
{
	if (axis < 0) {
		if (rank < 0)
			return onnx_err(c, -EOPNOTSUPP,
					"negative axis %lld needs the input rank, which is not known at load time",
					(long long)axis);
		axis += rank;
	}
	if (axis < 0 || axis >= MAXR || (rank >= 0 && axis >= rank))
		return onnx_err(c, -EINVAL, "axis %lld is out of range",
				(long long)axis);
	*out = axis;
	return 0;
}

static int known_rank(struct onnx_ctx *c, int v, const char *why)
{
	int r = onnx_rank(c, v);

	if (r < 0)
		return onnx_err(c, -EOPNOTSUPP,
				"%s needs the input rank, which is not known at load time (declare the input shapes)",
				why);
	return r;
}

/* A one-input node plus a constant i64 list input (axes, order). */
static int with_list(struct onnx_ctx *c, const char *type, int x,
		     const int64_t *v, int n, const char *suffix)
{
	int in[2] = { x, -1 }, out, err;

	in[1] = onnx_const_i64(c, v, n, suffix ? suffix : "axes");
	if (in[1] < 0)
		return in[1];
	err = onnx_node(c, type, 1, suffix, 2, in, 1, &out);
	return err < 0 ? err : out;
}

/* [from, from + n) as a list. */
static void iota(int64_t *v, int n, int64_t from)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = from + i;
}

/* ShapeOf, as i64. */
static int shape_of(struct onnx_ctx *c, int x, const char *suffix)
{
	int out, node;

	node = onnx_node(c, "ShapeOf", 3, suffix, 1, &x, 1, &out);
	if (node < 0)
		return node;
	c->g->vals[out].type = NPR_ELEM_I64;
	c->g->vals[out].shape.rank = 1;
	c->g->vals[out].shape.d[0] = onnx_rank(c, x);
	node = onnx_set_attr(c, node, "output_type", "i64");
	return node < 0 ? node : out;
}

/*
 * StridedSlice over axes 0..n-1: b, e, s, and begin/end masks (1 =
 * ignore, take the whole axis).  Strides NULL for all ones.
 */
static int strided(struct onnx_ctx *c, int x, const int64_t *b,
		   const int64_t *e, const int64_t *s, const int64_t *bm,
		   const int64_t *em, int n, const char *suffix)
{
	int64_t ones[MAXR];
	int in[4] = { x }, out, node, err, i;

	for (i = 0; i < n; i++)
		ones[i] = 1;
	in[1] = onnx_const_i64(c, b, n, suffix ? suffix : "begin");
	in[2] = onnx_const_i64(c, e, n, suffix ? suffix : "end");
	in[3] = onnx_const_i64(c, s ? s : ones, n,
			       suffix ? suffix : "strides");
	for (i = 1; i < 4; i++)
		if (in[i] < 0)
			return in[i];
	node = onnx_node(c, "StridedSlice", 1, suffix, 4, in, 1, &out);
	if (node < 0)
		return node;
	err = onnx_set_ints(c, node, "begin_mask", bm, n);
	if (!err)
		err = onnx_set_ints(c, node, "end_mask", em, n);
	if (err)
		return err;
	c->g->vals[out].shape.rank = onnx_rank(c, x);
	for (i = 0; i < onnx_rank(c, x); i++)
		c->g->vals[out].shape.d[i] = i < n ? -1 : shape_of_val(c, x)->d[i];
	return out;
}

/* Reshape with a constant target. */
static int reshape_to(struct onnx_ctx *c, int x, const int64_t *t, int n,
		      bool special_zero, const char *suffix)
{
	int node, out, in[2] = { x, -1 }, i;
	struct npr_shape *xs = shape_of_val(c, x), s = { .rank = n };

	in[1] = onnx_const_i64(c, t, n, suffix ? suffix : "shape");
	if (in[1] < 0)
		return in[1];
	node = onnx_node(c, "Reshape", 1, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = onnx_set_attr(c, node, "special_zero", "%s", tf(special_zero));
	if (node < 0)
		return node;
	for (i = 0; i < n; i++)
		s.d[i] = t[i] > 0 ? t[i] :
			 (!t[i] && special_zero && i < xs->rank) ? xs->d[i] :
			 t[i] ? -1 : 0;
	c->g->vals[out].shape = s;
	return out;
}

/* A Reduce* node over constant @axes. */
static int reduce(struct onnx_ctx *c, const char *type, int x,
		  const int64_t *axes, int n, bool keep, const char *suffix)
{
	int in[2] = { x, -1 }, node, out;

	in[1] = onnx_const_i64(c, axes, n, suffix ? suffix : "axes");
	if (in[1] < 0)
		return in[1];
	node = onnx_node(c, type, 1, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = onnx_set_attr(c, node, "keep_dims", "%s", tf(keep));
	return node < 0 ? node : out;
}

/*
 * x as 2-D [d0 * .. * d(axis-1), d(axis) * ..]: the Flatten of ONNX and
 * the coercion of Softmax before opset 13.  Only an axis 0 or 1 is free;
 * others compute the leading product from ShapeOf (folded at compile).
 */
static int flatten2d(struct onnx_ctx *c, int x, int64_t axis,
		     const char *suffix)
{
	struct npr_shape *xs = shape_of_val(c, x);
	int64_t t[2] = { 1, -1 }, z = 0, end = axis, neg = -1, prod = 1;
	int s, h, p, in[2], out, node, i;
	bool known = xs->rank >= 0 && axis >= 0;

	if (axis < 0 && xs->rank >= 0)
		axis += xs->rank;
	if (axis == 0 || axis == 1) {
		t[0] = axis ? 0 : 1;
		return reshape_to(c, x, t, 2, axis == 1, suffix);
	}
	for (i = 0; known && i < axis && i < xs->rank; i++) {
		if (xs->d[i] < 0)
			known = false;
		else
			prod *= xs->d[i];
	}
	if (known) {
		t[0] = prod;
		return reshape_to(c, x, t, 2, false, suffix);
	}
	s = shape_of(c, x, "shape");
	if (s < 0)
		return s;
	h = strided(c, s, &z, &end, NULL, &z, &z, 1, "lead");
	if (h < 0)
		return h;
	p = reduce(c, "ReduceProd", h, &z, 1, true, "prod");
	if (p < 0)
		return p;
	in[0] = p;
	in[1] = onnx_const_i64(c, &neg, 1, "rest");
	if (in[1] < 0)
		return in[1];
	node = onnx_node(c, "Concat", 1, "target", 2, in, 1, &in[1]);
	if (node < 0)
		return node;
	node = onnx_set_attr(c, node, "axis", "0");
	if (node < 0)
		return node;
	in[0] = x;
	node = onnx_node(c, "Reshape", 1, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = onnx_set_attr(c, node, "special_zero", "false");
	c->g->vals[out].shape.rank = 2;
	c->g->vals[out].shape.d[0] = c->g->vals[out].shape.d[1] = -1;
	return node < 0 ? node : out;
}

/* Per-channel parameter [C] as [C, 1, ..] for data of rank @r. */
static int per_channel(struct onnx_ctx *c, int p, int r, const char *suffix)
{
	int64_t ax[MAXR];

	if (r <= 2)
		return p;
	iota(ax, r - 2, 1);
	return with_list(c, "Unsqueeze", p, ax, r - 2, suffix);
}

/* ---- elementwise ------------------------------------------------------ */

static int tr_unary(struct onnx_ctx *c, int *out)
{
	out[0] = onnx_unary(c, c->op->ov, onnx_in(c, 0), NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int tr_binary(struct onnx_ctx *c, int *out)
{
	int a = need_input(c, 0), b = need_input(c, 1), node, v;

	if (a < 0 || b < 0)
		return a < 0 ? a : b;
	v = onnx_binary(c, c->op->ov, a, b, NULL);
	if (v < 0)
		return v;
	node = c->g->vals[v].producer;
	if (c->op->arg == 1)		/* comparison */
		c->g->vals[v].type = NPR_ELEM_BOOLEAN;
	if (c->op->arg == 2) {		/* Div: integers truncate */
		node = onnx_set_attr(c, node, "m_pythondiv", "false");
		if (node < 0)
			return node;
	}
	out[0] = v;
	return 0;
}

/* Sum, Max, Min, Mean: a chain of binary nodes. */
static int tr_variadic(struct onnx_ctx *c, int *out)
{
	bool mean = c->op->arg;
	int v = c->vin[0], i, b;

	for (i = 1; i < c->nin; i++) {
		b = need_input(c, i);
		if (b < 0)
			return b;
		v = onnx_binary(c, c->op->ov, v, b,
				i == c->nin - 1 && !mean ? NULL : "acc");
		if (v < 0)
			return v;
	}
	if (mean && c->nin > 1) {
		b = onnx_scalar(c, v, (double)c->nin, "count");
		if (b < 0)
			return b;
		v = onnx_binary(c, "Divide", v, b, NULL);
	}
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_mod(struct onnx_ctx *c, int *out)
{
	int64_t fmod;
	int err = onnx_attr_int(c, "fmod", 0, &fmod);

	if (err)
		return err;
	out[0] = onnx_binary(c, fmod ? "Mod" : "FloorMod", onnx_in(c, 0),
			     onnx_in(c, 1), NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int clamp(struct onnx_ctx *c, int x, double lo, double hi,
		 const char *suffix)
{
	int v = onnx_unary(c, "Clamp", x, suffix), err;

	if (v < 0)
		return v;
	err = onnx_set_attr(c, c->g->vals[v].producer, "min", "%.9g", lo);
	if (!err)
		err = onnx_set_attr(c, c->g->vals[v].producer, "max", "%.9g",
				    hi);
	return err ? err : v;
}

static int tr_clip(struct onnx_ctx *c, int *out)
{
	double lim[2] = { -INFINITY, INFINITY };
	int x = onnx_in(c, 0), i, v, err;
	bool dynamic = false;

	if (c->opset < 11) {
		err = onnx_attr_float(c, "min", -INFINITY, &lim[0]);
		if (!err)
			err = onnx_attr_float(c, "max", INFINITY, &lim[1]);
		if (err)
			return err;
	}
	for (i = 0; c->opset >= 11 && i < 2; i++) {
		if (onnx_in(c, i + 1) < 0)
			continue;
		err = onnx_const_doubles(c, onnx_in(c, i + 1), &lim[i], 1);
		if (err == -ENODATA)
			dynamic = true;
		else if (err < 0)
			return err;
	}
	if (!dynamic) {
		out[0] = clamp(c, x, lim[0], lim[1], NULL);
		return out[0] < 0 ? out[0] : 0;
	}
	/* bounds computed at run time: Maximum and Minimum */
	v = x;
	if (onnx_in(c, 1) >= 0)
		v = onnx_binary(c, "Maximum", v, onnx_in(c, 1),
				onnx_in(c, 2) >= 0 ? "min" : NULL);
	if (v >= 0 && onnx_in(c, 2) >= 0)
		v = onnx_binary(c, "Minimum", v, onnx_in(c, 2), NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_elu(struct onnx_ctx *c, int *out)
{
	double alpha, gamma = 1;
	int v, err;

	err = onnx_attr_float(c, "alpha", c->op->arg ? 1.67326319217681884765625 :
			      1.0, &alpha);
	if (!err && c->op->arg)		/* Selu */
		err = onnx_attr_float(c, "gamma", 1.05070102214813232421875,
				      &gamma);
	if (err)
		return err;
	v = onnx_unary(c, "Elu", onnx_in(c, 0), c->op->arg ? "elu" : NULL);
	if (v < 0)
		return v;
	err = onnx_set_attr(c, c->g->vals[v].producer, "alpha", "%.9g", alpha);
	if (err)
		return err;
	if (c->op->arg) {
		int g = onnx_scalar(c, v, gamma, "gamma");

		if (g < 0)
			return g;
		v = onnx_binary(c, "Multiply", v, g, NULL);
	}
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_leaky_relu(struct onnx_ctx *c, int *out)
{
	double alpha;
	int err = onnx_attr_float(c, "alpha", 0.01, &alpha), s, v;
	int in[2];

	if (err)
		return err;
	s = onnx_scalar(c, onnx_in(c, 0), alpha, "slope");
	if (s < 0)
		return s;
	in[0] = onnx_in(c, 0);
	in[1] = s;
	err = onnx_node(c, "PReLU", 1, NULL, 2, in, 1, &v);
	if (err < 0)
		return err;
	c->g->vals[v].shape = *shape_of_val(c, in[0]);
	out[0] = v;
	return 0;
}

static int tr_prelu(struct onnx_ctx *c, int *out)
{
	int in[2] = { onnx_in(c, 0), onnx_in(c, 1) }, err;
	int64_t zero = 0;

	/*
	 * ONNX broadcasts the slope numpy-style (a 1-D slope follows the
	 * last axis); PReLU reads a 1-D slope as per channel.  Make a 1-D
	 * slope 2-D so the two agree.
	 */
	if (onnx_rank(c, in[1]) == 1 && onnx_rank(c, in[0]) != 1) {
		in[1] = with_list(c, "Unsqueeze", in[1], &zero, 1, "slope");
		if (in[1] < 0)
			return in[1];
	}
	err = onnx_node(c, "PReLU", 1, NULL, 2, in, 1, out);
	if (err < 0)
		return err;
	c->g->vals[out[0]].shape = *shape_of_val(c, in[0]);
	return 0;
}

static int tr_hard_sigmoid(struct onnx_ctx *c, int *out)
{
	double alpha, beta;
	int x = onnx_in(c, 0), a, b, v, err;

	err = onnx_attr_float(c, "alpha", 0.2, &alpha);
	if (!err)
		err = onnx_attr_float(c, "beta", 0.5, &beta);
	if (err)
		return err;
	a = onnx_scalar(c, x, alpha, "alpha");
	b = onnx_scalar(c, x, beta, "beta");
	if (a < 0 || b < 0)
		return a < 0 ? a : b;
	v = onnx_binary(c, "Multiply", x, a, "scale");
	if (v >= 0)
		v = onnx_binary(c, "Add", v, b, "shift");
	if (v >= 0)
		v = clamp(c, v, 0, 1, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

/* Softsign x / (1 + |x|) and Reciprocal 1 / x. */
static int tr_softsign(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), one = onnx_scalar(c, x, 1, "one"), v;

	if (one < 0)
		return one;
	if (c->op->arg) {	/* Reciprocal */
		out[0] = onnx_binary(c, "Divide", one, x, NULL);
		return out[0] < 0 ? out[0] : 0;
	}
	v = onnx_unary(c, "Abs", x, "abs");
	if (v >= 0)
		v = onnx_binary(c, "Add", v, one, "den");
	if (v >= 0)
		v = onnx_binary(c, "Divide", x, v, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_where(struct onnx_ctx *c, int *out)
{
	int in[3] = { onnx_in(c, 0), onnx_in(c, 1), onnx_in(c, 2) };
	struct npr_shape s, t;
	int node;

	node = onnx_node(c, "Select", 1, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[in[1]].type;
	if (!npr_shape_broadcast(shape_of_val(c, in[1]),
				 shape_of_val(c, in[2]), &s) &&
	    !npr_shape_broadcast(shape_of_val(c, in[0]), &s, &t))
		c->g->vals[out[0]].shape = t;
	node = onnx_set_attr(c, node, "auto_broadcast", "numpy");
	return node < 0 ? node : 0;
}

/* Identity and Dropout (inference: the input itself, no mask). */
static int tr_identity(struct onnx_ctx *c, int *out)
{
	int64_t train = 0;
	int err;

	if (c->nin > 2 && onnx_in(c, 2) >= 0) {
		err = onnx_const_ints(c, onnx_in(c, 2), &train, 1);
		if (err == -ENODATA || (err > 0 && train))
			return onnx_err(c, -EOPNOTSUPP,
					"training mode is not supported");
		if (err < 0)
			return err;
	}
	out[0] = onnx_in(c, 0);
	return 0;
}

static int tr_cast(struct onnx_ctx *c, int *out)
{
	unsigned int t;
	int64_t to;
	int err = onnx_attr_int(c, "to", 0, &to), node;

	if (err)
		return err;
	t = to >= INT32_MIN && to <= INT32_MAX ? onnx_elem_type((int32_t)to) : 0;
	if (!t)
		return onnx_err(c, -EOPNOTSUPP, "cast to type %lld is not supported",
				(long long)to);
	node = onnx_node(c, "Convert", 1, NULL, 1, &c->vin[0], 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = t;
	c->g->vals[out[0]].shape = *shape_of_val(c, c->vin[0]);
	node = onnx_set_attr(c, node, "destination_type", "%s",
			     npr_elem_name(t));
	return node < 0 ? node : 0;
}

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

	err = onnx_attr_ints(c, "kernel_shape", w->k, 3, &nk);
	if (!err)
		err = onnx_attr_ints(c, "strides", w->st, 3, &ns);
	if (!err)
		err = onnx_attr_ints(c, "dilations", w->dil, 3, &nd);
	if (!err)
		err = onnx_attr_ints(c, "pads", p, 6, &np);
	if (!err)
		err = onnx_attr_str(c, "auto_pad", "NOTSET", ap, sizeof(ap));
	if (err)
		return err;
	if (nsp < 0)
		nsp = nk >= 0 ? nk : ns >= 0 ? ns : nd >= 0 ? nd :
		      np >= 0 ? np / 2 : -1;
	if (nsp < 1 || nsp > 3)
		return onnx_err(c, -EOPNOTSUPP,
				"%s spatial dims (only 1 to 3 are supported)",
				nsp < 0 ? "cannot tell the number of" : "too many");
	if ((nk >= 0 && nk != nsp) || (ns >= 0 && ns != nsp) ||
	    (nd >= 0 && nd != nsp) || (np >= 0 && np != 2 * nsp))
		return onnx_err(c, -EINVAL,
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
	for (i = 0; i < (int)ARRAY_SIZE(pads); i++)
		if (!strcmp(ap, pads[i][0])) {
			snprintf(w->pad, sizeof(w->pad), "%s", pads[i][1]);
			return 0;
		}
	return onnx_err(c, -EOPNOTSUPP, "auto_pad \"%s\" is not supported", ap);
}

static int window_set(struct onnx_ctx *c, int node, const struct window *w,
		      bool dil)
{
	int err;

	err = onnx_set_ints(c, node, "strides", w->st, w->nsp);
	if (!err && dil)
		err = onnx_set_ints(c, node, "dilations", w->dil, w->nsp);
	if (!err)
		err = onnx_set_ints(c, node, "pads_begin", w->pb, w->nsp);
	if (!err)
		err = onnx_set_ints(c, node, "pads_end", w->pe, w->nsp);
	if (!err)
		err = onnx_set_attr(c, node, "auto_pad", "%s", w->pad);
	return err;
}

/* W [O, I/G, k..] as [G, O/G, I/G, k..] for GroupConvolution. */
static int group_weights(struct onnx_ctx *c, int w, int64_t groups)
{
	struct npr_shape *ws = shape_of_val(c, w);
	int64_t t[MAXR] = { groups, -1 }, z = 0, one = 1, end = 0;
	int s, tail, in[2], i, node, out;

	if (npr_shape_static(ws) && ws->rank >= 3 && ws->rank < MAXR) {
		if (ws->d[0] % groups)
			return onnx_err(c, -EINVAL,
					"%lld output channels do not split into %lld groups",
					(long long)ws->d[0], (long long)groups);
		for (i = 1; i < ws->rank; i++)
			t[i + 1] = ws->d[i];
		t[1] = ws->d[0] / groups;
		return reshape_to(c, w, t, ws->rank + 1, false, "weights");
	}
	/* target = [G, -1] ++ shape(W)[1:], computed at compile time */
	s = shape_of(c, w, "wshape");
	if (s < 0)
		return s;
	tail = strided(c, s, &one, &end, NULL, &z, &one, 1, "wtail");
	if (tail < 0)
		return tail;
	in[0] = onnx_const_i64(c, t, 2, "wlead");
	in[1] = tail;
	if (in[0] < 0)
		return in[0];
	node = onnx_node(c, "Concat", 1, "wtarget", 2, in, 1, &in[1]);
	if (node < 0 || (node = onnx_set_attr(c, node, "axis", "0")) < 0)
		return node;
	in[0] = w;
	node = onnx_node(c, "Reshape", 1, "weights", 2, in, 1, &out);
	if (node < 0 ||
	    (node = onnx_set_attr(c, node, "special_zero", "false")) < 0)
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
	err = onnx_attr_int(c, "group", 1, &groups);
	if (!err)
		err = window_attrs(c, &win, nsp);
	if (err)
		return err;
	if (groups < 1)
		return onnx_err(c, -EINVAL, "group %lld", (long long)groups);
	if (groups > 1) {
		w = group_weights(c, w, groups);
		if (w < 0)
			return w;
	}
	in[0] = x;
	in[1] = w;
	node = onnx_node(c, groups > 1 ? "GroupConvolution" : "Convolution",
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
		s.d[0] = shape_of_val(c, x)->d[0];
	if (onnx_rank(c, onnx_in(c, 1)) == s.rank)
		s.d[1] = shape_of_val(c, onnx_in(c, 1))->d[0];
	c->g->vals[v].shape = s;
	if (b >= 0) {
		/* bias [C] as [1, C, 1, ..] */
		t[0] = 1;
		t[1] = -1;
		for (i = 0; i < win.nsp; i++)
			t[2 + i] = 1;
		b = reshape_to(c, b, t, win.nsp + 2, false, "bias");
		if (b < 0)
			return b;
		v = onnx_binary(c, "Add", v, b, "bias");
		if (v < 0)
			return v;
	}
	out[0] = v;
	return 0;
}

static int tr_pool(struct onnx_ctx *c, int *out)
{
	bool avg = c->op->arg;
	int64_t ceil_mode, incl = 0;
	bool dil = false;
	struct window win;
	int node, i, err;

	err = window_attrs(c, &win, -1);
	if (!err)
		err = onnx_attr_int(c, "ceil_mode", 0, &ceil_mode);
	if (!err && avg)
		err = onnx_attr_int(c, "count_include_pad", 0, &incl);
	if (err)
		return err;
	if (!onnx_attr_find(c, "kernel_shape"))
		return onnx_err(c, -EINVAL, "attribute kernel_shape is missing");
	for (i = 0; i < win.nsp; i++)
		dil |= win.dil[i] != 1;
	if (avg && dil)
		return onnx_err(c, -EOPNOTSUPP,
				"AveragePool with dilations is not supported");
	node = onnx_node(c, avg ? "AvgPool" : "MaxPool", dil ? 8 : 1, NULL,
			 1, c->vin, 1, out);
	if (node < 0)
		return node;
	err = window_set(c, node, &win, dil);
	if (!err)
		err = onnx_set_ints(c, node, "kernel", win.k, win.nsp);
	if (!err)
		err = onnx_set_attr(c, node, "rounding_type", "%s",
				    ceil_mode ? "ceil" : "floor");
	if (!err && avg)
		err = onnx_set_attr(c, node, "exclude-pad", "%s", tf(!incl));
	if (err)
		return err;
	c->g->vals[out[0]].shape.rank = onnx_rank(c, c->vin[0]);
	for (i = 0; i < onnx_rank(c, c->vin[0]); i++)
		c->g->vals[out[0]].shape.d[i] =
			i < 2 ? shape_of_val(c, c->vin[0])->d[i] : -1;
	return 0;
}

static int tr_global_pool(struct onnx_ctx *c, int *out)
{
	int r = known_rank(c, c->vin[0], c->op->type), i;
	int64_t ax[MAXR];

	if (r < 0)
		return r;
	if (r < 3)
		return onnx_err(c, -EINVAL, "input rank %d, at least 3 expected",
				r);
	iota(ax, r - 2, 2);
	out[0] = reduce(c, c->op->ov, c->vin[0], ax, r - 2, true, NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].shape = *shape_of_val(c, c->vin[0]);
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
		err = onnx_const_doubles(c, onnx_in(c, k + 1), p + k * ch, ch);
		if (err >= 0 && err != ch)
			err = onnx_err(c, -EINVAL,
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
	va = onnx_const(c, t, &s, ta, "scale");
	vb = va < 0 ? va : onnx_const(c, t, &s, tb, "shift");
	free(p);
	if (va < 0 || vb < 0)
		return va < 0 ? va : vb;
	v = onnx_binary(c, "Multiply", x, va, "scale");
	if (v >= 0)
		v = onnx_binary(c, "Add", v, vb, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_batchnorm(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), r, k, v, a = -1, m, e;
	int64_t spatial = 1, train = 0, ch = -1;
	double eps;
	int err;

	err = onnx_attr_float(c, "epsilon", 1e-5, &eps);
	if (!err)
		err = onnx_attr_int(c, "spatial", 1, &spatial);
	if (!err)
		err = onnx_attr_int(c, "training_mode", 0, &train);
	if (err)
		return err;
	if (!spatial || train)
		return onnx_err(c, -EOPNOTSUPP, "%s is not supported",
				train ? "training_mode" : "spatial=0");
	r = known_rank(c, x, "BatchNormalization");
	if (r < 0)
		return r;
	if (r < 2)
		return onnx_err(c, -EINVAL, "input rank %d, at least 2 expected",
				r);
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
	e = onnx_scalar(c, onnx_in(c, 4), eps, "eps");
	if (e < 0)
		return e;
	v = onnx_binary(c, "Add", onnx_in(c, 4), e, "var");
	if (v >= 0)
		v = onnx_unary(c, "Sqrt", v, "std");
	if (v >= 0)
		v = onnx_binary(c, "Divide", onnx_in(c, 1), v, "factor");
	if (v >= 0)
		a = per_channel(c, v, r, "factor");
	if (v < 0 || a < 0)
		return v < 0 ? v : a;
	m = per_channel(c, onnx_in(c, 3), r, "mean");
	if (m < 0)
		return m;
	v = onnx_binary(c, "Subtract", x, m, "centre");
	if (v >= 0)
		v = onnx_binary(c, "Multiply", v, a, "scale");
	if (v < 0)
		return v;
	m = per_channel(c, onnx_in(c, 2), r, "shift");
	if (m < 0)
		return m;
	out[0] = onnx_binary(c, "Add", v, m, NULL);
	return out[0] < 0 ? out[0] : 0;
}

/*
 * (x - mean) / sqrt(var + eps) over @axes, the core of LayerNormalization
 * and InstanceNormalization.
 */
static int normalise(struct onnx_ctx *c, int x, const int64_t *axes, int n,
		     double eps)
{
	int m, d, v, e;

	m = reduce(c, "ReduceMean", x, axes, n, true, "mean");
	if (m < 0)
		return m;
	d = onnx_binary(c, "Subtract", x, m, "centre");
	if (d < 0)
		return d;
	v = onnx_binary(c, "Multiply", d, d, "square");
	if (v >= 0)
		v = reduce(c, "ReduceMean", v, axes, n, true, "var");
	e = onnx_scalar(c, x, eps, "eps");
	if (v < 0 || e < 0)
		return v < 0 ? v : e;
	v = onnx_binary(c, "Add", v, e, "var");
	if (v >= 0)
		v = onnx_unary(c, "Sqrt", v, "std");
	if (v >= 0)
		v = onnx_binary(c, "Divide", d, v, "norm");
	return v;
}

static int tr_layer_norm(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), r = onnx_rank(c, x), v, n;
	int64_t axis, ax[MAXR];
	double eps;
	int err;

	err = onnx_attr_int(c, "axis", -1, &axis);
	if (!err)
		err = onnx_attr_float(c, "epsilon", 1e-5, &eps);
	if (err)
		return err;
	if (axis < 0 && axis >= -MAXR) {
		n = (int)-axis;
		iota(ax, n, axis);	/* [axis, .., -1] needs no rank */
	} else {
		err = norm_axis(c, axis, r, &axis);
		if (err)
			return err;
		n = r - (int)axis;
		iota(ax, n, axis);
	}
	v = normalise(c, x, ax, n, eps);
	if (v >= 0)
		v = onnx_binary(c, "Multiply", v, onnx_in(c, 1),
				onnx_in(c, 2) >= 0 ? "scale" : NULL);
	if (v >= 0 && onnx_in(c, 2) >= 0)
		v = onnx_binary(c, "Add", v, onnx_in(c, 2), NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_instance_norm(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), r = known_rank(c, x, "InstanceNormalization");
	int64_t ax[MAXR];
	int v, s, b;
	double eps;
	int err;

	if (r < 0)
		return r;
	if (r < 3)
		return onnx_err(c, -EINVAL, "input rank %d, at least 3 expected",
				r);
	err = onnx_attr_float(c, "epsilon", 1e-5, &eps);
	if (err)
		return err;
	iota(ax, r - 2, 2);
	v = normalise(c, x, ax, r - 2, eps);
	s = per_channel(c, onnx_in(c, 1), r, "scale");
	b = per_channel(c, onnx_in(c, 2), r, "bias");
	if (v < 0 || s < 0 || b < 0)
		return v < 0 ? v : s < 0 ? s : b;
	v = onnx_binary(c, "Multiply", v, s, "scale");
	if (v >= 0)
		v = onnx_binary(c, "Add", v, b, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

/* ---- matrix products -------------------------------------------------- */

static void matmul_shape(struct onnx_ctx *c, int a, int b, bool ta, bool tb,
			 int v)
{
	struct npr_shape *sa = shape_of_val(c, a), *sb = shape_of_val(c, b);
	struct npr_shape *o = shape_of_val(c, v);
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
	int node = onnx_node(c, "MatMul", 1, NULL, 2, c->vin, 1, out), err;

	if (node < 0)
		return node;
	matmul_shape(c, c->vin[0], c->vin[1], false, false, out[0]);
	err = onnx_set_attr(c, node, "transpose_a", "false");
	if (!err)
		err = onnx_set_attr(c, node, "transpose_b", "false");
	return err;
}

static int tr_gemm(struct onnx_ctx *c, int *out)
{
	int64_t ta, tb;
	double alpha, beta;
	int v, node, k, cc = onnx_in(c, 2);
	int err;

	err = onnx_attr_int(c, "transA", 0, &ta);
	if (!err)
		err = onnx_attr_int(c, "transB", 0, &tb);
	if (!err)
		err = onnx_attr_float(c, "alpha", 1.0, &alpha);
	if (!err)
		err = onnx_attr_float(c, "beta", 1.0, &beta);
	if (err)
		return err;
	node = onnx_node(c, "MatMul", 1, NULL, 2, c->vin, 1, &v);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "transpose_a", "%s", tf(ta));
	if (!err)
		err = onnx_set_attr(c, node, "transpose_b", "%s", tf(tb));
	if (err)
		return err;
	matmul_shape(c, c->vin[0], c->vin[1], ta, tb, v);
	if (alpha != 1.0) {
		k = onnx_scalar(c, v, alpha, "alpha");
		if (k < 0)
			return k;
		v = onnx_binary(c, "Multiply", v, k, "alpha");
		if (v < 0)
			return v;
	}
	if (cc >= 0 && beta != 0.0) {
		if (beta != 1.0) {
			k = onnx_scalar(c, cc, beta, "beta");
			if (k < 0)
				return k;
			cc = onnx_binary(c, "Multiply", cc, k, "beta");
			if (cc < 0)
				return cc;
		}
		k = onnx_binary(c, "Add", v, cc, "bias");
		if (k < 0)
			return k;
		c->g->vals[k].shape = c->g->vals[v].shape;
		v = k;
	}
	out[0] = v;
	return 0;
}

/* ---- shapes and data movement ----------------------------------------- */

static int tr_flatten(struct onnx_ctx *c, int *out)
{
	int64_t axis;
	int err = onnx_attr_int(c, "axis", 1, &axis);

	if (err)
		return err;
	if (axis < -MAXR || axis > MAXR)
		return onnx_err(c, -EINVAL, "axis %lld", (long long)axis);
	out[0] = flatten2d(c, c->vin[0], axis, NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int tr_reshape(struct onnx_ctx *c, int *out)
{
	struct npr_shape *xs = shape_of_val(c, c->vin[0]), s = { .rank = -1 };
	int64_t allowzero = 0, t[MAXR];
	int node, n, i, err;

	err = onnx_attr_int(c, "allowzero", 0, &allowzero);
	if (err)
		return err;
	node = onnx_node(c, "Reshape", 1, NULL, 2, c->vin, 1, out);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "special_zero", "%s", tf(!allowzero));
	if (err)
		return err;
	n = onnx_const_ints(c, c->vin[1], t, MAXR);
	if (n < 0 && n != -ENODATA)
		return n;
	if (n >= 0) {
		s.rank = n;
		for (i = 0; i < n; i++)
			s.d[i] = t[i] > 0 ? t[i] :
				 !t[i] && !allowzero && i < xs->rank ?
				 xs->d[i] : t[i] ? -1 : 0;
	}
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_transpose(struct onnx_ctx *c, int *out)
{
	struct npr_shape *xs = shape_of_val(c, c->vin[0]), s;
	int64_t perm[MAXR];
	int n, i, err;

	err = onnx_attr_ints(c, "perm", perm, MAXR, &n);
	if (err)
		return err;
	out[0] = with_list(c, "Transpose", c->vin[0], perm, n < 0 ? 0 : n,
			   NULL);
	if (out[0] < 0)
		return out[0];
	if (xs->rank < 0 || (n >= 0 && n != xs->rank))
		return 0;
	s.rank = xs->rank;
	for (i = 0; i < s.rank; i++) {
		int64_t p = n < 0 ? s.rank - 1 - i : perm[i];

		if (p < 0 || p >= s.rank)
			return 0;
		s.d[i] = xs->d[p];
	}
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_concat(struct onnx_ctx *c, int *out)
{
	struct npr_shape s = *shape_of_val(c, c->vin[0]);
	int64_t axis, a;
	int node, i, err;

	if (!onnx_attr_find(c, "axis"))
		return onnx_err(c, -EINVAL, "attribute axis is missing");
	err = onnx_attr_int(c, "axis", 0, &axis);
	if (err)
		return err;
	for (i = 0; i < c->nin; i++)
		if (c->vin[i] < 0)
			return need_input(c, i);
	node = onnx_node(c, "Concat", 1, NULL, c->nin, c->vin, 1, out);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
	if (err)
		return err;
	if (s.rank > 0 && !norm_axis(c, axis, s.rank, &a)) {
		for (i = 1; i < c->nin; i++) {
			int64_t d = shape_of_val(c, c->vin[i])->d[a];

			s.d[a] = s.d[a] < 0 || d < 0 ||
				 onnx_rank(c, c->vin[i]) != s.rank ?
				 -1 : s.d[a] + d;
		}
		c->g->vals[out[0]].shape = s;
	}
	return 0;
}

/* Squeeze and Unsqueeze; axes an attribute before opset 13. */
static int tr_squeeze(struct onnx_ctx *c, int *out)
{
	bool unsq = c->op->arg;
	struct npr_shape *xs = shape_of_val(c, c->vin[0]), s;
	int64_t ax[MAXR];
	bool mark[MAXR] = { false };
	int in[2] = { c->vin[0], -1 }, n = -1, i, k, node, r;

	if (c->opset < 13) {
		int err = onnx_attr_ints(c, "axes", ax, MAXR, &n);

		if (err)
			return err;
		if (n >= 0) {
			in[1] = onnx_const_i64(c, ax, n, "axes");
			if (in[1] < 0)
				return in[1];
		}
	} else if (onnx_in(c, 1) >= 0) {
		in[1] = onnx_in(c, 1);
		n = onnx_const_ints(c, in[1], ax, MAXR);
		if (n < 0 && n != -ENODATA)
			return n;
	}
	if (unsq && in[1] < 0)
		return onnx_err(c, -EINVAL, "axes are required");
	node = onnx_node(c, unsq ? "Unsqueeze" : "Squeeze", 1, NULL,
			 in[1] < 0 ? 1 : 2, in, 1, out);
	if (node < 0)
		return node;
	/* the shape when the axes are known */
	r = xs->rank < 0 || n < 0 ? -1 : unsq ? xs->rank + n : xs->rank;
	if (r < 0 || r > MAXR)
		return 0;
	for (i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];

		if (a < 0 || a >= r)
			return 0;
		mark[a] = true;
	}
	s.rank = 0;
	for (i = 0, k = 0; i < r; i++) {
		if (unsq) {
			s.d[s.rank++] = mark[i] ? 1 : xs->d[k++];
		} else if (!mark[i]) {
			s.d[s.rank++] = xs->d[i];
		}
	}
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_softmax(struct onnx_ctx *c, int *out)
{
	bool logsm = c->op->arg;
	int x = c->vin[0], r = onnx_rank(c, x), v, node, in[2];
	int64_t axis;
	bool flat;
	int err;

	err = onnx_attr_int(c, "axis", c->opset < 13 ? 1 : -1, &axis);
	if (err)
		return err;
	if (axis < -MAXR || axis >= MAXR)
		return onnx_err(c, -EINVAL, "axis %lld", (long long)axis);
	/* before opset 13 the input is seen as 2-D, split at axis */
	flat = c->opset < 13 && !(r >= 0 && (axis == r - 1 || axis == -1));
	v = flat ? flatten2d(c, x, axis, "flat") : x;
	if (v < 0)
		return v;
	node = onnx_node(c, "SoftMax", 8, logsm || flat ? "softmax" : NULL,
			 1, &v, 1, &v);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "axis", "%lld",
			    flat ? 1LL : (long long)axis);
	if (err)
		return err;
	if (logsm)
		v = onnx_unary(c, "Log", v, flat ? "log" : NULL);
	if (v >= 0 && flat) {
		in[0] = v;
		in[1] = shape_of(c, x, "shape");
		if (in[1] < 0)
			return in[1];
		node = onnx_node(c, "Reshape", 1, NULL, 2, in, 1, &v);
		if (node < 0)
			return node;
		err = onnx_set_attr(c, node, "special_zero", "false");
		if (err)
			return err;
	}
	if (v >= 0)
		c->g->vals[v].shape = *shape_of_val(c, x);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_shape(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *as = onnx_attr_find(c, "start");
	const Onnx__AttributeProto *ae = onnx_attr_find(c, "end");
	int64_t b, e, z = 0, em;
	int v, err;

	v = shape_of(c, c->vin[0], as || ae ? "shape" : NULL);
	if (v < 0 || (!as && !ae)) {
		out[0] = v;
		return v < 0 ? v : 0;
	}
	err = onnx_attr_int(c, "start", 0, &b);
	if (!err)
		err = onnx_attr_int(c, "end", 0, &e);
	if (err)
		return err;
	em = !ae;
	out[0] = strided(c, v, &b, &e, NULL, &z, &em, 1, NULL);
	if (out[0] >= 0)
		c->g->vals[out[0]].shape.d[0] = -1;
	return out[0] < 0 ? out[0] : 0;
}

static int tr_gather(struct onnx_ctx *c, int *out)
{
	struct npr_shape *d = shape_of_val(c, c->vin[0]);
	struct npr_shape *ix = shape_of_val(c, c->vin[1]), s;
	struct npr_shape sc = { .rank = 0 };
	int in[3] = { c->vin[0], c->vin[1], -1 }, node, i;
	int64_t axis, a;
	int err;

	err = onnx_attr_int(c, "axis", 0, &axis);
	if (err)
		return err;
	in[2] = onnx_const(c, NPR_ELEM_I64, &sc, &axis, "axis");
	if (in[2] < 0)
		return in[2];
	node = onnx_node(c, "Gather", 8, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "batch_dims", "0");
	if (err)
		return err;
	if (d->rank < 1 || ix->rank < 0 || d->rank - 1 + ix->rank > MAXR ||
	    norm_axis(c, axis, d->rank, &a))
		return 0;
	s.rank = 0;
	for (i = 0; i < a; i++)
		s.d[s.rank++] = d->d[i];
	for (i = 0; i < ix->rank; i++)
		s.d[s.rank++] = ix->d[i];
	for (i = a + 1; i < d->rank; i++)
		s.d[s.rank++] = d->d[i];
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_constant(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *a;
	struct npr_shape s = { .rank = 0 };

	if (c->np->n_attribute != 1 || !(a = c->np->attribute[0]) || !a->name)
		return onnx_err(c, -EINVAL, "needs exactly one attribute");
	if (!strcmp(a->name, "value") && a->t) {
		out[0] = onnx_tensor_const(c, a->t, NULL);
	} else if (!strcmp(a->name, "value_float")) {
		float f = a->f;

		out[0] = onnx_const(c, NPR_ELEM_F32, &s, &f, NULL);
	} else if (!strcmp(a->name, "value_int")) {
		out[0] = onnx_const(c, NPR_ELEM_I64, &s, &a->i, NULL);
	} else if (!strcmp(a->name, "value_floats")) {
		s.rank = 1;
		s.d[0] = (int64_t)a->n_floats;
		out[0] = onnx_const(c, NPR_ELEM_F32, &s, a->floats, NULL);
	} else if (!strcmp(a->name, "value_ints")) {
		s.rank = 1;
		s.d[0] = (int64_t)a->n_ints;
		out[0] = onnx_const(c, NPR_ELEM_I64, &s, a->ints, NULL);
	} else {
		return onnx_err(c, -EOPNOTSUPP,
				"attribute %.64s is not supported", a->name);
	}
	return out[0] < 0 ? out[0] : 0;
}

static int tr_constant_of_shape(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *a = onnx_attr_find(c, "value");
	struct npr_shape s = { .rank = 0 }, vs;
	int64_t dims[MAXR], numel = 1;
	unsigned int t = NPR_ELEM_F32;
	uint64_t val = 0;
	size_t sz;
	char *p;
	int n, i, v, in[2];

	if (a && a->t) {
		v = onnx_tensor_const(c, a->t, "value");
		if (v < 0)
			return v;
		vs = c->g->vals[v].shape;
		if (npr_shape_numel(&vs) != 1)
			return onnx_err(c, -EINVAL, "value must have one element");
		t = c->g->vals[v].type;
		memcpy(&val, c->g->vals[v].data, npr_elem_size(t));
	}
	n = onnx_const_ints(c, c->vin[0], dims, MAXR);
	if (n == -ENODATA) {
		/* a shape computed at run time: broadcast the value */
		v = onnx_const(c, t, &s, &val, "value");
		if (v < 0)
			return v;
		in[0] = v;
		in[1] = c->vin[0];
		v = onnx_node(c, "Broadcast", 3, NULL, 2, in, 1, out);
		if (v < 0)
			return v;
		v = onnx_set_attr(c, v, "mode", "numpy");
		return v < 0 ? v : 0;
	}
	if (n < 0)
		return n;
	s.rank = n;
	for (i = 0; i < n; i++) {
		if (dims[i] < 0 || dims[i] > (1LL << 40) ||
		    (dims[i] && numel > (1LL << 40) / dims[i]))
			return onnx_err(c, -EINVAL, "bad shape");
		s.d[i] = dims[i];
		numel *= dims[i];
	}
	sz = npr_elem_size(t);
	if (!sz || numel * sz > (256u << 20))
		return onnx_err(c, -EOPNOTSUPP, "constant too large");
	p = malloc(numel ? numel * sz : 1);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < numel; i++)
		memcpy(p + i * sz, &val, sz);
	out[0] = onnx_const(c, t, &s, p, NULL);
	free(p);
	return out[0] < 0 ? out[0] : 0;
}

/* Slice: attributes before opset 10, inputs from then on. */
static int tr_slice(struct onnx_ctx *c, int *out)
{
	int64_t st[MAXR], en[MAXR], ax[MAXR], sp[MAXR];
	int64_t b[MAXR], e[MAXR], s[MAXR], bm[MAXR], em[MAXR];
	int x = c->vin[0], r = onnx_rank(c, x), n, ne, na = -1, ns = -1;
	int i, m = 0, err;

	if (c->opset < 10) {
		err = onnx_attr_ints(c, "starts", st, MAXR, &n);
		if (!err)
			err = onnx_attr_ints(c, "ends", en, MAXR, &ne);
		if (!err)
			err = onnx_attr_ints(c, "axes", ax, MAXR, &na);
		if (err)
			return err;
		if (n < 0 || ne < 0)
			return onnx_err(c, -EINVAL, "starts and ends are required");
	} else {
		if (c->nin < 3)
			return onnx_err(c, -EINVAL, "starts and ends are required");
		if (onnx_in(c, 3) >= 0) {
			na = onnx_const_ints(c, onnx_in(c, 3), ax, MAXR);
			if (na == -ENODATA)
				return onnx_err(c, -EOPNOTSUPP,
						"axes must be constant");
			if (na < 0)
				return na;
		}
		if (need_input(c, 1) < 0 || need_input(c, 2) < 0)
			return -EINVAL;
		n = onnx_const_ints(c, onnx_in(c, 1), st, MAXR);
		ne = onnx_const_ints(c, onnx_in(c, 2), en, MAXR);
		if (onnx_in(c, 4) >= 0)
			ns = onnx_const_ints(c, onnx_in(c, 4), sp, MAXR);
		if (n == -ENODATA || ne == -ENODATA || ns == -ENODATA) {
			/* run-time bounds: fine when they cover axes 0.. */
			for (i = 0; i < na; i++)
				if (ax[i] != i)
					return onnx_err(c, -EOPNOTSUPP,
							"non-constant starts or ends need axes 0, 1, ..");
			int in[4] = { x, onnx_in(c, 1), onnx_in(c, 2),
				      onnx_in(c, 4) };
			int node = onnx_node(c, "StridedSlice", 1, NULL,
					     in[3] >= 0 ? 4 : 3, in, 1, out);

			if (node < 0)
				return node;
			err = onnx_set_attr(c, node, "begin_mask", "%s", "");
			if (!err)
				err = onnx_set_attr(c, node, "end_mask", "%s",
						    "");
			c->g->vals[out[0]].shape.rank = r;
			for (i = 0; i < r; i++)
				c->g->vals[out[0]].shape.d[i] = -1;
			return err;
		}
		if (n < 0 || ne < 0 || (onnx_in(c, 4) >= 0 && ns < 0))
			return n < 0 ? n : ne < 0 ? ne : ns;
	}
	if (n != ne || (na >= 0 && na != n) || (ns >= 0 && ns != n))
		return onnx_err(c, -EINVAL,
				"starts, ends, axes and steps differ in length");
	for (i = 0; i < MAXR; i++) {
		b[i] = e[i] = 0;
		s[i] = 1;
		bm[i] = em[i] = 1;
	}
	for (i = 0; i < n; i++) {
		int64_t a = na >= 0 ? ax[i] : i;

		err = norm_axis(c, a, r, &a);
		if (err)
			return err;
		if (!bm[a])
			return onnx_err(c, -EINVAL, "axis %lld repeats",
					(long long)a);
		if (ns >= 0 && !sp[i])
			return onnx_err(c, -EINVAL, "step 0");
		b[a] = st[i];
		e[a] = en[i];
		s[a] = ns >= 0 ? sp[i] : 1;
		bm[a] = em[a] = 0;
		if (a + 1 > m)
			m = (int)a + 1;
	}
	out[0] = strided(c, x, b, e, s, bm, em, m, NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int tr_split(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = onnx_rank(c, x), nout = (int)c->np->n_output;
	int64_t axis, sizes[16], b[MAXR] = { 0 }, e[MAXR] = { 0 };
	int64_t bm[MAXR], em[MAXR], off = 0, dim, num = 0;
	int n = -1, k, i, err;
	char sfx[16];

	err = onnx_attr_int(c, "axis", 0, &axis);
	if (!err && c->opset < 13)
		err = onnx_attr_ints(c, "split", sizes, 16, &n);
	if (!err && c->opset >= 18)
		err = onnx_attr_int(c, "num_outputs", 0, &num);
	if (err)
		return err;
	if (c->opset >= 13 && onnx_in(c, 1) >= 0) {
		n = onnx_const_ints(c, onnx_in(c, 1), sizes, 16);
		if (n == -ENODATA)
			return onnx_err(c, -EOPNOTSUPP, "split sizes must be constant");
		if (n < 0)
			return n;
	}
	err = norm_axis(c, axis, r, &axis);
	if (err)
		return err;
	if (n < 0) {
		dim = r > axis ? shape_of_val(c, x)->d[axis] : -1;
		if (dim < 0)
			return onnx_err(c, -EOPNOTSUPP,
					"an even split needs the size of axis %lld, which is not known at load time",
					(long long)axis);
		for (k = 0; k < nout; k++) {
			int64_t chunk = num ? (dim + nout - 1) / nout :
					dim / nout;

			if (!num && dim % nout)
				return onnx_err(c, -EINVAL,
						"axis of size %lld does not split evenly %d ways",
						(long long)dim, nout);
			sizes[k] = off + chunk > dim ? dim - off : chunk;
			off += sizes[k];
		}
		n = nout;
		off = 0;
	}
	if (n != nout)
		return onnx_err(c, -EINVAL, "%d sizes for %d outputs", n, nout);
	for (i = 0; i < MAXR; i++)
		bm[i] = em[i] = i < axis;
	for (k = 0; k < nout; k++) {
		if (sizes[k] < 0)
			return onnx_err(c, -EINVAL, "split size %lld",
					(long long)sizes[k]);
		b[axis] = off;
		e[axis] = off + sizes[k];
		off += sizes[k];
		snprintf(sfx, sizeof(sfx), "out%d", k);
		out[k] = strided(c, x, b, e, NULL, bm, em, (int)axis + 1,
				 k ? sfx : NULL);
		if (out[k] < 0)
			return out[k];
	}
	return 0;
}

/* ReduceX; axes an attribute before opset 18 (13 for ReduceSum). */
static int tr_reduce(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = onnx_rank(c, x), in[2] = { x, -1 };
	int64_t keep, noop = 0, ax[MAXR];
	int kind = c->op->arg, n = -1, node, v, err;

	bool input_axes = c->opset >= (strcmp(c->op->type, "ReduceSum") ? 18 : 13);

	err = onnx_attr_int(c, "keepdims", 1, &keep);
	if (!err && input_axes)
		err = onnx_attr_int(c, "noop_with_empty_axes", 0, &noop);
	if (!err && !input_axes)
		err = onnx_attr_ints(c, "axes", ax, MAXR, &n);
	if (err)
		return err;
	if (input_axes && onnx_in(c, 1) >= 0) {
		in[1] = onnx_in(c, 1);
		n = onnx_const_ints(c, in[1], ax, MAXR);
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
	/* kind 1: SumSquare, 2: LogSum, 3: LogSumExp */
	if (kind == 1)
		x = onnx_binary(c, "Multiply", x, x, "square");
	else if (kind == 3)
		x = onnx_unary(c, "Exp", x, "exp");
	if (x < 0)
		return x;
	if (n <= 0) {
		/* all axes */
		if (r < 0 && keep)
			return known_rank(c, c->vin[0], "reducing all axes");
		if (r < 0) {
			int64_t flat = -1, z = 0;

			x = reshape_to(c, x, &flat, 1, false, "flat");
			if (x < 0)
				return x;
			r = 1;
			ax[0] = z;
			n = 1;
		} else {
			iota(ax, r, 0);
			n = r;
		}
	}
	if (in[1] < 0) {
		in[1] = onnx_const_i64(c, ax, n, "axes");
		if (in[1] < 0)
			return in[1];
	}
	in[0] = x;
	node = onnx_node(c, kind ? "ReduceSum" : c->op->ov, 1,
			 kind >= 2 ? "sum" : NULL, 2, in, 1, &v);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "keep_dims", "%s", tf(keep));
	if (err)
		return err;
	if (kind >= 2)
		v = onnx_unary(c, "Log", v, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

/* Pad: pads/value attributes before opset 11, inputs from then on. */
static int tr_pad(struct onnx_ctx *c, int *out)
{
	static const char *const modes[] = { "constant", "reflect", "edge" };
	int64_t pads[2 * MAXR], ax[MAXR], pb[MAXR] = { 0 }, pe[MAXR] = { 0 };
	int in[4] = { c->vin[0], -1, -1, -1 }, n, na = -1, node, i, r, nin = 3;
	char mode[16];
	double value;
	int err;

	err = onnx_attr_str(c, "mode", "constant", mode, sizeof(mode));
	if (err)
		return err;
	for (i = 0; i < 3 && strcmp(mode, modes[i]); i++)
		;
	if (i == 3)
		return onnx_err(c, -EOPNOTSUPP, "mode %s is not supported",
				mode);
	if (c->opset < 11) {
		err = onnx_attr_ints(c, "pads", pads, 2 * MAXR, &n);
		if (!err)
			err = onnx_attr_float(c, "value", 0, &value);
		if (err)
			return err;
		if (n < 0)
			return onnx_err(c, -EINVAL, "attribute pads is missing");
		if (value != 0) {
			in[3] = onnx_scalar(c, c->vin[0], value, "value");
			if (in[3] < 0)
				return in[3];
		}
	} else {
		if (c->nin < 2 || onnx_in(c, 1) < 0)
			return onnx_err(c, -EINVAL, "input pads is required");
		n = onnx_const_ints(c, onnx_in(c, 1), pads, 2 * MAXR);
		if (n == -ENODATA)
			return onnx_err(c, -EOPNOTSUPP, "pads must be constant");
		if (n < 0)
			return n;
		in[3] = onnx_in(c, 2);
		if (onnx_in(c, 3) >= 0) {
			na = onnx_const_ints(c, onnx_in(c, 3), ax, MAXR);
			if (na == -ENODATA)
				return onnx_err(c, -EOPNOTSUPP,
						"axes must be constant");
			if (na < 0)
				return na;
		}
	}
	if (n % 2 || (na >= 0 && n != 2 * na))
		return onnx_err(c, -EINVAL, "%d pads", n);
	r = na < 0 ? n / 2 : known_rank(c, c->vin[0], "Pad with axes");
	if (r < 0)
		return r;
	for (i = 0; i < n / 2; i++) {
		int64_t a = na < 0 ? i : ax[i];

		err = norm_axis(c, a, r, &a);
		if (err)
			return err;
		pb[a] = pads[i];
		pe[a] = pads[n / 2 + i];
	}
	in[1] = onnx_const_i64(c, pb, r, "pads_begin");
	in[2] = onnx_const_i64(c, pe, r, "pads_end");
	if (in[1] < 0 || in[2] < 0)
		return in[1] < 0 ? in[1] : in[2];
	if (in[3] >= 0)
		nin = 4;
	node = onnx_node(c, "Pad", 1, NULL, nin, in, 1, out);
	if (node < 0)
		return node;
	err = onnx_set_attr(c, node, "pad_mode", "%s", mode);
	c->g->vals[out[0]].shape.rank = onnx_rank(c, c->vin[0]);
	for (i = 0; i < onnx_rank(c, c->vin[0]); i++)
		c->g->vals[out[0]].shape.d[i] = -1;
	return err;
}

/* Ops that map to one OpenVINO op with the same inputs: Expand, Tile. */
static int tr_direct(struct onnx_ctx *c, int *out)
{
	int node = onnx_node(c, c->op->ov, c->op->arg, NULL, c->nin, c->vin,
			     1, out);

	if (node < 0)
		return node;
	if (!strcmp(c->op->ov, "Broadcast"))
		node = onnx_set_attr(c, node, "mode", "bidirectional");
	return node < 0 ? node : 0;
}

static int tr_range(struct onnx_ctx *c, int *out)
{
	int node = onnx_node(c, "Range", 4, NULL, 3, c->vin, 1, out);

	if (node < 0)
		return node;
	node = onnx_set_attr(c, node, "output_type", "%s",
			     npr_elem_name(c->g->vals[c->vin[0]].type));
	c->g->vals[out[0]].shape.rank = 1;
	c->g->vals[out[0]].shape.d[0] = -1;
	return node < 0 ? node : 0;
}

/* ---- the table -------------------------------------------------------- */

#define UNARY(t, o)	{ t, tr_unary, 1, 1, 1, o, 0 }
#define BINARY(t, o, a)	{ t, tr_binary, 2, 2, 1, o, a }

static const struct onnx_op ops[] = {
	UNARY("Abs", "Abs"),
	BINARY("Add", "Add", 0),
	BINARY("And", "LogicalAnd", 0),
	{ "AveragePool", tr_pool, 1, 1, 1, NULL, 1 },
	{ "BatchNormalization", tr_batchnorm, 5, 5, 5, NULL, 0 },
	{ "Cast", tr_cast, 1, 1, 1, NULL, 0 },
	UNARY("Ceil", "Ceiling"),
	{ "Clip", tr_clip, 1, 3, 1, NULL, 0 },
	{ "Concat", tr_concat, 1, -1, 1, NULL, 0 },
	{ "Constant", tr_constant, 0, 0, 1, NULL, 0 },
	{ "ConstantOfShape", tr_constant_of_shape, 1, 1, 1, NULL, 0 },
	{ "Conv", tr_conv, 2, 3, 1, NULL, 0 },
	BINARY("Div", "Divide", 2),
	{ "Dropout", tr_identity, 1, 3, 2, NULL, 0 },
	{ "Elu", tr_elu, 1, 1, 1, NULL, 0 },
	BINARY("Equal", "Equal", 1),
	UNARY("Erf", "Erf"),
	UNARY("Exp", "Exp"),
	{ "Expand", tr_direct, 2, 2, 1, "Broadcast", 3 },
	{ "Flatten", tr_flatten, 1, 1, 1, NULL, 0 },
	UNARY("Floor", "Floor"),
	{ "Gather", tr_gather, 2, 2, 1, NULL, 0 },
	{ "Gemm", tr_gemm, 2, 3, 1, NULL, 0 },
	{ "GlobalAveragePool", tr_global_pool, 1, 1, 1, "ReduceMean", 0 },
	{ "GlobalMaxPool", tr_global_pool, 1, 1, 1, "ReduceMax", 0 },
	BINARY("Greater", "Greater", 1),
	BINARY("GreaterOrEqual", "GreaterEqual", 1),
	{ "HardSigmoid", tr_hard_sigmoid, 1, 1, 1, NULL, 0 },
	UNARY("HardSwish", "HSwish"),
	{ "Identity", tr_identity, 1, 1, 1, NULL, 0 },
	{ "InstanceNormalization", tr_instance_norm, 3, 3, 1, NULL, 0 },
	{ "LayerNormalization", tr_layer_norm, 2, 3, 1, NULL, 0 },
	{ "LeakyRelu", tr_leaky_relu, 1, 1, 1, NULL, 0 },
	BINARY("Less", "Less", 1),
	BINARY("LessOrEqual", "LessEqual", 1),
	UNARY("Log", "Log"),
	{ "LogSoftmax", tr_softmax, 1, 1, 1, NULL, 1 },
	{ "MatMul", tr_matmul, 2, 2, 1, NULL, 0 },
	{ "Max", tr_variadic, 1, -1, 1, "Maximum", 0 },
	{ "MaxPool", tr_pool, 1, 1, 1, NULL, 0 },
	{ "Mean", tr_variadic, 1, -1, 1, "Add", 1 },
	{ "Min", tr_variadic, 1, -1, 1, "Minimum", 0 },
	UNARY("Mish", "Mish"),
	{ "Mod", tr_mod, 2, 2, 1, NULL, 0 },
	BINARY("Mul", "Multiply", 0),
	UNARY("Neg", "Negative"),
	UNARY("Not", "LogicalNot"),
	BINARY("Or", "LogicalOr", 0),
	{ "Pad", tr_pad, 1, 4, 1, NULL, 0 },
	BINARY("Pow", "Power", 0),
	{ "PRelu", tr_prelu, 2, 2, 1, NULL, 0 },
	{ "Range", tr_range, 3, 3, 1, NULL, 0 },
	{ "Reciprocal", tr_softsign, 1, 1, 1, NULL, 1 },
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
	UNARY("Relu", "ReLU"),
	{ "Reshape", tr_reshape, 2, 2, 1, NULL, 0 },
	{ "Selu", tr_elu, 1, 1, 1, NULL, 1 },
	{ "Shape", tr_shape, 1, 1, 1, NULL, 0 },
	UNARY("Sigmoid", "Sigmoid"),
	{ "Slice", tr_slice, 1, 5, 1, NULL, 0 },
	{ "Softmax", tr_softmax, 1, 1, 1, NULL, 0 },
	UNARY("Softplus", "SoftPlus"),
	{ "Softsign", tr_softsign, 1, 1, 1, NULL, 0 },
	{ "Split", tr_split, 1, 2, 16, NULL, 0 },
	UNARY("Sqrt", "Sqrt"),
	{ "Squeeze", tr_squeeze, 1, 2, 1, NULL, 0 },
	BINARY("Sub", "Subtract", 0),
	{ "Sum", tr_variadic, 1, -1, 1, "Add", 0 },
	UNARY("Tanh", "Tanh"),
	{ "Tile", tr_direct, 2, 2, 1, "Tile", 1 },
	{ "Transpose", tr_transpose, 1, 1, 1, NULL, 0 },
	{ "Unsqueeze", tr_squeeze, 1, 2, 1, NULL, 1 },
	{ "Where", tr_where, 3, 3, 1, NULL, 0 },
	BINARY("Xor", "LogicalXor", 0),
};

/**
 * onnx_op_find() - the translator of an ONNX op type
 * @type: ONNX op_type.
 *
 * Return: the table entry, or NULL when the op is not supported.
 */
const struct onnx_op *onnx_op_find(const char *type)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strcmp(ops[i].type, type))
			return &ops[i];
	return NULL;
}
