/* SPDX-License-Identifier: MIT */
/*
 * Neural-network ops: convolutions, pooling, softmax, reductions, MatMul.
 */
#ifndef NPR_OPS_NN_H
#define NPR_OPS_NN_H

#include "graph/graph.h"

#define NPR_MAX_SPATIAL	3

enum npr_auto_pad {
	NPR_PAD_EXPLICIT, NPR_PAD_VALID, NPR_PAD_SAME_UPPER,
	NPR_PAD_SAME_LOWER,
};

enum npr_reduce {
	NPR_RED_SUM, NPR_RED_MEAN, NPR_RED_MAX, NPR_RED_MIN, NPR_RED_PROD,
	NPR_RED_L1, NPR_RED_L2,
};

/*
 * Convolution, GroupConvolution, MaxPool, AvgPool.  pads are the
 * attribute values at parse time and the effective ones after infer.
 */
struct npr_conv_params {
	int nsp;			/* spatial rank */
	int64_t stride[NPR_MAX_SPATIAL];
	int64_t dil[NPR_MAX_SPATIAL];
	int64_t pb[NPR_MAX_SPATIAL];
	int64_t pe[NPR_MAX_SPATIAL];
	int64_t kernel[NPR_MAX_SPATIAL];	/* pooling */
	int auto_pad;
	bool ceil;			/* pooling rounding_type */
	bool exclude_pad;		/* AvgPool */
	bool group;			/* GroupConvolution */
	int64_t groups;			/* set by infer */
	unsigned int index_type;	/* MaxPool-8 */
	int64_t axis;			/* MaxPool-8 indices axis */
};

struct npr_nn_params {
	int64_t axis;			/* SoftMax */
	int red;			/* enum npr_reduce */
	bool keep_dims;
	bool reduced[NPR_MAX_RANK];	/* set by infer */
	bool ta, tb;			/* MatMul */
};

#endif /* NPR_OPS_NN_H */
