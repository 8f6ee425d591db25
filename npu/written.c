// SPDX-License-Identifier: MIT
/*
 * The graph the npu backend serializes for the driver's compiler: the
 * model as written (its own element types and constants) or, for an
 * import without the driver's binary and for a query, the compiled
 * graph; either way with the ports in the caller's element types
 * (Converts at the boundary) and the variables as ReadValue/Assign pairs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include "npu.h"

/* A Convert of @from to @type, its output value returned (or -errno). */
static int add_convert(struct npr_graph *w, int from, unsigned int type,
		       const char *base)
{
	char name[300];
	int cn, v, err;

	snprintf(name, sizeof(name), "%.250s/convert_%s", base ? base : "port",
		 npr_elem_name(type));
	cn = npr_graph_add_node(w, name, "Convert", 1, -1);
	if (cn < 0)
		return cn;
	w->nodes[cn].op = npr_op_find("Convert", 1);
	err = npr_node_set_inputs(&w->nodes[cn], 1);
	if (!err)
		err = npr_node_set_outputs(w, cn, 1);
	if (!err)
		err = npr_node_add_attr(&w->nodes[cn], "destination_type",
					npr_elem_name(type));
	if (err)
		return err;
	w->nodes[cn].in[0] = from;
	v = w->nodes[cn].out[0];
	w->vals[v].type = type;
	w->vals[v].shape = w->vals[from].shape;
	w->vals[v].decl = w->vals[from].shape;
	return v;
}

/*
 * Ports in the caller's element types (an FP16 model takes and returns
 * f16, the compiled graph computes in f32): the Parameter or Result gets
 * the caller's type and a Convert joins it to the graph.
 */
static int boundary_types(struct npr_graph *w, const unsigned int *types)
{
	int i, j, k, n = w->ninputs, v, nv;

	for (i = 0; i < n; i++) {
		int pn = w->inputs[i];

		v = w->nodes[pn].out[0];
		if (types[i] == w->vals[v].type)
			continue;
		nv = add_convert(w, v, w->vals[v].type, w->nodes[pn].name);
		if (nv < 0)
			return nv;
		for (j = 0; j < w->nnodes; j++)
			for (k = 0; k < w->nodes[j].nin; k++)
				if (w->nodes[j].in[k] == v &&
				    w->vals[nv].producer != j)
					w->nodes[j].in[k] = nv;
		w->vals[v].type = types[i];
	}
	for (i = 0; i < w->noutputs; i++) {
		int rn = w->outputs[i];

		v = w->nodes[rn].in[0];
		if (types[n + i] == w->vals[v].type)
			continue;
		nv = add_convert(w, v, types[n + i], w->nodes[rn].name);
		if (nv < 0)
			return nv;
		w->nodes[rn].in[0] = nv;
		/* the output keeps its tensor name */
		w->vals[nv].name = w->vals[v].name;
		w->vals[v].name = NULL;
	}
	return 0;
}

static int find_dead(const struct npr_graph *w, const char *type,
		     const char *id)
{
	int i;

	for (i = 0; i < w->nnodes; i++) {
		const char *a;

		if (!w->nodes[i].dead || strcmp(w->nodes[i].type, type))
			continue;
		a = npr_attr(&w->nodes[i], "variable_id");
		if (a && !strcmp(a, id))
			return i;
	}
	return -1;
}

/*
 * The variables back as ReadValue/Assign, the form the NPU compiler
 * takes (it answers with vpux_ie_read_value_<id> / vpux_ie_assign_<id>
 * arguments): lib/passes/stateful.c made each a hidden input (and a validity flag
 * feeding a Select that replaced the ReadValue) and a hidden output.
 */
static int raise_state(struct npr_graph *w, const struct npr_graph *g)
{
	bool *drop_in, *drop_out;
	int i, k, j, err = 0;

	/* a clone has the nodes and values at the same indexes, no vars */
	if (!g->nvars)
		return 0;
	drop_in = calloc(w->ninputs + 1, sizeof(bool));
	drop_out = calloc(w->noutputs + 1, sizeof(bool));
	if (!drop_in || !drop_out) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nvars && !err; i++) {
		const struct npr_variable *var = &g->vars[i];
		int sn = w->inputs[var->state_in];
		int sv = w->nodes[sn].out[0];
		struct npr_node *r = &w->nodes[var->read_node];

		/*
		 * A variable nothing assigns stays two ordinary inputs (value,
		 * validity) and a Select: it reads its initial value, or what
		 * STATE_SET gave it, exactly as on cpu.
		 */
		if (var->state_out < 0)
			continue;

		drop_in[var->state_in] = true;
		w->nodes[sn].dead = true;
		if (var->valid_in >= 0) {
			/* Select(valid, state, init) -> ReadValue(init) */
			drop_in[var->valid_in] = true;
			w->nodes[w->inputs[var->valid_in]].dead = true;
			free(r->type);
			r->type = strdup("ReadValue");
			if (!r->type) {
				err = -ENOMEM;
				break;
			}
			r->version = 6;
			r->op = npr_op_find("ReadValue", 6);
			r->in[0] = r->in[2];
			r->nin = 1;
		} else {
			/* the dead ReadValue() comes back; readers of the
			 * state input read it again */
			r->dead = false;
			for (j = 0; j < w->nnodes; j++)
				for (k = 0; k < w->nodes[j].nin; k++)
					if (w->nodes[j].in[k] == sv)
						w->nodes[j].in[k] = r->out[0];
		}
		if (var->state_out >= 0) {
			int an = find_dead(w, "Assign", var->id);

			if (an < 0) {
				err = npr_err(-EINVAL, "npu: the Assign of variable %s is gone",
					      var->id);
				break;
			}
			w->nodes[an].dead = false;
			w->nodes[w->outputs[var->state_out]].dead = true;
			drop_out[var->state_out] = true;
		}
	}
	for (i = k = 0; i < w->ninputs; i++)
		if (!drop_in[i])
			w->inputs[k++] = w->inputs[i];
	w->ninputs = k;
	for (i = k = 0; i < w->noutputs; i++)
		if (!drop_out[i])
			w->outputs[k++] = w->outputs[i];
	w->noutputs = k;
	w->nstate_in = w->nstate_out = 0;
out:
	free(drop_in);
	free(drop_out);
	return err;
}

/*
 * A blob keeps no bytes of a constant that no live node reads (lib/store/
 * serial.c): its Const, left live, has nothing to serialize.  Mark it
 * dead in @w, as compile marks what nothing needs.
 */
static int drop_unread_consts(struct npr_graph *w)
{
	bool *read = calloc(w->nvals + 1, sizeof(bool));
	int i, j;

	if (!read)
		return -ENOMEM;
	for (i = 0; i < w->nnodes; i++)
		for (j = 0; !w->nodes[i].dead && j < w->nodes[i].nin; j++)
			read[w->nodes[i].in[j]] = true;
	for (i = 0; i < w->noutputs; i++)
		read[w->outputs[i]] = true;
	for (i = 0; i < w->nnodes; i++) {
		struct npr_node *n = &w->nodes[i];

		if (!n->dead && n->nout == 1 && !n->nin &&
		    !strcmp(n->type, "Const") && !read[n->out[0]] &&
		    !w->vals[n->out[0]].data)
			n->dead = true;
	}
	free(read);
	return 0;
}

/**
 * npr_npu_ir_graph() - a compiled graph as the driver's compiler reads it
 * @g: a compiled graph.
 * @types: the element type of each input, then of each output.
 * @out: Out. The graph to serialize; the caller frees it.
 *
 * @g, a compiled graph, as the driver's compiler should see it: ports in
 * @types, variables as ReadValue/Assign.  A modified copy.  What an
 * import without the driver's native binary compiles, and what a query
 * asks about.
 *
 * Return: 0 or -errno.
 */
int npr_npu_ir_graph(const struct npr_graph *g, const unsigned int *types,
		     struct npr_graph **out)
{
	struct npr_graph *w;
	int err;

	w = npr_graph_clone(g);
	if (!w)
		return -ENOMEM;
	err = drop_unread_consts(w);
	if (!err)
		err = boundary_types(w, types);
	if (!err)
		err = raise_state(w, g);
	if (err) {
		npr_graph_free(w);
		return err;
	}
	*out = w;
	return 0;
}

/**
 * npr_npu_written_graph() - the model as written, for the driver's compiler
 * @ex: the exec being compiled; ex->src is the model's own graph.
 * @out: Out. The graph to serialize; the caller frees it.
 *
 * The model as written (ex->src), as OpenVINO's NPU plugin gives it to
 * the driver's compiler: the model's own element types and constants,
 * variables as ReadValue/Assign (a variable that nothing assigns as two
 * hidden inputs and a Select, as the compiled graph has it), ports in
 * the caller's types.  Of the plugin's transformations before it
 * serializes, removing Identity has nothing to do (no opset of npuring
 * has Identity), and downgrading Interpolate-11 for a compiler without
 * opset 11 is refused (npu_check_opset() in backend.c).
 *
 * Return: 0 or -errno.
 */
int npr_npu_written_graph(const struct npr_exec *ex, struct npr_graph **out)
{
	int vis = ex->nin - ex->g->nstate_in, i, err;
	struct npr_graph *w;
	unsigned int *types;

	w = npr_graph_clone(ex->src);
	if (!w)
		return -ENOMEM;
	err = npr_pass_state(w);
	types = calloc(w->ninputs + w->noutputs + 1, sizeof(*types));
	if (!err && !types)
		err = -ENOMEM;
	if (err)
		goto out;
	/* the caller's types at the model's ports; variables their own */
	for (i = 0; i < w->ninputs; i++)
		types[i] = i < vis && i < ex->nin ? ex->in[i].type :
			   w->vals[w->nodes[w->inputs[i]].out[0]].type;
	for (i = 0; i < w->noutputs; i++)
		types[w->ninputs + i] =
			i < ex->nout - ex->g->nstate_out ? ex->out[i].type :
			w->vals[w->nodes[w->outputs[i]].in[0]].type;
	err = boundary_types(w, types);
	if (!err)
		err = raise_state(w, w);
out:
	free(types);
	if (err) {
		npr_graph_free(w);
		return err;
	}
	*out = w;
	return 0;
}

#endif
