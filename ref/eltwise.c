// SPDX-License-Identifier: MIT
/*
 * Reference kernels for elementwise ops.
 *
 * Broadcasting walks the output with one row (the last dimension) at a
 * time; each input advances by its own stride along that row, 0 where it
 * is broadcast.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/eltwise.h"

void npr_bcast_strides(const struct npr_shape *s, const struct npr_shape *o,
		       int64_t *strides)
{
	int64_t st = 1;
	int i;

	for (i = o->rank - 1; i >= 0; i--) {
		int k = i - (o->rank - s->rank);

		if (k < 0) {
			strides[i] = 0;
			continue;
		}
		strides[i] = s->d[k] == 1 ? 0 : st;
		st *= s->d[k];
	}
}

/*
 * Iterate the output in rows.  For each row, @fn gets the row length and
 * the element offsets of up to three inputs and their strides along the
 * row.
 */
struct bc_iter {
	int rank;
	int64_t dims[NPR_MAX_RANK];
	int64_t st[3][NPR_MAX_RANK];
	int nin;
};

static void bc_init(struct bc_iter *it, const struct npr_shape *o,
		    const struct npr_tensor *const *ins, int nin)
{
	int i;

	it->rank = o->rank;
	it->nin = nin;
	for (i = 0; i < o->rank; i++)
		it->dims[i] = o->d[i];
	for (i = 0; i < nin; i++)
		npr_bcast_strides(&ins[i]->shape, o, it->st[i]);
}

#define BC_FOR_ROWS(it, rowlen, off, ...)				\
	do {								\
		int64_t _idx[NPR_MAX_RANK] = { 0 };			\
		int64_t _rows = 1, _r;					\
		int _d;							\
		rowlen = (it)->rank ? (it)->dims[(it)->rank - 1] : 1;	\
		for (_d = 0; _d < (it)->rank - 1; _d++)			\
			_rows *= (it)->dims[_d];			\
		if (!rowlen)						\
			_rows = 0;					\
		for (_r = 0; _r < _rows; _r++) {			\
			int _k;						\
			for (_k = 0; _k < (it)->nin; _k++) {		\
				off[_k] = 0;				\
				for (_d = 0; _d < (it)->rank - 1; _d++)	\
					off[_k] += _idx[_d] *		\
						   (it)->st[_k][_d];	\
			}						\
			__VA_ARGS__;					\
			for (_d = (it)->rank - 2; _d >= 0; _d--) {	\
				if (++_idx[_d] < (it)->dims[_d])	\
					break;				\
				_idx[_d] = 0;				\
			}						\
		}							\
	} while (0)

static inline float f32_bin(int op, float a, float b)
{
	switch (op) {
	case NPR_BIN_ADD: return a + b;
	case NPR_BIN_SUB: return a - b;
	case NPR_BIN_MUL: return a * b;
	case NPR_BIN_DIV: return a / b;
	case NPR_BIN_MAX: return a > b ? a : b;
	case NPR_BIN_MIN: return a < b ? a : b;
	case NPR_BIN_POW: return powf(a, b);
	case NPR_BIN_SQDIFF: return (a - b) * (a - b);
	case NPR_BIN_FLOORMOD: {
		float r = fmodf(a, b);

		return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
	}
	case NPR_BIN_MOD: return fmodf(a, b);
	}
	return 0;
}

static inline int64_t i64_bin(int op, int64_t a, int64_t b, bool pydiv)
{
	switch (op) {
	case NPR_BIN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
	case NPR_BIN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
	case NPR_BIN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
	case NPR_BIN_DIV: {
		int64_t q;

		if (!b)
			return 0;
		if (a == INT64_MIN && b == -1)
			return INT64_MIN;
		q = a / b;
		if (pydiv && (a % b) && ((a < 0) != (b < 0)))
			q--;
		return q;
	}
	case NPR_BIN_MAX: return a > b ? a : b;
	case NPR_BIN_MIN: return a < b ? a : b;
	case NPR_BIN_POW: {
		int64_t r = 1;

		if (b < 0)
			return a == 1 ? 1 : 0;
		while (b-- > 0)
			r *= a;
		return r;
	}
	case NPR_BIN_SQDIFF: return (a - b) * (a - b);
	case NPR_BIN_FLOORMOD: {
		int64_t r;

		if (!b)
			return 0;
		r = a % b;
		return (r && ((r < 0) != (b < 0))) ? r + b : r;
	}
	case NPR_BIN_MOD: return b ? a % b : 0;
	}
	return 0;
}

static inline bool cmp_bin(int op, double a, double b)
{
	switch (op) {
	case NPR_BIN_EQ: return a == b;
	case NPR_BIN_NE: return a != b;
	case NPR_BIN_LT: return a < b;
	case NPR_BIN_LE: return a <= b;
	case NPR_BIN_GT: return a > b;
	case NPR_BIN_GE: return a >= b;
	case NPR_BIN_AND: return a != 0 && b != 0;
	case NPR_BIN_OR: return a != 0 || b != 0;
	case NPR_BIN_XOR: return (a != 0) != (b != 0);
	}
	return false;
}

static double load(const void *p, unsigned int t, int64_t i)
{
	switch (t) {
	case NPR_ELEM_F32: return ((const float *)p)[i];
	case NPR_ELEM_I32: return ((const int32_t *)p)[i];
	case NPR_ELEM_I64: return (double)((const int64_t *)p)[i];
	case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		return ((const uint8_t *)p)[i];
	case NPR_ELEM_I8: return ((const int8_t *)p)[i];
	case NPR_ELEM_F64: return ((const double *)p)[i];
	}
	return 0;
}

static int64_t loadi(const void *p, unsigned int t, int64_t i)
{
	switch (t) {
	case NPR_ELEM_I32: return ((const int32_t *)p)[i];
	case NPR_ELEM_I64: return ((const int64_t *)p)[i];
	case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		return ((const uint8_t *)p)[i];
	case NPR_ELEM_I8: return ((const int8_t *)p)[i];
	}
	return (int64_t)load(p, t, i);
}

static void storei(void *p, unsigned int t, int64_t i, int64_t v)
{
	switch (t) {
	case NPR_ELEM_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case NPR_ELEM_I64: ((int64_t *)p)[i] = v; break;
	case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPR_ELEM_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	}
}

int npr_ref_binary(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	const struct npr_tensor *ins[2] = { &in[0], &in[1] };
	unsigned int t = in[0].type;
	struct bc_iter it;
	int64_t rowlen, off[3], k, o = 0;

	bc_init(&it, &out->shape, ins, 2);
	if (p->op >= NPR_BIN_EQ) {
		uint8_t *d = out->data;

		BC_FOR_ROWS(&it, rowlen, off, {
			int64_t sa = it.rank ? it.st[0][it.rank - 1] : 0;
			int64_t sb = it.rank ? it.st[1][it.rank - 1] : 0;

			for (k = 0; k < rowlen; k++)
				d[o++] = cmp_bin(p->op,
						 load(in[0].data, t, off[0] + k * sa),
						 load(in[1].data, t, off[1] + k * sb));
		});
		return 0;
	}
	if (t == NPR_ELEM_F32) {
		const float *a = in[0].data, *b = in[1].data;
		float *d = out->data;

		BC_FOR_ROWS(&it, rowlen, off, {
			int64_t sa = it.rank ? it.st[0][it.rank - 1] : 0;
			int64_t sb = it.rank ? it.st[1][it.rank - 1] : 0;
			const float *pa = a + off[0], *pb = b + off[1];

			if (sa == 1 && sb == 1) {
				switch (p->op) {
				case NPR_BIN_ADD:
					for (k = 0; k < rowlen; k++)
						d[o + k] = pa[k] + pb[k];
					break;
				case NPR_BIN_MUL:
					for (k = 0; k < rowlen; k++)
						d[o + k] = pa[k] * pb[k];
					break;
				default:
					for (k = 0; k < rowlen; k++)
						d[o + k] = f32_bin(p->op, pa[k], pb[k]);
				}
			} else if (sa == 1 && sb == 0) {
				float bv = pb[0];

				switch (p->op) {
				case NPR_BIN_ADD:
					for (k = 0; k < rowlen; k++)
						d[o + k] = pa[k] + bv;
					break;
				case NPR_BIN_MUL:
					for (k = 0; k < rowlen; k++)
						d[o + k] = pa[k] * bv;
					break;
				default:
					for (k = 0; k < rowlen; k++)
						d[o + k] = f32_bin(p->op, pa[k], bv);
				}
			} else {
				for (k = 0; k < rowlen; k++)
					d[o + k] = f32_bin(p->op, pa[k * sa],
							   pb[k * sb]);
			}
			o += rowlen;
		});
		return 0;
	}
	if (t == NPR_ELEM_F64) {
		const double *a = in[0].data, *b = in[1].data;
		double *d = out->data;

		BC_FOR_ROWS(&it, rowlen, off, {
			int64_t sa = it.rank ? it.st[0][it.rank - 1] : 0;
			int64_t sb = it.rank ? it.st[1][it.rank - 1] : 0;

			for (k = 0; k < rowlen; k++)
				d[o++] = f32_bin(p->op, a[off[0] + k * sa],
						 b[off[1] + k * sb]);
		});
		return 0;
	}
	if (t == NPR_ELEM_I32 || t == NPR_ELEM_I64 || t == NPR_ELEM_U8 ||
	    t == NPR_ELEM_I8 || t == NPR_ELEM_BOOLEAN) {
		BC_FOR_ROWS(&it, rowlen, off, {
			int64_t sa = it.rank ? it.st[0][it.rank - 1] : 0;
			int64_t sb = it.rank ? it.st[1][it.rank - 1] : 0;

			for (k = 0; k < rowlen; k++)
				storei(out->data, t, o++,
				       i64_bin(p->op,
					       loadi(in[0].data, t, off[0] + k * sa),
					       loadi(in[1].data, t, off[1] + k * sb),
					       p->pythondiv));
		});
		return 0;
	}
	return npr_node_err(n, -EOPNOTSUPP, "element type %s not supported",
			    npr_elem_name(t));
}

static inline float f32_un(int op, float x, const struct npr_eltwise_params *p,
			   float beta)
{
	switch (op) {
	case NPR_UN_RELU: return x > 0 ? x : 0;
	case NPR_UN_SIGMOID: return 1.0f / (1.0f + expf(-x));
	case NPR_UN_EXP: return expf(x);
	case NPR_UN_NEG: return -x;
	case NPR_UN_ABS: return fabsf(x);
	case NPR_UN_SQRT: return sqrtf(x);
	case NPR_UN_TANH: return tanhf(x);
	case NPR_UN_ERF: return erff(x);
	case NPR_UN_FLOOR: return floorf(x);
	case NPR_UN_CEIL: return ceilf(x);
	case NPR_UN_LOG: return logf(x);
	case NPR_UN_CLAMP:
		return x < p->a ? (float)p->a : x > p->b ? (float)p->b : x;
	case NPR_UN_ELU: return x > 0 ? x : (float)p->a * (expf(x) - 1);
	case NPR_UN_HSWISH: {
		float r = x + 3 < 0 ? 0 : x + 3 > 6 ? 6 : x + 3;

		return x * r / 6;
	}
	case NPR_UN_HSIGMOID: {
		float r = x + 3 < 0 ? 0 : x + 3 > 6 ? 6 : x + 3;

		return r / 6;
	}
	case NPR_UN_SOFTPLUS:
		return x > 20 ? x : log1pf(expf(x));
	case NPR_UN_MISH:
		return x * tanhf(x > 20 ? x : log1pf(expf(x)));
	case NPR_UN_GELU_ERF:
		return 0.5f * x * (1 + erff(x * 0.70710678118654752f));
	case NPR_UN_GELU_TANH:
		return 0.5f * x * (1 + tanhf(0.79788456080286536f *
					      (x + 0.044715f * x * x * x)));
	case NPR_UN_SWISH: return x / (1.0f + expf(-beta * x));
	case NPR_UN_NOT: return x == 0;
	}
	return 0;
}

int npr_ref_unary(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	int64_t i, cnt = npr_shape_numel(&out->shape);
	float beta = 1.0f;

	if (n->nin > 1)
		beta = (float)load(in[1].data, in[1].type, 0);
	if (in[0].type == NPR_ELEM_F32) {
		const float *x = in[0].data;
		float *y = out->data;

		if (p->op == NPR_UN_RELU) {
			for (i = 0; i < cnt; i++)
				y[i] = x[i] > 0 ? x[i] : 0;
			return 0;
		}
		for (i = 0; i < cnt; i++)
			y[i] = f32_un(p->op, x[i], p, beta);
		return 0;
	}
	if (in[0].type == NPR_ELEM_BOOLEAN && p->op == NPR_UN_NOT) {
		for (i = 0; i < cnt; i++)
			((uint8_t *)out->data)[i] = !((uint8_t *)in[0].data)[i];
		return 0;
	}
	if (in[0].type == NPR_ELEM_I32 || in[0].type == NPR_ELEM_I64) {
		for (i = 0; i < cnt; i++) {
			int64_t v = loadi(in[0].data, in[0].type, i);

			switch (p->op) {
			case NPR_UN_RELU: v = v > 0 ? v : 0; break;
			case NPR_UN_NEG: v = -v; break;
			case NPR_UN_ABS: v = v < 0 ? -v : v; break;
			case NPR_UN_CLAMP:
				v = v < p->a ? (int64_t)ceil(p->a) :
				    v > p->b ? (int64_t)floor(p->b) : v;
				break;
			case NPR_UN_FLOOR: case NPR_UN_CEIL: break;
			default:
				v = (int64_t)f32_un(p->op, (float)v, p, beta);
			}
			storei(out->data, in[0].type, i, v);
		}
		return 0;
	}
	return npr_node_err(n, -EOPNOTSUPP, "element type %s not supported",
			    npr_elem_name(in[0].type));
}

int npr_ref_prelu(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const float *x = in[0].data, *s = in[1].data;
	float *y = out->data;
	const struct npr_shape *xs = &in[0].shape;
	int64_t cnt = npr_shape_numel(xs), i;

	if (in[0].type != NPR_ELEM_F32)
		return npr_node_err(n, -EOPNOTSUPP, "PReLU needs f32");
	if (in[1].shape.rank == 1 && xs->rank >= 2 &&
	    in[1].shape.d[0] == xs->d[1]) {
		int64_t inner = 1, c, C = xs->d[1], j;
		int d;

		for (d = 2; d < xs->rank; d++)
			inner *= xs->d[d];
		for (i = 0; i < cnt; i += C * inner)
			for (c = 0; c < C; c++)
				for (j = 0; j < inner; j++) {
					float v = x[i + c * inner + j];

					y[i + c * inner + j] = v < 0 ? v * s[c] : v;
				}
		return 0;
	}
	{
		const struct npr_tensor *ins[2] = { &in[0], &in[1] };
		struct bc_iter it;
		int64_t rowlen, off[3], k, o = 0;

		bc_init(&it, &out->shape, ins, 2);
		BC_FOR_ROWS(&it, rowlen, off, {
			int64_t sa = it.rank ? it.st[0][it.rank - 1] : 0;
			int64_t sb = it.rank ? it.st[1][it.rank - 1] : 0;

			for (k = 0; k < rowlen; k++) {
				float v = x[off[0] + k * sa];

				y[o++] = v < 0 ? v * s[off[1] + k * sb] : v;
			}
		});
	}
	return 0;
}

int npr_ref_convert(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	int64_t cnt = npr_shape_numel(&out->shape), i;
	int err;

	if (out->type == NPR_ELEM_F32 && (p->dst_type == NPR_ELEM_F16 ||
					  p->dst_type == NPR_ELEM_BF16)) {
		float *y = out->data;

		err = npr_convert(y, NPR_ELEM_F32, in[0].data, in[0].type, cnt);
		if (err)
			goto bad;
		for (i = 0; i < cnt; i++) {
			uint16_t h;

			npr_convert(&h, p->dst_type, &y[i], NPR_ELEM_F32, 1);
			npr_convert(&y[i], NPR_ELEM_F32, &h, p->dst_type, 1);
		}
		return 0;
	}
	if (in[0].type == NPR_ELEM_F32 && out->type != NPR_ELEM_F32 &&
	    out->type != NPR_ELEM_F64 && out->type != NPR_ELEM_BOOLEAN) {
		/* float to integer rounds to nearest, ties to even */
		float *tmp = in[0].data;

		for (i = 0; i < cnt; i++) {
			float r = nearbyintf(tmp[i]);

			err = npr_convert((char *)out->data +
					  i * npr_elem_size(out->type),
					  out->type, &r, NPR_ELEM_F32, 1);
			if (err)
				goto bad;
		}
		return 0;
	}
	err = npr_convert(out->data, out->type, in[0].data, in[0].type, cnt);
	if (!err)
		return 0;
bad:
	return npr_node_err(n, -EOPNOTSUPP, "cannot convert %s to %s",
			    npr_elem_name(in[0].type),
			    npr_elem_name(out->type));
}

int npr_ref_fake_quantize(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out)
{
	const struct npr_eltwise_params *p = n->params;
	const struct npr_tensor *ins[3] = { &in[0], &in[1], &in[2] };
	const struct npr_tensor *outs[3] = { &in[0], &in[3], &in[4] };
	const float *x = in[0].data, *il = in[1].data, *ih = in[2].data;
	const float *ol = in[3].data, *oh = in[4].data;
	float lv = (float)(p->levels - 1);
	struct bc_iter a, b;
	int64_t rowlen, off[3], offb[3], k, o = 0;
	float *y = out->data;

	bc_init(&a, &out->shape, ins, 3);
	bc_init(&b, &out->shape, outs, 3);
	/* two iterators over the same output: walk b in lockstep with a */
	{
		int64_t idx[NPR_MAX_RANK] = { 0 };
		int d;

		BC_FOR_ROWS(&a, rowlen, off, {
			int64_t s1 = a.rank ? a.st[1][a.rank - 1] : 0;
			int64_t s2 = a.rank ? a.st[2][a.rank - 1] : 0;
			int64_t s3, s4;

			for (d = 0; d < 3; d++) {
				int dd;

				offb[d] = 0;
				for (dd = 0; dd < b.rank - 1; dd++)
					offb[d] += idx[dd] * b.st[d][dd];
			}
			s3 = b.rank ? b.st[1][b.rank - 1] : 0;
			s4 = b.rank ? b.st[2][b.rank - 1] : 0;
			for (k = 0; k < rowlen; k++) {
				float v = x[off[0] + k];
				float lo = il[off[1] + k * s1];
				float hi = ih[off[2] + k * s2];
				float olo = ol[offb[1] + k * s3];
				float ohi = oh[offb[2] + k * s4];

				if (v <= (lo < hi ? lo : hi))
					y[o + k] = olo;
				else if (v > (lo > hi ? lo : hi))
					y[o + k] = ohi;
				else
					y[o + k] = nearbyintf((v - lo) / (hi - lo) * lv) /
						   lv * (ohi - olo) + olo;
			}
			o += rowlen;
			for (d = a.rank - 2; d >= 0; d--) {
				if (++idx[d] < a.dims[d])
					break;
				idx[d] = 0;
			}
		});
	}
	return 0;
}

int npr_ref_select(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_tensor *ins[3] = { &in[0], &in[1], &in[2] };
	size_t es = npr_elem_size(out->type);
	const uint8_t *c = in[0].data;
	const char *a = in[1].data, *b = in[2].data;
	char *d = out->data;
	struct bc_iter it;
	int64_t rowlen, off[3], k, o = 0;

	bc_init(&it, &out->shape, ins, 3);
	BC_FOR_ROWS(&it, rowlen, off, {
		int64_t s0 = it.rank ? it.st[0][it.rank - 1] : 0;
		int64_t s1 = it.rank ? it.st[1][it.rank - 1] : 0;
		int64_t s2 = it.rank ? it.st[2][it.rank - 1] : 0;

		for (k = 0; k < rowlen; k++, o++)
			memcpy(d + o * es,
			       c[off[0] + k * s0] ? a + (off[1] + k * s1) * es :
						    b + (off[2] + k * s2) * es,
			       es);
	});
	(void)n;
	return 0;
}
