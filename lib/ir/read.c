// SPDX-License-Identifier: MIT
/*
 * OpenVINO IR frontend: an IR v10 or v11 .xml and its .bin weights become
 * a struct npr_graph.
 *
 * The file is untrusted input.  Every id, port, edge, element type, shape
 * and Const slice is checked, and every failure leaves a message that names
 * the layer (id, name, op) and what is wrong.  A document with a DOCTYPE is
 * refused before its internal subset is read, so no entity is ever declared
 * or expanded; the network is never touched.
 *
 * Layers become nodes in file order (node i is layer i until the final
 * topological sort); each output port becomes a value.  Ports are looked
 * up by id, never by position: a node's inputs and outputs are its input
 * and output ports in increasing id order.
 *
 * The bodies of TensorIterator, Loop and If (<body>, <then_body>,
 * <else_body>) are networks of their own, read by the same code into
 * graphs the node owns; their <port_map> and <back_edges> name body
 * layers by id and become struct npr_body rules (lib/graph/graph.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "graph/file.h"
#include "ir.h"

/* Longest op type or version string accepted. */
#define IR_MAX_TYPE	256

struct ir_port {
	int64_t id;
	xmlNode *x;
	bool out;
	int index;		/* input or output number on the node */
	int64_t from_layer;	/* inputs: source of the edge, -1 if none */
};

struct ir_layer {
	int64_t id;
	const char *version;	/* as written in the file, or NULL */
	int nports;
	struct ir_port *ports;	/* sorted by id */
};

struct ir_ctx {
	struct npr_graph *g;
	xmlDoc *doc;
	int line_offset;	/* lines dropped before the xml declaration */
	const char *bin_hint;	/* a weights file that was not found */
	struct ir_layer *layers;	/* layer i is node i until the sort */
	int nlayers;
	int *by_id;		/* layer indexes sorted by id */
	xmlChar **scratch;	/* strings to free with the context */
	int nscratch, cap_scratch;
	int depth;		/* 0 for the model, 1 for a body of it, ... */
};

/* What the libxml2 callbacks report back. */
struct xml_state {
	char msg[256];
	int line;
	bool have_error;
	bool nomem;
	bool doctype;
};

/* ---- small helpers ---------------------------------------------------- */

static bool is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

static unsigned int line_of(const struct ir_ctx *c, const xmlNode *n)
{
	return (unsigned int)xmlGetLineNo((xmlNode *)n) + c->line_offset;
}

/* Keep a libxml2 string until the context goes away. */
static const char *keep(struct ir_ctx *c, xmlChar *s)
{
	if (!s)
		return NULL;
	if (c->nscratch == c->cap_scratch) {
		int cap = c->cap_scratch ? 2 * c->cap_scratch : 16;
		xmlChar **p = realloc(c->scratch, sizeof(*p) * cap);

		if (!p) {
			xmlFree(s);
			return NULL;
		}
		c->scratch = p;
		c->cap_scratch = cap;
	}
	c->scratch[c->nscratch++] = s;
	return (const char *)s;
}

/*
 * Text of a node list (an attribute value or an element's content).  The
 * common case, one text node, is returned in place; anything else is
 * flattened into a copy owned by the context.  *oom is set if that fails.
 */
static const char *list_text(struct ir_ctx *c, xmlNode *list, bool *oom)
{
	const char *s;

	if (!list)
		return "";
	if (list->type == XML_TEXT_NODE && !list->next && list->content)
		return (const char *)list->content;
	s = keep(c, xmlNodeListGetString(c->doc, list, 1));
	if (!s) {
		*oom = true;
		return "";
	}
	return s;
}

/* An attribute's value, or NULL when absent.  May set *oom. */
static const char *xattr(struct ir_ctx *c, xmlNode *n, const char *name,
			 bool *oom)
{
	xmlAttr *a;

	for (a = n->properties; a; a = a->next)
		if (!strcmp((const char *)a->name, name))
			return list_text(c, a->children, oom);
	return NULL;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* Decimal digits, optionally surrounded by white space; no sign. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!s)
		return -EINVAL;
	p = skip_ws(s);
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*skip_ws(p))
		return -EINVAL;
	*out = v;
	return 0;
}

/* A layer or port id: 0..INT64_MAX. */
static int parse_id(const char *s, int64_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > INT64_MAX)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

/* "opset3" -> 3; any other name ("experimental", "extension") -> 0. */
static unsigned int opset_number(const char *v)
{
	unsigned int n = 0;
	const char *p;

	if (!v || strncmp(v, "opset", 5) || !v[5])
		return 0;
	for (p = v + 5; *p; p++) {
		if (!isdigit((unsigned char)*p) || n > 100000)
			return 0;
		n = n * 10 + (*p - '0');
	}
	return n;
}

/*
 * Port precision ("FP32", "I64", "BIN", ...) to an element type.
 * Returns the type, 0 for an unspecified type, -EINVAL if unknown.
 */
static int precision_parse(const char *s)
{
	static const struct {
		const char *name;
		unsigned int type;
	} map[] = {
		{ "FP32", NPR_ELEM_F32 },	{ "FP16", NPR_ELEM_F16 },
		{ "BF16", NPR_ELEM_BF16 },	{ "FP64", NPR_ELEM_F64 },
		{ "I4", NPR_ELEM_I4 },		{ "U4", NPR_ELEM_U4 },
		{ "I8", NPR_ELEM_I8 },		{ "U8", NPR_ELEM_U8 },
		{ "I16", NPR_ELEM_I16 },	{ "U16", NPR_ELEM_U16 },
		{ "I32", NPR_ELEM_I32 },	{ "U32", NPR_ELEM_U32 },
		{ "I64", NPR_ELEM_I64 },	{ "U64", NPR_ELEM_U64 },
		{ "BOOL", NPR_ELEM_BOOLEAN },	{ "BOOLEAN", NPR_ELEM_BOOLEAN },
		{ "U1", NPR_ELEM_U1 },		{ "BIN", NPR_ELEM_U1 },
		{ "UNSPECIFIED", 0 },		{ "DYNAMIC", 0 },
		{ "UNDEFINED", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcasecmp(s, map[i].name))
			return map[i].type;
	return -EINVAL;
}

/*
 * One dimension: 0..NPR_IR_MAX_DIM, or "-1" / "?" for a dynamic one.  With
 * @ranges, a bounded "lo..hi" is accepted too (dynamic here).
 */
static int parse_dim(const char *s, size_t len, bool ranges, int64_t *out)
{
	char tok[64];
	const char *dots;
	uint64_t v, hi;
	char *e;

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!len || len >= sizeof(tok))
		return -EINVAL;
	memcpy(tok, s, len);
	tok[len] = 0;
	if (!strcmp(tok, "?") || !strcmp(tok, "-1")) {
		*out = -1;
		return 0;
	}
	dots = strstr(tok, "..");
	if (ranges && dots) {
		e = (char *)dots;
		*e = 0;
		if ((tok[0] && parse_u64(tok, &v)) ||
		    (e[2] && parse_u64(e + 2, &hi)))
			return -EINVAL;
		*out = -1;
		return 0;
	}
	if (parse_u64(tok, &v) || v > NPR_IR_MAX_DIM)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

/*
 * Element count of the static part of a shape.  Returns 0 with *numel set
 * (-1 when a dimension is dynamic), or -EOVERFLOW.
 */
static int shape_numel(const struct npr_shape *s, int64_t *numel)
{
	int64_t n = 1;
	bool dyn = false, zero = false;
	int i;

	for (i = 0; i < s->rank; i++) {
		if (s->d[i] < 0)
			dyn = true;
		else if (!s->d[i])
			zero = true;
	}
	for (i = 0; i < s->rank && !zero; i++) {
		if (s->d[i] <= 0)
			continue;
		if (n > INT64_MAX / s->d[i])
			return -EOVERFLOW;
		n *= s->d[i];
	}
	*numel = zero ? 0 : dyn ? -1 : n;
	return 0;
}

/* Two shapes agree where both are known. */
static bool shape_compatible(const struct npr_shape *a,
			     const struct npr_shape *b)
{
	int i;

	if (a->rank != b->rank)
		return false;
	for (i = 0; i < a->rank; i++)
		if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i])
			return false;
	return true;
}

/*
 * First entry of a port's "names": entries are separated by commas, a
 * comma inside a name is written "\,", white space around is dropped.
 * *out is NULL when the list is empty.
 */
static int first_name(const char *s, char **out)
{
	const char *p = skip_ws(s);
	size_t n = 0;
	char *d;

	*out = NULL;
	d = malloc(strlen(p) + 1);
	if (!d)
		return -ENOMEM;
	for (; *p && *p != ','; p++) {
		if (*p == '\\' && p[1] == ',')
			p++;
		d[n++] = *p;
	}
	while (n && isspace((unsigned char)d[n - 1]))
		n--;
	d[n] = 0;
	if (!n) {
		free(d);
		return 0;
	}
	if (n > NPR_IR_MAX_NAME) {
		free(d);
		return -ENAMETOOLONG;
	}
	*out = d;
	return 0;
}

static struct npr_node *node_of(struct ir_ctx *c, int li)
{
	return &c->g->nodes[li];
}

/* ---- shapes ----------------------------------------------------------- */

/* A port's <dim> children into @sh; errors name the port. */
static int port_shape(struct ir_ctx *c, int li, const struct ir_port *p,
		      struct npr_shape *sh)
{
	const char *dir = p->out ? "output" : "input";
	bool oom = false;
	int64_t numel;
	xmlNode *d;

	sh->rank = 0;
	for (d = p->x->children; d; d = d->next) {
		const char *txt;

		if (!is_elem(d, "dim"))
			continue;
		if (sh->rank == NPR_MAX_RANK)
			return npr_node_err(node_of(c, li), -EOPNOTSUPP,
					    "%s port %lld has more than %d dims",
					    dir, (long long)p->id,
					    NPR_MAX_RANK);
		txt = list_text(c, d->children, &oom);
		if (oom)
			return -ENOMEM;
		if (parse_dim(txt, strlen(txt), false, &sh->d[sh->rank]))
			return npr_node_err(node_of(c, li), -EINVAL,
					    "%s port %lld: bad dim \"%.40s\" (want 0..2^40, -1 or ?)",
					    dir, (long long)p->id, txt);
		sh->rank++;
	}
	if (shape_numel(sh, &numel))
		return npr_node_err(node_of(c, li), -EOVERFLOW,
				    "%s port %lld: the dims multiply to more than 2^63 elements",
				    dir, (long long)p->id);
	return 0;
}

/*
 * The "shape" attribute of Parameter and Const: "1,3,224,224", "" for a
 * scalar, "?" or -1 for a dynamic dim, "lo..hi" with @ranges.  "..."
 * (dynamic rank) is refused.
 */
static int shape_attr(struct ir_ctx *c, int li, const char *s, bool ranges,
		      struct npr_shape *sh)
{
	struct npr_node *n = node_of(c, li);
	const char *p = skip_ws(s);
	int64_t numel;

	sh->rank = 0;
	if (!*p)
		return 0;
	if (!strncmp(p, "...", 3))
		return npr_node_err(n, -EOPNOTSUPP,
				    "dynamic rank (shape \"...\") is not supported");
	for (;;) {
		size_t len = strcspn(p, ",");

		if (sh->rank == NPR_MAX_RANK)
			return npr_node_err(n, -EOPNOTSUPP,
					    "shape \"%.80s\" has more than %d dims",
					    s, NPR_MAX_RANK);
		if (parse_dim(p, len, ranges, &sh->d[sh->rank]))
			return npr_node_err(n, -EINVAL,
					    "bad dim \"%.*s\" in shape \"%.80s\"",
					    (int)(len < 40 ? len : 40), p, s);
		sh->rank++;
		p += len;
		if (!*p)
			break;
		p++;
	}
	if (shape_numel(sh, &numel))
		return npr_node_err(n, -EOVERFLOW,
				    "shape \"%.80s\" has more than 2^63 elements",
				    s);
	return 0;
}

/* ---- layers ----------------------------------------------------------- */

static int cmp_port(const void *a, const void *b)
{
	const struct ir_port *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct ir_port *find_port(struct ir_layer *l, int64_t id)
{
	struct ir_port key = { .id = id };

	return bsearch(&key, l->ports, l->nports, sizeof(key), cmp_port);
}

/* Ports of <input> and <output>, sorted by id, numbered per direction. */
static int collect_ports(struct ir_ctx *c, int li, xmlNode *in,
			 xmlNode *out, int *nin, int *nout)
{
	struct ir_layer *l = &c->layers[li];
	xmlNode *sect[2] = { in, out }, *p;
	bool oom = false;
	int k = 0, s, i;

	for (s = 0; s < 2; s++)
		for (p = sect[s] ? sect[s]->children : NULL; p; p = p->next)
			if (is_elem(p, "port"))
				k++;
	*nin = *nout = 0;
	if (!k)
		return 0;
	l->ports = calloc(k, sizeof(*l->ports));
	if (!l->ports)
		return -ENOMEM;
	for (s = 0; s < 2; s++) {
		for (p = sect[s] ? sect[s]->children : NULL; p; p = p->next) {
			struct ir_port *pt = &l->ports[l->nports];
			const char *id;

			if (!is_elem(p, "port"))
				continue;
			id = xattr(c, p, "id", &oom);
			if (oom)
				return -ENOMEM;
			if (parse_id(id, &pt->id))
				return npr_node_err(node_of(c, li), -EINVAL,
						    "%s port (line %u) has %s id \"%.40s\"",
						    s ? "an output" : "an input",
						    line_of(c, p),
						    id ? "a bad" : "no",
						    id ? id : "");
			pt->x = p;
			pt->out = s;
			pt->from_layer = -1;
			l->nports++;
		}
	}
	qsort(l->ports, l->nports, sizeof(*l->ports), cmp_port);
	for (i = 0; i < l->nports; i++) {
		struct ir_port *pt = &l->ports[i];

		if (i && pt->id == pt[-1].id)
			return npr_node_err(node_of(c, li), -EINVAL,
					    "port id %lld is used twice",
					    (long long)pt->id);
		pt->index = pt->out ? (*nout)++ : (*nin)++;
	}
	return 0;
}

/* Type, declared shape and tensor name of every output value. */
static int output_values(struct ir_ctx *c, int li)
{
	struct ir_layer *l = &c->layers[li];
	bool oom = false;
	int i, err;

	for (i = 0; i < l->nports; i++) {
		struct ir_port *p = &l->ports[i];
		struct npr_shape sh;
		struct npr_value *v = NULL;
		const char *prec, *names;
		int t;

		err = port_shape(c, li, p, &sh);
		if (err)
			return err;
		if (!p->out)
			continue;
		v = &c->g->vals[node_of(c, li)->out[p->index]];
		v->decl = sh;
		v->shape = sh;
		prec = xattr(c, p->x, "precision", &oom);
		names = xattr(c, p->x, "names", &oom);
		if (oom)
			return -ENOMEM;
		if (prec) {
			t = precision_parse(prec);
			if (t < 0)
				return npr_node_err(node_of(c, li), -EINVAL,
						    "output port %lld: unknown precision \"%.40s\"",
						    (long long)p->id, prec);
			v->type = t;
		}
		if (names) {
			err = first_name(names, &v->name);
			if (err == -ENAMETOOLONG)
				return npr_node_err(node_of(c, li), err,
						    "output port %lld: a tensor name is longer than %d bytes",
						    (long long)p->id,
						    NPR_IR_MAX_NAME);
			if (err)
				return err;
		}
	}
	return 0;
}

/* "element_type" of Parameter and Const. */
static int elem_type_attr(struct ir_ctx *c, int li, unsigned int *type)
{
	struct npr_node *n = node_of(c, li);
	const char *et = npr_attr(n, "element_type");
	unsigned int t = 0;

	if (!et)
		return npr_node_err(n, -EINVAL, "missing element_type");
	t = npr_elem_parse(et);
	if (!t && !strcmp(et, "boolean"))
		t = NPR_ELEM_BOOLEAN;
	if (!t && (!strcmp(et, "dynamic") || !strcmp(et, "undefined")))
		return npr_node_err(n, -EOPNOTSUPP,
				    "element_type %s is not supported", et);
	if (!t)
		return npr_node_err(n, -EINVAL, "bad element_type \"%.40s\"",
				    et);
	*type = t;
	return 0;
}

/* The single output value of a Parameter or Const, checked. */
static int source_value(struct ir_ctx *c, int li, int nin, int nout,
			struct npr_value **vp)
{
	struct npr_node *n = node_of(c, li);
	unsigned int t = 0;
	int err;

	if (nin || nout != 1)
		return npr_node_err(n, -EINVAL,
				    "has %d input and %d output ports, needs 0 and 1",
				    nin, nout);
	err = elem_type_attr(c, li, &t);
	if (err)
		return err;
	*vp = &c->g->vals[n->out[0]];
	if ((*vp)->type && (*vp)->type != t)
		return npr_node_err(n, -EINVAL,
				    "element_type %s differs from the output port's precision (%s)",
				    npr_elem_name(t),
				    npr_elem_name((*vp)->type));
	(*vp)->type = t;
	return 0;
}

static int parameter_layer(struct ir_ctx *c, int li, int nin, int nout)
{
	struct npr_node *n = node_of(c, li);
	struct npr_value *v = NULL;
	struct npr_shape sh;
	const char *s;
	int err;

	err = source_value(c, li, nin, nout, &v);
	if (err)
		return err;
	s = npr_attr(n, "shape");
	if (!s)
		return 0;	/* the port's dims stand */
	err = shape_attr(c, li, s, true, &sh);
	if (err)
		return err;
	if (!shape_compatible(&sh, &v->decl))
		return npr_node_err(n, -EINVAL,
				    "shape \"%.80s\" does not match the output port's dims",
				    s);
	v->shape = sh;
	return 0;
}

/* Point a Const's value at its slice of the weights, all of it checked. */
static int const_layer(struct ir_ctx *c, int li, int nin, int nout)
{
	struct npr_node *n = node_of(c, li);
	struct npr_blob *w = c->g->weights;
	uint64_t off, size, need;
	const char *s, *so, *ss;
	struct npr_value *v = NULL;
	const char *ptr;
	int64_t numel = 0;
	char buf[160];
	size_t align;
	int err;

	err = source_value(c, li, nin, nout, &v);
	if (err)
		return err;
	s = npr_attr(n, "shape");
	if (!s)
		return npr_node_err(n, -EINVAL, "missing shape");
	err = shape_attr(c, li, s, false, &v->shape);
	if (err)
		return err;
	if (!npr_shape_static(&v->shape))
		return npr_node_err(n, -EINVAL,
				    "shape \"%.80s\" is not static", s);
	if (!shape_compatible(&v->shape, &v->decl))
		return npr_node_err(n, -EINVAL,
				    "shape \"%.80s\" does not match the output port's dims",
				    s);
	v->decl = v->shape;
	shape_numel(&v->shape, &numel);
	align = npr_elem_size(v->type) ? npr_elem_size(v->type) : 1;
	if ((uint64_t)numel > UINT64_MAX / align)
		return npr_node_err(n, -EOVERFLOW,
				    "shape %s of %s is too large",
				    npr_shape_str(&v->shape, buf, sizeof(buf)),
				    npr_elem_name(v->type));
	need = npr_tensor_bytes(v->type, numel);
	so = npr_attr(n, "offset");
	ss = npr_attr(n, "size");
	if (parse_u64(so, &off))
		return npr_node_err(n, -EINVAL, "%s offset \"%.40s\"",
				    so ? "bad" : "missing", so ? so : "");
	if (parse_u64(ss, &size))
		return npr_node_err(n, -EINVAL, "%s size \"%.40s\"",
				    ss ? "bad" : "missing", ss ? ss : "");
	if (size != need)
		return npr_node_err(n, -EINVAL,
				    "size %llu does not match shape %s of %s (%llu bytes)",
				    (unsigned long long)size,
				    npr_shape_str(&v->shape, buf, sizeof(buf)),
				    npr_elem_name(v->type),
				    (unsigned long long)need);
	if (size > UINT64_MAX - off)
		return npr_node_err(n, -EOVERFLOW,
				    "offset %llu + size %llu overflows",
				    (unsigned long long)off,
				    (unsigned long long)size);
	if (!size) {
		/* no bytes, but still a constant: data must be non-NULL */
		v->owned = malloc(1);
		if (!v->owned)
			return -ENOMEM;
		v->data = v->owned;
		v->nbytes = 0;
		return 0;
	}
	if (!w && c->bin_hint)
		return npr_node_err(n, -ENOENT,
				    "needs %llu bytes of weights but %s does not exist",
				    (unsigned long long)size, c->bin_hint);
	if (!w)
		return npr_node_err(n, -EINVAL,
				    "needs %llu bytes of weights but no .bin was given",
				    (unsigned long long)size);
	if (off > w->size || size > w->size - off)
		return npr_node_err(n, -EINVAL,
				    "data [%llu, %llu) is past the end of the weights (%zu bytes)",
				    (unsigned long long)off,
				    (unsigned long long)(off + size), w->size);
	ptr = (const char *)w->data + off;
	if ((uintptr_t)ptr % align) {
		/*
		 * Converters write slices at any byte offset; kernels and
		 * the compiler may assume natural alignment, so copy the few
		 * slices that lack it.
		 */
		v->owned = malloc(size);
		if (!v->owned)
			return -ENOMEM;
		memcpy(v->owned, ptr, size);
		ptr = v->owned;
	}
	v->data = ptr;
	v->nbytes = size;
	return 0;
}

/* The op definition of a node, or a message saying why there is none. */
static int resolve_op(struct ir_ctx *c, int li)
{
	struct npr_node *n = node_of(c, li);
	const char *ver = c->layers[li].version;

	n->op = npr_op_find(n->type, n->version);
	if (n->op)
		return 0;
	if (n->version && npr_op_find(n->type, 0))
		return npr_err(-EOPNOTSUPP,
			       "layer %lld (%s): op %s has no version %s",
			       (long long)n->layer_id, n->name, n->type, ver);
	return npr_err(-EOPNOTSUPP, "layer %lld (%s): unknown op %s (%s)",
		       (long long)n->layer_id, n->name, n->type,
		       ver ? ver : "no version");
}

/* ---- bodies ----------------------------------------------------------- */

static int build(struct ir_ctx *c, xmlNode *net);
static void ctx_fini(struct ir_ctx *c);

/* A signed decimal integer, white space around allowed. */
static int parse_i64(const char *s, int64_t *out)
{
	const char *p;
	uint64_t v;
	bool neg;

	if (!s)
		return -EINVAL;
	p = skip_ws(s);
	neg = *p == '-';
	if (neg)
		p++;
	if (parse_u64(p, &v) || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* An integer attribute of a port map rule; @def when absent. */
static int rule_int(struct ir_ctx *c, int li, xmlNode *x, const char *key,
		    int64_t def, bool *present, int64_t *out)
{
	bool oom = false;
	const char *s = xattr(c, x, key, &oom);

	if (oom)
		return -ENOMEM;
	if (present)
		*present = s != NULL;
	if (!s) {
		*out = def;
		return 0;
	}
	if (parse_i64(s, out) || *out < INT32_MIN || *out > INT32_MAX)
		return npr_node_err(node_of(c, li), -EINVAL,
				    "<%s> at line %u: bad %s \"%.40s\"",
				    x->name, line_of(c, x), key, s);
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
			return npr_node_err(node_of(c, li), -EINVAL,
					    "<%s> at line %u: %s body layer %lld, which is a %s, not a %s",
					    x->name, line_of(c, x), role,
					    (long long)id, body->nodes[i].type,
					    result ? "Result" : "Parameter");
	return npr_node_err(node_of(c, li), -EINVAL,
			    "<%s> at line %u: %s body layer %lld, which does not exist",
			    x->name, line_of(c, x), role, (long long)id);
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

	bp.out = is_elem(x, "output");
	if (!bp.out && !is_elem(x, "input"))
		return npr_node_err(node_of(c, li), -EINVAL,
				    "unexpected <%.40s> in a port map at line %u",
				    x->name, line_of(c, x));
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
	purpose = xattr(c, x, "purpose", &oom);
	if (oom)
		return -ENOMEM;
	if (purpose && !strcmp(purpose, "current_iteration") && !bp.out)
		bp.purpose = NPR_BODY_CURRENT_ITERATION;
	else if (purpose && !strcmp(purpose, "execution_condition") && bp.out)
		bp.purpose = NPR_BODY_EXECUTION_CONDITION;
	else if (purpose && *purpose)
		return npr_node_err(node_of(c, li), -EINVAL,
				    "<%s> at line %u: unknown purpose \"%.40s\"",
				    x->name, line_of(c, x), purpose);
	if (ext >= 0) {
		struct ir_port *p = find_port(l, ext);

		if (!p || p->out != bp.out)
			return npr_node_err(node_of(c, li), -EINVAL,
					    "<%s> at line %u: external_port_id %lld is not an %s port of this layer",
					    x->name, line_of(c, x),
					    (long long)ext,
					    bp.out ? "output" : "input");
		bp.ext = p->index;
	} else if (!bp.purpose) {
		return npr_node_err(node_of(c, li), -EINVAL,
				    "<%s> at line %u: external_port_id is missing",
				    x->name, line_of(c, x));
	}
	err = rule_int(c, li, x, "internal_layer_id", -1, NULL, &id);
	if (err)
		return err;
	if (id < 0)
		return npr_node_err(node_of(c, li), -EINVAL,
				    "<%s> at line %u: internal_layer_id is missing",
				    x->name, line_of(c, x));
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

	if (!is_elem(x, "edge"))
		return npr_node_err(node_of(c, li), -EINVAL,
				    "unexpected <%.40s> in <back_edges> at line %u",
				    x->name, line_of(c, x));
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
	struct npr_node *n = node_of(c, li);
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
	sub.g->weights = npr_blob_get(c->g->weights);
	sub.g->name = strdup(what);
	err = sub.g->name ? build(&sub, body) : -ENOMEM;
	sub.doc = NULL;		/* the model's */
	ctx_fini(&sub);
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
	struct npr_node *n = node_of(c, li);
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

	sid = xattr(c, x, "id", &oom);
	name = xattr(c, x, "name", &oom);
	type = xattr(c, x, "type", &oom);
	l->version = xattr(c, x, "version", &oom);
	if (oom)
		return -ENOMEM;
	if (parse_id(sid, &l->id))
		return npr_err(-EINVAL, "layer #%d (line %u, name \"%.64s\"): %s id \"%.40s\"",
			       li, line_of(c, x), name ? name : "",
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
	idx = npr_graph_add_node(c->g, name, type, opset_number(l->version),
				 l->id);
	if (idx < 0)
		return idx;
	for (ch = x->children; ch; ch = ch->next) {
		xmlNode **slot;

		if (is_elem(ch, "data"))
			slot = &data;
		else if (is_elem(ch, "input"))
			slot = &in;
		else if (is_elem(ch, "output"))
			slot = &out;
		else if (is_elem(ch, "body") || is_elem(ch, "then_body"))
			slot = &sub[0];
		else if (is_elem(ch, "else_body"))
			slot = &sub[1];
		else if (is_elem(ch, "port_map") ||
			 is_elem(ch, "then_port_map"))
			slot = &sub[2];
		else if (is_elem(ch, "else_port_map"))
			slot = &sub[3];
		else if (is_elem(ch, "back_edges"))
			slot = &sub[4];
		else
			continue;	/* rt_info */
		if (*slot)
			return npr_node_err(node_of(c, li), -EINVAL,
					    "more than one <%s>", ch->name);
		*slot = ch;
	}
	err = resolve_op(c, li);
	if (err)
		return err;
	for (a = data ? data->properties : NULL; a; a = a->next) {
		const char *val = list_text(c, a->children, &oom);

		if (oom)
			return -ENOMEM;
		err = npr_node_add_attr(node_of(c, li), (const char *)a->name,
					val);
		if (err)
			return err;
	}
	err = collect_ports(c, li, in, out, &nin, &nout);
	if (err)
		return err;
	n = node_of(c, li);
	if (nin < n->op->nin_min ||
	    (n->op->nin_max >= n->op->nin_min && nin > n->op->nin_max))
		return npr_node_err(n, -EINVAL,
				    "has %d input ports, the op takes %d..%d",
				    nin, n->op->nin_min, n->op->nin_max);
	err = npr_node_set_inputs(n, nin);
	if (!err)
		err = npr_node_set_outputs(c->g, idx, nout);
	if (!err)
		err = output_values(c, li);
	if (err)
		return err;
	if (n->op->flags & NPR_OP_BODIES)
		return parse_bodies(c, li, sub);
	if (!strcmp(type, "Parameter"))
		return parameter_layer(c, li, nin, nout);
	if (!strcmp(type, "Const") || !strcmp(type, "Constant"))
		return const_layer(c, li, nin, nout);
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
	const char *s = xattr(c, e, name, &oom);

	if (oom)
		return -ENOMEM;
	if (parse_id(s, v))
		return npr_err(-EINVAL, "edge at line %u: %s %s \"%.40s\"",
			       line_of(c, e), s ? "bad" : "missing", name,
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
			       (long long)tpid, line_of(c, e),
			       (long long)(from ? tl : fl));
	fp = find_port(from, fpid);
	if (!fp || !fp->out)
		return npr_node_err(node_of(c, fi), -EINVAL,
				    "edge to layer %lld starts at port %lld, which %s",
				    (long long)tl, (long long)fpid,
				    fp ? "is an input port" : "does not exist");
	tp = find_port(to, tpid);
	if (!tp || tp->out)
		return npr_node_err(node_of(c, ti), -EINVAL,
				    "edge from layer %lld ends at port %lld, which %s",
				    (long long)fl, (long long)tpid,
				    tp ? "is an output port" : "does not exist");
	if (tp->from_layer >= 0)
		return npr_node_err(node_of(c, ti), -EINVAL,
				    "input port %lld has two incoming edges (from layers %lld and %lld)",
				    (long long)tpid, (long long)tp->from_layer,
				    (long long)fl);
	tp->from_layer = fl;
	node_of(c, ti)->in[tp->index] = node_of(c, fi)->out[fp->index];
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
		if (!is_elem(x, "layer"))
			return npr_err(-EINVAL,
				       "unexpected <%.40s> in <layers> at line %u",
				       x->name, line_of(c, x));
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
			return npr_node_err(node_of(c, b), -EINVAL,
					    "duplicate layer id: layer \"%s\" (%s) has it too",
					    node_of(c, a)->name,
					    node_of(c, a)->type);
	}
	return 0;
}

static int build(struct ir_ctx *c, xmlNode *net)
{
	struct npr_graph *g = c->g;
	xmlNode *layers = NULL, *edges = NULL, *x;
	int i, k, err;

	for (x = net->children; x; x = x->next) {
		xmlNode **slot;

		if (is_elem(x, "layers"))
			slot = &layers;
		else if (is_elem(x, "edges"))
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
		if (!is_elem(x, "edge"))
			return npr_err(-EINVAL,
				       "unexpected <%.40s> in <edges> at line %u",
				       x->name, line_of(c, x));
		err = connect(c, x);
		if (err)
			return err;
	}
	for (i = 0; i < c->nlayers; i++) {
		struct ir_layer *l = &c->layers[i];

		for (k = 0; k < l->nports; k++)
			if (!l->ports[k].out && l->ports[k].from_layer < 0)
				return npr_node_err(node_of(c, i), -EINVAL,
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
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				return err;
		}
	}
	err = npr_graph_sort(g);
	if (err == -ELOOP)
		err = describe_cycle(c);
	return err;
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_init(void)
{
	xmlInitParser();
}

static void xml_error(void *arg, xmlErrorPtr e)
{
	struct xml_state *st = arg;
	size_t len = 0;

	if (!e || e->level < XML_ERR_ERROR || st->have_error)
		return;
	st->nomem = e->code == XML_ERR_NO_MEMORY;
	snprintf(st->msg, sizeof(st->msg), "%s",
		 e->message ? e->message : "unknown error");
	len = strlen(st->msg);
	while (len && isspace((unsigned char)st->msg[len - 1]))
		st->msg[--len] = 0;
	st->line = e->line;
	st->have_error = true;
}

/* A DOCTYPE: stop before its internal subset (entities) is read. */
static void xml_doctype(void *ctx, const xmlChar *name, const xmlChar *eid,
			const xmlChar *sid)
{
	xmlParserCtxt *p = ctx;
	struct xml_state *st = p->_private;

	(void)name;
	(void)eid;
	(void)sid;
	st->doctype = true;
	xmlStopParser(p);
}

static void xml_entity(void *ctx, const xmlChar *name, int type,
		       const xmlChar *pid, const xmlChar *sid,
		       xmlChar *content)
{
	(void)type;
	(void)content;
	xml_doctype(ctx, name, pid, sid);
}

/* Parse the bytes into a tree: no network, no DTD, no entities. */
static int read_xml(struct ir_ctx *c, const char *xml, size_t len)
{
	xmlStructuredErrorFunc old_fn;
	struct xml_state st = { .line = 0 };
	xmlParserCtxt *p;
	void *old_ctx;
	int opts;

	pthread_once(&xml_once, xml_init);
	/* libxml2's error callbacks are per thread: borrow ours briefly */
	old_fn = xmlStructuredError;
	old_ctx = xmlStructuredErrorContext;
	xmlSetStructuredErrorFunc(&st, xml_error);
	p = xmlNewParserCtxt();
	if (!p) {
		xmlSetStructuredErrorFunc(old_ctx, old_fn);
		return -ENOMEM;
	}
	p->_private = &st;
	p->sax->internalSubset = xml_doctype;
	p->sax->externalSubset = xml_doctype;
	p->sax->entityDecl = xml_entity;
	opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
	       XML_PARSE_NOBLANKS | XML_PARSE_NOCDATA | XML_PARSE_COMPACT;
#ifdef XML_PARSE_BIG_LINES
	opts |= XML_PARSE_BIG_LINES;
#endif
	c->doc = xmlCtxtReadMemory(p, xml, (int)len, NULL, NULL, opts);
	xmlFreeParserCtxt(p);
	xmlSetStructuredErrorFunc(old_ctx, old_fn);
	if (st.nomem) {
		if (c->doc)
			xmlFreeDoc(c->doc);
		c->doc = NULL;
		return -ENOMEM;
	}
	if (st.doctype)
		return npr_err(-EINVAL,
			       "refused XML with a DOCTYPE (entity declarations): IR files have none, and none is read");
	if (!c->doc)
		return npr_err(-EINVAL, "malformed XML at line %d: %s",
			       st.line + c->line_offset,
			       st.have_error ? st.msg : "not well-formed");
	return 0;
}

static void ctx_fini(struct ir_ctx *c)
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

static int ir_parse(const char *xml, size_t len, struct npr_blob *weights,
		    const char *bin_hint, struct npr_graph **out)
{
	struct ir_ctx c = { .bin_hint = bin_hint };
	const char *name, *ver;
	bool oom = false;
	uint64_t v;
	xmlNode *net;
	int err;

	if (!out || (!xml && len))
		return npr_err(-EINVAL, "no model xml");
	if (len > NPR_IR_MAX_XML)
		return npr_err(-EFBIG, "model xml of %zu bytes is larger than %lu MiB",
			       len, NPR_IR_MAX_XML >> 20);
	/* converters leave a BOM, blank lines or a trailing NUL: forgive */
	if (len >= 3 && !memcmp(xml, "\xef\xbb\xbf", 3)) {
		xml += 3;
		len -= 3;
	}
	while (len && isspace((unsigned char)*xml)) {
		c.line_offset += *xml == '\n';
		xml++;
		len--;
	}
	while (len && !xml[len - 1])
		len--;
	if (!len)
		return npr_err(-EINVAL, "malformed XML: the document is empty");
	err = read_xml(&c, xml, len);
	if (err)
		goto out;
	net = xmlDocGetRootElement(c.doc);
	if (!net || !is_elem(net, "net")) {
		err = npr_err(-EINVAL, "not an IR model: the root element is <%.40s>, not <net>",
			      net ? (const char *)net->name : "");
		goto out;
	}
	name = xattr(&c, net, "name", &oom);
	ver = xattr(&c, net, "version", &oom);
	if (oom) {
		err = -ENOMEM;
		goto out;
	}
	if (!ver || parse_u64(ver, &v)) {
		err = npr_err(-EINVAL, "<net> has %s version \"%.40s\"",
			      ver ? "a bad" : "no", ver ? ver : "");
		goto out;
	}
	if (v != 10 && v != 11) {
		err = npr_err(-EOPNOTSUPP,
			      "IR version %llu is not supported (only 10 and 11 are)",
			      (unsigned long long)v);
		goto out;
	}
	if (name && strlen(name) > NPR_IR_MAX_NAME) {
		err = npr_err(-ENAMETOOLONG,
			      "model name longer than %d bytes",
			      NPR_IR_MAX_NAME);
		goto out;
	}
	c.g = npr_graph_new();
	if (!c.g) {
		err = -ENOMEM;
		goto out;
	}
	c.g->ir_version = (int)v;
	c.g->weights = npr_blob_get(weights);
	c.g->name = strdup(name ? name : "");
	err = c.g->name ? build(&c, net) : -ENOMEM;
	if (err) {
		npr_graph_free(c.g);
		goto out;
	}
	*out = c.g;
out:
	ctx_fini(&c);
	return err;
}

/**
 * npr_ir_parse() - build a graph from IR xml bytes and weights
 * @xml: the .xml contents; need not be NUL-terminated.
 * @xml_len: its length, at most NPR_IR_MAX_XML.
 * @weights: the .bin contents, or NULL when the model has none.  The
 *           graph takes its own reference (constants point into it); the
 *           caller keeps and later puts its own.
 * @out: set to the new graph on success only; free with npr_graph_free().
 *
 * Reads IR v10 and v11: every layer becomes a node whose op is resolved
 * with npr_op_find() and whose attributes are checked by op->parse; the
 * graph is returned topologically sorted.  @xml is not referenced after
 * the call.
 *
 * Return: 0, or a negative errno with a message naming the layer:
 * -EINVAL (malformed xml, DOCTYPE, bad ids, ports, edges, shapes, element
 * types, Const slices), -EOPNOTSUPP (IR version, unknown op, dynamic rank,
 * rank above NPR_MAX_RANK), -EOVERFLOW (shapes or slices that overflow),
 * -ELOOP (a cycle), -EFBIG (xml or layer count over the limits, bodies
 * nested more than NPR_MAX_BODY_DEPTH deep),
 * -ENAMETOOLONG, -ENOMEM.
 *
 * Context: any thread; concurrent calls are independent.
 */
int npr_ir_parse(const void *xml, size_t xml_len, struct npr_blob *weights,
		 struct npr_graph **out)
{
	return ir_parse(xml, xml_len, weights, NULL, out);
}

/**
 * npr_ir_blob_from_memory() - copy weights into a new blob
 * @data: the bytes; may be NULL when @size is 0.
 * @size: their length.
 * @out: set to a blob holding one reference; npr_blob_put() frees it.
 *
 * Return: 0, -EINVAL (NULL data with a size), -ENOMEM.
 * Context: any thread.
 */
int npr_ir_blob_from_memory(const void *data, size_t size,
			    struct npr_blob **out)
{
	struct npr_blob *b;

	if (!data && size)
		return npr_err(-EINVAL, "weights of %zu bytes at NULL", size);
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (size) {
		b->data = malloc(size);
		if (!b->data) {
			free(b);
			return npr_err(-ENOMEM,
				       "no memory for %zu bytes of weights",
				       size);
		}
		memcpy(b->data, data, size);
	}
	b->size = size;
	b->refs = 1;
	*out = b;
	return 0;
}

/**
 * npr_ir_load_file() - read an IR model from files
 * @xml_path: the .xml file.
 * @bin_path: the weights file, or NULL for @xml_path with ".xml" replaced
 *            by ".bin".  A derived .bin that does not exist is fine as long
 *            as no Const needs data; a given one must exist.
 * @out: set to the new graph on success only; free with npr_graph_free().
 *
 * Both files are mapped read-only (MAP_PRIVATE).  The .xml is unmapped
 * before the call returns; the .bin stays mapped as long as the graph or
 * any clone of it holds the blob, and must not be truncated meanwhile.
 *
 * Return: 0, the errors of npr_ir_parse(), or -ENOENT, -EACCES, ... (with
 * the path in the message) when a file cannot be opened, read or mapped.
 * Context: any thread.
 */
int npr_ir_load_file(const char *xml_path, const char *bin_path,
		     struct npr_graph **out)
{
	struct npr_blob *x = NULL, *w = NULL;
	const char *hint = NULL;
	char *def = NULL;
	int err;

	if (!xml_path || !out)
		return npr_err(-EINVAL, "no model path");
	err = npr_file_map(xml_path, "model", NPR_IR_MAX_XML, &x);
	if (err)
		return err;
	if (!bin_path) {
		size_t n = strlen(xml_path);

		def = malloc(n + 5);
		if (!def) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(def, xml_path, n + 1);
		if (n > 4 && !strcasecmp(def + n - 4, ".xml"))
			def[n - 4] = 0;
		strcat(def, ".bin");
		bin_path = def;
	}
	err = npr_file_map(bin_path, "weights file", UINT64_MAX, &w);
	if (err == -ENOENT && def) {
		hint = def;	/* fine unless a Const needs data */
		err = 0;
	}
	if (!err)
		err = ir_parse(x->data, x->size, w, hint, out);
out:
	npr_blob_put(w);
	npr_blob_put(x);
	free(def);
	return err;
}
