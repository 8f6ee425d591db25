// SPDX-License-Identifier: MIT
/*
 * ONNX translators for math ops without an OpenVINO op of their own,
 * decomposed: Sinh, Cosh, Asinh, Acosh, Atanh (through Exp, Log, Sqrt),
 * Hardmax (OneHot of the first maximum along the axis), Celu (through
 * Elu), MeanVarianceNormalization (MVN), and linear (de)quantization with
 * u8 or i8 values (Round half to even, Clamp, Convert); Sin, Cos, Tan,
 * Asin, Acos, Atan and LRN map onto the OpenVINO ops.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "translate.h"

enum { SINH, COSH, ASINH, ACOSH, ATANH };

static int tr_hyperbolic(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], a, b, v, half, one;

	half = npr_onnx_scalar(c, x, 0.5, "half");
	one = half < 0 ? half : npr_onnx_scalar(c, x, 1, "one");
	if (one < 0)
		return one;
	switch (c->op->arg) {
	case SINH:
	case COSH:
		a = npr_onnx_unary(c, "Exp", x, "exp");
		b = a < 0 ? a : npr_onnx_unary(c, "Negative", x, "neg");
		b = b < 0 ? b : npr_onnx_unary(c, "Exp", b, "exp_neg");
		v = b < 0 ? b : npr_onnx_binary(c, c->op->arg == SINH ?
						"Subtract" : "Add", a, b, "sum");
		out[0] = v < 0 ? v : npr_onnx_binary(c, "Multiply", v, half,
						     NULL);
		break;
	case ASINH:
	case ACOSH:
		a = npr_onnx_binary(c, "Multiply", x, x, "square");
		a = a < 0 ? a : npr_onnx_binary(c, c->op->arg == ASINH ?
						"Add" : "Subtract", a, one, "arg");
		a = a < 0 ? a : npr_onnx_unary(c, "Sqrt", a, "sqrt");
		a = a < 0 ? a : npr_onnx_binary(c, "Add", x, a, "sum");
		out[0] = a < 0 ? a : npr_onnx_unary(c, "Log", a, NULL);
		break;
	default:
		a = npr_onnx_binary(c, "Add", one, x, "num");
		b = a < 0 ? a : npr_onnx_binary(c, "Subtract", one, x, "den");
		v = b < 0 ? b : npr_onnx_binary(c, "Divide", a, b, "ratio");
		v = v < 0 ? v : npr_onnx_unary(c, "Log", v, "log");
		out[0] = v < 0 ? v : npr_onnx_binary(c, "Multiply", v, half,
						     NULL);
		break;
	}
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return 0;
}

/* Hardmax: OneHot(ArgMax(x, axis), dim, 1, 0, axis). */
static int tr_hardmax(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = npr_onnx_known_rank(c, x, "the input");
	int in[4], s, node, err;
	int64_t axis;

	if (r < 0)
		return r;
	err = npr_onnx_attr_int(c, "axis", c->opset < 13 ? 1 : -1, &axis);
	if (err)
		return err;
	if (c->opset < 13 && !(axis == r - 1 || axis == -1))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "Hardmax before opset 13 over axes %lld.. is not supported",
				    (long long)axis);
	in[0] = npr_onnx_arg_index(c, x, axis, false, false);
	in[0] = in[0] < 0 ? in[0] :
		npr_onnx_with_list(c, "Squeeze", in[0], &axis, 1, "index");
	if (in[0] < 0)
		return in[0];
	c->g->vals[in[0]].type = NPR_ELEM_I64;
	s = npr_onnx_shape_of(c, x, "shape");
	in[1] = s < 0 ? s : npr_onnx_pick(c, s, axis, "depth");
	in[2] = in[1] < 0 ? in[1] : npr_onnx_scalar(c, x, 1, "on");
	in[3] = in[2] < 0 ? in[2] : npr_onnx_scalar(c, x, 0, "off");
	if (in[3] < 0)
		return in[3];
	node = npr_onnx_node(c, "OneHot", 1, NULL, 4, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[x].type;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return npr_onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
}

/* Celu: alpha * Elu(x / alpha) with Elu's alpha 1. */
static int tr_celu(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], k, v, err;
	double alpha;

	err = npr_onnx_attr_float(c, "alpha", 1, &alpha);
	if (err)
		return err;
	if (!alpha)
		return npr_onnx_err(c, -EINVAL, "alpha is 0");
	k = npr_onnx_scalar(c, x, 1 / alpha, "inv_alpha");
	v = k < 0 ? k : npr_onnx_binary(c, "Multiply", x, k, "scaled");
	v = v < 0 ? v : npr_onnx_unary(c, "Elu", v, "elu");
	if (v < 0)
		return v;
	err = npr_onnx_set_attr(c, c->g->vals[v].producer, "alpha", "1");
	if (err)
		return err;
	k = npr_onnx_scalar(c, x, alpha, "alpha");
	out[0] = k < 0 ? k : npr_onnx_binary(c, "Multiply", v, k, NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return 0;
}

/* MeanVarianceNormalization: MVN-6, eps 1e-9 outside the square root. */
static int tr_mvn(struct onnx_ctx *c, int *out)
{
	int64_t axes[NPR_MAX_RANK] = { 0, 2, 3 };
	int n, in[2] = { c->vin[0], -1 }, node, err;

	err = npr_onnx_attr_ints(c, "axes", axes, NPR_MAX_RANK, &n);
	if (err)
		return err;
	in[1] = npr_onnx_const_i64(c, axes, n < 0 ? 3 : n, "axes");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "MVN", 6, NULL, 2, in, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "normalize_variance", "true");
	if (!err)
		err = npr_onnx_set_attr(c, node, "eps", "1e-9");
	if (!err)
		err = npr_onnx_set_attr(c, node, "eps_mode", "outside_sqrt");
	c->g->vals[out[0]].shape = *onnx_vshape(c, c->vin[0]);
	return err;
}

/* @v ([C]) shaped to broadcast along @axis of a rank @r tensor. */
static int along_axis(struct onnx_ctx *c, int v, int64_t axis, int r,
		      const char *suffix)
{
	int64_t t[NPR_MAX_RANK], a;
	int i;

	/* a scalar, or a rank unknown at load time: numpy broadcasting */
	if (onnx_vshape(c, v)->rank <= 0)
		return v;
	if (r < 0)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "per-axis parameters need the input rank at load time");
	if (npr_onnx_norm_axis(c, axis, r, &a))
		return npr_onnx_err(c, -EINVAL, "axis %lld", (long long)axis);
	for (i = 0; i < r; i++)
		t[i] = i == a ? -1 : 1;
	return npr_onnx_reshape_to(c, v, t, r, false, suffix);
}

/* DequantizeLinear: (f32(x) - f32(zero_point)) * scale. */
static int tr_dequantize(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], s = c->vin[1], z = c->nin > 2 ? c->vin[2] : -1;
	int r = onnx_vshape(c, x)->rank, v;
	int64_t axis;
	int err;

	err = npr_onnx_attr_int(c, "axis", 1, &axis);
	if (err)
		return err;
	v = npr_onnx_convert(c, x, NPR_ELEM_F32, "f32");
	if (v < 0)
		return v;
	if (z >= 0) {
		z = npr_onnx_convert(c, z, NPR_ELEM_F32, "zero_f32");
		z = z < 0 ? z : along_axis(c, z, axis, r, "zero_point");
		v = z < 0 ? z : npr_onnx_binary(c, "Subtract", v, z, "shifted");
		if (v < 0)
			return v;
	}
	s = along_axis(c, s, axis, r, "scale");
	out[0] = s < 0 ? s : npr_onnx_binary(c, "Multiply", v, s, NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].type = NPR_ELEM_F32;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return 0;
}

/**
 * npr_onnx_saturate() - clamp @v to the range of u8 or i8 @type, convert it
 * @c: the context.
 * @v: the value (a float type).
 * @type: NPR_ELEM_U8 or NPR_ELEM_I8.
 * @suffix: node name suffix.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_saturate(struct onnx_ctx *c, int v, unsigned int type,
		      const char *suffix)
{
	bool i8 = type == NPR_ELEM_I8;
	char nm[32];
	int err;

	snprintf(nm, sizeof(nm), "%s_clamp", suffix);
	v = npr_onnx_unary(c, "Clamp", v, nm);
	if (v < 0)
		return v;
	err = npr_onnx_set_attr(c, c->g->vals[v].producer, "min", "%d",
				i8 ? -128 : 0);
	if (!err)
		err = npr_onnx_set_attr(c, c->g->vals[v].producer, "max", "%d",
					i8 ? 127 : 255);
	if (err)
		return err;
	return npr_onnx_convert(c, v, type, suffix);
}

/**
 * npr_onnx_round_even() - Round-5 half_to_even of @v
 * @c: the context.
 * @v: the value.
 * @suffix: node name suffix.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_round_even(struct onnx_ctx *c, int v, const char *suffix)
{
	int node, out, err;

	node = npr_onnx_node(c, "Round", 5, suffix, 1, &v, 1, &out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "mode", "half_to_even");
	c->g->vals[out].shape = *onnx_vshape(c, v);
	return err ? err : out;
}

/* QuantizeLinear: saturate(round(x / scale) + zero_point). */
static int tr_quantize(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], s = c->vin[1], z = c->nin > 2 ? c->vin[2] : -1;
	int r = onnx_vshape(c, x)->rank, v;
	unsigned int type = NPR_ELEM_U8;
	int64_t axis;
	int err;

	err = npr_onnx_attr_int(c, "axis", 1, &axis);
	if (err)
		return err;
	if (z >= 0)
		type = c->g->vals[z].type;
	if (type != NPR_ELEM_U8 && type != NPR_ELEM_I8)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "only u8 and i8 quantization is supported");
	s = along_axis(c, s, axis, r, "scale");
	v = s < 0 ? s : npr_onnx_binary(c, "Divide", x, s, "scaled");
	v = v < 0 ? v : npr_onnx_round_even(c, v, "rounded");
	if (v < 0)
		return v;
	if (z >= 0) {
		z = npr_onnx_convert(c, z, c->g->vals[x].type, "zero_f");
		z = z < 0 ? z : along_axis(c, z, axis, r, "zero_point");
		v = z < 0 ? z : npr_onnx_binary(c, "Add", v, z, "shifted");
		if (v < 0)
			return v;
	}
	out[0] = npr_onnx_saturate(c, v, type, "q");
	return out[0] < 0 ? out[0] : 0;
}

/*
 * DynamicQuantizeLinear: u8 with scale (max(x, 0) - min(x, 0)) / 255 and
 * zero point saturate(round(-min / scale)).
 */
static int tr_dyn_quantize(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = npr_onnx_known_rank(c, x, "the input");
	int64_t axes[NPR_MAX_RANK];
	int lo, hi, zero, k, s, z, v, i;

	if (r < 0)
		return r;
	for (i = 0; i < r; i++)
		axes[i] = i;
	zero = npr_onnx_scalar(c, x, 0, "zero");
	lo = zero < 0 ? zero :
	     npr_onnx_reduce(c, "ReduceMin", x, axes, r, false, "min");
	lo = lo < 0 ? lo : npr_onnx_binary(c, "Minimum", lo, zero, "min0");
	hi = lo < 0 ? lo :
	     npr_onnx_reduce(c, "ReduceMax", x, axes, r, false, "max");
	hi = hi < 0 ? hi : npr_onnx_binary(c, "Maximum", hi, zero, "max0");
	k = hi < 0 ? hi : npr_onnx_scalar(c, x, 255, "qmax");
	s = k < 0 ? k : npr_onnx_binary(c, "Subtract", hi, lo, "range");
	s = s < 0 ? s : npr_onnx_binary(c, "Divide", s, k, "scale");
	if (s < 0)
		return s;
	c->g->vals[s].shape = (struct npr_shape){ .rank = 0 };
	z = npr_onnx_binary(c, "Divide", lo, s, "min_scaled");
	z = z < 0 ? z : npr_onnx_binary(c, "Subtract", zero, z, "zero_f");
	z = z < 0 ? z : npr_onnx_round_even(c, z, "zero_rounded");
	z = z < 0 ? z : npr_onnx_unary(c, "Clamp", z, "zero_clamp");
	if (z < 0)
		return z;
	if (npr_onnx_set_attr(c, c->g->vals[z].producer, "min", "0") ||
	    npr_onnx_set_attr(c, c->g->vals[z].producer, "max", "255"))
		return -ENOMEM;
	v = npr_onnx_binary(c, "Divide", x, s, "scaled");
	v = v < 0 ? v : npr_onnx_round_even(c, v, "rounded");
	v = v < 0 ? v : npr_onnx_binary(c, "Add", v, z, "shifted");
	v = v < 0 ? v : npr_onnx_saturate(c, v, NPR_ELEM_U8, "q");
	if (v < 0)
		return v;
	out[0] = v;
	out[1] = s;
	out[2] = npr_onnx_convert(c, z, NPR_ELEM_U8, "zero_point");
	return out[2] < 0 ? out[2] : 0;
}

/* Sin, Cos, Tan, Asin, Acos, Atan: the OpenVINO op of the same name. */
static int tr_trig(struct onnx_ctx *c, int *out)
{
	out[0] = npr_onnx_unary(c, c->op->type, c->vin[0], NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].shape = *onnx_vshape(c, c->vin[0]);
	return 0;
}

/* LRN: LRN-1 across channels (axes [1]), the same alpha / size scaling. */
static int tr_lrn(struct onnx_ctx *c, int *out)
{
	int in[2] = { c->vin[0], -1 }, node, err;
	double alpha, beta, bias;
	int64_t size, one = 1;

	err = npr_onnx_attr_float(c, "alpha", 1e-4, &alpha);
	if (!err)
		err = npr_onnx_attr_float(c, "beta", 0.75, &beta);
	if (!err)
		err = npr_onnx_attr_float(c, "bias", 1, &bias);
	if (!err)
		err = npr_onnx_attr_int(c, "size", 0, &size);
	if (err)
		return err;
	if (size < 1)
		return npr_onnx_err(c, -EINVAL, "size %lld", (long long)size);
	in[1] = npr_onnx_const_i64(c, &one, 1, "axes");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "LRN", 1, NULL, 2, in, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "alpha", "%.9g", alpha);
	if (!err)
		err = npr_onnx_set_attr(c, node, "beta", "%.9g", beta);
	if (!err)
		err = npr_onnx_set_attr(c, node, "bias", "%.9g", bias);
	if (!err)
		err = npr_onnx_set_attr(c, node, "size", "%lld",
					(long long)size);
	c->g->vals[out[0]].shape = *onnx_vshape(c, c->vin[0]);
	return err;
}

const struct onnx_op npr_onnx_ops_math[] = {
	{ "Acos", tr_trig, 1, 1, 1, NULL, 0 },
	{ "Asin", tr_trig, 1, 1, 1, NULL, 0 },
	{ "Atan", tr_trig, 1, 1, 1, NULL, 0 },
	{ "Cos", tr_trig, 1, 1, 1, NULL, 0 },
	{ "LRN", tr_lrn, 1, 1, 1, NULL, 0 },
	{ "Sin", tr_trig, 1, 1, 1, NULL, 0 },
	{ "Tan", tr_trig, 1, 1, 1, NULL, 0 },
	{ "Celu", tr_celu, 1, 1, 1, NULL, 0 },
	{ "DequantizeLinear", tr_dequantize, 2, 3, 1, NULL, 0 },
	{ "DynamicQuantizeLinear", tr_dyn_quantize, 1, 1, 3, NULL, 0 },
	{ "MeanVarianceNormalization", tr_mvn, 1, 1, 1, NULL, 0 },
	{ "QuantizeLinear", tr_quantize, 2, 3, 1, NULL, 0 },
	{ "Acosh", tr_hyperbolic, 1, 1, 1, NULL, ACOSH },
	{ "Asinh", tr_hyperbolic, 1, 1, 1, NULL, ASINH },
	{ "Atanh", tr_hyperbolic, 1, 1, 1, NULL, ATANH },
	{ "Cosh", tr_hyperbolic, 1, 1, 1, NULL, COSH },
	{ "Hardmax", tr_hardmax, 1, 1, 1, NULL, 0 },
	{ "Sinh", tr_hyperbolic, 1, 1, 1, NULL, SINH },
	{ NULL },
};
