// SPDX-License-Identifier: MIT
/*
 * AVX-512F SGEMM micro-kernel: an 8 x 32 tile of C in 16 zmm registers.
 *
 * Per step of k: two 16-float loads of the B panel, eight broadcasts of
 * the A panel, sixteen FMAs.  Zen 4 retires one 512-bit FMA per cycle
 * (two 256-bit pipes), so sixteen independent accumulators cover its
 * 4-cycle latency with room to spare, and the loads (10 per 16 FMAs) stay
 * under its two load ports.  Built with -mavx512f -mfma only; called only
 * after CPUID says so (gemm.c).
 */
#include <immintrin.h>

#include "ref/gemm.h"

#define MR	8
#define NR	32

static inline __m512 epi_vec(const struct npr_gemm_epi *e, __m512 v, int i,
			     int j, __mmask16 mk)
{
	if (e->bias)
		v = _mm512_add_ps(v, _mm512_set1_ps(e->bias[i]));
	if (e->res)
		v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk,
					e->res + i * e->ldr + j));
	if (e->act == NPR_ACT_RELU)
		v = _mm512_max_ps(v, _mm512_setzero_ps());
	else if (e->act == NPR_ACT_CLAMP)
		v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(e->lo)),
				  _mm512_set1_ps(e->hi));
	return v;
}

static void kern(int64_t kc, const float *a, const float *b, float *c,
		 int64_t ldc, int m, int n, bool acc, bool last,
		 const struct npr_gemm_epi *e)
{
	__m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
	__m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
	__m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
	__m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
	__m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();
	__m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
	__m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps();
	__m512 c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
	__m512 r[MR][2];
	__mmask16 m0, m1;
	int64_t k;
	int i;

#define STEP(o)								\
	do {								\
		__m512 b0 = _mm512_load_ps(b + (o) * NR);		\
		__m512 b1 = _mm512_load_ps(b + (o) * NR + 16);		\
		__m512 av;						\
		av = _mm512_set1_ps(a[(o) * MR + 0]);			\
		c00 = _mm512_fmadd_ps(av, b0, c00);			\
		c01 = _mm512_fmadd_ps(av, b1, c01);			\
		av = _mm512_set1_ps(a[(o) * MR + 1]);			\
		c10 = _mm512_fmadd_ps(av, b0, c10);			\
		c11 = _mm512_fmadd_ps(av, b1, c11);			\
		av = _mm512_set1_ps(a[(o) * MR + 2]);			\
		c20 = _mm512_fmadd_ps(av, b0, c20);			\
		c21 = _mm512_fmadd_ps(av, b1, c21);			\
		av = _mm512_set1_ps(a[(o) * MR + 3]);			\
		c30 = _mm512_fmadd_ps(av, b0, c30);			\
		c31 = _mm512_fmadd_ps(av, b1, c31);			\
		av = _mm512_set1_ps(a[(o) * MR + 4]);			\
		c40 = _mm512_fmadd_ps(av, b0, c40);			\
		c41 = _mm512_fmadd_ps(av, b1, c41);			\
		av = _mm512_set1_ps(a[(o) * MR + 5]);			\
		c50 = _mm512_fmadd_ps(av, b0, c50);			\
		c51 = _mm512_fmadd_ps(av, b1, c51);			\
		av = _mm512_set1_ps(a[(o) * MR + 6]);			\
		c60 = _mm512_fmadd_ps(av, b0, c60);			\
		c61 = _mm512_fmadd_ps(av, b1, c61);			\
		av = _mm512_set1_ps(a[(o) * MR + 7]);			\
		c70 = _mm512_fmadd_ps(av, b0, c70);			\
		c71 = _mm512_fmadd_ps(av, b1, c71);			\
	} while (0)

	for (k = 0; k + 4 <= kc; k += 4, a += 4 * MR, b += 4 * NR) {
		_mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
		_mm_prefetch((const char *)(b + 8 * NR + 16), _MM_HINT_T0);
		STEP(0);
		STEP(1);
		STEP(2);
		STEP(3);
	}
	for (; k < kc; k++, a += MR, b += NR)
		STEP(0);
#undef STEP
	r[0][0] = c00; r[0][1] = c01; r[1][0] = c10; r[1][1] = c11;
	r[2][0] = c20; r[2][1] = c21; r[3][0] = c30; r[3][1] = c31;
	r[4][0] = c40; r[4][1] = c41; r[5][0] = c50; r[5][1] = c51;
	r[6][0] = c60; r[6][1] = c61; r[7][0] = c70; r[7][1] = c71;
	m0 = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
	m1 = n >= 32 ? 0xffff : n <= 16 ? 0 : (__mmask16)((1u << (n - 16)) - 1);
#pragma GCC unroll 8
	for (i = 0; i < MR; i++) {
		float *cr = c + i * ldc;
		__m512 v0 = r[i][0], v1 = r[i][1];

		if (i >= m)
			break;

		if (acc) {
			v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
			v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
		}
		if (last && e) {
			v0 = epi_vec(e, v0, i, 0, m0);
			v1 = epi_vec(e, v1, i, 16, m1);
		}
		_mm512_mask_storeu_ps(cr, m0, v0);
		_mm512_mask_storeu_ps(cr + 16, m1, v1);
	}
}

/*
 * The same tile with B read in place: row k at b + off[k] (unaligned,
 * masked past n).  Convolutions at stride 1 use it on a zero-padded
 * input (no im2col packing at all), 1x1 ones on the input itself.
 */
static void kern_direct(int64_t kc, const float *a, const float *b,
			const int64_t *off, float *c, int64_t ldc, int m,
			int n, bool acc, bool last,
			const struct npr_gemm_epi *e)
{
	__m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
	__m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
	__m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
	__m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
	__m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();
	__m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
	__m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps();
	__m512 c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
	__m512 r[MR][2];
	__mmask16 m0, m1;
	int64_t k;
	int i;

	m0 = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
	m1 = n >= 32 ? 0xffff : n <= 16 ? 0 : (__mmask16)((1u << (n - 16)) - 1);
	for (k = 0; k < kc; k++, a += MR) {
		const float *bk = b + off[k];
		__m512 b0 = _mm512_maskz_loadu_ps(m0, bk);
		__m512 b1 = _mm512_maskz_loadu_ps(m1, bk + 16);
		__m512 av;

		av = _mm512_set1_ps(a[0]);
		c00 = _mm512_fmadd_ps(av, b0, c00);
		c01 = _mm512_fmadd_ps(av, b1, c01);
		av = _mm512_set1_ps(a[1]);
		c10 = _mm512_fmadd_ps(av, b0, c10);
		c11 = _mm512_fmadd_ps(av, b1, c11);
		av = _mm512_set1_ps(a[2]);
		c20 = _mm512_fmadd_ps(av, b0, c20);
		c21 = _mm512_fmadd_ps(av, b1, c21);
		av = _mm512_set1_ps(a[3]);
		c30 = _mm512_fmadd_ps(av, b0, c30);
		c31 = _mm512_fmadd_ps(av, b1, c31);
		av = _mm512_set1_ps(a[4]);
		c40 = _mm512_fmadd_ps(av, b0, c40);
		c41 = _mm512_fmadd_ps(av, b1, c41);
		av = _mm512_set1_ps(a[5]);
		c50 = _mm512_fmadd_ps(av, b0, c50);
		c51 = _mm512_fmadd_ps(av, b1, c51);
		av = _mm512_set1_ps(a[6]);
		c60 = _mm512_fmadd_ps(av, b0, c60);
		c61 = _mm512_fmadd_ps(av, b1, c61);
		av = _mm512_set1_ps(a[7]);
		c70 = _mm512_fmadd_ps(av, b0, c70);
		c71 = _mm512_fmadd_ps(av, b1, c71);
	}
	r[0][0] = c00; r[0][1] = c01; r[1][0] = c10; r[1][1] = c11;
	r[2][0] = c20; r[2][1] = c21; r[3][0] = c30; r[3][1] = c31;
	r[4][0] = c40; r[4][1] = c41; r[5][0] = c50; r[5][1] = c51;
	r[6][0] = c60; r[6][1] = c61; r[7][0] = c70; r[7][1] = c71;
#pragma GCC unroll 8
	for (i = 0; i < MR; i++) {
		float *cr = c + i * ldc;
		__m512 v0 = r[i][0], v1 = r[i][1];

		if (i >= m)
			break;

		if (acc) {
			v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
			v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
		}
		if (last && e) {
			v0 = epi_vec(e, v0, i, 0, m0);
			v1 = epi_vec(e, v1, i, 16, m1);
		}
		_mm512_mask_storeu_ps(cr, m0, v0);
		_mm512_mask_storeu_ps(cr + 16, m1, v1);
	}
}

const struct npr_gemm_kern npr_gemm_kern_avx512 = {
	.name = "avx512", .mr = MR, .nr = NR, .fn = kern,
	.fn_direct = kern_direct,
};

/*
 * Pixel-major tile for convolutions on small planes: seven output pixels
 * (broadcast, row k of the input at x + off[k], pixels i = 0..6 at
 * x + off[k] + i * sx) times 64 output channels (four vectors of the packed
 * weights w[k][64]), 28 accumulators.  Per k: four aligned loads, seven
 * broadcasts, 28 FMAs.  t[i][64] gets (or, with @acc, adds) the sums.
 * A row's last tile may have fewer pixels (a variant per count): 13 =
 * 7 + 6 costs 13 pixels' FMAs, not 14; a panel's last channels fewer
 * vectors (160 = 64 + 64 + 32 computes 160, not 192).
 * Seven pixels divide 7, 14, 28, 56 and 112, so a 7x7 plane has no
 * padding lanes, where 32-wide column panels compute 64 for 49.
 */
/* acc + b * p[0..16), the load folded into the FMA */
static inline __m512 t7_fma_mem(__m512 b, const float *p, __m512 acc)
{
	__asm__("vfmadd231ps %2, %1, %0"
		: "+v"(acc) : "v"(b), "m"(*(const __m512 *)p));
	return acc;
}

/*
 * The tile for @n pixels and @nv vectors of 16 channels (constants where
 * it is inlined, so the rows and vectors past them and their
 * accumulators drop out) and pixel stride S.
 */
#define T7_DECL(i)							\
	__m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps(), \
	       c##i##2 = _mm512_setzero_ps(), c##i##3 = _mm512_setzero_ps()
#define T7_ROW(i)							\
	do {								\
		if (n > (i)) {						\
			__m512 b_ = _mm512_set1_ps(xk[(i) * S]);	\
			c##i##0 = _mm512_fmadd_ps(b_, w0, c##i##0);	\
			if (nv > 1)					\
				c##i##1 = _mm512_fmadd_ps(b_, w1, c##i##1); \
			if (nv > 2)					\
				c##i##2 = _mm512_fmadd_ps(b_, w2, c##i##2); \
			if (nv > 3)					\
				c##i##3 = t7_fma_mem(b_, w + 48, c##i##3); \
		}							\
	} while (0)
#define T7_ST1(i, v)							\
	do {								\
		float *ti_ = t + (i) * 64 + (v) * 16;			\
		__m512 r_ = c##i##v;					\
		if (acc)						\
			r_ = _mm512_add_ps(r_, _mm512_load_ps(ti_));	\
		_mm512_store_ps(ti_, r_);				\
	} while (0)
#define T7_ST(i)							\
	do {								\
		if (n > (i)) {						\
			T7_ST1(i, 0);					\
			if (nv > 1)					\
				T7_ST1(i, 1);				\
			if (nv > 2)					\
				T7_ST1(i, 2);				\
			if (nv > 3)					\
				T7_ST1(i, 3);				\
		}							\
	} while (0)

static inline __attribute__((always_inline)) void
t7_body(const int n, const int nv, const int64_t S, int64_t kc,
	const float *w, const float *x, const int64_t *off, float *t, bool acc)
{
	T7_DECL(0); T7_DECL(1); T7_DECL(2); T7_DECL(3);
	T7_DECL(4); T7_DECL(5); T7_DECL(6);
	int64_t k;

	/*
	 * 28 accumulators, three weight vectors and the broadcast fill the
	 * 32 registers: the fourth weight vector is a memory operand of each
	 * of its FMAs (written as asm: the compiler would load it once into
	 * a register and spill an accumulator instead).
	 */
	for (k = 0; k < kc; k++, w += 64) {
		const float *xk = x + off[k];
		__m512 w0 = _mm512_load_ps(w);
		__m512 w1 = _mm512_load_ps(w + 16);
		__m512 w2 = _mm512_load_ps(w + 32);

		T7_ROW(0); T7_ROW(1); T7_ROW(2); T7_ROW(3);
		T7_ROW(4); T7_ROW(5); T7_ROW(6);
	}
	T7_ST(0); T7_ST(1); T7_ST(2); T7_ST(3);
	T7_ST(4); T7_ST(5); T7_ST(6);
}
#undef T7_DECL
#undef T7_ROW
#undef T7_ST1
#undef T7_ST

/* the pixel stride (the convolution's) as a constant where common */
#define T7_N(nn, vv)							\
static void t7_n##nn##v##vv(int64_t kc, const float *w, const float *x, \
			    const int64_t *off, int64_t sx, float *t,	\
			    bool acc)					\
{									\
	if (sx == 1)							\
		t7_body(nn, vv, 1, kc, w, x, off, t, acc);		\
	else if (sx == 2)						\
		t7_body(nn, vv, 2, kc, w, x, off, t, acc);		\
	else								\
		t7_body(nn, vv, sx, kc, w, x, off, t, acc);		\
}
#define T7_NV(vv)							\
	T7_N(1, vv) T7_N(2, vv) T7_N(3, vv) T7_N(4, vv)			\
	T7_N(5, vv) T7_N(6, vv) T7_N(7, vv)
T7_NV(1) T7_NV(2) T7_NV(3) T7_NV(4)
#undef T7_NV
#undef T7_N

/**
 * npr_gemm_t7_avx512() - the pixel-major tile: up to 7 pixels by 64
 * channels
 * @n: pixels, 1 to 7 (clamped)
 * @nv: vectors of 16 channels, 1 to 4 (clamped)
 * @kc: depth: the number of taps
 * @w: weights, kc rows of 64 floats, 64-byte aligned
 * @x: the input
 * @off: per tap k, the offset in @x of pixel 0's input
 * @sx: the offset between consecutive pixels' inputs
 * @t: the tile, rows of 64 floats, 64-byte aligned
 * @acc: add to @t instead of overwriting it
 *
 * t[i][0..16 nv) (+)= the sum over k < kc of x[off[k] + i * sx] *
 * w[k][0..16 nv), for i < n; the rest of t[i][0..64) is untouched.
 *
 * Context: only where CPUID reports AVX-512F.
 */
void npr_gemm_t7_avx512(int n, int nv, int64_t kc, const float *w,
			const float *x, const int64_t *off, int64_t sx,
			float *t, bool acc)
{
#define T7_FNS(vv)	{ t7_n1v##vv, t7_n2v##vv, t7_n3v##vv, t7_n4v##vv, \
			  t7_n5v##vv, t7_n6v##vv, t7_n7v##vv }
	static void (*const fn[4][7])(int64_t, const float *, const float *,
				      const int64_t *, int64_t, float *,
				      bool) = {
		T7_FNS(1), T7_FNS(2), T7_FNS(3), T7_FNS(4),
	};
#undef T7_FNS

	n = n < 1 ? 1 : n > 7 ? 7 : n;
	nv = nv < 1 ? 1 : nv > 4 ? 4 : nv;
	fn[nv - 1][n - 1](kc, w, x, off, sx, t, acc);
}

/* r[i] (row i) becomes column i of the 16 x 16 block */
static inline void tr16(__m512 r[16])
{
	__m512 t[16];
	int i;

	/* unrolled, so that r and t stay in registers (-O2 kept them on the
	 * stack: the write-out took a seventh of a 55x55 layer's time) */
#pragma GCC unroll 16
	for (i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
#pragma GCC unroll 16
	for (i = 0; i < 16; i += 4) {
		r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
		r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
		r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
		r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
	}
#pragma GCC unroll 16
	for (i = 0; i < 4; i++) {
		t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
		t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
		t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
		t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
	}
#pragma GCC unroll 16
	for (i = 0; i < 4; i++) {
		r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
		r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
		r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
		r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
	}
}

/**
 * npr_gemm_t7_out_avx512() - write pixel-major sums out channel-major
 * @t: the sums, 64 floats a pixel, 64-byte aligned
 * @len: pixels
 * @kn: channels, at most 64
 * @y: out: channel kk's row at y + kk * @ldy
 * @ldy: row stride of @y and @res
 * @bias: per channel, or NULL
 * @res: residual in the layout of @y, or NULL
 * @act: enum npr_act
 * @lo: NPR_ACT_CLAMP lower bound
 * @hi: NPR_ACT_CLAMP upper bound
 *
 * y[kk * ldy + l] = act(t[l * 64 + kk] + bias[kk] + res[kk * ldy + l])
 * for l < len, kk < kn; blocks of 16 pixels by 16 channels transposed in
 * registers.
 *
 * Context: only where CPUID reports AVX-512F.
 */
void npr_gemm_t7_out_avx512(const float *t, int64_t len, int64_t kn,
			    float *y, int64_t ldy, const float *bias,
			    const float *res, int act, float lo, float hi)
{
	const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
	const __m512 vz = _mm512_setzero_ps();
	int64_t c0, l, i;

	for (c0 = 0; c0 < kn; c0 += 16)
		for (l = 0; l < len; l += 16) {
			int64_t np = len - l < 16 ? len - l : 16;
			int64_t nc = kn - c0 < 16 ? kn - c0 : 16;
			__mmask16 m = np == 16 ? 0xffff :
				      (__mmask16)((1u << np) - 1);
			__m512 r[16];

#pragma GCC unroll 16
			for (i = 0; i < 16; i++)
				r[i] = i < np ? _mm512_load_ps(t + (l + i) * 64 +
							       c0) : vz;
			tr16(r);
#pragma GCC unroll 16
			for (i = 0; i < 16; i++) {
				__m512 v = r[i];
				int64_t k = c0 + i;

				if (i >= nc)
					break;
				if (bias)
					v = _mm512_add_ps(v, _mm512_set1_ps(bias[k]));
				if (res)
					v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m,
							res + k * ldy + l));
				if (act == NPR_ACT_RELU)
					v = _mm512_max_ps(v, vz);
				else if (act == NPR_ACT_CLAMP)
					v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);
				_mm512_mask_storeu_ps(y + k * ldy + l, m, v);
			}
		}
}

/**
 * npr_gemm_t7_maxpool_avx512() - max pooling of pixel-major rows
 * @rows: the @nr input rows the window covers, 64 floats a pixel, 64-byte
 *        aligned
 * @nr: the number of rows
 * @OW: output pixels
 * @kw: window width
 * @sw: horizontal stride
 * @pw: left padding
 * @W: input width
 * @out: out: @OW pixels of 64 floats, 64-byte aligned
 *
 * out[px] = the max over @rows and columns [px * sw - pw, + kw) clipped to
 * [0, W); every window must hold a column.  A pixel's 64 channels are four
 * aligned vectors: every tap is four loads and four maxima, no shuffles.
 *
 * Context: only where CPUID reports AVX-512F.
 */
void npr_gemm_t7_maxpool_avx512(const float *const *rows, int64_t nr,
				int64_t OW, int64_t kw, int64_t sw, int64_t pw,
				int64_t W, float *out)
{
	int64_t px, r, c;

	for (px = 0; px < OW; px++) {
		int64_t c0 = px * sw - pw, c1 = c0 + kw;
		__m512 m0 = _mm512_set1_ps(-__builtin_inff()), m1 = m0;
		__m512 m2 = m0, m3 = m0;

		if (c0 < 0)
			c0 = 0;
		if (c1 > W)
			c1 = W;
		for (r = 0; r < nr; r++)
			for (c = c0; c < c1; c++) {
				const float *s = rows[r] + c * 64;

				m0 = _mm512_max_ps(_mm512_load_ps(s), m0);
				m1 = _mm512_max_ps(_mm512_load_ps(s + 16), m1);
				m2 = _mm512_max_ps(_mm512_load_ps(s + 32), m2);
				m3 = _mm512_max_ps(_mm512_load_ps(s + 48), m3);
			}
		_mm512_store_ps(out + px * 64, m0);
		_mm512_store_ps(out + px * 64 + 16, m1);
		_mm512_store_ps(out + px * 64 + 32, m2);
		_mm512_store_ps(out + px * 64 + 48, m3);
	}
}

/**
 * npr_gemm_t7_sum_avx512() - add pixel-major sums into channel totals
 * @t: the sums, 64 floats a pixel, 64-byte aligned
 * @len: pixels
 * @kn: channels, at most 64
 * @bias: per channel, or NULL
 * @act: enum npr_act
 * @lo: NPR_ACT_CLAMP lower bound
 * @hi: NPR_ACT_CLAMP upper bound
 * @sum: in/out: 64 totals, 64-byte aligned; sum[kk] += act(t[l * 64 + kk]
 *       + bias[kk]) over l < len, for kk < kn
 *
 * A convolution followed by a global average pool thus never writes its
 * output plane.
 *
 * Context: only where CPUID reports AVX-512F.
 */
void npr_gemm_t7_sum_avx512(const float *t, int64_t len, int64_t kn,
			    const float *bias, int act, float lo, float hi,
			    float *sum)
{
	const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
	const __m512 vz = _mm512_setzero_ps();
	__m512 b[4], s[4];
	int64_t l;
	int i;

	for (i = 0; i < 4; i++) {
		int64_t n = kn - 16 * i;
		__mmask16 m = n >= 16 ? 0xffff : n <= 0 ? 0 :
			      (__mmask16)((1u << n) - 1);

		b[i] = bias ? _mm512_maskz_loadu_ps(m, bias + 16 * i) : vz;
		s[i] = _mm512_load_ps(sum + 16 * i);
	}
	/* only the vectors with channels: the tile leaves the others */
	for (l = 0; l < len; l++)
		for (i = 0; i < 4 && 16 * i < kn; i++) {
			__m512 v = _mm512_add_ps(_mm512_load_ps(t + l * 64 +
								 16 * i), b[i]);

			if (act == NPR_ACT_RELU)
				v = _mm512_max_ps(v, vz);
			else if (act == NPR_ACT_CLAMP)
				v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);
			s[i] = _mm512_add_ps(s[i], v);
		}
	for (i = 0; i < 4; i++)
		_mm512_store_ps(sum + 16 * i, s[i]);
}
