/* SPDX-License-Identifier: MIT */
/*
 * The u8 x s8 matrix kernels behind NprQConv (ref/kernels/quant.c), one
 * per ISA: scalar here, AVX-512 VNNI, AVX-VNNI and AVX2 in ref/arch/x86/
 * (chosen by CPUID, or by NPR_INT8_ISA).  Every variant computes the same
 * exact integer sums and the same float write-out (fmaf, then rounding
 * to nearest even), so all of them give the same bits.
 *
 * Operands: w, @m rows of @kr signed bytes (the output channels);
 * x, the packed activations: @kr / 4 groups of @ldx pixels of 4
 * consecutive reduction bytes each (x[(q * ldx + p) * 4 + t] is
 * reduction index 4q + t of pixel p), @ldx a multiple of 32, pixels from
 * @npx to @ldx readable.  Output row r, pixel p: y[r * ldy + p].
 */
#ifndef NPR_REF_KERNELS_QGEMM_H
#define NPR_REF_KERNELS_QGEMM_H

#include <stdbool.h>
#include <stdint.h>

/**
 * struct npr_qgemm_args - one block of NprQConv's output
 * @w: the weights, @m rows of @kr bytes.
 * @x: the packed activations.
 * @kr: reduction length, a multiple of 4.
 * @ldx: pixels per packed group.
 * @m: rows.
 * @npx: pixels.
 * @comp: per row, subtracted from the sum (x zero point x row sum).
 * @mul: per row, the scale of the centred sum.
 * @add: per row, added after it.
 * @div: u8: the output scale the result is divided by then.
 * @f32out: write f32 (else u8).
 * @zy: u8: the zero point added after rounding.
 * @lo: u8: the smallest value.
 * @hi: u8: the largest.
 * @flo: f32: the lower bound.
 * @fhi: f32: the upper bound.
 * @y: the output of row 0, pixel 0.
 * @ldy: elements from one row to the next.
 * @lut: u8: NULL, or a table each result is mapped through (256 values,
 *       widened to i32 for gathers).
 * @lut8: the same table as bytes (for byte permutes).
 */
struct npr_qgemm_args {
	const int8_t *w;
	const uint8_t *x;
	int64_t kr, ldx, m, npx;
	const int32_t *comp;
	const float *mul, *add;
	float div;
	bool f32out;
	int zy, lo, hi;
	float flo, fhi;
	void *y;
	int64_t ldy;
	const int32_t *lut;
	const uint8_t *lut8;
};

typedef void (*npr_qgemm_fn)(const struct npr_qgemm_args *a);

/**
 * struct npr_qdw_args - one channel plane of a depthwise NprQConv
 * @x: the input plane, padded with the x zero point, its columns split
 *     by their index modulo @sw: column c at x + (c % sw) * plane +
 *     c / sw of its row.
 * @ldx: bytes from one padded row to the next.
 * @plane: bytes from one such part to the next.
 * @w: the kh x kw weights.
 * @kh: window rows.
 * @kw: window columns.
 * @sh: vertical stride.
 * @sw: horizontal stride.
 * @dh: vertical dilation.
 * @dw: horizontal dilation.
 * @oh: output rows.
 * @ow: output columns.
 * @comp: subtracted from each sum (x zero point x the weights' sum).
 * @mul: the scale of the centred sum.
 * @add: added after it.
 * @div: u8: the output scale.
 * @f32out: write f32 (else u8).
 * @zy: u8: the zero point added after rounding.
 * @lo: u8: the smallest value.
 * @hi: u8: the largest.
 * @flo: f32: the lower bound.
 * @fhi: f32: the upper bound.
 * @y: the output plane (@oh x @ow).
 * @lut: as in struct npr_qgemm_args.
 * @lut8: as in struct npr_qgemm_args.
 */
struct npr_qdw_args {
	const uint8_t *x;
	int64_t ldx, plane;
	const int8_t *w;
	int kh, kw, sh, sw, dh, dw;
	int64_t oh, ow;
	int32_t comp;
	float mul, add, div;
	bool f32out;
	int zy, lo, hi;
	float flo, fhi;
	void *y;
	const int32_t *lut;
	const uint8_t *lut8;
};

typedef void (*npr_qdw_fn)(const struct npr_qdw_args *a);

/**
 * struct npr_qnhwc_args - pixels by channels of NprQConv with blocked
 *                         weights (ref/kernels/qnhwc.c)
 * @ind: per pixel, @taps pointers to the 4 x @cq bytes each tap of its
 *       window reads (channels innermost; padding points at bytes of
 *       the x zero point): pixel p's at ind[p * taps].  Depthwise: to
 *       the pixel's channel 0.
 * @taps: kh x kw.
 * @cq: round_up(C, 4) / 4, the groups of four channels per tap;
 *      depthwise: round_up(taps, 4) / 4, the groups of four taps.
 * @xc0: depthwise: the input channel of output channel 0 (0 else).
 * @w: the weights of the first block: [@kb][taps x cq][16][4] bytes;
 *     depthwise: [@kb][cq][16][4].
 * @kb: blocks of 16 output channels.
 * @m: output channels (at most 16 x @kb; the rest are not written).
 * @npx: pixels.
 * @comp: per channel, subtracted from the sum (16 x @kb readable).
 * @mul: per channel, the scale of the centred sum (likewise).
 * @add: per channel, added after it (likewise).
 * @div: u8: the output scale the result is divided by then.
 * @f32out: write f32 (else u8).
 * @zy: u8: the zero point added after rounding.
 * @lo: u8: the smallest value.
 * @hi: u8: the largest.
 * @flo: f32: the lower bound.
 * @fhi: f32: the upper bound.
 * @y: the output of pixel 0, channel 0.
 * @ldy: elements from one pixel to the next.
 * @lut: u8: NULL, or the table each result is mapped through (i32).
 * @lut8: the same table as bytes (for byte permutes).
 */
struct npr_qnhwc_args {
	const uint8_t *const *ind;
	int64_t taps, cq, xc0;
	const int8_t *w;
	int64_t kb, m, npx;
	const int32_t *comp;
	const float *mul, *add;
	float div;
	bool f32out;
	int zy, lo, hi;
	float flo, fhi;
	void *y;
	int64_t ldy;
	const int32_t *lut;
	const uint8_t *lut8;
};

typedef void (*npr_qnhwc_fn)(const struct npr_qnhwc_args *a);

/**
 * struct npr_qgemm_kern - a variant
 * @name: its NPR_INT8_ISA name.
 * @fn: the matrix kernel.
 * @dw: the depthwise kernel.
 * @nhwc: the kernel of blocked weights.
 * @nhwc_dw: the same, depthwise.
 */
struct npr_qgemm_kern {
	const char *name;
	npr_qgemm_fn fn;
	npr_qdw_fn dw;
	npr_qnhwc_fn nhwc;
	npr_qnhwc_fn nhwc_dw;
};

const struct npr_qgemm_kern *npr_qgemm_get(const char *name);
const struct npr_qgemm_kern *npr_qgemm_best(void);

/* ref/arch/x86/ (built with their own -m flags) */
void npr_qgemm_vnni512(const struct npr_qgemm_args *a);
void npr_qgemm_avxvnni(const struct npr_qgemm_args *a);
void npr_qgemm_avx2(const struct npr_qgemm_args *a);
void npr_qdw_avx512(const struct npr_qdw_args *a);
void npr_qdw_avx2(const struct npr_qdw_args *a);
void npr_qnhwc_vnni512(const struct npr_qnhwc_args *a);
void npr_qnhwc_avxvnni(const struct npr_qnhwc_args *a);
void npr_qnhwc_avx2(const struct npr_qnhwc_args *a);
void npr_qdwn_vnni512(const struct npr_qnhwc_args *a);
void npr_qdwn_avxvnni(const struct npr_qnhwc_args *a);
void npr_qdwn_avx2(const struct npr_qnhwc_args *a);
void npr_qdwn_vnni512_vbmi(const struct npr_qnhwc_args *a);
void npr_qdwn_vnni512_unpack(const struct npr_qnhwc_args *a);
/* ref/kernels/quant.c (ref/kernels/qdw.h without -m flags) */
void npr_qdw_scalar(const struct npr_qdw_args *a);
/* ref/kernels/qnhwc.c */
void npr_qnhwc_scalar(const struct npr_qnhwc_args *a);
void npr_qdwn_scalar(const struct npr_qnhwc_args *a);

#endif /* NPR_REF_KERNELS_QGEMM_H */
