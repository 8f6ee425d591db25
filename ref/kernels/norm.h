/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the normalization ops (ref/kernels/norm.c);
 * their params structs are in lib/ops/norm.h, which parse and infer fill.
 * The table npr_kernels_norm[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_NORM_H
#define NPR_REF_KERNELS_NORM_H

#include "ops/norm.h"

int npr_ref_mvn(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out);
int npr_ref_normalize_l2(const struct npr_node *n, const struct npr_tensor *in,
			 struct npr_tensor *out);
int npr_ref_batch_norm(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_NORM_H */
