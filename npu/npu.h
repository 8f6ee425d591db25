/* SPDX-License-Identifier: MIT */
/*
 * npu/: the Level Zero NPU backend, internal interfaces.
 */
#ifndef NPR_NPU_H
#define NPR_NPU_H

#include <stddef.h>

#include "../lib/graph.h"

int npu_ir_emit(const struct npr_graph *g, const unsigned int *in_types,
		const unsigned int *out_types, char **xml, size_t *xml_len,
		void **bin, size_t *bin_len);

#endif /* NPR_NPU_H */
