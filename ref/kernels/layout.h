/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the layout ops (ref/kernels/layout.c);
 * their params structs are in lib/ops/layout.h, which parse and infer fill.
 * The table npr_kernels_layout[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_LAYOUT_H
#define NPR_REF_KERNELS_LAYOUT_H

#include "ops/layout.h"

int npr_ref_permute(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out);
int npr_ref_reorg_yolo(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_LAYOUT_H */
