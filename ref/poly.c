// SPDX-License-Identifier: MIT
/*
 * Plans valid for every length of the growing variables (a KV cache).
 *
 * A decoder fed one token at a time has a new input shape signature at
 * every step: the cache is one position longer.  Planning each of them
 * (ref/signature.c) costs a shape inference, the fusions and the memory
 * plan per token.  Instead, the first signature with a cache is planned
 * for all lengths of it:
 *
 *   the graph is inferred twice, for the cache's length and for one more
 *   position; a value whose shape differs between the two is
 *   length-dependent (V: the cache's readers, the attention mask) and
 *   gets those dimensions dynamic; a value constant-folded from a
 *   length-dependent value (the position ids, the mask; T) is computed
 *   at run time instead of folded;
 *
 *   every node that reads a V or T value is a dynamic step: its output
 *   shapes are inferred at every run from the actual inputs
 *   (ref/dynamic.c), and an output whose planned shape is static must
 *   come out with that shape, else the run stops with -ESTALE before
 *   anything is committed and the exec goes back to a plan per
 *   signature (so a model whose other shapes depend on the length in
 *   ways two lengths do not show is still computed right).
 *
 * Everything else (the weights' MatMuls, the norms, the MLP) keeps its
 * planned kernels and arena slots.  Only plans whose growing variables
 * are read in place by their Concat (ref/state.c) qualify, and only when
 * no fusion (lib/passes/lmfuse.c) took a T value in as a constant.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "ops/infer.h"
#include "cpu.h"
#include "poly.h"

/* The growing variable whose hidden input is exec input @i, or NULL. */
static const struct npr_variable *var_of(const struct npr_graph *g, int i)
{
	int k;

	for (k = 0; k < g->nvars; k++)
		if (g->vars[k].append_axis >= 0 && g->vars[k].state_in == i)
			return &g->vars[k];
	return NULL;
}

/**
 * npr_cpu_poly_grows() - is exec input @i a growing variable's?
 * @ex: the exec.
 * @i: an input index.
 */
bool npr_cpu_poly_grows(const struct npr_exec *ex, int i)
{
	return var_of(ex->g, i) != NULL;
}

/**
 * npr_cpu_poly_shapes() - the input shapes with each growing variable one
 * position longer
 * @ex: the exec.
 * @in: the signature's input shapes.
 * @out: Out. @ex->nin shapes.
 *
 * Return: true when @ex has a growing variable, every one of them with at
 * least one position in @in; false otherwise (no polymorphic plan).
 */
bool npr_cpu_poly_shapes(const struct npr_exec *ex,
			 const struct npr_shape *in, struct npr_shape *out)
{
	bool any = false;
	int i;

	for (i = 0; i < ex->nin; i++) {
		const struct npr_variable *v = var_of(ex->g, i);

		out[i] = in[i];
		if (!v)
			continue;
		if (v->append_axis >= in[i].rank ||
		    in[i].d[v->append_axis] < 1)
			return false;
		out[i].d[v->append_axis]++;
		any = true;
	}
	return any;
}

/**
 * npr_cpu_poly_match() - does a polymorphic plan take these inputs?
 * @ex: the exec.
 * @planned: the shapes it was planned with.
 * @rq: the request: its inputs' shapes, its variables' blocks.
 *
 * Return: true when the shapes are equal but for the growing variables'
 * lengths, and each of those has a position at least, in blocks.
 */
bool npr_cpu_poly_match(const struct npr_exec *ex,
			const struct npr_shape *planned,
			const struct npr_request *rq)
{
	int i, j;

	for (i = 0; i < ex->nin; i++) {
		const struct npr_variable *v = var_of(ex->g, i);
		const struct npr_shape *a = &planned[i], *b = &rq->in[i].shape;

		if (!v) {
			if (!npr_shape_eq(a, b))
				return false;
			continue;
		}
		if (a->rank != b->rank || !rq->pitch || !rq->pitch[i].pitch ||
		    b->d[v->append_axis] < 1)
			return false;
		for (j = 0; j < a->rank; j++)
			if (j != v->append_axis && a->d[j] != b->d[j])
				return false;
	}
	return true;
}

/**
 * npr_cpu_poly_classify() - which values depend on the variables' lengths
 * @ex: the exec.
 * @g: its graph inferred for the signature (a view, not fused yet).
 * @g2: the same for npr_cpu_poly_shapes().
 * @cls: Out. Per value, NPR_POLY_V and NPR_POLY_T bits.
 * @ps: Out. Per V value, its shape in @g with the dimensions that
 *      differ in @g2 dynamic.
 *
 * Return: 1 when the graph can be planned for every length, 0 when not
 * (a value folded in one inference and not in the other, a rank that
 * changes).
 */
int npr_cpu_poly_classify(const struct npr_exec *ex,
			  const struct npr_graph *g, const struct npr_graph *g2,
			  unsigned char *cls, struct npr_shape *ps)
{
	int i, j, k;

	memset(cls, 0, g->nvals);
	for (i = 0; i < ex->nin; i++) {
		const struct npr_variable *v = var_of(g, i);
		int val = ex->in[i].value;

		if (!v)
			continue;
		cls[val] |= NPR_POLY_V;
		ps[val] = g->vals[val].shape;
		ps[val].d[v->append_axis] = -1;
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];
		unsigned char any = 0;

		if ((n->op->flags & NPR_OP_SOURCE) || ex->g->nodes[i].dead)
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] >= 0)
				any |= cls[n->in[j]];
		for (j = 0; j < n->nout; j++) {
			int o = n->out[j];
			const struct npr_value *a = &g->vals[o];
			const struct npr_value *b = &g2->vals[o];

			if (!a->data != !b->data ||
			    a->shape.rank != b->shape.rank)
				return 0;
			if (a->data && any && !ex->g->vals[o].data)
				cls[o] |= NPR_POLY_T;
			if (npr_shape_eq(&a->shape, &b->shape))
				continue;
			cls[o] |= NPR_POLY_V;
			ps[o] = a->shape;
			for (k = 0; k < a->shape.rank; k++)
				if (a->shape.d[k] != b->shape.d[k])
					ps[o].d[k] = -1;
		}
	}
	return 1;
}

/**
 * npr_cpu_poly_apply() - make a fused signature graph length-polymorphic
 * @ex: the exec.
 * @g: the view, inferred for the signature and fused (lib/passes/lmfuse.c).
 * @cls, @ps: from npr_cpu_poly_classify().
 * @was_dead: per node, dead before the fusions.
 * @poly: Out. Per node of @g, allocated: a step that must be dynamic.
 *
 * The T values lose their folded data (their nodes come back to life),
 * the V values computed by nodes get their dynamic dimensions, and every
 * live node reading a V or T value is marked.
 *
 * Return: 1 done; 0 when a node needed was not planned for, or a fusion
 * took a T value's data in (a constant it checked or copied, which
 * another length would change): the caller plans the signature alone;
 * -ENOMEM.
 */
int npr_cpu_poly_apply(const struct npr_exec *ex, struct npr_graph *g,
		       const unsigned char *cls, const struct npr_shape *ps,
		       const bool *was_dead, bool **poly)
{
	bool *mark;
	int i, j, err;

	*poly = NULL;
	mark = calloc(g->nvals ? g->nvals : 1, sizeof(*mark));
	if (!mark)
		return -ENOMEM;
	/* the T values that live nodes read (mark: per value here) */
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			if (g->nodes[i].in[j] >= 0)
				mark[g->nodes[i].in[j]] = true;
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (!n->dead || was_dead[i])
			continue;
		/* absorbed by a fusion: its T inputs must stay read */
		for (j = 0; j < n->nin; j++) {
			int v = n->in[j];

			if (v >= 0 && (cls[v] & NPR_POLY_T) &&
			    g->vals[v].data && !mark[v]) {
				free(mark);
				return 0;
			}
		}
	}
	free(mark);
	mark = calloc(g->nnodes ? g->nnodes : 1, sizeof(*mark));
	if (!mark)
		return -ENOMEM;
	for (i = 0; i < g->nvals; i++) {
		struct npr_value *v = &g->vals[i];
		int p = v->producer;

		if ((cls[i] & NPR_POLY_T) && v->data) {
			free(v->owned);
			v->owned = NULL;
			v->data = NULL;
			v->nbytes = 0;
			if (p >= 0)
				g->nodes[p].dead = false;
		}
		if ((cls[i] & NPR_POLY_V) && p >= 0 &&
		    !(g->nodes[p].op->flags & NPR_OP_SOURCE))
			v->shape = ps[i];
	}
	err = npr_infer_mark_dead(g);
	if (err) {
		free(mark);
		return err;
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead || (n->op->flags & NPR_OP_SOURCE))
			continue;
		/* dead in the exec's graph: not parsed for the signature */
		if (ex->g->nodes[i].dead) {
			free(mark);
			return 0;
		}
		for (j = 0; j < n->nin; j++)
			if (n->in[j] >= 0 && cls[n->in[j]])
				mark[i] = true;
	}
	*poly = mark;
	return 1;
}
