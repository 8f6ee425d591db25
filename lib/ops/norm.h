/* SPDX-License-Identifier: MIT */
/*
 * Normalization ops: MVN-1 (attribute axes), MVN-6 (axes input),
 * NormalizeL2-1 and BatchNormInference-1/-5.  Attributes and shape
 * inference in lib/ops/norm.c, scalar reference kernels in ref/kernels/norm.c.
 */
#ifndef NPR_OPS_NORM_H
#define NPR_OPS_NORM_H

#include "graph/graph.h"

enum npr_norm_kind {
	NPR_NORM_MVN, NPR_NORM_L2, NPR_NORM_BATCH,
};

/**
 * struct npr_norm_params - attributes of the normalization ops
 * @kind: enum npr_norm_kind.
 * @eps: epsilon.
 * @normalize_variance: MVN: divide by the standard deviation too.
 * @inside_sqrt: MVN: eps added to the variance (else to its square root).
 * @eps_max: NormalizeL2: max(sum, eps) (else sum + eps).
 * @across_channels: MVN-1: reduce over the channel axis too.
 * @nred: MVN-1: number of reduction_axes given, 0 if none.
 * @red: MVN-1: the reduction_axes attribute.
 * @reduced: MVN, NormalizeL2: axes reduced over, set by infer.
 * @data: BatchNormInference: index of the data input (2 for opset1,
 *        0 for opset5); gamma, beta, mean and variance follow the order
 *        of the spec of the version.
 */
struct npr_norm_params {
	int kind;
	float eps;
	bool normalize_variance;
	bool inside_sqrt;
	bool eps_max;
	bool across_channels;
	int nred;
	int64_t red[NPR_MAX_RANK];
	bool reduced[NPR_MAX_RANK];
	int data;
};

#endif /* NPR_OPS_NORM_H */
