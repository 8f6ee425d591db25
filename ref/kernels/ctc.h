/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the CTC ops (ref/kernels/ctc.c);
 * their params structs are in lib/ops/ctc.h, which parse and infer fill.
 * The table npr_kernels_ctc[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_CTC_H
#define NPR_REF_KERNELS_CTC_H

#include "ops/ctc.h"

int npr_ref_ctc_greedy(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out);
int npr_ref_ctc_greedy_seq_len(const struct npr_node *n,
			       const struct npr_tensor *in,
			       struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_CTC_H */
