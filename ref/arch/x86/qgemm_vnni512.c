// SPDX-License-Identifier: MIT
/*
 * NprQConv's matrix kernel with AVX-512 VNNI (vpdpbusd: four u8 x s8
 * products summed into each i32 lane, exact).  A tile is up to 8 output
 * channels by 32 pixels: 16 accumulators, two activation loads and eight
 * weight broadcasts per four reduction steps.  Built with
 * -mavx512f -mavx512bw -mavx512vl
 * -mavx512vnni; ref/kernels/quant.c calls it only
 * when CPUID reports AVX512_VNNI, BW and VL.
 */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "ref/kernels/qgemm.h"

static inline __m512i bcast(const int8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return _mm512_set1_epi32(v);
}

/*
 * Tables: with AVX512_VBMI (checked at run time, these functions alone
 * use it) byte permutes, four per 64 results; else a gather per 16.
 */
static bool have_vbmi(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512vbmi");
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
static void lut_vbmi(uint8_t *y, int64_t n, const uint8_t *t)
{
	__m512i t0 = _mm512_loadu_si512(t), t1 = _mm512_loadu_si512(t + 64);
	__m512i t2 = _mm512_loadu_si512(t + 128);
	__m512i t3 = _mm512_loadu_si512(t + 192);
	int64_t i;

	for (i = 0; i < n; i += 64) {
		__mmask64 m = n - i >= 64 ? ~(__mmask64)0 :
			      ((__mmask64)1 << (n - i)) - 1;
		__m512i x = _mm512_maskz_loadu_epi8(m, y + i);
		__m512i lo = _mm512_permutex2var_epi8(t0, x, t1);
		__m512i hi = _mm512_permutex2var_epi8(t2, x, t3);

		_mm512_mask_storeu_epi8(y + i, m,
			_mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi));
	}
}

/*
 * f / d with the bits vdivps gives, without its cost where it can be
 * spared: f times the reciprocal of d differs from the quotient by under
 * 2^-13 for |f / d| <= 512 (both rounded to nearest, d and its
 * reciprocal normal), and the rounding to an integer that follows tells
 * the two apart only near a half-integer; lanes within 2^-10 of one
 * divide.  Beyond 512 the clamp that follows decides alone.
 */
static inline __m512 qdiv(__m512 f, float d)
{
	float r = 1.0f / d;
	__m512 q, c;
	__mmask16 m;

	if (!(r >= 0x1p-100f && r <= 0x1p100f))
		return _mm512_div_ps(f, _mm512_set1_ps(d));
	q = _mm512_mul_ps(f, _mm512_set1_ps(r));
	c = _mm512_min_ps(_mm512_max_ps(q, _mm512_set1_ps(-512.0f)),
			  _mm512_set1_ps(512.0f));
	c = _mm512_sub_ps(c, _mm512_roundscale_ps(c, _MM_FROUND_TO_NEAREST_INT |
						     _MM_FROUND_NO_EXC));
	m = _mm512_cmp_ps_mask(_mm512_abs_ps(c),
			       _mm512_set1_ps(0.5f - 0x1p-10f), _CMP_GT_OQ);
	return m ? _mm512_mask_div_ps(q, m, f, _mm512_set1_ps(d)) : q;
}

static inline void put(const struct npr_qgemm_args *a, int64_t r,
		       int64_t p, __m512i acc, __mmask16 mk, bool late)
{
	__m512 f = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc,
				_mm512_set1_epi32(a->comp[r])));

	f = _mm512_fmadd_ps(f, _mm512_set1_ps(a->mul[r]),
			    _mm512_set1_ps(a->add[r]));
	if (a->f32out) {
		f = _mm512_max_ps(f, _mm512_set1_ps(a->flo));
		f = _mm512_min_ps(f, _mm512_set1_ps(a->fhi));
		_mm512_mask_storeu_ps((float *)a->y + r * a->ldy + p, mk, f);
		return;
	}
	f = qdiv(f, a->div);
	f = _mm512_max_ps(f, _mm512_set1_ps((float)(a->lo - a->zy)));
	f = _mm512_min_ps(f, _mm512_set1_ps((float)(a->hi - a->zy)));
	acc = _mm512_add_epi32(_mm512_cvtps_epi32(f),
			       _mm512_set1_epi32(a->zy));
	if (a->lut && !late)
		acc = _mm512_i32gather_epi32(acc, a->lut, 4);
	_mm_mask_storeu_epi8((uint8_t *)a->y + r * a->ldy + p, mk,
			     _mm512_cvtepi32_epi8(acc));
}

static inline __attribute__((always_inline))
void tile(const struct npr_qgemm_args *a, int64_t r0, const int mr,
	  int64_t p0, bool late)
{
	const uint8_t *x = a->x + p0 * 4;
	const int8_t *w = a->w + r0 * a->kr;
	int64_t q, nq = a->kr / 4, step = a->ldx * 4, left = a->npx - p0;
	__m512i acc[8][2];
	__mmask16 m0, m1;
	int i;

	for (i = 0; i < mr; i++)
		acc[i][0] = acc[i][1] = _mm512_setzero_si512();
	for (q = 0; q < nq; q++, x += step, w += 4) {
		__m512i x0 = _mm512_loadu_si512(x);
		__m512i x1 = _mm512_loadu_si512(x + 64);

		for (i = 0; i < mr; i++) {
			__m512i wb = bcast(w + i * a->kr);

			acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], x0, wb);
			acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], x1, wb);
		}
	}
	m0 = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
	m1 = left >= 32 ? 0xffff :
	     left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1);
	for (i = 0; i < mr; i++) {
		put(a, r0 + i, p0, acc[i][0], m0, late);
		if (m1)
			put(a, r0 + i, p0 + 16, acc[i][1], m1, late);
	}
}

/*
 * acc += x (u8) . w (s8), in place: through the intrinsic GCC 12 copies
 * half the accumulators of a tile in and out of other registers on
 * every step.
 */
#define DPBUSD(acc, x, w)						\
	__asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w))

/* The full tile, 8 rows by 32 pixels, its accumulators named. */
static __attribute__((noinline))
void tile8(const struct npr_qgemm_args *a, int64_t r0, int64_t p0, bool late)
{
	const uint8_t *x = a->x + p0 * 4;
	const int8_t *w = a->w + r0 * a->kr;
	int64_t q, nq = a->kr / 4, step = a->ldx * 4, kr = a->kr;
	int64_t left = a->npx - p0;
	__m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00;
	__m512i c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
	__m512i c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00;
	__m512i c61 = c00, c70 = c00, c71 = c00;
	__mmask16 m0, m1;

#define ROW(i, a0, a1)							\
	do {								\
		__m512i wb = bcast(w + (i) * kr);			\
		DPBUSD(a0, x0, wb);					\
		DPBUSD(a1, x1, wb);					\
	} while (0)
	for (q = 0; q < nq; q++, x += step, w += 4) {
		__m512i x0 = _mm512_loadu_si512(x);
		__m512i x1 = _mm512_loadu_si512(x + 64);

		ROW(0, c00, c01);
		ROW(1, c10, c11);
		ROW(2, c20, c21);
		ROW(3, c30, c31);
		ROW(4, c40, c41);
		ROW(5, c50, c51);
		ROW(6, c60, c61);
		ROW(7, c70, c71);
	}
#undef ROW
	m0 = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
	m1 = left >= 32 ? 0xffff :
	     left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1);
#define OUT(i, a0, a1)							\
	do {								\
		put(a, r0 + (i), p0, a0, m0, late);			\
		if (m1)							\
			put(a, r0 + (i), p0 + 16, a1, m1, late);	\
	} while (0)
	OUT(0, c00, c01);
	OUT(1, c10, c11);
	OUT(2, c20, c21);
	OUT(3, c30, c31);
	OUT(4, c40, c41);
	OUT(5, c50, c51);
	OUT(6, c60, c61);
	OUT(7, c70, c71);
#undef OUT
}

/**
 * npr_qgemm_vnni512() - NprQConv's matrix kernel, AVX-512 VNNI
 * @a: the block (ref/kernels/qgemm.h).
 */
void npr_qgemm_vnni512(const struct npr_qgemm_args *a)
{
	bool late = a->lut8 && !a->f32out && have_vbmi();
	int64_t r, p;

	for (p = 0; p < a->npx; p += 32) {
		for (r = 0; r + 8 <= a->m; r += 8)
			tile8(a, r, p, late);
		if (r + 4 <= a->m) {
			tile(a, r, 4, p, late);
			r += 4;
		}
		if (r + 2 <= a->m) {
			tile(a, r, 2, p, late);
			r += 2;
		}
		if (r < a->m)
			tile(a, r, 1, p, late);
	}
	/* the table, row by row once the block is written */
	for (r = 0; late && r < a->m; r++)
		lut_vbmi((uint8_t *)a->y + r * a->ldy, a->npx, a->lut8);
}

/* the depthwise kernel: its taps vectorized with this file's flags */
#define QDW		npr_qdw_avx512
#define QDW_TAP		qdw_tap
#define QDW_OUT_U8	qdw_out_u8
#define QDW_OUT_F32	qdw_out_f32
#define QDW_LATE	have_vbmi()
#define QDW_LUT_ROW	lut_vbmi

struct npr_qdw_out;
static bool have_vbmi(void);
static void lut_vbmi(uint8_t *y, int64_t n, const uint8_t *t);
static inline void qdw_out_u8(const struct npr_qdw_out *o,
			      const uint32_t *acc, uint8_t *y, int cnt);
static inline void qdw_out_f32(const struct npr_qdw_out *o,
			       const uint32_t *acc, float *y, int cnt);

#include "ref/kernels/qdw.h"

/* what put() does, for a plane's row */
static inline void qdw_out_u8(const struct npr_qdw_out *o,
			      const uint32_t *acc, uint8_t *y, int cnt)
{
	__mmask16 mk = cnt >= 16 ? 0xffff : (__mmask16)((1u << cnt) - 1);
	__m512 f = _mm512_cvtepi32_ps(_mm512_loadu_si512(acc));
	__m512i v;

	f = _mm512_fmadd_ps(f, _mm512_set1_ps(o->mul),
			    _mm512_set1_ps(o->add));
	f = qdiv(f, o->div);
	f = _mm512_max_ps(f, _mm512_set1_ps(o->lo));
	f = _mm512_min_ps(f, _mm512_set1_ps(o->hi));
	v = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(o->zy));
	if (o->lut && !o->late)
		v = _mm512_i32gather_epi32(v, o->lut, 4);
	_mm_mask_storeu_epi8(y, mk, _mm512_cvtepi32_epi8(v));
}

static inline void qdw_out_f32(const struct npr_qdw_out *o,
			       const uint32_t *acc, float *y, int cnt)
{
	__mmask16 mk = cnt >= 16 ? 0xffff : (__mmask16)((1u << cnt) - 1);
	__m512 f = _mm512_cvtepi32_ps(_mm512_loadu_si512(acc));

	f = _mm512_fmadd_ps(f, _mm512_set1_ps(o->mul),
			    _mm512_set1_ps(o->add));
	f = _mm512_max_ps(f, _mm512_set1_ps(o->flo));
	f = _mm512_min_ps(f, _mm512_set1_ps(o->fhi));
	_mm512_mask_storeu_ps(y, mk, f);
}

/*
 * The kernel of blocked weights: output channels in the lanes, a tile
 * of MB blocks of 16 channels by NP pixels (MB x NP accumulators); per
 * group of four channels of a tap, MB weight loads and NP broadcasts of
 * each pixel's four input bytes.  A last tile of fewer pixels repeats
 * its last pixel's pointers and writes only its own.
 */
/*
 * The write-out of a tile: what every output needs, loaded once (the
 * stores could alias *a, so the compiler would load it again per vector).
 */
struct nq {
	__m512 r, d, lo, hi, flo, fhi;
	__m512i zy;
	bool fast, f32out;
	const int32_t *lut;
	bool late;		/* the table by byte permutes once written */
	char *y;
	int64_t ldy;
};

/* one block of 16 channels */
struct nb {
	__m512i comp;
	__m512 mul, add;
	__mmask16 mk;
	int64_t k;
};

static inline void nq_init(struct nq *o, const struct npr_qnhwc_args *a)
{
	float r = 1.0f / a->div;

	o->fast = r >= 0x1p-100f && r <= 0x1p100f;
	o->r = _mm512_set1_ps(r);
	o->d = _mm512_set1_ps(a->div);
	o->lo = _mm512_set1_ps((float)(a->lo - a->zy));
	o->hi = _mm512_set1_ps((float)(a->hi - a->zy));
	o->flo = _mm512_set1_ps(a->flo);
	o->fhi = _mm512_set1_ps(a->fhi);
	o->zy = _mm512_set1_epi32(a->zy);
	o->f32out = a->f32out;
	o->lut = a->lut;
	o->late = a->lut && a->lut8 && have_vbmi();
	o->y = a->y;
	o->ldy = a->ldy;
}

/* block @b of the tile; false when it holds no channel */
static inline bool nb_init(struct nb *n, const struct npr_qnhwc_args *a,
			   int64_t b)
{
	int64_t left = a->m - b * 16;

	if (left <= 0)
		return false;
	n->k = b * 16;
	n->mk = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
	n->comp = _mm512_loadu_si512(a->comp + n->k);
	n->mul = _mm512_loadu_ps(a->mul + n->k);
	n->add = _mm512_loadu_ps(a->add + n->k);
	return true;
}

/*
 * The u8 result of centred, scaled sums @f: clamp(rint(f / div)) + zy,
 * as qdiv() computes the quotient, the clamp first (its bounds are
 * integers, so it moves no value across a half-integer) and the
 * rounding's own input checked for ties.
 */
static inline __attribute__((always_inline))
__m512i nq_u8(const struct nq *o, __m512 f)
{
	__m512 q, c, r;
	__mmask16 m = 0;

	if (o->fast) {
		q = _mm512_mul_ps(f, o->r);
		c = _mm512_min_ps(_mm512_max_ps(q, o->lo), o->hi);
		r = _mm512_roundscale_ps(c, _MM_FROUND_TO_NEAREST_INT |
					    _MM_FROUND_NO_EXC);
		m = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(c, r)),
				       _mm512_set1_ps(0.5f - 0x1p-10f),
				       _CMP_GT_OQ);
		if (!m)
			return _mm512_add_epi32(_mm512_cvtps_epi32(r), o->zy);
	}
	q = _mm512_div_ps(f, o->d);
	c = _mm512_min_ps(_mm512_max_ps(q, o->lo), o->hi);
	return _mm512_add_epi32(_mm512_cvtps_epi32(c), o->zy);
}

static inline __attribute__((always_inline))
void nput(const struct nq *o, const struct nb *n, int64_t px,
			__m512i acc)
{
	__m512 f = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, n->comp));

	f = _mm512_fmadd_ps(f, n->mul, n->add);
	if (o->f32out) {
		f = _mm512_min_ps(_mm512_max_ps(f, o->flo), o->fhi);
		_mm512_mask_storeu_ps((float *)o->y + px * o->ldy + n->k,
				      n->mk, f);
		return;
	}
	acc = nq_u8(o, f);
	if (o->lut && !o->late)
		acc = _mm512_mask_i32gather_epi32(acc, n->mk, acc, o->lut, 4);
	_mm_mask_storeu_epi8(o->y + px * o->ldy + n->k, n->mk,
			     _mm512_cvtepi32_epi8(acc));
}

/* one pixel's broadcast into its accumulators of each block */
#define XB(j)	_mm512_set1_epi32(ld32(x[j] + q * 4))
#define PIX4(j, a0, a1, a2, a3)						\
	do {								\
		__m512i xb = XB(j);					\
		DPBUSD(a0, xb, w0);					\
		DPBUSD(a1, xb, w1);					\
		DPBUSD(a2, xb, w2);					\
		DPBUSD(a3, xb, w3);					\
	} while (0)
#define PIX2(j, a0, a1)							\
	do {								\
		__m512i xb = XB(j);					\
		DPBUSD(a0, xb, w0);					\
		DPBUSD(a1, xb, w1);					\
	} while (0)
#define PIX1(j, a0)	DPBUSD(a0, XB(j), w0)

static inline int32_t ld32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* the tiles, their accumulators named (in an array they live in memory) */
static __attribute__((noinline))
void ntile46(const struct npr_qnhwc_args *a, int64_t b0, int64_t p0)
{
	int64_t nq = a->taps * a->cq, bst = nq * 64, t, q;
	int64_t valid = a->npx - p0 < 6 ? a->npx - p0 : 6;
	const int8_t *w = a->w + b0 * bst;
	__m512i c0_0 = _mm512_setzero_si512();
	__m512i c0_1 = c0_0, c0_2 = c0_0, c0_3 = c0_0, c1_0 = c0_0,
		c1_1 = c0_0, c1_2 = c0_0, c1_3 = c0_0, c2_0 = c0_0,
		c2_1 = c0_0, c2_2 = c0_0, c2_3 = c0_0, c3_0 = c0_0,
		c3_1 = c0_0, c3_2 = c0_0, c3_3 = c0_0, c4_0 = c0_0,
		c4_1 = c0_0, c4_2 = c0_0, c4_3 = c0_0, c5_0 = c0_0,
		c5_1 = c0_0, c5_2 = c0_0, c5_3 = c0_0;
	const uint8_t *x[6];
	struct nq o;
	struct nb n;
	int j;

	for (t = 0; t < a->taps; t++) {
		for (j = 0; j < 6; j++)
			x[j] = a->ind[(p0 + (j < valid ? j : valid - 1)) *
				      a->taps + t];
		for (q = 0; q < a->cq; q++, w += 64) {
			__m512i w0 = _mm512_loadu_si512(w);
			__m512i w1 = _mm512_loadu_si512(w + 1 * bst);
			__m512i w2 = _mm512_loadu_si512(w + 2 * bst);
			__m512i w3 = _mm512_loadu_si512(w + 3 * bst);

			PIX4(0, c0_0, c0_1, c0_2, c0_3);
			PIX4(1, c1_0, c1_1, c1_2, c1_3);
			PIX4(2, c2_0, c2_1, c2_2, c2_3);
			PIX4(3, c3_0, c3_1, c3_2, c3_3);
			PIX4(4, c4_0, c4_1, c4_2, c4_3);
			PIX4(5, c5_0, c5_1, c5_2, c5_3);
		}
	}
	nq_init(&o, a);
	if (nb_init(&n, a, b0 + 0)) {
		nput(&o, &n, p0, c0_0);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_0);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_0);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_0);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_0);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_0);
	}
	if (nb_init(&n, a, b0 + 1)) {
		nput(&o, &n, p0, c0_1);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_1);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_1);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_1);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_1);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_1);
	}
	if (nb_init(&n, a, b0 + 2)) {
		nput(&o, &n, p0, c0_2);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_2);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_2);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_2);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_2);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_2);
	}
	if (nb_init(&n, a, b0 + 3)) {
		nput(&o, &n, p0, c0_3);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_3);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_3);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_3);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_3);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_3);
	}
}

static __attribute__((noinline))
void ntile212(const struct npr_qnhwc_args *a, int64_t b0, int64_t p0)
{
	int64_t nq = a->taps * a->cq, bst = nq * 64, t, q;
	int64_t valid = a->npx - p0 < 12 ? a->npx - p0 : 12;
	const int8_t *w = a->w + b0 * bst;
	__m512i c0_0 = _mm512_setzero_si512();
	__m512i c0_1 = c0_0, c1_0 = c0_0, c1_1 = c0_0, c2_0 = c0_0,
		c2_1 = c0_0, c3_0 = c0_0, c3_1 = c0_0, c4_0 = c0_0,
		c4_1 = c0_0, c5_0 = c0_0, c5_1 = c0_0, c6_0 = c0_0,
		c6_1 = c0_0, c7_0 = c0_0, c7_1 = c0_0, c8_0 = c0_0,
		c8_1 = c0_0, c9_0 = c0_0, c9_1 = c0_0, c10_0 = c0_0,
		c10_1 = c0_0, c11_0 = c0_0, c11_1 = c0_0;
	const uint8_t *x[12];
	struct nq o;
	struct nb n;
	int j;

	for (t = 0; t < a->taps; t++) {
		for (j = 0; j < 12; j++)
			x[j] = a->ind[(p0 + (j < valid ? j : valid - 1)) *
				      a->taps + t];
		for (q = 0; q < a->cq; q++, w += 64) {
			__m512i w0 = _mm512_loadu_si512(w);
			__m512i w1 = _mm512_loadu_si512(w + 1 * bst);

			PIX2(0, c0_0, c0_1);
			PIX2(1, c1_0, c1_1);
			PIX2(2, c2_0, c2_1);
			PIX2(3, c3_0, c3_1);
			PIX2(4, c4_0, c4_1);
			PIX2(5, c5_0, c5_1);
			PIX2(6, c6_0, c6_1);
			PIX2(7, c7_0, c7_1);
			PIX2(8, c8_0, c8_1);
			PIX2(9, c9_0, c9_1);
			PIX2(10, c10_0, c10_1);
			PIX2(11, c11_0, c11_1);
		}
	}
	nq_init(&o, a);
	if (nb_init(&n, a, b0 + 0)) {
		nput(&o, &n, p0, c0_0);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_0);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_0);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_0);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_0);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_0);
		if (valid > 6)
			nput(&o, &n, p0 + 6, c6_0);
		if (valid > 7)
			nput(&o, &n, p0 + 7, c7_0);
		if (valid > 8)
			nput(&o, &n, p0 + 8, c8_0);
		if (valid > 9)
			nput(&o, &n, p0 + 9, c9_0);
		if (valid > 10)
			nput(&o, &n, p0 + 10, c10_0);
		if (valid > 11)
			nput(&o, &n, p0 + 11, c11_0);
	}
	if (nb_init(&n, a, b0 + 1)) {
		nput(&o, &n, p0, c0_1);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_1);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_1);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_1);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_1);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_1);
		if (valid > 6)
			nput(&o, &n, p0 + 6, c6_1);
		if (valid > 7)
			nput(&o, &n, p0 + 7, c7_1);
		if (valid > 8)
			nput(&o, &n, p0 + 8, c8_1);
		if (valid > 9)
			nput(&o, &n, p0 + 9, c9_1);
		if (valid > 10)
			nput(&o, &n, p0 + 10, c10_1);
		if (valid > 11)
			nput(&o, &n, p0 + 11, c11_1);
	}
}

static __attribute__((noinline))
void ntile112(const struct npr_qnhwc_args *a, int64_t b0, int64_t p0)
{
	int64_t nq = a->taps * a->cq, bst = nq * 64, t, q;
	int64_t valid = a->npx - p0 < 12 ? a->npx - p0 : 12;
	const int8_t *w = a->w + b0 * bst;
	__m512i c0_0 = _mm512_setzero_si512();
	__m512i c1_0 = c0_0, c2_0 = c0_0, c3_0 = c0_0, c4_0 = c0_0,
		c5_0 = c0_0, c6_0 = c0_0, c7_0 = c0_0, c8_0 = c0_0,
		c9_0 = c0_0, c10_0 = c0_0, c11_0 = c0_0;
	const uint8_t *x[12];
	struct nq o;
	struct nb n;
	int j;

	for (t = 0; t < a->taps; t++) {
		for (j = 0; j < 12; j++)
			x[j] = a->ind[(p0 + (j < valid ? j : valid - 1)) *
				      a->taps + t];
		for (q = 0; q < a->cq; q++, w += 64) {
			__m512i w0 = _mm512_loadu_si512(w);

			PIX1(0, c0_0);
			PIX1(1, c1_0);
			PIX1(2, c2_0);
			PIX1(3, c3_0);
			PIX1(4, c4_0);
			PIX1(5, c5_0);
			PIX1(6, c6_0);
			PIX1(7, c7_0);
			PIX1(8, c8_0);
			PIX1(9, c9_0);
			PIX1(10, c10_0);
			PIX1(11, c11_0);
		}
	}
	nq_init(&o, a);
	if (nb_init(&n, a, b0 + 0)) {
		nput(&o, &n, p0, c0_0);
		if (valid > 1)
			nput(&o, &n, p0 + 1, c1_0);
		if (valid > 2)
			nput(&o, &n, p0 + 2, c2_0);
		if (valid > 3)
			nput(&o, &n, p0 + 3, c3_0);
		if (valid > 4)
			nput(&o, &n, p0 + 4, c4_0);
		if (valid > 5)
			nput(&o, &n, p0 + 5, c5_0);
		if (valid > 6)
			nput(&o, &n, p0 + 6, c6_0);
		if (valid > 7)
			nput(&o, &n, p0 + 7, c7_0);
		if (valid > 8)
			nput(&o, &n, p0 + 8, c8_0);
		if (valid > 9)
			nput(&o, &n, p0 + 9, c9_0);
		if (valid > 10)
			nput(&o, &n, p0 + 10, c10_0);
		if (valid > 11)
			nput(&o, &n, p0 + 11, c11_0);
	}
}

#undef PIX1
#undef PIX2
#undef PIX4
#undef XB

/* the table once the block is written: in one run if it lies in one */
static void late_lut(const struct npr_qnhwc_args *a)
{
	int64_t p;

	if (a->ldy == a->m) {
		lut_vbmi(a->y, a->npx * a->m, a->lut8);
		return;
	}
	for (p = 0; p < a->npx; p++)
		lut_vbmi((uint8_t *)a->y + p * a->ldy, a->m, a->lut8);
}

/**
 * npr_qnhwc_vnni512() - NprQConv's kernel of blocked weights, AVX-512
 *                       VNNI
 * @a: the pixels and channels (ref/kernels/qgemm.h).
 */
void npr_qnhwc_vnni512(const struct npr_qnhwc_args *a)
{
	int64_t b = 0, p;
	bool late = a->lut && a->lut8 && !a->f32out && have_vbmi();

	while (b < a->kb) {
		int64_t left = a->kb - b;

		if (left >= 4) {
			for (p = 0; p < a->npx; p += 6)
				ntile46(a, b, p);
			b += 4;
		} else if (left >= 2) {
			for (p = 0; p < a->npx; p += 12)
				ntile212(a, b, p);
			b += 2;
		} else {
			for (p = 0; p < a->npx; p += 12)
				ntile112(a, b, p);
			b++;
		}
	}
	if (late)
		late_lut(a);
}

/*
 * The depthwise kernel of blocked weights: per block of 16 channels and
 * pixel, each group of four taps' 16 input bytes goes into one vector
 * of four taps a channel lane (vpdpbusd's operand), by a byte permute
 * with AVX512_VBMI, else by unpacks.  Missing taps of the last group
 * read zeros (their weights are zero).
 */
static inline __m512i dw_unpack(__m128i x0, __m128i x1, __m128i x2,
				__m128i x3)
{
	__m128i a = _mm_unpacklo_epi8(x0, x1), b = _mm_unpackhi_epi8(x0, x1);
	__m128i c = _mm_unpacklo_epi8(x2, x3), d = _mm_unpackhi_epi8(x2, x3);
	__m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(a, c));

	v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(a, c), 1);
	v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(b, d), 2);
	return _mm512_inserti32x4(v, _mm_unpackhi_epi16(b, d), 3);
}

/* four taps (@nt of them there, the rest zero) of the block's channels */
static inline void dw_load4(__m128i x[4], const uint8_t *const *ip,
			    int64_t nt, int64_t c0, __mmask16 mk)
{
	int t;

	for (t = 0; t < 4; t++)
		x[t] = t < nt ? _mm_maskz_loadu_epi8(mk, ip[t] + c0) :
				_mm_setzero_si128();
}

#define DW_KERNEL(name, attr, GET)					\
attr void name(const struct npr_qnhwc_args *a)				\
{									\
	bool late = a->lut && a->lut8 && !a->f32out && have_vbmi();	\
	struct nq o;							\
	struct nb n;							\
	int64_t b, p, g;						\
									\
	nq_init(&o, a);							\
	for (b = 0; b < a->kb && nb_init(&n, a, b); b++) {		\
		const int8_t *w = a->w + b * a->cq * 64;		\
		int64_t c0 = a->xc0 + b * 16;				\
									\
		for (p = 0; p < a->npx; p++) {				\
			const uint8_t *const *ip = a->ind + p * a->taps; \
			__m512i acc = _mm512_setzero_si512();		\
									\
			for (g = 0; g < a->cq; g++, ip += 4) {		\
				__m128i x[4];				\
				__m512i v;				\
									\
				dw_load4(x, ip, a->taps - 4 * g, c0, n.mk); \
				v = GET(x[0], x[1], x[2], x[3]);	\
				DPBUSD(acc, v,				\
				       _mm512_loadu_si512(w + g * 64));	\
			}						\
			nput(&o, &n, p, acc);				\
		}							\
	}								\
	if (late)							\
		late_lut(a);						\
}

#define DW_VBMI(x0, x1, x2, x3)						\
	_mm512_permutexvar_epi8(idx, _mm512_inserti32x4(		\
		_mm512_inserti32x4(_mm512_inserti32x4(			\
			_mm512_castsi128_si512(x0), x1, 1), x2, 2), x3, 3))

/* byte 4 l + s of the interleaved vector is byte l of tap s */
#define DW_IDX_INIT							\
	__m512i idx = _mm512_set_epi32(					\
		0x3f2f1f0f, 0x3e2e1e0e, 0x3d2d1d0d, 0x3c2c1c0c,		\
		0x3b2b1b0b, 0x3a2a1a0a, 0x39291909, 0x38281808,		\
		0x37271707, 0x36261606, 0x35251505, 0x34241404,		\
		0x33231303, 0x32221202, 0x31211101, 0x30201000)

/**
 * npr_qdwn_vnni512_unpack() - NprQConv's depthwise kernel of blocked
 *                             weights, AVX-512 VNNI with unpacks
 * @a: the pixels and channels (ref/kernels/qgemm.h).
 */
DW_KERNEL(npr_qdwn_vnni512_unpack, , dw_unpack)

static __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
__m512i dw_vbmi(__m128i x0, __m128i x1, __m128i x2, __m128i x3)
{
	DW_IDX_INIT;

	return DW_VBMI(x0, x1, x2, x3);
}

/**
 * npr_qdwn_vnni512_vbmi() - NprQConv's depthwise kernel of blocked
 *                           weights, AVX-512 VNNI with byte permutes
 * @a: the pixels and channels (ref/kernels/qgemm.h); only on a CPU with
 *     AVX512_VBMI.
 */
DW_KERNEL(npr_qdwn_vnni512_vbmi,
	  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))),
	  dw_vbmi)

/**
 * npr_qdwn_vnni512() - NprQConv's depthwise kernel of blocked weights,
 *                      AVX-512 VNNI (byte permutes where the CPU has them)
 * @a: the pixels and channels (ref/kernels/qgemm.h).
 */
void npr_qdwn_vnni512(const struct npr_qnhwc_args *a)
{
	if (have_vbmi())
		npr_qdwn_vnni512_vbmi(a);
	else
		npr_qdwn_vnni512_unpack(a);
}
