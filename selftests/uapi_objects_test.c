// SPDX-License-Identifier: MIT
/*
 * The objects of the uapi, through the public API only, on the relu model
 * command by command: device info, params, compile properties, model and
 * port info, tensor copy/bind/map semantics, handle lifetimes, per-thread
 * error messages, requests run concurrently, and cleanup on close.  The
 * relu model and the ioctl wrappers: uapi_util.h.
 */
#define _GNU_SOURCE
#include "uapi_util.h"

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

	/* bad shapes: rank 0, a dim below -1 (-1: dynamic), dims past the
	 * rank, bad index */
	sa.rank = 0;
	EXPECT_EQ(IOC(self->o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	sa.rank = 2;
	sa.dims[0] = -2;
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
	/* a model needs no memory of its own yet */
	EXPECT_EQ(mi.exec_bytes, 0);
	EXPECT_EQ(mi.request_bytes, 0);

	/* an exec answers too, with what a request of it needs */
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = self->o.exec;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 1);
	EXPECT_EQ(mi.num_outputs, 1);
	EXPECT_GT(mi.request_bytes, 0);
	EXPECT_LT(mi.request_bytes, 1 << 20);
}

TEST_F(relu, model_info_version_1_gets_no_bytes)
{
	struct npr_model_info mi;

	/* a caller of the 32-byte struct: nothing past it is written */
	memset(&mi, 0xa5, sizeof(mi));
	mi.size = offsetof(struct npr_model_info, exec_bytes);
	mi.flags = 0;
	mi.reserved = 0;
	mi.handle = self->o.exec;
	ASSERT_EQ(IOC(self->o.fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 1);
	EXPECT_EQ(mi.exec_bytes, 0xa5a5a5a5a5a5a5a5ull);
	EXPECT_EQ(mi.request_bytes, 0xa5a5a5a5a5a5a5a5ull);
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
		execl("/proc/self/exe", "uapi_objects_test", "-t",
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
