// SPDX-License-Identifier: MIT
/*
 * OpenVINO IR frontend: the network.  The layers of a <net> in file
 * order, each with its op and, for TensorIterator, Loop and If, its
 * bodies (<body>, <then_body>, <else_body>: networks of their own, read
 * by the same code into graphs the node owns; their <port_map> and
 * <back_edges> name body layers by id and become struct npr_body rules,
 * lib/graph/graph.h); then the edges, and a cycle named when the
 * topological sort finds one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include "ops/infer.h"
#include "reader.h"

/* ---- bodies ----------------------------------------------------------- */

/* A signed decimal integer, white space around allowed. */
static int parse_i64(const char *s, int64_t *out)
{
	const char *p;
	uint64_t v;
	bool neg;

	if (!s)
		return -EINVAL;
	p = ir_skip_ws(s);
	neg = *p == '-';
	if (neg)
		p++;
	if (npr_ir_parse_u64(p, &v) || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* An integer attribute of a port map rule; @def when absent. */
static int rule_int(struct ir_ctx *c, int li, xmlNode *x, const char *key,
		    int64_t def, bool *present, int64_t *out)
{
	bool oom = false;
	const char *s = npr_ir_xattr(c, x, key, &oom);

	if (oom)
		return -ENOMEM;
	if (present)
		*present = s != NULL;
	if (!s) {
		*out = def;
		return 0;
	}
	if (parse_i64(s, out) || *out < INT32_MIN || *out > INT32_MAX)
		return npr_node_err(ir_node_of(c, li), -EINVAL,
				    "<%s> at line %u: bad %s \"%.40s\"",
				    x->name, ir_line_of(c, x), key, s);
	return 0;
}

/*
 * The Parameter (@result false) or Result of @body with layer id @id, as
 * an index into its inputs[] or outputs[].
 */
static int body_layer(struct ir_ctx *c, int li, const struct npr_graph *body,
		      int64_t id, bool result, xmlNode *x, const char *role)
{
	const int *idx = result ? body->outputs : body->inputs;
	int cnt = result ? body->noutputs : body->ninputs, i;

	for (i = 0; i < cnt; i++)
		if (body->nodes[idx[i]].layer_id == id)
			return i;
	for (i = 0; i < body->nnodes; i++)
		if (body->nodes[i].layer_id == id)
			return npr_node_err(ir_node_of(c, li), -EINVAL,
					    "<%s> at line %u: %s body layer %lld, which is a %s, not a %s",
					    x->name, ir_line_of(c, x), role,
					    (long long)id, body->nodes[i].type,
					    result ? "Result" : "Parameter");
	return npr_node_err(ir_node_of(c, li), -EINVAL,
			    "<%s> at line %u: %s body layer %lld, which does not exist",
			    x->name, ir_line_of(c, x), role, (long long)id);
}

static int port_rule(struct ir_ctx *c, int li, struct npr_body *b,
		     xmlNode *x)
{
	struct ir_layer *l = &c->layers[li];
	struct npr_body_port bp = { .ext = -1 };
	const char *purpose;
	bool oom = false;
	int64_t ext, id;
	int err;

	bp.out = ir_is_elem(x, "output");
	if (!bp.out && !ir_is_elem(x, "input"))
		return npr_node_err(ir_node_of(c, li), -EINVAL,
				    "unexpected <%.40s> in a port map at line %u",
				    x->name, ir_line_of(c, x));
	err = rule_int(c, li, x, "external_port_id", -1, NULL, &ext);
	if (!err)
		err = rule_int(c, li, x, "axis", 0, &bp.sliced, &bp.axis);
	if (!err)
		err = rule_int(c, li, x, "start", 0, NULL, &bp.start);
	if (!err)
		err = rule_int(c, li, x, "end", -1, NULL, &bp.end);
	if (!err)
		err = rule_int(c, li, x, "stride", 1, NULL, &bp.stride);
	if (!err)
		err = rule_int(c, li, x, "part_size", 1, NULL, &bp.part_size);
	if (err)
		return err;
	purpose = npr_ir_xattr(c, x, "purpose", &oom);
	if (oom)
		return -ENOMEM;
	if (purpose && !strcmp(purpose, "current_iteration") && !bp.out)
		bp.purpose = NPR_BODY_CURRENT_ITERATION;
	else if (purpose && !strcmp(purpose, "execution_condition") && bp.out)
		bp.purpose = NPR_BODY_EXECUTION_CONDITION;
	else if (purpose && *purpose)
		return npr_node_err(ir_node_of(c, li), -EINVAL,
				    "<%s> at line %u: unknown purpose \"%.40s\"",
				    x->name, ir_line_of(c, x), purpose);
	if (ext >= 0) {
		struct ir_port *p = npr_ir_find_port(l, ext);

		if (!p || p->out != bp.out)
			return npr_node_err(ir_node_of(c, li), -EINVAL,
					    "<%s> at line %u: external_port_id %lld is not an %s port of this layer",
					    x->name, ir_line_of(c, x),
					    (long long)ext,
					    bp.out ? "output" : "input");
		bp.ext = p->index;
	} else if (!bp.purpose) {
		return npr_node_err(ir_node_of(c, li), -EINVAL,
				    "<%s> at line %u: external_port_id is missing",
				    x->name, ir_line_of(c, x));
	}
	err = rule_int(c, li, x, "internal_layer_id", -1, NULL, &id);
	if (err)
		return err;
	if (id < 0)
		return npr_node_err(ir_node_of(c, li), -EINVAL,
				    "<%s> at line %u: internal_layer_id is missing",
				    x->name, ir_line_of(c, x));
	err = body_layer(c, li, b->g, id, bp.out, x, "port map names");
	if (err < 0)
		return err;
	bp.internal = err;
	return npr_body_add_port(b, &bp);
}

static int back_edge(struct ir_ctx *c, int li, struct npr_body *b,
		     xmlNode *x)
{
	int64_t from, to;
	int f, t, err;

	if (!ir_is_elem(x, "edge"))
		return npr_node_err(ir_node_of(c, li), -EINVAL,
				    "unexpected <%.40s> in <back_edges> at line %u",
				    x->name, ir_line_of(c, x));
	err = rule_int(c, li, x, "from-layer", -1, NULL, &from);
	if (!err)
		err = rule_int(c, li, x, "to-layer", -1, NULL, &to);
	if (err)
		return err;
	f = body_layer(c, li, b->g, from, true, x, "back edge from");
	if (f < 0)
		return f;
	t = body_layer(c, li, b->g, to, false, x, "back edge to");
	if (t < 0)
		return t;
	return npr_body_add_back_edge(b, f, t);
}

/*
 * Read one body (<body>, <then_body>, <else_body>) of layer @li into a
 * graph of its own, with the same checks as the model, and attach it with
 * its port map and back edges.  Messages from inside are prefixed with
 * the outer layer, so nested bodies read as a path.
 */
static int parse_body(struct ir_ctx *c, int li, const char *what,
		      xmlNode *body, xmlNode *pmap, xmlNode *back)
{
	struct ir_ctx sub = {
		.doc = c->doc, .line_offset = c->line_offset,
		.bin_hint = c->bin_hint, .depth = c->depth + 1,
	};
	struct npr_node *n = ir_node_of(c, li);
	struct npr_body *b;
	xmlNode *x;
	int bi, err;

	if (sub.depth > NPR_MAX_BODY_DEPTH)
		return npr_node_err(n, -EFBIG,
				    "bodies are nested more than %d deep",
				    NPR_MAX_BODY_DEPTH);
	sub.g = npr_graph_new();
	if (!sub.g)
		return -ENOMEM;
	sub.g->ir_version = c->g->ir_version;
	sub.g->weights = npr_weights_get(c->g->weights);
	sub.g->name = strdup(what);
	err = sub.g->name ? npr_ir_build(&sub, body) : -ENOMEM;
	sub.doc = NULL;		/* the model's */
	npr_ir_ctx_fini(&sub);
	if (err) {
		npr_graph_free(sub.g);
		if (err != -ENOMEM) {
			char msg[1024];

			snprintf(msg, sizeof(msg), "%s", npr_last_error());
			err = npr_node_err(n, err, "%s: %s", what, msg);
		}
		return err;
	}
	bi = npr_node_add_body(n, sub.g);
	if (bi < 0)
		return bi;
	b = &n->bodies[bi];
	for (x = pmap ? pmap->children : NULL; x; x = x->next) {
		if (x->type != XML_ELEMENT_NODE)
			continue;
		err = port_rule(c, li, b, x);
		if (err)
			return err;
	}
	for (x = back ? back->children : NULL; x; x = x->next) {
		if (x->type != XML_ELEMENT_NODE)
			continue;
		err = back_edge(c, li, b, x);
		if (err)
			return err;
	}
	return 0;
}

/* The bodies of If (then, else) or of a loop (body). */
static int parse_bodies(struct ir_ctx *c, int li, xmlNode **sub)
{
	struct npr_node *n = ir_node_of(c, li);
	bool is_if = !strcmp(n->type, "If");
	int err;

	if (!sub[0] || (is_if && !sub[1]))
		return npr_node_err(n, -EINVAL, "has no <%s>",
				    is_if ? (sub[0] ? "else_body" : "then_body") :
				    "body");
	if (!sub[2] || (is_if && !sub[3]))
		return npr_node_err(n, -EINVAL, "has no <%s>",
				    is_if ? (sub[2] ? "else_port_map" :
					     "then_port_map") : "port_map");
	err = parse_body(c, li, is_if ? "then_body" : "body", sub[0], sub[2],
			 is_if ? NULL : sub[4]);
	if (!err && is_if)
		err = parse_body(c, li, "else_body", sub[1], sub[3], NULL);
	return err;
}

static int parse_layer(struct ir_ctx *c, xmlNode *x, int li)
{
	struct ir_layer *l = &c->layers[li];
	xmlNode *data = NULL, *in = NULL, *out = NULL, *ch;
	xmlNode *sub[5] = { NULL };	/* bodies, port maps, back edges */
	const char *sid, *name, *type;
	struct npr_node *n;
	bool oom = false;
	int idx, nin, nout, err;
	xmlAttr *a;

	sid = npr_ir_xattr(c, x, "id", &oom);
	name = npr_ir_xattr(c, x, "name", &oom);
	type = npr_ir_xattr(c, x, "type", &oom);
	l->version = npr_ir_xattr(c, x, "version", &oom);
	if (oom)
		return -ENOMEM;
	if (npr_ir_parse_id(sid, &l->id))
		return npr_err(-EINVAL, "layer #%d (line %u, name \"%.64s\"): %s id \"%.40s\"",
			       li, ir_line_of(c, x), name ? name : "",
			       sid ? "bad" : "missing", sid ? sid : "");
	if (!name)
		name = "";
	if (strlen(name) > NPR_IR_MAX_NAME)
		return npr_err(-ENAMETOOLONG,
			       "layer %lld: name longer than %d bytes",
			       (long long)l->id, NPR_IR_MAX_NAME);
	if (!type || !*type)
		return npr_err(-EINVAL, "layer %lld (%s): missing type",
			       (long long)l->id, name);
	if (strlen(type) > IR_MAX_TYPE ||
	    (l->version && strlen(l->version) > IR_MAX_TYPE))
		return npr_err(-ENAMETOOLONG,
			       "layer %lld (%s): type or version longer than %d bytes",
			       (long long)l->id, name, IR_MAX_TYPE);
	idx = npr_graph_add_node(c->g, name, type,
				 npr_ir_opset_number(l->version),
				 l->id);
	if (idx < 0)
		return idx;
	for (ch = x->children; ch; ch = ch->next) {
		xmlNode **slot;

		if (ir_is_elem(ch, "data"))
			slot = &data;
		else if (ir_is_elem(ch, "input"))
			slot = &in;
		else if (ir_is_elem(ch, "output"))
			slot = &out;
		else if (ir_is_elem(ch, "body") || ir_is_elem(ch, "then_body"))
			slot = &sub[0];
		else if (ir_is_elem(ch, "else_body"))
			slot = &sub[1];
		else if (ir_is_elem(ch, "port_map") ||
			 ir_is_elem(ch, "then_port_map"))
			slot = &sub[2];
		else if (ir_is_elem(ch, "else_port_map"))
			slot = &sub[3];
		else if (ir_is_elem(ch, "back_edges"))
			slot = &sub[4];
		else
			continue;	/* rt_info */
		if (*slot)
			return npr_node_err(ir_node_of(c, li), -EINVAL,
					    "more than one <%s>", ch->name);
		*slot = ch;
	}
	err = npr_ir_resolve_op(c, li);
	if (err)
		return err;
	for (a = data ? data->properties : NULL; a; a = a->next) {
		const char *val = npr_ir_list_text(c, a->children, &oom);

		if (oom)
			return -ENOMEM;
		err = npr_node_add_attr(ir_node_of(c, li),
					(const char *)a->name, val);
		if (err)
			return err;
	}
	err = npr_ir_collect_ports(c, li, in, out, &nin, &nout);
	if (err)
		return err;
	n = ir_node_of(c, li);
	if (nin < n->op->nin_min ||
	    (n->op->nin_max >= n->op->nin_min && nin > n->op->nin_max))
		return npr_node_err(n, -EINVAL,
				    "has %d input ports, the op takes %d..%d",
				    nin, n->op->nin_min, n->op->nin_max);
	err = npr_node_set_inputs(n, nin);
	if (!err)
		err = npr_node_set_outputs(c->g, idx, nout);
	if (!err)
		err = npr_ir_output_values(c, li);
	if (err)
		return err;
	if (n->op->flags & NPR_OP_BODIES)
		return parse_bodies(c, li, sub);
	if (!strcmp(type, "Parameter"))
		return npr_ir_parameter_layer(c, li, nin, nout);
	if (!strcmp(type, "Const") || !strcmp(type, "Constant"))
		return npr_ir_const_layer(c, li, nin, nout);
	if (!strcmp(type, "Result") && (nin != 1 || nout))
		return npr_node_err(n, -EINVAL,
				    "has %d input and %d output ports, needs 1 and 0",
				    nin, nout);
	return 0;
}

/* ---- edges ------------------------------------------------------------ */

static struct ir_layer *find_layer(struct ir_ctx *c, int64_t id, int *li)
{
	int lo = 0, hi = c->nlayers - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		struct ir_layer *l = &c->layers[c->by_id[mid]];

		if (l->id == id) {
			*li = c->by_id[mid];
			return l;
		}
		if (l->id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int edge_attr(struct ir_ctx *c, xmlNode *e, const char *name,
		     int64_t *v)
{
	bool oom = false;
	const char *s = npr_ir_xattr(c, e, name, &oom);

	if (oom)
		return -ENOMEM;
	if (npr_ir_parse_id(s, v))
		return npr_err(-EINVAL, "edge at line %u: %s %s \"%.40s\"",
			       ir_line_of(c, e), s ? "bad" : "missing", name,
			       s ? s : "");
	return 0;
}

static int connect(struct ir_ctx *c, xmlNode *e)
{
	struct ir_layer *from, *to;
	struct ir_port *fp, *tp;
	int64_t fl, fpid, tl, tpid;
	int fi = 0, ti = 0, err;

	err = edge_attr(c, e, "from-layer", &fl);
	if (!err)
		err = edge_attr(c, e, "from-port", &fpid);
	if (!err)
		err = edge_attr(c, e, "to-layer", &tl);
	if (!err)
		err = edge_attr(c, e, "to-port", &tpid);
	if (err)
		return err;
	from = find_layer(c, fl, &fi);
	to = find_layer(c, tl, &ti);
	if (!from || !to)
		return npr_err(-EINVAL,
			       "edge %lld:%lld -> %lld:%lld (line %u): layer %lld does not exist",
			       (long long)fl, (long long)fpid, (long long)tl,
			       (long long)tpid, ir_line_of(c, e),
			       (long long)(from ? tl : fl));
	fp = npr_ir_find_port(from, fpid);
	if (!fp || !fp->out)
		return npr_node_err(ir_node_of(c, fi), -EINVAL,
				    "edge to layer %lld starts at port %lld, which %s",
				    (long long)tl, (long long)fpid,
				    fp ? "is an input port" : "does not exist");
	tp = npr_ir_find_port(to, tpid);
	if (!tp || tp->out)
		return npr_node_err(ir_node_of(c, ti), -EINVAL,
				    "edge from layer %lld ends at port %lld, which %s",
				    (long long)fl, (long long)tpid,
				    tp ? "is an output port" : "does not exist");
	if (tp->from_layer >= 0)
		return npr_node_err(ir_node_of(c, ti), -EINVAL,
				    "input port %lld has two incoming edges (from layers %lld and %lld)",
				    (long long)tpid, (long long)tp->from_layer,
				    (long long)fl);
	tp->from_layer = fl;
	ir_node_of(c, ti)->in[tp->index] = ir_node_of(c, fi)->out[fp->index];
	return 0;
}

/* ---- cycles ----------------------------------------------------------- */

static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (k > 0)
		*off += (size_t)k;
}

/*
 * After npr_graph_sort() found a cycle: find one by depth-first search
 * over producers and name its layers in data-flow order.
 */
static int describe_cycle(struct ir_ctx *c)
{
	struct npr_graph *g = c->g;
	unsigned char *color = calloc(g->nnodes, 1);	/* 0, 1 open, 2 done */
	int *stk = malloc(sizeof(int) * g->nnodes);
	int *pos = malloc(sizeof(int) * g->nnodes);
	int top, s, i, err = -ELOOP;
	char msg[900];
	size_t off = 0;

	if (!color || !stk || !pos) {
		err = -ENOMEM;
		goto out;
	}
	for (s = 0; s < g->nnodes; s++) {
		if (color[s])
			continue;
		top = 0;
		stk[top] = s;
		pos[top++] = 0;
		color[s] = 1;
		while (top) {
			struct npr_node *n = &g->nodes[stk[top - 1]];
			int p;

			if (pos[top - 1] == n->nin) {
				color[stk[--top]] = 2;
				continue;
			}
			p = g->vals[n->in[pos[top - 1]++]].producer;
			if (color[p] == 2)
				continue;
			if (color[p] == 0) {
				color[p] = 1;
				stk[top] = p;
				pos[top++] = 0;
				continue;
			}
			/* p is open: p feeds stk[top-1], which feeds ... p */
			for (i = 0; stk[i] != p; i++)
				;
			append(msg, sizeof(msg), &off, "the graph has a cycle:");
			append(msg, sizeof(msg), &off, " layer %lld (%.64s)",
			       (long long)g->nodes[p].layer_id,
			       g->nodes[p].name);
			for (top--; top >= i; top--) {
				struct npr_node *m = &g->nodes[stk[top]];

				if (off > sizeof(msg) - 120) {
					append(msg, sizeof(msg), &off,
					       " -> ...");
					break;
				}
				append(msg, sizeof(msg), &off,
				       " -> layer %lld (%.64s)",
				       (long long)m->layer_id, m->name);
			}
			err = npr_err(-ELOOP, "%s", msg);
			goto out;
		}
	}
out:
	free(pos);
	free(stk);
	free(color);
	return err;
}

/* ---- the document ----------------------------------------------------- */

static int cmp_by_id(const void *a, const void *b, void *arg)
{
	const struct ir_ctx *c = arg;
	int64_t x = c->layers[*(const int *)a].id;
	int64_t y = c->layers[*(const int *)b].id;

	return x < y ? -1 : x > y;
}

static int parse_layers(struct ir_ctx *c, xmlNode *layers)
{
	xmlNode *x;
	int k = 0, i, err;

	for (x = layers->children; x; x = x->next) {
		if (x->type != XML_ELEMENT_NODE)
			continue;
		if (!ir_is_elem(x, "layer"))
			return npr_err(-EINVAL,
				       "unexpected <%.40s> in <layers> at line %u",
				       x->name, ir_line_of(c, x));
		if (++k > NPR_IR_MAX_LAYERS)
			return npr_err(-EFBIG, "more than %d layers",
				       NPR_IR_MAX_LAYERS);
	}
	c->layers = calloc(k ? k : 1, sizeof(*c->layers));
	c->by_id = malloc(sizeof(int) * (k ? k : 1));
	if (!c->layers || !c->by_id)
		return -ENOMEM;
	for (x = layers->children; x; x = x->next) {
		if (x->type != XML_ELEMENT_NODE)
			continue;
		c->nlayers++;
		err = parse_layer(c, x, c->nlayers - 1);
		if (err)
			return err;
	}
	for (i = 0; i < c->nlayers; i++)
		c->by_id[i] = i;
	qsort_r(c->by_id, c->nlayers, sizeof(int), cmp_by_id, c);
	for (i = 1; i < c->nlayers; i++) {
		int a = c->by_id[i - 1], b = c->by_id[i];

		if (a > b) {
			int t = a;

			a = b;
			b = t;
		}
		if (c->layers[a].id == c->layers[b].id)
			return npr_node_err(ir_node_of(c, b), -EINVAL,
					    "duplicate layer id: layer \"%s\" (%s) has it too",
					    ir_node_of(c, a)->name,
					    ir_node_of(c, a)->type);
	}
	return 0;
}

/**
 * npr_ir_build() - build the graph of a <net> or a body
 * @c: the context, c->g the graph to fill.
 * @net: the element.
 *
 * Layers become nodes, edges connect them, bodies are read into graphs
 * of their own; the graph is sorted topologically.
 *
 * Return: 0 or -errno with a message naming the layer at fault; -ELOOP
 * names a cycle.
 */
int npr_ir_build(struct ir_ctx *c, xmlNode *net)
{
	struct npr_graph *g = c->g;
	xmlNode *layers = NULL, *edges = NULL, *x;
	int i, k, err;

	for (x = net->children; x; x = x->next) {
		xmlNode **slot;

		if (ir_is_elem(x, "layers"))
			slot = &layers;
		else if (ir_is_elem(x, "edges"))
			slot = &edges;
		else
			continue;	/* rt_info, meta_data, statistics */
		if (*slot)
			return npr_err(-EINVAL, "more than one <%s> in <%s>",
				       x->name, net->name);
		*slot = x;
	}
	if (!layers)
		return npr_err(-EINVAL, "<%s> has no <layers>", net->name);
	err = parse_layers(c, layers);
	if (err)
		return err;
	for (x = edges ? edges->children : NULL; x; x = x->next) {
		if (x->type != XML_ELEMENT_NODE)
			continue;
		if (!ir_is_elem(x, "edge"))
			return npr_err(-EINVAL,
				       "unexpected <%.40s> in <edges> at line %u",
				       x->name, ir_line_of(c, x));
		err = connect(c, x);
		if (err)
			return err;
	}
	for (i = 0; i < c->nlayers; i++) {
		struct ir_layer *l = &c->layers[i];

		for (k = 0; k < l->nports; k++)
			if (!l->ports[k].out && l->ports[k].from_layer < 0)
				return npr_node_err(ir_node_of(c, i), -EINVAL,
						    "input port %lld is not connected",
						    (long long)l->ports[k].id);
	}
	g->inputs = malloc(sizeof(int) * (g->nnodes ? g->nnodes : 1));
	g->outputs = malloc(sizeof(int) * (g->nnodes ? g->nnodes : 1));
	if (!g->inputs || !g->outputs)
		return -ENOMEM;
	for (i = 0; i < g->nnodes; i++) {
		if (!strcmp(g->nodes[i].type, "Parameter"))
			g->inputs[g->ninputs++] = i;
		else if (!strcmp(g->nodes[i].type, "Result"))
			g->outputs[g->noutputs++] = i;
	}
	if (!g->noutputs)
		return npr_err(-EINVAL, "the model has no Result layer");
	err = npr_infer_parse(g);
	if (err)
		return err;
	err = npr_graph_sort(g);
	if (err == -ELOOP)
		err = describe_cycle(c);
	return err;
}

/**
 * npr_ir_ctx_fini() - free what a context holds, but not its graph
 * @c: the context.
 */
void npr_ir_ctx_fini(struct ir_ctx *c)
{
	int i;

	for (i = 0; i < c->nlayers; i++)
		free(c->layers[i].ports);
	free(c->layers);
	free(c->by_id);
	for (i = 0; i < c->nscratch; i++)
		xmlFree(c->scratch[i]);
	free(c->scratch);
	if (c->doc)
		xmlFreeDoc(c->doc);
}
