// SPDX-License-Identifier: MIT
/*
 * Fast convolution, the runs: a plan (conv.c) over a batch of images,
 * whole images per thread or each image split across the threads, by
 * path: a GEMM on the input or on im2col-packed panels, the direct
 * (padded plane) path, depthwise, the pixel-major tiles, Winograd; then
 * the activation after the epilogue.  See conv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref/threads.h"
#include "ref/kernels/eltwise.h"
#include "ops/nn.h"

#define PACK_IM2COL npr_pack_im2col_generic
#define UNPAD_ROWS npr_unpad_rows_generic
#include "conv_pack.h"

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

	if (p->dw_dot) {
		struct npr_gemm_epi e = {
			.bias = &b, .res = res, .act = p->act, .lo = p->lo,
			.hi = p->hi,
		};
		float v;

		p->dw_dot(x, wc, d->H * d->W, 1, &v);
		y[0] = epi_apply(&e, v, 0, 0);
		return;
	}
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

/**
 * npr_conv_plan_run() - y = act(conv(x) + bias + res)
 * @p: the plan.
 * @x: the input, [N, C, H, W].
 * @y: Out. The output, [N, K, OH, OW] (pooled: the pool's plane; with
 *     the mean fused: [N, K]).
 * @res: the residual, shaped like @y, when the epilogue has one; else
 *       NULL.
 *
 * The whole batch: npr_conv_plan_run_n() with n = N.
 *
 * Context: any thread; a plan may run on several threads at once.
 * Return: 0 or -ENOMEM.
 */
int npr_conv_plan_run(const struct npr_conv_plan *p, const float *x,
		      float *y, const float *res)
{
	return npr_conv_plan_run_n(p, x, y, res, p->d.N);
}

static int run_n(const struct npr_conv_plan *p, const float *x, float *y,
		 const float *res, int64_t n);

/**
 * npr_conv_plan_run_n() - npr_conv_plan_run() on @n images of the batch
 * @p: the plan.
 * @x: the input of the first of those images (whole images, NCHW).
 * @y: Out. The output of the first of them.
 * @res: the residual of the first of them, or NULL.
 * @n: the number of images.
 *
 * The activation set by npr_conv_plan_post() is applied after the
 * images are done.
 *
 * Context: any thread; a plan may run on several threads at once.
 * Return: 0, -EINVAL when @n is not in 1..N, -ENOMEM.
 */
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

