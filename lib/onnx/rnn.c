// SPDX-License-Identifier: MIT
/*
 * ONNX translators: recurrent layers.  RNN, GRU and LSTM become
 * RNNSequence-5, GRUSequence-5 and LSTMSequence-5 (LSTMSequence-1 when
 * the LSTM has peepholes P or input_forget).
 *
 * Where the two differ, helper nodes adapt (all folded at compile time
 * when the weights are constants):
 *  - layout 0 (the default) is time-major: X [T, N, I], initial states
 *    and Y_h/Y_c [D, N, S], Y [T, D, N, S]; layout 1 is batch-major: X
 *    [N, T, I], states [N, D, S], Y [N, T, D, S].  The OpenVINO ops take
 *    X [N, T, I], states [N, D, S] and give Y [N, D, T, S]: Transposes on
 *    the way in and out.
 *  - LSTM gates are "iofc" in ONNX and "fico" in OpenVINO: a Gather along
 *    the gate axis of W, R and B reorders them (GRU "zrh" and RNN agree).
 *  - ONNX B is [D, 2 * G * S], input and recurrent biases side by side;
 *    OpenVINO B is their sum [D, G * S], except that a GRU with
 *    linear_before_reset keeps the recurrent bias of the hidden gate
 *    apart: [D, 4 * S].  A missing B is zeros.
 *  - missing sequence_lens is T for every batch row (from the shape of
 *    X); missing initial states are zeros [N, D, S].
 * Peepholes P are "iof" in both.  Activations may be Sigmoid, Tanh and
 * Relu; a bidirectional layer must use the same ones both ways.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "translate.h"

enum { KIND_RNN, KIND_GRU, KIND_LSTM };

/* Gather along axis 1 of @x with constant indices @idx [n]. */
static int gather1(struct onnx_ctx *c, int x, const int64_t *idx, int64_t n,
		   const char *suffix)
{
	struct npr_shape s = { .rank = 1, .d = { n } }, sc = { .rank = 0 };
	int64_t one = 1;
	int in[3], node, out;

	in[0] = x;
	in[1] = npr_onnx_const(c, NPR_ELEM_I64, &s, idx, suffix);
	in[2] = npr_onnx_const(c, NPR_ELEM_I64, &sc, &one, suffix);
	if (in[1] < 0 || in[2] < 0)
		return in[1] < 0 ? in[1] : in[2];
	node = npr_onnx_node(c, "Gather", 8, suffix, 3, in, 1, &out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "batch_dims", "0");
	return node < 0 ? node : out;
}

/* The gate order of OpenVINO from ONNX's: index list over G * S rows. */
static int64_t *gate_index(int kind, int64_t S, int64_t base)
{
	static const int lstm[4] = { 2, 0, 3, 1 };	/* f i c o in iofc */
	int G = kind == KIND_LSTM ? 4 : kind == KIND_GRU ? 3 : 1, g;
	int64_t *idx = malloc(sizeof(int64_t) * G * S), j;

	if (!idx)
		return NULL;
	for (g = 0; g < G; g++)
		for (j = 0; j < S; j++)
			idx[g * S + j] = base +
				(kind == KIND_LSTM ? lstm[g] : g) * S + j;
	return idx;
}

static int transpose(struct onnx_ctx *c, int x, const int64_t *perm, int n,
		     const char *suffix)
{
	struct npr_shape xs = *onnx_vshape(c, x), s = { .rank = n };
	int out, i;

	out = npr_onnx_with_list(c, "Transpose", x, perm, n, suffix);
	if (out < 0)
		return out;
	for (i = 0; i < n; i++)
		s.d[i] = xs.rank == n ? xs.d[perm[i]] : -1;
	c->g->vals[out].shape = s;
	return out;
}

/* W or R with the gates in OpenVINO's order. */
static int weights(struct onnx_ctx *c, int kind, int v, int64_t S,
		   const char *suffix)
{
	int64_t *idx;
	int out;

	if (kind != KIND_LSTM)
		return v;
	idx = gate_index(kind, S, 0);
	if (!idx)
		return -ENOMEM;
	out = gather1(c, v, idx, 4 * S, suffix);
	free(idx);
	return out;
}

/* OpenVINO's B [D, nb] from ONNX's B [D, 2 * G * S], or zeros. */
static int bias(struct onnx_ctx *c, int kind, int b, int64_t D, int64_t S,
		bool lbr)
{
	int G = kind == KIND_LSTM ? 4 : kind == KIND_GRU ? 3 : 1;
	int64_t nb = (lbr ? G + 1 : G) * S, *idx, j;
	struct npr_shape s = { .rank = 2, .d = { D, nb } };
	int wb, rb, z, in[2], node;
	void *zeros;

	if (b < 0) {
		zeros = calloc(D * nb, sizeof(float));
		if (!zeros)
			return -ENOMEM;
		return npr_onnx_const_take(c, NPR_ELEM_F32, &s, zeros,
					   D * nb * sizeof(float), "B");
	}
	idx = gate_index(kind, S, 0);
	if (!idx)
		return -ENOMEM;
	if (lbr) {
		/* [Wbz, Wbr, Wbh, Rbh] + [Rbz, Rbr, 0, 0] */
		int64_t *all = malloc(sizeof(int64_t) * 4 * S);

		if (!all) {
			free(idx);
			return -ENOMEM;
		}
		for (j = 0; j < 3 * S; j++)
			all[j] = j;
		for (j = 0; j < S; j++)
			all[3 * S + j] = 5 * S + j;
		wb = gather1(c, b, all, 4 * S, "Bw");
		for (j = 0; j < 2 * S; j++)
			all[j] = 3 * S + j;
		rb = wb < 0 ? wb : gather1(c, b, all, 2 * S, "Br");
		free(all);
		free(idx);
		if (rb < 0)
			return rb;
		s.d[1] = 2 * S;
		zeros = calloc(D * 2 * S, sizeof(float));
		if (!zeros)
			return -ENOMEM;
		z = npr_onnx_const_take(c, NPR_ELEM_F32, &s, zeros,
					D * 2 * S * sizeof(float), "Bz");
		if (z < 0)
			return z;
		in[0] = rb;
		in[1] = z;
		node = npr_onnx_node(c, "Concat", 1, "Br4", 2, in, 1, &rb);
		if (node < 0)
			return node;
		node = npr_onnx_set_attr(c, node, "axis", "1");
		if (node < 0)
			return node;
		return npr_onnx_binary(c, "Add", wb, rb, "B");
	}
	wb = gather1(c, b, idx, G * S, "Bw");
	for (j = 0; j < G * S; j++)
		idx[j] += G * S;
	rb = wb < 0 ? wb : gather1(c, b, idx, G * S, "Br");
	free(idx);
	if (rb < 0)
		return rb;
	return npr_onnx_binary(c, "Add", wb, rb, "B");
}

/* Zeros [N, D, S], N from @shape (the i64 shape of X as [N, T, I]). */
static int zero_state(struct onnx_ctx *c, int shape, int64_t D, int64_t S,
		      const char *suffix)
{
	int64_t b = 0, e = 1, ds[2] = { D, S }, z = 0;
	int in[3], n, node, out;

	n = npr_onnx_strided(c, shape, &b, &e, NULL, &z, &z, 1, suffix);
	if (n < 0)
		return n;
	in[0] = n;
	in[1] = npr_onnx_const_i64(c, ds, 2, suffix);
	if (in[1] < 0)
		return in[1];
	node = npr_onnx_node(c, "Concat", 1, suffix, 2, in, 1, &in[1]);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "axis", "0");
	if (node < 0)
		return node;
	in[0] = npr_onnx_scalar(c, -1, 0.0, suffix);
	if (in[0] < 0)
		return in[0];
	node = npr_onnx_node(c, "Broadcast", 3, suffix, 2, in, 1, &out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "mode", "numpy");
	return node < 0 ? node : out;
}

/* sequence_lens for every row: T, from the i64 shape of X [N, T, I]. */
static int full_lengths(struct onnx_ctx *c, int shape)
{
	int64_t b0 = 0, e0 = 1, b1 = 1, e1 = 2, z = 0;
	int in[2], node, out;

	in[1] = npr_onnx_strided(c, shape, &b0, &e0, NULL, &z, &z, 1, "N");
	in[0] = in[1] < 0 ? in[1] :
		npr_onnx_strided(c, shape, &b1, &e1, NULL, &z, &z, 1, "T");
	if (in[0] < 0)
		return in[0];
	node = npr_onnx_node(c, "Broadcast", 3, "sequence_lens", 2, in, 1,
			     &out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "mode", "numpy");
	return node < 0 ? node : out;
}

/* The activations attribute as "sigmoid,tanh", checked; "" if absent. */
static int activations(struct onnx_ctx *c, int nact, int64_t D, char *buf,
		       size_t len)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, "activations");
	size_t i, off = 0, k;

	buf[0] = 0;
	if (!a)
		return 0;
	if (a->n_strings != (size_t)(nact * D))
		return npr_onnx_err(c, -EINVAL,
				    "activations has %zu entries, %lld expected",
				    a->n_strings, (long long)(nact * D));
	for (i = 0; i < a->n_strings; i++) {
		const ProtobufCBinaryData *s = &a->strings[i];

		if (!s->len || s->len > 16)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "activation %zu is not supported", i);
		if (i >= (size_t)nact) {
			const ProtobufCBinaryData *f = &a->strings[i - nact];

			if (f->len != s->len ||
			    strncasecmp((const char *)f->data,
					(const char *)s->data, s->len))
				return npr_onnx_err(c, -EOPNOTSUPP,
						    "different activations per direction are not supported");
			continue;
		}
		if (off + s->len + 2 > len)
			return npr_onnx_err(c, -EINVAL, "activations too long");
		if (i)
			buf[off++] = ',';
		for (k = 0; k < s->len; k++)
			buf[off++] = (char)tolower(s->data[k]);
		buf[off] = 0;
	}
	return 0;
}

static int tr_recurrent(struct onnx_ctx *c, int *out)
{
	static const char *const ov[] = {
		"RNNSequence", "GRUSequence", "LSTMSequence",
	};
	static const int64_t tnd[3] = { 1, 0, 2 };
	int kind = c->op->arg, nact = kind + 1;
	int64_t S, D = 1, layout, lbr = 0, forget = 0;
	int x, w, r, b, len, h, cc = -1, p, shape, node, in[8], nin, o[3];
	char dir[32], acts[128];
	double clip;
	int err;
	unsigned int ver = 5;

	err = npr_onnx_attr_int(c, "hidden_size", -1, &S);
	if (!err)
		err = npr_onnx_attr_int(c, "layout", 0, &layout);
	if (!err)
		err = npr_onnx_attr_float(c, "clip", 0.0, &clip);
	if (!err)
		err = npr_onnx_attr_str(c, "direction", "forward", dir,
					sizeof(dir));
	if (!err && kind == KIND_GRU)
		err = npr_onnx_attr_int(c, "linear_before_reset", 0, &lbr);
	if (!err && kind == KIND_LSTM)
		err = npr_onnx_attr_int(c, "input_forget", 0, &forget);
	if (err)
		return err;
	if (S < 1 || S > (1 << 24))
		return npr_onnx_err(c, -EINVAL,
				    "hidden_size %lld is missing or out of range",
				    (long long)S);
	{
		/* W [D, G * S, I]: refuse a hidden_size it cannot have */
		const struct npr_shape *ws = onnx_vshape(c, c->vin[1]);
		int64_t rows = (kind == KIND_LSTM ? 4 : kind == KIND_GRU ? 3 :
				1) * S;

		if (ws->rank == 3 && ws->d[1] >= 0 && ws->d[1] != rows)
			return npr_onnx_err(c, -EINVAL,
					    "W has %lld rows, hidden_size %lld needs %lld",
					    (long long)ws->d[1], (long long)S,
					    (long long)rows);
	}
	if (layout != 0 && layout != 1)
		return npr_onnx_err(c, -EINVAL, "layout %lld",
				    (long long)layout);
	if (!strcmp(dir, "bidirectional"))
		D = 2;
	else if (strcmp(dir, "forward") && strcmp(dir, "reverse"))
		return npr_onnx_err(c, -EINVAL, "direction \"%s\"", dir);
	if (!(clip >= 0))
		return npr_onnx_err(c, -EINVAL, "clip %g is negative", clip);
	err = activations(c, nact, D, acts, sizeof(acts));
	if (err)
		return err;

	x = onnx_need(c, 0);
	if (x < 0)
		return x;
	if (!layout) {
		x = transpose(c, x, tnd, 3, "X");
		if (x < 0)
			return x;
	}
	shape = npr_onnx_shape_of(c, x, "shape");
	w = shape < 0 ? shape : weights(c, kind, c->vin[1], S, "W");
	r = w < 0 ? w : weights(c, kind, c->vin[2], S, "R");
	b = r < 0 ? r : bias(c, kind, onnx_in(c, 3), D, S, lbr != 0);
	if (b < 0)
		return b;
	len = onnx_in(c, 4);
	if (len < 0)
		len = full_lengths(c, shape);
	h = onnx_in(c, 5);
	if (h >= 0 && !layout)
		h = transpose(c, h, tnd, 3, "initial_h");
	else if (h < 0)
		h = zero_state(c, shape, D, S, "initial_h");
	if (len < 0 || h < 0)
		return len < 0 ? len : h;
	if (kind == KIND_LSTM) {
		cc = onnx_in(c, 6);
		if (cc >= 0 && !layout)
			cc = transpose(c, cc, tnd, 3, "initial_c");
		else if (cc < 0)
			cc = zero_state(c, shape, D, S, "initial_c");
		if (cc < 0)
			return cc;
	}
	p = kind == KIND_LSTM ? onnx_in(c, 7) : -1;
	if (p >= 0 || forget)
		ver = 1;
	nin = 0;
	in[nin++] = x;
	in[nin++] = h;
	if (kind == KIND_LSTM)
		in[nin++] = cc;
	in[nin++] = len;
	in[nin++] = w;
	in[nin++] = r;
	in[nin++] = b;
	if (p >= 0)
		in[nin++] = p;
	node = npr_onnx_node(c, ov[kind], ver, NULL, nin, in,
			     kind == KIND_LSTM ? 3 : 2, o);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "hidden_size", "%lld", (long long)S);
	if (!err)
		err = npr_onnx_set_attr(c, node, "direction", "%s", dir);
	if (!err && clip > 0)
		err = npr_onnx_set_attr(c, node, "clip", "%.9g", clip);
	if (!err && acts[0])
		err = npr_onnx_set_attr(c, node, "activations", "%s", acts);
	if (!err && kind == KIND_GRU)
		err = npr_onnx_set_attr(c, node, "linear_before_reset", "%s",
					onnx_tf(lbr));
	if (!err && ver == 1)
		err = npr_onnx_set_attr(c, node, "input_forget", "%s",
					onnx_tf(forget));
	if (err)
		return err;
	{
		static const int64_t y0[4] = { 2, 1, 0, 3 };
		static const int64_t y1[4] = { 0, 2, 1, 3 };
		int k;

		out[0] = transpose(c, o[0], layout ? y1 : y0, 4, "Y");
		if (out[0] < 0)
			return out[0];
		for (k = 1; k < (kind == KIND_LSTM ? 3 : 2); k++) {
			out[k] = layout ? o[k] :
				 transpose(c, o[k], tnd, 3,
					   k == 1 ? "Y_h" : "Y_c");
			if (out[k] < 0)
				return out[k];
		}
	}
	return 0;
}

const struct onnx_op npr_onnx_ops_rnn[] = {
	{ "RNN", tr_recurrent, 3, 6, 2, NULL, KIND_RNN },
	{ "GRU", tr_recurrent, 3, 6, 2, NULL, KIND_GRU },
	{ "LSTM", tr_recurrent, 3, 8, 3, NULL, KIND_LSTM },
	{ NULL },
};
