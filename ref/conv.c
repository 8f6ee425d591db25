// SPDX-License-Identifier: MIT
/*
 * Fast convolution: plans, im2col packing into GEMM panels, depthwise,
 * and the fusion of the bias / residual / activation nodes that follow a
 * convolution.  See conv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "threads.h"
#include "ops/eltwise.h"
#include "ops/nn.h"

enum { PATH_GEMM1X1, PATH_IM2COL, PATH_DW, PATH_DIRECT, PATH_T };

struct npr_conv_plan {
	struct npr_conv_desc d;
	int path;
	int64_t cg, kg;			/* channels per group in, out */
	struct npr_gemm_a *a;		/* per group */
	float *wdw;			/* depthwise: [C][kh*kw] */
	int (*dw_flat)(const struct npr_conv_desc *, const float *,
		       const float *, float *, const float *, float, int,
		       float, float);
	int (*dw_vec)(const struct npr_conv_desc *, const float *,
		      const float *, float *, const float *, float, int,
		      float, float);
	void (*dw_plane)(const struct npr_conv_desc *, const float *,
			 const float *, float *, const float *, float, int,
			 float, float);
	float *bias;
	npr_gemm_pack_b pack;		/* im2col packer for this CPU */
	void (*unpad)(const struct npr_conv_desc *, const float *, int64_t,
		      float *, const float *, const float *, int, float,
		      float, int64_t, int64_t);
	int64_t hp, wp;			/* direct: padded input plane */
	int64_t *boff;			/* direct: offset of each GEMM row */
	float *wt;			/* T: weights [K / 64][C * taps][64] */
	int64_t np, tw;			/* T: channel panels, tiles per row */
	bool flat;			/* T: 1x1, the plane as one row */
	bool sweep;			/* T: several images per sweep */
	bool residual;
	int act;
	float lo, hi;
	bool borrowed;			/* a[].data, wdw, wt: prepared, not ours */
};

static bool use_t(struct npr_conv_plan *p, const struct npr_gemm_kern *kern);
static int plan_t(struct npr_conv_plan *p, const float *w);

#define PACK_IM2COL npr_pack_im2col_generic
#define UNPAD_ROWS npr_unpad_rows_generic
#include "conv_pack.h"

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
	free(p->boff);
	free(p->bias);
	free(p);
}

int npr_conv_plan_new(const struct npr_conv_desc *d, const float *w,
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
			if (!getenv("NPR_CONV_DW_FLAT"))
				p->dw_vec = npr_dw_vec_avx512;
		}
#endif
		if (d->sh != d->sw || d->sw > 2)
			p->dw_flat = NULL;
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
	    kern->fn_direct && !getenv("NPR_CONV_NO_DIRECT")) {
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
		   (p->kg <= 32 || getenv("NPR_CONV_DIRECT_1X1")) &&
		   !getenv("NPR_CONV_PACK_1X1")) {
		/*
		 * B read in place: with at most four micro-panels of A to
		 * reuse a packed B, packing it does not pay (7-11% on the
		 * 16-32 channel 1x1 layers of mobilenet_v2).
		 */
		int64_t c;

		p->boff = malloc(sizeof(int64_t) * p->cg);
		if (!p->boff)
			goto nomem;
		for (c = 0; c < p->cg; c++)
			p->boff[c] = c * d->H * d->W;
	}
	if (use_t(p, kern)) {
		err = plan_t(p, w);
		if (err)
			goto nomem;
		*out = p;
		return 0;
	}
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
	*out = p;
	return 0;
nomem:
	npr_conv_plan_free(p);
	return -ENOMEM;
}

int npr_conv_plan_epi(struct npr_conv_plan *p, const float *bias,
		      bool residual, int act, float lo, float hi)
{
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

struct dw_job {
	const struct npr_conv_plan *p;
	const float *x, *res;
	float *y;
	int64_t planes, parts;	/* planes in all, tasks they are cut into */
};

#define DW_PLANE npr_dw_plane_generic
#define DW_FLAT npr_dw_flat_generic
#define DW_FLAT2 dw_flat2_generic
#define DW_AXPY dw_axpy_generic
#include "conv_dw.h"

/* One (image, channel) plane of a depthwise convolution. */
static void dw_plane(const struct dw_job *j, int64_t plane)
{
	const struct npr_conv_plan *p = j->p;
	const struct npr_conv_desc *d = &p->d;
	int64_t c = plane % d->C;
	const float *x = j->x + plane * d->H * d->W;
	const float *wc = p->wdw + c * d->kh * d->kw;
	float *y = j->y + plane * d->OH * d->OW;
	const float *res = j->res ? j->res + plane * d->OH * d->OW : NULL;
	float b = p->bias ? p->bias[c] : 0.0f;

	if (p->dw_vec && !p->dw_vec(d, x, wc, y, res, b, p->act, p->lo,
				    p->hi))
		return;
	if (p->dw_flat && !p->dw_flat(d, x, wc, y, res, b, p->act, p->lo,
				      p->hi))
		return;
	p->dw_plane(d, x, wc, y, res, b, p->act, p->lo, p->hi);
}

/*
 * Planes [planes * i / parts, planes * (i + 1) / parts): a 7x7 or 14x14
 * plane takes tens of nanoseconds, less than handing out a task costs
 * when two threads take turns at the pool's counter.
 */
static void dw_task(void *arg, int i, int tid)
{
	const struct dw_job *j = arg;
	int64_t a = j->planes * i / j->parts;
	int64_t b = j->planes * (i + 1) / j->parts;

	for (; a < b; a++)
		dw_plane(j, a);
}

struct img_job {
	const struct npr_conv_plan *p;
	const float *x, *res;
	float *y;
	_Atomic int err;
};

struct unpad_job {
	const struct npr_conv_plan *p;
	const float *t, *bias, *res;
	float *y;
	int64_t K;
};

static void unpad_task(void *arg, int i, int tid)
{
	const struct unpad_job *j = arg;
	const struct npr_conv_plan *p = j->p;
	int64_t k0 = j->K * i / 8, k1 = j->K * (i + 1) / 8;

	p->unpad(&p->d, j->t, p->wp, j->y, j->bias, j->res, p->act, p->lo,
		 p->hi, k0, k1);
}

/* Image @b at stride 1 with B read in place (see npr_conv_plan_new). */
static int conv_image_direct(const struct npr_conv_plan *p, const float *x,
			     float *y, const float *res, int64_t b)
{
	static _Thread_local float *xbuf, *tbuf;
	static _Thread_local size_t xcap, tcap;
	const struct npr_conv_desc *d = &p->d;
	int64_t plane = p->hp * p->wp, g, c, iy, npix = d->OH * d->OW;
	size_t xn = d->C * plane + 64, tn = d->K * d->OH * p->wp;
	int err;

	if (xn > xcap) {
		free(xbuf);
		xbuf = malloc(sizeof(float) * xn);
		xcap = xbuf ? xn : 0;
		npr_free_at_thread_exit(&xbuf);
	}
	if (tn > tcap) {
		free(tbuf);
		tbuf = malloc(sizeof(float) * tn);
		tcap = tbuf ? tn : 0;
		npr_free_at_thread_exit(&tbuf);
	}
	if (!xbuf || !tbuf)
		return -ENOMEM;
	memset(xbuf, 0, sizeof(float) * xn);
	for (c = 0; c < d->C; c++)
		for (iy = 0; iy < d->H; iy++)
			memcpy(xbuf + c * plane + (iy + d->ph) * p->wp + d->pw,
			       x + ((b * d->C + c) * d->H + iy) * d->W,
			       sizeof(float) * d->W);
	for (g = 0; g < d->G; g++) {
		struct npr_gemm_bdirect bd = {
			.b = xbuf + g * p->cg * plane, .off = p->boff,
		};
		struct unpad_job uj = {
			.p = p, .t = tbuf + g * p->kg * d->OH * p->wp,
			.bias = p->bias ? p->bias + g * p->kg : NULL,
			.res = res ? res + (b * d->K + g * p->kg) * npix : NULL,
			.y = y + (b * d->K + g * p->kg) * npix, .K = p->kg,
		};

		err = npr_gemm_run_direct(&p->a[g], d->OH * p->wp, &bd,
					  tbuf + g * p->kg * d->OH * p->wp,
					  d->OH * p->wp, NULL, 0);
		if (err)
			return err;
		npr_parallel_for(8, unpad_task, &uj);
	}
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
#define NPR_CONV_T_LAYOUT	1
#define T_KC			256
#define T_MAXPIX		16384
#define T_MAXBUF		(4 << 20)	/* bytes of sums per image */
#define T_MAXSWEEP		(8 << 20)	/* bytes of sums per sweep */

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
	if (getenv("NPR_CONV_T_MAXPIX"))
		maxpix = atoi(getenv("NPR_CONV_T_MAXPIX"));
	/* below 32 rows of depth the transposing write-out dominates */
	if (strcmp(kern->name, "avx512") || d->G != 1 || npix > maxpix ||
	    p->cg * d->kh * d->kw < 32 || getenv("NPR_CONV_NO_T"))
		return false;
	if ((d->K + 63) / 64 * 64 * (d->OH * (d->OW + 6) / 7 * 7 + 7) *
	    (int64_t)sizeof(float) > T_MAXBUF)
		return false;
	/* useful lanes per lane computed, in thousandths */
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
	eff_g = 1000 * npix / n;
	/* output channels pad up to 64 here, to 8 there */
	eff_t = eff_t * d->K / ((d->K + 63) / 64 * 64);
	eff_g = eff_g * d->K / ((d->K + 7) / 8 * 8);
	/*
	 * im2col packs B per call; this path copies the input once (all of
	 * it: a strided 1x1 reads a quarter, so it stays with im2col)
	 */
	if (p->path == PATH_IM2COL)
		return d->kh * d->kw > 1 && eff_t + 50 > eff_g;
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
		   !getenv("NPR_CONV_NO_SWEEP");
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
	if (posix_memalign((void **)&p->wt, 64,
			   sizeof(float) * p->np * kr * 64))
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

/**
 * npr_conv_t_layout() - the pixel-major path's weight layout, if it is used
 *
 * Return: NPR_CONV_T_LAYOUT times 100000 plus the plane limit's thousands
 * when this CPU and environment may choose the path, else 0; part of the
 * name of a blob's prepared weights, since which layers take the path
 * depends on both.
 */
int npr_conv_t_layout(void)
{
	const char *m = getenv("NPR_CONV_T_MAXPIX");
	int maxpix = m ? atoi(m) : T_MAXPIX;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || getenv("NPR_CONV_NO_T"))
		return 0;
	return NPR_CONV_T_LAYOUT * 100000 + (maxpix < 0 ? 0 : maxpix / 1000);
#else
	(void)maxpix;
	return 0;
#endif
}

struct t_job {
	const struct npr_conv_plan *p;
	const float *x, *res;	/* images: input (padded for 3x3), residual */
	float *y, *t;
	int64_t pitch, parts;
	int64_t n, ximg;	/* images, input floats from one to the next */
	const float *xlast;	/* the last image's input, if not at x */
};

/*
 * Channel panel i % np, tiles [a, b) of part i / np; the tiles of the
 * job's images are numbered one image after the other, so a part may
 * span images and each block of weights is used on all of its tiles.
 */
static void t_task(void *arg, int i, int tid)
{
	const struct t_job *j = arg;
	const struct npr_conv_plan *p = j->p;
	const struct npr_conv_desc *d = &p->d;
	int64_t q = i % p->np, part = i / p->np;
	int64_t rows = p->flat ? 1 : d->OH, ntile = rows * p->tw;
	int64_t nall = ntile * j->n;
	int64_t a = nall * part / j->parts, b = nall * (part + 1) / j->parts;
	int64_t kr = p->cg * d->kh * d->kw, npix = d->OH * d->OW;
	int64_t pc, tl, k0 = q * 64, kn = d->K - k0 < 64 ? d->K - k0 : 64;
	float *tq = j->t + q * nall * 7 * 64;

	for (pc = 0; pc < kr; pc += T_KC) {
		int64_t kc = kr - pc < T_KC ? kr - pc : T_KC;
		const float *wq = p->wt + (q * kr + pc) * 64;

		for (tl = a; tl < b; tl++) {
			int64_t img = tl / ntile, lt = tl % ntile;
			int64_t oy = lt / p->tw, ox0 = lt % p->tw * 7;

			npr_gemm_t7_avx512(kc, wq, (img == j->n - 1 &&
					   j->xlast ? j->xlast :
					   j->x + img * j->ximg) +
					   oy * j->pitch + ox0 * d->sw,
					   p->boff + pc, d->sw,
					   tq + tl * 7 * 64, pc > 0);
		}
	}
	/* runs of consecutive tiles in one row, transposed into y */
	for (tl = a; tl < b;) {
		int64_t img = tl / ntile, lt = tl % ntile;
		int64_t oy = lt / p->tw, ox0 = lt % p->tw * 7, te, len, o;

		te = tl - lt + (p->flat ? ntile : lt - lt % p->tw + p->tw);
		if (te > b)
			te = b;
		len = (te - tl) * 7;
		if (len > (p->flat ? npix : d->OW) - ox0)
			len = (p->flat ? npix : d->OW) - ox0;
		o = img * d->K * npix + oy * d->OW + ox0;
		npr_gemm_t7_out_avx512(tq + tl * 7 * 64, len, kn,
				       j->y + k0 * npix + o, npix,
				       p->bias ? p->bias + k0 : NULL,
				       j->res ? j->res + k0 * npix + o : NULL,
				       p->act, p->lo, p->hi);
		tl = te;
	}
}

struct pad_job {
	const struct npr_conv_plan *p;
	const float *x;		/* the images */
	float *xp;		/* their zero-padded planes */
	int64_t nc, parts;	/* planes (images times channels), tasks */
};

/* Planes [nc * i / parts, nc * (i + 1) / parts) into their padded form. */
static void pad_task(void *arg, int i, int tid)
{
	const struct pad_job *j = arg;
	const struct npr_conv_plan *p = j->p;
	const struct npr_conv_desc *d = &p->d;
	int64_t plane = p->hp * p->wp, c, iy;

	if (p->flat) {		/* a 1x1 input copied as it is */
		int64_t c0 = j->nc * i / j->parts, c1 = j->nc * (i + 1) / j->parts;
		int64_t np = d->H * d->W;

		memcpy(j->xp + c0 * np, j->x + c0 * np,
		       sizeof(float) * (c1 - c0) * np);
		return;
	}
	for (c = j->nc * i / j->parts; c < j->nc * (i + 1) / j->parts; c++) {
		float *pl = j->xp + c * plane;

		memset(pl, 0, sizeof(float) * plane);
		for (iy = 0; iy < d->H; iy++)
			memcpy(pl + (iy + d->ph) * p->wp + d->pw,
			       j->x + (c * d->H + iy) * d->W,
			       sizeof(float) * d->W);
	}
}

/* Bytes of one image's sums on the pixel-major path. */
static int64_t t_sums(const struct npr_conv_plan *p)
{
	return (int64_t)sizeof(float) * p->np *
	       (p->flat ? 1 : p->d.OH) * p->tw * 7 * 64;
}

/*
 * Images [@b, @b + @n) on the pixel-major path, in one sweep: every
 * block of weights is used on the tiles of all @n images before the
 * next is read (n > 1 for layers whose weights outweigh an image's
 * activations, see npr_conv_plan_run_n()).
 */
static int conv_images_t(const struct npr_conv_plan *p, const float *x,
			 float *y, const float *res, int64_t b, int64_t n)
{
	static _Thread_local float *xbuf, *tbuf;
	static _Thread_local size_t xcap, tcap;
	const struct npr_conv_desc *d = &p->d;
	int64_t npix = d->OH * d->OW, ntile;
	const float *xi = x + b * d->C * d->H * d->W;
	struct t_job j = {
		.p = p, .y = y + b * d->K * npix,
		.res = res ? res + b * d->K * npix : NULL, .n = n,
	};
	size_t xn = 0, tn;
	int nt = npr_par_threads();

	ntile = (p->flat ? 1 : d->OH) * p->tw;
	tn = (size_t)p->np * ntile * n * 7 * 64;
	if (!p->flat)
		xn = n * d->C * p->hp * p->wp + 64;
	else if (npix % 7)	/* the last tile reads past the input */
		xn = d->C * npix + 64;	/* the last image's, the rest in place */
	if (xn > xcap) {
		free(xbuf);
		xbuf = malloc(sizeof(float) * xn);
		xcap = xbuf ? xn : 0;
	}
	if (tn > tcap) {
		free(tbuf);
		tbuf = NULL;
		if (posix_memalign((void **)&tbuf, 64, sizeof(float) * tn))
			tbuf = NULL;
		tcap = tbuf ? tn : 0;
	}
	if ((xn && !xbuf) || !tbuf)
		return -ENOMEM;
	if (!p->flat) {
		struct pad_job pj = {
			.p = p, .x = xi, .xp = xbuf, .nc = n * d->C,
		};

		/* the zero-padded copy, split over the threads too */
		pj.parts = nt > 1 && pj.nc * p->hp * p->wp >= 16384 ?
			   2 * nt : 1;
		if (pj.parts > pj.nc)
			pj.parts = pj.nc;
		npr_parallel_for((int)pj.parts, pad_task, &pj);
		memset(xbuf + pj.nc * p->hp * p->wp, 0, sizeof(float) * 64);
		j.x = xbuf;
		j.pitch = d->sh * p->wp;
		j.ximg = d->C * p->hp * p->wp;
	} else if (xn) {
		/* only the last image's last row runs past the input */
		struct pad_job pj = {
			.p = p, .x = xi + (n - 1) * d->C * npix, .xp = xbuf,
			.nc = d->C,
		};

		/* the copy on the threads too */
		pj.parts = nt > 1 && d->C * npix >= 16384 ? 2 * nt : 1;
		if (pj.parts > pj.nc)
			pj.parts = pj.nc;
		npr_parallel_for((int)pj.parts, pad_task, &pj);
		memset(xbuf + d->C * npix, 0, sizeof(float) * 64);
		j.x = xi;
		j.xlast = xbuf;
		j.ximg = d->C * npix;
	} else {
		j.x = xi;
		j.ximg = d->C * npix;
	}
	j.t = tbuf;
	/* about three parts per thread, at least four tiles each */
	j.parts = nt > 1 ? (3 * nt + p->np - 1) / p->np : 1;
	if (j.parts > ntile * n / 4)
		j.parts = ntile * n / 4;
	if (j.parts < 1)
		j.parts = 1;
	/*
	 * Fewer tasks than three per thread: rather parts of two tiles than
	 * a count the threads do not share evenly (a 7x7 1x1 layer with 160
	 * channels was three panels of seven tiles, two for one thread and
	 * one for the other).
	 */
	while (nt > 1 && p->np * j.parts < 3 * nt &&
	       (p->np * j.parts) % nt && j.parts < ntile * n / 2)
		j.parts++;
	npr_parallel_for((int)(p->np * j.parts), t_task, &j);
	return 0;
}

/* Every group of image @b, on the calling thread. */
static int conv_image(const struct npr_conv_plan *p, const float *x,
		      float *y, const float *res, int64_t b)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t g, npix = d->OH * d->OW;
	int err;

	if (p->path == PATH_DIRECT)
		return conv_image_direct(p, x, y, res, b);
	if (p->path == PATH_T)
		return conv_images_t(p, x, y, res, b, 1);
	for (g = 0; g < d->G; g++) {
		const float *xg = x + (b * d->C + g * p->cg) * d->H * d->W;
		int64_t yoff = (b * d->K + g * p->kg) * npix;
		struct npr_gemm_epi e = {
			.bias = p->bias ? p->bias + g * p->kg : NULL,
			.res = res ? res + yoff : NULL,
			.ldr = npix, .act = p->act,
			.lo = p->lo, .hi = p->hi,
		};
		bool any = e.bias || e.res || e.act;

		if (p->path == PATH_GEMM1X1 && p->boff) {
			/* B is the input itself: row c at c * npix */
			struct npr_gemm_bdirect bd = { .b = xg, .off = p->boff };

			err = npr_gemm_run_direct(&p->a[g], npix, &bd,
						  y + yoff, npix,
						  any ? &e : NULL, 0);
		} else if (p->path == PATH_GEMM1X1) {
			struct npr_gemm_bsrc bs = { .B = xg, .ldb = npix };

			err = npr_gemm_run(&p->a[g], npix, npr_gemm_pack_b_rm,
					   &bs, y + yoff, npix,
					   any ? &e : NULL, 0);
		} else {
			struct npr_im2col_src s = { .d = d, .x = xg };

			err = npr_gemm_run(&p->a[g], npix, p->pack, &s,
					   y + yoff, npix, any ? &e : NULL, 0);
		}
		if (err)
			return err;
	}
	return 0;
}

static void image_task(void *arg, int i, int tid)
{
	struct img_job *j = arg;
	int err = conv_image(j->p, j->x, j->y, j->res, i);

	if (err)
		j->err = err;
}

int npr_conv_plan_run(const struct npr_conv_plan *p, const float *x,
		      float *y, const float *res)
{
	return npr_conv_plan_run_n(p, x, y, res, p->d.N);
}

int npr_conv_plan_run_n(const struct npr_conv_plan *p, const float *x,
			float *y, const float *res, int64_t n)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t b;
	int err;

	if (n < 1 || n > d->N)
		return -EINVAL;
	if (p->path == PATH_DW) {
		struct dw_job j = {
			.p = p, .x = x, .y = y, .res = res,
			.planes = n * d->C,
		};

		/* about eight parts per thread, each at least 4096 outputs */
		j.parts = 8 * npr_par_threads();
		if (j.parts > j.planes * d->OH * d->OW / 4096)
			j.parts = j.planes * d->OH * d->OW / 4096;
		if (j.parts > j.planes)
			j.parts = j.planes;
		if (j.parts < 1)
			j.parts = 1;
		npr_parallel_for((int)j.parts, dw_task, &j);
		return 0;
	}
	/*
	 * Weights outweighing the activations: the images in sweeps that
	 * read each block of weights once for all of them, the sweep split
	 * over the threads.
	 */
	if (p->path == PATH_T && p->sweep && n > 1) {
		int64_t per = t_sums(p), k;

		k = per * n <= T_MAXSWEEP ? n : T_MAXSWEEP / per;
		if (k < 1)
			k = 1;
		for (b = 0; b < n; b += k) {
			err = conv_images_t(p, x, y, res, b,
					    n - b < k ? n - b : k);
			if (err)
				return err;
		}
		return 0;
	}
	/*
	 * A batch of at least as many images as threads: whole images per
	 * thread (no split GEMMs, one B packing per image); else each image
	 * split across the threads.
	 */
	if (n > 1 && n >= npr_par_threads()) {
		struct img_job j = { .p = p, .x = x, .y = y, .res = res };

		npr_parallel_for((int)n, image_task, &j);
		return j.err;
	}
	for (b = 0; b < n; b++) {
		err = conv_image(p, x, y, res, b);
		if (err)
			return err;
	}
	return 0;
}

bool npr_conv_plan_sweeps(const struct npr_conv_plan *p)
{
	return p->path == PATH_T && p->sweep;
}

double npr_conv_plan_desc(const struct npr_conv_plan *p, char *buf,
			  size_t len)
{
	const struct npr_conv_desc *d = &p->d;
	static const char *const path[] = {
		"1x1-gemm", "im2col-gemm", "dw", "direct-gemm", "pixel-major",
	};

	snprintf(buf, len, "%lldx%lld/%lld C%lld K%lld G%lld %lldx%lld N%lld %s",
		 (long long)d->kh, (long long)d->kw, (long long)d->sh,
		 (long long)d->C, (long long)d->K, (long long)d->G,
		 (long long)d->OH, (long long)d->OW, (long long)d->N,
		 path[p->path]);
	if (p->path == PATH_T && p->sweep)
		snprintf(buf + strlen(buf), len - strlen(buf), " sweep");
	return 2.0 * d->N * d->K * d->OH * d->OW * (d->C / d->G) * d->kh *
	       d->kw;
}

/* The only live node reading value @v, or -1. */
static int sole_user(struct npr_graph *g, int v, const int *uses,
		     const bool *taken)
{
	int i, j;

	if (uses[v] != 1)
		return -1;
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] == v)
				return taken[i] ? -1 : i;
	}
	return -1;
}

static bool is_f32(struct npr_graph *g, int v)
{
	return g->vals[v].type == NPR_ELEM_F32;
}

int npr_conv_fuse(struct npr_graph *g, int ni, const int *uses,
		  const bool *taken, struct npr_conv_plan **plan, int *absorbed, int *nabs,
		  int *res_value)
{
	return npr_conv_fuse_ex(g, ni, uses, taken, true, plan, absorbed, nabs,
				res_value);
}

int npr_conv_fuse_ex(struct npr_graph *g, int ni, const int *uses,
		     const bool *taken, bool pack, struct npr_conv_plan **plan,
		     int *absorbed, int *nabs, int *res_value)
{
	struct npr_node *n = &g->nodes[ni];
	const struct npr_conv_params *cp = n->params;
	struct npr_value *x, *w, *o;
	struct npr_conv_desc d = { 0 };
	const float *bias = NULL;
	int act = NPR_ACT_NONE, v, u, err;
	float lo = 0, hi = 0;

	*nabs = 0;
	*res_value = -1;
	if (strcmp(n->type, "Convolution") && strcmp(n->type, "GroupConvolution"))
		return -EOPNOTSUPP;
	x = npr_in(g, n, 0);
	w = npr_in(g, n, 1);
	o = npr_out(g, n, 0);
	if ((pack && !w->data) || cp->nsp < 1 || cp->nsp > 2 ||
	    !is_f32(g, n->in[0]) ||
	    w->type != NPR_ELEM_F32 || o->type != NPR_ELEM_F32 ||
	    cp->auto_pad != NPR_PAD_EXPLICIT)
		return -EOPNOTSUPP;
	d.N = x->shape.d[0];
	d.C = x->shape.d[1];
	d.K = o->shape.d[1];
	d.G = cp->groups;
	if (cp->nsp == 2) {
		d.H = x->shape.d[2]; d.W = x->shape.d[3];
		d.OH = o->shape.d[2]; d.OW = o->shape.d[3];
		d.kh = w->shape.d[w->shape.rank - 2];
		d.kw = w->shape.d[w->shape.rank - 1];
		d.sh = cp->stride[0]; d.sw = cp->stride[1];
		d.dh = cp->dil[0]; d.dw = cp->dil[1];
		d.ph = cp->pb[0]; d.pw = cp->pb[1];
	} else {
		d.H = 1; d.W = x->shape.d[2];
		d.OH = 1; d.OW = o->shape.d[2];
		d.kh = 1; d.kw = w->shape.d[w->shape.rank - 1];
		d.sh = 1; d.sw = cp->stride[0];
		d.dh = 1; d.dw = cp->dil[0];
		d.ph = 0; d.pw = cp->pb[0];
	}
	/* the epilogue: Add(per-channel constant), Add(residual), Relu/Clamp */
	v = n->out[0];
	u = sole_user(g, v, uses, taken);
	if (u >= 0 && !strcmp(g->nodes[u].type, "Add") && g->nodes[u].nin == 2) {
		struct npr_node *a = &g->nodes[u];
		int other = a->in[0] == v ? a->in[1] : a->in[0];
		struct npr_value *ov = &g->vals[other];
		const struct npr_shape *s = &ov->shape;
		int64_t cnt = npr_shape_numel(s);
		int k, chdim = s->rank - 1 - cp->nsp;
		bool perch = ov->data && ov->type == NPR_ELEM_F32 &&
			     cnt == d.K && chdim >= 0 &&
			     s->d[chdim] == d.K && a->in[0] != a->in[1];

		for (k = 0; perch && k < s->rank; k++)
			if (k != chdim && s->d[k] != 1)
				perch = false;
		if (perch && npr_shape_eq(&npr_out(g, a, 0)->shape, &o->shape)) {
			bias = ov->data;
			absorbed[(*nabs)++] = u;
			v = a->out[0];
			u = sole_user(g, v, uses, taken);
		}
	}
	if (u >= 0 && !strcmp(g->nodes[u].type, "Add") && g->nodes[u].nin == 2) {
		struct npr_node *a = &g->nodes[u];
		int other = a->in[0] == v ? a->in[1] : a->in[0];
		struct npr_value *ov = &g->vals[other];

		if (!ov->data && a->in[0] != a->in[1] && is_f32(g, other) &&
		    npr_shape_eq(&ov->shape, &o->shape) &&
		    npr_shape_eq(&npr_out(g, a, 0)->shape, &o->shape)) {
			*res_value = other;
			absorbed[(*nabs)++] = u;
			v = a->out[0];
			u = sole_user(g, v, uses, taken);
		}
	}
	if (u >= 0 && g->nodes[u].nin == 1 &&
	    (!strcmp(g->nodes[u].type, "Relu") ||
	     !strcmp(g->nodes[u].type, "ReLU"))) {
		act = NPR_ACT_RELU;
		absorbed[(*nabs)++] = u;
	} else if (u >= 0 && g->nodes[u].nin == 1 &&
		   !strcmp(g->nodes[u].type, "Clamp")) {
		const struct npr_eltwise_params *ep = g->nodes[u].params;

		act = NPR_ACT_CLAMP;
		lo = (float)ep->lo;
		hi = (float)ep->hi;
		absorbed[(*nabs)++] = u;
	}
	err = npr_conv_plan_new(&d, pack ? w->data : NULL, NULL, plan);
	if (!err)
		err = npr_conv_plan_epi(*plan, bias, *res_value >= 0, act, lo,
					hi);
	if (err) {
		npr_conv_plan_free(*plan);
		*plan = NULL;
		*nabs = 0;
		return err;
	}
	return 0;
}

/**
 * npr_conv_plan_kernel() - the name of the kernel a plan runs, for
 * profiles
 * @p: the plan.
 */
const char *npr_conv_plan_kernel(const struct npr_conv_plan *p)
{
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

/**
 * npr_conv_plan_prepared() - the buffers a plan derived from its weights
 * @p: the plan.
 * @buf: Out. Up to @max pointers (NULL for a plan made without weights),
 *       or NULL.
 * @bytes: Out. Up to @max sizes, or NULL.
 * @max: room in @buf and @bytes.
 *
 * Return: the number of buffers (may exceed @max).
 */
int npr_conv_plan_prepared(const struct npr_conv_plan *p, const void **buf,
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
	size_t want;
	int64_t g;

	if (n != npr_conv_plan_prepared(p, NULL, NULL, 0) || p->borrowed)
		return -EINVAL;
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
