/* SPDX-License-Identifier: MIT */
/*
 * Profiles of the CPU backend (ref/profile.c): NPR_CPU_PROFILE's sums
 * per step, printed when the exec goes away, and the per-request records
 * of ENABLE_PROFILING.
 */
#ifndef NPR_REF_PROFILE_H
#define NPR_REF_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"

struct npr_exec;
struct npr_request;

int npr_cpu_prof_init(struct ref_exec *re, int nnodes);

void npr_cpu_prof_fini(const struct npr_exec *ex, struct ref_exec *re);

void npr_cpu_prof_add(struct npr_request *rq, int node, uint64_t ns,
		      const char *kernel, bool first);

void npr_cpu_prof_step(struct ref_exec *re, int i, uint64_t ns);

void npr_cpu_prof_run_end(struct ref_exec *re, uint64_t ns);

#endif /* NPR_REF_PROFILE_H */
