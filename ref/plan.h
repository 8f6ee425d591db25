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

/**
 * npr_cpu_plan_kernels() - the fast kernels of an exec's steps
 * @ex: the exec being compiled; ex->prep, when set, holds packed weights
 *      from a blob that the plans use in place.
 * @re: its plan; re->fast (per node, zeroed) gets a struct ref_fast at
 *      the node where each fused step runs and npr_cpu_absorbed_mark at
 *      the nodes whose work it does; re->no_idx is allocated and set.
 *
 * With NPR_CPU_REF set nothing is planned (and weights a blob holds
 * packed are unpacked into the graph).
 * Return: 0; -EPROTONOSUPPORT for a blob of another layout
 * (npr_cpu_prep_layout()); -EINVAL for prepared weights that do not fit
 * the graph; -ENOMEM.
 */
int npr_cpu_plan_kernels(struct npr_exec *ex, struct ref_exec *re);

/**
 * npr_cpu_plan_arena() - the memory of an exec's steps
 * @ex: the exec being compiled.
 * @re: its plan, with the step list made; re->off holds the layout
 *      without reuse and re->arena_bytes its size.
 *
 * Replaces re->off and re->arena_bytes with the planned arena, marks
 * Concats done in place (npr_cpu_noop_mark) and sets the batch groups.
 * Return: 0; -EINVAL when a step reads a constant without bytes (a blob
 * that says a plan holds weights it does not hold); -ENOMEM.
 */
int npr_cpu_plan_arena(struct npr_exec *ex, struct ref_exec *re);

void npr_cpu_prep_layout(char *buf, size_t len);

#endif /* NPR_REF_PLAN_H */
