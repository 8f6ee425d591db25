// SPDX-License-Identifier: MIT
/*
 * OpenVINO IR reader: <net> with <layers> and <edges>, IR v10 and v11.
 *
 * Nothing in the file is trusted: every id, port, edge, element type,
 * shape and Const slice is checked, and every error names the layer.
 * Documents with a DTD are refused outright, so entity expansion can never
 * run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "ir.h"

#define IR_MAX_XML	(512ull << 20)
#define IR_MAX_LAYERS	1000000
#define IR_MAX_NAME	4096
#define IR_MAX_PORTS	1024
#define IR_MAX_DIM	(1ll << 40)

struct ir_layer {
	int64_t id;
	int node;
	int nin, nout;
	int64_t *in_port;	/* port ids, sorted */
	int64_t *out_port;
};

struct ir_ctx {
	struct npr_graph *g;
	struct ir_layer *layers;
	int nlayers;
	int *by_id;		/* layer indexes sorted by id */
};

static const char *xattr(xmlNode *n, const char *name)
{
	xmlAttr *a;

	for (a = n->properties; a; a = a->next)
		if (!strcmp((const char *)a->name, name) && a->children &&
		    a->children->type == XML_TEXT_NODE)
			return (const char *)a->children->content;
		else if (!strcmp((const char *)a->name, name))
			return "";
	return NULL;
}

static bool is_elem(xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

static xmlNode *child(xmlNode *n, const char *name)
{
	xmlNode *c;

	for (c = n->children; c; c = c->next)
		if (is_elem(c, name))
			return c;
	return NULL;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	while (*end == ' ')
		end++;
	if (errno || *end || end == s)
		return -EINVAL;
	*out = v;
	return 0;
}

static unsigned int precision_type(const char *p)
{
	static const struct { const char *s; unsigned int t; } map[] = {
		{ "FP32", NPR_ELEM_F32 }, { "FP16", NPR_ELEM_F16 },
		{ "BF16", NPR_ELEM_BF16 }, { "FP64", NPR_ELEM_F64 },
		{ "I8", NPR_ELEM_I8 }, { "U8", NPR_ELEM_U8 },
		{ "I16", NPR_ELEM_I16 }, { "U16", NPR_ELEM_U16 },
		{ "I32", NPR_ELEM_I32 }, { "U32", NPR_ELEM_U32 },
		{ "I64", NPR_ELEM_I64 }, { "U64", NPR_ELEM_U64 },
		{ "BOOL", NPR_ELEM_BOOLEAN }, { "BOOLEAN", NPR_ELEM_BOOLEAN },
		{ "U1", NPR_ELEM_U1 }, { "I4", NPR_ELEM_I4 },
		{ "U4", NPR_ELEM_U4 },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcasecmp(p, map[i].s))
			return map[i].t;
	return npr_elem_parse(p);
}

/* "1,3,224,224", "1, 3, ?, -1", "" (scalar), "1..10" (a range: dynamic) */
static int parse_shape_attr(const char *s, struct npr_shape *sh)
{
	const char *p = s;

	sh->rank = 0;
	while (*p == ' ')
		p++;
	if (!*p)
		return 0;
	if (!strcmp(p, "..."))
		return -EDOM;	/* dynamic rank */
	while (*p) {
		char tok[64];
		size_t len = strcspn(p, ",");
		int64_t v;

		if (sh->rank == NPR_MAX_RANK)
			return -E2BIG;
		if (len >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, p, len);
		tok[len] = 0;
		{
			char *t = tok, *e;

			while (*t == ' ')
				t++;
			e = t + strlen(t);
			while (e > t && e[-1] == ' ')
				*--e = 0;
			if (!strcmp(t, "?") || !strcmp(t, "-1") ||
			    strstr(t, ".."))
				v = -1;
			else if (parse_i64(t, &v) || v < 0 || v > IR_MAX_DIM)
				return -EINVAL;
		}
		sh->d[sh->rank++] = v;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int port_dims(xmlNode *port, struct npr_shape *sh)
{
	xmlNode *c;

	sh->rank = 0;
	for (c = port->children; c; c = c->next) {
		const char *txt;
		int64_t v;

		if (!is_elem(c, "dim"))
			continue;
		if (sh->rank == NPR_MAX_RANK)
			return -E2BIG;
		txt = c->children && c->children->type == XML_TEXT_NODE ?
		      (const char *)c->children->content : "";
		while (*txt == ' ' || *txt == '\n' || *txt == '\t')
			txt++;
		if (!strncmp(txt, "?", 1) || strstr(txt, ".."))
			v = -1;
		else if (parse_i64(txt, &v) || v < -1 || v > IR_MAX_DIM)
			return -EINVAL;
		sh->d[sh->rank++] = v;
	}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_layer(const void *a, const void *b, void *arg)
{
	const struct ir_ctx *c = arg;
	int64_t x = c->layers[*(const int *)a].id;
	int64_t y = c->layers[*(const int *)b].id;

	return x < y ? -1 : x > y;
}

static struct ir_layer *find_layer(struct ir_ctx *c, int64_t id)
{
	int lo = 0, hi = c->nlayers - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		struct ir_layer *l = &c->layers[c->by_id[mid]];

		if (l->id == id)
			return l;
		if (l->id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int port_index(const int64_t *ids, int n, int64_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return i;
	return -1;
}

/* Collect the port ids of <input> or <output>, sorted. */
static int collect_ports(struct npr_node *n, xmlNode *sect, int64_t **ids,
			 int *cnt)
{
	xmlNode *p;
	int k = 0, i;

	*ids = NULL;
	*cnt = 0;
	if (!sect)
		return 0;
	for (p = sect->children; p; p = p->next)
		if (is_elem(p, "port"))
			k++;
	if (k > IR_MAX_PORTS)
		return npr_node_err(n, -EINVAL, "%d ports", k);
	if (!k)
		return 0;
	*ids = malloc(sizeof(int64_t) * k);
	if (!*ids)
		return -ENOMEM;
	k = 0;
	for (p = sect->children; p; p = p->next) {
		int64_t id;

		if (!is_elem(p, "port"))
			continue;
		if (parse_i64(xattr(p, "id"), &id))
			return npr_node_err(n, -EINVAL, "port without a valid id");
		for (i = 0; i < k; i++)
			if ((*ids)[i] == id)
				return npr_node_err(n, -EINVAL,
						    "port id %lld appears twice",
						    (long long)id);
		(*ids)[k++] = id;
	}
	qsort(*ids, k, sizeof(int64_t), cmp_i64);
	*cnt = k;
	return 0;
}

static xmlNode *find_port(xmlNode *sect, int64_t id)
{
	xmlNode *p;
	int64_t pid;

	for (p = sect ? sect->children : NULL; p; p = p->next)
		if (is_elem(p, "port") && !parse_i64(xattr(p, "id"), &pid) &&
		    pid == id)
			return p;
	return NULL;
}

static unsigned int opset_version(const char *v)
{
	char *end;
	long n;

	if (!v || strncmp(v, "opset", 5))
		return 0;
	n = strtol(v + 5, &end, 10);
	if (*end || n <= 0 || n > 1000)
		return 0;
	return (unsigned int)n;
}

static int const_data(struct ir_ctx *c, struct npr_node *n,
		      struct npr_value *v)
{
	struct npr_blob *w = c->g->weights;
	int64_t off, size, numel;
	size_t need;

	if (parse_i64(npr_attr(n, "offset"), &off) || off < 0)
		return npr_node_err(n, -EINVAL, "missing or invalid offset \"%s\"",
				    npr_attr(n, "offset") ?: "");
	if (parse_i64(npr_attr(n, "size"), &size) || size < 0)
		return npr_node_err(n, -EINVAL, "missing or invalid size \"%s\"",
				    npr_attr(n, "size") ?: "");
	numel = npr_shape_numel(&v->shape);
	if (numel < 0)
		return npr_node_err(n, -EINVAL, "constant shape is not static or overflows");
	need = npr_tensor_bytes(v->type, numel);
	if (npr_elem_size(v->type) &&
	    (uint64_t)numel > SIZE_MAX / npr_elem_size(v->type))
		return npr_node_err(n, -EOVERFLOW, "constant too large");
	if ((uint64_t)size != need)
		return npr_node_err(n, -EINVAL,
				    "size %lld does not match %lld elements of %s (%zu bytes)",
				    (long long)size, (long long)numel,
				    npr_elem_name(v->type), need);
	if (!size) {
		v->data = v->owned = malloc(1);
		if (!v->owned)
			return -ENOMEM;
		v->nbytes = 0;
		return 0;
	}
	if (!w)
		return npr_node_err(n, -EINVAL, "constant needs weights but there is no .bin");
	if ((uint64_t)off > w->size || (uint64_t)size > w->size - (uint64_t)off)
		return npr_node_err(n, -EINVAL,
				    "constant [%lld, %lld) lies past the end of the weights (%zu bytes)",
				    (long long)off, (long long)off + size,
				    w->size);
	v->data = (const char *)w->data + off;
	v->nbytes = (size_t)size;
	return 0;
}

static int parse_layer(struct ir_ctx *c, xmlNode *x, struct ir_layer *l)
{
	struct npr_graph *g = c->g;
	const char *name = xattr(x, "name"), *type = xattr(x, "type");
	const char *ver = xattr(x, "version");
	xmlNode *data = child(x, "data"), *in = child(x, "input");
	xmlNode *out = child(x, "output");
	struct npr_node *n;
	xmlAttr *a;
	int idx, err, i;

	if (parse_i64(xattr(x, "id"), &l->id))
		return npr_err(-EINVAL, "a layer has no valid id (\"%s\")",
			       xattr(x, "id") ?: "");
	if (!type || !*type)
		return npr_err(-EINVAL, "layer %lld has no type",
			       (long long)l->id);
	if ((name && strlen(name) > IR_MAX_NAME) || strlen(type) > 256)
		return npr_err(-EINVAL, "layer %lld: name too long",
			       (long long)l->id);
	idx = npr_graph_add_node(g, name ? name : "", type,
				 opset_version(ver), l->id);
	if (idx < 0)
		return idx;
	l->node = idx;
	n = &g->nodes[idx];
	for (a = data ? data->properties : NULL; a; a = a->next) {
		const char *val = a->children && a->children->type ==
				  XML_TEXT_NODE ?
				  (const char *)a->children->content : "";

		err = npr_node_add_attr(n, (const char *)a->name, val);
		if (err)
			return err;
	}
	n->op = npr_op_find(type, n->version);
	if (!n->op)
		return npr_node_err(n, -EOPNOTSUPP, "unknown op %s (%s)", type,
				    ver ? ver : "no version");
	err = collect_ports(n, in, &l->in_port, &l->nin);
	if (!err)
		err = collect_ports(n, out, &l->out_port, &l->nout);
	if (err)
		return err;
	for (i = 0; i < l->nin; i++)
		if (port_index(l->out_port, l->nout, l->in_port[i]) >= 0)
			return npr_node_err(n, -EINVAL,
					    "port %lld is both input and output",
					    (long long)l->in_port[i]);
	if (l->nin < n->op->nin_min || l->nin > n->op->nin_max)
		return npr_node_err(n, -EINVAL, "%d inputs, expected %d..%d",
				    l->nin, n->op->nin_min, n->op->nin_max);
	err = npr_node_set_inputs(n, l->nin);
	if (!err)
		err = npr_node_set_outputs(g, idx, l->nout);
	if (err)
		return err;
	n = &g->nodes[idx];
	for (i = 0; i < l->nout; i++) {
		xmlNode *p = find_port(out, l->out_port[i]);
		struct npr_value *v = &g->vals[n->out[i]];
		const char *prec = xattr(p, "precision");
		const char *names = xattr(p, "names");

		err = port_dims(p, &v->decl);
		if (err)
			return npr_node_err(n, -EINVAL,
					    "output port %lld has an invalid dimension",
					    (long long)l->out_port[i]);
		v->shape = v->decl;
		if (prec) {
			v->type = precision_type(prec);
			if (!v->type)
				return npr_node_err(n, -EINVAL,
						    "output port %lld: unknown precision \"%s\"",
						    (long long)l->out_port[i], prec);
		}
		if (names && *names) {
			size_t len = strcspn(names, ",");

			while (len && names[len - 1] == '\\')
				len += 1 + strcspn(names + len + 1, ",");
			v->name = strndup(names, len);
			if (!v->name)
				return -ENOMEM;
		}
	}
	for (i = 0; i < l->nin; i++) {
		xmlNode *p = find_port(in, l->in_port[i]);
		struct npr_shape sh;

		if (port_dims(p, &sh))
			return npr_node_err(n, -EINVAL,
					    "input port %lld has an invalid dimension",
					    (long long)l->in_port[i]);
	}
	if (!strcmp(type, "Parameter") || !strcmp(type, "Const") ||
	    !strcmp(type, "Constant")) {
		const char *et = npr_attr(n, "element_type");
		const char *sh = npr_attr(n, "shape");
		struct npr_value *v;

		if (l->nout != 1)
			return npr_node_err(n, -EINVAL, "needs exactly one output port");
		v = &g->vals[n->out[0]];
		v->type = npr_elem_parse(et);
		if (!v->type)
			return npr_node_err(n, -EINVAL, "unknown element_type \"%s\"",
					    et ? et : "");
		if (!sh)
			return npr_node_err(n, -EINVAL, "missing shape");
		err = parse_shape_attr(sh, &v->shape);
		if (err == -EDOM)
			return npr_node_err(n, -EOPNOTSUPP,
					    "dynamic rank is not supported");
		if (err)
			return npr_node_err(n, -EINVAL, "invalid shape \"%s\"", sh);
		if (v->decl.rank >= 0 && npr_shape_static(&v->decl) &&
		    npr_shape_static(&v->shape) &&
		    !npr_shape_eq(&v->decl, &v->shape))
			return npr_node_err(n, -EINVAL,
					    "shape \"%s\" differs from the output port's dims",
					    sh);
		if (strcmp(type, "Parameter")) {
			err = const_data(c, n, v);
			if (err)
				return err;
		}
	}
	return 0;
}

static int connect(struct ir_ctx *c, xmlNode *e)
{
	int64_t fl, fp, tl, tp;
	struct ir_layer *from, *to;
	struct npr_node *tn;
	int oi, ii;

	if (parse_i64(xattr(e, "from-layer"), &fl) ||
	    parse_i64(xattr(e, "from-port"), &fp) ||
	    parse_i64(xattr(e, "to-layer"), &tl) ||
	    parse_i64(xattr(e, "to-port"), &tp))
		return npr_err(-EINVAL, "edge (line %u) has a missing or invalid attribute",
			       e->line);
	from = find_layer(c, fl);
	to = find_layer(c, tl);
	if (!from || !to)
		return npr_err(-EINVAL, "edge %lld:%lld -> %lld:%lld names a missing layer %lld",
			       (long long)fl, (long long)fp, (long long)tl,
			       (long long)tp, (long long)(from ? tl : fl));
	oi = port_index(from->out_port, from->nout, fp);
	if (oi < 0)
		return npr_node_err(&c->g->nodes[from->node], -EINVAL,
				    "edge from port %lld: no such output port",
				    (long long)fp);
	ii = port_index(to->in_port, to->nin, tp);
	tn = &c->g->nodes[to->node];
	if (ii < 0)
		return npr_node_err(tn, -EINVAL,
				    "edge to port %lld: no such input port",
				    (long long)tp);
	if (tn->in[ii] >= 0)
		return npr_node_err(tn, -EINVAL,
				    "input port %lld has more than one edge",
				    (long long)tp);
	tn->in[ii] = c->g->nodes[from->node].out[oi];
	return 0;
}

static void ctx_fini(struct ir_ctx *c)
{
	int i;

	for (i = 0; i < c->nlayers; i++) {
		free(c->layers[i].in_port);
		free(c->layers[i].out_port);
	}
	free(c->layers);
	free(c->by_id);
}

static int build(struct ir_ctx *c, xmlNode *net)
{
	struct npr_graph *g = c->g;
	xmlNode *layers = child(net, "layers"), *edges = child(net, "edges");
	xmlNode *x;
	int i, k, err;

	if (!layers)
		return npr_err(-EINVAL, "<net> has no <layers>");
	k = 0;
	for (x = layers->children; x; x = x->next)
		if (is_elem(x, "layer") && ++k > IR_MAX_LAYERS)
			return npr_err(-EFBIG, "more than %d layers",
				       IR_MAX_LAYERS);
	c->layers = calloc(k ? k : 1, sizeof(*c->layers));
	c->by_id = malloc(sizeof(int) * (k ? k : 1));
	if (!c->layers || !c->by_id)
		return -ENOMEM;
	for (x = layers->children; x; x = x->next) {
		if (!is_elem(x, "layer"))
			continue;
		err = parse_layer(c, x, &c->layers[c->nlayers]);
		c->nlayers++;
		if (err)
			return err;
	}
	for (i = 0; i < c->nlayers; i++)
		c->by_id[i] = i;
	qsort_r(c->by_id, c->nlayers, sizeof(int), cmp_layer, c);
	for (i = 1; i < c->nlayers; i++)
		if (c->layers[c->by_id[i]].id == c->layers[c->by_id[i - 1]].id)
			return npr_node_err(&g->nodes[c->layers[c->by_id[i]].node],
					    -EINVAL, "layer id %lld is used twice",
					    (long long)c->layers[c->by_id[i]].id);
	for (x = edges ? edges->children : NULL; x; x = x->next) {
		if (!is_elem(x, "edge"))
			continue;
		err = connect(c, x);
		if (err)
			return err;
	}
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		for (k = 0; k < n->nin; k++)
			if (n->in[k] < 0)
				return npr_node_err(n, -EINVAL,
						    "input port %lld is not connected",
						    (long long)c->layers[i].in_port[k]);
	}
	/* Parameters and Results in file order */
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
	return npr_graph_sort(g);
}

int npr_ir_parse(const void *xml, size_t xml_len, struct npr_blob *weights,
		 struct npr_graph **out)
{
	struct ir_ctx c = { 0 };
	xmlParserCtxtPtr pctx;
	xmlDocPtr doc;
	xmlNode *net;
	int64_t ver;
	int err;

	if (!xml || !xml_len)
		return npr_err(-EINVAL, "empty model");
	/* some converters write blank lines before the XML declaration */
	while (xml_len && (*(const char *)xml == '\n' ||
			   *(const char *)xml == '\r' ||
			   *(const char *)xml == ' ' || *(const char *)xml == '\t')) {
		xml = (const char *)xml + 1;
		xml_len--;
	}
	if (!xml_len)
		return npr_err(-EINVAL, "empty model");
	if (xml_len > IR_MAX_XML || xml_len > INT_MAX)
		return npr_err(-EFBIG, "model xml of %zu bytes is too large",
			       xml_len);
	if (memmem(xml, xml_len, "<!DOCTYPE", 9) ||
	    memmem(xml, xml_len, "<!ENTITY", 8))
		return npr_err(-EINVAL, "the model xml has a DTD or entity declarations; IR files have none");
	pctx = xmlNewParserCtxt();
	if (!pctx)
		return -ENOMEM;
	doc = xmlCtxtReadMemory(pctx, xml, (int)xml_len, "model.xml", NULL,
				XML_PARSE_NONET | XML_PARSE_NOERROR |
				XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	if (!doc) {
		xmlErrorPtr e = xmlCtxtGetLastError(pctx);
		char msg[256] = "unknown error";

		if (e && e->message) {
			snprintf(msg, sizeof(msg), "%s", e->message);
			msg[strcspn(msg, "\n")] = 0;
		}
		err = npr_err(-EINVAL, "malformed model xml, line %d: %s",
			      e ? e->line : 0, msg);
		xmlFreeParserCtxt(pctx);
		return err;
	}
	xmlFreeParserCtxt(pctx);
	net = xmlDocGetRootElement(doc);
	if (!net || !is_elem(net, "net")) {
		err = npr_err(-EINVAL, "the root element is <%s>, not <net>",
			      net ? (const char *)net->name : "");
		goto out_doc;
	}
	if (parse_i64(xattr(net, "version"), &ver) || (ver != 10 && ver != 11)) {
		err = npr_err(-EOPNOTSUPP,
			      "IR version \"%s\" is not supported (10 and 11 are)",
			      xattr(net, "version") ?: "");
		goto out_doc;
	}
	c.g = npr_graph_new();
	if (!c.g) {
		err = -ENOMEM;
		goto out_doc;
	}
	c.g->ir_version = (int)ver;
	c.g->name = strdup(xattr(net, "name") ?: "");
	c.g->weights = npr_blob_get(weights);
	err = c.g->name ? build(&c, net) : -ENOMEM;
	ctx_fini(&c);
	if (err) {
		npr_graph_free(c.g);
		goto out_doc;
	}
	*out = c.g;
out_doc:
	xmlFreeDoc(doc);
	return err;
}

int npr_ir_blob_from_memory(const void *data, size_t size,
			    struct npr_blob **out)
{
	struct npr_blob *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->data = malloc(size ? size : 1);
	if (!b->data) {
		free(b);
		return npr_err(-ENOMEM, "no memory for %zu bytes of weights",
			       size);
	}
	memcpy(b->data, data, size);
	b->size = size;
	b->refs = 1;
	*out = b;
	return 0;
}

static int map_file(const char *path, struct npr_blob **out)
{
	struct npr_blob *b;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return npr_err(-errno, "cannot open %s: %s", path,
			       strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = npr_err(-EINVAL, "%s is not a regular file", path);
		goto out;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		err = -ENOMEM;
		goto out;
	}
	b->refs = 1;
	b->mapped = true;
	b->size = st.st_size;
	if (st.st_size) {
		b->data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (b->data == MAP_FAILED) {
			err = npr_err(-errno, "cannot map %s: %s", path,
				      strerror(errno));
			free(b);
			goto out;
		}
	}
	*out = b;
	err = 0;
out:
	close(fd);
	return err;
}

int npr_ir_load_file(const char *xml_path, const char *bin_path,
		     struct npr_graph **out)
{
	struct npr_blob *x = NULL, *w = NULL;
	char *def = NULL;
	int err;

	err = map_file(xml_path, &x);
	if (err)
		return err;
	if (x->size > IR_MAX_XML) {
		err = npr_err(-EFBIG, "%s is too large", xml_path);
		goto out;
	}
	if (!bin_path) {
		size_t len = strlen(xml_path);

		def = malloc(len + 5);
		if (!def) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(def, xml_path, len + 1);
		if (len > 4 && !strcmp(def + len - 4, ".xml"))
			def[len - 4] = 0;
		strcat(def, ".bin");
		if (access(def, F_OK) == 0) {
			err = map_file(def, &w);
			if (err)
				goto out;
		}
	} else {
		err = map_file(bin_path, &w);
		if (err)
			goto out;
	}
	err = npr_ir_parse(x->data, x->size, w, out);
out:
	free(def);
	npr_blob_put(w);
	npr_blob_put(x);
	return err;
}
