// SPDX-License-Identifier: MIT
/*
 * Interpolate-1/-4/-11: attributes and shape inference after the OpenVINO
 * opset specifications.  Kernel: ref/kernels/interp.c.
 *
 *  - Interpolate-4: data, sizes, scales, [axes].  Interpolate-11: data,
 *    scales_or_sizes, [axes].  The input shape_calculation_mode names must
 *    be constant; axes default to every axis.
 *  - shape_calculation_mode "scales": out = floor(scale * padded length),
 *    computed with a relative tolerance of 1e-5 so that a scale written as
 *    0.333333 of 3 gives 1; the scale itself drives the coordinate
 *    transformation.  "sizes": out = size, scale = out / padded length.
 *  - Interpolate-1 runs as Interpolate-4: nearest uses asymmetric
 *    coordinates and the "simple" rounding; linear is linear_onnx (linear
 *    with antialias when antialias is set) and cubic is cubic, both with
 *    align_corners or half_pixel after align_corners.  Mode "area" is not
 *    supported.
 *  - antialias applies to "linear"; the Pillow modes always widen their
 *    filter when downscaling, as Pillow does; the others ignore it.
 *  - Pads must be non-negative; lists shorter than the rank are padded
 *    with zeros.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "elem.h"

#define MAX_OUT_DIM	((int64_t)1 << 31)

static int interp_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = {
		"nearest", "linear", "linear_onnx", "cubic",
		"bilinear_pillow", "bicubic_pillow", "area", NULL };
	static const char *const calc[] = { "sizes", "scales", NULL };
	static const char *const coords[] = {
		"half_pixel", "pytorch_half_pixel", "asymmetric",
		"tf_half_pixel_for_nn", "align_corners", NULL };
	static const char *const nearest[] = {
		"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
		"simple", NULL };
	struct npr_interp_params *p = npr_params_new(n, sizeof(*p));
	int64_t pads[NPR_MAX_RANK];
	int err, cnt, i, c;
	bool v1 = n->version < 4;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!npr_attr(n, "mode"))
		return npr_node_err(n, -EINVAL, "missing attribute mode");
	err = npr_attr_enum(n, "mode", modes, 0, &p->mode);
	if (err)
		return err;
	if (p->mode == 6)
		return npr_node_err(n, -EOPNOTSUPP,
				    "mode=\"area\" is not supported");
	if ((v1 && p->mode != NPR_INTERP_NEAREST &&
	     p->mode != NPR_INTERP_LINEAR && p->mode != NPR_INTERP_CUBIC) ||
	    (n->version < 11 && p->mode >= NPR_INTERP_BILINEAR_PILLOW))
		return npr_node_err(n, -EINVAL,
				    "mode=\"%s\" needs a later Interpolate version",
				    npr_attr(n, "mode"));
	err = npr_attr_bool(n, "antialias", false, &p->antialias);
	if (err)
		return err;
	for (i = 0; i < 2; i++) {
		const char *key = i ? "pads_end" : "pads_begin";
		int64_t *dst = i ? p->pe : p->pb;
		int k;

		err = npr_attr_ints(n, key, pads, NPR_MAX_RANK, &cnt, true);
		if (err)
			return err;
		for (k = 0; k < cnt; k++) {
			if (pads[k] < 0 || pads[k] > MAX_OUT_DIM)
				return npr_node_err(n, -EINVAL,
						    "%s[%d] = %lld is out of range",
						    key, k, (long long)pads[k]);
			dst[k] = pads[k];
		}
	}
	if (v1) {
		bool align;

		err = npr_attr_ints(n, "axes", p->ax1, NPR_MAX_RANK, &p->nax1,
				    false);
		if (!err)
			err = npr_attr_bool(n, "align_corners", false, &align);
		if (err)
			return err;
		if (p->mode == NPR_INTERP_NEAREST) {
			p->coord = NPR_COORD_ASYMMETRIC;
			p->nearest = NPR_NEAREST_SIMPLE;
		} else {
			p->coord = align ? NPR_COORD_ALIGN_CORNERS :
				   NPR_COORD_HALF_PIXEL;
			if (p->mode == NPR_INTERP_LINEAR && !p->antialias)
				p->mode = NPR_INTERP_LINEAR_ONNX;
		}
		p->cube_coeff = -0.75;
		return 0;
	}
	if (!npr_attr(n, "shape_calculation_mode"))
		return npr_node_err(n, -EINVAL,
				    "missing attribute shape_calculation_mode");
	err = npr_attr_enum(n, "shape_calculation_mode", calc, 0, &c);
	if (!err)
		err = npr_attr_enum(n, "coordinate_transformation_mode",
				    coords, NPR_COORD_HALF_PIXEL, &p->coord);
	if (!err)
		err = npr_attr_enum(n, "nearest_mode", nearest,
				    NPR_NEAREST_ROUND_PREFER_FLOOR,
				    &p->nearest);
	if (!err)
		err = npr_attr_float(n, "cube_coeff", -0.75, &p->cube_coeff);
	if (err)
		return err;
	if (!isfinite(p->cube_coeff))
		return npr_node_err(n, -EINVAL, "cube_coeff is not finite");
	p->use_scales = c == 1;
	return 0;
}

/* Values of constant input @i as doubles; the count, or -errno. */
static int const_vals(struct npr_graph *g, const struct npr_node *n, int i,
		      const char *what, double *out, int max)
{
	const struct npr_value *v;
	int64_t cnt, k;

	if (i >= n->nin)
		return npr_node_err(n, -EINVAL, "%s (input %d) is missing",
				    what, i);
	v = npr_in(g, n, i);
	if (!v->data)
		return npr_node_err(n, -ENODATA,
				    "%s (input %d) must be a constant", what, i);
	if (!npr_is_compute(v->type))
		return npr_node_err(n, -EINVAL, "%s (input %d) is %s", what,
				    i, npr_elem_name(v->type));
	if (v->shape.rank > 1)
		return npr_node_err(n, -EINVAL, "%s (input %d) must be 1-D",
				    what, i);
	cnt = npr_shape_numel(&v->shape);
	if (cnt < 0 || cnt > max)
		return npr_node_err(n, -EINVAL,
				    "%s (input %d) has %lld elements, at most %d allowed",
				    what, i, (long long)cnt, max);
	if (npr_tensor_bytes(v->type, cnt) > v->nbytes)
		return npr_node_err(n, -EINVAL, "%s: short constant", what);
	for (k = 0; k < cnt; k++)
		out[k] = npr_ld(v->type, v->data, k);
	return (int)cnt;
}

static int interp_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_interp_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int r = x->shape.rank, nax, nval, i, err;
	double vals[NPR_MAX_RANK];
	int64_t axes[NPR_MAX_RANK];
	struct npr_shape s = x->shape;
	bool v1 = n->version < 4, v11 = n->version >= 11;
	int axes_in = v11 ? 2 : 3;

	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	if (!npr_is_compute(x->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(x->type));
	if (r < 1)
		return npr_node_err(n, -EINVAL, "data must have rank >= 1");
	if (v1) {
		nax = p->nax1;
		memcpy(axes, p->ax1, sizeof(axes));
	} else if (n->nin > axes_in) {
		nax = npr_const_ints(g, n, axes_in, axes, NPR_MAX_RANK);
		if (nax < 0)
			return nax;
	} else {
		nax = r;
		for (i = 0; i < r; i++)
			axes[i] = i;
	}
	memset(p->interp, 0, sizeof(p->interp));
	for (i = 0; i < r; i++) {
		s.d[i] = x->shape.d[i] + p->pb[i] + p->pe[i];
		p->scale[i] = 1;
	}
	for (i = r; i < NPR_MAX_RANK; i++)
		if (p->pb[i] || p->pe[i])
			return npr_node_err(n, -EINVAL,
					    "pads are given for axis %d of a rank %d input",
					    i, r);
	if (v1 || !p->use_scales) {
		nval = const_vals(g, n, 1, "sizes", vals, NPR_MAX_RANK);
	} else {
		nval = const_vals(g, n, v11 ? 1 : 2, "scales", vals,
				  NPR_MAX_RANK);
	}
	if (nval < 0)
		return nval;
	if (nval != nax)
		return npr_node_err(n, -EINVAL,
				    "%d axes but %d %s", nax, nval,
				    (!v1 && p->use_scales) ? "scales" : "sizes");
	for (i = 0; i < nax; i++) {
		int a;
		int64_t len;

		err = npr_norm_axis(n, "axis", axes[i], r, &a);
		if (err)
			return err;
		if (p->interp[a])
			return npr_node_err(n, -EINVAL, "axis %lld is repeated",
					    (long long)axes[i]);
		p->interp[a] = true;
		len = s.d[a];
		if (!v1 && p->use_scales) {
			double f;

			if (!(vals[i] > 0) || !isfinite(vals[i]))
				return npr_node_err(n, -EINVAL,
						    "scale %g for axis %d must be positive",
						    vals[i], a);
			f = floor(vals[i] * (double)len * (1 + 1e-5));
			if (f > (double)MAX_OUT_DIM)
				return npr_node_err(n, -EINVAL,
						    "axis %d: output dim too large",
						    a);
			s.d[a] = (int64_t)f;
			p->scale[a] = vals[i];
		} else {
			if (vals[i] < 0 || vals[i] > (double)MAX_OUT_DIM ||
			    vals[i] != floor(vals[i]))
				return npr_node_err(n, -EINVAL,
						    "size %g for axis %d is invalid",
						    vals[i], a);
			s.d[a] = (int64_t)vals[i];
			p->scale[a] = len ? (double)s.d[a] / (double)len : 1;
		}
		if (s.d[a] && !len)
			return npr_node_err(n, -EINVAL,
					    "axis %d: cannot resize an empty axis to %lld",
					    a, (long long)s.d[a]);
		/* wide filters: keep the taps per output bounded */
		if ((p->mode >= NPR_INTERP_BILINEAR_PILLOW ||
		     (p->mode == NPR_INTERP_LINEAR && p->antialias)) &&
		    s.d[a] && p->scale[a] < 1.0 / 4096)
			return npr_node_err(n, -EINVAL,
					    "axis %d: downscaling by more than 4096 is not supported in this mode",
					    a);
	}
	err = npr_check_numel(n, &s);
	if (err)
		return err;
	o->type = x->type;
	o->shape = s;
	return 0;
}

const struct npr_op_def npr_ops_interp[] = {
	{ .type = "Interpolate", .vmin = 0, .vmax = 3, .nin_min = 2,
	  .nin_max = 2, .parse = interp_parse, .infer = interp_infer },
	{ .type = "Interpolate", .vmin = 4, .vmax = 10, .nin_min = 3,
	  .nin_max = 4, .parse = interp_parse, .infer = interp_infer },
	{ .type = "Interpolate", .vmin = 11, .vmax = 99, .nin_min = 2,
	  .nin_max = 3, .parse = interp_parse, .infer = interp_infer },
	{ .type = NULL },
};
