/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the element-wise ops (ref/kernels/eltwise.c);
 * their params structs are in lib/ops/eltwise.h, which parse and infer fill.
 * The table npr_kernels_eltwise[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_ELTWISE_H
#define NPR_REF_KERNELS_ELTWISE_H

#include "ops/eltwise.h"

/*
 * The kernels, CPU evaluators of the op definitions (npr_kernel_find()).
 * All take the node (for params and error messages), n->nin input tensors
 * and n->nout output tensors whose type, shape and buffer are set.  An
 * output may share memory with an input of the same shape and type.  They
 * return 0 or -errno with npr_node_err() set.
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

#endif /* NPR_REF_KERNELS_ELTWISE_H */
