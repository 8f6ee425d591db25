/* SPDX-License-Identifier: MIT */
/*
 * The element-wise kernels of the low-precision ops (NprQuantize,
 * NprDequantize, NprQAdd, NprQLut: lib/ops/quant.h), one set per ISA:
 * scalar in ref/kernels/quant.c, AVX-512 and AVX2 in ref/arch/x86/
 * (built with their own -m flags and -ffp-contract=off, chosen by CPUID
 * or by NPR_INT8_ISA).  Every variant does the float operations of the
 * scalar one in the same order (the division by the scale included, x86
 * max/min for the clamps, rounding half to even), so all of them give the
 * same bits.  Pointers need no alignment; @n is any count.
 */
#ifndef NPR_REF_KERNELS_QEW_H
#define NPR_REF_KERNELS_QEW_H

#include <stdint.h>

#include "ops/quant.h"

/* y = clamp(rint(clamp(x / sy, -1024, 1024)) + zy, 0, 255) */
typedef void (*npr_qew_quantize_fn)(const float *x, uint8_t *y, int64_t n,
				    float sy, int zy);
/* y = (x - za) * sa */
typedef void (*npr_qew_dequantize_fn)(const uint8_t *x, float *y, int64_t n,
				      float sa, int za);
/* NprQAdd with the scales, zero points and bounds of @p */
typedef void (*npr_qew_add_fn)(const uint8_t *a, const uint8_t *b,
			       uint8_t *y, int64_t n,
			       const struct npr_quant_params *p);
/* y = t[x], t 256 bytes */
typedef void (*npr_qew_lut_fn)(const uint8_t *x, const uint8_t *t,
			       uint8_t *y, int64_t n);

/**
 * struct npr_qew_kern - a variant
 * @name: "avx512vbmi", "avx512", "avx2" or "scalar".
 * @quantize: NprQuantize.
 * @dequantize: NprDequantize.
 * @add: NprQAdd.
 * @lut: NprQLut.
 */
struct npr_qew_kern {
	const char *name;
	npr_qew_quantize_fn quantize;
	npr_qew_dequantize_fn dequantize;
	npr_qew_add_fn add;
	npr_qew_lut_fn lut;
};

const struct npr_qew_kern *npr_qew_get(const char *name);
const struct npr_qew_kern *npr_qew_best(void);

/* ref/arch/x86/qew_avx512.c (-mavx512f -mavx512bw; VBMI: the _vbmi one) */
void npr_qew_quantize_avx512(const float *x, uint8_t *y, int64_t n, float sy,
			     int zy);
void npr_qew_dequantize_avx512(const uint8_t *x, float *y, int64_t n,
			       float sa, int za);
void npr_qew_add_avx512(const uint8_t *a, const uint8_t *b, uint8_t *y,
			int64_t n, const struct npr_quant_params *p);
void npr_qew_lut_avx512(const uint8_t *x, const uint8_t *t, uint8_t *y,
			int64_t n);
void npr_qew_lut_avx512vbmi(const uint8_t *x, const uint8_t *t, uint8_t *y,
			    int64_t n);
/* ref/arch/x86/qew_avx2.c (-mavx2) */
void npr_qew_quantize_avx2(const float *x, uint8_t *y, int64_t n, float sy,
			   int zy);
void npr_qew_dequantize_avx2(const uint8_t *x, float *y, int64_t n, float sa,
			     int za);
void npr_qew_add_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y,
		      int64_t n, const struct npr_quant_params *p);
void npr_qew_lut_avx2(const uint8_t *x, const uint8_t *t, uint8_t *y,
		      int64_t n);

#endif /* NPR_REF_KERNELS_QEW_H */
