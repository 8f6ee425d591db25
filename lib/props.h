/* SPDX-License-Identifier: MIT */
/*
 * Properties that a device holds and a compiled model snapshots; the table
 * in lib/props.c describes each (enum npr_param_id).
 */
#ifndef NPR_PROPS_H
#define NPR_PROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/npuring.h"

struct npr_device;
struct npr_exec;

/**
 * struct npr_props - the values of the settable properties
 *
 * One field per property that has a value of its own; the others are
 * computed (lib/props.c).
 */
struct npr_props {
	uint32_t num_threads;	/* 0: all CPUs the process may use */
	uint32_t log_level;	/* enum npr_log_level */
	uint32_t perf_hint;	/* enum npr_perf_hint */
	uint32_t profiling;
	uint32_t hint_num_requests;	/* 0: no limit */
	uint32_t precision_hint;	/* enum npr_elem_type */
	uint32_t exec_mode;	/* enum npr_exec_mode */
	int32_t num_streams;	/* >= 1, or NPR_NUM_STREAMS_AUTO */
	uint32_t cpu_pinning;
	uint32_t priority;	/* enum npr_priority */
	uint32_t disable_transformations;
	uint32_t exclusive_async;
	uint32_t compile_threads;	/* 0: all CPUs */
	char cache_dir[NPR_PROP_STR_MAX];	/* "" : no cache */
	uint32_t cache_max_mb;	/* 0: no limit */
	uint32_t cache_required;
	uint32_t max_model_mb;	/* 0: no limit; default npr_props_init() */
	uint32_t infer_timeout_ms;	/* sync INFER; 0: no limit */
	uint32_t cache_mode;	/* enum npr_cache_mode */
	char weights_path[NPR_PROP_STR_MAX];	/* IMPORT; "" : none */
	uint32_t runtime_cache_capacity;	/* plans per exec, 0: none kept */
	uint32_t cpu_denormals;	/* FTZ and DAZ while the cpu device infers */
	/* npu only (NPR_PARAM_NPU_*) */
	int32_t npu_tiles;	/* -1: the compiler chooses */
	uint32_t npu_turbo;
	uint32_t npu_bypass_umd_caching;
	uint32_t npu_defer_weights_load;
	uint32_t npu_dynamic_quantization;
	char npu_compilation_mode[NPR_PROP_STR_MAX];	/* "" : none */
	uint32_t workload_type;		/* enum npr_workload */
	uint32_t npu_compiler_type;	/* enum npr_npu_compiler */
	uint32_t max_prompt_len;	/* a decoder's prefill tokens */
	uint32_t min_response_len;	/* its generated tokens at least */
};

/* the callers hold dev->lock */
void npr_props_init(struct npr_props *p);
int npr_prop_param(struct npr_device *dev, struct npr_exec *ex,
		   struct npr_param *a, bool set);
int npr_prop_compile_arg(struct npr_device *dev, struct npr_props *p,
			 const struct npr_prop_arg *pa);
int npr_prop_info(struct npr_device *dev, struct npr_exec *ex,
		  struct npr_prop_info *a);
void npr_props_key(struct npr_device *dev, const struct npr_props *p,
		   char *buf, size_t len);

#endif /* NPR_PROPS_H */
