/* SPDX-License-Identifier: MIT */
/*
 * The kernel registry of the CPU backend (ref/kernels/registry.c): which
 * reference kernel evaluates an op definition.  Op definitions
 * (lib/ops/) know no kernels; the CPU backend, constant folding (through
 * npr_backend_evaluator()) and query_model ask here.
 */
#ifndef NPR_REF_KERNELS_REGISTRY_H
#define NPR_REF_KERNELS_REGISTRY_H

#include "graph/graph.h"

/**
 * struct npr_kernel - one entry of a group's kernel table
 * @type: op type, as in the op definition.
 * @vmin, @vmax: the opset range of exactly one op definition.
 * @eval: the kernel.
 *
 * Each ref/kernels/<group>.c ends with npr_kernels_<group>[], one entry
 * per op definition of lib/ops/<group>.c, ended by a NULL @type.
 */
struct npr_kernel {
	const char *type;
	unsigned int vmin, vmax;
	npr_eval_fn eval;
};

npr_eval_fn npr_kernel_find(const struct npr_op_def *op);
int npr_kernel_check(void);

#endif /* NPR_REF_KERNELS_REGISTRY_H */
