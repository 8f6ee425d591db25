// SPDX-License-Identifier: MIT
/*
 * The ABI, through the public API only: struct sizes, field offsets, ioctl
 * numbers and enum values checked at run time, element types, and
 * npr_open() / npr_close() (unknown devices, bad arguments and fds, errno
 * left alone), npr_version() against the header's version.  The relu
 * model and the ioctl wrappers: uapi_util.h.
 */
#define _GNU_SOURCE
#include "uapi_util.h"

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

/* ---- the ABI, checked at run time -------------------------------------- */

#define CHECK_OFF(type, field, off)					\
	EXPECT_EQ(offsetof(struct type, field), (size_t)(off))

TEST(abi_struct_sizes)
{
	EXPECT_EQ(sizeof(struct npr_device_info), 224);
	EXPECT_EQ(sizeof(struct npr_param), 40);
	EXPECT_EQ(sizeof(struct npr_model_load), 48);
	EXPECT_EQ(sizeof(struct npr_model_info), 48);
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
	CHECK_OFF(npr_model_info, exec_bytes, 32);
	CHECK_OFF(npr_model_info, request_bytes, 40);

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

/* npr_version() is the header's NPURING_VERSION_MAJOR.MINOR.PATCH */
TEST(version_is_the_headers)
{
	char want[64];

	snprintf(want, sizeof(want), "%d.%d.%d", NPURING_VERSION_MAJOR,
		 NPURING_VERSION_MINOR, NPURING_VERSION_PATCH);
	ASSERT_NONNULL(npr_version());
	EXPECT_STREQ(npr_version(), want);
	/* a static string: the same pointer every time */
	EXPECT_EQ(npr_version(), npr_version());
}

TEST_HARNESS_MAIN
