/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the neural-network ops (ref/kernels/nn.c);
 * their params structs are in lib/ops/nn.h, which parse and infer fill.
 * The table npr_kernels_nn[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_NN_H
#define NPR_REF_KERNELS_NN_H

#include "ops/nn.h"

int npr_ref_conv(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_pool(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_softmax(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out);
int npr_ref_reduce(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);
int npr_ref_matmul(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_NN_H */
