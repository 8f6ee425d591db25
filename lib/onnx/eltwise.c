// SPDX-License-Identifier: MIT
/*
 * ONNX elementwise ops: unary and binary arithmetic, comparisons and logic
 * (numpy broadcasting), activations that OpenVINO spells differently
 * (HardSigmoid, LeakyRelu, Selu, Softsign as small subgraphs), Clip, Cast,
 * Where, Identity and Dropout (inference: the input itself).  Ops
 * without an OpenVINO counterpart become small Select subgraphs
 * (ThresholdedRelu, Shrink).
 */
#include <errno.h>
#include <math.h>

#include "translate.h"

/* One OpenVINO op of version op->arg (1 when 0). */
static int tr_unary(struct onnx_ctx *c, int *out)
{
	int node = npr_onnx_node(c, c->op->ov, c->op->arg ? c->op->arg : 1,
				 NULL,
				 1, c->vin, 1, out);

	if (node < 0)
		return node;
	c->g->vals[out[0]].shape = *onnx_vshape(c, c->vin[0]);
	return 0;
}

static int tr_binary(struct onnx_ctx *c, int *out)
{
	int a = c->vin[0], b = c->vin[1], node, v;
	unsigned int ta = c->g->vals[a].type, tb = c->g->vals[b].type;

	/* before opset 7, broadcasting could follow an "axis" */
	if (c->opset < 7 && npr_onnx_attr_find(c, "axis"))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "legacy broadcasting along an axis is not supported");
	if (c->op->arg == 3 && ta && tb && ta != tb) {
		/* Pow: the exponent may have its own type */
		node = npr_onnx_node(c, "Convert", 1, "exponent", 1, &b, 1, &b);
		if (node < 0)
			return node;
		c->g->vals[b].type = ta;
		c->g->vals[b].shape = *onnx_vshape(c, c->vin[1]);
		node = npr_onnx_set_attr(c, node, "destination_type", "%s",
					 npr_elem_name(ta));
		if (node < 0)
			return node;
	}
	v = npr_onnx_binary(c, c->op->ov, a, b, NULL);
	if (v < 0)
		return v;
	node = c->g->vals[v].producer;
	if (c->op->arg == 1)		/* comparison */
		c->g->vals[v].type = NPR_ELEM_BOOLEAN;
	if (c->op->arg == 2) {		/* Div: integers truncate */
		node = npr_onnx_set_attr(c, node, "m_pythondiv", "false");
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
		b = onnx_need(c, i);
		if (b < 0)
			return b;
		v = npr_onnx_binary(c, c->op->ov, v, b,
				    i == c->nin - 1 && !mean ? NULL : "acc");
		if (v < 0)
			return v;
	}
	if (mean && c->nin > 1) {
		b = npr_onnx_scalar(c, v, (double)c->nin, "count");
		if (b < 0)
			return b;
		v = npr_onnx_binary(c, "Divide", v, b, NULL);
	}
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_mod(struct onnx_ctx *c, int *out)
{
	int64_t fmod;
	int err = npr_onnx_attr_int(c, "fmod", 0, &fmod);

	if (err)
		return err;
	out[0] = npr_onnx_binary(c, fmod ? "Mod" : "FloorMod", onnx_in(c, 0),
				 onnx_in(c, 1), NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int clamp(struct onnx_ctx *c, int x, double lo, double hi,
		 const char *suffix)
{
	int v = npr_onnx_unary(c, "Clamp", x, suffix), err;

	if (v < 0)
		return v;
	err = npr_onnx_set_attr(c, c->g->vals[v].producer, "min", "%.9g", lo);
	if (!err)
		err = npr_onnx_set_attr(c, c->g->vals[v].producer, "max",
					"%.9g",
					hi);
	return err ? err : v;
}

static int tr_clip(struct onnx_ctx *c, int *out)
{
	double lim[2] = { -INFINITY, INFINITY };
	int x = onnx_in(c, 0), i, v, err;
	bool dynamic = false;

	if (c->opset < 11) {
		err = npr_onnx_attr_float(c, "min", -INFINITY, &lim[0]);
		if (!err)
			err = npr_onnx_attr_float(c, "max", INFINITY, &lim[1]);
		if (err)
			return err;
	}
	for (i = 0; c->opset >= 11 && i < 2; i++) {
		if (onnx_in(c, i + 1) < 0)
			continue;
		err = npr_onnx_const_doubles(c, onnx_in(c, i + 1), &lim[i], 1);
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
		v = npr_onnx_binary(c, "Maximum", v, onnx_in(c, 1),
				    onnx_in(c, 2) >= 0 ? "min" : NULL);
	if (v >= 0 && onnx_in(c, 2) >= 0)
		v = npr_onnx_binary(c, "Minimum", v, onnx_in(c, 2), NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_elu(struct onnx_ctx *c, int *out)
{
	double alpha, gamma = 1;
	int v, err;

	/* Selu's defaults are the float values of its constants */
	err = npr_onnx_attr_float(c, "alpha",
				  c->op->arg ? 1.67326319217681884765625 : 1.0,
				  &alpha);
	if (!err && c->op->arg)		/* Selu */
		err = npr_onnx_attr_float(c, "gamma", 1.05070102214813232421875,
					  &gamma);
	if (err)
		return err;
	v = npr_onnx_unary(c, "Elu", onnx_in(c, 0), c->op->arg ? "elu" : NULL);
	if (v < 0)
		return v;
	err = npr_onnx_set_attr(c, c->g->vals[v].producer, "alpha", "%.9g",
				alpha);
	if (err)
		return err;
	if (c->op->arg) {
		int g = npr_onnx_scalar(c, v, gamma, "gamma");

		if (g < 0)
			return g;
		v = npr_onnx_binary(c, "Multiply", v, g, NULL);
	}
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_leaky_relu(struct onnx_ctx *c, int *out)
{
	double alpha;
	int err = npr_onnx_attr_float(c, "alpha", 0.01, &alpha), s, v;
	int in[2];

	if (err)
		return err;
	s = npr_onnx_scalar(c, onnx_in(c, 0), alpha, "slope");
	if (s < 0)
		return s;
	in[0] = onnx_in(c, 0);
	in[1] = s;
	err = npr_onnx_node(c, "PReLU", 1, NULL, 2, in, 1, &v);
	if (err < 0)
		return err;
	c->g->vals[v].shape = *onnx_vshape(c, in[0]);
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
		in[1] = npr_onnx_with_list(c, "Unsqueeze", in[1], &zero, 1,
					   "slope");
		if (in[1] < 0)
			return in[1];
	}
	err = npr_onnx_node(c, "PReLU", 1, NULL, 2, in, 1, out);
	if (err < 0)
		return err;
	c->g->vals[out[0]].shape = *onnx_vshape(c, in[0]);
	return 0;
}

static int tr_hard_sigmoid(struct onnx_ctx *c, int *out)
{
	double alpha, beta;
	int x = onnx_in(c, 0), a, b, v, err;

	err = npr_onnx_attr_float(c, "alpha", 0.2, &alpha);
	if (!err)
		err = npr_onnx_attr_float(c, "beta", 0.5, &beta);
	if (err)
		return err;
	a = npr_onnx_scalar(c, x, alpha, "alpha");
	b = npr_onnx_scalar(c, x, beta, "beta");
	if (a < 0 || b < 0)
		return a < 0 ? a : b;
	v = npr_onnx_binary(c, "Multiply", x, a, "scale");
	if (v >= 0)
		v = npr_onnx_binary(c, "Add", v, b, "shift");
	if (v >= 0)
		v = clamp(c, v, 0, 1, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

/* Softsign x / (1 + |x|) and Reciprocal 1 / x. */
static int tr_softsign(struct onnx_ctx *c, int *out)
{
	int x = onnx_in(c, 0), one = npr_onnx_scalar(c, x, 1, "one"), v;

	if (one < 0)
		return one;
	if (c->op->arg) {	/* Reciprocal */
		out[0] = npr_onnx_binary(c, "Divide", one, x, NULL);
		return out[0] < 0 ? out[0] : 0;
	}
	v = npr_onnx_unary(c, "Abs", x, "abs");
	if (v >= 0)
		v = npr_onnx_binary(c, "Add", v, one, "den");
	if (v >= 0)
		v = npr_onnx_binary(c, "Divide", x, v, NULL);
	out[0] = v;
	return v < 0 ? v : 0;
}

static int tr_where(struct onnx_ctx *c, int *out)
{
	int in[3] = { onnx_in(c, 0), onnx_in(c, 1), onnx_in(c, 2) };
	struct npr_shape s, t;
	int node;

	node = npr_onnx_node(c, "Select", 1, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[in[1]].type;
	if (!npr_shape_broadcast(onnx_vshape(c, in[1]),
				 onnx_vshape(c, in[2]), &s) &&
	    !npr_shape_broadcast(onnx_vshape(c, in[0]), &s, &t))
		c->g->vals[out[0]].shape = t;
	node = npr_onnx_set_attr(c, node, "auto_broadcast", "numpy");
	return node < 0 ? node : 0;
}

/* A boolean tensor of ones shaped like @x (folded at compile). */
static int mask_of_ones(struct onnx_ctx *c, int x, int *out)
{
	struct npr_shape sc = { .rank = 0 };
	uint8_t one = 1;
	int in[2], node;

	in[0] = npr_onnx_const(c, NPR_ELEM_BOOLEAN, &sc, &one, "one");
	in[1] = in[0] < 0 ? in[0] : npr_onnx_shape_of(c, x, "shape");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "Broadcast", 3, "mask", 2, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[*out].shape = *onnx_vshape(c, x);
	return npr_onnx_set_attr(c, node, "mode", "numpy");
}

/* Identity and Dropout (inference: the input itself, a mask of ones). */
static int tr_identity(struct onnx_ctx *c, int *out)
{
	int64_t train = 0;
	int err;

	if (c->nin > 2 && onnx_in(c, 2) >= 0) {
		err = npr_onnx_const_ints(c, onnx_in(c, 2), &train, 1);
		if (err == -ENODATA || (err > 0 && train))
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "training mode is not supported");
		if (err < 0)
			return err;
	}
	out[0] = onnx_in(c, 0);
	if (c->np->n_output < 2 || !c->np->output[1] || !*c->np->output[1])
		return 0;
	/* Dropout's mask: all true, shaped like the input */
	return mask_of_ones(c, out[0], &out[1]);
}

/* Cast, and CastLike when the target type is known at load time. */
static int tr_cast(struct onnx_ctx *c, int *out)
{
	unsigned int t;
	int64_t to;
	int err, node;

	if (c->op->arg) {
		t = c->g->vals[c->vin[1]].type;
		if (!t)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "the target type is not known at load time");
	} else {
		if (c->opset < 6)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "Cast before opset 6 (a type name) is not supported");
		err = npr_onnx_attr_int(c, "to", 0, &to);
		if (err)
			return err;
		t = to >= INT32_MIN && to <= INT32_MAX ?
		    npr_onnx_elem_type((int32_t)to) : 0;
		if (!t)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "cast to type %lld is not supported",
					    (long long)to);
	}
	node = npr_onnx_node(c, "Convert", 1, NULL, 1, &c->vin[0], 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = t;
	c->g->vals[out[0]].shape = *onnx_vshape(c, c->vin[0]);
	node = npr_onnx_set_attr(c, node, "destination_type", "%s",
				 npr_elem_name(t));
	return node < 0 ? node : 0;
}

/* ThresholdedRelu: x > alpha ? x : 0. */
static int tr_thresholded_relu(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], in[3] = { -1, x, -1 }, node;
	double alpha;
	int err = npr_onnx_attr_float(c, "alpha", 1.0, &alpha);

	if (err)
		return err;
	in[2] = npr_onnx_scalar(c, x, 0, "zero");
	node = in[2] < 0 ? in[2] : npr_onnx_scalar(c, x, alpha, "alpha");
	if (node >= 0)
		in[0] = npr_onnx_binary(c, "Greater", x, node, "above");
	if (node < 0 || in[0] < 0)
		return node < 0 ? node : in[0];
	node = npr_onnx_node(c, "Select", 1, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[x].type;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return npr_onnx_set_attr(c, node, "auto_broadcast", "numpy");
}

/* Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0. */
static int tr_shrink(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], in[3], lo, hi, node, k;
	double lambd, bias;
	int err;

	err = npr_onnx_attr_float(c, "lambd", 0.5, &lambd);
	if (!err)
		err = npr_onnx_attr_float(c, "bias", 0, &bias);
	if (err)
		return err;
	lo = npr_onnx_scalar(c, x, -lambd, "lo");
	hi = lo < 0 ? lo : npr_onnx_scalar(c, x, lambd, "hi");
	k = hi < 0 ? hi : npr_onnx_scalar(c, x, bias, "bias");
	in[2] = k < 0 ? k : npr_onnx_scalar(c, x, 0, "zero");
	if (in[2] < 0)
		return in[2];
	/* inner: x > lambd ? x - bias : 0 */
	in[0] = npr_onnx_binary(c, "Greater", x, hi, "above");
	in[1] = in[0] < 0 ? in[0] : npr_onnx_binary(c, "Subtract", x, k,
						    "down");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "Select", 1, "upper", 3, in, 1, &in[2]);
	if (node < 0 || (err = npr_onnx_set_attr(c, node, "auto_broadcast",
					     "numpy")))
		return node < 0 ? node : err;
	c->g->vals[in[2]].type = c->g->vals[x].type;
	in[0] = npr_onnx_binary(c, "Less", x, lo, "below");
	in[1] = in[0] < 0 ? in[0] : npr_onnx_binary(c, "Add", x, k, "up");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "Select", 1, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[x].type;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return npr_onnx_set_attr(c, node, "auto_broadcast", "numpy");
}

/* ---- the table -------------------------------------------------------- */

#define UNARY(t, o)	{ t, tr_unary, 1, 1, 1, o, 0 }
#define BINARY(t, o, a)	{ t, tr_binary, 2, 2, 1, o, a }

const struct onnx_op npr_onnx_ops_eltwise[] = {
	UNARY("Abs", "Abs"),
	BINARY("Add", "Add", 0),
	BINARY("And", "LogicalAnd", 0),
	{ "Cast", tr_cast, 1, 1, 1, NULL, 0 },
	{ "CastLike", tr_cast, 2, 2, 1, NULL, 1 },
	UNARY("Ceil", "Ceiling"),
	{ "Clip", tr_clip, 1, 3, 1, NULL, 0 },
	BINARY("Div", "Divide", 2),
	{ "Dropout", tr_identity, 1, 3, 2, NULL, 0 },
	{ "Elu", tr_elu, 1, 1, 1, NULL, 0 },
	BINARY("Equal", "Equal", 1),
	UNARY("Erf", "Erf"),
	UNARY("Exp", "Exp"),
	UNARY("Floor", "Floor"),
	BINARY("Greater", "Greater", 1),
	BINARY("GreaterOrEqual", "GreaterEqual", 1),
	{ "HardSigmoid", tr_hard_sigmoid, 1, 1, 1, NULL, 0 },
	{ "HardSwish", tr_unary, 1, 1, 1, "HSwish", 4 },
	{ "Identity", tr_identity, 1, 1, 1, NULL, 0 },
	{ "LeakyRelu", tr_leaky_relu, 1, 1, 1, NULL, 0 },
	BINARY("Less", "Less", 1),
	BINARY("LessOrEqual", "LessEqual", 1),
	UNARY("Log", "Log"),
	{ "Max", tr_variadic, 1, -1, 1, "Maximum", 0 },
	{ "Mean", tr_variadic, 1, -1, 1, "Add", 1 },
	{ "Min", tr_variadic, 1, -1, 1, "Minimum", 0 },
	{ "Mish", tr_unary, 1, 1, 1, "Mish", 4 },
	{ "Mod", tr_mod, 2, 2, 1, NULL, 0 },
	BINARY("Mul", "Multiply", 0),
	UNARY("Neg", "Negative"),
	UNARY("Not", "LogicalNot"),
	BINARY("Or", "LogicalOr", 0),
	BINARY("Pow", "Power", 3),
	{ "PRelu", tr_prelu, 2, 2, 1, NULL, 0 },
	{ "Reciprocal", tr_softsign, 1, 1, 1, NULL, 1 },
	UNARY("Relu", "ReLU"),
	{ "Selu", tr_elu, 1, 1, 1, NULL, 1 },
	{ "Shrink", tr_shrink, 1, 1, 1, NULL, 0 },
	UNARY("Sigmoid", "Sigmoid"),
	{ "Softplus", tr_unary, 1, 1, 1, "SoftPlus", 4 },
	{ "Softsign", tr_softsign, 1, 1, 1, NULL, 0 },
	UNARY("Sqrt", "Sqrt"),
	BINARY("Sub", "Subtract", 0),
	{ "Sum", tr_variadic, 1, -1, 1, "Add", 0 },
	UNARY("Tanh", "Tanh"),
	{ "ThresholdedRelu", tr_thresholded_relu, 1, 1, 1, NULL, 0 },
	{ "Where", tr_where, 3, 3, 1, NULL, 0 },
	BINARY("Xor", "LogicalXor", 0),
	{ NULL },
};
