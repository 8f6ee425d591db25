/* SPDX-License-Identifier: MIT */
/*
 * Steps of the CPU backend whose output shapes depend on input values
 * (ref/dynamic.c): the request's copy of the graph, and a step run with
 * its shapes inferred from the actual inputs.
 */
#ifndef NPR_REF_DYNAMIC_H
#define NPR_REF_DYNAMIC_H

#include "cpu.h"

int npr_cpu_dyn_create(const struct ref_exec *re, struct ref_request *rr,
		       struct npr_graph *g);

void npr_cpu_dyn_destroy(struct ref_request *rr, const struct npr_graph *g);

struct npr_request;

int npr_cpu_dyn_run(struct npr_request *rq, struct ref_request *rr,
		    const struct npr_graph *g, int node, npr_eval_fn kern,
		    bool check);

#endif /* NPR_REF_DYNAMIC_H */
