/* SPDX-License-Identifier: MIT */
/*
 * The compile pipeline (lib/passes/compile.c): a model graph lowered,
 * shape-inferred and folded into the graph a backend compiles.
 */
#ifndef NPR_PASSES_COMPILE_H
#define NPR_PASSES_COMPILE_H

#include "graph/graph.h"

int npr_compile_graph(const struct npr_graph *src,
		      const struct npr_shape *shapes, npr_evaluator_fn fold,
		      struct npr_graph **out);
int npr_compile_graph_take(struct npr_graph *src,
			   const struct npr_shape *shapes,
			   npr_evaluator_fn fold, struct npr_graph **out);
int npr_compile_as_written(struct npr_graph *src,
			   const struct npr_graph *compiled);

int npr_compile_output_dims(const struct npr_graph *g,
			    const int64_t (*lo)[NPR_MAX_RANK],
			    const int64_t (*hi)[NPR_MAX_RANK],
			    struct npr_shape *out);

#endif /* NPR_PASSES_COMPILE_H */
