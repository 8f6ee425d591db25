// SPDX-License-Identifier: MIT
/*
 * Op-level tests of arithmetic, one op per model on the cpu device: Round,
 * Sign, the logical reductions, CumSum, activations, unary math, binary
 * arithmetic, comparisons and logic, reductions, MatMul, Einsum, the
 * trigonometric ops, SoftSign, HardSigmoid, Selu, LogSoftmax, LRN, the
 * bitwise shifts, DFT and IDFT, with their errors.
 *
 * How each op is built and run, the checks, and where the expected values
 * come from: ops_util.h.
 */
#include "ops_util.h"

/* ---- Round-5, Sign-1 -------------------------------------------------- */

TEST_F(ops, round_half_to_even_and_away_from_zero)
{
	RUN({ "Round", "opset5", "mode=\"half_to_even\"",
	      { P("f32", "8", -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6) },
	      { "8" } });
	EXPECT_OUT(0, F32, 0, -2, -2, 0, 0, 2, 2, 2, -3);
	RUN({ "Round", "opset5", "mode=\"half_away_from_zero\"",
	      { P("f32", "8", -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6) },
	      { "8" } });
	EXPECT_OUT(0, F32, 0, -3, -2, -1, 1, 2, 3, 2, -3);
	/* integers are already round */
	RUN({ "Round", "opset5", "mode=\"half_to_even\"",
	      { P("i32", "3", -3, 0, 7) }, { "3" } });
	EXPECT_OUT(0, I32, 0, -3, 0, 7);
	/* an empty tensor */
	RUN({ "Round", "opset5", "mode=\"half_to_even\"",
	      { P0("f32", "2,0") }, { "2,0" } });
	EXPECT_OUT(0, F32, 0);
}

/*
 * CPU_DENORMALS_OPTIMIZATION: 1e-20 * 1e-20 is 1e-40, below f32's
 * smallest normal (2^-126, 1.18e-38): IEEE keeps it as a denormal; with
 * the property the product flushes to zero (FTZ) and a denormal operand
 * counts as zero (DAZ: 1e-40 * 1 gives 0).  The caller's own MXCSR
 * control bits are the same after the inference (the exception flags,
 * bits 0-5, are sticky: arithmetic anywhere on this thread sets them).
 */
static int set_denormals(int fd, bool on)
{
	struct npr_param pa = {
		.size = sizeof(pa),
		.param = NPR_PARAM_CPU_DENORMALS_OPTIMIZATION,
		.value = on,
	};

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
}

/* Does this CPU (or what runs the test: valgrind does not) flush? */
static bool ftz_honoured(void)
{
#if defined(__x86_64__)
	unsigned int csr = __builtin_ia32_stmxcsr();
	volatile float a = 1e-20f, b = 1e-20f, r;

	/* volatile: the product is stored before MXCSR is put back */
	__builtin_ia32_ldmxcsr(csr | 0x8040);
	r = a * b;
	__builtin_ia32_ldmxcsr(csr);
	return r == 0.0f;
#else
	return false;
#endif
}

TEST_F(ops, denormals_optimization_flushes_denormals)
{
	const float tiny = 1e-40f;
#if defined(__x86_64__)
	unsigned int csr = __builtin_ia32_stmxcsr();
#endif

	ASSERT_NE(tiny, 0.0f);	/* a denormal, not flushed here */
	RUN({ "Multiply", "opset1", "",
	      { P("f32", "3", 1e-20, 1e-40, 2.0), P("f32", "3", 1e-20, 1.0, 3.0) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, (double)(1e-20f * 1e-20f), (double)tiny, 6.0);
	EXPECT_NE(self->r.v[0][0], 0.0);
	EXPECT_NE(self->r.v[0][1], 0.0);
	if (!ftz_honoured())
		SKIP(return, "MXCSR's FTZ/DAZ have no effect here (valgrind computes IEEE only; not x86-64)");
	ASSERT_EQ(set_denormals(self->fd, true), 0);
	RUN({ "Multiply", "opset1", "",
	      { P("f32", "3", 1e-20, 1e-40, 2.0), P("f32", "3", 1e-20, 1.0, 3.0) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 0.0, 0.0, 6.0);
#if defined(__x86_64__)
	EXPECT_EQ(__builtin_ia32_stmxcsr() & ~0x3fu, csr & ~0x3fu);
#endif
	/* off again: IEEE */
	ASSERT_EQ(set_denormals(self->fd, false), 0);
	RUN({ "Multiply", "opset1", "",
	      { P("f32", "3", 1e-20, 1e-40, 2.0), P("f32", "3", 1e-20, 1.0, 3.0) },
	      { "3" } });
	EXPECT_NE(self->r.v[0][0], 0.0);
}

TEST_F(ops, round_needs_a_valid_mode)
{
	RUN({ "Round", "opset5", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_FAIL("Round", -EINVAL, "mode");
	RUN({ "Round", "opset5", "mode=\"nearest\"", { P("f32", "1", 1) },
	      { "1" } });
	EXPECT_FAIL("Round", -EINVAL, "mode");
}

TEST_F(ops, sign_of_floats_and_integers)
{
	RUN({ "Sign", "opset1", NULL, { P("f32", "4", -3, 0, 2.5, -0.0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, -1, 0, 1, 0);
	RUN({ "Sign", "opset1", NULL, { P("i64", "3", -7, 0, 9) }, { "3" } });
	EXPECT_OUT(0, I64, 0, -1, 0, 1);
}

/* ---- ReduceLogicalAnd/Or-1 -------------------------------------------- */

TEST_F(ops, reduce_logical_and_or)
{
	RUN({ "ReduceLogicalAnd", "opset1", NULL,
	      { P("boolean", "2,3", 1, 0, 1, 1, 1, 1), C("i64", "1", 1) },
	      { "2" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
	RUN({ "ReduceLogicalAnd", "opset1", "keep_dims=\"true\"",
	      { P("boolean", "2,3", 1, 0, 1, 1, 1, 1), C("i32", "1", -1) },
	      { "2,1" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("boolean", "2,3", 0, 0, 1, 0, 1, 0), C("i64", "1", 0) },
	      { "3" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1, 1);
	/* all axes */
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("boolean", "2,2", 0, 0, 0, 0), C("i64", "2", 0, 1) },
	      { "" } });
	EXPECT_OUT(0, BOOL, 0, 0);
}

TEST_F(ops, reduce_logical_over_an_empty_axis_gives_the_identity)
{
	RUN({ "ReduceLogicalAnd", "opset1", NULL,
	      { P0("boolean", "2,0"), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, BOOL, 0, 1, 1);
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P0("boolean", "2,0"), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0);
}

TEST_F(ops, reduce_logical_errors)
{
	RUN({ "ReduceLogicalAnd", "opset1", NULL,
	      { P("boolean", "2,2", 1, 1, 1, 1), C("i64", "2", 0, -2) },
	      { "" } });
	EXPECT_FAIL("ReduceLogicalAnd", -EINVAL, "repeated");
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("f32", "2", 1, 1), C("i64", "1", 0) }, { "" } });
	EXPECT_FAIL("ReduceLogicalOr", -EINVAL, "not boolean");
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("boolean", "2", 1, 1), C("i64", "1", 1) }, { "" } });
	EXPECT_FAIL("ReduceLogicalOr", -EINVAL, "out of range");
}

/* ---- CumSum-3 --------------------------------------------------------- */

TEST_F(ops, cumsum_modes)
{
	RUN({ "CumSum", "opset3", NULL,
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 1, 3, 6, 10, 15);
	RUN({ "CumSum", "opset3", "exclusive=\"true\"",
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 3, 6, 10);
	RUN({ "CumSum", "opset3", "reverse=\"true\"",
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 15, 14, 12, 9, 5);
	RUN({ "CumSum", "opset3", "exclusive=\"true\" reverse=\"true\"",
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 14, 12, 9, 5, 0);
}

TEST_F(ops, cumsum_axis_negative_default_and_integers)
{
	RUN({ "CumSum", "opset3", NULL,
	      { P("i32", "2,2", 1, 2, 3, 4), C("i32", "", -2) }, { "2,2" } });
	EXPECT_OUT(0, I32, 0, 1, 2, 4, 6);
	/* no axis input: axis 0 */
	RUN({ "CumSum", "opset3", NULL, { P("i64", "2,2", 1, 2, 3, 4) },
	      { "2,2" } });
	EXPECT_OUT(0, I64, 0, 1, 2, 4, 6);
	RUN({ "CumSum", "opset3", NULL,
	      { P("f32", "2", 1, 2), C("i64", "", 1) }, { "2" } });
	EXPECT_FAIL("CumSum", -EINVAL, "axis 1");
}

/* ---- ops that existed before: their edge cases ------------------------ */

TEST_F(ops, activations)
{
	RUN({ "Clamp", "opset1", "min=\"-1\" max=\"2\"",
	      { P("f32", "3", -3, 0.5, 5) }, { "3" } });
	EXPECT_OUT(0, F32, 0, -1, 0.5, 2);
	/* integers: min rounds up, max down */
	RUN({ "Clamp", "opset1", "min=\"-1.5\" max=\"2.5\"",
	      { P("i32", "3", -3, 1, 5) }, { "3" } });
	EXPECT_OUT(0, I32, 0, -1, 1, 2);
	/* x * relu6(x + 3) / 6 and relu6(x + 3) / 6 */
	RUN({ "HSwish", "opset4", NULL, { P("f32", "3", -4, 1, 4) }, { "3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 4.0 / 6, 4);
	RUN({ "HSigmoid", "opset5", NULL, { P("f32", "3", -4, 0, 4) },
	      { "3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.5, 1);
	/* x * sigmoid(beta x): beta 1 then 2 */
	RUN({ "Swish", "opset4", NULL, { P("f32", "2", 1, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1 / (1 + exp(-1.0)), -1 / (1 + exp(1.0)));
	RUN({ "Swish", "opset4", NULL, { P("f32", "1", 1), C("f32", "", 2) },
	      { "1" } });
	EXPECT_OUT(0, F32, 1e-6, 1 / (1 + exp(-2.0)));
	/* .5 x (1 + erf(x / sqrt 2)) */
	RUN({ "Gelu", "opset7", "approximation_mode=\"erf\"",
	      { P("f32", "2", 1, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5 * (1 + erf(1 / sqrt(2.0))),
		   -0.5 * (1 + erf(-1 / sqrt(2.0))));
	/* .5 x (1 + tanh(sqrt(2 / pi) (x + .044715 x^3))) */
	RUN({ "Gelu", "opset7", "approximation_mode=\"tanh\"",
	      { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6,
		   0.5 * (1 + tanh(sqrt(2 / M_PI) * (1 + 0.044715))));
	RUN({ "Gelu", "opset2", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5 * (1 + erf(1 / sqrt(2.0))));
	/* x tanh(ln(1 + e^x)) */
	RUN({ "Mish", "opset4", NULL, { P("f32", "2", 1, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, tanh(log1p(exp(1.0))),
		   -tanh(log1p(exp(-1.0))));
	/* ln(1 + e^x), no overflow for large x */
	RUN({ "SoftPlus", "opset4", NULL, { P("f32", "3", 0, -2, 100) },
	      { "3" } });
	EXPECT_OUT(0, F32, 1e-5, log(2.0), log1p(exp(-2.0)), 100);
	RUN({ "Elu", "opset1", "alpha=\"0.5\"", { P("f32", "2", -1, 2) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5 * (exp(-1.0) - 1), 2);
	RUN({ "Elu", "opset1", NULL, { P("f32", "2", -1, 2) }, { "2" } });
	EXPECT_FAIL("Elu", -EINVAL, "alpha");
	RUN({ "Clamp", "opset1", "min=\"2\" max=\"1\"",
	      { P("f32", "1", 0) }, { "1" } });
	EXPECT_FAIL("Clamp", -EINVAL, "min");
}

TEST_F(ops, math_unary)
{
	RUN({ "Negative", "opset1", NULL, { P("i32", "2", 3, -4) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -3, 4);
	RUN({ "Abs", "opset1", NULL, { P("f32", "2", -1.5, 2) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 1.5, 2);
	RUN({ "Floor", "opset1", NULL, { P("f32", "2", -1.5, 1.5) }, { "2" } });
	EXPECT_OUT(0, F32, 0, -2, 1);
	RUN({ "Ceiling", "opset1", NULL, { P("f32", "2", -1.5, 1.5) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, -1, 2);
	RUN({ "Sqrt", "opset1", NULL, { P("f32", "2", 4, 2.25) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 2, 1.5);
	RUN({ "Log", "opset1", NULL, { P("f32", "2", 1, 2) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, log(2.0));
	RUN({ "Erf", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, erf(0.5));
	RUN({ "Tanh", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, tanh(0.5));
	RUN({ "Exp", "opset1", NULL, { P("f32", "2", 0, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, exp(-1.0));
}

TEST_F(ops, binary_arithmetic_edge_cases)
{
	/* FloorMod takes the divisor's sign, Mod the dividend's */
	RUN({ "FloorMod", "opset1", NULL,
	      { P("f32", "2", -7, 7), P("f32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, -2);
	RUN({ "FloorMod", "opset1", NULL,
	      { P("i32", "2", -7, 7), P("i32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 2, -2);
	RUN({ "Mod", "opset1", NULL,
	      { P("i32", "2", -7, 7), P("i32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -1, 1);
	RUN({ "Mod", "opset1", NULL,
	      { P("f32", "2", -7, 7), P("f32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, -1, 1);
	/* integer division: python (floor) by default, else truncation */
	RUN({ "Divide", "opset1", NULL,
	      { P("i32", "2", -7, 7), P("i32", "", 2) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -4, 3);
	RUN({ "Divide", "opset1", "m_pythondiv=\"false\"",
	      { P("i32", "2", -7, 7), P("i32", "", 2) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -3, 3);
	RUN({ "Power", "opset1", NULL,
	      { P("f32", "2", 2, 4), P("f32", "2", 3, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 8, 2);
	RUN({ "Power", "opset1", NULL,
	      { P("i32", "2", 2, -3), P("i32", "", 3) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 8, -27);
	RUN({ "SquaredDifference", "opset1", NULL,
	      { P("f32", "2", 1, -2), P("f32", "2", 4, 2) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 9, 16);
	/* [2, 1] against [1, 2] */
	RUN({ "Maximum", "opset1", NULL,
	      { P("f32", "2,1", 1, 4), P("f32", "1,2", 2, 3) }, { "2,2" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 4, 4);
	RUN({ "Minimum", "opset1", NULL,
	      { P("i64", "2,1", 1, 4), P("i64", "1,2", 2, 3) }, { "2,2" } });
	EXPECT_OUT(0, I64, 0, 1, 1, 2, 3);
	RUN({ "Mod", "opset1", NULL,
	      { P("i32", "1", 1), P("i32", "1", 0) }, { "1" } });
	EXPECT_FAIL("Mod", -EDOM, "");
	RUN({ "Add", "opset1", "auto_broadcast=\"none\"",
	      { P("f32", "2", 1, 2), P("f32", "1", 1) }, { "2" } });
	EXPECT_FAIL("Add", -EINVAL, "auto_broadcast=none");
	RUN({ "Add", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("f32", "3", 1, 2, 3) }, { "3" } });
	EXPECT_FAIL("Add", -EINVAL, "does not broadcast");
}

TEST_F(ops, comparisons_and_logic)
{
	RUN({ "Equal", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1, 0);
	RUN({ "NotEqual", "opset1", NULL,
	      { P("i32", "3", 1, 2, 3), C("i32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 1, 0, 1);
	RUN({ "Less", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 1, 0, 0);
	RUN({ "LessEqual", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 1, 1, 0);
	RUN({ "Greater", "opset1", NULL,
	      { P("i64", "3", 1, 2, 3), C("i64", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0, 1);
	RUN({ "GreaterEqual", "opset1", NULL,
	      { P("f32", "2,1", 1, 3), C("f32", "1,2", 2, 3) }, { "2,2" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0, 1, 1);
	RUN({ "LogicalAnd", "opset1", NULL,
	      { P("boolean", "4", 1, 1, 0, 0), P("boolean", "4", 1, 0, 1, 0) },
	      { "4" } });
	EXPECT_OUT(0, BOOL, 0, 1, 0, 0, 0);
	RUN({ "LogicalOr", "opset1", NULL,
	      { P("boolean", "4", 1, 1, 0, 0), P("boolean", "4", 1, 0, 1, 0) },
	      { "4" } });
	EXPECT_OUT(0, BOOL, 0, 1, 1, 1, 0);
	RUN({ "LogicalXor", "opset1", NULL,
	      { P("boolean", "4", 1, 1, 0, 0), P("boolean", "", 1) },
	      { "4" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0, 1, 1);
	RUN({ "LogicalNot", "opset1", NULL, { P("boolean", "2", 1, 0) },
	      { "2" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
}

TEST_F(ops, reductions)
{
	/* [[1, -2], [3, 4]] over the last axis */
	RUN({ "ReduceMax", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", -1) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 4);
	RUN({ "ReduceMin", "opset1", "keep_dims=\"true\"",
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", -1) }, { "2,1" } });
	EXPECT_OUT(0, F32, 0, -2, 3);
	RUN({ "ReduceProd", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 0, -2, 12);
	RUN({ "ReduceL1", "opset4", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 3, 7);
	RUN({ "ReduceL2", "opset4", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, sqrt(5.0), 5);
	RUN({ "ReduceMean", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "2", 0, 1) }, { "" } });
	EXPECT_OUT(0, F32, 1e-6, 1.5);
	RUN({ "ReduceSum", "opset1", NULL,
	      { P("i32", "2,2", 1, -2, 3, 4), C("i64", "1", 0) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 4, 2);
	RUN({ "ReduceMax", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 2) }, { "2" } });
	EXPECT_FAIL("ReduceMax", -EINVAL, "out of range");
}

TEST_F(ops, matmul_transposes_and_batch_broadcast)
{
	/* [1, 3] x [2, 3]^T */
	RUN({ "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"",
	      { P("f32", "1,3", 1, 2, 3), C("f32", "2,3", 1, 0, 0, 0, 1, 1) },
	      { "1,2" } });
	EXPECT_OUT(0, F32, 0, 1, 5);
	/* [3, 1]^T x [3, 2] */
	RUN({ "MatMul", "opset1", "transpose_a=\"true\"",
	      { P("f32", "3,1", 1, 2, 3), C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "1,2" } });
	EXPECT_OUT(0, F32, 0, 4, 5);
	/* 1-D x 2-D: [3] x [3, 2] -> [2] */
	RUN({ "MatMul", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 4, 5);
	/*
	 * [2, 1, 1, 2] x [3, 2, 1] -> [2, 3, 1, 1]: rows [1 2] and [3 4]
	 * times columns [1 0], [0 1], [1 1].
	 */
	RUN({ "MatMul", "opset1", NULL,
	      { P("f32", "2,1,1,2", 1, 2, 3, 4),
		C("f32", "3,2,1", 1, 0, 0, 1, 1, 1) },
	      { "2,3,1,1" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 3, 4, 7);
	RUN({ "MatMul", "opset1", NULL,
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6), C("f32", "2,2", 1, 0, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("MatMul", -EINVAL, "");
}

/* ---- Einsum-7 --------------------------------------------------------- */

TEST_F(ops, einsum_matmul_trace_transpose_outer)
{
	/* [[1 2 3] [4 5 6]] x [[1 0] [0 1] [1 1]] */
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6),
		C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 4, 5, 10, 11);
	/* implicit output: the labels seen once, sorted: ik */
	RUN({ "Einsum", "opset7", "equation=\"ij,jk\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6),
		C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 4, 5, 10, 11);
	/* trace, diagonal */
	RUN({ "Einsum", "opset7", "equation=\"ii\"",
	      { P("i32", "2,2", 1, 2, 3, 4) }, { "" } });
	EXPECT_OUT(0, I32, 0, 5);
	RUN({ "Einsum", "opset7", "equation=\"ii->i\"",
	      { P("f32", "2,2", 1, 2, 3, 4) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 4);
	/* transposes: explicit, and implicit "ba" sorted to "ab" */
	RUN({ "Einsum", "opset7", "equation=\"ij->ji\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6) }, { "3,2" } });
	EXPECT_OUT(0, F32, 0, 1, 4, 2, 5, 3, 6);
	RUN({ "Einsum", "opset7", "equation=\"ba\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6) }, { "3,2" } });
	EXPECT_OUT(0, F32, 0, 1, 4, 2, 5, 3, 6);
	RUN({ "Einsum", "opset7", "equation=\"i,j->ij\"",
	      { P("f32", "2", 1, 2), P("f32", "3", 3, 4, 5) }, { "2,3" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 5, 6, 8, 10);
}

TEST_F(ops, einsum_ellipsis_broadcasts)
{
	/* batch of rows [1 2], [3 4] times the column [1 1] */
	RUN({ "Einsum", "opset7", "equation=\"...ij,...jk->...ik\"",
	      { P("f32", "2,1,2", 1, 2, 3, 4), C("f32", "2,1", 1, 1) },
	      { "2,1,1" } });
	EXPECT_OUT(0, F32, 0, 3, 7);
	/* ellipsis batch 2 against 1: broadcast; column [1 -1] */
	RUN({ "Einsum", "opset7", "equation=\"...ij,...jk->...ik\"",
	      { P("f32", "2,1,2", 1, 2, 3, 4), C("f32", "1,2,1", 1, -1) },
	      { "2,1,1" } });
	EXPECT_OUT(0, F32, 0, -1, -1);
	/* implicit: ellipsis dims first */
	RUN({ "Einsum", "opset7", "equation=\"a...\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6) }, { "3,2" } });
	EXPECT_OUT(0, F32, 0, 1, 4, 2, 5, 3, 6);
}

TEST_F(ops, einsum_errors)
{
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P0("f32", "2,3"), P0("f32", "2,2") }, { "2,2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "label j has sizes 3 and 2");
	RUN({ "Einsum", "opset7", "equation=\"ij->ik\"",
	      { P0("f32", "2,3") }, { "2,3" } });
	EXPECT_FAIL("Einsum", -EINVAL, "output label 'k'");
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P0("f32", "2,3") }, { "2,2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "number of subscripts");
	RUN({ "Einsum", "opset7", "equation=\"i1->i\"",
	      { P0("f32", "2,3") }, { "2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "character '1'");
	RUN({ "Einsum", "opset7", "equation=\"ijk->i\"",
	      { P0("f32", "2,3") }, { "2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "3 labels for rank 2");
	/* a ',' after the arrow (fuzzed: read as label -21 before) */
	RUN({ "Einsum", "opset7", "equation=\"ij->i,j\"",
	      { P0("f32", "2,3") }, { "2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "',' where a label belongs");
}

/* ---- trigonometric, SoftSign, HardSigmoid, Selu, LogSoftmax, LRN ------ */

TEST_F(ops, trigonometric_and_softsign)
{
	RUN({ "Sin", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, sin(0.5));
	RUN({ "Cos", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, cos(0.5));
	RUN({ "Tan", "opset1", NULL, { P("f32", "1", 0.5) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, tan(0.5));
	RUN({ "Asin", "opset1", NULL, { P("f32", "2", 1, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, M_PI / 2, asin(0.5));
	RUN({ "Acos", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, 0);
	RUN({ "Atan", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, M_PI / 4);
	RUN({ "Sinh", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, sinh(1.0));
	RUN({ "Cosh", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, cosh(1.0));
	RUN({ "Asinh", "opset4", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, asinh(1.0));
	RUN({ "Acosh", "opset4", NULL, { P("f32", "1", 2) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, acosh(2.0));
	RUN({ "Atanh", "opset4", NULL, { P("f32", "1", 0.5) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, atanh(0.5));
	/* x / (1 + |x|) */
	RUN({ "SoftSign", "opset9", NULL, { P("f32", "2", -1, 3) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, -0.5, 0.75);
	/* integer input: rounded result, sin(2) = .909 -> 1 */
	RUN({ "Sin", "opset1", NULL, { P("i32", "2", 0, 2) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 0, 1);
}

TEST_F(ops, hard_sigmoid_selu_log_softmax)
{
	/* max(0, min(1, .2 x + .5)) */
	RUN({ "HardSigmoid", "opset1", NULL,
	      { P("f32", "3", -3, 0, 3), C("f32", "", 0.2), C("f32", "", 0.5) },
	      { "3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.5, 1);
	/* lambda (x > 0 ? x : alpha (e^x - 1)) */
	RUN({ "Selu", "opset1", NULL,
	      { P("f32", "2", -1, 2), C("f32", "1", 1.5), C("f32", "1", 2) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 2 * 1.5 * (exp(-1.0) - 1), 4);
	RUN({ "HardSigmoid", "opset1", NULL,
	      { P("f32", "3", -3, 0, 3), C("f32", "2", 0.2, 0.1),
		C("f32", "", 0.5) },
	      { "3" } });
	EXPECT_FAIL("HardSigmoid", -EINVAL, "input 1");
	/* x - max - log(sum(exp(x - max))) */
	RUN({ "LogSoftmax", "opset5", "axis=\"-1\"",
	      { P("f32", "2,3", 0, 0, 0, 1, 2, 3) }, { "2,3" } });
	EXPECT_OUT(0, F32, 1e-5, -log(3.0), -log(3.0), -log(3.0),
		   -2 - log(exp(-2.0) + exp(-1.0) + 1),
		   -1 - log(exp(-2.0) + exp(-1.0) + 1),
		   -log(exp(-2.0) + exp(-1.0) + 1));
	RUN({ "LogSoftmax", "opset5", "axis=\"2\"",
	      { P("f32", "2,3", 0, 0, 0, 1, 2, 3) }, { "2,3" } });
	EXPECT_FAIL("LogSoftmax", -EINVAL, "axis 2");
}

TEST_F(ops, lrn_across_channels)
{
	/*
	 * Channels 1 2 3, size 3, alpha / size = 1, beta 1, bias 1: windows
	 * {1 2}, {1 2 3}, {2 3}: 1 / (1 + 5), 2 / (1 + 14), 3 / (1 + 13).
	 */
	RUN({ "LRN", "opset1", "alpha=\"3\" beta=\"1\" bias=\"1\" size=\"3\"",
	      { P("f32", "1,3,1,1", 1, 2, 3), C("i64", "1", 1) },
	      { "1,3,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 1.0 / 6, 2.0 / 15, 3.0 / 14);
	/* over H and W: alpha / size^2 = 1, a 2x2 map, windows of 3x3 */
	RUN({ "LRN", "opset1", "alpha=\"9\" beta=\"1\" bias=\"0\" size=\"3\"",
	      { P("f32", "1,1,2,2", 1, 1, 1, 1), C("i64", "2", 2, 3) },
	      { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.25, 0.25, 0.25);
	RUN({ "LRN", "opset1", "alpha=\"3\" beta=\"1\" bias=\"1\"",
	      { P("f32", "1,3,1,1", 1, 2, 3), C("i64", "1", 1) },
	      { "1,3,1,1" } });
	EXPECT_FAIL("LRN", -EINVAL, "size");
}

/* ---- BitwiseLeftShift-15, BitwiseRightShift-15 ------------------------ */

TEST_F(ops, bitwise_shifts)
{
	/* 16 << 1, 4 << 2, 1 << 3 and the other way */
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P("u8", "3", 16, 4, 1), P("u8", "3", 1, 2, 3) }, { "3" },
	      { "u8" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 32, 16, 8);
	RUN({ "BitwiseRightShift", "opset15", NULL,
	      { P("u8", "3", 16, 4, 1), P("u8", "3", 1, 2, 3) }, { "3" },
	      { "u8" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 8, 1, 0);
	/* bits shifted out of a u8 are lost; 8 or more gives 0 */
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P("u8", "2", 255, 255), P("u8", "2", 1, 8) }, { "2" },
	      { "u8" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 254, 0);
	/* signed right shifts are arithmetic; broadcast a [1] amount */
	RUN({ "BitwiseRightShift", "opset15", NULL,
	      { P("i32", "2,2", -8, 8, -1, 7), P("i32", "1", 1) },
	      { "2,2" } });
	EXPECT_OUT(0, I32, 0, -4, 4, -1, 3);
	/* out-of-range amounts: 0, or the sign for a negative value */
	RUN({ "BitwiseRightShift", "opset15", NULL,
	      { P("i32", "3", -8, 8, -8), P("i32", "3", 32, 40, -1) },
	      { "3" } });
	EXPECT_OUT(0, I32, 0, -1, 0, -1);
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P("u64", "2", 1, 3), P("u64", "2", 40, 64) }, { "2" },
	      { "u64" } });
	EXPECT_OUT(0, NPR_ELEM_U64, 0, 1099511627776.0, 0);
}

TEST_F(ops, bitwise_shift_errors)
{
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P0("f32", "2"), P0("f32", "2") }, { "2" } });
	EXPECT_FAIL("BitwiseLeftShift", -EINVAL, "integers");
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P0("i32", "2"), P0("i64", "2") }, { "2" } });
	EXPECT_FAIL("BitwiseLeftShift", -EINVAL, "one type");
	RUN({ "BitwiseRightShift", "opset15", "auto_broadcast=\"none\"",
	      { P0("i32", "2"), P0("i32", "1") }, { "2" } });
	EXPECT_FAIL("BitwiseRightShift", -EINVAL, "do not match");
}

/* ---- DFT-7, IDFT-7 ---------------------------------------------------- */

TEST_F(ops, dft_and_idft)
{
	/* impulse at 0: all ones; at 1: exp(-2 pi i k / 4) = 1, -i, -1, i */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,4,2", 1, 0, 0, 0, 0, 0, 0, 0,
		  0, 0, 1, 0, 0, 0, 0, 0), C("i64", "1", 1) },
	      { "2,4,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 0, 1, 0, 1, 0, 1, 0,
		   1, 0, 0, -1, -1, 0, 0, 1);
	/* IDFT (the conjugate kernel, / N) takes the second one back */
	RUN({ "IDFT", "opset7", NULL,
	      { P("f32", "4,2", 1, 0, 0, -1, -1, 0, 0, 1), C("i64", "1", -1) },
	      { "4,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0, 1, 0, 0, 0, 0, 0);
	/* [1, 1] padded to 4: 1 + exp(-i pi k / 2) = 2, 1 - i, 0, 1 + i */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,2", 1, 0, 1, 0), C("i64", "1", 0),
		C("i64", "1", 4) },
	      { "4,2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, 0, 1, -1, 0, 0, 1, 1);
	/* 2-D over [[1 2] [3 4]]: 10, 1-2+3-4, 1+2-3-4, 1-2-3+4 */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,2,2", 1, 0, 2, 0, 3, 0, 4, 0), C("i64", "2", 0, 1) },
	      { "2,2,2" } });
	EXPECT_OUT(0, F32, 1e-5, 10, 0, -2, 0, -4, 0, 0, 0);
	/* axes fed at run time: [1, 1] over axis 0 gives 2, 0 */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,2", 1, 0, 1, 0), P("i64", "1", 0) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, 0, 0, 0);
}

TEST_F(ops, dft_errors)
{
	RUN({ "DFT", "opset7", NULL,
	      { P0("f32", "2,3"), C("i64", "1", 0) }, { "2,3" } });
	EXPECT_FAIL("DFT", -EINVAL, "complex");
	RUN({ "DFT", "opset7", NULL,
	      { P0("f32", "2,2"), C("i64", "1", 1) }, { "2,2" } });
	EXPECT_FAIL("DFT", -EINVAL, "axis 1");
	RUN({ "IDFT", "opset7", NULL,
	      { P0("f32", "3,2"), C("i64", "1", 0), C("i64", "1", 0) },
	      { "3,2" } });
	EXPECT_FAIL("IDFT", -EINVAL, "signal_size 0");
}

TEST_HARNESS_MAIN
