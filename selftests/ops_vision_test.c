// SPDX-License-Identifier: MIT
/*
 * Op-level tests of spatial and detection ops, one op per model on the cpu
 * device: Interpolate (every mode, coordinate transform and rounding),
 * NonMaxSuppression, RegionYolo, pooling, ROIPooling, ROIAlign, PriorBox,
 * DetectionOutput, 3-D convolution, pooling and transposed convolution, and
 * GridSample, with their errors.
 *
 * How each op is built and run, the checks, and where the expected values
 * come from: ops_util.h.
 */
#include "ops_util.h"

/* ---- Interpolate-1/-4/-11 --------------------------------------------- */

/* Interpolate-4 on a [1, len] f32 input along axis 1, sizes mode. */
#define INTERP4_1D(attrs, len, out, ...)				\
	RUN({ "Interpolate", "opset4",					\
	      "shape_calculation_mode=\"sizes\" " attrs,		\
	      { P("f32", "1," #len, __VA_ARGS__), C("i64", "1", out),	\
		C("f32", "1", 1), C("i64", "1", 1) },			\
	      { "1," #out } })

TEST_F(ops, interpolate_nearest_rounding_modes)
{
	/* 2 -> 4, asymmetric: source x / 2 = 0, .5, 1, 1.5 */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\"",
		   2, 4, 10, 20);
	EXPECT_OUT(0, F32, 0, 10, 10, 20, 20);
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"round_prefer_ceil\"",
		   2, 4, 10, 20);
	EXPECT_OUT(0, F32, 0, 10, 20, 20, 20);
	/* 4 -> 3, asymmetric: source x / .75 = 0, 1.33, 2.67 */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 20, 30);
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"ceil\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 30, 40);
	/* simple: ceil when downscaling */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"simple\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 30, 40);
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 20, 40);
	/* tf_half_pixel_for_nn: (x + .5) / 2 = .25, .75, 1.25, 1.75 */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"tf_half_pixel_for_nn\"",
		   2, 4, 10, 20);
	EXPECT_OUT(0, F32, 0, 10, 20, 20, 20);
}

TEST_F(ops, interpolate_linear_onnx_coordinate_modes)
{
	/* half_pixel: source -.25 .25 .75 1.25, clamped to [0, 1] */
	INTERP4_1D("mode=\"linear_onnx\"", 2, 4, 1, 3);
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2.5, 3);
	/* align_corners: x * (2 - 1) / (3 - 1) */
	INTERP4_1D("mode=\"linear_onnx\" coordinate_transformation_mode=\"align_corners\"",
		   2, 3, 0, 10);
	EXPECT_OUT(0, F32, 1e-6, 0, 5, 10);
	/* pytorch_half_pixel with one output: source 0 */
	INTERP4_1D("mode=\"linear_onnx\" coordinate_transformation_mode=\"pytorch_half_pixel\"",
		   2, 1, 4, 8);
	EXPECT_OUT(0, F32, 1e-6, 4);
	/* half_pixel with one output: source (.5 / .5) - .5 = .5 */
	INTERP4_1D("mode=\"linear_onnx\"", 2, 1, 4, 8);
	EXPECT_OUT(0, F32, 1e-6, 6);
}

TEST_F(ops, interpolate_cubic_half_pixel)
{
	/*
	 * 4 -> 8, A = -0.75.  For t = .25 / .75 the weights of the taps at
	 * distance .25, .75, 1.25, 1.75 are .87890625, .26171875,
	 * -.10546875, -.03515625 (Keys' kernel; with A != -.5 it does not
	 * reproduce linear data).  out[0] (source -.25, taps clamped to
	 * 0 0 0 1) = -.10546875 * 1; out[1] (source .25: 0 0 1 2) =
	 * .26171875 - 2 * .03515625; out[2] (source .75: 0 0 1 2) =
	 * .87890625 - 2 * .10546875; out[3] (source 1.25: 0 1 2 3) =
	 * .87890625 + 2 * .26171875 - 3 * .03515625.  The right half
	 * mirrors the left: out[7 - i] = 3 - out[i].
	 */
	INTERP4_1D("mode=\"cubic\"", 4, 8, 0, 1, 2, 3);
	EXPECT_OUT(0, F32, 1e-6, -0.10546875, 0.19140625, 0.66796875,
		   1.296875, 1.703125, 2.33203125, 2.80859375, 3.10546875);
}

TEST_F(ops, interpolate_linear_antialias)
{
	/*
	 * [0 1 2 3] scaled by .5: sources .5 and 2.5.  Without antialias
	 * the triangle of radius 1 gives 0.5 and 2.5.  With it, the radius
	 * is 1 / .5 = 2: weights 1 - |.5 d| = .75 .75 .25 0 around .5, so
	 * (0 * .75 + 1 * .75 + 2 * .25) / 1.75, and mirrored around 2.5.
	 */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear\" shape_calculation_mode=\"scales\"",
	      { P("f32", "4", 0, 1, 2, 3), C("i64", "1", 2),
		C("f32", "1", 0.5) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5, 2.5);
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear\" shape_calculation_mode=\"scales\" antialias=\"true\"",
	      { P("f32", "4", 0, 1, 2, 3), C("i64", "1", 2),
		C("f32", "1", 0.5) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1.25 / 1.75, 4 / 1.75);
}

TEST_F(ops, interpolate_scales_mode_uses_the_given_scale)
{
	/*
	 * 3 * 1.7 = 5.1: 5 outputs; linear_onnx, asymmetric: sources x /
	 * 1.7 (not x / (5 / 3)) on [0 10 20]: 10 x / 1.7, clamped at 2.
	 */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\"",
	      { P("f32", "3", 0, 10, 20), C("i64", "1", 5),
		C("f32", "1", 1.7) },
	      { "5" } });
	EXPECT_OUT(0, F32, 1e-4, 0, 10 / 1.7, 20 / 1.7, 30 / 1.7, 20);
}

TEST_F(ops, interpolate_11_scales_two_axes)
{
	/* x2 on H and W, nearest asymmetric floor: each pixel a 2x2 block */
	RUN({ "Interpolate", "opset11",
	      "mode=\"nearest\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4), C("f32", "2", 2, 2),
		C("i32", "2", -2, -1) },
	      { "1,1,4,4" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4,
		   4);
	/* no axes input: one scale per axis */
	RUN({ "Interpolate", "opset11",
	      "mode=\"nearest\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4), C("f32", "4", 1, 1, 2, 1) },
	      { "1,1,4,2" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 3, 4, 3, 4);
	/* sizes as integers */
	RUN({ "Interpolate", "opset11",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\" coordinate_transformation_mode=\"align_corners\"",
	      { P("f32", "1,2", 0, 10), C("i32", "1", 3), C("i64", "1", 1) },
	      { "1,3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 5, 10);
}

TEST_F(ops, interpolate_11_pillow_modes)
{
	/*
	 * bilinear_pillow, [0 1 2 3] -> 2: support 2, centers 1 and 3;
	 * taps 0..2 weigh tri((j - 1 + .5) / 2) = .75 .75 .25, taps 1..3
	 * around 3 weigh .25 .75 .75.
	 */
	RUN({ "Interpolate", "opset11",
	      "mode=\"bilinear_pillow\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "4", 0, 1, 2, 3), C("i64", "1", 2) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1.25 / 1.75, 4 / 1.75);
	/* upscaling [1 3] -> 4: support 1, centers .25 .75 1.25 1.75 */
	RUN({ "Interpolate", "opset11",
	      "mode=\"bilinear_pillow\" shape_calculation_mode=\"scales\"",
	      { P("f32", "2", 1, 3), C("f32", "1", 2) }, { "4" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2.5, 3);
	/*
	 * bicubic_pillow (a = -.5), [1 3] -> 4: center .25 reads taps 0, 1
	 * at distances .25, 1.25 with weights .8671875, -.0703125; center
	 * .75 at -.25, .75 with .8671875, .2265625; normalised.
	 */
	RUN({ "Interpolate", "opset11",
	      "mode=\"bicubic_pillow\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 3), C("i64", "1", 4) }, { "4" } });
	EXPECT_OUT(0, F32, 1e-6, 0.65625 / 0.796875, 1.546875 / 1.09375,
		   4 - 1.546875 / 1.09375, 4 - 0.65625 / 0.796875);
}

TEST_F(ops, interpolate_pads)
{
	/* [1 2] padded to [0 1 2 0], resized to its own length */
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\" pads_begin=\"1\" pads_end=\"1\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 0);
	/* a padded axis that is not interpolated */
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\" pads_begin=\"1,0\"",
	      { P("f32", "1,2", 1, 2), C("i64", "1", 2), C("f32", "1", 1),
		C("i64", "1", 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 1, 2);
}

TEST_F(ops, interpolate_1)
{
	/* nearest: asymmetric, simple rounding (floor when upscaling) */
	RUN({ "Interpolate", "opset1", "axes=\"2,3\" mode=\"nearest\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4), C("i64", "2", 4, 4) },
	      { "1,1,4,4" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4,
		   4);
	RUN({ "Interpolate", "opset1",
	      "axes=\"1\" mode=\"linear\" align_corners=\"1\"",
	      { P("f32", "1,2", 0, 10), C("i32", "1", 3) }, { "1,3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 5, 10);
	RUN({ "Interpolate", "opset1", "axes=\"1\" mode=\"area\"",
	      { P("f32", "1,2", 0, 10), C("i32", "1", 3) }, { "1,3" } });
	EXPECT_FAIL("Interpolate", -EOPNOTSUPP, "area");
}

TEST_F(ops, interpolate_integers_and_empty)
{
	/* linear_onnx on u8: 0, 63.75, 191.25, 255 rounded */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\"",
	      { P("u8", "2", 0, 255), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 0, 64, 191, 255);
	/* an empty batch */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\"",
	      { P0("f32", "0,2"), C("i64", "1", 4), C("f32", "1", 1),
		C("i64", "1", 1) },
	      { "0,4" } });
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, interpolate_errors)
{
	RUN({ "Interpolate", "opset4",
	      "mode=\"bilinear\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "mode");
	RUN({ "Interpolate", "opset4",
	      "mode=\"bicubic_pillow\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "later Interpolate version");
	RUN({ "Interpolate", "opset4", "mode=\"nearest\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "shape_calculation_mode");
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "1,2", 1, 2), C("i64", "2", 4, 4), C("f32", "1", 1),
		C("i64", "1", 1) },
	      { "1,4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "1 axes but 2 sizes");
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "1,2", 1, 2), C("i64", "2", 4, 4), C("f32", "1", 1),
		C("i64", "2", 1, -1) },
	      { "1,4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "repeated");
	RUN({ "Interpolate", "opset11",
	      "mode=\"nearest\" shape_calculation_mode=\"scales\"",
	      { P("f32", "2", 1, 2), C("f32", "1", -2) }, { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "must be positive");
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\" pads_begin=\"-1\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "pads_begin");
}

/* ---- NonMaxSuppression ------------------------------------------------ */

/* NMS_BOXES and NMS_SCORES are in ops_util.h. */

TEST_F(ops, nms_5_suppress_by_iou)
{
	/* 3 (.95) removes 4; 0 (.9) removes 1 and 2; then 5 (.3) */
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { NMS_BOXES, NMS_SCORES, C("i64", "", 3), C("f32", "", 0.5),
		C("f32", "", 0) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 3, 0, 0, 0, 0, 0, 5);
	EXPECT_OUT(1, F32, 1e-6, 0, 0, 0.95, 0, 0, 0.9, 0, 0, 0.3);
	EXPECT_OUT(2, I64, 0, 3);
	/* a score threshold of .4 stops before box 5: -1 rows follow */
	RUN({ "NonMaxSuppression", "opset9", "output_type=\"i32\"",
	      { NMS_BOXES, NMS_SCORES, C("i32", "", 3), C("f32", "", 0.5),
		C("f32", "", 0.4) },
	      { "3,3", "3,3", "1" }, { "i32", "f32", "i32" } });
	EXPECT_OUT(0, I32, 0, 0, 0, 3, 0, 0, 0, -1, -1, -1);
	EXPECT_OUT(1, F32, 1e-6, 0, 0, 0.95, 0, 0, 0.9, -1, -1, -1);
	EXPECT_OUT(2, I32, 0, 2);
}

TEST_F(ops, nms_center_encoding_and_version_4)
{
	/* the same boxes as [x_center, y_center, width, height] */
	RUN({ "NonMaxSuppression", "opset4",
	      "box_encoding=\"center\"",
	      { P("f32", "1,6,4", 0.5, 0.5, 1, 1, 0.6, 0.5, 1, 1, 0.4, 0.5,
		  1, 1, 10.5, 0.5, 1, 1, 10.6, 0.5, 1, 1, 100.5, 0.5, 1, 1),
		NMS_SCORES, C("i64", "", 2), C("f32", "", 0.5) },
	      { "2,3" }, { "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 3, 0, 0, 0);
}

TEST_F(ops, nms_sort_result_descending)
{
	/*
	 * Two disjoint boxes, two classes: class 0 takes box 1 (.7) then
	 * box 0 (.5), class 1 box 0 (.9) then box 1 (.2).
	 */
	RUN({ "NonMaxSuppression", "opset5", "sort_result_descending=\"true\"",
	      { P("f32", "1,2,4", 0, 0, 1, 1, 0, 10, 1, 11),
		P("f32", "1,2,2", 0.5, 0.7, 0.9, 0.2), C("i64", "", 2),
		C("f32", "", 0.5), C("f32", "", 0) },
	      { "4,3", "4,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1);
	RUN({ "NonMaxSuppression", "opset5", "sort_result_descending=\"false\"",
	      { P("f32", "1,2,4", 0, 0, 1, 1, 0, 10, 1, 11),
		P("f32", "1,2,2", 0.5, 0.7, 0.9, 0.2), C("i64", "", 2),
		C("f32", "", 0.5), C("f32", "", 0) },
	      { "4,3", "4,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1);
}

TEST_F(ops, nms_soft_sigma_decays_scores)
{
	/*
	 * IOU of [0,0,1,1] and [0,.5,1,1.5] is .5 / 1.5 = 1/3; with sigma
	 * .5 the second score becomes .8 * exp(-.5 * (1/9) / .5).
	 */
	RUN({ "NonMaxSuppression", "opset9", NULL,
	      { P("f32", "1,2,4", 0, 0, 1, 1, 0, 0.5, 1, 1.5),
		P("f32", "1,1,2", 0.9, 0.8), C("i64", "", 2),
		C("f32", "", 1), C("f32", "", 0), C("f32", "", 0.5) },
	      { "2,3", "2,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 0, 0, 0, 1);
	EXPECT_OUT(1, F32, 1e-6, 0, 0, 0.9, 0, 0, 0.8 * exp(-1.0 / 9));
	EXPECT_OUT(2, I64, 0, 2);
}

TEST_F(ops, nms_errors)
{
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { P0("f32", "1,6,3"), P0("f32", "1,1,6"), C("i64", "", 3) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_FAIL("NonMaxSuppression", -EINVAL, "boxes must be");
	RUN({ "NonMaxSuppression", "opset5", "box_encoding=\"corners\"",
	      { P0("f32", "1,6,4"), P0("f32", "1,1,6"), C("i64", "", 3) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_FAIL("NonMaxSuppression", -EINVAL, "box_encoding");
}

/* ---- RegionYolo-0 ----------------------------------------------------- */

TEST_F(ops, region_yolo_softmax_and_sigmoid)
{
	/*
	 * One anchor, coords 4, classes 2, one cell: x, y, objectness go
	 * through a sigmoid (0 -> .5), w and h stay, the classes 0 and
	 * ln 3 through a softmax (1/4, 3/4) or a sigmoid (1/2, 3/4).
	 */
	RUN({ "RegionYolo", "opset1",
	      "coords=\"4\" classes=\"2\" num=\"1\" axis=\"1\" end_axis=\"3\" do_softmax=\"true\"",
	      { P("f32", "1,7,1,1", 0, 0, 1, 2, 0, 0, log(3.0)) },
	      { "1,7" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5, 0.5, 1, 2, 0.5, 0.25, 0.75);
	RUN({ "RegionYolo", "opset1",
	      "coords=\"4\" classes=\"2\" num=\"3\" axis=\"1\" end_axis=\"3\" do_softmax=\"false\" mask=\"1\"",
	      { P("f32", "1,7,1,1", 0, 0, 1, 2, 0, 0, log(3.0)) },
	      { "1,7,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5, 0.5, 1, 2, 0.5, 0.5, 0.75);
	RUN({ "RegionYolo", "opset1",
	      "coords=\"4\" classes=\"3\" num=\"1\" axis=\"1\" end_axis=\"3\" do_softmax=\"true\"",
	      { P0("f32", "1,7,1,1") }, { "1,7" } });
	EXPECT_FAIL("RegionYolo", -EINVAL, "channels 7");
}

/* ---- ops that existed before: their edge cases ------------------------ */

TEST_F(ops, avg_pool_exclude_pad_and_ceil)
{
	/*
	 * [[1 2] [3 4]], 2x2 windows, stride 1, one row and column of
	 * padding before: the windows hold {1}, {1 2}, {1 3}, {1 2 3 4}.
	 */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"0,0\" exclude-pad=\"true\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2, 2.5);
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"0,0\" exclude-pad=\"false\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.75, 1, 2.5);
	/* 3x3 input, 2x2 stride 2, ceil: partial windows at the edge */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" rounding_type=\"ceil\"",
	      { P("f32", "1,1,3,3", 1, 2, 3, 4, 5, 6, 7, 8, 9) },
	      { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 3, 4.5, 7.5, 9);
}

/* MaxPool of 8- and 16-bit integers keeps the type; AvgPool stays f32. */
TEST_F(ops, max_pool_integers)
{
	RUN({ "MaxPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"floor\"",
	      { P("u8", "1,1,2,3", 1, 200, 3, 4, 5, 255) }, { "1,1,1,2" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 200, 255);
	RUN({ "MaxPool", "opset8",
	      "kernel=\"2\" strides=\"2\" dilations=\"1\" pads_begin=\"0\" pads_end=\"0\" rounding_type=\"floor\"",
	      { P("i8", "1,1,4", -128, -3, 7, -9) }, { "1,1,2", "1,1,2" },
	      { "i8", "i64" } });
	EXPECT_OUT(0, NPR_ELEM_I8, 0, -3, 7);
	EXPECT_OUT(1, I64, 0, 1, 2);
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" rounding_type=\"floor\"",
	      { P("u8", "1,1,2,2", 1, 2, 3, 4) }, { "1,1,1,1" } });
	EXPECT_FAIL("AvgPool", -EINVAL, "f32");
}

/* ---- ROIPooling-2 ----------------------------------------------------- */

#define MAP16	P("f32", "1,1,4,4", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,	\
		  12, 13, 14, 15)

TEST_F(ops, roi_pooling_max)
{
	/*
	 * Map x[i][j] = 4 i + j.  ROI (0,0)-(3,3): 4x4 cells, 2x2 bins of
	 * 2x2: maxima 5, 7, 13, 15.  ROI (0,0)-(7,7) at scale .5: corners
	 * round to 0 and 4, 5 cells, bins of 2.5: rows/columns [0, 3) and
	 * [2, 4): maxima 10, 11, 14, 15.
	 */
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"2\" pooled_w=\"2\" spatial_scale=\"1\" method=\"max\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 3, 3) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 0, 5, 7, 13, 15);
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"2\" pooled_w=\"2\" spatial_scale=\"0.5\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 7, 7) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 0, 10, 11, 14, 15);
}

TEST_F(ops, roi_pooling_bilinear_and_errors)
{
	/* corners of the whole map, then its centre (1.5, 1.5) = 7.5 */
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"2\" pooled_w=\"2\" spatial_scale=\"1\" method=\"bilinear\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 1, 1) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 3, 12, 15);
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"1\" pooled_w=\"1\" spatial_scale=\"1\" method=\"bilinear\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 1, 1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 7.5);
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"0\" pooled_w=\"2\" spatial_scale=\"1\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 1, 1) }, { "1,1,0,2" } });
	EXPECT_FAIL("ROIPooling", -EINVAL, "pooled_h");
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"1\" pooled_w=\"1\" spatial_scale=\"1\"",
	      { MAP16, C("f32", "1,4", 0, 0, 1, 1) }, { "1,1,1,1" } });
	EXPECT_FAIL("ROIPooling", -EINVAL, "NUM_ROIS, 5");
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"1\" pooled_w=\"1\" spatial_scale=\"1\"",
	      { MAP16, P("f32", "1,5", 3, 0, 0, 1, 1) }, { "1,1,1,1" } });
	EXPECT_FAIL("ROIPooling", -EINVAL, "batch index");
}

/* ---- PriorBox-1/-8, DetectionOutput-1/-8 ------------------------------ */

TEST_F(ops, prior_box_1_grid)
{
	/*
	 * 2x2 map on a 4x4 image: step 2, centres (1, 1), (3, 1), (1, 3),
	 * (3, 3); one box of size 2 each, normalised by 4.  Then a row of
	 * variances.
	 */
	RUN({ "PriorBox", "opset1",
	      "min_size=\"2\" aspect_ratio=\"\" flip=\"false\" clip=\"false\" step=\"0\" offset=\"0.5\" variance=\"0.1\"",
	      { C("i64", "2", 2, 2), C("i64", "2", 4, 4) }, { "2,16" },
	      { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0, 0.5, 0.5, 0.5, 0, 1, 0.5, 0, 0.5,
		   0.5, 1, 0.5, 0.5, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
		   0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1);
}

TEST_F(ops, prior_box_8_min_max_order)
{
	/*
	 * 1x1 map on a 4x4 image, centre (2, 2).  Boxes: min 2 (half 1),
	 * max sqrt(2 * 4) (half sqrt 2), aspect ratio 2 (half sizes
	 * sqrt 2 by 1 / sqrt 2), all divided by 4.  With
	 * min_max_aspect_ratios_order the max box comes second, else last.
	 */
	const double h = sqrt(2.0) / 4, q = sqrt(0.5) / 4;

	RUN({ "PriorBox", "opset8",
	      "min_size=\"2\" max_size=\"4\" aspect_ratio=\"2\" flip=\"false\" clip=\"false\" step=\"0\" offset=\"0.5\" variance=\"0.1,0.1,0.2,0.2\" min_max_aspect_ratios_order=\"true\"",
	      { C("i32", "2", 1, 1), C("i32", "2", 4, 4) }, { "2,12" },
	      { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.25, 0.75, 0.75,
		   0.5 - h, 0.5 - h, 0.5 + h, 0.5 + h,
		   0.5 - h, 0.5 - q, 0.5 + h, 0.5 + q,
		   0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2);
	RUN({ "PriorBox", "opset8",
	      "min_size=\"2\" max_size=\"4\" aspect_ratio=\"2\" flip=\"false\" clip=\"false\" step=\"0\" offset=\"0.5\" variance=\"0.1,0.1,0.2,0.2\" min_max_aspect_ratios_order=\"false\"",
	      { C("i32", "2", 1, 1), C("i32", "2", 4, 4) }, { "2,12" },
	      { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.25, 0.75, 0.75,
		   0.5 - h, 0.5 - q, 0.5 + h, 0.5 + q,
		   0.5 - h, 0.5 - h, 0.5 + h, 0.5 + h,
		   0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2);
}

TEST_F(ops, detection_output_1_and_8_decode_one_box)
{
	/*
	 * One prior (.1, .1)-(.5, .5), zero offsets: CENTER_SIZE decoding
	 * gives the prior itself; class 1 scores .9, background 0 is
	 * skipped: [image 0, label 1, .9, .1, .1, .5, .5].
	 */
	RUN({ "DetectionOutput", "opset1",
	      "num_classes=\"2\" background_label_id=\"0\" top_k=\"1\" keep_top_k=\"1\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" share_location=\"true\" nms_threshold=\"0.45\" confidence_threshold=\"0.01\" normalized=\"true\" variance_encoded_in_target=\"false\"",
	      { P("f32", "1,4", 0, 0, 0, 0), P("f32", "1,2", 0.1, 0.9),
		C("f32", "1,2,4", 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.2, 0.2) },
	      { "1,1,1,7" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 1, 0.9, 0.1, 0.1, 0.5, 0.5);
	RUN({ "DetectionOutput", "opset8",
	      "background_label_id=\"0\" top_k=\"1\" keep_top_k=\"1\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" share_location=\"true\" nms_threshold=\"0.45\" confidence_threshold=\"0.01\" normalized=\"true\" variance_encoded_in_target=\"false\"",
	      { P("f32", "1,4", 0, 0, 0, 0), P("f32", "1,2", 0.1, 0.9),
		C("f32", "1,2,4", 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.2, 0.2) },
	      { "1,1,1,7" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 1, 0.9, 0.1, 0.1, 0.5, 0.5);
	RUN({ "DetectionOutput", "opset8",
	      "background_label_id=\"0\" top_k=\"1\" keep_top_k=\"1\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" share_location=\"true\" nms_threshold=\"0.45\" normalized=\"true\"",
	      { P("f32", "1,5", 0, 0, 0, 0, 0), P("f32", "1,2", 0.1, 0.9),
		C("f32", "1,2,4", 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.2, 0.2) },
	      { "1,1,1,7" } });
	EXPECT_FAIL("DetectionOutput", -EINVAL, "box_logits length 5");
}

/* ---- 3-D spatial ops ---------------------------------------------------- */

/* x = 1..8 as [1, 1, 2, 2, 2]; every expected value worked by hand. */
TEST_F(ops, spatial_3d_conv_pool_deconv)
{
	/* all-ones 2x2x2 kernel over the whole input: the sum, 36 */
	RUN({ "Convolution", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("f32", "1,1,2,2,2", 1, 1, 1, 1, 1, 1, 1, 1) },
	      { "1,1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 36);
	/* one tap (the last) with pads 1 on each side: x shifted by one */
	RUN({ "Convolution", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"1,1,1\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("f32", "1,1,2,2,2", 0, 0, 0, 0, 0, 0, 0, 1) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 2, 3, 4, 5, 6, 7, 8);
	/* two groups of one channel, weights 1 and -1 */
	RUN({ "GroupConvolution", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,2,1,1,2", 1, 2, 3, 4),
		C("f32", "2,1,1,1,1,1", 1, -1) },
	      { "1,2,1,1,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 2, -3, -4);
	RUN({ "MaxPool", "opset1",
	      "kernel=\"2,2,2\" strides=\"2,2,2\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 8, 5, 6, 7, 4) },
	      { "1,1,1,1,1" } });
	EXPECT_OUT(0, F32, 0, 8);
	/*
	 * pads_begin 1, exclude-pad: output (0,0,0) sees only x[0,0,0] = 1,
	 * output (1,1,1) all eight (mean 4.5); output (0,1,1) the four with
	 * d = 0: (1 + 2 + 3 + 4) / 4
	 */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2,2\" strides=\"1,1,1\" pads_begin=\"1,1,1\" pads_end=\"0,0,0\" exclude-pad=\"true\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5);
	/* without exclude-pad the divisor is 8 everywhere */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2,2\" strides=\"1,1,1\" pads_begin=\"1,1,1\" pads_end=\"0,0,0\" exclude-pad=\"false\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1.0 / 8, 3.0 / 8, 4.0 / 8, 10.0 / 8,
		   6.0 / 8, 14.0 / 8, 16.0 / 8, 36.0 / 8);
	/* one input pixel of 2 scatters the kernel 1..8 times 2 */
	RUN({ "ConvolutionBackpropData", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,1,1,1", 2),
		C("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, 4, 6, 8, 10, 12, 14, 16);
	/* stride 2 places two input pixels' kernels side by side */
	RUN({ "ConvolutionBackpropData", "opset1",
	      "strides=\"1,1,2\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,1,1,2", 1, 10),
		C("f32", "1,1,1,1,2", 1, 2) },
	      { "1,1,1,1,4" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 2, 10, 20);
}

/* ---- ROIAlign-3/-9 ---------------------------------------------------- */

TEST_F(ops, roi_align_avg_max_and_aligned_modes)
{
	/*
	 * Map x[i][j] = 4 i + j is linear, so every bilinear sample is
	 * 4 y + x.  ROI (0,0)-(3,3), one bin, 2x2 samples at .75 and 2.25:
	 * mean 4 * 1.5 + 1.5 = 7.5, max 4 * 2.25 + 2.25 = 11.25.
	 */
	RUN({ "ROIAlign", "opset3",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\"",
	      { MAP16, C("f32", "1,4", 0, 0, 3, 3), C("i32", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-5, 7.5);
	RUN({ "ROIAlign", "opset3",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"max\"",
	      { MAP16, C("f32", "1,4", 0, 0, 3, 3), C("i32", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-5, 11.25);
	/* 2x2 bins of 1.5, one sample each at .75 and 2.25 */
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"2\" pooled_w=\"2\" sampling_ratio=\"1\" spatial_scale=\"1\" mode=\"avg\" aligned_mode=\"asymmetric\"",
	      { MAP16, C("f32", "1,4", 0, 0, 3, 3), C("i64", "1", 0) },
	      { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-5, 3.75, 5.25, 9.75, 11.25);
	/*
	 * half_pixel: (0,0)-(4,4) maps to (0,0)-(4,4) - .5 + .5 = (0,0)-
	 * (4,4); samples at 1 and 3 (3 is the last row and column):
	 * mean 4 * 2 + 2 = 10.
	 */
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\" aligned_mode=\"half_pixel\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), C("i64", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-5, 10);
	RUN({ "ROIAlign", "opset3",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\" aligned_mode=\"half_pixel\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), C("i64", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_FAIL("ROIAlign", -EINVAL, "aligned_mode");
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), P("i64", "1", 1) },
	      { "1,1,1,1" } });
	EXPECT_FAIL("ROIAlign", -EINVAL, "batch index 1");
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"mean\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), C("i64", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_FAIL("ROIAlign", -EINVAL, "mode");
}

/* ---- GridSample-9 ----------------------------------------------------- */

TEST_F(ops, grid_sample_modes_and_padding)
{
	/* data [[1 2] [3 4]] */
#define GS_DATA	P("f32", "1,1,2,2", 1, 2, 3, 4)
	/* align_corners: (0, 0) is the centre of the map: the mean 2.5 */
	RUN({ "GridSample", "opset9", "align_corners=\"true\"",
	      { GS_DATA, P("f32", "1,1,1,2", 0, 0) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 2.5);
	/*
	 * Without: (-1, -1) is the outer corner, x = y = -0.5; bilinear
	 * weighs 0.25 each of pixels (-1,-1), (-1,0), (0,-1), (0,0): zeros
	 * padding gives 0.25 * 1, border padding 1.
	 */
	RUN({ "GridSample", "opset9", NULL,
	      { GS_DATA, P("f32", "1,1,1,2", -1, -1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25);
	RUN({ "GridSample", "opset9", "padding_mode=\"border\"",
	      { GS_DATA, P("f32", "1,1,1,2", -1, -1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 1);
	/*
	 * nearest, align_corners: (0.4, -0.9) is x 0.7, y 0.05: pixel (0, 1)
	 * = 2; (0, 0) is x = y = 0.5, which rounds half to even: pixel 1.
	 */
	RUN({ "GridSample", "opset9", "mode=\"nearest\" align_corners=\"true\"",
	      { GS_DATA, P("f32", "1,2,1,2", 0.4, -0.9, 0, 0) },
	      { "1,1,2,1" } });
	EXPECT_OUT(0, F32, 0, 2, 1);
	/* reflection, align_corners: x = 2 reflects about 1 onto 0 */
	RUN({ "GridSample", "opset9",
	      "mode=\"nearest\" padding_mode=\"reflection\" align_corners=\"true\"",
	      { GS_DATA, P("f32", "1,1,1,2", 3, -1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 0, 1);
	/* bicubic weights sum to 1: a constant map stays constant */
	RUN({ "GridSample", "opset9", "mode=\"bicubic\" padding_mode=\"border\"",
	      { P("f32", "1,1,2,2", 5, 5, 5, 5),
		P("f32", "1,1,2,2", 0.3, -0.2, -0.7, 0.9) }, { "1,1,1,2" } });
	EXPECT_OUT(0, F32, 1e-5, 5, 5);
	/* an empty map (W = 0) has nothing to reflect or pad with: zeros,
	 * never a read before it */
	RUN({ "GridSample", "opset9", "padding_mode=\"reflection\"",
	      { P0("f32", "1,1,3,0"), P("f32", "1,1,2,2", -1, 0, 0.5, 0.5) },
	      { "1,1,1,2" } });
	EXPECT_OUT(0, F32, 0, 0, 0);
#undef GS_DATA
}

TEST_F(ops, grid_sample_errors)
{
	RUN({ "GridSample", "opset9", NULL,
	      { P0("f32", "1,1,2,2"), P0("f32", "1,1,1,3") }, { "1,1,1,1" } });
	EXPECT_FAIL("GridSample", -EINVAL, "grid");
	RUN({ "GridSample", "opset9", NULL,
	      { P0("i32", "1,1,2,2"), P0("f32", "1,1,1,2") }, { "1,1,1,1" } });
	EXPECT_FAIL("GridSample", -EINVAL, "must be f32");
	RUN({ "GridSample", "opset9", "mode=\"area\"",
	      { P0("f32", "1,1,2,2"), P0("f32", "1,1,1,2") }, { "1,1,1,1" } });
	EXPECT_FAIL("GridSample", -EINVAL, "area");
}

TEST_HARNESS_MAIN
