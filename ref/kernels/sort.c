// SPDX-License-Identifier: MIT
/*
 * Reference kernels of TopK and NonMaxSuppression (lib/ops/sort.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elem.h"
#include "sort.h"
#include "registry.h"

/* An element to sort: its key and original index. */
struct item {
	double key;
	int64_t idx;
};

/* a before b: larger key first when @desc, NaN above all; ties by index */
static bool before(const struct item *a, const struct item *b, bool desc)
{
	bool an = isnan(a->key), bn = isnan(b->key);

	if (an != bn)
		return desc ? an : bn;
	if (!an && a->key != b->key)
		return desc ? a->key > b->key : a->key < b->key;
	return a->idx < b->idx;
}

/* Stable merge sort of @v (@n items) with scratch @tmp. */
static void sort_items(struct item *v, struct item *tmp, int64_t n,
		       bool by_index, bool desc)
{
	int64_t w, i;

	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			int64_t a = i, m = i + w < n ? i + w : n;
			int64_t b = m, e = i + 2 * w < n ? i + 2 * w : n;
			int64_t k = i;

			while (a < m && b < e) {
				bool take_b = by_index ?
					      v[b].idx < v[a].idx :
					      before(&v[b], &v[a], desc);

				tmp[k++] = take_b ? v[b++] : v[a++];
			}
			while (a < m)
				tmp[k++] = v[a++];
			while (b < e)
				tmp[k++] = v[b++];
		}
		memcpy(v, tmp, sizeof(*v) * n);
	}
}

/**
 * npr_ref_topk() - TopK-1/-3/-11
 * @n: the node; params struct npr_sort_params, @ax and @k set.
 * @in: data, k.
 * @out: values (data type), indices (i32 or i64).
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_topk(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	const struct npr_sort_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t outer = npr_dims_prod(s, 0, p->ax), dim = s->d[p->ax];
	int64_t inner = npr_dims_prod(s, p->ax + 1, s->rank), o, i, j;
	size_t es = npr_elem_size(in[0].type);
	struct item *v, *tmp;

	if (!p->k || !outer || !inner)
		return 0;
	v = malloc(sizeof(*v) * dim);
	tmp = malloc(sizeof(*tmp) * dim);
	if (!v || !tmp) {
		free(v);
		free(tmp);
		return -ENOMEM;
	}
	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			for (j = 0; j < dim; j++) {
				v[j].key = npr_ld(in[0].type, in[0].data,
						  (o * dim + j) * inner + i);
				v[j].idx = j;
			}
			sort_items(v, tmp, dim, false, p->largest);
			if (p->sort == NPR_TOPK_SORT_INDEX)
				sort_items(v, tmp, p->k, true, false);
			for (j = 0; j < p->k; j++) {
				int64_t d = (o * p->k + j) * inner + i;
				int64_t sidx = (o * dim + v[j].idx) * inner + i;

				const char *from = in[0].data;

				memcpy((char *)out[0].data + d * es,
				       from + sidx * es, es);
				npr_st(out[1].type, out[1].data, d,
				       (double)v[j].idx);
			}
		}
	}
	free(v);
	free(tmp);
	return 0;
}

struct box {
	double y0, x0, y1, x1;
};

static struct box get_box(const struct npr_tensor *t, int64_t base,
			  bool center)
{
	double a = npr_ld(t->type, t->data, base);
	double b = npr_ld(t->type, t->data, base + 1);
	double c = npr_ld(t->type, t->data, base + 2);
	double d = npr_ld(t->type, t->data, base + 3);
	struct box r;

	if (center) {	/* x_center, y_center, width, height */
		r.x0 = a - c / 2;
		r.x1 = a + c / 2;
		r.y0 = b - d / 2;
		r.y1 = b + d / 2;
	} else {	/* y1, x1, y2, x2: any two opposite corners */
		r.y0 = fmin(a, c);
		r.y1 = fmax(a, c);
		r.x0 = fmin(b, d);
		r.x1 = fmax(b, d);
	}
	return r;
}

static double iou(const struct box *a, const struct box *b)
{
	double aa = (a->y1 - a->y0) * (a->x1 - a->x0);
	double ab = (b->y1 - b->y0) * (b->x1 - b->x0);
	double h, w, inter;

	if (aa <= 0 || ab <= 0)
		return 0;
	h = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
	w = fmin(a->x1, b->x1) - fmax(a->x0, b->x0);
	if (h <= 0 || w <= 0)
		return 0;
	inter = h * w;
	return inter / (aa + ab - inter);
}

struct sel {
	int64_t batch, cls, box;
	double score;
};

/* Stable sort of the selections by score, descending. */
static void sort_sel(struct sel *v, struct sel *tmp, int64_t n)
{
	int64_t w, i;

	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			int64_t a = i, m = i + w < n ? i + w : n;
			int64_t b = m, e = i + 2 * w < n ? i + 2 * w : n;
			int64_t k = i;

			while (a < m && b < e)
				tmp[k++] = v[b].score > v[a].score ? v[b++] :
					   v[a++];
			while (a < m)
				tmp[k++] = v[a++];
			while (b < e)
				tmp[k++] = v[b++];
		}
		memcpy(v, tmp, sizeof(*v) * n);
	}
}

static double scalar_in(const struct npr_node *n, const struct npr_tensor *in,
			int i, double def)
{
	if (i >= n->nin)
		return def;
	return npr_ld(in[i].type, in[i].data, 0);
}

/**
 * npr_ref_nms() - NonMaxSuppression-1/-3/-4/-5/-9
 * @n: the node; params struct npr_sort_params.
 * @in: boxes, scores, [max_output_boxes_per_class, iou_threshold,
 *      score_threshold, soft_nms_sigma].
 * @out: selected_indices, [selected_scores, valid_outputs].
 *
 * Per batch and class, greedily: take the box of highest score (the lower
 * index on ties); stop if it is below score_threshold or enough boxes were
 * taken; drop every remaining box whose IOU with it exceeds iou_threshold
 * and, with soft_nms_sigma > 0, scale the others' scores by
 * exp(-0.5 * iou^2 / sigma).
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_nms(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out)
{
	const struct npr_sort_params *p = n->params;
	int64_t nb = in[0].shape.d[0], nbox = in[0].shape.d[1];
	int64_t ncls = in[1].shape.d[1], rows = out[0].shape.d[0];
	double iou_thr = scalar_in(n, in, 3, 0);
	double score_thr = scalar_in(n, in, 4, 0);
	double sigma = scalar_in(n, in, 5, 0);
	int64_t b, c, i, j, nsel = 0;
	struct sel *sel, *tmp;
	struct box *boxes;
	double *score;
	bool *alive;
	int err = 0;

	sel = calloc(rows + 1, sizeof(*sel));
	tmp = calloc(rows + 1, sizeof(*tmp));
	boxes = calloc(nbox + 1, sizeof(*boxes));
	score = calloc(nbox + 1, sizeof(*score));
	alive = calloc(nbox + 1, sizeof(*alive));
	if (!sel || !tmp || !boxes || !score || !alive) {
		err = -ENOMEM;
		goto out;
	}
	for (b = 0; b < nb; b++) {
		for (i = 0; i < nbox; i++)
			boxes[i] = get_box(&in[0], (b * nbox + i) * 4,
					   p->center);
		for (c = 0; c < ncls; c++) {
			int64_t taken = 0;

			for (i = 0; i < nbox; i++) {
				score[i] = npr_ld(in[1].type, in[1].data,
						  (b * ncls + c) * nbox + i);
				alive[i] = !isnan(score[i]);
			}
			while (taken < p->max_per_class && nsel < rows) {
				int64_t best = -1;

				for (i = 0; i < nbox; i++) {
					if (!alive[i])
						continue;
					if (best < 0 || score[i] > score[best])
						best = i;
				}
				if (best < 0 || score[best] < score_thr)
					break;
				alive[best] = false;
				sel[nsel++] = (struct sel){ b, c, best,
							    score[best] };
				taken++;
				for (j = 0; j < nbox; j++) {
					double v;

					if (!alive[j])
						continue;
					v = iou(&boxes[best], &boxes[j]);
					if (v > iou_thr)
						alive[j] = false;
					else if (sigma > 0)
						score[j] *= exp(-0.5 * v * v /
								sigma);
				}
			}
		}
	}
	if (p->sort_desc)
		sort_sel(sel, tmp, nsel);
	for (i = 0; i < rows; i++) {
		bool ok = i < nsel;
		double v[3] = { ok ? sel[i].batch : -1, ok ? sel[i].cls : -1,
				ok ? sel[i].box : -1 };

		for (j = 0; j < 3; j++)
			npr_st(out[0].type, out[0].data, i * 3 + j, v[j]);
		if (n->nout < 3)
			continue;
		v[2] = ok ? sel[i].score : -1;
		for (j = 0; j < 3; j++)
			npr_st(out[1].type, out[1].data, i * 3 + j, v[j]);
	}
	if (n->nout == 3)
		npr_st(out[2].type, out[2].data, 0, (double)nsel);
out:
	free(sel);
	free(tmp);
	free(boxes);
	free(score);
	free(alive);
	return err;
}

/* The op definitions of lib/ops/sort.c these kernels evaluate. */
const struct npr_kernel npr_kernels_sort[] = {
	{ "TopK", 0, 2, npr_ref_topk },
	{ "TopK", 3, 10, npr_ref_topk },
	{ "TopK", 11, 99, npr_ref_topk },
	{ "NonMaxSuppression", 0, 2, npr_ref_nms },
	{ "NonMaxSuppression", 3, 3, npr_ref_nms },
	{ "NonMaxSuppression", 4, 4, npr_ref_nms },
	{ "NonMaxSuppression", 5, 8, npr_ref_nms },
	{ "NonMaxSuppression", 9, 99, npr_ref_nms },
	{ NULL },
};
