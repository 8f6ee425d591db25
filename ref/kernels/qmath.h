/* SPDX-License-Identifier: MIT */
/*
 * The float steps the scalar int8 kernels (ref/kernels/quant.c,
 * ref/kernels/qnhwc.c) share with their vector variants.
 */
#ifndef NPR_REF_KERNELS_QMATH_H
#define NPR_REF_KERNELS_QMATH_H

/*
 * Round to nearest, ties to even, as nearbyintf() in the default mode,
 * for |v| <= 1024 (callers clamp first): adding 1.5 x 2^23 leaves no
 * fraction bits.  x86 min/max semantics (the second operand when either
 * is NaN), as the vector kernels compute them.
 */
static inline float rne(float v)
{
	return (v + 12582912.0f) - 12582912.0f;
}

static inline float vmax(float a, float b)
{
	return a > b ? a : b;
}

static inline float vmin(float a, float b)
{
	return a < b ? a : b;
}

#endif /* NPR_REF_KERNELS_QMATH_H */
