// SPDX-License-Identifier: MIT
/*
 * Reference kernels for data-movement ops.  They copy elements by size and
 * never look at the values, so every byte-addressable type works.
 */
#include <errno.h>
#include <string.h>

#include "ops/shape.h"

int npr_ref_copy(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	if (out->data != in[0].data)
		memcpy(out->data, in[0].data, out->nbytes);
	return 0;
}

int npr_ref_concat(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_shape_params *p = n->params;
	size_t es = npr_elem_size(out->type), inner = es;
	int64_t outer = 1, o;
	char *d = out->data;
	int i;

	for (i = 0; i < p->axis; i++)
		outer *= out->shape.d[i];
	for (i = p->axis + 1; i < out->shape.rank; i++)
		inner *= out->shape.d[i];
	for (o = 0; o < outer; o++)
		for (i = 0; i < n->nin; i++) {
			size_t chunk = inner * in[i].shape.d[p->axis];

			memcpy(d, (const char *)in[i].data + o * chunk, chunk);
			d += chunk;
		}
	return 0;
}

int npr_ref_transpose(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_shape_params *p = n->params;
	size_t es = npr_elem_size(out->type);
	int r = out->shape.rank, i;
	int64_t ist[NPR_MAX_RANK], st[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t cnt = npr_shape_numel(&out->shape), k, off = 0, s = 1;
	const char *src = in[0].data;
	char *d = out->data;

	if (!cnt)
		return 0;
	for (i = r - 1; i >= 0; i--) {
		ist[i] = s;
		s *= in[0].shape.d[i];
	}
	for (i = 0; i < r; i++)
		st[i] = ist[p->perm[i]];
	for (k = 0; k < cnt; k++) {
		memcpy(d + k * es, src + off * es, es);
		for (i = r - 1; i >= 0; i--) {
			off += st[i];
			if (++idx[i] < out->shape.d[i])
				break;
			off -= st[i] * idx[i];
			idx[i] = 0;
		}
	}
	return 0;
}

int npr_ref_shape_of(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	return npr_convert(out->data, out->type, in[0].shape.d, NPR_ELEM_I64,
			   in[0].shape.rank);
}

int npr_ref_strided_slice(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out)
{
	const struct npr_shape_params *p = n->params;
	size_t es = npr_elem_size(out->type);
	int r = in[0].shape.rank, i;
	int64_t ist[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 }, s = 1, k, base = 0;
	int64_t cnt = npr_shape_numel(&out->shape);
	const char *src = in[0].data;
	char *d = out->data;

	if (!cnt)
		return 0;
	for (i = r - 1; i >= 0; i--) {
		ist[i] = s;
		s *= in[0].shape.d[i];
	}
	for (i = 0; i < r; i++)
		base += p->ss_start[i] * ist[i];
	for (k = 0; k < cnt; k++) {
		int64_t off = base;

		for (i = 0; i < r; i++)
			off += idx[i] * p->ss_step[i] * ist[i];
		memcpy(d + k * es, src + off * es, es);
		for (i = r - 1; i >= 0; i--) {
			if (++idx[i] < p->ss_len[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

int npr_ref_gather(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_shape_params *p = n->params;
	const struct npr_shape *ds = &in[0].shape, *is = &in[1].shape;
	size_t es = npr_elem_size(out->type);
	int64_t batch = 1, mid = 1, inner = 1, nidx = 1, D = ds->d[p->axis];
	int64_t b, m, j;
	int i;
	char *d = out->data;

	for (i = 0; i < p->batch_dims; i++)
		batch *= ds->d[i];
	for (i = p->batch_dims; i < p->axis; i++)
		mid *= ds->d[i];
	for (i = p->axis + 1; i < ds->rank; i++)
		inner *= ds->d[i];
	for (i = p->batch_dims; i < is->rank; i++)
		nidx *= is->d[i];
	for (b = 0; b < batch; b++)
		for (m = 0; m < mid; m++)
			for (j = 0; j < nidx; j++) {
				int64_t x = in[1].type == NPR_ELEM_I64 ?
					    ((const int64_t *)in[1].data)[b * nidx + j] :
					    ((const int32_t *)in[1].data)[b * nidx + j];
				size_t chunk = inner * es;

				if (x < 0)
					x += D;
				if (x < 0 || x >= D)
					memset(d, 0, chunk);
				else
					memcpy(d, (const char *)in[0].data +
					       (((b * mid + m) * D + x) * inner) * es,
					       chunk);
				d += chunk;
			}
	return 0;
}
