// SPDX-License-Identifier: MIT
/*
 * Reference kernel: ScaledDotProductAttention.  One query row at a time:
 * scores against every key in double precision, bias (causal, boolean or
 * additive mask), a max-subtracted softmax, then the weighted sum of the
 * values.  Broadcast operands are walked with zero strides.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "registry.h"

/*
 * Element strides of @s aligned to the last dims of a shape of @rank, 0
 * where @s has size 1 (broadcast) or no dim.
 */
static void bstrides(const struct npr_shape *s, int rank, int64_t *st)
{
	int64_t acc = 1;
	int i, j;

	for (i = rank - 1; i >= 0; i--) {
		j = i - (rank - s->rank);
		if (j < 0 || s->d[j] == 1) {
			st[i] = 0;
		} else {
			st[i] = acc;
		}
		if (j >= 0)
			acc *= s->d[j];
	}
}

/**
 * npr_ref_sdpa() - ScaledDotProductAttention-13
 * @n: the node; n->params is a struct npr_attn_params.
 * @in: f32 query [..., L, E], key [..., S, E], value [..., S, Ev]; an
 *      optional attention mask (boolean: false masks the key; f32: added
 *      to the score), ignored when causal; an optional scalar scale
 *      (default 1 / sqrt(E)).  Batch dimensions and the mask broadcast.
 * @out: [..., L, Ev].
 *
 * softmax(Q K^T * scale + mask) V, in double precision.  A query row whose
 * keys are all masked gives NaN.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_sdpa(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	const struct npr_attn_params *p = n->params;
	const struct npr_tensor *q = &in[0], *k = &in[1], *v = &in[2];
	const struct npr_tensor *m = n->nin > 3 && !p->causal ? &in[3] : NULL;
	const struct npr_shape *os = &out->shape;
	int R = os->rank, nb = R - 2, i;
	int64_t L = os->d[R - 2], Ev = os->d[R - 1];
	int64_t E = q->shape.d[q->shape.rank - 1];
	int64_t S = k->shape.d[k->shape.rank - 2];
	int64_t sq[NPR_MAX_RANK], sk[NPR_MAX_RANK], sv[NPR_MAX_RANK];
	int64_t sm[NPR_MAX_RANK], idx[NPR_MAX_RANK] = { 0 };
	int64_t batches = 1, bi, l, j, e;
	const float *qd = q->data, *kd = k->data, *vd = v->data;
	float *od = out->data;
	double scale, *w;

	if (n->nin > 4)
		scale = ((const float *)in[4].data)[0];
	else
		scale = 1.0 / sqrt((double)E);
	w = malloc(sizeof(double) * (S ? S : 1));
	if (!w)
		return -ENOMEM;
	/* strides in rows: batch dims of q, k, v count whole matrices */
	{
		struct npr_shape t;

		t = q->shape;
		t.rank -= 2;
		bstrides(&t, nb, sq);
		t = k->shape;
		t.rank -= 2;
		bstrides(&t, nb, sk);
		t = v->shape;
		t.rank -= 2;
		bstrides(&t, nb, sv);
	}
	if (m)
		bstrides(&m->shape, R, sm);
	for (i = 0; i < nb; i++)
		batches *= os->d[i];
	for (bi = 0; bi < batches; bi++) {
		int64_t oq = 0, ok = 0, ov = 0, om = 0;

		for (i = 0; i < nb; i++) {
			oq += idx[i] * sq[i];
			ok += idx[i] * sk[i];
			ov += idx[i] * sv[i];
			if (m)
				om += idx[i] * sm[i];
		}
		for (l = 0; l < L; l++) {
			const float *qr = qd + (oq * L + l) * E;
			double mx = -INFINITY, sum = 0;

			for (j = 0; j < S; j++) {
				const float *kr = kd + (ok * S + j) * E;
				double s = 0;

				for (e = 0; e < E; e++)
					s += (double)qr[e] * kr[e];
				s *= scale;
				if (p->causal && j > l) {
					s = -INFINITY;
				} else if (m) {
					int64_t mo = om + l * sm[R - 2] +
						     j * sm[R - 1];

					const uint8_t *mb = m->data;
					const float *mf = m->data;

					if (m->type != NPR_ELEM_BOOLEAN)
						s += mf[mo];
					else if (!mb[mo])
						s = -INFINITY;
				}
				w[j] = s;
				if (s > mx)
					mx = s;
			}
			for (j = 0; j < S; j++) {
				w[j] = exp(w[j] - mx);
				sum += w[j];
			}
			for (e = 0; e < Ev; e++) {
				double acc = 0;

				for (j = 0; j < S; j++)
					acc += w[j] * vd[(ov * S + j) * Ev + e];
				od[(bi * L + l) * Ev + e] = (float)(acc / sum);
			}
		}
		for (i = nb - 1; i >= 0; i--) {
			if (++idx[i] < os->d[i])
				break;
			idx[i] = 0;
		}
	}
	free(w);
	return 0;
}

/* The op definitions of lib/ops/attn.c these kernels evaluate. */
const struct npr_kernel npr_kernels_attn[] = {
	{ "ScaledDotProductAttention", 13, 99, npr_ref_sdpa },
	{ NULL },
};
