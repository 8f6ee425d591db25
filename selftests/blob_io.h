/* SPDX-License-Identifier: MIT */
/*
 * Export and import through the public API, and the blob's checksum
 * (Documentation/blob.rst), for the test programs that take blobs apart:
 * blob_test.c, blob_fuzz_test.c (through blob_util.h) and
 * npu_models_test.c.
 */
#ifndef BLOB_IO_H
#define BLOB_IO_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npuring.h"

/* The library's checksum (lib/store/blob.c) and the header's size. */
uint64_t npr_blob_hash(const void *p, size_t n);
#define BLOB_HDR	96

/* EXPORT @exec into a malloc'd *@blob of *@len bytes. */
static inline int blob_export(int fd, __u32 exec, unsigned char **blob,
			      size_t *len)
{
	struct npr_export ea = { .size = sizeof(ea), .exec = exec };
	int err;

	*blob = NULL;
	*len = 0;
	err = npr_ioctl(fd, NPR_IOCTL_EXPORT, &ea);
	if (err != -EMSGSIZE)
		return err ? err : -EPROTO;
	*blob = malloc(ea.bytes);
	if (!*blob)
		return -ENOMEM;
	ea.data = (uintptr_t)*blob;
	*len = ea.bytes;
	return npr_ioctl(fd, NPR_IOCTL_EXPORT, &ea);
}

static inline int blob_import(int fd, const void *blob, size_t len,
			      __u32 *exec)
{
	struct npr_import ia = {
		.size = sizeof(ia), .data = (uintptr_t)blob, .bytes = len,
	};
	int err = npr_ioctl(fd, NPR_IOCTL_IMPORT, &ia);

	*exec = ia.exec;
	return err;
}

/* Make the header's checksum (at 88) right again after an edit. */
static inline void blob_reseal(unsigned char *b, size_t len)
{
	uint64_t a = npr_blob_hash(b + BLOB_HDR, len - BLOB_HDR);
	uint64_t h = npr_blob_hash(b, 88);

	h = a ^ ((h << 17) | (h >> 47));
	memcpy(b + 88, &h, 8);
}

#endif /* BLOB_IO_H */
