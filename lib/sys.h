/* SPDX-License-Identifier: MIT */
/*
 * What lib/ and the backends ask of the system: aligned memory, the CPUs
 * the process may use, the monotonic clock, the environment (lib/sys.c).
 */
#ifndef NPR_SYS_H
#define NPR_SYS_H

#include <stddef.h>
#include <stdint.h>

void *npr_alloc(size_t bytes);
uint64_t npr_alloc_cost(uint64_t bytes);
int npr_cpu_count(void);
uint64_t npr_mem_total(void);
uint64_t npr_now_ns(void);

/*
 * Every environment variable the library reads, read with npr_env() and
 * nowhere else (scripts/layering.py checks it); lib/sys.c's table says
 * what each does, Documentation/environment.rst too.  All are testing
 * and debugging switches but the Level Zero ones (NPR_VNPU,
 * NPR_ZE_LOADER, ZE_ENABLE_ALT_DRIVERS).
 */
enum npr_env_id {
	NPR_ENV_ACCEL_DIR,
	NPR_ENV_CONV_DIRECT_1X1,
	NPR_ENV_CONV_DW_FLAT,
	NPR_ENV_CONV_DW_NO_RUN,
	NPR_ENV_CONV_DW_NO_SHIFT,
	NPR_ENV_CONV_NO_DIRECT,
	NPR_ENV_CONV_NO_MEAN,
	NPR_ENV_CONV_NO_POOL,
	NPR_ENV_CONV_NO_SWEEP,
	NPR_ENV_CONV_NO_T,
	NPR_ENV_CONV_NO_WINO,
	NPR_ENV_CONV_PACK_1X1,
	NPR_ENV_CONV_T_MAXPIX,
	NPR_ENV_CONV_T_PAD,
	NPR_ENV_CONV_WINO,
	NPR_ENV_CONV_WINO_NB,
	NPR_ENV_CONV_WINO_SUB,
	NPR_ENV_CPU_COPY_INPUTS,
	NPR_ENV_CPU_GROUP,
	NPR_ENV_CPU_GROUP_TAIL_MB,
	NPR_ENV_CPU_KV_COPY,
	NPR_ENV_CPU_NO_FUSE,
	NPR_ENV_CPU_NO_SHARE,
	NPR_ENV_CPU_PROFILE,
	NPR_ENV_CPU_REF,
	NPR_ENV_GEMM_ISA,
	NPR_ENV_INT8_ISA,
	NPR_ENV_LOWP_OFF,
	NPR_ENV_NPU_DUMP,
	NPR_ENV_POOL_ROWS,
	NPR_ENV_QLAYOUT_OFF,
	NPR_ENV_RING_FALLBACK,
	NPR_ENV_VNPU,
	NPR_ENV_ZE_LOADER,
	NPR_ENV_ZE_ENABLE_ALT_DRIVERS,
	NPR_ENV_MAX
};

const char *npr_env(enum npr_env_id id);

#endif /* NPR_SYS_H */
