/* SPDX-License-Identifier: MIT */
/*
 * NprQConv's matrix kernel on 256-bit vectors, included by
 * qgemm_avxvnni.c (DOT: vpdpbusd, VEX encoded) and qgemm_avx2.c (DOT:
 * 16-bit products, exact).  A tile is up to 4 output channels by 16
 * pixels: 8 accumulators.
 */
#include <immintrin.h>
#include <string.h>

#include "ref/kernels/qgemm.h"

static inline __m256i bcast(const int8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return _mm256_set1_epi32(v);
}

/*
 * The write-out shared by both layouts: @f, the accumulators already
 * scaled and shifted, clamped and stored as f32, or divided, rounded,
 * clamped, offset by the zero point and mapped through the table as u8;
 * @n values at element @off of @y.  (The two argument structs have the
 * same write-out fields; the field list keeps this independent of both.)
 */
static inline void store_q(__m256 f, float div, bool f32out, float flo,
			   float fhi, int lo, int hi, int zy,
			   const int32_t *lut, void *y, int64_t off, int n)
{
	__m256i q;
	float fb[8];
	int32_t ib[8];
	int i;

	if (f32out) {
		f = _mm256_max_ps(f, _mm256_set1_ps(flo));
		f = _mm256_min_ps(f, _mm256_set1_ps(fhi));
		if (n == 8) {
			_mm256_storeu_ps((float *)y + off, f);
			return;
		}
		_mm256_storeu_ps(fb, f);
		memcpy((float *)y + off, fb, n * sizeof(float));
		return;
	}
	f = _mm256_div_ps(f, _mm256_set1_ps(div));
	f = _mm256_max_ps(f, _mm256_set1_ps((float)(lo - zy)));
	f = _mm256_min_ps(f, _mm256_set1_ps((float)(hi - zy)));
	q = _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(zy));
	if (lut)
		q = _mm256_i32gather_epi32(lut, q, 4);
	_mm256_storeu_si256((__m256i *)ib, q);
	for (i = 0; i < n; i++)
		((uint8_t *)y)[off + i] = (uint8_t)ib[i];
}

#define STORE_Q(a, f, off, n)						\
	store_q(f, (a)->div, (a)->f32out, (a)->flo, (a)->fhi, (a)->lo,	\
		(a)->hi, (a)->zy, (a)->lut, (a)->y, off, n)

/* Row @r of the rows layout, pixels from @p: @n of the 8 lanes. */
static inline void put(const struct npr_qgemm_args *a, int64_t r,
		       int64_t p, __m256i acc, int n)
{
	__m256 f = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc,
				_mm256_set1_epi32(a->comp[r])));

	f = _mm256_fmadd_ps(f, _mm256_set1_ps(a->mul[r]),
			    _mm256_set1_ps(a->add[r]));
	STORE_Q(a, f, r * a->ldy + p, n);
}

static inline __attribute__((always_inline))
void tile(const struct npr_qgemm_args *a, int64_t r0, const int mr,
	  int64_t p0)
{
	const uint8_t *x = a->x + p0 * 4;
	const int8_t *w = a->w + r0 * a->kr;
	int64_t q, nq = a->kr / 4, step = a->ldx * 4, left = a->npx - p0;
	__m256i acc[4][2];
	int i;

	for (i = 0; i < mr; i++)
		acc[i][0] = acc[i][1] = _mm256_setzero_si256();
	for (q = 0; q < nq; q++, x += step, w += 4) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)x);
		__m256i x1 = _mm256_loadu_si256((const __m256i *)(x + 32));

		for (i = 0; i < mr; i++) {
			__m256i wb = bcast(w + i * a->kr);

			acc[i][0] = DOT(acc[i][0], x0, wb);
			acc[i][1] = DOT(acc[i][1], x1, wb);
		}
	}
	for (i = 0; i < mr; i++) {
		put(a, r0 + i, p0, acc[i][0], left >= 8 ? 8 : (int)left);
		if (left > 8)
			put(a, r0 + i, p0 + 8, acc[i][1],
			    left >= 16 ? 8 : (int)left - 8);
	}
}

/*
 * The full tile, 4 rows by 16 pixels, with its accumulators in named
 * variables (an array of them costs a register copy per DOT).
 */
static __attribute__((noinline))
void tile4(const struct npr_qgemm_args *a, int64_t r0, int64_t p0)
{
	const uint8_t *x = a->x + p0 * 4;
	const int8_t *w = a->w + r0 * a->kr;
	int64_t q, nq = a->kr / 4, step = a->ldx * 4, kr = a->kr;
	int64_t left = a->npx - p0;
	__m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00;
	__m256i c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
	int n0 = left >= 8 ? 8 : (int)left;
	int n1 = left >= 16 ? 8 : left > 8 ? (int)left - 8 : 0;

#define ROW(i, a0, a1)							\
	do {								\
		__m256i wb = bcast(w + (i) * kr);			\
		a0 = DOT(a0, x0, wb);					\
		a1 = DOT(a1, x1, wb);					\
	} while (0)
	for (q = 0; q < nq; q++, x += step, w += 4) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)x);
		__m256i x1 = _mm256_loadu_si256((const __m256i *)(x + 32));

		ROW(0, c00, c01);
		ROW(1, c10, c11);
		ROW(2, c20, c21);
		ROW(3, c30, c31);
	}
#undef ROW
#define OUT(i, a0, a1)							\
	do {								\
		put(a, r0 + (i), p0, a0, n0);				\
		if (n1)							\
			put(a, r0 + (i), p0 + 8, a1, n1);		\
	} while (0)
	OUT(0, c00, c01);
	OUT(1, c10, c11);
	OUT(2, c20, c21);
	OUT(3, c30, c31);
#undef OUT
}

/**
 * KERN() - NprQConv's matrix kernel on 256-bit vectors
 * @a: the block (ref/kernels/qgemm.h).
 */
void KERN(const struct npr_qgemm_args *a)
{
	int64_t r, p;

	for (p = 0; p < a->npx; p += 16) {
		for (r = 0; r + 4 <= a->m; r += 4)
			tile4(a, r, p);
		if (r + 2 <= a->m) {
			tile(a, r, 2, p);
			r += 2;
		}
		if (r < a->m)
			tile(a, r, 1, p);
	}
}

/*
 * The kernel of blocked weights: a block of 16 output channels (two
 * vectors) by NP pixels; a last tile of fewer pixels repeats its last
 * pixel's pointers and writes only its own.
 */
static inline void nput(const struct npr_qnhwc_args *a, int64_t k,
			int64_t px, __m256i acc)
{
	int64_t left = a->m - k;
	__m256 f;

	if (left <= 0)
		return;
	f = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc,
			_mm256_loadu_si256((const __m256i *)(a->comp + k))));
	f = _mm256_fmadd_ps(f, _mm256_loadu_ps(a->mul + k),
			    _mm256_loadu_ps(a->add + k));
	STORE_Q(a, f, px * a->ldy + k, left > 8 ? 8 : (int)left);
}

#define NP	4

static __attribute__((noinline))
void ntile(const struct npr_qnhwc_args *a, int64_t b, int64_t p0)
{
	int64_t nq = a->taps * a->cq, t, q;
	int64_t valid = a->npx - p0 < NP ? a->npx - p0 : NP;
	const int8_t *w = a->w + b * nq * 64;
	__m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00;
	__m256i c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
	int j;

	for (t = 0; t < a->taps; t++) {
		const uint8_t *x[NP];

		for (j = 0; j < NP; j++)
			x[j] = a->ind[(p0 + (j < valid ? j : valid - 1)) *
				      a->taps + t];
#ifdef DOT_SPLIT
/* the weights split once a step, each pixel's bytes once (16-bit DOT) */
#define PIX(j, a0, a1)							\
	do {								\
		struct dot_x xs = dot_x(bcast((const int8_t *)x[j] +	\
					      q * 4));			\
		a0 = dot_split(a0, xs, s0);				\
		a1 = dot_split(a1, xs, s1);				\
	} while (0)
#else
#define PIX(j, a0, a1)							\
	do {								\
		__m256i xb = bcast((const int8_t *)x[j] + q * 4);	\
		a0 = DOT(a0, xb, w0);					\
		a1 = DOT(a1, xb, w1);					\
	} while (0)
#endif
		for (q = 0; q < a->cq; q++, w += 64) {
			__m256i w0 = _mm256_loadu_si256((const __m256i *)w);
			__m256i w1 = _mm256_loadu_si256((const __m256i *)
							(w + 32));
#ifdef DOT_SPLIT
			struct dot_w s0 = dot_w(w0), s1 = dot_w(w1);
#endif

			PIX(0, c00, c01);
			PIX(1, c10, c11);
			PIX(2, c20, c21);
			PIX(3, c30, c31);
		}
#undef PIX
	}
#define OUT(j, a0, a1)							\
	do {								\
		if (j < valid) {					\
			nput(a, b * 16, p0 + j, a0);			\
			nput(a, b * 16 + 8, p0 + j, a1);		\
		}							\
	} while (0)
	OUT(0, c00, c01);
	OUT(1, c10, c11);
	OUT(2, c20, c21);
	OUT(3, c30, c31);
#undef OUT
}

/**
 * KERN_NHWC() - NprQConv's kernel of blocked weights on 256-bit vectors
 * @a: the pixels and channels (ref/kernels/qgemm.h).
 */
void KERN_NHWC(const struct npr_qnhwc_args *a)
{
	int64_t b, p;

	for (b = 0; b < a->kb; b++)
		for (p = 0; p < a->npx; p += NP)
			ntile(a, b, p);
}
#undef NP

/* up to 8 bytes of @p (the rest zero), into the low half */
static inline __m128i load8(const uint8_t *p, int64_t n)
{
	int64_t v = 0;

	memcpy(&v, p, n >= 8 ? 8 : (size_t)n);
	return _mm_cvtsi64_si128(v);
}

/*
 * Four taps (@nt of them there, the rest zero) of 8 channels from
 * channel @c0 (@left of them there) interleaved: four taps a lane.
 */
static inline __m256i dw_taps(const uint8_t *const *ip, int64_t nt,
			      int64_t c0, int64_t left)
{
	__m128i x0 = load8(ip[0] + c0, left), x1 = _mm_setzero_si128();
	__m128i x2 = x1, x3 = x1, lo, hi;

	if (nt > 1)
		x1 = load8(ip[1] + c0, left);
	if (nt > 2)
		x2 = load8(ip[2] + c0, left);
	if (nt > 3)
		x3 = load8(ip[3] + c0, left);
	lo = _mm_unpacklo_epi8(x0, x1);
	hi = _mm_unpacklo_epi8(x2, x3);
	return _mm256_set_m128i(_mm_unpackhi_epi16(lo, hi),
				_mm_unpacklo_epi16(lo, hi));
}

/*
 * The depthwise kernel of blocked weights: 8 channels a vector, each
 * group of four taps' bytes interleaved by unpacks into four taps a
 * channel lane, against the weights' matching half block.
 */
void KERN_DW(const struct npr_qnhwc_args *a)
{
	int64_t b, h, p, g;

	for (b = 0; b < a->kb; b++)
		for (h = 0; h < 2; h++) {
			int64_t k = b * 16 + h * 8, left = a->m - k;
			const int8_t *w = a->w + b * a->cq * 64 + h * 32;

			if (left <= 0)
				return;
			for (p = 0; p < a->npx; p++) {
				const uint8_t *const *ip = a->ind +
							   p * a->taps;
				__m256i acc = _mm256_setzero_si256();

				for (g = 0; g < a->cq; g++, ip += 4) {
					__m256i v = dw_taps(ip, a->taps - 4 * g,
							    a->xc0 + k, left);
					const __m256i *wg = (const __m256i *)
							    (w + g * 64);

					acc = DOT(acc, v, _mm256_loadu_si256(wg));
				}
				nput(a, k, p, acc);
			}
		}
}
