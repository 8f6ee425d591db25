// SPDX-License-Identifier: MIT
/*
 * ONNX frontend: tensors.  ONNX data types as element types, declared
 * types of graph values, and TensorProtos (initializers, attribute values)
 * as Const nodes: raw_data, the typed fields or an external data file,
 * every size checked against the dims.  In a model read from its mapped
 * file, raw_data stays in the mapping where it can (lib/onnx/read.c says
 * when); everything else is copied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_data is little-endian: byte swapping is not implemented"
#endif

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
 * npr_onnx_elem_type() - an ONNX TensorProto.DataType as an element type
 * @dt: the ONNX data type number.
 *
 * Return: NPR_ELEM_*, or 0 for strings, complex numbers and unknown types.
 */
unsigned int npr_onnx_elem_type(int32_t dt)
{
	return elem_type(dt);
}

/**
 * npr_onnx_info_type() - the declared type of a graph input, output or
 * value_info
 * @vi: the declaration.
 * @type: Out. Its element type, 0 if not given.
 * @sh: Out. Its shape: rank -1 if not given, -1 for a symbolic dim.
 *
 * Return: 0, -EOPNOTSUPP for sequences, maps and unknown element types,
 * -EINVAL for a dimension out of range.  No message is set.
 */
int npr_onnx_info_type(const Onnx__ValueInfoProto *vi, unsigned int *type,
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
		const char *k = e ? onnx_str(e->key) : "";

		if (!strcmp(k, "location"))
			loc = onnx_str(e->value);
		else if ((!strcmp(k, "offset") && parse_u64(e->value, &off)) ||
			 (!strcmp(k, "length") && parse_u64(e->value, &len)))
			return npr_onnx_err(c, -EINVAL,
					    "%s: bad external %s \"%.40s\"",
					    what, k, onnx_str(e->value));
	}
	if (!c->base_dir)
		return npr_onnx_err(c, -EINVAL,
				    "%s: external data needs the model's directory (load the model from its file)",
				    what);
	if (!loc || !safe_location(loc) ||
	    strnlen(loc, ONNX_MAX_NAME + 1) > ONNX_MAX_NAME)
		return npr_onnx_err(c, -EINVAL,
				    "%s: external data location \"%.200s\" is not a relative path inside the model's directory",
				    what, loc ? loc : "");
	if (len != need)
		return npr_onnx_err(c, -EINVAL,
				    "%s: external length %llu, but the dims need %zu bytes",
				    what, (unsigned long long)len, need);
	if (asprintf(&path, "%s/%s", c->base_dir, loc) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		err = npr_onnx_err(c, err,
				   "%s: cannot open external data %s: %s",
				   what, path, strerror(-err));
		free(path);
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		err = npr_onnx_err(c, -EINVAL, "%s: %s is not a regular file",
				   what, path);
	else if (off > (uint64_t)st.st_size ||
		 need > (uint64_t)st.st_size - off)
		err = npr_onnx_err(c, -EINVAL,
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
			err = npr_onnx_err(c, k < 0 ? -errno : -EIO,
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
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "%s: data type %d is not supported", what,
				    t->has_data_type ? t->data_type : 0);
	if (t->n_dims > NPR_MAX_RANK)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "%s has %zu dims, at most %d are supported",
				    what, t->n_dims, NPR_MAX_RANK);
	if (t->segment)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "%s: segmented tensors are not supported",
				    what);
	sh->rank = (int)t->n_dims;
	for (i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || t->dims[i] > ONNX_MAX_DIM)
			return npr_onnx_err(c, -EINVAL, "%s: dim %zu is %lld",
					    what, i, (long long)t->dims[i]);
		sh->d[i] = t->dims[i];
		if (t->dims[i] && numel > ONNX_MAX_DIM / t->dims[i])
			return npr_onnx_err(c, -EOVERFLOW, "%s: dims too large",
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
			err = npr_onnx_err(c, -EINVAL,
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
			err = npr_onnx_err(c, -EINVAL,
					   "%s: has %zu values, but dims %s need %lld",
					   what, have,
					   npr_shape_str(sh, (char[96]){ 0 }, 96),
					   (long long)numel);
	}
	if (err == -ENOMEM && !p)
		err = npr_onnx_err(c, -ENOMEM, "%s: no memory for %zu bytes",
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

/**
 * npr_onnx_tensor_const_raw() - a Const node for an initializer
 * @c: the context.
 * @t: the tensor, unpacked without its raw_data when @raw is not NULL.
 * @raw: its raw_data left in the model's bytes, or NULL.
 * @suffix: node name suffix as in npr_onnx_node(); outside a node, the name.
 *
 * The data is copied, or referred to in a mapped model (see tensor_read()).
 *
 * Return: the value index, or -errno with the tensor named.
 */
int npr_onnx_tensor_const_raw(struct onnx_ctx *c, const Onnx__TensorProto *t,
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
		return npr_onnx_const_ref(c, type, &sh, data, bytes, suffix);
	return npr_onnx_const_take(c, type, &sh, owned, bytes, suffix);
}

/**
 * npr_onnx_tensor_const() - a Const node holding a TensorProto's data
 * @c: the context.
 * @t: the tensor (an initializer or an attribute value).
 * @suffix: node name suffix as in npr_onnx_node(); outside a node, the name.
 *
 * Return: the value index, or -errno with the tensor named.
 */
int npr_onnx_tensor_const(struct onnx_ctx *c, const Onnx__TensorProto *t,
			  const char *suffix)
{
	return npr_onnx_tensor_const_raw(c, t, NULL, suffix);
}

/**
 * npr_onnx_const_ints() - the elements of a value known at load time
 * @c: the context.
 * @v: the value.
 * @out: where the elements go, as int64.
 * @max: room in @out.
 *
 * Return: the element count, -ENODATA (no message) when @v is not a
 * constant, -EINVAL when it has more than @max elements or is not numeric.
 */
int npr_onnx_const_ints(struct onnx_ctx *c, int v, int64_t *out, int max)
{
	const struct npr_value *val = &c->g->vals[v];
	int64_t n = npr_shape_numel(&val->shape);

	if (!val->data || n < 0)
		return -ENODATA;
	if (n > max)
		return npr_onnx_err(c, -EINVAL,
				    "constant input has %lld elements, at most %d are supported",
				    (long long)n, max);
	if (npr_tensor_bytes(val->type, n) > val->nbytes ||
	    npr_convert(out, NPR_ELEM_I64, val->data, val->type, n))
		return npr_onnx_err(c, -EINVAL,
				    "constant input is not numeric");
	return (int)n;
}

/**
 * npr_onnx_const_doubles() - like npr_onnx_const_ints(), as double
 * @c: the context.
 * @v: the value.
 * @out: where the elements go.
 * @max: room in @out.
 *
 * Return: as npr_onnx_const_ints().
 */
int npr_onnx_const_doubles(struct onnx_ctx *c, int v, double *out, int64_t max)
{
	const struct npr_value *val = &c->g->vals[v];
	int64_t n = npr_shape_numel(&val->shape);

	if (!val->data || n < 0)
		return -ENODATA;
	if (n > max)
		return npr_onnx_err(c, -EINVAL,
				    "constant input has %lld elements, %lld expected",
				    (long long)n, (long long)max);
	if (npr_tensor_bytes(val->type, n) > val->nbytes ||
	    npr_convert(out, NPR_ELEM_F64, val->data, val->type, n))
		return npr_onnx_err(c, -EINVAL,
				    "constant input is not numeric");
	return (int)n;
}
