/* SPDX-License-Identifier: MIT */
/*
 * The shape inference driver (lib/ops/infer.c): parse, infer and fold
 * every node of a graph in order.
 */
#ifndef NPR_OPS_INFER_H
#define NPR_OPS_INFER_H

#include <stdbool.h>

#include "graph/graph.h"

int npr_infer_parse(struct npr_graph *g);
int npr_infer_graph(struct npr_graph *g, bool check_decl, bool dyn);
int npr_infer_mark_dead(struct npr_graph *g);
int npr_infer_body(struct npr_graph *g);

#endif /* NPR_OPS_INFER_H */
