/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the control-flow ops (ref/kernels/control.c);
 * their params structs are in lib/ops/control.h, which parse and infer fill.
 * The table npr_kernels_control[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_CONTROL_H
#define NPR_REF_KERNELS_CONTROL_H

#include "ops/control.h"

int npr_ref_tensor_iterator(const struct npr_node *n,
			    const struct npr_tensor *in,
			    struct npr_tensor *out);
int npr_ref_loop(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_ref_if(const struct npr_node *n, const struct npr_tensor *in,
	       struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_CONTROL_H */
