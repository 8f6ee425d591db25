// SPDX-License-Identifier: MIT
/*
 * The wrappers of selftests/fault.h.  Linked with --wrap=NAME, every
 * reference to NAME in the program and the static library reaches
 * __wrap_NAME here, which counts the call against this thread's armed
 * fault and either fails it as the system would (NULL and ENOMEM for
 * memory, -1 and EMFILE for a descriptor, EIO for a read, ENOSPC for a
 * write, MAP_FAILED and ENOMEM for mmap, -ENOMEM for io_uring) or calls
 * the real function, __real_NAME.  Calls made inside libc, libxml2 or
 * protobuf-c are not references of ours and are never counted.  The
 * allocators and free() also keep the table of live blocks that
 * fault_live() counts: a block made by the program or the library and not
 * freed after an operation is a leak, whatever libc and libxml2 cache.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault.h"

/*
 * The live blocks of the wrapped allocators, by address: a table with
 * linear probing (deletion shifts back), under one lock.  A block records
 * the order it was made in and its caller, so a leak can be named.
 */
#define LIVE_BITS	20
#define LIVE_SIZE	(1u << LIVE_BITS)

struct live {
	void *p;
	size_t n;
	unsigned long seq;
	void *caller;
};

static struct live live[LIVE_SIZE];
static unsigned long live_count, live_seq;
static size_t live_bytes;
static bool live_full;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(const void *p)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >>
			(64 - LIVE_BITS));
}

static void track(void *p, size_t n, void *caller)
{
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&live_lock);
	if (live_count >= LIVE_SIZE / 2) {
		live_full = true;
		pthread_mutex_unlock(&live_lock);
		return;
	}
	for (i = slot_of(p); live[i].p; i = (i + 1) & (LIVE_SIZE - 1))
		;
	live[i] = (struct live){ p, n, ++live_seq, caller };
	live_count++;
	live_bytes += n;
	pthread_mutex_unlock(&live_lock);
}

static void untrack(void *p)
{
	size_t i, j, k;

	if (!p)
		return;
	pthread_mutex_lock(&live_lock);
	for (i = slot_of(p); live[i].p && live[i].p != p;
	     i = (i + 1) & (LIVE_SIZE - 1))
		;
	if (live[i].p) {
		live_count--;
		live_bytes -= live[i].n;
		live[i].p = NULL;
		/* shift back the entries that probed past the hole */
		for (j = (i + 1) & (LIVE_SIZE - 1); live[j].p;
		     j = (j + 1) & (LIVE_SIZE - 1)) {
			k = slot_of(live[j].p);
			if ((j > i && (k <= i || k > j)) ||
			    (j < i && (k <= i && k > j))) {
				live[i] = live[j];
				live[j].p = NULL;
				i = j;
			}
		}
	}
	pthread_mutex_unlock(&live_lock);
}

long fault_live(size_t *bytes, unsigned long *seq)
{
	long n;

	pthread_mutex_lock(&live_lock);
	n = live_full ? -1 : (long)live_count;
	if (bytes)
		*bytes = live_bytes;
	if (seq)
		*seq = live_seq;
	pthread_mutex_unlock(&live_lock);
	return n;
}

int fault_live_since(unsigned long seq, void **callers, size_t *sizes,
		     int max)
{
	int found = 0;
	size_t i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < LIVE_SIZE; i++) {
		if (!live[i].p || live[i].seq <= seq)
			continue;
		if (found < max) {
			callers[found] = live[i].caller;
			sizes[found] = live[i].n;
		}
		found++;
	}
	pthread_mutex_unlock(&live_lock);
	return found;
}

static __thread unsigned int armed_nth, armed_mask;
static __thread unsigned long calls;
static __thread bool fired;
static __thread const char *site = "";

void fault_arm(unsigned int nth, unsigned int mask)
{
	armed_nth = nth;
	armed_mask = nth ? mask : 0;
	calls = 0;
	fired = false;
	site = "";
}

bool fault_disarm(void)
{
	armed_nth = 0;
	armed_mask = 0;
	return fired;
}

const char *fault_site(void)
{
	return site;
}

unsigned long fault_calls(void)
{
	return calls;
}

/* Count a call of class @cls; true if it is the one to fail. */
static bool fail(unsigned int cls, const char *name, int err)
{
	if (!(armed_mask & cls))
		return false;
	calls++;
	if (calls != armed_nth)
		return false;
	armed_mask = 0;
	fired = true;
	site = name;
	if (getenv("NPR_FAULT_BACKTRACE")) {
		void *bt[32];

		backtrace_symbols_fd(bt, backtrace(bt, 32), 2);
	}
	errno = err;
	return true;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **s, const char *fmt, va_list ap);
int __real_open(const char *path, int flags, ...);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
FILE *__real_fopen(const char *path, const char *mode);
int __real_mkstemp(char *tmpl);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_memfd_create(const char *name, unsigned int flags);
void *__real_mmap(void *addr, size_t n, int prot, int flags, int fd,
		  off_t off);
int __real_io_uring_queue_init(unsigned int entries, struct io_uring *ring,
			       unsigned int flags);

#define CALLER	__builtin_return_address(0)

void __real_free(void *p);
void __wrap_free(void *p);
void __wrap_free(void *p)
{
	untrack(p);
	__real_free(p);
}

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	void *p;

	if (fail(FAULT_ALLOC, "malloc", ENOMEM))
		return NULL;
	p = __real_malloc(n);
	track(p, n, CALLER);
	return p;
}

void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
	void *p;

	if (fail(FAULT_ALLOC, "calloc", ENOMEM))
		return NULL;
	p = __real_calloc(n, size);
	track(p, n * size, CALLER);
	return p;
}

void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
	void *q;

	if (fail(FAULT_ALLOC, "realloc", ENOMEM))
		return NULL;
	q = __real_realloc(p, n);
	if (q || !n) {
		untrack(p);
		track(q, n, CALLER);
	}
	return q;
}

int __wrap_posix_memalign(void **p, size_t align, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	int err;

	if (fail(FAULT_ALLOC, "posix_memalign", ENOMEM))
		return ENOMEM;
	err = __real_posix_memalign(p, align, n);
	if (!err)
		track(*p, n, CALLER);
	return err;
}

char *__wrap_strdup(const char *s);
char *__wrap_strdup(const char *s)
{
	char *p;

	if (fail(FAULT_ALLOC, "strdup", ENOMEM))
		return NULL;
	p = __real_strdup(s);
	track(p, p ? strlen(p) + 1 : 0, CALLER);
	return p;
}

char *__wrap_strndup(const char *s, size_t n);
char *__wrap_strndup(const char *s, size_t n)
{
	char *p;

	if (fail(FAULT_ALLOC, "strndup", ENOMEM))
		return NULL;
	p = __real_strndup(s, n);
	track(p, p ? strlen(p) + 1 : 0, CALLER);
	return p;
}

int __wrap_vasprintf(char **s, const char *fmt, va_list ap);
int __wrap_vasprintf(char **s, const char *fmt, va_list ap)
{
	int ret;

	if (fail(FAULT_ALLOC, "vasprintf", ENOMEM))
		return -1;
	ret = __real_vasprintf(s, fmt, ap);
	if (ret >= 0)
		track(*s, ret + 1, CALLER);
	return ret;
}

int __wrap_asprintf(char **s, const char *fmt, ...);
int __wrap_asprintf(char **s, const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (fail(FAULT_ALLOC, "asprintf", ENOMEM))
		return -1;
	va_start(ap, fmt);
	ret = __real_vasprintf(s, fmt, ap);
	va_end(ap);
	if (ret >= 0)
		track(*s, ret + 1, CALLER);
	return ret;
}

int __wrap_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (fail(FAULT_FILE, "open", EMFILE))
		return -1;
	return __real_open(path, flags, mode);
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	return fail(FAULT_FILE, "pread", EIO) ? -1 :
	       __real_pread(fd, buf, n, off);
}

FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode)
{
	return fail(FAULT_FILE, "fopen", EMFILE) ? NULL :
	       __real_fopen(path, mode);
}

int __wrap_mkstemp(char *tmpl);
int __wrap_mkstemp(char *tmpl)
{
	return fail(FAULT_FILE, "mkstemp", EMFILE) ? -1 : __real_mkstemp(tmpl);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	return fail(FAULT_FILE, "write", ENOSPC) ? -1 :
	       __real_write(fd, buf, n);
}

int __wrap_memfd_create(const char *name, unsigned int flags);
int __wrap_memfd_create(const char *name, unsigned int flags)
{
	return fail(FAULT_FILE, "memfd_create", EMFILE) ? -1 :
	       __real_memfd_create(name, flags);
}

void *__wrap_mmap(void *addr, size_t n, int prot, int flags, int fd,
		  off_t off);
void *__wrap_mmap(void *addr, size_t n, int prot, int flags, int fd,
		  off_t off)
{
	return fail(FAULT_MMAP, "mmap", ENOMEM) ? MAP_FAILED :
	       __real_mmap(addr, n, prot, flags, fd, off);
}

int __wrap_io_uring_queue_init(unsigned int entries, struct io_uring *ring,
			       unsigned int flags);
int __wrap_io_uring_queue_init(unsigned int entries, struct io_uring *ring,
			       unsigned int flags)
{
	return fail(FAULT_URING, "io_uring_queue_init", ENOMEM) ? -ENOMEM :
	       __real_io_uring_queue_init(entries, ring, flags);
}
