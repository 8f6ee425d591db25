// SPDX-License-Identifier: MIT
/*
 * Dynamic input shapes on the shared models: squeezenet1_1.onnx (a
 * torchvision export whose batch is dynamic) compiled without a shape
 * runs at batch 1 and 4 with outputs bit-identical to static compiles of
 * those shapes and within 1e-4 of the PyTorch goldens; with batch, height
 * and width dynamic it runs two image sizes, again equal to static
 * compiles; the tiny language model compiles without shapes.
 *
 * Models come from $NPR_SHARED/models; without them the tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "dynshape_util.h"
#include "files.h"

FIXTURE(dyn) {
	int fd;
	__u32 model;
	char dir[4096];
};

FIXTURE_SETUP(dyn)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	snprintf(self->dir, sizeof(self->dir), "%s/models",
		 npr_test_shared());
}

FIXTURE_TEARDOWN(dyn)
{
	npr_close(self->fd);
}

static int load(int fd, const char *path, __u32 *model)
{
	struct npr_model_load ml;
	int err;

	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	*model = ml.handle;
	return err;
}

/* Run @exec on @in of shape @dims; output 0 and its shape. */
static float *run(int fd, __u32 exec, const __s64 *dims, const float *in,
		  size_t bytes, struct npr_tensor_arg *t)
{
	__u32 req;
	float *out;

	if (dyn_request(fd, exec, &req) ||
	    dyn_set(fd, req, 0, 4, dims, in, bytes) || dyn_infer(fd, req))
		return NULL;
	out = dyn_get(fd, req, 0, t);
	{
		struct npr_handle_destroy d;

		npr_prep_destroy(&d, req);
		npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d);
	}
	return out;
}

/* the batch is dynamic: no shape at compile, batch 1 then 4 */
TEST_F(dyn, squeezenet_batch)
{
	char path[4200], gold[4200];
	const int batches[] = { 1, 4, 1 };
	struct npr_port_info pi;
	__u32 exec, st;
	int k;

	snprintf(path, sizeof(path), "%s/onnx/squeezenet1_1.onnx", self->dir);
	if (load(self->fd, path, &self->model))
		SKIP(return, "no %s", path);
	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, -1,
			      &exec), 0);
	npr_prep_port_info(&pi, exec, 0, 0, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.rank, 4);
	ASSERT_EQ(pi.dims[0], -1);
	ASSERT_EQ(pi.dims[1], 3);
	npr_prep_port_info(&pi, exec, 0, 1, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.rank, 2);
	ASSERT_EQ(pi.dims[0], -1);
	ASSERT_EQ(pi.dims[1], 1000);
	for (k = 0; k < 3; k++) {
		__s64 dims[4] = { batches[k], 3, 224, 224 };
		struct npr_tensor_arg t1, t2;
		float *in, *ref, *a, *b;
		size_t len = 0, rlen = 0, i;
		double m = 0, d = 0;

		snprintf(path, sizeof(path),
			 "%s/onnx/squeezenet1_1.input_b%d.f32", self->dir,
			 batches[k]);
		snprintf(gold, sizeof(gold),
			 "%s/onnx/squeezenet1_1.output_b%d.f32", self->dir,
			 batches[k]);
		in = npr_test_slurp(path, &len);
		ref = npr_test_slurp(gold, &rlen);
		ASSERT_TRUE(in && ref);
		ASSERT_EQ(len, (size_t)batches[k] * 3 * 224 * 224 * 4);
		a = run(self->fd, exec, dims, in, len, &t1);
		ASSERT_NE(a, NULL);
		ASSERT_EQ(t1.rank, 2);
		ASSERT_EQ(t1.dims[0], batches[k]);
		ASSERT_EQ(t1.dims[1], 1000);
		ASSERT_EQ(t1.bytes, rlen);
		/* a static compile of the same shape */
		ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 4, dims, NULL,
				      -1, &st), 0);
		b = run(self->fd, st, dims, in, len, &t2);
		ASSERT_NE(b, NULL);
		ASSERT_EQ(memcmp(a, b, rlen), 0);
		for (i = 0; i < rlen / 4; i++) {
			m = fmax(m, fabs(ref[i]));
			d = fmax(d, fabs(ref[i] - a[i]));
		}
		TH_LOG("batch %d: max |ours - golden| %.3g of %.3g",
		       batches[k], d, m);
		ASSERT_LE(d, 1e-4 * m);
		free(in);
		free(ref);
		free(a);
		free(b);
	}
	/* batch 1 again hits the cache */
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), 2);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS), 0);
}

/* batch, height and width dynamic: two dims fixed per request */
TEST_F(dyn, squeezenet_two_dims)
{
	const __s64 sig[4] = { -1, 3, -1, -1 };
	const int sizes[][2] = { { 1, 224 }, { 2, 160 } };
	char path[4200];
	__u32 exec, st;
	float *in;
	size_t len;
	int k;

	snprintf(path, sizeof(path), "%s/onnx/squeezenet1_1.onnx", self->dir);
	if (load(self->fd, path, &self->model))
		SKIP(return, "no %s", path);
	snprintf(path, sizeof(path), "%s/onnx/squeezenet1_1.input_b4.f32",
		 self->dir);
	in = npr_test_slurp(path, &len);
	ASSERT_NE(in, NULL);
	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 4, sig, NULL, -1,
			      &exec), 0);
	for (k = 0; k < 2; k++) {
		__s64 dims[4] = { sizes[k][0], 3, sizes[k][1], sizes[k][1] };
		size_t bytes = (size_t)dims[0] * 3 * dims[2] * dims[3] * 4;
		struct npr_tensor_arg t1, t2;
		float *a, *b;

		ASSERT_LE(bytes, len);
		a = run(self->fd, exec, dims, in, bytes, &t1);
		ASSERT_NE(a, NULL);
		ASSERT_EQ(t1.dims[0], dims[0]);
		ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 4, dims, NULL,
				      -1, &st), 0);
		b = run(self->fd, st, dims, in, bytes, &t2);
		ASSERT_NE(b, NULL);
		ASSERT_EQ(t1.bytes, t2.bytes);
		ASSERT_EQ(memcmp(a, b, t1.bytes), 0);
		free(a);
		free(b);
	}
	free(in);
}

/* the tiny language model: seq and past dynamic, compiled as it is */
TEST_F(dyn, tiny_gpt_compiles)
{
	struct npr_model_info mi;
	struct npr_port_info pi;
	char path[4200];
	__u32 exec;

	snprintf(path, sizeof(path), "%s/llm/tiny_gpt.onnx", self->dir);
	if (load(self->fd, path, &self->model))
		SKIP(return, "no %s", path);
	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, -1,
			      &exec), 0);
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = exec;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	ASSERT_GE(mi.num_inputs, 3);
	/* input_ids [batch, seq] */
	npr_prep_port_info(&pi, exec, 0, 0, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.rank, 2);
	ASSERT_EQ(pi.dims[1], -1);
}

TEST_HARNESS_MAIN
