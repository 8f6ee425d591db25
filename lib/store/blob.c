// SPDX-License-Identifier: MIT
/*
 * Compiled-model blobs: export and import.
 *
 * A blob is a fixed header followed by a payload:
 *
 *   header (96 bytes, little-endian)
 *     0  magic "NPRBLOB\0"
 *     8  u32 format version (NPR_BLOB_FORMAT; NPR_BLOB_FORMAT_WL for a
 *        weightless blob, whose payload starts with a weights section)
 *    12  u32 header size
 *    16  backend name, 16 bytes, NUL-padded
 *    32  device architecture, 32 bytes, NUL-padded
 *    64  library version, 16 bytes, NUL-padded
 *    80  u64 payload size
 *    88  u64 checksum: npr_blob_hash() of the payload, mixed with that of
 *        header bytes 0..87
 *   payload
 *     the compiled model's properties, its caching properties as
 *     "NAME=VALUE" strings, its ports as the caller sees them (names,
 *     element types, shapes), and the compiled graph: every value (type,
 *     shape, producer, name, constant data where a live node reads it),
 *     every node (op type, version, attributes, edges, dead flag), the
 *     inputs, outputs and variables; then the backend's prepared constants
 *     (packed weights) as opaque buffers under a layout name; then, for a
 *     backend with a native form (ops->native_export: npu), a u64 size
 *     and that many bytes the backend wrote and checks itself.  Constant
 *     data and prepared buffers are 64-byte aligned within the blob.
 *     A weightless blob (CACHE_MODE OPTIMIZE_SIZE, lib/store/weights.c)
 *     states where the constants lie in the model's weights file instead
 *     of their bytes, and has neither prepared constants when the file
 *     holds every packed one nor a native section.
 *
 * The graph is the one compile produced (lowered to compute types,
 * constants folded, variables turned into ports), so import skips the
 * frontend and the compile passes and goes straight to the backend.
 * Import trusts nothing: the header, the checksum, every count, index and
 * string against the payload's bounds, every op against the registry,
 * and every shape by running shape inference again; the backend checks
 * the prepared buffers.  It copies nothing: constants and prepared
 * buffers point into the blob's memory (npr_blob_import_mem(): a mapped
 * cache entry; npr_blob_import(): one aligned copy of the caller's).
 *
 * This file holds the header, export and import; lib/store/serial.c the
 * payload, lib/store/validate.c the checks of the graph read from it,
 * lib/store/hash.c the checksum and the thread that takes it beside the
 * import of a cache entry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "blob.h"
#include "error.h"
#include "graph/graph.h"
#include "object.h"
#include "props.h"
#include "store.h"

#define NPR_BLOB_MAGIC		"NPRBLOB"

#ifndef NPR_LIB_VERSION
#define NPR_LIB_VERSION		"unknown"
#endif

static void header_field(unsigned char *dst, size_t len, const char *s)
{
	memset(dst, 0, len);
	memcpy(dst, s, strnlen(s, len - 1));
}

/**
 * npr_blob_export() - a compiled model as a compiled-model blob
 * @ex: the compiled model; with CACHE_MODE OPTIMIZE_SIZE and the model
 *      read from its files, the blob is weightless (weights.c).
 * @out: the blob, malloc'd, owned by the caller.
 * @len: its size.
 *
 * Return: 0, or -errno with a message: -EOPNOTSUPP (output shapes that
 * depend on dynamic input dimensions or on input values), -ENOMEM, or
 * the backend's error.
 */
int npr_blob_export(const struct npr_exec *ex, void **out, size_t *len)
{
	const struct npr_device *dev = ex->dev;
	unsigned char *h;
	size_t blen;
	uint64_t psize;
	int dyn = npr_graph_dynamic(ex->g);
	bool wl = false;
	int err;

	if (dyn >= 0)
		return npr_node_err(&ex->g->nodes[dyn], -EOPNOTSUPP,
				    "export: the output shape depends on a dynamic input dimension or on input values; such models are not exported yet");
	err = npr_blob_payload_write(ex, &h, &blen, &wl);
	if (err)
		return err;
	memset(h, 0, NPR_BLOB_HEADER);
	memcpy(h, NPR_BLOB_MAGIC, 8);
	*(uint32_t *)(h + 8) = wl ? NPR_BLOB_FORMAT_WL : NPR_BLOB_FORMAT;
	*(uint32_t *)(h + 12) = NPR_BLOB_HEADER;
	header_field(h + 16, 16, npr_backend_name(dev));
	header_field(h + 32, 32, dev->info.arch);
	header_field(h + 64, 16, NPR_LIB_VERSION);
	psize = blen - NPR_BLOB_HEADER;
	memcpy(h + 80, &psize, 8);
	*(uint64_t *)(h + 88) = npr_blob_checksum(h, psize);
	*out = h;
	*len = blen;
	return 0;
}

static void header_str(char *dst, const unsigned char *src, size_t len)
{
	memcpy(dst, src, len);
	dst[len - 1] = 0;
}

/* npr_blob_check_header(), the checksum left out when @sum is false. */
static int check_header(const struct npr_device *dev, const void *buf,
			size_t len, bool sum)
{
	const unsigned char *h = buf;
	char backend[16], arch[32], version[16];
	uint64_t psize, hash;

	if (len < 8 || memcmp(h, NPR_BLOB_MAGIC, 8))
		return npr_err(-ENOEXEC, "not an npuring compiled-model blob");
	if (len < NPR_BLOB_HEADER)
		return npr_err(-EBADMSG, "blob truncated: %zu bytes, the header alone is %d",
			       len, NPR_BLOB_HEADER);
	if ((*(const uint32_t *)(h + 8) != NPR_BLOB_FORMAT &&
	     *(const uint32_t *)(h + 8) != NPR_BLOB_FORMAT_WL) ||
	    *(const uint32_t *)(h + 12) != NPR_BLOB_HEADER)
		return npr_err(-EPROTONOSUPPORT, "blob format %u, this library reads %d and %d (weightless)",
			       *(const uint32_t *)(h + 8), NPR_BLOB_FORMAT,
			       NPR_BLOB_FORMAT_WL);
	memcpy(&psize, h + 80, 8);
	memcpy(&hash, h + 88, 8);
	if (psize != len - NPR_BLOB_HEADER)
		return npr_err(-EBADMSG, "blob truncated or padded: payload of %zu bytes, the header says %llu",
			       len - NPR_BLOB_HEADER,
			       (unsigned long long)psize);
	if (sum && npr_blob_checksum(h, psize) != hash)
		return npr_err(-EBADMSG, "blob corrupt: checksum mismatch");
	header_str(backend, h + 16, sizeof(backend));
	header_str(arch, h + 32, sizeof(arch));
	header_str(version, h + 64, sizeof(version));
	if (strcmp(version, NPR_LIB_VERSION))
		return npr_err(-EPROTONOSUPPORT, "blob written by library %s, this is %s",
			       version, NPR_LIB_VERSION);
	if (strcmp(backend, npr_backend_name(dev)))
		return npr_err(-ENODEV, "blob compiled for the %s device, not %s",
			       backend, npr_backend_name(dev));
	if (strcmp(arch, dev->info.arch))
		return npr_err(-ENODEV, "blob compiled for architecture %s, this device is %s",
			       arch, dev->info.arch);
	return 0;
}

/**
 * npr_blob_check_header() - is this a compiled-model blob for this device?
 * @dev: the device.
 * @buf: the blob.
 * @len: its size.
 *
 * Return: 0, -ENOEXEC (not a blob), -EPROTONOSUPPORT (another format or
 * library version), -EBADMSG (truncated, or the checksum does not match),
 * -ENODEV (another backend or architecture), in this order.
 */
int npr_blob_check_header(const struct npr_device *dev, const void *buf,
			  size_t len)
{
	return check_header(dev, buf, len, true);
}

static bool weightless(const void *blob)
{
	return *(const uint32_t *)((const unsigned char *)blob + 8) ==
	       NPR_BLOB_FORMAT_WL;
}

/*
 * npr_blob_import_mem(), the header already checked when @checked; @ws
 * the weights section of a weightless blob, else NULL.
 */
static int import_mem(struct npr_device *dev, struct npr_weights *mem,
		      bool checked, struct npr_wsrc *ws, struct npr_exec **out)
{
	struct npr_exec *ex;
	struct npr_graph *g;
	bool *held = NULL;
	int err;

	*out = NULL;
	err = checked ? 0 : npr_blob_check_header(dev, mem->data, mem->size);
	if (err)
		return err;
	if (!ws && weightless(mem->data))
		return npr_err(-EINVAL, "a weightless blob where its weights cannot be read");
	if ((uintptr_t)mem->data % NPR_BLOB_ALIGN)
		return npr_err(-EINVAL, "blob memory not %d-byte aligned",
			       NPR_BLOB_ALIGN);
	ex = calloc(1, sizeof(*ex));
	g = npr_graph_new();
	if (!ex || !g) {
		free(ex);
		npr_graph_free(g);
		return -ENOMEM;
	}
	ex->refs = 1;
	ex->dev = dev;
	ex->g = g;
	*out = ex;	/* the caller frees it like any exec */
	npr_props_init(&ex->props);	/* defaults for what blobs lack */
	err = npr_blob_payload_read(ex, mem, ws, &held);
	if (!err)
		err = npr_blob_check_graph(g, held, ex->in, ex->nin, ex->out,
					   ex->nout);
	free(held);
	if (ws)
		ex->props.cache_mode = NPR_CACHE_MODE_OPTIMIZE_SIZE;
	return err;
}

/*
 * Import weightless blob @buf (@len bytes, its header checked) with the
 * constants read from weights file @weights: one aligned copy of the blob
 * followed by room for them, which the compiled model keeps.
 */
static int import_weightless(struct npr_device *dev, const void *buf,
			     size_t len, const char *weights,
			     struct npr_exec **out)
{
	size_t alen = (len + NPR_BLOB_ALIGN - 1) & ~(size_t)(NPR_BLOB_ALIGN - 1);
	struct npr_weights *mem = NULL;
	struct npr_wsrc ws;
	int err;

	*out = NULL;
	err = npr_blob_wsec_read(buf, len, &ws);
	if (!err)
		err = npr_blob_wsrc_open(&ws, weights);
	if (!err && ws.total > SIZE_MAX - alen)
		err = npr_err(-ENOMEM, "weightless blob: %llu bytes of weights do not fit in memory",
			      (unsigned long long)ws.total);
	if (!err && !(mem = calloc(1, sizeof(*mem))))
		err = -ENOMEM;
	if (!err && posix_memalign(&mem->data, NPR_BLOB_ALIGN,
				   alen + ws.total)) {
		mem->data = NULL;
		err = npr_err(-ENOMEM, "no memory for a blob of %zu bytes and its %llu bytes of weights",
			      len, (unsigned long long)ws.total);
	}
	if (!err) {
		memcpy(mem->data, buf, len);
		memset((unsigned char *)mem->data + len, 0, alen - len);
		mem->size = alen + ws.total;
		mem->refs = 1;
		ws.dst = (unsigned char *)mem->data + alen;
		err = import_mem(dev, mem, true, &ws, out);
	}
	npr_blob_wsrc_close(&ws);
	if (mem && mem->data)
		npr_weights_put(mem);	/* the graph holds its own reference */
	else
		free(mem);
	return err;
}

/**
 * npr_blob_import_mem() - rebuild a compiled model from a blob in memory
 * @dev: the device.
 * @mem: the blob, NPR_BLOB_ALIGN aligned (a mapped file or a heap copy).
 *       The compiled model's constants and prepared buffers point into it;
 *       its graph takes a reference.
 * @out: the compiled model (graph, ports, properties, ex->prep), not yet
 *       given to the backend; set also on failure (free it).
 *
 * Return: 0 or -errno with the message set (npr_blob_check_header()'s,
 * -EINVAL for a payload that is not a valid compiled graph, -ENOMEM).
 */
int npr_blob_import_mem(struct npr_device *dev, struct npr_weights *mem,
			struct npr_exec **out)
{
	return import_mem(dev, mem, false, NULL, out);
}

/**
 * npr_blob_import_compiled() - import a mapped cache entry and compile it
 * @dev: the device.
 * @mem: the entry's memory, 64-byte aligned (a mapping); the compiled
 *       model takes its own reference.
 * @weights: the model's weights file, for a weightless entry; or NULL.
 * @out: on success, the compiled model (the backend's compile done).
 *
 * npr_blob_import_mem() and the backend's compile, with the checksum
 * taken beside them (npr_blob_sum_start(), lib/store/hash.c).  The
 * checks and their errors are those of the two, but for their order: a
 * checksum mismatch is reported in place of whatever the corrupt bytes
 * made fail first.  A weightless entry (small) is checked whole first,
 * then copied with its weights read from @weights (import_weightless()).
 *
 * Return: 0, or -errno with a message; on failure *@out is NULL.
 */
int npr_blob_import_compiled(struct npr_device *dev, struct npr_weights *mem,
			     const char *weights, struct npr_exec **out)
{
	const unsigned char *h = mem->data;
	struct npr_exec *ex = NULL;
	struct npr_blob_sum *sum;
	uint64_t hash;
	int err;

	*out = NULL;
	err = check_header(dev, mem->data, mem->size, false);
	if (err)
		return err;
	if (weightless(mem->data)) {
		err = check_header(dev, mem->data, mem->size, true);
		if (!err)
			err = import_weightless(dev, mem->data, mem->size,
						weights, &ex);
		if (!err)
			err = npr_backend_compile(ex);
		if (err) {
			npr_exec_free(ex);
			return err;
		}
		*out = ex;
		return 0;
	}
	sum = npr_blob_sum_start(mem);
	err = import_mem(dev, mem, true, NULL, &ex);
	if (!err)
		err = npr_backend_compile(ex);
	memcpy(&hash, h + 88, 8);
	if (npr_blob_sum_finish(sum, mem) != hash)
		err = npr_err(-EBADMSG, "blob corrupt: checksum mismatch");
	if (err) {
		npr_exec_free(ex);
		return err;
	}
	*out = ex;
	return 0;
}

/**
 * npr_blob_import() - rebuild a compiled model from a blob the caller owns
 * @dev: the device.
 * @buf: the blob; copied once (aligned), so it need not outlive the call.
 * @len: its size.
 * @weights: the model's weights file (WEIGHTS_PATH), for a weightless
 *           blob; or NULL.
 * @out: as for npr_blob_import_mem().
 *
 * Return: as npr_blob_import_mem(); for a weightless blob also
 * -ENOENT (no @weights, or no such file), -ESTALE (not the file the blob
 * was made from, or changed since), -EIO.
 */
int npr_blob_import(struct npr_device *dev, const void *buf, size_t len,
		    const char *weights, struct npr_exec **out)
{
	struct npr_weights *mem;
	int err;

	*out = NULL;
	/* the header first: a wrong file costs no copy */
	err = npr_blob_check_header(dev, buf, len);
	if (err)
		return err;
	if (weightless(buf))
		return import_weightless(dev, buf, len, weights, out);
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	if (posix_memalign(&mem->data, NPR_BLOB_ALIGN, len)) {
		free(mem);
		return npr_err(-ENOMEM, "no memory for a blob of %zu bytes", len);
	}
	memcpy(mem->data, buf, len);
	mem->size = len;
	mem->refs = 1;
	err = import_mem(dev, mem, true, NULL, out);
	npr_weights_put(mem);	/* the graph holds its own reference */
	return err;
}

