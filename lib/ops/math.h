/* SPDX-License-Identifier: MIT */
/*
 * Math ops added beside the eltwise group: Round-5, Sign-1, the
 * trigonometric and hyperbolic functions, SoftSign-9, HardSigmoid-1,
 * Selu-1, LogSoftmax-5, LRN-1, ReduceLogicalAnd-1, ReduceLogicalOr-1,
 * CumSum-3 and Einsum-7.  Attributes and
 * shape inference in lib/ops/math.c, scalar reference kernels in
 * ref/kernels/math.c.
 */
#ifndef NPR_OPS_MATH_H
#define NPR_OPS_MATH_H

#include "graph/graph.h"

enum npr_math_op {
	NPR_MATH_ROUND_EVEN,
	NPR_MATH_ROUND_AWAY,
	NPR_MATH_SIGN,
	NPR_MATH_REDUCE_AND,
	NPR_MATH_REDUCE_OR,
	NPR_MATH_CUMSUM,
	/* unary, one kernel for all (ref/kernels/math.c) */
	NPR_MATH_SIN, NPR_MATH_COS, NPR_MATH_TAN, NPR_MATH_ASIN,
	NPR_MATH_ACOS, NPR_MATH_ATAN, NPR_MATH_SINH, NPR_MATH_COSH,
	NPR_MATH_ASINH, NPR_MATH_ACOSH, NPR_MATH_ATANH, NPR_MATH_SOFTSIGN,
	/* x, then two scalar inputs */
	NPR_MATH_HARD_SIGMOID, NPR_MATH_SELU,
	NPR_MATH_LOG_SOFTMAX,
	NPR_MATH_LRN,
};

/**
 * struct npr_math_params - parsed attributes of the math ops
 * @op: enum npr_math_op.
 * @keep_dims: ReduceLogical*: keep reduced axes as size 1.
 * @reduced: ReduceLogical*: per input axis, reduced; set by infer.
 * @exclusive: CumSum: element i sums elements before i only.
 * @reverse: CumSum: sum from the end.
 * @axis: CumSum, LogSoftmax: normalised axis, set by infer.
 * @axis_attr: LogSoftmax: the axis attribute as written.
 * @alpha, @beta, @bias: LRN.
 * @size: LRN: window size.
 */
struct npr_math_params {
	int op;
	bool keep_dims;
	bool reduced[NPR_MAX_RANK];
	bool exclusive, reverse;
	int axis;
	int64_t axis_attr;
	double alpha, beta, bias;
	int64_t size;
};

#define NPR_EINSUM_MAX_IN	16
#define NPR_EINSUM_LABELS	(52 + NPR_MAX_RANK)	/* A-Z a-z, ellipsis */

/**
 * struct npr_einsum_params - Einsum-7, the equation resolved by infer
 * @eq: the equation as written.
 * @rank: per input, its rank.
 * @lab: per input and dimension, the label: 0-25 for A-Z, 26-51 for a-z,
 *       52 + i for the i-th dimension covered by an ellipsis (right
 *       aligned across the inputs).
 * @orank: output rank.
 * @olab: output labels.
 * @size: per label, its size (0 when unused).
 * @used: per label, it occurs in an input.
 */
struct npr_einsum_params {
	char eq[256];
	int rank[NPR_EINSUM_MAX_IN];
	int lab[NPR_EINSUM_MAX_IN][NPR_MAX_RANK];
	int orank;
	int olab[NPR_MAX_RANK];
	int64_t size[NPR_EINSUM_LABELS];
	bool used[NPR_EINSUM_LABELS];
};

#endif /* NPR_OPS_MATH_H */
