/* SPDX-License-Identifier: MIT */
/*
 * NprQConv with blocked weights, and the layout conversions of the
 * element-wise low-precision ops (ref/kernels/qnhwc.c), called by the
 * kernels of ref/kernels/quant.c.
 */
#ifndef NPR_REF_KERNELS_QNHWC_H
#define NPR_REF_KERNELS_QNHWC_H

#include "graph/graph.h"
#include "qgemm.h"

int npr_qconv_blocked(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out,
		      const struct npr_qgemm_kern *kern);
int npr_qmaxpool(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out);
int npr_qconcat(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out);
int npr_qew_relayout(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_QNHWC_H */
