/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the deconvolution ops (ref/kernels/deconv.c);
 * their params structs are in lib/ops/deconv.h, which parse and infer fill.
 * The table npr_kernels_deconv[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_DECONV_H
#define NPR_REF_KERNELS_DECONV_H

#include "ops/deconv.h"

int npr_ref_deconv(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_DECONV_H */
