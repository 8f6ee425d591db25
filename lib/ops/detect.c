// SPDX-License-Identifier: MIT
/*
 * SSD detection ops: attributes and shape inference.  Kernels:
 * ref/kernels/detect.c.
 *
 * PriorBox and PriorBoxClustered need their two inputs (feature map size
 * and image size) at compile time; in real models those are ShapeOf
 * results the compile driver has already folded, and the ops themselves
 * then fold into constants.  DetectionOutput runs at inference time.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"

/* Sizes beyond these are certainly not a real detector. */
#define MAX_MAP_DIM	(1 << 20)
#define MAX_PRIOR_VALUES	((int64_t)1 << 30)
#define MAX_DENSITY	64
#define MAX_OUT_ROWS	((int64_t)1 << 26)

static bool has(const struct npr_node *n, const char *key)
{
	return npr_attr(n, key) != NULL;
}

static int need(const struct npr_node *n, const char *key)
{
	if (!has(n, key))
		return npr_node_err(n, -EINVAL, "attribute %s is missing", key);
	return 0;
}

/* One finite number >= @min. */
static int get_float(const struct npr_node *n, const char *key, double def,
		     double min, float *out)
{
	double v;
	int err;

	err = npr_attr_float(n, key, def, &v);
	if (err)
		return err;
	if (!isfinite(v) || v < min)
		return npr_node_err(n, -EINVAL,
				    "attribute %s=\"%s\" must be a number >= %g",
				    key, npr_attr(n, key), min);
	*out = (float)v;
	return 0;
}

/* An optional list of finite numbers, each > 0. */
static int get_positive_list(const struct npr_node *n, const char *key,
			     float *out, int *count)
{
	int i, err;

	err = npr_attr_floats(n, key, out, NPR_PRIOR_MAX, count, true);
	if (err)
		return err;
	for (i = 0; i < *count; i++)
		if (!isfinite(out[i]) || out[i] <= 0)
			return npr_node_err(n, -EINVAL,
					    "attribute %s: value %d (%g) must be > 0",
					    key, i, out[i]);
	return 0;
}

/* variance: 0 values (0.1 for all), 1 value, or 4 values. */
static int get_variance(const struct npr_node *n, float *var, int *nvar)
{
	int i, err;

	err = npr_attr_floats(n, "variance", var, 4, nvar, true);
	if (err)
		return err;
	if (*nvar != 0 && *nvar != 1 && *nvar != 4)
		return npr_node_err(n, -EINVAL,
				    "variance needs 0, 1 or 4 values, has %d",
				    *nvar);
	for (i = 0; i < *nvar; i++)
		if (!isfinite(var[i]))
			return npr_node_err(n, -EINVAL,
					    "variance value %d is not finite", i);
	if (!*nvar) {
		var[0] = 0.1f;
		*nvar = 1;
	}
	return 0;
}

/*
 * Read [height, width] from a constant input into @hw; each must be >= 1
 * and at most MAX_MAP_DIM.
 */
static int get_hw(struct npr_graph *g, const struct npr_node *n, int input,
		  const char *what, int64_t *hw)
{
	int cnt;

	cnt = npr_const_ints(g, n, input, hw, 2);
	if (cnt < 0)
		return cnt;
	if (cnt != 2)
		return npr_node_err(n, -EINVAL,
				    "input %d (%s) must hold 2 values [height, width], has %d",
				    input, what, cnt);
	if (hw[0] < 1 || hw[1] < 1 || hw[0] > MAX_MAP_DIM ||
	    hw[1] > MAX_MAP_DIM)
		return npr_node_err(n, -EINVAL,
				    "input %d (%s) = [%lld, %lld] is out of range",
				    input, what, (long long)hw[0],
				    (long long)hw[1]);
	return 0;
}

/* Output of both prior ops: [2, 4 * H * W * priors], f32. */
static int set_prior_output(struct npr_graph *g, struct npr_node *n,
			    const int64_t *fm, int64_t priors)
{
	struct npr_value *o = npr_out(g, n, 0);
	int64_t cells = fm[0] * fm[1];

	if (priors < 1 || cells > MAX_PRIOR_VALUES / 4 / priors)
		return npr_node_err(n, -EINVAL,
				    "%lld x %lld cells x %lld priors is too many",
				    (long long)fm[0], (long long)fm[1],
				    (long long)priors);
	o->type = NPR_ELEM_F32;
	o->shape.rank = 2;
	o->shape.d[0] = 2;
	o->shape.d[1] = 4 * cells * priors;
	return 0;
}

/* ---- PriorBoxClustered ------------------------------------------------ */

static int pbc_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_prior_clustered_params *p;
	int nh, err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = get_positive_list(n, "width", p->width, &p->nsizes);
	if (!err)
		err = get_positive_list(n, "height", p->height, &nh);
	if (err)
		return err;
	if (!p->nsizes && !nh) {
		/* both absent: the default is one 1 x 1 box */
		p->width[0] = 1;
		p->height[0] = 1;
		p->nsizes = nh = 1;
	}
	if (nh != p->nsizes)
		return npr_node_err(n, -EINVAL,
				    "width has %d values but height has %d",
				    p->nsizes, nh);
	err = npr_attr_bool(n, "clip", true, &p->clip);
	if (!err)
		err = get_float(n, "step", 0, 0, &p->step);
	if (!err)
		err = get_float(n, "step_w", 0, 0, &p->step_w);
	if (!err)
		err = get_float(n, "step_h", 0, 0, &p->step_h);
	if (!err)
		err = need(n, "offset");
	if (!err)
		err = get_float(n, "offset", 0.5, 0, &p->offset);
	if (!err)
		err = get_float(n, "img_w", 0, 0, &p->img_w);
	if (!err)
		err = get_float(n, "img_h", 0, 0, &p->img_h);
	if (!err)
		err = get_variance(n, p->variance, &p->nvariance);
	return err;
}

static int pbc_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_prior_clustered_params *p = n->params;
	int64_t fm[2], img[2];
	int err;

	err = get_hw(g, n, 0, "output_size", fm);
	if (err)
		return err;
	if (n->nin > 1) {
		err = get_hw(g, n, 1, "image_size", img);
		if (err)
			return err;
	} else if (p->img_w <= 0 || p->img_h <= 0) {
		return npr_node_err(n, -EINVAL,
				    "without an image_size input, img_w and img_h must be given");
	}
	return set_prior_output(g, n, fm, p->nsizes);
}

/* ---- PriorBox --------------------------------------------------------- */

static float clamp_unit(float v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/*
 * Boxes of one cell go through emit(): it writes them (when @dst is set)
 * and counts them, so the count the shape inference uses and what the
 * kernel (ref/kernels/detect.c) writes come from the same code.
 */
static void emit(struct npr_prior_emitter *e, float cx, float cy,
		 float half_w, float half_h, bool clip)
{
	if (e->dst) {
		float *b = e->dst + 4 * e->n;

		b[0] = (cx - half_w) * e->inv_w;
		b[1] = (cy - half_h) * e->inv_h;
		b[2] = (cx + half_w) * e->inv_w;
		b[3] = (cy + half_h) * e->inv_h;
		if (clip) {
			b[0] = clamp_unit(b[0]);
			b[1] = clamp_unit(b[1]);
			b[2] = clamp_unit(b[2]);
			b[3] = clamp_unit(b[3]);
		}
	}
	e->n++;
}

static bool is_one(float r)
{
	return fabsf(r - 1.0f) < 1e-6f;
}

/*
 * Density mode: @density x @density centres spread over a fixed_size
 * square around the cell centre, one box of half-size (@half_w, @half_h)
 * at each.  These boxes are always clipped.
 */
static void emit_dense(struct npr_prior_emitter *e,
		       const struct npr_prior_box_params *p, int s, float cx,
		       float cy, float half_w, float half_h)
{
	int64_t size = (int64_t)p->fixed_size[s];
	int64_t d = (int64_t)p->density[s];
	int64_t shift = (int64_t)(p->fixed_size[s] / (float)d);
	float x0 = cx - (float)(size / 2) + (float)shift / 2;
	float y0 = cy - (float)(size / 2) + (float)shift / 2;
	int64_t r, c;

	for (r = 0; r < d; r++)
		for (c = 0; c < d; c++)
			emit(e, x0 + (float)(c * shift),
			     y0 + (float)(r * shift), half_w, half_h, true);
}

/* Boxes of the non-unit aspect ratios around a box of size @size. */
static void emit_ratios(struct npr_prior_emitter *e,
			const struct npr_prior_box_params *p, float cx,
			float cy, float size)
{
	int i;

	for (i = 0; i < p->nratio; i++) {
		float sr;

		if (is_one(p->ratio[i]))
			continue;
		sr = sqrtf(p->ratio[i]);
		emit(e, cx, cy, size * 0.5f * sr, size * 0.5f / sr, false);
	}
}

/**
 * npr_prior_box_cell() - emit the boxes of one PriorBox cell
 * @e: where they go; e->n counts them.
 * @p: parsed attributes.
 * @min_size: the min sizes to use (scaled by the kernel without
 *            scale_all_sizes).
 * @cx, @cy: the cell's centre.
 *
 * All boxes of one cell centred at (@cx, @cy), in output order:
 *
 *  1. per fixed_size (density mode): with fixed_ratio, density^2 boxes per
 *     fixed ratio; otherwise density^2 square boxes, then density^2 boxes
 *     per non-unit aspect ratio;
 *  2. per min_size: the square min box, the sqrt(min * max) box when a
 *     max_size pairs with it, and the aspect-ratio boxes ([min, max,
 *     ratios], or [min, ratios, max] when !min_max_order).  Without
 *     scale_all_sizes, the ratio boxes come once, after the last min box,
 *     and use the first min size.
 *
 * Context: pure; the shape inference counts with it, the kernel writes.
 */
void npr_prior_box_cell(struct npr_prior_emitter *e,
			const struct npr_prior_box_params *p,
			const float *min_size, float cx, float cy)
{
	int s, i;

	for (s = 0; s < p->nfixed_size; s++) {
		float fs = p->fixed_size[s];

		if (p->nfixed_ratio) {
			for (i = 0; i < p->nfixed_ratio; i++) {
				float sr = sqrtf(p->fixed_ratio[i]);

				emit_dense(e, p, s, cx, cy, fs * 0.5f * sr,
					   fs * 0.5f / sr);
			}
			continue;
		}
		emit_dense(e, p, s, cx, cy, (float)(int64_t)fs * 0.5f,
			   (float)(int64_t)fs * 0.5f);
		for (i = 0; i < p->nratio; i++) {
			float sr;

			if (is_one(p->ratio[i]))
				continue;
			sr = sqrtf(p->ratio[i]);
			emit_dense(e, p, s, cx, cy, fs * 0.5f * sr,
				   fs * 0.5f / sr);
		}
	}

	for (s = 0; s < p->nmin; s++) {
		float m = min_size[s];
		bool ratios = p->scale_all_sizes || s == p->nmin - 1;
		float rsize = min_size[p->scale_all_sizes ? s : 0];
		float mx = s < p->nmax ? sqrtf(m * p->max_size[s]) * 0.5f : 0;

		emit(e, cx, cy, m * 0.5f, m * 0.5f, false);
		if (p->min_max_order) {
			if (s < p->nmax)
				emit(e, cx, cy, mx, mx, false);
			if (ratios)
				emit_ratios(e, p, cx, cy, rsize);
		} else {
			if (ratios)
				emit_ratios(e, p, cx, cy, rsize);
			if (s < p->nmax)
				emit(e, cx, cy, mx, mx, false);
		}
	}
}

/**
 * npr_prior_box_count() - number of boxes PriorBox emits per cell
 * @p: parsed attributes (aspect ratios already expanded).
 *
 * Context: called by the PriorBox parser; pure.
 * Return: the count, exactly what the kernel writes per cell.
 */
int64_t npr_prior_box_count(const struct npr_prior_box_params *p)
{
	struct npr_prior_emitter e = { .dst = NULL };

	npr_prior_box_cell(&e, p, p->min_size, 0, 0);
	return e.n;
}

/*
 * Aspect ratios in output order: 1, then every attribute value not seen
 * yet (within 1e-6), each followed by its inverse when flipping.
 */
static void expand_ratios(struct npr_prior_box_params *p, const float *ar,
			  int nar)
{
	int i, j;

	p->ratio[0] = 1;
	p->nratio = 1;
	for (i = 0; i < nar; i++) {
		bool seen = false;

		for (j = 0; j < p->nratio; j++)
			if (fabsf(ar[i] - p->ratio[j]) < 1e-6f)
				seen = true;
		if (seen)
			continue;
		p->ratio[p->nratio++] = ar[i];
		if (p->flip)
			p->ratio[p->nratio++] = 1 / ar[i];
	}
}

static int prior_box_parse_common(struct npr_node *n, bool v8)
{
	struct npr_prior_box_params *p;
	float ar[NPR_PRIOR_MAX];
	int nar, i, err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = get_positive_list(n, "min_size", p->min_size, &p->nmin);
	if (!err)
		err = get_positive_list(n, "max_size", p->max_size, &p->nmax);
	if (!err)
		err = get_positive_list(n, "aspect_ratio", ar, &nar);
	if (!err)
		err = get_positive_list(n, "fixed_size", p->fixed_size,
					&p->nfixed_size);
	if (!err)
		err = get_positive_list(n, "fixed_ratio", p->fixed_ratio,
					&p->nfixed_ratio);
	if (!err)
		err = get_positive_list(n, "density", p->density,
					&p->ndensity);
	if (!err)
		err = npr_attr_bool(n, "flip", false, &p->flip);
	if (!err)
		err = npr_attr_bool(n, "clip", false, &p->clip);
	if (!err)
		err = npr_attr_bool(n, "scale_all_sizes", true,
				    &p->scale_all_sizes);
	p->min_max_order = true;
	if (!err && v8)
		err = npr_attr_bool(n, "min_max_aspect_ratios_order", true,
				    &p->min_max_order);
	if (!err)
		err = get_float(n, "step", 0, 0, &p->step);
	if (!err)
		err = need(n, "offset");
	if (!err)
		err = get_float(n, "offset", 0.5, 0, &p->offset);
	if (!err)
		err = get_variance(n, p->variance, &p->nvariance);
	if (err)
		return err;

	if (!p->scale_all_sizes)
		p->nmax = 0;		/* the spec: max_size is ignored */
	if (p->nmax > p->nmin)
		return npr_node_err(n, -EINVAL,
				    "max_size has %d values, more than min_size (%d)",
				    p->nmax, p->nmin);
	if (p->nfixed_ratio && !p->nfixed_size)
		return npr_node_err(n, -EINVAL, "fixed_ratio needs fixed_size");
	if (p->ndensity != p->nfixed_size)
		return npr_node_err(n, -EINVAL,
				    "density has %d values, fixed_size %d: they must match",
				    p->ndensity, p->nfixed_size);
	for (i = 0; i < p->ndensity; i++)
		if (p->density[i] < 1 || p->density[i] > MAX_DENSITY)
			return npr_node_err(n, -EINVAL,
					    "density value %d (%g) must be in [1, %d]",
					    i, p->density[i], MAX_DENSITY);
	expand_ratios(p, ar, nar);
	p->num_priors = npr_prior_box_count(p);
	if (p->num_priors < 1)
		return npr_node_err(n, -EINVAL,
				    "no boxes per cell: give min_size or fixed_size");
	return 0;
}

static int prior_box1_parse(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	return prior_box_parse_common(n, false);
}

static int prior_box8_parse(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	return prior_box_parse_common(n, true);
}

static int prior_box_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_prior_box_params *p = n->params;
	int64_t fm[2], img[2];
	int err;

	err = get_hw(g, n, 0, "output_size", fm);
	if (!err)
		err = get_hw(g, n, 1, "image_size", img);
	if (err)
		return err;
	return set_prior_output(g, n, fm, p->num_priors);
}

/* ---- DetectionOutput -------------------------------------------------- */

static const char *const code_names[] = {
	"caffe.PriorBoxParameter.CORNER",
	"caffe.PriorBoxParameter.CENTER_SIZE",
	"caffe.PriorBoxParameter.CORNER_SIZE",
	"CORNER", "CENTER_SIZE", "CORNER_SIZE", NULL,
};

static int detout_parse_common(struct npr_node *n, bool v8)
{
	struct npr_detection_output_params *p;
	int64_t keep[NPR_PRIOR_MAX];
	int64_t ih, iw;
	int nkeep, code, err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->derive_classes = v8;
	if (!v8) {
		err = need(n, "num_classes");
		if (!err)
			err = npr_attr_int(n, "num_classes", 0,
					   &p->num_classes);
		if (err)
			return err;
		if (p->num_classes < 1 || p->num_classes > INT32_MAX)
			return npr_node_err(n, -EINVAL,
					    "num_classes = %lld is invalid",
					    (long long)p->num_classes);
	}
	err = npr_attr_int(n, "background_label_id", 0, &p->background);
	if (!err)
		err = npr_attr_int(n, "top_k", -1, &p->top_k);
	if (!err)
		err = need(n, "keep_top_k");
	if (!err)
		err = npr_attr_ints(n, "keep_top_k", keep, NPR_PRIOR_MAX,
				    &nkeep, false);
	if (!err && !nkeep)
		err = npr_node_err(n, -EINVAL, "keep_top_k is empty");
	if (!err)
		err = npr_attr_enum(n, "code_type", code_names, NPR_BOX_CORNER,
				    &code);
	if (!err)
		err = npr_attr_bool(n, "share_location", true,
				    &p->share_location);
	if (!err)
		err = npr_attr_bool(n, "variance_encoded_in_target", false,
				    &p->variance_encoded);
	if (!err)
		err = npr_attr_bool(n, "normalized", false, &p->normalized);
	if (!err)
		err = npr_attr_bool(n, "clip_before_nms", false,
				    &p->clip_before_nms);
	if (!err)
		err = npr_attr_bool(n, "clip_after_nms", false,
				    &p->clip_after_nms);
	if (!err)
		err = npr_attr_bool(n, "decrease_label_id", false,
				    &p->decrease_label_id);
	if (!err)
		err = need(n, "nms_threshold");
	if (!err)
		err = get_float(n, "nms_threshold", 0, -INFINITY,
				&p->nms_threshold);
	if (!err)
		err = get_float(n, "confidence_threshold", 0, -INFINITY,
				&p->confidence_threshold);
	if (!err)
		err = get_float(n, "objectness_score", 0, 0,
				&p->objectness_score);
	if (!err)
		err = npr_attr_int(n, "input_height", 1, &ih);
	if (!err)
		err = npr_attr_int(n, "input_width", 1, &iw);
	if (err)
		return err;
	if (ih < 1 || iw < 1 || ih > MAX_MAP_DIM || iw > MAX_MAP_DIM)
		return npr_node_err(n, -EINVAL,
				    "input_height/input_width %lld x %lld out of range",
				    (long long)ih, (long long)iw);
	p->input_height = (float)ih;
	p->input_width = (float)iw;
	p->code = code % 3;
	p->keep_top_k = keep[0] < -1 ? -1 : keep[0];
	if (p->top_k < -1)
		p->top_k = -1;
	if (p->background < -1)
		return npr_node_err(n, -EINVAL,
				    "background_label_id = %lld is invalid",
				    (long long)p->background);
	return 0;
}

static int detout1_parse(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	return detout_parse_common(n, false);
}

static int detout8_parse(struct npr_graph *g, struct npr_node *n)
{
	(void)g;
	return detout_parse_common(n, true);
}

static int check_rank(const struct npr_node *n, const struct npr_value *v,
		      int i, const char *what, int rank)
{
	if (v->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "input %d (%s) is %s, expected f32",
				    i, what, npr_elem_name(v->type));
	if (v->shape.rank != rank)
		return npr_node_err(n, -EINVAL,
				    "input %d (%s) has rank %d, expected %d",
				    i, what, v->shape.rank, rank);
	return 0;
}

static int detout_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_detection_output_params *p = n->params;
	const struct npr_value *loc, *conf, *pri;
	struct npr_value *o = npr_out(g, n, 0);
	int64_t N, P, C, L, rows;
	int err;

	if (n->nin != 3 && n->nin != 5)
		return npr_node_err(n, -EINVAL,
				    "needs 3 or 5 inputs, has %d", n->nin);
	loc = npr_in(g, n, 0);
	conf = npr_in(g, n, 1);
	pri = npr_in(g, n, 2);
	err = check_rank(n, loc, 0, "box_logits", 2);
	if (!err)
		err = check_rank(n, conf, 1, "class_preds", 2);
	if (!err)
		err = check_rank(n, pri, 2, "proposals", 3);
	if (!err && n->nin == 5)
		err = check_rank(n, npr_in(g, n, 3), 3, "aux_class_preds", 2);
	if (!err && n->nin == 5)
		err = check_rank(n, npr_in(g, n, 4), 4, "aux_box_preds", 2);
	if (err)
		return err;

	N = loc->shape.d[0];
	if (N < 1 || conf->shape.d[0] != N)
		return npr_node_err(n, -EINVAL,
				    "box_logits and class_preds batch sizes %lld and %lld differ",
				    (long long)N, (long long)conf->shape.d[0]);
	if (pri->shape.d[0] != 1 && pri->shape.d[0] != N)
		return npr_node_err(n, -EINVAL,
				    "proposals batch %lld must be 1 or %lld",
				    (long long)pri->shape.d[0], (long long)N);
	if (pri->shape.d[1] != 1 && pri->shape.d[1] != 2)
		return npr_node_err(n, -EINVAL,
				    "proposals dimension 1 is %lld, expected 1 or 2",
				    (long long)pri->shape.d[1]);
	if (!p->variance_encoded && pri->shape.d[1] != 2)
		return npr_node_err(n, -EINVAL,
				    "proposals have no variance row but variance_encoded_in_target is false");
	p->prior_size = p->normalized ? 4 : 5;
	P = pri->shape.d[2] / p->prior_size;
	if (P < 1 || pri->shape.d[2] % p->prior_size)
		return npr_node_err(n, -EINVAL,
				    "proposals length %lld is not a positive multiple of %lld",
				    (long long)pri->shape.d[2],
				    (long long)p->prior_size);
	if (p->derive_classes) {
		if (conf->shape.d[1] < P || conf->shape.d[1] % P)
			return npr_node_err(n, -EINVAL,
					    "class_preds length %lld is not a multiple of %lld priors",
					    (long long)conf->shape.d[1],
					    (long long)P);
		p->num_classes = conf->shape.d[1] / P;
	}
	C = p->num_classes;
	if (conf->shape.d[1] != P * C)
		return npr_node_err(n, -EINVAL,
				    "class_preds length %lld, expected %lld priors x %lld classes",
				    (long long)conf->shape.d[1], (long long)P,
				    (long long)C);
	L = p->share_location ? 1 : C;
	if (loc->shape.d[1] != P * L * 4)
		return npr_node_err(n, -EINVAL,
				    "box_logits length %lld, expected %lld (%lld priors x %lld x 4)",
				    (long long)loc->shape.d[1],
				    (long long)(P * L * 4), (long long)P,
				    (long long)L);
	if (n->nin == 5) {
		const struct npr_value *ac = npr_in(g, n, 3);
		const struct npr_value *al = npr_in(g, n, 4);

		if (ac->shape.d[0] != N || ac->shape.d[1] != P * 2)
			return npr_node_err(n, -EINVAL,
					    "aux_class_preds must be [%lld, %lld]",
					    (long long)N, (long long)(P * 2));
		if (!npr_shape_eq(&al->shape, &loc->shape))
			return npr_node_err(n, -EINVAL,
					    "aux_box_preds must have the shape of box_logits");
	}
	p->num_priors = P;
	p->num_loc_classes = L;

	if (p->keep_top_k > 0)
		rows = p->keep_top_k;
	else if (p->top_k > 0)
		rows = p->top_k * C;
	else
		rows = P * C;
	if (rows > MAX_OUT_ROWS || rows < 1 || N > MAX_OUT_ROWS / rows)
		return npr_node_err(n, -EINVAL,
				    "output of %lld x %lld rows is too large",
				    (long long)N, (long long)rows);
	p->rows = rows;
	o->type = NPR_ELEM_F32;
	o->shape.rank = 4;
	o->shape.d[0] = 1;
	o->shape.d[1] = 1;
	o->shape.d[2] = N * rows;
	o->shape.d[3] = 7;
	return 0;
}

/* ---- RegionYolo-0 ---- */

#define REGION_MAX	4096

static int region_yolo_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_region_yolo_params *p;
	int64_t mask[REGION_MAX];
	float anchors[2 * REGION_MAX];
	int cnt, err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = need(n, "coords");
	if (!err)
		err = need(n, "classes");
	if (!err)
		err = npr_attr_int(n, "coords", 4, &p->coords);
	if (!err)
		err = npr_attr_int(n, "classes", 0, &p->classes);
	if (!err)
		err = npr_attr_int(n, "num", 1, &p->num);
	if (!err)
		err = npr_attr_int(n, "axis", 1, &p->axis);
	if (!err)
		err = npr_attr_int(n, "end_axis", 3, &p->end_axis);
	if (!err)
		err = npr_attr_bool(n, "do_softmax", true, &p->do_softmax);
	if (!err)
		err = npr_attr_ints(n, "mask", mask, REGION_MAX, &p->nmask,
				    true);
	if (!err)	/* only validated: the kernel does not use them */
		err = npr_attr_floats(n, "anchors", anchors, 2 * REGION_MAX,
				      &cnt, true);
	if (err)
		return err;
	if (p->coords < 2 || p->coords > REGION_MAX ||
	    p->classes < 0 || p->classes > REGION_MAX ||
	    p->num < 0 || p->num > REGION_MAX)
		return npr_node_err(n, -EINVAL,
				    "coords (%lld, >= 2), classes (%lld) or num (%lld) out of range",
				    (long long)p->coords, (long long)p->classes,
				    (long long)p->num);
	if (!p->do_softmax && !p->nmask)
		return npr_node_err(n, -EINVAL,
				    "do_softmax=false needs a mask");
	return 0;
}

static int region_yolo_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_region_yolo_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t anchors = p->do_softmax ? p->num : p->nmask, want;
	int r = x->shape.rank, i;

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data is %s, not f32",
				    npr_elem_name(x->type));
	if (r != 4)
		return npr_node_err(n, -EINVAL,
				    "data must be [N, C, H, W], has rank %d", r);
	want = anchors * (p->coords + p->classes + 1);
	if (x->shape.d[1] != want)
		return npr_node_err(n, -EINVAL,
				    "channels %lld, expected %lld anchors x (coords %lld + classes %lld + 1) = %lld",
				    (long long)x->shape.d[1],
				    (long long)anchors, (long long)p->coords,
				    (long long)p->classes, (long long)want);
	o->type = x->type;
	o->shape = x->shape;
	if (!p->do_softmax)
		return 0;
	if (p->axis < -r || p->axis >= r || p->end_axis < -r ||
	    p->end_axis >= r)
		return npr_node_err(n, -EINVAL,
				    "axis %lld or end_axis %lld out of range for rank %d",
				    (long long)p->axis, (long long)p->end_axis,
				    r);
	p->ax = (int)(p->axis < 0 ? p->axis + r : p->axis);
	p->end = (int)(p->end_axis < 0 ? p->end_axis + r : p->end_axis);
	if (p->end < p->ax)
		return npr_node_err(n, -EINVAL,
				    "end_axis %lld is before axis %lld",
				    (long long)p->end_axis,
				    (long long)p->axis);
	o->shape.rank = 0;
	for (i = 0; i < p->ax; i++)
		o->shape.d[o->shape.rank++] = x->shape.d[i];
	o->shape.d[o->shape.rank] = 1;
	for (i = p->ax; i <= p->end; i++)
		o->shape.d[o->shape.rank] *= x->shape.d[i];
	o->shape.rank++;
	for (i = p->end + 1; i < r; i++)
		o->shape.d[o->shape.rank++] = x->shape.d[i];
	return 0;
}

/* ---- ROIPooling-2 ---- */

static int roi_pooling_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const methods[] = { "max", "bilinear", NULL };
	struct npr_roi_pooling_params *p;
	int m, err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = need(n, "pooled_h");
	if (!err)
		err = need(n, "pooled_w");
	if (!err)
		err = need(n, "spatial_scale");
	if (!err)
		err = npr_attr_int(n, "pooled_h", 1, &p->pooled_h);
	if (!err)
		err = npr_attr_int(n, "pooled_w", 1, &p->pooled_w);
	if (!err)
		err = get_float(n, "spatial_scale", 1, 0, &p->spatial_scale);
	if (!err)
		err = npr_attr_enum(n, "method", methods, 0, &m);
	if (err)
		return err;
	if (p->pooled_h < 1 || p->pooled_w < 1 ||
	    p->pooled_h > MAX_MAP_DIM || p->pooled_w > MAX_MAP_DIM)
		return npr_node_err(n, -EINVAL,
				    "pooled_h %lld and pooled_w %lld must be in [1, %d]",
				    (long long)p->pooled_h,
				    (long long)p->pooled_w, MAX_MAP_DIM);
	if (!(p->spatial_scale > 0))
		return npr_node_err(n, -EINVAL,
				    "spatial_scale must be positive");
	p->bilinear = m == 1;
	return 0;
}

static int roi_pooling_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_roi_pooling_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *r = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);

	if (x->type != NPR_ELEM_F32 || r->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "feature maps (%s) and ROIs (%s) must be f32",
				    npr_elem_name(x->type),
				    npr_elem_name(r->type));
	if (x->shape.rank != 4)
		return npr_node_err(n, -EINVAL,
				    "feature maps must be [N, C, H, W]");
	if (r->shape.rank != 2 || r->shape.d[1] != 5)
		return npr_node_err(n, -EINVAL,
				    "ROIs must be [NUM_ROIS, 5]");
	o->type = x->type;
	o->shape = (struct npr_shape){ .rank = 4, .d = { r->shape.d[0],
		x->shape.d[1], p->pooled_h, p->pooled_w } };
	if (npr_shape_numel(&o->shape) < 0 ||
	    npr_shape_numel(&o->shape) > MAX_PRIOR_VALUES)
		return npr_node_err(n, -EINVAL, "output too large");
	return 0;
}

/* ---- ROIAlign-3/-9 ---- */

static int roi_align_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "avg", "max", NULL };
	static const char *const aligned[] = { "asymmetric",
					       "half_pixel_for_nn",
					       "half_pixel", NULL };
	struct npr_roi_align_params *p;
	int m, err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = need(n, "pooled_h");
	if (!err)
		err = need(n, "pooled_w");
	if (!err)
		err = need(n, "spatial_scale");
	if (!err)
		err = npr_attr_int(n, "pooled_h", 1, &p->pooled_h);
	if (!err)
		err = npr_attr_int(n, "pooled_w", 1, &p->pooled_w);
	if (!err)
		err = npr_attr_int(n, "sampling_ratio", 0, &p->sampling_ratio);
	if (!err)
		err = get_float(n, "spatial_scale", 1, 0, &p->spatial_scale);
	if (!err)
		err = npr_attr_enum(n, "mode", modes, 0, &m);
	if (!err)
		err = npr_attr_enum(n, "aligned_mode", aligned,
				    NPR_ROI_ALIGN_ASYMMETRIC, &p->aligned);
	if (err)
		return err;
	if (n->version && n->version < 9 && npr_attr(n, "aligned_mode"))
		return npr_node_err(n, -EINVAL,
				    "aligned_mode needs ROIAlign-9");
	if (p->pooled_h < 1 || p->pooled_w < 1 ||
	    p->pooled_h > MAX_MAP_DIM || p->pooled_w > MAX_MAP_DIM)
		return npr_node_err(n, -EINVAL,
				    "pooled_h %lld and pooled_w %lld must be in [1, %d]",
				    (long long)p->pooled_h,
				    (long long)p->pooled_w, MAX_MAP_DIM);
	if (p->sampling_ratio < 0 || p->sampling_ratio > MAX_DENSITY)
		return npr_node_err(n, -EINVAL,
				    "sampling_ratio %lld must be in [0, %d]",
				    (long long)p->sampling_ratio, MAX_DENSITY);
	if (!(p->spatial_scale > 0))
		return npr_node_err(n, -EINVAL,
				    "spatial_scale must be positive");
	p->max = m == 1;
	return 0;
}

static int roi_align_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_roi_align_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *r = npr_in(g, n, 1);
	struct npr_value *b = npr_in(g, n, 2), *o = npr_out(g, n, 0);

	if (x->type != NPR_ELEM_F32 || r->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "feature maps (%s) and ROIs (%s) must be f32",
				    npr_elem_name(x->type),
				    npr_elem_name(r->type));
	if (b->type != NPR_ELEM_I32 && b->type != NPR_ELEM_I64)
		return npr_node_err(n, -EINVAL,
				    "batch_indices are %s, not i32 or i64",
				    npr_elem_name(b->type));
	if (x->shape.rank != 4)
		return npr_node_err(n, -EINVAL,
				    "feature maps must be [N, C, H, W]");
	if (r->shape.rank != 2 || r->shape.d[1] != 4)
		return npr_node_err(n, -EINVAL, "ROIs must be [NUM_ROIS, 4]");
	if (b->shape.rank != 1 || b->shape.d[0] != r->shape.d[0])
		return npr_node_err(n, -EINVAL,
				    "batch_indices must be [NUM_ROIS]");
	o->type = x->type;
	o->shape = (struct npr_shape){ .rank = 4, .d = { r->shape.d[0],
		x->shape.d[1], p->pooled_h, p->pooled_w } };
	if (npr_shape_numel(&o->shape) < 0 ||
	    npr_shape_numel(&o->shape) > MAX_PRIOR_VALUES)
		return npr_node_err(n, -EINVAL, "output too large");
	return 0;
}

const struct npr_op_def npr_ops_detect[] = {
	{ .type = "ROIAlign", .vmin = 3, .vmax = 8, .nin_min = 3,
	  .nin_max = 3, .parse = roi_align_parse, .infer = roi_align_infer },
	{ .type = "ROIAlign", .vmin = 9, .vmax = 99, .nin_min = 3,
	  .nin_max = 3, .parse = roi_align_parse, .infer = roi_align_infer },
	{ .type = "ROIPooling", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = roi_pooling_parse,
	  .infer = roi_pooling_infer },
	{ .type = "RegionYolo", .vmin = 0, .vmax = 99, .nin_min = 1,
	  .nin_max = 1, .parse = region_yolo_parse,
	  .infer = region_yolo_infer },
	{ .type = "PriorBoxClustered", .vmin = 0, .vmax = 99, .nin_min = 1,
	  .nin_max = 2, .parse = pbc_parse, .infer = pbc_infer },
	{ .type = "PriorBox", .vmin = 0, .vmax = 7, .nin_min = 2,
	  .nin_max = 2, .parse = prior_box1_parse, .infer = prior_box_infer },
	{ .type = "PriorBox", .vmin = 8, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = prior_box8_parse, .infer = prior_box_infer },
	{ .type = "DetectionOutput", .vmin = 0, .vmax = 7, .nin_min = 3,
	  .nin_max = 5, .parse = detout1_parse, .infer = detout_infer },
	{ .type = "DetectionOutput", .vmin = 8, .vmax = 99, .nin_min = 3,
	  .nin_max = 5, .parse = detout8_parse, .infer = detout_infer },
	{ .type = NULL },
};
