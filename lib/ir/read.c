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
 *
 * This file reads the XML and the files; the network is built in
 * lib/ir/net.c, one layer at a time by lib/ir/layer.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "graph/file.h"
#include "reader.h"

/* What the libxml2 callbacks report back. */
struct xml_state {
	char msg[256];
	int line;
	bool have_error;
	bool nomem;
	bool doctype;
};

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

static int parse(const char *xml, size_t len, struct npr_weights *weights,
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
	if (!net || !ir_is_elem(net, "net")) {
		err = npr_err(-EINVAL, "not an IR model: the root element is <%.40s>, not <net>",
			      net ? (const char *)net->name : "");
		goto out;
	}
	name = npr_ir_xattr(&c, net, "name", &oom);
	ver = npr_ir_xattr(&c, net, "version", &oom);
	if (oom) {
		err = -ENOMEM;
		goto out;
	}
	if (!ver || npr_ir_parse_u64(ver, &v)) {
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
	c.g->weights = npr_weights_get(weights);
	c.g->name = strdup(name ? name : "");
	err = c.g->name ? npr_ir_build(&c, net) : -ENOMEM;
	if (err) {
		npr_graph_free(c.g);
		goto out;
	}
	*out = c.g;
out:
	npr_ir_ctx_fini(&c);
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
int npr_ir_parse(const void *xml, size_t xml_len, struct npr_weights *weights,
		 struct npr_graph **out)
{
	return parse(xml, xml_len, weights, NULL, out);
}

/**
 * npr_ir_weights_from_memory() - copy weights into a new weights store
 * @data: the bytes; may be NULL when @size is 0.
 * @size: their length.
 * @out: set to a blob holding one reference; npr_weights_put() frees it.
 *
 * Return: 0, -EINVAL (NULL data with a size), -ENOMEM.
 * Context: any thread.
 */
int npr_ir_weights_from_memory(const void *data, size_t size,
			    struct npr_weights **out)
{
	struct npr_weights *b;

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
 * any clone of it holds the weights store, and must not be truncated meanwhile.
 *
 * Return: 0, the errors of npr_ir_parse(), or -ENOENT, -EACCES, ... (with
 * the path in the message) when a file cannot be opened, read or mapped.
 * Context: any thread.
 */
int npr_ir_load_file(const char *xml_path, const char *bin_path,
		     struct npr_graph **out)
{
	struct npr_weights *x = NULL, *w = NULL;
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
		err = parse(x->data, x->size, w, hint, out);
out:
	npr_weights_put(w);
	npr_weights_put(x);
	free(def);
	return err;
}

