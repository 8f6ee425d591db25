/* SPDX-License-Identifier: MIT */
/*
 * Attention: ScaledDotProductAttention-13.  Attributes and shape
 * inference in lib/ops/attn.c, the scalar reference kernel in ref/kernels/attn.c.
 */
#ifndef NPR_OPS_ATTN_H
#define NPR_OPS_ATTN_H

#include "graph/graph.h"

/**
 * struct npr_attn_params - attributes of ScaledDotProductAttention
 * @causal: mask every key after the query's position (the attention
 *          mask input is then ignored).
 */
struct npr_attn_params {
	bool causal;
};

#endif /* NPR_OPS_ATTN_H */
