/* SPDX-License-Identifier: MIT */
/*
 * Compiled-model blobs (lib/store/blob.c): EXPORT writes one, IMPORT and
 * the model cache read one back into a compiled model.
 */
#ifndef NPR_STORE_BLOB_H
#define NPR_STORE_BLOB_H

#include <stddef.h>
#include <stdint.h>

struct npr_weights;
struct npr_device;
struct npr_exec;

uint64_t npr_blob_hash(const void *p, size_t n);
int npr_blob_export(const struct npr_exec *ex, void **out, size_t *len);
int npr_blob_check_header(const struct npr_device *dev, const void *buf,
			  size_t len);
int npr_blob_import_mem(struct npr_device *dev, struct npr_weights *mem,
			struct npr_exec **out);
int npr_blob_import(struct npr_device *dev, const void *buf, size_t len,
		    const char *weights, struct npr_exec **out);
int npr_blob_import_compiled(struct npr_device *dev, struct npr_weights *mem,
			     const char *weights, struct npr_exec **out);
int npr_blob_weights_check(struct npr_exec *ex);

#endif /* NPR_STORE_BLOB_H */
