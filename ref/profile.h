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

/**
 * npr_cpu_prof_init() - NPR_CPU_PROFILE's records for an exec
 * @re: the exec's plan; gets re->prof_ns (and re->pstats with
 *      NPR_CPU_PROFILE=3) when the variable is set.
 * @nnodes: the graph's node count (at least the steps).
 * Return: 0 or -ENOMEM (what was allocated is freed by
 * npr_cpu_prof_fini()).
 */
int npr_cpu_prof_init(struct ref_exec *re, int nnodes);

/**
 * npr_cpu_prof_fini() - print NPR_CPU_PROFILE's records and free them
 * @ex: the exec, for its graph's node types.
 * @re: its plan.
 * Context: when the exec goes away; no request runs.
 */
void npr_cpu_prof_fini(const struct npr_exec *ex, struct ref_exec *re);

/**
 * npr_cpu_prof_add() - a request's profile record of a node
 * @rq: the request; nothing is done without rq->prof.
 * @node: the node the time is the work of.
 * @ns: the time.
 * @kernel: the kernel's name, a static string.
 * @first: the first part of the step (a grouped step adds its groups'
 *         times up).
 */
void npr_cpu_prof_add(struct npr_request *rq, int node, uint64_t ns,
		      const char *kernel, bool first);

/**
 * npr_cpu_prof_step() - NPR_CPU_PROFILE: step @i took @ns
 * @re: the exec's plan, with re->prof_ns.
 * @i: the step.
 * @ns: its time (of a group, when grouped).
 * Context: the request's thread; requests of one exec profiled at once
 * add up unsynchronised (as they always did).
 */
void npr_cpu_prof_step(struct ref_exec *re, int i, uint64_t ns);

/**
 * npr_cpu_prof_run_end() - NPR_CPU_PROFILE: a run is over
 * @re: the exec's plan, with re->prof_ns.
 * @ns: the run's time, inputs to outputs; each step's fastest is kept.
 */
void npr_cpu_prof_run_end(struct ref_exec *re, uint64_t ns);

#endif /* NPR_REF_PROFILE_H */
