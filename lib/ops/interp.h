/* SPDX-License-Identifier: MIT */
/*
 * Interpolate-1, -4 and -11.  Attributes and shape inference in
 * lib/ops/interp.c, the reference kernel in ref/kernels/interp.c.
 *
 * Every mode is computed as a separable resampling: per axis, each output
 * coordinate reads a few taps of the zero-padded input with weights; the
 * output is the sum over all tap combinations of the products of weights.
 */
#ifndef NPR_OPS_INTERP_H
#define NPR_OPS_INTERP_H

#include "graph/graph.h"

enum npr_interp_mode {
	NPR_INTERP_NEAREST,
	NPR_INTERP_LINEAR,
	NPR_INTERP_LINEAR_ONNX,
	NPR_INTERP_CUBIC,
	NPR_INTERP_BILINEAR_PILLOW,
	NPR_INTERP_BICUBIC_PILLOW,
};

enum npr_interp_coord {
	NPR_COORD_HALF_PIXEL,
	NPR_COORD_PYTORCH_HALF_PIXEL,
	NPR_COORD_ASYMMETRIC,
	NPR_COORD_TF_HALF_PIXEL_FOR_NN,
	NPR_COORD_ALIGN_CORNERS,
};

enum npr_interp_nearest {
	NPR_NEAREST_ROUND_PREFER_FLOOR,
	NPR_NEAREST_ROUND_PREFER_CEIL,
	NPR_NEAREST_FLOOR,
	NPR_NEAREST_CEIL,
	NPR_NEAREST_SIMPLE,
};

/**
 * struct npr_interp_params - attributes, and the plan made by infer
 * @mode: enum npr_interp_mode.
 * @coord: enum npr_interp_coord.
 * @nearest: enum npr_interp_nearest.
 * @use_scales: shape_calculation_mode is "scales".
 * @antialias: antialias attribute.
 * @cube_coeff: cubic's coefficient A.
 * @pb, @pe: pads_begin, pads_end per input axis.
 * @nax1: Interpolate-1: number of entries of the axes attribute.
 * @ax1: Interpolate-1: the axes attribute.
 * @interp: per input axis: interpolated (set by infer).
 * @scale: per input axis: the scale of the coordinate transformation
 *         (set by infer; 1 for axes not interpolated).
 */
struct npr_interp_params {
	int mode;
	int coord;
	int nearest;
	bool use_scales;
	bool antialias;
	double cube_coeff;
	int64_t pb[NPR_MAX_RANK], pe[NPR_MAX_RANK];
	int nax1;
	int64_t ax1[NPR_MAX_RANK];
	bool interp[NPR_MAX_RANK];
	double scale[NPR_MAX_RANK];
};

#endif /* NPR_OPS_INTERP_H */
