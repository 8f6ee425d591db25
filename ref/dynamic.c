// SPDX-License-Identifier: MIT
/*
 * Steps of the CPU backend whose output shapes depend on input values.
 *
 * A node compile left with dynamic outputs is a dynamic step.  Each
 * request keeps its own copy of the graph's values and of those nodes
 * (parsed again, so the params that infer fills are the request's);
 * before a dynamic step runs, its inputs' actual shapes and data go into
 * the copy, the op's infer runs again and gives the output shapes, and
 * the outputs get buffers of the request that grow as needed.  Static
 * values keep the planned arena (ref/plan.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sys.h"
#include "cpu.h"
#include "dynamic.h"
#include "object.h"
#include "tensor.h"

/*
 * A value whose size is known only at inference time may not exceed this
 * (a Tile repeat count or a Range bound from an input could otherwise ask
 * for any amount of memory).
 */
#define DYN_MAX_BYTES	((size_t)1 << 32)

/**
 * npr_cpu_dyn_create() - a request's copy of the values and of the
 * dynamic nodes (parsed again)
 * @re: the exec's plan, with re->ndyn dynamic steps.
 * @rr: the request's state; gets rr->rg, rvals, rnodes, dbuf, dcap.
 * @g: the graph planned (re->g).
 *
 * Return: 0, -ENOMEM, or the error of an op's parse.  What was
 * allocated is freed by npr_cpu_dyn_destroy().
 */
int npr_cpu_dyn_create(const struct ref_exec *re, struct ref_request *rr,
		       struct npr_graph *g)
{
	int i, err;

	rr->rvals = malloc(sizeof(*rr->rvals) * (g->nvals ? g->nvals : 1));
	rr->rnodes = calloc(g->nnodes ? g->nnodes : 1, sizeof(*rr->rnodes));
	rr->dbuf = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->dbuf));
	rr->dcap = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->dcap));
	if (!rr->rvals || !rr->rnodes || !rr->dbuf || !rr->dcap)
		return -ENOMEM;
	memcpy(rr->rvals, g->vals, sizeof(*rr->rvals) * g->nvals);
	rr->rg = *g;
	rr->rg.vals = rr->rvals;
	for (i = 0; i < re->nsteps; i++) {
		int k = re->steps[i];
		struct npr_node *n = &rr->rnodes[k];

		if (!re->dyn[i])
			continue;
		*n = g->nodes[k];
		n->params = NULL;
		if (n->op->parse) {
			err = n->op->parse(&rr->rg, n);
			if (err)
				return err;
		}
	}
	return 0;
}

/**
 * npr_cpu_dyn_run() - run dynamic step @node
 * @rq: the request.
 * @rr: its backend state.
 * @g: the graph planned (the exec's, or an input shape signature's).
 * @node: the step's node.
 * @kern: its kernel (struct ref_exec, @kern).
 * @check: an output whose shape in @g is static must come out with it
 *         (a plan for every length of the growing variables, ref/poly.c).
 *
 * Infers the output shapes from the actual inputs (values included) in
 * the request's copy of the graph, gives the outputs buffers of the
 * request (kept and grown from run to run, within the compiled model's
 * memory budget: npr_request_grow()), runs the kernel.
 *
 * Context: the request's thread; requests run concurrently.
 * Return: 0; -ESTALE when @check finds another shape (nothing run);
 * -EINVAL for a shape that is not static or an element type without a
 * size; -EFBIG for an output of more than 4 GiB or past the
 * budget; -ENOMEM; the op's infer or kernel error.
 */
int npr_cpu_dyn_run(struct npr_request *rq, struct ref_request *rr,
		    const struct npr_graph *g, int node, npr_eval_fn kern,
		    bool check)
{
	struct npr_node *n = &rr->rnodes[node];
	char b[128];
	int j, err;

	for (j = 0; j < n->nin; j++) {
		struct npr_value *v = &rr->rvals[n->in[j]];
		const struct npr_tensor *t = &rr->t[n->in[j]];

		v->type = t->type;
		v->shape = t->shape;
		v->data = t->data;
		v->nbytes = t->nbytes;
	}
	err = n->op->infer(&rr->rg, n);
	for (j = 0; j < n->nout; j++) {
		struct npr_value *v = &rr->rvals[n->out[j]];

		/* an infer that computed the output itself (ShapeOf):
		 * the kernel computes it again below */
		if (v->owned != g->vals[n->out[j]].owned)
			free(v->owned);
		v->owned = g->vals[n->out[j]].owned;
		v->data = NULL;
	}
	if (err)
		return npr_err_default(err, 0);
	for (j = 0; j < n->nout; j++) {
		int o = n->out[j];
		struct npr_value *v = &rr->rvals[o];
		struct npr_tensor *t = &rr->t[o];
		int64_t numel = npr_shape_numel(&v->shape);
		size_t bytes = npr_tensor_bytes(v->type, numel);

		if (check && npr_shape_static(&g->vals[o].shape) &&
		    !npr_shape_eq(&g->vals[o].shape, &v->shape))
			return npr_node_err(n, -ESTALE,
					    "output %d: shape %s, planned for another",
					    j, npr_shape_str(&v->shape, b,
							     sizeof(b)));
		if (numel < 0 || !npr_elem_size(v->type))
			return npr_node_err(n, -EINVAL,
					    "output %d: shape %s %s at run time",
					    j, npr_shape_str(&v->shape, b, sizeof(b)),
					    numel < 0 ? "is not static" :
					    "has no element size");
		if (bytes > DYN_MAX_BYTES || (size_t)numel > DYN_MAX_BYTES)
			return npr_node_err(n, -EFBIG,
					    "output %d: shape %s from the input values needs %zu bytes, more than the %zu allowed",
					    j, npr_shape_str(&v->shape, b, sizeof(b)),
					    bytes, DYN_MAX_BYTES);
		if (bytes > rr->dcap[o] || !rr->dbuf[o]) {
			/* by half at least: a value that grows a little at
			 * every run (a KV cache's reader) is not
			 * reallocated at every run */
			size_t want = bytes, more = rr->dcap[o] / 2;
			char what[128];
			void *p;

			if (rr->dcap[o] && bytes - rr->dcap[o] < more)
				want = rr->dcap[o] + more;
			snprintf(what, sizeof(what),
				 "output %d of node '%s' (%s), shape %s,", j,
				 n->name ? n->name : "?", n->type,
				 npr_shape_str(&v->shape, b, sizeof(b)));
			err = npr_request_grow(rq, rr->dcap[o], want, what);
			if (err && want > bytes) {
				want = bytes;
				err = npr_request_grow(rq, rr->dcap[o], want,
						       what);
			}
			if (err)
				return err;
			p = npr_alloc(want);
			if (!p)
				return -ENOMEM;
			free(rr->dbuf[o]);
			rr->dbuf[o] = p;
			rr->dcap[o] = want;
		}
		t->type = v->type;
		t->shape = v->shape;
		t->data = rr->dbuf[o];
		t->nbytes = bytes;
	}
	for (j = 0; j < n->nin; j++)
		rr->in_buf[j] = rr->t[n->in[j]];
	for (j = 0; j < n->nout; j++)
		rr->out_buf[j] = rr->t[n->out[j]];
	return kern(n, rr->in_buf, rr->out_buf);
}

/**
 * npr_cpu_dyn_destroy() - free what npr_cpu_dyn_create() allocated
 * @rr: the request's state; fields may be NULL.
 * @g: the graph planned, or any graph of the exec (the same counts).
 */
void npr_cpu_dyn_destroy(struct ref_request *rr, const struct npr_graph *g)
{
	int i;

	for (i = 0; rr->rnodes && i < g->nnodes; i++)
		free(rr->rnodes[i].params);
	for (i = 0; rr->dbuf && i < g->nvals; i++)
		free(rr->dbuf[i]);
	free(rr->rnodes);
	free(rr->rvals);
	free(rr->dbuf);
	free(rr->dcap);
	rr->rnodes = NULL;
	rr->rvals = NULL;
	rr->dbuf = NULL;
	rr->dcap = NULL;
}
