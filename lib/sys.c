// SPDX-License-Identifier: MIT
/*
 * What lib/ and the backends ask of the system: aligned memory for
 * tensors and weights, the CPUs the process may use, the memory it may
 * use, the monotonic clock.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

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
