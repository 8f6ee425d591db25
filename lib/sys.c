// SPDX-License-Identifier: MIT
/*
 * What lib/ and the backends ask of the system: aligned memory for
 * tensors and weights, the CPUs the process may use, the memory it may
 * use, the monotonic clock, the environment.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "error.h"
#include "sys.h"

/**
 * npr_alloc() - 64-byte aligned memory, freed with free()
 * @bytes: the size; 0 gets 64 bytes.
 *
 * From 2 MiB up the block is aligned to 2 MiB and advised for transparent
 * huge pages: where THP is "madvise" (the default of many distributions)
 * large weights and activations would otherwise live on 4 KiB pages, and
 * streaming resnet18's 45 MB of packed weights walks through 11,000 of
 * them (huge pages: 4-5% faster on it).  Without THP the advice does
 * nothing.
 *
 * Return: the memory, or NULL.
 */
void *npr_alloc(size_t bytes)
{
	const size_t huge = 2 << 20;
	size_t n = bytes ? (bytes + 63) & ~(size_t)63 : 64;
	void *p = NULL;

	if (n >= huge) {
		if (posix_memalign(&p, huge, n))
			return NULL;
		madvise(p, n, MADV_HUGEPAGE);
		return p;
	}
	if (posix_memalign(&p, 64, n))
		return NULL;
	return p;
}

/**
 * npr_alloc_cost() - what a block from npr_alloc() or malloc() takes
 * @bytes: the size asked for.
 *
 * The size rounded as npr_alloc() rounds it, malloc's header, whole pages
 * from 64 KiB up (blocks the allocator may map), and from 2 MiB up the
 * alignment's slack (the allocator maps that much more; the
 * pages of the slack are never touched).  The memory budget counts
 * blocks with it (npr_exec_budget()).
 *
 * Return: the bytes, saturating at UINT64_MAX.
 */
uint64_t npr_alloc_cost(uint64_t bytes)
{
	const uint64_t huge = 2 << 20;
	uint64_t n;

	if (bytes > UINT64_MAX - huge - 64)
		return UINT64_MAX;
	n = (bytes ? (bytes + 63) & ~(uint64_t)63 : 64) + 16;
	if (n >= 64 << 10)	/* may be mapped: whole pages */
		n = (n + 4095) & ~(uint64_t)4095;
	return n + (n >= huge ? huge : 0);
}

/**
 * npr_cpu_count() - the CPUs this process may run on
 *
 * Return: their number (sched_getaffinity()), at least 1.
 */
int npr_cpu_count(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/**
 * npr_mem_total() - the memory this process could use at most
 *
 * The machine's physical memory (sysconf()), or RLIMIT_AS when that is
 * set and lower.
 *
 * Return: bytes; 1 GiB when the system does not say.
 */
uint64_t npr_mem_total(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t mem = 1ull << 30;
	struct rlimit rl;

	if (pages > 0 && psz > 0)
		mem = (uint64_t)pages * (uint64_t)psz;
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)rl.rlim_cur < mem)
		mem = rl.rlim_cur;
	return mem;
}

/**
 * npr_now_ns() - CLOCK_MONOTONIC in nanoseconds
 *
 * Return: the time.
 */
uint64_t npr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * struct env_var - an environment variable the library reads
 * @name: its name.
 * @testing: a testing or debugging switch, not a setting for users.
 * @what: what it does (Documentation/environment.rst says more).
 */
struct env_var {
	const char *name;
	bool testing;
	const char *what;
};

#define T	true		/* testing and debugging */
#define U	false		/* documented for users */

static const struct env_var env_vars[NPR_ENV_MAX] = {
	[NPR_ENV_ACCEL_DIR] = { "NPR_ACCEL_DIR", T,
		"npu: look for accel nodes here instead of /dev/accel" },
	[NPR_ENV_CONV_DIRECT_1X1] = { "NPR_CONV_DIRECT_1X1", T,
		"cpu: 1x1 convolutions read B in place at any depth" },
	[NPR_ENV_CONV_DW_FLAT] = { "NPR_CONV_DW_FLAT", T,
		"cpu: depthwise convolutions on the flat kernels only" },
	[NPR_ENV_CONV_DW_NO_RUN] = { "NPR_CONV_DW_NO_RUN", T,
		"cpu: no table-driven depthwise kernel" },
	[NPR_ENV_CONV_DW_NO_SHIFT] = { "NPR_CONV_DW_NO_SHIFT", T,
		"cpu: no shifting 3x3 depthwise kernel" },
	[NPR_ENV_CONV_NO_DIRECT] = { "NPR_CONV_NO_DIRECT", T,
		"cpu: im2col instead of the direct convolution" },
	[NPR_ENV_CONV_NO_MEAN] = { "NPR_CONV_NO_MEAN", T,
		"cpu: no global mean fused into a convolution" },
	[NPR_ENV_CONV_NO_POOL] = { "NPR_CONV_NO_POOL", T,
		"cpu: no MaxPool fused into a convolution" },
	[NPR_ENV_CONV_NO_SWEEP] = { "NPR_CONV_NO_SWEEP", T,
		"cpu: no weight sweeps over several images" },
	[NPR_ENV_CONV_NO_T] = { "NPR_CONV_NO_T", T,
		"cpu: no pixel-major convolution path" },
	[NPR_ENV_CONV_NO_WINO] = { "NPR_CONV_NO_WINO", T,
		"cpu: no Winograd convolutions" },
	[NPR_ENV_CONV_PACK_1X1] = { "NPR_CONV_PACK_1X1", T,
		"cpu: 1x1 convolutions pack B" },
	[NPR_ENV_CONV_T_MAXPIX] = { "NPR_CONV_T_MAXPIX", T,
		"cpu: the pixel-major path's plane limit" },
	[NPR_ENV_CONV_T_PAD] = { "NPR_CONV_T_PAD", T,
		"cpu: pixel-major tiles charged as seven pixels" },
	[NPR_ENV_CONV_WINO] = { "NPR_CONV_WINO", T,
		"cpu: Winograd wherever the shape fits" },
	[NPR_ENV_CONV_WINO_NB] = { "NPR_CONV_WINO_NB", T,
		"cpu: Winograd tiles per block" },
	[NPR_ENV_CONV_WINO_SUB] = { "NPR_CONV_WINO_SUB", T,
		"cpu: Winograd groups per U panel read" },
	[NPR_ENV_CPU_COPY_INPUTS] = { "NPR_CPU_COPY_INPUTS", T,
		"cpu: copy every model input into the arena" },
	[NPR_ENV_CPU_GROUP] = { "NPR_CPU_GROUP", T,
		"cpu: images per batch group (0: the whole batch)" },
	[NPR_ENV_CPU_GROUP_TAIL_MB] = { "NPR_CPU_GROUP_TAIL_MB", T,
		"cpu: the batch groups' tail limit in MB" },
	[NPR_ENV_CPU_KV_COPY] = { "NPR_CPU_KV_COPY", T,
		"cpu: a KV cache's Concat copies it for attention" },
	[NPR_ENV_CPU_NO_FUSE] = { "NPR_CPU_NO_FUSE", T,
		"cpu: no graph fusions (1, or a list of them)" },
	[NPR_ENV_CPU_NO_SHARE] = { "NPR_CPU_NO_SHARE", T,
		"cpu: run every repeated dynamic step of a KV cache's plan" },
	[NPR_ENV_CPU_PROFILE] = { "NPR_CPU_PROFILE", T,
		"cpu: time every step, log a profile (1-3)" },
	[NPR_ENV_CPU_REF] = { "NPR_CPU_REF", T,
		"cpu: the reference kernels only" },
	[NPR_ENV_GEMM_ISA] = { "NPR_GEMM_ISA", T,
		"cpu: the GEMM micro-kernel (avx512, avx2, scalar)" },
	[NPR_ENV_INT8_ISA] = { "NPR_INT8_ISA", T,
		"cpu: the int8 kernel (vnni512, avxvnni, avx2, scalar)" },
	[NPR_ENV_LOWP_OFF] = { "NPR_LOWP_OFF", T,
		"compile: no low-precision pass (quantized models in f32)" },
	[NPR_ENV_NPU_DUMP] = { "NPR_NPU_DUMP", T,
		"npu: write what the driver compiles into this directory" },
	[NPR_ENV_POOL_ROWS] = { "NPR_POOL_ROWS", T,
		"cpu: the row kernel for every pooling" },
	[NPR_ENV_QLAYOUT_OFF] = { "NPR_QLAYOUT_OFF", T,
		"compile: no layout pass (int8 convolutions on NCHW rows)" },
	[NPR_ENV_RING_FALLBACK] = { "NPR_RING_FALLBACK", T,
		"rings complete through the eventfd fallback" },
	[NPR_ENV_VNPU] = { "NPR_VNPU", U,
		"npu: the software NPU (1, or its path)" },
	[NPR_ENV_ZE_LOADER] = { "NPR_ZE_LOADER", U,
		"npu: the Level Zero loader to open" },
	[NPR_ENV_ZE_ENABLE_ALT_DRIVERS] = { "ZE_ENABLE_ALT_DRIVERS", U,
		"npu: the Level Zero loader's drivers (before NPR_VNPU)" },
};

#undef T
#undef U

static _Atomic bool env_told[NPR_ENV_MAX];

/**
 * npr_env() - read an environment variable of the library
 * @id: which.
 *
 * The one place the library reads its environment.  The first time a
 * variable is found set while a log callback takes its level, it is
 * logged: a testing switch as a warning (it changes how the library
 * works, and is no setting for users), the others at NPR_LOG_INFO.
 *
 * Return: its value, or NULL when it is not set.
 */
const char *npr_env(enum npr_env_id id)
{
	const struct env_var *e;
	const char *v;
	int level;

	if ((unsigned int)id >= NPR_ENV_MAX)
		return NULL;
	e = &env_vars[id];
	v = getenv(e->name);
	level = e->testing ? NPR_LOG_WARNING : NPR_LOG_INFO;
	if (v && !atomic_load_explicit(&env_told[id], memory_order_relaxed) &&
	    npr_log_enabled(level) && !atomic_exchange(&env_told[id], true))
		npr_log(level, "%s=%.64s is set: %s%s", e->name, v, e->what,
			e->testing ? " (a testing and debugging switch)" : "");
	return v;
}
