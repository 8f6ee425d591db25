/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the interpolation ops (ref/kernels/interp.c);
 * their params structs are in lib/ops/interp.h, which parse and infer fill.
 * The table npr_kernels_interp[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_INTERP_H
#define NPR_REF_KERNELS_INTERP_H

#include "ops/interp.h"

int npr_ref_interpolate(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_INTERP_H */
