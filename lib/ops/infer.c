// SPDX-License-Identifier: MIT
/*
 * The shape inference driver: parse, infer and fold every node of a graph
 * in order, then mark the nodes no Result needs as dead.  Compile
 * (lib/passes/compile.c) runs it on a model, a control-flow op's infer
 * (lib/ops/control.c) on each of its bodies.
 *
 * Folding computes a node whose inputs are all constant with the kernel
 * the graph's evaluator (g->fold) gives for its op, so ops know no kernels
 * and neither ops nor passes name a backend: whoever compiles chooses.
 */
#include <errno.h>
#include <stdlib.h>

#include "error.h"
#include "graph/graph.h"
#include "infer.h"

/* Outputs larger than this are not folded (they would bloat the exec). */
#define FOLD_MAX_BYTES	(256u << 20)

/* Compute @n with @eval into new constants; too large outputs stay. */
static int fold_node(struct npr_graph *g, struct npr_node *n,
		     npr_eval_fn eval)
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
	err = eval(n, in, out);
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
 * npr_infer_parse() - parse the attributes of every node
 * @g: graph; each node's params are set by its op's parse.
 *
 * Return: 0, or -errno with a message naming the layer at fault.
 */
int npr_infer_parse(struct npr_graph *g)
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
	return 0;
}

/**
 * npr_infer_graph() - infer every shape, check it, fold constants
 * @g: graph, sorted, params parsed (npr_infer_parse()).
 * @check_decl: compare with the shapes the file declared.
 * @dyn: a node whose output shape depends on a value known only at
 *       inference time (its infer fails with -ENODATA) gets dynamic
 *       outputs, and so does every node downstream; so do the readers of
 *       a model input with dynamic dimensions; else that is an error.
 *
 * In topological order, every live node's outputs get a type and a shape
 * from its op's infer; a node whose inputs are all constant is folded with
 * the kernel @g->fold gives (none when it is NULL or gives NULL): its
 * outputs become constants and the node dead.
 *
 * Return: 0 or -errno with the message naming the layer.
 */
int npr_infer_graph(struct npr_graph *g, bool check_decl, bool dyn)
{
	char b1[128], b2[128];
	unsigned long mark;
	int i, j, err;

	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		bool all_const = true, dyn_in = false;
		npr_eval_fn eval;

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
		mark = npr_err_mark();
		err = n->op->infer(g, n);
		if (err == -ENODATA && dyn && !all_const) {
			err = make_dynamic(g, n);
			if (err)
				return err;
			continue;
		}
		if (err)
			return npr_node_err_default(n, err, mark);
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);

			/* a model input's dynamic dims (or a variable's
			 * that grows, a ReadValue without inputs): its
			 * readers are dynamic (above) until a backend knows
			 * them */
			if (!npr_shape_static(&v->shape) && dyn &&
			    ((n->op->flags & NPR_OP_SOURCE) || !n->nin) &&
			    !v->data &&
			    v->shape.rank >= 0)
				continue;
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
				    NPR_OP_SINK) || !n->nin || !all_const)
			continue;
		eval = g->fold ? g->fold(n->op) : NULL;
		if (!eval)
			continue;
		mark = npr_err_mark();
		err = fold_node(g, n, eval);
		if (err)
			return npr_node_err_default(n, err, mark);
	}
	return 0;
}

/**
 * npr_infer_mark_dead() - mark every node no Result depends on as dead
 * @g: graph, inferred and folded.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_infer_mark_dead(struct npr_graph *g)
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
 * npr_infer_body() - infer a body of a control-flow op in place
 * @g: the body, lowered to f32 with the model (lib/passes/compile.c);
 *     its Parameters have the types and static shapes the op gives them,
 *     and @g->fold the owner graph's evaluator.
 *
 * Parses every node, infers and folds without checking declared shapes
 * (bodies of loops declare concatenated shapes in places), and marks the
 * nodes no body Result needs as dead.  Nested bodies are inferred by
 * their op's infer, recursively.
 *
 * Return: 0, or -errno with a message naming the body layer at fault.
 */
int npr_infer_body(struct npr_graph *g)
{
	int err;

	err = npr_infer_parse(g);
	if (!err)
		err = npr_infer_graph(g, false, false);
	if (!err)
		err = npr_infer_mark_dead(g);
	return err;
}
