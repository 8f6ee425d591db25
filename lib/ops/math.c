// SPDX-License-Identifier: MIT
/*
 * Math ops: attributes, type checks and shape inference for Round-5,
 * Sign-1, ReduceLogicalAnd-1, ReduceLogicalOr-1 and CumSum-3, following
 * the OpenVINO opset specifications.  Kernels: ref/math.c.
 *
 * Choices where the specifications leave room:
 *  - Round and Sign keep integer inputs as they are (Sign maps them to
 *    -1, 0, 1); Sign of NaN is 0.
 *  - ReduceLogical*: repeated axes are refused; reducing an empty axis
 *    gives the identity (true for And, false for Or).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kern.h"
#include "ops/math.h"

static int one_output(const struct npr_node *n)
{
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	return 0;
}

static int math_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "half_to_even",
					     "half_away_from_zero", NULL };
	struct npr_math_params *p = npr_params_new(n, sizeof(*p));
	int err = 0;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!strcmp(n->type, "Round")) {
		if (!npr_attr(n, "mode"))
			return npr_node_err(n, -EINVAL,
					    "missing attribute mode");
		err = npr_attr_enum(n, "mode", modes, 0, &p->op);
	} else if (!strcmp(n->type, "Sign")) {
		p->op = NPR_MATH_SIGN;
	} else if (!strcmp(n->type, "ReduceLogicalAnd") ||
		   !strcmp(n->type, "ReduceLogicalOr")) {
		p->op = strcmp(n->type, "ReduceLogicalAnd") ?
			NPR_MATH_REDUCE_OR : NPR_MATH_REDUCE_AND;
		err = npr_attr_bool(n, "keep_dims", false, &p->keep_dims);
	} else {
		p->op = NPR_MATH_CUMSUM;
		err = npr_attr_bool(n, "exclusive", false, &p->exclusive);
		if (!err)
			err = npr_attr_bool(n, "reverse", false, &p->reverse);
	}
	return err;
}

static int unary_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int err = one_output(n);

	if (err)
		return err;
	if (!npr_is_compute(x->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(x->type));
	o->type = x->type;
	o->shape = x->shape;
	return 0;
}

static int reduce_logical_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_math_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	struct npr_shape s = { .rank = 0 };
	int64_t ax[NPR_MAX_RANK];
	int cnt, i, a, r = x->shape.rank, err;

	err = one_output(n);
	if (err)
		return err;
	if (x->type != NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL, "data is %s, not boolean",
				    npr_elem_name(x->type));
	if (!npr_is_index(npr_in(g, n, 1)->type))
		return npr_node_err(n, -EINVAL, "axes are %s, not i32 or i64",
				    npr_elem_name(npr_in(g, n, 1)->type));
	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	memset(p->reduced, 0, sizeof(p->reduced));
	for (i = 0; i < cnt; i++) {
		err = npr_norm_axis(n, "axis", ax[i], r, &a);
		if (err)
			return err;
		if (p->reduced[a])
			return npr_node_err(n, -EINVAL,
					    "axis %lld is repeated",
					    (long long)ax[i]);
		p->reduced[a] = true;
	}
	for (i = 0; i < r; i++) {
		if (!p->reduced[i])
			s.d[s.rank++] = x->shape.d[i];
		else if (p->keep_dims)
			s.d[s.rank++] = 1;
	}
	o->type = NPR_ELEM_BOOLEAN;
	o->shape = s;
	return 0;
}

static int cumsum_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_math_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0);
	int64_t axis = 0;
	int err;

	err = unary_infer(g, n);
	if (err)
		return err;
	if (x->shape.rank < 1)
		return npr_node_err(n, -EINVAL, "data must have rank >= 1");
	if (n->nin > 1) {
		unsigned int at = npr_in(g, n, 1)->type;
		int cnt;

		if (!npr_is_index(at))
			return npr_node_err(n, -EINVAL,
					    "axis is %s, not i32 or i64",
					    npr_elem_name(at));
		cnt = npr_const_ints(g, n, 1, &axis, 1);
		if (cnt < 0)
			return cnt;
		if (cnt != 1)
			return npr_node_err(n, -EINVAL,
					    "axis (input 1) must have one element");
	}
	return npr_norm_axis(n, "axis", axis, x->shape.rank, &p->axis);
}

#define MATH_OP(t, v0, n0, n1, infer_fn, eval_fn) \
	{ .type = t, .vmin = v0, .vmax = 99, .nin_min = n0, .nin_max = n1, \
	  .parse = math_parse, .infer = infer_fn, .eval = eval_fn }

const struct npr_op_def npr_ops_math[] = {
	MATH_OP("Round", 5, 1, 1, unary_infer, npr_ref_math_unary),
	MATH_OP("Sign", 0, 1, 1, unary_infer, npr_ref_math_unary),
	MATH_OP("ReduceLogicalAnd", 0, 2, 2, reduce_logical_infer,
		npr_ref_reduce_logical),
	MATH_OP("ReduceLogicalOr", 0, 2, 2, reduce_logical_infer,
		npr_ref_reduce_logical),
	MATH_OP("CumSum", 3, 1, 2, cumsum_infer, npr_ref_cumsum),
	{ .type = NULL },
};
