// SPDX-License-Identifier: MIT
/*
 * Fast convolution, the plans: the path each convolution takes (GEMM on
 * the input, im2col packing into GEMM panels, direct, depthwise,
 * pixel-major, Winograd), its weights packed for it, its epilogue, the
 * plan of a fused step from the description the fusion pass
 * (lib/passes/fuse.c) gives, and the prepared buffers blobs store.
 * Running them is in run.c.  See conv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"
#include "internal.h"
#include "ref/threads.h"
#include "ref/kernels/eltwise.h"
#include "ops/nn.h"

static bool use_t(struct npr_conv_plan *p, const struct npr_gemm_kern *kern);
static int plan_t(struct npr_conv_plan *p, const float *w);
static bool wino_fits(const struct npr_conv_plan *p);
static int wino_new(struct npr_conv_plan *p, const float *w);
static void wino_free(struct npr_conv_plan *p);


/**
 * npr_conv_plan_free() - free a plan and what it owns
 * @p: the plan, or NULL.  Buffers it borrowed from a blob
 *     (npr_conv_plan_use_prepared()) stay the blob's.
 */
void npr_conv_plan_free(struct npr_conv_plan *p)
{
	int64_t g;

	if (!p)
		return;
	if (p->a) {
		for (g = 0; g < p->d.G && !p->borrowed; g++)
			npr_gemm_a_free(&p->a[g]);
		free(p->a);
	}
	if (!p->borrowed) {
		free(p->wdw);
		free(p->wt);
	}
	wino_free(p);
	free(p->boff);
	free(p->bias);
	free(p->pslope);
	if (p->dwt) {
		free(p->dwt->m);
		free(p->dwt->cm);
	}
	free(p->dwt);
	free(p);
}

/*
 * The tables of npr_dw_run_avx512() for a depthwise plan that fits it:
 * stride 1 and OW == W, and either 3x3 with padding 1 and OH == H (the
 * shifting kernel, any size) or a plane of at most DW_RUN_MAXPIX outputs
 * (a masked load per tap).  NULL when it does not fit, or without memory
 * (the plane kernels then run).
 */
#define DW_RUN_MAXPIX	1024
static struct npr_dw_tab *dw_tab_new(const struct npr_conv_desc *d)
{
	int64_t taps = d->kh * d->kw, v, l, ky, kx;
	struct npr_dw_tab *t;
	bool shift;

	if (npr_env(NPR_ENV_CONV_DW_NO_RUN))
		return NULL;
	if (d->sh == 2 && d->sw == 2 && d->kh == 3 && d->kw == 3 &&
	    d->dh == 1 && d->dw == 1 && d->ph == 1 && d->pw == 1 &&
	    !npr_env(NPR_ENV_CONV_DW_NO_SHIFT)) {
		t = calloc(1, sizeof(*t));
		if (t) {
			t->s2 = true;
			t->C = d->C;
			t->H = d->H; t->W = d->W;
			t->OH = d->OH; t->OW = d->OW;
		}
		return t;
	}
	if (d->sh != 1 || d->sw != 1 || d->OW != d->W || taps > NPR_DW_TAPS)
		return NULL;
	shift = d->kh == 3 && d->kw == 3 && d->dh == 1 && d->dw == 1 &&
		d->ph == 1 && d->pw == 1 && d->OH == d->H &&
		!npr_env(NPR_ENV_CONV_DW_NO_SHIFT);
	if (!shift && d->OH * d->OW > DW_RUN_MAXPIX)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->npix = d->OH * d->OW;
	t->ipix = d->H * d->W;
	t->nv = (t->npix + 15) / 16;
	t->taps = taps;
	t->C = d->C;
	t->H = d->H; t->W = d->W;
	t->OH = d->OH; t->OW = d->OW;
	if (shift) {
		t->cm = calloc(2 * t->nv, sizeof(*t->cm));
		if (!t->cm) {
			free(t);
			return NULL;
		}
		/*
		 * The lanes whose pixel has a left, a right neighbour: all
		 * but the first and the last pixel of each row (OW == W), by
		 * row rather than by pixel, which a plane of 40,000 pixels
		 * made a good part of a cache hit's planning.
		 */
		for (v = 0; v < t->nv; v++) {
			l = t->npix - 16 * v < 16 ? t->npix - 16 * v : 16;
			t->cm[2 * v] = (uint16_t)((1u << l) - 1);
			t->cm[2 * v + 1] = t->cm[2 * v];
		}
		for (v = 0; v < t->npix; v += d->W) {
			l = v + d->W - 1;
			t->cm[2 * (v / 16)] &= (uint16_t)~(1u << (v % 16));
			t->cm[2 * (l / 16) + 1] &= (uint16_t)~(1u << (l % 16));
		}
		return t;
	}
	t->m = calloc(t->nv * taps, sizeof(*t->m));
	if (!t->m) {
		free(t);
		return NULL;
	}
	for (ky = 0; ky < d->kh; ky++)
		for (kx = 0; kx < d->kw; kx++)
			t->off[ky * d->kw + kx] = (int32_t)((ky * d->dh - d->ph) *
				d->W + kx * d->dw - d->pw);
	for (v = 0; v < t->nv; v++)
		for (l = 0; l < 16 && 16 * v + l < t->npix; l++) {
			int64_t oy = (16 * v + l) / d->OW, ox = (16 * v + l) % d->OW;

			for (ky = 0; ky < d->kh; ky++)
				for (kx = 0; kx < d->kw; kx++) {
					int64_t iy = oy + ky * d->dh - d->ph;
					int64_t ix = ox + kx * d->dw - d->pw;

					if (iy >= 0 && iy < d->H && ix >= 0 &&
					    ix < d->W)
						t->m[v * taps + ky * d->kw + kx] |=
							(uint16_t)(1u << l);
				}
		}
	return t;
}

/*
 * Can a pixel-major plan pool @pd's windows over its output rows?  Every
 * window must hold a pixel of the output (the scalar kernel gives 0 for
 * an empty one), and the rows of one window must fit the row ring.
 */
static bool pool_fits(const struct npr_conv_desc *d,
		      const struct npr_pool_desc *pd)
{
	int64_t o;

	if (pd->kh < 1 || pd->kw < 1 || pd->kh > 16 || pd->sh < 1 ||
	    pd->sw < 1 || pd->ph < 0 || pd->pw < 0 || pd->OH < 1 ||
	    pd->OW < 1 || pd->ph >= pd->kh || pd->pw >= pd->kw)
		return false;
	for (o = 0; o < pd->OH; o++)
		if (o * pd->sh - pd->ph >= d->OH)
			return false;
	for (o = 0; o < pd->OW; o++)
		if (o * pd->sw - pd->pw >= d->OW)
			return false;
	return true;
}

/**
 * npr_conv_plan_new() - plan a convolution with weights @w
 * @d: geometry.
 * @w: weights, copied (packed); need not outlive the plan.  NULL: none
 *     (a plan for npr_conv_plan_use_prepared()).
 * @kern: GEMM micro-kernel, NULL for the best one.
 * @out: Out. The plan, written on success; free with
 *       npr_conv_plan_free().
 *
 * Return: 0, -ENOMEM.
 */
int npr_conv_plan_new(const struct npr_conv_desc *d, const float *w,
		      const struct npr_gemm_kern *kern,
		      struct npr_conv_plan **out)
{
	return npr_conv_plan_new_pool(d, NULL, w, kern, out);
}

/**
 * npr_conv_plan_pooled() - does the plan do the MaxPool it was given?
 * @p: a plan from npr_conv_plan_new_pool().
 *
 * Return: true when it writes the pooled output.
 */
bool npr_conv_plan_pooled(const struct npr_conv_plan *p)
{
	return p->pooled;
}

/**
 * npr_conv_plan_set_mean() - fuse the mean over each output plane
 * @p: a plan whose epilogue (without residual) is set.
 *
 * The plan then writes [N, K] means (of the outputs after the epilogue)
 * instead of [N, K, OH, OW]: a ReduceMean over H and W (global average
 * pooling) that alone reads the output.  Only the pixel-major path does
 * it, without a fused pool or a residual, and not with NPR_CONV_NO_MEAN
 * set.
 *
 * Return: 0, or -EOPNOTSUPP when the plan's path does not do it.
 */
int npr_conv_plan_set_mean(struct npr_conv_plan *p)
{
	if (p->path != PATH_T || p->pooled || p->residual ||
	    npr_env(NPR_ENV_CONV_NO_MEAN))
		return -EOPNOTSUPP;
	wino_free(p);	/* the pixel-major path fuses the mean */
	p->mean = true;
	return 0;
}

/**
 * npr_conv_plan_new_pool() - npr_conv_plan_new(), the MaxPool @pd fused
 * when the plan's path can pool rows while they are in cache
 * @d: geometry.
 * @pd: a MaxPool that alone reads the output (after bias and
 *      activation, which commute with max), or NULL.
 * @w: weights, as npr_conv_plan_new().
 * @kern: GEMM micro-kernel, NULL for the best one.
 * @out: Out. The plan, written on success; free with
 *       npr_conv_plan_free().
 *
 * npr_conv_plan_pooled() tells whether it was fused: the plan then
 * writes the pooled output, [N, K, @pd->OH, @pd->OW], and takes no
 * residual.
 *
 * Return: 0, -ENOMEM.
 */
int npr_conv_plan_new_pool(const struct npr_conv_desc *d,
			   const struct npr_pool_desc *pd, const float *w,
			   const struct npr_gemm_kern *kern,
			   struct npr_conv_plan **out)
{
	struct npr_conv_plan *p;
	int64_t taps = d->kh * d->kw, g;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->d = *d;
	p->cg = d->C / d->G;
	p->kg = d->K / d->G;
	if (!kern)
		kern = npr_gemm_kern_best();
	p->kern = kern;
	if (p->cg == 1 && p->kg == 1 && d->G > 1) {
		p->path = PATH_DW;
		if (w) {
			p->wdw = malloc(sizeof(float) * d->C * taps);
			if (!p->wdw)
				goto nomem;
			memcpy(p->wdw, w, sizeof(float) * d->C * taps);
		}
		p->dw_plane = npr_dw_plane_generic;
		p->dw_flat = npr_dw_flat_generic;
#if defined(__x86_64__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") &&
		    strcmp(kern->name, "scalar")) {
			p->dw_plane = npr_dw_plane_avx512;
			p->dw_flat = npr_dw_flat_avx512;
			if (!npr_env(NPR_ENV_CONV_DW_FLAT)) {
				p->dw_vec = npr_dw_vec_avx512;
				p->dwt = dw_tab_new(d);
			}
		}
#endif
		if (d->sh != d->sw || d->sw > 2)
			p->dw_flat = NULL;
		/*
		 * one output pixel whose window is the plane: a dot product
		 * of the plane with the weights, in partial sums (the plane
		 * kernel's one chain of 128 additions over a 16x8 plane
		 * took 0.4 us a channel)
		 */
		if (d->OH == 1 && d->OW == 1 && d->kh == d->H &&
		    d->kw == d->W && !d->ph && !d->pw && d->dh == 1 &&
		    d->dw == 1) {
			p->dw_dot = npr_dot_rows_generic;
#if defined(__x86_64__)
			if (__builtin_cpu_supports("avx512f") &&
			    strcmp(kern->name, "scalar"))
				p->dw_dot = npr_dot_rows_avx512;
#endif
		}
		*out = p;
		return 0;
	}
	p->pack = npr_pack_im2col_generic;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && strcmp(kern->name, "scalar"))
		p->pack = npr_pack_im2col_avx512;
#endif
	p->path = taps == 1 && d->sh == 1 && d->sw == 1 && !d->ph && !d->pw &&
		  d->OH == d->H && d->OW == d->W ? PATH_GEMM1X1 : PATH_IM2COL;
	p->unpad = p->pack == npr_pack_im2col_generic ?
		   npr_unpad_rows_generic : npr_unpad_rows_avx512;
	/*
	 * Stride 1, k x k: no im2col at all.  The input is copied once into
	 * a zero-padded plane of pitch wp = OW + (kw - 1) * dw, the output
	 * is computed at that pitch (kw - 1 columns per row dropped after),
	 * and GEMM row (c, ky, kx) is the padded plane at a fixed offset.
	 */
	if (p->path == PATH_IM2COL && d->sh == 1 && d->sw == 1 &&
	    kern->fn_direct && !npr_env(NPR_ENV_CONV_NO_DIRECT)) {
		int64_t c, ky, kx, i = 0;

		p->hp = d->OH + (d->kh - 1) * d->dh;
		p->wp = d->OW + (d->kw - 1) * d->dw;
		p->boff = malloc(sizeof(int64_t) * p->cg * taps);
		if (!p->boff)
			goto nomem;
		for (c = 0; c < p->cg; c++)
			for (ky = 0; ky < d->kh; ky++)
				for (kx = 0; kx < d->kw; kx++)
					p->boff[i++] = c * p->hp * p->wp +
						       ky * d->dh * p->wp +
						       kx * d->dw;
		p->path = PATH_DIRECT;
	} else if (p->path == PATH_GEMM1X1 && kern->fn_direct &&
		   (p->kg <= 48 || npr_env(NPR_ENV_CONV_DIRECT_1X1)) &&
		   !npr_env(NPR_ENV_CONV_PACK_1X1)) {
		/*
		 * B read in place: with at most six micro-panels of A to
		 * reuse a packed B, packing it does not pay (7-11% on the
		 * 16-32 channel 1x1 layers of mobilenet_v2, 7-9% on the 48
		 * channel ones of squeezenet1_1).
		 */
		int64_t c;

		p->boff = malloc(sizeof(int64_t) * p->cg);
		if (!p->boff)
			goto nomem;
		for (c = 0; c < p->cg; c++)
			p->boff[c] = c * d->H * d->W;
	}
	if (pd && pool_fits(d, pd)) {
		p->pooled = true;	/* use_t() may still say no */
		p->pool = *pd;
	}
	if (use_t(p, kern)) {
		err = plan_t(p, w);
		if (!err && w && wino_fits(p))
			err = wino_new(p, w);
		if (err)
			goto nomem;
		*out = p;
		return 0;
	}
	p->pooled = false;
	p->a = calloc(d->G, sizeof(*p->a));
	if (!p->a)
		goto nomem;
	for (g = 0; g < d->G; g++) {
		int64_t kdim = p->cg * taps;

		if (!w) {	/* npr_conv_plan_use_prepared() comes next */
			p->a[g].kern = kern;
			p->a[g].M = p->kg;
			p->a[g].K = kdim;
			p->a[g].Mp = (p->kg + kern->mr - 1) / kern->mr * kern->mr;
			continue;
		}
		err = npr_gemm_a_pack(&p->a[g], kern, w + g * p->kg * kdim,
				      p->kg, kdim, kdim);
		if (err)
			goto nomem;
	}
	if (w && wino_fits(p) && wino_new(p, w))
		goto nomem;
	*out = p;
	return 0;
nomem:
	npr_conv_plan_free(p);
	return -ENOMEM;
}

/**
 * npr_conv_plan_epi() - set the epilogue
 * @p: the plan; a previous epilogue is replaced.
 * @bias: K values (copied), or NULL.
 * @residual: npr_conv_plan_run() gets a tensor shaped like the output.
 * @act: enum npr_act.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 *
 * Return: 0; -EINVAL for a residual on a plan with a pool or the mean
 * fused; -ENOMEM.
 */
int npr_conv_plan_epi(struct npr_conv_plan *p, const float *bias,
		      bool residual, int act, float lo, float hi)
{
	if (residual && (p->pooled || p->mean))
		return -EINVAL;
	free(p->bias);
	p->bias = NULL;
	if (bias) {
		p->bias = malloc(sizeof(float) * p->d.K);
		if (!p->bias)
			return -ENOMEM;
		memcpy(p->bias, bias, sizeof(float) * p->d.K);
	}
	p->residual = residual;
	p->act = act;
	p->lo = lo;
	p->hi = hi;
	return 0;
}

/**
 * npr_conv_plan_post() - set the activation after the epilogue
 * @p: the plan; a previous one is replaced.
 * @kind: NPR_POST_NONE, NPR_POST_PRELU or NPR_POST_UNARY (conv.h).
 * @slope: PReLU: 1 or K slopes (copied).
 * @nslope: their count.
 * @op: NPR_POST_UNARY: an f32 activation of npr_ref_unary_f32()
 *      (Sigmoid, Swish, HSwish...), copied.
 * @beta: its Swish beta.
 *
 * Return: 0; -EINVAL for a plan with a pool or the mean fused (the
 * activation would come after them), a bad slope count or
 * NPR_POST_UNARY without @op; -ENOMEM.
 */
int npr_conv_plan_post(struct npr_conv_plan *p, int kind, const float *slope,
		       int64_t nslope, const struct npr_eltwise_params *op,
		       float beta)
{
	if (kind != NPR_POST_NONE && (p->pooled || p->mean))
		return -EINVAL;
	if (kind == NPR_POST_PRELU && (!slope || (nslope != 1 &&
					      nslope != p->d.K)))
		return -EINVAL;
	if (kind == NPR_POST_UNARY && !op)
		return -EINVAL;
	free(p->pslope);
	p->pslope = NULL;
	p->npslope = 0;
	if (kind == NPR_POST_PRELU) {
		p->pslope = malloc(sizeof(float) * nslope);
		if (!p->pslope)
			return -ENOMEM;
		memcpy(p->pslope, slope, sizeof(float) * nslope);
		p->npslope = nslope;
	}
	if (kind == NPR_POST_UNARY)
		p->pop = *op;
	p->pbeta = beta;
	p->post = kind;
	return 0;
}

/*
 * Pixel-major path (PATH_T) for convolutions on small planes:
 * tiles of seven output pixels of one row by 64 output channels
 * (npr_gemm_t7_avx512), the weights packed once as 64-channel panels.
 * Chosen where it wastes fewer lanes than the 32-column panels of the
 * GEMM paths: a 7x7 plane computes 49 pixels instead of 64, 14x14 196
 * instead of 224.  Sums are kept per tile in a buffer laid out pixel by
 * channel, then written out transposed with the epilogue.
 *
 * Layout of the packed weights, version NPR_CONV_T_LAYOUT: panel q
 * (output channels 64q..64q+63, zero past K), row r = (c, ky, kx) of the
 * GEMM, at wt[(q * C * taps + r) * 64], 64-byte aligned.
 */
#define NPR_CONV_T_LAYOUT	5	/* 5: from 27 rows of depth (RGB stems) */

static bool use_t(struct npr_conv_plan *p, const struct npr_gemm_kern *kern)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t npix = d->OH * d->OW, tw, eff_t, eff_g, n, maxpix = T_MAXPIX;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f"))
		return false;
#else
	return false;
#endif
	if (npr_env(NPR_ENV_CONV_T_MAXPIX))
		maxpix = atoi(npr_env(NPR_ENV_CONV_T_MAXPIX));
	/*
	 * A fused MaxPool: the sums are pooled in a ring of rows, never
	 * written whole, so neither the buffer limit nor the lanes count;
	 * the plane is not cut into one flat row
	 */
	if (p->pooled)
		return !strcmp(kern->name, "avx512") && d->G == 1 &&
		       npix <= maxpix && p->path != PATH_GEMM1X1 &&
		       !npr_env(NPR_ENV_CONV_NO_T) &&
		       !npr_env(NPR_ENV_CONV_NO_POOL);
	/*
	 * below 27 rows of depth the transposing write-out dominates; 27 is
	 * a 3x3 over three channels, an RGB stem (mobilenet_v2's, 112x112
	 * 3 -> 32 at stride 2: im2col 0.150 ms, here 0.113)
	 */
	if (strcmp(kern->name, "avx512") || d->G != 1 || npix > maxpix ||
	    p->cg * d->kh * d->kw < 27 || npr_env(NPR_ENV_CONV_NO_T))
		return false;
	if ((d->K + 63) / 64 * 64 * (d->OH * (d->OW + 6) / 7 * 7 + 7) *
	    (int64_t)sizeof(float) > T_MAXBUF)
		return false;
	/*
	 * useful lanes per lane computed, in thousandths; a row's last tile
	 * has only the pixels left (NPR_CONV_T_PAD=1: seven, as before)
	 */
	if (p->path == PATH_GEMM1X1) {
		tw = (npix + 6) / 7;
		eff_t = 1000 * npix / (tw * 7);
		n = (npix + 31) / 32 * 32;
	} else {
		tw = (d->OW + 6) / 7;
		eff_t = 1000 * npix / (d->OH * tw * 7);
		n = p->path == PATH_DIRECT ? d->OH * p->wp : npix;
		n = (n + 31) / 32 * 32;
	}
	if (!npr_env(NPR_ENV_CONV_T_PAD))
		eff_t = 1000;
	eff_g = 1000 * npix / n;
	/*
	 * output channels pad up to 8 there; here the last panel computes
	 * the 16-channel vectors it fills, but one vector (7 FMAs to 8
	 * loads a step) runs at about half speed: count it as two
	 */
	if (npr_env(NPR_ENV_CONV_T_PAD)) {
		eff_t = eff_t * d->K / ((d->K + 63) / 64 * 64);
	} else {
		int64_t rem = d->K % 64 ? (d->K % 64 + 15) / 16 * 16 : 0;

		eff_t = eff_t * d->K / (d->K / 64 * 64 + (rem == 16 ? 32 : rem));
	}
	eff_g = eff_g * d->K / ((d->K + 7) / 8 * 8);
	/*
	 * im2col packs B per call; this path copies the input once (all of
	 * it: a strided 1x1 reads a quarter, so it stays with im2col)
	 */
	if (p->path == PATH_IM2COL)
		return d->kh * d->kw > 1 && eff_t + 50 > eff_g;
	/*
	 * as good, and deep: the pixel-major tile reads its input once per
	 * panel where the direct GEMM reads it once per eight rows of A
	 * (1x1 256 -> 32 at 27x27 0.057 -> 0.047 ms, 192 -> 32 at 28x28
	 * 0.044 -> 0.038)
	 */
	if (p->cg * d->kh * d->kw >= 128 && eff_t >= eff_g)
		return true;
	return eff_t > eff_g + 20;
}

static int plan_t(struct npr_conv_plan *p, const float *w)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t kr = p->cg * d->kh * d->kw, q, r, j;

	p->flat = p->path == PATH_GEMM1X1;
	/*
	 * Weights larger than an image's input and output: the images of a
	 * run share one sweep over them (a 3x3 512-channel layer holds 9.4
	 * MB of weights for 200 KB of activations per image).
	 */
	p->sweep = (d->K + 63) / 64 * 64 * kr >=
		   d->C * d->H * d->W + d->K * d->OH * d->OW &&
		   !npr_env(NPR_ENV_CONV_NO_SWEEP);
	p->tw = p->flat ? (d->OH * d->OW + 6) / 7 : (d->OW + 6) / 7;
	p->np = (d->K + 63) / 64;
	free(p->boff);
	p->boff = malloc(sizeof(int64_t) * kr);
	if (!p->boff)
		return -ENOMEM;
	if (p->flat) {
		for (r = 0; r < kr; r++)
			p->boff[r] = r * d->H * d->W;
	} else {
		/* the zero-padded input plane, any stride */
		int64_t c, ky, kx;

		p->hp = (d->OH - 1) * d->sh + (d->kh - 1) * d->dh + 1;
		p->wp = (d->OW - 1) * d->sw + (d->kw - 1) * d->dw + 1;
		if (p->hp < d->ph + d->H)
			p->hp = d->ph + d->H;
		if (p->wp < d->pw + d->W)
			p->wp = d->pw + d->W;
		r = 0;
		for (c = 0; c < p->cg; c++)
			for (ky = 0; ky < d->kh; ky++)
				for (kx = 0; kx < d->kw; kx++)
					p->boff[r++] = c * p->hp * p->wp +
						       ky * d->dh * p->wp +
						       kx * d->dw;
	}
	p->path = PATH_T;
	if (!w)		/* npr_conv_plan_use_prepared() comes next */
		return 0;
	p->wt = npr_alloc(sizeof(float) * p->np * kr * 64);
	if (!p->wt)
		return -ENOMEM;
	for (q = 0; q < p->np; q++)
		for (r = 0; r < kr; r++)
			for (j = 0; j < 64; j++)
				p->wt[(q * kr + r) * 64 + j] =
					q * 64 + j < d->K ?
					w[(q * 64 + j) * kr + r] : 0.0f;
	return 0;
}

/* Bytes of the pixel-major path's packed weights. */
static size_t t_bytes(const struct npr_conv_plan *p)
{
	return sizeof(float) * p->np * p->cg * p->d.kh * p->d.kw * 64;
}

#define WINO_LAYOUT	2

/**
 * npr_conv_wino_layout() - which layers take the Winograd path
 *
 * Return: 0 when none may (no AVX-512, or NPR_CONV_NO_WINO), else
 * WINO_LAYOUT times 10 plus 2 when every layer that fits does
 * (NPR_CONV_WINO), plus 1 otherwise.  Part of the name of a blob's
 * prepared weights: a Winograd plan stores its transformed weights after
 * its path's (npr_conv_plan_prepared()); bump WINO_LAYOUT when their
 * packing or the rule of wino_fits() changes.
 */
int npr_conv_wino_layout(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || npr_env(NPR_ENV_CONV_NO_WINO))
		return 0;
	return WINO_LAYOUT * 10 + (npr_env(NPR_ENV_CONV_WINO) ? 2 : 1);
#else
	return 0;
#endif
}

/**
 * npr_conv_t_layout() - the pixel-major path's weight layout, if it is used
 *
 * Return: when this CPU and environment may choose the path,
 * NPR_CONV_T_LAYOUT times 1000000, plus 100000 when fused pooling is off
 * (NPR_CONV_NO_POOL), plus 200000 when tiles are charged as seven pixels
 * (NPR_CONV_T_PAD), plus the plane limit's thousands; else 0.  Part of
 * the name of a blob's prepared weights, since which layers take the
 * path depends on all of them.
 */
int npr_conv_t_layout(void)
{
	const char *m = npr_env(NPR_ENV_CONV_T_MAXPIX);
	int maxpix = m ? atoi(m) : T_MAXPIX;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || npr_env(NPR_ENV_CONV_NO_T))
		return 0;
	maxpix = maxpix < 0 ? 0 : maxpix / 1000;
	return NPR_CONV_T_LAYOUT * 1000000 +
	       (npr_env(NPR_ENV_CONV_NO_POOL) ? 100000 : 0) +
	       (npr_env(NPR_ENV_CONV_T_PAD) ? 200000 : 0) +
	       (maxpix < 99999 ? maxpix : 99999);
#else
	(void)maxpix;
	return 0;
#endif
}

/*
 * Winograd F(2x2, 3x3) (wino.c) for 3x3 stride-1 convolutions with
 * enough channels: 16 multiplies per 2x2 output tile and input channel
 * instead of 36.  Per image, the input is cut into 4x4 tiles at stride
 * 2 (th x tw of them, zero padded past the plane), transformed into 16
 * matrices V[xi] [C x tiles]; M[xi] = U[xi] V[xi] are 16 products, each
 * computed by the pixel-major tile (npr_gemm_t7_avx512()) with tiles in
 * place of pixels: seven consecutive tiles (a group) by 64 output
 * channels, the 28 accumulators of the path's best kernel.  The 16 sums
 * of a group (28 KiB) are still in L1 when the output transform turns
 * them into 2x2 outputs along the channel vectors, and the t7 write-out
 * transposes those into the planes with the epilogue.  The plan keeps
 * the path it would run otherwise (its buffers are what blobs store)
 * and adds U; NPR_CONV_NO_WINO=1 leaves it out.
 *
 * U[xi] is packed as the pixel-major path packs its weights: panel q
 * (output channels 64q..64q+63, zero past K), input channel c at
 * wu[xi][(q * C + c) * 64], 64-byte aligned.
 */

static bool wino_fits(const struct npr_conv_plan *p)
{
	const struct npr_conv_desc *d = &p->d;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") ||
	    strcmp(p->kern->name, "avx512"))
		return false;
#else
	return false;
#endif
	if (p->wu || p->pooled || p->mean || p->path == PATH_DW ||
	    npr_env(NPR_ENV_CONV_NO_WINO))
		return false;
	if (d->kh != 3 || d->kw != 3 || d->sh != 1 || d->sw != 1 ||
	    d->dh != 1 || d->dw != 1 || d->G != 1 || d->C < WINO_MINC ||
	    d->K < WINO_MINK)
		return false;
	/*
	 * a 7x7 plane alone (16 tiles, 4096 channels of U to stream) ran no
	 * faster than the pixel-major path on one thread and 40% slower on
	 * two (resnet18's last layers); a batch of them gains
	 */
	return d->N * ((d->OH + 1) / 2) * ((d->OW + 1) / 2) >= WINO_MINTILES ||
	       wino_forced();
}

static void wino_free(struct npr_conv_plan *p)
{
	int xi;

	for (xi = 0; p->wu && xi < 16 && !p->borrowed; xi++)
		free(p->wu[xi]);
	free(p->wu);
	p->wu = NULL;
	free(p->wboff);
	p->wboff = NULL;
}

/* The Winograd geometry of @p: tiles, block size, U's shells. */
static int wino_geometry(struct npr_conv_plan *p)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t c, all;

	p->wth = (d->OH + 1) / 2;
	p->wtw = (d->OW + 1) / 2;
	all = (d->N * p->wth * p->wtw + 6) / 7 * 7;
	/*
	 * a block's V in L2, in whole groups of seven tiles; at least eight
	 * groups, since each block reads all of U
	 */
	p->wnb = WINO_VBYTES / (int64_t)(16 * sizeof(float)) / d->C / 7 * 7;
	if (p->wnb < 8 * 7)
		p->wnb = 8 * 7;
	if (npr_env(NPR_ENV_CONV_WINO_NB))
		p->wnb = atoi(npr_env(NPR_ENV_CONV_WINO_NB)) / 7 * 7;
	if (p->wnb < 7)
		p->wnb = 7;
	if (p->wnb > all)
		p->wnb = all;
	/*
	 * Shallow U[xi] panels (all 16 in L2 at 64 channels) are read for
	 * every group, whose sums stay in L1; deep ones once for a few
	 */
	p->wsub = d->C <= 64 ? 1 : 8;
	if (npr_env(NPR_ENV_CONV_WINO_SUB))
		p->wsub = atoi(npr_env(NPR_ENV_CONV_WINO_SUB));
	if (p->wsub < 1)
		p->wsub = 1;
	p->wu = calloc(16, sizeof(*p->wu));
	p->wboff = malloc(sizeof(int64_t) * d->C);
	if (!p->wu || !p->wboff) {
		wino_free(p);
		return -ENOMEM;
	}
	for (c = 0; c < d->C; c++)
		p->wboff[c] = c * p->wnb;
	return 0;
}

/* Bytes of one packed U[xi] of @p. */
static size_t wino_u_bytes(const struct npr_conv_plan *p)
{
	return sizeof(float) * ((p->d.K + 63) / 64 * 64) *
	       (p->d.C ? p->d.C : 1);
}

static int wino_new(struct npr_conv_plan *p, const float *w)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t np = (d->K + 63) / 64, q, c, jj;
	float *u;
	int xi, err;

	err = wino_geometry(p);
	if (err)
		return err;
	err = -ENOMEM;
	u = malloc(sizeof(float) * 16 * d->K * d->C);
	if (!u)
		goto out;
	npr_wino_weights(w, d->K, d->C, u);
	for (xi = 0; xi < 16; xi++) {
		float *wx = npr_alloc(wino_u_bytes(p));

		if (!wx)
			goto out;
		p->wu[xi] = wx;
		for (q = 0; q < np; q++)
			for (c = 0; c < d->C; c++)
				for (jj = 0; jj < 64; jj++)
					wx[(q * d->C + c) * 64 + jj] =
						q * 64 + jj < d->K ?
						u[(xi * d->K + q * 64 + jj) *
						  d->C + c] : 0.0f;
	}
	err = 0;
out:
	free(u);
	if (err)
		wino_free(p);
	return err;
}

/**
 * npr_conv_plan_sweeps() - does @p run several images in one sweep over
 * its weights?
 * @p: the plan.
 *
 * Return: true for weights larger than an image's input and output,
 * which npr_conv_plan_run_n() then reads once for several images.
 */
bool npr_conv_plan_sweeps(const struct npr_conv_plan *p)
{
	return p->path == PATH_T && p->sweep && !p->pooled && !p->mean &&
	       !p->wu;
}

/**
 * npr_conv_plan_desc() - describe a plan, for profiles
 * @p: the plan.
 * @buf: Out. "3x3/2 C64 K128 G1 56x56 N1 im2col-gemm+maxpool" and the like.
 * @len: size of @buf.
 *
 * Return: the FLOPs of one run over the batch.
 */
double npr_conv_plan_desc(const struct npr_conv_plan *p, char *buf,
			  size_t len)
{
	const struct npr_conv_desc *d = &p->d;
	static const char *const path[] = {
		"1x1-gemm", "im2col-gemm", "dw", "direct-gemm", "pixel-major",
	};
	const char *name = p->wu ? "winograd" : path[p->path];

	snprintf(buf, len, "%lldx%lld/%lld C%lld K%lld G%lld %lldx%lld N%lld %s%s",
		 (long long)d->kh, (long long)d->kw, (long long)d->sh,
		 (long long)d->C, (long long)d->K, (long long)d->G,
		 (long long)d->OH, (long long)d->OW, (long long)d->N,
		 name, p->pooled ? "+maxpool" : p->mean ? "+mean" :
		 p->post == NPR_POST_PRELU ? "+prelu" :
		 p->post == NPR_POST_UNARY ? "+act" : "");
	if (npr_conv_plan_sweeps(p))
		snprintf(buf + strlen(buf), len - strlen(buf), " sweep");
	return 2.0 * d->N * d->K * d->OH * d->OW * (d->C / d->G) * d->kh *
	       d->kw;
}

/* The write-out's activation for the pass's enum npr_fuse_act. */
static int act_of(int act)
{
	return act == NPR_FUSE_ACT_RELU ? NPR_ACT_RELU :
	       act == NPR_FUSE_ACT_CLAMP ? NPR_ACT_CLAMP : NPR_ACT_NONE;
}

/* The geometry of convolution node @n of @g. */
static void desc_of(const struct npr_graph *g, const struct npr_node *n,
		    struct npr_conv_desc *d)
{
	const struct npr_conv_params *cp = n->params;
	const struct npr_shape *xs = &g->vals[n->in[0]].shape;
	const struct npr_shape *ws = &g->vals[n->in[1]].shape;
	const struct npr_shape *os = &g->vals[n->out[0]].shape;

	memset(d, 0, sizeof(*d));
	d->N = xs->d[0];
	d->C = xs->d[1];
	d->K = os->d[1];
	d->G = cp->groups;
	if (cp->nsp == 2) {
		d->H = xs->d[2]; d->W = xs->d[3];
		d->OH = os->d[2]; d->OW = os->d[3];
		d->kh = ws->d[ws->rank - 2];
		d->kw = ws->d[ws->rank - 1];
		d->sh = cp->stride[0]; d->sw = cp->stride[1];
		d->dh = cp->dil[0]; d->dw = cp->dil[1];
		d->ph = cp->pb[0]; d->pw = cp->pb[1];
	} else {
		d->H = 1; d->W = xs->d[2];
		d->OH = 1; d->OW = os->d[2];
		d->kh = 1; d->kw = ws->d[ws->rank - 1];
		d->sh = 1; d->sw = cp->stride[0];
		d->dh = 1; d->dw = cp->dil[0];
		d->ph = 0; d->pw = cp->pb[0];
	}
}

/**
 * npr_conv_plan_build() - plan the fused step the fusion pass described
 * @g: the compiled graph.
 * @f: npr_fuse_match()'s description of a convolution of @g.
 * @pack: pack the weights from the graph; false: the plan gets none and
 *        npr_conv_plan_use_prepared() must give it some before it runs.
 * @out: Out. The plan, written on success; free with
 *       npr_conv_plan_free().  It copies what it needs of the graph.
 *
 * The plan does the convolution and @f's epilogue; @f's tail (a MaxPool
 * or ReduceMean) only when its path can (see npr_conv_plan_new_pool(),
 * npr_conv_plan_set_mean()).
 *
 * Return: 1 when the plan does the tail too, 0 when it stops before it,
 * -EOPNOTSUPP when @pack is set and the weights have no data, -ENOMEM.
 */
int npr_conv_plan_build(const struct npr_graph *g, const struct npr_fusion *f,
			bool pack, struct npr_conv_plan **out)
{
	const struct npr_node *n = &g->nodes[f->node];
	const void *w = g->vals[n->in[1]].data;
	struct npr_conv_desc d;
	struct npr_pool_desc pd = { 0 };
	struct npr_conv_plan *plan;
	bool tail = false;
	int err, post;

	if (pack && !w)
		return -EOPNOTSUPP;
	desc_of(g, n, &d);
	if (f->tail == NPR_FUSE_TAIL_POOL) {
		pd.kh = f->pool.kh; pd.kw = f->pool.kw;
		pd.sh = f->pool.sh; pd.sw = f->pool.sw;
		pd.ph = f->pool.ph; pd.pw = f->pool.pw;
		pd.OH = f->pool.OH; pd.OW = f->pool.OW;
	}
	err = npr_conv_plan_new_pool(&d, f->tail == NPR_FUSE_TAIL_POOL ?
				     &pd : NULL, pack ? w : NULL, NULL, &plan);
	if (err)
		return err;
	tail = npr_conv_plan_pooled(plan);
	err = npr_conv_plan_epi(plan, f->bias >= 0 ? g->vals[f->bias].data :
				NULL, f->residual >= 0, act_of(f->act), f->lo,
				f->hi);
	post = f->post == NPR_FUSE_POST_PRELU ? NPR_POST_PRELU :
	       f->post == NPR_FUSE_POST_UNARY ? NPR_POST_UNARY : NPR_POST_NONE;
	if (!err && post)
		err = npr_conv_plan_post(plan, post, f->slope >= 0 ?
					 g->vals[f->slope].data : NULL,
					 f->nslope, f->unary, f->beta);
	/* or the mean over the plane (global average pooling) */
	if (!err && f->tail == NPR_FUSE_TAIL_MEAN)
		tail = !npr_conv_plan_set_mean(plan);
	if (err) {
		npr_conv_plan_free(plan);
		return err;
	}
	*out = plan;
	return tail;
}

/**
 * npr_conv_plan_kernel() - the name of the kernel a plan runs, for
 * profiles
 * @p: the plan.
 *
 * Return: a static string ("conv_winograd", "conv_1x1_gemm", ...).
 */
const char *npr_conv_plan_kernel(const struct npr_conv_plan *p)
{
	if (p->wu)
		return "conv_winograd";
	switch (p->path) {
	case PATH_GEMM1X1:
		return "conv_1x1_gemm";
	case PATH_IM2COL:
		return "conv_im2col_gemm";
	case PATH_DW:
		return "conv_depthwise";
	case PATH_T:
		return "conv_pixel_major";
	default:
		return "conv_direct_gemm";
	}
}

/* The buffers of @p's own path (without Winograd's). */
static int base_prepared(const struct npr_conv_plan *p, const void **buf,
			 size_t *bytes, int max);

/**
 * npr_conv_plan_prepared() - the buffers a plan derived from its weights
 * @p: the plan.
 * @buf: Out. Up to @max pointers (NULL for a plan made without weights),
 *       or NULL.
 * @bytes: Out. Up to @max sizes, or NULL.
 * @max: room in @buf and @bytes.
 *
 * A Winograd plan adds its 16 packed U after its path's buffers, so that
 * an import uses them in place instead of transforming the weights again
 * (that took most of a cache hit of face-detection-retail-0004).
 *
 * Return: the number of buffers (may exceed @max).
 */
int npr_conv_plan_prepared(const struct npr_conv_plan *p, const void **buf,
			   size_t *bytes, int max)
{
	int n = base_prepared(p, buf, bytes, max), xi;

	if (!p->wu)
		return n;
	for (xi = 0; xi < 16; xi++) {
		if (n + xi >= max)
			continue;
		if (buf)
			buf[n + xi] = p->wu[xi];
		if (bytes)
			bytes[n + xi] = wino_u_bytes(p);
	}
	return n + 16;
}

static int base_prepared(const struct npr_conv_plan *p, const void **buf,
			 size_t *bytes, int max)
{
	int64_t g;

	if (p->path == PATH_T) {
		if (max > 0 && buf)
			buf[0] = p->wt;
		if (max > 0 && bytes)
			bytes[0] = t_bytes(p);
		return 1;
	}
	if (p->path == PATH_DW) {
		if (max > 0 && buf)
			buf[0] = p->wdw;
		if (max > 0 && bytes)
			bytes[0] = sizeof(float) * p->d.C * p->d.kh * p->d.kw;
		return 1;
	}
	for (g = 0; g < p->d.G && g < max; g++) {
		if (buf)
			buf[g] = p->a[g].data;
		if (bytes)
			bytes[g] = sizeof(float) * p->a[g].Mp *
				   (p->a[g].K ? p->a[g].K : 1);
	}
	return (int)p->d.G;
}

/**
 * npr_conv_plan_use_prepared() - run on buffers another plan prepared
 * @p: a plan made without weights (npr_conv_plan_new() with @w NULL).
 * @buf: the buffers, in npr_conv_plan_prepared()'s order, 64-byte
 *       aligned; borrowed: they must outlive the plan.
 * @bytes: their sizes.
 * @n: their count.
 *
 * Return: 0, or -EINVAL when the count, a size or an alignment does not
 * fit the plan's geometry.
 */
int npr_conv_plan_use_prepared(struct npr_conv_plan *p, const void *const *buf,
			       const size_t *bytes, int n)
{
	int nb = base_prepared(p, NULL, NULL, 0), xi;
	bool wino = wino_fits(p);
	size_t want;
	int64_t g;

	if (n != nb + (wino ? 16 : 0) || p->borrowed)
		return -EINVAL;
	for (xi = 0; wino && xi < 16; xi++)
		if (bytes[nb + xi] != wino_u_bytes(p) ||
		    ((uintptr_t)buf[nb + xi] & 63))
			return -EINVAL;
	n = nb;
	for (g = 0; g < n; g++) {
		if (p->path == PATH_T)
			want = t_bytes(p);
		else if (p->path == PATH_DW)
			want = sizeof(float) * p->d.C * p->d.kh * p->d.kw;
		else
			want = sizeof(float) * p->a[g].Mp *
			       (p->a[g].K ? p->a[g].K : 1);
		if (bytes[g] != want || ((uintptr_t)buf[g] & 63))
			return -EINVAL;
	}
	if (p->path == PATH_T) {
		free(p->wt);
		p->wt = (float *)buf[0];
	} else if (p->path == PATH_DW) {
		free(p->wdw);
		p->wdw = (float *)buf[0];
	} else {
		for (g = 0; g < n; g++) {
			npr_gemm_a_free(&p->a[g]);
			p->a[g].data = (float *)buf[g];
		}
	}
	p->borrowed = true;
	/* Winograd's U, packed, follow the path's own buffers */
	if (wino) {
		if (wino_geometry(p))
			return -ENOMEM;
		for (xi = 0; xi < 16; xi++)
			p->wu[xi] = (float *)buf[nb + xi];
	}
	return 0;
}

/**
 * npr_conv_plan_weights() - the weights a plan was made from
 * @p: the plan.
 * @w: [K, C / G, kh, kw] f32 (as npr_conv_plan_new() got them), written.
 *
 * The plan holds them (packed), so the graph's copy can go.
 */
void npr_conv_plan_weights(const struct npr_conv_plan *p, float *w)
{
	int64_t g, kdim = p->cg * p->d.kh * p->d.kw;

	if (p->path == PATH_T) {
		int64_t q, r, j, kr = kdim;

		for (q = 0; q < p->np; q++)
			for (r = 0; r < kr; r++)
				for (j = 0; j < 64 && q * 64 + j < p->d.K; j++)
					w[(q * 64 + j) * kr + r] =
						p->wt[(q * kr + r) * 64 + j];
		return;
	}
	if (p->path == PATH_DW) {
		memcpy(w, p->wdw, sizeof(float) * p->d.C * p->d.kh * p->d.kw);
		return;
	}
	for (g = 0; g < p->d.G; g++)
		npr_gemm_a_unpack(&p->a[g], w + g * p->kg * kdim, kdim);
}
