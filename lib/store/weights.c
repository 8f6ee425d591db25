// SPDX-License-Identifier: MIT
/*
 * Weightless blobs (CACHE_MODE=OPTIMIZE_SIZE): a constant of the compiled
 * graph that lies in the model's own weights file (the IR .bin, or the
 * .onnx itself) is written as where it lies there (offset, size, element
 * type) and a hash of those bytes, not as the bytes; import reads it back
 * from the file (WEIGHTS_PATH, or the model's file on a cache hit) and
 * refuses a file that is not the one the blob was made from.
 *
 * A constant qualifies when its bytes are a slice of the mapped file
 * (an f32 IR constant, an aligned ONNX initializer), or when compile
 * converted it to f32 from an f16/bf16 slice (pass_lower_half() notes
 * where: npr_value.src) and nothing changed it since, which
 * npr_blob_weights_check() makes sure of before the backend's compile.
 * Folded constants, ONNX external data and everything else stay in the
 * blob.  lib/store/serial.c writes and reads the references,
 * Documentation/blob.rst describes the section.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob.h"
#include "error.h"
#include "graph/graph.h"
#include "object.h"
#include "store.h"

static bool in_store(const struct npr_weights *w, const void *p, size_t n)
{
	const unsigned char *b = w->data, *q = p;

	return q >= b && n <= w->size && (size_t)(q - b) <= w->size - n;
}

static bool half(unsigned int t)
{
	return t == NPR_ELEM_F16 || t == NPR_ELEM_BF16;
}

/**
 * npr_blob_weights_check() - keep only the conversions a blob may redo
 * @ex: the compiled model, before the backend's compile (which may free
 *      the converted copies it packs).
 *
 * A value's @src (where compile converted it from) is kept only when
 * converting those bytes again gives its data bit for bit; a pass that
 * changed the constant since (a transpose, a fold) loses it.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_blob_weights_check(struct npr_exec *ex)
{
	struct npr_graph *g = ex->g;
	const struct npr_weights *w = g->weights;
	float *tmp = NULL;
	size_t cap = 0;
	int i;

	for (i = 0; i < g->nvals; i++) {
		struct npr_value *v = &g->vals[i];
		int64_t numel = npr_shape_numel(&v->shape);
		size_t sb;

		if (!v->src)
			continue;
		sb = numel >= 0 ? npr_tensor_bytes(v->src_type, numel) : 0;
		if (!w || !w->mapped || !v->data || numel < 0 ||
		    v->type != NPR_ELEM_F32 || !half(v->src_type) ||
		    v->nbytes != (size_t)numel * sizeof(float) ||
		    !in_store(w, v->src, sb)) {
			v->src = NULL;
			continue;
		}
		if (v->nbytes > cap) {
			float *t = realloc(tmp, v->nbytes);

			if (!t) {
				free(tmp);
				return -ENOMEM;
			}
			tmp = t;
			cap = v->nbytes;
		}
		npr_convert(tmp, NPR_ELEM_F32, v->src, v->src_type, numel);
		if (memcmp(tmp, v->data, v->nbytes))
			v->src = NULL;
	}
	free(tmp);
	return 0;
}

/**
 * npr_blob_weightless() - does an export of @ex leave its weights out?
 * @ex: the compiled model.
 *
 * Return: the weights file's mapped store, when @ex was compiled with
 * CACHE_MODE=OPTIMIZE_SIZE from a model read from its files; else NULL.
 */
const struct npr_weights *npr_blob_weightless(const struct npr_exec *ex)
{
	const struct npr_weights *w = ex->g->weights;

	if (ex->props.cache_mode != NPR_CACHE_MODE_OPTIMIZE_SIZE ||
	    !ex->wfile || !w || !w->mapped)
		return NULL;
	return w;
}

/**
 * npr_blob_wref() - value @i of @ex's graph as a weights-file reference
 * @ex: the compiled model.
 * @w: npr_blob_weightless() of it.
 * @i: the value, of the top-level graph.
 * @r: filled when it is one.
 *
 * Return: whether it is one.
 */
bool npr_blob_wref(const struct npr_exec *ex, const struct npr_weights *w,
		   int i, struct npr_blob_wref *r)
{
	const struct npr_value *v = &ex->g->vals[i];
	const unsigned char *p;
	int64_t numel = npr_shape_numel(&v->shape);

	if (numel < 0)
		return false;
	if (v->data && in_store(w, v->data, v->nbytes)) {
		p = v->data;
		r->type = v->type;
		r->size = v->nbytes;
	} else if (v->src && v->type == NPR_ELEM_F32) {
		p = v->src;
		r->type = v->src_type;
		r->size = npr_tensor_bytes(v->src_type, numel);
		if (!in_store(w, p, r->size))
			return false;
	} else {
		return false;
	}
	r->off = (uint64_t)(p - (const unsigned char *)w->data);
	r->hash = npr_blob_hash(p, r->size);
	return true;
}

/**
 * npr_blob_wsrc_open() - map the weights file of a weightless blob
 * @ws: the section as the blob states it (@fsize, @fhash, @total,
 *      @count); @map and @path set here.
 * @path: the file: WEIGHTS_PATH, or the model's on a cache hit.
 *
 * The whole file must be the one the blob was made from: its size and
 * its hash, not only the bytes of the constants read from it (compile
 * folded others into the graph: a shape, a constant subgraph).
 *
 * Return: 0, or -errno with a message: -ENOENT (no path given, or no
 * such file), -ESTALE (another file, or it changed), what open() or
 * mmap() failed with.  npr_blob_wsrc_close() undoes it, on failure too.
 */
int npr_blob_wsrc_open(struct npr_wsrc *ws, const char *path)
{
	struct stat st;
	void *p;
	int fd, err;

	ws->map = NULL;
	ws->path = path;
	if (!path || !path[0])
		return npr_err(-ENOENT, "the blob is weightless (CACHE_MODE OPTIMIZE_SIZE): give the model's weights file in WEIGHTS_PATH");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return npr_err(-errno, "weightless blob: cannot open its weights file %s: %s",
			       path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return npr_err(-EINVAL, "weightless blob: weights file %s is not a regular file",
			       path);
	}
	if ((uint64_t)st.st_size != ws->fsize) {
		close(fd);
		return npr_err(-ESTALE, "weightless blob: weights file %s is %llu bytes, the blob was made from one of %llu: another file, or it changed",
			       path, (unsigned long long)st.st_size,
			       (unsigned long long)ws->fsize);
	}
	if (!ws->fsize) {
		close(fd);
		return npr_err(-ESTALE, "weightless blob: weights file %s is empty",
			       path);
	}
	p = mmap(NULL, ws->fsize, PROT_READ, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return npr_err(-err, "weightless blob: cannot map weights file %s: %s",
			       path, strerror(err));
	ws->map = p;
	if (npr_blob_hash(p, ws->fsize) != ws->fhash)
		return npr_err(-ESTALE, "weightless blob: weights file %s changed since the blob was made (its contents differ)",
			       path);
	return 0;
}

/**
 * npr_blob_wsrc_close() - unmap what npr_blob_wsrc_open() mapped
 * @ws: the section.
 */
void npr_blob_wsrc_close(struct npr_wsrc *ws)
{
	if (ws->map)
		munmap((void *)ws->map, ws->fsize);
	ws->map = NULL;
}

/**
 * npr_blob_wsrc_read() - one constant back from the weights file
 * @ws: the open section; its next @total bytes at @dst take the data.
 * @v: the value; its type and shape as the blob states them.
 * @r: the reference the blob states.
 * @i: the value's index, for messages.
 *
 * The reference is checked against the value (its size, a type it can be
 * converted from) and the file, the bytes against their hash; they are
 * copied (or converted to f32) to @ws->dst.
 *
 * Return: 0, or -errno with a message: -EINVAL (a malformed reference),
 * -ESTALE (the bytes differ: the file changed).
 */
int npr_blob_wsrc_read(struct npr_wsrc *ws, struct npr_value *v,
		       const struct npr_blob_wref *r, int i)
{
	int64_t numel = npr_shape_numel(&v->shape);
	const unsigned char *src;
	unsigned char *dst;
	size_t vb, room;

	if (numel < 0 || !npr_elem_size(r->type) ||
	    (r->type != v->type &&
	     !(v->type == NPR_ELEM_F32 && half(r->type))) ||
	    r->size != npr_tensor_bytes(r->type, numel))
		return npr_err(-EINVAL, "blob: weights reference of value %d does not fit its type and shape",
			       i);
	if (r->off > ws->fsize || r->size > ws->fsize - r->off)
		return npr_err(-EINVAL, "blob: weights reference of value %d lies past the file's %llu bytes",
			       i, (unsigned long long)ws->fsize);
	vb = npr_tensor_bytes(v->type, numel);
	room = (vb + NPR_BLOB_ALIGN - 1) & ~(size_t)(NPR_BLOB_ALIGN - 1);
	if (ws->count == ws->seen || room > ws->total - ws->used)
		return npr_err(-EINVAL, "blob: more weights references than its section counts");
	src = ws->map + r->off;
	if (npr_blob_hash(src, r->size) != r->hash)
		return npr_err(-ESTALE, "weightless blob: weights file %s changed: the %llu bytes at %llu (constant %s) are not those the blob was made from",
			       ws->path, (unsigned long long)r->size,
			       (unsigned long long)r->off,
			       v->name ? v->name : "without a name");
	dst = ws->dst + ws->used;
	if (r->type == v->type)
		memcpy(dst, src, r->size);
	else
		npr_convert(dst, v->type, src, r->type, numel);
	v->data = dst;
	v->nbytes = vb;
	ws->used += room;
	ws->seen++;
	return 0;
}
