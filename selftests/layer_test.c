// SPDX-License-Identifier: MIT
/*
 * Single layers through the public API: normalisation (MVN 1 and 6,
 * NormalizeL2, BatchNormInference 1 and 5), transposed convolution
 * (ConvolutionBackpropData, GroupConvolutionBackpropData) and the CTC greedy
 * decoders.  Each test builds a one-op IR model in memory, runs it on the
 * cpu device and compares with values worked out by hand from the OpenVINO
 * operation specifications; the arithmetic is written next to each case.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"

/* ---- building one-layer models ---------------------------------------- */

struct lm {
	char xml[8192];
	size_t len;
	unsigned char bin[4096];
	size_t binlen;
};

static void __attribute__((format(printf, 2, 3)))
lm_add(struct lm *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(m->xml + m->len, sizeof(m->xml) - m->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(m->xml) - m->len)
		abort();	/* test program: model text too long */
	m->len += n;
}

/* <dim> children for "1,2,3" ("" for a scalar). */
static void lm_dims(struct lm *m, const char *dims)
{
	const char *p = dims;

	while (*p) {
		size_t n = strcspn(p, ",");

		lm_add(m, "<dim>%.*s</dim>", (int)n, p);
		p += n;
		if (*p)
			p++;
	}
}

static const char *prec(const char *et)
{
	if (!strcmp(et, "f32"))
		return "FP32";
	if (!strcmp(et, "i64"))
		return "I64";
	if (!strcmp(et, "i32"))
		return "I32";
	return "FP32";
}

static void lm_begin(struct lm *m)
{
	m->len = 0;
	m->binlen = 0;
	lm_add(m, "<?xml version=\"1.0\"?>\n<net name=\"t\" version=\"11\">\n<layers>\n");
}

static void lm_param(struct lm *m, int id, const char *et, const char *dims)
{
	lm_add(m, "<layer id=\"%d\" name=\"in%d\" type=\"Parameter\" version=\"opset1\">"
	       "<data shape=\"%s\" element_type=\"%s\"/>"
	       "<output><port id=\"0\" precision=\"%s\">",
	       id, id, dims, et, prec(et));
	lm_dims(m, dims);
	lm_add(m, "</port></output></layer>\n");
}

/* A constant whose @n values of @esize bytes are appended to the .bin. */
static void lm_const(struct lm *m, int id, const char *et, const char *dims,
		     const void *data, size_t esize, size_t n)
{
	size_t off = m->binlen;

	if (off + esize * n > sizeof(m->bin))
		abort();
	memcpy(m->bin + off, data, esize * n);
	m->binlen += esize * n;
	lm_add(m, "<layer id=\"%d\" name=\"c%d\" type=\"Const\" version=\"opset1\">"
	       "<data element_type=\"%s\" shape=\"%s\" offset=\"%zu\" size=\"%zu\"/>"
	       "<output><port id=\"0\" precision=\"%s\">",
	       id, id, et, dims, off, esize * n, prec(et));
	lm_dims(m, dims);
	lm_add(m, "</port></output></layer>\n");
}

static void lm_constf(struct lm *m, int id, const char *dims,
		      const float *v, size_t n)
{
	lm_const(m, id, "f32", dims, v, sizeof(*v), n);
}

static void lm_consti64(struct lm *m, int id, const char *dims,
			const int64_t *v, size_t n)
{
	lm_const(m, id, "i64", dims, v, sizeof(*v), n);
}

/*
 * The layer under test, id 100: @ins are ';'-separated input port dims
 * (port ids 0..), @outs the output port dims (ids after the inputs),
 * each "I32:"-prefixed for an i32 port;
 * @data the <data> attributes, or NULL.
 */
static void lm_layer(struct lm *m, const char *type, const char *version,
		     const char *data, const char *ins, const char *outs)
{
	char buf[256];
	const char *lists[2] = { ins, outs };
	int port = 0, k;

	lm_add(m, "<layer id=\"100\" name=\"op\" type=\"%s\" version=\"%s\">",
	       type, version);
	if (data)
		lm_add(m, "<data %s/>", data);
	for (k = 0; k < 2; k++) {
		const char *p = lists[k];

		lm_add(m, k ? "<output>" : "<input>");
		while (*p) {
			size_t n = strcspn(p, ";");

			if (n >= sizeof(buf))
				abort();
			memcpy(buf, p, n);
			buf[n] = 0;
			if (!strncmp(buf, "I32:", 4)) {	/* integer port */
				lm_add(m, "<port id=\"%d\" precision=\"I32\">",
				       port++);
				lm_dims(m, buf + 4);
			} else {
				lm_add(m, "<port id=\"%d\" precision=\"FP32\">",
				       port++);
				lm_dims(m, buf);
			}
			lm_add(m, "</port>");
			p += n;
			if (*p)
				p++;
		}
		lm_add(m, k ? "</output></layer>\n" : "</input>");
	}
}

static void lm_result(struct lm *m, int id, const char *dims)
{
	lm_add(m, "<layer id=\"%d\" name=\"out%d\" type=\"Result\" version=\"opset1\">"
	       "<input><port id=\"0\" precision=\"FP32\">", id, id);
	lm_dims(m, dims);
	lm_add(m, "</port></input></layer>\n");
}

/* Edges: sources 0..nin-1 feed layer 100's ports 0..nin-1; its outputs
 * (ports nin..nin+nout-1) feed Results 200, 201, ... */
static void lm_end(struct lm *m, int nin, int nout)
{
	int i;

	lm_add(m, "</layers>\n<edges>\n");
	for (i = 0; i < nin; i++)
		lm_add(m, "<edge from-layer=\"%d\" from-port=\"0\" to-layer=\"100\" to-port=\"%d\"/>\n",
		       i, i);
	for (i = 0; i < nout; i++)
		lm_add(m, "<edge from-layer=\"100\" from-port=\"%d\" to-layer=\"%d\" to-port=\"0\"/>\n",
		       nin + i, 200 + i);
	lm_add(m, "</edges>\n</net>\n");
}

/* ---- running them ----------------------------------------------------- */

#define MAXOUT	2

struct run {
	int err;			/* first failing ioctl's errno */
	int nout;
	float out[MAXOUT][256];		/* outputs converted to float */
	size_t n[MAXOUT];
	unsigned int type[MAXOUT];
	char msg[256];
};

static float to_float(const void *p, unsigned int type, size_t i)
{
	switch (type) {
	case NPR_ELEM_F32:
		return ((const float *)p)[i];
	case NPR_ELEM_I32:
		return (float)((const int32_t *)p)[i];
	case NPR_ELEM_I64:
		return (float)((const int64_t *)p)[i];
	default:
		return NAN;
	}
}

/*
 * Load, compile and run @m with input 0 (f32, @nin0 values) set to @in0;
 * other Parameters are not used by these tests.  Every output is read back
 * as float into @r.
 */
static void run(struct lm *m, const float *in0, size_t nin0, struct run *r)
{
	struct npr_model_load ml;
	struct npr_compile c;
	struct npr_req_create rc;
	struct npr_model_info mi;
	struct npr_tensor_arg t;
	struct npr_port_info pi;
	struct npr_infer inf;
	struct npr_handle_destroy d;
	unsigned char buf[2048];
	int fd, i, err;
	size_t k;

	memset(r, 0, sizeof(*r));
	fd = npr_open("cpu", 0);
	if (fd < 0) {
		r->err = fd;
		return;
	}
	npr_prep_model_load_mem(&ml, m->xml, m->len, m->bin, m->binlen);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		goto fail;
	npr_prep_compile(&c, ml.handle);
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &c);
	if (err)
		goto fail;
	npr_prep_req_create(&rc, c.exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		goto fail;

	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = c.exec;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		goto fail;
	if (mi.num_inputs) {
		npr_prep_port_info(&pi, c.exec, 0, 0, NULL, 0);
		err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
		if (err)
			goto fail;
		npr_prep_tensor(&t, rc.req, 0, 0, (void *)in0,
				nin0 * sizeof(float));
		t.elem_type = pi.elem_type;
		t.rank = pi.rank;
		memcpy(t.dims, pi.dims, sizeof(t.dims));
		err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &t);
		if (err)
			goto fail;
	}
	npr_prep_infer(&inf, rc.req);
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (err)
		goto fail;
	r->nout = mi.num_outputs < MAXOUT ? mi.num_outputs : MAXOUT;
	for (i = 0; i < r->nout; i++) {
		npr_prep_tensor(&t, rc.req, i, 1, buf, sizeof(buf));
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);
		if (err)
			goto fail;
		r->type[i] = t.elem_type;
		r->n[i] = t.bytes / npr_elem_size(t.elem_type);
		for (k = 0; k < r->n[i] && k < 256; k++)
			r->out[i][k] = to_float(buf, t.elem_type, k);
	}
	npr_prep_destroy(&d, ml.handle);
	npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d);
	npr_close(fd);
	return;
fail:
	r->err = err;
	snprintf(r->msg, sizeof(r->msg), "%s", npr_last_error());
	npr_close(fd);
}

/* Records a failure, with both values, when @got is not within @tol. */
static void expect_near(struct npr_test *_metadata, int o, size_t i,
			float got, float want, float tol)
{
	if (fabsf(got - want) <= tol)
		return;
	TH_LOG("output %d [%zu]: got %g, want %g", o, i, got, want);
	NPR_TH_FAIL(0);
}

/* Stops the test, printing the library's message, when a run failed. */
#define ASSERT_RUN_OK(r) do {						\
	if ((r)->err)							\
		TH_LOG("errno %d: %s", (r)->err, (r)->msg);		\
	ASSERT_EQ((r)->err, 0);						\
} while (0)

/* Asserts that a run succeeded and output @o equals @want within @tol. */
#define EXPECT_OUT(r, o, want, tol) do {				\
	size_t _i, _n = sizeof(want) / sizeof((want)[0]);		\
	ASSERT_RUN_OK(r);						\
	ASSERT_EQ((r)->n[o], _n);					\
	for (_i = 0; _i < _n; _i++)					\
		expect_near(_metadata, o, _i, (r)->out[o][_i], (want)[_i], \
			    tol);					\
} while (0)

/* The failure message names @what. */
#define EXPECT_MSG(r, what) do {					\
	if (!strstr((r)->msg, what))					\
		TH_LOG("message lacks \"%s\": %s", what, (r)->msg);	\
	EXPECT_NE(strstr((r)->msg, what), NULL);			\
} while (0)

/* ---- MVN -------------------------------------------------------------- */

/*
 * MVN-6 over the last axis of [1,2,3,4]: mean 2.5, variance
 * (2.25+0.25+0.25+2.25)/4 = 1.25, sqrt 1.1180340; (x - 2.5) / 1.1180340.
 */
static void mvn6(struct npr_test *_metadata, int64_t axis, const char *attrs,
		 const float *want)
{
	static const float x[4] = { 1, 2, 3, 4 };
	struct lm m;
	struct run r;
	size_t i;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,1,4");
	lm_consti64(&m, 1, "1", &axis, 1);
	lm_layer(&m, "MVN", "opset6", attrs, "1,1,4;1", "1,1,4");
	lm_result(&m, 200, "1,1,4");
	lm_end(&m, 2, 1);
	run(&m, x, 4, &r);
	ASSERT_RUN_OK(&r);
	ASSERT_EQ(r.n[0], 4);
	for (i = 0; i < 4; i++)
		expect_near(_metadata, 0, i, r.out[0][i], want[i], 1e-5f);
}

TEST(mvn6_normalize_variance)
{
	static const float want[4] = { -1.3416408f, -0.4472136f, 0.4472136f,
				       1.3416408f };

	mvn6(_metadata, 2, "normalize_variance=\"true\" eps=\"0\" "
	     "eps_mode=\"inside_sqrt\"", want);
}

TEST(mvn6_negative_axis)
{
	static const float want[4] = { -1.3416408f, -0.4472136f, 0.4472136f,
				       1.3416408f };

	mvn6(_metadata, -1, "normalize_variance=\"true\" eps=\"0\" "
	     "eps_mode=\"inside_sqrt\"", want);
}

TEST(mvn6_mean_only)
{
	static const float want[4] = { -1.5f, -0.5f, 0.5f, 1.5f };

	mvn6(_metadata, 2, "normalize_variance=\"false\" eps=\"0\" "
	     "eps_mode=\"inside_sqrt\"", want);
}

/* outside_sqrt: (x - 2.5) / (sqrt(1.25) + 1) = (x - 2.5) / 2.1180340 */
TEST(mvn6_eps_outside_sqrt)
{
	static const float want[4] = { -0.7082039f, -0.2360680f, 0.2360680f,
				       0.7082039f };

	mvn6(_metadata, 2, "normalize_variance=\"true\" eps=\"1\" "
	     "eps_mode=\"outside_sqrt\"", want);
}

/* inside_sqrt: (x - 2.5) / sqrt(1.25 + 2.75) = (x - 2.5) / 2 */
TEST(mvn6_eps_inside_sqrt)
{
	static const float want[4] = { -0.75f, -0.25f, 0.25f, 0.75f };

	mvn6(_metadata, 2, "normalize_variance=\"true\" eps=\"2.75\" "
	     "eps_mode=\"inside_sqrt\"", want);
}

TEST(mvn6_axis_out_of_range)
{
	static const float x[4] = { 1, 2, 3, 4 };
	int64_t axis = 3;
	struct lm m;
	struct run r;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,1,4");
	lm_consti64(&m, 1, "1", &axis, 1);
	lm_layer(&m, "MVN", "opset6", "normalize_variance=\"true\" eps=\"0\" "
		 "eps_mode=\"inside_sqrt\"", "1,1,4;1", "1,1,4");
	lm_result(&m, 200, "1,1,4");
	lm_end(&m, 2, 1);
	run(&m, x, 4, &r);
	EXPECT_EQ(r.err, -EINVAL);
	EXPECT_MSG(&r, "MVN");
}

TEST(mvn6_bad_eps_mode)
{
	static const float x[4] = { 1, 2, 3, 4 };
	int64_t axis = 2;
	struct lm m;
	struct run r;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,1,4");
	lm_consti64(&m, 1, "1", &axis, 1);
	lm_layer(&m, "MVN", "opset6", "normalize_variance=\"true\" eps=\"0\" "
		 "eps_mode=\"sideways\"", "1,1,4;1", "1,1,4");
	lm_result(&m, 200, "1,1,4");
	lm_end(&m, 2, 1);
	run(&m, x, 4, &r);
	EXPECT_EQ(r.err, -EINVAL);
	EXPECT_MSG(&r, "eps_mode");
}

/*
 * MVN-1 on [1,2,2]: channel 0 = {1,3}, channel 1 = {2,6}.
 * Per channel: means 2 and 4, variances 1 and 4: {-1,1}, {-1,1}.
 * Across channels: mean 3, variance (4+0+1+9)/4 = 3.5, sqrt 1.8708287:
 * {-1.0690450, 0, -0.5345225, 1.6035675}.
 */
static void mvn1(struct npr_test *_metadata, const char *across,
		 const float *want)
{
	static const float x[4] = { 1, 3, 2, 6 };
	char attrs[160];
	struct lm m;
	struct run r;
	size_t i;

	snprintf(attrs, sizeof(attrs), "across_channels=\"%s\" "
		 "normalize_variance=\"true\" eps=\"1e-12\"", across);
	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,2,2");
	lm_layer(&m, "MVN", "opset2", attrs, "1,2,2", "1,2,2");
	lm_result(&m, 200, "1,2,2");
	lm_end(&m, 1, 1);
	run(&m, x, 4, &r);
	ASSERT_RUN_OK(&r);
	ASSERT_EQ(r.n[0], 4);
	for (i = 0; i < 4; i++)
		expect_near(_metadata, 0, i, r.out[0][i], want[i], 1e-5f);
}

TEST(mvn1_per_channel)
{
	static const float want[4] = { -1, 1, -1, 1 };

	mvn1(_metadata, "false", want);
}

TEST(mvn1_across_channels)
{
	static const float want[4] = { -1.0690450f, 0, -0.5345225f,
				       1.6035675f };

	mvn1(_metadata, "true", want);
}

/* ---- NormalizeL2 ------------------------------------------------------ */

/* [3,4] over axis 1: the norm is 5 with a small eps; sqrt(max(25, eps))
 * or sqrt(25 + eps) otherwise. */
static void l2(struct npr_test *_metadata, const char *attrs, int64_t axis,
	       const float *want)
{
	static const float x[2] = { 3, 4 };
	struct lm m;
	struct run r;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,2");
	lm_consti64(&m, 1, "1", &axis, 1);
	lm_layer(&m, "NormalizeL2", "opset1", attrs, "1,2;1", "1,2");
	lm_result(&m, 200, "1,2");
	lm_end(&m, 2, 1);
	run(&m, x, 2, &r);
	ASSERT_RUN_OK(&r);
	ASSERT_EQ(r.n[0], 2);
	expect_near(_metadata, 0, 0, r.out[0][0], want[0], 1e-6f);
	expect_near(_metadata, 0, 1, r.out[0][1], want[1], 1e-6f);
}

TEST(normalize_l2_plain)
{
	static const float want[2] = { 0.6f, 0.8f };

	l2(_metadata, "eps=\"1e-10\" eps_mode=\"add\"", 1, want);
}

TEST(normalize_l2_negative_axis)
{
	static const float want[2] = { 0.6f, 0.8f };

	l2(_metadata, "eps=\"1e-10\" eps_mode=\"max\"", -1, want);
}

/* max: sqrt(max(25, 100)) = 10 */
TEST(normalize_l2_eps_max)
{
	static const float want[2] = { 0.3f, 0.4f };

	l2(_metadata, "eps=\"100\" eps_mode=\"max\"", 1, want);
}

/* add: sqrt(25 + 11) = 6 */
TEST(normalize_l2_eps_add)
{
	static const float want[2] = { 0.5f, 4.0f / 6.0f };

	l2(_metadata, "eps=\"11\" eps_mode=\"add\"", 1, want);
}

/* ---- BatchNormInference ----------------------------------------------- */

/*
 * data [1,2,1,2]: channel 0 = {1,3}, channel 1 = {2,4}; gamma {2, 0.5},
 * beta {1, -1}, mean {2, 3}, variance {4, 1}, epsilon 0:
 * channel 0: 2 (x - 2) / 2 + 1 = x - 1 -> {0, 2}
 * channel 1: 0.5 (x - 3) / 1 - 1      -> {-1.5, -0.5}
 */
static void batchnorm(struct npr_test *_metadata, int v5)
{
	static const float x[4] = { 1, 3, 2, 4 };
	static const float gamma[2] = { 2, 0.5f }, beta[2] = { 1, -1 };
	static const float mean[2] = { 2, 3 }, var[2] = { 4, 1 };
	static const float want[4] = { 0, 2, -1.5f, -0.5f };
	struct lm m;
	struct run r;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,2,1,2");
	if (v5) {	/* data, gamma, beta, mean, variance */
		lm_constf(&m, 1, "2", gamma, 2);
		lm_constf(&m, 2, "2", beta, 2);
		lm_constf(&m, 3, "2", mean, 2);
		lm_constf(&m, 4, "2", var, 2);
		lm_layer(&m, "BatchNormInference", "opset5", "epsilon=\"0\"",
			 "1,2,1,2;2;2;2;2", "1,2,1,2");
		lm_result(&m, 200, "1,2,1,2");
		lm_end(&m, 5, 1);
	} else {
		/* opset1 order is gamma, beta, data, mean, variance: the
		 * Parameter has to reach port 2, so spell the edges out. */
		lm_constf(&m, 1, "2", gamma, 2);
		lm_constf(&m, 2, "2", beta, 2);
		lm_constf(&m, 3, "2", mean, 2);
		lm_constf(&m, 4, "2", var, 2);
		lm_layer(&m, "BatchNormInference", "opset1", "epsilon=\"0\"",
			 "2;2;1,2,1,2;2;2", "1,2,1,2");
		lm_result(&m, 200, "1,2,1,2");
		lm_add(&m, "</layers>\n<edges>\n"
		       "<edge from-layer=\"1\" from-port=\"0\" to-layer=\"100\" to-port=\"0\"/>\n"
		       "<edge from-layer=\"2\" from-port=\"0\" to-layer=\"100\" to-port=\"1\"/>\n"
		       "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"100\" to-port=\"2\"/>\n"
		       "<edge from-layer=\"3\" from-port=\"0\" to-layer=\"100\" to-port=\"3\"/>\n"
		       "<edge from-layer=\"4\" from-port=\"0\" to-layer=\"100\" to-port=\"4\"/>\n"
		       "<edge from-layer=\"100\" from-port=\"5\" to-layer=\"200\" to-port=\"0\"/>\n"
		       "</edges>\n</net>\n");
	}
	run(&m, x, 4, &r);
	EXPECT_OUT(&r, 0, want, 1e-6f);
}

TEST(batchnorm_v5)
{
	batchnorm(_metadata, 1);
}

TEST(batchnorm_v1_input_order)
{
	batchnorm(_metadata, 0);
}

/* ---- transposed convolution -------------------------------------------- */

/*
 * ConvolutionBackpropData of x = [[1,2],[3,4]] with a 2x2 filter w
 * (layout [C_in, C_out, kH, kW]): every input pixel adds x * w at its
 * stride-scaled position.
 */
static void deconv(struct npr_test *_metadata, const float *w,
		   const char *attrs, const char *odims, const float *want,
		   size_t nwant)
{
	static const float x[4] = { 1, 2, 3, 4 };
	struct lm m;
	struct run r;
	char ins[64];
	size_t i;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,1,2,2");
	lm_constf(&m, 1, "1,1,2,2", w, 4);
	snprintf(ins, sizeof(ins), "1,1,2,2;1,1,2,2");
	lm_layer(&m, "ConvolutionBackpropData", "opset1", attrs, ins, odims);
	lm_result(&m, 200, odims);
	lm_end(&m, 2, 1);
	run(&m, x, 4, &r);
	ASSERT_RUN_OK(&r);
	ASSERT_EQ(r.n[0], nwant);
	for (i = 0; i < nwant; i++)
		expect_near(_metadata, 0, i, r.out[0][i], want[i], 1e-5f);
}

/* stride 1, w = ones: out[i][j] = sum of x over the 2x2 window ending at
 * (i, j): [[1,3,2],[4,10,6],[3,7,4]]. */
TEST(deconv_stride1)
{
	static const float w[4] = { 1, 1, 1, 1 };
	static const float want[9] = { 1, 3, 2, 4, 10, 6, 3, 7, 4 };

	deconv(_metadata, w, "strides=\"1,1\" dilations=\"1,1\" "
	       "pads_begin=\"0,0\" pads_end=\"0,0\"", "1,1,3,3", want, 9);
}

/* stride 2: non-overlapping 2x2 blocks x * w, w = [[1,2],[3,4]]. */
TEST(deconv_stride2)
{
	static const float w[4] = { 1, 2, 3, 4 };
	static const float want[16] = {
		1, 2, 2, 4,
		3, 4, 6, 8,
		3, 6, 4, 8,
		9, 12, 12, 16,
	};

	deconv(_metadata, w, "strides=\"2,2\" dilations=\"1,1\" "
	       "pads_begin=\"0,0\" pads_end=\"0,0\"", "1,1,4,4", want, 16);
}

/* pads crop the full output: stride 1, pads 1 on every side of the 3x3
 * result above leaves its centre, 10. */
TEST(deconv_pads_crop)
{
	static const float w[4] = { 1, 1, 1, 1 };
	static const float want[1] = { 10 };

	deconv(_metadata, w, "strides=\"1,1\" dilations=\"1,1\" "
	       "pads_begin=\"1,1\" pads_end=\"1,1\"", "1,1,1,1", want, 1);
}

/* output_padding adds rows/columns at the end: stride 2, output_padding 1
 * gives 5x5 with a last row and column of zeros. */
TEST(deconv_output_padding)
{
	static const float w[4] = { 1, 2, 3, 4 };
	static const float want[25] = {
		1, 2, 2, 4, 0,
		3, 4, 6, 8, 0,
		3, 6, 4, 8, 0,
		9, 12, 12, 16, 0,
		0, 0, 0, 0, 0,
	};

	deconv(_metadata, w, "strides=\"2,2\" dilations=\"1,1\" "
	       "pads_begin=\"0,0\" pads_end=\"0,0\" output_padding=\"1,1\"",
	       "1,1,5,5", want, 25);
}

/* dilation 2, stride 1: taps at offsets 0 and 2, output 4x4:
 * out[i][j] = sum over a,b in {0,1} of x[i-2a][j-2b] w[a][b], w = ones:
 * [[1,2,1,2],[3,4,3,4],[1,2,1,2],[3,4,3,4]]. */
TEST(deconv_dilation)
{
	static const float w[4] = { 1, 1, 1, 1 };
	static const float want[16] = {
		1, 2, 1, 2,
		3, 4, 3, 4,
		1, 2, 1, 2,
		3, 4, 3, 4,
	};

	deconv(_metadata, w, "strides=\"1,1\" dilations=\"2,2\" "
	       "pads_begin=\"0,0\" pads_end=\"0,0\"", "1,1,4,4", want, 16);
}

TEST(deconv_channel_mismatch)
{
	static const float x[4] = { 1, 2, 3, 4 };
	static const float w[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct lm m;
	struct run r;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,1,2,2");
	lm_constf(&m, 1, "2,1,2,2", w, 8);	/* C_in 2 != 1 */
	lm_layer(&m, "ConvolutionBackpropData", "opset1",
		 "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" "
		 "pads_end=\"0,0\"", "1,1,2,2;2,1,2,2", "1,1,3,3");
	lm_result(&m, 200, "1,1,3,3");
	lm_end(&m, 2, 1);
	run(&m, x, 4, &r);
	EXPECT_EQ(r.err, -EINVAL);
	EXPECT_MSG(&r, "ConvolutionBackpropData");
}

/* Two groups of one channel each, stride 2, 2x2 filters
 * [G, C_in/G, C_out/G, kH, kW]: group 0 w = ones on x = 1 gives a block of
 * ones; group 1 w = [[1,2],[3,4]] on x = 2 gives [[2,4],[6,8]]. */
TEST(group_deconv)
{
	static const float x[2] = { 1, 2 };
	static const float w[8] = { 1, 1, 1, 1, 1, 2, 3, 4 };
	static const float want[8] = { 1, 1, 1, 1, 2, 4, 6, 8 };
	struct lm m;
	struct run r;

	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,2,1,1");
	lm_constf(&m, 1, "2,1,1,2,2", w, 8);
	lm_layer(&m, "GroupConvolutionBackpropData", "opset1",
		 "strides=\"2,2\" dilations=\"1,1\" pads_begin=\"0,0\" "
		 "pads_end=\"0,0\"", "1,2,1,1;2,1,1,2,2", "1,2,2,2");
	lm_result(&m, 200, "1,2,2,2");
	lm_end(&m, 2, 1);
	run(&m, x, 2, &r);
	EXPECT_OUT(&r, 0, want, 1e-6f);
}

/* ---- CTC greedy decoders ---------------------------------------------- */

/*
 * Logits over 4 steps and 3 classes (class 2 is the blank for
 * CTCGreedyDecoder): the argmax per step is 0, 0, 2, 1.
 */
static const float ctc_logits[12] = {
	0.9f, 0.1f, 0.0f,
	0.8f, 0.1f, 0.1f,
	0.1f, 0.2f, 0.7f,
	0.1f, 0.6f, 0.3f,
};

/* CTCGreedyDecoder-1, input [T=4, N=1, C=3], all steps valid:
 * merge_repeated: 0 0 _ 1 -> {0, 1, -1, -1}; otherwise {0, 0, 1, -1}. */
static void ctc1(struct npr_test *_metadata, const char *merge,
		 const float *want)
{
	static const float mask[4] = { 1, 1, 1, 1 };
	char attrs[64];
	struct lm m;
	struct run r;
	size_t i;

	snprintf(attrs, sizeof(attrs), "ctc_merge_repeated=\"%s\"", merge);
	lm_begin(&m);
	lm_param(&m, 0, "f32", "4,1,3");
	lm_constf(&m, 1, "4,1", mask, 4);
	lm_layer(&m, "CTCGreedyDecoder", "opset1", attrs, "4,1,3;4,1",
		 "1,4,1,1");
	lm_result(&m, 200, "1,4,1,1");
	lm_end(&m, 2, 1);
	run(&m, ctc_logits, 12, &r);
	ASSERT_RUN_OK(&r);
	ASSERT_EQ(r.n[0], 4);
	for (i = 0; i < 4; i++)
		expect_near(_metadata, 0, i, r.out[0][i], want[i], 0);
}

TEST(ctc_greedy_merge)
{
	static const float want[4] = { 0, 1, -1, -1 };

	ctc1(_metadata, "true", want);
}

TEST(ctc_greedy_no_merge)
{
	static const float want[4] = { 0, 0, 1, -1 };

	ctc1(_metadata, "false", want);
}

/* CTCGreedyDecoderSeqLen-6, input [N=1, T=4, C=3], sequence length 3:
 * only steps 0 0 _ count.  merge: {0} length 1; no merge: {0, 0}
 * length 2.  Unused positions hold -1. */
static void ctc6(struct npr_test *_metadata, const char *merge,
		 const float *want, float want_len)
{
	static const int32_t len = 3;
	char attrs[64];
	struct lm m;
	struct run r;
	size_t i;

	snprintf(attrs, sizeof(attrs), "merge_repeated=\"%s\"", merge);
	lm_begin(&m);
	lm_param(&m, 0, "f32", "1,4,3");
	lm_const(&m, 1, "i32", "1", &len, sizeof(len), 1);
	lm_layer(&m, "CTCGreedyDecoderSeqLen", "opset6", attrs, "1,4,3;I32:1",
		 "I32:1,4;I32:1");
	lm_result(&m, 200, "1,4");
	lm_result(&m, 201, "1");
	lm_end(&m, 2, 2);
	run(&m, ctc_logits, 12, &r);
	ASSERT_RUN_OK(&r);
	ASSERT_EQ(r.nout, 2);
	ASSERT_EQ(r.n[0], 4);
	EXPECT_EQ(r.type[0], NPR_ELEM_I32);
	for (i = 0; i < 4; i++)
		expect_near(_metadata, 0, i, r.out[0][i], want[i], 0);
	ASSERT_EQ(r.n[1], 1);
	EXPECT_EQ(r.out[1][0], want_len);
}

TEST(ctc_seqlen_merge)
{
	static const float want[4] = { 0, -1, -1, -1 };

	ctc6(_metadata, "true", want, 1);
}

TEST(ctc_seqlen_no_merge)
{
	static const float want[4] = { 0, 0, -1, -1 };

	ctc6(_metadata, "false", want, 2);
}

TEST_HARNESS_MAIN
