// SPDX-License-Identifier: MIT
/*
 * Elementwise ops: attributes, type checks and shape inference.  The
 * kernels are in ref/kernels/eltwise.c.
 *
 * Semantics follow the OpenVINO opset specifications.  Choices where the
 * specifications leave room:
 *
 *  - auto_broadcast: "numpy" (default) and "none"; "pdpd" is rejected.
 *  - Integer Divide, FloorMod and Mod by zero fail with -EDOM.
 *  - Convert from floating point to integer truncates toward zero and
 *    saturates to the destination range (NaN gives 0), like OpenVINO's
 *    CPU plugin; integer to integer wraps (modulo 2^N) as the spec says.
 *  - A Convert to f16 or bf16 produces an f32 value rounded to the nearest
 *    value of that type (ties to even), since f32 is the compute type.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eltwise.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define OPSET_MAX	99

struct op_name {
	const char *type;
	int op;
};

static const struct op_name binops[] = {
	{ "Add", NPR_BIN_ADD },
	{ "Subtract", NPR_BIN_SUB },
	{ "Multiply", NPR_BIN_MUL },
	{ "Divide", NPR_BIN_DIV },
	{ "Maximum", NPR_BIN_MAX },
	{ "Minimum", NPR_BIN_MIN },
	{ "Power", NPR_BIN_POW },
	{ "SquaredDifference", NPR_BIN_SQDIFF },
	{ "FloorMod", NPR_BIN_FLOORMOD },
	{ "Mod", NPR_BIN_MOD },
	{ "Equal", NPR_BIN_EQ },
	{ "NotEqual", NPR_BIN_NE },
	{ "Less", NPR_BIN_LT },
	{ "LessEqual", NPR_BIN_LE },
	{ "Greater", NPR_BIN_GT },
	{ "GreaterEqual", NPR_BIN_GE },
	{ "LogicalAnd", NPR_BIN_AND },
	{ "LogicalOr", NPR_BIN_OR },
	{ "LogicalXor", NPR_BIN_XOR },
};

static const struct op_name unops[] = {
	{ "ReLU", NPR_UN_RELU }, { "Relu", NPR_UN_RELU },
	{ "Sigmoid", NPR_UN_SIGMOID },
	{ "Exp", NPR_UN_EXP },
	{ "Negative", NPR_UN_NEG },
	{ "Abs", NPR_UN_ABS },
	{ "Sqrt", NPR_UN_SQRT },
	{ "Tanh", NPR_UN_TANH },
	{ "Erf", NPR_UN_ERF },
	{ "Floor", NPR_UN_FLOOR },
	{ "Ceiling", NPR_UN_CEIL },
	{ "Log", NPR_UN_LOG },
	{ "Clamp", NPR_UN_CLAMP },
	{ "Elu", NPR_UN_ELU },
	{ "HSwish", NPR_UN_HSWISH },
	{ "HSigmoid", NPR_UN_HSIGMOID },
	{ "Mish", NPR_UN_MISH },
	{ "SoftPlus", NPR_UN_SOFTPLUS },
	{ "Gelu", NPR_UN_GELU_ERF },
	{ "Swish", NPR_UN_SWISH },
	{ "LogicalNot", NPR_UN_NOT },
};

static int find_op(const struct op_name *tab, size_t count, const char *type)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (!strcmp(tab[i].type, type))
			return tab[i].op;
	return -1;
}

static struct npr_eltwise_params *params_new(struct npr_node *n)
{
	free(n->params);
	n->params = calloc(1, sizeof(struct npr_eltwise_params));
	return n->params;
}

static bool is_float(unsigned int t)
{
	return t == NPR_ELEM_F32 || t == NPR_ELEM_F64 || t == NPR_ELEM_F16 ||
	       t == NPR_ELEM_BF16;
}

static bool is_int(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_I8: case NPR_ELEM_U8: case NPR_ELEM_I16:
	case NPR_ELEM_U16: case NPR_ELEM_I32: case NPR_ELEM_U32:
	case NPR_ELEM_I64: case NPR_ELEM_U64:
		return true;
	}
	return false;
}

static bool is_numeric(unsigned int t)
{
	return is_float(t) || is_int(t);
}

static bool is_subbyte(unsigned int t)
{
	return t == NPR_ELEM_U1 || t == NPR_ELEM_U4 || t == NPR_ELEM_I4;
}

static int parse_bcast(struct npr_node *n, int *mode)
{
	static const char *const modes[] = { "numpy", "none", "pdpd",
					     "explicit", NULL };
	int m, err;

	err = npr_attr_enum(n, "auto_broadcast", modes, NPR_BCAST_NUMPY, &m);
	if (err)
		return err;
	if (m > NPR_BCAST_NONE)
		return npr_node_err(n, -EINVAL,
				    "auto_broadcast=\"%s\" is not supported (numpy or none)",
				    npr_attr(n, "auto_broadcast"));
	*mode = m;
	return 0;
}

/*
 * Broadcast @acc with input @i under @mode into @acc.  "none" needs equal
 * shapes.  Fails with a message naming both shapes.
 */
static int bcast_into(struct npr_graph *g, struct npr_node *n, int mode,
		      struct npr_shape *acc, int i)
{
	const struct npr_shape *s = &npr_in(g, n, i)->shape;
	char b1[128], b2[128];
	struct npr_shape r;

	if (mode == NPR_BCAST_NONE) {
		if (npr_shape_eq(acc, s))
			return 0;
		return npr_node_err(n, -EINVAL,
				    "auto_broadcast=none needs equal shapes, input %d is %s, expected %s",
				    i, npr_shape_str(s, b1, sizeof(b1)),
				    npr_shape_str(acc, b2, sizeof(b2)));
	}
	if (npr_shape_broadcast(acc, s, &r))
		return npr_node_err(n, -EINVAL,
				    "input %d shape %s does not broadcast with %s",
				    i, npr_shape_str(s, b1, sizeof(b1)),
				    npr_shape_str(acc, b2, sizeof(b2)));
	*acc = r;
	return 0;
}

/* Binary ops. */

static int binary_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = params_new(n);
	int op = find_op(binops, ARRAY_SIZE(binops), n->type);

	(void)g;
	if (!p)
		return -ENOMEM;
	if (op < 0)
		return npr_node_err(n, -EINVAL, "not a binary eltwise op");
	p->op = op;
	if (op == NPR_BIN_DIV) {
		int err = npr_attr_bool(n, "m_pythondiv", true, &p->pythondiv);

		if (err)
			return err;
	}
	return parse_bcast(n, &p->bcast);
}

static int binary_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *b = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	struct npr_shape s;
	int err;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (a->type != b->type)
		return npr_node_err(n, -EINVAL,
				    "input types differ: %s and %s",
				    npr_elem_name(a->type),
				    npr_elem_name(b->type));
	if (p->op >= NPR_BIN_AND) {
		if (a->type != NPR_ELEM_BOOLEAN)
			return npr_node_err(n, -EINVAL,
					    "inputs must be boolean, not %s",
					    npr_elem_name(a->type));
	} else if (p->op >= NPR_BIN_EQ) {
		if (!npr_elem_size(a->type))
			return npr_node_err(n, -EINVAL,
					    "element type %s is not supported",
					    npr_elem_name(a->type));
	} else if (!is_numeric(a->type)) {
		return npr_node_err(n, -EINVAL,
				    "inputs must be numeric, not %s",
				    npr_elem_name(a->type));
	}
	s = a->shape;
	err = bcast_into(g, n, p->bcast, &s, 1);
	if (err)
		return err;
	o->shape = s;
	o->type = p->op >= NPR_BIN_EQ ? NPR_ELEM_BOOLEAN : a->type;
	return 0;
}

/* Unary ops. */

static int unary_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const gelu_modes[] = { "erf", "tanh", NULL };
	struct npr_eltwise_params *p = params_new(n);
	int op = find_op(unops, ARRAY_SIZE(unops), n->type);
	int err = 0, m;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (op < 0)
		return npr_node_err(n, -EINVAL, "not a unary eltwise op");
	p->op = op;
	switch (op) {
	case NPR_UN_CLAMP:
		if (!npr_attr(n, "min") || !npr_attr(n, "max"))
			return npr_node_err(n, -EINVAL,
					    "attributes min and max are required");
		err = npr_attr_float(n, "min", 0, &p->lo);
		if (!err)
			err = npr_attr_float(n, "max", 0, &p->hi);
		if (err)
			return err;
		if (isnan(p->lo) || isnan(p->hi) || p->lo > p->hi)
			return npr_node_err(n, -EINVAL,
					    "min %g must not exceed max %g",
					    p->lo, p->hi);
		break;
	case NPR_UN_ELU:
		if (!npr_attr(n, "alpha"))
			return npr_node_err(n, -EINVAL,
					    "attribute alpha is required");
		err = npr_attr_float(n, "alpha", 1.0, &p->alpha);
		if (!err && !isfinite(p->alpha))
			return npr_node_err(n, -EINVAL,
					    "alpha must be finite");
		break;
	case NPR_UN_GELU_ERF:
		/* Gelu-2 has no attribute; Gelu-7 chooses the formula */
		err = npr_attr_enum(n, "approximation_mode", gelu_modes, 0,
				    &m);
		if (!err && m == 1)
			p->op = NPR_UN_GELU_TANH;
		break;
	}
	return err;
}

static bool unary_takes_int(int op)
{
	switch (op) {
	case NPR_UN_RELU: case NPR_UN_SIGMOID: case NPR_UN_EXP:
	case NPR_UN_NEG: case NPR_UN_ABS: case NPR_UN_SQRT:
	case NPR_UN_TANH: case NPR_UN_ERF: case NPR_UN_FLOOR:
	case NPR_UN_CEIL: case NPR_UN_LOG: case NPR_UN_CLAMP:
		return true;
	}
	return false;
}

static int unary_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (p->op == NPR_UN_NOT) {
		if (a->type != NPR_ELEM_BOOLEAN)
			return npr_node_err(n, -EINVAL,
					    "input must be boolean, not %s",
					    npr_elem_name(a->type));
	} else if (unary_takes_int(p->op)) {
		if (!is_numeric(a->type))
			return npr_node_err(n, -EINVAL,
					    "input must be numeric, not %s",
					    npr_elem_name(a->type));
	} else if (!is_float(a->type)) {
		return npr_node_err(n, -EINVAL,
				    "input must be floating point, not %s",
				    npr_elem_name(a->type));
	}
	if (n->nin > 1) {
		struct npr_value *beta = npr_in(g, n, 1);
		char b1[128];

		if (p->op != NPR_UN_SWISH)
			return npr_node_err(n, -EINVAL,
					    "takes one input, got %d", n->nin);
		if (beta->type != a->type)
			return npr_node_err(n, -EINVAL,
					    "beta type %s differs from data type %s",
					    npr_elem_name(beta->type),
					    npr_elem_name(a->type));
		if (beta->shape.rank > 1 ||
		    npr_shape_numel(&beta->shape) != 1)
			return npr_node_err(n, -EINVAL,
					    "beta must be a scalar, got shape %s",
					    npr_shape_str(&beta->shape, b1,
							  sizeof(b1)));
	}
	o->type = a->type;
	o->shape = a->shape;
	return 0;
}

/* PReLU-1: a 1-D slope as long as dim 1 of the data applies per channel;
 * otherwise the slope broadcasts to the data with numpy rules. */

static int prelu_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *a = npr_in(g, n, 0), *s = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	char b1[128], b2[128];
	struct npr_shape r;

	if (a->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "data must be f32 (or f16/bf16, computed in f32), not %s",
				    npr_elem_name(a->type));
	if (s->type != a->type)
		return npr_node_err(n, -EINVAL,
				    "slope type %s differs from data type %s",
				    npr_elem_name(s->type),
				    npr_elem_name(a->type));
	if (s->shape.rank == 1 && a->shape.rank >= 2 &&
	    s->shape.d[0] == a->shape.d[1])
		goto ok;
	if (npr_shape_broadcast(&a->shape, &s->shape, &r) ||
	    !npr_shape_eq(&r, &a->shape))
		return npr_node_err(n, -EINVAL,
				    "slope shape %s does not broadcast to data shape %s",
				    npr_shape_str(&s->shape, b1, sizeof(b1)),
				    npr_shape_str(&a->shape, b2, sizeof(b2)));
ok:
	o->type = a->type;
	o->shape = a->shape;
	return 0;
}

/* Convert-1. */

static int convert_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = params_new(n);
	const char *t = npr_attr(n, "destination_type");

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!t)
		return npr_node_err(n, -EINVAL,
				    "attribute destination_type is required");
	p->dst_type = npr_elem_parse(t);
	if (!p->dst_type || !npr_elem_size(p->dst_type))
		return npr_node_err(n, -EINVAL,
				    "destination_type \"%s\" is not supported",
				    t);
	return 0;
}

static int convert_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (!npr_elem_size(a->type) && !is_subbyte(a->type))
		return npr_node_err(n, -EINVAL, "cannot convert from %s",
				    npr_elem_name(a->type));
	/* f16/bf16 compute in f32; the kernel rounds through the type */
	if (p->dst_type == NPR_ELEM_F16 || p->dst_type == NPR_ELEM_BF16)
		o->type = NPR_ELEM_F32;
	else
		o->type = p->dst_type;
	o->shape = a->shape;
	return 0;
}

/*
 * ConvertLike-1: Convert to the element type of input 1.  A "like" input
 * of f16 or bf16 has been lowered to f32 before inference, so the result
 * is f32 then, not rounded through the half type.
 */
static int convert_like_parse(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	return params_new(n) ? 0 : -ENOMEM;
}

static int convert_like_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = n->params;
	struct npr_value *like = npr_in(g, n, 1);

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (!npr_elem_size(like->type))
		return npr_node_err(n, -EINVAL,
				    "cannot convert to %s (the type of input 1)",
				    npr_elem_name(like->type));
	p->dst_type = like->type;
	return convert_infer(g, n);
}

/* FakeQuantize-1. */

static int fq_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = params_new(n);
	int err;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!npr_attr(n, "levels"))
		return npr_node_err(n, -EINVAL,
				    "attribute levels is required");
	err = npr_attr_int(n, "levels", 0, &p->levels);
	if (err)
		return err;
	if (p->levels < 2 || p->levels > (1LL << 32))
		return npr_node_err(n, -EINVAL,
				    "levels=%lld is out of range (2 .. 2^32)",
				    (long long)p->levels);
	return parse_bcast(n, &p->bcast);
}

static int fq_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	struct npr_shape s = x->shape;
	int i, err;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "data must be f32 (or f16/bf16, computed in f32), not %s",
				    npr_elem_name(x->type));
	for (i = 1; i < 5; i++) {
		struct npr_value *v = npr_in(g, n, i);

		if (v->type != x->type)
			return npr_node_err(n, -EINVAL,
					    "input %d type %s differs from data type %s",
					    i, npr_elem_name(v->type),
					    npr_elem_name(x->type));
		err = bcast_into(g, n, p->bcast, &s, i);
		if (err)
			return err;
	}
	o->type = x->type;
	o->shape = s;
	return 0;
}

/* Select-1. */

static int select_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = params_new(n);

	(void)g;
	if (!p)
		return -ENOMEM;
	return parse_bcast(n, &p->bcast);
}

static int select_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *c = npr_in(g, n, 0), *a = npr_in(g, n, 1);
	struct npr_value *b = npr_in(g, n, 2), *o = npr_out(g, n, 0);
	struct npr_shape s = c->shape;
	int err;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (c->type != NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL,
				    "condition must be boolean, not %s",
				    npr_elem_name(c->type));
	if (a->type != b->type)
		return npr_node_err(n, -EINVAL,
				    "then/else types differ: %s and %s",
				    npr_elem_name(a->type),
				    npr_elem_name(b->type));
	if (!npr_elem_size(a->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(a->type));
	err = bcast_into(g, n, p->bcast, &s, 1);
	if (!err)
		err = bcast_into(g, n, p->bcast, &s, 2);
	if (err)
		return err;
	o->type = a->type;
	o->shape = s;
	return 0;
}

#define BIN(t, v) { .type = t, .vmin = v, .vmax = OPSET_MAX, .nin_min = 2, \
		    .nin_max = 2, .parse = binary_parse, \
		    .infer = binary_infer }
#define UN(t, v, nmax) { .type = t, .vmin = v, .vmax = OPSET_MAX, \
			 .nin_min = 1, .nin_max = nmax, \
			 .parse = unary_parse, .infer = unary_infer }

/*
 * The eltwise group of the op registry (lib/ops/registry.c).  vmin is the opset
 * that introduced the op version; later opsets that keep the same version
 * are accepted up to OPSET_MAX.
 */
const struct npr_op_def npr_ops_eltwise[] = {
	BIN("Add", 1), BIN("Subtract", 1), BIN("Multiply", 1),
	BIN("Divide", 1), BIN("Maximum", 1), BIN("Minimum", 1),
	BIN("Power", 1), BIN("SquaredDifference", 1), BIN("FloorMod", 1),
	BIN("Mod", 1), BIN("Equal", 1), BIN("NotEqual", 1), BIN("Less", 1),
	BIN("LessEqual", 1), BIN("Greater", 1), BIN("GreaterEqual", 1),
	BIN("LogicalAnd", 1), BIN("LogicalOr", 1), BIN("LogicalXor", 1),
	UN("ReLU", 1, 1), UN("Relu", 1, 1), UN("Sigmoid", 1, 1), UN("Exp", 1, 1),
	UN("Negative", 1, 1), UN("Abs", 1, 1), UN("Sqrt", 1, 1),
	UN("Tanh", 1, 1), UN("Erf", 1, 1), UN("Floor", 1, 1),
	UN("Ceiling", 1, 1), UN("Log", 1, 1), UN("Clamp", 1, 1),
	UN("Elu", 1, 1), UN("LogicalNot", 1, 1), UN("Gelu", 2, 1),
	UN("HSwish", 4, 1), UN("Mish", 4, 1), UN("SoftPlus", 4, 1),
	UN("Swish", 4, 2), UN("HSigmoid", 5, 1),
	{ .type = "PReLU", .vmin = 1, .vmax = OPSET_MAX, .nin_min = 2,
	  .nin_max = 2, .infer = prelu_infer },
	{ .type = "Convert", .vmin = 1, .vmax = OPSET_MAX, .nin_min = 1,
	  .nin_max = 1, .parse = convert_parse, .infer = convert_infer },
	{ .type = "ConvertLike", .vmin = 1, .vmax = OPSET_MAX, .nin_min = 2,
	  .nin_max = 2, .parse = convert_like_parse,
	  .infer = convert_like_infer },
	{ .type = "FakeQuantize", .vmin = 1, .vmax = OPSET_MAX, .nin_min = 5,
	  .nin_max = 5, .parse = fq_parse, .infer = fq_infer },
	{ .type = "Select", .vmin = 1, .vmax = OPSET_MAX, .nin_min = 3,
	  .nin_max = 3, .parse = select_parse, .infer = select_infer },
	{ .type = NULL },
};
