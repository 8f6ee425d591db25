/* SPDX-License-Identifier: MIT */
/*
 * Graph helpers of the low-precision pass (lib/passes/lowp_graph.c),
 * for lib/passes/lowp.c only.
 */
#ifndef NPR_PASSES_LOWP_GRAPH_H
#define NPR_PASSES_LOWP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"

const float *npr_lowp_chan_of(const struct npr_graph *g, int v,
			      const struct npr_shape *s, int axis, int64_t k,
			      int64_t *cnt);
int8_t *npr_lowp_w_centred(const struct npr_graph *g, int w, int axis,
			   int64_t k, int *qv, const float **sc, int64_t *ns);
bool npr_lowp_place_before(struct npr_graph *g, int ni, int p);
bool npr_lowp_place_ok(const struct npr_graph *g, int p, int k);

#endif /* NPR_PASSES_LOWP_GRAPH_H */
