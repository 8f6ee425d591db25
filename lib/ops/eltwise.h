/* SPDX-License-Identifier: MIT */
/*
 * Elementwise ops: binary arithmetic with numpy broadcasting, unary
 * activations, PReLU, Convert, FakeQuantize.
 */
#ifndef NPR_OPS_ELTWISE_H
#define NPR_OPS_ELTWISE_H

#include "graph.h"

enum npr_binop {
	NPR_BIN_ADD, NPR_BIN_SUB, NPR_BIN_MUL, NPR_BIN_DIV, NPR_BIN_MAX,
	NPR_BIN_MIN, NPR_BIN_POW, NPR_BIN_SQDIFF, NPR_BIN_FLOORMOD,
	NPR_BIN_MOD,
	/* boolean results */
	NPR_BIN_EQ, NPR_BIN_NE, NPR_BIN_LT, NPR_BIN_LE, NPR_BIN_GT,
	NPR_BIN_GE, NPR_BIN_AND, NPR_BIN_OR, NPR_BIN_XOR,
};

enum npr_unop {
	NPR_UN_RELU, NPR_UN_SIGMOID, NPR_UN_EXP, NPR_UN_NEG, NPR_UN_ABS,
	NPR_UN_SQRT, NPR_UN_TANH, NPR_UN_ERF, NPR_UN_FLOOR, NPR_UN_CEIL,
	NPR_UN_LOG, NPR_UN_CLAMP, NPR_UN_ELU, NPR_UN_HSWISH, NPR_UN_HSIGMOID,
	NPR_UN_MISH, NPR_UN_SOFTPLUS, NPR_UN_GELU_ERF, NPR_UN_GELU_TANH,
	NPR_UN_SWISH, NPR_UN_NOT,
};

struct npr_eltwise_params {
	int op;			/* enum npr_binop or enum npr_unop */
	bool pythondiv;		/* Divide: integer division floors */
	double a, b;		/* Clamp min/max, Elu alpha */
	unsigned int dst_type;	/* Convert: the requested type */
	int64_t levels;		/* FakeQuantize */
};

int npr_ref_binary(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);
int npr_ref_unary(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out);
int npr_ref_prelu(const struct npr_node *n, const struct npr_tensor *in,
		  struct npr_tensor *out);
int npr_ref_convert(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out);
int npr_ref_fake_quantize(const struct npr_node *n,
			  const struct npr_tensor *in,
			  struct npr_tensor *out);
int npr_ref_select(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

/* Broadcast helper shared by the kernels: strides of @s aligned to the
 * rank of @o, 0 along broadcast dimensions. */
void npr_bcast_strides(const struct npr_shape *s, const struct npr_shape *o,
		       int64_t *strides);

#endif /* NPR_OPS_ELTWISE_H */
