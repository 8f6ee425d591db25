/* SPDX-License-Identifier: MIT */
/*
 * Math ops added beside the eltwise group: Round-5, Sign-1,
 * ReduceLogicalAnd-1, ReduceLogicalOr-1 and CumSum-3.  Attributes and
 * shape inference in lib/ops/math.c, scalar reference kernels in
 * ref/math.c.
 */
#ifndef NPR_OPS_MATH_H
#define NPR_OPS_MATH_H

#include "graph.h"

enum npr_math_op {
	NPR_MATH_ROUND_EVEN,
	NPR_MATH_ROUND_AWAY,
	NPR_MATH_SIGN,
	NPR_MATH_REDUCE_AND,
	NPR_MATH_REDUCE_OR,
	NPR_MATH_CUMSUM,
};

/**
 * struct npr_math_params - parsed attributes of the math ops
 * @op: enum npr_math_op.
 * @keep_dims: ReduceLogical*: keep reduced axes as size 1.
 * @reduced: ReduceLogical*: per input axis, reduced; set by infer.
 * @exclusive: CumSum: element i sums elements before i only.
 * @reverse: CumSum: sum from the end.
 * @axis: CumSum: normalised axis, set by infer.
 */
struct npr_math_params {
	int op;
	bool keep_dims;
	bool reduced[NPR_MAX_RANK];
	bool exclusive, reverse;
	int axis;
};

int npr_ref_math_unary(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);
int npr_ref_reduce_logical(const struct npr_node *n,
			   const struct npr_tensor *in,
			   struct npr_tensor *out);
int npr_ref_cumsum(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

#endif /* NPR_OPS_MATH_H */
