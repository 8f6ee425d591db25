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

/*
 * Reference kernels (ref/kernels/eltwise.c), the eval of the op definitions.  All
 * take the node (for params and error messages), n->nin input tensors and
 * n->nout output tensors whose type, shape and buffer are set.  An output
 * may share memory with an input of the same shape and type.  They return
 * 0 or -errno with npr_node_err() set.
 */
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

/*
 * The f32 activation loop behind npr_ref_unary(), for fused epilogues:
 * y[i] = op(x[i]) for i < count; y may equal x.  @beta is Swish's beta.
 * Returns 0, or -EINVAL for an op that is not an f32 activation.
 */
int npr_ref_unary_f32(const struct npr_eltwise_params *p, float beta,
		      const float *x, float *y, int64_t count);

#endif /* NPR_OPS_ELTWISE_H */
