// SPDX-License-Identifier: MIT
/*
 * Compiled-model blobs: the checksum (lib/store/blob.c says where it is
 * kept) and the thread that takes it beside an import.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "graph/graph.h"
#include "store.h"

/*
 * The hash: sixty-four independent multiply-rotate lanes over 64-bit
 * words, then the tail: every step is invertible, so any change confined
 * to one word (every single-bit flip) changes the result.  The lanes are independent
 * so that the compiler vectorises them; on x86-64 a second build for
 * AVX-512 (64-bit vector multiplies) runs at several times memory speed:
 * eight vectors of lanes, so that the multiplies' latency is hidden (35
 * us for 2.6 MB in the cache with sixteen lanes, 26 us with 64).  Both
 * builds compute the same value.
 */
#define HASH_LANES	64
#define HASH_BLOCK	(8 * HASH_LANES)	/* bytes per step of the lanes */
#define HASH_K		0x9e3779b97f4a7c15ull

/* The lanes over @n bytes (a multiple of HASH_BLOCK) of @b, from @hp. */
#define HASH_LANES_BODY							\
	uint64_t h[HASH_LANES], w;					\
	size_t i;							\
	int l;								\
									\
	memcpy(h, hp, sizeof(h));					\
	for (i = 0; i + HASH_BLOCK <= n; i += HASH_BLOCK)		\
		for (l = 0; l < HASH_LANES; l++) {			\
			memcpy(&w, b + i + 8 * l, 8);			\
			h[l] = (h[l] ^ w) * HASH_K;			\
			h[l] = (h[l] << 29) | (h[l] >> 35);		\
		}							\
	memcpy(hp, h, sizeof(h))

static void lanes_generic(uint64_t *hp, const unsigned char *b, size_t n)
{
	HASH_LANES_BODY;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq")))
static void lanes_avx512(uint64_t *hp, const unsigned char *b, size_t n)
{
	HASH_LANES_BODY;
}
#endif

static void hash_init(uint64_t *h)
{
	int l;

	for (l = 0; l < HASH_LANES; l++)
		h[l] = l + 1;
}

/* The lanes over the whole blocks of @n bytes at @b. */
static void hash_lanes(uint64_t *h, const unsigned char *b, size_t n)
{
	n -= n % HASH_BLOCK;
#if defined(__x86_64__)
	if (n >= 4096) {
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512dq")) {
			lanes_avx512(h, b, n);
			return;
		}
	}
#endif
	lanes_generic(h, b, n);
}

/* The value: the lanes, the size and the bytes past the last block. */
static uint64_t hash_final(const uint64_t *h, const unsigned char *b,
			   size_t n)
{
	uint64_t r = n;
	size_t i;
	int l;

	for (l = 0; l < HASH_LANES; l++)
		r = ((r ^ h[l]) * HASH_K) ^ (r >> 31);
	for (i = n - n % HASH_BLOCK; i < n; i++)
		r = ((r ^ b[i]) * HASH_K) ^ (r >> 29);
	return r ^ (r >> 33);
}

/**
 * npr_blob_hash() - the hash of a byte range
 * @p: data.
 * @n: its size.
 *
 * The checksum of compiled-model blobs and cache entries (the lanes
 * above).  Any thread.
 *
 * Return: the 64-bit hash.
 */
uint64_t npr_blob_hash(const void *p, size_t n)
{
	uint64_t h[HASH_LANES];

	hash_init(h);
	hash_lanes(h, p, n);
	return hash_final(h, p, n);
}

/* The header's checksum of the payload's hash @a. */
static uint64_t checksum_of(const unsigned char *h, uint64_t a)
{
	uint64_t b = npr_blob_hash(h, 88);

	return a ^ ((b << 17) | (b >> 47));
}

/**
 * npr_blob_checksum() - the checksum a compiled-model blob's header holds
 * @h: the blob: its header, then @psize bytes of payload.
 * @psize: the payload's size.
 *
 * Return: the hash of the payload mixed with that of the header bytes up
 * to the checksum field.
 */
uint64_t npr_blob_checksum(const unsigned char *h, uint64_t psize)
{
	return checksum_of(h, npr_blob_hash(h + NPR_BLOB_HEADER, psize));
}

/*
 * The checksum beside the import.  A cache hit's import reads the graph
 * and the backend plans it while a hashing thread (started on first use,
 * one per process, at the lowest priority) hashes the entry, a chunk at
 * a time, publishing the lanes after each chunk.  When the import is
 * done the caller takes what is left: the whole job if the thread has
 * not picked it up, else the rest after its last published chunk.  The
 * hand-over is lock-free, so the caller never waits for the thread: one
 * that gets no CPU (a busy machine) costs the hit nothing but the
 * posting.  A mismatch fails the hit as before.  Import checks every
 * count, index and string against the blob's bounds, so reading a
 * corrupt entry before its sum is known is safe.  One job at a time: a
 * second hit meanwhile, or a process whose thread could not be started
 * (or a forked child), hashes inline.
 *
 * The job's state word is (published chunks << 1 | taken).  The thread
 * writes chunk k + 1's lanes into the checkpoint k + 1 does not share
 * with k, then publishes with a compare-and-swap that fails once the
 * caller has taken the job; the caller sets taken and reads the
 * checkpoint of the count it got, which the thread no longer writes.
 */
#define SUM_CHUNK	(128u << 10)	/* bytes hashed at once */
#define SUM_ASYNC_MIN	(2 * SUM_CHUNK)	/* smaller entries: inline */

struct npr_blob_sum {
	struct npr_weights *mem;	/* a reference while the thread may read */
	const unsigned char *p;	/* the payload */
	size_t n;
	struct {
		uint64_t lanes[HASH_LANES];	/* over p[0, done) */
		size_t done;
	} ckpt[2];
	uint64_t state;		/* atomic: published << 1 | taken */
	int refs;		/* atomic: the caller's and the thread's */
};

static struct npr_blob_sum *sum_slot;	/* atomic: the job to pick up */
static int sum_seq;			/* atomic: futex word, bumped per post */
static pthread_once_t sum_once = PTHREAD_ONCE_INIT;
static bool sum_thread;			/* the hashing thread runs */

static void sum_put(struct npr_blob_sum *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	npr_weights_put(s->mem);
	free(s);
}

static void sum_run(struct npr_blob_sum *s)
{
	uint64_t h[HASH_LANES], k = 0;
	size_t off = 0;

	memcpy(h, s->ckpt[0].lanes, sizeof(h));
	while (off < s->n) {
		size_t len = s->n - off < SUM_CHUNK ? s->n - off : SUM_CHUNK;
		uint64_t expect = k << 1;

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) & 1)
			break;		/* taken */
		hash_lanes(h, s->p + off, len);
		off += len - len % HASH_BLOCK;
		memcpy(s->ckpt[(k + 1) & 1].lanes, h, sizeof(h));
		s->ckpt[(k + 1) & 1].done = off;
		if (!__atomic_compare_exchange_n(&s->state, &expect,
						 (k + 1) << 1, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			break;		/* taken meanwhile */
		k++;
		if (len < SUM_CHUNK)
			break;
	}
	sum_put(s);
}

static void *sum_main(void *arg)
{
	(void)arg;
	/* the lowest priority: a CPU nothing else wants */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	for (;;) {
		int seq = __atomic_load_n(&sum_seq, __ATOMIC_ACQUIRE);
		struct npr_blob_sum *s = __atomic_exchange_n(&sum_slot, NULL,
							 __ATOMIC_ACQ_REL);

		if (s)
			sum_run(s);
		else
			syscall(SYS_futex, &sum_seq, FUTEX_WAIT_PRIVATE, seq,
				NULL, NULL, 0);
	}
	return NULL;
}

/* the child of a fork has no hashing thread: it hashes inline */
static void sum_child(void)
{
	sum_thread = false;
	__atomic_store_n(&sum_slot, NULL, __ATOMIC_RELAXED);
}

static void sum_init(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;

	if (pthread_atfork(NULL, NULL, sum_child))
		return;
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	/* the hashing thread takes no signals of the process */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sum_thread = !pthread_create(&t, &attr, sum_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/**
 * npr_blob_sum_start() - hand a blob's payload to the hashing thread
 * @mem: the blob, its header checked; the job holds a reference.
 *
 * Context: any thread; one job at a time in the process (see above).
 * Return: the job, to finish with npr_blob_sum_finish(); NULL when the
 * payload is small, the thread is busy or absent: it will be hashed
 * inline.
 */
struct npr_blob_sum *npr_blob_sum_start(struct npr_weights *mem)
{
	struct npr_blob_sum *s, *none = NULL;

	if (mem->size - NPR_BLOB_HEADER < SUM_ASYNC_MIN)
		return NULL;
	pthread_once(&sum_once, sum_init);
	if (!sum_thread || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->mem = npr_weights_get(mem);
	s->p = (const unsigned char *)mem->data + NPR_BLOB_HEADER;
	s->n = mem->size - NPR_BLOB_HEADER;
	hash_init(s->ckpt[0].lanes);
	s->refs = 2;		/* ours, and the thread's once it picks it */
	if (!__atomic_compare_exchange_n(&sum_slot, &none, s, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		npr_weights_put(s->mem);	/* another hit's job is waiting */
		free(s);
		return NULL;
	}
	__atomic_add_fetch(&sum_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &sum_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return s;
}

/**
 * npr_blob_sum_finish() - the checksum of a blob whose hash was started
 * @s: what npr_blob_sum_start() returned (NULL: hash it all here);
 *     released.
 * @mem: the blob.
 *
 * Takes what the hashing thread has done of @s and hashes the rest; it
 * never waits for the thread.
 *
 * Return: the checksum, as npr_blob_checksum().
 */
uint64_t npr_blob_sum_finish(struct npr_blob_sum *s,
			     const struct npr_weights *mem)
{
	const unsigned char *h = mem->data;
	uint64_t lanes[HASH_LANES], k;
	struct npr_blob_sum *mine = s;
	size_t done;

	if (!s)
		return npr_blob_checksum(h, mem->size - NPR_BLOB_HEADER);
	if (__atomic_compare_exchange_n(&sum_slot, &mine, NULL, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		sum_put(s);	/* not picked up: the thread's share too */
	k = __atomic_fetch_or(&s->state, 1, __ATOMIC_ACQ_REL) >> 1;
	memcpy(lanes, s->ckpt[k & 1].lanes, sizeof(lanes));
	done = k ? s->ckpt[k & 1].done : 0;
	sum_put(s);
	hash_lanes(lanes, h + NPR_BLOB_HEADER + done,
		   mem->size - NPR_BLOB_HEADER - done);
	return checksum_of(h, hash_final(lanes, h + NPR_BLOB_HEADER,
					 mem->size - NPR_BLOB_HEADER));
}
