// SPDX-License-Identifier: MIT
/*
 * Reference kernels for data-movement ops.  They copy elements by size and
 * never look at the values, so every byte-addressable type works.  Shapes
 * and plans (views, normalised axes, pads) come from shape inference in
 * lib/ops/shape.c; the kernels only check that the buffers they are given
 * are as large as those plans need.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"
#include "registry.h"
#include "ref/threads.h"

/* Copy @n elements of @es bytes, @st source elements apart, to @dst. */
static void copy_row(char *dst, const char *src, int64_t n, int64_t st,
		     size_t es)
{
	int64_t i;

	if (st == 1) {
		memcpy(dst, src, (size_t)n * es);
		return;
	}
	switch (es) {
	case 1:
		for (i = 0; i < n; i++)
			((uint8_t *)dst)[i] = *(const uint8_t *)(src + i * st);
		break;
	case 2:
		for (i = 0; i < n; i++)
			memcpy(dst + 2 * i, src + 2 * i * st, 2);
		break;
	case 4:
		for (i = 0; i < n; i++)
			memcpy(dst + 4 * i, src + 4 * i * st, 4);
		break;
	case 8:
		for (i = 0; i < n; i++)
			memcpy(dst + 8 * i, src + 8 * i * st, 8);
		break;
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + es * i, src + (int64_t)es * i * st, es);
		break;
	}
}

/**
 * npr_view_copy() - gather the elements of a strided view densely
 * @v: the view, planned for the input @src.
 * @es: element size in bytes.
 * @src: input elements.
 * @dst: output, room for the product of @v->dim elements.
 *
 * Context: any thread; reads @v only.
 */
void npr_view_copy(const struct npr_view *v, size_t es, const void *src,
		   void *dst)
{
	int64_t idx[NPR_VIEW_MAX_RANK] = { 0 };
	int64_t rows = 1, row, n, st, off = v->base;
	const char *s = src;
	char *d = dst;
	int r = v->rank, i;

	for (i = 0; i < r; i++)
		if (!v->dim[i])
			return;
	if (!r) {
		memcpy(d, s + off * (int64_t)es, es);
		return;
	}
	for (i = 0; i < r - 1; i++)
		rows *= v->dim[i];
	n = v->dim[r - 1];
	st = v->stride[r - 1];
	for (row = 0; row < rows; row++) {
		copy_row(d, s + off * (int64_t)es, n, st, es);
		d += (size_t)n * es;
		for (i = r - 2; i >= 0; i--) {
			off += v->stride[i];
			if (++idx[i] < v->dim[i])
				break;
			off -= v->stride[i] * v->dim[i];
			idx[i] = 0;
		}
	}
}

static int view_eval(const struct npr_node *n, const struct npr_view *v,
		     const struct npr_tensor *in, struct npr_tensor *out)
{
	size_t es = npr_elem_size(out->type);

	if (!es || in[0].type != out->type)
		return npr_node_err(n, -EINVAL, "element type %s cannot be copied",
				    npr_elem_name(out->type));
	if (in[0].nbytes < (size_t)v->in_numel * es)
		return npr_node_err(n, -EINVAL,
				    "input has %zu bytes, the plan needs %lld elements",
				    in[0].nbytes, (long long)v->in_numel);
	npr_view_copy(v, es, in[0].data, out->data);
	return 0;
}

/**
 * npr_ref_copy() - Reshape, Squeeze, Unsqueeze: the elements are unchanged
 * @n: the node.
 * @in: inputs; only the first is read.
 * @out: one output with as many bytes as the input.
 *
 * Return: 0.
 */
int npr_ref_copy(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	size_t bytes = out->nbytes < in[0].nbytes ? out->nbytes : in[0].nbytes;

	(void)n;
	if (out->data != in[0].data && bytes)
		memcpy(out->data, in[0].data, bytes);
	return 0;
}

struct concat_job {
	const struct npr_node *n;
	const struct npr_tensor *in;
	char *d;
	size_t inner, row;	/* bytes per axis step; per output row */
	int ax;
};

/* output row @o (everything before the axis fixed) */
static void concat_one(const struct concat_job *j, int64_t o)
{
	char *d = j->d + (size_t)o * j->row;
	int i;

	for (i = 0; i < j->n->nin; i++) {
		size_t chunk = j->inner * j->in[i].shape.d[j->ax];

		if (!chunk)
			continue;
		memcpy(d, (const char *)j->in[i].data + (size_t)o * chunk,
		       chunk);
		d += chunk;
	}
}

static void concat_row(void *arg, int o, int tid)
{
	(void)tid;
	concat_one(arg, o);
}

/**
 * npr_ref_concat() - join the inputs along the axis infer normalised
 * @n: the node; params struct npr_concat_params.
 * @in: n->nin inputs of one type, equal but for the axis dimension.
 * @out: the output.
 *
 * Return: 0, or -EINVAL if the element type has no byte size.
 */
int npr_ref_concat(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_concat_params *p = n->params;
	size_t es = npr_elem_size(out->type), inner = es;
	struct concat_job j = { .n = n, .in = in, .d = out->data, .ax = p->ax };
	int64_t outer = 1, o;
	int i;

	if (!es)
		return npr_node_err(n, -EINVAL, "element type %s cannot be copied",
				    npr_elem_name(out->type));
	for (i = 0; i < p->ax; i++)
		outer *= out->shape.d[i];
	for (i = p->ax + 1; i < out->shape.rank; i++)
		inner *= out->shape.d[i];
	j.inner = inner;
	j.row = inner * out->shape.d[p->ax];
	/* rows of at least 64 KiB over the threads (a batch's images) */
	if (outer > 1 && outer <= INT32_MAX && j.row >= 65536) {
		npr_parallel_for((int)outer, concat_row, &j);
		return 0;
	}
	for (o = 0; o < outer; o++)
		concat_one(&j, o);
	return 0;
}

/**
 * npr_ref_transpose() - permute the dimensions
 * @n: the node; params struct npr_view_params.
 * @in: data, order.
 * @out: the output.
 *
 * Return: 0, or -EINVAL if the input does not match the plan.
 */
int npr_ref_transpose(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_view_params *p = n->params;

	return view_eval(n, &p->view, in, out);
}

/**
 * npr_ref_strided_slice() - StridedSlice along the view infer planned
 * @n: the node; params struct npr_strided_slice_params.
 * @in: data, begin, end[, stride].
 * @out: the output.
 *
 * Return: 0, or -EINVAL if the input does not match the plan.
 */
int npr_ref_strided_slice(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out)
{
	const struct npr_strided_slice_params *p = n->params;

	return view_eval(n, &p->view, in, out);
}

/**
 * npr_ref_slice() - Slice-8 along the view infer planned
 * @n: the node; params struct npr_view_params.
 * @in: data, start, stop, step[, axes].
 * @out: the output.
 *
 * Return: 0, or -EINVAL if the input does not match the plan.
 */
int npr_ref_slice(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_view_params *p = n->params;

	return view_eval(n, &p->view, in, out);
}

/**
 * npr_ref_tile() - repeat the input along every dimension
 * @n: the node; params struct npr_view_params.
 * @in: data, repeats.
 * @out: the output.
 *
 * Return: 0, or -EINVAL if the input does not match the plan.
 */
int npr_ref_tile(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	const struct npr_view_params *p = n->params;

	return view_eval(n, &p->view, in, out);
}

/**
 * npr_ref_broadcast() - replicate the input to the target shape
 * @n: the node; params struct npr_broadcast_params.
 * @in: data, target_shape[, axes_mapping].
 * @out: the output.
 *
 * Return: 0, or -EINVAL if the input does not match the plan.
 */
int npr_ref_broadcast(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_broadcast_params *p = n->params;

	return view_eval(n, &p->view, in, out);
}

/**
 * npr_ref_shape_of() - write the input's shape
 * @n: the node.
 * @in: any tensor.
 * @out: 1-D, i32 or i64, one element per input dimension.
 *
 * Return: 0, or -EINVAL for another output type.
 */
int npr_ref_shape_of(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	int err = npr_convert(out->data, out->type, in[0].shape.d,
			      NPR_ELEM_I64, in[0].shape.rank);

	if (err)
		return npr_node_err(n, err, "cannot write a shape as %s",
				    npr_elem_name(out->type));
	return 0;
}

/**
 * npr_ref_gather() - take slices along an axis by index
 * @n: the node; params struct npr_gather_params (normalised by infer).
 * @in: data, indices (i32 or i64), axis.
 * @out: the output.
 *
 * Indices out of range produce zeros.  Negative indices count from the end
 * in Gather-8; Gather-1 and -7 allow [0, dim) only, so a negative index
 * gives zeros there (as OpenVINO does for the -1 rows NonMaxSuppression
 * pads its output with).
 *
 * Return: 0, or -EINVAL for an unsupported element or index type.
 */
int npr_ref_gather(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_gather_params *p = n->params;
	const struct npr_shape *ds = &in[0].shape, *is = &in[1].shape;
	size_t es = npr_elem_size(out->type), chunk;
	int64_t batch = 1, mid = 1, inner = 1, nidx = 1, dim;
	int64_t b, m, j;
	bool wide = in[1].type == NPR_ELEM_I64;
	const void *ix = in[1].data;
	const char *src = in[0].data;
	char *d = out->data;
	int i;

	if (!es)
		return npr_node_err(n, -EINVAL, "element type %s cannot be copied",
				    npr_elem_name(out->type));
	if (!wide && in[1].type != NPR_ELEM_I32)
		return npr_node_err(n, -EINVAL, "indices of type %s",
				    npr_elem_name(in[1].type));
	dim = ds->d[p->axis];
	for (i = 0; i < p->bd; i++)
		batch *= ds->d[i];
	for (i = p->bd; i < p->axis; i++)
		mid *= ds->d[i];
	for (i = p->axis + 1; i < ds->rank; i++)
		inner *= ds->d[i];
	for (i = p->bd; i < is->rank; i++)
		nidx *= is->d[i];
	chunk = (size_t)inner * es;
	if (!chunk)
		return 0;
	for (b = 0; b < batch; b++) {
		for (m = 0; m < mid; m++) {
			const char *row = src + ((b * mid + m) * dim) * chunk;

			for (j = 0; j < nidx; j++) {
				int64_t k = b * nidx + j;
				int64_t x = wide ? ((const int64_t *)ix)[k] :
					    ((const int32_t *)ix)[k];

				if (x < 0 && n->version >= 8)
					x += dim;
				if (x < 0 || x >= dim)
					memset(d, 0, chunk);
				else
					memcpy(d, row + x * chunk, chunk);
				d += chunk;
			}
		}
	}
	return 0;
}

static bool int_type(unsigned int t)
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

/**
 * npr_ref_range() - start, start + step, ... for as many elements as the
 *                   output has
 * @n: the node.
 * @in: start, stop, step: one element each, any numeric types.
 * @out: 1-D output; its length was computed by infer.
 *
 * With an integer output and integer inputs the values are computed in
 * 64-bit integers; otherwise in double and converted (integers truncate).
 *
 * Return: 0, or -EINVAL for non-numeric types.
 */
int npr_ref_range(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	int64_t cnt = out->shape.d[0], i, k, ist, istep;
	size_t es = npr_elem_size(out->type);
	double fst, fstep;
	char *d = out->data;
	int err = 0;

	if (!es)
		return npr_node_err(n, -EINVAL, "output type %s",
				    npr_elem_name(out->type));
	if (int_type(out->type) && int_type(in[0].type) &&
	    int_type(in[2].type)) {
		int64_t buf[64];

		err = npr_convert(&ist, NPR_ELEM_I64, in[0].data, in[0].type,
				  1);
		err = err ? err : npr_convert(&istep, NPR_ELEM_I64, in[2].data,
					      in[2].type, 1);
		for (i = 0; !err && i < cnt; i += k) {
			/* unsigned: wraps instead of overflowing */
			for (k = 0; k < 64 && i + k < cnt; k++)
				buf[k] = (int64_t)((uint64_t)ist +
						   (uint64_t)(i + k) *
						   (uint64_t)istep);
			err = npr_convert(d + i * es, out->type, buf,
					  NPR_ELEM_I64, k);
		}
	} else {
		double buf[64];

		err = npr_convert(&fst, NPR_ELEM_F64, in[0].data, in[0].type,
				  1);
		err = err ? err : npr_convert(&fstep, NPR_ELEM_F64, in[2].data,
					      in[2].type, 1);
		for (i = 0; !err && i < cnt; i += k) {
			for (k = 0; k < 64 && i + k < cnt; k++)
				buf[k] = fst + (double)(i + k) * fstep;
			err = npr_convert(d + i * es, out->type, buf,
					  NPR_ELEM_F64, k);
		}
	}
	if (err)
		return npr_node_err(n, err, "cannot compute a range of %s",
				    npr_elem_name(out->type));
	return 0;
}

/**
 * npr_ref_split() - Split and VariadicSplit: cut the input along an axis
 * @n: the node; params struct npr_split_params (axis set by infer).
 * @in: data, axis[, split_lengths].
 * @out: n->nout outputs; output i gets the next out[i].shape.d[axis]
 *       slices.
 *
 * Return: 0, or -EINVAL if the outputs do not add up to the input.
 */
int npr_ref_split(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_split_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	size_t es = npr_elem_size(in[0].type), inner = es;
	int64_t outer = 1, dim = s->d[p->axis], sum = 0, o, off;
	const char *src = in[0].data;
	int i, j;

	if (!es)
		return npr_node_err(n, -EINVAL, "element type %s cannot be copied",
				    npr_elem_name(in[0].type));
	for (j = 0; j < n->nout; j++)
		sum += out[j].shape.d[p->axis];
	if (sum != dim)
		return npr_node_err(n, -EINVAL,
				    "outputs take %lld slices of %lld",
				    (long long)sum, (long long)dim);
	for (i = 0; i < p->axis; i++)
		outer *= s->d[i];
	for (i = p->axis + 1; i < s->rank; i++)
		inner *= s->d[i];
	for (o = 0; o < outer; o++) {
		off = 0;
		for (j = 0; j < n->nout; j++) {
			int64_t len = out[j].shape.d[p->axis];
			size_t chunk = (size_t)len * inner;

			if (chunk)
				memcpy((char *)out[j].data + o * chunk,
				       src + (o * dim + off) * inner, chunk);
			off += len;
		}
	}
	return 0;
}

/* Input index of output index @o along a padded dimension, -1 for the
 * constant. */
static int64_t pad_src(int mode, int64_t o, int64_t pb, int64_t dim)
{
	int64_t i = o - pb;

	if (i >= 0 && i < dim)
		return i;
	switch (mode) {
	case NPR_PAD_MODE_EDGE:
		return i < 0 ? 0 : dim - 1;
	case NPR_PAD_MODE_REFLECT:
		return i < 0 ? -i : 2 * (dim - 1) - i;
	case NPR_PAD_MODE_SYMMETRIC:
		return i < 0 ? -i - 1 : 2 * dim - 1 - i;
	default:
		return -1;
	}
}

static void fill(char *d, const char *val, int64_t n, size_t es)
{
	int64_t i;

	for (i = 0; i < n; i++)
		memcpy(d + i * es, val, es);
}

/**
 * npr_ref_pad() - Pad-1 and Pad-12 in all four modes
 * @n: the node; params struct npr_pad_params (pads set by infer).
 * @in: data, pads_begin, pads_end[, pad_value].
 * @out: the output.
 *
 * Return: 0, -ENOMEM, or -EINVAL if the pad value cannot be converted.
 */
int npr_ref_pad(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out)
{
	const struct npr_pad_params *p = n->params;
	const struct npr_shape *is = &in[0].shape, *os = &out->shape;
	size_t es = npr_elem_size(out->type);
	int64_t ist[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t *map[NPR_MAX_RANK], *buf, total = 0, rows = 1, row, s = 1;
	int64_t last, lo, hi, pb;
	char val[16] = { 0 }, *d = out->data;
	const char *src = in[0].data;
	int r = os->rank, i;

	if (!es || es > sizeof(val))
		return npr_node_err(n, -EINVAL, "element type %s cannot be copied",
				    npr_elem_name(out->type));
	if (p->mode == NPR_PAD_MODE_CONSTANT && n->nin > 3 &&
	    npr_convert(val, out->type, in[3].data, in[3].type, 1))
		return npr_node_err(n, -EINVAL, "pad value of type %s",
				    npr_elem_name(in[3].type));
	if (npr_shape_numel(os) <= 0)
		return 0;
	if (!r) {
		memcpy(d, src, es);
		return 0;
	}
	for (i = r - 1; i >= 0; i--) {
		ist[i] = s;
		s *= is->d[i];
		total += os->d[i];
	}
	buf = malloc(sizeof(*buf) * total);
	if (!buf)
		return -ENOMEM;
	for (i = 0, total = 0; i < r; i++) {
		int64_t o;

		map[i] = buf + total;
		total += os->d[i];
		for (o = 0; o < os->d[i]; o++)
			map[i][o] = pad_src(p->mode, o, p->pb[i], is->d[i]);
	}
	for (i = 0; i < r - 1; i++)
		rows *= os->d[i];
	last = os->d[r - 1];
	/* the part of a row that is a plain copy */
	pb = p->pb[r - 1];
	lo = pb > 0 ? pb : 0;
	hi = pb + is->d[r - 1];
	hi = hi < last ? hi : last;
	for (row = 0; row < rows; row++) {
		int64_t off = 0, o;
		bool pad = false;

		for (i = 0; i < r - 1; i++) {
			int64_t x = map[i][idx[i]];

			if (x < 0)
				pad = true;
			else
				off += x * ist[i];
		}
		if (pad) {
			fill(d, val, last, es);
		} else {
			const char *srow = src + off * (int64_t)es;

			for (o = 0; o < last; o++) {
				int64_t x;

				if (o == lo && hi > lo) {
					memcpy(d + o * es, srow + (o - pb) * es,
					       (hi - lo) * es);
					o = hi - 1;
					continue;
				}
				x = map[r - 1][o];
				if (x < 0)
					memcpy(d + o * es, val, es);
				else
					memcpy(d + o * es, srow + x * es, es);
			}
		}
		d += last * es;
		for (i = r - 2; i >= 0; i--) {
			if (++idx[i] < os->d[i])
				break;
			idx[i] = 0;
		}
	}
	free(buf);
	return 0;
}

/* The op definitions of lib/ops/shape.c these kernels evaluate. */
const struct npr_kernel npr_kernels_shape[] = {
	{ "Concat", 0, 1, npr_ref_concat },
	{ "Reshape", 0, 1, npr_ref_copy },
	{ "Squeeze", 0, 1, npr_ref_copy },
	{ "Unsqueeze", 0, 1, npr_ref_copy },
	{ "Transpose", 0, 1, npr_ref_transpose },
	{ "ShapeOf", 0, 3, npr_ref_shape_of },
	{ "StridedSlice", 0, 1, npr_ref_strided_slice },
	{ "Slice", 8, 8, npr_ref_slice },
	{ "Gather", 0, 8, npr_ref_gather },
	{ "Range", 0, 4, npr_ref_range },
	{ "Tile", 0, 1, npr_ref_tile },
	{ "Split", 0, 1, npr_ref_split },
	{ "VariadicSplit", 0, 1, npr_ref_split },
	{ "Broadcast", 0, 3, npr_ref_broadcast },
	{ "Pad", 0, 12, npr_ref_pad },
	{ NULL },
};
