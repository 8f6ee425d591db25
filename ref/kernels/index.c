// SPDX-License-Identifier: MIT
/*
 * Reference kernels of the indexing ops (lib/ops/index.h).  Data moves by
 * element size, so every byte-addressable type works; only Scatter
 * reductions and OneHot look at values.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "registry.h"
#include "ops/elem.h"

/* Row-major element strides of @s. */
static void strides(const struct npr_shape *s, int64_t *st)
{
	int64_t acc = 1;
	int i;

	for (i = s->rank - 1; i >= 0; i--) {
		st[i] = acc;
		acc *= s->d[i];
	}
}

/* Advance the C-order multi-index @idx over @s by one. */
static void next_index(int64_t *idx, const struct npr_shape *s)
{
	int i;

	for (i = s->rank - 1; i >= 0; i--) {
		if (++idx[i] < s->d[i])
			return;
		idx[i] = 0;
	}
}

/* Index @k of @t (i32 or i64) normalised against @dim; -1 if out of range. */
static int64_t get_index(const struct npr_tensor *t, int64_t k, int64_t dim)
{
	int64_t x = t->type == NPR_ELEM_I64 ? ((const int64_t *)t->data)[k] :
		    ((const int32_t *)t->data)[k];

	if (x < 0)
		x += dim;
	if (x < 0 || x >= dim)
		return -1;
	return x;
}

static int bad_index(const struct npr_node *n, const struct npr_tensor *t,
		     int64_t k, int64_t dim)
{
	int64_t x = t->type == NPR_ELEM_I64 ? ((const int64_t *)t->data)[k] :
		    ((const int32_t *)t->data)[k];

	return npr_node_err(n, -EINVAL,
			    "index %lld (element %lld) is out of range for a dimension of %lld",
			    (long long)x, (long long)k, (long long)dim);
}

/**
 * npr_ref_gather_elements() - GatherElements-6
 * @n: the node; params struct npr_index_params, @ax set.
 * @in: data, indices.
 * @out: shape of indices.
 *
 * Return: 0, or -EINVAL for an index out of range.
 */
int npr_ref_gather_elements(const struct npr_node *n,
			    const struct npr_tensor *in,
			    struct npr_tensor *out)
{
	const struct npr_index_params *p = n->params;
	const struct npr_shape *is = &in[1].shape;
	size_t es = npr_elem_size(out->type);
	int64_t dst[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(is), k, dim = in[0].shape.d[p->ax];
	const char *src = in[0].data;
	char *d = out->data;
	int i;

	strides(&in[0].shape, dst);
	for (k = 0; k < total; k++) {
		int64_t x = get_index(&in[1], k, dim), off = 0;

		if (x < 0)
			return bad_index(n, &in[1], k, dim);
		for (i = 0; i < is->rank; i++)
			off += (i == p->ax ? x : idx[i]) * dst[i];
		memcpy(d + k * es, src + off * es, es);
		next_index(idx, is);
	}
	return 0;
}

/**
 * npr_ref_gather_nd() - GatherND-5/-8
 * @n: the node; params struct npr_index_params, @bd set.
 * @in: data, indices.
 * @out: the gathered slices (the batch dimensions flattened or not does
 *       not change the memory layout).
 *
 * Return: 0, or -EINVAL for an index out of range.
 */
int npr_ref_gather_nd(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_index_params *p = n->params;
	const struct npr_shape *ds = &in[0].shape, *is = &in[1].shape;
	size_t es = npr_elem_size(out->type);
	int64_t dst[NPR_MAX_RANK], k = is->d[is->rank - 1];
	int64_t batch = npr_dims_prod(is, 0, p->bd);
	int64_t per = npr_dims_prod(is, p->bd, is->rank - 1);
	int64_t slice = npr_dims_prod(ds, p->bd + (int)k, ds->rank);
	int64_t dbatch = npr_dims_prod(ds, p->bd, ds->rank);
	const char *src = in[0].data;
	char *d = out->data;
	int64_t b, j, t;

	strides(ds, dst);
	for (b = 0; b < batch; b++) {
		for (j = 0; j < per; j++) {
			int64_t row = (b * per + j) * k, off = b * dbatch;

			for (t = 0; t < k; t++) {
				int64_t dim = ds->d[p->bd + t];
				int64_t x = get_index(&in[1], row + t, dim);

				if (x < 0)
					return bad_index(n, &in[1], row + t,
							 dim);
				off += x * dst[p->bd + t];
			}
			memcpy(d, src + off * es, slice * es);
			d += slice * es;
		}
	}
	return 0;
}

/* Apply update value @u to output element @t under reduction @red. */
static void reduce_into(unsigned int type, void *o, int64_t t, double u,
			int red, bool first)
{
	double v = first ? u : npr_ld(type, o, t);

	if (!first) {
		switch (red) {
		case NPR_SCATTER_SUM:
		case NPR_SCATTER_MEAN:
			v += u;
			break;
		case NPR_SCATTER_SUB:
			v -= u;
			break;
		case NPR_SCATTER_PROD:
			v *= u;
			break;
		case NPR_SCATTER_MIN:
			v = u < v ? u : v;
			break;
		case NPR_SCATTER_MAX:
			v = u > v ? u : v;
			break;
		}
	}
	if (type == NPR_ELEM_BOOLEAN)
		v = v != 0;
	npr_st(type, o, t, v);
}

/*
 * Scatter engine shared by the three ops: @tgt[k] is the output element
 * (in units of @chunk elements) update chunk k goes to.
 */
static int scatter_apply(const struct npr_node *n, int red, bool init,
			 const struct npr_tensor *upd, struct npr_tensor *out,
			 const int64_t *tgt, int64_t nupd, int64_t chunk)
{
	size_t es = npr_elem_size(out->type);
	const char *u = upd->data;
	int64_t numel = npr_shape_numel(&out->shape), k, c;
	int32_t *cnt = NULL;

	if (red == NPR_SCATTER_NONE) {
		for (k = 0; k < nupd; k++)
			memcpy((char *)out->data + tgt[k] * chunk * es,
			       u + k * chunk * es, chunk * es);
		return 0;
	}
	cnt = calloc(numel ? numel : 1, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	for (k = 0; k < nupd; k++) {
		for (c = 0; c < chunk; c++) {
			int64_t t = tgt[k] * chunk + c;

			reduce_into(out->type, out->data, t,
				    npr_ld(upd->type, u, k * chunk + c), red,
				    !init && !cnt[t]);
			cnt[t]++;
		}
	}
	if (red == NPR_SCATTER_MEAN) {
		for (k = 0; k < numel; k++) {
			double v, m;

			if (!cnt[k])
				continue;
			v = npr_ld(out->type, out->data, k);
			m = v / (cnt[k] + (init ? 1 : 0));
			if (!npr_is_float(out->type))
				m = floor(m);
			npr_st(out->type, out->data, k, m);
		}
	}
	free(cnt);
	return 0;
}

static void copy_data(const struct npr_tensor *in, struct npr_tensor *out)
{
	if (out->data != in->data)
		memcpy(out->data, in->data, out->nbytes);
}

/**
 * npr_ref_scatter_update() - ScatterUpdate-3
 * @n: the node; params struct npr_index_params, @ax set.
 * @in: data, indices, updates, axis.
 * @out: data with the slices along the axis replaced.
 *
 * Return: 0, -ENOMEM, or -EINVAL for an index out of range.
 */
int npr_ref_scatter_update(const struct npr_node *n,
			   const struct npr_tensor *in,
			   struct npr_tensor *out)
{
	const struct npr_index_params *p = n->params;
	const struct npr_shape *ds = &in[0].shape;
	int64_t outer = npr_dims_prod(ds, 0, p->ax), dim = ds->d[p->ax];
	int64_t inner = npr_dims_prod(ds, p->ax + 1, ds->rank);
	int64_t nidx = npr_shape_numel(&in[1].shape), o, j, *tgt;
	int err;

	copy_data(&in[0], out);
	tgt = malloc(sizeof(*tgt) * (outer * nidx > 0 ? outer * nidx : 1));
	if (!tgt)
		return -ENOMEM;
	for (j = 0; j < nidx; j++) {
		int64_t x = get_index(&in[1], j, dim);

		if (x < 0) {
			free(tgt);
			return bad_index(n, &in[1], j, dim);
		}
		for (o = 0; o < outer; o++)
			tgt[o * nidx + j] = o * dim + x;
	}
	err = scatter_apply(n, NPR_SCATTER_NONE, true, &in[2], out, tgt,
			    outer * nidx, inner);
	free(tgt);
	return err;
}

/**
 * npr_ref_scatter_elements() - ScatterElementsUpdate-3/-12
 * @n: the node; params struct npr_index_params, @ax set.
 * @in: data, indices, updates, axis.
 * @out: data with elements updated.
 *
 * Return: 0, -ENOMEM, or -EINVAL for an index out of range.
 */
int npr_ref_scatter_elements(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out)
{
	const struct npr_index_params *p = n->params;
	const struct npr_shape *is = &in[1].shape;
	int64_t dst[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(is), k, dim = in[0].shape.d[p->ax];
	int64_t *tgt;
	int i, err;

	copy_data(&in[0], out);
	strides(&in[0].shape, dst);
	tgt = malloc(sizeof(*tgt) * (total ? total : 1));
	if (!tgt)
		return -ENOMEM;
	for (k = 0; k < total; k++) {
		int64_t x = get_index(&in[1], k, dim), off = 0;

		if (x < 0) {
			free(tgt);
			return bad_index(n, &in[1], k, dim);
		}
		for (i = 0; i < is->rank; i++)
			off += (i == p->ax ? x : idx[i]) * dst[i];
		tgt[k] = off;
		next_index(idx, is);
	}
	err = scatter_apply(n, p->reduction, p->use_init_val, &in[2], out,
			    tgt, total, 1);
	free(tgt);
	return err;
}

/**
 * npr_ref_scatter_nd() - ScatterNDUpdate-3/-15
 * @n: the node; params struct npr_index_params.
 * @in: data, indices, updates.
 * @out: data with elements or slices updated.
 *
 * Return: 0, -ENOMEM, or -EINVAL for an index out of range.
 */
int npr_ref_scatter_nd(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out)
{
	const struct npr_index_params *p = n->params;
	const struct npr_shape *ds = &in[0].shape, *is = &in[1].shape;
	int64_t dst[NPR_MAX_RANK], k = is->d[is->rank - 1];
	int64_t rows = npr_dims_prod(is, 0, is->rank - 1);
	int64_t slice = npr_dims_prod(ds, (int)k, ds->rank), j, t, *tgt;
	int err;

	copy_data(&in[0], out);
	strides(ds, dst);
	tgt = malloc(sizeof(*tgt) * (rows ? rows : 1));
	if (!tgt)
		return -ENOMEM;
	for (j = 0; j < rows; j++) {
		int64_t off = 0;

		for (t = 0; t < k; t++) {
			int64_t x = get_index(&in[1], j * k + t, ds->d[t]);

			if (x < 0) {
				free(tgt);
				return bad_index(n, &in[1], j * k + t,
						 ds->d[t]);
			}
			off += x * dst[t];
		}
		tgt[j] = slice ? off / slice : 0;
	}
	err = scatter_apply(n, p->reduction, true, &in[2], out, tgt, rows,
			    slice);
	free(tgt);
	return err;
}

/**
 * npr_ref_one_hot() - OneHot-1, -16
 * @n: the node; params struct npr_index_params, @ax and @depth set.
 * @in: indices, depth, on_value, off_value.
 * @out: on_value where the index along the new axis matches, else
 *       off_value; indices out of [0, depth) give a row of off_value
 *       (with @normalize, those in [-depth, -1] count from the end).
 *
 * Return: 0.
 */
int npr_ref_one_hot(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_index_params *p = n->params;
	size_t es = npr_elem_size(out->type);
	const struct npr_shape *is = &in[0].shape;
	int64_t outer = npr_dims_prod(is, 0, p->ax);
	int64_t inner = npr_dims_prod(is, p->ax, is->rank);
	int64_t o, dpt, i;
	char *d = out->data;

	for (o = 0; o < outer; o++) {
		for (dpt = 0; dpt < p->depth; dpt++) {
			for (i = 0; i < inner; i++) {
				int64_t k = o * inner + i;
				int64_t x = in[0].type == NPR_ELEM_I64 ?
					    ((const int64_t *)in[0].data)[k] :
					    ((const int32_t *)in[0].data)[k];

				if (p->normalize && x < 0 && x >= -p->depth)
					x += p->depth;

				memcpy(d, x == dpt ? in[2].data : in[3].data,
				       es);
				d += es;
			}
		}
	}
	return 0;
}

/**
 * npr_ref_non_zero() - NonZero-3
 * @n: the node.
 * @in: data.
 * @out: [rank, count]: row i holds the i-th coordinate of every nonzero
 *       element, in C order.
 *
 * Return: 0.
 */
int npr_ref_non_zero(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	const struct npr_shape *s = &in[0].shape;
	int64_t total = npr_shape_numel(s), k, c = 0, cnt = out->shape.d[1];
	int64_t idx[NPR_MAX_RANK] = { 0 };
	size_t es = npr_elem_size(in[0].type);
	int i;

	(void)n;
	for (k = 0; k < total; k++) {
		if (npr_elem_nonzero(&in[0], k, es) && c < cnt) {
			for (i = 0; i < s->rank; i++)
				npr_st(out->type, out->data, i * cnt + c,
				       (double)idx[i]);
			c++;
		}
		next_index(idx, s);
	}
	return 0;
}

/* The op definitions of lib/ops/index.c these kernels evaluate. */
const struct npr_kernel npr_kernels_index[] = {
	{ "GatherElements", 6, 99, npr_ref_gather_elements },
	{ "GatherND", 5, 7, npr_ref_gather_nd },
	{ "GatherND", 8, 99, npr_ref_gather_nd },
	{ "ScatterUpdate", 3, 99, npr_ref_scatter_update },
	{ "ScatterElementsUpdate", 3, 11, npr_ref_scatter_elements },
	{ "ScatterElementsUpdate", 12, 99, npr_ref_scatter_elements },
	{ "ScatterNDUpdate", 3, 14, npr_ref_scatter_nd },
	{ "ScatterNDUpdate", 15, 99, npr_ref_scatter_nd },
	{ "OneHot", 1, 99, npr_ref_one_hot },
	{ "NonZero", 3, 99, npr_ref_non_zero },
	{ NULL },
};
