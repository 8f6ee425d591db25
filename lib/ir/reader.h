/* SPDX-License-Identifier: MIT */
/*
 * OpenVINO IR frontend internals: what lib/ir/read.c (the XML, the
 * files), lib/ir/net.c (the network, bodies, edges) and lib/ir/layer.c
 * (one layer: text, ports, Parameter, Const) share.
 */
#ifndef NPR_IR_READER_H
#define NPR_IR_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <libxml/tree.h>

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

static inline bool ir_is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

/* The line of @n in the file as given (before leading blank lines). */
static inline unsigned int ir_line_of(const struct ir_ctx *c,
				      const xmlNode *n)
{
	return (unsigned int)xmlGetLineNo((xmlNode *)n) + c->line_offset;
}

static inline const char *ir_skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static inline struct npr_node *ir_node_of(struct ir_ctx *c, int li)
{
	return &c->g->nodes[li];
}

/* lib/ir/layer.c */
const char *npr_ir_list_text(struct ir_ctx *c, xmlNode *list, bool *oom);
const char *npr_ir_xattr(struct ir_ctx *c, xmlNode *n, const char *name,
			 bool *oom);
int npr_ir_parse_u64(const char *s, uint64_t *out);
int npr_ir_parse_id(const char *s, int64_t *out);
unsigned int npr_ir_opset_number(const char *v);
struct ir_port *npr_ir_find_port(struct ir_layer *l, int64_t id);
int npr_ir_collect_ports(struct ir_ctx *c, int li, xmlNode *in, xmlNode *out,
			 int *nin, int *nout);
int npr_ir_output_values(struct ir_ctx *c, int li);
int npr_ir_parameter_layer(struct ir_ctx *c, int li, int nin, int nout);
int npr_ir_const_layer(struct ir_ctx *c, int li, int nin, int nout);
int npr_ir_resolve_op(struct ir_ctx *c, int li);

/* lib/ir/net.c */
int npr_ir_build(struct ir_ctx *c, xmlNode *net);
void npr_ir_ctx_fini(struct ir_ctx *c);

#endif /* NPR_IR_READER_H */
