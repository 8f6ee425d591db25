/* SPDX-License-Identifier: MIT */
/*
 * What lib/ and the backends ask of the system: aligned memory, the CPUs
 * the process may use, the monotonic clock (lib/sys.c).
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

#endif /* NPR_SYS_H */
