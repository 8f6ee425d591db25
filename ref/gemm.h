/* SPDX-License-Identifier: MIT */
/*
 * Packed single-precision GEMM for the CPU backend.
 *
 * C[M,N] = A[M,K] * B[K,N] (+ epilogue), row-major.  A is packed once
 * (weights, at compile time) into micro-panels of the kernel's MR rows;
 * B is packed per call into panels of NR columns by a pack callback, so a
 * convolution can pack its im2col view straight from the input tensor.
 * The micro-kernel is chosen at runtime from CPUID: AVX-512F, AVX2+FMA,
 * or portable C.
 */
#ifndef NPR_REF_GEMM_H
#define NPR_REF_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum npr_act {
	NPR_ACT_NONE,
	NPR_ACT_RELU,
	NPR_ACT_CLAMP,
};

/**
 * struct npr_gemm_epi - what is applied to C once its sum is complete
 * @bias: per row of C (M values), or NULL.
 * @res: residual added after the bias, same layout as C, or NULL.
 * @ldr: row stride of @res in elements.
 * @act: enum npr_act, applied last.
 * @lo, @hi: NPR_ACT_CLAMP bounds.
 */
struct npr_gemm_epi {
	const float *bias;
	const float *res;
	int64_t ldr;
	int act;
	float lo, hi;
};

/**
 * struct npr_gemm_kern - one micro-kernel and its register tile
 * @name: "avx512", "avx2", "scalar".
 * @mr, @nr: rows and columns of C it computes per call.
 * @fn: C[m<=mr, n<=nr] (=|+=) a[kc x mr] * b[kc x nr], then the epilogue
 *      @e (rows offset by the caller) when @last.  @acc: add to C.
 */
struct npr_gemm_kern {
	const char *name;
	int mr, nr;
	void (*fn)(int64_t kc, const float *a, const float *b, float *c,
		   int64_t ldc, int m, int n, bool acc, bool last,
		   const struct npr_gemm_epi *e);
	void (*fn_direct)(int64_t kc, const float *a, const float *b,
			  const int64_t *boff, float *c, int64_t ldc, int m,
			  int n, bool acc, bool last,
			  const struct npr_gemm_epi *e);
};

/*
 * A B operand read in place, no packing: row k is b + off[k], its columns
 * contiguous (a convolution at stride 1 over a zero-padded input, the
 * output computed at the input's pitch).  Kernels with fn_direct only;
 * rows must be readable NR floats past every column used.
 */
struct npr_gemm_bdirect {
	const float *b;
	const int64_t *off;
};

/* The fastest kernel this CPU runs (or the one NPR_GEMM_ISA names). */
const struct npr_gemm_kern *npr_gemm_kern_best(void);
/* By name, or NULL when the CPU lacks it. */
const struct npr_gemm_kern *npr_gemm_kern_get(const char *name);

/**
 * struct npr_gemm_a - a packed A operand (weights)
 * @kern: kernel it was packed for.
 * @M, @K: logical size.
 * @Mp: M rounded up to @kern->mr.
 * @data: packed, 64-byte aligned; free with npr_gemm_a_free().
 */
struct npr_gemm_a {
	const struct npr_gemm_kern *kern;
	int64_t M, K, Mp;
	float *data;
};

/**
 * npr_gemm_a_pack() - pack row-major A (row stride @lda) for @kern
 * Return: 0 or -ENOMEM.  The caller frees with npr_gemm_a_free().
 */
int npr_gemm_a_pack(struct npr_gemm_a *pa, const struct npr_gemm_kern *kern,
		    const float *A, int64_t M, int64_t K, int64_t lda);
void npr_gemm_a_free(struct npr_gemm_a *pa);
/* The inverse of npr_gemm_a_pack(): write A back, row stride @lda. */
void npr_gemm_a_unpack(const struct npr_gemm_a *pa, float *A, int64_t lda);

/*
 * B source: pack rows [k0, k0+kc) and columns [j0, j0+nc) into panels of
 * @nr columns: dst[(j / nr) * kc * nr + k * nr + j % nr], zero padded up
 * to a multiple of @nr columns.
 */
typedef void (*npr_gemm_pack_b)(const void *src, int64_t k0, int64_t kc,
				int64_t j0, int64_t nc, int nr, float *dst);

/* Most columns a pack callback is asked for at once (the NC block). */
#define NPR_PACK_NC	512

/* Row-major B source for npr_gemm_pack_b_rm. */
struct npr_gemm_bsrc {
	const float *B;
	int64_t ldb;
};
void npr_gemm_pack_b_rm(const void *src, int64_t k0, int64_t kc, int64_t j0,
			int64_t nc, int nr, float *dst);

/**
 * npr_gemm_run() - C = A * B with the epilogue, split over the pool
 * @pa: packed A.
 * @N: columns of B and C.
 * @pack: packs B from @bsrc.
 * @C, @ldc: output, row-major.
 * @e: epilogue or NULL.
 * @nthreads: most threads to use (0: the caller's limit).
 *
 * Return: 0 or -ENOMEM.
 * Context: any thread; runs on the calling thread and pool workers.
 */
int npr_gemm_run(const struct npr_gemm_a *pa, int64_t N, npr_gemm_pack_b pack,
		 const void *bsrc, float *C, int64_t ldc,
		 const struct npr_gemm_epi *e, int nthreads);

/**
 * npr_gemm_run_direct() - C = A * B (+ epilogue) with B read in place
 * Return: 0, or -EOPNOTSUPP when @pa's kernel has no fn_direct.
 */
int npr_gemm_run_direct(const struct npr_gemm_a *pa, int64_t N,
			const struct npr_gemm_bdirect *bd, float *C,
			int64_t ldc, const struct npr_gemm_epi *e,
			int nthreads);

/* Plain row-major SGEMM: C = A * B, A packed on the fly. */
int npr_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
	      const float *B, int64_t ldb, float *C, int64_t ldc,
	      const struct npr_gemm_epi *e, int nthreads);
/* The same, one scalar triple loop: the reference for the tests. */
void npr_sgemm_ref(int64_t M, int64_t N, int64_t K, const float *A,
		   int64_t lda, const float *B, int64_t ldb, float *C,
		   int64_t ldc, const struct npr_gemm_epi *e);

/* Apply the epilogue to one value of row @i (column offset @off into res). */
static inline float epi_apply(const struct npr_gemm_epi *e, float v,
			      int64_t i, int64_t j)
{
	if (!e)
		return v;
	if (e->bias)
		v += e->bias[i];
	if (e->res)
		v += e->res[i * e->ldr + j];
	if (e->act == NPR_ACT_RELU)
		v = v > 0 ? v : 0;
	else if (e->act == NPR_ACT_CLAMP)
		v = v < e->lo ? e->lo : v > e->hi ? e->hi : v;
	return v;
}

/*
 * Pixel-major tile (ref/arch/x86/gemm_avx512.c): t[i][0..16 nv) (+)=
 * sum over k < kc of x[off[k] + i * sx] * w[k][0..16 nv), i < n (1 to
 * 7), nv 1 to 4 (the rest of t[i][0..64) untouched); w (rows of 64) and
 * t 64-byte aligned.
 */
void npr_gemm_t7_avx512(int n, int nv, int64_t kc, const float *w,
			const float *x, const int64_t *off, int64_t sx,
			float *t, bool acc);
/*
 * Max pooling of pixel-major rows (t7 layout, 64 channels a pixel): out[px]
 * = max over rows[0..nr) and columns [px * sw - pw, + kw) clipped to
 * [0, W); every window must hold a column.
 */
void npr_gemm_t7_maxpool_avx512(const float *const *rows, int64_t nr,
				int64_t OW, int64_t kw, int64_t sw, int64_t pw,
				int64_t W, float *out);
/* sum[kk] += epilogue(t[l * 64 + kk]) over l < len, kk < kn; sum aligned */
void npr_gemm_t7_sum_avx512(const float *t, int64_t len, int64_t kn,
			    const float *bias, int act, float lo, float hi,
			    float *sum);
/* y[kk * ldy + l] = epilogue(t[l * 64 + kk]), l < len, kk < kn */
void npr_gemm_t7_out_avx512(const float *t, int64_t len, int64_t kn,
			    float *y, int64_t ldy, const float *bias,
			    const float *res, int act, float lo, float hi);

/* Kernels in ISA-specific objects (built with their own -m flags). */
extern const struct npr_gemm_kern npr_gemm_kern_avx512;
extern const struct npr_gemm_kern npr_gemm_kern_avx2;

/*
 * Free *@slot, a thread-local scratch buffer's pointer (and zero *@cap, its
 * size), when the calling thread exits or trims its buffers.  Call after
 * allocating it; once per slot is enough.
 */
void npr_free_at_thread_exit(float **slot, size_t *cap);
/* a compiled model is gone: every thread frees its buffers at its next
 * npr_scratch_trim(), a point where it uses none of them */
void npr_scratch_release(void);
void npr_scratch_trim(void);

/*
 * npr_scratch() - a thread-local scratch buffer of at least @n floats
 * @buf, @cap: the calling thread's buffer and its size in floats
 *             (_Thread_local variables of the caller).
 *
 * Grows the buffer when it is smaller (npr_alloc(): 64-byte aligned, on
 * huge pages from 2 MiB; freed when the thread exits).
 * Return: *@buf, or NULL without memory (*@cap is then 0).
 */
float *npr_scratch(float **buf, size_t *cap, size_t n);

#endif /* NPR_REF_GEMM_H */
