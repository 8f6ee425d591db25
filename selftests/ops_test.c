// SPDX-License-Identifier: MIT
/*
 * Op-level tests: one op per model, built here as an in-memory IR, loaded,
 * compiled and run through the public npr_ioctl() API on the cpu device.
 * Each test checks an edge case of one op: broadcasting, negative axes and
 * indices, empty tensors, rounding and padding modes, integer types, and
 * errors (a clear -errno and a message naming the layer and the op).
 *
 * Expected values come from the worked examples of the OpenVINO operation
 * specifications or are derived by hand in the comments; none was produced
 * by running this library.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "xb.h"
#include "npuring.h"

#define MAX_IN		6
#define MAX_OUT		4
#define MAX_VALS	1024

/* ---- building a one-op model ------------------------------------------ */

/**
 * struct tin - one input of the op under test
 * @et: element type as IR writes it ("f32", "i64", "boolean", ...).
 * @dims: comma-separated dimensions, "" for a scalar.
 * @v: the values, converted to @et (NULL: zeros).
 * @konst: a Const layer (else a Parameter, set at inference).
 */
struct tin {
	const char *et;
	const char *dims;
	const double *v;
	bool konst;
};

/**
 * struct top - the op under test
 * @type: op type.
 * @ver: "opset8".
 * @attrs: the <data> element's attributes, written as in IR, or NULL.
 * @in: inputs, @et NULL after the last.
 * @out: declared output shapes, NULL after the last; the compile checks
 *       the inferred shapes against them.
 * @oet: declared output element types (the caller's types at the
 *       boundary); NULL: the type of input 0.
 * @again: per input, NULL or other values for a Parameter: the request
 *         then runs a second time with them and the results are those
 *         of the second run (outputs whose shape depends on input values
 *         change shape between runs).
 * @other_request: run the second time on a second request of the same
 *                 compiled model, then report the first request's
 *                 outputs again (each request keeps its own shapes).
 */
struct top {
	const char *type;
	const char *ver;
	const char *attrs;
	struct tin in[MAX_IN];
	const char *out[MAX_OUT];
	const char *oet[MAX_OUT];
	const double *again[MAX_IN];
	bool other_request;
};

/**
 * struct tres - what running the op gave
 * @err: 0 or the first failing call's -errno.
 * @msg: its message.
 * @nout: number of outputs.
 * @type, @rank, @dims: per output, as NPR_IOCTL_GET_TENSOR reports them.
 * @n: per output, element count.
 * @v: per output, the values as doubles.
 */
struct tres {
	int err;
	char msg[1024];
	int nout;
	unsigned int type[MAX_OUT];
	int rank[MAX_OUT];
	int64_t dims[MAX_OUT][8];
	size_t n[MAX_OUT];
	double v[MAX_OUT][MAX_VALS];
};

static int parse_dims(const char *dims, int64_t *d)
{
	const char *p = dims;
	int r = 0;

	while (*p) {
		d[r++] = strtoll(p, NULL, 10);
		p += strcspn(p, ",");
		if (*p)
			p++;
	}
	return r;
}

static void xb_dims(struct xb *b, const char *dims)
{
	int64_t d[8];
	int r = parse_dims(dims, d), i;

	for (i = 0; i < r; i++)
		xb_add(b, "<dim>%lld</dim>", (long long)d[i]);
}

static const struct {
	const char *name;
	unsigned int type;
	size_t size;
} types[] = {
	{ "f32", NPR_ELEM_F32, 4 }, { "f64", NPR_ELEM_F64, 8 },
	{ "i8", NPR_ELEM_I8, 1 }, { "u8", NPR_ELEM_U8, 1 },
	{ "i32", NPR_ELEM_I32, 4 }, { "i64", NPR_ELEM_I64, 8 },
	{ "boolean", NPR_ELEM_BOOLEAN, 1 }, { "i16", NPR_ELEM_I16, 2 },
	{ "u16", NPR_ELEM_U16, 2 }, { "u32", NPR_ELEM_U32, 4 },
	{ "u64", NPR_ELEM_U64, 8 },
};

static unsigned int type_of(const char *et, size_t *size)
{
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].name, et)) {
			*size = types[i].size;
			return types[i].type;
		}
	abort();	/* a typo in a test */
}

static size_t size_of(unsigned int t)
{
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == t)
			return types[i].size;
	return 0;
}

static void put(unsigned int t, void *p, size_t i, double v)
{
	switch (t) {
	case NPR_ELEM_F32: ((float *)p)[i] = (float)v; break;
	case NPR_ELEM_F64: ((double *)p)[i] = v; break;
	case NPR_ELEM_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	case NPR_ELEM_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPR_ELEM_BOOLEAN: ((uint8_t *)p)[i] = v != 0; break;
	case NPR_ELEM_I16: ((int16_t *)p)[i] = (int16_t)v; break;
	case NPR_ELEM_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case NPR_ELEM_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case NPR_ELEM_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case NPR_ELEM_I64: ((int64_t *)p)[i] = (int64_t)v; break;
	case NPR_ELEM_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	}
}

static double get(unsigned int t, const void *p, size_t i)
{
	switch (t) {
	case NPR_ELEM_F32: return ((const float *)p)[i];
	case NPR_ELEM_F64: return ((const double *)p)[i];
	case NPR_ELEM_I8: return ((const int8_t *)p)[i];
	case NPR_ELEM_U8: return ((const uint8_t *)p)[i];
	case NPR_ELEM_BOOLEAN: return ((const uint8_t *)p)[i];
	case NPR_ELEM_I16: return ((const int16_t *)p)[i];
	case NPR_ELEM_U16: return ((const uint16_t *)p)[i];
	case NPR_ELEM_I32: return ((const int32_t *)p)[i];
	case NPR_ELEM_U32: return ((const uint32_t *)p)[i];
	case NPR_ELEM_I64: return (double)((const int64_t *)p)[i];
	case NPR_ELEM_U64: return (double)((const uint64_t *)p)[i];
	}
	return NAN;
}

/* The typed bytes of input @t; *bytes set.  Caller frees. */
static void *typed(const struct tin *t, size_t *bytes, unsigned int *type)
{
	int64_t d[8], cnt = 1;
	int r = parse_dims(t->dims, d), i;
	size_t es;
	void *buf;

	*type = type_of(t->et, &es);
	for (i = 0; i < r; i++)
		cnt *= d[i];
	*bytes = cnt * es;
	buf = calloc(1, *bytes ? *bytes : 1);
	if (!buf)
		abort();
	for (i = 0; t->v && i < cnt; i++)
		put(*type, buf, i, t->v[i]);
	return buf;
}

/* IR port precision of element type @et. */
static const char *prec(const char *et)
{
	static const char *const map[][2] = {
		{ "f32", "FP32" }, { "f64", "FP64" }, { "i8", "I8" },
		{ "u8", "U8" }, { "i32", "I32" }, { "i64", "I64" },
		{ "boolean", "BOOL" }, { "i16", "I16" }, { "u16", "U16" },
		{ "u32", "U32" }, { "u64", "U64" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i][0], et))
			return map[i][1];
	abort();	/* a typo in a test */
}

static void set_err(struct tres *r, int err)
{
	r->err = err;
	snprintf(r->msg, sizeof(r->msg), "%s", npr_last_error());
}

static int read_outputs(int fd, int nout, __u32 req, struct tres *r);

/*
 * Set the Parameters of request @req (with @again: the values of
 * op->again where given), run it, read the outputs into @r.
 */
static int infer_once(int fd, const struct top *op, int nin, int nout,
		      __u32 req, bool again, struct tres *r)
{
	struct npr_infer inf;
	int i, pi, err;

	for (i = 0, pi = 0; i < nin; i++) {
		struct tin t = op->in[i];
		struct npr_tensor_arg ta;
		unsigned int type;
		int64_t d[8];
		size_t bytes;
		void *data;
		int k;

		if (t.konst)
			continue;
		if (again && op->again[i])
			t.v = op->again[i];
		data = typed(&t, &bytes, &type);
		npr_prep_tensor(&ta, req, pi++, 0, data, bytes);
		ta.elem_type = type;
		ta.rank = parse_dims(t.dims, d);
		for (k = 0; k < (int)ta.rank; k++)
			ta.dims[k] = d[k];
		err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
		free(data);
		if (err) {
			set_err(r, err);
			return err;
		}
	}
	npr_prep_infer(&inf, req);
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (err) {
		set_err(r, err);
		return err;
	}
	return read_outputs(fd, nout, req, r);
}

/* The outputs of request @req as GET_TENSOR gives them, into @r. */
static int read_outputs(int fd, int nout, __u32 req, struct tres *r)
{
	int i, err;

	for (i = 0; i < nout; i++) {
		char buf[MAX_VALS * 8];
		struct npr_tensor_arg ta;
		size_t k, es;

		npr_prep_tensor(&ta, req, i, 1, buf, sizeof(buf));
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
		if (err) {
			set_err(r, err);
			return err;
		}
		r->type[i] = ta.elem_type;
		r->rank[i] = ta.rank;
		memcpy(r->dims[i], ta.dims, sizeof(r->dims[i]));
		es = size_of(ta.elem_type);
		r->n[i] = es ? ta.bytes / es : 0;
		for (k = 0; k < r->n[i] && k < MAX_VALS; k++)
			r->v[i][k] = get(ta.elem_type, buf, k);
	}
	return 0;
}

static int count_ports(const struct top *op, int *nout)
{
	int nin;

	for (nin = 0; nin < MAX_IN && op->in[nin].et; nin++)
		;
	for (*nout = 0; *nout < MAX_OUT && op->out[*nout]; (*nout)++)
		;
	return nin;
}

/* Build the model of @op and compile it on @fd: 0 and *exec, or the
 * errno with @r's message set. */
static int compile_op(int fd, const struct top *op, __u32 *exec,
		      struct tres *r)
{
	struct xb x = { 0 };
	char *bin = NULL;
	size_t bin_len = 0;
	int nin, nout, i;
	struct npr_model_load ml;
	struct npr_compile cc;
	int err;

	nin = count_ports(op, &nout);
	xb_add(&x, "<?xml version=\"1.0\"?>\n<net name=\"t\" version=\"11\">\n<layers>\n");
	for (i = 0; i < nin; i++) {
		const struct tin *t = &op->in[i];

		if (t->konst) {
			size_t bytes;
			unsigned int type;
			void *data = typed(t, &bytes, &type);

			bin = realloc(bin, bin_len + bytes + 1);
			if (!bin)
				abort();
			memcpy(bin + bin_len, data, bytes);
			free(data);
			xb_add(&x, "<layer id=\"%d\" name=\"c%d\" type=\"Const\" version=\"opset1\">"
			       "<data element_type=\"%s\" shape=\"%s\" offset=\"%zu\" size=\"%zu\"/>"
			       "<output><port id=\"0\">", i, i, t->et, t->dims,
			       bin_len, bytes);
			bin_len += bytes;
		} else {
			xb_add(&x, "<layer id=\"%d\" name=\"in%d\" type=\"Parameter\" version=\"opset1\">"
			       "<data shape=\"%s\" element_type=\"%s\"/>"
			       "<output><port id=\"0\" names=\"in%d\">",
			       i, i, t->dims, t->et, i);
		}
		xb_dims(&x, t->dims);
		xb_add(&x, "</port></output></layer>\n");
	}
	xb_add(&x, "<layer id=\"%d\" name=\"the_op\" type=\"%s\" version=\"%s\">",
	       nin, op->type, op->ver);
	if (op->attrs)
		xb_add(&x, "<data %s/>", op->attrs);
	xb_add(&x, "<input>");
	for (i = 0; i < nin; i++) {
		xb_add(&x, "<port id=\"%d\">", i);
		xb_dims(&x, op->in[i].dims);
		xb_add(&x, "</port>");
	}
	xb_add(&x, "</input><output>");
	for (i = 0; i < nout; i++) {
		xb_add(&x, "<port id=\"%d\" precision=\"%s\" names=\"out%d\">",
		       nin + i, prec(op->oet[i] ? op->oet[i] : op->in[0].et),
		       i);
		xb_dims(&x, op->out[i]);
		xb_add(&x, "</port>");
	}
	xb_add(&x, "</output></layer>\n");
	for (i = 0; i < nout; i++) {
		xb_add(&x, "<layer id=\"%d\" name=\"r%d\" type=\"Result\" version=\"opset1\"><input><port id=\"0\">",
		       nin + 1 + i, i);
		xb_dims(&x, op->out[i]);
		xb_add(&x, "</port></input></layer>\n");
	}
	xb_add(&x, "</layers>\n<edges>\n");
	for (i = 0; i < nin; i++)
		xb_add(&x, "<edge from-layer=\"%d\" from-port=\"0\" to-layer=\"%d\" to-port=\"%d\"/>\n",
		       i, nin, i);
	for (i = 0; i < nout; i++)
		xb_add(&x, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"0\"/>\n",
		       nin, nin + i, nin + 1 + i);
	xb_add(&x, "</edges>\n</net>\n");

	npr_prep_model_load_mem(&ml, x.buf, x.len, bin, bin_len);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	free(x.buf);
	if (err) {
		set_err(r, err);
		goto out;
	}
	npr_prep_compile(&cc, ml.handle);
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &cc);
	if (err) {
		set_err(r, err);
		goto out;
	}
	*exec = cc.exec;
out:
	free(bin);
	return err;
}

/* Build the model of @op, run it on @fd, fill @r. */
static void run(int fd, const struct top *op, struct tres *r)
{
	struct npr_req_create rc;
	int nin, nout, i, err;
	__u32 exec;

	memset(r, 0, sizeof(*r));
	nin = count_ports(op, &nout);
	r->nout = nout;
	if (compile_op(fd, op, &exec, r))
		return;
	npr_prep_req_create(&rc, exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err) {
		set_err(r, err);
		return;
	}
	err = infer_once(fd, op, nin, nout, rc.req, false, r);
	for (i = 0; !err && i < nin; i++)
		if (op->again[i]) {
			__u32 first = rc.req;

			if (op->other_request) {
				err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
				if (err) {
					set_err(r, err);
					break;
				}
			}
			err = infer_once(fd, op, nin, nout, rc.req, true, r);
			if (!err && op->other_request)
				err = read_outputs(fd, nout, first, r);
			break;
		}
}

/* ---- checking --------------------------------------------------------- */

FIXTURE(ops) {
	int fd;
	struct tres r;
};

FIXTURE_SETUP(ops)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(ops)
{
	if (self->fd >= 0)
		npr_close(self->fd);
}

/* Output @o must have @n values @want (within @tol) and type @type. */
static void check_out(struct npr_test *_metadata, const struct tres *r, int o,
		      unsigned int type, const double *want, size_t n,
		      double tol)
{
	size_t i;

	if (r->err)
		TH_LOG("failed with %d: %s", r->err, r->msg);
	ASSERT_EQ(r->err, 0);
	ASSERT_EQ(r->type[o], type);
	ASSERT_EQ(r->n[o], n);
	for (i = 0; i < n; i++) {
		bool ok = isnan(want[i]) ? isnan(r->v[o][i]) :
			  fabs(r->v[o][i] - want[i]) <= tol;

		if (!ok)
			TH_LOG("output %d element %zu: got %.9g, want %.9g",
			       o, i, r->v[o][i], want[i]);
		EXPECT_TRUE(ok);
	}
}

/* The run must fail with @err and a message naming the op and @phrase. */
static void check_fail(struct npr_test *_metadata, const struct tres *r,
		       const char *type, int err, const char *phrase)
{
	TH_LOG("errno %d: %s", r->err, r->msg);
	ASSERT_EQ(r->err, err);
	EXPECT_NE(strstr(r->msg, "the_op"), NULL);
	EXPECT_NE(strstr(r->msg, type), NULL);
	EXPECT_NE(strstr(r->msg, phrase), NULL);
}

#define V(...)		((const double[]){ __VA_ARGS__ })
#define N(...)		(sizeof((const double[]){ __VA_ARGS__ }) /	\
			 sizeof(double))
#define F32		NPR_ELEM_F32
#define I32		NPR_ELEM_I32
#define I64		NPR_ELEM_I64
#define BOOL		NPR_ELEM_BOOLEAN
#define RUN(...)	do {						\
		const struct top op_ = __VA_ARGS__;			\
		run(self->fd, &op_, &self->r);				\
	} while (0)
#define EXPECT_OUT(o, type, tol, ...)					\
	check_out(_metadata, &self->r, o, type, V(__VA_ARGS__),	\
		  N(__VA_ARGS__), tol)
#define EXPECT_FAIL(type, err, phrase)					\
	check_fail(_metadata, &self->r, type, err, phrase)
#define EXPECT_DIMS(o, ...) do {					\
		const int64_t d_[] = { __VA_ARGS__ };			\
		size_t i_;						\
		ASSERT_EQ(self->r.rank[o],				\
			  (int)(sizeof(d_) / sizeof(d_[0])));		\
		for (i_ = 0; i_ < sizeof(d_) / sizeof(d_[0]); i_++)	\
			EXPECT_EQ(self->r.dims[o][i_], d_[i_]);		\
	} while (0)
/* A Parameter and a Const input of the op. */
#define P(et, dims, ...)	{ et, dims, V(__VA_ARGS__), false }
#define C(et, dims, ...)	{ et, dims, V(__VA_ARGS__), true }
#define P0(et, dims)		{ et, dims, NULL, false }

/* ---- GatherElements-6 ------------------------------------------------- */

TEST_F(ops, gather_elements_spec_examples)
{
	/* out[i][j] = data[i][idx[i][j]] */
	RUN({ "GatherElements", "opset6", "axis=\"1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 0, 1, 0) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 4, 3);
	/* axis 0, indices smaller than data along the axis */
	RUN({ "GatherElements", "opset6", "axis=\"0\"",
	      { P("f32", "3,3", 1, 2, 3, 4, 5, 6, 7, 8, 9),
		C("i64", "2,3", 1, 2, 0, 2, 0, 0) },
	      { "2,3" } });
	EXPECT_OUT(0, F32, 0, 4, 8, 3, 7, 2, 3);
}

TEST_F(ops, gather_elements_negative_axis_and_indices)
{
	/* axis -1 = 1; index -1 is 1, -2 is 0 */
	RUN({ "GatherElements", "opset6", "axis=\"-1\"",
	      { P("i32", "2,2", 1, 2, 3, 4), C("i32", "2,2", -1, 0, -2, -1) },
	      { "2,2" } });
	EXPECT_OUT(0, I32, 0, 2, 1, 3, 4);
}

TEST_F(ops, gather_elements_bad_shapes_and_indices_fail)
{
	/* dim 1 differs and is not the axis */
	RUN({ "GatherElements", "opset6", "axis=\"0\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,1", 0, 1) },
	      { "2,1" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "only axis 0 may differ");
	RUN({ "GatherElements", "opset6", "axis=\"2\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 1, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "out of range");
	RUN({ "GatherElements", "opset6", "axis=\"1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), P("i32", "2,2", 0, 2, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "index 2");
	RUN({ "GatherElements", "opset6", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 1, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("GatherElements", -EINVAL, "axis");
}

/* ---- GatherND-5/-8 ---------------------------------------------------- */

TEST_F(ops, gather_nd_spec_examples)
{
	/* elements: (0,0) -> 1, (1,0) -> 3 */
	RUN({ "GatherND", "opset5", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,2", 0, 0, 1, 0) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 3);
	/* slices: rows 1 and 0 */
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "2,1", 1, 0) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 1, 2);
}

TEST_F(ops, gather_nd_batch_dims_5_flattens_8_keeps)
{
	/*
	 * data[b0][b1][k] = 1 + 4 b0 + 2 b1 + k; per batch (b0, b1) the
	 * index picks k: (0,0)->1: 2, (0,1)->0: 3, (1,0)->0: 5, (1,1)->1: 8.
	 */
	RUN({ "GatherND", "opset8", "batch_dims=\"2\"",
	      { P("f32", "2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("i32", "2,2,1", 1, 0, 0, 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 5, 8);
	RUN({ "GatherND", "opset5", "batch_dims=\"2\"",
	      { P("f32", "2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("i32", "2,2,1", 1, 0, 0, 1) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 5, 8);
}

TEST_F(ops, gather_nd_negative_index_and_errors)
{
	/* -1 is row 1 */
	RUN({ "GatherND", "opset8", NULL,
	      { P("i64", "2,2", 1, 2, 3, 4), C("i64", "1,1", -1) },
	      { "1,2" } });
	EXPECT_OUT(0, I64, 0, 3, 4);
	/* indices.shape[-1] = 3 > rank 2 */
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "1,3", 0, 0, 0) },
	      { "1" } });
	EXPECT_FAIL("GatherND", -EINVAL, "indices.shape[-1]");
	RUN({ "GatherND", "opset8", "batch_dims=\"-1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i32", "2,1", 0, 0) },
	      { "2" } });
	EXPECT_FAIL("GatherND", -EINVAL, "batch_dims");
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("f32", "2,1", 0, 0) },
	      { "2,2" } });
	EXPECT_FAIL("GatherND", -EINVAL, "not i32 or i64");
}

/* ---- ScatterUpdate-3 -------------------------------------------------- */

TEST_F(ops, scatter_update_axis0_and_axis1)
{
	/* rows 2 and 0 replaced by the two update rows */
	RUN({ "ScatterUpdate", "opset3", NULL,
	      { P0("f32", "3,2"), C("i32", "2", 2, 0),
		P("f32", "2,2", 1, 2, 3, 4), C("i64", "", 0) },
	      { "3,2" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 0, 0, 1, 2);
	/* axis -1: updates [2, 1, 1] into column 2 (index -1) */
	RUN({ "ScatterUpdate", "opset3", NULL,
	      { P("i32", "2,3", 1, 1, 1, 1, 1, 1), C("i32", "1,1", -1),
		P("i32", "2,1,1", 5, 6), C("i32", "", -1) },
	      { "2,3" } });
	EXPECT_OUT(0, I32, 0, 1, 1, 5, 1, 1, 6);
}

TEST_F(ops, scatter_update_bad_updates_shape_fails)
{
	RUN({ "ScatterUpdate", "opset3", NULL,
	      { P0("f32", "3,2"), C("i32", "2", 2, 0),
		P0("f32", "2,3"), C("i64", "", 0) },
	      { "3,2" } });
	EXPECT_FAIL("ScatterUpdate", -EINVAL, "updates shape [2,3]");
}

/* ---- ScatterElementsUpdate-3/-12 -------------------------------------- */

TEST_F(ops, scatter_elements_update_spec_example)
{
	/*
	 * out[idx[i][j]][j] = upd[i][j]: (1,0)=1.0 (0,1)=1.1 (2,2)=1.2
	 * (0,0)=2.0 (2,1)=2.1 (1,2)=2.2.
	 */
	RUN({ "ScatterElementsUpdate", "opset3", NULL,
	      { P0("f32", "3,3"), C("i32", "2,3", 1, 0, 2, 0, 2, 1),
		P("f32", "2,3", 1.0, 1.1, 1.2, 2.0, 2.1, 2.2),
		C("i32", "", 0) },
	      { "3,3" } });
	EXPECT_OUT(0, F32, 1e-6, 2.0, 1.1, 0, 1.0, 0, 2.2, 0, 2.1, 1.2);
}

TEST_F(ops, scatter_elements_update_12_reductions)
{
	/* duplicates at 1 and 3 (-1): sum adds both to the data */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"sum\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "4", 1, 1, 3, -1),
		P("f32", "4", 10, 20, 30, 40), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 32, 3, 74);
	/* mean with the data: (2+10+20)/3, (4+30+40)/3 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"mean\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "4", 1, 1, 3, -1),
		P("f32", "4", 10, 20, 30, 40), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 1e-5, 1, 32.0 / 3, 3, 74.0 / 3);
	/* mean without: (10+20)/2, (30+40)/2; untouched elements stay */
	RUN({ "ScatterElementsUpdate", "opset12",
	      "reduction=\"mean\" use_init_val=\"false\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "4", 1, 1, 3, -1),
		P("f32", "4", 10, 20, 30, 40), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 15, 3, 35);
	/* max: with the data 100 wins, without it 7 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"max\"",
	      { P("f32", "4", 1, 100, 3, 4), C("i32", "2", 1, 1),
		P("f32", "2", 5, 7), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 100, 3, 4);
	RUN({ "ScatterElementsUpdate", "opset12",
	      "reduction=\"max\" use_init_val=\"false\"",
	      { P("f32", "4", 1, 100, 3, 4), C("i32", "2", 1, 1),
		P("f32", "2", 5, 7), C("i32", "", 0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 1, 7, 3, 4);
	/* prod on i32: 2 * 4 * 5 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"prod\"",
	      { P("i32", "2", 2, 3), C("i32", "2", 0, 0),
		P("i32", "2", 4, 5), C("i32", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, I32, 0, 40, 3);
	/* integer mean rounds toward -inf (our choice): (1+2+2)/3 -> 1 */
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"mean\"",
	      { P("i32", "2", 1, 2), C("i32", "2", 0, 0),
		P("i32", "2", 2, 2), C("i32", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, I32, 0, 1, 2);
}

TEST_F(ops, scatter_elements_update_bad_reduction_fails)
{
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"sub\"",
	      { P("f32", "2", 1, 2), C("i32", "1", 0), P("f32", "1", 1),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_FAIL("ScatterElementsUpdate", -EINVAL, "sub");
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"avg\"",
	      { P("f32", "2", 1, 2), C("i32", "1", 0), P("f32", "1", 1),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_FAIL("ScatterElementsUpdate", -EINVAL, "reduction");
	/* updates shape differs from indices */
	RUN({ "ScatterElementsUpdate", "opset3", NULL,
	      { P("f32", "2", 1, 2), C("i32", "1", 0), P("f32", "2", 1, 2),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_FAIL("ScatterElementsUpdate", -EINVAL, "updates shape");
}

/* ---- ScatterNDUpdate-3/-15 -------------------------------------------- */

TEST_F(ops, scatter_nd_update_spec_examples)
{
	RUN({ "ScatterNDUpdate", "opset3", NULL,
	      { P("f32", "8", 1, 2, 3, 4, 5, 6, 7, 8),
		C("i32", "4,1", 4, 3, 1, 7), P("f32", "4", 9, 10, 11, 12) },
	      { "8" } });
	EXPECT_OUT(0, F32, 0, 1, 11, 3, 10, 9, 6, 7, 12);
	/* a slice: row 1 (as -1) */
	RUN({ "ScatterNDUpdate", "opset3", NULL,
	      { P0("i64", "2,2"), C("i64", "1,1", -1), P("i64", "1,2", 5, 6) },
	      { "2,2" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 5, 6);
}

TEST_F(ops, scatter_nd_update_15_reductions)
{
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"sum\"",
	      { P("f32", "3", 1, 2, 3), C("i32", "3,1", 0, 0, 2),
		P("f32", "3", 1, 1, 1) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 3, 2, 4);
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"sub\"",
	      { P("f32", "3", 1, 2, 3), C("i32", "3,1", 0, 0, 2),
		P("f32", "3", 1, 1, 1) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, -1, 2, 2);
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"min\"",
	      { P("i32", "3", 1, 2, 3), C("i32", "2,1", 1, 1),
		P("i32", "2", 7, -4) },
	      { "3" } });
	EXPECT_OUT(0, I32, 0, 1, -4, 3);
	RUN({ "ScatterNDUpdate", "opset15", "reduction=\"mean\"",
	      { P("f32", "3", 1, 2, 3), C("i32", "1,1", 0), P("f32", "1", 1) },
	      { "3" } });
	EXPECT_FAIL("ScatterNDUpdate", -EINVAL, "mean");
}

/* ---- OneHot-1 --------------------------------------------------------- */

TEST_F(ops, one_hot_axis_last_and_first)
{
	/* index -1 is out of [0, depth): a row of off_value */
	RUN({ "OneHot", "opset1", "axis=\"-1\"",
	      { P("i32", "4", 0, 2, -1, 1), C("i64", "", 3),
		C("f32", "", 5), C("f32", "", 0) },
	      { "4,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0);
	RUN({ "OneHot", "opset1", "axis=\"0\"",
	      { P("i64", "4", 0, 2, -1, 1), C("i32", "", 3),
		C("i32", "", 1), C("i32", "", -1) },
	      { "3,4" }, { "i32" } });
	EXPECT_OUT(0, I32, 0, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1);
}

/* OneHot-16: negative indices off, or counted from the end */
TEST_F(ops, one_hot_16_negative_indices_mode)
{
	RUN({ "OneHot", "opset16", "axis=\"-1\"",
	      { P("i64", "3", -1, 1, -4), C("i64", "", 3), C("f32", "", 1),
		C("f32", "", 0) },
	      { "3,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0);
	/* -1 is 2, -4 is out of [-3, -1]: off */
	RUN({ "OneHot", "opset16",
	      "axis=\"-1\" negative_indices_mode=\"normalize\"",
	      { P("i64", "3", -1, 1, -4), C("i64", "", 3), C("f32", "", 1),
		C("f32", "", 0) },
	      { "3,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0);
	RUN({ "OneHot", "opset16",
	      "axis=\"-1\" negative_indices_mode=\"wrap\"",
	      { P("i64", "1", 0), C("i64", "", 3), C("f32", "", 1),
		C("f32", "", 0) },
	      { "1,3" }, { "f32" } });
	EXPECT_FAIL("OneHot", -EINVAL, "negative_indices_mode");
}

TEST_F(ops, one_hot_errors)
{
	RUN({ "OneHot", "opset1", "axis=\"0\"",
	      { P("i32", "2", 0, 1), C("i64", "", -2),
		C("f32", "", 1), C("f32", "", 0) },
	      { "0,2" } });
	EXPECT_FAIL("OneHot", -EINVAL, "depth -2");
	RUN({ "OneHot", "opset1", "axis=\"2\"",
	      { P("i32", "2", 0, 1), C("i64", "", 2),
		C("f32", "", 1), C("f32", "", 0) },
	      { "2,2" } });
	EXPECT_FAIL("OneHot", -EINVAL, "axis 2");
	RUN({ "OneHot", "opset1", "axis=\"0\"",
	      { P("i32", "2", 0, 1), C("i64", "", 2),
		C("f32", "", 1), C("i32", "", 0) },
	      { "2,2" } });
	EXPECT_FAIL("OneHot", -EINVAL, "off_value");
}

/* ---- NonZero-3 -------------------------------------------------------- */

TEST_F(ops, non_zero_of_a_constant)
{
	/* nonzero at (0,1) and (1,0): rows are coordinates */
	RUN({ "NonZero", "opset3", NULL,
	      { C("f32", "2,2", 0, 1, 2, 0) }, { "2,2" }, { "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 1, 1, 0);
	RUN({ "NonZero", "opset3", "output_type=\"i32\"",
	      { C("i32", "3", 0, 0, 7) }, { "1,1" }, { "i32" } });
	EXPECT_OUT(0, I32, 0, 2);
	/* all zero: [1, 0] */
	RUN({ "NonZero", "opset3", NULL, { C("u8", "3", 0, 0, 0) },
	      { "1,0" }, { "i64" } });
	EXPECT_OUT(0, I64, 0);
}

TEST_F(ops, non_zero_of_a_parameter)
{
	/* the output shape follows the values, run by run */
	RUN({ "NonZero", "opset3", NULL, { P("f32", "2,2", 0, 1, 2, 0) },
	      { "2,2" }, { "i64" },
	      .again = { V(0, 0, 0, 3) } });
	EXPECT_DIMS(0, 2, 1);
	EXPECT_OUT(0, I64, 0, 1, 1);
	RUN({ "NonZero", "opset3", NULL, { P("f32", "2,2", 0, 1, 2, 0) },
	      { "2,2" }, { "i64" } });
	EXPECT_DIMS(0, 2, 2);
	EXPECT_OUT(0, I64, 0, 0, 1, 1, 0);
	RUN({ "NonZero", "opset3", "output_type=\"f32\"",
	      { C("f32", "2", 1, 0) }, { "1,1" } });
	EXPECT_FAIL("NonZero", -EINVAL, "output_type");
}

/* ---- Unique-10 -------------------------------------------------------- */

/*
 * The spec's examples: [2, 1, 1, 3, 4, 3] flattened.  Sorted: values
 * 1 2 3 4, first at 1 0 3 4, each element's value at 1 0 0 2 3 2, counts
 * 2 1 2 1; unsorted: the order of first occurrence.
 */
TEST_F(ops, unique_flattened_sorted_and_not)
{
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,3", 2, 1, 1, 3, 4, 3) },
	      { "4", "4", "6", "4" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 4);
	EXPECT_OUT(1, I64, 0, 1, 0, 3, 4);
	EXPECT_OUT(2, I64, 0, 1, 0, 0, 2, 3, 2);
	EXPECT_OUT(3, I64, 0, 2, 1, 2, 1);
	RUN({ "Unique", "opset10",
	      "sorted=\"false\" index_element_type=\"i32\" count_element_type=\"i32\"",
	      { C("i32", "6", 2, 1, 1, 3, 4, 3) },
	      { "4", "4", "6", "4" }, { "i32", "i32", "i32", "i32" } });
	EXPECT_OUT(0, I32, 0, 2, 1, 3, 4);
	EXPECT_OUT(1, I32, 0, 0, 1, 3, 4);
	EXPECT_OUT(2, I32, 0, 0, 1, 1, 2, 3, 2);
	EXPECT_OUT(3, I32, 0, 1, 2, 2, 1);
}

TEST_F(ops, unique_slices_along_an_axis)
{
	/* rows: [1 0 0] twice, then [2 3 4] */
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "3,3", 1, 0, 0, 1, 0, 0, 2, 3, 4),
		C("i64", "", 0) },
	      { "2,3", "2", "3", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 1, 0, 0, 2, 3, 4);
	EXPECT_OUT(1, I64, 0, 0, 2);
	EXPECT_OUT(2, I64, 0, 0, 0, 1);
	EXPECT_OUT(3, I64, 0, 2, 1);
	/* columns (1 2), (0 3), (1 2): (0 3) sorts first */
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,3", 1, 0, 1, 2, 3, 2), C("i32", "1", -1) },
	      { "2,2", "2", "3", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 3, 2);
	EXPECT_OUT(1, I64, 0, 1, 0);
	EXPECT_OUT(2, I64, 0, 1, 0, 1);
	EXPECT_OUT(3, I64, 0, 1, 2);
}

TEST_F(ops, unique_of_a_parameter_nan_and_empty)
{
	/* the number of unique values follows the data, run by run */
	RUN({ "Unique", "opset10", NULL, { P("f32", "4", 5, 5, 5, 5) },
	      { "1", "1", "4", "1" }, { "f32", "i64", "i64", "i64" },
	      .again = { V(3, 1, 3, 2) } });
	EXPECT_DIMS(0, 3);
	EXPECT_DIMS(2, 4);
	EXPECT_OUT(0, F32, 0, 1, 2, 3);
	EXPECT_OUT(2, I64, 0, 2, 0, 2, 1);
	EXPECT_OUT(3, I64, 0, 1, 1, 2);
	/* NaN equals NaN and sorts last */
	RUN({ "Unique", "opset10", NULL,
	      { P("f32", "4", NAN, 1, NAN, 1) },
	      { "2", "2", "4", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_OUT(0, F32, 0, 1, NAN);
	EXPECT_OUT(1, I64, 0, 1, 0);
	EXPECT_OUT(2, I64, 0, 1, 0, 1, 0);
	EXPECT_OUT(3, I64, 0, 2, 2);
	/* no elements: nothing unique */
	RUN({ "Unique", "opset10", NULL, { C("f32", "0", 0) },
	      { "0", "0", "0", "0" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_DIMS(0, 0);
	EXPECT_DIMS(2, 0);
}

TEST_F(ops, unique_errors)
{
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,2", 1, 2, 3, 4), C("i64", "", 2) },
	      { "2,2", "2", "2", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_FAIL("Unique", -EINVAL, "axis 2 is out of range");
	RUN({ "Unique", "opset10", NULL,
	      { C("f32", "2,2", 1, 2, 3, 4), C("f32", "", 0) },
	      { "2,2", "2", "2", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_FAIL("Unique", -EINVAL, "axis must be");
	RUN({ "Unique", "opset10", "index_element_type=\"f32\"",
	      { C("f32", "2", 1, 2) },
	      { "2", "2", "2", "2" }, { "f32", "i64", "i64", "i64" } });
	EXPECT_FAIL("Unique", -EINVAL, "index_element_type");
	RUN({ "Unique", "opset10", NULL, { C("f32", "2", 1, 2) },
	      { "2" }, { "f32" } });
	EXPECT_FAIL("Unique", -EINVAL, "4");
}

/* ---- Round-5, Sign-1 -------------------------------------------------- */

TEST_F(ops, round_half_to_even_and_away_from_zero)
{
	RUN({ "Round", "opset5", "mode=\"half_to_even\"",
	      { P("f32", "8", -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6) },
	      { "8" } });
	EXPECT_OUT(0, F32, 0, -2, -2, 0, 0, 2, 2, 2, -3);
	RUN({ "Round", "opset5", "mode=\"half_away_from_zero\"",
	      { P("f32", "8", -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6) },
	      { "8" } });
	EXPECT_OUT(0, F32, 0, -3, -2, -1, 1, 2, 3, 2, -3);
	/* integers are already round */
	RUN({ "Round", "opset5", "mode=\"half_to_even\"",
	      { P("i32", "3", -3, 0, 7) }, { "3" } });
	EXPECT_OUT(0, I32, 0, -3, 0, 7);
	/* an empty tensor */
	RUN({ "Round", "opset5", "mode=\"half_to_even\"",
	      { P0("f32", "2,0") }, { "2,0" } });
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, round_needs_a_valid_mode)
{
	RUN({ "Round", "opset5", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_FAIL("Round", -EINVAL, "mode");
	RUN({ "Round", "opset5", "mode=\"nearest\"", { P("f32", "1", 1) },
	      { "1" } });
	EXPECT_FAIL("Round", -EINVAL, "mode");
}

TEST_F(ops, sign_of_floats_and_integers)
{
	RUN({ "Sign", "opset1", NULL, { P("f32", "4", -3, 0, 2.5, -0.0) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, -1, 0, 1, 0);
	RUN({ "Sign", "opset1", NULL, { P("i64", "3", -7, 0, 9) }, { "3" } });
	EXPECT_OUT(0, I64, 0, -1, 0, 1);
}

/* ---- ReduceLogicalAnd/Or-1 -------------------------------------------- */

TEST_F(ops, reduce_logical_and_or)
{
	RUN({ "ReduceLogicalAnd", "opset1", NULL,
	      { P("boolean", "2,3", 1, 0, 1, 1, 1, 1), C("i64", "1", 1) },
	      { "2" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
	RUN({ "ReduceLogicalAnd", "opset1", "keep_dims=\"true\"",
	      { P("boolean", "2,3", 1, 0, 1, 1, 1, 1), C("i32", "1", -1) },
	      { "2,1" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("boolean", "2,3", 0, 0, 1, 0, 1, 0), C("i64", "1", 0) },
	      { "3" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1, 1);
	/* all axes */
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("boolean", "2,2", 0, 0, 0, 0), C("i64", "2", 0, 1) },
	      { "" } });
	EXPECT_OUT(0, BOOL, 0, 0);
}

TEST_F(ops, reduce_logical_over_an_empty_axis_gives_the_identity)
{
	RUN({ "ReduceLogicalAnd", "opset1", NULL,
	      { P0("boolean", "2,0"), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, BOOL, 0, 1, 1);
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P0("boolean", "2,0"), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0);
}

TEST_F(ops, reduce_logical_errors)
{
	RUN({ "ReduceLogicalAnd", "opset1", NULL,
	      { P("boolean", "2,2", 1, 1, 1, 1), C("i64", "2", 0, -2) },
	      { "" } });
	EXPECT_FAIL("ReduceLogicalAnd", -EINVAL, "repeated");
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("f32", "2", 1, 1), C("i64", "1", 0) }, { "" } });
	EXPECT_FAIL("ReduceLogicalOr", -EINVAL, "not boolean");
	RUN({ "ReduceLogicalOr", "opset1", NULL,
	      { P("boolean", "2", 1, 1), C("i64", "1", 1) }, { "" } });
	EXPECT_FAIL("ReduceLogicalOr", -EINVAL, "out of range");
}

/* ---- CumSum-3 --------------------------------------------------------- */

TEST_F(ops, cumsum_modes)
{
	RUN({ "CumSum", "opset3", NULL,
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 1, 3, 6, 10, 15);
	RUN({ "CumSum", "opset3", "exclusive=\"true\"",
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 3, 6, 10);
	RUN({ "CumSum", "opset3", "reverse=\"true\"",
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 15, 14, 12, 9, 5);
	RUN({ "CumSum", "opset3", "exclusive=\"true\" reverse=\"true\"",
	      { P("f32", "5", 1, 2, 3, 4, 5), C("i64", "", 0) }, { "5" } });
	EXPECT_OUT(0, F32, 0, 14, 12, 9, 5, 0);
}

TEST_F(ops, cumsum_axis_negative_default_and_integers)
{
	RUN({ "CumSum", "opset3", NULL,
	      { P("i32", "2,2", 1, 2, 3, 4), C("i32", "", -2) }, { "2,2" } });
	EXPECT_OUT(0, I32, 0, 1, 2, 4, 6);
	/* no axis input: axis 0 */
	RUN({ "CumSum", "opset3", NULL, { P("i64", "2,2", 1, 2, 3, 4) },
	      { "2,2" } });
	EXPECT_OUT(0, I64, 0, 1, 2, 4, 6);
	RUN({ "CumSum", "opset3", NULL,
	      { P("f32", "2", 1, 2), C("i64", "", 1) }, { "2" } });
	EXPECT_FAIL("CumSum", -EINVAL, "axis 1");
}

/* ---- DepthToSpace-1, SpaceToDepth-1, ShuffleChannels-1, ReorgYolo-2 --- */

TEST_F(ops, depth_to_space_both_modes)
{
	/*
	 * [1, 8, 1, 1], bs 2, C' = 2.  blocks_first: out[c'][i][j] =
	 * in[(2 i + j) * 2 + c']; depth_first: in[4 c' + 2 i + j].
	 */
	RUN({ "DepthToSpace", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P("f32", "1,8,1,1", 0, 1, 2, 3, 4, 5, 6, 7) }, { "1,2,2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 4, 6, 1, 3, 5, 7);
	RUN({ "DepthToSpace", "opset1", "mode=\"depth_first\" block_size=\"2\"",
	      { P("f32", "1,8,1,1", 0, 1, 2, 3, 4, 5, 6, 7) }, { "1,2,2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5, 6, 7);
}

TEST_F(ops, space_to_depth_inverts_depth_to_space)
{
	RUN({ "SpaceToDepth", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P("f32", "1,2,2,2", 0, 2, 4, 6, 1, 3, 5, 7) }, { "1,8,1,1" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5, 6, 7);
	RUN({ "SpaceToDepth", "opset1", "mode=\"depth_first\" block_size=\"2\"",
	      { P("i32", "1,2,2,2", 0, 1, 2, 3, 4, 5, 6, 7) }, { "1,8,1,1" } });
	EXPECT_OUT(0, I32, 0, 0, 1, 2, 3, 4, 5, 6, 7);
	/* 1-D spatial: [1, 1, 4] -> [1, 2, 2], channel j holds x[2 w + j] */
	RUN({ "SpaceToDepth", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P("f32", "1,1,4", 10, 11, 12, 13) }, { "1,2,2" } });
	EXPECT_OUT(0, F32, 0, 10, 12, 11, 13);
}

TEST_F(ops, depth_space_errors)
{
	RUN({ "DepthToSpace", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P0("f32", "1,6,1,1") }, { "1,1,2,2" } });
	EXPECT_FAIL("DepthToSpace", -EINVAL, "not divisible");
	RUN({ "DepthToSpace", "opset1", "mode=\"sideways\" block_size=\"2\"",
	      { P0("f32", "1,8,1,1") }, { "1,2,2,2" } });
	EXPECT_FAIL("DepthToSpace", -EINVAL, "mode");
	RUN({ "SpaceToDepth", "opset1", "mode=\"depth_first\" block_size=\"0\"",
	      { P0("f32", "1,1,2,2") }, { "1,1,2,2" } });
	EXPECT_FAIL("SpaceToDepth", -EINVAL, "block size 0");
	RUN({ "SpaceToDepth", "opset1", "mode=\"depth_first\" block_size=\"2\"",
	      { P0("f32", "1,1,3,2") }, { "1,4,1,1" } });
	EXPECT_FAIL("SpaceToDepth", -EINVAL, "not divisible");
}

TEST_F(ops, shuffle_channels)
{
	/* [1, 6, 1, 1], group 3: out[c' * 3 + g] = in[g * 2 + c'] */
	RUN({ "ShuffleChannels", "opset1", "axis=\"-3\" group=\"3\"",
	      { P("f32", "1,6,1,1", 0, 1, 2, 3, 4, 5) }, { "1,6,1,1" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 4, 1, 3, 5);
	RUN({ "ShuffleChannels", "opset1", "axis=\"1\" group=\"4\"",
	      { P0("f32", "1,6,1,1") }, { "1,6,1,1" } });
	EXPECT_FAIL("ShuffleChannels", -EINVAL, "group 4");
	RUN({ "ShuffleChannels", "opset1", "axis=\"4\" group=\"1\"",
	      { P0("f32", "1,6,1,1") }, { "1,6,1,1" } });
	EXPECT_FAIL("ShuffleChannels", -EINVAL, "axis 4");
}

TEST_F(ops, reorg_yolo_stride_2)
{
	/*
	 * [1, 4, 2, 2] -> [1, 16, 1, 1].  With C / s^2 = 1, output element
	 * (k, j, i) of [4, 2, 2] is the input read as [1, 4, 4] at
	 * (2 j + k / 2, 2 i + k % 2), i.e. element 4 (2 j + k / 2) +
	 * 2 i + k % 2.
	 */
	RUN({ "ReorgYolo", "opset2", "stride=\"2\"",
	      { P("f32", "1,4,2,2", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		  13, 14, 15) },
	      { "1,16,1,1" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7,
		   13, 15);
	RUN({ "ReorgYolo", "opset2", "stride=\"2\"", { P0("f32", "1,2,2,2") },
	      { "1,8,1,1" } });
	EXPECT_FAIL("ReorgYolo", -EINVAL, "stride^2");
	RUN({ "ReorgYolo", "opset2", NULL, { P0("f32", "1,4,2,2") },
	      { "1,16,1,1" } });
	EXPECT_FAIL("ReorgYolo", -EINVAL, "stride");
}

/* ---- ConvertLike-1 ---------------------------------------------------- */

TEST_F(ops, convert_like_takes_the_type_of_input_1)
{
	/* float to integer truncates toward zero */
	RUN({ "ConvertLike", "opset1", NULL,
	      { P("f32", "3", 1.7, -1.7, 300), C("i32", "1", 0) }, { "3" },
	      { "i32" } });
	EXPECT_OUT(0, I32, 0, 1, -1, 300);
	RUN({ "ConvertLike", "opset1", NULL,
	      { P("i64", "2", 0, 5), C("boolean", "", 1) }, { "2" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
}

/* ---- Interpolate-1/-4/-11 --------------------------------------------- */

/* Interpolate-4 on a [1, len] f32 input along axis 1, sizes mode. */
#define INTERP4_1D(attrs, len, out, ...)				\
	RUN({ "Interpolate", "opset4",					\
	      "shape_calculation_mode=\"sizes\" " attrs,		\
	      { P("f32", "1," #len, __VA_ARGS__), C("i64", "1", out),	\
		C("f32", "1", 1), C("i64", "1", 1) },			\
	      { "1," #out } })

TEST_F(ops, interpolate_nearest_rounding_modes)
{
	/* 2 -> 4, asymmetric: source x / 2 = 0, .5, 1, 1.5 */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\"",
		   2, 4, 10, 20);
	EXPECT_OUT(0, F32, 0, 10, 10, 20, 20);
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"round_prefer_ceil\"",
		   2, 4, 10, 20);
	EXPECT_OUT(0, F32, 0, 10, 20, 20, 20);
	/* 4 -> 3, asymmetric: source x / .75 = 0, 1.33, 2.67 */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 20, 30);
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"ceil\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 30, 40);
	/* simple: ceil when downscaling */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"simple\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 30, 40);
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"asymmetric\"",
		   4, 3, 10, 20, 30, 40);
	EXPECT_OUT(0, F32, 0, 10, 20, 40);
	/* tf_half_pixel_for_nn: (x + .5) / 2 = .25, .75, 1.25, 1.75 */
	INTERP4_1D("mode=\"nearest\" coordinate_transformation_mode=\"tf_half_pixel_for_nn\"",
		   2, 4, 10, 20);
	EXPECT_OUT(0, F32, 0, 10, 20, 20, 20);
}

TEST_F(ops, interpolate_linear_onnx_coordinate_modes)
{
	/* half_pixel: source -.25 .25 .75 1.25, clamped to [0, 1] */
	INTERP4_1D("mode=\"linear_onnx\"", 2, 4, 1, 3);
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2.5, 3);
	/* align_corners: x * (2 - 1) / (3 - 1) */
	INTERP4_1D("mode=\"linear_onnx\" coordinate_transformation_mode=\"align_corners\"",
		   2, 3, 0, 10);
	EXPECT_OUT(0, F32, 1e-6, 0, 5, 10);
	/* pytorch_half_pixel with one output: source 0 */
	INTERP4_1D("mode=\"linear_onnx\" coordinate_transformation_mode=\"pytorch_half_pixel\"",
		   2, 1, 4, 8);
	EXPECT_OUT(0, F32, 1e-6, 4);
	/* half_pixel with one output: source (.5 / .5) - .5 = .5 */
	INTERP4_1D("mode=\"linear_onnx\"", 2, 1, 4, 8);
	EXPECT_OUT(0, F32, 1e-6, 6);
}

TEST_F(ops, interpolate_cubic_half_pixel)
{
	/*
	 * 4 -> 8, A = -0.75.  For t = .25 / .75 the weights of the taps at
	 * distance .25, .75, 1.25, 1.75 are .87890625, .26171875,
	 * -.10546875, -.03515625 (Keys' kernel; with A != -.5 it does not
	 * reproduce linear data).  out[0] (source -.25, taps clamped to
	 * 0 0 0 1) = -.10546875 * 1; out[1] (source .25: 0 0 1 2) =
	 * .26171875 - 2 * .03515625; out[2] (source .75: 0 0 1 2) =
	 * .87890625 - 2 * .10546875; out[3] (source 1.25: 0 1 2 3) =
	 * .87890625 + 2 * .26171875 - 3 * .03515625.  The right half
	 * mirrors the left: out[7 - i] = 3 - out[i].
	 */
	INTERP4_1D("mode=\"cubic\"", 4, 8, 0, 1, 2, 3);
	EXPECT_OUT(0, F32, 1e-6, -0.10546875, 0.19140625, 0.66796875,
		   1.296875, 1.703125, 2.33203125, 2.80859375, 3.10546875);
}

TEST_F(ops, interpolate_linear_antialias)
{
	/*
	 * [0 1 2 3] scaled by .5: sources .5 and 2.5.  Without antialias
	 * the triangle of radius 1 gives 0.5 and 2.5.  With it, the radius
	 * is 1 / .5 = 2: weights 1 - |.5 d| = .75 .75 .25 0 around .5, so
	 * (0 * .75 + 1 * .75 + 2 * .25) / 1.75, and mirrored around 2.5.
	 */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear\" shape_calculation_mode=\"scales\"",
	      { P("f32", "4", 0, 1, 2, 3), C("i64", "1", 2),
		C("f32", "1", 0.5) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5, 2.5);
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear\" shape_calculation_mode=\"scales\" antialias=\"true\"",
	      { P("f32", "4", 0, 1, 2, 3), C("i64", "1", 2),
		C("f32", "1", 0.5) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1.25 / 1.75, 4 / 1.75);
}

TEST_F(ops, interpolate_scales_mode_uses_the_given_scale)
{
	/*
	 * 3 * 1.7 = 5.1: 5 outputs; linear_onnx, asymmetric: sources x /
	 * 1.7 (not x / (5 / 3)) on [0 10 20]: 10 x / 1.7, clamped at 2.
	 */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\"",
	      { P("f32", "3", 0, 10, 20), C("i64", "1", 5),
		C("f32", "1", 1.7) },
	      { "5" } });
	EXPECT_OUT(0, F32, 1e-4, 0, 10 / 1.7, 20 / 1.7, 30 / 1.7, 20);
}

TEST_F(ops, interpolate_11_scales_two_axes)
{
	/* x2 on H and W, nearest asymmetric floor: each pixel a 2x2 block */
	RUN({ "Interpolate", "opset11",
	      "mode=\"nearest\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4), C("f32", "2", 2, 2),
		C("i32", "2", -2, -1) },
	      { "1,1,4,4" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4,
		   4);
	/* no axes input: one scale per axis */
	RUN({ "Interpolate", "opset11",
	      "mode=\"nearest\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4), C("f32", "4", 1, 1, 2, 1) },
	      { "1,1,4,2" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 3, 4, 3, 4);
	/* sizes as integers */
	RUN({ "Interpolate", "opset11",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\" coordinate_transformation_mode=\"align_corners\"",
	      { P("f32", "1,2", 0, 10), C("i32", "1", 3), C("i64", "1", 1) },
	      { "1,3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 5, 10);
}

TEST_F(ops, interpolate_11_pillow_modes)
{
	/*
	 * bilinear_pillow, [0 1 2 3] -> 2: support 2, centers 1 and 3;
	 * taps 0..2 weigh tri((j - 1 + .5) / 2) = .75 .75 .25, taps 1..3
	 * around 3 weigh .25 .75 .75.
	 */
	RUN({ "Interpolate", "opset11",
	      "mode=\"bilinear_pillow\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "4", 0, 1, 2, 3), C("i64", "1", 2) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1.25 / 1.75, 4 / 1.75);
	/* upscaling [1 3] -> 4: support 1, centers .25 .75 1.25 1.75 */
	RUN({ "Interpolate", "opset11",
	      "mode=\"bilinear_pillow\" shape_calculation_mode=\"scales\"",
	      { P("f32", "2", 1, 3), C("f32", "1", 2) }, { "4" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2.5, 3);
	/*
	 * bicubic_pillow (a = -.5), [1 3] -> 4: center .25 reads taps 0, 1
	 * at distances .25, 1.25 with weights .8671875, -.0703125; center
	 * .75 at -.25, .75 with .8671875, .2265625; normalised.
	 */
	RUN({ "Interpolate", "opset11",
	      "mode=\"bicubic_pillow\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 3), C("i64", "1", 4) }, { "4" } });
	EXPECT_OUT(0, F32, 1e-6, 0.65625 / 0.796875, 1.546875 / 1.09375,
		   4 - 1.546875 / 1.09375, 4 - 0.65625 / 0.796875);
}

TEST_F(ops, interpolate_pads)
{
	/* [1 2] padded to [0 1 2 0], resized to its own length */
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\" pads_begin=\"1\" pads_end=\"1\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 0);
	/* a padded axis that is not interpolated */
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\" pads_begin=\"1,0\"",
	      { P("f32", "1,2", 1, 2), C("i64", "1", 2), C("f32", "1", 1),
		C("i64", "1", 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 1, 2);
}

TEST_F(ops, interpolate_1)
{
	/* nearest: asymmetric, simple rounding (floor when upscaling) */
	RUN({ "Interpolate", "opset1", "axes=\"2,3\" mode=\"nearest\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4), C("i64", "2", 4, 4) },
	      { "1,1,4,4" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4,
		   4);
	RUN({ "Interpolate", "opset1",
	      "axes=\"1\" mode=\"linear\" align_corners=\"1\"",
	      { P("f32", "1,2", 0, 10), C("i32", "1", 3) }, { "1,3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 5, 10);
	RUN({ "Interpolate", "opset1", "axes=\"1\" mode=\"area\"",
	      { P("f32", "1,2", 0, 10), C("i32", "1", 3) }, { "1,3" } });
	EXPECT_FAIL("Interpolate", -EOPNOTSUPP, "area");
}

TEST_F(ops, interpolate_integers_and_empty)
{
	/* linear_onnx on u8: 0, 63.75, 191.25, 255 rounded */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\"",
	      { P("u8", "2", 0, 255), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 0, 64, 191, 255);
	/* an empty batch */
	RUN({ "Interpolate", "opset4",
	      "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\"",
	      { P0("f32", "0,2"), C("i64", "1", 4), C("f32", "1", 1),
		C("i64", "1", 1) },
	      { "0,4" } });
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, interpolate_errors)
{
	RUN({ "Interpolate", "opset4",
	      "mode=\"bilinear\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "mode");
	RUN({ "Interpolate", "opset4",
	      "mode=\"bicubic_pillow\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "later Interpolate version");
	RUN({ "Interpolate", "opset4", "mode=\"nearest\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "shape_calculation_mode");
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "1,2", 1, 2), C("i64", "2", 4, 4), C("f32", "1", 1),
		C("i64", "1", 1) },
	      { "1,4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "1 axes but 2 sizes");
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "1,2", 1, 2), C("i64", "2", 4, 4), C("f32", "1", 1),
		C("i64", "2", 1, -1) },
	      { "1,4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "repeated");
	RUN({ "Interpolate", "opset11",
	      "mode=\"nearest\" shape_calculation_mode=\"scales\"",
	      { P("f32", "2", 1, 2), C("f32", "1", -2) }, { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "must be positive");
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\" pads_begin=\"-1\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 4), C("f32", "1", 1) },
	      { "4" } });
	EXPECT_FAIL("Interpolate", -EINVAL, "pads_begin");
}

/* ---- TopK-1/-3/-11 ---------------------------------------------------- */

TEST_F(ops, topk_max_by_value_last_axis)
{
	RUN({ "TopK", "opset3",
	      "axis=\"-1\" mode=\"max\" sort=\"value\" index_element_type=\"i64\"",
	      { P("f32", "2,5", 3, 1, 4, 1, 5, 9, 2, 6, 5, 3),
		C("i64", "", 3) },
	      { "2,3", "2,3" }, { "f32", "i64" } });
	EXPECT_OUT(0, F32, 0, 5, 4, 3, 9, 6, 5);
	EXPECT_OUT(1, I64, 0, 4, 2, 0, 0, 2, 3);
}

TEST_F(ops, topk_min_sorted_by_index_and_axis0)
{
	/* three smallest of 3 1 4 1 5: 1 (1), 1 (3), 3 (0); by index */
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"min\" sort=\"index\"",
	      { P("i32", "5", 3, 1, 4, 1, 5), C("i32", "", 3) },
	      { "3", "3" }, { "i32", "i32" } });
	EXPECT_OUT(0, I32, 0, 3, 1, 1);
	EXPECT_OUT(1, I32, 0, 0, 1, 3);
	/* along axis 0 of a [3, 2] */
	RUN({ "TopK", "opset1", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "3,2", 1, 5, 4, 2, 3, 6), C("i64", "", 1) },
	      { "1,2", "1,2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 4, 6);
	EXPECT_OUT(1, I32, 0, 1, 2);
}

TEST_F(ops, topk_ties_k_larger_than_dim_and_zero)
{
	/* stable: equal values keep the lower index first */
	RUN({ "TopK", "opset11",
	      "axis=\"0\" mode=\"max\" sort=\"value\" stable=\"true\"",
	      { P("f32", "4", 2, 2, 1, 2), C("i64", "", 2) },
	      { "2", "2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 2, 2);
	EXPECT_OUT(1, I32, 0, 0, 1);
	/* k = 5 > 2: min(k, dim) */
	RUN({ "TopK", "opset11", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "2", 1, 2), C("i64", "", 5) },
	      { "2", "2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 2, 1);
	EXPECT_OUT(1, I32, 0, 1, 0);
	RUN({ "TopK", "opset11", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "2", 1, 2), C("i64", "", 0) },
	      { "0", "0" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, topk_errors)
{
	RUN({ "TopK", "opset3", "axis=\"0\" sort=\"value\"",
	      { P("f32", "2", 1, 2), C("i64", "", 1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "mode");
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\"",
	      { P("f32", "2", 1, 2), C("i64", "", -1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "k -1");
	RUN({ "TopK", "opset3", "axis=\"1\" mode=\"max\"",
	      { P("f32", "2", 1, 2), C("i64", "", 1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "axis 1");
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\" stable=\"true\"",
	      { P("f32", "2", 1, 2), C("i64", "", 1) },
	      { "1", "1" }, { "f32", "i32" } });
	EXPECT_FAIL("TopK", -EINVAL, "stable");
}

/* ---- NonMaxSuppression ------------------------------------------------ */

/*
 * Six unit boxes [y1, x1, y2, x2] in one row: 1 and 2 overlap 0 with IOU
 * .9 / 1.1 = .818, 4 overlaps 3 as much, 5 stands alone.
 */
#define NMS_BOXES	P("f32", "1,6,4", 0, 0, 1, 1, 0, 0.1, 1, 1.1,	\
			  0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, \
			  0, 100, 1, 101)
#define NMS_SCORES	P("f32", "1,1,6", 0.9, 0.75, 0.6, 0.95, 0.5, 0.3)

TEST_F(ops, nms_5_suppress_by_iou)
{
	/* 3 (.95) removes 4; 0 (.9) removes 1 and 2; then 5 (.3) */
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { NMS_BOXES, NMS_SCORES, C("i64", "", 3), C("f32", "", 0.5),
		C("f32", "", 0) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 3, 0, 0, 0, 0, 0, 5);
	EXPECT_OUT(1, F32, 1e-6, 0, 0, 0.95, 0, 0, 0.9, 0, 0, 0.3);
	EXPECT_OUT(2, I64, 0, 3);
	/* a score threshold of .4 stops before box 5: -1 rows follow */
	RUN({ "NonMaxSuppression", "opset9", "output_type=\"i32\"",
	      { NMS_BOXES, NMS_SCORES, C("i32", "", 3), C("f32", "", 0.5),
		C("f32", "", 0.4) },
	      { "3,3", "3,3", "1" }, { "i32", "f32", "i32" } });
	EXPECT_OUT(0, I32, 0, 0, 0, 3, 0, 0, 0, -1, -1, -1);
	EXPECT_OUT(1, F32, 1e-6, 0, 0, 0.95, 0, 0, 0.9, -1, -1, -1);
	EXPECT_OUT(2, I32, 0, 2);
}

TEST_F(ops, nms_center_encoding_and_version_4)
{
	/* the same boxes as [x_center, y_center, width, height] */
	RUN({ "NonMaxSuppression", "opset4",
	      "box_encoding=\"center\"",
	      { P("f32", "1,6,4", 0.5, 0.5, 1, 1, 0.6, 0.5, 1, 1, 0.4, 0.5,
		  1, 1, 10.5, 0.5, 1, 1, 10.6, 0.5, 1, 1, 100.5, 0.5, 1, 1),
		NMS_SCORES, C("i64", "", 2), C("f32", "", 0.5) },
	      { "2,3" }, { "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 3, 0, 0, 0);
}

TEST_F(ops, nms_sort_result_descending)
{
	/*
	 * Two disjoint boxes, two classes: class 0 takes box 1 (.7) then
	 * box 0 (.5), class 1 box 0 (.9) then box 1 (.2).
	 */
	RUN({ "NonMaxSuppression", "opset5", "sort_result_descending=\"true\"",
	      { P("f32", "1,2,4", 0, 0, 1, 1, 0, 10, 1, 11),
		P("f32", "1,2,2", 0.5, 0.7, 0.9, 0.2), C("i64", "", 2),
		C("f32", "", 0.5), C("f32", "", 0) },
	      { "4,3", "4,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1);
	RUN({ "NonMaxSuppression", "opset5", "sort_result_descending=\"false\"",
	      { P("f32", "1,2,4", 0, 0, 1, 1, 0, 10, 1, 11),
		P("f32", "1,2,2", 0.5, 0.7, 0.9, 0.2), C("i64", "", 2),
		C("f32", "", 0.5), C("f32", "", 0) },
	      { "4,3", "4,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1);
}

TEST_F(ops, nms_soft_sigma_decays_scores)
{
	/*
	 * IOU of [0,0,1,1] and [0,.5,1,1.5] is .5 / 1.5 = 1/3; with sigma
	 * .5 the second score becomes .8 * exp(-.5 * (1/9) / .5).
	 */
	RUN({ "NonMaxSuppression", "opset9", NULL,
	      { P("f32", "1,2,4", 0, 0, 1, 1, 0, 0.5, 1, 1.5),
		P("f32", "1,1,2", 0.9, 0.8), C("i64", "", 2),
		C("f32", "", 1), C("f32", "", 0), C("f32", "", 0.5) },
	      { "2,3", "2,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(0, I64, 0, 0, 0, 0, 0, 0, 1);
	EXPECT_OUT(1, F32, 1e-6, 0, 0, 0.9, 0, 0, 0.8 * exp(-1.0 / 9));
	EXPECT_OUT(2, I64, 0, 2);
}

TEST_F(ops, nms_errors)
{
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { P0("f32", "1,6,3"), P0("f32", "1,1,6"), C("i64", "", 3) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_FAIL("NonMaxSuppression", -EINVAL, "boxes must be");
	RUN({ "NonMaxSuppression", "opset5", "box_encoding=\"corners\"",
	      { P0("f32", "1,6,4"), P0("f32", "1,1,6"), C("i64", "", 3) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_FAIL("NonMaxSuppression", -EINVAL, "box_encoding");
}

/* ---- RegionYolo-0 ----------------------------------------------------- */

TEST_F(ops, region_yolo_softmax_and_sigmoid)
{
	/*
	 * One anchor, coords 4, classes 2, one cell: x, y, objectness go
	 * through a sigmoid (0 -> .5), w and h stay, the classes 0 and
	 * ln 3 through a softmax (1/4, 3/4) or a sigmoid (1/2, 3/4).
	 */
	RUN({ "RegionYolo", "opset1",
	      "coords=\"4\" classes=\"2\" num=\"1\" axis=\"1\" end_axis=\"3\" do_softmax=\"true\"",
	      { P("f32", "1,7,1,1", 0, 0, 1, 2, 0, 0, log(3.0)) },
	      { "1,7" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5, 0.5, 1, 2, 0.5, 0.25, 0.75);
	RUN({ "RegionYolo", "opset1",
	      "coords=\"4\" classes=\"2\" num=\"3\" axis=\"1\" end_axis=\"3\" do_softmax=\"false\" mask=\"1\"",
	      { P("f32", "1,7,1,1", 0, 0, 1, 2, 0, 0, log(3.0)) },
	      { "1,7,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5, 0.5, 1, 2, 0.5, 0.5, 0.75);
	RUN({ "RegionYolo", "opset1",
	      "coords=\"4\" classes=\"3\" num=\"1\" axis=\"1\" end_axis=\"3\" do_softmax=\"true\"",
	      { P0("f32", "1,7,1,1") }, { "1,7" } });
	EXPECT_FAIL("RegionYolo", -EINVAL, "channels 7");
}

/* ---- ops that existed before: their edge cases ------------------------ */

TEST_F(ops, gather_negative_indices_batch_dims_and_axis)
{
	RUN({ "Gather", "opset8", NULL,
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "2", -1, 0),
		C("i64", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 4, 1);
	/* batch_dims 1: per row b, data[b][idx[b][j]] */
	RUN({ "Gather", "opset7", "batch_dims=\"1\"",
	      { P("i32", "2,3", 1, 2, 3, 4, 5, 6), C("i32", "2,2", 2, 0, 1, 1),
		C("i64", "", 1) },
	      { "2,2" } });
	EXPECT_OUT(0, I32, 0, 3, 1, 5, 5);
	RUN({ "Gather", "opset1", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "1", 1),
		C("i64", "", -1) },
	      { "2,1" } });
	EXPECT_OUT(0, F32, 0, 2, 4);
	/* before Gather-8, negative and too large indices give zeros */
	RUN({ "Gather", "opset7", NULL,
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "3", -1, 1, 4),
		C("i64", "", 0) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 0);
	RUN({ "Gather", "opset8", NULL,
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "3", -4, 1, 4),
		C("i64", "", 0) },
	      { "3" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 0);
	RUN({ "Gather", "opset1", "batch_dims=\"1\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "2,1", 1, 0),
		C("i64", "", 1) },
	      { "2,1" } });
	EXPECT_FAIL("Gather", -EINVAL, "batch_dims");
}

TEST_F(ops, pad_modes)
{
	RUN({ "Pad", "opset1", "pad_mode=\"constant\"",
	      { P("f32", "2", 1, 2), C("i64", "1", 1), C("i64", "1", 2),
		C("f32", "", 9) },
	      { "5" } });
	EXPECT_OUT(0, F32, 0, 9, 1, 2, 9, 9);
	RUN({ "Pad", "opset1", "pad_mode=\"edge\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 2), C("i64", "1", 1) },
	      { "6" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 1, 2, 3, 3);
	/* reflect leaves the border out, symmetric repeats it */
	RUN({ "Pad", "opset1", "pad_mode=\"reflect\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 2), C("i64", "1", 2) },
	      { "7" } });
	EXPECT_OUT(0, F32, 0, 3, 2, 1, 2, 3, 2, 1);
	RUN({ "Pad", "opset1", "pad_mode=\"symmetric\"",
	      { P("i32", "3", 1, 2, 3), C("i64", "1", 2), C("i64", "1", 2) },
	      { "7" } });
	EXPECT_OUT(0, I32, 0, 2, 1, 1, 2, 3, 3, 2);
	/* 2-D: one reflected row before, one reflected column after */
	RUN({ "Pad", "opset1", "pad_mode=\"reflect\"",
	      { P("f32", "2,2", 1, 2, 3, 4), C("i64", "2", 1, 0),
		C("i64", "2", 0, 1) },
	      { "3,3" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 3, 1, 2, 1, 3, 4, 3);
}

TEST_F(ops, pad_12_negative_pads_crop)
{
	RUN({ "Pad", "opset12", "pad_mode=\"constant\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "1", -1), C("i64", "1", 1) },
	      { "4" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 4, 0);
	RUN({ "Pad", "opset12", "pad_mode=\"edge\"",
	      { P("f32", "4", 1, 2, 3, 4), C("i64", "1", -1), C("i64", "1", -2) },
	      { "1" } });
	EXPECT_OUT(0, F32, 0, 2);
	RUN({ "Pad", "opset12", "pad_mode=\"reflect\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 3), C("i64", "1", 0) },
	      { "6" } });
	EXPECT_FAIL("Pad", -EINVAL, "");
	RUN({ "Pad", "opset12", "pad_mode=\"wrap\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "1", 1), C("i64", "1", 0) },
	      { "4" } });
	EXPECT_FAIL("Pad", -EINVAL, "pad_mode");
}

TEST_F(ops, broadcast_modes)
{
	RUN({ "Broadcast", "opset3", "mode=\"numpy\"",
	      { P("f32", "3", 1, 2, 3), C("i64", "2", 2, 3) }, { "2,3" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 1, 2, 3);
	/* bidirectional: [2, 1] with [1, 3] gives [2, 3] */
	RUN({ "Broadcast", "opset3", "mode=\"bidirectional\"",
	      { P("f32", "2,1", 1, 2), C("i64", "2", 1, 3) }, { "2,3" } });
	EXPECT_OUT(0, F32, 0, 1, 1, 1, 2, 2, 2);
	/* explicit: data axis 0 is output axis 0 */
	RUN({ "Broadcast", "opset3", "mode=\"explicit\"",
	      { P("i64", "2", 1, 2), C("i64", "2", 2, 3), C("i64", "1", 0) },
	      { "2,3" } });
	EXPECT_OUT(0, I64, 0, 1, 1, 1, 2, 2, 2);
	RUN({ "Broadcast", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("i64", "2", 2, 4) }, { "2,4" } });
	EXPECT_FAIL("Broadcast", -EINVAL, "");
}

TEST_F(ops, tile_range_select)
{
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), C("i64", "2", 2, 2) }, { "2,4" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 1, 2, 1, 2);
	RUN({ "Range", "opset4", "output_type=\"i32\"",
	      { C("i32", "", 5), C("i32", "", 0), C("i32", "", -2) },
	      { "3" }, { "i32" } });
	EXPECT_OUT(0, I32, 0, 5, 3, 1);
	/* ceil((1 - 0) / .25) = 4 elements */
	RUN({ "Range", "opset4", "output_type=\"f32\"",
	      { C("f32", "", 0), C("f32", "", 1), C("f32", "", 0.25) },
	      { "4" }, { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.25, 0.5, 0.75);
	/* condition [2, 1] against then [1, 3] and a scalar else */
	RUN({ "Select", "opset1", NULL,
	      { P("boolean", "2,1", 1, 0), P("f32", "1,3", 1, 2, 3),
		C("f32", "", 9) },
	      { "2,3" }, { "f32" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 9, 9, 9);
}

TEST_F(ops, split_variadic_split_slice)
{
	RUN({ "Split", "opset1", "num_splits=\"3\"",
	      { P("f32", "6", 1, 2, 3, 4, 5, 6), C("i64", "", -1) },
	      { "2", "2", "2" } });
	EXPECT_OUT(0, F32, 0, 1, 2);
	EXPECT_OUT(2, F32, 0, 5, 6);
	/* -1 takes the rest */
	RUN({ "VariadicSplit", "opset1", NULL,
	      { P("f32", "6", 1, 2, 3, 4, 5, 6), C("i64", "", 0),
		C("i64", "3", 1, -1, 2) },
	      { "1", "3", "2" } });
	EXPECT_OUT(1, F32, 0, 2, 3, 4);
	EXPECT_OUT(2, F32, 0, 5, 6);
	/* reversed with clamped bounds */
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), C("i64", "1", -1),
		C("i64", "1", -100), C("i64", "1", -1) },
	      { "5" } });
	EXPECT_OUT(0, F32, 0, 4, 3, 2, 1, 0);
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), C("i64", "1", 0),
		C("i64", "1", 3), C("i64", "1", 2), C("i64", "1", -1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 2, 3, 5);
	RUN({ "Split", "opset1", "num_splits=\"4\"",
	      { P("f32", "6", 1, 2, 3, 4, 5, 6), C("i64", "", 0) },
	      { "2", "2", "2" } });
	EXPECT_FAIL("Split", -EINVAL, "");
}

TEST_F(ops, activations)
{
	RUN({ "Clamp", "opset1", "min=\"-1\" max=\"2\"",
	      { P("f32", "3", -3, 0.5, 5) }, { "3" } });
	EXPECT_OUT(0, F32, 0, -1, 0.5, 2);
	/* integers: min rounds up, max down */
	RUN({ "Clamp", "opset1", "min=\"-1.5\" max=\"2.5\"",
	      { P("i32", "3", -3, 1, 5) }, { "3" } });
	EXPECT_OUT(0, I32, 0, -1, 1, 2);
	/* x * relu6(x + 3) / 6 and relu6(x + 3) / 6 */
	RUN({ "HSwish", "opset4", NULL, { P("f32", "3", -4, 1, 4) }, { "3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 4.0 / 6, 4);
	RUN({ "HSigmoid", "opset5", NULL, { P("f32", "3", -4, 0, 4) },
	      { "3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.5, 1);
	/* x * sigmoid(beta x): beta 1 then 2 */
	RUN({ "Swish", "opset4", NULL, { P("f32", "2", 1, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1 / (1 + exp(-1.0)), -1 / (1 + exp(1.0)));
	RUN({ "Swish", "opset4", NULL, { P("f32", "1", 1), C("f32", "", 2) },
	      { "1" } });
	EXPECT_OUT(0, F32, 1e-6, 1 / (1 + exp(-2.0)));
	/* .5 x (1 + erf(x / sqrt 2)) */
	RUN({ "Gelu", "opset7", "approximation_mode=\"erf\"",
	      { P("f32", "2", 1, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5 * (1 + erf(1 / sqrt(2.0))),
		   -0.5 * (1 + erf(-1 / sqrt(2.0))));
	/* .5 x (1 + tanh(sqrt(2 / pi) (x + .044715 x^3))) */
	RUN({ "Gelu", "opset7", "approximation_mode=\"tanh\"",
	      { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6,
		   0.5 * (1 + tanh(sqrt(2 / M_PI) * (1 + 0.044715))));
	RUN({ "Gelu", "opset2", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5 * (1 + erf(1 / sqrt(2.0))));
	/* x tanh(ln(1 + e^x)) */
	RUN({ "Mish", "opset4", NULL, { P("f32", "2", 1, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, tanh(log1p(exp(1.0))),
		   -tanh(log1p(exp(-1.0))));
	/* ln(1 + e^x), no overflow for large x */
	RUN({ "SoftPlus", "opset4", NULL, { P("f32", "3", 0, -2, 100) },
	      { "3" } });
	EXPECT_OUT(0, F32, 1e-5, log(2.0), log1p(exp(-2.0)), 100);
	RUN({ "Elu", "opset1", "alpha=\"0.5\"", { P("f32", "2", -1, 2) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.5 * (exp(-1.0) - 1), 2);
	RUN({ "Elu", "opset1", NULL, { P("f32", "2", -1, 2) }, { "2" } });
	EXPECT_FAIL("Elu", -EINVAL, "alpha");
	RUN({ "Clamp", "opset1", "min=\"2\" max=\"1\"",
	      { P("f32", "1", 0) }, { "1" } });
	EXPECT_FAIL("Clamp", -EINVAL, "min");
}

TEST_F(ops, math_unary)
{
	RUN({ "Negative", "opset1", NULL, { P("i32", "2", 3, -4) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -3, 4);
	RUN({ "Abs", "opset1", NULL, { P("f32", "2", -1.5, 2) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 1.5, 2);
	RUN({ "Floor", "opset1", NULL, { P("f32", "2", -1.5, 1.5) }, { "2" } });
	EXPECT_OUT(0, F32, 0, -2, 1);
	RUN({ "Ceiling", "opset1", NULL, { P("f32", "2", -1.5, 1.5) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, -1, 2);
	RUN({ "Sqrt", "opset1", NULL, { P("f32", "2", 4, 2.25) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 2, 1.5);
	RUN({ "Log", "opset1", NULL, { P("f32", "2", 1, 2) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, log(2.0));
	RUN({ "Erf", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, erf(0.5));
	RUN({ "Tanh", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, tanh(0.5));
	RUN({ "Exp", "opset1", NULL, { P("f32", "2", 0, -1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, exp(-1.0));
}

TEST_F(ops, binary_arithmetic_edge_cases)
{
	/* FloorMod takes the divisor's sign, Mod the dividend's */
	RUN({ "FloorMod", "opset1", NULL,
	      { P("f32", "2", -7, 7), P("f32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, -2);
	RUN({ "FloorMod", "opset1", NULL,
	      { P("i32", "2", -7, 7), P("i32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 2, -2);
	RUN({ "Mod", "opset1", NULL,
	      { P("i32", "2", -7, 7), P("i32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -1, 1);
	RUN({ "Mod", "opset1", NULL,
	      { P("f32", "2", -7, 7), P("f32", "2", 3, -3) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, -1, 1);
	/* integer division: python (floor) by default, else truncation */
	RUN({ "Divide", "opset1", NULL,
	      { P("i32", "2", -7, 7), P("i32", "", 2) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -4, 3);
	RUN({ "Divide", "opset1", "m_pythondiv=\"false\"",
	      { P("i32", "2", -7, 7), P("i32", "", 2) }, { "2" } });
	EXPECT_OUT(0, I32, 0, -3, 3);
	RUN({ "Power", "opset1", NULL,
	      { P("f32", "2", 2, 4), P("f32", "2", 3, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 8, 2);
	RUN({ "Power", "opset1", NULL,
	      { P("i32", "2", 2, -3), P("i32", "", 3) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 8, -27);
	RUN({ "SquaredDifference", "opset1", NULL,
	      { P("f32", "2", 1, -2), P("f32", "2", 4, 2) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 9, 16);
	/* [2, 1] against [1, 2] */
	RUN({ "Maximum", "opset1", NULL,
	      { P("f32", "2,1", 1, 4), P("f32", "1,2", 2, 3) }, { "2,2" } });
	EXPECT_OUT(0, F32, 0, 2, 3, 4, 4);
	RUN({ "Minimum", "opset1", NULL,
	      { P("i64", "2,1", 1, 4), P("i64", "1,2", 2, 3) }, { "2,2" } });
	EXPECT_OUT(0, I64, 0, 1, 1, 2, 3);
	RUN({ "Mod", "opset1", NULL,
	      { P("i32", "1", 1), P("i32", "1", 0) }, { "1" } });
	EXPECT_FAIL("Mod", -EDOM, "");
	RUN({ "Add", "opset1", "auto_broadcast=\"none\"",
	      { P("f32", "2", 1, 2), P("f32", "1", 1) }, { "2" } });
	EXPECT_FAIL("Add", -EINVAL, "auto_broadcast=none");
	RUN({ "Add", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("f32", "3", 1, 2, 3) }, { "3" } });
	EXPECT_FAIL("Add", -EINVAL, "does not broadcast");
}

TEST_F(ops, comparisons_and_logic)
{
	RUN({ "Equal", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1, 0);
	RUN({ "NotEqual", "opset1", NULL,
	      { P("i32", "3", 1, 2, 3), C("i32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 1, 0, 1);
	RUN({ "Less", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 1, 0, 0);
	RUN({ "LessEqual", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 1, 1, 0);
	RUN({ "Greater", "opset1", NULL,
	      { P("i64", "3", 1, 2, 3), C("i64", "", 2) }, { "3" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0, 1);
	RUN({ "GreaterEqual", "opset1", NULL,
	      { P("f32", "2,1", 1, 3), C("f32", "1,2", 2, 3) }, { "2,2" },
	      { "boolean" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0, 1, 1);
	RUN({ "LogicalAnd", "opset1", NULL,
	      { P("boolean", "4", 1, 1, 0, 0), P("boolean", "4", 1, 0, 1, 0) },
	      { "4" } });
	EXPECT_OUT(0, BOOL, 0, 1, 0, 0, 0);
	RUN({ "LogicalOr", "opset1", NULL,
	      { P("boolean", "4", 1, 1, 0, 0), P("boolean", "4", 1, 0, 1, 0) },
	      { "4" } });
	EXPECT_OUT(0, BOOL, 0, 1, 1, 1, 0);
	RUN({ "LogicalXor", "opset1", NULL,
	      { P("boolean", "4", 1, 1, 0, 0), P("boolean", "", 1) },
	      { "4" } });
	EXPECT_OUT(0, BOOL, 0, 0, 0, 1, 1);
	RUN({ "LogicalNot", "opset1", NULL, { P("boolean", "2", 1, 0) },
	      { "2" } });
	EXPECT_OUT(0, BOOL, 0, 0, 1);
}

TEST_F(ops, reductions)
{
	/* [[1, -2], [3, 4]] over the last axis */
	RUN({ "ReduceMax", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", -1) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 4);
	RUN({ "ReduceMin", "opset1", "keep_dims=\"true\"",
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", -1) }, { "2,1" } });
	EXPECT_OUT(0, F32, 0, -2, 3);
	RUN({ "ReduceProd", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 0, -2, 12);
	RUN({ "ReduceL1", "opset4", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 3, 7);
	RUN({ "ReduceL2", "opset4", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, sqrt(5.0), 5);
	RUN({ "ReduceMean", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "2", 0, 1) }, { "" } });
	EXPECT_OUT(0, F32, 1e-6, 1.5);
	RUN({ "ReduceSum", "opset1", NULL,
	      { P("i32", "2,2", 1, -2, 3, 4), C("i64", "1", 0) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 4, 2);
	RUN({ "ReduceMax", "opset1", NULL,
	      { P("f32", "2,2", 1, -2, 3, 4), C("i64", "1", 2) }, { "2" } });
	EXPECT_FAIL("ReduceMax", -EINVAL, "out of range");
}

TEST_F(ops, matmul_transposes_and_batch_broadcast)
{
	/* [1, 3] x [2, 3]^T */
	RUN({ "MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"",
	      { P("f32", "1,3", 1, 2, 3), C("f32", "2,3", 1, 0, 0, 0, 1, 1) },
	      { "1,2" } });
	EXPECT_OUT(0, F32, 0, 1, 5);
	/* [3, 1]^T x [3, 2] */
	RUN({ "MatMul", "opset1", "transpose_a=\"true\"",
	      { P("f32", "3,1", 1, 2, 3), C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "1,2" } });
	EXPECT_OUT(0, F32, 0, 4, 5);
	/* 1-D x 2-D: [3] x [3, 2] -> [2] */
	RUN({ "MatMul", "opset1", NULL,
	      { P("f32", "3", 1, 2, 3), C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 4, 5);
	/*
	 * [2, 1, 1, 2] x [3, 2, 1] -> [2, 3, 1, 1]: rows [1 2] and [3 4]
	 * times columns [1 0], [0 1], [1 1].
	 */
	RUN({ "MatMul", "opset1", NULL,
	      { P("f32", "2,1,1,2", 1, 2, 3, 4),
		C("f32", "3,2,1", 1, 0, 0, 1, 1, 1) },
	      { "2,3,1,1" } });
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 3, 4, 7);
	RUN({ "MatMul", "opset1", NULL,
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6), C("f32", "2,2", 1, 0, 0, 1) },
	      { "2,2" } });
	EXPECT_FAIL("MatMul", -EINVAL, "");
}

TEST_F(ops, avg_pool_exclude_pad_and_ceil)
{
	/*
	 * [[1 2] [3 4]], 2x2 windows, stride 1, one row and column of
	 * padding before: the windows hold {1}, {1 2}, {1 3}, {1 2 3 4}.
	 */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"0,0\" exclude-pad=\"true\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2, 2.5);
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"0,0\" exclude-pad=\"false\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2", 1, 2, 3, 4) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.75, 1, 2.5);
	/* 3x3 input, 2x2 stride 2, ceil: partial windows at the edge */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" rounding_type=\"ceil\"",
	      { P("f32", "1,1,3,3", 1, 2, 3, 4, 5, 6, 7, 8, 9) },
	      { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 3, 4.5, 7.5, 9);
}

/* ---- ROIPooling-2 ----------------------------------------------------- */

#define MAP16	P("f32", "1,1,4,4", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,	\
		  12, 13, 14, 15)

TEST_F(ops, roi_pooling_max)
{
	/*
	 * Map x[i][j] = 4 i + j.  ROI (0,0)-(3,3): 4x4 cells, 2x2 bins of
	 * 2x2: maxima 5, 7, 13, 15.  ROI (0,0)-(7,7) at scale .5: corners
	 * round to 0 and 4, 5 cells, bins of 2.5: rows/columns [0, 3) and
	 * [2, 4): maxima 10, 11, 14, 15.
	 */
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"2\" pooled_w=\"2\" spatial_scale=\"1\" method=\"max\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 3, 3) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 0, 5, 7, 13, 15);
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"2\" pooled_w=\"2\" spatial_scale=\"0.5\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 7, 7) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 0, 10, 11, 14, 15);
}

TEST_F(ops, roi_pooling_bilinear_and_errors)
{
	/* corners of the whole map, then its centre (1.5, 1.5) = 7.5 */
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"2\" pooled_w=\"2\" spatial_scale=\"1\" method=\"bilinear\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 1, 1) }, { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 3, 12, 15);
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"1\" pooled_w=\"1\" spatial_scale=\"1\" method=\"bilinear\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 1, 1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 7.5);
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"0\" pooled_w=\"2\" spatial_scale=\"1\"",
	      { MAP16, C("f32", "1,5", 0, 0, 0, 1, 1) }, { "1,1,0,2" } });
	EXPECT_FAIL("ROIPooling", -EINVAL, "pooled_h");
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"1\" pooled_w=\"1\" spatial_scale=\"1\"",
	      { MAP16, C("f32", "1,4", 0, 0, 1, 1) }, { "1,1,1,1" } });
	EXPECT_FAIL("ROIPooling", -EINVAL, "NUM_ROIS, 5");
	RUN({ "ROIPooling", "opset2",
	      "pooled_h=\"1\" pooled_w=\"1\" spatial_scale=\"1\"",
	      { MAP16, P("f32", "1,5", 3, 0, 0, 1, 1) }, { "1,1,1,1" } });
	EXPECT_FAIL("ROIPooling", -EINVAL, "batch index");
}

/* ---- PriorBox-1/-8, DetectionOutput-1/-8 ------------------------------ */

TEST_F(ops, prior_box_1_grid)
{
	/*
	 * 2x2 map on a 4x4 image: step 2, centres (1, 1), (3, 1), (1, 3),
	 * (3, 3); one box of size 2 each, normalised by 4.  Then a row of
	 * variances.
	 */
	RUN({ "PriorBox", "opset1",
	      "min_size=\"2\" aspect_ratio=\"\" flip=\"false\" clip=\"false\" step=\"0\" offset=\"0.5\" variance=\"0.1\"",
	      { C("i64", "2", 2, 2), C("i64", "2", 4, 4) }, { "2,16" },
	      { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0, 0.5, 0.5, 0.5, 0, 1, 0.5, 0, 0.5,
		   0.5, 1, 0.5, 0.5, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
		   0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1);
}

TEST_F(ops, prior_box_8_min_max_order)
{
	/*
	 * 1x1 map on a 4x4 image, centre (2, 2).  Boxes: min 2 (half 1),
	 * max sqrt(2 * 4) (half sqrt 2), aspect ratio 2 (half sizes
	 * sqrt 2 by 1 / sqrt 2), all divided by 4.  With
	 * min_max_aspect_ratios_order the max box comes second, else last.
	 */
	const double h = sqrt(2.0) / 4, q = sqrt(0.5) / 4;

	RUN({ "PriorBox", "opset8",
	      "min_size=\"2\" max_size=\"4\" aspect_ratio=\"2\" flip=\"false\" clip=\"false\" step=\"0\" offset=\"0.5\" variance=\"0.1,0.1,0.2,0.2\" min_max_aspect_ratios_order=\"true\"",
	      { C("i32", "2", 1, 1), C("i32", "2", 4, 4) }, { "2,12" },
	      { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.25, 0.75, 0.75,
		   0.5 - h, 0.5 - h, 0.5 + h, 0.5 + h,
		   0.5 - h, 0.5 - q, 0.5 + h, 0.5 + q,
		   0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2);
	RUN({ "PriorBox", "opset8",
	      "min_size=\"2\" max_size=\"4\" aspect_ratio=\"2\" flip=\"false\" clip=\"false\" step=\"0\" offset=\"0.5\" variance=\"0.1,0.1,0.2,0.2\" min_max_aspect_ratios_order=\"false\"",
	      { C("i32", "2", 1, 1), C("i32", "2", 4, 4) }, { "2,12" },
	      { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.25, 0.75, 0.75,
		   0.5 - h, 0.5 - q, 0.5 + h, 0.5 + q,
		   0.5 - h, 0.5 - h, 0.5 + h, 0.5 + h,
		   0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2);
}

TEST_F(ops, detection_output_1_and_8_decode_one_box)
{
	/*
	 * One prior (.1, .1)-(.5, .5), zero offsets: CENTER_SIZE decoding
	 * gives the prior itself; class 1 scores .9, background 0 is
	 * skipped: [image 0, label 1, .9, .1, .1, .5, .5].
	 */
	RUN({ "DetectionOutput", "opset1",
	      "num_classes=\"2\" background_label_id=\"0\" top_k=\"1\" keep_top_k=\"1\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" share_location=\"true\" nms_threshold=\"0.45\" confidence_threshold=\"0.01\" normalized=\"true\" variance_encoded_in_target=\"false\"",
	      { P("f32", "1,4", 0, 0, 0, 0), P("f32", "1,2", 0.1, 0.9),
		C("f32", "1,2,4", 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.2, 0.2) },
	      { "1,1,1,7" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 1, 0.9, 0.1, 0.1, 0.5, 0.5);
	RUN({ "DetectionOutput", "opset8",
	      "background_label_id=\"0\" top_k=\"1\" keep_top_k=\"1\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" share_location=\"true\" nms_threshold=\"0.45\" confidence_threshold=\"0.01\" normalized=\"true\" variance_encoded_in_target=\"false\"",
	      { P("f32", "1,4", 0, 0, 0, 0), P("f32", "1,2", 0.1, 0.9),
		C("f32", "1,2,4", 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.2, 0.2) },
	      { "1,1,1,7" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 1, 0.9, 0.1, 0.1, 0.5, 0.5);
	RUN({ "DetectionOutput", "opset8",
	      "background_label_id=\"0\" top_k=\"1\" keep_top_k=\"1\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" share_location=\"true\" nms_threshold=\"0.45\" normalized=\"true\"",
	      { P("f32", "1,5", 0, 0, 0, 0, 0), P("f32", "1,2", 0.1, 0.9),
		C("f32", "1,2,4", 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.2, 0.2) },
	      { "1,1,1,7" } });
	EXPECT_FAIL("DetectionOutput", -EINVAL, "box_logits length 5");
}

/* ---- Einsum-7 --------------------------------------------------------- */

TEST_F(ops, einsum_matmul_trace_transpose_outer)
{
	/* [[1 2 3] [4 5 6]] x [[1 0] [0 1] [1 1]] */
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6),
		C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 4, 5, 10, 11);
	/* implicit output: the labels seen once, sorted: ik */
	RUN({ "Einsum", "opset7", "equation=\"ij,jk\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6),
		C("f32", "3,2", 1, 0, 0, 1, 1, 1) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 0, 4, 5, 10, 11);
	/* trace, diagonal */
	RUN({ "Einsum", "opset7", "equation=\"ii\"",
	      { P("i32", "2,2", 1, 2, 3, 4) }, { "" } });
	EXPECT_OUT(0, I32, 0, 5);
	RUN({ "Einsum", "opset7", "equation=\"ii->i\"",
	      { P("f32", "2,2", 1, 2, 3, 4) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 4);
	/* transposes: explicit, and implicit "ba" sorted to "ab" */
	RUN({ "Einsum", "opset7", "equation=\"ij->ji\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6) }, { "3,2" } });
	EXPECT_OUT(0, F32, 0, 1, 4, 2, 5, 3, 6);
	RUN({ "Einsum", "opset7", "equation=\"ba\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6) }, { "3,2" } });
	EXPECT_OUT(0, F32, 0, 1, 4, 2, 5, 3, 6);
	RUN({ "Einsum", "opset7", "equation=\"i,j->ij\"",
	      { P("f32", "2", 1, 2), P("f32", "3", 3, 4, 5) }, { "2,3" } });
	EXPECT_OUT(0, F32, 0, 3, 4, 5, 6, 8, 10);
}

TEST_F(ops, einsum_ellipsis_broadcasts)
{
	/* batch of rows [1 2], [3 4] times the column [1 1] */
	RUN({ "Einsum", "opset7", "equation=\"...ij,...jk->...ik\"",
	      { P("f32", "2,1,2", 1, 2, 3, 4), C("f32", "2,1", 1, 1) },
	      { "2,1,1" } });
	EXPECT_OUT(0, F32, 0, 3, 7);
	/* ellipsis batch 2 against 1: broadcast; column [1 -1] */
	RUN({ "Einsum", "opset7", "equation=\"...ij,...jk->...ik\"",
	      { P("f32", "2,1,2", 1, 2, 3, 4), C("f32", "1,2,1", 1, -1) },
	      { "2,1,1" } });
	EXPECT_OUT(0, F32, 0, -1, -1);
	/* implicit: ellipsis dims first */
	RUN({ "Einsum", "opset7", "equation=\"a...\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6) }, { "3,2" } });
	EXPECT_OUT(0, F32, 0, 1, 4, 2, 5, 3, 6);
}

TEST_F(ops, einsum_errors)
{
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P0("f32", "2,3"), P0("f32", "2,2") }, { "2,2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "label j has sizes 3 and 2");
	RUN({ "Einsum", "opset7", "equation=\"ij->ik\"",
	      { P0("f32", "2,3") }, { "2,3" } });
	EXPECT_FAIL("Einsum", -EINVAL, "output label 'k'");
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P0("f32", "2,3") }, { "2,2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "number of subscripts");
	RUN({ "Einsum", "opset7", "equation=\"i1->i\"",
	      { P0("f32", "2,3") }, { "2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "character '1'");
	RUN({ "Einsum", "opset7", "equation=\"ijk->i\"",
	      { P0("f32", "2,3") }, { "2" } });
	EXPECT_FAIL("Einsum", -EINVAL, "3 labels for rank 2");
}

/* ---- empty tensors ---------------------------------------------------- */

TEST_F(ops, empty_tensors)
{
	RUN({ "GatherElements", "opset6", "axis=\"0\"",
	      { P("f32", "2,2", 1, 2, 3, 4), P0("i32", "0,2") }, { "0,2" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "GatherND", "opset8", NULL,
	      { P("f32", "2,2", 1, 2, 3, 4), P0("i64", "0,1") }, { "0,2" } });
	EXPECT_OUT(0, F32, 0);
	/* no updates: the data unchanged */
	RUN({ "ScatterNDUpdate", "opset3", NULL,
	      { P("f32", "2", 1, 2), P0("i32", "0,1"), P0("f32", "0") },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 2);
	RUN({ "ScatterElementsUpdate", "opset12", "reduction=\"sum\"",
	      { P("f32", "2", 1, 2), P0("i32", "0"), P0("f32", "0"),
		C("i32", "", 0) },
	      { "2" } });
	EXPECT_OUT(0, F32, 0, 1, 2);
	RUN({ "OneHot", "opset1", "axis=\"-1\"",
	      { P("i32", "2", 0, 1), C("i64", "", 0), C("f32", "", 1),
		C("f32", "", 0) },
	      { "2,0" }, { "f32" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "DepthToSpace", "opset1", "mode=\"blocks_first\" block_size=\"2\"",
	      { P0("f32", "0,4,1,1") }, { "0,1,2,2" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "CumSum", "opset3", NULL,
	      { P0("f32", "0,3"), C("i64", "", 0) }, { "0,3" } });
	EXPECT_OUT(0, F32, 0);
	/* a sum over an empty label is 0 */
	RUN({ "Einsum", "opset7", "equation=\"ij,jk->ik\"",
	      { P0("f32", "2,0"), P0("f32", "0,2") }, { "2,2" } });
	EXPECT_OUT(0, F32, 0, 0, 0, 0, 0);
	RUN({ "NonMaxSuppression", "opset9", NULL,
	      { P0("f32", "1,0,4"), P0("f32", "1,1,0"), C("i64", "", 5) },
	      { "0,3", "0,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_OUT(2, I64, 0, 0);
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\"",
	      { P0("f32", "0,3"), C("i64", "", 1) }, { "0,3", "0,3" },
	      { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0);
	RUN({ "ReduceSum", "opset1", NULL,
	      { P0("f32", "2,0"), C("i64", "1", 1) }, { "2" } });
	EXPECT_OUT(0, F32, 0, 0, 0);
}

/* MaxPool of 8- and 16-bit integers keeps the type; AvgPool stays f32. */
TEST_F(ops, max_pool_integers)
{
	RUN({ "MaxPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"floor\"",
	      { P("u8", "1,1,2,3", 1, 200, 3, 4, 5, 255) }, { "1,1,1,2" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 200, 255);
	RUN({ "MaxPool", "opset8",
	      "kernel=\"2\" strides=\"2\" dilations=\"1\" pads_begin=\"0\" pads_end=\"0\" rounding_type=\"floor\"",
	      { P("i8", "1,1,4", -128, -3, 7, -9) }, { "1,1,2", "1,1,2" },
	      { "i8", "i64" } });
	EXPECT_OUT(0, NPR_ELEM_I8, 0, -3, 7);
	EXPECT_OUT(1, I64, 0, 1, 2);
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" rounding_type=\"floor\"",
	      { P("u8", "1,1,2,2", 1, 2, 3, 4) }, { "1,1,1,1" } });
	EXPECT_FAIL("AvgPool", -EINVAL, "f32");
}

/* ---- 3-D spatial ops ---------------------------------------------------- */

/* x = 1..8 as [1, 1, 2, 2, 2]; every expected value worked by hand. */
TEST_F(ops, spatial_3d_conv_pool_deconv)
{
	/* all-ones 2x2x2 kernel over the whole input: the sum, 36 */
	RUN({ "Convolution", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("f32", "1,1,2,2,2", 1, 1, 1, 1, 1, 1, 1, 1) },
	      { "1,1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 36);
	/* one tap (the last) with pads 1 on each side: x shifted by one */
	RUN({ "Convolution", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"1,1,1\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8),
		C("f32", "1,1,2,2,2", 0, 0, 0, 0, 0, 0, 0, 1) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 2, 3, 4, 5, 6, 7, 8);
	/* two groups of one channel, weights 1 and -1 */
	RUN({ "GroupConvolution", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,2,1,1,2", 1, 2, 3, 4),
		C("f32", "2,1,1,1,1,1", 1, -1) },
	      { "1,2,1,1,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 2, -3, -4);
	RUN({ "MaxPool", "opset1",
	      "kernel=\"2,2,2\" strides=\"2,2,2\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 8, 5, 6, 7, 4) },
	      { "1,1,1,1,1" } });
	EXPECT_OUT(0, F32, 0, 8);
	/*
	 * pads_begin 1, exclude-pad: output (0,0,0) sees only x[0,0,0] = 1,
	 * output (1,1,1) all eight (mean 4.5); output (0,1,1) the four with
	 * d = 0: (1 + 2 + 3 + 4) / 4
	 */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2,2\" strides=\"1,1,1\" pads_begin=\"1,1,1\" pads_end=\"0,0,0\" exclude-pad=\"true\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5);
	/* without exclude-pad the divisor is 8 everywhere */
	RUN({ "AvgPool", "opset1",
	      "kernel=\"2,2,2\" strides=\"1,1,1\" pads_begin=\"1,1,1\" pads_end=\"0,0,0\" exclude-pad=\"false\" rounding_type=\"floor\"",
	      { P("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1.0 / 8, 3.0 / 8, 4.0 / 8, 10.0 / 8,
		   6.0 / 8, 14.0 / 8, 16.0 / 8, 36.0 / 8);
	/* one input pixel of 2 scatters the kernel 1..8 times 2 */
	RUN({ "ConvolutionBackpropData", "opset1",
	      "strides=\"1,1,1\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,1,1,1", 2),
		C("f32", "1,1,2,2,2", 1, 2, 3, 4, 5, 6, 7, 8) },
	      { "1,1,2,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, 4, 6, 8, 10, 12, 14, 16);
	/* stride 2 places two input pixels' kernels side by side */
	RUN({ "ConvolutionBackpropData", "opset1",
	      "strides=\"1,1,2\" dilations=\"1,1,1\" pads_begin=\"0,0,0\" pads_end=\"0,0,0\"",
	      { P("f32", "1,1,1,1,2", 1, 10),
		C("f32", "1,1,1,1,2", 1, 2) },
	      { "1,1,1,1,4" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 2, 10, 20);
}

/* ---- shapes that depend on input values -------------------------------- */

/*
 * The shape-deciding input is a Parameter, so the compiled model leaves
 * the output shape open and every inference infers it from the values;
 * .again runs the same request a second time with other values, which
 * must change the shape GET_TENSOR reports (and grow or shrink the
 * output).  Expected values follow from the op specifications.
 */
TEST_F(ops, runtime_reshape_target)
{
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
	      { "3,2" } });
	EXPECT_DIMS(0, 3, 2);
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5);
	/* -1 takes the rest: [6, 1] */
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
	      { "3,2" }, .again = { NULL, V(6, -1) } });
	EXPECT_DIMS(0, 6, 1);
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5);
	/* special_zero copies dim 0 of an empty input: [0, 5] */
	RUN({ "Reshape", "opset1", "special_zero=\"true\"",
	      { P0("f32", "0,2"), P("i64", "2", 0, 5) }, { "0,5" } });
	EXPECT_DIMS(0, 0, 5);
	EXPECT_OUT(0, F32, 0);
	/* the element count must still match, now at inference time */
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 4, 2) },
	      { "4,2" } });
	EXPECT_FAIL("Reshape", -EINVAL, "elements");
}

TEST_F(ops, runtime_slice_bounds)
{
	/* [1:4:2] of 0..4, then reversed whole with clamped bounds */
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), P("i64", "1", 1),
		P("i64", "1", 4), P("i64", "1", 2) },
	      { "2" } });
	EXPECT_DIMS(0, 2);
	EXPECT_OUT(0, F32, 0, 1, 3);
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), P("i64", "1", 1),
		P("i64", "1", 4), P("i64", "1", 2) },
	      { "2" },
	      .again = { NULL, V(-1), V(-100), V(-1) } });
	EXPECT_DIMS(0, 5);
	EXPECT_OUT(0, F32, 0, 4, 3, 2, 1, 0);
	/* start past stop: an empty result */
	RUN({ "Slice", "opset8", NULL,
	      { P("f32", "5", 0, 1, 2, 3, 4), P("i64", "1", 3),
		P("i64", "1", 1), P("i64", "1", 1) },
	      { "0" } });
	EXPECT_DIMS(0, 0);
	EXPECT_OUT(0, F32, 0);
}

TEST_F(ops, runtime_tile_range_broadcast)
{
	/* repeats 1, then 3: the output grows from 2 to 6 elements */
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 1) }, { "2" },
	      .again = { NULL, V(3) } });
	EXPECT_DIMS(0, 6);
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 1, 2);
	/* ceil((1 - 0) / .25) = 4 elements, then ceil(.5 / .25) = 2 */
	RUN({ "Range", "opset4", "output_type=\"f32\"",
	      { P("f32", "", 0), P("f32", "", 1), P("f32", "", 0.25) },
	      { "4" }, { "f32" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.25, 0.5, 0.75);
	RUN({ "Range", "opset4", "output_type=\"f32\"",
	      { P("f32", "", 0), P("f32", "", 1), P("f32", "", 0.25) },
	      { "4" }, { "f32" }, .again = { NULL, V(0.5) } });
	EXPECT_DIMS(0, 2);
	EXPECT_OUT(0, F32, 1e-6, 0, 0.25);
	/* numpy broadcast of [1, 3] to a target of [2, 3] */
	RUN({ "Broadcast", "opset3", "mode=\"numpy\"",
	      { P("f32", "1,3", 1, 2, 3), P("i64", "2", 2, 3) }, { "2,3" } });
	EXPECT_DIMS(0, 2, 3);
	EXPECT_OUT(0, F32, 0, 1, 2, 3, 1, 2, 3);
}

/* requests of one compiled model keep their own shapes */
TEST_F(ops, runtime_shapes_per_request)
{
	RUN({ "Reshape", "opset1", "special_zero=\"false\"",
	      { P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
	      { "3,2" }, .again = { NULL, V(1, 6) },
	      .other_request = true });
	EXPECT_DIMS(0, 3, 2);
	EXPECT_OUT(0, F32, 0, 0, 1, 2, 3, 4, 5);
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 3) }, { "6" },
	      .again = { NULL, V(1) }, .other_request = true });
	EXPECT_DIMS(0, 6);
	EXPECT_OUT(0, F32, 0, 1, 2, 1, 2, 1, 2);
	/* a size from the values beyond what a request may allocate */
	RUN({ "Tile", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 1e12) }, { "2" } });
	EXPECT_FAIL("Tile", -EFBIG, "bytes");
}

/*
 * Two threads run their own requests of one compiled model at the same
 * time, each switching between two targets every inference: every run
 * must report its own shape and values (the per-request copies of the
 * graph keep the threads apart).
 */
struct reshape_worker {
	int fd;
	__u32 exec;
	const struct top *op;
	int64_t want[2][2];	/* dims of the first and the .again run */
	int bad;
	struct tres r;
};

static void *reshape_worker(void *arg)
{
	struct reshape_worker *w = arg;
	struct npr_req_create rc;
	int k, i;

	npr_prep_req_create(&rc, w->exec);
	if (npr_ioctl(w->fd, NPR_IOCTL_REQ_CREATE, &rc)) {
		w->bad++;
		return NULL;
	}
	for (k = 0; k < 40; k++) {
		bool again = k & 1;

		if (infer_once(w->fd, w->op, 2, 1, rc.req, again, &w->r) ||
		    w->r.rank[0] != 2 || w->r.n[0] != 6 ||
		    w->r.dims[0][0] != w->want[again][0] ||
		    w->r.dims[0][1] != w->want[again][1]) {
			w->bad++;
			continue;
		}
		for (i = 0; i < 6; i++)
			w->bad += w->r.v[0][i] != i;
	}
	return NULL;
}

TEST_F(ops, runtime_shapes_concurrent_requests)
{
	const struct top op = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
		{ "3,2" }, .again = { NULL, V(1, 6) } };
	const struct top op2 = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 6, 1) },
		{ "3,2" }, .again = { NULL, V(2, 3) } };
	struct reshape_worker *w = calloc(2, sizeof(*w));
	pthread_t t[2];
	__u32 exec;
	int i;

	ASSERT_NE(w, NULL);
	ASSERT_EQ(compile_op(self->fd, &op, &exec, &self->r), 0);
	for (i = 0; i < 2; i++) {
		w[i].fd = self->fd;
		w[i].exec = exec;
		w[i].op = i ? &op2 : &op;
	}
	w[0].want[0][0] = 3; w[0].want[0][1] = 2;
	w[0].want[1][0] = 1; w[0].want[1][1] = 6;
	w[1].want[0][0] = 6; w[1].want[0][1] = 1;
	w[1].want[1][0] = 2; w[1].want[1][1] = 3;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, reshape_worker, &w[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(w[0].bad, 0);
	EXPECT_EQ(w[1].bad, 0);
	free(w);
}

/*
 * The port of such an output: no rank before inference, no shape to read
 * before the first, and no caller memory to bind (its size varies); the
 * compiled model does not export.
 */
TEST_F(ops, runtime_shape_port)
{
	const struct top op = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
		{ "3,2" } };
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_port_info pi;
	float buf[6] = { 0 };
	__u32 exec;

	ASSERT_EQ(compile_op(self->fd, &op, &exec, &self->r), 0);
	npr_prep_port_info(&pi, exec, 0, 1, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	EXPECT_EQ(pi.rank, 0);
	EXPECT_EQ(pi.dims[0], -1);
	EXPECT_EQ(pi.elem_type, NPR_ELEM_F32);
	npr_prep_req_create(&rc, exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	npr_prep_tensor(&ta, rc.req, 0, 1, buf, sizeof(buf));
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), -ENODATA);
	npr_prep_tensor(&ta, rc.req, 0, 1, buf, sizeof(buf));
	ta.flags |= NPR_TENSOR_BIND;
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 3;
	ta.dims[1] = 2;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), -EOPNOTSUPP);
	/* no blob of it yet */
	{
		struct npr_export ex = { .size = sizeof(ex), .exec = exec };

		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ex),
			  -EOPNOTSUPP);
	}
	/* after an inference: the shape, and -EMSGSIZE with the size */
	ASSERT_EQ(infer_once(self->fd, &op, 2, 1, rc.req, false, &self->r), 0);
	npr_prep_tensor(&ta, rc.req, 0, 1, buf, 8);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), -EMSGSIZE);
	EXPECT_EQ(ta.bytes, 24);
	EXPECT_EQ(ta.rank, 2);
	EXPECT_EQ(ta.dims[0], 3);
	EXPECT_EQ(ta.dims[1], 2);
}

/* devices without run-time shape inference refuse such models */
TEST_F(ops, runtime_shapes_need_the_cpu_device)
{
	const struct top op = {
		"Reshape", "opset1", "special_zero=\"false\"",
		{ P("f32", "2,3", 0, 1, 2, 3, 4, 5), P("i64", "2", 3, 2) },
		{ "3,2" } };
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	run(fd, &op, &self->r);
	npr_close(fd);
	EXPECT_FAIL("Reshape", -EOPNOTSUPP, "depends on input values");
}

TEST_F(ops, runtime_axes_and_k)
{
	RUN({ "Unsqueeze", "opset1", NULL,
	      { P("f32", "2", 1, 2), P("i64", "1", 0) }, { "1,2" },
	      .again = { NULL, V(-1) } });
	EXPECT_DIMS(0, 2, 1);
	EXPECT_OUT(0, F32, 0, 1, 2);
	RUN({ "Squeeze", "opset1", NULL,
	      { P("f32", "1,2,1", 1, 2), P("i64", "1", 0) }, { "2,1" } });
	EXPECT_DIMS(0, 2, 1);
	/* sum over axis 1 of [[1, 2], [3, 4]], then over axis 0 */
	RUN({ "ReduceSum", "opset1", "keep_dims=\"false\"",
	      { P("f32", "2,2", 1, 2, 3, 4), P("i64", "1", 1) }, { "2" },
	      .again = { NULL, V(0) } });
	EXPECT_DIMS(0, 2);
	EXPECT_OUT(0, F32, 0, 4, 6);
	/* the two largest of [3, 1, 4, 2], then the three largest */
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "4", 3, 1, 4, 2), P("i64", "", 2) },
	      { "2", "2" }, { "f32", "i32" } });
	EXPECT_OUT(0, F32, 0, 4, 3);
	EXPECT_OUT(1, I32, 0, 2, 0);
	RUN({ "TopK", "opset3", "axis=\"0\" mode=\"max\" sort=\"value\"",
	      { P("f32", "4", 3, 1, 4, 2), P("i64", "", 2) },
	      { "2", "2" }, { "f32", "i32" }, .again = { NULL, V(3) } });
	EXPECT_DIMS(1, 3);
	EXPECT_OUT(0, F32, 0, 4, 3, 2);
	EXPECT_OUT(1, I32, 0, 2, 0, 3);
}

TEST_F(ops, runtime_interpolate_sizes_and_nms_boxes)
{
	/*
	 * nearest, half_pixel, round_prefer_floor: for 4 outputs from 2 the
	 * source coordinates are -.25, .25, .75, 1.25 -> 0, 0, 1, 1; for 3,
	 * -.17, .5, 1.17 -> 0, 0 (a tie rounds down), 1
	 */
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), P("i64", "1", 4), C("f32", "1", 1),
		C("i64", "1", 0) },
	      { "4" } });
	EXPECT_DIMS(0, 4);
	EXPECT_OUT(0, F32, 0, 1, 1, 2, 2);
	RUN({ "Interpolate", "opset4",
	      "mode=\"nearest\" shape_calculation_mode=\"sizes\"",
	      { P("f32", "2", 1, 2), P("i64", "1", 4), C("f32", "1", 1),
		C("i64", "1", 0) },
	      { "4" }, .again = { NULL, V(3) } });
	EXPECT_DIMS(0, 3);
	EXPECT_OUT(0, F32, 0, 1, 1, 2);
	/* max_output_boxes_per_class from a Parameter: as with a constant */
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { NMS_BOXES, NMS_SCORES, P("i64", "", 3), C("f32", "", 0.5),
		C("f32", "", 0) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" } });
	EXPECT_DIMS(0, 3, 3);
	EXPECT_OUT(0, I64, 0, 0, 0, 3, 0, 0, 0, 0, 0, 5);
	EXPECT_OUT(2, I64, 0, 3);
	RUN({ "NonMaxSuppression", "opset5", NULL,
	      { NMS_BOXES, NMS_SCORES, P("i64", "", 3), C("f32", "", 0.5),
		C("f32", "", 0) },
	      { "3,3", "3,3", "1" }, { "i64", "f32", "i64" },
	      .again = { NULL, NULL, V(1) } });
	EXPECT_DIMS(0, 1, 3);
	EXPECT_OUT(0, I64, 0, 0, 0, 3);
}

/* ---- ROIAlign-3/-9 ---------------------------------------------------- */

TEST_F(ops, roi_align_avg_max_and_aligned_modes)
{
	/*
	 * Map x[i][j] = 4 i + j is linear, so every bilinear sample is
	 * 4 y + x.  ROI (0,0)-(3,3), one bin, 2x2 samples at .75 and 2.25:
	 * mean 4 * 1.5 + 1.5 = 7.5, max 4 * 2.25 + 2.25 = 11.25.
	 */
	RUN({ "ROIAlign", "opset3",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\"",
	      { MAP16, C("f32", "1,4", 0, 0, 3, 3), C("i32", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-5, 7.5);
	RUN({ "ROIAlign", "opset3",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"max\"",
	      { MAP16, C("f32", "1,4", 0, 0, 3, 3), C("i32", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-5, 11.25);
	/* 2x2 bins of 1.5, one sample each at .75 and 2.25 */
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"2\" pooled_w=\"2\" sampling_ratio=\"1\" spatial_scale=\"1\" mode=\"avg\" aligned_mode=\"asymmetric\"",
	      { MAP16, C("f32", "1,4", 0, 0, 3, 3), C("i64", "1", 0) },
	      { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-5, 3.75, 5.25, 9.75, 11.25);
	/*
	 * half_pixel: (0,0)-(4,4) maps to (0,0)-(4,4) - .5 + .5 = (0,0)-
	 * (4,4); samples at 1 and 3 (3 is the last row and column):
	 * mean 4 * 2 + 2 = 10.
	 */
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\" aligned_mode=\"half_pixel\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), C("i64", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-5, 10);
	RUN({ "ROIAlign", "opset3",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\" aligned_mode=\"half_pixel\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), C("i64", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_FAIL("ROIAlign", -EINVAL, "aligned_mode");
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), P("i64", "1", 1) },
	      { "1,1,1,1" } });
	EXPECT_FAIL("ROIAlign", -EINVAL, "batch index 1");
	RUN({ "ROIAlign", "opset9",
	      "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"mean\"",
	      { MAP16, C("f32", "1,4", 0, 0, 4, 4), C("i64", "1", 0) },
	      { "1,1,1,1" } });
	EXPECT_FAIL("ROIAlign", -EINVAL, "mode");
}

/* ---- trigonometric, SoftSign, HardSigmoid, Selu, LogSoftmax, LRN ------ */

TEST_F(ops, trigonometric_and_softsign)
{
	RUN({ "Sin", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, sin(0.5));
	RUN({ "Cos", "opset1", NULL, { P("f32", "2", 0, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, cos(0.5));
	RUN({ "Tan", "opset1", NULL, { P("f32", "1", 0.5) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, tan(0.5));
	RUN({ "Asin", "opset1", NULL, { P("f32", "2", 1, 0.5) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, M_PI / 2, asin(0.5));
	RUN({ "Acos", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, 0);
	RUN({ "Atan", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, M_PI / 4);
	RUN({ "Sinh", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, sinh(1.0));
	RUN({ "Cosh", "opset1", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, cosh(1.0));
	RUN({ "Asinh", "opset4", NULL, { P("f32", "1", 1) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, asinh(1.0));
	RUN({ "Acosh", "opset4", NULL, { P("f32", "1", 2) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, acosh(2.0));
	RUN({ "Atanh", "opset4", NULL, { P("f32", "1", 0.5) }, { "1" } });
	EXPECT_OUT(0, F32, 1e-6, atanh(0.5));
	/* x / (1 + |x|) */
	RUN({ "SoftSign", "opset9", NULL, { P("f32", "2", -1, 3) }, { "2" } });
	EXPECT_OUT(0, F32, 1e-6, -0.5, 0.75);
	/* integer input: rounded result, sin(2) = .909 -> 1 */
	RUN({ "Sin", "opset1", NULL, { P("i32", "2", 0, 2) }, { "2" } });
	EXPECT_OUT(0, I32, 0, 0, 1);
}

TEST_F(ops, hard_sigmoid_selu_log_softmax)
{
	/* max(0, min(1, .2 x + .5)) */
	RUN({ "HardSigmoid", "opset1", NULL,
	      { P("f32", "3", -3, 0, 3), C("f32", "", 0.2), C("f32", "", 0.5) },
	      { "3" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0.5, 1);
	/* lambda (x > 0 ? x : alpha (e^x - 1)) */
	RUN({ "Selu", "opset1", NULL,
	      { P("f32", "2", -1, 2), C("f32", "1", 1.5), C("f32", "1", 2) },
	      { "2" } });
	EXPECT_OUT(0, F32, 1e-6, 2 * 1.5 * (exp(-1.0) - 1), 4);
	RUN({ "HardSigmoid", "opset1", NULL,
	      { P("f32", "3", -3, 0, 3), C("f32", "2", 0.2, 0.1),
		C("f32", "", 0.5) },
	      { "3" } });
	EXPECT_FAIL("HardSigmoid", -EINVAL, "input 1");
	/* x - max - log(sum(exp(x - max))) */
	RUN({ "LogSoftmax", "opset5", "axis=\"-1\"",
	      { P("f32", "2,3", 0, 0, 0, 1, 2, 3) }, { "2,3" } });
	EXPECT_OUT(0, F32, 1e-5, -log(3.0), -log(3.0), -log(3.0),
		   -2 - log(exp(-2.0) + exp(-1.0) + 1),
		   -1 - log(exp(-2.0) + exp(-1.0) + 1),
		   -log(exp(-2.0) + exp(-1.0) + 1));
	RUN({ "LogSoftmax", "opset5", "axis=\"2\"",
	      { P("f32", "2,3", 0, 0, 0, 1, 2, 3) }, { "2,3" } });
	EXPECT_FAIL("LogSoftmax", -EINVAL, "axis 2");
}

TEST_F(ops, lrn_across_channels)
{
	/*
	 * Channels 1 2 3, size 3, alpha / size = 1, beta 1, bias 1: windows
	 * {1 2}, {1 2 3}, {2 3}: 1 / (1 + 5), 2 / (1 + 14), 3 / (1 + 13).
	 */
	RUN({ "LRN", "opset1", "alpha=\"3\" beta=\"1\" bias=\"1\" size=\"3\"",
	      { P("f32", "1,3,1,1", 1, 2, 3), C("i64", "1", 1) },
	      { "1,3,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 1.0 / 6, 2.0 / 15, 3.0 / 14);
	/* over H and W: alpha / size^2 = 1, a 2x2 map, windows of 3x3 */
	RUN({ "LRN", "opset1", "alpha=\"9\" beta=\"1\" bias=\"0\" size=\"3\"",
	      { P("f32", "1,1,2,2", 1, 1, 1, 1), C("i64", "2", 2, 3) },
	      { "1,1,2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25, 0.25, 0.25, 0.25);
	RUN({ "LRN", "opset1", "alpha=\"3\" beta=\"1\" bias=\"1\"",
	      { P("f32", "1,3,1,1", 1, 2, 3), C("i64", "1", 1) },
	      { "1,3,1,1" } });
	EXPECT_FAIL("LRN", -EINVAL, "size");
}

/* ---- ReverseSequence-1 ------------------------------------------------ */

TEST_F(ops, reverse_sequence_batch_and_seq_axes)
{
	/* rows [1 2 3], [4 5 6]; lengths 2, 3: [2 1 3], [6 5 4] */
	RUN({ "ReverseSequence", "opset1", "batch_axis=\"0\" seq_axis=\"1\"",
	      { P("f32", "2,3", 1, 2, 3, 4, 5, 6), C("i32", "2", 2, 3) },
	      { "2,3" } });
	EXPECT_OUT(0, F32, 0, 2, 1, 3, 6, 5, 4);
	/*
	 * Time along axis 0, batch along (negative) axis -1: columns
	 * (1 2 3) and (4 5 6) with lengths 3 and 1 give (3 2 1), (4 5 6).
	 */
	RUN({ "ReverseSequence", "opset1", "batch_axis=\"-1\" seq_axis=\"0\"",
	      { P("i64", "3,2", 1, 4, 2, 5, 3, 6), C("i64", "2", 3, 1) },
	      { "3,2" } });
	EXPECT_OUT(0, I64, 0, 3, 4, 2, 5, 1, 6);
	/* length 0 leaves the row alone */
	RUN({ "ReverseSequence", "opset1", NULL,
	      { P("f32", "1,2", 7, 8), P("i32", "1", 0) }, { "1,2" } });
	EXPECT_OUT(0, F32, 0, 7, 8);
}

TEST_F(ops, reverse_sequence_errors)
{
	RUN({ "ReverseSequence", "opset1", "batch_axis=\"1\" seq_axis=\"1\"",
	      { P0("f32", "2,3"), C("i32", "3", 1, 1, 1) }, { "2,3" } });
	EXPECT_FAIL("ReverseSequence", -EINVAL, "both");
	RUN({ "ReverseSequence", "opset1", NULL,
	      { P0("f32", "2,3"), C("i32", "3", 1, 1, 1) }, { "2,3" } });
	EXPECT_FAIL("ReverseSequence", -EINVAL, "seq_lengths");
	/* a length longer than the sequence fails the inference */
	RUN({ "ReverseSequence", "opset1", NULL,
	      { P0("f32", "2,3"), P("i32", "2", 1, 4) }, { "2,3" } });
	EXPECT_FAIL("ReverseSequence", -EINVAL, "seq_lengths[1] = 4");
}

/* ---- BitwiseLeftShift-15, BitwiseRightShift-15 ------------------------ */

TEST_F(ops, bitwise_shifts)
{
	/* 16 << 1, 4 << 2, 1 << 3 and the other way */
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P("u8", "3", 16, 4, 1), P("u8", "3", 1, 2, 3) }, { "3" },
	      { "u8" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 32, 16, 8);
	RUN({ "BitwiseRightShift", "opset15", NULL,
	      { P("u8", "3", 16, 4, 1), P("u8", "3", 1, 2, 3) }, { "3" },
	      { "u8" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 8, 1, 0);
	/* bits shifted out of a u8 are lost; 8 or more gives 0 */
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P("u8", "2", 255, 255), P("u8", "2", 1, 8) }, { "2" },
	      { "u8" } });
	EXPECT_OUT(0, NPR_ELEM_U8, 0, 254, 0);
	/* signed right shifts are arithmetic; broadcast a [1] amount */
	RUN({ "BitwiseRightShift", "opset15", NULL,
	      { P("i32", "2,2", -8, 8, -1, 7), P("i32", "1", 1) },
	      { "2,2" } });
	EXPECT_OUT(0, I32, 0, -4, 4, -1, 3);
	/* out-of-range amounts: 0, or the sign for a negative value */
	RUN({ "BitwiseRightShift", "opset15", NULL,
	      { P("i32", "3", -8, 8, -8), P("i32", "3", 32, 40, -1) },
	      { "3" } });
	EXPECT_OUT(0, I32, 0, -1, 0, -1);
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P("u64", "2", 1, 3), P("u64", "2", 40, 64) }, { "2" },
	      { "u64" } });
	EXPECT_OUT(0, NPR_ELEM_U64, 0, 1099511627776.0, 0);
}

TEST_F(ops, bitwise_shift_errors)
{
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P0("f32", "2"), P0("f32", "2") }, { "2" } });
	EXPECT_FAIL("BitwiseLeftShift", -EINVAL, "integers");
	RUN({ "BitwiseLeftShift", "opset15", NULL,
	      { P0("i32", "2"), P0("i64", "2") }, { "2" } });
	EXPECT_FAIL("BitwiseLeftShift", -EINVAL, "one type");
	RUN({ "BitwiseRightShift", "opset15", "auto_broadcast=\"none\"",
	      { P0("i32", "2"), P0("i32", "1") }, { "2" } });
	EXPECT_FAIL("BitwiseRightShift", -EINVAL, "do not match");
}

/* ---- GridSample-9 ----------------------------------------------------- */

TEST_F(ops, grid_sample_modes_and_padding)
{
	/* data [[1 2] [3 4]] */
#define GS_DATA	P("f32", "1,1,2,2", 1, 2, 3, 4)
	/* align_corners: (0, 0) is the centre of the map: the mean 2.5 */
	RUN({ "GridSample", "opset9", "align_corners=\"true\"",
	      { GS_DATA, P("f32", "1,1,1,2", 0, 0) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 2.5);
	/*
	 * Without: (-1, -1) is the outer corner, x = y = -0.5; bilinear
	 * weighs 0.25 each of pixels (-1,-1), (-1,0), (0,-1), (0,0): zeros
	 * padding gives 0.25 * 1, border padding 1.
	 */
	RUN({ "GridSample", "opset9", NULL,
	      { GS_DATA, P("f32", "1,1,1,2", -1, -1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 0.25);
	RUN({ "GridSample", "opset9", "padding_mode=\"border\"",
	      { GS_DATA, P("f32", "1,1,1,2", -1, -1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 1e-6, 1);
	/*
	 * nearest, align_corners: (0.4, -0.9) is x 0.7, y 0.05: pixel (0, 1)
	 * = 2; (0, 0) is x = y = 0.5, which rounds half to even: pixel 1.
	 */
	RUN({ "GridSample", "opset9", "mode=\"nearest\" align_corners=\"true\"",
	      { GS_DATA, P("f32", "1,2,1,2", 0.4, -0.9, 0, 0) },
	      { "1,1,2,1" } });
	EXPECT_OUT(0, F32, 0, 2, 1);
	/* reflection, align_corners: x = 2 reflects about 1 onto 0 */
	RUN({ "GridSample", "opset9",
	      "mode=\"nearest\" padding_mode=\"reflection\" align_corners=\"true\"",
	      { GS_DATA, P("f32", "1,1,1,2", 3, -1) }, { "1,1,1,1" } });
	EXPECT_OUT(0, F32, 0, 1);
	/* bicubic weights sum to 1: a constant map stays constant */
	RUN({ "GridSample", "opset9", "mode=\"bicubic\" padding_mode=\"border\"",
	      { P("f32", "1,1,2,2", 5, 5, 5, 5),
		P("f32", "1,1,2,2", 0.3, -0.2, -0.7, 0.9) }, { "1,1,1,2" } });
	EXPECT_OUT(0, F32, 1e-5, 5, 5);
#undef GS_DATA
}

TEST_F(ops, grid_sample_errors)
{
	RUN({ "GridSample", "opset9", NULL,
	      { P0("f32", "1,1,2,2"), P0("f32", "1,1,1,3") }, { "1,1,1,1" } });
	EXPECT_FAIL("GridSample", -EINVAL, "grid");
	RUN({ "GridSample", "opset9", NULL,
	      { P0("i32", "1,1,2,2"), P0("f32", "1,1,1,2") }, { "1,1,1,1" } });
	EXPECT_FAIL("GridSample", -EINVAL, "must be f32");
	RUN({ "GridSample", "opset9", "mode=\"area\"",
	      { P0("f32", "1,1,2,2"), P0("f32", "1,1,1,2") }, { "1,1,1,1" } });
	EXPECT_FAIL("GridSample", -EINVAL, "area");
}

/* ---- DFT-7, IDFT-7 ---------------------------------------------------- */

TEST_F(ops, dft_and_idft)
{
	/* impulse at 0: all ones; at 1: exp(-2 pi i k / 4) = 1, -i, -1, i */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,4,2", 1, 0, 0, 0, 0, 0, 0, 0,
		  0, 0, 1, 0, 0, 0, 0, 0), C("i64", "1", 1) },
	      { "2,4,2" } });
	EXPECT_OUT(0, F32, 1e-6, 1, 0, 1, 0, 1, 0, 1, 0,
		   1, 0, 0, -1, -1, 0, 0, 1);
	/* IDFT (the conjugate kernel, / N) takes the second one back */
	RUN({ "IDFT", "opset7", NULL,
	      { P("f32", "4,2", 1, 0, 0, -1, -1, 0, 0, 1), C("i64", "1", -1) },
	      { "4,2" } });
	EXPECT_OUT(0, F32, 1e-6, 0, 0, 1, 0, 0, 0, 0, 0);
	/* [1, 1] padded to 4: 1 + exp(-i pi k / 2) = 2, 1 - i, 0, 1 + i */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,2", 1, 0, 1, 0), C("i64", "1", 0),
		C("i64", "1", 4) },
	      { "4,2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, 0, 1, -1, 0, 0, 1, 1);
	/* 2-D over [[1 2] [3 4]]: 10, 1-2+3-4, 1+2-3-4, 1-2-3+4 */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,2,2", 1, 0, 2, 0, 3, 0, 4, 0), C("i64", "2", 0, 1) },
	      { "2,2,2" } });
	EXPECT_OUT(0, F32, 1e-5, 10, 0, -2, 0, -4, 0, 0, 0);
	/* axes fed at run time: [1, 1] over axis 0 gives 2, 0 */
	RUN({ "DFT", "opset7", NULL,
	      { P("f32", "2,2", 1, 0, 1, 0), P("i64", "1", 0) },
	      { "2,2" } });
	EXPECT_OUT(0, F32, 1e-6, 2, 0, 0, 0);
}

TEST_F(ops, dft_errors)
{
	RUN({ "DFT", "opset7", NULL,
	      { P0("f32", "2,3"), C("i64", "1", 0) }, { "2,3" } });
	EXPECT_FAIL("DFT", -EINVAL, "complex");
	RUN({ "DFT", "opset7", NULL,
	      { P0("f32", "2,2"), C("i64", "1", 1) }, { "2,2" } });
	EXPECT_FAIL("DFT", -EINVAL, "axis 1");
	RUN({ "IDFT", "opset7", NULL,
	      { P0("f32", "3,2"), C("i64", "1", 0), C("i64", "1", 0) },
	      { "3,2" } });
	EXPECT_FAIL("IDFT", -EINVAL, "signal_size 0");
}

TEST_HARNESS_MAIN
