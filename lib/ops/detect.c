// SPDX-License-Identifier: MIT
/*
 * SSD detection ops: attributes and shape inference.  Kernels:
 * ref/detect.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops/detect.h"

static int variance_parse(struct npr_node *n, struct npr_prior_params *p)
{
	int err;

	err = npr_attr_floats(n, "variance", p->variance, 4, &p->nvar, true);
	if (err)
		return err;
	if (p->nvar != 0 && p->nvar != 1 && p->nvar != 4)
		return npr_node_err(n, -EINVAL, "variance needs 1 or 4 values, has %d",
				    p->nvar);
	if (!p->nvar) {
		p->variance[0] = 0.1f;
		p->nvar = 1;
	}
	return 0;
}

static int pbc_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_prior_params *p;
	double v;
	int nh, err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = npr_attr_floats(n, "width", p->widths, NPR_MAX_PRIORS,
			      &p->nsizes, false);
	if (!err)
		err = npr_attr_floats(n, "height", p->heights, NPR_MAX_PRIORS,
				      &nh, false);
	if (err)
		return err;
	if (nh != p->nsizes || !nh)
		return npr_node_err(n, -EINVAL, "width has %d values, height %d",
				    p->nsizes, nh);
	err = npr_attr_bool(n, "clip", true, &p->clip);
	if (!err)
		err = npr_attr_float(n, "step", 0, &v);
	p->step = (float)v;
	if (!err)
		err = npr_attr_float(n, "step_w", 0, &v);
	p->step_w = (float)v;
	if (!err)
		err = npr_attr_float(n, "step_h", 0, &v);
	p->step_h = (float)v;
	if (!err)
		err = npr_attr_float(n, "offset", 0.5, &v);
	p->offset = (float)v;
	if (err)
		return err;
	p->num_priors = p->nsizes;
	return variance_parse(n, p);
}

static int pbc_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_prior_params *p = n->params;
	struct npr_value *o = npr_out(g, n, 0);
	int64_t fm[2], img[2];
	int cnt;

	cnt = npr_const_ints(g, n, 0, fm, 2);
	if (cnt < 0)
		return cnt;
	if (cnt != 2 || fm[0] < 1 || fm[1] < 1)
		return npr_node_err(n, -EINVAL, "output_size must hold [H, W] >= 1");
	cnt = npr_const_ints(g, n, 1, img, 2);
	if (cnt < 0)
		return cnt;
	if (cnt != 2 || img[0] < 1 || img[1] < 1)
		return npr_node_err(n, -EINVAL, "image_size must hold [H, W] >= 1");
	o->type = NPR_ELEM_F32;
	o->shape.rank = 2;
	o->shape.d[0] = 2;
	o->shape.d[1] = 4 * fm[0] * fm[1] * p->num_priors;
	return 0;
}

static const char *const code_names[] = {
	"caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE",
	"caffe.PriorBoxParameter.CORNER_SIZE", NULL,
};

static int detout_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_detout_params *p;
	double v;
	int err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (n->version < 8) {
		if (!npr_attr(n, "num_classes"))
			return npr_node_err(n, -EINVAL, "num_classes is missing");
		err = npr_attr_int(n, "num_classes", 0, &p->num_classes);
		if (err)
			return err;
		if (p->num_classes < 1)
			return npr_node_err(n, -EINVAL, "num_classes must be >= 1");
	}
	err = npr_attr_int(n, "background_label_id", 0, &p->background);
	if (!err)
		err = npr_attr_int(n, "top_k", -1, &p->top_k);
	if (!err)
		err = npr_attr_int(n, "keep_top_k", -1, &p->keep_top_k_attr);
	if (!err)
		err = npr_attr_enum(n, "code_type", code_names,
				    NPR_CODE_CORNER, &p->code);
	if (!err)
		err = npr_attr_bool(n, "share_location", true, &p->share_location);
	if (!err)
		err = npr_attr_bool(n, "variance_encoded_in_target", false,
				    &p->var_in_target);
	if (!err)
		err = npr_attr_bool(n, "normalized", false, &p->normalized);
	if (!err)
		err = npr_attr_bool(n, "clip_before_nms", false, &p->clip_before);
	if (!err)
		err = npr_attr_bool(n, "clip_after_nms", false, &p->clip_after);
	if (!err)
		err = npr_attr_bool(n, "decrease_label_id", false,
				    &p->decrease_label);
	if (!err)
		err = npr_attr_float(n, "nms_threshold", 0, &v);
	p->nms_thr = (float)v;
	if (!err && !npr_attr(n, "nms_threshold"))
		return npr_node_err(n, -EINVAL, "nms_threshold is missing");
	if (!err)
		err = npr_attr_float(n, "confidence_threshold", 0, &v);
	p->conf_thr = (float)v;
	if (!err)
		err = npr_attr_float(n, "objectness_score", 0, &v);
	p->objectness = (float)v;
	if (!err)
		err = npr_attr_int(n, "input_height", 1, &p->in_h);
	if (!err)
		err = npr_attr_int(n, "input_width", 1, &p->in_w);
	return err;
}

static int detout_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_detout_params *p = n->params;
	struct npr_value *loc = npr_in(g, n, 0), *conf = npr_in(g, n, 1);
	struct npr_value *pri = npr_in(g, n, 2), *o = npr_out(g, n, 0);
	int64_t N, per_img;
	int i;

	if (n->nin == 5)
		return npr_node_err(n, -EOPNOTSUPP,
				    "auxiliary (two-stage) inputs are not supported yet");
	for (i = 0; i < 3; i++)
		if (npr_in(g, n, i)->type != NPR_ELEM_F32)
			return npr_node_err(n, -EINVAL, "input %d must be f32", i);
	if (loc->shape.rank != 2 || conf->shape.rank != 2 ||
	    pri->shape.rank != 3)
		return npr_node_err(n, -EINVAL, "expected ranks 2, 2 and 3");
	N = loc->shape.d[0];
	if (conf->shape.d[0] != N || (pri->shape.d[0] != 1 && pri->shape.d[0] != N))
		return npr_node_err(n, -EINVAL, "batch sizes differ");
	p->prior_size = p->normalized ? 4 : 5;
	if (pri->shape.d[2] % p->prior_size)
		return npr_node_err(n, -EINVAL, "priors are not a multiple of %lld",
				    (long long)p->prior_size);
	p->num_priors = pri->shape.d[2] / p->prior_size;
	if (!p->num_priors)
		return npr_node_err(n, -EINVAL, "no priors");
	if (n->version >= 8) {
		if (conf->shape.d[1] % p->num_priors)
			return npr_node_err(n, -EINVAL,
					    "class predictions do not divide into %lld priors",
					    (long long)p->num_priors);
		p->num_classes = conf->shape.d[1] / p->num_priors;
	}
	if (conf->shape.d[1] != p->num_priors * p->num_classes)
		return npr_node_err(n, -EINVAL,
				    "class predictions: %lld, expected %lld priors x %lld classes",
				    (long long)conf->shape.d[1],
				    (long long)p->num_priors,
				    (long long)p->num_classes);
	p->num_loc_classes = p->share_location ? 1 : p->num_classes;
	if (loc->shape.d[1] != p->num_priors * p->num_loc_classes * 4)
		return npr_node_err(n, -EINVAL,
				    "box predictions: %lld, expected %lld",
				    (long long)loc->shape.d[1],
				    (long long)(p->num_priors * p->num_loc_classes * 4));
	if (pri->shape.d[1] != 1 && pri->shape.d[1] != 2)
		return npr_node_err(n, -EINVAL, "priors dim 1 must be 1 or 2");
	if (!p->var_in_target && pri->shape.d[1] != 2)
		return npr_node_err(n, -EINVAL, "priors carry no variances");
	if (p->background >= p->num_classes)
		p->background = -1;
	per_img = p->keep_top_k_attr > 0 ? p->keep_top_k_attr :
		  p->top_k > 0 ? p->top_k * p->num_classes :
		  p->num_priors * p->num_classes;
	p->keep_top_k = per_img;
	o->type = NPR_ELEM_F32;
	o->shape.rank = 4;
	o->shape.d[0] = 1;
	o->shape.d[1] = 1;
	o->shape.d[2] = N * per_img;
	o->shape.d[3] = 7;
	return 0;
}

const struct npr_op_def npr_ops_detect[] = {
	{ .type = "PriorBoxClustered", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = pbc_parse, .infer = pbc_infer,
	  .eval = npr_ref_prior_box_clustered },
	{ .type = "DetectionOutput", .vmin = 0, .vmax = 7, .nin_min = 3,
	  .nin_max = 5, .parse = detout_parse, .infer = detout_infer,
	  .eval = npr_ref_detection_output, .flags = NPR_OP_NO_FOLD },
	{ .type = "DetectionOutput", .vmin = 8, .vmax = 99, .nin_min = 3,
	  .nin_max = 5, .parse = detout_parse, .infer = detout_infer,
	  .eval = npr_ref_detection_output, .flags = NPR_OP_NO_FOLD },
	{ .type = NULL },
};
