// SPDX-License-Identifier: MIT
/*
 * Properties: one table says, for every property, its name, type,
 * mutability and scope; GET_PARAM, SET_PARAM, PROP_INFO and the property
 * list of COMPILE all go through it, so a property behaves the same way
 * whichever door it is reached by.
 *
 * Device-level values live in dev->props; a compiled model snapshots them
 * at compile time, with the COMPILE properties applied on top, and answers
 * GET_PARAM from its own copy.  The caller holds dev->lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "graph/graph.h"
#include "object.h"
#include "props.h"
#include "sys.h"
#include "uarg.h"

/* scope and access bits of the table (the RW/COMPILE/CACHING ones are
 * the uapi's NPR_PROP_ACCESS_*) */
#define P_RW		NPR_PROP_ACCESS_RW
#define P_COMPILE	NPR_PROP_ACCESS_COMPILE
#define P_CACHING	NPR_PROP_ACCESS_CACHING
#define P_DEV		(1U << 8)	/* readable on the device */
#define P_EXEC		(1U << 9)	/* readable on a compiled model */
#define P_SETTABLE	(P_RW | P_COMPILE | P_DEV | P_EXEC)
#define P_NPU		(1U << 10)	/* only the npu device has it */
#define P_NPU_CACHING	(1U << 11)	/* a caching property on the npu */

struct enum_name {
	int64_t value;
	const char *name;
};

static const struct enum_name perf_hints[] = {
	{ NPR_PERF_HINT_LATENCY, "LATENCY" },
	{ NPR_PERF_HINT_THROUGHPUT, "THROUGHPUT" },
	{ NPR_PERF_HINT_CUMULATIVE_THROUGHPUT, "CUMULATIVE_THROUGHPUT" },
	{ 0, NULL },
};

static const struct enum_name log_levels[] = {
	{ NPR_LOG_NONE, "LOG_NONE" },
	{ NPR_LOG_ERROR, "LOG_ERROR" },
	{ NPR_LOG_WARNING, "LOG_WARNING" },
	{ NPR_LOG_INFO, "LOG_INFO" },
	{ NPR_LOG_DEBUG, "LOG_DEBUG" },
	{ NPR_LOG_TRACE, "LOG_TRACE" },
	{ 0, NULL },
};

static const struct enum_name exec_modes[] = {
	{ NPR_EXEC_MODE_PERFORMANCE, "PERFORMANCE" },
	{ NPR_EXEC_MODE_ACCURACY, "ACCURACY" },
	{ 0, NULL },
};

static const struct enum_name priorities[] = {
	{ NPR_PRIORITY_LOW, "LOW" },
	{ NPR_PRIORITY_MEDIUM, "MEDIUM" },
	{ NPR_PRIORITY_HIGH, "HIGH" },
	{ 0, NULL },
};

static const struct enum_name workloads[] = {
	{ NPR_WORKLOAD_DEFAULT, "DEFAULT" },
	{ NPR_WORKLOAD_EFFICIENT, "EFFICIENT" },
	{ 0, NULL },
};

static const struct enum_name npu_compilers[] = {
	{ NPR_NPU_COMPILER_DRIVER, "DRIVER" },
	{ NPR_NPU_COMPILER_PLUGIN, "PLUGIN" },
	{ 0, NULL },
};

static const struct enum_name cache_modes[] = {
	{ NPR_CACHE_MODE_OPTIMIZE_SPEED, "OPTIMIZE_SPEED" },
	{ NPR_CACHE_MODE_OPTIMIZE_SIZE, "OPTIMIZE_SIZE" },
	{ 0, NULL },
};

static const struct enum_name device_kinds[] = {
	{ NPR_DEVICE_KIND_INTEGRATED, "integrated" },
	{ NPR_DEVICE_KIND_DISCRETE, "discrete" },
	{ 0, NULL },
};

static const struct enum_name precisions[] = {
	{ NPR_ELEM_F32, "f32" },
	{ NPR_ELEM_F16, "f16" },
	{ NPR_ELEM_BF16, "bf16" },
	{ 0, NULL },
};

/**
 * struct prop_def - one property
 * @name: OpenVINO's name.
 * @type: enum npr_prop_type.
 * @flags: P_* bits.
 * @min, @max: range of an integer value.
 * @enums: names of an enum's values.
 * @off: offset of the uint32_t / int32_t / string field in struct
 *       npr_props for stored properties, or -1 for computed ones.
 */
struct prop_def {
	const char *name;
	unsigned int type;
	unsigned int flags;
	int64_t min, max;
	const struct enum_name *enums;
	long off;
};

#define OFF(f)	((long)offsetof(struct npr_props, f))
#define STORED	(P_SETTABLE)

static const struct prop_def defs[NPR_PARAM_MAX] = {
	[NPR_PARAM_FULL_DEVICE_NAME] = { "FULL_DEVICE_NAME", NPR_PROP_STRING,
		P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_DEVICE_ARCHITECTURE] = { "DEVICE_ARCHITECTURE",
		NPR_PROP_STRING, P_DEV | P_CACHING, 0, 0, NULL, -1 },
	[NPR_PARAM_INFERENCE_NUM_THREADS] = { "INFERENCE_NUM_THREADS",
		NPR_PROP_INT, STORED, 0, 1024, NULL, OFF(num_threads) },
	[NPR_PARAM_LOG_LEVEL] = { "LOG_LEVEL", NPR_PROP_ENUM, STORED, 0, 0,
		log_levels, OFF(log_level) },
	/* the NPU compiler takes it in --config */
	[NPR_PARAM_PERFORMANCE_HINT] = { "PERFORMANCE_HINT", NPR_PROP_ENUM,
		STORED | P_NPU_CACHING, 0, 0, perf_hints, OFF(perf_hint) },
	[NPR_PARAM_ENABLE_PROFILING] = { "ENABLE_PROFILING", NPR_PROP_BOOL,
		STORED, 0, 1, NULL, OFF(profiling) },
	[NPR_PARAM_SUPPORTED_PROPERTIES] = { "SUPPORTED_PROPERTIES",
		NPR_PROP_LIST, P_DEV | P_EXEC, 0, 0, NULL, -1 },
	[NPR_PARAM_AVAILABLE_DEVICES] = { "AVAILABLE_DEVICES", NPR_PROP_LIST,
		P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_DEVICE_TYPE] = { "DEVICE_TYPE", NPR_PROP_ENUM, P_DEV, 0, 0,
		device_kinds, -1 },
	[NPR_PARAM_DEVICE_UUID] = { "DEVICE_UUID", NPR_PROP_STRING, P_DEV, 0,
		0, NULL, -1 },
	[NPR_PARAM_OPTIMIZATION_CAPABILITIES] = { "OPTIMIZATION_CAPABILITIES",
		NPR_PROP_LIST, P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_RANGE_FOR_ASYNC_INFER_REQUESTS] = {
		"RANGE_FOR_ASYNC_INFER_REQUESTS", NPR_PROP_INT_LIST, P_DEV, 0,
		0, NULL, -1 },
	[NPR_PARAM_RANGE_FOR_STREAMS] = { "RANGE_FOR_STREAMS",
		NPR_PROP_INT_LIST, P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS] = {
		"OPTIMAL_NUMBER_OF_INFER_REQUESTS", NPR_PROP_INT,
		P_DEV | P_EXEC, 0, 0, NULL, -1 },
	[NPR_PARAM_EXECUTION_DEVICES] = { "EXECUTION_DEVICES", NPR_PROP_LIST,
		P_EXEC, 0, 0, NULL, -1 },
	[NPR_PARAM_DEVICE_ID] = { "DEVICE_ID", NPR_PROP_STRING, P_DEV, 0, 0,
		NULL, -1 },
	[NPR_PARAM_PERFORMANCE_HINT_NUM_REQUESTS] = {
		"PERFORMANCE_HINT_NUM_REQUESTS", NPR_PROP_INT, STORED, 0, 1024,
		NULL, OFF(hint_num_requests) },
	[NPR_PARAM_INFERENCE_PRECISION_HINT] = { "INFERENCE_PRECISION_HINT",
		NPR_PROP_ENUM, STORED | P_CACHING, 0, 0, precisions,
		OFF(precision_hint) },
	[NPR_PARAM_EXECUTION_MODE_HINT] = { "EXECUTION_MODE_HINT",
		NPR_PROP_ENUM, STORED | P_CACHING, 0, 0, exec_modes,
		OFF(exec_mode) },
	[NPR_PARAM_NUM_STREAMS] = { "NUM_STREAMS", NPR_PROP_INT, STORED,
		NPR_NUM_STREAMS_AUTO, 1024, NULL, OFF(num_streams) },
	[NPR_PARAM_ENABLE_CPU_PINNING] = { "ENABLE_CPU_PINNING", NPR_PROP_BOOL,
		STORED, 0, 1, NULL, OFF(cpu_pinning) },
	[NPR_PARAM_MODEL_PRIORITY] = { "MODEL_PRIORITY", NPR_PROP_ENUM, STORED,
		0, 0, priorities, OFF(priority) },
	[NPR_PARAM_CACHE_DIR] = { "CACHE_DIR", NPR_PROP_STRING, STORED, 0, 0,
		NULL, OFF(cache_dir) },
	[NPR_PARAM_CACHING_PROPERTIES] = { "CACHING_PROPERTIES", NPR_PROP_LIST,
		P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_DISABLE_TRANSFORMATIONS] = { "DISABLE_TRANSFORMATIONS",
		NPR_PROP_BOOL, STORED | P_CACHING, 0, 1, NULL,
		OFF(disable_transformations) },
	[NPR_PARAM_EXCLUSIVE_ASYNC_REQUESTS] = { "EXCLUSIVE_ASYNC_REQUESTS",
		NPR_PROP_BOOL, STORED, 0, 1, NULL, OFF(exclusive_async) },
	[NPR_PARAM_COMPILATION_NUM_THREADS] = { "COMPILATION_NUM_THREADS",
		NPR_PROP_INT, STORED, 0, 1024, NULL, OFF(compile_threads) },
	[NPR_PARAM_MODEL_NAME] = { "MODEL_NAME", NPR_PROP_STRING, P_EXEC, 0, 0,
		NULL, -1 },
	[NPR_PARAM_LOADED_FROM_CACHE] = { "LOADED_FROM_CACHE", NPR_PROP_BOOL,
		P_EXEC, 0, 1, NULL, -1 },
	[NPR_PARAM_NPR_CACHE_MAX_MB] = { "NPR_CACHE_MAX_MB", NPR_PROP_INT,
		STORED, 0, 1 << 30, NULL, OFF(cache_max_mb) },
	[NPR_PARAM_NPR_CACHE_REQUIRED] = { "NPR_CACHE_REQUIRED", NPR_PROP_BOOL,
		STORED, 0, 1, NULL, OFF(cache_required) },
	[NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB] = { "NPR_MAX_MODEL_MEMORY_MB",
		NPR_PROP_INT, STORED, 0, 1 << 30, NULL, OFF(max_model_mb) },
	/* a run-time limit: not in the cache key */
	[NPR_PARAM_NPR_INFER_TIMEOUT_MS] = { "NPR_INFER_TIMEOUT_MS",
		NPR_PROP_INT, STORED, 0, 1 << 30, NULL,
		OFF(infer_timeout_ms) },
	/* weightless blobs (lib/store/): whether an entry carries the
	 * weights is part of its key, as in the NPU plugin's list */
	[NPR_PARAM_CACHE_MODE] = { "CACHE_MODE", NPR_PROP_ENUM,
		STORED | P_CACHING, 0, 0, cache_modes, OFF(cache_mode) },
	[NPR_PARAM_WEIGHTS_PATH] = { "WEIGHTS_PATH", NPR_PROP_STRING, STORED,
		0, 0, NULL, OFF(weights_path) },
	/* the NPU plugin's; values of the read-only ones from the backend */
	[NPR_PARAM_NPU_DRIVER_VERSION] = { "NPU_DRIVER_VERSION", NPR_PROP_INT,
		P_NPU | P_DEV | P_CACHING, 0, 0, NULL, -1 },
	[NPR_PARAM_NPU_COMPILER_VERSION] = { "NPU_COMPILER_VERSION",
		NPR_PROP_INT, P_NPU | P_DEV | P_CACHING, 0, 0, NULL, -1 },
	[NPR_PARAM_DEVICE_PCI_INFO] = { "DEVICE_PCI_INFO", NPR_PROP_STRING,
		P_NPU | P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_DEVICE_GOPS] = { "DEVICE_GOPS", NPR_PROP_LIST,
		P_NPU | P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE] = { "NPU_DEVICE_ALLOC_MEM_SIZE",
		NPR_PROP_INT, P_NPU | P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE] = { "NPU_DEVICE_TOTAL_MEM_SIZE",
		NPR_PROP_INT, P_NPU | P_DEV, 0, 0, NULL, -1 },
	[NPR_PARAM_NPU_MAX_TILES] = { "NPU_MAX_TILES", NPR_PROP_INT,
		P_NPU | P_DEV, 0, 0, NULL, -1 },
	/* the command queue's workload type (SetWorkloadType) */
	[NPR_PARAM_WORKLOAD_TYPE] = { "WORKLOAD_TYPE", NPR_PROP_ENUM,
		P_NPU | STORED, 0, 0, workloads, OFF(workload_type) },
	[NPR_PARAM_NPU_COMPILER_TYPE] = { "NPU_COMPILER_TYPE", NPR_PROP_ENUM,
		P_NPU | STORED, 0, 0, npu_compilers,
		OFF(npu_compiler_type) },
	[NPR_PARAM_NPU_TILES] = { "NPU_TILES", NPR_PROP_INT,
		P_NPU | STORED | P_CACHING, -1, 1024, NULL, OFF(npu_tiles) },
	[NPR_PARAM_NPU_TURBO] = { "NPU_TURBO", NPR_PROP_BOOL,
		P_NPU | STORED | P_CACHING, 0, 1, NULL, OFF(npu_turbo) },
	[NPR_PARAM_NPU_BYPASS_UMD_CACHING] = { "NPU_BYPASS_UMD_CACHING",
		NPR_PROP_BOOL, P_NPU | STORED, 0, 1, NULL,
		OFF(npu_bypass_umd_caching) },
	[NPR_PARAM_NPU_DEFER_WEIGHTS_LOAD] = { "NPU_DEFER_WEIGHTS_LOAD",
		NPR_PROP_BOOL, P_NPU | STORED, 0, 1, NULL,
		OFF(npu_defer_weights_load) },
	[NPR_PARAM_NPU_COMPILATION_MODE_PARAMS] = {
		"NPU_COMPILATION_MODE_PARAMS", NPR_PROP_STRING,
		P_NPU | STORED | P_CACHING, 0, 0, NULL,
		OFF(npu_compilation_mode) },
	[NPR_PARAM_NPU_COMPILER_DYNAMIC_QUANTIZATION] = {
		"NPU_COMPILER_DYNAMIC_QUANTIZATION", NPR_PROP_BOOL,
		P_NPU | STORED | P_CACHING, 0, 1, NULL,
		OFF(npu_dynamic_quantization) },
	[NPR_PARAM_NPR_NPU_LOADER_VERSION] = { "NPR_NPU_LOADER_VERSION",
		NPR_PROP_STRING, P_NPU | P_DEV, 0, 0, NULL, -1 },
	/* a decoder's static prefill and generate graphs (npu/llm.c) */
	[NPR_PARAM_MAX_PROMPT_LEN] = { "MAX_PROMPT_LEN", NPR_PROP_INT,
		P_NPU | STORED | P_CACHING, 1, 1 << 16, NULL,
		OFF(max_prompt_len) },
	[NPR_PARAM_MIN_RESPONSE_LEN] = { "MIN_RESPONSE_LEN", NPR_PROP_INT,
		P_NPU | STORED | P_CACHING, 1, 1 << 16, NULL,
		OFF(min_response_len) },
	/* the plan cache of dynamic input shapes (ref/signature.c) */
	[NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY] = {
		"CPU_RUNTIME_CACHE_CAPACITY", NPR_PROP_INT, STORED, 0, 1024,
		NULL, OFF(runtime_cache_capacity) },
	[NPR_PARAM_NPR_RUNTIME_CACHE_MISSES] = { "NPR_RUNTIME_CACHE_MISSES",
		NPR_PROP_INT, P_EXEC, 0, 0, NULL, -1 },
	[NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS] = {
		"NPR_RUNTIME_CACHE_EVICTIONS", NPR_PROP_INT, P_EXEC, 0, 0, NULL,
		-1 },
	/* denormals flushed while the cpu device infers (ref/backend.c) */
	[NPR_PARAM_CPU_DENORMALS_OPTIMIZATION] = {
		"CPU_DENORMALS_OPTIMIZATION", NPR_PROP_BOOL, STORED, 0, 1, NULL,
		OFF(cpu_denormals) },
};

static const char *const type_names[] = {
	[NPR_PROP_INT] = "an integer", [NPR_PROP_BOOL] = "a boolean",
	[NPR_PROP_STRING] = "a string", [NPR_PROP_ENUM] = "an enum",
	[NPR_PROP_LIST] = "a list", [NPR_PROP_INT_LIST] = "an integer list",
};

/*
 * NPR_MAX_MODEL_MEMORY_MB's default: half of the machine's memory, or of
 * RLIMIT_AS when that is lower, in MiB; at least 1.
 */
static uint32_t default_max_model_mb(void)
{
	uint64_t mem = npr_mem_total(), mb;

	mb = mem / 2 >> 20;
	if (mb > 1u << 30)
		mb = 1u << 30;
	return mb ? (uint32_t)mb : 1;
}

/**
 * npr_props_init() - device defaults
 * @p: properties to fill.
 */
void npr_props_init(struct npr_props *p)
{
	memset(p, 0, sizeof(*p));
	p->perf_hint = NPR_PERF_HINT_LATENCY;
	p->log_level = NPR_LOG_NONE;
	p->runtime_cache_capacity = 16;
	p->precision_hint = NPR_ELEM_F32;
	p->exec_mode = NPR_EXEC_MODE_PERFORMANCE;
	p->num_streams = NPR_NUM_STREAMS_AUTO;
	p->priority = NPR_PRIORITY_MEDIUM;
	p->cache_max_mb = 2048;
	p->max_model_mb = default_max_model_mb();
	p->npu_tiles = -1;
	p->workload_type = NPR_WORKLOAD_DEFAULT;
	p->npu_compiler_type = NPR_NPU_COMPILER_DRIVER;
	p->max_prompt_len = 1024;
	p->min_response_len = 128;
	p->cache_mode = NPR_CACHE_MODE_OPTIMIZE_SPEED;
}

/* ---- values ------------------------------------------------------------- */

static const char *enum_name(const struct enum_name *e, int64_t v)
{
	for (; e->name; e++)
		if (e->value == v)
			return e->name;
	return NULL;
}

static uint32_t *field(struct npr_props *p, const struct prop_def *d)
{
	return (uint32_t *)((char *)p + d->off);
}

/* A growing output buffer for string lists. */
struct obuf {
	char *buf;
	size_t len, cap;
	int err;
};

static void ob_put(struct obuf *o, const void *p, size_t n)
{
	if (o->err)
		return;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 256;
		char *b;

		while (cap < o->len + n)
			cap *= 2;
		b = realloc(o->buf, cap);
		if (!b) {
			o->err = -ENOMEM;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void ob_str(struct obuf *o, const char *s)
{
	ob_put(o, s, strlen(s) + 1);
}

/*
 * A property's flags on @dev: the NPU plugin's exist only on the npu
 * device, the NPU compiler's options are caching properties there, and an
 * NPU has one stream (NUM_STREAMS reads 1, read-only).
 */
static unsigned int flags_of(const struct npr_device *dev,
			     const struct prop_def *d)
{
	unsigned int f = d->flags & ~P_NPU_CACHING;
	bool npu = npr_backend_has(dev, NPR_BACKEND_CAP_NPU_PARAMS);

	if ((f & P_NPU) && !npu)
		return 0;
	if ((d->flags & P_NPU_CACHING) && npu)
		f |= P_CACHING;
	if (d == &defs[NPR_PARAM_NUM_STREAMS] &&
	    npr_backend_has(dev, NPR_BACKEND_CAP_ONE_STREAM))
		f &= ~(P_RW | P_COMPILE);
	return f;
}

static bool readable(const struct npr_device *dev, const struct prop_def *d,
		     const struct npr_exec *ex)
{
	return d->name && (flags_of(dev, d) & (ex ? P_EXEC : P_DEV));
}

static int scope_err(const struct npr_device *dev, const struct prop_def *d,
		     const struct npr_exec *ex)
{
	if (!flags_of(dev, d))
		return npr_err(-ENOPROTOOPT, "%s: the %s device has no such property (an npu one)",
			       d->name, dev->info.name);
	return npr_err(-ENOPROTOOPT, "%s is a %s property", d->name,
		       ex ? "device" : "compiled-model");
}

/*
 * NPU_COMPILATION_MODE_PARAMS: "key=value" words separated by spaces,
 * the keys the NPU compiler documents: optimization-level (0, 1, 2) and
 * performance-hint-override (latency, efficiency).
 */
static int check_compilation_mode(const char *s)
{
	static const char *const keys[] = {
		"optimization-level=", "performance-hint-override=",
	};
	static const char *const vals[][4] = {
		{ "0", "1", "2", NULL }, { "latency", "efficiency", NULL },
	};

	for (;;) {
		size_t n, k, kl = 0, v;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		n = strcspn(s, " ");
		for (k = 0; k < 2; k++) {
			kl = strlen(keys[k]);
			if (n > kl && !strncmp(s, keys[k], kl))
				break;
		}
		if (k == 2)
			return npr_err(-EINVAL, "NPU_COMPILATION_MODE_PARAMS: \"%.*s\" is not optimization-level=N or performance-hint-override=MODE",
				       (int)(n > 64 ? 64 : n), s);
		for (v = 0; vals[k][v]; v++)
			if (n - kl == strlen(vals[k][v]) &&
			    !strncmp(s + kl, vals[k][v], n - kl))
				break;
		if (!vals[k][v])
			return npr_err(-EINVAL, "NPU_COMPILATION_MODE_PARAMS: %.*s: unknown value \"%.*s\"",
				       (int)kl - 1, s, (int)(n - kl > 32 ? 32 : n - kl),
				       s + kl);
		s += n;
	}
	return 0;
}

static void uuid_of(const struct npr_device *dev, char *out, size_t len)
{
	/* FNV-1a over what identifies the device: stable across runs */
	const char *parts[3] = { dev->info.name, dev->info.full_name,
				 dev->info.arch };
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
	unsigned char b[16];
	int i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < 3; i++)
			for (const char *s = parts[i]; *s; s++) {
				h[k] ^= (unsigned char)*s;
				h[k] *= 0x100000001b3ull;
			}
	for (i = 0; i < 16; i++)
		b[i] = (unsigned char)(h[i / 8] >> (8 * (i % 8)));
	b[6] = (b[6] & 0x0f) | 0x50;	/* name-based UUID layout */
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

static int64_t optimal_requests(const struct npr_props *p)
{
	int64_t n;

	if (p->perf_hint == NPR_PERF_HINT_LATENCY)
		return 1;
	if (p->num_streams > 0)
		n = p->num_streams;
	else if (p->num_threads)
		n = p->num_threads;
	else
		n = npr_cpu_count();
	if (p->hint_num_requests && p->hint_num_requests < n)
		n = p->hint_num_requests;
	return n > 0 ? n : 1;
}

/* Build a list value. */
static int list_value(struct npr_device *dev, struct npr_exec *ex,
		      uint32_t id, struct obuf *o)
{
	char buf[96];
	uint32_t i;

	switch (id) {
	case NPR_PARAM_SUPPORTED_PROPERTIES:
		for (i = 1; i < NPR_PARAM_MAX; i++) {
			if (!readable(dev, &defs[i], ex))
				continue;
			snprintf(buf, sizeof(buf), "%s:%s", defs[i].name,
				 !ex && (flags_of(dev, &defs[i]) & P_RW) ?
				 "RW" : "RO");
			ob_str(o, buf);
		}
		break;
	case NPR_PARAM_AVAILABLE_DEVICES:
		/* every device of the backend, as npr_open() names them */
		for (i = 0; !npr_backend_device_name(dev->ops, (int)i, buf,
						     sizeof(buf)); i++)
			ob_str(o, buf);
		break;
	case NPR_PARAM_OPTIMIZATION_CAPABILITIES:
		if (dev->info.caps & NPR_CAP_FP32)
			ob_str(o, "FP32");
		if (dev->info.caps & NPR_CAP_FP16)
			ob_str(o, "FP16");
		if (dev->info.caps & NPR_CAP_INT8)
			ob_str(o, "INT8");
		if (dev->info.caps & NPR_CAP_EXPORT_IMPORT)
			ob_str(o, "EXPORT_IMPORT");
		break;
	case NPR_PARAM_EXECUTION_DEVICES:
		ob_str(o, dev->info.name);
		break;
	case NPR_PARAM_CACHING_PROPERTIES:
		for (i = 1; i < NPR_PARAM_MAX; i++)
			if (defs[i].name && (flags_of(dev, &defs[i]) & P_CACHING))
				ob_str(o, defs[i].name);
		break;
	default:
		{
			char val[1024];
			size_t n = sizeof(val);
			int err = npr_backend_param_bytes(dev, id, val, &n);

			if (err)
				return err == -ENOENT ? npr_err(-EINVAL,
					"property %s has no value", defs[id].name) : err;
			/* the backend's list ends in its own empty string */
			ob_put(o, val, n);
			return o->err;
		}
	}
	ob_put(o, "", 1);
	return o->err;
}

static int get_value(struct npr_device *dev, struct npr_exec *ex,
		     struct npr_props *p, const struct prop_def *d,
		     uint32_t id, struct npr_param *a)
{
	char buf[128];
	struct obuf o = { 0 };
	int64_t v[3];
	int err;

	switch (d->type) {
	case NPR_PROP_INT:
	case NPR_PROP_BOOL:
		if (!(flags_of(dev, d) & P_RW) &&
		    !npr_backend_param(dev, p, id, &v[0]))
			a->value = (uint64_t)v[0];
		else if (id == NPR_PARAM_NPR_RUNTIME_CACHE_MISSES)
			a->value = __atomic_load_n(&ex->plan_misses,
						   __ATOMIC_RELAXED);
		else if (id == NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS)
			a->value = __atomic_load_n(&ex->plan_evictions,
						   __ATOMIC_RELAXED);
		else if (d->off < 0 && id != NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS &&
			 id != NPR_PARAM_LOADED_FROM_CACHE)
			return npr_err(-EIO, "%s: the %s device did not answer",
				       d->name, dev->info.name);
		else if (id == NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS)
			a->value = (uint64_t)optimal_requests(p);
		else if (id == NPR_PARAM_LOADED_FROM_CACHE)
			a->value = ex->from_cache;
		else if (id == NPR_PARAM_NUM_STREAMS ||
			 id == NPR_PARAM_NPU_TILES)
			a->value = (uint64_t)(int64_t)(int32_t)*field(p, d);
		else
			a->value = *field(p, d);
		return 0;
	case NPR_PROP_ENUM:
		a->value = id == NPR_PARAM_DEVICE_TYPE ?
			   NPR_DEVICE_KIND_INTEGRATED : *field(p, d);
		if (!a->ptr)
			return 0;
		return npr_put_string(enum_name(d->enums, (int64_t)a->value), a->ptr,
			       &a->len);
	case NPR_PROP_STRING:
		switch (id) {
		case NPR_PARAM_FULL_DEVICE_NAME:
			return npr_put_string(dev->info.full_name, a->ptr, &a->len);
		case NPR_PARAM_DEVICE_ARCHITECTURE:
			return npr_put_string(dev->info.arch, a->ptr, &a->len);
		case NPR_PARAM_DEVICE_UUID: {
			/* the driver's, else one made from the device's name */
			size_t n = sizeof(buf);

			if (npr_backend_param_bytes(dev, id, buf, &n))
				uuid_of(dev, buf, sizeof(buf));
			return npr_put_string(buf, a->ptr, &a->len);
		}
		case NPR_PARAM_DEVICE_ID: {
			const char *dot = strchr(dev->info.name, '.');

			return npr_put_string(dot ? dot + 1 : "0", a->ptr, &a->len);
		}
		case NPR_PARAM_MODEL_NAME:
			return npr_put_string(ex->g->name ? ex->g->name : "", a->ptr,
				       &a->len);
		default:
			if (d->off < 0) {
				size_t n = sizeof(buf);

				err = npr_backend_param_bytes(dev, id, buf,
							      &n);
				if (err)
					return err == -ENOENT ?
					       npr_err(-EIO, "%s: the %s device did not answer",
						       d->name, dev->info.name) : err;
				return npr_put_string(buf, a->ptr, &a->len);
			}
			return npr_put_string((char *)p + d->off, a->ptr, &a->len);
		}
	case NPR_PROP_LIST:
		err = list_value(dev, ex, id, &o);
		if (!err)
			err = npr_put_bytes(o.buf, o.len, a->ptr, &a->len);
		free(o.buf);
		return err;
	case NPR_PROP_INT_LIST:
		/* (min, max, step) of the counts the device accepts */
		v[0] = 1;
		v[1] = id == NPR_PARAM_RANGE_FOR_STREAMS ? npr_cpu_count() :
		       1024;
		v[2] = 1;
		return npr_put_bytes(v, sizeof(v), a->ptr, &a->len);
	}
	return npr_err(-EINVAL, "property %s has no value", d->name);
}

/* Parse and range-check a value into @p. */
static int set_value(struct npr_device *dev, struct npr_props *p,
		     const struct prop_def *d, uint32_t id, uint64_t value,
		     const char *str)
{
	int64_t v = (int64_t)value;

	switch (d->type) {
	case NPR_PROP_INT:
	case NPR_PROP_BOOL:
		if (str)
			return npr_err(-EINVAL, "%s is %s: ptr and len must be 0",
				       d->name, type_names[d->type]);
		if (id == NPR_PARAM_NUM_STREAMS && v == 0)
			return npr_err(-ERANGE, "NUM_STREAMS must be at least 1, or AUTO (-1)");
		if (id == NPR_PARAM_NUM_STREAMS && v > npr_cpu_count())
			return npr_err(-ERANGE, "NUM_STREAMS %lld: at most %d streams (RANGE_FOR_STREAMS)",
				       (long long)v, npr_cpu_count());
		if (v < d->min || v > d->max)
			return npr_err(-ERANGE, "%s: %lld is out of range %lld..%lld",
				       d->name, (long long)v,
				       (long long)d->min, (long long)d->max);
		if (id == NPR_PARAM_NPU_TILES && v != -1) {
			int64_t max = 0;

			npr_backend_param(dev, p, NPR_PARAM_NPU_MAX_TILES,
					  &max);
			if (v < 1 || v > max)
				return npr_err(-ERANGE, "NPU_TILES %lld: the %s device has %lld tiles (NPU_MAX_TILES); -1 lets the compiler choose",
					       (long long)v, dev->info.name,
					       (long long)max);
		}
		*field(p, d) = (uint32_t)v;
		return 0;
	case NPR_PROP_ENUM:
		if (str) {
			const struct enum_name *e;

			for (e = d->enums; e->name; e++)
				if (!strcmp(e->name, str))
					break;
			if (!e->name)
				return npr_err(-EINVAL, "%s: unknown value \"%.64s\"",
					       d->name, str);
			v = e->value;
		} else if (!enum_name(d->enums, v)) {
			return npr_err(-ERANGE, "%s: %lld is not one of its values",
				       d->name, (long long)v);
		}
		if (id == NPR_PARAM_INFERENCE_PRECISION_HINT &&
		    v != NPR_ELEM_F32 &&
		    !(v == NPR_ELEM_F16 &&
		      npr_backend_has(dev, NPR_BACKEND_CAP_F16)))
			return npr_err(-EINVAL, "INFERENCE_PRECISION_HINT %s: the %s device computes in %s",
				       enum_name(d->enums, v), dev->info.name,
				       npr_backend_has(dev, NPR_BACKEND_CAP_F16) ?
				       "f16 or f32" : "f32");
		if (id == NPR_PARAM_NPU_COMPILER_TYPE &&
		    v != NPR_NPU_COMPILER_DRIVER)
			return npr_err(-EOPNOTSUPP, "NPU_COMPILER_TYPE %s: npuring has no NPU compiler of its own; the driver's (DRIVER) is the only one",
				       enum_name(d->enums, v));
		*field(p, d) = (uint32_t)v;
		return 0;
	case NPR_PROP_STRING:
		if (!str)
			return npr_err(-EINVAL, "%s is a string: give it in ptr",
				       d->name);
		if (strlen(str) >= NPR_PROP_STR_MAX)
			return npr_err(-ERANGE, "%s: longer than %d bytes",
				       d->name, NPR_PROP_STR_MAX - 1);
		if (id == NPR_PARAM_NPU_COMPILATION_MODE_PARAMS) {
			int err = check_compilation_mode(str);

			if (err)
				return err;
		}
		strcpy((char *)p + d->off, str);
		return 0;
	}
	return npr_err(-EPERM, "%s is read-only", d->name);
}

static int lookup(uint32_t id, const struct prop_def **d)
{
	*d = NULL;
	if (!id || id >= NPR_PARAM_MAX || !defs[id].name)
		return npr_err(-ENOPROTOOPT, "unknown property %u", id);
	*d = &defs[id];
	return 0;
}

/* A user string of at most @len bytes that must hold its NUL. */
static int user_string(uint64_t ptr, uint32_t len, const char *name,
		       const char **out)
{
	const char *s = (const char *)(uintptr_t)ptr;

	if (!len || !memchr(s, 0, len))
		return npr_err(-EINVAL, "%s: the string has no NUL within len (%u)",
			       name, len);
	*out = s;
	return 0;
}

/**
 * npr_prop_param() - GET_PARAM and SET_PARAM
 * @dev: the device, locked.
 * @ex: the compiled model the handle names, or NULL for the device.
 * @a: the argument, copied in.
 * @set: SET_PARAM.
 *
 * Return: 0 or -errno with the message set.
 */
int npr_prop_param(struct npr_device *dev, struct npr_exec *ex,
		   struct npr_param *a, bool set)
{
	struct npr_props *p = ex ? &ex->props : &dev->props;
	const struct prop_def *d;
	const char *str = NULL;
	uint32_t want = a->type;
	int err;

	err = lookup(a->param, &d);
	if (err)
		return err;
	a->type = d->type;
	if (!readable(dev, d, ex))
		return scope_err(dev, d, ex);
	if (want && want != d->type)
		return npr_err(-EPROTOTYPE, "%s is %s, not %s", d->name,
			       type_names[d->type],
			       want < sizeof(type_names) / sizeof(type_names[0]) &&
			       type_names[want] ? type_names[want] :
			       "a known type");
	if (!set) {
		if ((d->type == NPR_PROP_INT || d->type == NPR_PROP_BOOL) &&
		    (a->ptr || a->len))
			return npr_err(-EINVAL, "%s is %s: ptr and len must be 0",
				       d->name, type_names[d->type]);
		return get_value(dev, ex, p, d, a->param, a);
	}
	if (!(flags_of(dev, d) & P_RW))
		return npr_err(-EPERM, "%s is read-only%s", d->name,
			       a->param == NPR_PARAM_NUM_STREAMS ?
			       " on an NPU (one stream)" : "");
	if (ex)
		return npr_err(-EPERM, "%s: a compiled model's properties are fixed at compile time",
			       d->name);
	if (a->ptr) {
		err = user_string(a->ptr, a->len, d->name, &str);
		if (err)
			return err;
	} else if (a->len) {
		return npr_err(-EINVAL, "%s: len without ptr", d->name);
	}
	if ((d->type == NPR_PROP_STRING) && a->value)
		return npr_err(-EINVAL, "%s is a string: value must be 0",
			       d->name);
	return set_value(dev, p, d, a->param, a->value, str);
}

/**
 * npr_prop_compile_arg() - apply one COMPILE property to a snapshot
 * @dev: the device (for messages and device-dependent checks).
 * @p: the compiled model's properties being built.
 * @pa: the argument.
 *
 * Return: 0 or -errno with the message set, the errnos of SET_PARAM.
 */
int npr_prop_compile_arg(struct npr_device *dev, struct npr_props *p,
			 const struct npr_prop_arg *pa)
{
	const struct prop_def *d;
	const char *str = NULL;
	int err;

	err = lookup(pa->param, &d);
	if (err)
		return err;
	if (!flags_of(dev, d))
		return npr_err(-ENOPROTOOPT, "%s: the %s device has no such property",
			       d->name, dev->info.name);
	if (!(flags_of(dev, d) & P_COMPILE))
		return npr_err(-EPERM, "%s cannot be set at compile time (read-only)",
			       d->name);
	if (d->type == NPR_PROP_STRING) {
		if (!pa->value)
			return npr_err(-EINVAL, "%s: value must point to a string",
				       d->name);
		err = user_string(pa->value, NPR_PROP_STR_MAX, d->name, &str);
		if (err)
			return npr_err(-ERANGE, "%s: longer than %d bytes",
				       d->name, NPR_PROP_STR_MAX - 1);
	}
	return set_value(dev, p, d, pa->param, str ? 0 : pa->value, str);
}

/**
 * npr_props_key() - the caching properties' values, for a cache key
 * @dev: the device, locked.
 * @p: the properties a model is compiled with.
 * @buf: out: "NAME=VALUE,NAME=VALUE...", every property the table marks
 *       as caching on @dev (CACHING_PROPERTIES), in id order; "?" for a
 *       value the device does not answer.
 * @len: the size of @buf; the text is cut to fit.
 *
 * Everything that changes what a compile makes is one of them: the
 * compile options (the hints, NPU_TILES, ...), and on the npu the
 * PERFORMANCE_HINT its compiler takes and the driver and compiler
 * versions.
 */
void npr_props_key(struct npr_device *dev, const struct npr_props *p,
		   char *buf, size_t len)
{
	struct npr_props c = *p;
	size_t n = 0;
	uint32_t id;

	buf[0] = 0;
	for (id = 1; id < NPR_PARAM_MAX && n < len; id++) {
		const struct prop_def *d = &defs[id];
		char val[NPR_PROP_STR_MAX + 64];
		struct npr_param a = { .size = sizeof(a), .param = id };
		bool text = d->type == NPR_PROP_STRING ||
			    d->type == NPR_PROP_ENUM;
		int k;

		if (!d->name || !(flags_of(dev, d) & P_CACHING))
			continue;
		if (text) {
			a.ptr = (uintptr_t)val;
			a.len = sizeof(val);
		}
		if (get_value(dev, NULL, &c, d, id, &a))
			snprintf(val, sizeof(val), "?");
		else if (d->type == NPR_PROP_BOOL)
			snprintf(val, sizeof(val), "%s", a.value ? "YES" : "NO");
		else if (!text)
			snprintf(val, sizeof(val), "%lld",
				 (long long)(int64_t)a.value);
		k = snprintf(buf + n, len - n, "%s%s=%s", n ? "," : "",
			     d->name, val);
		n += k > 0 ? (size_t)k : 0;
	}
}

/**
 * npr_prop_info() - PROP_INFO
 * @dev: the device, locked.
 * @ex: the compiled model the handle names, or NULL.
 * @a: the argument, copied in.
 *
 * Return: 0, -ENOENT past the last property, or -errno.
 */
int npr_prop_info(struct npr_device *dev, struct npr_exec *ex,
		  struct npr_prop_info *a)
{
	const struct prop_def *d = NULL;
	uint32_t id, n = 0;

	if (a->flags == NPR_PROP_INFO_BY_ID) {
		if (lookup(a->id, &d))
			return -ENOPROTOOPT;
		id = a->id;
	} else if (a->flags == NPR_PROP_INFO_BY_NAME) {
		if (!memchr(a->name, 0, sizeof(a->name)))
			return npr_err(-EINVAL, "name is not NUL-terminated");
		for (id = 1; id < NPR_PARAM_MAX; id++)
			if (defs[id].name && !strcmp(defs[id].name, a->name))
				break;
		if (id == NPR_PARAM_MAX)
			return npr_err(-ENOPROTOOPT, "unknown property \"%.63s\"",
				       a->name);
		d = &defs[id];
	} else {
		for (id = 1; id < NPR_PARAM_MAX; id++) {
			if (!readable(dev, &defs[id], ex))
				continue;
			if (n++ == a->index)
				break;
		}
		if (id == NPR_PARAM_MAX)
			return npr_err(-ENOENT, "property index %u: the %s has %u properties",
				       a->index, ex ? "compiled model" :
				       "device", n);
		d = &defs[id];
	}
	if (!readable(dev, d, ex))
		return scope_err(dev, d, ex);
	a->id = id;
	a->type = d->type;
	a->access = flags_of(dev, d) & (P_COMPILE | P_CACHING);
	if (!ex)
		a->access |= flags_of(dev, d) & P_RW;
	snprintf(a->name, sizeof(a->name), "%s", d->name);
	return 0;
}
