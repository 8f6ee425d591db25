// SPDX-License-Identifier: MIT
/*
 * The CPU kernels' thread pool; see threads.h for the contract.
 *
 * Dispatch: the caller publishes (fn, arg, n, nthreads) and bumps a
 * generation counter; workers with tid < nthreads notice it (spinning for
 * a while, then on a futex), run their share of the indexes and then help
 * with the others' (run_items()), and count themselves done.  Sleeping wake-ups cost ~30 us on this class of
 * VM, so workers spin ~0.2 ms after each loop before they sleep, yielding
 * after the first 25 us so that a busy machine's other threads (ours
 * included) still run; the caller waiting for the last worker yields too.
 *
 * A worker joins a loop before it takes an index (a counter tagged with
 * the loop); once the caller has seen every index handed out it closes
 * the loop and waits only for the workers that joined.  Workers run a
 * loop's items with the caller's floating-point control (MXCSR).  On a busy
 * machine a worker that was preempted (or asleep) when the loop began
 * used to hold the caller up until it was scheduled again, only to find
 * nothing left to do; now the caller goes on, and the late worker finds
 * the loop closed.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gemm.h"
#include "threads.h"

#define POOL_MAX	255
#define SPIN_NS		200000
#define JOIN_CLOSED	(1u << 31)

/*
 * Indexes [lo, hi) of a loop not yet handed out from one thread's share
 * (hi << 32 | lo): the thread takes from the front, others from the back.
 */
struct share {
	_Atomic uint64_t w;
	char pad[56];
};

struct pool {
	int cpus;
	int nworkers;
	pthread_mutex_t busy;		/* held by the caller of a loop */
	/* futex word: loop count << 8 | threads taking part */
	_Atomic unsigned int gen;
	struct share share[POOL_MAX];	/* per thread of the loop */
	_Atomic int done;		/* workers finished with this loop */
	/* loop count << 32 | JOIN_CLOSED | workers that joined the loop */
	_Atomic uint64_t join;
	_Atomic int sleepers;
	npr_par_fn fn;
	void *arg;
	int n, nthreads;
	unsigned int fpcr;		/* the caller's floating-point control */
	struct npr_par_stats *stats;	/* the caller's, or NULL */
	uint64_t t0;			/* with stats: when the loop began */
};

static struct pool pool = { .busy = PTHREAD_MUTEX_INITIALIZER };
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static _Thread_local int par_limit;
static _Thread_local int in_loop;
static _Thread_local struct npr_par_stats *par_stats;

static long futex(_Atomic unsigned int *w, int op, unsigned int val)
{
	return syscall(SYS_futex, (unsigned int *)w, op, val, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

#define MXCSR_FLAGS	0x3fu	/* the sticky exception flags: not control */

/**
 * npr_fpcr_get() - the calling thread's floating-point control bits
 *
 * x86-64: MXCSR without its exception flags (the FTZ and DAZ bits the cpu
 * backend sets for CPU_DENORMALS_OPTIMIZATION, the rounding mode), which
 * a loop's workers take on while they run its items, so that a body
 * computes the same on every thread.  Elsewhere 0.
 *
 * Return: the control bits.
 */
unsigned int npr_fpcr_get(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_stmxcsr() & ~MXCSR_FLAGS;
#else
	return 0;
#endif
}

/**
 * npr_fpcr_set() - set the calling thread's floating-point control bits
 * @v: as npr_fpcr_get() returns them
 *
 * The thread's exception flags stay as they are.  Elsewhere than x86-64
 * it does nothing.
 */
void npr_fpcr_set(unsigned int v)
{
#if defined(__x86_64__)
	__builtin_ia32_ldmxcsr(v | (__builtin_ia32_stmxcsr() & MXCSR_FLAGS));
#else
	(void)v;
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * Take an index of share @s: its first if @front, else its last; -1 when
 * the share is used up.
 */
static int take(struct share *s, bool front)
{
	uint64_t w = atomic_load_explicit(&s->w, memory_order_relaxed), nw;
	uint32_t lo, hi;

	do {
		lo = (uint32_t)w;
		hi = (uint32_t)(w >> 32);
		if (lo >= hi)
			return -1;
		nw = front ? w + 1 : w - (1ull << 32);
	} while (!atomic_compare_exchange_weak_explicit(&s->w, &w, nw,
							memory_order_relaxed,
							memory_order_relaxed));
	return front ? (int)lo : (int)hi - 1;
}

/*
 * Thread @tid runs its own share front to back, then helps the others
 * from their backs.  Loops index their work in the order of the data
 * (image, rows, then channel panels), so a thread keeps to the same part
 * of the planes from one layer to the next and reads what it wrote,
 * while a thread that falls behind (preempted, or slower) is still
 * relieved of its remaining indexes.
 */
static void run_items(int tid)
{
	struct npr_par_stats *st = pool.stats;
	uint64_t t0 = st ? now_ns() : 0, cnt = 0;
	int i, o, nt = pool.nthreads;

	while ((i = take(&pool.share[tid], true)) >= 0) {
		pool.fn(pool.arg, i, tid);
		cnt++;
	}
	for (o = 1; o < nt; o++) {
		struct share *s = &pool.share[(tid + o) % nt];

		while ((i = take(s, false)) >= 0) {
			pool.fn(pool.arg, i, tid);
			cnt++;
		}
	}
	if (st && tid < NPR_PAR_STATS_MAX) {	/* slot tid: ours alone */
		st->late_ns[tid] += t0 - pool.t0;
		st->work_ns[tid] += now_ns() - t0;
		st->items[tid] += cnt;
	}
}

/**
 * npr_par_stats_attach() - count this thread's loops into @s
 * @s: zeroed by the caller when it wants; NULL detaches
 *
 * Context: thread-local; off (nothing timed) unless attached.
 *
 * Return: the struct attached before.
 */
struct npr_par_stats *npr_par_stats_attach(struct npr_par_stats *s)
{
	struct npr_par_stats *old = par_stats;

	par_stats = s;
	return old;
}

/* Join loop @id unless the caller has closed it (or moved on). */
static bool join_loop(unsigned int id)
{
	uint64_t t = atomic_load_explicit(&pool.join, memory_order_acquire);

	do {
		if ((t >> 32) != id || (t & JOIN_CLOSED))
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&pool.join, &t, t + 1,
							memory_order_acq_rel,
							memory_order_acquire));
	return true;
}

static void *worker(void *p)
{
	int tid = (int)(intptr_t)p;
	unsigned int seen = 0;

	in_loop = 1;
	for (;;) {
		unsigned int g = atomic_load_explicit(&pool.gen,
						      memory_order_acquire);
		uint64_t t0;

		if (g == seen) {
			unsigned int k;

			/*
			 * A PAUSE takes ~22 ns on Zen 5: look at the loop
			 * count after every one (checking only every 64, as
			 * before, noticed a loop 0.7 us late on average) and
			 * at the clock every 64 (~1.4 us).
			 */
			t0 = now_ns();
			for (k = 1; (g = atomic_load_explicit(&pool.gen,
					memory_order_acquire)) == seen; k++) {
				uint64_t dt;

				cpu_relax();
				if (k % 64)
					continue;
				dt = now_ns() - t0;
				if (dt > SPIN_NS)
					break;
				/* let other runnable threads in */
				if (dt > SPIN_NS / 8)
					sched_yield();
			}
		}
		if (g == seen) {
			atomic_fetch_add(&pool.sleepers, 1);
			while (atomic_load(&pool.gen) == seen)
				futex(&pool.gen, FUTEX_WAIT_PRIVATE, seen);
			atomic_fetch_sub(&pool.sleepers, 1);
			g = atomic_load_explicit(&pool.gen,
						 memory_order_acquire);
		}
		seen = g;
		npr_scratch_trim();	/* between loops: none in use */
		if (tid < (int)(g & 0xff) && join_loop(g >> 8)) {
			/* the caller's control bits, stored before gen */
			unsigned int fp = npr_fpcr_get(), want = pool.fpcr;

			if (fp != want)
				npr_fpcr_set(want);
			run_items(tid);
			if (fp != want)
				npr_fpcr_set(fp);
			atomic_fetch_add_explicit(&pool.done, 1,
						  memory_order_release);
		}
	}
	return NULL;
}

/*
 * A child of fork() has none of the workers: it runs every loop alone
 * (the pool is not rebuilt; a forked child usually exec()s or exits).
 */
static void pool_atfork_child(void)
{
	pool.nworkers = 0;
	pthread_mutex_init(&pool.busy, NULL);
}

static void pool_init(void)
{
	cpu_set_t set;
	int i, n = 1;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	if (n < 1)
		n = 1;
	if (n > POOL_MAX)
		n = POOL_MAX;
	pool.cpus = n;
	pthread_atfork(NULL, NULL, pool_atfork_child);
	for (i = 1; i < n; i++) {
		pthread_attr_t at;
		pthread_t t;

		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, worker, (void *)(intptr_t)i)) {
			pthread_attr_destroy(&at);
			break;
		}
		pthread_attr_destroy(&at);
		pool.nworkers++;
	}
}

/**
 * npr_pool_cpus() - the CPUs the process may use (the pool size, caller
 * included)
 *
 * The first call creates the pool: one worker per CPU of the process's
 * affinity mask, minus one (the calling thread).
 *
 * Return: the CPU count, 1 to 255.
 */
int npr_pool_cpus(void)
{
	pthread_once(&pool_once, pool_init);
	return pool.cpus;
}

/**
 * npr_par_set_limit() - most threads a parallel_for on this thread uses
 * @n: 0 for all of npr_pool_cpus(), 1 for serial; negative counts as 0
 *
 * Context: thread-local; the backend sets it per request around infer,
 * from INFERENCE_NUM_THREADS / PERFORMANCE_HINT.
 *
 * Return: the previous limit.
 */
int npr_par_set_limit(int n)
{
	int old = par_limit;

	par_limit = n < 0 ? 0 : n;
	return old;
}

/**
 * npr_par_threads() - the threads a parallel_for started here would use
 *
 * Context: any thread; 1 inside a loop body and on a pool worker (nested
 * loops run serially).
 *
 * Return: the pool size, capped by npr_par_set_limit() and by the workers
 * actually started (caller included); >= 1.
 */
int npr_par_threads(void)
{
	int n = npr_pool_cpus();

	if (in_loop)
		return 1;
	if (par_limit && par_limit < n)
		n = par_limit;
	if (n > pool.nworkers + 1)
		n = pool.nworkers + 1;
	return n;
}

/**
 * npr_parallel_for() - run fn(arg, i, tid) for every i in [0, n)
 * @n: iterations
 * @fn: the body; must not fail (record failures in @arg)
 * @arg: passed through
 *
 * Returns when every iteration has finished.  Uses at most
 * npr_par_threads() threads; tid < that number.  If the pool is busy with
 * another caller's loop, runs every iteration on the calling thread.
 *
 * Context: any thread; reentrant (nested calls run serially).
 */
void npr_parallel_for(int n, npr_par_fn fn, void *arg)
{
	int nt = npr_par_threads(), i, joined;
	uint64_t t_wait;
	unsigned int id;

	if (nt > n)
		nt = n;
	if (nt <= 1 || pthread_mutex_trylock(&pool.busy)) {
		int old = in_loop;
		uint64_t t0 = par_stats && !old ? now_ns() : 0;

		in_loop = 1;
		for (i = 0; i < n; i++)
			fn(arg, i, 0);
		in_loop = old;
		if (t0) {
			uint64_t dt = now_ns() - t0;

			par_stats->loops++;
			par_stats->serial++;
			par_stats->span_ns += dt;
			par_stats->work_ns[0] += dt;
			par_stats->items[0] += n > 0 ? n : 0;
		}
		return;
	}
	pool.fn = fn;
	pool.arg = arg;
	pool.n = n;
	pool.nthreads = nt;
	pool.fpcr = npr_fpcr_get();
	pool.stats = par_stats;
	if (pool.stats)
		pool.t0 = now_ns();
	for (i = 0; i < nt; i++) {
		uint64_t lo = (uint64_t)n * i / nt, hi = (uint64_t)n * (i + 1) / nt;

		atomic_store_explicit(&pool.share[i].w, hi << 32 | lo,
				      memory_order_relaxed);
	}
	atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
	id = ((atomic_load(&pool.gen) >> 8) + 1) & 0xffffff;
	atomic_store_explicit(&pool.join, (uint64_t)id << 32,
			      memory_order_relaxed);
	atomic_store_explicit(&pool.gen, id << 8 | nt, memory_order_release);
	if (atomic_load(&pool.sleepers))
		futex(&pool.gen, FUTEX_WAKE_PRIVATE, INT_MAX);
	in_loop = 1;
	run_items(0);
	in_loop = 0;
	/* every index is taken: wait only for the workers that took some */
	joined = (int)(atomic_fetch_or_explicit(&pool.join, JOIN_CLOSED,
						memory_order_acq_rel) &
		       (JOIN_CLOSED - 1));
	t_wait = pool.stats ? now_ns() : 0;
	/* spin briefly, then yield: a preempted worker needs our CPU */
	for (i = 0; atomic_load_explicit(&pool.done, memory_order_acquire) <
		    joined; i++) {
		if (i < 2000)
			cpu_relax();
		else
			sched_yield();
	}
	if (pool.stats) {
		uint64_t t1 = now_ns();

		pool.stats->loops++;
		pool.stats->wait_ns += t1 - t_wait;
		pool.stats->span_ns += t1 - pool.t0;
		pool.stats = NULL;
	}
	pthread_mutex_unlock(&pool.busy);
}
