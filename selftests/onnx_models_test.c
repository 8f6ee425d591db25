// SPDX-License-Identifier: MIT
/*
 * ONNX models through the public API: the shared ONNX models (torchvision
 * resnet18, squeezenet1_1, mobilenet_v2 and the PaddleOCR direction
 * classifier) run at batch 1 and 4 and match their golden outputs within
 * max|ours - ref| <= 1e-4 * max|ref|; small models built here with the
 * protobuf-c message code run and report their ONNX names; broken ones
 * (truncated, random bytes, an unknown op, an initializer whose data does
 * not match its dims, an unsupported opset, messages nested without end)
 * fail with the documented errno and a message that says what is wrong;
 * external data loads from the model's directory and nowhere else.
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
#include "onnx_util.h"
#include "files.h"

#define TOLERANCE_REL	1e-4

/* ---- helpers ------------------------------------------------------------ */

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

static void port_name(struct npr_test *_metadata, int fd, __u32 handle,
		      int output, char *name, size_t len,
		      struct npr_port_info *pi)
{
	npr_prep_port_info(pi, handle, 0, output, name, len);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PORT_INFO, pi), 0);
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

/* ---- external data ------------------------------------------------------ */

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
	p = npr_test_slurp(path, &len);
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
	self->buf = npr_test_slurp(path, &self->len);
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
	in = npr_test_slurp(ipath, &len);
	ASSERT_NONNULL(in);
	ASSERT_EQ(len, 3 * 224 * 224 * sizeof(float));
	ASSERT_TRUE(onnx_path(ipath, sizeof(ipath),
			      "squeezenet1_1.output_b1.f32"));
	ref = npr_test_slurp(ipath, &len);
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
