/* SPDX-License-Identifier: MIT */
/*
 * Vector loops written once and compiled twice, like ref/conv/conv_dw.h:
 * in ref/kernels/nn.c for any CPU and in ref/arch/x86/vec_avx512.c with
 * -mavx512f -O3.  Define VEC(name) to give the functions their build's
 * names first: npr_<name>_generic for the portable build, npr_<name>_avx512
 * for the one that runs only where CPUID reports AVX-512F (its #ifdef
 * __AVX512F__ parts compiled in).  Each function is documented once
 * below, under its _generic name; the _avx512 build takes the same
 * arguments.
 *
 * MatMul of a [M, K] activation by a [K, N] or [N, K] weight, the fully
 * connected layer at the end of a classifier: memory-bound on the
 * weight, so one pass over it, M rows at a time (up to 4).
 */

#ifdef __AVX512F__
/*
 * Rows 0 .. mm of C = A * B^T against the four rows @b of B (the first
 * @nn of them real), prefetching @npf floats at @pf on the way (four
 * lines per 16 columns).  @mm is a constant at every call, so the
 * 4 x mm sums stay in registers (as an array gcc kept them on the stack
 * and stored them on every step: a third of the speed at batch 4).
 */
static inline __attribute__((always_inline)) void
VEC(fc_tile)(int64_t mm, int64_t nn, int64_t K, const float *A,
	     const float *const *b, float *C, int64_t ldc, const float *pf,
	     int64_t npf)
{
	const __m512 z = _mm512_setzero_ps();
	__m512 c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z;
	__m512 c13 = z, c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z;
	__m512 c32 = z, c33 = z;
	float r[4][4];
	int64_t i, j, k;

#define FC_ROW(i, a0, a1, a2, a3)					\
	do {								\
		__m512 a_ = _mm512_maskz_loadu_ps(mk, A + (i) * K + k);	\
									\
		a0 = _mm512_fmadd_ps(a_, b0, a0);			\
		a1 = _mm512_fmadd_ps(a_, b1, a1);			\
		a2 = _mm512_fmadd_ps(a_, b2, a2);			\
		a3 = _mm512_fmadd_ps(a_, b3, a3);			\
	} while (0)
	for (k = 0; k < K; k += 16) {
		__mmask16 mk = K - k >= 16 ? 0xffff :
			       (__mmask16)((1u << (K - k)) - 1);
		__m512 b0 = _mm512_maskz_loadu_ps(mk, b[0] + k);
		__m512 b1 = _mm512_maskz_loadu_ps(mk, b[1] + k);
		__m512 b2 = _mm512_maskz_loadu_ps(mk, b[2] + k);
		__m512 b3 = _mm512_maskz_loadu_ps(mk, b[3] + k);

		for (j = 0; j < 64; j += 16)
			if (4 * k + j < npf)
				_mm_prefetch((const char *)(pf + 4 * k + j),
					     _MM_HINT_T0);
		FC_ROW(0, c00, c01, c02, c03);
		if (mm > 1)
			FC_ROW(1, c10, c11, c12, c13);
		if (mm > 2)
			FC_ROW(2, c20, c21, c22, c23);
		if (mm > 3)
			FC_ROW(3, c30, c31, c32, c33);
	}
#undef FC_ROW
	r[0][0] = _mm512_reduce_add_ps(c00);
	r[0][1] = _mm512_reduce_add_ps(c01);
	r[0][2] = _mm512_reduce_add_ps(c02);
	r[0][3] = _mm512_reduce_add_ps(c03);
	r[1][0] = _mm512_reduce_add_ps(c10);
	r[1][1] = _mm512_reduce_add_ps(c11);
	r[1][2] = _mm512_reduce_add_ps(c12);
	r[1][3] = _mm512_reduce_add_ps(c13);
	r[2][0] = _mm512_reduce_add_ps(c20);
	r[2][1] = _mm512_reduce_add_ps(c21);
	r[2][2] = _mm512_reduce_add_ps(c22);
	r[2][3] = _mm512_reduce_add_ps(c23);
	r[3][0] = _mm512_reduce_add_ps(c30);
	r[3][1] = _mm512_reduce_add_ps(c31);
	r[3][2] = _mm512_reduce_add_ps(c32);
	r[3][3] = _mm512_reduce_add_ps(c33);
	for (i = 0; i < mm; i++)
		for (j = 0; j < nn; j++)
			C[i * ldc + j] = r[i][j];
}
#endif

/**
 * npr_matmul_nt_generic() - C[M, N] = A[M, K] * B[N, K]^T
 * @M: rows of A and C.
 * @N: rows of B, columns of C.
 * @K: the depth.
 * @A: the activation, row-major.
 * @B: the weight, row-major, one row per output column.
 * @C: Out. The result, row stride @ldc.
 * @ldc: C's row stride.
 *
 * Up to 4 rows of A against each row of B.  Also npr_matmul_nt_avx512()
 * (see the top of this file): four rows of B at a time, B read once at
 * any M, its sums in another order (the last bits may differ).
 */
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
			const float *a = A + m0 * K;
			float *c = C + m0 * ldc + n;
			int64_t np = m0 ? 0 : npf;

			switch (M - m0 < 4 ? M - m0 : 4) {
			case 1:
				VEC(fc_tile)(1, nn, K, a, b, c, ldc, pf, np);
				break;
			case 2:
				VEC(fc_tile)(2, nn, K, a, b, c, ldc, pf, np);
				break;
			case 3:
				VEC(fc_tile)(3, nn, K, a, b, c, ldc, pf, np);
				break;
			default:
				VEC(fc_tile)(4, nn, K, a, b, c, ldc, pf, np);
				break;
			}
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

/**
 * npr_matmul_nn_generic() - C[M, N] = A[M, K] * B[K, N]
 * @M: rows of A and C.
 * @N: columns of B and C.
 * @K: the depth.
 * @A: the activation, row-major.
 * @B: the weight, row-major.
 * @C: Out. The result, row-major.
 *
 * Rows of B scaled and added.  Also npr_matmul_nn_avx512() (see the top
 * of this file), which for up to 16 rows keeps 4 rows by 64 columns of C
 * in registers over the whole depth.
 */
#ifdef __AVX512F__
/*
 * Rows m0 .. m0 + mm of C, columns n0 .. n0 + 64 (the first @nn real), of
 * C = A * B: 4 x mm sums held in registers over all of K, so that C is
 * written once and B read once per column block.
 */
static inline __attribute__((always_inline)) void
VEC(nn_tile)(int64_t mm, int64_t nn, int64_t N, int64_t K, const float *A,
	     const float *B, float *C)
{
	const __m512 z = _mm512_setzero_ps();
	__m512 c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z;
	__m512 c13 = z, c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z;
	__m512 c32 = z, c33 = z;
	__mmask16 m0 = nn >= 16 ? 0xffff : (__mmask16)((1u << nn) - 1);
	__mmask16 m1 = nn >= 32 ? 0xffff : nn <= 16 ? 0 :
		       (__mmask16)((1u << (nn - 16)) - 1);
	__mmask16 m2 = nn >= 48 ? 0xffff : nn <= 32 ? 0 :
		       (__mmask16)((1u << (nn - 32)) - 1);
	__mmask16 m3 = nn >= 64 ? 0xffff : nn <= 48 ? 0 :
		       (__mmask16)((1u << (nn - 48)) - 1);
	int64_t k;

#define NN_ROW(i, a0, a1, a2, a3)					\
	do {								\
		__m512 a_ = _mm512_set1_ps(A[(i) * K + k]);		\
									\
		a0 = _mm512_fmadd_ps(a_, b0, a0);			\
		a1 = _mm512_fmadd_ps(a_, b1, a1);			\
		a2 = _mm512_fmadd_ps(a_, b2, a2);			\
		a3 = _mm512_fmadd_ps(a_, b3, a3);			\
	} while (0)
	for (k = 0; k < K; k++) {
		const float *b = B + k * N;
		__m512 b0 = _mm512_maskz_loadu_ps(m0, b);
		__m512 b1 = _mm512_maskz_loadu_ps(m1, b + 16);
		__m512 b2 = _mm512_maskz_loadu_ps(m2, b + 32);
		__m512 b3 = _mm512_maskz_loadu_ps(m3, b + 48);

		NN_ROW(0, c00, c01, c02, c03);
		if (mm > 1)
			NN_ROW(1, c10, c11, c12, c13);
		if (mm > 2)
			NN_ROW(2, c20, c21, c22, c23);
		if (mm > 3)
			NN_ROW(3, c30, c31, c32, c33);
	}
#undef NN_ROW
#define NN_STORE(i, a0, a1, a2, a3)					\
	do {								\
		_mm512_mask_storeu_ps(C + (i) * N, m0, a0);		\
		_mm512_mask_storeu_ps(C + (i) * N + 16, m1, a1);	\
		_mm512_mask_storeu_ps(C + (i) * N + 32, m2, a2);	\
		_mm512_mask_storeu_ps(C + (i) * N + 48, m3, a3);	\
	} while (0)
	NN_STORE(0, c00, c01, c02, c03);
	if (mm > 1)
		NN_STORE(1, c10, c11, c12, c13);
	if (mm > 2)
		NN_STORE(2, c20, c21, c22, c23);
	if (mm > 3)
		NN_STORE(3, c30, c31, c32, c33);
#undef NN_STORE
}
#endif

void VEC(matmul_nn)(int64_t M, int64_t N, int64_t K, const float *A,
		    const float *B, float *C)
{
	int64_t m, k, j;

#ifdef __AVX512F__
	/*
	 * Up to four rows at a time (a token's row, a short prompt's) by
	 * blocks of 64 columns, the sums in registers over the whole depth:
	 * the row-by-row loop below loaded and stored C at every k.
	 */
	if (M <= 16) {
		int64_t n;

		for (m = 0; m < M; m += 4) {
			int64_t mm = M - m < 4 ? M - m : 4;

			for (n = 0; n < N; n += 64) {
				int64_t nn = N - n < 64 ? N - n : 64;
				const float *a = A + m * K;
				float *c = C + m * N + n;

				switch (mm) {
				case 1:
					VEC(nn_tile)(1, nn, N, K, a, B + n, c);
					break;
				case 2:
					VEC(nn_tile)(2, nn, N, K, a, B + n, c);
					break;
				case 3:
					VEC(nn_tile)(3, nn, N, K, a, B + n, c);
					break;
				default:
					VEC(nn_tile)(4, nn, N, K, a, B + n, c);
					break;
				}
			}
		}
		return;
	}
#endif

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
 * The sum of @n floats at @r less @m each (squared if @sq), in double:
 * eight partial sums (element k into k % 8; one vector of them in the
 * AVX-512 build), then the tail, then the partials in order.
 */
static inline double VEC(sum8)(const float *r, int64_t n, double m, bool sq)
{
	double part[8] = { 0 }, sum = 0;
	int64_t k = 0;
	int l;

#ifdef __AVX512F__
	{
		__m512d acc = _mm512_setzero_pd(), vm = _mm512_set1_pd(m);

		for (; k + 8 <= n; k += 8) {
			__m512d d = _mm512_sub_pd(_mm512_cvtps_pd(
					_mm256_loadu_ps(r + k)), vm);

			acc = sq ? _mm512_add_pd(acc, _mm512_mul_pd(d, d)) :
				   _mm512_add_pd(acc, d);
		}
		_mm512_storeu_pd(part, acc);
	}
#endif
	for (; k + 8 <= n; k += 8)
		for (l = 0; l < 8; l++) {
			double d = r[k + l] - m;

			part[l] += sq ? d * d : d;
		}
	for (; k < n; k++) {
		double d = r[k] - m;

		sum += sq ? d * d : d;
	}
	for (l = 0; l < 8; l++)
		sum += part[l];
	return sum;
}

/**
 * npr_sum_rows_generic() - the sum or mean of each row
 * @x: the input, @outer rows of @inner floats.
 * @outer: the rows.
 * @inner: the row length.
 * @y: Out. @outer values.
 * @mean: divide each sum by @inner.
 *
 * y[o] = the sum (or mean) of x[o * inner .. + inner) for o < outer, in
 * double: eight partial sums (element k into k % 8), then the tail, then
 * the partials in order, the same additions in the same order as the
 * portable loop of reduce_inner() (ref/kernels/nn.c), so both builds give
 * the same bits.  In npr_sum_rows_avx512() (see the top of this file) the
 * eight partials are one vector.
 */
void VEC(sum_rows)(const float *x, int64_t outer, int64_t inner, float *y,
		   bool mean)
{
	int64_t o;

	for (o = 0; o < outer; o++) {
		double sum = VEC(sum8)(x + o * inner, inner, 0.0, false);

		y[o] = (float)(mean ? sum / inner : sum);
	}
}

/**
 * npr_mvn_rows_generic() - mean-variance normalization of each row
 * @x: the input, @outer rows of @inner floats.
 * @y: Out. The same shape (may be @x).
 * @outer: the rows.
 * @inner: the row length, > 0.
 * @nv: normalize the variance too (else only subtract the mean).
 * @inside: eps inside the square root (else added to it).
 * @eps: MVN's eps.
 *
 * Mean and variance in double, each as eight partial sums then the tail
 * (the order of npr_sum_rows_generic()), so both builds give the same
 * bits; the output is (x - mean) * factor in double, rounded to float.
 * The sums used to be one chain of dependent additions: 0.45 ms for a
 * 32 x 128 x 64 tensor, three times the convolution after it.
 */
void VEC(mvn_rows)(const float *x, float *y, int64_t outer, int64_t inner,
		   bool nv, bool inside, double eps)
{
	int64_t o, k;

	for (o = 0; o < outer; o++) {
		const float *r = x + o * inner;
		float *w = y + o * inner;
		double m = VEC(sum8)(r, inner, 0.0, false) / inner, f = 1.0;

		if (nv) {
			double q = VEC(sum8)(r, inner, m, true) / inner;

			f = inside ? 1.0 / sqrt(q + eps) : 1.0 / (sqrt(q) + eps);
		}
		for (k = 0; k < inner; k++)
			w[k] = (float)((r[k] - m) * f);
	}
}

/**
 * npr_dot_rows_generic() - @q against each of @n rows of @k
 * @q: the vector, @E floats.
 * @k: @n rows of @E floats, one after the other.
 * @E: the length.
 * @n: the rows.
 * @out: Out. @n dot products.
 *
 * Attention's scores of a query against a block of keys
 * (ref/kernels/fused.c): eight partial sums, then the tail.  Also
 * npr_dot_rows_avx512() (see the top of this file): sixteen partial sums
 * in a vector, so the last bits differ.
 */
void VEC(dot_rows)(const float *q, const float *k, int64_t E, int64_t n,
		   float *out)
{
	int64_t j, e;

	for (j = 0; j < n; j++) {
		const float *kr = k + j * E;
		float a[8] = { 0 }, sum = 0;
		int l;

		e = 0;
#ifdef __AVX512F__
		{
			__m512 acc = _mm512_setzero_ps();

			for (; e + 16 <= E; e += 16)
				acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + e),
						      _mm512_loadu_ps(kr + e),
						      acc);
			sum = _mm512_reduce_add_ps(acc);
		}
#endif
		for (; e + 8 <= E; e += 8)
			for (l = 0; l < 8; l++)
				a[l] += q[e + l] * kr[e + l];
		for (; e < E; e++)
			sum += q[e] * kr[e];
		out[j] = sum + ((a[0] + a[4]) + (a[1] + a[5])) +
			 ((a[2] + a[6]) + (a[3] + a[7]));
	}
}

/**
 * npr_axpy_rows_generic() - @acc += the sum of @w[j] times row j of @v
 * @w: @n weights.
 * @v: @n rows of @Ev floats, one after the other.
 * @n: the rows.
 * @Ev: the row length.
 * @acc: In and out. @Ev floats.
 *
 * Attention's weighted sum of a block of values; also
 * npr_axpy_rows_avx512() (see the top of this file).
 */
void VEC(axpy_rows)(const float *w, const float *v, int64_t n, int64_t Ev,
		    float *acc)
{
	int64_t j, e;

	for (j = 0; j < n; j++) {
		const float *vr = v + j * Ev;
		float wj = w[j];

		for (e = 0; e < Ev; e++)
			acc[e] += wj * vr[e];
	}
}

/**
 * npr_gelu_erf_generic() - y = x / 2 * (1 + erf(x / sqrt 2))
 * @x: the input, @n floats.
 * @y: Out. @n floats; may be @x.
 * @n: the count.
 *
 * erf(z) as z P(z^2) / Q(z^2), P and Q of degree 5, fitted here to erf on
 * [0, 3.92] for the least largest error (1.6e-8; 4e-7 evaluated in f32,
 * a few units in the last place of values near 1), and +-1 beyond 3.92,
 * where erf rounds to 1 in f32.  No call and no branch, so the loop is
 * vectorized: also npr_gelu_erf_avx512() (see the top of this file),
 * whose contractions to FMA may change the last bits.  NaN stays NaN.
 */
void VEC(gelu_erf)(const float *x, float *y, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		float v = x[i], z = v * 0.70710678118654752f;
		float c = z > 3.92f ? 3.92f : z < -3.92f ? -3.92f : z;
		float t = c * c, p, q, e;

		p = ((((2.034681073e-06f * t + 2.874774437e-04f) * t +
		       3.868379686e-03f) * t + 5.306062858e-02f) * t +
		     1.927657036e-01f) * t + 1.128379022e+00f;
		q = ((((3.806998110e-05f * t + 1.188122061e-03f) * t +
		       1.517240194e-02f) * t + 1.150852359e-01f) * t +
		     5.041658233e-01f) * t + 1.0f;
		e = c * p / q;
		e = e > 1.0f ? 1.0f : e < -1.0f ? -1.0f : e;
		e = z >= 3.92f ? 1.0f : z <= -3.92f ? -1.0f : e;
		y[i] = 0.5f * v * (1.0f + e);
	}
}

/**
 * npr_prelu_row_generic() - PReLU in place over a row with one slope
 * @y: In and out. The row.
 * @n: its length.
 * @s: the slope.
 *
 * x < 0 ? x * s : x, the reference's expression (a -0.0 stays -0.0); in
 * npr_prelu_row_avx512() (see the top of this file) as a masked multiply.
 */
void VEC(prelu_row)(float *y, int64_t n, float s)
{
	int64_t k = 0;

#ifdef __AVX512F__
	{
		const __m512 vs = _mm512_set1_ps(s), vz = _mm512_setzero_ps();

		for (; k + 16 <= n; k += 16) {
			__m512 v = _mm512_loadu_ps(y + k);

			_mm512_storeu_ps(y + k, _mm512_mask_mul_ps(v,
				_mm512_cmp_ps_mask(v, vz, _CMP_LT_OQ), v, vs));
		}
	}
#endif
	for (; k < n; k++)
		y[k] = y[k] < 0 ? y[k] * s : y[k];
}

/**
 * npr_div_row_generic() - @n quotients by one divisor
 * @acc: the dividends.
 * @d: the divisor (IEEE division: the same bits in both builds).
 * @y: Out. acc[k] / d.
 * @n: the count.
 *
 * Also npr_div_row_avx512() (see the top of this file).
 */
void VEC(div_row)(const float *acc, float d, float *y, int64_t n)
{
	int64_t k = 0;

#ifdef __AVX512F__
	const __m512 vd = _mm512_set1_ps(d);

	for (; k + 16 <= n; k += 16)
		_mm512_storeu_ps(y + k, _mm512_div_ps(_mm512_loadu_ps(acc + k),
						      vd));
#endif
	for (; k < n; k++)
		y[k] = acc[k] / d;
}

#define POOL_TMP	1024

/**
 * npr_pool_row_generic() - one output row of a 2-D max or average pool
 * @maxp: max; false: sum.
 * @rows: the @nr input rows the window covers for this output row
 *        (already clipped), @W wide.
 * @nr: their count.
 * @W: the input width.
 * @kw: the window width.
 * @sw: the horizontal stride.
 * @dw: the horizontal dilation.
 * @pw: the padding on the left.
 * @o0: per window column k, the first output pixel whose tap is inside
 *      the input.
 * @o1: per window column k, the end of those pixels.
 * @OW: the output width.
 * @acc: Out. @OW values: the max (from -inf) or the sum; the caller
 *       divides.
 *
 * Also npr_pool_row_avx512() (see the top of this file), which reduces
 * the window rows into one first at stride 1 or 2 when the row fits its
 * buffer.
 */
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

/**
 * npr_pool2s2_plane_generic() - a whole plane of a 2x2 stride-2 MaxPool
 * or AvgPool whose windows all lie inside the input
 * @maxp: max; false: the mean of the four.
 * @x: the input plane, [H, W].
 * @H: its height.
 * @W: its width.
 * @y: Out. The output plane, [OH, OW].
 * @OH: its height, 2 * OH <= H.
 * @OW: its width, 2 * OW <= W.
 *
 * Only npr_pool2s2_plane_avx512() (see the top of this file) does it: per
 * 16 outputs the two input rows' 32 columns are reduced to one, a permute
 * of two vectors gives the even and the odd columns.  The operations and
 * their order are npr_pool_row_avx512()'s and npr_ref_pool()'s (the sum
 * from 0, then divided by 4), so the bits are the same; per output row it
 * saves the row kernel's set-up, which cost more than the row itself on
 * planes 64 wide.
 *
 * Return: true when done; false where it does not apply (this portable
 * build: always).
 */
bool VEC(pool2s2_plane)(bool maxp, const float *x, int64_t H, int64_t W,
			float *y, int64_t OH, int64_t OW)
{
#ifdef __AVX512F__
	const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16,
					    14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17,
					    15, 13, 11, 9, 7, 5, 3, 1);
	const __m512 id = _mm512_set1_ps(maxp ? -INFINITY : 0.0f);
	const __m512 four = _mm512_set1_ps(4.0f);
	int64_t oy, ox0;

	if (OH < 1 || OW < 1 || 2 * OH > H || 2 * OW > W)
		return false;
	for (oy = 0; oy < OH; oy++) {
		const float *r0 = x + oy * 2 * W, *r1 = r0 + W;
		float *yr = y + oy * OW;

		for (ox0 = 0; ox0 < OW; ox0 += 16) {
			int64_t c = 2 * ox0, n;
			__mmask16 ma, mb, mo;
			__m512 a, b, ev, od, v;

			n = W - c;
			ma = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
			n = W - c - 16;
			mb = n >= 16 ? 0xffff : n <= 0 ? 0 :
			     (__mmask16)((1u << n) - 1);
			a = _mm512_mask_loadu_ps(id, ma, r0 + c);
			b = _mm512_mask_loadu_ps(id, mb, r0 + c + 16);
			if (maxp) {
				a = _mm512_max_ps(_mm512_mask_loadu_ps(id, ma,
							r1 + c), a);
				b = _mm512_max_ps(_mm512_mask_loadu_ps(id, mb,
							r1 + c + 16), b);
			} else {
				a = _mm512_add_ps(a, _mm512_mask_loadu_ps(id, ma,
							r1 + c));
				b = _mm512_add_ps(b, _mm512_mask_loadu_ps(id, mb,
							r1 + c + 16));
			}
			ev = _mm512_permutex2var_ps(a, ie, b);
			od = _mm512_permutex2var_ps(a, io, b);
			if (maxp) {
				v = _mm512_max_ps(od, _mm512_max_ps(ev, id));
			} else {
				v = _mm512_add_ps(_mm512_add_ps(id, ev), od);
				v = _mm512_div_ps(v, four);
			}
			n = OW - ox0;
			mo = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
			_mm512_mask_storeu_ps(yr + ox0, mo, v);
		}
	}
	return true;
#else
	(void)maxp; (void)x; (void)H; (void)W; (void)y; (void)OH; (void)OW;
	return false;
#endif
}

/**
 * npr_maxpool3s2_plane_generic() - a whole plane of a 3x3 stride-2
 * MaxPool without padding
 * @x: the input plane, [H, W].
 * @H: its height.
 * @W: its width.
 * @y: Out. The output plane, [OH, OW].
 * @OH: its height.
 * @OW: its width.
 *
 * For a plane whose windows all start inside the input ((OH - 1) * 2 <
 * H, the same for W; ceil mode may clip the last ones).  Only
 * npr_maxpool3s2_plane_avx512() (see the top of this file) does it, in
 * registers: per 16 outputs the three input rows' 32 columns are reduced
 * to one (the next 16 columns' vector is the one after: the window's
 * third column), then a permute of two vectors gives the even and the
 * odd columns and a shift by one lane the third.  No store and reload of
 * a reduced row between the passes.  Columns past the input read -inf,
 * rows past it repeat the last.
 *
 * Return: true when done; false where it does not apply (this portable
 * build: always).
 */
bool VEC(maxpool3s2_plane)(const float *x, int64_t H, int64_t W, float *y,
			   int64_t OH, int64_t OW)
{
#ifdef __AVX512F__
	const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16,
					    14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17,
					    15, 13, 11, 9, 7, 5, 3, 1);
	const __m512 ninf = _mm512_set1_ps(-INFINITY);
	int64_t oy, ox0;

	if ((OH - 1) * 2 >= H || (OW - 1) * 2 >= W || OW < 1 || OH < 1)
		return false;
	for (oy = 0; oy < OH; oy++) {
		const float *r0 = x + oy * 2 * W;
		const float *r1 = oy * 2 + 1 < H ? r0 + W : r0;
		const float *r2 = oy * 2 + 2 < H ? r0 + 2 * W : r1;
		float *yr = y + oy * OW;
		__m512 a;
		__mmask16 m = W >= 16 ? 0xffff : (__mmask16)((1u << W) - 1);

		a = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, m, r0),
				  _mm512_mask_loadu_ps(ninf, m, r1));
		a = _mm512_max_ps(a, _mm512_mask_loadu_ps(ninf, m, r2));
		for (ox0 = 0; ox0 < OW; ox0 += 16) {
			int64_t c = 2 * ox0 + 16, n;
			__mmask16 mb, mc, mo;
			__m512 b, cv, ev, od, e2;

			n = W - c;
			mb = n >= 16 ? 0xffff : n <= 0 ? 0 :
			     (__mmask16)((1u << n) - 1);
			n = W - c - 16;
			mc = n >= 16 ? 0xffff : n <= 0 ? 0 :
			     (__mmask16)((1u << n) - 1);
			b = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, mb, r0 + c),
					  _mm512_mask_loadu_ps(ninf, mb, r1 + c));
			b = _mm512_max_ps(b, _mm512_mask_loadu_ps(ninf, mb, r2 + c));
			cv = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, mc, r0 + c + 16),
					   _mm512_mask_loadu_ps(ninf, mc, r1 + c + 16));
			cv = _mm512_max_ps(cv, _mm512_mask_loadu_ps(ninf, mc,
								    r2 + c + 16));
			ev = _mm512_permutex2var_ps(a, ie, b);
			od = _mm512_permutex2var_ps(a, io, b);
			/* columns 2, 4, ..., 32: the even ones moved by a lane */
			e2 = _mm512_castsi512_ps(_mm512_alignr_epi32(
				_mm512_castps_si512(cv), _mm512_castps_si512(ev),
				1));
			n = OW - ox0;
			mo = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
			_mm512_mask_storeu_ps(yr + ox0, mo,
					      _mm512_max_ps(_mm512_max_ps(ev, od),
							    e2));
			a = cv;
		}
	}
	return true;
#else
	return false;
#endif
}
