/* SPDX-License-Identifier: MIT */
/*
 * Which layers of a model a device supports (lib/query.c), for
 * QUERY_MODEL.
 */
#ifndef NPR_QUERY_H
#define NPR_QUERY_H

#include <stdbool.h>

struct npr_device;
struct npr_graph;

int npr_device_supports(struct npr_device *dev,
			const struct npr_graph *model, bool *supported);

#endif /* NPR_QUERY_H */
