/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the recurrent ops (ref/kernels/rnn.c);
 * their params structs are in lib/ops/rnn.h, which parse and infer fill.
 * The table npr_kernels_rnn[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_RNN_H
#define NPR_REF_KERNELS_RNN_H

#include "ops/rnn.h"

int npr_ref_rnn_cell(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out);
int npr_ref_rnn_seq(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_RNN_H */
