/* SPDX-License-Identifier: MIT */
/*
 * Fault injection for tests, after the kernel's fail-nth: a thread arms a
 * count N, runs an operation, and the Nth call the library makes to one
 * of the wrapped functions (an allocation, a file open or read, an mmap,
 * an io_uring setup) fails as the system would fail it; then the thread
 * reads back whether it fired.  selftests/fault.c defines the wrappers;
 * a program gets them by linking fault.o with the linker's --wrap for
 * each function (FAULT_LDFLAGS in Kbuild), so the library itself is
 * built and costs the same as always and only the program's link
 * differs.  One shot: after firing, the thread's counter is disarmed.
 */
#ifndef NPR_SELFTEST_FAULT_H
#define NPR_SELFTEST_FAULT_H

#include <stdbool.h>
#include <stddef.h>

/* What a site is; fault_arm() counts only the classes in its mask. */
enum fault_class {
	FAULT_ALLOC	= 1 << 0,	/* malloc calloc realloc posix_memalign
					 * strdup strndup asprintf vasprintf */
	FAULT_FILE	= 1 << 1,	/* open pread fopen mkstemp write
					 * memfd_create */
	FAULT_MMAP	= 1 << 2,	/* mmap */
	FAULT_URING	= 1 << 3,	/* io_uring_queue_init */
	FAULT_ALL	= 0xf,
};

/**
 * fault_arm() - make this thread's @nth call of the @mask classes fail
 * @nth: 1 for the next call; 0 disarms.
 * @mask: enum fault_class bits.
 */
void fault_arm(unsigned int nth, unsigned int mask);

/**
 * fault_disarm() - stop counting
 *
 * Return: true if the armed fault fired since fault_arm().
 */
bool fault_disarm(void);

/**
 * fault_site() - what the call that failed was
 *
 * Return: the wrapped function's name, "" if none fired.
 */
const char *fault_site(void);

/**
 * fault_calls() - calls of the armed classes counted since fault_arm()
 *
 * Return: their number, the one that failed included.
 */
unsigned long fault_calls(void);

/**
 * fault_live() - the blocks the wrapped allocators made and free() has
 * not freed yet, in every thread
 * @bytes: Out, if not NULL. Their size.
 * @seq: Out, if not NULL. The number of blocks made so far, for
 *       fault_live_since().
 *
 * Return: their number, or -1 if there were too many to keep track of.
 */
long fault_live(size_t *bytes, unsigned long *seq);

/**
 * fault_live_since() - the live blocks made after fault_live() gave @seq
 * @seq: the mark.
 * @callers: Out. The return addresses of up to @max of their allocations.
 * @sizes: Out. Their sizes.
 * @max: room in @callers and @sizes.
 *
 * Return: how many there are (possibly more than @max).
 */
int fault_live_since(unsigned long seq, void **callers, size_t *sizes,
		     int max);

#endif /* NPR_SELFTEST_FAULT_H */
