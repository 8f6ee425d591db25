// SPDX-License-Identifier: MIT
/*
 * The npu device over vnpu, the software NPU: real models agree with the
 * cpu device, device properties, fault injection, and the same models
 * through the loader's intercept mode and validation layer.
 *
 * vnpu is found through NPR_VNPU (set by `make check`) or next to this
 * program in the build tree (../npu/vnpu/libze_intel_vpu.so.1).  Without
 * the Level Zero loader, or without vnpu and an NPU, the tests skip and say
 * why.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <npuring.h>

#include "backend.h"
#include "passes/compile.h"
#include "store/blob.h"
#include "graph/graph.h"
#include "ir/ir.h"
#include "onnx/onnx.h"

#include "blob_io.h"
#include "harness.h"

#define MAX_PORTS	8

/*
 * vnpu runs the graph it is given with the same CPU kernels as the cpu
 * device; the graph it gets is the compiled one re-serialized (constants
 * already in f32), so results agree to float rounding of equal operations.
 * Allow 1e-4 relative to the output's range.
 */
#define NPU_REL_TOL	1e-4

static char npu_skip[512];

/* Point the loader at vnpu (NPR_VNPU); false if there is none to use. */
static bool find_vnpu(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *v = getenv("NPR_VNPU");
	ssize_t n;

	if ((v && *v) || getenv("ZE_ENABLE_ALT_DRIVERS"))
		return true;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/../npu/vnpu/libze_intel_vpu.so.1",
		 dirname(exe));
	if (access(path, R_OK))
		return false;
	setenv("NPR_VNPU", path, 1);
	return true;
}

/* Point the loader at vnpu; return false (with npu_skip set) if absent. */
static bool npu_available(void)
{
	static int state;	/* 0 unknown, 1 yes, -1 no */
	int fd;

	if (state)
		return state > 0;
	find_vnpu();
	fd = npr_open("npu", 0);
	if (fd < 0) {
		snprintf(npu_skip, sizeof(npu_skip), "%s", npr_last_error());
		state = -1;
		return false;
	}
	npr_close(fd);
	state = 1;
	return true;
}

#define REQUIRE_NPU()							\
	do {								\
		if (!npr_test_shared_ok())				\
			SKIP(return, "no shared data at %s (set NPR_SHARED)", \
			     npr_test_shared());			\
		if (!npu_available())					\
			SKIP(return, "no npu device: %s", npu_skip);	\
	} while (0)

struct net {
	int fd;
	__u32 model, exec, req;
	__u32 nin, nout;
	__u32 type[2][MAX_PORTS];
	size_t bytes[2][MAX_PORTS];
	__u32 rank[2][MAX_PORTS];
	__s64 dims[2][MAX_PORTS][NPR_MAX_RANK];
};

static int net_open_shape(struct npr_test *_metadata, struct net *n,
			  const char *dev, const char *path,
			  const __s64 *shape);

static int net_attach(struct npr_test *_metadata, struct net *n, __u32 exec);

static int net_open(struct npr_test *_metadata, struct net *n,
		    const char *dev, const char *path)
{
	return net_open_shape(_metadata, n, dev, path, NULL);
}

/* @shape: NULL, or a static [N,C,H,W] for input 0 (dynamic models). */
static int net_open_shape(struct npr_test *_metadata, struct net *n,
			  const char *dev, const char *path,
			  const __s64 *shape)
{
	struct npr_shape_arg sa = { .index = 0, .rank = 4 };
	struct npr_model_load ml;
	struct npr_compile co;
	int ret;

	memset(n, 0, sizeof(*n));
	n->fd = npr_open(dev, 0);
	if (n->fd < 0)
		TH_LOG("open %s: %s", dev, npr_last_error());
	ASSERT_GE(n->fd, 0);
	npr_prep_model_load(&ml, path, NULL);
	ret = npr_ioctl(n->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (ret)
		TH_LOG("%s: MODEL_LOAD: %s", path, npr_last_error());
	ASSERT_EQ(ret, 0);
	n->model = ml.handle;
	npr_prep_compile(&co, n->model);
	if (shape) {
		memcpy(sa.dims, shape, 4 * sizeof(*shape));
		co.shapes = (uintptr_t)&sa;
		co.num_shapes = 1;
	}
	ret = npr_ioctl(n->fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		return ret;
	return net_attach(_metadata, n, co.exec);
}

/* A request of compiled model @exec on n->fd, and its ports. */
static int net_attach(struct npr_test *_metadata, struct net *n, __u32 exec)
{
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_req_create rc;
	__u32 i, k;
	int ret;

	n->exec = exec;
	npr_prep_req_create(&rc, n->exec);
	ret = npr_ioctl(n->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (ret)
		return ret;
	n->req = rc.req;
	mi.handle = n->exec;
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	ASSERT_LE(mi.num_inputs, MAX_PORTS);
	ASSERT_LE(mi.num_outputs, MAX_PORTS);
	n->nin = mi.num_inputs;
	n->nout = mi.num_outputs;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < (k ? n->nout : n->nin); i++) {
			struct npr_port_info pi;
			size_t count = 1;
			__u32 d;

			npr_prep_port_info(&pi, n->exec, i, k, NULL, 0);
			ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
			n->type[k][i] = pi.elem_type;
			n->rank[k][i] = pi.rank;
			for (d = 0; d < pi.rank; d++) {
				n->dims[k][i][d] = pi.dims[d];
				count *= (size_t)pi.dims[d];
			}
			n->bytes[k][i] = count * npr_elem_size(pi.elem_type);
		}
	}
	return 0;
}

/* Deterministic input: f32 values in [0, 1), else bytes. */
static void net_fill(struct npr_test *_metadata, struct net *n, __u32 seed)
{
	__u32 i;

	for (i = 0; i < n->nin; i++) {
		unsigned char *buf = malloc(n->bytes[0][i]);
		struct npr_tensor_arg t;
		size_t j;

		ASSERT_NONNULL(buf);
		for (j = 0; j < n->bytes[0][i]; j++) {
			seed = seed * 1103515245u + 12345u;
			buf[j] = seed >> 16;
		}
		if (n->type[0][i] == NPR_ELEM_F32)
			for (j = 0; j < n->bytes[0][i] / 4; j++)
				((float *)buf)[j] = buf[j * 4] / 256.0f;
		npr_prep_tensor(&t, n->req, i, 0, buf, n->bytes[0][i]);
		t.elem_type = n->type[0][i];
		t.rank = n->rank[0][i];
		memcpy(t.dims, n->dims[0][i], sizeof(t.dims));
		ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_SET_TENSOR, &t), 0);
		free(buf);
	}
}

static int net_infer(struct net *n)
{
	struct npr_infer inf = { .size = sizeof(inf), .req = n->req };

	return npr_ioctl(n->fd, NPR_IOCTL_INFER, &inf);
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
	float f;

	if (!exp) {
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		x = sign | 0x7f800000u | (man << 13);
	else
		x = sign | ((exp + 112) << 23) | (man << 13);
	memcpy(&f, &x, sizeof(f));
	return f;
}

/* Output @i as floats (f32 or f16 ports). */
static float *net_output(struct npr_test *_metadata, struct net *n, __u32 i,
			 size_t *count)
{
	size_t elem = npr_elem_size(n->type[1][i]), j;
	struct npr_tensor_arg t;
	void *buf = malloc(n->bytes[1][i]);
	float *f;

	*count = elem ? n->bytes[1][i] / elem : 0;
	f = malloc(*count * sizeof(float) + 1);
	if (!buf || !f || (n->type[1][i] != NPR_ELEM_F32 &&
			   n->type[1][i] != NPR_ELEM_F16))
		goto fail;
	npr_prep_tensor(&t, n->req, i, 1, buf, n->bytes[1][i]);
	if (npr_ioctl(n->fd, NPR_IOCTL_GET_TENSOR, &t))
		goto fail;
	for (j = 0; j < *count; j++)
		f[j] = n->type[1][i] == NPR_ELEM_F32 ? ((float *)buf)[j] :
			half_to_float(((uint16_t *)buf)[j]);
	free(buf);
	return f;
fail:
	free(buf);
	free(f);
	return NULL;
}

static void net_close(struct net *n)
{
	if (n->fd >= 0)
		npr_close(n->fd);
	n->fd = -1;
}

/* @rel under models/ir, or an absolute path. */
static void model_path(char *buf, size_t len, const char *rel)
{
	int n = rel[0] == '/' ? snprintf(buf, len, "%s", rel) :
		snprintf(buf, len, "%s/models/ir/%s", npr_test_shared(), rel);

	if (n < 0 || (size_t)n >= len)
		buf[0] = 0;
}

/*
 * Run @rel on cpu and npu with the same inputs, @steps inferences on one
 * request (stateful models carry state between them); every output of
 * every step must agree.
 */
static void compare_with_cpu(struct npr_test *_metadata, const char *rel,
			     const __s64 *shape, int steps)
{
	struct net c, p;
	char path[4096];
	int step, ret;
	__u32 i;

	model_path(path, sizeof(path), rel);
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	ASSERT_EQ(net_open_shape(_metadata, &c, "cpu", path, shape), 0);
	if (net_open_shape(_metadata, &p, "npu", path, shape))
		TH_LOG("npu: %s", npr_last_error());
	ASSERT_GT(p.req, 0);
	ASSERT_EQ(p.nin, c.nin);
	ASSERT_EQ(p.nout, c.nout);
	for (step = 0; step < steps; step++) {
		net_fill(_metadata, &c, 7 + step);
		net_fill(_metadata, &p, 7 + step);
		ASSERT_EQ(net_infer(&c), 0);
		ret = net_infer(&p);
		if (ret)
			TH_LOG("npu infer: %s", npr_last_error());
		ASSERT_EQ(ret, 0);
		for (i = 0; i < c.nout; i++) {
			size_t j, count, count2;
			float *a = net_output(_metadata, &c, i, &count);
			float *b = net_output(_metadata, &p, i, &count2);
			float lo = INFINITY, hi = -INFINITY, diff = 0;

			ASSERT_EQ(p.type[1][i], c.type[1][i]);
			ASSERT_EQ(count, count2);
			ASSERT_NONNULL(a);
			ASSERT_NONNULL(b);
			for (j = 0; j < count; j++) {
				lo = fminf(lo, a[j]);
				hi = fmaxf(hi, a[j]);
				diff = fmaxf(diff, fabsf(a[j] - b[j]));
			}
			if (step == steps - 1)
				TH_LOG("%s output %u: %zu values, range %g..%g, max |cpu-npu| %g",
				       rel, i, count, lo, hi, diff);
			EXPECT_LE(diff, NPU_REL_TOL * fmaxf(hi - lo, 1e-6f));
			free(a);
			free(b);
		}
	}
	net_close(&c);
	net_close(&p);
}

/* ---- the models agree with the cpu device ------------------------------- */

FIXTURE(npu_model) {
	int unused;
};

FIXTURE_VARIANT(npu_model) {
	const char *path;	/* under models/ir, or ../onnx/... */
	__s64 shape[4];		/* input 0's static shape, if dynamic */
	int steps;		/* inferences in a row (stateful models) */
};

FIXTURE_VARIANT_ADD(npu_model, squeezenet_fp16) {
	.path = "squeezenet1.1/FP16/squeezenet1.1.xml",
};
FIXTURE_VARIANT_ADD(npu_model, landmarks_fp32) {
	.path = "landmarks-regression-retail-0009/FP32/landmarks-regression-retail-0009.xml",
};
FIXTURE_VARIANT_ADD(npu_model, landmarks_fp16_int8) {
	.path = "landmarks-regression-retail-0009/FP16-INT8/landmarks-regression-retail-0009.xml",
};
FIXTURE_VARIANT_ADD(npu_model, eye_fp32) {
	.path = "open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
};
FIXTURE_VARIANT_ADD(npu_model, eye_fp16) {
	.path = "open-closed-eye-0001/FP16/open-closed-eye-0001.xml",
};
/* three outputs of one shape: ports must not be matched by size */
FIXTURE_VARIANT_ADD(npu_model, head_pose_fp16) {
	.path = "head-pose-estimation-adas-0001/FP16-v11/head-pose-estimation-adas-0001.xml",
};
/* three inputs */
FIXTURE_VARIANT_ADD(npu_model, gaze_fp16_int8) {
	.path = "gaze-estimation-adas-0002/FP16-INT8/gaze-estimation-adas-0002.xml",
};
FIXTURE_VARIANT_ADD(npu_model, license_plate_fp16) {
	.path = "license-plate-recognition-barrier-0001/FP16/license-plate-recognition-barrier-0001.xml",
};
FIXTURE_VARIANT_ADD(npu_model, face_detection_fp16_int8) {
	.path = "face-detection-retail-0004/FP16-INT8/face-detection-retail-0004.xml",
};
/* ONNX: the compiled graph of any frontend is what the NPU gets */
FIXTURE_VARIANT_ADD(npu_model, squeezenet_onnx) {
	.path = "../onnx/squeezenet1_1.onnx", .shape = { 1, 3, 224, 224 },
};
/* stateful: the variables travel as hidden graph arguments */
FIXTURE_VARIANT_ADD(npu_model, stateful_adder) {
	.path = "../ir-stateful/adder_v11.xml", .steps = 5,
};
FIXTURE_VARIANT_ADD(npu_model, stateful_sliding_window) {
	.path = "../ir-stateful/sliding_window_summator_v10.xml", .steps = 6,
};
FIXTURE_VARIANT_ADD(npu_model, person_attributes_fp32) {
	.path = "person-attributes-recognition-crossroad-0230/FP32/person-attributes-recognition-crossroad-0230.xml",
};
/* a Loop: its body, port map and back edge go to the driver as IR */
FIXTURE_VARIANT_ADD(npu_model, loop_2d_add) {
	.path = "../ir-small/loop_2d_add.xml",
};

FIXTURE_SETUP(npu_model)
{
	REQUIRE_NPU();
}

FIXTURE_TEARDOWN(npu_model)
{
}

TEST_F(npu_model, agrees_with_cpu)
{
	compare_with_cpu(_metadata, variant->path,
			 variant->shape[0] ? variant->shape : NULL,
			 variant->steps ? variant->steps : 1);
}

/* ---- device ------------------------------------------------------------- */

TEST(npu_device_info)
{
	struct npr_device_info di = { .size = sizeof(di) };
	int fd;

	REQUIRE_NPU();
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
	EXPECT_EQ(di.device_type, NPR_DEVICE_NPU);
	EXPECT_STREQ(di.name, "npu");
	TH_LOG("%s, architecture %s", di.full_name, di.arch);
	if (strstr(di.full_name, "vnpu"))
		EXPECT_TRUE(!strcmp(di.arch, "3720") ||
			    !strcmp(di.arch, "4000"));
	EXPECT_EQ(npr_close(fd), 0);
	fd = npr_open("npu.7", 0);
	EXPECT_EQ(fd, -ENODEV);
}

static int64_t get_int(int fd, uint32_t id)
{
	struct npr_param p = { .size = sizeof(p), .param = id };

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p) ? -1 : (int64_t)p.value;
}

static int set_int(int fd, uint32_t id, uint64_t v)
{
	struct npr_param p = { .size = sizeof(p), .param = id, .value = v };

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p);
}

/* The NPU plugin's table: 1 for LATENCY; THROUGHPUT 4 on 3720, 8 on 4000 */
TEST(npu_optimal_number_of_infer_requests)
{
	char arch[32];
	struct npr_param p = { .size = sizeof(p) };
	int fd;

	REQUIRE_NPU();
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	p.param = NPR_PARAM_DEVICE_ARCHITECTURE;
	p.ptr = (uintptr_t)arch;
	p.len = sizeof(arch);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p), 0);
	EXPECT_EQ(get_int(fd, NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 1);
	ASSERT_EQ(set_int(fd, NPR_PARAM_PERFORMANCE_HINT,
			  NPR_PERF_HINT_THROUGHPUT), 0);
	EXPECT_EQ(get_int(fd, NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS),
		  strcmp(arch, "3720") ? 8 : 4);
	TH_LOG("architecture %s: THROUGHPUT -> %lld requests", arch,
	       (long long)get_int(fd, NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS));
	npr_close(fd);
}

/* query_model goes through the driver's network query */
TEST(npu_query_model_agrees_with_cpu)
{
	const char *dev[2] = { "cpu", "npu" };
	struct npr_query_model q[2];
	char path[4096];
	int k;

	REQUIRE_NPU();
	model_path(path, sizeof(path), "squeezenet1.1/FP16/squeezenet1.1.xml");
	for (k = 0; k < 2; k++) {
		struct npr_model_load ml;
		int fd = npr_open(dev[k], 0), ret;

		ASSERT_GE(fd, 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		memset(&q[k], 0, sizeof(q[k]));
		q[k].size = sizeof(q[k]);
		q[k].model = ml.handle;
		ret = npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &q[k]);
		if (ret && ret != -EMSGSIZE)
			TH_LOG("%s: %s", dev[k], npr_last_error());
		EXPECT_TRUE(!ret || ret == -EMSGSIZE);
		npr_close(fd);
	}
	TH_LOG("cpu %u/%u, npu %u/%u layers supported", q[0].num_supported,
	       q[0].num_layers, q[1].num_supported, q[1].num_layers);
	EXPECT_EQ(q[1].num_layers, q[0].num_layers);
	EXPECT_EQ(q[1].num_supported, q[0].num_supported);
	EXPECT_GT(q[1].num_supported, 0);
}

/* ---- fault injection ---------------------------------------------------- */

#define EYE "open-closed-eye-0001/FP32/open-closed-eye-0001.xml"

TEST(npu_fault_compile)
{
	char path[4096];
	struct net n;
	int ret;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	setenv("VNPU_FAULT_COMPILE", "1", 1);
	ret = net_open(_metadata, &n, "npu", path);
	unsetenv("VNPU_FAULT_COMPILE");
	TH_LOG("%d: %s", ret, npr_last_error());
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_NONNULL(strstr(npr_last_error(), "fault injected"));
	net_close(&n);
}

TEST(npu_fault_out_of_memory)
{
	char path[4096];
	struct net n;
	int ret;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	setenv("VNPU_FAULT_OOM", "1", 1);
	ret = net_open(_metadata, &n, "npu", path);
	unsetenv("VNPU_FAULT_OOM");
	TH_LOG("%d: %s", ret, npr_last_error());
	EXPECT_EQ(ret, -ENOMEM);
	EXPECT_NONNULL(strstr(npr_last_error(), "out of device memory"));
	net_close(&n);
}

TEST(npu_fault_device_lost)
{
	char path[4096];
	struct net n;
	int ret;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	setenv("VNPU_FAULT_DEVICE_LOST", "2", 1);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	net_fill(_metadata, &n, 1);
	EXPECT_EQ(net_infer(&n), 0);
	ret = net_infer(&n);
	TH_LOG("second inference: %d: %s", ret, npr_last_error());
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_EQ(net_infer(&n), -ENODEV);	/* the device stays lost */
	net_close(&n);
	unsetenv("VNPU_FAULT_DEVICE_LOST");
	/* a reopened device works */
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	net_fill(_metadata, &n, 1);
	EXPECT_EQ(net_infer(&n), 0);
	EXPECT_EQ(net_infer(&n), 0);
	net_close(&n);
}

/* ---- the NPU plugin's properties ----------------------------------------- */

static int get_str(int fd, __u32 handle, uint32_t id, char *buf, size_t len)
{
	struct npr_param p = {
		.size = sizeof(p), .handle = handle, .param = id,
		.ptr = (uintptr_t)buf, .len = (__u32)len,
	};

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p);
}

static int64_t get_int_of(int fd, __u32 handle, uint32_t id)
{
	struct npr_param p = { .size = sizeof(p), .handle = handle,
			       .param = id };

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p) ? -1000 :
	       (int64_t)p.value;
}

static int set_str(int fd, uint32_t id, const char *s)
{
	struct npr_param p = {
		.size = sizeof(p), .param = id, .ptr = (uintptr_t)s,
		.len = (__u32)strlen(s) + 1,
	};

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p);
}

/*
 * Device properties on vnpu as a 3720 or a 4000: the architecture from the
 * PCI id, tiles, compiler version 7.4 (what vnpu reports), a PCI address,
 * GOPS by the plugin's formula (f16 half of i8, f32 none), memory sizes
 * from QueryContextMemory, OPTIMAL_NUMBER_OF_INFER_REQUESTS, NUM_STREAMS 1
 * and read-only, NPU_TILES checked against NPU_MAX_TILES.
 */
static void check_npu_props(struct npr_test *_metadata, const char *platform)
{
	char arch[32], name[256], pci[64], gops[256], *s;
	int64_t tiles, alloc0, alloc1;
	double v[4] = { -1, -1, -1, -1 };
	struct npr_prop_arg pa = { .param = NPR_PARAM_NUM_STREAMS, .value = 1 };
	struct npr_compile co;
	unsigned int a, b, c, f;
	struct net n;
	int fd, k;

	setenv("VNPU_PLATFORM", platform, 1);	/* before the loader starts */
	REQUIRE_NPU();
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(get_str(fd, 0, NPR_PARAM_FULL_DEVICE_NAME, name,
			  sizeof(name)), 0);
	if (!strstr(name, "vnpu"))
		SKIP(goto out, "not vnpu: %s", name);
	ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_ARCHITECTURE, arch,
			  sizeof(arch)), 0);
	EXPECT_STREQ(arch, platform);
	tiles = get_int(fd, NPR_PARAM_NPU_MAX_TILES);
	EXPECT_EQ(tiles, strcmp(platform, "3720") ? 6 : 2);
	EXPECT_EQ(get_int(fd, NPR_PARAM_NPU_COMPILER_VERSION), 7 << 16 | 4);
	EXPECT_GT(get_int(fd, NPR_PARAM_NPU_DRIVER_VERSION), 0);
	ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_PCI_INFO, pci, sizeof(pci)),
		  0);
	EXPECT_EQ(sscanf(pci, "%4x:%2x:%2x.%1x", &a, &b, &c, &f), 4);
	EXPECT_EQ(strlen(pci), 12);
	memset(gops, 0, sizeof(gops));
	ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_GOPS, gops, sizeof(gops)),
		  0);
	for (s = gops, k = 0; *s && k < 4; s += strlen(s) + 1, k++) {
		static const char *const types[] = { "f32:", "f16:", "u8:",
						     "i8:" };

		EXPECT_EQ(strncmp(s, types[k], strlen(types[k])), 0);
		v[k] = strtod(strchr(s, ':') + 1, NULL);
	}
	EXPECT_EQ(k, 4);
	EXPECT_EQ(v[0], 0);
	EXPECT_GT(v[3], 0);
	EXPECT_EQ(v[2], v[3]);
	EXPECT_TRUE(fabs(v[1] - v[3] / 2) < 0.1);
	TH_LOG("%s: %lld tiles, PCI %s, i8 %.1f GOPS", arch, (long long)tiles,
	       pci, v[3]);
	/* memory: a request's argument buffers count as allocated */
	EXPECT_GT(get_int(fd, NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE), 0);
	alloc0 = get_int(fd, NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE);
	EXPECT_GE(alloc0, 0);
	/* OPTIMAL_NUMBER_OF_INFER_REQUESTS: the plugin's table */
	EXPECT_EQ(get_int(fd, NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS), 1);
	ASSERT_EQ(set_int(fd, NPR_PARAM_PERFORMANCE_HINT,
			  NPR_PERF_HINT_THROUGHPUT), 0);
	EXPECT_EQ(get_int(fd, NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS),
		  strcmp(platform, "3720") ? 8 : 4);
	/* one stream, read-only */
	EXPECT_EQ(get_int(fd, NPR_PARAM_NUM_STREAMS), 1);
	EXPECT_EQ(set_int(fd, NPR_PARAM_NUM_STREAMS, 1), -EPERM);
	/* NPU_TILES: -1 or 1..NPU_MAX_TILES */
	EXPECT_EQ(get_int(fd, NPR_PARAM_NPU_TILES), -1);
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, (uint64_t)tiles + 1),
		  -ERANGE);
	EXPECT_NONNULL(strstr(npr_last_error(), "NPU_MAX_TILES"));
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, 0), -ERANGE);
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, (uint64_t)-2), -ERANGE);
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, (uint64_t)tiles), 0);
	EXPECT_EQ(get_int(fd, NPR_PARAM_NPU_TILES), tiles);
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, (uint64_t)-1), 0);
	EXPECT_EQ(get_int(fd, NPR_PARAM_NPU_TILES), -1);
	npr_close(fd);
	fd = -1;
	/* allocation grows with a request */
	{
		char path[4096];

		model_path(path, sizeof(path), EYE);
		ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
		alloc1 = get_int(n.fd, NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE);
		EXPECT_GT(alloc1, alloc0);
		EXPECT_GE(alloc1, (int64_t)(n.bytes[0][0] + n.bytes[1][0]));
		/* NUM_STREAMS cannot be given to COMPILE either */
		npr_prep_compile(&co, n.model);
		co.props = (uintptr_t)&pa;
		co.num_props = 1;
		EXPECT_EQ(npr_ioctl(n.fd, NPR_IOCTL_COMPILE, &co), -EPERM);
		net_close(&n);
	}
out:
	if (fd >= 0)
		npr_close(fd);
}

TEST(npu_properties_3720)
{
	check_npu_props(_metadata, "3720");
}

TEST(npu_properties_4000)
{
	check_npu_props(_metadata, "4000");
}

/* The NPU's properties exist only on the npu device. */
TEST(npu_properties_absent_elsewhere)
{
	struct npr_prop_info pi = { .size = sizeof(pi) };
	struct npr_prop_arg pa = { .param = NPR_PARAM_NPU_TILES, .value = 1 };
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096];
	int fd = npr_open("cpu", 0);

	ASSERT_GE(fd, 0);
	{
		struct npr_param p = { .size = sizeof(p),
				       .param = NPR_PARAM_NPU_TILES };

		EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p), -ENOPROTOOPT);
	}
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_TURBO, 1), -ENOPROTOOPT);
	EXPECT_NONNULL(strstr(npr_last_error(), "no such property"));
	pi.flags = NPR_PROP_INFO_BY_NAME;
	snprintf(pi.name, sizeof(pi.name), "NPU_MAX_TILES");
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi), -ENOPROTOOPT);
	/* NUM_STREAMS stays writable on cpu */
	EXPECT_EQ(set_int(fd, NPR_PARAM_NUM_STREAMS, 1), 0);
	if (npr_test_shared_ok()) {
		model_path(path, sizeof(path), EYE);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		npr_prep_compile(&co, ml.handle);
		co.props = (uintptr_t)&pa;
		co.num_props = 1;
		EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), -ENOPROTOOPT);
	}
	npr_close(fd);
}

/* NPU_COMPILATION_MODE_PARAMS: only the documented keys and values */
TEST(npu_compilation_mode_params_are_checked)
{
	int fd;

	REQUIRE_NPU();
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "optimization-level=3"), -EINVAL);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "optimization-level"), -EINVAL);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "dpu-profiling=true"), -EINVAL);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "performance-hint-override=fast"), -EINVAL);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "optimization-level=\"1\""), -EINVAL);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "optimization-level=0 performance-hint-override=efficiency"),
		  0);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
			  "  optimization-level=2   performance-hint-override=latency "),
		  0);
	EXPECT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS, ""), 0);
	npr_close(fd);
}

static void *slurp_n(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	if (f && buf)
		buf[fread(buf, 1, 65535, f)] = 0;
	if (f)
		fclose(f);
	return buf;
}

/*
 * The compile-time NPU properties reach the driver: in the build flags'
 * --config, NPU_BYPASS_UMD_CACHING as the descriptor's disable-caching
 * flag, NPU_DEFER_WEIGHTS_LOAD moves GraphInitialize to the first request.
 * vnpu writes what it was given to VNPU_TRACE.  The model still agrees
 * with cpu.
 */
static void compile_traced(struct npr_test *_metadata, bool set)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX", path[4096], *t;
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_compile co;
	int fd, tfd;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	if (set) {
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, 1), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_TURBO, 1), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_BYPASS_UMD_CACHING, 1), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_DEFER_WEIGHTS_LOAD, 1), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_COMPILER_DYNAMIC_QUANTIZATION,
				  1), 0);
		ASSERT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
				  "optimization-level=1 performance-hint-override=latency"),
			  0);
	}
	model_path(path, sizeof(path), EYE);
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	TH_LOG("%s", t);
	EXPECT_NONNULL(strstr(t, "create format=2 "));
	EXPECT_EQ(!strstr(t, "NPU_TILES=\"1\""), !set);
	EXPECT_EQ(!strstr(t, " NPU_TURBO=\"YES\""), !set);
	EXPECT_EQ(!strstr(t, " NPU_COMPILER_DYNAMIC_QUANTIZATION=\"YES\""),
		  !set);
	EXPECT_EQ(!strstr(t, " NPU_COMPILATION_MODE_PARAMS=\"optimization-level=1 performance-hint-override=latency\""),
		  !set);
	EXPECT_NONNULL(strstr(t, set ? "flags=0x1 " : "flags=0x0 "));
	/* weights: at compile, or deferred to the first request */
	EXPECT_EQ(!strstr(t, "initialize"), set);
	/* turbo: also the command queue's flag */
	EXPECT_NONNULL(strstr(t, set ? "queue turbo=1" : "queue turbo=0"));
	free(t);
	/* the compiled model reports what it was compiled with */
	EXPECT_EQ(get_int_of(fd, co.exec, NPR_PARAM_NPU_TILES), set ? 1 : -1);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	EXPECT_NONNULL(strstr(t, "initialize"));
	EXPECT_NULL(strstr(strstr(t, "initialize") + 1, "initialize"));
	free(t);
	npr_close(fd);
	unlink(trace);
	unsetenv("VNPU_TRACE");
}

TEST(npu_compile_properties_reach_the_driver)
{
	compile_traced(_metadata, true);
}

TEST(npu_compile_without_npu_properties)
{
	compile_traced(_metadata, false);
}

/* ---- export and import: the driver's native binary ---------------------- */

/* The blob layout (Documentation/blob.rst) and the library's checksum. */
#define NATIVE_TRAILER	48

/* Run @n on the seeded input; output 0's bytes. */
static void *run_bytes(struct npr_test *_metadata, struct net *n)
{
	struct npr_tensor_arg t;
	void *buf = malloc(n->bytes[1][0]);

	net_fill(_metadata, n, 7);
	if (!buf || net_infer(n)) {
		free(buf);
		return NULL;
	}
	npr_prep_tensor(&t, n->req, 0, 1, buf, n->bytes[1][0]);
	if (npr_ioctl(n->fd, NPR_IOCTL_GET_TENSOR, &t)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * EXPORT stores the driver's native binary with our trailer; IMPORT gives
 * it to the driver as NATIVE (no compile: the trace shows format 1), and
 * the imported model computes the same bytes.  Damaged native sections
 * (resealed, so the blob's own checksum passes) are refused: truncated,
 * foreign, another NPU, a corrupt binary.
 */
TEST(npu_export_imports_the_native_binary)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX", path[4096], *t;
	unsigned char *blob, *c;
	void *a = NULL, *b = NULL;
	struct net n, m;
	size_t len, tr;
	__u32 exec;
	uint32_t pci;
	int tfd;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	a = run_bytes(_metadata, &n);
	ASSERT_NONNULL(a);
	ASSERT_EQ(blob_export(n.fd, n.exec, &blob, &len), 0);
	ASSERT_GT(len, BLOB_HDR + NATIVE_TRAILER);
	tr = len - NATIVE_TRAILER;
	EXPECT_EQ(memcmp(blob + tr, "NPRNPUN", 8), 0);
	memcpy(&pci, blob + tr + 12, 4);
	EXPECT_TRUE(pci == 0x7D1D || pci == 0x643E);
	/* import on a fresh device: native, same result */
	memset(&m, 0, sizeof(m));
	m.fd = npr_open("npu", 0);
	ASSERT_GE(m.fd, 0);
	EXPECT_EQ(truncate(trace, 0), 0);
	ASSERT_EQ(blob_import(m.fd, blob, len, &exec), 0);
	ASSERT_EQ(net_attach(_metadata, &m, exec), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	TH_LOG("import: %s", t);
	EXPECT_NONNULL(strstr(t, "create format=1 "));
	EXPECT_NULL(strstr(t, "format=2"));
	free(t);
	b = run_bytes(_metadata, &m);
	ASSERT_NONNULL(b);
	EXPECT_EQ(memcmp(a, b, n.bytes[1][0]), 0);
	/* the imported model exports again */
	c = NULL;
	{
		size_t len2;

		EXPECT_EQ(blob_export(m.fd, exec, &c, &len2), 0);
		EXPECT_EQ(len2, len);
		free(c);
	}
	c = malloc(len);
	ASSERT_NONNULL(c);
	/* truncated (the blob's own size check) */
	EXPECT_EQ(blob_import(m.fd, blob, len - 1, &exec), -EBADMSG);
	/* foreign trailer */
	memcpy(c, blob, len);
	c[tr] ^= 0x20;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -ENOEXEC);
	TH_LOG("foreign: %s", npr_last_error());
	/* another trailer version */
	memcpy(c, blob, len);
	c[tr + 8] ^= 2;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -EPROTONOSUPPORT);
	/* compiled for another NPU (0xAD1D is a 3720 too) */
	memcpy(c, blob, len);
	pci = 0xAD1D;
	memcpy(c + tr + 12, &pci, 4);
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -ENODEV);
	TH_LOG("other NPU: %s", npr_last_error());
	EXPECT_NONNULL(strstr(npr_last_error(), "0xad1d"));
	/* a corrupt binary, and a wrong size */
	memcpy(c, blob, len);
	c[tr - 100] ^= 1;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -EBADMSG);
	memcpy(c, blob, len);
	c[tr + 24] ^= 1;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -EBADMSG);
	/* the section shorter than a trailer */
	memcpy(c, blob, len);
	{
		uint64_t nlen, psize;
		size_t cut;

		/* the section's u64 size sits before the binary: find it */
		for (cut = BLOB_HDR; cut + 8 <= tr; cut++) {
			memcpy(&nlen, c + cut, 8);
			if (nlen == len - cut - 8)
				break;
		}
		ASSERT_LT(cut + 8, tr);
		nlen = 4;
		memcpy(c + cut, &nlen, 8);
		psize = cut + 8 + 4 - BLOB_HDR;
		memcpy(c + 80, &psize, 8);
		blob_reseal(c, cut + 8 + 4);
		EXPECT_EQ(blob_import(m.fd, c, cut + 8 + 4, &exec), -EBADMSG);
		TH_LOG("short section: %s", npr_last_error());
	}
	free(c);
	free(a);
	free(b);
	free(blob);
	net_close(&n);
	net_close(&m);
	/*
	 * The compile-time NPU properties travel with the native binary: an
	 * imported model reports them and its queue gets the turbo flag.
	 */
	{
		struct npr_model_load ml;
		struct npr_compile co;
		int fd = npr_open("npu", 0), fd2;

		ASSERT_GE(fd, 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, 1), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_TURBO, 1), 0);
		ASSERT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
				  "optimization-level=2"), 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		npr_prep_compile(&co, ml.handle);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), 0);
		ASSERT_EQ(blob_export(fd, co.exec, &blob, &len), 0);
		fd2 = npr_open("npu", 0);
		ASSERT_GE(fd2, 0);
		EXPECT_EQ(truncate(trace, 0), 0);
		ASSERT_EQ(blob_import(fd2, blob, len, &exec), 0);
		EXPECT_EQ(get_int_of(fd2, exec, NPR_PARAM_NPU_TILES), 1);
		EXPECT_EQ(get_int_of(fd2, exec, NPR_PARAM_NPU_TURBO), 1);
		{
			char mode[64] = "";

			EXPECT_EQ(get_str(fd2, exec,
					  NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
					  mode, sizeof(mode)), 0);
			EXPECT_STREQ(mode, "optimization-level=2");
		}
		t = slurp(trace);
		ASSERT_NONNULL(t);
		EXPECT_NONNULL(strstr(t, "queue turbo=1"));
		free(t);
		free(blob);
		npr_close(fd);
		npr_close(fd2);
	}
	unlink(trace);
	unsetenv("VNPU_TRACE");
}

/* A blob exported from a 4000 does not import on a 3720. */
TEST(npu_import_refuses_another_architecture)
{
	char file[] = "/tmp/npu_test_blobXXXXXX", path[4096];
	unsigned char *blob = NULL;
	size_t len = 0;
	__u32 exec;
	int bfd, st, fd;
	pid_t pid;
	FILE *f;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	bfd = mkstemp(file);
	ASSERT_GE(bfd, 0);
	close(bfd);
	model_path(path, sizeof(path), EYE);
	/* the loader reads VNPU_PLATFORM once per process: a child exports */
	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct net n;

		setenv("VNPU_PLATFORM", "4000", 1);
		if (!npu_available())
			_exit(2);
		if (net_open(_metadata, &n, "npu", path) ||
		    blob_export(n.fd, n.exec, &blob, &len))
			_exit(1);
		f = fopen(file, "w");
		if (!f || fwrite(blob, 1, len, f) != len || fclose(f))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	REQUIRE_NPU();
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
	blob = (unsigned char *)slurp_n(file, &len);
	ASSERT_NONNULL(blob);
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(blob_import(fd, blob, len, &exec), -ENODEV);
	TH_LOG("%s", npr_last_error());
	EXPECT_NONNULL(strstr(npr_last_error(), "4000"));
	npr_close(fd);
	free(blob);
	unlink(file);
}

/* The model cache stores the native binary too: a hit imports NATIVE. */
TEST(npu_cache_hit_imports_the_native_binary)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX";
	char dir[] = "/tmp/npu_test_cacheXXXXXX", path[4096], *t;
	void *a = NULL, *b = NULL;
	struct net n[3];
	int k, tfd;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	ASSERT_NONNULL(mkdtemp(dir));
	setenv("VNPU_TRACE", trace, 1);
	model_path(path, sizeof(path), EYE);
	/* 0 compiles and stores, 1 hits, 2 misses: NPU_TILES is in the key */
	for (k = 0; k < 3; k++) {
		struct npr_model_load ml;
		struct npr_compile co;

		memset(&n[k], 0, sizeof(n[k]));
		n[k].fd = npr_open("npu", 0);
		ASSERT_GE(n[k].fd, 0);
		ASSERT_EQ(set_str(n[k].fd, NPR_PARAM_CACHE_DIR, dir), 0);
		if (k == 2)
			ASSERT_EQ(set_int(n[k].fd, NPR_PARAM_NPU_TILES, 1), 0);
		EXPECT_EQ(truncate(trace, 0), 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(n[k].fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		npr_prep_compile(&co, ml.handle);
		ASSERT_EQ(npr_ioctl(n[k].fd, NPR_IOCTL_COMPILE, &co), 0);
		ASSERT_EQ(net_attach(_metadata, &n[k], co.exec), 0);
		EXPECT_EQ(get_int_of(n[k].fd, co.exec,
				     NPR_PARAM_LOADED_FROM_CACHE), k == 1);
		t = slurp(trace);
		ASSERT_NONNULL(t);
		EXPECT_NONNULL(strstr(t, k == 1 ? "create format=1 " :
						  "create format=2 "));
		free(t);
	}
	a = run_bytes(_metadata, &n[0]);
	b = run_bytes(_metadata, &n[1]);
	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	EXPECT_EQ(memcmp(a, b, n[0].bytes[1][0]), 0);
	free(a);
	free(b);
	net_close(&n[0]);
	net_close(&n[1]);
	net_close(&n[2]);
	unlink(trace);
	unsetenv("VNPU_TRACE");
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		EXPECT_EQ(system(cmd), 0);
	}
}

/* ---- stateful models: 100 steps with resets ----------------------------- */

static int reset_all(struct net *n)
{
	struct npr_state_arg sa = {
		.size = sizeof(sa), .flags = NPR_STATE_RESET_ALL, .req = n->req,
	};

	return npr_ioctl(n->fd, NPR_IOCTL_STATE_RESET, &sa);
}

/*
 * The OpenVINO stateful snippets over 100 inferences on npu and cpu with
 * the same inputs, every variable reset at steps 25 and 60 on both: the
 * npu binds each variable to one buffer shared by the compiler's
 * vpux_ie_read_value_/vpux_ie_assign_ arguments and resets by zero
 * filling; the snippets' initial values are zeros, so outputs must agree
 * at every step (1e-4 of the range, as the models above).
 */
FIXTURE(npu_stateful) {
	int unused;
};

FIXTURE_VARIANT(npu_stateful) {
	const char *model;
};

FIXTURE_VARIANT_ADD(npu_stateful, adder) {
	.model = "../ir-stateful/adder_v11.xml",
};
FIXTURE_VARIANT_ADD(npu_stateful, sliding_window) {
	.model = "../ir-stateful/sliding_window_summator_v10.xml",
};
FIXTURE_VARIANT_ADD(npu_stateful, summator) {
	.model = "../ir-stateful/summator_v10.xml",
};

FIXTURE_SETUP(npu_stateful)
{
}

FIXTURE_TEARDOWN(npu_stateful)
{
}

TEST_F(npu_stateful, hundred_steps_with_resets_agree_with_cpu)
{
	struct net c, p;
	char path[4096];
	float worst = 0, first = 0, last = 0;
	int step;
	__u32 i;

	REQUIRE_NPU();
	model_path(path, sizeof(path), variant->model);
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	ASSERT_EQ(net_open(_metadata, &c, "cpu", path), 0);
	if (net_open(_metadata, &p, "npu", path))
		TH_LOG("npu: %s", npr_last_error());
	ASSERT_GT(p.req, 0);
	ASSERT_EQ(p.nout, c.nout);
	for (step = 0; step < 100; step++) {
		if (step == 25 || step == 60) {
			ASSERT_EQ(reset_all(&c), 0);
			ASSERT_EQ(reset_all(&p), 0);
		}
		net_fill(_metadata, &c, 11 + step);
		net_fill(_metadata, &p, 11 + step);
		ASSERT_EQ(net_infer(&c), 0);
		ASSERT_EQ(net_infer(&p), 0);
		for (i = 0; i < c.nout; i++) {
			size_t j, count, count2;
			float *a = net_output(_metadata, &c, i, &count);
			float *b = net_output(_metadata, &p, i, &count2);
			float lo = INFINITY, hi = -INFINITY, diff = 0;

			ASSERT_NONNULL(a);
			ASSERT_NONNULL(b);
			ASSERT_EQ(count, count2);
			for (j = 0; j < count; j++) {
				lo = fminf(lo, a[j]);
				hi = fmaxf(hi, a[j]);
				diff = fmaxf(diff, fabsf(a[j] - b[j]));
			}
			EXPECT_LE(diff, NPU_REL_TOL * fmaxf(hi - lo, 1.0f));
			worst = fmaxf(worst, diff);
			if (step == 24 && !i)
				first = a[0];
			if (step == 25 && !i)
				last = a[0];
			free(a);
			free(b);
		}
	}
	/* the state mattered: a reset changed the output (accumulators) */
	TH_LOG("%s: 100 steps, max |cpu-npu| %g; output 0 before/after the first reset %g / %g",
	       variant->model, worst, first, last);
	EXPECT_NE(first, last);
	net_close(&c);
	net_close(&p);
}


/* ---- the ring: INFER jobs of npu requests ------------------------------- */

/*
 * Eight npu requests run as ring jobs (a linked pair among them) on the
 * io_uring path and on the fallback path: each completes once with its
 * user_data, res 0, status OK and ordered timestamps, the ring fd polls
 * readable, and every output equals a synchronous INFER of the same
 * input on the same compiled model.  A device lost on the third
 * execution fails that job (-ENODEV, FAILED) and breaks its link.
 */
static void ring_jobs(struct npr_test *_metadata, bool fallback)
{
	struct npr_ring_setup rs = {
		.size = sizeof(rs),
		.flags = fallback ? NPR_RING_SETUP_FALLBACK : 0,
	};
	struct npr_sqe s[8];
	struct npr_cqe c[8];
	struct npr_submit su = { .size = sizeof(su), .sqes = (uintptr_t)s };
	struct npr_reap re = {
		.size = sizeof(re), .cqes = (uintptr_t)c, .max = 8, .min = 8,
	};
	struct npr_req_create rc;
	struct pollfd pfd;
	void *want[8], *got;
	char path[4096];
	__u32 req[8];
	struct net n;
	bool seen[8] = { false };
	int k, ret;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	ret = npr_ioctl(n.fd, NPR_IOCTL_RING_SETUP, &rs);
	if (ret)
		TH_LOG("RING_SETUP: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	TH_LOG("ring path %u, %u workers", rs.path, rs.workers);
	/* the expected outputs, from synchronous INFER on request 0 */
	for (k = 0; k < 8; k++) {
		want[k] = NULL;
		net_fill(_metadata, &n, 100 + k);
		ASSERT_EQ(net_infer(&n), 0);
		want[k] = malloc(n.bytes[1][0]);
		ASSERT_NONNULL(want[k]);
		{
			struct npr_tensor_arg t;

			npr_prep_tensor(&t, n.req, 0, 1, want[k],
					n.bytes[1][0]);
			ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_GET_TENSOR, &t), 0);
		}
	}
	for (k = 0; k < 8; k++) {
		__u32 keep = n.req;

		npr_prep_req_create(&rc, n.exec);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
		req[k] = rc.req;
		n.req = req[k];
		net_fill(_metadata, &n, 100 + k);
		n.req = keep;
		memset(&s[k], 0, sizeof(s[k]));
		s[k].opcode = NPR_OP_INFER;
		s[k].handle = req[k];
		s[k].user_data = 1000 + k;
	}
	s[4].flags = NPR_SQE_LINK;	/* 5 runs after 4 */
	su.count = 8;
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_SUBMIT, &su), 0);
	EXPECT_EQ(su.submitted, 8);
	pfd.fd = rs.ring_fd;
	pfd.events = POLLIN;
	EXPECT_EQ(poll(&pfd, 1, 60000), 1);
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REAP, &re), 0);
	ASSERT_EQ(re.count, 8);
	for (k = 0; k < 8; k++) {
		int j = (int)(c[k].user_data - 1000);
		struct npr_tensor_arg t;

		ASSERT_TRUE(j >= 0 && j < 8);
		EXPECT_FALSE(seen[j]);
		seen[j] = true;
		EXPECT_EQ(c[k].res, 0);
		EXPECT_EQ(c[k].status, NPR_JOB_OK);
		EXPECT_LE(c[k].queued_ns, c[k].started_ns);
		EXPECT_LE(c[k].started_ns, c[k].finished_ns);
		got = malloc(n.bytes[1][0]);
		ASSERT_NONNULL(got);
		npr_prep_tensor(&t, req[j], 0, 1, got, n.bytes[1][0]);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_GET_TENSOR, &t), 0);
		EXPECT_EQ(memcmp(got, want[j], n.bytes[1][0]), 0);
		free(got);
	}
	/* the linked job started after its predecessor finished */
	for (k = 0; k < 8; k++)
		if (c[k].user_data == 1005) {
			int m;

			for (m = 0; m < 8; m++)
				if (c[m].user_data == 1004)
					EXPECT_GE(c[k].started_ns,
						  c[m].finished_ns);
		}
	/* a lost device fails the job and breaks its link: the context has
	 * run 16 executions, the 17th loses it */
	setenv("VNPU_FAULT_DEVICE_LOST", "17", 1);
	{
		struct npr_sqe f[2];

		memset(f, 0, sizeof(f));
		f[0].opcode = NPR_OP_INFER;
		f[0].handle = req[0];
		f[0].user_data = 1;
		f[0].flags = NPR_SQE_LINK;
		f[1].opcode = NPR_OP_INFER;
		f[1].handle = req[1];
		f[1].user_data = 2;
		su.sqes = (uintptr_t)f;
		su.count = 2;
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_SUBMIT, &su), 0);
		re.min = re.max = 2;
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REAP, &re), 0);
		ASSERT_EQ(re.count, 2);
		for (k = 0; k < 2; k++) {
			if (c[k].user_data == 1) {
				EXPECT_EQ(c[k].res, -ENODEV);
				EXPECT_EQ(c[k].status, NPR_JOB_FAILED);
			} else {
				EXPECT_EQ(c[k].res, -ECANCELED);
				EXPECT_EQ(c[k].status, NPR_JOB_LINK_BROKEN);
			}
		}
	}
	unsetenv("VNPU_FAULT_DEVICE_LOST");
	for (k = 0; k < 8; k++)
		free(want[k]);
	net_close(&n);
}

TEST(npu_ring_completions)
{
	ring_jobs(_metadata, false);
}

TEST(npu_ring_completions_fallback)
{
	ring_jobs(_metadata, true);
}

/* ---- discovery and diagnosis -------------------------------------------- */

/* npu_open's message when it fails, or NULL when it opened. */
static const char *npu_open_message(void)
{
	static char msg[1024];
	int fd = npr_open("npu", 0);

	if (fd >= 0) {
		npr_close(fd);
		return NULL;
	}
	snprintf(msg, sizeof(msg), "%d: %s", fd, npr_last_error());
	return msg;
}

static bool have_loader(void)
{
	void *l = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);

	if (l)
		dlclose(l);
	return l != NULL;
}

/* No loader where NPR_ZE_LOADER points: the message says to install it. */
TEST(npu_diagnosis_no_loader)
{
	const char *m;

	setenv("NPR_ZE_LOADER", "/nonexistent/libze_loader.so.1", 1);
	m = npu_open_message();
	ASSERT_NONNULL(m);
	TH_LOG("%s", m);
	EXPECT_EQ(strncmp(m, "-19: ", 5), 0);
	EXPECT_NONNULL(strstr(m, "Level Zero loader"));
	EXPECT_NONNULL(strstr(m, "libze1"));
}

/* A loader and no driver at all: the kernel side is looked at. */
TEST(npu_diagnosis_no_driver)
{
	const char *m;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	if (!access("/dev/accel", F_OK))
		SKIP(return, "this machine has /dev/accel: not the path tested");
	unsetenv("NPR_VNPU");
	unsetenv("ZE_ENABLE_ALT_DRIVERS");
	m = npu_open_message();
	if (!m)
		SKIP(return, "an NPU driver is installed");
	TH_LOG("%s", m);
	EXPECT_EQ(strncmp(m, "-19: ", 5), 0);
	EXPECT_NONNULL(strstr(m, "no /dev/accel/accel* node"));
	EXPECT_NONNULL(strstr(m, "intel_vpu kernel driver is not loaded"));
	EXPECT_NONNULL(strstr(m, "NPR_VNPU"));
}

/*
 * An accel node without a Level Zero driver (a plain file stands in for
 * the node, NPR_ACCEL_DIR pointing at it), and one the user may not open
 * (not testable as root, who may open anything).
 */
TEST(npu_diagnosis_node_without_driver)
{
	char dir[] = "/tmp/npu_test_accelXXXXXX", node[64];
	const char *m;
	int fd;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	unsetenv("NPR_VNPU");
	unsetenv("ZE_ENABLE_ALT_DRIVERS");
	ASSERT_NONNULL(mkdtemp(dir));
	snprintf(node, sizeof(node), "%s/accel0", dir);
	fd = open(node, O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	setenv("NPR_ACCEL_DIR", dir, 1);
	if (geteuid()) {
		/* the first open fails for want of permission */
		ASSERT_EQ(chmod(node, 0), 0);
	}
	m = npu_open_message();
	if (!m) {
		unlink(node);
		rmdir(dir);
		SKIP(return, "an NPU driver is installed");
	}
	TH_LOG("%s", m);
	EXPECT_EQ(strncmp(m, "-19: ", 5), 0);
	if (geteuid()) {
		EXPECT_NONNULL(strstr(m, "cannot open"));
		EXPECT_NONNULL(strstr(m, "\"render\" group"));
	} else {
		EXPECT_NONNULL(strstr(m, "accel0 exists (driver unknown, PCI ?)"));
		EXPECT_NONNULL(strstr(m, "install the NPU user-mode driver"));
	}
	unlink(node);
	rmdir(dir);
}

/* vnpu made to look like another Level Zero driver, or an old one. */
static void vnpu_fault_message(struct npr_test *_metadata, const char *var,
			       const char *val, const char *want)
{
	const char *m;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	if (!find_vnpu())
		SKIP(return, "vnpu not found (set NPR_VNPU)");
	setenv(var, val, 1);	/* before the loader starts */
	m = npu_open_message();
	ASSERT_NONNULL(m);
	TH_LOG("%s=%s: %s", var, val, m);
	EXPECT_EQ(strncmp(m, "-19: ", 5), 0);
	EXPECT_NONNULL(strstr(m, want));
}

TEST(npu_diagnosis_not_the_npu_driver)
{
	vnpu_fault_message(_metadata, "VNPU_FAULT_UUID", "1",
			   "is the NPU driver (wrong driver UUID)");
}

TEST(npu_diagnosis_graph_extension_too_old)
{
	vnpu_fault_message(_metadata, "VNPU_GRAPH_VERSION", "4",
			   "graph extension is version 1.4; npuring needs 1.5");
}

TEST(npu_diagnosis_no_graph_extension)
{
	vnpu_fault_message(_metadata, "VNPU_GRAPH_VERSION", "0",
			   "does not offer ZE_extension_graph");
}

/* Run a tool of the build tree; its stdout in @out, its exit status. */
static int run_tool(const char *cmdline, char *out, size_t len)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t got = 0;
	FILE *p;
	int st;

	out[0] = 0;
	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(cmd, sizeof(cmd), "%s/../tools/%s 2>&1", dirname(exe),
		 cmdline);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (got + 1 < len && (n = (ssize_t)fread(out + got, 1,
					len - 1 - got, p)) > 0)
		got += (size_t)n;
	out[got] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* npr-info -d npu: every layer of the stack, or which one is missing. */
TEST(npu_info_shows_the_stack)
{
	static char out[1 << 16];
	int st;

	REQUIRE_NPU();
	st = run_tool("npr-info -d npu", out, sizeof(out));
	EXPECT_EQ(st, 0);
	EXPECT_NONNULL(strstr(out, "npu stack"));
	EXPECT_NONNULL(strstr(out, "Level Zero loader  1."));
	EXPECT_NONNULL(strstr(out, "compiler version   "));
	EXPECT_NONNULL(strstr(out, "platform           "));
	EXPECT_NONNULL(strstr(out, "tiles              "));
	EXPECT_NONNULL(strstr(out, "PCI address        "));
	EXPECT_NONNULL(strstr(out, " bytes allocated"));
	setenv("NPR_ZE_LOADER", "/nonexistent/libze_loader.so.1", 1);
	st = run_tool("npr-info -d npu", out, sizeof(out));
	unsetenv("NPR_ZE_LOADER");
	TH_LOG("%s", out);
	EXPECT_EQ(st, 1);
	EXPECT_NONNULL(strstr(out, "npu: cannot open: npu: the Level Zero loader"));
}

/* npr-bench over vnpu: a JSON line with a throughput. */
TEST(npu_bench_runs)
{
	static char out[1 << 16];
	char path[4096], cmd[4200];
	const char *t;
	int st;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	snprintf(cmd, sizeof(cmd),
		 "npr-bench -d npu -m '%s' --nireq 2 --niter 20 --json", path);
	st = run_tool(cmd, out, sizeof(out));
	TH_LOG("%s", out);
	EXPECT_EQ(st, 0);
	EXPECT_NONNULL(strstr(out, "\"device\":\"npu\""));
	EXPECT_NONNULL(strstr(out, "\"niter\":20"));
	t = strstr(out, "\"throughput_fps\":");
	ASSERT_NONNULL(t);
	EXPECT_GT(strtod(t + 17, NULL), 0);
}

/* ---- ONNX models against their golden outputs --------------------------- */

/*
 * The models of models/onnx on npu over vnpu against the reference
 * outputs stored with them (PyTorch or onnxruntime, computed elsewhere),
 * within their stated tolerance: max |npu - ref| <= 1e-4 max |ref|, at
 * batch 1 and 4.
 */
#define GOLDEN_TOL_REL	1e-4

FIXTURE(npu_golden) {
	int unused;
};

FIXTURE_VARIANT(npu_golden) {
	const char *name;
	int batch;
	__s64 h, w;
};

FIXTURE_VARIANT_ADD(npu_golden, squeezenet1_1_b1) {
	.name = "squeezenet1_1", .batch = 1, .h = 224, .w = 224,
};
FIXTURE_VARIANT_ADD(npu_golden, squeezenet1_1_b4) {
	.name = "squeezenet1_1", .batch = 4, .h = 224, .w = 224,
};
FIXTURE_VARIANT_ADD(npu_golden, mobilenet_v2_b1) {
	.name = "mobilenet_v2", .batch = 1, .h = 224, .w = 224,
};
FIXTURE_VARIANT_ADD(npu_golden, ppocr_cls_b4) {
	.name = "ppocr_mobile_v2.0_cls", .batch = 4, .h = 48, .w = 192,
};

FIXTURE_SETUP(npu_golden)
{
}

FIXTURE_TEARDOWN(npu_golden)
{
}

TEST_F(npu_golden, matches_reference_outputs)
{
	__s64 shape[4] = { variant->batch, 3, variant->h, variant->w };
	char path[4096], file[4096];
	struct npr_tensor_arg t;
	float *in, *ref, *out;
	size_t in_len = 0, ref_len = 0, count = 0, i;
	float maxref = 0, maxdiff = 0;
	struct net n;

	REQUIRE_NPU();
	snprintf(path, sizeof(path), "%.3000s/models/onnx/%s.onnx",
		 npr_test_shared(), variant->name);
	snprintf(file, sizeof(file), "%.3000s/models/onnx/%s.input_b%d.f32",
		 npr_test_shared(), variant->name, variant->batch);
	in = slurp_n(file, &in_len);
	snprintf(file, sizeof(file), "%.3000s/models/onnx/%s.output_b%d.f32",
		 npr_test_shared(), variant->name, variant->batch);
	ref = slurp_n(file, &ref_len);
	if (access(path, R_OK) || !in || !ref) {
		free(in);
		free(ref);
		SKIP(return, "%s or its reference data not found", path);
	}
	ASSERT_EQ(net_open_shape(_metadata, &n, "npu", path, shape), 0);
	ASSERT_EQ(n.nin, 1);
	ASSERT_EQ(n.nout, 1);
	ASSERT_EQ(n.bytes[0][0], in_len);
	npr_prep_tensor(&t, n.req, 0, 0, in, in_len);
	t.elem_type = NPR_ELEM_F32;
	t.rank = 4;
	memcpy(t.dims, shape, sizeof(shape));
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_SET_TENSOR, &t), 0);
	ASSERT_EQ(net_infer(&n), 0);
	out = net_output(_metadata, &n, 0, &count);
	ASSERT_NONNULL(out);
	ASSERT_EQ(count * sizeof(float), ref_len);
	for (i = 0; i < count; i++) {
		maxref = fmaxf(maxref, fabsf(ref[i]));
		maxdiff = fmaxf(maxdiff, fabsf(out[i] - ref[i]));
	}
	TH_LOG("%s batch %d on npu: max |npu - ref| %.3g, relative %.3g (tolerance %.0e)",
	       variant->name, variant->batch, maxdiff,
	       maxdiff / maxref, GOLDEN_TOL_REL);
	EXPECT_GT(maxref, 0);
	EXPECT_LE(maxdiff, GOLDEN_TOL_REL * maxref);
	free(in);
	free(ref);
	free(out);
	net_close(&n);
}

/* ---- models with sub-graphs -------------------------------------------- */

/*
 * The shared TensorIterator + LSTMCell snippets come without weights:
 * write the xml next to a .bin of zeros but for the two Reshape targets
 * (as rnn_body_test does, where the closed form is checked on cpu), and
 * run it on cpu and npu.
 */
struct ti_snippet {
	const char *name;
	size_t bin_size;
	int64_t t1[2];		/* Reshape targets at offset 0 ... */
	size_t t2_off;		/* ... and t2_off */
	int64_t t2[3];
};

static void ti_snippet_agrees(struct npr_test *_metadata,
			      const struct ti_snippet *f)
{
	char dir[] = "/tmp/npr-npu-XXXXXX", src[4096], xml[4200], bin[4200];
	size_t len = 0;
	void *text;
	FILE *fo;
	int fd;

	REQUIRE_NPU();
	snprintf(src, sizeof(src), "%.3000s/models/ir-small/%s",
		 npr_test_shared(), f->name);
	text = slurp_n(src, &len);
	if (!text)
		SKIP(return, "model %s not found", src);
	ASSERT_NONNULL(mkdtemp(dir));
	snprintf(xml, sizeof(xml), "%s/m.xml", dir);
	snprintf(bin, sizeof(bin), "%s/m.bin", dir);
	fo = fopen(xml, "wb");
	ASSERT_NONNULL(fo);
	ASSERT_EQ(fwrite(text, 1, len, fo), len);
	fclose(fo);
	free(text);
	fd = open(bin, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, f->bin_size), 0);
	ASSERT_EQ(pwrite(fd, f->t1, sizeof(f->t1), 0), (ssize_t)sizeof(f->t1));
	ASSERT_EQ(pwrite(fd, f->t2, sizeof(f->t2), f->t2_off),
		  (ssize_t)sizeof(f->t2));
	close(fd);
	compare_with_cpu(_metadata, xml, NULL, 1);
	unlink(xml);
	unlink(bin);
	rmdir(dir);
}

TEST(npu_ti_resnet_agrees_with_cpu)
{
	static const struct ti_snippet f = {
		.name = "ti_resnet.xml", .bin_size = 8396840,
		.t1 = { 1, 512 }, .t2_off = 8396816, .t2 = { 1, 1, 512 },
	};

	ti_snippet_agrees(_metadata, &f);
}

/* a TensorIterator walking its sequence backwards (stride -1) */
TEST(npu_ti_negative_stride_agrees_with_cpu)
{
	static const struct ti_snippet f = {
		.name = "ti_negative_stride.xml", .bin_size = 3149864,
		.t1 = { 1, 512 }, .t2_off = 3149840, .t2 = { 1, 1, 256 },
	};

	ti_snippet_agrees(_metadata, &f);
}

/* Read @count f32 values at element @off of models/onnx/@name. */
static bool onnx_f32_at(const char *name, size_t off, float *out,
			size_t count)
{
	char path[4096];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%.3000s/models/onnx/%s",
		 npr_test_shared(), name);
	f = fopen(path, "rb");
	if (!f)
		return false;
	ok = !fseek(f, (long)(off * sizeof(float)), SEEK_SET) &&
	     fread(out, sizeof(float), count, f) == count;
	fclose(f);
	return ok;
}

/* Input or output port of @n named @name, or -1. */
static int net_port(struct npr_test *_metadata, struct net *n, int output,
		    const char *name)
{
	__u32 i;

	for (i = 0; i < (output ? n->nout : n->nin); i++) {
		struct npr_port_info pi;
		char buf[128];

		npr_prep_port_info(&pi, n->exec, i, output, buf, sizeof(buf));
		if (npr_ioctl(n->fd, NPR_IOCTL_PORT_INFO, &pi))
			return -1;
		if (!strcmp(buf, name))
			return (int)i;
	}
	return -1;
}

static void net_set(struct npr_test *_metadata, struct net *n,
		    const char *name, const void *data, size_t bytes)
{
	struct npr_tensor_arg t;
	int i = net_port(_metadata, n, 0, name);

	if (i < 0)
		TH_LOG("no input %s", name);
	ASSERT_GE(i, 0);
	ASSERT_EQ(n->bytes[0][i], bytes);
	npr_prep_tensor(&t, n->req, i, 0, (void *)data, bytes);
	t.elem_type = n->type[0][i];
	t.rank = n->rank[0][i];
	memcpy(t.dims, n->dims[0][i], sizeof(t.dims));
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_SET_TENSOR, &t), 0);
}

/*
 * Silero VAD v4 (ONNX: an If on sr holding more Ifs, and LSTMs), compiled
 * at batch 1, on chunk 4 of the reference stream (where speech starts)
 * with the LSTM state ONNX Runtime carried into it: on npu, output, hn
 * and cn match the golden values within 1e-4 of each output's absolute
 * maximum, as models_test checks on cpu, and agree with cpu.
 */
TEST(npu_silero_vad_one_chunk_matches_golden)
{
	static const char *const outs[] = { "output", "hn", "cn" };
	static const char *const gold[] = {
		"silero_vad_v4.stream.output.f32",
		"silero_vad_v4.stream.hn.f32",
		"silero_vad_v4.stream.cn.f32",
	};
	const size_t chunk = 4, state = 2 * 64;
	float in[512], h[128], c[128], want[128];
	struct npr_shape_arg sa[3] = {
		{ .index = 0, .rank = 2, .dims = { 1, 512 } },
		{ .index = 2, .rank = 3, .dims = { 2, 1, 64 } },
		{ .index = 3, .rank = 3, .dims = { 2, 1, 64 } },
	};
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096];
	int64_t sr = 16000;
	struct net n[2];
	int d, o, ret;

	REQUIRE_NPU();
	snprintf(path, sizeof(path), "%.3000s/models/onnx/silero_vad_v4.onnx",
		 npr_test_shared());
	if (access(path, R_OK) ||
	    !onnx_f32_at("silero_vad_v4.stream.input.f32", chunk * 512, in,
			 512) ||
	    !onnx_f32_at("silero_vad_v4.stream.h_in.f32", chunk * state, h,
			 state) ||
	    !onnx_f32_at("silero_vad_v4.stream.c_in.f32", chunk * state, c,
			 state))
		SKIP(return, "%s or its reference stream not found", path);
	for (d = 0; d < 2; d++) {
		memset(&n[d], 0, sizeof(n[d]));
		n[d].fd = npr_open(d ? "npu" : "cpu", 0);
		ASSERT_GE(n[d].fd, 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(n[d].fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		n[d].model = ml.handle;
		npr_prep_compile(&co, n[d].model);
		co.shapes = (uintptr_t)sa;
		co.num_shapes = 3;
		ret = npr_ioctl(n[d].fd, NPR_IOCTL_COMPILE, &co);
		if (ret)
			TH_LOG("%s: COMPILE: %s", d ? "npu" : "cpu",
			       npr_last_error());
		ASSERT_EQ(ret, 0);
		ASSERT_EQ(net_attach(_metadata, &n[d], co.exec), 0);
		net_set(_metadata, &n[d], "input", in, sizeof(in));
		net_set(_metadata, &n[d], "sr", &sr, sizeof(sr));
		net_set(_metadata, &n[d], "h", h, sizeof(h));
		net_set(_metadata, &n[d], "c", c, sizeof(c));
		ret = net_infer(&n[d]);
		if (ret)
			TH_LOG("%s: INFER: %s", d ? "npu" : "cpu",
			       npr_last_error());
		ASSERT_EQ(ret, 0);
	}
	for (o = 0; o < 3; o++) {
		size_t cnt = o ? state : 1, k, count[2];
		double amax = 0, md = 0, mc = 0;
		float *got[2];

		for (d = 0; d < 2; d++) {
			int i = net_port(_metadata, &n[d], 1, outs[o]);

			ASSERT_GE(i, 0);
			got[d] = net_output(_metadata, &n[d], i, &count[d]);
			ASSERT_NONNULL(got[d]);
			ASSERT_EQ(count[d], cnt);
		}
		ASSERT_TRUE(onnx_f32_at(gold[o], chunk * cnt, want, cnt));
		for (k = 0; k < cnt; k++) {
			amax = fmax(amax, fabs(want[k]));
			md = fmax(md, fabs((double)got[1][k] - want[k]));
			mc = fmax(mc, fabs((double)got[1][k] - got[0][k]));
		}
		TH_LOG("%s on npu: max |npu - ref| %.3g, |npu - cpu| %.3g, 1e-4 of absmax %.3g",
		       outs[o], md, mc, 1e-4 * amax);
		EXPECT_GT(amax, 0);
		EXPECT_LE(md, 1e-4 * amax);
		EXPECT_LE(mc, 1e-4 * amax);
		free(got[0]);
		free(got[1]);
	}
	net_close(&n[0]);
	net_close(&n[1]);
}

/*
 * The whole reference stream (20 chunks) through Silero VAD made stateful
 * on npu: the ONNX model compiled at batch 1 and written to IR (Ifs and
 * LSTMs with their bodies), h -> hn and c -> cn made variables, so the
 * driver gets ReadValue/Assign pairs next to If bodies.  Each chunk's
 * output and the final state match the reference within 1e-4 of their
 * absolute maximum, as models_test checks on cpu.
 */
TEST(npu_silero_vad_stateful_stream_matches_golden)
{
	static const char *const st_name[2] = { "h", "c" };
	static const char *const st_gold[2] = {
		"silero_vad_v4.stream.hn.f32", "silero_vad_v4.stream.cn.f32",
	};
	struct npr_shape sh[4] = {
		{ .rank = 2, .d = { 1, 512 } }, { .rank = -1 },
		{ .rank = 3, .d = { 2, 1, 64 } },
		{ .rank = 3, .d = { 2, 1, 64 } },
	};
	struct npr_state_pair pairs[2] = {
		{ (uintptr_t)"h", (uintptr_t)"hn" },
		{ (uintptr_t)"c", (uintptr_t)"cn" },
	};
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 2, .pairs = (uintptr_t)pairs,
	};
	const size_t chunks = 20, state = 2 * 64;
	float in[512], gold[20], want[128], got_st[128];
	struct npr_graph *g = NULL, *cg = NULL;
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096], *xml = NULL;
	size_t xml_len, bin_len, k, count;
	double amax = 0, md = 0;
	int64_t sr = 16000;
	void *bin = NULL;
	struct net n;
	int i, v, ret;

	REQUIRE_NPU();
	snprintf(path, sizeof(path), "%.3000s/models/onnx/silero_vad_v4.onnx",
		 npr_test_shared());
	if (access(path, R_OK) ||
	    !onnx_f32_at("silero_vad_v4.stream.output.f32", 0, gold, chunks))
		SKIP(return, "%s or its reference stream not found", path);
	ret = npr_onnx_load_file(path, &g);
	if (!ret)
		ret = g->ninputs == 4 ?
		      npr_compile_graph(g, sh, npr_backend_evaluator(), &cg) :
		      -EINVAL;
	if (!ret)
		ret = npr_ir_write_mem(cg, &xml, &xml_len, &bin, &bin_len);
	if (ret)
		TH_LOG("batch-1 IR: %s", npr_last_error());
	npr_graph_free(cg);
	npr_graph_free(g);
	ASSERT_EQ(ret, 0);

	memset(&n, 0, sizeof(n));
	n.fd = npr_open("npu", 0);
	ASSERT_GE(n.fd, 0);
	npr_prep_model_load_mem(&ml, xml, xml_len, bin, bin_len);
	ret = npr_ioctl(n.fd, NPR_IOCTL_MODEL_LOAD, &ml);
	free(xml);
	free(bin);
	ASSERT_EQ(ret, 0);
	ms.model = ml.handle;
	ret = npr_ioctl(n.fd, NPR_IOCTL_MAKE_STATEFUL, &ms);
	if (ret)
		TH_LOG("MAKE_STATEFUL: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_compile(&co, ml.handle);
	ret = npr_ioctl(n.fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(net_attach(_metadata, &n, co.exec), 0);
	/* input and sr in, output out: the state is gone from the ports */
	ASSERT_EQ(n.nin, 2);
	ASSERT_EQ(n.nout, 1);
	for (k = 0; k < chunks; k++)
		amax = fmax(amax, fabs(gold[k]));
	for (k = 0; k < chunks; k++) {
		float *got;

		ASSERT_TRUE(onnx_f32_at("silero_vad_v4.stream.input.f32",
					k * 512, in, 512));
		net_set(_metadata, &n, "input", in, sizeof(in));
		net_set(_metadata, &n, "sr", &sr, sizeof(sr));
		ret = net_infer(&n);
		if (ret)
			TH_LOG("chunk %zu: INFER: %s", k, npr_last_error());
		ASSERT_EQ(ret, 0);
		got = net_output(_metadata, &n, 0, &count);
		ASSERT_NONNULL(got);
		ASSERT_EQ(count, 1);
		md = fmax(md, fabs((double)got[0] - gold[k]));
		free(got);
	}
	TH_LOG("output over %zu chunks on npu: max |diff| %.3g, 1e-4 of absmax %.3g",
	       chunks, md, 1e-4 * amax);
	EXPECT_GT(amax, 0);
	EXPECT_LE(md, 1e-4 * amax);
	/* the state after the last chunk is the reference's hn, cn */
	for (i = 0; i < 2; i++) {
		struct npr_state_arg sa = { .size = sizeof(sa), .req = n.req };
		char name[32];

		for (v = 0; v < 2; v++) {
			sa.index = v;
			sa.name = (uintptr_t)name;
			sa.name_len = sizeof(name);
			ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_STATE_INFO, &sa), 0);
			if (!strcmp(name, st_name[i]))
				break;
		}
		ASSERT_LT(v, 2);
		sa.data = (uintptr_t)got_st;
		sa.bytes = sizeof(got_st);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_STATE_GET, &sa), 0);
		ASSERT_EQ(sa.bytes, sizeof(got_st));
		ASSERT_TRUE(onnx_f32_at(st_gold[i], (chunks - 1) * state, want,
					state));
		amax = md = 0;
		for (k = 0; k < state; k++) {
			amax = fmax(amax, fabs(want[k]));
			md = fmax(md, fabs((double)got_st[k] - want[k]));
		}
		TH_LOG("%s after %zu chunks on npu: max |diff| %.3g, 1e-4 of absmax %.3g",
		       st_name[i], chunks, md, 1e-4 * amax);
		EXPECT_LE(md, 1e-4 * amax);
	}
	net_close(&n);
}

/* ---- the loader's intercept mode and validation layer ------------------- */

/*
 * The loader reads its environment once per process: run this program
 * again with the layer enabled, all tests but these, and check it passes.
 */
static void rerun_with(struct npr_test *_metadata, const char *const env[])
{
	char exe[PATH_MAX];
	ssize_t n;
	pid_t pid;
	int st, i;

	if (getenv("NPR_NPU_TEST_CHILD"))
		SKIP(return, "already the re-run");
	REQUIRE_NPU();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = 0;
	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		int null = open(getenv("NPR_NPU_TEST_LOG") ? getenv("NPR_NPU_TEST_LOG") : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		setenv("NPR_NPU_TEST_CHILD", "1", 1);
		for (i = 0; env[i]; i += 2)
			setenv(env[i], env[i + 1], 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		TH_LOG("%s with %s=%s failed; run it so to see", exe, env[0],
		       env[1]);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(npu_loader_intercept)
{
	static const char *const env[] = {
		"ZE_ENABLE_LOADER_INTERCEPT", "1", NULL,
	};

	rerun_with(_metadata, env);
}

TEST(npu_validation_layer)
{
	static const char *const env[] = {
		"ZE_ENABLE_VALIDATION_LAYER", "1",
		"ZE_ENABLE_PARAMETER_VALIDATION", "1", NULL,
	};

	rerun_with(_metadata, env);
}

/* ---- vnpu through the Level Zero API directly ---------------------------- */

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include <dlfcn.h>
#include <malloc.h>
#include <sys/stat.h>

#include "npu/ze_graph.h"

/* One vnpu context with the open-closed-eye graph (1 input, 1 output). */
struct zl {
	ze_result_t (*DriverGet)(uint32_t *, ze_driver_handle_t *);
	ze_result_t (*DeviceGet)(ze_driver_handle_t, uint32_t *,
				 ze_device_handle_t *);
	ze_result_t (*DriverGetExtensionFunctionAddress)(ze_driver_handle_t,
		const char *, void **);
	ze_result_t (*ContextCreate)(ze_driver_handle_t,
				     const ze_context_desc_t *,
				     ze_context_handle_t *);
	ze_result_t (*ContextDestroy)(ze_context_handle_t);
	ze_result_t (*MemAllocHost)(ze_context_handle_t,
				    const ze_host_mem_alloc_desc_t *, size_t,
				    size_t, void **);
	ze_result_t (*CommandQueueCreate)(ze_context_handle_t,
		ze_device_handle_t, const ze_command_queue_desc_t *,
		ze_command_queue_handle_t *);
	ze_result_t (*CommandQueueExecuteCommandLists)(
		ze_command_queue_handle_t, uint32_t,
		ze_command_list_handle_t *, ze_fence_handle_t);
	ze_result_t (*CommandListCreate)(ze_context_handle_t,
		ze_device_handle_t, const ze_command_list_desc_t *,
		ze_command_list_handle_t *);
	ze_result_t (*CommandListClose)(ze_command_list_handle_t);
	ze_result_t (*FenceCreate)(ze_command_queue_handle_t,
				   const ze_fence_desc_t *,
				   ze_fence_handle_t *);
	ze_result_t (*FenceHostSynchronize)(ze_fence_handle_t, uint64_t);
	ze_result_t (*FenceReset)(ze_fence_handle_t);
	ze_result_t (*FenceDestroy)(ze_fence_handle_t);
	ze_result_t (*CommandListDestroy)(ze_command_list_handle_t);
	ze_result_t (*CommandQueueDestroy)(ze_command_queue_handle_t);
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_command_queue_handle_t queue;
	const struct npr_ze_graph_ddi *g;
	uint8_t *ir;
	size_t ir_size;
	npr_ze_graph_handle_t graph;
	size_t in_bytes, out_bytes;
};

static const char *const zl_names[] = {
	"zeDriverGet", "zeDeviceGet", "zeDriverGetExtensionFunctionAddress",
	"zeContextCreate", "zeContextDestroy", "zeMemAllocHost",
	"zeCommandQueueCreate", "zeCommandQueueExecuteCommandLists",
	"zeCommandListCreate", "zeCommandListClose", "zeFenceCreate",
	"zeFenceHostSynchronize", "zeFenceReset", "zeFenceDestroy",
	"zeCommandListDestroy", "zeCommandQueueDestroy",
};

static uint8_t *read_file(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || !(buf = malloc(st.st_size + 1)) ||
	    fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = st.st_size;
	return buf;
}

/* NGRAPH_LITE, classic layout, of the model at models/ir/@rel. */
static uint8_t *ngraph_lite(const char *rel, size_t *size)
{
	char path[4096];
	size_t xs = 0, bs = 0, n;
	uint8_t *xml, *bin, *buf = NULL;
	uint16_t ver[2] = { 7, 4 };
	uint32_t two = 2;
	uint64_t v;

	model_path(path, sizeof(path), rel);
	xml = read_file(path, &xs);
	n = strlen(path);
	if (n > 4)
		strcpy(path + n - 4, ".bin");
	bin = read_file(path, &bs);
	if (xml && bin)
		buf = malloc(24 + xs + bs);
	if (buf) {
		memcpy(buf, ver, 4);
		memcpy(buf + 4, &two, 4);
		v = xs;
		memcpy(buf + 8, &v, 8);
		memcpy(buf + 16, xml, xs);
		v = bs;
		memcpy(buf + 16 + xs, &v, 8);
		memcpy(buf + 24 + xs, bin, bs);
		*size = 24 + xs + bs;
	}
	free(xml);
	free(bin);
	return buf;
}

static ze_result_t zl_graph(struct zl *z, const uint8_t *in, size_t size,
			    uint32_t format, const char *flags,
			    npr_ze_graph_handle_t *out)
{
	struct npr_ze_graph_desc_2 d = {
		.stype = NPR_ZE_STYPE_GRAPH_DESC, .format = format,
		.inputSize = size, .pInput = in, .pBuildFlags = flags,
	};

	return z->g->pfnCreate2(z->ctx, z->dev, &d, out);
}

static void zl_open(struct npr_test *_metadata, struct zl *z)
{
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_command_queue_desc_t qd = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
	};
	struct npr_ze_graph_argument_properties ap = { 0 };
	void *lib, **fn = (void **)z;
	uint32_t n = 1, i;

	memset(z, 0, sizeof(*z));
	REQUIRE_NPU();	/* the library initialised the loader */
	lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_NOLOAD);
	ASSERT_NONNULL(lib);
	for (i = 0; i < sizeof(zl_names) / sizeof(zl_names[0]); i++) {
		fn[i] = dlsym(lib, zl_names[i]);
		ASSERT_NONNULL(fn[i]);
	}
	ASSERT_EQ(z->DriverGet(&n, &z->drv), ZE_RESULT_SUCCESS);
	n = 1;
	ASSERT_EQ(z->DeviceGet(z->drv, &n, &z->dev), ZE_RESULT_SUCCESS);
	ASSERT_EQ(z->DriverGetExtensionFunctionAddress(z->drv,
			"ZE_extension_graph_1_8", (void **)&z->g),
		  ZE_RESULT_SUCCESS);
	ASSERT_EQ(z->ContextCreate(z->drv, &cd, &z->ctx), ZE_RESULT_SUCCESS);
	ASSERT_EQ(z->CommandQueueCreate(z->ctx, z->dev, &qd, &z->queue),
		  ZE_RESULT_SUCCESS);
	z->ir = ngraph_lite(EYE, &z->ir_size);
	ASSERT_NONNULL(z->ir);
	ASSERT_EQ(zl_graph(z, z->ir, z->ir_size,
			   NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL, &z->graph),
		  ZE_RESULT_SUCCESS);
	ASSERT_EQ(z->g->pfnGetArgumentProperties(z->graph, 0, &ap), 0);
	z->in_bytes = 4;
	for (i = 0; i < NPR_ZE_ARG_DIMS; i++)
		z->in_bytes *= ap.dims[i];
	ASSERT_EQ(z->g->pfnGetArgumentProperties(z->graph, 1, &ap), 0);
	z->out_bytes = 4;
	for (i = 0; i < NPR_ZE_ARG_DIMS; i++)
		z->out_bytes *= ap.dims[i];
}

/*
 * Everything zl_open made, in the order a driver wants it destroyed; the
 * test has destroyed its own lists and fences (and graphs) already.
 */
static void zl_close(struct npr_test *_metadata, struct zl *z)
{
	EXPECT_EQ(z->g->pfnDestroy(z->graph), ZE_RESULT_SUCCESS);
	EXPECT_EQ(z->CommandQueueDestroy(z->queue), ZE_RESULT_SUCCESS);
	EXPECT_EQ(z->ContextDestroy(z->ctx), ZE_RESULT_SUCCESS);
	free(z->ir);
}

static void *zl_alloc(struct npr_test *_metadata, struct zl *z, size_t n)
{
	ze_host_mem_alloc_desc_t hd = {
		.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
	};
	void *p = NULL;

	if (z->MemAllocHost(z->ctx, &hd, n, 4096, &p))
		return NULL;
	memset(p, 0, n);
	return p;
}

/* A closed list executing the graph with its arguments as they are now. */
static ze_result_t zl_record(struct zl *z, npr_ze_graph_handle_t graph,
			     ze_command_list_handle_t *list)
{
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_result_t r;

	*list = NULL;
	r = z->CommandListCreate(z->ctx, z->dev, &ld, list);
	if (!r)
		r = z->g->pfnAppendGraphExecute(*list, graph, NULL, NULL, 0,
						NULL);
	if (!r)
		r = z->CommandListClose(*list);
	if (r && *list) {
		z->CommandListDestroy(*list);
		*list = NULL;
	}
	return r;
}

static ze_result_t zl_run(struct zl *z, ze_command_list_handle_t list,
			  ze_fence_handle_t fence)
{
	ze_result_t r;

	r = z->CommandQueueExecuteCommandLists(z->queue, 1, &list, fence);
	if (!r)
		r = z->FenceHostSynchronize(fence, UINT64_MAX);
	return r;
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

TEST(vnpu_binds_arguments_when_the_execute_is_appended)
{
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_command_list_handle_t l1, l2;
	ze_fence_handle_t f1, f2;
	void *in, *o1, *o2;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	in = zl_alloc(_metadata, &z, z.in_bytes);
	o1 = zl_alloc(_metadata, &z, z.out_bytes);
	o2 = zl_alloc(_metadata, &z, z.out_bytes);
	ASSERT_TRUE(in && o1 && o2);
	memset(in, 0x3c, z.in_bytes);	/* 0.0115 as f32 */
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 0, in), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 1, o1), 0);
	ASSERT_EQ(zl_record(&z, z.graph, &l1), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 1, o2), 0);
	ASSERT_EQ(zl_record(&z, z.graph, &l2), 0);
	ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f1), 0);
	ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f2), 0);
	/* the first list writes o1 although o2 is the current value */
	ASSERT_EQ(zl_run(&z, l1, f1), 0);
	EXPECT_FALSE(all_zero(o1, z.out_bytes));
	EXPECT_TRUE(all_zero(o2, z.out_bytes));
	ASSERT_EQ(zl_run(&z, l2, f2), 0);
	EXPECT_EQ(memcmp(o1, o2, z.out_bytes), 0);
	/* the lists use the graph */
	EXPECT_EQ(z.g->pfnDestroy(z.graph),
		  ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
	EXPECT_EQ(z.FenceDestroy(f1), 0);
	EXPECT_EQ(z.FenceDestroy(f2), 0);
	EXPECT_EQ(z.CommandListDestroy(l1), 0);
	EXPECT_EQ(z.CommandListDestroy(l2), 0);
	zl_close(_metadata, &z);
}

TEST(vnpu_rejects_an_execute_with_unset_or_foreign_arguments)
{
	ze_command_list_handle_t l;
	static char foreign[1 << 16];
	npr_ze_graph_handle_t g2;
	void *in;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	in = zl_alloc(_metadata, &z, z.in_bytes);
	ASSERT_NONNULL(in);
	ASSERT_EQ(zl_graph(&z, z.ir, z.ir_size,
			   NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL, &g2), 0);
	/* output never set */
	ASSERT_EQ(z.g->pfnSetArgumentValue(g2, 0, in), 0);
	EXPECT_EQ(zl_record(&z, g2, &l), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	/* output in memory the driver did not allocate */
	ASSERT_EQ(z.g->pfnSetArgumentValue(g2, 1, foreign), 0);
	EXPECT_EQ(zl_record(&z, g2, &l), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	/* an input allocation too small for the argument */
	ASSERT_EQ(z.g->pfnSetArgumentValue(g2, 0, (char *)in + 64), 0);
	EXPECT_EQ(zl_record(&z, g2, &l), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(z.g->pfnSetArgumentValue(g2, 2, in),
		  ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(z.g->pfnDestroy(g2), 0);
	zl_close(_metadata, &z);
}

TEST(vnpu_fences_must_be_reset_before_reuse)
{
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_command_list_handle_t l;
	ze_fence_handle_t f;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 0,
			zl_alloc(_metadata, &z, z.in_bytes)), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 1,
			zl_alloc(_metadata, &z, z.out_bytes)), 0);
	ASSERT_EQ(zl_record(&z, z.graph, &l), 0);
	ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f), 0);
	EXPECT_EQ(zl_run(&z, l, f), 0);
	EXPECT_EQ(z.CommandQueueExecuteCommandLists(z.queue, 1, &l, f),
		  ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT_EQ(z.FenceReset(f), 0);
	EXPECT_EQ(zl_run(&z, l, f), 0);
	EXPECT_EQ(z.FenceDestroy(f), 0);
	EXPECT_EQ(z.CommandListDestroy(l), 0);
	zl_close(_metadata, &z);
}

TEST(vnpu_rejects_malformed_graph_input)
{
	npr_ze_graph_handle_t g;
	char log[512];
	uint32_t len = sizeof(log);
	uint32_t three = 3;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	EXPECT_EQ(zl_graph(&z, z.ir, z.ir_size - 1,
			   NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL, &g),
		  ZE_RESULT_ERROR_INVALID_SIZE);
	EXPECT_EQ(zl_graph(&z, z.ir, 6, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
			   NULL, &g), ZE_RESULT_ERROR_INVALID_SIZE);
	EXPECT_EQ(zl_graph(&z, z.ir, z.ir_size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
			   "--inputs_precisions=\"0:FP32\" --bogus", &g),
		  ZE_RESULT_ERROR_INVALID_ARGUMENT);
	ASSERT_EQ(z.g->pfnBuildLogGetString(NULL, &len, log), 0);
	TH_LOG("build log: %s", log);
	EXPECT_NONNULL(strstr(log, "--bogus"));
	EXPECT_EQ(zl_graph(&z, z.ir, z.ir_size, NPR_ZE_GRAPH_FORMAT_NATIVE,
			   NULL, &g), ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
	EXPECT_EQ(zl_graph(&z, z.ir, z.ir_size, 7, NULL, &g),
		  ZE_RESULT_ERROR_INVALID_ENUMERATION);
	memcpy(z.ir + 4, &three, 4);
	EXPECT_EQ(zl_graph(&z, z.ir, z.ir_size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
			   NULL, &g), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	zl_close(_metadata, &z);
}

TEST(vnpu_native_blob_round_trips)
{
	npr_ze_graph_handle_t g2;
	const uint8_t *view;
	uint8_t *blob;
	size_t size = 0, size2 = 0;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(z.g->pfnGetNativeBinary(z.graph, &size, NULL), 0);
	blob = malloc(size);
	ASSERT_NONNULL(blob);
	ASSERT_EQ(z.g->pfnGetNativeBinary(z.graph, &size, blob), 0);
	ASSERT_EQ(z.g->pfnGetNativeBinary2(z.graph, &size2, &view), 0);
	ASSERT_EQ(size, size2);
	EXPECT_EQ(memcmp(blob, view, size), 0);
	EXPECT_EQ(zl_graph(&z, blob, size, NPR_ZE_GRAPH_FORMAT_NATIVE, NULL,
			   &g2), 0);
	EXPECT_EQ(z.g->pfnDestroy(g2), 0);
	blob[12] ^= 1;	/* built for another device */
	EXPECT_EQ(zl_graph(&z, blob, size, NPR_ZE_GRAPH_FORMAT_NATIVE, NULL,
			   &g2), ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
	free(blob);
	zl_close(_metadata, &z);
}

/* Bytes the process has from malloc, in every arena and mmapped. */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * Each command queue has a device thread, which runs the graph's kernels
 * and with them allocates their thread-local scratch (the GEMM packing
 * buffer alone is over half a megabyte).  Queues created, used and
 * destroyed one after another leave no memory behind: the scratch goes
 * with its thread.
 */
TEST(vnpu_queue_threads_free_their_scratch)
{
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_command_queue_desc_t qd = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
	};
	ze_command_queue_handle_t main_queue;
	ze_command_list_handle_t l;
	size_t before = 0, after;
	ze_fence_handle_t f;
	struct zl z;
	int i;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 0,
			zl_alloc(_metadata, &z, z.in_bytes)), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 1,
			zl_alloc(_metadata, &z, z.out_bytes)), 0);
	ASSERT_EQ(zl_record(&z, z.graph, &l), 0);
	main_queue = z.queue;
	for (i = 0; i < 17; i++) {
		if (i == 1)	/* after one round, whatever it set up */
			before = heap_in_use();
		ASSERT_EQ(z.CommandQueueCreate(z.ctx, z.dev, &qd, &z.queue), 0);
		ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f), 0);
		ASSERT_EQ(zl_run(&z, l, f), 0);
		ASSERT_EQ(z.FenceDestroy(f), 0);
		ASSERT_EQ(z.CommandQueueDestroy(z.queue), 0);
	}
	after = heap_in_use();
	TH_LOG("16 queues: heap %zu -> %zu bytes", before, after);
	EXPECT_LT(after, before + (1 << 20));
	z.queue = main_queue;
	EXPECT_EQ(z.CommandListDestroy(l), 0);
	zl_close(_metadata, &z);
}

TEST(vnpu_answers_as_npu_4000)
{
	struct npr_device_info di = { .size = sizeof(di) };
	int fd;

	setenv("VNPU_PLATFORM", "4000", 1);	/* before the loader starts */
	REQUIRE_NPU();
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
	if (!strstr(di.full_name, "vnpu"))
		SKIP(goto out, "not vnpu: %s", di.full_name);
	EXPECT_STREQ(di.arch, "4000");
out:
	npr_close(fd);
}
/*
 * vnpu compiles a stateful IR as the NPU compiler does: the variable is
 * an input vpux_ie_read_value_<id> and an output vpux_ie_assign_<id>;
 * with one buffer bound to both, each execution updates it in place, and
 * zero filling it resets the variable.  adder: out = in + state.
 */
TEST(vnpu_state_arguments_use_the_compiler_names)
{
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	static const char *const names[4] = {
		"input", "vpux_ie_read_value_variable0", NULL,
		"vpux_ie_assign_variable0",
	};
	struct npr_ze_graph_properties gp = {
		.stype = NPR_ZE_STYPE_GRAPH_PROPERTIES,
	};
	npr_ze_graph_handle_t g;
	ze_command_list_handle_t l;
	ze_fence_handle_t f;
	float *in, *state, *out;
	uint8_t *ir;
	size_t size;
	struct zl z;
	uint32_t i;
	int step;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	ir = ngraph_lite("../ir-stateful/adder_v11.xml", &size);
	ASSERT_NONNULL(ir);
	ASSERT_EQ(zl_graph(&z, ir, size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL,
			   &g), 0);
	ASSERT_EQ(z.g->pfnGetProperties(g, &gp), 0);
	ASSERT_EQ(gp.numGraphArgs, 4);
	for (i = 0; i < 4; i++) {
		struct npr_ze_graph_argument_properties ap = {
			.stype = NPR_ZE_STYPE_GRAPH_ARGUMENT_PROPERTIES,
		};

		ASSERT_EQ(z.g->pfnGetArgumentProperties(g, i, &ap), 0);
		TH_LOG("argument %u: %s (%s)", i, ap.name,
		       ap.type == NPR_ZE_GRAPH_ARG_OUTPUT ? "output" : "input");
		EXPECT_EQ(ap.type, i < 2 ? NPR_ZE_GRAPH_ARG_INPUT :
					   NPR_ZE_GRAPH_ARG_OUTPUT);
		if (names[i])
			EXPECT_STREQ(ap.name, names[i]);
		EXPECT_EQ(ap.devicePrecision, NPR_ZE_PREC_FP32);
	}
	in = zl_alloc(_metadata, &z, 4);
	state = zl_alloc(_metadata, &z, 4);
	out = zl_alloc(_metadata, &z, 4);
	ASSERT_TRUE(in && state && out);
	*in = 1.5f;
	ASSERT_EQ(z.g->pfnSetArgumentValue(g, 0, in), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(g, 1, state), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(g, 2, out), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(g, 3, state), 0);
	ASSERT_EQ(zl_record(&z, g, &l), 0);
	ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f), 0);
	for (step = 1; step <= 3; step++) {
		ASSERT_EQ(z.FenceReset(f), 0);
		ASSERT_EQ(zl_run(&z, l, f), 0);
		EXPECT_EQ(*out, 1.5f * step);
		EXPECT_EQ(*state, 1.5f * step);
	}
	memset(state, 0, 4);	/* reset */
	ASSERT_EQ(z.FenceReset(f), 0);
	ASSERT_EQ(zl_run(&z, l, f), 0);
	EXPECT_EQ(*out, 1.5f);
	free(ir);
	EXPECT_EQ(z.FenceDestroy(f), 0);
	EXPECT_EQ(z.CommandListDestroy(l), 0);
	EXPECT_EQ(z.g->pfnDestroy(g), 0);
	zl_close(_metadata, &z);
}

#endif /* Level Zero headers */

TEST_HARNESS_MAIN
