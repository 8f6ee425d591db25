// SPDX-License-Identifier: MIT
/*
 * NprQConv's matrix kernel with AVX-VNNI (the VEX-encoded vpdpbusd of
 * client cores and Zen 4/5), built with -mavx2 -mfma -mavxvnni;
 * ref/kernels/quant.c calls it only when CPUID reports AVX_VNNI.
 */
#include <immintrin.h>

/* in place (the intrinsic makes GCC 12 copy accumulators around) */
static inline __m256i dot(__m256i acc, __m256i x, __m256i w)
{
	__asm__("%{vex%} vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
	return acc;
}

#define DOT(acc, x, w)	dot(acc, x, w)
#define KERN		npr_qgemm_avxvnni
#define KERN_NHWC	npr_qnhwc_avxvnni
#define KERN_DW		npr_qdwn_avxvnni
#include "qgemm_avx256.h"
