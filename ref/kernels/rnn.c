// SPDX-License-Identifier: MIT
/*
 * Reference kernels: RNN, GRU and LSTM cells and sequences.
 *
 * One step of one batch row is computed by step(); the cell kernels run
 * it per row, the sequence kernels per row, direction and time step.
 * Gate pre-activations are accumulated in double precision.
 *
 *   RNN:  H' = f(X W^T + H R^T + B)
 *   GRU:  z = f(X Wz^T + H Rz^T + Bz), r = f(X Wr^T + H Rr^T + Br)
 *         h = g(X Wh^T + (r * H) Rh^T + Bh)            (default)
 *         h = g(X Wh^T + Wbh + r * (H Rh^T + Rbh))     (linear_before_reset)
 *         H' = (1 - z) * h + z * H
 *   LSTM: f = f(X Wf^T + H Rf^T + Bf + Pf * C), i likewise with Pi,
 *         c = g(X Wc^T + H Rc^T + Bc), C' = f * C + i * c,
 *         o = f(X Wo^T + H Ro^T + Bo + Po * C'), H' = o * h(C')
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rnn.h"
#include "registry.h"

static float act(int kind, double v)
{
	switch (kind) {
	case NPR_RNN_SIGMOID:
		return (float)(1.0 / (1.0 + exp(-v)));
	case NPR_RNN_RELU:
		return v > 0 ? (float)v : 0.0f;
	default:
		return (float)tanh(v);
	}
}

static double clip(const struct npr_rnn_params *p, double v)
{
	if (p->clip > 0) {
		if (v > p->clip)
			return p->clip;
		if (v < -p->clip)
			return -p->clip;
	}
	return v;
}

static double dot(const float *a, const float *b, int64_t n)
{
	double s = 0;
	int64_t k;

	for (k = 0; k < n; k++)
		s += (double)a[k] * b[k];
	return s;
}

/*
 * One time step of one row.  @x [I], @h [S], @c [S] (LSTM), @w [G*S, I],
 * @r [G*S, S], @b bias or NULL, @pp peepholes or NULL; @ho, @co outputs
 * (may not alias the inputs); @a scratch of G*S doubles.
 */
static void step(const struct npr_rnn_params *p, int64_t I, const float *x,
		 const float *h, const float *c, const float *w,
		 const float *r, const float *b, const float *pp, float *ho,
		 float *co, double *a)
{
	int64_t S = p->hidden, G = p->gates, j, k;

	for (k = 0; k < G * S; k++) {
		a[k] = dot(x, w + k * I, I);
		if (b)
			a[k] += b[k];
	}
	if (p->kind == NPR_RNN_GRU) {
		/* z and r first: the default form needs every r */
		for (j = 0; j < S; j++) {
			a[j] = act(p->act[0],
				   clip(p, a[j] + dot(h, r + j * S, S)));
			a[S + j] = act(p->act[0],
				       clip(p, a[S + j] +
					    dot(h, r + (S + j) * S, S)));
		}
		for (j = 0; j < S; j++) {
			const float *rh = r + (2 * S + j) * S;
			double hh = a[2 * S + j], s = 0;

			if (p->linear_before_reset) {
				s = dot(h, rh, S) + (b ? b[3 * S + j] : 0);
				hh += a[S + j] * s;
			} else {
				for (k = 0; k < S; k++)
					s += a[S + k] * h[k] * rh[k];
				hh += s;
			}
			hh = act(p->act[1], clip(p, hh));
			ho[j] = (float)((1 - a[j]) * hh + a[j] * h[j]);
		}
		return;
	}
	for (k = 0; k < G * S; k++)
		a[k] = clip(p, a[k] + dot(h, r + k * S, S));
	if (p->kind == NPR_RNN_RNN) {
		for (j = 0; j < S; j++)
			ho[j] = act(p->act[0], a[j]);
		return;
	}
	for (j = 0; j < S; j++) {
		double f = a[j], i = a[S + j], g = a[2 * S + j];
		double o = a[3 * S + j], cn;

		if (pp) {
			i = clip(p, i + (double)pp[j] * c[j]);
			f = clip(p, f + (double)pp[2 * S + j] * c[j]);
		}
		i = act(p->act[0], i);
		f = p->input_forget ? 1 - i : act(p->act[0], f);
		g = act(p->act[1], g);
		cn = f * c[j] + i * g;
		if (pp)
			o = clip(p, o + (double)pp[S + j] * cn);
		o = act(p->act[0], o);
		co[j] = (float)cn;
		ho[j] = (float)(o * act(p->act[2], cn));
	}
}

/**
 * npr_ref_rnn_cell() - RNNCell, GRUCell and LSTMCell: one step
 * @n: the node; n->params is a struct npr_rnn_params.
 * @in: f32 operands at the indexes the params give (X, H, C for LSTM, W,
 *      R, B and the LSTMCell-1 peepholes when present).
 * @out: H', and C' for LSTM.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_ref_rnn_cell(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	const struct npr_rnn_params *p = n->params;
	const struct npr_tensor *x = &in[p->x];
	int64_t N = x->shape.d[0], I = x->shape.d[1], S = p->hidden, row;
	const float *b = p->b >= 0 ? in[p->b].data : NULL;
	const float *pp = p->p >= 0 ? in[p->p].data : NULL;
	double *a = malloc(sizeof(double) * (p->gates + 1) * S);
	float *hs = malloc(sizeof(float) * 2 * S);

	if (!a || !hs) {
		free(a);
		free(hs);
		return -ENOMEM;
	}
	for (row = 0; row < N; row++) {
		const float *c = p->c >= 0 ?
				 (const float *)in[p->c].data + row * S : NULL;

		step(p, I, (const float *)x->data + row * I,
		     (const float *)in[p->h].data + row * S, c,
		     in[p->w].data, in[p->r].data, b, pp, hs, hs + S, a);
		memcpy((float *)out[0].data + row * S, hs, sizeof(float) * S);
		if (p->kind == NPR_RNN_LSTM)
			memcpy((float *)out[1].data + row * S, hs + S,
			       sizeof(float) * S);
	}
	free(hs);
	free(a);
	return 0;
}

/**
 * npr_ref_rnn_seq() - RNNSequence, GRUSequence and LSTMSequence
 * @n: the node; n->params is a struct npr_rnn_params.
 * @in: f32 operands at the indexes the params give (X [N, T, I], H, C for
 *      LSTM, sequence_lengths, W, R, B, peepholes), per direction.
 * @out: Y [N, D, T, S], Ho [N, D, S], and Co for LSTM.
 *
 * Each batch row runs its sequence length (clamped to [0, T]) steps, per
 * direction; the reverse direction from the last valid step back.  Y is
 * zero past a row's length.
 *
 * Return: 0; -ENOMEM; -EINVAL with npr_node_err() set if the sequence
 * lengths are not numeric.
 */
int npr_ref_rnn_seq(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_rnn_params *p = n->params;
	const struct npr_tensor *x = &in[p->x];
	int64_t N = x->shape.d[0], T = x->shape.d[1], I = x->shape.d[2];
	int64_t S = p->hidden, G = p->gates, D = out[1].shape.d[1];
	int64_t nb = (p->linear_before_reset ? G + 1 : G) * S;
	int64_t row, d, t, len;
	int64_t *lens = malloc(sizeof(int64_t) * (N ? N : 1));
	double *a = malloc(sizeof(double) * (G + 1) * S);
	float *st = malloc(sizeof(float) * 4 * S);
	float *y = out[0].data;
	int err = -ENOMEM;

	if (!lens || !a || !st)
		goto out;
	err = npr_convert(lens, NPR_ELEM_I64, in[p->len].data,
			  in[p->len].type, N);
	if (err) {
		err = npr_node_err(n, err, "sequence_lengths are not integers");
		goto out;
	}
	memset(y, 0, out[0].nbytes);
	for (row = 0; row < N; row++) {
		len = lens[row] < 0 ? 0 : lens[row] > T ? T : lens[row];
		for (d = 0; d < D; d++) {
			bool rev = p->direction == NPR_RNN_REVERSE || d == 1;
			const float *w = (const float *)in[p->w].data +
					 d * G * S * I;
			const float *r = (const float *)in[p->r].data +
					 d * G * S * S;
			const float *b = (const float *)in[p->b].data + d * nb;
			const float *pp = p->p >= 0 ?
					  (const float *)in[p->p].data +
					  d * 3 * S : NULL;
			float *h = st, *c = st + S, *hn = st + 2 * S;
			float *cn = st + 3 * S;
			int64_t k;

			memcpy(h, (const float *)in[p->h].data +
			       (row * D + d) * S, sizeof(float) * S);
			if (p->c >= 0)
				memcpy(c, (const float *)in[p->c].data +
				       (row * D + d) * S, sizeof(float) * S);
			for (k = 0; k < len; k++) {
				t = rev ? len - 1 - k : k;
				step(p, I, (const float *)x->data +
				     (row * T + t) * I, h, c, w, r, b, pp, hn,
				     cn, a);
				memcpy(h, hn, sizeof(float) * S);
				if (p->c >= 0)
					memcpy(c, cn, sizeof(float) * S);
				memcpy(y + ((row * D + d) * T + t) * S, h,
				       sizeof(float) * S);
			}
			memcpy((float *)out[1].data + (row * D + d) * S, h,
			       sizeof(float) * S);
			if (p->c >= 0)
				memcpy((float *)out[2].data +
				       (row * D + d) * S, c,
				       sizeof(float) * S);
		}
	}
	err = 0;
out:
	free(st);
	free(a);
	free(lens);
	return err;
}

/* The op definitions of lib/ops/rnn.c these kernels evaluate. */
const struct npr_kernel npr_kernels_rnn[] = {
	{ "RNNCell", 0, 99, npr_ref_rnn_cell },
	{ "GRUCell", 3, 99, npr_ref_rnn_cell },
	{ "LSTMCell", 1, 3, npr_ref_rnn_cell },
	{ "LSTMCell", 4, 99, npr_ref_rnn_cell },
	{ "RNNSequence", 5, 99, npr_ref_rnn_seq },
	{ "GRUSequence", 5, 99, npr_ref_rnn_seq },
	{ "LSTMSequence", 1, 4, npr_ref_rnn_seq },
	{ "LSTMSequence", 5, 99, npr_ref_rnn_seq },
	{ NULL },
};
