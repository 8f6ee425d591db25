// SPDX-License-Identifier: MIT
/*
 * Transposed convolutions: attributes and shape inference.  Kernel:
 * ref/kernels/deconv.c.
 *
 * Without an output_shape input, each output spatial size is
 *   O = s * (I - 1) + d * (K - 1) + 1 - pads_begin - pads_end + output_padding
 * (pads 0 for auto_pad valid), or O = s * I for same_upper / same_lower.
 * With output_shape, or with same_*, the pads are deduced: their total is
 * what makes the formula give O, split evenly with the odd one at the end
 * (same_upper, explicit) or at the beginning (same_lower).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deconv.h"

static const char *const pad_names[] = {
	"explicit", "valid", "same_upper", "same_lower", "notset", NULL,
};

static int list_parse(struct npr_node *n, const char *key, int64_t *out,
		      int *nsp, bool optional, int64_t def, int64_t min)
{
	int cnt, i, err;

	err = npr_attr_ints(n, key, out, NPR_DECONV_MAX_SPATIAL, &cnt,
			    optional);
	if (err == -ENOENT)
		return npr_node_err(n, -EINVAL, "attribute %s is required", key);
	if (err)
		return err;
	if (!cnt && optional) {
		for (i = 0; i < NPR_DECONV_MAX_SPATIAL; i++)
			out[i] = def;
		return 0;
	}
	if (*nsp < 0)
		*nsp = cnt;
	if (cnt != *nsp)
		return npr_node_err(n, -EINVAL, "%s has %d values, expected %d",
				    key, cnt, *nsp);
	for (i = 0; i < cnt; i++)
		if (out[i] < min)
			return npr_node_err(n, -EINVAL, "%s[%d] = %lld is invalid",
					    key, i, (long long)out[i]);
	return 0;
}

static int deconv_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_deconv_params *p;
	int err, ap;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->group = !strcmp(n->type, "GroupConvolutionBackpropData");
	p->nsp = -1;
	err = list_parse(n, "strides", p->stride, &p->nsp, false, 1, 1);
	if (!err)
		err = list_parse(n, "dilations", p->dil, &p->nsp, false, 1, 1);
	if (!err)
		err = list_parse(n, "pads_begin", p->pb, &p->nsp, true, 0, 0);
	if (!err)
		err = list_parse(n, "pads_end", p->pe, &p->nsp, true, 0, 0);
	if (!err)
		err = list_parse(n, "output_padding", p->outpad, &p->nsp, true,
				 0, 0);
	if (!err)
		err = npr_attr_enum(n, "auto_pad", pad_names, 0, &ap);
	if (err)
		return err;
	p->auto_pad = ap == 4 ? NPR_DECONV_EXPLICIT : ap;
	if (p->nsp < 1 || p->nsp > NPR_DECONV_MAX_SPATIAL)
		return npr_node_err(n, -EINVAL, "%d spatial dims not supported",
				    p->nsp);
	return 0;
}

static int deconv_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_deconv_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *w = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	int off = p->group ? 1 : 0, i, cnt;
	int64_t oshape[NPR_DECONV_MAX_SPATIAL], cin, cout;

	if (x->shape.rank != p->nsp + 2 || w->shape.rank != p->nsp + 2 + off)
		return npr_node_err(n, -EINVAL,
				    "data rank %d / weights rank %d do not match %d spatial dims",
				    x->shape.rank, w->shape.rank, p->nsp);
	if (x->type != NPR_ELEM_F32 || w->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL,
				    "data and weights must be f32 (after lowering), got %s and %s",
				    npr_elem_name(x->type),
				    npr_elem_name(w->type));
	if (!npr_shape_static(&x->shape) || !npr_shape_static(&w->shape))
		return npr_node_err(n, -EINVAL, "dynamic shapes are not supported");
	p->groups = p->group ? w->shape.d[0] : 1;
	if (p->groups < 1)
		return npr_node_err(n, -EINVAL, "%lld groups",
				    (long long)p->groups);
	cin = w->shape.d[off] * p->groups;
	cout = w->shape.d[off + 1] * p->groups;
	if (cin != x->shape.d[1] || cout < 1)
		return npr_node_err(n, -EINVAL,
				    "weights expect %lld input channels, data has %lld",
				    (long long)cin, (long long)x->shape.d[1]);
	if (n->nin > 2) {
		cnt = npr_const_ints(g, n, 2, oshape, NPR_DECONV_MAX_SPATIAL);
		if (cnt < 0)
			return cnt;
		if (cnt != p->nsp)
			return npr_node_err(n, -EINVAL,
					    "output_shape has %d values, expected %d",
					    cnt, p->nsp);
	}
	o->shape.rank = x->shape.rank;
	o->shape.d[0] = x->shape.d[0];
	o->shape.d[1] = cout;
	for (i = 0; i < p->nsp; i++) {
		int64_t in = x->shape.d[2 + i], s = p->stride[i];
		int64_t ke = p->dil[i] * (w->shape.d[2 + off + i] - 1) + 1;
		int64_t full = s * (in - 1) + ke + p->outpad[i], od, total;

		if (p->outpad[i] >= s && p->outpad[i] >= p->dil[i])
			return npr_node_err(n, -EINVAL,
					    "output_padding[%d] = %lld must be less than the stride or the dilation",
					    i, (long long)p->outpad[i]);
		if (p->auto_pad == NPR_DECONV_VALID)
			p->pb[i] = p->pe[i] = 0;
		if (n->nin > 2)
			od = oshape[i];
		else if (p->auto_pad == NPR_DECONV_SAME_UPPER ||
			 p->auto_pad == NPR_DECONV_SAME_LOWER)
			od = in * s;
		else
			od = full - p->pb[i] - p->pe[i];
		if (n->nin > 2 || p->auto_pad == NPR_DECONV_SAME_UPPER ||
		    p->auto_pad == NPR_DECONV_SAME_LOWER) {
			total = full - od;
			if (total < 0)
				total = 0;
			p->pb[i] = p->auto_pad == NPR_DECONV_SAME_LOWER ?
				   total - total / 2 : total / 2;
			p->pe[i] = total - p->pb[i];
		}
		if (od < 1)
			return npr_node_err(n, -EINVAL,
					    "spatial dim %d: output size %lld",
					    i, (long long)od);
		o->shape.d[2 + i] = od;
	}
	o->type = x->type;
	return 0;
}

const struct npr_op_def npr_ops_deconv[] = {
	{ .type = "ConvolutionBackpropData", .vmin = 0, .vmax = 99,
	  .nin_min = 2, .nin_max = 3, .parse = deconv_parse,
	  .infer = deconv_infer },
	{ .type = "GroupConvolutionBackpropData", .vmin = 0, .vmax = 99,
	  .nin_min = 2, .nin_max = 3, .parse = deconv_parse,
	  .infer = deconv_infer },
	{ .type = NULL },
};
