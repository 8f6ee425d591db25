// SPDX-License-Identifier: MIT
/*
 * Compiled-model blobs: the checks of an untrusted graph.  A graph read
 * from a blob (lib/store/serial.c) goes to a backend without the
 * frontend and the compile passes, so everything they would have
 * guaranteed is checked here: indices, edges and order, ops known, ports
 * and variables consistent, and every live node's output types and
 * shapes inferred again and compared with what the blob says.
 */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "object.h"
#include "graph/graph.h"
#include "store.h"

/*
 * npr_op_find() walks every op definition; a compiled graph has a few
 * distinct (type, version) pairs over many nodes: remember the last ones.
 */
struct op_memo {
	const char *type[16];
	unsigned int version[16];
	const struct npr_op_def *op[16];
	int n, next;
};

static const struct npr_op_def *op_find_memo(struct op_memo *m,
					     const char *type,
					     unsigned int version)
{
	const struct npr_op_def *op;
	int i;

	for (i = 0; i < m->n; i++)
		if (m->version[i] == version && m->type[i][0] == type[0] &&
		    !strcmp(m->type[i], type))
			return m->op[i];
	op = npr_op_find(type, version);
	if (op) {
		i = m->n < 16 ? m->n++ : m->next++ % 16;
		m->type[i] = type;
		m->version[i] = version;
		m->op[i] = op;
	}
	return op;
}

/**
 * npr_blob_check_structure() - what must hold of a graph read from a
 * blob before any op code looks at it
 * @g: the graph (the model's or a body).
 * @held: per value, whether the backend's prepared constants hold its
 *        bytes; NULL for a body.
 *
 * Every index in range, producers and edges consistent, ops known (and
 * set in n->op), inputs computed before their readers, ports Parameters
 * and Results.
 *
 * Return: 0 or -EINVAL with a message naming the value or node.
 */
int npr_blob_check_structure(struct npr_graph *g, const bool *held)
{
	struct op_memo memo;
	int i, j;

	memo.n = 0;
	memo.next = 0;

	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];

		if (!in_range(v->producer, g->nnodes) ||
		    !in_range(v->port, g->nodes[v->producer].nout) ||
		    g->nodes[v->producer].out[v->port] != i)
			return npr_err(-EINVAL, "blob: value %d has a bad producer",
				       i);
		if (!npr_elem_size(v->type) && v->type != NPR_ELEM_BOOLEAN)
			return npr_err(-EINVAL, "blob: value %d has element type %u",
				       i, v->type);
	}

	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		n->op = op_find_memo(&memo, n->type, n->version);
		if (!n->op)
			return npr_err(-EINVAL, "blob: node %d: unknown op %.64s-%u",
				       i, n->type, n->version);
		if (!(n->op->flags & NPR_OP_BODIES) != !n->nbodies)
			return npr_err(-EINVAL, "blob: node %d: %s with %d sub-graphs",
				       i, n->type, n->nbodies);
		for (j = 0; j < n->nout; j++)
			if (!in_range(n->out[j], g->nvals) ||
			    g->vals[n->out[j]].producer != i)
				return npr_err(-EINVAL, "blob: node %d: bad output %d",
					       i, j);
		for (j = 0; j < n->nin; j++)
			if (!in_range(n->in[j], g->nvals))
				return npr_err(-EINVAL, "blob: node %d: bad input %d",
					       i, j);
	}
	for (i = 0; held && i < g->nvals; i++) {
		const struct npr_node *p = &g->nodes[g->vals[i].producer];

		/* a constant: a Const, or a node compile folded */
		if (held[i] && !p->dead && (!(p->op->flags & NPR_OP_SOURCE) ||
					    !strcmp(p->type, "Parameter")))
			return npr_err(-EINVAL, "blob: value %d is held but computed",
				       i);
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		if (n->nin < n->op->nin_min ||
		    (n->op->nin_max >= n->op->nin_min &&
		     n->nin > n->op->nin_max))
			return npr_err(-EINVAL, "blob: node %d: %d inputs", i,
				       n->nin);
		for (j = 0; j < n->nin; j++) {
			const struct npr_value *v = npr_in(g, n, j);
			const struct npr_node *p = &g->nodes[v->producer];

			if (v->data || (held && held[n->in[j]]))
				continue;
			/* computed: by a live node that runs earlier, or a
			 * Parameter (state ports come last) */
			if (!strcmp(p->type, "Parameter") && !p->dead)
				continue;
			if ((p->op->flags & NPR_OP_SOURCE) || p->dead ||
			    v->producer >= i)
				return npr_err(-EINVAL, "blob: node %d input %d is not computed before it",
					       i, j);
		}
	}
	for (i = 0; i < g->ninputs; i++)
		if (!in_range(g->inputs[i], g->nnodes) ||
		    strcmp(g->nodes[g->inputs[i]].type, "Parameter") ||
		    g->nodes[g->inputs[i]].nout != 1)
			return npr_err(-EINVAL, "blob: input %d is not a Parameter", i);
	/* a dead Result is not checked above, and its value may be
	 * computed by nothing */
	for (i = 0; i < g->noutputs; i++)
		if (!in_range(g->outputs[i], g->nnodes) ||
		    strcmp(g->nodes[g->outputs[i]].type, "Result") ||
		    g->nodes[g->outputs[i]].nin != 1 ||
		    g->nodes[g->outputs[i]].dead)
			return npr_err(-EINVAL, "blob: output %d is not a live Result",
				       i);
	return 0;
}

/**
 * npr_blob_check_graph() - check a compiled graph read from a blob
 * @g: the graph.
 * @held: per value, whether the backend's prepared constants hold it.
 * @in: the compiled model's input ports, as the blob gives them.
 * @nin: their number.
 * @out: its output ports.
 * @nout: their number.
 *
 * npr_blob_check_structure(), the ports and variables against the
 * graph, then every live node parsed and inferred again and its outputs
 * compared with what the blob says.
 *
 * Return: 0 or -errno with a message: -EINVAL, or an op's parse or infer
 * error.
 */
int npr_blob_check_graph(struct npr_graph *g, const bool *held,
			 const struct npr_port *in, int nin,
			 const struct npr_port *out, int nout)
{
	char b1[128], b2[128];
	unsigned long mark;
	int i, j, err;

	err = npr_blob_check_structure(g, held);
	if (err)
		return err;
	if (g->ninputs != nin || g->noutputs != nout)
		return npr_err(-EINVAL, "blob: port counts differ from the graph's");
	for (i = 0; i < nin + nout; i++) {
		bool o = i >= nin;
		int k = o ? i - nin : i;
		int node = o ? g->outputs[k] : g->inputs[k];
		const struct npr_port *p = o ? &out[k] : &in[k];

		if (!in_range(node, g->nnodes) ||
		    !in_range(p->value, g->nvals) ||
		    strcmp(g->nodes[node].type, o ? "Result" : "Parameter") ||
		    (o ? g->nodes[node].nin : g->nodes[node].nout) != 1 ||
		    p->value != (o ? g->nodes[node].in[0] :
				 g->nodes[node].out[0]) ||
		    !npr_shape_eq(&p->shape, &g->vals[p->value].shape))
			return npr_err(-EINVAL, "blob: %s port %d does not match the graph",
				       o ? "output" : "input", k);
	}
	if (g->nstate_in < 0 || g->nstate_in > g->ninputs ||
	    g->nstate_out < 0 || g->nstate_out > g->noutputs)
		return npr_err(-EINVAL, "blob: bad state port counts");
	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];
		int first_in = g->ninputs - g->nstate_in;
		int first_out = g->noutputs - g->nstate_out;

		if (v->state_in < first_in || v->state_in >= g->ninputs ||
		    (v->valid_in != -1 && (v->valid_in < first_in ||
					   v->valid_in >= g->ninputs)) ||
		    (v->state_out != -1 && (v->state_out < first_out ||
					    v->state_out >= g->noutputs)) ||
		    !in_range(v->read_node, g->nnodes) ||
		    (v->valid_in != -1 &&
		     g->nodes[v->read_node].nin != 3))
			return npr_err(-EINVAL, "blob: variable %d is malformed",
				       i);
		if (v->state_out != -1 &&
		    in[v->state_in].bytes != out[v->state_out].bytes)
			return npr_err(-EINVAL, "blob: variable %d: sizes differ",
				       i);
	}
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		struct npr_value saved[16];
		int err;

		if (n->dead || (n->op->flags & NPR_OP_SOURCE))
			continue;
		if (n->nout > 16)
			return npr_err(-EINVAL, "blob: node %d has %d outputs",
				       i, n->nout);
		for (j = 0; j < n->nin; j++)
			if (!npr_shape_static(&npr_in(g, n, j)->shape))
				return npr_err(-EINVAL, "blob: node %d input %d has no shape",
					       i, j);
		for (j = 0; j < n->nout; j++)
			saved[j] = *npr_out(g, n, j);
		mark = npr_err_mark();
		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				return npr_node_err_default(n, err, mark);
		}
		err = n->op->infer(g, n);
		if (err)
			return npr_node_err_default(n, err, mark);
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);

			if (v->type != saved[j].type ||
			    !npr_shape_eq(&v->shape, &saved[j].shape))
				return npr_node_err(n, -EINVAL,
						    "blob: output %d is %s %s, the blob says %s %s",
						    j, npr_elem_name(v->type),
						    npr_shape_str(&v->shape, b1, sizeof(b1)),
						    npr_elem_name(saved[j].type),
						    npr_shape_str(&saved[j].shape, b2, sizeof(b2)));
			if (v->data != saved[j].data)
				return npr_node_err(n, -EINVAL,
						    "blob: output %d became constant", j);
		}
	}
	return 0;
}
