/* SPDX-License-Identifier: MIT */
/*
 * Data-movement ops: Concat, Reshape, Squeeze, Unsqueeze, Transpose,
 * ShapeOf, StridedSlice, Gather.  Kernels are type-agnostic.
 */
#ifndef NPR_OPS_SHAPE_H
#define NPR_OPS_SHAPE_H

#include "graph.h"

struct npr_shape_params {
	int64_t axis;			/* Concat (normalised at infer) */
	bool special_zero;		/* Reshape */
	unsigned int out_type;		/* ShapeOf */
	int64_t batch_dims;		/* Gather */
	int perm[NPR_MAX_RANK];		/* Transpose, set by infer */
	/* StridedSlice plan over the input dims, set by infer */
	int64_t ss_start[NPR_MAX_RANK];
	int64_t ss_step[NPR_MAX_RANK];
	int64_t ss_len[NPR_MAX_RANK];
	int64_t mask[5][NPR_MAX_RANK];	/* begin, end, new_axis, shrink, ellipsis */
	int nmask[5];
};

int npr_ref_copy(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_concat(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);
int npr_ref_transpose(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_shape_of(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out);
int npr_ref_strided_slice(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out);
int npr_ref_gather(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

#endif /* NPR_OPS_SHAPE_H */
