// SPDX-License-Identifier: MIT
/*
 * Recurrent, control-flow and attention ops, through the public API:
 * small IR models built here in memory run on the cpu device and are
 * checked against closed-form values computed in this file (cells,
 * attention), against the same computation unrolled by hand (sequences,
 * TensorIterator, Loop), and for the errors a broken body must give.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "harness.h"
#include "xb.h"
#include "npuring.h"

/* ---- building models -------------------------------------------------- */

static void begin(struct xb *b)
{
	xb_add(b, "<?xml version=\"1.0\"?>\n<net name=\"t\" version=\"11\">\n<layers>\n");
}

static const char *precision(const char *et)
{
	return !strcmp(et, "f32") ? "FP32" : !strcmp(et, "i32") ? "I32" :
	       !strcmp(et, "i64") ? "I64" : !strcmp(et, "f16") ? "FP16" :
	       "BOOL";
}

static void param(struct xb *b, int id, const char *et, const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"p%d\" type=\"Parameter\" version=\"opset1\">"
	       "<data shape=\"%s\" element_type=\"%s\"/><output><port id=\"0\" precision=\"%s\">",
	       id, id, dims, et, precision(et));
	xb_dims_n(b, dims, strlen(dims));
	xb_add(b, "</port></output></layer>\n");
}

static void konst(struct xb *b, int id, const char *et, const char *dims,
		  size_t offset, size_t size)
{
	xb_add(b, "<layer id=\"%d\" name=\"c%d\" type=\"Const\" version=\"opset1\">"
	       "<data element_type=\"%s\" shape=\"%s\" offset=\"%zu\" size=\"%zu\"/>"
	       "<output><port id=\"0\" precision=\"%s\">", id, id, et, dims,
	       offset, size, precision(et));
	xb_dims_n(b, dims, strlen(dims));
	xb_add(b, "</port></output></layer>\n");
}

/* Ports' dims separated by '|' ("-" for a scalar port). */
static int ports(struct xb *b, const char *spec, int first, bool out)
{
	const char *p = spec;
	int id = first;

	if (!*spec)
		return 0;
	for (;;) {
		size_t n = strcspn(p, "|");

		xb_add(b, "<port id=\"%d\"%s>", id++,
		       out ? " precision=\"FP32\"" : "");
		if (!(n == 1 && *p == '-'))
			xb_dims_n(b, p, n);
		xb_add(b, "</port>");
		p += n;
		if (!*p)
			break;
		p++;
	}
	return id - first;
}

/*
 * A layer; input ports are numbered from 0, output ports follow.  @data
 * is the attribute text of <data>, NULL for none.  Returns the id of the
 * first output port.  @extra (may be NULL) goes after the ports: bodies.
 */
static int layer_x(struct xb *b, int id, const char *type, const char *ver,
		   const char *data, const char *ins, const char *outs,
		   const char *extra)
{
	int nin;

	xb_add(b, "<layer id=\"%d\" name=\"l%d\" type=\"%s\" version=\"%s\">",
	       id, id, type, ver);
	if (data)
		xb_add(b, "<data %s/>", data);
	xb_add(b, "<input>");
	nin = ports(b, ins, 0, false);
	xb_add(b, "</input><output>");
	ports(b, outs, nin, true);
	xb_add(b, "</output>%s</layer>\n", extra ? extra : "");
	return nin;
}

static int layer(struct xb *b, int id, const char *type, const char *ver,
		 const char *data, const char *ins, const char *outs)
{
	return layer_x(b, id, type, ver, data, ins, outs, NULL);
}

static void result(struct xb *b, int id, const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"r%d\" type=\"Result\" version=\"opset1\">"
	       "<input><port id=\"0\">", id, id);
	xb_dims_n(b, dims, strlen(dims));
	xb_add(b, "</port></input></layer>\n");
}

static void edges(struct xb *b)
{
	xb_add(b, "</layers>\n<edges>\n");
}

static void edge(struct xb *b, int fl, int fp, int tl, int tp)
{
	xb_add(b, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n",
	       fl, fp, tl, tp);
}

static void end(struct xb *b)
{
	xb_add(b, "</edges>\n</net>\n");
}

/* ---- running ------------------------------------------------------------ */

/* An input tensor: element type, dims, data. */
struct tin {
	unsigned int type;
	int rank;
	int64_t d[6];
	const void *data;
};

FIXTURE(rnn) {
	int fd;
	struct xb x;
	const void *bin;
	size_t bin_len;
};

FIXTURE_SETUP(rnn)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	memset(&self->x, 0, sizeof(self->x));
	self->bin = NULL;
	self->bin_len = 0;
}

FIXTURE_TEARDOWN(rnn)
{
	free(self->x.buf);
	if (self->fd >= 0)
		npr_close(self->fd);
}

static size_t tin_bytes(const struct tin *t)
{
	size_t n = t->type == NPR_ELEM_I64 ? 8 :
		   t->type == NPR_ELEM_BOOLEAN ? 1 : 4;
	int i;

	for (i = 0; i < t->rank; i++)
		n *= (size_t)t->d[i];
	return n;
}

/*
 * Load the model built in self->x (weights self->bin), compile it, set
 * the inputs, run, and read f32 output k into out[k] (count[k] values).
 * Returns 0 or the failing call's -errno (load, compile or infer), so
 * error tests can check it.
 */
static int run(FIXTURE_DATA(rnn) *self, int nin, const struct tin *in,
	       int nout, float **out, const size_t *count)
{
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	int i, k, err;

	npr_prep_model_load_mem(&ml, self->x.buf, self->x.len, self->bin,
				self->bin_len);
	err = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	npr_prep_compile(&co, ml.handle);
	err = npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		return err;
	npr_prep_req_create(&rc, co.exec);
	err = npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		return err;
	for (i = 0; i < nin; i++) {
		npr_prep_tensor(&ta, rc.req, i, 0, (void *)in[i].data,
				tin_bytes(&in[i]));
		ta.elem_type = in[i].type;
		ta.rank = in[i].rank;
		for (k = 0; k < in[i].rank; k++)
			ta.dims[k] = in[i].d[k];
		err = npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta);
		if (err)
			return err;
	}
	npr_prep_infer(&inf, rc.req);
	err = npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf);
	if (err)
		return err;
	for (i = 0; i < nout; i++) {
		npr_prep_tensor(&ta, rc.req, i, 1, out[i],
				count[i] * sizeof(float));
		err = npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta);
		if (err)
			return err;
		if (ta.bytes != count[i] * sizeof(float))
			return -EMSGSIZE;
	}
	return 0;
}

/* Run, failing the test on any error (with the library's message). */
#define RUN(nin, in, nout, out, count) do {				\
	int _r = run(self, nin, in, nout, out, count);			\
	if (_r)								\
		TH_LOG("run: %d: %s", _r, npr_last_error());		\
	ASSERT_EQ(_r, 0);						\
} while (0)

/* The run must fail with @err and @phrase in the message. */
#define RUN_FAILS(err, phrase) do {					\
	int _r = run(self, 0, NULL, 0, NULL, NULL);			\
	TH_LOG("errno %d: %s", _r, npr_last_error());			\
	ASSERT_EQ(_r, err);						\
	if (!strstr(npr_last_error(), phrase)) {			\
		TH_LOG("the message lacks \"%s\"", phrase);		\
		ASSERT_TRUE(false);					\
	}								\
} while (0)

static struct tin f32(int rank, int64_t d0, int64_t d1, int64_t d2,
		      int64_t d3, const float *data)
{
	struct tin t = { .type = NPR_ELEM_F32, .rank = rank,
			 .d = { d0, d1, d2, d3 }, .data = data };

	return t;
}

#define NEAR(a, b) EXPECT_TRUE(fabs((double)(a) - (double)(b)) < 1e-5)

static double sig(double v)
{
	return 1 / (1 + exp(-v));
}

/* Deterministic test data in [-1, 1). */
static void fill(float *p, int n, unsigned int seed)
{
	int i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (float)((seed >> 8) % 2000) / 1000.0f - 1.0f;
	}
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

/* ---- TensorIterator ---------------------------------------------------- */

/*
 * h = Tanh(Add(x_t, h)) over the 3 steps of X [1, 3, 2] (axis 1), h from
 * H [1, 1, 2]; outputs: every h concatenated on axis 1, and the last h.
 * With @rev the steps run backwards (start -1, end 0, stride -1) and are
 * concatenated backwards too.
 */
static void ti_net(struct xb *b, bool rev, const char *axis,
		   int internal_x)
{
	struct xb body = { 0 };
	char extra[4096];
	const char *sl = rev ? " start=\"-1\" end=\"0\" stride=\"-1\"" : "";

	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,1,2");
	param(&body, 1, "f32", "1,1,2");
	layer(&body, 2, "Add", "opset1", NULL, "1,1,2|1,1,2", "1,1,2");
	layer(&body, 3, "Tanh", "opset1", NULL, "1,1,2", "1,1,2");
	result(&body, 4, "1,1,2");
	edges(&body);
	edge(&body, 0, 0, 2, 0);
	edge(&body, 1, 0, 2, 1);
	edge(&body, 2, 2, 3, 0);
	edge(&body, 3, 1, 4, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"0\" internal_layer_id=\"%d\" axis=\"%s\"%s/>"
		 "<input external_port_id=\"1\" internal_layer_id=\"1\"/>"
		 "<output external_port_id=\"2\" internal_layer_id=\"4\" axis=\"1\"%s/>"
		 "<output external_port_id=\"3\" internal_layer_id=\"4\"/></port_map>"
		 "<back_edges><edge from-layer=\"4\" to-layer=\"1\"/></back_edges>"
		 "<body>%s</body>", internal_x, axis, sl, sl, body.buf);
	free(body.buf);
	begin(b);
	param(b, 0, "f32", "1,3,2");
	param(b, 1, "f32", "1,1,2");
	layer_x(b, 2, "TensorIterator", "opset1", NULL, "1,3,2|1,1,2",
		"1,3,2|1,1,2", extra);
	result(b, 3, "1,3,2");
	result(b, 4, "1,1,2");
	edges(b);
	edge(b, 0, 0, 2, 0);
	edge(b, 1, 0, 2, 1);
	edge(b, 2, 2, 3, 0);
	edge(b, 2, 3, 4, 0);
	end(b);
}

static void ti_matches_unrolled(FIXTURE_DATA(rnn) *self,
				struct npr_test *_metadata, bool rev)
{
	static const float x[6] = { 0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f };
	static const float h0[2] = { 0.05f, -0.05f };
	struct tin in[2] = { f32(3, 1, 3, 2, 0, x), f32(3, 1, 1, 2, 0, h0) };
	float y[6], last[2], *out[2] = { y, last };
	size_t cnt[2] = { 6, 2 };
	double h[2] = { h0[0], h0[1] }, ey[6];
	int i, k;

	ti_net(&self->x, rev, "1", 0);
	RUN(2, in, 2, out, cnt);
	/* the body unrolled by hand */
	for (i = 0; i < 3; i++) {
		int t = rev ? 2 - i : i;

		for (k = 0; k < 2; k++) {
			h[k] = tanh(x[t * 2 + k] + h[k]);
			ey[t * 2 + k] = h[k];
		}
	}
	for (i = 0; i < 6; i++)
		NEAR(y[i], ey[i]);
	NEAR(last[0], h[0]);
	NEAR(last[1], h[1]);
}

TEST_F(rnn, tensor_iterator_equals_the_unrolled_body)
{
	ti_matches_unrolled(self, _metadata, false);
}

TEST_F(rnn, tensor_iterator_with_negative_stride_runs_backwards)
{
	ti_matches_unrolled(self, _metadata, true);
}

TEST_F(rnn, port_map_naming_a_missing_body_layer_fails)
{
	ti_net(&self->x, false, "1", 9);
	RUN_FAILS(-EINVAL, "port map names body layer 9, which does not exist");
}

TEST_F(rnn, port_map_naming_a_body_layer_that_is_not_a_parameter_fails)
{
	ti_net(&self->x, false, "1", 2);
	RUN_FAILS(-EINVAL, "body layer 2, which is a Add, not a Parameter");
}

TEST_F(rnn, slicing_axis_out_of_range_fails)
{
	ti_net(&self->x, false, "5", 0);
	RUN_FAILS(-EINVAL, "axis 5 is out of range for input 0 of rank 3");
}

/*
 * A TensorIterator whose body holds another, @depth deep; the innermost
 * body computes Tanh.  Input and output [1, 2], sliced on axis 0 (one
 * iteration).
 */
static void nested_ti(struct xb *b, int id, int depth)
{
	struct xb body = { 0 };

	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,2");
	if (depth > 1)
		nested_ti(&body, 1, depth - 1);
	else
		layer(&body, 1, "Tanh", "opset1", NULL, "1,2", "1,2");
	result(&body, 2, "1,2");
	edges(&body);
	edge(&body, 0, 0, 1, 0);
	edge(&body, 1, 1, 2, 0);
	xb_add(&body, "</edges>");
	xb_add(b, "<layer id=\"%d\" name=\"ti%d\" type=\"TensorIterator\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>1</dim><dim>2</dim></port></input>"
	       "<output><port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></output>"
	       "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"0\"/>"
	       "<output external_port_id=\"1\" internal_layer_id=\"2\" axis=\"0\"/></port_map>"
	       "<body>%s</body></layer>\n", id, depth, body.buf);
	free(body.buf);
}

static void nested_net(struct xb *b, int depth)
{
	begin(b);
	param(b, 0, "f32", "1,2");
	nested_ti(b, 1, depth);
	result(b, 2, "1,2");
	edges(b);
	edge(b, 0, 0, 1, 0);
	edge(b, 1, 1, 2, 0);
	end(b);
}

TEST_F(rnn, nested_tensor_iterators_run)
{
	static const float x[2] = { 0.5f, -1.5f };
	struct tin in[1] = { f32(2, 1, 2, 0, 0, x) };
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };

	nested_net(&self->x, 3);
	RUN(1, in, 1, out, cnt);
	NEAR(y[0], tanh(0.5));
	NEAR(y[1], tanh(-1.5));
}

TEST_F(rnn, bodies_nested_too_deep_fail)
{
	nested_net(&self->x, 9);
	RUN_FAILS(-EFBIG, "nested more than 8 deep");
}

TEST_F(rnn, error_inside_a_body_names_the_outer_layer_and_the_body_layer)
{
	char *p;

	ti_net(&self->x, false, "1", 0);
	p = strstr(self->x.buf, "type=\"Tanh\"");
	ASSERT_NE(p, NULL);
	memcpy(p, "type=\"Tanx\"", 11);
	RUN_FAILS(-EOPNOTSUPP,
		  "layer 2 (l2, TensorIterator-1): body: layer 3 (l3): unknown op Tanx");
}

/*
 * f16 constants inside a body are lowered with the model: X [1, 2, 2]
 * sliced on axis 1, plus an f16 Const [1, 1, 2] = { 0.5, -0.25 } (0x3800,
 * 0xb400), concatenated back.
 */
TEST_F(rnn, f16_constant_inside_a_body_is_lowered)
{
	static const uint16_t half[2] = { 0x3800, 0xb400 };
	static const float x[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
	struct tin in[1] = { f32(3, 1, 2, 2, 0, x) };
	float y[4], *out[1] = { y };
	size_t cnt[1] = { 4 };
	struct xb body = { 0 };
	char extra[4096];

	self->bin = half;
	self->bin_len = sizeof(half);
	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,1,2");
	konst(&body, 1, "f16", "1,1,2", 0, 4);
	layer(&body, 2, "Add", "opset1", NULL, "1,1,2|1,1,2", "1,1,2");
	result(&body, 3, "1,1,2");
	edges(&body);
	edge(&body, 0, 0, 2, 0);
	edge(&body, 1, 0, 2, 1);
	edge(&body, 2, 2, 3, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"1\"/>"
		 "<output external_port_id=\"1\" internal_layer_id=\"3\" axis=\"1\"/></port_map>"
		 "<body>%s</body>", body.buf);
	free(body.buf);
	begin(&self->x);
	param(&self->x, 0, "f32", "1,2,2");
	layer_x(&self->x, 1, "TensorIterator", "opset1", NULL, "1,2,2",
		"1,2,2", extra);
	result(&self->x, 2, "1,2,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	RUN(1, in, 1, out, cnt);
	NEAR(y[0], 1.5);
	NEAR(y[1], 1.75);
	NEAR(y[2], 3.5);
	NEAR(y[3], 3.75);
}

/* ---- Loop ----------------------------------------------------------- */

/*
 * a = a + [1, 10] while the trip count allows and the body's condition
 * (current_iteration < 2, checked after each iteration) holds.
 */
static void loop_net(FIXTURE_DATA(rnn) *self, int64_t trip, char *bin,
		     bool concat)
{
	static const float c[2] = { 1.0f, 10.0f };
	const int64_t limit = 2;
	struct xb body = { 0 };
	char extra[8192];

	memcpy(bin, &trip, 8);
	bin[8] = 1;
	memcpy(bin + 9, &limit, 8);
	memcpy(bin + 17, c, 8);
	self->bin = bin;
	self->bin_len = 25;
	xb_add(&body, "<layers>");
	param(&body, 0, "i64", "");
	param(&body, 1, "f32", "1,2");
	konst(&body, 2, "i64", "", 9, 8);
	layer(&body, 3, "Less", "opset1", NULL, "-|-", "-");
	result(&body, 4, "");
	konst(&body, 5, "f32", "1,2", 17, 8);
	layer(&body, 6, "Add", "opset1", NULL, "1,2|1,2", "1,2");
	result(&body, 7, "1,2");
	edges(&body);
	edge(&body, 0, 0, 3, 0);
	edge(&body, 2, 0, 3, 1);
	edge(&body, 3, 2, 4, 0);
	edge(&body, 1, 0, 6, 0);
	edge(&body, 5, 0, 6, 1);
	edge(&body, 6, 2, 7, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"2\" internal_layer_id=\"1\"/>"
		 "<input external_port_id=\"-1\" internal_layer_id=\"0\" purpose=\"current_iteration\"/>"
		 "<output external_port_id=\"-1\" internal_layer_id=\"4\" purpose=\"execution_condition\"/>"
		 "<output external_port_id=\"3\" internal_layer_id=\"7\"/>%s</port_map>"
		 "<back_edges><edge from-layer=\"7\" to-layer=\"1\"/></back_edges>"
		 "<body>%s</body>",
		 concat ? "<output external_port_id=\"4\" internal_layer_id=\"7\" axis=\"0\"/>" :
			  "", body.buf);
	free(body.buf);
	begin(&self->x);
	konst(&self->x, 0, "i64", "1", 0, 8);
	konst(&self->x, 1, "boolean", "", 8, 1);
	param(&self->x, 2, "f32", "1,2");
	layer_x(&self->x, 3, "Loop", "opset5", NULL, "1|-|1,2",
		concat ? "1,2|3,2" : "1,2", extra);
	result(&self->x, 4, "1,2");
	if (concat)
		result(&self->x, 5, "3,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 3, 0);
	edge(&self->x, 1, 0, 3, 1);
	edge(&self->x, 2, 0, 3, 2);
	edge(&self->x, 3, 3, 4, 0);
	if (concat)
		edge(&self->x, 3, 4, 5, 0);
	end(&self->x);
}

static void loop_runs(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		      int64_t trip, int iters)
{
	static const float a[2] = { 0.5f, -3.0f };
	struct tin in[1] = { f32(2, 1, 2, 0, 0, a) };
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };
	char bin[32];

	loop_net(self, trip, bin, false);
	RUN(1, in, 1, out, cnt);
	NEAR(y[0], 0.5 + iters * 1.0);
	NEAR(y[1], -3.0 + iters * 10.0);
}

TEST_F(rnn, loop_stops_when_its_body_condition_turns_false)
{
	/* iterations 0, 1, 2 run; after 2, 2 < 2 is false */
	loop_runs(self, _metadata, 5, 3);
}

TEST_F(rnn, loop_stops_at_its_trip_count)
{
	loop_runs(self, _metadata, 2, 2);
}

TEST_F(rnn, loop_with_zero_trip_count_passes_the_initial_value)
{
	loop_runs(self, _metadata, 0, 0);
}

TEST_F(rnn, loop_concatenating_a_data_dependent_count_fails)
{
	char bin[32];

	loop_net(self, 5, bin, true);
	RUN_FAILS(-EOPNOTSUPP,
		  "output 1 concatenates the iterations, but their number depends on data");
}

/*
 * Loop over the rows of X [3, 2] (sliced input, axis 0) with a constant
 * true body condition and trip count 3: y_t = x_t + x_t, concatenated
 * on axis 0.
 */
TEST_F(rnn, loop_slices_an_input_and_concatenates_an_output)
{
	static const float x[6] = { 1, -2, 3, -4, 5, -6 };
	struct tin in[1] = { f32(2, 3, 2, 0, 0, x) };
	float y[6], *out[1] = { y };
	size_t cnt[1] = { 6 };
	struct xb body = { 0 };
	char extra[4096], bin[16];
	const int64_t trip = 3;
	int i;

	memcpy(bin, &trip, 8);
	bin[8] = 1;
	self->bin = bin;
	self->bin_len = 9;
	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,2");
	layer(&body, 1, "Add", "opset1", NULL, "1,2|1,2", "1,2");
	result(&body, 2, "1,2");
	konst(&body, 3, "boolean", "", 8, 1);
	result(&body, 4, "");
	edges(&body);
	edge(&body, 0, 0, 1, 0);
	edge(&body, 0, 0, 1, 1);
	edge(&body, 1, 2, 2, 0);
	edge(&body, 3, 0, 4, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"2\" internal_layer_id=\"0\" axis=\"0\"/>"
		 "<output external_port_id=\"-1\" internal_layer_id=\"4\" purpose=\"execution_condition\"/>"
		 "<output external_port_id=\"3\" internal_layer_id=\"2\" axis=\"0\"/></port_map>"
		 "<body>%s</body>", body.buf);
	free(body.buf);
	begin(&self->x);
	konst(&self->x, 0, "i64", "", 0, 8);
	konst(&self->x, 1, "boolean", "", 8, 1);
	param(&self->x, 2, "f32", "3,2");
	layer_x(&self->x, 3, "Loop", "opset5", NULL, "-|-|3,2", "3,2", extra);
	result(&self->x, 4, "3,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 3, 0);
	edge(&self->x, 1, 0, 3, 1);
	edge(&self->x, 2, 0, 3, 2);
	edge(&self->x, 3, 3, 4, 0);
	end(&self->x);
	RUN(1, in, 1, out, cnt);
	for (i = 0; i < 6; i++)
		NEAR(y[i], 2 * x[i]);
}

/* A back edge must carry a Result of the Parameter's shape: here the
 * body broadcasts h [1, 1, 1] against x [1, 1, 2]. */
TEST_F(rnn, back_edge_that_changes_the_shape_fails)
{
	struct xb body = { 0 };
	char extra[4096];

	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,1,2");
	param(&body, 1, "f32", "1,1,1");
	layer(&body, 2, "Add", "opset1", NULL, "1,1,2|1,1,1", "1,1,2");
	result(&body, 3, "1,1,2");
	edges(&body);
	edge(&body, 0, 0, 2, 0);
	edge(&body, 1, 0, 2, 1);
	edge(&body, 2, 2, 3, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"1\"/>"
		 "<input external_port_id=\"1\" internal_layer_id=\"1\"/>"
		 "<output external_port_id=\"2\" internal_layer_id=\"3\"/></port_map>"
		 "<back_edges><edge from-layer=\"3\" to-layer=\"1\"/></back_edges>"
		 "<body>%s</body>", body.buf);
	free(body.buf);
	begin(&self->x);
	param(&self->x, 0, "f32", "1,3,2");
	param(&self->x, 1, "f32", "1,1,1");
	layer_x(&self->x, 2, "TensorIterator", "opset1", NULL, "1,3,2|1,1,1",
		"1,1,2", extra);
	result(&self->x, 3, "1,1,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 2, 0);
	edge(&self->x, 1, 0, 2, 1);
	edge(&self->x, 2, 2, 3, 0);
	end(&self->x);
	RUN_FAILS(-EINVAL,
		  "back edge from body layer 3 to 1 turns f32[1,1,1] into f32[1,1,2]");
}

static bool shared_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/models/ir-small/%s", npr_test_shared(),
			 name);

	return n > 0 && (size_t)n < len;
}

/* loop_2d_add: a [1, 2] + 1 three times; outputs the last value and
 * every iteration's (axis 0), each plus a Const -0.0. */
TEST_F(rnn, shared_loop_2d_add_model_runs)
{
	static const float a[2] = { 0.25f, -2.0f };
	float y[2], all[6], *out[2] = { y, all };
	size_t cnt[2] = { 2, 6 };
	struct tin in[1] = { f32(2, 1, 2, 0, 0, a) };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	char xml[4096];
	int i, k;

	if (!npr_test_shared_ok() ||
	    !shared_path(xml, sizeof(xml), "loop_2d_add.xml"))
		SKIP(return, "no shared models");
	npr_prep_model_load(&ml, xml, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	if (npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co))
		TH_LOG("compile: %s", npr_last_error());
	ASSERT_NE(co.exec, 0U);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	npr_prep_tensor(&ta, rc.req, 0, 0, (void *)a, sizeof(a));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = 2;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, rc.req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	for (i = 0; i < 2; i++) {
		npr_prep_tensor(&ta, rc.req, i, 1, out[i], cnt[i] * 4);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		ASSERT_EQ(ta.bytes, cnt[i] * 4);
	}
	(void)in;
	for (k = 0; k < 2; k++) {
		NEAR(y[k], a[k] + 3);
		for (i = 0; i < 3; i++)
			NEAR(all[i * 2 + k], a[k] + i + 1);
	}
}

/*
 * The shared TensorIterator + LSTMCell fixtures come without weights.
 * With zero W, R and B every gate's pre-activation is 0, so f = i = o =
 * 1/2, g = 0, and from the initial cell state C0:
 *   C_t = C0 / 2^t,   H_t = tanh(C_t) / 2
 * whatever the input.  Build such a .bin (the two Reshape targets are the
 * only non-zero constants) next to a copy of the xml, run, compare.
 */
struct ti_fixture {
	const char *name;
	size_t bin_size;
	int64_t t1[2];		/* Reshape targets at offset 0 ... */
	size_t t2_off;		/* ... and t2_off */
	int64_t t2[3];
	int T, S;
	bool rev;		/* iterations walk the sequence backwards */
	int nout;
};

static void ti_fixture_runs(FIXTURE_DATA(rnn) *self,
			    struct npr_test *_metadata,
			    const struct ti_fixture *f)
{
	char dir[] = "/tmp/npr-rnn-XXXXXX", src[4096], xml[4200], bin[4200];
	size_t in_len[3] = { (size_t)f->T * 512, (size_t)f->S, (size_t)f->S };
	size_t cnt[3] = { (size_t)f->T * f->S, (size_t)f->S, (size_t)f->S };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	float *in[3], *out[3];
	FILE *fi, *fo;
	int fd, i, t, c, ret;

	if (!npr_test_shared_ok() || !shared_path(src, sizeof(src), f->name))
		SKIP(return, "no shared models");
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(xml, sizeof(xml), "%s/m.xml", dir);
	snprintf(bin, sizeof(bin), "%s/m.bin", dir);
	fi = fopen(src, "rb");
	ASSERT_NE(fi, NULL);
	fo = fopen(xml, "wb");
	ASSERT_NE(fo, NULL);
	while ((c = fgetc(fi)) != EOF)
		fputc(c, fo);
	fclose(fi);
	fclose(fo);
	fd = open(bin, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, f->bin_size), 0);
	ASSERT_EQ(pwrite(fd, f->t1, sizeof(f->t1), 0), (ssize_t)sizeof(f->t1));
	ASSERT_EQ(pwrite(fd, f->t2, sizeof(f->t2), f->t2_off),
		  (ssize_t)sizeof(f->t2));
	close(fd);
	npr_prep_model_load(&ml, xml, NULL);
	ret = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	unlink(xml);
	unlink(bin);
	rmdir(dir);
	if (ret)
		TH_LOG("load: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_compile(&co, ml.handle);
	ret = npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("compile: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	for (i = 0; i < 3; i++) {
		in[i] = malloc(in_len[i] * sizeof(float));
		out[i] = malloc(cnt[i] * sizeof(float));
		ASSERT_NE(in[i], NULL);
		ASSERT_NE(out[i], NULL);
		fill(in[i], (int)in_len[i], 21 + i);
		npr_prep_tensor(&ta, rc.req, i, 0, in[i],
				in_len[i] * sizeof(float));
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = i ? 2 : 3;
		ta.dims[0] = i || f->rev ? 1 : f->T;
		ta.dims[1] = i ? f->S : f->rev ? f->T : 1;
		ta.dims[2] = i ? 0 : 512;
		ret = npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta);
		if (ret)
			TH_LOG("input %d: %s", i, npr_last_error());
		ASSERT_EQ(ret, 0);
	}
	npr_prep_infer(&inf, rc.req);
	ret = npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("infer: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	for (i = 0; i < f->nout; i++) {
		npr_prep_tensor(&ta, rc.req, i, 1, out[i], cnt[i] * 4);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	}
	for (t = 0; t < f->T; t++) {
		int pos = f->rev ? f->T - 1 - t : t;

		for (c = 0; c < f->S; c += 37)
			NEAR(out[0][pos * f->S + c],
			     tanh(ldexp(in[2][c], -(t + 1))) / 2);
	}
	for (c = 0; f->nout > 1 && c < f->S; c += 37) {
		NEAR(out[1][c], tanh(ldexp(in[2][c], -f->T)) / 2);
		NEAR(out[2][c], ldexp(in[2][c], -f->T));
	}
	for (i = 0; i < 3; i++) {
		free(in[i]);
		free(out[i]);
	}
}

TEST_F(rnn, shared_ti_resnet_runs_with_zero_lstm_weights)
{
	static const struct ti_fixture f = {
		.name = "ti_resnet.xml", .bin_size = 8396840,
		.t1 = { 1, 512 }, .t2_off = 8396816, .t2 = { 1, 1, 512 },
		.T = 16, .S = 512, .rev = false, .nout = 3,
	};

	ti_fixture_runs(self, _metadata, &f);
}

TEST_F(rnn, shared_ti_negative_stride_runs_backwards_with_zero_weights)
{
	static const struct ti_fixture f = {
		.name = "ti_negative_stride.xml", .bin_size = 3149864,
		.t1 = { 1, 512 }, .t2_off = 3149840, .t2 = { 1, 1, 256 },
		.T = 25, .S = 256, .rev = true, .nout = 1,
	};

	ti_fixture_runs(self, _metadata, &f);
}

/* ---- If ----------------------------------------------------------------- */

/* then: x + x, else: Tanh(x), on x [2]. */
static void if_net(struct xb *b)
{
	struct xb tb = { 0 }, eb = { 0 };
	char extra[8192];
	const char *pm =
		"<input external_port_id=\"1\" internal_layer_id=\"0\"/>"
		"<output external_port_id=\"2\" internal_layer_id=\"2\"/>";

	xb_add(&tb, "<layers>");
	param(&tb, 0, "f32", "2");
	xb_add(&tb, "<layer id=\"1\" name=\"twice\" type=\"Add\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>2</dim></port><port id=\"1\"><dim>2</dim></port></input>"
	       "<output><port id=\"2\" precision=\"FP32\"><dim>2</dim></port></output></layer>");
	result(&tb, 2, "2");
	edges(&tb);
	edge(&tb, 0, 0, 1, 0);
	edge(&tb, 0, 0, 1, 1);
	edge(&tb, 1, 2, 2, 0);
	xb_add(&tb, "</edges>");
	xb_add(&eb, "<layers>");
	param(&eb, 0, "f32", "2");
	layer(&eb, 1, "Tanh", "opset1", NULL, "2", "2");
	result(&eb, 2, "2");
	edges(&eb);
	edge(&eb, 0, 0, 1, 0);
	edge(&eb, 1, 1, 2, 0);
	xb_add(&eb, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<then_port_map>%s</then_port_map><else_port_map>%s</else_port_map>"
		 "<then_body>%s</then_body><else_body>%s</else_body>",
		 pm, pm, tb.buf, eb.buf);
	free(tb.buf);
	free(eb.buf);
	begin(b);
	param(b, 0, "boolean", "");
	param(b, 1, "f32", "2");
	layer_x(b, 2, "If", "opset8", NULL, "-|2", "2", extra);
	result(b, 3, "2");
	edges(b);
	edge(b, 0, 0, 2, 0);
	edge(b, 1, 0, 2, 1);
	edge(b, 2, 2, 3, 0);
	end(b);
}

static void if_runs(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		    bool cond)
{
	static const float x[2] = { 0.75f, -0.25f };
	uint8_t c = cond;
	struct tin in[2] = {
		{ .type = NPR_ELEM_BOOLEAN, .rank = 0, .data = &c },
		f32(1, 2, 0, 0, 0, x),
	};
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };
	int k;

	if_net(&self->x);
	RUN(2, in, 1, out, cnt);
	for (k = 0; k < 2; k++)
		NEAR(y[k], cond ? 2.0 * x[k] : tanh(x[k]));
}

TEST_F(rnn, if_true_runs_the_then_body)
{
	if_runs(self, _metadata, true);
}

TEST_F(rnn, if_false_runs_the_else_body)
{
	if_runs(self, _metadata, false);
}

TEST_F(rnn, if_without_an_else_body_fails)
{
	char *p;

	if_net(&self->x);
	p = strstr(self->x.buf, "<else_body>");
	ASSERT_NE(p, NULL);
	memcpy(p, "<elze_body>", 11);
	p = strstr(self->x.buf, "</else_body>");
	memcpy(p, "</elze_body>", 12);
	RUN_FAILS(-EINVAL, "has no <else_body>");
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
