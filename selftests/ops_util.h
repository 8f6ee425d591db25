/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the op-level tests (ops_data_test.c, ops_math_test.c,
 * ops_vision_test.c): one op per model, built as an in-memory IR, loaded,
 * compiled and run through the public npr_ioctl() API on the cpu device;
 * the "ops" fixture with its device, and the checks of outputs and of
 * failures (a clear -errno and a message naming the layer and the op).
 *
 * Expected values come from the worked examples of the OpenVINO operation
 * specifications or are derived by hand in the comments; none was produced
 * by running this library.
 */
#ifndef OPS_UTIL_H
#define OPS_UTIL_H

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

/* ---- NonMaxSuppression inputs (ops_vision_test, ops_data_test) -------- */

/*
 * Six unit boxes [y1, x1, y2, x2] in one row: 1 and 2 overlap 0 with IOU
 * .9 / 1.1 = .818, 4 overlaps 3 as much, 5 stands alone.
 */
#define NMS_BOXES	P("f32", "1,6,4", 0, 0, 1, 1, 0, 0.1, 1, 1.1,	\
			  0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, \
			  0, 100, 1, 101)
#define NMS_SCORES	P("f32", "1,1,6", 0.9, 0.75, 0.6, 0.95, 0.5, 0.3)

#endif /* OPS_UTIL_H */
