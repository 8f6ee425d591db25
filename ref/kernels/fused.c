// SPDX-License-Identifier: MIT
/*
 * Kernels of the fusion pass's ops (lib/ops/fused.h): FusedAttention and
 * FusedNorm.  One implementation each, the reference and the fast one.
 *
 * FusedAttention runs one query row at a time over the keys in blocks of
 * ATTN_BLOCK with an online softmax: the running maximum, the running sum
 * of exponentials and the weighted sum of values are rescaled whenever a
 * block raises the maximum, so neither the score matrix nor a row of it
 * longer than a block is ever stored, and grouped key and value heads are
 * read where they are.  Rows are split over the thread pool by (leading
 * index, block of query rows).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fused.h"
#include "registry.h"
#include "ref/conv/conv.h"
#include "ref/threads.h"

/* keys per block of the online softmax */
#define ATTN_BLOCK	64
/* query rows per task */
#define ATTN_ROWS	16
/* the value accumulator on the stack up to this Ev */
#define ATTN_STACK_EV	256

struct attn_job {
	const struct npr_fattn_params *p;
	void (*dots)(const float *, const float *, int64_t, int64_t, float *);
	void (*axpy)(const float *, const float *, int64_t, int64_t, float *);
	const float *q, *k, *v;
	const void *m;
	unsigned int mtype;
	float *o;
	int nb;
	int64_t bd[NPR_MAX_RANK];
	int64_t qst[NPR_MAX_RANK], kst[NPR_MAX_RANK], vst[NPR_MAX_RANK];
	int64_t kdiv[NPR_MAX_RANK], vdiv[NPR_MAX_RANK];
	int64_t mst[NPR_MAX_RANK + 2];
	int64_t L, S, E, Ev, nlb;
	int err;
};

/*
 * Strides in elements of the leading (batch) axes of @s aligned to the
 * last of @nb axes of the output @bd: 0 where @s has no such axis or size
 * 1; @div the divisor of the output index (a grouped axis), else 1.
 * @blk: elements from one matrix (the last two axes) to the next, 0 when
 * they are dense.
 */
static void lead_strides(const struct npr_shape *s, int nb,
			 const int64_t *bd, int64_t *st, int64_t *div,
			 int64_t blk)
{
	int64_t acc = blk ? blk : s->d[s->rank - 1] * s->d[s->rank - 2];
	int i, r;

	for (i = nb - 1; i >= 0; i--) {
		r = i - (nb - (s->rank - 2));
		st[i] = r < 0 || s->d[r] == 1 ? 0 : acc;
		if (div)
			div[i] = r < 0 || s->d[r] == 1 || s->d[r] == bd[i] ?
				 1 : bd[i] / s->d[r];
		if (r >= 0)
			acc *= s->d[r];
	}
}

/* the scores of keys j0 .. j0 + nj against @q, scaled and masked */
static void attn_scores(const struct attn_job *j, const float *q,
			const float *k, const uint8_t *mb, const float *mf,
			int64_t j0, int64_t nj, float *sc)
{
	const struct npr_fattn_params *p = j->p;
	int64_t E = j->E, S = j->S, mss = j->mst[j->nb + 1], jj, e;

	if (p->key_t) {
		for (jj = 0; jj < nj; jj++)
			sc[jj] = 0;
		for (e = 0; e < E; e++) {
			const float *kr = k + e * S + j0;
			float qe = q[e];

			for (jj = 0; jj < nj; jj++)
				sc[jj] += qe * kr[jj];
		}
	} else {
		j->dots(q, k + j0 * E, E, nj, sc);
	}
	for (jj = 0; jj < nj; jj++) {
		float s = sc[jj] * p->scale;

		if (mf)
			s += mf[(j0 + jj) * mss];
		else if (mb && !mb[(j0 + jj) * mss] == !p->fill_when)
			s = p->fill;
		sc[jj] = s;
	}
}

/* query rows of one task: leading index i / nlb, rows block i % nlb */
static void attn_task(void *arg, int i, int tid)
{
	struct attn_job *j = arg;
	const struct npr_fattn_params *p = j->p;
	int64_t bi = i / j->nlb, l0 = (i % j->nlb) * ATTN_ROWS, l1;
	int64_t qo = 0, ko = 0, vo = 0, mo = 0, rem = bi, l, j0, jj, e;
	int64_t Ev = j->Ev;
	float sc[ATTN_BLOCK], stack[ATTN_STACK_EV], *acc = stack;
	int d;

	(void)tid;
	for (d = j->nb - 1; d >= 0; d--) {
		int64_t x = rem % j->bd[d];

		rem /= j->bd[d];
		qo += x * j->qst[d];
		ko += x / j->kdiv[d] * j->kst[d];
		vo += x / j->vdiv[d] * j->vst[d];
		mo += x * j->mst[d];
	}
	if (Ev > ATTN_STACK_EV) {
		acc = malloc(sizeof(float) * Ev);
		if (!acc) {
			j->err = -ENOMEM;
			return;
		}
	}
	l1 = l0 + ATTN_ROWS < j->L ? l0 + ATTN_ROWS : j->L;
	for (l = l0; l < l1; l++) {
		const float *q = j->q + qo + l * j->E;
		const uint8_t *mb = NULL;
		const float *mf = NULL;
		float mx = -INFINITY, sum = 0, r;
		float *out = j->o + (bi * j->L + l) * Ev;

		if (p->mask == NPR_FATTN_MASK_ADD)
			mf = (const float *)j->m + mo + l * j->mst[j->nb];
		else if (p->mask == NPR_FATTN_MASK_SELECT)
			mb = (const uint8_t *)j->m + mo + l * j->mst[j->nb];
		for (e = 0; e < Ev; e++)
			acc[e] = 0;
		for (j0 = 0; j0 < j->S; j0 += ATTN_BLOCK) {
			int64_t nj = j->S - j0 < ATTN_BLOCK ? j->S - j0 :
				     ATTN_BLOCK;
			float bm = -INFINITY;

			attn_scores(j, q, j->k + ko, mb, mf, j0, nj, sc);
			for (jj = 0; jj < nj; jj++)
				if (sc[jj] > bm)
					bm = sc[jj];
			if (bm == -INFINITY)
				continue;	/* all masked: weights 0 */
			if (bm > mx) {
				float c = expf(mx - bm);

				sum *= c;
				for (e = 0; e < Ev; e++)
					acc[e] *= c;
				mx = bm;
			}
			for (jj = 0; jj < nj; jj++) {
				sc[jj] = expf(sc[jj] - mx);
				sum += sc[jj];
			}
			j->axpy(sc, j->v + vo + j0 * Ev, nj, Ev, acc);
		}
		/* every key masked: 0 / 0, NaN as softmax over -inf gives */
		r = 1.0f / sum;
		for (e = 0; e < Ev; e++)
			out[e] = sum > 0 ? acc[e] * r : NAN;
	}
	if (acc != stack)
		free(acc);
}

/**
 * npr_ref_fused_attention_pitched() - FusedAttention over a pitched cache
 * @n: the node; n->params is a struct npr_fattn_params.
 * @in: as npr_ref_fused_attention()'s.
 * @out: as npr_ref_fused_attention()'s.
 * @kblk: elements from the start of one key matrix (the last two axes,
 *        [S, E]) to the next: a KV cache held with room to grow; 0 when
 *        the key is dense.
 * @vblk: the same for the value.
 *
 * Return: 0, -EINVAL for a pitch shorter than a matrix or with a
 * transposed key, or -ENOMEM.
 */
int npr_ref_fused_attention_pitched(const struct npr_node *n,
				    const struct npr_tensor *in,
				    struct npr_tensor *out, int64_t kblk,
				    int64_t vblk)
{
	const struct npr_fattn_params *p = n->params;
	const struct npr_shape *os = &out->shape, *ks = &in[1].shape;
	struct attn_job *j;
	int64_t batches = 1, acc;
	int i, r, nb = os->rank - 2, err;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->p = p;
	j->dots = npr_dot_rows_generic;
	j->axpy = npr_axpy_rows_generic;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		j->dots = npr_dot_rows_avx512;
		j->axpy = npr_axpy_rows_avx512;
	}
#endif
	j->q = in[0].data;
	j->k = in[1].data;
	j->v = in[2].data;
	j->o = out->data;
	j->nb = nb;
	j->L = os->d[nb];
	j->Ev = os->d[nb + 1];
	j->E = in[0].shape.d[in[0].shape.rank - 1];
	j->S = ks->d[ks->rank - (p->key_t ? 1 : 2)];
	for (i = 0; i < nb; i++) {
		j->bd[i] = os->d[i];
		batches *= os->d[i];
	}
	if ((kblk && (p->key_t || kblk < j->S * j->E)) ||
	    (vblk && vblk < j->S * j->Ev)) {
		free(j);
		return npr_node_err(n, -EINVAL, "key or value pitch shorter than its matrix");
	}
	lead_strides(&in[0].shape, nb, j->bd, j->qst, NULL, 0);
	lead_strides(ks, nb, j->bd, j->kst, j->kdiv, kblk);
	lead_strides(&in[2].shape, nb, j->bd, j->vst, j->vdiv, vblk);
	if (p->mask != NPR_FATTN_MASK_NONE) {
		const struct npr_shape *ms = &in[3].shape;

		j->m = in[3].data;
		acc = 1;
		for (i = nb + 1; i >= 0; i--) {
			r = i - (nb + 2 - ms->rank);
			j->mst[i] = r < 0 || ms->d[r] == 1 ? 0 : acc;
			if (r >= 0)
				acc *= ms->d[r];
		}
	}
	j->nlb = (j->L + ATTN_ROWS - 1) / ATTN_ROWS;
	if (!j->S)
		memset(j->o, 0, npr_tensor_bytes(NPR_ELEM_F32,
						 npr_shape_numel(os)));
	else if (batches * j->nlb > 0 && j->Ev > 0)
		npr_parallel_for((int)(batches * j->nlb), attn_task, j);
	err = j->err;
	free(j);
	return err;
}

/**
 * npr_ref_fused_attention() - FusedAttention-1
 * @n: the node; n->params is a struct npr_fattn_params.
 * @in: f32 query [..., Hq, L, E], key [..., Hk, S, E] (or [..., Hk, E, S]),
 *      value [..., Hk, S, Ev], optionally the mask (f32 added, or boolean
 *      selecting where the score becomes the fill value), broadcast to
 *      [..., Hq, L, S].
 * @out: [..., Hq, L, Ev].
 *
 * softmax(query key^T * scale, masked) value, in f32 with an online
 * softmax over blocks of keys; a row whose keys are all masked out (to
 * -inf) gives NaN, as the softmax does.  No keys at all give zeros, as
 * the product of an empty softmax by an empty value does.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_fused_attention(const struct npr_node *n,
			    const struct npr_tensor *in,
			    struct npr_tensor *out)
{
	return npr_ref_fused_attention_pitched(n, in, out, 0, 0);
}

struct norm_job {
	const struct npr_fnorm_params *p;
	const float *x, *g, *b;
	float *y;
	int64_t rows, N, ng, nbias, parts;
};

static void norm_rows(const struct norm_job *j, int64_t r0, int64_t r1)
{
	const struct npr_fnorm_params *p = j->p;
	int64_t N = j->N, r, i;

	for (r = r0; r < r1; r++) {
		const float *x = j->x + r * N;
		float *y = j->y + r * N;
		double s = 0, v = 0;
		float mean = 0, var, sd, inv;

		if (p->mode == NPR_FNORM_LAYER) {
			for (i = 0; i < N; i++)
				s += x[i];
			mean = (float)(s / N);
		}
		for (i = 0; i < N; i++) {
			float d = x[i] - mean;

			v += (double)d * d;
		}
		var = (float)(v / N);
		sd = p->inside ? sqrtf(var + p->eps) : sqrtf(var) + p->eps;
		inv = 1.0f / sd;
		for (i = 0; i < N; i++) {
			float t = (x[i] - mean) * inv;

			if (j->g)
				t *= j->g[j->ng == 1 ? 0 : i];
			if (j->b)
				t += j->b[j->nbias == 1 ? 0 : i];
			y[i] = t;
		}
	}
}

static void norm_task(void *arg, int i, int tid)
{
	const struct norm_job *j = arg;

	(void)tid;
	norm_rows(j, j->rows * i / j->parts, j->rows * (i + 1) / j->parts);
}

/**
 * npr_ref_fused_norm() - FusedNorm-1
 * @n: the node; n->params is a struct npr_fnorm_params (axis from the
 *     front).
 * @in: f32 data, then the optional scale and bias (one value, or one per
 *      element of the normalized axes).
 * @out: the data's shape.
 *
 * Per row of the normalized axes: the mean (layer mode) and the mean
 * square of the deviations summed in double, the deviations times the
 * reciprocal of the standard deviation, times the scale, plus the bias.
 * Rows are split over the thread pool when there are many.
 *
 * Return: 0.
 */
int npr_ref_fused_norm(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out)
{
	const struct npr_fnorm_params *p = n->params;
	const struct npr_shape *s = &in[0].shape;
	struct norm_job j = { .p = p, .x = in[0].data, .y = out->data };
	int i;

	j.rows = 1;
	j.N = 1;
	for (i = 0; i < s->rank; i++) {
		if (i < p->axis)
			j.rows *= s->d[i];
		else
			j.N *= s->d[i];
	}
	if (n->nin > 1) {
		j.g = in[1].data;
		j.ng = npr_shape_numel(&in[1].shape);
	}
	if (n->nin > 2) {
		j.b = in[2].data;
		j.nbias = npr_shape_numel(&in[2].shape);
	}
	if (!j.rows || !j.N)
		return 0;
	j.parts = j.rows * j.N >= 32768 ? (j.rows < 64 ? j.rows : 64) : 1;
	if (j.parts > 1)
		npr_parallel_for((int)j.parts, norm_task, &j);
	else
		norm_rows(&j, 0, j.rows);
	return 0;
}

/* The op definitions of lib/ops/fused.c these kernels evaluate. */
const struct npr_kernel npr_kernels_fused[] = {
	{ "FusedAttention", 1, 1, npr_ref_fused_attention },
	{ "FusedNorm", 1, 1, npr_ref_fused_norm },
	{ NULL },
};
