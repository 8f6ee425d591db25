/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the math ops (ref/kernels/math.c);
 * their params structs are in lib/ops/math.h, which parse and infer fill.
 * The table npr_kernels_math[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_MATH_H
#define NPR_REF_KERNELS_MATH_H

#include "ops/math.h"

int npr_ref_einsum(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);
int npr_ref_math_unary(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);
int npr_ref_math_scalar2(const struct npr_node *n,
			 const struct npr_tensor *in, struct npr_tensor *out);
int npr_ref_log_softmax(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out);
int npr_ref_lrn(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out);
int npr_ref_reduce_logical(const struct npr_node *n,
			   const struct npr_tensor *in,
			   struct npr_tensor *out);
int npr_ref_cumsum(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_MATH_H */
