// SPDX-License-Identifier: MIT
/*
 * Reference kernels: CTC greedy (best path) decoding.
 *
 * Per sequence: take the most probable class of every time step (the
 * first one on ties), drop a class equal to the one of the previous step
 * when merging repeats (a blank in between separates repeats), then drop
 * the blanks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctc.h"
#include "registry.h"

static int64_t argmax(const float *v, int64_t c)
{
	int64_t i, best = 0;

	for (i = 1; i < c; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

/*
 * Decode one sequence of @len steps, step t at x + t * step, into @dst
 * (@T slots, -1 padded).  Returns the decoded length.
 */
static int64_t decode(const float *x, int64_t step, int64_t len, int64_t C,
		      int64_t blank, bool merge, int64_t *dst, int64_t T)
{
	int64_t t, k = 0, prev = -1;

	for (t = 0; t < len; t++) {
		int64_t c = argmax(x + t * step, C);

		if (c != blank && !(merge && c == prev))
			dst[k++] = c;
		prev = c;
	}
	for (t = k; t < T; t++)
		dst[t] = -1;
	return k;
}

static int64_t get_int(const struct npr_tensor *t, int64_t i)
{
	if (t->type == NPR_ELEM_I32)
		return ((const int32_t *)t->data)[i];
	return ((const int64_t *)t->data)[i];
}

static void put_int(struct npr_tensor *t, int64_t i, int64_t v)
{
	if (t->type == NPR_ELEM_I32)
		((int32_t *)t->data)[i] = (int32_t)v;
	else
		((int64_t *)t->data)[i] = v;
}

/**
 * npr_ref_ctc_greedy() - CTCGreedyDecoder-1
 * @n: the node; params are struct npr_ctc_params.
 * @in: data [T, N, C], sequence mask [T, N]: a sequence ends at its first
 *      zero mask entry.  The blank class is C - 1.
 * @out: [N, T, 1, 1] class indices as floats, -1 padded.
 *
 * Return: 0 or -errno.
 */
int npr_ref_ctc_greedy(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out)
{
	const struct npr_ctc_params *p = n->params;
	const float *x = in[0].data, *mask = in[1].data;
	float *y = out->data;
	int64_t T = in[0].shape.d[0], N = in[0].shape.d[1];
	int64_t C = in[0].shape.d[2], b, t, len;
	int64_t buf[256], *dst = buf;

	if (T > (int64_t)(sizeof(buf) / sizeof(buf[0]))) {
		dst = calloc((size_t)T, sizeof(*dst));
		if (!dst)
			return -ENOMEM;
	}
	for (b = 0; b < N; b++) {
		for (len = 0; len < T; len++)
			if (mask[len * N + b] == 0.0f)
				break;
		decode(x + b * C, N * C, len, C, C - 1, p->merge, dst, T);
		for (t = 0; t < T; t++)
			y[b * T + t] = (float)dst[t];
	}
	if (dst != buf)
		free(dst);
	return 0;
}

/**
 * npr_ref_ctc_greedy_seq_len() - CTCGreedyDecoderSeqLen-6
 * @n: the node; params are struct npr_ctc_params.
 * @in: data [N, T, C], sequence_length [N], optional blank_index (default
 *      C - 1).
 * @out: class indices [N, T] (-1 padded) and decoded lengths [N].
 *
 * Return: 0, or -EINVAL for a length outside [0, T] or a blank index
 * outside [0, C).
 */
int npr_ref_ctc_greedy_seq_len(const struct npr_node *n,
			       const struct npr_tensor *in,
			       struct npr_tensor *out)
{
	const struct npr_ctc_params *p = n->params;
	const float *x = in[0].data;
	int64_t N = in[0].shape.d[0], T = in[0].shape.d[1];
	int64_t C = in[0].shape.d[2], blank = C - 1, b, t, len, k;
	int64_t buf[256], *dst = buf;

	if (n->nin > 2) {
		blank = get_int(&in[2], 0);
		if (blank < 0 || blank >= C)
			return npr_node_err(n, -EINVAL,
					    "blank_index %lld outside [0, %lld)",
					    (long long)blank, (long long)C);
	}
	for (b = 0; b < N; b++) {
		len = get_int(&in[1], b);
		if (len < 0 || len > T)
			return npr_node_err(n, -EINVAL,
					    "sequence_length[%lld] = %lld outside [0, %lld]",
					    (long long)b, (long long)len,
					    (long long)T);
	}
	if (T > (int64_t)(sizeof(buf) / sizeof(buf[0]))) {
		dst = calloc((size_t)T, sizeof(*dst));
		if (!dst)
			return -ENOMEM;
	}
	for (b = 0; b < N; b++) {
		len = get_int(&in[1], b);
		k = decode(x + b * T * C, C, len, C, blank, p->merge, dst, T);
		for (t = 0; t < T; t++)
			put_int(&out[0], b * T + t, dst[t]);
		put_int(&out[1], b, k);
	}
	if (dst != buf)
		free(dst);
	return 0;
}

/* The op definitions of lib/ops/ctc.c these kernels evaluate. */
const struct npr_kernel npr_kernels_ctc[] = {
	{ "CTCGreedyDecoder", 0, 99, npr_ref_ctc_greedy },
	{ "CTCGreedyDecoderSeqLen", 6, 99, npr_ref_ctc_greedy_seq_len },
	{ NULL },
};
