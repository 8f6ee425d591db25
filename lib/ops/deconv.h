/* SPDX-License-Identifier: MIT */
/*
 * Transposed convolutions: ConvolutionBackpropData-1 and
 * GroupConvolutionBackpropData-1.  Attributes and shape inference in
 * lib/ops/deconv.c, scalar reference kernel in ref/kernels/deconv.c.
 */
#ifndef NPR_OPS_DECONV_H
#define NPR_OPS_DECONV_H

#include "graph/graph.h"

#define NPR_DECONV_MAX_SPATIAL	3

/**
 * struct npr_deconv_params - attributes of the transposed convolutions
 * @nsp: spatial rank.
 * @stride: strides.
 * @dil: dilations.
 * @pb: pads_begin; the effective value (cropped from the output start)
 *      after infer.
 * @pe: pads_end; effective after infer.
 * @outpad: output_padding, extra output at the end of each axis.
 * @auto_pad: enum npr_deconv_pad.
 * @group: GroupConvolutionBackpropData.
 * @groups: number of groups, set by infer.
 */
struct npr_deconv_params {
	int nsp;
	int64_t stride[NPR_DECONV_MAX_SPATIAL];
	int64_t dil[NPR_DECONV_MAX_SPATIAL];
	int64_t pb[NPR_DECONV_MAX_SPATIAL];
	int64_t pe[NPR_DECONV_MAX_SPATIAL];
	int64_t outpad[NPR_DECONV_MAX_SPATIAL];
	int auto_pad;
	bool group;
	int64_t groups;
};

enum npr_deconv_pad {
	NPR_DECONV_EXPLICIT, NPR_DECONV_VALID, NPR_DECONV_SAME_UPPER,
	NPR_DECONV_SAME_LOWER,
};

#endif /* NPR_OPS_DECONV_H */
