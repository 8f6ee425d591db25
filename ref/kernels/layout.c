// SPDX-License-Identifier: MIT
/*
 * Reference kernels of the layout ops (lib/ops/layout.h).
 */
#include <errno.h>
#include <string.h>

#include "ops/elem.h"
#include "layout.h"
#include "registry.h"

/**
 * npr_ref_permute() - transpose the reshaped input planned by infer
 * @n: the node; params struct npr_layout_params.
 * @in: the data.
 * @out: the data in permuted order.
 *
 * Return: 0.
 */
int npr_ref_permute(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_layout_params *p = n->params;
	int64_t ist[NPR_LAYOUT_MAX_RANK], od[NPR_LAYOUT_MAX_RANK];
	int64_t os[NPR_LAYOUT_MAX_RANK], idx[NPR_LAYOUT_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(&in->shape), k, off = 0, acc = 1;
	size_t es = npr_elem_size(in->type);
	const char *src = in->data;
	char *d = out->data;
	int i;

	for (i = p->rank - 1; i >= 0; i--) {
		ist[i] = acc;
		acc *= p->dim[i];
	}
	for (i = 0; i < p->rank; i++) {
		od[i] = p->dim[p->perm[i]];
		os[i] = ist[p->perm[i]];
	}
	for (k = 0; k < total; k++) {
		memcpy(d + k * es, src + off * es, es);
		for (i = p->rank - 1; i >= 0; i--) {
			off += os[i];
			if (++idx[i] < od[i])
				break;
			off -= os[i] * od[i];
			idx[i] = 0;
		}
	}
	return 0;
}

/**
 * npr_ref_reorg_yolo() - ReorgYolo-2 (the Darknet reorg layer)
 * @n: the node; params struct npr_layout_params, @block is the stride.
 * @in: [N, C, H, W].
 * @out: [N, C * s^2, H / s, W / s].
 *
 * For every (b, k, j, i) of [N, C, H, W], with c2 = k % (C / s^2) and
 * off = k / (C / s^2): output element ((b * C + k) * H + j) * W + i is
 * the input element at (b, c2, j * s + off / s, i * s + off % s) of the
 * input read as [N, C / s^2, H * s, W * s].
 *
 * Return: 0.
 */
int npr_ref_reorg_yolo(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out)
{
	const struct npr_layout_params *p = n->params;
	const struct npr_shape *s = &in->shape;
	int64_t nb = s->d[0], c = s->d[1], h = s->d[2], w = s->d[3];
	int64_t st = p->block, oc = c / (st * st), b, k, j, i;
	size_t es = npr_elem_size(in->type);
	const char *src = in->data;
	char *d = out->data;

	for (b = 0; b < nb; b++)
		for (k = 0; k < c; k++)
			for (j = 0; j < h; j++)
				for (i = 0; i < w; i++) {
					int64_t c2 = k % oc, off = k / oc;
					int64_t w2 = i * st + off % st;
					int64_t h2 = j * st + off / st;
					int64_t from = w2 + w * st *
						(h2 + h * st * (c2 + oc * b));
					int64_t to = i + w * (j + h *
						(k + c * b));

					memcpy(d + to * es, src + from * es,
					       es);
				}
	return 0;
}

/* The op definitions of lib/ops/layout.c these kernels evaluate. */
const struct npr_kernel npr_kernels_layout[] = {
	{ "DepthToSpace", 0, 99, npr_ref_permute },
	{ "SpaceToDepth", 0, 99, npr_ref_permute },
	{ "ShuffleChannels", 0, 99, npr_ref_permute },
	{ "ReorgYolo", 0, 99, npr_ref_reorg_yolo },
	{ NULL },
};
