// SPDX-License-Identifier: MIT
/*
 * OpenVINO IR frontend: one layer at a time.  The text of the document
 * (attribute values, numbers, dims, precisions), a layer's ports and the
 * values of its outputs, and the layers that are sources: Parameter, and
 * Const (its slice of the weights checked against the .bin).  The network
 * these layers make (lib/ir/net.c) and the file (lib/ir/read.c) are built
 * on them.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader.h"

/* ---- small helpers ---------------------------------------------------- */

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

/**
 * npr_ir_list_text() - the text of an attribute value or an element's content
 * @c: the context, which owns a flattened copy.
 * @list: the node list, or NULL.
 * @oom: set when the copy fails.
 *
 * The common case, one text node, is returned in place; anything else is
 * flattened into a copy owned by the context.
 *
 * Return: the text; "" for none or when *@oom is set.
 */
const char *npr_ir_list_text(struct ir_ctx *c, xmlNode *list, bool *oom)
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

/**
 * npr_ir_xattr() - an attribute's value
 * @c: the context.
 * @n: the element.
 * @name: the attribute.
 * @oom: set when its text cannot be copied.
 *
 * Return: the value, valid while @c lives, or NULL when absent.
 */
const char *npr_ir_xattr(struct ir_ctx *c, xmlNode *n, const char *name,
			 bool *oom)
{
	xmlAttr *a;

	for (a = n->properties; a; a = a->next)
		if (!strcmp((const char *)a->name, name))
			return npr_ir_list_text(c, a->children, oom);
	return NULL;
}

/**
 * npr_ir_parse_u64() - decimal digits, optionally surrounded by white space
 * @s: the text; no sign is accepted.
 * @out: Out. The number.
 *
 * Return: 0, -EINVAL (not a number) or -ERANGE.
 */
int npr_ir_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!s)
		return -EINVAL;
	p = ir_skip_ws(s);
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*ir_skip_ws(p))
		return -EINVAL;
	*out = v;
	return 0;
}

/**
 * npr_ir_parse_id() - a layer or port id
 * @s: the text.
 * @out: Out. The id, 0..INT64_MAX.
 *
 * Return: 0 or -EINVAL.
 */
int npr_ir_parse_id(const char *s, int64_t *out)
{
	uint64_t v;

	if (npr_ir_parse_u64(s, &v) || v > INT64_MAX)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

/**
 * npr_ir_opset_number() - the number of an opset name
 * @v: the name: "opset3" -> 3.
 *
 * Return: the number; 0 for any other name ("experimental", "extension").
 */
unsigned int npr_ir_opset_number(const char *v)
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
		if ((tok[0] && npr_ir_parse_u64(tok, &v)) ||
		    (e[2] && npr_ir_parse_u64(e + 2, &hi)))
			return -EINVAL;
		*out = -1;
		return 0;
	}
	if (npr_ir_parse_u64(tok, &v) || v > NPR_IR_MAX_DIM)
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
	const char *p = ir_skip_ws(s);
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

		if (!ir_is_elem(d, "dim"))
			continue;
		if (sh->rank == NPR_MAX_RANK)
			return npr_node_err(ir_node_of(c, li), -EOPNOTSUPP,
					    "%s port %lld has more than %d dims",
					    dir, (long long)p->id,
					    NPR_MAX_RANK);
		txt = npr_ir_list_text(c, d->children, &oom);
		if (oom)
			return -ENOMEM;
		if (parse_dim(txt, strlen(txt), false, &sh->d[sh->rank]))
			return npr_node_err(ir_node_of(c, li), -EINVAL,
					    "%s port %lld: bad dim \"%.40s\" (want 0..2^40, -1 or ?)",
					    dir, (long long)p->id, txt);
		sh->rank++;
	}
	if (shape_numel(sh, &numel))
		return npr_node_err(ir_node_of(c, li), -EOVERFLOW,
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
	struct npr_node *n = ir_node_of(c, li);
	const char *p = ir_skip_ws(s);
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

/**
 * npr_ir_find_port() - a port of a layer by id
 * @l: the layer, its ports sorted by id.
 * @id: the port id.
 *
 * Return: the port, or NULL.
 */
struct ir_port *npr_ir_find_port(struct ir_layer *l, int64_t id)
{
	struct ir_port key = { .id = id };

	if (!l->nports)		/* bsearch() wants a base even for none */
		return NULL;
	return bsearch(&key, l->ports, l->nports, sizeof(key), cmp_port);
}

/**
 * npr_ir_collect_ports() - the ports of a layer's <input> and <output>
 * @c: the context.
 * @li: the layer.
 * @in: its <input> element, or NULL.
 * @out: its <output> element, or NULL.
 * @nin: Out. Its number of input ports.
 * @nout: Out. Its number of output ports.
 *
 * Sorted by id, numbered per direction.
 *
 * Return: 0 or -errno with a message naming the layer.
 */
int npr_ir_collect_ports(struct ir_ctx *c, int li, xmlNode *in,
			 xmlNode *out, int *nin, int *nout)
{
	struct ir_layer *l = &c->layers[li];
	xmlNode *sect[2] = { in, out }, *p;
	bool oom = false;
	int k = 0, s, i;

	for (s = 0; s < 2; s++)
		for (p = sect[s] ? sect[s]->children : NULL; p; p = p->next)
			if (ir_is_elem(p, "port"))
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

			if (!ir_is_elem(p, "port"))
				continue;
			id = npr_ir_xattr(c, p, "id", &oom);
			if (oom)
				return -ENOMEM;
			if (npr_ir_parse_id(id, &pt->id))
				return npr_node_err(ir_node_of(c, li), -EINVAL,
						    "%s port (line %u) has %s id \"%.40s\"",
						    s ? "an output" : "an input",
						    ir_line_of(c, p),
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
			return npr_node_err(ir_node_of(c, li), -EINVAL,
					    "port id %lld is used twice",
					    (long long)pt->id);
		pt->index = pt->out ? (*nout)++ : (*nin)++;
	}
	return 0;
}

/**
 * npr_ir_output_values() - type, declared shape and tensor name of every
 * output value of a layer
 * @c: the context.
 * @li: the layer.
 *
 * Return: 0 or -errno with a message naming the layer.
 */
int npr_ir_output_values(struct ir_ctx *c, int li)
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
		v = &c->g->vals[ir_node_of(c, li)->out[p->index]];
		v->decl = sh;
		v->shape = sh;
		prec = npr_ir_xattr(c, p->x, "precision", &oom);
		names = npr_ir_xattr(c, p->x, "names", &oom);
		if (oom)
			return -ENOMEM;
		if (prec) {
			t = precision_parse(prec);
			if (t < 0)
				return npr_node_err(ir_node_of(c, li), -EINVAL,
						    "output port %lld: unknown precision \"%.40s\"",
						    (long long)p->id, prec);
			v->type = t;
		}
		if (names) {
			err = first_name(names, &v->name);
			if (err == -ENAMETOOLONG)
				return npr_node_err(ir_node_of(c, li), err,
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
	struct npr_node *n = ir_node_of(c, li);
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
	struct npr_node *n = ir_node_of(c, li);
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

/**
 * npr_ir_parameter_layer() - check a Parameter layer and type its value
 * @c: the context.
 * @li: the layer.
 * @nin: its number of input ports.
 * @nout: its number of output ports.
 *
 * Return: 0 or -errno with a message naming the layer.
 */
int npr_ir_parameter_layer(struct ir_ctx *c, int li, int nin, int nout)
{
	struct npr_node *n = ir_node_of(c, li);
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

/**
 * npr_ir_const_layer() - point a Const's value at its slice of the weights
 * @c: the context.
 * @li: the layer.
 * @nin: its number of input ports.
 * @nout: its number of output ports.
 *
 * Every part of the slice is checked against the weights.
 *
 * Return: 0 or -errno with a message naming the layer.
 */
int npr_ir_const_layer(struct ir_ctx *c, int li, int nin, int nout)
{
	struct npr_node *n = ir_node_of(c, li);
	struct npr_weights *w = c->g->weights;
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
	if (npr_ir_parse_u64(so, &off))
		return npr_node_err(n, -EINVAL, "%s offset \"%.40s\"",
				    so ? "bad" : "missing", so ? so : "");
	if (npr_ir_parse_u64(ss, &size))
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

/**
 * npr_ir_resolve_op() - the op definition of a layer's node
 * @c: the context.
 * @li: the layer.
 *
 * Return: 0, or -EOPNOTSUPP with a message saying why there is none.
 */
int npr_ir_resolve_op(struct ir_ctx *c, int li)
{
	struct npr_node *n = ir_node_of(c, li);
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
