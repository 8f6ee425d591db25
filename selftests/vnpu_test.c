// SPDX-License-Identifier: MIT
/*
 * vnpu, the software NPU, through the Level Zero loader directly, as a
 * driver: argument binding at append time, what it refuses (unset, foreign
 * or too small arguments, memory of another context, executing a graph
 * before the initialisation its stage asks for, the other stage's
 * initialisation, functions the graph extension version it presents does
 * not have), fences, malformed input, native blobs, queue threads, the
 * NPU 4000 identity and the compiler's names of state arguments.
 *
 * Every test holds in every mode vnpu can present (VNPU_GRAPH_VERSION,
 * VNPU_INIT_STAGE; selftests/npu_modes_test.sh runs this program in each).
 * vnpu is found as npu_driver_test finds it; without the Level Zero
 * loader, or without vnpu, the tests skip and say why.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npuring.h>

#include "harness.h"
#include "npu_util.h"

/* ---- vnpu through the Level Zero API directly ---------------------------- */

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include <dlfcn.h>
#include <malloc.h>
#include <sys/stat.h>

#include "npu/ze_graph.h"
#include "files.h"

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
	uint32_t minor;		/* the graph extension's version, 1.minor */
	uint32_t stage;		/* the stage its graphs ask for */
};

static ze_result_t zl_init(struct zl *z, npr_ze_graph_handle_t g);

static const char *const zl_names[] = {
	"zeDriverGet", "zeDeviceGet", "zeDriverGetExtensionFunctionAddress",
	"zeContextCreate", "zeContextDestroy", "zeMemAllocHost",
	"zeCommandQueueCreate", "zeCommandQueueExecuteCommandLists",
	"zeCommandListCreate", "zeCommandListClose", "zeFenceCreate",
	"zeFenceHostSynchronize", "zeFenceReset", "zeFenceDestroy",
	"zeCommandListDestroy", "zeCommandQueueDestroy",
};

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
	xml = npr_test_slurp(path, &xs);
	n = strlen(path);
	if (n > 4)
		strcpy(path + n - 4, ".bin");
	bin = npr_test_slurp(path, &bs);
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
	struct npr_ze_device_graph_properties dp = {
		.stype = NPR_ZE_STYPE_DEVICE_GRAPH_PROPERTIES,
	};
	struct npr_ze_graph_properties_2 gp2 = {
		.stype = NPR_ZE_STYPE_GRAPH_PROPERTIES,
	};
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
	z->g->pfnDeviceGetGraphProperties(z->dev, &dp);
	z->minor = dp.graphExtensionVersion & 0xffff;
	ASSERT_EQ(dp.graphExtensionVersion >> 16, 1);
	ASSERT_GE(z->minor, 5);
	ASSERT_EQ(zl_graph(z, z->ir, z->ir_size,
			   NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL, &z->graph),
		  ZE_RESULT_SUCCESS);
	z->stage = NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE;
	if (z->minor >= 8) {
		ASSERT_EQ(z->g->pfnGetProperties2(z->graph, &gp2), 0);
		z->stage = gp2.initStageRequired;
	}
	TH_LOG("vnpu presents graph extension 1.%u, stage %s", z->minor,
	       z->stage == NPR_ZE_GRAPH_STAGE_INITIALIZE ? "INITIALIZE" :
	       "COMMAND_LIST_INITIALIZE");
	ASSERT_EQ(zl_init(z, z->graph), 0);
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

/*
 * Initialise @g as its stage asks: GraphInitialize (INITIALIZE), or
 * AppendGraphInitialize on a list run on the queue and waited for.
 */
static ze_result_t zl_init(struct zl *z, npr_ze_graph_handle_t g)
{
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_command_list_handle_t l = NULL;
	ze_fence_handle_t f = NULL;
	ze_result_t r;

	if (z->stage == NPR_ZE_GRAPH_STAGE_INITIALIZE)
		return z->g->pfnGraphInitialize(g);
	r = z->CommandListCreate(z->ctx, z->dev, &ld, &l);
	if (!r)
		r = z->g->pfnAppendGraphInitialize(l, g, NULL, 0, NULL);
	if (!r)
		r = z->CommandListClose(l);
	if (!r)
		r = z->FenceCreate(z->queue, &fd, &f);
	if (!r)
		r = zl_run(z, l, f);
	if (f)
		z->FenceDestroy(f);
	if (l)
		z->CommandListDestroy(l);
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
	ASSERT_EQ(zl_init(&z, g2), 0);
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
	/* the driver-owned view: from extension 1.7 */
	if (z.minor >= 7) {
		ASSERT_EQ(z.g->pfnGetNativeBinary2(z.graph, &size2, &view), 0);
		ASSERT_EQ(size, size2);
		EXPECT_EQ(memcmp(blob, view, size), 0);
	}
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
	ASSERT_EQ(zl_init(&z, g), 0);
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

/* The reason vnpu left in this thread's build log. */
static const char *zl_log(struct zl *z)
{
	static char log[1024];
	uint32_t len = sizeof(log);

	log[0] = 0;
	if (z->g->pfnBuildLogGetString(NULL, &len, log))
		log[0] = 0;
	return log;
}

/*
 * The stateful adder's IR as NGRAPH_LITE with its text edited: @n
 * replacements of @from[k] by @to[k], each at its @nth[k]-th occurrence
 * (0: every one).
 */
static uint8_t *adder_edited(const char *const *from, const char *const *to,
			     const int *nth, int n, size_t *size)
{
	uint8_t *lite = ngraph_lite("../ir-stateful/adder_v11.xml", size);
	uint64_t xs, bs;
	char *xml, *out;
	uint8_t *buf;
	int k;

	if (!lite)
		return NULL;
	memcpy(&xs, lite + 8, 8);
	memcpy(&bs, lite + 16 + xs, 8);
	xml = strndup((char *)lite + 16, xs);
	for (k = 0; xml && k < n; k++) {
		char *p = xml, *hit;
		int seen = 0;

		while ((hit = strstr(p, from[k]))) {
			size_t at = hit - xml, fl = strlen(from[k]);

			p = hit + fl;
			if (nth[k] && ++seen != nth[k])
				continue;
			out = malloc(strlen(xml) + strlen(to[k]) + 1);
			if (!out)
				break;
			memcpy(out, xml, at);
			strcpy(out + at, to[k]);
			strcat(out, hit + fl);
			p = out + at + strlen(to[k]);
			free(xml);
			xml = out;
			if (nth[k])
				break;
		}
	}
	buf = xml ? malloc(24 + strlen(xml) + bs) : NULL;
	if (buf) {
		uint64_t nx = strlen(xml);

		memcpy(buf, lite, 8);
		memcpy(buf + 8, &nx, 8);
		memcpy(buf + 16, xml, nx);
		memcpy(buf + 16 + nx, &bs, 8);
		memcpy(buf + 24 + nx, lite + 24 + xs, bs);
		*size = 24 + nx + bs;
	}
	free(xml);
	free(lite);
	return buf;
}

/*
 * State arguments misnamed are refused at graph creation, as the NPU
 * compiler and OpenVINO's plugin (which pairs vpux_ie_read_value_<id>
 * with vpux_ie_assign_<id> by name) would: an Assign of another variable
 * than the ReadValue's, an ordinary input named like a state argument,
 * a variable whose argument name would not fit the driver's 256 bytes.
 * The stateful model as written still makes a graph.
 */
TEST(vnpu_refuses_state_arguments_misnamed)
{
	static const char *const assign_from[] = { "variable0" };
	static const char *const assign_to[] = { "variableX" };
	static const int second[] = { 2 };
	static const char *const input_from[] = { "name=\"input\"" };
	static const char *const input_to[] = {
		"name=\"vpux_ie_read_value_variable0\"",
	};
	static const int first[] = { 1 };
	static const int every[] = { 0 };
	char longid[260];
	const char *long_to[1] = { longid };
	npr_ze_graph_handle_t g;
	struct zl z;
	uint8_t *ir;
	size_t size;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	ir = adder_edited(NULL, NULL, NULL, 0, &size);
	ASSERT_NONNULL(ir);
	ASSERT_EQ(zl_graph(&z, ir, size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL,
			   &g), 0);
	EXPECT_EQ(z.g->pfnDestroy(g), 0);
	free(ir);

	/* the Assign writes variableX, the ReadValue reads variable0 */
	ir = adder_edited(assign_from, assign_to, second, 1, &size);
	ASSERT_NONNULL(ir);
	EXPECT_NE(zl_graph(&z, ir, size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
			   NULL, &g), 0);
	TH_LOG("Assign of another variable: %s", zl_log(&z));
	EXPECT_NONNULL(strstr(zl_log(&z), "variableX"));
	free(ir);

	/* an ordinary input with the name of the state input */
	ir = adder_edited(input_from, input_to, first, 1, &size);
	ASSERT_NONNULL(ir);
	EXPECT_EQ(zl_graph(&z, ir, size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
			   NULL, &g), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	TH_LOG("input named as state: %s", zl_log(&z));
	EXPECT_NONNULL(strstr(zl_log(&z), "vpux_ie_read_value_variable0"));
	free(ir);

	/* a variable id that fills the argument name past its end */
	memset(longid, 'v', 250);
	longid[250] = 0;
	ir = adder_edited(assign_from, long_to, every, 1, &size);
	ASSERT_NONNULL(ir);
	EXPECT_EQ(zl_graph(&z, ir, size, NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
			   NULL, &g), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	TH_LOG("long id: %s", zl_log(&z));
	EXPECT_NONNULL(strstr(zl_log(&z), "longer than"));
	free(ir);
	zl_close(_metadata, &z);
}

/*
 * A graph is not executed before the initialisation its stage asks for:
 * with INITIALIZE the execute is refused when appended, with
 * COMMAND_LIST_INITIALIZE the execution fails and writes nothing.  Once
 * initialised, the same graph runs.
 */
TEST(vnpu_refuses_execution_before_initialization)
{
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_command_list_handle_t l = NULL;
	ze_fence_handle_t f;
	npr_ze_graph_handle_t g;
	void *in, *out;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	in = zl_alloc(_metadata, &z, z.in_bytes);
	out = zl_alloc(_metadata, &z, z.out_bytes);
	ASSERT_TRUE(in && out);
	memset(in, 0x3c, z.in_bytes);
	ASSERT_EQ(zl_graph(&z, z.ir, z.ir_size,
			   NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE, NULL, &g), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(g, 0, in), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(g, 1, out), 0);
	ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f), 0);
	if (z.stage == NPR_ZE_GRAPH_STAGE_INITIALIZE) {
		EXPECT_EQ(zl_record(&z, g, &l), ZE_RESULT_ERROR_UNINITIALIZED);
		TH_LOG("%s", zl_log(&z));
		EXPECT_NONNULL(strstr(zl_log(&z), "before GraphInitialize"));
		ASSERT_EQ(zl_init(&z, g), 0);
		ASSERT_EQ(zl_record(&z, g, &l), 0);
	} else {
		ASSERT_EQ(zl_record(&z, g, &l), 0);
		EXPECT_EQ(zl_run(&z, l, f), ZE_RESULT_ERROR_UNINITIALIZED);
		EXPECT_TRUE(all_zero(out, z.out_bytes));
		ASSERT_EQ(zl_init(&z, g), 0);
		ASSERT_EQ(z.FenceReset(f), 0);
	}
	EXPECT_EQ(zl_run(&z, l, f), 0);
	EXPECT_FALSE(all_zero(out, z.out_bytes));
	EXPECT_EQ(z.FenceDestroy(f), 0);
	EXPECT_EQ(z.CommandListDestroy(l), 0);
	EXPECT_EQ(z.g->pfnDestroy(g), 0);
	zl_close(_metadata, &z);
}

/*
 * Only the stage the graph asks for initialises it: GraphInitialize is
 * refused for a COMMAND_LIST_INITIALIZE graph (and is not there before
 * 1.8), AppendGraphInitialize for an INITIALIZE one.
 */
TEST(vnpu_refuses_the_other_stage_initialization)
{
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_command_list_handle_t l;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	if (z.stage == NPR_ZE_GRAPH_STAGE_INITIALIZE) {
		ASSERT_EQ(z.CommandListCreate(z.ctx, z.dev, &ld, &l), 0);
		EXPECT_EQ(z.g->pfnAppendGraphInitialize(l, z.graph, NULL, 0,
							NULL),
			  ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
		EXPECT_NONNULL(strstr(zl_log(&z), "INITIALIZE stage"));
		EXPECT_EQ(z.CommandListDestroy(l), 0);
	} else {
		EXPECT_EQ(z.g->pfnGraphInitialize(z.graph),
			  ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
		TH_LOG("%s", zl_log(&z));
		EXPECT_NONNULL(strstr(zl_log(&z), z.minor < 8 ? "is graph extension 1.8" :
				      "COMMAND_LIST_INITIALIZE stage"));
	}
	zl_close(_metadata, &z);
}

/*
 * vnpu presents one graph extension version (VNPU_GRAPH_VERSION): the
 * extension list and the device's graph properties say it, and the
 * functions of later versions refuse every call, the others work.
 */
TEST(vnpu_has_only_the_functions_of_its_version)
{
	ze_result_t (*ext_props)(ze_driver_handle_t, uint32_t *,
				 ze_driver_extension_properties_t *);
	ze_driver_extension_properties_t ext[64];
	struct npr_ze_device_graph_properties_2 dp2 = {
		.stype = NPR_ZE_STYPE_DEVICE_GRAPH_PROPERTIES,
	};
	struct npr_ze_graph_properties_2 gp2 = {
		.stype = NPR_ZE_STYPE_GRAPH_PROPERTIES,
	};
	struct npr_ze_graph_memory_query m;
	const char *want = getenv("VNPU_GRAPH_VERSION");
	const uint8_t *view;
	uint32_t n = 64, i, top = 0;
	size_t size;
	ze_result_t r;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	*(void **)&ext_props = dlsym(dlopen("libze_loader.so.1", RTLD_NOW |
					    RTLD_NOLOAD),
				     "zeDriverGetExtensionProperties");
	ASSERT_NONNULL(ext_props);
	ASSERT_EQ(ext_props(z.drv, &n, ext), 0);
	for (i = 0; i < n; i++)
		if (!strncmp(ext[i].name, NPR_ZE_GRAPH_EXT_NAME,
			     strlen(NPR_ZE_GRAPH_EXT_NAME)) &&
		    (ext[i].version & 0xffff) > top)
			top = ext[i].version & 0xffff;
	EXPECT_EQ(top, z.minor);
	if (want && *want)
		EXPECT_EQ(z.minor, (uint32_t)atoi(want));
	r = z.g->pfnDeviceGetGraphProperties2(z.dev, &dp2);
	EXPECT_EQ(r, z.minor >= 6 ? ZE_RESULT_SUCCESS :
		     ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	if (!r)
		EXPECT_EQ(dp2.graphExtensionVersion & 0xffff, z.minor);
	r = z.g->pfnGetNativeBinary2(z.graph, &size, &view);
	EXPECT_EQ(r, z.minor >= 7 ? ZE_RESULT_SUCCESS :
		     ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	r = z.g->pfnGetProperties2(z.graph, &gp2);
	EXPECT_EQ(r, z.minor >= 8 ? ZE_RESULT_SUCCESS :
		     ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
	if (z.minor < 8)
		EXPECT_NONNULL(strstr(zl_log(&z), "pfnGetProperties2 is graph extension 1.8"));
	/* 1.5: the oldest npuring takes, so always there */
	EXPECT_EQ(z.g->pfnQueryContextMemory(z.ctx, NPR_ZE_GRAPH_MEM_DDR, &m),
		  0);
	zl_close(_metadata, &z);
}

/*
 * The profiling extension as the Intel driver has it: no pool of a graph
 * created without ENABLE_PROFILING (NOT_AVAILABLE); a profiling graph's
 * execute without a query is refused, and with one the query gets one
 * executed layer record per layer after the execution, none before.
 */
TEST(vnpu_profiling_queries)
{
	const struct npr_ze_graph_profiling_ddi *pd = NULL;
	struct npr_ze_profiling_layer_info *rec;
	struct npr_ze_graph_desc_2 d = {
		.stype = NPR_ZE_STYPE_GRAPH_DESC,
		.format = NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
		.flags = NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING,
	};
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	npr_ze_prof_pool_handle_t pool;
	npr_ze_prof_query_handle_t q;
	npr_ze_graph_handle_t pg;
	ze_command_list_handle_t l;
	ze_fence_handle_t f;
	void *in, *out;
	uint32_t size = 0, i, ran = 0;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(z.DriverGetExtensionFunctionAddress(z.drv,
			NPR_ZE_PROFILING_EXT_NAME, (void **)&pd), 0);
	ASSERT_NONNULL(pd);
	EXPECT_EQ(pd->pfnProfilingPoolCreate(z.graph, 1, &pool),
		  ZE_RESULT_ERROR_NOT_AVAILABLE);
	d.inputSize = z.ir_size;
	d.pInput = z.ir;
	ASSERT_EQ(z.g->pfnCreate2(z.ctx, z.dev, &d, &pg), 0);
	ASSERT_EQ(zl_init(&z, pg), 0);
	ASSERT_EQ(pd->pfnProfilingPoolCreate(pg, 1, &pool), 0);
	ASSERT_EQ(pd->pfnProfilingQueryCreate(pool, 0, &q), 0);
	EXPECT_EQ(pd->pfnProfilingQueryCreate(pool, 1, &q),
		  ZE_RESULT_ERROR_INVALID_ARGUMENT);
	in = zl_alloc(_metadata, &z, z.in_bytes);
	out = zl_alloc(_metadata, &z, z.out_bytes);
	ASSERT_NONNULL(in);
	ASSERT_NONNULL(out);
	ASSERT_EQ(z.g->pfnSetArgumentValue(pg, 0, in), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(pg, 1, out), 0);
	ASSERT_EQ(z.CommandListCreate(z.ctx, z.dev, &ld, &l), 0);
	EXPECT_EQ(z.g->pfnAppendGraphExecute(l, pg, NULL, NULL, 0, NULL),
		  ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
	EXPECT_EQ(pd->pfnProfilingQueryGetData(q, NPR_ZE_PROF_LAYER_LEVEL,
					       &size, NULL),
		  ZE_RESULT_ERROR_NOT_AVAILABLE);
	ASSERT_EQ(z.g->pfnAppendGraphExecute(l, pg, q, NULL, 0, NULL), 0);
	ASSERT_EQ(z.CommandListClose(l), 0);
	ASSERT_EQ(z.FenceCreate(z.queue, &fd, &f), 0);
	ASSERT_EQ(z.CommandQueueExecuteCommandLists(z.queue, 1, &l, f), 0);
	ASSERT_EQ(z.FenceHostSynchronize(f, UINT64_MAX), 0);
	ASSERT_EQ(pd->pfnProfilingQueryGetData(q, NPR_ZE_PROF_LAYER_LEVEL,
					       &size, NULL), 0);
	ASSERT_GT(size, 0);
	EXPECT_EQ(size % sizeof(*rec), 0);
	rec = malloc(size);
	ASSERT_NONNULL(rec);
	ASSERT_EQ(pd->pfnProfilingQueryGetData(q, NPR_ZE_PROF_LAYER_LEVEL,
					       &size, (uint8_t *)rec), 0);
	for (i = 0; i < size / sizeof(*rec); i++)
		ran += rec[i].status == NPR_ZE_LAYER_EXECUTED &&
		       rec[i].name[0] && rec[i].layer_type[0];
	TH_LOG("%u layer records, %u executed", size / (uint32_t)sizeof(*rec),
	       ran);
	EXPECT_GT(ran, 3);
	EXPECT_EQ(pd->pfnProfilingQueryGetData(q, NPR_ZE_PROF_TASK_LEVEL,
					       &size, NULL),
		  ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
	free(rec);
	EXPECT_EQ(z.FenceDestroy(f), 0);
	EXPECT_EQ(z.CommandListDestroy(l), 0);
	EXPECT_EQ(pd->pfnProfilingPoolDestroy(pool),
		  ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
	EXPECT_EQ(pd->pfnProfilingQueryDestroy(q), 0);
	EXPECT_EQ(pd->pfnProfilingPoolDestroy(pool), 0);
	EXPECT_EQ(z.g->pfnDestroy(pg), 0);
	zl_close(_metadata, &z);
}

/* An argument in memory of another context is memory the graph cannot see. */
TEST(vnpu_rejects_memory_of_another_context)
{
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_host_mem_alloc_desc_t hd = {
		.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
	};
	ze_command_list_handle_t l;
	ze_context_handle_t other;
	void *in, *out = NULL;
	struct zl z;

	zl_open(_metadata, &z);
	if (_metadata->skipped)
		return;
	in = zl_alloc(_metadata, &z, z.in_bytes);
	ASSERT_NONNULL(in);
	ASSERT_EQ(z.ContextCreate(z.drv, &cd, &other), 0);
	ASSERT_EQ(z.MemAllocHost(other, &hd, z.out_bytes, 4096, &out), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 0, in), 0);
	ASSERT_EQ(z.g->pfnSetArgumentValue(z.graph, 1, out), 0);
	EXPECT_EQ(zl_record(&z, z.graph, &l), ZE_RESULT_ERROR_INVALID_ARGUMENT);
	EXPECT_NONNULL(strstr(zl_log(&z), "another context"));
	EXPECT_EQ(z.ContextDestroy(other), 0);
	zl_close(_metadata, &z);
}

#endif /* Level Zero headers */

TEST_HARNESS_MAIN
