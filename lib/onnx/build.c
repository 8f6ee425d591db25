// SPDX-License-Identifier: MIT
/*
 * ONNX frontend: the graph builder.  A GraphProto (the model's, or a
 * sub-graph of If, Loop and Scan) becomes a struct npr_graph: its
 * initializers Const nodes, its inputs that are not initializers
 * Parameters, each node the nodes its translator builds (looked up here
 * in the tables of the translator files, lib/onnx/<area>.c), each graph
 * output a Result.  A table maps tensor names to values; a sub-graph that
 * names a value of a graph around it captures it as a body Parameter (or
 * a copy of a constant).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

/* A value index, or not defined yet, or an output we cannot produce. */
#define NAME_UNDEF	(-1)
#define NAME_UNSUPP	(-2)

struct onnx_name {
	const char *key;
	int val;				/* value index or NAME_* */
	const Onnx__ValueInfoProto *info;	/* from graph.value_info */
};

/* ---- the name table --------------------------------------------------- */

static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return (size_t)h;
}

static struct onnx_name *name_slot(struct onnx_name *tab, size_t cap,
				   const char *key)
{
	size_t i = name_hash(key) & (cap - 1);

	while (tab[i].key && strcmp(tab[i].key, key))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct onnx_name *name_find(struct onnx_ctx *c, const char *key)
{
	struct onnx_name *e;

	if (!c->names_cap)
		return NULL;
	e = name_slot(c->names, c->names_cap, key);
	return e->key ? e : NULL;
}

/* The entry of @key, created (val -1) if new.  NULL without memory. */
static struct onnx_name *name_get(struct onnx_ctx *c, const char *key)
{
	struct onnx_name *e;
	size_t i;

	if ((c->names_cnt + 1) * 2 > c->names_cap) {
		size_t cap = c->names_cap ? c->names_cap * 2 : 256;
		struct onnx_name *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (i = 0; i < c->names_cap; i++)
			if (c->names[i].key)
				*name_slot(tab, cap, c->names[i].key) =
					c->names[i];
		free(c->names);
		c->names = tab;
		c->names_cap = cap;
	}
	e = name_slot(c->names, c->names_cap, key);
	if (!e->key) {
		e->key = key;
		e->val = NAME_UNDEF;
		c->names_cnt++;
	}
	return e;
}

static int check_name(struct onnx_ctx *c, const char *what, const char *s)
{
	if (!s || !*s)
		return npr_onnx_err(c, -EINVAL, "%s has no name", what);
	if (strnlen(s, ONNX_MAX_NAME + 1) > ONNX_MAX_NAME)
		return npr_onnx_err(c, -ENAMETOOLONG,
				    "%s has a name longer than %d bytes", what,
				    ONNX_MAX_NAME);
	return 0;
}

/*
 * Bind tensor name @key to value @v.  A fresh value takes the name; its
 * load-time type and shape come from value_info when nothing better is
 * known.
 */
static int define(struct onnx_ctx *c, const char *key, int v)
{
	struct onnx_name *e = name_get(c, key);
	struct npr_value *val = &c->g->vals[v];
	struct npr_shape sh;
	unsigned int t;

	if (!e)
		return -ENOMEM;
	if (e->val != NAME_UNDEF)
		return npr_onnx_err(c, -EINVAL,
				    "tensor \"%.200s\" is defined twice", key);
	e->val = v;
	if (!val->name) {
		val->name = strdup(key);
		if (!val->name)
			return -ENOMEM;
	}
	if (e->info && !npr_onnx_info_type(e->info, &t, &sh)) {
		if (!val->type)
			val->type = t;
		if (val->shape.rank < 0)
			val->shape = sh;
	}
	return 0;
}

/*
 * Outer value @outer (of c->parent's graph) made visible in sub-graph @c
 * under @key: a constant is copied into the body, anything else becomes a
 * new body Parameter that the control-flow node feeds (c->caps).
 */
static int capture(struct onnx_ctx *c, const char *key, int outer)
{
	const struct npr_value *ov = &c->parent->g->vals[outer];
	struct npr_graph *g = c->g;
	struct npr_value *v;
	int idx, err, *p;

	if (ov->data) {
		size_t bytes = ov->nbytes;
		void *data = malloc(bytes ? bytes : 1);

		if (!data)
			return -ENOMEM;
		if (bytes)
			memcpy(data, ov->data, bytes);
		return npr_onnx_const_take(c, ov->type, &ov->shape, data, bytes,
					   key);
	}
	idx = npr_graph_add_node(g, key, "Parameter", 1, c->layer);
	if (idx < 0)
		return idx;
	g->nodes[idx].op = npr_op_find("Parameter", 1);
	err = npr_node_set_outputs(g, idx, 1);
	if (!err && ov->type)
		err = npr_onnx_set_attr(c, idx, "element_type", "%s",
					npr_elem_name(ov->type));
	if (err)
		return err;
	v = &g->vals[g->nodes[idx].out[0]];
	v->type = ov->type;
	v->shape = ov->shape;
	v->decl.rank = -1;
	p = realloc(g->inputs, sizeof(int) * (g->ninputs + 1));
	if (!p)
		return -ENOMEM;
	g->inputs = p;
	g->inputs[g->ninputs++] = idx;
	p = realloc(c->caps, sizeof(int) * (c->ncaps + 1));
	if (!p)
		return -ENOMEM;
	c->caps = p;
	c->caps[c->ncaps++] = outer;
	return g->nodes[idx].out[0];
}

/*
 * The entry of tensor @key as a node input or graph output sees it: in a
 * sub-graph a name it does not define is looked up in the graphs around
 * it (ONNX outer-scope references) and captured.  *out is NULL when the
 * name is defined nowhere.
 */
static int resolve(struct onnx_ctx *c, const char *key,
		   struct onnx_name **out)
{
	struct onnx_name *e = name_find(c, key), *pe = NULL;
	int v, err;

	*out = e;
	if ((e && e->val != NAME_UNDEF) || !c->parent)
		return 0;
	err = resolve(c->parent, key, &pe);
	if (err || !pe || pe->val < 0) {
		*out = pe;
		return err;
	}
	v = capture(c, key, pe->val);
	if (v < 0)
		return v;
	err = define(c, key, v);
	if (err)
		return err;
	*out = name_find(c, key);
	return 0;
}

/* ---- the graph -------------------------------------------------------- */

static int add_initializers(struct onnx_ctx *c, const Onnx__GraphProto *gp,
			    struct onnx_inits *in)
{
	size_t i, n = in ? in->n : gp->n_initializer;
	int v, err;

	for (i = 0; i < n; i++) {
		const Onnx__TensorProto *t = in ? NULL : gp->initializer[i];
		const struct pb_span *raw = NULL;

		c->layer++;
		if (in) {
			err = npr_onnx_init_unpack(in, i);
			if (err == -ENOMEM)
				return err;
			t = in->t[i];
			raw = in->raw[i].p ? &in->raw[i] : NULL;
		}
		if (!t)
			return npr_onnx_err(c, -EINVAL,
					    "malformed ONNX protobuf");
		err = check_name(c, "an initializer", t->name);
		if (err)
			return err;
		v = npr_onnx_tensor_const_raw(c, t, raw, t->name);
		if (v < 0)
			return v;
		err = define(c, t->name, v);
		if (err)
			return err;
	}
	if (gp->n_sparse_initializer)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "sparse initializers are not supported");
	return 0;
}

static int add_inputs(struct onnx_ctx *c, const Onnx__GraphProto *gp)
{
	struct npr_graph *g = c->g;
	size_t i;
	int err;

	g->inputs = malloc(sizeof(int) * (gp->n_input ? gp->n_input : 1));
	if (!g->inputs)
		return -ENOMEM;
	for (i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		struct onnx_name *e;
		struct npr_value *v;
		struct npr_shape sh;
		unsigned int type;
		int idx, val;

		c->layer++;
		if (!vi)
			return npr_onnx_err(c, -EINVAL,
					    "malformed ONNX protobuf");
		err = check_name(c, "a graph input", vi->name);
		if (err)
			return err;
		e = name_find(c, vi->name);
		if (e && e->val >= 0 &&
		    !strcmp(g->nodes[g->vals[e->val].producer].type, "Const"))
			continue;	/* an initializer: a constant */
		if (e && e->val >= 0)
			return npr_onnx_err(c, -EINVAL,
					    "graph input \"%.200s\" is listed twice",
					    vi->name);
		err = npr_onnx_info_type(vi, &type, &sh);
		if (err == -EINVAL)
			return npr_onnx_err(c, err,
					    "graph input \"%.200s\": bad dims",
					    vi->name);
		if (err)
			return npr_onnx_err(c, err,
					    "graph input \"%.200s\": only tensors of numeric types are supported",
					    vi->name);
		if (!type && !c->parent)	/* a body's comes from outside */
			return npr_onnx_err(c, -EINVAL,
					    "graph input \"%.200s\" has no element type",
					    vi->name);
		idx = npr_graph_add_node(g, vi->name, "Parameter", 1, c->layer);
		if (idx < 0)
			return idx;
		g->nodes[idx].op = npr_op_find("Parameter", 1);
		err = npr_node_set_outputs(g, idx, 1);
		if (!err && type)
			err = npr_onnx_set_attr(c, idx, "element_type", "%s",
						npr_elem_name(type));
		if (!err && sh.rank >= 0)
			err = npr_onnx_set_shape_attr(c, idx, &sh);
		if (err)
			return err;
		val = g->nodes[idx].out[0];
		v = &g->vals[val];
		v->type = type;
		v->shape = sh;
		v->decl = sh;
		g->inputs[g->ninputs++] = idx;
		if (c->in_axis && c->in_axis[i] >= 0) {
			/* one part of a sliced input: without the axis */
			v->name = strdup(vi->name);
			if (!v->name)
				return -ENOMEM;
			val = npr_onnx_with_list(c, "Squeeze", val,
						 &c->in_axis[i],
						 1, vi->name);
			if (val < 0)
				return val;
		}
		err = define(c, vi->name, val);
		if (err)
			return err;
	}
	return 0;
}

/* A copy of value @v: Unsqueeze and Squeeze axis 0, any type and rank. */
static int copy_value(struct onnx_ctx *c, int v, const char *name)
{
	int64_t zero = 0;
	int in[2], ax, mid, out, err;

	ax = npr_onnx_const_i64(c, &zero, 1, name);
	if (ax < 0)
		return ax;
	in[0] = v;
	in[1] = ax;
	err = npr_onnx_node(c, "Unsqueeze", 1, name, 2, in, 1, &mid);
	if (err < 0)
		return err;
	in[0] = mid;
	err = npr_onnx_node(c, "Squeeze", 1, name, 2, in, 1, &out);
	if (err < 0)
		return err;
	c->g->vals[out].shape = c->g->vals[v].shape;
	return out;
}

static int add_outputs(struct onnx_ctx *c, const Onnx__GraphProto *gp)
{
	struct npr_graph *g = c->g;
	size_t i, j;
	int err;

	if (!gp->n_output)
		return npr_onnx_err(c, -EINVAL, "the graph has no outputs");
	g->outputs = malloc(sizeof(int) * gp->n_output);
	if (!g->outputs)
		return -ENOMEM;
	for (i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		struct onnx_name *e;
		struct npr_value *v;
		struct npr_shape sh;
		unsigned int type;
		int val, idx;

		c->layer++;
		if (!vi)
			return npr_onnx_err(c, -EINVAL,
					    "malformed ONNX protobuf");
		err = check_name(c, "a graph output", vi->name);
		if (err)
			return err;
		for (j = 0; j < i; j++)
			if (!strcmp(onnx_str(gp->output[j]->name), vi->name))
				return npr_onnx_err(c, -EINVAL,
						    "graph output \"%.200s\" is listed twice",
						    vi->name);
		err = resolve(c, vi->name, &e);
		if (err)
			return err;
		if (e && e->val == NAME_UNSUPP)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "graph output \"%.200s\" is an optional node output that is not supported",
					    vi->name);
		if (!e || e->val < 0)
			return npr_onnx_err(c, -EINVAL,
					    "graph output \"%.200s\" is not produced by any node",
					    vi->name);
		err = npr_onnx_info_type(vi, &type, &sh);
		if (err)
			return npr_onnx_err(c, err,
					    "graph output \"%.200s\": %s",
					    vi->name, err == -EINVAL ? "bad dims" :
					    "only tensors of numeric types are supported");
		val = e->val;
		if (c->out_axis && c->out_axis[i] >= 0) {
			/* one part of a stacked output */
			val = npr_onnx_with_list(c, "Unsqueeze", val,
						 &c->out_axis[i], 1, vi->name);
			if (val < 0)
				return val;
		} else if (c->parent) {
			/* a body's Results are not named: no copy needed */
		} else if (strcmp(onnx_str(g->vals[val].name), vi->name)) {
			/* an alias (Identity) or an input: its own value */
			val = copy_value(c, val, vi->name);
			if (val < 0)
				return val;
			g->vals[val].name = strdup(vi->name);
			if (!g->vals[val].name)
				return -ENOMEM;
		}
		v = &g->vals[val];
		if (type)
			v->type = type;
		if (sh.rank >= 0)
			v->shape = sh;
		if (!v->type && !c->parent)
			return npr_onnx_err(c, -EINVAL,
					    "graph output \"%.200s\" has no known element type",
					    vi->name);
		idx = npr_graph_add_node(g, vi->name, "Result", 1, c->layer);
		if (idx < 0)
			return idx;
		g->nodes[idx].op = npr_op_find("Result", 1);
		err = npr_node_set_inputs(&g->nodes[idx], 1);
		if (err)
			return err;
		g->nodes[idx].in[0] = val;
		g->outputs[g->noutputs++] = idx;
	}
	return 0;
}

/* Translate the current node (c->np, index c->layer). */
static int add_node(struct onnx_ctx *c)
{
	const Onnx__NodeProto *np = c->np;
	const struct onnx_op *op;
	int out[16], i, err;
	size_t k;

	snprintf(c->namebuf, sizeof(c->namebuf), "%.64s_%lld",
		 onnx_str(np->op_type), (long long)c->layer);
	c->name = c->namebuf;
	err = check_name(c, "the node's op", np->op_type);
	if (!err && np->name && *np->name) {
		err = check_name(c, "the node", np->name);
		c->name = err ? c->name : np->name;
	}
	if (err)
		return err;
	if (np->domain && *np->domain && strcmp(np->domain, "ai.onnx"))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "ops of domain \"%.100s\" are not supported",
				    np->domain);
	op = npr_onnx_op_find(np->op_type);
	if (!op)
		return npr_onnx_err(c, -EOPNOTSUPP, "unsupported op %.64s",
				    np->op_type);
	c->op = op;
	err = npr_onnx_check_attrs(c);
	if (err)
		return err;
	if (np->n_input < (size_t)op->nin_min ||
	    (op->nin_max >= 0 && np->n_input > (size_t)op->nin_max) ||
	    np->n_input > ONNX_MAX_PORTS)
		return npr_onnx_err(c, -EINVAL,
				    "has %zu inputs, the op takes %d..%d",
				    np->n_input, op->nin_min, op->nin_max);
	if (!np->n_output || np->n_output > (size_t)op->nout_max)
		return npr_onnx_err(c, -EINVAL,
				    "has %zu outputs, the op gives 1..%d",
				    np->n_output, op->nout_max);
	free(c->vin);
	c->vin = malloc(sizeof(int) * (np->n_input ? np->n_input : 1));
	if (!c->vin)
		return -ENOMEM;
	c->nin = (int)np->n_input;
	for (k = 0; k < np->n_input; k++) {
		const char *in = np->input[k];
		struct onnx_name *e;

		c->vin[k] = -1;
		if (!in || !*in) {
			if (k < (size_t)op->nin_min)
				return npr_onnx_err(c, -EINVAL,
						    "input %zu is required", k);
			continue;	/* an optional input left out */
		}
		err = resolve(c, in, &e);
		if (err)
			return err;
		if (e && e->val == NAME_UNSUPP)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "input %zu \"%.200s\" is an optional output of an earlier node that is not supported",
					    k, in);
		if (!e || e->val < 0)
			return npr_onnx_err(c, -EINVAL,
					    "input %zu \"%.200s\" is not produced by an earlier node, an initializer or a graph input",
					    k, in);
		c->vin[k] = e->val;
	}
	for (i = 0; i < 16; i++)
		out[i] = -1;
	err = op->fn(c, out);
	if (err)
		return err;
	for (k = 0; k < np->n_output; k++) {
		const char *name = np->output[k];

		if (!name || !*name)
			continue;
		err = check_name(c, "an output", name);
		if (err)
			return err;
		if (!k && out[k] < 0)
			return npr_onnx_err(c, -EINVAL, "produced no output");
		if (out[k] < 0) {
			/* fine as long as nothing reads it */
			struct onnx_name *e = name_get(c, name);

			if (!e)
				return -ENOMEM;
			if (e->val != NAME_UNDEF)
				return npr_onnx_err(c, -EINVAL,
						    "tensor \"%.200s\" is defined twice",
						    name);
			e->val = NAME_UNSUPP;
			continue;
		}
		err = define(c, name, out[k]);
		if (err)
			return err;
	}
	return 0;
}

static int find_opset(struct onnx_ctx *c, const Onnx__ModelProto *m)
{
	size_t i;

	c->opset = -1;
	for (i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (o && (!o->domain || !*o->domain ||
			  !strcmp(o->domain, "ai.onnx")))
			c->opset = o->has_version ? o->version : 0;
	}
	if (c->opset < 0)
		return npr_err(-EINVAL, "the model imports no ai.onnx opset");
	if (c->opset < ONNX_OPSET_MIN || c->opset > ONNX_OPSET_MAX)
		return npr_err(-EOPNOTSUPP,
			       "ONNX opset %lld is not supported (only %d..%d are)",
			       (long long)c->opset, ONNX_OPSET_MIN,
			       ONNX_OPSET_MAX);
	return 0;
}

/*
 * The model's graph or a sub-graph: its values, nodes, inputs, outputs.
 * @in: the model's initializers when they are not in @gp, or NULL.
 */
static int build_graph(struct onnx_ctx *c, const Onnx__GraphProto *gp,
		       struct onnx_inits *in)
{
	size_t ninit = in ? in->n : gp->n_initializer;
	struct npr_graph *g = c->g;
	size_t i;
	int err;

	if (gp->n_node > ONNX_MAX_NODES)
		return npr_err(-EFBIG, "more than %d nodes", ONNX_MAX_NODES);
	if (gp->n_input > ONNX_MAX_PORTS || gp->n_output > ONNX_MAX_PORTS)
		return npr_err(-EFBIG, "more than %d graph inputs or outputs",
			       ONNX_MAX_PORTS);
	g->name = strndup(onnx_str(gp->name), ONNX_MAX_NAME);
	if (!g->name)
		return -ENOMEM;
	for (i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		struct onnx_name *e;

		if (!vi || !vi->name || !*vi->name)
			continue;
		e = name_get(c, vi->name);
		if (!e)
			return -ENOMEM;
		e->info = vi;
	}
	/* node i is layer i; initializers, inputs and outputs come after */
	c->layer = (int64_t)gp->n_node - 1;
	err = add_initializers(c, gp, in);
	if (!err)
		err = add_inputs(c, gp);
	if (err)
		return err;
	for (i = 0; i < gp->n_node; i++) {
		c->np = gp->node[i];
		c->layer = (int64_t)i;
		if (!c->np)
			return npr_err(-EINVAL, "malformed ONNX protobuf");
		err = add_node(c);
		if (err)
			return err;
	}
	c->np = NULL;
	c->layer = (int64_t)gp->n_node + ninit + gp->n_input - 1;
	err = add_outputs(c, gp);
	if (err)
		return err;
	for (i = 0; i < (size_t)g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				return err;
		}
	}
	return npr_graph_sort(g);
}

/**
 * npr_onnx_build() - build the graph of a model
 * @c: the context, c->g a new graph.
 * @m: the model.
 * @gp: its graph (the model's own when @in is NULL).
 * @in: the graph's initializers when they were cut out of @gp, or NULL.
 *
 * Return: 0 or -errno with a message naming the node at fault.
 */
int npr_onnx_build(struct onnx_ctx *c, const Onnx__ModelProto *m,
		   const Onnx__GraphProto *gp, struct onnx_inits *in)
{
	int err;

	err = find_opset(c, m);
	if (err)
		return err;
	if (!gp)
		return npr_err(-EINVAL, "the ONNX model has no graph");
	return build_graph(c, gp, in);
}

/**
 * npr_onnx_body_read() - read a GRAPH attribute of the current node as a body
 * @c: the context, translating an If, Loop or Scan node.
 * @attr: the attribute ("then_branch", "body", ...).
 * @in_axis: per GraphProto input, an axis to squeeze out of its Parameter
 *           (the body sees one slice of a sliced input), or -1.
 * @nin_axis: entries in @in_axis (0 with @in_axis NULL).
 * @out_axis: per GraphProto output, an axis to insert before its Result
 *            (the body gives one part of a stacked output), or -1.
 * @nout_axis: entries in @out_axis.
 * @b: the body; release it with npr_onnx_body_fini() whatever the outcome.
 *
 * The sub-graph is read like the model, in a context of its own whose
 * parent is @c: a name it does not define is looked up in the graphs
 * around it.  An outer constant is copied into the body; any other outer
 * value becomes a body Parameter after the GraphProto's inputs, listed in
 * b->caps for the translator to feed.  Messages from inside the body are
 * prefixed with the node and @attr.
 *
 * Return: 0, or -errno with a message.
 */
int npr_onnx_body_read(struct onnx_ctx *c, const char *attr,
		       const int64_t *in_axis, int nin_axis,
		       const int64_t *out_axis, int nout_axis,
		       struct onnx_body *b)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, attr);
	struct onnx_ctx sub = {
		.base_dir = c->base_dir, .opset = c->opset, .parent = c,
		.depth = c->depth + 1, .in_axis = in_axis,
		.out_axis = out_axis,
	};
	const Onnx__GraphProto *gp;
	char msg[768];
	int err;

	memset(b, 0, sizeof(*b));
	if (!a || !a->g)
		return npr_onnx_err(c, -EINVAL,
				    "attribute %s (a graph) is missing",
				    attr);
	gp = a->g;
	if (sub.depth > NPR_MAX_BODY_DEPTH)
		return npr_onnx_err(c, -EFBIG,
				    "sub-graphs are nested more than %d deep",
				    NPR_MAX_BODY_DEPTH);
	if ((in_axis && gp->n_input != (size_t)nin_axis) ||
	    (out_axis && gp->n_output != (size_t)nout_axis))
		return npr_onnx_err(c, -EINVAL,
				    "%s has %zu inputs and %zu outputs, %d and %d expected",
				    attr, gp->n_input, gp->n_output, nin_axis,
				    nout_axis);
	sub.g = b->g = npr_graph_new();
	if (!sub.g)
		return -ENOMEM;
	err = build_graph(&sub, gp, NULL);
	b->caps = sub.caps;
	b->ncaps = sub.ncaps;
	b->nin = (int)gp->n_input;
	b->nout = (int)gp->n_output;
	free(sub.vin);
	free(sub.names);
	if (err && err != -ENOMEM) {
		snprintf(msg, sizeof(msg), "%s", npr_last_error());
		err = npr_onnx_err(c, err, "%s: %s", attr, msg);
	}
	return err;
}

/**
 * npr_onnx_sub_begin() - start a body built by a translator, not read
 * @c: the context, translating a node.
 * @sub: the body's context, set up here: a new graph whose parent is @c,
 *       translating the same node (its attributes, name and layer).
 *
 * The translator adds Parameters with npr_onnx_sub_param(), nodes with the
 * usual helpers on @sub (sub-graph attributes read there see @c's values
 * through @sub, which captures them), Results with npr_onnx_sub_result(), and
 * ends with npr_onnx_sub_end().
 *
 * Return: 0, -EFBIG (nested too deep) or -ENOMEM.
 */
int npr_onnx_sub_begin(struct onnx_ctx *c, struct onnx_ctx *sub)
{
	memset(sub, 0, sizeof(*sub));
	if (c->depth + 1 > NPR_MAX_BODY_DEPTH)
		return npr_onnx_err(c, -EFBIG,
				    "sub-graphs are nested more than %d deep",
				    NPR_MAX_BODY_DEPTH);
	sub->base_dir = c->base_dir;
	sub->opset = c->opset;
	sub->parent = c;
	sub->depth = c->depth + 1;
	sub->np = c->np;
	sub->op = c->op;
	sub->layer = c->layer;
	snprintf(sub->namebuf, sizeof(sub->namebuf), "%s", c->namebuf);
	sub->name = c->name == c->namebuf ? sub->namebuf : c->name;
	sub->g = npr_graph_new();
	if (!sub->g)
		return -ENOMEM;
	sub->g->inputs = malloc(sizeof(int));
	sub->g->outputs = malloc(sizeof(int));
	return sub->g->inputs && sub->g->outputs ? 0 : -ENOMEM;
}

/**
 * npr_onnx_sub_param() - a body Parameter of the type and load-time shape of
 * a value
 * @sub: the body's context.
 * @type: element type (0 if not known).
 * @shape: load-time shape.
 * @name: its name.
 *
 * Return: the Parameter's value, or -ENOMEM.
 */
int npr_onnx_sub_param(struct onnx_ctx *sub, unsigned int type,
		       const struct npr_shape *shape, const char *name)
{
	struct npr_graph *g = sub->g;
	int idx, err, *p;

	idx = npr_graph_add_node(g, name, "Parameter", 1, sub->layer);
	if (idx < 0)
		return idx;
	g->nodes[idx].op = npr_op_find("Parameter", 1);
	err = npr_node_set_outputs(g, idx, 1);
	if (!err && type)
		err = npr_onnx_set_attr(sub, idx, "element_type", "%s",
					npr_elem_name(type));
	if (err)
		return err;
	g->vals[g->nodes[idx].out[0]].type = type;
	g->vals[g->nodes[idx].out[0]].shape = *shape;
	g->vals[g->nodes[idx].out[0]].decl.rank = -1;
	p = realloc(g->inputs, sizeof(int) * (g->ninputs + 1));
	if (!p)
		return -ENOMEM;
	g->inputs = p;
	g->inputs[g->ninputs++] = idx;
	return g->nodes[idx].out[0];
}

/**
 * npr_onnx_sub_result() - a body Result of value @v
 * @sub: the body's context.
 * @v: the value.
 * @name: the Result's name.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_onnx_sub_result(struct onnx_ctx *sub, int v, const char *name)
{
	struct npr_graph *g = sub->g;
	int idx, err, *p;

	idx = npr_graph_add_node(g, name, "Result", 1, sub->layer);
	if (idx < 0)
		return idx;
	g->nodes[idx].op = npr_op_find("Result", 1);
	err = npr_node_set_inputs(&g->nodes[idx], 1);
	if (err)
		return err;
	g->nodes[idx].in[0] = v;
	p = realloc(g->outputs, sizeof(int) * (g->noutputs + 1));
	if (!p)
		return -ENOMEM;
	g->outputs = p;
	g->outputs[g->noutputs++] = idx;
	return 0;
}

/**
 * npr_onnx_sub_end() - finish a body started by npr_onnx_sub_begin()
 * @sub: the body's context; released here.
 * @err: 0, or the error the building ended with.
 * @b: the body (graph, captured values); release with npr_onnx_body_fini().
 *
 * Return: @err, or the error of parsing and sorting the body.
 */
int npr_onnx_sub_end(struct onnx_ctx *sub, int err, struct onnx_body *b)
{
	struct npr_graph *g = sub->g;
	int i;

	memset(b, 0, sizeof(*b));
	if (!g) {
		free(sub->vin);
		free(sub->names);
		return err ? err : -ENOMEM;
	}
	for (i = 0; !err && i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse)
			err = n->op->parse(g, n);
	}
	if (!err)
		err = npr_graph_sort(g);
	b->g = g;
	b->caps = sub->caps;
	b->ncaps = sub->ncaps;
	b->nin = g->ninputs - sub->ncaps;
	b->nout = g->noutputs;
	free(sub->vin);
	free(sub->names);
	memset(sub, 0, sizeof(*sub));
	return err;
}

/**
 * npr_onnx_body_fini() - free what npr_onnx_body_read() left in @b
 * @b: the body; its graph too, unless a node took it over (b->g NULL).
 */
void npr_onnx_body_fini(struct onnx_body *b)
{
	npr_graph_free(b->g);
	free(b->caps);
	memset(b, 0, sizeof(*b));
}

/* ---- translator lookup ------------------------------------------------ */

static const struct onnx_op *const groups[] = {
	npr_onnx_ops_eltwise, npr_onnx_ops_nn, npr_onnx_ops_shape,
	npr_onnx_ops_index, npr_onnx_ops_loss, npr_onnx_ops_math,
	npr_onnx_ops_control, npr_onnx_ops_rnn, npr_onnx_ops_misc,
};

/**
 * npr_onnx_op_find() - the translator of an ONNX op type
 * @type: ONNX op_type.
 *
 * Return: the table entry, or NULL when the op is not supported.
 */
const struct onnx_op *npr_onnx_op_find(const char *type)
{
	const struct onnx_op *op;
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		for (op = groups[i]; op->type; op++)
			if (!strcmp(op->type, type))
				return op;
	return NULL;
}
