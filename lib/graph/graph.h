/* SPDX-License-Identifier: MIT */
/*
 * The graph: typed values, nodes with OpenVINO opset semantics.
 *
 * A graph is a flat array of nodes and a flat array of values.  Every node
 * output is a value; every node input refers to a value by index.  A value
 * whose data pointer is set is a constant.  Frontends (lib/ir/read.c,
 * lib/onnx/translate.c) build graphs; lib/passes/compile.c clones and lowers
 * them and has lib/ops/infer.c infer and fold them; backends execute them.
 */
#ifndef NPR_GRAPH_H
#define NPR_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/npuring.h"
#include "npuring.h"

struct npr_graph;
struct npr_node;
struct npr_op_def;

/**
 * struct npr_shape - a static or partially dynamic shape
 * @rank: number of dimensions, 0 for a scalar, -1 unknown rank.
 * @d: dimensions; -1 marks a dynamic dimension.
 */
struct npr_shape {
	int rank;
	int64_t d[NPR_MAX_RANK];
};

/**
 * struct npr_tensor - a typed view of memory, what kernels read and write
 * @type: enum npr_elem_type.
 * @shape: a fully static shape.
 * @data: the elements, C order, densely packed.
 * @nbytes: size of @data in bytes.
 */
struct npr_tensor {
	unsigned int type;
	struct npr_shape shape;
	void *data;
	size_t nbytes;
};

/*
 * A kernel: compute the outputs of node @n from its inputs, all with
 * static shapes and allocated data.  Compute types are f32, i32, i64,
 * u8, i8 and boolean (f16/bf16 are lowered to f32 before inference).
 * Returns 0 or -errno with npr_node_err() set.
 */
typedef int (*npr_eval_fn)(const struct npr_node *n,
			   const struct npr_tensor *in,
			   struct npr_tensor *out);
/* An evaluator: the kernel that computes nodes of op @op, or NULL. */
typedef npr_eval_fn (*npr_evaluator_fn)(const struct npr_op_def *op);

/*
 * struct npr_weights - the weights store: reference-counted backing for
 * constant data (a mapped .bin, .onnx or compiled-model blob file, or a
 * heap copy).  Values point into it.  @mapped: a read-only private file
 * mapping, never written, whose pages may be dropped from memory
 * (npr_graph_drop_pages()).  ("Blob" names compiled-model files only:
 * lib/store/.)
 */
struct npr_weights {
	int refs;
	void *data;
	size_t size;
	bool mapped;
};

struct npr_weights *npr_weights_get(struct npr_weights *b);
void npr_weights_put(struct npr_weights *b);

void npr_graph_drop_pages(const struct npr_graph *g, const void *p, size_t n);

/*
 * The strings of a graph imported from a blob (names, op types, attribute
 * keys and values, variable ids) lie in the blob, in g->weights, read
 * only; npr_graph_clone() gives heap copies.  Replace or remove one with
 * npr_graph_free_str(), never free().
 */
bool npr_graph_str_borrowed(const struct npr_graph *g, const char *s);
void npr_graph_free_str(const struct npr_graph *g, char *s);
void npr_graph_drop_weights(const struct npr_graph *g);

/**
 * struct npr_value - one tensor edge of the graph
 * @type: element type.
 * @shape: shape (inferred; before inference, the one the file declares).
 * @decl: the shape the file declared for this port, rank -1 if none.
 * @producer: index of the producing node.
 * @port: output index on the producer.
 * @data: constant data, or NULL for a computed value.  Aligned to the
 *        element size, with one exception: in a loaded model's graph a
 *        floating-point constant may refer to its raw_data where it is in
 *        the mapped .onnx file (g->weights), at any offset.  Compile gives
 *        those an aligned copy first (lib/passes/compile.c); before that, read
 *        them through npr_convert() or byte copies only.
 * @nbytes: size of @data.
 * @owned: heap memory owned by the value (freed with the graph), if any.
 * @src: for a constant compile converted to f32 (pass_lower_half()), the
 *       bytes in g->weights it was converted from, of type @src_type;
 *       NULL otherwise.  A later pass may change the constant: a
 *       weightless export (lib/store/weights.c) checks it first.
 * @src_type: the element type at @src.
 * @name: tensor name (first of the port's "names"), or NULL.
 */
struct npr_value {
	unsigned int type;
	struct npr_shape shape;
	struct npr_shape decl;
	int producer;
	int port;
	const void *data;
	size_t nbytes;
	void *owned;
	const void *src;
	unsigned int src_type;
	char *name;
};

struct npr_attr {
	char *key;
	char *val;
};

/*
 * Sub-graphs.  A control-flow op (TensorIterator, Loop, If) owns bodies:
 * complete graphs whose Parameters and Results are tied to the node's
 * inputs and outputs by a port map, and (for the loops) to each other by
 * back edges.  Bodies nest; NPR_MAX_BODY_DEPTH bounds the nesting.
 */
#define NPR_MAX_BODY_DEPTH	8

/* What a body port carries besides data. */
enum npr_body_purpose {
	NPR_BODY_DATA = 0,
	NPR_BODY_CURRENT_ITERATION,	/* Loop input: the iteration number */
	NPR_BODY_EXECUTION_CONDITION,	/* Loop output: go on when true */
};

/**
 * struct npr_body_port - one port_map entry of a body
 * @out: false: an input rule (node input -> body Parameter); true: an
 *       output rule (body Result -> node output).
 * @ext: the node's input or output index, -1 when the rule has no external
 *       port (a Loop's current_iteration input or its condition output).
 * @internal: index into the body's inputs[] (input rules) or outputs[]
 *            (output rules), i.e. the Parameter or Result in file order.
 * @purpose: enum npr_body_purpose.
 * @sliced: @axis is given: the input is sliced (output concatenated)
 *          along it, one part per iteration.
 * @axis: the axis, negative counted from the end.
 * @start, @end: TensorIterator slice bounds, as boundaries between
 *               elements: 0 is before the first, -1 after the last.
 * @stride: step between iterations, negative to walk backwards.
 * @part_size: elements along @axis per iteration.
 */
struct npr_body_port {
	bool out;
	bool sliced;
	int ext;
	int internal;
	int purpose;
	int64_t axis, start, end, stride, part_size;
};

/**
 * struct npr_back_edge - a body Result that feeds a body Parameter of the
 * next iteration
 * @from: index into the body's outputs[].
 * @to: index into the body's inputs[].
 */
struct npr_back_edge {
	int from;
	int to;
};

/**
 * struct npr_body - a sub-graph owned by a node
 * @g: the graph, sorted, with inputs[] (Parameters) and outputs[]
 *     (Results); owned by the node.
 * @nports, @ports: its port map.
 * @nback, @back: its back edges.
 */
struct npr_body {
	struct npr_graph *g;
	int nports;
	struct npr_body_port *ports;
	int nback;
	struct npr_back_edge *back;
};

/**
 * struct npr_node - one operation
 * @name: layer name.
 * @type: op type ("Convolution").
 * @version: opset number (1 for "opset1"), 0 when not given.
 * @layer_id: id in the source file, for error messages.
 * @op: the op definition, resolved by npr_op_find().
 * @nin: number of inputs.
 * @in: value index of each input.
 * @nout: number of outputs.
 * @out: value index of each output.
 * @nattr: number of attributes.
 * @attr: attributes as strings, from the file.
 * @params: op-specific parsed attributes, set by op->parse, freed with the
 *          graph (a single malloc'd block).
 * @dead: removed by a pass; ignored by every consumer of the graph.
 * @nbodies: number of sub-graphs, 0 for all but control-flow ops.
 * @bodies: the sub-graphs (TensorIterator, Loop: the body; If: then, else),
 *          owned by the node: freed and cloned with the graph.
 * @packed: NPR_NODE_PACKED_* bits: which of @in, @out and @attr lie in
 *          the graph's arena (a graph read from a blob) instead of blocks
 *          of their own; the npr_node_set_*() and npr_node_add_attr()
 *          functions handle both.
 */
struct npr_node {
	char *name;
	char *type;
	unsigned int version;
	int64_t layer_id;
	const struct npr_op_def *op;
	int nin;
	int *in;
	int nout;
	int *out;
	int nattr;
	struct npr_attr *attr;
	void *params;
	bool dead;
	int nbodies;
	struct npr_body *bodies;
	unsigned char packed;
};

#define NPR_NODE_PACKED_IN	(1U << 0)
#define NPR_NODE_PACKED_OUT	(1U << 1)
#define NPR_NODE_PACKED_ATTR	(1U << 2)

/**
 * struct npr_graph - a model
 * @name: model name.
 * @ir_version: source IR version, 0 when not from IR.
 * @nodes, @nnodes: nodes, in topological order once npr_graph_sort() ran.
 * @vals, @nvals: values.
 * @inputs, @ninputs: node indexes of the Parameters, in file order.
 * @outputs, @noutputs: node indexes of the Results, in file order.
 * @weights: the weights store constants point into, or NULL.
 * @vars, @nvars: variables of a compiled stateful graph (lib/passes/stateful.c).
 * @nstate_in, @nstate_out: hidden ports for them, at the end of @inputs
 *                          and @outputs.
 * @arena: blocks npr_graph_alloc() carves small arrays from, freed with
 *         the graph.
 * @fold: how constant folding computes a node (lib/ops/infer.c), or NULL
 *        to fold nothing; set by whoever compiles (npr_compile_graph()),
 *        inherited by bodies and clones; the IR writer infers with it.
 */
struct npr_graph {
	char *name;
	int ir_version;
	struct npr_node *nodes;
	int nnodes, cap_nodes;
	struct npr_value *vals;
	int nvals, cap_vals;
	int *inputs;
	int ninputs;
	int *outputs;
	int noutputs;
	struct npr_weights *weights;
	struct npr_variable *vars;
	int nvars;
	int nstate_in, nstate_out;
	struct npr_arena *arena;
	npr_evaluator_fn fold;
	bool view;	/* npr_graph_view(): nodes and values only its own */
};

/**
 * struct npr_variable - a variable of a stateful model, once compiled
 * @id: variable_id.
 * @type: compute type.
 * @shape: its shape: static, or with one dynamic dimension (-1) along
 *         which each inference appends (@append_axis).
 * @state_in: index in g->inputs of the hidden input holding the value.
 * @valid_in: index in g->inputs of the hidden boolean scalar saying the
 *            value is set (false: the ReadValue's initial value is used),
 *            or -1 when the ReadValue has no initial value (zeros).
 * @state_out: index in g->outputs of the hidden output with the value to
 *             keep, or -1 when no Assign writes the variable.
 * @read_node: the ReadValue's node (now a Select, or dead).
 * @append_axis: -1, or the dynamic axis of a variable whose Assign
 *               appends to it (Assign(Concat(ReadValue, x)) along that
 *               axis): @state_out is then x, the new part only, and
 *               the request appends it to the value it keeps.
 */
struct npr_variable {
	char *id;
	unsigned int type;
	struct npr_shape shape;
	int state_in, valid_in, state_out;
	int read_node;
	int append_axis;
};

/* lib/passes/stateful.c: give each variable hidden ports (see there) */
int npr_pass_state(struct npr_graph *g);
/* lib/passes/stateful.c: explicit state input/output pairs into variables */
int npr_make_stateful_pattern(struct npr_graph *g, const char *in_pat,
			      const char *out_pat,
			      const struct npr_shape *shapes);
int npr_make_stateful(struct npr_graph *g, const char *const *names,
		      int count, const struct npr_shape *shapes, bool dynamic);

/**
 * struct npr_op_def - one op type, a range of opset versions
 * @type: op type name, as in the IR ("Convolution").
 * @vmin, @vmax: opset versions accepted.
 * @nin_min, @nin_max: number of inputs accepted.
 * @parse: optional; parse and validate attributes into node->params.
 *         Return 0 or -errno with npr_err() set naming what is wrong.
 * @infer: set type and shape of every output from the inputs.  May need
 *         the values of some inputs (a Reshape target): it then fails with
 *         -ENODATA when they are not constant, and compile leaves the
 *         outputs' shapes dynamic for the backend to infer again with the
 *         values at inference time (see Documentation/design.rst, "Shapes
 *         that depend on values").  Must not keep pointers to input data.
 *         Return 0 or -errno.
 * @flags: NPR_OP_*.
 *
 * A definition says what an op is, not how a device computes it: the
 * kernels are the backends' (ref/kernels/registry.c maps a definition to
 * its CPU kernel), and constant folding asks the graph's evaluator
 * (struct npr_graph, @fold).
 */
struct npr_op_def {
	const char *type;
	unsigned int vmin, vmax;
	int nin_min, nin_max;
	int (*parse)(struct npr_graph *g, struct npr_node *n);
	int (*infer)(struct npr_graph *g, struct npr_node *n);
	unsigned int flags;
};

#define NPR_OP_NO_FOLD		(1U << 0)	/* never constant-fold */
#define NPR_OP_SOURCE		(1U << 1)	/* Parameter / Const */
#define NPR_OP_SINK		(1U << 2)	/* Result */
#define NPR_OP_BODIES		(1U << 8)	/* owns sub-graphs (If, loops) */

/* lib/ops/registry.c: the registry of all op definitions. */
const struct npr_op_def *npr_op_find(const char *type, unsigned int version);
const struct npr_op_def *npr_op_get(int i);

/* Graph construction (lib/graph/graph.c). */
struct npr_graph *npr_graph_new(void);
void npr_graph_free(struct npr_graph *g);
struct npr_graph *npr_graph_clone(const struct npr_graph *g);
struct npr_graph *npr_graph_clone_take(struct npr_graph *g);
struct npr_graph *npr_graph_clone_shared(const struct npr_graph *g);
struct npr_graph *npr_graph_view(const struct npr_graph *g);
/* @n zeroed bytes for the lifetime of @g (16-byte aligned), or NULL. */
void *npr_graph_alloc(struct npr_graph *g, size_t n);
/* Append a node; returns its index or -ENOMEM.  Strings are copied. */
int npr_graph_add_node(struct npr_graph *g, const char *name, const char *type,
		       unsigned int version, int64_t layer_id);
/* Append a value produced by (node, port); returns its index or -ENOMEM. */
int npr_graph_add_value(struct npr_graph *g, int producer, int port);
int npr_node_set_inputs(struct npr_node *n, int nin);
int npr_node_set_outputs(struct npr_graph *g, int node, int nout);
int npr_node_wire(struct npr_graph *g, int node, int nin, const int *in);
int npr_node_add_attr(struct npr_node *n, const char *key, const char *val);
/*
 * Give @n a body: it takes @body over (also on failure, when it frees it).
 * Returns the body's index or -ENOMEM.
 *
 * A frontend builds a body like a model: nodes with ->op resolved,
 * inputs[] listing its Parameters and outputs[] its Results (the order
 * port rules index), sorted with npr_graph_sort(), and a reference on the
 * weights store if its constants point into it.  Then it attaches the body
 * and adds the rules; re-read &g->nodes[idx] after adding nodes to the
 * outer graph, which may move them.  Bodies are parsed and checked by the
 * op's parse like any attribute.
 */
int npr_node_add_body(struct npr_node *n, struct npr_graph *body);
/* Append a port map rule or a back edge to body @b; 0 or -ENOMEM. */
int npr_body_add_port(struct npr_body *b, const struct npr_body_port *p);
int npr_body_add_back_edge(struct npr_body *b, int from, int to);
/* Sort nodes topologically (stable w.r.t. file order); -ELOOP on a cycle. */
int npr_graph_sort(struct npr_graph *g);

static inline struct npr_value *npr_in(struct npr_graph *g,
				       const struct npr_node *n, int i)
{
	return &g->vals[n->in[i]];
}

static inline struct npr_value *npr_out(struct npr_graph *g,
					const struct npr_node *n, int i)
{
	return &g->vals[n->out[i]];
}

/*
 * Attribute access (lib/graph/attr.c).  npr_attr() gives the raw string or
 * NULL.  The others return 0 or -EINVAL with npr_node_err() set: on a
 * malformed value, and for npr_attr_ints() / npr_attr_floats() on a
 * missing key that is not @optional.  A missing key is not an error for
 * npr_attr_int(), npr_attr_float(), npr_attr_bool() and npr_attr_enum():
 * *out is then their @def.
 */
const char *npr_attr(const struct npr_node *n, const char *key);
int npr_attr_int(const struct npr_node *n, const char *key, int64_t def,
		 int64_t *out);
int npr_attr_float(const struct npr_node *n, const char *key, double def,
		   double *out);
/* Comma-separated integers; *count set; "" gives 0 entries. Missing key:
 * -EINVAL unless @optional, then *count = 0. */
int npr_attr_ints(const struct npr_node *n, const char *key, int64_t *out,
		  int max, int *count, bool optional);
int npr_attr_floats(const struct npr_node *n, const char *key, float *out,
		    int max, int *count, bool optional);
int npr_attr_bool(const struct npr_node *n, const char *key, bool def,
		  bool *out);
/* One of @choices (NULL-terminated); *out = its index; absent: @def. */
int npr_attr_enum(const struct npr_node *n, const char *key,
		  const char *const *choices, int def, int *out);
/* "f32", "i64", ... -> NPR_ELEM_*, 0 if unknown. */
unsigned int npr_elem_parse(const char *s);

/* Shapes (lib/graph/shape.c). */
bool npr_shape_static(const struct npr_shape *s);
int64_t npr_shape_numel(const struct npr_shape *s);	/* -1 if dynamic or overflow */
bool npr_shape_eq(const struct npr_shape *a, const struct npr_shape *b);
/* Some output of @n has a shape known only at inference time. */
bool npr_node_dynamic(const struct npr_graph *g, const struct npr_node *n);
/* The first live node of @g with such an output, or -1. */
int npr_graph_dynamic(const struct npr_graph *g);
/* "[1,3,224,224]" into buf; returns buf. */
char *npr_shape_str(const struct npr_shape *s, char *buf, size_t len);
/* numpy broadcast of a and b into out; -EINVAL if incompatible. */
int npr_shape_broadcast(const struct npr_shape *a, const struct npr_shape *b,
			struct npr_shape *out);
/* Bytes of @numel elements of @type, sub-byte types packed (elem.c). */
size_t npr_tensor_bytes(unsigned int type, int64_t numel);

/* Read an integer constant input as int64 values (any integer or float
 * type).  Returns the count, -ENODATA (with npr_err) if not constant. */
int npr_const_ints(struct npr_graph *g, const struct npr_node *n, int input,
		   int64_t *out, int max);

/* Half precision conversions (lib/graph/elem.c). */
float npr_f16_to_f32(uint16_t h);
uint16_t npr_f32_to_f16(float f);
float npr_bf16_to_f32(uint16_t h);

/* Convert @numel elements between element types (any byte-addressable
 * numeric types).  Returns 0 or -EINVAL for unsupported pairs. */
int npr_convert(void *dst, unsigned int dst_type, const void *src,
		unsigned int src_type, size_t numel);

/* Error detail for the calling thread (lib/error.c).  Returns @err so a
 * caller can write "return npr_err(-EINVAL, "...", ...);". */
int npr_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Same, prefixed with "layer <id> (<name>, <type>-<version>): ". */
int npr_node_err(const struct npr_node *n, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A failure that set no message since @mark (npr_err_mark()) gets one
 * naming the layer and the errno (lib/error.c). */
int npr_node_err_default(const struct npr_node *n, int err,
			 unsigned long mark);

#endif /* NPR_GRAPH_H */
