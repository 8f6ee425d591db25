/* SPDX-License-Identifier: MIT */
/*
 * Data-movement ops: Concat, Reshape, Squeeze, Unsqueeze, Transpose,
 * ShapeOf, StridedSlice, Slice, Gather, Range, Tile, Split, VariadicSplit,
 * Broadcast, Pad.
 *
 * Shape inference (lib/ops/shape.c) plans most of them as a strided view of
 * their data input (struct npr_view); the kernels (ref/kernels/shape.c) then copy
 * elements by size and never look at the values, so every byte-addressable
 * element type works.
 */
#ifndef NPR_OPS_SHAPE_H
#define NPR_OPS_SHAPE_H

#include "graph/graph.h"

/* Tile splits every output dimension in two: (repeat, data). */
#define NPR_VIEW_MAX_RANK	(2 * NPR_MAX_RANK)

/**
 * struct npr_view - an output read as a strided view of one input
 * @rank: number of view dimensions; 0 means a single element.
 * @base: input element offset of output element 0.
 * @in_numel: element count of the input the view was planned for.
 * @dim: view dimensions, outermost first; their product is the output
 *       element count (the output shape itself may differ: dimensions of
 *       size 1 are dropped and contiguous ones merged).
 * @stride: input elements to move per step along each dimension; 0
 *          repeats an element, a negative stride walks backwards.
 *
 * Output element k, whose index over @dim in C order is (i0, i1, ...), is
 * input element @base + i0 * stride[0] + i1 * stride[1] + ...
 */
struct npr_view {
	int rank;
	int64_t base;
	int64_t in_numel;
	int64_t dim[NPR_VIEW_MAX_RANK];
	int64_t stride[NPR_VIEW_MAX_RANK];
};

/* Concat: @axis as written; @ax normalised by infer. */
struct npr_concat_params {
	int64_t axis;
	int ax;
};

struct npr_reshape_params {
	bool special_zero;
};

struct npr_shape_of_params {
	unsigned int out_type;		/* NPR_ELEM_I32 or NPR_ELEM_I64 */
};

/* StridedSlice: the masks as bits (bit i = entry i); the view by infer. */
struct npr_strided_slice_params {
	uint32_t begin_mask, end_mask, new_axis_mask, shrink_axis_mask;
	uint32_t ellipsis_mask;
	struct npr_view view;
};

/* Transpose, Slice, Tile: everything is in the view planned by infer. */
struct npr_view_params {
	struct npr_view view;
};

/* Gather: @batch_dims as written; @axis, @bd normalised by infer. */
struct npr_gather_params {
	int64_t batch_dims;
	int axis, bd;
};

/* Range: @out_type from the attribute (opset4), 0 for the input type. */
struct npr_range_params {
	unsigned int out_type;
};

/* Split (@num_splits) and VariadicSplit: @axis normalised by infer. */
struct npr_split_params {
	int64_t num_splits;
	int axis;
};

enum npr_broadcast_mode {
	NPR_BCAST_NUMPY,
	NPR_BCAST_EXPLICIT,
	NPR_BCAST_BIDIRECTIONAL,
	NPR_BCAST_PDPD,
};

struct npr_broadcast_params {
	int mode;			/* enum npr_broadcast_mode */
	int64_t axis;			/* pdpd: first axis, -1: right */
	struct npr_view view;
};

enum npr_pad_mode {
	NPR_PAD_MODE_CONSTANT,
	NPR_PAD_MODE_EDGE,
	NPR_PAD_MODE_REFLECT,
	NPR_PAD_MODE_SYMMETRIC,
};

/* Pad: @pb/@pe per input dimension (negative crops), set by infer. */
struct npr_pad_params {
	int mode;			/* enum npr_pad_mode */
	int64_t pb[NPR_MAX_RANK], pe[NPR_MAX_RANK];
};

/* Copy the elements @v selects from @src (elements of @es bytes) to @dst,
 * densely.  Shared with other backends' kernels. */
void npr_view_copy(const struct npr_view *v, size_t es, const void *src,
		   void *dst);

#endif /* NPR_OPS_SHAPE_H */
