/* SPDX-License-Identifier: MIT */
/*
 * Sorting ops: TopK-1/-3/-11 and NonMaxSuppression-1/-3/-4/-5/-9.
 * Attributes and shape inference in lib/ops/sort.c, reference kernels in
 * ref/kernels/sort.c.
 */
#ifndef NPR_OPS_SORT_H
#define NPR_OPS_SORT_H

#include "graph/graph.h"

enum npr_topk_sort {
	NPR_TOPK_SORT_VALUE,
	NPR_TOPK_SORT_INDEX,
	NPR_TOPK_SORT_NONE,
};

/**
 * struct npr_sort_params - parsed attributes of TopK and NonMaxSuppression
 * @axis: TopK: as written; @ax normalised by infer.
 * @ax: TopK: normalised axis.
 * @largest: TopK: mode "max".
 * @sort: TopK: enum npr_topk_sort.
 * @stable: TopK-11: ties keep the input order (always done here).
 * @k: TopK: output size along the axis (min of k and the dimension).
 * @out_type: TopK index_element_type / NMS output_type.
 * @center: NMS: box_encoding "center".
 * @sort_desc: NMS: sort_result_descending.
 * @max_per_class: NMS: max_output_boxes_per_class, clipped to num_boxes.
 */
struct npr_sort_params {
	int64_t axis;
	int ax;
	bool largest;
	int sort;
	bool stable;
	int64_t k;
	unsigned int out_type;
	bool center;
	bool sort_desc;
	int64_t max_per_class;
};

#endif /* NPR_OPS_SORT_H */
