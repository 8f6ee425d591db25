/* SPDX-License-Identifier: MIT */
/*
 * The low-precision pass (lib/passes/lowp.c): quantize/dequantize groups
 * of a compiled graph into the int8 ops of lib/ops/quant.h.
 */
#ifndef NPR_PASSES_LOWP_H
#define NPR_PASSES_LOWP_H

#include "graph/graph.h"

int npr_pass_lowp(struct npr_graph *g);

#endif /* NPR_PASSES_LOWP_H */
