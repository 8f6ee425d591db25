// SPDX-License-Identifier: MIT
/*
 * Reference kernels of ReverseSequence-1, BitwiseLeftShift-15,
 * BitwiseRightShift-15, GridSample-9, DFT-7 and IDFT-7
 * (lib/ops/misc.h).
 *
 * DFT runs one axis after the other, each line by the definition
 * X[k] = sum_n x[n] exp(-2 pi i k n / N) (IDFT: +, and / N) in double.
 *
 * GridSample maps grid coordinates to input pixels as
 *   align_corners:  x = (gx + 1) / 2 * (W - 1)
 *   otherwise:      x = ((gx + 1) * W - 1) / 2
 * (y likewise with H).  nearest rounds half to even.  A coordinate
 * outside [x_min, x_max] (0 .. W-1 with align_corners, else -0.5 ..
 * W-0.5) is first clamped to 0 .. W-1 (border) or reflected about those
 * bounds (reflection); then pixels outside the input read 0 (zeros), the
 * nearest edge pixel (border) or their reflection (reflection).  bilinear
 * weighs the 2x2 pixels around the point, bicubic the 4x4 with the cubic
 * convolution kernel of a = -0.75.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elem.h"
#include "misc.h"
#include "registry.h"

/* Strides of @s in elements. */
static void strides(const struct npr_shape *s, int64_t *st)
{
	int64_t acc = 1;
	int i;

	for (i = s->rank - 1; i >= 0; i--) {
		st[i] = acc;
		acc *= s->d[i];
	}
}

/**
 * npr_ref_reverse_sequence() - ReverseSequence-1
 * @n: the node; params struct npr_misc_params.
 * @in: data, seq_lengths.
 * @out: data with each row's leading seq_lengths elements reversed.
 *
 * Return: 0, or -EINVAL when a length is outside [0, the sequence axis].
 */
int npr_ref_reverse_sequence(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out)
{
	const struct npr_misc_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t st[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(s), T = s->d[p->seq_axis], k, b;
	size_t es = npr_elem_size(in[0].type);
	const char *src = in[0].data;
	char *dst = out[0].data;
	int i;

	for (b = 0; b < s->d[p->batch_axis]; b++) {
		int64_t len = npr_ld_int(in[1].type, in[1].data, b);

		if (len < 0 || len > T)
			return npr_node_err(n, -EINVAL,
					    "seq_lengths[%lld] = %lld is outside [0, %lld]",
					    (long long)b, (long long)len,
					    (long long)T);
	}
	strides(s, st);
	for (k = 0; k < total; k++) {
		int64_t t = idx[p->seq_axis], off = k;
		int64_t len = npr_ld_int(in[1].type, in[1].data,
					 idx[p->batch_axis]);

		if (t < len)
			off += (len - 1 - 2 * t) * st[p->seq_axis];
		memcpy(dst + k * es, src + off * es, es);
		for (i = s->rank - 1; i >= 0; i--) {
			if (++idx[i] < s->d[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

/* ---- DFT, IDFT ---------------------------------------------------------- */

/**
 * npr_ref_dft() - DFT-7, IDFT-7
 * @n: the node; params struct npr_misc_params.
 * @in: data [..., 2], axes (, signal_size).
 * @out: the transform, each axis cut or zero-padded to its size first.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_dft(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out)
{
	const struct npr_misc_params *p = n->params;
	const struct npr_shape *is = &in[0].shape, *os = &out[0].shape;
	int64_t ist[NPR_MAX_RANK], ost[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(os) / 2, k, j, m;
	const float *x = in[0].data;
	double *w, *line;
	int r = os->rank - 1, i, a;
	float *y = out[0].data;
	int64_t maxn = 1;

	for (i = 0; i < r; i++)
		maxn = os->d[i] > maxn ? os->d[i] : maxn;
	w = malloc(sizeof(double) * 2 * (total ? total : 1));
	line = malloc(sizeof(double) * 4 * maxn);
	if (!w || !line) {
		free(w);
		free(line);
		return -ENOMEM;
	}
	strides(is, ist);
	strides(os, ost);
	/* the input cut or zero-padded to the output sizes */
	for (k = 0; k < total; k++) {
		int64_t off = 0;
		bool inside = true;

		for (i = 0; i < r; i++) {
			inside &= idx[i] < is->d[i];
			off += idx[i] * ist[i];
		}
		w[2 * k] = inside ? x[off] : 0;
		w[2 * k + 1] = inside ? x[off + 1] : 0;
		for (i = r - 1; i >= 0; i--) {
			if (++idx[i] < os->d[i])
				break;
			idx[i] = 0;
		}
	}
	for (a = 0; a < p->naxes; a++) {
		int ax = p->axes[a];
		int64_t N = os->d[ax], st = ost[ax] / 2, lines = total / N;
		double sign = p->inverse ? 1 : -1;

		memset(idx, 0, sizeof(idx));
		for (m = 0; m < lines; m++) {
			int64_t base = 0;
			double *src = line, *dst = line + 2 * N;

			/* the m-th line: every index but ax, in order */
			for (i = 0; i < r; i++)
				if (i != ax)
					base += idx[i] * (ost[i] / 2);
			for (j = 0; j < N; j++) {
				src[2 * j] = w[2 * (base + j * st)];
				src[2 * j + 1] = w[2 * (base + j * st) + 1];
			}
			for (k = 0; k < N; k++) {
				double re = 0, im = 0;

				for (j = 0; j < N; j++) {
					/* k * j mod N keeps the angle exact */
					double t = sign * 2 * M_PI *
						   (double)((k * j) % N) / N;
					double c = cos(t), s = sin(t);
					double xr = src[2 * j];
					double xi = src[2 * j + 1];

					re += xr * c - xi * s;
					im += xr * s + xi * c;
				}
				dst[2 * k] = p->inverse ? re / N : re;
				dst[2 * k + 1] = p->inverse ? im / N : im;
			}
			for (j = 0; j < N; j++) {
				w[2 * (base + j * st)] = dst[2 * j];
				w[2 * (base + j * st) + 1] = dst[2 * j + 1];
			}
			for (i = r - 1; i >= 0; i--) {
				if (i == ax)
					continue;
				if (++idx[i] < os->d[i])
					break;
				idx[i] = 0;
			}
		}
	}
	for (k = 0; k < 2 * total; k++)
		y[k] = (float)w[k];
	free(line);
	free(w);
	return 0;
}

/* ---- shifts ------------------------------------------------------------- */

static int bits_of(unsigned int t)
{
	return (int)npr_elem_size(t) * 8;
}

static bool is_signed(unsigned int t)
{
	return t == NPR_ELEM_I8 || t == NPR_ELEM_I16 || t == NPR_ELEM_I32 ||
	       t == NPR_ELEM_I64;
}

/* Element @i of an integer array as its 64-bit pattern (sign-extended). */
static uint64_t ld_bits(unsigned int t, const void *p, int64_t i)
{
	switch (t) {
	case NPR_ELEM_I8: return (uint64_t)(int64_t)((const int8_t *)p)[i];
	case NPR_ELEM_U8: return ((const uint8_t *)p)[i];
	case NPR_ELEM_I16: return (uint64_t)(int64_t)((const int16_t *)p)[i];
	case NPR_ELEM_U16: return ((const uint16_t *)p)[i];
	case NPR_ELEM_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
	case NPR_ELEM_U32: return ((const uint32_t *)p)[i];
	default: return ((const uint64_t *)p)[i];
	}
}

static void st_bits(unsigned int t, void *p, int64_t i, uint64_t v)
{
	switch (npr_elem_size(t)) {
	case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
	default: ((uint64_t *)p)[i] = v; break;
	}
}

static uint64_t shift(bool left, unsigned int t, uint64_t a, uint64_t b)
{
	int64_t s = (int64_t)b, bits = bits_of(t);
	bool neg = is_signed(t) && (int64_t)a < 0;

	if (is_signed(t) ? s < 0 || s >= bits : b >= (uint64_t)bits)
		return left || !neg ? 0 : UINT64_MAX;
	if (left)
		return a << s;
	/* arithmetic: the sign-extended pattern shifts in ones */
	if (neg)
		return ~(~a >> s);
	return a >> s;
}

/**
 * npr_ref_bitwise_shift() - BitwiseLeftShift-15, BitwiseRightShift-15
 * @n: the node; params struct npr_misc_params.
 * @in: the values, the shift amounts (same integer type).
 * @out: the shifted values, broadcast.
 *
 * Return: 0.
 */
int npr_ref_bitwise_shift(const struct npr_node *n,
			  const struct npr_tensor *in, struct npr_tensor *out)
{
	const struct npr_misc_params *p = n->params;
	const struct npr_shape *os = &out[0].shape;
	int64_t sa[NPR_MAX_RANK] = { 0 }, sb[NPR_MAX_RANK] = { 0 };
	int64_t ast[NPR_MAX_RANK], bst[NPR_MAX_RANK];
	int64_t idx[NPR_MAX_RANK] = { 0 }, total = npr_shape_numel(os), k;
	int64_t ia = 0, ib = 0;
	unsigned int t = in[0].type;
	int i, r = os->rank;

	strides(&in[0].shape, ast);
	strides(&in[1].shape, bst);
	/* right-aligned strides, 0 along broadcast dims */
	for (i = 0; i < r; i++) {
		int ja = i - (r - in[0].shape.rank);
		int jb = i - (r - in[1].shape.rank);

		if (ja >= 0 && in[0].shape.d[ja] != 1)
			sa[i] = ast[ja];
		if (jb >= 0 && in[1].shape.d[jb] != 1)
			sb[i] = bst[jb];
	}
	for (k = 0; k < total; k++) {
		st_bits(t, out[0].data, k,
			shift(p->left, t, ld_bits(t, in[0].data, ia),
			      ld_bits(t, in[1].data, ib)));
		for (i = r - 1; i >= 0; i--) {
			ia += sa[i];
			ib += sb[i];
			if (++idx[i] < os->d[i])
				break;
			ia -= sa[i] * os->d[i];
			ib -= sb[i] * os->d[i];
			idx[i] = 0;
		}
	}
	return 0;
}

/* ---- GridSample --------------------------------------------------------- */

struct grid {
	const float *img;	/* one channel plane [H, W] */
	int64_t H, W;
	int padding;
	double xmin, xmax, ymin, ymax;
};

/* @x reflected about [lo, hi] until inside. */
static double reflect(double x, double lo, double hi)
{
	double rng = hi - lo, m;

	if (rng <= 0)
		return lo;
	if (x < lo) {
		m = fmod(lo - x, 2 * rng);
		return m <= rng ? lo + m : hi - (m - rng);
	}
	if (x > hi) {
		m = fmod(x - hi, 2 * rng);
		return m <= rng ? hi - m : lo + (m - rng);
	}
	return x;
}

static double pixel(const struct grid *g, int64_t y, int64_t x)
{
	switch (g->padding) {
	case NPR_GRID_ZEROS:
		if (x < 0 || x >= g->W || y < 0 || y >= g->H)
			return 0;
		break;
	case NPR_GRID_BORDER:
		x = x < 0 ? 0 : x >= g->W ? g->W - 1 : x;
		y = y < 0 ? 0 : y >= g->H ? g->H - 1 : y;
		break;
	default:
		x = (int64_t)reflect((double)x, g->xmin, g->xmax);
		y = (int64_t)reflect((double)y, g->ymin, g->ymax);
		/* a reflected -0.5 .. W-0.5 can truncate onto the edge */
		x = x < 0 ? 0 : x >= g->W ? g->W - 1 : x;
		y = y < 0 ? 0 : y >= g->H ? g->H - 1 : y;
		break;
	}
	return g->img[y * g->W + x];
}

static void cubic_coeffs(double t, double *c)
{
	const double a = -0.75;
	double x = fabs(t);

	c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
	c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
	c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
	c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

static double sample(const struct grid *g, int mode, double x, double y)
{
	double x0 = floor(x), y0 = floor(y), dx = x - x0, dy = y - y0;
	int64_t ix = (int64_t)x0, iy = (int64_t)y0;
	double cx[4], cy[4], v = 0;
	int i, j;

	switch (mode) {
	case NPR_GRID_NEAREST:
		return pixel(g, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
	case NPR_GRID_BILINEAR:
		return (1 - dy) * ((1 - dx) * pixel(g, iy, ix) +
				   dx * pixel(g, iy, ix + 1)) +
		       dy * ((1 - dx) * pixel(g, iy + 1, ix) +
			     dx * pixel(g, iy + 1, ix + 1));
	default:
		cubic_coeffs(dx, cx);
		cubic_coeffs(dy, cy);
		for (i = 0; i < 4; i++) {
			double row = 0;

			for (j = 0; j < 4; j++)
				row += cx[j] * pixel(g, iy - 1 + i,
						     ix - 1 + j);
			v += cy[i] * row;
		}
		return v;
	}
}

static double denorm(double v, int64_t len, bool align)
{
	return align ? (v + 1) / 2 * (double)(len - 1) :
		       ((v + 1) * (double)len - 1) / 2;
}

/**
 * npr_ref_grid_sample() - GridSample-9
 * @n: the node; params struct npr_misc_params.
 * @in: data [N, C, H, W], grid [N, H_out, W_out, 2].
 * @out: [N, C, H_out, W_out]; all zeros when the data's H or W is 0.
 *
 * Return: 0.
 */
int npr_ref_grid_sample(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	const struct npr_misc_params *p = n->params;
	const struct npr_shape *xs = &in[0].shape, *gs = &in[1].shape;
	int64_t N = xs->d[0], C = xs->d[1], Ho = gs->d[1], Wo = gs->d[2];
	const float *grid = in[1].data;
	float *y = out[0].data;
	struct grid g = {
		.H = xs->d[2], .W = xs->d[3], .padding = p->padding,
	};
	int64_t b, ch, i;

	/* an empty plane has no pixel to pad or reflect with: zeros */
	if (!g.H || !g.W) {
		memset(y, 0, out[0].nbytes);
		return 0;
	}
	g.xmin = p->align_corners ? 0 : -0.5;
	g.ymin = g.xmin;
	g.xmax = p->align_corners ? (double)g.W - 1 : (double)g.W - 0.5;
	g.ymax = p->align_corners ? (double)g.H - 1 : (double)g.H - 0.5;
	for (b = 0; b < N; b++) {
		for (ch = 0; ch < C; ch++) {
			g.img = (const float *)in[0].data +
				(b * C + ch) * g.H * g.W;
			for (i = 0; i < Ho * Wo; i++) {
				const float *gp = grid + (b * Ho * Wo + i) * 2;
				double x = denorm(gp[0], g.W, p->align_corners);
				double yy = denorm(gp[1], g.H,
						   p->align_corners);

				if (isnan(x) || isnan(yy)) {
					*y++ = NAN;
					continue;
				}
				/* zeros: far outside reads as just outside */
				if (p->padding == NPR_GRID_ZEROS) {
					x = fmin(fmax(x, -4.0 - (double)g.W),
						 2.0 * (double)g.W + 4);
					yy = fmin(fmax(yy, -4.0 - (double)g.H),
						  2.0 * (double)g.H + 4);
				}
				if (p->mode == NPR_GRID_NEAREST) {
					x = nearbyint(x);
					yy = nearbyint(yy);
				}
				if (x < g.xmin || x > g.xmax ||
				    yy < g.ymin || yy > g.ymax) {
					if (p->padding == NPR_GRID_BORDER) {
						x = fmin(fmax(x, 0),
							 (double)g.W - 1);
						yy = fmin(fmax(yy, 0),
							  (double)g.H - 1);
					} else if (p->padding ==
						   NPR_GRID_REFLECTION) {
						x = reflect(x, g.xmin, g.xmax);
						yy = reflect(yy, g.ymin,
							     g.ymax);
					}
				}
				*y++ = (float)sample(&g, p->mode, x, yy);
			}
		}
	}
	return 0;
}

/* ---- Unique ------------------------------------------------------------- */

/**
 * npr_ref_unique() - Unique-10
 * @n: the node.
 * @in: data [, axis].
 * @out: unique values, first indices, inverse indices, counts (their
 *       shapes from the inference, which ran on the same data).
 *
 * Return: 0, -ENOMEM, or -EINVAL when the data no longer gives the
 * inferred count.
 */
int npr_ref_unique(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_misc_params *p = n->params;
	int64_t len = out[2].shape.d[0], u = out[1].shape.d[0];
	int64_t *first, *inv, *cnt, got, outer, inner, i, o;
	size_t es = npr_elem_size(in[0].type);
	int err = 0;

	first = malloc(sizeof(*first) * (u ? u : 1));
	cnt = malloc(sizeof(*cnt) * (u ? u : 1));
	inv = malloc(sizeof(*inv) * (len ? len : 1));
	if (!first || !cnt || !inv) {
		err = -ENOMEM;
		goto out;
	}
	got = npr_unique_groups(&in[0], p->uaxis, p->sorted, first, inv, cnt);
	if (got != u) {
		err = got < 0 ? (int)got :
		      npr_node_err(n, -EINVAL, "%lld unique values, %lld inferred",
				   (long long)got, (long long)u);
		goto out;
	}
	if (p->uaxis < 0) {
		outer = inner = 1;
	} else {
		outer = npr_dims_prod(&in[0].shape, 0, p->uaxis);
		inner = npr_dims_prod(&in[0].shape, p->uaxis + 1,
				      in[0].shape.rank);
	}
	for (o = 0; o < outer; o++)
		for (i = 0; i < u; i++)
			memcpy((char *)out[0].data + ((o * u + i) * inner) * es,
			       (const char *)in[0].data +
			       ((o * len + first[i]) * inner) * es,
			       (size_t)inner * es);
	for (i = 0; i < u; i++) {
		npr_st(out[1].type, out[1].data, i, (double)first[i]);
		npr_st(out[3].type, out[3].data, i, (double)cnt[i]);
	}
	for (i = 0; i < len; i++)
		npr_st(out[2].type, out[2].data, i, (double)inv[i]);
out:
	free(first);
	free(cnt);
	free(inv);
	return err;
}

/* The op definitions of lib/ops/misc.c these kernels evaluate. */
const struct npr_kernel npr_kernels_misc[] = {
	{ "Unique", 10, 99, npr_ref_unique },
	{ "DFT", 7, 99, npr_ref_dft },
	{ "IDFT", 7, 99, npr_ref_dft },
	{ "ReverseSequence", 1, 99, npr_ref_reverse_sequence },
	{ "BitwiseLeftShift", 15, 99, npr_ref_bitwise_shift },
	{ "BitwiseRightShift", 15, 99, npr_ref_bitwise_shift },
	{ "GridSample", 9, 99, npr_ref_grid_sample },
	{ NULL },
};
