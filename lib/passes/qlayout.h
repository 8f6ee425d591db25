/* SPDX-License-Identifier: MIT */
/*
 * The layout pass (lib/passes/qlayout.c): blocked weights and NHWC u8
 * tensors for the int8 nodes npr_pass_lowp() made.
 */
#ifndef NPR_PASSES_QLAYOUT_H
#define NPR_PASSES_QLAYOUT_H

#include "graph/graph.h"

int npr_pass_qlayout(struct npr_graph *g);

#endif /* NPR_PASSES_QLAYOUT_H */
