/* SPDX-License-Identifier: MIT */
/*
 * Layout ops: DepthToSpace-1, SpaceToDepth-1, ShuffleChannels-1 and
 * ReorgYolo-2.  Shape inference (lib/ops/layout.c) plans the first three
 * as a reshape of the input, a transpose and a reshape of the result; one
 * kernel (ref/kernels/layout.c) runs the transpose.
 */
#ifndef NPR_OPS_LAYOUT_H
#define NPR_OPS_LAYOUT_H

#include "graph/graph.h"

#define NPR_LAYOUT_MAX_RANK	(2 * NPR_MAX_RANK)

/**
 * struct npr_layout_params - attributes and the planned permutation
 * @mode: DepthToSpace, SpaceToDepth: 0 blocks_first, 1 depth_first.
 * @block: DepthToSpace, SpaceToDepth: block_size; ReorgYolo: stride.
 * @axis: ShuffleChannels: axis as written.
 * @group: ShuffleChannels: group.
 * @rank: number of dimensions of the reshaped input.
 * @dim: the reshaped input dimensions.
 * @perm: output dimension i is reshaped input dimension perm[i].
 */
struct npr_layout_params {
	int mode;
	int64_t block;
	int64_t axis;
	int64_t group;
	int rank;
	int64_t dim[NPR_LAYOUT_MAX_RANK];
	int perm[NPR_LAYOUT_MAX_RANK];
};

#endif /* NPR_OPS_LAYOUT_H */
