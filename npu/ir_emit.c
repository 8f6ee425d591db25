// SPDX-License-Identifier: MIT
/*
 * A minimal OpenVINO IR (v11) writer for compiled graphs, used by the npu
 * backend to hand a model to the Level Zero compiler as NGRAPH_LITE.
 *
 * It writes the live nodes of a compiled graph with their original
 * attributes, every constant a live node reads as a Const layer (in the
 * graph's compute type), and the edges.  The project's general IR writer
 * (lib/ir_write.c) replaces this once it is merged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/core.h"
#include "npu.h"

struct emit {
	FILE *x;
	char *bin;
	size_t bin_len, bin_cap;
	int64_t *val_layer;	/* per value: layer id producing it, -1 */
	int *val_port;		/* per value: output port id */
	int64_t next_id;
	unsigned int *type;	/* per value: the type to declare */
};

static const char *prec_word(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_F32: return "FP32";
	case NPR_ELEM_F16: return "FP16";
	case NPR_ELEM_BF16: return "BF16";
	case NPR_ELEM_F64: return "FP64";
	case NPR_ELEM_I4: return "I4";
	case NPR_ELEM_U4: return "U4";
	case NPR_ELEM_I8: return "I8";
	case NPR_ELEM_U8: return "U8";
	case NPR_ELEM_I16: return "I16";
	case NPR_ELEM_U16: return "U16";
	case NPR_ELEM_I32: return "I32";
	case NPR_ELEM_U32: return "U32";
	case NPR_ELEM_I64: return "I64";
	case NPR_ELEM_U64: return "U64";
	case NPR_ELEM_BOOLEAN: return "BOOL";
	case NPR_ELEM_U1: return "U1";
	}
	return "UNSPECIFIED";
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void put_shape_attr(FILE *f, const struct npr_shape *s)
{
	int i;

	fputs(" shape=\"", f);
	for (i = 0; i < s->rank; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)s->d[i]);
	fputc('"', f);
}

static void put_port(FILE *f, int id, const struct npr_value *v,
		     unsigned int type, bool out)
{
	int i;

	fprintf(f, "\t\t\t\t<port id=\"%d\"", id);
	if (out)
		fprintf(f, " precision=\"%s\"", prec_word(type));
	if (out && v->name) {
		const char *s;

		fputs(" names=\"", f);
		for (s = v->name; *s; s++) {
			if (*s == ',')
				fputc('\\', f);
			if (*s == '"')
				fputs("&quot;", f);
			else if (*s == '&')
				fputs("&amp;", f);
			else if (*s == '<')
				fputs("&lt;", f);
			else
				fputc(*s, f);
		}
		fputc('"', f);
	}
	fputs(">\n", f);
	for (i = 0; i < v->shape.rank; i++)
		fprintf(f, "\t\t\t\t\t<dim>%lld</dim>\n",
			(long long)v->shape.d[i]);
	fputs("\t\t\t\t</port>\n", f);
}

static int bin_append(struct emit *e, const void *p, size_t n, size_t *off)
{
	size_t pad = (64 - (e->bin_len & 63)) & 63;

	if (e->bin_len + pad + n > e->bin_cap) {
		size_t cap = (e->bin_len + pad + n) * 2 + 4096;
		char *b = realloc(e->bin, cap);

		if (!b)
			return -ENOMEM;
		e->bin = b;
		e->bin_cap = cap;
	}
	memset(e->bin + e->bin_len, 0, pad);
	e->bin_len += pad;
	*off = e->bin_len;
	if (n)
		memcpy(e->bin + e->bin_len, p, n);
	e->bin_len += n;
	return 0;
}

static int emit_const(struct emit *e, const struct npr_graph *g, int vi)
{
	const struct npr_value *v = &g->vals[vi];
	size_t off, size = v->nbytes;
	int64_t id = e->next_id++;
	int err;

	err = bin_append(e, v->data, size, &off);
	if (err)
		return err;
	fprintf(e->x, "\t\t<layer id=\"%lld\" name=\"const_%d\" type=\"Const\" version=\"opset1\">\n",
		(long long)id, vi);
	fprintf(e->x, "\t\t\t<data element_type=\"%s\" offset=\"%zu\" size=\"%zu\"",
		npr_elem_name(v->type), off, size);
	put_shape_attr(e->x, &v->shape);
	fputs("/>\n\t\t\t<output>\n", e->x);
	put_port(e->x, 0, v, v->type, true);
	fputs("\t\t\t</output>\n\t\t</layer>\n", e->x);
	e->val_layer[vi] = id;
	e->val_port[vi] = 0;
	return 0;
}

static int emit_node(struct emit *e, const struct npr_graph *g, int ni)
{
	const struct npr_node *n = &g->nodes[ni];
	bool param = !strcmp(n->type, "Parameter");
	int64_t id;
	int i, err;

	for (i = 0; i < n->nin; i++) {
		int vi = n->in[i];

		if (g->vals[vi].data && e->val_layer[vi] < 0) {
			err = emit_const(e, g, vi);
			if (err)
				return err;
		}
		if (e->val_layer[vi] < 0)
			return npr_node_err(n, -EINVAL,
					    "npu: input %d has no producer", i);
	}
	id = e->next_id++;
	fprintf(e->x, "\t\t<layer id=\"%lld\" name=\"", (long long)id);
	put_escaped(e->x, n->name ? n->name : "");
	fprintf(e->x, "\" type=\"");
	put_escaped(e->x, n->type);
	fputc('"', e->x);
	if (n->version)
		fprintf(e->x, " version=\"opset%u\"", n->version);
	fputs(">\n", e->x);
	if (param) {
		fprintf(e->x, "\t\t\t<data element_type=\"%s\"",
			npr_elem_name(e->type[n->out[0]]));
		put_shape_attr(e->x, &g->vals[n->out[0]].shape);
		fputs("/>\n", e->x);
	} else if (n->nattr) {
		fputs("\t\t\t<data", e->x);
		for (i = 0; i < n->nattr; i++) {
			fprintf(e->x, " %s=\"", n->attr[i].key);
			put_escaped(e->x, n->attr[i].val);
			fputc('"', e->x);
		}
		fputs("/>\n", e->x);
	}
	if (n->nin) {
		fputs("\t\t\t<input>\n", e->x);
		for (i = 0; i < n->nin; i++)
			put_port(e->x, i, &g->vals[n->in[i]], 0, false);
		fputs("\t\t\t</input>\n", e->x);
	}
	if (n->nout) {
		fputs("\t\t\t<output>\n", e->x);
		for (i = 0; i < n->nout; i++) {
			put_port(e->x, n->nin + i, &g->vals[n->out[i]],
				 e->type[n->out[i]], true);
			e->val_layer[n->out[i]] = id;
			e->val_port[n->out[i]] = n->nin + i;
		}
		fputs("\t\t\t</output>\n", e->x);
	}
	fputs("\t\t</layer>\n", e->x);
	return 0;
}

/**
 * npu_ir_emit() - serialize a compiled graph as IR xml + weights
 * @g: compiled graph.
 * @in_types: per graph input, the element type the caller supplies.
 * @out_types: per graph output, the element type the caller reads.
 * @xml, @xml_len: out, malloc'd xml text.
 * @bin, @bin_len: out, malloc'd weights (may be NULL when empty).
 *
 * Return: 0 or -errno with npr_err() set.
 */
int npu_ir_emit(const struct npr_graph *g, const unsigned int *in_types,
		const unsigned int *out_types, char **xml, size_t *xml_len,
		void **bin, size_t *bin_len)
{
	struct emit e = { 0 };
	int64_t *layer_of;
	char *buf = NULL;
	size_t len = 0;
	int i, j, err = 0;

	e.val_layer = malloc(sizeof(*e.val_layer) * (g->nvals + 1));
	e.val_port = malloc(sizeof(*e.val_port) * (g->nvals + 1));
	e.type = malloc(sizeof(*e.type) * (g->nvals + 1));
	layer_of = malloc(sizeof(*layer_of) * (g->nnodes + 1));
	e.x = open_memstream(&buf, &len);
	if (!e.val_layer || !e.val_port || !e.type || !layer_of || !e.x) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nvals; i++) {
		e.val_layer[i] = -1;
		e.type[i] = g->vals[i].type;
	}
	for (i = 0; i < g->ninputs; i++)
		e.type[g->nodes[g->inputs[i]].out[0]] = in_types[i];
	for (i = 0; i < g->noutputs; i++)
		e.type[g->nodes[g->outputs[i]].in[0]] = out_types[i];
	fputs("<?xml version=\"1.0\"?>\n<net name=\"", e.x);
	put_escaped(e.x, g->name ? g->name : "model");
	fputs("\" version=\"11\">\n\t<layers>\n", e.x);
	/*
	 * Parameters and Results in the graph's port order (a reader numbers
	 * ports in file order), everything else in topological order.
	 */
	for (i = 0; i < g->nnodes; i++)
		layer_of[i] = -1;
	for (i = 0; i < g->ninputs && !err; i++) {
		err = emit_node(&e, g, g->inputs[i]);
		layer_of[g->inputs[i]] = e.next_id - 1;
	}
	for (i = 0; i < g->nnodes && !err; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead || (n->op->flags & NPR_OP_SOURCE) ||
		    !strcmp(n->type, "Result"))
			continue;
		err = emit_node(&e, g, i);
		layer_of[i] = e.next_id - 1;
	}
	for (i = 0; i < g->noutputs && !err; i++) {
		err = emit_node(&e, g, g->outputs[i]);
		layer_of[g->outputs[i]] = e.next_id - 1;
	}
	if (err)
		goto out;
	fputs("\t</layers>\n\t<edges>\n", e.x);
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (layer_of[i] < 0)
			continue;
		for (j = 0; j < n->nin; j++)
			fprintf(e.x, "\t\t<edge from-layer=\"%lld\" from-port=\"%d\" to-layer=\"%lld\" to-port=\"%d\"/>\n",
				(long long)e.val_layer[n->in[j]],
				e.val_port[n->in[j]], (long long)layer_of[i],
				j);
	}
	fputs("\t</edges>\n</net>\n", e.x);
out:
	if (e.x && fclose(e.x) && !err)
		err = -ENOMEM;
	free(e.val_layer);
	free(e.val_port);
	free(e.type);
	free(layer_of);
	if (err) {
		free(buf);
		free(e.bin);
		return err;
	}
	*xml = buf;
	*xml_len = len;
	*bin = e.bin;
	*bin_len = e.bin_len;
	return 0;
}
