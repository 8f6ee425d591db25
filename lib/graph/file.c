// SPDX-License-Identifier: MIT
/*
 * Model files, opened and mapped with their checks: a regular file, not
 * larger than the caller allows, every failure a message with the path.
 * The IR and ONNX readers map models and weights through them, and
 * MODEL_LOAD and the ring's load jobs open them the same way, so that all
 * say the same thing about the same file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

/**
 * npr_file_open() - open a model file for reading, checked
 * @path: the file.
 * @what: what it is, for messages ("model", "weights file").
 * @max: the largest size accepted.
 * @st: Out. Its stat.
 *
 * Return: the descriptor (the caller closes it), or -errno with a message
 * naming @what and @path: -ENOENT and the like from open(), -EINVAL for
 * something that is not a regular file, -EFBIG past @max.
 * Context: any thread.
 */
int npr_file_open(const char *path, const char *what, uint64_t max,
		  struct stat *st)
{
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return npr_err(err, "cannot open %s %s: %s", what, path,
			       strerror(-err));
	}
	if (fstat(fd, st)) {
		err = -errno;
		err = npr_err(err, "cannot stat %s %s: %s", what, path,
			      strerror(-err));
	} else if (!S_ISREG(st->st_mode)) {
		err = npr_err(-EINVAL, "%s %s is not a regular file", what,
			      path);
	} else if ((uint64_t)st->st_size > max) {
		err = npr_err(-EFBIG, "%s %s is larger than %llu MiB", what,
			      path, (unsigned long long)(max >> 20));
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/**
 * npr_file_map() - map a model file read-only into a weights store
 * @path: the file.
 * @what: what it is, for messages ("model", "weights file").
 * @max: the largest size accepted.
 * @out: set to a weights store holding one reference on success only; an empty
 *       file gives an empty store.  npr_weights_put() unmaps it.
 *
 * The mapping is MAP_PRIVATE: the file must not be truncated while the
 * store lives.
 *
 * Return: 0, the errors of npr_file_open(), -ENOMEM, or the -errno of
 * mmap() with a message naming @what and @path.
 * Context: any thread.
 */
int npr_file_map(const char *path, const char *what, uint64_t max,
		 struct npr_weights **out)
{
	struct npr_weights *b;
	struct stat st;
	int fd, err = 0;

	fd = npr_file_open(path, what, max, &st);
	if (fd < 0)
		return fd;
	b = calloc(1, sizeof(*b));
	if (!b)
		err = -ENOMEM;
	if (!err && st.st_size) {
		b->data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (b->data == MAP_FAILED) {
			err = -errno;
			free(b);
			err = npr_err(err, "cannot map %s %s: %s", what, path,
				      strerror(-err));
		} else {
			b->size = st.st_size;
		}
	}
	close(fd);
	if (err)
		return err;
	b->refs = 1;
	b->mapped = true;
	*out = b;
	return 0;
}

/**
 * npr_file_dir() - the directory part of a path, for a model's external
 * data files
 * @path: a file's path.
 *
 * "m.onnx" gives ".", "/m.onnx" gives "/", "a/b/m.onnx" gives "a/b".
 *
 * Return: a malloc'd string the caller frees, or NULL without memory.
 */
char *npr_file_dir(const char *path)
{
	char *dir = strdup(path), *slash;

	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	return dir;
}
