/* SPDX-License-Identifier: MIT */
/*
 * Control flow: TensorIterator-0/1, Loop-5, If-8.  Port maps, shape
 * inference (which compiles the bodies) in lib/ops/control.c; the
 * reference evaluator that runs a body per iteration in ref/kernels/control.c.
 *
 * The bodies are struct npr_body on the node (lib/graph/graph.h): bodies[0] is
 * the loop body or If's then branch, bodies[1] If's else branch.
 */
#ifndef NPR_OPS_CONTROL_H
#define NPR_OPS_CONTROL_H

#include "graph/graph.h"

/**
 * struct npr_loop_params - what inference learned about a loop
 * @iters: TensorIterator: the number of iterations.  Loop: an upper
 *         bound from slicing, or -1 when none.
 * @cond_out: Loop: index of the body output that is the execution
 *            condition, -1 when there is none.
 * @iter_in: Loop: index of the body input that receives the iteration
 *           number, -1 when there is none.
 * @axis: per port map rule of bodies[0], the axis normalized against the
 *        rank (sliced rules only).
 */
struct npr_loop_params {
	int64_t iters;
	int cond_out;
	int iter_in;
	int axis[];
};

/* Normalize a slice bound against @dim: -1 is after the last element. */
static inline int64_t npr_slice_bound(int64_t v, int64_t dim)
{
	return v < 0 ? v + dim + 1 : v;
}

/* First element of the part that iteration @i of sliced input rule @r
 * takes from an axis of @dim elements. */
static inline int64_t npr_slice_begin(const struct npr_body_port *r,
				      int64_t dim, int64_t i)
{
	int64_t s = npr_slice_bound(r->start, dim);

	return r->stride > 0 ? s + i * r->stride :
	       s + i * r->stride - r->part_size;
}

/* Number of parts sliced input rule @r yields along an axis of @dim. */
static inline int64_t npr_slice_count(const struct npr_body_port *r,
				      int64_t dim)
{
	int64_t s = npr_slice_bound(r->start, dim);
	int64_t e = npr_slice_bound(r->end, dim);
	int64_t span = r->stride > 0 ? e - s : s - e;
	int64_t step = r->stride > 0 ? r->stride : -r->stride;

	if (span < r->part_size)
		return 0;
	return (span - r->part_size) / step + 1;
}

/* Body Parameter @k's value, and the value body Result @k reads. */
static inline struct npr_value *npr_body_param(const struct npr_body *b,
					       int k)
{
	return &b->g->vals[b->g->nodes[b->g->inputs[k]].out[0]];
}

static inline struct npr_value *npr_body_result(const struct npr_body *b,
						int k)
{
	return &b->g->vals[b->g->nodes[b->g->outputs[k]].in[0]];
}

#endif /* NPR_OPS_CONTROL_H */
