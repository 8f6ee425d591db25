// SPDX-License-Identifier: MIT
/*
 * ReverseSequence-1, BitwiseLeftShift-15, BitwiseRightShift-15 and
 * GridSample-9 after the OpenVINO opset specifications: attributes and
 * shape inference.  Kernels: ref/kernels/misc.c.
 *
 * ReverseSequence: data of rank >= 2, seq_lengths [data.shape[batch_axis]]
 * of an integer type; each batch row has its first seq_lengths elements
 * along seq_axis reversed, the rest copied.  A length outside
 * [0, data.shape[seq_axis]] fails the inference (-EINVAL).
 *
 * BitwiseLeftShift / BitwiseRightShift: integer inputs of one type,
 * numpy (default) or no broadcasting.  A shift by a negative amount or by
 * the element's bit width or more gives 0 (left) or the sign fill (right:
 * 0, or -1 for a negative signed value); a right shift of a signed value
 * is arithmetic.
 *
 * GridSample: data [N, C, H, W] and grid [N, H_out, W_out, 2] (x then y,
 * -1 .. 1 across the input) of f32 give [N, C, H_out, W_out].
 *
 * DFT, IDFT: complex f32 data [..., 2] (real, imaginary), constant axes
 * (negative ones count from the end without the complex axis), optional
 * constant signal_size per axis (-1: the dim) to which each axis is cut
 * or padded with zeros first; the output has those sizes.
 *
 * Unique: the unique elements of the flattened data, or without it the
 * unique slices along the constant axis (a scalar or one-element 1-D i32
 * or i64), ascending (slices compared lexicographically in C order) with
 * sorted=true, else in the order they first occur; NaN equals NaN and
 * sorts last.  Outputs: the unique values (the data's shape with the
 * axis dim, or 1-D, the number of them), the index of each one's first
 * occurrence, for every element (slice) of the data the position of its
 * value in the first output, and each value's count.  How many there are
 * depends on the values, so the data must be constant at compile time;
 * otherwise the node is a dynamic step (-ENODATA).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elem.h"
#include "misc.h"

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

static int one_output(struct npr_node *n)
{
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	return 0;
}

/* ---- ReverseSequence ---------------------------------------------------- */

static int reverse_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_misc_params *p = npr_params_new(n, sizeof(*p));

	(void)g;
	if (!p)
		return -ENOMEM;
	return one_output(n);
}

static int reverse_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_misc_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *l = npr_in(g, n, 1);
	int64_t ba, sa;
	int err;

	err = npr_attr_int(n, "batch_axis", 0, &ba);
	if (!err)
		err = npr_attr_int(n, "seq_axis", 1, &sa);
	if (err)
		return err;
	if (!npr_elem_size(x->type) || x->shape.rank < 2)
		return npr_node_err(n, -EINVAL,
				    "data must have rank 2 or more, not %d",
				    x->shape.rank);
	err = npr_norm_axis(n, "batch_axis", ba, x->shape.rank,
			    &p->batch_axis);
	if (!err)
		err = npr_norm_axis(n, "seq_axis", sa, x->shape.rank,
				    &p->seq_axis);
	if (err)
		return err;
	if (p->batch_axis == p->seq_axis)
		return npr_node_err(n, -EINVAL,
				    "batch_axis and seq_axis are both %d",
				    p->batch_axis);
	if (!is_int(l->type) || l->shape.rank != 1 ||
	    l->shape.d[0] != x->shape.d[p->batch_axis])
		return npr_node_err(n, -EINVAL,
				    "seq_lengths must be integers [%lld]",
				    (long long)x->shape.d[p->batch_axis]);
	npr_out(g, n, 0)->type = x->type;
	npr_out(g, n, 0)->shape = x->shape;
	return 0;
}

/* ---- BitwiseLeftShift, BitwiseRightShift -------------------------------- */

static int shift_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "numpy", "none", NULL };
	struct npr_misc_params *p = npr_params_new(n, sizeof(*p));
	int m, err;

	(void)g;
	if (!p)
		return -ENOMEM;
	p->left = !strcmp(n->type, "BitwiseLeftShift");
	err = npr_attr_enum(n, "auto_broadcast", modes, 0, &m);
	if (err)
		return err;
	p->numpy = m == 0;
	return one_output(n);
}

static int shift_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_misc_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *b = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	char b1[128], b2[128];

	if (!is_int(a->type) || a->type != b->type)
		return npr_node_err(n, -EINVAL,
				    "inputs must be integers of one type, not %s and %s",
				    npr_elem_name(a->type),
				    npr_elem_name(b->type));
	if (p->numpy ? npr_shape_broadcast(&a->shape, &b->shape, &o->shape) :
	    !npr_shape_eq(&a->shape, &b->shape))
		return npr_node_err(n, -EINVAL,
				    "shapes %s and %s do not %s",
				    npr_shape_str(&a->shape, b1, sizeof(b1)),
				    npr_shape_str(&b->shape, b2, sizeof(b2)),
				    p->numpy ? "broadcast" : "match");
	if (!p->numpy)
		o->shape = a->shape;
	o->type = a->type;
	return 0;
}

/* ---- GridSample --------------------------------------------------------- */

static int grid_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "bilinear", "bicubic", "nearest",
					     NULL };
	static const char *const pads[] = { "zeros", "border", "reflection",
					    NULL };
	struct npr_misc_params *p = npr_params_new(n, sizeof(*p));
	int err;

	(void)g;
	if (!p)
		return -ENOMEM;
	err = npr_attr_bool(n, "align_corners", false, &p->align_corners);
	if (!err)
		err = npr_attr_enum(n, "mode", modes, NPR_GRID_BILINEAR,
				    &p->mode);
	if (!err)
		err = npr_attr_enum(n, "padding_mode", pads, NPR_GRID_ZEROS,
				    &p->padding);
	if (!err)
		err = one_output(n);
	return err;
}

static int grid_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0), *gr = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);

	if (x->type != NPR_ELEM_F32 || gr->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "data (%s) and grid (%s) must be f32",
				    npr_elem_name(x->type),
				    npr_elem_name(gr->type));
	if (x->shape.rank != 4 || gr->shape.rank != 4 ||
	    gr->shape.d[0] != x->shape.d[0] || gr->shape.d[3] != 2)
		return npr_node_err(n, -EINVAL,
				    "data must be [N, C, H, W] and grid [N, H_out, W_out, 2]");
	o->type = NPR_ELEM_F32;
	o->shape.rank = 4;
	o->shape.d[0] = x->shape.d[0];
	o->shape.d[1] = x->shape.d[1];
	o->shape.d[2] = gr->shape.d[1];
	o->shape.d[3] = gr->shape.d[2];
	return npr_check_numel(n, &o->shape);
}

/* ---- DFT, IDFT ---------------------------------------------------------- */

static int dft_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_misc_params *p = npr_params_new(n, sizeof(*p));

	(void)g;
	if (!p)
		return -ENOMEM;
	p->inverse = !strcmp(n->type, "IDFT");
	return one_output(n);
}

static int dft_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_misc_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t ax[NPR_MAX_RANK], sz[NPR_MAX_RANK];
	int r = x->shape.rank, cnt, ns = 0, i, j;

	if (x->type != NPR_ELEM_F32 || r < 2 || x->shape.d[r - 1] != 2)
		return npr_node_err(n, -EINVAL,
				    "data must be f32 [..., 2] (complex), not %s of rank %d",
				    npr_elem_name(x->type), r);
	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	if (cnt < 1 || npr_in(g, n, 1)->shape.rank != 1)
		return npr_node_err(n, -EINVAL, "axes must be a 1-D list");
	if (n->nin > 2) {
		ns = npr_const_ints(g, n, 2, sz, NPR_MAX_RANK);
		if (ns < 0)
			return ns;
		if (ns != cnt)
			return npr_node_err(n, -EINVAL,
					    "signal_size has %d values for %d axes",
					    ns, cnt);
	}
	o->type = NPR_ELEM_F32;
	o->shape = x->shape;
	p->naxes = cnt;
	for (i = 0; i < cnt; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r - 1 : ax[i];

		if (a < 0 || a >= r - 1)
			return npr_node_err(n, -EINVAL,
					    "axis %lld is out of range for rank %d",
					    (long long)ax[i], r);
		for (j = 0; j < i; j++)
			if (p->axes[j] == a)
				return npr_node_err(n, -EINVAL,
						    "axis %lld repeats",
						    (long long)ax[i]);
		p->axes[i] = (int)a;
		if (ns && sz[i] != -1) {
			if (sz[i] < 1)
				return npr_node_err(n, -EINVAL,
						    "signal_size %lld",
						    (long long)sz[i]);
			o->shape.d[a] = sz[i];
		}
	}
	return npr_check_numel(n, &o->shape);
}

/* ---- Unique ------------------------------------------------------------- */

/* @t seen as [outer, len, inner]: slices along the middle axis. */
struct uniq_view {
	const struct npr_tensor *t;
	int64_t outer, len, inner;
	bool fp;
};

/* Compare one element: NaN equals NaN and sorts after every number. */
static int uniq_cmp_elem(const struct uniq_view *v, int64_t a, int64_t b)
{
	if (v->fp) {
		double x = npr_ld(v->t->type, v->t->data, a);
		double y = npr_ld(v->t->type, v->t->data, b);

		if (isnan(x) || isnan(y))
			return isnan(x) - isnan(y);
		return (x > y) - (x < y);
	} else {
		int64_t x = npr_ld_int(v->t->type, v->t->data, a);
		int64_t y = npr_ld_int(v->t->type, v->t->data, b);

		return (x > y) - (x < y);
	}
}

/* Slices @i and @j compared lexicographically, C order. */
static int uniq_cmp(const struct uniq_view *v, int64_t i, int64_t j)
{
	int64_t o, k;
	int c;

	for (o = 0; o < v->outer; o++)
		for (k = 0; k < v->inner; k++) {
			c = uniq_cmp_elem(v, (o * v->len + i) * v->inner + k,
					  (o * v->len + j) * v->inner + k);
			if (c)
				return c;
		}
	return 0;
}

/* Stable bottom-up merge sort of the slice indexes @a (@tmp: scratch). */
static void uniq_sort(const struct uniq_view *v, int64_t *a, int64_t *tmp)
{
	int64_t w, lo, n = v->len;

	for (w = 1; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n;
			int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				tmp[k++] = uniq_cmp(v, a[j], a[i]) < 0 ?
					   a[j++] : a[i++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		memcpy(a, tmp, sizeof(*a) * n);
	}
}

/**
 * npr_unique_groups() - the unique elements or slices of a tensor
 * @t: the data.
 * @axis: the axis whose slices are compared, or -1 for the elements of
 *        the flattened data.
 * @sorted: number the unique values in ascending order, else in the order
 *          of their first occurrence.
 * @first: NULL, or per unique value (in that numbering) the index of its
 *         first occurrence.
 * @inv: NULL, or per element (slice) of @t the number of its value.
 * @cnt: NULL, or per unique value its count.
 *
 * Return: the number of unique values, or -ENOMEM.
 */
int64_t npr_unique_groups(const struct npr_tensor *t, int axis, bool sorted,
			  int64_t *first, int64_t *inv, int64_t *cnt)
{
	struct uniq_view v = { .t = t, .fp = npr_is_float(t->type) };
	int64_t *ord, *tmp, *grp, n, i, u = 0;

	if (axis < 0) {
		v.outer = v.inner = 1;
		v.len = npr_shape_numel(&t->shape);
	} else {
		v.outer = npr_dims_prod(&t->shape, 0, axis);
		v.len = t->shape.d[axis];
		v.inner = npr_dims_prod(&t->shape, axis + 1, t->shape.rank);
	}
	n = v.len;
	if (!n)
		return 0;
	ord = malloc(sizeof(*ord) * n);
	tmp = malloc(sizeof(*tmp) * n);
	grp = malloc(sizeof(*grp) * n);
	if (!ord || !tmp || !grp) {
		free(ord);
		free(tmp);
		free(grp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		ord[i] = i;
	/* a slice of no elements: all are equal */
	if (v.outer && v.inner)
		uniq_sort(&v, ord, tmp);
	/* runs of equal slices; stable, so a run starts at its first index */
	for (i = 0; i < n; i++) {
		if (i && v.outer && v.inner &&
		    uniq_cmp(&v, ord[i - 1], ord[i]))
			u++;
		grp[ord[i]] = u;
	}
	u++;
	/* tmp[g]: the number of group g in the output */
	if (sorted) {
		for (i = 0; i < u; i++)
			tmp[i] = i;
	} else {
		int64_t next = 0;

		for (i = 0; i < u; i++)
			tmp[i] = -1;
		for (i = 0; i < n; i++)
			if (tmp[grp[i]] < 0)
				tmp[grp[i]] = next++;
	}
	if (cnt)
		memset(cnt, 0, sizeof(*cnt) * u);
	if (first)
		for (i = 0; i < u; i++)
			first[i] = -1;
	for (i = 0; i < n; i++) {
		int64_t o = tmp[grp[i]];

		if (inv)
			inv[i] = o;
		if (cnt)
			cnt[o]++;
		if (first && first[o] < 0)
			first[o] = i;
	}
	free(ord);
	free(tmp);
	free(grp);
	return u;
}

static int unique_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const types[] = { "i32", "i64", NULL };
	struct npr_misc_params *p = npr_params_new(n, sizeof(*p));
	int it, ct, err;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (n->nout != 4)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 4",
				    n->nout);
	err = npr_attr_bool(n, "sorted", true, &p->sorted);
	if (!err)
		err = npr_attr_enum(n, "index_element_type", types, 1, &it);
	if (!err)
		err = npr_attr_enum(n, "count_element_type", types, 1, &ct);
	if (err)
		return err;
	p->idx_type = it ? NPR_ELEM_I64 : NPR_ELEM_I32;
	p->cnt_type = ct ? NPR_ELEM_I64 : NPR_ELEM_I32;
	return 0;
}

static int unique_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_misc_params *p = n->params;
	struct npr_value *d = npr_in(g, n, 0);
	struct npr_tensor t;
	int64_t axis, len, u;
	int i, cnt, err;

	if (!npr_is_compute(d->type) && d->type != NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(d->type));
	p->uaxis = -1;
	if (n->nin > 1) {
		const struct npr_value *a = npr_in(g, n, 1);

		if (!npr_is_index(a->type) || a->shape.rank > 1 ||
		    npr_shape_numel(&a->shape) != 1)
			return npr_node_err(n, -EINVAL,
					    "axis must be one i32 or i64 value");
		cnt = npr_const_ints(g, n, 1, &axis, 1);
		if (cnt < 0)
			return cnt;
		if (d->shape.rank < 1)
			return npr_node_err(n, -EINVAL,
					    "data must have rank >= 1 with an axis");
		err = npr_norm_axis(n, "axis", axis, d->shape.rank,
				    &p->uaxis);
		if (err)
			return err;
	}
	if (!d->data)
		return npr_node_err(n, -ENODATA,
				    "the output shapes depend on the input values: the data must be constant");
	t.type = d->type;
	t.shape = d->shape;
	t.data = (void *)d->data;
	t.nbytes = d->nbytes;
	u = npr_unique_groups(&t, p->uaxis, p->sorted, NULL, NULL, NULL);
	if (u < 0)
		return (int)u;
	len = p->uaxis < 0 ? npr_shape_numel(&d->shape) :
	      d->shape.d[p->uaxis];
	for (i = 0; i < 4; i++)
		npr_out(g, n, i)->shape = (struct npr_shape){ .rank = 1,
							      .d = { u } };
	npr_out(g, n, 0)->type = d->type;
	if (p->uaxis >= 0) {
		npr_out(g, n, 0)->shape = d->shape;
		npr_out(g, n, 0)->shape.d[p->uaxis] = u;
	}
	npr_out(g, n, 1)->type = p->idx_type;
	npr_out(g, n, 2)->type = p->idx_type;
	npr_out(g, n, 2)->shape.d[0] = len;
	npr_out(g, n, 3)->type = p->cnt_type;
	return 0;
}

const struct npr_op_def npr_ops_misc[] = {
	{ .type = "Unique", .vmin = 10, .vmax = 99, .nin_min = 1, .nin_max = 2,
	  .parse = unique_parse, .infer = unique_infer },
	{ .type = "DFT", .vmin = 7, .vmax = 99, .nin_min = 2, .nin_max = 3,
	  .parse = dft_parse, .infer = dft_infer },
	{ .type = "IDFT", .vmin = 7, .vmax = 99, .nin_min = 2, .nin_max = 3,
	  .parse = dft_parse, .infer = dft_infer },
	{ .type = "ReverseSequence", .vmin = 1, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = reverse_parse, .infer = reverse_infer },
	{ .type = "BitwiseLeftShift", .vmin = 15, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = shift_parse, .infer = shift_infer },
	{ .type = "BitwiseRightShift", .vmin = 15, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = shift_parse, .infer = shift_infer },
	{ .type = "GridSample", .vmin = 9, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = grid_parse, .infer = grid_infer },
	{ .type = NULL },
};
