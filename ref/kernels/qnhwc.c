// SPDX-License-Identifier: MIT
/*
 * NprQConv with blocked weights (lib/ops/quant.h): the output channels
 * lie in the vector lanes and the pixels take turns, so that a 1x1
 * convolution reads its NHWC input as it lies and a wider window needs
 * no packing either: each output pixel has one pointer per tap of its
 * window into the NHWC input (padding points at bytes of the x zero
 * point), built per block of pixels, and the matrix kernel of this CPU
 * (struct npr_qgemm_kern's nhwc, or nhwc_dw for depthwise) reads four
 * channels (depthwise: four taps) at a time through them.  An NCHW
 * input, one whose channels are not a multiple of four or are fewer
 * than 16, is copied NHWC with the padding around it; then each window
 * row is one tap of kw x Cp bytes.  An NCHW output is written NHWC and
 * transposed.  Blocks of pixels (and, when there are few, ranges of
 * output channels) run on the thread pool.
 *
 * Also here: NprQLut, NprQuantize and NprDequantize between the two
 * layouts, and NprQMaxPool and NprQConcat on NHWC tensors.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ops/quant.h"
#include "qew.h"
#include "qmath.h"
#include "qnhwc.h"
#include "ref/gemm.h"
#include "ref/threads.h"

#define PBLK	96	/* output pixels per work item */

/*
 * Below this much work (multiply-adds, or bytes moved) a loop runs on
 * the calling thread: waking the pool costs more than a small layer
 * (some microseconds).
 */
#define SERIAL_WORK	1048576.0

/* npr_parallel_for(), or the calling thread alone for little @work */
static void par_for(int n, npr_par_fn fn, void *arg, double work)
{
	int i;

	if (work >= SERIAL_WORK) {
		npr_parallel_for(n, fn, arg);
		return;
	}
	for (i = 0; i < n; i++)
		fn(arg, i, 0);
}

/*
 * d[j * ldd + i] = s[i * lds + j] for i < rows, j < cols: blocks of 16
 * by 16 bytes with SSE2 unpacks, the edges byte by byte.
 */
static void transpose_u8(uint8_t *d, int64_t ldd, const uint8_t *s,
			 int64_t lds, int64_t rows, int64_t cols)
{
	int64_t i = 0, j, k;

#if defined(__SSE2__)
	for (; i + 16 <= rows; i += 16) {
		for (j = 0; j + 16 <= cols; j += 16) {
			__m128i r[16], t[16];

			for (k = 0; k < 16; k++)
				r[k] = _mm_loadu_si128((const __m128i *)
						       (s + (i + k) * lds + j));
			/* four rounds of unpacks: bytes, words, dwords, qwords */
			for (k = 0; k < 8; k++) {
				__m128i a = r[2 * k], b = r[2 * k + 1];

				t[k] = _mm_unpacklo_epi8(a, b);
				t[k + 8] = _mm_unpackhi_epi8(a, b);
			}
			for (k = 0; k < 4; k++) {
				r[k] = _mm_unpacklo_epi16(t[2 * k], t[2 * k + 1]);
				r[k + 4] = _mm_unpackhi_epi16(t[2 * k],
							      t[2 * k + 1]);
				r[k + 8] = _mm_unpacklo_epi16(t[8 + 2 * k],
							      t[9 + 2 * k]);
				r[k + 12] = _mm_unpackhi_epi16(t[8 + 2 * k],
							       t[9 + 2 * k]);
			}
			for (k = 0; k < 16; k += 4) {
				t[k] = _mm_unpacklo_epi32(r[k], r[k + 1]);
				t[k + 1] = _mm_unpackhi_epi32(r[k], r[k + 1]);
				t[k + 2] = _mm_unpacklo_epi32(r[k + 2], r[k + 3]);
				t[k + 3] = _mm_unpackhi_epi32(r[k + 2], r[k + 3]);
			}
			for (k = 0; k < 16; k += 4) {
				r[k] = _mm_unpacklo_epi64(t[k], t[k + 2]);
				r[k + 1] = _mm_unpackhi_epi64(t[k], t[k + 2]);
				r[k + 2] = _mm_unpacklo_epi64(t[k + 1], t[k + 3]);
				r[k + 3] = _mm_unpackhi_epi64(t[k + 1], t[k + 3]);
			}
			for (k = 0; k < 16; k++)
				_mm_storeu_si128((__m128i *)(d + (j + k) *
							     ldd + i), r[k]);
		}
		for (; j < cols; j++)
			for (k = 0; k < 16; k++)
				d[j * ldd + i + k] = s[(i + k) * lds + j];
	}
#endif
	for (; i < rows; i++)
		for (j = 0; j < cols; j++)
			d[j * ldd + i] = s[i * lds + j];
}

/* output channel @k of pixel @p from its sum @acc, as the vector kernels */
static void out1(const struct npr_qnhwc_args *a, int64_t p, int64_t k,
		 uint32_t acc)
{
	float f;
	int u;

	acc -= (uint32_t)a->comp[k];
	f = fmaf((float)(int32_t)acc, a->mul[k], a->add[k]);
	if (a->f32out) {
		((float *)a->y)[p * a->ldy + k] = vmin(vmax(f, a->flo), a->fhi);
		return;
	}
	f = vmin(vmax(f / a->div, (float)(a->lo - a->zy)),
		 (float)(a->hi - a->zy));
	u = (int)rne(f) + a->zy;
	((uint8_t *)a->y)[p * a->ldy + k] = (uint8_t)(a->lut ? a->lut[u] : u);
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
			int r;

			for (t = 0; t < a->taps; t++)
				for (q = 0; q < a->cq; q++)
					for (r = 0; r < 4; r++)
						acc += (uint32_t)((int32_t)
							ind[t][q * 4 + r] *
							w[(t * a->cq + q) *
							  64 + r]);
			out1(a, p, k, acc);
		}
	}
}

/**
 * npr_qdwn_scalar() - NprQConv's depthwise kernel of blocked weights, in C
 * @a: the pixels and channels (ref/kernels/qgemm.h).
 */
void npr_qdwn_scalar(const struct npr_qnhwc_args *a)
{
	int64_t p, k, t;

	for (p = 0; p < a->npx; p++) {
		const uint8_t *const *ind = a->ind + p * a->taps;

		for (k = 0; k < a->m; k++) {
			const int8_t *w = a->w + (k / 16) * a->cq * 64 +
					  (k % 16) * 4;
			uint32_t acc = 0;

			for (t = 0; t < a->taps; t++)
				acc += (uint32_t)((int32_t)ind[t][a->xc0 + k] *
						  w[(t / 4) * 64 + t % 4]);
			out1(a, p, k, acc);
		}
	}
}

struct qn {
	const struct npr_quant_params *p;
	const uint8_t *x;	/* input 0 as given */
	uint8_t *xc;		/* its NHWC copy of Cp channels (keep()), or NULL */
	const uint8_t *xs;	/* the NHWC pixels read: x or xc */
	int64_t xst;		/* bytes from one of them to the next */
	uint8_t *zv;		/* Cp bytes of the x zero point */
	bool dw;		/* depthwise */
	/*
	 * xc: x copied NHWC with Cp channels, PH x PW pixels an image, x at
	 * (pt, pl) and the zero point around it, so that every window lies
	 * in it; rows: a window's rows are its taps (cq = kw x Cp / 4).
	 */
	int64_t PH, PW, pt, pl;
	bool rows;
	const int8_t *w;
	int32_t *comp;
	float *mul, *add;	/* padded to Kb x 16 */
	const int32_t *lut;
	const uint8_t *lut8;
	npr_qnhwc_fn fn;
	void *y;		/* NHWC output: the tensor's, or yt */
	void *yt;		/* NHWC scratch of an NCHW output (keep()) */
	void *yo;		/* the output tensor */
	size_t es;
	int64_t N, C, H, W, K, OH, OW, Cp, T, NP, Kb;
	int64_t nblk, nkc, kc;	/* pixel blocks; ranges of kc blocks */
	bool nomem;
};

/* row (n, h) of x into xc: NHWC with Cp channels, padded with xz */
static void copy_row(void *arg, int it, int tid)
{
	struct qn *c = arg;
	int64_t n = it / c->H, h = it % c->H, w;
	uint8_t *d = c->xc + ((n * c->PH + c->pt + h) * c->PW + c->pl) * c->Cp;
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
	if (c->Cp == 4) {
		/* an image's few planes: a word per pixel */
		const uint8_t *s = c->x + (n * c->C * c->H + h) * c->W;
		const uint8_t *s1 = c->C > 1 ? s + c->H * c->W : NULL;
		const uint8_t *s2 = c->C > 2 ? s1 + c->H * c->W : NULL;
		const uint8_t *s3 = c->C > 3 ? s2 + c->H * c->W : NULL;

		for (w = 0; w < c->W; w++) {
			d[4 * w] = s[w];
			d[4 * w + 1] = s1 ? s1[w] : z;
			d[4 * w + 2] = s2 ? s2[w] : z;
			d[4 * w + 3] = s3 ? s3[w] : z;
		}
		return;
	}
	transpose_u8(d, c->Cp, c->x + (n * c->C * c->H + h) * c->W,
		     c->H * c->W, c->C, c->W);
	for (w = 0; c->C < c->Cp && w < c->W; w++)
		memset(d + w * c->Cp + c->C, z, c->Cp - c->C);
}

/* the bytes tap (i, j) of the window at (n, ih0, iw0) reads in x */
static inline const uint8_t *tap(const struct qn *c, int64_t n, int64_t ih0,
				 int64_t iw0, int64_t i, int64_t j)
{
	int64_t ih = ih0 + i * c->p->dil[0], iw = iw0 + j * c->p->dil[1];

	return ih < 0 || ih >= c->H || iw < 0 || iw >= c->W ? c->zv :
	       c->xs + ((n * c->H + ih) * c->W + iw) * c->xst;
}

/*
 * Pixels [p0, p0 + np): each one's pointers into @ind, a tap (or, with
 * c->rows, a window row) each.  In the padded copy every window lies
 * whole; in x itself, windows inside it go by a row step and a column
 * step, the others tap by tap.
 */
static void indirect(const struct qn *c, int64_t p0, int64_t np,
		     const uint8_t **ind)
{
	const struct npr_quant_params *p = c->p;
	int64_t kh = p->kernel[0], kw = p->kernel[1], P = c->OH * c->OW;
	int64_t n = p0 / P, oh = p0 % P / c->OW, ow = p0 % c->OW, q, i, j;
	int64_t W = c->xc ? c->PW : c->W;
	int64_t rs = p->dil[0] * W * c->xst, cs = p->dil[1] * c->xst;
	int64_t eh = (kh - 1) * p->dil[0], ew = (kw - 1) * p->dil[1];

	for (q = 0; q < np; q++) {
		int64_t ih0 = oh * p->stride[0] - p->pb[0];
		int64_t iw0 = ow * p->stride[1] - p->pb[1];
		const uint8_t *b;

		if (c->xc) {
			b = c->xc + ((n * c->PH + ih0 + c->pt) * c->PW + iw0 +
				     c->pl) * c->Cp;
			for (i = 0; i < kh; i++)
				for (j = 0; j < (c->rows ? 1 : kw); j++)
					*ind++ = b + i * rs + j * cs;
		} else if (ih0 >= 0 && ih0 + eh < c->H && iw0 >= 0 &&
			   iw0 + ew < c->W) {
			b = c->xs + ((n * c->H + ih0) * c->W + iw0) * c->xst;
			for (i = 0; i < kh; i++)
				for (j = 0; j < kw; j++)
					*ind++ = b + i * rs + j * cs;
		} else {
			for (i = 0; i < kh; i++)
				for (j = 0; j < kw; j++)
					*ind++ = tap(c, n, ih0, iw0, i, j);
		}
		if (++ow == c->OW) {
			ow = 0;
			if (++oh == c->OH) {
				oh = 0;
				n++;
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
	int64_t taps = c->rows ? c->p->kernel[0] : c->T;
	const uint8_t **ind;

	(void)tid;
	if (b0 >= b1)
		return;
	ind = malloc(np * taps * sizeof(*ind));
	if (!ind) {
		c->nomem = true;
		return;
	}
	indirect(c, p0, np, ind);
	a = (struct npr_qnhwc_args){
		.ind = ind, .taps = taps,
		.cq = c->dw ? (c->T + 3) / 4 : c->T * c->Cp / 4 / taps,
		.xc0 = c->dw ? k0 : 0,
		.w = c->w + b0 * (c->dw ? (c->T + 3) / 4 * 64 :
					  c->T * c->Cp * 16),
		.kb = b1 - b0, .m = m,
		.npx = np, .comp = c->comp + k0, .mul = c->mul + k0,
		.add = c->add + k0, .div = p->sy, .f32out = p->f32out,
		.zy = p->zy, .lo = p->lo, .hi = p->hi, .flo = p->flo,
		.fhi = p->fhi,
		.y = (char *)c->y + (p0 * c->K + k0) * c->es, .ldy = c->K,
		.lut = c->lut, .lut8 = c->lut8,
	};
	c->fn(&a);
	free(ind);
}

/* output row (n, oh) of the NHWC scratch into the NCHW output */
static void out_row(void *arg, int it, int tid)
{
	struct qn *c = arg;
	int64_t n = it / c->OH, oh = it % c->OH, k, ow, k0, ow0;
	int64_t P = c->OH * c->OW, s0 = (int64_t)it * c->OW;

	(void)tid;
	if (c->es == 1) {
		transpose_u8((uint8_t *)c->yo + n * c->K * P + oh * c->OW, P,
			     (const uint8_t *)c->yt + s0 * c->K, c->K, c->OW,
			     c->K);
		return;
	}
	/* f32: blocks of 16 pixels by 16 channels */
	for (k0 = 0; k0 < c->K; k0 += 16)
		for (ow0 = 0; ow0 < c->OW; ow0 += 16) {
			int64_t k1 = k0 + 16 < c->K ? k0 + 16 : c->K;
			int64_t ow1 = ow0 + 16 < c->OW ? ow0 + 16 : c->OW;
			const float *s = (const float *)c->yt + s0 * c->K;
			float *d = (float *)c->yo + n * c->K * P + oh * c->OW;

			for (k = k0; k < k1; k++)
				for (ow = ow0; ow < ow1; ow++)
					d[k * P + ow] = s[ow * c->K + k];
		}
}

/*
 * The caller's copy of x and NHWC output: thread-local scratch kept by
 * the calling thread and grown to the largest it needed, as the f32
 * convolutions keep theirs (npr_scratch(): freed at thread exit and when
 * a compiled model goes away); a fresh block of that size a call would
 * cost its page faults.
 */
static uint8_t *keep(int i, size_t bytes)
{
	static _Thread_local float *buf[2];
	static _Thread_local size_t cap[2];

	return (uint8_t *)npr_scratch(&buf[i], &cap[i], (bytes + 3) / 4);
}

static void qn_free(struct qn *c)
{
	free(c->zv);
	free(c->comp);
	free(c->mul);
	free(c->add);
}

/**
 * npr_qconv_blocked() - NprQConv with blocked weights
 * @n: the node (struct npr_quant_params, w_layout "blocked").
 * @in: x, w, wsum, mul, add[, table].
 * @out: the output.
 * @kern: the kernels of this CPU.
 *
 * Return: 0, -ENOMEM, or -EFBIG when the work does not fit the pool's
 * item count.
 */
int npr_qconv_blocked(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out,
		      const struct npr_qgemm_kern *kern)
{
	const struct npr_quant_params *p = n->params;
	const int32_t *wsum = in[2].data;
	int32_t lut[256];
	struct qn c = {
		.p = p, .x = in[0].data, .w = in[1].data,
		.dw = p->groups > 1,
		.yo = out[0].data, .es = p->f32out ? sizeof(float) : 1,
		.N = in[0].shape.d[0], .C = in[0].shape.d[1],
		.H = in[0].shape.d[2], .W = in[0].shape.d[3],
		.K = out[0].shape.d[1], .OH = out[0].shape.d[2],
		.OW = out[0].shape.d[3],
	};
	int64_t k, items, th = npr_par_threads();
	int err = -ENOMEM;

	c.fn = c.dw ? kern->nhwc_dw : kern->nhwc;
	/* depthwise reads the channels a block at a time: no padding */
	c.Cp = c.dw ? c.C : NPR_QC4(c.C);
	c.T = p->kernel[0] * p->kernel[1];
	c.NP = c.N * c.OH * c.OW;
	c.Kb = NPR_QK16(c.K) / 16;
	if (!c.NP)
		return 0;
	if (n->nin == 6) {
		for (k = 0; k < 256; k++)
			lut[k] = ((const uint8_t *)in[5].data)[k];
		c.lut = lut;
		c.lut8 = in[5].data;
	}
	if (c.N * c.H > INT32_MAX || c.N * c.OH > INT32_MAX ||
	    c.NP / PBLK + 1 > INT32_MAX / c.Kb)
		return -EFBIG;
	c.comp = calloc(c.Kb * 16, sizeof(*c.comp));
	c.mul = calloc(c.Kb * 16, sizeof(*c.mul));
	c.add = calloc(c.Kb * 16, sizeof(*c.add));
	c.zv = malloc(c.Cp);
	if (!c.comp || !c.mul || !c.add || !c.zv)
		goto out;
	for (k = 0; k < c.K; k++)
		c.comp[k] = (int32_t)((uint32_t)p->xz * (uint32_t)wsum[k]);
	memcpy(c.mul, in[3].data, c.K * sizeof(float));
	memcpy(c.add, in[4].data, c.K * sizeof(float));
	memset(c.zv, p->xz, c.Cp);
	/*
	 * x is read in place when it is NHWC of Cp channels, not too few;
	 * else copied, padded, and then a window's rows are its taps.
	 */
	if (p->xnhwc && c.C == c.Cp && (c.Cp >= 16 || c.dw)) {
		c.xs = c.x;
		c.xst = c.C;
	} else {
		int64_t eh = (c.OH - 1) * p->stride[0] +
			     (p->kernel[0] - 1) * p->dil[0] + 1;
		int64_t ew = (c.OW - 1) * p->stride[1] +
			     (p->kernel[1] - 1) * p->dil[1] + 1;

		c.pt = p->pb[0];
		c.pl = p->pb[1];
		c.PH = eh > c.pt + c.H ? eh : c.pt + c.H;
		c.PW = ew > c.pl + c.W ? ew : c.pl + c.W;
		c.xc = keep(0, c.N * c.PH * c.PW * c.Cp);
		if (!c.xc)
			goto out;
		if (c.PH != c.H || c.PW != c.W)
			memset(c.xc, p->xz, c.N * c.PH * c.PW * c.Cp);
		par_for((int)(c.N * c.H), copy_row, &c,
			(double)c.N * c.H * c.W * c.Cp);
		c.xs = c.xc;
		c.xst = c.Cp;
		c.rows = !c.dw && p->dil[1] == 1;
	}
	c.y = c.yo;
	if (!p->ynhwc) {
		c.yt = keep(1, c.NP * c.K * c.es);
		if (!c.yt)
			goto out;
		c.y = c.yt;
	}
	c.nblk = (c.NP + PBLK - 1) / PBLK;
	/*
	 * Several threads: split the channels too, into ranges of four
	 * blocks where they allow, until there are some eight items a
	 * thread, so that the last ones even the threads out.
	 */
	c.nkc = th > 1 ? (8 * th + c.nblk - 1) / c.nblk : 1;
	if (c.nkc > (c.Kb + 3) / 4)
		c.nkc = (c.Kb + 3) / 4;
	if (th > 1 && c.nblk < 2 * th && c.nkc < 2 * th)
		c.nkc = 2 * th < c.Kb ? 2 * th : c.Kb;
	c.kc = (c.Kb + c.nkc - 1) / c.nkc;
	/* whole groups of four blocks where there are several */
	if (c.kc > 4)
		c.kc = (c.kc + 3) & ~(int64_t)3;
	c.nkc = (c.Kb + c.kc - 1) / c.kc;
	items = c.nblk * c.nkc;
	par_for((int)items, conv_item, &c,
		(double)c.NP * c.K * c.T * (c.dw ? 1 : c.Cp));
	if (c.nomem)
		goto out;
	if (c.yt)
		par_for((int)(c.N * c.OH), out_row, &c, (double)c.NP * c.K);
	err = 0;
out:
	qn_free(&c);
	return err;
}

struct relay {
	const struct npr_quant_params *p;
	const void *x;
	const uint8_t *t;	/* NprQLut's table, NULL for the identity */
	void *y;
	int64_t N, C, S;	/* images, channels, pixels */
	int64_t per;		/* items per image */
	int kind;		/* 0 lut, 1 quantize, 2 dequantize */
	bool nomem;
	const struct npr_qew_kern *ew;	/* the element-wise kernels */
};

#define RCH	64	/* pixels per item */

/* image it / per, its pixels from RCH x (it % per), every channel */
static void relay_item(void *arg, int it, int tid)
{
	struct relay *r = arg;
	const struct npr_quant_params *p = r->p;
	int64_t n = it / r->per, s0 = it % r->per * RCH, C = r->C, S = r->S;
	int64_t cnt = S - s0 < RCH ? S - s0 : RCH, c, j;
	uint8_t *tmp = NULL, *y8;

	(void)tid;
	if (r->kind) {
		tmp = malloc(cnt * C);
		if (!tmp) {
			r->nomem = true;
			return;
		}
	}
	if (p->xnhwc) {
		/* NHWC u8 [cnt][C] -> NCHW rows */
		const uint8_t *x = (const uint8_t *)r->x + (n * S + s0) * C;

		if (r->kind == 2) {
			float *y = (float *)r->y + n * C * S + s0;

			transpose_u8(tmp, cnt, x, C, cnt, C);
			for (c = 0; c < C; c++)
				r->ew->dequantize(tmp + c * cnt, y + c * S, cnt,
						  p->sa, p->za);
			free(tmp);
			return;
		}
		y8 = (uint8_t *)r->y + n * C * S + s0;
		transpose_u8(y8, S, x, C, cnt, C);
		for (c = 0; r->t && c < C; c++)
			for (j = 0; j < cnt; j++)
				y8[c * S + j] = r->t[y8[c * S + j]];
		return;
	}
	/* NCHW rows -> NHWC u8 [cnt][C] */
	y8 = (uint8_t *)r->y + (n * S + s0) * C;
	if (r->kind == 1) {
		const float *x = (const float *)r->x + n * C * S + s0;

		for (c = 0; c < C; c++)
			r->ew->quantize(x + c * S, tmp + c * cnt, cnt, p->sy,
					p->zy);
		transpose_u8(y8, C, tmp, cnt, C, cnt);
		free(tmp);
		return;
	}
	transpose_u8(y8, C, (const uint8_t *)r->x + n * C * S + s0, S, C, cnt);
	for (j = 0; r->t && j < cnt * C; j++)
		y8[j] = r->t[y8[j]];
}

/**
 * npr_qew_relayout() - NprQLut, NprQuantize or NprDequantize from one
 *                      layout into the other
 * @n: the node (x_layout differs from y_layout; 4-D input).
 * @in: its inputs.
 * @out: its output.
 *
 * Return: 0, -ENOMEM, or -EFBIG when the work does not fit the pool's
 * item count.
 */
int npr_qew_relayout(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	struct relay r = {
		.p = n->params, .x = in[0].data, .y = out[0].data,
		.ew = npr_qew_best(),
		.N = in[0].shape.d[0], .C = in[0].shape.d[1],
		.S = in[0].shape.d[2] * in[0].shape.d[3],
	};
	int64_t per, i;

	if (!strcmp(n->type, "NprQLut")) {
		r.t = in[1].data;
		for (i = 0; i < 256 && r.t[i] == i; i++)
			;
		if (i == 256)
			r.t = NULL;
	} else {
		r.kind = !strcmp(n->type, "NprQuantize") ? 1 : 2;
	}
	if (!r.N || !r.S || !r.C)
		return 0;
	per = r.per = (r.S + RCH - 1) / RCH;
	if (per > INT32_MAX / r.N)
		return -EFBIG;
	par_for((int)(r.N * per), relay_item, &r,
		(double)r.N * r.C * r.S);
	return r.nomem ? -ENOMEM : 0;
}

/* the taps of a pooling window */
static int64_t p_taps(const struct npr_quant_params *p)
{
	return p->kernel[0] * p->kernel[1];
}

struct qpool {
	const struct npr_quant_params *p;
	const uint8_t *x;
	uint8_t *y;
	int64_t H, W, C, OH, OW;
};

/* d[c] = max(d[c], s[c]) (vectorized at -O3) */
static void max_into(uint8_t *restrict d, const uint8_t *restrict s,
		     int64_t n)
{
	int64_t c;

	for (c = 0; c < n; c++)
		d[c] = s[c] > d[c] ? s[c] : d[c];
}

/*
 * The taps [*lo, *hi) of a window of @k taps @dil apart starting at
 * @base that fall inside [0, @n): a window far larger than the input
 * visits only those (a 65536-tap window would otherwise loop 2^32 times a
 * pixel).
 */
static void taps_inside(int64_t base, int64_t dil, int64_t n, int64_t k,
			int64_t *lo, int64_t *hi)
{
	*lo = base >= 0 ? 0 : (-base + dil - 1) / dil;
	*hi = n - 1 - base < 0 ? 0 : (n - 1 - base) / dil + 1;
	if (*hi > k)
		*hi = k;
	if (*lo > *hi)
		*lo = *hi;
}

/* output row @it (image x row): every pixel's channels at once */
static void qpool_row(void *arg, int it, int tid)
{
	const struct qpool *q = arg;
	const struct npr_quant_params *p = q->p;
	int64_t n = it / q->OH, oh = it % q->OH, ow, i, j, i0, i1, j0, j1;
	uint8_t *y = q->y + (int64_t)it * q->OW * q->C;

	(void)tid;
	taps_inside(oh * p->stride[0] - p->pb[0], p->dil[0], q->H,
		    p->kernel[0], &i0, &i1);
	for (ow = 0; ow < q->OW; ow++, y += q->C) {
		int64_t bw = ow * p->stride[1] - p->pb[1];

		/* padding reads 0, the smallest u8: it never wins */
		memset(y, 0, q->C);
		taps_inside(bw, p->dil[1], q->W, p->kernel[1], &j0, &j1);
		for (i = i0; i < i1; i++) {
			int64_t ih = oh * p->stride[0] - p->pb[0] +
				     i * p->dil[0];

			for (j = j0; j < j1; j++)
				max_into(y, q->x + ((n * q->H + ih) * q->W +
						    bw + j * p->dil[1]) * q->C,
					 q->C);
		}
	}
}

/**
 * npr_qmaxpool() - NprQMaxPool
 * @n: the node (struct npr_quant_params).
 * @in: x, NHWC.
 * @out: y, NHWC.
 *
 * Return: 0, or -EFBIG when the rows do not fit the pool's item count.
 */
int npr_qmaxpool(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	struct qpool q = {
		.p = n->params, .x = in[0].data, .y = out[0].data,
		.C = in[0].shape.d[1], .H = in[0].shape.d[2],
		.W = in[0].shape.d[3], .OH = out[0].shape.d[2],
		.OW = out[0].shape.d[3],
	};
	int64_t rows = in[0].shape.d[0] * q.OH;

	if (rows > INT32_MAX)
		return -EFBIG;
	if (rows && q.OW && q.C)
		par_for((int)rows, qpool_row, &q,
			(double)rows * q.OW * q.C * p_taps(q.p));
	return 0;
}

struct qcat {
	const struct npr_tensor *in;
	int nin;
	uint8_t *y;
	int64_t C, S;	/* output channels; pixels */
};

/* pixels [256 it, 256 it + 256): each input's channels in turn */
static void qcat_item(void *arg, int it, int tid)
{
	const struct qcat *q = arg;
	int64_t p0 = (int64_t)it * 256, p1 = p0 + 256 < q->S ? p0 + 256 : q->S;
	int64_t p, c0 = 0;
	int i;

	(void)tid;
	for (i = 0; i < q->nin; i++) {
		int64_t ci = q->in[i].shape.d[1];
		const uint8_t *x = q->in[i].data;

		for (p = p0; p < p1; p++)
			memcpy(q->y + p * q->C + c0, x + p * ci, ci);
		c0 += ci;
	}
}

/**
 * npr_qconcat() - NprQConcat
 * @n: the node.
 * @in: the inputs, NHWC.
 * @out: y, NHWC.
 *
 * Return: 0, or -EFBIG when the pixels do not fit the pool's item count.
 */
int npr_qconcat(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out)
{
	struct qcat q = {
		.in = in, .nin = n->nin, .y = out[0].data,
		.C = out[0].shape.d[1],
		.S = out[0].shape.d[0] * out[0].shape.d[2] * out[0].shape.d[3],
	};

	if ((q.S + 255) / 256 > INT32_MAX)
		return -EFBIG;
	if (q.S && q.C)
		par_for((int)((q.S + 255) / 256), qcat_item, &q,
			(double)q.S * q.C);
	return 0;
}
