// SPDX-License-Identifier: MIT
/*
 * Data-movement ops: attributes, shape inference and kernel plans.
 * Kernels: ref/kernels/shape.c.
 *
 * Inputs that decide a shape (target shapes, axes, begin/end/stride, pads,
 * repeats, Range bounds) are read from constants once the graph is folded;
 * when one is not constant, infer fails with -ENODATA naming it and compile
 * leaves the output shape to be inferred at run time.  Slicing,
 * transposing, tiling and broadcasting are planned here as one strided view
 * of the data input (struct npr_view), so a single copy kernel runs them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"

/* ---- helpers ---- */

static void *params_new(struct npr_node *n, size_t size)
{
	free(n->params);
	n->params = calloc(1, size);
	return n->params;
}

static int one_output(const struct npr_node *n)
{
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	return 0;
}

static int norm_axis(const struct npr_node *n, const char *what,
		     int64_t axis, int rank, int *out)
{
	*out = 0;
	if (axis < -rank || axis >= rank)
		return npr_node_err(n, -EINVAL,
				    "%s %lld is out of range for rank %d",
				    what, (long long)axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

/* The single element of constant input @i. */
static int const_int(struct npr_graph *g, const struct npr_node *n, int i,
		     const char *what, int64_t *out)
{
	int cnt = npr_const_ints(g, n, i, out, 1);

	if (cnt < 0)
		return cnt;
	if (cnt != 1)
		return npr_node_err(n, -EINVAL, "%s (input %d) must have one element",
				    what, i);
	return 0;
}

static int check_numel(const struct npr_node *n, const struct npr_shape *s)
{
	if (npr_shape_numel(s) < 0)
		return npr_node_err(n, -EINVAL, "output has too many elements");
	return 0;
}

/* Dimension a * b, or -1 on overflow. */
static int64_t mul_dim(int64_t a, int64_t b)
{
	if (a && b > INT64_MAX / a)
		return -1;
	return a * b;
}

/* Row-major element strides of @s. */
static void strides_of(const struct npr_shape *s, int64_t *st)
{
	int64_t acc = 1;
	int i;

	for (i = s->rank - 1; i >= 0; i--) {
		st[i] = acc;
		acc *= s->d[i];
	}
}

static void view_init(struct npr_view *v, const struct npr_shape *in)
{
	memset(v, 0, sizeof(*v));
	v->in_numel = npr_shape_numel(in);
}

static void view_push(struct npr_view *v, int64_t dim, int64_t stride)
{
	v->dim[v->rank] = dim;
	v->stride[v->rank] = dim > 1 ? stride : 0;
	v->rank++;
}

/*
 * Drop dimensions of size 1 and merge a dimension into the next inner one
 * when together they walk the input with one stride, so the copy kernel
 * moves rows as long as possible.
 */
static void view_simplify(struct npr_view *v)
{
	int i, r = 0;

	for (i = 0; i < v->rank; i++) {
		if (!v->dim[i]) {
			v->rank = 1;
			v->dim[0] = 0;
			v->stride[0] = 0;
			return;
		}
		if (v->dim[i] == 1)
			continue;
		v->dim[r] = v->dim[i];
		v->stride[r] = v->stride[i];
		r++;
	}
	v->rank = r;
	for (i = r - 2; i >= 0; i--) {
		int k;

		if (v->stride[i] != v->stride[i + 1] * v->dim[i + 1])
			continue;
		v->dim[i] *= v->dim[i + 1];
		v->stride[i] = v->stride[i + 1];
		for (k = i + 1; k < v->rank - 1; k++) {
			v->dim[k] = v->dim[k + 1];
			v->stride[k] = v->stride[k + 1];
		}
		v->rank--;
	}
}

/*
 * One sliced dimension of size @dim, Python slice semantics: negative
 * bounds count from the end, bounds are clamped, @bmask/@emask ignore the
 * bound given.  Sets the first index and the element count; *step may be
 * reduced to keep stride arithmetic in range (only when it selects at most
 * one element anyway).
 */
static void slice_dim(int64_t dim, int64_t b, int64_t e, int64_t *step,
		      bool bmask, bool emask, int64_t *start, int64_t *len)
{
	int64_t st = *step, lo, hi;

	if (st > 0) {
		lo = bmask ? 0 : b;
		hi = emask ? dim : e;
		if (lo < 0)
			lo += dim;
		if (hi < 0)
			hi += dim;
		lo = lo < 0 ? 0 : lo > dim ? dim : lo;
		hi = hi < 0 ? 0 : hi > dim ? dim : hi;
		if (st > dim)
			st = dim > 0 ? dim : 1;
		*len = hi > lo ? (hi - lo + st - 1) / st : 0;
	} else {
		lo = bmask ? dim - 1 : b;
		hi = emask ? -1 : e;
		if (!bmask && lo < 0)
			lo += dim;
		if (!emask && hi < 0)
			hi += dim;
		lo = lo < -1 ? -1 : lo > dim - 1 ? dim - 1 : lo;
		hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
		if (st < -dim)
			st = dim > 0 ? -dim : -1;
		*len = lo > hi ? (lo - hi - st - 1) / -st : 0;
	}
	*start = *len ? lo : 0;
	*step = st;
}

/* ---- Concat ---- */

static int concat_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_concat_params *p = params_new(n, sizeof(*p));

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!npr_attr(n, "axis"))
		return npr_node_err(n, -EINVAL, "attribute axis is missing");
	return npr_attr_int(n, "axis", 0, &p->axis);
}

static int concat_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_concat_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t sum = 0;
	int i, d, ax, err;

	err = one_output(n);
	if (!err)
		err = norm_axis(n, "axis", p->axis, a->shape.rank, &ax);
	if (err)
		return err;
	for (i = 0; i < n->nin; i++) {
		struct npr_value *v = npr_in(g, n, i);

		if (v->type != a->type)
			return npr_node_err(n, -EINVAL,
					    "input %d is %s, input 0 is %s", i,
					    npr_elem_name(v->type),
					    npr_elem_name(a->type));
		if (v->shape.rank != a->shape.rank)
			return npr_node_err(n, -EINVAL,
					    "input %d has rank %d, input 0 rank %d",
					    i, v->shape.rank, a->shape.rank);
		for (d = 0; d < a->shape.rank; d++)
			if (d != ax && v->shape.d[d] != a->shape.d[d])
				return npr_node_err(n, -EINVAL,
						    "input %d: dim %d is %lld, input 0 has %lld",
						    i, d,
						    (long long)v->shape.d[d],
						    (long long)a->shape.d[d]);
		if (sum > INT64_MAX - v->shape.d[ax])
			return npr_node_err(n, -EINVAL, "output too large");
		sum += v->shape.d[ax];
	}
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = a->shape;
	o->shape.d[ax] = sum;
	p->ax = ax;
	return check_numel(n, &o->shape);
}

/* ---- Reshape, Squeeze, Unsqueeze ---- */

static int reshape_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_reshape_params *p = params_new(n, sizeof(*p));

	(void)g;
	if (!p)
		return -ENOMEM;
	return npr_attr_bool(n, "special_zero", false, &p->special_zero);
}

static int reshape_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_reshape_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t t[NPR_MAX_RANK], numel = npr_shape_numel(&a->shape), known = 1;
	struct npr_shape s;
	int cnt, i, neg = -1, err;

	err = one_output(n);
	if (err)
		return err;
	cnt = npr_const_ints(g, n, 1, t, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	s.rank = cnt;
	for (i = 0; i < cnt; i++) {
		int64_t v = t[i];

		if (v == 0 && p->special_zero) {
			if (i >= a->shape.rank)
				return npr_node_err(n, -EINVAL,
						    "special zero at %d is past the input rank %d",
						    i, a->shape.rank);
			v = a->shape.d[i];
		}
		if (v == -1) {
			if (neg >= 0)
				return npr_node_err(n, -EINVAL,
						    "target shape has more than one -1");
			neg = i;
			continue;
		}
		if (v < 0)
			return npr_node_err(n, -EINVAL,
					    "target dim %d is %lld", i,
					    (long long)v);
		s.d[i] = v;
		known = mul_dim(known, v);
		if (known < 0)
			return npr_node_err(n, -EINVAL, "target shape too large");
	}
	if (neg >= 0) {
		if (!known || numel % known)
			return npr_node_err(n, -EINVAL,
					    "cannot infer the -1: %lld elements in blocks of %lld",
					    (long long)numel, (long long)known);
		s.d[neg] = numel / known;
		known = numel;
	}
	if (known != numel)
		return npr_node_err(n, -EINVAL,
				    "target shape has %lld elements, the input %lld",
				    (long long)known, (long long)numel);
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

static int squeeze_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *a = npr_in(g, n, 0), *o;
	bool drop[NPR_MAX_RANK] = { false };
	int64_t axes[NPR_MAX_RANK];
	struct npr_shape s;
	int cnt = 0, i, err;

	err = one_output(n);
	if (err)
		return err;
	if (n->nin > 1) {
		cnt = npr_const_ints(g, n, 1, axes, NPR_MAX_RANK);
		if (cnt < 0)
			return cnt;
	}
	for (i = 0; i < cnt; i++) {
		int x;

		err = norm_axis(n, "axis", axes[i], a->shape.rank, &x);
		if (err)
			return err;
		if (a->shape.d[x] != 1)
			return npr_node_err(n, -EINVAL,
					    "cannot squeeze dim %d of size %lld",
					    x, (long long)a->shape.d[x]);
		drop[x] = true;
	}
	/* no axes (absent or empty): every dimension of size 1 */
	for (i = 0; !cnt && i < a->shape.rank; i++)
		drop[i] = a->shape.d[i] == 1;
	s.rank = 0;
	for (i = 0; i < a->shape.rank; i++)
		if (!drop[i])
			s.d[s.rank++] = a->shape.d[i];
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

static int unsqueeze_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *a = npr_in(g, n, 0), *o;
	bool ins[NPR_MAX_RANK] = { false };
	int64_t axes[NPR_MAX_RANK];
	struct npr_shape s;
	int cnt, i, k = 0, err;

	err = one_output(n);
	if (err)
		return err;
	cnt = npr_const_ints(g, n, 1, axes, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	s.rank = a->shape.rank + cnt;
	if (s.rank > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "output rank %d exceeds %d",
				    s.rank, NPR_MAX_RANK);
	for (i = 0; i < cnt; i++) {
		int x;

		err = norm_axis(n, "axis", axes[i], s.rank, &x);
		if (err)
			return err;
		if (ins[x])
			return npr_node_err(n, -EINVAL, "axis %d is repeated", x);
		ins[x] = true;
	}
	for (i = 0; i < s.rank; i++)
		s.d[i] = ins[i] ? 1 : a->shape.d[k++];
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- Transpose ---- */

static int view_parse(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	return params_new(n, sizeof(struct npr_view_params)) ? 0 : -ENOMEM;
}

static int transpose_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_view_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t ord[NPR_MAX_RANK], ist[NPR_MAX_RANK];
	bool seen[NPR_MAX_RANK] = { false };
	int cnt, i, r = a->shape.rank, err;
	struct npr_shape s;

	err = one_output(n);
	if (err)
		return err;
	cnt = npr_const_ints(g, n, 1, ord, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	if (!cnt) {
		for (i = 0; i < r; i++)
			ord[i] = r - 1 - i;
		cnt = r;
	}
	if (cnt != r)
		return npr_node_err(n, -EINVAL,
				    "order has %d entries for rank %d", cnt, r);
	strides_of(&a->shape, ist);
	view_init(&p->view, &a->shape);
	s.rank = r;
	for (i = 0; i < r; i++) {
		if (ord[i] < 0 || ord[i] >= r)
			return npr_node_err(n, -EINVAL,
					    "order[%d] = %lld is not an axis of rank %d",
					    i, (long long)ord[i], r);
		if (seen[ord[i]])
			return npr_node_err(n, -EINVAL,
					    "order repeats axis %lld",
					    (long long)ord[i]);
		seen[ord[i]] = true;
		s.d[i] = a->shape.d[ord[i]];
		view_push(&p->view, s.d[i], ist[ord[i]]);
	}
	view_simplify(&p->view);
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- ShapeOf ---- */

static int shape_of_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_of_params *p = params_new(n, sizeof(*p));
	const char *t = npr_attr(n, "output_type");

	(void)g;
	if (!p)
		return -ENOMEM;
	p->out_type = NPR_ELEM_I64;
	if (t) {
		p->out_type = npr_elem_parse(t);
		if (p->out_type != NPR_ELEM_I64 &&
		    p->out_type != NPR_ELEM_I32)
			return npr_node_err(n, -EINVAL,
					    "output_type \"%s\" must be i32 or i64",
					    t);
	}
	return 0;
}

/*
 * The output is 1-D with one element per input dimension.  A static input
 * shape makes it a constant right away, whether the input is constant or
 * not, so the shape subgraph after it folds.
 */
static int shape_of_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_shape_of_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	size_t bytes;
	void *buf;
	int err;

	err = one_output(n);
	if (err)
		return err;
	o = npr_out(g, n, 0);
	o->type = p->out_type;
	o->shape.rank = 1;
	o->shape.d[0] = a->shape.rank;
	if (a->shape.rank < 0 || !npr_shape_static(&a->shape))
		return 0;
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

static int mask_parse(struct npr_node *n, const char *key, bool optional,
		      uint32_t *bits)
{
	int64_t v[32];
	int cnt, i, err;

	*bits = 0;
	err = npr_attr_ints(n, key, v, 32, &cnt, optional);
	if (err)
		return err;
	for (i = 0; i < cnt; i++) {
		if (v[i] != 0 && v[i] != 1)
			return npr_node_err(n, -EINVAL,
					    "%s[%d] = %lld: masks hold 0 or 1",
					    key, i, (long long)v[i]);
		if (v[i])
			*bits |= 1u << i;
	}
	return 0;
}

static int ss_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_strided_slice_params *p = params_new(n, sizeof(*p));
	int err;

	(void)g;
	if (!p)
		return -ENOMEM;
	err = mask_parse(n, "begin_mask", false, &p->begin_mask);
	if (!err)
		err = mask_parse(n, "end_mask", false, &p->end_mask);
	if (!err)
		err = mask_parse(n, "new_axis_mask", true, &p->new_axis_mask);
	if (!err)
		err = mask_parse(n, "shrink_axis_mask", true,
				 &p->shrink_axis_mask);
	if (!err)
		err = mask_parse(n, "ellipsis_mask", true, &p->ellipsis_mask);
	return err;
}

static bool bit(uint32_t mask, int i)
{
	return (mask >> i) & 1;
}

static int ss_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_strided_slice_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t b[NPR_VIEW_MAX_RANK], e[NPR_VIEW_MAX_RANK];
	int64_t st[NPR_VIEW_MAX_RANK], ist[NPR_MAX_RANK];
	struct npr_view *v = &p->view;
	int nb, ne, ns, i, k, ax = 0, r = a->shape.rank, consume = 0, nell = 0;
	struct npr_shape s = { .rank = 0 };
	int err;

	err = one_output(n);
	if (err)
		return err;
	nb = npr_const_ints(g, n, 1, b, NPR_VIEW_MAX_RANK);
	if (nb < 0)
		return nb;
	ne = npr_const_ints(g, n, 2, e, NPR_VIEW_MAX_RANK);
	if (ne < 0)
		return ne;
	ns = nb;
	if (n->nin > 3) {
		ns = npr_const_ints(g, n, 3, st, NPR_VIEW_MAX_RANK);
		if (ns < 0)
			return ns;
	} else {
		for (i = 0; i < nb; i++)
			st[i] = 1;
	}
	if (ne != nb || ns != nb)
		return npr_node_err(n, -EINVAL,
				    "begin, end and stride have %d, %d and %d elements",
				    nb, ne, ns);
	for (i = 0; i < nb; i++) {
		if (bit(p->ellipsis_mask, i))
			nell++;
		else if (!bit(p->new_axis_mask, i))
			consume++;
		if (!st[i] && !bit(p->ellipsis_mask, i) &&
		    !bit(p->new_axis_mask, i))
			return npr_node_err(n, -EINVAL, "stride[%d] is zero", i);
	}
	if (nell > 1)
		return npr_node_err(n, -EINVAL, "more than one ellipsis");
	if (consume > r)
		return npr_node_err(n, -EINVAL,
				    "slices %d dimensions of a rank %d input",
				    consume, r);
	strides_of(&a->shape, ist);
	view_init(v, &a->shape);
	for (i = 0; i <= nb; i++) {
		int64_t dim, start, len, step;
		/* the ellipsis, or past the last entry: whole dimensions */
		int fill = i == nb ? r - ax :
			   bit(p->ellipsis_mask, i) ? r - consume : 0;

		if (s.rank + fill > NPR_MAX_RANK)
			return npr_node_err(n, -EINVAL, "output rank exceeds %d",
					    NPR_MAX_RANK);
		for (k = 0; k < fill; k++, ax++) {
			s.d[s.rank++] = a->shape.d[ax];
			view_push(v, a->shape.d[ax], ist[ax]);
		}
		if (i == nb || bit(p->ellipsis_mask, i))
			continue;
		if (bit(p->new_axis_mask, i)) {
			if (s.rank == NPR_MAX_RANK)
				return npr_node_err(n, -EINVAL,
						    "output rank exceeds %d",
						    NPR_MAX_RANK);
			s.d[s.rank++] = 1;
			view_push(v, 1, 0);
			continue;
		}
		dim = a->shape.d[ax];
		if (bit(p->shrink_axis_mask, i)) {
			start = bit(p->begin_mask, i) ?
				(st[i] > 0 ? 0 : dim - 1) : b[i];
			if (start < 0)
				start += dim;
			if (start < 0 || start >= dim)
				return npr_node_err(n, -EINVAL,
						    "begin[%d] = %lld is outside dim %d of size %lld",
						    i, (long long)b[i], ax,
						    (long long)dim);
			v->base += start * ist[ax];
			ax++;
			continue;
		}
		step = st[i];
		slice_dim(dim, b[i], e[i], &step, bit(p->begin_mask, i),
			  bit(p->end_mask, i), &start, &len);
		if (s.rank == NPR_MAX_RANK)
			return npr_node_err(n, -EINVAL, "output rank exceeds %d",
					    NPR_MAX_RANK);
		s.d[s.rank++] = len;
		view_push(v, len, step * ist[ax]);
		v->base += start * ist[ax];
		ax++;
	}
	view_simplify(v);
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- Slice (opset8) ---- */

static int slice_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_view_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t b[NPR_MAX_RANK], e[NPR_MAX_RANK], st[NPR_MAX_RANK];
	int64_t axes[NPR_MAX_RANK], ist[NPR_MAX_RANK];
	int64_t start[NPR_MAX_RANK] = { 0 }, step[NPR_MAX_RANK];
	int nb, ne, ns, na, i, r = a->shape.rank, err;
	bool seen[NPR_MAX_RANK] = { false };
	struct npr_shape s = a->shape;

	err = one_output(n);
	if (err)
		return err;
	nb = npr_const_ints(g, n, 1, b, NPR_MAX_RANK);
	if (nb < 0)
		return nb;
	ne = npr_const_ints(g, n, 2, e, NPR_MAX_RANK);
	if (ne < 0)
		return ne;
	ns = npr_const_ints(g, n, 3, st, NPR_MAX_RANK);
	if (ns < 0)
		return ns;
	na = nb;
	if (n->nin > 4) {
		na = npr_const_ints(g, n, 4, axes, NPR_MAX_RANK);
		if (na < 0)
			return na;
	} else {
		for (i = 0; i < nb; i++)
			axes[i] = i;
	}
	if (ne != nb || ns != nb || na != nb)
		return npr_node_err(n, -EINVAL,
				    "start, stop, step and axes have %d, %d, %d and %d elements",
				    nb, ne, ns, na);
	for (i = 0; i < r; i++)
		step[i] = 1;
	for (i = 0; i < nb; i++) {
		int x;

		err = norm_axis(n, "axis", axes[i], r, &x);
		if (err)
			return err;
		if (seen[x])
			return npr_node_err(n, -EINVAL, "axis %d is repeated", x);
		seen[x] = true;
		if (!st[i])
			return npr_node_err(n, -EINVAL, "step[%d] is zero", i);
		step[x] = st[i];
		slice_dim(a->shape.d[x], b[i], e[i], &step[x], false, false,
			  &start[x], &s.d[x]);
	}
	strides_of(&a->shape, ist);
	view_init(&p->view, &a->shape);
	for (i = 0; i < r; i++) {
		view_push(&p->view, s.d[i], step[i] * ist[i]);
		p->view.base += start[i] * ist[i];
	}
	view_simplify(&p->view);
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- Gather ---- */

static int gather_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_gather_params *p = params_new(n, sizeof(*p));

	(void)g;
	if (!p)
		return -ENOMEM;
	if (n->version && n->version < 7 && npr_attr(n, "batch_dims"))
		return npr_node_err(n, -EINVAL,
				    "batch_dims needs Gather-7 or later");
	return npr_attr_int(n, "batch_dims", 0, &p->batch_dims);
}

static int gather_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_gather_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *ix = npr_in(g, n, 1), *o;
	int64_t axis, bd = p->batch_dims;
	int i, ax, r = a->shape.rank, ir = ix->shape.rank, err;
	struct npr_shape s = { .rank = 0 };

	err = one_output(n);
	if (!err)
		err = const_int(g, n, 2, "axis", &axis);
	if (!err)
		err = norm_axis(n, "axis", axis, r, &ax);
	if (err)
		return err;
	if (ix->type != NPR_ELEM_I32 && ix->type != NPR_ELEM_I64)
		return npr_node_err(n, -EINVAL,
				    "indices are %s, not i32 or i64",
				    npr_elem_name(ix->type));
	if (bd < 0)
		bd += ir;
	if (bd < 0 || bd > ir || bd > ax)
		return npr_node_err(n, -EINVAL,
				    "batch_dims %lld is out of range (indices rank %d, axis %d)",
				    (long long)p->batch_dims, ir, ax);
	for (i = 0; i < bd; i++)
		if (a->shape.d[i] != ix->shape.d[i])
			return npr_node_err(n, -EINVAL,
					    "batch dim %d: data has %lld, indices %lld",
					    i, (long long)a->shape.d[i],
					    (long long)ix->shape.d[i]);
	if (r - 1 + ir - bd > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "output rank exceeds %d",
				    NPR_MAX_RANK);
	for (i = 0; i < ax; i++)
		s.d[s.rank++] = a->shape.d[i];
	for (i = (int)bd; i < ir; i++)
		s.d[s.rank++] = ix->shape.d[i];
	for (i = ax + 1; i < r; i++)
		s.d[s.rank++] = a->shape.d[i];
	err = check_numel(n, &s);
	if (err)
		return err;
	p->axis = ax;
	p->bd = (int)bd;
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- Range ---- */

#define RANGE_MAX	(1LL << 31)

static int range_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_range_params *p = params_new(n, sizeof(*p));
	const char *t = npr_attr(n, "output_type");

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!t) {
		if (n->version >= 4)
			return npr_node_err(n, -EINVAL,
					    "attribute output_type is missing");
		return 0;
	}
	p->out_type = npr_elem_parse(t);
	if (!npr_elem_size(p->out_type) || p->out_type == NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL,
				    "output_type \"%s\" is not a numeric type", t);
	return 0;
}

static bool is_int_type(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_I8: case NPR_ELEM_U8: case NPR_ELEM_I16:
	case NPR_ELEM_U16: case NPR_ELEM_I32: case NPR_ELEM_U32:
	case NPR_ELEM_I64: case NPR_ELEM_U64:
		return true;
	default:
		return false;
	}
}

/* The one element of constant input @i, as a double and an integer. */
static int range_arg(struct npr_graph *g, const struct npr_node *n, int i,
		     const char *what, double *f, int64_t *x)
{
	const struct npr_value *v = npr_in(g, n, i);

	if (!v->data)
		return npr_node_err(n, -ENODATA,
				    "%s (input %d) must be a constant (or computable at compile time)",
				    what, i);
	if (npr_shape_numel(&v->shape) != 1 ||
	    v->nbytes < npr_tensor_bytes(v->type, 1))
		return npr_node_err(n, -EINVAL,
				    "%s (input %d) must have one element", what, i);
	if (npr_convert(f, NPR_ELEM_F64, v->data, v->type, 1) ||
	    npr_convert(x, NPR_ELEM_I64, v->data, v->type, 1))
		return npr_node_err(n, -EINVAL, "%s (input %d) of type %s",
				    what, i, npr_elem_name(v->type));
	return 0;
}

static int range_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_range_params *p = n->params;
	unsigned int t = p->out_type ? p->out_type : npr_in(g, n, 0)->type;
	double fa, fb, fs, fc;
	int64_t ia, ib, is, cnt;
	struct npr_value *o;
	int err;

	err = one_output(n);
	if (!err)
		err = range_arg(g, n, 0, "start", &fa, &ia);
	if (!err)
		err = range_arg(g, n, 1, "stop", &fb, &ib);
	if (!err)
		err = range_arg(g, n, 2, "step", &fs, &is);
	if (err)
		return err;
	/* half precision computes in f32, like every other op */
	if (t == NPR_ELEM_F16 || t == NPR_ELEM_BF16)
		t = NPR_ELEM_F32;
	if (!npr_elem_size(t) || t == NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL, "cannot make a range of %s",
				    npr_elem_name(t));
	if (fs == 0 || fs != fs || fa != fa || fb != fb)
		return npr_node_err(n, -EINVAL, "step is zero or a bound is NaN");
	if (is_int_type(t) && is_int_type(npr_in(g, n, 0)->type) &&
	    is_int_type(npr_in(g, n, 1)->type) &&
	    is_int_type(npr_in(g, n, 2)->type) &&
	    fabs(fa) < 4e15 && fabs(fb) < 4e15 && fabs(fs) < 4e15) {
		if (!is)
			return npr_node_err(n, -EINVAL, "step is zero");
		if (is > 0)
			cnt = ib > ia ? (ib - ia + is - 1) / is : 0;
		else
			cnt = ia > ib ? (ia - ib - is - 1) / -is : 0;
	} else {
		fc = ceil((fb - fa) / fs);
		if (!(fc <= (double)RANGE_MAX))
			return npr_node_err(n, -EINVAL,
					    "range of %g elements is too long", fc);
		cnt = fc > 0 ? (int64_t)fc : 0;
	}
	if (cnt > RANGE_MAX)
		return npr_node_err(n, -EINVAL,
				    "range of %lld elements is too long",
				    (long long)cnt);
	o = npr_out(g, n, 0);
	o->type = t;
	o->shape.rank = 1;
	o->shape.d[0] = cnt;
	return 0;
}

/* ---- Tile ---- */

static int tile_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_view_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t rep[NPR_MAX_RANK], ist[NPR_MAX_RANK];
	int nrep, i, r = a->shape.rank, R, err;
	struct npr_shape s;

	err = one_output(n);
	if (err)
		return err;
	nrep = npr_const_ints(g, n, 1, rep, NPR_MAX_RANK);
	if (nrep < 0)
		return nrep;
	R = nrep > r ? nrep : r;
	strides_of(&a->shape, ist);
	view_init(&p->view, &a->shape);
	s.rank = R;
	for (i = 0; i < R; i++) {
		int di = i - (R - r), ri = i - (R - nrep);
		int64_t dim = di >= 0 ? a->shape.d[di] : 1;
		int64_t k = ri >= 0 ? rep[ri] : 1;

		if (k < 0)
			return npr_node_err(n, -EINVAL,
					    "repeats[%d] = %lld is negative",
					    ri, (long long)k);
		s.d[i] = mul_dim(dim, k);
		if (s.d[i] < 0)
			return npr_node_err(n, -EINVAL, "output too large");
		view_push(&p->view, k, 0);
		view_push(&p->view, dim, di >= 0 ? ist[di] : 0);
	}
	err = check_numel(n, &s);
	if (err)
		return err;
	view_simplify(&p->view);
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- Split, VariadicSplit ---- */

static int split_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_split_params *p = params_new(n, sizeof(*p));
	int err;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (strcmp(n->type, "Split"))
		return 0;
	if (!npr_attr(n, "num_splits"))
		return npr_node_err(n, -EINVAL, "attribute num_splits is missing");
	err = npr_attr_int(n, "num_splits", 0, &p->num_splits);
	if (err)
		return err;
	if (p->num_splits < 1)
		return npr_node_err(n, -EINVAL, "num_splits %lld is not positive",
				    (long long)p->num_splits);
	return 0;
}

static int split_outputs(struct npr_graph *g, struct npr_node *n, int axis,
			 const int64_t *len)
{
	const struct npr_value *a = npr_in(g, n, 0);
	int i;

	for (i = 0; i < n->nout; i++) {
		struct npr_value *o = npr_out(g, n, i);

		o->type = a->type;
		o->shape = a->shape;
		o->shape.d[axis] = len ? len[i] : 0;
	}
	return 0;
}

static int split_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_split_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0);
	int64_t axis, dim;
	int ax, i, err;

	err = const_int(g, n, 1, "axis", &axis);
	if (!err)
		err = norm_axis(n, "axis", axis, a->shape.rank, &ax);
	if (err)
		return err;
	if (n->nout != p->num_splits)
		return npr_node_err(n, -EINVAL,
				    "has %d outputs for num_splits %lld",
				    n->nout, (long long)p->num_splits);
	dim = a->shape.d[ax];
	if (dim % p->num_splits)
		return npr_node_err(n, -EINVAL,
				    "dim %d of size %lld does not split in %lld",
				    ax, (long long)dim,
				    (long long)p->num_splits);
	p->axis = ax;
	split_outputs(g, n, ax, NULL);
	for (i = 0; i < n->nout; i++)
		npr_out(g, n, i)->shape.d[ax] = dim / p->num_splits;
	return 0;
}

static int variadic_split_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_split_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0);
	int64_t axis, dim, sum = 0, *len;
	int ax, i, cnt, neg = -1, err;

	err = const_int(g, n, 1, "axis", &axis);
	if (!err)
		err = norm_axis(n, "axis", axis, a->shape.rank, &ax);
	if (err)
		return err;
	if (n->nout < 1)
		return npr_node_err(n, -EINVAL, "has no outputs");
	len = malloc(sizeof(*len) * n->nout);
	if (!len)
		return -ENOMEM;
	cnt = npr_const_ints(g, n, 2, len, n->nout);
	if (cnt < 0) {
		err = cnt;
		goto out;
	}
	dim = a->shape.d[ax];
	if (cnt != n->nout) {
		err = npr_node_err(n, -EINVAL,
				   "split_lengths has %d elements for %d outputs",
				   cnt, n->nout);
		goto out;
	}
	for (i = 0; i < cnt; i++) {
		if (len[i] == -1 && neg < 0) {
			neg = i;
			continue;
		}
		if (len[i] < 0 || len[i] > dim) {
			err = npr_node_err(n, -EINVAL,
					   "split_lengths[%d] = %lld is invalid for a dim of %lld",
					   i, (long long)len[i],
					   (long long)dim);
			goto out;
		}
		sum += len[i];
		if (sum > dim)
			break;
	}
	if (neg >= 0 && sum <= dim)
		len[neg] = dim - sum;
	else if (sum != dim)
		sum = -1;
	if (sum < 0 || sum > dim) {
		err = npr_node_err(n, -EINVAL,
				   "split_lengths do not add up to dim %d of size %lld",
				   ax, (long long)dim);
		goto out;
	}
	p->axis = ax;
	split_outputs(g, n, ax, len);
out:
	free(len);
	return err;
}

/* ---- Broadcast ---- */

static const char *const bcast_modes[] = {
	"numpy", "explicit", "bidirectional", "pdpd", NULL,
};

static int broadcast_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_broadcast_params *p = params_new(n, sizeof(*p));
	int err;

	(void)g;
	if (!p)
		return -ENOMEM;
	err = npr_attr_enum(n, "mode", bcast_modes, NPR_BCAST_NUMPY, &p->mode);
	if (!err)
		err = npr_attr_int(n, "axis", -1, &p->axis);
	if (err)
		return err;
	if (p->mode == NPR_BCAST_BIDIRECTIONAL && n->version &&
	    n->version < 3)
		return npr_node_err(n, -EINVAL,
				    "mode bidirectional needs Broadcast-3");
	if (p->mode == NPR_BCAST_EXPLICIT && n->nin != 3)
		return npr_node_err(n, -EINVAL,
				    "mode explicit needs the axes_mapping input");
	return 0;
}

static int broadcast_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_broadcast_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int64_t tgt[NPR_MAX_RANK], map[NPR_MAX_RANK], ist[NPR_MAX_RANK];
	int64_t pos[NPR_MAX_RANK];	/* output axis of each data axis */
	int nt, i, r = a->shape.rank, err;
	struct npr_shape t, s;

	err = one_output(n);
	if (err)
		return err;
	nt = npr_const_ints(g, n, 1, tgt, NPR_MAX_RANK);
	if (nt < 0)
		return nt;
	t.rank = nt;
	for (i = 0; i < nt; i++) {
		if (tgt[i] < 0)
			return npr_node_err(n, -EINVAL,
					    "target_shape[%d] = %lld", i,
					    (long long)tgt[i]);
		t.d[i] = tgt[i];
	}
	s = t;
	switch (p->mode) {
	case NPR_BCAST_EXPLICIT: {
		int cnt = npr_const_ints(g, n, 2, map, NPR_MAX_RANK);

		if (cnt < 0)
			return cnt;
		if (cnt != r)
			return npr_node_err(n, -EINVAL,
					    "axes_mapping has %d elements for rank %d",
					    cnt, r);
		for (i = 0; i < r; i++) {
			if (map[i] < 0 || map[i] >= nt ||
			    (i && map[i] <= map[i - 1]))
				return npr_node_err(n, -EINVAL,
						    "axes_mapping[%d] = %lld: must increase within rank %d",
						    i, (long long)map[i], nt);
			pos[i] = map[i];
		}
		break;
	}
	case NPR_BCAST_BIDIRECTIONAL:
		if (npr_shape_broadcast(&a->shape, &t, &s))
			return npr_node_err(n, -EINVAL,
					    "input and target shape do not broadcast");
		for (i = 0; i < r; i++)
			pos[i] = i + s.rank - r;
		break;
	default: {
		int64_t first = s.rank - r;

		if (p->mode == NPR_BCAST_PDPD && p->axis != -1)
			first = p->axis;
		if (first < 0 || first + r > s.rank)
			return npr_node_err(n, -EINVAL,
					    "a rank %d input does not fit in rank %d at axis %lld",
					    r, s.rank, (long long)first);
		for (i = 0; i < r; i++)
			pos[i] = first + i;
		break;
	}
	}
	strides_of(&a->shape, ist);
	view_init(&p->view, &a->shape);
	for (i = 0; i < s.rank; i++)
		view_push(&p->view, s.d[i], 0);
	for (i = 0; i < r; i++) {
		int64_t dd = a->shape.d[i], od = s.d[pos[i]];

		if (dd != od && dd != 1)
			return npr_node_err(n, -EINVAL,
					    "input dim %d of size %lld cannot broadcast to %lld",
					    i, (long long)dd, (long long)od);
		if (dd != 1)
			p->view.stride[pos[i]] = ist[i];
	}
	err = check_numel(n, &s);
	if (err)
		return err;
	view_simplify(&p->view);
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- Pad ---- */

static const char *const pad_modes[] = {
	"constant", "edge", "reflect", "symmetric", NULL,
};

static int pad_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_pad_params *p = params_new(n, sizeof(*p));

	(void)g;
	if (!p)
		return -ENOMEM;
	return npr_attr_enum(n, "pad_mode", pad_modes, NPR_PAD_MODE_CONSTANT,
			     &p->mode);
}

static int pad_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_pad_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *o;
	int nb, ne, i, r = a->shape.rank, err;
	bool crop = !n->version || n->version >= 12;
	struct npr_shape s = a->shape;

	err = one_output(n);
	if (err)
		return err;
	nb = npr_const_ints(g, n, 1, p->pb, NPR_MAX_RANK);
	if (nb < 0)
		return nb;
	ne = npr_const_ints(g, n, 2, p->pe, NPR_MAX_RANK);
	if (ne < 0)
		return ne;
	if (nb != r || ne != r)
		return npr_node_err(n, -EINVAL,
				    "pads_begin and pads_end have %d and %d elements for rank %d",
				    nb, ne, r);
	if (n->nin > 3) {
		struct npr_value *pv = npr_in(g, n, 3);

		if (npr_shape_numel(&pv->shape) != 1)
			return npr_node_err(n, -EINVAL,
					    "pad_value must have one element");
	}
	for (i = 0; i < r; i++) {
		int64_t dim = a->shape.d[i], lo = p->pb[i], hi = p->pe[i];
		int64_t most = lo > hi ? lo : hi;

		if (!crop && (lo < 0 || hi < 0))
			return npr_node_err(n, -EINVAL,
					    "negative pads on dim %d need Pad-12", i);
		if (lo < -dim || hi < -dim || lo > INT32_MAX || hi > INT32_MAX)
			return npr_node_err(n, -EINVAL,
					    "pads %lld, %lld are out of range for dim %d",
					    (long long)lo, (long long)hi, i);
		s.d[i] = dim + lo + hi;
		if (s.d[i] < 0)
			return npr_node_err(n, -EINVAL,
					    "pads %lld, %lld leave dim %d negative",
					    (long long)lo, (long long)hi, i);
		if (most <= 0 || p->mode == NPR_PAD_MODE_CONSTANT)
			continue;
		if ((p->mode == NPR_PAD_MODE_REFLECT && most > dim - 1) ||
		    (p->mode == NPR_PAD_MODE_SYMMETRIC && most > dim) ||
		    (p->mode == NPR_PAD_MODE_EDGE && !dim))
			return npr_node_err(n, -EINVAL,
					    "%s pads %lld, %lld are too large for dim %d of size %lld",
					    pad_modes[p->mode], (long long)lo,
					    (long long)hi, i, (long long)dim);
	}
	err = check_numel(n, &s);
	if (err)
		return err;
	o = npr_out(g, n, 0);
	o->type = a->type;
	o->shape = s;
	return 0;
}

/* ---- the table ---- */

#define SHAPE_OP(t, v0, v1, n0, n1, parse_fn, infer_fn) \
	{ .type = t, .vmin = v0, .vmax = v1, .nin_min = n0, .nin_max = n1, \
	  .parse = parse_fn, .infer = infer_fn }

const struct npr_op_def npr_ops_shape[] = {
	SHAPE_OP("Concat", 0, 1, 1, 4096, concat_parse, concat_infer),
	SHAPE_OP("Reshape", 0, 1, 2, 2, reshape_parse, reshape_infer),
	SHAPE_OP("Squeeze", 0, 1, 1, 2, NULL, squeeze_infer),
	SHAPE_OP("Unsqueeze", 0, 1, 2, 2, NULL, unsqueeze_infer),
	SHAPE_OP("Transpose", 0, 1, 2, 2, view_parse, transpose_infer),
	SHAPE_OP("ShapeOf", 0, 3, 1, 1, shape_of_parse, shape_of_infer),
	SHAPE_OP("StridedSlice", 0, 1, 3, 4, ss_parse, ss_infer),
	SHAPE_OP("Slice", 8, 8, 4, 5, view_parse, slice_infer),
	SHAPE_OP("Gather", 0, 8, 3, 3, gather_parse, gather_infer),
	SHAPE_OP("Range", 0, 4, 3, 3, range_parse, range_infer),
	SHAPE_OP("Tile", 0, 1, 2, 2, view_parse, tile_infer),
	SHAPE_OP("Split", 0, 1, 2, 2, split_parse, split_infer),
	SHAPE_OP("VariadicSplit", 0, 1, 3, 3, split_parse,
		 variadic_split_infer),
	SHAPE_OP("Broadcast", 0, 3, 2, 3, broadcast_parse, broadcast_infer),
	SHAPE_OP("Pad", 0, 12, 3, 4, pad_parse, pad_infer),
	{ .type = NULL },
};
