// SPDX-License-Identifier: MIT
/*
 * The FakeQuantize rules of the low-precision pass (lib/passes/lowp.c)
 * on a small OpenVINO INT8 IR built here, in the layout of OpenVINO's
 * low-precision tools (i8 weight constants, Convert, Subtract of zero
 * points and Multiply by scales per output channel; activations through
 * FakeQuantize with 256 levels):
 *
 *   x -> FQ -> Convolution 1x1 -> Add(bias) -> FQ per channel (out1)
 *     -> GroupConvolution 3x3 depthwise -> Add -> ReLU -> FQ -> MaxPool
 *     (ceil) (out2) -> Convolution 1x1 -> Add -> FQ (out0);
 *   x -> FQ per channel (out3);
 *   the first FQ's output times Sigmoid(ReduceMean(x)) per channel (an
 *   attention gate) -> FQ (out4);
 *   the first FQ's output + out4 -> FQ (out5), and -> ReLU -> FQ (out6);
 *   Concat(the first FQ's output, FQ(-x) on its grid) (a CReLU) ->
 *   Multiply and Add per channel (a folded BatchNorm) -> ReLU -> FQ (out7).
 *
 * The int8 path must agree with the same IR computed in f32 (the
 * FakeQuantize emulation, NPR_LOWP_OFF=1) up to rounding: the int8 path
 * rounds an exact integer sum once where the emulation rounds a float
 * sum, so a value within a rounding error of a tie may land one step
 * away; such a step may move a later one.  So: every output element
 * within one step of its grid of the emulation's (two for out0, after
 * three layers, and for the sums, whose inputs may each be a step off
 * and whose emulation rounds on exact ties its own way), and at most 5%
 * of them different at all; the outputs vary (not clipped to a
 * constant).  The pass must have taken every convolution (three
 * NprQConv executed, no FakeQuantize and no f32 convolution left): the
 * per-channel FakeQuantize feeding the depthwise convolution and the
 * MaxPool read by a convolution and a Result are what it had to learn.  The two
 * per-channel FakeQuantize read by Results exercise the per-channel
 * NprQuantize and NprDequantize kernels; the gate must become one
 * NprQScale, the sum read by two Qs two NprQAdd, the CReLU block a u8
 * Concat and a second NprQScale.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "xb.h"

#define C	8
#define H	10
#define OH	5		/* MaxPool 3x3, stride 2, ceil */
#define NOUT	8

struct ir {
	struct xb x, e;		/* layers, edges */
	unsigned char *bin;
	size_t len;
	int id;
};

static uint32_t rnd_state = 12345;

/* a deterministic number in [0, 1) */
static float rnd(void)
{
	rnd_state = rnd_state * 1664525u + 1013904223u;
	return (float)(rnd_state >> 8) / 16777216.0f;
}

static void bin_add(struct ir *r, const void *p, size_t n)
{
	r->bin = realloc(r->bin, r->len + n);
	if (!r->bin)
		abort();	/* test program: out of memory */
	memcpy(r->bin + r->len, p, n);
	r->len += n;
}

/* <dim>s of "1,8,10,10" */
static void dims(struct xb *b, const char *d)
{
	xb_dims_n(b, d, strlen(d));
}

/* a Const layer of @n values @v (f32) or @q (i8): its id */
static int cnst(struct ir *r, const char *shape, const float *v,
		const int8_t *q, size_t n)
{
	int id = r->id++;

	xb_add(&r->x, "<layer id=\"%d\" name=\"c%d\" type=\"Const\" version=\"opset1\">"
	       "<data element_type=\"%s\" shape=\"%s\" offset=\"%zu\" size=\"%zu\"/>"
	       "<output><port id=\"0\" precision=\"%s\">", id, id,
	       q ? "i8" : "f32", shape, r->len, q ? n : 4 * n,
	       q ? "I8" : "FP32");
	dims(&r->x, shape);
	xb_add(&r->x, "</port></output></layer>\n");
	if (q)
		bin_add(r, q, n);
	else
		bin_add(r, v, 4 * n);
	return id;
}

/* each layer's input count: its output port's id */
static int nin_of[256];

/*
 * A layer of @type (opset1, attributes @attrs) reading the layers @in
 * (their output each, shapes @ishape separated by ';'), with an output
 * of shape @oshape unless NULL: its id.
 */
static int add_layer(struct ir *r, const char *type, const char *attrs,
		     int nin, const int *in, const char *ishape,
		     const char *oshape)
{
	int id = r->id++, i;
	const char *s = ishape;

	nin_of[id] = nin;
	xb_add(&r->x, "<layer id=\"%d\" name=\"l%d\" type=\"%s\" version=\"opset1\">",
	       id, id, type);
	if (attrs)
		xb_add(&r->x, "<data %s/>", attrs);
	if (nin)
		xb_add(&r->x, "<input>");
	for (i = 0; i < nin; i++) {
		size_t n = strcspn(s, ";");

		xb_add(&r->x, "<port id=\"%d\">", i);
		xb_dims_n(&r->x, s, n);
		xb_add(&r->x, "</port>");
		s += n + (s[n] == ';');
		xb_add(&r->e, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n",
		       in[i], nin_of[in[i]], id, i);
	}
	if (nin)
		xb_add(&r->x, "</input>");
	if (oshape) {
		xb_add(&r->x, "<output><port id=\"%d\" precision=\"FP32\" names=\"o%d\">",
		       nin, id);
		dims(&r->x, oshape);
		xb_add(&r->x, "</port></output>");
	}
	xb_add(&r->x, "</layer>\n");
	return id;
}

/*
 * FakeQuantize of layer @x (shape @s) with limits [lo, hi] in and out:
 * one pair, or @nc per channel ([1, nc, 1, 1]).
 */
static int fq(struct ir *r, int x, const char *s, const float *lo,
	      const float *hi, int nc)
{
	char sh[160], sc[32];
	int in[5];

	sc[0] = 0;
	if (nc > 1)
		snprintf(sc, sizeof(sc), "1,%d,1,1", nc);
	in[0] = x;
	in[1] = cnst(r, sc, lo, NULL, nc);
	in[2] = cnst(r, sc, hi, NULL, nc);
	in[3] = cnst(r, sc, lo, NULL, nc);
	in[4] = cnst(r, sc, hi, NULL, nc);
	snprintf(sh, sizeof(sh), "%s;%s;%s;%s;%s", s, sc, sc, sc, sc);
	return add_layer(r, "FakeQuantize", "levels=\"256\"", 5, in, sh, s);
}

/*
 * Weights of @k output channels, @shape (@n values): i8 constants,
 * Convert, Multiply by a scale per output channel (@sshape).
 */
static int weights(struct ir *r, int k, const char *shape,
		   const char *sshape, int n)
{
	int8_t q[C * C * 9];
	float s[C], z[C];
	int i, in[2], cv;
	char sh[128];

	for (i = 0; i < n; i++)
		q[i] = (int8_t)(rnd() * 254.0f - 127.0f);
	for (i = 0; i < k; i++) {
		s[i] = 0.002f + 0.004f * rnd();
		z[i] = (float)(i % 2);
	}
	in[0] = cnst(r, shape, NULL, q, n);
	cv = add_layer(r, "Convert", "destination_type=\"f32\"", 1, in, shape,
		       shape);
	/* zero points 0 and 1: the centred weights stay in i8 */
	in[0] = cv;
	in[1] = cnst(r, sshape, z, NULL, k);
	snprintf(sh, sizeof(sh), "%s;%s", shape, sshape);
	in[0] = add_layer(r, "Subtract", NULL, 2, in, sh, shape);
	in[1] = cnst(r, sshape, s, NULL, k);
	return add_layer(r, "Multiply", NULL, 2, in, sh, shape);
}

/* a Const of @n i64 values @a */
static int i64s(struct ir *r, const int64_t *a, int n)
{
	int id = r->id++;

	xb_add(&r->x, "<layer id=\"%d\" name=\"c%d\" type=\"Const\" version=\"opset1\">"
	       "<data element_type=\"i64\" shape=\"%d\" offset=\"%zu\" size=\"%d\"/>"
	       "<output><port id=\"0\" precision=\"I64\"><dim>%d</dim></port></output></layer>\n",
	       id, id, n, r->len, 8 * n, n);
	bin_add(r, a, 8 * (size_t)n);
	return id;
}

/* a Const of the axes 2 and 3 */
static int axes(struct ir *r)
{
	static const int64_t a[2] = { 2, 3 };

	return i64s(r, a, 2);
}

/* a per-channel bias added to layer @x of shape @s */
static int bias(struct ir *r, int x, const char *s)
{
	float b[C];
	char sh[128];
	int i, in[2];

	for (i = 0; i < C; i++)
		b[i] = rnd() - 0.5f;
	in[0] = x;
	in[1] = cnst(r, "1,8,1,1", b, NULL, C);
	snprintf(sh, sizeof(sh), "%s;1,8,1,1", s);
	return add_layer(r, "Add", NULL, 2, in, sh, s);
}

/* grids: the steps of each output, per channel (out1, out3) or not */
static float step0, step2, step4, step5, step6, step7, step1[C], step3[C];

static void build(struct ir *r)
{
	static const char *xs = "1,8,10,10", *ps = "1,8,5,5";
	float lo[C], hi[C], a, mul[2 * C], add[2 * C];
	int x, v, in[2], i, cpc[NOUT], w1, wd, w3, q0;

	memset(r, 0, sizeof(*r));
	rnd_state = 12345;
	x = add_layer(r, "Parameter", "shape=\"1,8,10,10\" element_type=\"f32\"",
		      0, NULL, NULL, xs);
	/*
	 * The weights first, as in the shipped IRs: their folded Convert and
	 * Multiply nodes are the places the pass puts new nodes in.
	 */
	w1 = weights(r, C, "8,8,1,1", "8,1,1,1", C * C);
	wd = weights(r, C, "8,1,3,3", "8,1,1,1", C * 9);
	{
		static const int64_t g5[5] = { 8, 1, 1, 3, 3 };

		in[0] = wd;
		in[1] = i64s(r, g5, 5);
		wd = add_layer(r, "Reshape", "special_zero=\"false\"", 2, in,
			       "8,1,3,3;5", "8,1,1,3,3");
	}
	w3 = weights(r, C, "8,8,1,1", "8,1,1,1", C * C);
	/* the input's grid: zero point 128 */
	lo[0] = -2.0f * 128 / 127;
	hi[0] = 2.0f;
	v = fq(r, x, xs, lo, hi, 1);
	q0 = v;
	in[0] = v;
	in[1] = w1;
	v = add_layer(r, "Convolution", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" auto_pad=\"explicit\"",
		      2, in, "1,8,10,10;8,8,1,1", xs);
	v = bias(r, v, xs);
	/* symmetric limits per channel: zero point 128 on every channel */
	for (i = 0; i < C; i++) {
		step1[i] = (0.4f + 0.25f * (float)i) / 128;
		lo[i] = -128 * step1[i];
		hi[i] = 127 * step1[i];
	}
	v = fq(r, v, xs, lo, hi, C);
	cpc[1] = v;
	in[0] = v;
	in[1] = wd;
	v = add_layer(r, "GroupConvolution", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" auto_pad=\"explicit\"",
		      2, in, "1,8,10,10;8,1,1,3,3", xs);
	v = bias(r, v, xs);
	v = add_layer(r, "ReLU", NULL, 1, &v, xs, xs);
	lo[0] = 0;
	hi[0] = 3.0f;
	step2 = 3.0f / 255;
	v = fq(r, v, xs, lo, hi, 1);
	v = add_layer(r, "MaxPool", "strides=\"2,2\" kernel=\"3,3\" pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"ceil\" auto_pad=\"explicit\"",
		      1, &v, xs, ps);
	cpc[2] = v;
	in[0] = v;
	in[1] = w3;
	v = add_layer(r, "Convolution", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" auto_pad=\"explicit\"",
		      2, in, "1,8,5,5;8,8,1,1", ps);
	v = bias(r, v, ps);
	a = 4.0f;
	step0 = a / 127;
	lo[0] = -128 * step0;
	hi[0] = a;
	cpc[0] = fq(r, v, ps, lo, hi, 1);
	/* the input again, per channel: asymmetric, zero point 64 */
	for (i = 0; i < C; i++) {
		step3[i] = (0.5f + 0.2f * (float)i) / 128;
		lo[i] = -64 * step3[i];
		hi[i] = 191 * step3[i];
	}
	cpc[3] = fq(r, x, xs, lo, hi, C);
	/* the gate: the channels' means of x through a Sigmoid */
	in[0] = x;
	in[1] = axes(r);
	v = add_layer(r, "ReduceMean", "keep_dims=\"true\"", 2, in,
		      "1,8,10,10;2", "1,8,1,1");
	v = add_layer(r, "Sigmoid", NULL, 1, &v, "1,8,1,1", "1,8,1,1");
	in[0] = q0;
	in[1] = v;
	v = add_layer(r, "Multiply", NULL, 2, in, "1,8,10,10;1,8,1,1", xs);
	step4 = 1.5f / 127;
	lo[0] = -128 * step4;
	hi[0] = 1.5f;
	cpc[4] = fq(r, v, xs, lo, hi, 1);
	/* a sum read by a Q and by a ReLU into another Q */
	in[0] = q0;
	in[1] = cpc[4];
	v = add_layer(r, "Add", NULL, 2, in, "1,8,10,10;1,8,10,10", xs);
	step5 = 3.0f / 127;
	lo[0] = -128 * step5;
	hi[0] = 3.0f;
	cpc[5] = fq(r, v, xs, lo, hi, 1);
	v = add_layer(r, "ReLU", NULL, 1, &v, xs, xs);
	step6 = 2.5f / 255;
	lo[0] = 0;
	hi[0] = 2.5f;
	cpc[6] = fq(r, v, xs, lo, hi, 1);
	/* a CReLU block: x and -x on one grid, concatenated, BatchNorm, ReLU */
	v = add_layer(r, "Negative", NULL, 1, &x, xs, xs);
	lo[0] = -2.0f * 128 / 127;
	hi[0] = 2.0f;
	in[0] = q0;
	in[1] = fq(r, v, xs, lo, hi, 1);
	v = add_layer(r, "Concat", "axis=\"1\"", 2, in, "1,8,10,10;1,8,10,10",
		      "1,16,10,10");
	for (i = 0; i < 2 * C; i++) {
		mul[i] = 0.5f + rnd();
		add[i] = rnd() - 0.5f;
	}
	in[0] = v;
	in[1] = cnst(r, "1,16,1,1", mul, NULL, 2 * C);
	v = add_layer(r, "Multiply", NULL, 2, in, "1,16,10,10;1,16,1,1",
		      "1,16,10,10");
	in[0] = v;
	in[1] = cnst(r, "1,16,1,1", add, NULL, 2 * C);
	v = add_layer(r, "Add", NULL, 2, in, "1,16,10,10;1,16,1,1",
		      "1,16,10,10");
	v = add_layer(r, "ReLU", NULL, 1, &v, "1,16,10,10", "1,16,10,10");
	step7 = 3.0f / 255;
	lo[0] = 0;
	hi[0] = 3.0f;
	cpc[7] = fq(r, v, "1,16,10,10", lo, hi, 1);
	for (i = 0; i < NOUT; i++)
		add_layer(r, "Result", NULL, 1, &cpc[i], i == 0 || i == 2 ?
			  ps : i == 7 ? "1,16,10,10" : xs, NULL);
}

/* the IR text of @r */
static char *ir_text(struct ir *r, size_t *len)
{
	struct xb t = { 0 };

	xb_add(&t, "<?xml version=\"1.0\"?>\n<net name=\"lowp_ir\" version=\"11\">\n<layers>\n%.*s</layers>\n<edges>\n%.*s</edges>\n</net>\n",
	       (int)r->x.len, r->x.buf, (int)r->e.len, r->e.buf);
	*len = t.len;
	return t.buf;
}

/* the elements of output @i */
static int out_size(int i)
{
	return i == 0 || i == 2 ? C * OH * OH : i == 7 ? 2 * C * H * H :
	       C * H * H;
}

struct outs {
	float o[NOUT][2 * C * H * H];
	int nqconv, nfq, nconv, nqscale, nqadd;
};

/* executed steps of @type in the profile of @req */
static int executed(int fd, __u32 req, const char *type)
{
	struct npr_profile p = { .size = sizeof(p), .req = req };
	struct npr_profile_rec *recs;
	int count = 0;
	__u32 i;

	if (npr_ioctl(fd, NPR_IOCTL_PROFILE, &p) != -EMSGSIZE)
		return -1;
	recs = calloc(p.count, sizeof(*recs));
	if (!recs)
		return -1;
	p.recs = (uintptr_t)recs;
	if (npr_ioctl(fd, NPR_IOCTL_PROFILE, &p)) {
		free(recs);
		return -1;
	}
	for (i = 0; i < p.count; i++)
		count += recs[i].status == NPR_PROF_EXECUTED &&
			 !strcmp(recs[i].type, type);
	free(recs);
	return count;
}

static void run(struct npr_test *_metadata, const float *x, struct outs *o)
{
	struct npr_prop_arg prof = { .param = NPR_PARAM_ENABLE_PROFILING,
				     .value = 1 };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	struct ir r;
	char *xml;
	size_t len;
	int fd, i;

	build(&r);
	xml = ir_text(&r, &len);
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	npr_prep_model_load_mem(&ml, xml, len, r.bin, r.len);
	i = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (i)
		TH_LOG("MODEL_LOAD: %s", npr_last_error());
	ASSERT_EQ(i, 0);
	free(xml);
	free(r.x.buf);
	free(r.e.buf);
	free(r.bin);
	npr_prep_compile(&co, ml.handle);
	co.props = (uintptr_t)&prof;
	co.num_props = 1;
	i = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (i)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(i, 0);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	npr_prep_tensor(&ta, rc.req, 0, 0, (void *)x,
			C * H * H * sizeof(float));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 4;
	ta.dims[0] = 1;
	ta.dims[1] = C;
	ta.dims[2] = H;
	ta.dims[3] = H;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, rc.req);
	i = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (i)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(i, 0);
	for (i = 0; i < NOUT; i++) {
		size_t n = out_size(i);

		npr_prep_tensor(&ta, rc.req, i, 1, o->o[i], n * sizeof(float));
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	}
	o->nqconv = executed(fd, rc.req, "NprQConv");
	o->nfq = executed(fd, rc.req, "FakeQuantize");
	o->nqscale = executed(fd, rc.req, "NprQScale");
	o->nqadd = executed(fd, rc.req, "NprQAdd");
	o->nconv = executed(fd, rc.req, "Convolution") +
		   executed(fd, rc.req, "GroupConvolution");
	npr_close(fd);
}

/* how many values of output @i of @a differ from their predecessor */
static int changes(const struct outs *a, int i)
{
	int n = out_size(i), j, k = 0;

	for (j = 1; j < n; j++)
		k += a->o[i][j] != a->o[i][j - 1];
	return k;
}

/*
 * Output @i of @a against @b: the largest difference in steps of its
 * grid, and how many elements differ.
 */
static double steps(const struct outs *a, const struct outs *b, int i,
		    int *ndiff)
{
	int n = out_size(i), plane = n / (i == 7 ? 2 * C : C), j;
	double worst = 0;

	*ndiff = 0;
	for (j = 0; j < n; j++) {
		int c = j / plane;
		double st = i == 0 ? step0 : i == 2 ? step2 : i == 4 ? step4 :
			    i == 5 ? step5 : i == 6 ? step6 : i == 7 ? step7 :
			    i == 1 ? step1[c % C] : step3[c % C];
		double d = fabs((double)a->o[i][j] - b->o[i][j]) / st;

		*ndiff += d > 1e-3;
		if (d > worst)
			worst = d;
	}
	return worst;
}

TEST(fakequantize_rules_match_the_f32_emulation)
{
	static const int bound[NOUT] = { 2, 1, 1, 1, 1, 2, 2, 1 };
	struct outs *on = calloc(1, sizeof(*on));
	struct outs *off = calloc(1, sizeof(*off));
	float x[C * H * H];
	int i, nd;

	ASSERT_NONNULL(on);
	ASSERT_NONNULL(off);
	rnd_state = 777;
	for (i = 0; i < C * H * H; i++)
		x[i] = rnd() * 5.0f - 2.5f;
	setenv("NPR_LOWP_OFF", "1", 1);
	run(_metadata, x, off);
	unsetenv("NPR_LOWP_OFF");
	run(_metadata, x, on);
	TH_LOG("int8: NprQConv %d, FakeQuantize %d, f32 convolutions %d; f32 emulation: %d, %d, %d",
	       on->nqconv, on->nfq, on->nconv, off->nqconv, off->nfq,
	       off->nconv);
	EXPECT_EQ(off->nqconv, 0);
	EXPECT_EQ(off->nfq, 10);
	EXPECT_EQ(on->nqconv, 3);
	EXPECT_EQ(on->nqscale, 2);
	EXPECT_EQ(on->nqadd, 2);
	EXPECT_EQ(on->nfq, 0);
	EXPECT_EQ(on->nconv, 0);
	for (i = 0; i < NOUT; i++) {
		double w = steps(on, off, i, &nd);

		TH_LOG("output %d: at most %.3f steps apart, %d of %d differ",
		       i, w, nd, out_size(i));
		EXPECT_LE(w, bound[i] + 1e-3);
		EXPECT_LE(nd, out_size(i) / 20);
		/* not a constant (all clipped, say): the data tells */
		EXPECT_GE(changes(off, i), out_size(i) / 4);
	}
	free(on);
	free(off);
}

TEST_HARNESS_MAIN
