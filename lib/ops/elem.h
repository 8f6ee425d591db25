/* SPDX-License-Identifier: MIT */
/*
 * Element access and shape arithmetic for op definitions (lib/ops/) and
 * their kernels (ref/kernels/): read and write an element of any compute
 * type as a double, and the shape helpers the index, math, layout,
 * interp, sort and misc groups share.  Everything here is static inline,
 * so including it adds no link dependency.
 */
#ifndef NPR_OPS_ELEM_H
#define NPR_OPS_ELEM_H

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Element @i of @p, an array of element type @t, as a double. */
static inline double npr_ld(unsigned int t, const void *p, int64_t i)
{
	switch (t) {
	case NPR_ELEM_F32: return ((const float *)p)[i];
	case NPR_ELEM_F64: return ((const double *)p)[i];
	case NPR_ELEM_I8: return ((const int8_t *)p)[i];
	case NPR_ELEM_U8: return ((const uint8_t *)p)[i];
	case NPR_ELEM_BOOLEAN: return ((const uint8_t *)p)[i] != 0;
	case NPR_ELEM_I16: return ((const int16_t *)p)[i];
	case NPR_ELEM_U16: return ((const uint16_t *)p)[i];
	case NPR_ELEM_I32: return ((const int32_t *)p)[i];
	case NPR_ELEM_U32: return ((const uint32_t *)p)[i];
	case NPR_ELEM_I64: return (double)((const int64_t *)p)[i];
	case NPR_ELEM_U64: return (double)((const uint64_t *)p)[i];
	default: return 0;
	}
}

/* Element @i of an integer array as int64 (exact for every type). */
static inline int64_t npr_ld_int(unsigned int t, const void *p, int64_t i)
{
	switch (t) {
	case NPR_ELEM_I32: return ((const int32_t *)p)[i];
	case NPR_ELEM_I64: return ((const int64_t *)p)[i];
	case NPR_ELEM_U64: return (int64_t)((const uint64_t *)p)[i];
	case NPR_ELEM_U32: return ((const uint32_t *)p)[i];
	default: {
		double v = npr_ld(t, p, i);

		if (!(v > -9.2e18 && v < 9.2e18))
			return v > 0 ? INT64_MAX : INT64_MIN;
		return (int64_t)v;
	}
	}
}

static inline double npr_sat(double v, double lo, double hi)
{
	if (v != v)
		return 0;
	return v < lo ? lo : v > hi ? hi : v;
}

/* Store @v as element @i of @p of type @t; integers truncate toward zero
 * and saturate (NaN gives 0). */
static inline void npr_st(unsigned int t, void *p, int64_t i, double v)
{
	switch (t) {
	case NPR_ELEM_F32: ((float *)p)[i] = (float)v; break;
	case NPR_ELEM_F64: ((double *)p)[i] = v; break;
	case NPR_ELEM_I8: ((int8_t *)p)[i] = (int8_t)npr_sat(v, -128, 127);
		break;
	case NPR_ELEM_U8: ((uint8_t *)p)[i] = (uint8_t)npr_sat(v, 0, 255);
		break;
	case NPR_ELEM_BOOLEAN: ((uint8_t *)p)[i] = v != 0; break;
	case NPR_ELEM_I16:
		((int16_t *)p)[i] = (int16_t)npr_sat(v, -32768, 32767);
		break;
	case NPR_ELEM_U16: ((uint16_t *)p)[i] = (uint16_t)npr_sat(v, 0, 65535);
		break;
	case NPR_ELEM_I32:
		((int32_t *)p)[i] = (int32_t)npr_sat(v, -2147483648.0,
						    2147483647.0);
		break;
	case NPR_ELEM_U32:
		((uint32_t *)p)[i] = (uint32_t)npr_sat(v, 0, 4294967295.0);
		break;
	case NPR_ELEM_I64:
		((int64_t *)p)[i] = (int64_t)npr_sat(v, -9.2233720368547e18,
						     9.2233720368547e18);
		break;
	case NPR_ELEM_U64:
		((uint64_t *)p)[i] = (uint64_t)npr_sat(v, 0,
						       1.8446744073709e19);
		break;
	default: break;
	}
}

/*
 * Element @k of @t, of @es bytes, is not zero: by value for floats (-0.0
 * is zero), by bytes for the others.  NonZero's test, shared by its shape
 * inference (lib/ops/index.c) and its kernel (ref/kernels/index.c).
 */
static inline bool npr_elem_nonzero(const struct npr_tensor *t, int64_t k,
				    size_t es)
{
	const unsigned char *b = (const unsigned char *)t->data + k * es;
	size_t i;

	if (t->type == NPR_ELEM_F32 || t->type == NPR_ELEM_F64)
		return npr_ld(t->type, t->data, k) != 0;
	for (i = 0; i < es; i++)
		if (b[i])
			return true;
	return false;
}

static inline bool npr_is_float(unsigned int t)
{
	return t == NPR_ELEM_F32 || t == NPR_ELEM_F64;
}

static inline bool npr_is_index(unsigned int t)
{
	return t == NPR_ELEM_I32 || t == NPR_ELEM_I64;
}

/* A numeric type the kernels compute in (f16/bf16 are lowered before). */
static inline bool npr_is_compute(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_F32: case NPR_ELEM_F64: case NPR_ELEM_I8:
	case NPR_ELEM_U8: case NPR_ELEM_I16: case NPR_ELEM_U16:
	case NPR_ELEM_I32: case NPR_ELEM_U32: case NPR_ELEM_I64:
	case NPR_ELEM_U64:
		return true;
	}
	return false;
}

/* Replace n->params by a zeroed block of @size bytes. */
static inline void *npr_params_new(struct npr_node *n, size_t size)
{
	free(n->params);
	n->params = calloc(1, size);
	return n->params;
}

/* Normalise @axis (may be negative) for @rank into *out. */
static inline int npr_norm_axis(const struct npr_node *n, const char *what,
				int64_t axis, int rank, int *out)
{
	*out = 0;
	if (axis < -rank || axis >= rank)
		return npr_node_err(n, -EINVAL,
				    "%s %lld is out of range for rank %d",
				    what, (long long)axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

/* Product of dims [from, to) of @s. */
static inline int64_t npr_dims_prod(const struct npr_shape *s, int from,
				    int to)
{
	int64_t p = 1;
	int i;

	for (i = from; i < to; i++)
		p *= s->d[i];
	return p;
}

/* An inferred output shape must have a representable element count. */
static inline int npr_check_numel(const struct npr_node *n,
				  const struct npr_shape *s)
{
	if (npr_shape_numel(s) < 0)
		return npr_node_err(n, -EINVAL, "output has too many elements");
	return 0;
}

#endif /* NPR_OPS_ELEM_H */
