/* SPDX-License-Identifier: MIT */
/*
 * Indexing ops: GatherElements-6, GatherND-5/-8, ScatterUpdate-3,
 * ScatterElementsUpdate-3/-12, ScatterNDUpdate-3/-15, OneHot-1,
 * NonZero-3.  Attributes and shape inference in lib/ops/index.c, scalar
 * reference kernels in ref/kernels/index.c.
 *
 * Indices are i32 or i64.  Negative indices count from the end of their
 * dimension; an index still out of range after that makes the kernel fail
 * with -EINVAL naming the node (OneHot: gives off_value, as the spec says).
 */
#ifndef NPR_OPS_INDEX_H
#define NPR_OPS_INDEX_H

#include "graph/graph.h"

enum npr_scatter_red {
	NPR_SCATTER_NONE,
	NPR_SCATTER_SUM,
	NPR_SCATTER_SUB,
	NPR_SCATTER_PROD,
	NPR_SCATTER_MIN,
	NPR_SCATTER_MAX,
	NPR_SCATTER_MEAN,
};

/**
 * struct npr_index_params - parsed attributes of the indexing ops
 * @axis: GatherElements, OneHot: as written; ScatterUpdate,
 *        ScatterElementsUpdate: from the axis input.  Normalised by infer
 *        into @ax.
 * @ax: normalised axis.
 * @batch_dims: GatherND: as written; @bd normalised.
 * @bd: GatherND: normalised batch_dims.
 * @reduction: ScatterElementsUpdate-12, ScatterNDUpdate-15: enum
 *             npr_scatter_red.
 * @use_init_val: ScatterElementsUpdate-12.
 * @out_type: NonZero: NPR_ELEM_I32 or NPR_ELEM_I64.
 * @depth: OneHot: from the depth input.
 * @normalize: OneHot-16 negative_indices_mode="normalize": an index in
 *             [-depth, -1] counts from the end (else off_value).
 */
struct npr_index_params {
	int64_t axis;
	int ax;
	int64_t batch_dims;
	int bd;
	int reduction;
	bool use_init_val;
	unsigned int out_type;
	int64_t depth;
	bool normalize;
};

#endif /* NPR_OPS_INDEX_H */
