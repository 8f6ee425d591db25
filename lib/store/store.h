/* SPDX-License-Identifier: MIT */
/*
 * Compiled-model blobs (lib/store/blob.c says what one is): what blob.c
 * (the header, export and import), serial.c (the payload), validate.c
 * (the checks of the graph read) and hash.c (the checksum and its thread)
 * share.  "blob" in a name is a compiled-model blob, the file export
 * writes; struct npr_weights is the reference-counted memory that weights,
 * mapped files and these blobs are held in.
 */
#ifndef NPR_STORE_H
#define NPR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPR_BLOB_ALIGN		64	/* constant and prepared data */
#define NPR_BLOB_HEADER		96

struct npr_weights;
struct npr_exec;
struct npr_graph;
struct npr_port;
struct npr_blob_sum;

static inline bool in_range(int v, int n)
{
	return v >= 0 && v < n;
}

/* lib/store/serial.c */
int npr_blob_payload_write(const struct npr_exec *ex, unsigned char **out,
			   size_t *len);
int npr_blob_payload_read(struct npr_exec *ex, struct npr_weights *mem,
			  bool **held);

/* lib/store/validate.c */
int npr_blob_check_structure(struct npr_graph *g, const bool *held);
int npr_blob_check_graph(struct npr_graph *g, const bool *held,
			 const struct npr_port *in, int nin,
			 const struct npr_port *out, int nout);

/* lib/store/hash.c */
uint64_t npr_blob_checksum(const unsigned char *h, uint64_t psize);
struct npr_blob_sum *npr_blob_sum_start(struct npr_weights *mem);
uint64_t npr_blob_sum_finish(struct npr_blob_sum *s,
			     const struct npr_weights *mem);

#endif /* NPR_STORE_H */
