// SPDX-License-Identifier: MIT
/*
 * ONNX translators: RoiAlign (ROIAlign-9), the integer products
 * ConvInteger and MatMulInteger and their requantizing QLinearConv and
 * QLinearMatMul, MaxUnpool (a scatter into zeros), DFT (DFT-7, IDFT-7),
 * ReverseSequence
 * (ReverseSequence-1),
 * BitShift (BitwiseLeftShift-15 / BitwiseRightShift-15) and GridSample
 * (GridSample-9, whose attributes are ONNX's GridSample-16 ones),
 * NonMaxSuppression (NonMaxSuppression-9 cut to its valid rows), Compress
 * (Gather at NonZero), the Hann, Hamming and Blackman windows and Unique
 * (Unique-10).
 *
 * ConvInteger and MatMulInteger compute in f32: both operands minus their
 * zero points are converted, multiplied by the Conv (MatMul) translation
 * and the result converted to i32; QLinearConv and QLinearMatMul then
 * requantize that product (see tr_qlinear()).  The operands are 8-bit, so every
 * product and every partial sum below 2^24 is exact; larger sums (more
 * than about 250 full-range products) round as f32 does.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate.h"

/* ---- RoiAlign ----------------------------------------------------------- */

static int tr_roi_align(struct onnx_ctx *c, int *out)
{
	char mode[16], ctm[32];
	int64_t oh, ow, sr;
	double scale;
	const char *aligned;
	int node, err;

	err = npr_onnx_attr_str(c, "mode", "avg", mode, sizeof(mode));
	/* before opset 16 the only behaviour was output_half_pixel */
	if (!err)
		err = npr_onnx_attr_str(c, "coordinate_transformation_mode",
					c->opset < 16 ? "output_half_pixel" :
					"half_pixel", ctm, sizeof(ctm));
	if (!err)
		err = npr_onnx_attr_int(c, "output_height", 1, &oh);
	if (!err)
		err = npr_onnx_attr_int(c, "output_width", 1, &ow);
	if (!err)
		err = npr_onnx_attr_int(c, "sampling_ratio", 0, &sr);
	if (!err)
		err = npr_onnx_attr_float(c, "spatial_scale", 1.0, &scale);
	if (err)
		return err;
	if (strcmp(mode, "avg") && strcmp(mode, "max"))
		return npr_onnx_err(c, -EINVAL, "mode \"%s\"", mode);
	if (!strcmp(ctm, "output_half_pixel"))
		aligned = "asymmetric";
	else if (!strcmp(ctm, "half_pixel"))	/* c * scale - 0.5 */
		aligned = "half_pixel_for_nn";
	else
		return npr_onnx_err(c, -EINVAL,
				    "coordinate_transformation_mode \"%s\"", ctm);
	node = npr_onnx_node(c, "ROIAlign", 9, NULL, 3, c->vin, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "pooled_h", "%lld", (long long)oh);
	if (!err)
		err = npr_onnx_set_attr(c, node, "pooled_w", "%lld",
					(long long)ow);
	if (!err)
		err = npr_onnx_set_attr(c, node, "sampling_ratio", "%lld",
					(long long)sr);
	if (!err)
		err = npr_onnx_set_attr(c, node, "spatial_scale", "%.9g",
					scale);
	if (!err)
		err = npr_onnx_set_attr(c, node, "mode", "%s", mode);
	if (!err)
		err = npr_onnx_set_attr(c, node, "aligned_mode", "%s", aligned);
	return err;
}

/* ---- ConvInteger, MatMulInteger ----------------------------------------- */

/*
 * @v minus zero point @zp (absent: -1), as f32.  A zero point with more
 * than one element applies along axis @axis of a value of rank @rank
 * (ConvInteger's per-output-channel w_zero_point, MatMulInteger's per-row
 * a_zero_point): it is reshaped to broadcast that way; with @axis -1 it
 * broadcasts as it is, along the last axis (the per-column zero points
 * of MatMulInteger's B and QLinearMatMul's b).
 */
static int centred(struct onnx_ctx *c, int v, int zp, int axis, int rank,
		   const char *suffix)
{
	char name[32];
	int64_t t[NPR_MAX_RANK];
	int f, z, i;

	snprintf(name, sizeof(name), "%s_f32", suffix);
	f = npr_onnx_convert(c, v, NPR_ELEM_F32, name);
	if (f < 0 || zp < 0)
		return f;
	snprintf(name, sizeof(name), "%s_zero_point", suffix);
	z = npr_onnx_convert(c, zp, NPR_ELEM_F32, name);
	if (z < 0)
		return z;
	if (axis >= 0 && onnx_rank(c, zp) == 1 &&
	    onnx_vshape(c, zp)->d[0] != 1) {
		if (rank < 0 || rank > NPR_MAX_RANK || axis >= rank)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "a %s zero point per channel needs the input rank",
					    suffix);
		for (i = 0; i < rank - axis; i++)
			t[i] = i ? 1 : -1;
		z = npr_onnx_reshape_to(c, z, t, rank - axis, false, name);
		if (z < 0)
			return z;
	}
	snprintf(name, sizeof(name), "%s_centred", suffix);
	return npr_onnx_binary(c, "Subtract", f, z, name);
}

/* Run the translator of ONNX op @type on inputs @in [2], in f32. */
static int float_product(struct onnx_ctx *c, const char *type,
			 const int *in, int *out)
{
	const struct onnx_op *op = npr_onnx_op_find(type);
	int *vin = c->vin, nin = c->nin, tmp[2] = { in[0], in[1] }, err;

	if (!op)
		return -EOPNOTSUPP;
	c->vin = tmp;
	c->nin = 2;
	err = op->fn(c, out);
	c->vin = vin;
	c->nin = nin;
	return err;
}

/* The same, the result as i32 (ConvInteger, MatMulInteger). */
static int integer_product(struct onnx_ctx *c, const char *type,
			   const int *in, int *out)
{
	int err = float_product(c, type, in, out);

	if (err)
		return err;
	out[0] = npr_onnx_convert(c, out[0], NPR_ELEM_I32, "i32");
	return out[0] < 0 ? out[0] : 0;
}

static int tr_conv_integer(struct onnx_ctx *c, int *out)
{
	int in[2];

	in[0] = centred(c, c->vin[0], onnx_in(c, 2), 0, 0, "x");
	if (in[0] < 0)
		return in[0];
	in[1] = centred(c, c->vin[1], onnx_in(c, 3), 0,
			onnx_rank(c, c->vin[1]), "w");
	if (in[1] < 0)
		return in[1];
	return integer_product(c, "Conv", in, out);
}

static int tr_matmul_integer(struct onnx_ctx *c, int *out)
{
	int ra = onnx_rank(c, c->vin[0]), in[2];

	in[0] = centred(c, c->vin[0], onnx_in(c, 2), ra - 2, ra, "A");
	if (in[0] < 0)
		return in[0];
	/* b_zero_point [N] runs along B's last axis: it broadcasts as is */
	in[1] = centred(c, c->vin[1], onnx_in(c, 3), -1, 0, "B");
	if (in[1] < 0)
		return in[1];
	return integer_product(c, "MatMul", in, out);
}

/*
 * QLinearConv, QLinearMatMul: the product of the centred operands (plus
 * the i32 bias of QLinearConv) in f32, times x_scale * w_scale / y_scale,
 * rounded half to even, plus y_zero_point, saturated to u8 or i8.
 */
static int tr_qlinear(struct onnx_ctx *c, int *out)
{
	bool conv = c->op->arg;
	int x = c->vin[0], w = c->vin[3], yz = onnx_in(c, 7);
	int b = conv ? onnx_in(c, 8) : -1, r = onnx_rank(c, x);
	int in[2], m, v, k, err;
	unsigned int type = yz >= 0 ? onnx_val(c, yz)->type : NPR_ELEM_U8;

	if (type != NPR_ELEM_U8 && type != NPR_ELEM_I8)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "only u8 and i8 outputs are supported");
	for (k = 1; k < 7; k += 5)	/* x_scale, y_scale: per tensor */
		if (onnx_rank(c, c->vin[k]) > 0 &&
		    onnx_vshape(c, c->vin[k])->d[0] != 1)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "input %d: only a per-tensor scale is supported",
					    k);
	if (conv && r < 0)
		return npr_onnx_known_rank(c, x, "QLinearConv");
	in[0] = centred(c, x, onnx_in(c, 2), conv ? 0 : r - 2, conv ? 0 : r,
			"x");
	if (in[0] < 0)
		return in[0];
	in[1] = centred(c, w, onnx_in(c, 5), conv ? 0 : -1,
			conv ? onnx_rank(c, w) : 0, "w");
	if (in[1] < 0)
		return in[1];
	err = float_product(c, conv ? "Conv" : "MatMul", in, out);
	if (err)
		return err;
	v = out[0];
	if (b >= 0) {
		b = npr_onnx_convert(c, b, NPR_ELEM_F32, "bias_f32");
		b = b < 0 ? b : npr_onnx_per_channel(c, b, r, "bias");
		v = b < 0 ? b : npr_onnx_binary(c, "Add", v, b, "biased");
		if (v < 0)
			return v;
	}
	/* multiplier: x_scale * w_scale (per output channel) / y_scale */
	m = c->vin[4];
	if (conv && onnx_rank(c, m) == 1)
		m = npr_onnx_per_channel(c, m, r, "w_scale");
	m = m < 0 ? m : npr_onnx_binary(c, "Multiply", c->vin[1], m, "scale");
	m = m < 0 ? m : npr_onnx_binary(c, "Divide", m, c->vin[6],
					"multiplier");
	v = m < 0 ? m : npr_onnx_binary(c, "Multiply", v, m, "scaled");
	v = v < 0 ? v : npr_onnx_round_even(c, v, "rounded");
	if (v >= 0 && yz >= 0) {
		yz = npr_onnx_convert(c, yz, NPR_ELEM_F32, "y_zero_f32");
		v = yz < 0 ? yz : npr_onnx_binary(c, "Add", v, yz, "shifted");
	}
	out[0] = v < 0 ? v : npr_onnx_saturate(c, v, type, "q");
	return out[0] < 0 ? out[0] : 0;
}

/* ---- MaxUnpool ---------------------------------------------------------- */

/*
 * Zeros of the output shape, X's values scattered to the flat positions
 * I gives (MaxPool's indices, flattened over N, C and space):
 * Reshape(ScatterElementsUpdate(zeros[-1], I[-1], X[-1], 0), shape).
 * The shape is output_shape when given, else [N, C] of X and per spatial
 * axis (d - 1) * stride - pad_begin - pad_end + kernel, which needs X's
 * spatial dims at load time.
 */
static int tr_max_unpool(struct onnx_ctx *c, int *out)
{
	int64_t k[NPR_MAX_RANK], st[NPR_MAX_RANK], pads[2 * NPR_MAX_RANK];
	int64_t sp[NPR_MAX_RANK], flat = -1, b = 0, e = 2, z = 0, zero = 0;
	const struct npr_shape xs = *onnx_vshape(c, c->vin[0]);
	struct npr_shape sc = { .rank = 0 };
	int nk, ns, np, i, shape, in[4], zr, node, err;

	err = npr_onnx_attr_ints(c, "kernel_shape", k, NPR_MAX_RANK, &nk);
	if (!err)
		err = npr_onnx_attr_ints(c, "strides", st, NPR_MAX_RANK, &ns);
	if (!err)
		err = npr_onnx_attr_ints(c, "pads", pads, 2 * NPR_MAX_RANK,
					 &np);
	if (err)
		return err;
	if (nk < 1 || (ns >= 0 && ns != nk) || (np >= 0 && np != 2 * nk))
		return npr_onnx_err(c, -EINVAL,
				    "kernel_shape, strides and pads do not fit");
	shape = onnx_in(c, 2);
	if (shape < 0) {
		if (xs.rank != nk + 2)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "without output_shape the input shape must be known at load time");
		for (i = 0; i < nk; i++) {
			int64_t d = xs.d[2 + i], s = ns >= 0 ? st[i] : 1;

			if (d < 1 || s < 1 || k[i] < 1)
				return npr_onnx_err(c, -EOPNOTSUPP,
						    "without output_shape the spatial dims must be known at load time");
			sp[i] = (d - 1) * s + k[i] -
				(np >= 0 ? pads[i] + pads[nk + i] : 0);
			if (sp[i] < 1)
				return npr_onnx_err(c, -EINVAL,
						    "output dim %d would be %lld",
						    i + 2, (long long)sp[i]);
		}
		shape = npr_onnx_shape_of(c, c->vin[0], "in_shape");
		in[0] = shape < 0 ? shape :
			npr_onnx_strided(c, shape, &b, &e, NULL, &z, &z, 1,
					 "nc");
		in[1] = in[0] < 0 ? in[0] : npr_onnx_const_i64(c, sp, nk,
							       "spatial");
		if (in[1] < 0)
			return in[1];
		node = npr_onnx_node(c, "Concat", 1, "out_shape", 2, in, 1,
				     &shape);
		if (node < 0 || (node = npr_onnx_set_attr(c, node, "axis",
							  "0")))
			return node;
	}
	zr = npr_onnx_scalar(c, c->vin[0], 0, "zero");
	in[0] = zr;
	in[1] = shape;
	node = zr < 0 ? zr :
	       npr_onnx_node(c, "Broadcast", 3, "zeros", 2, in, 1, &zr);
	if (node < 0 || (node = npr_onnx_set_attr(c, node, "mode", "numpy")))
		return node;
	in[0] = npr_onnx_reshape_to(c, zr, &flat, 1, false, "zeros_flat");
	in[1] = in[0] < 0 ? in[0] :
		npr_onnx_reshape_to(c, c->vin[1], &flat, 1, false,
				    "indices_flat");
	in[2] = in[1] < 0 ? in[1] :
		npr_onnx_reshape_to(c, c->vin[0], &flat, 1, false,
				    "values_flat");
	in[3] = in[2] < 0 ? in[2] :
		npr_onnx_const(c, NPR_ELEM_I64, &sc, &zero, "axis");
	if (in[3] < 0)
		return in[3];
	node = npr_onnx_node(c, "ScatterElementsUpdate", 12, "scatter", 4, in,
			     1,
			     &in[0]);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "reduction", "none");
	if (!err)
		err = npr_onnx_set_attr(c, node, "use_init_val", "true");
	if (err)
		return err;
	in[1] = shape;
	node = npr_onnx_node(c, "Reshape", 1, NULL, 2, in, 1, out);
	if (node < 0)
		return node;
	return npr_onnx_set_attr(c, node, "special_zero", "false");
}

/* ---- DFT ---------------------------------------------------------------- */

/*
 * DFT-17: DFT-7 / IDFT-7 on the one axis.  A real input [..., 1] gets a
 * zero imaginary part first; onesided keeps the first N / 2 + 1 outputs
 * (forward only, N known at load time).
 */
static int tr_dft(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = npr_onnx_known_rank(c, x,
						   "DFT"), len = onnx_in(c, 1);
	int64_t axis, inverse, onesided, n = -1, one = 1;
	int in[3], node, err;

	if (r < 0)
		return r;
	err = npr_onnx_attr_int(c, "axis", 1, &axis);
	if (!err)
		err = npr_onnx_attr_int(c, "inverse", 0, &inverse);
	if (!err)
		err = npr_onnx_attr_int(c, "onesided", 0, &onesided);
	if (err)
		return err;
	if (r < 2 || (onnx_vshape(c, x)->d[r - 1] != 1 &&
		      onnx_vshape(c, x)->d[r - 1] != 2))
		return npr_onnx_err(c, -EINVAL,
				    "input must be [..., 1] (real) or [..., 2] (complex) of known last dim");
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis > r - 2)
		return npr_onnx_err(c, -EINVAL, "axis is out of range");
	if (onnx_vshape(c, x)->d[r - 1] == 1) {
		int zero = npr_onnx_scalar(c, x, 0, "zero"), shape;

		shape = zero < 0 ? zero : npr_onnx_shape_of(c, x, "shape");
		in[0] = zero;
		in[1] = shape;
		node = shape < 0 ? shape :
		       npr_onnx_node(c, "Broadcast", 3, "imag", 2, in, 1,
				     &in[1]);
		if (node < 0 || (node = npr_onnx_set_attr(c, node, "mode",
							  "numpy")))
			return node;
		in[0] = x;
		node = npr_onnx_node(c, "Concat", 1, "complex", 2, in, 1, &x);
		if (node < 0 || (node = npr_onnx_set_attr(c, node, "axis", "%d",
						      r - 1)))
			return node;
	}
	in[0] = x;
	in[1] = npr_onnx_const_i64(c, &axis, 1, "axes");
	if (in[1] < 0)
		return in[1];
	if (len >= 0) {
		in[2] = npr_onnx_reshape_to(c, len, &one, 1, false,
					    "signal_size");
		if (in[2] < 0)
			return in[2];
		if (npr_onnx_const_ints(c, len, &n, 1) != 1)
			n = -1;
	} else {
		n = onnx_vshape(c, c->vin[0])->d[axis];
	}
	if (onesided && (inverse || n < 1))
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "onesided needs a forward DFT of a length known at load time");
	node = npr_onnx_node(c, inverse ? "IDFT" : "DFT", 7,
			     onesided ? "full" : NULL,
			     len >= 0 ? 3 : 2, in, 1, out);
	if (node < 0)
		return node;
	if (onesided) {
		int64_t b[NPR_MAX_RANK] = { 0 }, e[NPR_MAX_RANK] = { 0 };
		int64_t bm[NPR_MAX_RANK], em[NPR_MAX_RANK];
		int i;

		for (i = 0; i <= axis; i++) {
			bm[i] = 1;
			em[i] = i < axis;
		}
		e[axis] = n / 2 + 1;
		out[0] = npr_onnx_strided(c, out[0], b, e, NULL, bm, em,
					  (int)axis + 1, NULL);
		if (out[0] < 0)
			return out[0];
	}
	return 0;
}

/* ---- ReverseSequence, BitShift, GridSample ------------------------------ */

static int tr_reverse_sequence(struct onnx_ctx *c, int *out)
{
	int64_t ba, ta;
	int node, err;

	err = npr_onnx_attr_int(c, "batch_axis", 1, &ba);
	if (!err)
		err = npr_onnx_attr_int(c, "time_axis", 0, &ta);
	if (err)
		return err;
	node = npr_onnx_node(c, "ReverseSequence", 1, NULL, 2, c->vin, 1, out);
	if (node < 0)
		return node;
	*onnx_vshape(c, out[0]) = *onnx_vshape(c, c->vin[0]);
	err = npr_onnx_set_attr(c, node, "batch_axis", "%lld", (long long)ba);
	if (!err)
		err = npr_onnx_set_attr(c, node, "seq_axis", "%lld",
					(long long)ta);
	return err;
}

static int tr_bitshift(struct onnx_ctx *c, int *out)
{
	char dir[8];
	int node, err;
	struct npr_shape s;

	err = npr_onnx_attr_str(c, "direction", "", dir, sizeof(dir));
	if (err)
		return err;
	if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
		return npr_onnx_err(c, -EINVAL,
				    "direction \"%s\" (LEFT or RIGHT)", dir);
	node = npr_onnx_node(c, strcmp(dir, "LEFT") ? "BitwiseRightShift" :
			     "BitwiseLeftShift", 15, NULL, 2, c->vin, 1, out);
	if (node < 0)
		return node;
	if (!npr_shape_broadcast(onnx_vshape(c, c->vin[0]),
				 onnx_vshape(c, c->vin[1]), &s))
		*onnx_vshape(c, out[0]) = s;
	return 0;
}

static int tr_grid_sample(struct onnx_ctx *c, int *out)
{
	char mode[16], pad[16];
	int64_t align;
	int node, err;

	err = npr_onnx_attr_int(c, "align_corners", 0, &align);
	if (!err)
		err = npr_onnx_attr_str(c, "mode", "bilinear", mode,
					sizeof(mode));
	if (!err)
		err = npr_onnx_attr_str(c, "padding_mode", "zeros", pad,
					sizeof(pad));
	if (err)
		return err;
	node = npr_onnx_node(c, "GridSample", 9, NULL, 2, c->vin, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "align_corners", "%s", onnx_tf(align));
	if (!err)
		err = npr_onnx_set_attr(c, node, "mode", "%s", mode);
	if (!err)
		err = npr_onnx_set_attr(c, node, "padding_mode", "%s", pad);
	return err;
}

/* ---- NonMaxSuppression ---------------------------------------------------- */

/*
 * NonMaxSuppression-9 with sort_result_descending false (ONNX orders by
 * batch, class, then score), i64 outputs, and its selected_indices cut to
 * valid_outputs rows by a Slice-8: the row count depends on the data, so
 * that Slice is a dynamic step unless everything folds.  An absent
 * max_output_boxes_per_class selects nothing and an absent
 * score_threshold filters nothing, as in ONNX.
 */
static int tr_nms(struct onnx_ctx *c, int *out)
{
	int64_t center, zero = 0, one = 1;
	int in[5], o[3], sl[5], node, err, i;

	err = npr_onnx_attr_int(c, "center_point_box", 0, &center);
	if (err)
		return err;
	if (center != 0 && center != 1)
		return npr_onnx_err(c, -EINVAL,
				    "center_point_box %lld (0 or 1)",
				    (long long)center);
	in[0] = c->vin[0];
	in[1] = c->vin[1];
	in[2] = onnx_in(c, 2);
	if (in[2] < 0)
		in[2] = npr_onnx_const_i64(c, &zero, 1, "max_output");
	in[3] = onnx_in(c, 3);
	if (in[3] < 0)
		in[3] = npr_onnx_scalar(c, c->vin[1], 0, "iou_threshold");
	in[4] = onnx_in(c, 4);
	if (in[4] < 0)
		in[4] = npr_onnx_scalar(c, c->vin[1], -INFINITY,
					"score_threshold");
	for (i = 2; i < 5; i++)
		if (in[i] < 0)
			return in[i];
	node = npr_onnx_node(c, "NonMaxSuppression", 9, "nms", 5, in, 3, o);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "box_encoding", "%s",
				center ? "center" : "corner");
	if (!err)
		err = npr_onnx_set_attr(c, node, "sort_result_descending",
					"false");
	if (!err)
		err = npr_onnx_set_attr(c, node, "output_type", "i64");
	if (err)
		return err;
	sl[0] = o[0];
	sl[1] = npr_onnx_const_i64(c, &zero, 1, "start");
	sl[2] = sl[1] < 0 ? sl[1] : npr_onnx_reshape_to(c, o[2], &one, 1, false,
						      "stop");
	sl[3] = sl[2] < 0 ? sl[2] : npr_onnx_const_i64(c, &one, 1, "step");
	sl[4] = sl[3] < 0 ? sl[3] : npr_onnx_const_i64(c, &zero, 1, "axes");
	if (sl[4] < 0)
		return sl[4];
	node = npr_onnx_node(c, "Slice", 8, NULL, 5, sl, 1, out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].type = NPR_ELEM_I64;
	c->g->vals[out[0]].shape = (struct npr_shape){ .rank = 2,
						       .d = { -1, 3 } };
	return 0;
}

/* ---- Compress ------------------------------------------------------------- */

/*
 * Compress: Gather along the axis (of the flattened input without one) at
 * NonZero(condition).  A condition shorter than the axis leaves the rest
 * out, as ONNX says.
 */
static int tr_compress(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, "axis");
	int x = c->vin[0], cond = c->vin[1], in[3], nz, node, err;
	int64_t axis = 0, minus1 = -1;

	if (a) {
		int r = npr_onnx_known_rank(c, x, "Compress with an axis");

		if (r < 0)
			return r;
		err = npr_onnx_attr_int(c, "axis", 0, &axis);
		if (!err)
			err = npr_onnx_norm_axis(c, axis, r, &axis);
		if (err)
			return err;
	} else {
		x = npr_onnx_reshape_to(c, x, &minus1, 1, false, "flat");
		if (x < 0)
			return x;
	}
	if (onnx_rank(c, cond) > 1)
		return npr_onnx_err(c, -EINVAL, "condition must be 1-D");
	node = npr_onnx_node(c, "NonZero", 3, "nonzero", 1, &cond, 1, &nz);
	if (node < 0)
		return node;
	c->g->vals[nz].type = NPR_ELEM_I64;
	err = npr_onnx_set_attr(c, node, "output_type", "i64");
	if (err)
		return err;
	in[0] = x;
	in[1] = npr_onnx_reshape_to(c, nz, &minus1, 1, false, "indices");
	in[2] = in[1] < 0 ? in[1] : npr_onnx_const_i64(c, &axis, 1, "axis");
	if (in[2] < 0)
		return in[2];
	node = npr_onnx_node(c, "Gather", 8, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	return npr_onnx_set_attr(c, node, "batch_dims", "0");
}

/* ---- HannWindow, HammingWindow, BlackmanWindow ---------------------------- */

/*
 * w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), n in [0, size),
 * N = size (periodic) or size - 1 (symmetric): Range over the size input,
 * so the output shape follows its value.  @arg picks the coefficients.
 */
static int tr_window(struct onnx_ctx *c, int *out)
{
	static const double coef[3][3] = {
		{ 0.5, 0.5, 0 },			/* Hann */
		{ 25.0 / 46, 21.0 / 46, 0 },		/* Hamming */
		{ 0.42, 0.5, 0.08 },			/* Blackman */
	};
	const double *k = coef[c->op->arg];
	int64_t periodic, dt;
	unsigned int type;
	int in[3], n, len, ang, w, t, node, err, i;

	err = npr_onnx_attr_int(c, "periodic", 1, &periodic);
	if (!err)
		err = npr_onnx_attr_int(c, "output_datatype", 1, &dt);
	if (err)
		return err;
	type = dt >= 0 && dt <= INT32_MAX ? npr_onnx_elem_type((int32_t)dt) : 0;
	if (!type || type == NPR_ELEM_BOOLEAN)
		return npr_onnx_err(c, -EINVAL, "output_datatype %lld",
				    (long long)dt);
	if (onnx_vshape(c, c->vin[0])->rank > 0 &&
	    npr_shape_numel(onnx_vshape(c, c->vin[0])) != 1)
		return npr_onnx_err(c, -EINVAL, "size must be a scalar");
	len = npr_onnx_convert(c, c->vin[0], NPR_ELEM_F32, "size_f32");
	if (len < 0)
		return len;
	in[0] = npr_onnx_scalar(c, -1, 0, "start");
	in[1] = len;
	in[2] = in[0] < 0 ? in[0] : npr_onnx_scalar(c, -1, 1, "step");
	if (in[2] < 0)
		return in[2];
	node = npr_onnx_node(c, "Range", 4, "n", 3, in, 1, &n);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "output_type", "f32");
	if (err)
		return err;
	c->g->vals[n].type = NPR_ELEM_F32;
	if (!periodic) {
		t = npr_onnx_scalar(c, -1, 1, "one");
		len = t < 0 ? t : npr_onnx_binary(c, "Subtract", len, t,
						  "denom");
		if (len < 0)
			return len;
	}
	/* 2 pi n / N */
	t = npr_onnx_scalar(c, -1, 2 * M_PI, "two_pi");
	ang = t < 0 ? t : npr_onnx_binary(c, "Multiply", n, t, "scaled");
	ang = ang < 0 ? ang : npr_onnx_binary(c, "Divide", ang, len, "angle");
	if (ang < 0)
		return ang;
	w = npr_onnx_scalar(c, -1, k[0], "a0");
	for (i = 1; i < 3 && w >= 0; i++) {
		char nm[16];
		int a = ang, m;

		if (!k[i])
			continue;
		if (i == 2) {
			t = npr_onnx_scalar(c, -1, 2, "two");
			a = t < 0 ? t : npr_onnx_binary(c, "Multiply", ang, t,
							"angle2");
			if (a < 0)
				return a;
		}
		snprintf(nm, sizeof(nm), "cos%d", i);
		m = npr_onnx_unary(c, "Cos", a, nm);
		snprintf(nm, sizeof(nm), "a%d", i);
		t = m < 0 ? m : npr_onnx_scalar(c, -1, k[i], nm);
		snprintf(nm, sizeof(nm), "term%d", i);
		m = t < 0 ? t : npr_onnx_binary(c, "Multiply", m, t, nm);
		snprintf(nm, sizeof(nm), "sum%d", i);
		w = m < 0 ? m : npr_onnx_binary(c, i == 1 ? "Subtract" : "Add",
						w,
						m, nm);
	}
	if (w < 0)
		return w;
	out[0] = npr_onnx_convert(c, w, type, NULL);
	return out[0] < 0 ? out[0] : 0;
}

/* ---- Unique --------------------------------------------------------------- */

/* Unique-10, the axis attribute its constant axis input, i64 outputs. */
static int tr_unique(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, "axis");
	int64_t sorted, axis;
	int in[2] = { c->vin[0], -1 }, node, err, i;

	err = npr_onnx_attr_int(c, "sorted", 1, &sorted);
	if (!err && a)
		err = npr_onnx_attr_int(c, "axis", 0, &axis);
	if (err)
		return err;
	if (a) {
		in[1] = npr_onnx_const_i64(c, &axis, 1, "axis");
		if (in[1] < 0)
			return in[1];
	}
	node = npr_onnx_node(c, "Unique", 10, NULL, a ? 2 : 1, in, 4, out);
	if (node < 0)
		return node;
	for (i = 1; i < 4; i++)
		c->g->vals[out[i]].type = NPR_ELEM_I64;
	err = npr_onnx_set_attr(c, node, "sorted", "%s", onnx_tf(sorted));
	if (!err)
		err = npr_onnx_set_attr(c, node, "index_element_type", "i64");
	if (!err)
		err = npr_onnx_set_attr(c, node, "count_element_type", "i64");
	return err;
}

const struct onnx_op npr_onnx_ops_misc[] = {
	{ "Unique", tr_unique, 1, 1, 4, NULL, 0 },
	{ "NonMaxSuppression", tr_nms, 2, 5, 1, NULL, 0 },
	{ "Compress", tr_compress, 2, 2, 1, NULL, 0 },
	{ "HannWindow", tr_window, 1, 1, 1, NULL, 0 },
	{ "HammingWindow", tr_window, 1, 1, 1, NULL, 1 },
	{ "BlackmanWindow", tr_window, 1, 1, 1, NULL, 2 },
	{ "MaxUnpool", tr_max_unpool, 2, 3, 1, NULL, 0 },
	{ "DFT", tr_dft, 1, 2, 1, NULL, 0 },
	{ "ReverseSequence", tr_reverse_sequence, 2, 2, 1, NULL, 0 },
	{ "BitShift", tr_bitshift, 2, 2, 1, NULL, 0 },
	{ "GridSample", tr_grid_sample, 2, 2, 1, NULL, 0 },
	{ "RoiAlign", tr_roi_align, 3, 3, 1, NULL, 0 },
	{ "ConvInteger", tr_conv_integer, 2, 4, 1, NULL, 0 },
	{ "MatMulInteger", tr_matmul_integer, 2, 4, 1, NULL, 0 },
	{ "QLinearConv", tr_qlinear, 8, 9, 1, NULL, 1 },
	{ "QLinearMatMul", tr_qlinear, 8, 8, 1, NULL, 0 },
	{ NULL },
};
