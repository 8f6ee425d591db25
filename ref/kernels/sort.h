/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the sorting ops (ref/kernels/sort.c);
 * their params structs are in lib/ops/sort.h, which parse and infer fill.
 * The table npr_kernels_sort[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_SORT_H
#define NPR_REF_KERNELS_SORT_H

#include "ops/sort.h"

int npr_ref_topk(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_nms(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_SORT_H */
