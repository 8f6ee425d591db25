/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the shape ops (ref/kernels/shape.c);
 * their params structs are in lib/ops/shape.h, which parse and infer fill.
 * The table npr_kernels_shape[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_SHAPE_H
#define NPR_REF_KERNELS_SHAPE_H

#include "ops/shape.h"

int npr_ref_copy(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_concat(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);
int npr_ref_transpose(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_shape_of(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out);
int npr_ref_strided_slice(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out);
int npr_ref_slice(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out);
int npr_ref_gather(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);
int npr_ref_range(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out);
int npr_ref_tile(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_split(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out);
int npr_ref_broadcast(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_pad(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_SHAPE_H */
