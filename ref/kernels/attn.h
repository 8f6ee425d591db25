/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the attention ops (ref/kernels/attn.c);
 * their params structs are in lib/ops/attn.h, which parse and infer fill.
 * The table npr_kernels_attn[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_ATTN_H
#define NPR_REF_KERNELS_ATTN_H

#include "ops/attn.h"

int npr_ref_sdpa(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_ATTN_H */
