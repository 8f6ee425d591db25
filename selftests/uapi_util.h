/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the ABI tests (uapi_abi_test.c, uapi_validation_test.c,
 * uapi_objects_test.c): the relu model, built in memory (Parameter
 * f32[1,4] -> ReLU -> Result), a device with one object of each type on
 * it, and npr_ioctl() wrappers that check every failure leaves its errno
 * and a message for the thread.  Include it first: the programs define
 * _GNU_SOURCE before it.
 */
#ifndef UAPI_UTIL_H
#define UAPI_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <npuring.h>

#include "harness.h"

#define ERRNO_POISON	12345

static const char relu_xml[] =
	"<?xml version=\"1.0\"?>\n"
	"<net name=\"relu\" version=\"11\">\n"
	"\t<layers>\n"
	"\t\t<layer id=\"0\" name=\"input_layer\" type=\"Parameter\" version=\"opset1\">\n"
	"\t\t\t<data shape=\"1,4\" element_type=\"f32\"/>\n"
	"\t\t\t<output>\n"
	"\t\t\t\t<port id=\"0\" precision=\"FP32\" names=\"input_tensor\">\n"
	"\t\t\t\t\t<dim>1</dim>\n"
	"\t\t\t\t\t<dim>4</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</output>\n"
	"\t\t</layer>\n"
	"\t\t<layer id=\"1\" name=\"relu\" type=\"ReLU\" version=\"opset1\">\n"
	"\t\t\t<input>\n"
	"\t\t\t\t<port id=\"0\" precision=\"FP32\">\n"
	"\t\t\t\t\t<dim>1</dim>\n"
	"\t\t\t\t\t<dim>4</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</input>\n"
	"\t\t\t<output>\n"
	"\t\t\t\t<port id=\"1\" precision=\"FP32\" names=\"relu_out\">\n"
	"\t\t\t\t\t<dim>1</dim>\n"
	"\t\t\t\t\t<dim>4</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</output>\n"
	"\t\t</layer>\n"
	"\t\t<layer id=\"2\" name=\"relu_out/sink_port_0\" type=\"Result\" version=\"opset1\">\n"
	"\t\t\t<input>\n"
	"\t\t\t\t<port id=\"0\" precision=\"FP32\">\n"
	"\t\t\t\t\t<dim>1</dim>\n"
	"\t\t\t\t\t<dim>4</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</input>\n"
	"\t\t</layer>\n"
	"\t</layers>\n"
	"\t<edges>\n"
	"\t\t<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"
	"\t\t<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>\n"
	"\t</edges>\n"
	"</net>\n";

/* an input with every sign case, and what ReLU makes of it */
static const float relu_in[4] = { -1.5f, 0.0f, 2.25f, 7.0f };
static const float relu_want[4] = { 0.0f, 0.0f, 2.25f, 7.0f };

/* A device with one object of each type on it. */
struct objs {
	int fd;
	__u32 model, exec, req;
	float in[4], out[4];
	char name[64];
	char msg[1024];
};

/* The fd used to read GET_ERROR after failures; -1 if none is open. */
static int err_fd = -1;

/*
 * npr_ioctl(), and every failure (GET_ERROR's own excepted: it never
 * replaces the message) must leave its errno and a message for the
 * thread.  errno itself has tests of its own (leaves_errno_alone).
 */
static inline int xioctl(struct npr_test *_metadata, int fd, unsigned long cmd,
			 void *arg)
{
	struct npr_get_error ge;
	char msg[1024];
	int ret;

	ret = npr_ioctl(fd, cmd, arg);
	if (ret >= 0 || cmd == NPR_IOCTL_GET_ERROR)
		return ret;
	EXPECT_STRNE(npr_last_error(), "");
	if (err_fd < 0)
		return ret;
	memset(&ge, 0, sizeof(ge));
	ge.size = sizeof(ge);
	ge.buf = (uintptr_t)msg;
	ge.len = sizeof(msg);
	EXPECT_EQ(npr_ioctl(err_fd, NPR_IOCTL_GET_ERROR, &ge), 0);
	EXPECT_EQ(ge.err, ret);
	EXPECT_STREQ(msg, npr_last_error());
	return ret;
}

/* npr_ioctl() with errno poisoned; *err_after gets errno afterwards. */
static inline int poisoned_ioctl(int fd, unsigned long cmd, void *arg,
				 int *err_after)
{
	int ret;

	errno = ERRNO_POISON;
	ret = npr_ioctl(fd, cmd, arg);
	*err_after = errno;
	return ret;
}

#define IOC(fd, cmd, arg)	xioctl(_metadata, fd, cmd, arg)

static inline void load_relu(struct npr_test *_metadata, int fd, __u32 *model)
{
	struct npr_model_load ml;

	npr_prep_model_load_mem(&ml, relu_xml, strlen(relu_xml), NULL, 0);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	ASSERT_NE(ml.handle, 0);
	*model = ml.handle;
}

static inline void compile_model(struct npr_test *_metadata, int fd,
				 __u32 model, __u32 *exec)
{
	struct npr_compile co;

	npr_prep_compile(&co, model);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_COMPILE, &co), 0);
	ASSERT_NE(co.exec, 0);
	*exec = co.exec;
}

static inline void create_req(struct npr_test *_metadata, int fd, __u32 exec,
			      __u32 *req)
{
	struct npr_req_create rc;

	npr_prep_req_create(&rc, exec);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	ASSERT_NE(rc.req, 0);
	*req = rc.req;
}

static inline void destroy(struct npr_test *_metadata, int fd, __u32 h)
{
	struct npr_handle_destroy hd;

	npr_prep_destroy(&hd, h);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_HANDLE_DESTROY, &hd), 0);
}

static inline void objs_open(struct npr_test *_metadata, struct objs *o)
{
	o->fd = npr_open("cpu", 0);
	ASSERT_GE(o->fd, 0);
	err_fd = o->fd;
	load_relu(_metadata, o->fd, &o->model);
	compile_model(_metadata, o->fd, o->model, &o->exec);
	create_req(_metadata, o->fd, o->exec, &o->req);
	memcpy(o->in, relu_in, sizeof(o->in));
}

static inline void objs_close(struct npr_test *_metadata, struct objs *o)
{
	if (o->fd >= 0)
		EXPECT_EQ(npr_close(o->fd), 0);
	o->fd = -1;
	err_fd = -1;
}

static inline void tensor_arg(struct npr_tensor_arg *a, __u32 req, int output,
			      float *data)
{
	npr_prep_tensor(a, req, 0, output, data, 4 * sizeof(float));
	a->elem_type = NPR_ELEM_F32;
	a->rank = 2;
	a->dims[0] = 1;
	a->dims[1] = 4;
}

static inline void set_input(struct npr_test *_metadata, int fd, __u32 req,
			     const float *in)
{
	struct npr_tensor_arg ta;

	tensor_arg(&ta, req, 0, (float *)in);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
}

static inline void infer(struct npr_test *_metadata, int fd, __u32 req)
{
	struct npr_infer in;

	npr_prep_infer(&in, req);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_INFER, &in), 0);
}

static inline void get_output(struct npr_test *_metadata, int fd, __u32 req,
			      float *out)
{
	struct npr_tensor_arg ta;

	npr_prep_tensor(&ta, req, 0, 1, out, 4 * sizeof(float));
	ASSERT_EQ(IOC(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, 16);
}

/* A handle of @type that names nothing: a slot far past any in use. */
static inline __u32 unknown_handle(int type)
{
	return ((__u32)type << 28) | (0x5a5u << 16) | 0xfedcu;
}

#endif /* UAPI_UTIL_H */
