/* SPDX-License-Identifier: MIT */
/*
 * Steps of the CPU backend whose output shapes depend on input values
 * (ref/dynamic.c): the request's copy of the graph, and a step run with
 * its shapes inferred from the actual inputs.
 */
#ifndef NPR_REF_DYNAMIC_H
#define NPR_REF_DYNAMIC_H

#include "cpu.h"

/**
 * npr_cpu_dyn_create() - a request's copy of the values and of the
 * dynamic nodes (parsed again)
 * @re: the exec's plan, with re->ndyn dynamic steps.
 * @rr: the request's state; gets rr->rg, rvals, rnodes, dbuf, dcap.
 * @g: the compiled graph.
 * Return: 0, -ENOMEM, or the error of an op's parse.  What was
 * allocated is freed by npr_cpu_dyn_destroy().
 */
int npr_cpu_dyn_create(const struct ref_exec *re, struct ref_request *rr,
		       struct npr_graph *g);

/**
 * npr_cpu_dyn_destroy() - free what npr_cpu_dyn_create() allocated
 * @rr: the request's state; fields may be NULL.
 * @g: the compiled graph.
 */
void npr_cpu_dyn_destroy(struct ref_request *rr, const struct npr_graph *g);

/**
 * npr_cpu_dyn_run() - run dynamic step @node
 * @rr: the request's state.
 * @g: the compiled graph.
 * @node: the step's node.
 *
 * Infers the output shapes from the actual inputs (values included) in
 * the request's copy of the graph, gives the outputs buffers of the
 * request (kept and grown from run to run), runs the kernel.
 * Return: 0; -EINVAL for a shape that is not static or an element type
 * without a size; -EFBIG for an output of more than 4 GiB; -ENOMEM; the
 * op's infer or kernel error.
 * Context: the request's thread; requests run concurrently.
 */
int npr_cpu_dyn_run(struct ref_request *rr, const struct npr_graph *g,
		    int node);

#endif /* NPR_REF_DYNAMIC_H */
