// SPDX-License-Identifier: MIT
/*
 * The CPU backend's convolution kernels against reference convolutions,
 * over odd shapes: 1x1, stride 2, padding, dilation, groups, depthwise,
 * batch > 1, every epilogue, every micro-kernel this CPU can run
 * (AVX-512, AVX2+FMA, scalar), with 1 and all threads; a MaxPool and the
 * mean over each plane fused into the convolution, the Winograd path's
 * plans, blocks and splits, Deconvolution through the GEMM, and
 * activations fused after the epilogue from an IR graph.  The other
 * kernels are in kernels_test.c.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "ref/conv/conv.h"
#include "ref/gemm.h"
#include "ref/threads.h"
#include "passes/compile.h"
#include "graph/graph.h"
#include "ir/ir.h"
#include "ref/kernels/deconv.h"
#include "ref/kernels/eltwise.h"
#include "ref/kernels/nn.h"
#include "harness.h"
#include "kernels_util.h"

struct conv_case {
	int64_t N, C, H, W, K, kh, kw, s, d, pb, pe, G;
	bool sweep;	/* AVX-512: images in one sweep over the weights */
	bool wino;	/* AVX-512: Winograd F(2x2, 3x3) */
};

static const struct conv_case conv_cases[] = {
	{ 1, 3, 13, 11, 5, 3, 3, 1, 1, 1, 1, 1 },	/* padded 3x3 */
	{ 2, 7, 9, 10, 9, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1, batch 2 */
	{ 1, 16, 15, 15, 33, 3, 3, 2, 1, 1, 0, 1 },	/* stride 2 */
	{ 1, 5, 12, 17, 8, 3, 3, 1, 2, 2, 2, 1 },	/* dilation 2 */
	{ 1, 3, 31, 29, 17, 7, 7, 2, 1, 3, 3, 1 },	/* 7x7 s2 stem */
	{ 3, 8, 11, 9, 12, 3, 3, 1, 1, 1, 1, 4 },	/* grouped */
	{ 1, 17, 14, 13, 17, 3, 3, 1, 1, 1, 1, 17 },	/* depthwise */
	{ 2, 19, 15, 16, 19, 3, 3, 2, 1, 1, 1, 19 },	/* depthwise s2 */
	{ 1, 6, 10, 10, 6, 5, 5, 1, 2, 4, 4, 6 },	/* depthwise d2 */
	{ 1, 40, 7, 7, 70, 1, 1, 2, 1, 0, 0, 1 },	/* 1x1 s2 */
	{ 1, 64, 1, 1, 31, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1 on 1 pixel */
	{ 1, 4, 9, 1, 6, 3, 1, 1, 1, 1, 1, 1 },		/* one column */
	{ 1, 5, 9, 150, 5, 3, 3, 1, 1, 1, 1, 5 },	/* dw, rows > 128 */
	{ 2, 3, 21, 37, 3, 3, 3, 2, 1, 1, 0, 3 },	/* dw s2, pad 1/0 */
	{ 1, 4, 12, 35, 4, 3, 3, 2, 1, 0, 1, 4 },	/* dw s2, pad 0/1 */
	{ 1, 3, 16, 47, 3, 5, 5, 2, 1, 2, 2, 3 },	/* dw 5x5 s2 */
	{ 1, 7, 7, 7, 7, 3, 3, 1, 1, 1, 1, 7 },		/* dw 7x7 plane */
	{ 1, 2, 5, 33, 2, 3, 3, 2, 2, 2, 2, 2 },	/* dw s2 dilation 2 */
	{ 1, 3, 4, 4, 3, 5, 5, 1, 1, 3, 3, 3 },		/* dw, pad > plane */
	{ 1, 2, 6, 40, 2, 1, 17, 1, 1, 8, 8, 2 },	/* dw, 17 wide */
	{ 2, 9, 16, 8, 9, 16, 8, 1, 1, 0, 0, 9 },	/* dw, global window */
	{ 1, 5, 3, 37, 5, 3, 37, 1, 1, 0, 0, 5 },	/* dw, global, odd */
	{ 1, 3, 2, 2, 3, 2, 2, 1, 2, 0, 1, 3 },	/* dw, dilated: not global */
	{ 1, 64, 7, 7, 120, 3, 3, 1, 1, 1, 1, 1 },	/* pixel-major, K > 64 */
	{ 2, 32, 14, 14, 128, 1, 1, 1, 1, 0, 0, 1 },	/* pixel-major 1x1 */
	{ 1, 40, 13, 13, 64, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1, 169 pixels */
	{ 3, 20, 13, 13, 64, 3, 3, 1, 1, 1, 1, 1 },	/* 13x13 3x3 batch 3 */
	{ 1, 9, 9, 9, 64, 5, 5, 1, 2, 4, 4, 1 },	/* 5x5 dilation 2 */
	{ 1, 8, 28, 28, 120, 3, 3, 2, 1, 1, 1, 1 },	/* pixel-major s2 */
	{ 2, 3, 28, 28, 64, 7, 7, 2, 1, 3, 3, 1 },	/* pixel-major 7x7/2 */
	{ 1, 4, 15, 29, 60, 3, 3, 2, 1, 0, 1, 1 },	/* s2, pad 0/1 */
	{ 1, 5, 23, 20, 64, 3, 3, 3, 1, 1, 1, 1 },	/* stride 3 */
	{ 2, 40, 9, 13, 32, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1, B in place */
	{ 2, 9, 120, 130, 9, 3, 3, 1, 1, 1, 1, 9 },	/* dw > 1 MB, by rows */
	{ 2, 9, 121, 131, 9, 3, 3, 2, 1, 1, 0, 9 },	/* same at stride 2 */
	{ 1, 32, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1 },	/* padded copy split */
	{ 2, 19, 7, 7, 19, 3, 3, 1, 1, 1, 1, 19 },	/* dw run, 7x7 batch 2 */
	{ 3, 5, 14, 14, 5, 3, 3, 1, 1, 1, 1, 5 },	/* dw run, 14x14 batch 3 */
	{ 1, 3, 28, 28, 3, 3, 3, 1, 1, 1, 1, 3 },	/* dw run, 28x28 */
	{ 1, 4, 5, 3, 4, 3, 3, 1, 1, 1, 1, 4 },		/* dw run, one vector */
	{ 2, 5, 9, 1, 5, 3, 1, 1, 1, 1, 1, 5 },		/* dw run, one column */
	{ 1, 3, 31, 33, 3, 3, 3, 1, 1, 1, 1, 3 },	/* dw run limit */
	{ 2, 6, 14, 14, 6, 3, 3, 2, 1, 1, 1, 6 },	/* dw s2 to 7x7, row pairs */
	{ 1, 5, 13, 13, 5, 3, 3, 2, 1, 1, 1, 5 },	/* dw s2, 7 rows */
	{ 1, 3, 14, 14, 3, 3, 3, 2, 1, 1, 0, 3 },	/* dw s2, pad 1/0 */
	{ 1, 2, 9, 17, 2, 3, 3, 2, 1, 1, 0, 2 },	/* dw s2, 17 wide to 8 */
	{ 3, 4, 28, 28, 4, 3, 3, 2, 1, 1, 1, 4 },	/* dw s2, 28x28 batch 3 */
	{ 1, 2, 5, 70, 2, 3, 3, 2, 1, 1, 1, 2 },	/* dw s2, 35 wide */
	{ 2, 100, 13, 13, 48, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1, 48: B in place */
	{ 1, 130, 9, 11, 24, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1, B panel outer */
	{ 2, 300, 7, 7, 160, 1, 1, 1, 1, 0, 0, 1 },	/* pixel-major, 2 vectors */
	{ 1, 40, 9, 9, 100, 3, 3, 1, 1, 1, 1, 1 },	/* pixel-major, 3 vectors */
	{ 1, 114, 7, 7, 100, 3, 3, 1, 1, 1, 1, 1 },	/* pixel-major, 2 blocks */
	{ 2, 3, 30, 33, 32, 3, 3, 2, 1, 1, 1, 1 },	/* RGB stem, depth 27 */
	/* weights larger than an image's activations: one sweep */
	{ 5, 64, 7, 7, 120, 3, 3, 1, 1, 1, 1, 1, true },	/* 3x3, 5 images */
	{ 3, 96, 5, 5, 128, 1, 1, 1, 1, 0, 0, 1, true },	/* 1x1, 25 pixels */
	{ 2, 32, 13, 13, 128, 3, 3, 2, 1, 1, 1, 1, true },	/* 3x3/2 */
	{ 1, 128, 13, 13, 256, 1, 1, 1, 1, 0, 0, 1 },	/* 1x1 copy split */
	/* Winograd F(2x2, 3x3): odd planes, padding 0 and 1, C, K % 16 */
	{ 2, 33, 29, 31, 40, 3, 3, 1, 1, 1, 1, 1, false, true },
	{ 1, 32, 19, 15, 47, 3, 3, 1, 1, 0, 0, 1, false, true },
	{ 1, 48, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, false, true },
	{ 3, 35, 25, 26, 33, 3, 3, 1, 1, 1, 0, 1, false, true },
	{ 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, false, true },
	{ 1, 130, 12, 11, 70, 3, 3, 1, 1, 1, 1, 1, false, true },
	/* tiles of several images in a block: 7x7 (16 tiles) at batch 2 */
	{ 2, 40, 7, 7, 48, 3, 3, 1, 1, 1, 1, 1, false, true },
	{ 6, 33, 7, 5, 35, 3, 3, 1, 1, 1, 0, 1, false, true },
	/* padding 2: whole zero tile rows and columns */
	{ 1, 32, 9, 10, 32, 3, 3, 1, 1, 2, 2, 1, false, true },
	/* 16 input channels, groups across rows and images */
	{ 3, 16, 9, 11, 40, 3, 3, 1, 1, 1, 1, 1, false, true },
	/* squeezenet1_1's 13x13: seven groups, three panels */
	{ 1, 48, 13, 13, 192, 3, 3, 1, 1, 1, 1, 1, false, true },
};

TEST(conv_plans_match_reference_over_odd_shapes)
{
	int ci, ki, ep;

	for (ci = 0; ci < (int)(sizeof(conv_cases) / sizeof(conv_cases[0])); ci++) {
		const struct conv_case *cc = &conv_cases[ci];
		struct npr_conv_params p = { 0 };
		struct npr_node node = { .name = "conv", .type = "Convolution" };
		struct npr_tensor in[2] = { { 0 } }, out = { 0 };
		struct npr_conv_desc d = { 0 };
		int64_t nx, nw, ny, k;
		float *x, *w, *y, *r, *bias, *res;
		double tol;

		d.N = cc->N; d.C = cc->C; d.H = cc->H; d.W = cc->W; d.K = cc->K;
		d.kh = cc->kh; d.kw = cc->kw; d.sh = d.sw = cc->s;
		d.dh = d.dw = cc->d; d.ph = d.pw = cc->pb; d.G = cc->G;
		d.OH = (d.H + cc->pb + cc->pe - (d.kh - 1) * d.dh - 1) / d.sh + 1;
		d.OW = (d.W + cc->pb + cc->pe - (d.kw - 1) * d.dw - 1) / d.sw + 1;
		if (d.W == 1) {
			d.pw = 0;
			d.OW = 1;
		}
		/*
		 * float rounding grows with the depth of the sums, and the
		 * kernels sum in other orders than the reference (a depth of
		 * 1026 on the AVX2 kernel reached 2.1e-5; a wrong tap or a
		 * lost term is off by 1e-3 or more)
		 */
		tol = 3e-5 * (d.C / d.G * d.kh * d.kw > 512 ?
			       d.C / d.G * d.kh * d.kw / 512.0 : 1.0);
		p.nsp = 2;
		p.stride[0] = p.stride[1] = cc->s;
		p.dil[0] = p.dil[1] = cc->d;
		p.pb[0] = cc->pb; p.pb[1] = d.pw;
		p.pe[0] = cc->pe; p.pe[1] = d.W == 1 ? 0 : cc->pe;
		p.groups = cc->G;
		p.group = cc->G > 1;
		node.params = &p;
		nx = d.N * d.C * d.H * d.W;
		nw = d.K * (d.C / d.G) * d.kh * d.kw;
		ny = d.N * d.K * d.OH * d.OW;
		x = malloc(sizeof(float) * nx);
		w = malloc(sizeof(float) * nw);
		y = malloc(sizeof(float) * ny);
		r = malloc(sizeof(float) * ny);
		bias = malloc(sizeof(float) * d.K);
		res = malloc(sizeof(float) * ny);
		ASSERT_TRUE(x && w && y && r && bias && res);
		fill(x, nx, 11 + ci);
		fill(w, nw, 12 + ci);
		fill(bias, d.K, 13);
		fill(res, ny, 14);
		in[0].type = in[1].type = out.type = NPR_ELEM_F32;
		in[0].shape.rank = 4;
		in[0].shape.d[0] = d.N; in[0].shape.d[1] = d.C;
		in[0].shape.d[2] = d.H; in[0].shape.d[3] = d.W;
		in[1].shape.rank = p.group ? 5 : 4;
		k = 0;
		if (p.group)
			in[1].shape.d[k++] = d.G;
		in[1].shape.d[k++] = d.K / d.G;
		in[1].shape.d[k++] = d.C / d.G;
		in[1].shape.d[k++] = d.kh;
		in[1].shape.d[k++] = d.kw;
		out.shape.rank = 4;
		out.shape.d[0] = d.N; out.shape.d[1] = d.K;
		out.shape.d[2] = d.OH; out.shape.d[3] = d.OW;
		in[0].data = x; in[1].data = w; out.data = r;
		in[0].nbytes = nx * 4; in[1].nbytes = nw * 4; out.nbytes = ny * 4;
		ASSERT_EQ(npr_ref_conv(&node, in, &out), 0);
		/* 3: AVX-512 again without Winograd, the path it replaces */
		for (ki = 0; ki < 4; ki++) {
			const struct npr_gemm_kern *kn = npr_gemm_kern_get(kerns[ki % 3]);
			struct npr_conv_plan *plan;
			bool set = ki == 3 && !getenv("NPR_CONV_NO_WINO");
			char desc[128];

			if (!kn)
				continue;
			if (set)
				setenv("NPR_CONV_NO_WINO", "1", 1);
			/* the path wherever it fits, past the rule of what pays */
			if (cc->wino)
				setenv("NPR_CONV_WINO", "1", 1);
			ASSERT_EQ(npr_conv_plan_new(&d, w, kn, &plan), 0);
			if (set)
				unsetenv("NPR_CONV_NO_WINO");
			if (cc->wino)
				unsetenv("NPR_CONV_WINO");
			npr_conv_plan_desc(plan, desc, sizeof(desc));
			if (cc->wino && ki == 0 && !getenv("NPR_CONV_NO_WINO") &&
			    !strstr(desc, "winograd")) {
				TH_LOG("case %d: no Winograd (%s)", ci, desc);
				ASSERT_NONNULL(strstr(desc, "winograd"));
			}
			if (ki == 3)
				ASSERT_NULL(strstr(desc, "winograd"));
			/* unless the environment turns the path off */
			/* (Winograd takes a batch's tiles in blocks instead) */
			if (cc->sweep && !strcmp(kn->name, "avx512") &&
			    !strstr(desc, "winograd") &&
			    !getenv("NPR_CONV_NO_SWEEP") &&
			    !getenv("NPR_CONV_NO_T") &&
			    !npr_conv_plan_sweeps(plan)) {
				npr_conv_plan_desc(plan, desc, sizeof(desc));
				TH_LOG("case %d: no sweep (%s)", ci, desc);
				ASSERT_TRUE(npr_conv_plan_sweeps(plan));
			}
			for (ep = 0; ep < 3; ep++) {
				float *e = malloc(sizeof(float) * ny);
				int64_t i, c;
				double err;

				ASSERT_NONNULL(e);
				/* expected: reference conv, then the epilogue */
				for (i = 0; i < ny; i++) {
					float v = r[i];

					c = (i / (d.OH * d.OW)) % d.K;
					if (ep >= 1)
						v += bias[c];
					if (ep == 2)
						v += res[i];
					if (ep == 1)
						v = v < -0.25f ? -0.25f : v > 0.5f ? 0.5f : v;
					if (ep == 2)
						v = v > 0 ? v : 0;
					e[i] = v;
				}
				ASSERT_EQ(npr_conv_plan_epi(plan, ep ? bias : NULL,
							    ep == 2,
							    ep == 1 ? NPR_ACT_CLAMP :
							    ep == 2 ? NPR_ACT_RELU : 0,
							    -0.25f, 0.5f), 0);
				ASSERT_EQ(npr_conv_plan_run(plan, x, y,
							    ep == 2 ? res : NULL), 0);
				err = rel_err(y, e, ny);
				if (err > tol)
					TH_LOG("case %d (%s) epi %d: %g", ci,
					       desc, ep, err);
				ASSERT_LE(err, tol);
				if (cc->sweep || cc->wino) {
					/* one thread: the sweep or the
					 * Winograd blocks unsplit */
					int old = npr_par_set_limit(1);

					memset(y, 0, sizeof(float) * ny);
					ASSERT_EQ(npr_conv_plan_run(plan, x, y,
								    ep == 2 ? res : NULL), 0);
					npr_par_set_limit(old);
					ASSERT_LE(rel_err(y, e, ny), tol);
				}
				if (d.N > 1) {
					/* the last images alone, as batch
					 * groups run them */
					int64_t px = nx / d.N, py = ny / d.N;
					int64_t b0 = d.N / 2, nb = d.N - b0;

					memset(y, 0, sizeof(float) * ny);
					ASSERT_EQ(npr_conv_plan_run_n(plan,
								      x + b0 * px, y + b0 * py,
								      ep == 2 ? res + b0 * py : NULL,
								      nb), 0);
					err = rel_err(y + b0 * py, e + b0 * py,
						      nb * py);
					if (err > tol)
						TH_LOG("case %d (%s) epi %d, images %lld-%lld: %g",
						       ci, kn->name, ep,
						       (long long)b0,
						       (long long)d.N - 1, err);
					ASSERT_LE(err, tol);
					for (i = 0; i < b0 * py; i++)
						ASSERT_EQ(y[i], 0.0f);
				}
				ASSERT_EQ(npr_conv_plan_run_n(plan, x, y, NULL, 0),
					  -EINVAL);
				ASSERT_EQ(npr_conv_plan_run_n(plan, x, y, NULL,
							      d.N + 1), -EINVAL);
				free(e);
			}
			npr_conv_plan_free(plan);
		}
		free(x); free(w); free(y); free(r); free(bias); free(res);
	}
}

/*
 * A MaxPool fused into the pixel-major convolution (its rows pooled from
 * a ring in the pixel-major layout) against the reference convolution,
 * the epilogue and the scalar MaxPool, one after the other.
 */
TEST(conv_with_fused_maxpool_matches_reference)
{
	static const struct {
		int64_t N, C, H, K, k, s, p;		/* convolution */
		int64_t pk, ps, pp, pe;			/* MaxPool */
		bool fused;
	} cc[] = {
		{ 1, 3, 31, 64, 3, 2, 0, 3, 2, 0, 0, true },	/* the stem */
		{ 2, 3, 29, 70, 3, 2, 0, 3, 2, 0, 1, true },	/* ceil, 2 panels */
		{ 1, 16, 20, 40, 3, 1, 1, 2, 2, 0, 0, true },	/* direct, 2x2/2 */
		{ 1, 8, 17, 64, 3, 1, 1, 3, 2, 1, 1, true },	/* padded pool */
		{ 1, 32, 15, 130, 3, 1, 1, 3, 1, 1, 1, true },	/* stride 1 */
		{ 1, 120, 15, 64, 3, 1, 1, 3, 2, 0, 0, true },	/* 2 blocks */
		{ 2, 300, 9, 32, 1, 1, 0, 3, 2, 0, 0, false },	/* 1x1: no */
		{ 1, 4, 9, 16, 3, 1, 0, 2, 4, 0, 3, false },	/* empty window */
	};
	int ci, lim, ep;

	if (!npr_gemm_kern_get("avx512"))
		SKIP(return, "the pixel-major path needs AVX-512F");
	for (ci = 0; ci < (int)(sizeof(cc) / sizeof(cc[0])); ci++) {
		struct npr_conv_params p = { 0 }, pp = { 0 };
		struct npr_node node = { .name = "conv", .type = "Convolution" };
		struct npr_node pool = { .name = "pool", .type = "MaxPool",
					 .nout = 1 };
		struct npr_tensor in[2] = { { 0 } }, out = { 0 }, po = { 0 };
		struct npr_conv_desc d = { 0 };
		struct npr_pool_desc pd = { 0 };
		struct npr_conv_plan *plan;
		int64_t nx, nw, ny, np, i;
		float *x, *w, *y, *c, *r, *e, *bias;

		d.N = cc[ci].N; d.C = cc[ci].C; d.H = d.W = cc[ci].H;
		d.K = cc[ci].K; d.kh = d.kw = cc[ci].k; d.sh = d.sw = cc[ci].s;
		d.dh = d.dw = 1; d.ph = d.pw = cc[ci].p; d.G = 1;
		d.OH = d.OW = (d.H + 2 * d.ph - d.kh) / d.sh + 1;
		pd.kh = pd.kw = cc[ci].pk; pd.sh = pd.sw = cc[ci].ps;
		pd.ph = pd.pw = cc[ci].pp;
		pd.OH = pd.OW = (d.OH + pd.ph + cc[ci].pe - pd.kh) / pd.sh + 1;
		p.nsp = pp.nsp = 2;
		p.stride[0] = p.stride[1] = d.sh;
		p.dil[0] = p.dil[1] = pp.dil[0] = pp.dil[1] = 1;
		p.pb[0] = p.pb[1] = p.pe[0] = p.pe[1] = d.ph;
		p.groups = 1;
		pp.kernel[0] = pp.kernel[1] = pd.kh;
		pp.stride[0] = pp.stride[1] = pd.sh;
		pp.pb[0] = pp.pb[1] = pd.ph;
		pp.pe[0] = pp.pe[1] = cc[ci].pe;
		node.params = &p;
		pool.params = &pp;
		nx = d.N * d.C * d.H * d.W;
		nw = d.K * d.C * d.kh * d.kw;
		ny = d.N * d.K * d.OH * d.OW;
		np = d.N * d.K * pd.OH * pd.OW;
		x = malloc(sizeof(float) * nx);
		w = malloc(sizeof(float) * nw);
		c = malloc(sizeof(float) * ny);
		r = malloc(sizeof(float) * ny);
		e = malloc(sizeof(float) * np);
		y = malloc(sizeof(float) * np);
		bias = malloc(sizeof(float) * d.K);
		ASSERT_TRUE(x && w && c && r && e && y && bias);
		fill(x, nx, 41 + ci);
		fill(w, nw, 42 + ci);
		fill(bias, d.K, 43);
		in[0].type = in[1].type = out.type = po.type = NPR_ELEM_F32;
		in[0].shape.rank = in[1].shape.rank = 4;
		out.shape.rank = po.shape.rank = 4;
		in[0].shape.d[0] = d.N; in[0].shape.d[1] = d.C;
		in[0].shape.d[2] = d.H; in[0].shape.d[3] = d.W;
		in[1].shape.d[0] = d.K; in[1].shape.d[1] = d.C;
		in[1].shape.d[2] = d.kh; in[1].shape.d[3] = d.kw;
		out.shape.d[0] = po.shape.d[0] = d.N;
		out.shape.d[1] = po.shape.d[1] = d.K;
		out.shape.d[2] = d.OH; out.shape.d[3] = d.OW;
		po.shape.d[2] = pd.OH; po.shape.d[3] = pd.OW;
		in[0].data = x; in[1].data = w; out.data = c; po.data = e;
		in[0].nbytes = nx * 4; in[1].nbytes = nw * 4;
		out.nbytes = ny * 4; po.nbytes = np * 4;
		ASSERT_EQ(npr_ref_conv(&node, in, &out), 0);
		out.data = r;
		ASSERT_EQ(npr_conv_plan_new_pool(&d, &pd, w, NULL, &plan), 0);
		ASSERT_EQ(npr_conv_plan_pooled(plan), cc[ci].fused);
		if (!cc[ci].fused) {
			npr_conv_plan_free(plan);
			free(x); free(w); free(c); free(r); free(e); free(y);
			free(bias);
			continue;
		}
		/* no residual with a pool */
		ASSERT_EQ(npr_conv_plan_epi(plan, NULL, true, 0, 0, 0), -EINVAL);
		for (ep = 0; ep < 3; ep++) {
			/* the reference: conv, epilogue, then the pool */
			for (i = 0; i < ny; i++) {
				float v = c[i];

				if (ep >= 1)
					v += bias[(i / (d.OH * d.OW)) % d.K];
				if (ep == 1)
					v = v < -0.25f ? -0.25f : v > 0.5f ? 0.5f : v;
				if (ep == 2)
					v = v > 0 ? v : 0;
				r[i] = v;
			}
			ASSERT_EQ(npr_pool_scalar(&pool, &out, &po), 0);
			ASSERT_EQ(npr_conv_plan_epi(plan, ep ? bias : NULL, false,
						    ep == 1 ? NPR_ACT_CLAMP :
						    ep == 2 ? NPR_ACT_RELU : 0,
						    -0.25f, 0.5f), 0);
			for (lim = 1; lim <= 2; lim++) {
				double err;

				npr_par_set_limit(lim == 1 ? 1 : 0);
				memset(y, 0, sizeof(float) * np);
				ASSERT_EQ(npr_conv_plan_run(plan, x, y, NULL), 0);
				err = rel_err(y, e, np);
				if (err > 1e-5)
					TH_LOG("pool case %d epi %d threads %d: %g",
					       ci, ep, lim, err);
				ASSERT_LE(err, 1e-5);
			}
		}
		npr_par_set_limit(0);
		npr_conv_plan_free(plan);
		free(x); free(w); free(c); free(r); free(e); free(y);
		free(bias);
	}
}

/*
 * The mean over each output plane (global average pooling) fused into
 * the pixel-major convolution against the reference convolution, the
 * epilogue and a mean in double.
 */
TEST(conv_with_fused_mean_matches_reference)
{
	static const struct {
		int64_t N, C, H, K, k, p;
		bool fused;
	} cc[] = {
		{ 2, 40, 13, 128, 1, 0, true },		/* flat, one block */
		{ 1, 1100, 9, 64, 1, 0, true },		/* two depth blocks */
		{ 1, 16, 15, 192, 3, 1, true },		/* 3x3, rows */
		{ 1, 8, 32, 16, 1, 0, false },		/* GEMM path: no */
	};
	int ci, ep, lim;

	if (!npr_gemm_kern_get("avx512"))
		SKIP(return, "the pixel-major path needs AVX-512F");
	for (ci = 0; ci < (int)(sizeof(cc) / sizeof(cc[0])); ci++) {
		struct npr_conv_params p = { 0 };
		struct npr_node node = { .name = "conv", .type = "Convolution" };
		struct npr_tensor in[2] = { { 0 } }, out = { 0 };
		struct npr_conv_desc d = { 0 };
		struct npr_conv_plan *plan;
		int64_t nx, nw, ny, npix, i, k;
		float *x, *w, *c, *y, *e, *bias;

		d.N = cc[ci].N; d.C = cc[ci].C; d.H = d.W = cc[ci].H;
		d.K = cc[ci].K; d.kh = d.kw = cc[ci].k; d.sh = d.sw = 1;
		d.dh = d.dw = 1; d.ph = d.pw = cc[ci].p; d.G = 1;
		d.OH = d.OW = d.H + 2 * d.ph - d.kh + 1;
		p.nsp = 2;
		p.stride[0] = p.stride[1] = 1;
		p.dil[0] = p.dil[1] = 1;
		p.pb[0] = p.pb[1] = p.pe[0] = p.pe[1] = d.ph;
		p.groups = 1;
		node.params = &p;
		npix = d.OH * d.OW;
		nx = d.N * d.C * d.H * d.W;
		nw = d.K * d.C * d.kh * d.kw;
		ny = d.N * d.K * npix;
		x = malloc(sizeof(float) * nx);
		w = malloc(sizeof(float) * nw);
		c = malloc(sizeof(float) * ny);
		e = malloc(sizeof(float) * d.N * d.K);
		y = malloc(sizeof(float) * d.N * d.K);
		bias = malloc(sizeof(float) * d.K);
		ASSERT_TRUE(x && w && c && e && y && bias);
		fill(x, nx, 51 + ci);
		fill(w, nw, 52 + ci);
		fill(bias, d.K, 53);
		in[0].type = in[1].type = out.type = NPR_ELEM_F32;
		in[0].shape.rank = in[1].shape.rank = out.shape.rank = 4;
		in[0].shape.d[0] = d.N; in[0].shape.d[1] = d.C;
		in[0].shape.d[2] = d.H; in[0].shape.d[3] = d.W;
		in[1].shape.d[0] = d.K; in[1].shape.d[1] = d.C;
		in[1].shape.d[2] = d.kh; in[1].shape.d[3] = d.kw;
		out.shape.d[0] = d.N; out.shape.d[1] = d.K;
		out.shape.d[2] = d.OH; out.shape.d[3] = d.OW;
		in[0].data = x; in[1].data = w; out.data = c;
		in[0].nbytes = nx * 4; in[1].nbytes = nw * 4; out.nbytes = ny * 4;
		ASSERT_EQ(npr_ref_conv(&node, in, &out), 0);
		ASSERT_EQ(npr_conv_plan_new(&d, w, NULL, &plan), 0);
		for (ep = 0; ep < 3; ep++) {
			ASSERT_EQ(npr_conv_plan_epi(plan, ep ? bias : NULL, false,
						    ep == 1 ? NPR_ACT_CLAMP :
						    ep == 2 ? NPR_ACT_RELU : 0,
						    -0.25f, 0.5f), 0);
			if (!ep) {
				ASSERT_EQ(npr_conv_plan_set_mean(plan),
					  cc[ci].fused ? 0 : -EOPNOTSUPP);
				if (!cc[ci].fused)
					break;
				ASSERT_EQ(npr_conv_plan_epi(plan, NULL, true, 0,
							    0, 0), -EINVAL);
			}
			for (k = 0; k < d.N * d.K; k++) {
				double sum = 0;

				for (i = 0; i < npix; i++) {
					float v = c[k * npix + i];

					if (ep >= 1)
						v += bias[k % d.K];
					if (ep == 1)
						v = v < -0.25f ? -0.25f :
						    v > 0.5f ? 0.5f : v;
					if (ep == 2)
						v = v > 0 ? v : 0;
					sum += v;
				}
				e[k] = (float)(sum / npix);
			}
			for (lim = 1; lim <= 2; lim++) {
				double err;

				npr_par_set_limit(lim == 1 ? 1 : 0);
				memset(y, 0, sizeof(float) * d.N * d.K);
				ASSERT_EQ(npr_conv_plan_run(plan, x, y, NULL), 0);
				err = rel_err(y, e, d.N * d.K);
				if (err > 1e-5)
					TH_LOG("mean case %d epi %d threads %d: %g",
					       ci, ep, lim, err);
				ASSERT_LE(err, 1e-5);
			}
		}
		npr_par_set_limit(0);
		npr_conv_plan_free(plan);
		free(x); free(w); free(c); free(e); free(y); free(bias);
	}
}

/*
 * A plan made from prepared buffers (a blob's import) makes its Winograd
 * weights again from them: the same path and bit for bit the same
 * output as the plan the buffers came from, and the f32 weights back.
 */
TEST(winograd_plan_from_prepared_buffers)
{
	struct npr_conv_desc d = {
		.N = 1, .C = 40, .H = 17, .W = 15, .K = 36, .OH = 17, .OW = 15,
		.kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .ph = 1,
		.pw = 1, .G = 1,
	};
	int64_t nx = d.C * d.H * d.W, nw = d.K * d.C * 9, ny = d.K * d.OH * d.OW;
	struct npr_conv_plan *a, *b;
	const void *buf[20];
	size_t bytes[20];
	float *x, *w, *w2, *ya, *yb;
	char da[128], db[128];
	int n;

	if (!npr_gemm_kern_get("avx512") || getenv("NPR_CONV_NO_WINO"))
		SKIP(return, "no AVX-512 or NPR_CONV_NO_WINO set: no Winograd");
	x = malloc(sizeof(float) * nx);
	w = malloc(sizeof(float) * nw);
	w2 = malloc(sizeof(float) * nw);
	ya = malloc(sizeof(float) * ny);
	yb = malloc(sizeof(float) * ny);
	ASSERT_TRUE(x && w && w2 && ya && yb);
	fill(x, nx, 31);
	fill(w, nw, 32);
	ASSERT_EQ(npr_conv_plan_new(&d, w, NULL, &a), 0);
	ASSERT_EQ(npr_conv_plan_new(&d, NULL, NULL, &b), 0);
	npr_conv_plan_desc(a, da, sizeof(da));
	npr_conv_plan_desc(b, db, sizeof(db));
	ASSERT_NONNULL(strstr(da, "winograd"));
	ASSERT_NULL(strstr(db, "winograd"));
	/* the path's own buffer, then U[16] */
	n = npr_conv_plan_prepared(a, buf, bytes, 20);
	ASSERT_EQ(n, 17);
	ASSERT_EQ(npr_conv_plan_use_prepared(b, buf, bytes, n), 0);
	npr_conv_plan_desc(b, db, sizeof(db));
	ASSERT_NONNULL(strstr(db, "winograd"));
	npr_conv_plan_weights(b, w2);
	ASSERT_EQ(memcmp(w, w2, sizeof(float) * nw), 0);
	ASSERT_EQ(npr_conv_plan_epi(a, NULL, false, NPR_ACT_RELU, 0, 0), 0);
	ASSERT_EQ(npr_conv_plan_epi(b, NULL, false, NPR_ACT_RELU, 0, 0), 0);
	ASSERT_EQ(npr_conv_plan_run(a, x, ya, NULL), 0);
	ASSERT_EQ(npr_conv_plan_run(b, x, yb, NULL), 0);
	ASSERT_EQ(memcmp(ya, yb, sizeof(float) * ny), 0);
	npr_conv_plan_free(b);
	npr_conv_plan_free(a);
	free(x); free(w); free(w2); free(ya); free(yb);
}

/*
 * Transposed convolution, the GEMM form (bands of input rows, col2im)
 * against the formula summed in double: y[b][k][o] += x[b][c][i] w[c][k][t]
 * where o = i s + t d - pb.  Shapes: taps overlapping between bands (4x4
 * at stride 2 over rows cut into bands of 16), stride 3 with groups and
 * output_padding, dilation 2 with padding, 1-D, batch 2.
 */
TEST(deconv_gemm_matches_formula)
{
	static const struct {
		int nsp;
		int64_t N, C, H, W, K, kh, kw, s, d, p, op, G;
	} cs[] = {
		{ 2, 1, 6, 20, 250, 5, 4, 4, 2, 1, 1, 0, 1 },
		{ 2, 2, 8, 9, 11, 6, 3, 3, 3, 1, 0, 1, 2 },
		{ 2, 1, 4, 12, 10, 3, 3, 3, 1, 2, 2, 0, 1 },
		{ 1, 2, 5, 1, 300, 4, 1, 5, 2, 1, 1, 0, 1 },
	};
	int ci;

	for (ci = 0; ci < (int)(sizeof(cs) / sizeof(cs[0])); ci++) {
		struct npr_deconv_params p = { 0 };
		struct npr_node node = { .name = "deconv" };
		struct npr_tensor in[2] = { { 0 } }, out = { 0 };
		int64_t N = cs[ci].N, C = cs[ci].C, H = cs[ci].H, W = cs[ci].W;
		int64_t K = cs[ci].K, kh = cs[ci].kh, kw = cs[ci].kw, G = cs[ci].G;
		int64_t s = cs[ci].s, d = cs[ci].d, pb = cs[ci].p;
		int64_t OH = cs[ci].nsp == 2 ? (H - 1) * s + (kh - 1) * d + 1 -
			     2 * pb + cs[ci].op : 1;
		int64_t OW = (W - 1) * s + (kw - 1) * d + 1 - 2 * pb + cs[ci].op;
		int64_t nx = N * C * H * W, nw = C * (K / G) * kh * kw;
		int64_t ny = N * K * OH * OW, b, c, k, ih, iw, i, j, a;
		float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
		float *y = malloc(sizeof(float) * ny);
		double *e = calloc(ny, sizeof(double)), err = 0, m = 1;

		ASSERT_TRUE(x && w && y && e);
		fill(x, nx, 71 + ci);
		fill(w, nw, 72 + ci);
		p.nsp = cs[ci].nsp;
		for (a = 0; a < p.nsp; a++) {
			p.stride[a] = s;
			p.dil[a] = d;
			p.pb[a] = p.pe[a] = pb;
			p.outpad[a] = cs[ci].op;
		}
		p.group = G > 1;
		p.groups = G;
		node.type = G > 1 ? "GroupConvolutionBackpropData" :
				    "ConvolutionBackpropData";
		node.params = &p;
		in[0].type = in[1].type = out.type = NPR_ELEM_F32;
		in[0].shape.rank = out.shape.rank = 2 + p.nsp;
		in[0].shape.d[0] = N; in[0].shape.d[1] = C;
		out.shape.d[0] = N; out.shape.d[1] = K;
		if (p.nsp == 2) {
			in[0].shape.d[2] = H; in[0].shape.d[3] = W;
			out.shape.d[2] = OH; out.shape.d[3] = OW;
		} else {
			in[0].shape.d[2] = W;
			out.shape.d[2] = OW;
		}
		a = 0;
		if (G > 1)
			in[1].shape.d[a++] = G;
		in[1].shape.d[a++] = C / G;
		in[1].shape.d[a++] = K / G;
		if (p.nsp == 2)
			in[1].shape.d[a++] = kh;
		in[1].shape.d[a++] = kw;
		in[1].shape.rank = (int)a;
		in[0].data = x; in[1].data = w; out.data = y;
		in[0].nbytes = nx * 4; in[1].nbytes = nw * 4; out.nbytes = ny * 4;
		for (b = 0; b < N; b++)
			for (c = 0; c < C; c++)
				for (k = 0; k < K / G; k++)
					for (ih = 0; ih < H; ih++)
						for (iw = 0; iw < W; iw++)
							for (i = 0; i < kh; i++)
								for (j = 0; j < kw; j++) {
									int64_t oy = ih * s + i * d - (p.nsp == 2 ? pb : 0);
									int64_t ox = iw * s + j * d - pb;
									int64_t oc = c / (C / G) * (K / G) + k;

									if (oy < 0 || oy >= OH || ox < 0 || ox >= OW)
										continue;
									e[((b * K + oc) * OH + oy) * OW + ox] +=
										(double)x[((b * C + c) * H + ih) * W + iw] *
										w[((c * (K / G) + k) * kh + i) * kw + j];
								}
		ASSERT_EQ(npr_ref_deconv(&node, in, &out), 0);
		for (i = 0; i < ny; i++) {
			if (fabs(e[i]) > m)
				m = fabs(e[i]);
			if (fabs(e[i] - y[i]) > err)
				err = fabs(e[i] - y[i]);
		}
		if (err / m > 1e-5)
			TH_LOG("case %d: %g", ci, err / m);
		ASSERT_LE(err / m, 1e-5);
		free(x); free(w); free(y); free(e);
	}
}

/* ---- activations after the epilogue, fused from an IR graph ---------- */

#define PORT4(id, c, h, w)						\
	"<port id=\"" #id "\" precision=\"FP32\"><dim>1</dim><dim>%d</dim>"	\
	"<dim>%d</dim><dim>%d</dim></port>"

/*
 * x [1, C, H, W] -> Convolution (3x3, padding 1, K outputs, weights at
 * offset 0) -> @act (with a Const second input of @cdims, @cn floats at
 * offset 4 K C 9, when @cdims) -> Result.
 */
static int act_net(char *buf, size_t len, int C, int H, int W, int K,
		   const char *act, const char *ver, const char *cdims, int cn)
{
	char cport[256] = "", cdimx[128] = "";
	const char *p = cdims;
	int n = 0;

	while (p && *p) {
		n += snprintf(cdimx + n, sizeof(cdimx) - n, "<dim>%ld</dim>",
			      strtol(p, (char **)&p, 10));
		if (*p == ',')
			p++;
	}
	if (cdims)
		snprintf(cport, sizeof(cport),
			 "<layer id=\"3\" name=\"c\" type=\"Const\" version=\"opset1\">"
			 "<data element_type=\"f32\" shape=\"%s\" offset=\"%d\" size=\"%d\"/>"
			 "<output><port id=\"0\" precision=\"FP32\">%s</port></output></layer>",
			 cdims, 4 * K * C * 9, 4 * cn, cdimx);
	return snprintf(buf, len,
		"<?xml version=\"1.0\"?><net name=\"a\" version=\"11\"><layers>"
		"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
		"<data shape=\"1,%d,%d,%d\" element_type=\"f32\"/><output>" PORT4(0, C, H, W)
		"</output></layer>"
		"<layer id=\"1\" name=\"w\" type=\"Const\" version=\"opset1\">"
		"<data element_type=\"f32\" shape=\"%d,%d,3,3\" offset=\"0\" size=\"%d\"/>"
		"<output><port id=\"0\" precision=\"FP32\"><dim>%d</dim><dim>%d</dim>"
		"<dim>3</dim><dim>3</dim></port></output></layer>"
		"<layer id=\"2\" name=\"conv\" type=\"Convolution\" version=\"opset1\">"
		"<data strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\"/>"
		"<input>" PORT4(0, C, H, W)
		"<port id=\"1\" precision=\"FP32\"><dim>%d</dim><dim>%d</dim><dim>3</dim>"
		"<dim>3</dim></port></input><output>" PORT4(2, K, H, W) "</output></layer>"
		"%s"
		"<layer id=\"4\" name=\"act\" type=\"%s\" version=\"%s\"><input>"
		PORT4(0, K, H, W) "%s%s%s</input><output>" PORT4(2, K, H, W)
		"</output></layer>"
		"<layer id=\"5\" name=\"r\" type=\"Result\" version=\"opset1\"><input>"
		PORT4(0, K, H, W) "</input></layer>"
		"</layers><edges>"
		"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
		"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
		"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"4\" to-port=\"0\"/>"
		"%s"
		"<edge from-layer=\"4\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>"
		"</edges></net>",
		C, H, W, C, H, W, K, C, 4 * K * C * 9, K, C, C, H, W, K, C, K, H,
		W, cport, act, ver, K, H, W,
		cdims ? "<port id=\"1\" precision=\"FP32\">" : "",
		cdims ? cdimx : "", cdims ? "</port>" : "", K, H, W, K, H, W,
		cdims ? "<edge from-layer=\"3\" from-port=\"0\" to-layer=\"4\" to-port=\"1\"/>" : "");
}

/*
 * Convolutions followed by PReLU (one slope, one per channel as a 1-D
 * Const and as [1, K, 1, 1]), Sigmoid, Swish with and without beta, and
 * HSwish: the fusion pass (npr_fuse_match()) takes the activation and
 * npr_conv_plan_build() puts it into the plan, whose run
 * matches a scalar convolution (in double) and the op's formula.  A
 * PReLU slope along the width is not per channel: not fused.
 */
TEST(conv_fuses_prelu_sigmoid_swish_hswish)
{
	static const struct {
		const char *act, *ver, *cdims;
		int cn;		/* floats of the Const: 0 none, -1 K */
		bool fused;
	} cs[] = {
		{ "PReLU", "opset1", "1", 1, true },
		{ "PReLU", "opset1", "K", -1, true },
		{ "PReLU", "opset1", "1,K,1,1", -1, true },
		{ "PReLU", "opset1", "1,1,1,W", -2, false },
		{ "Sigmoid", "opset1", NULL, 0, true },
		{ "Swish", "opset4", NULL, 0, true },
		{ "Swish", "opset4", "", 1, true },
		{ "HSwish", "opset4", NULL, 0, true },
	};
	const int C = 19, H = 11, W = 13, K = 70;
	char *xml = malloc(16384);
	int ci;

	ASSERT_NONNULL(xml);
	for (ci = 0; ci < (int)(sizeof(cs) / sizeof(cs[0])); ci++) {
		int cn = cs[ci].cn == -1 ? K : cs[ci].cn == -2 ? W : cs[ci].cn;
		char dims[32] = "";
		size_t nw = (size_t)K * C * 9, nb = nw + (cn > 0 ? cn : 0);
		float *wb = malloc(sizeof(float) * nb), *x, *y;
		struct npr_weights *blob = NULL;
		struct npr_graph *mg = NULL, *g = NULL;
		struct npr_conv_plan *plan = NULL;
		int i, conv = -1, act = -1, nabs;
		struct npr_fusion fusion;
		struct npr_fuse fu;
		int64_t npix = H * W, k, c, oy, ox, ky, kx;
		double err = 0;

		ASSERT_NONNULL(wb);
		fill(wb, nb, 51 + ci);
		if (cs[ci].cdims) {
			const char *q = cs[ci].cdims;

			for (; *q; q++) {
				if (*q == 'K')
					snprintf(dims + strlen(dims), sizeof(dims) - strlen(dims), "%d", K);
				else if (*q == 'W')
					snprintf(dims + strlen(dims), sizeof(dims) - strlen(dims), "%d", W);
				else
					snprintf(dims + strlen(dims), sizeof(dims) - strlen(dims), "%c", *q);
			}
			if (!strcmp(cs[ci].act, "Swish"))
				wb[nw] = 0.75f;		/* beta, a scalar */
		}
		ASSERT_GT(act_net(xml, 16384, C, H, W, K, cs[ci].act, cs[ci].ver,
				  cs[ci].cdims ? dims : NULL, cn), 0);
		ASSERT_EQ(npr_ir_weights_from_memory(wb, sizeof(float) * nb, &blob), 0);
		ASSERT_EQ(npr_ir_parse(xml, strlen(xml), blob, &mg), 0);
		npr_weights_put(blob);
		ASSERT_EQ(npr_compile_graph(mg, NULL, npr_backend_evaluator(),
					    &g), 0);
		npr_graph_free(mg);
		ASSERT_EQ(npr_fuse_init(&fu, g), 0);
		for (i = 0; i < g->nnodes; i++) {
			if (!strcmp(g->nodes[i].name, "conv"))
				conv = i;
			if (!strcmp(g->nodes[i].name, "act"))
				act = i;
		}
		ASSERT_GE(conv, 0);
		ASSERT_GE(act, 0);
		ASSERT_EQ(npr_fuse_match(&fu, conv, &fusion), 0);
		ASSERT_EQ(npr_conv_plan_build(g, &fusion, true, &plan), 0);
		nabs = fusion.nabsorbed;
		if (nabs != (cs[ci].fused ? 1 : 0))
			TH_LOG("case %d (%s %s): %d absorbed", ci, cs[ci].act,
			       dims, nabs);
		ASSERT_EQ(nabs, cs[ci].fused ? 1 : 0);
		if (nabs)
			ASSERT_EQ(fusion.absorbed[0], act);
		x = malloc(sizeof(float) * C * npix);
		y = malloc(sizeof(float) * K * npix);
		ASSERT_TRUE(x && y);
		fill(x, C * npix, 61 + ci);
		ASSERT_EQ(npr_conv_plan_run(plan, x, y, NULL), 0);
		for (k = 0; k < K; k++)
			for (oy = 0; oy < H; oy++)
				for (ox = 0; ox < W; ox++) {
					double v = 0, e;

					for (c = 0; c < C; c++)
						for (ky = 0; ky < 3; ky++)
							for (kx = 0; kx < 3; kx++) {
								int64_t iy = oy + ky - 1, ix = ox + kx - 1;

								if (iy >= 0 && iy < H && ix >= 0 && ix < W)
									v += (double)wb[((k * C + c) * 3 + ky) * 3 + kx] *
									     x[(c * H + iy) * W + ix];
							}
					e = v;
					if (!cs[ci].fused)
						;	/* the plan stops at the convolution */
					else if (!strcmp(cs[ci].act, "PReLU"))
						e = v < 0 ? v * wb[nw + (cn == 1 ? 0 : k)] : v;
					else if (!strcmp(cs[ci].act, "Sigmoid"))
						e = 1 / (1 + exp(-v));
					else if (!strcmp(cs[ci].act, "Swish"))
						e = v / (1 + exp(-(cs[ci].cdims ? 0.75 : 1.0) * v));
					else
						e = v * fmin(fmax(v + 3, 0), 6) / 6;
					e -= y[(k * H + oy) * W + ox];
					if (fabs(e) > err)
						err = fabs(e);
				}
		if (err > 3e-5)
			TH_LOG("case %d (%s %s): %g", ci, cs[ci].act, dims, err);
		ASSERT_LE(err, 3e-5);
		npr_conv_plan_free(plan);
		npr_graph_free(g);
		npr_fuse_fini(&fu);
		free(wb); free(x); free(y);
	}
	free(xml);
}

/*
 * y = relu(conv3x3(x, w) + bias + res), stride 1, padding @pad, summed
 * in double: the reference for the Winograd blocks below.
 */
static void conv3x3_ref(const struct npr_conv_desc *d, const float *x,
			const float *w, const float *bias, const float *res,
			float *y)
{
	int64_t b, k, c, oy, ox, ky, kx;

	for (b = 0; b < d->N; b++)
		for (k = 0; k < d->K; k++)
			for (oy = 0; oy < d->OH; oy++)
				for (ox = 0; ox < d->OW; ox++) {
					int64_t o = ((b * d->K + k) * d->OH + oy) *
						    d->OW + ox;
					double s = bias[k] + res[o];

					for (c = 0; c < d->C; c++)
						for (ky = 0; ky < 3; ky++)
							for (kx = 0; kx < 3; kx++) {
								int64_t iy = oy + ky - d->ph;
								int64_t ix = ox + kx - d->pw;

								if (iy < 0 || iy >= d->H ||
								    ix < 0 || ix >= d->W)
									continue;
								s += (double)w[((k * d->C + c) * 3 + ky) * 3 + kx] *
								     x[((b * d->C + c) * d->H + iy) * d->W + ix];
							}
					y[o] = s > 0 ? (float)s : 0.0f;
				}
}

/*
 * The Winograd path's blocks of tile groups, sub-blocks of groups per
 * pass over U, and panel ranges, each at its limits: blocks of one group
 * (NPR_CONV_WINO_NB=7) and of three, sub-blocks of one and three groups
 * (NPR_CONV_WINO_SUB), on one thread and on all, for a deep layer with
 * a short last panel (K 100 = 64 + 36), one of 128+ channels (its
 * panels split first), and one of 16 over three images.
 */
TEST(winograd_blocks_and_splits_match_reference)
{
	static const struct { int64_t N, C, H, W, K, pad; } sh[] = {
		{ 2, 72, 30, 29, 100, 1 },
		{ 1, 130, 14, 14, 70, 1 },
		{ 3, 16, 11, 12, 48, 0 },
	};
	static const char *const nb[] = { NULL, "7", "21" };
	static const char *const sub[] = { NULL, "1", "3" };
	int si, ni, ui, lim;

	if (!npr_gemm_kern_get("avx512") || getenv("NPR_CONV_NO_WINO"))
		SKIP(return, "no AVX-512 or NPR_CONV_NO_WINO set: no Winograd");
	for (si = 0; si < (int)(sizeof(sh) / sizeof(sh[0])); si++) {
		struct npr_conv_desc d = {
			.N = sh[si].N, .C = sh[si].C, .H = sh[si].H,
			.W = sh[si].W, .K = sh[si].K, .kh = 3, .kw = 3,
			.sh = 1, .sw = 1, .dh = 1, .dw = 1, .ph = sh[si].pad,
			.pw = sh[si].pad, .G = 1,
		};
		int64_t nx, nw, ny;
		float *x, *w, *bias, *res, *e, *y;

		d.OH = d.H + 2 * d.ph - 2;
		d.OW = d.W + 2 * d.pw - 2;
		nx = d.N * d.C * d.H * d.W;
		nw = d.K * d.C * 9;
		ny = d.N * d.K * d.OH * d.OW;
		x = malloc(sizeof(float) * nx);
		w = malloc(sizeof(float) * nw);
		bias = malloc(sizeof(float) * d.K);
		res = malloc(sizeof(float) * ny);
		e = malloc(sizeof(float) * ny);
		y = malloc(sizeof(float) * ny);
		ASSERT_TRUE(x && w && bias && res && e && y);
		fill(x, nx, 41 + si);
		fill(w, nw, 42 + si);
		fill(bias, d.K, 43);
		fill(res, ny, 44);
		conv3x3_ref(&d, x, w, bias, res, e);
		for (ni = 0; ni < 3; ni++)
			for (ui = 0; ui < 3; ui++) {
				struct npr_conv_plan *plan;
				char desc[128];

				if (nb[ni])
					setenv("NPR_CONV_WINO_NB", nb[ni], 1);
				if (sub[ui])
					setenv("NPR_CONV_WINO_SUB", sub[ui], 1);
				ASSERT_EQ(npr_conv_plan_new(&d, w, NULL, &plan), 0);
				unsetenv("NPR_CONV_WINO_NB");
				unsetenv("NPR_CONV_WINO_SUB");
				npr_conv_plan_desc(plan, desc, sizeof(desc));
				ASSERT_NONNULL(strstr(desc, "winograd"));
				ASSERT_EQ(npr_conv_plan_epi(plan, bias, true,
							    NPR_ACT_RELU, 0, 0), 0);
				for (lim = 1; lim >= 0; lim--) {
					int old = npr_par_set_limit(lim);
					double err;

					memset(y, 0xff, sizeof(float) * ny);
					ASSERT_EQ(npr_conv_plan_run(plan, x, y, res), 0);
					npr_par_set_limit(old);
					err = rel_err(y, e, ny);
					if (err > 3e-5)
						TH_LOG("shape %d nb %s sub %s limit %d: %g",
						       si, nb[ni] ? nb[ni] : "-",
						       sub[ui] ? sub[ui] : "-", lim, err);
					ASSERT_LE(err, 3e-5);
				}
				npr_conv_plan_free(plan);
			}
		free(x); free(w); free(bias); free(res); free(e); free(y);
	}
}

TEST_HARNESS_MAIN
