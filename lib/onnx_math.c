// SPDX-License-Identifier: MIT
/*
 * ONNX translators for math ops without an OpenVINO op of their own,
 * decomposed: Sinh, Cosh, Asinh, Acosh, Atanh (through Exp, Log, Sqrt)
 * and Hardmax (OneHot of the first maximum along the axis).
 */
#include <errno.h>
#include <string.h>

#include "onnx_ops.h"

enum { SINH, COSH, ASINH, ACOSH, ATANH };

static int tr_hyperbolic(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], a, b, v, half, one;

	half = onnx_scalar(c, x, 0.5, "half");
	one = half < 0 ? half : onnx_scalar(c, x, 1, "one");
	if (one < 0)
		return one;
	switch (c->op->arg) {
	case SINH:
	case COSH:
		a = onnx_unary(c, "Exp", x, "exp");
		b = a < 0 ? a : onnx_unary(c, "Negative", x, "neg");
		b = b < 0 ? b : onnx_unary(c, "Exp", b, "exp_neg");
		v = b < 0 ? b : onnx_binary(c, c->op->arg == SINH ?
					    "Subtract" : "Add", a, b, "sum");
		out[0] = v < 0 ? v : onnx_binary(c, "Multiply", v, half, NULL);
		break;
	case ASINH:
	case ACOSH:
		a = onnx_binary(c, "Multiply", x, x, "square");
		a = a < 0 ? a : onnx_binary(c, c->op->arg == ASINH ?
					    "Add" : "Subtract", a, one, "arg");
		a = a < 0 ? a : onnx_unary(c, "Sqrt", a, "sqrt");
		a = a < 0 ? a : onnx_binary(c, "Add", x, a, "sum");
		out[0] = a < 0 ? a : onnx_unary(c, "Log", a, NULL);
		break;
	default:
		a = onnx_binary(c, "Add", one, x, "num");
		b = a < 0 ? a : onnx_binary(c, "Subtract", one, x, "den");
		v = b < 0 ? b : onnx_binary(c, "Divide", a, b, "ratio");
		v = v < 0 ? v : onnx_unary(c, "Log", v, "log");
		out[0] = v < 0 ? v : onnx_binary(c, "Multiply", v, half, NULL);
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
	int x = c->vin[0], r = onnx_known_rank(c, x, "the input");
	int in[4], s, node, err;
	int64_t axis;

	if (r < 0)
		return r;
	err = onnx_attr_int(c, "axis", c->opset < 13 ? 1 : -1, &axis);
	if (err)
		return err;
	if (c->opset < 13 && !(axis == r - 1 || axis == -1))
		return onnx_err(c, -EOPNOTSUPP,
				"Hardmax before opset 13 over axes %lld.. is not supported",
				(long long)axis);
	in[0] = onnx_arg_index(c, x, axis, false, false);
	in[0] = in[0] < 0 ? in[0] :
		onnx_with_list(c, "Squeeze", in[0], &axis, 1, "index");
	if (in[0] < 0)
		return in[0];
	c->g->vals[in[0]].type = NPR_ELEM_I64;
	s = onnx_shape_of(c, x, "shape");
	in[1] = s < 0 ? s : onnx_pick(c, s, axis, "depth");
	in[2] = in[1] < 0 ? in[1] : onnx_scalar(c, x, 1, "on");
	in[3] = in[2] < 0 ? in[2] : onnx_scalar(c, x, 0, "off");
	if (in[3] < 0)
		return in[3];
	node = onnx_node(c, "OneHot", 1, NULL, 4, in, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = c->g->vals[x].type;
	c->g->vals[out[0]].shape = *onnx_vshape(c, x);
	return onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
}

const struct onnx_op onnx_ops_math[] = {
	{ "Acosh", tr_hyperbolic, 1, 1, 1, NULL, ACOSH },
	{ "Asinh", tr_hyperbolic, 1, 1, 1, NULL, ASINH },
	{ "Atanh", tr_hyperbolic, 1, 1, 1, NULL, ATANH },
	{ "Cosh", tr_hyperbolic, 1, 1, 1, NULL, COSH },
	{ "Hardmax", tr_hardmax, 1, 1, 1, NULL, 0 },
	{ "Sinh", tr_hyperbolic, 1, 1, 1, NULL, SINH },
	{ NULL },
};
