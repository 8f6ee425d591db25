/* SPDX-License-Identifier: MIT */
/*
 * A persistent thread pool for the CPU kernels.
 *
 * One pool per process, created on first use with one worker per CPU the
 * process may run on (sched_getaffinity) minus one: the calling thread
 * always takes part.  A parallel_for gives each thread an equal,
 * contiguous share of the indexes 0..n-1 (thread t the t-th), which it
 * runs first before it helps with the others' remaining indexes: loops
 * that number their work in the order of the data keep each thread on
 * the part it wrote in the loop before.  Workers spin briefly and then
 * sleep on a futex, so a run of back-to-back layers does not pay a
 * wake-up per layer.
 *
 * After fork() the child runs every loop on its calling thread alone.
 *
 * The pool runs one parallel_for at a time.  A caller that finds it busy
 * (another request on another thread) runs its loop alone, so requests
 * side by side never oversubscribe the CPUs.  Nested calls from inside a
 * loop body run serially on the calling worker.  Workers run a loop's
 * items with the caller's floating-point control (x86: MXCSR, its FTZ,
 * DAZ and rounding bits).
 */
#ifndef NPR_REF_THREADS_H
#define NPR_REF_THREADS_H

#include <stdint.h>

/* Loop body: @i in [0, n), @tid in [0, threads used). */
typedef void (*npr_par_fn)(void *arg, int i, int tid);

/**
 * npr_pool_cpus() - CPUs the process may use (the pool size, caller
 * included).
 * Return: >= 1.
 */
int npr_pool_cpus(void);

/**
 * npr_par_set_limit() - most threads a parallel_for on this thread uses
 * @n: 0 for all of npr_pool_cpus(), 1 for serial.
 * Return: the previous limit.
 * Context: thread-local; the backend sets it per request around infer,
 * from INFERENCE_NUM_THREADS / PERFORMANCE_HINT.
 */
int npr_par_set_limit(int n);

/* Threads a parallel_for started on this thread would use now. */
int npr_par_threads(void);

/**
 * npr_parallel_for() - run fn(arg, i, tid) for every i in [0, n)
 * @n: iterations.
 * @fn: the body; must not fail (record failures in @arg).
 * @arg: passed through.
 *
 * Returns when every iteration has finished.  Uses at most
 * npr_par_threads() threads; tid < that number.
 * Context: any thread; reentrant (nested calls run serially).
 */
void npr_parallel_for(int n, npr_par_fn fn, void *arg);

/*
 * Pool statistics, for profiles (NPR_CPU_PROFILE=3): while a caller has
 * a struct attached, every parallel_for it starts adds to it.  Slot t
 * counts the thread with tid t (threads past the last slot go uncounted).
 */
#define NPR_PAR_STATS_MAX	8

struct npr_par_stats {
	uint64_t loops;			/* parallel_for calls */
	uint64_t serial;		/* of those, run on the caller alone */
	uint64_t span_ns;		/* caller: from start to return */
	uint64_t wait_ns;		/* caller: waiting for the workers */
	uint64_t work_ns[NPR_PAR_STATS_MAX];	/* running loop bodies */
	uint64_t late_ns[NPR_PAR_STATS_MAX];	/* start to joining */
	uint64_t items[NPR_PAR_STATS_MAX];	/* indexes run */
};

/**
 * npr_par_stats_attach() - count this thread's loops into @s
 * @s: zeroed by the caller when it wants; NULL detaches.
 * Return: the struct attached before.
 * Context: thread-local; off (nothing timed) unless attached.
 */
struct npr_par_stats *npr_par_stats_attach(struct npr_par_stats *s);

/*
 * The floating-point control bits of the calling thread (x86-64: MXCSR
 * without its sticky exception flags; elsewhere 0), which the pool's
 * workers take on for each loop.  npr_fpcr_set() keeps the thread's
 * exception flags.  NPR_FPCR_FTZ_DAZ: flush denormal results and
 * operands to zero (CPU_DENORMALS_OPTIMIZATION).
 */
#define NPR_FPCR_FTZ_DAZ	0x8040u

unsigned int npr_fpcr_get(void);
void npr_fpcr_set(unsigned int v);

#endif /* NPR_REF_THREADS_H */
