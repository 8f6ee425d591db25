/* SPDX-License-Identifier: MIT */
/*
 * ThreadSanitizer annotations for the orderings the kernel makes.
 *
 * TSan sees the happens-before edges of mutexes, atomics and the syscalls
 * it intercepts, not those io_uring makes: a worker that writes a job's
 * outputs and then posts its completion into the caller's ring with
 * IORING_OP_MSG_RING orders the write before the caller's read of the
 * CQE, but TSan only sees two threads touching the same memory without a
 * lock.  The side that writes calls npr_tsan_release() on a key before
 * the kernel carries the event; the side that receives it calls
 * npr_tsan_acquire() on the same key once the event is there.
 *
 * In a build with -fsanitize=thread (gcc defines __SANITIZE_THREAD__,
 * clang has __has_feature(thread_sanitizer)) these call the sanitizer's
 * interface; in every other build they are empty and cost nothing.
 */
#ifndef NPR_TSAN_H
#define NPR_TSAN_H

#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define NPR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NPR_TSAN 1
#endif
#endif

/* keys of ring completions: one per user_data modulo this */
#define NPR_TSAN_CQE_KEYS 1024

#ifdef NPR_TSAN
/* the sanitizer runtime's (its sanitizer/tsan_interface.h) */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

/* lib/ring/ring.c; an address per key, nothing stored in it */
extern char npr_tsan_cqe_keys[NPR_TSAN_CQE_KEYS];

static inline void npr_tsan_acquire(const void *key)
{
	__tsan_acquire((void *)key);
}

static inline void npr_tsan_release(const void *key)
{
	__tsan_release((void *)key);
}

static inline const void *npr_tsan_cqe_key(uint64_t user_data)
{
	return &npr_tsan_cqe_keys[user_data % NPR_TSAN_CQE_KEYS];
}
#else
static inline void npr_tsan_acquire(const void *key)
{
	(void)key;
}

static inline void npr_tsan_release(const void *key)
{
	(void)key;
}

static inline const void *npr_tsan_cqe_key(uint64_t user_data)
{
	(void)user_data;
	return 0;
}
#endif

/*
 * npr_tsan_cqe_posted() and npr_tsan_cqe_reaped(): the completion of the
 * job with @user_data is about to go into a ring through the kernel
 * (called by the thread that ran the job, after its last write), and a
 * CQE with @user_data was read from that ring (called before the job's
 * outputs are read).
 */
static inline void npr_tsan_cqe_posted(uint64_t user_data)
{
	npr_tsan_release(npr_tsan_cqe_key(user_data));
}

static inline void npr_tsan_cqe_reaped(uint64_t user_data)
{
	npr_tsan_acquire(npr_tsan_cqe_key(user_data));
}

#endif /* NPR_TSAN_H */
