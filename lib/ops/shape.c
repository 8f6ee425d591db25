// SPDX-License-Identifier: MIT
/*
 * Data-movement ops: attributes and shape inference.  Kernels: ref/shape.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops/shape.h"

static struct npr_shape_params *params_new(struct npr_node *n)
{
	free(n->params);
	n->params = calloc(1, sizeof(struct npr_shape_params));
	return n->params;
}

static int no_params(struct npr_graph *g, struct npr_node *n)
{
	return params_new(n) ? 0 : -ENOMEM;
}

static int norm_axis(const struct npr_node *n, int64_t axis, int rank,
		     int64_t *out)
{
	if (axis < -rank || axis >= rank)
		return npr_node_err(n, -EINVAL, "axis %lld out of range for rank %d",
				    (long long)axis, rank);
	*out = axis < 0 ? axis + rank : axis;
	return 0;
}

/* ---- Concat ---- */

static int concat_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = params_new(n);

	if (!p)
		return -ENOMEM;
	if (!npr_attr(n, "axis"))
		return npr_node_err(n, -EINVAL, "attribute axis is missing");
	return npr_attr_int(n, "axis", 0, &p->axis);
}

static int concat_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t axis = 0, sum = 0;
	int i, d, err;

	err = norm_axis(n, p->axis, a->shape.rank, &axis);
	if (err)
		return err;
	for (i = 0; i < n->nin; i++) {
		struct npr_value *v = npr_in(g, n, i);

		if (v->type != a->type || v->shape.rank != a->shape.rank)
			return npr_node_err(n, -EINVAL,
					    "input %d has another type or rank", i);
		for (d = 0; d < a->shape.rank; d++)
			if (d != axis && v->shape.d[d] != a->shape.d[d])
				return npr_node_err(n, -EINVAL,
						    "input %d: dim %d is %lld, not %lld",
						    i, d, (long long)v->shape.d[d],
						    (long long)a->shape.d[d]);
		sum += v->shape.d[axis];
	}
	o->type = a->type;
	o->shape = a->shape;
	o->shape.d[axis] = sum;
	p->axis = axis;
	return 0;
}

/* ---- Reshape / Squeeze / Unsqueeze ---- */

static int reshape_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = params_new(n);

	if (!p)
		return -ENOMEM;
	return npr_attr_bool(n, "special_zero", false, &p->special_zero);
}

static int reshape_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t t[NPR_MAX_RANK], numel = npr_shape_numel(&a->shape), known = 1;
	int cnt, i, neg = -1;

	cnt = npr_const_ints(g, n, 1, t, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	o->shape.rank = cnt;
	for (i = 0; i < cnt; i++) {
		int64_t v = t[i];

		if (v == 0 && p->special_zero) {
			if (i >= a->shape.rank)
				return npr_node_err(n, -EINVAL,
						    "special zero at %d past the input rank", i);
			v = a->shape.d[i];
		}
		if (v == -1) {
			if (neg >= 0)
				return npr_node_err(n, -EINVAL, "more than one -1");
			neg = i;
			continue;
		}
		if (v < 0)
			return npr_node_err(n, -EINVAL, "target dim %d is %lld",
					    i, (long long)v);
		o->shape.d[i] = v;
		known *= v;
	}
	if (neg >= 0) {
		if (!known || numel % known)
			return npr_node_err(n, -EINVAL,
					    "cannot infer -1: %lld elements into blocks of %lld",
					    (long long)numel, (long long)known);
		o->shape.d[neg] = numel / known;
		known *= o->shape.d[neg];
	}
	if (known != numel)
		return npr_node_err(n, -EINVAL,
				    "target shape has %lld elements, input %lld",
				    (long long)known, (long long)numel);
	o->type = a->type;
	return 0;
}

static int squeeze_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	bool drop[NPR_MAX_RANK] = { false };
	int64_t ax[NPR_MAX_RANK];
	int cnt, i, r = 0;

	if (n->nin > 1) {
		cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
		if (cnt < 0)
			return cnt;
		for (i = 0; i < cnt; i++) {
			int64_t x = 0;
			int err = norm_axis(n, ax[i], a->shape.rank, &x);

			if (err)
				return err;
			if (a->shape.d[x] != 1)
				return npr_node_err(n, -EINVAL,
						    "cannot squeeze dim %lld of size %lld",
						    (long long)x, (long long)a->shape.d[x]);
			drop[x] = true;
		}
	} else {
		for (i = 0; i < a->shape.rank; i++)
			drop[i] = a->shape.d[i] == 1;
	}
	for (i = 0; i < a->shape.rank; i++)
		if (!drop[i])
			o->shape.d[r++] = a->shape.d[i];
	o->shape.rank = r;
	o->type = a->type;
	return 0;
}

static int unsqueeze_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	bool ins[NPR_MAX_RANK] = { false };
	int64_t ax[NPR_MAX_RANK];
	int cnt, i, r, k = 0;

	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	r = a->shape.rank + cnt;
	if (r > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "rank %d too large", r);
	for (i = 0; i < cnt; i++) {
		int64_t x = 0;
		int err = norm_axis(n, ax[i], r, &x);

		if (err)
			return err;
		if (ins[x])
			return npr_node_err(n, -EINVAL, "axis %lld repeated",
					    (long long)x);
		ins[x] = true;
	}
	for (i = 0; i < r; i++)
		o->shape.d[i] = ins[i] ? 1 : a->shape.d[k++];
	o->shape.rank = r;
	o->type = a->type;
	return 0;
}

/* ---- Transpose ---- */

static int transpose_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t ord[NPR_MAX_RANK];
	bool seen[NPR_MAX_RANK] = { false };
	int cnt, i, r = a->shape.rank;

	cnt = npr_const_ints(g, n, 1, ord, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	if (!cnt) {
		for (i = 0; i < r; i++)
			ord[i] = r - 1 - i;
		cnt = r;
	}
	if (cnt != r)
		return npr_node_err(n, -EINVAL, "order has %d entries for rank %d",
				    cnt, r);
	for (i = 0; i < r; i++) {
		int64_t x = 0;
		int err = norm_axis(n, ord[i], r, &x);

		if (err)
			return err;
		if (seen[x])
			return npr_node_err(n, -EINVAL, "order repeats axis %lld",
					    (long long)x);
		seen[x] = true;
		p->perm[i] = (int)x;
		o->shape.d[i] = a->shape.d[x];
	}
	o->shape.rank = r;
	o->type = a->type;
	return 0;
}

/* ---- ShapeOf ---- */

static int shape_of_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = params_new(n);
	const char *t = npr_attr(n, "output_type");

	if (!p)
		return -ENOMEM;
	p->out_type = NPR_ELEM_I64;
	if (t && n->version >= 3) {
		p->out_type = npr_elem_parse(t);
		if (p->out_type != NPR_ELEM_I64 && p->out_type != NPR_ELEM_I32)
			return npr_node_err(n, -EINVAL,
					    "output_type \"%s\" must be i32 or i64", t);
	}
	return 0;
}

static int shape_of_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	size_t bytes;
	void *buf;

	o->type = p->out_type;
	o->shape.rank = 1;
	o->shape.d[0] = a->shape.rank;
	if (!npr_shape_static(&a->shape))
		return 0;
	/* the shape is known now: the output is a constant */
	bytes = npr_tensor_bytes(o->type, a->shape.rank);
	buf = malloc(bytes ? bytes : 1);
	if (!buf)
		return -ENOMEM;
	npr_convert(buf, o->type, a->shape.d, NPR_ELEM_I64, a->shape.rank);
	free(o->owned);
	o->owned = buf;
	o->data = buf;
	o->nbytes = bytes;
	return 0;
}

/* ---- StridedSlice ---- */

static const char *const mask_names[5] = {
	"begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask",
	"ellipsis_mask",
};

static int ss_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = params_new(n);
	int i, err;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < 5; i++) {
		err = npr_attr_ints(n, mask_names[i], p->mask[i], NPR_MAX_RANK,
				    &p->nmask[i], i >= 2);
		if (err)
			return err;
	}
	return 0;
}

static bool mask_at(const struct npr_shape_params *p, int m, int i)
{
	return i < p->nmask[m] && p->mask[m][i];
}

static int ss_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t b[NPR_MAX_RANK], e[NPR_MAX_RANK], s[NPR_MAX_RANK];
	int nb, ne, ns = 0, i, ax = 0, r = a->shape.rank, consume = 0;
	int orank = 0;

	nb = npr_const_ints(g, n, 1, b, NPR_MAX_RANK);
	if (nb < 0)
		return nb;
	ne = npr_const_ints(g, n, 2, e, NPR_MAX_RANK);
	if (ne < 0)
		return ne;
	if (n->nin > 3) {
		ns = npr_const_ints(g, n, 3, s, NPR_MAX_RANK);
		if (ns < 0)
			return ns;
	}
	if (ne != nb || (n->nin > 3 && ns != nb))
		return npr_node_err(n, -EINVAL, "begin, end and stride lengths differ");
	for (i = 0; i < nb; i++) {
		if (n->nin <= 3)
			s[i] = 1;
		if (!s[i])
			return npr_node_err(n, -EINVAL, "stride %d is zero", i);
		if (!mask_at(p, 2, i) && !mask_at(p, 4, i))
			consume++;
	}
	for (i = 0; i < nb; i++) {
		if (mask_at(p, 4, i)) {
			int fill = r - consume, k;

			if (fill < 0)
				return npr_node_err(n, -EINVAL, "too many slices for rank %d", r);
			for (k = 0; k < fill; k++, ax++) {
				p->ss_start[ax] = 0;
				p->ss_step[ax] = 1;
				p->ss_len[ax] = a->shape.d[ax];
				o->shape.d[orank++] = a->shape.d[ax];
			}
			continue;
		}
		if (mask_at(p, 2, i)) {
			if (orank == NPR_MAX_RANK)
				return npr_node_err(n, -EINVAL, "output rank too large");
			o->shape.d[orank++] = 1;
			continue;
		}
		if (ax >= r)
			return npr_node_err(n, -EINVAL, "slice %d past the input rank %d", i, r);
		{
			int64_t D = a->shape.d[ax], st = s[i], lo, hi, len;

			if (mask_at(p, 3, i)) {
				lo = b[i] < 0 ? b[i] + D : b[i];
				if (lo < 0 || lo >= D)
					return npr_node_err(n, -EINVAL,
							    "shrink index %lld out of range %lld",
							    (long long)b[i], (long long)D);
				p->ss_start[ax] = lo;
				p->ss_step[ax] = 1;
				p->ss_len[ax] = 1;
				ax++;
				continue;
			}
			if (st > 0) {
				lo = mask_at(p, 0, i) ? 0 : b[i];
				hi = mask_at(p, 1, i) ? D : e[i];
				if (lo < 0)
					lo += D;
				if (hi < 0)
					hi += D;
				lo = lo < 0 ? 0 : lo > D ? D : lo;
				hi = hi < 0 ? 0 : hi > D ? D : hi;
				len = hi > lo ? (hi - lo + st - 1) / st : 0;
			} else {
				lo = mask_at(p, 0, i) ? D - 1 : b[i];
				hi = mask_at(p, 1, i) ? -1 : e[i];
				if (!mask_at(p, 0, i) && lo < 0)
					lo += D;
				if (!mask_at(p, 1, i) && hi < 0)
					hi += D;
				lo = lo < -1 ? -1 : lo > D - 1 ? D - 1 : lo;
				hi = hi < -1 ? -1 : hi > D - 1 ? D - 1 : hi;
				len = lo > hi ? (lo - hi + (-st) - 1) / (-st) : 0;
			}
			p->ss_start[ax] = lo;
			p->ss_step[ax] = st;
			p->ss_len[ax] = len;
			if (orank == NPR_MAX_RANK)
				return npr_node_err(n, -EINVAL, "output rank too large");
			o->shape.d[orank++] = len;
			ax++;
		}
	}
	for (; ax < r; ax++) {
		p->ss_start[ax] = 0;
		p->ss_step[ax] = 1;
		p->ss_len[ax] = a->shape.d[ax];
		if (orank == NPR_MAX_RANK)
			return npr_node_err(n, -EINVAL, "output rank too large");
		o->shape.d[orank++] = a->shape.d[ax];
	}
	o->shape.rank = orank;
	o->type = a->type;
	return 0;
}

/* ---- Gather ---- */

static int gather_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = params_new(n);

	if (!p)
		return -ENOMEM;
	return npr_attr_int(n, "batch_dims", 0, &p->batch_dims);
}

static int gather_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *ix = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	int64_t axis, bd = p->batch_dims;
	int r = 0, i, cnt, err;

	cnt = npr_const_ints(g, n, 2, &axis, 1);
	if (cnt < 0)
		return cnt;
	if (cnt != 1)
		return npr_node_err(n, -EINVAL, "axis must have one element");
	err = norm_axis(n, axis, a->shape.rank, &axis);
	if (err)
		return err;
	if (bd < 0)
		bd += ix->shape.rank;
	if (bd < 0 || bd > axis || bd > ix->shape.rank)
		return npr_node_err(n, -EINVAL, "batch_dims %lld out of range",
				    (long long)p->batch_dims);
	for (i = 0; i < bd; i++)
		if (a->shape.d[i] != ix->shape.d[i])
			return npr_node_err(n, -EINVAL, "batch dim %d differs", i);
	if (ix->type != NPR_ELEM_I32 && ix->type != NPR_ELEM_I64)
		return npr_node_err(n, -EINVAL, "indices must be i32 or i64");
	if (a->shape.rank - 1 + ix->shape.rank - bd > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "output rank too large");
	for (i = 0; i < axis; i++)
		o->shape.d[r++] = a->shape.d[i];
	for (i = bd; i < ix->shape.rank; i++)
		o->shape.d[r++] = ix->shape.d[i];
	for (i = axis + 1; i < a->shape.rank; i++)
		o->shape.d[r++] = a->shape.d[i];
	o->shape.rank = r;
	o->type = a->type;
	p->axis = axis;
	p->batch_dims = bd;
	return 0;
}

#define COPY_OP(t, nmin, nmax, parse_fn, infer_fn) \
	{ .type = t, .vmin = 0, .vmax = 99, .nin_min = nmin, \
	  .nin_max = nmax, .parse = parse_fn, .infer = infer_fn, \
	  .eval = npr_ref_copy }

const struct npr_op_def npr_ops_shape[] = {
	{ .type = "Concat", .vmin = 0, .vmax = 99, .nin_min = 1, .nin_max = 4096,
	  .parse = concat_parse, .infer = concat_infer, .eval = npr_ref_concat },
	COPY_OP("Reshape", 2, 2, reshape_parse, reshape_infer),
	COPY_OP("Squeeze", 1, 2, no_params, squeeze_infer),
	COPY_OP("Unsqueeze", 2, 2, no_params, unsqueeze_infer),
	{ .type = "Transpose", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = no_params, .infer = transpose_infer,
	  .eval = npr_ref_transpose },
	{ .type = "ShapeOf", .vmin = 0, .vmax = 99, .nin_min = 1, .nin_max = 1,
	  .parse = shape_of_parse, .infer = shape_of_infer,
	  .eval = npr_ref_shape_of },
	{ .type = "StridedSlice", .vmin = 0, .vmax = 99, .nin_min = 3,
	  .nin_max = 4, .parse = ss_parse, .infer = ss_infer,
	  .eval = npr_ref_strided_slice },
	{ .type = "Gather", .vmin = 0, .vmax = 99, .nin_min = 3, .nin_max = 3,
	  .parse = gather_parse, .infer = gather_infer,
	  .eval = npr_ref_gather },
	{ .type = NULL },
};
