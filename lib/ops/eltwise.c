// SPDX-License-Identifier: MIT
/*
 * Elementwise ops: attributes and shape inference.  Kernels: ref/eltwise.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops/eltwise.h"

static struct npr_eltwise_params *params_new(struct npr_node *n)
{
	free(n->params);
	n->params = calloc(1, sizeof(struct npr_eltwise_params));
	return n->params;
}

static const struct {
	const char *type;
	int op;
} binops[] = {
	{ "Add", NPR_BIN_ADD }, { "Subtract", NPR_BIN_SUB },
	{ "Multiply", NPR_BIN_MUL }, { "Divide", NPR_BIN_DIV },
	{ "Maximum", NPR_BIN_MAX }, { "Minimum", NPR_BIN_MIN },
	{ "Power", NPR_BIN_POW }, { "SquaredDifference", NPR_BIN_SQDIFF },
	{ "FloorMod", NPR_BIN_FLOORMOD }, { "Mod", NPR_BIN_MOD },
	{ "Equal", NPR_BIN_EQ }, { "NotEqual", NPR_BIN_NE },
	{ "Less", NPR_BIN_LT }, { "LessEqual", NPR_BIN_LE },
	{ "Greater", NPR_BIN_GT }, { "GreaterEqual", NPR_BIN_GE },
	{ "LogicalAnd", NPR_BIN_AND }, { "LogicalOr", NPR_BIN_OR },
	{ "LogicalXor", NPR_BIN_XOR },
};

static const struct {
	const char *type;
	int op;
} unops[] = {
	{ "ReLU", NPR_UN_RELU }, { "Sigmoid", NPR_UN_SIGMOID },
	{ "Exp", NPR_UN_EXP }, { "Negative", NPR_UN_NEG },
	{ "Abs", NPR_UN_ABS }, { "Sqrt", NPR_UN_SQRT },
	{ "Tanh", NPR_UN_TANH }, { "Erf", NPR_UN_ERF },
	{ "Floor", NPR_UN_FLOOR }, { "Ceiling", NPR_UN_CEIL },
	{ "Log", NPR_UN_LOG }, { "Clamp", NPR_UN_CLAMP },
	{ "Elu", NPR_UN_ELU }, { "HSwish", NPR_UN_HSWISH },
	{ "HSigmoid", NPR_UN_HSIGMOID }, { "Mish", NPR_UN_MISH },
	{ "SoftPlus", NPR_UN_SOFTPLUS }, { "Gelu", NPR_UN_GELU_ERF },
	{ "Swish", NPR_UN_SWISH }, { "LogicalNot", NPR_UN_NOT },
};

static int binary_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const bc[] = { "numpy", "none", NULL };
	struct npr_eltwise_params *p = params_new(n);
	size_t i;
	int mode, err;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < sizeof(binops) / sizeof(binops[0]); i++)
		if (!strcmp(n->type, binops[i].type))
			p->op = binops[i].op;
	err = npr_attr_enum(n, "auto_broadcast", bc, 0, &mode);
	if (err)
		return err;
	return npr_attr_bool(n, "m_pythondiv", true, &p->pythondiv);
}

static int binary_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *b = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	char b1[96], b2[96];

	if (a->type != b->type)
		return npr_node_err(n, -EINVAL, "input types differ: %s and %s",
				    npr_elem_name(a->type),
				    npr_elem_name(b->type));
	if (npr_shape_broadcast(&a->shape, &b->shape, &o->shape))
		return npr_node_err(n, -EINVAL,
				    "shapes %s and %s do not broadcast",
				    npr_shape_str(&a->shape, b1, sizeof(b1)),
				    npr_shape_str(&b->shape, b2, sizeof(b2)));
	o->type = p->op >= NPR_BIN_EQ ? NPR_ELEM_BOOLEAN : a->type;
	return 0;
}

static int unary_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = params_new(n);
	size_t i;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < sizeof(unops) / sizeof(unops[0]); i++)
		if (!strcmp(n->type, unops[i].type))
			p->op = unops[i].op;
	if (p->op == NPR_UN_CLAMP) {
		err = npr_attr_float(n, "min", 0, &p->a);
		if (!err)
			err = npr_attr_float(n, "max", 0, &p->b);
		if (!err && (!npr_attr(n, "min") || !npr_attr(n, "max")))
			return npr_node_err(n, -EINVAL, "min and max are required");
		if (!err && p->a > p->b)
			return npr_node_err(n, -EINVAL, "min %g > max %g", p->a, p->b);
	} else if (p->op == NPR_UN_ELU) {
		err = npr_attr_float(n, "alpha", 1.0, &p->a);
	} else if (p->op == NPR_UN_GELU_ERF && n->version >= 7) {
		static const char *const modes[] = { "erf", "tanh", NULL };
		int m;

		err = npr_attr_enum(n, "approximation_mode", modes, 0, &m);
		if (m == 1)
			p->op = NPR_UN_GELU_TANH;
	}
	return err;
}

static int unary_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);

	if (p->op == NPR_UN_SWISH && n->nin > 1 &&
	    npr_shape_numel(&npr_in(g, n, 1)->shape) != 1)
		return npr_node_err(n, -EINVAL, "beta must be a scalar");
	o->type = a->type;
	o->shape = a->shape;
	return 0;
}

static int prelu_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *a = npr_in(g, n, 0), *s = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	struct npr_shape tmp;

	if (a->type != s->type)
		return npr_node_err(n, -EINVAL, "slope type differs from data");
	/* a 1-D slope of size C applies along axis 1 */
	if (!(s->shape.rank == 1 && a->shape.rank >= 2 &&
	      (s->shape.d[0] == a->shape.d[1] || s->shape.d[0] == 1)) &&
	    (npr_shape_broadcast(&a->shape, &s->shape, &tmp) ||
	     !npr_shape_eq(&tmp, &a->shape)))
		return npr_node_err(n, -EINVAL,
				    "slope does not broadcast to the data");
	o->type = a->type;
	o->shape = a->shape;
	return 0;
}

static int convert_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_eltwise_params *p = params_new(n);
	const char *t = npr_attr(n, "destination_type");

	if (!p)
		return -ENOMEM;
	p->dst_type = npr_elem_parse(t);
	if (!p->dst_type || !npr_elem_size(p->dst_type))
		return npr_node_err(n, -EINVAL,
				    "destination_type \"%s\" is not supported",
				    t ? t : "");
	return 0;
}

static int convert_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_eltwise_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);

	if (!npr_elem_size(a->type))
		return npr_node_err(n, -EINVAL, "cannot convert from %s",
				    npr_elem_name(a->type));
	/* f16/bf16 compute in f32; the kernel rounds through the type */
	o->type = (p->dst_type == NPR_ELEM_F16 ||
		   p->dst_type == NPR_ELEM_BF16) ? NPR_ELEM_F32 : p->dst_type;
	o->shape = a->shape;
	return 0;
}

static int fq_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const bc[] = { "numpy", "none", NULL };
	struct npr_eltwise_params *p = params_new(n);
	int mode, err;

	if (!p)
		return -ENOMEM;
	err = npr_attr_enum(n, "auto_broadcast", bc, 0, &mode);
	if (!err)
		err = npr_attr_int(n, "levels", 0, &p->levels);
	if (!err && p->levels < 2)
		return npr_node_err(n, -EINVAL, "levels must be >= 2");
	return err;
}

static int fq_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	struct npr_shape s;
	int i;

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data must be floating point");
	for (i = 1; i < 5; i++) {
		struct npr_value *v = npr_in(g, n, i);

		if (v->type != x->type)
			return npr_node_err(n, -EINVAL, "input %d type differs", i);
		if (npr_shape_broadcast(&x->shape, &v->shape, &s) ||
		    !npr_shape_eq(&s, &x->shape))
			return npr_node_err(n, -EINVAL,
					    "input %d does not broadcast to the data", i);
	}
	o->type = x->type;
	o->shape = x->shape;
	return 0;
}

static int select_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *c = npr_in(g, n, 0), *a = npr_in(g, n, 1);
	struct npr_value *b = npr_in(g, n, 2), *o = npr_out(g, n, 0);
	struct npr_shape s;

	if (c->type != NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL, "condition must be boolean");
	if (a->type != b->type)
		return npr_node_err(n, -EINVAL, "then/else types differ");
	if (npr_shape_broadcast(&a->shape, &b->shape, &s) ||
	    npr_shape_broadcast(&c->shape, &s, &o->shape))
		return npr_node_err(n, -EINVAL, "inputs do not broadcast");
	o->type = a->type;
	return 0;
}

#define BIN(t) { .type = t, .vmin = 0, .vmax = 99, .nin_min = 2, \
		 .nin_max = 2, .parse = binary_parse, .infer = binary_infer, \
		 .eval = npr_ref_binary }
#define UN(t, nmax) { .type = t, .vmin = 0, .vmax = 99, .nin_min = 1, \
		 .nin_max = nmax, .parse = unary_parse, .infer = unary_infer, \
		 .eval = npr_ref_unary }

const struct npr_op_def npr_ops_eltwise[] = {
	BIN("Add"), BIN("Subtract"), BIN("Multiply"), BIN("Divide"),
	BIN("Maximum"), BIN("Minimum"), BIN("Power"),
	BIN("SquaredDifference"), BIN("FloorMod"), BIN("Mod"),
	BIN("Equal"), BIN("NotEqual"), BIN("Less"), BIN("LessEqual"),
	BIN("Greater"), BIN("GreaterEqual"), BIN("LogicalAnd"),
	BIN("LogicalOr"), BIN("LogicalXor"),
	UN("ReLU", 1), UN("Sigmoid", 1), UN("Exp", 1), UN("Negative", 1),
	UN("Abs", 1), UN("Sqrt", 1), UN("Tanh", 1), UN("Erf", 1),
	UN("Floor", 1), UN("Ceiling", 1), UN("Log", 1), UN("Clamp", 1),
	UN("Elu", 1), UN("HSwish", 1), UN("HSigmoid", 1), UN("Mish", 1),
	UN("SoftPlus", 1), UN("Gelu", 1), UN("Swish", 2),
	UN("LogicalNot", 1),
	{ .type = "PReLU", .vmin = 0, .vmax = 99, .nin_min = 2, .nin_max = 2,
	  .infer = prelu_infer, .eval = npr_ref_prelu },
	{ .type = "Convert", .vmin = 0, .vmax = 99, .nin_min = 1,
	  .nin_max = 1, .parse = convert_parse, .infer = convert_infer,
	  .eval = npr_ref_convert },
	{ .type = "FakeQuantize", .vmin = 0, .vmax = 99, .nin_min = 5,
	  .nin_max = 5, .parse = fq_parse, .infer = fq_infer,
	  .eval = npr_ref_fake_quantize },
	{ .type = "Select", .vmin = 0, .vmax = 99, .nin_min = 3,
	  .nin_max = 3, .infer = select_infer, .eval = npr_ref_select },
	{ .type = NULL },
};
