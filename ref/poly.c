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
 * planned kernels and arena slots.
 *
 * A decoder computes the same things from the lengths in every layer
 * (the causal mask from the cache's shape, through a Trilu's chain): a
 * dynamic step that repeats an earlier one, the same op and attributes
 * over the same inputs, is not run again when the growing variables of
 * the same shape all have the same length; its outputs are the earlier
 * step's (npr_cpu_poly_share()).  Only plans whose growing variables
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

/* The same op with the same attributes and no bodies? */
static bool same_op(const struct npr_node *a, const struct npr_node *b)
{
	int k;

	if (strcmp(a->type, b->type) || a->version != b->version ||
	    a->nin != b->nin || a->nout != b->nout ||
	    a->nattr != b->nattr || a->nbodies || b->nbodies ||
	    strstr(a->type, "Random") || !strncmp(a->type, "Fused", 5))
		return false;
	for (k = 0; k < a->nattr; k++)
		if (strcmp(a->attr[k].key, b->attr[k].key) ||
		    strcmp(a->attr[k].val, b->attr[k].val))
			return false;
	return true;
}

/* Step @t repeats step @r: its inputs in the same classes, outputs alike. */
static bool repeats(const struct ref_exec *re, const int *cls, int t, int r)
{
	const struct npr_graph *g = re->g;
	const struct npr_node *n = &g->nodes[re->steps[t]];
	const struct npr_node *m = &g->nodes[re->steps[r]];
	int j;

	if (!same_op(n, m))
		return false;
	/* a shape: of inputs planned alike (checked when it runs) */
	if (!strcmp(n->type, "ShapeOf") && n->nin == 1 &&
	    n->in[0] >= 0 && m->in[0] >= 0 &&
	    g->vals[n->in[0]].type == g->vals[m->in[0]].type &&
	    npr_shape_eq(&g->vals[n->in[0]].shape, &g->vals[m->in[0]].shape))
		return true;
	for (j = 0; j < n->nin; j++)
		if ((n->in[j] < 0) != (m->in[j] < 0) ||
		    (n->in[j] >= 0 && cls[n->in[j]] != cls[m->in[j]]))
			return false;
	for (j = 0; j < n->nout; j++) {
		const struct npr_value *a = &g->vals[n->out[j]];
		const struct npr_value *b = &g->vals[m->out[j]];

		if (a->type != b->type || !npr_shape_eq(&a->shape, &b->shape))
			return false;
	}
	return true;
}

/* Values with the same contents: small constants, growing variables. */
static int share_classes(const struct npr_exec *ex, struct ref_exec *re,
			 int *cls)
{
	const struct npr_graph *g = re->g;
	int i, k, n = 0;

	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];

		cls[i] = i;
		if (!v->data || v->nbytes > 256)
			continue;
		for (k = 0; k < i; k++) {
			const struct npr_value *w = &g->vals[k];

			if (cls[k] == k && w->data && w->type == v->type &&
			    w->nbytes == v->nbytes &&
			    npr_shape_eq(&w->shape, &v->shape) &&
			    !memcmp(w->data, v->data, v->nbytes)) {
				cls[i] = k;
				break;
			}
		}
	}
	re->share_in = malloc(sizeof(int) * 2 * (ex->nin + 1));
	if (!re->share_in)
		return -ENOMEM;
	for (i = 0; i < ex->nin; i++) {
		int a = ex->in[i].value;

		if (!var_of(g, i))
			continue;
		for (k = 0; k < i; k++) {
			int b = ex->in[k].value;
			const struct npr_value *va = &g->vals[a];
			const struct npr_value *vb = &g->vals[b];

			if (var_of(g, k) && cls[b] == b &&
			    va->type == vb->type &&
			    npr_shape_eq(&va->shape, &vb->shape)) {
				cls[a] = b;
				re->share_in[2 * n] = a;
				re->share_in[2 * n + 1] = b;
				n++;
				break;
			}
		}
	}
	re->nshare_in = n;
	return 0;
}

/**
 * npr_cpu_poly_share() - the dynamic steps that repeat an earlier one
 * @ex: the exec.
 * @re: a plan for every length, its steps made.
 *
 * Values are in classes of equal contents: each its own, but constants
 * of at most 256 bytes with the same type, shape and bytes, and the
 * growing variables' hidden inputs of the same type and (dynamic) shape,
 * which at run time hold the same when their lengths are equal (so do
 * the shapes read from them).  A dynamic step (not a KV cache's Concat or
 * attention, not fused, no bodies, no random op) whose op and attributes
 * are an earlier dynamic step's and whose inputs are in the same classes
 * repeats it: re->share[step] is that step, and its outputs join the
 * classes of that step's outputs.  re->share_in lists the pairs of
 * variables' inputs whose lengths must be equal for that to hold.  A
 * ShapeOf repeats another of an input planned with the same type and
 * shape; when their inputs' shapes differ at run time, that run stops
 * skipping steps from there on (ref/backend.c).
 *
 * Return: 0 or -ENOMEM.
 */
int npr_cpu_poly_share(const struct npr_exec *ex, struct ref_exec *re)
{
	const struct npr_graph *g = re->g;
	int *cls, t, r, j, found = 0;

	cls = malloc(sizeof(int) * (g->nvals ? g->nvals : 1));
	re->share = malloc(sizeof(int) * (re->nsteps + 1));
	if (!cls || !re->share || share_classes(ex, re, cls)) {
		free(cls);
		return -ENOMEM;
	}
	for (t = 0; t < re->nsteps; t++) {
		re->share[t] = -1;
		if (!re->dyn[t] || re->fast[t] ||
		    (re->cat && re->cat[t] >= 0) ||
		    (re->attn && (re->attn[2 * t] >= 0 ||
				  re->attn[2 * t + 1] >= 0)))
			continue;
		for (r = 0; r < t; r++) {
			if (!re->dyn[r] || re->fast[r] || re->share[r] >= 0 ||
			    (re->cat && re->cat[r] >= 0) ||
			    !repeats(re, cls, t, r))
				continue;
			re->share[t] = r;
			for (j = 0; j < g->nodes[re->steps[t]].nout; j++)
				cls[g->nodes[re->steps[t]].out[j]] =
					cls[g->nodes[re->steps[r]].out[j]];
			found++;
			break;
		}
	}
	free(cls);
	if (!found) {
		free(re->share);
		re->share = NULL;
	}
	return 0;
}

/**
 * npr_cpu_poly_share_ok() - may this run skip the repeated steps?
 * @re: the plan.
 * @rr: the request's memory, its inputs set for the run.
 *
 * Return: true when the growing variables paired in re->share_in have
 * the same shapes.
 */
bool npr_cpu_poly_share_ok(const struct ref_exec *re,
			   const struct ref_request *rr)
{
	int k;

	for (k = 0; k < re->nshare_in; k++)
		if (!npr_shape_eq(&rr->t[re->share_in[2 * k]].shape,
				  &rr->t[re->share_in[2 * k + 1]].shape))
			return false;
	return true;
}
