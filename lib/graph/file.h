/* SPDX-License-Identifier: MIT */
/*
 * Model files opened and mapped with their checks (lib/graph/file.c).
 */
#ifndef NPR_GRAPH_FILE_H
#define NPR_GRAPH_FILE_H

#include <stdint.h>

#include "graph.h"

struct stat;

int npr_file_open(const char *path, const char *what, uint64_t max,
		  struct stat *st);
int npr_file_map(const char *path, const char *what, uint64_t max,
		 struct npr_weights **out);
char *npr_file_dir(const char *path);

#endif /* NPR_GRAPH_FILE_H */
