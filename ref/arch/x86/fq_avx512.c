// SPDX-License-Identifier: MIT
/*
 * ref/kernels/fq_row.h built with -mavx512f -O3 -ffp-contract=off;
 * ref/kernels/eltwise.c calls it only when CPUID reports AVX-512F.
 */
#include "ref/kernels/fq.h"

#define FQ_ROW npr_fq_row_avx512
#include "ref/kernels/fq_row.h"
