/* SPDX-License-Identifier: MIT */
/*
 * Helpers of kernels_test.c and kernels_conv_test.c: the micro-kernels to
 * try, pseudo-random inputs, and the error of a fast kernel's output
 * against the reference's.
 */
#ifndef KERNELS_UTIL_H
#define KERNELS_UTIL_H

#include <math.h>
#include <stdint.h>

/* The GEMM micro-kernels, by name; those this CPU lacks are skipped. */
static const char *const kerns[] = { "avx512", "avx2", "scalar" };

/* @n pseudo-random values in [-1, 1], the same for the same @seed. */
static inline void fill(float *p, int64_t n, unsigned int seed)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
	}
}

/* max |a - b| relative to max(1, max |b|) */
static inline double rel_err(const float *a, const float *b, int64_t n)
{
	double d = 0, m = 1;
	int64_t i;

	for (i = 0; i < n; i++) {
		double e = fabs((double)a[i] - b[i]);

		if (!(e <= d))
			d = e != e ? INFINITY : e;
		if (fabs(b[i]) > m)
			m = fabs(b[i]);
	}
	return d / m;
}

#endif /* KERNELS_UTIL_H */
