// SPDX-License-Identifier: MIT
/*
 * Op-level tests of indexing and data movement, one op per model on the cpu
 * device: Gather, GatherElements, GatherND, the Scatter updates, OneHot,
 * NonZero, Unique, TopK, the depth/space rearrangements, ConvertLike, Pad,
 * Broadcast, Tile, Range, Select, Split, ReverseSequence, empty tensors,
 * and the ops whose output shape depends on the values of an input (run
 * twice on one request, on two requests, and on two threads), with their
 * errors.
 *
 * How each op is built and run, the checks, and where the expected values
 * come from: ops_util.h.
 */
#include "ops_util.h"

/* ---- GatherElements-6 ------------------------------------------------- */

TEST_F(ops, gather_elements_spec_examples)
{
	/* out[i][j] = data[i][idx[i][j]] */
	RUN({ "GatherElements", "opset6", "axis=\"1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 0, 1, 0) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 4, 3);
	/* axis 0, indices smaller than data along the axis */
	RUN({ "GatherElements", "opset6", "axis=\"0\"",
	      { P("f32", "3,3", 1, 2, 3, 4, 5, 6, 7, 8, 9),
		C("i64", "2,3", 1, 2, 0, 2, 0, 0) },
	      { "2,3" } });
	EXPECT_OUT(0, F32, 0, 4, 8, 3, 7, 2, 3);
}

TEST_F(ops, gather_elements_negative_axis_and_indices)
{
	/* axis -1 = 1; index -1 is 1, -2 is 0 */
	RUN({ "GatherElements", "opset6", "axis=\"-1\"",
	      { P("i32", "2,2", 1, 2, 3, 4), C("i32", "2,2", -1, 0, -2, -1) },
	      { "2,2" } });
	EXPECT_OUT(0, I32, 0, 2, 1, 3, 4);
}

TEST_F(ops, gather_elements_bad_shapes_and_indices_fail)
{
	/* dim 1 differs and is not the axis */
	RUN({ "GatherElements", "opset6", "axis=\"0\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,1", 0, 1) },
	      { "2,1" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "only axis 0 may differ");
	RUN({ "GatherElements", "opset6", "axis=\"2\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 1, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "out of range");
	RUN({ "GatherElements", "opset6", "axis=\"1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), P("i32", "2,2", 0, 2, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "index 2");
	RUN({ "GatherElements", "opset6", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 1, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "axis");
}

/* ---- GatherND-5/-8 ---------------------------------------------------- */

TEST_F(ops, gather_nd_spec_examples)
{
	/* elements: (0,0) -> 1, (1,0) -> 3 */
	RUN({ "GatherND", "opset5", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 0, 1, 0) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 3);
	/* slices: rows 1 and 0 */
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "2,1", 1, 0) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 1, 2);
}

TEST_F(ops, gather_nd_batch_dims_5_flattens_8_keeps)
{
	/*
	 * data[b0][b1][k] = 1 + 4 b0 + 2 b1 + k; per batch (b0, b1) the
	 * index picks k: (0,0)->1: 2, (0,1)->0: 3, (1,0)->0: 5, (1,1)->1: 8.
	 */
	RUN({ "GatherND", "opset8", "batch_dims=\"2\"",
	      { P("f32", "2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("i32", "2,2,1", 1, 0, 0, 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 5, 8);
	RUN({ "GatherND", "opset5", "batch_dims=\"2\"",
	      { P("f32", "2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("i32", "2,2,1", 1, 0, 0, 1) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 5, 8);
}

TEST_F(ops, gather_nd_negative_index_and_errors)
{
	/* -1 is row 1 */
	RUN({ "GatherND", "opset8", NULL,
	      { P("i64", "2,2", 1, 2, 3, 4), C("i64", "1,1", -1) },
	      { "1,2" } });
	EXPECT_OUT(0, I64, 0, 3, 4);
	/* indices.shape[-1] = 3 > rank 2 */
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "1,3", 0, 0, 0) },
	      { "1" } });
	EXPECT_FAIL("GatherND", -EINVAL, "indices.shape[-1]");
	RUN({ "GatherND", "opset8", "batch_dims=\"-1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,1", 0, 0) },
	      { "2" } });
	EXPECT_FAIL("GatherND", -EINVAL, "batch_dims");
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("f32", "2,1", 0, 0) },
	      { "2,2" } });
	EXPECT_FAIL("GatherND", -EINVAL, "not i32 or i64");
}

/* ---- ScatterUpdate-3 -------------------------------------------------- */

TEST_F(ops, scatter_update_axis0_and_axis1)
{
	/* rows 2 and 0 replaced by the two update rows */
	RUN({ "ScatterUpdate", "opset3", NULL,
	      { P0("f32", "3,2"), C("i32", "2", 2, 0),
		P("f32", "2,2", 1, 2, 3, 4), C("i64", "", 0) },
	      { "3,2" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 0, 0, 1, 2);
	/* axis -1: updates [2, 1, 1] into column 2 (index -1) */
	RUN({ "ScatterUpdate", "opset3", NULL,
	      { P("i32", "2,3", 1, 1, 1, 1, 1, 1), C("i32", "1,1", -1),
		P("i32", "2,1,1", 5, 6), C("i32", "", -1) },
	      { "2,3" } });
	EXPECT_OUT(0, I32, 0, 1, 1, 5, 1, 1, 6);
}

TEST_F(ops, scatter_update_bad_updates_shape_fails)
{
	RUN({ "ScatterUpdate", "opset3", NULL,
	      { P0("f32", "3,2"), C("i32", "2", 2, 0),
		P0("f32", "2,3"), C("i64", "", 0) },
	      { "3,2" } });
	EXPECT_FAIL("ScatterUpdate", -EINVAL, "updates shape [2,3]");
}

/* ---- ScatterElementsUpdate-3/-12 -------------------------------------- */

TEST_F(ops, scatter_elements_update_spec_example)
{
	/*
	 * out[idx[i][j]][j] = upd[i][j]: (1,0)=1.0 (0,1)=1.1 (2,2)=1.2
	 * (0,0)=2.0 (2,1)=2.1 (1,2)=2.2.
	 */
	RUN({ "ScatterElementsUpdate", "opset3", NULL,
	      { P0("f32", "3,3"), C("i32", "2,3", 1, 0, 2, 0, 2, 1),
		P("f32", "2,3", 1.0, 1.1, 1.2, 2.0, 2.1, 2.2),
		C("i32", "", 0) },
	      { "3,3" } });
	EXPECT_OUT(0, F32, 1e-6, 2.0, 1.1, 0, 1.0, 0, 2.2, 0, 2.1, 1.2);
}

TEST_F(ops, scatter_elements_update_12_reductions)
{
	/* duplicates at 1 and 3 (-1): sum adds both to the data */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"sum\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "4", 1, 1, 3, -1),
		P("f32", "4", 10, 20, 30, 40), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 32, 3, 74);
	/* mean with the data: (2+10+20)/3, (4+30+40)/3 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"mean\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "4", 1, 1, 3, -1),
		P("f32", "4", 10, 20, 30, 40), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 1e-5, 1, 32.0 / 3, 3, 74.0 / 3);
	/* mean without: (10+20)/2, (30+40)/2; untouched elements stay */
	RUN({ "ScatterElementsUpdate", "opset12",
	      "reduction=\"mean\" use_init_val=\"false\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "4", 1, 1, 3, -1),
		P("f32", "4", 10, 20, 30, 40), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 15, 3, 35);
	/* max: with the data 100 wins, without it 7 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"max\"",
	      { P("f32", "4", 1, 100, 3, 4), C("i32", "2", 1, 1),
		P("f32", "2", 5, 7), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 100, 3, 4);
	RUN({ "ScatterElementsUpdate", "opset12",
	      "reduction=\"max\" use_init_val=\"false\"",
	      { P("f32", "4", 1, 100, 3, 4), C("i32", "2", 1, 1),
		P("f32", "2", 5, 7), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 7, 3, 4);
	/* prod on i32: 2 * 4 * 5 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"prod\"",
	      { P("i32", "2", 2, 3), C("i32", "2", 0, 0),
		P("i32", "2", 4, 5), C("i32", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, I32, 0, 40, 3);
	/* integer mean rounds toward -inf (our choice): (1+2+2)/3 -> 1 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"mean\"",
	      { P("i32", "2", 1, 2), C("i32", "2", 0, 0),
		P("i32", "2", 2, 2), C("i32", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, I32, 0, 1, 2);
}

TEST_F(ops, scatter_elements_update_bad_reduction_fails)
{
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"sub\"",
	      { P("f32", "2", 1, 2), C("i32", "1", 0), P("f32", "1", 1),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_FAIL("ScatterElementsUpdate", -EINVAL, "sub");
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"avg\"",
	      { P("f32", "2", 1, 2), C("i32", "1", 0), P("f32", "1", 1),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_FAIL("ScatterElementsUpdate", -EINVAL, "reduction");
	/* updates shape differs from indices */
	RUN({ "ScatterElementsUpdate", "opset3", NULL,
	      { P("f32", "2", 1, 2), C("i32", "1", 0), P("f32", "2", 1, 2),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_FAIL("ScatterElementsUpdate", -EINVAL, "updates shape");
}

/* ---- ScatterNDUpdate-3/-15 -------------------------------------------- */

TEST_F(ops, scatter_nd_update_spec_examples)
{
	RUN({ "ScatterNDUpdate", "opset3", NULL,
	      { P("f32", "8", 1, 2, 3, 4, 5, 6, 7, 8),
		C("i32", "4,1", 4, 3, 1, 7), P("f32", "4", 9, 10, 11, 12) },
	      { "8" } });
	EXPECT_OUT(0, F32, 0, 1, 11, 3, 10, 9, 6, 7, 12);
	/* a slice: row 1 (as -1) */
	RUN({ "ScatterNDUpdate", "opset3", NULL,
	      { P0("i64", "2,2"), C("i64", "1,1", -1), P("i64", "1,2", 5, 6) },
	      { "2,2" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 5, 6);
}

TEST_F(ops, scatter_nd_update_15_reductions)
{
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"sum\"",
	      { P("f32", "3", 1, 2, 3), C("i32", "3,1", 0, 0, 2),
		P("f32", "3", 1, 1, 1) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 3, 2, 4);
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"sub\"",
	      { P("f32", "3", 1, 2, 3), C("i32", "3,1", 0, 0, 2),
		P("f32", "3", 1, 1, 1) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, -1, 2, 2);
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"min\"",
	      { P("i32", "3", 1, 2, 3), C("i32", "2,1", 1, 1),
		P("i32", "2", 7, -4) },
	      { "3" } });
	EXPECT_OUT(0, I32, 0, 1, -4, 3);
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"mean\"",
	      { P("f32", "3", 1, 2, 3), C("i32", "1,1", 0), P("f32", "1", 1) },
	      { "3" } });
	EXPECT_FAIL("ScatterNDUpdate", -EINVAL, "mean");
}

/* ---- OneHot-1 --------------------------------------------------------- */

TEST_F(ops, one_hot_axis_last_and_first)
{
	/* index -1 is out of [0, depth): a row of off_value */
	RUN({ "OneHot", "opset1", "axis=\"-1\"",
	      { P("i32", "4", 0, 2, -1, 1), C("i64", "", 3),
		C("f32", "", 5), C("f32", "", 0) },
	      { "4,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0);
	RUN({ "OneHot", "opset1", "axis=\"0\"",
	      { P("i64", "4", 0, 2, -1, 1), C("i32", "", 3),
		C("i32", "", 1), C("i32", "", -1) },
	      { "3,4" }, { "i32" } });
	EXPECT_OUT(0, I32, 0, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1);
}

/* OneHot-16: negative indices off, or counted from the end */
TEST_F(ops, one_hot_16_negative_indices_mode)
{
	RUN({ "OneHot", "opset16", "axis=\"-1\"",
	      { P("i64", "3", -1, 1, -4), C("i64", "", 3), C("f32", "", 1),
		C("f32", "", 0) },
	      { "3,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0);
	/* -1 is 2, -4 is out of [-3, -1]: off */
	RUN({ "OneHot", "opset16",
	      "axis=\"-1\" negative_indices_mode=\"normalize\"",
	      { P("i64", "3", -1, 1, -4), C("i64", "", 3), C("f32", "", 1),
		C("f32", "", 0) },
	      { "3,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0);
	RUN({ "OneHot", "opset16",
	      "axis=\"-1\" negative_indices_mode=\"wrap\"",
	      { P("i64", "1", 0), C("i64", "", 3), C("f32", "", 1),
		C("f32", "", 0) },
	      { "1,3" }, { "f32" } });
	EXPECT_FAIL("OneHot", -EINVAL, "negative_indices_mode");
}

TEST_F(ops, one_hot_errors)
{
	RUN({ "OneHot", "opset1", "axis=\"0\"",
	      { P("i32", "2", 0, 1), C("i64", "", -2),
		C("f32", "", 1), C("f32", "", 0) },
	      { "0,2" } });
	EXPECT_FAIL("OneHot", -EINVAL, "depth -2");
	RUN({ "OneHot", "opset1", "axis=\"2\"",
	      { P("i32", "2", 0, 1), C("i64", "", 2),
		C("f32", "", 1), C("f32", "", 0) },
	      { "2,2" } });
	EXPECT_FAIL("OneHot", -EINVAL, "axis 2");
	RUN({ "OneHot", "opset1", "axis=\"0\"",
	      { P("i32", "2", 0, 1), C("i64", "", 2),
		C("f32", "", 1), C("i32", "", 0) },
	      { "2,2" } });
	EXPECT_FAIL("OneHot", -EINVAL, "off_value");
}

/* ---- NonZero-3 -------------------------------------------------------- */

TEST_F(ops, non_zero_of_a_constant)
{
	/* nonzero at (0,1) and (1,0): rows are coordinates */
	RUN({ "NonZero", "opset3", NULL,
	      { C("f32", "2,2", 0, 1, 2, 0) }, { "2,2" }, { "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 1, 1, 0);
	RUN({ "NonZero", "opset3", "output_type=\"i32\"",
	      { C("i32", "3", 0, 0, 7) }, { "1,1" }, { "i32" } });
	EXPECT_OUT(0, I32, 0, 2);
	/* all zero: [1, 0] */
	RUN({ "NonZero", "opset3", NULL, { C("u8", "3", 0, 0, 0) },
	      { "1,0" }, { "i64" } });
	EXPECT_OUT(0, I64, 0);
}

TEST_F(ops, non_zero_of_a_parameter)
{
	/* the output shape follows the values, run by run */
	RUN({ "NonZero", "opset3", NULL, { P("f32", "2,2", 0, 1, 2, 0) },
	      { "2,2" }, { "i64" },
	      .again = { V(0, 0, 0, 3) } });
	EXPECT_DIMS(0, 2, 1);
	EXPECT_OUT(0, I64, 0, 1, 1);
	RUN({ "NonZero", "opset3", NULL, { P("f32", "2,2", 0, 1, 2, 0) },
	      { "2,2" }, { "i64" } });
	EXPECT_DIMS(0, 2, 2);
	EXPECT_OUT(0, I64, 0, 0, 1, 1, 0);
	RUN({ "NonZero", "opset3", "output_type=\"f32\"",
	      { C("f32", "2", 1, 0) }, { "1,1" } });
	EXPECT_FAIL("NonZero", -EINVAL, "output_type");
}

/* ---- Unique-10 -------------------------------------------------------- */

/*
 * The spec's examples: [2, 1, 1, 3, 4, 3] flattened.  Sorted: values
 * 1 2 3 4, first at 1 0 3 4, each element's value at 1 0 0 2 3 2, counts
 * 2 1 2 1; unsorted: the order of first occurrence.
 */
TEST_F(ops, unique_flattened_sorted_and_not)
{
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,3", 2, 1, 1, 3, 4, 3) },
	      { "4", "4", "6", "4" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 4);
	EXPECT_OUT(1, I64, 0, 1, 0, 3, 4);
	EXPECT_OUT(2, I64, 0, 1, 0, 0, 2, 3, 2);
	EXPECT_OUT(3, I64, 0, 2, 1, 2, 1);
	RUN({ "Unique", "opset10",
	      "sorted=\"false\" index_element_type=\"i32\" count_element_type=\"i32\"",
	      { C("i32", "6", 2, 1, 1, 3, 4, 3) },
	      { "4", "4", "6", "4" }, { "i32", "i32", "i32", "i32" } });
	EXPECT_OUT(0, I32, 0, 2, 1, 3, 4);
	EXPECT_OUT(1, I32, 0, 0, 1, 3, 4);
	EXPECT_OUT(2, I32, 0, 0, 1, 1, 2, 3, 2);
	EXPECT_OUT(3, I32, 0, 1, 2, 2, 1);
}

TEST_F(ops, unique_slices_along_an_axis)
{
	/* rows: [1 0 0] twice, then [2 3 4] */
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "3,3", 1, 0, 0, 1, 0, 0, 2, 3, 4),
		C("i64", "", 0) },
	      { "2,3", "2", "3", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 1, 0, 0, 2, 3, 4);
	EXPECT_OUT(1, I64, 0, 0, 2);
	EXPECT_OUT(2, I64, 0, 0, 0, 1);
	EXPECT_OUT(3, I64, 0, 2, 1);
	/* columns (1 2), (0 3), (1 2): (0 3) sorts first */
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,3", 1, 0, 1, 2, 3, 2), C("i32", "1", -1) },
	      { "2,2", "2", "3", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 3, 2);
	EXPECT_OUT(1, I64, 0, 1, 0);
	EXPECT_OUT(2, I64, 0, 1, 0, 1);
	EXPECT_OUT(3, I64, 0, 1, 2);
}

TEST_F(ops, unique_of_a_parameter_nan_and_empty)
{
	/* the number of unique values follows the data, run by run */
	RUN({ "Unique", "opset10", NULL, { P("f32", "4", 5, 5, 5, 5) },
	      { "1", "1", "4", "1" }, { "f32", "i64", "i64", "i64" },
	      .again = { V(3, 1, 3, 2) } });
	EXPECT_DIMS(0, 3);
	EXPECT_DIMS(2, 4);
	EXPECT_OUT(0, F32, 0, 1, 2, 3);
	EXPECT_OUT(2, I64, 0, 2, 0, 2, 1);
	EXPECT_OUT(3, I64, 0, 1, 1, 2);
	/* NaN equals NaN and sorts last */
	RUN({ "Unique", "opset10", NULL,
	      { P("f32", "4", NAN, 1, NAN, 1) },
	      { "2", "2", "4", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 1, NAN);
	EXPECT_OUT(1, I64, 0, 1, 0);
	EXPECT_OUT(2, I64, 0, 1, 0, 1, 0);
	EXPECT_OUT(3, I64, 0, 2, 2);
	/* no elements: nothing unique */
	RUN({ "Unique", "opset10", NULL, { C("f32", "0", 0) },
	      { "0", "0", "0", "0" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_DIMS(0, 0);
	EXPECT_DIMS(2, 0);
}

TEST_F(ops, unique_errors)
{
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,2", 1, 2, 3, 4), C("i64", "", 2) },
	      { "2,2", "2", "2", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_FAIL("Unique", -EINVAL, "axis 2 is out of range");
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,2", 1, 2, 3, 4), C("f32", "", 0) },
	      { "2,2", "2", "2", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_FAIL("Unique", -EINVAL, "axis must be");
	RUN({ "Unique", "opset10", "index_element_type=\"f32\"",
	      { C("f32", "2", 1, 2) },
	      { "2", "2", "2", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_FAIL("Unique", -EINVAL, "index_element_type");
	RUN({ "Unique", "opset10", NULL, { C("f32", "2", 1, 2) },
	      { "2" }, { "f32" } });
	EXPECT_FAIL("Unique", -EINVAL, "4");
}

/* ---- DepthToSpace-1, SpaceToDepth-1, ShuffleChannels-1, ReorgYolo-2 --- */

TEST_F(ops, depth_to_space_both_modes)
{
	/*
	 * [1, 8, 1, 1], bs 2, C' = 2.  blocks_first: out[c'][i][j] =
	 * in[(2 i + j) * 2 + c']; depth_first: in[4 c' + 2 i + j].
	 */
	RUN({ "DepthToSpace", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P("f32", "1,8,1,1", 0, 1, 2, 3, 4, 5, 6, 7) }, { "1,2,2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 4, 6, 1, 3, 5, 7);
	RUN({ "DepthToSpace", "opset1", "mode=\"depth_first\" block_size=\"2\"",
	      { P("f32", "1,8,1,1", 0, 1, 2, 3, 4, 5, 6, 7) }, { "1,2,2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5, 6, 7);
}

TEST_F(ops, space_to_depth_inverts_depth_to_space)
{
	RUN({ "SpaceToDepth", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P("f32", "1,2,2,2", 0, 2, 4, 6, 1, 3, 5, 7) }, { "1,8,1,1" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5, 6, 7);
	RUN({ "SpaceToDepth", "opset1", "mode=\"depth_first\" block_size=\"2\"",
	      { P("i32", "1,2,2,2", 0, 1, 2, 3, 4, 5, 6, 7) }, { "1,8,1,1" } });
	EXPECT_OUT(0, I32, 0, 0, 1, 2, 3, 4, 5, 6, 7);
	/* 1-D spatial: [1, 1, 4] -> [1, 2, 2], channel j holds x[2 w + j] */
	RUN({ "SpaceToDepth", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P("f32", "1,1,4", 10, 11, 12, 13) }, { "1,2,2" } });
	EXPECT_OUT(0, F32, 0, 10, 12, 11, 13);
}

TEST_F(ops, depth_space_errors)
{
	RUN({ "DepthToSpace", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P0("f32", "1,6,1,1") }, { "1,1,2,2" } });
	EXPECT_FAIL("DepthToSpace", -EINVAL, "not divisible");
	RUN({ "DepthToSpace", "opset1", "mode=\"sideways\" block_size=\"2\"",
	      { P0("f32", "1,8,1,1") }, { "1,2,2,2" } });
	EXPECT_FAIL("DepthToSpace", -EINVAL, "mode");
	RUN({ "SpaceToDepth", "opset1", "mode=\"depth_first\" block_size=\"0\"",
	      { P0("f32", "1,1,2,2") }, { "1,1,2,2" } });
	EXPECT_FAIL("SpaceToDepth", -EINVAL, "block size 0");
	RUN({ "SpaceToDepth", "opset1", "mode=\"depth_first\" block_size=\"2\"",
	      { P0("f32", "1,1,3,2") }, { "1,4,1,1" } });
	EXPECT_FAIL("SpaceToDepth", -EINVAL, "not divisible");
}

TEST_F(ops, shuffle_channels)
{
	/* [1, 6, 1, 1], group 3: out[c' * 3 + g] = in[g * 2 + c'] */
	RUN({ "ShuffleChannels", "opset1", "axis=\"-3\" group=\"3\"",
	      { P("f32", "1,6,1,1", 0, 1, 2, 3, 4, 5) }, { "1,6,1,1" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 4, 1, 3, 5);
	RUN({ "ShuffleChannels", "opset1", "axis=\"1\" group=\"4\"",
	      { P0("f32", "1,6,1,1") }, { "1,6,1,1" } });
	EXPECT_FAIL("ShuffleChannels", -EINVAL, "group 4");
	RUN({ "ShuffleChannels", "opset1", "axis=\"4\" group=\"1\"",
	      { P0("f32", "1,6,1,1") }, { "1,6,1,1" } });
	EXPECT_FAIL("ShuffleChannels", -EINVAL, "axis 4");
}

TEST_F(ops, reorg_yolo_stride_2)
{
	/*
	 * [1, 4, 2, 2] -> [1, 16, 1, 1].  With C / s^2 = 1, output element
	 * (k, j, i) of [4, 2, 2] is the input read as [1, 4, 4] at
	 * (2 j + k / 2, 2 i + k % 2), i.e. element 4 (2 j + k / 2) +
	 * 2 i + k % 2.
	 */
	RUN({ "ReorgYolo", "opset2", "stride=\"2\"",
	      { P("f32", "1,4,2,2", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		  13, 14, 15) },
	      { "1,16,1,1" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7,
		   13, 15);
	RUN({ "ReorgYolo", "opset2", "stride=\"2\"", { P0("f32", "1,2,2,2") },
	      { "1,8,1,1" } });
	EXPECT_FAIL("ReorgYolo", -EINVAL, "stride^2");
	RUN({ "ReorgYolo", "opset2", NULL, { P0("f32", "1,4,2,2") },
	      { "1,16,1,1" } });
	EXPECT_FAIL("ReorgYolo", -EINVAL, "stride");
}

/* ---- ConvertLike-1 ---------------------------------------------------- */

TEST_F(ops, convert_like_takes_the_type_of_input_1)
{
	/* float to integer truncates toward zero */
	RUN({ "ConvertLike", "opset1", NULL,
	      { P("f32", "3", 1.7, -1.7, 300), C("i32", "1", 0) }, { "3" },
	      { "i32" } });
	EXPECT_OUT(0, I32, 0, 1, -1, 300);
	RUN({ "ConvertLike", "opset1", NULL,
	      { P("i64", "2", 0, 5), C("boolean", "", 1) }, { "2" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
}

/* ---- TopK-1/-3/-11 ---------------------------------------------------- */

TEST_F(ops, topk_max_by_value_last_axis)
{
	RUN({ "TopK", "opset3",
	      "axis=\"-1\" mode=\"max\" sort=\"value\" index_element_type=\"i64\"",
	      { P("f32", "2,5", 3, 1, 4, 1, 5, 9, 2, 6, 5, 3),
		C("i64", "", 3) },
	      { "2,3", "2,3" }, { "f32", "i64" } });
	EXPECT_OUT(0, F32, 0, 5, 4, 3, 9, 6, 5);
	EXPECT_OUT(1, I64, 0, 4, 2, 0, 0, 2, 3);
}

TEST_F(ops, topk_min_sorted_by_index_and_axis0)
{
	/* three smallest of 3 1 4 1 5: 1 (1), 1 (3), 3 (0); by index */
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"min\" sort=\"index\"",
	      { P("i32", "5", 3, 1, 4, 1, 5), C("i32", "", 3) },
	      { "3", "3" }, { "i32", "i32" } });
	EXPECT_OUT(0, I32, 0, 3, 1, 1);
	EXPECT_OUT(1, I32, 0, 0, 1, 3);
	/* along axis 0 of a [3, 2] */
	RUN({ "TopK", "opset1", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "3,2", 1, 5, 4, 2, 3, 6), C("i64", "", 1) },
	      { "1,2", "1,2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 4, 6);
	EXPECT_OUT(1, I32, 0, 1, 2);
}

TEST_F(ops, topk_ties_k_larger_than_dim_and_zero)
{
	/* stable: equal values keep the lower index first */
	RUN({ "TopK", "opset11",
	      "axis=\"0\" mode=\"max\" sort=\"value\" stable=\"true\"",
	      { P("f32", "4", 2, 2, 1, 2), C("i64", "", 2) },
	      { "2", "2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 2, 2);
	EXPECT_OUT(1, I32, 0, 0, 1);
	/* k = 5 > 2: min(k, dim) */
	RUN({ "TopK", "opset11", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "2", 1, 2), C("i64", "", 5) },
	      { "2", "2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 2, 1);
	EXPECT_OUT(1, I32, 0, 1, 0);
	RUN({ "TopK", "opset11", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "2", 1, 2), C("i64", "", 0) },
	      { "0", "0" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, topk_errors)
{
	RUN({ "TopK", "opset3", "axis=\"0\" sort=\"value\"",
	      { P("f32", "2", 1, 2), C("i64", "", 1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "mode");
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\"",
	      { P("f32", "2", 1, 2), C("i64", "", -1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "k -1");
	RUN({ "TopK", "opset3", "axis=\"1\" mode=\"max\"",
	      { P("f32", "2", 1, 2), C("i64", "", 1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "axis 1");
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\" stable=\"true\"",
	      { P("f32", "2", 1, 2), C("i64", "", 1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "stable");
}

/* ---- ops that existed before: their edge cases ------------------------ */

TEST_F(ops, gather_negative_indices_batch_dims_and_axis)
{
	RUN({ "Gather", "opset8", NULL,
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "2", -1, 0),
		C("i64", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 4, 1);
	/* batch_dims 1: per row b, data[b][idx[b][j]] */
	RUN({ "Gather", "opset7", "batch_dims=\"1\"",
	      { P("i32", "2,3", 1, 2, 3, 4, 5, 6), C("i32", "2,2", 2, 0, 1, 1),
		C("i64", "", 1) },
	      { "2,2" } });
	EXPECT_OUT(0, I32, 0, 3, 1, 5, 5);
	RUN({ "Gather", "opset1", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "1", 1),
		C("i64", "", -1) },
	      { "2,1" } });
	EXPECT_OUT(0, F32, 0, 2, 4);
	/* before Gather-8, negative and too large indices give zeros */
	RUN({ "Gather", "opset7", NULL,
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "3", -1, 1, 4),
		C("i64", "", 0) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 0);
	RUN({ "Gather", "opset8", NULL,
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "3", -4, 1, 4),
		C("i64", "", 0) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 0);
	RUN({ "Gather", "opset1", "batch_dims=\"1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "2,1", 1, 0),
		C("i64", "", 1) },
	      { "2,1" } });
	EXPECT_FAIL("Gather", -EINVAL, "batch_dims");
}

TEST_F(ops, pad_modes)
{
	RUN({ "Pad", "opset1", "pad_mode=\"constant\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 1), C("i64", "1", 2),
		C("f32", "", 9) },
	      { "5" } });
	EXPECT_OUT(0, F32, 0, 9, 1, 2, 9, 9);
	RUN({ "Pad", "opset1", "pad_mode=\"edge\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 2), C("i64", "1", 1) },
	      { "6" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 1, 2, 3, 3);
	/* reflect leaves the border out, symmetric repeats it */
	RUN({ "Pad", "opset1", "pad_mode=\"reflect\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 2), C("i64", "1", 2) },
	      { "7" } });
	EXPECT_OUT(0, F32, 0, 3, 2, 1, 2, 3, 2, 1);
	RUN({ "Pad", "opset1", "pad_mode=\"symmetric\"",
	      { P("i32", "3", 1, 2, 3), C("i64", "1", 2), C("i64", "1", 2) },
	      { "7" } });
	EXPECT_OUT(0, I32, 0, 2, 1, 1, 2, 3, 3, 2);
	/* 2-D: one reflected row before, one reflected column after */
	RUN({ "Pad", "opset1", "pad_mode=\"reflect\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "2", 1, 0),
		C("i64", "2", 0, 1) },
	      { "3,3" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 3, 1, 2, 1, 3, 4, 3);
}

TEST_F(ops, pad_12_negative_pads_crop)
{
	RUN({ "Pad", "opset12", "pad_mode=\"constant\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "1", -1), C("i64", "1", 1) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 4, 0);
	RUN({ "Pad", "opset12", "pad_mode=\"edge\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "1", -1), C("i64", "1", -2) },
	      { "1" } });
	EXPECT_OUT(0, F32, 0, 2);
	RUN({ "Pad", "opset12", "pad_mode=\"reflect\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 3), C("i64", "1", 0) },
	      { "6" } });
	EXPECT_FAIL("Pad", -EINVAL, "");
	RUN({ "Pad", "opset12", "pad_mode=\"wrap\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 1), C("i64", "1", 0) },
	      { "4" } });
	EXPECT_FAIL("Pad", -EINVAL, "pad_mode");
}

TEST_F(ops, broadcast_modes)
{
	RUN({ "Broadcast", "opset3", "mode=\"numpy\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "2", 2, 3) }, { "2,3" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 1, 2, 3);
	/* bidirectional: [2, 1] with [1, 3] gives [2, 3] */
	RUN({ "Broadcast", "opset3", "mode=\"bidirectional\"",
	      { P("f32", "2,1", 1, 2), C("i64", "2", 1, 3) }, { "2,3" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 1, 2, 2, 2);
	/* explicit: data axis 0 is output axis 0 */
	RUN({ "Broadcast", "opset3", "mode=\"explicit\"",
	      { P("i64", "2", 1, 2), C("i64", "2", 2, 3), C("i64", "1", 0) },
	      { "2,3" } });
	EXPECT_OUT(0, I64, 0, 1, 1, 1, 2, 2, 2);
	RUN({ "Broadcast", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("i64", "2", 2, 4) }, { "2,4" } });
	EXPECT_FAIL("Broadcast", -EINVAL, "");
}

TEST_F(ops, tile_range_select)
{
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), C("i64", "2", 2, 2) }, { "2,4" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 1, 2, 1, 2);
	RUN({ "Range", "opset4", "output_type=\"i32\"",
	      { C("i32", "", 5), C("i32", "", 0), C("i32", "", -2) },
	      { "3" }, { "i32" } });
	EXPECT_OUT(0, I32, 0, 5, 3, 1);
	/* ceil((1 - 0) / .25) = 4 elements */
	RUN({ "Range", "opset4", "output_type=\"f32\"",
	      { C("f32", "", 0), C("f32", "", 1), C("f32", "", 0.25) },
	      { "4" }, { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.25, 0.5, 0.75);
	/* condition [2, 1] against then [1, 3] and a scalar else */
	RUN({ "Select", "opset1", NULL,
	      { P("boolean", "2,1", 1, 0), P("f32", "1,3", 1, 2, 3),
		C("f32", "", 9) },
	      { "2,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 9, 9, 9);
}

TEST_F(ops, split_variadic_split_slice)
{
	RUN({ "Split", "opset1", "num_splits=\"3\"",
	      { P("f32", "6", 1, 2, 3, 4, 5, 6), C("i64", "", -1) },
	      { "2", "2", "2" } });
	EXPECT_OUT(0, F32, 0, 1, 2);
	EXPECT_OUT(2, F32, 0, 5, 6);
	/* -1 takes the rest */
	RUN({ "VariadicSplit", "opset1", NULL,
	      { P("f32", "6", 1, 2, 3, 4, 5, 6), C("i64", "", 0),
		C("i64", "3", 1, -1, 2) },
	      { "1", "3", "2" } });
	EXPECT_OUT(1, F32, 0, 2, 3, 4);
	EXPECT_OUT(2, F32, 0, 5, 6);
	/* reversed with clamped bounds */
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), C("i64", "1", -1),
		C("i64", "1", -100), C("i64", "1", -1) },
	      { "5" } });
	EXPECT_OUT(0, F32, 0, 4, 3, 2, 1, 0);
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), C("i64", "1", 0),
		C("i64", "1", 3), C("i64", "1", 2), C("i64", "1", -1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 3, 5);
	RUN({ "Split", "opset1", "num_splits=\"4\"",
	      { P("f32", "6", 1, 2, 3, 4, 5, 6), C("i64", "", 0) },
	      { "2", "2", "2" } });
	EXPECT_FAIL("Split", -EINVAL, "");
}

/* ---- empty tensors ---------------------------------------------------- */

TEST_F(ops, empty_tensors)
{
	RUN({ "GatherElements", "opset6", "axis=\"0\"",
	      { P("f32", "2,2", 1, 2, 3, 4), P0("i32", "0,2") }, { "0,2" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), P0("i64", "0,1") }, { "0,2" } });
	EXPECT_OUT(0, F32, 0);
	/* no updates: the data unchanged */
	RUN({ "ScatterNDUpdate", "opset3", NULL,
	      { P("f32", "2", 1, 2), P0("i32", "0,1"), P0("f32", "0") },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 2);
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"sum\"",
	      { P("f32", "2", 1, 2), P0("i32", "0"), P0("f32", "0"),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 2);
	RUN({ "OneHot", "opset1", "axis=\"-1\"",
	      { P("i32", "2", 0, 1), C("i64", "", 0), C("f32", "", 1),
		C("f32", "", 0) },
	      { "2,0" }, { "f32" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "DepthToSpace", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P0("f32", "0,4,1,1") }, { "0,1,2,2" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "CumSum", "opset3", NULL,
	      { P0("f32", "0,3"), C("i64", "", 0) }, { "0,3" } });
	EXPECT_OUT(0, F32, 0);
	/* a sum over an empty label is 0 */
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P0("f32", "2,0"), P0("f32", "0,2") }, { "2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 0, 0);
	RUN({ "NonMaxSuppression", "opset9", NULL,
	      { P0("f32", "1,0,4"), P0("f32", "1,1,0"), C("i64", "", 5) },
	      { "0,3", "0,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(2, I64, 0, 0);
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\"",
	      { P0("f32", "0,3"), C("i64", "", 1) }, { "0,3", "0,3" },
	      { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "ReduceSum", "opset1", NULL,
	      { P0("f32", "2,0"), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 0, 0);
}

/* MaxPool of 8- and 16-bit integers keeps the type; AvgPool stays f32. */

/* ---- shapes that depend on input values -------------------------------- */

/*
 * The shape-deciding input is a Parameter, so the compiled model leaves
 * the output shape open and every inference infers it from the values;
 * .again runs the same request a second time with other values, which
 * must change the shape GET_TENSOR reports (and grow or shrink the
 * output).  Expected values follow from the op specifications.
 */
TEST_F(ops, runtime_reshape_target)
{
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
	      { "3,2" } });
	EXPECT_DIMS(0, 3, 2);
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5);
	/* -1 takes the rest: [6, 1] */
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
	      { "3,2" }, .again = { NULL, V(6, -1) } });
	EXPECT_DIMS(0, 6, 1);
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5);
	/* special_zero copies dim 0 of an empty input: [0, 5] */
	RUN({ "Reshape", "opset1", "special_zero=\"true\"",
	      { P0("f32", "0,2"), P("i64", "2", 0, 5) }, { "0,5" } });
	EXPECT_DIMS(0, 0, 5);
	EXPECT_OUT(0, F32, 0);
	/* the element count must still match, now at inference time */
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 4, 2) },
	      { "4,2" } });
	EXPECT_FAIL("Reshape", -EINVAL, "elements");
}

TEST_F(ops, runtime_slice_bounds)
{
	/* [1:4:2] of 0..4, then reversed whole with clamped bounds */
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), P("i64", "1", 1),
		P("i64", "1", 4), P("i64", "1", 2) },
	      { "2" } });
	EXPECT_DIMS(0, 2);
	EXPECT_OUT(0, F32, 0, 1, 3);
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), P("i64", "1", 1),
		P("i64", "1", 4), P("i64", "1", 2) },
	      { "2" },
	      .again = { NULL, V(-1), V(-100), V(-1) } });
	EXPECT_DIMS(0, 5);
	EXPECT_OUT(0, F32, 0, 4, 3, 2, 1, 0);
	/* start past stop: an empty result */
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), P("i64", "1", 3),
		P("i64", "1", 1), P("i64", "1", 1) },
	      { "0" } });
	EXPECT_DIMS(0, 0);
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, runtime_tile_range_broadcast)
{
	/* repeats 1, then 3: the output grows from 2 to 6 elements */
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 1) }, { "2" },
	      .again = { NULL, V(3) } });
	EXPECT_DIMS(0, 6);
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 1, 2);
	/* ceil((1 - 0) / .25) = 4 elements, then ceil(.5 / .25) = 2 */
	RUN({ "Range", "opset4", "output_type=\"f32\"",
	      { P("f32", "", 0), P("f32", "", 1), P("f32", "", 0.25) },
	      { "4" }, { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.25, 0.5, 0.75);
	RUN({ "Range", "opset4", "output_type=\"f32\"",
	      { P("f32", "", 0), P("f32", "", 1), P("f32", "", 0.25) },
	      { "4" }, { "f32" }, .again = { NULL, V(0.5) } });
	EXPECT_DIMS(0, 2);
	EXPECT_OUT(0, F32, 1e-6, 0, 0.25);
	/* numpy broadcast of [1, 3] to a target of [2, 3] */
	RUN({ "Broadcast", "opset3", "mode=\"numpy\"",
	      { P("f32", "1,3", 1, 2, 3), P("i64", "2", 2, 3) }, { "2,3" } });
	EXPECT_DIMS(0, 2, 3);
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 1, 2, 3);
}

/* requests of one compiled model keep their own shapes */
TEST_F(ops, runtime_shapes_per_request)
{
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
	      { "3,2" }, .again = { NULL, V(1, 6) },
	      .other_request = true });
	EXPECT_DIMS(0, 3, 2);
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5);
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 3) }, { "6" },
	      .again = { NULL, V(1) }, .other_request = true });
	EXPECT_DIMS(0, 6);
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 1, 2);
	/* a size from the values beyond what a request may allocate */
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 1e12) }, { "2" } });
	EXPECT_FAIL("Tile", -EFBIG, "bytes");
}

/*
 * Two threads run their own requests of one compiled model at the same
 * time, each switching between two targets every inference: every run
 * must report its own shape and values (the per-request copies of the
 * graph keep the threads apart).
 */
struct reshape_worker {
	int fd;
	__u32 exec;
	const struct top *op;
	int64_t want[2][2];	/* dims of the first and the .again run */
	int bad;
	struct tres r;
};

static void *reshape_worker(void *arg)
{
	struct reshape_worker *w = arg;
	struct npr_req_create rc;
	int k, i;

	npr_prep_req_create(&rc, w->exec);
	if (npr_ioctl(w->fd, NPR_IOCTL_REQ_CREATE, &rc)) {
		w->bad++;
		return NULL;
	}
	for (k = 0; k < 40; k++) {
		bool again = k & 1;

		if (infer_once(w->fd, w->op, 2, 1, rc.req, again, &w->r) ||
		    w->r.rank[0] != 2 || w->r.n[0] != 6 ||
		    w->r.dims[0][0] != w->want[again][0] ||
		    w->r.dims[0][1] != w->want[again][1]) {
			w->bad++;
			continue;
		}
		for (i = 0; i < 6; i++)
			w->bad += w->r.v[0][i] != i;
	}
	return NULL;
}

TEST_F(ops, runtime_shapes_concurrent_requests)
{
	const struct top op = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
		{ "3,2" }, .again = { NULL, V(1, 6) } };
	const struct top op2 = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 6, 1) },
		{ "3,2" }, .again = { NULL, V(2, 3) } };
	struct reshape_worker *w = calloc(2, sizeof(*w));
	pthread_t t[2];
	__u32 exec;
	int i;

	ASSERT_NE(w, NULL);
	ASSERT_EQ(compile_op(self->fd, &op, &exec, &self->r), 0);
	for (i = 0; i < 2; i++) {
		w[i].fd = self->fd;
		w[i].exec = exec;
		w[i].op = i ? &op2 : &op;
	}
	w[0].want[0][0] = 3; w[0].want[0][1] = 2;
	w[0].want[1][0] = 1; w[0].want[1][1] = 6;
	w[1].want[0][0] = 6; w[1].want[0][1] = 1;
	w[1].want[1][0] = 2; w[1].want[1][1] = 3;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, reshape_worker, &w[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(w[0].bad, 0);
	EXPECT_EQ(w[1].bad, 0);
	free(w);
}

/*
 * The port of such an output: no rank before inference, no shape to read
 * before the first, and no caller memory to bind (its size varies); the
 * compiled model does not export.
 */
TEST_F(ops, runtime_shape_port)
{
	const struct top op = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
		{ "3,2" } };
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_port_info pi;
	float buf[6] = { 0 };
	__u32 exec;

	ASSERT_EQ(compile_op(self->fd, &op, &exec, &self->r), 0);
	npr_prep_port_info(&pi, exec, 0, 1, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	EXPECT_EQ(pi.rank, 0);
	EXPECT_EQ(pi.dims[0], -1);
	EXPECT_EQ(pi.elem_type, NPR_ELEM_F32);
	npr_prep_req_create(&rc, exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	npr_prep_tensor(&ta, rc.req, 0, 1, buf, sizeof(buf));
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), -ENODATA);
	npr_prep_tensor(&ta, rc.req, 0, 1, buf, sizeof(buf));
	ta.flags |= NPR_TENSOR_BIND;
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 3;
	ta.dims[1] = 2;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), -EOPNOTSUPP);
	/* no blob of it yet */
	{
		struct npr_export ex = { .size = sizeof(ex), .exec = exec };

		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ex),
			  -EOPNOTSUPP);
	}
	/* after an inference: the shape, and -EMSGSIZE with the size */
	ASSERT_EQ(infer_once(self->fd, &op, 2, 1, rc.req, false, &self->r), 0);
	npr_prep_tensor(&ta, rc.req, 0, 1, buf, 8);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), -EMSGSIZE);
	EXPECT_EQ(ta.bytes, 24);
	EXPECT_EQ(ta.rank, 2);
	EXPECT_EQ(ta.dims[0], 3);
	EXPECT_EQ(ta.dims[1], 2);
}

/* devices without run-time shape inference refuse such models */
TEST_F(ops, runtime_shapes_need_the_cpu_device)
{
	const struct top op = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
		{ "3,2" } };
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	run(fd, &op, &self->r);
	npr_close(fd);
	EXPECT_FAIL("Reshape", -EOPNOTSUPP, "depends on input values");
}

TEST_F(ops, runtime_axes_and_k)
{
	RUN({ "Unsqueeze", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 0) }, { "1,2" },
	      .again = { NULL, V(-1) } });
	EXPECT_DIMS(0, 2, 1);
	EXPECT_OUT(0, F32, 0, 1, 2);
	RUN({ "Squeeze", "opset1", NULL,
	      { P("f32", "1,2,1", 1, 2), P("i64", "1", 0) }, { "2,1" } });
	EXPECT_DIMS(0, 2, 1);
	/* sum over axis 1 of [[1, 2], [3, 4]], then over axis 0 */
	RUN({ "ReduceSum", "opset1", "keep_dims=\"false\"",
	      { P("f32", "2,2", 1, 2, 3, 4), P("i64", "1", 1) }, { "2" },
	      .again = { NULL, V(0) } });
	EXPECT_DIMS(0, 2);
	EXPECT_OUT(0, F32, 0, 4, 6);
	/* the two largest of [3, 1, 4, 2], then the three largest */
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "4", 3, 1, 4, 2), P("i64", "", 2) },
	      { "2", "2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 4, 3);
	EXPECT_OUT(1, I32, 0, 2, 0);
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "4", 3, 1, 4, 2), P("i64", "", 2) },
	      { "2", "2" }, { "f32", "i32" }, .again = { NULL, V(3) } });
	EXPECT_DIMS(1, 3);
	EXPECT_OUT(0, F32, 0, 4, 3, 2);
	EXPECT_OUT(1, I32, 0, 2, 0, 3);
}

TEST_F(ops, runtime_interpolate_sizes_and_nms_boxes)
{
	/*
	 * nearest, half_pixel, round_prefer_floor: for 4 outputs from 2 the
	 * source coordinates are -.25, .25, .75, 1.25 -> 0, 0, 1, 1; for 3,
	 * -.17, .5, 1.17 -> 0, 0 (a tie rounds down), 1
	 */
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), P("i64", "1", 4), C("f32", "1", 1),
		C("i64", "1", 0) },
	      { "4" } });
	EXPECT_DIMS(0, 4);
	EXPECT_OUT(0, F32, 0, 1, 1, 2, 2);
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), P("i64", "1", 4), C("f32", "1", 1),
		C("i64", "1", 0) },
	      { "4" }, .again = { NULL, V(3) } });
	EXPECT_DIMS(0, 3);
	EXPECT_OUT(0, F32, 0, 1, 1, 2);
	/* max_output_boxes_per_class from a Parameter: as with a constant */
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { NMS_BOXES, NMS_SCORES, P("i64", "", 3), C("f32", "", 0.5),
		C("f32", "", 0) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_DIMS(0, 3, 3);
	EXPECT_OUT(0, I64, 0, 0, 0, 3, 0, 0, 0, 0, 0, 5);
	EXPECT_OUT(2, I64, 0, 3);
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { NMS_BOXES, NMS_SCORES, P("i64", "", 3), C("f32", "", 0.5),
		C("f32", "", 0) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" },
	      .again = { NULL, NULL, V(1) } });
	EXPECT_DIMS(0, 1, 3);
	EXPECT_OUT(0, I64, 0, 0, 0, 3);
}

/* ---- ReverseSequence-1 ------------------------------------------------ */

TEST_F(ops, reverse_sequence_batch_and_seq_axes)
{
	/* rows [1 2 3], [4 5 6]; lengths 2, 3: [2 1 3], [6 5 4] */
	RUN({ "ReverseSequence", "opset1", "batch_axis=\"0\" seq_axis=\"1\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6), C("i32", "2", 2, 3) },
	      { "2,3" } });
	EXPECT_OUT(0, F32, 0, 2, 1, 3, 6, 5, 4);
	/*
	 * Time along axis 0, batch along (negative) axis -1: columns
	 * (1 2 3) and (4 5 6) with lengths 3 and 1 give (3 2 1), (4 5 6).
	 */
	RUN({ "ReverseSequence", "opset1", "batch_axis=\"-1\" seq_axis=\"0\"",
	      { P("i64", "3,2", 1, 4, 2, 5, 3, 6), C("i64", "2", 3, 1) },
	      { "3,2" } });
	EXPECT_OUT(0, I64, 0, 3, 4, 2, 5, 1, 6);
	/* length 0 leaves the row alone */
	RUN({ "ReverseSequence", "opset1", NULL,
	      { P("f32", "1,2", 7, 8), P("i32", "1", 0) }, { "1,2" } });
	EXPECT_OUT(0, F32, 0, 7, 8);
}

TEST_F(ops, reverse_sequence_errors)
{
	RUN({ "ReverseSequence", "opset1", "batch_axis=\"1\" seq_axis=\"1\"",
	      { P0("f32", "2,3"), C("i32", "3", 1, 1, 1) }, { "2,3" } });
	EXPECT_FAIL("ReverseSequence", -EINVAL, "both");
	RUN({ "ReverseSequence", "opset1", NULL,
	      { P0("f32", "2,3"), C("i32", "3", 1, 1, 1) }, { "2,3" } });
	EXPECT_FAIL("ReverseSequence", -EINVAL, "seq_lengths");
	/* a length longer than the sequence fails the inference */
	RUN({ "ReverseSequence", "opset1", NULL,
	      { P0("f32", "2,3"), P("i32", "2", 1, 4) }, { "2,3" } });
	EXPECT_FAIL("ReverseSequence", -EINVAL, "seq_lengths[1] = 4");
}

TEST_HARNESS_MAIN
