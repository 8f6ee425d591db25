// SPDX-License-Identifier: MIT
/*
 * Reference kernels: convolution, pooling, softmax, reductions, MatMul.
 *
 * Convolution is direct: for every (output channel, input channel, kernel
 * tap) it adds one weighted input row to one output row, so the inner loop
 * runs over contiguous output pixels and vectorises for stride 1.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nn.h"
#include "registry.h"
#include "ref/conv/conv.h"
#include "ref/threads.h"
#include "sys.h"

/* 1-D and 2-D spatial layouts as 2-D: H = 1 for 1-D. */
struct geo {
	int64_t N, C, H, W, K, OH, OW, kh, kw;
	int64_t sh, sw, dh, dw, ph, pw;
};

static int geo_init(const struct npr_node *n, const struct npr_conv_params *p,
		    const struct npr_shape *x, const struct npr_shape *o,
		    int64_t kh, int64_t kw, struct geo *g)
{
	if (p->nsp > 2)
		return npr_node_err(n, -EOPNOTSUPP, "3-D spatial ops are not supported yet");
	g->N = x->d[0];
	g->C = x->d[1];
	g->K = o->d[1];
	if (p->nsp == 2) {
		g->H = x->d[2]; g->W = x->d[3];
		g->OH = o->d[2]; g->OW = o->d[3];
		g->kh = kh; g->kw = kw;
		g->sh = p->stride[0]; g->sw = p->stride[1];
		g->dh = p->dil[0]; g->dw = p->dil[1];
		g->ph = p->pb[0]; g->pw = p->pb[1];
	} else {
		g->H = 1; g->W = x->d[2];
		g->OH = 1; g->OW = o->d[2];
		g->kh = 1; g->kw = kw;
		g->sh = 1; g->sw = p->stride[0];
		g->dh = 1; g->dw = p->dil[0];
		g->ph = 0; g->pw = p->pb[0];
	}
	return 0;
}

/*
 * 3-D spatial layouts ([N, C, D, H, W]): plain loops over every output
 * and tap, the definitions of the OpenVINO specifications written out.
 */
struct geo3 {
	const struct npr_conv_params *p;
	int64_t N, C, K, in[3], out[3], k[3];
	int64_t isz, osz, ksz;		/* elements of a plane, a kernel */
};

static void geo3_init(const struct npr_conv_params *p,
		      const struct npr_shape *x, const struct npr_shape *o,
		      const int64_t *k, struct geo3 *g)
{
	int i;

	g->p = p;
	g->N = x->d[0];
	g->C = x->d[1];
	g->K = o->d[1];
	g->isz = g->osz = g->ksz = 1;
	for (i = 0; i < 3; i++) {
		g->in[i] = x->d[2 + i];
		g->out[i] = o->d[2 + i];
		g->k[i] = k[i];
		g->isz *= g->in[i];
		g->osz *= g->out[i];
		/* a pooling window may be far larger than its input */
		if (__builtin_mul_overflow(g->ksz, k[i], &g->ksz))
			g->ksz = INT64_MAX;
	}
}

/*
 * The input position of every tap of the window of output @o (3 coords):
 * at[t] = flat index in the plane, or -1 outside the input; *area counts
 * the taps inside the padded input.  Returns the number of taps.
 */
static int64_t window3(const struct geo3 *g, const int64_t *o, int64_t *at,
		       int64_t *area)
{
	const struct npr_conv_params *p = g->p;
	int64_t t[3], x[3], n = 0;
	int a;

	*area = 0;
	for (t[0] = 0; t[0] < g->k[0]; t[0]++)
		for (t[1] = 0; t[1] < g->k[1]; t[1]++)
			for (t[2] = 0; t[2] < g->k[2]; t[2]++, n++) {
				bool in = true, pad = true;

				for (a = 0; a < 3; a++) {
					x[a] = o[a] * p->stride[a] - p->pb[a] +
					       t[a] * p->dil[a];
					in &= x[a] >= 0 && x[a] < g->in[a];
					pad &= x[a] >= -p->pb[a] &&
					       x[a] < g->in[a] + p->pe[a];
				}
				*area += pad;
				at[n] = in ? (x[0] * g->in[1] + x[1]) *
					     g->in[2] + x[2] : -1;
			}
	return n;
}

/* Next output coordinate in C order; false after the last. */
static bool next3(const struct geo3 *g, int64_t *o)
{
	int a;

	for (a = 2; a >= 0; a--) {
		if (++o[a] < g->out[a])
			return true;
		o[a] = 0;
	}
	return false;
}

static int conv3d(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_conv_params *p = n->params;
	const struct npr_shape *ws = &in[1].shape;
	const float *x = in[0].data, *w = in[1].data;
	float *y = out->data;
	int off = p->group ? 1 : 0;
	int64_t kk[3] = { ws->d[2 + off], ws->d[3 + off], ws->d[4 + off] };
	int64_t cg, kg, b, oc, c, t, nt, area, o[3] = { 0 }, *at;
	struct geo3 g;

	geo3_init(p, &in[0].shape, &out->shape, kk, &g);
	if (p->groups < 1 || g.C % p->groups || g.K % p->groups)
		return npr_node_err(n, -EINVAL, "bad group count");
	if (!g.osz)
		return 0;
	at = malloc(sizeof(*at) * (g.ksz ? g.ksz : 1));
	if (!at)
		return -ENOMEM;
	cg = g.C / p->groups;
	kg = g.K / p->groups;
	do {
		int64_t oo = (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];

		nt = window3(&g, o, at, &area);
		for (b = 0; b < g.N; b++)
			for (oc = 0; oc < g.K; oc++) {
				double acc = 0;

				for (c = 0; c < cg; c++) {
					int64_t ic = oc / kg * cg + c;
					const float *xp = x + (b * g.C + ic) * g.isz;
					const float *wp = w + (oc * cg + c) * g.ksz;

					for (t = 0; t < nt; t++)
						if (at[t] >= 0)
							acc += (double)xp[at[t]] * wp[t];
				}
				y[(b * g.K + oc) * g.osz + oo] = (float)acc;
			}
	} while (next3(&g, o));
	free(at);
	return 0;
}

/* [lo, hi) of taps i with 0 <= base + i * dil < lim, i < k */
static void tap_range(int64_t base, int64_t dil, int64_t lim, int64_t k,
		      int64_t *lo, int64_t *hi)
{
	int64_t a = 0, b;

	if (dil == 1) {		/* no divisions on the common path */
		a = base < 0 ? -base : 0;
		b = lim - base < 0 ? 0 : lim - base;
	} else {
		if (base < 0)
			a = (-base + dil - 1) / dil;
		b = lim - 1 - base < 0 ? 0 : (lim - 1 - base) / dil + 1;
	}
	if (b > k)
		b = k;
	if (a > b)
		a = b;
	*lo = a;
	*hi = b;
}

/*
 * The taps of one pooling axis whose window starts at @base: [*lo, *hi)
 * those inside the input (@in), and the count of those inside the padded
 * input (AvgPool's divisor with the pads).  Only in-range taps are visited,
 * so a kernel far larger than its input costs no more than the input.
 */
static int64_t pool_taps(int64_t base, int64_t dil, int64_t in, int64_t pb,
			 int64_t pe, int64_t k, int64_t *lo, int64_t *hi)
{
	int64_t plo, phi;

	tap_range(base, dil, in, k, lo, hi);
	tap_range(base + pb, dil, in + pb + pe, k, &plo, &phi);
	return phi - plo;
}

/* 3-D MaxPool / AvgPool, as npr_pool_scalar() for 1-D and 2-D. */
static int pool3d(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out)
{
	const struct npr_conv_params *p = n->params;
	bool maxp = !strcmp(n->type, "MaxPool");
	const float *x = in[0].data;
	float *y = out[0].data;
	void *idx = n->nout > 1 ? out[1].data : NULL;
	int64_t pl, o[3] = { 0 }, lo[3], hi[3], t[3];
	double area;	/* up to a whole padded window: past int64_t */
	struct geo3 g;
	int a;

	if (in[0].type != NPR_ELEM_F32)
		return npr_node_err(n, -EOPNOTSUPP, "3-D pooling of %s",
				    npr_elem_name(in[0].type));
	geo3_init(p, &in[0].shape, &out[0].shape, p->kernel, &g);
	if (!g.osz)
		return 0;
	do {
		int64_t oo = (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];

		area = 1;
		for (a = 0; a < 3; a++)
			area *= (double)pool_taps(o[a] * p->stride[a] - p->pb[a],
					  p->dil[a], g.in[a], p->pb[a], p->pe[a],
					  g.k[a], &lo[a], &hi[a]);
		for (pl = 0; pl < g.N * g.C; pl++) {
			const float *xp = x + pl * g.isz;
			int64_t cnt = 0, best = -1, i = pl * g.osz + oo;
			float acc = maxp ? -INFINITY : 0;

			for (t[0] = lo[0]; t[0] < hi[0]; t[0]++)
				for (t[1] = lo[1]; t[1] < hi[1]; t[1]++)
					for (t[2] = lo[2]; t[2] < hi[2]; t[2]++) {
						int64_t at = 0;

						for (a = 0; a < 3; a++)
							at = at * g.in[a] +
							     o[a] * p->stride[a] -
							     p->pb[a] +
							     t[a] * p->dil[a];
						if (!maxp) {
							acc += xp[at];
							cnt++;
						} else if (xp[at] > acc || best < 0) {
							acc = xp[at];
							best = at;
						}
					}
			if (!maxp) {
				double div = p->exclude_pad ? (double)cnt : area;

				y[i] = div ? (float)(acc / div) : 0;
				continue;
			}
			y[i] = best < 0 ? 0 : acc;
			if (idx) {
				int64_t v = best < 0 ? 0 : best +
					    (p->axis == 0 ? pl * g.isz : 0);

				if (p->index_type == NPR_ELEM_I32)
					((int32_t *)idx)[i] = (int32_t)v;
				else
					((int64_t *)idx)[i] = v;
			}
		}
	} while (next3(&g, o));
	return 0;
}

/**
 * npr_ref_conv() - Convolution-1 and GroupConvolution-1, direct
 * @n: the node; n->params is a struct npr_conv_params (groups set by
 *     infer).
 * @in: f32 data [N, C, spatial...] and weights [K, C / G, kernel...]
 *      (GroupConvolution: [G, K / G, C / G, kernel...]).
 * @out: [N, K, output spatial...].
 *
 * 1-D and 2-D add one weighted input row to one output row per (output
 * channel, input channel, tap); 3-D loops over every output and tap.
 *
 * Return: 0; for 3-D, -EINVAL with npr_node_err() set for a group count
 * that does not divide the channels, or -ENOMEM.
 */
int npr_ref_conv(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	const struct npr_conv_params *p = n->params;
	const float *x = in[0].data, *w = in[1].data;
	float *y = out->data;
	const struct npr_shape *ws = &in[1].shape;
	int off = p->group ? 1 : 0;
	int64_t kh = p->nsp == 2 ? ws->d[2 + off] : 1;
	int64_t kw = ws->d[1 + off + p->nsp];
	int64_t G = p->groups, cg, kg, b, gi, k, c, i, j, oh;
	struct geo g = { 0 };
	int err;

	if (p->nsp == 3)
		return conv3d(n, in, out);
	err = geo_init(n, p, &in[0].shape, &out->shape, kh, kw, &g);
	if (err)
		return err;
	cg = g.C / G;
	kg = g.K / G;
	for (b = 0; b < g.N; b++)
		for (gi = 0; gi < G; gi++)
			for (k = 0; k < kg; k++) {
				int64_t oc = gi * kg + k;
				float *yp = y + ((b * g.K + oc) * g.OH) * g.OW;

				memset(yp, 0, sizeof(float) * g.OH * g.OW);
				for (c = 0; c < cg; c++) {
					int64_t ic = gi * cg + c;
					const float *xp = x + ((b * g.C + ic) * g.H) * g.W;
					const float *wp = w + ((oc * cg + c) * kh) * kw;

					for (i = 0; i < kh; i++)
						for (j = 0; j < kw; j++) {
							float wv = wp[i * kw + j];
							int64_t ox0, ox1, xoff;

							if (wv == 0.0f)
								continue;
							/* valid ox: 0 <= ox*sw - pw + j*dw < W */
							xoff = j * g.dw - g.pw;
							ox0 = xoff >= 0 ? 0 :
							      (-xoff + g.sw - 1) / g.sw;
							ox1 = (g.W - 1 - xoff) < 0 ? 0 :
							      (g.W - 1 - xoff) / g.sw + 1;
							if (ox1 > g.OW)
								ox1 = g.OW;
							for (oh = 0; oh < g.OH; oh++) {
								int64_t ih = oh * g.sh - g.ph + i * g.dh;
								const float *xr;
								float *yr;
								int64_t ox;

								if (ih < 0 || ih >= g.H)
									continue;
								xr = xp + ih * g.W + xoff;
								yr = yp + oh * g.OW;
								if (g.sw == 1) {
									for (ox = ox0; ox < ox1; ox++)
										yr[ox] += wv * xr[ox];
								} else {
									for (ox = ox0; ox < ox1; ox++)
										yr[ox] += wv * xr[ox * g.sw];
								}
							}
						}
				}
			}
	return 0;
}

/**
 * npr_pool_scalar() - MaxPool and AvgPool, plain loops
 * @n: the node; n->params is a struct npr_conv_params.
 * @in: f32 data [N, C, spatial...].
 * @out: the pooled data, and for MaxPool-8 the indices when asked for
 *       (flat within the plane, plus the plane's offset when axis is 0).
 *
 * The kernel npr_ref_pool() falls back to.  A max window wholly in the
 * padding gives 0; AvgPool divides by the inputs in the window
 * (exclude-pad) or by the window clipped to the padded input.
 *
 * Return: 0; for 3-D, -EOPNOTSUPP for a type other than f32, or -ENOMEM.
 */
int npr_pool_scalar(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_conv_params *p = n->params;
	bool maxp = !strcmp(n->type, "MaxPool");
	const float *x = in[0].data;
	float *y = out[0].data;
	void *idx = n->nout > 1 ? out[1].data : NULL;
	int64_t kh = p->nsp == 2 ? p->kernel[0] : 1;
	int64_t kw = p->kernel[p->nsp - 1];
	int64_t b, c, oh, ow, i, j, o = 0;
	struct geo g = { 0 };
	int err;

	if (p->nsp == 3)
		return pool3d(n, in, out);
	err = geo_init(n, p, &in[0].shape, &out[0].shape, kh, kw, &g);
	if (err)
		return err;
	for (b = 0; b < g.N; b++)
		for (c = 0; c < g.C; c++) {
			const float *xp = x + (b * g.C + c) * g.H * g.W;
			int64_t plane = (b * g.C + c) * g.H * g.W;

			for (oh = 0; oh < g.OH; oh++)
				for (ow = 0; ow < g.OW; ow++, o++) {
					float acc = maxp ? -INFINITY : 0;
					int64_t cnt = 0, best = -1, i0, i1, j0, j1;
					double area;

					/* in-range taps only; AvgPool counts the window clipped to the padded input */
					area = (double)pool_taps(oh * g.sh - g.ph, g.dh, g.H, g.ph,
							 p->nsp == 2 ? p->pe[0] : 0, kh, &i0, &i1) *
					       (double)pool_taps(ow * g.sw - g.pw, g.dw, g.W, g.pw,
							 p->pe[p->nsp - 1], kw, &j0, &j1);
					for (i = i0; i < i1; i++) {
						int64_t ih = oh * g.sh - g.ph + i * g.dh;

						for (j = j0; j < j1; j++) {
							int64_t iw = ow * g.sw - g.pw + j * g.dw;

							if (maxp) {
								float v = xp[ih * g.W + iw];

								if (v > acc || best < 0) {
									acc = v;
									best = ih * g.W + iw;
								}
							} else {
								acc += xp[ih * g.W + iw];
								cnt++;
							}
						}
					}
					if (maxp) {
						y[o] = best < 0 ? 0 : acc;
						if (idx) {
							int64_t v = best < 0 ? 0 : best + (p->axis == 0 ? plane : 0);

							if (p->index_type == NPR_ELEM_I32)
								((int32_t *)idx)[o] = (int32_t)v;
							else
								((int64_t *)idx)[o] = v;
						}
					} else {
						double div = p->exclude_pad ? (double)cnt : area;

						y[o] = div ? (float)(acc / div) : 0;
					}
				}
		}
	return 0;
}

#define VEC(name) npr_##name##_generic
#include "vec.h"

struct pool_job {
	const struct npr_conv_params *p;
	struct geo g;
	int64_t pe_h, pe_w;
	bool maxp;
	const float *x;
	float *y;
	void (*row)(bool, const float *const *, int64_t, int64_t, int64_t,
		    int64_t, int64_t, int64_t, const int64_t *,
		    const int64_t *, int64_t, float *);
	/* per output column and window column, the same for every plane */
	int64_t o0[16], o1[16];
	int32_t ccnt[1024], acol[1024];
	bool allc;
	/* AvgPool, the same count in every column: one divisor a row */
	bool ucol;
	void (*div)(const float *, float, float *, int64_t);
	bool (*plane3s2)(const float *, int64_t, int64_t, float *, int64_t,
			 int64_t);	/* 3x3/2 MaxPool inside the input */
	bool (*plane2s2)(bool, const float *, int64_t, int64_t, float *,
			 int64_t, int64_t);	/* 2x2/2 inside the input */
	int64_t planes, parts;	/* planes in all, tasks they are cut into */
};

/* The column geometry pool_plane() needs, once per pooling call. */
static void pool_columns(struct pool_job *j)
{
	const struct geo *g = &j->g;
	int64_t ow, k;

	for (ow = 0; ow < g->OW; ow++) {
		int64_t bw = ow * g->sw - g->pw, k0, k1, b0, b1;

		tap_range(bw, g->dw, g->W, g->kw, &k0, &k1);
		tap_range(bw + g->pw, g->dw, g->W + g->pw + j->pe_w, g->kw,
			  &b0, &b1);
		j->ccnt[ow] = (int32_t)(k1 - k0);
		j->acol[ow] = (int32_t)(b1 - b0);
	}
	for (k = 0; k < g->kw; k++) {
		int64_t off = k * g->dw - g->pw;

		j->o0[k] = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
		j->o1[k] = g->W - 1 - off < 0 ? 0 : (g->W - 1 - off) / g->sw + 1;
		if (j->o1[k] > g->OW)
			j->o1[k] = g->OW;
		if (j->o0[k] > j->o1[k])
			j->o0[k] = j->o1[k];
	}
	/* MaxPool, every window column inside the input: no second pass */
	j->allc = j->maxp;
	for (ow = 0; ow < g->OW; ow++)
		j->allc = j->allc && j->ccnt[ow] > 0;
	j->ucol = !j->maxp && g->OW > 0 && j->ccnt[0] > 0;
	for (ow = 1; ow < g->OW; ow++)
		j->ucol = j->ucol && j->ccnt[ow] == j->ccnt[0] &&
			  j->acol[ow] == j->acol[0];
}

/*
 * One (image, channel) plane, a row at a time: the input rows a window
 * row covers and, per window column, the output pixels it reaches inside
 * the input are found once; npr_pool_row_generic() or
 * npr_pool_row_avx512() (vec.h) does the rest in vector loops.
 * Windows that miss the input entirely give 0 (as the scalar kernel).
 */
static void pool_plane(void *arg, int pl, int tid)
{
	const struct pool_job *j = arg;
	const struct geo *g = &j->g;
	const float *xp = j->x + (int64_t)pl * g->H * g->W;
	float *y = j->y + (int64_t)pl * g->OH * g->OW;
	int64_t oh, ow, i, cnt, acnt;
	const int64_t *o0 = j->o0, *o1 = j->o1;
	const int32_t *ccnt = j->ccnt, *acol = j->acol;
	const float *rows[16];
	float acc[1024];

	if (j->plane3s2 && j->plane3s2(xp, g->H, g->W, y, g->OH, g->OW))
		return;
	if (j->plane2s2 && j->plane2s2(j->maxp, xp, g->H, g->W, y, g->OH,
				       g->OW))
		return;
	for (oh = 0; oh < g->OH; oh++) {
		int64_t bh = oh * g->sh - g->ph, i0, i1, a0, a1;
		float *yr = y + oh * g->OW;

		tap_range(bh, g->dh, g->H, g->kh, &i0, &i1);
		tap_range(bh + g->ph, g->dh, g->H + g->ph + j->pe_h, g->kh,
			  &a0, &a1);
		for (i = i0; i < i1; i++)
			rows[i - i0] = xp + (bh + i * g->dh) * g->W;
		if (j->allc && i1 > i0) {
			j->row(true, rows, i1 - i0, g->W, g->kw, g->sw, g->dw, g->pw,
			       o0, o1, g->OW, yr);
			continue;
		}
		j->row(j->maxp, rows, i1 - i0, g->W, g->kw, g->sw, g->dw, g->pw,
		       o0, o1, g->OW, acc);
		/*
		 * a row of one divisor: a vector loop (the scalar division
		 * per pixel was most of a 2x2/2 AvgPool's time)
		 */
		acnt = j->p->exclude_pad ? (i1 - i0) * ccnt[0] :
		       (a1 - a0) * acol[0];
		if (j->ucol && i1 > i0 && acnt) {
			j->div(acc, (float)acnt, yr, g->OW);
			continue;
		}
		for (ow = 0; ow < g->OW; ow++) {
			cnt = (i1 - i0) * ccnt[ow];
			if (j->maxp) {
				yr[ow] = cnt ? acc[ow] : 0;
				continue;
			}
			acnt = j->p->exclude_pad ? cnt : (a1 - a0) * acol[ow];
			yr[ow] = acnt ? acc[ow] / (float)acnt : 0;
		}
	}
}

/*
 * Planes [planes * i / parts, planes * (i + 1) / parts): a 27x27 plane
 * pools in about 0.1 us, less than a turn at the pool's task counter.
 */
static void pool_task(void *arg, int i, int tid)
{
	const struct pool_job *j = arg;
	int64_t a = j->planes * i / j->parts;
	int64_t b = j->planes * (i + 1) / j->parts;

	for (; a < b; a++)
		pool_plane(arg, (int)a, tid);
}

/* MaxPool of small integers: through f32, where they are exact. */
static int pool_int(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	int64_t ni = npr_shape_numel(&in[0].shape);
	int64_t no = npr_shape_numel(&out[0].shape);
	struct npr_tensor x = in[0], y = out[0];
	struct npr_tensor o2[2];
	int err = -ENOMEM;

	x.type = y.type = NPR_ELEM_F32;
	x.data = malloc(sizeof(float) * (ni ? ni : 1));
	y.data = malloc(sizeof(float) * (no ? no : 1));
	x.nbytes = sizeof(float) * ni;
	y.nbytes = sizeof(float) * no;
	if (x.data && y.data) {
		npr_convert(x.data, NPR_ELEM_F32, in[0].data, in[0].type, ni);
		o2[0] = y;
		if (n->nout > 1)
			o2[1] = out[1];
		err = npr_pool_scalar(n, &x, o2);
		if (!err)
			npr_convert(out[0].data, out[0].type, y.data,
				    NPR_ELEM_F32, no);
	}
	free(x.data);
	free(y.data);
	return err;
}

/*
 * u8 MaxPool (the low-precision pass's, lib/passes/lowp.c): per plane and
 * output row the maximum of the window's rows, then of its columns;
 * padding is skipped, as in f32.
 */
struct pool_u8_job {
	struct geo g;
	const uint8_t *x;
	uint8_t *y;
	bool nomem;
};

/* d[w] = max(d[w], s[w]), w < n */
static void max_u8(uint8_t *d, const uint8_t *s, int64_t n)
{
	int64_t w = 0;

#if defined(__SSE2__)
	for (; w + 16 <= n; w += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(d + w));
		__m128i b = _mm_loadu_si128((const __m128i *)(s + w));

		_mm_storeu_si128((__m128i *)(d + w), _mm_max_epu8(a, b));
	}
#endif
	for (; w < n; w++)
		d[w] = s[w] > d[w] ? s[w] : d[w];
}

static void pool_u8_plane(void *arg, int it, int tid)
{
	struct pool_u8_job *j = arg;
	const struct geo *g = &j->g;
	const uint8_t *x = j->x + (int64_t)it * g->H * g->W;
	uint8_t *y = j->y + (int64_t)it * g->OH * g->OW;
	/* a row's column maxima, with zeros around it (u8 0: no value) */
	int64_t pad = g->pw + (g->kw - 1) * g->dw + g->OW * g->sw + 32;
	uint8_t *buf = calloc(g->W + pad, 1), *vm = buf + g->pw;
	int64_t oh, ow, i;

	(void)tid;
	if (!buf) {
		j->nomem = true;
		return;
	}
	for (oh = 0; oh < g->OH; oh++) {
		uint8_t *yr = y + oh * g->OW;

		memset(vm, 0, g->W);
		for (i = 0; i < g->kh; i++) {
			int64_t ih = oh * g->sh - g->ph + i * g->dh;

			if (ih >= 0 && ih < g->H)
				max_u8(vm, x + ih * g->W, g->W);
		}
		if (g->sw == 1) {
			/* the windows' columns are rows shifted by one tap */
			memcpy(yr, buf, g->OW);
			for (i = 1; i < g->kw; i++)
				max_u8(yr, buf + i * g->dw, g->OW);
			continue;
		}
		for (ow = 0; ow < g->OW; ow++) {
			const uint8_t *c = buf + ow * g->sw;
			uint8_t m = 0;

			for (i = 0; i < g->kw; i++)
				m = c[i * g->dw] > m ? c[i * g->dw] : m;
			yr[ow] = m;
		}
	}
	free(buf);
}

static int pool_u8(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out, int64_t kh, int64_t kw)
{
	struct pool_u8_job j = { .x = in[0].data, .y = out[0].data };
	int err = geo_init(n, n->params, &in[0].shape, &out[0].shape, kh, kw,
			   &j.g);

	if (err)
		return err;
	if (j.g.N * j.g.C > INT32_MAX)
		return npr_node_err(n, -EFBIG, "too many planes");
	npr_parallel_for((int)(j.g.N * j.g.C), pool_u8_plane, &j);
	return j.nomem ? -ENOMEM : 0;
}

/* NPR_POOL_ROWS=1: the row kernel for every pool; read once, not per call */
static bool pool_rows_only(void)
{
	static _Atomic int v = -1;
	int r = v;

	if (r < 0)
		v = r = npr_env(NPR_ENV_POOL_ROWS) != NULL;
	return r;
}

/**
 * npr_ref_pool() - MaxPool and AvgPool
 * @n: the node; n->params is a struct npr_conv_params.
 * @in: data [N, C, spatial...].
 * @out: the pooled data, and for MaxPool-8 the indices.
 *
 * f32 without indices, at most 2-D, kernels up to 16 and output rows up to
 * 1024 take the fast path: row kernels (AVX-512 when the CPU has it) over
 * the pool's threads, the same windows as the scalar kernel (max NaN
 * handling aside).  A 2-D u8 MaxPool without indices has a kernel of its
 * own; other element types are converted to f32 (exact for small
 * integers) and pooled by npr_pool_scalar(), as is f32 outside the fast
 * path.
 *
 * Return: 0, -ENOMEM, or the error of npr_pool_scalar().
 */
int npr_ref_pool(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	const struct npr_conv_params *p = n->params;
	struct pool_job j = { .p = p };
	int64_t kh = p->nsp == 2 ? p->kernel[0] : 1;
	int64_t kw = p->kernel[p->nsp - 1];
	int err;

	if (in[0].type == NPR_ELEM_U8 && !strcmp(n->type, "MaxPool") &&
	    p->nsp == 2 && !(n->nout > 1 && out[1].data))
		return pool_u8(n, in, out, kh, kw);
	if (in[0].type != NPR_ELEM_F32)
		return pool_int(n, in, out);
	/* the indices (MaxPool-8), when asked for: the scalar kernel */
	if ((n->nout > 1 && out[1].data) || p->nsp > 2 ||
	    kh > 16 || kw > 16 || out[0].shape.d[out[0].shape.rank - 1] > 1024)
		return npr_pool_scalar(n, in, out);
	j.row = npr_pool_row_generic;
	j.div = npr_div_row_generic;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		j.row = npr_pool_row_avx512;
		j.div = npr_div_row_avx512;
	}
#endif
	err = geo_init(n, p, &in[0].shape, &out[0].shape, kh, kw, &j.g);
	if (err)
		return err;
	j.maxp = !strcmp(n->type, "MaxPool");
	j.pe_h = p->nsp == 2 ? p->pe[0] : 0;
	j.pe_w = p->pe[p->nsp - 1];
	j.x = in[0].data;
	j.y = out[0].data;
	pool_columns(&j);
	if (j.maxp && j.row == npr_pool_row_avx512 && kh == 3 && kw == 3 &&
	    j.g.sh == 2 && j.g.sw == 2 && j.g.dh == 1 && j.g.dw == 1 &&
	    !j.g.ph && !j.g.pw && !pool_rows_only())
		j.plane3s2 = npr_maxpool3s2_plane_avx512;
	if (j.row == npr_pool_row_avx512 && kh == 2 && kw == 2 &&
	    j.g.sh == 2 && j.g.sw == 2 && j.g.dh == 1 && j.g.dw == 1 &&
	    !j.g.ph && !j.g.pw && !pool_rows_only())
		j.plane2s2 = npr_pool2s2_plane_avx512;
	/* about eight runs of planes per thread, each at least 4096 outputs */
	j.planes = j.g.N * j.g.C;
	j.parts = 8 * npr_par_threads();
	if (j.parts > j.planes * j.g.OH * j.g.OW / 4096)
		j.parts = j.planes * j.g.OH * j.g.OW / 4096;
	if (j.parts > j.planes)
		j.parts = j.planes;
	if (j.parts < 1)
		j.parts = 1;
	npr_parallel_for((int)j.parts, pool_task, &j);
	return 0;
}

/**
 * npr_ref_softmax() - SoftMax along one axis
 * @n: the node; n->params is a struct npr_nn_params (axis normalised).
 * @in: f32 data.
 * @out: the result, same shape.
 *
 * Max-subtracted, the sum in double.
 *
 * Return: 0.
 */
int npr_ref_softmax(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_nn_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t outer = 1, inner = 1, D = s->d[p->axis], a, b, k;
	const float *x = in[0].data;
	float *y = out->data;
	int i;

	for (i = 0; i < p->axis; i++)
		outer *= s->d[i];
	for (i = p->axis + 1; i < s->rank; i++)
		inner *= s->d[i];
	for (a = 0; a < outer; a++)
		for (b = 0; b < inner; b++) {
			const float *xp = x + a * D * inner + b;
			float *yp = y + a * D * inner + b;
			float mx = -INFINITY;
			double sum = 0;

			for (k = 0; k < D; k++)
				if (xp[k * inner] > mx)
					mx = xp[k * inner];
			for (k = 0; k < D; k++) {
				yp[k * inner] = expf(xp[k * inner] - mx);
				sum += yp[k * inner];
			}
			for (k = 0; k < D; k++)
				yp[k * inner] = (float)(yp[k * inner] / sum);
		}
	return 0;
}

static double red_load(const struct npr_tensor *t, int64_t i)
{
	switch (t->type) {
	case NPR_ELEM_F32: return ((const float *)t->data)[i];
	case NPR_ELEM_I32: return ((const int32_t *)t->data)[i];
	case NPR_ELEM_I64: return (double)((const int64_t *)t->data)[i];
	}
	return 0;
}

struct reduce_job {
	const float *x;
	float *y;
	int64_t outer, inner, parts;
	int red;
};

/* Outputs [outer * i / parts, outer * (i + 1) / parts) of a reduction. */
static void reduce_part(void *arg, int i, int tid)
{
	const struct reduce_job *j = arg;
	int64_t o, k, inner = j->inner;

	if (j->red != NPR_RED_MAX) {
		void (*sum)(const float *, int64_t, int64_t, float *, bool) =
			npr_sum_rows_generic;
		int64_t o0 = j->outer * i / j->parts;
		int64_t o1 = j->outer * (i + 1) / j->parts;

#if defined(__x86_64__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f"))
			sum = npr_sum_rows_avx512;
#endif
		sum(j->x + o0 * inner, o1 - o0, inner, j->y + o0,
		    j->red == NPR_RED_MEAN);
		return;
	}
	for (o = j->outer * i / j->parts; o < j->outer * (i + 1) / j->parts;
	     o++) {
		const float *x = j->x + o * inner;
		float m = -INFINITY;

		for (k = 0; k < inner; k++)
			m = x[k] > m ? x[k] : m;
		j->y[o] = m;
	}
}

/*
 * Reductions over trailing dimensions of an f32 tensor (global pooling:
 * ReduceMean over H, W) in contiguous blocks, eight partial sums per
 * block, the blocks split over the threads (about four parts per thread,
 * each at least 16K inputs); NULL-free fast path of npr_ref_reduce().
 * Returns false when the case is not one it handles.
 */
static bool reduce_inner(const struct npr_nn_params *p,
			 const struct npr_tensor *in, struct npr_tensor *out)
{
	const struct npr_shape *s = &in->shape;
	struct reduce_job j = {
		.x = in->data, .y = out->data, .outer = 1, .inner = 1,
		.red = p->red,
	};
	int i, first = s->rank;

	if (in->type != NPR_ELEM_F32 || out->type != NPR_ELEM_F32 ||
	    (p->red != NPR_RED_SUM && p->red != NPR_RED_MEAN &&
	     p->red != NPR_RED_MAX))
		return false;
	for (i = s->rank - 1; i >= 0 && p->reduced[i]; i--)
		first = i;
	for (i = 0; i < first; i++) {
		if (p->reduced[i])
			return false;
		j.outer *= s->d[i];
	}
	for (i = first; i < s->rank; i++)
		j.inner *= s->d[i];
	if (first == s->rank || !j.inner)
		return false;
	j.parts = 4 * npr_par_threads();
	if (j.parts > j.outer * j.inner / 16384)
		j.parts = j.outer * j.inner / 16384;
	if (j.parts > j.outer)
		j.parts = j.outer;
	/* a count the threads share evenly */
	if (j.parts > npr_par_threads())
		j.parts -= j.parts % npr_par_threads();
	if (j.parts < 1)
		j.parts = 1;
	if (j.parts > 1)
		npr_parallel_for((int)j.parts, reduce_part, &j);
	else
		reduce_part(&j, 0, 0);
	return true;
}

/*
 * @v as an integer of [@lo, @hi]: an empty Max/Min (-inf, +inf) gives the
 * type's limit, as the ONNX specification says; an overflowing sum
 * saturates and NaN gives 0, where a plain conversion is undefined.
 */
static int64_t sat_int(double v, int64_t lo, int64_t hi)
{
	if (isnan(v))
		return 0;
	if (v <= (double)lo)
		return lo;
	if (v >= (double)hi)
		return hi;
	return (int64_t)v;
}

/**
 * npr_ref_reduce() - ReduceSum, Mean, Max, Min, Prod, L1 and L2
 * @n: the node; n->params is a struct npr_nn_params with @reduced set by
 *     infer.
 * @in: f32, i32 or i64 data, and the axes (already read by infer).
 * @out: the result, f32, i32 or i64.
 *
 * Accumulates in double; the mean of an empty group is NaN.  Sum, Mean
 * and Max of f32 over trailing axes take a fast path split over the
 * pool's threads.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_reduce(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_nn_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	int64_t ocnt = npr_shape_numel(&out->shape);
	int64_t icnt = npr_shape_numel(s), ost[NPR_MAX_RANK];
	int64_t idx[NPR_MAX_RANK] = { 0 }, k, o, st = 1, per;
	double *acc;
	int i, r = s->rank;

	if (reduce_inner(p, &in[0], out))
		return 0;
	acc = malloc(sizeof(double) * (ocnt ? ocnt : 1));
	if (!acc)
		return -ENOMEM;
	for (i = r - 1; i >= 0; i--) {
		ost[i] = p->reduced[i] ? 0 : st;
		if (!p->reduced[i])
			st *= s->d[i];
	}
	for (k = 0; k < ocnt; k++)
		acc[k] = p->red == NPR_RED_MAX ? -INFINITY :
			 p->red == NPR_RED_MIN ? INFINITY :
			 p->red == NPR_RED_PROD ? 1 : 0;
	per = ocnt ? icnt / ocnt : 0;
	for (k = 0; k < icnt; k++) {
		double v = red_load(&in[0], k);

		o = 0;
		for (i = 0; i < r; i++)
			o += idx[i] * ost[i];
		switch (p->red) {
		case NPR_RED_SUM: case NPR_RED_MEAN: acc[o] += v; break;
		case NPR_RED_MAX: if (v > acc[o]) acc[o] = v; break;
		case NPR_RED_MIN: if (v < acc[o]) acc[o] = v; break;
		case NPR_RED_PROD: acc[o] *= v; break;
		case NPR_RED_L1: acc[o] += fabs(v); break;
		case NPR_RED_L2: acc[o] += v * v; break;
		}
		for (i = r - 1; i >= 0; i--) {
			if (++idx[i] < s->d[i])
				break;
			idx[i] = 0;
		}
	}
	for (k = 0; k < ocnt; k++) {
		double v = acc[k];

		if (p->red == NPR_RED_MEAN)
			v = per ? v / per : NAN;
		else if (p->red == NPR_RED_L2)
			v = sqrt(v);
		switch (out->type) {
		case NPR_ELEM_F32: ((float *)out->data)[k] = (float)v; break;
		case NPR_ELEM_I32: ((int32_t *)out->data)[k] = (int32_t)sat_int(v, INT32_MIN, INT32_MAX); break;
		case NPR_ELEM_I64: ((int64_t *)out->data)[k] = sat_int(v, INT64_MIN, INT64_MAX); break;
		}
	}
	free(acc);
	return 0;
}

/**
 * npr_matmul_scalar() - MatMul-1, plain loops
 * @n: the node; n->params is a struct npr_nn_params (ta, tb).
 * @in: f32 A and B; 1-D operands as the spec says, batch dimensions
 *      broadcast.
 * @out: the product.
 *
 * The kernel npr_ref_matmul() falls back to.
 *
 * Return: 0.
 */
int npr_matmul_scalar(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_nn_params *p = n->params;
	const struct npr_shape *as = &in[0].shape, *bs = &in[1].shape;
	bool ta = p->ta && as->rank > 1, tb = p->tb && bs->rank > 1;
	int64_t M, K, N, batch = 1, bi, i, j, k;
	int ra = as->rank, rb = bs->rank, ro = out->shape.rank, nb, d;
	int64_t ast[NPR_MAX_RANK] = { 0 }, bst[NPR_MAX_RANK] = { 0 };
	int64_t bd[NPR_MAX_RANK];
	const float *A = in[0].data, *B = in[1].data;
	float *C = out->data;

	M = ra == 1 ? 1 : (ta ? as->d[ra - 1] : as->d[ra - 2]);
	K = ra == 1 ? as->d[0] : (ta ? as->d[ra - 2] : as->d[ra - 1]);
	N = rb == 1 ? 1 : (tb ? bs->d[rb - 2] : bs->d[rb - 1]);
	/* batch dims of the output, and the inputs' batch strides */
	nb = ro - (ra > 1) - (rb > 1);
	for (d = 0; d < nb; d++) {
		bd[d] = out->shape.d[d];
		batch *= bd[d];
	}
	{
		int64_t s = M * K;

		for (d = ra - 3; d >= 0; d--) {
			int od = d + (nb - (ra - 2));

			ast[od] = as->d[d] == 1 ? 0 : s;
			s *= as->d[d];
		}
		s = K * N;
		for (d = rb - 3; d >= 0; d--) {
			int od = d + (nb - (rb - 2));

			bst[od] = bs->d[d] == 1 ? 0 : s;
			s *= bs->d[d];
		}
	}
	for (bi = 0; bi < batch; bi++) {
		int64_t rem = bi, ao = 0, bo = 0;
		float *c = C + bi * M * N;

		for (d = nb - 1; d >= 0; d--) {
			int64_t x = rem % bd[d];

			rem /= bd[d];
			ao += x * ast[d];
			bo += x * bst[d];
		}
		memset(c, 0, sizeof(float) * M * N);
		for (i = 0; i < M; i++)
			for (k = 0; k < K; k++) {
				float av = ta ? A[ao + k * M + i] : A[ao + i * K + k];

				if (tb) {
					for (j = 0; j < N; j++)
						c[i * N + j] += av * B[bo + j * K + k];
				} else {
					const float *br = B + bo + k * N;

					for (j = 0; j < N; j++)
						c[i * N + j] += av * br[j];
				}
			}
	}
	return 0;
}

struct fc_job {
	void (*nt)(int64_t, int64_t, int64_t, const float *, const float *,
		   float *, int64_t);
	int64_t M, N, K, parts;
	const float *A, *B;
	float *C;
};

/* Columns [N * i / parts, N * (i + 1) / parts) of a C = A * B^T. */
static void fc_task(void *arg, int i, int tid)
{
	const struct fc_job *j = arg;
	int64_t n0 = j->N * i / j->parts, n1 = j->N * (i + 1) / j->parts;

	j->nt(j->M, n1 - n0, j->K, j->A, j->B + n0 * j->K, j->C + n0, j->N);
}

/*
 * The element offsets of batch @bi's matrix in A and B: the batch dims of
 * the output (@nb of them, @bd), each input's strides (0 where it
 * broadcasts).
 */
static void batch_offsets(int64_t bi, int nb, const int64_t *bd,
			  const int64_t *ast, const int64_t *bst, int64_t *ao,
			  int64_t *bo)
{
	int d;

	*ao = *bo = 0;
	for (d = nb - 1; d >= 0; d--) {
		int64_t x = bi % bd[d];

		bi /= bd[d];
		*ao += x * ast[d];
		*bo += x * bst[d];
	}
}

/**
 * npr_ref_matmul() - MatMul-1
 * @n: the node; n->params is a struct npr_nn_params (ta, tb).
 * @in: A and B.
 * @out: the product.
 *
 * f32 operands of rank 2 or more, A not transposed, take the vector loops
 * of vec.h (the AVX-512 build when the CPU has it).  A 2-D B (a weight)
 * multiplies all of A's rows at once, its leading dims folded into the
 * rows (a [1, 1, 256] token against [256, N] is one row by B); with B
 * transposed, large products are split over the pool's threads.  Batched
 * operands (attention's Q K^T and P V) run one matrix pair at a time,
 * their batch dims broadcast.  Anything else npr_matmul_scalar().
 *
 * Return: 0.
 */
int npr_ref_matmul(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_nn_params *p = n->params;
	const struct npr_shape *as = &in[0].shape, *bs = &in[1].shape;
	void (*nt)(int64_t, int64_t, int64_t, const float *, const float *,
		   float *, int64_t) = npr_matmul_nt_generic;
	void (*nn)(int64_t, int64_t, int64_t, const float *, const float *,
		   float *) = npr_matmul_nn_generic;
	int64_t M, K, N, batch = 1, bi, ast[NPR_MAX_RANK], bst[NPR_MAX_RANK];
	int64_t bd[NPR_MAX_RANK];
	int ra = as->rank, rb = bs->rank, nb, d;
	const float *A = in[0].data, *B = in[1].data;
	float *C = out->data;

	if (in[0].type != NPR_ELEM_F32 || in[1].type != NPR_ELEM_F32 ||
	    ra < 2 || rb < 2 || p->ta)
		return npr_matmul_scalar(n, in, out);
	K = as->d[ra - 1];
	N = p->tb ? bs->d[rb - 2] : bs->d[rb - 1];
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		nt = npr_matmul_nt_avx512;
		nn = npr_matmul_nn_avx512;
	}
#endif
	if (rb == 2) {
		for (M = 1, d = 0; d < ra - 1; d++)
			M *= as->d[d];
		if (!M || !N)
			return 0;
		if (!K) {
			memset(C, 0, sizeof(float) * M * N);
			return 0;
		}
		if (p->tb) {
			/* memory-bound on B: split its rows over the threads */
			struct fc_job j = {
				.nt = nt, .M = M, .N = N, .K = K, .A = A,
				.B = B, .C = C,
				.parts = N >= 64 && N * K >= 65536 ? 8 : 1,
			};

			npr_parallel_for((int)j.parts, fc_task, &j);
		} else {
			nn(M, N, K, A, B, C);
		}
		return 0;
	}
	M = as->d[ra - 2];
	nb = out->shape.rank - 2;
	for (d = 0; d < nb; d++) {
		int da = d - (nb - (ra - 2)), db = d - (nb - (rb - 2));

		bd[d] = out->shape.d[d];
		batch *= bd[d];
		ast[d] = da < 0 || as->d[da] == 1 ? 0 : 1;
		bst[d] = db < 0 || bs->d[db] == 1 ? 0 : 1;
	}
	/* strides in elements: each dim's size times those after it */
	{
		int64_t sa = M * K, sb = K * N;

		for (d = nb - 1; d >= 0; d--) {
			int da = d - (nb - (ra - 2)), db = d - (nb - (rb - 2));

			ast[d] *= sa;
			bst[d] *= sb;
			if (da >= 0)
				sa *= as->d[da];
			if (db >= 0)
				sb *= bs->d[db];
		}
	}
	if (!M || !N)
		return 0;
	for (bi = 0; bi < batch; bi++) {
		int64_t ao, bo;
		float *c = C + bi * M * N;

		batch_offsets(bi, nb, bd, ast, bst, &ao, &bo);
		if (!K)
			memset(c, 0, sizeof(float) * M * N);
		else if (p->tb)
			nt(M, N, K, A + ao, B + bo, c, N);
		else
			nn(M, N, K, A + ao, B + bo, c);
	}
	return 0;
}

/* The op definitions of lib/ops/nn.c these kernels evaluate. */
const struct npr_kernel npr_kernels_nn[] = {
	{ "Convolution", 0, 99, npr_ref_conv },
	{ "GroupConvolution", 0, 99, npr_ref_conv },
	{ "MaxPool", 0, 1, npr_ref_pool },
	{ "MaxPool", 8, 13, npr_ref_pool },
	{ "AvgPool", 0, 13, npr_ref_pool },
	{ "SoftMax", 0, 1, npr_ref_softmax },
	{ "SoftMax", 8, 99, npr_ref_softmax },
	{ "ReduceSum", 0, 99, npr_ref_reduce },
	{ "ReduceMean", 0, 99, npr_ref_reduce },
	{ "ReduceMax", 0, 99, npr_ref_reduce },
	{ "ReduceMin", 0, 99, npr_ref_reduce },
	{ "ReduceProd", 0, 99, npr_ref_reduce },
	{ "ReduceL1", 0, 99, npr_ref_reduce },
	{ "ReduceL2", 0, 99, npr_ref_reduce },
	{ "MatMul", 0, 99, npr_ref_matmul },
	{ NULL },
};
