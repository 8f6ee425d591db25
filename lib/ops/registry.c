// SPDX-License-Identifier: MIT
/*
 * The op registry: every op definition of every group, looked up by type
 * name and opset version.  The base group (Parameter, Const, Result) lives
 * here; the others in lib/ops/<group>.c.
 */
#include <errno.h>
#include <string.h>

#include "graph/graph.h"

extern const struct npr_op_def npr_ops_nn[];
extern const struct npr_op_def npr_ops_eltwise[];
extern const struct npr_op_def npr_ops_shape[];
extern const struct npr_op_def npr_ops_detect[];
extern const struct npr_op_def npr_ops_norm[];
extern const struct npr_op_def npr_ops_deconv[];
extern const struct npr_op_def npr_ops_ctc[];
extern const struct npr_op_def npr_ops_state[];
extern const struct npr_op_def npr_ops_rnn[];
extern const struct npr_op_def npr_ops_control[];
extern const struct npr_op_def npr_ops_attn[];
extern const struct npr_op_def npr_ops_fused[];
extern const struct npr_op_def npr_ops_index[];
extern const struct npr_op_def npr_ops_math[];
extern const struct npr_op_def npr_ops_layout[];
extern const struct npr_op_def npr_ops_interp[];
extern const struct npr_op_def npr_ops_sort[];
extern const struct npr_op_def npr_ops_misc[];
extern const struct npr_op_def npr_ops_quant[];

static int parameter_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *v = npr_out(g, n, 0);

	if (!v->type || !npr_elem_size(v->type))
		return npr_node_err(n, -EINVAL, "unsupported element type %s",
				    npr_elem_name(v->type));
	if (v->shape.rank < 0)
		return npr_node_err(n, -EINVAL, "dynamic rank is not supported");
	return 0;
}

static int const_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *v = npr_out(g, n, 0);
	int64_t numel = npr_shape_numel(&v->shape);

	if (numel < 0)
		return npr_node_err(n, -EINVAL, "constant without a static shape");
	if (!v->data && numel)
		return npr_node_err(n, -EINVAL, "constant without data");
	if (npr_tensor_bytes(v->type, numel) != v->nbytes)
		return npr_node_err(n, -EINVAL,
				    "constant of %lld elements has %zu bytes",
				    (long long)numel, v->nbytes);
	return 0;
}

static int result_infer(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	(void)n;
	return 0;
}

static const struct npr_op_def npr_ops_base[] = {
	{ .type = "Parameter", .vmin = 0, .vmax = 99, .nin_min = 0,
	  .nin_max = 0, .infer = parameter_infer,
	  .flags = NPR_OP_SOURCE | NPR_OP_NO_FOLD },
	{ .type = "Const", .vmin = 0, .vmax = 99, .nin_min = 0, .nin_max = 0,
	  .infer = const_infer, .flags = NPR_OP_SOURCE | NPR_OP_NO_FOLD },
	{ .type = "Constant", .vmin = 0, .vmax = 99, .nin_min = 0,
	  .nin_max = 0, .infer = const_infer,
	  .flags = NPR_OP_SOURCE | NPR_OP_NO_FOLD },
	{ .type = "Result", .vmin = 0, .vmax = 99, .nin_min = 1, .nin_max = 1,
	  .infer = result_infer, .flags = NPR_OP_SINK | NPR_OP_NO_FOLD },
	{ .type = NULL },
};

static const struct npr_op_def *const groups[] = {
	npr_ops_base, npr_ops_nn, npr_ops_eltwise, npr_ops_shape,
	npr_ops_detect, npr_ops_norm, npr_ops_deconv, npr_ops_ctc,
	npr_ops_state, npr_ops_rnn, npr_ops_control, npr_ops_attn,
	npr_ops_fused, npr_ops_index, npr_ops_math, npr_ops_layout, npr_ops_interp,
	npr_ops_sort, npr_ops_misc, npr_ops_quant,
};

/**
 * npr_op_get() - walk every op definition
 * @i: index, from 0.
 *
 * Return: the @i-th definition of the registry, or NULL past the last.
 */
const struct npr_op_def *npr_op_get(int i)
{
	size_t k;

	for (k = 0; i >= 0 && k < sizeof(groups) / sizeof(groups[0]); k++) {
		const struct npr_op_def *d;

		for (d = groups[k]; d->type; d++)
			if (!i--)
				return d;
	}
	return NULL;
}

/**
 * npr_op_find() - look an op definition up
 * @type: op type as the IR spells it.
 * @version: opset number; 0 (not given) matches the lowest version known.
 *
 * Return: the definition, or NULL when the type or version is unknown.
 */
const struct npr_op_def *npr_op_find(const char *type, unsigned int version)
{
	const struct npr_op_def *best = NULL;
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		const struct npr_op_def *d;

		for (d = groups[i]; d->type; d++) {
			if (strcmp(d->type, type))
				continue;
			if (version && (version < d->vmin || version > d->vmax))
				continue;
			if (!best || d->vmin < best->vmin)
				best = d;
			if (version)
				return d;
		}
	}
	return best;
}
