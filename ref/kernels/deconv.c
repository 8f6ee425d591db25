// SPDX-License-Identifier: MIT
/*
 * Reference kernel: transposed convolution (ConvolutionBackpropData,
 * GroupConvolutionBackpropData), 1-D, 2-D and 3-D.
 *
 * Input pixel i, kernel tap j land on output pixel i * s + j * d - pb.
 * For every (input channel, output channel, tap) the kernel scatters one
 * weighted input row into one output row; the valid input range of a row
 * is computed up front so the inner loop has no bounds checks.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ref/gemm.h"
#include "deconv.h"
#include "registry.h"
#include "ref/threads.h"
#include "sys.h"

/* 1-D and 2-D as 2-D: H = 1 for 1-D. */
struct dgeo {
	int64_t N, C, H, W, K, OH, OW, kh, kw;
	int64_t sh, sw, dh, dw, ph, pw;
};

/* First and one-past-last i in [0, n) with 0 <= i * s + off < o. */
static void valid_range(int64_t n, int64_t s, int64_t off, int64_t o,
			int64_t *i0, int64_t *i1)
{
	*i0 = off >= 0 ? 0 : (-off + s - 1) / s;
	*i1 = o - 1 - off < 0 ? 0 : (o - 1 - off) / s + 1;
	if (*i1 > n)
		*i1 = n;
	if (*i0 > *i1)
		*i0 = *i1;
}

/* Scatter one input plane @xp through one kernel @wp into @yp. */
static void scatter(const struct dgeo *g, const float *xp, const float *wp,
		    float *yp)
{
	int64_t i, j, h0, h1, w0, w1, xo, ih, iw;

	for (i = 0; i < g->kh; i++) {
		valid_range(g->H, g->sh, i * g->dh - g->ph, g->OH, &h0, &h1);
		for (j = 0; j < g->kw; j++) {
			float wv = wp[i * g->kw + j];

			if (wv == 0.0f)
				continue;
			xo = j * g->dw - g->pw;
			valid_range(g->W, g->sw, xo, g->OW, &w0, &w1);
			for (ih = h0; ih < h1; ih++) {
				const float *xr = xp + ih * g->W;
				float *yr = yp + (ih * g->sh + i * g->dh -
						  g->ph) * g->OW;

				for (iw = w0; iw < w1; iw++)
					yr[iw * g->sw + xo] += wv * xr[iw];
			}
		}
	}
}

/*
 * The GEMM form (1-D and 2-D): per image and group, the columns of a band
 * of input rows, cols[(k, tap)][pixel] = sum_c W[c][k][tap] x[c][pixel],
 * are one SGEMM with the transposed weights packed as A and the input
 * rows read as B; col2im then adds each row of cols into its output row
 * at the tap's offset, as scatter() does with one weight.  Bands whose
 * output rows overlap (a kernel taller than the stride) are neighbours
 * only, so the even bands run on the threads, then the odd ones.
 */
#define DECONV_COLS	4096	/* pixels of a band, about */

struct dg_job {
	const struct dgeo *g;
	const struct npr_gemm_a *pa;	/* per group */
	const float *x;			/* the image */
	float *y;
	int64_t G, rows, nband, phase;	/* input rows a band */
	_Atomic int err;
};

static void dg_band(void *arg, int i, int tid)
{
	static _Thread_local float *buf;
	static _Thread_local size_t cap;
	struct dg_job *j = arg;
	const struct dgeo *g = j->g;
	int64_t band = 2 * (i / j->G) + j->phase, gi = i % j->G;
	int64_t r0 = band * j->rows, r1 = r0 + j->rows, cg = g->C / j->G;
	int64_t kg = g->K / j->G, taps = g->kh * g->kw, n, k, t, ih, iw;
	struct npr_gemm_bsrc bs;
	float *cols;
	int err;

	if (r0 >= g->H)
		return;
	if (r1 > g->H)
		r1 = g->H;
	n = (r1 - r0) * g->W;
	cols = npr_scratch(&buf, &cap, kg * taps * n);
	if (!cols) {
		j->err = -ENOMEM;
		return;
	}
	bs.B = j->x + gi * cg * g->H * g->W + r0 * g->W;
	bs.ldb = g->H * g->W;
	err = npr_gemm_run(&j->pa[gi], n, npr_gemm_pack_b_rm, &bs, cols, n,
			   NULL, 1);
	if (err) {
		j->err = err;
		return;
	}
	for (k = 0; k < kg; k++) {
		float *yp = j->y + (gi * kg + k) * g->OH * g->OW;

		for (t = 0; t < taps; t++) {
			const float *cr = cols + (k * taps + t) * n;
			int64_t i0 = t / g->kw, j0 = t % g->kw, h0, h1, w0, w1;
			int64_t xo = j0 * g->dw - g->pw;

			valid_range(g->H, g->sh, i0 * g->dh - g->ph, g->OH,
				    &h0, &h1);
			valid_range(g->W, g->sw, xo, g->OW, &w0, &w1);
			if (h0 < r0)
				h0 = r0;
			if (h1 > r1)
				h1 = r1;
			for (ih = h0; ih < h1; ih++) {
				const float *xr = cr + (ih - r0) * g->W;
				float *yr = yp + (ih * g->sh + i0 * g->dh -
						  g->ph) * g->OW;

				for (iw = w0; iw < w1; iw++)
					yr[iw * g->sw + xo] += xr[iw];
			}
		}
	}
}

static int deconv_gemm(const struct dgeo *g, int64_t G, const float *x,
		       const float *w, float *y)
{
	const struct npr_gemm_kern *kern = npr_gemm_kern_best();
	int64_t cg = g->C / G, kg = g->K / G, taps = g->kh * g->kw;
	int64_t M = kg * taps, gi, c, k, t, b;
	struct npr_gemm_a *pa = calloc(G, sizeof(*pa));
	float *at = malloc(sizeof(float) * M * (cg ? cg : 1));
	struct dg_job j = { .g = g, .pa = pa, .G = G };
	int err = -ENOMEM;

	if (!pa || !at)
		goto out;
	/* A = the group's weights [cg][kg][taps] transposed: [kg taps][cg] */
	for (gi = 0; gi < G; gi++) {
		for (c = 0; c < cg; c++)
			for (k = 0; k < kg; k++)
				for (t = 0; t < taps; t++)
					at[(k * taps + t) * cg + c] =
						w[((gi * cg + c) * kg + k) * taps + t];
		err = npr_gemm_a_pack(&pa[gi], kern, at, M, cg, cg);
		if (err)
			goto out;
	}
	j.rows = DECONV_COLS / (g->W ? g->W : 1);
	if (j.rows < 1)
		j.rows = 1;
	/* bands taller than what two of them share */
	if (j.rows * g->sh < (g->kh - 1) * g->dh + 1)
		j.rows = ((g->kh - 1) * g->dh + g->sh) / g->sh;
	j.nband = (g->H + j.rows - 1) / j.rows;
	memset(y, 0, sizeof(float) * g->N * g->K * g->OH * g->OW);
	for (b = 0; b < g->N && !j.err; b++) {
		j.x = x + b * g->C * g->H * g->W;
		j.y = y + b * g->K * g->OH * g->OW;
		for (j.phase = 0; j.phase < 2 && !j.err; j.phase++)
			npr_parallel_for((int)(G * ((j.nband - j.phase + 1) / 2)),
					 dg_band, &j);
	}
	err = j.err;
out:
	for (gi = 0; pa && gi < G; gi++)
		npr_gemm_a_free(&pa[gi]);
	free(pa);
	free(at);
	return err;
}

/* Next coordinate of @c below @lim in C order; false after the last. */
static bool next3(int64_t *c, const int64_t *lim)
{
	int a;

	for (a = 2; a >= 0; a--) {
		if (++c[a] < lim[a])
			return true;
		c[a] = 0;
	}
	return false;
}

/*
 * 3-D: every input pixel and tap with plain loops.  Input pixel i and
 * tap t land on output pixel i * s + t * d - pb (per axis), if inside.
 */
static void deconv3d(const struct npr_deconv_params *p,
		     const struct npr_shape *xs, const struct npr_shape *ws,
		     const struct npr_shape *os, const float *x,
		     const float *w, float *y)
{
	int off = p->group ? 1 : 0;
	int64_t C = xs->d[1], K = os->d[1], G = p->groups;
	const int64_t *id = &xs->d[2], *od = &os->d[2], *kd = &ws->d[2 + off];
	int64_t cg = C / G, kg = K / G, isz = id[0] * id[1] * id[2];
	int64_t osz = od[0] * od[1] * od[2], ksz = kd[0] * kd[1] * kd[2];
	int64_t i[3] = { 0 }, t[3], o[3], b, ic, k, ii, tt, oo;
	int a;

	memset(y, 0, sizeof(float) * xs->d[0] * K * osz);
	if (!isz || !ksz)
		return;
	do {
		ii = (i[0] * id[1] + i[1]) * id[2] + i[2];
		t[0] = t[1] = t[2] = 0;
		tt = 0;
		do {
			for (a = 0, oo = 0; a < 3; a++) {
				o[a] = i[a] * p->stride[a] + t[a] * p->dil[a] -
				       p->pb[a];
				if (o[a] < 0 || o[a] >= od[a])
					break;
				oo = oo * od[a] + o[a];
			}
			if (a < 3) {
				tt++;
				continue;
			}
			for (b = 0; b < xs->d[0]; b++)
				for (ic = 0; ic < C; ic++) {
					float xv = x[(b * C + ic) * isz + ii];
					const float *wp = w + ic * kg * ksz + tt;
					float *yp = y + (b * K + ic / cg * kg) * osz + oo;

					for (k = 0; k < kg; k++)
						yp[k * osz] += xv * wp[k * ksz];
				}
			tt++;
		} while (next3(t, kd));
	} while (next3(i, id));
}

/**
 * npr_ref_deconv() - transposed convolution
 * @n: the node; params are struct npr_deconv_params, effective pads set
 *     by infer.
 * @in: data [N, C_in, (D, H,) W], weights [C_in, C_out, (kd, kh,) kw] or
 *      [G, C_in / G, C_out / G, (kd, kh,) kw], optional output_shape.
 * @out: [N, C_out, (OD, OH,) OW].
 *
 * Return: 0, or -EINVAL when the channels do not split into the groups.
 */
int npr_ref_deconv(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out)
{
	const struct npr_deconv_params *p = n->params;
	const struct npr_shape *xs = &in[0].shape, *ws = &in[1].shape;
	const struct npr_shape *os = &out->shape;
	const float *x = in[0].data, *w = in[1].data;
	float *y = out->data;
	int off = p->group ? 1 : 0;
	int64_t G = p->groups, cg, kg, b, gi, c, k;
	struct dgeo g;

	if (G < 1 || xs->d[1] % G || os->d[1] % G)
		return npr_node_err(n, -EINVAL,
				    "channels do not split into %lld groups",
				    (long long)G);
	if (p->nsp == 3) {
		deconv3d(p, xs, ws, os, x, w, y);
		return 0;
	}
	memset(&g, 0, sizeof(g));
	g.N = xs->d[0];
	g.C = xs->d[1];
	g.K = os->d[1];
	if (p->nsp == 2) {
		g.H = xs->d[2]; g.W = xs->d[3];
		g.OH = os->d[2]; g.OW = os->d[3];
		g.kh = ws->d[2 + off]; g.kw = ws->d[3 + off];
		g.sh = p->stride[0]; g.sw = p->stride[1];
		g.dh = p->dil[0]; g.dw = p->dil[1];
		g.ph = p->pb[0]; g.pw = p->pb[1];
	} else {
		g.H = 1; g.W = xs->d[2];
		g.OH = 1; g.OW = os->d[2];
		g.kh = 1; g.kw = ws->d[2 + off];
		g.sh = 1; g.sw = p->stride[0];
		g.dh = 1; g.dw = p->dil[0];
		g.ph = 0; g.pw = p->pb[0];
	}
	cg = g.C / G;
	kg = g.K / G;
	/* the GEMM form where the product has some depth; NPR_CPU_REF=1:
	 * the scatter below */
	if (cg >= 4 && g.H * g.W >= 64 && !npr_env(NPR_ENV_CPU_REF) &&
	    !deconv_gemm(&g, G, x, w, y))
		return 0;
	memset(y, 0, sizeof(float) * g.N * g.K * g.OH * g.OW);
	for (b = 0; b < g.N; b++)
		for (gi = 0; gi < G; gi++)
			for (c = 0; c < cg; c++) {
				int64_t ic = gi * cg + c;
				const float *xp = x + (b * g.C + ic) * g.H * g.W;

				for (k = 0; k < kg; k++) {
					int64_t oc = gi * kg + k;
					int64_t wo = (gi * cg + c) * kg + k;

					scatter(&g, xp, w + wo * g.kh * g.kw,
						y + (b * g.K + oc) * g.OH * g.OW);
				}
			}
	return 0;
}

/* The op definitions of lib/ops/deconv.c these kernels evaluate. */
const struct npr_kernel npr_kernels_deconv[] = {
	{ "ConvolutionBackpropData", 0, 99, npr_ref_deconv },
	{ "GroupConvolutionBackpropData", 0, 99, npr_ref_deconv },
	{ NULL },
};
