/* SPDX-License-Identifier: MIT */
/*
 * Command-line arguments the tools share: --prop NAME=VALUE and
 * --shape NAME=DIMS, resolved through the public API, and a -m file that
 * is a compiled-model blob rather than a model.
 */
#ifndef NPR_TOOLS_ARGS_H
#define NPR_TOOLS_ARGS_H

#include <stddef.h>

#include "npuring.h"

int npr_arg_set_prop(int fd, const char *arg, char *msg, size_t len);
int npr_arg_shape(int fd, __u32 model, const char *arg,
		  struct npr_shape_arg *sh, char *msg, size_t len);
int npr_arg_read_blob(const char *path, void **buf, size_t *blen,
		      char *msg, size_t len);

#endif /* NPR_TOOLS_ARGS_H */
