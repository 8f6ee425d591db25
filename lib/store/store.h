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

#define NPR_BLOB_FORMAT		3	/* format of a blob with its weights */
#define NPR_BLOB_FORMAT_WL	4	/* weightless: a weights section */

struct npr_value;

/*
 * A constant of a weightless blob: where it lies in the weights file,
 * its element type there and the hash of its bytes (lib/store/weights.c).
 */
struct npr_blob_wref {
	uint64_t off, size, hash;
	uint32_t type;
};

/*
 * The weights section of a weightless blob being imported: the file's
 * size and hash, the bytes the constants take (each rounded up to
 * NPR_BLOB_ALIGN) and their count as the blob states them; the file,
 * mapped; where the constants go (@dst, @total bytes) and how far it is
 * filled.
 */
struct npr_wsrc {
	uint64_t fsize, fhash, total;
	uint32_t count, seen;
	const char *path;
	const unsigned char *map;
	unsigned char *dst;
	uint64_t used;
};

/* lib/store/serial.c */
int npr_blob_payload_write(const struct npr_exec *ex, unsigned char **out,
			   size_t *len, bool *weightless);
int npr_blob_payload_read(struct npr_exec *ex, struct npr_weights *mem,
			  struct npr_wsrc *ws, bool **held);
int npr_blob_wsec_read(const unsigned char *blob, size_t len,
		       struct npr_wsrc *ws);

/* lib/store/weights.c */
const struct npr_weights *npr_blob_weightless(const struct npr_exec *ex);
bool npr_blob_wref(const struct npr_exec *ex, const struct npr_weights *w,
		   int i, struct npr_blob_wref *r);
int npr_blob_wsrc_open(struct npr_wsrc *ws, const char *path);
void npr_blob_wsrc_close(struct npr_wsrc *ws);
int npr_blob_wsrc_read(struct npr_wsrc *ws, struct npr_value *v,
		       const struct npr_blob_wref *r, int i);

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
