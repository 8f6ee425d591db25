// SPDX-License-Identifier: MIT
/*
 * AVX2+FMA SGEMM micro-kernel: a 6 x 16 tile of C in 12 ymm registers
 * (two 8-float loads of B, six broadcasts of A, twelve FMAs per k).
 * Built with -mavx2 -mfma only; called only after CPUID says so.
 */
#include <immintrin.h>

#include "ref/gemm.h"

#define MR	6
#define NR	16

static inline __m256 epi_vec(const struct npr_gemm_epi *e, __m256 v, int i,
			     int j, int n)
{
	if (e->bias)
		v = _mm256_add_ps(v, _mm256_set1_ps(e->bias[i]));
	if (e->res) {
		float t[8] = { 0 };
		int q;

		for (q = 0; q < n && q < 8; q++)
			t[q] = e->res[i * e->ldr + j + q];
		v = _mm256_add_ps(v, _mm256_loadu_ps(t));
	}
	if (e->act == NPR_ACT_RELU)
		v = _mm256_max_ps(v, _mm256_setzero_ps());
	else if (e->act == NPR_ACT_CLAMP)
		v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(e->lo)),
				  _mm256_set1_ps(e->hi));
	return v;
}

static void kern(int64_t kc, const float *a, const float *b, float *c,
		 int64_t ldc, int m, int n, bool acc, bool last,
		 const struct npr_gemm_epi *e)
{
	__m256 r[MR][2];
	__m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
	__m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
	__m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
	__m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
	__m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
	__m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
	int64_t k;
	int i, h;

	for (k = 0; k < kc; k++, a += MR, b += NR) {
		__m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
		__m256 av;

		av = _mm256_broadcast_ss(a + 0);
		c00 = _mm256_fmadd_ps(av, b0, c00);
		c01 = _mm256_fmadd_ps(av, b1, c01);
		av = _mm256_broadcast_ss(a + 1);
		c10 = _mm256_fmadd_ps(av, b0, c10);
		c11 = _mm256_fmadd_ps(av, b1, c11);
		av = _mm256_broadcast_ss(a + 2);
		c20 = _mm256_fmadd_ps(av, b0, c20);
		c21 = _mm256_fmadd_ps(av, b1, c21);
		av = _mm256_broadcast_ss(a + 3);
		c30 = _mm256_fmadd_ps(av, b0, c30);
		c31 = _mm256_fmadd_ps(av, b1, c31);
		av = _mm256_broadcast_ss(a + 4);
		c40 = _mm256_fmadd_ps(av, b0, c40);
		c41 = _mm256_fmadd_ps(av, b1, c41);
		av = _mm256_broadcast_ss(a + 5);
		c50 = _mm256_fmadd_ps(av, b0, c50);
		c51 = _mm256_fmadd_ps(av, b1, c51);
	}
	r[0][0] = c00; r[0][1] = c01; r[1][0] = c10; r[1][1] = c11;
	r[2][0] = c20; r[2][1] = c21; r[3][0] = c30; r[3][1] = c31;
	r[4][0] = c40; r[4][1] = c41; r[5][0] = c50; r[5][1] = c51;
	for (i = 0; i < m; i++) {
		float *cr = c + i * ldc;

		for (h = 0; h < 2; h++) {
			int w = n - 8 * h;
			__m256 v = r[i][h];

			if (w <= 0)
				break;
			if (w >= 8) {
				if (acc)
					v = _mm256_add_ps(v, _mm256_loadu_ps(cr + 8 * h));
				if (last && e)
					v = epi_vec(e, v, i, 8 * h, 8);
				_mm256_storeu_ps(cr + 8 * h, v);
			} else {
				float t[8];
				int q;

				_mm256_storeu_ps(t, v);
				for (q = 0; q < w; q++) {
					float x = t[q] + (acc ? cr[8 * h + q] : 0.0f);

					cr[8 * h + q] = last ? epi_apply(e, x, i, 8 * h + q) : x;
				}
			}
		}
	}
}

const struct npr_gemm_kern npr_gemm_kern_avx2 = {
	.name = "avx2", .mr = MR, .nr = NR, .fn = kern,
};
