/* SPDX-License-Identifier: MIT */
/*
 * Low-precision ops the compile pass lib/passes/lowp.c makes out of
 * quantize/dequantize groups (Documentation/design.rst, "Low
 * precision"): attributes and shape inference in lib/ops/quant.c, the
 * kernels in ref/kernels/quant.c.  They are not OpenVINO ops and exist
 * only in compiled graphs (and so in blobs) of devices that run them.
 *
 * NprQConv-1: inputs x (u8, [N, C, H, W]), w (i8 [K, kr]: per output
 * channel the C/groups x kh x kw weights in (c, i, j) order, zeros up to
 * kr, a multiple of 4), wsum (i32 [K], the sums of each row of w), mul
 * and add (f32 [K]); output [N, K, OH, OW], u8 or f32.  Per output
 * element, with acc the integer sum of (x - x_zero) * w over the window
 * (padding reads x_zero): u8: clamp(rint((acc * mul + add) / y_scale) +
 * y_zero, lo, hi); f32: clamp(acc * mul + add, flo, fhi).  An optional
 * sixth input, a table of 256 u8 (an NprQLut that read the output),
 * maps each u8 result.
 *
 * NprQuantize-1 (f32 -> u8): clamp(rint(x / sy) + zy, 0, 255), as ONNX
 * QuantizeLinear computes it.  NprDequantize-1 (u8 -> f32): (x - za) *
 * sa.  NprQLut-1 (u8 -> u8, inputs x and a 256-byte table): table[x].
 * NprQAdd-1 (u8, u8 -> u8, same shapes): clamp(rint(((a - za) * sa +
 * (b - zb) * sb) / sy) + zy, lo, hi).
 */
#ifndef NPR_OPS_QUANT_H
#define NPR_OPS_QUANT_H

#include "graph/graph.h"

/**
 * struct npr_quant_params - attributes of the low-precision ops
 * @stride: NprQConv: strides.
 * @dil: dilations.
 * @pb: padding before.
 * @pe: padding after.
 * @kernel: the window (kh, kw).
 * @groups: groups (C and K divide by it).
 * @kr: reduction length per output channel, padded to a multiple of 4.
 * @xz: zero point of x.
 * @f32out: the output is f32 (else u8).
 * @lo: u8 output: the smallest value written.
 * @hi: u8 output: the largest.
 * @flo: f32 output: the lower bound.
 * @fhi: f32 output: the upper bound.
 * @sa: NprDequantize, NprQAdd: scale of the (first) input.
 * @za: its zero point.
 * @sb: NprQAdd: scale of the second input.
 * @zb: its zero point.
 * @sy: NprQuantize, NprQAdd: scale of the output.
 * @zy: zero point of the output (NprQConv: u8 output).
 */
struct npr_quant_params {
	int64_t stride[2], dil[2], pb[2], pe[2], kernel[2];
	int64_t groups, kr;
	int xz;
	bool f32out;
	int lo, hi;
	float flo, fhi;
	float sa, sb, sy;
	int za, zb, zy;
};

#endif /* NPR_OPS_QUANT_H */
