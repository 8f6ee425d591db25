// SPDX-License-Identifier: MIT
/*
 * ONNX translators for indexing, sorting, layout and a few math ops:
 * GatherElements, GatherND, ScatterElements (and Scatter), ScatterND,
 * ArgMax, ArgMin, TopK, CumSum, DepthToSpace, SpaceToDepth, Round, Sign,
 * IsNaN, IsInf, NonZero, Einsum, OneHot, Trilu, EyeLike, Resize and
 * Upsample.
 *
 * Most map onto one OpenVINO op of the same meaning; ArgMax/ArgMin are a
 * TopK with k = 1, IsNaN/IsInf comparisons, Trilu a Select over a mask
 * built from two Ranges.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "translate.h"

/* An i64 scalar constant. */
static int scalar_i64(struct onnx_ctx *c, int64_t v, const char *suffix)
{
	struct npr_shape s = { .rank = 0 };

	return npr_onnx_const(c, NPR_ELEM_I64, &s, &v, suffix);
}

/**
 * npr_onnx_convert() - Convert-1 of @x to @type
 * @c: the context.
 * @x: the value.
 * @type: enum npr_elem_type.
 * @suffix: node name suffix.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_convert(struct onnx_ctx *c, int x, unsigned int type,
		     const char *suffix)
{
	int node, out, err;

	node = npr_onnx_node(c, "Convert", 1, suffix, 1, &x, 1, &out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "destination_type", "%s",
				npr_elem_name(type));
	if (err)
		return err;
	c->g->vals[out].type = type;
	c->g->vals[out].shape = *onnx_vshape(c, x);
	return out;
}

/* GatherElements-6, GatherND-8: the ONNX inputs and one int attribute. */
static int tr_gather_like(struct onnx_ctx *c, int *out)
{
	const char *key = c->op->arg ? "batch_dims" : "axis";
	int64_t v;
	int node, err;

	err = npr_onnx_attr_int(c, key, 0, &v);
	if (err)
		return err;
	node = npr_onnx_node(c, c->op->ov, c->op->arg ? 8 : 6, NULL, 2, c->vin,
			     1, out);
	if (node < 0)
		return node;
	return npr_onnx_set_attr(c, node, key, "%lld", (long long)v);
}

/* ONNX reduction names to OpenVINO's. */
static int reduction(struct onnx_ctx *c, char *buf, size_t len)
{
	int err = npr_onnx_attr_str(c, "reduction", "none", buf, len);

	if (err)
		return err;
	if (!strcmp(buf, "add"))
		snprintf(buf, len, "sum");
	else if (!strcmp(buf, "mul"))
		snprintf(buf, len, "prod");
	else if (strcmp(buf, "none") && strcmp(buf, "max") &&
		 strcmp(buf, "min"))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "reduction \"%s\" is not supported", buf);
	return 0;
}

/* ScatterElements, Scatter: ScatterElementsUpdate-12 with the axis input. */
static int tr_scatter_elements(struct onnx_ctx *c, int *out)
{
	int in[4] = { c->vin[0], c->vin[1], c->vin[2], -1 }, node, err;
	char red[16];
	int64_t axis;

	err = npr_onnx_attr_int(c, "axis", 0, &axis);
	if (!err)
		err = reduction(c, red, sizeof(red));
	if (err)
		return err;
	in[3] = scalar_i64(c, axis, "axis");
	if (in[3] < 0)
		return in[3];
	node = npr_onnx_node(c, "ScatterElementsUpdate", 12, NULL, 4, in, 1,
			     out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "reduction", "%s", red);
	if (!err)
		err = npr_onnx_set_attr(c, node, "use_init_val", "true");
	return err;
}

/* ScatterND: ScatterNDUpdate-15. */
static int tr_scatter_nd(struct onnx_ctx *c, int *out)
{
	char red[16];
	int node, err;

	err = reduction(c, red, sizeof(red));
	if (err)
		return err;
	node = npr_onnx_node(c, "ScatterNDUpdate", strcmp(red, "none") ? 15 : 3,
			     NULL, 3, c->vin, 1, out);
	if (node < 0)
		return node;
	if (!strcmp(red, "none"))
		return 0;
	return npr_onnx_set_attr(c, node, "reduction", "%s", red);
}

/* x reversed along @axis: Slice-8 from the end with step -1. */
static int reverse(struct onnx_ctx *c, int x, int64_t axis)
{
	int64_t start = -1, stop = INT64_MIN, step = -1;
	int in[5] = { x, -1, -1, -1, -1 }, node, out;

	in[1] = npr_onnx_const_i64(c, &start, 1, "rev_start");
	in[2] = in[1] < 0 ? in[1] : npr_onnx_const_i64(c, &stop, 1, "rev_stop");
	in[3] = in[2] < 0 ? in[2] : npr_onnx_const_i64(c, &step, 1, "rev_step");
	in[4] = in[3] < 0 ? in[3] : npr_onnx_const_i64(c, &axis, 1, "rev_axes");
	if (in[4] < 0)
		return in[4];
	node = npr_onnx_node(c, "Slice", 8, "reversed", 5, in, 1, &out);
	if (node < 0)
		return node;
	c->g->vals[out].shape = *onnx_vshape(c, x);
	return out;
}

/**
 * npr_onnx_arg_index() - the index of the extreme of @x along an axis
 * @c: the context.
 * @x: the data.
 * @axis: the axis, negative counting from the end.
 * @min: the minimum; false: the maximum.
 * @last: the last such index; false: the first.
 *
 * TopK-11 with k = 1 (unsorted, stable, i64 indices); for @last, over
 * @x reversed along @axis (a Slice with step -1), and the index then
 * taken from the end (dim - 1 - index).  The axis stays, at size 1.
 *
 * Return: the i64 indices' value index, or -errno.
 */
int npr_onnx_arg_index(struct onnx_ctx *c, int x, int64_t axis, bool min,
		       bool last)
{
	int in[2] = { x, -1 }, o[2], node, err;

	if (last) {
		in[0] = reverse(c, x, axis);
		if (in[0] < 0)
			return in[0];
	}
	in[1] = scalar_i64(c, 1, "k");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "TopK", 11, "topk", 2, in, 2, o);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
	if (!err)
		err = npr_onnx_set_attr(c, node, "mode", "%s",
					min ? "min" : "max");
	if (!err)
		err = npr_onnx_set_attr(c, node, "sort", "none");
	if (!err)
		err = npr_onnx_set_attr(c, node, "stable", "true");
	if (!err)
		err = npr_onnx_set_attr(c, node, "index_element_type", "i64");
	if (err)
		return err;
	c->g->vals[o[1]].type = NPR_ELEM_I64;
	if (last) {
		int s = npr_onnx_shape_of(c, x, "shape"), d, one;

		d = s < 0 ? s : npr_onnx_pick(c, s, axis, "dim");
		one = d < 0 ? d : scalar_i64(c, 1, "one");
		d = one < 0 ? one : npr_onnx_binary(c, "Subtract", d, one,
						    "dim_1");
		o[1] = d < 0 ? d : npr_onnx_binary(c, "Subtract", d, o[1],
						   "last_index");
		if (o[1] < 0)
			return o[1];
		c->g->vals[o[1]].type = NPR_ELEM_I64;
	}
	return o[1];
}

/* ArgMax, ArgMin: the indices of TopK-11 with k = 1. */
static int tr_arg(struct onnx_ctx *c, int *out)
{
	int64_t axis, keep, last;
	int err, v;

	err = npr_onnx_attr_int(c, "axis", 0, &axis);
	if (!err)
		err = npr_onnx_attr_int(c, "keepdims", 1, &keep);
	if (!err)
		err = npr_onnx_attr_int(c, "select_last_index", 0, &last);
	if (err)
		return err;
	v = npr_onnx_arg_index(c, c->vin[0], axis, c->op->arg, last);
	if (v < 0)
		return v;
	if (keep) {
		out[0] = v;
		return 0;
	}
	out[0] = npr_onnx_with_list(c, "Squeeze", v, &axis, 1, NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].type = NPR_ELEM_I64;
	return 0;
}

/* TopK: TopK-11 (k from the attribute before opset 10). */
static int tr_topk(struct onnx_ctx *c, int *out)
{
	int in[2] = { c->vin[0], c->nin > 1 ? c->vin[1] : -1 }, node, err;
	int64_t axis, largest, sorted, k;

	err = npr_onnx_attr_int(c, "axis", -1, &axis);
	if (!err)
		err = npr_onnx_attr_int(c, "largest", 1, &largest);
	if (!err)
		err = npr_onnx_attr_int(c, "sorted", 1, &sorted);
	if (!err)
		err = npr_onnx_attr_int(c, "k", -1, &k);
	if (err)
		return err;
	if (in[1] < 0) {
		if (k < 0)
			return npr_onnx_err(c, -EINVAL, "k is missing");
		in[1] = scalar_i64(c, k, "k");
		if (in[1] < 0)
			return in[1];
	}
	node = npr_onnx_node(c, "TopK", 11, NULL, 2, in, 2, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
	if (!err)
		err = npr_onnx_set_attr(c, node, "mode", "%s",
					largest ? "max" : "min");
	if (!err)
		err = npr_onnx_set_attr(c, node, "sort", "%s",
					sorted ? "value" : "none");
	if (!err)
		err = npr_onnx_set_attr(c, node, "stable", "true");
	if (!err)
		err = npr_onnx_set_attr(c, node, "index_element_type", "i64");
	c->g->vals[out[1]].type = NPR_ELEM_I64;
	return err;
}

/* CumSum: CumSum-3. */
static int tr_cumsum(struct onnx_ctx *c, int *out)
{
	int64_t excl, rev;
	int node, err;

	err = npr_onnx_attr_int(c, "exclusive", 0, &excl);
	if (!err)
		err = npr_onnx_attr_int(c, "reverse", 0, &rev);
	if (err)
		return err;
	node = npr_onnx_node(c, "CumSum", 3, NULL, 2, c->vin, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "exclusive", "%s",
				excl ? "true" : "false");
	if (!err)
		err = npr_onnx_set_attr(c, node, "reverse", "%s",
					rev ? "true" : "false");
	return err;
}

/* DepthToSpace (arg 0), SpaceToDepth (arg 1). */
static int tr_depth_space(struct onnx_ctx *c, int *out)
{
	char mode[8] = "DCR";
	int64_t bs;
	int node, err;

	err = npr_onnx_attr_int(c, "blocksize", 0, &bs);
	if (!err && !c->op->arg)
		err = npr_onnx_attr_str(c, "mode", "DCR", mode, sizeof(mode));
	if (err)
		return err;
	node = npr_onnx_node(c, c->op->ov, 1, NULL, 1, c->vin, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "block_size", "%lld", (long long)bs);
	if (!err)
		err = npr_onnx_set_attr(c, node, "mode", "%s",
					strcmp(mode, "CRD") ? "blocks_first" :
					"depth_first");
	return err;
}

/* Round: Round-5 half_to_even; Sign: Sign-1. */
static int tr_simple(struct onnx_ctx *c, int *out)
{
	int node = npr_onnx_node(c, c->op->ov, c->op->arg, NULL, 1, c->vin, 1,
				 out);

	if (node < 0)
		return node;
	if (!strcmp(c->op->ov, "Round"))
		return npr_onnx_set_attr(c, node, "mode", "half_to_even");
	return 0;
}

/* IsNaN: x != x.  IsInf: compare with the infinities asked for. */
static int tr_isnan_inf(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], a, b;
	int64_t pos = 1, neg = 1;
	int err = 0;

	if (!c->op->arg) {
		out[0] = npr_onnx_binary(c, "NotEqual", x, x, NULL);
		goto done;
	}
	err = npr_onnx_attr_int(c, "detect_positive", 1, &pos);
	if (!err)
		err = npr_onnx_attr_int(c, "detect_negative", 1, &neg);
	if (err)
		return err;
	if (pos && neg) {
		a = npr_onnx_unary(c, "Abs", x, "abs");
		b = a < 0 ? a : npr_onnx_scalar(c, x, INFINITY, "inf");
	} else {
		a = x;
		b = npr_onnx_scalar(c, x,
				    pos ? INFINITY : neg ? -INFINITY : NAN,
				    "inf");
	}
	if (b < 0)
		return b;
	out[0] = npr_onnx_binary(c, "Equal", a, b, NULL);
done:
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].type = NPR_ELEM_BOOLEAN;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return 0;
}

/* NonZero: NonZero-3 with i64 indices. */
static int tr_nonzero(struct onnx_ctx *c, int *out)
{
	int node = npr_onnx_node(c, "NonZero", 3, NULL, 1, c->vin, 1, out);

	if (node < 0)
		return node;
	c->g->vals[out[0]].type = NPR_ELEM_I64;
	return npr_onnx_set_attr(c, node, "output_type", "i64");
}

/* Einsum: Einsum-7, the equation without blanks. */
static int tr_einsum(struct onnx_ctx *c, int *out)
{
	char eq[256], *s, *d;
	int node, err;

	err = npr_onnx_attr_str(c, "equation", "", eq, sizeof(eq));
	if (err)
		return err;
	for (s = d = eq; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = 0;
	node = npr_onnx_node(c, "Einsum", 7, NULL, c->nin, c->vin, 1, out);
	if (node < 0)
		return node;
	return npr_onnx_set_attr(c, node, "equation", "%s", eq);
}

/* OneHot: OneHot-1 with depth, on and off as scalars. */
static int tr_onehot(struct onnx_ctx *c, int *out)
{
	int in[4] = { c->vin[0], -1, -1, -1 }, ix, node, err;
	int64_t axis, zero = 0, one = 1, zax = 0;
	struct npr_shape sc = { .rank = 0 };

	err = npr_onnx_attr_int(c, "axis", -1, &axis);
	if (err)
		return err;
	if (c->g->vals[in[0]].type != NPR_ELEM_I64 &&
	    c->g->vals[in[0]].type != NPR_ELEM_I32) {
		in[0] = npr_onnx_convert(c, in[0], NPR_ELEM_I64, "indices_i64");
		if (in[0] < 0)
			return in[0];
	}
	in[1] = npr_onnx_reshape_to(c, c->vin[1], NULL, 0, false, "depth");
	if (in[1] < 0)
		return in[1];
	if (c->g->vals[c->vin[1]].type != NPR_ELEM_I64) {
		int cv = npr_onnx_node(c, "Convert", 1, "depth_i64", 1, &in[1],
				       1, &in[1]);

		if (cv < 0)
			return cv;
		err = npr_onnx_set_attr(c, cv, "destination_type", "i64");
		if (err)
			return err;
		c->g->vals[in[1]].type = NPR_ELEM_I64;
	}
	ix = npr_onnx_const(c, NPR_ELEM_I64, &sc, &one, "on_index");
	if (ix < 0)
		return ix;
	for (int k = 0; k < 2; k++) {
		int gi[3] = { c->vin[2], k ? ix : -1, -1 };

		if (!k) {
			gi[1] = npr_onnx_const(c, NPR_ELEM_I64, &sc, &zero,
					       "off_index");
			if (gi[1] < 0)
				return gi[1];
		}
		gi[2] = npr_onnx_const(c, NPR_ELEM_I64, &sc, &zax,
				       k ? "on_axis" : "off_axis");
		if (gi[2] < 0)
			return gi[2];
		node = npr_onnx_node(c, "Gather", 8, k ? "on" : "off", 3, gi, 1,
				     &in[3 - k]);
		if (node < 0)
			return node;
		err = npr_onnx_set_attr(c, node, "batch_dims", "0");
		if (err)
			return err;
	}
	/* ONNX counts negative indices from the end: OneHot-16's mode */
	node = npr_onnx_node(c, "OneHot", 16, NULL, 4, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[c->vin[2]].type;
	err = npr_onnx_set_attr(c, node, "negative_indices_mode", "normalize");
	if (err)
		return err;
	return npr_onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
}

/**
 * npr_onnx_pick() - one element of a 1-D value, such as a shape's dim
 * @c: the context.
 * @s: the 1-D value (e.g. a ShapeOf output).
 * @i: the index, negative counting from the end.
 * @suffix: node name suffix of the Gather and of its two constants.
 *
 * Gather-8 of @s on axis 0 with @i as an i64 scalar index: a scalar.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_pick(struct onnx_ctx *c, int s, int64_t i, const char *suffix)
{
	char nm[32];
	int in[3] = { s, -1, -1 }, node, out, err;

	snprintf(nm, sizeof(nm), "%s_index", suffix);
	in[1] = scalar_i64(c, i, nm);
	snprintf(nm, sizeof(nm), "%s_axis", suffix);
	in[2] = in[1] < 0 ? in[1] : scalar_i64(c, 0, nm);
	if (in[2] < 0)
		return in[2];
	node = npr_onnx_node(c, "Gather", 8, suffix, 3, in, 1, &out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "batch_dims", "0");
	return err ? err : out;
}

/* Range(0, @n, 1) in i64. */
static int range(struct onnx_ctx *c, int n, const char *suffix)
{
	char nm[32];
	int in[3] = { -1, n, -1 }, node, out, err;

	snprintf(nm, sizeof(nm), "%s_start", suffix);
	in[0] = scalar_i64(c, 0, nm);
	snprintf(nm, sizeof(nm), "%s_step", suffix);
	in[2] = in[0] < 0 ? in[0] : scalar_i64(c, 1, nm);
	if (in[2] < 0)
		return in[2];
	node = npr_onnx_node(c, "Range", 4, suffix, 3, in, 1, &out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "output_type", "i64");
	c->g->vals[out].type = NPR_ELEM_I64;
	return err ? err : out;
}

/*
 * Trilu: keep x where col - row >= k (upper) or <= k (lower), else 0;
 * rows and columns are the last two dims.
 */
static int tr_trilu(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], s, h, w, r, cl, d, k, m, in[3], node, err;
	int64_t upper, one = 1;

	err = npr_onnx_attr_int(c, "upper", 1, &upper);
	if (err)
		return err;
	s = npr_onnx_shape_of(c, x, "shape");
	h = s < 0 ? s : npr_onnx_pick(c, s, -2, "rows");
	w = h < 0 ? h : npr_onnx_pick(c, s, -1, "cols");
	r = w < 0 ? w : range(c, h, "row_range");
	cl = r < 0 ? r : range(c, w, "col_range");
	if (cl < 0)
		return cl;
	r = npr_onnx_with_list(c, "Unsqueeze", r, &one, 1, "row_col");
	if (r < 0)
		return r;
	c->g->vals[r].type = NPR_ELEM_I64;
	d = npr_onnx_binary(c, "Subtract", cl, r, "diag");
	if (d < 0)
		return d;
	if (c->nin > 1 && c->vin[1] >= 0) {
		k = npr_onnx_reshape_to(c, c->vin[1], NULL, 0, false, "k");
	} else {
		k = scalar_i64(c, 0, "k");
	}
	if (k < 0)
		return k;
	m = npr_onnx_binary(c, upper ? "GreaterEqual" : "LessEqual", d, k,
			    "mask");
	if (m < 0)
		return m;
	c->g->vals[m].type = NPR_ELEM_BOOLEAN;
	in[0] = m;
	in[1] = x;
	if (c->g->vals[x].type == NPR_ELEM_BOOLEAN) {
		struct npr_shape s0 = { .rank = 0 };
		uint8_t no = 0;

		in[2] = npr_onnx_const(c, NPR_ELEM_BOOLEAN, &s0, &no, "zero");
	} else {
		in[2] = npr_onnx_scalar(c, x, 0, "zero");
	}
	if (in[2] < 0)
		return in[2];
	node = npr_onnx_node(c, "Select", 1, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[x].type;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return npr_onnx_set_attr(c, node, "auto_broadcast", "numpy");
}

/* EyeLike: Convert(col - row == k) to dtype (the input's by default). */
static int tr_eyelike(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], s, h, w, r, cl, d, k;
	unsigned int type = c->g->vals[x].type;
	int64_t kk, one = 1, dt;
	int err;

	err = npr_onnx_attr_int(c, "k", 0, &kk);
	if (!err)
		err = npr_onnx_attr_int(c, "dtype", 0, &dt);
	if (err)
		return err;
	if (dt) {
		type = npr_onnx_elem_type((int32_t)dt);
		if (!type)
			return npr_onnx_err(c, -EOPNOTSUPP, "dtype %lld",
					    (long long)dt);
	}
	s = npr_onnx_shape_of(c, x, "shape");
	h = s < 0 ? s : npr_onnx_pick(c, s, 0, "rows");
	w = h < 0 ? h : npr_onnx_pick(c, s, 1, "cols");
	r = w < 0 ? w : range(c, h, "row_range");
	cl = r < 0 ? r : range(c, w, "col_range");
	if (cl < 0)
		return cl;
	r = npr_onnx_with_list(c, "Unsqueeze", r, &one, 1, "row_col");
	if (r < 0)
		return r;
	c->g->vals[r].type = NPR_ELEM_I64;
	d = npr_onnx_binary(c, "Subtract", cl, r, "diag");
	k = d < 0 ? d : scalar_i64(c, kk, "k");
	d = k < 0 ? k : npr_onnx_binary(c, "Equal", d, k, "mask");
	if (d < 0)
		return d;
	c->g->vals[d].type = NPR_ELEM_BOOLEAN;
	out[0] = npr_onnx_convert(c, d, type, NULL);
	return out[0] < 0 ? out[0] : 0;
}

/*
 * Resize (arg 0) and Upsample (arg 1): Interpolate-11 over every axis,
 * from sizes when given, else from scales.  Before opset 11, and for
 * Upsample, coordinates are asymmetric and nearest rounds down.
 */
static int tr_resize(struct onnx_ctx *c, int *out)
{
	bool legacy = c->op->arg || c->opset < 11;
	int in[2] = { c->vin[0], -1 }, sc = -1, sz = -1, node, err;
	char mode[24], coord[32] = "asymmetric", nearest[24] = "floor";
	int64_t excl = 0, anti = 0;
	double cubic = -0.75, tmp[NPR_MAX_RANK];

	err = npr_onnx_attr_str(c, "mode", "nearest", mode, sizeof(mode));
	if (!err && !legacy)
		err = npr_onnx_attr_str(c, "coordinate_transformation_mode",
					"half_pixel", coord, sizeof(coord));
	if (!err && !legacy)
		err = npr_onnx_attr_str(c, "nearest_mode", "round_prefer_floor",
					nearest, sizeof(nearest));
	if (!err)
		err = npr_onnx_attr_float(c, "cubic_coeff_a", -0.75, &cubic);
	if (!err)
		err = npr_onnx_attr_int(c, "exclude_outside", 0, &excl);
	if (!err)
		err = npr_onnx_attr_int(c, "antialias", 0, &anti);
	if (err)
		return err;
	if (excl)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "exclude_outside=1 is not supported");
	if (!strcmp(coord, "tf_crop_and_resize"))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "coordinate_transformation_mode tf_crop_and_resize is not supported");
	if (npr_onnx_attr_find(c, "axes") ||
	    npr_onnx_attr_find(c, "keep_aspect_ratio_policy"))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "axes and keep_aspect_ratio_policy are not supported");
	if (!strcmp(mode, "linear"))
		snprintf(mode, sizeof(mode), "linear_onnx");
	else if (strcmp(mode, "nearest") && strcmp(mode, "cubic"))
		return npr_onnx_err(c, -EINVAL, "mode \"%s\"", mode);

	if (legacy) {
		const Onnx__AttributeProto *a = npr_onnx_attr_find(c, "scales");

		if (c->nin > 1 && c->vin[1] >= 0) {
			sc = c->vin[1];
		} else if (a && a->n_floats) {
			struct npr_shape s = { .rank = 1,
					       .d = { (int64_t)a->n_floats } };

			sc = npr_onnx_const(c, NPR_ELEM_F32, &s, a->floats,
					    "scales");
			if (sc < 0)
				return sc;
		} else {
			return npr_onnx_err(c, -EINVAL, "scales are missing");
		}
	} else {
		if (c->nin > 2)
			sc = c->vin[2];
		if (c->nin > 3)
			sz = c->vin[3];
		/* an empty constant stands for a missing input */
		if (sc >= 0 && !npr_onnx_const_doubles(c, sc, tmp,
						       NPR_MAX_RANK))
			sc = -1;
		if (sz >= 0 && !npr_onnx_const_doubles(c, sz, tmp,
						       NPR_MAX_RANK))
			sz = -1;
		if ((sc < 0) == (sz < 0))
			return npr_onnx_err(c, -EINVAL,
					    "exactly one of scales and sizes must be given");
	}
	in[1] = sz >= 0 ? sz : sc;
	if (sz < 0 && c->g->vals[sc].type != NPR_ELEM_F32) {
		in[1] = npr_onnx_convert(c, sc, NPR_ELEM_F32, "scales_f32");
		if (in[1] < 0)
			return in[1];
	}
	node = npr_onnx_node(c, "Interpolate", 11, NULL, 2, in, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "mode", "%s", mode);
	if (!err)
		err = npr_onnx_set_attr(c, node, "shape_calculation_mode", "%s",
					sz >= 0 ? "sizes" : "scales");
	if (!err)
		err = npr_onnx_set_attr(c, node,
					"coordinate_transformation_mode",
					"%s", coord);
	if (!err)
		err = npr_onnx_set_attr(c, node, "nearest_mode", "%s", nearest);
	if (!err)
		err = npr_onnx_set_attr(c, node, "cube_coeff", "%.9g", cubic);
	if (!err)
		err = npr_onnx_set_attr(c, node, "antialias", "%s",
					anti ? "true" : "false");
	return err;
}

const struct onnx_op npr_onnx_ops_index[] = {
	{ "Resize", tr_resize, 1, 4, 1, NULL, 0 },
	{ "Upsample", tr_resize, 1, 2, 1, NULL, 1 },
	{ "EyeLike", tr_eyelike, 1, 1, 1, NULL, 0 },
	{ "ArgMax", tr_arg, 1, 1, 1, NULL, 0 },
	{ "ArgMin", tr_arg, 1, 1, 1, NULL, 1 },
	{ "CumSum", tr_cumsum, 2, 2, 1, NULL, 0 },
	{ "DepthToSpace", tr_depth_space, 1, 1, 1, "DepthToSpace", 0 },
	{ "Einsum", tr_einsum, 1, -1, 1, NULL, 0 },
	{ "GatherElements", tr_gather_like, 2, 2, 1, "GatherElements", 0 },
	{ "GatherND", tr_gather_like, 2, 2, 1, "GatherND", 1 },
	{ "IsInf", tr_isnan_inf, 1, 1, 1, NULL, 1 },
	{ "IsNaN", tr_isnan_inf, 1, 1, 1, NULL, 0 },
	{ "NonZero", tr_nonzero, 1, 1, 1, NULL, 0 },
	{ "OneHot", tr_onehot, 3, 3, 1, NULL, 0 },
	{ "Round", tr_simple, 1, 1, 1, "Round", 5 },
	{ "Scatter", tr_scatter_elements, 3, 3, 1, NULL, 0 },
	{ "ScatterElements", tr_scatter_elements, 3, 3, 1, NULL, 0 },
	{ "ScatterND", tr_scatter_nd, 3, 3, 1, NULL, 0 },
	{ "Sign", tr_simple, 1, 1, 1, "Sign", 1 },
	{ "SpaceToDepth", tr_depth_space, 1, 1, 1, "SpaceToDepth", 1 },
	{ "TopK", tr_topk, 1, 2, 2, NULL, 0 },
	{ "Trilu", tr_trilu, 1, 2, 1, NULL, 0 },
	{ NULL },
};
