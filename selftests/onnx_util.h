/* SPDX-License-Identifier: MIT */
/*
 * Helpers of onnx_models_test.c and onnx_ops_test.c: load a model from
 * memory, check the errno and message of a failure, compile with a
 * request, the head of a model built with the protobuf-c message code,
 * and the onnx fixture (one cpu device, one model buffer).
 */
#ifndef ONNX_UTIL_H
#define ONNX_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "onnx.pb-c.h"

static inline int load_mem(int fd, const void *buf, size_t len,
			   __u32 *handle)
{
	struct npr_model_load a;
	int err;

	npr_prep_model_load_mem(&a, buf, len, NULL, 0);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &a);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

/*
 * The last failure on this thread must be @err with @phrase in its message,
 * as NPR_IOCTL_GET_ERROR reports it.
 */
static inline void check_error(struct npr_test *_metadata, int fd, int ret,
			       int err, const char *phrase)
{
	struct npr_get_error ge;
	char msg[1024] = "";

	memset(&ge, 0, sizeof(ge));
	ge.size = sizeof(ge);
	ge.buf = (uintptr_t)msg;
	ge.len = sizeof(msg);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge), 0);
	TH_LOG("errno %d: %s", ret, msg);
	ASSERT_EQ(ret, err);
	ASSERT_EQ(ge.err, err);
	if (!strstr(msg, phrase)) {
		TH_LOG("the message lacks \"%s\"", phrase);
		ASSERT_TRUE(false);
	}
}

/* Compile @model with input 0 of shape @dims (rank @rank), create a request. */
/* compile() with INFERENCE_NUM_THREADS @threads unless 0 */
static inline int compile_t(int fd, __u32 model, const __s64 *dims,
			    int rank, __u32 *exec, __u32 *req, int threads)
{
	struct npr_shape_arg sa = { .index = 0, .rank = rank };
	struct npr_prop_arg props[1];
	struct npr_req_create rc;
	struct npr_compile co;
	int i, err;

	for (i = 0; i < rank; i++)
		sa.dims[i] = dims[i];
	npr_prep_compile(&co, model);
	co.shapes = (uintptr_t)&sa;
	co.num_shapes = 1;
	memset(props, 0, sizeof(props));
	if (threads) {
		props[0].param = NPR_PARAM_INFERENCE_NUM_THREADS;
		props[0].value = threads;
		co.props = (uintptr_t)props;
		co.num_props = 1;
	}
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		return err;
	*exec = co.exec;
	npr_prep_req_create(&rc, co.exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	*req = rc.req;
	return err;
}

static inline int compile(int fd, __u32 model, const __s64 *dims, int rank,
			  __u32 *exec, __u32 *req)
{
	return compile_t(fd, model, dims, rank, exec, req, 0);
}

/*
 * IR version 8, one opset of the default domain: the head of every model
 * built here; @osp[0] is the opset entry to fill.
 */
static inline void model_head(Onnx__ModelProto *m,
			      Onnx__OperatorSetIdProto **osp, int64_t opset)
{
	m->has_ir_version = 1;
	m->ir_version = 8;
	m->n_opset_import = 1;
	m->opset_import = osp;
	osp[0]->domain = "";
	osp[0]->has_version = 1;
	osp[0]->version = opset;
}

FIXTURE(onnx) {
	int fd;
	void *buf;
	size_t len;
	__u32 model;
};

FIXTURE_SETUP(onnx)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(onnx)
{
	free(self->buf);
	if (self->fd >= 0)
		npr_close(self->fd);
}

#define LOAD_FAILS(err, phrase)						\
	check_error(_metadata, self->fd,				\
		    load_mem(self->fd, self->buf, self->len, NULL),	\
		    err, phrase)

#endif /* ONNX_UTIL_H */
