/* SPDX-License-Identifier: MIT */
/*
 * The FakeQuantize row of fq.h, written once and compiled twice: in
 * ref/kernels/eltwise.c for any CPU and in ref/arch/x86/fq_avx512.c with
 * -mavx512f.  Define FQ_ROW to the build's name first: the suffix
 * _generic names the portable build, _avx512 the one that runs only where
 * CPUID reports AVX-512F.  The function is documented once below, under
 * its _generic name; the _avx512 build takes the same arguments and gives
 * the same bits.
 */
#include <math.h>

/**
 * npr_fq_row_generic() - FakeQuantize of one row with one set of limits
 * @x: the input, @len floats.
 * @y: Out. The output, @len floats.
 * @len: the row's length.
 * @il: input_low.
 * @ih: input_high.
 * @ol: output_low.
 * @oh: output_high.
 * @lm1: levels - 1.
 * @small: @lm1 < 2^22: rounding to nearest, ties to even, by adding and
 *         removing 1.5 * 2^23 instead of nearbyintf() (see fq.h).
 *
 * Branch-free so that it vectorises: the quantised value is computed for
 * every element and replaced by output_low / output_high outside the
 * input range, as the scalar formula does (a NaN input stays NaN).  Also
 * npr_fq_row_avx512() (see the top of this file).
 */
void FQ_ROW(const float *x, float *y, int64_t len, float il, float ih,
	    float ol, float oh, float lm1, bool small)
{
	const float lo = il < ih ? il : ih, hi = il > ih ? il : ih;
	const float range = ih - il, out = oh - ol;
	const float magic = 12582912.0f;	/* 1.5 * 2^23 */
	int64_t j;

	if (small) {
		for (j = 0; j < len; j++) {
			float v = x[j], q = (v - il) / range * lm1;

			q = (q + magic) - magic;
			q = q / lm1 * out + ol;
			y[j] = v <= lo ? ol : v > hi ? oh : q;
		}
		return;
	}
	for (j = 0; j < len; j++) {
		float v = x[j], q = (v - il) / range * lm1;

		q = nearbyintf(q) / lm1 * out + ol;
		y[j] = v <= lo ? ol : v > hi ? oh : q;
	}
}
