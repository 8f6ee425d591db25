// SPDX-License-Identifier: MIT
/*
 * What vnpu's compiler received: a census of a serialized IR, written to
 * the VNPU_TRACE file as one line per compiled graph, so that tests can
 * compare it with the model the caller compiled (Documentation/npu.rst,
 * "What the compiler receives"):
 *
 *   ir layers=N weights=BYTES orphans=N types=f16:54,i64:1
 *      ops=Add:27,Const:54,... outputs=Add/FP16:27,...
 *
 * types counts the element_type attributes (Const and Parameter data),
 * ops the layers by type, outputs the layers by type and the precision of
 * their first output port, orphans the Const layers no edge leaves from;
 * weights is the size of the weights part.  Only the top-level layers of
 * the net are counted (bodies of TensorIterator, Loop, If are not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "vnpu.h"

struct tally {
	char **key;
	unsigned int *n;
	size_t len, cap;
	bool oom;
};

static void tally_add(struct tally *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		if (!strcmp(t->key[i], key)) {
			t->n[i]++;
			return;
		}
	if (t->len == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		char **k = realloc(t->key, cap * sizeof(*k));
		unsigned int *n;

		if (k)
			t->key = k;
		n = k ? realloc(t->n, cap * sizeof(*n)) : NULL;
		if (!n) {
			t->oom = true;
			return;
		}
		t->n = n;
		t->cap = cap;
	}
	t->key[t->len] = strdup(key);
	if (!t->key[t->len]) {
		t->oom = true;
		return;
	}
	t->n[t->len++] = 1;
}

static void tally_free(struct tally *t)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		free(t->key[i]);
	free(t->key);
	free(t->n);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "k:n,k:n" in key order into @f; frees the tally. */
static void tally_put(FILE *f, struct tally *t)
{
	size_t i, j;

	/* sort the keys, carrying the counts along */
	for (i = 0; i < t->len; i++)
		for (j = i + 1; j < t->len; j++)
			if (cmp_key(&t->key[i], &t->key[j]) > 0) {
				char *k = t->key[i];
				unsigned int n = t->n[i];

				t->key[i] = t->key[j];
				t->n[i] = t->n[j];
				t->key[j] = k;
				t->n[j] = n;
			}
	for (i = 0; i < t->len; i++)
		fprintf(f, "%s%s:%u", i ? "," : "", t->key[i], t->n[i]);
	tally_free(t);
}

static xmlNode *child(xmlNode *n, const char *name)
{
	for (n = n ? n->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE &&
		    !strcmp((const char *)n->name, name))
			return n;
	return NULL;
}

static bool is_named(xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

/* The precision of a layer's first output port, or "-". */
static void out_precision(xmlNode *layer, char *buf, size_t len)
{
	xmlNode *out = child(layer, "output"), *p;

	snprintf(buf, len, "-");
	for (p = out ? out->children : NULL; p; p = p->next) {
		xmlChar *prec;

		if (!is_named(p, "port"))
			continue;
		prec = xmlGetProp(p, BAD_CAST "precision");
		if (prec)
			snprintf(buf, len, "%.32s", (const char *)prec);
		xmlFree(prec);
		break;
	}
}

/* Whether an edge leaves layer @id. */
static bool has_edge_from(xmlNode *edges, const xmlChar *id)
{
	xmlNode *e;
	bool found = false;

	for (e = edges ? edges->children : NULL; e && !found; e = e->next) {
		xmlChar *from;

		if (!is_named(e, "edge"))
			continue;
		from = xmlGetProp(e, BAD_CAST "from-layer");
		found = from && !xmlStrcmp(from, id);
		xmlFree(from);
	}
	return found;
}

/**
 * vnpu_census() - trace what a graph's IR holds
 * @xml: the IR's XML bytes.
 * @xml_size: their size.
 * @weights: the size of the weights part.
 *
 * Writes the "ir ..." line described at the top of this file to the
 * VNPU_TRACE file; does nothing when VNPU_TRACE is unset, and writes
 * "ir unreadable" for XML that does not parse (the compile reports why).
 */
void vnpu_census(const void *xml, size_t xml_size, uint64_t weights)
{
	struct tally types = { 0 }, ops = { 0 }, outs = { 0 };
	const char *path = getenv("VNPU_TRACE");
	xmlNode *net, *layers, *edges, *l;
	unsigned int nlayers = 0, orphans = 0;
	char *line = NULL;
	size_t len = 0;
	xmlDoc *doc;
	FILE *f;

	if (!path || !*path || xml_size > (size_t)INT32_MAX)
		return;
	doc = xmlReadMemory(xml, (int)xml_size, "ir.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR |
			    XML_PARSE_NOWARNING | XML_PARSE_HUGE);
	net = doc ? xmlDocGetRootElement(doc) : NULL;
	if (!net || !is_named(net, "net")) {
		vnpu_trace("ir unreadable");
		xmlFreeDoc(doc);
		return;
	}
	layers = child(net, "layers");
	edges = child(net, "edges");
	for (l = layers ? layers->children : NULL; l; l = l->next) {
		xmlChar *type, *et, *id;
		xmlNode *data;
		char buf[160], prec[40];

		if (!is_named(l, "layer"))
			continue;
		nlayers++;
		type = xmlGetProp(l, BAD_CAST "type");
		snprintf(buf, sizeof(buf), "%.100s",
			 type ? (const char *)type : "?");
		tally_add(&ops, buf);
		out_precision(l, prec, sizeof(prec));
		snprintf(buf, sizeof(buf), "%.100s/%s",
			 type ? (const char *)type : "?", prec);
		tally_add(&outs, buf);
		data = child(l, "data");
		et = data ? xmlGetProp(data, BAD_CAST "element_type") : NULL;
		if (et) {
			snprintf(buf, sizeof(buf), "%.32s", (const char *)et);
			tally_add(&types, buf);
		}
		id = xmlGetProp(l, BAD_CAST "id");
		if (type && (!xmlStrcmp(type, BAD_CAST "Const") ||
			     !xmlStrcmp(type, BAD_CAST "Constant")) &&
		    (!id || !has_edge_from(edges, id)))
			orphans++;
		xmlFree(id);
		xmlFree(et);
		xmlFree(type);
	}
	xmlFreeDoc(doc);
	f = open_memstream(&line, &len);
	if (f) {
		fprintf(f, "ir layers=%u weights=%llu orphans=%u types=",
			nlayers, (unsigned long long)weights, orphans);
		tally_put(f, &types);
		fputs(" ops=", f);
		tally_put(f, &ops);
		fputs(" outputs=", f);
		tally_put(f, &outs);
		if (fclose(f))
			line = NULL;
	} else {
		tally_free(&types);
		tally_free(&ops);
		tally_free(&outs);
	}
	if (line && !types.oom && !ops.oom && !outs.oom)
		vnpu_trace("%s", line);
	free(line);
}
