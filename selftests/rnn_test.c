// SPDX-License-Identifier: MIT
/*
 * Recurrent and attention ops, through the public API: small IR models
 * built here in memory (rnn_util.h) run on the cpu device and are checked
 * against closed-form values computed in this file (cells, attention),
 * against the cells run step by step (sequences), and for the errors a
 * wrong shape or direction must give.  The ops with a body
 * (TensorIterator, Loop, If) are in rnn_body_test.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "rnn_util.h"

static double sig(double v)
{
	return 1 / (1 + exp(-v));
}

/* ---- cells ----------------------------------------------------------- */

/*
 * RNNCell, N = 1, I = 2, S = 2:
 *   H'[j] = tanh(W[j][0] x0 + W[j][1] x1 + R[j][0] h0 + R[j][1] h1 + B[j])
 */
TEST_F(rnn, rnn_cell_matches_closed_form)
{
	static const float x[2] = { 1.0f, 2.0f }, h[2] = { 0.5f, -0.5f };
	static const float w[4] = { 0.1f, 0.2f, 0.3f, -0.4f };
	static const float r[4] = { 0.5f, 0.0f, 0.0f, 0.5f };
	static const float b[2] = { 0.1f, -0.1f };
	struct tin in[5] = {
		f32(2, 1, 2, 0, 0, x), f32(2, 1, 2, 0, 0, h),
		f32(2, 2, 2, 0, 0, w), f32(2, 2, 2, 0, 0, r),
		f32(1, 2, 0, 0, 0, b),
	};
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };
	double e0, e1;

	begin(&self->x);
	param(&self->x, 0, "f32", "1,2");
	param(&self->x, 1, "f32", "1,2");
	param(&self->x, 2, "f32", "2,2");
	param(&self->x, 3, "f32", "2,2");
	param(&self->x, 4, "f32", "2");
	layer(&self->x, 5, "RNNCell", "opset3", "hidden_size=\"2\"",
	      "1,2|1,2|2,2|2,2|2", "1,2");
	result(&self->x, 6, "1,2");
	edges(&self->x);
	for (int i = 0; i < 5; i++)
		edge(&self->x, i, 0, 5, i);
	edge(&self->x, 5, 5, 6, 0);
	end(&self->x);
	RUN(5, in, 1, out, cnt);
	e0 = tanh(0.1 * 1 + 0.2 * 2 + 0.5 * 0.5 + 0 * -0.5 + 0.1);
	e1 = tanh(0.3 * 1 - 0.4 * 2 + 0 * 0.5 + 0.5 * -0.5 - 0.1);
	NEAR(y[0], e0);
	NEAR(y[1], e1);
}

TEST_F(rnn, cell_with_a_wrong_weight_shape_fails)
{
	begin(&self->x);
	param(&self->x, 0, "f32", "1,2");
	param(&self->x, 1, "f32", "1,2");
	param(&self->x, 2, "f32", "3,2");
	param(&self->x, 3, "f32", "2,2");
	layer(&self->x, 5, "RNNCell", "opset3", "hidden_size=\"2\"",
	      "1,2|1,2|3,2|2,2", "1,2");
	result(&self->x, 6, "1,2");
	edges(&self->x);
	for (int i = 0; i < 4; i++)
		edge(&self->x, i, 0, 5, i);
	edge(&self->x, 5, 4, 6, 0);
	end(&self->x);
	RUN_FAILS(-EINVAL, "W has shape [3,2], expected [2,2]");
}

/*
 * GRUCell, N = 1, I = 1, S = 1, gates z, r, h (W, R, B [3]):
 *   z = sig(Wz x + Rz h + Bz), r = sig(Wr x + Rr h + Br)
 *   default:             n = tanh(Wh x + Rh (r h) + Bh)
 *   linear_before_reset: n = tanh(Wh x + Wbh + r (Rh h + Rbh))
 *   H' = (1 - z) n + z h
 */
static void gru_cell(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		     bool lbr)
{
	static const float x[1] = { 0.7f }, h[1] = { -0.3f };
	static const float w[3] = { 0.5f, -0.6f, 0.8f };
	static const float r[3] = { 0.2f, 0.9f, -0.4f };
	static const float b[4] = { 0.1f, 0.2f, -0.3f, 0.25f };
	struct tin in[5] = {
		f32(2, 1, 1, 0, 0, x), f32(2, 1, 1, 0, 0, h),
		f32(2, 3, 1, 0, 0, w), f32(2, 3, 1, 0, 0, r),
		f32(1, lbr ? 4 : 3, 0, 0, 0, b),
	};
	float y[1], *out[1] = { y };
	size_t cnt[1] = { 1 };
	double z, rr, nn;

	begin(&self->x);
	param(&self->x, 0, "f32", "1,1");
	param(&self->x, 1, "f32", "1,1");
	param(&self->x, 2, "f32", "3,1");
	param(&self->x, 3, "f32", "3,1");
	param(&self->x, 4, "f32", lbr ? "4" : "3");
	layer(&self->x, 5, "GRUCell", "opset3",
	      lbr ? "hidden_size=\"1\" linear_before_reset=\"true\"" :
		    "hidden_size=\"1\"",
	      lbr ? "1,1|1,1|3,1|3,1|4" : "1,1|1,1|3,1|3,1|3", "1,1");
	result(&self->x, 6, "1,1");
	edges(&self->x);
	for (int i = 0; i < 5; i++)
		edge(&self->x, i, 0, 5, i);
	edge(&self->x, 5, 5, 6, 0);
	end(&self->x);
	RUN(5, in, 1, out, cnt);
	z = sig(0.5 * 0.7 + 0.2 * -0.3 + 0.1);
	rr = sig(-0.6 * 0.7 + 0.9 * -0.3 + 0.2);
	if (lbr)
		nn = tanh(0.8 * 0.7 - 0.3 + rr * (-0.4 * -0.3 + 0.25));
	else
		nn = tanh(0.8 * 0.7 + -0.4 * (rr * -0.3) - 0.3);
	NEAR(y[0], (1 - z) * nn + z * -0.3);
}

TEST_F(rnn, gru_cell_matches_closed_form)
{
	gru_cell(self, _metadata, false);
}

TEST_F(rnn, gru_cell_linear_before_reset_matches_closed_form)
{
	gru_cell(self, _metadata, true);
}

/*
 * LSTMCell, N = 1, I = 1, S = 1, gates f, i, c, o:
 *   f = sig(Wf x + Rf h + Bf), i = sig(Wi x + Ri h + Bi),
 *   g = tanh(Wc x + Rc h + Bc), o = sig(Wo x + Ro h + Bo)
 *   C' = f C + i g, H' = o tanh(C')
 * With clip, every pre-activation is clamped to [-clip, clip] first.
 */
static void lstm_cell(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		      const char *version, double clip)
{
	static const float x[1] = { 0.9f }, h[1] = { 0.4f }, c[1] = { -0.2f };
	static const float w[4] = { 1.5f, -2.0f, 3.0f, 0.5f };
	static const float r[4] = { 0.3f, 0.6f, -0.9f, 1.2f };
	static const float b[4] = { 0.1f, 0.2f, 0.3f, 0.4f };
	struct tin in[6] = {
		f32(2, 1, 1, 0, 0, x), f32(2, 1, 1, 0, 0, h),
		f32(2, 1, 1, 0, 0, c), f32(2, 4, 1, 0, 0, w),
		f32(2, 4, 1, 0, 0, r), f32(1, 4, 0, 0, 0, b),
	};
	float ho[1], co[1], *out[2] = { ho, co };
	size_t cnt[2] = { 1, 1 };
	double pre[4], f, i, g, o, cn;
	char data[80];
	int k;

	snprintf(data, sizeof(data), "hidden_size=\"1\" clip=\"%g\"", clip);
	begin(&self->x);
	param(&self->x, 0, "f32", "1,1");
	param(&self->x, 1, "f32", "1,1");
	param(&self->x, 2, "f32", "1,1");
	param(&self->x, 3, "f32", "4,1");
	param(&self->x, 4, "f32", "4,1");
	param(&self->x, 5, "f32", "4");
	layer(&self->x, 6, "LSTMCell", version, data,
	      "1,1|1,1|1,1|4,1|4,1|4", "1,1|1,1");
	result(&self->x, 7, "1,1");
	result(&self->x, 8, "1,1");
	edges(&self->x);
	for (k = 0; k < 6; k++)
		edge(&self->x, k, 0, 6, k);
	edge(&self->x, 6, 6, 7, 0);
	edge(&self->x, 6, 7, 8, 0);
	end(&self->x);
	RUN(6, in, 2, out, cnt);
	for (k = 0; k < 4; k++) {
		pre[k] = w[k] * 0.9 + r[k] * 0.4 + b[k];
		if (clip > 0)
			pre[k] = fmin(fmax(pre[k], -clip), clip);
	}
	f = sig(pre[0]);
	i = sig(pre[1]);
	g = tanh(pre[2]);
	o = sig(pre[3]);
	cn = f * -0.2 + i * g;
	NEAR(co[0], cn);
	NEAR(ho[0], o * tanh(cn));
}

TEST_F(rnn, lstm_cell_4_matches_closed_form)
{
	lstm_cell(self, _metadata, "opset4", 0);
}

TEST_F(rnn, lstm_cell_1_matches_closed_form)
{
	lstm_cell(self, _metadata, "opset1", 0);
}

TEST_F(rnn, lstm_cell_clip_clamps_the_gates)
{
	lstm_cell(self, _metadata, "opset4", 0.5);
}

/*
 * LSTMCell-1 peepholes P [3] in i, o, f order, N = I = S = 1:
 *   i = sig(Wi x + Ri h + Bi + Pi C), f = sig(Wf x + Rf h + Bf + Pf C),
 *   C' = f C + i tanh(Wc x + Rc h + Bc),
 *   o = sig(Wo x + Ro h + Bo + Po C'), H' = o tanh(C')
 */
TEST_F(rnn, lstm_cell_1_peepholes_match_closed_form)
{
	static const float x[1] = { 0.3f }, h[1] = { -0.6f }, c[1] = { 0.8f };
	static const float w[4] = { 0.2f, -0.7f, 1.1f, 0.4f };
	static const float r[4] = { -0.5f, 0.3f, 0.6f, 0.9f };
	static const float b[4] = { 0.05f, -0.15f, 0.25f, 0.1f };
	static const float pp[3] = { 0.7f, -1.3f, 0.45f };
	struct tin in[7] = {
		f32(2, 1, 1, 0, 0, x), f32(2, 1, 1, 0, 0, h),
		f32(2, 1, 1, 0, 0, c), f32(2, 4, 1, 0, 0, w),
		f32(2, 4, 1, 0, 0, r), f32(1, 4, 0, 0, 0, b),
		f32(1, 3, 0, 0, 0, pp),
	};
	float ho[1], co[1], *out[2] = { ho, co };
	size_t cnt[2] = { 1, 1 };
	double pre[4], f, i, o, cn;
	int k;

	begin(&self->x);
	param(&self->x, 0, "f32", "1,1");
	param(&self->x, 1, "f32", "1,1");
	param(&self->x, 2, "f32", "1,1");
	param(&self->x, 3, "f32", "4,1");
	param(&self->x, 4, "f32", "4,1");
	param(&self->x, 5, "f32", "4");
	param(&self->x, 6, "f32", "3");
	layer(&self->x, 7, "LSTMCell", "opset1", "hidden_size=\"1\"",
	      "1,1|1,1|1,1|4,1|4,1|4|3", "1,1|1,1");
	result(&self->x, 8, "1,1");
	result(&self->x, 9, "1,1");
	edges(&self->x);
	for (k = 0; k < 7; k++)
		edge(&self->x, k, 0, 7, k);
	edge(&self->x, 7, 7, 8, 0);
	edge(&self->x, 7, 8, 9, 0);
	end(&self->x);
	RUN(7, in, 2, out, cnt);
	for (k = 0; k < 4; k++)
		pre[k] = w[k] * 0.3 + r[k] * -0.6 + b[k];
	i = sig(pre[1] + pp[0] * 0.8);
	f = sig(pre[0] + pp[2] * 0.8);
	cn = f * 0.8 + i * tanh(pre[2]);
	o = sig(pre[3] + pp[1] * cn);
	NEAR(co[0], cn);
	NEAR(ho[0], o * tanh(cn));
}

/* ---- sequences against unrolled cells -------------------------------- */

static void reset(FIXTURE_DATA(rnn) *self)
{
	free(self->x.buf);
	memset(&self->x, 0, sizeof(self->x));
}

/*
 * One step of the cell of @kind ("RNN", "GRU", "LSTM") for one batch row,
 * run as a Cell model: h (and c) are updated in place.
 */
static int cell_run(FIXTURE_DATA(rnn) *self, const char *kind, int G,
		    bool lbr, int I, int S, const float *x, float *h,
		    float *c, const float *w, const float *r, const float *b)
{
	bool lstm = !strcmp(kind, "LSTM");
	char type[32], data[80], sx[16], ss[16], sw[16], sr[16], sb[16];
	char ins[128], outs[40];
	struct tin in[6];
	float *out[2] = { h, c };
	size_t cnt[2] = { (size_t)S, (size_t)S };
	float hc[2][64];
	int k = 0, i;

	reset(self);
	snprintf(type, sizeof(type), "%sCell", kind);
	snprintf(data, sizeof(data), "hidden_size=\"%d\"%s", S,
		 lbr ? " linear_before_reset=\"true\"" : "");
	snprintf(sx, sizeof(sx), "1,%d", I);
	snprintf(ss, sizeof(ss), "1,%d", S);
	snprintf(sw, sizeof(sw), "%d,%d", G * S, I);
	snprintf(sr, sizeof(sr), "%d,%d", G * S, S);
	snprintf(sb, sizeof(sb), "%d", (G + lbr) * S);
	memcpy(hc[0], h, sizeof(float) * S);
	if (lstm)
		memcpy(hc[1], c, sizeof(float) * S);
	in[k++] = f32(2, 1, I, 0, 0, x);
	in[k++] = f32(2, 1, S, 0, 0, hc[0]);
	if (lstm)
		in[k++] = f32(2, 1, S, 0, 0, hc[1]);
	in[k++] = f32(2, G * S, I, 0, 0, w);
	in[k++] = f32(2, G * S, S, 0, 0, r);
	in[k++] = f32(1, (G + lbr) * S, 0, 0, 0, b);
	begin(&self->x);
	param(&self->x, 0, "f32", sx);
	param(&self->x, 1, "f32", ss);
	if (lstm)
		param(&self->x, 2, "f32", ss);
	param(&self->x, k - 3, "f32", sw);
	param(&self->x, k - 2, "f32", sr);
	param(&self->x, k - 1, "f32", sb);
	snprintf(ins, sizeof(ins), "%s|%s|%s%s%s|%s|%s", sx, ss,
		 lstm ? ss : "", lstm ? "|" : "", sw, sr, sb);
	snprintf(outs, sizeof(outs), "%s%s%s", ss, lstm ? "|" : "",
		 lstm ? ss : "");
	layer(&self->x, 10, type, lstm ? "opset4" : "opset3", data, ins,
	      outs);
	result(&self->x, 11, ss);
	if (lstm)
		result(&self->x, 12, ss);
	edges(&self->x);
	for (i = 0; i < k; i++)
		edge(&self->x, i, 0, 10, i);
	edge(&self->x, 10, k, 11, 0);
	if (lstm)
		edge(&self->x, 10, k + 1, 12, 0);
	end(&self->x);
	return run(self, k, in, lstm ? 2 : 1, out, cnt);
}

struct seq_case {
	const char *kind;
	const char *dir;
	int lens[2];
	bool lbr;	/* GRU linear_before_reset: B has 4 * S */
};

/* N = 2, T = 3, I = 2, S = 2. */
static void seq_matches_cells(FIXTURE_DATA(rnn) *self,
			      struct npr_test *_metadata,
			      const struct seq_case *sc)
{
	enum { N = 2, T = 3, I = 2, S = 2 };
	bool lstm = !strcmp(sc->kind, "LSTM");
	int G = lstm ? 4 : !strcmp(sc->kind, "GRU") ? 3 : 1;
	int D = !strcmp(sc->dir, "bidirectional") ? 2 : 1, NB = G + sc->lbr;
	float x[N * T * I], h0[N * 2 * S], c0[N * 2 * S];
	float w[2 * 4 * S * I], r[2 * 4 * S * S], b[2 * 4 * S];
	float ey[N * 2 * T * S], eh[N * 2 * S], ec[N * 2 * S];
	float y[N * 2 * T * S], ho[N * 2 * S], co[N * 2 * S];
	float *out[3] = { y, ho, co };
	size_t cnt[3] = { (size_t)N * D * T * S, (size_t)N * D * S,
			  (size_t)N * D * S };
	int32_t lens[N] = { sc->lens[0], sc->lens[1] };
	char type[32], data[96], s[8][32], ins[256], outs[96];
	struct tin in[7];
	int row, d, t, k = 0, i;

	fill(x, N * T * I, 1);
	fill(h0, N * 2 * S, 2);
	fill(c0, N * 2 * S, 3);
	fill(w, 2 * 4 * S * I, 4);
	fill(r, 2 * 4 * S * S, 5);
	fill(b, 2 * 4 * S, 6);
	memset(ey, 0, sizeof(ey));
	for (row = 0; row < N; row++) {
		for (d = 0; d < D; d++) {
			bool rev = !strcmp(sc->dir, "reverse") || d == 1;
			float h[S], c[S];

			memcpy(h, h0 + (row * D + d) * S, sizeof(h));
			memcpy(c, c0 + (row * D + d) * S, sizeof(c));
			for (i = 0; i < lens[row]; i++) {
				int rc;

				t = rev ? lens[row] - 1 - i : i;
				rc = cell_run(self, sc->kind, G, sc->lbr, I,
					      S, x + (row * T + t) * I, h, c,
					      w + d * G * S * I,
					      r + d * G * S * S, b + d * NB * S);
				if (rc)
					TH_LOG("cell: %s", npr_last_error());
				ASSERT_EQ(rc, 0);
				memcpy(ey + ((row * D + d) * T + t) * S, h,
				       sizeof(h));
			}
			memcpy(eh + (row * D + d) * S, h, sizeof(h));
			memcpy(ec + (row * D + d) * S, c, sizeof(c));
		}
	}
	reset(self);
	snprintf(type, sizeof(type), "%sSequence", sc->kind);
	snprintf(data, sizeof(data), "hidden_size=\"%d\" direction=\"%s\"%s",
		 S, sc->dir, sc->lbr ? " linear_before_reset=\"true\"" : "");
	snprintf(s[0], 32, "%d,%d,%d", N, T, I);
	snprintf(s[1], 32, "%d,%d,%d", N, D, S);
	snprintf(s[2], 32, "%d", N);
	snprintf(s[3], 32, "%d,%d,%d", D, G * S, I);
	snprintf(s[4], 32, "%d,%d,%d", D, G * S, S);
	snprintf(s[5], 32, "%d,%d", D, NB * S);
	snprintf(s[6], 32, "%d,%d,%d,%d", N, D, T, S);
	begin(&self->x);
	in[k] = f32(3, N, T, I, 0, x);
	param(&self->x, k++, "f32", s[0]);
	in[k] = f32(3, N, D, S, 0, h0);
	param(&self->x, k++, "f32", s[1]);
	if (lstm) {
		in[k] = f32(3, N, D, S, 0, c0);
		param(&self->x, k++, "f32", s[1]);
	}
	in[k] = f32(1, N, 0, 0, 0, NULL);
	in[k].type = NPR_ELEM_I32;
	in[k].data = lens;
	param(&self->x, k++, "i32", s[2]);
	in[k] = f32(3, D, G * S, I, 0, w);
	param(&self->x, k++, "f32", s[3]);
	in[k] = f32(3, D, G * S, S, 0, r);
	param(&self->x, k++, "f32", s[4]);
	in[k] = f32(2, D, NB * S, 0, 0, b);
	param(&self->x, k++, "f32", s[5]);
	snprintf(ins, sizeof(ins), "%s|%s|%s%s%s|%s|%s|%s", s[0], s[1],
		 lstm ? s[1] : "", lstm ? "|" : "", s[2], s[3], s[4], s[5]);
	snprintf(outs, sizeof(outs), "%s|%s%s%s", s[6], s[1],
		 lstm ? "|" : "", lstm ? s[1] : "");
	layer(&self->x, 10, type, "opset5", data, ins, outs);
	result(&self->x, 11, s[6]);
	result(&self->x, 12, s[1]);
	if (lstm)
		result(&self->x, 13, s[1]);
	edges(&self->x);
	for (i = 0; i < k; i++)
		edge(&self->x, i, 0, 10, i);
	for (i = 0; i < (lstm ? 3 : 2); i++)
		edge(&self->x, 10, k + i, 11 + i, 0);
	end(&self->x);
	RUN(k, in, lstm ? 3 : 2, out, cnt);
	for (i = 0; i < (int)cnt[0]; i++)
		NEAR(y[i], ey[i]);
	for (i = 0; i < (int)cnt[1]; i++)
		NEAR(ho[i], eh[i]);
	for (i = 0; lstm && i < (int)cnt[2]; i++)
		NEAR(co[i], ec[i]);
}

TEST_F(rnn, lstm_sequence_forward_equals_unrolled_cells)
{
	struct seq_case sc = { "LSTM", "forward", { 3, 3 } };

	seq_matches_cells(self, _metadata, &sc);
}

TEST_F(rnn, lstm_sequence_reverse_equals_unrolled_cells)
{
	struct seq_case sc = { "LSTM", "reverse", { 3, 3 } };

	seq_matches_cells(self, _metadata, &sc);
}

TEST_F(rnn, lstm_sequence_bidirectional_with_short_lengths_equals_cells)
{
	struct seq_case sc = { "LSTM", "bidirectional", { 2, 1 } };

	seq_matches_cells(self, _metadata, &sc);
}

TEST_F(rnn, gru_sequence_bidirectional_equals_unrolled_cells)
{
	struct seq_case sc = { "GRU", "bidirectional", { 3, 2 } };

	seq_matches_cells(self, _metadata, &sc);
}

TEST_F(rnn, gru_sequence_linear_before_reset_equals_unrolled_cells)
{
	struct seq_case sc = { "GRU", "reverse", { 2, 3 }, true };

	seq_matches_cells(self, _metadata, &sc);
}

TEST_F(rnn, rnn_sequence_reverse_with_short_lengths_equals_cells)
{
	struct seq_case sc = { "RNN", "reverse", { 1, 3 } };

	seq_matches_cells(self, _metadata, &sc);
}

TEST_F(rnn, sequence_with_a_bad_direction_fails)
{
	begin(&self->x);
	param(&self->x, 0, "f32", "1,1,1");
	param(&self->x, 1, "f32", "1,1,1");
	param(&self->x, 2, "i32", "1");
	param(&self->x, 3, "f32", "1,1,1");
	param(&self->x, 4, "f32", "1,1,1");
	param(&self->x, 5, "f32", "1,1");
	layer(&self->x, 6, "RNNSequence", "opset5",
	      "hidden_size=\"1\" direction=\"sideways\"",
	      "1,1,1|1,1,1|1|1,1,1|1,1,1|1,1", "1,1,1,1|1,1,1");
	result(&self->x, 7, "1,1,1,1");
	result(&self->x, 8, "1,1,1");
	edges(&self->x);
	for (int i = 0; i < 6; i++)
		edge(&self->x, i, 0, 6, i);
	edge(&self->x, 6, 6, 7, 0);
	edge(&self->x, 6, 7, 8, 0);
	end(&self->x);
	RUN_FAILS(-EINVAL, "direction=\"sideways\"");
}

/* ---- ScaledDotProductAttention -------------------------------------- */

enum { H = 2, L = 2, S = 3, E = 3, EV = 2 };

/*
 * softmax(Q K^T * scale + bias) V written out: Q [1, H, L, E], K
 * [1, 1, S, E] (shared by the heads), V [1, H, S, EV]; bias -inf where
 * causal hides key j > query l or a boolean mask [L, S] is false, else
 * the float mask [L, S] (or 0).
 */
static void sdpa_expect(const float *q, const float *k, const float *v,
			const float *fmask, const uint8_t *bmask, bool causal,
			double scale, double *o)
{
	int h, l, j, e;

	for (h = 0; h < H; h++) {
		for (l = 0; l < L; l++) {
			double sc[S], mx = -INFINITY, sum = 0;

			for (j = 0; j < S; j++) {
				double d = 0;

				for (e = 0; e < E; e++)
					d += q[(h * L + l) * E + e] *
					     k[j * E + e];
				sc[j] = d * scale;
				if (causal && j > l)
					sc[j] = -INFINITY;
				else if (bmask && !bmask[l * S + j])
					sc[j] = -INFINITY;
				else if (fmask)
					sc[j] += fmask[l * S + j];
				mx = fmax(mx, sc[j]);
			}
			for (j = 0; j < S; j++)
				sum += exp(sc[j] - mx);
			for (e = 0; e < EV; e++) {
				double acc = 0;

				for (j = 0; j < S; j++)
					acc += exp(sc[j] - mx) / sum *
					       v[(h * S + j) * EV + e];
				o[(h * L + l) * EV + e] = acc;
			}
		}
	}
}

/* @mask: NULL, "f32" or "boolean" ([L, S]); @scale: use a scale input. */
static void sdpa_runs(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		      const char *mask, bool causal, bool scale)
{
	float q[H * L * E], k[S * E], v[H * S * EV], fm[L * S];
	float sc = 0.5f, y[H * L * EV], *out[1] = { y };
	uint8_t bm[L * S] = { 1, 0, 1, 1, 1, 0 };
	size_t cnt[1] = { H * L * EV };
	struct tin in[5] = {
		f32(4, 1, H, L, E, q), f32(4, 1, 1, S, E, k),
		f32(4, 1, H, S, EV, v), f32(2, L, S, 0, 0, fm),
		f32(0, 0, 0, 0, 0, &sc),
	};
	double ey[H * L * EV];
	char data[40], ins[96];
	int nin = 3 + (mask != NULL) + scale, i;

	fill(q, H * L * E, 11);
	fill(k, S * E, 12);
	fill(v, H * S * EV, 13);
	fill(fm, L * S, 14);
	if (mask && !strcmp(mask, "boolean")) {
		in[3].type = NPR_ELEM_BOOLEAN;
		in[3].data = bm;
	}
	snprintf(data, sizeof(data), "causal=\"%s\"", causal ? "true" : "false");
	snprintf(ins, sizeof(ins), "1,2,2,3|1,1,3,3|1,2,3,2%s%s",
		 mask ? "|2,3" : "", scale ? "|-" : "");
	begin(&self->x);
	param(&self->x, 0, "f32", "1,2,2,3");
	param(&self->x, 1, "f32", "1,1,3,3");
	param(&self->x, 2, "f32", "1,2,3,2");
	if (mask)
		param(&self->x, 3, mask, "2,3");
	if (scale)
		param(&self->x, 4, "f32", "");
	layer(&self->x, 5, "ScaledDotProductAttention", "opset13", data, ins,
	      "1,2,2,2");
	result(&self->x, 6, "1,2,2,2");
	edges(&self->x);
	for (i = 0; i < 3; i++)
		edge(&self->x, i, 0, 5, i);
	if (mask)
		edge(&self->x, 3, 0, 5, 3);
	if (scale)
		edge(&self->x, 4, 0, 5, 3 + (mask != NULL));
	edge(&self->x, 5, nin, 6, 0);
	end(&self->x);
	if (scale && !mask)
		in[3] = in[4];
	RUN(nin, in, 1, out, cnt);
	sdpa_expect(q, k, v,
		    mask && !causal && !strcmp(mask, "f32") ? fm : NULL,
		    mask && !causal && !strcmp(mask, "boolean") ? bm : NULL,
		    causal, scale ? 0.5 : 1 / sqrt((double)E), ey);
	for (i = 0; i < H * L * EV; i++)
		NEAR(y[i], ey[i]);
}

TEST_F(rnn, sdpa_without_mask_matches_softmax_qk_v)
{
	sdpa_runs(self, _metadata, NULL, false, false);
}

TEST_F(rnn, sdpa_with_float_mask_and_scale_matches_softmax_qk_v)
{
	sdpa_runs(self, _metadata, "f32", false, true);
}

TEST_F(rnn, sdpa_with_boolean_mask_hides_false_keys)
{
	sdpa_runs(self, _metadata, "boolean", false, false);
}

TEST_F(rnn, sdpa_causal_ignores_the_mask)
{
	sdpa_runs(self, _metadata, "f32", true, false);
}

TEST_F(rnn, sdpa_with_a_mask_that_does_not_broadcast_fails)
{
	begin(&self->x);
	param(&self->x, 0, "f32", "1,2,2,3");
	param(&self->x, 1, "f32", "1,1,3,3");
	param(&self->x, 2, "f32", "1,2,3,2");
	param(&self->x, 3, "f32", "4,3");
	layer(&self->x, 5, "ScaledDotProductAttention", "opset13",
	      "causal=\"false\"", "1,2,2,3|1,1,3,3|1,2,3,2|4,3", "1,2,2,2");
	result(&self->x, 6, "1,2,2,2");
	edges(&self->x);
	for (int i = 0; i < 4; i++)
		edge(&self->x, i, 0, 5, i);
	edge(&self->x, 5, 4, 6, 0);
	end(&self->x);
	RUN_FAILS(-EINVAL, "attention_mask [4,3] does not broadcast to [1,2,2,3]");
}

TEST_HARNESS_MAIN
