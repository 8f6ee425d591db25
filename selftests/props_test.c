// SPDX-License-Identifier: MIT
/*
 * Properties through GET_PARAM, SET_PARAM, PROP_INFO and COMPILE: every
 * property is described, typed and readable where its scope says; writes
 * are checked (read-only, wrong type, out of range, unknown enum name)
 * each with its own errno; compile-time properties override the device's
 * for that compiled model only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "npuring.h"

static const char tiny_xml[] =
	"<?xml version=\"1.0\"?>\n"
	"<net name=\"tiny\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,4\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</output></layer>"
	"<layer id=\"1\" name=\"r\" type=\"ReLU\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</input><output>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</output></layer>"
	"<layer id=\"2\" name=\"y\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</input></layer></layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>"
	"</edges></net>\n";

/* The names the device-plugin contract asks for, all on the device. */
static const char *const contract[] = {
	"SUPPORTED_PROPERTIES", "AVAILABLE_DEVICES", "FULL_DEVICE_NAME",
	"DEVICE_ARCHITECTURE", "DEVICE_TYPE", "DEVICE_UUID",
	"OPTIMIZATION_CAPABILITIES", "RANGE_FOR_ASYNC_INFER_REQUESTS",
	"RANGE_FOR_STREAMS", "OPTIMAL_NUMBER_OF_INFER_REQUESTS",
	"DEVICE_ID", "ENABLE_PROFILING", "PERFORMANCE_HINT",
	"PERFORMANCE_HINT_NUM_REQUESTS", "INFERENCE_PRECISION_HINT",
	"EXECUTION_MODE_HINT", "NUM_STREAMS", "INFERENCE_NUM_THREADS",
	"ENABLE_CPU_PINNING", "MODEL_PRIORITY", "LOG_LEVEL", "CACHE_DIR",
	"CACHING_PROPERTIES", "DISABLE_TRANSFORMATIONS",
	"EXCLUSIVE_ASYNC_REQUESTS", "COMPILATION_NUM_THREADS",
};

FIXTURE(props) {
	int fd;
	__u32 model, exec;
	char buf[8192];
};

FIXTURE_SETUP(props)
{
	struct npr_model_load ml;
	struct npr_compile co;

	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	npr_prep_model_load_mem(&ml, tiny_xml, strlen(tiny_xml), NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	self->model = ml.handle;
	npr_prep_compile(&co, self->model);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), 0);
	self->exec = co.exec;
}

FIXTURE_TEARDOWN(props)
{
	if (self->fd >= 0)
		npr_close(self->fd);
}

static int get(int fd, __u32 handle, __u32 id, __u32 type, void *buf,
	       __u32 len, struct npr_param *out)
{
	struct npr_param pa = {
		.size = sizeof(pa), .handle = handle, .param = id,
		.type = type, .ptr = (uintptr_t)buf, .len = buf ? len : 0,
	};
	int err = npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa);

	if (out)
		*out = pa;
	return err;
}

static int set_int(int fd, __u32 id, int64_t v)
{
	struct npr_param pa = {
		.size = sizeof(pa), .param = id, .value = (__u64)v,
	};

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
}

static int set_str(int fd, __u32 id, const char *s)
{
	struct npr_param pa = {
		.size = sizeof(pa), .param = id, .ptr = (uintptr_t)s,
		.len = (__u32)strlen(s) + 1,
	};

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
}

static int64_t get_int(struct npr_test *_metadata, int fd, __u32 handle,
		       __u32 id)
{
	struct npr_param pa;

	EXPECT_EQ(get(fd, handle, id, 0, NULL, 0, &pa), 0);
	return (int64_t)pa.value;
}

/* Does the NUL-separated list @l (ended by an empty string) hold @s? */
static bool in_list(const char *l, const char *s)
{
	for (; *l; l += strlen(l) + 1)
		if (!strcmp(l, s))
			return true;
	return false;
}

static int list_len(const char *l)
{
	int n = 0;

	for (; *l; l += strlen(l) + 1)
		n++;
	return n;
}

TEST_F(props, contract_names_are_supported)
{
	size_t i;

	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_SUPPORTED_PROPERTIES,
		      NPR_PROP_LIST, self->buf, sizeof(self->buf), NULL), 0);
	for (i = 0; i < sizeof(contract) / sizeof(contract[0]); i++) {
		struct npr_prop_info pi = {
			.size = sizeof(pi), .flags = NPR_PROP_INFO_BY_NAME,
		};
		char rw[80], ro[80];

		snprintf(rw, sizeof(rw), "%s:RW", contract[i]);
		snprintf(ro, sizeof(ro), "%s:RO", contract[i]);
		if (!in_list(self->buf, rw) && !in_list(self->buf, ro))
			TH_LOG("%s missing from SUPPORTED_PROPERTIES",
			       contract[i]);
		EXPECT_TRUE(in_list(self->buf, rw) ||
			    in_list(self->buf, ro));
		snprintf(pi.name, sizeof(pi.name), "%s", contract[i]);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PROP_INFO, &pi), 0);
		EXPECT_EQ(in_list(self->buf, rw),
			  !!(pi.access & NPR_PROP_ACCESS_RW));
	}
}

/* Walk PROP_INFO by index; each entry reads back with its own type, by id
 * and by name, and the count matches SUPPORTED_PROPERTIES. */
static void walk(struct npr_test *_metadata, int fd, __u32 handle,
		 char *buf, size_t len)
{
	char list[8192];
	__u32 i;

	ASSERT_EQ(get(fd, handle, NPR_PARAM_SUPPORTED_PROPERTIES, 0, list,
		      sizeof(list), NULL), 0);
	for (i = 0;; i++) {
		struct npr_prop_info pi = {
			.size = sizeof(pi), .handle = handle, .index = i,
		};
		struct npr_prop_info by = pi;
		struct npr_param pa;
		int err;

		err = npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi);
		if (err == -ENOENT)
			break;
		ASSERT_EQ(err, 0);
		by.flags = NPR_PROP_INFO_BY_ID;
		by.id = pi.id;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &by), 0);
		EXPECT_STREQ(by.name, pi.name);
		memset(&by, 0, sizeof(by));
		by.size = sizeof(by);
		by.handle = handle;
		by.flags = NPR_PROP_INFO_BY_NAME;
		strcpy(by.name, pi.name);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &by), 0);
		EXPECT_EQ(by.id, pi.id);
		EXPECT_EQ(by.type, pi.type);

		if (pi.type == NPR_PROP_INT || pi.type == NPR_PROP_BOOL)
			err = get(fd, handle, pi.id, pi.type, NULL, 0, &pa);
		else
			err = get(fd, handle, pi.id, pi.type, buf, (__u32)len,
				  &pa);
		if (err)
			TH_LOG("%s: %d %s", pi.name, err, npr_last_error());
		EXPECT_EQ(err, 0);
		EXPECT_EQ(pa.type, pi.type);
		if (pi.type == NPR_PROP_BOOL)
			EXPECT_LE(pa.value, 1);
		if (pi.type == NPR_PROP_ENUM)
			EXPECT_GT(strlen(buf), 0);
		EXPECT_TRUE(i < (__u32)list_len(list));
	}
	EXPECT_EQ(i, (__u32)list_len(list));
	EXPECT_GE(i, 10);
}

TEST_F(props, device_properties_walk)
{
	walk(_metadata, self->fd, 0, self->buf, sizeof(self->buf));
}

TEST_F(props, exec_properties_walk)
{
	walk(_metadata, self->fd, self->exec, self->buf, sizeof(self->buf));
}

TEST_F(props, scopes)
{
	/* device-only and exec-only properties */
	EXPECT_EQ(get(self->fd, self->exec, NPR_PARAM_AVAILABLE_DEVICES, 0,
		      self->buf, sizeof(self->buf), NULL), -ENOPROTOOPT);
	EXPECT_EQ(get(self->fd, 0, NPR_PARAM_EXECUTION_DEVICES, 0, self->buf,
		      sizeof(self->buf), NULL), -ENOPROTOOPT);
	ASSERT_EQ(get(self->fd, self->exec, NPR_PARAM_EXECUTION_DEVICES, 0,
		      self->buf, sizeof(self->buf), NULL), 0);
	EXPECT_TRUE(in_list(self->buf, "cpu"));
	ASSERT_EQ(get(self->fd, self->exec, NPR_PARAM_MODEL_NAME, 0,
		      self->buf, sizeof(self->buf), NULL), 0);
	EXPECT_STREQ(self->buf, "tiny");
	/* every property of a compiled model is read-only there */
	ASSERT_EQ(get(self->fd, self->exec, NPR_PARAM_SUPPORTED_PROPERTIES, 0,
		      self->buf, sizeof(self->buf), NULL), 0);
	EXPECT_TRUE(in_list(self->buf, "PERFORMANCE_HINT:RO"));
	EXPECT_FALSE(in_list(self->buf, "AVAILABLE_DEVICES:RO"));
}

TEST_F(props, errnos)
{
	struct npr_param pa = { .size = sizeof(pa) };
	struct npr_prop_info pi = {
		.size = sizeof(pi), .flags = NPR_PROP_INFO_BY_NAME,
		.name = "NO_SUCH_PROPERTY",
	};
	char nonul[4] = { 'a', 'b', 'c', 'd' };

	/* unknown */
	EXPECT_EQ(get(self->fd, 0, 999, 0, NULL, 0, NULL), -ENOPROTOOPT);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PROP_INFO, &pi), -ENOPROTOOPT);
	/* wrong type, both ways */
	EXPECT_EQ(get(self->fd, 0, NPR_PARAM_FULL_DEVICE_NAME, NPR_PROP_INT,
		      NULL, 0, NULL), -EPROTOTYPE);
	EXPECT_EQ(get(self->fd, 0, NPR_PARAM_NUM_STREAMS, NPR_PROP_STRING,
		      self->buf, sizeof(self->buf), NULL), -EPROTOTYPE);
	/* read-only */
	EXPECT_EQ(set_int(self->fd, NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS,
			  2), -EPERM);
	EXPECT_EQ(set_str(self->fd, NPR_PARAM_DEVICE_UUID, "x"), -EPERM);
	/* out of range */
	EXPECT_EQ(set_int(self->fd, NPR_PARAM_ENABLE_PROFILING, 2), -ERANGE);
	EXPECT_EQ(set_int(self->fd, NPR_PARAM_INFERENCE_NUM_THREADS, -1),
		  -ERANGE);
	EXPECT_EQ(set_int(self->fd, NPR_PARAM_NUM_STREAMS, 0), -ERANGE);
	EXPECT_EQ(set_int(self->fd, NPR_PARAM_NUM_STREAMS,
			  sysconf(_SC_NPROCESSORS_CONF) + 1000), -ERANGE);
	EXPECT_EQ(set_int(self->fd, NPR_PARAM_MODEL_PRIORITY, 99), -ERANGE);
	/* bad enum name, bad string */
	EXPECT_EQ(set_str(self->fd, NPR_PARAM_PERFORMANCE_HINT, "FAST"),
		  -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "PERFORMANCE_HINT"), NULL);
	pa.param = NPR_PARAM_CACHE_DIR;
	pa.ptr = (uintptr_t)nonul;
	pa.len = sizeof(nonul);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_PARAM, &pa), -EINVAL);
	/* the cpu device computes in f32 only */
	EXPECT_EQ(set_str(self->fd, NPR_PARAM_INFERENCE_PRECISION_HINT,
			  "f16"), -EINVAL);
	EXPECT_EQ(set_str(self->fd, NPR_PARAM_INFERENCE_PRECISION_HINT,
			  "f32"), 0);
	/* nothing above changed a value */
	EXPECT_EQ(get_int(_metadata, self->fd, 0, NPR_PARAM_NUM_STREAMS),
		  NPR_NUM_STREAMS_AUTO);
	EXPECT_EQ(get_int(_metadata, self->fd, 0, NPR_PARAM_MODEL_PRIORITY),
		  NPR_PRIORITY_MEDIUM);
	EXPECT_EQ(get_int(_metadata, self->fd, 0, NPR_PARAM_PERFORMANCE_HINT),
		  NPR_PERF_HINT_LATENCY);
	/* a compiled model's properties are fixed */
	pa.handle = self->exec;
	pa.param = NPR_PARAM_ENABLE_PROFILING;
	pa.ptr = 0;
	pa.len = 0;
	pa.value = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_PARAM, &pa), -EPERM);
}

TEST_F(props, values_round_trip)
{
	struct npr_param pa;

	ASSERT_EQ(set_str(self->fd, NPR_PARAM_PERFORMANCE_HINT, "THROUGHPUT"),
		  0);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_PERFORMANCE_HINT, NPR_PROP_ENUM,
		      self->buf, sizeof(self->buf), &pa), 0);
	EXPECT_EQ(pa.value, NPR_PERF_HINT_THROUGHPUT);
	EXPECT_STREQ(self->buf, "THROUGHPUT");
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_LOG_LEVEL, NPR_LOG_DEBUG), 0);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_LOG_LEVEL, 0, self->buf,
		      sizeof(self->buf), &pa), 0);
	EXPECT_STREQ(self->buf, "LOG_DEBUG");
	ASSERT_EQ(set_str(self->fd, NPR_PARAM_CACHE_DIR, "/tmp/some cache"),
		  0);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_CACHE_DIR, NPR_PROP_STRING,
		      self->buf, sizeof(self->buf), NULL), 0);
	EXPECT_STREQ(self->buf, "/tmp/some cache");
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_NUM_STREAMS, 1), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, 0, NPR_PARAM_NUM_STREAMS), 1);
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_NUM_STREAMS,
			  NPR_NUM_STREAMS_AUTO), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, 0, NPR_PARAM_NUM_STREAMS),
		  NPR_NUM_STREAMS_AUTO);
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_ENABLE_CPU_PINNING, 1), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, 0,
			  NPR_PARAM_ENABLE_CPU_PINNING), 1);
}

TEST_F(props, device_facts)
{
	struct npr_param pa;
	int64_t range[3];
	char uuid[64];
	int fd2;

	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_OPTIMIZATION_CAPABILITIES, 0,
		      self->buf, sizeof(self->buf), NULL), 0);
	EXPECT_TRUE(in_list(self->buf, "FP32"));
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_AVAILABLE_DEVICES, 0, self->buf,
		      sizeof(self->buf), NULL), 0);
	EXPECT_TRUE(in_list(self->buf, "cpu"));
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_CACHING_PROPERTIES, 0, self->buf,
		      sizeof(self->buf), NULL), 0);
	EXPECT_TRUE(in_list(self->buf, "DEVICE_ARCHITECTURE"));
	EXPECT_TRUE(in_list(self->buf, "INFERENCE_PRECISION_HINT"));
	EXPECT_FALSE(in_list(self->buf, "LOG_LEVEL"));
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_RANGE_FOR_STREAMS,
		      NPR_PROP_INT_LIST, range, sizeof(range), &pa), 0);
	EXPECT_EQ(pa.len, sizeof(range));
	EXPECT_EQ(range[0], 1);
	EXPECT_GE(range[1], 1);
	EXPECT_EQ(range[2], 1);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_RANGE_FOR_ASYNC_INFER_REQUESTS,
		      0, range, sizeof(range), NULL), 0);
	EXPECT_EQ(range[0], 1);
	EXPECT_GE(range[1], range[0]);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_DEVICE_TYPE, 0, self->buf,
		      sizeof(self->buf), &pa), 0);
	EXPECT_EQ(pa.value, NPR_DEVICE_KIND_INTEGRATED);
	EXPECT_STREQ(self->buf, "integrated");
	/* the UUID: 8-4-4-4-12 hex digits, the same on every open */
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_DEVICE_UUID, 0, uuid,
		      sizeof(uuid), NULL), 0);
	EXPECT_EQ(strlen(uuid), 36);
	EXPECT_EQ(uuid[8], '-');
	EXPECT_EQ(strspn(uuid, "0123456789abcdef-"), 36);
	fd2 = npr_open("cpu", 0);
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(get(fd2, 0, NPR_PARAM_DEVICE_UUID, 0, self->buf,
		      sizeof(self->buf), NULL), 0);
	EXPECT_STREQ(self->buf, uuid);
	npr_close(fd2);
	/* a list that does not fit: -EMSGSIZE and the size needed */
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_SUPPORTED_PROPERTIES, 0,
		      self->buf, 8, &pa), -EMSGSIZE);
	EXPECT_GT(pa.len, 8);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_SUPPORTED_PROPERTIES, 0,
		      self->buf, pa.len, NULL), 0);
}

TEST_F(props, compile_overrides_for_that_model_only)
{
	static const char dir[] = "/var/cache/x";
	struct npr_prop_arg args[] = {
		{ .param = NPR_PARAM_PERFORMANCE_HINT,
		  .value = NPR_PERF_HINT_THROUGHPUT },
		{ .param = NPR_PARAM_NUM_STREAMS, .value = 1 },
		{ .param = NPR_PARAM_CACHE_DIR, .value = (uintptr_t)dir },
		{ .param = NPR_PARAM_ENABLE_PROFILING, .value = 1 },
	};
	struct npr_compile co;
	__u32 exec;

	npr_prep_compile(&co, self->model);
	co.props = (uintptr_t)args;
	co.num_props = sizeof(args) / sizeof(args[0]);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), 0);
	exec = co.exec;
	EXPECT_EQ(get_int(_metadata, self->fd, exec,
			  NPR_PARAM_PERFORMANCE_HINT), NPR_PERF_HINT_THROUGHPUT);
	EXPECT_EQ(get_int(_metadata, self->fd, exec, NPR_PARAM_NUM_STREAMS),
		  1);
	EXPECT_EQ(get_int(_metadata, self->fd, exec,
			  NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 1);
	EXPECT_EQ(get_int(_metadata, self->fd, exec,
			  NPR_PARAM_ENABLE_PROFILING), 1);
	ASSERT_EQ(get(self->fd, exec, NPR_PARAM_CACHE_DIR, 0, self->buf,
		      sizeof(self->buf), NULL), 0);
	EXPECT_STREQ(self->buf, dir);
	/* the device and the model compiled before are unchanged */
	EXPECT_EQ(get_int(_metadata, self->fd, 0, NPR_PARAM_PERFORMANCE_HINT),
		  NPR_PERF_HINT_LATENCY);
	EXPECT_EQ(get_int(_metadata, self->fd, 0,
			  NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 1);
	EXPECT_EQ(get_int(_metadata, self->fd, self->exec,
			  NPR_PARAM_ENABLE_PROFILING), 0);
	ASSERT_EQ(get(self->fd, 0, NPR_PARAM_CACHE_DIR, 0, self->buf,
		      sizeof(self->buf), NULL), 0);
	EXPECT_STREQ(self->buf, "");
	/* later device changes do not reach a compiled model */
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_ENABLE_PROFILING, 1), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, self->exec,
			  NPR_PARAM_ENABLE_PROFILING), 0);
}

TEST_F(props, throughput_hint_asks_for_more_requests)
{
	struct npr_device_info di = { .size = sizeof(di) };

	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_PERFORMANCE_HINT,
			  NPR_PERF_HINT_THROUGHPUT), 0);
	/* one request per CPU the device may use */
	EXPECT_EQ(get_int(_metadata, self->fd, 0,
			  NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS),
		  di.num_threads);
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_INFERENCE_NUM_THREADS, 3), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, 0,
			  NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 3);
	/* capped by PERFORMANCE_HINT_NUM_REQUESTS */
	ASSERT_EQ(set_int(self->fd, NPR_PARAM_PERFORMANCE_HINT_NUM_REQUESTS,
			  2), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, 0,
			  NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 2);
	/* LATENCY: one */
	ASSERT_EQ(set_str(self->fd, NPR_PARAM_PERFORMANCE_HINT, "LATENCY"), 0);
	EXPECT_EQ(get_int(_metadata, self->fd, 0,
			  NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 1);
}

TEST_F(props, compile_rejects_bad_properties)
{
	struct npr_prop_arg arg = { .param = NPR_PARAM_DEVICE_UUID };
	struct npr_compile co;

	npr_prep_compile(&co, self->model);
	co.props = (uintptr_t)&arg;
	co.num_props = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), -EPERM);
	EXPECT_EQ(co.exec, 0);
	arg.param = NPR_PARAM_NUM_STREAMS;
	arg.value = 0;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), -ERANGE);
	arg.param = 12345;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), -ENOPROTOOPT);
	arg.param = NPR_PARAM_CACHE_DIR;
	arg.value = 0;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	EXPECT_EQ(co.exec, 0);
}

TEST_HARNESS_MAIN
