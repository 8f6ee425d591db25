// SPDX-License-Identifier: MIT
/*
 * The Winograd F(2x2, 3x3) transforms (ref/conv/wino.h) built with
 * -mavx512f -mfma -O3; ref/conv/run.c calls them only on plans that
 * ref/conv/conv.c made after CPUID reported AVX-512F.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ref/conv/conv.h"

#define WINO_IN npr_wino_in_avx512
#define WINO_OUT npr_wino_out_avx512
#define WINO_ROW wino_row_avx512
#include "ref/conv/wino.h"
