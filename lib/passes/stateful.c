// SPDX-License-Identifier: MIT
/*
 * Variables of stateful models, at compile time.
 *
 * npr_pass_state() gives each variable (a ReadValue and its Assign, joined
 * by variable_id) a hidden input and output of the compiled graph:
 *
 *   ReadValue(init)  ->  Select(valid, state, init)
 *   ReadValue()      ->  state
 *   Assign(x)        ->  Result(x)
 *
 * where "state" is a hidden Parameter holding the variable and "valid" a
 * boolean scalar Parameter that is false until the first Assign and after
 * a reset.  The hidden ports come after the model's own, in g->inputs and
 * g->outputs; g->vars says which belongs to which variable.  Backends thus
 * run an ordinary graph, and a device that knows state arguments (the NPU
 * compiler's vpux_ie_read_value_* / vpux_ie_assign_*) sees one input and
 * one output per variable.  The request layer (lib/request.c) keeps the
 * values: after each successful inference it copies every Assign output
 * into its state input and sets valid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ops/shape.h"

static int grow_ints(int **a, int n)
{
	int *p = realloc(*a, sizeof(int) * (n + 1));

	if (!p)
		return -ENOMEM;
	*a = p;
	return 0;
}

/* A hidden Parameter of @type and @shape; returns its value index. */
static int add_param(struct npr_graph *g, const char *name,
		     unsigned int type, const struct npr_shape *shape)
{
	char buf[32 * NPR_MAX_RANK];
	int node, err, i;
	size_t len = 0;

	node = npr_graph_add_node(g, name, "Parameter", 1, -1);
	if (node < 0)
		return node;
	g->nodes[node].op = npr_op_find("Parameter", 0);
	err = npr_node_set_outputs(g, node, 1);
	if (err)
		return err;
	buf[0] = 0;
	for (i = 0; i < shape->rank; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%lld",
				i ? "," : "", (long long)shape->d[i]);
	err = npr_node_add_attr(&g->nodes[node], "shape", buf);
	if (!err)
		err = npr_node_add_attr(&g->nodes[node], "element_type",
					npr_elem_name(type));
	if (!err)
		err = grow_ints(&g->inputs, g->ninputs);
	if (err)
		return err;
	g->inputs[g->ninputs++] = node;
	g->vals[g->nodes[node].out[0]].type = type;
	g->vals[g->nodes[node].out[0]].shape = *shape;
	g->vals[g->nodes[node].out[0]].decl = *shape;
	return g->nodes[node].out[0];
}

static int add_result(struct npr_graph *g, const char *name, int value)
{
	int node, err;

	node = npr_graph_add_node(g, name, "Result", 1, -1);
	if (node < 0)
		return node;
	g->nodes[node].op = npr_op_find("Result", 0);
	err = npr_node_set_inputs(&g->nodes[node], 1);
	if (!err)
		err = grow_ints(&g->outputs, g->noutputs);
	if (err)
		return err;
	g->nodes[node].in[0] = value;
	g->outputs[g->noutputs++] = node;
	return 0;
}

/* Every input that reads @from reads @to instead. */
static void redirect(struct npr_graph *g, int from, int to)
{
	int i, j;

	for (i = 0; i < g->nnodes; i++)
		for (j = 0; j < g->nodes[i].nin; j++)
			if (g->nodes[i].in[j] == from)
				g->nodes[i].in[j] = to;
}

static int find_var(const struct npr_graph *g, const char *id)
{
	int i;

	for (i = 0; i < g->nvars; i++)
		if (!strcmp(g->vars[i].id, id))
			return i;
	return -1;
}

/* ReadValue @ri becomes Select(valid, state, init) or goes away. */
static int lower_read(struct npr_graph *g, int ri)
{
	struct npr_node *n = &g->nodes[ri];
	const char *id = npr_attr(n, "variable_id");
	struct npr_variable *v;
	struct npr_shape scalar = { .rank = 0 };
	char name[300];
	int k, val, init, err, out = n->out[0];

	if (find_var(g, id) >= 0)
		return npr_node_err(n, -EINVAL, "a second ReadValue of variable \"%s\"",
				    id);
	v = realloc(g->vars, sizeof(*v) * (g->nvars + 1));
	if (!v)
		return -ENOMEM;
	g->vars = v;
	v = &g->vars[g->nvars];
	memset(v, 0, sizeof(*v));
	v->id = strdup(id);
	if (!v->id)
		return -ENOMEM;
	g->nvars++;
	v->type = g->vals[out].type;
	v->shape = g->vals[out].shape;
	v->valid_in = -1;
	v->state_out = -1;
	v->read_node = ri;
	v->append_axis = -1;

	snprintf(name, sizeof(name), "ReadValue:%s", id);
	val = add_param(g, name, v->type, &v->shape);
	if (val < 0)
		return val;
	v->state_in = g->ninputs - 1;
	n = &g->nodes[ri];		/* nodes may have moved */
	if (!n->nin) {
		redirect(g, out, val);
		n->dead = true;
		return 0;
	}
	init = n->in[0];
	snprintf(name, sizeof(name), "ReadValue:%s:valid", id);
	k = add_param(g, name, NPR_ELEM_BOOLEAN, &scalar);
	if (k < 0)
		return k;
	v = &g->vars[g->nvars - 1];
	v->valid_in = g->ninputs - 1;
	n = &g->nodes[ri];
	/* the node itself becomes the Select, its output unchanged */
	free(n->type);
	n->type = strdup("Select");
	if (!n->type)
		return -ENOMEM;
	n->op = npr_op_find("Select", 1);
	n->version = 1;
	err = npr_node_set_inputs(n, 3);
	if (err)
		return err;
	n->in[0] = k;
	n->in[1] = val;
	n->in[2] = init;
	err = n->op->parse(g, n);
	if (!err)
		err = n->op->infer(g, n);
	return err;
}

/*
 * Variable @k has a dynamic dimension: its Assign @n must append to it,
 * Assign(Concat(ReadValue, x)) along that dimension.  Returns x's value
 * (what the hidden Result keeps) or -errno.
 */
static int append_of(struct npr_graph *g, const struct npr_node *n, int k)
{
	struct npr_variable *v = &g->vars[k];
	int state = g->nodes[g->inputs[v->state_in]].out[0];
	const struct npr_value *x = npr_in(g, n, 0);
	const struct npr_node *c = x->producer >= 0 ?
				   &g->nodes[x->producer] : NULL;
	const struct npr_concat_params *cp;
	char b[128];
	int i, axis = -1;

	for (i = 0; i < v->shape.rank; i++) {
		if (v->shape.d[i] >= 0)
			continue;
		if (axis >= 0)
			return npr_node_err(n, -EINVAL, "variable \"%s\" of shape %s has more than one dynamic dimension; fix the others (MAKE_STATEFUL shapes)",
					    v->id, npr_shape_str(&v->shape, b,
								 sizeof(b)));
		axis = i;
	}
	if (axis < 0)
		return n->in[0];
	cp = c && !strcmp(c->type, "Concat") ? c->params : NULL;
	/* the Concat's inputs are dynamic: axis is not normalized yet */
	if (!cp || c->nin != 2 || c->in[0] != state ||
	    (cp->axis < 0 ? cp->axis + v->shape.rank : cp->axis) != axis)
		return npr_node_err(n, -EINVAL, "variable \"%s\" has the dynamic shape %s: its Assign must append to it, Concat(ReadValue, new) along axis %d",
				    v->id, npr_shape_str(&v->shape, b,
							 sizeof(b)), axis);
	v->append_axis = axis;
	return c->in[1];
}

/**
 * npr_pass_state() - turn variables into hidden ports
 * @g: a compiled graph: shapes inferred, constants folded, before DCE.
 *
 * A variable with a dynamic dimension (MAKE_STATEFUL of a KV cache) must
 * be appended to along it by its Assign; its hidden Result is then the
 * appended part only (struct npr_variable @append_axis).
 *
 * Return: 0, or -errno naming the layer: a variable read twice, an Assign
 * without its ReadValue, or of another type or shape, a dynamic variable
 * not appended to.
 */
int npr_pass_state(struct npr_graph *g)
{
	int i, k, err, keep, nnodes = g->nnodes, nin = g->ninputs;
	char name[300], b1[128], b2[128];

	for (i = 0; i < nnodes; i++) {
		if (g->nodes[i].dead || strcmp(g->nodes[i].type, "ReadValue"))
			continue;
		err = lower_read(g, i);
		if (err)
			return err;
	}
	for (i = 0; i < nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		const char *id;
		struct npr_value *x;

		if (n->dead || strcmp(n->type, "Assign"))
			continue;
		id = npr_attr(n, "variable_id");
		k = find_var(g, id);
		if (k < 0)
			return npr_node_err(n, -EINVAL, "Assign of variable \"%s\", which no ReadValue reads",
					    id);
		if (g->vars[k].state_out >= 0)
			return npr_node_err(n, -EINVAL, "a second Assign of variable \"%s\"",
					    id);
		x = npr_in(g, n, 0);
		/* a variable that grows: the Concat's shape is dynamic */
		if (x->type != g->vars[k].type ||
		    (npr_shape_static(&g->vars[k].shape) &&
		     !npr_shape_eq(&x->shape, &g->vars[k].shape)))
			return npr_node_err(n, -EINVAL, "assigns %s %s to variable \"%s\" of %s %s",
					    npr_elem_name(x->type),
					    npr_shape_str(&x->shape, b1, sizeof(b1)),
					    id, npr_elem_name(g->vars[k].type),
					    npr_shape_str(&g->vars[k].shape, b2, sizeof(b2)));
		keep = append_of(g, n, k);
		if (keep < 0)
			return keep;
		if (n->nout)
			redirect(g, n->out[0], n->in[0]);
		n->dead = true;
		snprintf(name, sizeof(name), "Assign:%s", id);
		err = add_result(g, name, keep);
		if (err)
			return err;
		g->vars[k].state_out = g->noutputs - 1;
	}
	g->nstate_in = g->ninputs - nin;
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].state_out >= 0)
			g->nstate_out++;
	return 0;
}

/* ---- MakeStateful -------------------------------------------------------- */

/* The graph input (Parameter) or output (Result) called @name. */
static int find_port(const struct npr_graph *g, const char *name, bool out)
{
	int i, n = out ? g->noutputs : g->ninputs;

	for (i = 0; i < n; i++) {
		int node = out ? g->outputs[i] : g->inputs[i];
		const struct npr_node *nd = &g->nodes[node];
		const struct npr_value *v = out ? &g->vals[nd->in[0]] :
					    &g->vals[nd->out[0]];

		if ((v->name && !strcmp(v->name, name)) ||
		    !strcmp(nd->name, name) ||
		    (out && !strcmp(g->nodes[v->producer].name, name)))
			return i;
	}
	return -1;
}

static int drop_index(int *a, int *n, int i)
{
	memmove(a + i, a + i + 1, sizeof(int) * (*n - i - 1));
	(*n)--;
	return 0;
}

/* Replace node @k's type and attributes. */
static int retype(struct npr_node *n, const char *type, unsigned int version)
{
	char *t = strdup(type);
	int i;

	if (!t)
		return -ENOMEM;
	free(n->type);
	n->type = t;
	n->version = version;
	n->op = npr_op_find(type, version);
	for (i = 0; i < n->nattr; i++) {
		free(n->attr[i].key);
		free(n->attr[i].val);
	}
	n->nattr = 0;
	free(n->params);
	n->params = NULL;
	return n->op ? 0 : -ENOENT;
}

/* Whether @s fits @decl: the same rank and dims where @decl has them. */
static bool shape_fits(const struct npr_shape *s, const struct npr_shape *decl)
{
	int i;

	if (decl->rank < 0)
		return true;
	if (s->rank != decl->rank)
		return false;
	for (i = 0; i < s->rank; i++)
		if (decl->d[i] >= 0 && decl->d[i] != s->d[i])
			return false;
	return true;
}

/**
 * npr_make_stateful() - explicit state ports to variables
 * @g: a loaded model, changed in place when every pair is valid.
 * @names: 2 * @count names: input, output, input, output...
 * @count: pairs.
 * @shapes: NULL, or per input of @g (g->ninputs entries, rank -1 for
 *          none) the shape the caller fixes it to, as for compile: a
 *          pair's input takes it (it must fit the declared shape), so
 *          that a model declaring a symbolic dimension (an ONNX batch)
 *          gets variables of static shape.  Shapes of other inputs are
 *          only checked against the declared ones; compile takes them.
 * @dynamic: keep dynamic dimensions (-1, given or declared) of the state
 *           inputs, but a dynamic first one (the batch), which becomes 1
 *           unless @shapes gives it: a KV cache that grows along one of
 *           them (compile then checks that the Assign appends along it).
 *
 * The state input's shape (given or declared) must be static unless
 * @dynamic; the output's, when only partly known at load time, must fit
 * it, and compile checks the Assign's inferred shape against the
 * variable.
 *
 * Return: 0, or -ENOENT (no such input or output), -EINVAL (types or
 * shapes differ, a port used twice, a dynamic state shape not fixed by
 * @shapes), -ENOMEM.
 */
int npr_make_stateful(struct npr_graph *g, const char *const *names,
		      int count, const struct npr_shape *shapes, bool dynamic)
{
	char b1[128], b2[128];
	struct npr_shape *fix;
	int *pi, *po, i, j, err = 0;

	pi = calloc(count, sizeof(int));
	po = calloc(count, sizeof(int));
	fix = calloc(count, sizeof(*fix));
	if (!pi || !po || !fix) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; shapes && i < g->ninputs; i++) {
		const struct npr_node *nd = &g->nodes[g->inputs[i]];
		const struct npr_value *v = &g->vals[nd->out[0]];

		if (shapes[i].rank >= 0 && !shape_fits(&shapes[i], &v->shape)) {
			err = npr_err(-EINVAL, "MakeStateful: shape %s of input %d (%.200s) does not fit its declared %s",
				      npr_shape_str(&shapes[i], b1, sizeof(b1)),
				      i, nd->name,
				      npr_shape_str(&v->shape, b2, sizeof(b2)));
			goto out;
		}
	}
	/* check everything first: nothing changes on an error */
	for (i = 0; i < count; i++) {
		const struct npr_value *vi, *vo;

		pi[i] = find_port(g, names[2 * i], false);
		po[i] = find_port(g, names[2 * i + 1], true);
		if (pi[i] < 0 || po[i] < 0) {
			err = npr_err(-ENOENT, "MakeStateful: the model has no %s \"%.200s\"",
				      pi[i] < 0 ? "input" : "output",
				      names[2 * i + (pi[i] >= 0)]);
			goto out;
		}
		for (j = 0; j < i; j++)
			if (pi[j] == pi[i] || po[j] == po[i]) {
				err = npr_err(-EINVAL, "MakeStateful: pair %d reuses a port of pair %d",
					      i, j);
				goto out;
			}
		vi = &g->vals[g->nodes[g->inputs[pi[i]]].out[0]];
		vo = &g->vals[g->nodes[g->outputs[po[i]]].in[0]];
		fix[i] = shapes && shapes[pi[i]].rank >= 0 ? shapes[pi[i]] :
			 vi->shape;
		if (dynamic && fix[i].rank > 0 && fix[i].d[0] < 0)
			fix[i].d[0] = 1;
		if (!dynamic && !npr_shape_static(&fix[i])) {
			err = npr_err(-EINVAL, "MakeStateful: input %s has the dynamic shape %s; fix it with the shapes of struct npr_make_stateful",
				      names[2 * i],
				      npr_shape_str(&fix[i], b1, sizeof(b1)));
			goto out;
		}
		if (vi->type != vo->type || !shape_fits(&fix[i], &vo->shape)) {
			err = npr_err(-EINVAL, "MakeStateful: %s is %s %s but %s is %s %s; they must be equal",
				      names[2 * i], npr_elem_name(vi->type),
				      npr_shape_str(&fix[i], b1, sizeof(b1)),
				      names[2 * i + 1], npr_elem_name(vo->type),
				      npr_shape_str(&vo->shape, b2, sizeof(b2)));
			goto out;
		}
	}
	for (i = 0; i < count && !err; i++) {
		struct npr_node *rv = &g->nodes[g->inputs[pi[i]]];
		struct npr_node *as = &g->nodes[g->outputs[po[i]]];
		struct npr_value *v = &g->vals[rv->out[0]];
		char shape[32 * NPR_MAX_RANK];
		size_t len = 0;
		char *id = strdup(names[2 * i]);

		if (!id) {
			err = -ENOMEM;
			break;
		}
		v->shape = fix[i];
		if (v->decl.rank >= 0)
			v->decl = fix[i];
		shape[0] = 0;
		for (j = 0; j < v->shape.rank; j++)
			len += snprintf(shape + len, sizeof(shape) - len,
					"%s%lld", j ? "," : "",
					(long long)v->shape.d[j]);
		err = retype(rv, "ReadValue", 6);
		if (!err)
			err = npr_node_add_attr(rv, "variable_id", id);
		if (!err)
			err = npr_node_add_attr(rv, "variable_type",
						npr_elem_name(v->type));
		if (!err)
			err = npr_node_add_attr(rv, "variable_shape", shape);
		if (!err)
			err = retype(as, "Assign", 6);
		if (!err)
			err = npr_node_add_attr(as, "variable_id", id);
		free(id);
	}
	if (err)
		goto out;
	/* drop the ports, highest index first so the others stay valid */
	for (i = g->ninputs - 1; i >= 0; i--)
		for (j = 0; j < count; j++)
			if (pi[j] == i)
				drop_index(g->inputs, &g->ninputs, i);
	for (i = g->noutputs - 1; i >= 0; i--)
		for (j = 0; j < count; j++)
			if (po[j] == i)
				drop_index(g->outputs, &g->noutputs, i);
out:
	free(fix);
	free(pi);
	free(po);
	return err;
}

/*
 * @name matches @pat, whose one '*' stands for a non-empty string: that
 * string's start and length in @name.
 */
static bool glob1(const char *name, const char *pat, size_t *at, size_t *len)
{
	const char *star = strchr(pat, '*');
	size_t pre = star - pat, post = strlen(star + 1), n = strlen(name);

	if (n <= pre + post || strncmp(name, pat, pre) ||
	    strcmp(name + n - post, star + 1))
		return false;
	*at = pre;
	*len = n - pre - post;
	return true;
}

static const char *port_str(const struct npr_graph *g, int node, bool out)
{
	const struct npr_node *nd = &g->nodes[node];
	const struct npr_value *v = out ? &g->vals[nd->in[0]] :
				    &g->vals[nd->out[0]];

	return v->name ? v->name : nd->name;
}

/**
 * npr_make_stateful_pattern() - pairs found by name, then MakeStateful
 * @g: a loaded model, changed in place when every pair is valid.
 * @in_pat: the state inputs' names, one '*' for the part that varies
 *          ("past_key_values.*").
 * @out_pat: their outputs' names, the same part in place of the '*'
 *           ("present.*").
 * @shapes: as npr_make_stateful() takes them.
 *
 * Every input matching @in_pat is paired with the output @out_pat names
 * for it; the variables keep dynamic dimensions (npr_make_stateful()
 * with @dynamic), as OpenVINO's stateful language models keep their KV
 * cache.
 *
 * Return: 0, -EINVAL (a pattern without exactly one '*'), -ENOENT (no
 * input matches, or one has no output), or npr_make_stateful()'s errors.
 */
int npr_make_stateful_pattern(struct npr_graph *g, const char *in_pat,
			      const char *out_pat,
			      const struct npr_shape *shapes)
{
	const char **names;
	char **outs;
	int i, j, count = 0, err = 0;
	size_t at, len;

	for (i = 0; i < 2; i++) {
		const char *p = i ? out_pat : in_pat, *star = strchr(p, '*');

		if (!star || strchr(star + 1, '*'))
			return npr_err(-EINVAL, "MakeStateful: the pattern \"%.200s\" needs exactly one '*'",
				       p);
	}
	names = calloc(2 * g->ninputs + 1, sizeof(*names));
	outs = calloc(g->ninputs + 1, sizeof(*outs));
	if (!names || !outs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->ninputs && !err; i++) {
		const char *in = port_str(g, g->inputs[i], false);
		const char *star = strchr(out_pat, '*');
		size_t pre = star - out_pat;

		if (!glob1(in, in_pat, &at, &len))
			continue;
		outs[count] = malloc(strlen(out_pat) + len);
		if (!outs[count]) {
			err = -ENOMEM;
			break;
		}
		snprintf(outs[count], strlen(out_pat) + len, "%.*s%.*s%s",
			 (int)pre, out_pat, (int)len, in + at, star + 1);
		for (j = 0; j < g->noutputs; j++)
			if (!strcmp(port_str(g, g->outputs[j], true),
				    outs[count]))
				break;
		if (j == g->noutputs)
			err = npr_err(-ENOENT, "MakeStateful: input %.200s has no output %.200s",
				      in, outs[count]);
		names[2 * count] = in;
		names[2 * count + 1] = outs[count];
		count++;
	}
	if (!err && !count)
		err = npr_err(-ENOENT, "MakeStateful: no input matches \"%.200s\"",
			      in_pat);
	if (!err)
		err = npr_make_stateful(g, names, count, shapes, true);
out:
	for (i = 0; outs && i < count; i++)
		free(outs[i]);
	free(outs);
	free(names);
	return err;
}
