// SPDX-License-Identifier: MIT
/*
 * Reference kernel of Interpolate-1/-4/-11 (lib/ops/interp.h): per axis a
 * table of taps (source index, weight) for every output coordinate, then
 * one weighted sum per output element over all tap combinations.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "registry.h"
#include "ops/elem.h"

/**
 * struct taps - the taps of one axis
 * @nt: taps per output coordinate.
 * @idx: [out_len * nt] source index in the unpadded input, -1 for a
 *       padding position (value 0).
 * @w: [out_len * nt] weights.
 */
struct taps {
	int nt;
	int64_t *idx;
	double *w;
};

static double round_half_even(double x)
{
	double f = floor(x), d = x - f;

	if (d != 0.5)
		return floor(x + 0.5);
	return fmod(f, 2.0) == 0 ? f : f + 1;
}

/* Output coordinate @x to the padded input coordinate. */
static double to_input(const struct npr_interp_params *p, double x,
		       double scale, int64_t olen, int64_t ilen)
{
	switch (p->coord) {
	case NPR_COORD_PYTORCH_HALF_PIXEL:
		return olen > 1 ? (x + 0.5) / scale - 0.5 : 0;
	case NPR_COORD_ASYMMETRIC:
		return x / scale;
	case NPR_COORD_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5) / scale;
	case NPR_COORD_ALIGN_CORNERS:
		return olen == 1 ? 0 : x * (double)(ilen - 1) /
				       (double)(olen - 1);
	default:
		return (x + 0.5) / scale - 0.5;
	}
}

static int64_t nearest_index(const struct npr_interp_params *p, double c,
			     double scale)
{
	switch (p->nearest) {
	case NPR_NEAREST_ROUND_PREFER_CEIL:
		return (int64_t)floor(c + 0.5);
	case NPR_NEAREST_FLOOR:
		return (int64_t)floor(c);
	case NPR_NEAREST_CEIL:
		return (int64_t)ceil(c);
	case NPR_NEAREST_SIMPLE:
		return scale < 1 ? (int64_t)ceil(c) : (int64_t)c;
	default:
		return c == floor(c) + 0.5 ? (int64_t)floor(c) :
		       (int64_t)floor(c + 0.5);
	}
}

static double cubic_w(double a, double x)
{
	x = fabs(x);
	if (x <= 1)
		return ((a + 2) * x - (a + 3)) * x * x + 1;
	if (x < 2)
		return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
	return 0;
}

static double tri_w(double x)
{
	x = fabs(x);
	return x < 1 ? 1 - x : 0;
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Fill the taps of one interpolated axis. */
static int axis_taps(const struct npr_interp_params *p, double scale,
		     double aa, int64_t ilen, int64_t olen, struct taps *t)
{
	bool pillow = p->mode == NPR_INTERP_BILINEAR_PILLOW ||
		      p->mode == NPR_INTERP_BICUBIC_PILLOW;
	double support = p->mode == NPR_INTERP_BICUBIC_PILLOW ? 2 : 1;
	double fscale = 1 / scale < 1 ? 1 : 1 / scale;
	int64_t r = 2, x, j;
	int nt;

	switch (p->mode) {
	case NPR_INTERP_NEAREST:
		nt = 1;
		break;
	case NPR_INTERP_LINEAR_ONNX:
		nt = 2;
		break;
	case NPR_INTERP_CUBIC:
		nt = 4;
		break;
	case NPR_INTERP_LINEAR:
		r = aa >= 1 ? 2 : (int64_t)ceil(2 / aa);
		nt = (int)(2 * r + 1);
		break;
	default:
		nt = (int)(2 * ceil(support * fscale) + 3);
		break;
	}
	t->nt = nt;
	t->idx = calloc(olen * nt + 1, sizeof(*t->idx));
	t->w = calloc(olen * nt + 1, sizeof(*t->w));
	if (!t->idx || !t->w)
		return -ENOMEM;
	for (x = 0; x < olen; x++) {
		int64_t *ix = t->idx + x * nt;
		double *w = t->w + x * nt, c, sum = 0;

		for (j = 0; j < nt; j++)
			ix[j] = -1;
		if (pillow) {
			double center = (x + 0.5) / scale;
			double sup = support * fscale;
			int64_t lo = (int64_t)(center - sup + 0.5);
			int64_t hi = (int64_t)(center + sup + 0.5);

			lo = lo < 0 ? 0 : lo;
			hi = hi > ilen ? ilen : hi;
			for (j = 0; j < nt && lo + j < hi; j++) {
				double d = (lo + j - center + 0.5) / fscale;

				ix[j] = lo + j;
				w[j] = p->mode == NPR_INTERP_BILINEAR_PILLOW ?
				       tri_w(d) : cubic_w(-0.5, d);
				sum += w[j];
			}
			for (j = 0; j < nt && sum != 0; j++)
				w[j] /= sum;
			continue;
		}
		c = to_input(p, (double)x, scale, olen, ilen);
		switch (p->mode) {
		case NPR_INTERP_NEAREST:
			ix[0] = clampi(nearest_index(p, c, scale), 0,
				       ilen - 1);
			w[0] = 1;
			break;
		case NPR_INTERP_LINEAR_ONNX: {
			double cc = c < 0 ? 0 : c > ilen - 1 ? ilen - 1 : c;
			int64_t i0 = (int64_t)floor(cc);

			ix[0] = i0;
			ix[1] = i0 + 1 < ilen ? i0 + 1 : ilen - 1;
			w[1] = cc - i0;
			w[0] = 1 - w[1];
			break;
		}
		case NPR_INTERP_CUBIC: {
			int64_t i0 = (int64_t)floor(c);
			double f = c - i0;

			for (j = 0; j < 4; j++) {
				ix[j] = clampi(i0 - 1 + j, 0, ilen - 1);
				w[j] = cubic_w(p->cube_coeff, f - (j - 1));
			}
			break;
		}
		default: {	/* linear, with antialias when aa < 1 */
			int64_t c0 = (int64_t)round_half_even(c);

			for (j = 0; j < nt; j++) {
				int64_t k = c0 - r + j;
				double v;

				if (k < 0 || k >= ilen)
					continue;
				v = 1 - fabs(aa * (c - k));
				ix[j] = k;
				w[j] = v > 0 ? v : 0;
				sum += w[j];
			}
			for (j = 0; j < nt; j++)
				w[j] = sum != 0 ? w[j] / sum : 0;
			break;
		}
		}
	}
	return 0;
}

/**
 * npr_ref_interpolate() - Interpolate-1/-4/-11
 * @n: the node; params struct npr_interp_params, planned by infer.
 * @in: data, then the size/scale/axes inputs (already used by infer).
 * @out: the resized tensor.
 *
 * Integer outputs of the weighted modes are rounded to nearest and
 * saturated.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_interpolate(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	const struct npr_interp_params *p = n->params;
	const struct npr_shape *is = &in[0].shape, *os = &out->shape;
	int r = is->rank, a, err = 0;
	struct taps t[NPR_MAX_RANK];
	int64_t ist[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t total = npr_shape_numel(os), k, acc = 1;
	size_t es = npr_elem_size(out->type);
	bool exact = true, any_down = false, is_int;
	const char *src = in[0].data;
	char *dst = out->data;

	memset(t, 0, sizeof(t));
	if (!total)
		return 0;
	for (a = r - 1; a >= 0; a--) {
		ist[a] = acc;
		acc *= is->d[a];
	}
	for (a = 0; a < r; a++)
		if (p->interp[a] && p->scale[a] < 1)
			any_down = true;
	for (a = 0; a < r; a++) {
		int64_t plen = is->d[a] + p->pb[a] + p->pe[a], x, j;
		double aa = 1;

		if (!p->interp[a]) {
			t[a].nt = 1;
			t[a].idx = calloc(os->d[a] + 1, sizeof(int64_t));
			t[a].w = calloc(os->d[a] + 1, sizeof(double));
			if (!t[a].idx || !t[a].w) {
				err = -ENOMEM;
				goto out;
			}
			for (x = 0; x < os->d[a]; x++) {
				t[a].idx[x] = x;
				t[a].w[x] = 1;
			}
		} else {
			if (p->mode == NPR_INTERP_LINEAR && p->antialias &&
			    any_down)
				aa = p->scale[a];
			err = axis_taps(p, p->scale[a], aa, plen, os->d[a],
					&t[a]);
			if (err)
				goto out;
		}
		/* padded to unpadded indices */
		for (j = 0; j < os->d[a] * t[a].nt; j++) {
			int64_t v = t[a].idx[j];

			if (v >= 0)
				v -= p->pb[a];
			t[a].idx[j] = v >= 0 && v < is->d[a] ? v : -1;
		}
		if (t[a].nt > 1)
			exact = false;
	}
	is_int = !npr_is_float(out->type);
	for (k = 0; k < total; k++) {
		int tp[NPR_MAX_RANK] = { 0 };
		double sum = 0;

		if (exact) {
			int64_t off = 0;

			for (a = 0; a < r && off >= 0; a++) {
				int64_t v = t[a].idx[idx[a]];

				off = v < 0 ? -1 : off + v * ist[a];
			}
			if (off < 0)
				memset(dst + k * es, 0, es);
			else
				memcpy(dst + k * es, src + off * es, es);
		} else {
			for (;;) {
				double w = 1;
				int64_t off = 0;

				for (a = 0; a < r; a++) {
					int64_t j = idx[a] * t[a].nt + tp[a];
					int64_t v = t[a].idx[j];

					w *= t[a].w[j];
					if (v < 0 || w == 0) {
						off = -1;
						break;
					}
					off += v * ist[a];
				}
				if (off >= 0)
					sum += w * npr_ld(in[0].type, src, off);
				for (a = r - 1; a >= 0; a--) {
					if (++tp[a] < t[a].nt)
						break;
					tp[a] = 0;
				}
				if (a < 0)
					break;
			}
			if (is_int)
				sum = floor(sum + 0.5);
			npr_st(out->type, dst, k, sum);
		}
		for (a = r - 1; a >= 0; a--) {
			if (++idx[a] < os->d[a])
				break;
			idx[a] = 0;
		}
	}
out:
	for (a = 0; a < r; a++) {
		free(t[a].idx);
		free(t[a].w);
	}
	return err;
}

/* The op definitions of lib/ops/interp.c these kernels evaluate. */
const struct npr_kernel npr_kernels_interp[] = {
	{ "Interpolate", 0, 3, npr_ref_interpolate },
	{ "Interpolate", 4, 10, npr_ref_interpolate },
	{ "Interpolate", 11, 99, npr_ref_interpolate },
	{ NULL },
};
