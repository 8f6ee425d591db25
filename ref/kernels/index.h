/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the index ops (ref/kernels/index.c);
 * their params structs are in lib/ops/index.h, which parse and infer fill.
 * The table npr_kernels_index[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_INDEX_H
#define NPR_REF_KERNELS_INDEX_H

#include "ops/index.h"

int npr_ref_gather_elements(const struct npr_node *n,
			    const struct npr_tensor *in,
			    struct npr_tensor *out);
int npr_ref_gather_nd(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_scatter_update(const struct npr_node *n,
			   const struct npr_tensor *in,
			   struct npr_tensor *out);
int npr_ref_scatter_elements(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out);
int npr_ref_scatter_nd(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);
int npr_ref_one_hot(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out);
int npr_ref_non_zero(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_INDEX_H */
