/* SPDX-License-Identifier: MIT */
/*
 * Helpers of rnn_test.c and rnn_body_test.c: IR models written in memory
 * layer by layer, a fixture with a cpu device, and a run of the model
 * through the public API with inputs and f32 outputs.
 */
#ifndef RNN_UTIL_H
#define RNN_UTIL_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "xb.h"
#include "npuring.h"

/* ---- building models -------------------------------------------------- */

static inline void begin(struct xb *b)
{
	xb_add(b, "<?xml version=\"1.0\"?>\n<net name=\"t\" version=\"11\">\n<layers>\n");
}

static inline const char *precision(const char *et)
{
	return !strcmp(et, "f32") ? "FP32" : !strcmp(et, "i32") ? "I32" :
	       !strcmp(et, "i64") ? "I64" : !strcmp(et, "f16") ? "FP16" :
	       "BOOL";
}

static inline void param(struct xb *b, int id, const char *et, const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"p%d\" type=\"Parameter\" version=\"opset1\">"
	       "<data shape=\"%s\" element_type=\"%s\"/><output><port id=\"0\" precision=\"%s\">",
	       id, id, dims, et, precision(et));
	xb_dims_n(b, dims, strlen(dims));
	xb_add(b, "</port></output></layer>\n");
}

static inline void konst(struct xb *b, int id, const char *et, const char *dims,
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
static inline int ports(struct xb *b, const char *spec, int first, bool out)
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
static inline int layer_x(struct xb *b, int id, const char *type,
			  const char *ver, const char *data, const char *ins,
			  const char *outs, const char *extra)
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

static inline int layer(struct xb *b, int id, const char *type, const char *ver,
			const char *data, const char *ins, const char *outs)
{
	return layer_x(b, id, type, ver, data, ins, outs, NULL);
}

static inline void result(struct xb *b, int id, const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"r%d\" type=\"Result\" version=\"opset1\">"
	       "<input><port id=\"0\">", id, id);
	xb_dims_n(b, dims, strlen(dims));
	xb_add(b, "</port></input></layer>\n");
}

static inline void edges(struct xb *b)
{
	xb_add(b, "</layers>\n<edges>\n");
}

static inline void edge(struct xb *b, int fl, int fp, int tl, int tp)
{
	xb_add(b, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n",
	       fl, fp, tl, tp);
}

static inline void end(struct xb *b)
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

static inline size_t tin_bytes(const struct tin *t)
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
static inline int run(FIXTURE_DATA(rnn) *self, int nin, const struct tin *in,
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

static inline struct tin f32(int rank, int64_t d0, int64_t d1, int64_t d2,
			     int64_t d3, const float *data)
{
	struct tin t = { .type = NPR_ELEM_F32, .rank = rank,
			 .d = { d0, d1, d2, d3 }, .data = data };

	return t;
}

#define NEAR(a, b) EXPECT_TRUE(fabs((double)(a) - (double)(b)) < 1e-5)

/* Deterministic test data in [-1, 1). */
static inline void fill(float *p, int n, unsigned int seed)
{
	int i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (float)((seed >> 8) % 2000) / 1000.0f - 1.0f;
	}
}

#endif /* RNN_UTIL_H */
