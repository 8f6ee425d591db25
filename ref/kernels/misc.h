/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the miscellaneous ops (ref/kernels/misc.c);
 * their params structs are in lib/ops/misc.h, which parse and infer fill.
 * The table npr_kernels_misc[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_MISC_H
#define NPR_REF_KERNELS_MISC_H

#include "ops/misc.h"

int npr_ref_reverse_sequence(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out);
int npr_ref_bitwise_shift(const struct npr_node *n,
			  const struct npr_tensor *in, struct npr_tensor *out);
int npr_ref_dft(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out);
int npr_ref_grid_sample(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out);
int npr_ref_unique(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_MISC_H */
