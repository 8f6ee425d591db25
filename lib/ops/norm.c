// SPDX-License-Identifier: MIT
/*
 * Normalization ops: attributes and shape inference.  Kernels: ref/kernels/norm.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "norm.h"

static struct npr_norm_params *norm_alloc(struct npr_node *n, int kind)
{
	struct npr_norm_params *p;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (p)
		p->kind = kind;
	return p;
}

static int eps_parse(struct npr_node *n, const char *key, bool required,
		     float *eps)
{
	double v;
	int err;

	if (required && !npr_attr(n, key))
		return npr_node_err(n, -EINVAL, "attribute %s is required", key);
	err = npr_attr_float(n, key, 0.0, &v);
	if (err)
		return err;
	if (!isfinite(v) || v < 0)
		return npr_node_err(n, -EINVAL, "%s = %g is invalid", key, v);
	*eps = (float)v;
	return 0;
}

static int mvn_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = {
		"inside_sqrt", "outside_sqrt", NULL,
	};
	struct npr_norm_params *p = norm_alloc(n, NPR_NORM_MVN);
	int err, mode = 0;

	(void)g;
	if (!p)
		return -ENOMEM;
	err = eps_parse(n, "eps", true, &p->eps);
	if (!err)
		err = npr_attr_bool(n, "normalize_variance", n->version < 6,
				    &p->normalize_variance);
	if (err)
		return err;
	if (n->version >= 6) {
		if (!npr_attr(n, "eps_mode"))
			return npr_node_err(n, -EINVAL, "attribute eps_mode is required");
		err = npr_attr_enum(n, "eps_mode", modes, 0, &mode);
		if (err)
			return err;
		p->inside_sqrt = mode == 0;
		return 0;
	}
	/* MVN-1: eps is added to the variance */
	p->inside_sqrt = true;
	err = npr_attr_bool(n, "across_channels", false, &p->across_channels);
	if (!err)
		err = npr_attr_ints(n, "reduction_axes", p->red, NPR_MAX_RANK,
				    &p->nred, true);
	return err;
}

/* Mark the axes in @ax (negative counted from the end) as reduced. */
static int mark_axes(const struct npr_node *n, bool *reduced,
		     const int64_t *ax, int cnt, int rank)
{
	int i;

	memset(reduced, 0, sizeof(bool) * NPR_MAX_RANK);
	for (i = 0; i < cnt; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];

		if (a < 0 || a >= rank)
			return npr_node_err(n, -EINVAL,
					    "axis %lld out of range for rank %d",
					    (long long)ax[i], rank);
		if (reduced[a])
			return npr_node_err(n, -EINVAL, "axis %lld repeated",
					    (long long)ax[i]);
		reduced[a] = true;
	}
	return 0;
}

static int f32_same_shape(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data must be f32, got %s",
				    npr_elem_name(x->type));
	if (x->shape.rank < 0)
		return npr_node_err(n, -EINVAL, "dynamic rank is not supported");
	o->shape = x->shape;
	o->type = x->type;
	return 0;
}

static int mvn_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_norm_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0);
	int64_t ax[NPR_MAX_RANK];
	int r = x->shape.rank, cnt, i, err;

	err = f32_same_shape(g, n);
	if (err)
		return err;
	if (n->version >= 6) {
		if (n->nin != 2)
			return npr_node_err(n, -EINVAL, "MVN-6 takes data and axes");
		cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
		if (cnt < 0)
			return cnt;
	} else if (p->nred) {
		cnt = p->nred;
		memcpy(ax, p->red, sizeof(ax[0]) * cnt);
	} else {
		if (r < 2)
			return npr_node_err(n, -EINVAL,
					    "data of rank %d has no channel axis", r);
		cnt = 0;
		for (i = p->across_channels ? 1 : 2; i < r; i++)
			ax[cnt++] = i;
	}
	return mark_axes(n, p->reduced, ax, cnt, r);
}

static int l2_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "add", "max", NULL };
	struct npr_norm_params *p = norm_alloc(n, NPR_NORM_L2);
	int err, mode = 0;

	(void)g;
	if (!p)
		return -ENOMEM;
	err = eps_parse(n, "eps", true, &p->eps);
	if (err)
		return err;
	if (!npr_attr(n, "eps_mode"))
		return npr_node_err(n, -EINVAL, "attribute eps_mode is required");
	err = npr_attr_enum(n, "eps_mode", modes, 0, &mode);
	p->eps_max = mode == 1;
	return err;
}

static int l2_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_norm_params *p = n->params;
	int64_t ax[NPR_MAX_RANK];
	int cnt, err;

	err = f32_same_shape(g, n);
	if (err)
		return err;
	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	return mark_axes(n, p->reduced, ax, cnt, npr_in(g, n, 0)->shape.rank);
}

static int bn_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_norm_params *p = norm_alloc(n, NPR_NORM_BATCH);

	(void)g;
	if (!p)
		return -ENOMEM;
	/* opset1: gamma, beta, data, mean, variance; opset5: data first */
	p->data = n->version >= 5 ? 0 : 2;
	return eps_parse(n, "epsilon", true, &p->eps);
}

static int bn_infer(struct npr_graph *g, struct npr_node *n)
{
	static const char *const names[] = {
		"gamma", "beta", "mean", "variance",
	};
	struct npr_norm_params *p = n->params;
	struct npr_value *x = npr_in(g, n, p->data), *o = npr_out(g, n, 0);
	int i, k = 0;

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data (input %d) must be f32, got %s",
				    p->data, npr_elem_name(x->type));
	if (x->shape.rank < 2)
		return npr_node_err(n, -EINVAL,
				    "data (input %d) has rank %d, at least 2 needed",
				    p->data, x->shape.rank);
	for (i = 0; i < 5; i++) {
		struct npr_value *v = npr_in(g, n, i);

		if (i == p->data)
			continue;
		if (v->type != NPR_ELEM_F32 || v->shape.rank != 1 ||
		    v->shape.d[0] != x->shape.d[1])
			return npr_node_err(n, -EINVAL,
					    "%s (input %d) must be f32 [%lld]",
					    names[k], i,
					    (long long)x->shape.d[1]);
		k++;
	}
	o->shape = x->shape;
	o->type = x->type;
	return 0;
}

const struct npr_op_def npr_ops_norm[] = {
	{ .type = "MVN", .vmin = 0, .vmax = 5, .nin_min = 1, .nin_max = 1,
	  .parse = mvn_parse, .infer = mvn_infer },
	{ .type = "MVN", .vmin = 6, .vmax = 99, .nin_min = 2, .nin_max = 2,
	  .parse = mvn_parse, .infer = mvn_infer },
	{ .type = "NormalizeL2", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = l2_parse, .infer = l2_infer },
	{ .type = "BatchNormInference", .vmin = 0, .vmax = 4, .nin_min = 5,
	  .nin_max = 5, .parse = bn_parse, .infer = bn_infer },
	{ .type = "BatchNormInference", .vmin = 5, .vmax = 99, .nin_min = 5,
	  .nin_max = 5, .parse = bn_parse, .infer = bn_infer },
	{ .type = NULL },
};
