// SPDX-License-Identifier: MIT
/*
 * Dynamic input shapes on small ONNX models built here: y = Concat(past,
 * x) along axis 1 with past [1, P] and x [1, S], P and S symbolic, as a
 * language model's cache grows.  Compiled without shapes it takes any P
 * and S per request, 0 included (an empty past, an empty step); bounds
 * given at COMPILE are enforced by SET_TENSOR and BO_BIND with a message
 * naming the port, the dimension and the bounds; the plan cache misses
 * and evicts as CPU_RUNTIME_CACHE_CAPACITY says (NPR_RUNTIME_CACHE_*);
 * many signatures in a row on two requests stay correct (valgrind runs
 * this suite: no leak), and so do three requests on three threads whose
 * plans a cache of 2 evicts under them; an input with no shape yet cannot be inferred;
 * the output's port has rank 2 with its dynamic dimension -1; a cache made
 * state, read by a Slice whose length follows the cache's in a way two
 * lengths do not show, gets a plan per length once the plan for every
 * length finds another shape; export and
 * the null device refuse dynamic inputs, and the model cache compiles
 * such a model every time, storing nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "npuring.h"
#include "onnx.pb-c.h"
#include "onnx_util.h"
#include "dynshape_util.h"

/* A [1, @sym] f32 ValueInfo. */
struct vi {
	Onnx__ValueInfoProto vi;
	Onnx__TypeProto tp;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto sh;
	Onnx__TensorShapeProto__Dimension d[2];
	Onnx__TensorShapeProto__Dimension *dp[2];
};

static Onnx__ValueInfoProto *vi(struct vi *v, char *name, char *sym)
{
	onnx__value_info_proto__init(&v->vi);
	onnx__type_proto__init(&v->tp);
	onnx__type_proto__tensor__init(&v->tt);
	onnx__tensor_shape_proto__init(&v->sh);
	onnx__tensor_shape_proto__dimension__init(&v->d[0]);
	onnx__tensor_shape_proto__dimension__init(&v->d[1]);
	v->d[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	v->d[0].dim_value = 1;
	v->d[1].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	v->d[1].dim_param = sym;
	v->dp[0] = &v->d[0];
	v->dp[1] = &v->d[1];
	v->sh.n_dim = 2;
	v->sh.dim = v->dp;
	v->tt.has_elem_type = 1;
	v->tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	v->tt.shape = &v->sh;
	v->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	v->tp.tensor_type = &v->tt;
	v->vi.name = name;
	v->vi.type = &v->tp;
	return &v->vi;
}

/* y = Concat(past, x, axis 1) */
static void *concat_model(size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT, *np[1] = { &n };
	Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT, *ap[1] = { &a };
	static char *in[2] = { "past", "x" }, *out[1] = { "y" };
	struct vi v[3];
	Onnx__ValueInfoProto *gin[2], *gout[1];
	void *buf;

	model_head(&m, osp, 13);
	gin[0] = vi(&v[0], "past", "P");
	gin[1] = vi(&v[1], "x", "S");
	gout[0] = vi(&v[2], "y", "T");
	n.op_type = "Concat";
	n.n_input = 2;
	n.input = in;
	n.n_output = 1;
	n.output = out;
	n.n_attribute = 1;
	n.attribute = ap;
	a.name = "axis";
	a.has_type = 1;
	a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a.has_i = 1;
	a.i = 1;
	g.name = "concat";
	g.n_node = 1;
	g.node = np;
	g.n_input = 2;
	g.input = gin;
	g.n_output = 1;
	g.output = gout;
	m.graph = &g;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

/* An int64 initializer of @n values. */
static Onnx__TensorProto *i64s(Onnx__TensorProto *t, char *name,
			       int64_t *dims, int64_t *v, int n)
{
	onnx__tensor_proto__init(t);
	t->name = name;
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	t->n_dims = 1;
	dims[0] = n;
	t->dims = dims;
	t->n_int64_data = n;
	t->int64_data = v;
	return t;
}

/*
 * A cache that grows, read by a Slice whose length follows the cache's
 * in steps of 4, which two lengths in a row do not show:
 * present.0 = Concat(past_key_values.0, x),
 * y = Concat(present.0[:, :P / 4 + 1], x) with P the past's length.
 */
static void *quarter_model(size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__NodeProto n[6], *np[6];
	Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT, *ap[1] = { &a };
	Onnx__TensorProto t[3], *tp[3];
	static char *cat_in[2] = { "past_key_values.0", "x" };
	static char *cat_out[1] = { "present.0" };
	static char *shp_in[1] = { "past_key_values.0" }, *shp_out[1] = { "s" };
	static char *div_in[2] = { "s", "four" }, *div_out[1] = { "q" };
	static char *add_in[2] = { "q", "one" }, *add_out[1] = { "e" };
	static char *sl_in[3] = { "present.0", "zero", "e" };
	static char *sl_out[1] = { "z" };
	static char *y_in[2] = { "z", "x" }, *y_out[1] = { "y" };
	static char *types[6] = {
		"Concat", "Shape", "Div", "Add", "Slice", "Concat",
	};
	char **ins[6] = { cat_in, shp_in, div_in, add_in, sl_in, y_in };
	char **outs[6] = { cat_out, shp_out, div_out, add_out, sl_out, y_out };
	static const int nins[6] = { 2, 1, 2, 2, 3, 2 };
	int64_t four[2] = { 4, 4 }, one[2] = { 1, 1 }, zero[2] = { 0, 0 };
	int64_t dims[3][1];
	struct vi v[4];
	Onnx__ValueInfoProto *gin[2], *gout[2];
	void *buf;
	int i;

	model_head(&m, osp, 13);
	gin[0] = vi(&v[0], "past_key_values.0", "P");
	gin[1] = vi(&v[1], "x", "S");
	gout[0] = vi(&v[2], "y", "Y");
	gout[1] = vi(&v[3], "present.0", "T");
	a.name = "axis";
	a.has_type = 1;
	a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a.has_i = 1;
	a.i = 1;
	for (i = 0; i < 6; i++) {
		onnx__node_proto__init(&n[i]);
		n[i].op_type = types[i];
		n[i].n_input = nins[i];
		n[i].input = ins[i];
		n[i].n_output = 1;
		n[i].output = outs[i];
		if (!strcmp(types[i], "Concat")) {
			n[i].n_attribute = 1;
			n[i].attribute = ap;
		}
		np[i] = &n[i];
	}
	tp[0] = i64s(&t[0], "four", dims[0], four, 2);
	tp[1] = i64s(&t[1], "one", dims[1], one, 2);
	tp[2] = i64s(&t[2], "zero", dims[2], zero, 2);
	g.name = "quarter";
	g.n_node = 6;
	g.node = np;
	g.n_initializer = 3;
	g.initializer = tp;
	g.n_input = 2;
	g.input = gin;
	g.n_output = 2;
	g.output = gout;
	m.graph = &g;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

/*
 * y = x[:, :L / 64 + 1] for x of length L: the same length at every size
 * COMPILE probes (32, 33, 61), another one at 200.
 */
static void *stride64_model(size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1] = { &os };
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__NodeProto n[4], *np[4];
	Onnx__TensorProto t[3], *tp[3];
	static char *shp_in[1] = { "x" }, *shp_out[1] = { "s" };
	static char *div_in[2] = { "s", "d" }, *div_out[1] = { "q" };
	static char *add_in[2] = { "q", "one" }, *add_out[1] = { "e" };
	static char *sl_in[3] = { "x", "zero", "e" }, *sl_out[1] = { "y" };
	static char *types[4] = { "Shape", "Div", "Add", "Slice" };
	char **ins[4] = { shp_in, div_in, add_in, sl_in };
	char **outs[4] = { shp_out, div_out, add_out, sl_out };
	static const int nins[4] = { 1, 2, 2, 3 };
	int64_t d[2] = { 64, 64 }, one[2] = { 1, 1 }, zero[2] = { 0, 0 };
	int64_t dims[3][1];
	struct vi v[2];
	Onnx__ValueInfoProto *gin[1], *gout[1];
	void *buf;
	int i;

	model_head(&m, osp, 13);
	gin[0] = vi(&v[0], "x", "L");
	gout[0] = vi(&v[1], "y", "Y");
	for (i = 0; i < 4; i++) {
		onnx__node_proto__init(&n[i]);
		n[i].op_type = types[i];
		n[i].n_input = nins[i];
		n[i].input = ins[i];
		n[i].n_output = 1;
		n[i].output = outs[i];
		np[i] = &n[i];
	}
	tp[0] = i64s(&t[0], "d", dims[0], d, 2);
	tp[1] = i64s(&t[1], "one", dims[1], one, 2);
	tp[2] = i64s(&t[2], "zero", dims[2], zero, 2);
	g.name = "stride64";
	g.n_node = 4;
	g.node = np;
	g.n_initializer = 3;
	g.initializer = tp;
	g.n_input = 1;
	g.input = gin;
	g.n_output = 1;
	g.output = gout;
	m.graph = &g;
	*len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

FIXTURE(dyn) {
	int fd;
	__u32 model;
};

FIXTURE_SETUP(dyn)
{
	void *buf;
	size_t len;

	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	buf = concat_model(&len);
	ASSERT_NE(buf, NULL);
	ASSERT_EQ(load_mem(self->fd, buf, len, &self->model), 0);
	free(buf);
}

FIXTURE_TEARDOWN(dyn)
{
	npr_close(self->fd);
}

/*
 * One step: past of @p values (p + 0.5 ...), x of @s (100 + ...); y must
 * be both in a row.
 */
static void step(struct npr_test *_metadata, int fd, __u32 req, int p, int s)
{
	float past[64], x[64], *y;
	__s64 dp[2] = { 1, p }, dx[2] = { 1, s };
	struct npr_tensor_arg t;
	int i;

	for (i = 0; i < p; i++)
		past[i] = i + 0.5f;
	for (i = 0; i < s; i++)
		x[i] = 100 + i;
	ASSERT_EQ(dyn_set(fd, req, 0, 2, dp, p ? past : NULL,
			  p * sizeof(float)), 0);
	ASSERT_EQ(dyn_set(fd, req, 1, 2, dx, s ? x : NULL,
			  s * sizeof(float)), 0);
	ASSERT_EQ(dyn_infer(fd, req), 0);
	y = dyn_get(fd, req, 0, &t);
	ASSERT_NE(y, NULL);
	ASSERT_EQ(t.rank, 2);
	ASSERT_EQ(t.dims[0], 1);
	ASSERT_EQ(t.dims[1], p + s);
	ASSERT_EQ(t.bytes, (p + s) * sizeof(float));
	for (i = 0; i < p + s; i++)
		ASSERT_EQ(y[i], i < p ? past[i] : x[i - p]);
	free(y);
}

TEST_F(dyn, empty_dims_and_ports)
{
	struct npr_port_info pi;
	struct npr_tensor_arg t;
	__u32 exec, req;

	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, -1,
			      &exec), 0);
	npr_prep_port_info(&pi, exec, 0, 1, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.rank, 2);
	ASSERT_EQ(pi.dims[0], 1);
	ASSERT_EQ(pi.dims[1], -1);
	npr_prep_port_info(&pi, exec, 1, 0, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(pi.dims[1], -1);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	/* no shape yet: GET_TENSOR says -1, INFER refuses */
	npr_prep_tensor(&t, req, 0, 0, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &t), 0);
	ASSERT_EQ(t.dims[1], -1);
	ASSERT_EQ(t.bytes, 0);
	check_error(_metadata, self->fd, dyn_infer(self->fd, req), -EINVAL,
		    "SET_TENSOR");
	step(_metadata, self->fd, req, 0, 3);	/* empty past */
	step(_metadata, self->fd, req, 3, 1);
	step(_metadata, self->fd, req, 4, 0);	/* empty step */
	step(_metadata, self->fd, req, 0, 0);	/* both */
	step(_metadata, self->fd, req, 0, 3);	/* a hit */
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), 4);
}

TEST_F(dyn, bounds)
{
	const __s64 lo[2] = { 1, 1 }, hi[2] = { 1, 4 }, bad[2] = { 1, 0 };
	__s64 d[2] = { 1, 5 };
	float x[8] = { 0 };
	__u32 exec, req;

	/* lo above hi, hi above 2^31 */
	check_error(_metadata, self->fd,
		    dyn_compile(self->fd, self->model, 1, 2, hi, lo, -1,
				&exec), -EINVAL, "bounds 4..1");
	ASSERT_EQ(dyn_compile(self->fd, self->model, 1, 2, lo, hi, -1, &exec),
		  0);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	check_error(_metadata, self->fd,
		    dyn_set(self->fd, req, 1, 2, d, x, 5 * sizeof(float)),
		    -EINVAL, "input x: dimension 1 is 5, outside its bounds 1..4");
	check_error(_metadata, self->fd,
		    dyn_set(self->fd, req, 1, 2, bad, NULL, 0), -EINVAL,
		    "dimension 1 is 0");
	/* a wrong size for a shape within the bounds */
	d[1] = 4;
	check_error(_metadata, self->fd,
		    dyn_set(self->fd, req, 1, 2, d, x, 3 * sizeof(float)),
		    -EINVAL, "needs exactly 16 bytes");
	step(_metadata, self->fd, req, 2, 4);
	step(_metadata, self->fd, req, 2, 1);
	/* the static dimension stays static */
	d[0] = 2;
	check_error(_metadata, self->fd,
		    dyn_set(self->fd, req, 1, 2, d, x, 8 * sizeof(float)),
		    -EINVAL, "dim 0 is 1, not 2");
}

TEST_F(dyn, cache_eviction)
{
	const int seq[] = { 1, 2, 3, 1, 3 };
	__u32 exec, req;
	int i;

	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, 2,
			      &exec), 0);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY), 2);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	/* 1, 2, 3 (evicts 1), 1 (evicts 2), 3 (a hit) */
	for (i = 0; i < 5; i++)
		step(_metadata, self->fd, req, 2, seq[i]);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), 4);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS), 2);
	/* capacity 0: a plan per inference, none kept */
	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, 0,
			      &exec), 0);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	step(_metadata, self->fd, req, 2, 1);
	step(_metadata, self->fd, req, 2, 1);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), 2);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS), 0);
}

/* a growing past, as decoding: a new signature every step, two requests */
TEST_F(dyn, many_signatures)
{
	__u32 exec, req[2];
	int i;

	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, -1,
			      &exec), 0);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY), 16);
	ASSERT_EQ(dyn_request(self->fd, exec, &req[0]), 0);
	ASSERT_EQ(dyn_request(self->fd, exec, &req[1]), 0);
	for (i = 0; i < 40; i++)
		step(_metadata, self->fd, req[i % 2], i, 1);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), 40);
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS), 24);
}

/*
 * That cache made state: one plan serves the lengths 4 to 7, whose Slice
 * is 2 long; at 8 it would be 3, which the plan's check catches: that
 * step is planned for its own shapes, and so are those after, all right.
 */
TEST_F(dyn, length_plan_falls_back)
{
	struct npr_state_pair kv = {
		(uintptr_t)"past_key_values.*", (uintptr_t)"present.*",
	};
	struct npr_make_stateful ms = { .size = sizeof(ms) };
	float all[16], x[4] = { 100, 101, 102, 103 }, *y;
	__s64 d[2] = { 1, 4 };
	struct npr_tensor_arg t;
	__u32 model, exec, req;
	size_t len;
	void *buf;
	int s, i, p, z;

	buf = quarter_model(&len);
	ASSERT_NE(buf, NULL);
	ASSERT_EQ(load_mem(self->fd, buf, len, &model), 0);
	free(buf);
	ms.flags = NPR_MAKE_STATEFUL_PATTERN;
	ms.model = model;
	ms.count = 1;
	ms.pairs = (uintptr_t)&kv;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &ms), 0);
	ASSERT_EQ(dyn_compile(self->fd, model, 0, 0, NULL, NULL, -1, &exec),
		  0);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	memcpy(all, x, sizeof(x));
	/* the prompt of 4 tokens, then one at a time */
	for (s = -1; s < 8; s++) {
		if (s >= 0) {
			x[0] = 200 + s;
			all[4 + s] = x[0];
			d[1] = 1;
		}
		p = s < 0 ? 0 : 4 + s;
		z = p / 4 + 1;
		ASSERT_EQ(dyn_set(self->fd, req, 0, 2, d, x,
				  d[1] * sizeof(float)), 0);
		ASSERT_EQ(dyn_infer(self->fd, req), 0);
		y = dyn_get(self->fd, req, 0, &t);
		ASSERT_NE(y, NULL);
		ASSERT_EQ(t.dims[1], z + d[1]);
		for (i = 0; i < z + d[1]; i++)
			ASSERT_EQ(y[i], i < z ? all[i] : x[i - z]);
		free(y);
		/* the prompt's plan and one for the lengths 4 to 7 */
		if (p == 7)
			ASSERT_EQ(dyn_param(self->fd, exec,
					    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES),
				  2);
	}
	/* then one for each length: 8, 9, 10, 11 */
	ASSERT_EQ(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_MISSES), 6);
}

TEST_F(dyn, bo_bind_sets_the_shape)
{
	struct npr_bo_create bc = { .size = sizeof(bc), .bytes = 64 };
	struct npr_bo_info bi = { .size = sizeof(bi) };
	struct npr_bo_bind bb = { .size = sizeof(bb) };
	struct npr_tensor_arg t;
	__s64 dp[2] = { 1, 1 };
	float past = 7, *y;
	__u32 exec, req;

	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, -1,
			      &exec), 0);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_CREATE, &bc), 0);
	bi.handle = bc.handle;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_INFO, &bi), 0);
	((float *)(uintptr_t)bi.addr)[0] = 1;
	((float *)(uintptr_t)bi.addr)[1] = 2;
	bb.req = req;
	bb.index = 1;
	bb.bo = bc.handle;
	bb.elem_type = NPR_ELEM_F32;
	bb.rank = 2;
	bb.dims[0] = 1;
	bb.dims[1] = 17;	/* 68 bytes: more than the BO */
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &bb), -ERANGE);
	bb.dims[1] = 2;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &bb), 0);
	ASSERT_EQ(dyn_set(self->fd, req, 0, 2, dp, &past, sizeof(past)), 0);
	ASSERT_EQ(dyn_infer(self->fd, req), 0);
	y = dyn_get(self->fd, req, 0, &t);
	ASSERT_NE(y, NULL);
	ASSERT_EQ(t.dims[1], 3);
	ASSERT_EQ(y[0], 7);
	ASSERT_EQ(y[1], 1);
	ASSERT_EQ(y[2], 2);
	free(y);
	/* the output's buffer is the request's */
	bb.flags = NPR_PORT_OUTPUT;
	bb.index = 0;
	bb.dims[1] = 3;
	check_error(_metadata, self->fd,
		    npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &bb), -EOPNOTSUPP,
		    "GET_TENSOR");
}

TEST_F(dyn, refused_where_unsupported)
{
	struct npr_export ex = { .size = sizeof(ex) };
	struct npr_compile co;
	__u32 exec;
	void *buf;
	size_t len;
	int fd;

	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, -1,
			      &exec), 0);
	ex.exec = exec;
	check_error(_metadata, self->fd,
		    npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ex), -EOPNOTSUPP,
		    "dynamic input dimension");
	fd = npr_open("null", 0);
	ASSERT_GE(fd, 0);
	buf = concat_model(&len);
	ASSERT_NE(buf, NULL);
	ASSERT_EQ(load_mem(fd, buf, len, &self->model), 0);
	free(buf);
	npr_prep_compile(&co, self->model);
	check_error(_metadata, fd, npr_ioctl(fd, NPR_IOCTL_COMPILE, &co),
		    -EOPNOTSUPP, "input past has the dynamic shape [1,?]");
	npr_close(fd);
}

struct worker {
	int fd, err, bad;
	__u32 req;
	int first;
};

/* 60 inferences of lengths first, first + 1, ... mod 5, checked */
static void *work(void *arg)
{
	struct worker *w = arg;
	float past[8], x[8], *y;
	int i, k, p, s;

	for (k = 0; k < 60 && !w->err && !w->bad; k++) {
		__s64 dp[2] = { 1, 0 }, dx[2] = { 1, 0 };
		struct npr_tensor_arg t;

		p = (w->first + k) % 5;
		s = 1 + k % 3;
		dp[1] = p;
		dx[1] = s;
		for (i = 0; i < p; i++)
			past[i] = w->first * 1000 + k + i;
		for (i = 0; i < s; i++)
			x[i] = -i - k;
		w->err = dyn_set(w->fd, w->req, 0, 2, dp, p ? past : NULL,
				 p * sizeof(float));
		if (!w->err)
			w->err = dyn_set(w->fd, w->req, 1, 2, dx, x,
					 s * sizeof(float));
		if (!w->err)
			w->err = dyn_infer(w->fd, w->req);
		if (w->err)
			break;
		y = dyn_get(w->fd, w->req, 0, &t);
		if (!y || t.dims[1] != p + s) {
			w->bad = 1;
		} else {
			for (i = 0; i < p + s; i++)
				if (y[i] != (i < p ? past[i] : x[i - p]))
					w->bad = 1;
		}
		free(y);
	}
	return NULL;
}

/*
 * Three requests on three threads, signatures changing under a cache of
 * 2: plans are evicted while other requests run them.
 */
TEST_F(dyn, concurrent_requests)
{
	struct worker w[3];
	pthread_t th[3];
	__u32 exec;
	int i;

	ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL, 2,
			      &exec), 0);
	for (i = 0; i < 3; i++) {
		w[i] = (struct worker){ .fd = self->fd, .first = i };
		ASSERT_EQ(dyn_request(self->fd, exec, &w[i].req), 0);
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, work, &w[i]), 0);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(w[i].err, 0);
		ASSERT_EQ(w[i].bad, 0);
	}
	ASSERT_GT(dyn_param(self->fd, exec,
			    NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS), 0);
}

/* the model cache compiles a dynamic model every time and stores nothing */
TEST_F(dyn, cache_dir_skips_it)
{
	char dir[] = "/tmp/npr-dynshape-XXXXXX";
	struct npr_param pa = {
		.size = sizeof(pa), .param = NPR_PARAM_CACHE_DIR,
	};
	__u32 exec, req;
	DIR *d;
	struct dirent *e;
	int k, n = 0;

	ASSERT_NE(mkdtemp(dir), NULL);
	pa.ptr = (uintptr_t)dir;
	pa.len = strlen(dir) + 1;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_PARAM, &pa), 0);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(dyn_compile(self->fd, self->model, 0, 0, NULL, NULL,
				      -1, &exec), 0);
		ASSERT_EQ(dyn_param(self->fd, exec,
				    NPR_PARAM_LOADED_FROM_CACHE), 0);
		ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
		step(_metadata, self->fd, req, 1, 2);
	}
	d = opendir(dir);
	ASSERT_NE(d, NULL);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	rmdir(dir);
	ASSERT_EQ(n, 0);
}

/*
 * An output whose length follows the input's in a way COMPILE's probes
 * do not see: each inference still gives the right length, and memory a
 * caller bound at the reported size is never written past.
 */
TEST_F(dyn, output_the_probes_miss_is_sized_at_run_time)
{
	float x[200], *y, bound[2] = { -1, -7 };
	__s64 d[2] = { 1, 200 };
	struct npr_port_info pi;
	struct npr_tensor_arg t;
	__u32 model, exec, req;
	size_t len;
	void *buf;
	int i;

	for (i = 0; i < 200; i++)
		x[i] = i + 0.5f;
	buf = stride64_model(&len);
	ASSERT_NE(buf, NULL);
	ASSERT_EQ(load_mem(self->fd, buf, len, &model), 0);
	free(buf);
	ASSERT_EQ(dyn_compile(self->fd, model, 0, 0, NULL, NULL, -1, &exec),
		  0);
	npr_prep_port_info(&pi, exec, 0, 1, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	ASSERT_EQ(dyn_request(self->fd, exec, &req), 0);
	ASSERT_EQ(dyn_set(self->fd, req, 0, 2, d, x, sizeof(x)), 0);
	ASSERT_EQ(dyn_infer(self->fd, req), 0);
	y = dyn_get(self->fd, req, 0, &t);
	ASSERT_NE(y, NULL);
	ASSERT_EQ(t.rank, 2);
	ASSERT_EQ(t.dims[1], 200 / 64 + 1);
	for (i = 0; i < 200 / 64 + 1; i++)
		ASSERT_EQ(y[i], x[i]);
	free(y);
	d[1] = 10;
	ASSERT_EQ(dyn_set(self->fd, req, 0, 2, d, x, 10 * sizeof(float)), 0);
	ASSERT_EQ(dyn_infer(self->fd, req), 0);
	y = dyn_get(self->fd, req, 0, &t);
	ASSERT_NE(y, NULL);
	ASSERT_EQ(t.dims[1], 1);
	ASSERT_EQ(y[0], x[0]);
	free(y);
	if (pi.rank != 2 || pi.dims[1] != 1)
		return;		/* reported dynamic: nothing to bind */
	/* caller memory of the reported [1, 1]: refused, not overrun */
	npr_prep_tensor(&t, req, 0, 1, bound, sizeof(float));
	t.flags |= NPR_TENSOR_BIND;
	t.elem_type = NPR_ELEM_F32;
	t.rank = 2;
	t.dims[0] = 1;
	t.dims[1] = 1;
	i = npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &t);
	if (i)
		TH_LOG("SET_TENSOR: %s", npr_last_error());
	ASSERT_EQ(i, 0);
	d[1] = 200;
	ASSERT_EQ(dyn_set(self->fd, req, 0, 2, d, x, sizeof(x)), 0);
	ASSERT_EQ(dyn_infer(self->fd, req), -EPROTO);
	ASSERT_NE(strstr(npr_last_error(), "COMPILE reported"), NULL);
	ASSERT_EQ(bound[1], -7);
	d[1] = 40;
	ASSERT_EQ(dyn_set(self->fd, req, 0, 2, d, x, 40 * sizeof(float)), 0);
	ASSERT_EQ(dyn_infer(self->fd, req), 0);
	ASSERT_EQ(bound[0], x[0]);
	ASSERT_EQ(bound[1], -7);
}

TEST_HARNESS_MAIN
