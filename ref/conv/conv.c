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

#include "sys.h"
#include "conv.h"
#include "ref/threads.h"
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
	struct npr_dw_tab *dwt;		/* depthwise: small planes, by runs */
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
	bool pooled;			/* T: a MaxPool fused, see pool */
	bool mean;			/* T: the mean over the plane fused */
	struct npr_pool_desc pool;
	bool residual;
	int act;
	float lo, hi;
	bool borrowed;			/* a[].data, wdw, wt, wu[]: prepared,
					 * not ours */
	const struct npr_gemm_kern *kern;	/* what the plan was made for */
	float **wu;			/* Winograd: U[16], see wino_new() */
	int64_t wth, wtw;		/* Winograd: tiles per column, row */
	int64_t *wboff;			/* Winograd: row c of V[xi] */
	int64_t wnb;			/* Winograd: most tiles a block */
	int64_t wsub;			/* Winograd: groups a sub-block */
	int post;			/* NPR_POST_*, see npr_conv_plan_post() */
	float *pslope;			/* PReLU: 1 or K slopes */
	int64_t npslope;
	struct npr_eltwise_params pop;	/* NPR_POST_UNARY: the activation */
	float pbeta;
};

static bool use_t(struct npr_conv_plan *p, const struct npr_gemm_kern *kern);
static int plan_t(struct npr_conv_plan *p, const float *w);
static bool wino_fits(const struct npr_conv_plan *p);
static int wino_new(struct npr_conv_plan *p, const float *w);
static void wino_free(struct npr_conv_plan *p);

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

	if (getenv("NPR_CONV_DW_NO_RUN"))
		return NULL;
	if (d->sh == 2 && d->sw == 2 && d->kh == 3 && d->kw == 3 &&
	    d->dh == 1 && d->dw == 1 && d->ph == 1 && d->pw == 1 &&
	    !getenv("NPR_CONV_DW_NO_SHIFT")) {
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
		!getenv("NPR_CONV_DW_NO_SHIFT");
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

int npr_conv_plan_new(const struct npr_conv_desc *d, const float *w,
		      const struct npr_gemm_kern *kern,
		      struct npr_conv_plan **out)
{
	return npr_conv_plan_new_pool(d, NULL, w, kern, out);
}

bool npr_conv_plan_pooled(const struct npr_conv_plan *p)
{
	return p->pooled;
}

int npr_conv_plan_set_mean(struct npr_conv_plan *p)
{
	if (p->path != PATH_T || p->pooled || p->residual ||
	    getenv("NPR_CONV_NO_MEAN"))
		return -EOPNOTSUPP;
	wino_free(p);	/* the pixel-major path fuses the mean */
	p->mean = true;
	return 0;
}

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
			if (!getenv("NPR_CONV_DW_FLAT")) {
				p->dw_vec = npr_dw_vec_avx512;
				p->dwt = dw_tab_new(d);
			}
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
		   (p->kg <= 48 || getenv("NPR_CONV_DIRECT_1X1")) &&
		   !getenv("NPR_CONV_PACK_1X1")) {
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

struct post_job {
	const struct npr_conv_plan *p;
	float *y;
	int64_t planes, parts;
};

/* Output planes [planes i / parts, planes (i + 1) / parts): the activation. */
static void post_task(void *arg, int i, int tid)
{
	const struct post_job *j = arg;
	const struct npr_conv_plan *p = j->p;
	int64_t npix = p->d.OH * p->d.OW, a = j->planes * i / j->parts;
	int64_t b = j->planes * (i + 1) / j->parts, pl;
	void (*prelu)(float *, int64_t, float) = npr_prelu_row_generic;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		prelu = npr_prelu_row_avx512;
#endif
	for (pl = a; pl < b; pl++) {
		float *y = j->y + pl * npix;

		if (p->post == NPR_POST_PRELU) {
			prelu(y, npix,
			      p->pslope[p->npslope == 1 ? 0 : pl % p->d.K]);
		} else {
			npr_ref_unary_f32(&p->pop, p->pbeta, y, y, npix);
		}
	}
}

/* The activation after the epilogue over @n images' outputs. */
static void post_apply(const struct npr_conv_plan *p, float *y, int64_t n)
{
	struct post_job j = { .p = p, .y = y, .planes = n * p->d.K };

	/* eight parts a thread, of at least 4096 outputs */
	j.parts = 8 * npr_par_threads();
	if (j.parts > j.planes * p->d.OH * p->d.OW / 4096)
		j.parts = j.planes * p->d.OH * p->d.OW / 4096;
	if (j.parts > j.planes)
		j.parts = j.planes;
	if (j.parts < 1)
		j.parts = 1;
	npr_parallel_for((int)j.parts, post_task, &j);
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

#if defined(__x86_64__)
	if (j->p->dwt) {
		npr_dw_run_avx512(j->p->dwt, j->x, j->p->wdw, j->p->bias, j->y,
				  j->res, a, b, j->p->act, j->p->lo, j->p->hi);
		return;
	}
#endif
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

	npr_scratch(&xbuf, &xcap, xn);
	npr_scratch(&tbuf, &tcap, tn);
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
#define NPR_CONV_T_LAYOUT	5	/* 5: from 27 rows of depth (RGB stems) */
/*
 * depth block: 1024 rows of a panel's weights are 256 KiB, which stay in
 * L2 while the block's tiles sweep them; fewer blocks mean fewer round
 * trips of the sums (256 measured 1-2% slower on every layer tried)
 */
#define T_KC			1024
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
	/*
	 * A fused MaxPool: the sums are pooled in a ring of rows, never
	 * written whole, so neither the buffer limit nor the lanes count;
	 * the plane is not cut into one flat row
	 */
	if (p->pooled)
		return !strcmp(kern->name, "avx512") && d->G == 1 &&
		       npix <= maxpix && p->path != PATH_GEMM1X1 &&
		       !getenv("NPR_CONV_NO_T") && !getenv("NPR_CONV_NO_POOL");
	/*
	 * below 27 rows of depth the transposing write-out dominates; 27 is
	 * a 3x3 over three channels, an RGB stem (mobilenet_v2's, 112x112
	 * 3 -> 32 at stride 2: im2col 0.150 ms, here 0.113)
	 */
	if (strcmp(kern->name, "avx512") || d->G != 1 || npix > maxpix ||
	    p->cg * d->kh * d->kw < 27 || getenv("NPR_CONV_NO_T"))
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
	if (!getenv("NPR_CONV_T_PAD"))
		eff_t = 1000;
	eff_g = 1000 * npix / n;
	/*
	 * output channels pad up to 8 there; here the last panel computes
	 * the 16-channel vectors it fills, but one vector (7 FMAs to 8
	 * loads a step) runs at about half speed: count it as two
	 */
	if (getenv("NPR_CONV_T_PAD")) {
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
#define WINO_LAYOUT	2
int npr_conv_wino_layout(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || getenv("NPR_CONV_NO_WINO"))
		return 0;
	return WINO_LAYOUT * 10 + (getenv("NPR_CONV_WINO") ? 2 : 1);
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
	const char *m = getenv("NPR_CONV_T_MAXPIX");
	int maxpix = m ? atoi(m) : T_MAXPIX;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || getenv("NPR_CONV_NO_T"))
		return 0;
	maxpix = maxpix < 0 ? 0 : maxpix / 1000;
	return NPR_CONV_T_LAYOUT * 1000000 +
	       (getenv("NPR_CONV_NO_POOL") ? 100000 : 0) +
	       (getenv("NPR_CONV_T_PAD") ? 200000 : 0) +
	       (maxpix < 99999 ? maxpix : 99999);
#else
	(void)maxpix;
	return 0;
#endif
}

/* Pixels of tile @tl: seven, fewer for the last of a row (or plane) */
static inline int t_pix(const struct npr_conv_plan *p, int64_t tl)
{
	int64_t left = (p->flat ? p->d.OH * p->d.OW : p->d.OW) -
		       tl % p->tw * 7;

	return left < 7 ? (int)left : 7;
}

struct t_job {
	const struct npr_conv_plan *p;
	const float *x, *res;	/* images: input (padded for 3x3), residual */
	float *y, *t;
	int64_t pitch, parts;
	int64_t tstride;	/* pooled: floats of t per thread */
	int64_t n, ximg;	/* images, input floats from one to the next */
};

/*
 * Channel panel i % np, pooled rows [a, b) of part i / np, with the
 * MaxPool fused: the convolution's rows are computed in order into a ring
 * of kh rows (pixel-major, in L1 or L2), and each pooled row as soon as
 * its window's last row is there; then the pooled row is written out
 * with the epilogue (bias and activation commute with max).  Parts
 * recompute the kh - sh rows their windows share.
 */
static void tpool_task(void *arg, int i, int tid)
{
	const struct t_job *j = arg;
	const struct npr_conv_plan *p = j->p;
	const struct npr_conv_desc *d = &p->d;
	const struct npr_pool_desc *pd = &p->pool;
	int64_t q = i % p->np, part = i / p->np;
	int64_t a = pd->OH * part / j->parts, b = pd->OH * (part + 1) / j->parts;
	int64_t kr = p->cg * d->kh * d->kw, pnpix = pd->OH * pd->OW;
	int64_t k0 = q * 64, kn = d->K - k0 < 64 ? d->K - k0 : 64;
	int64_t rowf = p->tw * 7 * 64, r, r0, r1, pc, tl, py = a;
	float *ring = j->t + tid * j->tstride, *po = ring + pd->kh * rowf;
	const float *rows[16];

	if (a >= b)
		return;
	r0 = a * pd->sh - pd->ph;
	r0 = r0 < 0 ? 0 : r0;
	r1 = (b - 1) * pd->sh - pd->ph + pd->kh;
	r1 = r1 > d->OH ? d->OH : r1;
	for (r = r0; r < r1 && py < b; r++) {
		float *tr = ring + r % pd->kh * rowf;

		for (pc = 0; pc < kr; pc += T_KC) {
			int64_t kc = kr - pc < T_KC ? kr - pc : T_KC;
			const float *wq = p->wt + (q * kr + pc) * 64;

			for (tl = 0; tl < p->tw; tl++)
				npr_gemm_t7_avx512(t_pix(p, tl), (int)(kn + 15) / 16,
						   kc, wq, j->x + r * j->pitch +
						   tl * 7 * d->sw, p->boff + pc,
						   d->sw, tr + tl * 7 * 64, pc > 0);
		}
		/* every pooled row whose window ends at row r */
		for (; py < b; py++) {
			int64_t y0 = py * pd->sh - pd->ph, y1 = y0 + pd->kh, l;

			y0 = y0 < 0 ? 0 : y0;
			y1 = y1 > d->OH ? d->OH : y1;
			if (y1 - 1 != r)
				break;
			for (l = y0; l < y1; l++)
				rows[l - y0] = ring + l % pd->kh * rowf;
			npr_gemm_t7_maxpool_avx512(rows, y1 - y0, pd->OW, pd->kw,
						   pd->sw, pd->pw, d->OW, po);
			npr_gemm_t7_out_avx512(po, pd->OW, kn, j->y + k0 * pnpix +
					       py * pd->OW, pnpix,
					       p->bias ? p->bias + k0 : NULL,
					       NULL, p->act, p->lo, p->hi);
		}
	}
}

/*
 * Pixels [o, o + len) of panel channels k0.. (kn of them) from the sums
 * at @t: written out transposed with the epilogue, or, for a plan with
 * the mean fused, added into @sum after the epilogue.
 */
static void t_emit(const struct t_job *j, const float *t, int64_t o,
		   int64_t len, int64_t k0, int64_t kn, float *sum)
{
	const struct npr_conv_plan *p = j->p;
	int64_t npix = p->d.OH * p->d.OW;

	if (sum) {
		npr_gemm_t7_sum_avx512(t, len, kn, p->bias ? p->bias + k0 : NULL,
				       p->act, p->lo, p->hi, sum);
		return;
	}
	npr_gemm_t7_out_avx512(t, len, kn, j->y + k0 * npix + o, npix,
			       p->bias ? p->bias + k0 : NULL,
			       j->res ? j->res + k0 * npix + o : NULL,
			       p->act, p->lo, p->hi);
}

/* Where tile @tl of the job's images reads its input. */
static inline const float *t_x(const struct t_job *j, int64_t tl,
			       int64_t ntile)
{
	const struct npr_conv_plan *p = j->p;
	int64_t lt = tl % ntile;

	return j->x + tl / ntile * j->ximg + lt / p->tw * j->pitch +
	       lt % p->tw * 7 * p->d.sw;
}

/*
 * The run of consecutive tiles from @tl that stays in one row (the whole
 * plane when flat) and before @b: its end, and its output pixels, @len
 * of them from offset @o of the images' output (channel 0).
 */
static int64_t t_run(const struct npr_conv_plan *p, int64_t tl, int64_t b,
		     int64_t ntile, int64_t *len, int64_t *o)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t img = tl / ntile, lt = tl % ntile, npix = d->OH * d->OW;
	int64_t oy = lt / p->tw, ox0 = lt % p->tw * 7, te;

	te = tl - lt + (p->flat ? ntile : lt - lt % p->tw + p->tw);
	if (te > b)
		te = b;
	*len = (te - tl) * 7;
	if (*len > (p->flat ? npix : d->OW) - ox0)
		*len = (p->flat ? npix : d->OW) - ox0;
	*o = img * d->K * npix + oy * d->OW + ox0;
	return te;
}

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
	float sbuf[64] __attribute__((aligned(64))), *sum = NULL;

	if (p->mean) {		/* one part per panel: the whole plane */
		memset(sbuf, 0, sizeof(sbuf));
		sum = sbuf;
	}
	/*
	 * One depth block: each run of tiles (within a row, at most 16) is
	 * written out while its sums are in L1, from the start of the part's
	 * share of the buffer (the stem's 111 x 112 x 64 sums would go to L3
	 * and back)
	 */
	if (kr <= T_KC) {
		for (tl = a; tl < b;) {
			int64_t te, t2, len, o;

			te = t_run(p, tl, b, ntile, &len, &o);
			if (te > tl + 16) {
				te = tl + 16;
				len = 16 * 7;
			}
			for (t2 = tl; t2 < te; t2++)
				npr_gemm_t7_avx512(t_pix(p, t2),
						   (int)(kn + 15) / 16, kr,
						   p->wt + q * kr * 64,
						   t_x(j, t2, ntile), p->boff,
						   d->sw,
						   tq + (a + t2 - tl) * 7 * 64,
						   false);
			t_emit(j, tq + a * 7 * 64, o, len, k0, kn, sum);
			tl = te;
		}
		goto done;
	}
	for (pc = 0; pc < kr; pc += T_KC) {
		int64_t kc = kr - pc < T_KC ? kr - pc : T_KC;
		const float *wq = p->wt + (q * kr + pc) * 64;

		for (tl = a; tl < b; tl++)
			npr_gemm_t7_avx512(t_pix(p, tl), (int)(kn + 15) / 16,
					   kc, wq, t_x(j, tl, ntile),
					   p->boff + pc, d->sw,
					   tq + tl * 7 * 64, pc > 0);
	}
	/* runs of consecutive tiles in one row, transposed into y */
	for (tl = a; tl < b;) {
		int64_t te, len, o;

		te = t_run(p, tl, b, ntile, &len, &o);
		t_emit(j, tq + tl * 7 * 64, o, len, k0, kn, sum);
		tl = te;
	}
done:
	for (tl = 0; sum && tl < kn; tl++)
		j->y[k0 + tl] = sum[tl] / (float)npix;
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
	int64_t right = p->wp - d->pw - d->W;
	int64_t below = (p->hp - d->ph - d->H) * p->wp;

	/* only the border is zeroed: each float is written once */
	for (c = j->nc * i / j->parts; c < j->nc * (i + 1) / j->parts; c++) {
		float *pl = j->xp + c * plane, *r = pl + d->ph * p->wp;
		const float *xc = j->x + c * d->H * d->W;

		memset(pl, 0, sizeof(float) * d->ph * p->wp);
		if (!d->pw && !right) {
			memcpy(r, xc, sizeof(float) * d->H * d->W);
			r += d->H * d->W;
		} else {
			for (iy = 0; iy < d->H; iy++, r += p->wp) {
				memset(r, 0, sizeof(float) * d->pw);
				memcpy(r + d->pw, xc + iy * d->W,
				       sizeof(float) * d->W);
				memset(r + d->pw + d->W, 0,
				       sizeof(float) * right);
			}
		}
		memset(r, 0, sizeof(float) * below);
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
 * next is read (n > 1 only for plans that sweep, npr_conv_plan_run_n();
 * never with a fused MaxPool or mean).
 */
static int conv_images_t(const struct npr_conv_plan *p, const float *x,
			 float *y, const float *res, int64_t b, int64_t n)
{
	static _Thread_local float *xbuf, *tbuf;
	static _Thread_local size_t xcap, tcap;
	const struct npr_conv_desc *d = &p->d;
	int64_t npix = d->OH * d->OW, ntile;
	const float *xi = x + b * d->C * d->H * d->W;
	int64_t ynpix = p->pooled ? p->pool.OH * p->pool.OW :
			p->mean ? 1 : npix;
	struct t_job j = {
		.p = p, .y = y + b * d->K * ynpix,
		.res = res ? res + b * d->K * npix : NULL, .n = n,
	};
	size_t xn = 0, tn;
	int nt = npr_par_threads();

	ntile = (p->flat ? 1 : d->OH) * p->tw;
	tn = (size_t)p->np * ntile * n * 7 * 64;
	if (p->pooled) {
		/* per thread: the ring of rows and one pooled row */
		j.tstride = (p->pool.kh * p->tw * 7 + p->pool.OW) * 64;
		tn = (size_t)nt * j.tstride;
	}
	/* flat: the input itself (the last tile reads only its pixels) */
	if (!p->flat)
		xn = n * d->C * p->hp * p->wp + 64;
	npr_scratch(&xbuf, &xcap, xn);
	npr_scratch(&tbuf, &tcap, tn);
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
	} else {
		j.x = xi;
		j.ximg = d->C * npix;
	}
	j.t = tbuf;
	if (p->pooled) {
		/* about three parts per thread, at least four pooled rows */
		j.parts = nt > 1 ? (3 * nt + p->np - 1) / p->np : 1;
		if (j.parts > p->pool.OH / 4)
			j.parts = p->pool.OH / 4;
		if (j.parts < 1)
			j.parts = 1;
		npr_parallel_for((int)(p->np * j.parts), tpool_task, &j);
		return 0;
	}
	/* about three parts per thread, at least four tiles each */
	j.parts = nt > 1 ? (3 * nt + p->np - 1) / p->np : 1;
	if (j.parts > ntile * n / 4)
		j.parts = ntile * n / 4;
	if (j.parts < 1 || p->mean)
		j.parts = 1;
	/*
	 * Fewer tasks than three per thread: rather parts of two tiles than
	 * a count the threads do not share evenly (a 7x7 1x1 layer with 160
	 * channels was three panels of seven tiles, two for one thread and
	 * one for the other).
	 */
	while (!p->mean && nt > 1 && p->np * j.parts < 3 * nt &&
	       (p->np * j.parts) % nt && j.parts < ntile * n / 2)
		j.parts++;
	npr_parallel_for((int)(p->np * j.parts), t_task, &j);
	return 0;
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
#define WINO_MINC	16
#define WINO_MINK	32
#define WINO_MINTILES	32
#define WINO_DEEP	128	/* input channels */
#define WINO_VBYTES	(512 << 10)	/* V of a block */

/* NPR_CONV_WINO=1: wherever the shape fits, however few tiles (tests) */
static bool wino_forced(void)
{
	return getenv("NPR_CONV_WINO");
}

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
	    getenv("NPR_CONV_NO_WINO"))
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

	if (!p->wu)
		return;
	for (xi = 0; xi < 16 && !p->borrowed; xi++)
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
	if (getenv("NPR_CONV_WINO_NB"))
		p->wnb = atoi(getenv("NPR_CONV_WINO_NB")) / 7 * 7;
	if (p->wnb < 7)
		p->wnb = 7;
	if (p->wnb > all)
		p->wnb = all;
	/*
	 * Shallow U[xi] panels (all 16 in L2 at 64 channels) are read for
	 * every group, whose sums stay in L1; deep ones once for a few
	 */
	p->wsub = d->C <= 64 ? 1 : 8;
	if (getenv("NPR_CONV_WINO_SUB"))
		p->wsub = atoi(getenv("NPR_CONV_WINO_SUB"));
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

struct wino_job {
	const struct npr_conv_plan *p;
	const float *x, *res;	/* the first image */
	float *y;
	int64_t n;		/* images */
	int64_t ng;		/* groups of seven tiles */
	int64_t nblk, nqs;	/* tasks: blocks of groups by panel ranges */
	_Atomic int err;
};

/*
 * The sums of tiles [ta, tb) (one group, at most seven) for panel
 * channels k0.. (kn of them, nv vectors), M[xi] at m + xi * ms: the
 * output transform, run by run of tiles in one row, into @st (two
 * pixel-major rows of 14 pixels), and the transposing write-out.
 */
static void wino_emit(const struct wino_job *j, const float *m, int64_t ms,
		      int64_t ta, int64_t tb, int64_t k0, int64_t kn, int nv,
		      float *st)
{
	const struct npr_conv_plan *p = j->p;
	const struct npr_conv_desc *d = &p->d;
	int64_t T = p->wth * p->wtw, npix = d->OH * d->OW, t, te, a;

	for (t = ta; t < tb; t = te) {
		int64_t b = t / T, lt = t % T, ty = lt / p->wtw;
		int64_t tx = lt % p->wtw, ox0 = 2 * tx, len;

		te = t - tx + p->wtw < tb ? t - tx + p->wtw : tb;
		npr_wino_out_avx512(m + (t - ta) * 64, ms, (int)(te - t), nv,
				    st, st + 14 * 64);
		len = 2 * (tx + te - t) < d->OW ? 2 * (tx + te - t) : d->OW;
		len -= ox0;
		for (a = 0; a < 2 && 2 * ty + a < d->OH; a++) {
			int64_t off = (b * d->K + k0) * npix +
				      (2 * ty + a) * d->OW + ox0;

			npr_gemm_t7_out_avx512(st + a * 14 * 64, len, kn,
					       j->y + off, npix,
					       p->bias ? p->bias + k0 : NULL,
					       j->res ? j->res + off : NULL,
					       p->act, p->lo, p->hi);
		}
	}
}

/*
 * Block i / nqs of the groups (the tiles of the job's images in a row:
 * those of image 0, then image 1...) for panel range i % nqs: the input
 * transform of the block, then per panel and sub-block of groups the 16
 * products and the output transform.
 */
static void wino_task(void *arg, int i, int tid)
{
	static _Thread_local float *buf;
	static _Thread_local size_t cap;
	struct wino_job *j = arg;
	const struct npr_conv_plan *p = j->p;
	const struct npr_conv_desc *d = &p->d;
	int64_t blk = i / j->nqs, qs = i % j->nqs, np = (d->K + 63) / 64;
	int64_t ga = j->ng * blk / j->nblk, gb = j->ng * (blk + 1) / j->nblk;
	int64_t q0 = np * qs / j->nqs, q1 = np * (qs + 1) / j->nqs;
	int64_t T = p->wth * p->wtw, nall = j->n * T;
	int64_t g0 = ga * 7, g1 = gb * 7 < nall ? gb * 7 : nall, g, q;
	int64_t ld = p->wnb, vs = (d->C * ld + 64 + 15) / 16 * 16;
	int64_t ms = p->wsub * 7 * 64;
	size_t n = 16 * vs + 16 * ms + 2 * 14 * 64 + 8 * (p->wtw + 1);
	float *v, *m, *st, *pad;
	int xi;

	if (ga >= gb || q0 >= q1)
		return;
	if (!npr_scratch(&buf, &cap, n)) {
		j->err = -ENOMEM;
		return;
	}
	v = buf;
	m = v + 16 * vs;
	st = m + 16 * ms;
	pad = st + 2 * 14 * 64;
	/* the part of each image in the block: its tiles [t0, t1) */
	for (g = g0; g < g1; ) {
		int64_t b = g / T, t0 = g % T;
		int64_t t1 = T < t0 + g1 - g ? T : t0 + g1 - g;
		const float *xb = j->x + b * d->C * d->H * d->W;

		npr_wino_in_avx512(d, xb, p->wtw, t0, t1, pad, v + g - g0, ld,
				   vs);
		g += t1 - t0;
	}
	for (q = q0; q < q1; q++) {
		int64_t k0 = q * 64, kn = d->K - k0 < 64 ? d->K - k0 : 64;
		int nv = (int)(kn + 15) / 16;
		int64_t s0, s1;

		for (s0 = ga; s0 < gb; s0 = s1) {
			s1 = s0 + p->wsub < gb ? s0 + p->wsub : gb;
			for (xi = 0; xi < 16; xi++)
				for (g = s0; g < s1; g++) {
					int64_t nt = nall - 7 * g;

					npr_gemm_t7_avx512(nt < 7 ? (int)nt : 7,
							   nv, d->C,
							   p->wu[xi] + q * d->C * 64,
							   v + xi * vs + 7 * g - g0,
							   p->wboff, 1,
							   m + xi * ms + (g - s0) * 7 * 64,
							   false);
				}
			for (g = s0; g < s1; g++)
				wino_emit(j, m + (g - s0) * 7 * 64, ms, 7 * g,
					  7 * g + 7 < nall ? 7 * g + 7 : nall,
					  k0, kn, nv, st);
		}
	}
}

/* Do @n images' tiles make enough groups (else the plan's other path)? */
static bool wino_pays(const struct npr_conv_plan *p, int64_t n)
{
	return p->wu && (n * p->wth * p->wtw >= WINO_MINTILES ||
			 wino_forced());
}

/*
 * Images [b, b + n) on the Winograd path (see wino_fits()): their groups
 * in blocks of at most p->wnb tiles, and with several threads enough
 * tasks for each, the panels split too where the groups are few
 * (squeezenet1_1's 13x13 layers have seven: with 64 input channels,
 * seven blocks by two panel ranges).
 */
static int conv_images_wino(const struct npr_conv_plan *p, const float *x,
			    float *y, const float *res, int64_t b, int64_t n)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t T = p->wth * p->wtw, npix = d->OH * d->OW;
	int64_t np = (d->K + 63) / 64, gmax = p->wnb / 7;
	int nt = npr_par_threads();
	struct wino_job j = { .p = p, .n = n };

	j.x = x + b * d->C * d->H * d->W;
	j.y = y + b * d->K * npix;
	j.res = res ? res + b * d->K * npix : NULL;
	j.ng = (n * T + 6) / 7;
	j.nblk = (j.ng + gmax - 1) / gmax;
	j.nqs = 1;
	if (nt > 1) {
		/*
		 * four tasks a thread, for balance; two where U is deep,
		 * since each block reads all of it again (resnet18's 7x7
		 * 512-channel layers at batch 8, two threads: 4.7 ms with
		 * its eight panels apart, 3.1 in four blocks); the panels
		 * apart too where the groups are few
		 */
		int64_t want = (d->C >= WINO_DEEP ? 2 : 4) * nt;

		if (j.nblk < want)
			j.nblk = want < j.ng ? want : j.ng;
		if (j.nblk < want)
			j.nqs = (want + j.nblk - 1) / j.nblk;
		if (j.nqs > np)
			j.nqs = np;
	}
	npr_parallel_for((int)(j.nblk * j.nqs), wino_task, &j);
	return j.err;
}

/* Every group of image @b, on the calling thread. */
static int conv_image(const struct npr_conv_plan *p, const float *x,
		      float *y, const float *res, int64_t b)
{
	const struct npr_conv_desc *d = &p->d;
	int64_t g, npix = d->OH * d->OW;
	int err;

	if (wino_pays(p, 1))
		return conv_images_wino(p, x, y, res, b, 1);
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

static int run_n(const struct npr_conv_plan *p, const float *x, float *y,
		 const float *res, int64_t n);

int npr_conv_plan_run_n(const struct npr_conv_plan *p, const float *x,
			float *y, const float *res, int64_t n)
{
	int err = run_n(p, x, y, res, n);

	if (!err && p->post)
		post_apply(p, y, n);
	return err;
}

static int run_n(const struct npr_conv_plan *p, const float *x, float *y,
		 const float *res, int64_t n)
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
	/* Winograd: the images' tiles in a row, in blocks */
	if (wino_pays(p, n))
		return conv_images_wino(p, x, y, res, 0, n);
	/*
	 * Weights outweighing the activations: the images in sweeps that
	 * read each block of weights once for all of them, the sweep split
	 * over the threads.
	 */
	if (npr_conv_plan_sweeps(p) && n > 1) {
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
	return p->path == PATH_T && p->sweep && !p->pooled && !p->mean &&
	       !p->wu;
}

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

static bool is_f32(struct npr_graph *g, int v)
{
	return g->vals[v].type == NPR_ELEM_F32;
}

/* An activation after the epilogue (npr_conv_plan_post()) */
struct post {
	int kind;
	const float *slope;
	int64_t nslope;
	const struct npr_eltwise_params *op;
	float beta;
};

/*
 * Is node @n, reading the convolution's output @v (shape @os, @K
 * channels), an activation the plan can apply after its epilogue?
 * PReLU with a constant f32 slope that is one value or one per channel
 * (1-D of K as the reference kernel takes it, or K along dim 1 of a
 * shape of ones otherwise, numpy-aligned); Sigmoid, Swish (a constant
 * f32 beta), HSwish, HSigmoid.  Same functions as the standalone ops,
 * so the same bits.
 */
static bool post_of(struct npr_graph *g, struct npr_node *n, int v,
		    const struct npr_shape *os, int64_t K, struct post *pp)
{
	const struct npr_eltwise_params *ep = n->params;
	struct npr_value *ov;

	if (n->nout != 1 || n->in[0] != v || !is_f32(g, n->out[0]) ||
	    !npr_shape_eq(&npr_out(g, n, 0)->shape, os))
		return false;
	if (!strcmp(n->type, "PReLU") && n->nin == 2 && n->in[1] != v) {
		const struct npr_value *sv = &g->vals[n->in[1]];
		const struct npr_shape *ss = &sv->shape;
		int64_t cnt = npr_shape_numel(ss);
		int k, chdim = ss->rank - (os->rank - 1);

		if (!sv->data || sv->type != NPR_ELEM_F32 || ss->rank > os->rank)
			return false;
		if (cnt != 1) {
			if (cnt != K)
				return false;
			/* 1-D: per channel, as npr_ref_prelu() takes it */
			if (!(ss->rank == 1 && K > 1)) {
				if (chdim < 0 || ss->d[chdim] != K)
					return false;
				for (k = 0; k < ss->rank; k++)
					if (k != chdim && ss->d[k] != 1)
						return false;
			}
		}
		pp->kind = NPR_POST_PRELU;
		pp->slope = sv->data;
		pp->nslope = cnt;
		return true;
	}
	if (!ep || (strcmp(n->type, "Sigmoid") && strcmp(n->type, "Swish") &&
		    strcmp(n->type, "HSwish") && strcmp(n->type, "HSigmoid")))
		return false;
	if (ep->op != NPR_UN_SIGMOID && ep->op != NPR_UN_SWISH &&
	    ep->op != NPR_UN_HSWISH && ep->op != NPR_UN_HSIGMOID)
		return false;
	pp->beta = 1.0f;
	if (n->nin == 2) {
		ov = &g->vals[n->in[1]];
		if (ep->op != NPR_UN_SWISH || !ov->data ||
		    ov->type != NPR_ELEM_F32 || npr_shape_numel(&ov->shape) < 1)
			return false;
		pp->beta = ((const float *)ov->data)[0];
	} else if (n->nin != 1) {
		return false;
	}
	pp->kind = NPR_POST_UNARY;
	pp->op = ep;
	return true;
}

/*
 * The only live node reading value @v, or -1.  Looked for from @v's
 * producer on (in a sorted graph its reader comes after it, most often
 * right after), then from the start: the same node, found without
 * walking the whole graph for every convolution.
 */
static int sole_user(struct npr_graph *g, int v, const int *uses,
		     const bool *taken)
{
	int first = g->vals[v].producer + 1, k, i, j;

	if (uses[v] != 1)
		return -1;
	if (first < 0 || first > g->nnodes)
		first = 0;
	for (k = 0; k < g->nnodes; k++) {
		struct npr_node *n;

		i = first + k < g->nnodes ? first + k : first + k - g->nnodes;
		n = &g->nodes[i];
		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] == v)
				return taken[i] ? -1 : i;
	}
	return -1;
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
	struct npr_pool_desc pd = { 0 };
	const float *bias = NULL;
	int act = NPR_ACT_NONE, v, u, err, pool = -1;
	float lo = 0, hi = 0;
	struct post post = { 0 };

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
		v = g->nodes[u].out[0];
	} else if (u >= 0 && g->nodes[u].nin == 1 &&
		   !strcmp(g->nodes[u].type, "Clamp")) {
		const struct npr_eltwise_params *ep = g->nodes[u].params;

		act = NPR_ACT_CLAMP;
		lo = (float)ep->lo;
		hi = (float)ep->hi;
		absorbed[(*nabs)++] = u;
		v = g->nodes[u].out[0];
	}
	/* or an activation the write-out does not compute, applied after */
	if (act == NPR_ACT_NONE && u >= 0 &&
	    post_of(g, &g->nodes[u], v, &o->shape, d.K, &post)) {
		absorbed[(*nabs)++] = u;
		v = g->nodes[u].out[0];
	}
	/* a MaxPool after all that, when the plan's path can pool rows */
	u = sole_user(g, v, uses, taken);
	if (post.kind)
		u = -1;		/* the pool would come before the activation */
	if (u >= 0 && *res_value < 0 && cp->nsp == 2 &&
	    !strcmp(g->nodes[u].type, "MaxPool") && g->nodes[u].nin == 1 &&
	    g->nodes[u].nout == 1 && is_f32(g, g->nodes[u].out[0])) {
		const struct npr_conv_params *pp = g->nodes[u].params;
		const struct npr_shape *ps = &npr_out(g, &g->nodes[u], 0)->shape;

		if (pp->nsp == 2 && pp->dil[0] == 1 && pp->dil[1] == 1 &&
		    ps->rank == 4 && ps->d[0] == d.N && ps->d[1] == d.K) {
			pd.kh = pp->kernel[0];
			pd.kw = pp->kernel[1];
			pd.sh = pp->stride[0];
			pd.sw = pp->stride[1];
			pd.ph = pp->pb[0];
			pd.pw = pp->pb[1];
			pd.OH = ps->d[2];
			pd.OW = ps->d[3];
			pool = u;
		}
	}
	err = npr_conv_plan_new_pool(&d, pool >= 0 ? &pd : NULL,
				     pack ? w->data : NULL, NULL, plan);
	if (!err && npr_conv_plan_pooled(*plan))
		absorbed[(*nabs)++] = pool;
	if (!err)
		err = npr_conv_plan_epi(*plan, bias, *res_value >= 0, act, lo,
					hi);
	if (!err && post.kind)
		err = npr_conv_plan_post(*plan, post.kind, post.slope,
					 post.nslope, post.op, post.beta);
	/* or a ReduceMean over the plane (global average pooling) */
	if (!err && pool < 0 && !post.kind && *res_value < 0 && cp->nsp == 2 &&
	    (u = sole_user(g, v, uses, taken)) >= 0 &&
	    !strcmp(g->nodes[u].type, "ReduceMean") &&
	    g->nodes[u].in[0] == v && g->nodes[u].nout == 1 &&
	    is_f32(g, g->nodes[u].out[0]) &&
	    npr_shape_numel(&npr_out(g, &g->nodes[u], 0)->shape) == d.N * d.K) {
		const struct npr_nn_params *rp = g->nodes[u].params;

		if (rp->red == NPR_RED_MEAN && !rp->reduced[0] &&
		    !rp->reduced[1] && rp->reduced[2] && rp->reduced[3] &&
		    !npr_conv_plan_set_mean(*plan))
			absorbed[(*nabs)++] = u;
	}
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
/* The buffers of @p's own path (without Winograd's). */
static int base_prepared(const struct npr_conv_plan *p, const void **buf,
			 size_t *bytes, int max);

/*
 * A Winograd plan adds its 16 packed U after its path's buffers, so that
 * an import uses them in place instead of transforming the weights again
 * (that took most of a cache hit of face-detection-retail-0004).
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
