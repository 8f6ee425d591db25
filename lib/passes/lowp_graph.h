/* SPDX-License-Identifier: MIT */
/*
 * Graph helpers of the low-precision passes (lib/passes/lowp_graph.c),
 * for lib/passes/lowp.c and lib/passes/qlayout.c only.
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
int npr_lowp_const(struct npr_graph *g, const char *name, int64_t layer,
		   unsigned int type, int64_t d0, int64_t d1, void *data);

/*
 * FakeQuantize limits: a zero point within this much of a step of an
 * integer counts as that integer (npr_lowp_grid()).
 */
#define NPR_LOWP_ZERO_TOL	0.05f

void npr_lowp_qbounds(float lo, float hi, float s, int z, int *qlo,
		      int *qhi);
int npr_lowp_node(struct npr_graph *g, int like, const char *type,
		  const char *suffix, int nin, const int *in);
int npr_lowp_clone(struct npr_graph *g, int like, int nin, const int *in);
void npr_lowp_swap(struct npr_graph *g, int a, int b);
int npr_lowp_infer(struct npr_graph *g, int ni);
int npr_lowp_place(struct npr_graph *g, int ni, int slot);
bool npr_lowp_grid(float lo, float hi, float *s, int *z);
float *npr_lowp_grids(const struct npr_graph *g, int lo, int hi,
		      const struct npr_shape *s, int64_t *cnt, int *z);

#endif /* NPR_PASSES_LOWP_GRAPH_H */
