/* SPDX-License-Identifier: MIT */
/*
 * The OpenVINO IR frontend: reads an IR v10 or v11 .xml (with its .bin
 * weights) into a struct npr_graph.
 */
#ifndef NPR_IR_H
#define NPR_IR_H

#include <stddef.h>

#include "graph/graph.h"

/* Largest .xml accepted, in bytes. */
#define NPR_IR_MAX_XML		(512UL << 20)
/* Most layers accepted in one model. */
#define NPR_IR_MAX_LAYERS	1000000
/* Longest layer, type, tensor or model name accepted, in bytes. */
#define NPR_IR_MAX_NAME		4096
/* Largest dimension accepted in a shape. */
#define NPR_IR_MAX_DIM		(1LL << 40)

int npr_ir_parse(const void *xml, size_t xml_len, struct npr_weights *weights,
		 struct npr_graph **out);
int npr_ir_load_file(const char *xml_path, const char *bin_path,
		     struct npr_graph **out);
int npr_ir_weights_from_memory(const void *data, size_t size,
			    struct npr_weights **out);

/*
 * The IR writer (lib/ir/write.c): a loaded or compiled graph to IR v11.
 * Const slices in the .bin start at multiples of NPR_IR_WRITE_ALIGN.
 */
#define NPR_IR_WRITE_ALIGN	64
int npr_ir_write_mem(const struct npr_graph *g, char **xml, size_t *xml_len,
		     void **bin, size_t *bin_len);
int npr_ir_write(const struct npr_graph *g, const char *xml_path,
		 const char *bin_path);

#endif /* NPR_IR_H */
