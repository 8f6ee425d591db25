// SPDX-License-Identifier: MIT
/*
 * The ABI, through the public API only: struct layouts, and for every
 * command each validation rule of the uapi header with every other field
 * valid; handles (stale, foreign, wrong type), per-thread error messages,
 * tensor copy/bind/map semantics, and cleanup on close.
 *
 * The model is built in memory: Parameter f32[1,4] -> ReLU -> Result.
 */
#define _GNU_SOURCE
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

/* A model whose op has integer attributes: MaxPool 2x2, stride 2. */
static const char maxpool_xml[] =
	"<?xml version=\"1.0\"?>\n"
	"<net name=\"pool\" version=\"11\">\n"
	"\t<layers>\n"
	"\t\t<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">\n"
	"\t\t\t<data shape=\"1,1,4,4\" element_type=\"f32\"/>\n"
	"\t\t\t<output>\n"
	"\t\t\t\t<port id=\"0\" precision=\"FP32\" names=\"x\">\n"
	"\t\t\t\t\t<dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</output>\n"
	"\t\t</layer>\n"
	"\t\t<layer id=\"1\" name=\"pool\" type=\"MaxPool\" version=\"opset1\">\n"
	"\t\t\t<data strides=\"2,2\" kernel=\"2,2\" pads_begin=\"0,0\""
	" pads_end=\"0,0\" rounding_type=\"floor\" auto_pad=\"explicit\"/>\n"
	"\t\t\t<input>\n"
	"\t\t\t\t<port id=\"0\">\n"
	"\t\t\t\t\t<dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</input>\n"
	"\t\t\t<output>\n"
	"\t\t\t\t<port id=\"1\" precision=\"FP32\" names=\"y\">\n"
	"\t\t\t\t\t<dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim>\n"
	"\t\t\t\t</port>\n"
	"\t\t\t</output>\n"
	"\t\t</layer>\n"
	"\t\t<layer id=\"2\" name=\"y/sink_port_0\" type=\"Result\" version=\"opset1\">\n"
	"\t\t\t<input>\n"
	"\t\t\t\t<port id=\"0\">\n"
	"\t\t\t\t\t<dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim>\n"
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
static int xioctl(struct npr_test *_metadata, int fd, unsigned long cmd,
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
static int poisoned_ioctl(int fd, unsigned long cmd, void *arg,
			  int *err_after)
{
	int ret;

	errno = ERRNO_POISON;
	ret = npr_ioctl(fd, cmd, arg);
	*err_after = errno;
	return ret;
}

#define IOC(fd, cmd, arg)	xioctl(_metadata, fd, cmd, arg)

static void load_relu(struct npr_test *_metadata, int fd, __u32 *model)
{
	struct npr_model_load ml;

	npr_prep_model_load_mem(&ml, relu_xml, strlen(relu_xml), NULL, 0);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	ASSERT_NE(ml.handle, 0);
	*model = ml.handle;
}

static void compile_model(struct npr_test *_metadata, int fd, __u32 model,
			  __u32 *exec)
{
	struct npr_compile co;

	npr_prep_compile(&co, model);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_COMPILE, &co), 0);
	ASSERT_NE(co.exec, 0);
	*exec = co.exec;
}

static void create_req(struct npr_test *_metadata, int fd, __u32 exec,
		       __u32 *req)
{
	struct npr_req_create rc;

	npr_prep_req_create(&rc, exec);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	ASSERT_NE(rc.req, 0);
	*req = rc.req;
}

static void destroy(struct npr_test *_metadata, int fd, __u32 h)
{
	struct npr_handle_destroy hd;

	npr_prep_destroy(&hd, h);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_HANDLE_DESTROY, &hd), 0);
}

static void objs_open(struct npr_test *_metadata, struct objs *o)
{
	o->fd = npr_open("cpu", 0);
	ASSERT_GE(o->fd, 0);
	err_fd = o->fd;
	load_relu(_metadata, o->fd, &o->model);
	compile_model(_metadata, o->fd, o->model, &o->exec);
	create_req(_metadata, o->fd, o->exec, &o->req);
	memcpy(o->in, relu_in, sizeof(o->in));
}

static void objs_close(struct npr_test *_metadata, struct objs *o)
{
	if (o->fd >= 0)
		EXPECT_EQ(npr_close(o->fd), 0);
	o->fd = -1;
	err_fd = -1;
}

static void tensor_arg(struct npr_tensor_arg *a, __u32 req, int output,
		       float *data)
{
	npr_prep_tensor(a, req, 0, output, data, 4 * sizeof(float));
	a->elem_type = NPR_ELEM_F32;
	a->rank = 2;
	a->dims[0] = 1;
	a->dims[1] = 4;
}

static void set_input(struct npr_test *_metadata, int fd, __u32 req,
		      const float *in)
{
	struct npr_tensor_arg ta;

	tensor_arg(&ta, req, 0, (float *)in);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
}

static void infer(struct npr_test *_metadata, int fd, __u32 req)
{
	struct npr_infer in;

	npr_prep_infer(&in, req);
	ASSERT_EQ(IOC(fd, NPR_IOCTL_INFER, &in), 0);
}

static void get_output(struct npr_test *_metadata, int fd, __u32 req,
		       float *out)
{
	struct npr_tensor_arg ta;

	npr_prep_tensor(&ta, req, 0, 1, out, 4 * sizeof(float));
	ASSERT_EQ(IOC(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, 16);
}

/* A handle of @type that names nothing: a slot far past any in use. */
static __u32 unknown_handle(int type)
{
	return ((__u32)type << 28) | (0x5a5u << 16) | 0xfedcu;
}

/* ---- the ABI, checked at run time -------------------------------------- */

#define CHECK_OFF(type, field, off)					\
	EXPECT_EQ(offsetof(struct type, field), (size_t)(off))

TEST(abi_struct_sizes)
{
	EXPECT_EQ(sizeof(struct npr_device_info), 224);
	EXPECT_EQ(sizeof(struct npr_param), 40);
	EXPECT_EQ(sizeof(struct npr_model_load), 48);
	EXPECT_EQ(sizeof(struct npr_model_info), 32);
	EXPECT_EQ(sizeof(struct npr_port_info), 104);
	EXPECT_EQ(sizeof(struct npr_shape_arg), 72);
	EXPECT_EQ(sizeof(struct npr_prop_arg), 16);
	EXPECT_EQ(sizeof(struct npr_compile), 40);
	EXPECT_EQ(sizeof(struct npr_req_create), 16);
	EXPECT_EQ(sizeof(struct npr_tensor_arg), 104);
	EXPECT_EQ(sizeof(struct npr_infer), 32);
	EXPECT_EQ(sizeof(struct npr_handle_destroy), 16);
	EXPECT_EQ(sizeof(struct npr_get_error), 32);
	EXPECT_EQ(sizeof(struct npr_prop_info), 96);
	EXPECT_EQ(sizeof(struct npr_state_arg), 120);
	EXPECT_EQ(sizeof(struct npr_export), 32);
	EXPECT_EQ(sizeof(struct npr_import), 32);
	EXPECT_EQ(sizeof(struct npr_profile), 24);
	EXPECT_EQ(sizeof(struct npr_profile_rec), 144);
	EXPECT_EQ(sizeof(struct npr_query_model), 32);
	EXPECT_EQ(sizeof(struct npr_bo_create), 24);
	EXPECT_EQ(sizeof(struct npr_bo_info), 40);
	EXPECT_EQ(sizeof(struct npr_bo_bind), 168);
	EXPECT_EQ(sizeof(struct npr_make_stateful), 40);
	EXPECT_EQ(sizeof(struct npr_state_pair), 16);
	EXPECT_EQ(sizeof(struct npr_sqe), 64);
	EXPECT_EQ(sizeof(struct npr_cqe), 48);
	EXPECT_EQ(sizeof(struct npr_ring_setup), 40);
	EXPECT_EQ(sizeof(struct npr_submit), 24);
	EXPECT_EQ(sizeof(struct npr_reap), 40);
}

TEST(abi_every_struct_starts_with_size_and_flags)
{
#define HDR(type) do {							\
		CHECK_OFF(type, size, 0);				\
		CHECK_OFF(type, flags, 4);				\
		EXPECT_EQ(sizeof(((struct type *)0)->size), 4);		\
		EXPECT_EQ(sizeof(((struct type *)0)->flags), 4);	\
	} while (0)
	HDR(npr_device_info);
	HDR(npr_param);
	HDR(npr_model_load);
	HDR(npr_model_info);
	HDR(npr_port_info);
	HDR(npr_compile);
	HDR(npr_req_create);
	HDR(npr_tensor_arg);
	HDR(npr_infer);
	HDR(npr_handle_destroy);
	HDR(npr_get_error);
	HDR(npr_prop_info);
	HDR(npr_state_arg);
	HDR(npr_export);
	HDR(npr_import);
	HDR(npr_profile);
	HDR(npr_query_model);
	HDR(npr_bo_create);
	HDR(npr_bo_info);
	HDR(npr_bo_bind);
	HDR(npr_make_stateful);
#undef HDR
}

TEST(abi_field_offsets)
{
	CHECK_OFF(npr_device_info, api_version, 8);
	CHECK_OFF(npr_device_info, device_type, 12);
	CHECK_OFF(npr_device_info, caps, 16);
	CHECK_OFF(npr_device_info, num_threads, 24);
	CHECK_OFF(npr_device_info, reserved, 28);
	CHECK_OFF(npr_device_info, name, 32);
	CHECK_OFF(npr_device_info, full_name, 64);
	CHECK_OFF(npr_device_info, arch, 192);

	CHECK_OFF(npr_prop_info, index, 12);
	CHECK_OFF(npr_prop_info, id, 16);
	CHECK_OFF(npr_prop_info, type, 20);
	CHECK_OFF(npr_prop_info, access, 24);
	CHECK_OFF(npr_prop_info, name, 32);
	CHECK_OFF(npr_state_arg, req, 8);
	CHECK_OFF(npr_state_arg, count, 16);
	CHECK_OFF(npr_state_arg, name_len, 28);
	CHECK_OFF(npr_state_arg, dims, 32);
	CHECK_OFF(npr_state_arg, name, 96);
	CHECK_OFF(npr_state_arg, data, 104);
	CHECK_OFF(npr_state_arg, bytes, 112);
	CHECK_OFF(npr_export, exec, 8);
	CHECK_OFF(npr_export, reserved, 12);
	CHECK_OFF(npr_export, data, 16);
	CHECK_OFF(npr_export, bytes, 24);
	CHECK_OFF(npr_import, data, 8);
	CHECK_OFF(npr_import, bytes, 16);
	CHECK_OFF(npr_import, exec, 24);
	CHECK_OFF(npr_import, reserved, 28);

	CHECK_OFF(npr_param, handle, 8);
	CHECK_OFF(npr_param, param, 12);
	CHECK_OFF(npr_param, value, 16);
	CHECK_OFF(npr_param, ptr, 24);
	CHECK_OFF(npr_param, len, 32);
	CHECK_OFF(npr_param, type, 36);

	CHECK_OFF(npr_model_load, xml, 8);
	CHECK_OFF(npr_model_load, xml_size, 16);
	CHECK_OFF(npr_model_load, bin, 24);
	CHECK_OFF(npr_model_load, bin_size, 32);
	CHECK_OFF(npr_model_load, handle, 40);
	CHECK_OFF(npr_model_load, reserved, 44);

	CHECK_OFF(npr_model_info, handle, 8);
	CHECK_OFF(npr_model_info, num_inputs, 12);
	CHECK_OFF(npr_model_info, num_outputs, 16);
	CHECK_OFF(npr_model_info, num_nodes, 20);
	CHECK_OFF(npr_model_info, ir_version, 24);
	CHECK_OFF(npr_model_info, reserved, 28);

	CHECK_OFF(npr_port_info, handle, 8);
	CHECK_OFF(npr_port_info, index, 12);
	CHECK_OFF(npr_port_info, elem_type, 16);
	CHECK_OFF(npr_port_info, rank, 20);
	CHECK_OFF(npr_port_info, dims, 24);
	CHECK_OFF(npr_port_info, name, 88);
	CHECK_OFF(npr_port_info, name_len, 96);
	CHECK_OFF(npr_port_info, reserved, 100);

	CHECK_OFF(npr_shape_arg, index, 0);
	CHECK_OFF(npr_shape_arg, rank, 4);
	CHECK_OFF(npr_shape_arg, dims, 8);

	CHECK_OFF(npr_prop_arg, param, 0);
	CHECK_OFF(npr_prop_arg, reserved, 4);
	CHECK_OFF(npr_prop_arg, value, 8);

	CHECK_OFF(npr_compile, model, 8);
	CHECK_OFF(npr_compile, exec, 12);
	CHECK_OFF(npr_compile, shapes, 16);
	CHECK_OFF(npr_compile, props, 24);
	CHECK_OFF(npr_compile, num_shapes, 32);
	CHECK_OFF(npr_compile, num_props, 36);

	CHECK_OFF(npr_req_create, exec, 8);
	CHECK_OFF(npr_req_create, req, 12);

	CHECK_OFF(npr_tensor_arg, req, 8);
	CHECK_OFF(npr_tensor_arg, index, 12);
	CHECK_OFF(npr_tensor_arg, elem_type, 16);
	CHECK_OFF(npr_tensor_arg, rank, 20);
	CHECK_OFF(npr_tensor_arg, dims, 24);
	CHECK_OFF(npr_tensor_arg, data, 88);
	CHECK_OFF(npr_tensor_arg, bytes, 96);

	CHECK_OFF(npr_infer, req, 8);
	CHECK_OFF(npr_infer, reserved, 12);
	CHECK_OFF(npr_infer, started_ns, 16);
	CHECK_OFF(npr_infer, finished_ns, 24);

	CHECK_OFF(npr_handle_destroy, handle, 8);
	CHECK_OFF(npr_handle_destroy, reserved, 12);

	CHECK_OFF(npr_get_error, buf, 8);
	CHECK_OFF(npr_get_error, len, 16);
	CHECK_OFF(npr_get_error, err, 20);
	CHECK_OFF(npr_get_error, user_data, 24);

	CHECK_OFF(npr_make_stateful, model, 8);
	CHECK_OFF(npr_make_stateful, count, 12);
	CHECK_OFF(npr_make_stateful, pairs, 16);
	CHECK_OFF(npr_make_stateful, shapes, 24);
	CHECK_OFF(npr_make_stateful, num_shapes, 32);
	CHECK_OFF(npr_make_stateful, reserved, 36);
}

TEST(abi_ioctl_numbers)
{
	static const struct {
		unsigned long cmd;
		unsigned int nr;
		size_t size;
	} t[] = {
		{ NPR_IOCTL_DEVICE_INFO, 0x00, sizeof(struct npr_device_info) },
		{ NPR_IOCTL_GET_PARAM, 0x01, sizeof(struct npr_param) },
		{ NPR_IOCTL_SET_PARAM, 0x02, sizeof(struct npr_param) },
		{ NPR_IOCTL_MODEL_LOAD, 0x03, sizeof(struct npr_model_load) },
		{ NPR_IOCTL_MODEL_INFO, 0x04, sizeof(struct npr_model_info) },
		{ NPR_IOCTL_PORT_INFO, 0x05, sizeof(struct npr_port_info) },
		{ NPR_IOCTL_COMPILE, 0x06, sizeof(struct npr_compile) },
		{ NPR_IOCTL_REQ_CREATE, 0x07, sizeof(struct npr_req_create) },
		{ NPR_IOCTL_SET_TENSOR, 0x08, sizeof(struct npr_tensor_arg) },
		{ NPR_IOCTL_GET_TENSOR, 0x09, sizeof(struct npr_tensor_arg) },
		{ NPR_IOCTL_INFER, 0x0a, sizeof(struct npr_infer) },
		{ NPR_IOCTL_HANDLE_DESTROY, 0x0b,
		  sizeof(struct npr_handle_destroy) },
		{ NPR_IOCTL_GET_ERROR, 0x0c, sizeof(struct npr_get_error) },
		{ NPR_IOCTL_PROP_INFO, 0x10, sizeof(struct npr_prop_info) },
		{ NPR_IOCTL_STATE_INFO, 0x11, sizeof(struct npr_state_arg) },
		{ NPR_IOCTL_STATE_GET, 0x12, sizeof(struct npr_state_arg) },
		{ NPR_IOCTL_STATE_SET, 0x13, sizeof(struct npr_state_arg) },
		{ NPR_IOCTL_STATE_RESET, 0x14, sizeof(struct npr_state_arg) },
		{ NPR_IOCTL_EXPORT, 0x15, sizeof(struct npr_export) },
		{ NPR_IOCTL_IMPORT, 0x16, sizeof(struct npr_import) },
		{ NPR_IOCTL_PROFILE, 0x17, sizeof(struct npr_profile) },
		{ NPR_IOCTL_QUERY_MODEL, 0x18,
		  sizeof(struct npr_query_model) },
		{ NPR_IOCTL_BO_CREATE, 0x19, sizeof(struct npr_bo_create) },
		{ NPR_IOCTL_BO_INFO, 0x1a, sizeof(struct npr_bo_info) },
		{ NPR_IOCTL_BO_BIND, 0x1b, sizeof(struct npr_bo_bind) },
		{ NPR_IOCTL_MAKE_STATEFUL, 0x1c,
		  sizeof(struct npr_make_stateful) },
		{ NPR_IOCTL_RING_SETUP, 0x0d, sizeof(struct npr_ring_setup) },
		{ NPR_IOCTL_SUBMIT, 0x0e, sizeof(struct npr_submit) },
		{ NPR_IOCTL_REAP, 0x0f, sizeof(struct npr_reap) },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		EXPECT_EQ(_IOC_TYPE(t[i].cmd), 'N');
		EXPECT_EQ(_IOC_NR(t[i].cmd), t[i].nr);
		EXPECT_EQ(_IOC_SIZE(t[i].cmd), t[i].size);
		EXPECT_EQ(_IOC_DIR(t[i].cmd), _IOC_READ | _IOC_WRITE);
	}
}

TEST(abi_enum_values)
{
	EXPECT_EQ(NPR_UAPI_VERSION, 1);
	EXPECT_EQ(NPR_MAX_RANK, 8);
	EXPECT_EQ(NPR_ELEM_F32, 1);
	EXPECT_EQ(NPR_ELEM_F16, 2);
	EXPECT_EQ(NPR_ELEM_BF16, 3);
	EXPECT_EQ(NPR_ELEM_I8, 5);
	EXPECT_EQ(NPR_ELEM_U8, 6);
	EXPECT_EQ(NPR_ELEM_I32, 9);
	EXPECT_EQ(NPR_ELEM_I64, 11);
	EXPECT_EQ(NPR_ELEM_BOOLEAN, 13);
	EXPECT_EQ(NPR_ELEM_U1, 14);
	EXPECT_EQ(NPR_ELEM_U4, 16);
	EXPECT_EQ(NPR_DEVICE_CPU, 1);
	EXPECT_EQ(NPR_HANDLE_MODEL, 1);
	EXPECT_EQ(NPR_HANDLE_EXEC, 2);
	EXPECT_EQ(NPR_HANDLE_REQUEST, 3);
	EXPECT_EQ(NPR_PARAM_FULL_DEVICE_NAME, 1);
	EXPECT_EQ(NPR_PARAM_ENABLE_PROFILING, 6);
	EXPECT_EQ(NPR_MODEL_LOAD_MEMORY, 1u);
	EXPECT_EQ(NPR_MODEL_LOAD_DEFER, 2u);
	EXPECT_EQ(NPR_PORT_OUTPUT, 1u);
	EXPECT_EQ(NPR_TENSOR_BIND, 2u);
	EXPECT_EQ(NPR_TENSOR_MAP, 4u);
	EXPECT_EQ(NPR_OP_NOP, 0);
	EXPECT_EQ(NPR_OP_INFER, 1);
	EXPECT_EQ(NPR_OP_COMPILE, 2);
	EXPECT_EQ(NPR_OP_LOAD, 3);
	EXPECT_EQ(NPR_OP_CANCEL, 4);
	EXPECT_EQ(NPR_OP_IMPORT, 5);
	EXPECT_EQ(NPR_OP_EXPORT, 6);
	EXPECT_EQ(NPR_OP_STATE_GET, 7);
	EXPECT_EQ(NPR_OP_STATE_SET, 8);
	EXPECT_EQ(NPR_OP_STATE_RESET, 9);
	EXPECT_EQ(NPR_GET_ERROR_JOB, 1u);
}

TEST(elem_size_and_name)
{
	EXPECT_EQ(npr_elem_size(NPR_ELEM_F32), 4);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_F16), 2);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_BF16), 2);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_F64), 8);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_I8), 1);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_U8), 1);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_I64), 8);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_BOOLEAN), 1);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_U1), 0);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_I4), 0);
	EXPECT_EQ(npr_elem_size(NPR_ELEM_UNDEFINED), 0);
	EXPECT_EQ(npr_elem_size(1000), 0);
	EXPECT_STREQ(npr_elem_name(NPR_ELEM_F32), "f32");
	EXPECT_STREQ(npr_elem_name(NPR_ELEM_F16), "f16");
	EXPECT_STREQ(npr_elem_name(NPR_ELEM_I64), "i64");
	EXPECT_STREQ(npr_elem_name(1000), "?");
}

/* ---- npr_open / npr_close ---------------------------------------------- */

/* npr_open() with errno poisoned; *err_after gets errno afterwards. */
static int poisoned_open(const char *name, unsigned int flags,
			 int *err_after)
{
	int ret;

	errno = ERRNO_POISON;
	ret = npr_open(name, flags);
	*err_after = errno;
	return ret;
}

TEST(open_unknown_device_is_enodev)
{
	int err;

	EXPECT_EQ(poisoned_open("nonexistent", 0, &err), -ENODEV);
	EXPECT_EQ(err, ERRNO_POISON);
	EXPECT_STRNE(npr_last_error(), "");
	EXPECT_EQ(poisoned_open("", 0, &err), -ENODEV);
	EXPECT_EQ(err, ERRNO_POISON);
	EXPECT_EQ(poisoned_open("cpu.7", 0, &err), -ENODEV);
	EXPECT_EQ(err, ERRNO_POISON);
}

TEST(open_rejects_null_name_and_flags)
{
	int err;

	EXPECT_EQ(poisoned_open(NULL, 0, &err), -EINVAL);
	EXPECT_EQ(err, ERRNO_POISON);
	EXPECT_EQ(poisoned_open("cpu", 1, &err), -EINVAL);
	EXPECT_EQ(err, ERRNO_POISON);
	EXPECT_EQ(poisoned_open("cpu", 0x80000000u, &err), -EINVAL);
	EXPECT_EQ(err, ERRNO_POISON);
}

TEST(open_and_close_leave_errno_alone)
{
	int fd, err;

	fd = poisoned_open("cpu", 0, &err);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(err, ERRNO_POISON);
	errno = ERRNO_POISON;
	EXPECT_EQ(npr_close(fd), 0);
	err = errno;
	EXPECT_EQ(err, ERRNO_POISON);
}

/*
 * Whole paths that call into libc and libxml2 (number parsing, file
 * access), on success and on failure: errno stays the caller's.
 */
TEST(model_paths_leave_errno_alone)
{
	const float x[16] = {
		1, 2, 3, 4,  5, 6, 7, 8,  -1, -2, -3, -4,  0, 9, 0, -9,
	};
	const float want[4] = { 6, 8, 9, 0 };
	char path[] = "/tmp/npr-uapi-XXXXXX.xml", bin[sizeof(path)];
	struct npr_model_load ml;
	struct npr_tensor_arg ta;
	struct npr_infer in;
	struct npr_compile co;
	struct npr_req_create rc;
	float y[4];
	int fd, tmp, err, ret, i;

	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);

	npr_prep_model_load_mem(&ml, maxpool_xml, strlen(maxpool_xml), NULL,
				0);
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml, &err), 0);
	EXPECT_EQ(err, ERRNO_POISON);
	npr_prep_compile(&co, ml.handle);
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_COMPILE, &co, &err), 0);
	EXPECT_EQ(err, ERRNO_POISON);
	npr_prep_req_create(&rc, co.exec);
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc, &err), 0);
	EXPECT_EQ(err, ERRNO_POISON);
	npr_prep_tensor(&ta, rc.req, 0, 0, (void *)x, sizeof(x));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 4;
	ta.dims[0] = 1;
	ta.dims[1] = 1;
	ta.dims[2] = 4;
	ta.dims[3] = 4;
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta, &err), 0);
	EXPECT_EQ(err, ERRNO_POISON);
	npr_prep_infer(&in, rc.req);
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_INFER, &in, &err), 0);
	EXPECT_EQ(err, ERRNO_POISON);
	npr_prep_tensor(&ta, rc.req, 0, 1, y, sizeof(y));
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta, &err), 0);
	EXPECT_EQ(err, ERRNO_POISON);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], want[i]);

	/* a file that is not there */
	npr_prep_model_load(&ml, "/nonexistent/model.xml", NULL);
	EXPECT_EQ(poisoned_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml, &err),
		  -ENOENT);
	EXPECT_EQ(err, ERRNO_POISON);

	/* and one that is, with its (empty: no Const) weights file */
	tmp = mkstemps(path, 4);
	ASSERT_GE(tmp, 0);
	ASSERT_EQ(write(tmp, maxpool_xml, strlen(maxpool_xml)),
		  (ssize_t)strlen(maxpool_xml));
	close(tmp);
	strcpy(bin, path);
	strcpy(bin + strlen(bin) - 4, ".bin");
	tmp = open(bin, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	ASSERT_GE(tmp, 0);
	close(tmp);
	npr_prep_model_load(&ml, path, NULL);
	ret = poisoned_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml, &err);
	if (ret)
		TH_LOG("loading %s: %s", path, npr_last_error());
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(err, ERRNO_POISON);
	unlink(path);
	unlink(bin);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST(open_gives_distinct_real_fds)
{
	int a, b;

	a = npr_open("cpu", 0);
	ASSERT_GE(a, 0);
	b = npr_open("cpu", 0);
	ASSERT_GE(b, 0);
	EXPECT_NE(a, b);
	/* a real descriptor, which the library owns */
	EXPECT_GE(fcntl(a, F_GETFD), 0);
	EXPECT_EQ(npr_close(a), 0);
	EXPECT_EQ(npr_close(b), 0);
}

TEST(close_bad_fd_is_ebadf)
{
	int fd, err, pfd[2];

	EXPECT_EQ(npr_close(-1), -EBADF);
	EXPECT_EQ(npr_close(1 << 20), -EBADF);
	ASSERT_EQ(pipe(pfd), 0);
	errno = ERRNO_POISON;
	EXPECT_EQ(npr_close(pfd[0]), -EBADF);
	err = errno;
	EXPECT_EQ(err, ERRNO_POISON);
	/* the pipe is not the library's: it must still be open */
	EXPECT_GE(fcntl(pfd[0], F_GETFD), 0);
	close(pfd[0]);
	close(pfd[1]);
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(npr_close(fd), 0);
	EXPECT_EQ(npr_close(fd), -EBADF);
}

/* ---- the validation rules, command by command --------------------------- */

/**
 * struct cmd_desc - how to drive one command in the generic rule tests
 * @cmd: NPR_IOCTL_*.
 * @size: sizeof its struct.
 * @known_flags: flag bits the command accepts.
 * @fill: write a valid argument (the buffer is zeroed, @size bytes).
 * @reserved_off: offset of a must-be-zero field, -1 if none.
 * @handle_off: offset of the handle field, -1 if none.
 * @handle_type: the type it takes; 0 for any (HANDLE_DESTROY).
 * @wrong_type: a type it must refuse with -EBADF, 0 if none.
 */
struct cmd_desc {
	unsigned long cmd;
	size_t size;
	__u32 known_flags;
	void (*fill)(struct npr_test *_metadata, struct objs *o, void *arg);
	int reserved_off;
	int handle_off;
	int handle_type;
	int wrong_type;
	size_t v0;	/* version-0 size when the struct grew, else 0 */
};

/* The smallest size the library accepts. */
static size_t v0_size(const struct cmd_desc *d)
{
	return d->v0 ? d->v0 : d->size;
}

static void fill_device_info(struct npr_test *_metadata __maybe_unused,
			     struct objs *o __maybe_unused,
			     void *arg __maybe_unused)
{
}

static void fill_get_param(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_param *a = arg;

	a->handle = o->exec;
	a->param = NPR_PARAM_INFERENCE_NUM_THREADS;
}

static void fill_set_param(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_param *a = arg;

	a->handle = 0;		/* the device */
	a->param = NPR_PARAM_LOG_LEVEL;
	a->value = 0;
}

static void fill_model_load(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_model_load *a = arg;

	a->flags = NPR_MODEL_LOAD_MEMORY;
	a->xml = (uintptr_t)relu_xml;
	a->xml_size = strlen(relu_xml);
}

static void fill_model_info(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_model_info *a = arg;

	a->handle = o->model;
}

static void fill_port_info(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_port_info *a = arg;

	a->handle = o->model;
	a->index = 0;
	a->name = (uintptr_t)o->name;
	a->name_len = sizeof(o->name);
}

static void fill_compile(struct npr_test *_metadata __maybe_unused,
			 struct objs *o __maybe_unused, void *arg)
{
	struct npr_compile *a = arg;

	a->model = o->model;
}

static void fill_req_create(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_req_create *a = arg;

	a->exec = o->exec;
}

static void fill_set_tensor(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_tensor_arg *a = arg;

	a->req = o->req;
	a->index = 0;
	a->elem_type = NPR_ELEM_F32;
	a->rank = 2;
	a->dims[0] = 1;
	a->dims[1] = 4;
	a->data = (uintptr_t)o->in;
	a->bytes = sizeof(o->in);
}

static void fill_get_tensor(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_tensor_arg *a = arg;

	a->flags = NPR_PORT_OUTPUT;
	a->req = o->req;
	a->index = 0;
	a->data = (uintptr_t)o->out;
	a->bytes = sizeof(o->out);
}

static void fill_infer(struct npr_test *_metadata __maybe_unused,
		       struct objs *o __maybe_unused, void *arg)
{
	struct npr_infer *a = arg;

	a->req = o->req;
}

/* Destroys something made for the purpose, so it can run many times. */
static void fill_destroy(struct npr_test *_metadata __maybe_unused,
			 struct objs *o __maybe_unused, void *arg)
{
	struct npr_handle_destroy *a = arg;

	load_relu(_metadata, o->fd, &a->handle);
}

static void fill_get_error(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_get_error *a = arg;

	a->buf = (uintptr_t)o->msg;
	a->len = sizeof(o->msg);
}

#define OFF(type, field)	((int)offsetof(struct type, field))

static const struct cmd_desc desc_device_info = {
	NPR_IOCTL_DEVICE_INFO, sizeof(struct npr_device_info), 0,
	fill_device_info, OFF(npr_device_info, reserved), -1, 0, 0,
};
static const struct cmd_desc desc_get_param = {
	NPR_IOCTL_GET_PARAM, sizeof(struct npr_param), 0,
	fill_get_param, -1, OFF(npr_param, handle),
	NPR_HANDLE_EXEC, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_set_param = {
	NPR_IOCTL_SET_PARAM, sizeof(struct npr_param), 0,
	fill_set_param, -1, OFF(npr_param, handle),
	NPR_HANDLE_EXEC, NPR_HANDLE_REQUEST,
};
static const struct cmd_desc desc_model_load = {
	NPR_IOCTL_MODEL_LOAD, sizeof(struct npr_model_load),
	NPR_MODEL_LOAD_MEMORY | NPR_MODEL_LOAD_DEFER,
	fill_model_load, OFF(npr_model_load, reserved), -1, 0, 0,
};
static const struct cmd_desc desc_model_info = {
	NPR_IOCTL_MODEL_INFO, sizeof(struct npr_model_info), 0,
	fill_model_info, OFF(npr_model_info, reserved),
	OFF(npr_model_info, handle), NPR_HANDLE_MODEL, NPR_HANDLE_REQUEST,
};
static const struct cmd_desc desc_port_info = {
	NPR_IOCTL_PORT_INFO, sizeof(struct npr_port_info), NPR_PORT_OUTPUT,
	fill_port_info, OFF(npr_port_info, reserved),
	OFF(npr_port_info, handle), NPR_HANDLE_MODEL, NPR_HANDLE_REQUEST,
};
static const struct cmd_desc desc_compile = {
	NPR_IOCTL_COMPILE, sizeof(struct npr_compile), 0,
	fill_compile, -1, OFF(npr_compile, model),
	NPR_HANDLE_MODEL, NPR_HANDLE_EXEC,
};
static const struct cmd_desc desc_req_create = {
	NPR_IOCTL_REQ_CREATE, sizeof(struct npr_req_create), 0,
	fill_req_create, -1, OFF(npr_req_create, exec),
	NPR_HANDLE_EXEC, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_set_tensor = {
	NPR_IOCTL_SET_TENSOR, sizeof(struct npr_tensor_arg),
	NPR_PORT_OUTPUT | NPR_TENSOR_BIND,
	fill_set_tensor, -1, OFF(npr_tensor_arg, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_get_tensor = {
	NPR_IOCTL_GET_TENSOR, sizeof(struct npr_tensor_arg),
	NPR_PORT_OUTPUT | NPR_TENSOR_MAP,
	fill_get_tensor, -1, OFF(npr_tensor_arg, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_EXEC,
};
static const struct cmd_desc desc_infer = {
	NPR_IOCTL_INFER, sizeof(struct npr_infer), 0,
	fill_infer, OFF(npr_infer, reserved), OFF(npr_infer, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_destroy = {
	NPR_IOCTL_HANDLE_DESTROY, sizeof(struct npr_handle_destroy), 0,
	fill_destroy, OFF(npr_handle_destroy, reserved),
	OFF(npr_handle_destroy, handle), 0, 0,
};
static void fill_prop_info(struct npr_test *_metadata __maybe_unused,
			   struct objs *o, void *arg)
{
	struct npr_prop_info *a = arg;

	a->handle = o->exec;
	a->index = 0;
}

static const struct cmd_desc desc_prop_info = {
	NPR_IOCTL_PROP_INFO, sizeof(struct npr_prop_info),
	NPR_PROP_INFO_BY_ID | NPR_PROP_INFO_BY_NAME,
	fill_prop_info, OFF(npr_prop_info, reserved),
	OFF(npr_prop_info, handle), NPR_HANDLE_EXEC, NPR_HANDLE_MODEL,
};
static void fill_state(struct npr_test *_metadata __maybe_unused,
		       struct objs *o, void *arg)
{
	struct npr_state_arg *a = arg;

	a->req = o->req;
	a->flags = NPR_STATE_RESET_ALL;
}

static void fill_export(struct npr_test *_metadata __maybe_unused,
			struct objs *o, void *arg)
{
	static unsigned char buf[1 << 16];	/* the relu model's blob fits */
	struct npr_export *a = arg;

	a->exec = o->exec;
	a->data = (uintptr_t)buf;
	a->bytes = sizeof(buf);
}

static const struct cmd_desc desc_export = {
	NPR_IOCTL_EXPORT, sizeof(struct npr_export), 0, fill_export,
	OFF(npr_export, reserved), OFF(npr_export, exec), NPR_HANDLE_EXEC,
	NPR_HANDLE_REQUEST,
};

/* RESET_ALL succeeds on a request of a model without variables */
static const struct cmd_desc desc_state_reset = {
	NPR_IOCTL_STATE_RESET, sizeof(struct npr_state_arg),
	NPR_STATE_RESET_ALL, fill_state, -1, OFF(npr_state_arg, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_EXEC,
};
static const struct cmd_desc desc_get_error = {
	NPR_IOCTL_GET_ERROR, sizeof(struct npr_get_error), NPR_GET_ERROR_JOB,
	fill_get_error, -1, -1, 0, 0,
	offsetof(struct npr_get_error, user_data),
};

/* Room for a struct and a tail past it, aligned like the structs. */
union argbuf {
	__u64 align;
	unsigned char b[512];
};

static void *make_arg(struct npr_test *_metadata, struct objs *o,
		      const struct cmd_desc *d, union argbuf *buf)
{
	memset(buf, 0, sizeof(*buf));
	memcpy(buf->b, &(__u32){ (__u32)d->size }, 4);
	d->fill(_metadata, o, buf->b);
	return buf->b;
}

static void put_u32(void *arg, int off, __u32 v)
{
	memcpy((char *)arg + off, &v, 4);
}

static __u32 get_u32(const void *arg, int off)
{
	__u32 v;

	memcpy(&v, (const char *)arg + off, 4);
	return v;
}

/* A live object of @type on o->fd, destroyed by the test if it must. */
static __u32 make_object(struct npr_test *_metadata, struct objs *o,
			 int type)
{
	__u32 h = 0;

	switch (type) {
	case NPR_HANDLE_EXEC:
		compile_model(_metadata, o->fd, o->model, &h);
		break;
	case NPR_HANDLE_REQUEST:
		create_req(_metadata, o->fd, o->exec, &h);
		break;
	default:
		load_relu(_metadata, o->fd, &h);
		break;
	}
	return h;
}

static __u32 object_of_type(struct objs *o, int type)
{
	switch (type) {
	case NPR_HANDLE_EXEC:
		return o->exec;
	case NPR_HANDLE_REQUEST:
		return o->req;
	default:
		return o->model;
	}
}

/* Every command, for the rules every command follows. */
FIXTURE(cmd) {
	struct objs o;
};

FIXTURE_VARIANT(cmd) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(cmd, device_info) { .d = &desc_device_info };
FIXTURE_VARIANT_ADD(cmd, get_param) { .d = &desc_get_param };
FIXTURE_VARIANT_ADD(cmd, set_param) { .d = &desc_set_param };
FIXTURE_VARIANT_ADD(cmd, model_load) { .d = &desc_model_load };
FIXTURE_VARIANT_ADD(cmd, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(cmd, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(cmd, compile) { .d = &desc_compile };
FIXTURE_VARIANT_ADD(cmd, req_create) { .d = &desc_req_create };
FIXTURE_VARIANT_ADD(cmd, set_tensor) { .d = &desc_set_tensor };
FIXTURE_VARIANT_ADD(cmd, get_tensor) { .d = &desc_get_tensor };
FIXTURE_VARIANT_ADD(cmd, infer) { .d = &desc_infer };
FIXTURE_VARIANT_ADD(cmd, handle_destroy) { .d = &desc_destroy };
FIXTURE_VARIANT_ADD(cmd, get_error) { .d = &desc_get_error };
FIXTURE_VARIANT_ADD(cmd, prop_info) { .d = &desc_prop_info };
FIXTURE_VARIANT_ADD(cmd, state_reset) { .d = &desc_state_reset };
FIXTURE_VARIANT_ADD(cmd, export) { .d = &desc_export };

FIXTURE_SETUP(cmd)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(cmd)
{
	objs_close(_metadata, &self->o);
}

TEST_F(cmd, accepts_a_valid_argument)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

	ASSERT_EQ(IOC(self->o.fd, variant->d->cmd, arg), 0);
	/* the size field is the caller's and is never rewritten */
	EXPECT_EQ(get_u32(arg, 0), variant->d->size);
}

/* errno is never touched, on success or on failure */
TEST_F(cmd, leaves_errno_alone)
{
	union argbuf buf;
	int ret, err;
	void *arg;

	arg = make_arg(_metadata, &self->o, variant->d, &buf);
	ret = poisoned_ioctl(self->o.fd, variant->d->cmd, arg, &err);
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(err, ERRNO_POISON);

	ret = poisoned_ioctl(self->o.fd, variant->d->cmd, NULL, &err);
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_EQ(err, ERRNO_POISON);

	arg = make_arg(_metadata, &self->o, variant->d, &buf);
	put_u32(arg, 4, get_u32(arg, 4) | (1u << 31));
	ret = poisoned_ioctl(self->o.fd, variant->d->cmd, arg, &err);
	EXPECT_EQ(ret, -EOPNOTSUPP);
	EXPECT_EQ(err, ERRNO_POISON);

	ret = poisoned_ioctl(-1, variant->d->cmd, arg, &err);
	EXPECT_EQ(ret, -EBADF);
	EXPECT_EQ(err, ERRNO_POISON);
}

TEST_F(cmd, rejects_null_arg)
{
	EXPECT_EQ(IOC(self->o.fd, variant->d->cmd, NULL), -EINVAL);
}

TEST_F(cmd, rejects_size_below_version_0)
{
	const __u32 sizes[] = { 0, 4, 8, (__u32)v0_size(variant->d) - 1 };
	union argbuf buf;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

		put_u32(arg, 0, sizes[i]);
		ret = IOC(self->o.fd, variant->d->cmd, arg);
		if (ret != -EINVAL)
			TH_LOG("with size %u", sizes[i]);
		EXPECT_EQ(ret, -EINVAL);
	}
}

TEST_F(cmd, rejects_nonzero_bytes_past_known_size)
{
	const size_t extra[] = { 0, 7, 63 };	/* which tail byte is set */
	union argbuf buf;
	size_t i;

	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

		put_u32(arg, 0, variant->d->size + 64);
		buf.b[variant->d->size + extra[i]] = 0x01;
		EXPECT_EQ(IOC(self->o.fd, variant->d->cmd, arg), -E2BIG);
	}
}

TEST_F(cmd, accepts_zero_bytes_past_known_size)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);
	size_t i;

	put_u32(arg, 0, variant->d->size + 64);
	ASSERT_EQ(IOC(self->o.fd, variant->d->cmd, arg), 0);
	EXPECT_EQ(get_u32(arg, 0), variant->d->size + 64);
	/* nothing is written past what the library knows */
	for (i = variant->d->size; i < variant->d->size + 64; i++)
		ASSERT_EQ(buf.b[i], 0);
}

TEST_F(cmd, rejects_unknown_flags)
{
	union argbuf buf;
	int bit, ret;

	for (bit = 0; bit < 32; bit++) {
		void *arg;
		__u32 flag = 1u << bit;

		if (variant->d->known_flags & flag)
			continue;
		arg = make_arg(_metadata, &self->o, variant->d, &buf);
		put_u32(arg, 4, get_u32(arg, 4) | flag);
		ret = IOC(self->o.fd, variant->d->cmd, arg);
		if (ret != -EOPNOTSUPP)
			TH_LOG("with flag 0x%x", flag);
		EXPECT_EQ(ret, -EOPNOTSUPP);
	}
}

TEST_F(cmd, rejects_bad_fd)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);
	int pfd[2];

	EXPECT_EQ(IOC(-1, variant->d->cmd, arg), -EBADF);
	EXPECT_EQ(IOC(1 << 20, variant->d->cmd, arg), -EBADF);
	/* an open descriptor that is not a device */
	ASSERT_EQ(pipe(pfd), 0);
	EXPECT_EQ(IOC(pfd[0], variant->d->cmd, arg), -EBADF);
	EXPECT_EQ(IOC(pfd[1], variant->d->cmd, arg), -EBADF);
	close(pfd[0]);
	close(pfd[1]);
}

TEST_F(cmd, rejects_closed_fd)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);
	int fd = self->o.fd;

	objs_close(_metadata, &self->o);
	EXPECT_EQ(IOC(fd, variant->d->cmd, arg), -EBADF);
}

/*
 * Break everything at once, then repair one thing at a time: each step
 * must report the next rule of the documented order.
 */
TEST_F(cmd, checks_in_documented_order)
{
	const struct cmd_desc *d = variant->d;
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, d, &buf);
	__u32 flags = get_u32(arg, 4), bad_flag = 1u << 30;
	__u32 handle = d->handle_off >= 0 ? get_u32(arg, d->handle_off) : 0;
	int fd = self->o.fd;

	put_u32(arg, 4, flags | bad_flag);
	if (d->reserved_off >= 0)
		put_u32(arg, d->reserved_off, 1);
	if (d->handle_off >= 0)
		put_u32(arg, d->handle_off,
			unknown_handle(d->handle_type ? d->handle_type :
					NPR_HANDLE_MODEL));
	buf.b[d->size + 3] = 0xff;

	put_u32(arg, 0, v0_size(d) - 1);
	EXPECT_EQ(IOC(fd, d->cmd, arg), -EINVAL);
	put_u32(arg, 0, d->size + 8);
	EXPECT_EQ(IOC(fd, d->cmd, arg), -E2BIG);
	buf.b[d->size + 3] = 0;
	EXPECT_EQ(IOC(fd, d->cmd, arg), -EOPNOTSUPP);
	put_u32(arg, 4, flags);
	if (d->reserved_off >= 0) {
		EXPECT_EQ(IOC(fd, d->cmd, arg), -EINVAL);
		put_u32(arg, d->reserved_off, 0);
	}
	if (d->handle_off >= 0) {
		EXPECT_EQ(IOC(fd, d->cmd, arg), -ENOENT);
		if (d->wrong_type) {
			put_u32(arg, d->handle_off,
				object_of_type(&self->o, d->wrong_type));
			EXPECT_EQ(IOC(fd, d->cmd, arg), -EBADF);
		}
		put_u32(arg, d->handle_off, handle);
	}
	EXPECT_EQ(IOC(fd, d->cmd, arg), 0);
}

/* Commands with a must-be-zero field. */
FIXTURE(reserved) {
	struct objs o;
};

FIXTURE_VARIANT(reserved) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(reserved, device_info) { .d = &desc_device_info };
FIXTURE_VARIANT_ADD(reserved, prop_info) { .d = &desc_prop_info };
FIXTURE_VARIANT_ADD(reserved, model_load) { .d = &desc_model_load };
FIXTURE_VARIANT_ADD(reserved, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(reserved, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(reserved, infer) { .d = &desc_infer };
FIXTURE_VARIANT_ADD(reserved, handle_destroy) { .d = &desc_destroy };

FIXTURE_SETUP(reserved)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(reserved)
{
	objs_close(_metadata, &self->o);
}

TEST_F(reserved, rejects_nonzero_reserved)
{
	const __u32 vals[] = { 1, 0x80000000u, 0xffffffffu };
	union argbuf buf;
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

		put_u32(arg, variant->d->reserved_off, vals[i]);
		EXPECT_EQ(IOC(self->o.fd, variant->d->cmd, arg), -EINVAL);
	}
}

TEST(compile_rejects_nonzero_reserved_in_props)
{
	struct npr_prop_arg pa = {
		.param = NPR_PARAM_INFERENCE_NUM_THREADS,
		.reserved = 1,
		.value = 1,
	};
	struct npr_compile co;
	struct objs o = { .fd = -1 };

	objs_open(_metadata, &o);
	npr_prep_compile(&co, o.model);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	pa.reserved = 0;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_COMPILE, &co), 0);
	objs_close(_metadata, &o);
}

/*
 * MAKE_STATEFUL grew shapes, num_shapes and reserved: the 24-byte version
 * 0 still reaches the name lookup (-ENOENT), a smaller size does not,
 * reserved and the shapes are checked before the model is touched.
 */
TEST(make_stateful_version_0_reserved_and_shapes)
{
	struct npr_state_pair pair = {
		(uintptr_t)"no such input", (uintptr_t)"no such output",
	};
	struct npr_shape_arg sa = { .index = 0, .rank = 1, .dims = { 4 } };
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 1, .pairs = (uintptr_t)&pair,
	};
	struct objs o = { .fd = -1 };

	objs_open(_metadata, &o);
	ms.model = o.model;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -ENOENT);
	ms.size = 24;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -ENOENT);
	ms.size = 23;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.size = sizeof(ms);
	ms.reserved = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.reserved = 0;
	ms.num_shapes = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.shapes = (uintptr_t)&sa;
	ms.num_shapes = 2;	/* the model has one input */
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.num_shapes = 1;
	sa.index = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	sa.index = 0;
	sa.dims[0] = -1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	sa.dims[0] = 4;
	sa.dims[1] = 4;		/* past the rank */
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	objs_close(_metadata, &o);
}

/* Commands that take a handle. */
FIXTURE(handle) {
	struct objs o;
};

FIXTURE_VARIANT(handle) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(handle, get_param) { .d = &desc_get_param };
FIXTURE_VARIANT_ADD(handle, set_param) { .d = &desc_set_param };
FIXTURE_VARIANT_ADD(handle, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(handle, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(handle, compile) { .d = &desc_compile };
FIXTURE_VARIANT_ADD(handle, req_create) { .d = &desc_req_create };
FIXTURE_VARIANT_ADD(handle, set_tensor) { .d = &desc_set_tensor };
FIXTURE_VARIANT_ADD(handle, get_tensor) { .d = &desc_get_tensor };
FIXTURE_VARIANT_ADD(handle, infer) { .d = &desc_infer };
FIXTURE_VARIANT_ADD(handle, handle_destroy) { .d = &desc_destroy };

FIXTURE_SETUP(handle)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(handle)
{
	objs_close(_metadata, &self->o);
}

TEST_F(handle, rejects_unknown_handle)
{
	const struct cmd_desc *d = variant->d;
	int type = d->handle_type ? d->handle_type : NPR_HANDLE_MODEL;
	__u32 live = object_of_type(&self->o, type);
	const __u32 vals[] = {
		unknown_handle(type),
		0xffffffffu,
		/* the right slot and type, another generation */
		live ^ (1u << 16),
		live ^ (0x800u << 16),
	};
	union argbuf buf;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, d, &buf);

		put_u32(arg, d->handle_off, vals[i]);
		ret = IOC(self->o.fd, d->cmd, arg);
		if (ret != -ENOENT)
			TH_LOG("with handle 0x%08x", vals[i]);
		EXPECT_EQ(ret, -ENOENT);
	}
	/* 0 names nothing either, except for properties (the device) */
	if (d->cmd != NPR_IOCTL_GET_PARAM && d->cmd != NPR_IOCTL_SET_PARAM) {
		void *arg = make_arg(_metadata, &self->o, d, &buf);

		put_u32(arg, d->handle_off, 0);
		EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), -ENOENT);
	}
}

TEST_F(handle, rejects_stale_handle)
{
	const struct cmd_desc *d = variant->d;
	int type = d->handle_type ? d->handle_type : NPR_HANDLE_MODEL;
	union argbuf buf;
	void *arg;
	__u32 h, h2;

	h = make_object(_metadata, &self->o, type);
	destroy(_metadata, self->o.fd, h);
	arg = make_arg(_metadata, &self->o, d, &buf);
	put_u32(arg, d->handle_off, h);
	EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), -ENOENT);

	/* a new object may reuse the slot; the old handle stays dead */
	h2 = make_object(_metadata, &self->o, type);
	EXPECT_NE(h2, h);
	arg = make_arg(_metadata, &self->o, d, &buf);
	put_u32(arg, d->handle_off, h);
	EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), -ENOENT);
}

TEST_F(handle, rejects_handle_from_another_fd)
{
	const struct cmd_desc *d = variant->d;
	int type = d->handle_type ? d->handle_type : NPR_HANDLE_MODEL;
	union argbuf buf;
	void *arg;
	int other;

	/* every object lives on fd A; B has none */
	other = npr_open("cpu", 0);
	ASSERT_GE(other, 0);
	arg = make_arg(_metadata, &self->o, d, &buf);
	put_u32(arg, d->handle_off, object_of_type(&self->o, type));
	EXPECT_EQ(IOC(other, d->cmd, arg), -ENOENT);
	/* and nothing happened to the object on A */
	arg = make_arg(_metadata, &self->o, d, &buf);
	EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), 0);
	EXPECT_EQ(npr_close(other), 0);
}

/* Commands that take a handle of one type (HANDLE_DESTROY takes any). */
FIXTURE(typed) {
	struct objs o;
};

FIXTURE_VARIANT(typed) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(typed, get_param) { .d = &desc_get_param };
FIXTURE_VARIANT_ADD(typed, set_param) { .d = &desc_set_param };
FIXTURE_VARIANT_ADD(typed, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(typed, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(typed, compile) { .d = &desc_compile };
FIXTURE_VARIANT_ADD(typed, req_create) { .d = &desc_req_create };
FIXTURE_VARIANT_ADD(typed, set_tensor) { .d = &desc_set_tensor };
FIXTURE_VARIANT_ADD(typed, get_tensor) { .d = &desc_get_tensor };
FIXTURE_VARIANT_ADD(typed, infer) { .d = &desc_infer };

FIXTURE_SETUP(typed)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(typed)
{
	objs_close(_metadata, &self->o);
}

TEST_F(typed, rejects_handle_of_wrong_type)
{
	const struct cmd_desc *d = variant->d;
	union argbuf buf;
	void *arg;
	int type, ret;

	for (type = NPR_HANDLE_MODEL; type <= NPR_HANDLE_REQUEST; type++) {
		if (type == d->handle_type)
			continue;
		/* MODEL_INFO and PORT_INFO also take a compiled model */
		if (type == NPR_HANDLE_EXEC &&
		    (d->cmd == NPR_IOCTL_MODEL_INFO ||
		     d->cmd == NPR_IOCTL_PORT_INFO))
			continue;
		arg = make_arg(_metadata, &self->o, d, &buf);
		put_u32(arg, d->handle_off, object_of_type(&self->o, type));
		ret = IOC(self->o.fd, d->cmd, arg);
		if (ret != -EBADF)
			TH_LOG("with a %s handle",
			       type == NPR_HANDLE_MODEL ? "model" :
			       type == NPR_HANDLE_EXEC ? "exec" : "request");
		EXPECT_EQ(ret, -EBADF);
	}
}

/* ---- the ring ioctls: the common validation rules ------------------------ */

TEST(ring_ioctls_follow_the_validation_order)
{
	static const struct {
		unsigned long cmd;
		size_t size;
		size_t reserved_off;	/* a must-be-zero field */
	} t[] = {
		{ NPR_IOCTL_RING_SETUP, sizeof(struct npr_ring_setup),
		  offsetof(struct npr_ring_setup, reserved) },
		{ NPR_IOCTL_SUBMIT, sizeof(struct npr_submit), 0 },
		{ NPR_IOCTL_REAP, sizeof(struct npr_reap),
		  offsetof(struct npr_reap, reserved) },
	};
	unsigned char buf[128];
	size_t i;
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		__u32 size;

		TH_LOG("cmd 0x%lx", t[i].cmd);
		/* 1. NULL, or size below version 0 */
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, NULL), -EINVAL);
		memset(buf, 0, sizeof(buf));
		size = t[i].size - 1;
		memcpy(buf, &size, 4);
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -EINVAL);
		/* 2. a non-zero byte past the known size */
		size = t[i].size + 8;
		memcpy(buf, &size, 4);
		buf[t[i].size + 3] = 1;
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -E2BIG);
		/* 3. unknown flag bits */
		memset(buf, 0, sizeof(buf));
		size = t[i].size;
		memcpy(buf, &size, 4);
		buf[7] = 0x80;
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -EOPNOTSUPP);
		buf[7] = 0;
		/* 4. a reserved field */
		if (t[i].reserved_off) {
			buf[t[i].reserved_off] = 1;
			EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -EINVAL);
		}
	}
	EXPECT_EQ(npr_close(fd), 0);
}

TEST(submit_rejects_bad_sqes_before_queueing_any)
{
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_sqe s[3];
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	memset(s, 0, sizeof(s));
	su.sqes = (uintptr_t)s;
	su.count = 3;
	s[1].reserved2[2] = 1;		/* reserved: -EINVAL */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 1);
	s[1].reserved2[2] = 0;
	s[2].opcode = 200;		/* unknown opcode: -EINVAL */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 2);
	s[2].opcode = NPR_OP_NOP;
	s[0].flags = 0x40;		/* unknown flag: -EOPNOTSUPP */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	EXPECT_EQ(su.submitted, 0);
	s[0].flags = 0;
	s[0].opcode = NPR_OP_INFER;	/* no such request: -ENOENT */
	s[0].handle = (NPR_HANDLE_REQUEST << 28) | 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -ENOENT);
	s[0].opcode = NPR_OP_IMPORT;	/* IMPORT needs its struct */
	s[0].handle = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 0);
	s[0].opcode = NPR_OP_CANCEL;	/* CANCEL takes only addr */
	s[0].handle = 0;
	s[0].flags = NPR_SQE_LINK;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	s[0].flags = 0;
	s[0].opcode = NPR_OP_NOP;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), 0);
	EXPECT_EQ(su.submitted, 3);
	EXPECT_EQ(npr_close(fd), 0);
}

/*
 * A job's argument struct goes through the ioctl's validation order at
 * SUBMIT: size, unknown tail, flags, reserved, the request handle of a
 * STATE job.  Each failure names no job: nothing is submitted.
 */
TEST(submit_checks_job_structs_in_documented_order)
{
	struct npr_submit su = { .size = sizeof(su) };
	struct {
		struct npr_import im;
		unsigned char tail[16];
	} big;
	struct npr_state_arg st;
	struct npr_sqe s;
	__u32 model, exec;
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	load_relu(_metadata, fd, &model);
	compile_model(_metadata, fd, model, &exec);
	memset(&big, 0, sizeof(big));
	memset(&s, 0, sizeof(s));
	su.sqes = (uintptr_t)&s;
	su.count = 1;
	s.opcode = NPR_OP_IMPORT;
	s.addr = (uintptr_t)&big;
	big.im.size = sizeof(big.im) - 1;		/* 1 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	big.im.size = sizeof(big);			/* 2 */
	big.tail[3] = 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -E2BIG);
	big.tail[3] = 0;
	big.im.flags = 1u << 9;				/* 3 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	big.im.flags = 0;
	big.im.reserved = 1;				/* 4 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 0);

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	s.opcode = NPR_OP_STATE_RESET;
	s.addr = (uintptr_t)&st;
	st.req = unknown_handle(NPR_HANDLE_REQUEST);	/* 5 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -ENOENT);
	st.req = exec;					/* 6 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EBADF);
	s.opcode = NPR_OP_STATE_GET;			/* RESET's flag */
	st.flags = NPR_STATE_RESET_ALL;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	EXPECT_EQ(su.submitted, 0);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST(unknown_ioctl_is_enotty)
{
	const unsigned long cmds[] = {
		_IOWR('N', 0x7f, struct npr_infer),
		_IOWR('N', 0xff, struct npr_infer),
		_IOWR('M', 0x0a, struct npr_infer),
		_IOR('N', 0x0a, struct npr_infer),
		_IOW('N', 0x0a, struct npr_infer),
		_IO('N', 0x0a),
		0,
		~0ul,
	};
	struct objs o = { .fd = -1 };
	struct npr_infer in;
	size_t i;
	int ret;

	objs_open(_metadata, &o);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		npr_prep_infer(&in, o.req);
		ret = IOC(o.fd, cmds[i], &in);
		if (ret != -ENOTTY)
			TH_LOG("with cmd 0x%lx", cmds[i]);
		EXPECT_EQ(ret, -ENOTTY);
	}
	objs_close(_metadata, &o);
}

/* ---- the relu model, command by command --------------------------------- */

FIXTURE(relu) {
	struct objs o;
};

FIXTURE_SETUP(relu)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(relu)
{
	objs_close(_metadata, &self->o);
}

TEST_F(relu, device_info_describes_cpu)
{
	struct npr_device_info di;

	memset(&di, 0xa5, sizeof(di));
	di.size = sizeof(di);
	di.flags = 0;
	di.reserved = 0;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
	EXPECT_EQ(di.api_version, NPR_UAPI_VERSION);
	EXPECT_EQ(di.device_type, NPR_DEVICE_CPU);
	EXPECT_TRUE(di.caps & NPR_CAP_FP32);
	EXPECT_GE(di.num_threads, 1);
	EXPECT_EQ(di.reserved, 0);
	ASSERT_NONNULL(memchr(di.name, 0, sizeof(di.name)));
	ASSERT_NONNULL(memchr(di.full_name, 0, sizeof(di.full_name)));
	ASSERT_NONNULL(memchr(di.arch, 0, sizeof(di.arch)));
	EXPECT_STREQ(di.name, "cpu");
	EXPECT_STRNE(di.full_name, "");
	EXPECT_STRNE(di.arch, "");
	TH_LOG("%s: %s, %s, %u threads", di.name, di.full_name, di.arch,
	       di.num_threads);
}

TEST_F(relu, param_int_round_trip)
{
	struct npr_param pa = {
		.size = sizeof(pa),
		.param = NPR_PARAM_LOG_LEVEL,
		.value = 3,
	};

	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), 0);
	pa.value = 0;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), 0);
	EXPECT_EQ(pa.value, 3);

	pa.param = NPR_PARAM_PERFORMANCE_HINT;
	pa.value = NPR_PERF_HINT_THROUGHPUT;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), 0);
	pa.value = 0;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), 0);
	EXPECT_EQ(pa.value, NPR_PERF_HINT_THROUGHPUT);
}

TEST_F(relu, param_string_needs_big_enough_buffer)
{
	struct npr_device_info di = { .size = sizeof(di) };
	char small[4] = "zzz", big[256];
	struct npr_param pa = {
		.size = sizeof(pa),
		.param = NPR_PARAM_FULL_DEVICE_NAME,
		.ptr = (uintptr_t)small,
		.len = sizeof(small),
	};

	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
	ASSERT_GT(strlen(di.full_name), 3);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), -EMSGSIZE);
	EXPECT_EQ(pa.len, strlen(di.full_name) + 1);

	pa.ptr = (uintptr_t)big;
	pa.len = sizeof(big);
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), 0);
	EXPECT_EQ(pa.len, strlen(di.full_name) + 1);
	EXPECT_STREQ(big, di.full_name);

	pa.param = NPR_PARAM_DEVICE_ARCHITECTURE;
	pa.len = sizeof(big);
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), 0);
	EXPECT_STREQ(big, di.arch);
}

TEST_F(relu, param_errors)
{
	struct npr_param pa = { .size = sizeof(pa) };

	pa.param = 0;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), -ENOPROTOOPT);
	pa.param = NPR_PARAM_MAX;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &pa), -ENOPROTOOPT);
	pa.param = 0x7fffffff;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), -ENOPROTOOPT);

	/* read-only */
	pa.param = NPR_PARAM_FULL_DEVICE_NAME;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), -EPERM);

	/* out of range */
	pa.param = NPR_PARAM_LOG_LEVEL;
	pa.value = NPR_LOG_TRACE + 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), -ERANGE);
	pa.param = NPR_PARAM_PERFORMANCE_HINT;
	pa.value = 0;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), -ERANGE);

	/* a compiled model's properties are fixed */
	pa.handle = self->o.exec;
	pa.param = NPR_PARAM_LOG_LEVEL;
	pa.value = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_PARAM, &pa), -EPERM);
}

TEST_F(relu, compile_props_apply_to_the_exec)
{
	struct npr_prop_arg pa = {
		.param = NPR_PARAM_INFERENCE_NUM_THREADS,
		.value = 1,
	};
	struct npr_param gp = {
		.size = sizeof(gp),
		.param = NPR_PARAM_INFERENCE_NUM_THREADS,
	};
	struct npr_compile co;

	npr_prep_compile(&co, self->o.model);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), 0);
	gp.handle = co.exec;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_PARAM, &gp), 0);
	EXPECT_EQ(gp.value, 1);

	/* a count without an array */
	npr_prep_compile(&co, self->o.model);
	co.num_props = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	npr_prep_compile(&co, self->o.model);
	co.num_shapes = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
}

TEST_F(relu, compile_with_input_shape)
{
	struct npr_shape_arg sa = { .index = 0, .rank = 2, .dims = { 3, 4 } };
	const float in[12] = { -1, 1, -2, 2, -3, 3, -4, 4, 0, 5, -5, 6 };
	struct npr_tensor_arg ta;
	struct npr_port_info pi;
	struct npr_compile co;
	float out[12];
	__u32 req;
	int i;

	npr_prep_compile(&co, self->o.model);
	co.shapes = (uintptr_t)&sa;
	co.num_shapes = 1;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), 0);
	npr_prep_port_info(&pi, co.exec, 0, 1, NULL, 0);
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.rank, 2);
	EXPECT_EQ(pi.dims[0], 3);
	EXPECT_EQ(pi.dims[1], 4);

	create_req(_metadata, self->o.fd, co.exec, &req);
	npr_prep_tensor(&ta, req, 0, 0, (void *)in, sizeof(in));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 3;
	ta.dims[1] = 4;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	infer(_metadata, self->o.fd, req);
	npr_prep_tensor(&ta, req, 0, 1, out, sizeof(out));
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	for (i = 0; i < 12; i++)
		EXPECT_EQ(out[i], in[i] > 0 ? in[i] : 0.0f);

	/* a zero dim: an empty tensor, set and read with 0 bytes */
	sa.dims[0] = 0;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), 0);
	npr_prep_port_info(&pi, co.exec, 0, 1, NULL, 0);
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.rank, 2);
	EXPECT_EQ(pi.dims[0], 0);
	EXPECT_EQ(pi.dims[1], 4);
	create_req(_metadata, self->o.fd, co.exec, &req);
	npr_prep_tensor(&ta, req, 0, 0, NULL, 0);
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 0;
	ta.dims[1] = 4;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	infer(_metadata, self->o.fd, req);
	npr_prep_tensor(&ta, req, 0, 1, out, sizeof(out));
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	EXPECT_EQ(ta.bytes, 0);
	EXPECT_EQ(ta.dims[0], 0);

	/* bad shapes: rank 0, a negative dim, dims past the rank, bad index */
	sa.rank = 0;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	sa.rank = 2;
	sa.dims[0] = -1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	sa.dims[0] = 1;
	sa.dims[2] = 5;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	sa.dims[2] = 0;
	sa.index = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
}

TEST_F(relu, model_info_counts)
{
	struct npr_model_info mi = { .size = sizeof(mi) };

	mi.handle = self->o.model;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 1);
	EXPECT_EQ(mi.num_outputs, 1);
	EXPECT_EQ(mi.num_nodes, 3);
	EXPECT_EQ(mi.ir_version, 11);

	/* an exec answers too */
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = self->o.exec;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 1);
	EXPECT_EQ(mi.num_outputs, 1);
}

TEST_F(relu, port_info_describes_ports)
{
	const __u32 handles[] = { self->o.model, self->o.exec };
	struct npr_port_info pi;
	char name[64];
	size_t i;

	for (i = 0; i < 2; i++) {
		npr_prep_port_info(&pi, handles[i], 0, 0, name, sizeof(name));
		ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), 0);
		EXPECT_EQ(pi.elem_type, NPR_ELEM_F32);
		EXPECT_EQ(pi.rank, 2);
		EXPECT_EQ(pi.dims[0], 1);
		EXPECT_EQ(pi.dims[1], 4);
		EXPECT_STREQ(name, "input_tensor");
		EXPECT_EQ(pi.name_len, strlen("input_tensor") + 1);

		npr_prep_port_info(&pi, handles[i], 0, 1, name, sizeof(name));
		ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), 0);
		EXPECT_EQ(pi.elem_type, NPR_ELEM_F32);
		EXPECT_EQ(pi.rank, 2);
		EXPECT_EQ(pi.dims[1], 4);
		EXPECT_STREQ(name, "relu_out");

		npr_prep_port_info(&pi, handles[i], 1, 0, name, sizeof(name));
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), -EINVAL);
		npr_prep_port_info(&pi, handles[i], 1, 1, name, sizeof(name));
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), -EINVAL);
	}
}

TEST_F(relu, port_info_small_name_buffer_is_emsgsize)
{
	const size_t need = strlen("input_tensor") + 1;
	struct npr_port_info pi;
	char name[4];

	npr_prep_port_info(&pi, self->o.model, 0, 0, name, sizeof(name));
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), -EMSGSIZE);
	EXPECT_EQ(pi.name_len, need);

	/* one byte short */
	{
		char exact[32];

		npr_prep_port_info(&pi, self->o.model, 0, 0, exact, need - 1);
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi),
			  -EMSGSIZE);
		EXPECT_EQ(pi.name_len, need);
		npr_prep_port_info(&pi, self->o.model, 0, 0, exact, need);
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), 0);
		EXPECT_STREQ(exact, "input_tensor");
	}

	/* a NULL buffer of size 0 asks for the size */
	npr_prep_port_info(&pi, self->o.model, 0, 0, NULL, 0);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	EXPECT_EQ(pi.name_len, need);
}

TEST_F(relu, infer_computes_relu)
{
	struct npr_infer in;
	struct npr_tensor_arg ta;
	float out[4] = { -9, -9, -9, -9 };
	int i;

	set_input(_metadata, self->o.fd, self->o.req, relu_in);
	npr_prep_infer(&in, self->o.req);
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_INFER, &in), 0);
	EXPECT_NE(in.started_ns, 0);
	EXPECT_LE(in.started_ns, in.finished_ns);

	npr_prep_tensor(&ta, self->o.req, 0, 1, out, sizeof(out));
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	EXPECT_EQ(ta.elem_type, NPR_ELEM_F32);
	EXPECT_EQ(ta.rank, 2);
	EXPECT_EQ(ta.dims[0], 1);
	EXPECT_EQ(ta.dims[1], 4);
	EXPECT_EQ(ta.bytes, sizeof(out));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);

	/* the input reads back as it was set */
	npr_prep_tensor(&ta, self->o.req, 0, 0, out, sizeof(out));
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	EXPECT_EQ(memcmp(out, relu_in, sizeof(out)), 0);
}

TEST_F(relu, set_tensor_rejects_wrong_elem_type)
{
	const __u32 types[] = {
		NPR_ELEM_UNDEFINED, NPR_ELEM_F16, NPR_ELEM_I32, NPR_ELEM_U8,
		NPR_ELEM_MAX, 0xffffffffu,
	};
	struct npr_tensor_arg ta;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		tensor_arg(&ta, self->o.req, 0, self->o.in);
		ta.elem_type = types[i];
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);
	}
}

TEST_F(relu, set_tensor_rejects_wrong_dims)
{
	struct npr_tensor_arg ta;

	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.rank = 1;
	ta.dims[0] = 4;
	ta.dims[1] = 0;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);

	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.rank = 3;
	ta.dims[2] = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);

	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.dims[0] = 4;
	ta.dims[1] = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);

	/* a dim past the rank */
	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.dims[2] = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);

	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.rank = NPR_MAX_RANK + 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);
}

TEST_F(relu, set_tensor_rejects_wrong_byte_size)
{
	const __u64 sizes[] = { 0, 4, 15, 17, 32, ~0ull };
	struct npr_tensor_arg ta;
	float big[8] = { 0 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		tensor_arg(&ta, self->o.req, 0, big);
		ta.bytes = sizes[i];
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);
	}
	tensor_arg(&ta, self->o.req, 0, NULL);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);
}

TEST_F(relu, tensor_rejects_bad_port_index)
{
	struct npr_tensor_arg ta;

	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.index = 1;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EINVAL);
	npr_prep_tensor(&ta, self->o.req, 1, 1, self->o.out, 16);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), -EINVAL);
	npr_prep_tensor(&ta, self->o.req, 0xffffffffu, 0, self->o.out, 16);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), -EINVAL);
}

TEST_F(relu, get_tensor_small_buffer_is_emsgsize)
{
	struct npr_tensor_arg ta;
	float out[4];

	npr_prep_tensor(&ta, self->o.req, 0, 1, out, sizeof(out) - 1);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), -EMSGSIZE);
	EXPECT_EQ(ta.bytes, sizeof(out));

	npr_prep_tensor(&ta, self->o.req, 0, 1, NULL, 0);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), -EMSGSIZE);
	EXPECT_EQ(ta.bytes, sizeof(out));

	/* bigger than needed is fine */
	{
		float big[8];

		npr_prep_tensor(&ta, self->o.req, 0, 1, big, sizeof(big));
		EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		EXPECT_EQ(ta.bytes, sizeof(out));
	}
}

TEST_F(relu, set_tensor_copies)
{
	float in[4], out[4];
	int i;

	memcpy(in, relu_in, sizeof(in));
	set_input(_metadata, self->o.fd, self->o.req, in);
	/* the request keeps its copy: changing ours changes nothing */
	for (i = 0; i < 4; i++)
		in[i] = -100.0f;
	infer(_metadata, self->o.fd, self->o.req);
	get_output(_metadata, self->o.fd, self->o.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
}

TEST_F(relu, bind_uses_caller_memory)
{
	struct npr_tensor_arg ta;
	float in[4], out[4];
	int i;

	memcpy(in, relu_in, sizeof(in));
	tensor_arg(&ta, self->o.req, 0, in);
	ta.flags |= NPR_TENSOR_BIND;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	infer(_metadata, self->o.fd, self->o.req);
	get_output(_metadata, self->o.fd, self->o.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);

	/* change the bound memory, no SET: the next run sees it */
	for (i = 0; i < 4; i++)
		in[i] = (float)(i + 1) * (i & 1 ? -1.0f : 1.0f);
	infer(_metadata, self->o.fd, self->o.req);
	get_output(_metadata, self->o.fd, self->o.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], in[i] > 0 ? in[i] : 0.0f);

	/* a copying SET unbinds: our buffer is no longer read */
	set_input(_metadata, self->o.fd, self->o.req, relu_in);
	for (i = 0; i < 4; i++)
		in[i] = 50.0f;
	infer(_metadata, self->o.fd, self->o.req);
	get_output(_metadata, self->o.fd, self->o.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
}

TEST_F(relu, bind_output_is_written_in_place)
{
	struct npr_tensor_arg ta;
	float out[4] = { -7, -7, -7, -7 };
	int i;

	tensor_arg(&ta, self->o.req, 1, out);
	ta.flags |= NPR_TENSOR_BIND;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	set_input(_metadata, self->o.fd, self->o.req, relu_in);
	infer(_metadata, self->o.fd, self->o.req);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
}

TEST_F(relu, map_returns_the_request_buffer)
{
	struct npr_tensor_arg ta;
	float *min, *mout, out[4];
	int i;

	npr_prep_tensor(&ta, self->o.req, 0, 0, NULL, 0);
	ta.flags |= NPR_TENSOR_MAP;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_NE(ta.data, 0);
	EXPECT_EQ(ta.bytes, 16);
	EXPECT_EQ(ta.elem_type, NPR_ELEM_F32);
	EXPECT_EQ(ta.rank, 2);
	min = (float *)(uintptr_t)ta.data;

	npr_prep_tensor(&ta, self->o.req, 0, 1, NULL, 0);
	ta.flags |= NPR_TENSOR_MAP;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_NE(ta.data, 0);
	mout = (float *)(uintptr_t)ta.data;
	EXPECT_NE((uintptr_t)min, (uintptr_t)mout);

	/* write the input in place, read the output in place */
	memcpy(min, relu_in, sizeof(relu_in));
	infer(_metadata, self->o.fd, self->o.req);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(mout[i], relu_want[i]);
	get_output(_metadata, self->o.fd, self->o.req, out);
	EXPECT_EQ(memcmp(out, mout, sizeof(out)), 0);

	/* a copying SET lands in the mapped buffer */
	set_input(_metadata, self->o.fd, self->o.req, relu_want);
	EXPECT_EQ(memcmp(min, relu_want, sizeof(relu_want)), 0);
}

TEST_F(relu, tensor_rejects_flag_of_the_other_direction)
{
	struct npr_tensor_arg ta;

	tensor_arg(&ta, self->o.req, 0, self->o.in);
	ta.flags |= NPR_TENSOR_MAP;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_SET_TENSOR, &ta), -EOPNOTSUPP);
	npr_prep_tensor(&ta, self->o.req, 0, 1, self->o.out, 16);
	ta.flags |= NPR_TENSOR_BIND;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_GET_TENSOR, &ta), -EOPNOTSUPP);
}

TEST_F(relu, requests_are_independent)
{
	float a_in[4] = { 1, -1, 2, -2 }, b_in[4] = { -3, 3, -4, 4 };
	float out[4];
	__u32 req2;
	int i;

	create_req(_metadata, self->o.fd, self->o.exec, &req2);
	set_input(_metadata, self->o.fd, self->o.req, a_in);
	set_input(_metadata, self->o.fd, req2, b_in);
	infer(_metadata, self->o.fd, req2);
	infer(_metadata, self->o.fd, self->o.req);
	get_output(_metadata, self->o.fd, self->o.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], a_in[i] > 0 ? a_in[i] : 0.0f);
	get_output(_metadata, self->o.fd, req2, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], b_in[i] > 0 ? b_in[i] : 0.0f);
}

TEST_F(relu, destroyed_model_leaves_exec_working)
{
	float out[4];
	__u32 req;
	int i;

	destroy(_metadata, self->o.fd, self->o.model);
	create_req(_metadata, self->o.fd, self->o.exec, &req);
	set_input(_metadata, self->o.fd, req, relu_in);
	infer(_metadata, self->o.fd, req);
	get_output(_metadata, self->o.fd, req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
}

TEST_F(relu, destroyed_exec_leaves_request_working)
{
	struct npr_req_create rc;
	float out[4];
	int i;

	destroy(_metadata, self->o.fd, self->o.exec);
	npr_prep_req_create(&rc, self->o.exec);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_REQ_CREATE, &rc), -ENOENT);
	set_input(_metadata, self->o.fd, self->o.req, relu_in);
	infer(_metadata, self->o.fd, self->o.req);
	get_output(_metadata, self->o.fd, self->o.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
}

TEST_F(relu, destroy_twice_is_enoent)
{
	struct npr_handle_destroy hd;

	destroy(_metadata, self->o.fd, self->o.req);
	npr_prep_destroy(&hd, self->o.req);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_HANDLE_DESTROY, &hd), -ENOENT);
}

TEST_F(relu, handles_are_distinct_and_typed)
{
	__u32 m2;

	load_relu(_metadata, self->o.fd, &m2);
	EXPECT_NE(m2, self->o.model);
	EXPECT_NE(self->o.model, self->o.exec);
	EXPECT_NE(self->o.exec, self->o.req);
	/* the type tag in bits 28..31, as the uapi header says */
	EXPECT_EQ(self->o.model >> 28, NPR_HANDLE_MODEL);
	EXPECT_EQ(self->o.exec >> 28, NPR_HANDLE_EXEC);
	EXPECT_EQ(self->o.req >> 28, NPR_HANDLE_REQUEST);
}

TEST_F(relu, model_load_memory_buffers_are_copied)
{
	char *xml = strdup(relu_xml);
	struct npr_model_load ml;
	__u32 exec, req;
	float out[4];
	int i;

	ASSERT_NONNULL(xml);
	npr_prep_model_load_mem(&ml, xml, strlen(xml), NULL, 0);
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	memset(xml, 'x', strlen(xml));
	free(xml);
	compile_model(_metadata, self->o.fd, ml.handle, &exec);
	create_req(_metadata, self->o.fd, exec, &req);
	set_input(_metadata, self->o.fd, req, relu_in);
	infer(_metadata, self->o.fd, req);
	get_output(_metadata, self->o.fd, req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
}

TEST_F(relu, model_load_rejects_missing_buffers)
{
	struct npr_model_load ml;

	npr_prep_model_load_mem(&ml, NULL, 10, NULL, 0);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_LOAD, &ml), -EINVAL);
	npr_prep_model_load_mem(&ml, relu_xml, 0, NULL, 0);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_LOAD, &ml), -EINVAL);
	npr_prep_model_load_mem(&ml, relu_xml, strlen(relu_xml), NULL, 8);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_LOAD, &ml), -EINVAL);
	/* sizes belong to memory loads only */
	npr_prep_model_load(&ml, "/nonexistent.xml", NULL);
	ml.xml_size = 4;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_LOAD, &ml), -EINVAL);
	npr_prep_model_load(&ml, NULL, NULL);
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_LOAD, &ml), -EINVAL);
}

/* ---- error messages ---------------------------------------------------- */

static int get_error(int fd, char *buf, __u32 len, __s32 *err, __u32 *need)
{
	struct npr_get_error ge = {
		.size = sizeof(ge),
		.buf = (uintptr_t)buf,
		.len = len,
	};
	int ret;

	ret = npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge);
	if (err)
		*err = ge.err;
	if (need)
		*need = ge.len;
	return ret;
}

TEST_F(relu, get_error_reports_the_last_failure)
{
	struct npr_infer in;
	char msg[1024];
	__s32 err;
	__u32 need;

	npr_prep_infer(&in, unknown_handle(NPR_HANDLE_REQUEST));
	ASSERT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_INFER, &in), -ENOENT);
	ASSERT_EQ(get_error(self->o.fd, msg, sizeof(msg), &err, &need), 0);
	EXPECT_EQ(err, -ENOENT);
	EXPECT_STRNE(msg, "");
	EXPECT_STREQ(msg, npr_last_error());
	EXPECT_EQ(need, strlen(msg) + 1);
	TH_LOG("message: %s", msg);

	/* reading it does not replace it, even twice */
	ASSERT_EQ(get_error(self->o.fd, msg, sizeof(msg), &err, NULL), 0);
	EXPECT_EQ(err, -ENOENT);

	/* a later failure replaces it */
	npr_prep_infer(&in, self->o.req);
	in.reserved = 1;
	ASSERT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_INFER, &in), -EINVAL);
	ASSERT_EQ(get_error(self->o.fd, msg, sizeof(msg), &err, NULL), 0);
	EXPECT_EQ(err, -EINVAL);
	EXPECT_STREQ(msg, npr_last_error());
}

TEST_F(relu, get_error_small_buffer_is_emsgsize)
{
	struct npr_infer in;
	char msg[1024], small[4] = "zzz";
	__u32 need;
	__s32 err;

	npr_prep_infer(&in, unknown_handle(NPR_HANDLE_REQUEST));
	ASSERT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_INFER, &in), -ENOENT);
	ASSERT_EQ(get_error(self->o.fd, msg, sizeof(msg), NULL, NULL), 0);
	ASSERT_GT(strlen(msg), 3);

	EXPECT_EQ(get_error(self->o.fd, small, sizeof(small), &err, &need),
		  -EMSGSIZE);
	EXPECT_EQ(need, strlen(msg) + 1);
	EXPECT_EQ(err, -ENOENT);
	/* truncated and terminated */
	EXPECT_EQ(small[3], 0);
	EXPECT_EQ(memcmp(small, msg, 3), 0);

	/* size query */
	EXPECT_EQ(get_error(self->o.fd, NULL, 0, NULL, &need), -EMSGSIZE);
	EXPECT_EQ(need, strlen(msg) + 1);
	/* one byte short */
	EXPECT_EQ(get_error(self->o.fd, msg, need - 1, NULL, NULL),
		  -EMSGSIZE);
	/* and the message is still there */
	EXPECT_EQ(get_error(self->o.fd, msg, need, &err, NULL), 0);
	EXPECT_EQ(err, -ENOENT);
}

TEST_F(relu, get_error_own_failures_keep_the_message)
{
	struct npr_get_error ge;
	struct npr_infer in;
	char msg[256];
	__s32 err;

	npr_prep_infer(&in, unknown_handle(NPR_HANDLE_REQUEST));
	ASSERT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_INFER, &in), -ENOENT);

	EXPECT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_GET_ERROR, NULL), -EINVAL);
	memset(&ge, 0, sizeof(ge));
	ge.size = sizeof(ge);
	ge.flags = 2;
	EXPECT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_GET_ERROR, &ge),
		  -EOPNOTSUPP);
	ge.flags = NPR_GET_ERROR_JOB;	/* no ring job failed on this fd */
	EXPECT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_GET_ERROR, &ge), -ENOENT);
	ge.flags = 0;
	ge.user_data = 1;		/* only with NPR_GET_ERROR_JOB */
	EXPECT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_GET_ERROR, &ge), -EINVAL);
	ge.user_data = 0;
	ge.size = 24;			/* version 0 of the struct */
	EXPECT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_GET_ERROR, &ge), -EMSGSIZE);
	ge.size = 8;
	EXPECT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_GET_ERROR, &ge), -EINVAL);
	EXPECT_EQ(npr_ioctl(-1, NPR_IOCTL_GET_ERROR, &ge), -EBADF);

	ASSERT_EQ(get_error(self->o.fd, msg, sizeof(msg), &err, NULL), 0);
	EXPECT_EQ(err, -ENOENT);
}

struct thread_result {
	int fd;
	__s32 first_err;	/* GET_ERROR before failing */
	char first_msg[256];
	int open_ret;
	__s32 err;		/* GET_ERROR after failing */
	char msg[256];
};

static void *error_thread(void *p)
{
	struct thread_result *r = p;

	get_error(r->fd, r->first_msg, sizeof(r->first_msg), &r->first_err,
		  NULL);
	r->open_ret = npr_open("nonexistent", 0);
	get_error(r->fd, r->msg, sizeof(r->msg), &r->err, NULL);
	return NULL;
}

TEST_F(relu, get_error_is_per_thread)
{
	struct thread_result r = { .fd = self->o.fd };
	struct npr_infer in;
	char before[256], after[256];
	pthread_t t;
	__s32 err;

	npr_prep_infer(&in, unknown_handle(NPR_HANDLE_REQUEST));
	ASSERT_EQ(npr_ioctl(self->o.fd, NPR_IOCTL_INFER, &in), -ENOENT);
	ASSERT_EQ(get_error(self->o.fd, before, sizeof(before), &err, NULL),
		  0);

	ASSERT_EQ(pthread_create(&t, NULL, error_thread, &r), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);

	/* a new thread starts with no error */
	EXPECT_EQ(r.first_err, 0);
	EXPECT_STREQ(r.first_msg, "");
	/* its own failure is its own */
	EXPECT_EQ(r.open_ret, -ENODEV);
	EXPECT_EQ(r.err, -ENODEV);
	EXPECT_STRNE(r.msg, "");
	/* and ours did not change */
	ASSERT_EQ(get_error(self->o.fd, after, sizeof(after), &err, NULL), 0);
	EXPECT_EQ(err, -ENOENT);
	EXPECT_STREQ(after, before);
	EXPECT_STRNE(after, r.msg);
}

/* ---- concurrency and cleanup ------------------------------------------- */

struct infer_thread {
	int fd;
	__u32 req;
	int seed;
	int errors;
};

static void *infer_loop(void *p)
{
	struct infer_thread *t = p;
	struct npr_tensor_arg ta;
	struct npr_infer in;
	float x[4], y[4];
	int i, k;

	for (i = 0; i < 200; i++) {
		for (k = 0; k < 4; k++)
			x[k] = (float)((t->seed * 31 + i * 7 + k * 13) % 17) -
			       8.0f;
		npr_prep_tensor(&ta, t->req, 0, 0, x, sizeof(x));
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = 2;
		ta.dims[0] = 1;
		ta.dims[1] = 4;
		npr_prep_infer(&in, t->req);
		if (npr_ioctl(t->fd, NPR_IOCTL_SET_TENSOR, &ta) ||
		    npr_ioctl(t->fd, NPR_IOCTL_INFER, &in)) {
			t->errors++;
			continue;
		}
		npr_prep_tensor(&ta, t->req, 0, 1, y, sizeof(y));
		if (npr_ioctl(t->fd, NPR_IOCTL_GET_TENSOR, &ta)) {
			t->errors++;
			continue;
		}
		for (k = 0; k < 4; k++)
			if (y[k] != (x[k] > 0 ? x[k] : 0.0f))
				t->errors++;
	}
	return NULL;
}

TEST_F(relu, requests_run_concurrently)
{
	struct infer_thread t[4];
	pthread_t tid[4];
	int i;

	for (i = 0; i < 4; i++) {
		t[i].fd = self->o.fd;
		t[i].seed = i;
		t[i].errors = 0;
		create_req(_metadata, self->o.fd, self->o.exec, &t[i].req);
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&tid[i], NULL, infer_loop, &t[i]), 0);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pthread_join(tid[i], NULL), 0);
		EXPECT_EQ(t[i].errors, 0);
	}
}

/* One complete life: everything created, then only npr_close(). */
static void one_life(struct npr_test *_metadata)
{
	struct objs o = { .fd = -1 };
	struct npr_tensor_arg ta;
	float in[4];
	__u32 extra;

	objs_open(_metadata, &o);
	set_input(_metadata, o.fd, o.req, relu_in);
	infer(_metadata, o.fd, o.req);
	/* a bound input, a mapped output, a second request, a second model */
	memcpy(in, relu_in, sizeof(in));
	tensor_arg(&ta, o.req, 0, in);
	ta.flags |= NPR_TENSOR_BIND;
	ASSERT_EQ(IOC(o.fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_tensor(&ta, o.req, 0, 1, NULL, 0);
	ta.flags |= NPR_TENSOR_MAP;
	ASSERT_EQ(IOC(o.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	create_req(_metadata, o.fd, o.exec, &extra);
	load_relu(_metadata, o.fd, &extra);
	/* the model goes first: the exec and requests keep what they need */
	destroy(_metadata, o.fd, o.model);
	infer(_metadata, o.fd, o.req);
	ASSERT_EQ(npr_close(o.fd), 0);
	err_fd = -1;
}

static int count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!access(path, F_OK))
			n++;
	}
	return n;
}

#define TCACHE_OFF	"glibc.malloc.tcache_count=0"

/*
 * Measure the heap in a fresh copy of this program with glibc's
 * per-thread caches off: freed blocks sitting in a cache count as "in
 * use" for mallinfo2(), which would hide a leak or fake one.
 */
static void heap_check_in_child(struct npr_test *_metadata)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char tun[512], line[512];
	int pfd[2], status;
	FILE *in;
	pid_t pid;

	snprintf(tun, sizeof(tun), "%s%s" TCACHE_OFF,
		 old ? old : "", old ? ":" : "");
	ASSERT_EQ(pipe(pfd), 0);
	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		setenv("GLIBC_TUNABLES", tun, 1);
		execl("/proc/self/exe", "uapi_test", "-t",
		      "close_frees_everything", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	ASSERT_NONNULL(in);
	/* pass its diagnostics on, nothing else */
	while (fgets(line, sizeof(line), in))
		if (!strncmp(line, "# ", 2) && strncmp(line, "# RUN", 5) &&
		    strncmp(line, "# Totals", 8))
			TH_LOG("  %s", line + 2);
	fclose(in);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	status = WEXITSTATUS(status);
	if (status == 127)
		TH_LOG("could not run /proc/self/exe");
	EXPECT_EQ(status, 0);
}

/*
 * Closing the fd frees everything it owns.  valgrind (make check runs
 * this program under it when listed in NPR_VALGRIND) sees every leak.
 * Without valgrind: descriptors are counted, and on glibc the heap in use
 * is compared across repeated lives (in a child without malloc caches).
 */
TEST(close_frees_everything)
{
	const char *tun = getenv("GLIBC_TUNABLES");
	int i, fds;

	/* the first lives may grow tables and library state for good */
	for (i = 0; i < 3; i++)
		one_life(_metadata);
	fds = count_fds();
	for (i = 0; i < 5; i++)
		one_life(_metadata);
	EXPECT_EQ(count_fds(), fds);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || \
	(__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	if (getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "vgpreload")) {
		/* under valgrind: it does the counting, better */
		TH_LOG("heap: left to valgrind");
	} else if (!tun || !strstr(tun, TCACHE_OFF)) {
		heap_check_in_child(_metadata);
	} else {
		size_t base = mallinfo2().uordblks, now;

		for (i = 0; i < 10; i++)
			one_life(_metadata);
		now = mallinfo2().uordblks;
		TH_LOG("heap in use before 10 more lives: %zu, after: %zu",
		       base, now);
		EXPECT_EQ(now, base);
	}
#else
	(void)tun;
#endif
}

TEST(close_with_objects_of_two_fds)
{
	struct objs a = { .fd = -1 }, b = { .fd = -1 };
	float out[4];
	int i;

	objs_open(_metadata, &a);
	objs_open(_metadata, &b);
	/* closing one fd leaves the other's objects alone */
	ASSERT_EQ(npr_close(a.fd), 0);
	err_fd = b.fd;
	set_input(_metadata, b.fd, b.req, relu_in);
	infer(_metadata, b.fd, b.req);
	get_output(_metadata, b.fd, b.req, out);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(out[i], relu_want[i]);
	objs_close(_metadata, &b);
}

TEST_HARNESS_MAIN
