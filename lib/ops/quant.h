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
 * sa.  Both take an optional second input, constant f32 scales per
 * channel (axis 1 of x, all positive), in place of sy or sa; nchw only.  NprQLut-1 (u8 -> u8, inputs x and a 256-byte table): table[x].
 * NprQAdd-1 (u8, u8 -> u8, same shapes): clamp(rint(((a - za) * sa +
 * (b - zb) * sb) / sy) + zy, lo, hi).  NprQScale-1 (u8 x, f32 m, optional
 * f32 b -> u8; m and b one value per channel of x, m possibly computed
 * at run time): clamp(rint((x - x_zero) * m[c] + b[c]) + y_zero, lo,
 * hi), a dequantized tensor times (plus) per-channel values,
 * requantized.  NprQMaxPool-1 (u8, NHWC): the
 * largest value of each window (kernel, strides, dilations, pads_begin,
 * pads_end; the output size rounded down), padding read as 0, the u8
 * MaxPool's own rule.  NprQConcat-1 (u8, NHWC): the inputs along the
 * channels.
 *
 * Layouts (lib/passes/qlayout.c chooses them): shapes are always the
 * logical NCHW ones; x_layout and y_layout say how a 4-D u8 input or
 * output lies in memory, "nchw" (the default) or "nhwc" (channels
 * innermost).  NprQLut, NprQuantize and NprDequantize may read one and
 * write the other (an NprQLut with the identity table is a layout
 * conversion; the f32 side of the other two is always nchw); NprQAdd
 * reads and writes one layout.  NprQConv's
 * w_layout "blocked" (one group, or depthwise) holds the weights as
 * [round_up(K, 16), kr] bytes with kr = kh x kw x round_up(C, 4), in
 * blocks of 16 output channels: weight (k, i, j, c) at byte
 * ((k / 16 x kr / 4 + q) x 16 + k % 16) x 4 + r % 4, where r = (i x kw
 * + j) x round_up(C, 4) + c and q = r / 4 (the padding channels and
 * rows zero); depthwise (groups = C = K), kr = round_up(kh x kw, 4) and
 * r = i x kw + j.  Its kernels take either layout of x and y.  The
 * default w_layout "rows" takes nchw only.
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
 * @xnhwc: input 0 lies in memory as NHWC.
 * @ynhwc: the output does.
 * @wblocked: NprQConv: the weights are in blocks of 16 channels.
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
	bool xnhwc, ynhwc, wblocked;
};

/* round_up(n, 4) and round_up(n, 16): blocked weights' C and K */
#define NPR_QC4(n)	(((n) + 3) & ~(int64_t)3)
#define NPR_QK16(n)	(((n) + 15) & ~(int64_t)15)

#endif /* NPR_OPS_QUANT_H */
