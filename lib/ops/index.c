// SPDX-License-Identifier: MIT
/*
 * Indexing ops: attributes, type checks and shape inference.  The kernels
 * are in ref/kernels/index.c.  Semantics follow the OpenVINO opset specifications
 * of GatherElements-6, GatherND-5/-8, ScatterUpdate-3,
 * ScatterElementsUpdate-3/-12, ScatterNDUpdate-3/-15, OneHot-1 and
 * NonZero-3.  Choices where the specifications leave room:
 *
 *  - Negative indices count from the end of their dimension in every op
 *    (the later versions require it, the earlier ones leave it undefined).
 *  - An index out of range fails the inference with -EINVAL (OneHot: the
 *    position gets off_value).
 *  - Scatter with duplicate indices and no reduction: the last update in
 *    C order wins.
 *  - ScatterElementsUpdate-12 "mean" on integers rounds toward -inf.
 *  - NonZero's output shape depends on the values: its input must be
 *    constant (the node is then folded at compile time).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "elem.h"

static int one_output(const struct npr_node *n)
{
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	return 0;
}

static int check_indices(const struct npr_node *n, const struct npr_value *v,
			 const char *what)
{
	if (!npr_is_index(v->type))
		return npr_node_err(n, -EINVAL, "%s are %s, not i32 or i64",
				    what, npr_elem_name(v->type));
	return 0;
}

static int check_data(const struct npr_node *n, const struct npr_value *v)
{
	if (!npr_elem_size(v->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(v->type));
	return 0;
}

/* The single element of constant input @i. */
static int const_scalar(struct npr_graph *g, const struct npr_node *n, int i,
			const char *what, int64_t *out)
{
	int cnt = npr_const_ints(g, n, i, out, 1);

	if (cnt < 0)
		return cnt;
	if (cnt != 1)
		return npr_node_err(n, -EINVAL,
				    "%s (input %d) must have one element",
				    what, i);
	return 0;
}

static int shape_mismatch(const struct npr_node *n, const char *what,
			  const struct npr_shape *got,
			  const struct npr_shape *want)
{
	char b1[128], b2[128];

	return npr_node_err(n, -EINVAL, "%s shape %s, expected %s", what,
			    npr_shape_str(got, b1, sizeof(b1)),
			    npr_shape_str(want, b2, sizeof(b2)));
}

static int index_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const reds[] = { "none", "sum", "sub", "prod",
					    "min", "max", "mean", NULL };
	struct npr_index_params *p = npr_params_new(n, sizeof(*p));
	int err = 0;

	(void)g;
	if (!p)
		return -ENOMEM;
	p->use_init_val = true;
	if (!strcmp(n->type, "GatherElements") || !strcmp(n->type, "OneHot")) {
		static const char *const modes[] = { "ignore_negative",
						     "normalize", NULL };
		int m = 0;

		err = npr_attr_int(n, "axis", 0, &p->axis);
		if (!err && !npr_attr(n, "axis"))
			err = npr_node_err(n, -EINVAL,
					   "missing attribute axis");
		if (!err && n->version >= 16 && !strcmp(n->type, "OneHot"))
			err = npr_attr_enum(n, "negative_indices_mode", modes,
					    0, &m);
		p->normalize = m == 1;
	} else if (!strcmp(n->type, "GatherND")) {
		err = npr_attr_int(n, "batch_dims", 0, &p->batch_dims);
		if (!err && p->batch_dims < 0)
			err = npr_node_err(n, -EINVAL,
					   "batch_dims %lld is negative",
					   (long long)p->batch_dims);
	} else if (!strcmp(n->type, "ScatterElementsUpdate") &&
		   n->version >= 12) {
		err = npr_attr_enum(n, "reduction", reds, NPR_SCATTER_NONE,
				    &p->reduction);
		if (!err && p->reduction == NPR_SCATTER_SUB)
			err = npr_node_err(n, -EINVAL,
					   "reduction=\"sub\" is not one of ScatterElementsUpdate's");
		if (!err)
			err = npr_attr_bool(n, "use_init_val", true,
					    &p->use_init_val);
	} else if (!strcmp(n->type, "ScatterNDUpdate") && n->version >= 15) {
		err = npr_attr_enum(n, "reduction", reds, NPR_SCATTER_NONE,
				    &p->reduction);
		if (!err && p->reduction == NPR_SCATTER_MEAN)
			err = npr_node_err(n, -EINVAL,
					   "reduction=\"mean\" is not one of ScatterNDUpdate's");
	} else if (!strcmp(n->type, "NonZero")) {
		static const char *const types[] = { "i64", "i32", NULL };
		int t;

		err = npr_attr_enum(n, "output_type", types, 0, &t);
		p->out_type = t ? NPR_ELEM_I32 : NPR_ELEM_I64;
	}
	return err;
}

/* ---- GatherElements ---- */

static int gather_elements_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_index_params *p = n->params;
	struct npr_value *d = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	int i, err;

	err = one_output(n);
	if (!err)
		err = check_data(n, d);
	if (!err)
		err = check_indices(n, ix, "indices");
	if (err)
		return err;
	if (d->shape.rank < 1 || ix->shape.rank != d->shape.rank)
		return npr_node_err(n, -EINVAL,
				    "data rank %d and indices rank %d must be equal and at least 1",
				    d->shape.rank, ix->shape.rank);
	err = npr_norm_axis(n, "axis", p->axis, d->shape.rank, &p->ax);
	if (err)
		return err;
	for (i = 0; i < d->shape.rank; i++)
		if (i != p->ax && ix->shape.d[i] != d->shape.d[i])
			return npr_node_err(n, -EINVAL,
					    "indices dim %d is %lld, data's is %lld (only axis %d may differ)",
					    i, (long long)ix->shape.d[i],
					    (long long)d->shape.d[i], p->ax);
	o->type = d->type;
	o->shape = ix->shape;
	return 0;
}

/* ---- GatherND ---- */

static int gather_nd_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_index_params *p = n->params;
	struct npr_value *d = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	int r = d->shape.rank, q = ix->shape.rank, i, err;
	struct npr_shape s = { .rank = 0 };
	int64_t k, bd = p->batch_dims;

	err = one_output(n);
	if (!err)
		err = check_data(n, d);
	if (!err)
		err = check_indices(n, ix, "indices");
	if (err)
		return err;
	if (r < 1 || q < 1)
		return npr_node_err(n, -EINVAL,
				    "data and indices need rank >= 1 (have %d and %d)",
				    r, q);
	if (bd >= r || bd >= q)
		return npr_node_err(n, -EINVAL,
				    "batch_dims %lld must be less than the data rank %d and the indices rank %d",
				    (long long)bd, r, q);
	k = ix->shape.d[q - 1];
	if (k < 1 || k > r - bd)
		return npr_node_err(n, -EINVAL,
				    "indices.shape[-1] is %lld, must be in [1, %lld]",
				    (long long)k, (long long)(r - bd));
	for (i = 0; i < bd; i++)
		if (d->shape.d[i] != ix->shape.d[i])
			return npr_node_err(n, -EINVAL,
					    "batch dim %d: data has %lld, indices %lld",
					    i, (long long)d->shape.d[i],
					    (long long)ix->shape.d[i]);
	if (n->version < 8 && bd > 0) {
		s.d[s.rank++] = npr_dims_prod(&ix->shape, 0, (int)bd);
	} else {
		for (i = 0; i < bd; i++)
			s.d[s.rank++] = ix->shape.d[i];
	}
	if (s.rank + (q - 1 - bd) + (r - bd - k) > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "output rank exceeds %d",
				    NPR_MAX_RANK);
	for (i = (int)bd; i < q - 1; i++)
		s.d[s.rank++] = ix->shape.d[i];
	for (i = (int)(bd + k); i < r; i++)
		s.d[s.rank++] = d->shape.d[i];
	err = npr_check_numel(n, &s);
	if (err)
		return err;
	p->bd = (int)bd;
	o->type = d->type;
	o->shape = s;
	return 0;
}

/* ---- Scatter ---- */

/* data and updates types agree, output = data. */
static int scatter_common(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *d = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *u = npr_in(g, n, 2), *o = npr_out(g, n, 0);
	const struct npr_index_params *p = n->params;
	int err;

	err = one_output(n);
	if (!err)
		err = check_data(n, d);
	if (!err)
		err = check_indices(n, ix, "indices");
	if (err)
		return err;
	if (u->type != d->type)
		return npr_node_err(n, -EINVAL,
				    "updates are %s, data %s",
				    npr_elem_name(u->type),
				    npr_elem_name(d->type));
	if (p->reduction != NPR_SCATTER_NONE && !npr_is_compute(d->type) &&
	    d->type != NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL,
				    "reduction on element type %s",
				    npr_elem_name(d->type));
	o->type = d->type;
	o->shape = d->shape;
	return 0;
}

static int scatter_update_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_index_params *p = n->params;
	struct npr_value *d = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *u = npr_in(g, n, 2);
	struct npr_shape want = { .rank = 0 };
	int i, err;

	err = scatter_common(g, n);
	if (!err)
		err = const_scalar(g, n, 3, "axis", &p->axis);
	if (!err)
		err = npr_norm_axis(n, "axis", p->axis, d->shape.rank, &p->ax);
	if (err)
		return err;
	if (d->shape.rank - 1 + ix->shape.rank > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "updates rank exceeds %d",
				    NPR_MAX_RANK);
	for (i = 0; i < p->ax; i++)
		want.d[want.rank++] = d->shape.d[i];
	for (i = 0; i < ix->shape.rank; i++)
		want.d[want.rank++] = ix->shape.d[i];
	for (i = p->ax + 1; i < d->shape.rank; i++)
		want.d[want.rank++] = d->shape.d[i];
	if (!npr_shape_eq(&u->shape, &want))
		return shape_mismatch(n, "updates", &u->shape, &want);
	return 0;
}

static int scatter_elements_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_index_params *p = n->params;
	struct npr_value *d = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *u = npr_in(g, n, 2);
	int i, err;

	err = scatter_common(g, n);
	if (!err)
		err = const_scalar(g, n, 3, "axis", &p->axis);
	if (!err)
		err = npr_norm_axis(n, "axis", p->axis, d->shape.rank, &p->ax);
	if (err)
		return err;
	if (!npr_shape_eq(&u->shape, &ix->shape))
		return shape_mismatch(n, "updates", &u->shape, &ix->shape);
	if (ix->shape.rank != d->shape.rank)
		return npr_node_err(n, -EINVAL,
				    "indices rank %d differs from data rank %d",
				    ix->shape.rank, d->shape.rank);
	for (i = 0; i < d->shape.rank; i++)
		if (i != p->ax && ix->shape.d[i] > d->shape.d[i])
			return npr_node_err(n, -EINVAL,
					    "indices dim %d is %lld, larger than data's %lld",
					    i, (long long)ix->shape.d[i],
					    (long long)d->shape.d[i]);
	return 0;
}

static int scatter_nd_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *d = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *u = npr_in(g, n, 2);
	struct npr_shape want = { .rank = 0 };
	int q = ix->shape.rank, i, err;
	int64_t k;

	err = scatter_common(g, n);
	if (err)
		return err;
	if (q < 1)
		return npr_node_err(n, -EINVAL, "indices need rank >= 1");
	k = ix->shape.d[q - 1];
	if (k > d->shape.rank)
		return npr_node_err(n, -EINVAL,
				    "indices.shape[-1] is %lld, more than the data rank %d",
				    (long long)k, d->shape.rank);
	if (q - 1 + d->shape.rank - k > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "updates rank exceeds %d",
				    NPR_MAX_RANK);
	for (i = 0; i < q - 1; i++)
		want.d[want.rank++] = ix->shape.d[i];
	for (i = (int)k; i < d->shape.rank; i++)
		want.d[want.rank++] = d->shape.d[i];
	if (!npr_shape_eq(&u->shape, &want))
		return shape_mismatch(n, "updates", &u->shape, &want);
	return 0;
}

/* ---- OneHot ---- */

static int one_hot_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_index_params *p = n->params;
	struct npr_value *ix = npr_in(g, n, 0), *on = npr_in(g, n, 2);
	struct npr_value *off = npr_in(g, n, 3), *o = npr_out(g, n, 0);
	int r = ix->shape.rank, i, err;
	struct npr_shape s = { .rank = 0 };

	err = one_output(n);
	if (!err)
		err = check_indices(n, ix, "indices");
	if (!err)
		err = const_scalar(g, n, 1, "depth", &p->depth);
	if (err)
		return err;
	if (p->depth < 0)
		return npr_node_err(n, -EINVAL, "depth %lld is negative",
				    (long long)p->depth);
	if (on->type != off->type)
		return npr_node_err(n, -EINVAL,
				    "on_value is %s, off_value %s",
				    npr_elem_name(on->type),
				    npr_elem_name(off->type));
	if (!npr_elem_size(on->type))
		return check_data(n, on);
	if (npr_shape_numel(&on->shape) != 1 ||
	    npr_shape_numel(&off->shape) != 1)
		return npr_node_err(n, -EINVAL,
				    "on_value and off_value must be scalars");
	if (r + 1 > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "output rank exceeds %d",
				    NPR_MAX_RANK);
	err = npr_norm_axis(n, "axis", p->axis, r + 1, &p->ax);
	if (err)
		return err;
	for (i = 0; i < r + 1; i++) {
		if (i < p->ax)
			s.d[i] = ix->shape.d[i];
		else if (i == p->ax)
			s.d[i] = p->depth;
		else
			s.d[i] = ix->shape.d[i - 1];
	}
	s.rank = r + 1;
	err = npr_check_numel(n, &s);
	if (err)
		return err;
	o->type = on->type;
	o->shape = s;
	return 0;
}

/* ---- NonZero ---- */

/* Number of nonzero elements of @t: NonZero's output width. */
static int64_t count_non_zero(const struct npr_tensor *t)
{
	int64_t total = npr_shape_numel(&t->shape), k, c = 0;
	size_t es = npr_elem_size(t->type);

	for (k = 0; k < total; k++)
		c += npr_elem_nonzero(t, k, es);
	return c;
}

static int non_zero_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_index_params *p = n->params;
	struct npr_value *d = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	struct npr_tensor t;
	int err;

	err = one_output(n);
	if (!err)
		err = check_data(n, d);
	if (err)
		return err;
	if (!d->data)
		return npr_node_err(n, -ENODATA,
				    "the output shape depends on the input values: the input must be constant");
	t.type = d->type;
	t.shape = d->shape;
	t.data = (void *)d->data;
	t.nbytes = d->nbytes;
	o->type = p->out_type;
	o->shape.rank = 2;
	o->shape.d[0] = d->shape.rank;
	o->shape.d[1] = count_non_zero(&t);
	return 0;
}

#define IDX_OP(t, v0, v1, n0, n1, infer_fn) \
	{ .type = t, .vmin = v0, .vmax = v1, .nin_min = n0, .nin_max = n1, \
	  .parse = index_parse, .infer = infer_fn }

const struct npr_op_def npr_ops_index[] = {
	IDX_OP("GatherElements", 6, 99, 2, 2, gather_elements_infer),
	IDX_OP("GatherND", 5, 7, 2, 2, gather_nd_infer),
	IDX_OP("GatherND", 8, 99, 2, 2, gather_nd_infer),
	IDX_OP("ScatterUpdate", 3, 99, 4, 4, scatter_update_infer),
	IDX_OP("ScatterElementsUpdate", 3, 11, 4, 4, scatter_elements_infer),
	IDX_OP("ScatterElementsUpdate", 12, 99, 4, 4, scatter_elements_infer),
	IDX_OP("ScatterNDUpdate", 3, 14, 3, 3, scatter_nd_infer),
	IDX_OP("ScatterNDUpdate", 15, 99, 3, 3, scatter_nd_infer),
	IDX_OP("OneHot", 1, 99, 4, 4, one_hot_infer),
	IDX_OP("NonZero", 3, 99, 1, 1, non_zero_infer),
	{ .type = NULL },
};
