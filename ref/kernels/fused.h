/* SPDX-License-Identifier: MIT */
/*
 * The kernels of the fusion pass's ops (ref/kernels/fused.c); their params
 * structs are in lib/ops/fused.h, which parse and infer fill.  The table
 * npr_kernels_fused[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_FUSED_H
#define NPR_REF_KERNELS_FUSED_H

#include "ops/fused.h"

int npr_ref_fused_attention(const struct npr_node *n,
			    const struct npr_tensor *in,
			    struct npr_tensor *out);
int npr_ref_fused_attention_pitched(const struct npr_node *n,
				    const struct npr_tensor *in,
				    struct npr_tensor *out, int64_t kblk,
				    int64_t vblk);
int npr_ref_fused_norm(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_FUSED_H */
