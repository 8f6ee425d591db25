/* SPDX-License-Identifier: MIT */
/*
 * ReverseSequence-1, BitwiseLeftShift-15, BitwiseRightShift-15,
 * GridSample-9, DFT-7, IDFT-7 and Unique-10: attributes and shape inference in
 * lib/ops/misc.c, scalar reference kernels in ref/kernels/misc.c.
 */
#ifndef NPR_OPS_MISC_H
#define NPR_OPS_MISC_H

#include "graph/graph.h"

enum npr_grid_mode {
	NPR_GRID_BILINEAR, NPR_GRID_BICUBIC, NPR_GRID_NEAREST,
};

enum npr_grid_padding {
	NPR_GRID_ZEROS, NPR_GRID_BORDER, NPR_GRID_REFLECTION,
};

/**
 * struct npr_misc_params - attributes of the ops of this group
 * @batch_axis: ReverseSequence: the batch axis, made non-negative.
 * @seq_axis: ReverseSequence: the axis reversed, made non-negative.
 * @left: the shift is BitwiseLeftShift.
 * @numpy: shifts: numpy broadcasting (else shapes must match).
 * @align_corners: GridSample: -1 and 1 are the centres of the corner
 *                 pixels (else their outer edges).
 * @mode: GridSample: enum npr_grid_mode.
 * @padding: GridSample: enum npr_grid_padding.
 * @inverse: DFT: IDFT (conjugate kernel, 1 / N scaling).
 * @naxes: DFT: number of transformed axes.
 * @axes: DFT: the axes, non-negative, in input order.
 * @sorted: Unique: unique values in ascending order (else in the order
 *          of their first occurrence).
 * @uaxis: Unique: the axis whose slices are compared, non-negative, or -1
 *         for the elements of the flattened data.
 * @idx_type: Unique: element type of the index outputs.
 * @cnt_type: Unique: element type of the counts.
 */
struct npr_misc_params {
	int batch_axis, seq_axis;
	bool left, numpy;
	bool align_corners;
	int mode, padding;
	bool inverse;
	int naxes;
	int axes[NPR_MAX_RANK];
	bool sorted;
	int uaxis;
	unsigned int idx_type, cnt_type;
};

int64_t npr_unique_groups(const struct npr_tensor *t, int axis, bool sorted,
			  int64_t *first, int64_t *inv, int64_t *cnt);

#endif /* NPR_OPS_MISC_H */
