/* SPDX-License-Identifier: MIT */
/*
 * Vector loops written once and compiled twice, like conv_dw.h: in nn.c
 * for any CPU and in vec_avx512.c with -mavx512f -O3.  Define VEC(name)
 * to give the functions their build's names first.
 *
 * MatMul of a [M, K] activation by a [K, N] or [N, K] weight, the fully
 * connected layer at the end of a classifier: memory-bound on the
 * weight, so one pass over it, M rows at a time (up to 4).
 */

/* C[M, N] = A[M, K] * B[N, K]^T (C's row stride @ldc): up to 4 rows of A
 * against each row of B */
void VEC(matmul_nt)(int64_t M, int64_t N, int64_t K, const float *A,
		    const float *B, float *C, int64_t ldc)
{
	int64_t m0, n, k, l, i;

	for (m0 = 0; m0 < M; m0 += 4) {
		int64_t mm = M - m0 < 4 ? M - m0 : 4;

		for (n = 0; n < N; n++) {
			const float *b = B + n * K;
			float acc[4][16] = { { 0 } };
			float tail[4] = { 0 };

			for (k = 0; k + 16 <= K; k += 16)
				for (i = 0; i < mm; i++)
					for (l = 0; l < 16; l++)
						acc[i][l] += A[(m0 + i) * K + k + l] *
							     b[k + l];
			for (i = 0; i < mm; i++) {
				float s = 0;
				int64_t q;

				for (q = k; q < K; q++)
					tail[i] += A[(m0 + i) * K + q] * b[q];
				for (l = 0; l < 16; l++)
					s += acc[i][l];
				C[(m0 + i) * ldc + n] = s + tail[i];
			}
		}
	}
}

/* C[M, N] = A[M, K] * B[K, N]: rows of B scaled and added */
void VEC(matmul_nn)(int64_t M, int64_t N, int64_t K, const float *A,
		    const float *B, float *C)
{
	int64_t m, k, j;

	for (m = 0; m < M; m++) {
		float *restrict c = C + m * N;

		memset(c, 0, sizeof(float) * N);
		for (k = 0; k < K; k++) {
			const float *restrict b = B + k * N;
			float a = A[m * K + k];

			for (j = 0; j < N; j++)
				c[j] += a * b[j];
		}
	}
}

/*
 * One output row of a 2-D max or average pool.  @rows: the @nr input rows
 * the window covers for this output row (already clipped); @o0[k], @o1[k]:
 * for window column k, the output pixels whose tap is inside the input.
 * acc gets the max (from -inf) or the sum; the caller divides.
 */
void VEC(pool_row)(bool maxp, const float *const *rows, int64_t nr,
		   int64_t kw, int64_t sw, int64_t dw, int64_t pw,
		   const int64_t *o0, const int64_t *o1, int64_t OW,
		   float *restrict acc)
{
	int64_t r, k, ox;

	for (ox = 0; ox < OW; ox++)
		acc[ox] = maxp ? -INFINITY : 0.0f;
	for (r = 0; r < nr; r++)
		for (k = 0; k < kw; k++) {
			const float *restrict xs = rows[r] + k * dw - pw;
			int64_t a = o0[k], b = o1[k];

			if (maxp && sw == 2)
				for (ox = a; ox < b; ox++)
					acc[ox] = xs[2 * ox] > acc[ox] ?
						  xs[2 * ox] : acc[ox];
			else if (maxp && sw == 1)
				for (ox = a; ox < b; ox++)
					acc[ox] = xs[ox] > acc[ox] ? xs[ox] : acc[ox];
			else if (maxp)
				for (ox = a; ox < b; ox++)
					acc[ox] = xs[ox * sw] > acc[ox] ?
						  xs[ox * sw] : acc[ox];
			else if (sw == 2)
				for (ox = a; ox < b; ox++)
					acc[ox] += xs[2 * ox];
			else
				for (ox = a; ox < b; ox++)
					acc[ox] += xs[ox * sw];
		}
}
