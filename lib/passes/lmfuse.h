/* SPDX-License-Identifier: MIT */
/*
 * The transformer fusion pass (lib/passes/lmfuse.c): scaled dot-product
 * attention, LayerNorm and RMSNorm written as primitive ops become one
 * FusedAttention or FusedNorm node (lib/ops/fused.h), GELU and SiLU one
 * Gelu or Swish node, and MatMul weights are stored transposed for the
 * row-by-weight kernel.  The CPU backend runs it on its compiled graph
 * (ref/backend.c), so that other devices see the ops they know.
 */
#ifndef NPR_PASSES_LMFUSE_H
#define NPR_PASSES_LMFUSE_H

#include "graph/graph.h"

/* The fusions, one bit each; names in npr_lmfuse_names[]. */
enum npr_lmfuse_kind {
	NPR_LMFUSE_ATTENTION,
	NPR_LMFUSE_LAYERNORM,
	NPR_LMFUSE_RMSNORM,
	NPR_LMFUSE_GELU,
	NPR_LMFUSE_SILU,
	NPR_LMFUSE_MATMUL,
	NPR_LMFUSE_KINDS
};

#define NPR_LMFUSE_ALL	((1u << NPR_LMFUSE_KINDS) - 1)

extern const char *const npr_lmfuse_names[NPR_LMFUSE_KINDS];

int npr_lmfuse_parse(const char *s, unsigned int *off);

int npr_pass_lmfuse(struct npr_graph *g, unsigned int which,
		    int counts[NPR_LMFUSE_KINDS]);

#endif /* NPR_PASSES_LMFUSE_H */
