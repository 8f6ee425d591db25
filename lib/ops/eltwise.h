/* SPDX-License-Identifier: MIT */
/*
 * Elementwise ops: binary arithmetic, comparisons and logic with numpy
 * broadcasting, unary activations, PReLU, Convert, FakeQuantize, Select.
 *
 * Op definitions (attributes, shape inference): lib/ops/eltwise.c.
 * Reference kernels: ref/kernels/eltwise.c.
 */
#ifndef NPR_OPS_ELTWISE_H
#define NPR_OPS_ELTWISE_H

#include "graph/graph.h"

/* Binary ops.  Arithmetic keeps the input type; the rest give boolean. */
enum npr_binop {
	NPR_BIN_ADD,
	NPR_BIN_SUB,
	NPR_BIN_MUL,
	NPR_BIN_DIV,
	NPR_BIN_MAX,
	NPR_BIN_MIN,
	NPR_BIN_POW,
	NPR_BIN_SQDIFF,
	NPR_BIN_FLOORMOD,
	NPR_BIN_MOD,
	/* comparisons: any type in, boolean out */
	NPR_BIN_EQ,
	NPR_BIN_NE,
	NPR_BIN_LT,
	NPR_BIN_LE,
	NPR_BIN_GT,
	NPR_BIN_GE,
	/* logic: boolean in, boolean out */
	NPR_BIN_AND,
	NPR_BIN_OR,
	NPR_BIN_XOR,
};

enum npr_unop {
	NPR_UN_RELU,
	NPR_UN_SIGMOID,
	NPR_UN_EXP,
	NPR_UN_NEG,
	NPR_UN_ABS,
	NPR_UN_SQRT,
	NPR_UN_TANH,
	NPR_UN_ERF,
	NPR_UN_FLOOR,
	NPR_UN_CEIL,
	NPR_UN_LOG,
	NPR_UN_CLAMP,
	NPR_UN_ELU,
	NPR_UN_HSWISH,
	NPR_UN_HSIGMOID,
	NPR_UN_MISH,
	NPR_UN_SOFTPLUS,
	NPR_UN_GELU_ERF,
	NPR_UN_GELU_TANH,
	NPR_UN_SWISH,
	NPR_UN_NOT,
};

/* auto_broadcast attribute values accepted. */
enum npr_bcast_mode {
	NPR_BCAST_NUMPY,
	NPR_BCAST_NONE,
};

/**
 * struct npr_eltwise_params - parsed attributes of every eltwise op
 * @op: enum npr_binop or enum npr_unop; unused by the other ops.
 * @bcast: enum npr_bcast_mode (binary ops, FakeQuantize, Select).
 * @pythondiv: Divide: integer division rounds toward -inf (else toward 0).
 * @lo: Clamp min.
 * @hi: Clamp max.
 * @alpha: Elu alpha.
 * @dst_type: Convert destination_type as written (f16 and bf16 included;
 *            the output value itself is f32 then, rounded through the type).
 * @levels: FakeQuantize levels, >= 2.
 */
struct npr_eltwise_params {
	int op;
	int bcast;
	bool pythondiv;
	double lo, hi;
	double alpha;
	unsigned int dst_type;
	int64_t levels;
};

#endif /* NPR_OPS_ELTWISE_H */
