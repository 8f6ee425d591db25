/* SPDX-License-Identifier: MIT */
/*
 * ONNX frontend internals shared by the model reader (lib/onnx/read.c: the
 * protobuf and the model; lib/onnx/build.c: graphs, names, sub-graphs;
 * lib/onnx/tensor.c: tensors), the building blocks of lib/onnx/translate.c
 * (messages, attributes, nodes, constants, shared subgraphs) and the
 * translator files lib/onnx/<area>.c, one per op group, each a table of
 * one translator per ONNX op building OpenVINO-opset nodes.
 *
 * While a model is read, every value of the graph carries what is known of
 * it at load time: its element type (0 if unknown) and its shape (rank -1
 * if unknown, -1 for an unknown dimension).  Compilation infers them again
 * from the real input shapes; the frontend only uses them to pick a
 * translation (a rank for BatchNormalization, a weight shape for a grouped
 * Conv).
 */
#ifndef NPR_ONNX_OPS_H
#define NPR_ONNX_OPS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "onnx.pb-c.h"

/* Opsets of the default domain this frontend reads. */
#define ONNX_OPSET_MIN		1
#define ONNX_OPSET_MAX		18

struct onnx_name;
struct onnx_op;

/**
 * struct onnx_ctx - the state of one model being read
 * @g: the graph under construction.
 * @base_dir: where external data files are looked up, NULL to refuse them.
 * @opset: opset version of the default ("" / "ai.onnx") domain.
 * @names: tensor name -> value table (open addressing).
 * @names_cap: slots in @names, a power of two.
 * @names_cnt: slots in use.
 * @layer: layer id of the next node (ONNX node index, or past them).
 * @np: the ONNX node being translated, NULL outside translation.
 * @op: its translator.
 * @name: its name, or "<op_type>_<index>" when it has none.
 * @vin: value index of each of its inputs, -1 for an absent one.
 * @nin: number of entries in @vin.
 * @parent: for a sub-graph (an If branch, a Loop or Scan body), the
 *          context of the graph around it, whose values it may name;
 *          NULL for the model.
 * @depth: 0 for the model, 1 for a sub-graph of it, ...
 * @caps: outer values a sub-graph names: each became a body Parameter,
 *        g->inputs[ninputs - ncaps + k] (constants are copied instead).
 * @ncaps: number of entries in @caps.
 * @in_axis: sub-graphs: per GraphProto input, an axis to squeeze out of
 *           the Parameter (a Scan slice), or -1; NULL for none.
 * @out_axis: sub-graphs: per GraphProto output, an axis to insert before
 *            the Result (a stacked Loop or Scan output), or -1; NULL for
 *            none.
 * @src: the model's graph read from a mapped file: the weights store of the
 *       mapping, which initializers' raw_data may stay in (constants
 *       refer to it, c->g->weights holds it); NULL: bytes are copied.
 * @src_refs: constants that refer to @src.
 */
struct onnx_ctx {
	struct npr_graph *g;
	const char *base_dir;
	int64_t opset;
	struct onnx_name *names;
	size_t names_cap, names_cnt;
	int64_t layer;
	const Onnx__NodeProto *np;
	const struct onnx_op *op;
	const char *name;
	char namebuf[96];
	int *vin;
	int nin;
	struct onnx_ctx *parent;
	int depth;
	int *caps;
	int ncaps;
	const int64_t *in_axis;
	const int64_t *out_axis;
	struct npr_weights *src;
	size_t src_refs;
};

/**
 * struct onnx_body - a sub-graph attribute read into a graph of its own
 * @g: the body: Parameters for the GraphProto's inputs, then one per
 *     captured outer value; Results for its outputs.
 * @nin: number of GraphProto inputs.
 * @nout: number of GraphProto outputs.
 * @caps: per captured Parameter, the value of the graph around it.
 * @ncaps: their number.
 */
struct onnx_body {
	struct npr_graph *g;
	int nin, nout;
	int *caps;
	int ncaps;
};

/**
 * struct onnx_op - how one ONNX op type becomes graph nodes
 * @type: ONNX op_type.
 * @fn: the translator: write the value of each ONNX output k into out[k]
 *      (-1 for an output it cannot produce) and return 0 or -errno with a
 *      message set through npr_onnx_err().
 * @nin_min: fewest inputs; these must not be left out (empty names).
 * @nin_max: most inputs, -1 for no limit.
 * @nout_max: most outputs.
 * @ov: OpenVINO op type for table-driven translators, or NULL.
 * @arg: translator-specific.
 */
struct onnx_op {
	const char *type;
	int (*fn)(struct onnx_ctx *c, int *out);
	int nin_min, nin_max, nout_max;
	const char *ov;
	int arg;
};

/* The translator tables, NULL-terminated (lib/onnx/<area>.c). */
extern const struct onnx_op npr_onnx_ops_eltwise[];
extern const struct onnx_op npr_onnx_ops_nn[];
extern const struct onnx_op npr_onnx_ops_shape[];
extern const struct onnx_op npr_onnx_ops_index[];
extern const struct onnx_op npr_onnx_ops_loss[];
extern const struct onnx_op npr_onnx_ops_math[];
extern const struct onnx_op npr_onnx_ops_control[];
extern const struct onnx_op npr_onnx_ops_rnn[];
extern const struct onnx_op npr_onnx_ops_misc[];

/* ---- lib/onnx/translate.c: messages ---- */

int npr_onnx_err(struct onnx_ctx *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- lib/onnx/tensor.c: tensors ---- */

unsigned int npr_onnx_elem_type(int32_t dt);
int npr_onnx_tensor_const(struct onnx_ctx *c, const Onnx__TensorProto *t,
			  const char *suffix);
int npr_onnx_const_ints(struct onnx_ctx *c, int v, int64_t *out, int max);
int npr_onnx_const_doubles(struct onnx_ctx *c, int v, double *out,
			   int64_t max);

/* ---- lib/onnx/build.c: sub-graphs, the translator lookup ---- */

int npr_onnx_body_read(struct onnx_ctx *c, const char *attr,
		       const int64_t *in_axis, int nin_axis,
		       const int64_t *out_axis, int nout_axis,
		       struct onnx_body *b);
void npr_onnx_body_fini(struct onnx_body *b);
int npr_onnx_sub_begin(struct onnx_ctx *c, struct onnx_ctx *sub);
int npr_onnx_sub_param(struct onnx_ctx *sub, unsigned int type,
		       const struct npr_shape *shape, const char *name);
int npr_onnx_sub_result(struct onnx_ctx *sub, int v, const char *name);
int npr_onnx_sub_end(struct onnx_ctx *sub, int err, struct onnx_body *b);
const struct onnx_op *npr_onnx_op_find(const char *type);

/* ---- lib/onnx/schema.c: the attributes an op defines ---- */

int npr_onnx_check_attrs(struct onnx_ctx *c);

/* ---- lib/onnx/translate.c: attributes of the current ONNX node ---- */

const Onnx__AttributeProto *npr_onnx_attr_find(struct onnx_ctx *c,
					       const char *name);
int npr_onnx_attr_int(struct onnx_ctx *c, const char *name, int64_t def,
		      int64_t *out);
int npr_onnx_attr_float(struct onnx_ctx *c, const char *name, double def,
			double *out);
int npr_onnx_attr_ints(struct onnx_ctx *c, const char *name, int64_t *out,
		       int max, int *count);
int npr_onnx_attr_str(struct onnx_ctx *c, const char *name, const char *def,
		      char *buf, size_t len);

/* ---- lib/onnx/translate.c: building nodes ---- */

int npr_onnx_node(struct onnx_ctx *c, const char *type, unsigned int version,
		  const char *suffix, int nin, const int *in, int nout, int *out);
int npr_onnx_set_attr(struct onnx_ctx *c, int node, const char *key,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int npr_onnx_set_ints(struct onnx_ctx *c, int node, const char *key,
		      const int64_t *v, int n);
int npr_onnx_set_shape_attr(struct onnx_ctx *c, int node,
			    const struct npr_shape *s);
int npr_onnx_const_take(struct onnx_ctx *c, unsigned int type,
			const struct npr_shape *shape, void *data, size_t nbytes,
			const char *suffix);
int npr_onnx_const(struct onnx_ctx *c, unsigned int type,
		   const struct npr_shape *shape, const void *data,
		   const char *suffix);
int npr_onnx_const_ref(struct onnx_ctx *c, unsigned int type,
		       const struct npr_shape *shape, const void *data,
		       size_t nbytes, const char *suffix);
int npr_onnx_const_i64(struct onnx_ctx *c, const int64_t *v, int n,
		       const char *suffix);
int npr_onnx_scalar(struct onnx_ctx *c, int like, double val,
		    const char *suffix);
int npr_onnx_unary(struct onnx_ctx *c, const char *type, int x,
		   const char *suffix);
int npr_onnx_binary(struct onnx_ctx *c, const char *type, int a, int b,
		    const char *suffix);

/* ---- lib/onnx/translate.c: shared subgraphs ---- */

int npr_onnx_norm_axis(struct onnx_ctx *c, int64_t axis, int rank,
		       int64_t *out);
int npr_onnx_known_rank(struct onnx_ctx *c, int v, const char *why);
int npr_onnx_with_list(struct onnx_ctx *c, const char *type, int x,
		       const int64_t *v, int n, const char *suffix);
int npr_onnx_shape_of(struct onnx_ctx *c, int x, const char *suffix);
int npr_onnx_strided(struct onnx_ctx *c, int x, const int64_t *b,
		     const int64_t *e, const int64_t *s, const int64_t *bm,
		     const int64_t *em, int n, const char *suffix);
int npr_onnx_reshape_to(struct onnx_ctx *c, int x, const int64_t *t, int n,
			bool special_zero, const char *suffix);
int npr_onnx_reduce(struct onnx_ctx *c, const char *type, int x,
		    const int64_t *axes, int n, bool keep, const char *suffix);
int npr_onnx_flatten2d(struct onnx_ctx *c, int x, int64_t axis,
		       const char *suffix);
int npr_onnx_per_channel(struct onnx_ctx *c, int p, int r, const char *suffix);

/* ---- lib/onnx/index.c: shared subgraphs ---- */

int npr_onnx_arg_index(struct onnx_ctx *c, int x, int64_t axis, bool min,
		       bool last);
int npr_onnx_pick(struct onnx_ctx *c, int s, int64_t i, const char *suffix);
int npr_onnx_convert(struct onnx_ctx *c, int x, unsigned int type,
		     const char *suffix);

/* ---- lib/onnx/math.c: shared subgraphs ---- */

int npr_onnx_saturate(struct onnx_ctx *c, int v, unsigned int type,
		      const char *suffix);
int npr_onnx_round_even(struct onnx_ctx *c, int v, const char *suffix);

/* ---- small inline helpers ---- */

/* A protobuf string field: "" for an absent one. */
static inline const char *onnx_str(const char *s)
{
	return s ? s : "";
}

static inline struct npr_value *onnx_val(struct onnx_ctx *c, int v)
{
	return &c->g->vals[v];
}

/* The load-time shape of value @v (rank -1 when unknown). */
static inline struct npr_shape *onnx_vshape(struct onnx_ctx *c, int v)
{
	return &c->g->vals[v].shape;
}

static inline int onnx_rank(struct onnx_ctx *c, int v)
{
	return c->g->vals[v].shape.rank;
}

/* The i-th input's value, -1 when absent. */
static inline int onnx_in(struct onnx_ctx *c, int i)
{
	return i < c->nin ? c->vin[i] : -1;
}

/* The i-th input's value; -EINVAL with a message when it is absent. */
static inline int onnx_need(struct onnx_ctx *c, int i)
{
	int v = onnx_in(c, i);

	return v >= 0 ? v : npr_onnx_err(c, -EINVAL, "input %d is required", i);
}

static inline const char *onnx_tf(bool b)
{
	return b ? "true" : "false";
}

/* @n consecutive values from @from. */
static inline void onnx_iota(int64_t *v, int n, int64_t from)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = from + i;
}

#endif /* NPR_ONNX_OPS_H */
