/* SPDX-License-Identifier: MIT */
/*
 * The KV-window pass (lib/passes/kvwindow.c): a stateful decoder whose
 * variables grow (Assign(Concat(ReadValue, new)) along a dynamic axis)
 * rewritten for static shapes, as a device that compiles only static
 * graphs runs it: each variable a window of a fixed number of positions,
 * a runtime length input saying how many of them hold the past.
 */
#ifndef NPR_PASSES_KVWINDOW_H
#define NPR_PASSES_KVWINDOW_H

#include <stdint.h>

#include "graph/graph.h"

/* the name of the length input the pass adds */
#define NPR_KV_LENGTH_INPUT	"npr_kv_length"

int npr_pass_kv_window(struct npr_graph *g, int64_t tokens,
		       int64_t capacity);

#endif /* NPR_PASSES_KVWINDOW_H */
