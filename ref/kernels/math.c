// SPDX-License-Identifier: MIT
/*
 * Reference kernels of the math ops (lib/ops/math.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elem.h"
#include "math.h"
#include "registry.h"

static double round_even(double x)
{
	double f = floor(x), d = x - f;

	if (d > 0.5)
		return f + 1;
	if (d < 0.5)
		return f;
	return fmod(f, 2.0) == 0 ? f : f + 1;
}

static double round_away(double x)
{
	return x < 0 ? -floor(-x + 0.5) : floor(x + 0.5);
}

/**
 * npr_ref_math_unary() - Round-5, Sign-1, trigonometric, SoftSign-9
 * @n: the node; params struct npr_math_params.
 * @in: x.
 * @out: same type and shape.
 *
 * Return: 0.
 */
int npr_ref_math_unary(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out)
{
	const struct npr_math_params *p = n->params;
	int64_t total = npr_shape_numel(&in->shape), i;
	bool fl = npr_is_float(in->type);

	for (i = 0; i < total; i++) {
		double x = npr_ld(in->type, in->data, i), y = x;

		switch (p->op) {
		case NPR_MATH_ROUND_EVEN:
			if (fl && isfinite(x))
				y = round_even(x);
			break;
		case NPR_MATH_ROUND_AWAY:
			if (fl && isfinite(x))
				y = round_away(x);
			break;
		case NPR_MATH_SIGN:
			y = (x > 0) - (x < 0);
			break;
		case NPR_MATH_SIN: y = sin(x); break;
		case NPR_MATH_COS: y = cos(x); break;
		case NPR_MATH_TAN: y = tan(x); break;
		case NPR_MATH_ASIN: y = asin(x); break;
		case NPR_MATH_ACOS: y = acos(x); break;
		case NPR_MATH_ATAN: y = atan(x); break;
		case NPR_MATH_SINH: y = sinh(x); break;
		case NPR_MATH_COSH: y = cosh(x); break;
		case NPR_MATH_ASINH: y = asinh(x); break;
		case NPR_MATH_ACOSH: y = acosh(x); break;
		case NPR_MATH_ATANH: y = atanh(x); break;
		default: y = x / (1 + fabs(x)); break;	/* SoftSign */
		}
		if (!fl && p->op >= NPR_MATH_SIN)
			y = round_away(y);	/* integer inputs */
		if ((in->type == NPR_ELEM_I64 || in->type == NPR_ELEM_U64) &&
		    p->op <= NPR_MATH_SIGN) {
			/* exact: doubles lose bits beyond 2^53 */
			if (p->op == NPR_MATH_SIGN) {
				int64_t v = npr_ld_int(in->type, in->data, i);

				if (in->type == NPR_ELEM_U64)
					v = v != 0;
				else
					v = (v > 0) - (v < 0);
				((int64_t *)out->data)[i] = v;
			} else {
				((int64_t *)out->data)[i] =
					((const int64_t *)in->data)[i];
			}
			continue;
		}
		npr_st(out->type, out->data, i, y);
	}
	return 0;
}

/**
 * npr_ref_reduce_logical() - ReduceLogicalAnd-1, ReduceLogicalOr-1
 * @n: the node; params struct npr_math_params, @reduced set.
 * @in: data (boolean), axes.
 * @out: boolean; an empty reduction gives true (And) or false (Or).
 *
 * Return: 0.
 */
int npr_ref_reduce_logical(const struct npr_node *n,
			   const struct npr_tensor *in,
			   struct npr_tensor *out)
{
	const struct npr_math_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t ost[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(s), onum = npr_shape_numel(&out->shape);
	const uint8_t *x = in[0].data;
	uint8_t *y = out->data, init = p->op == NPR_MATH_REDUCE_AND;
	int64_t k, acc = 1;
	int i;

	/* stride of each input axis in the output, 0 for reduced ones */
	for (i = s->rank - 1; i >= 0; i--) {
		ost[i] = p->reduced[i] ? 0 : acc;
		if (!p->reduced[i])
			acc *= s->d[i];
	}
	memset(y, init, onum);
	for (k = 0; k < total; k++) {
		int64_t o = 0;

		for (i = 0; i < s->rank; i++)
			o += idx[i] * ost[i];
		if (init)
			y[o] = y[o] && x[k];
		else
			y[o] = y[o] || x[k];
		for (i = s->rank - 1; i >= 0; i--) {
			if (++idx[i] < s->d[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

/**
 * npr_ref_cumsum() - CumSum-3
 * @n: the node; params struct npr_math_params, @axis set.
 * @in: x, [axis].
 * @out: running sums along the axis.
 *
 * Return: 0.
 */
int npr_ref_cumsum(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_math_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t outer = npr_dims_prod(s, 0, p->axis), dim = s->d[p->axis];
	int64_t inner = npr_dims_prod(s, p->axis + 1, s->rank), o, j, i;
	bool exact = !npr_is_float(in[0].type);
	bool wide = out->type == NPR_ELEM_I64 || out->type == NPR_ELEM_U64;
	unsigned int t = in[0].type;

	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			uint64_t iacc = 0;	/* wraps like the type */
			double acc = 0;

			for (j = 0; j < dim; j++) {
				int64_t jj = p->reverse ? dim - 1 - j : j;
				int64_t k = (o * dim + jj) * inner + i;
				double x = npr_ld(t, in[0].data, k);
				uint64_t xi = exact ?
					(uint64_t)npr_ld_int(t, in[0].data, k) :
					0;

				if (!p->exclusive) {
					acc += x;
					iacc += xi;
				}
				if (exact && wide)
					((int64_t *)out->data)[k] =
						(int64_t)iacc;
				else
					npr_st(out->type, out->data, k, exact ?
					       (double)(int64_t)iacc : acc);
				if (p->exclusive) {
					acc += x;
					iacc += xi;
				}
			}
		}
	}
	return 0;
}

/**
 * npr_ref_einsum() - Einsum-7
 * @n: the node; params struct npr_einsum_params, resolved by infer.
 * @in: the operands.
 * @out: for every assignment of the output labels, the sum over the other
 *       labels of the product of the operands' elements.
 *
 * A label repeated in one operand walks its diagonal; an ellipsis
 * dimension of size 1 broadcasts.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_einsum(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_einsum_params *p = n->params;
	int order[NPR_EINSUM_LABELS], nl = 0, i, j, l;
	int64_t ist[NPR_EINSUM_MAX_IN][NPR_EINSUM_LABELS];
	int64_t ost[NPR_EINSUM_LABELS] = { 0 }, idx[NPR_EINSUM_LABELS] = { 0 };
	int64_t off[NPR_EINSUM_MAX_IN] = { 0 }, ooff = 0, k, acc;
	int64_t onum = npr_shape_numel(&out->shape);
	bool inout[NPR_EINSUM_LABELS] = { false };
	double *sum;

	sum = calloc(onum ? onum : 1, sizeof(*sum));
	if (!sum)
		return -ENOMEM;
	memset(ist, 0, sizeof(ist));
	for (i = 0; i < n->nin; i++) {
		acc = 1;
		for (j = p->rank[i] - 1; j >= 0; j--) {
			int64_t d = in[i].shape.d[j];

			/* a broadcast dimension does not move */
			if (d != 1 || p->size[p->lab[i][j]] == 1)
				ist[i][p->lab[i][j]] += acc;
			acc *= d;
		}
	}
	acc = 1;
	for (j = p->orank - 1; j >= 0; j--) {
		ost[p->olab[j]] = acc;
		acc *= p->size[p->olab[j]];
	}
	/* loop order: output labels first, then the summed ones */
	for (j = 0; j < p->orank; j++) {
		order[nl++] = p->olab[j];
		inout[p->olab[j]] = true;
	}
	for (l = 0; l < NPR_EINSUM_LABELS; l++)
		if (p->used[l] && !inout[l])
			order[nl++] = l;
	for (l = 0; l < nl; l++)
		if (!p->size[order[l]])
			goto store;	/* nothing to sum */
	for (;;) {
		double prod = 1;

		for (i = 0; i < n->nin; i++)
			prod *= npr_ld(in[i].type, in[i].data, off[i]);
		sum[ooff] += prod;
		for (l = nl - 1; l >= 0; l--) {
			int lab = order[l];

			idx[lab]++;
			ooff += ost[lab];
			for (i = 0; i < n->nin; i++)
				off[i] += ist[i][lab];
			if (idx[lab] < p->size[lab])
				break;
			ooff -= ost[lab] * idx[lab];
			for (i = 0; i < n->nin; i++)
				off[i] -= ist[i][lab] * idx[lab];
			idx[lab] = 0;
		}
		if (l < 0)
			break;
	}
store:
	for (k = 0; k < onum; k++)
		npr_st(out->type, out->data, k, sum[k]);
	free(sum);
	return 0;
}

/**
 * npr_ref_math_scalar2() - HardSigmoid-1 and Selu-1
 * @n: the node; params struct npr_math_params.
 * @in: x, then alpha and beta (HardSigmoid) or alpha and lambda (Selu).
 * @out: max(0, min(1, alpha x + beta)), or
 *       lambda (x > 0 ? x : alpha (e^x - 1)).
 *
 * Return: 0.
 */
int npr_ref_math_scalar2(const struct npr_node *n,
			 const struct npr_tensor *in, struct npr_tensor *out)
{
	const struct npr_math_params *p = n->params;
	int64_t total = npr_shape_numel(&in[0].shape), i;
	double a = npr_ld(in[1].type, in[1].data, 0);
	double b = npr_ld(in[2].type, in[2].data, 0);

	for (i = 0; i < total; i++) {
		double x = npr_ld(in[0].type, in[0].data, i), y;

		if (p->op == NPR_MATH_HARD_SIGMOID) {
			y = a * x + b;
			y = y < 0 ? 0 : y > 1 ? 1 : y;
		} else {
			y = b * (x > 0 ? x : a * expm1(x));
		}
		npr_st(out->type, out->data, i, y);
	}
	return 0;
}

/**
 * npr_ref_log_softmax() - LogSoftmax-5
 * @n: the node; params struct npr_math_params, @axis set.
 * @in: x (float).
 * @out: x - max - log(sum(exp(x - max))) along the axis.
 *
 * Return: 0.
 */
int npr_ref_log_softmax(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	const struct npr_math_params *p = n->params;
	const struct npr_shape *s = &in->shape;
	int64_t outer = npr_dims_prod(s, 0, p->axis), dim = s->d[p->axis];
	int64_t inner = npr_dims_prod(s, p->axis + 1, s->rank), o, i, j;

	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			int64_t base = o * dim * inner + i;
			double mx = -INFINITY, sum = 0;

			for (j = 0; j < dim; j++)
				mx = fmax(mx, npr_ld(in->type, in->data,
						     base + j * inner));
			for (j = 0; j < dim; j++)
				sum += exp(npr_ld(in->type, in->data,
						  base + j * inner) - mx);
			for (j = 0; j < dim; j++) {
				int64_t k = base + j * inner;

				npr_st(out->type, out->data, k,
				       npr_ld(in->type, in->data, k) - mx -
				       log(sum));
			}
		}
	}
	return 0;
}

/**
 * npr_ref_lrn() - LRN-1
 * @n: the node; params struct npr_math_params, @reduced (the axes) and
 *     @axis (their count) set.
 * @in: data (float), axes.
 * @out: x / (bias + alpha / size^naxes * sqr_sum)^beta, sqr_sum the sum of
 *       squares over the window [i - (size - 1) / 2, i + (size - 1) / 2]
 *       along each of the axes, clipped to the tensor.
 *
 * Return: 0.
 */
int npr_ref_lrn(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out)
{
	const struct npr_math_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t total = npr_shape_numel(s), st[NPR_MAX_RANK], acc = 1, k;
	int64_t idx[NPR_MAX_RANK] = { 0 }, half = (p->size - 1) / 2;
	double scale = p->alpha / pow((double)p->size, p->axis);
	int r = s->rank, a;

	for (a = r - 1; a >= 0; a--) {
		st[a] = acc;
		acc *= s->d[a];
	}
	for (k = 0; k < total; k++) {
		int64_t lo[NPR_MAX_RANK], hi[NPR_MAX_RANK], w[NPR_MAX_RANK];
		double sq = 0, x = npr_ld(in[0].type, in[0].data, k);
		int64_t off = 0;

		for (a = 0; a < r; a++) {
			lo[a] = idx[a];
			hi[a] = idx[a] + 1;
			if (p->reduced[a]) {
				lo[a] = idx[a] - half < 0 ? 0 : idx[a] - half;
				hi[a] = idx[a] + half + 1 > s->d[a] ?
					s->d[a] : idx[a] + half + 1;
			}
			w[a] = lo[a];
			off += lo[a] * st[a];
		}
		for (;;) {
			double v = npr_ld(in[0].type, in[0].data, off);

			sq += v * v;
			for (a = r - 1; a >= 0; a--) {
				off += st[a];
				if (++w[a] < hi[a])
					break;
				off -= st[a] * (w[a] - lo[a]);
				w[a] = lo[a];
			}
			if (a < 0)
				break;
		}
		npr_st(out->type, out->data, k,
		       x / pow(p->bias + scale * sq, p->beta));
		for (a = r - 1; a >= 0; a--) {
			if (++idx[a] < s->d[a])
				break;
			idx[a] = 0;
		}
	}
	return 0;
}

/* The op definitions of lib/ops/math.c these kernels evaluate. */
const struct npr_kernel npr_kernels_math[] = {
	{ "Round", 5, 99, npr_ref_math_unary },
	{ "Sin", 0, 99, npr_ref_math_unary },
	{ "Cos", 0, 99, npr_ref_math_unary },
	{ "Tan", 0, 99, npr_ref_math_unary },
	{ "Asin", 0, 99, npr_ref_math_unary },
	{ "Acos", 0, 99, npr_ref_math_unary },
	{ "Atan", 0, 99, npr_ref_math_unary },
	{ "Sinh", 0, 99, npr_ref_math_unary },
	{ "Cosh", 0, 99, npr_ref_math_unary },
	{ "Asinh", 3, 99, npr_ref_math_unary },
	{ "Acosh", 3, 99, npr_ref_math_unary },
	{ "Atanh", 3, 99, npr_ref_math_unary },
	{ "SoftSign", 9, 99, npr_ref_math_unary },
	{ "HardSigmoid", 0, 99, npr_ref_math_scalar2 },
	{ "Selu", 0, 99, npr_ref_math_scalar2 },
	{ "LogSoftmax", 5, 99, npr_ref_log_softmax },
	{ "LRN", 0, 99, npr_ref_lrn },
	{ "Sign", 0, 99, npr_ref_math_unary },
	{ "ReduceLogicalAnd", 0, 99, npr_ref_reduce_logical },
	{ "ReduceLogicalOr", 0, 99, npr_ref_reduce_logical },
	{ "CumSum", 3, 99, npr_ref_cumsum },
	{ "Einsum", 7, 99, npr_ref_einsum },
	{ NULL },
};
