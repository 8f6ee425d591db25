// SPDX-License-Identifier: MIT
/*
 * NprQConv's matrix kernel with AVX-VNNI (the VEX-encoded vpdpbusd of
 * client cores and Zen 4/5), built with -mavx2 -mfma -mavxvnni;
 * ref/kernels/quant.c calls it only when CPUID reports AVX_VNNI.
 */
#include <immintrin.h>

#define DOT(acc, x, w)	_mm256_dpbusd_avx_epi32(acc, x, w)
#define KERN		npr_qgemm_avxvnni
#include "qgemm_avx256.h"
