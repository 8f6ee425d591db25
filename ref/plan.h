/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend's compile-time plans (ref/plan.c): the fast kernels
 * before the step list, the memory after it.
 */
#ifndef NPR_REF_PLAN_H
#define NPR_REF_PLAN_H

#include <stddef.h>

#include "cpu.h"

struct npr_exec;

int npr_cpu_plan_kernels(struct npr_exec *ex, struct ref_exec *re);

int npr_cpu_plan_arena(struct npr_exec *ex, struct ref_exec *re);

void npr_cpu_prep_layout(char *buf, size_t len);

/* ref/backend.c: the steps between the two, a whole plan */
int npr_cpu_plan_graph(struct npr_exec *ex, struct ref_exec *re);

void npr_cpu_plan_free(struct npr_exec *ex, struct ref_exec *re);

#endif /* NPR_REF_PLAN_H */
