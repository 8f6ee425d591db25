// SPDX-License-Identifier: MIT
/*
 * Packed SGEMM: blocking driver, packing, the portable micro-kernel and
 * the runtime choice of ISA.  The AVX-512 and AVX2 micro-kernels live in
 * ref/arch/x86/gemm_avx512.c and gemm_avx2.c, the only objects built
 * with those -m flags; this file runs on any x86-64 (or other) CPU.
 *
 * Blocking (per thread): columns in blocks of NC, depth in blocks of KC.
 * For each (NC, KC) block, B is packed into NR-column panels (KC x NC,
 * 512 KiB at most: stays in L2), then every MR-row micro-panel of the
 * prepacked A (MR x KC, 8 KiB: stays in L1) sweeps the B panels.  The
 * epilogue runs inside the micro-kernel on the last KC block, while the C
 * tile is still in registers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "sys.h"
#include "gemm.h"
#include "threads.h"

#define KC	256
#define NC	NPR_PACK_NC

static void kern_scalar(int64_t kc, const float *a, const float *b, float *c,
			int64_t ldc, int m, int n, bool acc, bool last,
			const struct npr_gemm_epi *e)
{
	float t[4][8] = { { 0 } };
	int64_t k;
	int i, j;

	for (k = 0; k < kc; k++, a += 4, b += 8)
		for (i = 0; i < 4; i++)
			for (j = 0; j < 8; j++)
				t[i][j] += a[i] * b[j];
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			float v = t[i][j] + (acc ? c[i * ldc + j] : 0.0f);

			c[i * ldc + j] = last ? epi_apply(e, v, i, j) : v;
		}
}

static const struct npr_gemm_kern kern_scalar_def = {
	.name = "scalar", .mr = 4, .nr = 8, .fn = kern_scalar,
};

static bool cpu_has(const char *isa)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (!strcmp(isa, "avx512"))
		return __builtin_cpu_supports("avx512f");
	if (!strcmp(isa, "avx2"))
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma");
#endif
	return !strcmp(isa, "scalar");
}

/**
 * npr_gemm_kern_get() - a micro-kernel by name
 * @name: "avx512", "avx2" (with FMA) or "scalar"
 *
 * Return: the kernel, or NULL if this CPU lacks its ISA (by CPUID) or
 * @name is none of these.
 */
const struct npr_gemm_kern *npr_gemm_kern_get(const char *name)
{
	if (!cpu_has(name))
		return NULL;
#if defined(__x86_64__)
	if (!strcmp(name, "avx512"))
		return &npr_gemm_kern_avx512;
	if (!strcmp(name, "avx2"))
		return &npr_gemm_kern_avx2;
#endif
	return &kern_scalar_def;
}

/**
 * npr_gemm_kern_best() - the fastest micro-kernel this CPU runs
 *
 * NPR_GEMM_ISA=avx512|avx2|scalar picks one instead, if the CPU has it.
 * The first call chooses, later calls return the same kernel.
 *
 * Return: the kernel (never NULL: "scalar" runs everywhere).
 */
const struct npr_gemm_kern *npr_gemm_kern_best(void)
{
	static const struct npr_gemm_kern *best;
	const char *env;

	if (best)
		return best;
	env = npr_env(NPR_ENV_GEMM_ISA);
	if (env)
		best = npr_gemm_kern_get(env);
	if (!best)
		best = npr_gemm_kern_get("avx512");
	if (!best)
		best = npr_gemm_kern_get("avx2");
	if (!best)
		best = &kern_scalar_def;
	return best;
}

/* packed panels: npr_alloc() (64-byte aligned, large ones on huge pages) */
static void *alloc64(size_t bytes)
{
	return npr_alloc(bytes);
}

/*
 * One full micro-panel of A: @mr rows of @kc floats (row stride @lda) to
 * kc x mr, k-major.  The transposition goes through 4 x 4 blocks where
 * the baseline ISA has them (SSE2 on x86-64; rows past a multiple of
 * four a float at a time): reading row by row and
 * writing column by column a float at a time made the packing of a
 * 1024 x 1024 A 5% of npr_sgemm()'s time.
 */
static void pack_a_panel(const float *a, int64_t lda, int64_t kc, int mr,
			 float *d)
{
	int64_t k = 0;
	int r;

#if defined(__SSE2__)
	int r4 = mr & ~3;

	if (r4) {
		for (; k + 4 <= kc; k += 4) {
			for (r = 0; r < r4; r += 4) {
				const float *s = a + r * lda + k;
				__m128 r0 = _mm_loadu_ps(s);
				__m128 r1 = _mm_loadu_ps(s + lda);
				__m128 r2 = _mm_loadu_ps(s + 2 * lda);
				__m128 r3 = _mm_loadu_ps(s + 3 * lda);

				_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
				_mm_storeu_ps(d + k * mr + r, r0);
				_mm_storeu_ps(d + (k + 1) * mr + r, r1);
				_mm_storeu_ps(d + (k + 2) * mr + r, r2);
				_mm_storeu_ps(d + (k + 3) * mr + r, r3);
			}
			for (; r < mr; r++) {
				const float *s = a + r * lda + k;

				d[k * mr + r] = s[0];
				d[(k + 1) * mr + r] = s[1];
				d[(k + 2) * mr + r] = s[2];
				d[(k + 3) * mr + r] = s[3];
			}
		}
	}
#endif
	for (; k < kc; k++)
		for (r = 0; r < mr; r++)
			d[k * mr + r] = a[r * lda + k];
}

/**
 * npr_gemm_a_pack() - pack row-major A (row stride @lda) for @kern
 * @pa: out: the packed operand
 * @kern: the micro-kernel it will run with
 * @A: M x K floats, row-major
 * @M: rows of A
 * @K: columns of A
 * @lda: row stride of @A in floats
 *
 * Layout: for each KC block starting at k0 (length kc), for each MR-row
 * micro-panel i: kc x MR floats, k-major, at k0 * Mp + i * MR * kc; the
 * rows from M to Mp are zeros.
 *
 * Return: 0 or -ENOMEM.  The caller frees with npr_gemm_a_free().
 */
int npr_gemm_a_pack(struct npr_gemm_a *pa, const struct npr_gemm_kern *kern,
		    const float *A, int64_t M, int64_t K, int64_t lda)
{
	int mr = kern->mr;
	int64_t Mp = (M + mr - 1) / mr * mr, k0, i, k, r;

	pa->kern = kern;
	pa->M = M;
	pa->K = K;
	pa->Mp = Mp;
	pa->data = alloc64(sizeof(float) * Mp * (K ? K : 1));
	if (!pa->data)
		return -ENOMEM;
	for (k0 = 0; k0 < K; k0 += KC) {
		int64_t kc = K - k0 < KC ? K - k0 : KC;

		for (i = 0; i < Mp; i += mr) {
			float *d = pa->data + k0 * Mp + i * kc;

			if (i + mr <= M) {
				pack_a_panel(A + i * lda + k0, lda, kc, mr, d);
				continue;
			}
			for (k = 0; k < kc; k++)
				for (r = 0; r < mr; r++)
					*d++ = i + r < M ?
					       A[(i + r) * lda + k0 + k] : 0.0f;
		}
	}
	return 0;
}

/**
 * npr_gemm_a_unpack() - write a packed A back in row-major order
 * @pa: the packed operand
 * @A: out: M x K floats
 * @lda: row stride of @A in floats
 *
 * The inverse of npr_gemm_a_pack().
 */
void npr_gemm_a_unpack(const struct npr_gemm_a *pa, float *A, int64_t lda)
{
	int mr = pa->kern->mr;
	int64_t k0, i, k, r;

	for (k0 = 0; k0 < pa->K; k0 += KC) {
		int64_t kc = pa->K - k0 < KC ? pa->K - k0 : KC;

		for (i = 0; i < pa->Mp; i += mr) {
			const float *d = pa->data + k0 * pa->Mp + i * kc;

			for (k = 0; k < kc; k++)
				for (r = 0; r < mr; r++, d++)
					if (i + r < pa->M)
						A[(i + r) * lda + k0 + k] = *d;
		}
	}
}

/**
 * npr_gemm_a_free() - free a packed A operand's data
 * @pa: the operand; pa->data becomes NULL, so a second call is harmless
 */
void npr_gemm_a_free(struct npr_gemm_a *pa)
{
	free(pa->data);
	pa->data = NULL;
}

/**
 * npr_gemm_pack_b_rm() - the npr_gemm_pack_b callback for a row-major B
 * @src: a struct npr_gemm_bsrc
 * @k0: the first row of B to pack
 * @kc: the number of rows
 * @j0: the first column
 * @nc: the number of columns
 * @nr: the panel width (the kernel's NR)
 * @dst: out: panels of @nr columns, kc x nr floats each, the last zero
 *       padded
 */
void npr_gemm_pack_b_rm(const void *src, int64_t k0, int64_t kc, int64_t j0,
			int64_t nc, int nr, float *dst)
{
	const struct npr_gemm_bsrc *s = src;
	int64_t j, k;

	for (j = 0; j < nc; j += nr) {
		int64_t w = nc - j < nr ? nc - j : nr;
		float *d = dst + j * kc;

		/*
		 * A whole panel of the usual widths copies with fixed-size
		 * moves: a call to memcpy() per 128-byte row cost as much
		 * as the copy.
		 */
		if (w == 32 && nr == 32) {
			for (k = 0; k < kc; k++, d += 32)
				memcpy(d, s->B + (k0 + k) * s->ldb + j0 + j,
				       sizeof(float) * 32);
			continue;
		}
		if (w == 16 && nr == 16) {
			for (k = 0; k < kc; k++, d += 16)
				memcpy(d, s->B + (k0 + k) * s->ldb + j0 + j,
				       sizeof(float) * 16);
			continue;
		}
		for (k = 0; k < kc; k++, d += nr) {
			const float *b = s->B + (k0 + k) * s->ldb + j0 + j;

			memcpy(d, b, sizeof(float) * w);
			if (w < nr)
				memset(d + w, 0, sizeof(float) * (nr - w));
		}
	}
}

/* Direct B: no packing; A micro-panel outer, B panels inner, per KC. */
static void gemm_part_direct(const struct npr_gemm_a *pa, int64_t m0,
			     int64_t m1, int64_t n0, int64_t n1,
			     const struct npr_gemm_bdirect *bd, float *C,
			     int64_t ldc, const struct npr_gemm_epi *e)
{
	const struct npr_gemm_kern *kn = pa->kern;
	int mr = kn->mr, nr = kn->nr;
	int64_t K = pa->K, jc, pc, ir, jr;
	struct npr_gemm_epi te;

	if (e)
		te = *e;
	for (jc = n0; jc < n1; jc += NC) {
		int64_t nc = n1 - jc < NC ? n1 - jc : NC;

		for (pc = 0; pc < K; pc += KC) {
			int64_t kc = K - pc < KC ? K - pc : KC;
			bool last = pc + KC >= K;

			/*
			 * A few rows of A (at most 32 KiB of it) but at least
			 * 64 deep: B panel outer, so each panel of B, read in
			 * place from L2, serves every row of A from L1
			 * (squeezenet1_1's 256 -> 32 1x1 layer read its 0.75
			 * MB input four times).  Shallower, the long runs of
			 * B rows the other order reads did better.
			 */
			if (kc >= 64 &&
			    (m1 - m0) * kc * (int64_t)sizeof(float) <= 32768) {
				for (jr = 0; jr < nc; jr += nr) {
					int n = nc - jr < nr ? (int)(nc - jr) : nr;

					for (ir = m0; ir < m1; ir += mr) {
						const float *a = pa->data + pc * pa->Mp +
								 ir * kc;
						int m = m1 - ir < mr ?
							(int)(m1 - ir) : mr;

						if (e) {
							te.bias = e->bias ?
								  e->bias + ir : NULL;
							if (e->res)
								te.res = e->res + ir * e->ldr +
									 jc + jr;
						}
						kn->fn_direct(kc, a, bd->b + jc + jr,
							      bd->off + pc,
							      C + ir * ldc + jc + jr,
							      ldc, m, n, pc > 0, last,
							      e ? &te : NULL);
					}
				}
				continue;
			}
			for (ir = m0; ir < m1; ir += mr) {
				const float *a = pa->data + pc * pa->Mp + ir * kc;
				int m = m1 - ir < mr ? (int)(m1 - ir) : mr;

				if (e)
					te.bias = e->bias ? e->bias + ir : NULL;
				for (jr = 0; jr < nc; jr += nr) {
					int n = nc - jr < nr ? (int)(nc - jr) : nr;

					if (e && e->res)
						te.res = e->res + ir * e->ldr + jc + jr;
					kn->fn_direct(kc, a, bd->b + jc + jr,
						      bd->off + pc,
						      C + ir * ldc + jc + jr,
						      ldc, m, n, pc > 0, last,
						      e ? &te : NULL);
				}
			}
		}
	}
}

/*
 * Thread-local scratch buffers (the packing buffer below, the
 * convolutions' padded copies) are freed when their thread exits: a
 * device thread of a driver, a pool worker.  Each thread's registered
 * slots hang off one key whose destructor frees them; it runs while the
 * thread's own storage is still there.
 *
 * They grow to the largest need of any model the thread ran, so they are
 * also let go once a compiled model is destroyed (npr_scratch_release()):
 * each thread frees its own at its next safe point (npr_scratch_trim()),
 * where none is in use, and the models still alive grow them again.
 */
#define SCRATCH_SLOTS	16

struct scratch {
	int n;
	unsigned int gen;
	float **slot[SCRATCH_SLOTS];
	size_t *cap[SCRATCH_SLOTS];
};

static _Atomic unsigned int scratch_gen;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_err;
static _Thread_local struct scratch scratch;

static void scratch_free(void *p)
{
	struct scratch *s = p;
	int i;

	for (i = 0; i < s->n; i++) {
		free(*s->slot[i]);
		*s->slot[i] = NULL;
		*s->cap[i] = 0;
	}
	s->n = 0;
}

static void scratch_key_init(void)
{
	scratch_key_err = pthread_key_create(&scratch_key, scratch_free);
}

/**
 * npr_free_at_thread_exit() - free a thread-local buffer when its thread
 * exits
 * @slot: the address of the calling thread's _Thread_local buffer pointer;
 *        *@slot is freed and set to NULL at thread exit
 * @cap: the address of its _Thread_local size, set to 0 then
 *
 * Call after allocating the buffer; once per slot is enough (a second call
 * does nothing).  A thread registers at most 16 slots; past that, or if
 * no thread-specific key can be created, the buffer is not freed at exit.
 * npr_scratch_trim() frees the registered buffers early.
 */
void npr_free_at_thread_exit(float **slot, size_t *cap)
{
	int i;

	for (i = 0; i < scratch.n; i++)
		if (scratch.slot[i] == slot)
			return;
	pthread_once(&scratch_once, scratch_key_init);
	if (scratch_key_err || scratch.n == SCRATCH_SLOTS)
		return;
	if (!scratch.n)
		scratch.gen = atomic_load_explicit(&scratch_gen,
						   memory_order_relaxed);
	scratch.slot[scratch.n] = slot;
	scratch.cap[scratch.n++] = cap;
	pthread_setspecific(scratch_key, &scratch);
}

/**
 * npr_scratch_release() - have every thread let its scratch buffers go
 *
 * Called when a compiled model is destroyed: the buffers sized for it are
 * freed by each thread at its next npr_scratch_trim().
 */
void npr_scratch_release(void)
{
	atomic_fetch_add_explicit(&scratch_gen, 1, memory_order_relaxed);
}

/**
 * npr_scratch_trim() - free the calling thread's scratch buffers if a
 * compiled model was destroyed since they were made
 *
 * Context: a point where the thread uses none of them: the start of an
 * inference, a pool worker between loops.  The owners see their size 0
 * and allocate again (a buffer whose contents are kept between calls
 * starts over, as after growing).
 */
void npr_scratch_trim(void)
{
	unsigned int g = atomic_load_explicit(&scratch_gen,
					      memory_order_relaxed);

	if (g == scratch.gen || !scratch.n)
		return;
	scratch.gen = g;
	scratch_free(&scratch);
	pthread_setspecific(scratch_key, NULL);
}

/**
 * npr_scratch() - a thread-local scratch buffer of at least @n floats
 * @buf: the calling thread's buffer (a _Thread_local variable of the
 *       caller)
 * @cap: its size in floats (_Thread_local too)
 * @n: floats needed
 *
 * Grows the buffer when it is smaller, without keeping its contents
 * (npr_alloc(): 64-byte aligned, on huge pages from 2 MiB), and has it
 * freed when the thread exits (npr_free_at_thread_exit()) or trims its
 * buffers (npr_scratch_trim()).
 *
 * Return: *@buf, or NULL without memory (*@cap is then 0).
 */
float *npr_scratch(float **buf, size_t *cap, size_t n)
{
	if (n > *cap) {
		free(*buf);
		*buf = npr_alloc(sizeof(float) * n);
		*cap = *buf ? n : 0;
		npr_free_at_thread_exit(buf, cap);
	}
	return *buf;
}

/* One thread's share: rows [m0, m1) and columns [n0, n1). */
static int gemm_part(const struct npr_gemm_a *pa, int64_t m0, int64_t m1,
		     int64_t n0, int64_t n1, npr_gemm_pack_b pack,
		     const void *bsrc, float *C, int64_t ldc,
		     const struct npr_gemm_epi *e)
{
	static _Thread_local float *bbuf;
	static _Thread_local size_t bcap;
	const struct npr_gemm_kern *kn = pa->kern;
	int mr = kn->mr, nr = kn->nr;
	int64_t K = pa->K, jc, pc, ir, jr;
	struct npr_gemm_epi te;

	if (!npr_scratch(&bbuf, &bcap, KC * (NC + 64)))
		return -ENOMEM;
	if (e)
		te = *e;
	for (jc = n0; jc < n1; jc += NC) {
		int64_t nc = n1 - jc < NC ? n1 - jc : NC;

		for (pc = 0; pc < K || (!K && !pc); pc += KC) {
			int64_t kc = K - pc < KC ? K - pc : KC;
			bool last = pc + KC >= K;

			if (kc)
				pack(bsrc, pc, kc, jc, nc, nr, bbuf);
			for (ir = m0; ir < m1; ir += mr) {
				const float *a = pa->data + pc * pa->Mp + ir * kc;
				int m = m1 - ir < mr ? (int)(m1 - ir) : mr;

				if (e) {
					te.bias = e->bias ? e->bias + ir : NULL;
					te.res = e->res ? e->res + ir * e->ldr + jc : NULL;
				}
				for (jr = 0; jr < nc; jr += nr) {
					int n = nc - jr < nr ? (int)(nc - jr) : nr;

					if (e && e->res)
						te.res = e->res + ir * e->ldr + jc + jr;
					kn->fn(kc, a, bbuf + jr * kc,
					       C + ir * ldc + jc + jr, ldc, m, n,
					       pc > 0, last, e ? &te : NULL);
				}
			}
			if (!K)
				break;
		}
	}
	return 0;
}

struct gemm_job {
	const struct npr_gemm_a *pa;
	int64_t N;
	npr_gemm_pack_b pack;
	const void *bsrc;
	float *C;
	int64_t ldc;
	const struct npr_gemm_epi *e;
	const struct npr_gemm_bdirect *bd;
	int parts;
	bool split_n;
	_Atomic int err;
};

static void gemm_task(void *arg, int i, int tid)
{
	struct gemm_job *j = arg;
	const struct npr_gemm_a *pa = j->pa;
	int64_t m0 = 0, m1 = pa->M, n0 = 0, n1 = j->N;
	int err;

	if (j->split_n) {
		int nr = pa->kern->nr;
		int64_t blocks = (j->N + nr - 1) / nr;

		n0 = blocks * i / j->parts * nr;
		n1 = blocks * (i + 1) / j->parts * nr;
		if (n1 > j->N)
			n1 = j->N;
	} else {
		int mr = pa->kern->mr;
		int64_t blocks = (pa->M + mr - 1) / mr;

		m0 = blocks * i / j->parts * mr;
		m1 = blocks * (i + 1) / j->parts * mr;
		if (m1 > pa->M)
			m1 = pa->M;
	}
	if (m0 >= m1 || n0 >= n1)
		return;
	if (j->bd) {
		gemm_part_direct(pa, m0, m1, n0, n1, j->bd, j->C, j->ldc,
				 j->e);
		return;
	}
	err = gemm_part(pa, m0, m1, n0, n1, j->pack, j->bsrc, j->C, j->ldc,
			j->e);
	if (err)
		j->err = err;
}

static int gemm_go(struct gemm_job *jp, int nthreads);

/**
 * npr_gemm_run() - C = A * B with the epilogue, split over the pool
 * @pa: packed A
 * @N: columns of B and C
 * @pack: packs B from @bsrc
 * @bsrc: the B source @pack reads
 * @C: output, row-major, M x @N
 * @ldc: row stride of @C in floats
 * @e: epilogue or NULL
 * @nthreads: most threads to use (0: the caller's limit); small products
 *            (under 2 MFLOP) run on the calling thread alone
 *
 * Context: any thread; runs on the calling thread and pool workers.
 *
 * Return: 0, or -ENOMEM if a thread's packing buffer cannot be allocated
 * (C is then partly written).
 */
int npr_gemm_run(const struct npr_gemm_a *pa, int64_t N, npr_gemm_pack_b pack,
		 const void *bsrc, float *C, int64_t ldc,
		 const struct npr_gemm_epi *e, int nthreads)
{
	struct gemm_job j = {
		.pa = pa, .N = N, .pack = pack, .bsrc = bsrc, .C = C,
		.ldc = ldc, .e = e,
	};

	return gemm_go(&j, nthreads);
}

/**
 * npr_gemm_run_direct() - C = A * B (+ epilogue) with B read in place
 * @pa: packed A
 * @N: columns of B and C
 * @bd: B, read in place (struct npr_gemm_bdirect: rows readable NR floats
 *      past every column used)
 * @C: output, row-major, M x @N
 * @ldc: row stride of @C in floats
 * @e: epilogue or NULL
 * @nthreads: most threads to use (0: the caller's limit)
 *
 * Context: any thread; runs on the calling thread and pool workers.
 *
 * Return: 0, or -EOPNOTSUPP when @pa's kernel has no fn_direct.
 */
int npr_gemm_run_direct(const struct npr_gemm_a *pa, int64_t N,
			const struct npr_gemm_bdirect *bd, float *C,
			int64_t ldc, const struct npr_gemm_epi *e,
			int nthreads)
{
	struct gemm_job j = {
		.pa = pa, .N = N, .C = C, .ldc = ldc, .bd = bd, .e = e,
	};

	if (!pa->kern->fn_direct)
		return -EOPNOTSUPP;
	return gemm_go(&j, nthreads);
}

static int gemm_go(struct gemm_job *jp, int nthreads)
{
	const struct npr_gemm_a *pa = jp->pa;
	int64_t N = jp->N;
	int nt = npr_par_threads();
	int64_t nb = (N + pa->kern->nr - 1) / pa->kern->nr;
	int64_t mb = (pa->M + pa->kern->mr - 1) / pa->kern->mr;
	double flops = 2.0 * pa->M * N * pa->K;

	if (nthreads > 0 && nthreads < nt)
		nt = nthreads;
	if (flops < 2e6)
		nt = 1;
	if (!pa->M || !N)
		return 0;
	/*
	 * Split columns when there are enough panels, else rows; into
	 * several parts per thread, taken dynamically, so that a thread the
	 * kernel preempts (the machine is shared) holds up little work.
	 */
	jp->split_n = nb >= 4 * nt || nb >= mb * 2;
	if (nt <= 1) {
		jp->parts = 1;
		gemm_task(jp, 0, 0);
	} else {
		int64_t blocks = jp->split_n ? nb : mb, per = jp->split_n ? 2 : 1;

		/* a row split packs all of B in every part: one per thread */
		jp->parts = jp->split_n || jp->bd ? nt * 3 : nt;
		if (jp->parts > blocks / per)
			jp->parts = (int)(blocks / per);
		if (jp->parts < 1)
			jp->parts = 1;
		npr_parallel_for(jp->parts, gemm_task, jp);
	}
	return jp->err;
}

/**
 * npr_sgemm() - plain row-major SGEMM, A packed on the fly
 * @M: rows of A and C
 * @N: columns of B and C
 * @K: columns of A, rows of B
 * @A: M x K floats
 * @lda: row stride of @A
 * @B: K x N floats
 * @ldb: row stride of @B
 * @C: out: M x N floats
 * @ldc: row stride of @C
 * @e: epilogue or NULL
 * @nthreads: most threads to use (0: the caller's limit)
 *
 * C = A * B with the epilogue, with npr_gemm_kern_best().
 *
 * Return: 0 or -ENOMEM.
 */
int npr_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
	      const float *B, int64_t ldb, float *C, int64_t ldc,
	      const struct npr_gemm_epi *e, int nthreads)
{
	struct npr_gemm_bsrc bs = { .B = B, .ldb = ldb };
	struct npr_gemm_a pa;
	int err;

	err = npr_gemm_a_pack(&pa, npr_gemm_kern_best(), A, M, K, lda);
	if (err)
		return err;
	err = npr_gemm_run(&pa, N, npr_gemm_pack_b_rm, &bs, C, ldc, e,
			   nthreads);
	npr_gemm_a_free(&pa);
	return err;
}

/**
 * npr_sgemm_ref() - npr_sgemm() as one scalar triple loop
 * @M: rows of A and C
 * @N: columns of B and C
 * @K: columns of A, rows of B
 * @A: M x K floats
 * @lda: row stride of @A
 * @B: K x N floats
 * @ldb: row stride of @B
 * @C: out: M x N floats
 * @ldc: row stride of @C
 * @e: epilogue or NULL
 *
 * The reference for the tests: sums in double, on the calling thread.
 */
void npr_sgemm_ref(int64_t M, int64_t N, int64_t K, const float *A,
		   int64_t lda, const float *B, int64_t ldb, float *C,
		   int64_t ldc, const struct npr_gemm_epi *e)
{
	int64_t i, j, k;

	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double s = 0;

			for (k = 0; k < K; k++)
				s += (double)A[i * lda + k] * B[k * ldb + j];
			C[i * ldc + j] = epi_apply(e, (float)s, i, j);
		}
}
