// SPDX-License-Identifier: MIT
/*
 * The element-wise low-precision kernels (ref/kernels/qew.h) with AVX2,
 * built with -mavx2 -ffp-contract=off; ref/kernels/quant.c calls them
 * only when CPUID reports AVX2.
 *
 * 32 elements per step (one 32-byte load or store of the u8 side, four
 * vectors of 8 f32 lanes); the last, partial step runs on a copy padded
 * with zeros.  The float operations are the scalar kernels' in their
 * order: vmaxps/vminps return their second operand when either is NaN,
 * as the scalar vmax()/vmin() do, and rounding adds and subtracts
 * 1.5 x 2^23.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ref/kernels/qew.h"

#define RNE_MAGIC	12582912.0f
#define STEP		32

/* the 8 bytes at @p as f32 */
static inline __m256 u8_to_f32(const uint8_t *p)
{
	return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
			_mm_loadl_epi64((const __m128i *)p)));
}

/*
 * v / s clamped to [-1024, 1024], rounded half to even, plus z, clamped
 * to [lo, hi], as i32 (integers in [0, 255])
 */
static inline __m256i requant(__m256 v, __m256 s, __m256 z, __m256 lo,
			      __m256 hi)
{
	const __m256 magic = _mm256_set1_ps(RNE_MAGIC);

	v = _mm256_div_ps(v, s);
	v = _mm256_max_ps(v, _mm256_set1_ps(-1024.0f));
	v = _mm256_min_ps(v, _mm256_set1_ps(1024.0f));
	v = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
	v = _mm256_add_ps(v, z);
	v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
	return _mm256_cvttps_epi32(v);
}

/* four vectors of 8 values in [0, 255] as 32 bytes, in order */
static inline void store32(uint8_t *y, __m256i a, __m256i b, __m256i c,
			   __m256i d)
{
	__m256i r = _mm256_packus_epi16(_mm256_packs_epi32(a, b),
					_mm256_packs_epi32(c, d));

	/* the packs interleave 128-bit lanes: dwords a0 b0 c0 d0 a1 b1 c1 d1 */
	r = _mm256_permutevar8x32_epi32(r, _mm256_setr_epi32(0, 4, 1, 5,
							     2, 6, 3, 7));
	_mm256_storeu_si256((__m256i *)y, r);
}

static void quantize32(const float *x, uint8_t *y, __m256 s, __m256 z)
{
	const __m256 lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(255.0f);
	__m256i r[4];
	int j;

	for (j = 0; j < 4; j++)
		r[j] = requant(_mm256_loadu_ps(x + 8 * j), s, z, lo, hi);
	store32(y, r[0], r[1], r[2], r[3]);
}

/**
 * npr_qew_quantize_avx2() - NprQuantize with AVX2
 * @x: @n floats.
 * @y: @n bytes out.
 * @n: elements.
 * @sy: the scale x is divided by.
 * @zy: the zero point added.
 */
void npr_qew_quantize_avx2(const float *x, uint8_t *y, int64_t n, float sy,
			   int zy)
{
	const __m256 s = _mm256_set1_ps(sy), z = _mm256_set1_ps((float)zy);
	float tx[STEP] = { 0 };
	uint8_t ty[STEP];
	int64_t i;

	for (i = 0; i + STEP <= n; i += STEP)
		quantize32(x + i, y + i, s, z);
	if (i == n)
		return;
	memcpy(tx, x + i, (n - i) * sizeof(*x));
	quantize32(tx, ty, s, z);
	memcpy(y + i, ty, n - i);
}

static void dequantize32(const uint8_t *x, float *y, __m256 s, __m256 z)
{
	int j;

	for (j = 0; j < 4; j++) {
		__m256 f = _mm256_sub_ps(u8_to_f32(x + 8 * j), z);

		_mm256_storeu_ps(y + 8 * j, _mm256_mul_ps(f, s));
	}
}

/**
 * npr_qew_dequantize_avx2() - NprDequantize with AVX2
 * @x: @n bytes.
 * @y: @n floats out.
 * @n: elements.
 * @sa: the scale.
 * @za: the zero point.
 */
void npr_qew_dequantize_avx2(const uint8_t *x, float *y, int64_t n, float sa,
			     int za)
{
	const __m256 s = _mm256_set1_ps(sa), z = _mm256_set1_ps((float)za);
	uint8_t tx[STEP] = { 0 };
	float ty[STEP];
	int64_t i;

	for (i = 0; i + STEP <= n; i += STEP)
		dequantize32(x + i, y + i, s, z);
	if (i == n)
		return;
	memcpy(tx, x + i, n - i);
	dequantize32(tx, ty, s, z);
	memcpy(y + i, ty, (n - i) * sizeof(*y));
}

struct addc {
	__m256 za, zb, sa, sb, sy, zy, lo, hi;
};

static void add32(const uint8_t *a, const uint8_t *b, uint8_t *y,
		  const struct addc *c)
{
	__m256i r[4];
	int j;

	for (j = 0; j < 4; j++) {
		__m256 fa = _mm256_mul_ps(_mm256_sub_ps(u8_to_f32(a + 8 * j),
							c->za), c->sa);
		__m256 fb = _mm256_mul_ps(_mm256_sub_ps(u8_to_f32(b + 8 * j),
							c->zb), c->sb);

		r[j] = requant(_mm256_add_ps(fa, fb), c->sy, c->zy, c->lo,
			       c->hi);
	}
	store32(y, r[0], r[1], r[2], r[3]);
}

/**
 * npr_qew_add_avx2() - NprQAdd with AVX2
 * @a: @n bytes.
 * @b: @n bytes.
 * @y: @n bytes out.
 * @n: elements.
 * @p: the scales, zero points and bounds.
 */
void npr_qew_add_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y,
		      int64_t n, const struct npr_quant_params *p)
{
	const struct addc c = {
		.za = _mm256_set1_ps((float)p->za),
		.zb = _mm256_set1_ps((float)p->zb),
		.sa = _mm256_set1_ps(p->sa), .sb = _mm256_set1_ps(p->sb),
		.sy = _mm256_set1_ps(p->sy),
		.zy = _mm256_set1_ps((float)p->zy),
		.lo = _mm256_set1_ps((float)p->lo),
		.hi = _mm256_set1_ps((float)p->hi),
	};
	uint8_t ta[STEP] = { 0 }, tb[STEP] = { 0 }, ty[STEP];
	int64_t i;

	for (i = 0; i + STEP <= n; i += STEP)
		add32(a + i, b + i, y + i, &c);
	if (i == n)
		return;
	memcpy(ta, a + i, n - i);
	memcpy(tb, b + i, n - i);
	add32(ta, tb, ty, &c);
	memcpy(y + i, ty, n - i);
}

/*
 * t[x] for 32 bytes: per row of 16 entries, a shuffle kept where the high
 * nibble selects the row
 */
static inline __m256i lut32(__m256i v, const __m256i row[16])
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	__m256i l = _mm256_and_si256(v, nib);
	__m256i h = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
	__m256i r = _mm256_setzero_si256();
	int k;

	for (k = 0; k < 16; k++) {
		__m256i sel = _mm256_cmpeq_epi8(h, _mm256_set1_epi8((char)k));

		r = _mm256_or_si256(r, _mm256_and_si256(sel,
				_mm256_shuffle_epi8(row[k], l)));
	}
	return r;
}

/**
 * npr_qew_lut_avx2() - NprQLut with AVX2
 * @x: @n bytes.
 * @t: the 256-byte table.
 * @y: @n bytes out, t[x].
 * @n: elements.
 */
void npr_qew_lut_avx2(const uint8_t *x, const uint8_t *t, uint8_t *y,
		      int64_t n)
{
	__m256i row[16];
	uint8_t tx[STEP] = { 0 }, ty[STEP];
	__m256i v;
	int64_t i;
	int k;

	for (k = 0; k < 16; k++)
		row[k] = _mm256_broadcastsi128_si256(
				_mm_loadu_si128((const __m128i *)(t + 16 * k)));
	for (i = 0; i + STEP <= n; i += STEP)
		_mm256_storeu_si256((__m256i *)(y + i),
			lut32(_mm256_loadu_si256((const __m256i *)(x + i)),
			      row));
	if (i == n)
		return;
	memcpy(tx, x + i, n - i);
	v = _mm256_loadu_si256((const __m256i *)tx);
	_mm256_storeu_si256((__m256i *)ty, lut32(v, row));
	memcpy(y + i, ty, n - i);
}
