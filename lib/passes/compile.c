// SPDX-License-Identifier: MIT
/*
 * From a loaded model to a graph a backend can execute:
 *
 *   clone -> apply input shapes -> copy unaligned constants -> lower
 *   f16/bf16 to f32 -> parse every node -> in topological order: infer
 *   shapes, check against the shapes the file declared, fold nodes whose
 *   inputs are all constant -> mark nodes that no Result needs as dead.
 *
 * The last three steps are the shape inference driver (lib/ops/infer.c),
 * which control-flow ops run on their bodies too.
 *
 * A node whose output shape depends on the value of a computed input (a
 * Reshape target fed by a Parameter) keeps dynamic output shapes, as does
 * everything downstream of it; the backend infers them at run time.
 *
 * Each step is a named function so it can be tested and reused on its own.
 *
 * A backend whose device compiles models itself (the NPU's compiler) is
 * given the model as written besides: npr_compile_as_written() keeps the
 * model's element types and constants and takes only the shapes from the
 * compiled graph.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "error.h"
#include "graph/graph.h"
#include "ops/infer.h"

static bool is_half(unsigned int t)
{
	return t == NPR_ELEM_F16 || t == NPR_ELEM_BF16;
}

/**
 * pass_align() - an aligned copy of every unaligned constant
 * @g: the graph, a clone of a loaded model.
 *
 * A loaded ONNX model refers to its floating-point weights where they
 * are in the mapped file, at whatever offset the format left them
 * (struct npr_value); kernels, folding and packing read elements through
 * typed pointers, so each such constant gets an owned copy here (f16 and
 * bf16 ones are converted by pass_lower_half() instead).  The file
 * pages the copy came from then leave memory: the model's graph still
 * refers to them, and they come back from the page cache when it is
 * compiled or read again.  Bodies hold no such constants.
 *
 * Return: 0 or -ENOMEM.
 */
static int pass_align(struct npr_graph *g)
{
	int i;

	for (i = 0; i < g->nvals; i++) {
		struct npr_value *v = &g->vals[i];
		size_t es = npr_elem_size(v->type);
		void *p;

		if (!v->data || v->owned || is_half(v->type) || !es ||
		    !((uintptr_t)v->data % es))
			continue;
		p = malloc(v->nbytes ? v->nbytes : 1);
		if (!p)
			return -ENOMEM;
		memcpy(p, v->data, v->nbytes);
		npr_graph_drop_pages(g, v->data, v->nbytes);
		v->owned = p;
		v->data = p;
	}
	return 0;
}

/**
 * pass_lower_half() - make f32 the compute type of f16/bf16 values
 * @g: graph; constants of those types are converted into owned f32 copies.
 *
 * Return: 0 or -ENOMEM.
 */
static int pass_lower_half(struct npr_graph *g)
{
	int i;

	for (i = 0; i < g->nvals; i++) {
		struct npr_value *v = &g->vals[i];
		int64_t numel;
		float *f;

		if (!is_half(v->type))
			continue;
		if (v->data) {
			numel = npr_shape_numel(&v->shape);
			if (numel < 0 ||
			    npr_tensor_bytes(v->type, numel) != v->nbytes)
				return npr_err(-EINVAL,
					       "constant value %d: bad size", i);
			f = malloc(numel ? numel * sizeof(float) : 1);
			if (!f)
				return -ENOMEM;
			npr_convert(f, NPR_ELEM_F32, v->data, v->type, numel);
			if (!v->owned) {
				/* where it came from: weightless blobs */
				v->src = v->data;
				v->src_type = v->type;
				npr_graph_drop_pages(g, v->data, v->nbytes);
			}
			free(v->owned);
			v->owned = f;
			v->data = f;
			v->nbytes = numel * sizeof(float);
		}
		v->type = NPR_ELEM_F32;
	}
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		int k, err;

		for (k = 0; k < n->nbodies; k++) {
			err = pass_lower_half(n->bodies[k].g);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * The caller's input shapes replace the model's.  A dimension may stay
 * (or be made) dynamic, -1: the nodes that depend on it get dynamic
 * shapes (npr_infer_graph()) and a backend with dynamic shapes infers
 * them again per input shape signature; a rank must be known.
 */
static int apply_shapes(struct npr_graph *g, const struct npr_shape *shapes)
{
	int i;

	for (i = 0; i < g->ninputs; i++) {
		struct npr_node *n = &g->nodes[g->inputs[i]];
		struct npr_value *v = npr_out(g, n, 0);

		if (shapes && shapes[i].rank >= 0)
			v->shape = shapes[i];
		if (v->shape.rank < 0)
			return npr_err(-EINVAL,
				       "input %s has no rank: give its shape at compile time",
				       v->name ? v->name : n->name);
	}
	return 0;
}

static int compile_clone(struct npr_graph *g, const struct npr_shape *shapes,
			 npr_evaluator_fn fold, struct npr_graph **out);

/**
 * npr_compile_graph() - turn a model graph into an executable graph
 * @src: the model's graph (not modified).
 * @shapes: per input a shape (rank -1: keep the model's; -1 dims
 *          dynamic), or NULL.
 * @fold: the evaluator constant folding computes nodes with, kept in the
 *        result's @fold for the bodies; NULL folds nothing (shapes that
 *        need a folded value then stay dynamic or fail).  lib/model.c and
 *        lib/query.c pass npr_backend_evaluator().
 * @out: the result, owned by the caller.
 *
 * Return: 0, or -errno with a message naming the layer at fault.
 */
int npr_compile_graph(const struct npr_graph *src,
		      const struct npr_shape *shapes, npr_evaluator_fn fold,
		      struct npr_graph **out)
{
	struct npr_graph *g = npr_graph_clone(src);

	return g ? compile_clone(g, shapes, fold, out) : -ENOMEM;
}

/**
 * npr_compile_graph_take() - npr_compile_graph() on a private copy
 * @src: a graph the caller owns and frees afterwards; its owned constant
 *       data moves into the result instead of being copied
 *       (npr_graph_clone_take()), so use it for names and structure only.
 * @shapes, @fold, @out: as for npr_compile_graph().
 *
 * Return: 0, or -errno with a message naming the layer at fault.
 */
int npr_compile_graph_take(struct npr_graph *src,
			   const struct npr_shape *shapes,
			   npr_evaluator_fn fold, struct npr_graph **out)
{
	struct npr_graph *g = npr_graph_clone_take(src);

	return g ? compile_clone(g, shapes, fold, out) : -ENOMEM;
}

static int compile_clone(struct npr_graph *g, const struct npr_shape *shapes,
			 npr_evaluator_fn fold, struct npr_graph **out)
{
	bool overridden = false;
	int i, err;

	g->fold = fold;
	for (i = 0; shapes && i < g->ninputs; i++)
		if (shapes[i].rank >= 0)
			overridden = true;
	err = apply_shapes(g, shapes);
	if (err)
		goto fail;
	err = pass_align(g);
	if (!err)
		err = pass_lower_half(g);
	if (err)
		goto fail;
	err = npr_infer_parse(g);
	if (err)
		goto fail;
	err = npr_infer_graph(g, !overridden, true);
	if (err)
		goto fail;
	err = npr_pass_state(g);
	if (err)
		goto fail;
	err = npr_infer_mark_dead(g);
	if (err)
		goto fail;
	*out = g;
	return 0;
fail:
	npr_graph_free(g);
	return err;
}

/*
 * @g's output shapes with every dynamic input dimension set to @want
 * (within its bounds): a clone sharing @g's constants, inferred again.
 */
static int probe(const struct npr_graph *g, const int64_t (*lo)[NPR_MAX_RANK],
		 const int64_t (*hi)[NPR_MAX_RANK], int64_t want,
		 struct npr_shape *out)
{
	struct npr_graph *c = npr_graph_clone_shared(g);
	int i, j, err = 0;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < c->ninputs; i++) {
		struct npr_shape *s = &npr_out(c, &c->nodes[c->inputs[i]],
					       0)->shape;

		for (j = 0; j < s->rank; j++) {
			int64_t d = want;

			if (s->d[j] >= 0)
				continue;
			if (d < lo[i][j])
				d = lo[i][j];
			if (hi[i][j] >= 0 && d > hi[i][j])
				d = hi[i][j];
			s->d[j] = d;
		}
	}
	for (i = 0; i < c->nnodes && !err; i++)
		if (!c->nodes[i].dead && c->nodes[i].op->parse)
			err = c->nodes[i].op->parse(c, &c->nodes[i]);
	if (!err)
		err = npr_infer_graph(c, false, true);
	for (i = 0; !err && i < c->noutputs; i++)
		out[i] = npr_in(c, &c->nodes[c->outputs[i]], 0)->shape;
	npr_graph_free(c);
	return err;
}

/**
 * npr_compile_output_dims() - the output dimensions that do not depend on
 * the dynamic input dimensions
 * @g: a compiled graph whose inputs have dynamic dimensions (-1).
 * @lo, @hi: per input of @g, per dimension, the bounds of the dynamic
 *           ones (@hi -1: none).
 * @out: per output of @g, its shape: the dimensions that are the same
 *       with the dynamic input dimensions at three sizes within their
 *       bounds (32, 33 and 61 when the bounds allow: a length divided by
 *       a small number is seen to change), -1 for the others; rank -1
 *       when they differ in rank or 32 or 33 does not infer (a size the
 *       model cannot take; 61 not inferring is ignored).
 *
 * Compile leaves every node that reads a dynamic dimension with an
 * unknown rank; this is what PORT_INFO reports of the outputs instead.
 * What a backend computes per inference is unaffected: a dimension found
 * static here that still follows an input at another size (a length
 * divided by 64, say) is sized at run time like a dynamic one, or fails
 * the inference when caller memory of the reported size is bound.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_compile_output_dims(const struct npr_graph *g,
			    const int64_t (*lo)[NPR_MAX_RANK],
			    const int64_t (*hi)[NPR_MAX_RANK],
			    struct npr_shape *out)
{
	int n = g->noutputs ? g->noutputs : 1, i, j, k, e1, e2 = 0;
	struct npr_shape *b = malloc(sizeof(*b) * n);

	if (!b)
		return -ENOMEM;
	e1 = probe(g, lo, hi, 32, out);
	for (k = 0; k < 2 && !e1 && !e2; k++) {
		e2 = probe(g, lo, hi, k ? 61 : 33, b);
		if (k && e2 && e2 != -ENOMEM) {
			e2 = 0;		/* a size too large for the model */
			break;
		}
		for (i = 0; !e2 && i < g->noutputs; i++) {
			if (out[i].rank != b[i].rank)
				out[i].rank = -1;
			for (j = 0; j < out[i].rank; j++)
				if (out[i].d[j] != b[i].d[j])
					out[i].d[j] = -1;
		}
	}
	for (i = 0; (e1 || e2) && i < g->noutputs; i++)
		out[i].rank = -1;
	free(b);
	return e1 == -ENOMEM || e2 == -ENOMEM ? -ENOMEM : 0;
}

/* The compiled shapes of @src's values (and the types of those without
 * one), in its bodies too. */
static void copy_shapes(struct npr_graph *src, const struct npr_graph *c)
{
	int i, k;

	for (i = 0; i < src->nvals && i < c->nvals; i++) {
		if (npr_shape_static(&c->vals[i].shape) &&
		    c->vals[i].shape.rank >= 0)
			src->vals[i].shape = c->vals[i].shape;
		/* a value a pass added has the type inference gave it */
		if (src->vals[i].type == NPR_ELEM_UNDEFINED)
			src->vals[i].type = c->vals[i].type;
	}
	for (i = 0; i < src->nnodes && i < c->nnodes; i++) {
		const struct npr_node *cn = &c->nodes[i];
		struct npr_node *n = &src->nodes[i];

		for (k = 0; k < n->nbodies && k < cn->nbodies; k++)
			copy_shapes(n->bodies[k].g, cn->bodies[k].g);
	}
}

/**
 * npr_compile_as_written() - the model as its file has it, for a compiler
 * @src: a clone of the model's graph, compiled into @compiled with
 *       npr_compile_graph() (value for value: compiling adds values only
 *       after the model's).  Changed in place.
 * @compiled: the compiled graph.
 *
 * What a backend that compiles the model itself (the NPU's compiler) is
 * given: every element type and constant as the model has them (f16
 * weights stay f16, a weight-decompression Convert / Subtract / Multiply
 * on i8 or u4 constants stays), nothing folded or lowered.  Each value
 * gets the shape compiling inferred (the input shapes COMPILE gave
 * propagate), and the nodes that no Result, Assign or ReadValue needs are
 * marked dead, constants included, so that a writer leaves them out.  Bodies of
 * control-flow ops are kept whole.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_compile_as_written(struct npr_graph *src,
			   const struct npr_graph *compiled)
{
	bool *live = calloc(src->nnodes + 1, sizeof(bool));
	int i, j;

	if (!live)
		return -ENOMEM;
	copy_shapes(src, compiled);
	for (i = 0; i < src->noutputs; i++)
		live[src->outputs[i]] = true;
	for (i = 0; i < src->ninputs; i++)
		live[src->inputs[i]] = true;
	for (i = src->nnodes - 1; i >= 0; i--) {
		const struct npr_node *n = &src->nodes[i];

		/* a variable's ends stay, as compiling keeps its ports */
		if (!strcmp(n->type, "Assign") ||
		    !strcmp(n->type, "ReadValue"))
			live[i] = true;
		if (!live[i])
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] >= 0)
				live[src->vals[n->in[j]].producer] = true;
	}
	for (i = 0; i < src->nnodes; i++)
		src->nodes[i].dead = !live[i];
	free(live);
	return 0;
}
