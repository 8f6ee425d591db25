// SPDX-License-Identifier: MIT
/*
 * The ONNX frontend, through the public API: the shared ONNX models
 * (torchvision resnet18, squeezenet1_1, mobilenet_v2 and the PaddleOCR
 * direction classifier) run at batch 1 and 4 and match their golden
 * outputs within max|ours - ref| <= 1e-4 * max|ref|; small models built
 * here with the protobuf-c message code run and report their ONNX names;
 * If branches that name values of the graph around them pick the right
 * branch at run time; a Loop carries values, stacks a scan output, reads
 * its iteration number and a value of the enclosing graph, and stops on
 * its body's condition; a Scan walks its input backwards and stacks its
 * output along axis 1, and a batched Scan-8 does so per batch row; a bidirectional RNN and a GRU with and without
 * linear_before_reset match closed forms;
 * broken ones (truncated, random bytes, an unknown op, an initializer
 * whose data does not match its dims, messages nested without end,
 * sub-graphs nested too deep) fail
 * with the documented errno and a message that says what is wrong.
 * A model read from its file refers to its weights in the mapping, and
 * after COMPILE none of the file's pages is mapped in while the results
 * stay bit-identical over a second COMPILE and an EXPORT + IMPORT; f32
 * and f16 weights at an odd offset in the file stay there unaligned and
 * still compute exactly.
 *
 * Models come from $NPR_SHARED/models/onnx; without them those tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/cache.h"
#include "harness.h"
#include "npuring.h"
#include "onnx/onnx.h"
#include "onnx.pb-c.h"

#define TOLERANCE_REL	1e-4

/* ---- helpers ------------------------------------------------------------ */

/* A whole file into a malloc'd buffer; NULL if it cannot be read. */
static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n ? n : 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = n;
out:
	fclose(f);
	return buf;
}

/* $NPR_SHARED/models/onnx/<rel> into @buf; false if it does not fit. */
static bool __attribute__((format(printf, 3, 4)))
onnx_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n, k;

	n = snprintf(buf, len, "%s/models/onnx/", npr_test_shared());
	if (n < 0 || (size_t)n >= len)
		return false;
	va_start(ap, fmt);
	k = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	return k >= 0 && (size_t)k < len - n;
}

static int load_mem(int fd, const void *buf, size_t len, __u32 *handle)
{
	struct npr_model_load a;
	int err;

	npr_prep_model_load_mem(&a, buf, len, NULL, 0);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &a);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

/*
 * The last failure on this thread must be @err with @phrase in its message,
 * as NPR_IOCTL_GET_ERROR reports it.
 */
static void check_error(struct npr_test *_metadata, int fd, int ret, int err,
			const char *phrase)
{
	struct npr_get_error ge;
	char msg[1024] = "";

	memset(&ge, 0, sizeof(ge));
	ge.size = sizeof(ge);
	ge.buf = (uintptr_t)msg;
	ge.len = sizeof(msg);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge), 0);
	TH_LOG("errno %d: %s", ret, msg);
	ASSERT_EQ(ret, err);
	ASSERT_EQ(ge.err, err);
	if (!strstr(msg, phrase)) {
		TH_LOG("the message lacks \"%s\"", phrase);
		ASSERT_TRUE(false);
	}
}

static void port_name(struct npr_test *_metadata, int fd, __u32 handle,
		      int output, char *name, size_t len,
		      struct npr_port_info *pi)
{
	npr_prep_port_info(pi, handle, 0, output, name, len);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PORT_INFO, pi), 0);
}

/* Compile @model with input 0 of shape @dims (rank @rank), create a request. */
/* compile() with INFERENCE_NUM_THREADS @threads unless 0 */
static int compile_t(int fd, __u32 model, const __s64 *dims, int rank,
		     __u32 *exec, __u32 *req, int threads)
{
	struct npr_shape_arg sa = { .index = 0, .rank = rank };
	struct npr_prop_arg props[1];
	struct npr_req_create rc;
	struct npr_compile co;
	int i, err;

	for (i = 0; i < rank; i++)
		sa.dims[i] = dims[i];
	npr_prep_compile(&co, model);
	co.shapes = (uintptr_t)&sa;
	co.num_shapes = 1;
	memset(props, 0, sizeof(props));
	if (threads) {
		props[0].param = NPR_PARAM_INFERENCE_NUM_THREADS;
		props[0].value = threads;
		co.props = (uintptr_t)props;
		co.num_props = 1;
	}
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		return err;
	*exec = co.exec;
	npr_prep_req_create(&rc, co.exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	*req = rc.req;
	return err;
}

static int compile(int fd, __u32 model, const __s64 *dims, int rank,
		   __u32 *exec, __u32 *req)
{
	return compile_t(fd, model, dims, rank, exec, req, 0);
}

/* Set f32 input 0, run, read f32 output 0 (@out_count values). */
static void infer(struct npr_test *_metadata, int fd, __u32 req,
		  const __s64 *dims, int rank, const float *in,
		  size_t in_count, float *out, size_t out_count)
{
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	int i, ret;

	npr_prep_tensor(&ta, req, 0, 0, (void *)in, in_count * sizeof(float));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = rank;
	for (i = 0; i < rank; i++)
		ta.dims[i] = dims[i];
	ret = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
	if (ret)
		TH_LOG("SET_TENSOR: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_infer(&inf, req);
	ret = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, 0, 1, out, out_count * sizeof(float));
	ret = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (ret)
		TH_LOG("GET_TENSOR: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(ta.bytes, out_count * sizeof(float));
}

/*
 * IR version 8, one opset of the default domain: the head of every model
 * built here; @osp[0] is the opset entry to fill.
 */
static void model_head(Onnx__ModelProto *m, Onnx__OperatorSetIdProto **osp,
		       int64_t opset)
{
	m->has_ir_version = 1;
	m->ir_version = 8;
	m->n_opset_import = 1;
	m->opset_import = osp;
	osp[0]->domain = "";
	osp[0]->has_version = 1;
	osp[0]->version = opset;
}

/* ---- small models built here ------------------------------------------- */

/*
 * y = Identity(OP(Add(x, w))): x a [1, 4] f32 input, w a [4] f32
 * initializer.  @op is the middle node's type; w's data is float_data, or
 * raw_data of @raw_bytes bytes when that is not 0.
 */
struct tiny {
	const char *op;
	size_t raw_bytes;
	int64_t opset;
	const char *external;	/* w's data in this file, at offset 8 */
};

static const float tiny_w[4] = { 0.5f, 0.5f, 0.5f, 0.5f };

static void *tiny_model(const struct tiny *t, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__NodeProto nodes[3] = { ONNX__NODE_PROTO__INIT,
				     ONNX__NODE_PROTO__INIT,
				     ONNX__NODE_PROTO__INIT };
	Onnx__NodeProto *np[3] = { &nodes[0], &nodes[1], &nodes[2] };
	Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto *wp[1] = { &w };
	Onnx__ValueInfoProto vi[2] = { ONNX__VALUE_INFO_PROTO__INIT,
				       ONNX__VALUE_INFO_PROTO__INIT };
	Onnx__ValueInfoProto *vin[1] = { &vi[0] }, *vout[1] = { &vi[1] };
	Onnx__TypeProto tp[2] = { ONNX__TYPE_PROTO__INIT,
				  ONNX__TYPE_PROTO__INIT };
	Onnx__TypeProto__Tensor tt[2] = { ONNX__TYPE_PROTO__TENSOR__INIT,
					  ONNX__TYPE_PROTO__TENSOR__INIT };
	Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension d[2] = {
		ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
		ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT };
	Onnx__TensorShapeProto__Dimension *dp[2] = { &d[0], &d[1] };
	static char *add_in[2] = { "x", "w" }, *add_out[1] = { "s" };
	static char *op_in[1] = { "s" }, *op_out[1] = { "r" };
	static char *id_in[1] = { "r" }, *id_out[1] = { "y" };
	static int64_t wdims[1] = { 4 };
	Onnx__StringStringEntryProto ext[3] = {
		ONNX__STRING_STRING_ENTRY_PROTO__INIT,
		ONNX__STRING_STRING_ENTRY_PROTO__INIT,
		ONNX__STRING_STRING_ENTRY_PROTO__INIT };
	Onnx__StringStringEntryProto *extp[3] = { &ext[0], &ext[1], &ext[2] };
	uint8_t raw[64] = { 0 };
	void *buf;
	int i;

	model_head(&m, osp, t->opset ? t->opset : 13);
	m.graph = &g;
	g.name = "tiny";

	nodes[0].op_type = "Add";
	nodes[0].name = "add";
	nodes[0].n_input = 2;
	nodes[0].input = add_in;
	nodes[0].n_output = 1;
	nodes[0].output = add_out;
	nodes[1].op_type = (char *)t->op;
	nodes[1].name = "act";
	nodes[1].n_input = 1;
	nodes[1].input = op_in;
	nodes[1].n_output = 1;
	nodes[1].output = op_out;
	nodes[2].op_type = "Identity";
	nodes[2].n_input = 1;
	nodes[2].input = id_in;
	nodes[2].n_output = 1;
	nodes[2].output = id_out;
	g.n_node = 3;
	g.node = np;

	w.name = "w";
	w.has_data_type = 1;
	w.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	w.n_dims = 1;
	w.dims = wdims;
	if (t->external) {
		ext[0].key = "location";
		ext[0].value = (char *)t->external;
		ext[1].key = "offset";
		ext[1].value = "8";
		ext[2].key = "length";
		ext[2].value = "16";
		w.n_external_data = 3;
		w.external_data = extp;
		w.has_data_location = 1;
		w.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	} else if (t->raw_bytes) {
		memcpy(raw, tiny_w, sizeof(tiny_w));
		w.has_raw_data = 1;
		w.raw_data.len = t->raw_bytes;
		w.raw_data.data = raw;
	} else {
		w.n_float_data = 4;
		w.float_data = (float *)tiny_w;
	}
	g.n_initializer = 1;
	g.initializer = wp;

	d[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	d[0].dim_value = 1;
	d[1].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	d[1].dim_value = 4;
	sh.n_dim = 2;
	sh.dim = dp;
	for (i = 0; i < 2; i++) {
		tt[i].has_elem_type = 1;
		tt[i].elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
		tt[i].shape = &sh;
		tp[i].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		tp[i].tensor_type = &tt[i];
		vi[i].type = &tp[i];
	}
	vi[0].name = "x";
	vi[1].name = "y";
	g.n_input = 1;
	g.input = vin;
	g.n_output = 1;
	g.output = vout;

	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

FIXTURE(onnx) {
	int fd;
	void *buf;
	size_t len;
	__u32 model;
};

FIXTURE_SETUP(onnx)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(onnx)
{
	free(self->buf);
	if (self->fd >= 0)
		npr_close(self->fd);
}

#define LOAD_FAILS(err, phrase)						\
	check_error(_metadata, self->fd,				\
		    load_mem(self->fd, self->buf, self->len, NULL),	\
		    err, phrase)

static void tiny_runs(struct npr_test *_metadata, FIXTURE_DATA(onnx) *self,
		      const struct tiny *t)
{
	static const float x[4] = { 1.0f, -2.0f, 3.0f, -4.0f };
	static const float want[4] = { 1.5f, 0.0f, 3.5f, 0.0f };
	static const __s64 dims[2] = { 1, 4 };
	struct npr_port_info pi;
	__u32 exec, req;
	char name[32];
	float y[4];
	int i;

	self->buf = tiny_model(t, &self->len);
	ASSERT_NONNULL(self->buf);
	ASSERT_EQ(((uint8_t *)self->buf)[0], 0x08);
	ASSERT_EQ(load_mem(self->fd, self->buf, self->len, &self->model), 0);
	port_name(_metadata, self->fd, self->model, 0, name, sizeof(name),
		  &pi);
	EXPECT_STREQ(name, "x");
	port_name(_metadata, self->fd, self->model, 1, name, sizeof(name),
		  &pi);
	EXPECT_STREQ(name, "y");
	EXPECT_EQ(pi.elem_type, NPR_ELEM_F32);
	ASSERT_EQ(compile(self->fd, self->model, dims, 2, &exec, &req), 0);
	infer(_metadata, self->fd, req, dims, 2, x, 4, y, 4);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], want[i]);
}

TEST_F(onnx, tiny_model_with_float_data_runs)
{
	struct tiny t = { .op = "Relu" };

	tiny_runs(_metadata, self, &t);
}

TEST_F(onnx, tiny_model_with_raw_data_runs)
{
	struct tiny t = { .op = "Relu", .raw_bytes = 16 };

	tiny_runs(_metadata, self, &t);
}

TEST_F(onnx, opset_7_model_runs)
{
	struct tiny t = { .op = "Relu", .opset = 7 };

	tiny_runs(_metadata, self, &t);
}

TEST_F(onnx, truncated_protobuf_fails)
{
	struct tiny t = { .op = "Relu" };

	self->buf = tiny_model(&t, &self->len);
	ASSERT_NONNULL(self->buf);
	self->len /= 2;
	LOAD_FAILS(-EINVAL, "malformed ONNX protobuf");
}

TEST_F(onnx, random_bytes_starting_with_0x08_fail)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	uint8_t *p;
	int k, i;

	self->buf = malloc(4096);
	ASSERT_NONNULL(self->buf);
	p = self->buf;
	for (k = 0; k < 200; k++) {
		self->len = 1 + (k * 37) % 4096;
		for (i = 0; i < (int)self->len; i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			p[i] = (uint8_t)s;
		}
		p[0] = 0x08;
		if (!k) {
			LOAD_FAILS(-EINVAL, "malformed ONNX protobuf");
			continue;
		}
		/* whatever the bytes, a clean errno and a message */
		ASSERT_LT(load_mem(self->fd, p, self->len, NULL), 0);
		ASSERT_NE(npr_last_error()[0], 0);
	}
}

TEST_F(onnx, unknown_op_fails_naming_the_node)
{
	struct tiny t = { .op = "Frobnicate" };

	self->buf = tiny_model(&t, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EOPNOTSUPP,
		   "node 1 (act, Frobnicate): unsupported op Frobnicate");
}

TEST_F(onnx, initializer_raw_data_not_matching_dims_fails)
{
	struct tiny t = { .op = "Relu", .raw_bytes = 12 };

	self->buf = tiny_model(&t, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL,
		   "tensor \"w\": raw_data has 12 bytes, but dims [4] of f32 need 16");
}

TEST_F(onnx, unsupported_opset_fails)
{
	struct tiny t = { .op = "Relu", .opset = 99 };

	self->buf = tiny_model(&t, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EOPNOTSUPP, "ONNX opset 99 is not supported");
}

/*
 * Graph -> Node -> Attribute -> Graph -> ... 200 levels deep: refused
 * before protobuf-c (which recurses without a limit) sees it.
 */
TEST_F(onnx, messages_nested_without_end_fail)
{
	enum { DEPTH = 200 };
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto *g = calloc(DEPTH, sizeof(*g));
	Onnx__NodeProto *n = calloc(DEPTH, sizeof(*n));
	Onnx__AttributeProto *a = calloc(DEPTH, sizeof(*a));
	Onnx__NodeProto **np = calloc(DEPTH, sizeof(*np));
	Onnx__AttributeProto **ap = calloc(DEPTH, sizeof(*ap));
	int i;

	ASSERT_TRUE(g && n && a && np && ap);
	for (i = 0; i < DEPTH; i++) {
		onnx__graph_proto__init(&g[i]);
		onnx__node_proto__init(&n[i]);
		onnx__attribute_proto__init(&a[i]);
		np[i] = &n[i];
		ap[i] = &a[i];
		g[i].n_node = 1;
		g[i].node = &np[i];
		n[i].op_type = "If";
		n[i].n_attribute = 1;
		n[i].attribute = &ap[i];
		a[i].name = "then_branch";
		a[i].has_type = 1;
		a[i].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
		a[i].g = i + 1 < DEPTH ? &g[i + 1] : NULL;
	}
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.graph = &g[0];
	self->len = onnx__model_proto__get_packed_size(&m);
	self->buf = malloc(self->len);
	ASSERT_NONNULL(self->buf);
	onnx__model_proto__pack(&m, self->buf);
	free(g);
	free(n);
	free(a);
	free(np);
	free(ap);
	LOAD_FAILS(-EINVAL, "nested more than");
}

/* ---- If: branches that read the enclosing graph ----------------------- */

/* A tensor ValueInfo of @dt and @rank (0..4) dims of 4 (0: a scalar). */
struct vinfo {
	Onnx__ValueInfoProto vi;
	Onnx__TypeProto tp;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto sh;
	Onnx__TensorShapeProto__Dimension d;
	Onnx__TensorShapeProto__Dimension *dp[4];
};

static Onnx__ValueInfoProto *vinfo(struct vinfo *v, const char *name,
				   int dt, int rank)
{
	onnx__value_info_proto__init(&v->vi);
	onnx__type_proto__init(&v->tp);
	onnx__type_proto__tensor__init(&v->tt);
	onnx__tensor_shape_proto__init(&v->sh);
	onnx__tensor_shape_proto__dimension__init(&v->d);
	v->d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	v->d.dim_value = 4;
	v->dp[0] = v->dp[1] = v->dp[2] = v->dp[3] = &v->d;
	v->sh.n_dim = rank;
	v->sh.dim = v->dp;
	v->tt.has_elem_type = 1;
	v->tt.elem_type = dt;
	v->tt.shape = &v->sh;
	v->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	v->tp.tensor_type = &v->tt;
	v->vi.name = (char *)name;
	v->vi.type = &v->tp;
	return &v->vi;
}

/*
 * y = If(c, then: Add(x, x), else: Neg(x)) for x [4] f32 and c a bool
 * scalar, both graph inputs: each branch names x of the graph around it.
 * With @depth > 1 the then branch is again such an If, @depth deep.
 */
static void *if_model(int depth, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	static char *if_in[1] = { "c" }, *x_in[2] = { "x", "x" };
	static char *y_out[1] = { "y" }, *t_out[1] = { "t" };
	static char *e_out[1] = { "e" };
	Onnx__GraphProto *g = calloc(3 * depth, sizeof(*g));
	Onnx__NodeProto *n = calloc(3 * depth, sizeof(*n));
	Onnx__NodeProto **np = calloc(3 * depth, sizeof(*np));
	Onnx__AttributeProto *a = calloc(2 * depth, sizeof(*a));
	Onnx__AttributeProto **ap = calloc(2 * depth, sizeof(*ap));
	struct vinfo *v = calloc(2 * depth + 3, sizeof(*v));
	Onnx__ValueInfoProto **vp = calloc(2 * depth + 3, sizeof(*vp));
	void *buf = NULL;
	int i;

	if (!g || !n || !np || !a || !ap || !v || !vp)
		goto out;
	model_head(&m, osp, 13);
	/* g[3i]: the graph holding If i; g[3i+1], g[3i+2]: its branches */
	for (i = 0; i < depth; i++) {
		Onnx__GraphProto *gi = &g[3 * i], *tb = &g[3 * i + 1];
		Onnx__GraphProto *eb = &g[3 * i + 2];

		onnx__graph_proto__init(gi);
		onnx__graph_proto__init(tb);
		onnx__graph_proto__init(eb);
		onnx__node_proto__init(&n[3 * i]);
		onnx__node_proto__init(&n[3 * i + 1]);
		onnx__node_proto__init(&n[3 * i + 2]);
		onnx__attribute_proto__init(&a[2 * i]);
		onnx__attribute_proto__init(&a[2 * i + 1]);
		np[3 * i] = &n[3 * i];
		np[3 * i + 1] = &n[3 * i + 1];
		np[3 * i + 2] = &n[3 * i + 2];
		ap[2 * i] = &a[2 * i];
		ap[2 * i + 1] = &a[2 * i + 1];
		if (i)	/* the then branch of If i-1 is this If */
			gi = &g[3 * (i - 1) + 1];
		gi->name = "g";
		gi->n_node = 1;
		gi->node = &np[3 * i];
		gi->n_output = 1;
		gi->output = &vp[2 + 2 * i];
		vinfo(&v[2 + 2 * i], i ? "t" : "y",
		      ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
		vp[2 + 2 * i] = &v[2 + 2 * i].vi;
		n[3 * i].op_type = "If";
		n[3 * i].n_input = 1;
		n[3 * i].input = if_in;
		n[3 * i].n_output = 1;
		n[3 * i].output = i ? t_out : y_out;
		n[3 * i].n_attribute = 2;
		n[3 * i].attribute = &ap[2 * i];
		a[2 * i].name = "then_branch";
		a[2 * i].has_type = 1;
		a[2 * i].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
		a[2 * i].g = &g[3 * i + 1];
		a[2 * i + 1].name = "else_branch";
		a[2 * i + 1].has_type = 1;
		a[2 * i + 1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
		a[2 * i + 1].g = eb;
		/* leaf then branch: t = Add(x, x) */
		tb->name = "then";
		tb->n_node = 1;
		tb->node = &np[3 * i + 1];
		tb->n_output = 1;
		tb->output = &vp[2 + 2 * depth];
		n[3 * i + 1].op_type = "Add";
		n[3 * i + 1].n_input = 2;
		n[3 * i + 1].input = x_in;
		n[3 * i + 1].n_output = 1;
		n[3 * i + 1].output = t_out;
		/* else branch: e = Neg(x) */
		eb->name = "else";
		eb->n_node = 1;
		eb->node = &np[3 * i + 2];
		eb->n_output = 1;
		eb->output = &vp[3 + 2 * i];
		vinfo(&v[3 + 2 * i], "e", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		      1);
		vp[3 + 2 * i] = &v[3 + 2 * i].vi;
		n[3 * i + 2].op_type = "Neg";
		n[3 * i + 2].n_input = 1;
		n[3 * i + 2].input = x_in;
		n[3 * i + 2].n_output = 1;
		n[3 * i + 2].output = e_out;
	}
	/* the innermost then branch's output */
	vp[2 + 2 * depth] = vinfo(&v[2 * depth + 2], "t",
				  ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	vp[0] = vinfo(&v[0], "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	vp[1] = vinfo(&v[1], "c", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0);
	g[0].n_input = 2;
	g[0].input = vp;
	m.graph = &g[0];
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
out:
	free(g);
	free(n);
	free(np);
	free(a);
	free(ap);
	free(v);
	free(vp);
	return buf;
}

TEST_F(onnx, if_branches_read_values_of_the_enclosing_graph)
{
	static const float x[4] = { 1.0f, -2.0f, 0.5f, 8.0f };
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	__u32 exec, req;
	float y[4];
	int c, i, ret;

	self->buf = if_model(1, &self->len);
	ASSERT_NONNULL(self->buf);
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (!ret)
		ret = compile(self->fd, self->model, (const __s64[]){ 4 }, 1,
			      &exec, &req);
	if (ret)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(ret, 0);
	for (c = 0; c < 2; c++) {
		uint8_t cond = (uint8_t)c;

		npr_prep_tensor(&ta, req, 0, 0, (void *)x, sizeof(x));
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = 1;
		ta.dims[0] = 4;
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
		npr_prep_tensor(&ta, req, 1, 0, &cond, 1);
		ta.elem_type = NPR_ELEM_BOOLEAN;
		ta.rank = 0;
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
		npr_prep_infer(&inf, req);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
		npr_prep_tensor(&ta, req, 0, 1, y, sizeof(y));
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		for (i = 0; i < 4; i++)
			EXPECT_EQ(y[i], c ? 2 * x[i] : -x[i]);
	}
}

TEST_F(onnx, if_nested_three_deep_runs)
{
	static const float x[4] = { 1.0f, -2.0f, 0.5f, 8.0f };
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	uint8_t cond = 1;
	__u32 exec, req;
	float y[4];
	int i, ret;

	self->buf = if_model(3, &self->len);
	ASSERT_NONNULL(self->buf);
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (!ret)
		ret = compile(self->fd, self->model, (const __s64[]){ 4 }, 1,
			      &exec, &req);
	if (ret)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, 0, 0, (void *)x, sizeof(x));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 1;
	ta.dims[0] = 4;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_tensor(&ta, req, 1, 0, &cond, 1);
	ta.elem_type = NPR_ELEM_BOOLEAN;
	ta.rank = 0;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	npr_prep_tensor(&ta, req, 0, 1, y, sizeof(y));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], 2 * x[i]);
}

TEST_F(onnx, sub_graphs_nested_too_deep_fail)
{
	self->buf = if_model(12, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EFBIG, "sub-graphs are nested more than 8 deep");
}

/* ---- Loop: iteration number, condition, carried and scan values -------- */

/* A node of @op; the arrays must outlive the packing. */
static void mknode(Onnx__NodeProto *n, const char *op, char **in, int nin,
		   char **out, int nout)
{
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->n_input = nin;
	n->input = in;
	n->n_output = nout;
	n->output = out;
}

/* A scalar initializer: i64 @v, or a bool when @is_bool. */
static void mkscalar(Onnx__TensorProto *t, const char *name, int64_t *v,
		     int32_t *b)
{
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	if (b) {
		t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
		t->n_int32_data = 1;
		t->int32_data = b;
	} else {
		t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
		t->n_int64_data = 1;
		t->int64_data = v;
	}
}

/*
 * y_final (, y_scan) = Loop(M, true, y0) over x [4] and y0 [4], graph
 * inputs, with the body
 *   y_out = y_in + x * f32(i)            (x from the enclosing graph)
 *   cond_out = cond_in, or i < 1 when @stop_after_1
 *   y_scan = y_out                        (a scan output, unless stopping)
 */
static void *loop_model(int64_t trips, bool stop_after_1, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__GraphProto body = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__NodeProto loop, bn[5], *lp[1] = { &loop }, *bp[5];
	Onnx__AttributeProto battr, *bap[1] = { &battr };
	Onnx__AttributeProto to, *tap[1] = { &to };
	Onnx__TensorProto init[2], *ip[2] = { &init[0], &init[1] };
	Onnx__TensorProto binit, *bip[1] = { &binit };
	struct vinfo v[10];
	Onnx__ValueInfoProto *gin[2], *gout[2], *bin[3], *bout[3];
	static char *loop_in[3] = { "M", "c", "y0" };
	static char *loop_out[2] = { "y_final", "y_scan" };
	static char *cast_in[1] = { "i" }, *cast_out[1] = { "fi" };
	static char *mul_in[2] = { "x", "fi" }, *mul_out[1] = { "d" };
	static char *add_in[2] = { "y_in", "d" }, *add_out[1] = { "y_out" };
	static char *id_in[1] = { "cond_in" }, *id_out[1] = { "cond_out" };
	static char *less_in[2] = { "i", "one" };
	static char *sc_in[1] = { "y_out" }, *sc_out[1] = { "y_scan_part" };
	static int64_t one = 1;
	static int32_t yes = 1;
	int64_t m_val = trips;
	int nb = 0, i;
	void *buf;

	model_head(&m, osp, 13);
	m.graph = &g;
	g.name = "loop";
	mkscalar(&init[0], "M", &m_val, NULL);
	mkscalar(&init[1], "c", NULL, &yes);
	g.n_initializer = 2;
	g.initializer = ip;
	gin[0] = vinfo(&v[0], "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	gin[1] = vinfo(&v[1], "y0", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	g.n_input = 2;
	g.input = gin;
	gout[0] = vinfo(&v[2], "y_final", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
			1);
	onnx__value_info_proto__init(&v[3].vi);	/* [3, 4]: not declared */
	v[3].vi.name = "y_scan";
	gout[1] = &v[3].vi;
	g.n_output = stop_after_1 ? 1 : 2;
	g.output = gout;
	mknode(&loop, "Loop", loop_in, 3, loop_out, stop_after_1 ? 1 : 2);
	onnx__attribute_proto__init(&battr);
	battr.name = "body";
	battr.has_type = 1;
	battr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	battr.g = &body;
	loop.n_attribute = 1;
	loop.attribute = bap;
	g.n_node = 1;
	g.node = lp;

	body.name = "body";
	bin[0] = vinfo(&v[4], "i", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0);
	bin[1] = vinfo(&v[5], "cond_in", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0);
	bin[2] = vinfo(&v[6], "y_in", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	body.n_input = 3;
	body.input = bin;
	bout[0] = vinfo(&v[7], "cond_out", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
			0);
	bout[1] = vinfo(&v[8], "y_out", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	bout[2] = vinfo(&v[9], "y_scan_part",
			ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	body.n_output = stop_after_1 ? 2 : 3;
	body.output = bout;
	mknode(&bn[nb], "Cast", cast_in, 1, cast_out, 1);
	onnx__attribute_proto__init(&to);
	to.name = "to";
	to.has_type = 1;
	to.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	to.has_i = 1;
	to.i = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	bn[nb].n_attribute = 1;
	bn[nb++].attribute = tap;
	mknode(&bn[nb++], "Mul", mul_in, 2, mul_out, 1);
	mknode(&bn[nb++], "Add", add_in, 2, add_out, 1);
	if (stop_after_1) {
		mkscalar(&binit, "one", &one, NULL);
		body.n_initializer = 1;
		body.initializer = bip;
		mknode(&bn[nb++], "Less", less_in, 2, id_out, 1);
	} else {
		mknode(&bn[nb++], "Identity", id_in, 1, id_out, 1);
		mknode(&bn[nb++], "Identity", sc_in, 1, sc_out, 1);
	}
	for (i = 0; i < nb; i++)
		bp[i] = &bn[i];
	body.n_node = nb;
	body.node = bp;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

/* Run a loop_model() on x, y0; read output @o (@n values). */
static void loop_run(struct npr_test *_metadata, FIXTURE_DATA(onnx) *self,
		     const float *x, const float *y0, int o, float *y,
		     size_t n)
{
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	__u32 exec, req;
	int i, ret;

	ASSERT_NONNULL(self->buf);
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (!ret)
		ret = compile(self->fd, self->model, (const __s64[]){ 4 }, 1,
			      &exec, &req);
	if (ret)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(ret, 0);
	for (i = 0; i < 2; i++) {
		npr_prep_tensor(&ta, req, i, 0, (void *)(i ? y0 : x), 16);
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = 1;
		ta.dims[0] = 4;
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	}
	npr_prep_infer(&inf, req);
	ret = npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, o, 1, y, n * 4);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, n * 4);
}

/*
 * Three trips: y takes y0 + x * 0, + x * 1, + x * 2 in turn, so the
 * final value is y0 + 3x and the scan output stacks y0, y0 + x, y0 + 3x.
 */
TEST_F(onnx, loop_carries_values_and_stacks_scan_outputs)
{
	static const float x[4] = { 1, 10, 100, 1000 }, y0[4] = { 1, 2, 3, 4 };
	float y[12];
	int i;

	self->buf = loop_model(3, false, &self->len);
	loop_run(_metadata, self, x, y0, 0, y, 4);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], y0[i] + 3 * x[i]);
	loop_run(_metadata, self, x, y0, 1, y, 12);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(y[i], y0[i]);
		EXPECT_EQ(y[4 + i], y0[i] + x[i]);
		EXPECT_EQ(y[8 + i], y0[i] + 3 * x[i]);
	}
}

/* The body's condition i < 1 stops a loop of 10 trips after two. */
TEST_F(onnx, loop_stops_on_the_body_condition)
{
	static const float x[4] = { 1, 10, 100, 1000 }, y0[4] = { 1, 2, 3, 4 };
	float y[4];
	int i;

	self->buf = loop_model(10, true, &self->len);
	loop_run(_metadata, self, x, y0, 0, y, 4);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], y0[i] + x[i]);
}

/* ---- Scan: a reverse scan input, a scan output along axis 1 ------------ */

/*
 * y, z = Scan(s0 [4], x [4, 4]) with num_scan_inputs 1, the rows of x
 * taken last first, z stacked along axis 1; body sum_out = sum_in + row,
 * part = sum_out.
 */
static void *scan_model(bool v8, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__GraphProto body = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__NodeProto scan, bn[2], *sp[1] = { &scan };
	Onnx__NodeProto *bp[2] = { &bn[0], &bn[1] };
	Onnx__AttributeProto a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	struct vinfo v[8];
	Onnx__ValueInfoProto *gin[2], *gout[2], *bin[2], *bout[2];
	static char *scan_in[3] = { "", "s0", "x" }, *scan_out[2] = { "y", "z" };
	static char *add_in[2] = { "sum_in", "row" }, *add_out[1] = { "sum_out" };
	static char *id_in[1] = { "sum_out" }, *id_out[1] = { "part" };
	static int64_t one[1] = { 1 };
	void *buf;
	int i;

	model_head(&m, osp, v8 ? 8 : 11);
	m.graph = &g;
	g.name = "scan";
	/* Scan-8: a batch of 4 in front of everything */
	gin[0] = vinfo(&v[0], "s0", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		       1 + v8);
	gin[1] = vinfo(&v[1], "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		       2 + v8);
	g.n_input = 2;
	g.input = gin;
	gout[0] = vinfo(&v[2], "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
			1 + v8);
	gout[1] = vinfo(&v[3], "z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
			2 + v8);
	g.n_output = 2;
	g.output = gout;
	mknode(&scan, "Scan", scan_in + !v8, 2 + v8, scan_out, 2);
	for (i = 0; i < 4; i++) {
		onnx__attribute_proto__init(&a[i]);
		a[i].has_type = 1;
		a[i].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		a[i].n_ints = 1;
		a[i].ints = one;
	}
	a[0].name = "body";
	a[0].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	a[0].n_ints = 0;
	a[0].ints = NULL;
	a[0].g = &body;
	a[1].name = "num_scan_inputs";
	a[1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a[1].n_ints = 0;
	a[1].ints = NULL;
	a[1].has_i = 1;
	a[1].i = 1;
	/* reverse; Scan-8 has no axes: z stacks along axis 1 after batch */
	a[2].name = v8 ? "directions" : "scan_input_directions";
	a[3].name = "scan_output_axes";		/* axis 1 */
	scan.n_attribute = v8 ? 3 : 4;
	scan.attribute = ap;
	g.n_node = 1;
	g.node = sp;
	body.name = "body";
	bin[0] = vinfo(&v[4], "sum_in", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	bin[1] = vinfo(&v[5], "row", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	body.n_input = 2;
	body.input = bin;
	bout[0] = vinfo(&v[6], "sum_out", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
			1);
	bout[1] = vinfo(&v[7], "part", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1);
	body.n_output = 2;
	body.output = bout;
	mknode(&bn[0], "Add", add_in, 2, add_out, 1);
	mknode(&bn[1], "Identity", id_in, 1, id_out, 1);
	body.n_node = 2;
	body.node = bp;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

TEST_F(onnx, scan_reverse_input_and_output_axis_1)
{
	static const float s0[4] = { 1, 2, 3, 4 };
	float x[16], y[4], z[16], acc[4];
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	__u32 exec, req;
	int i, k, ret;

	for (i = 0; i < 16; i++)
		x[i] = (float)(1 << (i / 4)) * (i % 4 + 1);	/* row r: 2^r */
	self->buf = scan_model(false, &self->len);
	ASSERT_NONNULL(self->buf);
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (!ret)
		ret = compile(self->fd, self->model, (const __s64[]){ 4 }, 1,
			      &exec, &req);
	if (ret)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, 0, 0, (void *)s0, sizeof(s0));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 1;
	ta.dims[0] = 4;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_tensor(&ta, req, 1, 0, x, sizeof(x));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = ta.dims[1] = 4;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	npr_prep_tensor(&ta, req, 0, 1, y, sizeof(y));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	npr_prep_tensor(&ta, req, 1, 1, z, sizeof(z));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, sizeof(z));
	/* iteration k adds row 3 - k; z[:, k] is the sum after it */
	memcpy(acc, s0, sizeof(acc));
	for (k = 0; k < 4; k++)
		for (i = 0; i < 4; i++) {
			acc[i] += x[(3 - k) * 4 + i];
			EXPECT_EQ(z[i * 4 + k], acc[i]);
		}
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], acc[i]);
}

/*
 * The same body as a batched Scan-8 over 4 rows: s0 [4, 4], x [4, 4, 4];
 * each row b scans its x[b] backwards, z[b] stacks along axis 0 of the
 * row (axis 1 of z).
 */
TEST_F(onnx, scan8_runs_each_batch_row)
{
	float s0[16], x[64], y[16], z[64], acc[4];
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	__u32 exec, req;
	int i, k, b, ret;

	for (i = 0; i < 16; i++)
		s0[i] = (float)i;
	for (i = 0; i < 64; i++)	/* x[b][r][c] = 2^r * (c + 1) + b */
		x[i] = (float)((1 << (i / 4 % 4)) * (i % 4 + 1) + i / 16);
	self->buf = scan_model(true, &self->len);
	ASSERT_NONNULL(self->buf);
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (!ret)
		ret = compile(self->fd, self->model, (const __s64[]){ 4, 4 }, 2,
			      &exec, &req);
	if (ret)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, 0, 0, s0, sizeof(s0));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = ta.dims[1] = 4;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_tensor(&ta, req, 1, 0, x, sizeof(x));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 3;
	ta.dims[0] = ta.dims[1] = ta.dims[2] = 4;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, req);
	ret = npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, 0, 1, y, sizeof(y));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	npr_prep_tensor(&ta, req, 1, 1, z, sizeof(z));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, sizeof(z));
	for (b = 0; b < 4; b++) {
		memcpy(acc, s0 + 4 * b, sizeof(acc));
		for (k = 0; k < 4; k++)
			for (i = 0; i < 4; i++) {
				acc[i] += x[b * 16 + (3 - k) * 4 + i];
				EXPECT_EQ(z[b * 16 + k * 4 + i], acc[i]);
			}
		for (i = 0; i < 4; i++)
			EXPECT_EQ(y[b * 4 + i], acc[i]);
	}
}

/* ---- recurrent layers: closed forms ------------------------------------ */

/* An f32 initializer (or a graph input when @v is NULL). */
struct tdesc {
	const char *name;
	int rank;
	int64_t dims[3];
	const float *v;
};

/*
 * One @op node over @nin inputs (names from @t, "" for a left-out one),
 * giving outputs "Y" and "Y_h", with integer attributes hidden_size and
 * linear_before_reset and the string attribute direction.  Inputs with
 * values are initializers, the others f32 graph inputs of their dims.
 */
static void *rnn_model(const char *op, const struct tdesc *t, int nin,
		       int64_t hidden, int64_t lbr, const char *dir,
		       size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
	Onnx__NodeProto *np[1] = { &node };
	Onnx__AttributeProto a[3], *ap[3];
	Onnx__TensorProto init[8], *ip[8];
	Onnx__ValueInfoProto vi[10], *vin[8], *vout[2];
	Onnx__TypeProto tp[8];
	Onnx__TypeProto__Tensor tt[8];
	Onnx__TensorShapeProto sh[8];
	Onnx__TensorShapeProto__Dimension d[8][3], *dp[8][3];
	static char *outs[2] = { "Y", "Y_h" };
	char *names[8];
	int i, k, ni = 0, ng = 0;
	void *buf;

	model_head(&m, osp, 14);
	m.graph = &g;
	g.name = "rnn";
	for (i = 0; i < nin; i++) {
		names[i] = (char *)t[i].name;
		if (!*t[i].name)
			continue;
		if (t[i].v) {
			onnx__tensor_proto__init(&init[ni]);
			init[ni].name = (char *)t[i].name;
			init[ni].has_data_type = 1;
			init[ni].data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
			init[ni].n_dims = t[i].rank;
			init[ni].dims = (int64_t *)t[i].dims;
			init[ni].n_float_data = 1;
			for (k = 0; k < t[i].rank; k++)
				init[ni].n_float_data *= t[i].dims[k];
			init[ni].float_data = (float *)t[i].v;
			ip[ni] = &init[ni];
			ni++;
			continue;
		}
		onnx__value_info_proto__init(&vi[ng]);
		onnx__type_proto__init(&tp[ng]);
		onnx__type_proto__tensor__init(&tt[ng]);
		onnx__tensor_shape_proto__init(&sh[ng]);
		for (k = 0; k < t[i].rank; k++) {
			onnx__tensor_shape_proto__dimension__init(&d[ng][k]);
			d[ng][k].value_case =
				ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d[ng][k].dim_value = t[i].dims[k];
			dp[ng][k] = &d[ng][k];
		}
		sh[ng].n_dim = t[i].rank;
		sh[ng].dim = dp[ng];
		tt[ng].has_elem_type = 1;
		tt[ng].elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
		tt[ng].shape = &sh[ng];
		tp[ng].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		tp[ng].tensor_type = &tt[ng];
		vi[ng].name = (char *)t[i].name;
		vi[ng].type = &tp[ng];
		vin[ng] = &vi[ng];
		ng++;
	}
	for (i = 0; i < 2; i++) {
		onnx__value_info_proto__init(&vi[8 + i]);
		vi[8 + i].name = outs[i];
		vout[i] = &vi[8 + i];
	}
	for (i = 0; i < 3; i++) {
		onnx__attribute_proto__init(&a[i]);
		a[i].has_type = 1;
		ap[i] = &a[i];
	}
	a[0].name = "hidden_size";
	a[0].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a[0].has_i = 1;
	a[0].i = hidden;
	a[1].name = "linear_before_reset";
	a[1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a[1].has_i = 1;
	a[1].i = lbr;
	a[2].name = "direction";
	a[2].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
	a[2].has_s = 1;
	a[2].s.data = (uint8_t *)dir;
	a[2].s.len = strlen(dir);
	node.op_type = (char *)op;
	node.n_input = nin;
	node.input = names;
	node.n_output = 2;
	node.output = outs;
	/* linear_before_reset is GRU's only */
	node.n_attribute = strcmp(op, "GRU") ? 2 : 3;
	ap[1] = strcmp(op, "GRU") ? &a[2] : &a[1];
	ap[2] = &a[2];
	node.attribute = ap;
	g.n_node = 1;
	g.node = np;
	g.n_initializer = ni;
	g.initializer = ip;
	g.n_input = ng;
	g.input = vin;
	g.n_output = 2;
	g.output = vout;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

/* Load, compile at X's declared shape, run on @x, read Y and Y_h. */
static void rnn_run(struct npr_test *_metadata, FIXTURE_DATA(onnx) *self,
		    const struct tdesc *xd, const float *x, float *y,
		    size_t ny, float *yh, size_t nyh)
{
	const __s64 dims[3] = { xd->dims[0], xd->dims[1], xd->dims[2] };
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	__u32 exec, req;
	int i, ret;

	ASSERT_NONNULL(self->buf);
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (!ret)
		ret = compile(self->fd, self->model, dims, xd->rank, &exec,
			      &req);
	if (ret)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_tensor(&ta, req, 0, 0, (void *)x,
			xd->dims[0] * xd->dims[1] * xd->dims[2] * 4);
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 3;
	for (i = 0; i < 3; i++)
		ta.dims[i] = xd->dims[i];
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	npr_prep_tensor(&ta, req, 0, 1, y, ny * 4);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, ny * 4);
	npr_prep_tensor(&ta, req, 1, 1, yh, nyh * 4);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, nyh * 4);
}

/*
 * A bidirectional RNN, hidden and input size 1, no B and no initial_h
 * (zeros), x = 1, 2 over time: forward w = 1, reverse w = 0.5, r = 1:
 *   forward  h0 = tanh(1),        h1 = tanh(2 + tanh(1))
 *   reverse  h1 = tanh(0.5 * 2),  h0 = tanh(0.5 * 1 + tanh(1))
 * Y is [T, D, N, S], Y_h [D, N, S] (the last step of each direction).
 */
TEST_F(onnx, rnn_bidirectional_closed_form)
{
	static const float w[2] = { 1, 0.5f }, r[2] = { 1, 1 }, x[2] = { 1, 2 };
	const struct tdesc t[3] = {
		{ "X", 3, { 2, 1, 1 }, NULL },
		{ "W", 3, { 2, 1, 1 }, w },
		{ "R", 3, { 2, 1, 1 }, r },
	};
	double f0 = tanh(1), f1 = tanh(2 + tanh(1));
	double r1 = tanh(1), r0 = tanh(0.5 + tanh(1));
	float y[4], yh[2];

	self->buf = rnn_model("RNN", t, 3, 1, 0, "bidirectional", &self->len);
	rnn_run(_metadata, self, &t[0], x, y, 4, yh, 2);
	EXPECT_NEAR(y[0], f0, 1e-6);
	EXPECT_NEAR(y[1], r0, 1e-6);
	EXPECT_NEAR(y[2], f1, 1e-6);
	EXPECT_NEAR(y[3], r1, 1e-6);
	EXPECT_NEAR(yh[0], f1, 1e-6);
	EXPECT_NEAR(yh[1], r0, 1e-6);
}

/*
 * A GRU step with linear_before_reset, sizes 1, x = 1, h = 0.5:
 *   z = s(Wz x + Rz h + Wbz + Rbz), r = s(Wr x + Rr h + Wbr + Rbr),
 *   h~ = tanh(Wh x + r (Rh h + Rbh) + Wbh), H = (1 - z) h~ + z h
 * with W = .1 .2 .3, R = .4 .5 .6, B = .01 .. .06 (input biases first).
 */
TEST_F(onnx, gru_linear_before_reset_closed_form)
{
	static const float w[3] = { .1f, .2f, .3f }, r[3] = { .4f, .5f, .6f };
	static const float b[6] = { .01f, .02f, .03f, .04f, .05f, .06f };
	static const float h0[1] = { .5f }, x[1] = { 1 };
	const struct tdesc t[6] = {
		{ "X", 3, { 1, 1, 1 }, NULL },
		{ "W", 3, { 1, 3, 1 }, w },
		{ "R", 3, { 1, 3, 1 }, r },
		{ "B", 2, { 1, 6 }, b },
		{ "", 0, { 0 }, NULL },
		{ "initial_h", 3, { 1, 1, 1 }, h0 },
	};
	double z = 1 / (1 + exp(-(.1 + .4 * .5 + .01 + .04)));
	double rr = 1 / (1 + exp(-(.2 + .5 * .5 + .02 + .05)));
	double hh = tanh(.3 + rr * (.6 * .5 + .06) + .03);
	double want = (1 - z) * hh + z * .5;
	float y[1], yh[1];

	self->buf = rnn_model("GRU", t, 6, 1, 1, "forward", &self->len);
	rnn_run(_metadata, self, &t[0], x, y, 1, yh, 1);
	EXPECT_NEAR(y[0], want, 1e-6);
	EXPECT_NEAR(yh[0], want, 1e-6);
	/* the same without linear_before_reset differs: r applies to h */
	free(self->buf);
	self->buf = rnn_model("GRU", t, 6, 1, 0, "forward", &self->len);
	rnn_run(_metadata, self, &t[0], x, y, 1, yh, 1);
	hh = tanh(.3 + .6 * (rr * .5) + .06 + .03);
	EXPECT_NEAR(y[0], (1 - z) * hh + z * .5, 1e-6);
}

/*
 * Write the tiny model with external weights into a new directory:
 * <dir>/tiny.onnx, <dir>/w.bin (8 bytes of padding, then the data).
 */
static void external_model(struct npr_test *_metadata,
			   FIXTURE_DATA(onnx) *self, const char *location,
			   char *dir, char *model, size_t len)
{
	struct tiny t = { .op = "Relu", .external = location };
	static const uint8_t pad[8] = { 0 };
	char path[4096];
	FILE *f;

	snprintf(dir, len, "/tmp/npr_onnx_test.XXXXXX");
	ASSERT_NONNULL(mkdtemp(dir));
	self->buf = tiny_model(&t, &self->len);
	ASSERT_NONNULL(self->buf);
	snprintf(model, len, "%s/tiny.onnx", dir);
	f = fopen(model, "wb");
	ASSERT_NONNULL(f);
	ASSERT_EQ(fwrite(self->buf, 1, self->len, f), self->len);
	fclose(f);
	snprintf(path, sizeof(path), "%s/w.bin", dir);
	f = fopen(path, "wb");
	ASSERT_NONNULL(f);
	ASSERT_EQ(fwrite(pad, 1, 8, f), 8);
	ASSERT_EQ(fwrite(tiny_w, 1, sizeof(tiny_w), f), sizeof(tiny_w));
	fclose(f);
}

static void remove_model(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/tiny.onnx", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/w.bin", dir);
	unlink(path);
	rmdir(dir);
}

TEST_F(onnx, external_data_loads_from_the_model_directory)
{
	static const float x[4] = { 1.0f, -2.0f, 3.0f, -4.0f };
	static const __s64 dims[2] = { 1, 4 };
	struct npr_model_load ml;
	char dir[64], model[128];
	__u32 exec, req;
	float y[4];
	int ret;

	external_model(_metadata, self, "w.bin", dir, model, sizeof(dir));
	npr_prep_model_load(&ml, model, NULL);
	ret = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (ret)
		TH_LOG("MODEL_LOAD: %s", npr_last_error());
	remove_model(dir);
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(compile(self->fd, ml.handle, dims, 2, &exec, &req), 0);
	infer(_metadata, self->fd, req, dims, 2, x, 4, y, 4);
	EXPECT_EQ(y[0], 1.5f);
	EXPECT_EQ(y[1], 0.0f);
	EXPECT_EQ(y[2], 3.5f);
}

TEST_F(onnx, external_data_outside_the_model_directory_is_refused)
{
	struct npr_model_load ml;
	char dir[64], model[128];
	int ret;

	external_model(_metadata, self, "../w.bin", dir, model, sizeof(dir));
	npr_prep_model_load(&ml, model, NULL);
	ret = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	remove_model(dir);
	check_error(_metadata, self->fd, ret, -EINVAL,
		    "is not a relative path inside the model's directory");
}

TEST_F(onnx, external_data_of_a_model_in_memory_is_refused)
{
	struct tiny t = { .op = "Relu", .external = "w.bin" };

	self->buf = tiny_model(&t, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "external data needs the model's directory");
}

/* ---- the shared models ------------------------------------------------- */

#define REQUIRE_SHARED()						\
	do {								\
		if (!npr_test_shared_ok())				\
			SKIP(return, "no shared data at %s (set NPR_SHARED)", \
			     npr_test_shared());			\
	} while (0)

TEST_F(onnx, ports_report_onnx_names_and_symbolic_batch)
{
	struct npr_model_load ml;
	struct npr_port_info pi;
	char path[4096], name[64];

	REQUIRE_SHARED();
	ASSERT_TRUE(onnx_path(path, sizeof(path), "resnet18.onnx"));
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	port_name(_metadata, self->fd, ml.handle, 0, name, sizeof(name), &pi);
	EXPECT_STREQ(name, "input");
	EXPECT_EQ(pi.elem_type, NPR_ELEM_F32);
	ASSERT_EQ(pi.rank, 4);
	EXPECT_EQ(pi.dims[0], -1);
	EXPECT_EQ(pi.dims[1], 3);
	EXPECT_EQ(pi.dims[3], 224);
	port_name(_metadata, self->fd, ml.handle, 1, name, sizeof(name), &pi);
	EXPECT_STREQ(name, "output");
	ASSERT_EQ(pi.rank, 2);
	EXPECT_EQ(pi.dims[0], -1);
	EXPECT_EQ(pi.dims[1], 1000);
}

/* ---- one-node models: NonMaxSuppression, Compress, windows ------------ */

/* An initializer @name of @type (FLOAT, INT64 or BOOL) and @n values. */
static void mktensor(Onnx__TensorProto *t, const char *name, int32_t type,
		     int64_t *dims, int rank, const void *v, int n)
{
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = type;
	t->n_dims = rank;
	t->dims = dims;
	if (type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
		t->n_float_data = n;
		t->float_data = (float *)v;
	} else if (type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
		t->n_int64_data = n;
		t->int64_data = (int64_t *)v;
	} else {
		t->n_int32_data = n;
		t->int32_data = (int32_t *)v;
	}
}

/*
 * y = @op(x, initializers...) at opset 17: x an f32 graph input of
 * @xdims, the node's inputs named in @in (x first or among them), one
 * int attribute @attr = @aval unless @attr is NULL.
 */
struct one_node {
	const char *op;
	const int64_t *xdims;
	int xrank;
	Onnx__TensorProto **init;
	int ninit;
	char **in;
	int nin;
	const char *attr;
	int64_t aval;
};

static void *one_node_model(const struct one_node *o, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__NodeProto node, *np[1] = { &node };
	Onnx__AttributeProto at = ONNX__ATTRIBUTE_PROTO__INIT, *atp[1] = { &at };
	Onnx__ValueInfoProto vi[2] = { ONNX__VALUE_INFO_PROTO__INIT,
				       ONNX__VALUE_INFO_PROTO__INIT };
	Onnx__ValueInfoProto *vin[1] = { &vi[0] }, *vout[1] = { &vi[1] };
	Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension d[NPR_MAX_RANK];
	Onnx__TensorShapeProto__Dimension *dp[NPR_MAX_RANK];
	static char *out[1] = { "y" };
	void *buf;
	int i;

	model_head(&m, osp, 17);
	m.graph = &g;
	g.name = "one_node";
	mknode(&node, o->op, o->in, o->nin, out, 1);
	if (o->attr) {
		at.name = (char *)o->attr;
		at.has_type = 1;
		at.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		at.has_i = 1;
		at.i = o->aval;
		node.n_attribute = 1;
		node.attribute = atp;
	}
	g.n_node = 1;
	g.node = np;
	g.n_initializer = o->ninit;
	g.initializer = o->init;
	for (i = 0; i < o->xrank; i++) {
		onnx__tensor_shape_proto__dimension__init(&d[i]);
		d[i].value_case =
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		d[i].dim_value = o->xdims[i];
		dp[i] = &d[i];
	}
	sh.n_dim = o->xrank;
	sh.dim = dp;
	tt.has_elem_type = 1;
	tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt.shape = &sh;
	tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp.tensor_type = &tt;
	vi[0].name = "x";
	vi[0].type = &tp;
	vi[1].name = "y";
	g.n_input = 1;
	g.input = vin;
	g.n_output = 1;
	g.output = vout;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

/*
 * Load, compile at x's shape, run with @x and read output 0 into @y
 * (@ybytes at most); return its dims in @dims, its rank.
 */
static int one_node_run(struct npr_test *_metadata, FIXTURE_DATA(onnx) *self,
			const struct one_node *o, const float *x, size_t nx,
			void *y, size_t ybytes, __s64 *dims)
{
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	__s64 xd[NPR_MAX_RANK];
	__u32 exec, req;
	int i, ret;

	self->buf = one_node_model(o, &self->len);
	if (!self->buf)
		return -ENOMEM;
	ret = load_mem(self->fd, self->buf, self->len, &self->model);
	if (ret)
		return ret;
	for (i = 0; i < o->xrank; i++)
		xd[i] = o->xdims[i];
	ret = compile(self->fd, self->model, xd, o->xrank, &exec, &req);
	if (ret)
		return ret;
	npr_prep_tensor(&ta, req, 0, 0, (void *)x, nx * sizeof(float));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = o->xrank;
	for (i = 0; i < o->xrank; i++)
		ta.dims[i] = xd[i];
	ret = npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta);
	if (ret)
		return ret;
	npr_prep_infer(&inf, req);
	ret = npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		return ret;
	npr_prep_tensor(&ta, req, 0, 1, y, ybytes);
	ret = npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (ret)
		return ret;
	for (i = 0; i < (int)ta.rank; i++)
		dims[i] = ta.dims[i];
	return (int)ta.rank;
}

/*
 * Three disjoint boxes, scores .9, -.5, -.1 (negative: a threshold of 0
 * would drop them), max_output_boxes_per_class 5 and no iou_threshold or
 * score_threshold: ONNX filters nothing, so all three come out by score.
 * Without max_output_boxes_per_class nothing is selected.
 */
TEST_F(onnx, nms_without_thresholds_keeps_every_box)
{
	static const float boxes[12] = { 0, 0, 1, 1, 0, 10, 1, 11,
					 0, 20, 1, 21 };
	static float scores[3] = { 0.9f, -0.5f, -0.1f };
	static int64_t sdims[3] = { 1, 1, 3 }, mdims[1] = { 1 }, maxo = 5;
	static const int64_t bdims[3] = { 1, 3, 4 };
	static char *in3[3] = { "x", "scores", "max" }, *in2[2] = { "x",
								    "scores" };
	Onnx__TensorProto t[2], *tp[2] = { &t[0], &t[1] };
	struct one_node o = { "NonMaxSuppression", bdims, 3, tp, 2, in3, 3,
			      NULL, 0 };
	int64_t y[16];
	__s64 dims[NPR_MAX_RANK];
	int rank;

	mktensor(&t[0], "scores", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, sdims,
		 3, scores, 3);
	mktensor(&t[1], "max", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, mdims,
		 1, &maxo, 1);
	rank = one_node_run(_metadata, self, &o, boxes, 12, y, sizeof(y),
			    dims);
	if (rank < 0)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(rank, 2);
	ASSERT_EQ(dims[0], 3);
	ASSERT_EQ(dims[1], 3);
	EXPECT_EQ(y[2], 0);
	EXPECT_EQ(y[5], 2);
	EXPECT_EQ(y[8], 1);
	free(self->buf);
	o.ninit = 1;
	o.in = in2;
	o.nin = 2;
	rank = one_node_run(_metadata, self, &o, boxes, 12, y, sizeof(y),
			    dims);
	if (rank < 0)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(rank, 2);
	EXPECT_EQ(dims[0], 0);
	free(self->buf);
	self->buf = NULL;
	/* center_point_box is 0 or 1 */
	o.attr = "center_point_box";
	o.aval = 2;
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "center_point_box 2");
}

/*
 * Compress without an axis flattens; a condition shorter than the data
 * leaves the rest out: [1 2 3 4] with [false true] is [2].  A condition
 * of rank 2 is refused at load.
 */
TEST_F(onnx, compress_short_condition_and_errors)
{
	static const int64_t xdims[1] = { 4 };
	static const float x[4] = { 1, 2, 3, 4 };
	static int32_t cond[2] = { 0, 1 };
	static int64_t cdims[2] = { 2 }, c2dims[2] = { 1, 2 };
	static char *in[2] = { "x", "cond" };
	Onnx__TensorProto t, *tp[1] = { &t };
	struct one_node o = { "Compress", xdims, 1, tp, 1, in, 2, NULL, 0 };
	__s64 dims[NPR_MAX_RANK];
	float y[4];
	int rank;

	mktensor(&t, "cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, cdims, 1,
		 cond, 2);
	rank = one_node_run(_metadata, self, &o, x, 4, y, sizeof(y), dims);
	if (rank < 0)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(rank, 1);
	ASSERT_EQ(dims[0], 1);
	EXPECT_EQ(y[0], 2);
	free(self->buf);
	mktensor(&t, "cond", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, c2dims, 2,
		 cond, 2);
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "condition must be 1-D");
}

/* A window of output_datatype 8 (string) is refused at load. */
TEST_F(onnx, window_needs_a_numeric_output_datatype)
{
	static const int64_t xdims[1] = { 1 };
	static char *in[1] = { "x" };
	struct one_node o = { "HannWindow", xdims, 0, NULL, 0, in, 1,
			      "output_datatype", 8 };

	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "output_datatype 8");
}

FIXTURE(model) {
	int fd;
	float *in, *ref, *out;
};

/*
 * @name: file stem under models/onnx; @dims: input 0 without the batch
 * dim; @classes: output 0 values per image; @optional_ops: skip (naming
 * the op) rather than fail when an op is missing from this build.
 */
FIXTURE_VARIANT(model) {
	const char *name;
	int batch;
	__s64 dims[3];
	size_t classes;
	bool optional_ops;
	int threads;	/* INFERENCE_NUM_THREADS, 0: the default */
};

FIXTURE_VARIANT_ADD(model, resnet18_b1) {
	"resnet18", 1, { 3, 224, 224 }, 1000, false };
FIXTURE_VARIANT_ADD(model, resnet18_b4) {
	"resnet18", 4, { 3, 224, 224 }, 1000, false };
FIXTURE_VARIANT_ADD(model, squeezenet1_1_b1) {
	"squeezenet1_1", 1, { 3, 224, 224 }, 1000, false };
FIXTURE_VARIANT_ADD(model, squeezenet1_1_b4) {
	"squeezenet1_1", 4, { 3, 224, 224 }, 1000, false };
FIXTURE_VARIANT_ADD(model, mobilenet_v2_b1) {
	"mobilenet_v2", 1, { 3, 224, 224 }, 1000, false };
FIXTURE_VARIANT_ADD(model, mobilenet_v2_b4) {
	"mobilenet_v2", 4, { 3, 224, 224 }, 1000, false };
FIXTURE_VARIANT_ADD(model, ppocr_cls_b1) {
	"ppocr_mobile_v2.0_cls", 1, { 3, 48, 192 }, 2, true };
FIXTURE_VARIANT_ADD(model, ppocr_cls_b4) {
	"ppocr_mobile_v2.0_cls", 4, { 3, 48, 192 }, 2, true };
/* one thread: batch groups of one image, fire modules' Concats in place */
FIXTURE_VARIANT_ADD(model, squeezenet1_1_b4_1thread) {
	"squeezenet1_1", 4, { 3, 224, 224 }, 1000, false, 1 };
FIXTURE_VARIANT_ADD(model, resnet18_b4_1thread) {
	"resnet18", 4, { 3, 224, 224 }, 1000, false, 1 };

FIXTURE_SETUP(model)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(model)
{
	free(self->in);
	free(self->ref);
	free(self->out);
	if (self->fd >= 0)
		npr_close(self->fd);
}

static float *read_f32(struct npr_test *_metadata, const char *name,
		       const char *what, int batch, size_t count)
{
	char path[4096];
	size_t len = 0;
	float *p;

	ASSERT_TRUE(onnx_path(path, sizeof(path), "%s.%s_b%d.f32", name, what,
			      batch));
	p = read_file(path, &len);
	if (!p)
		TH_LOG("cannot read %s", path);
	ASSERT_NONNULL(p);
	ASSERT_EQ(len, count * sizeof(float));
	return p;
}

TEST_F(model, matches_golden)
{
	const size_t per_image = variant->dims[0] * variant->dims[1] *
				 variant->dims[2];
	__s64 dims[4] = { variant->batch, variant->dims[0], variant->dims[1],
			  variant->dims[2] };
	size_t n_in = per_image * variant->batch;
	size_t n_out = variant->classes * variant->batch, i;
	double maxdiff = 0, maxref = 0;
	struct npr_model_load ml;
	__u32 exec, req;
	char path[4096];
	int ret;

	REQUIRE_SHARED();
	ASSERT_TRUE(onnx_path(path, sizeof(path), "%s.onnx", variant->name));
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	npr_prep_model_load(&ml, path, NULL);
	ret = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (ret == -EOPNOTSUPP && variant->optional_ops)
		SKIP(return, "%s", npr_last_error());
	if (ret)
		TH_LOG("MODEL_LOAD: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	ret = compile_t(self->fd, ml.handle, dims, 4, &exec, &req,
			variant->threads);
	if (ret == -EOPNOTSUPP && variant->optional_ops)
		SKIP(return, "%s", npr_last_error());
	if (ret)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(ret, 0);

	self->in = read_f32(_metadata, variant->name, "input", variant->batch,
			    n_in);
	self->ref = read_f32(_metadata, variant->name, "output",
			     variant->batch, n_out);
	self->out = malloc(n_out * sizeof(float));
	ASSERT_NONNULL(self->out);
	infer(_metadata, self->fd, req, dims, 4, self->in, n_in, self->out,
	      n_out);
	for (i = 0; i < n_out; i++) {
		double d = fabs((double)self->out[i] - self->ref[i]);

		if (!(d <= maxdiff))	/* NaN counts as a difference */
			maxdiff = d != d ? INFINITY : d;
		if (fabs(self->ref[i]) > maxref)
			maxref = fabs(self->ref[i]);
	}
	TH_LOG("%s batch %d: max|ours - ref| = %.3g, max|ref| = %.3g, "
	       "relative %.3g (tolerance %.0e)",
	       variant->name, variant->batch, maxdiff, maxref,
	       maxdiff / maxref, TOLERANCE_REL);
	ASSERT_GT(maxref, 0);
	EXPECT_LE(maxdiff, TOLERANCE_REL * maxref);
}

/* ---- the weights stay in the mapped file ------------------------------- */

/*
 * squeezenet1_1 read from its file and from memory: the same graph, the
 * same bytes and the same model hash; from the file, every constant the
 * graph does not own lies in the mapping, at the offset of its raw_data
 * in the file (the bytes there are the ones the memory load copied),
 * every f32 constant of 16 KiB or more is such a reference, and some of
 * them are not 4-byte aligned (the format does not align raw_data).
 */
TEST_F(onnx, initializers_refer_to_the_mapped_file)
{
	struct npr_graph *gf = NULL, *gm = NULL;
	size_t nref = 0, nodd = 0;
	char path[4096], hf[33], hm[33];
	const unsigned char *file;
	int i;

	REQUIRE_SHARED();
	ASSERT_TRUE(onnx_path(path, sizeof(path), "squeezenet1_1.onnx"));
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	self->buf = read_file(path, &self->len);
	ASSERT_NONNULL(self->buf);
	file = self->buf;
	ASSERT_EQ(npr_onnx_load_file(path, &gf), 0);
	ASSERT_EQ(npr_onnx_parse(self->buf, self->len, NULL, &gm), 0);
	ASSERT_NONNULL(gf->weights);
	ASSERT_TRUE(gf->weights->mapped);
	ASSERT_EQ(gf->weights->size, self->len);
	ASSERT_NULL(gm->weights);
	ASSERT_EQ(gf->nvals, gm->nvals);
	for (i = 0; i < gf->nvals; i++) {
		const struct npr_value *vf = &gf->vals[i], *vm = &gm->vals[i];
		const unsigned char *w = gf->weights->data;
		const unsigned char *d = vf->data;

		ASSERT_EQ(!vf->data, !vm->data);
		if (!vf->data)
			continue;
		ASSERT_EQ(vf->type, vm->type);
		ASSERT_EQ(vf->nbytes, vm->nbytes);
		/* from memory: a copy of its own, aligned */
		ASSERT_TRUE(vm->owned == vm->data);
		ASSERT_EQ((uintptr_t)vm->data % npr_elem_size(vm->type), 0);
		if (vf->type == NPR_ELEM_F32 && vf->nbytes >= 16384)
			ASSERT_NULL(vf->owned);
		if (vf->owned) {
			ASSERT_EQ(memcmp(vf->data, vm->data, vf->nbytes), 0);
			continue;
		}
		ASSERT_TRUE(d >= w && vf->nbytes <= self->len &&
			    (size_t)(d - w) <= self->len - vf->nbytes);
		ASSERT_EQ(memcmp(file + (d - w), vm->data, vf->nbytes), 0);
		nref++;
		nodd += (uintptr_t)d % 4 != 0;
	}
	TH_LOG("%zu constants refer to the file, %zu of them unaligned",
	       nref, nodd);
	ASSERT_GT(nref, 0);
	ASSERT_GT(nodd, 0);
	npr_model_hash(gf, hf);
	npr_model_hash(gm, hm);
	ASSERT_STREQ(hf, hm);
	npr_graph_free(gf);
	npr_graph_free(gm);
}

/*
 * Pages of the mappings of @path (by its real path) that are mapped in
 * (the present bit of /proc/self/pagemap); *maps counts the mappings.
 * -1 when /proc cannot tell.
 */
static long mapped_pages(const char *path, int *maps)
{
	char real[4096], line[4608];
	long ps = sysconf(_SC_PAGESIZE), n = 0;
	FILE *f;
	int pm;

	*maps = 0;
	if (!realpath(path, real))
		return -1;
	f = fopen("/proc/self/maps", "r");
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (!f || pm < 0) {
		if (f)
			fclose(f);
		if (pm >= 0)
			close(pm);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, a;
		char *name = strchr(line, '/');

		if (!name || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, real))
			continue;
		(*maps)++;
		for (a = lo; a < hi; a += ps) {
			uint64_t e;

			if (pread(pm, &e, 8, (off_t)(a / ps * 8)) != 8) {
				n = -1;
				goto out;
			}
			n += (long)(e >> 63);
		}
	}
out:
	fclose(f);
	close(pm);
	return n;
}

/*
 * Compile @model at batch 1; no page of the mapped @path may be mapped in
 * then; run it on the golden input @in into @out.
 */
static void run_b1(struct npr_test *_metadata, int fd, __u32 model,
		   const char *path, const float *in, float *out,
		   __u32 *exec)
{
	const __s64 dims[4] = { 1, 3, 224, 224 };
	__u32 req;
	long pages;
	int ret, maps;

	ret = compile(fd, model, dims, 4, exec, &req);
	if (ret)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	pages = mapped_pages(path, &maps);
	TH_LOG("after COMPILE: %d mapping(s) of the file, %ld pages in",
	       maps, pages);
	ASSERT_EQ(maps, 1);
	ASSERT_EQ(pages, 0);
	infer(_metadata, fd, req, dims, 4, in, 3 * 224 * 224, out, 1000);
}

/*
 * After COMPILE no page of the mapped model file is mapped in any more
 * (the packed weights are what the CPU backend reads), the results match
 * the golden outputs, and a second COMPILE of the same model handle (the
 * pages fault back in) and an EXPORT + IMPORT of the first give the same
 * bits.
 */
TEST_F(onnx, compile_lets_the_file_pages_go_results_identical)
{
	float *in = NULL, *ref = NULL, out[3][1000];
	struct npr_model_load ml;
	unsigned char *blob = NULL;
	char path[4096], ipath[4096];
	struct npr_export ea = { .size = sizeof(ea) };
	struct npr_import ia = { .size = sizeof(ia) };
	__u32 exec, exec2;
	size_t len = 0, i;
	double maxdiff = 0, maxref = 0;
	long pages;
	int maps;

	REQUIRE_SHARED();
	ASSERT_TRUE(onnx_path(path, sizeof(path), "squeezenet1_1.onnx"));
	ASSERT_TRUE(onnx_path(ipath, sizeof(ipath),
			      "squeezenet1_1.input_b1.f32"));
	if (access(path, R_OK) || access(ipath, R_OK))
		SKIP(return, "model %s or its input not found", path);
	in = read_file(ipath, &len);
	ASSERT_NONNULL(in);
	ASSERT_EQ(len, 3 * 224 * 224 * sizeof(float));
	ASSERT_TRUE(onnx_path(ipath, sizeof(ipath),
			      "squeezenet1_1.output_b1.f32"));
	ref = read_file(ipath, &len);
	ASSERT_NONNULL(ref);
	ASSERT_EQ(len, 1000 * sizeof(float));

	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	pages = mapped_pages(path, &maps);
	if (pages < 0)
		SKIP(goto out, "/proc/self/maps or pagemap cannot be read");
	TH_LOG("after MODEL_LOAD: %d mapping(s) of the file, %ld pages in",
	       maps, pages);
	ASSERT_EQ(maps, 1);

	run_b1(_metadata, self->fd, ml.handle, path, in, out[0], &exec);
	for (i = 0; i < 1000; i++) {
		double d = fabs((double)out[0][i] - ref[i]);

		if (!(d <= maxdiff))
			maxdiff = d != d ? INFINITY : d;
		if (fabs(ref[i]) > maxref)
			maxref = fabs(ref[i]);
	}
	EXPECT_LE(maxdiff, TOLERANCE_REL * maxref);

	run_b1(_metadata, self->fd, ml.handle, path, in, out[1], &exec2);
	EXPECT_EQ(memcmp(out[0], out[1], sizeof(out[0])), 0);

	ea.exec = exec;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ea), -EMSGSIZE);
	blob = malloc(ea.bytes);
	ASSERT_NONNULL(blob);
	ea.data = (uintptr_t)blob;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ea), 0);
	ia.data = (uintptr_t)blob;
	ia.bytes = ea.bytes;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_IMPORT, &ia), 0);
	{
		const __s64 dims[4] = { 1, 3, 224, 224 };
		struct npr_req_create rc;

		npr_prep_req_create(&rc, ia.exec);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
		infer(_metadata, self->fd, rc.req, dims, 4, in,
		      3 * 224 * 224, out[2], 1000);
	}
	EXPECT_EQ(memcmp(out[0], out[2], sizeof(out[0])), 0);
out:
	free(blob);
	free(in);
	free(ref);
}

/*
 * y = Add(x, <name>): x a [1, WIDE_N] input, the initializer a [WIDE_N]
 * raw_data tensor, both of ONNX type @dt (FLOAT or FLOAT16), w[i] =
 * (i % 64) / 4 (exact in f16).  @name's length moves the raw_data in
 * the file.
 */
#define WIDE_N	8192

static float wide_w(int i)
{
	return (float)(i % 64) * 0.25f;
}

static void *wide_model(int32_t dt, const char *name, size_t *len,
			size_t *raw_off)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *np[1] = { &node };
	Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, *wp[1] = { &w };
	Onnx__ValueInfoProto vi[2] = { ONNX__VALUE_INFO_PROTO__INIT,
				       ONNX__VALUE_INFO_PROTO__INIT };
	Onnx__ValueInfoProto *vin[1] = { &vi[0] }, *vout[1] = { &vi[1] };
	Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension d[2] = {
		ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
		ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT };
	Onnx__TensorShapeProto__Dimension *dp[2] = { &d[0], &d[1] };
	char *in[2] = { "x", (char *)name }, *out[1] = { "y" };
	int64_t wdims[1] = { WIDE_N };
	size_t es = dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ? 2 : 4;
	uint8_t *raw = malloc(WIDE_N * es), *buf = NULL, *hit;
	int i;

	if (!raw)
		return NULL;
	for (i = 0; i < WIDE_N; i++) {
		float f = wide_w(i);
		uint16_t h = npr_f32_to_f16(f);

		memcpy(raw + i * es, es == 2 ? (void *)&h : (void *)&f, es);
	}
	model_head(&m, osp, 13);
	m.graph = &g;
	g.name = "wide";
	node.op_type = "Add";
	node.name = "add";
	node.n_input = 2;
	node.input = in;
	node.n_output = 1;
	node.output = out;
	g.n_node = 1;
	g.node = np;
	w.name = (char *)name;
	w.has_data_type = 1;
	w.data_type = dt;
	w.n_dims = 1;
	w.dims = wdims;
	w.has_raw_data = 1;
	w.raw_data.len = WIDE_N * es;
	w.raw_data.data = raw;
	g.n_initializer = 1;
	g.initializer = wp;
	d[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	d[0].dim_value = 1;
	d[1].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	d[1].dim_value = WIDE_N;
	sh.n_dim = 2;
	sh.dim = dp;
	tt.has_elem_type = 1;
	tt.elem_type = dt;
	tt.shape = &sh;
	tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp.tensor_type = &tt;
	vi[0].type = &tp;
	vi[1].type = &tp;
	vi[0].name = "x";
	vi[1].name = "y";
	g.n_input = 1;
	g.input = vin;
	g.n_output = 1;
	g.output = vout;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf) {
		onnx__model_proto__pack(&m, buf);
		hit = memmem(buf, *len, raw, WIDE_N * es);
		*raw_off = hit ? (size_t)(hit - buf) : 0;
	}
	free(raw);
	return buf;
}

/*
 * A model file whose weights sit at an offset that is not a multiple of
 * their element size (f32, and f16 lowered to f32 by compile) refers to
 * them unaligned; compiled from the file and from memory it computes
 * x + w exactly.
 */
static void wide_runs(struct npr_test *_metadata, FIXTURE_DATA(onnx) *self,
		      int32_t dt, unsigned int type)
{
	static const __s64 dims[2] = { 1, WIDE_N };
	static float x[WIDE_N], y[2][WIDE_N];
	char dir[64] = "/tmp/npr_onnx_test.XXXXXX", path[128], name[16];
	struct npr_model_load ml;
	struct npr_graph *g = NULL;
	size_t off = 0, es = npr_elem_size(type);
	__u32 model[2], exec, req;
	const struct npr_value *v = NULL;
	int i, k;
	FILE *f;

	/* a name that puts raw_data at an odd offset */
	for (k = 1; k < 9; k++) {
		snprintf(name, sizeof(name), "%.*s", k, "wwwwwwww");
		free(self->buf);
		self->buf = wide_model(dt, name, &self->len, &off);
		ASSERT_NONNULL(self->buf);
		ASSERT_GT(off, 0);
		if (off % 2)
			break;
	}
	ASSERT_TRUE(off % 2);
	ASSERT_NONNULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/wide.onnx", dir);
	f = fopen(path, "wb");
	ASSERT_NONNULL(f);
	ASSERT_EQ(fwrite(self->buf, 1, self->len, f), self->len);
	fclose(f);

	/* the loaded constant is the file's bytes, unaligned */
	ASSERT_EQ(npr_onnx_load_file(path, &g), 0);
	for (i = 0; i < g->nvals; i++)
		if (g->vals[i].data && g->vals[i].name &&
		    !strcmp(g->vals[i].name, name))
			v = &g->vals[i];
	ASSERT_NONNULL(v);
	EXPECT_EQ(v->type, type);
	EXPECT_NULL(v->owned);
	EXPECT_EQ((const uint8_t *)v->data -
		  (const uint8_t *)g->weights->data, (ptrdiff_t)off);
	EXPECT_NE((uintptr_t)v->data % es, 0);
	npr_graph_free(g);

	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	unlink(path);
	rmdir(dir);
	model[0] = ml.handle;
	ASSERT_EQ(load_mem(self->fd, self->buf, self->len, &model[1]), 0);
	for (i = 0; i < WIDE_N; i++)
		x[i] = 1.0f;
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(compile(self->fd, model[k], dims, 2, &exec, &req), 0);
		if (type == NPR_ELEM_F32) {
			infer(_metadata, self->fd, req, dims, 2, x, WIDE_N,
			      y[k], WIDE_N);
			continue;
		}
		/* f16 ports: f16 in and out */
		{
			static uint16_t hx[WIDE_N], hy[WIDE_N];
			struct npr_tensor_arg ta;
			struct npr_infer inf;

			for (i = 0; i < WIDE_N; i++)
				hx[i] = npr_f32_to_f16(x[i]);
			npr_prep_tensor(&ta, req, 0, 0, hx, sizeof(hx));
			ta.elem_type = NPR_ELEM_F16;
			ta.rank = 2;
			ta.dims[0] = 1;
			ta.dims[1] = WIDE_N;
			ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR,
					    &ta), 0);
			npr_prep_infer(&inf, req);
			ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf),
				  0);
			npr_prep_tensor(&ta, req, 0, 1, hy, sizeof(hy));
			ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR,
					    &ta), 0);
			ASSERT_EQ(ta.bytes, sizeof(hy));
			for (i = 0; i < WIDE_N; i++)
				y[k][i] = npr_f16_to_f32(hy[i]);
		}
	}
	for (i = 0; i < WIDE_N; i++) {
		ASSERT_EQ(y[0][i], 1.0f + wide_w(i));
		ASSERT_EQ(y[1][i], y[0][i]);
	}
}

TEST_F(onnx, unaligned_f32_weights_in_the_file_compute)
{
	wide_runs(_metadata, self, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		  NPR_ELEM_F32);
}

TEST_F(onnx, unaligned_f16_weights_in_the_file_compute)
{
	wide_runs(_metadata, self, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16,
		  NPR_ELEM_F16);
}

TEST_HARNESS_MAIN
