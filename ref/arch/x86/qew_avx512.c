// SPDX-License-Identifier: MIT
/*
 * The element-wise low-precision kernels (ref/kernels/qew.h) with
 * AVX-512, built with -mavx512f -mavx512bw -ffp-contract=off (a
 * contracted multiply-add would round once where the scalar kernels
 * round twice); ref/kernels/quant.c calls them only when CPUID reports
 * AVX512F and BW, and the VBMI table only with AVX512_VBMI too.
 *
 * 64 elements per step (one 64-byte load or store of the u8 side, four
 * vectors of 16 f32 lanes, so four divisions in flight), the last step
 * masked.  The float operations are the scalar kernels' in their order:
 * vmaxps/vminps return their second operand when either is NaN, as the
 * scalar vmax()/vmin() do, and rounding adds and subtracts 1.5 x 2^23.
 */
#include <immintrin.h>
#include <stdint.h>

#include "ref/kernels/qew.h"

#define RNE_MAGIC	12582912.0f

static inline __mmask64 mask64(int64_t left)
{
	return left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
}

static inline __mmask16 mask16(int64_t left)
{
	if (left <= 0)
		return 0;
	return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

/* lanes 16j..16j+15 of @v as f32 */
static inline __m512 u8_to_f32(__m512i v, int j)
{
	__m128i q;

	switch (j) {
	case 0:
		q = _mm512_extracti32x4_epi32(v, 0);
		break;
	case 1:
		q = _mm512_extracti32x4_epi32(v, 1);
		break;
	case 2:
		q = _mm512_extracti32x4_epi32(v, 2);
		break;
	default:
		q = _mm512_extracti32x4_epi32(v, 3);
		break;
	}
	return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q));
}

/*
 * v / s clamped to [-1024, 1024], rounded half to even, plus z, clamped
 * to [lo, hi]: as bytes (the values are integers in [0, 255])
 */
static inline __m128i requant(__m512 v, __m512 s, __m512 z, __m512 lo,
			      __m512 hi)
{
	const __m512 magic = _mm512_set1_ps(RNE_MAGIC);

	v = _mm512_div_ps(v, s);
	v = _mm512_max_ps(v, _mm512_set1_ps(-1024.0f));
	v = _mm512_min_ps(v, _mm512_set1_ps(1024.0f));
	v = _mm512_sub_ps(_mm512_add_ps(v, magic), magic);
	v = _mm512_add_ps(v, z);
	v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
	return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v));
}

static inline __m512i join4(__m128i a, __m128i b, __m128i c, __m128i d)
{
	__m512i r = _mm512_castsi128_si512(a);

	r = _mm512_inserti32x4(r, b, 1);
	r = _mm512_inserti32x4(r, c, 2);
	return _mm512_inserti32x4(r, d, 3);
}

/**
 * npr_qew_quantize_avx512() - NprQuantize with AVX-512
 * @x: @n floats.
 * @y: @n bytes out.
 * @n: elements.
 * @sy: the scale x is divided by.
 * @zy: the zero point added.
 */
void npr_qew_quantize_avx512(const float *x, uint8_t *y, int64_t n, float sy,
			     int zy)
{
	const __m512 s = _mm512_set1_ps(sy), z = _mm512_set1_ps((float)zy);
	const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255.0f);
	int64_t i;

	for (i = 0; i < n; i += 64) {
		int64_t left = n - i;
		__m128i r[4];
		int j;

		for (j = 0; j < 4; j++) {
			__mmask16 m = mask16(left - 16 * j);
			__m512 v = _mm512_maskz_loadu_ps(m, x + i + 16 * j);

			r[j] = requant(v, s, z, lo, hi);
		}
		_mm512_mask_storeu_epi8(y + i, mask64(left),
					join4(r[0], r[1], r[2], r[3]));
	}
}

/**
 * npr_qew_dequantize_avx512() - NprDequantize with AVX-512
 * @x: @n bytes.
 * @y: @n floats out.
 * @n: elements.
 * @sa: the scale.
 * @za: the zero point.
 */
void npr_qew_dequantize_avx512(const uint8_t *x, float *y, int64_t n,
			       float sa, int za)
{
	const __m512 s = _mm512_set1_ps(sa), z = _mm512_set1_ps((float)za);
	int64_t i;
	int j;

	for (i = 0; i < n; i += 64) {
		int64_t left = n - i;
		__m512i v = _mm512_maskz_loadu_epi8(mask64(left), x + i);

		for (j = 0; j < 4; j++) {
			__m512 f = _mm512_mul_ps(_mm512_sub_ps(u8_to_f32(v, j),
							       z), s);

			_mm512_mask_storeu_ps(y + i + 16 * j,
					      mask16(left - 16 * j), f);
		}
	}
}

/**
 * npr_qew_add_avx512() - NprQAdd with AVX-512
 * @a: @n bytes.
 * @b: @n bytes.
 * @y: @n bytes out.
 * @n: elements.
 * @p: the scales, zero points and bounds.
 */
void npr_qew_add_avx512(const uint8_t *a, const uint8_t *b, uint8_t *y,
			int64_t n, const struct npr_quant_params *p)
{
	const __m512 za = _mm512_set1_ps((float)p->za);
	const __m512 zb = _mm512_set1_ps((float)p->zb);
	const __m512 sa = _mm512_set1_ps(p->sa), sb = _mm512_set1_ps(p->sb);
	const __m512 sy = _mm512_set1_ps(p->sy);
	const __m512 zy = _mm512_set1_ps((float)p->zy);
	const __m512 lo = _mm512_set1_ps((float)p->lo);
	const __m512 hi = _mm512_set1_ps((float)p->hi);
	int64_t i;

	for (i = 0; i < n; i += 64) {
		__mmask64 m = mask64(n - i);
		__m512i va = _mm512_maskz_loadu_epi8(m, a + i);
		__m512i vb = _mm512_maskz_loadu_epi8(m, b + i);
		__m128i r[4];
		int j;

		for (j = 0; j < 4; j++) {
			__m512 fa = _mm512_mul_ps(_mm512_sub_ps(
					u8_to_f32(va, j), za), sa);
			__m512 fb = _mm512_mul_ps(_mm512_sub_ps(
					u8_to_f32(vb, j), zb), sb);

			r[j] = requant(_mm512_add_ps(fa, fb), sy, zy, lo, hi);
		}
		_mm512_mask_storeu_epi8(y + i, m,
					join4(r[0], r[1], r[2], r[3]));
	}
}

/**
 * npr_qew_lut_avx512() - NprQLut with AVX512BW
 * @x: @n bytes.
 * @t: the 256-byte table.
 * @y: @n bytes out, t[x].
 * @n: elements.
 *
 * Sixteen byte shuffles of 16-entry rows per 64 results, each merged
 * where the high nibble selects its row.
 */
void npr_qew_lut_avx512(const uint8_t *x, const uint8_t *t, uint8_t *y,
			int64_t n)
{
	const __m512i nib = _mm512_set1_epi8(0x0f);
	__m512i row[16];
	int64_t i;
	int k;

	for (k = 0; k < 16; k++)
		row[k] = _mm512_broadcast_i32x4(
				_mm_loadu_si128((const __m128i *)(t + 16 * k)));
	for (i = 0; i < n; i += 64) {
		__mmask64 m = mask64(n - i);
		__m512i v = _mm512_maskz_loadu_epi8(m, x + i);
		__m512i l = _mm512_and_si512(v, nib);
		__m512i h = _mm512_and_si512(_mm512_srli_epi16(v, 4), nib);
		__m512i r = _mm512_setzero_si512();

		for (k = 0; k < 16; k++)
			r = _mm512_mask_shuffle_epi8(r,
				_mm512_cmpeq_epi8_mask(h, _mm512_set1_epi8(k)),
				row[k], l);
		_mm512_mask_storeu_epi8(y + i, m, r);
	}
}

/**
 * npr_qew_lut_avx512vbmi() - NprQLut with AVX512_VBMI
 * @x: @n bytes.
 * @t: the 256-byte table.
 * @y: @n bytes out, t[x].
 * @n: elements.
 *
 * Two two-register byte permutes (128 entries each) per 64 results, the
 * high bit choosing between them.
 */
__attribute__((target("avx512f,avx512bw,avx512vbmi")))
void npr_qew_lut_avx512vbmi(const uint8_t *x, const uint8_t *t, uint8_t *y,
			    int64_t n)
{
	__m512i t0 = _mm512_loadu_si512(t), t1 = _mm512_loadu_si512(t + 64);
	__m512i t2 = _mm512_loadu_si512(t + 128);
	__m512i t3 = _mm512_loadu_si512(t + 192);
	int64_t i;

	for (i = 0; i < n; i += 64) {
		__mmask64 m = mask64(n - i);
		__m512i v = _mm512_maskz_loadu_epi8(m, x + i);
		__m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
		__m512i hi = _mm512_permutex2var_epi8(t2, v, t3);

		_mm512_mask_storeu_epi8(y + i, m,
			_mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
	}
}
