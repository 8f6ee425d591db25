// SPDX-License-Identifier: MIT
/*
 * ONNX frontend building blocks: messages naming the ONNX node being
 * translated, its attributes, new nodes and constants for it, and the
 * small subgraphs several translators share.
 *
 * Translators live in the translator files lib/onnx/<area>.c, one per op
 * group (their tables are looked up in lib/onnx/build.c).  Where ONNX and
 * OpenVINO differ a translation adds small helper nodes (a bias Add after
 * a Convolution, a Multiply for Gemm's alpha, a ShapeOf -> StridedSlice ->
 * ReduceProd chain for a Flatten target).  Whatever depends only on shapes or constants is folded
 * when the model is compiled with static input shapes, so helpers cost
 * nothing at inference.  Helper nodes are named "<ONNX name>/<what>" and
 * carry the ONNX node's index as layer id; the node that stands for the
 * ONNX node gets its name.
 *
 * Translators only use what is known at load time (constants, declared
 * shapes, ranks propagated from them) to choose a form; the ops' own
 * shape inference checks everything again at compile time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate.h"

/* ---- messages --------------------------------------------------------- */

/**
 * npr_onnx_err() - set the error detail, naming the current ONNX node
 * @c: the context; outside node translation the message has no prefix.
 * @err: negative errno to return.
 * @fmt: printf format of the detail.
 *
 * Return: @err.
 */
int npr_onnx_err(struct onnx_ctx *c, int err, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c || !c->np)
		return npr_err(err, "%s", msg);
	return npr_err(err, "node %lld (%.200s, %.64s): %s",
		       (long long)c->layer, c->name, onnx_str(c->np->op_type), msg);
}

/* ---- attributes of the current node ----------------------------------- */

/**
 * npr_onnx_attr_find() - an attribute of the node being translated
 * @c: the context.
 * @name: attribute name.
 *
 * Return: the attribute, or NULL when the node does not have it.
 */
const Onnx__AttributeProto *npr_onnx_attr_find(struct onnx_ctx *c,
					       const char *name)
{
	size_t i;

	for (i = 0; i < c->np->n_attribute; i++) {
		const Onnx__AttributeProto *a = c->np->attribute[i];

		if (a && a->name && !strcmp(a->name, name))
			return a;
	}
	return NULL;
}

static bool attr_is(const Onnx__AttributeProto *a, int type, bool has)
{
	return a->type == (Onnx__AttributeProto__AttributeType)type ||
	       (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED &&
		has);
}

/**
 * npr_onnx_attr_int() - an INT attribute
 * @c: the context.
 * @name: attribute name.
 * @def: value when absent.
 * @out: the value.
 *
 * Return: 0, or -EINVAL when the attribute has another type.
 */
int npr_onnx_attr_int(struct onnx_ctx *c, const char *name, int64_t def,
		      int64_t *out)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, name);

	*out = def;
	if (!a)
		return 0;
	if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, a->has_i))
		return npr_onnx_err(c, -EINVAL, "attribute %s is not an int",
				    name);
	*out = a->i;
	return 0;
}

/**
 * npr_onnx_attr_float() - a FLOAT attribute (an INT is accepted too)
 * @c: the context.
 * @name: attribute name.
 * @def: value when absent.
 * @out: the value.
 *
 * Return: 0, or -EINVAL when the attribute has another type.
 */
int npr_onnx_attr_float(struct onnx_ctx *c, const char *name, double def,
			double *out)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, name);

	*out = def;
	if (!a)
		return 0;
	if (attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f))
		*out = a->f;
	else if (attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT,
			 a->has_i))
		*out = (double)a->i;
	else
		return npr_onnx_err(c, -EINVAL, "attribute %s is not a float",
				    name);
	return 0;
}

/**
 * npr_onnx_attr_ints() - an INTS attribute
 * @c: the context.
 * @name: attribute name.
 * @out: the values.
 * @max: room in @out.
 * @count: number of values, -1 when the attribute is absent.
 *
 * Return: 0, or -EINVAL (another type, more than @max values).
 */
int npr_onnx_attr_ints(struct onnx_ctx *c, const char *name, int64_t *out,
		       int max, int *count)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, name);

	*count = -1;
	if (!a)
		return 0;
	if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS,
		     a->n_ints > 0))
		return npr_onnx_err(c, -EINVAL,
				    "attribute %s is not a list of ints",
				    name);
	if (a->n_ints > (size_t)max)
		return npr_onnx_err(c, -EINVAL,
				    "attribute %s has %zu values, at most %d are supported",
				    name, a->n_ints, max);
	if (a->n_ints)
		memcpy(out, a->ints, a->n_ints * sizeof(*out));
	*count = (int)a->n_ints;
	return 0;
}

/**
 * npr_onnx_attr_str() - a STRING attribute, copied NUL-terminated
 * @c: the context.
 * @name: attribute name.
 * @def: value when absent.
 * @buf: where the string goes.
 * @len: size of @buf.
 *
 * Return: 0, or -EINVAL (another type, too long, an embedded NUL).
 */
int npr_onnx_attr_str(struct onnx_ctx *c, const char *name, const char *def,
		      char *buf, size_t len)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, name);

	if (!a) {
		snprintf(buf, len, "%s", def);
		return 0;
	}
	if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING,
		     a->has_s))
		return npr_onnx_err(c, -EINVAL, "attribute %s is not a string",
				    name);
	if (a->s.len >= len || (a->s.len && memchr(a->s.data, 0, a->s.len)))
		return npr_onnx_err(c, -EINVAL,
				    "attribute %s: bad string value",
				    name);
	if (a->s.len)
		memcpy(buf, a->s.data, a->s.len);
	buf[a->s.len] = 0;
	return 0;
}

/* ---- building nodes --------------------------------------------------- */

/**
 * npr_onnx_node() - append a node for the ONNX node being translated
 * @c: the context.
 * @type: OpenVINO op type.
 * @version: its opset version.
 * @suffix: NULL for the node that stands for the ONNX node (it gets its
 *          name), or a word naming a helper node ("<name>/<suffix>").
 * @nin: number of inputs.
 * @in: their value indexes.
 * @nout: number of outputs.
 * @out: set to the new output values (may be NULL when @nout is 0).
 *
 * Outputs start with the element type of the first input and an unknown
 * shape.
 *
 * Return: the node index, -EOPNOTSUPP when this build lacks the op, or
 * -ENOMEM.
 */
int npr_onnx_node(struct onnx_ctx *c, const char *type, unsigned int version,
		  const char *suffix, int nin, const int *in, int nout, int *out)
{
	const struct npr_op_def *op = npr_op_find(type, version);
	const char *base = c->np ? c->name : "";
	struct npr_graph *g = c->g;
	struct npr_node *n;
	char *name = NULL;
	int idx, i, err;

	if (!op)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "needs op %s-%u, which this build does not have",
				    type, version);
	if (nin < op->nin_min ||
	    (op->nin_max >= op->nin_min && nin > op->nin_max))
		return npr_onnx_err(c, -EINVAL,
				    "%s takes %d..%d inputs, not %d",
				    type, op->nin_min, op->nin_max, nin);
	if (suffix && *base && asprintf(&name, "%s/%s", base, suffix) < 0)
		return -ENOMEM;
	idx = npr_graph_add_node(g, name ? name : suffix ? suffix : base,
				 type, version, c->layer);
	free(name);
	if (idx < 0)
		return idx;
	n = &g->nodes[idx];
	n->op = op;
	err = npr_node_set_inputs(n, nin);
	if (!err)
		err = npr_node_set_outputs(g, idx, nout);
	if (err)
		return err;
	for (i = 0; i < nin; i++)
		n->in[i] = in[i];
	for (i = 0; i < nout; i++) {
		struct npr_value *v = &g->vals[n->out[i]];

		v->type = nin ? g->vals[in[0]].type : 0;
		if (out)
			out[i] = n->out[i];
	}
	return idx;
}

/**
 * npr_onnx_set_attr() - set a string attribute on a new node
 * @c: the context.
 * @node: node index from npr_onnx_node().
 * @key: attribute name as the op's parse() expects it.
 * @fmt: printf format of the value.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_onnx_set_attr(struct onnx_ctx *c, int node, const char *key,
		      const char *fmt, ...)
{
	char *val;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vasprintf(&val, fmt, ap);
	va_end(ap);
	if (err < 0)
		return -ENOMEM;
	err = npr_node_add_attr(&c->g->nodes[node], key, val);
	free(val);
	return err;
}

/**
 * npr_onnx_set_ints() - set a comma-separated integer list attribute
 * @c: the context.
 * @node: node index.
 * @key: attribute name.
 * @v: the values.
 * @n: their number (0 gives "").
 *
 * Return: 0 or -ENOMEM.
 */
int npr_onnx_set_ints(struct onnx_ctx *c, int node, const char *key,
		      const int64_t *v, int n)
{
	char buf[NPR_MAX_RANK * 2 * 24 + 1];
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && off < sizeof(buf) - 24; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%lld",
				i ? "," : "", (long long)v[i]);
	if (i < n)
		return npr_onnx_err(c, -EINVAL, "attribute %s: too many values",
				    key);
	return npr_node_add_attr(&c->g->nodes[node], key, buf);
}

/**
 * npr_onnx_set_shape_attr() - a "shape" attribute as Parameter and Const
 * have it
 * @c: the context.
 * @node: node index.
 * @s: the shape; "?" stands for a dynamic dimension.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_onnx_set_shape_attr(struct onnx_ctx *c, int node,
			    const struct npr_shape *s)
{
	char buf[NPR_MAX_RANK * 24 + 1];
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < s->rank; i++) {
		if (s->d[i] < 0)
			off += snprintf(buf + off, sizeof(buf) - off, "%s?",
					i ? "," : "");
		else
			off += snprintf(buf + off, sizeof(buf) - off,
					"%s%lld", i ? "," : "",
					(long long)s->d[i]);
	}
	return npr_onnx_set_attr(c, node, "shape", "%s", buf);
}

/*
 * A Const node named @name with @data; @owned (malloc'd, @data or NULL for
 * bytes in c->g->weights) is taken either way.
 */
static int const_node(struct onnx_ctx *c, const char *name, unsigned int type,
		      const struct npr_shape *shape, void *owned,
		      const void *data, size_t nbytes)
{
	const struct npr_op_def *op = npr_op_find("Const", 1);
	struct npr_value *v;
	int idx, err;

	idx = npr_graph_add_node(c->g, name, "Const", 1, c->layer);
	if (idx < 0) {
		free(owned);
		return idx;
	}
	c->g->nodes[idx].op = op;
	err = npr_node_set_outputs(c->g, idx, 1);
	if (err) {
		free(owned);
		return err;
	}
	v = &c->g->vals[c->g->nodes[idx].out[0]];
	v->type = type;
	v->shape = *shape;
	v->decl = *shape;
	v->owned = owned;
	v->data = data;
	v->nbytes = nbytes;
	err = npr_onnx_set_attr(c, idx, "element_type", "%s",
				npr_elem_name(type));
	if (!err)
		err = npr_onnx_set_shape_attr(c, idx, shape);
	return err ? err : c->g->nodes[idx].out[0];
}

static int const_name(struct onnx_ctx *c, const char *suffix, char **out)
{
	const char *base = c->np ? c->name : "";

	*out = NULL;
	if (suffix && *base)
		return asprintf(out, "%s/%s", base, suffix) < 0 ? -ENOMEM : 0;
	*out = strdup(suffix ? suffix : base);
	return *out ? 0 : -ENOMEM;
}

/**
 * npr_onnx_const_take() - a constant that takes over a heap buffer
 * @c: the context.
 * @type: element type.
 * @shape: a static shape.
 * @data: malloc'd data of @nbytes bytes; owned by the graph from now on,
 *        freed here on failure.
 * @nbytes: npr_tensor_bytes(@type, numel of @shape).
 * @suffix: name of the Const node as in npr_onnx_node().
 *
 * Return: the value index, or -ENOMEM.
 */
int npr_onnx_const_take(struct onnx_ctx *c, unsigned int type,
			const struct npr_shape *shape, void *data, size_t nbytes,
			const char *suffix)
{
	char *name;
	int err;

	err = const_name(c, suffix, &name);
	if (err) {
		free(data);
		return err;
	}
	err = const_node(c, name, type, shape, data, data, nbytes);
	free(name);
	return err;
}

/**
 * npr_onnx_const_ref() - a constant whose bytes the graph does not own
 * @c: the context.
 * @type: element type.
 * @shape: a static shape.
 * @data: npr_tensor_bytes(@type, numel) bytes (at least one) inside the
 *        weights store c->g->weights will hold (a mapped model file), aligned to
 *        the element size; not copied.
 * @nbytes: their size.
 * @suffix: name of the Const node as in npr_onnx_node().
 *
 * Return: the value index, or -ENOMEM.
 */
int npr_onnx_const_ref(struct onnx_ctx *c, unsigned int type,
		       const struct npr_shape *shape, const void *data,
		       size_t nbytes, const char *suffix)
{
	char *name;
	int err;

	err = const_name(c, suffix, &name);
	if (err)
		return err;
	err = const_node(c, name, type, shape, NULL, data, nbytes);
	free(name);
	return err;
}

/**
 * npr_onnx_const() - a constant, its data copied
 * @c: the context.
 * @type: element type.
 * @shape: a static shape.
 * @data: npr_tensor_bytes(@type, numel) bytes.
 * @suffix: name of the Const node as in npr_onnx_node().
 *
 * Return: the value index, or -ENOMEM.
 */
int npr_onnx_const(struct onnx_ctx *c, unsigned int type,
		   const struct npr_shape *shape, const void *data,
		   const char *suffix)
{
	size_t bytes = npr_tensor_bytes(type, npr_shape_numel(shape));
	void *p = malloc(bytes ? bytes : 1);

	if (!p)
		return -ENOMEM;
	if (bytes)
		memcpy(p, data, bytes);
	return npr_onnx_const_take(c, type, shape, p, bytes, suffix);
}

/**
 * npr_onnx_const_i64() - a 1-D i64 constant
 * @c: the context.
 * @v: the values.
 * @n: their number, 0..NPR_MAX_RANK * 2.
 * @suffix: node name suffix.
 *
 * Return: the value index, or -ENOMEM.
 */
int npr_onnx_const_i64(struct onnx_ctx *c, const int64_t *v, int n,
		       const char *suffix)
{
	struct npr_shape s = { .rank = 1, .d = { n } };

	return npr_onnx_const(c, NPR_ELEM_I64, &s, v, suffix);
}

/**
 * npr_onnx_scalar() - a scalar constant of the element type of another value
 * @c: the context.
 * @like: the value whose type to take, or -1; f32 when it is not known.
 * @val: the number.
 * @suffix: node name suffix.
 *
 * Return: the value index, or -ENOMEM.
 */
int npr_onnx_scalar(struct onnx_ctx *c, int like, double val,
		    const char *suffix)
{
	struct npr_shape s = { .rank = 0 };
	unsigned int t = like >= 0 ? c->g->vals[like].type : 0;
	uint64_t buf;

	if (!t || !npr_elem_size(t) || t == NPR_ELEM_BOOLEAN)
		t = NPR_ELEM_F32;
	npr_convert(&buf, t, &val, NPR_ELEM_F64, 1);
	return npr_onnx_const(c, t, &s, &buf, suffix);
}

/**
 * npr_onnx_unary() - one node, one input, one output
 * @c: the context.
 * @type: OpenVINO op type (version 1).
 * @x: the input value.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_unary(struct onnx_ctx *c, const char *type, int x,
		   const char *suffix)
{
	int out, err;

	err = npr_onnx_node(c, type, 1, suffix, 1, &x, 1, &out);
	if (err < 0)
		return err;
	c->g->vals[out].shape = c->g->vals[x].shape;
	return out;
}

/**
 * npr_onnx_binary() - an elementwise node with numpy broadcasting
 * @c: the context.
 * @type: OpenVINO op type (version 1).
 * @a: first input.
 * @b: second input.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_binary(struct onnx_ctx *c, const char *type, int a, int b,
		    const char *suffix)
{
	int in[2] = { a, b }, out, err;
	struct npr_shape s;

	err = npr_onnx_node(c, type, 1, suffix, 2, in, 1, &out);
	if (err < 0)
		return err;
	if (!npr_shape_broadcast(&c->g->vals[a].shape, &c->g->vals[b].shape,
				 &s))
		c->g->vals[out].shape = s;
	return out;
}

/* ---- shared subgraphs ------------------------------------------------- */

/**
 * npr_onnx_norm_axis() - an axis attribute made non-negative
 * @c: the context.
 * @axis: the axis, negative counting from the end.
 * @rank: the rank it applies to, -1 if not known at load time.
 * @out: the axis in 0..rank-1.
 *
 * Return: 0, -EOPNOTSUPP (negative axis of unknown rank), -EINVAL.
 */
int npr_onnx_norm_axis(struct onnx_ctx *c, int64_t axis, int rank, int64_t *out)
{
	if (axis < 0) {
		if (rank < 0)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "negative axis %lld needs the input rank, which is not known at load time",
					    (long long)axis);
		axis += rank;
	}
	if (axis < 0 || axis >= NPR_MAX_RANK || (rank >= 0 && axis >= rank))
		return npr_onnx_err(c, -EINVAL, "axis %lld is out of range",
				    (long long)axis);
	*out = axis;
	return 0;
}

/**
 * npr_onnx_known_rank() - the rank of a value, which a translation needs
 * @c: the context.
 * @v: the value.
 * @why: what needs it, for the message.
 *
 * Return: the rank, or -EOPNOTSUPP when it is not known at load time.
 */
int npr_onnx_known_rank(struct onnx_ctx *c, int v, const char *why)
{
	int r = onnx_rank(c, v);

	if (r < 0)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "%s needs the input rank, which is not known at load time (declare the input shapes)",
				    why);
	return r;
}

/**
 * npr_onnx_with_list() - a node of data plus a constant i64 list (axes, order)
 * @c: the context.
 * @type: OpenVINO op type (version 1).
 * @x: the data input.
 * @v: the list.
 * @n: its length.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_with_list(struct onnx_ctx *c, const char *type, int x,
		       const int64_t *v, int n, const char *suffix)
{
	int in[2] = { x, -1 }, out, err;

	in[1] = npr_onnx_const_i64(c, v, n, suffix ? suffix : "axes");
	if (in[1] < 0)
		return in[1];
	err = npr_onnx_node(c, type, 1, suffix, 2, in, 1, &out);
	return err < 0 ? err : out;
}

/**
 * npr_onnx_shape_of() - the shape of a value as a 1-D i64 tensor (ShapeOf-3)
 * @c: the context.
 * @x: the value.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_shape_of(struct onnx_ctx *c, int x, const char *suffix)
{
	int out, node;

	node = npr_onnx_node(c, "ShapeOf", 3, suffix, 1, &x, 1, &out);
	if (node < 0)
		return node;
	c->g->vals[out].type = NPR_ELEM_I64;
	c->g->vals[out].shape.rank = 1;
	c->g->vals[out].shape.d[0] = onnx_rank(c, x);
	node = npr_onnx_set_attr(c, node, "output_type", "i64");
	return node < 0 ? node : out;
}

/**
 * npr_onnx_strided() - a StridedSlice with constant bounds over axes 0..n-1
 * @c: the context.
 * @x: the data.
 * @b: begin per axis.
 * @e: end per axis.
 * @s: stride per axis, NULL for all ones.
 * @bm: begin mask per axis (1: ignore @b, from the start).
 * @em: end mask per axis (1: ignore @e, to the end).
 * @n: number of axes, at most NPR_MAX_RANK.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_strided(struct onnx_ctx *c, int x, const int64_t *b,
		     const int64_t *e, const int64_t *s, const int64_t *bm,
		     const int64_t *em, int n, const char *suffix)
{
	int64_t ones[NPR_MAX_RANK];
	int in[4] = { x }, out, node, err, i;

	for (i = 0; i < n; i++)
		ones[i] = 1;
	in[1] = npr_onnx_const_i64(c, b, n, suffix ? suffix : "begin");
	in[2] = npr_onnx_const_i64(c, e, n, suffix ? suffix : "end");
	in[3] = npr_onnx_const_i64(c, s ? s : ones, n,
				   suffix ? suffix : "strides");
	for (i = 1; i < 4; i++)
		if (in[i] < 0)
			return in[i];
	node = npr_onnx_node(c, "StridedSlice", 1, suffix, 4, in, 1, &out);
	if (node < 0)
		return node;
	err = npr_onnx_set_ints(c, node, "begin_mask", bm, n);
	if (!err)
		err = npr_onnx_set_ints(c, node, "end_mask", em, n);
	if (err)
		return err;
	c->g->vals[out].shape.rank = onnx_rank(c, x);
	for (i = 0; i < onnx_rank(c, x); i++)
		c->g->vals[out].shape.d[i] = i < n ? -1 :
					     onnx_vshape(c, x)->d[i];
	return out;
}

/**
 * npr_onnx_reshape_to() - a Reshape to a constant target
 * @c: the context.
 * @x: the data.
 * @t: the target shape, -1 for the one inferred dimension.
 * @n: its length.
 * @special_zero: a 0 in @t copies the input dimension.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_reshape_to(struct onnx_ctx *c, int x, const int64_t *t, int n,
			bool special_zero, const char *suffix)
{
	int node, out, in[2] = { x, -1 }, i;
	struct npr_shape xs0 = *onnx_vshape(c, x), *xs = &xs0;
	struct npr_shape s = { .rank = n };

	in[1] = npr_onnx_const_i64(c, t, n, suffix ? suffix : "shape");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "Reshape", 1, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "special_zero", "%s",
				 onnx_tf(special_zero));
	if (node < 0)
		return node;
	for (i = 0; i < n; i++)
		s.d[i] = t[i] > 0 ? t[i] :
			 (!t[i] && special_zero && i < xs->rank) ? xs->d[i] :
			 t[i] ? -1 : 0;
	c->g->vals[out].shape = s;
	return out;
}

/**
 * npr_onnx_reduce() - a Reduce* node over constant axes
 * @c: the context.
 * @type: "ReduceMean", "ReduceSum", ...
 * @x: the data.
 * @axes: the axes.
 * @n: their number.
 * @keep: keep the reduced axes as size 1.
 * @suffix: node name suffix, NULL for the main node.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_reduce(struct onnx_ctx *c, const char *type, int x,
		    const int64_t *axes, int n, bool keep, const char *suffix)
{
	int in[2] = { x, -1 }, node, out;

	in[1] = npr_onnx_const_i64(c, axes, n, suffix ? suffix : "axes");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, type, 1, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "keep_dims", "%s", onnx_tf(keep));
	return node < 0 ? node : out;
}

/**
 * npr_onnx_flatten2d() - x as 2-D [d0 * .. * d(axis-1), d(axis) * ..]
 * @c: the context.
 * @x: the data.
 * @axis: where to split, negative counting from the end.
 * @suffix: node name suffix of the Reshape, NULL for the main node.
 *
 * The Flatten of ONNX and the coercion of Softmax before opset 13.  Axis 0
 * and 1 give a constant target; for the others ShapeOf -> StridedSlice ->
 * ReduceProd computes it from the real shape (folded when the model is
 * compiled): dims declared in the file may be overridden at compile time.
 *
 * Return: the output value index, or -errno.
 */
int npr_onnx_flatten2d(struct onnx_ctx *c, int x, int64_t axis,
		       const char *suffix)
{
	int64_t t[2] = { 1, -1 }, z = 0, end = axis, neg = -1;
	int r = onnx_rank(c, x), s, h, p, in[2], out, node;

	if (axis < 0 && r >= 0)
		axis += r;
	if (axis == 0 || axis == 1) {
		t[0] = axis ? 0 : 1;
		return npr_onnx_reshape_to(c, x, t, 2, axis == 1, suffix);
	}
	s = npr_onnx_shape_of(c, x, "shape");
	if (s < 0)
		return s;
	h = npr_onnx_strided(c, s, &z, &end, NULL, &z, &z, 1, "lead");
	if (h < 0)
		return h;
	p = npr_onnx_reduce(c, "ReduceProd", h, &z, 1, true, "prod");
	if (p < 0)
		return p;
	in[0] = p;
	in[1] = npr_onnx_const_i64(c, &neg, 1, "rest");
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "Concat", 1, "target", 2, in, 1, &in[1]);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "axis", "0");
	if (node < 0)
		return node;
	in[0] = x;
	node = npr_onnx_node(c, "Reshape", 1, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "special_zero", "false");
	c->g->vals[out].shape.rank = 2;
	c->g->vals[out].shape.d[0] = c->g->vals[out].shape.d[1] = -1;
	return node < 0 ? node : out;
}

/**
 * npr_onnx_per_channel() - a per-channel parameter [C] as [C, 1, ..]
 * @c: the context.
 * @p: the parameter.
 * @r: rank of the data it applies to (NCHW...: r - 2 trailing ones).
 * @suffix: node name suffix.
 *
 * Return: the value to broadcast against the data, or -errno.
 */
int npr_onnx_per_channel(struct onnx_ctx *c, int p, int r, const char *suffix)
{
	int64_t ax[NPR_MAX_RANK];

	if (r <= 2)
		return p;
	onnx_iota(ax, r - 2, 1);
	return npr_onnx_with_list(c, "Unsqueeze", p, ax, r - 2, suffix);
}
