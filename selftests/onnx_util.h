/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the ONNX tests (onnx_models_test.c, onnx_ops_test.c,
 * qlinear_test.c, lmfuse_test.c, conformance_test.c ...): load a model
 * from memory, check the errno and message of a failure, compile with a
 * request, a compiled model through a blob and back, the head of a model
 * built with the protobuf-c message code, a graph of input x and output y
 * packed, a model packed with more initializers, and the onnx fixture
 * (one cpu device, one model buffer).
 */
#ifndef ONNX_UTIL_H
#define ONNX_UTIL_H

#include <errno.h>
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

/**
 * reimport() - export a compiled model to a blob and import it again
 * @fd: the device
 * @exec: the compiled model; the imported one on success
 *
 * Return: 0, or the -errno of EXPORT or IMPORT (-EPROTO when EXPORT
 * does not ask for a buffer first).
 */
static inline int reimport(int fd, __u32 *exec)
{
	struct npr_export ex = { .size = sizeof(ex), .exec = *exec };
	struct npr_import im = { .size = sizeof(im) };
	void *blob;
	int err = npr_ioctl(fd, NPR_IOCTL_EXPORT, &ex);

	if (err != -EMSGSIZE)
		return err ? err : -EPROTO;
	blob = malloc(ex.bytes);
	if (!blob)
		return -ENOMEM;
	ex.data = (uintptr_t)blob;
	err = npr_ioctl(fd, NPR_IOCTL_EXPORT, &ex);
	if (!err) {
		im.data = (uintptr_t)blob;
		im.bytes = ex.bytes;
		err = npr_ioctl(fd, NPR_IOCTL_IMPORT, &im);
	}
	free(blob);
	if (!err)
		*exec = im.exec;
	return err;
}

/**
 * pack_xy() - pack a graph as a model of input x and output y
 * @g: the graph (nodes, initializers, name); its inputs and outputs are
 *     x and y while it is packed, as they were when this returns
 * @opset: the version of the default domain's opset
 * @xd: the dims of x, an f32 graph input
 * @xrank: how many
 * @len: the length of the bytes
 *
 * Return: the model's bytes (malloc'd), or NULL.
 */
static inline void *pack_xy(Onnx__GraphProto *g, int64_t opset,
			    const int64_t *xd, int xrank, size_t *len)
{
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__ValueInfoProto vi[2] = { ONNX__VALUE_INFO_PROTO__INIT,
				       ONNX__VALUE_INFO_PROTO__INIT };
	Onnx__ValueInfoProto *vin[1] = { &vi[0] }, *vout[1] = { &vi[1] };
	Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension d[NPR_MAX_RANK];
	Onnx__TensorShapeProto__Dimension *dp[NPR_MAX_RANK];
	Onnx__GraphProto old;
	void *buf;
	int i;

	model_head(&mp, osp, opset);
	mp.graph = g;
	for (i = 0; i < xrank && i < NPR_MAX_RANK; i++) {
		onnx__tensor_shape_proto__dimension__init(&d[i]);
		d[i].value_case =
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		d[i].dim_value = xd[i];
		dp[i] = &d[i];
	}
	sh.n_dim = i;
	sh.dim = dp;
	tt.has_elem_type = 1;
	tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt.shape = &sh;
	tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp.tensor_type = &tt;
	vi[0].name = "x";
	vi[0].type = &tp;
	vi[1].name = "y";
	old = *g;
	g->n_input = 1;
	g->input = vin;
	g->n_output = 1;
	g->output = vout;
	*len = onnx__model_proto__get_packed_size(&mp);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&mp, buf);
	*g = old;
	return buf;
}

/**
 * pack_with_inits() - pack a model with more initializers
 * @m: the model; its graph is as it was when this returns
 * @extra: tensors to add after the graph's initializers
 * @n: how many
 * @len: the length of the bytes
 *
 * Return: the model's bytes (malloc'd), or NULL.
 */
static inline void *pack_with_inits(Onnx__ModelProto *m,
				    Onnx__TensorProto **extra, size_t n,
				    size_t *len)
{
	Onnx__GraphProto *g = m->graph;
	Onnx__TensorProto **init, **old = g->initializer;
	size_t nold = g->n_initializer;
	void *out;

	init = calloc(nold + n + 1, sizeof(*init));
	if (!init)
		return NULL;
	if (nold)
		memcpy(init, old, nold * sizeof(*init));
	if (n)
		memcpy(init + nold, extra, n * sizeof(*init));
	g->initializer = init;
	g->n_initializer = nold + n;
	*len = onnx__model_proto__get_packed_size(m);
	out = malloc(*len);
	if (out)
		onnx__model_proto__pack(m, out);
	g->initializer = old;
	g->n_initializer = nold;
	free(init);
	return out;
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
