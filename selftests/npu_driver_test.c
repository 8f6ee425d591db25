// SPDX-License-Identifier: MIT
/*
 * The npu device and the driver stack under it, over vnpu, the software
 * NPU: device info, fault injection, the NPU plugin's properties and the
 * compile-time ones as the driver sees them, discovery and diagnosis
 * messages, the tools on npu, the npu programs again through the loader's
 * intercept mode and validation layer, and vnpu through the Level Zero API
 * directly.
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
	"npu_models_test", "npu_driver_test",
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
