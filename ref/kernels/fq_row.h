/* SPDX-License-Identifier: MIT */
/*
 * The FakeQuantize row of fq.h, written once and compiled twice.  Define
 * FQ_ROW to the build's name first.  Branch-free so that it vectorises:
 * the quantised value is computed for every element and replaced by
 * output_low / output_high outside the input range, as the scalar
 * formula does (a NaN input stays NaN).
 */
#include <math.h>

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
