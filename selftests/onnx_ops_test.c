// SPDX-License-Identifier: MIT
/*
 * ONNX operators with sub-graphs, recurrences and unusual inputs, on models
 * built here with the protobuf-c message code, through the public API:
 * If branches that name values of the graph around them pick the right
 * branch at run time, and sub-graphs nested too deep fail; a Loop carries
 * values, stacks a scan output, reads its iteration number and a value of
 * the enclosing graph, and stops on its body's condition; a Scan walks its
 * input backwards and stacks its output along axis 1, and a batched Scan-8
 * does so per batch row; a bidirectional RNN and a GRU with and without
 * linear_before_reset match closed forms; one-node models:
 * NonMaxSuppression without thresholds keeps every box, Compress with a
 * short condition and its errors, a window op needs a numeric output
 * datatype.  Failures come with the documented errno and a message that
 * says what is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "onnx.pb-c.h"
#include "onnx_util.h"

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
 * y = @op(x, initializers...) at opset 17 (@opset when set): x an f32
 * graph input of @xdims, the node's inputs named in @in (x first or among
 * them), one int attribute @attr = @aval unless @attr is NULL, or the
 * @nattrs attributes @attrs.
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
	int64_t opset;
	Onnx__AttributeProto **attrs;
	int nattrs;
};

static void *one_node_model(const struct one_node *o, size_t *len)
{
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__NodeProto node, *np[1] = { &node };
	Onnx__AttributeProto at = ONNX__ATTRIBUTE_PROTO__INIT, *atp[1] = { &at };
	static char *out[1] = { "y" };

	g.name = "one_node";
	mknode(&node, o->op, o->in, o->nin, out, 1);
	if (o->attrs) {
		node.n_attribute = o->nattrs;
		node.attribute = o->attrs;
	} else if (o->attr) {
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
	return pack_xy(&g, o->opset ? o->opset : 17, o->xdims, o->xrank, len);
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

/* ---- attributes the op's schema does not define ----------------------- */

/* An INT attribute, or INTS when @n > 0 (@v must outlive the packing). */
static void mkattr(Onnx__AttributeProto *a, const char *name, int64_t *v,
		   int n)
{
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	if (n > 0) {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		a->n_ints = n;
		a->ints = v;
	} else {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = *v;
	}
}

/* A FLOAT attribute. */
static void mkattr_f(Onnx__AttributeProto *a, const char *name, float v)
{
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
}

/*
 * MaxPool at opset 13 with kernel_shape 2x2 and "striles" 2x2 (the issue's
 * model, small): the ONNX checker refuses it and so does MODEL_LOAD, naming
 * the node, the attribute and the opset.  Spelled "strides" it loads and
 * strides: a 4x4 input gives 2x2 maxima of the 2x2 blocks.
 */
TEST_F(onnx, misspelled_attribute_is_refused)
{
	static const int64_t xdims[4] = { 1, 1, 4, 4 };
	static const float x[16] = { 1, 2, 3, 4, 5, 6, 7, 8,
				     9, 10, 11, 12, 13, 14, 15, 16 };
	static char *in[1] = { "x" };
	static int64_t k[2] = { 2, 2 }, st[2] = { 2, 2 };
	Onnx__AttributeProto a[2], *ap[2] = { &a[0], &a[1] };
	struct one_node o = { "MaxPool", xdims, 4, NULL, 0, in, 1, NULL, 0,
			      13, ap, 2 };
	__s64 dims[NPR_MAX_RANK];
	float y[4];
	int rank;

	mkattr(&a[0], "kernel_shape", k, 2);
	mkattr(&a[1], "striles", st, 2);
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "unknown attribute 'striles' for MaxPool at opset 13");
	LOAD_FAILS(-EINVAL, "(MaxPool_0, MaxPool)");
	LOAD_FAILS(-EINVAL, "MaxPool-12 defines auto_pad, ceil_mode");
	free(self->buf);
	a[1].name = "strides";
	rank = one_node_run(_metadata, self, &o, x, 16, y, sizeof(y), dims);
	if (rank < 0)
		TH_LOG("%s", npr_last_error());
	ASSERT_EQ(rank, 4);
	ASSERT_EQ(dims[2], 2);
	ASSERT_EQ(dims[3], 2);
	EXPECT_EQ(y[0], 6);
	EXPECT_EQ(y[1], 8);
	EXPECT_EQ(y[2], 14);
	EXPECT_EQ(y[3], 16);
}

/*
 * The schema is the op's version at the model's opset: MaxPool's
 * dilations came with MaxPool-10, so opset 8 refuses them and opset 10
 * takes them.  At opset 18 the Reduce ops take their axes as an input and
 * lose the attribute (a version the generated table may not have).
 */
TEST_F(onnx, attribute_of_another_opset_is_refused)
{
	static const int64_t xdims[4] = { 1, 1, 4, 4 };
	static const float x[16] = { 0 };
	static char *in[1] = { "x" };
	static int64_t k[2] = { 2, 2 }, d[2] = { 1, 1 }, ax[1] = { 3 };
	Onnx__AttributeProto a[2], *ap[2] = { &a[0], &a[1] };
	struct one_node o = { "MaxPool", xdims, 4, NULL, 0, in, 1, NULL, 0,
			      8, ap, 2 };
	__s64 dims[NPR_MAX_RANK];
	float y[16];

	mkattr(&a[0], "kernel_shape", k, 2);
	mkattr(&a[1], "dilations", d, 2);
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "unknown attribute 'dilations' for MaxPool at opset 8 (MaxPool-8 defines");
	free(self->buf);
	o.opset = 10;
	ASSERT_EQ(one_node_run(_metadata, self, &o, x, 16, y, sizeof(y),
			       dims), 4);
	free(self->buf);
	o.op = "ReduceMean";
	o.opset = 13;
	mkattr(&a[0], "axes", ax, 1);
	o.nattrs = 1;
	ASSERT_EQ(one_node_run(_metadata, self, &o, x, 16, y, sizeof(y),
			       dims), 4);
	free(self->buf);
	o.opset = 18;
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "unknown attribute 'axes' for ReduceMean at opset 18 (ReduceMean-18 defines keepdims, noop_with_empty_axes)");
}

/*
 * Attributes an old version defines load even where the translator has
 * no use for them: BatchNormalization-6's is_test, momentum and spatial,
 * Add-6's broadcast.  Add-7 no longer has broadcast.
 */
TEST_F(onnx, legacy_attributes_of_old_opsets_load)
{
	static const int64_t xdims[4] = { 1, 1, 1, 2 }, one[1] = { 1 };
	static const float x[2] = { 1, 3 };
	static float sc = 2, bias = 1, mean = 1, var = 4;
	static char *bin[5] = { "x", "s", "b", "m", "v" }, *ain[2] = { "x",
								       "b" };
	static int64_t is_test = 1, spatial = 1, bcast = 1;
	Onnx__TensorProto t[4], *tp[4] = { &t[0], &t[1], &t[2], &t[3] };
	Onnx__AttributeProto a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	struct one_node o = { "BatchNormalization", xdims, 4, tp, 4, bin, 5,
			      NULL, 0, 6, ap, 4 };
	__s64 dims[NPR_MAX_RANK];
	float y[2];

	mktensor(&t[0], "s", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		 (int64_t *)one, 1, &sc, 1);
	mktensor(&t[1], "b", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		 (int64_t *)one, 1, &bias, 1);
	mktensor(&t[2], "m", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		 (int64_t *)one, 1, &mean, 1);
	mktensor(&t[3], "v", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
		 (int64_t *)one, 1, &var, 1);
	mkattr(&a[0], "is_test", &is_test, 0);
	mkattr_f(&a[1], "momentum", 0.9f);
	mkattr(&a[2], "spatial", &spatial, 0);
	mkattr_f(&a[3], "epsilon", 0);
	if (one_node_run(_metadata, self, &o, x, 2, y, sizeof(y), dims) < 0)
		TH_LOG("%s", npr_last_error());
	/* (x - 1) / 2 * 2 + 1 */
	EXPECT_EQ(y[0], 1);
	EXPECT_EQ(y[1], 3);
	free(self->buf);
	o.op = "Add";
	o.ninit = 1;
	tp[0] = &t[1];
	o.in = ain;
	o.nin = 2;
	mkattr(&a[0], "broadcast", &bcast, 0);
	o.nattrs = 1;
	if (one_node_run(_metadata, self, &o, x, 2, y, sizeof(y), dims) < 0)
		TH_LOG("%s", npr_last_error());
	EXPECT_EQ(y[0], 2);
	EXPECT_EQ(y[1], 4);
	free(self->buf);
	o.opset = 7;
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "unknown attribute 'broadcast' for Add at opset 7");
}

/*
 * A name starting with "__" is the implementation's, as ONNX has it: it
 * passes.  An attribute given twice is refused.
 */
TEST_F(onnx, internal_and_repeated_attributes)
{
	static const int64_t xdims[4] = { 1, 1, 2, 2 };
	static const float x[4] = { 1, 2, 3, 4 };
	static char *in[1] = { "x" };
	static int64_t k[2] = { 2, 2 }, hint = 1;
	Onnx__AttributeProto a[2], *ap[2] = { &a[0], &a[1] };
	struct one_node o = { "MaxPool", xdims, 4, NULL, 0, in, 1, NULL, 0,
			      13, ap, 2 };
	__s64 dims[NPR_MAX_RANK];
	float y[1];

	mkattr(&a[0], "kernel_shape", k, 2);
	mkattr(&a[1], "__hint", &hint, 0);
	ASSERT_EQ(one_node_run(_metadata, self, &o, x, 4, y, sizeof(y),
			       dims), 4);
	EXPECT_EQ(y[0], 4);
	free(self->buf);
	mkattr(&a[1], "kernel_shape", k, 2);
	self->buf = one_node_model(&o, &self->len);
	ASSERT_NONNULL(self->buf);
	LOAD_FAILS(-EINVAL, "attribute 'kernel_shape' appears twice");
}

TEST_HARNESS_MAIN
