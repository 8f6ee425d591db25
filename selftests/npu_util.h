/* SPDX-License-Identifier: MIT */
/*
 * Helpers of npu_models_test.c and npu_driver_test.c: find vnpu and skip
 * without an npu device, one model compiled with a request on a device
 * (struct net), paths under models/ir, and the parameter accessors.
 */
#ifndef NPU_UTIL_H
#define NPU_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npuring.h>

#include "harness.h"

#define MAX_PORTS	8

static char npu_skip[512];

/*
 * Point the loader at vnpu (NPR_VNPU); false if there is none to use.
 * Without NPR_VNPU: the vnpu of this build tree (../npu/vnpu/), or the one
 * installed beside the installed selftests (<libdir>/npuring/vnpu/).
 */
static inline bool find_vnpu(void)
{
	static const char *const rel[] = { "npu/vnpu", "vnpu" };
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *v = getenv("NPR_VNPU");
	unsigned int i;
	ssize_t n;

	if ((v && *v) || getenv("ZE_ENABLE_ALT_DRIVERS"))
		return true;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	dirname(exe);
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path),
			 "%s/../%s/libze_intel_vpu.so.1", exe, rel[i]);
		if (!access(path, R_OK)) {
			setenv("NPR_VNPU", path, 1);
			return true;
		}
	}
	return false;
}

/*
 * Whether vnpu, as this process's environment sets it up, asks for the
 * INITIALIZE stage (host-side GraphInitialize): graph extension 1.8 (the
 * default) without VNPU_INIT_STAGE=COMMAND_LIST_INITIALIZE.
 */
static inline bool vnpu_host_init(void)
{
	const char *v = getenv("VNPU_GRAPH_VERSION");
	const char *s = getenv("VNPU_INIT_STAGE");

	if (v && *v && atoi(v) < 8)
		return false;
	return !s || strcmp(s, "COMMAND_LIST_INITIALIZE");
}

/* Point the loader at vnpu; return false (with npu_skip set) if absent. */
static inline bool npu_available(void)
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

/* A request of compiled model @exec on n->fd, and its ports. */
static inline int net_attach(struct npr_test *_metadata, struct net *n,
			     __u32 exec)
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

/* @shape: NULL, or a static [N,C,H,W] for input 0 (dynamic models). */
static inline int net_open_shape(struct npr_test *_metadata, struct net *n,
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

static inline int net_open(struct npr_test *_metadata, struct net *n,
			   const char *dev, const char *path)
{
	return net_open_shape(_metadata, n, dev, path, NULL);
}

/* Deterministic input: f32 values in [0, 1), else bytes. */
static inline void net_fill(struct npr_test *_metadata, struct net *n,
			    __u32 seed)
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

static inline int net_infer(struct net *n)
{
	struct npr_infer inf = { .size = sizeof(inf), .req = n->req };

	return npr_ioctl(n->fd, NPR_IOCTL_INFER, &inf);
}

static inline float half_to_float(uint16_t h)
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
static inline float *net_output(struct npr_test *_metadata, struct net *n,
				__u32 i, size_t *count)
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

static inline void net_close(struct net *n)
{
	if (n->fd >= 0)
		npr_close(n->fd);
	n->fd = -1;
}

/* @rel under models/ir, or an absolute path. */
static inline void model_path(char *buf, size_t len, const char *rel)
{
	int n = rel[0] == '/' ? snprintf(buf, len, "%s", rel) :
		snprintf(buf, len, "%s/models/ir/%s", npr_test_shared(), rel);

	if (n < 0 || (size_t)n >= len)
		buf[0] = 0;
}

/* The small model most npu tests use: 1 input, 1 output. */
#define EYE "open-closed-eye-0001/FP32/open-closed-eye-0001.xml"

/* Device parameter @id through GET_PARAM; get_int() is -1 on failure. */
static inline int64_t get_int(int fd, uint32_t id)
{
	struct npr_param p = { .size = sizeof(p), .param = id };

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p) ? -1 : (int64_t)p.value;
}

static inline int set_int(int fd, uint32_t id, uint64_t v)
{
	struct npr_param p = { .size = sizeof(p), .param = id, .value = v };

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p);
}

/*
 * Parameter @id of object @handle (0: the device) as a string or an int;
 * get_int_of() is -1000 on failure.
 */
static inline int get_str(int fd, __u32 handle, uint32_t id, char *buf,
			  size_t len)
{
	struct npr_param p = {
		.size = sizeof(p), .handle = handle, .param = id,
		.ptr = (uintptr_t)buf, .len = (__u32)len,
	};

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p);
}

static inline int64_t get_int_of(int fd, __u32 handle, uint32_t id)
{
	struct npr_param p = { .size = sizeof(p), .handle = handle,
			       .param = id };

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p) ? -1000 :
	       (int64_t)p.value;
}

static inline int set_str(int fd, uint32_t id, const char *s)
{
	struct npr_param p = {
		.size = sizeof(p), .param = id, .ptr = (uintptr_t)s,
		.len = (__u32)strlen(s) + 1,
	};

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p);
}

/* A text file's first 64 KiB, NUL-terminated; "" if it cannot be read. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	if (f && buf)
		buf[fread(buf, 1, 65535, f)] = 0;
	if (f)
		fclose(f);
	return buf;
}

#endif /* NPU_UTIL_H */
