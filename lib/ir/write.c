// SPDX-License-Identifier: MIT
/*
 * OpenVINO IR writer: a struct npr_graph becomes an IR v11 .xml and its
 * .bin weights, the pair lib/ir/read.c reads and the NPU compiler library takes
 * as NGRAPH_LITE input ("classic" layout: xml bytes and weights bytes, the
 * Const layers naming offset and size inside the weights).
 *
 * Both a loaded graph (as a frontend built it) and a compiled one (after
 * npr_compile_graph(): f16 lowered, constants folded, dead nodes marked)
 * can be written.  Dead nodes are skipped; a constant value whose producer
 * is dead (a folded node) becomes a new Const layer named after it.
 *
 * Layers are written Parameters first (in input order), then every other
 * live node in graph order, then the Results (in output order), so reading
 * the file back gives the same inputs and outputs in the same order.  Layer
 * ids are positions in the file; port ids are 0.. for inputs, then the
 * outputs.  <data> holds the node's attribute strings in their order; Const
 * offset/size, and element_type/shape of Const and Parameter, are made
 * from the value itself.  rt_info is not written.
 *
 * The bodies of TensorIterator, Loop and If are written inside their
 * layer as the reader expects them: <port_map> (<then_port_map>,
 * <else_port_map>) with external port ids and internal layer ids,
 * <back_edges>, and <body> (<then_body>, <else_body>) holding <layers>
 * and <edges> numbered from 0 within the body.  Body values whose type
 * or shape the frontend left open (an ONNX Loop body's Parameters) are
 * written as inferring the whole model gives them.
 *
 * Constant bytes are packed into the .bin at offsets aligned to
 * NPR_IR_WRITE_ALIGN; identical constants share one slice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/xmlwriter.h>

#include "error.h"
#include "ir.h"
#include "passes/compile.h"

struct wconst {
	uint64_t hash;
	uint64_t off;
	size_t size;
	const void *data;
};

struct wctx {
	struct wctx *parent;	/* the graph whose node owns this body */
	int pnode, pbody;	/* that node and which of its bodies */
	const struct npr_graph *g;
	struct npr_graph *inferred;	/* shapes the graph lacks */
	struct npr_graph *inferred2;	/* same, other dynamic dim sizes */
	int64_t *layer;		/* node -> layer id, -1 if not written */
	int64_t *synth;		/* value -> its made-up Const, or -1 */
	int *order;		/* layer id -> node (>= 0) or ~value */
	int nlayers;
	uint8_t *bin;
	size_t bin_len, bin_cap;
	struct wconst *consts;	/* open hash of written constants */
	size_t cap_consts;
	xmlTextWriterPtr w;
};

static const struct {
	unsigned int type;
	const char *prec;
} precisions[] = {
	{ NPR_ELEM_F32, "FP32" },	{ NPR_ELEM_F16, "FP16" },
	{ NPR_ELEM_BF16, "BF16" },	{ NPR_ELEM_F64, "FP64" },
	{ NPR_ELEM_I8, "I8" },		{ NPR_ELEM_U8, "U8" },
	{ NPR_ELEM_I16, "I16" },	{ NPR_ELEM_U16, "U16" },
	{ NPR_ELEM_I32, "I32" },	{ NPR_ELEM_U32, "U32" },
	{ NPR_ELEM_I64, "I64" },	{ NPR_ELEM_U64, "U64" },
	{ NPR_ELEM_BOOLEAN, "BOOL" },	{ NPR_ELEM_U1, "U1" },
	{ NPR_ELEM_I4, "I4" },		{ NPR_ELEM_U4, "U4" },
};

static const char *precision_name(unsigned int t)
{
	size_t i;

	for (i = 0; i < sizeof(precisions) / sizeof(precisions[0]); i++)
		if (precisions[i].type == t)
			return precisions[i].prec;
	return NULL;
}

static bool is_const(const struct npr_node *n)
{
	return !strcmp(n->type, "Const") || !strcmp(n->type, "Constant");
}

/* ---- shapes ----------------------------------------------------------- */

/*
 * Infer the shapes of a graph that lacks some (ONNX keeps few).  Dynamic
 * input dims are set to two different sizes in turn; a dim that differs
 * between the two results depends on them and is written as dynamic.
 * When the model does not compile at the smaller sizes (a window longer
 * than 96 samples), larger ones are tried.
 */
static int infer_all(struct wctx *c)
{
	static const int64_t sizes[2][2] = { { 96, 160 }, { 384, 448 } };
	const struct npr_graph *g = c->g;
	struct npr_shape *sh;
	unsigned long mark = npr_err_mark();
	bool dynamic = false;
	int i, k, pass, try, err = 0;

	sh = calloc(g->ninputs + 1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	for (try = 0; try < 2; try++) {
		err = 0;
		for (pass = 0; pass < 2 && !err; pass++) {
			for (i = 0; i < g->ninputs; i++) {
				const struct npr_node *n =
					&g->nodes[g->inputs[i]];

				sh[i] = g->vals[n->out[0]].shape;
				for (k = 0; k < sh[i].rank; k++)
					if (sh[i].d[k] < 0) {
						sh[i].d[k] = sizes[try][pass];
						dynamic = true;
					}
			}
			err = npr_compile_graph(g, sh, g->fold,
						pass ? &c->inferred2 :
						&c->inferred);
			if (!dynamic)
				break;
		}
		if (!err || err == -ENOMEM || !dynamic)
			break;
		npr_graph_free(c->inferred);
		c->inferred = NULL;
	}
	free(sh);
	if (err)
		return npr_err_default(err, mark);
	return 0;
}

/*
 * The inferred graphs of a body: the bodies of its node in the parent's
 * inferred graphs (compiling a model compiles its bodies in place, value
 * for value), inferring the whole model first if needed.
 */
static int body_inferred(struct wctx *c)
{
	const struct npr_node *n;
	int err;

	if (!c->parent)
		return infer_all(c);
	if (!c->parent->inferred) {
		err = body_inferred(c->parent);
		if (err)
			return err;
	}
	n = &c->parent->inferred->nodes[c->pnode];
	if (c->pnode >= c->parent->inferred->nnodes ||
	    c->pbody >= n->nbodies)
		return npr_err(-EINVAL, "body of layer %s was not inferred",
			       c->parent->g->nodes[c->pnode].name);
	c->inferred = n->bodies[c->pbody].g;
	if (c->parent->inferred2) {
		n = &c->parent->inferred2->nodes[c->pnode];
		c->inferred2 = n->bodies[c->pbody].g;
	}
	return 0;
}

/*
 * The shape to write for a value: the inferred one when static (a compiled
 * graph), else what the file declared, else a partial one, else one from
 * inferring the whole graph (an ONNX graph keeps few shapes).
 */
static int value_shape(struct wctx *c, int vi, struct npr_shape *out)
{
	const struct npr_value *v = &c->g->vals[vi];
	int i, err;

	if (npr_shape_static(&v->shape) && v->shape.rank >= 0) {
		*out = v->shape;
		return 0;
	}
	if (v->decl.rank >= 0) {
		*out = v->decl;
		return 0;
	}
	if (v->shape.rank >= 0) {
		*out = v->shape;
		return 0;
	}
	if (!c->inferred) {
		err = body_inferred(c);
		if (err)
			return err;
	}
	if (c->inferred->vals[vi].shape.rank < 0)
		return npr_node_err(&c->g->nodes[v->producer], -EINVAL,
				    "output %d has no known shape", v->port);
	*out = c->inferred->vals[vi].shape;
	if (c->inferred2)
		for (i = 0; i < out->rank; i++)
			if (out->d[i] != c->inferred2->vals[vi].shape.d[i])
				out->d[i] = -1;
	return 0;
}

/* "1,3,224,224"; "?" for a dynamic dim. */
static void shape_text(const struct npr_shape *s, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < s->rank && off < len; i++) {
		if (s->d[i] < 0)
			off += snprintf(buf + off, len - off, "%s?",
					i ? "," : "");
		else
			off += snprintf(buf + off, len - off, "%s%" PRId64,
					i ? "," : "", s->d[i]);
	}
}

/* ---- weights ---------------------------------------------------------- */

static uint64_t fnv1a(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ n;
}

/* Append @size bytes (or find an identical slice); *off is its offset. */
static int bin_add(struct wctx *c, const void *data, size_t size,
		   uint64_t *off)
{
	uint64_t h = fnv1a(data, size);
	size_t i, start, need;
	struct wconst *e;

	for (i = h & (c->cap_consts - 1);; i = (i + 1) & (c->cap_consts - 1)) {
		e = &c->consts[i];
		if (!e->data)
			break;
		if (e->hash == h && e->size == size &&
		    !memcmp(e->data, data, size)) {
			*off = e->off;
			return 0;
		}
	}
	start = (c->bin_len + NPR_IR_WRITE_ALIGN - 1) &
		~(size_t)(NPR_IR_WRITE_ALIGN - 1);
	need = start + size;
	if (need > c->bin_cap) {
		size_t cap = c->bin_cap ? c->bin_cap : 4096;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(c->bin, cap);
		if (!p)
			return -ENOMEM;
		c->bin = p;
		c->bin_cap = cap;
	}
	memset(c->bin + c->bin_len, 0, start - c->bin_len);
	memcpy(c->bin + start, data, size);
	c->bin_len = need;
	e->hash = h;
	e->size = size;
	e->off = start;
	e->data = data;
	*off = start;
	return 0;
}

/* ---- xml -------------------------------------------------------------- */

#define X(call) do { if ((call) < 0) return -ENOMEM; } while (0)

static int put_attr(struct wctx *c, const char *key, const char *val)
{
	X(xmlTextWriterWriteAttribute(c->w, BAD_CAST key, BAD_CAST val));
	return 0;
}

/*
 * A value's element type: its own, or the inferred one when a frontend
 * left it open (the Parameters of an ONNX Loop body take theirs from the
 * node's inputs).
 */
static int value_type(struct wctx *c, int vi, unsigned int *type)
{
	int err;

	*type = c->g->vals[vi].type;
	if (*type)
		return 0;
	if (!c->inferred) {
		err = body_inferred(c);
		if (err)
			return err;
	}
	*type = c->inferred->vals[vi].type;
	return 0;
}

/* A value's precision; -EINVAL naming the layer when it has none. */
static int value_prec(struct wctx *c, int vi, const char **prec)
{
	const struct npr_value *v = &c->g->vals[vi];
	unsigned int type;
	int err;

	err = value_type(c, vi, &type);
	if (err)
		return err;
	*prec = precision_name(type);
	if (!*prec)
		return npr_node_err(&c->g->nodes[v->producer], -EINVAL,
				    "output %d: element type %s (%u) cannot be written to IR",
				    v->port, npr_elem_name(type), type);
	return 0;
}

/* <port id= precision= names=><dim>..</dim></port> */
static int put_port(struct wctx *c, int id, int vi, bool out)
{
	const struct npr_value *v = &c->g->vals[vi];
	struct npr_shape sh;
	const char *prec;
	char buf[32];
	int i, err;

	err = value_prec(c, vi, &prec);
	if (!err)
		err = value_shape(c, vi, &sh);
	if (err)
		return err;
	X(xmlTextWriterStartElement(c->w, BAD_CAST "port"));
	snprintf(buf, sizeof(buf), "%d", id);
	X(put_attr(c, "id", buf));
	X(put_attr(c, "precision", prec));
	if (out && v->name && *v->name) {
		size_t n = 0, k;
		char *esc = malloc(2 * strlen(v->name) + 1);

		if (!esc)
			return -ENOMEM;
		for (k = 0; v->name[k]; k++) {
			if (v->name[k] == ',')
				esc[n++] = '\\';
			esc[n++] = v->name[k];
		}
		esc[n] = 0;
		err = put_attr(c, "names", esc);
		free(esc);
		if (err)
			return err;
	}
	for (i = 0; i < sh.rank; i++) {
		snprintf(buf, sizeof(buf), "%" PRId64, sh.d[i]);
		X(xmlTextWriterWriteElement(c->w, BAD_CAST "dim",
					    BAD_CAST buf));
	}
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

/* <data> of a Const: the node's attributes with a new offset and size. */
static int const_data(struct wctx *c, const struct npr_node *n, int vi)
{
	static const char *const made[] = {
		"element_type", "shape", "offset", "size"
	};
	const struct npr_value *v = &c->g->vals[vi];
	char txt[4][64], shape[NPR_MAX_RANK * 22 + 1];
	const char *vals[4];
	bool done[4] = { false };
	uint64_t off = 0;
	int i, k, err;

	if (!npr_shape_static(&v->shape) || v->shape.rank < 0 ||
	    npr_tensor_bytes(v->type, npr_shape_numel(&v->shape)) != v->nbytes)
		return npr_node_err(&c->g->nodes[v->producer], -EINVAL,
				    "constant output %d: size does not match its shape",
				    v->port);
	if (!precision_name(v->type))
		return value_prec(c, vi, &vals[0]);
	if (v->nbytes) {
		err = bin_add(c, v->data, v->nbytes, &off);
		if (err)
			return err;
	}
	shape_text(&v->shape, shape, sizeof(shape));
	vals[0] = npr_elem_name(v->type);
	vals[1] = shape;
	snprintf(txt[2], sizeof(txt[2]), "%" PRIu64, off);
	snprintf(txt[3], sizeof(txt[3]), "%zu", v->nbytes);
	vals[2] = txt[2];
	vals[3] = txt[3];
	X(xmlTextWriterStartElement(c->w, BAD_CAST "data"));
	for (i = 0; n && i < n->nattr; i++) {
		const char *val = n->attr[i].val;

		for (k = 0; k < 4; k++)
			if (!strcmp(n->attr[i].key, made[k]))
				break;
		if (k < 4) {
			if (done[k])
				continue;
			done[k] = true;
			/* keep the file's spelling when it means the same */
			if (!(k == 0 && npr_elem_parse(val) == v->type))
				val = vals[k];
		}
		X(put_attr(c, n->attr[i].key, val));
	}
	for (k = 0; k < 4; k++)
		if (!done[k])
			X(put_attr(c, made[k], vals[k]));
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

/* <data> of a Parameter: element_type and shape follow the value. */
static int param_data(struct wctx *c, const struct npr_node *n)
{
	const struct npr_value *v = &c->g->vals[n->out[0]];
	char shape[NPR_MAX_RANK * 22 + 1];
	bool have_et = false, have_shape = false;
	unsigned int type;
	const char *et;
	int i, err;

	err = value_prec(c, n->out[0], &et);
	if (!err)
		err = value_type(c, n->out[0], &type);
	if (err)
		return err;
	et = npr_elem_name(type);
	X(xmlTextWriterStartElement(c->w, BAD_CAST "data"));
	for (i = 0; i < n->nattr; i++) {
		const char *key = n->attr[i].key, *val = n->attr[i].val;

		if (!strcmp(key, "element_type")) {
			if (have_et)
				continue;
			have_et = true;
			if (npr_elem_parse(val) != type)
				val = et;
		} else if (!strcmp(key, "shape")) {
			if (have_shape)
				continue;
			have_shape = true;
			/* a static shape is the one in force; else keep the
			 * file's text (it may hold ranges) */
			if (npr_shape_static(&v->shape) && v->shape.rank >= 0) {
				shape_text(&v->shape, shape, sizeof(shape));
				val = shape;
			}
		}
		X(put_attr(c, key, val));
	}
	if (!have_et)
		X(put_attr(c, "element_type", et));
	if (!have_shape) {
		struct npr_shape sh;

		/* a body Parameter takes its shape from the node's input */
		err = value_shape(c, n->out[0], &sh);
		if (err)
			return err;
		shape_text(&sh, shape, sizeof(shape));
		X(put_attr(c, "shape", shape));
	}
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

static int put_layer_head(struct wctx *c, int64_t id, const char *name,
			  const char *type, unsigned int version)
{
	char buf[32];

	X(xmlTextWriterStartElement(c->w, BAD_CAST "layer"));
	snprintf(buf, sizeof(buf), "%" PRId64, id);
	X(put_attr(c, "id", buf));
	X(put_attr(c, "name", name ? name : ""));
	X(put_attr(c, "type", type));
	if (version) {
		snprintf(buf, sizeof(buf), "opset%u", version);
		X(put_attr(c, "version", buf));
	}
	return 0;
}

/* A made-up Const for a folded value. */
static int synth_layer(struct wctx *c, int vi)
{
	const struct npr_value *v = &c->g->vals[vi];
	const struct npr_node *p = &c->g->nodes[v->producer];
	char *name;
	int err;

	if (asprintf(&name, "%s/folded:%d", p->name, v->port) < 0)
		return -ENOMEM;
	err = put_layer_head(c, c->synth[vi], name, "Const", 1);
	free(name);
	if (!err)
		err = const_data(c, NULL, vi);
	if (err)
		return err;
	X(xmlTextWriterStartElement(c->w, BAD_CAST "output"));
	err = put_port(c, 0, vi, true);
	if (err)
		return err;
	X(xmlTextWriterEndElement(c->w));
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

static int plan(struct wctx *c);
static int write_net(struct wctx *c);

static int put_int(struct wctx *c, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return put_attr(c, key, buf);
}

/* <port_map> of body @b of node @n; @s has planned the body's layers. */
static int put_port_map(struct wctx *c, const struct npr_node *n,
			const struct npr_body *b, const struct wctx *s,
			const char *elem)
{
	int k;

	X(xmlTextWriterStartElement(c->w, BAD_CAST elem));
	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *r = &b->ports[k];
		int idx = r->out ? b->g->outputs[r->internal] :
			  b->g->inputs[r->internal];

		X(xmlTextWriterStartElement(c->w, BAD_CAST (r->out ? "output" :
							    "input")));
		if (r->ext >= 0)
			X(put_int(c, "external_port_id",
				  r->out ? n->nin + r->ext : r->ext));
		X(put_int(c, "internal_layer_id", s->layer[idx]));
		if (r->sliced) {
			X(put_int(c, "axis", r->axis));
			X(put_int(c, "start", r->start));
			X(put_int(c, "end", r->end));
			X(put_int(c, "stride", r->stride));
			X(put_int(c, "part_size", r->part_size));
		}
		if (r->purpose)
			X(put_attr(c, "purpose",
				   r->purpose == NPR_BODY_CURRENT_ITERATION ?
				   "current_iteration" :
				   "execution_condition"));
		X(xmlTextWriterEndElement(c->w));
	}
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

static int put_back_edges(struct wctx *c, const struct npr_body *b,
			  const struct wctx *s)
{
	int k;

	X(xmlTextWriterStartElement(c->w, BAD_CAST "back_edges"));
	for (k = 0; k < b->nback; k++) {
		X(xmlTextWriterStartElement(c->w, BAD_CAST "edge"));
		X(put_int(c, "from-layer",
			  s->layer[b->g->outputs[b->back[k].from]]));
		X(put_int(c, "from-port", 0));
		X(put_int(c, "to-layer", s->layer[b->g->inputs[b->back[k].to]]));
		X(put_int(c, "to-port", 0));
		X(xmlTextWriterEndElement(c->w));
	}
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

/*
 * The bodies of a TensorIterator, Loop (<port_map>, <back_edges>, <body>)
 * or If (<then_port_map>, <else_port_map>, <then_body>, <else_body>):
 * each body a network of its own with layer ids from 0, its constants in
 * the model's one .bin.
 */
static int put_bodies(struct wctx *c, const struct npr_node *n)
{
	static const char *const maps[2] = { "then_port_map", "else_port_map" };
	static const char *const names[2] = { "then_body", "else_body" };
	bool is_if = n->nbodies == 2;
	struct wctx sub[2];
	int bi, err = 0;

	if (n->nbodies > 2)
		return npr_node_err(n, -EINVAL, "has %d bodies", n->nbodies);
	memset(sub, 0, sizeof(sub));
	for (bi = 0; bi < n->nbodies && !err; bi++) {
		sub[bi].parent = c;
		sub[bi].pnode = (int)(n - c->g->nodes);
		sub[bi].pbody = bi;
		sub[bi].g = n->bodies[bi].g;
		sub[bi].w = c->w;
		err = plan(&sub[bi]);
	}
	for (bi = 0; bi < n->nbodies && !err; bi++)
		err = put_port_map(c, n, &n->bodies[bi], &sub[bi],
				   is_if ? maps[bi] : "port_map");
	if (!err && !is_if)
		err = put_back_edges(c, &n->bodies[0], &sub[0]);
	for (bi = 0; bi < n->nbodies && !err; bi++) {
		struct wctx *s = &sub[bi];

		if (xmlTextWriterStartElement(c->w, BAD_CAST (is_if ?
					      names[bi] : "body")) < 0) {
			err = -ENOMEM;
			break;
		}
		s->bin = c->bin;
		s->bin_len = c->bin_len;
		s->bin_cap = c->bin_cap;
		s->consts = c->consts;
		s->cap_consts = c->cap_consts;
		err = write_net(s);
		c->bin = s->bin;
		c->bin_len = s->bin_len;
		c->bin_cap = s->bin_cap;
		if (!err && xmlTextWriterEndElement(c->w) < 0)
			err = -ENOMEM;
	}
	for (bi = 0; bi < 2; bi++) {
		free(sub[bi].layer);
		free(sub[bi].synth);
		free(sub[bi].order);
	}
	return err;
}

static int node_layer(struct wctx *c, const struct npr_node *n)
{
	int i, err;

	err = put_layer_head(c, c->layer[n - c->g->nodes], n->name, n->type,
			     n->version);
	if (err)
		return err;
	if (is_const(n) && n->nout == 1) {
		err = const_data(c, n, n->out[0]);
	} else if (!strcmp(n->type, "Parameter") && n->nout == 1) {
		err = param_data(c, n);
	} else if (n->nattr) {
		X(xmlTextWriterStartElement(c->w, BAD_CAST "data"));
		for (i = 0; i < n->nattr; i++)
			X(put_attr(c, n->attr[i].key, n->attr[i].val));
		X(xmlTextWriterEndElement(c->w));
	}
	if (err)
		return err;
	if (n->nin) {
		X(xmlTextWriterStartElement(c->w, BAD_CAST "input"));
		for (i = 0; i < n->nin; i++) {
			err = put_port(c, i, n->in[i], false);
			if (err)
				return err;
		}
		X(xmlTextWriterEndElement(c->w));
	}
	if (n->nout) {
		X(xmlTextWriterStartElement(c->w, BAD_CAST "output"));
		for (i = 0; i < n->nout; i++) {
			err = put_port(c, n->nin + i, n->out[i], true);
			if (err)
				return err;
		}
		X(xmlTextWriterEndElement(c->w));
	}
	if (n->nbodies) {
		err = put_bodies(c, n);
		if (err)
			return err;
	}
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

static int put_edge(struct wctx *c, int64_t from, int fport, int64_t to,
		    int tport)
{
	char buf[32];

	X(xmlTextWriterStartElement(c->w, BAD_CAST "edge"));
	snprintf(buf, sizeof(buf), "%" PRId64, from);
	X(put_attr(c, "from-layer", buf));
	snprintf(buf, sizeof(buf), "%d", fport);
	X(put_attr(c, "from-port", buf));
	snprintf(buf, sizeof(buf), "%" PRId64, to);
	X(put_attr(c, "to-layer", buf));
	snprintf(buf, sizeof(buf), "%d", tport);
	X(put_attr(c, "to-port", buf));
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

/* Assign layer ids: Parameters, made-up Consts, other nodes, Results. */
static int plan(struct wctx *c)
{
	const struct npr_graph *g = c->g;
	int i, j, id = 0;

	c->layer = malloc(sizeof(*c->layer) * (g->nnodes + 1));
	c->synth = malloc(sizeof(*c->synth) * (g->nvals + 1));
	c->order = malloc(sizeof(*c->order) * (g->nnodes + g->nvals + 1));
	if (!c->layer || !c->synth || !c->order)
		return -ENOMEM;
	for (i = 0; i < g->nnodes; i++)
		c->layer[i] = -1;
	for (i = 0; i < g->nvals; i++)
		c->synth[i] = -1;
	for (i = 0; i < g->ninputs; i++) {
		c->layer[g->inputs[i]] = id;
		c->order[id++] = g->inputs[i];
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++) {
			int vi = n->in[j];
			const struct npr_value *v = &g->vals[vi];

			if (!g->nodes[v->producer].dead || c->synth[vi] >= 0)
				continue;
			if (!v->data) {
				const struct npr_node *p =
					&g->nodes[v->producer];

				return npr_node_err(n, -EINVAL,
						    "input %d comes from removed layer %s",
						    j, p->name);
			}
			c->synth[vi] = id;
			c->order[id++] = ~vi;
		}
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead || c->layer[i] >= 0 || !strcmp(n->type, "Result"))
			continue;
		c->layer[i] = id;
		c->order[id++] = i;
	}
	for (i = 0; i < g->noutputs; i++) {
		c->layer[g->outputs[i]] = id;
		c->order[id++] = g->outputs[i];
	}
	c->nlayers = id;
	return 0;
}

/*
 * Every string the file will hold (names, types, attributes) must be
 * UTF-8, which XML requires; a frontend may pass on any bytes (protobuf-c
 * does not check ONNX strings).
 */
static int check_text(const struct npr_graph *g)
{
	int i, k, err;

	if (g->name && !xmlCheckUTF8(BAD_CAST g->name))
		return npr_err(-EINVAL,
			       "the model name is not valid UTF-8: it cannot be written to IR");
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];
		const char *bad = NULL;

		if (n->dead)
			continue;
		if (!xmlCheckUTF8(BAD_CAST n->name))
			bad = "its name";
		else if (!xmlCheckUTF8(BAD_CAST n->type))
			bad = "its type";
		for (k = 0; !bad && k < n->nattr; k++)
			if (!xmlCheckUTF8(BAD_CAST n->attr[k].key) ||
			    !xmlCheckUTF8(BAD_CAST n->attr[k].val))
				bad = "an attribute";
		for (k = 0; !bad && k < n->nout; k++) {
			const char *vn = g->vals[n->out[k]].name;

			if (vn && !xmlCheckUTF8(BAD_CAST vn))
				bad = "an output name";
		}
		if (bad)
			return npr_err(-EINVAL,
				       "layer %lld: %s is not valid UTF-8: it cannot be written to IR",
				       (long long)n->layer_id, bad);
		for (k = 0; k < n->nbodies; k++) {
			char msg[512];

			err = check_text(n->bodies[k].g);
			if (!err)
				continue;
			snprintf(msg, sizeof(msg), "%s", npr_last_error());
			return npr_node_err(n, err, "body %d: %s", k, msg);
		}
	}
	return 0;
}

/* Values of a graph and all its bodies: a bound on the constants. */
static size_t count_vals(const struct npr_graph *g)
{
	size_t cnt = g->nvals;
	int i, b;

	for (i = 0; i < g->nnodes; i++)
		for (b = 0; b < g->nodes[i].nbodies; b++)
			cnt += count_vals(g->nodes[i].bodies[b].g);
	return cnt;
}

/* <layers> and <edges> of the model or of a body. */
static int write_net(struct wctx *c)
{
	const struct npr_graph *g = c->g;
	int i, j, err;

	X(xmlTextWriterStartElement(c->w, BAD_CAST "layers"));
	for (i = 0; i < c->nlayers; i++) {
		int k = c->order[i];

		err = k < 0 ? synth_layer(c, ~k) : node_layer(c, &g->nodes[k]);
		if (err)
			return err;
	}
	X(xmlTextWriterEndElement(c->w));
	X(xmlTextWriterStartElement(c->w, BAD_CAST "edges"));
	for (i = 0; i < c->nlayers; i++) {
		const struct npr_node *n;

		if (c->order[i] < 0)
			continue;
		n = &g->nodes[c->order[i]];
		for (j = 0; j < n->nin; j++) {
			int vi = n->in[j];
			const struct npr_value *v = &g->vals[vi];
			const struct npr_node *p = &g->nodes[v->producer];

			if (c->synth[vi] >= 0)
				err = put_edge(c, c->synth[vi], 0, i, j);
			else
				err = put_edge(c, c->layer[v->producer],
					       p->nin + v->port, i, j);
			if (err)
				return err;
		}
	}
	X(xmlTextWriterEndElement(c->w));
	return 0;
}

static int write_doc(struct wctx *c)
{
	const struct npr_graph *g = c->g;
	int err;

	X(xmlTextWriterSetIndent(c->w, 1));
	X(xmlTextWriterSetIndentString(c->w, BAD_CAST "\t"));
	X(xmlTextWriterStartDocument(c->w, NULL, NULL, NULL));
	X(xmlTextWriterStartElement(c->w, BAD_CAST "net"));
	X(put_attr(c, "name", g->name && *g->name ? g->name : "model"));
	X(put_attr(c, "version", "11"));
	err = write_net(c);
	if (err)
		return err;
	X(xmlTextWriterEndElement(c->w));
	X(xmlTextWriterEndDocument(c->w));
	return 0;
}

/**
 * npr_ir_write_mem() - serialize a graph to IR v11 in memory
 * @g: a loaded or compiled graph (not modified); one that lacks shapes is
 *     inferred first, folding with its own evaluator (@g->fold).
 * @xml, @xml_len: out: the .xml bytes (NUL-terminated; free()).
 * @bin, @bin_len: out: the .bin bytes (free(); non-NULL even when empty).
 *
 * Return: 0, or -EINVAL (a value with an element type IR cannot name, a
 * value without a shape, a constant whose size is wrong) or -ENOMEM, with
 * a message naming the layer.
 */
int npr_ir_write_mem(const struct npr_graph *g, char **xml, size_t *xml_len,
		     void **bin, size_t *bin_len)
{
	struct wctx c = { .g = g };
	xmlBufferPtr buf = NULL;
	int err;

	*xml = NULL;
	*bin = NULL;
	*xml_len = *bin_len = 0;
	err = check_text(g);
	if (!err)
		err = plan(&c);
	if (err)
		goto out;
	c.cap_consts = 64;
	while (c.cap_consts < 2 * count_vals(g))
		c.cap_consts *= 2;
	c.consts = calloc(c.cap_consts, sizeof(*c.consts));
	if (!c.consts) {
		err = -ENOMEM;
		goto out;
	}
	buf = xmlBufferCreate();
	if (buf)
		c.w = xmlNewTextWriterMemory(buf, 0);
	if (!c.w) {
		err = -ENOMEM;
		goto out;
	}
	err = write_doc(&c);
	xmlFreeTextWriter(c.w);	/* flushes into buf */
	c.w = NULL;
	if (err)
		goto out;
	*xml = malloc(xmlBufferLength(buf) + 1);
	if (!*xml) {
		err = -ENOMEM;
		goto out;
	}
	*xml_len = xmlBufferLength(buf);
	memcpy(*xml, xmlBufferContent(buf), *xml_len);
	(*xml)[*xml_len] = 0;
	*bin = c.bin ? (void *)c.bin : malloc(1);
	if (!*bin) {
		free(*xml);
		*xml = NULL;
		err = -ENOMEM;
		goto out;
	}
	*bin_len = c.bin_len;
	c.bin = NULL;
out:
	if (err == -ENOMEM)
		npr_err(err, "out of memory writing IR");
	if (buf)
		xmlBufferFree(buf);
	if (c.inferred)
		npr_graph_free(c.inferred);
	if (c.inferred2)
		npr_graph_free(c.inferred2);
	free(c.bin);
	free(c.consts);
	free(c.layer);
	free(c.synth);
	free(c.order);
	return err;
}

/* Write @len bytes to a new temporary file next to @path; *tmp its name. */
static int write_tmp(const char *path, const void *data, size_t len,
		     char **tmp)
{
	const char *p = data;
	int fd, err = 0;

	if (asprintf(tmp, "%s.tmpXXXXXX", path) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	fd = mkstemp(*tmp);
	if (fd < 0) {
		err = -errno;
		npr_err(err, "cannot create %s: %s", path, strerror(-err));
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= n;
	}
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		npr_err(err, "cannot write %s: %s", path, strerror(-err));
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return err;
}

/**
 * npr_ir_write() - serialize a graph to an IR v11 .xml and .bin
 * @g: a loaded or compiled graph (not modified; see npr_ir_write_mem()).
 * @xml_path: the .xml to write.
 * @bin_path: the .bin to write, or NULL for @xml_path with .bin.
 *
 * Both files are written to temporary names and renamed into place, so a
 * failure leaves nothing behind and never a half-written file.
 *
 * Return: 0, an error of npr_ir_write_mem(), or the -errno of creating,
 * writing or renaming a file, with a message naming it.
 */
int npr_ir_write(const struct npr_graph *g, const char *xml_path,
		 const char *bin_path)
{
	char *xml = NULL, *bpath = NULL, *txml = NULL, *tbin = NULL;
	size_t xml_len, bin_len, n;
	void *bin = NULL;
	int err;

	if (!bin_path) {
		const char *dot = strrchr(xml_path, '.');
		const char *slash = strrchr(xml_path, '/');

		n = dot && (!slash || dot > slash) ? (size_t)(dot - xml_path) :
		    strlen(xml_path);
		if (asprintf(&bpath, "%.*s.bin", (int)n, xml_path) < 0)
			return npr_err(-ENOMEM, "out of memory writing IR");
		bin_path = bpath;
	}
	err = npr_ir_write_mem(g, &xml, &xml_len, &bin, &bin_len);
	if (!err)
		err = write_tmp(bin_path, bin, bin_len, &tbin);
	if (!err)
		err = write_tmp(xml_path, xml, xml_len, &txml);
	if (!err && rename(tbin, bin_path)) {
		err = -errno;
		npr_err(err, "cannot rename %s to %s: %s", tbin, bin_path,
			strerror(-err));
	}
	if (!err && rename(txml, xml_path)) {
		err = -errno;
		npr_err(err, "cannot rename %s to %s: %s", txml, xml_path,
			strerror(-err));
		unlink(bin_path);
	}
	if (err) {
		if (tbin)
			unlink(tbin);
		if (txml)
			unlink(txml);
	}
	free(tbin);
	free(txml);
	free(bpath);
	free(xml);
	free(bin);
	return err;
}
