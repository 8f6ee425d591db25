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

#ifdef __AVX512F__
	/*
	 * Four rows of B at a time against up to four rows of A: up to 16
	 * independent sums (one per dot product was bound by the FMA
	 * latency, 80 chained FMAs per output of a 1280-deep layer).  The
	 * rows of A go against one group of B rows before the next group,
	 * so B (the weight) is read from memory once at any M, and the
	 * next group's rows are prefetched as this one is read.
	 */
	for (n = 0; n < N; n += 4) {
		int64_t nn = N - n < 4 ? N - n : 4, j;
		const float *b[4], *pf = B + (n + 4) * K;
		int64_t npf = N - n - 4 < 4 ? (N - n - 4) * K : 4 * K;

		for (j = 0; j < 4; j++)
			b[j] = B + (n + (j < nn ? j : 0)) * K;
		for (m0 = 0; m0 < M; m0 += 4) {
			int64_t mm = M - m0 < 4 ? M - m0 : 4;
			__m512 acc[4][4];

			for (i = 0; i < 4; i++)
				for (j = 0; j < 4; j++)
					acc[i][j] = _mm512_setzero_ps();
			for (k = 0; k < K; k += 16) {
				__mmask16 mk = K - k >= 16 ? 0xffff :
					       (__mmask16)((1u << (K - k)) - 1);
				__m512 b0 = _mm512_maskz_loadu_ps(mk, b[0] + k);
				__m512 b1 = _mm512_maskz_loadu_ps(mk, b[1] + k);
				__m512 b2 = _mm512_maskz_loadu_ps(mk, b[2] + k);
				__m512 b3 = _mm512_maskz_loadu_ps(mk, b[3] + k);

				/* the next group: four lines per step */
				for (j = 0; m0 == 0 && j < 64; j += 16)
					if (4 * k + j < npf)
						_mm_prefetch((const char *)(pf +
							4 * k + j), _MM_HINT_T0);
				for (i = 0; i < mm; i++) {
					__m512 a = _mm512_maskz_loadu_ps(mk,
						A + (m0 + i) * K + k);

					acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
					acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
					acc[i][2] = _mm512_fmadd_ps(a, b2, acc[i][2]);
					acc[i][3] = _mm512_fmadd_ps(a, b3, acc[i][3]);
				}
			}
			for (i = 0; i < mm; i++)
				for (j = 0; j < nn; j++)
					C[(m0 + i) * ldc + n + j] =
						_mm512_reduce_add_ps(acc[i][j]);
		}
	}
	return;
#endif
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
 * y[o] = the sum (or mean) of x[o * inner .. + inner) for o < outer, in
 * double: eight partial sums (element k into k % 8), then the tail, then
 * the partials in order, the same additions in the same order as the
 * portable loop of reduce_inner() (ref/nn.c), so both builds give the
 * same bits.  On AVX-512 the eight partials are one vector.
 */
void VEC(sum_rows)(const float *x, int64_t outer, int64_t inner, float *y,
		   bool mean)
{
	int64_t o, k;
	int l;

	for (o = 0; o < outer; o++) {
		const float *r = x + o * inner;
		double part[8] = { 0 }, sum = 0;

		k = 0;
#ifdef __AVX512F__
		{
			__m512d acc = _mm512_setzero_pd();

			for (; k + 8 <= inner; k += 8)
				acc = _mm512_add_pd(acc, _mm512_cvtps_pd(
					_mm256_loadu_ps(r + k)));
			_mm512_storeu_pd(part, acc);
		}
#endif
		for (; k + 8 <= inner; k += 8)
			for (l = 0; l < 8; l++)
				part[l] += r[k + l];
		for (; k < inner; k++)
			sum += r[k];
		for (l = 0; l < 8; l++)
			sum += part[l];
		y[o] = (float)(mean ? sum / inner : sum);
	}
}

/*
 * One output row of a 2-D max or average pool.  @rows: the @nr input rows
 * the window covers for this output row (already clipped), @W wide;
 * @o0[k], @o1[k]: for window column k, the output pixels whose tap is
 * inside the input.  acc gets the max (from -inf) or the sum; the caller
 * divides.
 */
#define POOL_TMP	1024
void VEC(pool_row)(bool maxp, const float *const *rows, int64_t nr,
		   int64_t W, int64_t kw, int64_t sw, int64_t dw, int64_t pw,
		   const int64_t *o0, const int64_t *o1, int64_t OW,
		   float *restrict acc)
{
	int64_t r, k, ox;

#ifdef __AVX512F__
	/*
	 * Separable, stride 1 or 2: the window rows are reduced into one row
	 * first (a long vector loop), stored with pw identity columns on the
	 * left and enough on the right that the window columns need no
	 * masks; then each window column is one load per 16 outputs (at
	 * stride 2 two loads and a permute keep the even columns).  A tap
	 * outside the input reads the identity, as if it were left out.
	 */
	if ((sw == 1 || sw == 2) && nr > 0 &&
	    pw + W + 64 <= POOL_TMP &&
	    (OW + 16) * sw + (kw - 1) * dw + 32 <= POOL_TMP) {
		const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18,
						    16, 14, 12, 10, 8, 6, 4, 2, 0);
		const float idv = maxp ? -INFINITY : 0.0f;
		const __m512 id = _mm512_set1_ps(idv);
		float tmp[POOL_TMP + 16] __attribute__((aligned(64)));
		int64_t c, end = (OW + 16) * sw + (kw - 1) * dw + 32, ox0;

		for (c = 0; c < pw; c++)
			tmp[c] = idv;
		/* the next output row's new input rows, ahead of time */
		for (c = 0; c < W; c += 16)
			for (r = nr - sw; r < nr; r++)
				if (r >= 0)
					_mm_prefetch((const char *)(rows[r] +
						     sw * W + c), _MM_HINT_T0);
		for (c = 0; c < W; c += 16) {
			__mmask16 m = W - c >= 16 ? 0xffff :
				      (__mmask16)((1u << (W - c)) - 1);
			__m512 v = _mm512_mask_loadu_ps(id, m, rows[0] + c);

			for (r = 1; r < nr; r++) {
				__m512 u = _mm512_mask_loadu_ps(id, m, rows[r] + c);

				v = maxp ? _mm512_max_ps(u, v) : _mm512_add_ps(v, u);
			}
			_mm512_mask_storeu_ps(tmp + pw + c, m, v);
		}
		for (c = pw + W; c < end; c += 16)
			_mm512_storeu_ps(tmp + c, id);
		for (ox0 = 0; ox0 < OW; ox0 += 16) {
			__m512 a = id;

			for (k = 0; k < kw; k++) {
				const float *xs = tmp + ox0 * sw + k * dw;
				__m512 v = _mm512_loadu_ps(xs);

				if (sw == 2)
					v = _mm512_permutex2var_ps(v, ie,
						_mm512_loadu_ps(xs + 16));
				a = maxp ? _mm512_max_ps(v, a) : _mm512_add_ps(a, v);
			}
			_mm512_mask_storeu_ps(acc + ox0, OW - ox0 >= 16 ?
					      0xffff : (__mmask16)((1u <<
					      (OW - ox0)) - 1), a);
		}
		return;
	}
#endif
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
