/* SPDX-License-Identifier: MIT */
/*
 * Command-line arguments the tools share: --prop NAME=VALUE, --shape in
 * npuring's and benchmark_app's spellings, --input's FILE:TYPE, input
 * names, and a -m file
 * that is a compiled-model blob rather than a model.
 */
#ifndef NPR_TOOLS_ARGS_H
#define NPR_TOOLS_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "npuring.h"

/* One input's shape from --shape; @name NULL: the model's only input. */
struct npr_arg_shape {
	char *name;
	unsigned int rank;
	__s64 dims[NPR_MAX_RANK];
};

bool npr_arg_is_usage(int err);
int npr_arg_set_prop(int fd, const char *arg, char *msg, size_t len);
int npr_arg_set_weights(int fd, const char *path, char *msg, size_t len);
int npr_arg_parse_shapes(const char *arg, struct npr_arg_shape **list,
			 int *n, char *msg, size_t len);
int npr_arg_resolve_shapes(int fd, __u32 model,
			   const struct npr_arg_shape *list, int n,
			   struct npr_shape_arg *out, char *msg, size_t len);
int npr_arg_raw_input(const char *spec, char **path, unsigned int *type,
		      char *msg, size_t len);
void npr_arg_free_shapes(struct npr_arg_shape *list, int n);
int npr_arg_input_names(int fd, __u32 handle, char *buf, size_t len);
int npr_arg_read_blob(const char *path, void **buf, size_t *blen,
		      char *msg, size_t len);
const char *npr_arg_model_format(const char *path, unsigned int ir_version,
				 char *buf, size_t len);

#endif /* NPR_TOOLS_ARGS_H */
