// SPDX-License-Identifier: MIT
/*
 * The ring's LOAD job: a model's files (IR or ONNX) read into memory, through the
 * worker's io_uring when it has one (IORING_OP_READ, READ_DEPTH chunks of
 * READ_CHUNK bytes in flight, a short read continued), else with pread(),
 * then parsed from memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <liburing.h>

#include "graph/file.h"
#include "graph/graph.h"
#include "ir/ir.h"
#include "model.h"
#include "object.h"
#include "onnx/onnx.h"
#include "load.h"

#define READ_CHUNK		(256u << 10)	/* bytes per IORING_OP_READ */
#define READ_DEPTH		8		/* reads in flight per file */
#define ONNX_LOAD_MAX		(2ull << 30)	/* as MODEL_LOAD's */

/*
 * Read @size bytes of @fd into @buf with IORING_OP_READs on the worker's
 * ring, READ_DEPTH chunks in flight; a short read is continued.  Returns
 * only when no read is in flight any more.
 */
static int uring_read(struct io_uring *ring, int fd, char *buf, size_t size,
		      const char *path)
{
	struct { size_t off; unsigned int len; } slot[READ_DEPTH];
	unsigned int inflight = 0, k;
	bool busy[READ_DEPTH] = { false };
	size_t next = 0;
	int err = 0;

	while ((!err && next < size) || inflight) {
		struct io_uring_cqe *c;
		unsigned int head, seen = 0;

		for (k = 0; !err && k < READ_DEPTH && next < size; k++) {
			struct io_uring_sqe *sqe;

			if (busy[k])
				continue;
			sqe = io_uring_get_sqe(ring);
			if (!sqe)
				break;
			slot[k].off = next;
			slot[k].len = size - next < READ_CHUNK ?
				      (unsigned int)(size - next) : READ_CHUNK;
			io_uring_prep_read(sqe, fd, buf + next, slot[k].len,
					   next);
			io_uring_sqe_set_data64(sqe, k);
			busy[k] = true;
			inflight++;
			next += slot[k].len;
		}
		if (!inflight) {
			/* cannot happen: the ring has room for every read */
			err = npr_err(-EBUSY, "no SQE to read %s", path);
			break;
		}
		io_uring_submit_and_wait(ring, 1);
		io_uring_for_each_cqe(ring, head, c) {
			uint64_t ud = c->user_data;
			int res = c->res;

			seen++;
			if (ud >= READ_DEPTH)
				continue;	/* a stale wake-up */
			k = ud;
			if (res <= 0 || (unsigned int)res > slot[k].len) {
				if (!err)
					err = npr_err(res < 0 ? res : -EIO,
						      "cannot read %s at %zu: %s",
						      path, slot[k].off,
						      res < 0 ? strerror(-res) :
						      "the file is shorter than its size");
				busy[k] = false;
				inflight--;
				continue;
			}
			if ((unsigned int)res == slot[k].len || err) {
				busy[k] = false;
				inflight--;
				continue;
			}
			/* short: the rest of the chunk again */
			slot[k].off += res;
			slot[k].len -= res;
			{
				struct io_uring_sqe *sqe =
					io_uring_get_sqe(ring);

				if (!sqe) {
					err = npr_err(-EBUSY, "no SQE to continue reading %s",
						      path);
					busy[k] = false;
					inflight--;
					continue;
				}
				io_uring_prep_read(sqe, fd, buf + slot[k].off,
						   slot[k].len, slot[k].off);
				io_uring_sqe_set_data64(sqe, k);
			}
		}
		io_uring_cq_advance(ring, seen);
	}
	return err;
}

/*
 * Read a whole file into a malloc()ed buffer: through the worker's ring
 * when it has one, else with pread().  -ENOENT and the like carry the path.
 */
static int read_file(struct io_uring *ring, const char *path, const char *what,
		     uint64_t max, void **data, size_t *size)
{
	struct stat st;
	char *buf = NULL;
	int fd, err = 0;

	fd = npr_file_open(path, what, max, &st);
	if (fd < 0)
		return fd;
	if (!(buf = malloc(st.st_size ? st.st_size : 1))) {
		err = npr_err(-ENOMEM, "no memory for the %lld bytes of %s",
			      (long long)st.st_size, path);
	} else if (ring) {
		err = uring_read(ring, fd, buf, st.st_size, path);
	} else {
		size_t done = 0;

		while (!err && done < (size_t)st.st_size) {
			ssize_t n = pread(fd, buf + done, st.st_size - done,
					  done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				err = npr_err(n < 0 ? -errno : -EIO,
					      "cannot read %s at %zu", path,
					      done);
			else
				done += n;
		}
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*data = buf;
	*size = st.st_size;
	return 0;
}

/*
 * An .onnx file read into memory like the IR, then parsed as MODEL_LOAD
 * parses the file it maps: external data is found next to it (and read
 * by the parser, as MODEL_LOAD does).
 */
static int load_onnx(struct io_uring *ring, const char *path,
		     struct npr_graph **g)
{
	char *dir;
	size_t len = 0;
	void *buf = NULL;
	int err;

	err = read_file(ring, path, "model", ONNX_LOAD_MAX, &buf, &len);
	if (err)
		return err;
	if (!len) {
		free(buf);
		return npr_err(-EINVAL, "model %s is empty", path);
	}
	dir = npr_file_dir(path);
	if (!dir) {
		free(buf);
		return -ENOMEM;
	}
	err = npr_onnx_parse(buf, len, dir, g);
	free(dir);
	free(buf);
	return err;
}

/**
 * npr_ring_load() - the LOAD job: a model file read and added as a model
 * @dev: the device.
 * @ring: the worker's io_uring for the reads, NULL to read with pread().
 *        Nothing else may be in flight on it; a CQE that is not one of
 *        the reads (a wake-up) is consumed and ignored.
 * @path: the model's path.
 * @h: Out. The new model handle.
 *
 * The .xml and its .bin, or the .onnx, are read into memory
 * asynchronously (on @ring, or with pread()), then parsed as MODEL_LOAD
 * with NPR_MODEL_LOAD_MEMORY would.  On a device with a CACHE_DIR it is
 * MODEL_LOAD with NPR_MODEL_LOAD_DEFER instead: the files are stat'ed,
 * and read (synchronously) only when a COMPILE misses the cache.
 *
 * Return: 0 or -errno with a message naming the file.
 */
int npr_ring_load(struct npr_device *dev, struct io_uring *ring,
		  const char *path, uint32_t *h)
{
	size_t n = strlen(path), xlen = 0, wlen = 0;
	struct npr_graph *g = NULL;
	struct npr_weights *blob = NULL;
	void *xml = NULL, *wts = NULL;
	bool cached;
	char *bin;
	int err;

	/* with a CACHE_DIR on the device the files are read only if the
	 * cache misses: MODEL_LOAD with NPR_MODEL_LOAD_DEFER */
	pthread_mutex_lock(&dev->lock);
	cached = dev->props.cache_dir[0] != 0;
	pthread_mutex_unlock(&dev->lock);
	if (cached)
		return npr_model_load_deferred(dev, path, NULL, h);
	if (n > 5 && !strcmp(path + n - 5, ".onnx")) {
		err = load_onnx(ring, path, &g);
		return err ? err : npr_model_add(dev, g, h);
	}
	err = read_file(ring, path, "model", NPR_IR_MAX_XML, &xml, &xlen);
	if (err)
		return err;
	bin = malloc(n + 5);
	if (!bin) {
		free(xml);
		return -ENOMEM;
	}
	memcpy(bin, path, n + 1);
	if (n > 4 && !strcasecmp(bin + n - 4, ".xml"))
		bin[n - 4] = 0;
	strcat(bin, ".bin");
	err = read_file(ring, bin, "weights file", UINT64_MAX, &wts, &wlen);
	if (err == -ENOENT) {
		err = 0;	/* fine unless a Const needs data */
	} else if (!err) {
		blob = calloc(1, sizeof(*blob));
		if (!blob) {
			free(wts);
			err = -ENOMEM;
		} else {
			blob->data = wts;	/* freed with the blob */
			blob->size = wlen;
			blob->refs = 1;
		}
	}
	if (!err)
		err = npr_ir_parse(xml, xlen, blob, &g);
	npr_weights_put(blob);
	free(xml);
	free(bin);
	if (err)
		return err;
	return npr_model_add(dev, g, h);
}
