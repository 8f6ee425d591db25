/* SPDX-License-Identifier: MIT */
/*
 * FakeQuantize rows: fq_row.h compiled in eltwise.c for any CPU and in
 * ref/arch/x86/fq_avx512.c with -mavx512f -O3 -ffp-contract=off.  Both
 * builds give the same bits as the scalar formula of
 * npr_ref_fake_quantize(): the same operations in the same order, IEEE
 * single precision, no FMA.
 */
#ifndef NPR_REF_FQ_H
#define NPR_REF_FQ_H

#include <stdbool.h>
#include <stdint.h>

/*
 * y[j] = FakeQuantize(x[j]) for j < len with one set of limits
 * (il, ih, ol, oh) and lm1 = levels - 1; @small: lm1 < 2^22, so
 * rounding to nearest, ties to even, may add and remove 1.5 * 2^23
 * (for 0 <= |q| < 2^22 that leaves no fraction bits in the default
 * rounding mode, and vectorises where nearbyintf() would be a call).
 */
void npr_fq_row_generic(const float *x, float *y, int64_t len, float il,
			float ih, float ol, float oh, float lm1, bool small);
void npr_fq_row_avx512(const float *x, float *y, int64_t len, float il,
		       float ih, float ol, float oh, float lm1, bool small);

#endif /* NPR_REF_FQ_H */
