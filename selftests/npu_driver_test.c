// SPDX-License-Identifier: MIT
/*
 * The npu device and the driver stack under it, over vnpu, the software
 * NPU: device info, fault injection, the NPU plugin's properties and the
 * compile-time ones as the driver sees them, discovery and diagnosis
 * messages, the tools on npu, the npu programs again through the loader's
 * intercept mode and validation layer (vnpu_test.c calls vnpu through the
 * Level Zero API directly).
 *
 * vnpu is found through NPR_VNPU (set by `make check`) or next to this
 * program: ../npu/vnpu/ in the build tree, ../vnpu/ when installed
 * (<libdir>/npuring/selftests/ and <libdir>/npuring/vnpu/).  Without
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <npuring.h>

#include "harness.h"
#include "npu_util.h"

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

/*
 * Identity: DEVICE_UUID is the device's Level Zero UUID (vnpu's is the
 * NPU device UUID), and the npu lists EXPORT_IMPORT among its
 * capabilities, as cpu does.
 */
TEST(npu_identity)
{
	char buf[512], *s;
	bool ei = false;
	int fd, k;

	REQUIRE_NPU();
	for (k = 0; k < 2; k++) {
		fd = npr_open(k ? "cpu" : "npu", 0);
		ASSERT_GE(fd, 0);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_OPTIMIZATION_CAPABILITIES,
				  buf, sizeof(buf) - 1), 0);
		for (s = buf, ei = false; *s; s += strlen(s) + 1)
			ei |= !strcmp(s, "EXPORT_IMPORT");
		EXPECT_TRUE(ei);
		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_UUID, buf,
				  sizeof(buf)), 0);
		TH_LOG("%s: DEVICE_UUID %s", k ? "cpu" : "npu", buf);
		if (!k && strstr(buf, "80d1d11e"))
			EXPECT_STREQ(buf, "80d1d11e-b738-11ea-b3de-0242ac130004");
		else if (!k)
			TH_LOG("not vnpu: its UUID is the driver's own");
		npr_close(fd);
	}
}

static int run_tool(const char *cmdline, char *out, size_t len);

/* The NUL-separated list @list has exactly the names of @want, in order. */
static bool list_is(const char *list, const char *const *want, int n)
{
	int k;

	for (k = 0; k < n && *list; k++, list += strlen(list) + 1)
		if (strcmp(list, want[k]))
			return false;
	return k == n && !*list;
}

/*
 * One NPU: AVAILABLE_DEVICES is "npu"; npr_backend_at() walks the
 * backends, cpu first.
 */
TEST(npu_available_devices_one)
{
	static const char *const one[] = { "npu" };
	char buf[512];
	int fd;

	REQUIRE_NPU();
	if (getenv("VNPU_DEVICES"))
		SKIP(return, "VNPU_DEVICES is set");
	EXPECT_STREQ(npr_backend_at(0), "cpu");
	EXPECT_STREQ(npr_backend_at(1), "npu");
	EXPECT_STREQ(npr_backend_at(2), "null");
	EXPECT_NULL(npr_backend_at(3));
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(get_str(fd, 0, NPR_PARAM_AVAILABLE_DEVICES, buf,
			  sizeof(buf) - 1), 0);
	EXPECT_TRUE(list_is(buf, one, 1));
	npr_close(fd);
}

/*
 * vnpu presenting three NPUs (VNPU_DEVICES=3): AVAILABLE_DEVICES names
 * npu.0, npu.1 and npu.2 on each of them, "npu" opens the first (named
 * npu.0), "npu.1" the second (its own PCI bus, UUID and name) and runs a
 * model there, "npu.3" is no device, and npr-info lists all three.
 */
TEST(npu_available_devices_several)
{
	static const char *const three[] = { "npu.0", "npu.1", "npu.2" };
	struct npr_device_info di = { .size = sizeof(di) };
	static char out[1 << 16];
	char buf[512], path[4096];
	struct net n;
	int fd, k;

	setenv("VNPU_DEVICES", "3", 1);	/* before the loader starts */
	REQUIRE_NPU();
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
	npr_close(fd);
	if (!strstr(di.full_name, "vnpu"))
		SKIP(return, "not vnpu: the NPUs are the machine's");
	EXPECT_STREQ(di.name, "npu.0");
	for (k = 0; k < 3; k++) {
		fd = npr_open(three[k], 0);
		ASSERT_GE(fd, 0);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_AVAILABLE_DEVICES, buf,
				  sizeof(buf) - 1), 0);
		EXPECT_TRUE(list_is(buf, three, 3));
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di), 0);
		EXPECT_STREQ(di.name, three[k]);
		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_ID, buf,
				  sizeof(buf)), 0);
		EXPECT_EQ(atoi(buf), k);
		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_PCI_INFO, buf,
				  sizeof(buf)), 0);
		EXPECT_EQ(strtol(buf + 5, NULL, 16), k);	/* the bus */
		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_DEVICE_UUID, buf,
				  sizeof(buf)), 0);
		EXPECT_EQ(strtol(buf + 34, NULL, 16), 4 + k);
		if (k)
			EXPECT_NONNULL(strstr(di.full_name, k == 1 ? "#1" :
							     "#2"));
		else
			EXPECT_NULL(strchr(di.full_name, '#'));
		npr_close(fd);
	}
	EXPECT_EQ(npr_open("npu.3", 0), -ENODEV);
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu.1", path), 0);
	net_fill(_metadata, &n, 1);
	EXPECT_EQ(net_infer(&n), 0);
	net_close(&n);
	EXPECT_EQ(run_tool("npr-info", out, sizeof(out)), 0);
	for (k = 0; k < 3; k++) {
		snprintf(buf, sizeof(buf), "\n%s\n", three[k]);
		EXPECT_NONNULL(strstr(out, buf));
	}
	EXPECT_EQ(strncmp(out, "cpu\n", 4), 0);
	EXPECT_NONNULL(strstr(out, "\nnull\n"));
}

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
const char *npr_platform_of(uint32_t pci_id);

/* The PCI id -> platform table of the facts (npu/device.c). */
TEST(npu_platform_of_every_pci_id)
{
	EXPECT_STREQ(npr_platform_of(0x6240), "3700");
	EXPECT_STREQ(npr_platform_of(0x7D1D), "3720");
	EXPECT_STREQ(npr_platform_of(0xAD1D), "3720");
	EXPECT_STREQ(npr_platform_of(0x643E), "4000");
	EXPECT_STREQ(npr_platform_of(0xB03E), "5010");
	EXPECT_STREQ(npr_platform_of(0xFD3E), "5010");
	EXPECT_STREQ(npr_platform_of(0xD71D), "AUTO_DETECT");
	EXPECT_STREQ(npr_platform_of(0x1234), "AUTO_DETECT");
}
#endif

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

/* ---- fault injection ---------------------------------------------------- */


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


/*
 * The compile-time NPU properties reach the driver: in the build flags'
 * --config, NPU_BYPASS_UMD_CACHING as the descriptor's disable-caching
 * flag, NPU_DEFER_WEIGHTS_LOAD moves GraphInitialize to the first request,
 * INFERENCE_PRECISION_HINT (f16 unless set) in --config too.  vnpu
 * writes what it was given to VNPU_TRACE.  The model still agrees with
 * cpu.
 */
static void compile_traced(struct npr_test *_metadata, bool set)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX", path[4096], *t;
	char hint[16];
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
	/* the NPU computes in f16 unless told f32; bf16 it has not */
	ASSERT_EQ(get_str(fd, 0, NPR_PARAM_INFERENCE_PRECISION_HINT, hint,
			  sizeof(hint)), 0);
	EXPECT_STREQ(hint, "f16");
	EXPECT_EQ(set_str(fd, NPR_PARAM_INFERENCE_PRECISION_HINT, "bf16"),
		  -EINVAL);
	/* and it is a caching property: the model cache keys by it */
	{
		char list[4096];
		const char *e;
		bool found = false;

		ASSERT_EQ(get_str(fd, 0, NPR_PARAM_CACHING_PROPERTIES, list,
				  sizeof(list)), 0);
		for (e = list; *e; e += strlen(e) + 1)
			found |= !strcmp(e, "INFERENCE_PRECISION_HINT");
		EXPECT_TRUE(found);
	}
	if (set) {
		ASSERT_EQ(set_str(fd, NPR_PARAM_INFERENCE_PRECISION_HINT, "f32"),
			  0);
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
	EXPECT_NONNULL(strstr(t, set ? " INFERENCE_PRECISION_HINT=\"f32\"" :
			      " INFERENCE_PRECISION_HINT=\"f16\""));
	/* weights: at compile, or deferred to the first request */
	EXPECT_EQ(!strstr(t, "initialize"), set);
	/* turbo: also the command queue's flag */
	EXPECT_NONNULL(strstr(t, set ? "queue turbo=1" : "queue turbo=0"));
	free(t);
	/* the compiled model reports what it was compiled with */
	EXPECT_EQ(get_int_of(fd, co.exec, NPR_PARAM_NPU_TILES), set ? 1 : -1);
	ASSERT_EQ(get_str(fd, co.exec, NPR_PARAM_INFERENCE_PRECISION_HINT,
			  hint, sizeof(hint)), 0);
	EXPECT_STREQ(hint, set ? "f32" : "f16");
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	EXPECT_NONNULL(strstr(t, "initialize"));
	EXPECT_NULL(strstr(strstr(t, "initialize") + 1, "initialize"));
	/* the initialisation the graph's stage asks for (facts 3.3) */
	EXPECT_NONNULL(strstr(t, vnpu_host_init() ? "initialize stage=host" :
			      "initialize stage=command-list"));
	free(t);
	npr_close(fd);
	unlink(trace);
	unsetenv("VNPU_TRACE");
}

/*
 * MODEL_PRIORITY is the model's command queue's priority and
 * WORKLOAD_TYPE=EFFICIENT its workload type (the driver's BACKGROUND,
 * through the NPU command-queue extension), as the NPU plugin sets them;
 * vnpu writes both to VNPU_TRACE.  NPU_COMPILER_TYPE=PLUGIN is refused:
 * the driver's compiler is the only one.
 */
TEST(npu_priority_and_workload_reach_the_queue)
{
	static const struct {
		uint32_t prio, work;
		const char *queue;
		bool background;
	} c[] = {
		{ NPR_PRIORITY_HIGH, NPR_WORKLOAD_EFFICIENT,
		  "queue turbo=0 priority=high", true },
		{ NPR_PRIORITY_LOW, NPR_WORKLOAD_DEFAULT,
		  "queue turbo=0 priority=low", false },
		{ NPR_PRIORITY_MEDIUM, NPR_WORKLOAD_DEFAULT,
		  "queue turbo=0 priority=normal", false },
	};
	struct npr_prop_arg pa = {
		.param = NPR_PARAM_NPU_COMPILER_TYPE,
		.value = NPR_NPU_COMPILER_PLUGIN,
	};
	char trace[] = "/tmp/npu_test_traceXXXXXX", path[4096], *t, *q;
	struct npr_model_load ml;
	struct npr_compile co;
	unsigned int k;
	int fd, tfd;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(get_int(fd, NPR_PARAM_NPU_COMPILER_TYPE),
		  NPR_NPU_COMPILER_DRIVER);
	EXPECT_EQ(get_int(fd, NPR_PARAM_WORKLOAD_TYPE), NPR_WORKLOAD_DEFAULT);
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_COMPILER_TYPE,
			  NPR_NPU_COMPILER_PLUGIN), -EOPNOTSUPP);
	EXPECT_NONNULL(strstr(npr_last_error(),
			      "the driver's (DRIVER) is the only one"));
	EXPECT_EQ(set_int(fd, NPR_PARAM_NPU_COMPILER_TYPE,
			  NPR_NPU_COMPILER_DRIVER), 0);
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), -EOPNOTSUPP);
	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		tfd = mkstemp(trace);
		ASSERT_GE(tfd, 0);
		close(tfd);
		setenv("VNPU_TRACE", trace, 1);
		ASSERT_EQ(set_int(fd, NPR_PARAM_MODEL_PRIORITY, c[k].prio), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_WORKLOAD_TYPE, c[k].work), 0);
		npr_prep_compile(&co, ml.handle);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), 0);
		t = slurp(trace);
		ASSERT_NONNULL(t);
		TH_LOG("%s", t);
		/* the model's queue: the last one created */
		for (q = strstr(t, "queue "); q && strstr(q + 1, "queue ");)
			q = strstr(q + 1, "queue ");
		ASSERT_NONNULL(q);
		EXPECT_EQ(strncmp(q, c[k].queue, strlen(c[k].queue)), 0);
		EXPECT_EQ(strstr(q, "workload type=1") != NULL,
			  c[k].background);
		free(t);
		unlink(trace);
		strcpy(trace, "/tmp/npu_test_traceXXXXXX");
	}
	unsetenv("VNPU_TRACE");
	npr_close(fd);
}

TEST(npu_compile_properties_reach_the_driver)
{
	compile_traced(_metadata, true);
}

TEST(npu_compile_without_npu_properties)
{
	compile_traced(_metadata, false);
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

/*
 * NPR_VNPU=1 in a program using the shared library: the vnpu in <dir of
 * libnpuring.so.0>/npuring/vnpu/ (the private directory of `make install`)
 * is the one the loader gets.  In a build tree, links in a temporary
 * directory stand in for an installed library and its vnpu (the library
 * looks there first, before this program's ../npu/vnpu/); installed, the
 * system's libnpuring.so.0 is loaded and its vnpu must be found next to it.
 */
TEST(npu_vnpu_next_to_the_library)
{
	static const char rel[] = "npuring/vnpu/libze_intel_vpu.so.1";
	char exe[PATH_MAX], tmp[] = "/tmp/npu_test_libXXXXXX";
	char lib[PATH_MAX + 64], vnpu[PATH_MAX + 64], sub[PATH_MAX + 64];
	char libdir[PATH_MAX], want[PATH_MAX + 64];
	int (*open_fn)(const char *, unsigned int);
	const char *(*error_fn)(void);
	int (*close_fn)(int);
	bool built;
	Dl_info info;
	void *h;
	ssize_t n;
	int fd;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = 0;
	dirname(exe);
	snprintf(lib, sizeof(lib), "%s/../lib/libnpuring.so.0", exe);
	snprintf(vnpu, sizeof(vnpu), "%s/../npu/vnpu/libze_intel_vpu.so.1",
		 exe);
	built = !access(lib, R_OK) && !access(vnpu, R_OK);
	if (built) {
		ASSERT_NONNULL(mkdtemp(tmp));
		snprintf(sub, sizeof(sub), "%s/npuring", tmp);
		ASSERT_EQ(mkdir(sub, 0700), 0);
		snprintf(sub, sizeof(sub), "%s/npuring/vnpu", tmp);
		ASSERT_EQ(mkdir(sub, 0700), 0);
		snprintf(sub, sizeof(sub), "%s/%s", tmp, rel);
		ASSERT_EQ(symlink(vnpu, sub), 0);
		snprintf(sub, sizeof(sub), "%s/libnpuring.so.0", tmp);
		ASSERT_EQ(symlink(lib, sub), 0);
		h = dlopen(sub, RTLD_NOW | RTLD_LOCAL);
	} else {
		h = dlopen("libnpuring.so.0", RTLD_NOW | RTLD_LOCAL);
		if (!h)
			SKIP(return, "neither a build tree nor an installed libnpuring.so.0: %s",
			     dlerror());
	}
	ASSERT_NONNULL(h);
	*(void **)&open_fn = dlsym(h, "npr_open");
	*(void **)&close_fn = dlsym(h, "npr_close");
	*(void **)&error_fn = dlsym(h, "npr_last_error");
	ASSERT_NONNULL(open_fn);
	ASSERT_NONNULL(close_fn);
	ASSERT_NONNULL(error_fn);
	ASSERT_NE(dladdr(*(void **)&open_fn, &info), 0);
	snprintf(lib, sizeof(lib), "%s", info.dli_fname);
	ASSERT_NONNULL(realpath(dirname(lib), libdir));
	snprintf(want, sizeof(want), "%s/%s", libdir, rel);
	if (!built && access(want, R_OK))
		SKIP(return, "no vnpu installed next to the library (%s)",
		     want);
	unsetenv("ZE_ENABLE_ALT_DRIVERS");
	setenv("NPR_VNPU", "1", 1);
	fd = open_fn("npu", 0);
	if (fd < 0)
		TH_LOG("npu: %s", error_fn());
	ASSERT_GE(fd, 0);
	close_fn(fd);
	ASSERT_NONNULL(getenv("ZE_ENABLE_ALT_DRIVERS"));
	EXPECT_STREQ(getenv("ZE_ENABLE_ALT_DRIVERS"), want);
	if (built) {
		unlink(want);
		rmdir(dirname(want));
		rmdir(dirname(want));
		unlink(sub);
		rmdir(tmp);
	}
}

/*
 * Run a tool ($NPR_TOOLS/, else the build tree's tools/); its stdout in
 * @out, its exit status.
 */
static int run_tool(const char *cmdline, char *out, size_t len)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 1024];
	const char *dir = getenv("NPR_TOOLS");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t got = 0;
	FILE *p;
	int st;

	out[0] = 0;
	if (n <= 0)
		return -1;
	exe[n] = 0;
	if (dir && *dir)
		snprintf(cmd, sizeof(cmd), "%s/%s 2>&1", dir, cmdline);
	else
		snprintf(cmd, sizeof(cmd), "%s/../tools/%s 2>&1",
			 dirname(exe), cmdline);
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

/* ---- zero copy ---------------------------------------------------------- */

static __u32 bo_new(int fd, size_t bytes, void **addr)
{
	struct npr_bo_create c = { .size = sizeof(c), .bytes = bytes };
	struct npr_bo_info i = { .size = sizeof(i) };

	if (npr_ioctl(fd, NPR_IOCTL_BO_CREATE, &c))
		return 0;
	i.handle = c.handle;
	if (npr_ioctl(fd, NPR_IOCTL_BO_INFO, &i))
		return 0;
	*addr = (void *)(uintptr_t)i.addr;
	return c.handle;
}

static int bo_bind(struct net *n, __u32 bo, int out, __u64 offset)
{
	struct npr_bo_bind b = {
		.size = sizeof(b), .flags = out ? NPR_PORT_OUTPUT : 0,
		.req = n->req, .bo = bo, .elem_type = n->type[out][0],
		.rank = n->rank[out][0], .offset = offset,
	};

	memcpy(b.dims, n->dims[out][0], sizeof(b.dims));
	return npr_ioctl(n->fd, NPR_IOCTL_BO_BIND, &b);
}

/* The last "execute args=" line of a vnpu trace, or NULL. */
static char *last_execute(char *t)
{
	char *p, *e = NULL;

	for (p = strstr(t, "execute args="); p;
	     p = strstr(p + 1, "execute args="))
		e = p + 13;
	if (e)
		e[strcspn(e, "\n")] = 0;
	return e;
}

/*
 * Zero copy: on npu a BO is memory of the driver (zeMemAllocHost) and a
 * bound one is the graph's argument as it is: vnpu's trace shows the
 * execute recorded again with the BO's addresses (the input at an offset)
 * and not again while the binding stays; the outputs land in the output
 * BO and equal those of the copy path (SET_TENSOR of ordinary memory,
 * which the argument buffers of the request carry).  A BO of the npu has
 * no file descriptor.
 */
TEST(npu_bound_bos_are_not_copied)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX", path[4096], want[64],
	     *t, *e;
	struct npr_bo_info bi = { .size = sizeof(bi) };
	struct npr_tensor_arg ta;
	void *bin_addr, *bout_addr, *x, *ref;
	__u32 bin, bout;
	struct net n;
	size_t inb, outb;
	int tfd, execs;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	inb = n.bytes[0][0];
	outb = n.bytes[1][0];
	bin = bo_new(n.fd, inb + 4096, &bin_addr);
	bout = bo_new(n.fd, outb, &bout_addr);
	ASSERT_NE(bin, 0);
	ASSERT_NE(bout, 0);
	bi.handle = bin;
	bi.flags = NPR_BO_INFO_FD;
	EXPECT_EQ(npr_ioctl(n.fd, NPR_IOCTL_BO_INFO, &bi), -EOPNOTSUPP);
	/* the copy path: ordinary memory, copied into the request's buffer */
	x = (char *)bin_addr + 4096;
	net_fill(_metadata, &n, 3);
	npr_prep_tensor(&ta, n.req, 0, 0, x, inb);
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ref = malloc(outb);
	ASSERT_NONNULL(ref);
	EXPECT_EQ(net_infer(&n), 0);
	npr_prep_tensor(&ta, n.req, 0, 1, ref, outb);
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	e = last_execute(t);
	ASSERT_NONNULL(e);
	TH_LOG("copy path: execute args=%s", e);
	snprintf(want, sizeof(want), "%p", x);
	EXPECT_NULL(strstr(e, want));
	free(t);
	/* bound: the BOs themselves */
	ASSERT_EQ(bo_bind(&n, bin, 0, 4096), 0);
	ASSERT_EQ(bo_bind(&n, bout, 1, 0), 0);
	memset(bout_addr, 0xff, outb);
	EXPECT_EQ(net_infer(&n), 0);
	EXPECT_EQ(memcmp(bout_addr, ref, outb), 0);
	EXPECT_EQ(net_infer(&n), 0);
	EXPECT_EQ(memcmp(bout_addr, ref, outb), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	for (e = t, execs = 0; (e = strstr(e, "execute args=")); e++)
		execs++;
	e = last_execute(t);
	ASSERT_NONNULL(e);
	TH_LOG("bound: execute args=%s (%d executes recorded)", e, execs);
	snprintf(want, sizeof(want), "%p,", x);
	EXPECT_EQ(strncmp(e, want, strlen(want)), 0);
	snprintf(want, sizeof(want), ",%p", bout_addr);
	EXPECT_NONNULL(strstr(e, want));
	EXPECT_EQ(execs, 2);	/* recorded once more, not per inference */
	free(t);
	free(ref);
	net_close(&n);
	unlink(trace);
	unsetenv("VNPU_TRACE");
}

/* ---- driver names and zeInitDrivers ------------------------------------ */

/* The absolute path of vnpu, or false. */
static bool vnpu_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	const char *v;
	ssize_t n;

	find_vnpu();
	v = getenv("NPR_VNPU");
	if (v && strchr(v, '/'))
		return realpath(v, out) != NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	snprintf(out, len, "%s/../npu/vnpu/libze_intel_vpu.so.1",
		 dirname(exe));
	return !access(out, R_OK);
}

static bool loadable(const char *name)
{
	void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);

	if (h)
		dlclose(h);
	return h != NULL;
}

/*
 * The current NPU driver's name, libze_intel_npu.so.1: vnpu installed
 * under it in a directory of LD_LIBRARY_PATH, nothing else set, is the
 * driver npr-info finds, whether the loader probes that name itself
 * (1.17.17 and newer) or npuring names it (the Debian loader 1.8.12).
 */
TEST(npu_driver_under_the_new_name)
{
	char dir[] = "/tmp/npu_test_npunameXXXXXX", lib[PATH_MAX],
	     link[sizeof(dir) + 32];
	static char out[1 << 16];
	int st;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	if (!vnpu_path(lib, sizeof(lib)))
		SKIP(return, "vnpu not found (set NPR_VNPU)");
	if (loadable("libze_intel_vpu.so.1") ||
	    loadable("libze_intel_npu.so.1"))
		SKIP(return, "an NPU driver is installed on this machine");
	ASSERT_NONNULL(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/libze_intel_npu.so.1", dir);
	ASSERT_EQ(symlink(lib, link), 0);
	setenv("LD_LIBRARY_PATH", dir, 1);
	setenv("NPR_VNPU", "0", 1);
	unsetenv("ZE_ENABLE_ALT_DRIVERS");
	st = run_tool("npr-info -d npu", out, sizeof(out));
	unlink(link);
	rmdir(dir);
	TH_LOG("%.300s", out);
	EXPECT_EQ(st, 0);
	EXPECT_NONNULL(strstr(out, "vnpu software NPU"));
}

static char init_log[4096];

static void keep_log(void *priv, int level, const char *msg)
{
	(void)priv;
	(void)level;
	if (strstr(msg, "Level Zero drivers from"))
		snprintf(init_log, sizeof(init_log), "%s", msg);
}

/*
 * A loader with zeInitDrivers (selftests/libze_shim.so.1: the system's
 * loader and that function): npuring asks it for the NPU drivers with the
 * NPU driver type, as the NPU plugin does, and opens the device.
 */
TEST(npu_init_drivers_where_the_loader_has_it)
{
	char exe[PATH_MAX], shim[PATH_MAX + 32], trace[] =
		"/tmp/npu_test_shimXXXXXX", buf[256] = "";
	ssize_t n;
	FILE *f;
	int fd;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	if (!find_vnpu())
		SKIP(return, "vnpu not found (set NPR_VNPU)");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = 0;
	snprintf(shim, sizeof(shim), "%s/libze_shim.so.1", dirname(exe));
	if (access(shim, R_OK))
		SKIP(return, "%s is not built", shim);
	fd = mkstemp(trace);
	ASSERT_GE(fd, 0);
	close(fd);
	setenv("NPR_ZE_LOADER", shim, 1);	/* before the loader starts */
	setenv("ZE_SHIM_TRACE", trace, 1);
	npr_set_log(keep_log, NULL, NPR_LOG_INFO);
	fd = npr_open("npu", 0);
	npr_set_log(NULL, NULL, 0);
	if (fd < 0)
		TH_LOG("%s", npr_last_error());
	ASSERT_GE(fd, 0);
	npr_close(fd);
	f = fopen(trace, "r");
	ASSERT_NONNULL(f);
	EXPECT_NONNULL(fgets(buf, sizeof(buf), f));
	fclose(f);
	unlink(trace);
	TH_LOG("%s%s", buf, init_log);
	EXPECT_EQ(strncmp(buf, "zeInitDrivers stype=0x20021 flags=0x2\n",
			  sizeof(buf)), 0);
	EXPECT_NONNULL(strstr(init_log, "from zeInitDrivers"));
}

/* The Debian loader 1.8.12 has no zeInitDrivers: zeInit it is. */
TEST(npu_init_without_init_drivers)
{
	void *l;
	int fd;

	if (!have_loader())
		SKIP(return, "no Level Zero loader installed");
	l = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
	ASSERT_NONNULL(l);
	if (dlsym(l, "zeInitDrivers")) {
		dlclose(l);
		SKIP(return, "this loader has zeInitDrivers");
	}
	dlclose(l);
	if (!find_vnpu())
		SKIP(return, "vnpu not found (set NPR_VNPU)");
	npr_set_log(keep_log, NULL, NPR_LOG_INFO);
	fd = npr_open("npu", 0);
	npr_set_log(NULL, NULL, 0);
	ASSERT_GE(fd, 0);
	npr_close(fd);
	TH_LOG("%s", init_log);
	EXPECT_NONNULL(strstr(init_log, "from zeInit (loader"));
}

/* The PROFILE records of request @req on @fd, calloc'd; *@n of them. */
static struct npr_profile_rec *profile_of(int fd, __u32 req, __u32 *n)
{
	struct npr_profile pr = { .size = sizeof(pr), .req = req };
	struct npr_profile_rec *r;

	*n = 0;
	if (npr_ioctl(fd, NPR_IOCTL_PROFILE, &pr) != -EMSGSIZE || !pr.count)
		return NULL;
	r = calloc(pr.count, sizeof(*r));
	pr.recs = (uintptr_t)r;
	if (!r || npr_ioctl(fd, NPR_IOCTL_PROFILE, &pr)) {
		free(r);
		return NULL;
	}
	*n = pr.count;
	return r;
}

/*
 * ENABLE_PROFILING on npu: the graph is created with the profiling flag,
 * each execute gets a query of the profiling extension, and PROFILE
 * gives the driver's per-layer records (vnpu's: its layers' times on
 * the cpu device), matched to the model's layers by name: every layer
 * cpu runs has a record, executed ones with a time; npr-bench --profile
 * prints the costliest layers with their times, not "0.000 ms".
 */
TEST(npu_profile_per_layer)
{
	struct npr_prop_arg pa = { .param = NPR_PARAM_ENABLE_PROFILING,
				   .value = 1 };
	struct npr_profile_rec *rn, *rc;
	static char out[1 << 16], cmd[4200];
	char path[4096];
	struct npr_compile co;
	__u32 nn, nc, i, k, run = 0;
	uint64_t total = 0;
	struct net n, c;
	const char *t;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	ASSERT_EQ(net_open(_metadata, &c, "cpu", path), 0);
	/* compiled without profiling: no records */
	EXPECT_EQ(npr_ioctl(n.fd, NPR_IOCTL_PROFILE,
			    &(struct npr_profile){ .size =
				sizeof(struct npr_profile), .req = n.req }),
		  -ENODATA);
	npr_prep_compile(&co, n.model);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_COMPILE, &co), 0);
	ASSERT_EQ(net_attach(_metadata, &n, co.exec), 0);
	npr_prep_compile(&co, c.model);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	ASSERT_EQ(npr_ioctl(c.fd, NPR_IOCTL_COMPILE, &co), 0);
	ASSERT_EQ(net_attach(_metadata, &c, co.exec), 0);
	net_fill(_metadata, &n, 5);
	net_fill(_metadata, &c, 5);
	ASSERT_EQ(net_infer(&n), 0);
	ASSERT_EQ(net_infer(&c), 0);
	rn = profile_of(n.fd, n.req, &nn);
	rc = profile_of(c.fd, c.req, &nc);
	ASSERT_NONNULL(rn);
	ASSERT_NONNULL(rc);
	for (k = 0; k < nc; k++) {
		if (rc[k].status != NPR_PROF_EXECUTED)
			continue;
		for (i = 0; i < nn && strcmp(rn[i].name, rc[k].name); i++)
			;
		ASSERT_LT(i, nn);
		EXPECT_EQ(rn[i].status, NPR_PROF_EXECUTED);
		EXPECT_STREQ(rn[i].kernel, "npu");
		run++;
		total += rn[i].real_ns;
	}
	TH_LOG("%u layers run on cpu, %u npu records, %.3f ms", run, nn,
	       total / 1e6);
	EXPECT_GT(run, 3);
	EXPECT_GT(total, 0);
	free(rn);
	free(rc);
	net_close(&n);
	net_close(&c);
	snprintf(cmd, sizeof(cmd),
		 "npr-bench -d npu -m '%s' --niter 5 --profile", path);
	EXPECT_EQ(run_tool(cmd, out, sizeof(out)), 0);
	t = strstr(out, "costliest layers");
	ASSERT_NONNULL(t);
	TH_LOG("%.400s", t);
	EXPECT_NULL(strstr(t, " 0.000 ms in"));
	EXPECT_NONNULL(strstr(t, " npu "));
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

/* ---- the loader's intercept mode and validation layer ------------------- */

/* The npu programs, next to this one in the build tree. */
static const char *const npu_programs[] = {
	"npu_models_test", "npu_driver_test", "vnpu_test",
};

/*
 * The loader reads its environment once per process: run the npu programs
 * (npu_models_test and this one) again with the layer enabled, all tests
 * but these, and check each passes.
 */
static void rerun_with(struct npr_test *_metadata, const char *const env[])
{
	char exe[PATH_MAX], prog[PATH_MAX + 32];
	const char *dir;
	size_t k;
	ssize_t n;
	pid_t pid;
	int st, i;

	if (getenv("NPR_NPU_TEST_CHILD"))
		SKIP(return, "already the re-run");
	REQUIRE_NPU();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = 0;
	dir = dirname(exe);
	for (k = 0; k < sizeof(npu_programs) / sizeof(npu_programs[0]); k++) {
		snprintf(prog, sizeof(prog), "%s/%s", dir, npu_programs[k]);
		fflush(NULL);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			const char *log = getenv("NPR_NPU_TEST_LOG");
			int null = open(log ? log : "/dev/null", O_WRONLY |
					O_CREAT | (k ? O_APPEND : O_TRUNC),
					0644);

			if (null >= 0) {
				dup2(null, 1);
				dup2(null, 2);
			}
			setenv("NPR_NPU_TEST_CHILD", "1", 1);
			for (i = 0; env[i]; i += 2)
				setenv(env[i], env[i + 1], 1);
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			TH_LOG("%s with %s=%s failed; run it so to see", prog,
			       env[0], env[1]);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
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

TEST_HARNESS_MAIN
