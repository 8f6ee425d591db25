// SPDX-License-Identifier: MIT
/*
 * Reference kernels for elementwise ops.
 *
 * Broadcasting: bc_init() aligns every input on the output shape, drops
 * dimensions of size 1 and merges neighbouring dimensions along which every
 * input is either dense or broadcast alike.  What is left is a few
 * dimensions whose innermost one is a "row": along it each input advances
 * by 1 or by 0 (broadcast).  Same-shape, scalar and per-channel operands
 * thus all reduce to long rows with one of four stride patterns, and each
 * kernel has a tight loop per pattern that the compiler can vectorise.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eltwise.h"
#include "registry.h"
#include "fq.h"
#include "ref/conv/conv.h"
#include "ref/threads.h"

#define BC_MAXIN	5

/**
 * struct bc - a broadcast walk over an output
 * @nin: number of inputs.
 * @rank: dimensions left after merging, >= 1.
 * @rows: number of rows (product of all but the innermost dimension).
 * @len: row length (the innermost dimension).
 * @dim: the merged dimensions.
 * @st: per input, element stride along each merged dimension.
 */
struct bc {
	int nin;
	int rank;
	int64_t rows, len;
	int64_t dim[NPR_MAX_RANK];
	int64_t st[BC_MAXIN][NPR_MAX_RANK];
};

/* Position of the current row: outer index and each input's offset. */
struct bc_pos {
	int64_t idx[NPR_MAX_RANK];
	int64_t off[BC_MAXIN];
};

static bool tensor_ok(const struct npr_tensor *t, int64_t numel)
{
	size_t es = npr_elem_size(t->type);

	if (numel < 0 || !es)
		return false;
	if (!numel)
		return true;
	return t->data && t->nbytes / es >= (uint64_t)numel;
}

/*
 * Set up a walk of @out over @nin inputs.  Validates that every input
 * broadcasts to @out and holds enough data, so that a corrupt call fails
 * instead of reading out of bounds.
 */
static int bc_init(struct bc *b, const struct npr_node *n,
		   const struct npr_tensor *out, const struct npr_tensor *in,
		   int nin)
{
	const struct npr_shape *o = &out->shape;
	int64_t dense[BC_MAXIN], dim[NPR_MAX_RANK];
	int64_t st[BC_MAXIN][NPR_MAX_RANK];
	int i, k, r = 0;

	if (nin > BC_MAXIN)
		return npr_node_err(n, -EINVAL, "too many inputs: %d", nin);
	if (o->rank < 0 || o->rank > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL, "bad output rank %d", o->rank);
	if (!tensor_ok(out, npr_shape_numel(o)))
		return npr_node_err(n, -EINVAL, "output buffer too small");
	for (k = 0; k < nin; k++) {
		const struct npr_shape *s = &in[k].shape;

		if (s->rank < 0 || s->rank > o->rank)
			return npr_node_err(n, -EINVAL,
					    "input %d rank %d exceeds output rank %d",
					    k, s->rank, o->rank);
		if (!tensor_ok(&in[k], npr_shape_numel(s)))
			return npr_node_err(n, -EINVAL,
					    "input %d buffer too small", k);
		dense[k] = 1;
	}
	if (!npr_shape_numel(o)) {
		/*
		 * Nothing to walk; the other dimensions of an empty tensor
		 * may multiply past int64_t, so no strides are made of them.
		 */
		memset(b, 0, sizeof(*b));
		b->nin = nin;
		b->rank = 1;
		return 0;
	}
	/* innermost first; merged dimensions are kept in dim[]/st[] */
	for (i = o->rank - 1; i >= 0; i--) {
		int64_t d = o->d[i], s[BC_MAXIN];
		bool merge = r > 0;

		for (k = 0; k < nin; k++) {
			int j = i - (o->rank - in[k].shape.rank);
			int64_t dk = j >= 0 ? in[k].shape.d[j] : 1;

			if (dk != d && dk != 1)
				return npr_node_err(n, -EINVAL,
						    "input %d dim %d is %lld, output has %lld",
						    k, j, (long long)dk,
						    (long long)d);
			s[k] = dk == 1 ? 0 : dense[k];
			dense[k] *= dk;
			if (r > 0 && s[k] != st[k][r - 1] * dim[r - 1])
				merge = false;
		}
		if (d == 1)
			continue;
		if (merge) {
			dim[r - 1] *= d;
			continue;
		}
		dim[r] = d;
		for (k = 0; k < nin; k++)
			st[k][r] = s[k];
		r++;
	}
	if (!r) {
		dim[0] = 1;
		for (k = 0; k < nin; k++)
			st[k][0] = 0;
		r = 1;
	}
	b->nin = nin;
	b->rank = r;
	b->rows = 1;
	for (i = 0; i < r; i++) {
		b->dim[i] = dim[r - 1 - i];
		for (k = 0; k < nin; k++)
			b->st[k][i] = st[k][r - 1 - i];
		if (i < r - 1)
			b->rows *= b->dim[i];
	}
	b->len = b->dim[r - 1];
	return 0;
}

static inline int64_t bc_step(const struct bc *b, int k)
{
	return b->st[k][b->rank - 1];
}

static void bc_start(struct bc_pos *p)
{
	memset(p, 0, sizeof(*p));
}

/* Advance to the next row. */
static inline void bc_next(const struct bc *b, struct bc_pos *p)
{
	int d, k;

	for (d = b->rank - 2; d >= 0; d--) {
		for (k = 0; k < b->nin; k++)
			p->off[k] += b->st[k][d];
		if (++p->idx[d] < b->dim[d])
			return;
		for (k = 0; k < b->nin; k++)
			p->off[k] -= b->st[k][d] * b->dim[d];
		p->idx[d] = 0;
	}
}

/* Position of row @r, for a walk split over threads. */
static void bc_seek(const struct bc *b, int64_t r, struct bc_pos *p)
{
	int d, k;

	memset(p, 0, sizeof(*p));
	for (d = b->rank - 2; d >= 0; d--) {
		p->idx[d] = r % b->dim[d];
		r /= b->dim[d];
		for (k = 0; k < b->nin; k++)
			p->off[k] += p->idx[d] * b->st[k][d];
	}
}

/*
 * One row of a binary op: d[i] = EXPR for i < len, where EXPR reads x (from
 * a) and y (from b); sa and sb are 0 (broadcast) or 1.
 */
#define ROW2(TD, TS, d, a, sa, b, sb, len, EXPR)			\
	do {								\
		TD *d_ = (TD *)(d);					\
		const TS *a_ = (const TS *)(a);				\
		const TS *b_ = (const TS *)(b);				\
		int64_t i_, n_ = (len);					\
		if ((sa) && (sb)) {					\
			for (i_ = 0; i_ < n_; i_++) {			\
				const TS x = a_[i_], y = b_[i_];	\
				d_[i_] = (EXPR);			\
			}						\
		} else if (sa) {					\
			const TS y = b_[0];				\
			for (i_ = 0; i_ < n_; i_++) {			\
				const TS x = a_[i_];			\
				d_[i_] = (EXPR);			\
			}						\
		} else if (sb) {					\
			const TS x = a_[0];				\
			for (i_ = 0; i_ < n_; i_++) {			\
				const TS y = b_[i_];			\
				d_[i_] = (EXPR);			\
			}						\
		} else {						\
			const TS x = a_[0], y = b_[0];			\
			const TD v_ = (EXPR);				\
			for (i_ = 0; i_ < n_; i_++)			\
				d_[i_] = v_;				\
		}							\
	} while (0)

/* Floating point helpers. */

static inline float floormod_f(float x, float y)
{
	float r = fmodf(x, y);

	return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

static inline double floormod_d(double x, double y)
{
	double r = fmod(x, y);

	return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

#define DEFINE_FLOAT_ROW(name, T, FMOD, FLOORMOD, POW)			\
static int name(int op, void *d, const void *a, int64_t sa,		\
		const void *b, int64_t sb, int64_t len)			\
{									\
	switch (op) {							\
	case NPR_BIN_ADD:						\
		ROW2(T, T, d, a, sa, b, sb, len, x + y);		\
		break;							\
	case NPR_BIN_SUB:						\
		ROW2(T, T, d, a, sa, b, sb, len, x - y);		\
		break;							\
	case NPR_BIN_MUL:						\
		ROW2(T, T, d, a, sa, b, sb, len, x * y);		\
		break;							\
	case NPR_BIN_DIV:						\
		ROW2(T, T, d, a, sa, b, sb, len, x / y);		\
		break;							\
	case NPR_BIN_MAX:						\
		ROW2(T, T, d, a, sa, b, sb, len, x > y ? x : y);	\
		break;							\
	case NPR_BIN_MIN:						\
		ROW2(T, T, d, a, sa, b, sb, len, x < y ? x : y);	\
		break;							\
	case NPR_BIN_POW:						\
		ROW2(T, T, d, a, sa, b, sb, len, POW(x, y));		\
		break;							\
	case NPR_BIN_SQDIFF:						\
		ROW2(T, T, d, a, sa, b, sb, len, (x - y) * (x - y));	\
		break;							\
	case NPR_BIN_FLOORMOD:						\
		ROW2(T, T, d, a, sa, b, sb, len, FLOORMOD(x, y));	\
		break;							\
	case NPR_BIN_MOD:						\
		ROW2(T, T, d, a, sa, b, sb, len, FMOD(x, y));		\
		break;							\
	default:							\
		return -EINVAL;						\
	}								\
	return 0;							\
}

DEFINE_FLOAT_ROW(row_f32, float, fmodf, floormod_f, powf)
DEFINE_FLOAT_ROW(row_f64, double, fmod, floormod_d, pow)

/*
 * Integer helpers, on int64 with wrap-around instead of undefined
 * behaviour.  *bad is set on division by zero.
 */
static inline int64_t i_add(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x + (uint64_t)y);
}

static inline int64_t i_sub(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x - (uint64_t)y);
}

static inline int64_t i_mul(int64_t x, int64_t y)
{
	return (int64_t)((uint64_t)x * (uint64_t)y);
}

static inline int64_t i_div(int64_t x, int64_t y, bool pyfloor, bool *bad)
{
	int64_t q;

	if (!y) {
		*bad = true;
		return 0;
	}
	if (y == -1)
		return i_sub(0, x);
	q = x / y;
	if (pyfloor && q * y != x && ((x < 0) != (y < 0)))
		q--;
	return q;
}

static inline int64_t i_mod(int64_t x, int64_t y, bool *bad)
{
	if (!y) {
		*bad = true;
		return 0;
	}
	return y == -1 ? 0 : x % y;
}

static inline int64_t i_floormod(int64_t x, int64_t y, bool *bad)
{
	int64_t r = i_mod(x, y, bad);

	return (r && ((r < 0) != (y < 0))) ? r + y : r;
}

static inline int64_t i_pow(int64_t x, int64_t y)
{
	uint64_t r = 1, b = (uint64_t)x;

	if (y < 0) {
		/* the integer part of x^y: only |x| == 1 gives non-zero */
		if (x == 1)
			return 1;
		if (x == -1)
			return (y & 1) ? -1 : 1;
		return 0;
	}
	while (y) {
		if (y & 1)
			r *= b;
		b *= b;
		y >>= 1;
	}
	return (int64_t)r;
}

static inline int64_t i_sqdiff(int64_t x, int64_t y)
{
	int64_t d = i_sub(x, y);

	return i_mul(d, d);
}

static int64_t i_binop(int op, int64_t x, int64_t y, bool pyfloor,
		       bool *bad)
{
	switch (op) {
	case NPR_BIN_ADD: return i_add(x, y);
	case NPR_BIN_SUB: return i_sub(x, y);
	case NPR_BIN_MUL: return i_mul(x, y);
	case NPR_BIN_DIV: return i_div(x, y, pyfloor, bad);
	case NPR_BIN_MAX: return x > y ? x : y;
	case NPR_BIN_MIN: return x < y ? x : y;
	case NPR_BIN_POW: return i_pow(x, y);
	case NPR_BIN_SQDIFF: return i_sqdiff(x, y);
	case NPR_BIN_FLOORMOD: return i_floormod(x, y, bad);
	case NPR_BIN_MOD: return i_mod(x, y, bad);
	}
	return 0;
}

/* Typed rows for the signed integer types shape math runs in. */
#define DEFINE_INT_ROW(name, T)						\
static int name(int op, void *d, const void *a, int64_t sa,		\
		const void *b, int64_t sb, int64_t len, bool pyfloor)	\
{									\
	bool bad = false;						\
									\
	switch (op) {							\
	case NPR_BIN_ADD:						\
		ROW2(T, T, d, a, sa, b, sb, len, (T)i_add(x, y));	\
		break;							\
	case NPR_BIN_SUB:						\
		ROW2(T, T, d, a, sa, b, sb, len, (T)i_sub(x, y));	\
		break;							\
	case NPR_BIN_MUL:						\
		ROW2(T, T, d, a, sa, b, sb, len, (T)i_mul(x, y));	\
		break;							\
	case NPR_BIN_MAX:						\
		ROW2(T, T, d, a, sa, b, sb, len, x > y ? x : y);	\
		break;							\
	case NPR_BIN_MIN:						\
		ROW2(T, T, d, a, sa, b, sb, len, x < y ? x : y);	\
		break;							\
	default:							\
		ROW2(T, T, d, a, sa, b, sb, len,			\
		     (T)i_binop(op, x, y, pyfloor, &bad));		\
	}								\
	return bad ? -EDOM : 0;						\
}

DEFINE_INT_ROW(row_i32, int32_t)
DEFINE_INT_ROW(row_i64, int64_t)

/* Element access for the less common types. */
static int64_t load_i(const void *p, unsigned int t, int64_t i)
{
	switch (t) {
	case NPR_ELEM_I8: return ((const int8_t *)p)[i];
	case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		return ((const uint8_t *)p)[i];
	case NPR_ELEM_I16: return ((const int16_t *)p)[i];
	case NPR_ELEM_U16: return ((const uint16_t *)p)[i];
	case NPR_ELEM_I32: return ((const int32_t *)p)[i];
	case NPR_ELEM_U32: return ((const uint32_t *)p)[i];
	case NPR_ELEM_I64: return ((const int64_t *)p)[i];
	case NPR_ELEM_U64: return (int64_t)((const uint64_t *)p)[i];
	}
	return 0;
}

static void store_i(void *p, unsigned int t, int64_t i, int64_t v)
{
	switch (t) {
	case NPR_ELEM_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	case NPR_ELEM_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPR_ELEM_BOOLEAN: ((uint8_t *)p)[i] = v != 0; break;
	case NPR_ELEM_I16: ((int16_t *)p)[i] = (int16_t)v; break;
	case NPR_ELEM_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case NPR_ELEM_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case NPR_ELEM_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case NPR_ELEM_I64: ((int64_t *)p)[i] = v; break;
	case NPR_ELEM_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	}
}

/* Other integer types: computed in int64, stored with wrap-around. */
static int row_int_any(unsigned int t, int op, void *d, const void *a,
		       int64_t sa, const void *b, int64_t sb, int64_t len,
		       bool pyfloor)
{
	bool bad = false;
	int64_t i;

	for (i = 0; i < len; i++)
		store_i(d, t, i, i_binop(op, load_i(a, t, i * sa),
					 load_i(b, t, i * sb), pyfloor, &bad));
	return bad ? -EDOM : 0;
}

/* Comparisons: boolean out, typed compare in. */
#define DEFINE_CMP_ROW(name, T)						\
static int name(int op, void *d, const void *a, int64_t sa,		\
		const void *b, int64_t sb, int64_t len)			\
{									\
	switch (op) {							\
	case NPR_BIN_EQ:						\
		ROW2(uint8_t, T, d, a, sa, b, sb, len, x == y);		\
		break;							\
	case NPR_BIN_NE:						\
		ROW2(uint8_t, T, d, a, sa, b, sb, len, x != y);		\
		break;							\
	case NPR_BIN_LT:						\
		ROW2(uint8_t, T, d, a, sa, b, sb, len, x < y);		\
		break;							\
	case NPR_BIN_LE:						\
		ROW2(uint8_t, T, d, a, sa, b, sb, len, x <= y);		\
		break;							\
	case NPR_BIN_GT:						\
		ROW2(uint8_t, T, d, a, sa, b, sb, len, x > y);		\
		break;							\
	case NPR_BIN_GE:						\
		ROW2(uint8_t, T, d, a, sa, b, sb, len, x >= y);		\
		break;							\
	default:							\
		return -EINVAL;						\
	}								\
	return 0;							\
}

DEFINE_CMP_ROW(cmp_f32, float)
DEFINE_CMP_ROW(cmp_f64, double)
DEFINE_CMP_ROW(cmp_i8, int8_t)
DEFINE_CMP_ROW(cmp_u8, uint8_t)
DEFINE_CMP_ROW(cmp_i16, int16_t)
DEFINE_CMP_ROW(cmp_u16, uint16_t)
DEFINE_CMP_ROW(cmp_i32, int32_t)
DEFINE_CMP_ROW(cmp_u32, uint32_t)
DEFINE_CMP_ROW(cmp_i64, int64_t)
DEFINE_CMP_ROW(cmp_u64, uint64_t)

static int row_logic(int op, void *d, const void *a, int64_t sa,
		     const void *b, int64_t sb, int64_t len)
{
	switch (op) {
	case NPR_BIN_AND:
		ROW2(uint8_t, uint8_t, d, a, sa, b, sb, len,
		     (x != 0) & (y != 0));
		break;
	case NPR_BIN_OR:
		ROW2(uint8_t, uint8_t, d, a, sa, b, sb, len,
		     (x != 0) | (y != 0));
		break;
	case NPR_BIN_XOR:
		ROW2(uint8_t, uint8_t, d, a, sa, b, sb, len,
		     (x != 0) ^ (y != 0));
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int binary_row(const struct npr_eltwise_params *p, unsigned int t,
		      void *d, const void *a, int64_t sa, const void *b,
		      int64_t sb, int64_t len)
{
	if (p->op >= NPR_BIN_AND)
		return row_logic(p->op, d, a, sa, b, sb, len);
	if (p->op >= NPR_BIN_EQ) {
		switch (t) {
		case NPR_ELEM_F32: return cmp_f32(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_F64: return cmp_f64(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_I8: return cmp_i8(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
			return cmp_u8(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_I16: return cmp_i16(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_U16: return cmp_u16(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_I32: return cmp_i32(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_U32: return cmp_u32(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_I64: return cmp_i64(p->op, d, a, sa, b, sb, len);
		case NPR_ELEM_U64: return cmp_u64(p->op, d, a, sa, b, sb, len);
		}
		return -EOPNOTSUPP;
	}
	switch (t) {
	case NPR_ELEM_F32: return row_f32(p->op, d, a, sa, b, sb, len);
	case NPR_ELEM_F64: return row_f64(p->op, d, a, sa, b, sb, len);
	case NPR_ELEM_I32:
		return row_i32(p->op, d, a, sa, b, sb, len, p->pythondiv);
	case NPR_ELEM_I64:
		return row_i64(p->op, d, a, sa, b, sb, len, p->pythondiv);
	case NPR_ELEM_I8: case NPR_ELEM_U8: case NPR_ELEM_I16:
	case NPR_ELEM_U16: case NPR_ELEM_U32: case NPR_ELEM_U64:
		return row_int_any(t, p->op, d, a, sa, b, sb, len,
				   p->pythondiv);
	}
	return -EOPNOTSUPP;
}

/**
 * npr_ref_binary() - binary arithmetic, comparison and logical ops
 * @n: the node; n->params is a struct npr_eltwise_params.
 * @in: two tensors of one type, broadcastable to @out.
 * @out: the result, input type (boolean for comparisons and logic).
 *
 * Return: 0; -EDOM on integer division by zero; -EINVAL or -EOPNOTSUPP
 * for inconsistent tensors or an unsupported type.
 */
int npr_ref_binary(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	size_t ies = npr_elem_size(in[0].type), oes = npr_elem_size(out->type);
	const char *a = in[0].data, *b = in[1].data;
	char *d = out->data;
	struct bc_pos pos;
	struct bc bc;
	int64_t r;
	int err;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (in[0].type != in[1].type)
		return npr_node_err(n, -EINVAL, "input types differ");
	err = bc_init(&bc, n, out, in, 2);
	if (err)
		return err;
	if (!npr_shape_numel(&out->shape))
		return 0;
	bc_start(&pos);
	for (r = 0; r < bc.rows; r++) {
		err = binary_row(p, in[0].type, d + r * bc.len * oes,
				 a + pos.off[0] * ies, bc_step(&bc, 0),
				 b + pos.off[1] * ies, bc_step(&bc, 1),
				 bc.len);
		if (err == -EDOM)
			return npr_node_err(n, err, "integer division by zero");
		if (err)
			return npr_node_err(n, err,
					    "element type %s is not supported",
					    npr_elem_name(in[0].type));
		bc_next(&bc, &pos);
	}
	return 0;
}

/* Unary ops. */

/* double -> float without undefined behaviour outside the float range */
static float to_f32(double v)
{
	if (v > FLT_MAX)
		return INFINITY;
	if (v < -FLT_MAX)
		return -INFINITY;
	return (float)v;
}

static inline float clampf(float x, float lo, float hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static inline float softplus_f(float x)
{
	/* linear above 20, where log1p(exp(x)) - x < 1e-8 in f32 */
	return x >= 20.0f ? x : log1pf(expf(x));
}

/* GELU's erf form, vectorized (ref/kernels/vec.h) */
static void gelu_erf(const float *x, float *y, int64_t n)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		npr_gelu_erf_avx512(x, y, n);
		return;
	}
#endif
	npr_gelu_erf_generic(x, y, n);
}

#define UNARY_LOOP(EXPR)					\
	do {							\
		for (i = 0; i < count; i++) {			\
			const float v = x[i];			\
			y[i] = (EXPR);				\
		}						\
	} while (0)

/**
 * npr_ref_unary_f32() - apply an f32 activation
 * @p: parsed attributes; p->op is an enum npr_unop other than
 *     NPR_UN_NOT.
 * @beta: Swish beta (ignored by the other ops).
 * @x: input, @count elements.
 * @y: output, @count elements; may be @x.
 * @count: number of elements.
 *
 * Return: 0, or -EINVAL for an op that is not an f32 activation.
 * Context: reentrant.
 */
int npr_ref_unary_f32(const struct npr_eltwise_params *p, float beta,
		      const float *x, float *y, int64_t count)
{
	const float lo = to_f32(p->lo), hi = to_f32(p->hi);
	const float alpha = to_f32(p->alpha);
	int64_t i;

	switch (p->op) {
	case NPR_UN_RELU:
		UNARY_LOOP(v > 0 ? v : 0.0f);
		break;
	case NPR_UN_SIGMOID:
		UNARY_LOOP(1.0f / (1.0f + expf(-v)));
		break;
	case NPR_UN_EXP:
		UNARY_LOOP(expf(v));
		break;
	case NPR_UN_NEG:
		UNARY_LOOP(-v);
		break;
	case NPR_UN_ABS:
		UNARY_LOOP(fabsf(v));
		break;
	case NPR_UN_SQRT:
		UNARY_LOOP(sqrtf(v));
		break;
	case NPR_UN_TANH:
		UNARY_LOOP(tanhf(v));
		break;
	case NPR_UN_ERF:
		UNARY_LOOP(erff(v));
		break;
	case NPR_UN_FLOOR:
		UNARY_LOOP(floorf(v));
		break;
	case NPR_UN_CEIL:
		UNARY_LOOP(ceilf(v));
		break;
	case NPR_UN_LOG:
		UNARY_LOOP(logf(v));
		break;
	case NPR_UN_CLAMP:
		UNARY_LOOP(clampf(v, lo, hi));
		break;
	case NPR_UN_ELU:
		UNARY_LOOP(v >= 0 ? v : alpha * expm1f(v));
		break;
	case NPR_UN_HSWISH:
		UNARY_LOOP(v * clampf(v + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f));
		break;
	case NPR_UN_HSIGMOID:
		UNARY_LOOP(clampf(v + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f));
		break;
	case NPR_UN_MISH:
		UNARY_LOOP(v * tanhf(softplus_f(v)));
		break;
	case NPR_UN_SOFTPLUS:
		UNARY_LOOP(softplus_f(v));
		break;
	case NPR_UN_GELU_ERF:
		gelu_erf(x, y, count);
		break;
	case NPR_UN_GELU_TANH:
		UNARY_LOOP(0.5f * v *
			   (1.0f + tanhf(0.79788456080286536f *
					 (v + 0.044715f * v * v * v))));
		break;
	case NPR_UN_SWISH:
		UNARY_LOOP(v / (1.0f + expf(-beta * v)));
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static double softplus_d(double x)
{
	return x >= 40.0 ? x : log1p(exp(x));
}

/* The same functions in double, for f64 and integer inputs. */
static double unary_d(const struct npr_eltwise_params *p, double v,
		      double beta)
{
	switch (p->op) {
	case NPR_UN_RELU: return v > 0 ? v : 0;
	case NPR_UN_SIGMOID: return 1.0 / (1.0 + exp(-v));
	case NPR_UN_EXP: return exp(v);
	case NPR_UN_NEG: return -v;
	case NPR_UN_ABS: return fabs(v);
	case NPR_UN_SQRT: return sqrt(v);
	case NPR_UN_TANH: return tanh(v);
	case NPR_UN_ERF: return erf(v);
	case NPR_UN_FLOOR: return floor(v);
	case NPR_UN_CEIL: return ceil(v);
	case NPR_UN_LOG: return log(v);
	case NPR_UN_CLAMP: return v < p->lo ? p->lo : v > p->hi ? p->hi : v;
	case NPR_UN_ELU: return v >= 0 ? v : p->alpha * expm1(v);
	case NPR_UN_HSWISH:
		return v * fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
	case NPR_UN_HSIGMOID:
		return fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
	case NPR_UN_MISH: return v * tanh(softplus_d(v));
	case NPR_UN_SOFTPLUS: return softplus_d(v);
	case NPR_UN_GELU_ERF:
		return 0.5 * v * (1.0 + erf(v * 0.70710678118654752));
	case NPR_UN_GELU_TANH:
		return 0.5 * v * (1.0 + tanh(0.79788456080286536 *
					     (v + 0.044715 * v * v * v)));
	case NPR_UN_SWISH: return v / (1.0 + exp(-beta * v));
	}
	return 0;
}

/* double -> int64, rounded half away from zero, saturated, NaN -> 0. */
static int64_t round_sat(double v)
{
	if (v != v)
		return 0;
	v = round(v);
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

/* Integer unary: exact where the op is exact, else rounded result. */
static int64_t unary_i(const struct npr_eltwise_params *p, int64_t v)
{
	switch (p->op) {
	case NPR_UN_RELU:
		return v > 0 ? v : 0;
	case NPR_UN_NEG:
		return i_sub(0, v);
	case NPR_UN_ABS:
		return v < 0 ? i_sub(0, v) : v;
	case NPR_UN_FLOOR: case NPR_UN_CEIL:
		return v;
	case NPR_UN_CLAMP: {
		/* the spec: ceil(min) and floor(max) in the integer type */
		int64_t lo = round_sat(ceil(p->lo));
		int64_t hi = round_sat(floor(p->hi));

		return v < lo ? lo : v > hi ? hi : v;
	}
	}
	return round_sat(unary_d(p, (double)v, 1.0));
}

static double load_float(const struct npr_tensor *t, int64_t i)
{
	if (t->type == NPR_ELEM_F64)
		return ((const double *)t->data)[i];
	if (t->type == NPR_ELEM_F32)
		return ((const float *)t->data)[i];
	return (double)load_i(t->data, t->type, i);
}

/*
 * A large f32 activation split over the threads in runs of elements:
 * each element is computed alone, so the result is the same.
 */
struct unary_job {
	const struct npr_eltwise_params *p;
	float beta;
	const float *x;
	float *y;
	int64_t count, parts;
};

static void unary_part(void *arg, int i, int tid)
{
	const struct unary_job *j = arg;
	int64_t a = j->count * i / j->parts, b = j->count * (i + 1) / j->parts;

	npr_ref_unary_f32(j->p, j->beta, j->x + a, j->y + a, b - a);
}

static int unary_f32_par(const struct npr_eltwise_params *p, float beta,
			 const float *x, float *y, int64_t count)
{
	struct unary_job j = {
		.p = p, .beta = beta, .x = x, .y = y, .count = count,
	};

	j.parts = count / 16384;
	if (j.parts > 4 * npr_par_threads())
		j.parts = 4 * npr_par_threads();
	if (j.parts < 2)
		return npr_ref_unary_f32(p, beta, x, y, count);
	/* the op's own check, once, before the threads */
	if (npr_ref_unary_f32(p, beta, x, y, 0))
		return -EINVAL;
	npr_parallel_for((int)j.parts, unary_part, &j);
	return 0;
}

/**
 * npr_ref_unary() - unary activations and math functions
 * @n: the node; n->params is a struct npr_eltwise_params.
 * @in: the data, and for Swish an optional scalar beta.
 * @out: the result, same type and shape as the data.
 *
 * Return: 0, or -EINVAL / -EOPNOTSUPP for inconsistent tensors or an
 * unsupported type.
 */
int npr_ref_unary(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	int64_t i, count = npr_shape_numel(&in[0].shape);
	unsigned int t = in[0].type;
	double beta = 1.0;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	if (out->type != t || npr_shape_numel(&out->shape) != count ||
	    !tensor_ok(&in[0], count) || !tensor_ok(out, count))
		return npr_node_err(n, -EINVAL, "inconsistent tensors");
	if (n->nin > 1) {
		if (!tensor_ok(&in[1], 1) || npr_shape_numel(&in[1].shape) < 1)
			return npr_node_err(n, -EINVAL, "beta is empty");
		beta = load_float(&in[1], 0);
	}
	if (p->op == NPR_UN_NOT) {
		const uint8_t *x = in[0].data;
		uint8_t *y = out->data;

		if (t != NPR_ELEM_BOOLEAN)
			goto unsupported;
		for (i = 0; i < count; i++)
			y[i] = !x[i];
		return 0;
	}
	if (t == NPR_ELEM_F32) {
		if (unary_f32_par(p, to_f32(beta), in[0].data, out->data,
				  count))
			goto unsupported;
		return 0;
	}
	if (t == NPR_ELEM_F64) {
		const double *x = in[0].data;
		double *y = out->data;

		for (i = 0; i < count; i++)
			y[i] = unary_d(p, x[i], beta);
		return 0;
	}
	if (t != NPR_ELEM_BOOLEAN && npr_elem_size(t)) {
		for (i = 0; i < count; i++)
			store_i(out->data, t, i,
				unary_i(p, load_i(in[0].data, t, i)));
		return 0;
	}
unsupported:
	return npr_node_err(n, -EOPNOTSUPP,
			    "element type %s is not supported",
			    npr_elem_name(t));
}

/**
 * npr_ref_prelu() - PReLU-1 on f32
 * @n: the node.
 * @in: data and slope.  A 1-D slope as long as dim 1 of the data applies
 *      per channel; any other slope broadcasts with numpy rules.
 * @out: the result, shape of the data.
 *
 * Return: 0, or -EINVAL / -EOPNOTSUPP for inconsistent tensors.
 */
int npr_ref_prelu(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_shape *xs = &in[0].shape, *ss = &in[1].shape;
	const float *xd = in[0].data, *sd = in[1].data;
	int64_t count = npr_shape_numel(xs);
	float *yd = out->data;
	struct bc_pos pos;
	struct bc bc;
	int64_t r;
	int err;

	if (in[0].type != NPR_ELEM_F32 || in[1].type != NPR_ELEM_F32 ||
	    out->type != NPR_ELEM_F32)
		return npr_node_err(n, -EOPNOTSUPP, "PReLU computes in f32");
	if (ss->rank == 1 && xs->rank >= 2 && ss->d[0] == xs->d[1] &&
	    ss->d[0] > 1) {
		int64_t inner = 1, c, C = xs->d[1], j, o;
		int k;

		if (!tensor_ok(&in[0], count) || !tensor_ok(&in[1], C) ||
		    !tensor_ok(out, count) ||
		    npr_shape_numel(&out->shape) != count)
			return npr_node_err(n, -EINVAL, "inconsistent tensors");
		for (k = 2; k < xs->rank; k++)
			inner *= xs->d[k];
		for (o = 0; o < count; o += C * inner) {
			for (c = 0; c < C; c++) {
				const float *xp = xd + o + c * inner;
				float *yp = yd + o + c * inner;
				const float sc = sd[c];

				for (j = 0; j < inner; j++)
					yp[j] = xp[j] < 0 ? xp[j] * sc : xp[j];
			}
		}
		return 0;
	}
	err = bc_init(&bc, n, out, in, 2);
	if (err)
		return err;
	if (!count)
		return 0;
	bc_start(&pos);
	for (r = 0; r < bc.rows; r++) {
		/* x: data, y: slope */
		ROW2(float, float, yd + r * bc.len, xd + pos.off[0],
		     bc_step(&bc, 0), sd + pos.off[1], bc_step(&bc, 1),
		     bc.len, x < 0 ? x * y : x);
		bc_next(&bc, &pos);
	}
	return 0;
}

/* Convert-1. */

/* Round an f32 to the nearest bf16 (ties to even), kept as f32. */
static inline float bf16_round(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		u |= 0x00400000;	/* quiet NaN */
	else
		u += 0x7fff + ((u >> 16) & 1);
	u &= 0xffff0000;
	memcpy(&f, &u, 4);
	return f;
}

static inline float f16_round(float f)
{
	return npr_f16_to_f32(npr_f32_to_f16(f));
}

/* Element @i of a sub-byte tensor (u1 MSB first, u4/i4 low nibble first). */
static int64_t load_subbyte(const uint8_t *p, unsigned int t, int64_t i)
{
	unsigned int v;

	if (t == NPR_ELEM_U1)
		return (p[i >> 3] >> (7 - (i & 7))) & 1;
	v = (p[i >> 1] >> ((i & 1) * 4)) & 0xf;
	if (t == NPR_ELEM_I4 && (v & 8))
		return (int64_t)v - 16;
	return v;
}

/**
 * npr_ref_convert() - Convert-1
 * @n: the node; n->params->dst_type is the requested type.
 * @in: any byte-addressable type, or u1/u4/i4.
 * @out: the destination type; f32 rounded through the type when f16 or
 *       bf16 was requested.
 *
 * Float to integer truncates toward zero and saturates (NaN gives 0);
 * integer to integer wraps; anything to boolean is "!= 0".
 *
 * Return: 0, or -EINVAL / -EOPNOTSUPP for inconsistent tensors or an
 * unsupported pair of types.
 */
int npr_ref_convert(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	int64_t i, count = npr_shape_numel(&in[0].shape);
	unsigned int st = in[0].type, dt = out->type;
	bool half;
	float *y;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	half = p->dst_type == NPR_ELEM_F16 || p->dst_type == NPR_ELEM_BF16;
	if (count < 0 || npr_shape_numel(&out->shape) != count ||
	    !tensor_ok(out, count) || (half && dt != NPR_ELEM_F32))
		return npr_node_err(n, -EINVAL, "inconsistent tensors");
	if (st == NPR_ELEM_U1 || st == NPR_ELEM_U4 || st == NPR_ELEM_I4) {
		if (count && (!in[0].data ||
			      in[0].nbytes < npr_tensor_bytes(st, count)))
			return npr_node_err(n, -EINVAL, "input buffer too small");
		for (i = 0; i < count; i++) {
			int64_t v = load_subbyte(in[0].data, st, i);

			if (dt == NPR_ELEM_F32)
				((float *)out->data)[i] = (float)v;
			else if (dt == NPR_ELEM_F64)
				((double *)out->data)[i] = (double)v;
			else
				store_i(out->data, dt, i, v);
		}
		return 0;	/* small integers: exact in f16 and bf16 */
	}
	if (!tensor_ok(&in[0], count))
		return npr_node_err(n, -EINVAL, "input buffer too small");
	y = out->data;
	if (dt == NPR_ELEM_F32 && st == NPR_ELEM_I8) {
		const int8_t *x = in[0].data;

		for (i = 0; i < count; i++)
			y[i] = x[i];
	} else if (dt == NPR_ELEM_F32 && st == NPR_ELEM_U8) {
		const uint8_t *x = in[0].data;

		for (i = 0; i < count; i++)
			y[i] = x[i];
	} else if (dt == NPR_ELEM_F32 && st == NPR_ELEM_F32 && half) {
		const float *x = in[0].data;

		if (p->dst_type == NPR_ELEM_F16)
			for (i = 0; i < count; i++)
				y[i] = f16_round(x[i]);
		else
			for (i = 0; i < count; i++)
				y[i] = bf16_round(x[i]);
		return 0;
	} else if (npr_convert(out->data, dt, in[0].data, st, count)) {
		return npr_node_err(n, -EOPNOTSUPP, "cannot convert %s to %s",
				    npr_elem_name(st), npr_elem_name(dt));
	}
	if (p->dst_type == NPR_ELEM_F16)
		for (i = 0; i < count; i++)
			y[i] = f16_round(y[i]);
	else if (p->dst_type == NPR_ELEM_BF16)
		for (i = 0; i < count; i++)
			y[i] = bf16_round(y[i]);
	return 0;
}

/* FakeQuantize-1. */

#define FQ_ROW npr_fq_row_generic
#include "fq_row.h"
#undef FQ_ROW

/* Rows of one part of a FakeQuantize with one set of limits per row. */
struct fq_job {
	const struct bc *bc;
	const float *x, *il, *ih, *ol, *oh;
	float *y, lm1;
	bool small;
	int64_t rows_per;
	void (*row)(const float *x, float *y, int64_t len, float il, float ih,
		    float ol, float oh, float lm1, bool small);
};

static void fq_part(void *arg, int part, int tid)
{
	const struct fq_job *j = arg;
	const struct bc *bc = j->bc;
	int64_t r = part * j->rows_per, end = r + j->rows_per;
	struct bc_pos pos;

	(void)tid;
	if (end > bc->rows)
		end = bc->rows;
	bc_seek(bc, r, &pos);
	for (; r < end; r++) {
		j->row(j->x + pos.off[0], j->y + r * bc->len, bc->len,
		       j->il[pos.off[1]], j->ih[pos.off[2]], j->ol[pos.off[3]],
		       j->oh[pos.off[4]], j->lm1, j->small);
		bc_next(bc, &pos);
	}
}

/*
 * The common case, per-tensor or per-channel limits along dense rows: the
 * row kernel (vectorised where the CPU has AVX-512), the rows split over
 * the threads in parts of at least 16K elements.
 */
static void fq_rows(const struct bc *bc, const float *x, const float *il,
		    const float *ih, const float *ol, const float *oh,
		    float *y, float lm1, bool small)
{
	struct fq_job j = {
		.bc = bc, .x = x, .il = il, .ih = ih, .ol = ol, .oh = oh,
		.y = y, .lm1 = lm1, .small = small,
		.row = npr_fq_row_generic,
	};
	int64_t parts = npr_par_threads() * 4, min_rows;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		j.row = npr_fq_row_avx512;
#endif
	min_rows = (16384 + bc->len - 1) / bc->len;
	if (parts > bc->rows / min_rows)
		parts = bc->rows / min_rows;
	if (parts < 1)
		parts = 1;
	j.rows_per = (bc->rows + parts - 1) / parts;
	parts = (bc->rows + j.rows_per - 1) / j.rows_per;
	if (parts == 1)
		fq_part(&j, 0, 0);
	else
		npr_parallel_for((int)parts, fq_part, &j);
}

/**
 * npr_ref_fake_quantize() - FakeQuantize-1 on f32
 * @n: the node; n->params->levels is the number of levels.
 * @in: X, input_low, input_high, output_low, output_high, broadcastable
 *      to @out.
 * @out: the result.
 *
 * Computes, per element, the specification's formula: output_low when
 * x <= min(input_low, input_high), output_high when x > max(...), else
 * round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol)
 * + ol, rounding ties to even.
 *
 * Return: 0, or -EINVAL / -EOPNOTSUPP for inconsistent tensors.
 */
int npr_ref_fake_quantize(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	const float *x = in[0].data, *il = in[1].data, *ih = in[2].data;
	const float *ol = in[3].data, *oh = in[4].data;
	float *y = out->data, lm1;
	struct bc_pos pos;
	struct bc bc;
	bool small, scalar;
	int64_t r, j;
	int k, err;

	if (!p)
		return npr_node_err(n, -EINVAL, "attributes not parsed");
	for (k = 0; k < 5; k++)
		if (in[k].type != NPR_ELEM_F32)
			return npr_node_err(n, -EOPNOTSUPP,
					    "FakeQuantize computes in f32");
	if (out->type != NPR_ELEM_F32)
		return npr_node_err(n, -EOPNOTSUPP,
				    "FakeQuantize computes in f32");
	err = bc_init(&bc, n, out, in, 5);
	if (err)
		return err;
	if (!npr_shape_numel(&out->shape))
		return 0;
	lm1 = (float)(p->levels - 1);
	small = lm1 < 4194304.0f;
	scalar = bc_step(&bc, 0) == 1;
	for (k = 1; k < 5; k++)
		if (bc_step(&bc, k))
			scalar = false;
	if (scalar) {
		fq_rows(&bc, x, il, ih, ol, oh, y, lm1, small);
		return 0;
	}
	bc_start(&pos);
	for (r = 0; r < bc.rows; r++) {
		const float *xr = x + pos.off[0];
		float *yr = y + r * bc.len;
		int64_t s[5];

		for (k = 0; k < 5; k++)
			s[k] = bc_step(&bc, k);
		/* limits that vary along the row: one element at a time */
		for (j = 0; j < bc.len; j++)
			npr_fq_row_generic(xr + j * s[0], yr + j, 1,
					   il[pos.off[1] + j * s[1]],
					   ih[pos.off[2] + j * s[2]],
					   ol[pos.off[3] + j * s[3]],
					   oh[pos.off[4] + j * s[4]],
					   lm1, small);
		bc_next(&bc, &pos);
	}
	return 0;
}

/* Select-1. */

#define SELECT_ROW(T)							\
	do {								\
		const T *a_ = (const T *)(a + pos.off[1] * es);		\
		const T *b_ = (const T *)(b + pos.off[2] * es);		\
		T *d_ = (T *)(d + r * bc.len * es);			\
		for (j = 0; j < bc.len; j++)				\
			d_[j] = c_[j * sc] ? a_[j * sa] : b_[j * sb];	\
	} while (0)

/**
 * npr_ref_select() - Select-1
 * @n: the node.
 * @in: boolean condition, then and else tensors of one type, all
 *      broadcastable to @out.
 * @out: the result, type of then/else.
 *
 * Return: 0, or -EINVAL for inconsistent tensors.
 */
int npr_ref_select(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	size_t es = npr_elem_size(out->type);
	const char *a = in[1].data, *b = in[2].data;
	char *d = out->data;
	struct bc_pos pos;
	struct bc bc;
	int64_t r, j;
	int err;

	if (in[0].type != NPR_ELEM_BOOLEAN || in[1].type != out->type ||
	    in[2].type != out->type || !es)
		return npr_node_err(n, -EINVAL, "inconsistent tensor types");
	err = bc_init(&bc, n, out, in, 3);
	if (err)
		return err;
	if (!npr_shape_numel(&out->shape))
		return 0;
	bc_start(&pos);
	for (r = 0; r < bc.rows; r++) {
		const uint8_t *c_ = (const uint8_t *)in[0].data + pos.off[0];
		int64_t sc = bc_step(&bc, 0), sa = bc_step(&bc, 1);
		int64_t sb = bc_step(&bc, 2);

		switch (es) {
		case 1: SELECT_ROW(uint8_t); break;
		case 2: SELECT_ROW(uint16_t); break;
		case 4: SELECT_ROW(uint32_t); break;
		case 8: SELECT_ROW(uint64_t); break;
		default:
			for (j = 0; j < bc.len; j++)
				memcpy(d + (r * bc.len + j) * es,
				       c_[j * sc] ?
				       a + (pos.off[1] + j * sa) * es :
				       b + (pos.off[2] + j * sb) * es, es);
		}
		bc_next(&bc, &pos);
	}
	return 0;
}

/* The op definitions of lib/ops/eltwise.c these kernels evaluate. */
const struct npr_kernel npr_kernels_eltwise[] = {
	{ "Add", 1, 99, npr_ref_binary },
	{ "Subtract", 1, 99, npr_ref_binary },
	{ "Multiply", 1, 99, npr_ref_binary },
	{ "Divide", 1, 99, npr_ref_binary },
	{ "Maximum", 1, 99, npr_ref_binary },
	{ "Minimum", 1, 99, npr_ref_binary },
	{ "Power", 1, 99, npr_ref_binary },
	{ "SquaredDifference", 1, 99, npr_ref_binary },
	{ "FloorMod", 1, 99, npr_ref_binary },
	{ "Mod", 1, 99, npr_ref_binary },
	{ "Equal", 1, 99, npr_ref_binary },
	{ "NotEqual", 1, 99, npr_ref_binary },
	{ "Less", 1, 99, npr_ref_binary },
	{ "LessEqual", 1, 99, npr_ref_binary },
	{ "Greater", 1, 99, npr_ref_binary },
	{ "GreaterEqual", 1, 99, npr_ref_binary },
	{ "LogicalAnd", 1, 99, npr_ref_binary },
	{ "LogicalOr", 1, 99, npr_ref_binary },
	{ "LogicalXor", 1, 99, npr_ref_binary },
	{ "ReLU", 1, 99, npr_ref_unary },
	{ "Relu", 1, 99, npr_ref_unary },
	{ "Sigmoid", 1, 99, npr_ref_unary },
	{ "Exp", 1, 99, npr_ref_unary },
	{ "Negative", 1, 99, npr_ref_unary },
	{ "Abs", 1, 99, npr_ref_unary },
	{ "Sqrt", 1, 99, npr_ref_unary },
	{ "Tanh", 1, 99, npr_ref_unary },
	{ "Erf", 1, 99, npr_ref_unary },
	{ "Floor", 1, 99, npr_ref_unary },
	{ "Ceiling", 1, 99, npr_ref_unary },
	{ "Log", 1, 99, npr_ref_unary },
	{ "Clamp", 1, 99, npr_ref_unary },
	{ "Elu", 1, 99, npr_ref_unary },
	{ "LogicalNot", 1, 99, npr_ref_unary },
	{ "Gelu", 2, 99, npr_ref_unary },
	{ "HSwish", 4, 99, npr_ref_unary },
	{ "Mish", 4, 99, npr_ref_unary },
	{ "SoftPlus", 4, 99, npr_ref_unary },
	{ "Swish", 4, 99, npr_ref_unary },
	{ "HSigmoid", 5, 99, npr_ref_unary },
	{ "PReLU", 1, 99, npr_ref_prelu },
	{ "Convert", 1, 99, npr_ref_convert },
	{ "ConvertLike", 1, 99, npr_ref_convert },
	{ "FakeQuantize", 1, 99, npr_ref_fake_quantize },
	{ "Select", 1, 99, npr_ref_select },
	{ NULL },
};
