// SPDX-License-Identifier: MIT
/*
 * Reference kernels for SSD detection: prior generation, box decoding,
 * per-class non-maximum suppression, and the top-k merge across classes.
 *
 * Coordinates are [xmin, ymin, xmax, ymax], normalized to the image.
 * Prior outputs are [2, 4 * H * W * priors]: row 0 the boxes, cell by
 * cell in row-major order and prior by prior inside a cell; row 1 the
 * variances of each coordinate.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "registry.h"

static float clamp01(float v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Read [height, width] from a two-element integer (or float) tensor. */
static int read_hw(const struct npr_node *n, const struct npr_tensor *t,
		   int input, int64_t *hw)
{
	if (npr_shape_numel(&t->shape) != 2 ||
	    t->nbytes < npr_tensor_bytes(t->type, 2) ||
	    npr_convert(hw, NPR_ELEM_I64, t->data, t->type, 2))
		return npr_node_err(n, -EINVAL,
				    "input %d must hold two numbers [height, width]",
				    input);
	if (hw[0] < 1 || hw[1] < 1)
		return npr_node_err(n, -EINVAL,
				    "input %d = [%lld, %lld] is not a size",
				    input, (long long)hw[0], (long long)hw[1]);
	return 0;
}

/* Check that the output holds [2, 4 * cells * priors] f32 values. */
static int check_prior_out(const struct npr_node *n,
			   const struct npr_tensor *out, int64_t cells,
			   int64_t priors)
{
	int64_t len = 4 * cells * priors;

	if (out->type != NPR_ELEM_F32 || out->shape.rank != 2 ||
	    out->shape.d[0] != 2 || out->shape.d[1] != len ||
	    out->nbytes < (size_t)len * 2 * sizeof(float))
		return npr_node_err(n, -EINVAL,
				    "output does not match %lld cells x %lld priors",
				    (long long)cells, (long long)priors);
	return 0;
}

/* Second output row: per box the 4 variances (or 1 value repeated). */
static void fill_variances(float *var, int64_t nboxes, const float *v,
			   int nv)
{
	int64_t i;
	int j;

	for (i = 0; i < nboxes; i++)
		for (j = 0; j < 4; j++)
			var[i * 4 + j] = v[nv == 4 ? j : 0];
}

/* ---- PriorBoxClustered ------------------------------------------------ */

/**
 * npr_ref_prior_box_clustered() - PriorBoxClustered-1
 * @n: the node; n->params is a struct npr_prior_clustered_params.
 * @in: [output_size] and optionally [image_size], two numbers each.
 * @out: [2, 4 * H * W * sizes] f32: boxes, then variances.
 *
 * Box s of the cell (h, w) is centred at ((w + offset) * step_w,
 * (h + offset) * step_h), width[s] x height[s] pixels, divided by the
 * image size.  Steps default to the image size over the map size.
 *
 * Return: 0, or -EINVAL when the tensors do not match the inferred shape.
 */
int npr_ref_prior_box_clustered(const struct npr_node *n,
				const struct npr_tensor *in,
				struct npr_tensor *out)
{
	const struct npr_prior_clustered_params *p = n->params;
	int64_t fm[2], img[2] = { 0, 0 }, H, W, h, w, cells;
	float img_w, img_h, step_w, step_h, *box;
	int s, j, err;

	err = read_hw(n, &in[0], 0, fm);
	if (!err && n->nin > 1)
		err = read_hw(n, &in[1], 1, img);
	if (err)
		return err;
	H = fm[0];
	W = fm[1];
	cells = H * W;
	err = check_prior_out(n, out, cells, p->nsizes);
	if (err)
		return err;
	img_w = p->img_w > 0 ? p->img_w : (float)img[1];
	img_h = p->img_h > 0 ? p->img_h : (float)img[0];
	if (!(img_w > 0) || !(img_h > 0))
		return npr_node_err(n, -EINVAL, "the image size is unknown");

	step_w = p->step_w;
	step_h = p->step_h;
	if (step_w == 0 && step_h == 0) {
		step_w = p->step;
		step_h = p->step;
	}
	if (step_w == 0 && step_h == 0) {
		step_w = img_w / (float)W;
		step_h = img_h / (float)H;
	}

	box = out->data;
	for (h = 0; h < H; h++) {
		for (w = 0; w < W; w++) {
			float cx = ((float)w + p->offset) * step_w;
			float cy = ((float)h + p->offset) * step_h;

			for (s = 0; s < p->nsizes; s++) {
				float hw = p->width[s] / 2;
				float hh = p->height[s] / 2;

				box[0] = (cx - hw) / img_w;
				box[1] = (cy - hh) / img_h;
				box[2] = (cx + hw) / img_w;
				box[3] = (cy + hh) / img_h;
				if (p->clip)
					for (j = 0; j < 4; j++)
						box[j] = clamp01(box[j]);
				box += 4;
			}
		}
	}
	fill_variances(box, cells * p->nsizes, p->variance, p->nvariance);
	return 0;
}

/* ---- PriorBox --------------------------------------------------------- */

/**
 * npr_ref_prior_box() - PriorBox-1 and PriorBox-8
 * @n: the node; n->params is a struct npr_prior_box_params.
 * @in: [output_size] and [image_size], two numbers [height, width] each.
 * @out: [2, 4 * H * W * num_priors] f32: boxes, then variances.
 *
 * Cell centres are (w + offset) * step, or (w + 0.5) * image / map when
 * step is 0; npr_prior_box_cell() gives the boxes of a cell.  Without
 * scale_all_sizes (MXNet), min sizes and step are scaled by the image
 * height first.
 *
 * Return: 0, or -EINVAL when the tensors do not match the inferred shape.
 */
int npr_ref_prior_box(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_prior_box_params *p = n->params;
	float min_size[NPR_PRIOR_MAX], step, step_x, step_y;
	int64_t fm[2], img[2], H, W, h, w, cells;
	struct npr_prior_emitter e;
	int i, err;

	err = read_hw(n, &in[0], 0, fm);
	if (!err)
		err = read_hw(n, &in[1], 1, img);
	if (err)
		return err;
	H = fm[0];
	W = fm[1];
	cells = H * W;
	err = check_prior_out(n, out, cells, p->num_priors);
	if (err)
		return err;

	/* MXNet layout: sizes and step are fractions of the image height */
	step = p->step;
	for (i = 0; i < p->nmin; i++)
		min_size[i] = p->min_size[i];
	if (!p->scale_all_sizes) {
		step *= (float)img[0];
		for (i = 0; i < p->nmin; i++)
			min_size[i] *= (float)img[0];
	}
	if (step == 0) {
		step_x = (float)img[1] / (float)W;
		step_y = (float)img[0] / (float)H;
	} else {
		step_x = step;
		step_y = step;
	}

	e.dst = out->data;
	e.n = 0;
	e.inv_w = 1.0f / (float)img[1];
	e.inv_h = 1.0f / (float)img[0];
	for (h = 0; h < H; h++) {
		for (w = 0; w < W; w++) {
			float cx, cy;

			if (step == 0) {
				cx = ((float)w + 0.5f) * step_x;
				cy = ((float)h + 0.5f) * step_y;
			} else {
				cx = ((float)w + p->offset) * step_x;
				cy = ((float)h + p->offset) * step_y;
			}
			npr_prior_box_cell(&e, p, min_size, cx, cy);
		}
	}
	if (e.n != cells * p->num_priors)	/* cannot happen */
		return npr_node_err(n, -EINVAL, "prior count mismatch");
	if (p->clip) {
		float *b = out->data;
		int64_t k;

		for (k = 0; k < 4 * e.n; k++)
			b[k] = clamp01(b[k]);
	}
	fill_variances((float *)out->data + 4 * e.n, e.n, p->variance,
		       p->nvariance);
	return 0;
}

/* ---- DetectionOutput -------------------------------------------------- */

struct det {
	float score;
	int32_t label;
	int32_t prior;
};

/* Score descending, then prior and label ascending. */
static int det_by_score(const void *a, const void *b)
{
	const struct det *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->prior != y->prior)
		return x->prior < y->prior ? -1 : 1;
	return (x->label > y->label) - (x->label < y->label);
}

/* Output order: label ascending, then as det_by_score(). */
static int det_by_label(const void *a, const void *b)
{
	const struct det *x = a, *y = b;

	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	return det_by_score(a, b);
}

static float box_area(const float *b)
{
	if (b[2] < b[0] || b[3] < b[1])
		return 0;
	return (b[2] - b[0]) * (b[3] - b[1]);
}

/* Intersection over union of two boxes; 0 when they do not overlap. */
static float box_iou(const float *a, const float *b)
{
	float w = fminf(a[2], b[2]) - fmaxf(a[0], b[0]);
	float h = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
	float inter, uni;

	if (!(w > 0) || !(h > 0))
		return 0;
	inter = w * h;
	uni = box_area(a) + box_area(b) - inter;
	return uni > 0 ? inter / uni : 0;
}

/*
 * Decode one box from its logits @d against a normalized @prior with
 * variances @var (NULL: variances already in the logits).
 */
static void decode_box(const struct npr_detection_output_params *p,
		       const float *prior, const float *var, const float *d,
		       float *o)
{
	static const float one[4] = { 1, 1, 1, 1 };
	const float *v = var ? var : one;
	float pw = prior[2] - prior[0], ph = prior[3] - prior[1];
	int j;

	switch (p->code) {
	case NPR_BOX_CORNER:
		for (j = 0; j < 4; j++)
			o[j] = prior[j] + v[j] * d[j];
		break;
	case NPR_BOX_CORNER_SIZE:
		o[0] = prior[0] + v[0] * d[0] * pw;
		o[1] = prior[1] + v[1] * d[1] * ph;
		o[2] = prior[2] + v[2] * d[2] * pw;
		o[3] = prior[3] + v[3] * d[3] * ph;
		break;
	default: {	/* NPR_BOX_CENTER_SIZE */
		float cx = v[0] * d[0] * pw + (prior[0] + prior[2]) / 2;
		float cy = v[1] * d[1] * ph + (prior[1] + prior[3]) / 2;
		float w = expf(v[2] * d[2]) * pw;
		float h = expf(v[3] * d[3]) * ph;

		o[0] = cx - w / 2;
		o[1] = cy - h / 2;
		o[2] = cx + w / 2;
		o[3] = cy + h / 2;
		break;
	}
	}
	if (p->clip_before_nms)
		for (j = 0; j < 4; j++)
			o[j] = clamp01(o[j]);
}

/* The inputs of one image, and the workspace. */
struct detect_ctx {
	const struct npr_detection_output_params *p;
	int64_t P, C, L;
	const float *loc, *conf, *priors, *var;	/* this image's rows */
	const float *arm_conf, *arm_loc;		/* NULL with 3 inputs */
	float *boxes;		/* [P][L][4], decoded on first use */
	unsigned char *decoded;	/* [P][L] */
	struct det *cand;	/* [P] candidates of one class */
	struct det *kept;	/* detections of the image */
	int64_t nkept;
};

static float class_score(const struct detect_ctx *x, int64_t prior,
			 int64_t c)
{
	const struct npr_detection_output_params *p = x->p;

	/* two-stage: a prior the first stage calls background stays so */
	if (x->arm_conf && x->arm_conf[prior * 2 + 1] < p->objectness_score)
		return c == p->background ? 1.0f : 0.0f;
	return x->conf[prior * x->C + c];
}

/* Decoded box of (@prior, location class @l); only candidates get here. */
static const float *decoded_box(struct detect_ctx *x, int64_t prior,
				int64_t l)
{
	const struct npr_detection_output_params *p = x->p;
	int64_t k = prior * x->L + l;
	const float *src, *var;
	float box[4];

	if (x->decoded[k])
		return x->boxes + k * 4;
	src = x->priors + prior * p->prior_size + (p->normalized ? 0 : 1);
	var = x->var ? x->var + prior * 4 : NULL;
	memcpy(box, src, sizeof(box));
	if (!p->normalized) {
		box[0] /= p->input_width;
		box[1] /= p->input_height;
		box[2] /= p->input_width;
		box[3] /= p->input_height;
	}
	if (x->arm_loc) {
		float refined[4];

		/* the first stage moves the prior */
		decode_box(p, box, var, x->arm_loc + k * 4, refined);
		decode_box(p, refined, var, x->loc + k * 4, x->boxes + k * 4);
	} else {
		decode_box(p, box, var, x->loc + k * 4, x->boxes + k * 4);
	}
	x->decoded[k] = 1;
	return x->boxes + k * 4;
}

static const float *det_box(struct detect_ctx *x, const struct det *d)
{
	return decoded_box(x, d->prior, x->L > 1 ? d->label : 0);
}

/*
 * Move the @k best of @v[0..@n) (by det_by_score(), a total order) to the
 * front, in no particular order: quickselect, O(n).
 */
static void select_best(struct det *v, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1;

	while (k > 0 && k < n && lo < hi) {
		struct det pivot = v[lo + (hi - lo) / 2], t;
		int64_t i = lo, j = hi;

		while (i <= j) {
			while (det_by_score(&v[i], &pivot) < 0)
				i++;
			while (det_by_score(&v[j], &pivot) > 0)
				j--;
			if (i <= j) {
				t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				j--;
			}
		}
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
}

/* Sort the candidates best first and keep at most top_k of them. */
static int64_t sort_candidates(struct detect_ctx *x, int64_t nc)
{
	int64_t top_k = x->p->top_k;

	if (top_k >= 0 && nc > top_k) {
		select_best(x->cand, nc, top_k);
		nc = top_k;
	}
	qsort(x->cand, nc, sizeof(*x->cand), det_by_score);
	return nc;
}

/*
 * Greedy NMS of @nc candidates sorted by det_by_score(): a candidate is
 * kept unless it overlaps a kept box of the same label by more than the
 * threshold.  Kept boxes of this round start at kept[@first].
 */
static void nms(struct detect_ctx *x, int64_t nc, int64_t first)
{
	int64_t k, j;

	for (k = 0; k < nc; k++) {
		const struct det *c = &x->cand[k];
		const float *b = det_box(x, c);
		bool keep = true;

		for (j = first; j < x->nkept && keep; j++)
			if (x->kept[j].label == c->label &&
			    box_iou(b, det_box(x, &x->kept[j])) >
			    x->p->nms_threshold)
				keep = false;
		if (keep)
			x->kept[x->nkept++] = *c;
	}
}

/* Caffe: every class but the background on its own. */
static void detect_caffe(struct detect_ctx *x)
{
	const struct npr_detection_output_params *p = x->p;
	int64_t c, i, nc;

	for (c = 0; c < x->C; c++) {
		if (c == p->background)
			continue;
		nc = 0;
		for (i = 0; i < x->P; i++) {
			float s = class_score(x, i, c);

			if (s > p->confidence_threshold) {
				x->cand[nc].score = s;
				x->cand[nc].label = (int32_t)c;
				x->cand[nc].prior = (int32_t)i;
				nc++;
			}
		}
		nms(x, sort_candidates(x, nc), x->nkept);
	}
}

/*
 * MXNet: each prior votes for its best class (class 0 is the background
 * there), then one NMS over all candidates that only compares boxes of
 * the same class.
 */
static void detect_mxnet(struct detect_ctx *x)
{
	const struct npr_detection_output_params *p = x->p;
	int64_t c, i, nc = 0;

	for (i = 0; i < x->P; i++) {
		float best = -1;
		int64_t id = 0;

		for (c = 1; c < x->C; c++) {
			float s;

			if (c == p->background)
				continue;
			s = class_score(x, i, c);
			if (s > best) {
				best = s;
				id = c;
			}
		}
		if (id > 0 && best >= p->confidence_threshold) {
			x->cand[nc].score = best;
			x->cand[nc].label = (int32_t)id;
			x->cand[nc].prior = (int32_t)i;
			nc++;
		}
	}
	nms(x, sort_candidates(x, nc), 0);
}

/* Check that @t is f32 with at least @numel elements. */
static int check_in(const struct npr_node *n, const struct npr_tensor *t,
		    int i, int64_t numel)
{
	if (t->type != NPR_ELEM_F32 || npr_shape_numel(&t->shape) != numel ||
	    t->nbytes < (size_t)numel * sizeof(float))
		return npr_node_err(n, -EINVAL,
				    "input %d does not match the inferred shapes",
				    i);
	return 0;
}

/**
 * npr_ref_detection_output() - DetectionOutput-1 and DetectionOutput-8
 * @n: the node; n->params is a struct npr_detection_output_params
 *     completed by infer.
 * @in: box_logits [N, P * L * 4], class_preds [N, P * C], proposals
 *      [1 or N, 1 or 2, P * 4 or P * 5], and with 5 inputs
 *      aux_class_preds [N, P * 2] and aux_box_preds [N, P * L * 4].
 * @out: [1, 1, N * rows, 7] f32 rows (image, label, score, xmin, ymin,
 *       xmax, ymax).
 *
 * Per image: decode the boxes of the candidates, keep the best top_k
 * candidates above the confidence threshold per class, greedy NMS per
 * class, keep the best keep_top_k across classes, write them by label
 * and score; the unused rows get image -1.
 *
 * Return: 0, -ENOMEM, or -EINVAL when the tensors do not match the
 * inferred shapes.
 */
int npr_ref_detection_output(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out)
{
	const struct npr_detection_output_params *p = n->params;
	int64_t N = in[0].shape.d[0], P = p->num_priors, C = p->num_classes;
	int64_t L = p->num_loc_classes, per_class, max_kept, b, k;
	int64_t total = N * p->rows, row = 0;
	bool aux = n->nin == 5;
	int64_t pri_batch, pri_rows;
	struct detect_ctx x = { .p = p, .P = P, .C = C, .L = L };
	float *y = out->data;
	int err;

	if (in[0].shape.rank != 2 || in[2].shape.rank != 3)
		return npr_node_err(n, -EINVAL,
				    "inputs do not match the inferred shapes");
	pri_batch = in[2].shape.d[0];
	pri_rows = in[2].shape.d[1];
	err = check_in(n, &in[0], 0, N * P * L * 4);
	if (!err)
		err = check_in(n, &in[1], 1, N * P * C);
	if (!err)
		err = check_in(n, &in[2], 2,
			       pri_batch * pri_rows * P * p->prior_size);
	if (!err && aux)
		err = check_in(n, &in[3], 3, N * P * 2);
	if (!err && aux)
		err = check_in(n, &in[4], 4, N * P * L * 4);
	if (err)
		return err;
	if (out->type != NPR_ELEM_F32 || out->shape.rank != 4 ||
	    out->shape.d[2] != total || out->shape.d[3] != 7 ||
	    out->nbytes < (size_t)total * 7 * sizeof(float))
		return npr_node_err(n, -EINVAL,
				    "output does not match the inferred shape");
	if (P > INT32_MAX || C > INT32_MAX)
		return npr_node_err(n, -EINVAL, "too many priors or classes");

	per_class = p->top_k >= 0 && p->top_k < P ? p->top_k : P;
	max_kept = p->decrease_label_id ? per_class : per_class * C;
	x.boxes = malloc(sizeof(float) * 4 * (size_t)(P * L));
	x.decoded = malloc((size_t)(P * L));
	x.cand = malloc(sizeof(struct det) * (size_t)P);
	x.kept = malloc(sizeof(struct det) * (size_t)(max_kept ? max_kept : 1));
	if (!x.boxes || !x.decoded || !x.cand || !x.kept) {
		err = -ENOMEM;
		goto out;
	}

	for (b = 0; b < N; b++) {
		const float *pr = (const float *)in[2].data +
				  (pri_batch > 1 ? b : 0) * pri_rows * P *
				  p->prior_size;

		x.loc = (const float *)in[0].data + b * P * L * 4;
		x.conf = (const float *)in[1].data + b * P * C;
		x.priors = pr;
		x.var = p->variance_encoded ? NULL : pr + P * p->prior_size;
		x.arm_conf = aux ? (const float *)in[3].data + b * P * 2 : NULL;
		x.arm_loc = aux ? (const float *)in[4].data + b * P * L * 4 :
			    NULL;
		x.nkept = 0;
		memset(x.decoded, 0, (size_t)(P * L));

		if (p->decrease_label_id)
			detect_mxnet(&x);
		else
			detect_caffe(&x);

		if (p->keep_top_k >= 0 && x.nkept > p->keep_top_k) {
			qsort(x.kept, x.nkept, sizeof(*x.kept), det_by_score);
			x.nkept = p->keep_top_k;
		}
		qsort(x.kept, x.nkept, sizeof(*x.kept), det_by_label);

		for (k = 0; k < x.nkept && row < total; k++, row++) {
			const float *bx = det_box(&x, &x.kept[k]);
			float *r = y + row * 7;
			int j;

			r[0] = (float)b;
			r[1] = (float)(x.kept[k].label -
				       (p->decrease_label_id ? 1 : 0));
			r[2] = x.kept[k].score;
			for (j = 0; j < 4; j++)
				r[3 + j] = p->clip_after_nms ? clamp01(bx[j]) :
					   bx[j];
		}
	}
	/* unused rows: image id -1, the rest zero */
	for (; row < total; row++) {
		float *r = y + row * 7;

		r[0] = -1;
		memset(r + 1, 0, sizeof(float) * 6);
	}
	err = 0;
out:
	free(x.boxes);
	free(x.decoded);
	free(x.cand);
	free(x.kept);
	return err;
}

static float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/**
 * npr_ref_region_yolo() - RegionYolo-0 (the Darknet region/yolo layers)
 * @n: the node; params struct npr_region_yolo_params.
 * @in: [N, C, H, W] f32, C = anchors * (coords + classes + 1), the
 *      entries of an anchor in channel order x, y, the other coords,
 *      objectness, class scores.
 * @out: the same values, x, y and objectness through a sigmoid, the class
 *       scores through a softmax over the classes (do_softmax) or a
 *       sigmoid; the other coords unchanged.
 *
 * Return: 0.
 */
int npr_ref_region_yolo(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	const struct npr_region_yolo_params *p = n->params;
	const struct npr_shape *s = &in->shape;
	int64_t sp = s->d[2] * s->d[3], per = p->coords + p->classes + 1;
	int64_t anchors = s->d[1] / (per ? per : 1), b, a, k, i;
	const float *x = in->data;
	float *y = out->data;

	if (y != x)
		memcpy(y, x, npr_shape_numel(s) * sizeof(float));
	for (b = 0; b < s->d[0]; b++) {
		for (a = 0; a < anchors; a++) {
			float *e = y + (b * s->d[1] + a * per) * sp;

			for (i = 0; i < 2 * sp; i++)
				e[i] = sigmoidf(e[i]);
			for (i = 0; i < sp; i++)
				e[p->coords * sp + i] =
					sigmoidf(e[p->coords * sp + i]);
			e += (p->coords + 1) * sp;
			if (!p->do_softmax) {
				for (i = 0; i < p->classes * sp; i++)
					e[i] = sigmoidf(e[i]);
				continue;
			}
			for (i = 0; i < sp && p->classes; i++) {
				float mx = e[i], sum = 0;

				for (k = 1; k < p->classes; k++)
					mx = fmaxf(mx, e[k * sp + i]);
				for (k = 0; k < p->classes; k++) {
					float *v = &e[k * sp + i];

					*v = expf(*v - mx);
					sum += *v;
				}
				for (k = 0; k < p->classes; k++)
					e[k * sp + i] /= sum;
			}
		}
	}
	return 0;
}

/* Max over rows [h0, h1) and columns [w0, w1) of a plane; 0 if empty. */
static float plane_max(const float *x, int64_t w, int64_t h0, int64_t h1,
		       int64_t w0, int64_t w1)
{
	float m = -INFINITY;
	int64_t i, j;

	if (h1 <= h0 || w1 <= w0)
		return 0;
	for (i = h0; i < h1; i++)
		for (j = w0; j < w1; j++)
			m = fmaxf(m, x[i * w + j]);
	return m;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ROIPooling "max" of ROI @q over plane @pl into @o. */
static void roi_max(const struct npr_roi_pooling_params *p, const float *q,
		    const float *pl, int64_t h, int64_t w, float *o)
{
	float sc = p->spatial_scale;
	int64_t x1 = (int64_t)roundf(q[1] * sc);
	int64_t y1 = (int64_t)roundf(q[2] * sc);
	int64_t x2 = (int64_t)roundf(q[3] * sc);
	int64_t y2 = (int64_t)roundf(q[4] * sc);
	double bh = (double)(y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1) / p->pooled_h;
	double bw = (double)(x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1) / p->pooled_w;
	int64_t i, j;

	for (i = 0; i < p->pooled_h; i++) {
		int64_t h0 = clamp64((int64_t)floor(i * bh) + y1, 0, h);
		int64_t h1 = clamp64((int64_t)ceil((i + 1) * bh) + y1, 0, h);

		for (j = 0; j < p->pooled_w; j++) {
			int64_t w0 = clamp64((int64_t)floor(j * bw) + x1, 0, w);
			int64_t w1 = clamp64((int64_t)ceil((j + 1) * bw) + x1,
					     0, w);

			*o++ = plane_max(pl, w, h0, h1, w0, w1);
		}
	}
}

/* Sample @k of @n between normalised @a and @b over a length @len axis. */
static double roi_coord(double a, double b, int64_t k, int64_t n,
			int64_t len)
{
	if (n > 1)
		return a * (len - 1) + k * (b - a) * (len - 1) / (n - 1);
	return 0.5 * (a + b) * (len - 1);
}

/* ROIPooling "bilinear" of ROI @q over plane @pl into @o. */
static void roi_bilinear(const struct npr_roi_pooling_params *p,
			 const float *q, const float *pl, int64_t h,
			 int64_t w, float *o)
{
	int64_t i, j;

	for (i = 0; i < p->pooled_h; i++) {
		double yy = roi_coord(q[2], q[4], i, p->pooled_h, h);

		for (j = 0; j < p->pooled_w; j++) {
			double xx = roi_coord(q[1], q[3], j, p->pooled_w, w);
			const float *r0, *r1;
			int64_t l, ri;
			double fy, fx, top, bot;

			if (yy < 0 || yy > h - 1 || xx < 0 || xx > w - 1) {
				*o++ = 0;
				continue;
			}
			r0 = pl + (int64_t)floor(yy) * w;
			r1 = pl + (int64_t)ceil(yy) * w;
			l = (int64_t)floor(xx);
			ri = (int64_t)ceil(xx);
			fy = yy - floor(yy);
			fx = xx - l;
			top = r0[l] + (r0[ri] - r0[l]) * fx;
			bot = r1[l] + (r1[ri] - r1[l]) * fx;
			*o++ = (float)(top + (bot - top) * fy);
		}
	}
}

/**
 * npr_ref_roi_pooling() - ROIPooling-2
 * @n: the node; params struct npr_roi_pooling_params.
 * @in: feature maps [N, C, H, W], ROIs [R, 5] of (batch, x1, y1, x2, y2).
 * @out: [R, C, pooled_h, pooled_w].
 *
 * max: the ROI, scaled by spatial_scale and rounded, spans
 * max(x2 - x1 + 1, 1) by max(y2 - y1 + 1, 1) cells; bin (i, j) is the max
 * over rows [floor(i * bh), ceil((i + 1) * bh)) and likewise for columns,
 * offset by the ROI start and clipped to the map (an empty bin gives 0).
 * bilinear: coordinates in [0, 1]; sample (i, j) is the bilinear value at
 * y1 (H - 1) + i (y2 - y1) (H - 1) / (pooled_h - 1) (the ROI centre when
 * pooled_h is 1), likewise for x; samples outside the map give 0.
 *
 * Return: 0, or -EINVAL for a batch index out of range.
 */
int npr_ref_roi_pooling(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	const struct npr_roi_pooling_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t nb = s->d[0], c = s->d[1], h = s->d[2], w = s->d[3];
	int64_t nroi = in[1].shape.d[0], plane = p->pooled_h * p->pooled_w;
	const float *x = in[0].data, *roi = in[1].data;
	float *y = out->data;
	int64_t r, ch;

	for (r = 0; r < nroi; r++) {
		const float *q = roi + r * 5;
		int64_t b = (int64_t)q[0];

		if (!(q[0] >= 0) || b >= nb)
			return npr_node_err(n, -EINVAL,
					    "ROI %lld: batch index %g out of range",
					    (long long)r, q[0]);
		for (ch = 0; ch < c; ch++) {
			const float *pl = x + (b * c + ch) * h * w;
			float *o = y + (r * c + ch) * plane;

			if (p->bilinear)
				roi_bilinear(p, q, pl, h, w, o);
			else
				roi_max(p, q, pl, h, w, o);
		}
	}
	return 0;
}

/* Bilinear sample of plane @pl at (@y, @x), Detectron's border rules. */
static float roi_sample(const float *pl, int64_t h, int64_t w, double y,
			double x)
{
	int64_t y0, x0, y1, x1;
	double ly, lx;

	if (y < -1 || y > h || x < -1 || x > w)
		return 0;
	y = y < 0 ? 0 : y;
	x = x < 0 ? 0 : x;
	y0 = (int64_t)y;
	x0 = (int64_t)x;
	if (y0 >= h - 1) {
		y0 = y1 = h - 1;
		y = (double)y0;
	} else {
		y1 = y0 + 1;
	}
	if (x0 >= w - 1) {
		x0 = x1 = w - 1;
		x = (double)x0;
	} else {
		x1 = x0 + 1;
	}
	ly = y - y0;
	lx = x - x0;
	return (float)((1 - ly) * (1 - lx) * pl[y0 * w + x0] +
		       (1 - ly) * lx * pl[y0 * w + x1] +
		       ly * (1 - lx) * pl[y1 * w + x0] +
		       ly * lx * pl[y1 * w + x1]);
}

/* One ROI of one channel: @q is x1, y1, x2, y2. */
static void roi_align_one(const struct npr_roi_align_params *p,
			  const float *q, const float *pl, int64_t h,
			  int64_t w, float *o)
{
	double src = p->aligned == NPR_ROI_ALIGN_HALF_PIXEL ? 0.5 : 0;
	double dst = p->aligned == NPR_ROI_ALIGN_ASYMMETRIC ? 0 : -0.5;
	double sc = p->spatial_scale;
	double x1 = (q[0] + src) * sc + dst, y1 = (q[1] + src) * sc + dst;
	double rw = (q[2] + src) * sc + dst - x1;
	double rh = (q[3] + src) * sc + dst - y1;
	double bh, bw;
	int64_t sh, sw, i, j, a, b;

	if (p->aligned == NPR_ROI_ALIGN_ASYMMETRIC) {
		rw = rw > 1 ? rw : 1;
		rh = rh > 1 ? rh : 1;
	}
	bh = rh / p->pooled_h;
	bw = rw / p->pooled_w;
	sh = p->sampling_ratio ? p->sampling_ratio : (int64_t)ceil(bh);
	sw = p->sampling_ratio ? p->sampling_ratio : (int64_t)ceil(bw);
	sh = sh < 1 ? 1 : sh;
	sw = sw < 1 ? 1 : sw;
	for (i = 0; i < p->pooled_h; i++) {
		for (j = 0; j < p->pooled_w; j++) {
			double acc = p->max ? -INFINITY : 0;

			for (a = 0; a < sh; a++) {
				double y = y1 + i * bh + (a + 0.5) * bh / sh;

				for (b = 0; b < sw; b++) {
					double x = x1 + j * bw +
						   (b + 0.5) * bw / sw;
					float v = roi_sample(pl, h, w, y, x);

					if (p->max)
						acc = acc > v ? acc : v;
					else
						acc += v;
				}
			}
			*o++ = (float)(p->max ? acc : acc / (sh * sw));
		}
	}
}

/**
 * npr_ref_roi_align() - ROIAlign-3/-9
 * @n: the node; params struct npr_roi_align_params.
 * @in: feature maps [N, C, H, W], ROIs [R, 4] of (x1, y1, x2, y2),
 *      batch_indices [R].
 * @out: [R, C, pooled_h, pooled_w].
 *
 * Box corners map to the map as (c + s) * spatial_scale + d, with s, d =
 * 0, 0 (asymmetric; the box is then at least 1x1), 0, -0.5
 * (half_pixel_for_nn) or 0.5, -0.5 (half_pixel).  Each bin averages or
 * takes the max of sampling_ratio^2 bilinear samples at the centres of a
 * regular grid; samples more than one cell outside the map are 0.
 *
 * Return: 0, or -EINVAL for a batch index out of range.
 */
int npr_ref_roi_align(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_roi_align_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t nb = s->d[0], c = s->d[1], h = s->d[2], w = s->d[3];
	int64_t nroi = in[1].shape.d[0], plane = p->pooled_h * p->pooled_w;
	const float *x = in[0].data, *roi = in[1].data;
	float *y = out->data;
	int64_t r, ch;

	for (r = 0; r < nroi; r++) {
		int64_t b = in[2].type == NPR_ELEM_I64 ?
			    ((const int64_t *)in[2].data)[r] :
			    ((const int32_t *)in[2].data)[r];

		if (b < 0 || b >= nb)
			return npr_node_err(n, -EINVAL,
					    "ROI %lld: batch index %lld out of range",
					    (long long)r, (long long)b);
		for (ch = 0; ch < c; ch++)
			roi_align_one(p, roi + r * 4,
				      x + (b * c + ch) * h * w, h, w,
				      y + (r * c + ch) * plane);
	}
	return 0;
}

/* The op definitions of lib/ops/detect.c these kernels evaluate. */
const struct npr_kernel npr_kernels_detect[] = {
	{ "ROIAlign", 3, 8, npr_ref_roi_align },
	{ "ROIAlign", 9, 99, npr_ref_roi_align },
	{ "ROIPooling", 0, 99, npr_ref_roi_pooling },
	{ "RegionYolo", 0, 99, npr_ref_region_yolo },
	{ "PriorBoxClustered", 0, 99, npr_ref_prior_box_clustered },
	{ "PriorBox", 0, 7, npr_ref_prior_box },
	{ "PriorBox", 8, 99, npr_ref_prior_box },
	{ "DetectionOutput", 0, 7, npr_ref_detection_output },
	{ "DetectionOutput", 8, 99, npr_ref_detection_output },
	{ NULL },
};
