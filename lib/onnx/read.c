// SPDX-License-Identifier: MIT
/*
 * ONNX frontend: a serialized ModelProto becomes a struct npr_graph with
 * OpenVINO opset semantics.
 *
 * The bytes are untrusted.  Before protobuf-c unpacks them, a walk over the
 * wire format driven by the generated descriptors bounds how deeply
 * messages nest (protobuf-c recurses without a limit).  Then every name,
 * count, dimension and data size is checked; a failure leaves a message
 * that names the node (index, name, op) or the tensor at fault.
 *
 * The weights are not copied at load.  protobuf-c copies every bytes
 * field it unpacks, so it unpacks the model without its graph's
 * initializers (pb_split() cuts them out of the wire format), and each
 * initializer on its own without its raw_data; a model read from its
 * file (npr_onnx_load_file(), the file mapped) then has Const nodes that
 * refer to their raw_data in the mapping, aligned or not (struct
 * npr_value says who may read what), and a model given in memory gets one
 * copy of each.  The typed fields and external data files are copied.
 * Graph inputs that are not initializers become Parameters;
 * each ONNX node goes through its translator (lib/onnx/translate.c and the
 * tables of lib/onnx/eltwise.c, lib/onnx/nn.c, lib/onnx/shape.c); each
 * graph output gets a Result.  Node names are the ONNX names
 * ("<op>_<index>" when empty) and a node's layer id is its index in the
 * ONNX graph; the helper nodes a translation adds carry "<name>/<what>"
 * and the same id.  Opsets 1..18 of the default domain are read; ops whose
 * old versions differ (legacy broadcasting, Cast by type name) are refused
 * at those versions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx.h"
#include "translate.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_data is little-endian: byte swapping is not implemented"
#endif

/* Smallest unaligned raw_data left in the mapped file (smaller: copied). */
#define ONNX_REF_MIN		(16u << 10)
/* Largest model accepted: protobuf messages cannot exceed 2 GiB. */
#define ONNX_MAX_BYTES		(2ULL << 30)
/* Deepest nesting of messages (a model is ~6; If/Loop bodies add ~4). */
#define ONNX_MAX_DEPTH		64
/* Longest tensor, node or op name accepted. */
#define ONNX_MAX_NAME		4096
/* Most nodes; most inputs of one node, and of the graph; most outputs. */
#define ONNX_MAX_NODES		1000000
#define ONNX_MAX_PORTS		65536
/* Largest dimension accepted in a tensor or a declared shape. */
#define ONNX_MAX_DIM		(1LL << 40)

/* A value index, or not defined yet, or an output we cannot produce. */
#define NAME_UNDEF	(-1)
#define NAME_UNSUPP	(-2)

struct onnx_name {
	const char *key;
	int val;				/* value index or NAME_* */
	const Onnx__ValueInfoProto *info;	/* from graph.value_info */
};

static const char *str(const char *s)
{
	return s ? s : "";
}

/* ---- messages --------------------------------------------------------- */

/**
 * onnx_err() - set the error detail, naming the current ONNX node
 * @c: the context; outside node translation the message has no prefix.
 * @err: negative errno to return.
 * @fmt: printf format of the detail.
 *
 * Return: @err.
 */
int onnx_err(struct onnx_ctx *c, int err, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c || !c->np)
		return npr_err(err, "%s", msg);
	return npr_err(err, "node %lld (%.200s, %.64s): %s",
		       (long long)c->layer, c->name, str(c->np->op_type), msg);
}

/* ---- wire format pre-check -------------------------------------------- */

/*
 * The payload of a length-delimited field found in the model's bytes.
 */
struct pb_span {
	const uint8_t *p;
	size_t len;
};

static int pb_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	uint64_t r = 0;
	int shift;

	for (shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (*off >= len)
			return -EINVAL;
		b = p[(*off)++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * The field at *@off: its key, and the payload of a length-delimited one
 * (wire type 2) at *@body, *@blen bytes (0 for the other types).  *@off
 * moves past the whole field.  Groups and unknown wire types are refused.
 */
static int pb_next(const uint8_t *p, size_t len, size_t *off, uint64_t *key,
		   size_t *body, uint64_t *blen)
{
	uint64_t v;

	*blen = 0;
	if (pb_varint(p, len, off, key))
		return -EINVAL;
	switch (*key & 7) {
	case 0:
		return pb_varint(p, len, off, &v);
	case 1:
	case 5:
		v = (*key & 7) == 1 ? 8 : 4;
		if (len - *off < v)
			return -EINVAL;
		*off += v;
		return 0;
	case 2:
		if (pb_varint(p, len, off, &v) || v > len - *off)
			return -EINVAL;
		*body = *off;
		*blen = v;
		*off += v;
		return 0;
	default:
		return -EINVAL;	/* groups, or no wire type at all */
	}
}

/*
 * Walk one message: every field well formed, every sub-message (as the
 * descriptor says) walked in turn, at most ONNX_MAX_DEPTH deep.  Unknown
 * fields are skipped as protobuf-c skips them.
 */
static int pb_check(const uint8_t *p, size_t len,
		    const ProtobufCMessageDescriptor *d, int depth)
{
	size_t off = 0;

	if (depth > ONNX_MAX_DEPTH)
		return -ELOOP;
	while (off < len) {
		const ProtobufCFieldDescriptor *f;
		uint64_t key, blen;
		size_t body = 0;
		int err;

		if (pb_next(p, len, &off, &key, &body, &blen) || !(key >> 3) ||
		    (key >> 3) > 0x1fffffff)
			return -EINVAL;
		if ((key & 7) != 2)
			continue;
		f = protobuf_c_message_descriptor_get_field(d,
							(unsigned)(key >> 3));
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			err = pb_check(p + body, blen, f->descriptor, depth + 1);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Split the message in @p/@len: the payload of every field numbered @num
 * with wire type 2 goes to *@spans (in order; *@spans NULL when there is
 * none), every other field is copied into *@rest (malloc'd) for protobuf-c
 * to unpack.  The bytes have passed pb_check().
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
static int pb_split(const uint8_t *p, size_t len, uint32_t num,
		    uint8_t **rest, size_t *rest_len,
		    struct pb_span **spans, size_t *nspans)
{
	size_t off, start, nrest = 0, n = 0, k = 0, w = 0;
	int pass;

	*rest = NULL;
	*spans = NULL;
	for (pass = 0; pass < 2; pass++) {
		for (off = 0; off < len;) {
			uint64_t key, blen;
			size_t body = 0;

			start = off;
			if (pb_next(p, len, &off, &key, &body, &blen))
				return -EINVAL;
			if ((key & 7) == 2 && (key >> 3) == num) {
				if (pass)
					(*spans)[k++] = (struct pb_span){
						p + body, (size_t)blen };
				else
					n++;
				continue;
			}
			if (pass) {
				memcpy(*rest + w, p + start, off - start);
				w += off - start;
			} else {
				nrest += off - start;
			}
		}
		if (pass)
			break;
		*rest = malloc(nrest ? nrest : 1);
		*spans = n ? malloc(n * sizeof(**spans)) : NULL;
		if (!*rest || (n && !*spans)) {
			free(*rest);
			free(*spans);
			*rest = NULL;
			*spans = NULL;
			return -ENOMEM;
		}
	}
	*rest_len = nrest;
	*nspans = n;
	return 0;
}

/* The field number of @name in message @d. */
static uint32_t pb_field(const ProtobufCMessageDescriptor *d,
			 const char *name)
{
	return protobuf_c_message_descriptor_get_field_by_name(d, name)->id;
}

/*
 * The model's graph unpacked without its initializers, and those one at
 * a time without their raw_data: protobuf-c copies every bytes field it
 * unpacks, so the weights would be in memory twice.
 * @n: number of initializers.
 * @msg: per initializer its TensorProto's bytes in the model.
 * @t: per initializer the message unpacked without raw_data (kept to the
 *     end of the load: the name table points at its name).
 * @raw: per initializer its raw_data in the model (p NULL: none).
 */
struct onnx_inits {
	size_t n;
	struct pb_span *msg;
	Onnx__TensorProto **t;
	struct pb_span *raw;
};

/* Unpack initializer @i of @in into in->t[i] and in->raw[i]. */
static int init_unpack(struct onnx_inits *in, size_t i)
{
	uint32_t f = pb_field(&onnx__tensor_proto__descriptor, "raw_data");
	struct pb_span *raw = NULL;
	size_t rlen, nraw;
	uint8_t *rest;
	int err;

	err = pb_split(in->msg[i].p, in->msg[i].len, f, &rest, &rlen, &raw,
		       &nraw);
	if (err)
		return err;
	in->t[i] = onnx__tensor_proto__unpack(NULL, rlen, rest);
	free(rest);
	/* a field given twice: the last one counts, as protobuf-c does */
	in->raw[i] = nraw ? raw[nraw - 1] : (struct pb_span){ NULL, 0 };
	free(raw);
	return in->t[i] ? 0 : -EINVAL;
}

static void inits_free(struct onnx_inits *in)
{
	size_t i;

	for (i = 0; in->t && i < in->n; i++)
		if (in->t[i])
			onnx__tensor_proto__free_unpacked(in->t[i], NULL);
	free(in->t);
	free(in->raw);
	free(in->msg);
}

/* ---- element types and shapes ----------------------------------------- */

/* TensorProto.DataType -> NPR_ELEM_*, 0 when not supported. */
static unsigned int elem_type(int32_t dt)
{
	switch (dt) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return NPR_ELEM_F32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return NPR_ELEM_U8;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return NPR_ELEM_I8;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return NPR_ELEM_U16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return NPR_ELEM_I16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return NPR_ELEM_I32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return NPR_ELEM_I64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return NPR_ELEM_BOOLEAN;
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return NPR_ELEM_F16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return NPR_ELEM_F64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return NPR_ELEM_U32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return NPR_ELEM_U64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return NPR_ELEM_BF16;
	}
	return 0;
}

/**
 * onnx_elem_type() - an ONNX TensorProto.DataType as an element type
 * @dt: the ONNX data type number.
 *
 * Return: NPR_ELEM_*, or 0 for strings, complex numbers and unknown types.
 */
unsigned int onnx_elem_type(int32_t dt)
{
	return elem_type(dt);
}

/*
 * A declared type (graph input, output, value_info): element type (0 if
 * not given) and shape (rank -1 if not given, -1 for a symbolic dim).
 * -EOPNOTSUPP for sequences, maps and unknown element types.
 */
static int info_type(const Onnx__ValueInfoProto *vi, unsigned int *type,
		     struct npr_shape *sh)
{
	const Onnx__TypeProto__Tensor *tt;
	size_t i;

	*type = 0;
	sh->rank = -1;
	if (!vi->type ||
	    vi->type->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
		return 0;
	if (vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return -EOPNOTSUPP;
	tt = vi->type->tensor_type;
	if (!tt)
		return 0;
	if (tt->has_elem_type && tt->elem_type) {
		*type = elem_type(tt->elem_type);
		if (!*type)
			return -EOPNOTSUPP;
	}
	if (!tt->shape)
		return 0;
	if (tt->shape->n_dim > NPR_MAX_RANK)
		return -EOPNOTSUPP;
	for (i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];

		sh->d[i] = -1;
		if (d && d->value_case ==
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0 || d->dim_value > ONNX_MAX_DIM)
				return -EINVAL;
			sh->d[i] = d->dim_value;
		}
	}
	sh->rank = (int)tt->shape->n_dim;
	return 0;
}

/* ---- the name table --------------------------------------------------- */

static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return (size_t)h;
}

static struct onnx_name *name_slot(struct onnx_name *tab, size_t cap,
				   const char *key)
{
	size_t i = name_hash(key) & (cap - 1);

	while (tab[i].key && strcmp(tab[i].key, key))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct onnx_name *name_find(struct onnx_ctx *c, const char *key)
{
	struct onnx_name *e;

	if (!c->names_cap)
		return NULL;
	e = name_slot(c->names, c->names_cap, key);
	return e->key ? e : NULL;
}

/* The entry of @key, created (val -1) if new.  NULL without memory. */
static struct onnx_name *name_get(struct onnx_ctx *c, const char *key)
{
	struct onnx_name *e;
	size_t i;

	if ((c->names_cnt + 1) * 2 > c->names_cap) {
		size_t cap = c->names_cap ? c->names_cap * 2 : 256;
		struct onnx_name *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (i = 0; i < c->names_cap; i++)
			if (c->names[i].key)
				*name_slot(tab, cap, c->names[i].key) =
					c->names[i];
		free(c->names);
		c->names = tab;
		c->names_cap = cap;
	}
	e = name_slot(c->names, c->names_cap, key);
	if (!e->key) {
		e->key = key;
		e->val = NAME_UNDEF;
		c->names_cnt++;
	}
	return e;
}

static int check_name(struct onnx_ctx *c, const char *what, const char *s)
{
	if (!s || !*s)
		return onnx_err(c, -EINVAL, "%s has no name", what);
	if (strnlen(s, ONNX_MAX_NAME + 1) > ONNX_MAX_NAME)
		return onnx_err(c, -ENAMETOOLONG,
				"%s has a name longer than %d bytes", what,
				ONNX_MAX_NAME);
	return 0;
}

/*
 * Bind tensor name @key to value @v.  A fresh value takes the name; its
 * load-time type and shape come from value_info when nothing better is
 * known.
 */
static int define(struct onnx_ctx *c, const char *key, int v)
{
	struct onnx_name *e = name_get(c, key);
	struct npr_value *val = &c->g->vals[v];
	struct npr_shape sh;
	unsigned int t;

	if (!e)
		return -ENOMEM;
	if (e->val != NAME_UNDEF)
		return onnx_err(c, -EINVAL,
				"tensor \"%.200s\" is defined twice", key);
	e->val = v;
	if (!val->name) {
		val->name = strdup(key);
		if (!val->name)
			return -ENOMEM;
	}
	if (e->info && !info_type(e->info, &t, &sh)) {
		if (!val->type)
			val->type = t;
		if (val->shape.rank < 0)
			val->shape = sh;
	}
	return 0;
}

/*
 * Outer value @outer (of c->parent's graph) made visible in sub-graph @c
 * under @key: a constant is copied into the body, anything else becomes a
 * new body Parameter that the control-flow node feeds (c->caps).
 */
static int capture(struct onnx_ctx *c, const char *key, int outer)
{
	const struct npr_value *ov = &c->parent->g->vals[outer];
	struct npr_graph *g = c->g;
	struct npr_value *v;
	int idx, err, *p;

	if (ov->data) {
		size_t bytes = ov->nbytes;
		void *data = malloc(bytes ? bytes : 1);

		if (!data)
			return -ENOMEM;
		if (bytes)
			memcpy(data, ov->data, bytes);
		return onnx_const_take(c, ov->type, &ov->shape, data, bytes,
				       key);
	}
	idx = npr_graph_add_node(g, key, "Parameter", 1, c->layer);
	if (idx < 0)
		return idx;
	g->nodes[idx].op = npr_op_find("Parameter", 1);
	err = npr_node_set_outputs(g, idx, 1);
	if (!err && ov->type)
		err = onnx_set_attr(c, idx, "element_type", "%s",
				    npr_elem_name(ov->type));
	if (err)
		return err;
	v = &g->vals[g->nodes[idx].out[0]];
	v->type = ov->type;
	v->shape = ov->shape;
	v->decl.rank = -1;
	p = realloc(g->inputs, sizeof(int) * (g->ninputs + 1));
	if (!p)
		return -ENOMEM;
	g->inputs = p;
	g->inputs[g->ninputs++] = idx;
	p = realloc(c->caps, sizeof(int) * (c->ncaps + 1));
	if (!p)
		return -ENOMEM;
	c->caps = p;
	c->caps[c->ncaps++] = outer;
	return g->nodes[idx].out[0];
}

/*
 * The entry of tensor @key as a node input or graph output sees it: in a
 * sub-graph a name it does not define is looked up in the graphs around
 * it (ONNX outer-scope references) and captured.  *out is NULL when the
 * name is defined nowhere.
 */
static int resolve(struct onnx_ctx *c, const char *key,
		   struct onnx_name **out)
{
	struct onnx_name *e = name_find(c, key), *pe = NULL;
	int v, err;

	*out = e;
	if ((e && e->val != NAME_UNDEF) || !c->parent)
		return 0;
	err = resolve(c->parent, key, &pe);
	if (err || !pe || pe->val < 0) {
		*out = pe;
		return err;
	}
	v = capture(c, key, pe->val);
	if (v < 0)
		return v;
	err = define(c, key, v);
	if (err)
		return err;
	*out = name_find(c, key);
	return 0;
}

/* ---- tensors ---------------------------------------------------------- */

static int parse_u64(const char *s, uint64_t *out)
{
	char *e;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &e, 10);
	return errno || *e ? -EINVAL : 0;
}

/* A relative path that stays inside the model's directory. */
static bool safe_location(const char *loc)
{
	const char *p = loc;

	if (!*loc || *loc == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && !strncmp(p, "..", 2))
			return false;
		p += n;
		if (*p)
			p++;
	}
	return true;
}

/* Data of an external tensor: exactly @need bytes of the named file. */
static int external_data(struct onnx_ctx *c, const Onnx__TensorProto *t,
			 const char *what, size_t need, void *dst)
{
	const char *loc = NULL;
	uint64_t off = 0, len = need;
	char *path = NULL;
	struct stat st;
	size_t i, done;
	int fd, err = 0;

	for (i = 0; i < t->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = t->external_data[i];
		const char *k = e ? str(e->key) : "";

		if (!strcmp(k, "location"))
			loc = str(e->value);
		else if ((!strcmp(k, "offset") && parse_u64(e->value, &off)) ||
			 (!strcmp(k, "length") && parse_u64(e->value, &len)))
			return onnx_err(c, -EINVAL,
					"%s: bad external %s \"%.40s\"",
					what, k, str(e->value));
	}
	if (!c->base_dir)
		return onnx_err(c, -EINVAL,
				"%s: external data needs the model's directory (load the model from its file)",
				what);
	if (!loc || !safe_location(loc) ||
	    strnlen(loc, ONNX_MAX_NAME + 1) > ONNX_MAX_NAME)
		return onnx_err(c, -EINVAL,
				"%s: external data location \"%.200s\" is not a relative path inside the model's directory",
				what, loc ? loc : "");
	if (len != need)
		return onnx_err(c, -EINVAL,
				"%s: external length %llu, but the dims need %zu bytes",
				what, (unsigned long long)len, need);
	if (asprintf(&path, "%s/%s", c->base_dir, loc) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		err = onnx_err(c, err, "%s: cannot open external data %s: %s",
			       what, path, strerror(-err));
		free(path);
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		err = onnx_err(c, -EINVAL, "%s: %s is not a regular file",
			       what, path);
	else if (off > (uint64_t)st.st_size ||
		 need > (uint64_t)st.st_size - off)
		err = onnx_err(c, -EINVAL,
				"%s: bytes [%llu, %llu) are past the end of %s (%lld bytes)",
				what, (unsigned long long)off,
				(unsigned long long)(off + need), path,
				(long long)st.st_size);
	for (done = 0; !err && done < need;) {
		ssize_t k = pread(fd, (char *)dst + done, need - done,
				  (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			err = onnx_err(c, k < 0 ? -errno : -EIO,
				       "%s: cannot read %s", what, path);
		else
			done += (size_t)k;
	}
	close(fd);
	free(path);
	return err;
}

/* Typed-field data: @n elements of the field into @dst of type @type. */
static int typed_data(const Onnx__TensorProto *t, unsigned int type,
		      int64_t numel, void *dst, size_t *have)
{
	size_t i, n = (size_t)numel;

	switch (type) {
	case NPR_ELEM_F32:
		*have = t->n_float_data;
		if (*have == n && n)
			memcpy(dst, t->float_data, n * 4);
		return 0;
	case NPR_ELEM_F64:
		*have = t->n_double_data;
		if (*have == n && n)
			memcpy(dst, t->double_data, n * 8);
		return 0;
	case NPR_ELEM_I64:
		*have = t->n_int64_data;
		if (*have == n && n)
			memcpy(dst, t->int64_data, n * 8);
		return 0;
	case NPR_ELEM_U32:
	case NPR_ELEM_U64:
		*have = t->n_uint64_data;
		if (*have != n)
			return 0;
		if (type == NPR_ELEM_U64 && n)
			memcpy(dst, t->uint64_data, n * 8);
		else
			for (i = 0; i < n; i++)
				((uint32_t *)dst)[i] =
					(uint32_t)t->uint64_data[i];
		return 0;
	}
	/* everything else travels in int32_data, one element per entry */
	*have = t->n_int32_data;
	if (*have != n)
		return 0;
	for (i = 0; i < n; i++) {
		int32_t v = t->int32_data[i];

		switch (npr_elem_size(type)) {
		case 1: ((uint8_t *)dst)[i] = (uint8_t)v; break;
		case 2: ((uint16_t *)dst)[i] = (uint16_t)v; break;
		case 4: ((int32_t *)dst)[i] = v; break;
		}
		if (type == NPR_ELEM_BOOLEAN)
			((uint8_t *)dst)[i] = v != 0;
	}
	return 0;
}

/* Element types of weights: what may stay unaligned in a mapped file. */
static bool is_weights(unsigned int type)
{
	return type == NPR_ELEM_F32 || type == NPR_ELEM_F16 ||
	       type == NPR_ELEM_BF16 || type == NPR_ELEM_F64;
}

/*
 * Type, dims and data of a TensorProto, every size checked.  @raw, when
 * not NULL, is its raw_data, left in the model's bytes (the message was
 * unpacked without it).  *data is either a new heap buffer (*owned ==
 * *data) or, for @raw bytes inside the mapped model (c->src) that are
 * aligned to the element size or are floating-point weights of at least
 * ONNX_REF_MIN bytes, those bytes (*owned NULL, c->src_refs counts them).
 * @what names the tensor in messages.
 */
static int tensor_read(struct onnx_ctx *c, const Onnx__TensorProto *t,
		       const struct pb_span *raw, const char *what,
		       unsigned int *type, struct npr_shape *sh,
		       void **owned, const void **data, size_t *nbytes)
{
	int64_t numel = 1;
	size_t bytes, have = 0;
	void *p = NULL;
	size_t i;
	int err;

	*type = t->has_data_type ? elem_type(t->data_type) : 0;
	if (!*type)
		return onnx_err(c, -EOPNOTSUPP,
				"%s: data type %d is not supported", what,
				t->has_data_type ? t->data_type : 0);
	if (t->n_dims > NPR_MAX_RANK)
		return onnx_err(c, -EOPNOTSUPP,
				"%s has %zu dims, at most %d are supported",
				what, t->n_dims, NPR_MAX_RANK);
	if (t->segment)
		return onnx_err(c, -EOPNOTSUPP,
				"%s: segmented tensors are not supported",
				what);
	sh->rank = (int)t->n_dims;
	for (i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || t->dims[i] > ONNX_MAX_DIM)
			return onnx_err(c, -EINVAL, "%s: dim %zu is %lld",
					what, i, (long long)t->dims[i]);
		sh->d[i] = t->dims[i];
		if (t->dims[i] && numel > ONNX_MAX_DIM / t->dims[i])
			return onnx_err(c, -EOVERFLOW, "%s: dims too large",
					what);
		numel *= t->dims[i];
	}
	bytes = npr_tensor_bytes(*type, numel);
	if (t->has_data_location &&
	    t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		p = malloc(bytes ? bytes : 1);
		err = p ? external_data(c, t, what, bytes, p) : -ENOMEM;
	} else if (raw || t->has_raw_data) {
		const uint8_t *rp = raw ? raw->p : t->raw_data.data;
		size_t rlen = raw ? raw->len : t->raw_data.len;
		size_t align = npr_elem_size(*type) ? npr_elem_size(*type) : 1;

		err = 0;
		if (rlen != bytes) {
			err = onnx_err(c, -EINVAL,
				       "%s: raw_data has %zu bytes, but dims %s of %s need %zu",
				       what, rlen,
				       npr_shape_str(sh, (char[96]){ 0 }, 96),
				       npr_elem_name(*type), bytes);
		} else if (raw && bytes && c->src &&
			   (!((uintptr_t)rp % align) ||
			    (is_weights(*type) && bytes >= ONNX_REF_MIN))) {
			/*
			 * The bytes stay where they are in the mapped file:
			 * the graph refers to them (c->g->weights keeps the
			 * mapping), so the weights are not copied at load,
			 * and their pages leave memory once compile has
			 * its own copy or a backend its own form
			 * (Documentation/perf.rst).  The format does not
			 * align raw_data: floating-point weights may stay
			 * unaligned (see struct npr_value), anything else
			 * is copied.
			 */
			*owned = NULL;
			*data = rp;
			*nbytes = bytes;
			c->src_refs++;
			return 0;
		} else if (raw || !bytes) {
			/* from memory, or not aligned: a copy of this one */
			p = malloc(bytes ? bytes : 1);
			if (!p)
				err = -ENOMEM;
			else if (bytes)
				memcpy(p, rp, bytes);
		} else {
			/*
			 * Take the bytes protobuf-c unpacked (malloc'd, the
			 * message is this load's own and freed after it)
			 * instead of a second copy.
			 */
			Onnx__TensorProto *own = (Onnx__TensorProto *)t;

			p = own->raw_data.data;
			own->raw_data.data = NULL;
			own->raw_data.len = 0;
		}
	} else {
		p = malloc(bytes ? bytes : 1);
		err = p ? typed_data(t, *type, numel, p, &have) : -ENOMEM;
		if (!err && have != (size_t)numel)
			err = onnx_err(c, -EINVAL,
				       "%s: has %zu values, but dims %s need %lld",
				       what, have,
				       npr_shape_str(sh, (char[96]){ 0 }, 96),
				       (long long)numel);
	}
	if (err == -ENOMEM && !p)
		err = onnx_err(c, -ENOMEM, "%s: no memory for %zu bytes",
			       what, bytes);
	if (err) {
		free(p);
		return err;
	}
	*owned = p;
	*data = p;
	*nbytes = bytes;
	return 0;
}

/* A Const node for @t (raw_data @raw when not NULL, see tensor_read()). */
static int tensor_const(struct onnx_ctx *c, const Onnx__TensorProto *t,
			const struct pb_span *raw, const char *suffix)
{
	char what[256];
	struct npr_shape sh;
	unsigned int type;
	size_t bytes = 0;
	const void *data = NULL;
	void *owned = NULL;
	int err;

	snprintf(what, sizeof(what), "tensor \"%.200s\"",
		 t->name && *t->name ? t->name : suffix ? suffix : c->name);
	err = tensor_read(c, t, raw, what, &type, &sh, &owned, &data, &bytes);
	if (err)
		return err;
	if (!owned)
		return onnx_const_ref(c, type, &sh, data, bytes, suffix);
	return onnx_const_take(c, type, &sh, owned, bytes, suffix);
}

/**
 * onnx_tensor_const() - a Const node holding a TensorProto's data
 * @c: the context.
 * @t: the tensor (an initializer or an attribute value).
 * @suffix: node name suffix as in onnx_node(); outside a node, the name.
 *
 * Return: the value index, or -errno with the tensor named.
 */
int onnx_tensor_const(struct onnx_ctx *c, const Onnx__TensorProto *t,
		      const char *suffix)
{
	return tensor_const(c, t, NULL, suffix);
}

/**
 * onnx_const_ints() - the elements of a value known at load time
 * @c: the context.
 * @v: the value.
 * @out: where the elements go, as int64.
 * @max: room in @out.
 *
 * Return: the element count, -ENODATA (no message) when @v is not a
 * constant, -EINVAL when it has more than @max elements or is not numeric.
 */
int onnx_const_ints(struct onnx_ctx *c, int v, int64_t *out, int max)
{
	const struct npr_value *val = &c->g->vals[v];
	int64_t n = npr_shape_numel(&val->shape);

	if (!val->data || n < 0)
		return -ENODATA;
	if (n > max)
		return onnx_err(c, -EINVAL,
				"constant input has %lld elements, at most %d are supported",
				(long long)n, max);
	if (npr_tensor_bytes(val->type, n) > val->nbytes ||
	    npr_convert(out, NPR_ELEM_I64, val->data, val->type, n))
		return onnx_err(c, -EINVAL, "constant input is not numeric");
	return (int)n;
}

/**
 * onnx_const_doubles() - like onnx_const_ints(), as double
 * @c: the context.
 * @v: the value.
 * @out: where the elements go.
 * @max: room in @out.
 *
 * Return: as onnx_const_ints().
 */
int onnx_const_doubles(struct onnx_ctx *c, int v, double *out, int64_t max)
{
	const struct npr_value *val = &c->g->vals[v];
	int64_t n = npr_shape_numel(&val->shape);

	if (!val->data || n < 0)
		return -ENODATA;
	if (n > max)
		return onnx_err(c, -EINVAL,
				"constant input has %lld elements, %lld expected",
				(long long)n, (long long)max);
	if (npr_tensor_bytes(val->type, n) > val->nbytes ||
	    npr_convert(out, NPR_ELEM_F64, val->data, val->type, n))
		return onnx_err(c, -EINVAL, "constant input is not numeric");
	return (int)n;
}

/* ---- the graph -------------------------------------------------------- */

static int add_initializers(struct onnx_ctx *c, const Onnx__GraphProto *gp,
			    struct onnx_inits *in)
{
	size_t i, n = in ? in->n : gp->n_initializer;
	int v, err;

	for (i = 0; i < n; i++) {
		const Onnx__TensorProto *t = in ? NULL : gp->initializer[i];
		const struct pb_span *raw = NULL;

		c->layer++;
		if (in) {
			err = init_unpack(in, i);
			if (err == -ENOMEM)
				return err;
			t = in->t[i];
			raw = in->raw[i].p ? &in->raw[i] : NULL;
		}
		if (!t)
			return onnx_err(c, -EINVAL, "malformed ONNX protobuf");
		err = check_name(c, "an initializer", t->name);
		if (err)
			return err;
		v = tensor_const(c, t, raw, t->name);
		if (v < 0)
			return v;
		err = define(c, t->name, v);
		if (err)
			return err;
	}
	if (gp->n_sparse_initializer)
		return onnx_err(c, -EOPNOTSUPP,
				"sparse initializers are not supported");
	return 0;
}

static int add_inputs(struct onnx_ctx *c, const Onnx__GraphProto *gp)
{
	struct npr_graph *g = c->g;
	size_t i;
	int err;

	g->inputs = malloc(sizeof(int) * (gp->n_input ? gp->n_input : 1));
	if (!g->inputs)
		return -ENOMEM;
	for (i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		struct onnx_name *e;
		struct npr_value *v;
		struct npr_shape sh;
		unsigned int type;
		int idx, val;

		c->layer++;
		if (!vi)
			return onnx_err(c, -EINVAL, "malformed ONNX protobuf");
		err = check_name(c, "a graph input", vi->name);
		if (err)
			return err;
		e = name_find(c, vi->name);
		if (e && e->val >= 0 &&
		    !strcmp(g->nodes[g->vals[e->val].producer].type, "Const"))
			continue;	/* an initializer: a constant */
		if (e && e->val >= 0)
			return onnx_err(c, -EINVAL,
					"graph input \"%.200s\" is listed twice",
					vi->name);
		err = info_type(vi, &type, &sh);
		if (err == -EINVAL)
			return onnx_err(c, err,
					"graph input \"%.200s\": bad dims",
					vi->name);
		if (err)
			return onnx_err(c, err,
					"graph input \"%.200s\": only tensors of numeric types are supported",
					vi->name);
		if (!type && !c->parent)	/* a body's comes from outside */
			return onnx_err(c, -EINVAL,
					"graph input \"%.200s\" has no element type",
					vi->name);
		idx = npr_graph_add_node(g, vi->name, "Parameter", 1, c->layer);
		if (idx < 0)
			return idx;
		g->nodes[idx].op = npr_op_find("Parameter", 1);
		err = npr_node_set_outputs(g, idx, 1);
		if (!err && type)
			err = onnx_set_attr(c, idx, "element_type", "%s",
					    npr_elem_name(type));
		if (!err && sh.rank >= 0)
			err = onnx_set_shape_attr(c, idx, &sh);
		if (err)
			return err;
		val = g->nodes[idx].out[0];
		v = &g->vals[val];
		v->type = type;
		v->shape = sh;
		v->decl = sh;
		g->inputs[g->ninputs++] = idx;
		if (c->in_axis && c->in_axis[i] >= 0) {
			/* one part of a sliced input: without the axis */
			v->name = strdup(vi->name);
			if (!v->name)
				return -ENOMEM;
			val = onnx_with_list(c, "Squeeze", val, &c->in_axis[i],
					     1, vi->name);
			if (val < 0)
				return val;
		}
		err = define(c, vi->name, val);
		if (err)
			return err;
	}
	return 0;
}

/* A copy of value @v: Unsqueeze and Squeeze axis 0, any type and rank. */
static int copy_value(struct onnx_ctx *c, int v, const char *name)
{
	int64_t zero = 0;
	int in[2], ax, mid, out, err;

	ax = onnx_const_i64(c, &zero, 1, name);
	if (ax < 0)
		return ax;
	in[0] = v;
	in[1] = ax;
	err = onnx_node(c, "Unsqueeze", 1, name, 2, in, 1, &mid);
	if (err < 0)
		return err;
	in[0] = mid;
	err = onnx_node(c, "Squeeze", 1, name, 2, in, 1, &out);
	if (err < 0)
		return err;
	c->g->vals[out].shape = c->g->vals[v].shape;
	return out;
}

static int add_outputs(struct onnx_ctx *c, const Onnx__GraphProto *gp)
{
	struct npr_graph *g = c->g;
	size_t i, j;
	int err;

	if (!gp->n_output)
		return onnx_err(c, -EINVAL, "the graph has no outputs");
	g->outputs = malloc(sizeof(int) * gp->n_output);
	if (!g->outputs)
		return -ENOMEM;
	for (i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		struct onnx_name *e;
		struct npr_value *v;
		struct npr_shape sh;
		unsigned int type;
		int val, idx;

		c->layer++;
		if (!vi)
			return onnx_err(c, -EINVAL, "malformed ONNX protobuf");
		err = check_name(c, "a graph output", vi->name);
		if (err)
			return err;
		for (j = 0; j < i; j++)
			if (!strcmp(str(gp->output[j]->name), vi->name))
				return onnx_err(c, -EINVAL,
						"graph output \"%.200s\" is listed twice",
						vi->name);
		err = resolve(c, vi->name, &e);
		if (err)
			return err;
		if (e && e->val == NAME_UNSUPP)
			return onnx_err(c, -EOPNOTSUPP,
					"graph output \"%.200s\" is an optional node output that is not supported",
					vi->name);
		if (!e || e->val < 0)
			return onnx_err(c, -EINVAL,
					"graph output \"%.200s\" is not produced by any node",
					vi->name);
		err = info_type(vi, &type, &sh);
		if (err)
			return onnx_err(c, err, "graph output \"%.200s\": %s",
					vi->name, err == -EINVAL ? "bad dims" :
					"only tensors of numeric types are supported");
		val = e->val;
		if (c->out_axis && c->out_axis[i] >= 0) {
			/* one part of a stacked output */
			val = onnx_with_list(c, "Unsqueeze", val,
					     &c->out_axis[i], 1, vi->name);
			if (val < 0)
				return val;
		} else if (c->parent) {
			/* a body's Results are not named: no copy needed */
		} else if (strcmp(str(g->vals[val].name), vi->name)) {
			/* an alias (Identity) or an input: its own value */
			val = copy_value(c, val, vi->name);
			if (val < 0)
				return val;
			g->vals[val].name = strdup(vi->name);
			if (!g->vals[val].name)
				return -ENOMEM;
		}
		v = &g->vals[val];
		if (type)
			v->type = type;
		if (sh.rank >= 0)
			v->shape = sh;
		if (!v->type && !c->parent)
			return onnx_err(c, -EINVAL,
					"graph output \"%.200s\" has no known element type",
					vi->name);
		idx = npr_graph_add_node(g, vi->name, "Result", 1, c->layer);
		if (idx < 0)
			return idx;
		g->nodes[idx].op = npr_op_find("Result", 1);
		err = npr_node_set_inputs(&g->nodes[idx], 1);
		if (err)
			return err;
		g->nodes[idx].in[0] = val;
		g->outputs[g->noutputs++] = idx;
	}
	return 0;
}

/* Translate the current node (c->np, index c->layer). */
static int add_node(struct onnx_ctx *c)
{
	const Onnx__NodeProto *np = c->np;
	const struct onnx_op *op;
	int out[16], i, err;
	size_t k;

	snprintf(c->namebuf, sizeof(c->namebuf), "%.64s_%lld",
		 str(np->op_type), (long long)c->layer);
	c->name = c->namebuf;
	err = check_name(c, "the node's op", np->op_type);
	if (!err && np->name && *np->name) {
		err = check_name(c, "the node", np->name);
		c->name = err ? c->name : np->name;
	}
	if (err)
		return err;
	if (np->domain && *np->domain && strcmp(np->domain, "ai.onnx"))
		return onnx_err(c, -EOPNOTSUPP,
				"ops of domain \"%.100s\" are not supported",
				np->domain);
	op = onnx_op_find(np->op_type);
	if (!op)
		return onnx_err(c, -EOPNOTSUPP, "unsupported op %.64s",
				np->op_type);
	c->op = op;
	if (np->n_input < (size_t)op->nin_min ||
	    (op->nin_max >= 0 && np->n_input > (size_t)op->nin_max) ||
	    np->n_input > ONNX_MAX_PORTS)
		return onnx_err(c, -EINVAL,
				"has %zu inputs, the op takes %d..%d",
				np->n_input, op->nin_min, op->nin_max);
	if (!np->n_output || np->n_output > (size_t)op->nout_max)
		return onnx_err(c, -EINVAL,
				"has %zu outputs, the op gives 1..%d",
				np->n_output, op->nout_max);
	free(c->vin);
	c->vin = malloc(sizeof(int) * (np->n_input ? np->n_input : 1));
	if (!c->vin)
		return -ENOMEM;
	c->nin = (int)np->n_input;
	for (k = 0; k < np->n_input; k++) {
		const char *in = np->input[k];
		struct onnx_name *e;

		c->vin[k] = -1;
		if (!in || !*in) {
			if (k < (size_t)op->nin_min)
				return onnx_err(c, -EINVAL,
						"input %zu is required", k);
			continue;	/* an optional input left out */
		}
		err = resolve(c, in, &e);
		if (err)
			return err;
		if (e && e->val == NAME_UNSUPP)
			return onnx_err(c, -EOPNOTSUPP,
					"input %zu \"%.200s\" is an optional output of an earlier node that is not supported",
					k, in);
		if (!e || e->val < 0)
			return onnx_err(c, -EINVAL,
					"input %zu \"%.200s\" is not produced by an earlier node, an initializer or a graph input",
					k, in);
		c->vin[k] = e->val;
	}
	for (i = 0; i < 16; i++)
		out[i] = -1;
	err = op->fn(c, out);
	if (err)
		return err;
	for (k = 0; k < np->n_output; k++) {
		const char *name = np->output[k];

		if (!name || !*name)
			continue;
		err = check_name(c, "an output", name);
		if (err)
			return err;
		if (!k && out[k] < 0)
			return onnx_err(c, -EINVAL, "produced no output");
		if (out[k] < 0) {
			/* fine as long as nothing reads it */
			struct onnx_name *e = name_get(c, name);

			if (!e)
				return -ENOMEM;
			if (e->val != NAME_UNDEF)
				return onnx_err(c, -EINVAL,
						"tensor \"%.200s\" is defined twice",
						name);
			e->val = NAME_UNSUPP;
			continue;
		}
		err = define(c, name, out[k]);
		if (err)
			return err;
	}
	return 0;
}

static int find_opset(struct onnx_ctx *c, const Onnx__ModelProto *m)
{
	size_t i;

	c->opset = -1;
	for (i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (o && (!o->domain || !*o->domain ||
			  !strcmp(o->domain, "ai.onnx")))
			c->opset = o->has_version ? o->version : 0;
	}
	if (c->opset < 0)
		return npr_err(-EINVAL, "the model imports no ai.onnx opset");
	if (c->opset < ONNX_OPSET_MIN || c->opset > ONNX_OPSET_MAX)
		return npr_err(-EOPNOTSUPP,
			       "ONNX opset %lld is not supported (only %d..%d are)",
			       (long long)c->opset, ONNX_OPSET_MIN,
			       ONNX_OPSET_MAX);
	return 0;
}

/*
 * The model's graph or a sub-graph: its values, nodes, inputs, outputs.
 * @in: the model's initializers when they are not in @gp, or NULL.
 */
static int build_graph(struct onnx_ctx *c, const Onnx__GraphProto *gp,
		       struct onnx_inits *in)
{
	size_t ninit = in ? in->n : gp->n_initializer;
	struct npr_graph *g = c->g;
	size_t i;
	int err;

	if (gp->n_node > ONNX_MAX_NODES)
		return npr_err(-EFBIG, "more than %d nodes", ONNX_MAX_NODES);
	if (gp->n_input > ONNX_MAX_PORTS || gp->n_output > ONNX_MAX_PORTS)
		return npr_err(-EFBIG, "more than %d graph inputs or outputs",
			       ONNX_MAX_PORTS);
	g->name = strndup(str(gp->name), ONNX_MAX_NAME);
	if (!g->name)
		return -ENOMEM;
	for (i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		struct onnx_name *e;

		if (!vi || !vi->name || !*vi->name)
			continue;
		e = name_get(c, vi->name);
		if (!e)
			return -ENOMEM;
		e->info = vi;
	}
	/* node i is layer i; initializers, inputs and outputs come after */
	c->layer = (int64_t)gp->n_node - 1;
	err = add_initializers(c, gp, in);
	if (!err)
		err = add_inputs(c, gp);
	if (err)
		return err;
	for (i = 0; i < gp->n_node; i++) {
		c->np = gp->node[i];
		c->layer = (int64_t)i;
		if (!c->np)
			return npr_err(-EINVAL, "malformed ONNX protobuf");
		err = add_node(c);
		if (err)
			return err;
	}
	c->np = NULL;
	c->layer = (int64_t)gp->n_node + ninit + gp->n_input - 1;
	err = add_outputs(c, gp);
	if (err)
		return err;
	for (i = 0; i < (size_t)g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				return err;
		}
	}
	return npr_graph_sort(g);
}

static int build(struct onnx_ctx *c, const Onnx__ModelProto *m,
		 const Onnx__GraphProto *gp, struct onnx_inits *in)
{
	int err;

	err = find_opset(c, m);
	if (err)
		return err;
	if (!gp)
		return npr_err(-EINVAL, "the ONNX model has no graph");
	return build_graph(c, gp, in);
}

/**
 * onnx_body_read() - read a GRAPH attribute of the current node as a body
 * @c: the context, translating an If, Loop or Scan node.
 * @attr: the attribute ("then_branch", "body", ...).
 * @in_axis: per GraphProto input, an axis to squeeze out of its Parameter
 *           (the body sees one slice of a sliced input), or -1.
 * @nin_axis: entries in @in_axis (0 with @in_axis NULL).
 * @out_axis: per GraphProto output, an axis to insert before its Result
 *            (the body gives one part of a stacked output), or -1.
 * @nout_axis: entries in @out_axis.
 * @b: the body; release it with onnx_body_fini() whatever the outcome.
 *
 * The sub-graph is read like the model, in a context of its own whose
 * parent is @c: a name it does not define is looked up in the graphs
 * around it.  An outer constant is copied into the body; any other outer
 * value becomes a body Parameter after the GraphProto's inputs, listed in
 * b->caps for the translator to feed.  Messages from inside the body are
 * prefixed with the node and @attr.
 *
 * Return: 0, or -errno with a message.
 */
int onnx_body_read(struct onnx_ctx *c, const char *attr,
		   const int64_t *in_axis, int nin_axis,
		   const int64_t *out_axis, int nout_axis,
		   struct onnx_body *b)
{
	const Onnx__AttributeProto *a = onnx_attr_find(c, attr);
	struct onnx_ctx sub = {
		.base_dir = c->base_dir, .opset = c->opset, .parent = c,
		.depth = c->depth + 1, .in_axis = in_axis,
		.out_axis = out_axis,
	};
	const Onnx__GraphProto *gp;
	char msg[768];
	int err;

	memset(b, 0, sizeof(*b));
	if (!a || !a->g)
		return onnx_err(c, -EINVAL, "attribute %s (a graph) is missing",
				attr);
	gp = a->g;
	if (sub.depth > NPR_MAX_BODY_DEPTH)
		return onnx_err(c, -EFBIG,
				"sub-graphs are nested more than %d deep",
				NPR_MAX_BODY_DEPTH);
	if ((in_axis && gp->n_input != (size_t)nin_axis) ||
	    (out_axis && gp->n_output != (size_t)nout_axis))
		return onnx_err(c, -EINVAL,
				"%s has %zu inputs and %zu outputs, %d and %d expected",
				attr, gp->n_input, gp->n_output, nin_axis,
				nout_axis);
	sub.g = b->g = npr_graph_new();
	if (!sub.g)
		return -ENOMEM;
	err = build_graph(&sub, gp, NULL);
	b->caps = sub.caps;
	b->ncaps = sub.ncaps;
	b->nin = (int)gp->n_input;
	b->nout = (int)gp->n_output;
	free(sub.vin);
	free(sub.names);
	if (err && err != -ENOMEM) {
		snprintf(msg, sizeof(msg), "%s", npr_last_error());
		err = onnx_err(c, err, "%s: %s", attr, msg);
	}
	return err;
}

/**
 * onnx_sub_begin() - start a body built by a translator, not read
 * @c: the context, translating a node.
 * @sub: the body's context, set up here: a new graph whose parent is @c,
 *       translating the same node (its attributes, name and layer).
 *
 * The translator adds Parameters with onnx_sub_param(), nodes with the
 * usual helpers on @sub (sub-graph attributes read there see @c's values
 * through @sub, which captures them), Results with onnx_sub_result(), and
 * ends with onnx_sub_end().
 *
 * Return: 0, -EFBIG (nested too deep) or -ENOMEM.
 */
int onnx_sub_begin(struct onnx_ctx *c, struct onnx_ctx *sub)
{
	memset(sub, 0, sizeof(*sub));
	if (c->depth + 1 > NPR_MAX_BODY_DEPTH)
		return onnx_err(c, -EFBIG,
				"sub-graphs are nested more than %d deep",
				NPR_MAX_BODY_DEPTH);
	sub->base_dir = c->base_dir;
	sub->opset = c->opset;
	sub->parent = c;
	sub->depth = c->depth + 1;
	sub->np = c->np;
	sub->op = c->op;
	sub->layer = c->layer;
	snprintf(sub->namebuf, sizeof(sub->namebuf), "%s", c->namebuf);
	sub->name = c->name == c->namebuf ? sub->namebuf : c->name;
	sub->g = npr_graph_new();
	if (!sub->g)
		return -ENOMEM;
	sub->g->inputs = malloc(sizeof(int));
	sub->g->outputs = malloc(sizeof(int));
	return sub->g->inputs && sub->g->outputs ? 0 : -ENOMEM;
}

/**
 * onnx_sub_param() - a body Parameter of the type and load-time shape of
 * a value
 * @sub: the body's context.
 * @type: element type (0 if not known).
 * @shape: load-time shape.
 * @name: its name.
 *
 * Return: the Parameter's value, or -ENOMEM.
 */
int onnx_sub_param(struct onnx_ctx *sub, unsigned int type,
		   const struct npr_shape *shape, const char *name)
{
	struct npr_graph *g = sub->g;
	int idx, err, *p;

	idx = npr_graph_add_node(g, name, "Parameter", 1, sub->layer);
	if (idx < 0)
		return idx;
	g->nodes[idx].op = npr_op_find("Parameter", 1);
	err = npr_node_set_outputs(g, idx, 1);
	if (!err && type)
		err = onnx_set_attr(sub, idx, "element_type", "%s",
				    npr_elem_name(type));
	if (err)
		return err;
	g->vals[g->nodes[idx].out[0]].type = type;
	g->vals[g->nodes[idx].out[0]].shape = *shape;
	g->vals[g->nodes[idx].out[0]].decl.rank = -1;
	p = realloc(g->inputs, sizeof(int) * (g->ninputs + 1));
	if (!p)
		return -ENOMEM;
	g->inputs = p;
	g->inputs[g->ninputs++] = idx;
	return g->nodes[idx].out[0];
}

/**
 * onnx_sub_result() - a body Result of value @v
 * @sub: the body's context.
 * @v: the value.
 * @name: the Result's name.
 *
 * Return: 0 or -ENOMEM.
 */
int onnx_sub_result(struct onnx_ctx *sub, int v, const char *name)
{
	struct npr_graph *g = sub->g;
	int idx, err, *p;

	idx = npr_graph_add_node(g, name, "Result", 1, sub->layer);
	if (idx < 0)
		return idx;
	g->nodes[idx].op = npr_op_find("Result", 1);
	err = npr_node_set_inputs(&g->nodes[idx], 1);
	if (err)
		return err;
	g->nodes[idx].in[0] = v;
	p = realloc(g->outputs, sizeof(int) * (g->noutputs + 1));
	if (!p)
		return -ENOMEM;
	g->outputs = p;
	g->outputs[g->noutputs++] = idx;
	return 0;
}

/**
 * onnx_sub_end() - finish a body started by onnx_sub_begin()
 * @sub: the body's context; released here.
 * @err: 0, or the error the building ended with.
 * @b: the body (graph, captured values); release with onnx_body_fini().
 *
 * Return: @err, or the error of parsing and sorting the body.
 */
int onnx_sub_end(struct onnx_ctx *sub, int err, struct onnx_body *b)
{
	struct npr_graph *g = sub->g;
	int i;

	memset(b, 0, sizeof(*b));
	if (!g) {
		free(sub->vin);
		free(sub->names);
		return err ? err : -ENOMEM;
	}
	for (i = 0; !err && i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->op->parse)
			err = n->op->parse(g, n);
	}
	if (!err)
		err = npr_graph_sort(g);
	b->g = g;
	b->caps = sub->caps;
	b->ncaps = sub->ncaps;
	b->nin = g->ninputs - sub->ncaps;
	b->nout = g->noutputs;
	free(sub->vin);
	free(sub->names);
	memset(sub, 0, sizeof(*sub));
	return err;
}

/**
 * onnx_body_fini() - free what onnx_body_read() left in @b
 * @b: the body; its graph too, unless a node took it over (b->g NULL).
 */
void onnx_body_fini(struct onnx_body *b)
{
	npr_graph_free(b->g);
	free(b->caps);
	memset(b, 0, sizeof(*b));
}

/*
 * Unpack the model in @buf: the model without its graph, the graph
 * without its initializers (listed in @in for add_initializers()), so
 * that no initializer's raw_data is copied.  A model that gives its graph
 * field more than once (protobuf merges them) is unpacked whole instead,
 * *@split false and *@gp its graph.
 *
 * Return: 0, -EINVAL (malformed) or -ENOMEM.
 */
static int unpack(const uint8_t *buf, size_t len, Onnx__ModelProto **m,
		  Onnx__GraphProto **gp, struct onnx_inits *in, bool *split)
{
	uint32_t fg = pb_field(&onnx__model_proto__descriptor, "graph");
	uint32_t fi = pb_field(&onnx__graph_proto__descriptor, "initializer");
	struct pb_span *g = NULL;
	size_t rlen, ng;
	uint8_t *rest;
	int err;

	err = pb_split(buf, len, fg, &rest, &rlen, &g, &ng);
	if (err)
		return err;
	*split = ng == 1;
	if (!*split) {
		free(rest);
		free(g);
		*m = onnx__model_proto__unpack(NULL, len, buf);
		*gp = *m ? (*m)->graph : NULL;
		return *m ? 0 : -EINVAL;
	}
	*m = onnx__model_proto__unpack(NULL, rlen, rest);
	free(rest);
	if (!*m) {
		free(g);
		return -EINVAL;
	}
	err = pb_split(g->p, g->len, fi, &rest, &rlen, &in->msg, &in->n);
	free(g);
	if (err)
		return err;
	*gp = onnx__graph_proto__unpack(NULL, rlen, rest);
	free(rest);
	if (!*gp)
		return -EINVAL;
	in->t = calloc(in->n ? in->n : 1, sizeof(*in->t));
	in->raw = calloc(in->n ? in->n : 1, sizeof(*in->raw));
	return in->t && in->raw ? 0 : -ENOMEM;
}

/*
 * npr_onnx_parse() with @src, when not NULL, the blob holding @buf (a
 * mapped file) that constants may keep referring to.
 */
static int parse(const void *buf, size_t len, const char *base_dir,
		 struct npr_blob *src, struct npr_graph **out)
{
	struct onnx_ctx c = { .base_dir = base_dir, .src = src };
	struct onnx_inits in = { 0 };
	Onnx__ModelProto *m = NULL;
	Onnx__GraphProto *gp = NULL;
	bool split = false;
	int err;

	if (!out || (!buf && len))
		return npr_err(-EINVAL, "no ONNX model given");
	if (len > ONNX_MAX_BYTES)
		return npr_err(-EFBIG,
			       "ONNX model of %zu bytes is larger than 2 GiB",
			       len);
	err = pb_check(buf, len, &onnx__model_proto__descriptor, 0);
	if (err == -ELOOP)
		return npr_err(-EINVAL,
			       "malformed ONNX protobuf: messages nested more than %d deep",
			       ONNX_MAX_DEPTH);
	if (err)
		return npr_err(-EINVAL, "malformed ONNX protobuf");
	err = unpack(buf, len, &m, &gp, &in, &split);
	if (err) {
		if (err != -ENOMEM)
			err = npr_err(-EINVAL, "malformed ONNX protobuf");
		goto out;
	}
	c.g = npr_graph_new();
	if (!c.g) {
		err = -ENOMEM;
		goto out;
	}
	err = build(&c, m, gp, split ? &in : NULL);
	if (err) {
		npr_graph_free(c.g);
		goto out;
	}
	if (c.src_refs)
		c.g->weights = npr_blob_get(src);
	*out = c.g;
out:
	free(c.vin);
	free(c.names);
	if (split && gp)
		onnx__graph_proto__free_unpacked(gp, NULL);
	inits_free(&in);
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	return err;
}

/**
 * npr_onnx_parse() - build a graph from a serialized ONNX ModelProto
 * @buf: the protobuf bytes; not referenced after the call.
 * @len: their size, at most 2 GiB.
 * @base_dir: directory that external-data locations are relative to, or
 *            NULL to refuse external data.
 * @out: set to the new graph on success only; free with npr_graph_free().
 *
 * Reads models of the default ONNX domain at opsets ONNX_OPSET_MIN..
 * ONNX_OPSET_MAX.  Constant data is copied into the graph, once: the
 * initializers' raw_data is not unpacked by protobuf-c but copied from
 * @buf.  Graph inputs that have an initializer are constants; the others
 * become Parameters named after them, with symbolic dims as -1 (give
 * shapes at compile).
 *
 * Return: 0, or a negative errno with a message naming the node at fault:
 * -EINVAL (malformed protobuf, undefined or duplicate tensor names, sizes
 * that do not match dims, bad attributes), -EOPNOTSUPP (opset, op, data
 * type, attribute value), -EOVERFLOW, -EFBIG, -ENAMETOOLONG, -ENOMEM, or
 * the errno of reading an external data file.
 *
 * Context: any thread; concurrent calls are independent.
 */
int npr_onnx_parse(const void *buf, size_t len, const char *base_dir,
		   struct npr_graph **out)
{
	return parse(buf, len, base_dir, NULL, out);
}

/**
 * npr_onnx_load_file() - read an .onnx file (and its external data)
 * @path: the model file.
 * @out: set to the new graph on success only; free with npr_graph_free().
 *
 * The file is mapped read-only and stays mapped while the graph or a
 * clone of it lives (g->weights): initializers refer to their raw_data in
 * it instead of being copied when it is aligned to their element size or
 * is floating-point weights of at least ONNX_REF_MIN bytes (see
 * tensor_read()).  The file must not be changed in place (truncated or
 * rewritten) meanwhile.  External data files are looked up in its
 * directory and read into memory.
 *
 * Return: as npr_onnx_parse(), or -ENOENT, -EACCES, ... (with the path in
 * the message) when the file cannot be opened or mapped.
 * Context: any thread.
 */
int npr_onnx_load_file(const char *path, struct npr_graph **out)
{
	struct npr_blob *b = NULL;
	struct stat st;
	char *dir, *slash;
	void *p = NULL;
	int fd, err = 0;

	if (!path || !out)
		return npr_err(-EINVAL, "no model path");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return npr_err(err, "cannot open model %s: %s", path,
			       strerror(-err));
	}
	if (fstat(fd, &st)) {
		err = -errno;
		err = npr_err(err, "cannot stat model %s: %s", path,
			      strerror(-err));
	} else if (!S_ISREG(st.st_mode)) {
		err = npr_err(-EINVAL, "model %s is not a regular file", path);
	} else if ((uint64_t)st.st_size > ONNX_MAX_BYTES) {
		err = npr_err(-EFBIG, "model %s is larger than 2 GiB", path);
	} else if (!st.st_size) {
		err = npr_err(-EINVAL, "model %s is empty", path);
	} else {
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			err = npr_err(err, "cannot map model %s: %s", path,
				      strerror(-err));
		}
	}
	close(fd);
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	dir = strdup(path);
	if (!b || !dir) {
		free(b);
		free(dir);
		munmap(p, st.st_size);
		return -ENOMEM;
	}
	b->refs = 1;
	b->data = p;
	b->size = st.st_size;
	b->mapped = true;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	err = parse(p, st.st_size, dir, b, out);
	free(dir);
	npr_blob_put(b);	/* the graph keeps its own reference */
	return err;
}
