/* SPDX-License-Identifier: MIT */
/*
 * The model cache (lib/store/cache.c): compiled models kept as blobs in
 * CACHE_DIR, keyed by the model, the input shapes, the properties and the
 * device.
 */
#ifndef NPR_STORE_CACHE_H
#define NPR_STORE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct npr_device;
struct npr_exec;
struct npr_graph;
struct npr_model;
struct npr_props;
struct npr_shape;

/**
 * struct npr_cache_key - the key of a cache entry
 * @lines: what the key is made of, "name=value\n".
 * @name: the entry's file name: 32 hex digits.
 * @model_name: the model's name, for messages.
 * @weights: the model's weights file, from which a hit reads a weightless
 *           entry's constants ("" : none); not part of the key.
 */
struct npr_cache_key {
	char lines[2 * 4096 + 1024];
	char name[33];
	char model_name[256];
	char weights[4096];
};

void npr_model_hash(const struct npr_graph *g, char *out);
void npr_cache_model_lines(const struct npr_model *m, char *buf,
			   size_t len);
void npr_cache_key(struct npr_device *dev, const char *model_lines,
		   int ninputs, const struct npr_shape *shapes,
		   const struct npr_props *p, const char *name,
		   const char *weights, struct npr_cache_key *k);
int npr_cache_get(struct npr_device *dev, const struct npr_cache_key *k,
		  const struct npr_props *p, struct npr_exec **out);
void npr_cache_put(const struct npr_exec *ex, const struct npr_cache_key *k);
int npr_cache_prune(const char *dir, uint64_t max, const char *keep);

#endif /* NPR_STORE_CACHE_H */
