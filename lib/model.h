/* SPDX-License-Identifier: MIT */
/*
 * Model and compiled-model commands (lib/model.c): the ioctl handlers the
 * table in lib/dev.c calls with the argument copied in and its size
 * checked, and the entry points of the ring's LOAD, COMPILE, IMPORT and
 * EXPORT jobs.
 */
#ifndef NPR_MODEL_H
#define NPR_MODEL_H

#include <stdint.h>

struct npr_device;
struct npr_graph;

int npr_model_load_ioctl(struct npr_device *dev, void *arg);
int npr_model_info_ioctl(struct npr_device *dev, void *arg);
int npr_model_port_info_ioctl(struct npr_device *dev, void *arg);
int npr_model_compile_ioctl(struct npr_device *dev, void *arg);
int npr_model_export_ioctl(struct npr_device *dev, void *arg);
int npr_model_import_ioctl(struct npr_device *dev, void *arg);
int npr_model_query_ioctl(struct npr_device *dev, void *arg);
int npr_model_make_stateful_ioctl(struct npr_device *dev, void *arg);

int npr_model_load_deferred(struct npr_device *dev, const char *xml,
			    const char *bin, uint32_t *handle);
int npr_model_read(struct npr_device *dev, uint32_t h);
int npr_model_add(struct npr_device *dev, struct npr_graph *g,
		  uint32_t *model);
int npr_model_compile_default(struct npr_device *dev, uint32_t model,
			      uint32_t *exec);

#endif /* NPR_MODEL_H */
