// SPDX-License-Identifier: MIT
/*
 * From a loaded model to a graph a backend can execute:
 *
 *   clone -> apply input shapes -> copy unaligned constants -> lower
 *   f16/bf16 to f32 -> parse every node -> in topological order: infer
 *   shapes, check against the shapes the file declared, fold nodes whose
 *   inputs are all constant -> mark nodes that no Result needs as dead.
 *
 * A node whose output shape depends on the value of a computed input (a
 * Reshape target fed by a Parameter) keeps dynamic output shapes, as does
 * everything downstream of it; the backend infers them at run time.
 *
 * Each step is a named function so it can be tested and reused on its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "error.h"
#include "graph/graph.h"

/* Outputs larger than this are not folded (they would bloat the exec). */
#define FOLD_MAX_BYTES	(256u << 20)

static bool is_half(unsigned int t)
{
	return t == NPR_ELEM_F16 || t == NPR_ELEM_BF16;
}

/**
 * npr_pass_align() - an aligned copy of every unaligned constant
 * @g: the graph, a clone of a loaded model.
 *
 * A loaded ONNX model refers to its floating-point weights where they
 * are in the mapped file, at whatever offset the format left them
 * (struct npr_value); kernels, folding and packing read elements through
 * typed pointers, so each such constant gets an owned copy here (f16 and
 * bf16 ones are converted by npr_pass_lower_half() instead).  The file
 * pages the copy came from then leave memory: the model's graph still
 * refers to them, and they come back from the page cache when it is
 * compiled or read again.  Bodies hold no such constants.
 *
 * Return: 0 or -ENOMEM.
 */
static int npr_pass_align(struct npr_graph *g)
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
 * npr_pass_lower_half() - make f32 the compute type of f16/bf16 values
 * @g: graph; constants of those types are converted into owned f32 copies.
 *
 * Return: 0 or -ENOMEM.
 */
static int npr_pass_lower_half(struct npr_graph *g)
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
			if (!v->owned)
				npr_graph_drop_pages(g, v->data, v->nbytes);
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
			err = npr_pass_lower_half(n->bodies[k].g);
			if (err)
				return err;
		}
	}
	return 0;
}

static int apply_shapes(struct npr_graph *g, const struct npr_shape *shapes)
{
	char b1[128];
	int i;

	for (i = 0; i < g->ninputs; i++) {
		struct npr_node *n = &g->nodes[g->inputs[i]];
		struct npr_value *v = npr_out(g, n, 0);

		if (shapes && shapes[i].rank >= 0)
			v->shape = shapes[i];
		if (!npr_shape_static(&v->shape))
			return npr_err(-EINVAL,
				       "input %s has a dynamic shape %s: give a static shape at compile time",
				       v->name ? v->name : n->name,
				       npr_shape_str(&v->shape, b1,
						     sizeof(b1)));
	}
	return 0;
}

static int fold_node(struct npr_graph *g, struct npr_node *n)
{
	struct npr_tensor in[64], out[16];
	int i, err;

	if (n->nin > 64 || n->nout > 16)
		return 0;
	for (i = 0; i < n->nout; i++) {
		struct npr_value *v = npr_out(g, n, i);
		int64_t numel = npr_shape_numel(&v->shape);
		size_t bytes = npr_tensor_bytes(v->type, numel);

		if (numel < 0 || !npr_elem_size(v->type) ||
		    bytes > FOLD_MAX_BYTES)
			return 0;
	}
	for (i = 0; i < n->nin; i++) {
		struct npr_value *v = npr_in(g, n, i);

		in[i].type = v->type;
		in[i].shape = v->shape;
		in[i].data = (void *)v->data;
		in[i].nbytes = v->nbytes;
	}
	for (i = 0; i < n->nout; i++) {
		struct npr_value *v = npr_out(g, n, i);
		size_t bytes = npr_tensor_bytes(v->type,
						npr_shape_numel(&v->shape));

		out[i].type = v->type;
		out[i].shape = v->shape;
		out[i].nbytes = bytes;
		out[i].data = malloc(bytes ? bytes : 1);
		if (!out[i].data) {
			err = -ENOMEM;
			goto fail;
		}
	}
	err = n->op->eval(n, in, out);
	if (err)
		goto fail;
	for (i = 0; i < n->nout; i++) {
		struct npr_value *v = npr_out(g, n, i);

		free(v->owned);
		v->owned = out[i].data;
		v->data = out[i].data;
		v->nbytes = out[i].nbytes;
	}
	n->dead = true;
	return 0;
fail:
	while (i-- > 0)
		free(out[i].data);
	return err;
}

/*
 * Leave the outputs of @n to be inferred at run time: unknown rank, and
 * an element type that is only a guess for the ports (the one the file
 * declared, else that of input 0); the backend infers both again with
 * the input values (Documentation/design.rst).
 */
static int make_dynamic(struct npr_graph *g, struct npr_node *n)
{
	int j;

	if (n->nbodies || (n->op->flags & (NPR_OP_SOURCE | NPR_OP_SINK)))
		return npr_node_err(n, -EOPNOTSUPP,
				    "shapes that depend on input values are not supported for this op");
	for (j = 0; j < n->nout; j++) {
		struct npr_value *v = npr_out(g, n, j);

		v->shape.rank = -1;
		if (!v->type && n->nin)
			v->type = npr_in(g, n, 0)->type;
	}
	return 0;
}

/**
 * npr_pass_infer() - infer every shape, check it, fold constants
 * @g: graph, sorted, params parsed.
 * @check_decl: compare with the shapes the file declared.
 * @dyn: a node whose output shape depends on a value known only at
 *       inference time (its infer fails with -ENODATA) gets dynamic
 *       outputs, and so does every node downstream; else that is an error.
 *
 * Return: 0 or -errno with the message naming the layer.
 */
static int npr_pass_infer(struct npr_graph *g, bool check_decl, bool dyn)
{
	char b1[128], b2[128];
	int i, j, err;

	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		bool all_const = true, dyn_in = false;

		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++) {
			struct npr_value *v = npr_in(g, n, j);

			if (!npr_shape_static(&v->shape)) {
				if (!dyn || v->data)
					return npr_node_err(n, -EINVAL,
							    "input %d has no shape", j);
				dyn_in = true;
			}
			if (!v->data)
				all_const = false;
		}
		if (dyn_in && (n->op->flags & NPR_OP_SINK))
			continue;
		if (dyn_in) {
			err = make_dynamic(g, n);
			if (err)
				return err;
			continue;
		}
		err = n->op->infer(g, n);
		if (err == -ENODATA && dyn && !all_const) {
			err = make_dynamic(g, n);
			if (err)
				return err;
			continue;
		}
		if (err)
			return npr_err_default(err, 0);
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);

			if (!npr_shape_static(&v->shape))
				return npr_node_err(n, -EINVAL,
						    "output %d: shape %s is not static",
						    j, npr_shape_str(&v->shape, b1, sizeof(b1)));
			if (check_decl && npr_shape_static(&v->decl) &&
			    !(n->op->flags & NPR_OP_SOURCE) &&
			    !npr_shape_eq(&v->decl, &v->shape))
				return npr_node_err(n, -EINVAL,
						    "output %d: inferred shape %s but the model declares %s",
						    j,
						    npr_shape_str(&v->shape, b1, sizeof(b1)),
						    npr_shape_str(&v->decl, b2, sizeof(b2)));
		}
		/* an infer that produced constant outputs (ShapeOf) */
		for (j = 0; j < n->nout; j++)
			if (!npr_out(g, n, j)->data)
				break;
		if (n->nout && j == n->nout &&
		    !(n->op->flags & NPR_OP_SOURCE)) {
			n->dead = true;
			continue;
		}
		if (n->op->flags & (NPR_OP_NO_FOLD | NPR_OP_SOURCE |
				    NPR_OP_SINK) || !n->nin || !all_const ||
		    !n->op->eval)
			continue;
		err = fold_node(g, n);
		if (err)
			return npr_err_default(err, 0);
	}
	return 0;
}

/* Mark every node no Result depends on as dead. */
static int npr_pass_dce(struct npr_graph *g)
{
	bool *live = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
	int i, j;

	if (!live)
		return -ENOMEM;
	for (i = 0; i < g->noutputs; i++)
		live[g->outputs[i]] = true;
	for (i = g->nnodes - 1; i >= 0; i--) {
		struct npr_node *n = &g->nodes[i];

		if (!live[i])
			continue;
		for (j = 0; j < n->nin; j++) {
			struct npr_value *v = npr_in(g, n, j);

			if (!v->data)
				live[v->producer] = true;
		}
	}
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (!live[i] && !(n->op->flags & NPR_OP_SOURCE))
			n->dead = true;
	}
	free(live);
	return 0;
}

/**
 * npr_compile_body() - compile a body of a control-flow op in place
 * @g: the body, already lowered by npr_pass_lower_half() with the model;
 *     its Parameters have the types and static shapes the op gives them.
 *
 * Parses every node, infers and folds without checking declared shapes
 * (bodies of loops declare concatenated shapes in places), and marks the
 * nodes no body Result needs as dead.  Nested bodies are compiled by
 * their op's infer, recursively.
 *
 * Return: 0, or -errno with a message naming the body layer at fault.
 */
int npr_compile_body(struct npr_graph *g)
{
	int i, err;

	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				return err;
		}
	}
	err = npr_pass_infer(g, false, false);
	if (!err)
		err = npr_pass_dce(g);
	return err;
}

/**
 * npr_compile_graph() - turn a model graph into an executable graph
 * @src: the model's graph (not modified).
 * @shapes: per input a shape (rank -1: keep the model's), or NULL.
 * @out: the result, owned by the caller.
 *
 * Return: 0, or -errno with a message naming the layer at fault.
 */
static int compile_clone(struct npr_graph *g, const struct npr_shape *shapes,
			 struct npr_graph **out);

int npr_compile_graph(const struct npr_graph *src,
		      const struct npr_shape *shapes, struct npr_graph **out)
{
	struct npr_graph *g = npr_graph_clone(src);

	return g ? compile_clone(g, shapes, out) : -ENOMEM;
}

/**
 * npr_compile_graph_take() - npr_compile_graph() on a private copy
 * @src: a graph the caller owns and frees afterwards; its owned constant
 *       data moves into the result instead of being copied
 *       (npr_graph_clone_take()), so use it for names and structure only.
 * @shapes, @out: as for npr_compile_graph().
 */
int npr_compile_graph_take(struct npr_graph *src,
			   const struct npr_shape *shapes,
			   struct npr_graph **out)
{
	struct npr_graph *g = npr_graph_clone_take(src);

	return g ? compile_clone(g, shapes, out) : -ENOMEM;
}

static int compile_clone(struct npr_graph *g, const struct npr_shape *shapes,
			 struct npr_graph **out)
{
	bool overridden = false;
	int i, err;
	for (i = 0; shapes && i < g->ninputs; i++)
		if (shapes[i].rank >= 0)
			overridden = true;
	err = apply_shapes(g, shapes);
	if (err)
		goto fail;
	err = npr_pass_align(g);
	if (!err)
		err = npr_pass_lower_half(g);
	if (err)
		goto fail;
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				goto fail;
		}
	}
	err = npr_pass_infer(g, !overridden, true);
	if (err)
		goto fail;
	err = npr_pass_state(g);
	if (err)
		goto fail;
	err = npr_pass_dce(g);
	if (err)
		goto fail;
	*out = g;
	return 0;
fail:
	npr_graph_free(g);
	return err;
}
