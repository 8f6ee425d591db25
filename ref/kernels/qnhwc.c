// SPDX-License-Identifier: MIT
/*
 * NprQConv with blocked weights (lib/ops/quant.h): the output channels
 * lie in the vector lanes and the pixels take turns, so that a 1x1
 * convolution reads its NHWC input as it lies and a wider window needs
 * no packing either: each output pixel has one pointer per tap of its
 * window into the NHWC input (padding points at bytes of the x zero
 * point), and the matrix kernel of this CPU (struct npr_qgemm_kern's
 * nhwc) reads four channels at a time through them.  An NCHW input, or
 * one whose channels are not a multiple of four, is copied to NHWC
 * first; an NCHW output is written NHWC and transposed.  Blocks of
 * pixels (and, when there are few, ranges of output channels) run on
 * the thread pool.
 *
 * Also here: NprQLut, NprQuantize and NprDequantize between the two
 * layouts.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/quant.h"
#include "qnhwc.h"
#include "ref/threads.h"

#define PBLK	96	/* output pixels per work item */

/* as rne() of ref/kernels/quant.c: callers clamp to |v| <= 1024 */
static inline float rne(float v)
{
	return (v + 12582912.0f) - 12582912.0f;
}

static inline float vmax(float a, float b)
{
	return a > b ? a : b;
}

static inline float vmin(float a, float b)
{
	return a < b ? a : b;
}

/**
 * npr_qnhwc_scalar() - NprQConv's kernel of blocked weights, in C
 * @a: the pixels and channels (ref/kernels/qgemm.h).
 */
void npr_qnhwc_scalar(const struct npr_qnhwc_args *a)
{
	int64_t p, k, t, q, nq = a->taps * a->cq;

	for (p = 0; p < a->npx; p++) {
		const uint8_t *const *ind = a->ind + p * a->taps;

		for (k = 0; k < a->m; k++) {
			const int8_t *w = a->w + (k / 16) * nq * 64 +
					  (k % 16) * 4;
			uint32_t acc = 0;
			float f;
			int u, r;

			for (t = 0; t < a->taps; t++)
				for (q = 0; q < a->cq; q++)
					for (r = 0; r < 4; r++)
						acc += (uint32_t)((int32_t)
							ind[t][q * 4 + r] *
							w[(t * a->cq + q) *
							  64 + r]);
			acc -= (uint32_t)a->comp[k];
			f = fmaf((float)(int32_t)acc, a->mul[k], a->add[k]);
			if (a->f32out) {
				((float *)a->y)[p * a->ldy + k] =
					vmin(vmax(f, a->flo), a->fhi);
				continue;
			}
			f = vmin(vmax(f / a->div, (float)(a->lo - a->zy)),
				 (float)(a->hi - a->zy));
			u = (int)rne(f) + a->zy;
			((uint8_t *)a->y)[p * a->ldy + k] =
				(uint8_t)(a->lut ? a->lut[u] : u);
		}
	}
}

struct qn {
	const struct npr_quant_params *p;
	const uint8_t *x;	/* input 0 as given */
	uint8_t *xc;		/* its NHWC copy of Cp channels, or NULL */
	const uint8_t *xs;	/* the NHWC pixels read: x or xc */
	int64_t xst;		/* bytes from one of them to the next */
	uint8_t *zv;		/* Cp bytes of the x zero point */
	const uint8_t **ind;	/* per output pixel, a pointer per tap */
	const int8_t *w;
	int32_t *comp;
	float *mul, *add;	/* padded to Kb x 16 */
	const int32_t *lut;
	npr_qnhwc_fn fn;
	void *y;		/* NHWC output: the tensor's, or yt */
	void *yt;		/* NHWC scratch of an NCHW output */
	void *yo;		/* the output tensor */
	size_t es;
	int64_t N, C, H, W, K, OH, OW, Cp, T, NP, Kb;
	int64_t nblk, nkc, kc;	/* pixel blocks; ranges of kc blocks */
};

/* row (n, h) of x into xc: NHWC with Cp channels, padded with xz */
static void copy_row(void *arg, int it, int tid)
{
	struct qn *c = arg;
	int64_t n = it / c->H, h = it % c->H, w, ch;
	uint8_t *d = c->xc + (n * c->H + h) * c->W * c->Cp;
	uint8_t z = (uint8_t)c->p->xz;

	(void)tid;
	if (c->p->xnhwc) {
		const uint8_t *s = c->x + (n * c->H + h) * c->W * c->C;

		for (w = 0; w < c->W; w++) {
			memcpy(d + w * c->Cp, s + w * c->C, c->C);
			memset(d + w * c->Cp + c->C, z, c->Cp - c->C);
		}
		return;
	}
	for (ch = 0; ch < c->C; ch++) {
		const uint8_t *s = c->x + ((n * c->C + ch) * c->H + h) * c->W;

		for (w = 0; w < c->W; w++)
			d[w * c->Cp + ch] = s[w];
	}
	for (w = 0; ch < c->Cp && w < c->W; w++)
		memset(d + w * c->Cp + c->C, z, c->Cp - c->C);
}

/* output row (n, oh): each pixel's pointer per tap */
static void ind_row(void *arg, int it, int tid)
{
	struct qn *c = arg;
	const struct npr_quant_params *p = c->p;
	int64_t n = it / c->OH, oh = it % c->OH, ow, i, j;
	const uint8_t **d = c->ind + (int64_t)it * c->OW * c->T;

	(void)tid;
	for (ow = 0; ow < c->OW; ow++) {
		for (i = 0; i < p->kernel[0]; i++) {
			int64_t ih = oh * p->stride[0] - p->pb[0] +
				     i * p->dil[0];

			for (j = 0; j < p->kernel[1]; j++) {
				int64_t iw = ow * p->stride[1] - p->pb[1] +
					     j * p->dil[1];

				*d++ = ih < 0 || ih >= c->H || iw < 0 ||
				       iw >= c->W ? c->zv :
				       c->xs + ((n * c->H + ih) * c->W + iw) *
					       c->xst;
			}
		}
	}
}

static void conv_item(void *arg, int it, int tid)
{
	struct qn *c = arg;
	int64_t b = it / c->nkc, kcn = it % c->nkc;
	int64_t p0 = b * PBLK, np = c->NP - p0 < PBLK ? c->NP - p0 : PBLK;
	int64_t b0 = kcn * c->kc, b1 = b0 + c->kc < c->Kb ? b0 + c->kc : c->Kb;
	int64_t k0 = b0 * 16, m = c->K - k0 < (b1 - b0) * 16 ? c->K - k0 :
						(b1 - b0) * 16;
	const struct npr_quant_params *p = c->p;
	struct npr_qnhwc_args a;

	(void)tid;
	if (b0 >= b1)
		return;
	a = (struct npr_qnhwc_args){
		.ind = c->ind + p0 * c->T, .taps = c->T, .cq = c->Cp / 4,
		.w = c->w + b0 * c->T * c->Cp * 16, .kb = b1 - b0, .m = m,
		.npx = np, .comp = c->comp + k0, .mul = c->mul + k0,
		.add = c->add + k0, .div = p->sy, .f32out = p->f32out,
		.zy = p->zy, .lo = p->lo, .hi = p->hi, .flo = p->flo,
		.fhi = p->fhi,
		.y = (char *)c->y + (p0 * c->K + k0) * c->es, .ldy = c->K,
		.lut = c->lut,
	};
	c->fn(&a);
}

/* output row (n, oh) of the NHWC scratch into the NCHW output */
static void out_row(void *arg, int it, int tid)
{
	struct qn *c = arg;
	int64_t n = it / c->OH, oh = it % c->OH, k, ow;
	int64_t P = c->OH * c->OW, s0 = (int64_t)it * c->OW;

	(void)tid;
	for (k = 0; k < c->K; k++) {
		int64_t o = (n * c->K + k) * P + oh * c->OW;

		if (c->es == 1) {
			const uint8_t *s = (const uint8_t *)c->yt + s0 * c->K;
			uint8_t *d = (uint8_t *)c->yo + o;

			for (ow = 0; ow < c->OW; ow++)
				d[ow] = s[ow * c->K + k];
		} else {
			const float *s = (const float *)c->yt + s0 * c->K;
			float *d = (float *)c->yo + o;

			for (ow = 0; ow < c->OW; ow++)
				d[ow] = s[ow * c->K + k];
		}
	}
}

static void qn_free(struct qn *c)
{
	free(c->xc);
	free(c->zv);
	free(c->ind);
	free(c->comp);
	free(c->mul);
	free(c->add);
	free(c->yt);
}

/**
 * npr_qconv_blocked() - NprQConv with blocked weights
 * @n: the node (struct npr_quant_params, w_layout "blocked").
 * @in: x, w, wsum, mul, add[, table].
 * @out: the output.
 * @fn: the matrix kernel.
 *
 * Return: 0, -ENOMEM, or -EFBIG when the work does not fit the pool's
 * item count.
 */
int npr_qconv_blocked(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out, npr_qnhwc_fn fn)
{
	const struct npr_quant_params *p = n->params;
	const int32_t *wsum = in[2].data;
	int32_t lut[256];
	struct qn c = {
		.p = p, .x = in[0].data, .w = in[1].data, .fn = fn,
		.yo = out[0].data, .es = p->f32out ? sizeof(float) : 1,
		.N = in[0].shape.d[0], .C = in[0].shape.d[1],
		.H = in[0].shape.d[2], .W = in[0].shape.d[3],
		.K = out[0].shape.d[1], .OH = out[0].shape.d[2],
		.OW = out[0].shape.d[3],
	};
	int64_t k, items, th = npr_par_threads();
	int err = -ENOMEM;

	c.Cp = NPR_QC4(c.C);
	c.T = p->kernel[0] * p->kernel[1];
	c.NP = c.N * c.OH * c.OW;
	c.Kb = NPR_QK16(c.K) / 16;
	if (!c.NP)
		return 0;
	if (n->nin == 6) {
		for (k = 0; k < 256; k++)
			lut[k] = ((const uint8_t *)in[5].data)[k];
		c.lut = lut;
	}
	if (c.N * c.H > INT32_MAX || c.N * c.OH > INT32_MAX ||
	    c.NP / PBLK + 1 > INT32_MAX / c.Kb)
		return -EFBIG;
	c.comp = calloc(c.Kb * 16, sizeof(*c.comp));
	c.mul = calloc(c.Kb * 16, sizeof(*c.mul));
	c.add = calloc(c.Kb * 16, sizeof(*c.add));
	c.zv = malloc(c.Cp);
	c.ind = malloc(c.NP * c.T * sizeof(*c.ind));
	if (!c.comp || !c.mul || !c.add || !c.zv || !c.ind)
		goto out;
	for (k = 0; k < c.K; k++)
		c.comp[k] = (int32_t)((uint32_t)p->xz * (uint32_t)wsum[k]);
	memcpy(c.mul, in[3].data, c.K * sizeof(float));
	memcpy(c.add, in[4].data, c.K * sizeof(float));
	memset(c.zv, p->xz, c.Cp);
	if (p->xnhwc && c.C == c.Cp) {
		c.xs = c.x;
		c.xst = c.C;
	} else {
		c.xc = malloc(c.N * c.H * c.W * c.Cp);
		if (!c.xc)
			goto out;
		npr_parallel_for((int)(c.N * c.H), copy_row, &c);
		c.xs = c.xc;
		c.xst = c.Cp;
	}
	npr_parallel_for((int)(c.N * c.OH), ind_row, &c);
	c.y = c.yo;
	if (!p->ynhwc) {
		c.yt = malloc(c.NP * c.K * c.es);
		if (!c.yt)
			goto out;
		c.y = c.yt;
	}
	c.nblk = (c.NP + PBLK - 1) / PBLK;
	c.nkc = 1;
	/* too few blocks for the threads: split the channels too */
	if (c.nblk < 2 * th && c.Kb >= 2)
		c.nkc = (2 * th + c.nblk - 1) / c.nblk;
	if (c.nkc > c.Kb)
		c.nkc = c.Kb;
	c.kc = (c.Kb + c.nkc - 1) / c.nkc;
	/* whole groups of four blocks where there are several */
	if (c.kc > 4)
		c.kc = (c.kc + 3) & ~(int64_t)3;
	c.nkc = (c.Kb + c.kc - 1) / c.kc;
	items = c.nblk * c.nkc;
	npr_parallel_for((int)items, conv_item, &c);
	if (c.yt)
		npr_parallel_for((int)(c.N * c.OH), out_row, &c);
	err = 0;
out:
	qn_free(&c);
	return err;
}

struct relay {
	const struct npr_quant_params *p;
	const struct npr_node *n;
	const void *x;
	const uint8_t *t;	/* NprQLut's table */
	void *y;
	int64_t N, C, S;	/* images, channels, pixels */
	int64_t per;		/* items per image */
	int kind;		/* 0 lut, 1 quantize, 2 dequantize */
};

static inline void relay_one(const struct relay *r, int64_t xi, int64_t yi)
{
	const struct npr_quant_params *p = r->p;
	float v;

	switch (r->kind) {
	case 0:
		((uint8_t *)r->y)[yi] = r->t[((const uint8_t *)r->x)[xi]];
		break;
	case 1:
		v = rne(vmin(vmax(((const float *)r->x)[xi] / p->sy,
				  -1024.0f), 1024.0f)) + (float)p->zy;
		((uint8_t *)r->y)[yi] = (uint8_t)vmin(vmax(v, 0.0f), 255.0f);
		break;
	default:
		((float *)r->y)[yi] = ((float)((const uint8_t *)r->x)[xi] -
				       (float)p->za) * p->sa;
		break;
	}
}

/* image it / per, its pixels from 64 x (it % per), every channel */
static void relay_item(void *arg, int it, int tid)
{
	const struct relay *r = arg;
	int64_t n = it / r->per, s0 = it % r->per * 64;
	int64_t s1 = s0 + 64 < r->S ? s0 + 64 : r->S, c, s;

	(void)tid;
	for (c = 0; c < r->C; c++) {
		int64_t cf = (n * r->C + c) * r->S;	/* NCHW */
		int64_t cl = n * r->S * r->C + c;	/* NHWC */

		for (s = s0; s < s1; s++) {
			if (r->p->xnhwc && !r->p->ynhwc)
				relay_one(r, cl + s * r->C, cf + s);
			else if (!r->p->xnhwc && r->p->ynhwc)
				relay_one(r, cf + s, cl + s * r->C);
			else
				relay_one(r, cf + s, cf + s);
		}
	}
}

/**
 * npr_qew_relayout() - NprQLut, NprQuantize or NprDequantize from one
 *                      layout into the other
 * @n: the node (x_layout differs from y_layout; 4-D input).
 * @in: its inputs.
 * @out: its output.
 *
 * Return: 0, or -EFBIG when the work does not fit the pool's item count.
 */
int npr_qew_relayout(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	struct relay r = {
		.p = n->params, .n = n, .x = in[0].data, .y = out[0].data,
		.N = in[0].shape.d[0], .C = in[0].shape.d[1],
		.S = in[0].shape.d[2] * in[0].shape.d[3],
	};
	int64_t per;

	if (!strcmp(n->type, "NprQLut")) {
		r.t = in[1].data;
	} else {
		r.kind = !strcmp(n->type, "NprQuantize") ? 1 : 2;
	}
	if (!r.N || !r.S || !r.C)
		return 0;
	per = r.per = (r.S + 63) / 64;
	if (per > INT32_MAX / r.N)
		return -EFBIG;
	npr_parallel_for((int)(r.N * per), relay_item, &r);
	return 0;
}
