/* SPDX-License-Identifier: MIT */
/*
 * Helpers of blob_test.c and blob_fuzz_test.c: a fixture with one device,
 * compile from the shared data, export, import, run.
 */
#ifndef BLOB_UTIL_H
#define BLOB_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob_io.h"
#include "harness.h"
#include "npuring.h"

FIXTURE(blob) {
	int fd;
	unsigned char *blob;
	size_t len;
	__u32 exec;
};

/*
 * The device: "cpu" unless the including program adds variants
 * (blob_test runs on cpu and npu).
 */
FIXTURE_VARIANT(blob) {
	const char *device;
};

FIXTURE_SETUP(blob)
{
	const char *dev = variant ? variant->device : "cpu";

	self->blob = NULL;
	self->fd = npr_open(dev, 0);
	if (self->fd < 0 && !strcmp(dev, "npu"))
		SKIP(return, "no npu device: %s (make check sets NPR_VNPU)",
		     npr_last_error());
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(blob)
{
	free(self->blob);
	if (self->fd >= 0)
		npr_close(self->fd);
}

/* @batch > 0: input 0 is [batch, 3, 224, 224] (ONNX models leave the
 * batch symbolic). */
static int compile_path_b(int fd, const char *rel, int batch, __u32 *exec)
{
	struct npr_shape_arg sh = {
		.index = 0, .rank = 4, .dims = { batch, 3, 224, 224 },
	};
	char path[4096];
	struct npr_model_load ml;
	struct npr_compile co;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), rel) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	npr_prep_compile(&co, ml.handle);
	if (batch > 0) {
		co.shapes = (uintptr_t)&sh;
		co.num_shapes = 1;
	}
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	*exec = co.exec;
	return err;
}

static inline int compile_path(int fd, const char *rel, __u32 *exec)
{
	return compile_path_b(fd, rel, 0, exec);
}

/*
 * Run @exec with every input filled from a fixed pattern; return the
 * concatenated outputs (malloc'd) in @out / @outlen.  @steps inferences.
 */
static int run(int fd, __u32 exec, int steps, unsigned char **out,
	       size_t *outlen)
{
	struct npr_model_info mi = { .size = sizeof(mi), .handle = exec };
	struct npr_req_create rc;
	struct npr_tensor_arg t;
	struct npr_infer inf;
	unsigned char *buf = NULL;
	size_t len = 0;
	__u32 i, s;
	int err;

	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		return err;
	npr_prep_req_create(&rc, exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		return err;
	for (i = 0; i < mi.num_inputs; i++) {
		void *p;
		size_t k;

		npr_prep_tensor(&t, rc.req, i, 0, NULL, 0);
		t.flags = NPR_TENSOR_MAP;
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);
		if (err)
			return err;
		p = (void *)(uintptr_t)t.data;
		for (k = 0; k < t.bytes; k++)	/* any bits, same both runs */
			((unsigned char *)p)[k] = (unsigned char)(k * 37 + i);
		if (t.elem_type == NPR_ELEM_F32)
			for (k = 0; k < t.bytes / 4; k++)
				((float *)p)[k] = (float)((k * 7 + i) % 23) /
						  11.0f - 1.0f;
	}
	for (s = 0; s < (__u32)steps; s++) {
		npr_prep_infer(&inf, rc.req);
		err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
		if (err)
			return err;
	}
	for (i = 0; i < mi.num_outputs; i++) {
		npr_prep_tensor(&t, rc.req, i, 1, NULL, 0);
		t.flags |= NPR_TENSOR_MAP;
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);
		if (err)
			return err;
		buf = realloc(buf, len + t.bytes);
		if (!buf)
			return -ENOMEM;
		memcpy(buf + len, (void *)(uintptr_t)t.data, t.bytes);
		len += t.bytes;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

#endif /* BLOB_UTIL_H */
