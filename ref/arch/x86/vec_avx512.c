// SPDX-License-Identifier: MIT
/*
 * ref/kernels/vec.h built with -mavx512f -mfma -O3; ref/kernels/nn.c
 * calls these only when CPUID reports AVX-512F.
 */
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ref/conv/conv.h"

#define VEC(name) npr_##name##_avx512
#include "ref/kernels/vec.h"
