// SPDX-License-Identifier: MIT
/*
 * The CPU backend's fast kernels against the scalar reference kernels,
 * over odd shapes: sizes that are not multiples of the vector width or
 * of the micro-kernel tile, every epilogue, and every micro-kernel this
 * CPU can run (AVX-512, AVX2+FMA, scalar), with 1 and all threads: SGEMM,
 * reductions, pooling, MatMul, FakeQuantize, the f16 conversions; the
 * thread pool; the kernel tables against the op registry, and constant
 * folding with the evaluator compile is given.  The convolutions are in
 * kernels_conv_test.c.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "ref/conv/conv.h"
#include "ref/kernels/fq.h"
#include "ref/kernels/registry.h"
#include "ref/gemm.h"
#include "ref/threads.h"
#include "passes/compile.h"
#include "graph/graph.h"
#include "ir/ir.h"
#include "ref/kernels/eltwise.h"
#include "ref/kernels/nn.h"
#include "harness.h"
#include "kernels_util.h"

TEST(sgemm_matches_reference_over_odd_shapes)
{
	static const int64_t dims[] = { 1, 3, 8, 17, 33, 64, 100, 259 };
	int nd = sizeof(dims) / sizeof(dims[0]), ki, a, b, c, ep, th;

	for (ki = 0; ki < 3; ki++) {
		const struct npr_gemm_kern *kn = npr_gemm_kern_get(kerns[ki]);

		if (!kn) {
			TH_LOG("%s: not on this CPU", kerns[ki]);
			continue;
		}
		for (a = 0; a < nd; a++)
			for (b = 0; b < nd; b++)
				for (c = 0; c < nd; c += 2) {
					int64_t M = dims[a], N = dims[b], K = dims[(c + a) % nd];
					float *A = malloc(sizeof(float) * M * K);
					float *B = malloc(sizeof(float) * K * (N + 3));
					float *C = malloc(sizeof(float) * M * (N + 5));
					float *R = malloc(sizeof(float) * M * (N + 5));
					float *bias = malloc(sizeof(float) * M);
					float *res = malloc(sizeof(float) * M * N);
					struct npr_gemm_bsrc bs = { .B = B, .ldb = N + 3 };
					struct npr_gemm_a pa;

					ASSERT_TRUE(A && B && C && R && bias && res);
					fill(A, M * K, 1);
					fill(B, K * (N + 3), 2);
					fill(bias, M, 3);
					fill(res, M * N, 4);
					ASSERT_EQ(npr_gemm_a_pack(&pa, kn, A, M, K, K), 0);
					for (ep = 0; ep < 4; ep++) {
						struct npr_gemm_epi e = {
							.bias = ep & 1 ? bias : NULL,
							.res = ep == 3 ? res : NULL,
							.ldr = N,
							.act = ep == 2 ? NPR_ACT_CLAMP :
							       ep == 3 ? NPR_ACT_RELU : 0,
							.lo = -0.5f, .hi = 0.75f,
						};
						int64_t i;

						for (th = 1; th <= 2; th++) {
							double err;

							/*
							 * the 5 columns past N are the
							 * caller's: a sentinel that must
							 * survive (and no garbage that
							 * could read as NaN)
							 */
							for (i = 0; i < M * (N + 5); i++)
								C[i] = R[i] = 7.0f;
							npr_sgemm_ref(M, N, K, A, K, B, N + 3,
								      R, N + 5, ep ? &e : NULL);
							ASSERT_EQ(npr_gemm_run(&pa, N,
									       npr_gemm_pack_b_rm,
									       &bs, C, N + 5,
									       ep ? &e : NULL, th), 0);
							err = rel_err(C, R, M * (N + 5));
							if (err > 1e-5)
								TH_LOG("%s M %lld N %lld K %lld epi %d threads %d: %g",
								       kn->name, (long long)M,
								       (long long)N, (long long)K,
								       ep, th, err);
							ASSERT_LE(err, 1e-5);
						}
					}
					npr_gemm_a_free(&pa);
					free(A); free(B); free(C); free(R);
					free(bias); free(res);
				}
	}
}

/*
 * ReduceMean/Sum/Max over trailing axes (the fast path, split over the
 * threads) against the scalar kernel reducing the transposed data over
 * its leading axis.
 */
TEST(reduce_trailing_axes_matches_scalar_kernel)
{
	static const int reds[3] = { NPR_RED_MEAN, NPR_RED_SUM, NPR_RED_MAX };
	const int64_t outer = 8 * 100, inner = 13 * 13;
	struct npr_nn_params pf = { 0 }, ps = { 0 };
	struct npr_node nf = { .name = "fast", .type = "ReduceMean",
			       .params = &pf };
	struct npr_node ns = { .name = "scalar", .type = "ReduceMean",
			       .params = &ps };
	struct npr_tensor in = { 0 }, it = { 0 }, of = { 0 }, os = { 0 };
	float *x, *xt, *yf, *ys;
	int64_t o, k;
	int r, lim;

	x = malloc(sizeof(float) * outer * inner);
	xt = malloc(sizeof(float) * outer * inner);
	yf = malloc(sizeof(float) * outer);
	ys = malloc(sizeof(float) * outer);
	ASSERT_TRUE(x && xt && yf && ys);
	fill(x, outer * inner, 21);
	for (o = 0; o < outer; o++)
		for (k = 0; k < inner; k++)
			xt[k * outer + o] = x[o * inner + k];
	in.type = it.type = of.type = os.type = NPR_ELEM_F32;
	in.shape.rank = 4;
	in.shape.d[0] = 8; in.shape.d[1] = 100;
	in.shape.d[2] = 13; in.shape.d[3] = 13;
	it.shape.rank = 2;
	it.shape.d[0] = inner; it.shape.d[1] = outer;
	of.shape.rank = 2;
	of.shape.d[0] = 8; of.shape.d[1] = 100;
	os.shape.rank = 1;
	os.shape.d[0] = outer;
	in.data = x; it.data = xt; of.data = yf; os.data = ys;
	in.nbytes = it.nbytes = sizeof(float) * outer * inner;
	of.nbytes = os.nbytes = sizeof(float) * outer;
	pf.reduced[2] = pf.reduced[3] = true;
	ps.reduced[0] = true;
	for (lim = 0; lim < 2; lim++) {
		int old = npr_par_set_limit(lim);

		for (r = 0; r < 3; r++) {
			pf.red = ps.red = reds[r];
			memset(yf, 0, sizeof(float) * outer);
			ASSERT_EQ(npr_ref_reduce(&nf, &in, &of), 0);
			ASSERT_EQ(npr_ref_reduce(&ns, &it, &os), 0);
			ASSERT_LE(rel_err(yf, ys, outer), 1e-6);
		}
		npr_par_set_limit(old);
	}
	free(x); free(xt); free(yf); free(ys);
}

TEST(pooling_fast_path_matches_scalar_kernel)
{
	static const struct {
		int64_t C, H, W, k, s, pb, pe, d;
		bool excl, neg;		/* neg: inputs in [-3, -1] */
	} pc[] = {
		{ 3, 13, 11, 3, 2, 1, 1, 1, false },
		{ 5, 17, 17, 3, 2, 0, 1, 1, true },
		{ 2, 9, 10, 2, 2, 0, 0, 1, false },
		{ 4, 7, 7, 7, 1, 0, 0, 1, false },
		{ 3, 12, 9, 3, 1, 2, 2, 2, true },
		{ 1, 6, 5, 4, 3, 1, 3, 1, false },
		{ 2, 9, 55, 3, 2, 0, 1, 1, false },	/* ceil mode, 2 vectors */
		{ 2, 7, 40, 3, 2, 1, 1, 1, true },	/* s2, padded, row 40 */
		{ 2, 5, 37, 3, 1, 1, 1, 1, false },	/* s1, 37 wide */
		{ 1, 6, 50, 5, 2, 2, 2, 2, true },	/* s2, dilation 2 */
		{ 1, 18, 34, 17, 2, 0, 0, 1, false },	/* 17 wide (fallback) */
		/* 3x3/2 inside the input: the plane kept in registers */
		{ 3, 11, 111, 3, 2, 0, 0, 1, false },	/* 55 wide, 4 vectors */
		{ 2, 8, 112, 3, 2, 0, 0, 1, false },	/* last column unused */
		{ 2, 13, 13, 3, 2, 0, 0, 1, false },	/* under a vector */
		{ 1, 3, 3, 3, 2, 0, 0, 1, false },	/* one output */
		{ 2, 9, 33, 3, 2, 0, 0, 1, false },	/* 16 outputs */
		{ 1, 7, 35, 3, 2, 0, 0, 1, false },	/* 17 outputs */
		{ 2, 113, 113, 3, 2, 0, 1, 1, false },	/* ceil, not clipped */
		/* ceil mode clips the last windows: all inputs negative, so
		 * that what is read past the edge would show */
		{ 3, 14, 28, 3, 2, 0, 1, 1, false, true },
		{ 2, 56, 56, 3, 2, 0, 1, 1, false, true },
		{ 1, 2, 2, 3, 2, 0, 1, 1, false, true },	/* one window */
		{ 2, 15, 33, 3, 2, 0, 0, 1, false, true },	/* not clipped */
		/* 2x2/2 inside the input: the plane kernel */
		{ 3, 64, 32, 2, 2, 0, 0, 1, false },	/* 16 outputs a row */
		{ 2, 13, 75, 2, 2, 0, 0, 1, false, true },	/* 37: 3 vectors */
		{ 1, 2, 2, 2, 2, 0, 0, 1, true },	/* one output */
		{ 2, 10, 10, 2, 2, 0, 1, 1, false },	/* ceil, no clipping */
		{ 2, 9, 9, 2, 2, 0, 1, 1, false, true },	/* ceil, clipped */
	};
	int64_t k;
	int i, m;

	for (i = 0; i < (int)(sizeof(pc) / sizeof(pc[0])); i++)
		for (m = 0; m < 2; m++) {
			struct npr_conv_params p = { 0 };
			struct npr_node node = {
				.name = "pool", .type = m ? "MaxPool" : "AvgPool",
				.nout = 1,
			};
			struct npr_tensor in = { 0 }, out = { 0 };
			int64_t OH, OW, nx, ny;
			float *x, *y, *r;

			p.nsp = 2;
			p.kernel[0] = p.kernel[1] = pc[i].k;
			p.stride[0] = p.stride[1] = pc[i].s;
			p.dil[0] = p.dil[1] = m ? pc[i].d : 1;
			p.pb[0] = p.pb[1] = pc[i].pb;
			p.pe[0] = p.pe[1] = pc[i].pe;
			p.exclude_pad = pc[i].excl;
			node.params = &p;
			OH = (pc[i].H + pc[i].pb + pc[i].pe - (pc[i].k - 1) * p.dil[0] - 1) / pc[i].s + 1;
			OW = (pc[i].W + pc[i].pb + pc[i].pe - (pc[i].k - 1) * p.dil[0] - 1) / pc[i].s + 1;
			nx = 2 * pc[i].C * pc[i].H * pc[i].W;
			ny = 2 * pc[i].C * OH * OW;
			x = malloc(sizeof(float) * nx);
			y = malloc(sizeof(float) * ny);
			r = malloc(sizeof(float) * ny);
			ASSERT_TRUE(x && y && r);
			fill(x, nx, 21 + i);
			for (k = 0; pc[i].neg && k < nx; k++)
				x[k] -= 2.0f;
			in.type = out.type = NPR_ELEM_F32;
			in.shape.rank = out.shape.rank = 4;
			in.shape.d[0] = out.shape.d[0] = 2;
			in.shape.d[1] = out.shape.d[1] = pc[i].C;
			in.shape.d[2] = pc[i].H; in.shape.d[3] = pc[i].W;
			out.shape.d[2] = OH; out.shape.d[3] = OW;
			in.data = x; in.nbytes = nx * 4;
			out.data = r; out.nbytes = ny * 4;
			ASSERT_EQ(npr_pool_scalar(&node, &in, &out), 0);
			out.data = y;
			ASSERT_EQ(npr_ref_pool(&node, &in, &out), 0);
			if (rel_err(y, r, ny) > 1e-6)
				TH_LOG("pool case %d %s: %g", i, node.type,
				       rel_err(y, r, ny));
			ASSERT_LE(rel_err(y, r, ny), 1e-6);
			free(x); free(y); free(r);
		}
}

/*
 * A pooling window far larger than its input (a kernel of 2^24 with as
 * much padding, which a model may ask for) visits only the taps inside
 * the input: every path gives the exact maxima and means of the
 * remaining corner, and takes no longer than the input is large.
 */
TEST(pool_window_far_larger_than_the_input)
{
	static const int64_t big = 1 << 24, dims[3] = { 2, 3, 4 };
	int nsp, m, path;

	for (nsp = 2; nsp <= 3; nsp++)
		for (m = 0; m < 2; m++)
			for (path = 0; path < (nsp == 2 ? 2 : 1); path++) {
				struct npr_conv_params p = { 0 };
				struct npr_node node = {
					.name = "pool", .type = m ? "MaxPool" : "AvgPool",
					.nout = 1, .params = &p,
				};
				struct npr_tensor in = { 0 }, out = { 0 };
				const int64_t *d = dims + 3 - nsp;
				float x[24], y[60];
				int64_t o[3] = { 0 }, nx = 1, ny = 1, a, t;

				p.nsp = nsp;
				p.exclude_pad = path;
				in.type = out.type = NPR_ELEM_F32;
				in.shape.rank = out.shape.rank = 2 + nsp;
				in.shape.d[0] = out.shape.d[0] = 1;
				in.shape.d[1] = out.shape.d[1] = 1;
				for (a = 0; a < nsp; a++) {
					p.kernel[a] = big;
					p.stride[a] = p.dil[a] = 1;
					p.pe[a] = big;
					in.shape.d[2 + a] = d[a];
					out.shape.d[2 + a] = d[a] + 1;
					nx *= d[a];
					ny *= d[a] + 1;
				}
				fill(x, nx, 5 + nsp);
				in.data = x; in.nbytes = nx * 4;
				out.data = y; out.nbytes = ny * 4;
				ASSERT_EQ(path ? npr_ref_pool(&node, &in, &out) :
					  npr_pool_scalar(&node, &in, &out), 0);
				for (t = 0; t < ny; t++) {
					/* output o: the corner x[o..] of the input */
					double sum = 0, area = 1;
					float mx = -INFINITY;
					int64_t i, r, cnt = 0, c[3];

					for (a = nsp - 1, r = t; a >= 0; r /= d[a] + 1, a--)
						o[a] = r % (d[a] + 1);
					for (a = 0; a < nsp; a++)
						area *= (double)(d[a] + big - o[a]);
					for (i = 0; i < nx; i++) {
						bool inside = true;

						for (a = nsp - 1, r = i; a >= 0; r /= d[a], a--)
							c[a] = r % d[a];
						for (a = 0; a < nsp; a++)
							inside &= c[a] >= o[a];
						if (!inside)
							continue;
						sum += x[i];
						mx = x[i] > mx ? x[i] : mx;
						cnt++;
					}
					if (m)
						ASSERT_EQ(y[t], cnt ? mx : 0.0f);
					else if (p.exclude_pad)
						ASSERT_NEAR(y[t], cnt ? sum / cnt : 0, 1e-5);
					else
						ASSERT_NEAR(y[t], sum / area, 1e-12);
				}
			}
}

TEST(matmul_fast_path_matches_scalar_kernel)
{
	static const int64_t Ms[] = { 1, 3, 5, 8 }, Ns[] = { 1, 17, 1000 };
	static const int64_t Ks[] = { 1, 15, 33, 512 };
	int a, b, c, tb;

	for (a = 0; a < 4; a++)
		for (b = 0; b < 3; b++)
			for (c = 0; c < 4; c++)
				for (tb = 0; tb < 2; tb++) {
					int64_t M = Ms[a], N = Ns[b], K = Ks[c];
					struct npr_nn_params p = { .tb = tb };
					struct npr_node node = {
						.name = "fc", .type = "MatMul",
						.params = &p,
					};
					struct npr_tensor in[2] = { { 0 } }, out = { 0 };
					float *A = malloc(sizeof(float) * M * K);
					float *B = malloc(sizeof(float) * N * K);
					float *y = malloc(sizeof(float) * M * N);
					float *r = malloc(sizeof(float) * M * N);

					ASSERT_TRUE(A && B && y && r);
					fill(A, M * K, 31);
					fill(B, N * K, 32);
					in[0].type = in[1].type = out.type = NPR_ELEM_F32;
					in[0].shape.rank = in[1].shape.rank = 2;
					out.shape.rank = 2;
					in[0].shape.d[0] = M; in[0].shape.d[1] = K;
					in[1].shape.d[0] = tb ? N : K;
					in[1].shape.d[1] = tb ? K : N;
					out.shape.d[0] = M; out.shape.d[1] = N;
					in[0].data = A; in[1].data = B;
					in[0].nbytes = M * K * 4;
					in[1].nbytes = N * K * 4;
					out.nbytes = M * N * 4;
					out.data = r;
					ASSERT_EQ(npr_matmul_scalar(&node, in, &out), 0);
					out.data = y;
					ASSERT_EQ(npr_ref_matmul(&node, in, &out), 0);
					if (rel_err(y, r, M * N) > 1e-5)
						TH_LOG("matmul %lld x %lld x %lld tb %d: %g",
						       (long long)M, (long long)N,
						       (long long)K, tb,
						       rel_err(y, r, M * N));
					ASSERT_LE(rel_err(y, r, M * N), 1e-5);
					free(A); free(B); free(y); free(r);
				}
}

/*
 * Operands of rank 3 and 4: a [.., M, K] activation by a 2-D weight (its
 * leading dims folded into the rows) and batched pairs whose batch dims
 * broadcast both ways (attention's Q K^T over grouped heads), B
 * transposed or not, empty M, N and K: the vector loops give the scalar
 * kernel's values.
 */
TEST(matmul_batched_fast_path_matches_scalar_kernel)
{
	static const struct {
		int ra, rb;
		int64_t a[4], b[4];	/* A's [.., M, K], B's [.., K, N] */
	} cases[] = {
		{ 3, 2, { 1, 1, 256 }, { 256, 40 } },
		{ 3, 2, { 2, 3, 17 }, { 17, 5 } },
		{ 4, 4, { 1, 4, 1, 64 }, { 1, 4, 64, 9 } },
		{ 4, 4, { 2, 4, 3, 8 }, { 2, 1, 8, 7 } },
		{ 4, 4, { 1, 2, 5, 8 }, { 3, 1, 8, 6 } },	/* 1 vs 3, 2 vs 1 */
		{ 4, 4, { 2, 1, 3, 8 }, { 1, 2, 8, 4 } },
		{ 3, 3, { 2, 0, 8 }, { 2, 8, 3 } },
		{ 3, 3, { 2, 3, 0 }, { 2, 0, 3 } },
		{ 3, 2, { 1, 3, 0 }, { 0, 4 } },
		{ 4, 4, { 1, 2, 4, 8 }, { 1, 2, 8, 0 } },
	};
	size_t ci;
	int tb, i;

	for (ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++)
		for (tb = 0; tb < 2; tb++) {
			struct npr_nn_params p = { .tb = tb };
			struct npr_node node = {
				.name = "mm", .type = "MatMul", .params = &p,
			};
			struct npr_tensor in[2] = { { 0 } }, out = { 0 };
			int ra = cases[ci].ra, rb = cases[ci].rb, ro;
			int64_t na = 1, nbb = 1, no = 1, M, N, K;
			float *A, *B, *y, *r;

			in[0].shape.rank = ra;
			in[1].shape.rank = rb;
			for (i = 0; i < ra; i++)
				in[0].shape.d[i] = cases[ci].a[i];
			for (i = 0; i < rb; i++)
				in[1].shape.d[i] = cases[ci].b[i];
			M = cases[ci].a[ra - 2];
			K = cases[ci].a[ra - 1];
			N = cases[ci].b[rb - 1];
			if (tb) {
				in[1].shape.d[rb - 2] = N;
				in[1].shape.d[rb - 1] = K;
			}
			ro = ra > rb ? ra : rb;
			out.shape.rank = ro;
			for (i = 0; i < ro - 2; i++) {
				int da = i - (ro - ra), db = i - (ro - rb);
				int64_t x = da >= 0 ? cases[ci].a[da] : 1;
				int64_t z = db >= 0 ? cases[ci].b[db] : 1;

				out.shape.d[i] = x > z ? x : z;
			}
			out.shape.d[ro - 2] = M;
			out.shape.d[ro - 1] = N;
			for (i = 0; i < ra; i++)
				na *= in[0].shape.d[i];
			for (i = 0; i < rb; i++)
				nbb *= in[1].shape.d[i];
			for (i = 0; i < ro; i++)
				no *= out.shape.d[i];
			A = malloc(sizeof(float) * (na + 1));
			B = malloc(sizeof(float) * (nbb + 1));
			y = malloc(sizeof(float) * (no + 1));
			r = malloc(sizeof(float) * (no + 1));
			ASSERT_TRUE(A && B && y && r);
			fill(A, na, 41);
			fill(B, nbb, 42);
			for (i = 0; i < no; i++)
				y[i] = r[i] = NAN;
			in[0].type = in[1].type = out.type = NPR_ELEM_F32;
			in[0].data = A;
			in[1].data = B;
			in[0].nbytes = na * 4;
			in[1].nbytes = nbb * 4;
			out.nbytes = no * 4;
			out.data = r;
			ASSERT_EQ(npr_matmul_scalar(&node, in, &out), 0);
			out.data = y;
			ASSERT_EQ(npr_ref_matmul(&node, in, &out), 0);
			if (rel_err(y, r, no) > 1e-5)
				TH_LOG("case %zu tb %d: %g", ci, tb,
				       rel_err(y, r, no));
			ASSERT_LE(rel_err(y, r, no), 1e-5);
			free(A); free(B); free(y); free(r);
		}
}

/* FakeQuantize-1 as the specification writes it, one element. */
static float fq_spec(float x, float il, float ih, float ol, float oh,
		     int64_t levels)
{
	float lm1 = (float)(levels - 1), q;

	if (x <= fminf(il, ih))
		return ol;
	if (x > fmaxf(il, ih))
		return oh;
	q = nearbyintf((x - il) / (ih - il) * lm1);
	return q / lm1 * (oh - ol) + ol;
}

static bool same_bits(float a, float b)
{
	return !memcmp(&a, &b, sizeof(a)) || (a != a && b != b);
}

/*
 * The vectorised FakeQuantize rows and the threaded per-channel walk give
 * the bits of the specification's formula: odd lengths, exact halves
 * (ties to even), both orders of the input limits, values outside the
 * range, NaN and infinities, levels from 2 to 2^24.
 */
TEST(fake_quantize_fast_path_matches_the_formula)
{
	static const int64_t levels[] = { 2, 16, 255, 256, 65536, 16777216 };
	static const int64_t lens[] = { 1, 15, 16, 17, 33, 1000 };
	static const float lim[][4] = {
		{ 0.0f, 255.0f, 0.0f, 255.0f },
		{ -1.5f, 2.25f, -3.0f, 3.0f },
		{ 2.0f, -2.0f, 1.0f, -1.0f },	/* reversed */
		{ 0.1f, 0.7f, -0.25f, 0.5f },
	};
	float x[1000], y[1000];
	int li, le, k, isa, ok = 1;
	int64_t i;

	for (i = 0; i < 1000; i++)
		x[i] = (float)(i % 600) * 0.5f - 50.0f + (i % 7) * 1e-3f;
	x[3] = NAN;
	x[5] = INFINITY;
	x[8] = -INFINITY;
	for (isa = 0; isa < 2; isa++) {
		void (*row)(const float *, float *, int64_t, float, float,
			    float, float, float, bool) =
			isa ? npr_fq_row_avx512 : npr_fq_row_generic;

		if (isa && !__builtin_cpu_supports("avx512f")) {
			TH_LOG("no AVX-512F: checking the generic row only");
			continue;
		}
		for (li = 0; li < 6; li++)
			for (le = 0; le < 6; le++)
				for (k = 0; k < 4; k++) {
					float lm1 = (float)(levels[li] - 1);

					row(x, y, lens[le], lim[k][0], lim[k][1],
					    lim[k][2], lim[k][3], lm1,
					    lm1 < 4194304.0f);
					for (i = 0; i < lens[le] && ok; i++) {
						float r = fq_spec(x[i], lim[k][0],
								  lim[k][1], lim[k][2],
								  lim[k][3], levels[li]);

						if (!same_bits(y[i], r)) {
							TH_LOG("isa %d levels %lld lim %d x %g: %.9g != %.9g",
							       isa, (long long)levels[li],
							       k, x[i], y[i], r);
							ok = 0;
						}
					}
				}
	}
	ASSERT_TRUE(ok);

	/* per-channel limits [1, C, 1, 1] over [N, C, H, W], on the threads */
	{
		enum { N = 2, C = 3, H = 37, W = 301 };
		static float X[N * C * H * W], Y[N * C * H * W];
		float il[C] = { -1.0f, 0.0f, 3.0f }, ih[C] = { 1.0f, 2.5f, -3.0f };
		float ol[C] = { -1.0f, 0.0f, 2.0f }, oh[C] = { 1.0f, 1.0f, -2.0f };
		struct npr_eltwise_params p = { .levels = 256 };
		struct npr_node node = {
			.name = "fq", .type = "FakeQuantize", .params = &p,
		};
		struct npr_tensor in[5] = { { 0 } }, out = { 0 };
		int64_t c;

		fill(X, N * C * H * W, 41);
		for (i = 0; i < N * C * H * W; i++)
			X[i] *= 4.0f;
		in[0].shape.rank = out.shape.rank = 4;
		in[0].shape.d[0] = out.shape.d[0] = N;
		in[0].shape.d[1] = out.shape.d[1] = C;
		in[0].shape.d[2] = out.shape.d[2] = H;
		in[0].shape.d[3] = out.shape.d[3] = W;
		in[0].data = X;
		in[0].nbytes = out.nbytes = sizeof(X);
		out.data = Y;
		out.type = NPR_ELEM_F32;
		for (k = 0; k < 5; k++) {
			in[k].type = NPR_ELEM_F32;
			if (!k)
				continue;
			in[k].shape.rank = 4;
			in[k].shape.d[0] = 1;
			in[k].shape.d[1] = C;
			in[k].shape.d[2] = in[k].shape.d[3] = 1;
			in[k].nbytes = sizeof(il);
		}
		in[1].data = il; in[2].data = ih; in[3].data = ol; in[4].data = oh;
		ASSERT_EQ(npr_ref_fake_quantize(&node, in, &out), 0);
		for (i = 0; i < N * C * H * W; i++) {
			c = i / (H * W) % C;
			if (!same_bits(Y[i], fq_spec(X[i], il[c], ih[c], ol[c],
						     oh[c], 256))) {
				TH_LOG("element %lld: %.9g", (long long)i, Y[i]);
				ASSERT_TRUE(0);
			}
		}
	}
}

TEST(sum_rows_builds_agree_bit_for_bit)
{
	static const int64_t inner[] = { 1, 7, 8, 9, 49, 50, 196 };
	float x[3 * 196], y0[3], y1[3];
	int i, o;

	fill(x, 3 * 196, 41);
	for (i = 0; i < (int)(sizeof(inner) / sizeof(inner[0])); i++) {
		npr_sum_rows_generic(x, 3, inner[i], y0, i & 1);
#if defined(__x86_64__)
		__builtin_cpu_init();
		if (!__builtin_cpu_supports("avx512f")) {
			TH_LOG("no AVX-512 on this CPU: generic build only");
			memcpy(y1, y0, sizeof(y1));
		} else {
			npr_sum_rows_avx512(x, 3, inner[i], y1, i & 1);
		}
#else
		memcpy(y1, y0, sizeof(y1));
#endif
		for (o = 0; o < 3; o++) {
			double ref = 0;
			int64_t k;

			for (k = 0; k < inner[i]; k++)
				ref += x[o * inner[i] + k];
			if (i & 1)
				ref /= inner[i];
			ASSERT_EQ(memcmp(&y0[o], &y1[o], sizeof(float)), 0);
			ASSERT_LE(fabs(y0[o] - ref), 1e-5 * (1 + fabs(ref)));
		}
	}
}

static _Atomic int hits[1000];

static void count_hit(void *arg, int i, int tid)
{
	int *maxtid = arg;

	hits[i]++;
	/* other threads store it: read it atomically too */
	if (tid > __atomic_load_n(maxtid, __ATOMIC_RELAXED))
		__atomic_store_n(maxtid, tid, __ATOMIC_RELAXED);
}

TEST(thread_pool_runs_every_index_once_within_its_limit)
{
	int i, n, lim, maxtid;

	ASSERT_GE(npr_pool_cpus(), 1);
	for (lim = 0; lim <= 2; lim++) {
		npr_par_set_limit(lim);
		for (n = 0; n < 1000; n += 97) {
			maxtid = 0;
			for (i = 0; i < 1000; i++)
				hits[i] = 0;
			npr_parallel_for(n, count_hit, &maxtid);
			for (i = 0; i < 1000; i++)
				ASSERT_EQ(hits[i], i < n ? 1 : 0);
			ASSERT_LT(maxtid, npr_par_threads());
			if (lim)
				ASSERT_LE(npr_par_threads(), lim);
		}
	}
	npr_par_set_limit(0);
}

/*
 * Pool statistics (NPR_CPU_PROFILE=3): an attached struct counts every
 * loop of its thread, the indexes each thread ran add up to the loops'
 * sizes, nothing is counted once detached, and a nested loop is not
 * counted twice.
 */
static void no_op(void *arg, int i, int tid)
{
	(void)arg;
	(void)i;
	(void)tid;
}

static void nested_hit(void *arg, int i, int tid)
{
	npr_parallel_for(3, no_op, NULL);
	(void)arg;
	(void)i;
	(void)tid;
}

TEST(thread_pool_statistics_count_loops_and_indexes)
{
	struct npr_par_stats st = { 0 };
	uint64_t items = 0;
	int i, lim, maxtid = 0;

	for (lim = 1; lim <= 2; lim++) {
		npr_par_set_limit(lim);
		memset(&st, 0, sizeof(st));
		ASSERT_NULL(npr_par_stats_attach(&st));
		npr_parallel_for(500, count_hit, &maxtid);
		npr_parallel_for(0, count_hit, &maxtid);
		npr_parallel_for(7, count_hit, &maxtid);
		ASSERT_EQ(npr_par_stats_attach(NULL), &st);
		npr_parallel_for(9, count_hit, &maxtid);
		ASSERT_EQ(st.loops, 3);
		for (items = 0, i = 0; i < NPR_PAR_STATS_MAX; i++)
			items += st.items[i];
		ASSERT_EQ(items, 507);
		if (npr_par_threads() == 1)
			ASSERT_EQ(st.serial, 3);
		ASSERT_GE(st.span_ns, st.wait_ns);
		/* nested: the inner loops run inside the outer's bodies */
		memset(&st, 0, sizeof(st));
		npr_par_stats_attach(&st);
		npr_parallel_for(4, nested_hit, NULL);
		npr_par_stats_attach(NULL);
		ASSERT_EQ(st.loops, 1);
		for (items = 0, i = 0; i < NPR_PAR_STATS_MAX; i++)
			items += st.items[i];
		ASSERT_EQ(items, 4);
	}
	npr_par_set_limit(0);
}

struct loop_mark {
	int loop;
	int seen[4];
};

static void mark_loop(void *arg, int i, int tid)
{
	struct loop_mark *m = arg;

	/* a worker still on an earlier loop would write a stale number */
	__atomic_store_n(&m->seen[i], m->loop, __ATOMIC_RELAXED);
}

/*
 * Many short loops back to back: the caller closes a loop once every
 * index is handed out and goes on without a worker that came late; that
 * worker must never run an index of the next loop with the old one's
 * function or argument, nor miss one.
 */
TEST(thread_pool_short_loops_back_to_back)
{
	struct loop_mark a = { 0 }, b = { 0 };
	int l, i;

	npr_par_set_limit(0);
	for (l = 1; l <= 20000; l++) {
		struct loop_mark *m = l & 1 ? &a : &b;
		int n = 1 + l % 4;

		m->loop = l;
		npr_parallel_for(n, mark_loop, m);
		for (i = 0; i < n; i++)
			ASSERT_EQ(__atomic_load_n(&m->seen[i], __ATOMIC_RELAXED), l);
	}
}

/*
 * Workers run a loop's items with the caller's floating-point control:
 * CPU_DENORMALS_OPTIMIZATION sets FTZ/DAZ on the inferring thread only.
 */
struct fpcr_seen {
	unsigned int csr[256];
	volatile double spin[256];
};

static void record_fpcr(void *arg, int i, int tid)
{
	struct fpcr_seen *s = arg;
	int k;

	(void)tid;
	for (k = 0; k < 20000; k++)	/* long enough for a worker to join */
		s->spin[i] = s->spin[i] + k;
#if defined(__x86_64__)
	s->csr[i] = __builtin_ia32_stmxcsr() & ~0x3fu;	/* control bits */
#else
	s->csr[i] = 0;
#endif
}

TEST(thread_pool_items_run_with_the_callers_fp_control)
{
	struct fpcr_seen s;
	unsigned int mine = 0, want;
	int i, pass;

#if defined(__x86_64__)
	mine = __builtin_ia32_stmxcsr() & ~0x3fu;
#endif
	if (npr_pool_cpus() < 2)
		TH_LOG("one CPU: the items run on this thread only");
	for (pass = 0; pass < 2; pass++) {
		want = pass ? mine | 0x8040 : mine;
#if defined(__x86_64__)
		__builtin_ia32_ldmxcsr(want);
#endif
		memset(&s, 0xff, sizeof(s));
		npr_parallel_for(256, record_fpcr, &s);
#if defined(__x86_64__)
		__builtin_ia32_ldmxcsr(mine);
#endif
		for (i = 0; i < 256; i++)
			ASSERT_EQ(s.csr[i], want);
	}
}

TEST(thread_pool_works_in_a_forked_child)
{
	int maxtid = 0, i, status = 0;
	pid_t pid;

	npr_par_set_limit(0);
	npr_parallel_for(100, count_hit, &maxtid);	/* pool started */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		for (i = 0; i < 1000; i++)
			hits[i] = 0;
		npr_parallel_for(1000, count_hit, &maxtid);
		for (i = 0; i < 1000; i++)
			if (hits[i] != 1)
				_exit(1);
		_exit(npr_par_threads() == 1 ? 0 : 2);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

/*
 * A large f32 activation runs on the threads in runs of elements: the
 * same bits as one pass over the whole tensor (Sigmoid and Clamp over
 * 300,001 elements, an odd count, so the runs are uneven).
 */
TEST(unary_on_threads_matches_one_pass)
{
	static const int ops[2] = { NPR_UN_SIGMOID, NPR_UN_CLAMP };
	const int64_t n = 300001;
	float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
	float *e = malloc(sizeof(float) * n);
	int k;

	ASSERT_TRUE(x && y && e);
	fill(x, n, 81);
	for (k = 0; k < 2; k++) {
		struct npr_eltwise_params p = { .op = ops[k], .lo = -0.25,
						.hi = 0.5 };
		struct npr_node node = { .name = "act", .type = "Sigmoid",
					 .params = &p, .nin = 1, .nout = 1 };
		struct npr_tensor in = { 0 }, out = { 0 };

		in.type = out.type = NPR_ELEM_F32;
		in.shape.rank = out.shape.rank = 1;
		in.shape.d[0] = out.shape.d[0] = n;
		in.data = x;
		out.data = y;
		in.nbytes = out.nbytes = sizeof(float) * n;
		ASSERT_EQ(npr_ref_unary_f32(&p, 1.0f, x, e, n), 0);
		ASSERT_EQ(npr_ref_unary(&node, &in, &out), 0);
		ASSERT_EQ(memcmp(y, e, sizeof(float) * n), 0);
	}
	free(x); free(y); free(e);
}

/*
 * npr_convert()'s typed loops (F16C where the CPU has it) against the
 * per-element conversions: every f16 to f32, and to f16 the f32 values
 * around every f16 (each one, one ulp either side, the midpoints to the
 * next, which round to even), past the largest and below the smallest
 * subnormal, infinities and NaNs, then pseudo-random bit patterns.
 * Bits must agree; a NaN must stay a NaN.
 */
TEST(convert_f16_loops_match_scalar_conversion)
{
	size_t n = 0, cap = 65536 * 6 + (1 << 20), i;
	uint16_t *h = malloc(sizeof(*h) * 65536), *h2 = malloc(sizeof(*h2) * cap);
	float *f = malloc(sizeof(*f) * 65536), *g = malloc(sizeof(*g) * cap);
	unsigned int seed = 7;

	ASSERT_TRUE(h && h2 && f && g);
	for (i = 0; i < 65536; i++)
		h[i] = (uint16_t)i;
	ASSERT_EQ(npr_convert(f, NPR_ELEM_F32, h, NPR_ELEM_F16, 65536), 0);
	for (i = 0; i < 65536; i++) {
		float e = npr_f16_to_f32(h[i]);

		if (isnan(e)) {
			ASSERT_TRUE(isnan(f[i]));
			continue;
		}
		if (memcmp(&e, &f[i], 4))
			TH_LOG("f16 %04zx: %a against %a", i, f[i], e);
		ASSERT_EQ(memcmp(&e, &f[i], 4), 0);
	}
	for (i = 0; i < 65536; i++) {
		float v = npr_f16_to_f32((uint16_t)i), next;

		if (isnan(v))
			continue;
		next = npr_f16_to_f32((uint16_t)(i + 1));
		g[n++] = v;
		g[n++] = nextafterf(v, INFINITY);
		g[n++] = nextafterf(v, -INFINITY);
		if (!isnan(next) && (i & 0x7fff) != 0x7fff && (i & 0x7fff) != 0x7c00)
			g[n++] = v + (next - v) / 2;
	}
	g[n++] = 65520.0f;
	g[n++] = 1e-8f;
	g[n++] = -3e-8f;
	g[n++] = NAN;
	g[n++] = -INFINITY;
	while (n < cap) {
		uint32_t b;

		seed = seed * 1103515245u + 12345u;
		b = seed ^ (seed << 13) ^ ((uint32_t)n << 7);
		memcpy(&g[n++], &b, 4);
	}
	ASSERT_EQ(npr_convert(h2, NPR_ELEM_F16, g, NPR_ELEM_F32, n), 0);
	for (i = 0; i < n; i++) {
		uint16_t e = npr_f32_to_f16(g[i]);

		if (isnan(g[i])) {
			ASSERT_TRUE(isnan(npr_f16_to_f32(h2[i])));
			continue;
		}
		if (e != h2[i])
			TH_LOG("f32 %a: %04x against %04x", g[i], h2[i], e);
		ASSERT_EQ(e, h2[i]);
	}
	free(h); free(h2); free(f); free(g);
}

/*
 * The kernel tables (ref/kernels/<group>.c) against the op registry:
 * every entry names exactly one op definition, and every definition but
 * Parameter, Const and Result has a kernel: the 162 that had an eval in
 * the definition before the kernels moved out of it, the two ops of
 * the fusion pass (lib/ops/fused.c) and the eight low-precision ops
 * (lib/ops/quant.h).
 */
TEST(every_op_definition_has_exactly_one_kernel)
{
	const struct npr_op_def *d;
	int i, with = 0;

	ASSERT_EQ(npr_kernel_check(), 172);
	for (i = 0; (d = npr_op_get(i)); i++) {
		bool io = d->flags & (NPR_OP_SOURCE | NPR_OP_SINK);

		if (io != !npr_kernel_find(d))
			TH_LOG("%s-%u..%u", d->type, d->vmin, d->vmax);
		ASSERT_EQ(io, !npr_kernel_find(d));
		with += !io;
	}
	ASSERT_EQ(with, 172);
	ASSERT_NULL(npr_kernel_find(NULL));
	ASSERT_TRUE(npr_backend_evaluator() == npr_kernel_find);
	ASSERT_TRUE(npr_kernel_find(npr_op_find("MaxPool", 8)) ==
		    npr_ref_pool);
	ASSERT_TRUE(npr_kernel_find(npr_op_find("Convolution", 1)) ==
		    npr_ref_conv);
}

/*
 * Constant folding computes with the evaluator compile is given: with the
 * backend registry's, an Add of two Consts becomes a constant and its node
 * dead; with none, nothing is folded and the node stays to run.
 */
#define PORT_4 "<port id=\"%d\" precision=\"FP32\"><dim>4</dim></port>"

TEST(folding_uses_the_evaluator_compile_is_given)
{
	static const float w[8] = { 1, 2, 3, 4, 10, 20, 30, 40 };
	static const char *const layer[] = {
		"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"4\" element_type=\"f32\"/><output>" PORT_4 "</output></layer>",
		"<layer id=\"1\" name=\"a\" type=\"Const\" version=\"opset1\"><data element_type=\"f32\" shape=\"4\" offset=\"0\" size=\"16\"/><output>" PORT_4 "</output></layer>",
		"<layer id=\"2\" name=\"b\" type=\"Const\" version=\"opset1\"><data element_type=\"f32\" shape=\"4\" offset=\"16\" size=\"16\"/><output>" PORT_4 "</output></layer>",
		"<layer id=\"3\" name=\"ab\" type=\"Add\" version=\"opset1\"><input>" PORT_4 PORT_4 "</input><output>" PORT_4 "</output></layer>",
		"<layer id=\"4\" name=\"y\" type=\"Add\" version=\"opset1\"><input>" PORT_4 PORT_4 "</input><output>" PORT_4 "</output></layer>",
		"<layer id=\"5\" name=\"r\" type=\"Result\" version=\"opset1\"><input>" PORT_4 "</input></layer>",
	};
	static const char edges[] =
		"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"3\" to-port=\"0\"/>"
		"<edge from-layer=\"2\" from-port=\"0\" to-layer=\"3\" to-port=\"1\"/>"
		"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"4\" to-port=\"0\"/>"
		"<edge from-layer=\"3\" from-port=\"2\" to-layer=\"4\" to-port=\"1\"/>"
		"<edge from-layer=\"4\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>";
	struct npr_weights *blob = NULL;
	struct npr_graph *mg = NULL, *g;
	char xml[4096];
	int i, n, ab = -1, pass;

	n = snprintf(xml, sizeof(xml),
		     "<?xml version=\"1.0\"?><net name=\"f\" version=\"11\"><layers>");
	for (i = 0; i < 6; i++)
		n += snprintf(xml + n, sizeof(xml) - n, layer[i], 0, 1, 2);
	n += snprintf(xml + n, sizeof(xml) - n, "</layers><edges>%s</edges></net>",
		      edges);
	ASSERT_LT(n, (int)sizeof(xml));
	ASSERT_EQ(npr_ir_weights_from_memory(w, sizeof(w), &blob), 0);
	ASSERT_EQ(npr_ir_parse(xml, strlen(xml), blob, &mg), 0);
	npr_weights_put(blob);
	for (pass = 0; pass < 2; pass++) {
		const struct npr_value *v;

		g = NULL;
		ASSERT_EQ(npr_compile_graph(mg, NULL, pass ? NULL :
					    npr_backend_evaluator(), &g), 0);
		for (i = 0; i < g->nnodes; i++)
			if (!strcmp(g->nodes[i].name, "ab"))
				ab = i;
		ASSERT_GE(ab, 0);
		v = &g->vals[g->nodes[ab].out[0]];
		ASSERT_EQ(g->nodes[ab].dead, !pass);
		if (!pass) {
			ASSERT_NONNULL(v->data);
			for (i = 0; i < 4; i++)
				ASSERT_EQ(((const float *)v->data)[i],
					  w[i] + w[4 + i]);
		} else {
			ASSERT_NULL(v->data);
		}
		npr_graph_free(g);
	}
	npr_graph_free(mg);
}

TEST_HARNESS_MAIN
