// SPDX-License-Identifier: MIT
/*
 * The KV-window pass: a stateful decoder for a device that compiles only
 * static shapes (the NPU), as OpenVINO's NPU LLM pipeline compiles one
 * twice, a prefill graph and a one-token generate graph.
 *
 * It takes a model graph (before compiling) whose variables grow: each an
 * Assign(Concat(ReadValue, new)) along the variable's one dynamic axis.
 * With @tokens new positions per inference and a window of @capacity
 * positions per variable, it rewrites, for any decoder:
 *
 *  - each such variable: its shape gets @capacity along that axis, and
 *    its Assign writes the new positions into the window at the past
 *    length instead of appending them:
 *      rel = [0 .. capacity) - len,  idx = clamp(rel, 0, tokens - 1)
 *      Assign(Select(rel == idx, Gather(new, idx, axis), ReadValue));
 *    the Concat itself stays for the attention (capacity + tokens keys);
 *  - a new input NPR_KV_LENGTH_INPUT, i64 [1]: how many window positions
 *    hold the past (the real length, which no static shape says);
 *  - every Range whose start reads the shape of a variable (positions
 *    counted from the past length: learned positions, rotary tables) is
 *    shifted by len - capacity, so positions come from the real length;
 *  - every MatMul whose second input is a variable's Concat seen through
 *    Transpose, Reshape, Unsqueeze, Squeeze, Broadcast, Convert and
 *    scaling, with the Concat's axis as its output's last axis (the
 *    attention scores of queries against keys) gets an additive mask on
 *    that axis: -inf on the window positions at or past the length, 0 on
 *    the past and on the new positions, whose causal mask the model has.
 *
 * The prefill graph is @tokens = @capacity = the longest prompt with the
 * length 0 (the prompt padded on the right: causal attention keeps the
 * pads out of every real position), the generate graph one token with a
 * window of the longest context.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/kvwindow.h"

struct kvw {
	struct npr_graph *g;
	int64_t tokens, capacity;
	int len;	/* value of the length input */
	int cond;	/* value: rel == idx, [capacity] boolean */
	int idx;	/* value: idx, [capacity] i64 */
	int mask;	/* value: the f32 mask, [capacity + tokens], or -1 */
	int first;	/* first node the pass added */
	int nvals0;	/* values before it */
	int seq;	/* names */
};

static int add(struct kvw *w, const char *type, unsigned int version,
	       int nin, const int *in)
{
	struct npr_graph *g = w->g;
	char name[64];
	int ni, err;

	snprintf(name, sizeof(name), "kv_window/%d/%s", w->seq++, type);
	ni = npr_graph_add_node(g, name, type, version, -1);
	if (ni < 0)
		return ni;
	g->nodes[ni].op = npr_op_find(type, version);
	if (!g->nodes[ni].op)
		return npr_err(-EOPNOTSUPP, "kv window: no op %s-%u", type,
			       version);
	err = npr_node_wire(g, ni, nin, in);
	if (err)
		return err;
	if (!strcmp(type, "Select") || !strcmp(type, "Add") ||
	    !strcmp(type, "Subtract") || !strcmp(type, "Minimum") ||
	    !strcmp(type, "Maximum") || !strcmp(type, "Equal") ||
	    !strcmp(type, "Less"))
		err = npr_node_add_attr(&g->nodes[ni], "auto_broadcast",
					"numpy");
	return err ? err : g->nodes[ni].out[0];
}

static int op2(struct kvw *w, const char *type, int a, int b)
{
	int in[2] = { a, b };

	return add(w, type, 1, 2, in);
}

/* A Const of @n elements of @type (@data copied), rank 1 or 0 (@n 0). */
static int cnst(struct kvw *w, unsigned int type, const void *data,
		int64_t n)
{
	size_t bytes = npr_tensor_bytes(type, n ? n : 1);
	void *p = malloc(bytes);
	struct npr_value *v;
	int val;

	if (!p)
		return -ENOMEM;
	memcpy(p, data, bytes);
	val = add(w, "Const", 1, 0, NULL);
	if (val < 0) {
		free(p);
		return val;
	}
	v = &w->g->vals[val];
	v->type = type;
	v->shape.rank = n ? 1 : 0;
	v->shape.d[0] = n;
	v->owned = p;
	v->data = p;
	v->nbytes = bytes;
	return val;
}

static int cnst_i64(struct kvw *w, int64_t x)
{
	return cnst(w, NPR_ELEM_I64, &x, 1);
}

/* Every reader of value @from but the pass's own nodes reads @to. */
static void redirect(struct kvw *w, int from, int to)
{
	struct npr_graph *g = w->g;
	int i, j;

	for (i = 0; i < w->first; i++)
		for (j = 0; j < g->nodes[i].nin; j++)
			if (g->nodes[i].in[j] == from)
				g->nodes[i].in[j] = to;
}

static int set_attr(struct npr_graph *g, struct npr_node *n, const char *key,
		    const char *val)
{
	int k;

	for (k = 0; k < n->nattr; k++) {
		char *s;

		if (strcmp(n->attr[k].key, key))
			continue;
		s = strdup(val);
		if (!s)
			return -ENOMEM;
		npr_graph_free_str(g, n->attr[k].val);
		n->attr[k].val = s;
		return 0;
	}
	return npr_node_add_attr(n, key, val);
}

static int add_length_input(struct kvw *w)
{
	struct npr_graph *g = w->g;
	struct npr_value *v;
	int node, err, *in;

	node = npr_graph_add_node(g, NPR_KV_LENGTH_INPUT, "Parameter", 1, -1);
	if (node < 0)
		return node;
	g->nodes[node].op = npr_op_find("Parameter", 1);
	err = npr_node_set_outputs(g, node, 1);
	if (!err)
		err = npr_node_add_attr(&g->nodes[node], "shape", "1");
	if (!err)
		err = npr_node_add_attr(&g->nodes[node], "element_type",
					"i64");
	if (err)
		return err;
	in = realloc(g->inputs, sizeof(int) * (g->ninputs + 1));
	if (!in)
		return -ENOMEM;
	g->inputs = in;
	g->inputs[g->ninputs++] = node;
	v = &g->vals[g->nodes[node].out[0]];
	v->type = NPR_ELEM_I64;
	v->shape.rank = 1;
	v->shape.d[0] = 1;
	v->decl = v->shape;
	v->name = strdup(NPR_KV_LENGTH_INPUT);
	if (!v->name)
		return -ENOMEM;
	w->len = g->nodes[node].out[0];
	return 0;
}

/* rel, idx and rel == idx over the window, built once */
static int window_index(struct kvw *w)
{
	int64_t *j = malloc(sizeof(int64_t) * w->capacity), i;
	int jc, rel, lo, hi, t;

	if (!j)
		return -ENOMEM;
	for (i = 0; i < w->capacity; i++)
		j[i] = i;
	jc = cnst(w, NPR_ELEM_I64, j, w->capacity);
	free(j);
	if (jc < 0)
		return jc;
	rel = op2(w, "Subtract", jc, w->len);
	hi = rel < 0 ? rel : cnst_i64(w, w->tokens - 1);
	lo = hi < 0 ? hi : cnst_i64(w, 0);
	t = lo < 0 ? lo : op2(w, "Minimum", rel, hi);
	w->idx = t < 0 ? t : op2(w, "Maximum", t, lo);
	w->cond = w->idx < 0 ? w->idx : op2(w, "Equal", rel, w->idx);
	return w->cond < 0 ? w->cond : 0;
}

/* Assign(Concat(rv, x)) along @axis of @rank: write x into the window. */
static int window_write(struct kvw *w, int rv, int x, int axis, int rank)
{
	int64_t shape[NPR_MAX_RANK];
	int in[3], r, s, ax, gx, sel, k;

	shape[0] = w->capacity;
	for (k = 1; k < rank - axis; k++)
		shape[k] = 1;
	s = cnst(w, NPR_ELEM_I64, shape, rank - axis);
	if (s < 0)
		return s;
	in[0] = w->cond;
	in[1] = s;
	r = add(w, "Reshape", 1, 2, in);
	if (r < 0)
		return r;
	k = npr_node_add_attr(&w->g->nodes[w->g->vals[r].producer],
			      "special_zero", "false");
	if (k)
		return k;
	{
		int64_t a = axis;

		ax = cnst(w, NPR_ELEM_I64, &a, 0);
	}
	if (ax < 0)
		return ax;
	in[0] = x;
	in[1] = w->idx;
	in[2] = ax;
	gx = add(w, "Gather", 8, 3, in);
	if (gx < 0)
		return gx;
	k = npr_node_add_attr(&w->g->nodes[w->g->vals[gx].producer],
			      "batch_dims", "0");
	if (k)
		return k;
	in[0] = r;
	in[1] = gx;
	in[2] = rv;
	sel = add(w, "Select", 1, 3, in);
	return sel;
}

/* Whether value @v is computed from the shape of a variable's value. */
static bool reads_var_shape(const struct kvw *w, int v, const bool *var,
			    int depth)
{
	const struct npr_graph *g = w->g;
	const struct npr_node *n;
	int j;

	if (v < 0 || v >= w->nvals0 || depth > 24)
		return false;
	n = &g->nodes[g->vals[v].producer];
	if (!strcmp(n->type, "ShapeOf") && n->nin >= 1 && n->in[0] >= 0 &&
	    var[n->in[0]])
		return true;
	for (j = 0; j < n->nin; j++)
		if (reads_var_shape(w, n->in[j], var, depth + 1))
			return true;
	return false;
}

static int shift_positions(struct kvw *w, const bool *var)
{
	struct npr_graph *g = w->g;
	int i, c = -1, d = -1;

	for (i = 0; i < w->first; i++) {
		struct npr_node *n = &g->nodes[i];
		int r, dl, sum;

		if (n->dead || strcmp(n->type, "Range") || n->nin < 1 ||
		    !reads_var_shape(w, n->in[0], var, 0))
			continue;
		if (d < 0) {
			c = cnst_i64(w, w->capacity);
			d = c < 0 ? c : op2(w, "Subtract", w->len, c);
			if (d < 0)
				return d;
		}
		r = g->nodes[i].out[0];
		dl = op2(w, "ConvertLike", d, r);
		sum = dl < 0 ? dl : op2(w, "Add", r, dl);
		if (sum < 0)
			return sum;
		redirect(w, r, sum);
	}
	return 0;
}

static int build_mask(struct kvw *w)
{
	int64_t n = w->capacity + w->tokens, i;
	int64_t *kpos = malloc(sizeof(int64_t) * n);
	float zero = 0.0f, ninf = -INFINITY;
	int kp, lt, z, m, in[3];

	if (!kpos)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		kpos[i] = i < w->capacity ? i : -1;
	kp = cnst(w, NPR_ELEM_I64, kpos, n);
	free(kpos);
	lt = kp < 0 ? kp : op2(w, "Less", kp, w->len);
	z = lt < 0 ? lt : cnst(w, NPR_ELEM_F32, &zero, 0);
	m = z < 0 ? z : cnst(w, NPR_ELEM_F32, &ninf, 0);
	if (m < 0)
		return m;
	in[0] = lt;
	in[1] = z;
	in[2] = m;
	w->mask = add(w, "Select", 1, 3, in);
	return w->mask < 0 ? w->mask : 0;
}

static int mask_scores(struct kvw *w, int mm)
{
	int out = w->g->nodes[mm].out[0], ml, sum;

	if (w->mask < 0) {
		int err = build_mask(w);

		if (err)
			return err;
	}
	ml = op2(w, "ConvertLike", w->mask, out);
	sum = ml < 0 ? ml : op2(w, "Add", out, ml);
	if (sum < 0)
		return sum;
	redirect(w, out, sum);
	return 0;
}

/*
 * Follow the readers of @v, whose axis @from_end (1: last) is the window
 * axis, to the MatMuls computing scores against it.
 */
static int follow(struct kvw *w, int v, int from_end, bool *masked,
		  int depth)
{
	struct npr_graph *g = w->g;
	int i, j, err;

	if (depth > 16)
		return 0;
	for (i = 0; i < w->first; i++) {
		struct npr_node *n = &g->nodes[i];
		int next = from_end;

		if (n->dead || !n->nin || n->in[0] != v) {
			bool b = false;

			for (j = 1; !n->dead && j < n->nin; j++)
				b |= n->in[j] == v;
			if (b && !strcmp(n->type, "MatMul") && n->in[1] == v &&
			    !masked[i]) {
				const char *t = npr_attr(n, "transpose_b");
				bool tb = t && (!strcmp(t, "true") ||
						!strcmp(t, "1"));

				if (from_end == (tb ? 2 : 1)) {
					masked[i] = true;
					err = mask_scores(w, i);
					if (err)
						return err;
				}
			}
			continue;
		}
		if (!strcmp(n->type, "Transpose")) {
			int64_t perm[NPR_MAX_RANK];
			int rank = npr_const_ints(g, n, 1, perm, NPR_MAX_RANK);

			if (rank <= 0 || from_end > rank)
				continue;
			next = 0;
			for (j = 0; j < rank; j++)
				if (perm[j] == rank - from_end)
					next = rank - j;
			if (!next)
				continue;
		} else if (strcmp(n->type, "Reshape") &&
			   strcmp(n->type, "Unsqueeze") &&
			   strcmp(n->type, "Squeeze") &&
			   strcmp(n->type, "Broadcast") &&
			   strcmp(n->type, "Convert") &&
			   strcmp(n->type, "Multiply") &&
			   strcmp(n->type, "Divide")) {
			continue;
		}
		err = follow(w, n->out[0], next, masked, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

/* The dynamic axis of variable shape @s ("1,4,-1,32"), its rank. */
static int parse_shape(const char *s, int64_t *d, int *rank)
{
	char *end;
	int n = 0, axis = -1;

	while (s && *s && n < NPR_MAX_RANK) {
		d[n] = strtoll(s, &end, 10);
		if (end == s)
			return -EINVAL;
		if (d[n] < 0) {
			if (axis >= 0)
				return -EINVAL;
			axis = n;
		}
		n++;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	*rank = n;
	return axis;
}

static struct npr_node *assign_of(struct npr_graph *g, const char *id)
{
	int i;

	for (i = 0; i < g->nnodes; i++) {
		const char *a;

		if (g->nodes[i].dead || strcmp(g->nodes[i].type, "Assign"))
			continue;
		a = npr_attr(&g->nodes[i], "variable_id");
		if (a && !strcmp(a, id))
			return &g->nodes[i];
	}
	return NULL;
}

/**
 * npr_pass_kv_window() - a decoder's growing variables as fixed windows
 * @g: a model graph (not compiled) with variables that grow; rewritten
 *     in place.
 * @tokens: new positions per inference (the static sequence length).
 * @capacity: positions of each variable's window.
 *
 * See the comment at the top of lib/passes/kvwindow.c.  Variables of a
 * static shape stay as they are.
 *
 * Return: the number of windowed variables (0: the model has none, and
 * @g is unchanged but for the length input), or -errno with a message.
 */
int npr_pass_kv_window(struct npr_graph *g, int64_t tokens, int64_t capacity)
{
	struct kvw w = { .g = g, .tokens = tokens, .capacity = capacity,
			 .mask = -1, .first = g->nnodes,
			 .nvals0 = g->nvals };
	bool *var = NULL, *masked = NULL;
	int *concat = NULL, *axis_of = NULL;
	int i, nv = 0, err;

	if (tokens < 1 || capacity < tokens || capacity > (1 << 24))
		return npr_err(-EINVAL, "kv window: %lld tokens in %lld positions",
			       (long long)tokens, (long long)capacity);
	var = calloc(g->nvals + 1, sizeof(bool));
	masked = calloc(g->nnodes + 1, sizeof(bool));
	concat = calloc(g->nnodes + 1, sizeof(int));
	axis_of = calloc(g->nnodes + 1, sizeof(int));
	if (!var || !masked || !concat || !axis_of) {
		err = -ENOMEM;
		goto out;
	}
	err = add_length_input(&w);
	if (err)
		goto out;
	w.first = g->nnodes;
	for (i = 0; i < w.first; i++) {
		struct npr_node *n = &g->nodes[i], *as, *c;
		const char *id = npr_attr(n, "variable_id");
		int64_t d[NPR_MAX_RANK], cax;
		char buf[32 * NPR_MAX_RANK];
		int rank, axis, k, sel, rv, x, cout;
		size_t len = 0;

		if (n->dead || strcmp(n->type, "ReadValue") || !id)
			continue;
		axis = parse_shape(npr_attr(n, "variable_shape"), d, &rank);
		if (axis == -EINVAL) {
			err = npr_node_err(n, -EINVAL, "kv window: variable %s: variable_shape has more than one dynamic dimension",
					   id);
			goto out;
		}
		if (axis < 0)
			continue;
		rv = n->out[0];
		as = assign_of(g, id);
		c = as && as->nin == 1 && as->in[0] >= 0 ?
		    &g->nodes[g->vals[as->in[0]].producer] : NULL;
		if (!c || strcmp(c->type, "Concat") || c->nin != 2 ||
		    c->in[0] != rv || npr_attr_int(c, "axis", 0, &cax) ||
		    (cax < 0 ? cax + rank : cax) != axis) {
			err = npr_node_err(n, -EINVAL, "kv window: variable %s grows along axis %d, but its Assign is not Concat(ReadValue, new) along it",
					   id, axis);
			goto out;
		}
		x = c->in[1];
		cout = c->out[0];
		if (!nv) {
			err = window_index(&w);
			if (err)
				goto out;
		}
		d[axis] = capacity;
		for (k = 0; k < rank; k++)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%lld",
					k ? "," : "", (long long)d[k]);
		err = set_attr(g, &g->nodes[i], "variable_shape", buf);
		if (err)
			goto out;
		g->vals[rv].shape.rank = rank;
		memcpy(g->vals[rv].shape.d, d, sizeof(int64_t) * rank);
		if (g->vals[rv].decl.rank >= 0)
			g->vals[rv].decl = g->vals[rv].shape;
		sel = window_write(&w, rv, x, axis, rank);
		if (sel < 0) {
			err = sel;
			goto out;
		}
		/* as may have moved with g->nodes */
		as = assign_of(g, id);
		as->in[0] = sel;
		var[rv] = true;
		var[cout] = true;
		concat[nv] = cout;
		axis_of[nv++] = rank - axis;
	}
	if (!nv)
		goto out;
	err = shift_positions(&w, var);
	for (i = 0; !err && i < nv; i++)
		err = follow(&w, concat[i], axis_of[i], masked, 0);
	if (!err)
		err = npr_graph_sort(g);
out:
	free(var);
	free(masked);
	free(concat);
	free(axis_of);
	return err ? err : nv;
}
