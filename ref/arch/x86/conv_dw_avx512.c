// SPDX-License-Identifier: MIT
/*
 * The depthwise plane kernel (ref/conv/conv_dw.h) built with -mavx512f
 * -mfma -O3; ref/conv/conv.c picks it only when CPUID reports AVX-512F.
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "ref/conv/conv.h"

#define DW_PLANE npr_dw_plane_avx512
#define DW_FLAT npr_dw_flat_avx512
#define DW_FLAT2 dw_flat2_avx512
#define DW_AXPY dw_axpy_avx512
#define DW_VEC npr_dw_vec_avx512
#define DW_RUN npr_dw_run_avx512
#include "ref/conv/conv_dw.h"

#define PACK_IM2COL npr_pack_im2col_avx512
#define UNPAD_ROWS npr_unpad_rows_avx512
#include "ref/conv/conv_pack.h"
