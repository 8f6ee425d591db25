// SPDX-License-Identifier: MIT
/*
 * Reference kernels for SSD detection: prior generation, box decoding,
 * per-class non-maximum suppression, and the top-k merge across classes.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/detect.h"

static float clamp01(float v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

static int64_t get_int(const struct npr_tensor *t, int i)
{
	switch (t->type) {
	case NPR_ELEM_I64: return ((const int64_t *)t->data)[i];
	case NPR_ELEM_I32: return ((const int32_t *)t->data)[i];
	case NPR_ELEM_F32: return (int64_t)((const float *)t->data)[i];
	}
	return 0;
}

int npr_ref_prior_box_clustered(const struct npr_node *n,
				const struct npr_tensor *in,
				struct npr_tensor *out)
{
	const struct npr_prior_params *p = n->params;
	int64_t H = get_int(&in[0], 0), W = get_int(&in[0], 1);
	float img_h = (float)get_int(&in[1], 0), img_w = (float)get_int(&in[1], 1);
	float step_w = p->step_w, step_h = p->step_h;
	int64_t h, w, total = 4 * H * W * p->num_priors;
	float *box = out->data, *var = box + total;
	int s, j;

	if (step_w == 0 && step_h == 0) {
		step_w = p->step;
		step_h = p->step;
	}
	if (step_w == 0 && step_h == 0) {
		step_w = img_w / (float)W;
		step_h = img_h / (float)H;
	}
	for (h = 0; h < H; h++)
		for (w = 0; w < W; w++) {
			float cx = ((float)w + p->offset) * step_w;
			float cy = ((float)h + p->offset) * step_h;

			for (s = 0; s < p->num_priors; s++) {
				int64_t idx = ((h * W + w) * p->num_priors + s) * 4;
				float bw = p->widths[s], bh = p->heights[s];
				float b[4] = {
					(cx - bw / 2) / img_w, (cy - bh / 2) / img_h,
					(cx + bw / 2) / img_w, (cy + bh / 2) / img_h,
				};

				for (j = 0; j < 4; j++) {
					box[idx + j] = p->clip ? clamp01(b[j]) : b[j];
					var[idx + j] = p->variance[p->nvar == 4 ? j : 0];
				}
			}
		}
	return 0;
}

int npr_ref_prior_box(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	return npr_node_err(n, -EOPNOTSUPP, "PriorBox is not implemented yet");
}

struct cand {
	float score;
	int prior;
	int label;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	/* stable tie order: lower label, then lower prior first */
	if (x->label != y->label)
		return x->label - y->label;
	return x->prior - y->prior;
}

static float iou(const float *a, const float *b)
{
	float ix0 = fmaxf(a[0], b[0]), iy0 = fmaxf(a[1], b[1]);
	float ix1 = fminf(a[2], b[2]), iy1 = fminf(a[3], b[3]);
	float iw = ix1 - ix0, ih = iy1 - iy0, inter, ua;

	if (iw <= 0 || ih <= 0)
		return 0;
	inter = iw * ih;
	ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) -
	     inter;
	return ua > 0 ? inter / ua : 0;
}

static void decode(const struct npr_detout_params *p, const float *prior,
		   const float *var, const float *l, float *o)
{
	float pb[4], v[4] = { 1, 1, 1, 1 };
	int j;

	for (j = 0; j < 4; j++)
		pb[j] = prior[j];
	if (!p->normalized) {
		pb[0] /= (float)p->in_w;
		pb[1] /= (float)p->in_h;
		pb[2] /= (float)p->in_w;
		pb[3] /= (float)p->in_h;
	}
	if (!p->var_in_target)
		for (j = 0; j < 4; j++)
			v[j] = var[j];
	switch (p->code) {
	case NPR_CODE_CORNER:
		for (j = 0; j < 4; j++)
			o[j] = pb[j] + l[j] * v[j];
		break;
	case NPR_CODE_CORNER_SIZE: {
		float pw = pb[2] - pb[0], ph = pb[3] - pb[1];

		o[0] = pb[0] + l[0] * v[0] * pw;
		o[1] = pb[1] + l[1] * v[1] * ph;
		o[2] = pb[2] + l[2] * v[2] * pw;
		o[3] = pb[3] + l[3] * v[3] * ph;
		break;
	}
	default: {
		float pw = pb[2] - pb[0], ph = pb[3] - pb[1];
		float pcx = (pb[0] + pb[2]) / 2, pcy = (pb[1] + pb[3]) / 2;
		float cx = v[0] * l[0] * pw + pcx, cy = v[1] * l[1] * ph + pcy;
		float w = expf(v[2] * l[2]) * pw, h = expf(v[3] * l[3]) * ph;

		o[0] = cx - w / 2;
		o[1] = cy - h / 2;
		o[2] = cx + w / 2;
		o[3] = cy + h / 2;
	}
	}
	if (p->clip_before)
		for (j = 0; j < 4; j++)
			o[j] = clamp01(o[j]);
}

int npr_ref_detection_output(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out)
{
	const struct npr_detout_params *p = n->params;
	int64_t N = in[0].shape.d[0], P = p->num_priors, C = p->num_classes;
	int64_t L = p->num_loc_classes, b, pi, c, k, rows = 0;
	int64_t total_rows = out->shape.d[2];
	const float *loc = in[0].data, *conf = in[1].data, *pri = in[2].data;
	float *boxes = malloc(sizeof(float) * 4 * P * L);
	struct cand *cands = malloc(sizeof(struct cand) * P);
	struct cand *kept = malloc(sizeof(struct cand) * P * C);
	char *suppressed = malloc(P);
	float *y = out->data;
	int err = 0;

	if (!boxes || !cands || !kept || !suppressed) {
		err = -ENOMEM;
		goto out;
	}
	for (b = 0; b < N; b++) {
		const float *pr = pri + (in[2].shape.d[0] > 1 ? b : 0) *
				  in[2].shape.d[1] * P * p->prior_size;
		const float *var = pr + P * p->prior_size;
		int64_t nkept = 0, off = p->normalized ? 0 : 1;

		for (pi = 0; pi < P; pi++)
			for (c = 0; c < L; c++)
				decode(p, pr + pi * p->prior_size + off,
				       var + pi * 4,
				       loc + (b * P + pi) * L * 4 + c * 4,
				       boxes + (pi * L + c) * 4);
		for (c = 0; c < C; c++) {
			int64_t nc = 0, lc = p->share_location ? 0 : c;

			if (c == p->background)
				continue;
			for (pi = 0; pi < P; pi++) {
				float s = conf[(b * P + pi) * C + c];

				if (s > p->conf_thr) {
					cands[nc].score = s;
					cands[nc].prior = (int)pi;
					cands[nc].label = (int)c;
					nc++;
				}
			}
			qsort(cands, nc, sizeof(*cands), cand_cmp);
			if (p->top_k > -1 && nc > p->top_k)
				nc = p->top_k;
			memset(suppressed, 0, nc);
			for (k = 0; k < nc; k++) {
				int64_t j;

				if (suppressed[k])
					continue;
				kept[nkept++] = cands[k];
				for (j = k + 1; j < nc; j++)
					if (!suppressed[j] &&
					    iou(boxes + (cands[k].prior * L + lc) * 4,
						boxes + (cands[j].prior * L + lc) * 4) >
					    p->nms_thr)
						suppressed[j] = 1;
			}
		}
		qsort(kept, nkept, sizeof(*kept), cand_cmp);
		if (p->keep_top_k > 0 && nkept > p->keep_top_k)
			nkept = p->keep_top_k;
		for (k = 0; k < nkept && rows < total_rows; k++, rows++) {
			int64_t lc = p->share_location ? 0 : kept[k].label;
			const float *bx = boxes + (kept[k].prior * L + lc) * 4;
			float *r = y + rows * 7;
			int j;

			r[0] = (float)b;
			r[1] = (float)(kept[k].label - (p->decrease_label ? 1 : 0));
			r[2] = kept[k].score;
			for (j = 0; j < 4; j++)
				r[3 + j] = p->clip_after ? clamp01(bx[j]) : bx[j];
		}
	}
	for (; rows < total_rows; rows++) {
		float *r = y + rows * 7;

		r[0] = -1;
		memset(r + 1, 0, sizeof(float) * 6);
	}
out:
	free(boxes);
	free(cands);
	free(kept);
	free(suppressed);
	return err;
}
