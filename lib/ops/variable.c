// SPDX-License-Identifier: MIT
/*
 * Stateful models: ReadValue (3, 6) and Assign (3, 6).
 *
 * A variable, named by variable_id, keeps a tensor from one inference of a
 * request to the next.  ReadValue gives the variable's value, or its
 * initial value (the input, or zeros when ReadValue-6 has none) until the
 * first Assign or after a reset; Assign stores a new value, seen by the
 * next inference.  These definitions parse and type-check; compile
 * (lib/passes/stateful.c) turns each variable into a hidden input and output of the
 * compiled model so that backends run plain graphs, and the request layer
 * carries the values across inferences.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

#define VARIABLE_ID_MAX	256

static int state_parse(struct npr_graph *g, struct npr_node *n)
{
	const char *id = npr_attr(n, "variable_id");

	(void)g;
	if (!id || !*id)
		return npr_node_err(n, -EINVAL, "variable_id is missing");
	if (strlen(id) >= VARIABLE_ID_MAX)
		return npr_node_err(n, -EINVAL, "variable_id is longer than %d bytes",
				    VARIABLE_ID_MAX - 1);
	if (!strcmp(n->type, "Assign") && n->nout > 1)
		return npr_node_err(n, -EINVAL, "%d outputs, at most 1",
				    n->nout);
	if (!strcmp(n->type, "ReadValue") && n->nout != 1)
		return npr_node_err(n, -EINVAL, "%d outputs, expected 1",
				    n->nout);
	return 0;
}

/*
 * variable_shape="1,4": known; "1,4,-1,32": known, with a dynamic
 * dimension; "..." or "?" dims: unknown.
 */
static int declared_shape(const struct npr_node *n, struct npr_shape *s,
			  bool *known)
{
	const char *str = npr_attr(n, "variable_shape");
	int64_t d[NPR_MAX_RANK];
	int cnt, i, err;

	*known = false;
	if (!str || strchr(str, '.') || strchr(str, '?'))
		return 0;
	err = npr_attr_ints(n, "variable_shape", d, NPR_MAX_RANK, &cnt, false);
	if (err)
		return err;
	s->rank = cnt;
	for (i = 0; i < cnt; i++) {
		if (d[i] < -1)
			return npr_node_err(n, -EINVAL, "variable_shape: dimension %d is %lld",
					    i, (long long)d[i]);
		s->d[i] = d[i];
	}
	*known = true;
	return 0;
}

static int readvalue_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *o = npr_out(g, n, 0);
	const char *ts = npr_attr(n, "variable_type");
	unsigned int type = 0;
	struct npr_shape s;
	char b1[128], b2[128];
	bool known;
	int err;

	if (n->version < 6 && n->nin != 1)
		return npr_node_err(n, -EINVAL, "ReadValue-%u needs an initial value input",
				    n->version ? n->version : 3);
	if (ts && strcmp(ts, "dynamic")) {
		type = npr_elem_parse(ts);
		if (!type || !npr_elem_size(type))
			return npr_node_err(n, -EINVAL, "variable_type \"%.32s\" is not an element type",
					    ts);
		/* the compute type of a half-precision variable is f32 */
		if (type == NPR_ELEM_F16 || type == NPR_ELEM_BF16)
			type = NPR_ELEM_F32;
	}
	err = declared_shape(n, &s, &known);
	if (err)
		return err;
	if (n->nin) {
		struct npr_value *x = npr_in(g, n, 0);

		if (type && x->type != type)
			return npr_node_err(n, -EINVAL, "variable_type %s but the initial value is %s",
					    npr_elem_name(type),
					    npr_elem_name(x->type));
		if (known && !npr_shape_eq(&s, &x->shape))
			return npr_node_err(n, -EINVAL, "variable_shape %s but the initial value is %s",
					    npr_shape_str(&s, b1, sizeof(b1)),
					    npr_shape_str(&x->shape, b2, sizeof(b2)));
		o->type = x->type;
		o->shape = x->shape;
		return 0;
	}
	/* a dynamic dimension (-1) starts empty: compile checks it */
	if (!type || !known)
		return npr_node_err(n, -EINVAL, "without an initial value, variable_type and a variable_shape are needed");
	o->type = type;
	o->shape = s;
	return 0;
}

static int assign_infer(struct npr_graph *g, struct npr_node *n)
{
	if (n->nout) {
		npr_out(g, n, 0)->type = npr_in(g, n, 0)->type;
		npr_out(g, n, 0)->shape = npr_in(g, n, 0)->shape;
	}
	return 0;
}

const struct npr_op_def npr_ops_state[] = {
	{ .type = "ReadValue", .vmin = 3, .vmax = 5, .nin_min = 1,
	  .nin_max = 1, .parse = state_parse, .infer = readvalue_infer,
	  .flags = NPR_OP_NO_FOLD },
	{ .type = "ReadValue", .vmin = 6, .vmax = 99, .nin_min = 0,
	  .nin_max = 1, .parse = state_parse, .infer = readvalue_infer,
	  .flags = NPR_OP_NO_FOLD },
	{ .type = "Assign", .vmin = 3, .vmax = 99, .nin_min = 1,
	  .nin_max = 1, .parse = state_parse, .infer = assign_infer,
	  .flags = NPR_OP_NO_FOLD },
	{ .type = NULL },
};
